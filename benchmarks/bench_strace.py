"""Benchmark the strace loader on one core and on every core, against DuckDB's own scan.

Builds a large trace by replicating the real fixtures (``data/strace/
workers_o.strace`` and ``ckpt_tt.strace``, both ``strace -f -tt -T -y -o``
output) with shifted pids and timestamps, so every copy is a new set of
processes later in time (the ``-tt`` clock wraps past midnight once the
copies span more than a day). Then it times, each in a fresh child process
(the thread limits of polars and Arrow are fixed when they load):

- issue 3, one core: ``StraceLoader().parse(path)`` fully consumed, pinned to
  one CPU (``sched_setaffinity``) with ``POLARS_MAX_THREADS=1`` and
  ``IOCHAR_PARSE_THREADS=1``; PASS at >= 500,000 lines/s;
- issue 18, every core: the same parse with the defaults (one thread per CPU
  this process may run on: blocks scanned in parallel, see the loader's
  "Parallel blocks"); PASS when it takes at most 4x DuckDB's scan;
- DuckDB (``SET threads = 1``) reading the same file as one VARCHAR column of
  lines into a table, the cheapest complete scan DuckDB can do.

The three are interleaved ``--repeat`` times and the best of each is kept, so
the ratios compare runs under the same load (printed: the machine is shared).

``--transfers`` adds the captures of ``data/strace/transfers/`` (GNU cp's
copy_file_range; sendfile, rename, mmap... of ``atomic_ckpt``) to the mix, so
the two-row calls (a read and a write per transfer, a row per path of a
rename) are part of what is timed.

``--rss`` also parses a trace of ``--rss-lines`` lines (default 4,000,000) on
every core in a fresh process, and loads it with ``Store.load`` into a fresh
on-disk database in another, and prints each one's peak resident set
(``VmHWM`` of ``/proc/self/status``), PASS at <= 600 MB (issue 18).

Run::

    python benchmarks/bench_strace.py [--lines 2000000] [--repeat 3] [--transfers] [--rss]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = [
    ROOT / "data" / "strace" / "workers_o.strace",
    ROOT / "data" / "strace" / "ckpt_tt.strace",
]
TRANSFERS = [
    ROOT / "data" / "strace" / "transfers" / "cp.strace",
    ROOT / "data" / "strace" / "transfers" / "atomic_ckpt.strace",
]
TARGET = 500_000  # lines/s on one core (issue 3)
RATIO = 4.0  # every core against DuckDB's single-threaded scan (issue 18)
RSS_MB = 600  # peak RSS of a 4M-line parse (issue 18) [MB]

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


def _child(mode: str, path: str) -> None:
    """Time one full parse in this (fresh) process; print wall, CPU, rows and VmHWM as JSON."""
    if mode == "one":
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    from iochar.load.strace import StraceLoader

    cpu = time.process_time()
    t = time.perf_counter()
    rows = 0
    if mode == "load":  # the whole Store.load into a fresh on-disk database, then close
        import iochar

        db_path = f"{path}.duckdb"
        db = iochar.connect(db_path)
        rows = db.load(path, kind="strace").rows["ops"]
        db.close()
        for f in Path(path).parent.glob(Path(db_path).name + "*"):
            f.unlink()
    else:
        for chunk in StraceLoader().parse(path):
            if "ops" in chunk.tables:
                rows += chunk.tables["ops"].num_rows
    wall = time.perf_counter() - t
    cpu = time.process_time() - cpu
    with open("/proc/self/status") as fh:
        hwm = next(int(x.split()[1]) for x in fh if x.startswith("VmHWM:"))  # [KiB]
    print(json.dumps({"wall": wall, "cpu": cpu, "rows": rows, "hwm_kib": hwm}))


def time_parse(path: Path, mode: str) -> dict:
    """Run :func:`_child` in a fresh interpreter: parse on ``one`` core or ``all`` cores,
    or ``load`` (``Store.load``, every core)."""
    env = dict(os.environ)
    for name in ("POLARS_MAX_THREADS", "RAYON_NUM_THREADS", "IOCHAR_PARSE_THREADS"):
        env.pop(name, None)
    if mode == "one":
        env.update(POLARS_MAX_THREADS="1", RAYON_NUM_THREADS="1", IOCHAR_PARSE_THREADS="1")
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def time_duckdb(path: Path) -> float:
    import duckdb

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


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=2_000_000, help="lines to generate")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs (best is reported)")
    ap.add_argument(
        "--transfers", action="store_true", help="mix in data/strace/transfers/ (two-row calls)"
    )
    ap.add_argument("--rss", action="store_true", help="peak RSS of a --rss-lines parse")
    ap.add_argument("--rss-lines", type=int, default=4_000_000, help="lines for --rss")
    args = ap.parse_args()
    fixtures = FIXTURES + TRANSFERS if args.transfers else FIXTURES
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="iochar-bench-") as tmp:
        path = Path(tmp) / "big.strace"
        n = build(path, args.lines, fixtures)
        size = path.stat().st_size
        one, every, duck_s = [], [], []
        for _ in range(args.repeat):  # interleaved: each ratio compares runs under one load
            one.append(time_parse(path, "one"))
            every.append(time_parse(path, "all"))
            duck_s.append(time_duckdb(path))
        best1 = min(one, key=lambda r: r["wall"])
        best_all = min(every, key=lambda r: r["wall"])
        duck = min(duck_s)
        rss = None
        if args.rss:
            if args.rss_lines != n:
                path.unlink()
                n_rss = build(path, args.rss_lines, fixtures)
            else:
                n_rss = n
            rss = (n_rss, time_parse(path, "all"), time_parse(path, "load"))
    load1 = os.getloadavg()[0]
    names = ", ".join(f.name for f in fixtures)
    rate = n / best1["wall"]
    print(f"input          : {n:,} lines, {size / 1e6:.1f} MB (replicated real fixtures: {names})")
    print(f"machine        : {os.cpu_count()} CPUs, load average {load0:.2f} -> {load1:.2f}")
    print(
        f"one core       : {best1['wall']:.3f} s  -> {rate:,.0f} lines/s, "
        f"{best1['rows']:,} ops rows, cpu/wall {best1['cpu'] / best1['wall']:.2f}"
    )
    print(f"target         : {TARGET:,} lines/s on one core -> {_verdict(rate >= TARGET)}")
    print(f"duckdb scan    : {duck:.3f} s  -> {n / duck:,.0f} lines/s (1 thread, lines only)")
    print(
        f"ratio (1 core) : parse takes {best1['wall'] / duck:.2f}x DuckDB's scan of the same file"
    )
    ratio = best_all["wall"] / duck
    print(
        f"every core     : {best_all['wall']:.3f} s  -> {n / best_all['wall']:,.0f} lines/s, "
        f"cpu/wall {best_all['cpu'] / best_all['wall']:.2f}"
    )
    assert best_all["rows"] == best1["rows"]
    print(
        f"issue 18 ratio : {ratio:.2f}x DuckDB's single-threaded scan "
        f"(target <= {RATIO:g}x) -> {_verdict(ratio <= RATIO)}"
    )
    if rss is not None:
        n_rss, r, stored = rss
        for what, got in (("parsing", r), ("loading (Store.load)", stored)):
            mb = got["hwm_kib"] * 1024 / 1e6
            print(
                f"peak RSS       : {mb:,.0f} MB {what} {n_rss:,} lines on every core "
                f"({got['wall']:.2f} s, fresh process; target <= {RSS_MB} MB) -> "
                f"{_verdict(mb <= RSS_MB)}"
            )


if __name__ == "__main__":
    main()
