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
command failed (Drishti raises on some real logs: its exit status and last line). When
``drishti`` is not installed the iochar times are printed alone and the target is not
judged. The last line says on how many logs the target holds.

Run: ``python benchmarks/bench_summary.py [--repeat 3] [--timeout 300] [--log PATH]...``
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command per log (3)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run (300)")
    ap.add_argument("--log", action="append", default=None, help="only this log (repeatable)")
    args = ap.parse_args(argv)

    logs = (
        [Path(p) for p in args.log]
        if args.log
        else sorted((ROOT / "data" / "darshan").rglob("*.darshan"))
    )
    drishti = shutil.which("drishti")
    if drishti is None:
        print("drishti is not installed (pip install drishti-io): iochar times only")
    iochar = [sys.executable, "-m", "iochar.cli", "summary"]
    print(f"{len(logs)} logs, median of {args.repeat} runs each, wall time [s]")
    head = f"{'log':<44} {'iochar':>8} {'drishti':>8} {'ratio':>6}  note"
    print(head)
    print("-" * len(head))
    within = judged = 0
    for log in logs:
        mine: list[float] = []
        theirs: list[float] = []
        notes: list[str] = []
        for k in range(args.repeat):
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
        name = str(log.relative_to(ROOT)) if log.is_relative_to(ROOT) else str(log)
        name = name.removeprefix("data/darshan/")
        if len(name) > 44:
            name = "…" + name[-43:]
        if theirs:
            t_d = statistics.median(theirs)
            ratio = t_i / t_d
            judged += 1
            within += ratio <= 1.0
            print(f"{name:<44} {t_i:>8.2f} {t_d:>8.2f} {ratio:>6.2f}  {'; '.join(notes)}")
        else:
            print(f"{name:<44} {t_i:>8.2f} {'-':>8} {'-':>6}  {'; '.join(notes)}")
    if judged:
        print(f"target (iochar <= drishti per log): {within} of {judged} logs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
