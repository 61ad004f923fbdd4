"""Narrative of notebook 03 (jobs and variance): sentences state what the results hold."""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import iochar
from iochar.analyze.jobs import (
    job_metrics,
    large_jobs,
    project_table,
    sharing_table,
    size_histogram,
)
from iochar.analyze.variance import most_variable_job, repeated_jobs, similar_jobs
from iochar.datasets.synth_jobs import JobGroup, make_population, write_darshan_logs
from iochar.narrate import fmt_bytes, fmt_num, fmt_pct, fmt_s, jobs

MiB = 1 << 20
DATA = Path(__file__).resolve().parents[2] / "data"

#: Table IV in miniature: N:N, rank-0, N:M and N:1 groups with known CVs.
GROUPS = [
    JobGroup("ES", app="earth", uid=2001, nprocs=8, files=8, read_bytes=16 * MiB,
             write_bytes=2 * MiB, mean_io_s=40.0, cv=0.2, samples=6, write_files=2,
             request_bytes=512 * 1024),
    JobGroup("NP A", app="nuclear0", uid=2002, nprocs=8, files=4, read_bytes=8 * MiB,
             write_bytes=0, mean_io_s=23.1, cv=0.921, samples=6, pattern="rank0",
             floor=0.82, request_bytes=MiB + 4096),
    JobGroup("NP C", app="nuclearm", uid=2003, nprocs=16, io_ranks=4, files=8,
             read_bytes=16 * MiB, write_bytes=4 * MiB, mean_io_s=45.0, cv=0.298, samples=5,
             pattern="N:M"),
    JobGroup("CL", app="climate", uid=2004, nprocs=8, files=1, read_bytes=4 * MiB,
             write_bytes=4 * MiB, mean_io_s=72.0, cv=0.079, samples=5, pattern="N:1"),
]  # fmt: skip

#: Another population: no rank-0 I/O, the climate group now varies most.
OTHER = [
    JobGroup("CL", app="climate", uid=2004, nprocs=8, files=1, read_bytes=4 * MiB,
             write_bytes=4 * MiB, mean_io_s=72.0, cv=0.5, samples=5, pattern="N:1"),
    JobGroup("CL2", app="climate", uid=2004, nprocs=16, files=1, read_bytes=8 * MiB,
             write_bytes=4 * MiB, mean_io_s=30.0, cv=0.1, samples=4, pattern="N:1"),
    JobGroup("ES", app="earth", uid=2001, nprocs=8, files=8, read_bytes=16 * MiB,
             write_bytes=2 * MiB, mean_io_s=40.0, cv=0.2, samples=4, write_files=2,
             request_bytes=512 * 1024),
]  # fmt: skip


def _build(groups, tmp, seed):
    if importlib.util.find_spec("darshan") is None:
        pytest.skip("the darshan package is missing")
    pop = make_population(groups, random_state=seed)
    db = iochar.connect(":memory:")
    for p in write_darshan_logs(pop, tmp):
        db.load(p)
    return pop, db, job_metrics(db, procs_per_node=4)


@pytest.fixture(scope="module")
def pop(tmp_path_factory):
    return _build(GROUPS, tmp_path_factory.mktemp("narrate_jobs"), 7)


@pytest.fixture(scope="module")
def other(tmp_path_factory):
    return _build(OTHER, tmp_path_factory.mktemp("narrate_jobs_other"), 8)


@pytest.fixture(scope="module")
def real():
    db = iochar.connect(":memory:")
    for p in sorted((DATA / "darshan").glob("*.darshan")):
        db.load(p)
    return db, job_metrics(db, procs_per_node=4)


def _no_nan(text: str) -> None:
    assert "nan" not in text.lower().replace("nanos", "")
    assert "n/a" not in text


# ------------------------------------------------------------------ Table VI (projects)


def _moved_by_app(m, min_procs, min_mib):
    df = m.jobs
    keep = (df["nprocs"].astype(float) >= min_procs) & (
        df["io_bytes"].astype(float) >= min_mib * MiB
    )
    return df[keep].groupby("app")["io_bytes"].agg(["sum", "count"]).astype(float)


