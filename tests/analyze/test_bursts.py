"""Burst / idle phases, throughput CDF and Carns et al. (2011) Table III idle periods.

Every expected number below is worked out by hand in the comments (or by a
naive per-sample Python loop written here), never by the code under test.
"""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iochar.analyze import bursts
from iochar.analyze.bursts import (
    IDLE_BUCKETS,
    aggregate,
    idle_table,
    segment,
    share_below,
    throughput_cdf,
)
from iochar.analyze.throughput import throughput
from iochar.errors import ParameterError
from iochar.result import Column
from tests.conftest import DATA_DIR

LABELS = ["1", "2-5", "6-10", "11-20", "21-30", "31-40", "41-50", "51-60", ">60"]
PEAK = 100.0


def _minutes(values, start=60) -> pd.Series:
    """A one-minute series (numeric index in seconds: interval ends)."""
    return pd.Series(np.asarray(values, float), index=start + 60 * np.arange(len(values)))


def _runs_series(runs, idle_value=0.0) -> pd.Series:
    """busy, run0 x idle, busy, run1 x idle, ..., busy (busy = PEAK)."""
    vals = [PEAK]
    for n in runs:
        vals += [idle_value] * n + [PEAK]
    return _minutes(vals)


# ---------------------------------------------------------------- Table III layout


def test_every_bucket_with_boundaries():
    # idle runs at each bucket edge: 1 | 2, 5 | 6, 10 | 11, 20 | ... | 51, 60 | 61; and 1 again
    runs = [1, 2, 5, 6, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51, 60, 61, 1]
    t = idle_table(_runs_series(runs, idle_value=4.999))
    assert t.index.tolist() == LABELS and t.index.name == "duration_min"
    assert t.columns.tolist() == ["count", "minutes", "percent"]
    # by hand: 1+1 | 2+5 | 6+10 | 11+20 | 21+30 | 31+40 | 41+50 | 51+60 | 61
    assert t["count"].tolist() == [2, 2, 2, 2, 2, 2, 2, 2, 1]
    assert t["minutes"].tolist() == [2, 7, 16, 31, 51, 71, 91, 111, 61]
    # 441 idle minutes + 18 busy minutes = 459 minutes observed
    total = 459
    assert t["percent"].tolist() == pytest.approx([100 * m / total for m in t["minutes"]])
    a = t.evidence
    assert a["interval_s"] == 60 and a["peak_per_s"] == PEAK and a["threshold_per_s"] == 5.0
    assert a["peak_source"] == "observed maximum"
    assert a["idle_s"] == 441 * 60 and a["observed_s"] == total * 60 and a["gap_s"] == 0
    assert a["periods"] == 17 and a["censored_periods"] == 0
    assert a["longest_s"] == 61 * 60
    # the 61-minute run starts after 1 + sum(runs[:15]) + 15 busy minutes = 405 minutes
    assert a["longest_start"] == 60 * (1 + sum(runs[:15]) + 15)


def test_exactly_five_percent_of_peak_is_not_idle():
    # 4.999 idle, 5.0 busy (Carns: "less than 5% of peak"): runs 1 and 2
    t = idle_table(_minutes([PEAK, 4.999, 5.0, 4.999, 4.999, PEAK]))
    assert t.loc["1", "count"] == 1 and t.loc["2-5", "count"] == 1
    assert t.loc["2-5", "minutes"] == 2 and t["count"].sum() == 2
    # relative to a theoretical peak of 1000/s (threshold 50) all four are idle, one run
    t2 = idle_table(_minutes([PEAK, 4.999, 5.0, 4.999, 4.999, PEAK]), peak=1000.0)
    assert t2.loc["2-5", "count"] == 1 and t2.loc["2-5", "minutes"] == 4
    assert t2.evidence["peak_source"] == "given" and t2.evidence["threshold_per_s"] == 50.0


def test_other_idle_fraction():
    # idle_fraction 0.5 -> threshold 50: 49 idle, 50 busy
    t = idle_table(_minutes([PEAK, 49, 49, 50, 49, PEAK]), idle_fraction=0.5)
    assert t.loc["1", "count"] == 1 and t.loc["2-5", "count"] == 1


