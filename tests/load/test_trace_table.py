"""trace-csv / trace-parquet: layout, validation, errors, round trips."""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import iochar
from iochar.errors import InputError, SkippedRecordsWarning, UnknownKindError
from iochar.load import parse, sniff

CSV = (
    b"job_id,rank,path,op,offset,size,t_start,t_end\n"
    b"0,0,/in.dat,open,,,0.0,0.001\n"
    b"0,0,/in.dat,read,0,4096,0.01,0.02\n"
    b"0,1,/ckpt.1,write,0,1048576,0.5,0.6\n"
    b"0,0,/in.dat,read,4096,4096,0.03,0.04\n"
    b"0,1,/ckpt.1,sync,,,0.61,0.7\n"
)


def test_sniff_csv_and_parquet(tmp_path):
    assert sniff(CSV) == "trace-csv"
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"op": ["read"], "t_start": [0.0]}), p)
    assert sniff(p) == "trace-parquet"


def test_load_assigns_file_ids_per_job_and_path(store):
    res = store.load(CSV)
    assert res.rows == {"ops": 5, "jobs": 1, "files": 2}
    files = dict(store.sql("SELECT path, file_id FROM files").fetchall())
    assert set(files) == {"/in.dat", "/ckpt.1"}
    reads = store.sql(
        "SELECT sum(size) FROM ops JOIN files USING (job_id, file_id) "
        "WHERE path = '/in.dat' AND op = 'read'"
    ).fetchall()[0][0]
    assert reads == 8192
    job = store.sql("SELECT nprocs, runtime_s FROM jobs").fetchall()[0]
    assert job == (2, 0.7)


def test_ids_are_shifted_for_second_source(store):
    store.load(CSV)
    store.load(CSV.replace(b"/in.dat", b"/other.dat"))
    assert store.sql(
        "SELECT count(DISTINCT job_id), count(DISTINCT file_id) FROM files"
    ).fetchall() == [(2, 4)]
    # every op points at a file of its own job
    orphans = store.sql(
        "SELECT count(*) FROM ops o ANTI JOIN files f USING (job_id, file_id) "
        "WHERE o.file_id IS NOT NULL"
    ).fetchall()[0][0]
    assert orphans == 0


def test_export_then_load_keeps_every_op(store, tmp_path):
    store.load(CSV)
    out = tmp_path / "back.csv"
    assert store.export_trace(out) == 5
    again = iochar.connect(":memory:")
    again.load(out)
    cols = 'job_id, rank, file_id, op, "offset", size, t_start, t_end'
    q = f"SELECT {cols} FROM ops ORDER BY ALL"
    assert store.sql(q).fetchall() == again.sql(q).fetchall()


def test_parquet_roundtrip_equals_csv(store, tmp_path):
    store.load(CSV)
    out = tmp_path / "back.parquet"
    store.export_trace(out)
    other = iochar.connect(":memory:")
    res = other.load(out)
    assert res.kind == "trace-parquet"
    q = 'SELECT rank, op, "offset", size, t_start, t_end FROM ops ORDER BY ALL'
    assert store.sql(q).fetchall() == other.sql(q).fetchall()


def test_loading_twice_is_a_noop(store):
    first = store.load(CSV)
    before = store.row_counts()
    second = store.load(CSV)
    assert second.duplicate and second.source_id == first.source_id
    assert "already loaded" in second.summary()
    assert store.row_counts() == before


@pytest.mark.parametrize(
    ("data", "line", "words"),
    [
        (b"op,t_start\nwrite,abc\n", 2, "column 't_start' to be double"),
        (b"op,t_start\nwrite,1\nread,0.5\n", 3, "not going backwards"),
        (b"op,t_start\nwrote,1\n", 2, "op one of"),
        (b"op,t_start,size\nwrite,1,2\nread,2\n", 3, "3 fields as in the header"),
        (b"op,t_start\nwrite,1\nread,2", 3, "ending in a newline"),
        (b"op,t_start,t_end\nwrite,2,1\n", 2, "t_end >= t_start"),
        (b"op,t_start,size\nwrite,1,-5\n", 2, "size >= 0"),
        (b"op,size\nwrite,1\n", 1, "missing t_start"),
        (b"op,t_start,op\nwrite,1,read\n", 1, "each column named once"),
    ],
)
def test_bad_csv_raises_with_line(store, data, line, words):
    before = store.row_counts()
    with pytest.raises(InputError) as err:
        store.load(data, kind="trace-csv")
    assert err.value.line == line
    assert words in str(err.value)
    assert str(err.value).startswith(f"<buffer>:{line}: expected")
    assert store.row_counts() == before


