"""Insight rules where iochar and Drishti part ways (issue 19, item 2), on real logs.

``benchmarks/bench_drishti.py`` runs drishti-io beside iochar on every shipped Darshan
log; these tests pin, without Drishti, the numbers behind the differences it reports.
Each expected value is computed here from PyDarshan's own reading of the log
(``darshan.DarshanReport(...).records[module].to_df()``), not from iochar's store, and
Drishti's formulas are those of drishti-io 0.8 ``drishti/handlers/handle_darshan.py``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import iochar
from iochar.analyze import insights
from iochar.analyze.insights.rules import RANDOM_ACCESS, REDUNDANT_READS, STDIO_HEAVY

darshan = pytest.importorskip("darshan", reason="PyDarshan reads the logs independently")

DATA = Path(__file__).resolve().parents[2] / "data" / "darshan"
DFS_LOG = (
    DATA
    / "darshan-logs"
    / "ior_daos"
    / "snyder_ior-DFS_id4681120-53379_5-8-15060-3270540599978592154_1.darshan"
)
STDIO_LOG = DATA / "darshan-logs" / "partial_data_stdio" / "partial_data_stdio.darshan"
NONMPI = DATA / "classify" / "nonmpi_dxt_anonymized.darshan"
DXT = DATA / "dxt.darshan"


def _counters(path: Path, module: str):
    report = darshan.DarshanReport(str(path), read_all=True)
    return report.records[module].to_df()["counters"]


def _run(path: Path, rule):
    store = iochar.connect(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # partial-module warning of partial_data_stdio
        store.load(path)
    try:
        found = insights.run(store, rules=[rule])
        # the evidence row, also when the rule is silent (bound as run() binds)
        binds = {k: v for k, v in rule.defaults().items() if f"${k}" in rule.sql}
        rel = store.sql(rule.sql, {"job_id": None, **binds})
        names, row = rel.columns, rel.fetchall()
    finally:
        store.close()
    assert len(row) == 1
    return found, dict(zip(names, row[0], strict=True))


def test_stdio_share_counts_dfs_bytes():
    """IOR -a DFS on DAOS: 2214 B of console output through STDIO, 32 MiB through DFS.
    Drishti S01 reports STDIO as 100 % of the data (it sums STDIO, POSIX and MPI-IO
    only); the job's volume holds the DFS bytes, so STDIO is 0.0066 % and no finding."""
    dfs = _counters(DFS_LOG, "DFS")
    stdio = _counters(DFS_LOG, "STDIO")
    posix = _counters(DFS_LOG, "POSIX")
    dfs_bytes = int(dfs["DFS_BYTES_READ"].sum() + dfs["DFS_BYTES_WRITTEN"].sum())
    stdio_bytes = int(stdio["STDIO_BYTES_READ"].sum() + stdio["STDIO_BYTES_WRITTEN"].sum())
    posix_bytes = int(posix["POSIX_BYTES_READ"].sum() + posix["POSIX_BYTES_WRITTEN"].sum())
    assert (stdio_bytes, posix_bytes, dfs_bytes) == (2214, 0, 2 * 16 * 2**20)
    # Drishti's share (handle_darshan.py: STDIO / (STDIO + POSIX + MPI-IO)) is 100 %
    assert stdio_bytes / (stdio_bytes + posix_bytes) == 1.0
    found, ev = _run(DFS_LOG, STDIO_HEAVY)
    assert ev["dfs_bytes"] == dfs_bytes and ev["stdio_bytes"] == stdio_bytes
    assert ev["total_bytes"] == stdio_bytes + max(posix_bytes, dfs_bytes)
    assert ev["stdio_share"] == pytest.approx(stdio_bytes / (stdio_bytes + dfs_bytes))
    assert ev["stdio_share"] < STDIO_HEAVY.defaults()["interface_stdio"]
    assert found.empty


def test_stdio_rule_still_fires_without_dfs():
    """A job with no DFS module: the share is STDIO / (STDIO + max(POSIX, MPI-IO)), as
    Drishti's, and 99.8 % of 16 GiB is high."""
    stdio = _counters(STDIO_LOG, "STDIO")
    posix = _counters(STDIO_LOG, "POSIX")
    mpiio = _counters(STDIO_LOG, "MPI-IO")
    s = int(stdio["STDIO_BYTES_READ"].sum() + stdio["STDIO_BYTES_WRITTEN"].sum())
    p = int(posix["POSIX_BYTES_READ"].sum() + posix["POSIX_BYTES_WRITTEN"].sum())
    m = int(mpiio["MPIIO_BYTES_READ"].sum() + mpiio["MPIIO_BYTES_WRITTEN"].sum())
    found, ev = _run(STDIO_LOG, STDIO_HEAVY)
    assert ev["dfs_bytes"] == 0 and ev["total_bytes"] == s + max(p, m)
    assert ev["stdio_share"] == pytest.approx(s / (s + max(p, m))) and ev["stdio_share"] > 0.99
    assert list(found["severity"]) == ["high"]


def test_random_reads_equal_drishti_p11_net_formula():
    """Drishti's code (sequential = SEQ - CONSEC; random = reads - CONSEC - sequential)
    nets to reads - SEQ: consecutive reads are not subtracted twice. Its P11 count on
    this log is iochar's RANDOM-1 count."""
    c = _counters(NONMPI, "POSIX")
    reads = int(c["POSIX_READS"].sum())
    seq = int(c["POSIX_SEQ_READS"].sum())
    consec = int(c["POSIX_CONSEC_READS"].sum())
    assert consec > 0 and seq >= consec  # SEQ includes CONSEC (darshan-runtime docs)
    drishti_random = reads - consec - (seq - consec)
    assert drishti_random == reads - seq
    assert reads - seq - consec != drishti_random  # what "subtracting twice" would give
    found, ev = _run(NONMPI, RANDOM_ACCESS)
    assert ev["random_reads"] == drishti_random and ev["reads"] == reads
    assert list(found["severity"]) == ["warn"]  # 29 % of 7822 reads, > 1000


def test_redundant_reads_use_message_condition_not_drishti_test():
    """Drishti P09 fires on dxt.darshan because the job's highest read offset (62.8 MiB)
    exceeds the bytes read (21.5 MiB): sparse reads, the reverse of its message "more
    data read than the highest offset". Per file, the bytes read beyond the file's
    extent are 101922 B (0.45 %), under one small request's worth: only info."""
    c = _counters(DXT, "POSIX")
    total = int(c["POSIX_BYTES_READ"].sum())
    highest = int(c["POSIX_MAX_BYTE_READ"].max())
    assert highest > total  # Drishti's test (handle_darshan.py check_traffic) holds
    per_file = c.groupby("id").agg(b=("POSIX_BYTES_READ", "sum"), m=("POSIX_MAX_BYTE_READ", "max"))
    reread = int((per_file["b"] - (per_file["m"] + 1)).clip(lower=0).sum())
    found, ev = _run(DXT, REDUNDANT_READS)
    assert ev["bytes_read"] == total and ev["reread_bytes"] == reread
    assert 0 < reread < REDUNDANT_READS.defaults()["reread_bytes_absolute"]
    assert list(found["severity"]) == ["info"]
