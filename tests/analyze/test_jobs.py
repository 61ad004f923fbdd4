"""Job metrics (Carns et al. 2011, section 2.4, Table VI) on real Darshan logs and synth truth.

Real logs: every log shipped in the darshan wheel and in data/darshan gets
finite metrics (or a note saying why not); on a few,
the metrics are recomputed here from pydarshan's raw records and checked
against libdarshan-util's own accumulator (``agg_time_by_slowest``).
Synthetic jobs: Darshan logs and traces of the same jobs give the truth.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import iochar
from iochar.analyze.jobs import (
    SIZE_BINS,
    UNKNOWN,
    JobMetrics,
    job_metrics,
    large_jobs,
    project_table,
    sharing_table,
    size_histogram,
    size_table,
)
from iochar.datasets.synth_jobs import JobGroup, make_population, write_darshan_logs, write_trace
from iochar.errors import ParameterError

ROOT = Path(__file__).resolve().parents[2]
requires_darshan = pytest.mark.skipif(
    importlib.util.find_spec("darshan") is None, reason="the darshan package is missing"
)
MiB = 1 << 20


def _real_logs() -> list[Path]:
    found = sorted((ROOT / "data" / "darshan").glob("*.darshan"))
    spec = importlib.util.find_spec("darshan")
    if spec is not None and spec.origin is not None:
        wheel = Path(spec.origin).parent
        for pattern in ("examples/example_logs/*.darshan", "tests/input/*.darshan",
                        "examples/darshan-graph/*.darshan"):  # fmt: skip
            found += sorted(wheel.glob(pattern))
    return found


LOGS = _real_logs()


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def real():
    """Every real log in one store (identical bytes load once) and their metrics."""
    if not LOGS or importlib.util.find_spec("darshan") is None:
        pytest.skip("no Darshan logs or no darshan package")
    db = iochar.connect(":memory:")
    for p in LOGS:
        db.load(p)
    jobs = db.sql("SELECT j.job_id, s.sha256 FROM jobs j JOIN sources s USING (source_id)").df()
    m = job_metrics(db)
    yield db, m, dict(zip(jobs["sha256"], jobs["job_id"], strict=True))
    db.close()


@requires_darshan
@pytest.mark.parametrize("log", LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_real_log_gets_metrics_or_a_reason(real, log):
    _, m, by_sha = real
    row = m.jobs.set_index("job_id").loc[by_sha[_sha(log)]]
    assert row["basis"] == "counters"
    for c in ("io_bytes", "slowest_io_s", "io_time_pct", "meta_time_pct", "files_per_proc",
              "creates_per_proc", "mib_per_proc"):  # fmt: skip
        assert np.isfinite(float(row[c])) and float(row[c]) >= 0, c
    assert np.isfinite(row["mib_s"]) or row["slowest_io_s"] == 0
    assert row["time_rule"].startswith("counters: ")
    assert row["sharing"] in ("N:N", "N:1", "N:M", "1:1")
    assert row["interfaces"] and set(row["interfaces"].split(",")) <= {
        "POSIX", "STDIO", "MPI-IO", "HDF5", "PnetCDF"}  # fmt: skip
    # a missing metric always says why
    for c, word in (("seq_pct", "sequentiality"), ("aligned_pct", "alignment"),
                    ("mib_s_cn", "node count")):  # fmt: skip
        if not np.isfinite(row[c]):
            assert word in row["note"], (c, row["note"])
        else:
            assert 0 <= row[c] or c == "mib_s_cn"
    sizes = m.sizes[m.sizes["job_id"] == row.name]
    if len(sizes):
        assert set(sizes["bin"]) == {b for b, _, _ in SIZE_BINS}
        assert np.allclose(sizes.groupby("op")["pct"].sum(), 100)


@functools.cache
def _report(path: Path):
    import darshan

    return darshan.DarshanReport(str(path), read_all=True)


def _naive(path: Path, modules=("POSIX", "STDIO")) -> dict:
    """The metrics recomputed from pydarshan's records, the std streams left out."""
    rep = _report(path)
    std = {k for k, v in rep.name_records.items() if v in ("<STDIN>", "<STDOUT>", "<STDERR>")}
    parts = []
    for mod in modules:
        if mod not in rep.records:
            continue
        df = rep.records[mod].to_df()
        c, f = df["counters"], df["fcounters"]
        px = "MPIIO" if mod == "MPI-IO" else mod

        def col(frame, name, px=px):
            x = frame[f"{px}_{name}"].astype(float) if f"{px}_{name}" in frame else np.nan
            return x.where(x >= 0) if isinstance(x, pd.Series) else pd.Series(np.nan, frame.index)

        parts.append(
            pd.DataFrame(
                {
                    "id": c["id"].astype("uint64"),
                    "rank": c["rank"].astype(int),
                    "br": col(c, "BYTES_READ"),
                    "bw": col(c, "BYTES_WRITTEN"),
                    "ops": col(c, "READS").fillna(0) + col(c, "WRITES").fillna(0),
                    "seq": col(c, "SEQ_READS") + col(c, "SEQ_WRITES"),
                    "na": col(c, "FILE_NOT_ALIGNED"),
                    "rt": col(f, "F_READ_TIME").fillna(0),
                    "wt": col(f, "F_WRITE_TIME").fillna(0),
                    "mt": col(f, "F_META_TIME").fillna(0),
                    "slow": col(f, "F_SLOWEST_RANK_TIME"),
                }
            )
        )
    r = pd.concat(parts, ignore_index=True)
    r = r[~r["id"].isin(std)]
    r["t"] = r["rt"] + r["wt"] + r["mt"]
    ranked = r[r["rank"] >= 0]
    unique = ranked.groupby("rank")["t"].sum().max() if len(ranked) else 0.0
    shared = r.loc[r["rank"] < 0, "slow"].sum()
    slowest = unique + shared
    moved = r["br"].fillna(0).sum() + r["bw"].fillna(0).sum()
    has_seq = r["seq"].notna()
    has_na = r["na"].notna()
    return {
        "slowest_io_s": slowest,
        "io_bytes": moved,
        "mib_s": moved / MiB / slowest if slowest > 0 else np.nan,
        "meta_time_pct": 100 * r["mt"].sum() / r["t"].sum() if r["t"].sum() > 0 else np.nan,
        "seq_pct": 100 * r.loc[has_seq, "seq"].sum() / r.loc[has_seq, "ops"].sum()
        if r.loc[has_seq, "ops"].sum() > 0
        else np.nan,
        "aligned_pct": 100 * (1 - r.loc[has_na, "na"].sum() / r.loc[has_na, "ops"].sum())
        if r.loc[has_na, "ops"].sum() > 0
        else np.nan,
        "files": r["id"].nunique(),
        "nprocs": rep.metadata["job"]["nprocs"],
    }


