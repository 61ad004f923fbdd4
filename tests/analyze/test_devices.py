"""Per (input, target) device and server load from the counters table.

Expected values are computed here from the raw ``counters`` / ``size_hist`` rows with
naive pandas, SQL and Python loops (Carns et al. 2011, section 4 and Table III),
never by the code under test. The helpers are shared with
``tests/narrate/test_system.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from iochar.analyze import bursts, devices, fsu
from iochar.errors import ReportError
from tests.conftest import DATA_DIR

LMT = DATA_DIR / "lmt" / "lmtdb-reset-ost.csv"
IOSTAT = DATA_DIR / "iostat" / "rhel8-sysstat11.7.3-x-t-m.iostat"
BRW = [
    DATA_DIR / "brw_stats" / "ldiskfs-lctl-series.txt",
    DATA_DIR / "brw_stats" / "zfs-lustrefs-OST0000-series.txt",
]
MIB = float(1 << 20)


# --------------------------------------------------------------------------- helpers


def _insert(store, table: str, frame: pd.DataFrame) -> None:
    store.con.register("_rows", pa.Table.from_pandas(frame, preserve_index=False))
    cols = ", ".join(frame.columns)
    store.con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _rows")
    store.con.unregister("_rows")


def _counters(store, source_id: int, target: str, rates, *, step=10.0, t0="2024-01-01"):
    """read_bytes at ``rates`` [bytes/s] and zero write_bytes, one row per ``step`` s."""
    n = len(rates)
    ts = pd.Timestamp(t0) + pd.to_timedelta(step * (1 + np.arange(n)), unit="s")
    frame = pd.concat(
        [
            pd.DataFrame(
                {
                    "source_id": source_id,
                    "target": target,
                    "metric": metric,
                    "ts": ts,
                    "interval_s": step,
                    "value": np.asarray(rates, float) * step * (metric == "read_bytes"),
                    "quality": "ok",
                }
            )
            for metric in ("read_bytes", "write_bytes")
        ]
    )
    _insert(store, "counters", frame)


def _naive(store, source_id: int, target: str, frac=0.33, idle_frac=0.05) -> dict:
    """Per-sample loop over one target's read+write counters (Carns et al. 2011)."""
    c = store.sql(
        "SELECT * FROM counters WHERE source_id = $s AND target = $t "
        "AND metric IN ('read_bytes', 'write_bytes') ORDER BY ts",
        params={"s": source_id, "t": target},
    ).df()
    samples = []
    for ts, g in c.groupby("ts", sort=True):
        bad = len(g) < 2 or (g["quality"] != "ok").any()
        iv = float(g["interval_s"].max())
        samples.append((ts, iv, math.nan if bad else float(g["value"].sum()) / iv))
    nominal = float(np.median([iv for _, iv, _ in samples]))
    valid = [(ts, nominal, r) for ts, _, r in samples if not math.isnan(r)]
    peak = max(r for _, _, r in valid)
    observed = sum(iv for _, iv, _ in valid)
    below = sum(iv for _, iv, r in valid if r < frac * peak)
    span = (samples[-1][0] - (samples[0][0] - pd.Timedelta(seconds=samples[0][1]))).total_seconds()
    # idle runs: consecutive samples below idle_frac x peak, broken by gaps
    runs, cur = [], []
    for ts, _, r in samples:
        if not math.isnan(r) and r < idle_frac * peak:
            cur.append(ts)
        else:
            if cur:
                runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    lengths = [nominal * len(r) for r in runs]
    longest = int(np.argmax(lengths)) if runs else None
    mib = float(c.loc[c["quality"] == "ok", "value"].sum()) / MIB
    return {
        "peak": peak,
        "peak_ts": max(valid, key=lambda x: x[2])[0],
        "observed": observed,
        "gap": span - observed,
        "share_below": below / observed,
        "idle_s": sum(lengths),
        "periods": len(runs),
        "longest_s": lengths[longest] if runs else 0.0,
        "longest_start": runs[longest][0] - pd.Timedelta(seconds=nominal) if runs else None,
        "longest_end": runs[longest][-1] if runs else None,
        "mib": mib,
        "samples": samples,
        "nominal": nominal,
    }


