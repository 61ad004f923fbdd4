"""brw_stats parse speed: lines/s on one core, and every core vs a DuckDB line scan (issue 18).

Builds a file of real brw_stats dumps (the first, real ZFS OST0000 dump of
``data/brw_stats/zfs-lustrefs-OST0000-series.txt``, repeated with an
increasing ``snapshot_time``; the counts repeat, so every delta is 0) of at
least ``--lines`` lines, then times ``iochar.load.parse`` end to end (sniffing,
parsing, checks, per-bin deltas, Arrow output) against DuckDB's ``read_csv`` of
the same file as one VARCHAR column, DuckDB always on one thread
(``threads=1``). Two figures come out of one run:

1. Issue 3, one core: iochar on one thread (``IOCHAR_PARSE_THREADS=1``,
   ``POLARS_MAX_THREADS=1``); the target is 1,000,000 lines/s (pin the
   process to one core with ``taskset`` for a strict one-core figure).
2. Issue 18, every core: iochar with its default threads (one per CPU this
   process may use), timed in a child process started without those limits
   (polars fixes its thread count when it loads); the target is at most 4x
   DuckDB's single-threaded scan.

Run::

    python benchmarks/bench_brw_stats.py [--lines 2000000] [--repeat 3]

It prints the best of ``--repeat`` runs of each, the load average, the ratios,
and PASS/FAIL for each target (exit status 1 if either fails).
"""

from __future__ import annotations

import os
import sys

_CHILD = "--child-all-cores" in sys.argv  # the issue-18 figure's process: no limits
if not _CHILD:
    os.environ.setdefault("POLARS_MAX_THREADS", "1")  # single core, set before polars loads
    os.environ["IOCHAR_PARSE_THREADS"] = "1"

import argparse  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import duckdb  # noqa: E402
from _cores import all_cores  # noqa: E402

from iochar.load import parse  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "data" / "brw_stats" / "zfs-lustrefs-OST0000-series.txt"
_SNAP = re.compile(r"^snapshot_time:\s+\d+\.\d+.*$", re.M)
#: Lines per second on one core.
TARGET = 1_000_000
#: Issue 18: most iochar time (every core) over DuckDB's (one thread).
RATIO = 4.0


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


def _all_cores(path: Path, repeat: int) -> tuple[float, float]:
    """Best wall time and its CPU time of a parse on every core, in a fresh child. [s]"""
    return all_cores(__file__, path, repeat)


def main() -> int:
    """Build the input, time both, print the figures; 0 when both targets are met."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=2_000_000, help="lines to generate")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs (best is reported)")
    ap.add_argument("--child-all-cores", metavar="PATH", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_all_cores:
        best, cpu, _ = min(time_iochar(Path(args.child_all_cores)) for _ in range(args.repeat))
        print(best, cpu)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "brw_stats"
        lines = build(path, args.lines)
        size = path.stat().st_size
        best, cpu, rows = min(time_iochar(path) for _ in range(args.repeat))
        con = duckdb.connect(config={"threads": 1})
        ddb = min(time_duckdb(con, path) for _ in range(args.repeat))
        t_all, cpu_all = _all_cores(path, args.repeat)
        ddb = min(ddb, min(time_duckdb(con, path) for _ in range(args.repeat)))  # again
        con.close()
    rate = lines / best
    verdict = "PASS" if rate >= TARGET else "FAIL"
    ratio = t_all / ddb
    verdict18 = "PASS" if ratio <= RATIO else "FAIL"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"file: {lines:,} lines, {size / 1e6:.1f} MB; size_hist rows: {rows:,}")
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {cores} CPUs")
    print(
        f"iochar brw_stats, 1 thread:  {best:.3f} s  {rate / 1e6:.2f} M lines/s "
        f"(cpu/wall {cpu / best:.2f})"
    )
    print(
        f"iochar brw_stats, all cores: {t_all:.3f} s  {lines / t_all / 1e6:.2f} M lines/s "
        f"(cpu/wall {cpu_all / t_all:.2f})"
    )
    print(f"duckdb read_csv, 1 thread:   {ddb:.3f} s  {lines / ddb / 1e6:.2f} M lines/s")
    print(f"ratio iochar/duckdb time, one core: {best / ddb:.2f}x")
    print(f"target: {TARGET / 1e6:.2f} M lines/s on one core (issue 3) -> {verdict}")
    print(
        f"issue 18: iochar on every core / duckdb on one thread = {ratio:.2f}x, "
        f"at most {RATIO:g}x -> {verdict18}"
    )
    return 0 if verdict == verdict18 == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