#: Logs with unique per-rank records, shared records, STDIO only, HDF5 and DXT.
CHECKED = [
    p
    for p in LOGS
    if p.parent.name in ("darshan", "input", "example_logs")
    and p.name in ("example.darshan", "dxt.darshan", "ior_hdf5_example.darshan",
                   "sample-badost.darshan", "noposix.darshan", "sample-dxt-simple.darshan")
]  # fmt: skip
CHECKED = list({_sha(p): p for p in CHECKED}.values())


@requires_darshan
@pytest.mark.parametrize("log", CHECKED, ids=lambda p: p.name)
def test_metrics_equal_a_recount_from_pydarshan_records(real, log):
    _, m, by_sha = real
    row = m.jobs.set_index("job_id").loc[by_sha[_sha(log)]]
    want = _naive(log)
    for c in ("slowest_io_s", "io_bytes", "mib_s", "meta_time_pct", "seq_pct", "aligned_pct"):
        np.testing.assert_allclose(float(row[c]), want[c], rtol=1e-9, equal_nan=True, err_msg=c)
    assert row["files"] == want["files"]
    np.testing.assert_allclose(row["files_per_proc"], want["files"] / want["nprocs"])
    np.testing.assert_allclose(row["mib_per_proc"], want["io_bytes"] / MiB / want["nprocs"])