def _sid(store, name: str) -> int:
    return int(
        store.sql(
            "SELECT source_id FROM sources WHERE uri LIKE $u", params={"u": f"%{name}"}
        ).fetchall()[0][0]
    )


@pytest.fixture
def real(store):
    """An LMT record with a counter reset and an iostat record of one disk."""
    store.load(LMT)
    store.load(IOSTAT)
    return store


@pytest.fixture
def brw(store):
    for p in BRW:
        store.load(p)
    return store


# --------------------------------------------------------------------------- inputs


def test_inputs_one_row_per_input_and_table(real, brw):
    table = devices.inputs(real)
    c = real.sql("SELECT * FROM counters").df()
    h = real.sql("SELECT * FROM size_hist").df()
    uri = dict(real.sql("SELECT source_id, uri FROM sources").fetchall())
    expected = []
    for name, df, usable in (
        ("counters", c, c["metric"].isin(["read_bytes", "write_bytes"])),
        ("size_hist", h, h["section"] == "disk I/O size"),
    ):
        for sid, g in df.groupby("source_id", sort=True):
            expected.append(
                (
                    name,
                    int(sid),
                    uri[sid].replace("\\", "/").rsplit("/", 1)[-1],
                    g["target"].nunique(),
                    df.loc[usable & (df["source_id"] == sid), "target"].nunique(),
                    len(g),
                    g["ts"].min(),
                    g["ts"].max(),
                    float(g["interval_s"].median()),
                )
            )
    cols = ["table", "source_id", "input", "targets", "usable_targets", "rows", "first_ts"]
    got = [
        (*r[:6], r[6], r[7], float(r[8]))
        for r in table[[*cols, "last_ts", "interval_s"]].itertuples(index=False)
    ]
    assert got == expected
    assert list(table.columns) == [
        "table",
        "source_id",
        "kind",
        "input",
        "targets",
        "usable_targets",
        "rows",
        "first_ts",
        "last_ts",
        "interval_s",
        "all_targets",
    ]
    # an LMT OST, a brw_stats OST and an sd disk are whole targets: all kept by default
    assert (table["all_targets"] == table["targets"]).all()


def test_inputs_filters_targets_and_window(store):
    _counters(store, 1, "a", [1, 2, 3, 4, 5])
    _counters(store, 2, "b", [1, 2, 3])
    t = devices.inputs(store, targets="a", start="2024-01-01T00:00:20", end="2024-01-01T00:00:40")
    # samples end at 10, 20, ... 50 s: (20 s, 40 s] keeps 30 and 40, two metrics each
    assert t["source_id"].tolist() == [1] and t["rows"].tolist() == [4]
    assert t["first_ts"].iloc[0] == pd.Timestamp("2024-01-01T00:00:30")
    assert t["last_ts"].iloc[0] == pd.Timestamp("2024-01-01T00:00:40")
    # an aware time is converted to UTC (the store's naive convention)
    aware = devices.inputs(store, targets=["a"], end="2024-01-01T01:00:40+01:00")
    assert aware["rows"].tolist() == [8]
    with pytest.raises(ReportError, match="start 'yesterday' is not a date and time"):
        devices.inputs(store, start="yesterday")


# --------------------------------------------------------------------------- device load


