"""strace's ``-r`` timestamps (seconds since the previous line), alone or beside ``-ttt``.

``data/strace/ckpt_r_ttt.strace`` is one run of ``ckpt_app -i 5 -c 50 -k 0`` traced with
``strace -f -r -ttt -T -y`` (data/strace/capture.sh, step 6): each line holds its epoch
time and ``(+ SECONDS)``, the time since the previous line of the output (any process).
Read as it is, the absolute times count and the relative ones are stepped over. Cut to
what ``strace -f -r`` or ``strace -r`` alone writes (the epoch field removed, the
relative time right-aligned in 13 columns, as strace prints it), the loader must find
the same calls, files and bytes, and times since the first line that the epoch times of
the same lines confirm.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from iochar import schema
from iochar.load import sniff
from iochar.load.strace import StraceLoader

CAPTURE = Path(__file__).resolve().parents[2] / "data" / "strace" / "ckpt_r_ttt.strace"
LINE = re.compile(r"^(\d+) +(\d+\.\d+) \(\+ +(\d+\.\d+)\) ", re.M)


def _parse(src: bytes) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    chunks = list(StraceLoader().parse(src))
    ops = pl.concat(
        [
            pl.from_arrow(schema.check_frame("ops", c.tables["ops"]))
            for c in chunks
            if "ops" in c.tables
        ]
    )
    jobs = pl.concat(
        [
            pl.from_arrow(schema.check_frame("jobs", c.tables["jobs"]))
            for c in chunks
            if "jobs" in c.tables
        ]
    )
    return ops, jobs, chunks[-1].meta


def _relative_only(text: str, *, pids: bool) -> str:
    def cut(m: re.Match) -> str:
        rel = f"{m.group(3):>13}"
        return f"{m.group(1):<6}{rel} " if pids else f"{rel} "

    out = LINE.sub(cut, text)
    assert "(+" not in out
    return out


@pytest.fixture(scope="module")
def capture() -> str:
    text = CAPTURE.read_text()
    assert len(LINE.findall(text)) == text.count("\n")  # every line has both times
    return text


@pytest.fixture(scope="module")
def absolute(capture):
    return _parse(capture.encode())


def test_relative_beside_absolute_reads_the_absolute_times(capture, absolute):
    ops, jobs, meta = absolute
    assert meta["time_format"] == "-ttt" and meta["durations"] and meta["fd_paths"]
    # the same as the epoch times alone
    plain = re.sub(r" \(\+ +\d+\.\d+\)", "", capture)
    ops2, jobs2, _ = _parse(plain.encode())
    assert ops.equals(ops2)
    assert jobs.equals(jobs2)
    # the program's facts (data/strace/SOURCE.md): input.dat read once in full
    assert jobs["start_ts"].item() is not None
    assert ops.filter(pl.col("op") == "read")["size"].sum() >= 300_000


@pytest.mark.parametrize("pids", [True, False], ids=["-f -r", "-r"])
def test_relative_times_alone(capture, absolute, pids):
    text = _relative_only(capture, pids=pids)
    assert sniff(text.encode()) == "strace"
    ops, jobs, meta = _parse(text.encode())
    assert meta["time_format"] == "-r"
    ref_ops, ref_jobs, _ = absolute
    # the same calls, files and bytes, in the same order
    # (without a pid prefix, the process's pid is set_tid_address's result, as for -ttt)
    same = ["rank", "file_id", "op", "offset", "size", "call", "error"]
    assert ops.select(same).equals(ref_ops.select(same))
    assert jobs["job_key"].item() == ref_jobs["job_key"].item() == "31890"
    # times since the first line: the epoch times of the same lines, to within the
    # jitter of strace's two clocks (-r reads the monotonic clock, -ttt the wall clock)
    for col in ("t_start", "t_end"):
        np.testing.assert_allclose(ops[col].to_numpy(), ref_ops[col].to_numpy(), atol=1e-3)
    assert (np.diff(ops["t_start"].to_numpy()) >= 0).all()
    # no date: -r says how long after the first line, not when
    assert jobs["start_ts"].item() is None
    assert jobs["runtime_s"].item() == pytest.approx(ref_jobs["runtime_s"].item(), abs=1e-3)
    assert jobs["runtime_s"].item() >= 5 * 0.050  # 5 iterations of 50 ms of computation


def test_output_without_timestamps_says_how_to_record_it(capture, tmp_path):
    """strace without -t/-tt/-ttt/-r: refused at line 1 with the flags to record with,
    and the database is left as it was."""
    import iochar
    from iochar.errors import InputError

    untimed = tmp_path / "untimed.strace"
    untimed.write_text(re.sub(r"^\d+ +\d+\.\d+ \(\+ +\d+\.\d+\) ", "", capture, flags=re.M))
    assert untimed.read_text().startswith('execve("./ckpt_app"')
    with iochar.connect(":memory:") as store:
        before = store.row_counts()
        with pytest.raises(InputError) as err:
            store.load(untimed, kind="strace")
        assert store.row_counts() == before
    assert err.value.line == 1
    assert "record with -tt or -ttt" in str(err.value) and "strace -f -tt -T -y" in str(err.value)