@requires_darshan
@pytest.mark.parametrize("log", CHECKED, ids=lambda p: p.name)
def test_time_is_libdarshan_utils_agg_time_by_slowest(real, log):
    from darshan.backend.cffi_backend import accumulate_records

    rep = _report(log)
    mod = "POSIX" if "POSIX" in rep.records else "STDIO"  # noposix.darshan: STDIO only
    db, _, by_sha = real
    jid = int(by_sha[_sha(log)])
    row = job_metrics(db, job_id=jid, modules=(mod,)).jobs.iloc[0]
    recs = rep.records[mod].to_df()
    # the loader keeps negative (clock-skewed) durations as NULL: 0 in the sums
    times = [f"{mod}_F_READ_TIME", f"{mod}_F_WRITE_TIME", f"{mod}_F_META_TIME"]
    recs["fcounters"][times] = recs["fcounters"][times].clip(lower=0)
    d = accumulate_records(recs, mod, rep.metadata["job"]["nprocs"]).derived_metrics
    assert row["layer"] == mod
    assert row["io_bytes"] == d.total_bytes
    assert row["slowest_io_s"] == pytest.approx(d.agg_time_by_slowest, rel=1e-12)
    if d.agg_time_by_slowest > 0:
        assert row["mib_s"] == pytest.approx(d.agg_perf_by_slowest, rel=1e-12)


@requires_darshan
@pytest.mark.parametrize("name", ["ior_hdf5_example.darshan", "dxt.darshan"])
def test_ops_basis_recounts_the_dxt_posix_segments(real, name):
    db, _, by_sha = real
    log = ROOT / "data" / "darshan" / name
    jid = int(by_sha[_sha(log)])
    mt = job_metrics(db, job_id=jid, basis="ops")
    row = mt.jobs.iloc[0]
    segs = []
    for rec in _report(log).records["DXT_POSIX"].to_df():
        for op in ("read", "write"):
            s = rec[f"{op}_segments"].assign(rank=rec["rank"], op=op, id=rec["id"])
            segs.append(s)
    s = pd.concat(segs, ignore_index=True)
    s["dur"] = s["end_time"] - s["start_time"]
    assert row["basis"] == "ops" and row["layer"] == "DXT_POSIX"  # DXT_MPIIO left out
    assert row["interfaces"] == ("POSIX,MPI-IO" if "ior" in name else "POSIX")
    assert row["slowest_io_s"] == pytest.approx(s.groupby("rank")["dur"].sum().max(), rel=1e-9)
    assert row["io_bytes"] == s["length"].sum()
    assert row["meta_time_pct"] == 0 and "no metadata time" in row["note"]
    edges = [hi for _, _, hi in SIZE_BINS[:-1]]
    want = s.groupby(["op", np.searchsorted(edges, s["length"], side="right")]).size()
    got = mt.sizes[mt.sizes["count"] > 0].set_index(["op", "bin_lo"])["count"]
    lows = np.array([lo for _, lo, _ in SIZE_BINS])
    assert sorted(got.items()) == sorted(((op, lows[b]), n) for (op, b), n in want.items())


# ------------------------------------------------------------------ synth truth --

