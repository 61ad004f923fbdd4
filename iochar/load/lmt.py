"""LMT (Lustre Monitoring Tool) server counters -> per-interval ``counters`` rows.

Two inputs
----------
**LMT database exported to SQLite** (the LMT MySQL schema, as pytokio ships
it). Read with Python's :mod:`sqlite3`, read-only and ``immutable``; tables
used:

- ``OST_DATA(OST_ID, TS_ID, READ_BYTES, WRITE_BYTES, ...)`` joined with
  ``OST_INFO.OST_NAME`` and ``TIMESTAMP_INFO.TIMESTAMP``: target = OST name,
  metrics ``read_bytes`` and ``write_bytes`` (cumulative bytes).
- ``MDS_OPS_DATA(MDS_ID, TS_ID, OPERATION_ID, SAMPLES, ...)`` joined with
  ``MDS_INFO.MDS_NAME`` and ``OPERATION_INFO.OPERATION_NAME`` (when present):
  target = MDT name, metric ``mds_<operation>_ops`` (cumulative requests).

Gauges (``PCT_CPU``, ``KBYTES_FREE``, ``INODES_USED``, ``OSS_DATA``...) are
not per-interval amounts and are not loaded. LMT stores ``TIMESTAMP`` as a
naive server-side time; it is taken as UTC.

**CSV** (iochar's own layout for LMT-like samples)::

    timestamp,ost,read_bytes,write_bytes
    2018-04-18T07:35:15Z,snx11168-OST00ad,438210627739648,274819451570722

The header starts with ``timestamp,ost`` and names one or more cumulative
byte counters (``read_bytes``, ``write_bytes``); ``timestamp`` is ISO 8601
(``Z``/offset or naive UTC) or epoch seconds. The file ends with a newline.

Per (target, metric) the cumulative samples become deltas with
:func:`iochar.load._counters.deltas`: ``ts`` = interval end (UTC),
``interval_s`` = the true interval, ``quality`` ok/reset/gap/gap_reset (no
wrap: LMT counters are 64-bit). A drop inside a gap (the server restarted
during an outage) is marked ``gap_reset``: its value is the amount since the
restart, a lower bound over the long interval.

Errors: a file that is not SQLite, a truncated or corrupt database, missing
LMT tables, a malformed CSV row, a cut CSV, or times going backwards within a
series raise :class:`~iochar.errors.InputError`.
"""

from __future__ import annotations

import io
import re
import sqlite3
import struct
import urllib.parse
from collections.abc import Iterator
from datetime import datetime
from typing import ClassVar

import numpy as np
import polars as pl
import pyarrow as pa

from iochar.errors import InputError
from iochar.load import _kinds, register
from iochar.load._base import Parsed, SkipLog
from iochar.load._counters import (
    EXPECT_AMOUNT,
    GAP,
    GAP_RESET,
    QUALITY,
    RESET,
    deltas,
    implausible,
)
from iochar.load._text import Source, local_path, open_binary, open_text, source_name

__all__ = ["LmtLoader", "CSV_METRICS"]

KIND = "lmt"
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: Cumulative counters accepted as CSV columns.
CSV_METRICS = ("read_bytes", "write_bytes")
_CSV_HEADER = re.compile(rb"^timestamp,ost((?:,(?:read_bytes|write_bytes))+)\r?\n")


def _bad(name, line, expected, got, unit="line"):
    return InputError(name, line, expected, got, kind=KIND, unit=unit)


def _check_sqlite_file(path: str, name: str) -> None:
    """Refuse files that are not whole SQLite databases (cut or corrupt)."""
    with open(path, "rb") as fh:
        head = fh.read(100)
        fh.seek(0, 2)
        size = fh.tell()
    if len(head) < 100 or not head.startswith(_SQLITE_MAGIC):
        raise _bad(name, None, "an SQLite 3 database (LMT export)", head[:16], "byte")
    page = struct.unpack(">H", head[16:18])[0]
    page = 65536 if page == 1 else page
    pages, change, valid_for = struct.unpack(">I", head[28:32])[0], head[24:28], head[92:96]
    if page < 512 or page & (page - 1):
        raise _bad(name, None, "a valid SQLite page size", page, "byte")
    if size % page:
        raise _bad(name, None, f"a size that is a multiple of the page size {page}", size, "byte")
    if pages and change == valid_for and size < pages * page:
        raise _bad(name, None, f"{pages * page} bytes ({pages} pages)", f"{size} bytes", "byte")


