"""Load a trace-parquet; compare time and peak memory with DuckDB's own read_parquet.

Issue 18 target: iochar's load of a trace-parquet takes at most 1.5x DuckDB's
``CREATE TABLE ops AS SELECT * FROM read_parquet(...)`` of the same file, both
into a fresh on-disk database. The issue measured 2.45x the time and 3.8x the
memory at 16M ops.

Each tool runs in a fresh child process (so neither pays for the other's
imports or caches; imports are not timed), which reports the wall time of the
load including closing the database (the checkpoint that writes the rows), and
its peak RSS (``getrusage(RUSAGE_SELF).ru_maxrss``). The file is written by
DuckDB ``COPY ... (FORMAT parquet)`` with the same columns as the trace-csv
benchmark (``bench_trace_csv.py``): 16 ranks, 1,000 files, read/write/seek.

    python benchmarks/bench_trace_parquet.py [--rows 16000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import duckdb

TARGET = 1.5

GEN_SQL = """
COPY (
  SELECT (i // 5000000)::BIGINT AS job_id, (i % 16)::INTEGER AS rank,
         '/scratch/run/file_' || (i % 1000) || '.dat' AS path,
         CASE WHEN i % 3 = 0 THEN 'read' WHEN i % 3 = 1 THEN 'write' ELSE 'seek' END AS op,
         (i * 4096)::BIGINT AS "offset", 4096::BIGINT AS size,
         i * 0.001 AS t_start, i * 0.001 + 0.0005 AS t_end
  FROM range($n) t(i)
) TO '{out}' (FORMAT parquet)
"""

_CHILD = """
import json, resource, sys, time
db_path, src, tool = sys.argv[1:4]
if tool == "iochar":
    import iochar
    t = time.perf_counter()
    db = iochar.connect(db_path)
    rows = db.load(src).rows["ops"]
    db.close()
else:
    import duckdb
    t = time.perf_counter()
    con = duckdb.connect(db_path)
    con.execute("SET enable_progress_bar = false")
    con.execute("CREATE TABLE ops AS SELECT * FROM read_parquet($p)", {"p": src})
    rows = con.execute("SELECT count(*) FROM ops").fetchall()[0][0]
    con.close()
print(json.dumps({"seconds": time.perf_counter() - t, "rows": rows,
                  "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(tool: str, db: str, src: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, db, src, tool], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=16_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="iochar-bench-pq-") as tmp:
        src = os.path.join(tmp, "trace.parquet")
        con = duckdb.connect()
        con.execute("SET enable_progress_bar = false")
        con.execute(GEN_SQL.format(out=src.replace("'", "''")), {"n": args.rows})
        con.close()
        got: dict[str, list[dict]] = {"duckdb": [], "iochar": []}
        for k in range(args.repeat):
            for tool in ("duckdb", "iochar"):
                db = os.path.join(tmp, f"{tool}{k}.duckdb")
                res = run(tool, db, src)
                assert res["rows"] == args.rows, res
                got[tool].append(res)
                os.remove(db)
        mb = os.path.getsize(src) / 1e6
    t = {tool: statistics.median(r["seconds"] for r in rs) for tool, rs in got.items()}
    m = {tool: max(r["maxrss"] for r in rs) for tool, rs in got.items()}
    print(f"trace-parquet: {args.rows:,} ops, {mb:,.0f} MB, {os.cpu_count()} cores, "
          f"median of {args.repeat}")  # fmt: skip
    for tool in ("duckdb", "iochar"):
        print(f"  {tool:6s}: {t[tool]:7.2f} s ({args.rows / t[tool] / 1e6:5.2f} M rows/s), "
              f"peak RSS {m[tool]:6.0f} MiB")  # fmt: skip
    ratio = t["iochar"] / t["duckdb"]
    ok = ratio <= TARGET
    print(f"  ratio iochar/duckdb time  : {ratio:5.2f}  (target <= {TARGET}) "
          f"{'PASS' if ok else 'FAIL'}")  # fmt: skip
    print(f"  ratio iochar/duckdb memory: {m['iochar'] / m['duckdb']:5.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
