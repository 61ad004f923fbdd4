"""Issue 14 item 3: input edge cases found by fuzzing, on real fixture bytes from data/.

Harmless variants load (a UTF-8 BOM, CRLF line ends, a compressed copy); bad values are
refused with the line (strict) or flagged (tolerant); internal exceptions become
InputErrors with the line; a tolerant load that keeps nothing is refused; a reload
that names a different kind says so; ``iochar info`` into a closed pipe ends quietly.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
import subprocess
import sys
import warnings

import pyarrow as pa
import pytest

import iochar
from iochar.errors import InputError, ParameterError
from iochar.load._counters import EXPECT_AMOUNT
from tests.conftest import DATA_DIR

#: Every text fixture of every text kind, with its kind.
TEXT_FIXTURES = [
    *(("strace", p) for p in sorted((DATA_DIR / "strace").glob("*.strace"))),
    *(("iostat", p) for p in sorted((DATA_DIR / "iostat").glob("*.iostat"))),
    ("iostat", DATA_DIR / "iostat" / "vm-sysstat12.6.1-x-t.json"),
    *(("diskstats", p) for p in sorted((DATA_DIR / "diskstats").glob("*.diskstats"))),
    ("lmt", DATA_DIR / "lmt" / "lmtdb-reset-ost.csv"),
    *(("brw_stats", p) for p in sorted((DATA_DIR / "brw_stats").glob("*.txt"))),
    *(("brw_stats", p) for p in sorted((DATA_DIR / "brw_stats").glob("*.lctl"))),
    *(("snapshot", p) for p in sorted((DATA_DIR / "snapshot").glob("*.find"))),
    ("snapshot", DATA_DIR / "snapshot" / "ubuntu-18.04-bin.stat"),
    *(("trace-csv", p) for p in sorted((DATA_DIR / "trace").glob("*.csv"))),
]
_IDS = [p.name for _, p in TEXT_FIXTURES]


def _content(db) -> dict[str, list]:
    """Every contract table's rows, except sources (uri, hash and time differ)."""
    out = {}
    for t in db.tables():
        if t != "sources":
            out[t] = sorted(
                db.sql(f'SELECT * EXCLUDE (source_id) FROM "{t}"').fetchall()
                if "source_id" in db.sql(f'SELECT * FROM "{t}" LIMIT 0').columns
                else db.sql(f'SELECT * FROM "{t}"').fetchall(),
                key=repr,
            )
    return out


