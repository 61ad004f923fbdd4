"""Issue 21: capacity per I/O path level, used % per phase (Méndez et al.), scaling with
Student-t intervals and % of peak, interference (Kwan & Reed).

Real inputs: fio JSON (data/fio), IOR text (data/ior), fio interference pairs
(data/fio-pairs), strace and Darshan captures; fio is run here (tiny) when installed.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import iochar
from iochar.analyze import capacity, efficiency, interference, scaling
from iochar.analyze.insights import rules_efficiency
from iochar.errors import InputError
from iochar.load.capacity import capacity_document, capacity_rows
from tests.conftest import DATA_DIR

requires_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
FIO_MULTI = DATA_DIR / "fio" / "fio-3.33-multijob-vda-ext4.json"
IOR_FSX = DATA_DIR / "ior" / "ior-4.0.0rc2-fsx-lustre-t64m.txt"
PAIRS = DATA_DIR / "fio-pairs" / "fio-3.33-pairs-vda-ext4.json"


# ------------------------------------------------------------------ capacity from real output
def test_fio_groups_give_nprocs_and_aggregate_rate():
    """numjobs=2 without group_reporting: two job entries of one group = one 2-process point."""
    raw = json.loads(FIO_MULTI.read_text())
    pair = [j for j in raw["jobs"] if j["jobname"] == "pair-64k"]
    assert len(pair) == 2
    want = sum(j["write"]["io_bytes"] for j in pair) / (
        max(j["write"]["runtime"] for j in pair) / 1000
    )
    rows = capacity_rows(
        capacity_document([{"kind": "fio-json", "name": "m", "text": FIO_MULTI.read_text()}])
    )
    got = rows[rows["job"] == "pair-64k"]
    assert len(got) == 1 and int(got["nprocs"].iloc[0]) == 2
    assert got["rate"].iloc[0] == pytest.approx(want, rel=1e-12)
    assert set(rows["level"]) == {"device"}  # direct=1 in the job file
    assert set(rows["access"]) == {"random"}  # randrw / randwrite / randread


def test_ior_capacity_equals_ior_summary():
    """IOR's own 'Summary of all tests': Mean(MiB) 12315.56 write, 269.20 read over 5 iters."""
    db = iochar.connect(":memory:")
    res = capacity.store_capacity(db, IOR_FSX)
    assert res.rows == {"capacity": 10} or sum(res.rows.values()) == 10
    cap = capacity.capacity(db).set_index("op")
    assert set(cap["level"]) == {"mount"}  # IOR with -a=POSIX: the parallel file system
    assert int(cap.loc["write", "nprocs"]) == 16 and cap.loc["write", "access"] == "random"
    # rates from the Results rows' total(s), printed to 6 digits: within 1e-4 of IOR's own
    assert cap.loc["write", "rate"] / 2**20 == pytest.approx(12315.56, rel=1e-4)
    assert cap.loc["read", "rate"] / 2**20 == pytest.approx(269.20, rel=1e-4)
    # IOR prints a population standard deviation (StdDev 5780.40, 78.70)
    n = 5
    pop = cap["rate_sd"] * math.sqrt((n - 1) / n) / 2**20
    assert pop["write"] == pytest.approx(5780.40, rel=1e-3)
    assert pop["read"] == pytest.approx(78.70, rel=1e-3)
    assert capacity.store_capacity(db, IOR_FSX).duplicate


def test_level_named_for_raw_output_and_bad_input_changes_nothing(tmp_path):
    db = iochar.connect(":memory:")
    capacity.store_capacity(db, IOR_FSX, level="library", target="/shared")
    assert db.sql("SELECT DISTINCT level, target FROM capacity").fetchall() == [
        ("library", "/shared")
    ]
    bad = tmp_path / "bad.txt"
    text = IOR_FSX.read_text().replace("755.68 ", "x ")
    bad.write_text(text)
    before = db.sql("SELECT count(*) FROM capacity").fetchall()
    with pytest.raises(InputError):
        capacity.store_capacity(db, bad)
    assert db.sql("SELECT count(*) FROM capacity").fetchall() == before
    assert db.sql("SELECT count(*) FROM sources").fetchall() == [(1,)]


