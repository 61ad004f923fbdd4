"""trace-csv / trace-parquet give the same rows however the input is cut into chunks.

The loader parses an input block by block (CSV text blocks ending at a line
end, runs of Parquet row groups or batches of one) and carries the state that
crosses blocks: each (job, rank) pair's last ``t_start``, the file ids, the
jobs' spans. These tests cut the real captures of ``data/trace/`` (DXT_POSIX
segments of real Darshan logs, see ``data/trace/SOURCE.md``) into blocks of one
line or a few rows, including cuts inside a rank's run of operations, and
check every table against the whole-file parse.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import iochar
from iochar.errors import InputError
from iochar.load import parse
from iochar.load import trace_table as tt

DATA = Path(__file__).resolve().parents[2] / "data" / "trace"
IOR = DATA / "ior-hdf5-dxt-posix.csv"  # IOR -a HDF5, 4 ranks, one shared file
DXT = DATA / "dxt-posix-first150.csv"  # one process, 5 files
CAPTURES = [IOR, DXT, DATA / "ior-hdf5-dxt-posix.parquet"]


def _parsed(src, kind: str, chunk_rows: int = 1_000_000, strict: bool = True):
    """(ops of every chunk concatenated, the last chunk, row counts of the chunks)."""
    chunks = list(parse(src, kind, strict=strict, chunk_rows=chunk_rows))
    frames = [c.tables["ops"] for c in chunks if "ops" in c.tables]
    return pa.concat_tables(frames).combine_chunks(), chunks[-1], [f.num_rows for f in frames]


def _kind(path: Path) -> str:
    return "trace-parquet" if path.suffix == ".parquet" else "trace-csv"


def _assert_same(a, b, same_format: bool = True) -> None:
    ops_a, last_a, _ = a
    ops_b, last_b, _ = b
    assert ops_a.equals(ops_b)
    for table in ("jobs", "files"):
        assert last_a.tables[table].equals(last_b.tables[table])
    if same_format:
        assert last_a.meta == last_b.meta
    assert last_a.warnings == last_b.warnings


@pytest.fixture
def one_line_blocks(monkeypatch):
    """CSV blocks of a single line each (the smallest block ends at the next line end)."""
    monkeypatch.setattr(tt, "_MIN_BLOCK", 1)


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_real_capture_in_one_row_blocks_equals_whole(capture, one_line_blocks):
    kind = _kind(capture)
    whole = _parsed(capture, kind)
    assert whole[2] == [whole[0].num_rows]  # the whole file is one chunk
    cut = _parsed(capture, kind, chunk_rows=1)
    assert len(cut[2]) == whole[0].num_rows  # one chunk per row
    _assert_same(whole, cut)


def _without_file_ids(capture: Path, tmp_path: Path, suffix: str, **write) -> Path:
    tb = pacsv.read_csv(capture).drop_columns(["file_id"])
    out = tmp_path / (capture.stem + "-nofid" + suffix)
    if suffix == ".csv":
        pacsv.write_csv(tb, out)
    else:
        pq.write_table(tb, out, **write)
    return out


@pytest.mark.parametrize("capture", [IOR, DXT], ids=lambda p: p.name)
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_assigned_file_ids_follow_first_appearance_in_any_chunking(
    capture, suffix, tmp_path, one_line_blocks
):
    """Without ``file_id``, ids number (job, path) pairs in the order they first appear."""
    src = _without_file_ids(capture, tmp_path, suffix, row_group_size=7)
    kind = _kind(src)
    whole = _parsed(src, kind)
    for chunk_rows in (1, 7, 50):
        _assert_same(whole, _parsed(src, kind, chunk_rows=chunk_rows))
    ops, last, _ = whole
    paths = dict(
        zip(last.tables["files"].column("file_id").to_pylist(),
            last.tables["files"].column("path").to_pylist(), strict=True)
    )  # fmt: skip
    # each op's id leads back to the path the capture gives it
    assert [paths[f] for f in ops.column("file_id").to_pylist()] == pacsv.read_csv(capture).column(
        "path"
    ).to_pylist()
    first_seen = list(dict.fromkeys(ops.column("file_id").to_pylist()))
    assert first_seen == list(range(len(paths)))


def _two_jobs(tmp_path: Path) -> tuple[Path, pa.Table]:
    """The two captures as jobs 0 (IOR) and 1 (DXT), rows interleaved by t_start."""
    parts = []
    for job, capture in enumerate((IOR, DXT)):
        tb = pacsv.read_csv(capture).drop_columns(["file_id"])
        parts.append(tb.set_column(0, "job_id", pa.array([job] * tb.num_rows, pa.int64())))
    both = pa.concat_tables(parts)
    # a stable sort keeps each (job, rank)'s rows in their order
    both = both.take(pc.sort_indices(both, [("t_start", "ascending")]))
    out = tmp_path / "two-jobs.csv"
    pacsv.write_csv(both, out)
    return out, both


def test_two_interleaved_real_jobs_in_any_chunking(tmp_path, one_line_blocks):
    src, both = _two_jobs(tmp_path)
    whole = _parsed(src, "trace-csv")
    for chunk_rows in (1, 3, 40):
        _assert_same(whole, _parsed(src, "trace-csv", chunk_rows=chunk_rows))
    ops, last, _ = whole
    jobs = last.tables["jobs"].to_pylist()
    # SOURCE.md: the IOR run had 4 ranks, the DXT capture is of a 1-process run
    assert [j["nprocs"] for j in jobs] == [4, 1]
    for j, capture in zip(jobs, (IOR, DXT), strict=True):
        cap = pacsv.read_csv(capture)
        assert j["runtime_s"] == pc.max(cap.column("t_end")).as_py()  # t_start >= 0
    files = {(r["job_id"], r["file_id"]): r["path"] for r in last.tables["files"].to_pylist()}
    jobs_of, ids = ops.column("job_id").to_pylist(), ops.column("file_id").to_pylist()
    got = [(j, files[j, f]) for j, f in zip(jobs_of, ids, strict=True)]
    want = zip(both.column("job_id").to_pylist(), both.column("path").to_pylist(), strict=True)
    assert got == list(want)
    first_seen = list(dict.fromkeys(ops.column("file_id").to_pylist()))
    assert first_seen == list(range(len(files)))


def test_parquet_row_groups_read_in_runs_and_batches(tmp_path, monkeypatch):
    """Row groups are read in runs of at most chunk_rows rows; a bigger one in batches."""
    src = _without_file_ids(DXT, tmp_path, ".parquet", row_group_size=5)
    csv = _parsed(_without_file_ids(DXT, tmp_path, ".csv"), "trace-csv")
    runs = _parsed(src, "trace-parquet", chunk_rows=12)
    assert runs[2] == [10] * 15  # two 5-row groups per chunk
    _assert_same(csv, runs, same_format=False)
    one = tmp_path / "one-group.parquet"
    pq.write_table(pq.read_table(src), one)  # a single 150-row group
    meta = pq.ParquetFile(one).metadata.row_group(0)
    monkeypatch.setattr(tt, "_MAX_PARQUET", meta.total_byte_size // 10)
    batches = _parsed(one, "trace-parquet")
    assert len(batches[2]) >= 10 and max(batches[2]) <= 15
    _assert_same(csv, batches, same_format=False)


def _backwards_in_rank(tmp_path: Path) -> tuple[Path, int]:
    """The IOR capture with one rank's t_start stepped back (a row of the middle)."""
    lines = IOR.read_bytes().splitlines(keepends=True)
    rows = pacsv.read_csv(IOR)
    rank = rows.column("rank").to_pylist()
    i = next(k for k in range(30, len(rank)) if rank[k] == rank[k - 1])
    fields = lines[i + 1].split(b",")
    t_col = rows.column_names.index("t_start")
    fields[t_col] = b"0.0"
    lines[i + 1] = b",".join(fields)
    out = tmp_path / "backwards.csv"
    out.write_bytes(b"".join(lines))
    return out, i + 2  # 1-based line, after the header


def test_error_line_and_skips_do_not_depend_on_chunking(tmp_path, one_line_blocks):
    src, line = _backwards_in_rank(tmp_path)
    for chunk_rows in (1_000_000, 1, 5):
        with pytest.raises(InputError) as err:
            _parsed(src, "trace-csv", chunk_rows=chunk_rows)
        assert err.value.line == line
        assert "not going backwards" in str(err.value)
    tolerant = [_parsed(src, "trace-csv", c, strict=False) for c in (1_000_000, 1, 5)]
    for t in tolerant:
        assert [s.line for s in t[1].skips.kept] == [line]
        _assert_same(tolerant[0], t)


def test_store_rows_equal_for_any_chunking(tmp_path, one_line_blocks):
    src, _ = _two_jobs(tmp_path)
    a, b = iochar.connect(":memory:"), iochar.connect(":memory:")
    a.load(src, chunk_rows=1_000_000)
    b.load(src, chunk_rows=1)
    for q in (
        "SELECT * EXCLUDE (source_id) FROM jobs ORDER BY job_id",
        "SELECT * FROM files ORDER BY job_id, file_id",
        "SELECT * FROM ops ORDER BY ALL",
    ):
        assert a.sql(q).fetchall() == b.sql(q).fetchall()
