"""iochar.plot.ranks: the rank x time heat map with marginal totals (PyDarshan's layout) and
the fastest/slowest rank chart, built from real logs and captures and rendered offline with
vl-convert, as reports do."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import iochar
from iochar.analyze import ranks
from iochar.plot import NoChart
from iochar.plot import ranks as plot_ranks

pytest.importorskip("altair")
vlc = pytest.importorskip("vl_convert")

DATA = Path(__file__).resolve().parents[2] / "data"
DARSHAN = DATA / "darshan"


def _texts(svg: str) -> list[str]:
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def _db(*paths):
    if any(p.suffix == ".darshan" for p in paths):
        pytest.importorskip("darshan", reason="the darshan loader needs the darshan package")
    db = iochar.connect(":memory:")
    for p in paths:
        db.load(p)
    return db


def _views(spec: dict) -> tuple[dict, dict, dict]:
    top = spec["vconcat"][0]
    main, side = spec["vconcat"][1]["hconcat"]
    return top, main, side


def _values(spec: dict, view: dict) -> list[dict]:
    name = view["data"]["name"]
    return spec["datasets"][name]


def test_dxt_heat_map_with_marginal_totals():
    """Heat map (log colour, PyDarshan's YlOrRd) with the bytes per time bin above and per
    rank to the right; the marginal bars hold the matrix' column and row sums."""
    db = _db(DARSHAN / "ior_hdf5_example.darshan")
    cells = ranks.rank_heatmap(db, job_id=0, time_bins=50)
    chart = plot_ranks.rank_heatmap_chart(cells)
    spec = chart.to_dict()
    top, main, side = _views(spec)
    mark = main["mark"]
    assert (mark["type"] if isinstance(mark, dict) else mark) == "rect"
    enc = main["encoding"]
    assert enc["color"]["scale"] == {"type": "log", "scheme": "yelloworangered"}
    assert enc["x"]["title"] == "time since job start [s]" and enc["y"]["title"] == "rank"
    assert {"x2", "y2"} <= set(enc)
    m = ranks.rank_matrix(cells)
    unit = 2**20 if "MiB" in enc["color"]["title"] else 2**10
    per_t = sorted(_values(spec, top), key=lambda r: r["t0"])
    want_t = m.sum(axis=0)
    want_t = want_t[want_t > 0]
    np.testing.assert_allclose([r["v"] * unit for r in per_t], want_t.to_numpy(), rtol=1e-9)
    per_r = sorted(_values(spec, side), key=lambda r: r["y0"])
    np.testing.assert_allclose([r["v"] * unit for r in per_r], m.sum(axis=1).to_numpy())
    svg = vlc.vegalite_to_svg(chart.to_json())
    texts = _texts(svg)
    assert "time since job start [s]" in texts and "rank" in texts
    assert any("per rank and 0.02 s bin" in t for t in texts)
    assert svg.count("<path") > 10


def test_many_ranks_say_the_bin_width():
    """496 ranks (imbalanced-io, counters only): ranks in bins of 2, said on the axis and
    in the title."""
    db = _db(DARSHAN / "darshan-logs" / "imbalanced_io" / "imbalanced-io.darshan")
    cells = ranks.rank_heatmap(db, job_id=0)
    chart = plot_ranks.rank_heatmap_chart(cells)
    spec = chart.to_dict()
    _, main, _ = _views(spec)
    assert main["encoding"]["y"]["title"] == "rank (bins of 2 ranks)"
    assert main["encoding"]["y"]["scale"]["domain"] == [-0.5, 495.5]
    texts = _texts(vlc.vegalite_to_svg(chart.to_json()))
    assert "rank (bins of 2 ranks)" in texts
    assert any("ranks in bins of 2" in t for t in texts)
    assert "time since job start [min]" in texts  # a 1479 s run in minutes


def test_strace_tasks_are_labelled_by_their_ids():
    db = _db(DATA / "strace" / "workers_o.strace")
    cells = ranks.rank_heatmap(db, job_id=0)
    chart = plot_ranks.rank_heatmap_chart(cells, op="write")
    _, main, _ = _views(chart.to_dict())
    assert main["encoding"]["y"]["type"] == "nominal"
    assert main["encoding"]["y"]["title"] == "task id"
    texts = _texts(vlc.vegalite_to_svg(chart.to_json()))
    pids = sorted(cells["rank_lo"].unique())
    assert {str(p) for p in pids} <= set(texts)
    assert any(t.startswith("write [") for t in texts)


def test_no_chart_says_why():
    db = _db(
        DARSHAN / "darshan-logs" / "release_logs" / "mpi-io-test-x86_64-3.0.0.darshan",
        DARSHAN / "darshan-logs" / "release_logs" / "mpi-io-test-x86_64-3.4.0.darshan",
    )
    none = plot_ranks.rank_heatmap_chart(ranks.rank_heatmap(db, job_id=0))
    assert isinstance(none, NoChart) and "no per-rank record over time" in str(none)
    # Darshan 3.4.0's STDIO heat map: one rank, one 0.1 s bin
    one = ranks.rank_heatmap(db, job_id=1, source="heatmap", layer="STDIO")
    assert len(one) == 1
    nc = plot_ranks.rank_heatmap_chart(one)
    assert isinstance(nc, NoChart) and "one cell" in str(nc)


def test_extremes_chart_from_shared_records():
    db = _db(
        DARSHAN / "darshan-logs" / "imbalanced_io" / "imbalanced-io.darshan",
        DATA / "strace" / "workers_o.strace",
    )
    ex = ranks.rank_extremes(db, job_id=0)
    chart = plot_ranks.rank_extremes_chart(ex)
    spec = chart.to_dict()
    assert len(spec["layer"]) == 4
    texts = _texts(vlc.vegalite_to_svg(chart.to_json()))
    for path, mod in zip(ex["path"], ex["module"], strict=True):
        assert f"{path} ({mod})" in texts
    assert "I/O time of a rank on the file [min]" in texts
    nc = plot_ranks.rank_extremes_chart(ranks.rank_extremes(db, job_id=1))
    assert isinstance(nc, NoChart) and "no shared Darshan record" in str(nc)
