"""Charts in VS Code, offline (issue 16, item 1).

VS Code itself cannot be installed here (no registry carries it), so this checks the
two things that decide what a VS Code user sees, each against VS Code's own source:

1. **Which output VS Code shows.** For an output with several MIME types, VS Code's
   notebook editor sorts them by the user's ``notebook.displayOrder`` (empty by
   default) and then by ``NOTEBOOK_DISPLAY_ORDER``, where a type the list does not
   name sorts first (``indexOf`` is -1; microsoft/vscode,
   src/vs/workbench/contrib/notebook/common/notebookCommon.ts,
   ``MimeTypeDisplayOrder.sort``). It shows the first type a renderer takes; the
   Jupyter extension's "Jupyter Vega Renderer" takes Vega-Lite v3-v5
   (microsoft/vscode-notebook-renderers, package.json).
2. **That the renderer draws it with no network.** That renderer bundles vega 6,
   vega-lite 6 and vega-embed 7 and calls ``vegaEmbed`` with the output's
   ``embed_options`` (src/client/vegaRenderer.ts); the ``vscode_draw`` fixture does
   the same with the same libraries from npm, in headless Chromium where nothing but
   loopback resolves.

Every chart of every notebook, run as a user runs it (not as a report), is drawn so.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from iochar.report import notebook as nb
from iochar.report.browser import chromium

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("0*.ipynb"))

#: microsoft/vscode notebookCommon.ts: the default display order.
NOTEBOOK_DISPLAY_ORDER = (
    "application/json",
    "application/javascript",
    "text/html",
    "image/svg+xml",
    "text/latex",
    "text/markdown",
    "image/png",
    "image/jpeg",
    "text/plain",
)
#: microsoft/vscode-notebook-renderers package.json: the MIME types of its Vega renderer.
VSCODE_VEGA_MIMES = (
    "application/vnd.vega.v5+json",
    "application/vnd.vegalite.v3+json",
    "application/vnd.vegalite.v4+json",
    "application/vnd.vegalite.v5+json",
)
#: What a tooltip must never read.
LEAK = re.compile(r"\b(null|NaN|NaT|None|undefined|Infinity|nan|inf)\b|<NA>")

needs_chromium = pytest.mark.skipif(
    chromium() is None, reason="Chromium is not installed (apt-get install chromium)"
)


def vscode_pick(mimes, user_order=()) -> str:
    """The MIME type VS Code shows of an output with these types (see module docstring)."""
    ordered = [m for pattern in user_order for m in mimes if m == pattern]
    rest = [m for m in mimes if m not in ordered]
    rest.sort(key=lambda m: NOTEBOOK_DISPLAY_ORDER.index(m) if m in NOTEBOOK_DISPLAY_ORDER else -1)
    return (ordered + rest)[0]


def test_vscode_picks_the_interactive_view(monkeypatch):
    import altair as alt
    import pandas as pd

    monkeypatch.delenv(nb.REPORT_ENV, raising=False)
    chart = alt.Chart(pd.DataFrame({"x": [1, 2], "y": [3, 4]})).mark_bar().encode(x="x:O", y="y:Q")
    bundle, _ = nb._offline_renderer(chart.to_dict())
    assert vscode_pick(list(bundle)) == nb.VEGALITE_MIME
    assert nb.VEGALITE_MIME in VSCODE_VEGA_MIMES
    # the rule itself, on what altair's own "html" renderer would give: the HTML wins
    assert vscode_pick(["text/html", "text/plain"]) == "text/html"
    # a user who puts SVG first in notebook.displayOrder gets the static view
    assert vscode_pick(list(bundle), user_order=["image/svg+xml"]) == "image/svg+xml"


@pytest.fixture(scope="module")
def demo_cache(tmp_path_factory):
    """The demo database the notebooks open by default, built once for this module."""
    import os

    from iochar.datasets import demo

    cache = tmp_path_factory.mktemp("cache")
    old = os.environ.get("IOCHAR_CACHE")
    os.environ["IOCHAR_CACHE"] = str(cache)
    try:
        demo.cached_database()
        yield cache
    finally:
        if old is None:
            os.environ.pop("IOCHAR_CACHE", None)
        else:
            os.environ["IOCHAR_CACHE"] = old


@pytest.mark.notebooks
@needs_chromium
@pytest.mark.parametrize("book", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_chart_draws_in_vscodes_renderer_offline(
    book, demo_cache, vscode_draw, tmp_path, monkeypatch
):
    from nbconvert.preprocessors import ExecutePreprocessor

    monkeypatch.setenv("IOCHAR_CACHE", str(demo_cache))
    monkeypatch.delenv(nb.REPORT_ENV, raising=False)  # as a user runs it, not a report
    run = nbformat.read(str(book), as_version=4)
    ExecutePreprocessor(timeout=600, kernel_name="python3").preprocess(
        run, {"metadata": {"path": str(tmp_path)}}
    )
    outputs = [
        o
        for cell in run.cells
        if cell.cell_type == "code"
        for o in cell.get("outputs", [])
        if o.get("output_type") in ("display_data", "execute_result")
        and any("vegalite" in m for m in o.get("data", {}))
    ]
    assert outputs, f"{book.name} shows no chart"
    picked = [vscode_pick(list(o["data"])) for o in outputs]
    assert set(picked) == {nb.VEGALITE_MIME}, picked
    draws = [
        (o["data"][nb.VEGALITE_MIME], o["metadata"][nb.VEGALITE_MIME].get("embed_options", {}))
        for o in outputs
    ]
    shot = tmp_path / f"vscode-{book.stem}.png"
    got = vscode_draw(draws, shot)
    where = f"{book.name}, screenshot {shot}"
    assert got["status"] == "drawn", (where, got["status"])
    assert all(m > 0 for m in got["marks"]), (where, got["marks"])
    assert got["errors"] == [], (where, got["errors"][:5])
    assert got["requests_out"] == [], (where, got["requests_out"][:5])
    leaks = [
        (i, title, text)
        for i, tips in enumerate(got["tooltips"])
        for tip in tips
        for title, text in (tip.items() if isinstance(tip, dict) else [("", tip)])
        if LEAK.search(str(text))
    ]
    assert leaks == [], (where, leaks[:5])
    assert any(got["tooltips"]), where  # the charts have tooltips to check
