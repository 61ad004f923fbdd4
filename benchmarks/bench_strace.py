"""Benchmark the strace loader on one core, against DuckDB's own scan of the file.

Builds a large trace by replicating the real fixtures (``data/strace/
workers_o.strace`` and ``ckpt_tt.strace``, both ``strace -f -tt -T -y -o``
output) with shifted pids and timestamps, so every copy is a new set of
processes later in time (the ``-tt`` clock wraps past midnight once the
copies span more than a day). Then it times

- ``StraceLoader().parse(path)`` fully consumed, with ``POLARS_MAX_THREADS=1``;
- DuckDB (``SET threads = 1``) reading the same file as one VARCHAR column of
  lines into a table, the cheapest complete scan DuckDB can do.

``--transfers`` adds the captures of ``data/strace/transfers/`` (GNU cp's
copy_file_range; sendfile, rename, mmap... of ``atomic_ckpt``) to the mix, so
the two-row calls (a read and a write per transfer, a row per path of a
rename) are part of what is timed.

Run::

    python benchmarks/bench_strace.py [--lines 2000000] [--repeat 3] [--transfers]

It prints lines/s, the 500,000 lines/s target and the ratio of the parse time
to DuckDB's scan time (machine-independent context for the absolute figure).
"""

from __future__ import annotations

import os

os.environ["POLARS_MAX_THREADS"] = "1"  # before polars is imported anywhere
os.environ.setdefault("RAYON_NUM_THREADS", "1")

import argparse  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import duckdb  # noqa: E402
import polars as pl  # noqa: E402

from iochar.load.strace import StraceLoader  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = [
    ROOT / "data" / "strace" / "workers_o.strace",
    ROOT / "data" / "strace" / "ckpt_tt.strace",
]
TRANSFERS = [
    ROOT / "data" / "strace" / "transfers" / "cp.strace",
    ROOT / "data" / "strace" / "transfers" / "atomic_ckpt.strace",
]
TARGET = 500_000  # lines/s on one core

_LINE = re.compile(rb"^(\d+)( +)(\d\d):(\d\d):(\d\d)\.(\d{6})")


def _load(path: Path) -> tuple[list[tuple[int, bytes, int, bytes]], int]:
    """Lines split into (pid, pad, time of day [us], rest); and the span [us]."""
    out = []
    for raw in path.read_bytes().splitlines(keepends=True):
        m = _LINE.match(raw)
        pid, pad = int(m.group(1)), m.group(2)
        us = ((int(m.group(3)) * 60 + int(m.group(4))) * 60 + int(m.group(5))) * 10**6 + int(
            m.group(6)
        )
        out.append((pid, pad, us, raw[m.end() :]))
    span = out[-1][2] - out[0][2]
    return out, span


def build(path: Path, n_lines: int, fixtures: list[Path] = FIXTURES) -> int:
    """Write at least ``n_lines`` lines of ``fixtures`` to ``path``; return the count."""
    sources = [_load(f) for f in fixtures]
    t_base = sources[0][0][0][2]
    written = copy = 0
    shift_us = 0
    with open(path, "wb") as fh:
        while written < n_lines:
            lines, span = sources[copy % len(sources)]
            t0 = lines[0][2]
            pid_shift = (copy * 7) % 4_000_000
            buf = []
            for pid, pad, us, rest in lines:
                t = (t_base + shift_us + us - t0) % (86_400 * 10**6)
                hh, rem = divmod(t, 3_600 * 10**6)
                mm, rem = divmod(rem, 60 * 10**6)
                ss, frac = divmod(rem, 10**6)
                new_pid = pid + pid_shift
                buf.append(b"%d%s%02d:%02d:%02d.%06d%s" % (new_pid, pad, hh, mm, ss, frac, rest))
            fh.write(b"".join(buf))
            written += len(lines)
            shift_us += span + 1000
            copy += 1
    return written


def time_parse(path: Path) -> tuple[float, int, float]:
    """Wall time [s], ops rows, and CPU time / wall time (about 1 on one core)."""
    cpu = time.process_time()
    t = time.perf_counter()
    rows = 0
    for chunk in StraceLoader().parse(str(path)):
        if "ops" in chunk.tables:
            rows += chunk.tables["ops"].num_rows
    wall = time.perf_counter() - t
    return wall, rows, (time.process_time() - cpu) / wall


def time_duckdb(path: Path) -> float:
    con = duckdb.connect()
    con.execute("SET threads = 1")
    t = time.perf_counter()
    con.execute(
        "CREATE TABLE lines AS SELECT * FROM read_csv($p, columns = {'line': 'VARCHAR'}, "
        "delim = '\x01', header = false, quote = '', escape = '', auto_detect = false)",
        {"p": str(path)},
    )
    n = con.execute("SELECT count(*) FROM lines").fetchone()[0]
    dt = time.perf_counter() - t
    con.close()
    assert n > 0
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=2_000_000, help="lines to generate")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs (best is reported)")
    ap.add_argument(
        "--transfers", action="store_true", help="mix in data/strace/transfers/ (two-row calls)"
    )
    args = ap.parse_args()
    fixtures = FIXTURES + TRANSFERS if args.transfers else FIXTURES
    with tempfile.TemporaryDirectory(prefix="iochar-bench-") as tmp:
        path = Path(tmp) / "big.strace"
        n = build(path, args.lines, fixtures)
        size = path.stat().st_size
        parse_s, rows, cores = min(time_parse(path) for _ in range(args.repeat))
        duck_s = min(time_duckdb(path) for _ in range(args.repeat))
    rate = n / parse_s
    names = ", ".join(f.name for f in fixtures)
    print(f"input          : {n:,} lines, {size / 1e6:.1f} MB (replicated real fixtures: {names})")
    print(f"polars threads : {pl.thread_pool_size()}")
    print(f"strace parse   : {parse_s:.3f} s  -> {rate:,.0f} lines/s, {rows:,} ops rows")
    print(f"cpu / wall     : {cores:.2f} (1.00 = one core busy)")
    verdict = "met" if rate >= TARGET else "NOT met"
    print(f"target         : {TARGET:,} lines/s on one core -> {verdict}")
    print(f"duckdb scan    : {duck_s:.3f} s  -> {n / duck_s:,.0f} lines/s (1 thread, lines only)")
    print(f"ratio          : parse takes {parse_s / duck_s:.2f}x DuckDB's scan of the same file")


if __name__ == "__main__":
    main()
