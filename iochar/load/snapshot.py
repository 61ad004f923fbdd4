"""File-system snapshots: ``find -printf`` listings, GNU ``stat`` output, walker Parquet.

One input is one snapshot of a directory tree (Carns et al. 2011, Sec. 4:
size and age distributions, growth between two snapshots). Three layouts are
read, told apart by content:

**find listing** (``.find``). An optional first line
``# iochar-snapshot root=ROOT taken_at=ISO8601`` (both keys optional), then
one tab-separated line per entry as printed by::

    find ROOT -printf '%y\\t%s\\t%A@\\t%T@\\t%C@\\t%U\\t%p\\n'

====  =========  ======  ==========================================
field  printf     unit    meaning
====  =========  ======  ==========================================
1      ``%y``             entry type (``f`` regular file, ``d``, ``l``...)
2      ``%s``     bytes   size
3      ``%A@``    s       last access, epoch seconds with fraction
4      ``%T@``    s       last modification, epoch seconds
5      ``%C@``    s       last status change, epoch seconds
6      ``%U``             numeric owner uid
7      ``%p``             path (the rest of the line)
====  =========  ======  ==========================================

Only regular files (``f``) become ``snapshot_files`` rows; other entries are
counted in ``sources.meta`` (``entries``). When there is no header, the root
is the first line's path if it is a directory (find prints the root first),
and ``taken_at`` is NULL. Limitation: paths holding a tab or a newline, or
bytes that are not UTF-8, cannot be represented (the line is refused); use
the walker (``iochar snapshot DIR``) for such trees.

**GNU stat output** (``.stat``): the default multi-line ``stat FILE...``
format (``  File: ...``, ``  Size: ...``, ``Access: (...)  Uid: (...)``,
``Access:/Modify:/Change:`` timestamps with a UTC offset). Only entries whose
type is ``regular file`` / ``regular empty file`` become rows; the root is
the common directory of the files.

**walker Parquet** (``.parquet``): written by :func:`iochar.capture.walk.snapshot_dir`;
columns ``format`` (the marker ``iochar-snapshot/1``, stored uncompressed so
the first bytes of the file identify it), ``path``, ``size``, ``atime``,
``mtime``, ``ctime``, ``uid``; ``root`` and ``taken_at`` in the file metadata.

Times become naive UTC timestamps at microsecond resolution (rounded; find's
decimal seconds are read as float64, so they can land 1 us off the exact
rounding of the nanoseconds). Every
text input must end with a newline: a last line without one is taken as a
file cut short (tolerant mode drops it). Each bad line is an
:class:`~iochar.errors.InputError` naming its line.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
import os
import re
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from iochar.errors import InputError
from iochar.load import _kinds, register
from iochar.load._base import Parsed, SkipLog
from iochar.load._text import (
    Source,
    local_path,
    mmap_blocks,
    open_parquet,
    open_text,
    read_head,
    source_name,
    text_head,
)

__all__ = [
    "SnapshotLoader",
    "FIND_PRINTF",
    "FIND_FIELDS",
    "HEADER_PREFIX",
    "PARQUET_MARKER",
    "PARQUET_COLUMNS",
    "format_header",
]

KIND = "snapshot"
#: The ``find -printf`` format this loader reads.
FIND_PRINTF = r"%y\t%s\t%A@\t%T@\t%C@\t%U\t%p\n"
#: Field names of one find line, in order.
FIND_FIELDS = ("type", "size", "atime", "mtime", "ctime", "uid", "path")
_FIND_TYPES = {
    "type": pa.string(),
    "size": pa.int64(),
    "atime": pa.float64(),
    "mtime": pa.float64(),
    "ctime": pa.float64(),
    "uid": pa.int64(),
    "path": pa.string(),
}
_ENTRY_TYPES = frozenset("fdlbcpsD")
#: The optional first line of a find listing.
HEADER_PREFIX = b"# iochar-snapshot"
_HEADER_RE = re.compile(
    r"^# iochar-snapshot(?: root=(?P<root>.*?))?(?: taken_at=(?P<taken_at>\S+))?\s*$"
)
#: Value of the walker Parquet's ``format`` column (also its sniffing magic).
PARQUET_MARKER = "iochar-snapshot/1"
#: Columns of the walker Parquet besides ``format``.
PARQUET_COLUMNS = ("path", "size", "atime", "mtime", "ctime", "uid")
_TS = pa.timestamp("us")
_FIRST_BLOCK = 4 << 20  # bytes
_MAX_BLOCK = 256 << 20  # bytes


def format_header(root: str | None, taken_at: dt.datetime | None) -> str:
    """The optional first line of a find listing (without the newline).

    Parameters
    ----------
    root : str or None
        Directory the listing starts at.
    taken_at : datetime or None
        When the listing was taken (UTC; naive values are taken as UTC).

    Returns
    -------
    str
        ``# iochar-snapshot root=ROOT taken_at=ISO8601``.
    """
    out = HEADER_PREFIX.decode()
    if root is not None:
        out += f" root={root}"
    if taken_at is not None:
        out += f" taken_at={taken_at.replace(tzinfo=None).isoformat()}Z"
    return out


def _bad(name: str, line: int | None, expected: str, got: object = None, unit: str = "line"):
    return InputError(name, line, expected, got, kind=KIND, unit=unit)


def _utc_naive(text: str, name: str, line: int) -> dt.datetime:
    try:
        t = dt.datetime.fromisoformat(text)
    except ValueError as exc:
        raise _bad(name, line, "taken_at=ISO8601 in the header", text) from exc
    if t.tzinfo is not None:
        t = t.astimezone(dt.UTC).replace(tzinfo=None)
    return t


def _snapshots_table(root: str | None, taken_at: dt.datetime | None) -> pa.Table:
    return pa.table(
        {
            "snapshot_id": pa.array([0], pa.int64()),
            "taken_at": pa.array([taken_at], _TS),
            "root": pa.array([root], pa.string()),
        }
    )


#: Largest size or uid the contract's BIGINT columns hold.
_INT64_MAX = 2**63 - 1
#: Largest epoch time (either sign) a timestamp[us] holds, rounded down. [s]
_MAX_EPOCH_S = 9.2e12


def _time_rule(column: str) -> str:
    """The rule a time column keeps, in words: finite and below :data:`_MAX_EPOCH_S`."""
    return f"a finite {column} within +-292,000 years of 1970 [s]"


def _seconds_to_ts(arr: Any) -> pa.Array:
    """Epoch seconds (float) to timestamp[us], rounded to the nearest microsecond."""
    us = pc.round(pc.multiply(arr, 1e6))
    return pc.cast(pc.cast(us, pa.int64()), _TS)


# ---------------------------------------------------------------- find listings
_PARSE = pacsv.ParseOptions(
    delimiter="\t", quote_char=False, escape_char=False, ignore_empty_lines=False
)
_READ = pacsv.ReadOptions(column_names=list(FIND_FIELDS), use_threads=True)
_CONVERT = pacsv.ConvertOptions(
    column_types=_FIND_TYPES,
    null_values=[],
    strings_can_be_null=False,
    quoted_strings_can_be_null=False,
)


def _check_find_values(tb: pa.Table) -> list[tuple[pa.ChunkedArray, str]]:
    """Row masks breaking a value rule, with the rule in words."""
    typ = tb.column("type")
    checks = [
        (pc.invert(pc.is_in(typ, value_set=pa.array(sorted(_ENTRY_TYPES)))), "a find %y type"),
        (pc.less(tb.column("size"), 0), "a size >= 0 [bytes]"),
        (pc.less(tb.column("uid"), 0), "a uid >= 0"),
        (pc.equal(pc.utf8_length(tb.column("path")), 0), "a non-empty path in field 7"),
    ]
    for c in ("atime", "mtime", "ctime"):
        # a timestamp[us] holds +-2**63 us: about +-292,000 years around 1970
        ok = pc.and_(pc.is_finite(tb.column(c)), pc.less(pc.abs(tb.column(c)), _MAX_EPOCH_S))
        checks.append((pc.invert(ok), _time_rule(c)))
    return checks


def _py_find_line(raw: bytes) -> tuple[tuple[Any, ...] | None, str]:
    """One find line parsed in Python (the slow path): (values, "") or (None, why)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "UTF-8 text"
    parts = text.split("\t")
    if len(parts) != len(FIND_FIELDS):
        return None, f"{len(FIND_FIELDS)} tab-separated fields ({FIND_PRINTF}), got {len(parts)}"
    typ, size, at, mt, ct, uid, path = parts
    if typ not in _ENTRY_TYPES or len(typ) != 1:
        return None, "a find %y type (f, d, l...) in field 1"
    try:
        vals = (typ, int(size), float(at), float(mt), float(ct), int(uid), path)
    except ValueError:
        return None, "numbers in fields 2-6 (size, atime, mtime, ctime, uid)"
    if not (0 <= vals[1] <= _INT64_MAX and 0 <= vals[5] <= _INT64_MAX):
        return None, "size and uid in 0..2**63-1"
    for c, v in zip(("atime", "mtime", "ctime"), vals[2:5], strict=True):
        if not (math.isfinite(v) and abs(v) < _MAX_EPOCH_S):  # as in _check_find_values
            return None, _time_rule(c)
    if not path:
        return None, "a non-empty path in field 7"
    return vals, ""