def _text(value: object) -> str:
    """A value SQLite returned as bytes, as text (undecodable bytes as ``\\xNN``)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return str(value)


#: Storage classes (SQLite ``typeof``) each column iochar reads must have.
_COLUMN_TYPES = {
    ("OST_INFO", "OST_NAME"): ("text",),
    ("TIMESTAMP_INFO", "TIMESTAMP"): ("text",),
    ("OST_DATA", "READ_BYTES"): ("integer", "real"),
    ("OST_DATA", "WRITE_BYTES"): ("integer", "real"),
    ("MDS_INFO", "MDS_NAME"): ("text",),
    ("OPERATION_INFO", "OPERATION_NAME"): ("text",),
    ("MDS_OPS_DATA", "SAMPLES"): ("integer", "real"),
    ("FILESYSTEM_INFO", "FILESYSTEM_NAME"): ("text",),
}


def _raise_mistyped(con: sqlite3.Connection, name: str, tables: set[str]) -> None:
    """Name the first record whose value has the wrong storage class (a BLOB or NULL
    where LMT's schema keeps text or a number; SQLite does not enforce column types).

    Raises
    ------
    InputError
        With the table, column and ``rowid`` (``unit="record"``).
    """
    con.text_factory = bytes
    for (table, col), ok in _COLUMN_TYPES.items():
        if table not in tables:
            continue
        marks = ", ".join("?" * len(ok))
        row = con.execute(
            f"SELECT rowid, typeof({col}) FROM {table} "  # names from _COLUMN_TYPES
            f"WHERE typeof({col}) NOT IN ({marks}) ORDER BY rowid LIMIT 1",
            ok,
        ).fetchone()
        if row is not None:
            raise _bad(
                name, row[0], f"{' or '.join(ok)} in {table}.{col} (rowid)", row[1], "record"
            )


def _raise_undecodable(con: sqlite3.Connection, name: str, tables: set[str]) -> None:
    """Name the record whose text is not UTF-8 (SQLite TEXT is UTF-8 by its file format's
    default encoding; Python refuses to decode anything else).

    Raises
    ------
    InputError
        With the table, column and ``rowid`` of the first such value (``unit="record"``).
    """
    con.text_factory = bytes
    for (table, col), kinds in _COLUMN_TYPES.items():
        if table not in tables or kinds != ("text",):
            continue
        rows = con.execute(f"SELECT rowid, {col} FROM {table} ORDER BY rowid")  # names ours
        for rowid, value in rows:
            if isinstance(value, bytes):
                try:
                    value.decode("utf-8")
                except UnicodeDecodeError:
                    raise _bad(
                        name, rowid, f"UTF-8 text in {table}.{col} (rowid)", value, "record"
                    ) from None


def _query(path: str, name: str) -> tuple[pl.DataFrame, dict]:
    uri = "file:" + urllib.parse.quote(path) + "?mode=ro&immutable=1"
    try:
        con = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise _bad(name, None, "an SQLite database", str(exc)) from exc
    tables: set[str] = set()
    try:
        # SQLite's own report and the schema's names are read as bytes: in a corrupt file
        # they may not be UTF-8, and the check must name the corruption, not fail on it
        con.text_factory = bytes
        ok = _text(con.execute("PRAGMA quick_check").fetchone()[0])
        if ok != "ok":
            raise _bad(name, None, "an intact SQLite database", ok)
        tables = {_text(r[0]).upper() for r in con.execute("SELECT name FROM sqlite_master")}
        con.text_factory = str
        need = {"OST_DATA", "OST_INFO", "TIMESTAMP_INFO"}
        if not need <= tables:
            raise _bad(name, None, "LMT tables " + ", ".join(sorted(need)), sorted(tables)[:8])
        rows = con.execute(
            "SELECT i.OST_NAME, t.TIMESTAMP, d.READ_BYTES, d.WRITE_BYTES "
            "FROM OST_DATA d JOIN OST_INFO i ON i.OST_ID = d.OST_ID "
            "JOIN TIMESTAMP_INFO t ON t.TS_ID = d.TS_ID"
        ).fetchall()
        ost = pl.DataFrame(
            rows, schema=["target", "time", "read_bytes", "write_bytes"], orient="row"
        ).unpivot(index=["target", "time"], variable_name="metric", value_name="v")
        frames = [ost]
        if {"MDS_OPS_DATA", "MDS_INFO", "OPERATION_INFO"} <= tables:
            rows = con.execute(
                "SELECT m.MDS_NAME, t.TIMESTAMP, 'mds_' || o.OPERATION_NAME || '_ops', d.SAMPLES "
                "FROM MDS_OPS_DATA d JOIN MDS_INFO m ON m.MDS_ID = d.MDS_ID "
                "JOIN OPERATION_INFO o ON o.OPERATION_ID = d.OPERATION_ID "
                "JOIN TIMESTAMP_INFO t ON t.TS_ID = d.TS_ID"
            ).fetchall()
            if rows:
                frames.append(
                    pl.DataFrame(rows, schema=["target", "time", "metric", "v"], orient="row")
                )
        fs = None
        if "FILESYSTEM_INFO" in tables:
            r = con.execute("SELECT FILESYSTEM_NAME FROM FILESYSTEM_INFO").fetchone()
            fs = r[0] if r else None
    except InputError:
        raise
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        if "decode" in str(exc):
            _raise_undecodable(con, name, tables)
        raise _bad(name, None, "an intact LMT SQLite database", str(exc)) from exc
    except (pl.exceptions.PolarsError, TypeError, ValueError) as exc:
        _raise_mistyped(con, name, tables)
        raise _bad(name, None, "an intact LMT SQLite database", str(exc)) from exc
    finally:
        con.close()
    df = pl.concat(
        [
            f.with_columns(
                pl.col("target").cast(pl.String),
                pl.col("time").cast(pl.String),
                pl.col("metric").cast(pl.String),
                pl.col("v").cast(pl.Float64, strict=False),
            )
            for f in frames
        ]
    )
    t = df["time"].str.to_datetime("%Y-%m-%d %H:%M:%S", strict=False, time_unit="us")
    if t.null_count() or df["v"].null_count() or not t.is_between(_TS_MIN, _TS_MAX).all():
        raise _bad(name, None, "TIMESTAMP 'YYYY-MM-DD HH:MM:SS' and numeric counters", "NULL")
    df = df.with_columns(t.alias("ts")).drop("time")
    return df, {"tool": "LMT", "format": "sqlite", "filesystem": fs}


#: Times a counter sample may carry: years 1 to 9999, the range of Python's datetime,
#: in which every analysis computes (polars and DuckDB parse years outside it).
_TS_MIN = datetime(1, 1, 1)
_TS_MAX = datetime(9999, 12, 31, 23, 59, 59, 999999)


def _parse_csv(src: Source, name: str, strict: bool, skips: SkipLog) -> tuple[pl.DataFrame, dict]:
    with open_text(src) as fh:
        raw = fh.read()
    m = _CSV_HEADER.match(raw)
    if not m:
        raise _bad(name, 1, "header 'timestamp,ost,read_bytes,write_bytes'", raw[:80])
    if not raw.endswith(b"\n"):
        if strict:
            raise _bad(
                name, raw.count(b"\n") + 1, "a line ending in a newline (input cut)", raw[-40:]
            )
        skips.add(raw.count(b"\n") + 1, "last line without newline")
        raw = raw[: raw.rfind(b"\n") + 1]
    metrics = m.group(1).decode().strip(",").split(",")
    cols = ["timestamp", "ost", *metrics]
    try:
        df = pl.read_csv(
            io.BytesIO(raw),
            has_header=True,
            schema={c: pl.String for c in cols},
            truncate_ragged_lines=False,
        )
    except Exception as exc:  # polars raises ComputeError/ShapeError on ragged rows
        raise _bad(
            name, None, f"{len(cols)} comma-separated fields per row", str(exc)[:80]
        ) from exc
    line = pl.Series(np.arange(2, df.height + 2))
    ts_txt = df["timestamp"].str.strip_chars()
    epoch = ts_txt.cast(pl.Float64, strict=False)
    iso = ts_txt.str.to_datetime(strict=False, time_unit="us", time_zone="UTC")
    ts = pl.select(
        pl.when(epoch.is_not_null())
        .then(pl.from_epoch((epoch * 1e6).cast(pl.Int64, strict=False), time_unit="us"))
        .otherwise(iso.dt.replace_time_zone(None))
    ).to_series()
    vals = {k: df[k].str.strip_chars().cast(pl.Float64, strict=False) for k in metrics}
    bad = ts.is_null() | ~ts.is_between(_TS_MIN, _TS_MAX).fill_null(False) | df["ost"].is_null()
    for v in vals.values():
        bad = bad | v.is_null() | (v < 0)
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        if strict:
            raise _bad(
                name,
                first + 2,
                "an ISO 8601 or epoch timestamp in years 1-9999, an OST name and counters >= 0",
                ",".join(str(df.row(first)[i] or "") for i in range(len(cols))),
            )
        for i in np.flatnonzero(bad.to_numpy())[:]:
            skips.add(int(i) + 2, "bad field")
    out = pl.DataFrame({"target": df["ost"], "ts": ts, "line": line, **vals}).filter(~bad)
    out = out.unpivot(index=["target", "ts", "line"], variable_name="metric", value_name="v")
    return out, {"tool": "LMT", "format": "csv"}


class LmtLoader:
    """LMT SQLite exports and iochar's LMT CSV -> ``counters`` deltas."""

    kind: ClassVar[str] = KIND
    suffixes: ClassVar[tuple[str, ...]] = (".sqlite3", ".sqlite", ".db")
    description: ClassVar[str] = "LMT OST/MDS counters (SQLite export or timestamp,ost,... CSV)"

    def sniff(self, head: bytes) -> bool:
        """An SQLite file whose schema names ``OST_DATA``, or the LMT CSV header."""
        return _kinds.sniff_lmt(head)  # the one rule, shared with sniffing by kind table

    def parse(
        self, src: Source, *, strict: bool = True, chunk_rows: int = 1_000_000
    ) -> Iterator[Parsed]:
        """Parse ``src``; see the module docstring."""
        name = source_name(src)
        skips = SkipLog()
        with open_binary(src) as fh:
            head = fh.read(16)
        if head.startswith(_SQLITE_MAGIC):
            with local_path(src, suffix=".sqlite3") as path:
                _check_sqlite_file(path, name)
                df, meta = _query(path, name)
            df = df.with_columns(pl.lit(None, pl.Int64).alias("line"))
            df = df.sort("target", "metric", "ts")
        else:
            df, meta = _parse_csv(src, name, strict, skips)
            # file order kept within a series: times going backwards are errors
            df = df.sort("target", "metric", maintain_order=True)
        bad = implausible(df["v"].to_numpy())
        if bad.any():  # a 64-bit counter sample cannot be negative, non-finite or > 2**64
            k = int(np.flatnonzero(bad)[0])
            row = df.row(k, named=True)
            if strict:
                raise _bad(
                    name, row["line"], EXPECT_AMOUNT, f"{row['target']} {row['metric']} {row['v']}"
                )
            for k in np.flatnonzero(bad).tolist():
                skips.add(df["line"][k], f"expected {EXPECT_AMOUNT}")
            df = df.filter(~pl.Series(bad))
        key = df.select(pl.struct("target", "metric").rank("dense")).to_series().to_numpy()
        t = df["ts"].dt.epoch("us").to_numpy() / 1e6
        d = deltas(key, t, df["v"].to_numpy())
        if d.backwards is not None:
            # sorted by time: equal times within a series are duplicates
            row = df.row(int(d.backwards), named=True)
            raise _bad(
                name,
                row["line"],
                f"times increasing for {row['target']} {row['metric']}",
                f"{row['ts']} after a later or equal time",
            )
        q = d.quality
        meta["resets"] = int(np.isin(q, (RESET, GAP_RESET)).sum())
        meta["gaps"] = int(np.isin(q, (GAP, GAP_RESET)).sum())
        sel = df[d.index]
        table = pa.table(
            {
                "target": sel["target"].to_arrow(),
                "metric": sel["metric"].to_arrow(),
                "ts": sel["ts"].to_arrow().cast(pa.timestamp("us")),
                "interval_s": pa.array(d.interval_s, pa.float64()),
                "value": pa.array(d.delta, pa.float64()),
                "quality": pa.array(QUALITY[q].tolist(), pa.string()),
            }
        )
        if table.num_rows == 0:
            yield Parsed(tables={}, meta=meta, skips=skips)
            return
        step = max(1, chunk_rows)
        for lo in range(0, table.num_rows, step):
            yield Parsed(tables={"counters": table.slice(lo, step)}, meta=meta, skips=skips)


register(LmtLoader())