def test_projects_states_the_biggest_mover_and_the_rates(pop):
    _, _, m = pop
    table = project_table(m, min_procs=8, min_mib=1)
    text = jobs.projects(table, min_procs=8, min_mib=1)
    moved = _moved_by_app(m, 8, 1)
    top = moved["sum"].idxmax()
    share = moved.loc[top, "sum"] / moved["sum"].sum()
    assert f"**{int(moved['count'].sum())} jobs** ran at least 8 processes" in text
    assert f"{len(moved)} applications" in text
    assert f"`{top}` moved the most data: {fmt_bytes(moved.loc[top, 'sum'])}" in text
    assert f"in {int(moved.loc[top, 'count'])} jobs ({fmt_pct(share)} of it)" in text
    rate = table.set_index("app").loc[top, "mib_s_cn"]
    assert f"at {fmt_num(rate)} MiB/s per compute node" in text
    med = table.set_index("app")["median_mib_s_cn"]
    assert f"fastest application is `{med.idxmax()}` ({fmt_num(med.max())})" in text
    assert f"slowest `{med.idxmin()}` ({fmt_num(med.min())})" in text
    io = table.set_index("app")["io_time_pct"]
    assert f"`{io.idxmax()}` spends the largest share of its run time in I/O" in text
    assert fmt_pct(io.max() / 100) in text
    # every group spends meta_share = 10% of its I/O time in metadata: a tie, said so
    md = table["meta_time_pct"]
    assert md.max() == pytest.approx(md.min())
    assert f"every application spends {fmt_pct(md.max() / 100)} of its I/O time in metadata" in text
    _no_nan(text)


def test_projects_follow_the_filter_and_say_when_nothing_is_left(pop):
    _, _, m = pop
    # only the 16-process N:M group passes: it moves all the data
    text = jobs.projects(project_table(m, min_procs=16, min_mib=1), min_procs=16, min_mib=1)
    assert "`nuclearm` moved the most data" in text and "(100.0% of it)" in text
    assert "fastest application" not in text  # one project: no comparison
    empty = jobs.projects(project_table(m, min_procs=10**6, min_mib=1), min_procs=10**6, min_mib=1)
    assert empty.startswith("No job ran at least 1,000,000 processes and moved at least 1 MiB")


def test_projects_reads_the_jobs_and_data_moved_from_the_table(pop):
    _, _, m = pop
    # the N:M group without an application name: one more "application"
    anon = m.jobs.assign(app=m.jobs["app"].where(m.jobs["app"] != "nuclearm"))
    table = project_table(anon, min_procs=8, min_mib=1)
    text = jobs.projects(table, min_procs=8, min_mib=1)
    keep = anon[(anon["nprocs"] >= 8) & (anon["io_bytes"] >= MiB)]
    moved = keep["io_bytes"].astype(float).groupby(keep["app"].fillna("?")).sum()
    assert f"{len(moved)} applications (counting the jobs without a name as one)" in text
    assert f"{fmt_bytes(moved.sum())} read and written in all" in text
    # the sentence follows the table's mib_moved and jobs columns
    low = table["mib_moved"].idxmin()
    bumped = table.assign(mib_moved=table["mib_moved"].where(table.index != low, 10**6))
    bumped.loc[low, "jobs"] = 7
    name = table.loc[low, "app"]
    who = "The unnamed application" if pd.isna(name) else f"`{name}`"
    assert f"{who} moved the most data: 976.6 GiB in 7 jobs" in jobs.projects(
        bumped, min_procs=8, min_mib=1
    )
    _no_nan(text)


def test_analysis_lives_in_iochar_analyze():
    for name in ("large_jobs", "pick_job", "sharing_table", "size_table"):
        assert not hasattr(jobs, name), name
    assert set(jobs.__all__) == {"projects", "sharing", "access_sizes", "variance", "history"}


# ------------------------------------------------------------------- sharing patterns


def test_sharing_names_the_dominant_patterns(pop):
    p, _, m = pop
    t = sharing_table(m)
    text = jobs.sharing(t)
    counts = m.jobs["sharing"].value_counts()
    top = t.iloc[0]
    assert f"Of {len(m.jobs)} jobs with file records" in text
    assert f"the most common pattern is **{top['sharing']}** ({int(top['jobs'])} jobs" in text
    for pat, n in counts.items():
        assert f"{pat} {n}" in text
    by_bytes = m.jobs.groupby("sharing")["io_bytes"].sum().astype(float)
    assert f"**{by_bytes.idxmax()}** files carry the most" in text
    assert fmt_pct(by_bytes.max() / by_bytes.sum()) in text
    # the rank-0 group: its jobs, by the population's truth
    r0 = int((p.jobs["pattern"] == "rank0").sum())
    assert r0 == m.jobs["rank0_io"].sum() > 0
    assert f"{r0} jobs (`nuclear0`) moved every byte from rank 0 alone" in text
    _no_nan(text)


