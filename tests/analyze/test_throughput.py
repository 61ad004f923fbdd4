"""Throughput series from per-interval counters."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from iochar.analyze.throughput import throughput
from iochar.errors import ParameterError

T0 = dt.datetime(2024, 1, 1)


def _fill(store, rows):
    store.con.executemany(
        "INSERT INTO counters (target, metric, ts, interval_s, value, quality) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )


@pytest.fixture
def counters(store):
    rows = [
        (f"OST{i}", "read_bytes", T0 + dt.timedelta(seconds=5 * k), 5.0, 100.0 * k, "ok")
        for k in range(1, 13)
        for i in range(2)
    ]
    rows.append(("OST0", "write_bytes", T0 + dt.timedelta(seconds=60), 60.0, 600.0, "gap"))
    _fill(store, rows)
    return store, pd.DataFrame(
        rows, columns=["target", "metric", "ts", "interval_s", "value", "quality"]
    )


def test_raw_rates_are_value_over_interval(counters):
    store, raw = counters
    out = throughput(store)
    assert len(out) == len(raw)
    assert (out["rate_per_s"] == out["amount"] / out["covered_s"]).all()
    gap = out[out.metric == "write_bytes"]
    assert gap["flagged"].tolist() == [True] and gap["rate_per_s"].tolist() == [10.0]


def test_bins_sum_amounts_by_interval_end(counters):
    store, raw = counters
    out = throughput(store, metrics=["read_bytes"], targets=["OST1"], bin_s=30)
    sel = raw[(raw.metric == "read_bytes") & (raw.target == "OST1")].copy()
    # naive: bin end = ceil(ts / 30 s) * 30 s
    secs = (sel.ts - T0).dt.total_seconds()
    sel["end"] = T0 + pd.to_timedelta(((secs + 29.999999) // 30) * 30, unit="s")
    naive = sel.groupby("end")["value"].sum()
    assert out["ts"].tolist() == [pd.Timestamp(x) for x in naive.index]
    assert out["amount"].tolist() == naive.tolist()
    assert (out["rate_per_s"] == out["amount"] / 30).all()


def test_bad_parameters(counters):
    store, _ = counters
    with pytest.raises(ParameterError, match="'bin_s' parameter of throughput"):
        throughput(store, bin_s=0)
    with pytest.raises(ParameterError, match="'metrics'"):
        throughput(store, metrics=[])
