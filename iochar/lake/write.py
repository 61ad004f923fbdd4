"""The worker's half of an ingest: parse a batch of inputs and write their rows as Parquet.

A task is a batch of inputs with the ``source_id`` range the client gave it. The
worker hashes each input (SHA-256 of its bytes), skips those whose hash the lake
already records, parses the rest with the ordinary loaders (pure parsers, each
frame checked against the contract by :class:`iochar.store._Input`), and writes
one Parquet file per table and partition for the whole batch, each to a
temporary name and then ``os.replace`` d into place (atomic on POSIX). Nothing it
writes is visible: a row shows only once the client records its input in the
manifest (:mod:`iochar.lake.manifest`). A task is idempotent — the file names
depend only on the range — so Dask may run it again on another worker after a
worker dies, and the second run replaces the first's files.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from iochar.errors import InputError, IocharError
from iochar.lake import layout

__all__ = ["ingest_batch", "sha256_file"]

#: The columns that hold a timestamp for the month partition, per table.
_TIME_OF = {"jobs": "start_ts", "counters": "ts", "size_hist": "ts", "snapshots": "taken_at"}


def sha256_file(path: str) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB blocks (memory stays bounded)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _month(frames: dict[str, list[pa.Table]]) -> str:
    """The input's month: that of its earliest timestamp (job start, counter interval)."""
    first = None
    for table, col in _TIME_OF.items():
        for f in frames.get(table, ()):
            if col in f.column_names:
                m = pc.min(f.column(col)).as_py()
                if m is not None and (first is None or m < first):
                    first = m
    return layout.month_of(first)


def _write_atomic(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    pq.write_table(table, tmp)  # snappy: about half the time of zstd here
    os.replace(tmp, path)


def ingest_batch(
    lake: str,
    items: list[tuple[str, int]],
    known: frozenset[str] | set[str],
    *,
    kind: str | None = None,
    strict: bool = True,
    chunk_rows: int = 1_000_000,
) -> list[dict[str, Any]]:
    """Parse ``items`` and write their rows under ``lake`` (invisible until committed).

    Parameters
    ----------
    lake : str
        The lake folder.
    items : list of (path, source_id)
        The batch; its ids are consecutive, given by the client.
    known : set of str
        SHA-256 of inputs the manifest already records (skipped as duplicates).
    kind, strict, chunk_rows
        As for :meth:`iochar.Store.load`.

    Returns
    -------
    list of dict
        One per item: ``status`` (``ok``, ``duplicate`` or ``error``), ``uri``,
        ``sha256``, and ``source`` (the manifest row) or ``error`` (the
        :class:`~iochar.errors.IocharError`).
    """
    from iochar.store import _parse_input, _stored_frame

    lo, hi = items[0][1], items[-1][1]
    out: list[dict[str, Any]] = []
    groups: dict[tuple[str, str, str], list[pa.Table]] = {}
    for path, sid in items:
        uri = str(Path(path).resolve())
        try:
            digest = sha256_file(path)
        except OSError as exc:
            err = InputError(uri, None, f"a readable file ({exc.strerror or exc})", kind=kind)
            out.append({"status": "error", "uri": uri, "sha256": "", "error": err})
            continue
        if digest in known:
            out.append({"status": "duplicate", "uri": uri, "sha256": digest})
            continue
        size = os.path.getsize(path)
        inp = _parse_input(path, uri, digest, size, kind, strict, chunk_rows)
        if isinstance(inp, IocharError):
            out.append({"status": "error", "uri": uri, "sha256": digest, "error": inp})
            continue
        if any(top >= 1 << layout.ID_SHIFT for top in inp.tops.values()):
            err = InputError(
                uri, None, f"fewer than 2**{layout.ID_SHIFT} jobs, files and snapshots", kind=kind
            )
            out.append({"status": "error", "uri": uri, "sha256": digest, "error": err})
            continue
        base = sid << layout.ID_SHIFT
        offsets = {"job_id": base, "file_id": base, "snapshot_id": base}
        month = _month(inp.frames)
        for table, frames in inp.frames.items():
            for frame in frames:
                stored = _stored_frame(table, frame, offsets, sid)
                groups.setdefault((table, inp.kind, month), []).append(stored)
        inp.frames = {}
        row = inp.source_row(sid)
        for key in layout.ID_KEYS:  # ids this input uses: the views number them densely
            row[f"lake_{key}s"] = inp.tops.get(key, -1) + 1
        out.append({"status": "ok", "uri": uri, "sha256": digest, "source": row})
    name = layout.part_name(lo, hi)
    for (table, k, month), parts in groups.items():
        _write_atomic(pa.concat_tables(parts), layout.table_dir(lake, table, k, month) / name)
    return out
