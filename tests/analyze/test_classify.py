"""Required / checkpoint / staging on the real strace capture of ckpt_app.

The program (data/strace/src/ckpt_app.c) reads input.dat once at start,
re-reads and re-writes scratch.dat every iteration, writes a new checkpoint
file ckpt.NNN every 2 s, and writes output.dat at the end (Miller & Katz
section 5.1's three types, by construction).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from iochar.analyze.classify import CLASSES, classify
from iochar.errors import ParameterError

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(params=["ckpt_tt.strace", "ckpt_ttt.strace"])
def ckpt(store, request):
    store.load(DATA / "strace" / request.param)
    return classify(store).assign(name=lambda d: d.path.str.rsplit("/", n=1).str[-1])


def test_paper_types_on_real_capture(ckpt):
    by = dict(zip(ckpt.name, ckpt["class"], strict=True))
    assert by["input.dat"] == "required"
    assert by["output.dat"] == "required"
    assert by["scratch.dat"] == "staging"
    ck = ckpt[ckpt.name.str.startswith("ckpt.")]
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
    n = store.sql(
        "SELECT count(DISTINCT file_id) FROM ops WHERE op IN ('read', 'write') "
        "AND size IS NOT NULL AND error IS NULL AND file_id IS NOT NULL"
    ).fetchall()[0][0]
    assert len(ckpt) == n and not ckpt.duplicated(["job_id", "file_id"]).any()
    assert ckpt.confidence.between(0, 1).all()


def test_parameters_checked(store):
    for kw in ({"edge": 0.6}, {"reuse": 1}, {"burst_gap_s": 0}, {"max_cv": -1}, {"job_id": "x"}):
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
