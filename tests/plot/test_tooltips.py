"""Tooltips show a missing value as "—" (issue 16, item 2: no leaks in tooltips).

Vega-Lite's own tooltip reads ``null`` for a row whose value is missing; the notebook
renderer rewrites every chart with :func:`iochar.plot.tooltips.show_missing`. Drawn
here with the Vega libraries VS Code bundles, in headless Chromium with no network:
rows with a value read exactly as Vega-Lite formats them, rows without read "—".
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iochar.plot.tooltips import MISSING, show_missing
from iochar.report.browser import chromium

alt = pytest.importorskip("altair")

DATA = Path(__file__).resolve().parents[2] / "data"
needs_chromium = pytest.mark.skipif(
    chromium() is None, reason="Chromium is not installed (apt-get install chromium)"
)
#: What a tooltip must never read.
LEAK = re.compile(r"^(null|NaN|NaT|None|undefined|-?Infinity|inf|nan|<NA>)$|NaN|undefined")


def _frame() -> pd.DataFrame:
    """Every kind of missing value pandas has, in every kind of column, and real values."""
    return pd.DataFrame(
        {
            "x": [1.0, 2.0, 3.0, 4.0],
            "rate": [1234.5678, np.nan, 3e-5, np.inf],
            "n": pd.array([1, None, 3, 4], dtype="Int64"),
            "ts": pd.to_datetime(
                ["2020-01-01 10:11:12", None, "2020-01-03 23:59:59.7", "2021-05-05"],
                utc=True,
                format="ISO8601",
            ),
            "app": ["ior", None, "a<b>&c", pd.NA],
        }
    )


def _chart():
    from iochar.plot._common import _time_tooltip

    return (
        alt.Chart(_frame())
        .mark_point()
        .encode(
            x="x:Q",
            y="x:Q",
            tooltip=[
                alt.Tooltip("rate:Q", format=".1f", title="rate [MiB/s]"),
                alt.Tooltip("rate:Q", title="raw"),
                "n:Q",
                alt.Tooltip("ts:T", title="local default"),
                _time_tooltip("ts"),
                alt.Tooltip("x:Q", format=".0%", title="share"),
                "app:N",
                alt.Tooltip("app:O", title="app (ordinal)"),
            ],
        )
    )


def test_every_plain_tooltip_becomes_a_computed_string():
    spec = _chart().to_dict()
    out = show_missing(spec)
    assert spec["encoding"]["tooltip"][0]["field"] == "rate"  # the input is not modified
    tips = out["encoding"]["tooltip"]
    assert [t["title"] for t in tips] == [
        "rate [MiB/s]", "raw", "n", "local default", "time (UTC)", "share", "app",
        "app (ordinal)",
    ]  # fmt: skip
    assert all(t["type"] == "nominal" and t["field"].startswith("__tip_") for t in tips)
    calcs = {c["as"]: c["calculate"] for c in out["transform"]}
    assert set(calcs) == {t["field"] for t in tips}
    assert 'utcFormat(toDate(datum["ts"]), "%Y-%m-%d %H:%M:%S")' in calcs[tips[4]["field"]]
    assert 'format(datum["rate"], ".1f")' in calcs[tips[0]["field"]]


def test_layers_facets_and_untouchable_entries():
    base = alt.Chart(_frame()).encode(x="x:Q")
    layered = alt.layer(
        base.mark_line().encode(y="rate:Q", tooltip=["rate:Q"]),
        base.mark_point().encode(y="n:Q", tooltip=[alt.Tooltip("n:Q", aggregate="sum")]),
    ).facet(row="app:N")
    out = show_missing(layered.to_dict())
    first, second = out["spec"]["layer"]
    assert first["encoding"]["tooltip"][0]["field"] == "__tip_0"
    assert first["transform"][-1]["as"] == "__tip_0"
    # an aggregate is computed over rows: left as Vega-Lite writes it
    assert second["encoding"]["tooltip"][0] == {
        "aggregate": "sum",
        "field": "n",
        "type": "quantitative",
    }
    assert "transform" not in second
    # a dotted name is a nested path to Vega-Lite: left alone
    dotted = {"mark": "point", "encoding": {"tooltip": {"field": "a.b", "type": "nominal"}}}
    assert show_missing(dotted) == dotted


@needs_chromium
def test_drawn_tooltips_read_a_dash_where_vega_lite_read_null(vscode_draw, tmp_path):
    spec = _chart().to_dict()
    spec.pop("$schema")
    got = vscode_draw([(spec, {}), (show_missing(spec), {})], tmp_path / "tooltips.png")
    assert got["status"] == "drawn" and got["errors"] == [] and got["requests_out"] == []
    before, after = got["tooltips"]
    assert len(before) == len(after) == 4
    # before: Vega-Lite's own tooltips leak "null" for the missing row and for inf
    assert before[1]["rate [MiB/s]"] == "null" and before[1]["app"] == "null"
    assert before[3]["raw"] == "null"
    # after: the same text wherever the row has a value, "—" where it has none
    for old, new in zip(before, after, strict=True):
        assert list(old) == list(new)
        for title, text in new.items():
            assert not LEAK.search(text), (title, text)
            assert text == (old[title] if old[title] != "null" else MISSING), (title, old, new)
    assert after[0]["rate [MiB/s]"] == "1234.6" and after[0]["time (UTC)"] == "2020-01-01 10:11:12"
    assert after[2]["app"] == "a<b>&c"  # text, escaped by the tooltip handler
    assert after[1] == {t: ("200%" if t == "share" else MISSING) for t in after[1]}
    assert after[3]["rate [MiB/s]"] == MISSING and after[3]["app"] == MISSING


@needs_chromium
def test_notebook_renderer_applies_it_to_a_real_chart(vscode_draw, tmp_path, monkeypatch):
    """LMT with a 3 min 20 s hole: the throughput line breaks at a null row (issue 16,
    item 4), whose tooltip Vega-Lite reads as "null"; what the notebook shows reads "—"."""
    import iochar
    from iochar import plot
    from iochar.analyze.throughput import throughput
    from iochar.report import notebook as nb

    monkeypatch.delenv(nb.REPORT_ENV, raising=False)
    with iochar.connect(":memory:") as db:
        db.load(DATA / "lmt" / "lmtdb-reset-ost.csv")
        spec = plot.throughput_chart(throughput(db)).to_dict()
    bundle, meta = nb._offline_renderer(spec)
    view = bundle[nb.VEGALITE_MIME]
    spec.pop("$schema")
    embed = meta[nb.VEGALITE_MIME]["embed_options"]
    got = vscode_draw([(spec, embed), (view, embed)], tmp_path / "lmt.png")
    assert got["status"] == "drawn" and got["errors"] == [] and got["requests_out"] == [], got
    assert all(m > 0 for m in got["marks"]), got["marks"]
    before, after = got["tooltips"]
    leaks = [tip for tip in before if any(LEAK.search(str(v)) for v in tip.values())]
    assert leaks, "the hole's null rows should have leaked before"  # the test can fail
    assert len(after) == len(before)
    assert not [tip for tip in after if any(LEAK.search(str(v)) for v in tip.values())]
    holes = [tip for tip in after if tip["rate [MiB/s]"] == MISSING]
    assert len(holes) == 2  # one null row per line (read and write), as drawn
