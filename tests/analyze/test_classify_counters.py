"""Classification from Darshan counters alone (issue 17 item 2).

A facility's commonest input is a Darshan log without DXT. On real logs that hold
both, the labels from the counters (``source="counters"``) must agree with the labels
from the DXT trace of the same run (``source="trace"``) on at least 90% of the bytes
moved; on real logs without DXT the counters must label the files that moved data
(not leave them ``other``), name the counters that decided, and be less confident
than a trace.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from iochar.analyze.classify import classify
from iochar.testing.counters import agreement

DARSHAN = Path(__file__).resolve().parents[2] / "data" / "darshan"
requires_darshan = pytest.mark.skipif(
    importlib.util.find_spec("darshan") is None, reason="the darshan package is missing"
)
pytestmark = requires_darshan


@pytest.mark.parametrize(
    "log",
    [
        "dxt.darshan",
        "classify/nonmpi_dxt_anonymized.darshan",
        "classify/hdf5_diagonal_write_bytes_range_dxt.darshan",
    ],
)
def test_counters_agree_with_the_dxt_trace_of_the_same_run(store, log):
    store.load(DARSHAN / log)
    files, nbytes, both = agreement(store)
    assert both["class_cnt"].notna().all()  # every traced file is in the counters
    assert nbytes >= 0.9 and files >= 0.9, both[both["class"] != both["class_cnt"]]
    cnt = both[both["class_cnt"] != "other"]
    assert cnt.reason_cnt.str.contains(r"\[counters: POSIX_").all()
    assert (cnt.confidence_cnt < cnt.confidence).all()  # counters: less sure than a trace
    assert set(both.basis) == {"ops"} and both.basis_cnt.str.startswith("file_stats:").all()


def test_single_process_application_log(store):
    """nonmpi_dxt_anonymized: the inputs read once and the outputs written once are
    required from the counters too (the previous rules left 50 of 75 files 'other')."""
    store.load(DARSHAN / "classify" / "nonmpi_dxt_anonymized.darshan")
    c = classify(store, source="counters")
    data = c[(c.bytes_read + c.bytes_written) > 0]
    # 75 files in POSIX counters (and DXT); 3 more moved data only through stdio, which
    # DXT_POSIX does not trace; 11 files have both records, their bytes summed
    assert len(data) == 78 and (data.basis == "file_stats:POSIX+STDIO").sum() == 11
    assert (data["class"] == "other").sum() <= 10
    inputs = data[(data.bytes_written == 0) & (data.reread <= 1.1)]
    assert len(inputs) >= 40 and (inputs["class"] == "required").all()


def test_one_file_per_rank_written_once_is_output_not_a_checkpoint_series(store):
    """10 ranks each write their own test_N.h5, rank N 0.2 s after rank N-1: the names
    rise with time at a regular interval, but no process saves twice."""
    store.load(DARSHAN / "classify" / "hdf5_diagonal_write_bytes_range_dxt.darshan")
    for source in ("trace", "counters"):
        c = classify(store, source=source)
        h5 = c[c.path.str.fullmatch(r".*/test_\d\.h5")]
        assert len(h5) == 10 and set(h5["class"]) == {"required"}, source
        assert h5.reason.str.contains("written only").all()
        # the .pyc files each of the 10 ranks reads once: shared required input
        pyc = c[c.path.str.endswith(".pyc")]
        assert len(pyc) >= 15 and set(pyc["class"]) == {"required"}, source
        assert ((pyc.reread - 10.0).abs() < 0.5).any()
    cnt = classify(store, source="counters")
    assert cnt[cnt.path.str.endswith(".pyc")].reason.str.contains("by each of 10").any()


def test_logs_without_dxt_label_the_files_that_moved_data(store):
    """partial_data_stdio (1,021 files written through stdio) and imbalanced-io (an
    application with 26 files moving data, 1,004 only opened): the counters label them."""
    logs = DARSHAN / "darshan-logs"
    if not logs.is_dir():
        pytest.skip("data/darshan/darshan-logs is not in this checkout")
    store.load(logs / "partial_data_stdio" / "partial_data_stdio.darshan")
    store.load(logs / "imbalanced_io" / "imbalanced-io.darshan")
    c = classify(store)
    assert set(c.basis.str.split(":").str[0]) == {"file_stats"}
    data = c[(c.bytes_read + c.bytes_written) > 0]
    # stdio-only files count (before: a job with POSIX records dropped its STDIO ones)
    stdio = data[(data.basis == "file_stats:STDIO") & (data.job_id == 0)]
    assert len(stdio) == 1021 and set(stdio["class"]) == {"required"}
    assert stdio.reason.str.contains("STDIO_BYTES_WRITTEN").all()
    assert (data["class"] == "other").mean() < 0.01
    meta = c[(c.bytes_read + c.bytes_written) == 0]
    assert len(meta) > 1000 and meta.reason.str.startswith("no data moved").all()
