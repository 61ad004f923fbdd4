"""Insight rules built on iochar's analyses (issue 19, item 1): insights.rules_system.

Checkpoint rules run on real strace captures of programs that checkpoint (data/strace:
ckpt_app saves ckpt.NNN every 2 s; data/strace/classify: state.ckpt rewritten in place)
and on generated traces (iochar.datasets.synth); the optimum interval is Young's (1974)
sqrt(2 C M) and Daly's (2006, Eq. 37) higher-order form, written out here again. The
variance rule runs on real Darshan logs written by libdarshan-util for a population
whose slowest-rank I/O times are known (iochar.datasets.synth_jobs, Carns et al. 2011
Table IV). FSU and busy-period rules match the dated strace capture against size
histograms and throughput counters generated around its run, because no shipped
capture of storage-side counters overlaps a shipped job.
"""

from __future__ import annotations

import io
import math
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import iochar
from iochar.analyze import insights
from iochar.analyze.insights import RULES, Rule
from iochar.analyze.insights import rules_system as rs

DATA = Path(__file__).resolve().parents[2] / "data"
CKPT_TTT = DATA / "strace" / "ckpt_ttt.strace"
CKPT_TT = DATA / "strace" / "ckpt_tt.strace"
RUN = DATA / "strace" / "classify" / "run.strace"
RESTART = DATA / "strace" / "classify" / "restart.strace"

# Uselton & Wright 2013, Table I: (latency [s], time per byte [s/byte])
TABLE_I = {"write": (1.04e-3, 1.73e-9), "read": (8.02e-4, 1.23e-9)}


def young(c, m):
    """Young 1974: T_opt = sqrt(2 C T_f)."""
    return math.sqrt(2 * c * m)


def daly(d, m):
    """Daly 2006, Eq. 37."""
    if d >= 2 * m:
        return m
    return math.sqrt(2 * d * m) * (1 + (d / (2 * m)) ** 0.5 / 3 + (d / (2 * m)) / 9) - d


def _one(found, job, code):
    rows = found[(found["job_id"] == job) & (found["code"] == code)]
    assert len(rows) <= 1
    return None if rows.empty else rows.iloc[0]


def _not_checked(found, job, code):
    return {
        d["needs"] for d in found.evidence["not_checked"] if (d["job_id"], d["code"]) == (job, code)
    }


def _saves(db, job, pattern):
    """The calls on a checkpoint file that are not reads (open, write, fsync, close):
    file, start, end and whether it wrote, in time order."""
    rows = db.sql(
        "SELECT o.file_id, o.t_start, o.t_end, o.op = 'write' AND o.size > 0 "
        "FROM ops o JOIN files f USING (job_id, file_id) "
        "WHERE o.job_id = $j AND regexp_matches(f.path, $p) AND o.op <> 'read' "
        "AND o.error IS NULL ORDER BY o.t_start",
        {"j": job, "p": pattern},
    ).fetchall()
    return rows


def _merge(spans, gap):
    """Intervals (start, end[, wrote]) joined when at most ``gap`` apart: [start, end, wrote]."""
    out = []
    for a, b, *w in sorted(spans):
        wrote = bool(w[0]) if w else True
        if out and a <= out[-1][1] + gap:
            out[-1][1] = max(out[-1][1], b)
            out[-1][2] = out[-1][2] or wrote
        else:
            out.append([a, b, wrote])
    return out


def _cost_and_interval(saves):
    c = sum(s[1] - s[0] for s in saves) / len(saves)
    tau = sum(saves[i + 1][0] - saves[i][1] for i in range(len(saves) - 1)) / (len(saves) - 1)
    return c, tau


# --------------------------------------------------------------------------- formulas


def test_young_and_daly_formulas():
    assert rs.young_interval(50.0, 3600.0) == pytest.approx(young(50.0, 3600.0)) == 600.0
    for c, m in [(1.6e-3, 86400.0), (300.0, 86400.0), (50.0, 3600.0)]:
        assert rs.daly_interval(c, m) == pytest.approx(daly(c, m), rel=1e-12)
    # Daly: for a small cost the higher-order terms vanish and Young's optimum remains
    assert rs.daly_interval(1e-3, 86400.0) == pytest.approx(young(1e-3, 86400.0), rel=1e-3)
    assert rs.daly_interval(500.0, 200.0) == 200.0  # d >= 2M: checkpoint every M


