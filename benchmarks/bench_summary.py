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

Run: ``python benchmarks/bench_summary.py [--repeat 3] [--timeout 300] [--log PATH]...
[--stages] [--no-compile]``
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command per log (3)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run (300)")
    ap.add_argument("--log", action="append", default=None, help="only this log (repeatable)")
    ap.add_argument("--stages", action="store_true", help="also where iochar's time goes")
    ap.add_argument("--no-compile", action="store_true", help="leave iochar's bytecode as it is")
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
    floor_cmd = [sys.executable, "-c", "import duckdb, pandas, rich.console"]
    head = f"{'log':<44} {'iochar':>8} {'drishti':>8} {'ratio':>6} {'stack':>6}  note"
    print(head)
    print("-" * len(head))
    within = judged = below = 0
    for log in logs:
        mine: list[float] = []
        theirs: list[float] = []
        notes: list[str] = []
        floor: list[float] = []
        for k in range(args.repeat):
            floor.append(_run(floor_cmd, args.timeout)[0])
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
        t_f = statistics.median(floor)
        name = str(log.relative_to(ROOT)) if log.is_relative_to(ROOT) else str(log)
        name = name.removeprefix("data/darshan/")
        if len(name) > 44:
            name = "…" + name[-43:]
        if theirs:
            t_d = statistics.median(theirs)
            ratio = t_i / t_d
            judged += 1
            within += ratio <= 1.0
            if t_d <= t_f:
                below += 1
                notes.append("drishti's whole run <= importing the stack")
            print(
                f"{name:<44} {t_i:>8.2f} {t_d:>8.2f} {ratio:>6.2f} {t_f:>6.2f}  {'; '.join(notes)}"
            )
        else:
            print(f"{name:<44} {t_i:>8.2f} {'-':>8} {'-':>6} {t_f:>6.2f}  {'; '.join(notes)}")
        if args.stages:
            print(_stages(log, args.timeout))
    if judged:
        print(f"target (iochar <= drishti per log): {within} of {judged} logs")
        if below:
            print(
                f"on {below} log(s) Drishti's whole run takes no longer than importing "
                "the stack an iochar summary is built on (column stack): DuckDB (the "
                "store), pandas (every analysis and insights.run returns DataFrames, "
                "issue 19 item 4) and rich (the terminal summary, item 3)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
