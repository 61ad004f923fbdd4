"""Timed runs for the trace-csv / trace-parquet benchmarks, each in a fresh process.

One child process per run (neither tool pays for the other's imports or
caches; imports are not timed). Each prints one JSON line: wall ``seconds``,
``cpu`` seconds of every thread of the process (``time.process_time``), peak RSS
``maxrss`` [MiB] (``getrusage(RUSAGE_SELF).ru_maxrss``) and ``rows``. Runs:

``duckdb``
    DuckDB's own read into a table, ``CREATE TABLE ops AS SELECT * FROM
    read_csv/read_parquet(...)``, DuckDB's default ``threads`` (one per core),
    closing the database (its checkpoint) included.
``duckdb1``
    The same with ``SET threads = 1``.
``iochar``
    ``Store.load`` of the file into a fresh store and ``close``: everything a
    user waits for (SHA-256, sniffing, parsing, checks, inserts, commit,
    checkpoint). iochar's DuckDB connection keeps the default ``threads``; the
    loader's Arrow readers use every core.
``parse``
    The loader alone: :func:`iochar.load.parse` consumed to the end, nothing stored.
``store``
    The store alone: every chunk is parsed first (not timed, held in memory),
    then ``Store.load`` runs on those chunks (the loader replaced by them) and
    the store is closed. This is the store's share of a load: SHA-256, checks,
    id shifts, inserts, commit and checkpoint, with the parse taken out.
    ``insert`` is the part of it spent in the ``INSERT`` statements.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

_CHILD = r"""
import json, resource, sys, time
db_path, src, kind, tool = sys.argv[1:5]
read = {"trace-csv": "read_csv", "trace-parquet": "read_parquet"}[kind]
out = {}
if tool.startswith("duckdb"):
    import duckdb
    t, c = time.perf_counter(), time.process_time()
    con = duckdb.connect(db_path)
    con.execute("SET enable_progress_bar = false")
    if tool == "duckdb1":
        con.execute("SET threads = 1")
    con.execute(f"CREATE TABLE ops AS SELECT * FROM {read}($p)", {"p": src})
    rows = con.execute("SELECT count(*) FROM ops").fetchall()[0][0]
    con.close()
elif tool == "iochar":
    import iochar
    t, c = time.perf_counter(), time.process_time()
    db = iochar.connect(db_path)
    rows = db.load(src, kind=kind).rows["ops"]
    db.close()
elif tool == "parse":
    import iochar.load, iochar.load.trace_table
    t, c = time.perf_counter(), time.process_time()
    rows = 0
    for chunk in iochar.load.parse(src, kind):
        ops = chunk.tables.get("ops")
        rows += 0 if ops is None else ops.num_rows
else:  # store
    import iochar, iochar.load, iochar.store
    chunks = list(iochar.load.parse(src, kind))
    iochar.store._load.parse = lambda *a, **k: (c for c in chunks)  # a generator: has close()
    spent = [0.0]
    append = iochar.store.Store._append
    def timed(self, table, frame):
        s = time.perf_counter()
        append(self, table, frame)
        spent[0] += time.perf_counter() - s
    iochar.store.Store._append = timed
    t, c = time.perf_counter(), time.process_time()
    db = iochar.connect(db_path)
    rows = db.load(src, kind=kind).rows["ops"]
    db.close()
    out["insert"] = spent[0]
out.update(seconds=time.perf_counter() - t, cpu=time.process_time() - c, rows=rows,
           maxrss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps(out))
"""


def run(tool: str, db: str, src: str, kind: str) -> dict:
    """One timed run of ``tool`` in a fresh process; the database file is removed after."""
    try:
        res = subprocess.run(
            [sys.executable, "-c", _CHILD, db, src, kind, tool],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    finally:
        if os.path.exists(db):
            os.remove(db)
    return json.loads(res.stdout.strip().splitlines()[-1])


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (the machine is shared)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


#: The timed runs, in the order they are printed.
TOOLS = ("duckdb", "duckdb1", "iochar", "parse", "store")


def print_rows(reader: str, rows: int, best: dict[str, dict], rss: dict | None = None) -> None:
    """One line per tool of :data:`TOOLS`: its best time, rate, CPU, INSERTs of the store run.

    ``reader`` names DuckDB's function (``read_csv``); ``rss`` [MiB] per tool, when measured.
    """
    label = {
        "duckdb": f"duckdb {reader}, all cores",
        "duckdb1": f"duckdb {reader}, threads=1",
        "iochar": "iochar load, all cores",
        "parse": "  of which loader alone",
        "store": "  of which store alone",
    }
    width = max(map(len, label.values()))
    for tool in TOOLS:
        r = best[tool]
        t = r["seconds"]
        mem = f", peak RSS {rss[tool]:5.0f} MiB" if rss else ""
        extra = f", INSERTs {r['insert']:5.2f} s" if "insert" in r else ""
        print(f"  {label[tool]:{width}s}: {t:6.2f} s ({rows / t / 1e6:5.2f} M rows/s), "
              f"cpu {r['cpu']:6.2f} s{mem}{extra}")  # fmt: skip