GROUPS = [
    JobGroup("nn", app="earth", uid=2001, nprocs=8, files=16, read_bytes=16 * MiB,
             write_bytes=2 * MiB, mean_io_s=40.0, cv=0.2, samples=2, write_files=4,
             request_bytes=300_000),
    JobGroup("r0", app="nuclear0", uid=2002, nprocs=8, files=4, read_bytes=8 * MiB,
             write_bytes=0, mean_io_s=23.1, cv=0.9, samples=2, pattern="rank0",
             request_bytes=MiB + 4096),
    JobGroup("n1", app="climate", uid=2004, nprocs=8, files=1, read_bytes=8 * MiB,
             write_bytes=8 * MiB, mean_io_s=72.0, cv=0.08, samples=2, pattern="N:1",
             request_bytes=256 * 1024),
    JobGroup("nm", app="nuclearm", uid=2003, nprocs=16, io_ranks=4, files=8,
             read_bytes=16 * MiB, write_bytes=4 * MiB, mean_io_s=45.0, cv=0.3, samples=2,
             pattern="N:M"),
]  # fmt: skip
SHARING = {"N:N": "N:N", "rank0": "N:1", "N:1": "N:1", "N:M": "N:M"}


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    if importlib.util.find_spec("darshan") is None:
        pytest.skip("the darshan package is missing")
    d = tmp_path_factory.mktemp("synth_jobs")
    pop = make_population(GROUPS, random_state=3)
    logs, trace = iochar.connect(":memory:"), iochar.connect(":memory:")
    for p in write_darshan_logs(pop, d):
        logs.load(p)
    trace.load(write_trace(pop, d / "jobs.parquet"))
    return pop, logs, trace


def _with_truth(pop, db, **kw) -> pd.DataFrame:
    return job_metrics(db, **kw).jobs.merge(pop.match(db), on="job_id", suffixes=("", "_true"))


def test_counters_give_the_truth_for_every_pattern(synth):
    pop, logs, _ = synth
    m = _with_truth(pop, logs, procs_per_node=4)
    assert len(m) == 8 and (m["basis"] == "counters").all()
    np.testing.assert_allclose(m["slowest_io_s"], m["io_time_s"], rtol=1e-9)
    assert (m["io_bytes"] == m["read_bytes"] + m["write_bytes"]).all()
    assert (m["files"] == m["files_true"]).all() and (m["nprocs"] == m["nprocs_true"]).all()
    assert (m["sharing"] == m["pattern"].map(SHARING)).all()
    assert (m["rank0_io"] == (m["pattern"] == "rank0")).all()
    want_mibs = (m["read_bytes"] + m["write_bytes"]) / MiB / m["io_time_s"] / m["nnodes_true"]
    np.testing.assert_allclose(m["mib_s_cn"], want_mibs, rtol=1e-9)
    assert (m["nodes_basis"] == "ceil(nprocs / 4)").all()
    np.testing.assert_allclose(m["io_time_pct"], 100 * m["io_time_s"] / m["runtime_s_true"],
                               rtol=1e-6)  # fmt: skip
    np.testing.assert_allclose(m["meta_time_pct"], 10.0, rtol=1e-9)  # JobGroup.meta_share
    shared = m["pattern"] == "N:1"
    assert m.loc[shared, "time_rule"].str.contains("per shared file slowest-rank time").all()
    assert (m.loc[shared, "interfaces"] == "POSIX,MPI-IO").all()
    assert (m.loc[~shared, "interfaces"] == "POSIX").all()
    assert (m.loc[m["pattern"] == "N:M", "io_ranks"] == 4).all()
    # creates are estimated as files written
    assert (m["written_files"] > 0).sum() == 6
    assert (m["creates_basis"].str.startswith("estimate")).all()


def test_trace_of_the_same_jobs_agrees_with_their_counters(synth):
    pop, logs, trace = synth
    c = _with_truth(pop, logs).set_index("job_key")
    o = _with_truth(pop, trace, alignment_bytes=4 * MiB).set_index("job_key").loc[c.index]
    assert (o["basis"] == "ops").all() and (o["layer"] == "trace").all()
    for col in ("slowest_io_s", "io_bytes", "reads", "writes", "meta_time_pct", "seq_pct",
                "aligned_pct", "files", "written_files"):  # fmt: skip
        np.testing.assert_allclose(
            o[col].astype(float), c[col].astype(float), rtol=1e-9, err_msg=col
        )
    # traces know only the ranks that did I/O: a rank-0 job looks serial
    r0 = c["pattern"] == "rank0"
    assert (o.loc[r0, "nprocs"] == 1).all() and (o.loc[r0, "sharing"] == "1:1").all()
    sc = job_metrics(logs).sizes.merge(pop.match(logs)[["job_id", "job_key"]])
    so = job_metrics(trace).sizes.merge(pop.match(trace)[["job_id", "job_key"]])
    key = ["job_key", "op", "bin_lo"]
    both = sc.merge(so, on=key, suffixes=("_c", "_o"))
    assert len(both) == len(sc) and (both["count_c"] == both["count_o"]).all()


