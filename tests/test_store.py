"""The store: schema, versioning, provenance, transactions, read-only use."""

from __future__ import annotations

import json

import duckdb
import pytest

import iochar
from iochar import schema
from iochar.errors import IocharError, ParameterError

CSV = b"op,t_start,size,path\nwrite,0.5,4096,/a\nread,0.7,10,/b\n"


def test_schema_has_every_contract_table(store):
    assert store.tables() == list(schema.TABLES)
    assert store.schema_version == schema.SCHEMA_VERSION
    cols = {r[0] for r in store.sql("DESCRIBE ops").fetchall()}
    for c in ("job_id", "rank", "file_id", "op", "offset", "size", "t_start", "t_end", "cpu_s"):
        assert c in cols


def test_default_path_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("IOCHAR_DB", str(tmp_path / "env.duckdb"))
    with iochar.connect() as db:
        assert db.path == str(tmp_path / "env.duckdb")
    assert (tmp_path / "env.duckdb").exists()


def test_sources_row_records_provenance(store, tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes(CSV)
    res = store.load(p)
    row = store.sql("SELECT kind, uri, sha256, size_bytes, rows, meta FROM sources").fetchall()[0]
    kind, uri, sha, size, rows, meta = row
    import hashlib

    assert kind == "trace-csv" and uri == str(p.resolve())
    assert sha == hashlib.sha256(CSV).hexdigest() == res.sha256
    assert size == len(CSV) and rows == res.total_rows == 2 + 1 + 2
    assert json.loads(meta)["rows"] == {"ops": 2, "jobs": 1, "files": 2}
    assert store.sql("SELECT DISTINCT source_id FROM jobs").fetchall() == [(res.source_id,)]


def test_schema_version_mismatch_is_refused(tmp_path):
    p = str(tmp_path / "old.duckdb")
    iochar.connect(p).close()
    con = duckdb.connect(p)
    con.execute("UPDATE iochar_meta SET value = '0' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(IocharError, match="schema version 0"):
        iochar.connect(p)


def test_read_only_store_refuses_loads(tmp_path):
    p = str(tmp_path / "ro.duckdb")
    with iochar.connect(p) as db:
        db.load(CSV)
    with iochar.connect(p, read_only=True) as db:
        assert db.row_counts()["ops"] == 2
        with pytest.raises(IocharError, match="read-only"):
            db.load(CSV + b"read,0.9,1,/c\n")


def test_non_iochar_database_is_refused_read_only(tmp_path):
    p = str(tmp_path / "other.duckdb")
    duckdb.connect(p).close()
    with pytest.raises(IocharError, match="not an iochar database"):
        iochar.connect(p, read_only=True)


def test_chunk_rows_is_validated(store):
    with pytest.raises(ParameterError, match="'chunk_rows' parameter of Store.load"):
        store.load(CSV, chunk_rows=0)


def test_parser_error_mid_stream_rolls_back_earlier_chunks(store):
    good = b"".join(b"read,%d,1,/f\n" % i for i in range(50))
    data = b"op,t_start,size,path\n" + good + b"read,x,1,/f\n"
    with pytest.raises(iochar.InputError) as err:
        store.load(data, chunk_rows=10)
    assert err.value.line == 52
    assert sum(store.row_counts().values()) == 0


def test_progress_is_reported(store):
    seen = []
    store.load(CSV, progress=lambda rows, total: seen.append(rows))
    assert seen and seen[-1] == 5