def _slow_find_block(block: bytes, first_line: int, name: str, skips: SkipLog | None) -> pa.Table:
    """Parse a block line by line: the exact line of the first error, or skip bad lines."""
    rows: list[tuple[Any, ...]] = []
    lines = block.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for k, raw in enumerate(lines):
        line = first_line + k
        vals, why = _py_find_line(raw)
        if vals is None:
            if skips is None:
                raise _bad(name, line, why, raw)
            skips.add(line, why)
            continue
        rows.append(vals)
    cols = list(zip(*rows, strict=True)) if rows else [[] for _ in FIND_FIELDS]
    return pa.table(
        {f: pa.array(list(c), _FIND_TYPES[f]) for f, c in zip(FIND_FIELDS, cols, strict=True)}
    )


def _find_rows(tb: pa.Table) -> pa.Table:
    """Regular files of a parsed block as ``snapshot_files`` rows."""
    tb = tb.filter(pc.equal(tb.column("type"), "f"))
    n = tb.num_rows
    return pa.table(
        {
            "snapshot_id": pa.repeat(pa.scalar(0, pa.int64()), n),
            "path": tb.column("path"),
            "size": tb.column("size"),
            "atime": _seconds_to_ts(tb.column("atime")),
            "mtime": _seconds_to_ts(tb.column("mtime")),
            "ctime": _seconds_to_ts(tb.column("ctime")),
            "uid": tb.column("uid"),
        }
    )