def test_shared_file_without_slowest_rank_time_uses_section_2_4(tmp_path):
    pytest.importorskip("darshan")
    pop = make_population([GROUPS[2]], random_state=5)
    db = iochar.connect(":memory:")
    for p in write_darshan_logs(pop, tmp_path, slowest_rank_time=False):
        db.load(p)
    m = _with_truth(pop, db)
    assert m["time_rule"].str.contains("first open to last I/O").all()
    assert m["note"].str.contains("section 2.4").all()
    # one shared file, opened by all ranks at once: the estimate is exact here
    np.testing.assert_allclose(m["slowest_io_s"], m["io_time_s"], rtol=1e-9)


def test_project_table_and_size_histogram(synth):
    pop, logs, _ = synth
    m = job_metrics(logs, procs_per_node=4)
    t = project_table(m, min_procs=1, min_mib=0).set_index("app")
    assert set(t.index) == {"earth", "nuclear0", "climate", "nuclearm"}
    assert (t["jobs"] == 2).all()
    j = m.jobs[m.jobs["app"] == "earth"]
    assert t.loc["earth", "mib_s_cn"] == pytest.approx(j["mib_s_cn"].mean())
    assert t.loc["earth", "seq_pct"] == pytest.approx(j["seq_pct"].mean())
    assert project_table(m).empty  # the paper's filter: >= 1,024 processes, 500 MiB
    assert len(project_table(m, min_procs=16, min_mib=0)) == 1
    # the data moved, kept as the sort key: the truth's bytes per application
    truth = pop.match(logs)
    want = (truth["read_bytes"] + truth["write_bytes"]).groupby(truth["app"]).sum() / MiB
    np.testing.assert_allclose(t["mib_moved"], want.loc[t.index], rtol=1e-12)
    assert t["mib_moved"].is_monotonic_decreasing
    cols = list(project_table(m, min_procs=1, min_mib=0).columns)
    assert cols[:4] == ["app", "jobs", "mib_moved", "mib_s_cn"]
    assert cols[-1] == "median_mib_s_cn" and "moved" not in cols
    h = size_histogram(m)
    np.testing.assert_allclose(h.groupby(["app", "op"])["pct"].sum(), 100)
    r0 = h[(h["app"] == "nuclear0") & (h["count"] > 0)]
    assert set(r0["bin"]) == {"1M-4M", "1K-10K", "100K-1M"} or "1M-4M" in set(r0["bin"])


def _moved_mask(m, min_procs, min_mib):
    df = m.jobs
    return (df["nprocs"].astype(float) >= min_procs) & (
        df["io_bytes"].astype(float) >= min_mib * MiB
    )


@pytest.mark.parametrize(("min_procs", "min_mib"), [(16, 1), (8, 20), (0, 0), (10**6, 0)])
def test_large_jobs_is_the_table_vi_filter(synth, min_procs, min_mib):
    pop, logs, _ = synth
    m = job_metrics(logs, procs_per_node=4)
    large = large_jobs(m, min_procs=min_procs, min_mib=min_mib)
    want = m.jobs.loc[_moved_mask(m, min_procs, min_mib), "job_id"].tolist()
    assert large.jobs["job_id"].tolist() == want
    assert set(large.sizes["job_id"]) == set(want)
    pd.testing.assert_frame_equal(
        large.sizes, m.sizes[m.sizes["job_id"].isin(want)].reset_index(drop=True)
    )
    table = project_table(m, min_procs=min_procs, min_mib=min_mib)
    assert table["jobs"].sum() == len(large.jobs)
    # against the population: the 16-process N:M group alone, then 18 MiB and more
    truth = pop.match(logs)
    moved = truth["read_bytes"] + truth["write_bytes"]
    keep = (truth["nprocs"] >= min_procs) & (moved >= min_mib * MiB)
    assert sorted(want) == sorted(truth.loc[keep, "job_id"])