def test_strict_variant_only_zero_is_idle():
    # [busy, 0 0 0 1 0, busy, 0 x 61, busy] = 69 minutes
    vals = [PEAK, 0, 0, 0, 1, 0, PEAK] + [0] * 61 + [PEAK]
    s = _minutes(vals)
    loose = idle_table(s)
    assert loose["count"].tolist() == [0, 1, 0, 0, 0, 0, 0, 0, 1]
    assert loose["minutes"].tolist() == [0, 5, 0, 0, 0, 0, 0, 0, 61]
    strict = idle_table(s, strict=True)
    assert strict["count"].tolist() == [1, 1, 0, 0, 0, 0, 0, 0, 1]
    assert strict["minutes"].tolist() == [1, 3, 0, 0, 0, 0, 0, 0, 61]
    assert strict["percent"].tolist() == pytest.approx(
        [100 / 69, 300 / 69, 0, 0, 0, 0, 0, 0, 6100 / 69]
    )
    assert strict.evidence["strict"] and strict.evidence["threshold_per_s"] == 0.0
    # strict needs no peak: an all-zero series is one idle period
    z = idle_table(_minutes([0.0] * 70), strict=True)
    assert z.loc[">60", "count"] == 1 and z.loc[">60", "percent"] == pytest.approx(100)
    assert z.evidence["censored_periods"] == 1  # it touches both ends


def test_sub_minute_samples_map_to_fractional_minutes():
    # 5-s samples, numeric index 5..600 (10 minutes, aligned to whole minutes).
    # rate 1200 at t=60 and t=300; rate 60 at t=360; 0 elsewhere.
    t = np.arange(5, 605, 5)
    v = np.zeros(len(t))
    v[t == 60] = v[t == 300] = 1200.0
    v[t == 360] = 60.0
    s = pd.Series(v, index=t)
    native = idle_table(s)  # peak 1200, threshold 60: the 60 sample is not idle
    # idle runs: (0,55] 55 s, (60,295] 235 s, (300,355] 55 s, (360,600] 240 s
    assert native.evidence["interval_s"] == 5
    assert native.loc["1", "count"] == 2
    assert native.loc["1", "minutes"] == pytest.approx(110 / 60)
    assert native.loc["2-5", "count"] == 2
    assert native.loc["2-5", "minutes"] == pytest.approx(475 / 60)
    # Carns' one-minute view: minute rates 100, 0, 0, 0, 100, 5, 0, 0, 0, 0 -> peak 100;
    # minute 6 is exactly 5% (not idle): runs of 3 and 4 minutes
    carns = idle_table(s, interval_s=60)
    assert carns.evidence["interval_s"] == 60 and carns.evidence["peak_per_s"] == pytest.approx(100)
    assert carns["count"].tolist() == [0, 2, 0, 0, 0, 0, 0, 0, 0]
    assert carns["minutes"].tolist() == [0, 7, 0, 0, 0, 0, 0, 0, 0]
    assert carns["percent"].sum() == pytest.approx(70)
    # a 90-s run at 5-s sampling is 1.5 minutes -> "2-5"; 60 s -> "1"; 65 s -> "2-5"
    for n_idle, label in [(18, "2-5"), (12, "1"), (13, "2-5")]:
        vals = [PEAK] + [0.0] * n_idle + [PEAK]
        tt = idle_table(pd.Series(vals, index=5.0 * np.arange(1, len(vals) + 1)))
        assert tt.loc[label, "count"] == 1 and tt["count"].sum() == 1


