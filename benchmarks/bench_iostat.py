"""iostat text parsing speed, single core, against DuckDB's own scan of the same file.

Replicates a real fixture (``data/iostat/rhel6-sysstat9-x-t-m.iostat``, sysstat 9
``iostat -x -t -m 1`` from a RHEL 6 server, 11 disks) until it holds at least
``--lines`` lines (each copy is a separate run: its banner restarts the report
chain), then times

- iochar's ``iostat`` loader (``iochar.load.parse``, all chunks, rows built), and
- DuckDB ``read_csv`` of the same file as one VARCHAR column (``SELECT count(*)``),

both on one thread (``POLARS_MAX_THREADS=1``, Arrow CPU count 1, DuckDB
``threads=1``; the parser's numpy work is single-threaded). ``--pin`` also pins the
process to one CPU, which on a shared, loaded machine mostly measures the neighbours.
Prints lines/s for each (best wall time of ``--repeat``; the CPU time of that run is
shown too), the ratio, and PASS or FAIL against ``--target`` lines/s for iochar.

Run: ``python benchmarks/bench_iostat.py [--lines 2000000] [--repeat 3] [--target 1e6]``
"""

from __future__ import annotations

import os

os.environ.setdefault("POLARS_MAX_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import pyarrow as pa  # noqa: E402

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pin", action="store_true", help="pin to the first allowed CPU")
    ap.add_argument("--target", type=float, default=1e6, help="iochar lines/s to PASS")
    args = ap.parse_args()
    if args.pin and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    import duckdb

    from iochar import load

    raw = FIXTURE.read_bytes()
    copies = -(-args.lines // raw.count(b"\n"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.iostat"
        path.write_bytes(raw * copies)
        nlines = raw.count(b"\n") * copies
        size_mb = path.stat().st_size / 1e6
        rows = 0

        def run_iochar() -> None:
            nonlocal rows
            rows = 0
            for chunk in load.parse(path, "iostat"):
                for tb in chunk.tables.values():
                    rows += tb.num_rows

        con = duckdb.connect()
        con.execute("SET threads = 1")
        sql = (
            "SELECT count(*) FROM read_csv(?, columns = {'line': 'VARCHAR'}, header = false, "
            "delim = '\\x01', quote = '', escape = '', auto_detect = false)"
        )

        def run_duckdb() -> None:
            con.execute(sql, [str(path)]).fetchall()

        t_io, cpu_io = _best(run_iochar, args.repeat)
        t_db, cpu_db = _best(run_duckdb, args.repeat)
        rate = nlines / t_io
        print(f"input: {nlines:,} lines, {size_mb:.1f} MB ({copies} copies of {FIXTURE.name})")
        print(
            f"iochar iostat: {t_io:.3f} s ({cpu_io:.3f} s CPU)  {rate / 1e6:.2f} M lines/s  "
            f"{rows:,} rows"
        )
        print(
            f"duckdb scan:   {t_db:.3f} s ({cpu_db:.3f} s CPU)  {nlines / t_db / 1e6:.2f} M lines/s"
        )
        print(f"ratio iochar/duckdb time: {t_io / t_db:.2f}")
        verdict = "PASS" if rate >= args.target else "FAIL"
        print(f"{verdict}: {rate / 1e6:.2f} M lines/s against a target of {args.target / 1e6:g} M")


if __name__ == "__main__":
    main()
