"""Load a 10-million-op trace-csv; compare with DuckDB's own read_csv into a table.

Target (issue 2): iochar's load takes at most 2x DuckDB's ``CREATE TABLE AS
SELECT * FROM read_csv(...)`` of the same file, both into a fresh on-disk
database. iochar's figure includes everything a user waits for: SHA-256 of
the input, sniffing, parsing, validation, file-id mapping and the insert.

    python benchmarks/bench_trace_csv.py [--rows 10000000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
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


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
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