def test_gaps_are_not_idle():
    # NaN minute inside an idle stretch: runs of 2 and 3, not 6
    s = _minutes([PEAK, 0, 0, np.nan, 0, 0, 0, PEAK])
    t = idle_table(s)
    assert t.loc["2-5", "count"] == 2 and t.loc["2-5", "minutes"] == 5
    assert t.evidence["gap_s"] == 60 and t.evidence["observed_s"] == 7 * 60
    assert t.evidence["censored_periods"] == 2
    assert t["percent"].sum() == pytest.approx(100 * 5 / 7)
    span = idle_table(s, total="span")
    assert span["percent"].sum() == pytest.approx(100 * 5 / 8)
    # missing samples (no row at 240, 300, 360 s) leave a 3-minute hole
    holes = pd.Series([PEAK, 0, 0, 0, 0, PEAK], index=[60, 120, 180, 420, 480, 540])
    h = idle_table(holes)
    assert h.evidence["gap_s"] == 180 and h.evidence["observed_s"] == 360
    assert h.loc["2-5", "count"] == 2 and h.loc["2-5", "minutes"] == 4
    # ... and the same result when the holes are NaN rows instead
    filled = holes.reindex([60, 120, 180, 240, 300, 360, 420, 480, 540])
    pd.testing.assert_frame_equal(idle_table(filled), h, check_like=True)
    phases = segment(holes)
    assert phases["state"].tolist() == ["burst", "idle", "gap", "idle", "burst"]
    gap = phases[phases.state == "gap"].iloc[0]
    assert (gap.start, gap.end, gap.duration_s) == (180, 360, 180)
    assert math.isnan(gap.bytes) and gap.n_samples == 0


def test_flagged_counters_are_gaps():
    t0 = pd.Timestamp("2024-01-01")
    ts = [t0 + pd.Timedelta(minutes=k) for k in range(1, 7)]
    rows = []
    for k, t in enumerate(ts):
        for tgt, rate in (("a", [100, 0, 0, 0, 0, 100][k]), ("b", [0, 0, 0, 0, 0, 50][k])):
            rows.append((tgt, "read_bytes", t, rate * 60.0, 60.0, float(rate), k == 2))
    df = pd.DataFrame(
        rows, columns=["target", "metric", "ts", "amount", "covered_s", "rate_per_s", "flagged"]
    )
    agg = aggregate(df)
    assert agg.tolist()[:2] == [100, 0] and math.isnan(agg.iloc[2]) and agg.iloc[5] == 150
    assert agg.evidence["interval_s"] == 60 and agg.evidence["gaps"] == 1
    t = idle_table(df)  # minute 3 is flagged: runs (1 min) + (2 min)
    assert t.loc["1", "count"] == 1 and t.loc["2-5", "count"] == 1
    assert t.evidence["gap_s"] == 60
    # a (target, metric) pair without a row at some ts makes that ts a gap
    partial = df.drop(df.index[(df.target == "b") & (df.ts == ts[3])])
    assert math.isnan(aggregate(partial).iloc[3])
    # a row covering less than 90% of its interval is a gap too
    short = df.copy()
    short.loc[(short.target == "a") & (short.ts == ts[4]), "covered_s"] = 30.0
    assert math.isnan(aggregate(short).iloc[4])


