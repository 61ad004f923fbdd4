"""Narrative of notebook 02-system-load: the numbers in the sentences are the data's.

Expected values are computed here from the raw ``counters`` / ``size_hist`` rows with
naive pandas and Python loops (Carns et al. 2011 section 4; Uselton & Wright 2013
Eq. 7), never by the code under test. The tables the sentences are made from come from
:mod:`iochar.analyze.devices` (tested in ``tests/analyze/test_devices.py``, whose naive
helpers these tests share) and :mod:`iochar.analyze.fsu`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from iochar.analyze import bursts, devices, fsu
from iochar.errors import ReportError
from iochar.narrate import fmt_bytes, fmt_pct, fmt_rate, fmt_s, plural, system
from tests.analyze.test_devices import BRW, IOSTAT, LMT, _counters, _insert, _naive, _sid
from tests.conftest import DATA_DIR
from tests.narrate import shown

FIO = DATA_DIR / "fio" / "iochar-calibrate-vda-ext4.json"


@pytest.fixture
def real(store):
    """An LMT record with a counter reset and an iostat record of one disk."""
    store.load(LMT)
    store.load(IOSTAT)
    return store


# --------------------------------------------------------------------------- device load


def test_device_load_states_the_data(real):
    load = devices.counter_load(real)
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
    text = system.device_load(devices.counter_load(store))
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
    load = devices.counter_load(store)
    text2 = system.device_load(load)
    nc = _naive(store, 2, "c")
    assert nc["longest_s"] > na["longest_s"]
    assert f"the longest lasted {fmt_s(nc['longest_s'])}, on c in input 2" in text2
    assert "No traffic at all on 1 target: d in input 2" in text2
    assert "a in inputs 1 and 2" in text2  # the same record loaded twice
    assert text2 != text


def test_burst_summary_numbers(real):
    lmt = _sid(real, LMT.name)
    load = devices.counter_load(real)
    series = bursts.aggregate(devices.rates(real, lmt))
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
    load = devices.counter_load(store)
    series = bursts.aggregate(devices.rates(store, 1))
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
    ratio = fsu.load_ratio_or_empty(fsu.fsu_series(brw, model), model)
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
    text2 = system.fsu_vs_bandwidth(fsu.load_ratio_or_empty(small, model))
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
    table_i = fsu.cost_model("")
    text = shown(system.model_summary(table_i))
    assert "Uselton & Wright 2013, Table I" in text
    for op, (a0, a1) in fsu.TABLE_I.items():
        assert f"{op}s cost {a0 * 1e3:.3g} ms per I/O plus the bytes at {fmt_rate(1 / a1)}" in text
        assert f"at most {1 / a0:,.0f} I/Os/s" in text
    fitted = fsu.cost_model(str(FIO))
    text2 = system.model_summary(fitted)
    assert fitted.source_.startswith("fit") and fitted.source_ in text2
    assert f"{fmt_pct(fitted.r2_['write'])} of the write time per I/O" in text2
    assert f"{fitted.a0_['read'] * 1e3:.3g} ms" in text2
    with pytest.raises(ReportError, match="calibration .*nope.json"):
        fsu.cost_model(str(tmp_path / "nope.json"))


def test_inputs_summary(real, brw):
    table = devices.inputs(real)
    text = system.inputs_summary(table)
    c = table[table["table"] == "counters"]
    assert f"device/server counters from {plural(len(c), 'input')}" in text
    assert "brw_stats from 2 inputs" in text
    ivs = real.sql(
        "SELECT source_id, median(interval_s) FROM counters GROUP BY ALL ORDER BY 2"
    ).fetchall()
    assert f"sampled every {fmt_s(ivs[0][1])} and {fmt_s(ivs[-1][1])}" in text
    assert "analysed on its own" in text
    only = devices.inputs(real, targets=["testfs-OST0000"])
    assert system.inputs_summary(only).endswith(", but no device/server counters.")


# --------------------------------------------------------------------------- empty input


def test_empty_results_say_so(store):
    empty = devices.counter_load(store)
    assert empty.empty
    assert system.device_load(empty) == (
        "No device or server has read/write byte counters in this selection."
    )
    assert system.inputs_summary(devices.inputs(store)).startswith("The selection holds no")
    assert system.burst_summary(empty, 1, phases=pd.DataFrame(), share=None, idle=None) == (
        "Input 1 has no throughput to analyse in this selection."
    )
    model = fsu.table_i_model()
    series = fsu.fsu_series(store, model)
    assert system.fsu_summary(series, fsu.load_table(series)).startswith("No brw_stats")
    ratio = fsu.load_ratio_or_empty(series, model)
    assert ratio.empty and system.fsu_vs_bandwidth(ratio).startswith("No used FSU interval")
    assert system.transfer_sizes(fsu.size_histogram(store)) == (
        "No disk I/Os in the brw_stats histograms of this selection."
    )
    for text in (system.device_load(empty), system.transfer_sizes(fsu.size_histogram(store))):
        assert "nan" not in text.lower()


# --------------------------------------------------------------------------- burst view


def test_burst_view_summary_is_the_burst_summary_of_the_view(real):
    load = devices.counter_load(real)
    view = devices.burst_view(real, load=load)
    text = system.burst_view_summary(load, view)
    direct = system.burst_summary(
        load, view.source_id, phases=view.phases, share=view.share, idle=view.idle
    )
    assert text == direct
    lmt = _sid(real, LMT.name)
    nv = _naive(real, lmt, "snx11168-OST00ad")
    assert text.startswith(f"**Input {lmt} (lmt, lmtdb-reset-ost.csv)**")
    assert f"**{fmt_pct(nv['share_below'])}** of the observed time" in text


def test_burst_view_summary_without_counters(store):
    empty = system.burst_view_summary(devices.counter_load(store), devices.burst_view(store))
    assert empty.startswith("No device or server counters with read/write bytes in this selection;")
    assert "iostat, /proc/diskstats or Lustre LMT" in empty and "no charts" in empty
    assert system.burst_view_summary(None, None) == empty
    for path in BRW:  # brw_stats histograms only: the same sentence
        store.load(path)
    load = devices.counter_load(store)
    assert system.burst_view_summary(load, devices.burst_view(store, load=load)) == empty


def test_burst_view_summary_without_traffic(store):
    _counters(store, 1, "sdb", [0.0] * 5)
    _counters(store, 1, "sda", [0.0] * 5)
    _counters(store, 2, "sda", [0.0] * 3, t0="2024-02-01")
    load = devices.counter_load(store)
    view = devices.burst_view(store, load=load)
    assert view is None
    text = system.burst_view_summary(load, view)
    assert text.startswith("No device or server moved data in this selection:")
    assert "counters of sda and sdb (in 2 inputs)" in text
    assert "no bursts or idle periods" in text and "nan" not in text.lower()
    one = devices.counter_load(store, targets="sdb")
    assert "counters of sdb (in 1 input)" in system.burst_view_summary(one, None)


def test_burst_summary_accepts_missing_results(store):
    _counters(store, 1, "a", [100, 0, 0, 90])
    load = devices.counter_load(store)
    series = bursts.aggregate(devices.rates(store, 1))
    phases = bursts.segment(series, threshold=0.05)
    expected = "Input 1 has no throughput to analyse in this selection."
    assert system.burst_summary(load, 1, phases=None, share=None, idle=None) == expected
    assert system.burst_summary(load, 1, phases=phases, share=None, idle=None) == expected
    share = bursts.share_below(series, 0.33)
    assert system.burst_summary(load, 1, phases=phases, share=share, idle=None) == expected
