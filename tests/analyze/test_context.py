"""One job in its system (issue 20, item 1): iochar.analyze.context.

The joined numbers are checked against numbers computed here from the raw inputs, not
through iochar:

- data/insights: a real strace capture of ckpt_app taken while /proc/diskstats of its
  disk was sampled and dd loaded the disk, during the run (collide) or before it
  (apart). The disk's bytes during the job are the cumulative sector counters of the
  raw samples (fields 6 and 10, 512-byte sectors: kernel
  Documentation/admin-guide/iostats.rst) linearly interpolated at the job's first and
  last strace timestamps; the job's bytes are the return values of its read and write
  calls.
- data/darshan: real Darshan logs, read here with the darshan package (libdarshan-util)
  for the job window, its Lustre layout (stripe size and count, OST ids) and bytes;
  their bytes per OST follow from Lustre's RAID-0 layout written out again below.
- data/lmt: a real LMT database whose time range is read with sqlite3.
- the demo database (iochar.datasets.demo): no job of it is covered by its counters.
"""

from __future__ import annotations

import math
import re
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import iochar
from iochar.analyze import context
from iochar.errors import ParameterError

DATA = Path(__file__).resolve().parents[2] / "data"
INSIGHTS = DATA / "insights"
BADOST = DATA / "darshan" / "lustre" / "sample-badost.darshan"
VPIC = DATA / "darshan" / "example.darshan"
LMT = DATA / "lmt" / "lmtdb-reset.sqlite3"

try:
    import darshan

    HAS_DARSHAN = True
except ImportError:  # pragma: no cover - the darshan extra is missing
    HAS_DARSHAN = False
needs_darshan = pytest.mark.skipif(not HAS_DARSHAN, reason="the darshan package is missing")

_IO = re.compile(
    r"^\d+ ([\d.]+) (read|write|pread64|pwrite64|readv|writev)\(\d+<[^>]*>.*\) = (\d+) <"
)


# --------------------------------------------------------------------------- raw readers


def _raw_strace(path: Path) -> tuple[float, float, int, int]:
    """First and last timestamp [epoch s], bytes read and written by the traced job."""
    first = last = None
    rd = wr = 0
    for line in path.read_text().splitlines():
        ts = float(line.split()[1])
        first = ts if first is None else first
        last = ts
        m = _IO.match(line)
        if m:
            if "read" in m.group(2):
                rd += int(m.group(3))
            else:
                wr += int(m.group(3))
    return first, last, rd, wr


def _raw_diskstats(path: Path) -> pd.DataFrame:
    """Each sample: time [epoch s], cumulative bytes read and written, io_ticks [s]."""
    rows, ts = [], None
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) == 1:
            ts = float(f[0])
            continue
        # major minor name reads merged sectors_read ms writes merged sectors_written ms
        # in_flight io_ticks ...
        rows.append((ts, int(f[5]) * 512, int(f[9]) * 512, int(f[12]) / 1000))
    return pd.DataFrame(rows, columns=["t", "read", "write", "ticks"])


def _interp(d: pd.DataFrame, col: str, t: float) -> float:
    return float(np.interp(t, d["t"], d[col]))


def _load(*paths) -> iochar.Store:
    db = iochar.connect(":memory:")
    for p in paths:
        db.load(p)
    return db


# --------------------------------------------------------------------------- insights


