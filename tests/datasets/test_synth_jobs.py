"""Populations of repeated jobs: known means and CVs, loadable as Darshan logs and traces."""

from __future__ import annotations

import importlib.util
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import iochar
from iochar.datasets.synth_jobs import (
    TABLE_IV,
    JobGroup,
    make_population,
    make_table_iv,
    write_darshan_logs,
    write_trace,
)
from iochar.errors import ParameterError

requires_darshan = pytest.mark.skipif(
    importlib.util.find_spec("darshan") is None, reason="the darshan package is missing"
)

MiB = 1 << 20

#: One group per file pattern, small enough to write and load in a blink.
GROUPS = [
    JobGroup("nn", app="earth", uid=2001, nprocs=4, files=8, read_bytes=8 * MiB,
             write_bytes=MiB, mean_io_s=40.0, cv=0.2, samples=3, write_files=2,
             request_bytes=300_000),
    JobGroup("r0", app="nuclear0", uid=2002, nprocs=8, files=3, read_bytes=6 * MiB,
             write_bytes=0, mean_io_s=23.1, cv=0.921, samples=3, pattern="rank0",
             floor=0.82, request_bytes=MiB + 4096),
    JobGroup("n1", app="climate", uid=2004, nprocs=4, files=1, read_bytes=4 * MiB,
             write_bytes=4 * MiB, mean_io_s=72.0, cv=0.079, samples=3, pattern="N:1"),
    JobGroup("nm", app="nuclearm", uid=2003, nprocs=8, io_ranks=2, files=4,
             read_bytes=8 * MiB, write_bytes=2 * MiB, mean_io_s=45.0, cv=0.3, samples=3,
             pattern="N:M"),
]  # fmt: skip


@pytest.mark.parametrize("cv", [0.079, 0.199, 0.921, 2.622])
def test_exact_moments_hit_the_targets(cv, global_random_seed):
    g = JobGroup("g", app="a", uid=1, nprocs=4, files=4, read_bytes=MiB, write_bytes=0,
                 mean_io_s=24.3, cv=cv, samples=100, pattern="rank0", floor=0.78)  # fmt: skip
    pop = make_population([g], random_state=global_random_seed)
    t = pop.jobs["io_time_s"].to_numpy()
    assert t.mean() == pytest.approx(24.3, rel=1e-12)
    assert 100 * t.std(ddof=1) / t.mean() == pytest.approx(100 * cv, rel=1e-9)
    assert (t > 0).all()
    row = pop.truth.iloc[0]
    assert row["cv_pct"] == pytest.approx(100 * cv) and row["samples"] == 100
    if cv > 2:  # heavy tail: a few runs far above the rest, as NuclearPhysics B
        assert t.max() > 10 * np.median(t)


def test_population_moments_are_draws_around_the_targets(global_random_seed):
    g = replace(GROUPS[0], samples=4000, cv=0.3)
    pop = make_population([g], random_state=global_random_seed, moments="population")
    row = pop.truth.iloc[0]
    assert row["mean_s"] == pytest.approx(40.0, rel=0.03)
    assert row["cv_pct"] == pytest.approx(30.0, abs=3.0)
    assert row["cv_pct"] != pytest.approx(30.0, abs=1e-6)  # drawn, not fixed
    assert row["min_s"] >= 0.5 * 40.0  # the uncontended floor


def test_groups_stay_within_one_percent_and_rows_add_up(global_random_seed):
    pop = make_population(GROUPS, random_state=global_random_seed)
    assert len(pop.jobs) == 12 and pop.jobs["job_key"].is_unique
    for _, j in pop.jobs.groupby("group"):
        for c in ("read_bytes", "write_bytes"):
            b = j[c].to_numpy(float)
            if b.max() > 0:
                assert b.max() / b.min() - 1 < 0.01
    rows = pop.rows.merge(pop.jobs[["job_key", "group", "io_time_s", "nprocs"]], on="job_key")
    sums = rows.groupby("job_key")[["read_bytes", "write_bytes"]].sum()
    jobs = pop.jobs.set_index("job_key")
    assert (sums["read_bytes"] == jobs["read_bytes"]).all()
    assert (sums["write_bytes"] == jobs["write_bytes"]).all()
    # the slowest rank's summed time is the job's I/O time, for every pattern
    rows["t"] = rows["read_time"] + rows["write_time"] + rows["meta_time"]
    slow = rows.groupby(["job_key", "rank"])["t"].sum().groupby("job_key").max()
    np.testing.assert_allclose(slow.reindex(jobs.index), jobs["io_time_s"], rtol=1e-12)
    ranks = rows.groupby("group")["rank"].agg(["min", "max", "nunique"])
    assert ranks.loc["r0"].tolist() == [0, 0, 1]  # rank 0 I/O
    assert ranks.loc["nm", "nunique"] == 2  # N:M: 2 of 8 ranks
    assert ranks.loc["n1", "nunique"] == 4 and rows.loc[rows.group == "n1", "shared"].all()
    assert set(pop.jobs["nnodes"]) == {1, 2}  # 4 processes per node


