"""Rank and Lustre insight rules (issue 19, item 1: rules_ranks) on real Darshan logs.

Every rule fires on a real log whose counters cross its threshold and stays silent on
one that does not. The expected numbers are computed independently of iochar's store:
from PyDarshan's own reading of the same log (``darshan.DarshanReport`` records, the
DataFrames of Darshan's counters) with the formula each rule's source gives (Drishti's
checks in ``drishti/handlers/handle_darshan.py``, Darshan's counter definitions).
Logs: ``data/darshan/**`` (``lustre/`` holds PyDarshan's sample-badost / sample-goodost
and MACSio logs, see its SOURCE.md).
"""

from __future__ import annotations

import statistics
import warnings
from collections import defaultdict
from pathlib import Path

import pytest

import iochar
from iochar.analyze import insights
from iochar.analyze.insights import rules_ranks

darshan = pytest.importorskip("darshan", reason="PyDarshan reads the logs (iochar[darshan])")

DATA = Path(__file__).resolve().parents[2] / "data" / "darshan"
LOGS = sorted(DATA.rglob("*.darshan"))
RULES = [*insights.RULES, *rules_ranks.RULES]

IMBALANCED = "imbalanced-io.darshan"
EXAMPLE = "example.darshan"
BADOST = "sample-badost.darshan"
GOODOST = "sample-goodost.darshan"
MACSIO = "shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158.darshan"
DXT_SIMPLE = "sample-dxt-simple.darshan"
DIAGONAL = "hdf5_diagonal_write_bytes_range_dxt.darshan"
PNETCDF = "shane_ior-PNETCDF_id438100-438100_11-9-41525-10280033558448664385_1.darshan"


