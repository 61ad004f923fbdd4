"""Notebook 06 (cache simulation) as a report: on the demo, on a small database of its own,
and in headless Chromium, the way tests/report checks the other notebooks."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

import iochar
from iochar.analyze import cachesim
from iochar.narrate import cachesim as narrate
from iochar.report.browser import chromium, open_page

DATA = Path(__file__).resolve().parents[2] / "data"
BOOK = Path(__file__).resolve().parents[2] / "notebooks" / "06-cache-simulation.ipynb"

pytestmark = pytest.mark.notebooks


def _text(page: str) -> str:
    """Visible text of a page, one space between words, no Markdown emphasis."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def _plain(markdown: str) -> str:
    return re.sub(r"\s+", " ", markdown.replace("**", "").replace("\\", ""))


def _words(s: str) -> str:
    return re.sub(r"\s+([.,;:)])", r"\1", re.sub(r"\(\s+", "(", s))


def test_demo_page_states_what_the_simulator_computes(demo_run):
    out, rc, log = demo_run
    assert rc == 0, log[-2000:]
    page = (out / "06-cache-simulation.html").read_text()
    text = _words(_text(page))
    with iochar.connect(str(out / "iochar.duckdb"), read_only=True) as db:
        job = cachesim.choose_job(db, None, "venus")
        assert cachesim.job_name(db, job) == "venus"
        label = narrate.job_label(job, "venus")
        small = cachesim.simulate(
            db, job, copies=2,
            cache=cachesim.CacheConfig(size_bytes=2 * cachesim.MW, read_ahead="sequential",
                                       write_behind=True),
        )  # fmt: skip
    # the notebook's defaults: two copies of venus, a 2 MW cache with both policies
    assert _words(_plain(narrate.setup_summary(small, label))) in text
    title = f"With a cache of {narrate.cache_size(2 * cachesim.MW)}"
    assert _words(_plain(narrate.run_summary(small, title))) in text
    assert re.search(r"hides \d+(\.\d)?% of the I/O wait of job \d+ \(venus\)", text)
    assert "the disk still sees a peak of" in text
    # four charts: Figs. 6 and 7, the SSD tier, Fig. 8
    assert len(re.findall(r'src="data:image/svg\+xml;base64,', page)) >= 4


@pytest.fixture(scope="module")
def small_page(tmp_path_factory):
    """`iochar report 06` on a database of a small synthetic ccm and a real strace capture."""
    from iochar.datasets import synth

    tmp = tmp_path_factory.mktemp("cachesim")
    ops, truth = synth.make_scenario("ccm", scale=0.2, random_state=7)
    trace = tmp / "ccm.parquet"
    synth.write_trace(ops, truth, trace)
    db_path = tmp / "small.duckdb"
    with iochar.connect(db_path) as db:
        db.load(trace)
        db.load(DATA / "strace" / "staging" / "ooc.strace")
        job = db.sql("SELECT job_id FROM jobs WHERE app = 'ccm'").fetchall()[0][0]
    out = tmp / "06.html"
    proc = subprocess.run(
        [sys.executable, "-m", "iochar.cli", "report", "06", "--db", str(db_path),
         "-p", "job_id", str(job), "-p", "copies", "1", "-p", "sizes_mw", "[0, 0.5, 4]",
         "-o", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    return out, proc, db_path, job


def test_report_on_a_chosen_job_with_parameters(small_page):
    out, proc, db_path, job = small_page
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = out.read_text()
    text = _words(_text(page))
    assert f"replays job {job} (ccm) as one copy on one CPU" in text
    with iochar.connect(str(db_path), read_only=True) as db:
        grid = cachesim.sweep(
            db, job, cache_sizes=[0, cachesim.MW // 2, 4 * cachesim.MW], policies=["none", "both"],
            copies=[1],
        )  # fmt: skip
    assert _words(_plain(narrate.recommendation(grid, narrate.job_label(job, "ccm")))) in text
    assert "Traceback" not in page and "This report stopped" not in page


@pytest.mark.skipif(
    chromium() is None, reason="Chromium is not installed (apt-get install chromium)"
)
def test_page_reads_cleanly_in_chromium(small_page, tmp_path):
    out, proc, _, _ = small_page
    assert proc.returncode == 0, proc.stderr
    r = open_page(out, screenshot=tmp_path / "06.png")
    assert len(r.h1) == 1, r.h1
    assert r.overflow_px == 0
    assert r.leaks == [] and r.console_errors == [] and r.requests_out == []
    assert r.empty_charts == [] and len(r.charts) >= 4


def test_unknown_job_stops_the_report_with_one_line(small_page, tmp_path):
    _, _, db_path, _ = small_page
    proc = subprocess.run(
        [sys.executable, "-m", "iochar.cli", "report", "06", "--db", str(db_path),
         "-p", "job_id", "777", "-o", str(tmp_path / "x.html")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "job_id 777 is not in this database" in proc.stderr + proc.stdout
