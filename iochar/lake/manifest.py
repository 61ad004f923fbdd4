"""The lake's manifest: ``DIR/sources``, the committed inputs, written last and atomically.

One Parquet file per committed batch, ``part-<lo>-<hi>.parquet``, holding the
``sources`` rows (the contract columns) of the batch's inputs that landed. The
client writes it only after the batch's worker has written every data file, to a
temporary name and then ``os.replace`` (atomic on POSIX), so a reader sees a
batch's inputs either completely or not at all; a client or worker killed
(``kill -9``) before that leaves only unreferenced files, which no view shows and
the next ingest deletes (:func:`collect_garbage`).
"""

from __future__ import annotations

import fcntl
import os
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from iochar.lake import layout

__all__ = ["committed", "commit", "collect_garbage", "Lock"]


def _files(lake) -> list[Path]:
    d = layout.manifest_dir(lake)
    return sorted(p for p in d.glob("part-*.parquet") if layout.part_range(p.name))


def committed(lake: str | os.PathLike[str]) -> tuple[set[str], int, set[tuple[int, int]]]:
    """What the manifest records.

    Returns
    -------
    (set of str, int, set of (int, int))
        SHA-256 of the committed inputs, the next free ``source_id`` (above every
        range ever committed), and the committed ranges.
    """
    shas: set[str] = set()
    ranges: set[tuple[int, int]] = set()
    top = -1
    for p in _files(lake):
        lo, hi = layout.part_range(p.name)
        ranges.add((lo, hi))
        top = max(top, hi)
        shas.update(pq.read_table(p, columns=["sha256"]).column(0).to_pylist())
    return shas, top + 1, ranges


def commit(lake: str | os.PathLike[str], lo: int, hi: int, rows: list[dict[str, Any]]) -> None:
    """Record a batch's landed inputs (possibly none: the range is then still used up)."""
    from iochar.store import _sources_frame

    d = layout.manifest_dir(lake)
    d.mkdir(parents=True, exist_ok=True)
    table: pa.Table = _sources_frame(rows)
    for key in layout.ID_KEYS:
        name = f"lake_{key}s"
        table = table.append_column(name, pa.array([r[name] for r in rows], pa.int64()))
    path = d / layout.part_name(lo, hi)
    tmp = d / f".{path.name}.{uuid.uuid4().hex}.tmp"
    pq.write_table(table, tmp)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def collect_garbage(lake: str | os.PathLike[str]) -> int:
    """Delete data files of batches never committed and temporaries; returns files deleted.

    Call only under :class:`Lock` (no ingest running).
    """
    _, _, ranges = committed(lake)
    gone = 0
    for table in [*layout.tables(), "sources"]:
        root = Path(lake) / table
        if not root.is_dir():
            continue
        for p in root.rglob("*"):
            if not p.is_file():
                continue
            r = layout.part_range(p.name)
            if p.name.endswith(".tmp") or (r is not None and r not in ranges):
                p.unlink(missing_ok=True)
                gone += 1
    return gone


class Lock:
    """Exclusive ``flock`` on ``DIR/.ingest.lock``: one ingest (id allocator) at a time."""

    def __init__(self, lake: str | os.PathLike[str]) -> None:
        from iochar.errors import IocharError

        Path(lake).mkdir(parents=True, exist_ok=True)
        (Path(lake) / ".iochar-lake").touch()
        self._fh = open(Path(lake) / ".ingest.lock", "a+")  # noqa: SIM115
        try:
            fcntl.flock(self._fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._fh.close()
            raise IocharError(f"another ingest is writing to the lake {str(lake)!r}") from None

    def release(self) -> None:
        fcntl.flock(self._fh, fcntl.LOCK_UN)
        self._fh.close()

    def __enter__(self) -> Lock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