def test_default_rules_hold_the_system_rules():
    assert set(rs.RULES) <= set(RULES)
    assert {r.topic for r in rs.RULES} == {
        "checkpoint-interval", "checkpoint-overhead", "variance", "fsu-suboptimal",
        "cycles-collide",
    }  # fmt: skip
    for r in rs.RULES:
        assert r.compute is not None and r.topic in insights.TOPICS
        assert all(p.source for p in r.params)


# --------------------------------------------------------------------------- checkpoints


@pytest.fixture(scope="module")
def ckpt_db():
    db = iochar.connect(":memory:")
    for p in (CKPT_TTT, CKPT_TT, RUN, RESTART):
        db.load(p)
    yield db
    db.close()


@pytest.fixture(scope="module")
def ckpt_jobs(ckpt_db):
    return dict(
        ckpt_db.sql(
            "SELECT regexp_extract(s.uri, '[^/]*$'), j.job_id "
            "FROM jobs j JOIN sources s USING (source_id)"
        ).fetchall()
    )


def test_checkpoint_interval_on_real_strace(ckpt_db, ckpt_jobs):
    """ckpt_app saves ckpt.000..004 every 2 s, each in ~1.6 ms (open, 3 writes, fsync,
    close; data/strace/SOURCE.md): far more often than the optimum for a one-day MTBF."""
    job = ckpt_jobs["ckpt_ttt.strace"]
    calls = _saves(ckpt_db, job, r"/ckpt\.[0-9]+$")
    by_file = {}
    for f, a, b, _ in calls:
        lo, hi = by_file.get(f, (a, b))
        by_file[f] = (min(lo, a), max(hi, b))
    saves = sorted(by_file.values())
    assert len(saves) == 5  # SOURCE.md: 5 checkpoints
    c, tau = _cost_and_interval(saves)
    assert 1.9 < tau < 2.2 and c < 0.01
    found = insights.run(ckpt_db, job_id=job, rules=rs.RULES)
    f = _one(found, job, "CKPT-INTERVAL-1")
    ev = f.evidence
    assert ev["saves"] == 5
    assert ev["ckpt_cost_s"] == pytest.approx(c, rel=1e-9)
    assert ev["interval_s"] == pytest.approx(tau, rel=1e-9)
    assert ev["mtbf_s"] == 86400.0
    assert ev["young_opt_s"] == pytest.approx(young(c, 86400.0))
    assert ev["daly_opt_s"] == pytest.approx(daly(c, 86400.0))
    ratio = tau / daly(c, 86400.0)
    assert ev["interval_ratio"] == pytest.approx(ratio) and 1 / ratio > 4
    assert f.severity == "high"  # off by more than the factor 4 of interval_factor_high
    assert "FROM ops" in f.sql
    # the MTBF for which the measured interval is Young's optimum: tau^2 / (2C)
    m = tau**2 / (2 * c)
    again = insights.run(ckpt_db, job_id=job, rules=rs.RULES, params={"mtbf_s": m})
    assert _one(again, job, "CKPT-INTERVAL-1") is None
    # ... which Daly's optimum puts within a factor 2 (checked, no finding)
    assert 0.5 < tau / daly(c, m) < 2
    # saving takes 8 ms of a 12 s run: no overhead finding, but checked
    assert _one(found, job, "CKPT-OVERHEAD-1") is None
    assert not _not_checked(found, job, "CKPT-OVERHEAD-1")


