"""The issue 17 item 6 patterns in ``iochar.synth``: built as asked, classified right.

Each pattern's class is what Miller & Katz's definitions give (section 5.1; see
``iochar.analyze.classify``): a log appended every iteration and output streamed over
the run are required output, an input read twice is required input, output written
over a long last part of the run is required, 2 or 3 saves of the state are a
checkpoint, and a checkpoint read back at restart stays a checkpoint.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from iochar.datasets.synth import Workload, make_workload
from iochar.errors import ParameterError
from iochar.testing.counters import classify_both_ways

BASES = [
    Workload(runtime_s=60, iterations=12, ckpt_every=3, nprocs=2),
    Workload(runtime_s=300, iterations=30, ckpt_every=5, ckpt_mode="overwrite", think=0.5),
    Workload(runtime_s=8, iterations=40, ckpt_every=8, staging_bytes=0, sync=True),
]
PATTERNS = {
    "log": {"log_bytes": 120},
    "stream": {"stream_bytes": 6 << 20},
    "input twice": {"input_reads": 2},
    "long output": {"output_share": 0.35},
    "2 saves, new files": {"ckpt_every": 6, "iterations": 12},
    "2 saves, one file": {"ckpt_every": 6, "iterations": 12, "ckpt_mode": "overwrite"},
    "3 saves": {"ckpt_every": 4, "iterations": 12},
    "restart": {"restart": True},
    "restart, one file": {"restart": True, "ckpt_mode": "overwrite"},
}


def _score(ops, truth):
    out = classify_both_ways(ops, truth)
    for got in out.values():
        assert len(got) == len(truth)
    return out


def test_patterns_are_in_the_trace():
    w = replace(BASES[0], log_bytes=100, stream_bytes=1 << 20, input_reads=2, restart=True)
    ops, truth = make_workload(w, random_state=0)
    df = ops.to_pandas()
    name = df.path.str.rsplit("/", n=1).str[-1]
    log = df[(name == "run.log") & (df["rank"] == 0)]
    assert len(log) == w.iterations and (log["size"] == 100).all()
    assert list(log["offset"]) == [100 * i for i in range(w.iterations)]  # appended
    stream = df[(name == "stream.dat") & (df["rank"] == 0)]
    assert stream["size"].sum() == (1 << 20) // w.iterations * w.iterations
    assert not stream.duplicated("offset").any()  # each byte written once
    inp = df[(name == "input.dat") & (df["rank"] == 0)]
    assert inp["size"].sum() == 2 * w.input_bytes  # read twice
    back = df[(name == "ckpt.000") & (df["rank"] == 0)]
    assert set(back.op) == {"read"} and back["size"].sum() == w.ckpt_bytes
    assert back.t_start.max() < df[df.op == "write"].t_start.min()  # before any write
    classes = dict(zip(truth.path.str.rsplit("/", n=1).str[-1], truth["class"], strict=False))
    assert classes["run.log"] == classes["stream.dat"] == "required"
    assert classes["ckpt.000"] == "checkpoint"


def test_long_output_phase_takes_its_share_of_the_run():
    ops, _ = make_workload(replace(BASES[0], output_share=0.4), random_state=0)
    df = ops.to_pandas()
    out = df[df.path.str.endswith("/output.dat")]
    assert out.t_start.min() == pytest.approx(60 * (1 - 0.8 * 0.4), rel=1e-6)
    assert df[~df.path.str.endswith("/output.dat")].t_start.max() < out.t_start.min()


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_patterns_are_classified_right(pattern):
    """At least 95% of files and of bytes right, from the trace and from counters."""
    right = {s: np.zeros(4) for s in ("trace", "counters")}
    wrong = []
    for k, base in enumerate(BASES):
        w = replace(base, **PATTERNS[pattern])
        ops, truth = make_workload(w, random_state=k)
        for source, got in _score(ops, truth).items():
            ok = (got["class"] == got["class_true"]).to_numpy()
            nbytes = (got.bytes_read + got.bytes_written).to_numpy(np.float64)
            right[source] += [ok.sum(), len(ok), nbytes[ok].sum(), nbytes.sum()]
            wrong += got.loc[~ok, ["path", "class", "class_true", "reason"]].values.tolist()
    for source, (fr, fn, br, bn) in right.items():
        assert fr / fn >= 0.95 and br / bn >= 0.95, (source, wrong[:4])


def test_pattern_parameters_checked():
    for kw in (
        {"log_bytes": -1},
        {"stream_bytes": -1},
        {"input_reads": 0},
        {"output_share": 0.7},
        {"restart": True, "ckpt_every": 0},
    ):
        with pytest.raises(ParameterError, match="parameter of make_workload"):
            make_workload(Workload(**kw))
