"""Where things live in a lake folder, and how ids are made unique without coordination.

A lake is a folder::

    DIR/sources/part-<lo>-<hi>.parquet                     the manifest (committed inputs)
    DIR/<table>/lake_kind=<kind>/lake_month=<YYYY-MM>/part-<lo>-<hi>.parquet
    DIR/results/<analysis>/part-<lo>-<hi>.parquet          per-job analysis results

``<lo>-<hi>`` is the range of ``source_id`` a batch of inputs was given by the
ingesting client *before* dispatch: the client alone hands out ranges (it reads
the highest ``<hi>`` of the manifest, under an exclusive lock on
``DIR/.ingest.lock``), so workers never need to agree on anything. Within an
input the loaders number jobs, files and snapshots from 0 (:mod:`iochar.schema`);
in the lake they become ``(source_id << 32) + local id``, so every id is unique
across workers, and an id names its input (``id >> 32``). That is what makes
visibility a join with the manifest: a row is visible only when its input's
``source_id`` is recorded in ``DIR/sources`` (Hive-style ``key=value`` folders as
read by DuckDB's ``read_parquet(..., hive_partitioning = true)``).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from pathlib import Path

from iochar import schema

__all__ = ["ID_SHIFT", "PART_RE", "part_name", "table_dir", "part_range", "tables"]

#: Bits kept for the loader-local id inside a lake id: ``id = (source_id << 32) + local``.
ID_SHIFT = 32

#: ``part-<lo>-<hi>.parquet`` (committed file names; temporaries end in ``.tmp``).
PART_RE = re.compile(r"^part-(\d+)-(\d+)\.parquet$")

#: The loader-local id kinds; the manifest counts each input's (``lake_job_ids`` ...).
ID_KEYS = ("job_id", "file_id", "snapshot_id")

#: Partition keys (folder names), chosen to clash with no contract column.
KIND_KEY, MONTH_KEY = "lake_kind", "lake_month"

#: For each table, the column whose ``>> ID_SHIFT`` (or value) names the input.
SOURCE_OF: dict[str, tuple[str, bool]] = {}
for _t, _cols in schema.TABLES.items():
    _names = [c.name for c in _cols]
    if _t == "sources":
        continue
    if "source_id" in _names and _t in schema.SOURCE_COLUMN_TABLES and _t != "jobs":
        SOURCE_OF[_t] = ("source_id", False)
    elif "job_id" in _names:
        SOURCE_OF[_t] = ("job_id", True)
    elif "snapshot_id" in _names:
        SOURCE_OF[_t] = ("snapshot_id", True)
    else:  # pragma: no cover - every contract table has one (checked in tests)
        raise RuntimeError(f"table {_t} has no column naming its input")


def tables() -> list[str]:
    """Contract tables stored as data folders (all but ``sources``)."""
    return list(SOURCE_OF)


def part_name(lo: int, hi: int) -> str:
    """File name of a batch given ``source_id`` ``lo`` to ``hi`` (inclusive)."""
    return f"part-{lo}-{hi}.parquet"


def part_range(name: str) -> tuple[int, int] | None:
    """``(lo, hi)`` of a committed part's file name, or None for any other file."""
    m = PART_RE.match(name)
    return (int(m.group(1)), int(m.group(2))) if m else None


def month_of(ts: _dt.datetime | None) -> str:
    """Partition value of a timestamp: ``YYYY-MM`` (UTC), ``unknown`` when none."""
    return ts.strftime("%Y-%m") if ts is not None else "unknown"


def table_dir(lake: str | os.PathLike[str], table: str, kind: str, month: str) -> Path:
    """The partition folder of ``table`` for one kind and month."""
    return Path(lake) / table / f"{KIND_KEY}={kind}" / f"{MONTH_KEY}={month}"


def manifest_dir(lake: str | os.PathLike[str]) -> Path:
    """``DIR/sources``: one Parquet file per committed batch."""
    return Path(lake) / "sources"


def is_lake(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a lake folder (it has a ``sources`` folder or ``.iochar-lake``)."""
    p = Path(path)
    return p.is_dir() and ((p / "sources").is_dir() or (p / ".iochar-lake").exists())