def test_checkpoint_rewritten_in_place_counts_each_save(ckpt_db, ckpt_jobs):
    """state.ckpt rewritten whole at iterations 3, 6, 9 (run) and 3, 6 after a read-back
    (restart): one file, several saves; the restart's read is not a save."""
    for name, n in (("run.strace", 3), ("restart.strace", 2)):
        job = ckpt_jobs[name]
        calls = _saves(ckpt_db, job, r"/state\.ckpt$")
        runtime = ckpt_db.sql("SELECT runtime_s FROM jobs WHERE job_id = $j", {"j": job}).fetchall()
        gap = max(0.01 * runtime[0][0], 1e-3)
        merged = _merge([(a, b, w) for _, a, b, w in calls], gap)
        saves = [m for m in merged if m[2]]  # a save writes
        assert len(saves) == n and len(merged) == n + (name == "restart.strace")
        c, tau = _cost_and_interval(saves)
        b = rs.checkpoint_bursts(ckpt_db, job_id=job)
        assert len(b) == n
        assert b["duration_s"].mean() == pytest.approx(c)
        out = insights.run(ckpt_db, job_id=job, rules=[rs.CHECKPOINT_INTERVAL])
        ev = _one(out, job, "CKPT-INTERVAL-1").evidence
        assert ev["interval_s"] == pytest.approx(tau) and ev["saves"] == n
        assert ev["daly_opt_s"] == pytest.approx(daly(c, 86400.0))


def test_checkpoint_saves_match_the_classifier_on_jittered_captures():
    """data/strace-jitter: state.dat rewritten every iteration (40 and 60 iterations,
    SOURCE.md); each save is one of classify's write bursts, same gap."""
    from iochar.analyze.classify import classify

    db = iochar.connect(":memory:")
    for n in (15, 25):
        db.load(DATA / "strace-jitter" / f"jitter{n}.strace")
    labels = classify(db)
    ck = labels[labels["class"] == "checkpoint"].set_index("job_id")
    b = rs.checkpoint_bursts(db)
    for job, g in b.groupby("job_id"):
        assert len(g) == ck.loc[job, "write_bursts"] in (40, 60)
        starts = g["start_s"].to_numpy()
        # classify times the writes, a save starts at its lseek: within a millisecond
        assert np.diff(starts).mean() == pytest.approx(ck.loc[job, "burst_interval_s"], abs=1e-3)


def test_checkpoint_rules_see_inputs_loaded_between_runs():
    """The two checkpoint rules share one computation of the saves, never across a load."""
    db = iochar.connect(":memory:")
    db.load(CKPT_TTT)
    first = insights.run(db, rules=[rs.CHECKPOINT_INTERVAL, rs.CHECKPOINT_OVERHEAD])
    assert first.evidence["checked"] == 2
    db.load(RUN)
    again = insights.run(db, rules=[rs.CHECKPOINT_INTERVAL, rs.CHECKPOINT_OVERHEAD])
    assert again.evidence["checked"] == 4


def test_no_checkpoint_is_not_checked(ckpt_db, ckpt_jobs):
    db = iochar.connect(":memory:")
    db.load(DATA / "strace" / "workers_o.strace")  # workers write once each: no checkpoint
    out = insights.run(db, rules=[rs.CHECKPOINT_INTERVAL, rs.CHECKPOINT_OVERHEAD])
    (job,) = [r[0] for r in db.sql("SELECT job_id FROM jobs").fetchall()]
    assert out.empty
    assert _not_checked(out, job, "CKPT-INTERVAL-1") == {rs.CHECKPOINT_INTERVAL.needs}
    assert _not_checked(out, job, "CKPT-OVERHEAD-1") == {rs.CHECKPOINT_OVERHEAD.needs}


def _synth_db(workload, seed=0):
    from iochar.datasets.synth import make_workload

    ops, truth = make_workload(workload, random_state=seed)
    buf = io.BytesIO()
    pq.write_table(ops, buf)
    db = iochar.connect(":memory:")
    db.load(buf.getvalue(), kind="trace-parquet")
    return db, ops.to_pandas(), truth


