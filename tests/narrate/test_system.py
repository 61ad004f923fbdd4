"""Narrative of notebook 02-system-load: the numbers in the sentences are the data's.

Expected values are computed here from the raw ``counters`` / ``size_hist`` rows with
naive pandas and Python loops (Carns et al. 2011 section 4; Uselton & Wright 2013
Eq. 7), never by the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from iochar.analyze import bursts, fsu
from iochar.errors import ReportError
from iochar.narrate import fmt_bytes, fmt_pct, fmt_rate, fmt_s, plural, system
from tests.conftest import DATA_DIR

LMT = DATA_DIR / "lmt" / "lmtdb-reset-ost.csv"
IOSTAT = DATA_DIR / "iostat" / "rhel8-sysstat11.7.3-x-t-m.iostat"
BRW = [
    DATA_DIR / "brw_stats" / "ldiskfs-lctl-series.txt",
    DATA_DIR / "brw_stats" / "zfs-lustrefs-OST0000-series.txt",
]
FIO = DATA_DIR / "fio" / "iochar-calibrate-vda-ext4.json"
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


@pytest.fixture
def real(store):
    """An LMT record with a counter reset and an iostat record of one disk."""
    store.load(LMT)
    store.load(IOSTAT)
    return store


def _sid(store, name: str) -> int:
    return int(
        store.sql(
            "SELECT source_id FROM sources WHERE uri LIKE $u", params={"u": f"%{name}"}
        ).fetchall()[0][0]
    )


# --------------------------------------------------------------------------- device load


def test_counter_load_rows_match_a_naive_loop(real):
    load = system.counter_load(real)
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


def test_device_load_states_the_data(real):
    load = system.counter_load(real)
    text = system.device_load(load)
    lmt, io = _sid(real, LMT.name), _sid(real, IOSTAT.name)
    nv = {
        sid: _naive(real, sid, t)
        for sid, t in load[["source_id", "target"]].itertuples(index=False)
    }
    top = max(nv, key=lambda s: nv[s]["peak"])
    top_target = load.loc[load["source_id"] == top, "target"].iloc[0]
    assert f"**{plural(len(load), 'target')}** in {plural(2, 'input')}" in text
    assert f"The highest peak is **{top_target}** in input {top}" in text
    assert fmt_rate(nv[top]["peak"]) in text
    med = float(np.median([v["share_below"] for v in nv.values()]))
    assert f"for {fmt_pct(med)} of its observed time" in text
    longest = max(nv, key=lambda s: nv[s]["longest_s"])
    assert f"the longest lasted {fmt_s(nv[longest]['longest_s'])}" in text
    assert "lmtdb-reset-ost.csv" in text and "rhel8-sysstat11.7.3-x-t-m.iostat" in text
    # the LMT record's reset leaves a gap; the iostat record has none
    assert nv[lmt]["gap"] > 0 and nv[io]["gap"] == 0
    assert f"{plural(1, 'target')} have gaps" in text
    assert f"{fmt_s(nv[lmt]['gap'])} on snx11168-OST00ad in input {lmt}" in text


def test_device_load_follows_the_data(store):
    _counters(store, 1, "a", [100, 0, 0, 0, 100])
    _counters(store, 1, "b", [50, 50, 50, 50, 50])
    text = system.device_load(system.counter_load(store))
    na, nb_ = _naive(store, 1, "a"), _naive(store, 1, "b")
    assert na["share_below"] > nb_["share_below"]
    assert f"the burstiest is a in input 1 (below for {fmt_pct(na['share_below'])}" in text
    assert f"the most steadily loaded b in input 1 (below for {fmt_pct(nb_['share_below'])}" in text
    assert f"the longest lasted {fmt_s(na['longest_s'])}, on a in input 1" in text
    assert "No gaps" in text and "No traffic" not in text
    # a second input: a longer idle target, a silent one, and the same name "a" again
    _counters(store, 2, "c", [0] * 8 + [10], t0="2024-02-01")
    _counters(store, 2, "d", [0] * 4, t0="2024-02-01")
    _counters(store, 2, "a", [100, 0, 0, 0, 100], t0="2024-02-01")
    load = system.counter_load(store)
    assert len(load[load["target"] == "a"]) == 2  # never added across inputs
    text2 = system.device_load(load)
    nc = _naive(store, 2, "c")
    assert nc["longest_s"] > na["longest_s"]
    assert f"the longest lasted {fmt_s(nc['longest_s'])}, on c in input 2" in text2
    assert "No traffic at all on 1 target: d in input 2" in text2
    assert "a in inputs 1 and 2" in text2  # the same record loaded twice
    assert text2 != text


def test_time_window_and_targets_filter(store):
    _counters(store, 1, "a", [100, 0, 0, 0, 100])
    _counters(store, 1, "b", [0, 0, 7, 0, 0])
    load = system.counter_load(store, targets=["a"], start="2024-01-01T00:00:15")
    assert load["target"].tolist() == ["a"]
    # samples end at 10, 20, ... 50 s: (15 s, end] keeps the last four
    assert load["samples"].iloc[0] == 4
    r = system.rates(store, 1, targets="b", end="2024-01-01T00:00:30")
    assert sorted(r["target"].unique()) == ["b"] and r["ts"].max() == pd.Timestamp(
        "2024-01-01T00:00:30"
    )


def test_pick_source(real):
    load = system.counter_load(real)
    lmt, io = _sid(real, LMT.name), _sid(real, IOSTAT.name)
    obs = {
        s: _naive(real, s, t)["observed"]
        for s, t in load[["source_id", "target"]].itertuples(index=False)
    }
    assert system.pick_source(load) == max(obs, key=obs.get)
    assert system.pick_source(load, io) == io
    with pytest.raises(ReportError, match=f"source_id 999 .*inputs that do: {min(lmt, io)}"):
        system.pick_source(load, 999)
    with pytest.raises(ReportError, match="no device or server moved data"):
        system.pick_source(load.iloc[0:0])


def test_burst_summary_numbers(real):
    lmt = _sid(real, LMT.name)
    load = system.counter_load(real)
    series = bursts.aggregate(system.rates(real, lmt))
    phases = bursts.segment(series, threshold=0.05)
    share = bursts.share_below(series, 0.33)
    idle = bursts.idle_table(series, idle_fraction=0.05)
    text = system.burst_summary(load, lmt, phases=phases, share=share, idle=idle)
    nv = _naive(real, lmt, "snx11168-OST00ad")
    assert text.startswith(f"**Input {lmt} (lmt, lmtdb-reset-ost.csv)**")
    assert f"{fmt_s(nv['observed'])} observed and {fmt_s(nv['gap'])} of gaps" in text
    assert f"Peak {fmt_rate(nv['peak'])}" in text
    assert f"**{fmt_pct(nv['share_below'])}** of the observed time" in text
    assert f"{plural(nv['periods'], 'idle period')} (below 5% of peak)" in text
    assert f"add up to {fmt_s(nv['idle_s'])}" in text
    assert f"the longest ran {fmt_s(nv['longest_s'])}" in text
    assert nv["longest_start"].strftime("from %Y-%m-%d %H:%M:%S") in text
    assert nv["longest_end"].strftime("to %Y-%m-%d %H:%M:%S UTC") in text
    # bursts: runs of valid samples at or above 5% of peak, and their share of the bytes
    runs, cur, burst_bytes, total = 0, False, 0.0, 0.0
    for _, _, r in nv["samples"]:
        hit = not math.isnan(r) and r >= 0.05 * nv["peak"]
        runs += hit and not cur
        cur = hit
        if not math.isnan(r):
            total += r * nv["nominal"]
            burst_bytes += r * nv["nominal"] * hit
    assert f"{plural(runs, 'burst')} (at or above 5% of peak) carried " in text
    assert f"{fmt_pct(burst_bytes / total)} of the {fmt_bytes(total)}" in text


def test_burst_summary_without_idle_time(store):
    _counters(store, 1, "a", [100, 90, 80, 95])
    load = system.counter_load(store)
    series = bursts.aggregate(system.rates(store, 1))
    text = system.burst_summary(
        load,
        1,
        phases=bursts.segment(series, threshold=0.05),
        share=bursts.share_below(series, 0.33),
        idle=bursts.idle_table(series, idle_fraction=0.05),
    )
    assert "No interval was idle (below 5% of peak)." in text
    assert "**0.0%** of the observed time" in text  # no sample below 33 of 100


# --------------------------------------------------------------------------- FSU


def _naive_fsu(store, model) -> pd.DataFrame:
    """Eq. 7 per (target, ts) from the raw histogram rows; reset intervals dropped."""
    h = store.sql("SELECT * FROM size_hist WHERE section = 'disk I/O size'").df()
    rows = []
    for (target, ts), g in h.groupby(["target", "ts"]):
        if (g["quality"].fillna("ok") != "ok").any():
            continue
        a0 = g["op"].map(model.a0_)
        a1 = g["op"].map(model.a1_)
        iv = float(g["interval_s"].max())
        nbytes = g["count"] * g["size_bytes"]
        rows.append(
            {
                "target": target,
                "ts": ts,
                "iv": iv,
                "busy": float((g["count"] * (a0 + a1 * g["size_bytes"])).sum()),
                "bw_busy": float((a1 * nbytes).sum()),
            }
        )
    out = pd.DataFrame(rows)
    out["fsu"] = 100 * out["busy"] / out["iv"]
    return out


@pytest.fixture
def brw(store):
    for p in BRW:
        store.load(p)
    return store


def test_fsu_summary_numbers(brw):
    model = fsu.table_i_model()
    series = fsu.fsu_series(brw, model)
    table = fsu.load_table(series)
    text = system.fsu_summary(series, table)
    nv = _naive_fsu(brw, model)
    n_all = len(brw.sql("SELECT DISTINCT target, ts FROM size_hist").fetchall())
    assert f"{plural(n_all, 'interval')}, {len(nv)} used, {n_all - len(nv)} skipped" in text
    assert f"**{nv['fsu'].max():.1f}%**" in text
    busy = (nv["fsu"] > 30).mean() * 100
    idle = (nv["fsu"] < 2).mean() * 100
    assert f"idle {idle:.0f}%" in text and f"busy {busy:.0f}%" in text
    assert nv["fsu"].max() > 100 and "exceeds 100%" in text
    assert f"With only {plural(len(nv), 'observation')}" in text
    # a disk 1000 times faster: the same I/Os, far lower FSU, nothing above 100%
    fast = fsu.CostModel.from_coefficients(
        {op: (a0 / 1000, a1 / 1000) for op, (a0, a1) in fsu.TABLE_I.items()}
    )
    series2 = fsu.fsu_series(brw, fast)
    text2 = system.fsu_summary(series2, fsu.load_table(series2))
    nv2 = _naive_fsu(brw, fast)
    assert f"**{nv2['fsu'].max():.1f}%**" in text2 and "exceed" not in text2
    assert "idle 100%" in text2 and (nv2["fsu"] < 2).all()


def test_fsu_vs_bandwidth_numbers_and_verdict(brw, store):
    model = fsu.table_i_model()
    ratio = system.load_ratio(fsu.fsu_series(brw, model), model)
    nv = _naive_fsu(brw, model)
    per = nv.groupby("target").agg(busy=("busy", "sum"), bw=("bw_busy", "sum"), iv=("iv", "sum"))
    f_load = (100 * per["busy"] / per["iv"]).mean()
    b_load = (100 * per["bw"] / per["iv"]).mean()
    text = system.fsu_vs_bandwidth(ratio)
    assert f"**{f_load:.1f}%** against a bandwidth-based load of {b_load:.1f}%" in text
    assert f"**{f_load / b_load:.2f}×**" in text
    assert f_load / b_load < 2 and "large transfers dominate" in text
    # small I/Os only: latency dominates and FSU is several times the bandwidth load
    ts = pd.Timestamp("2024-01-01T00:01:00")
    _insert(
        store,
        "size_hist",
        pd.DataFrame(
            {
                "source_id": 9,
                "target": "small",
                "ts": [ts, ts],
                "interval_s": 60.0,
                "section": "disk I/O size",
                "op": ["write", "read"],
                "size_bytes": [4096, 4096],
                "count": [2000, 1000],
                "quality": "ok",
            }
        ),
    )
    small = fsu.fsu_series(store, model, targets=["small"])
    text2 = system.fsu_vs_bandwidth(system.load_ratio(small, model))
    w0, w1 = fsu.TABLE_I["write"]
    r0, r1 = fsu.TABLE_I["read"]
    busy = 2000 * (w0 + w1 * 4096) + 1000 * (r0 + r1 * 4096)
    bw = 2000 * w1 * 4096 + 1000 * r1 * 4096
    assert f"**{busy / bw:.2f}×**" in text2 and busy / bw >= 2
    assert "much busier than bandwidth alone suggests" in text2


def test_transfer_sizes_follow_the_histogram(brw, store):
    h = brw.sql(
        "SELECT op, size_bytes, sum(count) AS n FROM size_hist WHERE section = 'disk I/O size' "
        "AND coalesce(quality, 'ok') = 'ok' GROUP BY ALL"
    ).df()
    text = system.transfer_sizes(fsu.size_histogram(brw))
    w = h[h["op"] == "write"]
    top = w.loc[w["n"].idxmax()]
    assert f"brw_stats, {plural(int(h['n'].sum()), 'I/O')}" in text
    share = float(top["n"]) / float(w["n"].sum())
    assert f"the most common write size is {fmt_bytes(top['size_bytes'])} ({fmt_pct(share)}" in text
    small = float(w.loc[w["size_bytes"] < w.loc[w["n"] > 0, "size_bytes"].max(), "n"].sum())
    assert f"{fmt_pct(small / float(w['n'].sum()))} of the writes are smaller" in text
    _insert(
        store,
        "size_hist",
        pd.DataFrame(
            {
                "source_id": 9,
                "target": "t",
                "ts": pd.Timestamp("2024-01-01T00:01:00"),
                "interval_s": 60.0,
                "section": "disk I/O size",
                "op": "write",
                "size_bytes": [4096, 1 << 20],
                "count": [30, 10],
                "quality": "ok",
            }
        ),
    )
    text2 = system.transfer_sizes(fsu.size_histogram(store, targets=["t"]))
    assert "the most common write size is 4.0 KiB (75.0% of 40 writes)" in text2
    assert "no read" not in text2 and "reads" not in text2


def test_model_summary_and_cost_model(tmp_path):
    table_i = system.cost_model("")
    text = system.model_summary(table_i)
    assert "Uselton & Wright 2013, Table I" in text
    for op, (a0, a1) in fsu.TABLE_I.items():
        assert f"{op}s cost {a0 * 1e3:.3g} ms per I/O plus the bytes at {fmt_rate(1 / a1)}" in text
        assert f"at most {1 / a0:,.0f} I/Os/s" in text
    fitted = system.cost_model(str(FIO))
    text2 = system.model_summary(fitted)
    assert fitted.source_.startswith("fit") and fitted.source_ in text2
    assert f"{fmt_pct(fitted.r2_['write'])} of the write time per I/O" in text2
    assert f"{fitted.a0_['read'] * 1e3:.3g} ms" in text2
    with pytest.raises(ReportError, match="calibration .*nope.json"):
        system.cost_model(str(tmp_path / "nope.json"))


def test_main_target_prefers_more_intervals(brw):
    series = fsu.fsu_series(brw, fsu.table_i_model())
    n = series.groupby("target").size()
    assert system.main_target(series) == n.idxmax()
    assert system.main_target(series.iloc[0:0]) is None


def test_inputs_summary(real, brw):
    table = system.inputs(real)
    text = system.inputs_summary(table)
    c = table[table["table"] == "counters"]
    assert f"device/server counters from {plural(len(c), 'input')}" in text
    assert "brw_stats from 2 inputs" in text
    ivs = real.sql(
        "SELECT source_id, median(interval_s) FROM counters GROUP BY ALL ORDER BY 2"
    ).fetchall()
    assert f"sampled every {fmt_s(ivs[0][1])} and {fmt_s(ivs[-1][1])}" in text
    assert "analysed on its own" in text
    only = system.inputs(real, targets=["testfs-OST0000"])
    assert system.inputs_summary(only).endswith(", but no device/server counters.")


# --------------------------------------------------------------------------- empty input


def test_empty_results_say_so(store):
    empty = system.counter_load(store)
    assert empty.empty
    assert system.device_load(empty) == (
        "No device or server has read/write byte counters in this selection."
    )
    assert system.inputs_summary(system.inputs(store)).startswith("The selection holds no")
    assert system.burst_summary(empty, 1, phases=pd.DataFrame(), share=None, idle=None) == (
        "Input 1 has no throughput to analyse in this selection."
    )
    model = fsu.table_i_model()
    series = fsu.fsu_series(store, model)
    assert system.fsu_summary(series, fsu.load_table(series)).startswith("No brw_stats")
    ratio = system.load_ratio(series, model)
    assert ratio.empty and system.fsu_vs_bandwidth(ratio).startswith("No used FSU interval")
    assert system.transfer_sizes(fsu.size_histogram(store)) == (
        "No disk I/Os in the brw_stats histograms of this selection."
    )
    for text in (system.device_load(empty), system.transfer_sizes(fsu.size_histogram(store))):
        assert "nan" not in text.lower()
