"""A job's data rate is measured over its whole run (issue 17, item 5).

Miller & Katz (1991) plot an application's data rate over its running time (Figs. 3
and 4) and give its mean rate per second of run time (Table 1), so the time a
program spends after its last I/O counts. The truth here is the raw strace text
(the wall-clock time of its first and last lines, of the write and of the sleep
after it), read by the test itself, never by the code under test.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from datetime import datetime

import numpy as np
import pytest

from iochar.analyze import characterize, classify
from iochar.narrate import apps, fmt_pct
from tests.conftest import DATA_DIR

#: write 1 MiB, then sleep one second before exiting
PROGRAM = (
    "import time\nwith open('out.dat', 'wb') as f:\n    f.write(b'x' * 1048576)\ntime.sleep(1)\n"
)
SLEEP_S = 1.0
_LINE = re.compile(r"^(\d+) +(\d\d:\d\d:\d\d\.\d+) (.*?)(?: <(\d+\.\d+)>)?$")


def _clock(s: str) -> float:
    t = datetime.strptime(s, "%H:%M:%S.%f")
    return t.hour * 3600 + t.minute * 60 + t.second + t.microsecond / 1e6


def _raw(path) -> dict:
    """First and last line times, and the write of out.dat, from ``strace -f -tt -T``."""
    times, write = [], None
    for line in path.read_text().splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        t = _clock(m.group(2))
        times.append(t)
        if m.group(3).startswith("write(") and "out.dat>" in m.group(3):
            write = (t, t + float(m.group(4) or 0))
    return {"first": times[0], "last": times[-1], "write": write}


@pytest.fixture
def slept(store, tmp_path):
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    out = tmp_path / "sleep.strace"
    run = subprocess.run(
        ["strace", "-f", "-tt", "-T", "-y", "-s", "16", "-o", str(out)]
        + [sys.executable, "-I", "-S", "-c", PROGRAM],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    if run.returncode != 0 or not out.exists():
        pytest.skip(f"strace could not trace here: {run.stderr.strip()[:200]}")
    store.load(out)
    return store, _raw(out)


def test_the_span_includes_the_trailing_idle_second(slept):
    store, raw = slept
    w0, w1 = raw["write"][0] - raw["first"], raw["write"][1] - raw["first"]
    run_s = raw["last"] - raw["first"]
    assert run_s >= w1 + SLEEP_S  # the program did sleep after its write
    span = characterize.job_span(store, job_id=0)
    assert span.basis == "jobs.runtime_s" and span.start_s == 0
    assert span.end_s == pytest.approx(run_s, abs=2e-3)

    bin_s = 0.1
    dr = characterize.data_rate(store, job_id=0, bin_s=bin_s)
    per = dr.groupby("t_s")["bytes"].sum()
    t = per.index.to_numpy(float)
    assert t[0] == 0 and np.allclose(np.diff(t), bin_s)
    assert t[-1] + bin_s >= w1 + SLEEP_S  # the grid reaches past the sleep
    assert len(per) == math.ceil(run_s / bin_s - 1e-6)
    # every bin from the one after the write to the end of the sleep is idle
    after = per[(per.index >= math.floor(w1 / bin_s) * bin_s + bin_s) & (per.index < w1 + SLEEP_S)]
    assert len(after) >= round(SLEEP_S / bin_s) - 2 and (after == 0).all()
    assert per[per.index <= w0].sum() > 0

    # mean rate and active share are over the run, not up to the last I/O
    ev = dr.evidence
    total = float(per.sum())
    assert ev["mean_bps"] == pytest.approx(total / run_s, rel=2e-3)
    assert ev["active_share"] == pytest.approx(float((per > 0).mean()))
    last_io_bins = math.floor(w0 / bin_s) + 1
    assert ev["active_share"] < (per > 0).sum() / last_io_bins  # what stopping at the I/O gave

    # the narration reads the trailing idle bins too
    table = characterize.app_table(store)
    by_class = classify.class_rate(store, job_id=0, bin_s=bin_s)
    text = apps.rate_summary(dr, by_class, table, 0)
    assert f"{fmt_pct(1 - ev['active_share'])} of the {len(per)} bins have no I/O" in text


def test_without_run_time_the_span_is_first_to_last_event_of_any_kind(slept):
    store, raw = slept
    store.con.execute("UPDATE jobs SET runtime_s = NULL, start_ts = NULL, end_ts = NULL")
    ops = store.sql("SELECT op, t_start, t_end FROM ops WHERE job_id = 0").df()
    io = ops[ops["op"].isin(["read", "write"])]
    span = characterize.job_span(store, job_id=0)
    assert span.basis == "ops: first..last event"
    assert span.start_s == ops["t_start"].min()
    assert span.end_s == pytest.approx(np.fmax(ops["t_end"], ops["t_start"]).max())
    # the file's close comes after its write: the span ends with it, not with the write
    last = ops.loc[np.fmax(ops["t_end"], ops["t_start"]).idxmax()]
    assert last["op"] not in ("read", "write") and span.end_s > io["t_end"].max()
    dr = characterize.data_rate(store, job_id=0, bin_s=0.001)
    assert dr.evidence["bins"] == math.ceil(span.end_s / 0.001 - 1e-9) - math.floor(
        span.start_s / 0.001
    )
    # (strace's -tt lines themselves say the run lasted a second longer: the loader
    # keeps it as jobs.runtime_s, the first rule of job_span)
    assert raw["last"] - raw["first"] > span.end_s + SLEEP_S * 0.99


def test_bundled_capture_span_is_the_run_time(store):
    # ckpt_tt.strace (bundled): run time from the jobs row; the grid covers all of it
    store.load(DATA_DIR / "strace" / "ckpt_tt.strace")
    rt = store.sql("SELECT runtime_s FROM jobs").fetchall()[0][0]
    span = characterize.job_span(store, job_id=0)
    assert (span.start_s, span.end_s, span.basis) == (0.0, rt, "jobs.runtime_s")
    for bin_s in (0.5, 1.0, 3.0):
        dr = characterize.data_rate(store, job_id=0, bin_s=bin_s)
        assert dr.evidence["bins"] == math.ceil(rt / bin_s)
        assert dr.evidence["span_s"] == rt


def test_trace_with_a_run_time_past_its_io(store):
    # an iochar trace whose job ran 9 s and wrote once at 3 s: 9 one-second bins
    store.load(b"op,t_start,t_end,size\nopen,2,2,\nwrite,3,3.5,100\nclose,9,9,\n", kind="trace-csv")
    dr = characterize.data_rate(store, job_id=0, bin_s=1.0)
    assert sorted(set(dr.t_s)) == [float(i) for i in range(9)]
    assert dr.evidence["active_bins"] == 1 and dr.evidence["mean_bps"] == pytest.approx(100 / 9)
    # the rate by class covers the same run: its bins stopped at the last I/O (3 s)
    from iochar.analyze import classify

    cr = classify.class_rate(store, job_id=0, bin_s=1.0)
    assert sorted(set(cr.t_s)) == sorted(set(dr.t_s))
    assert cr["bytes"].sum() == 100 and (cr.groupby("t_s")["bytes"].sum() > 0).sum() == 1


def test_a_job_with_no_events_has_no_bins(store):
    store.load(b"op,t_start\nopen,0\nclose,1\n", kind="trace-csv")
    store.con.execute("UPDATE jobs SET runtime_s = NULL")
    assert characterize.job_span(store, job_id=0).basis == "ops: first..last event"
    dr = characterize.data_rate(store, job_id=0, bin_s=0.5)
    assert dr.evidence["bins"] == 2 and dr.evidence["active_bins"] == 0  # idle 0..1 s
    assert characterize.job_span(store, job_id=7).basis == "none"
    assert characterize.data_rate(store, job_id=7).empty
