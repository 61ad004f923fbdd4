"""``iochar demo`` end to end: build the demo data, load it, run every notebook.

Target (issue 8): under 2 minutes on 2 cores. Runs the command as a user does (a
fresh process, a fresh output folder, a fresh demo cache), prints the wall-clock time
of the whole run and of each report as the command printed them.

    python benchmarks/bench_demo.py [--target 120]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--target", type=float, default=120.0, help="seconds (default 120)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as tmp:
        env = {**os.environ, "IOCHAR_CACHE": os.path.join(tmp, "cache")}
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "iochar.cli", "demo", "--out", os.path.join(tmp, "demo")],
            capture_output=True,
            text=True,
            env=env,
        )
        wall = time.perf_counter() - t0
    for line in proc.stdout.splitlines():
        if line.startswith(("data ready", "  /", "done in", "running")):
            print(line.replace(tmp, "$TMP"))
    verdict = "PASS" if proc.returncode == 0 and wall <= args.target else "FAIL"
    print(
        f"iochar demo: exit {proc.returncode}, {wall:.1f} s wall (target <= {args.target:.0f} s) "
        f"{verdict}; load average {os.getloadavg()[0]:.2f}"
    )
    if proc.returncode:
        print(proc.stderr[-2000:], file=sys.stderr)


if __name__ == "__main__":
    main()