def _find_block(
    block: pa.Buffer, line: int, name: str, skips: SkipLog | None
) -> tuple[pa.Table, int]:
    """Parse whole lines: pyarrow's multithreaded reader, Python only on an error."""
    if block.size == 0:
        return _slow_find_block(b"", line, name, skips), 0
    try:
        tb = pacsv.read_csv(
            pa.BufferReader(block),
            read_options=_READ,
            parse_options=_PARSE,
            convert_options=_CONVERT,
        )
    except pa.ArrowInvalid:
        raw = block.to_pybytes()
        return _slow_find_block(raw, line, name, skips), raw.count(b"\n")
    keep = None
    for mask, rule in _check_find_values(tb):
        if not pc.any(mask).as_py():
            continue
        idx = np.flatnonzero(mask.to_numpy(zero_copy_only=False))
        if skips is None:
            i = int(idx[0])
            raise _bad(name, line + i, rule, _row_text(tb, i))
        for i in idx:
            skips.add(line + int(i), rule)
        keep = pc.invert(mask) if keep is None else pc.and_(keep, pc.invert(mask))
    nlines = tb.num_rows
    if keep is not None:
        tb = tb.filter(keep)
    return tb, nlines


def _parse_find(path: str, name: str, strict: bool, chunk_rows: int) -> Iterator[Parsed]:
    size = os.path.getsize(path)
    if size == 0:
        raise _bad(name, None, "a non-empty input", "")
    with open(path, "rb") as fh:
        first = fh.readline()
        fh.seek(size - 1)
        ends_nl = fh.read(1) == b"\n"
    root: str | None = None
    taken_at: dt.datetime | None = None
    start, line = 0, 1
    if first.startswith(b"#"):
        if not first.endswith(b"\n"):
            raise _bad(name, 1, "a header line ending in a newline (file cut short?)", first)
        m = _HEADER_RE.match(first.decode("utf-8", "replace").rstrip("\r\n"))
        if m is None:
            raise _bad(name, 1, "'# iochar-snapshot root=ROOT taken_at=ISO8601'", first)
        root = m["root"] or None
        if m["taken_at"]:
            taken_at = _utc_naive(m["taken_at"], name, 1)
        start, line = len(first), 2
    skips = None if strict else SkipLog()
    sizing = {"next": min(_FIRST_BLOCK, max(1 << 12, chunk_rows * 100))}
    entries: dict[str, int] = {}
    first_block = True
    for block, complete in mmap_blocks(path, start, sizing):
        nbytes = block.size
        tail = None
        if not complete and not ends_nl:  # the file's last line has no newline
            raw = block.to_pybytes()
            cut = raw.rfind(b"\n") + 1
            block, tail = pa.py_buffer(raw[:cut]), raw[cut:]
        tb, nlines = _find_block(block, line, name, skips)
        if first_block and root is None and tb.num_rows and tb.column("type")[0].as_py() == "d":
            root = tb.column("path")[0].as_py()
        first_block = False
        for item in pc.value_counts(tb.column("type")).to_pylist():
            entries[item["values"]] = entries.get(item["values"], 0) + item["counts"]
        line += nlines
        if tail is not None:
            if skips is None:
                raise _bad(name, line, "a last line ending in a newline (file cut short?)", tail)
            skips.add(line, "last line cut short (no newline)")
            line += 1
        yield Parsed(tables={"snapshot_files": _find_rows(tb)}, skips=skips)
        per_row = max(1.0, nbytes / max(nlines, 1))
        sizing["next"] = int(min(_MAX_BLOCK, max(1 << 12, chunk_rows * per_row)))
    yield Parsed(
        tables={"snapshots": _snapshots_table(root, taken_at)},
        meta={"tool": "find", "format": "find-printf", "root": root, "entries": entries},
        skips=skips,
    )