def test_binned_frame_partly_covered_bins_are_gaps(store):
    # 20-s samples ending 00:00:40 ... 00:03:40, binned by minute
    t0 = pd.Timestamp("2024-01-01 00:00:40")
    rows = [
        ("sda", "read_bytes", t0 + pd.Timedelta(seconds=20 * k), 20.0, v, "ok")
        for k, v in enumerate([0, 0, 0, 600, 0, 0, 0, 0, 0, 1200])
    ]
    store.con.executemany(
        "INSERT INTO counters (target, metric, ts, interval_s, value, quality) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )
    s = bursts.series(store, bin_s=60)
    # bins by sample end: 00:01 {0:40, 1:00} 40 s idle but partial; 00:02 {1:20, 1:40,
    # 2:00} 600 B; 00:03 {2:20, 2:40, 3:00} 0 B; 00:04 {3:20, 3:40} 40 s, partial
    assert s.index.tolist() == [pd.Timestamp(f"2024-01-01 00:0{m}") for m in (1, 2, 3, 4)]
    assert math.isnan(s.iloc[0]) and math.isnan(s.iloc[3])
    assert s.iloc[1:3].tolist() == [10.0, 0.0]
    t = idle_table(throughput(store, bin_s=60))
    assert (
        t.evidence["gap_s"] == 120 and t.evidence["idle_s"] == 60 and t.evidence["peak_per_s"] == 10
    )
    pd.testing.assert_frame_equal(idle_table(s), t)


# ---------------------------------------------------------------- segment


def test_segment_min_durations_by_hand():
    # 60-s samples: B B i B B i i i B i B  (B=100, i=0), peak 100
    s = _minutes([100, 100, 0, 100, 100, 0, 0, 0, 100, 0, 100])
    raw = segment(s)
    assert raw["state"].tolist() == ["burst", "idle", "burst", "idle", "burst", "idle", "burst"]
    # lulls shorter than 2 minutes between bursts are bridged: B(5) i(3) B(3)
    bridged = segment(s, min_idle_s=120)
    assert bridged["state"].tolist() == ["burst", "idle", "burst"]
    assert bridged["duration_s"].tolist() == [300, 180, 180]
    assert bridged["n_relabeled"].tolist() == [1, 0, 1]
    assert bridged["bytes"].tolist() == [400 * 60, 0, 200 * 60]
    assert bridged["mean_per_s"].tolist() == pytest.approx([80, 0, 200 / 3])
    # then bursts shorter than 4 minutes become idle: B(5) i(6)
    both = segment(s, min_idle_s=120, min_burst_s=240)
    assert both["state"].tolist() == ["burst", "idle"]
    # the bridged lull; the two busy samples of the dropped B(3) (its lull was idle anyway)
    assert both["n_relabeled"].tolist() == [1, 2]
    assert both.evidence["threshold_per_s"] == 5.0 and both.evidence["min_burst_s"] == 240
    # threshold 0: any activity is a burst
    z = segment(_minutes([0, 1, 0]), threshold=0)
    assert z["state"].tolist() == ["idle", "burst", "idle"]


def test_segment_datetime_index_keeps_type_and_tz():
    idx = pd.date_range("2024-03-01 00:01", periods=4, freq="1min", tz="Europe/Paris")
    out = segment(pd.Series([0.0, 100, 100, 0], index=idx))
    assert out["start"].iloc[0] == idx[0] - pd.Timedelta(minutes=1)
    assert out["end"].iloc[-1] == idx[-1]
    assert str(out["start"].dt.tz) == "Europe/Paris"
    assert out["peak_per_s"].tolist() == [0, 100, 0]


# ---------------------------------------------------------------- CDF and share below


def test_cdf_and_share_below_by_hand():
    # ten minutes: 0 x4, 10 x3, 33 x1, 50 x1, 100 x1
    s = _minutes([0, 10, 0, 10, 33, 0, 10, 0, 50, 100])
    cdf = throughput_cdf(s)
    assert cdf["rate_per_s"].tolist() == [0, 10, 33, 50, 100]
    assert cdf["share_of_time"].tolist() == pytest.approx([0.4, 0.7, 0.8, 0.9, 1.0])
    assert cdf["fraction_of_peak"].tolist() == pytest.approx([0, 0.1, 0.33, 0.5, 1])
    r = share_below(s, 0.33)  # strictly below 33: 7 of 10 minutes
    assert r.share == pytest.approx(0.7) and r.threshold_per_s == pytest.approx(33)
    assert r.below_s == 420 and r.observed_s == 600 and r.peak_per_s == 100
    assert share_below(s, 0.34).share == pytest.approx(0.8)
    grid = throughput_cdf(s, points=3)  # fractions 0, 0.5, 1
    assert grid["share_of_time"].tolist() == pytest.approx([0.4, 0.9, 1.0])
    # a theoretical peak of 200/s: 25% is 50/s, and 50 is not below it -> 8 of 10 minutes
    assert share_below(s, 0.25, peak=200.0).share == pytest.approx(0.8)


def test_cdf_skips_gaps():
    s = _minutes([0, np.nan, 100, 0])
    r = share_below(s, 0.5)
    assert r.share == pytest.approx(2 / 3) and r.gap_s == 60


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (pd.Series([], dtype=float), "non-empty"),
        (pd.Series([1.0, 2.0], index=[120, 60]), "strictly increase"),
        (pd.Series([1.0, 2.0], index=[60, 60]), "strictly increase"),
        (pd.Series([np.nan, np.nan], index=[60, 120]), "non-NaN"),
        (pd.Series([1.0, -2.0], index=[60, 120]), "finite and >= 0"),
        (pd.Series([1.0, np.inf], index=[60, 120]), "finite and >= 0"),
        (pd.Series([1.0, 2.0], index=["a", "b"]), "indexed by timestamps"),
        (pd.Series(["x", "y"], index=[60, 120]), "numeric rates"),
        (pd.Series([1.0], index=[60]), "'sample_s'"),
        (pd.DataFrame({"ts": [1]}), "columns ts, rate_per_s"),
        ([1.0, 2.0], "pandas Series"),
    ],
)
@pytest.mark.parametrize("fn", [segment, throughput_cdf, share_below, idle_table])
def test_bad_series(fn, bad, match):
    with pytest.raises(ParameterError, match=match):
        fn(bad)