def test_checkpoint_overhead_on_generated_trace():
    """A generated program saving its state every iteration: each save takes a tenth of
    the iteration (iochar.datasets.synth: writes in [0.85, 0.95] of it)."""
    from iochar.datasets.synth import Workload

    w = Workload(runtime_s=100.0, iterations=20, ckpt_every=1, ckpt_bytes=2_000_000,
                 staging_bytes=0, jitter=0.0)  # fmt: skip
    db, ops, truth = _synth_db(w)
    ck = set(truth.loc[truth["class"] == "checkpoint", "path"])
    writes = ops[ops["path"].isin(ck) & (ops["op"] != "read")]
    spans = writes.groupby("path").agg(a=("t_start", "min"), b=("t_end", "max"))
    spent = float((spans["b"] - spans["a"]).sum())
    runtime = db.sql("SELECT runtime_s FROM jobs").fetchall()[0][0]
    share = spent / runtime
    assert 0.05 < share < 0.1  # 20 saves of ~0.43 s in ~100 s
    (job,) = [r[0] for r in db.sql("SELECT job_id FROM jobs").fetchall()]
    out = insights.run(db, rules=[rs.CHECKPOINT_OVERHEAD])
    assert _one(out, job, "CKPT-OVERHEAD-1") is None  # under the default 10%
    out = insights.run(db, rules=[rs.CHECKPOINT_OVERHEAD], params={"ckpt_share": 0.05})
    f = _one(out, job, "CKPT-OVERHEAD-1")
    assert f.severity == "warn" and f.evidence["saves"] == 20
    assert f.evidence["ckpt_share"] == pytest.approx(share)
    assert f.evidence["ckpt_bytes"] == 20 * 2_000_000
    # the interval: saves every iteration (4.275 s), so tau = iteration - cost
    out = insights.run(db, rules=[rs.CHECKPOINT_INTERVAL])
    ev = _one(out, job, "CKPT-INTERVAL-1").evidence
    c = spent / 20
    assert ev["ckpt_cost_s"] == pytest.approx(c)
    assert ev["interval_s"] == pytest.approx(0.9 * 100.0 / 20 - c, rel=0.01)
    assert ev["daly_opt_s"] == pytest.approx(daly(c, 86400.0))


def test_checkpoint_series_from_darshan_counters_only(tmp_path):
    """A real Darshan log (libdarshan-util's writer, iochar.datasets.synth_jobs) without
    DXT: five files ckpt.000001..5, each written once, 200 s apart. Each file's
    POSIX_F_WRITE_START/END_TIMESTAMP is one save."""
    pytest.importorskip("darshan", reason="libdarshan-util (darshan package) writes the log")
    from iochar.datasets.synth_jobs import JobGroup, make_population, write_darshan_logs

    g = JobGroup("ck", app="ckpt", uid=1, nprocs=1, files=6, read_bytes=1 << 20,
                 write_bytes=5 * (4 << 20), mean_io_s=10.0, cv=0.1, samples=2, write_files=5,
                 compute_s=1000.0, procs_per_node=1)  # fmt: skip
    pop = make_population([g], random_state=0)
    rows = pop.rows.copy()
    key = pop.jobs["job_key"].iloc[0]
    idx = rows.index[(rows["job_key"] == key) & (rows["write_bytes"] > 0)]
    assert len(idx) == 5
    for k, i in enumerate(idx):  # the written files become a checkpoint every 200 s
        t = 100.0 + 200.0 * k
        rows.loc[i, ["t_open", "t_write0", "t_write1"]] = [
            t - rows.loc[i, "meta_time"],
            t,
            t + rows.loc[i, "write_time"],
        ]
        rows.loc[i, "path"] = rows.loc[i, "path"].replace("/out.", "/ckpt.")
    paths = write_darshan_logs(replace(pop, rows=rows), tmp_path)
    db = iochar.connect(":memory:")
    db.load(paths[0])
    saves = [(rows.loc[i, "t_write0"], rows.loc[i, "t_write1"]) for i in idx]
    c, tau = _cost_and_interval(saves)
    out = insights.run(db, rules=[rs.CHECKPOINT_INTERVAL, rs.CHECKPOINT_OVERHEAD])
    (job,) = [r[0] for r in db.sql("SELECT job_id FROM jobs").fetchall()]
    f = _one(out, job, "CKPT-INTERVAL-1")
    ev = f.evidence
    assert ev["saves"] == 5 and "file_stats" in f.sql
    assert ev["ckpt_cost_s"] == pytest.approx(c, rel=1e-6)
    assert ev["interval_s"] == pytest.approx(tau, rel=1e-6)
    assert ev["daly_opt_s"] == pytest.approx(daly(c, 86400.0), rel=1e-6)
    k = daly(c, 86400.0) / tau  # saves 2.6 times too often for a one-day MTBF
    assert 2 < k < 4 and f.severity == "warn"
    runtime = db.sql("SELECT runtime_s FROM jobs").fetchall()[0][0]
    assert _one(out, job, "CKPT-OVERHEAD-1") is None  # 8 s of saving in ~1000 s
    assert not _not_checked(out, job, "CKPT-OVERHEAD-1") and 5 * c / runtime < 0.1


