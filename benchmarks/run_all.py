"""Run every benchmark script in this folder, one after another.

python benchmarks/run_all.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    status = 0
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        args = []
        if script.name == "bench_darshan_collection.py":  # needs the collection's logs
            if not os.environ.get("DARSHAN_LOGS"):
                print("skipped: set DARSHAN_LOGS to a clone of darshan-hpc/darshan-logs")
                continue
            args = ["--git", os.environ["DARSHAN_LOGS"], "--agree"]
        status |= subprocess.call([sys.executable, str(script), *args])
    return status


if __name__ == "__main__":
    sys.exit(main())
