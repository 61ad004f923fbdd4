"""Store.load_many with parse processes (issue 18, item 3): same database, nothing lost.

The inputs are real tool output shipped under ``data/`` (the same set as
``test_store_batch.py``). The reference is the DESIGN rule that one input is one
all-or-nothing unit: loading with worker processes must give the database that
loading each input with ``Store.load`` gives, ids included, whatever happens to a
worker.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import iochar
from iochar import _parallel
from iochar.errors import InputError, ParameterError
from tests.test_store_batch import STRACE, _inputs, _one_by_one, _snapshot

ROOT = Path(__file__).resolve().parents[1]


def _workers_of_me() -> list[int]:
    """Pids of this process's parse workers (children running ``_parallel._serve``)."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me and b"iochar._parallel import _serve" in cmd:
            found.append(int(entry))
    return found


def _hashed(paths):
    from iochar.load import sha256_of

    return [(p, str(Path(p).resolve()), *sha256_of(p)) for p in paths]


def test_workers_give_the_database_load_gives(tmp_path):
    cut = tmp_path / "cut.strace"  # a real capture cut in the middle of a line
    text = STRACE[0].read_bytes()
    cut.write_bytes(text[: len(text) // 2].rsplit(b"\n", 1)[0] + b"\n12345 10:00:0")
    good = _inputs()
    paths = [*good[:2], cut, *good[2:], good[0]]
    with iochar.connect(":memory:") as db:
        res = db.load_many(paths, workers=2, batch=3)
        got = _snapshot(db)
    bad = [r for r in res if r.error is not None]
    assert [r.uri for r in bad] == [str(cut)] and isinstance(bad[0].error, InputError)
    with iochar.connect(":memory:") as db, pytest.raises(InputError) as direct:
        db.load(cut)
    assert str(bad[0].error) == str(direct.value)  # the worker's error is the parser's own
    assert res[-1].duplicate and res[-1].source_id == res[0].source_id
    assert [r.source_id for r in res if r.error is None and not r.duplicate] == list(
        range(len(good))
    )
    assert got == _one_by_one(good)


def test_runs_keep_their_order_and_rows_across_tasks():
    paths = _inputs()
    items = _hashed(paths)
    out = list(
        _parallel.parse_runs(
            items, kind=None, strict=True, chunk_rows=1000, workers=2, run_inputs=2
        )  # fmt: skip
    )
    assert [inp.uri for inp in out] == [it[1] for it in items]
    from iochar.store import _parse_input

    for inp, it in zip(out, items, strict=True):
        here = _parse_input(*it, None, True, 1000)
        assert inp.rows == here.rows and inp.kind == here.kind
        for table, frames in here.frames.items():
            mine = [f.to_pylist() for f in inp.frames[table]]
            assert mine == [f.to_pylist() for f in frames]


def test_a_killed_worker_loses_nothing():
    items = _hashed(_inputs())
    gen = _parallel.parse_runs(
        items, kind=None, strict=True, chunk_rows=1_000_000, workers=2, run_inputs=2
    )
    first = next(gen)  # both workers are busy or done with their first runs
    victims = _workers_of_me()
    assert len(victims) == 2
    os.kill(victims[1], signal.SIGKILL)
    rest = list(gen)
    got = [first, *rest]
    assert [getattr(g, "uri", None) for g in got] == [it[1] for it in items]
    assert not [g for g in got if isinstance(g, Exception)]
    assert _workers_of_me() == []  # all stopped


def test_an_input_that_kills_its_worker_twice_is_reported():
    items = _hashed(_inputs()[:1])
    stop = threading.Event()
    killed = []

    def killer():
        while not stop.is_set():
            for pid in _workers_of_me():
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                except ProcessLookupError:
                    pass
            time.sleep(0.005)

    t = threading.Thread(target=killer, daemon=True)
    t.start()
    try:
        got = list(_parallel.parse_runs(items, kind=None, strict=True, chunk_rows=1000, workers=2))
    finally:
        stop.set()
        t.join()
    assert len(got) == 1 and isinstance(got[0], InputError)
    assert got[0].path == items[0][1] and "signal 9" in str(got[0])
    assert len(set(killed)) >= 2


def test_a_script_without_a_main_guard_can_use_workers(tmp_path):
    """Workers are fresh interpreters: the caller's script is not run again in them."""
    script = tmp_path / "no_guard.py"
    paths = [str(p) for p in _inputs()]
    script.write_text(
        textwrap.dedent(
            f"""
            import iochar
            db = iochar.connect(":memory:")
            res = db.load_many({paths!r}, workers=2)
            n = db.sql("SELECT count(*) FROM sources").fetchall()[0][0]
            print(sum(r.error is None for r in res), n)
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(len(paths))] * 2


def test_workers_argument_is_checked(store):
    with pytest.raises(ParameterError, match="workers"):
        store.load_many([], workers=0)


def test_default_workers_leave_the_writer_a_core(monkeypatch):
    monkeypatch.setattr(os, "process_cpu_count", lambda: 8, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert _parallel.default_workers(_parallel.MIN_INPUTS) == 7
    assert _parallel.default_workers(_parallel.MIN_INPUTS - 1) == 1
    monkeypatch.setattr(os, "process_cpu_count", lambda: 2, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert _parallel.default_workers(10_000) == 1
