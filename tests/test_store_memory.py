"""A large load runs under a bounded DuckDB buffer pool, and the user's limit comes back.

Issue 18 item 1: memory bounded by a chunk whatever the file size. DuckDB keeps
a transaction's appended blocks in its buffer pool up to ``memory_limit``;
:meth:`iochar.Store.load` lowers it to ``store._LOAD_MEMORY`` for an input of
at least ``store._OVERLAP_BYTES`` so the blocks go to the file as they fill.
The peak RSS itself is measured by ``benchmarks/bench_trace_csv.py --rss``
(a timed or memory-measuring test would be flaky on a shared machine); these
tests pin the mechanism: the bound is in force while a real capture loads, the
user's setting is back afterwards (after a failure too), a lower user limit is
left alone, and the rows are those of an unbounded load.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import iochar
import iochar.store as store_mod
from iochar.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "data"
CAPTURE = DATA / "strace" / "ckpt_tt.strace"  # real `strace -f -tt -T -y -o` output


def _limit(db) -> str:
    return db.sql("SELECT current_setting('memory_limit')").fetchall()[0][0]


def _rows(db) -> dict:
    return {
        t: db.sql(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall()
        for t in ("jobs", "files", "file_stats", "ops")
    }


@pytest.fixture
def large(monkeypatch):
    """Treat the real capture as a large input (it is a few KiB)."""
    monkeypatch.setattr(store_mod, "_OVERLAP_BYTES", 1)


def test_the_bound_holds_during_the_load_and_the_setting_comes_back(tmp_path, large):
    seen = []
    with iochar.connect(tmp_path / "a.duckdb") as db:
        db.sql("SET memory_limit = '2GiB'")
        before = _limit(db)
        res = db.load(CAPTURE, progress=lambda rows, total: seen.append(_limit(db)))
        assert res.rows["ops"] > 0
        assert seen and set(seen) == {"128.0 MiB"}
        assert _limit(db) == before == "2.0 GiB"
        bounded = _rows(db)
    with iochar.connect(tmp_path / "b.duckdb") as db:  # no bound: the same rows
        store_mod._OVERLAP_BYTES = 1 << 40
        try:
            db.load(CAPTURE)
        finally:
            store_mod._OVERLAP_BYTES = 1
        assert _rows(db) == bounded


def test_a_lower_user_limit_is_left_alone(tmp_path, large):
    seen = []
    with iochar.connect(tmp_path / "a.duckdb") as db:
        db.sql("SET memory_limit = '64MiB'")
        db.load(CAPTURE, progress=lambda rows, total: seen.append(_limit(db)))
        assert set(seen) == {"64.0 MiB"} and _limit(db) == "64.0 MiB"


def test_a_failed_large_load_restores_the_limit_and_the_database(tmp_path, large):
    bad = tmp_path / "bad.strace"
    text = CAPTURE.read_text()
    bad.write_text(text + "12345 12:00:00.000000 write(3</x>, \"a\", 1) = not-a-number\n")
    with iochar.connect(tmp_path / "a.duckdb") as db:
        db.sql("SET memory_limit = '3GiB'")
        with pytest.raises(InputError):
            db.load(bad, kind="strace")
        assert _limit(db) == "3.0 GiB"
        assert db.row_counts()["ops"] == 0 and db.row_counts()["sources"] == 0


def test_settings_are_read_as_duckdb_prints_them():
    assert store_mod._bytes_of("18.8 GiB") == pytest.approx(18.8 * 2**30)
    assert store_mod._bytes_of("976.5 KiB") == pytest.approx(976.5 * 1024)
    assert store_mod._bytes_of("128.0 MiB") == store_mod._LOAD_MEMORY
    assert store_mod._bytes_of("500 MB") == 500e6


# -- a large new input is inserted while it is hashed (Store._may_hold) -------------


def _appends(monkeypatch) -> list[str]:
    seen: list[str] = []
    real = store_mod.Store._append

    def spy(self, table, frame):
        seen.append(table)
        return real(self, table, frame)

    monkeypatch.setattr(store_mod.Store, "_append", spy)
    return seen


def test_a_new_large_input_records_its_digest_and_size(tmp_path, large):
    import hashlib

    with iochar.connect(tmp_path / "a.duckdb") as db:
        res = db.load(CAPTURE)
        sha, size = db.sql("SELECT sha256, size_bytes FROM sources").fetchall()[0]
    assert res.sha256 == sha == hashlib.sha256(CAPTURE.read_bytes()).hexdigest()
    assert size == CAPTURE.stat().st_size and not res.duplicate


def test_a_decompressed_copy_is_found_before_commit_and_rolled_back(tmp_path, large, monkeypatch):
    """Same content, new path, new size: inserted while hashed, then refused as a duplicate."""
    import gzip

    packed = tmp_path / "ckpt.strace.gz"
    packed.write_bytes(gzip.compress(CAPTURE.read_bytes()))
    plain = tmp_path / "copy.strace"
    plain.write_bytes(CAPTURE.read_bytes())
    with iochar.connect(tmp_path / "a.duckdb") as db:
        first = db.load(packed)
        before = _rows(db) | {"sources": db.sql("SELECT * FROM sources").fetchall()}
        inserted = _appends(monkeypatch)
        again = db.load(plain)
        assert inserted, "the new path and size should be inserted before the hash is known"
        assert again.duplicate and again.source_id == first.source_id
        assert again.sha256 == first.sha256
        assert _rows(db) | {"sources": db.sql("SELECT * FROM sources").fetchall()} == before


def test_a_path_or_size_seen_before_waits_for_the_hash(tmp_path, large, monkeypatch):
    copy = tmp_path / "same-size.strace"
    copy.write_bytes(CAPTURE.read_bytes())
    with iochar.connect(tmp_path / "a.duckdb") as db:
        db.load(CAPTURE)
        inserted = _appends(monkeypatch)
        assert db.load(CAPTURE).duplicate  # the same path
        assert db.load(copy).duplicate  # the same size
        assert inserted == []
