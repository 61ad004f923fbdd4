"""Invariants of loading traces: round trips, chunking, atomic failure."""

from __future__ import annotations

import pyarrow.csv as pacsv
import pytest
from hypothesis import given
from hypothesis import strategies as st

import iochar
from iochar.errors import InputError
from iochar.testing.strategies import trace_csv_bytes, trace_tables

OPS_COLS = 'job_id, rank, op, "offset", size, t_start, t_end'


def _ops_with_paths(db) -> list[tuple]:
    return db.sql(
        f"SELECT {OPS_COLS.replace('job_id', 'o.job_id')}, f.path FROM ops o "
        "LEFT JOIN files f USING (job_id, file_id) ORDER BY ALL"
    ).fetchall()


@given(trace_tables())
def test_csv_store_csv_roundtrip_keeps_every_op(tmp_path_factory, table):
    tmp = tmp_path_factory.mktemp("rt")
    src = tmp / "in.csv"
    src.write_bytes(trace_csv_bytes(table))
    db = iochar.connect(":memory:")
    res = db.load(src)
    assert res.rows["ops"] == table.num_rows
    out = tmp / "out.csv"
    assert db.export_trace(out) == table.num_rows
    # the exported file holds exactly the input's ops (order aside)
    back = pacsv.read_csv(out, convert_options=pacsv.ConvertOptions(strings_can_be_null=True))
    key = ["job_id", "rank", "op", "offset", "size", "t_start", "t_end", "path"]

    def norm(t):
        rows = zip(*(t.column(k).to_pylist() for k in key), strict=True)
        return sorted(rows, key=lambda r: tuple((v is None, v if v is not None else 0) for v in r))

    assert norm(back.select(key).cast(table.select(key).schema)) == norm(table.select(key))
    # and loading the export again gives the same store content
    db2 = iochar.connect(":memory:")
    db2.load(out)
    assert _ops_with_paths(db) == _ops_with_paths(db2)


@given(trace_tables(max_rows=200), st.integers(1, 50))
def test_chunked_load_equals_whole(table, chunk):
    data = trace_csv_bytes(table)
    whole, parts = iochar.connect(":memory:"), iochar.connect(":memory:")
    whole.load(data)
    parts.load(data, chunk_rows=chunk)
    assert _ops_with_paths(whole) == _ops_with_paths(parts)
    q = "SELECT job_id, nprocs, runtime_s FROM jobs ORDER BY ALL"
    assert whole.sql(q).fetchall() == parts.sql(q).fetchall()


@given(trace_tables(max_rows=40), st.data())
def test_cut_input_fails_whole_or_loads_a_prefix(table, data):
    raw = trace_csv_bytes(table)
    cut = data.draw(st.integers(1, len(raw) - 1))
    db = iochar.connect(":memory:")
    db.load(b"op,t_start\nread,0\n")
    before = db.row_counts()
    try:
        res = db.load(raw[:cut], kind="trace-csv")
    except InputError as exc:
        assert exc.line is None or exc.line >= 1
        assert db.row_counts() == before
    else:  # cut right after a newline: a shorter, valid trace
        assert raw[:cut].endswith(b"\n")
        assert res.rows.get("ops", 0) < table.num_rows


@pytest.mark.parametrize("junk", [b"\x00" * 100, bytes(range(256)), b"\xff\xfe\x00garbage\n" * 5])
def test_garbage_raises_input_error(junk):
    db = iochar.connect(":memory:")
    with pytest.raises(InputError):
        db.load(junk, kind="trace-csv")
    assert sum(db.row_counts().values()) == 0
