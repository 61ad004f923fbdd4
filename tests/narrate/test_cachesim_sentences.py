"""iochar.narrate.cachesim: every number from the results, names escaped."""

from __future__ import annotations

import pandas as pd

from iochar.analyze import cachesim
from iochar.narrate import cachesim as narrate


def _grid(waits, sizes=(0, 2 * cachesim.MW, 16 * cachesim.MW)):
    return pd.DataFrame({"cache_bytes": list(sizes), "policy": "both", "copies": 2,
                         "io_wait_s": waits, "cpu_idle_s": waits,
                         "peak_disk_bps": [1e6, 2e6, 3 * 2**20]})  # fmt: skip


def test_recommendation_names_the_smallest_cache_that_hides_enough():
    s = narrate.recommendation(_grid([100.0, 5.0, 1.0]), "job 1")
    assert s.startswith("A cache of 2 MW (16.0 MiB) hides 95.0% of the I/O wait of job 1")
    assert s.endswith("the disk still sees a peak of 1.9 MiB/s.")


def test_recommendation_when_no_cache_hides_enough_or_there_is_no_wait():
    s = narrate.recommendation(_grid([100.0, 60.0, 50.0]), "job 1")
    assert s.startswith("Even the best cache tried, 16 MW (128.0 MiB) hides only 50.0%")
    assert "3.0 MiB/s" in s
    assert "never waits for I/O" in narrate.recommendation(_grid([0.0, 0.0, 0.0]), "job 1")
    assert "No simulation runs" in narrate.recommendation(_grid([1.0, 1.0, 1.0])[:0], "job 1")


def test_a_hostile_application_name_is_escaped():
    label = narrate.job_label(3, "<img src=x onerror=alert(1)>*")
    assert "<img" not in label.replace("\\<img", "")
    assert label.startswith("job 3 (")


def test_policy_effect_quotes_both_runs():
    g = pd.DataFrame({"cache_bytes": 4 * cachesim.MW, "policy": ["none", "write-behind"],
                      "copies": 2, "cpu_idle_s": [211.0, 1.0]})  # fmt: skip
    s = narrate.policy_effect(g, 4 * cachesim.MW)
    assert "CPU idle time is 3.52 min without read-ahead or write-behind" in s
    assert "write-behind to 1 s" in s