def test_unsorted_datetime_index_message():
    idx = pd.to_datetime(["2024-01-01 00:02", "2024-01-01 00:01"])
    with pytest.raises(ParameterError, match="'series' parameter of idle_table") as ei:
        idle_table(pd.Series([1.0, 2.0], index=idx))
    assert "2024-01-01 00:01:00 after 2024-01-01 00:02:00" in str(ei.value)


def test_single_sample_and_constant_series():
    one = pd.Series([0.0], index=[60])
    t = idle_table(one, sample_s=60, strict=True)
    assert t.loc["1", "count"] == 1 and t.evidence["observed_s"] == 60
    one = Column(one, evidence={"interval_s": 60})
    assert segment(one, threshold=0)["duration_s"].tolist() == [60]
    # constant non-zero: nothing idle, everything one burst, CDF a single step at peak
    c = _minutes([7.0] * 5)
    assert idle_table(c)["count"].sum() == 0
    assert segment(c)["state"].tolist() == ["burst"]
    assert throughput_cdf(c)[["fraction_of_peak", "share_of_time"]].values.tolist() == [[1, 1]]
    assert share_below(c).share == 0
    # constant zero: "% of peak" is undefined without a peak
    z = _minutes([0.0] * 5)
    for fn in (idle_table, segment, throughput_cdf, share_below):
        with pytest.raises(ParameterError, match="'peak'.*every rate of the series is 0"):
            fn(z)
    assert idle_table(z, peak=10.0).loc["2-5", "count"] == 1


@pytest.mark.parametrize(
    ("fn", "kwargs", "name"),
    [
        (idle_table, {"idle_fraction": 0}, "idle_fraction"),
        (idle_table, {"idle_fraction": 1.5}, "idle_fraction"),
        (idle_table, {"idle_fraction": True}, "idle_fraction"),
        (idle_table, {"strict": "yes"}, "strict"),
        (idle_table, {"total": "wall"}, "total"),
        (idle_table, {"interval_s": 30}, "interval_s"),
        (idle_table, {"interval_s": -60}, "interval_s"),
        (idle_table, {"peak": 50.0}, "peak"),
        (idle_table, {"peak": -1}, "peak"),
        (idle_table, {"sample_s": 0}, "sample_s"),
        (segment, {"threshold": -0.1}, "threshold"),
        (segment, {"threshold": 2}, "threshold"),
        (segment, {"min_burst_s": -1}, "min_burst_s"),
        (segment, {"min_idle_s": float("nan")}, "min_idle_s"),
        (throughput_cdf, {"points": 1}, "points"),
        (throughput_cdf, {"points": 2.5}, "points"),
        (share_below, {"fraction": 0}, "fraction"),
        (share_below, {"fraction": 1.2}, "fraction"),
    ],
)
def test_bad_parameters(fn, kwargs, name):
    with pytest.raises(ParameterError, match=f"'{name}' parameter of {fn.__name__}"):
        fn(_minutes([PEAK, 0, 0, PEAK]), **kwargs)


def test_public_functions_document_every_parameter():
    for name in bursts.__all__:
        obj = getattr(bursts, name)
        if not callable(obj) or inspect.isclass(obj):
            continue
        doc = inspect.getdoc(obj)
        section = doc.split("Parameters", 1)[1]
        for p in inspect.signature(obj).parameters.values():
            assert re.search(rf"^{p.name}\b", section, re.M), f"{name}: {p.name} undocumented"


# ---------------------------------------------------------------- properties


