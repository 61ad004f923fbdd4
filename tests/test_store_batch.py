"""Store.load_many: many small inputs per transaction, each input still all or nothing.

Every input here is real tool output shipped under ``data/`` (Darshan logs of the
darshan-hpc collection and of this project's captures, strace captures of real
programs; see the SOURCE.md files next to them). The reference for each batch is
the same inputs loaded one by one with ``Store.load``: the DESIGN rules (one
input is one all-or-nothing unit, the same bytes load once) say the database must
end up identical, ids included.
"""

from __future__ import annotations

import gzip
import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

import iochar
from iochar import schema
from iochar.errors import InputError, IocharError, ParameterError
from iochar.store import Store

# as tests/load/test_darshan.py: built here, since another conftest.py can shadow ``conftest``
DATA_DIR = Path(__file__).resolve().parents[1] / "data"
HAS_DARSHAN = importlib.util.find_spec("darshan") is not None
requires_darshan = pytest.mark.skipif(not HAS_DARSHAN, reason="the darshan package is missing")

DARSHAN = [
    DATA_DIR / "darshan" / "example.darshan",
    DATA_DIR / "darshan" / "sample-dxt-simple.darshan",
    DATA_DIR / "darshan" / "ior_hdf5_example.darshan",
    DATA_DIR / "darshan" / "darshan-logs" / "release_logs" / "mpi-io-test-x86_64-3.4.7.darshan",
    DATA_DIR / "darshan" / "darshan-logs" / "apmpi_apxc" / "mpi-io-test.darshan",
]
STRACE = [
    DATA_DIR / "strace" / "ckpt_tt.strace",
    DATA_DIR / "strace" / "workers_o.strace",
    DATA_DIR / "strace" / "ckpt_plain.strace",
]
TRACE = [DATA_DIR / "trace" / "dxt-posix-first150.csv"]

#: sources columns that do not depend on when the load ran
_SOURCE_COLS = "source_id, kind, uri, sha256, size_bytes, rows, meta"


def _inputs() -> list:
    return (DARSHAN if HAS_DARSHAN else []) + STRACE + TRACE


def _snapshot(db: Store) -> dict[str, list]:
    """Every row of every contract table, sorted; ``sources`` without ``loaded_at``."""
    out = {"sources": db.sql(f"SELECT {_SOURCE_COLS} FROM sources ORDER BY source_id").fetchall()}
    for table in schema.TABLES:
        if table != "sources":
            out[table] = db.sql(f'SELECT * FROM "{table}" ORDER BY ALL').fetchall()
    return out


def _one_by_one(paths) -> dict[str, list]:
    with iochar.connect(":memory:") as ref:
        for p in paths:
            ref.load(p)
        return _snapshot(ref)


def _ids_unique(db: Store) -> None:
    for table, col in (("jobs", "job_id"), ("files", "file_id"), ("snapshots", "snapshot_id")):
        n, distinct = db.sql(f'SELECT count(*), count(DISTINCT "{col}") FROM "{table}"').fetchall()[
            0
        ]
        assert n == distinct, f"{table}.{col} repeats"


def test_load_many_equals_loading_each_with_load():
    paths = _inputs()
    with iochar.connect(":memory:") as db:
        res = db.load_many(paths, batch=3)
        assert [r.error for r in res] == [None] * len(paths)
        assert [r.source_id for r in res] == list(range(len(paths)))
        assert [r.uri for r in res] == [str(p.resolve()) for p in paths]
        got = _snapshot(db)
        assert sum(r.total_rows for r in res) == sum(
            len(v) for t, v in got.items() if t != "sources"
        )
        _ids_unique(db)
    assert got == _one_by_one(paths)