def test_large_jobs_bad_arguments(synth):
    _, logs, _ = synth
    m = job_metrics(logs)
    with pytest.raises(ParameterError, match="'metrics' parameter of large_jobs"):
        large_jobs(m.jobs)
    with pytest.raises(ParameterError, match="'min_procs' parameter of large_jobs"):
        large_jobs(m, min_procs=-1)
    with pytest.raises(ParameterError, match="'min_mib' parameter of large_jobs"):
        large_jobs(m, min_mib="500")
    bare = JobMetrics(m.jobs.drop(columns="io_bytes"), m.sizes)
    with pytest.raises(ParameterError, match="missing"):
        large_jobs(bare)


def test_sharing_table_counts_jobs_and_bytes(synth):
    pop, logs, _ = synth
    m = job_metrics(logs, procs_per_node=4)
    t = sharing_table(m)
    counts = m.jobs["sharing"].value_counts()
    assert dict(zip(t["sharing"], t["jobs"], strict=True)) == counts.to_dict()
    assert t["jobs"].is_monotonic_decreasing
    got = t.set_index("sharing")
    # bytes per pattern from the population's truth, not from the metrics
    truth = pop.match(logs).merge(m.jobs[["job_id", "sharing"]], on="job_id")
    moved = (truth["read_bytes"] + truth["write_bytes"]).groupby(truth["sharing"]).sum()
    np.testing.assert_allclose(got.loc[moved.index, "gib_moved"], moved / 2**30)
    np.testing.assert_allclose(got.loc[moved.index, "pct_bytes"], 100 * moved / moved.sum())
    np.testing.assert_allclose(got["pct_jobs"], 100 * got["jobs"] / len(m.jobs))
    procs = truth.groupby("sharing")["nprocs"].agg(["min", "max"])
    assert (got.loc[procs.index, "min_procs"] == procs["min"]).all()
    assert (got.loc[procs.index, "max_procs"] == procs["max"]).all()
    # the rank-0 group is N:1 (with the shared-file group) and named apart
    assert got["rank0_jobs"].sum() == (truth["pattern"] == "rank0").sum() == 2
    assert got.loc["N:1", "rank0_apps"] == "nuclear0"
    assert got.loc["N:1", "apps"] == "climate, nuclear0"
    assert got.loc["N:M", "apps"] == "nuclearm" and got.loc["N:M", "rank0_apps"] == ""
    # ties in job counts follow N:N, N:M, N:1
    assert t["sharing"].tolist() == ["N:1", "N:N", "N:M"]


def test_sharing_table_edge_cases():
    cols = ["sharing", "jobs", "pct_jobs", "min_procs", "max_procs", "gib_moved", "pct_bytes",
            "rank0_jobs", "apps", "rank0_apps"]  # fmt: skip
    empty = sharing_table(pd.DataFrame(columns=["job_id", "sharing", "io_bytes"]))
    assert empty.empty and list(empty.columns) == cols
    jobs = pd.DataFrame(
        {"job_id": [1, 2, 3], "app": ["x", None, "y"], "nprocs": [4, 4, 1],
         "io_bytes": [pd.NA, 0, 0], "sharing": ["none", "N:N", "1:1"],
         "rank0_io": [False, pd.NA, False]}
    ).astype({"io_bytes": "Int64", "rank0_io": "boolean"})  # fmt: skip
    t = sharing_table(jobs).set_index("sharing")
    # nothing moved: no share of bytes; ties in jobs in the patterns' order
    assert t.index.tolist() == ["N:N", "1:1", "none"]
    assert t["pct_bytes"].isna().all() and (t["gib_moved"] == 0).all()
    assert t.loc["N:N", "apps"] == UNKNOWN and t["rank0_jobs"].sum() == 0
    with pytest.raises(ParameterError, match="missing \\['rank0_io'\\]"):
        sharing_table(jobs.drop(columns="rank0_io"))
    with pytest.raises(ParameterError, match="'metrics' parameter of sharing_table"):
        sharing_table([1, 2])