def _naive_idle(values, idle_fraction=0.05, strict=False):
    """Idle run lengths of a regular one-minute list (NaN = gap), one sample at a time."""
    finite = [v for v in values if not math.isnan(v)]
    thr = idle_fraction * max(finite)
    runs, cur = [], 0
    for v in values:
        idle = (not math.isnan(v)) and (v == 0 if strict else v < thr)
        if idle:
            cur += 1
        elif cur:
            runs.append(cur)
            cur = 0
    if cur:
        runs.append(cur)
    return runs


def _bucket(minutes: float) -> str:
    for label, lo, hi in IDLE_BUCKETS:
        if lo < minutes <= hi:
            return label
    raise AssertionError(minutes)


RATES = st.sampled_from([0.0, 0.0, 1.0, 4.0, 5.0, 30.0, 100.0, np.nan])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    vals=st.lists(RATES, min_size=2, max_size=300).filter(
        lambda v: any(x > 0 for x in v if not math.isnan(x))
    ),
    strict=st.booleans(),
    min_burst=st.sampled_from([0, 60, 180]),
    min_idle=st.sampled_from([0, 60, 120]),
)
def test_properties(vals, strict, min_burst, min_idle):
    s = _minutes(vals)
    t = idle_table(s, strict=strict)
    a = t.evidence
    # truth from a per-sample loop
    runs = _naive_idle(vals, strict=strict)
    want = {lab: [0, 0] for lab in LABELS}
    for r in runs:
        want[_bucket(r)][0] += 1
        want[_bucket(r)][1] += r
    assert t["count"].tolist() == [want[lab][0] for lab in LABELS]
    assert t["minutes"].tolist() == pytest.approx([want[lab][1] for lab in LABELS])
    n_nan = sum(math.isnan(v) for v in vals)
    assert a["gap_s"] == pytest.approx(60 * n_nan)
    assert t["minutes"].sum() * 60 == pytest.approx(a["idle_s"])
    assert a["idle_s"] <= a["observed_s"] + 1e-9
    assert t["percent"].sum() <= 100 + 1e-9
    assert idle_table(s, strict=strict, total="span")["percent"].sum() <= 100 + 1e-9
    # dropping interior NaN rows (holes instead of NaN) changes nothing
    if not math.isnan(vals[0]) and not math.isnan(vals[-1]):
        pd.testing.assert_frame_equal(idle_table(s.dropna(), strict=strict, sample_s=60), t)
    # phases tile the series: contiguous, no overlap, alternating states
    ph = segment(s, threshold=0 if strict else 0.05, min_burst_s=min_burst, min_idle_s=min_idle)
    assert ph["start"].iloc[0] == 0 and ph["end"].iloc[-1] == 60 * len(vals)
    assert (ph["start"].to_numpy()[1:] == ph["end"].to_numpy()[:-1]).all()
    assert (ph["duration_s"] > 0).all() and ph["duration_s"].sum() == 60 * len(vals)
    assert (ph["state"].to_numpy()[1:] != ph["state"].to_numpy()[:-1]).all()
    assert ph["n_samples"].sum() == len(vals)
    assert ph.loc[ph.state == "gap", "duration_s"].sum() == a["gap_s"]
    assert ph["bytes"].sum() == pytest.approx(np.nansum(np.asarray(vals)) * 60)
    if min_burst == min_idle == 0:
        assert ph["n_relabeled"].sum() == 0
        assert ph.loc[ph.state == "idle", "duration_s"].sum() == pytest.approx(a["idle_s"])
    else:
        bursts_ = ph[ph.state == "burst"]
        assert (bursts_["duration_s"] >= min_burst).all()
        st_ = ph["state"].to_numpy()
        inner = (st_[1:-1] == "idle") & (st_[:-2] == "burst") & (st_[2:] == "burst")
        assert (ph["duration_s"].to_numpy()[1:-1][inner] >= min_idle).all()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    vals=st.lists(RATES, min_size=1, max_size=60).filter(
        lambda v: any(x > 0 for x in v if not math.isnan(x))
    ),
    shift=st.sampled_from([0, 5, 30]),
)
def test_rebinning_to_minutes(vals, shift):
    # each minute as 12 five-second samples of the same rate: one-minute bins give back
    # the minute series; shifted by `shift` s off the minute grid, every bin a NaN touches
    # and both partly covered edge bins are gaps
    fine = pd.Series(np.repeat(vals, 12), index=shift + 5.0 * np.arange(1, 12 * len(vals) + 1))
    if shift and all(math.isnan(a) or math.isnan(b) for a, b in zip(vals, vals[1:], strict=False)):
        with pytest.raises(ParameterError, match="only NaN"):  # every bin is a gap
            idle_table(fine, interval_s=60)
        return
    coarse = idle_table(fine, interval_s=60)
    if shift == 0:
        pd.testing.assert_frame_equal(coarse, idle_table(_minutes(vals), sample_s=60))
        assert coarse.evidence["gap_s"] == 60 * sum(math.isnan(v) for v in vals)
    else:
        # bins: len(vals) + 1, minute k's bin holds 12 - shift/5 samples of minute k and
        # shift/5 of minute k-1
        bins = len(vals) + 1
        gap = (
            [True]
            + [math.isnan(vals[k - 1]) or math.isnan(vals[k]) for k in range(1, len(vals))]
            + [True]
        )
        assert coarse.evidence["span_s"] == 60 * bins
        assert coarse.evidence["gap_s"] == 60 * sum(gap)
        j = shift // 5  # samples of the previous minute in each bin
        binned = [
            math.nan if g else (j * vals[k - 1] + (12 - j) * vals[k]) / 12
            for k, g in enumerate(gap[:-1])
        ] + [math.nan]
        runs = _naive_idle(binned)
        assert coarse["count"].sum() == len(runs)
        assert coarse["minutes"].sum() == pytest.approx(sum(runs))
        assert coarse.evidence["peak_per_s"] == pytest.approx(np.nanmax(binned))