# --------------------------------------------------------------------------- variance


@pytest.fixture(scope="module")
def population_db(tmp_path_factory):
    pytest.importorskip("darshan", reason="libdarshan-util (darshan package) writes the logs")
    from iochar.datasets.synth_jobs import JobGroup, make_population, write_darshan_logs

    groups = [
        # NuclearPhysics B's shape (Table IV): rank-0 I/O, CV 262%
        JobGroup("heavy", app="nuc", uid=2002, nprocs=8, files=4, read_bytes=64 << 20,
                 write_bytes=0, mean_io_s=24.3, cv=2.622, samples=12, pattern="rank0",
                 floor=0.78, compute_s=100.0),
        # Climate A's shape: CV 7.9%
        JobGroup("steady", app="clim", uid=2004, nprocs=8, files=8, read_bytes=32 << 20,
                 write_bytes=8 << 20, mean_io_s=72.0, cv=0.079, samples=8, floor=0.92,
                 compute_s=100.0),
        # two runs only: no group to compare with
        JobGroup("pair", app="pair", uid=2005, nprocs=4, files=4, read_bytes=1 << 20,
                 write_bytes=1 << 20, mean_io_s=5.0, cv=0.5, samples=2, compute_s=10.0),
    ]  # fmt: skip
    pop = make_population(groups, random_state=7)
    db = iochar.connect(":memory:")
    for p in write_darshan_logs(pop, tmp_path_factory.mktemp("insights_variance")):
        db.load(p)
    yield db, pop
    db.close()


def test_variance_by_table_iv_groups(population_db):
    db, pop = population_db
    truth = pop.match(db)
    found = insights.run(db, rules=[rs.VARIANCE])
    expected = {}
    for _, g in truth.groupby("group"):
        t = g.set_index("job_id")["io_time_s"]
        for job, me in t.items():
            others = t.drop(job).to_numpy()
            if len(others) < 2:
                continue
            slow = me / np.median(others)
            z = (me - others.mean()) / others.std(ddof=1)
            f = _one(found, job, "VARIANCE-1")
            if f is not None:
                assert f.evidence["slowdown"] == pytest.approx(slow, rel=1e-6)
                assert f.evidence["z"] == pytest.approx(z, rel=1e-6)
                assert f.evidence["slowest_io_s"] == pytest.approx(me, rel=1e-6)
                assert "module_counters" in f.sql or "file_stats" in f.sql  # job_metrics
            if slow > 2.0:  # Carns: 'at least doubled'
                expected[job] = "info" if z <= 2 else ("high" if slow > 10 else "warn")
    got = dict(zip(found["job_id"], found["severity"], strict=True))
    assert got == expected
    heavy = truth.loc[truth["group"] == "heavy", "job_id"]
    steady = truth.loc[truth["group"] == "steady", "job_id"]
    assert any(got.get(j) == "high" for j in heavy)  # the heavy tail's slowest run
    assert not any(j in got for j in steady)  # CV 7.9%: no run twice the median
    # every run of the two groups was checked; the pair was not
    for job in truth.loc[truth["group"] == "pair", "job_id"]:
        assert "at least 3 runs" in next(iter(_not_checked(found, job, "VARIANCE-1")))
    assert not _not_checked(found, int(heavy.iloc[0]), "VARIANCE-1")
    # synthetic jobs of 2010: no system data overlaps them
    out = insights.run(db, job_id=int(heavy.iloc[0]), rules=[rs.FSU_SUBOPTIMAL])
    assert _not_checked(out, int(heavy.iloc[0]), "FSU-SUBOPTIMAL-1")


