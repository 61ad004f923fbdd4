"""Several processes on one database: bounded waits for the lock, notebooks that let go.

DuckDB lets one process write a file or several read it, never both. These tests use
real processes (a holder started with ``python -c``, the ``iochar`` command, a Jupyter
kernel), no mocks.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import iochar
from iochar.errors import DatabaseLockedError, IocharError, ParameterError

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "data" / "trace" / "dxt-posix-first150.csv"  # 150 ops
CSV = b"op,t_start,size,path\nwrite,0.5,4096,/a\n"


@pytest.fixture
def dbpath(tmp_path) -> str:
    """An iochar database with one op, closed (no connection in this process)."""
    p = str(tmp_path / "shared.duckdb")
    with iochar.connect(p) as db:
        db.load(CSV, kind="trace-csv")
    return p


def _holder(path: str, *, read_only: bool = True, seconds: float | None = None):
    """A second process holding ``path``; it has the lock when this returns.

    It lets go after ``seconds``, or (None) when its stdin is closed.
    """
    release = f"time.sleep({seconds})" if seconds is not None else "sys.stdin.read()"
    code = textwrap.dedent(
        f"""
        import sys, time, duckdb
        con = duckdb.connect({path!r}, read_only={read_only})
        print("held", flush=True)
        {release}
        con.close()
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def _stop(proc) -> None:
    if proc.poll() is None:
        proc.stdin.close()
        proc.wait(timeout=10)


def _counts(path: str) -> dict[str, int]:
    with iochar.connect(path, read_only=True, wait=0) as db:
        return db.row_counts() | {"sources": len(db.sources())}


def _iochar(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "iochar.cli", *args], capture_output=True, text=True, timeout=60
    )


# ---------------------------------------------------------------------------- library
def test_connect_wait_zero_names_the_holder_at_once(dbpath):
    holder = _holder(dbpath)
    try:
        t0 = time.monotonic()
        with pytest.raises(DatabaseLockedError) as err:
            iochar.connect(dbpath, wait=0)
        assert time.monotonic() - t0 < 1.0
    finally:
        _stop(holder)
    e = err.value
    assert isinstance(e, IocharError) and not isinstance(e, ValueError)
    assert e.pid == holder.pid and e.path == dbpath
    msg = str(e)
    assert "\n" not in msg
    assert msg.startswith(f"database {dbpath!r} is locked by another process (PID {holder.pid}")
    assert "gave up at once (wait 0)" in msg and msg.endswith("retry with a longer wait=SECONDS")


def test_connect_waits_until_the_holder_lets_go(dbpath):
    holder = _holder(dbpath, seconds=1.0)
    try:
        t0 = time.monotonic()
        with iochar.connect(dbpath, wait=5) as db:
            took = time.monotonic() - t0
            db.load(b"op,t_start,size,path\nread,0.7,10,/b\n", kind="trace-csv")
    finally:
        _stop(holder)
    assert 0.5 < took < 5
    assert _counts(dbpath)["ops"] == 2


def test_a_reader_waits_for_a_writer_too(dbpath):
    holder = _holder(dbpath, read_only=False)
    try:
        with pytest.raises(DatabaseLockedError, match=r"still locked after 0.3 s"):
            iochar.connect(dbpath, read_only=True, wait=0.3)
    finally:
        _stop(holder)


def test_release_frees_the_file_and_the_next_query_sees_new_rows(dbpath):
    db = iochar.connect(dbpath, read_only=True, wait=0)
    assert db.row_counts()["ops"] == 1
    db.release()
    res = _iochar("load", str(SMALL), "--db", dbpath, "--wait", "0")
    assert res.returncode == 0, res.stderr
    assert db.row_counts()["ops"] == 151  # opened again, transparently
    db.close()
    with pytest.raises(IocharError, match="is closed"):
        db.sql("SELECT 1")


def test_memory_store_is_never_released():
    db = iochar.connect(":memory:")
    db.load(CSV, kind="trace-csv")
    db.release()
    assert db.row_counts()["ops"] == 1


def test_wait_is_checked(dbpath, monkeypatch):
    with pytest.raises(ParameterError, match="'wait' parameter of Store"):
        iochar.connect(dbpath, wait=-1)
    monkeypatch.setenv("IOCHAR_WAIT", "soon")
    with pytest.raises(IocharError, match=r"\$IOCHAR_WAIT must be a number"):
        iochar.connect(dbpath)
    monkeypatch.setenv("IOCHAR_WAIT", "0.25")
    with iochar.connect(dbpath) as db:
        assert db.wait == 0.25
    res = _iochar("info", "--db", dbpath, "--wait", "-1")
    assert res.returncode == 2 and "--wait: expected seconds >= 0" in res.stderr