# ---------------------------------------------------------------- real inputs


def _naive_real(store, metrics=("read_bytes", "write_bytes")):
    """Aggregate rate per ts straight from counters, and its idle runs [s] by a loop."""
    df = store.sql(
        "SELECT ts, sum(value) AS amount, max(interval_s) AS interval_s, "
        "bool_or(quality <> 'ok') AS flagged, count(*) AS n "
        "FROM counters WHERE list_contains($m, metric) GROUP BY ts ORDER BY ts",
        {"m": list(metrics)},
    ).df()
    pairs = store.sql(
        "SELECT count(DISTINCT (target, metric)) FROM counters WHERE list_contains($m, metric)",
        {"m": list(metrics)},
    ).fetchall()[0][0]
    rate = df["amount"] / df["interval_s"]
    ok = ~df["flagged"] & (df["n"] == pairs)
    peak = rate[ok].max()
    runs, cur, prev_ts = [], 0.0, None
    for ts, r, good, iv in zip(df["ts"], rate, ok, df["interval_s"], strict=True):
        contiguous = prev_ts is None or (ts - prev_ts).total_seconds() <= 1.5 * iv
        if cur and not contiguous:
            runs.append(cur)
            cur = 0.0
        if good and r < 0.05 * peak:
            cur += iv if prev_ts is None else (ts - prev_ts).total_seconds()
        elif cur:
            runs.append(cur)
            cur = 0.0
        prev_ts = ts
    if cur:
        runs.append(cur)
    return runs, peak


def _check_against_naive(store, t):
    runs, peak = _naive_real(store)
    assert t.evidence["peak_per_s"] == pytest.approx(peak)
    want = dict.fromkeys(LABELS, 0)
    mins = dict.fromkeys(LABELS, 0.0)
    for r in runs:
        want[_bucket(round(r / 60, 9))] += 1
        mins[_bucket(round(r / 60, 9))] += r / 60
    assert t["count"].tolist() == [want[lab] for lab in LABELS]
    assert t["minutes"].tolist() == pytest.approx([mins[lab] for lab in LABELS])


IOSTAT_DISKSTATS = [
    DATA_DIR / "iostat" / "rhel8-sysstat11.7.3-x-t-m.iostat",
    DATA_DIR / "iostat" / "rhel6-sysstat9-x-t-m.iostat",
    DATA_DIR / "iostat" / "vm-sysstat12.6.1-x-t.iostat",
    DATA_DIR / "diskstats" / "vm-linux6.18-3dev.diskstats",
    DATA_DIR / "lmt" / "snx11025_2018-01-28-trimmed.sqlite3",
]