def _row_text(tb: pa.Table, i: int) -> str:
    return "\t".join(str(v) for v in tb.slice(i, 1).to_pylist()[0].values())


# ---------------------------------------------------------------- GNU stat
_STAT_TIME_RE = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))? ([+-])(\d\d)(\d\d)$"
)
_UID_RE = re.compile(r"Uid: \(\s*(\d+)/")
_SIZE_RE = re.compile(r"^\s*Size: (\d+)\s+Blocks: \d+\s+IO Block: \d+\s+(.+?)\s*$")


def _stat_time(text: str) -> int | None:
    """``2019-11-14 08:18:03.509681766 +0000`` to epoch microseconds (rounded)."""
    m = _STAT_TIME_RE.match(text.strip())
    if m is None:
        return None
    y, mo, d, h, mi, s = (int(m[i]) for i in range(1, 7))
    try:
        secs = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))
        dt.date(y, mo, d)
    except ValueError:
        return None
    frac = (m[7] or "0").ljust(9, "0")
    off = (int(m[9]) * 3600 + int(m[10]) * 60) * (1 if m[8] == "+" else -1)
    return (secs - off) * 1_000_000 + (int(frac) + 500) // 1000


def _stat_name(text: str) -> str:
    """The file name of a ``File:`` line, without quotes or a symlink target."""
    if text[:1] in "'\"‘" and len(text) > 1:
        close = {"'": "'", '"': '"', "‘": "’"}[text[0]]
        end = text.find(close, 1)
        return text[1:end] if end > 0 else text[1:]
    return text.split(" -> ", 1)[0]


def _common_root(paths: list[str]) -> str | None:
    """The deepest folder holding every path; None when there are none, or when absolute
    and relative paths are mixed (``stat /a b``: no one folder holds both)."""
    dirs = [os.path.dirname(p) or "." for p in paths]
    if not dirs or len({os.path.isabs(d) for d in dirs}) > 1:
        return None
    return os.path.commonpath(dirs)


