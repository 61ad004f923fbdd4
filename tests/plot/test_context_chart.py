"""The job-load chart (issue 20, item 1): a job's I/O rate under its system's load.

Drawn from the real capture of data/insights (ckpt_app traced with strace -ttt while
/proc/diskstats of its disk was sampled and dd loaded it), whose raw samples are read
here; without counters covering the job (a real Darshan log alone, the demo database)
the chart is a NoChart saying why.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import iochar
from iochar.analyze import context
from iochar.plot import NoChart
from iochar.plot.context import job_load_chart

alt = pytest.importorskip("altair")

DATA = Path(__file__).resolve().parents[2] / "data"
INSIGHTS = DATA / "insights"


def _db(case: str):
    db = iochar.connect(":memory:")
    db.load(INSIGHTS / f"{case}.strace")
    db.load(INSIGHTS / f"{case}.diskstats")
    return db


def _raw_samples(path: Path) -> pd.DataFrame:
    """Sample times [epoch s] and read + write bytes per interval from the raw file."""
    rows, ts = [], None
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) == 1:
            ts = float(f[0])
            continue
        rows.append((ts, (int(f[5]) + int(f[9])) * 512))
    d = pd.DataFrame(rows, columns=["t", "bytes"])
    return pd.DataFrame(
        {"t": d["t"].iloc[1:].to_numpy(), "bps": np.diff(d["bytes"]) / np.diff(d["t"])}
    )


def _strace_window(path: Path) -> tuple[float, float]:
    lines = path.read_text().splitlines()
    return float(lines[0].split()[1]), float(lines[-1].split()[1])


def _views(spec: dict) -> list[dict]:
    return [v for panel in spec["vconcat"] for v in panel["layer"]]


def _data(spec: dict, view: dict) -> list[dict]:
    name = view.get("data", spec.get("data", {})).get("name")
    return spec["datasets"][name]


@pytest.mark.parametrize("case", ["collide", "apart"])
def test_the_chart_draws_the_disks_raw_rate_and_the_jobs_window(case):
    s = context.load_series(_db(case), 0)
    chart = job_load_chart(s)
    assert not isinstance(chart, NoChart)
    spec = chart.to_dict()
    assert len(spec["vconcat"]) == 2
    views = _views(spec)
    marks = [v["mark"]["type"] if isinstance(v["mark"], dict) else v["mark"] for v in views]
    assert marks == ["rect", "line", "rect", "line"]
    # one time axis: both panels on the same explicit UTC domain
    domains = [v["encoding"]["x"]["scale"]["domain"] for v in views]
    assert all(d == domains[0] for d in domains)
    # the window shaded is the traced run: first call to exit
    t0, t1 = _strace_window(INSIGHTS / f"{case}.strace")
    (win,) = _data(spec, views[0])
    for key, t in (("start", t0), ("end", t1)):
        got = pd.Timestamp(win[key]) - pd.Timestamp(t, unit="s", tz="UTC")
        assert abs(got.total_seconds()) <= 1e-6
    # the system line: the raw samples' rate, in the axis title's unit
    raw = _raw_samples(INSIGHTS / f"{case}.diskstats")
    title = views[1]["encoding"]["y"]["title"]
    unit = {"B/s": 1, "KiB/s": 1 << 10, "MiB/s": 1 << 20, "GiB/s": 1 << 30}[
        title.split("[")[1][:-1]
    ]
    pts = [p for p in _data(spec, views[1]) if p["system"] is not None]
    got = np.array([p["system"] for p in pts]) * unit
    assert len(got) == len(raw)
    assert np.allclose(got, raw["bps"].to_numpy(), rtol=1e-6)
    # the job's panel names the job
    assert "ckpt_app" in views[3]["encoding"]["y"]["title"]


def test_the_chart_renders_offline():
    vlc = pytest.importorskip("vl_convert")
    svg = vlc.vegalite_to_svg(job_load_chart(context.load_series(_db("collide"), 0)).to_dict())
    assert svg.startswith("<svg") and "collide.diskstats" in svg


def test_no_counters_no_chart_and_the_reason():
    pytest.importorskip("darshan")
    db = iochar.connect(":memory:")
    db.load(DATA / "darshan" / "lustre" / "sample-badost.darshan")
    chart = job_load_chart(context.load_series(db, 0))
    assert isinstance(chart, NoChart)
    assert "no device or server counters" in str(chart)


def test_counters_after_the_job_no_chart_with_both_ranges():
    pytest.importorskip("darshan")
    db = iochar.connect(":memory:")
    db.load(DATA / "darshan" / "lustre" / "sample-badost.darshan")
    db.load(DATA / "lmt" / "lmtdb-reset.sqlite3")
    chart = job_load_chart(context.load_series(db, 0))
    assert isinstance(chart, NoChart)
    text = str(chart)
    assert "2017-06-20 17:49:39" in text and "2018-04-18 07:40:35" in text
