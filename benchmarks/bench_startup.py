"""Start-up cost of the ``iochar`` command: wall time and what it imports (issue 18, item 4).

Every command used to import pandas, polars, pyarrow and every loader before any
work (0.34 s; ``iochar --version`` took about 0.6 s). This script runs, each in a
fresh process, best wall time of ``--repeat``:

- ``python -c pass`` (the interpreter's own start, for scale),
- ``iochar --version``, ``iochar --help`` and ``iochar load --help`` (the console
  script installed beside this interpreter, so no version-manager shim is timed),
- sniffing the kind of each real capture in ``data/`` (``iochar.load.sniff``),

and, for each, the modules it imported (from ``sys.modules`` at exit): how many,
which of numpy, pandas, polars, pyarrow, duckdb, and which loader modules, plus
the five largest cumulative imports from ``python -X importtime``. Prints PASS or
FAIL for ``iochar --version`` against ``--target`` seconds (0.15 s).

``--src DIR`` runs another checkout of the package (``PYTHONPATH=DIR``), e.g. the
tree before a change: ``git archive <commit> iochar | tar -x -C /tmp/before``.

Run: ``python benchmarks/bench_startup.py [--repeat 10] [--target 0.15] [--src DIR]``
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "pandas", "polars", "pyarrow", "duckdb")
#: run the probes outside the checkout: ``python -c`` puts the working folder first
#: on sys.path, which would shadow ``--src``
CWD = tempfile.mkdtemp(prefix="iochar-bench-startup-")
atexit.register(shutil.rmtree, CWD, True)

_MODULES = """
import json, sys
argv = {argv!r}
try:
    if argv == "sniff":
        from iochar import load
        for p in {paths!r}:
            load.sniff(p)
    else:
        from iochar.cli import main
        main(argv)
except SystemExit:
    pass
sys.stdout.flush()
sys.stderr.write("\\n" + json.dumps(sorted(sys.modules)))
"""


def _captures() -> list[str]:
    """The real captures of every kind bundled in ``data/`` (``DEMO_PATTERNS``)."""
    from iochar.datasets import DEMO_PATTERNS

    return [str(p) for pat, _ in DEMO_PATTERNS for p in sorted((ROOT / "data").glob(pat))]


def _sniff_code(paths: list[str]) -> str:
    return f"from iochar import load\nfor p in {paths!r}:\n    load.sniff(p)\n"


def _entry() -> list[str]:
    """The ``iochar`` console script of this interpreter (not a PATH shim), or ``-m``."""
    script = Path(sys.executable).parent / "iochar"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "iochar.cli"]


def _best(cmd: list[str], env: dict[str, str], repeat: int) -> float:
    """Best wall time of ``repeat`` runs of ``cmd`` [s]."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, cwd=CWD, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t0)
    return best


def _modules(what, env: dict[str, str], paths: list[str]) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", _MODULES.format(argv=what, paths=paths)],
        env=env,
        cwd=CWD,
        capture_output=True,
        text=True,
    )
    return json.loads(proc.stderr.strip().splitlines()[-1])


def _importtime(code: str, env: dict[str, str], top: int = 5) -> list[tuple[int, str]]:
    """The ``top`` largest top-level cumulative import times [us] of ``code``."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        env=env,
        cwd=CWD,
        capture_output=True,
        text=True,
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cum, name = line.split("|", 2)
        if name.startswith(" ") and not name.startswith("  "):  # top-level imports only
            try:
                rows.append((int(cum), name.strip()))
            except ValueError:
                continue
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--target", type=float, default=0.15, help="iochar --version seconds")
    ap.add_argument("--src", default=None, help="run the iochar package found in this folder")
    args = ap.parse_args()

    env = dict(os.environ)
    if args.src:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [args.src, env.get("PYTHONPATH")]))
    entry = _entry()
    shim = shutil.which("iochar")
    print(f"iochar start-up, best of {args.repeat} (entry: {' '.join(entry)})")
    if args.src:
        print(f"  package from {args.src}")

    base = _best([sys.executable, "-c", "pass"], env, args.repeat)
    print(f"  {'python -c pass':<22} {base:6.3f} s")
    cases = [
        ("iochar --version", ["--version"]),
        ("iochar --help", ["--help"]),
        ("iochar load --help", ["load", "--help"]),
        ("sniff data/ captures", "sniff"),  # each kind's real captures, in one process
    ]
    version_s = None
    paths = _captures()
    for label, argv in cases:
        if argv == "sniff":
            cmd = [sys.executable, "-c", _sniff_code(paths)]
        else:
            cmd = [*entry, *argv]
        wall = _best(cmd, env, args.repeat)
        if argv == ["--version"]:
            version_s = wall
        mods = _modules(argv, env, paths)
        heavy = sorted({m.split(".")[0] for m in mods if m.split(".")[0] in HEAVY})
        loaders = sorted(
            m for m in mods if m.startswith("iochar.load.") and not m.startswith("iochar.load._")
        )
        print(
            f"  {label:<22} {wall:6.3f} s ({wall - base:+.3f} s over python)  "
            f"{len(mods)} modules; heavy: {', '.join(heavy) or 'none'}; "
            f"loaders: {len(loaders)}{' (' + ', '.join(loaders) + ')' if loaders else ''}"
        )
        code = _sniff_code(paths)
        if argv != "sniff":
            code = f"from iochar.cli import main\ntry:\n    main({argv!r})\n"
            code += "except SystemExit:\n    pass\n"
        top = _importtime(code, env)
        print("      largest imports: " + ", ".join(f"{n} {us / 1e3:.1f} ms" for us, n in top))
    if shim and Path(shim).resolve() != Path(entry[0]).resolve():
        wall = _best([shim, "--version"], env, args.repeat)
        print(f"  (PATH's {shim} --version: {wall:.3f} s, a version-manager shim included)")
    ok = version_s is not None and version_s <= args.target
    print(
        f"iochar --version {version_s:.3f} s, target <= {args.target:.2f} s: "
        f"{'PASS' if ok else 'FAIL'}"
    )


if __name__ == "__main__":
    main()