def _loaded(data, **kw):
    db = iochar.connect(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        db.load(data, **kw)
    return _content(db)


# ---------------------------------------------------------------- BOM and CRLF
@pytest.mark.parametrize(("kind", "path"), TEXT_FIXTURES, ids=_IDS)
@pytest.mark.parametrize("variant", ["bom", "crlf", "bom+crlf"])
def test_bom_and_crlf_load_the_same_rows(kind, path, variant, tmp_path):
    raw = path.read_bytes()
    changed = raw
    if "crlf" in variant:
        changed = changed.replace(b"\n", b"\r\n")
    if "bom" in variant:
        changed = b"\xef\xbb\xbf" + changed
    want = _loaded(raw, kind=kind)
    assert _loaded(changed) == want  # sniffed
    f = tmp_path / path.name
    f.write_bytes(changed)
    # a path (read in place or copied); brw_stats names a target after the file
    assert _loaded(f, kind=kind) == _loaded(path, kind=kind)


def test_crlf_strace_was_refused_before_and_now_loads():
    raw = (DATA_DIR / "strace" / "ckpt_tt.strace").read_bytes()
    db = iochar.connect(":memory:")
    res = db.load(raw.replace(b"\n", b"\r\n"), kind="strace")
    assert res.rows["ops"] == iochar.connect(":memory:").load(raw).rows["ops"]


# ---------------------------------------------------------------- plausible counters
def _iostat_with(value: bytes) -> tuple[bytes, int]:
    lines = (DATA_DIR / "iostat" / "vm-sysstat12.6.1-x-t.iostat").read_bytes().split(b"\n")
    k = [i for i, ln in enumerate(lines) if ln.startswith(b"vda")][2]  # not the first report
    fields = lines[k].split()
    fields[2] = value  # rkB/s
    lines[k] = b" ".join(fields)
    return b"\n".join(lines), k + 1


@pytest.mark.parametrize("value", [b"-5.00", b"1e300", b"-1e300", b"2e19"])
def test_iostat_implausible_rate_refused_strict_flagged_tolerant(value):
    data, line = _iostat_with(value)
    db = iochar.connect(":memory:")
    with pytest.raises(InputError) as exc:
        db.load(data, kind="iostat")
    assert (exc.value.path, exc.value.line, exc.value.expected) == ("<buffer>", line, EXPECT_AMOUNT)
    assert db.row_counts()["counters"] == 0
    res = db.load(data, kind="iostat", strict=False)
    flagged = db.sql("SELECT metric, value FROM counters WHERE quality = 'implausible'").fetchall()
    assert flagged == [("read_bytes", None)]
    assert (
        res.rows["counters"]
        == iochar.connect(":memory:").load(_iostat_with(b"0.00")[0]).rows["counters"]
    )


def test_diskstats_field_beyond_64_bits_is_refused_with_its_line():
    lines = (DATA_DIR / "diskstats" / "vm-linux6.18-3dev.diskstats").read_bytes().split(b"\n")
    k = [i for i, ln in enumerate(lines) if len(ln.split()) == 20][3]
    fields = lines[k].split()
    fields[5] = b"9" * 30  # sectors read
    lines[k] = b" ".join(fields)
    db = iochar.connect(":memory:")
    with pytest.raises(InputError) as exc:
        db.load(b"\n".join(lines), kind="diskstats")
    assert exc.value.line == k + 1
    assert exc.value.expected == "integer counters from 0 to 2**64-1 after the device name"


def test_diskstats_field_above_int64_but_within_64_bits_loads():
    # the kernel's fields are unsigned long: 2**63..2**64-1 are real values (was OverflowError)
    raw = (DATA_DIR / "diskstats" / "vm-linux6.18-3dev.diskstats").read_bytes()
    lines = raw.split(b"\n")
    ks = [i for i, ln in enumerate(lines) if ln.split()[2:3] == [b"loop0"]]
    for i in ks:  # one device's read_ios, the same huge value in every snapshot
        fields = lines[i].split()
        fields[3] = b"18446744073709551615"
        lines[i] = b" ".join(fields)
    db = iochar.connect(":memory:")
    db.load(b"\n".join(lines), kind="diskstats")
    got = db.sql(
        "SELECT DISTINCT value FROM counters WHERE target = 'loop0' AND metric = 'read_ios'"
    ).fetchall()
    assert got == [(0.0,)]


# ---------------------------------------------------------------- internal exceptions
def test_stat_size_beyond_bigint_is_an_input_error_with_its_line():
    raw = (DATA_DIR / "snapshot" / "ubuntu-18.04-bin.stat").read_bytes()
    bad = re.sub(rb"Size: \d+", b"Size: " + b"9" * 26, raw, count=1)
    line = bad[: bad.index(b"Size: 999")].count(b"\n") + 1
    with pytest.raises(InputError) as exc:
        iochar.connect(":memory:").load(bad, kind="snapshot")
    assert (exc.value.line, exc.value.expected) == (
        line,
        "a size from 0 to 2**63-1 (BIGINT) [bytes]",
    )


def test_find_time_beyond_timestamp_range_is_an_input_error_with_its_line():
    lines = (DATA_DIR / "snapshot" / "tornado-before.find").read_bytes().split(b"\n")
    fields = lines[3].split(b"\t")
    fields[2] = b"1e35"
    lines[3] = b"\t".join(fields)
    with pytest.raises(InputError) as exc:
        iochar.connect(":memory:").load(b"\n".join(lines), kind="snapshot")
    assert exc.value.line == 4
    assert exc.value.expected.startswith("a finite atime within")


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_truncated_compressed_text_names_the_line_it_broke_in(compress, tmp_path):
    raw = (DATA_DIR / "strace" / "ckpt_tt.strace").read_bytes()
    packed = compress(raw)
    cut = tmp_path / "cut.strace.z"
    cut.write_bytes(packed[: len(packed) - 8])
    db = iochar.connect(":memory:")
    with pytest.raises(InputError) as exc:
        db.load(cut)
    assert exc.value.path == str(cut)
    assert exc.value.unit == "line" and 1 <= exc.value.line <= raw.count(b"\n") + 1
    assert "cut short or corrupt" in exc.value.expected
    assert db.row_counts()["ops"] == 0


def test_csv_field_over_pythons_csv_limit_in_tolerant_mode():
    lines = (DATA_DIR / "trace" / "dxt-posix-first150.csv").read_bytes().split(b"\n")
    lines[3] = lines[3] + b"x" * 200_000  # was csv.Error: field larger than field limit
    db = iochar.connect(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = db.load(b"\n".join(lines), kind="trace-csv", strict=False)
    assert res.rows["ops"] == 150 and res.skipped == 0  # as the strict path reads it


# ---------------------------------------------------------------- nothing valid remains
@pytest.mark.parametrize(
    ("kind", "rel", "keep"),
    [
        ("snapshot", "snapshot/tornado-before.find", 0),
        ("strace", "strace/ckpt_tt.strace", 0),
        ("diskstats", "diskstats/vm-linux6.18-3dev.diskstats", 0),
        ("brw_stats", "brw_stats/ldiskfs-lctl-series.txt", 0),
    ],
)
def test_tolerant_load_with_every_record_bad_is_refused(kind, rel, keep):
    lines = (DATA_DIR / rel).read_bytes().split(b"\n")
    bad = b"\n".join(b"\x01 not a record " + ln for ln in lines[keep:-1]) + b"\n"
    db = iochar.connect(":memory:")
    db.load(b"op,t_start\nread,0\n", kind="trace-csv")
    before = (db.row_counts(), db.sources().shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InputError) as exc:
            db.load(bad, kind=kind, strict=False)
    if kind == "snapshot":  # the loader alone would land an empty snapshot row
        assert exc.value.expected.startswith("at least one valid record")
        assert exc.value.line == 1
    assert (db.row_counts(), db.sources().shape) == before


# ---------------------------------------------------------------- dedupe by content
@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_compressed_copy_is_the_same_input(compress, tmp_path):
    raw = (DATA_DIR / "iostat" / "vm-sysstat12.6.1-x-t.iostat").read_bytes()
    plain, packed = tmp_path / "a.iostat", tmp_path / "a.iostat.z"
    plain.write_bytes(raw)
    packed.write_bytes(compress(raw))
    db = iochar.connect(":memory:")
    first = db.load(plain)
    again = db.load(packed)
    assert again.duplicate and again.source_id == first.source_id
    assert again.sha256 == first.sha256
    assert len(db.sources()) == 1


def test_reload_with_a_different_kind_says_so(tmp_path):
    f = tmp_path / "t.csv"
    f.write_bytes((DATA_DIR / "trace" / "dxt-posix-first150.csv").read_bytes())
    db = iochar.connect(":memory:")
    db.load(f, kind="trace-csv")
    with pytest.raises(ParameterError) as exc:
        db.load(f, kind="snapshot")
    assert "'trace-csv'" in str(exc.value) and "source 0" in str(exc.value)
    assert db.load(f, kind="trace-csv").duplicate  # the same kind, or none, is a duplicate
    assert db.load(f).duplicate


# ---------------------------------------------------------------- iochar info | head
def test_info_into_a_closed_pipe_ends_quietly(tmp_path):
    db = tmp_path / "x.duckdb"
    with iochar.connect(db) as s:
        s.load(DATA_DIR / "iostat" / "vm-sysstat12.6.1-x-t.iostat")
    proc = subprocess.Popen(
        [sys.executable, "-m", "iochar.cli", "info", "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # the reader is gone before the first write, as after `head -0`
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert proc.returncode == 1


def _lmt_refused(tmp_path, pick: str, update: str) -> InputError:
    """Load the real LMT database with the row ``pick`` selects changed by ``update``
    (both SQL; ``update`` binds that rowid): the InputError, the database unchanged."""
    import sqlite3

    bad = tmp_path / "lmt.sqlite3"
    bad.write_bytes((DATA_DIR / "lmt" / "lmtdb-reset.sqlite3").read_bytes())
    con = sqlite3.connect(bad)
    rowid = con.execute(pick).fetchone()[0]
    con.execute(update, [rowid])
    con.commit()
    con.close()
    db = iochar.connect(":memory:")
    before = _content(db)
    with pytest.raises(InputError) as e:
        db.load(bad)
    assert _content(db) == before
    assert (e.value.line, e.value.unit, e.value.kind) == (rowid, "record", "lmt")
    return e.value


def test_lmt_sqlite_with_text_that_is_not_utf8_names_the_record(tmp_path):
    err = _lmt_refused(
        tmp_path,
        "SELECT max(rowid) FROM OST_INFO",
        "UPDATE OST_INFO SET OST_NAME = CAST(X'ff41' AS TEXT) WHERE rowid = ?",
    )
    assert "OST_INFO.OST_NAME" in err.expected


def test_find_time_beyond_range_is_refused_on_the_line_by_line_path_too():
    # a malformed line sends the block down the line-by-line parser; a time out of range
    # elsewhere in it must be judged by the same rule as on the Arrow path
    lines = (DATA_DIR / "snapshot" / "tornado-before.find").read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"\t", b"\x00", 1)  # 6 fields: malformed
    f = lines[12].split(b"\t")
    f[2] = b"1e300"  # atime
    lines[12] = b"\t".join(f)
    data = b"\n".join(lines)
    db = iochar.connect(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = db.load(data, kind="snapshot", strict=False)
    assert res.skipped == 2 and [s.line for s in res.skips] == [3, 13]
    assert "atime within" in res.skips[1].reason
    with pytest.raises(InputError) as e:
        iochar.connect(":memory:").load(b"\n".join(lines[:2] + lines[3:]), kind="snapshot")
    assert e.value.line == 12 and "atime" in e.value.expected


def test_lmt_sqlite_with_a_blob_where_a_number_belongs_names_the_record(tmp_path):
    err = _lmt_refused(
        tmp_path,
        "SELECT rowid FROM OST_DATA ORDER BY rowid LIMIT 1 OFFSET 7",
        "UPDATE OST_DATA SET READ_BYTES = X'0080' WHERE rowid = ?",
    )
    assert err.expected == "integer or real in OST_DATA.READ_BYTES (rowid)"


def test_lmt_csv_time_outside_python_datetime_years_is_refused_with_its_line():
    # polars parses year -1; no analysis can hold it (Python datetime: years 1-9999)
    lines = (DATA_DIR / "lmt" / "lmtdb-reset-ost.csv").read_text().split("\n")
    lines[2] = "-1" + lines[2][4:]
    data = "\n".join(lines).encode()
    with pytest.raises(InputError) as e:
        iochar.connect(":memory:").load(data, kind="lmt")
    assert e.value.line == 3 and "years 1-9999" in e.value.expected
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = iochar.connect(":memory:").load(data, kind="lmt", strict=False)
    assert res.skipped == 1 and res.skips[0].line == 3


def test_stat_listing_mixing_absolute_and_relative_paths_has_no_root():
    # `stat /bin/bash ls` lists both kinds of path: no one folder holds them all
    text = (DATA_DIR / "snapshot" / "ubuntu-18.04-bin.stat").read_bytes()
    first = text.index(b"  File: /") + len(b"  File: ")
    mixed = text[:first] + text[first + 1 :]  # the first record's path made relative
    db = iochar.connect(":memory:")
    db.load(mixed, kind="snapshot")
    assert db.sql("SELECT root FROM snapshots").fetchall() == [(None,)]
    db.load(text, kind="snapshot")  # all absolute: the common folder
    assert db.sql("SELECT root FROM snapshots ORDER BY snapshot_id").fetchall()[1] == ("/bin",)


def test_walker_parquet_with_metadata_that_is_not_utf8_is_an_input_error():
    import pyarrow.parquet as pq

    tb = pq.read_table(DATA_DIR / "snapshot" / "tornado-after.parquet")
    md = dict(tb.schema.metadata or {})
    md[b"iochar.taken_at"] = b"\x80\x81"
    buf = pa.BufferOutputStream()
    pq.write_table(tb.replace_schema_metadata(md), buf)
    with pytest.raises(InputError) as e:
        iochar.connect(":memory:").load(buf.getvalue().to_pybytes(), kind="snapshot")
    assert "iochar.taken_at" in e.value.expected


def test_strace_mmap_with_an_fd_beyond_int64_loads_without_that_fd():
    text = (DATA_DIR / "strace" / "ckpt_tt.strace").read_bytes()
    old = b"MAP_PRIVATE|MAP_ANONYMOUS, -1, 0)"
    assert old in text
    bad = text.replace(old, b"MAP_PRIVATE|MAP_ANONYMOUS, 99999999999999999999999999, 0)", 1)
    plain = iochar.connect(":memory:")
    plain.load(text, kind="strace")
    db = iochar.connect(":memory:")
    db.load(bad, kind="strace")  # was a polars conversion error
    assert db.row_counts() == plain.row_counts()