def test_a_corrupt_input_is_reported_and_the_others_land(tmp_path):
    cut = tmp_path / "cut.strace"  # a real capture cut in the middle of a line
    text = STRACE[0].read_bytes()
    cut.write_bytes(text[: len(text) // 2].rsplit(b"\n", 1)[0] + b"\n12345 10:00:0")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 4)
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    good = _inputs()
    paths = [good[0], cut, *good[1:3], junk, empty, *good[3:]]
    with iochar.connect(":memory:") as db:
        res = db.load_many(paths, batch=4)
        bad = {r.uri: r.error for r in res if r.error is not None}
        got = _snapshot(db)
    assert set(bad) == {str(cut), str(junk), str(empty)}
    for uri, err in bad.items():
        assert isinstance(err, InputError) and os.path.abspath(err.path) == uri
    # the cut capture names its broken line, as Store.load would
    with iochar.connect(":memory:") as db, pytest.raises(InputError) as direct:
        db.load(cut)
    assert str(bad[str(cut)]) == str(direct.value)
    assert got == _one_by_one(good)
    summary = next(r for r in res if r.error is not None).summary()
    assert "not loaded" in summary


def test_duplicates_in_the_batch_and_in_the_database_load_once(tmp_path):
    a, b = STRACE[0], STRACE[1]
    copy = tmp_path / "copy.strace"
    copy.write_bytes(a.read_bytes())
    gz = tmp_path / "b.strace.gz"
    gz.write_bytes(gzip.compress(b.read_bytes()))
    with iochar.connect(":memory:") as db:
        db.load(TRACE[0])
        res = db.load_many([a, copy, TRACE[0], b, gz, a])
        assert [r.duplicate for r in res] == [False, True, True, False, True, True]
        assert [r.source_id for r in res] == [1, 1, 0, 2, 2, 1]
        assert res[1].uri == str(copy) and res[4].uri == str(gz)
        assert db.sql("SELECT count(*) FROM sources").fetchall()[0][0] == 3
        # the same bytes asked for as another kind are refused, and reported
        again = db.load_many([a], kind="trace-csv")
        assert isinstance(again[0].error, ParameterError) and again[0].source_id is None
        got = _snapshot(db)
    assert got == _one_by_one([TRACE[0], a, b])


def test_a_database_error_mid_batch_retries_input_by_input(monkeypatch):
    paths = _inputs()
    refused = str(paths[2].resolve())
    calls = {"batch": 0}
    real = Store._append

    def flaky(self, table, frame):
        real(self, table, frame)  # rows of the batch are in, uncommitted
        if table == "sources":
            if frame.num_rows > 1:
                calls["batch"] += 1
                raise duckdb.IOException("simulated: disk full during the batch")
            if frame.column("uri")[0].as_py() == refused:
                raise duckdb.ConstraintException("simulated: this input is refused")

    monkeypatch.setattr(Store, "_append", flaky)
    with iochar.connect(":memory:") as db:
        res = db.load_many(paths, batch=len(paths))
        assert calls["batch"] == 1
        errors = [r.uri for r in res if r.error is not None]
        assert errors == [refused]
        assert "simulated: this input is refused" in str(res[2].error)
        assert isinstance(res[2].error, IocharError) and res[2].sha256
        got = _snapshot(db)
        _ids_unique(db)
    monkeypatch.undo()
    assert got == _one_by_one([p for p in paths if str(p.resolve()) != refused])


def test_ids_continue_after_load_many_and_after_another_connection_wrote(tmp_path):
    paths = _inputs()
    first, middle, last = paths[:3], paths[3:5], paths[5:]
    path = str(tmp_path / "ids.duckdb")
    a = iochar.connect(path)
    a.load_many(first)
    b = iochar.connect(path)  # another connection to the same database writes
    for p in middle:
        b.load(p)
    a.load_many(last[:2])
    b.close()
    a.release()  # another process writes while this store lets go of the file
    code = f"import iochar; iochar.connect({path!r}).load_many({[str(p) for p in last[2:]]!r})"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    got = _snapshot(a)
    _ids_unique(a)
    a.close()
    assert got == _one_by_one(paths)


def test_load_many_arguments_are_checked(store):
    with pytest.raises(ParameterError, match="'batch' parameter of Store.load_many"):
        store.load_many([STRACE[0]], batch=0)
    with pytest.raises(ParameterError, match="'batch_rows' parameter"):
        store.load_many([STRACE[0]], batch_rows=True)
    assert store.load_many([]) == []
    seen = []
    store.load_many(STRACE, batch=2, progress=lambda n, total: seen.append((n, total)))
    assert seen == [(2, 3), (3, 3)]


def test_kill_during_a_batch_leaves_nothing_visible(tmp_path):
    """SIGKILL after the batch's rows are inserted, before COMMIT: none of them may show."""
    path = str(tmp_path / "killed.duckdb")
    with iochar.connect(path) as db:
        db.load(TRACE[0])
        before = _snapshot(db)
    paths = [str(p) for p in _inputs() if p != TRACE[0]]
    code = textwrap.dedent(
        f"""
        import sys, time
        import iochar
        from iochar.store import Store

        real = Store._append

        def hold(self, table, frame):
            real(self, table, frame)
            if table == "sources":  # every table of the batch is in; COMMIT is next
                print("inserted", frame.num_rows, flush=True)
                time.sleep(120)

        Store._append = hold
        iochar.connect({path!r}).load_many({paths!r})
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().split()
        assert line == ["inserted", str(len(paths))]
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    with iochar.connect(path) as db:
        assert _snapshot(db) == before
        res = db.load_many(paths)  # and the same inputs load afterwards, once
        assert [r.duplicate for r in res] == [False] * len(paths)
        got = _snapshot(db)
    assert got == _one_by_one([TRACE[0], *paths])


@requires_darshan
def test_a_large_file_streams_through_load_at_its_place(tmp_path, monkeypatch):
    import iochar.store as store_mod

    monkeypatch.setattr(store_mod, "_OVERLAP_BYTES", DARSHAN[0].stat().st_size)
    paths = _inputs()
    with iochar.connect(":memory:") as db:
        streamed = []
        real = Store.load

        def spy(self, src, **kw):
            streamed.append(src)
            return real(self, src, **kw)

        monkeypatch.setattr(Store, "load", spy)
        res = db.load_many(paths, batch=2)
        monkeypatch.undo()
        least = DARSHAN[0].stat().st_size
        assert DARSHAN[0] in streamed and all(os.path.getsize(s) >= least for s in streamed)
        assert [r.source_id for r in res] == list(range(len(paths)))
        got = _snapshot(db)
    assert got == _one_by_one(paths)


def test_tolerant_load_many_counts_skips_like_load():
    """A real DXT trace with one damaged line, as bytes: skipped, counted, warned once."""
    damaged = TRACE[0].read_bytes() + b"read,not-a-number,1,/x\n"
    with iochar.connect(":memory:") as db:
        with pytest.warns(iochar.errors.SkippedRecordsWarning, match="skipped 1 bad record"):
            [res] = db.load_many([damaged], strict=False, chunk_rows=40)
        got = _snapshot(db)
    with iochar.connect(":memory:") as ref:
        with pytest.warns(iochar.errors.SkippedRecordsWarning):
            one = ref.load(damaged, strict=False, chunk_rows=40)
        want = _snapshot(ref)
    assert res.error is None and res.skipped == one.skipped == 1
    assert res.skips[0].line == one.skips[0].line == 152
    assert got == want
