"""Required / checkpoint / staging on the real strace capture of ckpt_app.

The program (data/strace/src/ckpt_app.c) reads input.dat once at start,
re-reads and re-writes scratch.dat every iteration, writes a new checkpoint
file ckpt.NNN every 2 s, and writes output.dat at the end (Miller & Katz
section 5.1's three types, by construction).
"""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import iochar
from iochar.analyze.classify import CLASSES, classify
from iochar.datasets.synth import make_workload
from iochar.errors import ParameterError
from iochar.testing.counters import agreement, trace_to_counters
from iochar.testing.strategies import workloads

DATA = Path(__file__).resolve().parents[2] / "data"
requires_darshan = pytest.mark.skipif(
    importlib.util.find_spec("darshan") is None, reason="the darshan package is missing"
)


@pytest.fixture(params=["ckpt_tt.strace", "ckpt_ttt.strace"])
def ckpt(store, request):
    store.load(DATA / "strace" / request.param)
    return classify(store).assign(name=lambda d: d.path.str.rsplit("/", n=1).str[-1])


def test_paper_types_on_real_capture(ckpt):
    by = dict(zip(ckpt.name, ckpt["class"], strict=True))
    assert by["input.dat"] == "required"
    assert by["output.dat"] == "required"
    assert by["scratch.dat"] == "staging"
    ck = ckpt[ckpt.name.str.fullmatch(r"ckpt\.\d+")]
    assert len(ck) == 5 and set(ck["class"]) == {"checkpoint"}


def test_evidence_is_given(ckpt):
    row = ckpt[ckpt.name == "scratch.dat"].iloc[0]
    assert row.reread == pytest.approx(40) and row.rewrite == pytest.approx(40)
    assert row.read_after_write and "re-read 40.0x" in row.reason
    ck = ckpt[ckpt.name == "ckpt.002"].iloc[0]
    assert ck.series_files == 5 and "every 2.1" in ck.reason and ck.confidence > 0.9
    inp = ckpt[ckpt.name == "input.dat"].iloc[0]
    assert inp.head_share == 1.0 and inp.bytes_read == 300_000


def test_labels_partition_the_files(ckpt, store):
    assert set(ckpt["class"]) <= set(CLASSES)
    n = store.sql("SELECT count(DISTINCT file_id) FROM ops").fetchall()[0][0]
    assert len(ckpt) == n and not ckpt.duplicated(["job_id", "file_id"]).any()
    assert ckpt.confidence.between(0, 1).all()
    # files the program only opened or stat'ed (shared libraries, ld.so.cache) say so
    io = store.sql(
        "SELECT DISTINCT file_id FROM ops WHERE op IN ('read', 'write') "
        "AND size > 0 AND error IS NULL"
    ).df()
    meta = ckpt[~ckpt.file_id.isin(io.file_id)]
    assert len(meta) > 0 and set(meta["class"]) == {"other"}
    assert meta.reason.str.startswith("no data moved").all()


def test_parameters_checked(store):
    for kw in (
        {"edge": 0.6},
        {"reuse": 1},
        {"burst_gap_s": 0},
        {"max_cv": -1},
        {"job_id": "x"},
        {"min_interval_s": -1},
    ):
        with pytest.raises(ParameterError, match="parameter of classify"):
            classify(store, **kw)


def test_empty_store_gives_empty_result(store):
    assert classify(store).empty


def test_class_rate_and_breakdown(store):
    from iochar.analyze.characterize import data_rate
    from iochar.analyze.classify import class_breakdown, class_rate

    store.load(DATA / "strace" / "ckpt_tt.strace")
    job = int(store.sql("SELECT job_id FROM jobs").fetchall()[0][0])
    cr = class_rate(store, job_id=job, bin_s=0.5)
    dr = data_rate(store, job_id=job, bin_s=0.5)
    assert cr.bytes.sum() == dr.bytes.sum()  # same I/O, split another way
    staging = cr[cr["class"] == "staging"]
    assert (staging.bytes > 0).mean() > 0.8  # staging goes on through the run
    ck = cr[(cr["class"] == "checkpoint") & (cr.bytes > 0)]
    assert len(ck) == 5  # one bin per checkpoint
    bd = class_breakdown(classify(store))
    assert list(bd["class"]) == list(CLASSES)
    assert bd.files_share.sum() == pytest.approx(1) and bd.bytes_share.sum() == pytest.approx(1)
    assert bd.set_index("class").loc["staging", "bytes_share"] > 0.8
    # by operations: every read and write call of the trace, counted once
    calls = store.sql(
        "SELECT count(*) FROM ops WHERE op IN ('read', 'write') AND size IS NOT NULL "
        "AND error IS NULL AND file_id IS NOT NULL"
    ).fetchall()[0][0]
    assert bd.ops.sum() == calls and bd.ops_share.sum() == pytest.approx(1)