def test_counter_load_rows_match_a_naive_loop(real):
    load = devices.counter_load(real)
    assert len(load) == load[["source_id", "target"]].drop_duplicates().shape[0]
    for row in load.itertuples():
        nv = _naive(real, row.source_id, row.target)
        assert row.peak_mib_s * MIB == pytest.approx(nv["peak"])
        assert row.peak_ts == nv["peak_ts"]
        assert row.observed_s == pytest.approx(nv["observed"])
        assert row.gap_s == pytest.approx(nv["gap"])
        assert row.share_below == pytest.approx(nv["share_below"])
        assert row.idle_share == pytest.approx(nv["idle_s"] / nv["observed"])
        assert row.idle_periods == nv["periods"]
        assert row.longest_idle_s == pytest.approx(nv["longest_s"])
        assert row.mib == pytest.approx(nv["mib"])
        assert row.mean_mib_s == pytest.approx(nv["mib"] / nv["observed"])
        flagged = sum(math.isnan(r) for _, _, r in nv["samples"])
        assert row.samples == len(nv["samples"]) and row.flagged == flagged
    lmt = _sid(real, LMT.name)
    assert load.loc[load["source_id"] == lmt, "flagged"].iloc[0] > 0  # the counter reset
    assert load.params["share_fraction"] == 0.33 and load.params["idle_fraction"] == 0.05


def test_counter_load_fractions_and_silent_targets(store):
    _counters(store, 1, "a", [100, 40, 20, 4, 100])
    _counters(store, 1, "quiet", [0, 0, 0])
    load = devices.counter_load(store, share_fraction=0.5, idle_fraction=0.3)
    a = load[load["target"] == "a"].iloc[0]
    nv = _naive(store, 1, "a", frac=0.5, idle_frac=0.3)
    # below 50 of 100: 40, 20 and 4; idle below 30: the run 20, 4
    assert a["share_below"] == pytest.approx(nv["share_below"]) == pytest.approx(3 / 5)
    assert a["idle_periods"] == nv["periods"] == 1
    assert a["longest_idle_s"] == pytest.approx(nv["longest_s"]) == pytest.approx(20.0)
    q = load[load["target"] == "quiet"].iloc[0]
    assert q["peak_mib_s"] == 0 and q["note"] == "no traffic" and pd.isna(q["peak_ts"])
    assert math.isnan(q["share_below"]) and q["observed_s"] == pytest.approx(30.0)
    assert load.params["share_fraction"] == 0.5 and load.params["idle_fraction"] == 0.3


def test_time_window_and_targets_filter(store):
    _counters(store, 1, "a", [100, 0, 0, 0, 100])
    _counters(store, 1, "b", [0, 0, 7, 0, 0])
    load = devices.counter_load(store, targets=["a"], start="2024-01-01T00:00:15")
    assert load["target"].tolist() == ["a"]
    # samples end at 10, 20, ... 50 s: (15 s, end] keeps the last four
    assert load["samples"].iloc[0] == 4
    r = devices.rates(store, 1, targets="b", end="2024-01-01T00:00:30")
    assert sorted(r["target"].unique()) == ["b"] and r["ts"].max() == pd.Timestamp(
        "2024-01-01T00:00:30"
    )
    assert r.params["source_id"] == 1
    assert set(r["metric"]) == {"read_bytes", "write_bytes"}
    raw = store.sql(
        "SELECT ts, value / interval_s AS rate FROM counters WHERE target = 'b' "
        "AND metric = 'read_bytes' AND ts <= TIMESTAMP '2024-01-01 00:00:30' ORDER BY ts"
    ).df()
    got = r[r["metric"] == "read_bytes"].sort_values("ts")
    assert got["rate_per_s"].tolist() == pytest.approx(raw["rate"].tolist())