# --------------------------------------------------------------------------- FSU


def _ttt_db():
    db = iochar.connect(":memory:")
    db.load(CKPT_TTT)
    job, t0, t1 = db.sql("SELECT job_id, start_ts, end_ts FROM jobs").fetchall()[0]
    return db, job, pd.Timestamp(t0), pd.Timestamp(t1)


def _insert(db, table, frame):
    db.con.register("_rows", frame)
    try:
        cols = ", ".join(frame.columns)
        db.con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _rows")
    finally:
        db.con.unregister("_rows")


def _size_hist(ends, small, big):
    """5-s intervals ending at ``ends``: ``small`` 4 KiB reads and ``big`` 1 MiB writes each."""
    rows = []
    for ts, n4, n1 in zip(ends, small, big, strict=True):
        for op in ("read", "write"):
            for size in (4096, 1 << 20):
                n = (n4 if size == 4096 else 0) if op == "read" else (n1 if size > 4096 else 0)
                rows.append(("OST0000", ts, 5.0, "disk I/O size", op, size, n, "ok"))
    return pd.DataFrame(
        rows,
        columns=["target", "ts", "interval_s", "section", "op", "size_bytes", "count", "quality"],
    )


def _fsu_pct(n4, n1):
    """Eq. 7 over one 5-s interval with Table I's coefficients [%]."""
    (r0, r1), (w0, w1) = TABLE_I["read"], TABLE_I["write"]
    return 100 / 5.0 * (n4 * (r0 + r1 * 4096) + n1 * (w0 + w1 * (1 << 20)))


@pytest.mark.parametrize(
    ("inside", "outside", "severity"),
    [
        ((2000, 250), (0, 100), "high"),  # busy with 4 KiB I/Os while the job ran
        ((0, 100), (400, 50), None),  # the small I/Os came before and after it
        ((40, 5), (0, 100), "info"),  # sub-optimal, but the targets were not busy
    ],
)
def test_fsu_suboptimal_in_the_jobs_window(inside, outside, severity):
    db, job, t0, t1 = _ttt_db()
    base = t0.floor("5s")
    ends = [base + pd.Timedelta(seconds=5 * k) for k in range(-2, 7)]
    within = [(e > t0) and (e - pd.Timedelta(seconds=5) < t1) for e in ends]
    small = [inside[0] if w else outside[0] for w in within]
    big = [inside[1] if w else outside[1] for w in within]
    _insert(db, "size_hist", _size_hist(ends, small, big))
    out = insights.run(db, rules=[rs.FSU_SUBOPTIMAL])
    f = _one(out, job, "FSU-SUBOPTIMAL-1")
    n = sum(within)
    assert n == 3  # a 12 s run touches three 5-s intervals
    share = inside[0] / (inside[0] + inside[1])
    if severity is None:
        assert f is None and not _not_checked(out, job, "FSU-SUBOPTIMAL-1")
        return
    assert f.severity == severity
    ev = f.evidence
    assert ev["intervals"] == n and ev["targets"] == 1
    assert ev["suboptimal_ios"] == n * inside[0] and ev["ios"] == n * sum(inside)
    assert ev["suboptimal_share"] == pytest.approx(share)
    assert ev["fsu_pct"] == pytest.approx(_fsu_pct(*inside))
    assert "size_hist" in f.sql


# --------------------------------------------------------------------------- cycles-collide


def _job_bursts(db, job, gap_share=0.01):
    """The job's reads and writes merged into bursts [s since its start]."""
    rows = db.sql(
        "SELECT t_start, t_end FROM ops WHERE job_id = $j AND op IN ('read', 'write') "
        "AND size IS NOT NULL AND error IS NULL",
        {"j": job},
    ).fetchall()
    rt = db.sql("SELECT runtime_s FROM jobs WHERE job_id = $j", {"j": job}).fetchall()[0][0]
    return [(a, b) for a, b, _ in _merge(rows, max(gap_share * rt, 1e-3))]


