"""Run every benchmark script in this folder, one after another.

python benchmarks/run_all.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    status = 0
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        status |= subprocess.call([sys.executable, str(script)])
    return status


if __name__ == "__main__":
    sys.exit(main())