@pytest.mark.parametrize("case", ["collide", "apart"])
def test_device_bytes_during_the_job_match_the_raw_diskstats(case):
    t0, t1, job_rd, job_wr = _raw_strace(INSIGHTS / f"{case}.strace")
    d = _raw_diskstats(INSIGHTS / f"{case}.diskstats")
    db = _load(INSIGHTS / f"{case}.strace", INSIGHTS / f"{case}.diskstats")
    (job,) = [j for (j,) in db.sql("SELECT job_id FROM jobs").fetchall()]
    ctx = context.job_context(db, job)
    ev = ctx.evidence
    assert ev["status"] == "covered" and ev["match"] == "time"
    assert len(ctx) == 1
    row = ctx.iloc[0]
    assert row["target"] == "vda" and row["kind"] == "diskstats"
    # the window is the strace run: first call to the exit
    assert ev["window_s"] == pytest.approx(t1 - t0, abs=1e-6)
    assert row["coverage"] == pytest.approx(1.0)
    # disk bytes in the window: the cumulative counters interpolated at its ends
    rd = _interp(d, "read", t1) - _interp(d, "read", t0)
    wr = _interp(d, "write", t1) - _interp(d, "write", t0)
    assert row["read_bytes"] == pytest.approx(rd, rel=1e-6)
    assert row["write_bytes"] == pytest.approx(wr, rel=1e-6)
    assert row["bytes"] == pytest.approx(rd + wr, rel=1e-6)
    assert row["rate_bps"] == pytest.approx((rd + wr) / (t1 - t0), rel=1e-6)
    # the observed peak: the fastest sample of the whole record
    dt = np.diff(d["t"])
    rate = (np.diff(d["read"]) + np.diff(d["write"])) / dt
    assert row["peak_bps"] == pytest.approx(rate.max(), rel=1e-6)
    assert row["peak_share"] == pytest.approx((rd + wr) / (t1 - t0) / rate.max(), rel=1e-6)
    assert "observed" in row["peak_basis"]
    # busy: the window's time in samples at >= 33% of that peak (Carns et al. 2011)
    ends, starts = d["t"].to_numpy()[1:], d["t"].to_numpy()[:-1]
    ov = np.clip(np.minimum(ends, t1) - np.maximum(starts, t0), 0, None)
    busy = ov[rate >= 0.33 * rate.max()].sum() / ov.sum()
    assert row["busy_share"] == pytest.approx(busy, abs=1e-6)
    # the kernel's busy time (io_ticks, field 13) over the window
    util = (_interp(d, "ticks", t1) - _interp(d, "ticks", t0)) / (t1 - t0)
    assert row["util_share"] == pytest.approx(util, rel=1e-4)
    # the job's own bytes, and its share of the disk's
    assert ev["job_read_bytes"] == job_rd and ev["job_write_bytes"] == job_wr
    assert row["job_bytes"] == pytest.approx(job_rd + job_wr)
    assert row["job_share"] == pytest.approx((job_rd + job_wr) / (rd + wr), rel=1e-6)
    assert ev["job_share"] == pytest.approx(row["job_share"])
    assert ev["other_jobs"] == 0
    assert math.isnan(row["fsu_pct"])  # no brw_stats histograms
    facts = context.summary_facts(ctx)
    assert facts["status"] == "covered" and facts["busiest_target"] == "vda"
    assert facts["coverage"] == 1.0 and facts["fsu_pct"] is None
    assert facts["peak_share"] == pytest.approx(row["peak_share"])
    assert facts["job_share"] == pytest.approx(row["job_share"])
    if case == "collide":  # dd ran through the job: busy all along, the job a speck
        assert busy == 1.0 and row["job_share"] < 0.001
    else:  # the load ended before the job: the disk was idle while it ran
        assert busy == 0.0 and row["peak_share"] < 0.001


def test_load_series_puts_the_jobs_bytes_in_the_disks_samples():
    t0, t1, job_rd, job_wr = _raw_strace(INSIGHTS / "collide.strace")
    d = _raw_diskstats(INSIGHTS / "collide.diskstats")
    db = _load(INSIGHTS / "collide.strace", INSIGHTS / "collide.diskstats")
    s = context.load_series(db, 0)
    assert s.evidence["status"] == "covered"
    # every sample of the record within the margin, with the raw deltas
    assert len(s) == len(d) - 1
    raw = np.diff(d["read"]) + np.diff(d["write"])
    assert np.allclose(s["bytes"].to_numpy(), raw, rtol=1e-9)
    # each of the job's bytes lands in one sample
    assert s["job_all_bytes"].sum() == pytest.approx(job_rd + job_wr)
    assert s["job_bytes"].sum() == pytest.approx(job_rd + job_wr)
    before = s["ts"] <= pd.Timestamp(t0, unit="s")
    assert (s.loc[before, "job_all_bytes"] == 0).all()


# --------------------------------------------------------------------------- Darshan


