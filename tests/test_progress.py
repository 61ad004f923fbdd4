"""Progress of long loads on a terminal, silence elsewhere (issue 18, item 5).

The input is real strace output (data/strace/ckpt_ttt.strace: ``strace -f -ttt
-T -y`` of the checkpointing test program) run many times in sequence: each copy
gets its own pid and starts after the previous one ended, as ``strace -f`` of a
shell loop would record it. About 100 MB, so the load takes seconds.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time

import pytest

from iochar.datasets import data_dir
from iochar.progress import LoadProgress, fd_offset_reader, format_line

_LINE = re.compile(rb"^(\d+) (\d+)\.(\d{6}) ")
_PROGRESS = re.compile(
    rb"\r([^\r\n]*?): ([\d.,]+ ?[kMG]? rows), [^\r]*?([\d.]+) s(?:, ETA [^\r\x1b]*)?\x1b\[K"
)


def _repeat_strace(out, copies: int) -> None:
    lines = (data_dir() / "strace" / "ckpt_ttt.strace").read_bytes().splitlines(keepends=True)
    marks = [_LINE.match(ln) for ln in lines]
    assert all(marks)
    us = [int(m[2]) * 1_000_000 + int(m[3]) for m in marks]
    span = us[-1] - us[0] + 1000  # the next run starts 1 ms after this one ended
    with open(out, "wb") as fh:
        for i in range(copies):
            fh.write(
                b"".join(
                    b"%d %d.%06d "
                    % (int(m[1]) + i, (t + i * span) // 10**6, (t + i * span) % 10**6)
                    + ln[m.end() :]
                    for ln, m, t in zip(lines, marks, us, strict=True)
                )
            )


@pytest.fixture(scope="module")
def big_strace(tmp_path_factory):
    path = tmp_path_factory.mktemp("progress") / "loop.strace"
    _repeat_strace(path, 3000)
    return path


def _summary_seconds(out: bytes) -> float:
    m = re.search(rb"-> ops [\d,]+.*\(([\d.]+) s\)", out)
    assert m, out[-500:]
    return float(m[1])


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_progress_line_within_a_second_on_a_terminal(big_strace, tmp_path):
    import fcntl
    import pty
    import struct
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # the child: iochar load with stdout and stderr on a 200-column terminal
        fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        os.execv(
            sys.executable,
            [
                sys.executable,
                "-m",
                "iochar.cli",
                "load",
                str(big_strace),
                "--db",
                str(tmp_path / "p.duckdb"),
            ],
        )
    out = b""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 1.0)
        if r:
            try:
                got = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not got:
                break
            out += got
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out[-2000:]
    seconds = _summary_seconds(out)
    assert seconds > 1.0, f"the load took {seconds} s: too short to need progress"
    lines = _PROGRESS.findall(out)
    assert lines, out[:2000]
    name, rows, first_elapsed = lines[0]
    assert name == b"loop.strace"
    assert float(first_elapsed) <= 1.0  # the first line came within a second
    if seconds > 1.5:
        assert len(lines) >= 2  # and it keeps coming, every 0.5 s
    assert b"MiB of 96.7 MiB" in out  # bytes read of the file's size
    assert b"rows/s" in out and b"ETA" in out
    # the line was erased before the summary: the summary starts a clean line
    assert re.search(rb"\r\x1b\[K[^\r]*-> ops", out)


def test_quiet_when_piped(big_strace, tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "iochar.cli",
            "load",
            str(big_strace),
            "--db",
            str(tmp_path / "q.duckdb"),
        ],
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert _summary_seconds(proc.stdout) > 1.0  # long enough that a terminal would see progress
    assert proc.stderr == b""
    assert b"\r" not in proc.stdout and b"rows/s" not in proc.stdout


def test_bytes_read_is_the_slowest_reader_offset(tmp_path):
    path = data_dir() / "strace" / "ckpt_tt.strace"
    read = fd_offset_reader(path)
    if read is None:
        pytest.skip("no /proc/self/fdinfo (not Linux)")
    assert read() is None  # nothing open yet
    with open(path, "rb", buffering=0) as a, open(path, "rb", buffering=0) as b:
        a.read(1000)
        b.read(3000)
        assert read() == 1000
        a.read(5000)
        assert read() == 3000
    assert read() is None


def test_line_parts_and_eta():
    mib = 1 << 20
    line = format_line("x.strace", 5.0, 1_000, 25 * mib, 100 * mib)
    assert line.startswith("x.strace: 1,000 rows, 25.0 MiB of 100.0 MiB (25%), 5.0 MiB/s")
    assert "200 rows/s" in line and "5.0 s" in line
    assert line.endswith("ETA 15 s")  # 75 MiB left at 5 MiB/s
    # before any byte or row is known: rows and time only, no rate, no ETA
    assert format_line("x", 0.5, 0) == "x: 0 rows, 0.5 s"


def test_not_a_terminal_writes_nothing(tmp_path):
    import io

    buf = io.StringIO()
    with LoadProgress("x", stream=buf, delay=0.0, interval=0.01) as p:
        p.update(10)
        time.sleep(0.1)
    assert buf.getvalue() == "" and p.lines == 0