def test_same_target_in_two_inputs_is_never_added(store):
    _counters(store, 1, "a", [100, 0, 0, 0, 100])
    _counters(store, 2, "a", [100, 0, 0, 0, 100], t0="2024-02-01")
    _counters(store, 3, "a", [100, 0, 0, 0, 50], t0="2024-03-01")
    _counters(store, 3, "b", [1, 2])
    load = devices.counter_load(store)
    a = load[load["target"] == "a"]
    assert a["source_id"].tolist() == [1, 2, 3]
    assert a["mib"].tolist() == pytest.approx([_naive(store, s, "a")["mib"] for s in (1, 2, 3)])
    dup = devices.duplicates(load)
    # inputs 1 and 2 hold the same record; input 3 moved 25% less data
    assert dup["target"].tolist() == ["a"] and dup["source_ids"].tolist() == [(1, 2)]
    assert dup["samples"].tolist() == [5] and dup["mib"].tolist() == pytest.approx(
        [_naive(store, 1, "a")["mib"]]
    )
    assert devices.duplicates(load, rtol=0.5)["source_ids"].tolist() == [(1, 2, 3)]
    assert devices.duplicates(load[load["source_id"] != 2]).empty


def test_pick_source(real):
    load = devices.counter_load(real)
    lmt, io = _sid(real, LMT.name), _sid(real, IOSTAT.name)
    obs = {
        s: _naive(real, s, t)["observed"]
        for s, t in load[["source_id", "target"]].itertuples(index=False)
    }
    assert devices.pick_source(load) == max(obs, key=obs.get)
    assert devices.pick_source(load, io) == io
    with pytest.raises(ReportError, match=f"source_id 999 .*inputs that do: {min(lmt, io)}"):
        devices.pick_source(load, 999)
    with pytest.raises(ReportError, match="no device or server moved data"):
        devices.pick_source(load.iloc[0:0])


def test_pick_source_ties(store):
    # inputs 1 and 2 observe 50 s, input 2 with two targets; input 3 is silent
    _counters(store, 1, "a", [1, 2, 3, 4, 5])
    _counters(store, 2, "a", [1, 2, 3, 4, 5])
    _counters(store, 2, "b", [5, 4, 3, 2, 1])
    _counters(store, 3, "a", [0] * 9)
    load = devices.counter_load(store)
    assert devices.pick_source(load) == 2
    assert devices.pick_source(load[load["target"] == "a"]) == 1  # then the lower id
    with pytest.raises(ReportError, match="source_id 3 has no read/write byte counters"):
        devices.pick_source(load, 3)


def test_main_target_prefers_more_intervals(brw):
    series = fsu.fsu_series(brw, fsu.table_i_model())
    n = series.groupby("target").size()
    assert devices.main_target(series) == n.idxmax()
    assert devices.main_target(series.iloc[0:0]) is None
    ts = pd.Timestamp("2024-01-01")
    s = pd.DataFrame(
        {
            "target": ["x", "x", "y", "y", "y", "z", "z", "z"],
            "ts": [ts] * 8,
            "fsu_pct": [1.0, 1.0, 1.0, 1.0, np.nan, 1.0, 1.0, np.nan],
            "read_ios": [1, 1, 1, 1, 1, 1, 1, 9],
            "write_ios": [0] * 8,
        }
    )
    # two used intervals each; y and z have three in all; z has more disk I/Os
    assert devices.main_target(s) == "z"
    assert devices.main_target(s[s["target"] != "z"]) == "y"
    assert devices.main_target(s.assign(read_ios=1)) == "y"  # then the first by name


# --------------------------------------------------------------------------- empty input


def test_empty_store(store):
    assert devices.inputs(store).empty
    empty = devices.counter_load(store)
    assert empty.empty and list(empty.columns)[:4] == ["source_id", "kind", "input", "target"]
    assert devices.duplicates(empty).empty
    assert devices.rates(store, 1).empty
    assert devices.main_target(fsu.fsu_series(store, fsu.table_i_model())) is None


# --------------------------------------------------------------------------- burst view


def _direct(store, source_id, *, targets=None, start=None, end=None, bin_s=None, frac, idle):
    """What the notebook computed before burst_view: the bursts functions called one by one."""
    r = devices.rates(store, source_id, targets=targets, start=start, end=end, bin_s=bin_s)
    series = bursts.aggregate(r)
    return (
        r,
        series,
        bursts.segment(series, threshold=idle),
        bursts.share_below(series, frac),
        bursts.idle_table(series, idle_fraction=idle),
    )


