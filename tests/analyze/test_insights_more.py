"""Insight rules on blocking MPI-IO and staging I/O (iochar.analyze.insights.rules_more).

Blocking MPI-IO: the expected numbers are computed here from PyDarshan's records of the
real logs (``MPIIO_F_READ_TIME`` / ``MPIIO_F_WRITE_TIME`` summed over the MPI-IO records,
over the process count and the log's run time), not from iochar's store.

Staging I/O: the expected numbers are computed here from the raw text of the real strace
captures (every read/write family call on a regular file, its size, offset, start and
``-T`` duration) and from what each captured program does (data/strace/*/SOURCE.md: which
files are its scratch files), and from PyDarshan's POSIX records of a real log.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections import defaultdict
from pathlib import Path

import pytest

import iochar
from iochar.analyze import insights
from iochar.analyze.insights import rules_more
from iochar.analyze.insights.rules_more import BLOCKING_READ, BLOCKING_WRITE, STAGING

DATA = Path(__file__).resolve().parents[2] / "data"
LOGS = sorted((DATA / "darshan").rglob("*.darshan"))
STRACES = sorted((DATA / "strace").rglob("*.strace"))
STAGING_DIR = DATA / "strace" / "staging"

IMBALANCED = "imbalanced-io.darshan"
EXAMPLE = "example.darshan"
MACSIO = "shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158.darshan"
RELEASE = "mpi-io-test-x86_64-3.5.0.darshan"
NONMPI = "nonmpi_dxt_anonymized.darshan"
MORE = ("BLOCKING-READ-1", "BLOCKING-WRITE-1", "STAGING-1")


def _load(*paths):
    store = iochar.connect(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # partial-module warnings of two logs
        for p in paths:
            store.load(p)
    return store


@pytest.fixture(scope="module")
def everything():
    """Every real Darshan log under data/darshan and strace capture under data/strace,
    in one store, with the whole default rule set run on it."""
    store = _load(*LOGS, *STRACES)
    jobs = dict(
        store.sql(
            "SELECT regexp_extract(s.uri, '[^/]*$'), j.job_id "
            "FROM jobs j JOIN sources s USING (source_id)"
        ).fetchall()
    )
    found = insights.run(store)
    yield store, jobs, found
    store.close()


def _finding(found, job_id, code):
    rows = found[(found["job_id"] == job_id) & (found["code"] == code)]
    assert len(rows) <= 1
    return None if rows.empty else rows.iloc[0]


def _checked(found, job_id, code):
    return not any(
        n["job_id"] == job_id and n["code"] == code for n in found.evidence["not_checked"]
    )


def _path(name):
    (p,) = [q for q in LOGS if q.name == name]
    return p


# -- the rules are data, in the default set -------------------------------------------


def test_rules_registered_with_topics_and_sourced_params():
    codes = [r.code for r in insights.RULES]
    assert all(codes.count(c) == 1 for c in MORE)
    assert "blocking-io" in insights.TOPICS and "staging-io" in insights.TOPICS
    for rule in rules_more.RULES:
        assert rule in insights.RULES and rule.topic in insights.TOPICS
        assert rule.params and all(p.source and p.unit for p in rule.params)
        names = {p.name for p in rule.params}
        assert {rule.warn_at, rule.high_at, rule.min_count} <= names
    # Drishti's share level (config.py small_requests / misaligned / interface_stdio)
    assert BLOCKING_READ.defaults()["blocking_share"] == 0.1
    # Miller & Katz section 5.1: staging outweighs the other two types; their example
    assert STAGING.defaults()["staging_share"] == 0.5
    assert STAGING.defaults()["staging_share_high"] == pytest.approx(25 / (25 + 2 + 0.75))
    # section 6.2: at most 2 MW of 8-byte words of file cache per processor
    assert STAGING.defaults()["cache_bytes"] == 2 * 2**20 * 8


def test_whole_default_set_runs_on_every_real_log_and_capture(everything):
    store, jobs, found = everything
    assert len(LOGS) >= 20 and len(STRACES) >= 12
    names = {p.name for p in [*LOGS, *STRACES]}
    assert names <= set(jobs)
    n_jobs = store.sql("SELECT count(*) FROM jobs").fetchall()[0][0]
    assert found.evidence["checked"] + len(found.evidence["not_checked"]) == n_jobs * len(
        insights.RULES
    )
    assert set(found["topic"]) <= set(insights.TOPICS)
    for ev in found["evidence"]:
        assert all(v is None or isinstance(v, (int, float)) for v in ev.values())
    json.dumps(found.drop(columns="sql").to_dict("records"))
    # every job with MPI-IO counters and a run time is checked by the blocking rules,
    # every job whose files moved data by the staging rule
    mpiio = {
        r[0]
        for r in store.sql(
            "SELECT DISTINCT m.job_id FROM module_counters m JOIN jobs j USING (job_id) "
            "WHERE m.module = 'MPI-IO' AND j.runtime_s > 0"
        ).fetchall()
    }
    for jid in jobs.values():
        assert _checked(found, jid, "BLOCKING-READ-1") == (jid in mpiio)
        assert _checked(found, jid, "BLOCKING-WRITE-1") == (jid in mpiio)
    assert not any(_checked(found, jobs[p.name], "BLOCKING-READ-1") for p in STRACES)
    for p in STRACES:
        assert _checked(found, jobs[p.name], "STAGING-1")


@pytest.mark.parametrize("path", STRACES, ids=lambda p: p.name)
def test_whole_default_set_on_each_strace_capture_alone(path):
    """A store holding one capture (one job: no repeated-job group, no MPI-IO)."""
    store = _load(path)
    try:
        found = insights.run(store)
        assert found.evidence["checked"] + len(found.evidence["not_checked"]) == len(insights.RULES)
        codes = {n["code"] for n in found.evidence["not_checked"]}
        assert {"BLOCKING-READ-1", "BLOCKING-WRITE-1"} <= codes and "STAGING-1" not in codes
    finally:
        store.close()


# -- blocking-io: Drishti M06/M07 with a measure ----------------------------------------


def _mpiio_truth(name):
    """Blocking MPI-IO read/write time per rank and share of the run, from PyDarshan."""
    darshan = pytest.importorskip("darshan", reason="PyDarshan reads the logs")
    rep = darshan.DarshanReport(str(_path(name)), read_all=False)
    rep.mod_read_all_records("MPI-IO")
    frames = rep.records["MPI-IO"].to_df()
    c, f = frames["counters"], frames["fcounters"]
    job = rep.metadata["job"]
    nprocs, runtime = job["nprocs"], job["run_time"]
    out = {"nprocs": nprocs, "runtime": runtime}
    for op, ops in (("read", "READS"), ("write", "WRITES")):
        blocking = c[f"MPIIO_INDEP_{ops}"].sum() + c[f"MPIIO_COLL_{ops}"].sum()
        t = f[f"MPIIO_F_{op.upper()}_TIME"].sum()
        per_rank = t / nprocs if blocking > 0 else 0.0
        out[op] = {
            "blocking": blocking,
            "nb": c[f"MPIIO_NB_{ops}"].sum(),
            "per_rank": per_rank,
            "share": per_rank / runtime,
        }
    return out


def _expected_grade(share, per_rank):
    if share <= 0.1:
        return None
    if per_rank <= 1.0:
        return "info"
    return "high" if share > 0.3922 else "warn"


@pytest.mark.parametrize("name", [IMBALANCED, EXAMPLE, MACSIO, RELEASE])
def test_blocking_time_share_from_pydarshan(everything, name):
    _, jobs, found = everything
    truth = _mpiio_truth(name)
    for op, rule in (("read", BLOCKING_READ), ("write", BLOCKING_WRITE)):
        t = truth[op]
        assert t["nb"] == 0  # none of the logs posts a non-blocking call: Drishti warns
        assert _checked(found, jobs[name], rule.code)
        f = _finding(found, jobs[name], rule.code)
        want = _expected_grade(t["share"], t["per_rank"])
        assert (f.severity if f is not None else None) == want
        if f is not None:
            ev = f.evidence
            assert ev[f"blocking_{op}_share"] == pytest.approx(t["share"])
            assert ev[f"blocking_{op}_s_per_rank"] == pytest.approx(t["per_rank"])
            assert ev[f"blocking_{op}s"] == t["blocking"] and ev[f"nonblocking_{op}s"] == 0
            assert ev["overlap_bound_s"] <= ev[f"blocking_{op}_s_per_rank"] + 1e-9


def test_blocking_fires_on_the_long_imbalanced_run(everything):
    """imbalanced-io: 496 ranks blocked ~1058 s each in MPI-IO writes of a 1479 s run
    (Drishti M07 says only "could benefit"); its reads are ~6% of the run (no finding)."""
    _, jobs, found = everything
    truth = _mpiio_truth(IMBALANCED)
    assert truth["write"]["per_rank"] > 1000 and truth["write"]["share"] > 0.7
    f = _finding(found, jobs[IMBALANCED], "BLOCKING-WRITE-1")
    assert f.severity == "high"
    # overlap can hide at most the time the ranks spend outside MPI-IO
    outside = truth["runtime"] - f.evidence["mpiio_s_per_rank"]
    assert f.evidence["overlap_bound_s"] == pytest.approx(min(truth["write"]["per_rank"], outside))
    assert f.evidence["overlap_bound_s"] < truth["write"]["per_rank"]
    assert truth["read"]["share"] < 0.1
    assert _finding(found, jobs[IMBALANCED], "BLOCKING-READ-1") is None


def test_blocking_only_info_when_the_time_is_tiny(everything):
    """mpi-io-test 3.5.0: 22% and 38% of a 0.05 s run, ~0.01-0.02 s per rank."""
    _, jobs, found = everything
    truth = _mpiio_truth(RELEASE)
    for op, code in (("read", "BLOCKING-READ-1"), ("write", "BLOCKING-WRITE-1")):
        assert truth[op]["share"] > 0.1 and truth[op]["per_rank"] < 0.05
        assert _finding(found, jobs[RELEASE], code).severity == "info"


def test_blocking_not_checked_without_mpiio(everything):
    _, jobs, found = everything
    darshan = pytest.importorskip("darshan", reason="PyDarshan reads the logs")
    assert "MPI-IO" not in darshan.DarshanReport(str(_path(NONMPI)), read_all=False).modules
    assert not _checked(found, jobs[NONMPI], "BLOCKING-READ-1")
    need = [n for n in found.evidence["not_checked"] if n["job_id"] == jobs[NONMPI]]
    assert any("MPI-IO" in n["needs"] for n in need if n["code"] == "BLOCKING-WRITE-1")


def test_blocking_thresholds_are_parameters(everything):
    store, jobs, _ = everything
    truth = _mpiio_truth(RELEASE)
    out = insights.run(
        store,
        job_id=jobs[RELEASE],
        rules=[BLOCKING_WRITE],
        params={"blocking_seconds_absolute": 0.001},
    )
    (sev,) = out["severity"]
    assert sev == ("high" if truth["write"]["share"] > 0.3922 else "warn")


# -- staging-io: Miller & Katz's out-of-core I/O ----------------------------------------

_CALL = re.compile(
    r"^(?:\d+ )?(\d\d):(\d\d):(\d\d\.\d+) (read|pread64|readv|write|pwrite64|writev)"
    r"\((\d+)<([^>]*)>, (.*)\) += (\d+) <([\d.]+)>$"
)


def _strace_io(path):
    """Per regular file of a ``strace -tt -T -y`` capture: bytes read and written, time
    in the calls, start of the first write, end of the last read, highest byte written
    (offset + bytes, pwrite64's offset; write() continues where the fd was), from the
    raw text."""
    files = defaultdict(
        lambda: {"r": 0, "w": 0, "t": 0.0, "first_w": None, "last_r": None, "ext": 0}
    )
    t0 = None
    for line in path.read_text().splitlines():
        m = _CALL.match(line)
        if m is None:
            continue
        h, mi, s, call, _fd, name, args, ret, dur = m.groups()
        t = int(h) * 3600 + int(mi) * 60 + float(s)
        t0 = t if t0 is None else t0
        if not name.startswith("/") or name.startswith(("/dev/", "/proc/", "/sys/")):
            continue
        n, d = int(ret), float(dur)
        f = files[name]
        f["t"] += d
        if call.startswith(("read", "pread")):
            f["r"] += n
            if n:
                f["last_r"] = t + d
        else:
            f["w"] += n
            if n and f["first_w"] is None:
                f["first_w"] = t
            if call == "pwrite64":
                f["ext"] = max(f["ext"], int(args.rsplit(", ", 1)[1]) + n)
    return files


def _peak(intervals):
    """Largest total size live at once: (start, end, size), touching ends not overlapping."""
    best = 0
    for s0, _, _ in intervals:
        best = max(best, sum(z for s, e, z in intervals if s <= s0 < e))
    return best


def test_staging_out_of_core_capture_is_high(everything):
    """ooc_app ooc: 289 MiB of the run's I/O on two scratch files of 20 and 12 MiB that
    are both live in iterations 3-4: 32 MiB, above a 16 MiB file cache."""
    _, jobs, found = everything
    io = _strace_io(STAGING_DIR / "ooc.strace")
    scratch = {p: v for p, v in io.items() if "/scratch_" in p}
    assert len(scratch) == 2
    total = sum(v["r"] + v["w"] for v in io.values())
    staged = sum(v["r"] + v["w"] for v in scratch.values())
    assert staged == 289 * 2**20  # SOURCE.md: 180 MiB on A, 109 MiB on B
    share = staged / total
    peak = _peak([(v["first_w"], v["last_r"], v["ext"]) for v in scratch.values()])
    assert peak == 32 * 2**20 and sorted(v["ext"] for v in scratch.values()) == [
        12 * 2**20,
        20 * 2**20,
    ]
    f = _finding(found, jobs["ooc.strace"], "STAGING-1")
    assert share > 25 / 27.75 and f.severity == "high"
    ev = f.evidence
    assert ev["staging_files"] == 2
    assert ev["staging_bytes"] == staged and ev["io_bytes"] == total
    assert ev["staging_share"] == pytest.approx(share)
    assert ev["peak_live_bytes"] == peak and ev["largest_staging_bytes"] == 20 * 2**20
    # -T durations: time share known, from the raw calls (microsecond text)
    t_all = sum(v["t"] for v in io.values())
    t_st = sum(v["t"] for v in scratch.values())
    assert ev["staging_time_s"] == pytest.approx(t_st, abs=1e-5)
    assert ev["staging_time_share"] == pytest.approx(t_st / t_all, abs=1e-3)
    # the advice quotes the memory that would hold the staging data
    assert "holding 32.0 MiB of staging data" in f.recommendation
    assert "Miller & Katz" in f.recommendation


def test_staging_silent_when_the_data_set_fits_in_memory(everything):
    """ooc_app incore: the same computation with the arrays in memory (gcm against venus)."""
    _, jobs, found = everything
    io = _strace_io(STAGING_DIR / "incore.strace")
    assert not any("scratch" in p for p in io) and sum(v["r"] + v["w"] for v in io.values())
    assert _checked(found, jobs["incore.strace"], "STAGING-1")
    assert _finding(found, jobs["incore.strace"], "STAGING-1") is None
    out = rules_more.staging_io(everything[0], job_id=jobs["incore.strace"])
    assert out["staging_share"].tolist() == [0.0] and out["peak_live_bytes"].tolist() == [0.0]


def test_staging_small_scratch_file_is_only_info(everything):
    """ckpt_app (data/strace/SOURCE.md): a 64 KiB scratch.dat written and read back 40
    times, 90% of the bytes, but it fits in the file cache many times over."""
    _, jobs, found = everything
    io = _strace_io(DATA / "strace" / "ckpt_tt.strace")
    scratch = {p: v for p, v in io.items() if p.endswith("/scratch.dat")}
    (s,) = scratch.values()
    total = sum(v["r"] + v["w"] for v in io.values())
    assert s["r"] == s["w"] == 40 * 65536
    f = _finding(found, jobs["ckpt_tt.strace"], "STAGING-1")
    assert f.severity == "info"
    assert f.evidence["staging_share"] == pytest.approx((s["r"] + s["w"]) / total)
    assert f.evidence["staging_share"] > 0.5
    # write() continues where lseek put the fd: 2 x 32768 from offset 0
    assert f.evidence["peak_live_bytes"] == 65536 <= STAGING.defaults()["cache_bytes"]


def test_staging_from_darshan_counters(everything):
    """MACSio's HDF5 file, re-read 3x and re-written 4x (classify: staging), from Darshan
    counters: 99.8% of the bytes, a 12.7 MiB written extent: info with the default 16 MiB
    file cache, high when the cache is set smaller."""
    store, jobs, found = everything
    darshan = pytest.importorskip("darshan", reason="PyDarshan reads the logs")
    rep = darshan.DarshanReport(str(_path(MACSIO)), read_all=False)
    rep.mod_read_all_records("POSIX")
    c = rep.records["POSIX"].to_df()["counters"]
    names = rep.name_records
    c = c.assign(
        path=[names[i] for i in c["id"]], b=c["POSIX_BYTES_READ"] + c["POSIX_BYTES_WRITTEN"]
    )
    by_file = c.groupby("path").agg(b=("b", "sum"), ext=("POSIX_MAX_BYTE_WRITTEN", "max"))
    h5 = by_file.loc["/tmp/test/macsio_hdf5_000.h5"]
    fc = rep.records["POSIX"].to_df()["fcounters"]
    fc = fc.assign(path=[names[i] for i in fc["id"]])
    fc = fc.assign(t=fc["POSIX_F_READ_TIME"] + fc["POSIX_F_WRITE_TIME"]).groupby("path")["t"].sum()
    f = _finding(found, jobs[MACSIO], "STAGING-1")
    assert f.severity == "info"
    assert f.evidence["staging_bytes"] == h5["b"]
    assert f.evidence["staging_share"] == pytest.approx(h5["b"] / by_file["b"].sum())
    assert f.evidence["peak_live_bytes"] == h5["ext"] + 1 < 16 * 2**20
    # time where known: POSIX_F_READ_TIME + POSIX_F_WRITE_TIME (summed over ranks)
    assert f.evidence["staging_time_s"] == pytest.approx(fc["/tmp/test/macsio_hdf5_000.h5"])
    assert f.evidence["staging_time_share"] == pytest.approx(
        fc["/tmp/test/macsio_hdf5_000.h5"] / fc.sum()
    )
    out = insights.run(
        store, job_id=jobs[MACSIO], rules=[STAGING], params={"cache_bytes": 8 * 2**20}
    )
    assert out["severity"].tolist() == ["high"]


def test_staging_not_on_darshan_logs_without_staging_files(everything):
    _, jobs, found = everything
    for name in (RELEASE, EXAMPLE, IMBALANCED):
        assert _checked(found, jobs[name], "STAGING-1")
        assert _finding(found, jobs[name], "STAGING-1") is None


# -- staging-io: the cache the simulator says would hide the wait ----------------------

_MW = 8 * 2**20  # Miller & Katz's mega-word of 8-byte Cray words [bytes]


def _simulated_answer(store, job_id, sizes, hide=0.9):
    """Miller & Katz section 6 replay, run here run by run with cachesim.simulate: the
    smallest cache (then no policy before read-ahead + write-behind) whose I/O wait is
    at most 1 - hide of the wait with no cache and no policy."""
    from iochar.analyze import cachesim

    policies = (
        ("none", {"read_ahead": "off", "write_behind": False}),
        ("both", {"read_ahead": "sequential", "write_behind": True}),
    )
    runs = []
    for size in sorted(sizes):
        for name, kw in policies:
            r = cachesim.simulate(store, job_id, cache=cachesim.CacheConfig(size_bytes=size, **kw))
            runs.append((size, name, r.io_wait_s, r.peak_disk_bps))
    base = runs[0][2]
    assert runs[0][:2] == (0, "none") and base > 0
    for size, name, wait, peak in runs:
        if 1 - wait / base >= hide:
            return size, name, wait, base, peak
    raise AssertionError("no simulated cache hides the wait")


def test_staging_simulated_cache_hides_the_out_of_core_wait(everything):
    """ooc: two scratch files of 20 and 12 MiB live together (32 MiB = 4 MW). Replayed
    through the simulator, the cache that hides 90% of the I/O wait is at most that
    peak rounded up to whole MW; the rule reports the simulator's own numbers."""
    from iochar._units import fmt_bytes
    from iochar.analyze.cachesim.trace import read_ops

    store, jobs, found = everything
    jid = jobs["ooc.strace"]
    io = _strace_io(STAGING_DIR / "ooc.strace")
    scratch = [v for p, v in io.items() if "/scratch_" in p]
    peak = _peak([(v["first_w"], v["last_r"], v["ext"]) for v in scratch])
    rounded = -(-peak // _MW) * _MW
    assert rounded == 4 * _MW
    sizes = {0, 16 * 2**20, rounded, 2 * rounded}  # none, the 2 MW file cache, peak, 2x
    size, policy, wait, base, disk = _simulated_answer(store, jid, sizes)
    f = _finding(found, jid, "STAGING-1")
    ev = f.evidence
    assert ev["simulated"] == 1 and ev["sim_enough"] == 1
    assert ev["sim_ops"] == len(read_ops(store, jid)) <= ev["sim_max_ops"]
    assert ev["sim_cache_bytes"] == size <= rounded
    assert ev["sim_peak_live_mw_bytes"] == rounded
    assert ev["sim_read_ahead_write_behind"] == (policy == "both")
    assert ev["sim_io_wait_s"] == pytest.approx(wait, rel=1e-12)
    assert ev["sim_baseline_io_wait_s"] == pytest.approx(base, rel=1e-12)
    assert ev["sim_hidden_share"] == pytest.approx(1 - wait / base, rel=1e-12)
    assert ev["sim_hidden_share"] >= 0.9
    assert ev["sim_peak_disk_bps"] == pytest.approx(disk, rel=1e-12)
    # the advice names the simulated cache and the wait it hides
    assert f"a cache of {fmt_bytes(size)}" in f.recommendation
    assert f"hides {1 - wait / base:.0%} of the I/O wait" in f.recommendation
    assert "list_contains($job_ids, o.job_id)" in f.sql  # the simulator's query
    assert "count(*) AS ops" in f.sql  # and the count of each job's operations


def test_staging_not_simulated_when_the_share_does_not_fire(everything):
    """incore: no staging file, so no finding and no simulation (it costs ~us per op)."""
    store, jobs, found = everything
    jid = jobs["incore.strace"]
    assert _finding(found, jid, "STAGING-1") is None
    rows = rules_more.staging_io(store, job_id=jid)
    sim = rules_more.staging_cache_sim(store, rows)
    assert sim["job_id"].tolist() == [jid]
    assert math.isnan(sim["simulated"].iloc[0]) and math.isnan(sim["sim_ops"].iloc[0])
    assert sim.sql is None


def test_staging_counters_only_not_simulated(everything):
    """MACSio (data/darshan/lustre): Darshan counters, no DXT: nothing to replay."""
    store, jobs, found = everything
    jid = jobs[MACSIO]
    assert store.sql("SELECT count(*) FROM ops WHERE job_id = $j", {"j": jid}).fetchall() == [(0,)]
    f = _finding(found, jid, "STAGING-1")
    assert f.evidence["simulated"] == 0 and f.evidence["sim_ops"] == 0
    assert f.evidence["sim_cache_bytes"] is None and f.evidence["sim_io_wait_s"] is None
    assert "Not simulated: counters only" in f.recommendation


def test_staging_over_the_op_cap_not_simulated(everything):
    store, jobs, _ = everything
    from iochar.analyze.cachesim.trace import read_ops

    jid = jobs["ooc.strace"]
    n = len(read_ops(store, jid))
    out = insights.run(store, job_id=jid, rules=[STAGING], params={"sim_max_ops": n - 1})
    (ev,) = out["evidence"]
    assert ev["simulated"] == 0 and ev["sim_ops"] == n and ev["sim_max_ops"] == n - 1
    assert ev["sim_cache_bytes"] is None
    (rec,) = out["recommendation"]
    assert f"Not simulated: {n:,} operations, above sim_max_ops ({n - 1:,})" in rec
    assert STAGING.defaults()["sim_max_ops"] == 100_000


# -- peak live volume and advice --------------------------------------------------------


def test_peak_live_sweep():
    import numpy as np

    s, e, z = np.array([0.0, 1.0, 2.0]), np.array([2.0, 3.0, 4.0]), np.array([5, 7, 11])
    # [1, 2) holds 5 + 7; at 2 the first ends as the third starts: 7 + 11
    assert rules_more.peak_live(s, e, z) == (18.0, 2.0)
    assert rules_more.peak_live(s[:0], e[:0], z[:0])[0] == 0.0
    assert _peak(list(zip(s, e, z, strict=True))) == 18


def test_advice_fills_evidence_and_keeps_other_braces():
    row = {"peak_live_bytes": 3 * 2**30, "staging_bytes": float("nan"), "staging_share": 0.5}
    text = STAGING.advice(row)
    assert "holding 3.0 GiB" in text and "(n/a, 50% of its bytes)" in text
    assert "{" not in text
    assert BLOCKING_READ.advice(row) == BLOCKING_READ.recommendation  # no placeholder


# -- the commands show the rules (read-only check of cli.py and summary) ---------------


def test_insights_and_summary_commands_show_the_rules(tmp_path, capsys):
    from iochar.cli import main

    ooc = str(STAGING_DIR / "ooc.strace")
    assert main(["summary", ooc, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    text = json.dumps(doc)
    assert "STAGING-1" in text and "staging-io" in text
    db = str(tmp_path / "x.duckdb")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["load", ooc, str(_path(IMBALANCED)), "--db", db]) == 0
    capsys.readouterr()
    assert main(["insights", "--db", db, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    codes = {(g["code"], g["severity"]) for g in got}
    assert ("STAGING-1", "high") in codes and ("BLOCKING-WRITE-1", "high") in codes
    rec = next(g["recommendation"] for g in got if g["code"] == "STAGING-1")
    assert "32.0 MiB" in rec
    assert not any(isinstance(v, str) for g in got for v in g["evidence"].values())
    assert math.isfinite(
        next(g["evidence"]["peak_live_bytes"] for g in got if g["code"] == "STAGING-1")
    )


def test_classified_reused_only_for_the_same_store_state():
    from iochar.analyze.classify import classify
    from iochar.analyze.insights._shared import classified

    store = _load(STAGING_DIR / "ooc.strace")
    try:
        first = classified(store)
        assert first.equals(classify(store))
        assert set(first.loc[first["class"] == "staging", "path"]) == {
            "/tmp/iochar-staging/scratch_a.dat",
            "/tmp/iochar-staging/scratch_b.dat",
        }
        first.loc[:, "class"] = "other"  # a caller's change does not reach the memo
        assert (classified(store)["class"] == "staging").sum() == 2
        store.load(STAGING_DIR / "incore.strace")  # a new input: classified again
        again = classified(store)
        assert again["job_id"].nunique() == 2 and again.equals(classify(store))
    finally:
        store.close()
    other = _load(DATA / "strace" / "ckpt_tt.strace")  # another store, never shared
    try:
        assert classified(other).equals(classify(other))
    finally:
        other.close()