@pytest.fixture(scope="module")
def db():
    store = iochar.connect(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # partial-module warnings of two logs
        for path in LOGS:
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
    return insights.run(db, rules=rules_ranks.RULES)


def _finding(found, job_id, code):
    rows = found[(found["job_id"] == job_id) & (found["code"] == code)]
    assert len(rows) <= 1
    return None if rows.empty else rows.iloc[0]


def _checked(found, job_id, code):
    return {"job_id": job_id, "code": code} not in [
        {"job_id": d["job_id"], "code": d["code"]} for d in found.evidence["not_checked"]
    ]


def _path(name):
    (path,) = [p for p in LOGS if p.name == name]
    return str(path)


def _report(name, *modules):
    """PyDarshan's reading of a log: {module: DataFrame of counters and fcounters}."""
    rep = darshan.DarshanReport(_path(name), read_all=False)
    out = {}
    for mod in modules:
        rep.mod_read_all_records(mod)
        d = rep.records[mod].to_df()
        out[mod] = d["counters"].merge(d["fcounters"], on=["id", "rank"])
    return rep, out


def _record_id(db, file_id):
    return db.sql("SELECT record_id FROM files WHERE file_id = $f", {"f": file_id}).fetchall()[0][0]


def _osts(name):
    """OST ids of each record id, from PyDarshan's LUSTRE records."""
    rep = darshan.DarshanReport(_path(name), read_all=False)
    rep.mod_read_all_lustre_records()
    osts = defaultdict(set)
    for rec in rep.records["LUSTRE"]:
        for comp in rec["components"]:
            osts[rec["id"]] |= {int(o) for o in comp["ost_ids"] if o >= 0}
    return osts


def test_rules_are_data_with_sourced_params():
    assert len({r.code for r in rules_ranks.RULES}) == len(rules_ranks.RULES)
    topics = {r.topic for r in rules_ranks.RULES}
    assert topics == {"imbalance", "straggler", "skew", "rank0-bottleneck", "bad-ost", "striping"}
    assert topics <= set(insights.TOPICS)
    for rule in rules_ranks.RULES:
        names = {p.name for p in rule.params}
        assert rule.warn_at in names and (rule.high_at is None or rule.high_at in names)
        assert all(p.source for p in rule.params)
        assert "$job_id IS NULL OR job_id = $job_id" in rule.sql


def test_every_rule_runs_on_every_real_log(db, jobs):
    """Built-in and rank rules together, on every Darshan log under data/darshan."""
    assert len(LOGS) >= 23 and {BADOST, GOODOST, MACSIO, IMBALANCED} <= set(jobs)
    out = insights.run(db, rules=RULES)
    n = out.evidence["checked"] + len(out.evidence["not_checked"])
    assert n == len(jobs) * len(RULES)
    assert set(out["topic"]) <= set(insights.TOPICS)
    for ev in out["evidence"]:
        assert all(v is None or isinstance(v, (int, float)) for v in ev.values())
    mine = insights.run(db, rules=rules_ranks.RULES)
    for job in jobs.values():  # job by job (`iochar insights --job`): the same findings
        one = insights.run(db, job_id=job, rules=rules_ranks.RULES)
        both = mine[mine["job_id"] == job]
        assert list(one["code"]) == list(both["code"])
        assert list(one["evidence"]) == list(both["evidence"])


# -- imbalance --------------------------------------------------------------------------


def _p18(frame):
    """Drishti P18 per shared record (handle_darshan.py:474-476)."""
    shared = frame[frame["rank"] == -1]
    total = shared["POSIX_BYTES_WRITTEN"] + shared["POSIX_BYTES_READ"]
    diff = (shared["POSIX_SLOWEST_RANK_BYTES"] - shared["POSIX_FASTEST_RANK_BYTES"]).abs()
    return (diff / total).where(total > 0), shared


def test_imbalance_shared_file_names_single_stripe(db, jobs, found):
    _, recs = _report(IMBALANCED, "POSIX")
    p18, shared = _p18(recs["POSIX"])
    worst = shared.loc[p18.idxmax()]
    worst_id = int(shared.loc[p18.idxmax(), "id"])  # uint64 column (a row Series is float)
    assert p18.max() > 0.15  # Drishti P18 (config.py imbalance_stragglers)
    f = _finding(found, jobs[IMBALANCED], "IMBALANCE-1")
    assert f.severity == "high"
    assert f.evidence["imbalance"] == pytest.approx(p18.max())
    assert _record_id(db, f.evidence["worst_file_id"]) == worst_id
    # one rank moved (nearly) all the file's bytes: that is the cause...
    assert f.evidence["slowest_rank"] == worst["POSIX_SLOWEST_RANK"]
    assert f.evidence["slowest_rank_share"] == pytest.approx(
        worst["POSIX_SLOWEST_RANK_BYTES"]
        / (worst["POSIX_BYTES_WRITTEN"] + worst["POSIX_BYTES_READ"])
    )
    # ... on a file held by one OST (Darshan LUSTRE layout of the same record)
    assert len(_osts(IMBALANCED)[worst_id]) == 1
    assert f.evidence["stripe_count"] == 1 and f.evidence["single_stripe"] == 1
    # population variance of one rank holding everything: CV = sqrt(n - 1)
    assert f.evidence["rank_bytes_cv"] == pytest.approx((496 - 1) ** 0.5, rel=1e-3)


def test_imbalance_shared_file_macsio_and_balanced(jobs, found):
    _, recs = _report(MACSIO, "POSIX")
    p18, _ = _p18(recs["POSIX"])
    assert (p18 > 0.15).sum() == 3  # Drishti reports P18 on 3 shared files
    f = _finding(found, jobs[MACSIO], "IMBALANCE-1")
    assert f.severity == "high" and f.evidence["imbalanced_files"] == 3
    assert f.evidence["stripe_count"] is None  # no LUSTRE module in this log
    # every rank of vpicio writes 1 GiB of the shared file: P18 share 0
    _, recs = _report(EXAMPLE, "POSIX")
    assert _p18(recs["POSIX"])[0].max() == 0
    assert _finding(found, jobs[EXAMPLE], "IMBALANCE-1") is None
    assert _checked(found, jobs[EXAMPLE], "IMBALANCE-1")
    assert not _checked(found, jobs[BADOST], "IMBALANCE-1")  # no shared record


def test_imbalance_per_rank_records(db, jobs):
    """Drishti P21: (max - min) / max of per-rank bytes written on one file."""
    _, recs = _report(DXT_SIMPLE, "POSIX")
    per = recs["POSIX"][recs["POSIX"]["rank"] != -1]
    g = per.groupby("id")["POSIX_BYTES_WRITTEN"].agg(["max", "min", "count", "sum"])
    g = g[g["count"] > 1]
    imb = (g["max"] - g["min"]) / g["max"]
    assert (imb > 0.3).sum() == 2  # Drishti reports P21 on 2 files
    job = jobs[DXT_SIMPLE]
    out = insights.run(db, job_id=job, rules=rules_ranks.RULES)
    f = _finding(out, job, "IMBALANCE-2")
    # 4000 bytes in all: below the 1 MiB guard, so only info...
    assert f.severity == "info" and f.evidence["imbalance"] == pytest.approx(imb.max())
    assert f.evidence["file_bytes"] == g["sum"].max() == 4000
    # ... and high once the guard is lifted
    out = insights.run(
        db, job_id=job, rules=rules_ranks.RULES, params={"imbalance_bytes_absolute": 0}
    )
    assert _finding(out, job, "IMBALANCE-2").severity == "high"
    # ten ranks each write their own 10-100 bytes and read the same .pyc files: balanced
    out = insights.run(db, job_id=jobs[DIAGONAL], rules=rules_ranks.RULES)
    assert _finding(out, jobs[DIAGONAL], "IMBALANCE-2") is None
    assert _checked(out, jobs[DIAGONAL], "IMBALANCE-2")


# -- straggler --------------------------------------------------------------------------


def test_straggler_on_shared_file(jobs, found):
    rep, recs = _report(IMBALANCED, "POSIX")
    n = rep.metadata["job"]["nprocs"]
    shared = recs["POSIX"][recs["POSIX"]["rank"] == -1].iloc[0]
    total = shared[["POSIX_F_READ_TIME", "POSIX_F_WRITE_TIME", "POSIX_F_META_TIME"]].sum()
    excess = shared["POSIX_F_SLOWEST_RANK_TIME"] / (total / n) - 1
    assert excess > 400
    f = _finding(found, jobs[IMBALANCED], "STRAGGLER-1")
    assert f.severity == "high" and f.evidence["excess"] == pytest.approx(excess)
    assert f.evidence["slowest_rank"] == shared["POSIX_SLOWEST_RANK"]
    assert f.evidence["single_stripe"] == 1


def test_straggler_file_per_process_and_none(jobs, found):
    """sample-badost: each rank writes its own file; the ranks on the slow OST straggle."""
    rep, recs = _report(BADOST, "POSIX")
    per = recs["POSIX"][recs["POSIX"]["rank"] >= 0]
    t = (
        per.assign(
            t=per["POSIX_F_READ_TIME"] + per["POSIX_F_WRITE_TIME"] + per["POSIX_F_META_TIME"]
        )
        .groupby("rank")["t"]
        .sum()
    )
    f = _finding(found, jobs[BADOST], "STRAGGLER-1")
    assert f.severity == "high"
    assert f.evidence["excess"] == pytest.approx(t.max() / t.mean() - 1)
    assert f.evidence["slowest_rank"] == t.idxmax() and f.evidence["ranks"] == 2048
    # the slowest rank's file sits on the slow OST
    slow = per[per["rank"] == t.idxmax()]["id"]
    assert len(slow) == 1 and _osts(BADOST)[int(slow.iloc[0])] == {14}
    # PnetCDF IOR: slowest rank 7% above the mean (Drishti P19 4%): no straggler
    rep, recs = _report(PNETCDF, "POSIX")
    sh = recs["POSIX"][recs["POSIX"]["rank"] == -1].iloc[0]
    total = sh[["POSIX_F_READ_TIME", "POSIX_F_WRITE_TIME", "POSIX_F_META_TIME"]].sum()
    assert sh["POSIX_F_SLOWEST_RANK_TIME"] / (total / 4) - 1 < 0.15
    assert _finding(found, jobs[PNETCDF], "STRAGGLER-1") is None
    assert _checked(found, jobs[PNETCDF], "STRAGGLER-1")


def test_straggler_at_scale_where_drishti_p19_is_silent(jobs, found):
    """vpicio, 2048 ranks: the slowest rank takes 1.74x the mean; Drishti's P19 divides by
    the sum over all ranks and gets 0.0006 (no finding)."""
    rep, recs = _report(EXAMPLE, "POSIX")
    sh = recs["POSIX"][recs["POSIX"]["rank"] == -1].iloc[0]
    total = sh[["POSIX_F_READ_TIME", "POSIX_F_WRITE_TIME", "POSIX_F_META_TIME"]].sum()
    p19 = (sh["POSIX_F_SLOWEST_RANK_TIME"] - sh["POSIX_F_FASTEST_RANK_TIME"]) / total
    assert p19 < 0.15
    f = _finding(found, jobs[EXAMPLE], "STRAGGLER-1")
    assert f.severity == "warn"
    assert f.evidence["excess"] == pytest.approx(
        sh["POSIX_F_SLOWEST_RANK_TIME"] / (total / 2048) - 1
    )
    assert f.evidence["lost_runtime_share"] == pytest.approx(
        (sh["POSIX_F_SLOWEST_RANK_TIME"] - total / 2048) / rep.metadata["job"]["run_time"]
    )


# -- skew -------------------------------------------------------------------------------


def _layer_time(frame, prefix):
    cols = [f"{prefix}_F_READ_TIME", f"{prefix}_F_WRITE_TIME", f"{prefix}_F_META_TIME"]
    return frame.groupby("id")[cols].sum().sum(axis=1)


def test_skew(jobs, found):
    _, recs = _report(MACSIO, "POSIX", "MPI-IO")
    mpi, posix = _layer_time(recs["MPI-IO"], "MPIIO"), _layer_time(recs["POSIX"], "POSIX")
    ratio = mpi.sum() / posix[mpi.index].sum()
    assert ratio > 10
    f = _finding(found, jobs[MACSIO], "SKEW-1")
    assert f.severity == "high" and f.evidence["mpiio_over_posix"] == pytest.approx(ratio)
    # vpicio's collective writes: MPI-IO time within 0.04% of the POSIX time under it
    _, recs = _report(EXAMPLE, "POSIX", "MPI-IO")
    mpi, posix = _layer_time(recs["MPI-IO"], "MPIIO"), _layer_time(recs["POSIX"], "POSIX")
    assert mpi.sum() / posix[mpi.index].sum() == pytest.approx(1.0, abs=1e-3)
    assert _finding(found, jobs[EXAMPLE], "SKEW-1") is None
    assert _checked(found, jobs[EXAMPLE], "SKEW-1")
    assert not _checked(found, jobs[BADOST], "SKEW-1")  # no MPI-IO module


# -- rank0-bottleneck -------------------------------------------------------------------


def _bytes_by_rank(name):
    """Bytes per rank from PyDarshan's POSIX and STDIO records: per-rank records, plus a
    shared record's slowest and fastest ranks' bytes (Darshan *_SLOWEST_RANK_BYTES)."""
    rep, recs = _report(name, "POSIX", "STDIO")
    by, total = defaultdict(float), 0.0
    for mod, frame in recs.items():
        total += (frame[f"{mod}_BYTES_READ"] + frame[f"{mod}_BYTES_WRITTEN"]).sum()
        for _, rec in frame.iterrows():
            if rec["rank"] >= 0:
                by[rec["rank"]] += rec[f"{mod}_BYTES_READ"] + rec[f"{mod}_BYTES_WRITTEN"]
            else:
                by[rec[f"{mod}_SLOWEST_RANK"]] += rec[f"{mod}_SLOWEST_RANK_BYTES"]
                if rec[f"{mod}_FASTEST_RANK"] != rec[f"{mod}_SLOWEST_RANK"]:
                    by[rec[f"{mod}_FASTEST_RANK"]] += rec[f"{mod}_FASTEST_RANK_BYTES"]
    return rep.metadata["job"]["nprocs"], by, total


def test_rank0_bottleneck(jobs, found):
    n, by, total = _bytes_by_rank(IMBALANCED)
    top = max(by, key=by.get)
    share = by[top] / total
    assert top == 0 and share > 0.99  # Carns et al. 2011: rank 0 does all the I/O
    f = _finding(found, jobs[IMBALANCED], "RANK0-1")
    assert f.severity == "high" and f.evidence["top_rank"] == 0
    assert f.evidence["top_share"] == pytest.approx(share)
    assert f.evidence["concentration"] == pytest.approx((share - 1 / n) / (1 - 1 / n))
    assert f.evidence["total_bytes"] == total


def test_rank0_bottleneck_not_on_file_per_process(jobs, found):
    n, by, total = _bytes_by_rank(BADOST)
    assert max(by.values()) / total < 2 / n  # every rank writes its own 256 MiB
    assert _finding(found, jobs[BADOST], "RANK0-1") is None
    assert _checked(found, jobs[BADOST], "RANK0-1")
    assert _finding(found, jobs[EXAMPLE], "RANK0-1") is None


# -- bad-ost ----------------------------------------------------------------------------


def _ost_write_rates(name):
    """Per OST: sum(bytes written / stripes) / sum(write time) over its files (PyDarshan)."""
    _, recs = _report(name, "POSIX")
    osts = _osts(name)
    per = recs["POSIX"].groupby("id")[["POSIX_BYTES_WRITTEN", "POSIX_F_WRITE_TIME"]].sum()
    b, t = defaultdict(float), defaultdict(float)
    for rid, row in per.iterrows():
        for ost in osts.get(rid, ()):
            b[ost] += row["POSIX_BYTES_WRITTEN"] / len(osts[rid])
            t[ost] += row["POSIX_F_WRITE_TIME"]
    return {o: b[o] / t[o] for o in b if b[o] > 1048576 and t[o] > 0}


def test_bad_ost(jobs, found):
    rates = _ost_write_rates(BADOST)
    slowest = min(rates, key=rates.get)
    ratio = statistics.median(rates.values()) / rates[slowest]
    assert len(rates) == 24 and slowest == 14 and 45 < ratio < 55  # "~48x" (issue 19)
    f = _finding(found, jobs[BADOST], "BAD-OST-1")
    assert f.severity == "high"
    assert f.evidence["slowest_ost"] == 14 and f.evidence["osts"] == 24
    assert f.evidence["slow_ost_ratio"] == pytest.approx(ratio)
    assert f.evidence["write_min_Bps"] == pytest.approx(rates[14])


def test_no_bad_ost(jobs, found):
    rates = _ost_write_rates(GOODOST)
    ratio = statistics.median(rates.values()) / min(rates.values())
    assert len(rates) == 24 and ratio < 2
    assert _finding(found, jobs[GOODOST], "BAD-OST-1") is None
    assert _checked(found, jobs[GOODOST], "BAD-OST-1")
    # one file over 24 OSTs: every OST gets the same share and time, nothing to single out
    assert _finding(found, jobs[EXAMPLE], "BAD-OST-1") is None
    assert not _checked(found, jobs[MACSIO], "BAD-OST-1")  # no LUSTRE module


# -- striping ---------------------------------------------------------------------------


def test_striping(db, jobs, found):
    _, recs = _report(IMBALANCED, "POSIX")
    shared = recs["POSIX"][recs["POSIX"]["rank"] == -1]
    assert len(shared) == 1
    rid = int(shared["id"].iloc[0])  # uint64 column (a row Series is float)
    size = int((shared["POSIX_BYTES_WRITTEN"] + shared["POSIX_BYTES_READ"]).iloc[0])
    assert len(_osts(IMBALANCED)[rid]) == 1 and size > 1e10  # NERSC: 24 OSTs
    f = _finding(found, jobs[IMBALANCED], "STRIPING-1")
    assert f.severity == "high" and f.evidence["single_stripe_bytes"] == size
    assert f.evidence["ranks"] == 496
    assert _record_id(db, f.evidence["worst_file_id"]) == rid


def test_striping_not_when_striped_or_small(jobs, found):
    # vpicio's 2 TiB shared file is striped over 24 OSTs
    _, recs = _report(EXAMPLE, "POSIX")
    rid = int(recs["POSIX"][recs["POSIX"]["rank"] == -1]["id"].iloc[0])
    assert len(_osts(EXAMPLE)[rid]) == 24
    assert _finding(found, jobs[EXAMPLE], "STRIPING-1") is None
    # sample-badost: 256 MiB per rank, under NERSC's 1 GB
    assert _finding(found, jobs[BADOST], "STRIPING-1") is None
    # sample-goodost: 1 GiB files on one stripe, but each accessed by one rank: info
    f = _finding(found, jobs[GOODOST], "STRIPING-1")
    assert f.severity == "info" and f.evidence["ranks"] == 1
    assert f.evidence["single_stripe_bytes"] == 2**30


# -- generated Darshan logs with known per-rank truth -----------------------------------


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    """Real Darshan logs written by libdarshan-util (iochar.datasets.synth_jobs) for three
    16-rank groups: rank-0 I/O (Carns et al. 2011 Sec. 5.2), file per process with the
    other ranks at 95-100% of the slowest rank's time, and at 10-100%."""
    from iochar.datasets.synth_jobs import JobGroup, make_population, write_darshan_logs

    mib = 1 << 20
    groups = [
        JobGroup("r0", "root", 1, 16, 4, 64 * mib, 64 * mib, 50.0, 0.2, 2, "rank0"),
        JobGroup("even", "even", 2, 16, 16, 64 * mib, 64 * mib, 50.0, 0.2, 2, rank_balance=0.95),
        JobGroup("slow", "slow", 3, 16, 16, 64 * mib, 64 * mib, 50.0, 0.2, 2, rank_balance=0.1),
    ]
    pop = make_population(groups, random_state=0)
    paths = write_darshan_logs(pop, tmp_path_factory.mktemp("ranks"))
    store = iochar.connect(":memory:")
    for p in paths:
        store.load(p)
    keys = dict(store.sql("SELECT job_key, job_id FROM jobs").fetchall())
    out = insights.run(store, rules=rules_ranks.RULES)
    yield pop, keys, out
    store.close()


def test_synth_rank0_and_stragglers(synth):
    pop, keys, out = synth
    rows = pop.rows.assign(
        b=pop.rows["read_bytes"] + pop.rows["write_bytes"],
        t=pop.rows["read_time"] + pop.rows["write_time"] + pop.rows["meta_time"],
    )
    for _, job in pop.jobs.iterrows():
        jid = keys[str(job["job_key"])]
        per = rows[rows["job_key"] == job["job_key"]].groupby("rank")[["b", "t"]].sum()
        rank0 = _finding(out, jid, "RANK0-1")
        strag = _finding(out, jid, "STRAGGLER-1")
        if job["pattern"] == "rank0":
            assert list(per.index) == [0]
            assert rank0.severity == "high" and rank0.evidence["top_rank"] == 0
            assert rank0.evidence["concentration"] == pytest.approx(1.0)
            assert rank0.evidence["top_s"] == pytest.approx(job["io_time_s"])
            assert not _checked(out, jid, "STRAGGLER-1")  # one rank: no group to compare
            continue
        assert len(per) == 16 and rank0 is None
        excess = per["t"].max() / per["t"].mean() - 1
        assert strag is not None or excess <= 0.15
        if strag is not None:
            assert strag.evidence["excess"] == pytest.approx(excess)
            assert strag.evidence["slowest_rank"] == job["slowest_rank"] == per["t"].idxmax()
        if job["group"] == "even":  # others at 95-100% of the slowest: at most 5% over
            assert excess < 0.06 and strag is None
        else:  # others at 10-100% of the slowest: far above Drishti's 15%
            lost = (per["t"].max() - per["t"].mean()) / job["runtime_s"]
            assert excess > 0.15 and lost > 0.01  # and over 1% of the run time
            assert strag.severity == ("high" if excess > 1 else "warn")
            assert strag.evidence["lost_runtime_share"] == pytest.approx(lost)
