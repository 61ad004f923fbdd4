"""A load gathers small chunks into inserts of several DuckDB row groups.

DuckDB appends an ``INSERT`` of at most one row group (122,880 rows) on one
thread, so :meth:`iochar.Store.load` holds a table's frames until
``store._INSERT_ROWS`` rows (four row groups) and inserts them at once. These
tests use a real ``strace -f -tt -T -y`` capture (``data/strace/ckpt_tt.strace``,
see its SOURCE.md) parsed in small chunks, with the threshold scaled down: the rows are
those of one insert per chunk, and the inserts are the chunks gathered up to
the threshold.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import iochar
import iochar.store as store_mod

TRACE = Path(__file__).resolve().parents[1] / "data" / "strace" / "ckpt_tt.strace"


def _load(tmp_path, monkeypatch, insert_rows: int, name: str):
    monkeypatch.setattr(store_mod, "_INSERT_ROWS", insert_rows)
    sizes: list[tuple[str, int]] = []
    real = store_mod.Store._append

    def spy(self, table, frame):
        sizes.append((table, frame.num_rows))
        return real(self, table, frame)

    monkeypatch.setattr(store_mod.Store, "_append", spy)
    with iochar.connect(tmp_path / name) as db:
        db.load(TRACE, chunk_rows=20)
        rows = {
            t: db.sql(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall()
            for t in ("jobs", "files", "ops", "file_stats")
        }
    monkeypatch.undo()
    return rows, [n for t, n in sizes if t == "ops"]


def test_small_chunks_are_inserted_together(tmp_path, monkeypatch):
    one, per_chunk = _load(tmp_path, monkeypatch, 1, "one.duckdb")
    assert len(per_chunk) > 4 and max(per_chunk) <= 20  # the loader's chunks, as they came
    gathered, inserts = _load(tmp_path, monkeypatch, 60, "gathered.duckdb")
    assert gathered == one
    total = sum(per_chunk)
    assert sum(inserts) == total
    assert all(n >= 60 for n in inserts[:-1]) and len(inserts) <= math.ceil(total / 60)
    assert len(inserts) < len(per_chunk)


@pytest.mark.parametrize("insert_rows", [10**9])
def test_an_input_under_the_threshold_is_one_insert_per_table(tmp_path, monkeypatch, insert_rows):
    rows, inserts = _load(tmp_path, monkeypatch, insert_rows, "x.duckdb")
    assert len(inserts) == 1 and inserts[0] == len(rows["ops"])
