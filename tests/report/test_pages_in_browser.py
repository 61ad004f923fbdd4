"""Every report page read the way a person reads it: in headless Chromium, offline, at 1280 px.

The demo's pages and the pages of a database built only from real tools' output
(data/) are opened with every request leaving the machine blocked. A page must
have one H1, no horizontal scroll, no NaN/None/NaT/<NA>/inf or Python repr in
its visible text, every chart drawn with marks, no console error and no
request out. Screenshots are kept under pytest's tmp_path (shown on failure).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from iochar import report
from iochar.report.browser import chromium, open_page

DATA = Path(__file__).resolve().parents[2] / "data"
BOOKS = report.available()

pytestmark = [
    pytest.mark.notebooks,
    pytest.mark.skipif(
        chromium() is None, reason="Chromium is not installed (apt-get install chromium)"
    ),
]


def _charts_in(book: Path) -> int:
    """Chart calls in the notebook's code (each draws at most one chart)."""
    nb = nbformat.read(str(book), as_version=4)
    return sum(
        len(re.findall(r"\bplot\.\w+_chart\(", c.source)) for c in nb.cells if c.cell_type == "code"
    )


def _check(page: Path, shot: Path, *, min_charts: int = 0):
    r = open_page(page, screenshot=shot)
    where = f"{page.name} (screenshot {shot})"
    assert len(r.h1) == 1, (where, r.h1)
    assert r.overflow_px == 0, (where, r.scroll_width, r.inner_width)
    assert r.leaks == [], (where, r.leaks[:10])
    assert r.console_errors == [], (where, r.console_errors[:5])
    assert r.requests_out == [], (where, r.requests_out[:5])
    assert r.empty_charts == [], (where, r.empty_charts)
    assert len(r.charts) >= min_charts, (where, len(r.charts), min_charts)
    return r


@pytest.mark.parametrize("book", BOOKS, ids=[b.stem for b in BOOKS])
def test_demo_page_reads_cleanly(demo_run, book, tmp_path):
    out, rc, log = demo_run
    assert rc == 0, log[-2000:]
    r = _check(out / f"{book.stem}.html", tmp_path / f"{book.stem}.png", min_charts=1)
    assert r.h1[0] == report._title(nbformat.read(str(book), as_version=4))
    # then what matters: a summary of computed findings before the first section
    first = r.text.index("Summary")
    assert re.search(r"\d", r.text[first : first + 400]), r.text[first : first + 400]


@pytest.fixture(scope="module")
def real_db(tmp_path_factory):
    """A database of real tools' output only: Darshan, strace, iostat, LMT, brw_stats, find."""
    import iochar

    path = tmp_path_factory.mktemp("real") / "real.duckdb"
    db = iochar.connect(path)
    for rel in (
        "darshan/dxt.darshan",
        "darshan/ior_hdf5_example.darshan",
        "strace/ckpt_tt.strace",
        "iostat/rhel8-sysstat11.7.3-x-t-m.iostat",
        "lmt/snx11025_2018-01-28-trimmed.sqlite3",
        "brw_stats/ldiskfs-lctl-series.txt",
        "snapshot/tornado-before.find",
        "snapshot/tornado-after.find",
    ):
        db.load(DATA / rel)
    db.close()
    return path


@pytest.mark.parametrize("book", BOOKS, ids=[b.stem for b in BOOKS])
def test_real_log_page_reads_cleanly(real_db, book, tmp_path):
    page = tmp_path / f"{book.stem}.html"
    proc = subprocess.run(
        [sys.executable, "-m", "iochar.cli", "report", book.stem, "--db", str(real_db)]
        + ["-o", str(page)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if not page.exists():
        pytest.fail(proc.stdout + proc.stderr)
    # a report the database cannot answer says so at the top and still reads cleanly
    _check(page, tmp_path / f"{book.stem}.png")