# ------------------------------------------------------------------ intervals and peak
@pytest.mark.parametrize("x", [[1.0, 2.0, 4.0], [10.0, 10.5, 9.5, 11.0, 9.0], [3.0, 3.0]])
def test_t_interval_against_scipy(x):
    m, sd, lo, hi = capacity.t_interval(x)
    assert m == pytest.approx(np.mean(x))
    assert sd == pytest.approx(np.std(x, ddof=1))
    if sd > 0:
        want = stats.t.interval(0.95, len(x) - 1, loc=np.mean(x), scale=stats.sem(x))
        assert (lo, hi) == pytest.approx(want)
    else:  # no spread: the interval is the mean
        assert lo == hi == m
    assert math.isnan(capacity.t_interval([1.0])[1])


def test_theoretical_peak_of_kwan_reed():
    """Section 4.1: 1.8 MB/s per disk x 56 disks = 100.8 MB/s; 32 MB/s is ~30 % of it."""
    peak = scaling.theoretical_peak(56, 1.8e6)
    assert peak == pytest.approx(100.8e6)
    runs = pd.DataFrame(
        {
            "level": "mount",
            "api": "POSIX",
            "op": "write",
            "access": "sequential",
            "size_bytes": 1 << 20,
            "nprocs": 64,
            "rep": [0, 1, 2],
            "rate": [31e6, 32e6, 33e6],
        }
    )
    s = scaling.sweep(runs, peak=peak)
    assert s["pct_peak"].iloc[0] == pytest.approx(100 * 32 / 100.8)
    lo, hi = stats.t.interval(0.95, 2, loc=32e6, scale=stats.sem([31e6, 32e6, 33e6]))
    assert s["pct_lo"].iloc[0] == pytest.approx(100 * lo / peak)
    assert s["pct_hi"].iloc[0] == pytest.approx(100 * hi / peak)
    assert scaling.sweep(runs)["pct_peak"].iloc[0] == pytest.approx(100.0)  # calibrated


def test_scaling_sweep_over_numjobs_from_real_fio():
    db = iochar.connect(":memory:")
    capacity.store_capacity(db, FIO_MULTI)
    s = scaling.sweep(db)
    assert sorted(s["nprocs"].unique()) == [1, 2]
    assert (s.groupby(["level", "op"])["pct_peak"].max() == 100.0).all()


# ------------------------------------------------------------------ used % (Méndez)
def _cap(sd=0.0):
    rows = []
    for lv, f in (("device", 1.0), ("local_fs", 4.0)):
        for size, rate in ((65536, 100e6), (1 << 20, 400e6)):
            for rep, d in enumerate((-sd, 0.0, sd)):
                rows.append(
                    {
                        "level": lv,
                        "api": "POSIX",
                        "op": "write",
                        "access": "sequential",
                        "size_bytes": size,
                        "nprocs": 1,
                        "rep": rep,
                        "rate": f * rate + d,
                    }
                )
    return capacity.capacity(pd.DataFrame(rows))


def test_used_pct_exact_on_a_synthetic_capacity_table():
    """256 KiB is halfway in log2 between 64 KiB (100 MB/s) and 1 MiB (400 MB/s): 250 MB/s."""
    ph = pd.DataFrame(
        {
            "job_id": [0, 0, 0],
            "phase": [0, 1, 2],
            "op": "write",
            "access": "sequential",
            "size_bytes": [262144.0, 65536.0, 4 << 20],
            "nprocs": 1,
            "rate": [125e6, 100e6, 200e6],
        }
    )
    u = efficiency.used(ph, _cap()).set_index(["phase", "level"])
    assert u.loc[(0, "device"), "capacity"] == pytest.approx(250e6)
    assert u.loc[(0, "device"), "used_pct"] == pytest.approx(50.0)
    assert u.loc[(0, "local_fs"), "used_pct"] == pytest.approx(12.5)
    assert u.loc[(1, "device"), "used_pct"] == pytest.approx(100.0)
    assert u.loc[(2, "device"), "used_pct"] == pytest.approx(50.0)  # beyond 1 MiB: nearest
    assert bool(u.loc[(2, "device"), "extrapolated"])
    assert u.loc[(0, "device"), "limiting"] and not u.loc[(0, "local_fs"), "limiting"]
    t = efficiency.table_mendez(efficiency.used(ph, _cap()))
    assert list(t["device write"]) == pytest.approx([50.0, 100.0, 50.0])


def test_used_carries_the_capacity_spread():
    sd = 10e6
    ph = pd.DataFrame(
        {"job_id": [0], "phase": [0], "op": "write", "access": "sequential"}
        | {"size_bytes": [65536.0], "nprocs": 1, "rate": [50e6]}
    )
    u = efficiency.used(ph, _cap(sd=sd), levels=["device"]).iloc[0]
    assert u["capacity_sd"] == pytest.approx(sd)
    assert u["used_lo"] == pytest.approx(100 * 50e6 / (100e6 + sd))
    assert u["used_hi"] == pytest.approx(100 * 50e6 / (100e6 - sd))


