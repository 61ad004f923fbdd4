"""The light kind table (iochar.load._kinds) against the loaders themselves (issue 18).

Sniffing answers from a table that imports no parser; these tests keep that
table equal to what the loader modules register (whose ``sniff`` methods call
the table's rules), check that no real capture bundled in data/ (nor its
BOM/CRLF form) is claimed by two kinds, and check in a fresh interpreter that naming a kind imports
no loader module and none of pandas, polars or duckdb.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import pytest

from iochar import load
from iochar.datasets import DEMO_PATTERNS, data_dir
from iochar.errors import UnknownKindError
from iochar.load import _kinds
from iochar.load._text import read_head, text_head


def _real_inputs() -> list:
    root = data_dir()
    out = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.stat().st_size == 0:
            continue
        out.append(pytest.param(path, id=str(path.relative_to(root))))
    return out


REAL = _real_inputs()


def test_table_lists_what_every_loader_module_registers():
    for info in pkgutil.iter_modules(load.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"iochar.load.{info.name}")
    assert list(load.REGISTRY) and set(load.REGISTRY) == {k.kind for k in _kinds.KINDS}
    assert set(load.BENCH) == {k.kind for k in _kinds.BENCH_KINDS}
    for row in _kinds.KINDS:
        loader = load.REGISTRY[row.kind]
        mod = type(loader).__module__
        assert mod == row.module or mod.startswith(row.module + "."), (row.kind, mod)
        assert loader.description == row.description, row.kind
        assert tuple(loader.suffixes) == row.suffixes, row.kind
    for row in _kinds.BENCH_KINDS:
        assert load.BENCH[row.kind].description == row.description


@pytest.mark.parametrize("path", REAL)
def test_no_real_input_is_claimed_by_two_kinds(path):
    # loaders' own sniff methods call the table's rules (one rule per kind); what
    # must hold is that the rules never both claim a real input, in any form
    raw = read_head(path)
    for head in {raw, text_head(raw), b"\xef\xbb\xbf" + raw.replace(b"\n", b"\r\n")}:
        claims = [row.kind for row in _kinds.KINDS if row.sniff(head)]
        assert len(claims) <= 1, (path, claims)
        for kind in claims:
            assert load.get_loader(kind).sniff(head), (kind, path)


@pytest.mark.parametrize(("pattern", "kind"), DEMO_PATTERNS)
def test_each_fixture_is_sniffed_as_its_kind(pattern, kind):
    paths = sorted(data_dir().glob(pattern))
    assert paths
    for path in paths:
        assert load.sniff(path) == kind, path


def test_sniffing_imports_no_other_loader_nor_dataframe_library():
    paths = [str(p) for pattern, _ in DEMO_PATTERNS for p in sorted(data_dir().glob(pattern))]
    code = (
        "import json, sys\n"
        "from iochar import load\n"
        f"kinds = [load.sniff(p) for p in {paths!r}]\n"
        "mods = sorted(m for m in sys.modules if m.startswith(('iochar', 'pandas', 'polars',"
        " 'duckdb')))\n"
        "print(json.dumps({'kinds': kinds, 'mods': mods}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    got = json.loads(out.stdout)
    assert set(got["kinds"]) == {k for _, k in DEMO_PATTERNS}
    allowed = {"iochar", "iochar.errors", "iochar.load", "iochar.load._base"}
    allowed |= {"iochar.load._kinds", "iochar.load._text"}
    assert set(got["mods"]) <= allowed, set(got["mods"]) - allowed


def test_get_loader_imports_only_the_module_of_its_kind():
    code = (
        "import json, sys\n"
        "from iochar import load\n"
        "load.get_loader('diskstats')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('iochar.load.')"
        " and not m.startswith('iochar.load._'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(out.stdout) == ["iochar.load.diskstats"]


def test_unknown_kind_lists_every_kind_without_importing_them():
    with pytest.raises(UnknownKindError) as err:
        load.get_loader("no-such-kind")
    assert err.value.tried == tuple(load.kinds())
