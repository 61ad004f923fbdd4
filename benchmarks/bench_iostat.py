"""iostat text parsing speed: one core, and every core (issue 18), against DuckDB's line scan.

Replicates a real fixture (``data/iostat/rhel6-sysstat9-x-t-m.iostat``, sysstat 9
``iostat -x -t -m 1`` from a RHEL 6 server, 11 disks) until it holds at least
``--lines`` lines (each copy is a separate run: its banner restarts the report
chain), then times

- iochar's ``iostat`` loader (``iochar.load.parse``, all chunks, rows built), and
- DuckDB ``read_csv`` of the same file as one VARCHAR column (``SELECT count(*)``),
  always on one thread (``SET threads = 1``).

Two figures come out of one run:

1. Issue 3, one core: iochar on one thread (``IOCHAR_PARSE_THREADS=1``,
   ``POLARS_MAX_THREADS=1``, Arrow CPU count 1); PASS when it reaches
   ``--target`` lines/s. ``--pin`` also pins the process to one CPU, which on
   a shared, loaded machine mostly measures the neighbours.
2. Issue 18, every core: iochar with its default threads (one per CPU this
   process may use, :func:`iochar.load._blocks.parse_threads`), timed in a
   child process started without the thread limits above (they are fixed when
   polars and Arrow load); PASS when its time is at most ``--ratio`` (4) times
   DuckDB's single-threaded scan.

Each time is the best wall time of ``--repeat`` (the CPU time of that run is
shown too). The load average is printed: on a shared machine a busy neighbour takes
the cores the second figure needs.

Run: ``python benchmarks/bench_iostat.py [--lines 2000000] [--repeat 3] [--target 1e6]``
"""

from __future__ import annotations

import os
import sys

_CHILD = "--child-all-cores" in sys.argv  # the issue-18 figure's process: no limits
if not _CHILD:
    os.environ.setdefault("POLARS_MAX_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ["IOCHAR_PARSE_THREADS"] = "1"

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyarrow as pa  # noqa: E402
from _cores import all_cores  # noqa: E402

if not _CHILD:
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "iostat" / "rhel6-sysstat9-x-t-m.iostat"


def _best(fn, repeat: int) -> tuple[float, float]:
    """Best wall time of ``repeat`` calls of ``fn``, and that call's CPU time. [s]"""
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        best = min(best, (time.perf_counter() - t0, time.process_time() - c0))
    return best


def _time_parse(path: Path, repeat: int) -> tuple[float, float, int]:
    """Best wall time of ``repeat`` full parses, that run's CPU time [s], and the rows."""
    from iochar import load

    rows = 0

    def run() -> None:
        nonlocal rows
        rows = 0
        for chunk in load.parse(path, "iostat"):
            for tb in chunk.tables.values():
                rows += tb.num_rows

    wall, cpu = _best(run, repeat)
    return wall, cpu, rows


def _all_cores(path: Path, repeat: int) -> tuple[float, float]:
    """Best wall time and its CPU time of a parse on every core, in a fresh child. [s]"""
    return all_cores(__file__, path, repeat)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pin", action="store_true", help="pin to the first allowed CPU")
    ap.add_argument("--target", type=float, default=1e6, help="iochar lines/s to PASS")
    ap.add_argument("--ratio", type=float, default=4.0, help="issue 18: most iochar/duckdb")
    ap.add_argument("--child-all-cores", metavar="PATH", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_all_cores:
        wall, cpu, _ = _time_parse(Path(args.child_all_cores), args.repeat)
        print(wall, cpu)
        return
    if args.pin and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    import duckdb

    raw = FIXTURE.read_bytes()
    copies = -(-args.lines // raw.count(b"\n"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.iostat"
        path.write_bytes(raw * copies)
        nlines = raw.count(b"\n") * copies
        size_mb = path.stat().st_size / 1e6

        con = duckdb.connect()
        con.execute("SET threads = 1")
        sql = (
            "SELECT count(*) FROM read_csv(?, columns = {'line': 'VARCHAR'}, header = false, "
            "delim = '\\x01', quote = '', escape = '', auto_detect = false)"
        )

        def run_duckdb() -> None:
            con.execute(sql, [str(path)]).fetchall()

        t_io, cpu_io, rows = _time_parse(path, args.repeat)
        t_db, cpu_db = _best(run_duckdb, args.repeat)
        t_all, cpu_all = _all_cores(path, args.repeat)
        t_db2, _ = _best(run_duckdb, args.repeat)  # again: the machine may have changed
        t_db = min(t_db, t_db2)
        rate = nlines / t_io
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        print(f"input: {nlines:,} lines, {size_mb:.1f} MB ({copies} copies of {FIXTURE.name})")
        print(f"load: {os.getloadavg()[0]:.2f} (1 min), {cores} CPUs")
        print(
            f"iochar iostat, 1 thread: {t_io:.3f} s ({cpu_io:.3f} s CPU)  "
            f"{rate / 1e6:.2f} M lines/s  {rows:,} rows"
        )
        print(
            f"iochar iostat, all cores: {t_all:.3f} s ({cpu_all:.3f} s CPU)  "
            f"{nlines / t_all / 1e6:.2f} M lines/s"
        )
        print(
            f"duckdb scan, threads=1:   {t_db:.3f} s ({cpu_db:.3f} s CPU)  "
            f"{nlines / t_db / 1e6:.2f} M lines/s"
        )
        print(f"ratio iochar/duckdb time, one core: {t_io / t_db:.2f}")
        verdict = "PASS" if rate >= args.target else "FAIL"
        print(
            f"{verdict} (issue 3): {rate / 1e6:.2f} M lines/s on one core against a target "
            f"of {args.target / 1e6:g} M"
        )
        ratio = t_all / t_db
        verdict = "PASS" if ratio <= args.ratio else "FAIL"
        print(
            f"{verdict} (issue 18): iochar on every core / duckdb on one thread = {ratio:.2f}x "
            f"against at most {args.ratio:g}x"
        )


if __name__ == "__main__":
    main()