def _parse_stat(src: Source, name: str, strict: bool, chunk_rows: int) -> Iterator[Parsed]:
    with open_text(src) as fh:
        data = fh.read()
    if not data:
        raise _bad(name, None, "a non-empty input", "")
    skips = None if strict else SkipLog()
    lines = data.split(b"\n")
    last_cut = lines[-1] != b""
    if not last_cut:
        lines.pop()
    rows: dict[str, list[Any]] = {c: [] for c in ("path", "size", "atime", "mtime", "ctime", "uid")}
    entries: dict[str, int] = {}
    rec: dict[str, Any] | None = None
    rec_line = 0

    def fail(line: int, expected: str, got: object) -> None:
        if skips is None:
            raise _bad(name, line, expected, got)
        skips.add(line, expected)

    def finish(r: dict[str, Any] | None, at_line: int) -> None:
        if r is None or r.get("bad"):
            return
        need = ("size", "type", "uid", "atime", "mtime", "ctime")
        missing = [k for k in need if k not in r]
        if missing:
            fail(at_line, f"Size, Uid and Access/Modify/Change lines (missing {missing})", None)
            return
        entries[r["type"]] = entries.get(r["type"], 0) + 1
        if r["type"] in ("regular file", "regular empty file"):
            for k in rows:
                rows[k].append(r[k])

    times = {"Access": "atime", "Modify": "mtime", "Change": "ctime"}
    for k, raw in enumerate(lines):
        line = k + 1
        if last_cut and k == len(lines) - 1:
            fail(line, "a last line ending in a newline (file cut short?)", raw)
            rec = None
            break
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            fail(line, "UTF-8 text", raw)
            if rec is not None:
                rec["bad"] = True
            continue
        text = text.rstrip("\r")
        stripped = text.strip()
        if text.startswith("  File: "):
            finish(rec, rec_line)
            rec, rec_line = {"path": _stat_name(text[8:])}, line
            continue
        if rec is None:
            fail(line, "a '  File: NAME' line starting a GNU stat record", raw)
            continue
        if rec.get("bad"):
            continue
        head = stripped.split(":", 1)[0]
        if head == "Size":
            m = _SIZE_RE.match(text)
            if m is None:
                fail(line, "'Size: N  Blocks: N  IO Block: N  TYPE'", raw)
                rec["bad"] = True
                continue
            rec["size"], rec["type"] = int(m[1]), m[2]
            if rec["size"] > _INT64_MAX:
                fail(line, "a size from 0 to 2**63-1 (BIGINT) [bytes]", raw)
                rec["bad"] = True
                continue
        elif head == "Access" and "Uid:" in text:
            m = _UID_RE.search(text)
            if m is None:
                fail(line, "'Uid: (N/NAME)'", raw)
                rec["bad"] = True
                continue
            rec["uid"] = int(m[1])
            if rec["uid"] > _INT64_MAX:
                fail(line, "a uid from 0 to 2**63-1 (BIGINT)", raw)
                rec["bad"] = True
                continue
        elif head in times:
            us = _stat_time(stripped.split(":", 1)[1])
            if us is None:
                fail(line, f"'{head}: YYYY-MM-DD HH:MM:SS.NNNNNNNNN +ZZZZ'", raw)
                rec["bad"] = True
                continue
            rec[times[head]] = us
        elif head in ("Device", "Birth") or not stripped:
            continue
        else:
            fail(line, "a GNU stat line (File, Size, Device, Access, Modify, Change, Birth)", raw)
            rec["bad"] = True
    finish(rec, rec_line)
    if not entries and skips is None:
        raise _bad(name, 1, "at least one GNU stat record", data[:80])
    paths = rows["path"]
    root = _common_root(paths)
    n = len(paths)
    for lo in range(0, max(n, 1), chunk_rows):
        hi = min(n, lo + chunk_rows)
        yield Parsed(
            tables={
                "snapshot_files": pa.table(
                    {
                        "snapshot_id": pa.repeat(pa.scalar(0, pa.int64()), hi - lo),
                        "path": pa.array(paths[lo:hi], pa.string()),
                        "size": pa.array(rows["size"][lo:hi], pa.int64()),
                        "atime": pa.array(rows["atime"][lo:hi], pa.int64()).cast(_TS),
                        "mtime": pa.array(rows["mtime"][lo:hi], pa.int64()).cast(_TS),
                        "ctime": pa.array(rows["ctime"][lo:hi], pa.int64()).cast(_TS),
                        "uid": pa.array(rows["uid"][lo:hi], pa.int64()),
                    }
                )
            },
            skips=skips,
        )
    yield Parsed(
        tables={"snapshots": _snapshots_table(root, None)},
        meta={"tool": "stat", "format": "gnu-stat", "root": root, "entries": entries},
        skips=skips,
    )