def test_sharing_changes_with_the_data(pop, other):
    a = jobs.sharing(sharing_table(pop[2]))
    b = jobs.sharing(sharing_table(other[2]))
    assert a != b
    assert "rank 0" not in b  # no rank-0 group in the other population
    n1 = int((other[0].jobs["pattern"] == "N:1").sum())
    assert f"the most common pattern is **N:1** ({n1} jobs" in b


def test_sharing_with_nothing_to_say():
    empty = sharing_table(pd.DataFrame(columns=["job_id", "sharing", "io_bytes"]))
    assert jobs.sharing(empty) == (
        "No job has file records, so there is no file-sharing pattern to report."
    )
    none = pd.DataFrame(
        {"job_id": [1], "app": ["x"], "nprocs": [4], "io_bytes": [pd.NA], "sharing": ["none"],
         "rank0_io": [False]}
    )  # fmt: skip
    assert jobs.sharing(sharing_table(none)).startswith("No job has file records")


def test_sharing_on_real_darshan_logs(real):
    _, m = real
    text = jobs.sharing(sharing_table(m))
    measured = m.jobs[m.jobs["sharing"] != "none"]
    assert f"Of {len(measured)} jobs with file records" in text
    top = measured["sharing"].value_counts()
    assert f"{top.index[0]} {top.iloc[0]}" in text
    _no_nan(text)


# ---------------------------------------------------------------------- access sizes


def test_access_sizes_name_the_most_common_bins(pop):
    _, _, m = pop
    hist = size_histogram(m)
    text = jobs.access_sizes(hist)
    s = m.sizes.merge(m.jobs[["job_id", "app"]], on="job_id")
    for op in ("read", "write"):
        o = s[s["op"] == op]
        per_bin = o.groupby("bin")["count"].sum()
        b = per_bin.idxmax()
        assert f"The most common {op} size is **{b} bytes**" in text
        assert f"{fmt_pct(per_bin.max() / per_bin.sum())} of {per_bin.sum():,} {op}s" in text
        who = o[o["bin"] == b].groupby("app")["count"].sum()
        if (who > 0).sum() > 1:
            assert f"`{who.idxmax()}` makes {fmt_pct(who.max() / who.sum())} of them" in text
    _no_nan(text)


def test_access_sizes_follow_the_request_size(pop):
    p, _, m = pop
    # the rank-0 group reads MiB + 4 KiB requests: its reads fall in 1M-4M
    hist = size_histogram(large_jobs(m, min_procs=0, min_mib=0))
    only = hist[hist["app"] == "nuclear0"]
    text = jobs.access_sizes(only)
    assert "The most common read size is **1M-4M bytes**" in text
    assert "No writes were recorded." in text  # the group writes nothing
    assert jobs.access_sizes(hist.iloc[0:0]) == (
        "No read or write access sizes were recorded for these jobs."
    )


def test_variance_states_groups_and_cv_range(pop):
    p, _, m = pop
    rep = repeated_jobs(m, 0.01)
    text = jobs.variance(rep, m)
    g = rep.groups
    assert f"**{len(g)} groups** of repeated jobs" in text
    assert f"{g['samples'].min()} to {g['samples'].max()} runs each" in text
    hi, lo = g.loc[g["cv_pct"].idxmax()], g.loc[g["cv_pct"].idxmin()]
    assert f"**{fmt_pct(hi['cv_pct'] / 100)}** (`{hi['app']}`, {hi['procs']} procs" in text
    assert f"from {fmt_pct(lo['cv_pct'] / 100)} (`{lo['app']}`" in text
    # the groups are the population's: the CVs are its truth
    truth = p.truth.set_index("group")["cv_pct"]
    assert fmt_pct(truth.max() / 100) in text and fmt_pct(truth.min() / 100) in text
    doubled = int((g["max_s"] >= 2 * g["min_s"]).sum())
    assert f"In {doubled} of {len(g)} groups the slowest run took at least twice" in text
    # the rank-0 group varies most here, as in the paper
    r0 = g.loc[g["app"] == "nuclear0", "cv_pct"]
    rest = g.loc[g["app"] != "nuclear0", "cv_pct"]
    assert len(r0) == 1 and r0.iloc[0] > rest.max()
    assert (
        f"The group whose rank 0 does all the I/O varies more (CV {fmt_pct(r0.iloc[0] / 100)}) "
        f"than the {len(rest)} others ({fmt_pct(rest.min() / 100)} to {fmt_pct(rest.max() / 100)})"
    ) in text
    _no_nan(text)


