"""Classification rules on real patterns (issue 17 item 6; Miller & Katz 1991, section 5.1).

Real strace captures of data/strace/classify/src/patterns.c (see SOURCE.md there):
``run`` (input read twice, a log appended every iteration, output streamed over the
run, 3 checkpoint rewrites, /dev/null, /proc, /sys, a pipe, a socketpair, an eventfd,
an mmap'ed file, output written over the last ~40% of the run), ``restart`` (the
checkpoint read back, then rewritten twice) and ``threads`` (4 threads for ~30 ms
rewriting status files 2 ms apart). A live test recompiles the program and traces it
again when gcc and strace are installed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from iochar.analyze.classify import classify, not_a_file

DATA = Path(__file__).resolve().parents[2] / "data" / "strace" / "classify"
WORK = "/tmp/iochar-classify"  # where capture.sh ran the program

requires_strace = pytest.mark.skipif(shutil.which("strace") is None, reason="strace is missing")
requires_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is missing")


def _labels(store, trace: Path, **kw):
    """Classes of the files of the job ``trace`` adds to the store, indexed by file name."""
    store.load(trace)
    job = int(store.sql("SELECT max(job_id) FROM jobs").fetchall()[0][0])
    c = classify(store, job_id=job, **kw)
    return c.assign(name=c.path.str.rsplit("/", n=1).str[-1]).set_index("name", drop=False)


@pytest.fixture
def run(store):
    return _labels(store, DATA / "run.strace")


@pytest.fixture
def restart(store):
    return _labels(store, DATA / "restart.strace")


@pytest.fixture
def threads(store):
    return _labels(store, DATA / "threads.strace")


def test_a_checkpoint_read_back_at_restart_stays_checkpoint(restart):
    ck = restart.loc["state.ckpt"]
    assert ck.bytes_read == 49152 and ck.bytes_written == 2 * 49152  # read back, saved twice
    assert ck.read_back and not ck.read_after_write
    assert ck["class"] == "checkpoint" and "read back once" in ck.reason


def test_b_log_appended_every_iteration_is_output_not_checkpoint(run):
    log = run.loc["run.log"]
    assert log.write_bursts == 9 and log.burst_cv < 0.3  # as regular as a checkpoint
    assert log.rewrite == pytest.approx(1.0)  # but each byte written once
    assert log["class"] == "required" and "each byte about once" in log.reason


def test_c_two_or_three_rewrites_of_the_same_state_are_checkpoint(run, restart):
    three = run.loc["state.ckpt"]
    assert three.write_bursts == 3 and three.rewrite == pytest.approx(3.0)
    assert three["class"] == "checkpoint" and three.burst_interval_s == pytest.approx(0.3, 0.2)
    two = restart.loc["state.ckpt"]
    assert two.write_bursts == 2 and two["class"] == "checkpoint"
    assert "2 bursts 0.3" in two.reason and two.confidence < three.confidence


def test_d_output_in_the_last_part_of_the_run_is_required(run, restart):
    for labels in (run, restart):
        out = labels.loc["final.dat"]
        # the last ~40% of the run: far more than the last 10% (edge)
        assert out.tail_share < 0.9 and out.bytes_written == 5 * 4096
        assert out["class"] == "required"


def test_e_input_read_twice_is_still_required(run):
    inp = run.loc["input.dat"]
    assert inp.bytes_read == 200_000 and inp.reread == pytest.approx(2.0)
    assert inp["class"] == "required" and "at most about twice" in inp.reason


def test_f_output_streamed_over_the_run_is_required(run):
    out = run.loc["stream.dat"]
    assert out.write_bursts == 9 and out.head_share < 0.9 and out.tail_share < 0.9
    assert out["class"] == "required"


def test_g_devices_pipes_sockets_eventfd_proc_sys_are_never_classified(store, run):
    paths = store.sql(
        "SELECT DISTINCT f.path FROM ops o JOIN files f USING (job_id, file_id) "
        "WHERE o.op IN ('read', 'write') AND o.size > 0"
    ).df()["path"]
    gone = paths[not_a_file(paths)]
    # the capture moved data through every one of them...
    for start in ("/dev/null", "pipe:[", "socket:[", "anon_inode:[eventfd]", "/proc/", "/sys/"):
        assert gone.str.startswith(start).any(), start
    # ... and none is labelled
    assert not run.path.isin(gone).any()
    assert not any(run.path.str.startswith(p).any() for p in ("/dev/", "/proc/", "/sys/"))


def test_h_short_many_threaded_run_gets_no_checkpoint_from_scheduling_noise(threads):
    assert "checkpoint" not in set(threads["class"])
    assert threads.loc["shared.dat", "class"] == "required"
    thr = threads[threads.name.str.fullmatch(r"thr\.\d")]
    assert len(thr) == 4 and (thr.write_bursts >= 3).all() and (thr.rewrite == 8).all()
    assert (thr.burst_interval_s < 0.05).all()
    assert thr.reason.str.contains("scheduling noise, no period").all()


def test_h_the_interval_floor_is_what_decides(store):
    """Without the floor, three of the four 2 ms status rewrites would pass as checkpoints."""
    loose = _labels(store, DATA / "threads.strace", min_interval_s=0)
    thr = loose[loose.name.str.fullmatch(r"thr\.\d")]
    assert (thr["class"] == "checkpoint").sum() >= 3


def test_memory_mapped_file_says_strace_cannot_see_its_io(store, run):
    m = run.loc["map.dat"]
    assert m.mapped and m.bytes_written == 6  # the header; the 60 KiB body went by mmap
    assert "memory-mapped: I/O through the mapping is invisible to strace" in m.reason
    calls = store.sql(
        "SELECT o.call FROM ops o JOIN files f USING (job_id, file_id) "
        "WHERE f.path = $p AND o.op = 'other'",
        params={"p": f"{WORK}/map.dat"},
    ).df()["call"]
    assert "mmap" in set(calls)
    assert not run.loc["input.dat"].mapped and "memory-mapped" not in run.loc["input.dat"].reason


@pytest.mark.requires_strace
@requires_strace
@requires_gcc
def test_live_capture_gives_the_same_classes(tmp_path, store):
    exe = tmp_path / "patterns"
    subprocess.run(
        ["gcc", "-O1", "-pthread", "-o", str(exe), str(DATA / "src" / "patterns.c")], check=True
    )
    (tmp_path / "input.dat").write_bytes(b"\0" * 100_000)
    want = {
        "run": {"input.dat": "required", "run.log": "required", "stream.dat": "required",
                "state.ckpt": "checkpoint", "map.dat": "required", "final.dat": "required"},
        "restart": {"state.ckpt": "checkpoint", "final.dat": "required"},
        "threads": {"shared.dat": "required"},
    }  # fmt: skip
    for mode, classes in want.items():
        trace = tmp_path / f"{mode}.strace"
        subprocess.run(
            ["strace", "-f", "-tt", "-T", "-y", "-s", "16", "-o", str(trace), str(exe), mode, "."],
            cwd=tmp_path,
            check=True,
            timeout=60,
        )
        got = _labels(store, trace)
        by = dict(zip(got.name, got["class"], strict=True))
        assert {k: by[k] for k in classes} == classes, mode
        assert not got.path.str.match(r"^(/dev/|/proc/|/sys/|pipe:|socket:|anon_inode:)").any()
        if mode == "threads":
            assert "checkpoint" not in set(got["class"])


def test_a_file_read_only_through_mmap_says_why_no_data_moved(store):
    """atomic_ckpt (data/strace/transfers, src/atomic_ckpt.c) reads input.dat through a
    mapping only: strace sees its open and mmap, no read; the label says why."""
    labels = _labels(store, DATA.parent / "transfers" / "atomic_ckpt.strace")
    inp = labels.loc["input.dat"]
    assert inp.bytes_read == 0 and inp.mapped and inp["class"] == "other"
    assert inp.reason.startswith("no data moved")
    assert inp.reason.endswith("memory-mapped: I/O through the mapping is invisible to strace")