def _assert_view_is(view, source_id, direct):
    r, series, phases, share, idle = direct
    assert view.source_id == source_id
    pd.testing.assert_frame_equal(view.rates, r)
    pd.testing.assert_series_equal(view.series, series)
    pd.testing.assert_frame_equal(view.phases, phases)
    assert view.share == share
    pd.testing.assert_frame_equal(view.idle, idle)
    assert view.phases.evidence == phases.evidence and view.idle.evidence == idle.evidence


@pytest.mark.parametrize("kw", [{}, {"share_fraction": 0.5, "idle_fraction": 0.2}])
def test_burst_view_equals_the_bursts_functions(real, kw):
    frac, idle = kw.get("share_fraction", 0.33), kw.get("idle_fraction", 0.05)
    load = devices.counter_load(real, share_fraction=frac, idle_fraction=idle)
    src = devices.pick_source(load)
    view = devices.burst_view(real, **kw)
    _assert_view_is(view, src, _direct(real, src, frac=frac, idle=idle))
    # the longest record: the LMT one, whose counter reset leaves a gap
    assert src == _sid(real, LMT.name) and view.phases.evidence["gap_s"] > 0
    # given the load, the same view without computing it again
    again = devices.burst_view(real, load=load, **kw)
    _assert_view_is(again, src, _direct(real, src, frac=frac, idle=idle))
    with pytest.raises(AttributeError):
        view.source_id = 0  # frozen


def test_burst_view_of_a_chosen_input_window_and_bins(real):
    io = _sid(real, IOSTAT.name)
    view = devices.burst_view(real, io)
    _assert_view_is(view, io, _direct(real, io, frac=0.33, idle=0.05))
    first, last = real.sql(
        "SELECT min(ts), max(ts) FROM counters WHERE source_id = $s", params={"s": io}
    ).fetchall()[0]
    mid = first + (last - first) / 2
    kw = {"targets": ["sda"], "start": str(first), "end": str(mid), "bin_s": 10.0}
    load = devices.counter_load(real, **kw)
    view = devices.burst_view(real, io, load=load, **kw)
    _assert_view_is(view, io, _direct(real, io, frac=0.33, idle=0.05, **kw))
    assert view.series.index.max() <= pd.Timestamp(mid)
    assert view.series.evidence["interval_s"] == pytest.approx(10.0)
    # an input without traffic while another has some is a mistake in the parameters
    with pytest.raises(ReportError, match="source_id 999 has no read/write byte counters"):
        devices.burst_view(real, 999)


def test_burst_view_none_on_an_empty_store(store):
    assert devices.burst_view(store) is None
    assert devices.burst_view(store, 1, load=devices.counter_load(store)) is None


def test_burst_view_none_with_brw_stats_only(brw):
    assert brw.row_counts().get("size_hist") and not brw.row_counts().get("counters")
    assert devices.burst_view(brw) is None
    assert devices.burst_view(brw, 3, share_fraction=0.5) is None  # whatever the input
    assert devices.burst_view(brw, targets=["testfs-OST0000"]) is None


def test_burst_view_none_for_an_all_zero_series(store):
    _counters(store, 1, "a", [0.0] * 6)
    _counters(store, 1, "b", [0.0] * 6)
    load = devices.counter_load(store)
    assert len(load) == 2 and (load["peak_mib_s"] == 0).all()
    assert devices.burst_view(store) is None
    assert devices.burst_view(store, 1, load=load) is None
    # traffic outside the window does not count
    _counters(store, 2, "c", [5.0, 0.0, 0.0], t0="2024-02-01")
    assert devices.burst_view(store, start="2024-01-31") is not None
    assert devices.burst_view(store, end="2024-01-31") is None
    assert devices.burst_view(store, targets=["a", "b"]) is None
