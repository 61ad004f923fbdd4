"""Charts draw with no network: in JupyterLab, in nbconvert HTML and in ``iochar report``.

Issue 16, item 1: altair 6's default output loads Vega from a CDN, so offline every
chart of a notebook showed only "Error loading script". :func:`nb.setup` now gives
each chart the Vega-Lite spec (drawn by the Vega renderer JupyterLab 4, Notebook 7
and VS Code bundle) plus a static SVG from vl-convert (what nbconvert's HTML
exporter picks). Here: the mimebundle itself, an nbconvert HTML export read in
headless Chromium with every request leaving the machine blocked, and notebook 01
run top to bottom in a real JupyterLab and a real Notebook 7 served on loopback, in
the same browser.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from iochar.report import notebook as nb
from iochar.report.browser import Browser, chromium, open_page

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
URL = re.compile(r"https?://")


needs_chromium = pytest.mark.skipif(
    chromium() is None, reason="Chromium is not installed (apt-get install chromium)"
)


@pytest.fixture
def renderer_state():
    """Restore altair's renderer and pandas' display options after ``nb.setup()``.

    ``setup`` configures the process for a notebook kernel; in the test process the
    options would otherwise change how every later doctest prints a DataFrame.
    """
    import altair as alt
    import pandas as pd

    active = alt.renderers.active
    options = ("display.max_rows", "display.float_format", "styler.format.na_rep")
    with pd.option_context(*[x for o in options for x in (o, pd.get_option(o))]):
        yield
    alt.renderers.enable(active)


def _small_chart():
    """A real chart on a small real input: size histogram of Lustre brw_stats (data/)."""
    import iochar
    from iochar import plot
    from iochar.analyze import fsu

    db = iochar.connect(":memory:")
    db.load(DATA / "brw_stats" / "ldiskfs-lctl-series.txt")
    return plot.size_histogram_chart(fsu.size_histogram(db))


# --- the mimebundle -------------------------------------------------------------------


def test_setup_gives_interactive_spec_and_svg_with_no_url(renderer_state, monkeypatch):
    monkeypatch.delenv(nb.REPORT_ENV, raising=False)
    nb.setup()
    bundle, meta = _small_chart()._repr_mimebundle_()
    assert set(bundle) == {nb.VEGALITE_MIME, "image/svg+xml", "text/plain"}
    svg = bundle["image/svg+xml"]
    assert svg.startswith("<svg") and 'class="marks"' in svg
    assert len(re.findall(r"<path ", svg)) > 5, "the SVG has no drawn marks"
    view = bundle[nb.VEGALITE_MIME]
    assert view["datasets"] and all(view["datasets"].values())  # the rows travel inline
    assert "url" not in view["data"]
    assert not URL.search(json.dumps(view)), URL.findall(json.dumps(view))
    assert not URL.search(json.dumps(meta)), meta
    assert meta[nb.VEGALITE_MIME]["embed_options"]["renderer"] == "svg"


def test_report_mode_keeps_inline_svg(renderer_state, monkeypatch):
    monkeypatch.setenv(nb.REPORT_ENV, "1")
    nb.setup()
    bundle = _small_chart()._repr_mimebundle_()
    assert set(bundle) == {"image/svg+xml"}
    assert 'class="marks"' in bundle["image/svg+xml"]


def test_ipython_display_formatter_sees_both_views(renderer_state, monkeypatch):
    """What a kernel sends: IPython's formatter over the chart, as in a notebook cell."""
    from IPython.core.formatters import DisplayFormatter

    monkeypatch.delenv(nb.REPORT_ENV, raising=False)
    nb.setup()
    data, meta = DisplayFormatter().format(_small_chart())
    assert {nb.VEGALITE_MIME, "image/svg+xml", "text/plain"} <= set(data)
    assert "text/html" not in data  # altair's default HTML (Vega from a CDN) is gone
    assert nb.VEGALITE_MIME in meta


# --- nbconvert HTML in headless Chromium ----------------------------------------------