def test_variance_changes_with_the_data(pop, other):
    a = jobs.variance(repeated_jobs(pop[2], 0.01), pop[2])
    b = jobs.variance(repeated_jobs(other[2], 0.01), other[2])
    assert a != b
    assert "rank 0" not in b
    assert "**50.0%** (`climate`, 8 procs" in b  # OTHER's most variable group


def test_variance_without_groups(pop):
    _, _, m = pop
    rep = repeated_jobs(m, 0.01, min_samples=1000)
    text = jobs.variance(rep, m)
    assert text.startswith("No group of repeated jobs was found")
    assert "within 1.0%" in text


# ------------------------------------------------------------------ one job's history


def _group_runs(rep, m, job):
    gid = rep.members.loc[rep.members["job_id"] == job, "group_id"].iloc[0]
    ids = rep.members.loc[rep.members["group_id"] == gid, "job_id"]
    return m.jobs[m.jobs["job_id"].isin(ids)].sort_values("slowest_io_s")


def test_history_places_the_slowest_fastest_and_middle_runs(pop):
    _, _, m = pop
    rep = repeated_jobs(m, 0.01)
    job = most_variable_job(rep, m)
    runs = _group_runs(rep, m, job)
    n = len(runs)
    slow = jobs.history(similar_jobs(m, job), m)
    others = runs[runs["job_id"] != job]["slowest_io_s"]
    assert slow.startswith(f"Job {job} (`nuclear0`, 8 processes) spent ")
    worst = fmt_s(runs["slowest_io_s"].max())
    assert f"{worst} in I/O (slowest rank): the slowest of its {n} runs" in slow
    assert (
        f"took {fmt_s(others.min())} to {fmt_s(others.max())}, median {fmt_s(others.median())}"
        in slow
    )
    ratio = runs["slowest_io_s"].max() / others.median()
    assert f"{fmt_num(ratio)} times the median" in slow
    fast = int(runs["job_id"].iloc[0])
    assert f"the fastest of its {n} runs" in jobs.history(similar_jobs(m, fast), m)
    third = int(runs["job_id"].iloc[-3])
    assert f"the 3rd slowest of its {n} runs" in jobs.history(similar_jobs(m, third), m)
    # start order: the position in the group's history
    sim = similar_jobs(m, job)
    pos = int(np.flatnonzero(sim.history["is_job"])[0]) + 1
    assert f"It is run {pos} of {n} in start order." in slow
    _no_nan(slow)


def test_history_never_contradicts_the_table_iv_groups_on_its_page(pop):
    _, _, m = pop
    rep = repeated_jobs(m, 0.01)
    job = most_variable_job(rep, m)
    n = len(_group_runs(rep, m, job))
    # the same runs, but Table IV asks for more runs than the group has: no group shown
    strict = repeated_jobs(m, 0.01, min_samples=n + 1)
    assert strict.members.loc[strict.members["job_id"] == job, "group_id"].isna().all()
    text = jobs.history(similar_jobs(m, job), m, repeated=strict)
    assert f"of its {n} runs" in text
    assert f"These {n} runs are fewer than the {n + 1} runs a group needs in Table IV" in text
    # when the job is in a Table IV group, nothing is added
    assert "Table IV" not in jobs.history(similar_jobs(m, job), m, repeated=rep)


def test_history_without_other_runs(pop):
    _, _, m = pop
    alone = m.jobs.iloc[[0]]
    job = int(alone["job_id"].iloc[0])
    text = jobs.history(similar_jobs(alone, job), alone)
    assert text.startswith(f"Job {job} (`{alone['app'].iloc[0]}`, ")
    assert "has no other run" in text


@pytest.mark.parametrize(
    "fn",
    [jobs.projects, jobs.sharing, jobs.access_sizes, jobs.variance, jobs.history],
)
def test_public_functions_document_their_parameters(fn):
    doc = inspect.getdoc(fn)
    section = doc.split("Parameters", 1)[1]
    for name in inspect.signature(fn).parameters:
        assert re.search(rf"^{name} :", section, re.M), f"{fn.__name__}: {name}"
