"""Shared fixtures: data paths, an in-memory store, optional-tool markers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The project's bundled fixtures (real tool output; see data/README.md).
DATA_DIR = ROOT / "data"

has_strace = shutil.which("strace") is not None
requires_strace = pytest.mark.skipif(not has_strace, reason="strace is not installed")

try:
    import darshan  # noqa: F401

    has_darshan = True
except ImportError:
    has_darshan = False
requires_darshan = pytest.mark.skipif(not has_darshan, reason="the darshan package is missing")


@pytest.fixture
def store():
    """A fresh in-memory store."""
    import iochar

    db = iochar.connect(":memory:")
    yield db
    db.close()


@pytest.fixture
def global_random_seed() -> int:
    """Seed for randomized tests; set IOCHAR_TESTS_SEED to vary it."""
    return int(os.environ.get("IOCHAR_TESTS_SEED", "42"))


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory):
    """``iochar demo`` run once, as a user would (a subprocess), for the report tests.

    Returns the output folder, the exit status and the combined output. Every notebook
    in notebooks/ is executed on the bundled data by this one run.
    """
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("demo") / "demo-report"
    env = {**os.environ, "IOCHAR_CACHE": str(tmp_path_factory.mktemp("cache"))}
    proc = subprocess.run(
        [sys.executable, "-m", "iochar.cli", "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    return out, proc.returncode, proc.stdout + proc.stderr


#: The Vega libraries VS Code's notebook renderers bundle (microsoft/vscode-notebook-
#: renderers, package.json: vega ^6.2.0, vega-lite ^6.4.1, vega-embed ^7.1.0).
VSCODE_VEGA = ("vega@^6.2.0", "vega-lite@^6.4.1", "vega-embed@^7.1.0")


@pytest.fixture(scope="session")
def vega_js(tmp_path_factory):
    """A folder holding ``vega.min.js``, ``vega-lite.min.js`` and ``vega-embed.min.js``.

    Installed from the npm registry (:data:`VSCODE_VEGA`), so a chart can be drawn the
    way VS Code draws it, in a page that loads nothing from the network. Skips when npm
    is absent or the registry does not answer.
    """
    import subprocess

    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the Vega libraries come from the npm registry")
    prefix = tmp_path_factory.mktemp("vega-npm")
    proc = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), *VSCODE_VEGA],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        pytest.skip(f"npm install {' '.join(VSCODE_VEGA)} failed: {proc.stderr[-300:]}")
    out = tmp_path_factory.mktemp("vega-js")
    modules = prefix / "node_modules"
    for package in ("vega", "vega-lite", "vega-embed"):
        shutil.copy(modules / package / "build" / f"{package}.min.js", out)
    return out


# How VS Code's Vega renderer draws one output (vscode-notebook-renderers,
# src/client/vegaRenderer.ts): vegaEmbed on a new div with these options, then the
# output's embed_options, then the mode from the MIME type.
_VSCODE_PAGE = """<!doctype html><html><head><meta charset="utf-8">
<script src="vega.min.js"></script><script src="vega-lite.min.js"></script>
<script src="vega-embed.min.js"></script></head><body><script>
const outputs = %s;
window.views = [];
window.drawn = Promise.all(outputs.map(async ([spec, embed], i) => {
  const ele = document.createElement('div');
  ele.id = 'output-' + i;
  document.body.appendChild(ele);
  const r = await vegaEmbed(ele, spec, {
    actions: {export: true, compiled: false, editor: false, source: false},
    defaultStyle: true, ...embed, mode: 'vega-lite'});
  window.views[i] = r.view;
})).then(() => 'drawn', e => 'failed: ' + e);
</script></body></html>
"""

# Every item's tooltip in every drawn view: what vega-tooltip would show on hover.
_TOOLTIPS = """(() => window.views.map(view => {
  const out = [];
  const walk = n => { if (!n) return; if (n.items) n.items.forEach(walk);
                      if (n.tooltip !== undefined && n.tooltip !== null) out.push(n.tooltip); };
  walk(view.scenegraph().root);
  return out;
}))()"""

# Drawn marks per output: paths, lines and symbols inside the chart's SVG.
_MARKS = """(() => window.views.map((v, i) => document.querySelectorAll(
  '#output-' + i + ' svg .mark-rect path, #output-' + i + ' svg .mark-line path, '
  + '#output-' + i + ' svg .mark-area path, #output-' + i + ' svg .mark-symbol path, '
  + '#output-' + i + ' svg .mark-rule line').length))()"""


@pytest.fixture
def vscode_draw(vega_js):
    """Draw Vega-Lite outputs as VS Code's notebook renderer does, in offline Chromium.

    Returns a function ``draw(outputs, screenshot)`` taking ``[(spec, embed_options)]``
    and returning a dict: ``status`` ("drawn" or why not), ``marks`` per output,
    ``tooltips`` per output (each item's tooltip object), ``errors`` (console) and
    ``requests_out`` (anything that tried to leave the machine).
    """
    import json

    from iochar.report.browser import Browser

    def draw(outputs, screenshot):
        page = vega_js / "vscode.html"
        page.write_text(_VSCODE_PAGE % json.dumps(outputs), encoding="utf-8")
        with Browser(width=1280, height=1600) as b:
            b.load(page.as_uri(), settle_s=0.5)
            status = b.wait_for("window.drawn", 120)
            result = {
                "status": status,
                "marks": b.js(_MARKS),
                "tooltips": b.js(_TOOLTIPS),
            }
            b.screenshot(screenshot, full_page=True)
            result["errors"] = b.errors()
            result["requests_out"] = b.requests_out()
        return result

    return draw