def test_backwards_time_across_chunks_is_caught():
    rows = b"".join(b"write,%d\n" % t for t in range(100)) + b"read,50\n"
    with pytest.raises(InputError) as err:
        list(parse(b"op,t_start\n" + rows, "trace-csv", chunk_rows=7))
    assert err.value.line == 102


def test_other_ranks_may_interleave_in_time():
    data = b"rank,op,t_start\n0,read,1\n1,read,0.5\n0,read,2\n1,read,0.7\n"
    chunks = list(parse(data, "trace-csv"))
    assert sum(c.tables["ops"].num_rows for c in chunks if "ops" in c.tables) == 4


def test_empty_and_garbage(store):
    with pytest.raises(InputError, match="non-empty"):
        store.load(b"", kind="trace-csv")
    with pytest.raises(UnknownKindError) as err:
        store.load(bytes(range(256)) * 4)
    assert "trace-csv" in str(err.value) and "kind=" in str(err.value)
    with pytest.raises(InputError, match=":1: expected"):
        store.load(b"\x00\x01garbage\xff\n", kind="trace-csv")


def test_tolerant_mode_counts_skips(store):
    data = b"op,t_start,size\nwrite,1,2\nwrote,2,3\nread,x,1\nread,3\nread,4,5\n"
    with pytest.warns(SkippedRecordsWarning, match="skipped 3"):
        res = store.load(data, kind="trace-csv", strict=False)
    assert res.rows["ops"] == 2
    assert res.skipped == 3
    assert sorted(s.line for s in res.skips) == [3, 4, 5]
    meta = store.sql("SELECT meta->>'skipped' FROM sources").fetchall()[0][0]
    assert meta == "3"


def test_unknown_columns_are_ignored_with_a_note(store):
    res = store.load(b"op,t_start,colour\nread,1,blue\n", kind="trace-csv")
    assert res.rows["ops"] == 1
    assert any("colour" in w for w in res.warnings)


def test_chunked_equals_whole(tmp_path):
    lines = [b"job_id,rank,path,op,offset,size,t_start"]
    for i in range(5000):
        lines.append(
            b"%d,%d,/f%d,%s,%d,%d,%f"
            % (i % 3, i % 4, i % 7, [b"read", b"write"][i % 2], i, 10 + i, i / 10)
        )
    p = tmp_path / "t.csv"
    p.write_bytes(b"\n".join(lines) + b"\n")
    a, b = iochar.connect(":memory:"), iochar.connect(":memory:")
    a.load(p, chunk_rows=1_000_000)
    b.load(p, chunk_rows=333)
    for q in (
        "SELECT * EXCLUDE (source_id) FROM jobs ORDER BY ALL",
        "SELECT * FROM files ORDER BY ALL",
        "SELECT * FROM ops ORDER BY ALL",
    ):
        assert a.sql(q).fetchall() == b.sql(q).fetchall()


def _file_digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_failed_load_leaves_database_file_byte_for_byte(tmp_path):
    dbp = tmp_path / "x.duckdb"
    with iochar.connect(str(dbp)) as db:
        db.load(CSV)
    before = _file_digest(dbp)
    bad = CSV + b"0,0,/in.dat,read,8192,4096,0.05"  # cut short: no newline
    for data in (bad, CSV.replace(b"0.03,0.04", b"0.001,0.04"), b"op,t_start\nx,1\n"):
        with iochar.connect(str(dbp)) as db:
            with pytest.raises(InputError):
                db.load(data, kind="trace-csv")
        assert _file_digest(dbp) == before


def test_truncated_parquet(store, tmp_path):
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"op": ["read"] * 100, "t_start": [float(i) for i in range(100)]}), p)
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(p.read_bytes()[:-20])
    with pytest.raises(InputError, match="cut.parquet"):
        store.load(cut, kind="trace-parquet")
    assert store.row_counts()["ops"] == 0


def test_gzip_input(store, tmp_path):
    import gzip

    p = tmp_path / "t.csv.gz"
    p.write_bytes(gzip.compress(CSV))
    res = store.load(p)
    assert res.kind == "trace-csv" and res.rows["ops"] == 5