def test_phases_from_strace_and_darshan_counters():
    """ckpt_tt (data/strace/SOURCE.md): 40 iterations of 2 x 32 KiB writes at offsets 0 and
    32768 then a 64 KiB readv at 0; input read as 4 x 64 KiB + 37856; 5 checkpoints of 3 x
    16 KiB writes; output 4 pwrite64 of 8 KiB."""
    db = iochar.connect(":memory:")
    db.load(DATA_DIR / "strace" / "ckpt_tt.strace")
    db.load(DATA_DIR / "darshan" / "example.darshan")
    ph = efficiency.phases(db)
    types = efficiency.phase_types(ph)
    tr = types[types["source"] == "trace"].set_index(["op", "access", "size_bytes"])
    assert tuple(tr.loc[("write", "sequential", 32768.0), ["ops", "occurrences"]]) == (80, 40)
    assert tuple(tr.loc[("read", "random", 65536.0), ["ops", "occurrences"]]) == (40, 40)
    assert tr.loc[("read", "sequential", 65536.0), "ops"] == 4
    assert tuple(tr.loc[("write", "sequential", 16384.0), ["ops", "occurrences"]]) == (15, 5)
    assert tr.loc[("write", "sequential", 8192.0), "ops"] == 4
    busy = db.sql(
        "SELECT sum(t_end - t_start) FROM ops WHERE op = 'write' AND size = 32768"
    ).fetchall()[0][0]
    assert tr.loc[("write", "sequential", 32768.0), "io_s"] == pytest.approx(busy)
    # Darshan counters: POSIX + STDIO records (MPI-IO is recorded again by POSIX below it)
    darshan = pytest.importorskip("darshan")
    rep = darshan.DarshanReport(str(DATA_DIR / "darshan" / "example.darshan"), read_all=True)
    want_b = want_n = 0
    for m in ("POSIX", "STDIO"):
        c = rep.records[m].to_df()["counters"]
        want_b += int(c[f"{m}_BYTES_WRITTEN"].sum())
        want_n += int(c[f"{m}_WRITES"].sum())
    w = ph[(ph["source"] == "counters") & (ph["op"] == "write")].iloc[0]
    assert w["bytes"] == want_b and w["size_bytes"] == pytest.approx(want_b / want_n)


def test_efficiency_rule_fires_below_threshold_only():
    db = iochar.connect(":memory:")
    db.load(DATA_DIR / "strace" / "ckpt_tt.strace")
    empty = rules_efficiency._efficiency_rows(db, None, {"min_weight": 0.1})
    assert empty.empty and "capacity" in next(iter(empty.evidence["needs"].values()))
    pt = efficiency.phase_types(efficiency.phases(db))
    w = pt[pt["op"] == "write"].iloc[0]
    # capacity = 10 x the phase's rate at its size: used 10 % -> high (< 15 %)
    doc_rows = [
        {"level": "device", "op": "write", "access": w["access"], "size_bytes": s}
        | {"nprocs": 1, "rate": 10 * w["rate"]}
        for s in (4096.0, 1 << 20)
    ]
    from iochar.analyze.insights import run

    rows = _store_rows(db, doc_rows)
    assert rows == 2
    found = run(db, rules=rules_efficiency.RULES)
    ev = found.iloc[0]["evidence"]
    assert ev["used_pct"] == pytest.approx(10.0, rel=1e-9)
    assert found.iloc[0]["severity"] == "high"
    out = run(db, rules=rules_efficiency.RULES, params={"unused_pct": 95.0})
    assert out.empty  # 90 % unused is below a 95 % threshold


def _store_rows(db, rows):
    """Capacity rows through the store: a real fio JSON with its rates rewritten."""
    raw = json.loads((DATA_DIR / "fio" / "iochar-calibrate-vda-ext4.json").read_text())
    jobs = []
    for i, r in enumerate(rows):
        j = json.loads(json.dumps(raw["jobs"][0]))
        j["groupid"] = i  # stonewalled jobs: a group each
        j["job options"] = {"rw": "write" if r["access"] == "sequential" else "randwrite"}
        j["jobname"] = f"w{int(r['size_bytes'])}"
        side = j["write"]
        side["runtime"] = 1000
        side["total_ios"] = int(r["rate"] / r["size_bytes"] * 1000)
        side["io_bytes"] = int(side["total_ios"] * r["size_bytes"])
        side["runtime"] = side["io_bytes"] / r["rate"] * 1000
        jobs.append(j)
    raw["jobs"] = jobs
    raw["global options"] = {"direct": "1"}
    doc = capacity_document(
        [{"kind": "fio-json", "name": "t", "text": json.dumps(raw)}], level="device"
    )
    return sum(capacity.store_capacity(db, doc).rows.values())


