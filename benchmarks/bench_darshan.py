"""DXT segment loading rate: iochar's darshan loader vs pydarshan's DarshanReport.

The log is ``data/darshan/dxt.darshan`` (a real Darshan 3.10 log: 1 process,
214 POSIX records, 169 DXT_POSIX records, 7 623 segments). A larger real DXT
log cannot be made without the Darshan runtime, so each measurement is
repeated and the median kept.

Compared, on the same file, each from a cold start of the log:

* pydarshan: ``darshan.DarshanReport(path, read_all=True)`` then
  ``report.records["DXT_POSIX"].to_df()``, the documented way to get the
  segments as tables;
* iochar parse: ``DarshanLoader().parse(path)`` to the end, i.e. every table
  of the log (jobs, files, file_stats, access_sizes, module_counters and the
  ``ops`` rows of the segments), including the validation pass that
  decompresses every region once in Python. The DXT segments are decoded in
  Python from the bytes that pass kept (libdarshan-util reads the other
  modules, decompressing their regions a second time);
* iochar parse+insert: ``iochar.connect(":memory:").load(path, kind="darshan")``
  (SHA-256, parse, contract checks, inserts, one transaction);
* DuckDB scan: an aggregate over the same segments already held as an Arrow
  table (``SELECT count(*), sum(size), min(t_start), max(t_end) FROM ops``),
  for context: it is what the data costs once it is in columnar form.

Each timed section starts right after a full garbage collection, so neither
side is charged for the other's garbage; the collector stays on while timing,
as in normal use (``--no-gc`` keeps it off, as :mod:`timeit` does).
Target: iochar parse rate >= 10x the DarshanReport + to_df rate.

    python benchmarks/bench_darshan.py [--repeat 30] [--block 5] [--log PATH] [--no-gc]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa

HERE = Path(__file__).resolve().parent
DEFAULT_LOG = HERE.parent / "data" / "darshan" / "dxt.darshan"


class _Fresh:
    """Start a timed section with no garbage left over from the previous one.

    The collector stays enabled while timing, as in normal use, so each side
    pays for the garbage it makes itself (``--no-gc`` turns it off, as
    :mod:`timeit` does).
    """

    disable = False

    def __enter__(self):
        gc.collect()
        if self.disable:
            gc.disable()

    def __exit__(self, *exc):
        gc.enable()


def time_report(path: str) -> tuple[float, int]:
    import darshan

    with _Fresh():
        t = time.perf_counter()
        report = darshan.DarshanReport(path, read_all=True)
        dfs = report.records["DXT_POSIX"].to_df()
        dt = time.perf_counter() - t
    n = sum(len(r["read_segments"]) + len(r["write_segments"]) for r in dfs)
    return dt, n


def time_parse(path: str) -> tuple[float, pa.Table]:
    from iochar.load.darshan import DarshanLoader

    with _Fresh():
        t = time.perf_counter()
        chunks = list(DarshanLoader().parse(path))
        dt = time.perf_counter() - t
    ops = pa.concat_tables([c.tables["ops"] for c in chunks if "ops" in c.tables])
    return dt, ops


def time_load(path: str) -> tuple[float, int] | None:
    import iochar

    db = iochar.connect(":memory:")
    try:
        with _Fresh():
            t = time.perf_counter()
            res = db.load(path, kind="darshan")
            dt = time.perf_counter() - t
    except ModuleNotFoundError as exc:  # another loader of the registry not written yet
        print(f"  (store load unavailable: {exc})", file=sys.stderr)
        return None
    finally:
        db.close()
    return dt, res.rows.get("ops", 0)


def time_duckdb_scan(ops: pa.Table) -> float:
    con = duckdb.connect()
    con.register("ops", ops)
    with _Fresh():
        t = time.perf_counter()
        con.execute("SELECT count(*), sum(size), min(t_start), max(t_end) FROM ops").fetchall()
        dt = time.perf_counter() - t
    con.close()
    return dt


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--log", default=str(DEFAULT_LOG))
    ap.add_argument("--block", type=int, default=5, help="runs of one tool in a row")
    ap.add_argument("--no-gc", action="store_true", help="keep the collector off while timing")
    args = ap.parse_args()
    _Fresh.disable = args.no_gc
    path = args.log

    # warm-up: imports, library loading, caches
    _, n_report = time_report(path)
    _, ops = time_parse(path)
    time_load(path)
    n = ops.num_rows
    assert n == n_report, (n, n_report)

    # Rounds of blocks: each tool runs --block times in a row and the first run
    # of a block is dropped, so each is timed in its steady state (as when
    # loading a directory of logs) while the rounds interleave the tools
    # against machine drift.
    report, parse, load, scan = [], [], [], []
    rounds = max(1, -(-args.repeat // (args.block - 1)))
    for _ in range(rounds):
        report += [time_report(path)[0] for _ in range(args.block)][1:]
        parse += [time_parse(path)[0] for _ in range(args.block)][1:]
        block = [time_load(path) for _ in range(args.block)]
        for got in block[1:]:
            if got is not None:
                assert got[1] == n, got
                load.append(got[0])
        scan += [time_duckdb_scan(ops) for _ in range(args.block)][1:]

    r, p, s = (statistics.median(x) for x in (report, parse, scan))
    gc_note = "gc off" if args.no_gc else "gc on"
    print(
        f"darshan DXT: {Path(path).name}, {n:,} segments, median of {len(parse)} runs "
        f"(blocks of {args.block}, {gc_note})"
    )
    print(f"  pydarshan DarshanReport+to_df : {r * 1e3:8.2f} ms  ({n / r:12,.0f} segments/s)")
    print(f"  iochar parse (all tables)     : {p * 1e3:8.2f} ms  ({n / p:12,.0f} segments/s)")
    ok = r / p >= 10
    print(
        f"  speed-up iochar/pydarshan     : {r / p:8.1f}x (target >= 10x) "
        f"{'PASS' if ok else 'FAIL'}"
    )
    if load:
        d = statistics.median(load)
        print(f"  iochar parse+insert (store)   : {d * 1e3:8.2f} ms  ({n / d:12,.0f} segments/s)")
    print(f"  duckdb scan of Arrow segments : {s * 1e3:8.2f} ms  ({n / s:12,.0f} segments/s)")
    print(f"  ratio parse/duckdb-scan       : {p / s:8.1f}")
    if load:
        print(f"  ratio parse+insert/duckdb-scan: {d / s:8.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