@needs_chromium
def test_nbconvert_html_draws_charts_offline(tmp_path, monkeypatch):
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import ExecutePreprocessor

    book = nbformat.v4.new_notebook()
    book.cells = [
        nbformat.v4.new_code_cell(
            "from iochar.report import notebook as nb\n"
            "import iochar\n"
            "from iochar import plot\n"
            "from iochar.analyze import fsu\n"
            "nb.setup()\n"
            "db = iochar.connect(':memory:')\n"
            f"db.load({str(DATA / 'brw_stats' / 'ldiskfs-lctl-series.txt')!r})\n"
            "plot.size_histogram_chart(fsu.size_histogram(db))"
        )
    ]
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    monkeypatch.delenv(nb.REPORT_ENV, raising=False)  # the kernel inherits the environment
    ExecutePreprocessor(timeout=300, kernel_name="python3").preprocess(
        book, {"metadata": {"path": str(tmp_path)}}
    )
    out = book.cells[0].outputs
    assert [o.output_type for o in out] == ["execute_result"], out

    # as `jupyter nbconvert --to html` writes it: the chart is the SVG, no script
    default = HTMLExporter()
    body, _ = default.from_notebook_node(book)
    assert "cdn.jsdelivr" not in body and "vega@" not in body
    page = tmp_path / "default.html"
    page.write_text(body)
    r = open_page(page, screenshot=tmp_path / "default.png")
    where = f"{page} (screenshot {r.screenshot})"
    assert len(r.charts) == 1 and r.empty_charts == [], (where, r.charts)
    assert r.console_errors == [], (where, r.console_errors)
    # nbconvert's lab template itself names require.js and MathJax on cdnjs, whatever
    # the notebook holds; nothing else may leave the machine
    assert set(r.requests_out) <= {default.require_js_url, default.mathjax_url}, where

    # without those two template scripts the page asks for nothing at all
    bare = HTMLExporter(require_js_url="", mathjax_url="")
    page = tmp_path / "bare.html"
    page.write_text(bare.from_notebook_node(book)[0])
    r = open_page(page, screenshot=tmp_path / "bare.png")
    where = f"{page} (screenshot {r.screenshot})"
    assert len(r.charts) == 1 and r.empty_charts == [], (where, r.charts)
    assert r.console_errors == [] and r.requests_out == [], (where, r)


# --- JupyterLab and Notebook 7 on loopback, in headless Chromium with no other network

#: Chart calls in a notebook's code; each draws one chart on the demo data.
CHART_CALL = re.compile(r"\bplot\.\w+_chart\(")

# Every chart output of the notebook: drawn by the Vega renderer (an <svg> with marks),
# or by the SVG fallback (<img>), or neither.
_CHARTS = r"""
(() => Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell')).flatMap(cell => {
  const src = cell.querySelector('.jp-InputArea-editor').innerText;
  if (!/\bplot\.\w+_chart\(/.test(src)) return [];
  return Array.from(cell.querySelectorAll('.jp-OutputArea-output')).map(o => {
    const svg = o.querySelector('svg.marks');
    return {src: src.slice(0, 60), vega: o.classList.contains('jp-RenderedVegaLite'),
            marks: svg ? svg.querySelectorAll('.mark-rect path, .mark-line path, .mark-area path,'
                                              + ' .mark-symbol path, .mark-rule line').length : 0,
            text: o.innerText.slice(0, 200)};
  });
}))()
"""

# The first bar of the first chart, scrolled into view: where to point for a tooltip.
_FIRST_BAR = r"""
(() => {
  const bars = Array.from(document.querySelectorAll('.jp-RenderedVegaLite .mark-rect path'))
    .filter(p => { const r = p.getBoundingClientRect(); return r.width > 10 && r.height > 5; });
  if (!bars.length) return null;
  bars[0].scrollIntoView({block: 'center'});
  const r = bars[0].getBoundingClientRect();
  return [r.x + r.width / 2, r.y + r.height / 2];
})()
"""

