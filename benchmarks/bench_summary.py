"""``iochar summary LOG`` against ``drishti LOG``, wall time per real Darshan log (issue 19 item 3).

Target: on every log, iochar's summary takes at most Drishti's time (ratio <= 1).

For each Darshan log under ``data/darshan/**`` (or ``--log PATH``, repeatable) the two
commands run as a user runs them, each a fresh process with its terminal output
discarded, one after the other in the same round so both see the same machine load:

- ``python -m iochar.cli summary LOG`` (the ``iochar`` command: loads the log into an
  in-memory database, then facts, volumes, files and classes, access sizes, cycles and
  insights),
- ``drishti LOG`` (drishti-io's console script).

Each pair runs ``--repeat`` times (order alternating between rounds); the table shows
each command's median wall time [s], the ratio iochar / Drishti, and a note when a
command failed (Drishti raises on some real logs: its exit status and last line). The
column ``stack`` is the median wall time of ``python -c "import duckdb, pandas,
rich.console"``, run once per round beside them: what any process pays before its
first row when it keeps its data in DuckDB (the store), returns pandas DataFrames (every
analysis, and ``insights.run`` by issue 19 item 4) and prints with rich (item 3); a log
whose Drishti run is no longer than that is flagged. When
``drishti`` is not installed the iochar times are printed alone and the target is not
judged. The last line says on how many logs the target holds.

Before timing, iochar's bytecode is brought up to date (``python -m compileall`` on
the ``iochar`` package, as ``pip install`` does for Drishti's): with
``PYTHONDONTWRITEBYTECODE=1`` in the environment, a module edited since its ``.pyc``
was written is otherwise compiled from source in every process (5-15 ms per large
module, about 0.4 s in all when many are stale). ``--no-compile`` skips it.

``--stages`` adds, per log, where iochar's time goes, from one more run in a fresh
process: Python's own start (``python -c pass``), importing ``iochar.report.summary``
(pandas, numpy), and the wall time of each stage of
:func:`iochar.report.summary.summarize_paths` (``Summary.seconds``: load, facts,
job_metrics, classify, insights, cycles, context), the rest being imports made on first
use and the terminal rendering.

``--floor`` adds the column ``floor``: the least any DuckDB-backed summary without
pandas could take on the log, measured, not estimated. First, in one process, iochar
loads the log, records every statement :func:`iochar.report.summary.summarize` then
runs (the ~55-65 queries of the facts, job metrics, classification, insight rules,
cycles and context) and writes each table the log filled to Parquet. Then, each
round, a fresh process does only what cannot be left out: Python's start; importing
DuckDB (the store), pyarrow (the store's insert format) and rich (the terminal);
declaring libdarshan-util's C API to cffi from PyDarshan's own declarations (without
importing the ``darshan`` package, which imports pandas) and reading every record of
every module of the log with it; creating the store's tables; inserting the log's
rows (DuckDB reading the Parquet files itself, its fastest insert); running the
recorded statements and fetching their rows as tuples; printing one rich table. It
leaves out every line of iochar's own Python: the analyses' logic, the rules'
grading, the evidence and the full rendering, and pandas. A log whose Drishti run is
no longer than this floor cannot meet the target by any speed-up of iochar short of
running fewer or cheaper queries than the rules and analyses are.

Run: ``python benchmarks/bench_summary.py [--repeat 3] [--timeout 300] [--log PATH]...
[--stages] [--floor] [--no-compile]``
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(cmd: list[str], timeout: float) -> tuple[float, int, str]:
    """Wall time [s], exit status and the last line of stderr of one command."""
    t0 = time.perf_counter()
    try:
        r = subprocess.run(
            cmd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t0, -1, f"timed out after {timeout:g} s"
    wall = time.perf_counter() - t0
    lines = [ln for ln in r.stderr.decode(errors="replace").splitlines() if ln.strip()]
    return wall, r.returncode, lines[-1].strip() if lines else ""


_STAGES = """
import json, sys, time
t0 = time.perf_counter()
from iochar.report import summary
t1 = time.perf_counter()
s = summary.summarize_paths([sys.argv[1]])
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "summarize": t2 - t1, **s.seconds}))
"""


def _stages(log: Path, timeout: float) -> str:
    """Where iochar's time goes on one log, in a fresh process (see the description)."""
    import json

    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, timeout=timeout)
    start = time.perf_counter() - t0
    r = subprocess.run(
        [sys.executable, "-c", _STAGES, str(log)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    if r.returncode != 0:
        return f"stages: failed ({r.stderr.strip().splitlines()[-1][:80] if r.stderr else ''})"
    t = json.loads(r.stdout.strip().splitlines()[-1])
    named = ("load", "facts", "job_metrics", "classify", "insights", "cycles", "context")
    rest = t["summarize"] - sum(t.get(k, 0.0) for k in named)
    parts = [f"python {start:.2f}", f"import {t['import']:.2f}"]
    parts += [f"{k} {t[k]:.2f}" for k in named if k in t]
    parts.append(f"first-use imports {rest:.2f}")
    return "  stages [s]: " + ", ".join(parts)


_CAPTURE = """
import json, os, sys
import duckdb
import iochar
from iochar import schema
from iochar.report import summary

log, out = sys.argv[1], sys.argv[2]
store = iochar.connect(":memory:")
res = store.load(log)
con = store.con
stmts = []


class Recorder:
    # the store's connection, recording each statement before running it
    def __getattr__(self, name):
        attr = getattr(con, name)
        if name not in ("execute", "sql", "query"):
            return attr

        def run(sql, *args, **kw):
            params = kw.get("params", args[0] if args else None)
            if isinstance(params, dict):
                params = {k: list(v) if isinstance(v, (tuple, set)) else v
                          for k, v in params.items()}
            stmts.append((sql, params))
            got = attr(sql, *args, **kw)
            return self if got is con else got

        return run


store._con = Recorder()
ids = [r[0] for r in con.execute(
    "SELECT job_id FROM jobs WHERE source_id = $s ORDER BY 1", {"s": res.source_id}).fetchall()]
summary.summarize(store, job_ids=ids)
store._con = con
tables = []
for (t,) in con.execute(
    "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
).fetchall():
    if t in schema.TABLES and con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]:
        path = os.path.join(out, t + ".parquet")
        con.execute(f'COPY "{t}" TO $p (FORMAT parquet)', {"p": path})
        tables.append([t, path])
with open(os.path.join(out, "floor.json"), "w") as fh:
    json.dump({"ddl": schema.ddl(), "tables": tables, "statements": stmts}, fh, default=str)
"""

_FLOOR = """
import glob, importlib.util, json, os, sys
import duckdb
import pyarrow
import cffi
from rich.console import Console
from rich.table import Table

log, spec_path = sys.argv[1], sys.argv[2]
with open(spec_path) as fh:
    spec = json.load(fh)
# libdarshan-util's C API, declared from PyDarshan's own text (darshan/__init__ imports
# pandas, so the module is loaded from its file, as a lone module)
where = importlib.util.find_spec("darshan").submodule_search_locations[0]
text = os.path.join(where, "backend", "api_def_c.py")
m = importlib.util.spec_from_file_location("api_def_c", text)
api = importlib.util.module_from_spec(m)
m.loader.exec_module(api)
ffi = cffi.FFI()
ffi.cdef(api.load_darshan_header())
lib = ffi.dlopen(glob.glob(os.path.join(where, "..", "darshan.libs", "libdarshan-util*.so*"))[0])
fd = lib.darshan_log_open(log.encode())
job = ffi.new("struct darshan_job *")
lib.darshan_log_get_job(fd, job)
exe = ffi.new("char[]", 4096)
lib.darshan_log_get_exe(fd, exe)
mnts, n = ffi.new("struct darshan_mnt_info **"), ffi.new("int *")
lib.darshan_log_get_mounts(fd, mnts, n)
names, k = ffi.new("struct darshan_name_record **"), ffi.new("int *")
lib.darshan_log_get_name_records(fd, names, k)
mods, nm = ffi.new("struct darshan_mod_info **"), ffi.new("int *")
lib.darshan_log_get_modules(fd, mods, nm)
records = 0
for i in range(nm[0]):
    buf = ffi.new("void **")
    while lib.darshan_log_get_record(fd, mods[0][i].idx, buf) > 0:
        records += 1
        lib.darshan_free(buf[0])
        buf[0] = ffi.NULL
lib.darshan_log_close(fd)

con = duckdb.connect()
for ddl in spec["ddl"]:
    con.execute(ddl)
con.execute("BEGIN TRANSACTION")
for table, path in spec["tables"]:
    con.execute(f'INSERT INTO "{table}" SELECT * FROM read_parquet($p)', {"p": path})
con.execute("COMMIT")
out = Table(title=f"{records} records")
out.add_column("statement")
out.add_column("rows", justify="right")
for i, (sql, params) in enumerate(spec["statements"]):
    out.add_row(str(i), str(len(con.execute(sql, params).fetchall())))
with open(os.devnull, "w") as null:
    Console(file=null, width=100).print(out)
"""


def _floor_spec(log: Path, work: Path, timeout: float) -> Path | None:
    """Record the statements of iochar's summary of ``log`` and its tables (see --floor)."""
    work.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(
        [sys.executable, "-c", _CAPTURE, str(log), str(work)],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )  # fmt: skip
    if r.returncode != 0:
        print(f"  floor: capture failed: {(r.stderr.strip().splitlines() or [''])[-1][:100]}")
        return None
    return work / "floor.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command per log (3)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run (300)")
    ap.add_argument("--log", action="append", default=None, help="only this log (repeatable)")
    ap.add_argument("--stages", action="store_true", help="also where iochar's time goes")
    ap.add_argument("--no-compile", action="store_true", help="leave iochar's bytecode as it is")
    ap.add_argument(
        "--floor",
        action="store_true",
        help="also the least a summary without pandas could take (see above)",
    )
    args = ap.parse_args(argv)
    if not args.no_compile:
        import iochar

        pkg = Path(iochar.__file__).resolve().parent
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(pkg)], check=False,
                       stdout=subprocess.DEVNULL)  # fmt: skip

    logs = (
        [Path(p) for p in args.log]
        if args.log
        else sorted((ROOT / "data" / "darshan").rglob("*.darshan"))
    )
    # the console scripts beside this interpreter: no version-manager shim is timed
    bindir = Path(sys.executable).parent
    drishti = str(bindir / "drishti") if (bindir / "drishti").exists() else shutil.which("drishti")
    if drishti is None:
        print("drishti is not installed (pip install drishti-io): iochar times only")
    iochar = [sys.executable, "-m", "iochar.cli", "summary"]
    print(f"{len(logs)} logs, median of {args.repeat} runs each, wall time [s]")
    stack_cmd = [sys.executable, "-c", "import duckdb, pandas, rich.console"]
    head = f"{'log':<44} {'iochar':>8} {'drishti':>8} {'ratio':>6} {'stack':>6}"
    head += f" {'floor':>6}  note" if args.floor else "  note"
    print(head)
    print("-" * len(head))
    within = judged = below = under_floor = 0
    tmp = tempfile.TemporaryDirectory(prefix="iochar-floor-") if args.floor else None
    for n_log, log in enumerate(logs):
        mine: list[float] = []
        theirs: list[float] = []
        notes: list[str] = []
        stack: list[float] = []
        low: list[float] = []
        spec = None
        if tmp is not None:
            spec = _floor_spec(log, Path(tmp.name) / str(n_log), args.timeout)
        for k in range(args.repeat):
            stack.append(_run(stack_cmd, args.timeout)[0])
            if spec is not None:
                wall, rc, last = _run([sys.executable, "-c", _FLOOR, str(log), str(spec)],
                                      args.timeout)  # fmt: skip
                low.append(wall if rc == 0 else math.nan)
                if rc != 0 and not any(n.startswith("floor") for n in notes):
                    notes.append(f"floor exit {rc}: {last[:60]}")
            order = ("i", "d") if k % 2 == 0 else ("d", "i")
            for who in order:
                if who == "i":
                    wall, rc, last = _run([*iochar, str(log)], args.timeout)
                    mine.append(wall)
                    if rc != 0 and not any(n.startswith("iochar") for n in notes):
                        notes.append(f"iochar exit {rc}: {last[:60]}")
                elif drishti is not None:
                    wall, rc, last = _run([drishti, str(log)], args.timeout)
                    theirs.append(wall)
                    if rc != 0 and not any(n.startswith("drishti") for n in notes):
                        notes.append(f"drishti exit {rc}: {last[:60]}")
        t_i = statistics.median(mine)
        t_s = statistics.median(stack)
        t_low = statistics.median(low) if low else math.nan
        name = str(log.relative_to(ROOT)) if log.is_relative_to(ROOT) else str(log)
        name = name.removeprefix("data/darshan/")
        if len(name) > 44:
            name = "…" + name[-43:]
        cols = f"{t_s:>6.2f}" + (f" {t_low:>6.2f}" if args.floor else "")
        if theirs:
            t_d = statistics.median(theirs)
            ratio = t_i / t_d
            judged += 1
            within += ratio <= 1.0
            if t_d <= t_s:
                below += 1
                notes.append("drishti's whole run <= importing the stack")
            if t_d <= t_low:
                under_floor += 1
                notes.append("drishti's whole run <= the floor")
            print(f"{name:<44} {t_i:>8.2f} {t_d:>8.2f} {ratio:>6.2f} {cols}  {'; '.join(notes)}")
        else:
            print(f"{name:<44} {t_i:>8.2f} {'-':>8} {'-':>6} {cols}  {'; '.join(notes)}")
        if args.stages:
            print(_stages(log, args.timeout))
    if tmp is not None:
        tmp.cleanup()
    if judged:
        print(f"target (iochar <= drishti per log): {within} of {judged} logs")
        if below:
            print(
                f"on {below} log(s) Drishti's whole run takes no longer than importing "
                "the stack an iochar summary is built on (column stack): DuckDB (the "
                "store), pandas (every analysis and insights.run returns DataFrames, "
                "issue 19 item 4) and rich (the terminal summary, item 3)"
            )
        if args.floor:
            print(
                f"on {under_floor} log(s) Drishti's whole run takes no longer than the floor "
                "(column floor): a fresh process that only reads the log with libdarshan-util, "
                "inserts its rows and runs the summary's statements, without pandas and "
                "without any of iochar's Python"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