# ------------------------------------------------------------------ interference
def test_interference_on_a_generated_pair_with_known_slowdown():
    """App A: 6 runs alone at ~100 MB/s, 6 overlapped by app B at ~70 MB/s: 30 % slower."""
    rng = np.random.default_rng(7)
    rows, t = [], pd.Timestamp("2026-01-01")
    alone = 100e6 * (1 + 0.02 * rng.standard_normal(6))
    togeth = 70e6 * (1 + 0.02 * rng.standard_normal(6))
    for i in range(6):
        s = t + pd.Timedelta(hours=2 * i)
        rows.append({"job_id": i, "app": "A", "start_ts": s, "runtime_s": 100.0})
        rows[-1]["bytes"] = alone[i] * 100
        s2 = t + pd.Timedelta(hours=2 * i + 1)
        rows.append({"job_id": 100 + i, "app": "A", "start_ts": s2, "runtime_s": 100.0})
        rows[-1]["bytes"] = togeth[i] * 100
        rows.append({"job_id": 200 + i, "app": "B", "start_ts": s2, "runtime_s": 100.0})
        rows[-1]["bytes"] = 1e9
    df = pd.DataFrame(rows)
    df["end_ts"] = df["start_ts"] + pd.to_timedelta(df["runtime_s"], unit="s")
    res = interference.observed(df)
    assert "not proof" in res.evidence["caution"]
    out = res.set_index("app")
    a = out.loc["A"]
    assert (a["n_overlapped"], a["n_alone"]) == (6, 6)
    assert a["degradation_pct"] == pytest.approx(100 * (1 - togeth.mean() / alone.mean()))
    assert a["deg_lo"] < 30 < a["deg_hi"]
    assert a["p_value"] == pytest.approx(stats.ttest_ind(alone, togeth, equal_var=False).pvalue)


def test_fio_pairs_on_a_real_capture():
    raw = json.loads(PAIRS.read_text())
    names = [j["jobname"] for j in raw["jobs"]]
    t = interference.fio_pairs(PAIRS)
    assert set(t["case"]) == {"read_read_same", "read_read_diff", "read_write_diff"} | {
        "write_write_diff"
    }
    assert (t["reps"] == 3).all() and len(t) == 8
    rw = t[(t["case"] == "read_write_diff") & (t["role"] == "b")].iloc[0]
    assert rw["op"] == "write"
    rate = {
        j["jobname"]: j["write"]["io_bytes"] / j["write"]["runtime"] * 1000
        for j in raw["jobs"]
        if j["write"]["runtime"]
    }
    alone = [rate[n] for n in names if n.startswith("alone_write")]
    tog = [rate[n] for n in names if n.startswith("read_write_diff.b")]
    assert rw["degradation_pct"] == pytest.approx(100 * (1 - np.mean(tog) / np.mean(alone)))


