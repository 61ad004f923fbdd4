"""Notebook 05 (efficiency and scaling) as a report: on a small database of real captures
with a stored capacity table, on the demo, and in headless Chromium, the way tests/report
checks the other notebooks."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

import iochar
from iochar.analyze import capacity, efficiency, interference
from iochar.narrate import efficiency as narrate
from iochar.report.browser import chromium, open_page

DATA = Path(__file__).resolve().parents[2] / "data"

pytestmark = pytest.mark.notebooks


def _text(page: str) -> str:
    """Visible text of a page, one space between words."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def _plain(markdown: str) -> str:
    return re.sub(r"\s+", " ", markdown.replace("**", "").replace("\\", ""))


@pytest.fixture(scope="module")
def small_page(tmp_path_factory):
    """`iochar report 05` on real strace and Darshan captures with the bundled fio
    calibration stored as the device level (no fio run: calibrate_here False)."""
    tmp = tmp_path_factory.mktemp("eff")
    db_path = tmp / "small.duckdb"
    with iochar.connect(db_path) as db:
        db.load(DATA / "strace" / "ckpt_tt.strace")
        db.load(DATA / "darshan" / "example.darshan")
        capacity.store_capacity(db, DATA / "fio" / "iochar-calibrate-vda-ext4.json")
    out = tmp / "05.html"
    proc = subprocess.run(
        [sys.executable, "-m", "iochar.cli", "report", "05", "--db", str(db_path),
         "-p", "calibrate_here", "False", "-o", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    return out, proc, db_path


def test_report_states_the_capacity_and_the_used_percentages(small_page):
    out, proc, db_path = small_page
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = out.read_text()
    text = _text(page)
    with iochar.connect(str(db_path), read_only=True) as db:
        runs = db.sql("SELECT * FROM capacity").df()
        cap = capacity.capacity(runs)
        types = efficiency.phase_types(efficiency.phases(db))
    used = efficiency.used(types[types["weight"] >= 0.1], cap)
    assert _plain(narrate.capacity_summary(cap)) in text
    assert _plain(narrate.used_summary(used, threshold=30.0)) in text
    # the Méndez table: one column per level and operation, numbers as computed
    assert "device read" in text and "device write" in text
    row = used[(used["op"] == "write")].sort_values("bytes").iloc[-1]
    assert f"{row['used_pct']:.1f}" in text
    pairs = interference.fio_pairs(DATA / "fio-pairs" / "fio-3.33-pairs-vda-ext4.json")
    assert _plain(narrate.interference_summary(pairs)) in text
    assert "Traceback" not in page and "This report stopped" not in page
    # capacity, used %, interference; the scaling chart says why it is not drawn
    assert len(re.findall(r'src="data:image/svg\+xml;base64,', page)) >= 3
    assert "No scaling chart: the sweep has one process count (1)" in text


@pytest.mark.skipif(
    chromium() is None, reason="Chromium is not installed (apt-get install chromium)"
)
def test_page_reads_cleanly_in_chromium(small_page, tmp_path):
    out, proc, _ = small_page
    assert proc.returncode == 0, proc.stderr
    r = open_page(out, screenshot=tmp_path / "05.png")
    assert len(r.h1) == 1, r.h1
    assert r.overflow_px == 0
    assert r.leaks == [] and r.console_errors == [] and r.requests_out == []
    assert r.empty_charts == [] and len(r.charts) >= 3


def test_demo_page_has_the_four_studies_parts(demo_run):
    out, rc, log = demo_run
    assert rc == 0, log[-2000:]
    page = (out / "05-efficiency-and-scaling.html").read_text()
    text = _text(page)
    for heading in ("Phase 1", "Phase 2", "Phase 3", "Kwan & Reed"):
        assert heading in text
    assert re.search(r"The I/O system was characterized at \d+ levels? of the I/O path", text)
    assert re.search(r"phases used [\d.]+% to [\d.]+% of the capacity", text) is not None