# ---------------------------------------------------------------- walker Parquet
def _meta_text(md: dict[bytes, bytes], key: bytes, name: str) -> str:
    """A walker metadata value as text; Parquet key-value metadata is UTF-8 by the format's
    definition, so other bytes mean a damaged file."""
    try:
        return md.get(key, b"").decode("utf-8")
    except UnicodeDecodeError:
        raise _bad(
            name, None, f"UTF-8 text in the Parquet metadata {key.decode()!r}", md[key]
        ) from None


def _parse_parquet(src: Source, name: str, strict: bool, chunk_rows: int) -> Iterator[Parsed]:
    pf = open_parquet(src, kind=KIND)
    names = pf.schema_arrow.names
    missing = [c for c in ("format", *PARQUET_COLUMNS) if c not in names]
    if missing:
        raise _bad(name, None, f"iochar walker Parquet columns (missing {missing})", names)
    md = {**(pf.schema_arrow.metadata or {}), **(pf.metadata.metadata or {})}
    root = _meta_text(md, b"iochar.root", name) or None
    taken = _meta_text(md, b"iochar.taken_at", name)
    taken_at = _utc_naive(taken, name, 0) if taken else None
    skips = None if strict else SkipLog()
    types = {
        "path": pa.string(),
        "size": pa.int64(),
        "atime": _TS,
        "mtime": _TS,
        "ctime": _TS,
        "uid": pa.int64(),
    }
    row = 1
    for i in range(pf.num_row_groups):
        try:
            for batch in pf.iter_batches(
                batch_size=chunk_rows, row_groups=[i], columns=list(PARQUET_COLUMNS)
            ):
                tb = pa.table({c: batch.column(c).cast(types[c]) for c in PARQUET_COLUMNS})
                bad = pc.or_(
                    pc.fill_null(pc.less(tb.column("size"), 0), True),
                    pc.is_null(tb.column("path")),
                )
                if pc.any(bad).as_py():
                    idx = np.flatnonzero(bad.to_numpy(zero_copy_only=False))
                    if skips is None:
                        raise _bad(name, row + int(idx[0]), "a path and a size >= 0", None, "row")
                    for j in idx:
                        skips.add(row + int(j), "a path and a size >= 0")
                    tb = tb.filter(pc.invert(bad))
                n = tb.num_rows
                tb = tb.add_column(0, "snapshot_id", pa.repeat(pa.scalar(0, pa.int64()), n))
                yield Parsed(tables={"snapshot_files": tb}, skips=skips)
                row += batch.num_rows
        except (OSError, pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise _bad(name, row, f"readable row group {i}", str(exc), "row") from exc
    yield Parsed(
        tables={"snapshots": _snapshots_table(root, taken_at)},
        meta={"tool": "iochar-walk", "format": PARQUET_MARKER, "root": root},
        skips=skips,
    )


# ---------------------------------------------------------------- the loader
def _is_stat(head: bytes) -> bool:
    return head.startswith(b"  File: ") and b"\n  Size: " in head[:8192]


class SnapshotLoader:
    """``snapshot``: find -printf listings, GNU stat output, walker Parquet (module docs)."""

    kind: ClassVar[str] = KIND
    suffixes: ClassVar[tuple[str, ...]] = (".find", ".find.gz", ".stat", ".snapshot.parquet")
    description: ClassVar[str] = (
        "file-system snapshot: find -printf listing, GNU stat output, or `iochar snapshot` Parquet"
    )

    def sniff(self, head: bytes) -> bool:
        """The find header or a find line, a GNU stat record, or the walker's Parquet marker."""
        return _kinds.sniff_snapshot(head)  # the one rule, shared with sniffing by kind table

    def parse(
        self, src: Source, *, strict: bool = True, chunk_rows: int = 1_000_000
    ) -> Iterator[Parsed]:
        """Parse one snapshot; the layout is told from the content."""
        name = source_name(src)
        head = read_head(src, 8192)
        if head.startswith(b"PAR1"):
            yield from _parse_parquet(src, name, strict, chunk_rows)
        elif _is_stat(text_head(head)):
            yield from _parse_stat(src, name, strict, chunk_rows)
        else:
            with local_path(src, ".find", text=True) as path:
                yield from _parse_find(path, name, strict, chunk_rows)


register(SnapshotLoader())
