"""Charts build from analysis results and render offline."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from iochar.errors import ParameterError

alt = pytest.importorskip("altair")

from iochar.plot import throughput_chart  # noqa: E402


def _df():
    t0 = dt.datetime(2024, 1, 1)
    return pd.DataFrame(
        {
            "target": ["sda", "sda", "sdb"],
            "metric": ["read_bytes"] * 3,
            "ts": [t0, t0 + dt.timedelta(seconds=5), t0],
            "rate_per_s": [1.0, 2.0, 3.0],
            "flagged": [False, True, False],
        }
    )


def test_throughput_chart_spec():
    spec = throughput_chart(_df(), title="x").to_dict()
    assert spec["facet"]["row"]["field"] == "metric"
    layers = spec["spec"]["layer"]
    assert [
        layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
        for layer in layers
    ] == ["line", "point"]


def test_throughput_chart_needs_columns():
    with pytest.raises(ParameterError, match="missing"):
        throughput_chart(pd.DataFrame({"ts": []}))


def test_renders_offline_to_svg():
    vlc = pytest.importorskip("vl_convert")
    svg = vlc.vegalite_to_svg(throughput_chart(_df()).to_dict())
    assert svg.startswith("<svg") and "sda" in svg


def test_class_charts_render(store):
    from pathlib import Path

    from iochar.analyze.classify import class_breakdown, class_rate, classify
    from iochar.plot import class_breakdown_chart, class_rate_chart

    vlc = pytest.importorskip("vl_convert")
    store.load(Path(__file__).resolve().parents[1] / "data" / "strace" / "ckpt_tt.strace")
    cr = class_rate(store, job_id=0, bin_s=1.0)
    for chart in (class_rate_chart(cr), class_breakdown_chart(class_breakdown(classify(store)))):
        assert vlc.vegalite_to_svg(chart.to_dict()).startswith("<svg")


def test_snapshot_cdf_charts_render(store):
    from pathlib import Path

    from iochar.analyze import snapshots as S
    from iochar.plot import age_cdf_chart, size_cdf_chart

    vlc = pytest.importorskip("vl_convert")
    store.load(Path(__file__).resolve().parents[1] / "data" / "snapshot" / "tornado-after.find")
    sizes = S.size_cdf(store, 0)
    chart = size_cdf_chart(sizes)
    spec = chart.to_dict()
    assert spec["encoding"]["x"]["scale"]["type"] == "log"
    assert vlc.vegalite_to_svg(spec).startswith("<svg")
    assert vlc.vegalite_to_svg(age_cdf_chart(S.age_cdf(store, 0)).to_dict()).startswith("<svg")