_RUN_ALL = r"""
(async () => {
  const app = window.jupyterapp;
  await app.restored;
  let panel = null;
  for (let i = 0; i < 600 && !panel; i++) {
    panel = Array.from(app.shell.widgets('main')).find(w => w.context && w.context.path === %s);
    if (!panel) await new Promise(r => setTimeout(r, 100));
  }
  if (!panel) return 'the notebook did not open';
  app.shell.activateById(panel.id);
  await panel.context.ready;
  await panel.sessionContext.ready;
  const ok = await app.commands.execute('notebook:run-all-cells');
  await panel.context.save();
  return ok === true ? 'ran' : 'run-all gave ' + ok;
})()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Frontend:
    """A Jupyter web frontend served by ``python -m <module>``, app at window.jupyterapp."""

    name: str  #: for the log and screenshot files
    module: str  #: what ``python -m`` runs
    app: str  #: the traitlets class that takes ``expose_app_in_browser``
    page: str  #: the URL path of a notebook, ``{}`` its path under the root
    args: tuple[str, ...] = ()  #: more server options
    known_errors: tuple[str, ...] = ()  #: console errors of the frontend itself, not ours


LAB = Frontend(
    "lab",
    "jupyterlab",
    "LabApp",
    "/lab/tree/{}",
    ("--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"),
)
# Notebook 7 (the classic interface rebuilt on JupyterLab's components) has neither
# news nor update checks to turn off. Its keyboard-shortcut plugin races the settings
# registry while loading and may throw before any cell runs (jupyter/notebook#7862).
NOTEBOOK7 = Frontend(
    "notebook7",
    "notebook",
    "JupyterNotebookApp",
    "/notebooks/{}",
    known_errors=("TypeError: Cannot read properties of undefined (reading 'schema')",),
)


def _start_jupyter(
    frontend: Frontend, root: Path, token: str, env: dict
) -> tuple[subprocess.Popen, int]:
    """``frontend`` on 127.0.0.1 over ``root``, its app exposed as window.jupyterapp."""
    port = _free_port()
    home = root.parent / "jupyter-home"
    env = {
        **env,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
    }
    log_path = root.parent / f"{frontend.name}.log"
    log = open(log_path, "w")  # the server keeps its own handle
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            frontend.module,
            "--no-browser",
            f"--port={port}",
            "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--ServerApp.allow_root=True",
            f"--{frontend.app}.expose_app_in_browser=True",
            *frontend.args,
        ],
        cwd=root,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    end = time.monotonic() + 120
    while time.monotonic() < end and proc.poll() is None:
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2
            ):
                return proc, port
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    pytest.fail(f"{frontend.module} did not start: {log_path.read_text()[-2000:]}")


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _run_notebook_01(frontend: Frontend, tmp_path: Path, monkeypatch) -> None:
    """Notebook 01 run top to bottom in ``frontend`` with no network: all charts drawn."""
    from iochar.datasets import demo

    # the demo database the notebook opens by default, built here, not in ~/.cache
    monkeypatch.setenv("IOCHAR_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(nb.REPORT_ENV, raising=False)
    demo.cached_database()

    root = tmp_path / "root"
    root.mkdir()
    book = ROOT / "notebooks" / "01-application-traces.ipynb"
    shutil.copy(book, root / book.name)
    code = nbformat.read(str(book), as_version=4).cells
    expected = sum(len(CHART_CALL.findall(c.source)) for c in code if c.cell_type == "code")
    token = os.urandom(12).hex()
    server, port = _start_jupyter(frontend, root, token, dict(os.environ))
    browser = Browser(width=1280, height=2000, timeout_s=600)
    try:
        url = f"http://127.0.0.1:{port}{frontend.page.format(book.name)}?token={token}"
        browser.call("Page.navigate", url=url)
        browser.wait_for("!!window.jupyterapp")
        assert browser.js(_RUN_ALL % json.dumps(book.name)) == "ran"
        ready = f"document.querySelectorAll('.jp-RenderedVegaLite svg.marks').length >= {expected}"
        browser.wait_for(ready, 60)
        charts = browser.js(_CHARTS)
        shot = browser.screenshot(tmp_path / f"{frontend.name}-run.png")
        where = f"screenshot {shot}"
        assert len(charts) == expected, (where, charts)
        for c in charts:  # drawn by the frontend's Vega renderer, not a fallback or an error
            assert c["vega"] and c["marks"] > 0, (where, c)

        # interactive: hovering a bar shows its tooltip
        x, y = browser.js(_FIRST_BAR)
        time.sleep(0.3)
        x, y = browser.js(_FIRST_BAR)
        for dx in (0, 1, 2):
            browser.call("Input.dispatchMouseEvent", type="mouseMoved", x=x + dx, y=y)
            time.sleep(0.1)
        tip = browser.js(
            "(() => { const t = document.querySelector('#vg-tooltip-element.visible');"
            " return t ? t.innerText : null; })()"
        )
        assert tip and "value" in tip, (where, tip)
        assert not re.search(r"\b(null|NaN|NaT|None|undefined|Infinity)\b|<NA>", tip), tip

        # the saved notebook, opened again without running it, still draws its charts
        browser.call("Page.reload")
        time.sleep(1)
        browser.wait_for("!!window.jupyterapp")
        browser.wait_for(ready, 60)
        shot = browser.screenshot(tmp_path / f"{frontend.name}-reopened.png")
        assert all(c["vega"] and c["marks"] > 0 for c in browser.js(_CHARTS)), shot

        errors = [e for e in browser.errors() if not e.startswith(frontend.known_errors)]
        assert errors == [], (where, errors[:5])
        assert browser.requests_out() == [], (where, browser.requests_out()[:5])
    finally:
        browser.close()
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()


@pytest.mark.notebooks
@needs_chromium
@pytest.mark.skipif(not _has("jupyterlab"), reason="JupyterLab is not installed")
@pytest.mark.skipif(not _has("websocket"), reason="websocket-client is not installed")
def test_jupyterlab_runs_notebook_01_and_draws_every_chart_offline(tmp_path, monkeypatch):
    """Notebook 01 run top to bottom in JupyterLab with no network: all charts drawn."""
    _run_notebook_01(LAB, tmp_path, monkeypatch)


@pytest.mark.notebooks
@needs_chromium
@pytest.mark.skipif(
    not _has("notebook"), reason="Jupyter Notebook 7 is not installed (pip install notebook)"
)
@pytest.mark.skipif(not _has("websocket"), reason="websocket-client is not installed")
def test_notebook7_runs_notebook_01_and_draws_every_chart_offline(tmp_path, monkeypatch):
    """Notebook 01 run top to bottom in the classic Notebook 7 interface: all charts drawn."""
    _run_notebook_01(NOTEBOOK7, tmp_path, monkeypatch)
