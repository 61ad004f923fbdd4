"""Repeated jobs and their I/O-time spread (Carns et al. 2011, section 4.1, Table IV)."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score

import iochar
from iochar.analyze.jobs import job_metrics
from iochar.analyze.variance import (
    cluster_jobs,
    most_variable_job,
    repeated_jobs,
    similar_jobs,
)
from iochar.datasets.synth_jobs import JobGroup, make_population, write_darshan_logs, write_trace
from iochar.errors import ParameterError

MiB = 1 << 20

#: Table IV in miniature, as Darshan logs: the identity is known.
LOG_GROUPS = [
    JobGroup(
        "ES",
        app="earth",
        uid=2001,
        nprocs=8,
        files=16,
        read_bytes=16 * MiB,
        write_bytes=2 * MiB,
        mean_io_s=40.0,
        cv=0.199,
        samples=6,
        write_files=4,
        request_bytes=512 * 1024,
    ),
    # the same user, program, size and files, 3% more data: another group
    JobGroup(
        "ES+3%",
        app="earth",
        uid=2001,
        nprocs=8,
        files=16,
        read_bytes=int(16.48 * MiB),
        write_bytes=2 * MiB,
        mean_io_s=44.0,
        cv=0.1,
        samples=4,
        write_files=4,
        request_bytes=512 * 1024,
    ),
    JobGroup(
        "NP A",
        app="nuclear0",
        uid=2002,
        nprocs=8,
        files=4,
        read_bytes=8 * MiB,
        write_bytes=0,
        mean_io_s=23.1,
        cv=0.921,
        samples=6,
        pattern="rank0",
        floor=0.82,
        request_bytes=MiB + 4096,
    ),
    # NP B differs from NP A in its process count only
    JobGroup(
        "NP B",
        app="nuclear0",
        uid=2002,
        nprocs=16,
        files=4,
        read_bytes=8 * MiB,
        write_bytes=0,
        mean_io_s=24.3,
        cv=2.622,
        samples=8,
        pattern="rank0",
        floor=0.78,
        request_bytes=MiB + 4096,
    ),
    JobGroup(
        "CL",
        app="climate",
        uid=2004,
        nprocs=8,
        files=1,
        read_bytes=4 * MiB,
        write_bytes=4 * MiB,
        mean_io_s=72.0,
        cv=0.079,
        samples=4,
        pattern="N:1",
    ),
    JobGroup(
        "NP C",
        app="nuclearm",
        uid=2003,
        nprocs=16,
        io_ranks=4,
        files=8,
        read_bytes=16 * MiB,
        write_bytes=4 * MiB,
        mean_io_s=45.0,
        cv=0.298,
        samples=4,
        pattern="N:M",
    ),
]

#: Groups of >= 100 jobs as one trace: no user, and only the ranks that did I/O.
TRACE_GROUPS = [
    JobGroup("A", app="earth", uid=1, nprocs=8, files=8, read_bytes=8 * MiB,
             write_bytes=MiB, mean_io_s=40.0, cv=0.199, samples=120, write_files=2,
             request_bytes=MiB),
    JobGroup("B", app="nuclear0", uid=2, nprocs=8, files=4, read_bytes=4 * MiB,
             write_bytes=0, mean_io_s=23.1, cv=0.921, samples=120, pattern="rank0",
             floor=0.82, request_bytes=MiB),
    JobGroup("C", app="nuclear0", uid=2, nprocs=16, files=5, read_bytes=5 * MiB,
             write_bytes=0, mean_io_s=24.3, cv=2.622, samples=120, pattern="rank0",
             floor=0.78, request_bytes=MiB),
    JobGroup("D", app="climate", uid=4, nprocs=4, files=2, read_bytes=4 * MiB,
             write_bytes=4 * MiB, mean_io_s=72.0, cv=0.079, samples=40, pattern="N:1",
             request_bytes=MiB),
    JobGroup("E", app="nuclearm", uid=3, nprocs=16, io_ranks=4, files=4, read_bytes=8 * MiB,
             write_bytes=2 * MiB, mean_io_s=45.0, cv=0.298, samples=40, pattern="N:M",
             request_bytes=MiB),
]  # fmt: skip

TABLE_IV = ["samples", "procs", "files", "gib_read", "gib_written", "mean_s", "min_s", "max_s",
            "std_s", "cv_pct"]  # fmt: skip


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    if importlib.util.find_spec("darshan") is None:
        pytest.skip("the darshan package is missing")
    pop = make_population(LOG_GROUPS, random_state=11)
    db = iochar.connect(":memory:")
    for p in write_darshan_logs(pop, tmp_path_factory.mktemp("variance_logs")):
        db.load(p)
    return pop, db, job_metrics(db, procs_per_node=4)


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    seed = 42  # the module fixture cannot take the function-scoped seed
    pop = make_population(TRACE_GROUPS, random_state=seed, moments="population")
    db = iochar.connect(":memory:")
    db.load(write_trace(pop, tmp_path_factory.mktemp("variance_trace") / "jobs.parquet"))
    return pop, db, job_metrics(db)


def _truth_of(pop, db) -> pd.Series:
    t = pop.match(db)
    return pd.Series(t["group"].to_numpy(), index=t["job_id"].to_numpy())


def _matched(res, pop, db) -> pd.DataFrame:
    """Each found group with the truth group of its jobs (and how pure it is)."""
    m = res.members.merge(pop.match(db)[["job_id", "group"]], on="job_id")
    assert m["group_id"].notna().all()
    purity = m.groupby("group_id")["group"].agg(lambda s: s.value_counts(normalize=True).iloc[0])
    assert (purity == 1).all()
    which = m.groupby("group_id")["group"].first()
    return res.groups.assign(truth=res.groups["group_id"].map(which))


def test_exact_grouping_recovers_the_groups_and_table_iv(logs):
    pop, db, m = logs
    res = repeated_jobs(m)
    assert (res.groups["mode"] == "exact").all() and (res.members["mode"] == "exact").all()
    ari = adjusted_rand_score(
        _truth_of(pop, db).reindex(res.members["job_id"]), res.members["group_id"]
    )
    assert ari == 1.0
    got = _matched(res, pop, db).set_index("truth").loc[pop.truth["group"]]
    want = pop.truth.set_index("group")
    assert list(got.index) == list(want.index)  # one found group per true group
    for c in TABLE_IV:
        np.testing.assert_allclose(got[c].astype(float), want[c], rtol=1e-9, err_msg=c)
    assert (got["read_spread_pct"] < 1).all()
    assert (got["user"] == want.index.map({g.name: str(g.uid) for g in LOG_GROUPS})).all()
    # the store itself gives the same (metrics computed on the way)
    again = repeated_jobs(db, procs_per_node=4)
    pd.testing.assert_frame_equal(again.groups, res.groups)


def test_bytes_tolerance_and_min_samples(logs):
    pop, db, m = logs
    loose = repeated_jobs(m, tolerance=0.05)  # ES and ES+3% become one group
    es = loose.groups[loose.groups["app"] == "earth"]
    assert es["samples"].tolist() == [10]
    big = repeated_jobs(m, min_samples=6)
    assert sorted(big.groups["samples"]) == [6, 6, 8]
    assert big.members["group_id"].isna().sum() == 12  # still listed, in no reported group
    no_procs = repeated_jobs(m, by=("user", "app", "files"))  # NP A and B merge
    assert (no_procs.groups["samples"] == 14).sum() == 1


def test_cv_within_two_points_for_groups_of_100_from_a_trace(trace):
    pop, db, m = trace
    res = repeated_jobs(m)  # no user in a trace: grouped by signature
    assert (res.members["mode"] == "cluster").all()
    got = _matched(res, pop, db).set_index("truth")
    want = pop.truth.set_index("group")
    assert sorted(got.index) == sorted(want.index)
    big = want.index[want["samples"] >= 100]
    assert len(big) == 3
    for g in big:
        assert got.loc[g, "samples"] == want.loc[g, "samples"]
        assert abs(got.loc[g, "cv_pct"] - want.loc[g, "cv_pct"]) <= 2.0, g
    # heavy-tailed rank-0 groups vary most, as NuclearPhysics A and B did
    assert got.loc["C", "cv_pct"] > got.loc["B", "cv_pct"] > got.loc["A", "cv_pct"]


@pytest.mark.parametrize("method", ["tolerance", "hdbscan"])
def test_clustering_by_signature_reaches_adjusted_rand_095(trace, logs, method):
    pop, db, m = trace
    res = cluster_jobs(m, method=method, truth=_truth_of(pop, db))
    assert res.adjusted_rand >= 0.95, res.adjusted_rand
    assert res.features == ("nprocs", "files", "bytes_read", "bytes_written")
    if method == "hdbscan":
        assert res.params["min_samples"] == 10
        return  # groups of 5 jobs are below HDBSCAN's density scale (see cluster_jobs)
    # Darshan jobs with the identity ignored: NP A and B still apart by size,
    # ES and ES+3% by their bytes
    pop2, db2, m2 = logs
    res2 = cluster_jobs(m2, method=method, truth=_truth_of(pop2, db2))
    assert res2.adjusted_rand == 1.0, res2.adjusted_rand
    always = repeated_jobs(m2, cluster="always")
    assert (always.groups["mode"] == "cluster").all()
    assert sorted(always.groups["samples"]) == sorted(pop2.truth["samples"])


def test_clustering_fails_loudly_on_a_wrong_truth(trace):
    pop, db, m = trace
    shuffled = _truth_of(pop, db).sample(frac=1, random_state=0)
    shuffled[:] = np.random.default_rng(0).permutation(shuffled.to_numpy())
    assert cluster_jobs(m, truth=shuffled).adjusted_rand < 0.1
    with pytest.raises(ParameterError, match="truth"):
        cluster_jobs(m, truth=[1, 2, 3])
    with pytest.raises(ParameterError, match="'method' parameter of cluster_jobs"):
        cluster_jobs(m, method="kmeans")


def test_similar_jobs_places_a_job_in_its_group(logs):
    pop, db, m = logs
    truth = pop.match(db)
    npb = truth[truth["group"] == "NP B"].sort_values("io_time_s")
    slow, fast = int(npb["job_id"].iloc[-1]), int(npb["job_id"].iloc[0])
    s = similar_jobs(m, slow)
    assert s.mode == "exact" and len(s.history) == 8 and s.history["is_job"].sum() == 1
    assert s.history["start_ts"].is_monotonic_increasing
    row = s.placement.set_index("metric").loc["slowest_io_s"]
    others = npb["io_time_s"].iloc[:-1]
    assert row["n"] == 7 and row["percentile"] == 100
    assert row["z"] == pytest.approx((npb["io_time_s"].iloc[-1] - others.mean()) / others.std())
    assert row["median"] == pytest.approx(others.median())
    low = similar_jobs(m, fast).placement.set_index("metric").loc["slowest_io_s"]
    assert low["percentile"] == 0 and low["z"] < 0
    # a throughput metric moves the other way
    assert s.placement.set_index("metric").loc["mib_s", "percentile"] == 0
    with pytest.raises(ParameterError, match="'job_id' parameter of similar_jobs"):
        similar_jobs(m, 10_000)


def test_most_variable_job_is_the_slowest_run_of_the_most_variable_group(logs):
    pop, db, m = logs
    rep = repeated_jobs(m, 0.01)
    # from the metrics: the group with the largest CV, its run with the longest time
    g = rep.groups.loc[rep.groups["cv_pct"].idxmax()]
    ids = rep.members.loc[rep.members["group_id"] == g["group_id"], "job_id"]
    runs = m.jobs[m.jobs["job_id"].isin(ids)]
    want = int(runs.loc[runs["slowest_io_s"].idxmax(), "job_id"])
    # from the population: NP B (CV 262.2%, Table IV's largest), its slowest run
    truth = pop.match(db)
    npb = truth[truth["group"] == "NP B"]
    assert int(npb.loc[npb["io_time_s"].idxmax(), "job_id"]) == want
    assert most_variable_job(rep, m) == want
    assert most_variable_job(rep, m.jobs) == want
    # without groups: the first job with an I/O time
    none = repeated_jobs(m, 0.01, min_samples=1000)
    assert none.groups.empty
    assert most_variable_job(none, m) == int(none.members["job_id"].iloc[0])
    assert most_variable_job(none, m) == int(m.jobs["job_id"].min())
    # a job without an I/O time is never picked
    bare = m.jobs.assign(slowest_io_s=np.nan)
    empty = repeated_jobs(bare, 0.01)
    assert empty.members.empty
    assert most_variable_job(empty, bare) == int(bare["job_id"].iloc[0])
    assert most_variable_job(empty, bare.iloc[0:0]) is None
    with pytest.raises(ParameterError, match="'repeated' parameter of most_variable_job"):
        most_variable_job(rep.groups, m)


def _frame(br, bw=None, user="u1", n=None) -> pd.DataFrame:
    br = np.asarray(br, dtype=np.float64)
    n = len(br)
    return pd.DataFrame(
        {
            "job_id": np.arange(n),
            "user": [user] * n if isinstance(user, str) or user is None else user,
            "app": "a",
            "nprocs": 64,
            "files": 10,
            "bytes_read": np.round(br).astype(np.int64),
            "bytes_written": np.zeros(n, np.int64) if bw is None else np.asarray(bw, np.int64),
            "slowest_io_s": np.linspace(10, 20, n),
        }
    )


def test_a_chain_of_small_steps_never_spreads_beyond_tolerance():
    df = _frame(1e9 * 1.006 ** np.arange(8))  # 0.6% steps, 4.3% in all
    res = repeated_jobs(df, min_samples=1)
    assert (res.groups["read_spread_pct"] <= 1.0).all()
    assert res.groups["samples"].sum() == 8 and len(res.groups) >= 4


def test_jobs_across_a_cell_edge_stay_together_and_moments_combine():
    tol = 0.01
    k = 2100  # a cell edge at (1 + tol)**k - 1 bytes
    edge = math.exp(k * math.log1p(tol)) - 1
    br = [edge * (1 - 1e-3), edge * (1 - 4e-4), edge * (1 + 3e-4), edge * (1 + 2e-3)]
    df = _frame(br)
    res = repeated_jobs(df)
    assert res.groups["samples"].tolist() == [4]
    t = df["slowest_io_s"]
    g = res.groups.iloc[0]
    assert g["mean_s"] == pytest.approx(t.mean()) and g["std_s"] == pytest.approx(t.std())
    assert g["cv_pct"] == pytest.approx(100 * t.std() / t.mean())


def test_identity_must_match_and_missing_fields():
    df = _frame([1e9] * 6, user=["u1", "u1", "u2", "u2", None, None])
    exact = repeated_jobs(df, cluster="never")  # a missing user is one more value
    assert sorted(exact.groups["samples"]) == [2, 2, 2]
    auto = repeated_jobs(df)  # the two without a user: by signature
    modes = auto.members.set_index("job_id")["mode"]
    assert list(modes) == ["exact"] * 4 + ["cluster"] * 2
    assert sorted(auto.groups["samples"]) == [2, 2, 2]


@settings(max_examples=12, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["u1", "u2"]), st.integers(0, 30), st.integers(0, 3)),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from([0.01, 0.05]),
)
def test_groups_partition_jobs_within_tolerance(rows, tol):
    users, steps, wsteps = zip(*rows, strict=True)
    br = 1e8 * (1 + tol / 3) ** np.array(steps)
    bw = np.round(5e7 * (1 + tol / 2) ** np.array(wsteps))
    df = _frame(br, bw, user=list(users))
    res = repeated_jobs(df, tol, min_samples=1)
    mem = res.members.merge(df, on="job_id")
    assert len(mem) == len(df) and mem["group_id"].notna().all()
    assert res.groups["samples"].sum() == len(df)
    g = mem.groupby("group_id")
    assert (g["user"].nunique() == 1).all()
    for c in ("bytes_read", "bytes_written"):
        lo, hi = g[c].min().astype(float), g[c].max().astype(float)
        assert ((1 + hi) <= (1 + tol) * (1 + lo) * (1 + 1e-12)).all()
    # identical identity and bytes: always the same group
    same = mem.groupby(["user", "bytes_read", "bytes_written"])["group_id"].nunique()
    assert (same == 1).all()


def test_bad_arguments(logs):
    _, _, m = logs
    for kw, name in (
        ({"tolerance": 0}, "tolerance"),
        ({"by": ("project",)}, "by"),
        ({"time": "runtime"}, "time"),
        ({"cluster": "sometimes"}, "cluster"),
        ({"min_samples": 0}, "min_samples"),
    ):
        with pytest.raises(ParameterError, match=f"'{name}' parameter of repeated_jobs"):
            repeated_jobs(m, **kw)
    with pytest.raises(ParameterError, match="missing"):
        repeated_jobs(m.jobs.drop(columns="bytes_read"))
    with pytest.raises(ParameterError, match="'data' parameter"):
        repeated_jobs([1, 2, 3])
