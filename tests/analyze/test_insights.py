"""Insight rules (issue 19, item 1) on the real Darshan logs and strace captures in data/.

Each rule fires on a log whose Darshan counters (read raw from ``module_counters``, or
from darshan-parser's meaning of them) cross its threshold, and stays silent on one
that does not; no rule crashes on any shipped Darshan log. Thresholds are Drishti's
(drishti-io ``drishti/includes/config.py``), so the expected findings follow Drishti's
formulas on the raw counters.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import iochar
from iochar.analyze import insights
from iochar.analyze.insights import RULES, Param, Rule
from iochar.errors import ParameterError

DATA = Path(__file__).resolve().parents[2] / "data"
LOGS = sorted((DATA / "darshan").rglob("*.darshan"))
STRACE = DATA / "strace" / "ckpt_plain.strace"

NONMPI = "nonmpi_dxt_anonymized.darshan"
DXT = "dxt.darshan"
EXAMPLE = "example.darshan"
RELEASE = "mpi-io-test-x86_64-3.4.7.darshan"
PARTIAL = "partial_data_stdio.darshan"
IMBALANCED = "imbalanced-io.darshan"


@pytest.fixture(scope="module")
def db():
    store = iochar.connect(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # partial-module warnings of two logs
        for path in [*LOGS, STRACE]:
            store.load(path)
    yield store
    store.close()


@pytest.fixture(scope="module")
def jobs(db):
    return dict(
        db.sql(
            "SELECT regexp_extract(s.uri, '[^/]*$'), j.job_id "
            "FROM jobs j JOIN sources s USING (source_id)"
        ).fetchall()
    )


@pytest.fixture(scope="module")
def found(db):
    return insights.run(db)


def _finding(found, job_id, code):
    rows = found[(found["job_id"] == job_id) & (found["code"] == code)]
    assert len(rows) <= 1
    return None if rows.empty else rows.iloc[0]


def _raw(db, job_id, counters):
    """Sum of raw Darshan counters of a job, as darshan-parser prints them."""
    rows = db.sql(
        "SELECT counter, sum(value) FROM module_counters "
        "WHERE job_id = $j AND list_contains($c, counter) GROUP BY counter",
        {"j": job_id, "c": list(counters)},
    ).fetchall()
    out = dict.fromkeys(counters, 0.0)
    out.update(dict(rows))
    return out


def test_every_shipped_log_runs_and_evidence_is_numbers(db, jobs, found):
    assert len(LOGS) >= 20 and all(name in jobs for name in (NONMPI, DXT, EXAMPLE, PARTIAL))
    assert list(found.columns) == list(insights.COLUMNS)
    assert set(found["severity"]) <= set(insights.SEVERITIES)
    assert set(found["topic"]) <= set(insights.TOPICS)
    for ev in found["evidence"]:
        assert ev and all(v is None or isinstance(v, (int, float)) for v in ev.values())
    json.dumps(found.drop(columns="sql").to_dict("records"))
    # every (job, rule) pair is either checked or said not checked
    n_jobs = len(jobs)
    assert found.evidence["checked"] + len(found.evidence["not_checked"]) == n_jobs * len(RULES)


def test_small_io_fires_by_drishti_formula(db, jobs, found):
    job = jobs[NONMPI]
    bins = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M")
    raw = _raw(
        db,
        job,
        ["POSIX_READS", "POSIX_WRITES"]
        + [f"POSIX_SIZE_READ_{b}" for b in bins]
        + [f"POSIX_SIZE_WRITE_{b}" for b in bins],
    )
    small_reads = sum(raw[f"POSIX_SIZE_READ_{b}"] for b in bins)
    # Drishti P05: small reads / reads > 0.1 and small reads > 1000
    assert small_reads / raw["POSIX_READS"] > 0.1 and small_reads > 1000
    f = _finding(found, job, "SMALL-IO-1")
    assert f is not None and f.severity == "high"
    assert f.evidence["small_reads"] == small_reads == 7822
    assert f.evidence["reads"] == raw["POSIX_READS"]
    # four 16 MiB reads and writes per rank: no small request
    assert _finding(found, jobs[RELEASE], "SMALL-IO-1") is None


def test_small_io_from_strace_ops(jobs, found):
    f = _finding(found, jobs["ckpt_plain.strace"], "SMALL-IO-1")
    # all of the capture's transfers are below 1 MiB, but fewer than Drishti's 1000
    assert f is not None and f.severity == "info"
    assert f.evidence["small_share"] == 1.0 and f.evidence["small_requests"] < 1000


def test_misaligned(db, jobs, found):
    job = jobs[NONMPI]
    raw = _raw(db, job, ["POSIX_READS", "POSIX_WRITES", "POSIX_FILE_NOT_ALIGNED"])
    share = raw["POSIX_FILE_NOT_ALIGNED"] / (raw["POSIX_READS"] + raw["POSIX_WRITES"])
    assert share > 0.5  # 15536 of 17652
    f = _finding(found, job, "MISALIGNED-1")
    assert f.severity == "high" and f.evidence["file_misaligned_share"] == pytest.approx(share)
    assert _finding(found, jobs[RELEASE], "MISALIGNED-1") is None  # 0 not aligned


def test_random_access_counts_consecutive_once(db, jobs, found):
    job = jobs[NONMPI]
    raw = _raw(db, job, ["POSIX_READS", "POSIX_SEQ_READS", "POSIX_CONSEC_READS"])
    # POSIX_SEQ_READS includes POSIX_CONSEC_READS (darshan-runtime docs)
    assert raw["POSIX_SEQ_READS"] >= raw["POSIX_CONSEC_READS"]
    random_reads = raw["POSIX_READS"] - raw["POSIX_SEQ_READS"]
    f = _finding(found, job, "RANDOM-1")
    assert f.severity == "warn"
    assert f.evidence["random_reads"] == random_reads == 2269
    assert f.evidence["random_read_share"] == pytest.approx(random_reads / raw["POSIX_READS"])
    assert _finding(found, jobs[EXAMPLE], "RANDOM-1") is None


def test_metadata_heavy(db, jobs, found):
    job = jobs[DXT]
    raw = db.sql(
        "SELECT max(value) FROM module_counters WHERE job_id = $j AND counter = "
        "'POSIX_F_META_TIME'",
        {"j": job},
    ).fetchall()[0][0]
    assert raw > 30  # Drishti P17: a record with more than 30 s of metadata time
    f = _finding(found, job, "METADATA-1")
    assert f.severity == "high" and f.evidence["max_record_meta_s"] == pytest.approx(raw)
    assert f.evidence["meta_share"] > 0.99
    assert _finding(found, jobs[EXAMPLE], "METADATA-1") is None


def test_stdio_heavy(db, jobs, found):
    job = jobs[PARTIAL]
    raw = _raw(db, job, ["STDIO_BYTES_WRITTEN", "STDIO_BYTES_READ"])
    f = _finding(found, job, "STDIO-1")
    assert f.severity == "high"
    assert f.evidence["stdio_bytes"] == raw["STDIO_BYTES_WRITTEN"] + raw["STDIO_BYTES_READ"]
    assert f.evidence["stdio_share"] > 0.99
    assert _finding(found, jobs[EXAMPLE], "STDIO-1") is None  # 3309 B of 2 TiB


def test_many_small_files(jobs, found):
    f = _finding(found, jobs[DXT], "SMALL-FILES-1")
    assert f.severity == "high" and f.evidence["small_files"] > 100
    assert _finding(found, jobs[IMBALANCED], "SMALL-FILES-1") is None


def test_incomplete_log(db, jobs, found):
    flagged = {name for name, j in jobs.items() if _finding(found, j, "INCOMPLETE-1") is not None}
    # the three logs whose header has a partial_flag bit (darshan_modules.incomplete)
    from iochar.analyze import darshan_modules

    assert flagged == set(darshan_modules.incomplete(db)["source"])
    assert flagged == {PARTIAL, IMBALANCED, "partial_data_dxt.darshan"}
    not_checked = {(d["job_id"], d["code"]) for d in found.evidence["not_checked"]}
    assert (jobs["ckpt_plain.strace"], "INCOMPLETE-1") in not_checked


def test_no_collective(db, jobs, found):
    job = jobs[RELEASE]
    raw = _raw(db, job, ["MPIIO_COLL_READS", "MPIIO_COLL_WRITES", "MPIIO_INDEP_READS"])
    assert raw["MPIIO_COLL_READS"] == raw["MPIIO_COLL_WRITES"] == 0
    f = _finding(found, job, "NO-COLLECTIVE-1")
    # all independent, but 8 calls: under Drishti's 1000-call guard
    assert f.severity == "info" and f.evidence["indep_share"] == 1.0
    assert _finding(found, jobs[EXAMPLE], "NO-COLLECTIVE-1") is None  # 16384 collective


def test_redundant_reads_across_ranks(db, jobs, found):
    """Ten ranks read the same bytes of the HDF5 files: per file, the bytes read (summed
    over its records) exceed the read extent (max POSIX_MAX_BYTE_READ + 1)."""
    job = jobs["hdf5_diagonal_write_bytes_range_dxt.darshan"]
    per_file = db.sql(
        "SELECT file_id, sum(value) FILTER (WHERE counter = 'POSIX_BYTES_READ') AS b, "
        "max(value) FILTER (WHERE counter = 'POSIX_MAX_BYTE_READ') + 1 AS extent "
        "FROM module_counters WHERE job_id = $j AND module = 'POSIX' GROUP BY file_id",
        {"j": job},
    ).fetchall()
    reread = sum(max(0, b - e) for _, b, e in per_file if b)
    total = sum(b for _, b, _ in per_file if b)
    f = _finding(found, job, "REDUNDANT-READS-1")
    assert f.severity == "high"
    assert f.evidence["reread_bytes"] == reread and f.evidence["bytes_read"] == total
    assert reread / total > 0.5
    # each rank reads its own 16 MiB block once
    assert _finding(found, jobs[RELEASE], "REDUNDANT-READS-1") is None


def test_shared_file_independent(db, jobs, found):
    """imbalanced-io's shared records: job-wide most MPI-IO calls are collective (no
    NO-COLLECTIVE-1), but one shared file takes its 2534 independent calls."""
    job = jobs[IMBALANCED]
    per_file = db.sql(
        "SELECT file_id, sum(value) FILTER (WHERE counter LIKE 'MPIIO_INDEP_%S') AS i, "
        "sum(value) FILTER (WHERE counter IN ('MPIIO_COLL_READS', 'MPIIO_COLL_WRITES')) AS c "
        "FROM module_counters WHERE job_id = $j AND module = 'MPI-IO' AND rank IS NULL "
        "AND counter IN ('MPIIO_INDEP_READS', 'MPIIO_INDEP_WRITES', 'MPIIO_COLL_READS', "
        "'MPIIO_COLL_WRITES') GROUP BY file_id",
        {"j": job},
    ).fetchall()
    worst = max(per_file, key=lambda r: r[1] / (r[1] + r[2]))
    assert worst[1] > 1000 and 0.5 < worst[1] / (worst[1] + worst[2]) < 0.99
    f = _finding(found, job, "SHARED-INDEP-1")
    assert f.severity == "warn" and f.evidence["worst_file_id"] == worst[0]
    assert f.evidence["indep_ops"] == worst[1] == 2534
    assert _finding(found, job, "NO-COLLECTIVE-1") is None
    assert _finding(found, jobs[EXAMPLE], "SHARED-INDEP-1") is None  # 18 of 16402


def test_user_thresholds_change_severity(db, jobs):
    job = jobs[RELEASE]
    out = insights.run(db, job_id=job, params={"collective_operations_absolute": 5})
    assert _finding(out, job, "NO-COLLECTIVE-1").severity == "high"
    out = insights.run(db, job_id=job, params={"NO-COLLECTIVE-1.collective_operations": 1.0})
    assert _finding(out, job, "NO-COLLECTIVE-1") is None
    assert out.params["NO-COLLECTIVE-1"]["collective_operations"] == 1.0
    with pytest.raises(ParameterError):
        insights.run(db, params={"no_such_threshold": 1})


def test_user_rule_without_editing_iochar(db, jobs):
    rule = Rule(
        code="MY-1",
        topic="redundant-reads",
        title="More bytes read than the file's extent",
        sql="SELECT job_id, sum(bytes_read) AS read, sum(max_byte_read + 1) AS extent, "
        "sum(bytes_read) / sum(max_byte_read + 1) AS ratio FROM file_stats "
        "WHERE module = 'POSIX' AND max_byte_read IS NOT NULL "
        "AND ($job_id IS NULL OR job_id = $job_id) GROUP BY job_id",
        measure="ratio",
        warn_at="ratio",
        params=(Param("ratio", 1.0, "share", "test"),),
        recommendation="cache",
        reference="test",
        needs="POSIX extents",
    )
    out = insights.run(db, rules=[rule])
    assert set(out["code"]) <= {"MY-1"}
    # the non-MPI log reads more bytes than its files' extents (Drishti P09's condition);
    # the DXT log reads a fifth of them
    assert _finding(out, jobs[NONMPI], "MY-1").evidence["ratio"] > 1.0
    assert _finding(out, jobs[DXT], "MY-1") is None
    # a job with no POSIX extents is not checked
    assert (jobs["ckpt_plain.strace"], "MY-1") in {
        (d["job_id"], d["code"]) for d in out.evidence["not_checked"]
    }


def test_job_filter(db, jobs, found):
    job = jobs[DXT]
    one = insights.run(db, job_id=job)
    assert set(one["job_id"]) == {job}
    assert sorted(one["code"]) == sorted(found[found["job_id"] == job]["code"])
