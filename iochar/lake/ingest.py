"""The client's half of an ingest: hand out id ranges, dispatch batches to Dask, commit.

Order of events per batch (DESIGN.md, "Beyond one machine"):

1. under the lake's lock, the client reads the manifest (committed SHA-256 and the
   highest range ever used), deletes files of batches never committed, and gives
   each batch of inputs the next range of ``source_id`` — ids are fixed before any
   worker runs, so workers need no coordination;
2. a worker parses the batch and writes its data files (:func:`~iochar.lake.write.ingest_batch`);
3. when the task's result arrives, the client writes the batch's manifest file
   (:func:`~iochar.lake.manifest.commit`), dropping inputs whose bytes an earlier
   batch of this run already committed.

A worker killed during step 2 (``kill -9``, the out-of-memory killer) makes Dask
run the task again on another worker (``distributed.scheduler.allowed-failures``);
the task is idempotent, so nothing is duplicated or missed. A task that still
fails (every try killed its worker) reports its inputs as failed, and nothing of
them is visible. Parsing errors are per input: reported, never stopping the rest.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from iochar.errors import IocharError, MissingDependencyError
from iochar.lake import manifest
from iochar.lake.write import ingest_batch

__all__ = ["IngestReport", "ingest", "cluster"]


@dataclass
class IngestReport:
    """What an ingest did.

    Attributes
    ----------
    landed : list of dict
        ``sources`` rows committed by this run.
    duplicates : list of str
        Inputs whose bytes the lake already held (skipped).
    errors : list of (str, IocharError)
        Inputs that failed, with why; nothing of them is visible.
    seconds : float
        Wall time. [s]
    dashboard : str or None
        The Dask dashboard link, when the cluster has one.
    """

    landed: list[dict[str, Any]] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    errors: list[tuple[str, IocharError]] = field(default_factory=list)
    seconds: float = 0.0
    dashboard: str | None = None

    @property
    def rows(self) -> int:
        """Rows landed, all tables."""
        return sum(int(r["rows"]) for r in self.landed)


def _dask():
    try:
        import distributed
    except ImportError as exc:
        raise MissingDependencyError("distributed", "lake", "iochar ingest (Dask)") from exc
    return distributed


def cluster(workers: int = 2, *, dashboard: bool = True):
    """A loopback :class:`distributed.LocalCluster` of ``workers`` single-threaded processes.

    The parsers hold the GIL for part of their time, so one thread per process
    scales with processes; ``processes=True`` also lets a dying parser take only
    its own worker down.
    """
    distributed = _dask()
    return distributed.LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",  # a free port; dashboard=False: not shown
        silence_logs=40,
    )


def _batches(n: int, workers: int, batch: int | None) -> int:
    """Inputs per task: about 8 tasks per worker (load balance), 8 to 256 inputs."""
    if batch:
        return batch
    return max(8, min(256, -(-n // (8 * max(workers, 1)))))


def ingest(
    paths: Sequence[str | os.PathLike[str]],
    lake: str | os.PathLike[str],
    *,
    client=None,
    workers: int = 2,
    scheduler: str | None = None,
    kind: str | None = None,
    strict: bool = True,
    batch: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_dashboard: Callable[[str], None] | None = None,
) -> IngestReport:
    """Parse ``paths`` on a Dask cluster into the lake at ``lake``.

    Parameters
    ----------
    paths : sequence of path
        Input files (already expanded; ``iochar ingest`` expands folders and globs).
    lake : path
        The lake folder (created when missing).
    client : distributed.Client, optional
        Use this client. Otherwise one is made for ``scheduler`` or for a new
        :func:`cluster` of ``workers`` processes, and closed at the end.
    workers : int, default 2
        Processes of the local cluster (ignored with ``client`` or ``scheduler``).
    scheduler : str, optional
        Address of a running scheduler (``tcp://host:8786``; dask-jobqueue's).
    kind, strict
        As for :meth:`iochar.Store.load`.
    batch : int, optional
        Inputs per task (default: about 8 tasks per worker, 8 to 256 inputs).
    progress : callable(done, total), optional
        Called as inputs finish.
    on_dashboard : callable(str), optional
        Called with the Dask dashboard link once the cluster is up.

    Returns
    -------
    IngestReport
    """
    distributed = _dask()
    t0 = time.perf_counter()
    lake = os.fspath(lake)
    paths = [os.fspath(p) for p in paths]
    report = IngestReport()
    own_cluster = own_client = None
    if client is None:
        if scheduler is not None:
            client = own_client = distributed.Client(scheduler)
        else:
            own_cluster = cluster(workers)
            client = own_client = distributed.Client(own_cluster)
    try:
        report.dashboard = getattr(client, "dashboard_link", None)
        if report.dashboard and on_dashboard is not None:
            on_dashboard(report.dashboard)
        nworkers = max(1, len(client.scheduler_info().get("workers", {})))
        with manifest.Lock(lake):
            manifest.collect_garbage(lake)
            known, next_id, _ = manifest.committed(lake)
            step = _batches(len(paths), nworkers, batch)
            tasks = []
            for at in range(0, len(paths), step):
                chunk = paths[at : at + step]
                items = [(p, next_id + i) for i, p in enumerate(chunk)]
                next_id += len(chunk)
                tasks.append(items)
            known_f = client.scatter([frozenset(known)], broadcast=True)[0] if tasks else None
            futures = {
                client.submit(
                    ingest_batch, lake, items, known_f, kind=kind, strict=strict,
                    key=f"iochar-ingest-{items[0][1]}-{items[-1][1]}-{os.getpid()}",
                    pure=False,
                ): items
                for items in tasks
            }  # fmt: skip
            done = 0
            seen = set(known)
            for fut in distributed.as_completed(futures):
                items = futures[fut]
                lo, hi = items[0][1], items[-1][1]
                try:
                    outcome = fut.result()
                except Exception as exc:  # every try killed its worker (KilledWorker) ...
                    why = IocharError(f"the worker parsing this batch failed: {exc!r}")
                    report.errors.extend((str(p), why) for p, _ in items)
                    manifest.commit(lake, lo, hi, [])  # use the range up; its files go
                else:
                    rows = []
                    for res in outcome:
                        if res["status"] == "error":
                            report.errors.append((res["uri"], res["error"]))
                        elif res["status"] == "duplicate" or res["sha256"] in seen:
                            report.duplicates.append(res["uri"])
                        else:
                            seen.add(res["sha256"])
                            rows.append(res["source"])
                    manifest.commit(lake, lo, hi, rows)
                    report.landed.extend(rows)
                done += len(items)
                fut.release()
                if progress is not None:
                    progress(done, len(paths))
    finally:
        if own_client is not None:
            own_client.close()
        if own_cluster is not None:
            own_cluster.close()
    report.seconds = time.perf_counter() - t0
    return report


def print_report(report: IngestReport, file=None) -> None:
    """The CLI's summary: inputs landed, duplicates, and each failed input with its error."""
    out = file or sys.stdout
    print(
        f"ingested {len(report.landed):,} input(s), {report.rows:,} rows, in "
        f"{report.seconds:.1f} s; {len(report.duplicates):,} already in the lake; "
        f"{len(report.errors):,} failed",
        file=out,
    )
    for uri, err in report.errors:
        print(f"failed: {uri}: {err}", file=out)