@settings(max_examples=25, deadline=None)
@given(workloads(), st.integers(0, 2**32 - 1))
def test_counters_only_classification_on_drawn_workloads(w, seed):
    """Darshan counters (no per-op times) still give each synth file its class."""
    ops, truth = make_workload(w, random_state=seed)
    buf = io.BytesIO()
    pq.write_table(ops, buf)
    with iochar.connect(":memory:") as db:
        db.load(buf.getvalue(), kind="trace-parquet")
        trace_to_counters(db)
        got = classify(db).merge(truth, on="path", suffixes=("", "_true"))
    assert len(got) == len(truth) and (got.basis == "file_stats:POSIX").all()
    wrong = got[got["class"] != got["class_true"]]
    assert len(wrong) <= 0.05 * len(got), wrong[["path", "class", "class_true", "reason"]]


@requires_darshan
def test_counters_only_agree_with_dxt_on_a_real_log(store):
    """The real dxt.darshan: classes from POSIX/STDIO counters equal classes from its DXT
    trace (issue 17 item 2: at least 90% of bytes)."""
    store.load(DATA / "darshan" / "dxt.darshan")
    from_ops = classify(store)
    assert set(from_ops.basis) == {"ops"}
    from_counters = classify(store, source="counters")
    assert set(from_counters.basis) == {"file_stats:POSIX", "file_stats:STDIO"}
    # a file read through stdio only (the JVM's jvm.cfg) is in the STDIO module alone
    stdio = from_counters[from_counters.basis == "file_stats:STDIO"]
    assert stdio.path.str.endswith("/jre/lib/amd64/jvm.cfg").all()
    assert "STDIO_BYTES_READ" in stdio.reason.iloc[0]
    files, nbytes, both = agreement(store)
    assert len(both) == len(from_ops)  # every file with data is found in the counters
    assert files >= 0.9 and nbytes >= 0.9, both[both["class"] != both["class_cnt"]]
    # counters evidence names the counters that decided, at a lower confidence
    req = both[(both["class"] == "required") & (both.bytes_read > 0)].iloc[0]
    assert "POSIX_BYTES_READ" in req.reason_cnt and "POSIX_MAX_BYTE_READ" in req.reason_cnt
    assert req.confidence_cnt < req.confidence
    # COMPSs's pipe_<hash> files are not a numbered checkpoint series: their numbers are
    # hashes that do not rise with time (the old rule called 43 of them checkpoints)
    pipes = from_ops[from_ops.path.str.contains(r"/pipe_-?\d+$")]
    assert len(pipes) == 128 and "checkpoint" not in set(pipes["class"])
    # the counters also name the files DXT_POSIX never saw: opened or stat'ed, no data,
    # and the one read through stdio (DXT traces the POSIX layer only)
    extra = from_counters[~from_counters.file_id.isin(from_ops.file_id)]
    posix = extra.basis == "file_stats:POSIX"
    assert posix.sum() > 0 and extra[posix].reason.str.startswith("no data moved").all()
    assert list(extra[~posix].file_id) == list(stdio.file_id)


def test_source_switch_and_its_check(store):
    """source="trace" ignores counters, "counters" ignores the trace; a FileIO only "auto"."""
    from iochar.analyze.fileio import file_io

    store.load(DATA / "strace" / "ckpt_tt.strace")
    assert set(classify(store, source="trace").basis) == {"ops"}
    assert classify(store, source="counters").empty  # strace gives no counters
    with pytest.raises(ParameterError, match="'source' parameter of classify"):
        classify(store, source="dxt")
    with pytest.raises(ParameterError, match="'source' parameter of classify"):
        classify(file_io(store), source="counters")