@pytest.mark.parametrize("path", IOSTAT_DISKSTATS, ids=lambda p: p.name)
def test_real_chain_matches_naive(store, path):
    store.load(path)
    df = throughput(store)  # every target, read + write, samples as recorded
    t = idle_table(df)
    _check_against_naive(store, t)
    a = t.evidence
    assert a["gap_s"] == pytest.approx(0, abs=1e-6)
    assert t["percent"].sum() <= 100 + 1e-9
    ph = segment(df, min_burst_s=2 * a["interval_s"])
    assert ph["start"].iloc[0] < ph["end"].iloc[-1]
    assert (ph["start"].iloc[1:].to_numpy() == ph["end"].iloc[:-1].to_numpy()).all()
    total = store.sql(
        "SELECT sum(value) FROM counters WHERE metric IN ('read_bytes', 'write_bytes')"
    ).fetchall()[0][0]
    assert ph["bytes"].sum() == pytest.approx(total)
    cdf = throughput_cdf(df)
    assert cdf["share_of_time"].is_monotonic_increasing and cdf["share_of_time"].iloc[-1] == 1


def test_real_lmt_outage_is_a_gap_not_idle(store):
    # one Cori OST, 5-s samples; the 07:35:45 -> 07:39:05 outage arrives as one
    # 200-s interval flagged gap_reset (see tests/load/test_lmt.py)
    store.load(DATA_DIR / "lmt" / "lmtdb-reset.sqlite3")
    df = throughput(store)
    t = idle_table(df)
    _check_against_naive(store, t)
    assert t.evidence["gap_s"] == 200
    span = (df["ts"].max() - df["ts"].min()).total_seconds() + 5
    assert t.evidence["observed_s"] == span - 200
    ph = segment(df)
    gap = ph[ph.state == "gap"]
    assert len(gap) == 1 and gap["duration_s"].iloc[0] == 200
    assert gap["start"].iloc[0] == pd.Timestamp("2018-04-18 07:35:45")
    assert gap["end"].iloc[0] == pd.Timestamp("2018-04-18 07:39:05")
    # one-minute bins: every bin is partial or holds the outage -> only gaps
    s60 = bursts.series(store, bin_s=60)
    assert s60.isna().all() and s60.evidence["interval_s"] == 60
    with pytest.raises(ParameterError, match="non-NaN"):
        idle_table(s60)


#: iostat-tool's whole sample_iostat.output, xz-compressed (data/iostat/SOURCE.md)
SAMPLE_IOSTAT = DATA_DIR / "iostat" / "rhel6-sysstat9-x-t-m-318s.iostat.xz"


def test_real_five_minutes_of_iostat_in_minute_bins(store):
    # 11 disks, 1-s samples, 14:10:51 -> 14:16:07 (sysstat 9, RHEL 6)
    store.load(SAMPLE_IOSTAT)
    s = bursts.series(store, bin_s=60)
    # the first and last minutes are partly covered: gaps
    assert s.index[0] == pd.Timestamp("2018-06-13 14:11") and math.isnan(s.iloc[0])
    assert math.isnan(s.iloc[-1]) and s.iloc[1:-1].notna().all()
    naive = store.sql(
        "SELECT date_trunc('minute', ts - INTERVAL 1 MICROSECOND) + INTERVAL 1 MINUTE AS m, "
        "sum(value) / 60 AS rate FROM counters "
        "WHERE metric IN ('read_bytes', 'write_bytes') GROUP BY m ORDER BY m"
    ).df()
    assert s.iloc[1:-1].tolist() == pytest.approx(naive["rate"].iloc[1:-1].tolist())
    t = idle_table(s)
    assert t.evidence["interval_s"] == 60 and t.evidence["gap_s"] == 120
    assert t.evidence["peak_per_s"] == pytest.approx(naive["rate"].iloc[1:-1].max())
    # the same from the 1-s samples re-binned inside idle_table
    t2 = idle_table(throughput(store), interval_s=60)
    pd.testing.assert_frame_equal(t, t2, check_like=True)
    native = idle_table(throughput(store))
    _check_against_naive(store, native)
    r = share_below(throughput(store), 0.33)
    assert 0 < r.share <= 1 and r.observed_s == pytest.approx(317)
