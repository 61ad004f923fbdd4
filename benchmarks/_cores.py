"""Time a parse on every core in a fresh child process (shared by the text-loader benchmarks).

The one-core figure of ``bench_iostat.py`` and ``bench_brw_stats.py`` runs with the thread
limits those scripts set before anything is imported (polars fixes its thread count when it
loads), so the every-core figure (issue 18) runs in a child with those limits taken out of
its environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: Variables that pin a process's parse to fewer threads than its cores.
THREAD_LIMITS = (
    "POLARS_MAX_THREADS",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "IOCHAR_PARSE_THREADS",
)


def all_cores(script: str, path: Path, repeat: int) -> tuple[float, float]:
    """Best wall time and its CPU time [s] of ``script --child-all-cores PATH``'s parse.

    The child prints the two numbers; it runs without :data:`THREAD_LIMITS`.
    """
    env = {k: v for k, v in os.environ.items() if k not in THREAD_LIMITS}
    out = subprocess.run(
        [sys.executable, script, "--child-all-cores", str(path), "--repeat", str(repeat)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(out[0]), float(out[1])
