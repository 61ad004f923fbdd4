"""brw_stats parse speed: lines/s on one core, and the ratio to a DuckDB line scan.

Builds a file of real brw_stats dumps (the first, real ZFS OST0000 dump of
``data/brw_stats/zfs-lustrefs-OST0000-series.txt``, repeated with an
increasing ``snapshot_time``; the counts repeat, so every delta is 0) of at
least ``--lines`` lines, then times ``iochar.load.parse`` end to end (sniffing,
parsing, checks, per-bin deltas, Arrow output) against DuckDB's ``read_csv`` of
the same file as one VARCHAR column, both on one thread. The target is
1,000,000 lines/s on one core (issue 3); pin the process to one core with
``taskset``.

Run::

    taskset -c 0 python benchmarks/bench_brw_stats.py [--lines 2000000] [--repeat 3]

It prints the best of ``--repeat`` runs of each, the ratio of the times, and
PASS/FAIL against the target (exit status 1 on FAIL).
"""

from __future__ import annotations

import os

os.environ.setdefault("POLARS_MAX_THREADS", "1")  # single core, set before polars loads

import argparse  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import duckdb  # noqa: E402

from iochar.load import parse  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "data" / "brw_stats" / "zfs-lustrefs-OST0000-series.txt"
_SNAP = re.compile(r"^snapshot_time:\s+\d+\.\d+.*$", re.M)
#: Lines per second on one core.
TARGET = 1_000_000


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


def time_iochar(path: Path) -> tuple[float, float, int]:
    """Wall and CPU time of one full parse, and the ``size_hist`` rows. [s]"""
    wall, cpu = time.perf_counter(), time.process_time()
    rows = sum(p.tables["size_hist"].num_rows for p in parse(path) if "size_hist" in p.tables)
    return time.perf_counter() - wall, time.process_time() - cpu, rows


def time_duckdb(con: duckdb.DuckDBPyConnection, path: Path) -> float:
    """Wall time of DuckDB's scan of the file as lines. [s]"""
    q = (
        "SELECT count(*) FROM read_csv(?, columns={'line': 'VARCHAR'}, delim='\\0', "
        "header=false, quote='', escape='', auto_detect=false)"
    )
    t = time.perf_counter()
    con.execute(q, [str(path)]).fetchone()
    return time.perf_counter() - t


def main() -> int:
    """Build the input, time both, print the figures; 0 when the target is met."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=2_000_000, help="lines to generate")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs (best is reported)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "brw_stats"
        lines = build(path, args.lines)
        size = path.stat().st_size
        best, cpu, rows = min(time_iochar(path) for _ in range(args.repeat))
        con = duckdb.connect(config={"threads": 1})
        ddb = min(time_duckdb(con, path) for _ in range(args.repeat))
        con.close()
    rate = lines / best
    verdict = "PASS" if rate >= TARGET else "FAIL"
    print(f"file: {lines:,} lines, {size / 1e6:.1f} MB; size_hist rows: {rows:,}")
    print(
        f"iochar brw_stats: {best:.3f} s  {rate / 1e6:.2f} M lines/s (1 thread; "
        f"cpu/wall {cpu / best:.2f})"
    )
    print(f"duckdb read_csv : {ddb:.3f} s  {lines / ddb / 1e6:.2f} M lines/s (1 thread)")
    print(f"ratio iochar/duckdb time: {best / ddb:.2f}x")
    print(f"target: {TARGET / 1e6:.2f} M lines/s on one core -> {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