def test_same_seed_same_population():
    a = make_population(GROUPS, random_state=7)
    b = make_population(GROUPS, random_state=7)
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
    pd.testing.assert_frame_equal(a.rows, b.rows)
    c = make_population(GROUPS, random_state=8)
    assert not np.allclose(a.jobs["io_time_s"], c.jobs["io_time_s"])


def test_table_iv_groups_scaled_down():
    assert len(TABLE_IV) == 7
    npb = TABLE_IV["NuclearPhysics B"]
    assert (npb.samples, npb.nprocs, npb.files, npb.cv, npb.pattern) == (407, 4096, 4, 2.622,
                                                                         "rank0")  # fmt: skip
    pop = make_table_iv(scale=1 / 512, samples=12, random_state=0)
    assert list(pop.truth["group"]) == list(TABLE_IV)
    np.testing.assert_allclose(pop.truth["cv_pct"], [100 * g.cv for g in TABLE_IV.values()])
    np.testing.assert_allclose(pop.truth["mean_s"], [g.mean_io_s for g in TABLE_IV.values()])
    assert pop.truth.set_index("group").loc["NuclearPhysics A", "procs"] == 4
    assert (pop.truth["samples"] <= 12).all()


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"pattern": "N:2"}, "pattern"),
        ({"cv": -0.1}, "cv"),
        ({"samples": 1}, "samples"),
        ({"files": 2}, "files"),  # N:N needs a file per process
        ({"floor": 1.0}, "floor"),
        ({"cv": 2.0, "samples": 4}, "cv"),  # exact moments: a CV of 200% needs > 4 jobs
    ],
)
def test_bad_groups_are_refused(change, name):
    with pytest.raises(ParameterError, match=f"'{name}' parameter of make_population"):
        make_population([replace(GROUPS[0], **change)])
    with pytest.raises(ParameterError, match="moments"):
        make_population(GROUPS, moments="sample")
    with pytest.raises(ParameterError, match="unique names"):
        make_population([GROUPS[0], GROUPS[0]])


def test_trace_loads_with_every_job_and_op(tmp_path, global_random_seed):
    pop = make_population(GROUPS, random_state=global_random_seed)
    path = write_trace(pop, tmp_path / "jobs.parquet")
    db = iochar.connect(":memory:")
    res = db.load(path)
    assert res.kind == "trace-parquet" and res.rows["jobs"] == 12
    want = int((2 + pop.rows["reads"] + pop.rows["writes"]).sum())
    assert res.rows["ops"] == want
    got = db.sql(
        "SELECT job_id, sum(size) FILTER (WHERE op = 'read') AS r FROM ops GROUP BY job_id"
    ).df()
    truth = pop.match(db).merge(got, on="job_id")
    assert len(truth) == 12 and (truth["r"].fillna(0) == truth["read_bytes"]).all()
    csv = write_trace(pop, tmp_path / "jobs.csv")
    assert iochar.connect(":memory:").load(csv).rows["ops"] == want


@requires_darshan
def test_darshan_logs_load_and_read_back_with_pydarshan(tmp_path, global_random_seed):
    import darshan

    pop = make_population(GROUPS, random_state=global_random_seed)
    logs = write_darshan_logs(pop, tmp_path)
    assert len(logs) == 12 and all(p.exists() for p in logs)
    db = iochar.connect(":memory:")
    for p in logs:
        assert db.load(p).kind == "darshan"
    truth = pop.match(db)
    assert len(truth) == 12
    jobs = db.sql('SELECT job_id, "user", app, nprocs FROM jobs').df().merge(truth, on="job_id")
    assert (jobs["user"] == jobs["uid"].astype(str)).all()
    assert (jobs["app_x"] == jobs["app_y"]).all() and (jobs["nprocs_x"] == jobs["nprocs_y"]).all()
    # pydarshan reads the same counters back from the library
    shared = pop.jobs.index[pop.jobs["pattern"] == "N:1"][0]
    rep = darshan.DarshanReport(str(logs[shared]), read_all=True)
    assert set(rep.modules) == {"POSIX", "MPI-IO"}
    c = rep.records["POSIX"].to_df()
    f = rep.records["POSIX"].to_df()["fcounters"]
    job = pop.jobs.iloc[shared]
    assert c["counters"]["POSIX_BYTES_READ"].sum() == job["read_bytes"]
    assert (c["counters"]["rank"] == -1).all()  # reduced over the ranks
    assert f["POSIX_F_SLOWEST_RANK_TIME"].sum() == pytest.approx(job["io_time_s"], rel=1e-12)
    assert rep.metadata["job"]["nprocs"] == 4 and rep.metadata["job"]["uid"] == 2004


@requires_darshan
def test_darshan_logs_without_slowest_rank_time(tmp_path):
    pop = make_population([GROUPS[2]], random_state=0)
    logs = write_darshan_logs(pop, tmp_path, slowest_rank_time=False)
    db = iochar.connect(":memory:")
    db.load(logs[0])
    got = db.sql("SELECT module, slowest_rank_time FROM file_stats ORDER BY module").fetchall()
    assert got == [("MPI-IO", None), ("POSIX", None)]  # Darshan's -1: not available