def _counters(t0, busy):
    """1-s read/write throughput samples from t0 - 10 s to t0 + 20 s: 100 MB/s in the
    seconds whose end ``busy`` accepts, 1 MB/s otherwise."""
    base = t0.floor("s")
    rows = []
    for k in range(-10, 21):
        ts = base + pd.Timedelta(seconds=k)
        v = 100e6 if busy(ts) else 1e6
        rows += [("vda", m, ts, 1.0, v / 2, "ok") for m in ("read_bytes", "write_bytes")]
    return pd.DataFrame(rows, columns=["target", "metric", "ts", "interval_s", "value", "quality"])


@pytest.mark.parametrize("case", ["during", "outside", "first-half"])
def test_cycles_collide(case):
    db, job, t0, t1 = _ttt_db()
    mid = t0 + (t1 - t0) / 2
    one = pd.Timedelta(seconds=1)
    busy = {  # by the end ts of a 1-s sample
        "during": lambda ts: ts > t0 and ts - one < t1,
        "outside": lambda ts: ts <= t0 or ts - one >= t1,
        "first-half": lambda ts: ts <= mid.ceil("s"),
    }[case]
    frame = _counters(t0, busy)
    _insert(db, "counters", frame)
    # busy samples as absolute intervals, and the job's bursts
    spans = [(ts - pd.Timedelta(seconds=1), ts) for ts in frame["ts"].unique() if busy(ts)]
    bursts = _job_bursts(db, job)
    inside = 0.0
    for a, b in bursts:
        a, b = t0 + pd.Timedelta(seconds=a), t0 + pd.Timedelta(seconds=b)
        for p, q in spans:
            inside += max((min(b, q) - max(a, p)).total_seconds(), 0.0)
    total = sum(b - a for a, b in bursts)
    share = inside / total
    out = insights.run(db, rules=[rs.CYCLES_COLLIDE])
    f = _one(out, job, "CYCLES-COLLIDE-1")
    if share <= 0.5:
        assert f is None and not _not_checked(out, job, "CYCLES-COLLIDE-1")
    else:
        assert f.severity == ("high" if share > 0.9 else "warn")
        assert f.evidence["collide_share"] == pytest.approx(share, rel=1e-6)
        assert f.evidence["io_bursts"] == len(bursts)
        assert f.evidence["io_burst_s"] == pytest.approx(total)
    expect = {"during": 1.0, "outside": 0.0}.get(case)
    if expect is not None:
        assert share == pytest.approx(expect)
    else:
        assert 0.2 < share < 0.8


def _diskstats_busy(path, disk="vda", share=0.33):
    """Busy intervals of a /proc/diskstats capture, read raw: per pair of samples, the
    rate of sectors read + written (512 bytes each, Documentation/admin-guide/
    iostats.rst: fields 3 and 7 after the name) over their time; busy at or above
    ``share`` of the highest rate (Carns et al. 2011 section 4: 33% of peak)."""
    t, total = [], []
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) == 1:
            t.append(pd.Timestamp(float(f[0]), unit="s"))
        elif f[2] == disk:
            total.append((int(f[5]) + int(f[9])) * 512)
    rate = [(total[i] - total[i - 1]) / (t[i] - t[i - 1]).total_seconds() for i in range(1, len(t))]
    peak = max(rate)
    return [(t[i], t[i + 1]) for i, r in enumerate(rate) if r >= share * peak]


