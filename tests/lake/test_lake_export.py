"""``iochar export --lake DIR``: a database into a lake and back, row for row (issue 23)."""

from __future__ import annotations

from pathlib import Path

import pytest

import iochar

pytest.importorskip("darshan", reason="reading Darshan logs needs the darshan extra")

DATA = Path(__file__).resolve().parents[2] / "data"


def test_database_to_lake_and_back(tmp_path):
    from iochar.cli import main

    logs = sorted(str(p) for p in (DATA / "darshan").rglob("*.darshan"))[:8]
    counters = sorted(str(p) for p in (DATA / "brw_stats").glob("*series.txt"))
    db_path = tmp_path / "a.duckdb"
    with iochar.connect(str(db_path)) as db:
        db.load_many([*logs, *counters])
    assert main(["export", "--lake", str(tmp_path / "lake"), "--db", str(db_path)]) == 0
    assert main(["export", "--lake", str(tmp_path / "lake"), str(tmp_path / "b.duckdb")]) == 0
    a = iochar.connect(str(db_path), read_only=True)
    lake = iochar.connect(lake=str(tmp_path / "lake"))
    b = iochar.connect(str(tmp_path / "b.duckdb"), read_only=True)
    for table in ("sources", "jobs", "files", "file_stats", "module_counters", "size_hist"):
        q = f'SELECT * FROM "{table}" ORDER BY ALL'
        want = a.sql(q).df()
        assert len(want) > 0, table
        assert want.equals(lake.sql(q).df()), table
        assert want.equals(b.sql(q).df()), table
    # DIR is a lake now: export reads it into a new database, whose name is missing
    assert main(["export", "--lake", str(tmp_path / "lake"), "--db", str(db_path)]) == 2
