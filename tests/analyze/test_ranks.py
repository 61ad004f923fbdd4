"""iochar.analyze.ranks: the rank x time matrix (Carns et al. 2011 Fig. 13, PyDarshan's heat
map), per-rank totals and Darshan's fastest/slowest ranks, on real logs and captures.

Expected numbers come from outside iochar: PyDarshan's own heat map code
(``heatmap_handling.get_heatmap_df`` on its DXT records, ``report.heatmaps`` for the HEATMAP
module) and counters read by PyDarshan, the raw strace text parsed here, and the truth of
a generated 100,000-rank population.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import iochar
from iochar.analyze import ranks
from iochar.errors import ParameterError
from iochar.narrate import ranks as narrate_ranks

DATA = Path(__file__).resolve().parents[2] / "data"
DARSHAN = DATA / "darshan"
DAOS_LOG = (
    DARSHAN / "darshan-logs" / "ior_daos"
    / "snyder_ior-DFS_id4681120-53379_5-8-15060-3270540599978592154_1.darshan"
)  # fmt: skip
RELEASE = DARSHAN / "darshan-logs" / "release_logs"

DXT_LOGS = [
    DARSHAN / "ior_hdf5_example.darshan",
    DARSHAN / "sample-dxt-simple.darshan",
    DARSHAN / "dxt.darshan",
    DARSHAN / "classify" / "hdf5_diagonal_write_bytes_range_dxt.darshan",
    DARSHAN / "classify" / "nonmpi_dxt_anonymized.darshan",
]


def _report(path):
    darshan = pytest.importorskip("darshan", reason="PyDarshan gives the expected numbers")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return darshan.DarshanReport(str(path), read_all=True)


def _load(path):
    pytest.importorskip("darshan", reason="the darshan loader needs the darshan package")
    db = iochar.connect(":memory:")
    db.load(path)
    return db


# ------------------------------------------------------------------ DXT vs PyDarshan


@pytest.mark.parametrize("path", DXT_LOGS, ids=lambda p: p.name)
@pytest.mark.parametrize("op", ["both", "read", "write"])
def test_dxt_matrix_equals_pydarshan_heatmap(path, op):
    """Bytes per rank and bin equal PyDarshan's ``get_heatmap_df`` on the same log, with
    its bins (200 over the run time, as the job summary draws them) and its DXT_POSIX
    records (the layer rule: DXT_MPIIO repeats them)."""
    from darshan.experimental.plots import heatmap_handling

    rep = _report(path)
    ops = ["read", "write"] if op == "both" else [op]
    try:
        agg = heatmap_handling.get_aggregate_data(rep, mod="DXT_POSIX", ops=ops)
    except ValueError:
        pytest.skip(f"{path.name} has no DXT_POSIX {op} segments")
    nprocs, runtime = rep.metadata["job"]["nprocs"], rep.metadata["job"]["run_time"]
    want = heatmap_handling.get_heatmap_df(agg, xbins=200, nprocs=nprocs, max_time=runtime)
    db = _load(path)
    cells = ranks.rank_heatmap(db, job_id=0, time_bins=200)
    assert cells.evidence["source"] == "ops" and cells.evidence["layers"] == "DXT_POSIX"
    got = ranks.rank_matrix(cells, op=op)
    assert got.shape == want.shape == (nprocs, 200)
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=1e-9, atol=1e-6)
    assert cells.evidence["bin_s"] == pytest.approx(runtime / 200)


def test_dxt_default_bins_cover_the_run_and_keep_every_byte():
    """Default time bins: 1-2-5 widths, at most 200 over the run; every segment byte is in
    some cell (PyDarshan's DXT_POSIX totals)."""
    path = DARSHAN / "dxt.darshan"
    rep = _report(path)
    segs = rep.records["DXT_POSIX"].to_df()
    total = sum(
        int(r[f"{o}_segments"]["length"].sum())
        for r in segs
        for o in ("read", "write")
        if r[f"{o}_segments"].size
    )
    db = _load(path)
    cells = ranks.rank_heatmap(db, job_id=0)
    ev = cells.evidence
    assert ev["bin_s"] == 10.0  # 1469 s / 200 = 7.3 s -> 10 s
    assert ev["time_bins"] == 147 and ev["t_hi_s"] >= 1469.0
    assert ev["bytes"] == pytest.approx(total, rel=1e-12)
    assert ev["rows"] == 1 and ev["ranks_per_bin"] == 1


# --------------------------------------------------------------- HEATMAP vs PyDarshan


def _hm_expected(rep, mods, ops):
    n = rep.metadata["job"]["nprocs"]
    frames = [
        rep.heatmaps[m].to_df(ops=ops, interval_index=False).reindex(index=range(n), fill_value=0)
        for m in mods
    ]
    out = sum(f.fillna(0).astype(float) for f in frames)
    return out.to_numpy()


HEATMAP_LOGS = [
    DAOS_LOG,
    RELEASE / "mpi-io-test-x86_64-3.4.0.darshan",
    RELEASE / "mpi-io-test-x86_64-3.4.7.darshan",
    RELEASE / "mpi-io-test-x86_64-3.5.0.darshan",
]


@pytest.mark.parametrize("path", HEATMAP_LOGS, ids=lambda p: p.name[:30])
def test_heatmap_module_equals_pydarshan_per_layer(path):
    """Each HEATMAP layer alone (``layer=``) equals PyDarshan's ``report.heatmaps[mod]``."""
    rep = _report(path)
    db = _load(path)
    for mod in rep.heatmaps:
        for op, ops in (("read", ["read"]), ("write", ["write"]), ("both", ["read", "write"])):
            cells = ranks.rank_heatmap(db, job_id=0, source="heatmap", layer=mod)
            want = _hm_expected(rep, [mod], ops)
            got = ranks.rank_matrix(cells, op=op).to_numpy()
            assert got.shape == want.shape, mod
            np.testing.assert_allclose(got, want, err_msg=f"{mod} {op}")
            assert cells.evidence["bin_s"] == pytest.approx(rep.heatmaps[mod]._bin_width_seconds)


def test_heatmap_layer_rule_daos_not_dfs():
    """IOR -a DFS: DFS and DAOS hold the same 16 MiB each way (DFS calls reach storage
    through DAOS), so the default is DAOS + STDIO, never DFS on top."""
    rep = _report(DAOS_LOG)
    dfs = _hm_expected(rep, ["DFS"], ["read", "write"]).sum()
    daos = _hm_expected(rep, ["DAOS"], ["read", "write"]).sum()
    assert dfs == 2 * 16 * 2**20 and abs(daos - dfs) < 1024  # the same data, two layers
    db = _load(DAOS_LOG)
    cells = ranks.rank_heatmap(db, job_id=0)
    assert cells.evidence["source"] == "heatmap"
    assert cells.evidence["layers"] == "DAOS+STDIO"
    want = _hm_expected(rep, ["DAOS", "STDIO"], ["read", "write"])
    np.testing.assert_allclose(ranks.rank_matrix(cells).to_numpy(), want)
    totals = ranks.rank_totals(db, job_id=0)
    np.testing.assert_allclose(totals["bytes"].to_numpy(), want.sum(axis=1))


def test_heatmap_layer_rule_posix_not_mpiio():
    path = RELEASE / "mpi-io-test-x86_64-3.5.0.darshan"
    rep = _report(path)
    db = _load(path)
    cells = ranks.rank_heatmap(db, job_id=0)
    assert cells.evidence["layers"] == "POSIX+STDIO"
    want = _hm_expected(rep, ["POSIX", "STDIO"], ["read", "write"])
    np.testing.assert_allclose(ranks.rank_matrix(cells).to_numpy(), want)


# ------------------------------------------------------------------------ strace

_CALL = re.compile(
    r"^(\d+) (\d\d):(\d\d):(\d\d\.\d+) (?:<\.\.\. )?(read|pread64|readv|write|pwrite64|writev)\b"
)
_RET = re.compile(r"= (-?\d+)(?: [A-Z]+.*)? <(\d+\.\d+)>$")
_START = re.compile(r"^(\d+) (\d\d):(\d\d):(\d\d\.\d+) ")


def _strace_truth(path: Path):
    """Per task: bytes read and written (return values of the read/write family, resumed
    halves included) and the first start / last end of those calls [s since the first
    line], from the raw text."""
    lines = path.read_text().splitlines()
    t0 = None
    acc: dict[int, dict] = {}
    pending: dict[tuple[int, str], float] = {}
    for line in lines:
        m = _START.match(line)
        if not m:
            continue
        t = int(m[2]) * 3600 + int(m[3]) * 60 + float(m[4])
        t0 = t if t0 is None else t0
        c = _CALL.match(line)
        if not c:
            continue
        pid, call = int(c[1]), c[5]
        if line.endswith("<unfinished ...>"):
            pending[(pid, call)] = t - t0
            continue
        r = _RET.search(line)
        if not r or int(r[1]) < 0:
            continue
        start = pending.pop((pid, call), t - t0) if "resumed>" in line else t - t0
        end = start + float(r[2])  # -T: the whole call's duration
        d = acc.setdefault(pid, {"read": 0, "write": 0, "first": math.inf, "last": -math.inf})
        d["read" if call.startswith(("read", "pread")) else "write"] += int(r[1])
        d["first"] = min(d["first"], start)
        d["last"] = max(d["last"], end)
    return pd.DataFrame.from_dict(acc, orient="index").sort_index()


@pytest.mark.parametrize(
    "name", ["workers_o.strace", "classify/threads.strace"], ids=["processes", "threads"]
)
def test_strace_tasks_are_rows_with_their_bytes(name):
    """A traced process tree (4 processes) and a threaded program (5 threads): one row per
    task id, in increasing order; each row's bytes are what the raw trace returned, and
    fall between the task's first and last read/write."""
    path = DATA / "strace" / name
    truth = _strace_truth(path)
    with iochar.connect(":memory:") as db:
        db.load(path)
        cells = ranks.rank_heatmap(db, job_id=0)
        totals = ranks.rank_totals(db, job_id=0)
    ev = cells.evidence
    assert ev["rank_kind"] == "task id" and ev["rows"] == len(truth) and ev["ranks_per_bin"] == 1
    assert sorted(cells["rank_lo"].unique()) == list(truth.index)
    rows = cells.groupby("rank_lo")[["read_bytes", "write_bytes"]].sum()
    np.testing.assert_allclose(rows["read_bytes"], truth["read"].reindex(rows.index), rtol=1e-9)
    np.testing.assert_allclose(rows["write_bytes"], truth["write"].reindex(rows.index), rtol=1e-9)
    # rows are the task ids in increasing order
    order = cells.drop_duplicates("row_lo").sort_values("row_lo")["rank_lo"].tolist()
    assert order == sorted(order)
    for pid, d in truth.iterrows():
        mine = cells[cells["rank_lo"] == pid]
        assert mine["t_start_s"].min() <= d["first"] + 1e-6
        assert mine["t_end_s"].max() >= d["last"] - 1e-6
        assert mine["t_start_s"].min() >= d["first"] - ev["bin_s"] - 1e-6
        assert mine["t_end_s"].max() <= d["last"] + ev["bin_s"] + 1e-6
    t = totals.set_index("rank")
    np.testing.assert_allclose(t["bytes"], (truth["read"] + truth["write"]).reindex(t.index))
    assert totals.evidence["busiest_rank"] == int((truth["read"] + truth["write"]).idxmax())


def test_strace_slowest_task_from_call_durations():
    """The slowest task has the most time in calls (reads, writes and metadata calls), as
    Darshan's SLOWEST_RANK is defined; computed here from the trace's ``<duration>``s."""
    path = DATA / "strace" / "workers_o.strace"
    busy: dict[int, float] = {}
    meta = ("openat", "close", "lseek", "fsync", "fdatasync", "newfstatat", "stat", "fstat")
    io = ("read", "pread64", "readv", "write", "pwrite64", "writev")
    for line in path.read_text().splitlines():
        m = re.match(r"^(\d+) \S+ (?:<\.\.\. )?(\w+)", line)
        r = re.search(r"<(\d+\.\d+)>$", line)
        if m and r and m[2] in io + meta and not line.endswith("<unfinished ...>"):
            busy[int(m[1])] = busy.get(int(m[1]), 0.0) + float(r[1])
    with iochar.connect(":memory:") as db:
        db.load(path)
        totals = ranks.rank_totals(db, job_id=0)
    assert totals.evidence["slowest_rank"] == max(busy, key=busy.get)


# ------------------------------------------------------------ 100,000 ranks


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A generated N:N job of 100,000 ranks (synth_jobs), as a trace."""
    from iochar.datasets import synth_jobs

    g = synth_jobs.JobGroup(
        "wide", "wide", 3001, 100_000, 100_000, 100_000 * 8192, 100_000 * 4096,
        50.0, 0.1, 2, "N:N", request_bytes=4096, compute_s=100.0,
    )  # fmt: skip
    pop = synth_jobs.make_population([g], random_state=7)
    path = synth_jobs.write_trace(pop, tmp_path_factory.mktemp("wide") / "wide.parquet")
    db = iochar.connect(":memory:")
    db.load(path)
    return db, pop


def test_100k_ranks_bin_into_at_most_256_rows(big):
    """100,000 ranks join into bins of 500 (the smallest 1-2-5 step giving <= 256 bins);
    each bin's bytes are its 500 ranks' bytes in the population's truth."""
    db, pop = big
    job = int(pop.match(db)["job_id"].iloc[0])
    rows = pop.rows[pop.rows["job_key"] == pop.jobs["job_key"].iloc[0]]
    cells = ranks.rank_heatmap(db, job_id=job)
    ev = cells.evidence
    assert ev["rows"] == 100_000 and ev["ranks_per_bin"] == 500 and ev["rank_bins"] == 200
    assert ev["time_bins"] <= 200
    assert cells["row_lo"].max() < 100_000 and (cells["row_lo"] % 500 == 0).all()
    assert ((cells["row_hi"] - cells["row_lo"]) == 499).all()
    got = cells.groupby("row_lo")["bytes"].sum()
    want = (rows["read_bytes"] + rows["write_bytes"]).groupby(rows["rank"] // 500 * 500).sum()
    np.testing.assert_allclose(got.to_numpy(), want.reindex(got.index).to_numpy(), rtol=1e-9)
    m = ranks.rank_matrix(cells)
    assert m.shape == (200, ev["time_bins"])
    totals = ranks.rank_totals(db, job_id=job)
    assert len(totals) == 100_000
    per_rank = (rows["read_bytes"] + rows["write_bytes"]).groupby(rows["rank"]).sum()
    assert totals.evidence["busiest_rank"] == int(per_rank.idxmax())
    assert totals.evidence["busiest_bytes"] == per_rank.max()


def test_rank_bin_widths_follow_the_1_2_5_rule():
    assert ranks.nice_step(100_000, 256) == 500
    assert ranks.nice_step(2048, 256) == 10
    assert ranks.nice_step(496, 256) == 2
    assert ranks.nice_step(1469.0, 200) == 10


# ---------------------------------------------------------------- counters only


def _counters(rep, mod):
    d = rep.records[mod].to_df()
    return d["counters"].merge(d["fcounters"], on=["id", "rank"])


def test_counters_only_per_rank_records_goodost():
    """sample-goodost (48 ranks, a file each, no DXT, no HEATMAP): per-rank bytes and I/O
    time are the POSIX + STDIO counters of each rank's records, and each rank's bytes lie
    between its first write start and last write end."""
    path = DARSHAN / "lustre" / "sample-goodost.darshan"
    rep = _report(path)
    c = pd.concat([_counters(rep, "POSIX"), _counters(rep, "STDIO")], ignore_index=True)
    px = _counters(rep, "POSIX")
    c["bytes"] = c.filter(regex="_BYTES_(READ|WRITTEN)$").sum(axis=1)
    c["time"] = c.filter(regex="_F_(READ|WRITE|META)_TIME$").sum(axis=1)
    want = c[c["rank"] >= 0].groupby("rank")[["bytes", "time"]].sum()
    db = _load(path)
    cells = ranks.rank_heatmap(db, job_id=0)
    assert cells.evidence["source"] == "counters" and cells.evidence["left_out_bytes"] == 0
    totals = ranks.rank_totals(db, job_id=0).set_index("rank")
    np.testing.assert_allclose(totals["bytes"], want["bytes"].reindex(totals.index))
    np.testing.assert_allclose(totals["io_time_s"], want["time"].reindex(totals.index))
    ev = ranks.rank_totals(db, job_id=0).evidence
    assert ev["slowest_rank"] == int(want["time"].idxmax())
    assert ev["fastest_rank"] == int(want["time"].idxmin())
    got = cells.groupby("row_lo")["bytes"].sum()
    np.testing.assert_allclose(got, want["bytes"].reindex(got.index), rtol=1e-9)
    w = px[px["POSIX_BYTES_WRITTEN"] > 0].set_index("rank")
    for rank in (0, 22, 47):
        mine = cells[cells["row_lo"] == rank]
        assert mine["t_start_s"].min() <= w.loc[rank, "POSIX_F_WRITE_START_TIMESTAMP"]
        assert mine["t_end_s"].max() >= w.loc[rank, "POSIX_F_WRITE_END_TIMESTAMP"]


def test_counters_only_shared_record_fastest_slowest():
    """A log with one shared record (mpi-io-test, Darshan 3.0.0): no per-rank view over
    time (said why), and the fastest/slowest ranks are Darshan's own counters."""
    path = RELEASE / "mpi-io-test-x86_64-3.0.0.darshan"
    rep = _report(path)
    px = _counters(rep, "POSIX")
    shared = px[px["rank"] == -1].iloc[0]
    db = _load(path)
    cells = ranks.rank_heatmap(db, job_id=0)
    assert cells.empty and cells.evidence["source"] == "none"
    assert "no per-rank record over time" in cells.evidence["reason"]
    ex = ranks.rank_extremes(db, job_id=0)
    assert len(ex) == 1
    r = ex.iloc[0]
    assert r["module"] == "POSIX"
    assert r["slowest_rank"] == shared["POSIX_SLOWEST_RANK"]
    assert r["fastest_rank"] == shared["POSIX_FASTEST_RANK"]
    assert r["slowest_bytes"] == shared["POSIX_SLOWEST_RANK_BYTES"]
    assert r["slowest_time_s"] == pytest.approx(shared["POSIX_F_SLOWEST_RANK_TIME"])
    assert r["fastest_time_s"] == pytest.approx(shared["POSIX_F_FASTEST_RANK_TIME"])
    total = sum(shared[f"POSIX_F_{k}_TIME"] for k in ("READ", "WRITE", "META"))
    assert r["mean_time_s"] == pytest.approx(total / rep.metadata["job"]["nprocs"])
    assert r["time_cv"] == pytest.approx(
        math.sqrt(shared["POSIX_F_VARIANCE_RANK_TIME"]) / (total / 4)
    )
    text = narrate_ranks.rank_summary(cells, ranks.rank_totals(db, job_id=0), ex)
    assert text.startswith("No per-rank view over time")
    assert f"rank {int(shared['POSIX_SLOWEST_RANK'])}" in text


def test_counters_leave_out_shared_bytes_and_say_so():
    """imbalanced-io (496 ranks): bytes in records all ranks share cannot be placed per
    rank; the evidence counts them (PyDarshan's rank -1 POSIX + STDIO bytes)."""
    path = DARSHAN / "darshan-logs" / "imbalanced_io" / "imbalanced-io.darshan"
    rep = _report(path)
    shared = 0.0
    for mod in ("POSIX", "STDIO"):
        c = _counters(rep, mod)
        shared += c.loc[c["rank"] == -1].filter(regex="_BYTES_(READ|WRITTEN)$").to_numpy().sum()
    db = _load(path)
    cells = ranks.rank_heatmap(db, job_id=0)
    ev = cells.evidence
    assert ev["rows"] == 496 and ev["ranks_per_bin"] == 2 and ev["rank_bins"] == 248
    assert ev["left_out_bytes"] >= shared and ev["left_out_bytes"] == pytest.approx(
        shared, rel=0.01
    )
    text = narrate_ranks.rank_summary(cells, ranks.rank_totals(db, job_id=0))
    assert "bins of 2 consecutive ranks" in text and "left out" in text


# ------------------------------------------------------------------- narration, errors


def test_narration_names_the_slowest_and_fastest_rank_from_the_results():
    db = _load(DARSHAN / "ior_hdf5_example.darshan")
    cells = ranks.rank_heatmap(db, job_id=0)
    totals = ranks.rank_totals(db, job_id=0)
    text = narrate_ranks.rank_summary(cells, totals, ranks.rank_extremes(db, job_id=0))
    ev = totals.evidence
    assert f"The slowest rank, {ev['slowest_rank']}," in text
    assert f"the fastest, {ev['fastest_rank']}," in text
    assert "DXT\\_POSIX segments" in text  # escaped Markdown
    over = ev["slowest_time_s"] / ev["mean_time_s"] - 1
    assert ("a straggler" in text) == (over > narrate_ranks.STRAGGLER_SHARE)


def test_bad_parameters_and_unknown_job():
    db = iochar.connect(":memory:")
    with pytest.raises(ParameterError):
        ranks.rank_heatmap(db, job_id=0)
    db.load(DATA / "strace" / "workers_o.strace")
    with pytest.raises(ParameterError):
        ranks.rank_heatmap(db, job_id=0, source="dxt")
    with pytest.raises(ParameterError):
        ranks.rank_heatmap(db, job_id=0, bin_s=1.0, time_bins=3)
    with pytest.raises(ParameterError):
        ranks.rank_heatmap(db, job_id=0, bin_s=0)
    none = ranks.rank_heatmap(db, job_id=0, source="heatmap")
    assert none.empty and "no 'heatmap' record" in none.evidence["reason"]


def test_pick_job_prefers_the_most_detailed_record():
    """Per-operation records first (a 4-task strace capture over a 16-rank HEATMAP log and a
    48-rank counters log), then HEATMAP bins, then per-rank counters; a given job stays."""
    pytest.importorskip("darshan", reason="the darshan loader needs the darshan package")
    with iochar.connect(":memory:") as db:
        db.load(DARSHAN / "lustre" / "sample-goodost.darshan")  # job 0: counters, 48 ranks
        db.load(DAOS_LOG)  # job 1: HEATMAP, 16 ranks
        assert ranks.pick_job(db) == 1
        db.load(DATA / "strace" / "workers_o.strace")  # job 2: ops, 4 tasks
        assert ranks.pick_job(db) == 2
        assert ranks.pick_job(db, 0) == 0
    with iochar.connect(":memory:") as db:
        assert ranks.pick_job(db) is None
        db.load(DATA / "strace" / "ckpt_plain.strace")  # job 0: no -f, -y: still has ops
        db.load(RELEASE / "mpi-io-test-x86_64-3.0.0.darshan")  # job 1: a shared record only
        assert ranks.pick_job(db) == 0
    with iochar.connect(":memory:") as db:
        db.load(DARSHAN / "darshan-logs" / "empty_log" / "empty_log.darshan")  # job 0: no I/O
        db.load(RELEASE / "mpi-io-test-x86_64-3.0.0.darshan")  # job 1
        assert ranks.pick_job(db) == 1  # the shared record's fastest/slowest ranks