@pytest.mark.parametrize(("name", "severity"), [("collide", "high"), ("apart", None)])
def test_cycles_collide_on_real_capture(name, severity):
    """data/insights: ckpt_app traced while /proc/diskstats was sampled and dd loaded the
    disk through the run (collide) or before it (apart)."""
    db = iochar.connect(":memory:")
    db.load(DATA / "insights" / f"{name}.strace")
    db.load(DATA / "insights" / f"{name}.diskstats")
    job, t0 = db.sql("SELECT job_id, start_ts FROM jobs").fetchall()[0]
    t0 = pd.Timestamp(t0)
    busy = _diskstats_busy(DATA / "insights" / f"{name}.diskstats")
    bursts = _job_bursts(db, job)
    inside = 0.0
    for a, b in bursts:
        a, b = t0 + pd.Timedelta(seconds=a), t0 + pd.Timedelta(seconds=b)
        for p, q in busy:
            inside += max((min(b, q) - max(a, p)).total_seconds(), 0.0)
    share = inside / sum(b - a for a, b in bursts)
    out = insights.run(db, rules=[rs.CYCLES_COLLIDE])
    f = _one(out, job, "CYCLES-COLLIDE-1")
    assert not _not_checked(out, job, "CYCLES-COLLIDE-1")
    if severity is None:
        assert share == 0.0 and f is None
        return
    assert share > 0.9 and f.severity == severity
    assert f.evidence["collide_share"] == pytest.approx(share, rel=1e-6)
    # 40 iterations' scratch I/O (the first with the input read, each checkpoint with the
    # next iteration's I/O, less than 1% of the run apart), then the output
    assert f.evidence["io_bursts"] == len(bursts) == 41


def test_undated_job_and_no_counters_are_not_checked(ckpt_db, ckpt_jobs):
    out = insights.run(ckpt_db, rules=[rs.FSU_SUBOPTIMAL, rs.CYCLES_COLLIDE])
    assert out.empty
    undated = ckpt_jobs["ckpt_tt.strace"]  # -tt: times of day without a date
    dated = ckpt_jobs["ckpt_ttt.strace"]
    for code in ("FSU-SUBOPTIMAL-1", "CYCLES-COLLIDE-1"):
        assert any("start and end date" in n for n in _not_checked(out, undated, code))
    assert any("size_hist" in n for n in _not_checked(out, dated, "FSU-SUBOPTIMAL-1"))
    assert any("counters" in n for n in _not_checked(out, dated, "CYCLES-COLLIDE-1"))


def test_compute_rule_contract(ckpt_db, ckpt_jobs):
    """A user's compute rule: rows graded as SQL rows, the analysis' SQL kept, per-job
    needs reported, rows of other jobs dropped when one job is asked for."""
    from iochar.result import Table

    job = ckpt_jobs["ckpt_ttt.strace"]

    def compute(store, job_id, values):
        df = store.sql(
            "SELECT job_id, count(*)::DOUBLE AS n FROM ops GROUP BY job_id ORDER BY job_id"
        ).df()
        return Table(df, sql="SELECT job_id, count(*) FROM ops", evidence={"needs": {}})

    rule = Rule(
        code="MY-OPS-1", topic="small-io", title="many ops", sql="", compute=compute,
        measure="n", warn_at="n_max", params=(insights.Param("n_max", 100, "count", "test"),),
        recommendation="r", reference="ref", needs="ops",
    )  # fmt: skip
    n = ckpt_db.sql("SELECT count(*) FROM ops WHERE job_id = $j", {"j": job}).fetchall()[0][0]
    out = insights.run(ckpt_db, job_id=job, rules=[rule])
    assert list(out["job_id"]) == [job] and out.iloc[0].evidence == {"n": n}
    assert out.iloc[0].sql == "SELECT job_id, count(*) FROM ops"
    out = insights.run(ckpt_db, job_id=job, rules=[rule], params={"n_max": n})
    assert out.empty and out.evidence["checked"] == 1


def test_system_rules_never_crash_on_shipped_logs():
    db = iochar.connect(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in sorted((DATA / "darshan").rglob("*.darshan")):
            db.load(p)
    out = insights.run(db, rules=rs.RULES)
    jobs = db.sql("SELECT count(*) FROM jobs").fetchall()[0][0]
    assert out.evidence["checked"] + len(out.evidence["not_checked"]) == jobs * len(rs.RULES)
    for ev in out["evidence"]:
        assert all(v is None or isinstance(v, (int, float)) for v in ev.values())


def test_replace_keeps_compute():
    r = replace(rs.VARIANCE, code="VARIANCE-2")
    assert r.compute is rs.VARIANCE.compute