# ---------------------------------------------------------------------------- command
def test_load_wait_zero_fails_at_once_and_changes_nothing(dbpath):
    before = _counts(dbpath)
    holder = _holder(dbpath)
    try:
        t0 = time.monotonic()
        res = _iochar("load", str(SMALL), "--db", dbpath, "--wait", "0")
        took = time.monotonic() - t0
    finally:
        _stop(holder)
    assert res.returncode == 2
    assert res.stdout == ""
    # one line; the holder's program is as DuckDB names it (python3.11, say)
    assert re.fullmatch(
        re.escape(f"iochar: error: database {dbpath!r} is locked by another process ")
        + rf"\(PID {holder.pid}, [^)\n]+\); "
        + re.escape(
            "gave up at once (wait 0). Close that program (for a notebook: shut its "
            "kernel down) or retry with a longer --wait SECONDS\n"
        ),
        res.stderr,
    ), res.stderr
    assert took < 10  # the interpreter's start-up; no waiting
    assert _counts(dbpath) == before


def test_load_wait_succeeds_when_the_holder_lets_go(dbpath):
    holder = _holder(dbpath, seconds=1.0)
    try:
        res = _iochar("load", str(SMALL), "--db", dbpath, "--wait", "5")
    finally:
        _stop(holder)
    assert res.returncode == 0, res.stderr
    assert "ops 150" in res.stdout
    assert _counts(dbpath)["ops"] == 151


# ---------------------------------------------------------------------------- notebook
@pytest.fixture
def kernel():
    """A real Jupyter kernel (ipykernel) and a function running one cell in it."""
    jc = pytest.importorskip("jupyter_client.manager")
    km, kc = jc.start_new_kernel(
        kernel_name="python3", extra_arguments=["--IPKernelApp.log_level=CRITICAL"]
    )

    def run(code: str, *, wait: bool = True):
        """Run a cell; with wait=False return at its first printed line."""
        out: list[str] = []
        if wait:
            reply = kc.execute_interactive(
                code,
                timeout=60,
                output_hook=lambda m: out.append(
                    m["content"].get("text", "")
                    or m["content"].get("evalue", "")
                    and f"{m['content']['ename']}: {m['content']['evalue']}"
                ),
            )
            return reply["content"]["status"], "".join(o for o in out if o)
        msg_id = kc.execute(code)
        while True:
            m = kc.get_iopub_msg(timeout=60)
            if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "stream":
                return msg_id, m["content"]["text"]

    try:
        yield run, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_open_notebook_lets_loads_through_between_cells(dbpath, kernel):
    run, kc = kernel
    status, out = run(
        "import os\n"
        "from iochar.report import notebook as nb\n"
        f"db = nb.open_store({dbpath!r})\n"
        "print(os.getpid(), db.row_counts()['ops'])"
    )
    assert status == "ok", out
    kernel_pid, ops = map(int, out.split())
    assert ops == 1

    # the kernel is idle: the file is free, a load needs no wait at all
    res = _iochar("load", str(SMALL), "--db", dbpath, "--wait", "0")
    assert res.returncode == 0, res.stderr
    status, out = run("print(db.row_counts()['ops'])")
    assert (status, out.strip()) == ("ok", "151")

    # while a cell queries, the kernel holds the file: a writer fails at once with
    # wait=0 naming the kernel, and with a wait gets in as soon as the cell ends
    msg_id, line = run(
        "n = db.row_counts()['ops']\nprint('holding', flush=True)\nimport time; time.sleep(1.5)",
        wait=False,
    )
    assert line.strip() == "holding"
    with pytest.raises(DatabaseLockedError) as err:
        iochar.connect(dbpath, wait=0)
    assert err.value.pid == kernel_pid
    t0 = time.monotonic()
    with iochar.connect(dbpath, wait=10) as db:
        assert time.monotonic() - t0 > 0.2
        db.load(b"op,t_start,size,path\nread,9.5,1,/z\n", kind="trace-csv")
    reply = kc.get_shell_msg(timeout=30)
    assert reply["parent_header"]["msg_id"] == msg_id and reply["content"]["status"] == "ok"
    status, out = run("print(db.row_counts()['ops'])")
    assert (status, out.strip()) == ("ok", "152")