def test_size_table_is_the_histogram_side_by_side(synth):
    _, logs, _ = synth
    m = job_metrics(logs)
    hist = size_histogram(m)
    wide = size_table(hist)
    order = [b for b, _, _ in SIZE_BINS]
    assert list(wide.columns) == sorted(wide.columns, key=order.index)
    # the bins used, recounted from the per-job histograms
    used = m.sizes.groupby("bin")["count"].sum()
    assert set(wide.columns) == set(used[used > 0].index)
    for row in hist[hist["count"] > 0].itertuples():
        assert wide.loc[(row.app, row.op), row.bin] == pytest.approx(row.pct)
    np.testing.assert_allclose(wide.sum(axis=1), 100)
    assert wide.index.names == ["app", "op"] and wide.columns.name == "size [bytes]"
    assert size_table(hist.iloc[0:0]).empty
    assert size_table(hist.assign(count=0)).empty
    # a project without a name is labelled, not dropped
    anon = size_table(hist.assign(app=None))
    assert set(anon.index.get_level_values("app")) == {UNKNOWN}


def test_job_without_io_and_bad_arguments(store):
    store.load(b"op,t_start\nopen,0\nclose,1\n", kind="trace-csv")
    row = job_metrics(store).jobs.iloc[0]
    # no t_end column: no call has a duration, so the I/O time is unknown (not 0 s)
    assert row["sharing"] == "none" and np.isnan(row["slowest_io_s"]) and np.isnan(row["mib_s"])
    assert np.isnan(row["meta_time_pct"]) and np.isnan(row["io_time_pct"])
    assert "no bytes read or written" in row["note"] and "no I/O time recorded" in row["note"]
    store.load(b"op,t_start,t_end\nopen,0,0.25\nclose,1,1\n", kind="trace-csv")
    row = job_metrics(store).jobs.iloc[1]
    assert row["slowest_io_s"] == 0.25 and row["meta_time_pct"] == 100
    # a job with no records at all (a Darshan run that opened nothing, Fig. 5's zero-file jobs)
    store.con.execute("INSERT INTO jobs (job_id, app, nprocs) VALUES (99, 'idle', 4)").fetchall()
    row = job_metrics(store, job_id=99).jobs.iloc[0]
    assert row["basis"] == "none" and np.isnan(row["slowest_io_s"])
    assert row["note"].startswith("no I/O records")
    with pytest.raises(ParameterError, match="'basis' parameter of job_metrics"):
        job_metrics(store, basis="darshan")
    with pytest.raises(ParameterError, match="procs_per_node"):
        job_metrics(store, procs_per_node=0)
    with pytest.raises(ParameterError, match="modules"):
        job_metrics(store, modules="POSIX")
    with pytest.raises(ParameterError, match="by"):
        project_table(job_metrics(store), by="project")


def test_a_call_split_into_two_rows_counts_its_time_once():
    """GNU cp 9.1 under strace (data/strace/transfers/cp.strace): each copy_file_range
    lands as a read row on the source and a write row on the copy (issue 17, item 3);
    the rank's I/O time counts each call once, as strace timed it."""
    import re

    import iochar
    from iochar.analyze import jobs

    path = ROOT / "data" / "strace" / "transfers" / "cp.strace"
    raw = path.read_text()
    copies = [float(t) for t in re.findall(r"copy_file_range\(.*<([\d.]+)>$", raw, re.M)]
    assert len(copies) == 2
    with iochar.connect(":memory:") as db:
        db.load(path)
        total = db.sql("SELECT sum(t_end - t_start) FROM ops").fetchall()[0][0]
        pairs = db.sql("SELECT count(*) FROM ops WHERE call = 'copy_file_range'").fetchall()[0][0]
        m = jobs.job_metrics(db).jobs.iloc[0]
    assert pairs == 2 * len(copies)
    # every row once, minus the second row of each copy_file_range
    assert m["unique_io_s"] == pytest.approx(total - sum(copies), abs=2e-6)