# ------------------------------------------------------------------ fio here
def _direct_writer(path, out, size, secs):
    """An application: sequential O_DIRECT writes, each timed, written as an iochar trace."""
    code = f"""
import csv, mmap, os, time
fd = os.open({str(path)!r}, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
buf = mmap.mmap(-1, {size}); buf.write(os.urandom({size}))
rows, off, t0 = [], 0, time.perf_counter()
while True:
    a = time.perf_counter(); n = os.pwrite(fd, buf, off); b = time.perf_counter()
    rows.append(("write", a - t0, b - t0, off, n, 0, {str(path)!r}))
    off = (off + n) % (16 << 20)
    if b - t0 > {secs}: break
os.close(fd)
with open({str(out)!r}, "w", newline="") as fh:
    w = csv.writer(fh); w.writerow(["op", "t_start", "t_end", "offset", "size", "rank", "path"])
    w.writerows(rows)
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@requires_fio
def test_application_that_is_the_benchmark_uses_about_100_percent(tmp_path):
    """Issue 21: the application *is* the sweep's pattern (sequential 1 MiB O_DIRECT writes,
    psync, one process), so its used % must be 100 within the spread. The sweep and the
    application take turns (3 rounds of 2 fio repetitions and one application run), so
    drift of a shared machine's disk falls on both; the 99 % Welch interval of the
    application's used % (one value per run, against the mean capacity) must hold 100."""
    from iochar.capture import capacity as sweep
    from iochar.capture.fio import _direct_ok

    if not _direct_ok(str(tmp_path))[0]:
        pytest.skip("O_DIRECT is refused in tmp_path")
    t0 = time.perf_counter()
    db = iochar.connect(":memory:")
    for k in range(3):
        got = sweep.run_sweep(
            tmp_path, "device", ops=("write",), accesses=("sequential",), sizes=(1 << 20,),
            reps=2, runtime_s=0.2, file_bytes=16 << 20,
        )  # fmt: skip
        doc = capacity_document(got["runs"], level="device", target=got["target"])
        capacity.store_capacity(db, doc)
        _direct_writer(tmp_path / "app.dat", tmp_path / f"app{k}.csv", 1 << 20, 0.2)
        db.load(tmp_path / f"app{k}.csv")
    assert time.perf_counter() - t0 < 15
    cap = capacity.capacity(db)
    assert len(cap) == 1 and cap["n"].iloc[0] == 6
    pt = efficiency.phase_types(efficiency.phases(db))
    assert len(pt) == 3 and set(pt["access"]) == {"sequential"}
    u = efficiency.used(pt, cap)
    runs = db.sql("SELECT rate FROM capacity").df()["rate"].to_numpy()
    used_runs = 100 * runs / cap["rate"].iloc[0]
    d = interference.degradation(u["used_pct"].to_numpy(), used_runs, confidence=0.99)
    assert d["alone"] == pytest.approx(100.0)
    assert d["deg_lo"] <= 0 <= d["deg_hi"], (list(u["used_pct"]), d)


@requires_fio
def test_calibrate_levels_command(tmp_path):
    from iochar.cli import main

    db = tmp_path / "c.duckdb"
    rc = main(
        ["calibrate", str(tmp_path), "--levels", "local_fs", "--quick", "--cap-sizes"]
        + ["1048576", "--reps", "2", "--runtime", "0.1", "--db", str(db)]
    )
    assert rc == 0
    assert os.path.exists(tmp_path / "iochar-capacity-local_fs.json")
    con = iochar.connect(str(db))
    got = con.sql("SELECT level, op, access, count(*) FROM capacity GROUP BY ALL").fetchall()
    assert sorted(got) == [
        ("local_fs", op, acc, 2) for op in ("read", "write") for acc in ("random", "sequential")
    ]
    con.close()


@requires_fio
def test_run_interference_reader_against_writer(tmp_path):
    """Kwan & Reed's reader-vs-writer case run here (tiny): both jobs of the pair and the
    alone runs come back from fio's JSON, each compared with its operation alone."""
    from iochar.capture import capacity as sweep

    text = sweep.run_interference(
        tmp_path, size=1 << 20, reps=2, runtime_s=0.1, file_bytes=8 << 20,
        cases=["read_write_diff"],
    )  # fmt: skip
    raw = json.loads(text[text.index("{") :])
    names = sorted(j["jobname"] for j in raw["jobs"])
    assert names == sorted(
        [f"alone_{op}.a.r{r}" for op in ("read", "write") for r in (0, 1)]
        + [f"read_write_diff.{role}.r{r}" for role in "ab" for r in (0, 1)]
    )
    t = interference.fio_pairs(text.encode()).set_index("role")
    assert list(t["op"]) == ["read", "write"] and (t["reps"] == 2).all()
    assert not list(tmp_path.glob("iochar-pair-*"))  # data files removed


def test_capacity_runs_for_a_report_say_where_they_come_from(monkeypatch):
    """Notebook 05's capacity: the database's rows, else the bundled calibration; a sweep
    asked for without fio is said, not silently skipped."""
    import shutil

    import iochar
    from iochar.capture import capacity as sweep
    from iochar.datasets import data_dir

    doc = data_dir() / "capacity" / "vda-ext4-device.capacity.json"
    with iochar.connect(":memory:") as db:
        runs, source, notes = sweep.capacity_runs(db)
        assert source.startswith("the bundled calibration") and not notes
        assert len(runs) == 12 and set(runs["level"]) == {"device"}  # 12 fio jobs, O_DIRECT
        db.load(doc)
        runs, source, notes = sweep.capacity_runs(db)
        assert source == "the database" and len(runs) == 12
        monkeypatch.setattr(shutil, "which", lambda name: None)
        runs, source, notes = sweep.capacity_runs(db, calibrate_here=True)
        assert source == "the database" and notes == [
            "fio is not installed here, so no sweep ran on this machine"
        ]
