"""A Darshan job whose DXT module Darshan flagged incomplete is read from its counters.

partial_data_dxt.darshan (data/darshan/SOURCE.md): mpi-io-test issued 1,000,000 one-byte
reads, more than DXT's trace buffer holds, so Darshan kept only the first segments and
set the partial flag of DXT_POSIX and DXT_MPIIO. Its POSIX counters count every call.
Per-file facts and classes taken from the segments kept would say the file moved a
fifteenth of what it did; from the counters they say what PyDarshan reads.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import iochar
from iochar.analyze.classify import classify
from iochar.analyze.fileio import file_io
from iochar.errors import ParameterError

DARSHAN = Path(__file__).resolve().parents[2] / "data" / "darshan"
PARTIAL = DARSHAN / "darshan-logs" / "partial_data_dxt" / "partial_data_dxt.darshan"
COMPLETE = DARSHAN / "dxt.darshan"
TRUTH = Path(__file__).resolve().parents[1] / "load" / "_pydarshan_truth.py"


@pytest.fixture(scope="module")
def truth() -> dict:
    pytest.importorskip("darshan")
    r = subprocess.run(
        [sys.executable, str(TRUTH), str(PARTIAL)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def db():
    pytest.importorskip("darshan")
    store = iochar.connect(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the partial-module warnings
        store.load(PARTIAL)
        store.load(COMPLETE)
    yield store
    store.close()


def _job(db, name: str) -> int:
    return db.sql(
        "SELECT j.job_id FROM jobs j JOIN sources s USING (source_id) WHERE s.uri LIKE $n",
        params={"n": f"%/{name}"},
    ).fetchall()[0][0]


def test_files_of_an_incomplete_dxt_job_come_from_the_counters(db, truth):
    job = _job(db, PARTIAL.name)
    posix = truth["records"]["POSIX"]
    read = sum(r[2]["POSIX_BYTES_READ"] for r in posix)
    calls = sum(r[2]["POSIX_READS"] for r in posix)
    assert read == calls == 1_000_000
    kept = db.sql(
        "SELECT sum(size) FROM ops WHERE job_id = $j AND call = 'DXT_POSIX'", params={"j": job}
    ).fetchall()[0][0]
    assert kept < read / 10  # what the trace buffer kept

    facts = file_io(db, job_id=job)
    assert facts.jobs.set_index("job_id").at[job, "basis"].startswith("file_stats:")
    assert facts.files["bytes_read"].sum() == read
    assert facts.files["reads"].sum() == calls

    labels = classify(db, job_id=job)
    assert labels["basis"].str.startswith("file_stats:").all()
    assert labels["bytes_read"].sum() == read

    # asked for, the segments kept are still there
    seg = file_io(db, job_id=job, incomplete_dxt="trace")
    assert set(seg.files["basis"]) == {"ops"} and seg.files["bytes_read"].sum() == kept
    traced = classify(db, job_id=job, source="trace")
    assert set(traced["basis"]) == {"ops"} and traced["bytes_read"].sum() == kept


def test_a_complete_dxt_job_is_read_from_its_segments(db):
    job = _job(db, COMPLETE.name)
    facts = file_io(db, job_id=job)
    assert set(facts.files["basis"]) == {"ops"}
    assert facts.jobs.set_index("job_id").at[job, "basis"] == "ops"
    assert set(classify(db, job_id=job)["basis"]) == {"ops"}


def test_incomplete_dxt_is_checked(db):
    with pytest.raises(ParameterError, match="'incomplete_dxt' parameter of file_io"):
        file_io(db, incomplete_dxt="segments")
