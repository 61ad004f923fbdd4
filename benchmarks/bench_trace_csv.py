"""Load a 10-million-op trace-csv; compare with DuckDB's own read_csv into a table.

Target (issue 2): iochar's load takes at most 2x DuckDB's ``CREATE TABLE AS
SELECT * FROM read_csv(...)`` of the same file, both into a fresh on-disk
database. iochar's figure includes everything a user waits for: SHA-256 of
the input, sniffing, parsing, validation, file-id mapping and the insert.

    python benchmarks/bench_trace_csv.py [--rows 10000000] [--repeat 1]

With ``--rss`` it measures memory instead (issue 18 item 1: peak RSS <= 600 MB
for 8M rows, and the 8M-row peak <= 1.3x the 2M-row peak): each of
``--rss-rows`` (default 2,000,000 and 8,000,000) is loaded by ``Store.load``
into a fresh on-disk database in a child process, and the child's peak RSS
(``getrusage(RUSAGE_SELF).ru_maxrss``, as ``/usr/bin/time -f %M`` reports it)
is printed with the peaks of its anonymous and file-backed parts (``RssAnon``
and ``RssFile`` of ``/proc/self/status``, sampled after every chunk) and, for
scale, the same for DuckDB's ``read_csv`` into a table.

    python benchmarks/bench_trace_csv.py --rss [--rss-rows 2000000 8000000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import duckdb

import iochar

GEN_SQL = """
COPY (
  SELECT (i // 5000000)::BIGINT AS job_id, (i % 16)::INTEGER AS rank,
         '/scratch/run/file_' || (i % 1000) || '.dat' AS path,
         CASE WHEN i % 3 = 0 THEN 'read' WHEN i % 3 = 1 THEN 'write' ELSE 'seek' END AS op,
         (i * 4096)::BIGINT AS "offset", 4096::BIGINT AS size,
         i * 0.001 AS t_start, i * 0.001 + 0.0005 AS t_end
  FROM range($n) t(i)
) TO '{out}' (HEADER)
"""


def make_trace(path: str, rows: int) -> None:
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    # the path is ours (a temp dir), COPY TO takes no parameter for it
    con.execute(GEN_SQL.format(out=path.replace("'", "''")), {"n": rows})
    con.close()


def time_duckdb(csv_path: str, workdir: str, k: int) -> float:
    db = os.path.join(workdir, f"duck{k}.duckdb")
    con = duckdb.connect(db)
    con.execute("SET enable_progress_bar = false")
    t = time.perf_counter()
    con.execute("CREATE TABLE ops AS SELECT * FROM read_csv($p)", {"p": csv_path})
    con.close()
    return time.perf_counter() - t


def time_iochar(csv_path: str, workdir: str, k: int) -> tuple[float, int]:
    db = iochar.connect(os.path.join(workdir, f"iochar{k}.duckdb"))
    t = time.perf_counter()
    res = db.load(csv_path, kind=None)
    db.close()
    return time.perf_counter() - t, res.rows["ops"]


#: Child process for --rss: load argv[2] into argv[1] (iochar or duckdb, argv[3]);
#: print the peak RSS and the peaks of RssAnon / RssFile seen after each chunk. [MiB]
_RSS_CHILD = """
import json, os, resource, sys, time
peak = {}
def probe(*_):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("RssAnon", "RssFile")):
                k, v = line.split(":", 1)
                peak[k] = max(peak.get(k, 0), int(v.split()[0]) / 1024)
db_path, csv_path, tool = sys.argv[1:4]
t = time.perf_counter()
if tool == "iochar":
    import iochar
    db = iochar.connect(db_path)
    db.load(csv_path, progress=probe)
    probe()
    db.close()
else:
    import duckdb
    con = duckdb.connect(db_path)
    con.execute("CREATE TABLE ops AS SELECT * FROM read_csv($p)", {"p": csv_path})
    probe()
    con.close()
peak["seconds"] = time.perf_counter() - t
peak["maxrss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(peak))
"""


def measure_rss(rows_list: list[int]) -> None:
    """Peak RSS of loading each row count, iochar and DuckDB, each in a fresh process."""
    peaks = {}
    with tempfile.TemporaryDirectory(prefix="iochar-bench-rss-") as tmp:
        for rows in rows_list:
            csv_path = os.path.join(tmp, f"trace{rows}.csv")
            make_trace(csv_path, rows)
            mb = os.path.getsize(csv_path) / 1e6
            for tool in ("duckdb", "iochar"):
                db = os.path.join(tmp, f"{tool}{rows}.duckdb")
                out = subprocess.run(
                    [sys.executable, "-c", _RSS_CHILD, db, csv_path, tool],
                    capture_output=True, text=True, check=True,
                ).stdout  # fmt: skip
                p = json.loads(out.strip().splitlines()[-1])
                peaks[tool, rows] = p["maxrss"]
                print(
                    f"  {tool:6s} {rows:>11,} rows ({mb:5.0f} MB): peak RSS {p['maxrss']:6.0f} MiB "
                    f"(anon {p.get('RssAnon', 0):5.0f}, file {p.get('RssFile', 0):5.0f}) "
                    f"in {p['seconds']:5.1f} s"
                )
            os.remove(csv_path)
    lo, hi = min(rows_list), max(rows_list)
    if lo != hi:
        r = peaks["iochar", hi] / peaks["iochar", lo]
        print(f"  iochar peak at {hi:,} / at {lo:,} rows: {r:4.2f}  (target <= 1.30)")
    top = peaks["iochar", hi] * 1.048576  # MiB -> MB
    print(f"  iochar peak at {hi:,} rows: {top:5.0f} MB  (target <= 600 MB)")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--rss", action="store_true", help="measure peak RSS instead of time")
    ap.add_argument("--rss-rows", type=int, nargs="+", default=[2_000_000, 8_000_000])
    args = ap.parse_args()
    if args.rss:
        measure_rss(args.rss_rows)
        return
    with tempfile.TemporaryDirectory(prefix="iochar-bench-") as tmp:
        csv_path = os.path.join(tmp, "trace.csv")
        make_trace(csv_path, args.rows)
        mb = os.path.getsize(csv_path) / 1e6
        duck, ours = [], []
        for k in range(args.repeat):
            duck.append(time_duckdb(csv_path, tmp, k))
            s, n = time_iochar(csv_path, tmp, k)
            assert n == args.rows, (n, args.rows)
            ours.append(s)
        d, o = statistics.median(duck), statistics.median(ours)
        print(f"trace-csv: {args.rows:,} ops, {mb:,.0f} MB, {os.cpu_count()} cores")
        print(f"  duckdb read_csv -> table : {d:7.2f} s  ({args.rows / d / 1e6:5.2f} M rows/s)")
        print(f"  iochar load (all steps)  : {o:7.2f} s  ({args.rows / o / 1e6:5.2f} M rows/s)")
        print(
            f"  ratio iochar/duckdb      : {o / d:7.2f}  (target <= 2.00) "
            f"{'PASS' if o / d <= 2 else 'FAIL'}"
        )


if __name__ == "__main__":
    main()
