"""iochar.plot.cachesim: Figs. 6-8 drawn from simulator results, NoChart when too little."""

from __future__ import annotations

import pandas as pd
import pytest

from iochar.analyze import cachesim
from iochar.plot import cachesim as plot
from iochar.plot._common import NoChart

pytest.importorskip("altair")


def _ops():
    rows = [("write", "/o", k * 4096, 4096, 0.5 * k) for k in range(1, 400)]
    df = pd.DataFrame(rows, columns=["op", "path", "offset", "size", "t_start"])
    return df.assign(rank=0, t_end=df["t_start"])


def test_disk_rate_chart_shows_the_first_seconds_in_one_unit():
    r = cachesim.simulate(_ops(), cache=cachesim.CacheConfig(write_behind=True))
    spec = plot.disk_rate_chart(r, first_s=100.0).to_dict()
    values = next(iter(spec["datasets"].values()))
    assert max(v["t"] for v in values) < 100.0  # the first 100 s only, as Figs. 6-7
    assert {v["op"] for v in values} == {"read", "write"}
    assert spec["encoding"]["y"]["title"].startswith("disk data rate [")
    # the chart's bytes are the run's: write rate x bin over the shown bins
    shown = r.rate[r.rate["t_s"] < 100.0]
    unit = 1024 ** ["B/s", "KiB/s", "MiB/s"].index(spec["encoding"]["y"]["title"][16:-1])
    drawn = sum(v["rate"] for v in values if v["op"] == "write") * unit
    assert drawn == pytest.approx(shown["write_bps"].sum(), rel=1e-9)


def test_idle_chart_one_line_per_policy_and_nochart_for_one_size():
    grid = cachesim.sweep(_ops(), cache_sizes=[0, 8192, 1 << 20], policies=["none", "both"],
                          copies=[1])  # fmt: skip
    spec = plot.idle_chart(grid).to_dict()
    values = next(iter(spec["datasets"].values()))
    assert {v["policy"] for v in values} == {"none", "both"}
    assert len(values) == 6
    one = cachesim.sweep(_ops(), cache_sizes=[8192], policies=["none"], copies=[1])
    assert isinstance(plot.idle_chart(one), NoChart)
    empty = cachesim.simulate(_ops().iloc[:1])
    assert isinstance(plot.disk_rate_chart(empty.rate.iloc[:1]), NoChart)
