"""Load a 10-million-line ``find -printf`` snapshot; compare with DuckDB's read_csv.

Target: iochar's load takes at most 2x DuckDB's ``CREATE TABLE AS SELECT ...
FROM read_csv(...)`` of the same file (tab-separated, the 7 typed fields of
:data:`iochar.load.snapshot.FIND_PRINTF`), both into a fresh on-disk
database. iochar's figure includes everything a user waits for: SHA-256 of
the input, sniffing, parsing, validation, the seconds-to-timestamp
conversion, keeping regular files only, and the insert. DuckDB's side keeps
the epoch seconds as DOUBLE (no conversion, no filter), so it is a floor.

The listing is synthetic, written by DuckDB ``COPY`` in the documented
format: 90% regular files, 10% directories, sizes log-uniform up to 1 GiB.

    python benchmarks/bench_snapshot.py [--rows 10000000] [--repeat 1]
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
  SELECT concat_ws(chr(9),
      CASE WHEN i % 10 = 0 THEN 'd' ELSE 'f' END,
      (floor(pow(2, (hash(i) % 3000) / 100.0)))::BIGINT,
      printf('%.10f', 1.6e9 + (hash(i * 7) % 100000000)),
      printf('%.10f', 1.5e9 + (hash(i * 11) % 100000000)),
      printf('%.10f', 1.7e9 + (hash(i * 13) % 1000000)),
      (1000 + i % 50),
      '/lus/proj' || (i % 40) || '/run' || (i // 1000 % 500) || '/out_' || i || '.dat'
  ) AS line
  FROM range($n) t(i)
) TO '{out}' (HEADER false, QUOTE '', ESCAPE '', DELIMITER '|')
"""

READ_SQL = """
CREATE TABLE f AS SELECT * FROM read_csv($p, delim = '\t', header = false, quote = '',
    escape = '', columns = {'type': 'VARCHAR', 'size': 'BIGINT', 'atime': 'DOUBLE',
    'mtime': 'DOUBLE', 'ctime': 'DOUBLE', 'uid': 'BIGINT', 'path': 'VARCHAR'})
"""


def make_listing(path: str, rows: int) -> None:
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    # the path is ours (a temp dir); COPY TO takes no parameter for it
    con.execute(GEN_SQL.format(out=path.replace("'", "''")), {"n": rows})
    con.close()


def time_duckdb(path: str, workdir: str, k: int) -> float:
    con = duckdb.connect(os.path.join(workdir, f"duck{k}.duckdb"))
    con.execute("SET enable_progress_bar = false")
    t = time.perf_counter()
    con.execute(READ_SQL, {"p": path})
    con.close()
    return time.perf_counter() - t


def time_iochar(path: str, workdir: str, k: int) -> tuple[float, int]:
    db = iochar.connect(os.path.join(workdir, f"iochar{k}.duckdb"))
    t = time.perf_counter()
    res = db.load(path, kind=None)
    db.close()
    return time.perf_counter() - t, res.rows["snapshot_files"]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="iochar-bench-") as tmp:
        path = os.path.join(tmp, "listing.find")
        t = time.perf_counter()
        make_listing(path, args.rows)
        gen = time.perf_counter() - t
        mb = os.path.getsize(path) / 1e6
        duck, ours = [], []
        for k in range(args.repeat):
            duck.append(time_duckdb(path, tmp, k))
            s, n = time_iochar(path, tmp, k)
            assert n == args.rows - (args.rows + 9) // 10, n
            ours.append(s)
        d, o = statistics.median(duck), statistics.median(ours)
        print(f"snapshot (find -printf): {args.rows:,} lines, {mb:,.0f} MB, {os.cpu_count()} cores")
        print(f"  written by duckdb COPY   : {gen:7.2f} s")
        print(f"  duckdb read_csv -> table : {d:7.2f} s  ({args.rows / d / 1e6:5.2f} M lines/s)")
        print(f"  iochar load (all steps)  : {o:7.2f} s  ({args.rows / o / 1e6:5.2f} M lines/s)")
        print(
            f"  ratio iochar/duckdb      : {o / d:7.2f}  (target <= 2.00) "
            f"{'PASS' if o / d <= 2 else 'FAIL'}"
        )


if __name__ == "__main__":
    main()