def _darshan(path: Path):
    r = darshan.DarshanReport(str(path), read_all=True)
    job = r.metadata["job"]
    start = pd.Timestamp(job["start_time_sec"], unit="s")
    # whole seconds; the run time (end - start + 1) is the longer of the two
    end = max(
        pd.Timestamp(job["end_time_sec"], unit="s"), start + pd.Timedelta(seconds=job["run_time"])
    )
    return r, start, end


def _ost_bytes(nbytes: float, extent: int, size: int, osts: list[int]) -> dict[int, float]:
    """RAID-0: bytes of [0, extent) per OST, scaled to ``nbytes`` (whole units counted)."""
    c = len(osts)
    units, tail = divmod(extent, size)
    out = {}
    for k, ost in enumerate(osts):
        on = (units // c + (1 if k < units % c else 0)) * size
        on += tail if k == units % c else 0
        out[ost] = out.get(ost, 0.0) + nbytes * on / extent
    return out


@needs_darshan
def test_a_darshan_log_without_counters_says_why():
    r, start, end = _darshan(BADOST)
    db = _load(BADOST)
    ctx = context.job_context(db, 0)
    ev = ctx.evidence
    assert ctx.empty and ev["status"] == "no_counters"
    assert "no device or server counters" in ev["reason"]
    assert ev["window_start"] == start and ev["window_end"] == end
    # the OSTs its files name, and its bytes on each (one stripe per file here)
    want: dict[int, float] = {}
    posix = r.records["POSIX"].to_df()["counters"].set_index("id")
    for rec in r.records["LUSTRE"]:
        (comp,) = rec["components"]
        size = int(comp["counters"][0])
        ids = [int(i) for i in comp["ost_ids"][: int(comp["counters"][1])]]
        if rec["id"] not in posix.index:
            continue
        p = posix.loc[rec["id"]]
        nb = float(p["POSIX_BYTES_READ"] + p["POSIX_BYTES_WRITTEN"])
        ext = int(max(p["POSIX_MAX_BYTE_READ"], p["POSIX_MAX_BYTE_WRITTEN"])) + 1
        for ost, b in _ost_bytes(nb, ext, size, ids).items():
            want[ost] = want.get(ost, 0.0) + b
    assert ev["job_osts"] == sorted(want)
    got = ev["job_bytes_by_ost"]
    assert set(got) == set(want)
    for ost in want:
        assert got[ost] == pytest.approx(want[ost], rel=1e-9)
    from iochar.narrate import context as nc

    text = nc.job_system(ctx)
    assert "is not known" in text and "no device or server counters" in text


@needs_darshan
def test_counters_before_or_after_the_job_give_both_time_ranges():
    _, start, end = _darshan(BADOST)
    with sqlite3.connect(LMT) as c:
        lo, hi = c.execute("SELECT min(TIMESTAMP), max(TIMESTAMP) FROM TIMESTAMP_INFO").fetchone()
    db = _load(BADOST, LMT)
    ctx = context.job_context(db, 0)
    ev = ctx.evidence
    assert ctx.empty and ev["status"] == "outside"
    # the job's window and the counters' range, both in the sentence
    assert f"{start:%Y-%m-%d %H:%M:%S} to {end:%Y-%m-%d %H:%M:%S} UTC" in ev["reason"]
    assert f"to {hi} UTC" in ev["reason"]  # LMT's last sample ends the record
    assert pd.Timestamp(lo) > end  # all of it after the job
    assert "start after it" in ev["reason"] and "end before it" not in ev["reason"]
    (rec,) = ev["counter_ranges"]
    assert rec["record_end"] == pd.Timestamp(hi) and rec["kind"] == "lmt"
    series = context.load_series(db, 0)
    assert series.empty and series.evidence["reason"] == ev["reason"]


def _insert(db, table: str, frame: pd.DataFrame) -> None:
    """Rows written straight into a table: counters dated in a real job's window."""
    db.con.register("_rows", frame)
    try:
        cols = ", ".join(f'"{c}"' for c in frame.columns)
        db.con.execute(f'INSERT INTO "{table}" ({cols}) SELECT {cols} FROM _rows')
    finally:
        db.con.unregister("_rows")


@needs_darshan
def test_ost_targets_are_matched_by_the_files_layout_with_fsu():
    r, start, end = _darshan(VPIC)
    (rec,) = r.records["LUSTRE"]
    (comp,) = rec["components"]
    size, count = int(comp["counters"][0]), int(comp["counters"][1])
    ids = [int(i) for i in comp["ost_ids"][:count]]
    p = r.records["POSIX"].to_df()["counters"].set_index("id").loc[rec["id"]]
    nb = float(p["POSIX_BYTES_READ"] + p["POSIX_BYTES_WRITTEN"])
    ext = int(max(p["POSIX_MAX_BYTE_READ"], p["POSIX_MAX_BYTE_WRITTEN"])) + 1
    per_ost = _ost_bytes(nb, ext, size, ids)
    db = _load(VPIC)
    # 60-s samples from 2 min before the job to 3 min after; OST 7 and 9 hold its
    # stripes, OST 0x100 and sda do not
    ends = [start.floor("min") + pd.Timedelta(minutes=k) for k in range(-1, 5)]
    vals = [9e11, 1e11, 2e11, 3e11, 1e11, 5e10]
    rows = []
    for tg in ("scratch2-OST0007", "scratch2-OST0009", "scratch2-OST0100", "sda"):
        for ts, v in zip(ends, vals, strict=True):
            rows += [
                (tg, "write_bytes", ts, 60.0, v, "ok"),
                (tg, "read_bytes", ts, 60.0, 0.0, "ok"),
            ]
    _insert(db, "counters", pd.DataFrame(rows, columns=["target", "metric", "ts", "interval_s",
                                                        "value", "quality"]))  # fmt: skip
    # brw_stats histograms of OST 7: n4 4 KiB reads and n1 1 MiB writes per sample
    hist = []
    n4s, n1s = [0, 20000, 3000, 0, 0, 0], [100, 500, 800, 2000, 10, 0]
    for ts, n4, n1 in zip(ends, n4s, n1s, strict=True):
        ost7 = ("scratch2-OST0007", ts, 60.0, "disk I/O size")
        hist += [(*ost7, "read", 4096, n4, "ok"), (*ost7, "write", 1 << 20, n1, "ok")]
    _insert(db, "size_hist", pd.DataFrame(hist, columns=["target", "ts", "interval_s",
            "section", "op", "size_bytes", "count", "quality"]))  # fmt: skip
    ctx = context.job_context(db, int(db.sql("SELECT job_id FROM jobs").fetchall()[0][0]))
    ev = ctx.evidence
    assert ev["status"] == "covered" and ev["match"] == "ost"
    assert sorted(ctx["target"]) == ["scratch2-OST0007", "scratch2-OST0009"]
    t0, t1 = start, end
    starts = [e - pd.Timedelta(seconds=60) for e in ends]
    ov = np.array([max(0.0, (min(e, t1) - max(s, t0)).total_seconds()) for s, e in
                   zip(starts, ends, strict=True)])  # fmt: skip
    in_win = float((np.array(vals) * ov / 60).sum())
    for _, row in ctx.iterrows():
        ost = context.ost_index(row["target"])
        assert row["bytes"] == pytest.approx(in_win, rel=1e-9)
        assert row["peak_bps"] == pytest.approx(9e11 / 60)  # the sample before the job
        assert row["peak_share"] == pytest.approx(in_win / (t1 - t0).total_seconds() / 1.5e10)
        # Darshan's first and last write lie inside the run: all of the OST's bytes
        assert row["job_bytes"] == pytest.approx(per_ost[ost], rel=1e-9)
        assert row["job_share"] == pytest.approx(per_ost[ost] / in_win, rel=1e-9)
    # FSU of OST 7: Eq. 7 with Table I, weighted by each sample's time in the window
    (r0, r1), (w0, w1) = (8.02e-4, 1.23e-9), (1.04e-3, 1.73e-9)
    fsu = np.array([100 / 60 * (a * (r0 + r1 * 4096) + b * (w0 + w1 * (1 << 20)))
                    for a, b in zip(n4s, n1s, strict=True)])  # fmt: skip
    o7 = ctx.set_index("target").loc["scratch2-OST0007"]
    assert o7["fsu_pct"] == pytest.approx((fsu * ov).sum() / ov.sum(), rel=1e-9)
    assert o7["fsu_busy_share"] == pytest.approx(ov[fsu >= 30].sum() / ov.sum())
    ios = np.array(n4s) + np.array(n1s)
    sub = (np.array(n4s) * ov / 60).sum() / (ios * ov / 60).sum()
    assert o7["suboptimal_share"] == pytest.approx(sub, rel=1e-9)
    assert math.isnan(ctx.set_index("target").loc["scratch2-OST0009", "fsu_pct"])


@needs_darshan
def test_counters_of_other_targets_do_not_match():
    _, start, end = _darshan(VPIC)
    db = _load(VPIC)
    ends = [start.floor("min") + pd.Timedelta(minutes=k) for k in range(0, 4)]
    rows = [("sda", "write_bytes", ts, 60.0, 1e9, "ok") for ts in ends]
    _insert(db, "counters", pd.DataFrame(rows, columns=["target", "metric", "ts", "interval_s",
                                                        "value", "quality"]))  # fmt: skip
    ctx = context.job_context(db, int(db.sql("SELECT job_id FROM jobs").fetchall()[0][0]))
    ev = ctx.evidence
    assert ctx.empty and ev["status"] == "no_match"
    assert "OSTs" in ev["reason"] and "sda" in ev["reason"]


@needs_darshan
def test_files_on_a_local_mount_match_whole_disks_only():
    (log,) = DATA.glob("darshan/darshan-logs/**/mpi-io-test-x86_64-3.4.0.darshan")
    r, start, end = _darshan(log)
    # the file's mount: the longest mount point prefixing its path (ext4 on /)
    paths = [p for p in r.data["name_records"].values() if p.startswith("/")]
    mounts = sorted(r.data["mounts"], key=lambda m: -len(m[0]))
    types = {next(t for mp, t in mounts if p.startswith(mp.rstrip("/") + "/")) for p in paths}
    assert types == {"ext4"}
    db = _load(log)
    ends = [start.floor("10s") + pd.Timedelta(seconds=10 * k) for k in range(0, 3)]
    rows = [
        (tg, "write_bytes", ts, 10.0, 4e8, "ok")
        for tg in ("sda", "sda1", "fs0-OST0000")
        for ts in ends
    ]
    _insert(db, "counters", pd.DataFrame(rows, columns=["target", "metric", "ts", "interval_s",
                                                        "value", "quality"]))  # fmt: skip
    ctx = context.job_context(db, int(db.sql("SELECT job_id FROM jobs").fetchall()[0][0]))
    ev = ctx.evidence
    assert ev["match"] == "mount" and "local mounts" in ev["match_rule"]
    # not the OST (Lustre), not the partition (counted again on its disk)
    assert list(ctx["target"]) == ["sda"]
    secs = (end - start).total_seconds()
    assert ev["window_s"] == pytest.approx(secs) and secs == r.metadata["job"]["run_time"]
    assert ctx["bytes"].iloc[0] == pytest.approx(4e8 / 10 * secs)
    assert ctx["rate_bps"].iloc[0] == pytest.approx(4e7)


@needs_darshan
def test_counters_ending_inside_the_window_cover_part_of_it():
    _, start, end = _darshan(VPIC)
    db = _load(VPIC)
    ends = [start.floor("min") + pd.Timedelta(minutes=k) for k in range(0, 2)]
    rows = [("scratch2-OST0007", "write_bytes", ts, 60.0, 6e9, "ok") for ts in ends]
    _insert(db, "counters", pd.DataFrame(rows, columns=["target", "metric", "ts", "interval_s",
                                                        "value", "quality"]))  # fmt: skip
    ctx = context.job_context(db, int(db.sql("SELECT job_id FROM jobs").fetchall()[0][0]))
    ev = ctx.evidence
    seen = (ends[-1] - start).total_seconds()
    cov = seen / (end - start).total_seconds()
    assert ev["status"] == "partial" and f"at most {100 * cov:.0f}%" in ev["reason"]
    assert ctx["coverage"].iloc[0] == pytest.approx(cov)
    assert ctx["covered_s"].iloc[0] == pytest.approx(seen)
    assert ctx["bytes"].iloc[0] == pytest.approx(6e9 / 60 * seen)


def test_bad_parameters():
    db = _load(INSIGHTS / "collide.strace")
    with pytest.raises(ParameterError, match="job_id"):
        context.job_context(db, 99)
    with pytest.raises(ParameterError, match="busy_fraction"):
        context.job_context(db, 0, busy_fraction=0)


def test_ost_index_reads_lustres_hexadecimal_names():
    assert context.ost_index("snx11168-OST00ad") == 0xAD
    assert context.ost_index("zfs-lustrefs-OST0000-series") == 0
    assert context.ost_index("snx11168-MDT0000") is None
    assert context.ost_index("vda") is None


# --------------------------------------------------------------------------- demo


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    from iochar.datasets import demo

    path = tmp_path_factory.mktemp("demo") / "iochar.duckdb"
    demo.build_database(path)
    db = iochar.connect(path)
    yield db
    db.close()


def test_demo_jobs_are_not_covered_and_say_why(demo_db):
    db = demo_db
    ranges = db.sql(
        "SELECT min(ts - to_microseconds(CAST(interval_s * 1e6 AS BIGINT))) AS lo, "
        "max(ts) AS hi FROM counters WHERE metric IN ('read_bytes', 'write_bytes') "
        "GROUP BY source_id"
    ).df()
    jobs = db.sql("SELECT job_id, app, start_ts, end_ts FROM jobs").df()
    undated = jobs[(jobs["app"] == "ckpt_app") & jobs["start_ts"].isna()]
    assert len(undated)  # strace -tt: times of day without a date
    ev = context.job_context(db, int(undated["job_id"].iloc[0])).evidence
    assert ev["status"] == "no_date" and "no start date" in ev["reason"]
    traced = jobs[(jobs["app"] == "ckpt_app") & jobs["start_ts"].notna()].iloc[0]
    ctx = context.job_context(db, int(traced["job_id"]))
    ev = ctx.evidence
    assert ctx.empty and ev["status"] == "outside"
    before = ranges[ranges["hi"] <= traced["start_ts"]]
    after = ranges[ranges["lo"] >= traced["end_ts"]]
    assert len(before) and len(after)  # counters of 2026-11-23 start 80 min after it
    assert f"the latest at {before['hi'].max():%Y-%m-%d %H:%M:%S} UTC" in ev["reason"]
    assert f"the earliest at {after['lo'].min():%Y-%m-%d %H:%M:%S} UTC" in ev["reason"]


def test_demo_concurrent_jobs_are_the_overlapping_runs(demo_db):
    from iochar.analyze.jobs import job_metrics

    db = demo_db
    jobs = db.sql("SELECT job_id, start_ts, end_ts FROM jobs WHERE start_ts IS NOT NULL").df()
    metrics = job_metrics(db).jobs.set_index("job_id")
    job = int(jobs.sort_values("start_ts").iloc[len(jobs) // 4]["job_id"])
    me = jobs.set_index("job_id").loc[job]
    want = jobs[
        (jobs["job_id"] != job)
        & (jobs["start_ts"] < me["end_ts"])
        & (jobs["end_ts"] > me["start_ts"])
    ]
    got = context.concurrent_jobs(db, job)
    assert sorted(got["job_id"]) == sorted(want["job_id"]) and len(got) > 0
    for r in got.itertuples(index=False):
        assert r.bytes == pytest.approx(float(metrics.loc[r.job_id, "io_bytes"]), rel=1e-9)
        assert 0 <= r.bytes_in_window <= r.bytes * (1 + 1e-12)
        lo = max(me["start_ts"], r.start_ts)
        hi = min(me["end_ts"], r.end_ts)
        assert r.overlap_s == pytest.approx((hi - lo).total_seconds())
    ctx = context.job_context(db, job)
    assert ctx.evidence["other_jobs"] == len(got)
    from iochar.narrate import context as nc

    text = nc.job_system(ctx, got)  # not covered, but the other jobs are known
    assert "is not known" in text and f"{len(got)} other job" in text
    # for every dated job: what another job moved in the window lies within what it
    # moved in all (a difference of two cumulative sums once came out at -6.1e-05 B)
    for j in jobs["job_id"]:
        for r in context.concurrent_jobs(db, int(j)).itertuples(index=False):
            assert 0 <= r.bytes_in_window <= r.bytes


def test_pick_job_prefers_a_covered_job_with_the_busiest_system():
    """Both captures' windows are covered by their diskstats; during `collide` dd loaded
    the disk (SOURCE.md), so the counters saw far more bytes: that job is shown."""
    with iochar.connect(":memory:") as db:
        assert context.pick_job(db) is None
        db.load(VPIC)  # dated, no counters anywhere yet
        vpic = db.sql("SELECT job_id FROM jobs").fetchall()[0][0]
        assert context.pick_job(db) == vpic
        ids = {}
        for name in ("apart", "collide"):
            before = {r[0] for r in db.sql("SELECT job_id FROM jobs").fetchall()}
            db.load(INSIGHTS / f"{name}.strace")
            db.load(INSIGHTS / f"{name}.diskstats")
            (ids[name],) = {r[0] for r in db.sql("SELECT job_id FROM jobs").fetchall()} - before
        for name in ids:
            assert context.job_context(db, ids[name]).evidence["status"] == "covered"
        sys_bytes = {n: context.job_context(db, j)["bytes"].sum() for n, j in ids.items()}
        assert sys_bytes["collide"] > 100 * sys_bytes["apart"]
        assert context.pick_job(db) == ids["collide"]
        assert context.pick_job(db, ids["apart"]) == ids["apart"]
        with pytest.raises(ParameterError):
            context.pick_job(db, "3")


def test_a_job_that_moved_nothing_has_a_context_not_an_error():
    """darshan-logs' empty_log: a job with no bytes at all (it raised ValueError)."""
    with iochar.connect(":memory:") as db:
        db.load(DATA / "darshan" / "darshan-logs" / "empty_log" / "empty_log.darshan")
        db.load(LMT)
        (job,) = db.sql("SELECT job_id FROM jobs").fetchall()[0]
        ctx = context.job_context(db, job)
    assert ctx.empty and ctx.evidence["status"] == "outside"
    assert "do not cover the job's window" in ctx.evidence["reason"]


def test_unmatched_job_bytes_summed_per_op_without_placing_them():
    """A traced job with no device counters to match (dxt.darshan: DXT_POSIX segments,
    no Lustre layout): its bytes are said per op without cutting the operations into
    time pieces, and they are the DXT segments' bytes (read here with the darshan
    package)."""
    darshan = pytest.importorskip("darshan", reason="the darshan package reads the log")
    log = DATA / "darshan" / "dxt.darshan"
    want = {"read": 0.0, "write": 0.0}
    with darshan.DarshanReport(str(log), read_all=False) as rep:
        mods = [m for m in ("DXT_POSIX", "DXT_MPIIO") if m in rep.modules]
        mod = "DXT_POSIX" if "DXT_POSIX" in mods else mods[0]
        rep.mod_read_all_dxt_records(mod, dtype="pandas")
        for rec in rep.records[mod].to_df():
            for op in ("read", "write"):
                seg = rec[f"{op}_segments"]
                want[op] += float(seg["length"].sum()) if "length" in seg else 0.0
    with iochar.connect(":memory:") as db:
        db.load(log)
        (job,) = [int(r[0]) for r in db.sql("SELECT job_id FROM jobs").fetchall()]
        ctx = context.job_context(db, job)
        ev = ctx.evidence
        assert ev["status"] == "no_counters" and ev["job_basis"] == "ops"
        assert ev["job_read_bytes"] == want["read"]
        assert ev["job_write_bytes"] == want["write"]
        assert ev["job_bytes"] == want["read"] + want["write"]
        assert ev["job_bytes_by_ost"] == {} and ev["job_osts"] == []
        jobs = pd.DataFrame({"job_id": [job], "runtime_s": [ev["window_s"]]})
        full = context._pieces(db, jobs, layouts=False).frame
        summed = context._pieces(db, jobs, layouts=False, totals_only=True).frame
        assert len(summed) <= 2 < len(full)
        for op in ("read", "write"):
            assert summed.loc[summed["op"] == op, "bytes"].sum() == want[op]
            assert full.loc[full["op"] == op, "bytes"].sum() == want[op]
