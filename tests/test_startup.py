"""What a command imports before it does any work (issue 18, item 4).

Every command used to import pandas, polars, pyarrow and every loader: 0.34 s
before any work. ``iochar --version``, ``iochar --help``, ``iochar load --help``
and ``import iochar`` must import none of them; the times are printed by
benchmarks/bench_startup.py (speed targets live there, not in tests).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numpy", "pandas", "polars", "pyarrow", "duckdb", "tqdm", "rich")

_RUN = """
import json, sys
argv = {argv!r}
try:
    if argv is None:
        import iochar
        iochar.connect, iochar.InputError, iochar.UnknownKindError, iochar.__version__
    else:
        from iochar.cli import main
        main(argv)
except SystemExit:
    pass
sys.stdout.flush()
sys.stderr.write("\\n" + json.dumps(sorted(sys.modules)))
"""


def _modules(argv: list[str] | None) -> tuple[str, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _RUN.format(argv=argv)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.stdout, json.loads(proc.stderr.strip().splitlines()[-1])


def _loaders(mods: list[str]) -> list[str]:
    return [m for m in mods if m.startswith("iochar.load.") and not m.startswith("iochar.load._")]


@pytest.mark.parametrize(
    "argv", [None, ["--version"], ["--help"], ["load", "--help"], ["sql", "--help"]]
)
def test_startup_imports_no_dataframe_library_nor_loader(argv):
    out, mods = _modules(argv)
    heavy = [m for m in mods if m.split(".")[0] in HEAVY]
    assert heavy == [], heavy
    assert _loaders(mods) == []
    if argv == ["--version"]:
        assert out.startswith("iochar ")
    if argv == ["load", "--help"]:
        # the kinds are listed from the light table, with their loaders' descriptions
        from iochar import load

        for kind in load.kinds():
            assert f"  {kind} " in out
            assert load.get_loader(kind).description in out


def test_lazy_public_names_still_resolve():
    import iochar
    from iochar.store import LoadResult, Store

    assert iochar.Store is Store and iochar.LoadResult is LoadResult
    with iochar.connect(":memory:") as db:
        assert "ops" in db.tables()
    with pytest.raises(AttributeError):
        iochar.no_such_name  # noqa: B018
