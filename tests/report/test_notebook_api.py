"""Notebooks teach the API: a user copies cells, so the analysis and the tables are
called visibly from :mod:`iochar.analyze` and :mod:`iochar.plot`, and :mod:`iochar.narrate`
only writes prose (every ``narrate.<module>.<function>`` a cell calls returns ``str``).
"""

from __future__ import annotations

import ast
import importlib
import inspect

import nbformat
import pytest

from iochar import report

BOOKS = report.available()


def _dotted(node: ast.expr) -> str | None:
    """``narrate.apps.job_choice`` for that attribute chain, None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _names_called(source: str) -> list[str]:
    """The dotted names called in ``source`` (``plot.tables.table1_view``)."""
    calls = (_dotted(n.func) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call))
    return [n for n in calls if n is not None]


def narrate_calls(source: str) -> list[str]:
    """Every ``narrate.…`` function called in ``source``, as written (``narrate.apps.x``)."""
    return [n for n in _names_called(source) if n.startswith("narrate.")]


def narrate_imports(source: str) -> list[str]:
    """Imports that would call narrate under another name (``from iochar.narrate import apps``)."""
    found = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("iochar.narrate"):
            found.append(n.module)
        elif isinstance(n, ast.ImportFrom) and n.module == "iochar":
            found += [f"iochar.{a.name} as {a.asname}" for a in n.names if a.asname]
        elif isinstance(n, ast.Import):
            found += [a.name for a in n.names if a.name.startswith("iochar.narrate")]
    return found


def returns_str(name: str) -> bool:
    """Whether ``narrate.<module>.<function>`` (or ``narrate.<function>``) returns ``str``."""
    *mods, fn = name.split(".")
    obj = getattr(importlib.import_module("iochar." + ".".join(mods)), fn)
    return inspect.signature(obj, eval_str=True).return_annotation is str


def _code(book) -> list[str]:
    nb = nbformat.read(str(book), as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("book", BOOKS, ids=lambda p: p.stem)
def test_cells_call_narrate_only_for_prose(book):
    calls = [name for src in _code(book) for name in narrate_calls(src)]
    assert calls, f"{book.stem} writes no narrative"
    not_prose = sorted({name for name in calls if not returns_str(name)})
    assert not not_prose, f"{book.stem} calls narrate for more than prose: {not_prose}"
    hidden = [imp for src in _code(book) for imp in narrate_imports(src)]
    assert not hidden, f"{book.stem} imports narrate under another name: {hidden}"


@pytest.mark.parametrize("book", BOOKS, ids=lambda p: p.stem)
def test_cells_call_analyze_and_plot_visibly(book):
    src = "\n".join(_code(book))
    assert "from iochar.analyze import " in src
    assert any(n.startswith("plot.") for n in _names_called(src)), book.stem


def test_the_check_sees_a_computation_called_through_narrate():
    src = (
        "job = narrate.apps.pick_job(table1, job_id)\n"
        "nb.say(narrate.apps.job_choice(table1, job, job_id))\n"
        "narrate.fmt_bytes(3)\n"
    )
    calls = sorted(narrate_calls(src))
    assert calls == ["narrate.apps.job_choice", "narrate.apps.pick_job", "narrate.fmt_bytes"]
    assert [returns_str(c) for c in calls] == [True, False, True]
    assert narrate_imports("from iochar.narrate import apps\nfrom iochar import narrate") == [
        "iochar.narrate"
    ]
