"""Every public function and method documents each of its parameters (numpydoc).

The scikit-learn meta-test idea: walk the public API instead of trusting
each author to remember.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import iochar
from iochar import analyze, datasets, errors, load, plot, result, schema, store
from iochar.datasets import synth
from iochar.plot import tables as plot_tables

#: every public module of iochar.analyze, found rather than listed
ANALYZE = [
    importlib.import_module(f"iochar.analyze.{m.name}")
    for m in pkgutil.iter_modules(analyze.__path__)
    if not m.name.startswith("_")
]


def _public():
    mods = [
        iochar,
        store,
        load,
        schema,
        datasets,
        errors,
        plot,
        plot_tables,
        result,
        synth,
        *ANALYZE,
    ]
    seen = set()
    for mod in mods:
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if id(obj) in seen or not callable(obj):
                continue
            seen.add(id(obj))
            yield f"{mod.__name__}.{name}", obj
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                for mname, meth in vars(obj).items():
                    if mname.startswith("_") or not callable(meth):
                        continue
                    yield f"{mod.__name__}.{name}.{mname}", meth


PUBLIC = sorted(_public(), key=lambda x: x[0])


@pytest.mark.parametrize(("qualname", "obj"), PUBLIC, ids=[q for q, _ in PUBLIC])
def test_documented(qualname, obj):
    doc = inspect.getdoc(obj)
    assert doc and doc.strip(), f"{qualname} has no docstring"
    if inspect.isclass(obj) and not issubclass(obj, BaseException):
        target = obj.__init__ if "__init__" in vars(obj) else None
    else:
        target = obj
    if target is None or not inspect.isfunction(target):
        return
    params = [
        p
        for p in inspect.signature(target).parameters.values()
        if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if not params:
        return
    if "Parameters" not in doc:
        # a one-line docstring may name its parameters in the text
        missing = [p.name for p in params if not re.search(rf"\b{p.name}\b", doc)]
        assert not missing, f"{qualname}: parameters {missing} not documented"
        return
    section = doc.split("Parameters", 1)[1]
    # numpydoc: "name : type" or "a, b : type" at the start of a line
    named = r"^(?:\w+, )*{}(?:, \w+)* :"
    missing = [p.name for p in params if not re.search(named.format(p.name), section, re.M)]
    assert not missing, f"{qualname}: parameters {missing} missing from Parameters"


def test_dir_lists_the_subpackages_without_importing_them():
    """Issue 19 item 5: ``dir(iochar)`` shows analyze, plot and synth, imported on use."""
    import subprocess
    import sys

    code = (
        "import sys, iochar\n"
        "names = dir(iochar)\n"
        "print(all(n in names for n in ('analyze', 'plot', 'synth', 'connect')),"
        " 'iochar.analyze' in sys.modules, 'pandas' in sys.modules)\n"
        "import iochar.analyze\n"
        "print(iochar.analyze.__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "False", "iochar.analyze"]
