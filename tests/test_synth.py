"""Synthetic workloads: shaped like Miller & Katz's applications, truth recovered."""

from __future__ import annotations

import io

import numpy as np
import pyarrow.parquet as pq
import pytest

import iochar
from iochar.analyze.characterize import app_table, rates_table
from iochar.analyze.classify import classify
from iochar.errors import ParameterError
from iochar.synth import SCENARIOS, Workload, make_scenario, make_workload, write_trace

#: Miller & Katz Table 2: read MB/s, write MB/s, read/write data ratio; Table 1: avg I/O MB
PAPER = {
    "bvi": (12.3, 5.34, 2.31, 0.016),
    "ccm": (4.25, 3.96, 1.07, 0.031),
    "forma": (62.2, 5.68, 11.0, 0.030),
    "gcm": (0.011, 0.12, 0.09, 0.031),
    "les": (24.0, 25.2, 0.95, 0.317),
    "upw": (0.001, 0.01, 0.12, 0.445),
    "venus": (26.4, 14.7, 1.80, 0.032),
}


def _load(ops) -> iochar.Store:
    db = iochar.connect(":memory:")
    buf = io.BytesIO()
    pq.write_table(ops, buf)
    db.load(buf.getvalue(), kind="trace-parquet")
    return db


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenarios_match_the_papers_rates(name):
    scale = 1.0 if name in ("gcm", "upw") else 0.05  # tiny volumes need the full run
    ops, truth = make_scenario(name, scale=scale, random_state=0)
    db = _load(ops)
    r, a = rates_table(db).iloc[0], app_table(db).iloc[0]
    read, write, ratio, avg_mb = PAPER[name]
    assert r.read_bps / 1e6 == pytest.approx(read, rel=0.25)
    assert r.write_bps / 1e6 == pytest.approx(write, rel=0.25)
    assert r.rw_data_ratio == pytest.approx(ratio, rel=0.3)
    assert a.avg_io_bytes / 1e6 == pytest.approx(avg_mb, rel=0.1)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenarios_are_classified_right(name):
    ops, truth = make_scenario(name, scale=0.02, nprocs=2, random_state=1)
    got = classify(_load(ops)).merge(truth, on="path", suffixes=("", "_true"))
    assert len(got) == len(truth)
    assert (got["class"] == got["class_true"]).all(), got[got["class"] != got["class_true"]]


def _random_workload(rng: np.random.Generator) -> Workload:
    iters = int(rng.integers(6, 40))
    every = int(rng.integers(1, max(2, iters // 3) + 1))
    return Workload(
        runtime_s=float(rng.uniform(5, 500)),
        iterations=iters,
        io_bytes=int(rng.choice([4096, 65536, 1 << 20])),
        input_bytes=int(rng.integers(1, 50)) << 20,
        output_bytes=int(rng.integers(1, 50)) << 20,
        staging_bytes=int(rng.choice([0, 1, 4, 16])) << 20,
        reread=int(rng.integers(1, 4)),
        rewrite=int(rng.integers(1, 3)),
        ckpt_every=every if rng.random() < 0.8 else 0,
        ckpt_bytes=int(rng.integers(1, 16)) << 20,
        ckpt_mode=str(rng.choice(["new", "overwrite"])),
        nprocs=int(rng.integers(1, 4)),
        jitter=float(rng.uniform(0, 0.05)),
    )


def test_accuracy_over_random_workloads(global_random_seed):
    """Issue 4's bar: at least 95% of files right over many drawn workloads."""
    rng = np.random.default_rng(global_random_seed)
    right = total = 0
    for _ in range(40):
        ops, truth = make_workload(_random_workload(rng), random_state=rng)
        got = classify(_load(ops)).merge(truth, on="path", suffixes=("", "_true"))
        assert len(got) == len(truth)
        right += int((got["class"] == got["class_true"]).sum())
        total += len(got)
    assert right / total >= 0.95, (right, total)


def test_write_trace_and_truth(tmp_path):
    ops, truth = make_scenario("ccm", scale=0.02, random_state=3)
    truth_path = write_trace(ops, truth, tmp_path / "ccm.parquet")
    db = iochar.connect(":memory:")
    assert db.load(tmp_path / "ccm.parquet").rows["ops"] == ops.num_rows
    assert (tmp_path / "ccm.parquet.truth.csv").read_text().splitlines()[0] == "rank,path,class"
    assert truth_path.endswith(".truth.csv")


def test_seeded_and_validated():
    a, _ = make_scenario("venus", scale=0.01, random_state=5)
    b, _ = make_scenario("venus", scale=0.01, random_state=5)
    assert a.equals(b)
    with pytest.raises(ParameterError, match="'name' parameter of make_scenario"):
        make_scenario("nope")
    with pytest.raises(ParameterError, match="'iterations'"):
        make_workload(Workload(iterations=1))
