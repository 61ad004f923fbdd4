"""brw_stats parse speed: lines/s on one core, and the ratio to a DuckDB line scan.

Builds a file of real brw_stats dumps (the ZFS OST0000 dump from
``data/brw_stats/zfs-lustrefs-OST0000-series.txt``, its three dumps repeated
with increasing ``snapshot_time`` and growing counts) of at least ``--lines``
lines, then times :class:`iochar.load.brw_stats.BrwStatsLoader` end to end
(parsing, per-bin deltas, Arrow output) against DuckDB's ``read_csv`` of the
same file as one VARCHAR column, both on one thread.

Run::

    python benchmarks/bench_brw_stats.py [--lines 2000000]
"""

from __future__ import annotations

import os

os.environ.setdefault("POLARS_MAX_THREADS", "1")  # single core, set before polars loads

import argparse  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import duckdb  # noqa: E402

from iochar.load.brw_stats import BrwStatsLoader  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "data" / "brw_stats" / "zfs-lustrefs-OST0000-series.txt"
_SNAP = re.compile(r"^snapshot_time:\s+\d+\.\d+.*$", re.M)


def build(path: Path, min_lines: int) -> int:
    """Write repeated real dumps with increasing times; return the line count."""
    text = SEED.read_text()
    dump = text[: text.index("snapshot_time", 10)]  # the first (real) dump
    n_dump = dump.count("\n")
    reps = -(-min_lines // n_dump)
    t0 = 1510782606
    with open(path, "w") as out:
        for i in range(reps):
            out.write(
                _SNAP.sub(f"snapshot_time:         {t0 + 60 * i}.797216394 (secs.nsecs)", dump)
            )
    return reps * n_dump


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "brw_stats"
        lines = build(path, args.lines)
        size = path.stat().st_size
        loader = BrwStatsLoader()
        best, rows = float("inf"), 0
        for _ in range(args.repeat):
            t = time.perf_counter()
            rows = sum(
                p.tables["size_hist"].num_rows
                for p in loader.parse(path)
                if "size_hist" in p.tables
            )
            best = min(best, time.perf_counter() - t)
        con = duckdb.connect(config={"threads": 1})
        q = (
            "SELECT count(*) FROM read_csv(?, columns={'line': 'VARCHAR'}, delim='\\0', "
            "header=false, quote='', escape='', auto_detect=false)"
        )
        ddb = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            con.execute(q, [str(path)]).fetchone()
            ddb = min(ddb, time.perf_counter() - t)
        print(f"file: {lines:,} lines, {size / 1e6:.1f} MB; size_hist rows: {rows:,}")
        print(f"iochar brw_stats: {best:.3f} s  {lines / best / 1e6:.2f} M lines/s (1 thread)")
        print(f"duckdb read_csv : {ddb:.3f} s  {lines / ddb / 1e6:.2f} M lines/s (1 thread)")
        print(f"ratio iochar/duckdb time: {best / ddb:.2f}x")


if __name__ == "__main__":
    main()
