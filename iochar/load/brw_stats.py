"""Lustre ``brw_stats`` histograms: series of snapshots -> per-interval deltas.

Accepted text
-------------
- A raw ``brw_stats`` file (``/proc/fs/lustre/osd-*/NAME/brw_stats`` or
  ``obdfilter.NAME.brw_stats``), ldiskfs or ZFS layout, one or more dumps
  concatenated: each dump starts with ``snapshot_time: S.NS (secs.nsecs)``
  (Lustre 2.14+ adds ``start_time:`` and ``elapsed_time:`` lines, kept in
  ``meta`` only). The target is the parent directory of a file named
  ``brw_stats``, otherwise the file's stem.
- ``lctl get_param`` output: a line ``PROVIDER.NAME.brw_stats=`` names the
  target ``NAME`` (``PROVIDER`` is ``obdfilter``, ``osd-ldiskfs``,
  ``osd-zfs``...) and the dump follows. Every other ``param=value`` line and
  its continuation lines are skipped.

Every histogram section is kept: ``size_hist.section`` is its title and
``size_hist.size_bytes`` the bin's lower edge (``4K`` = 4096, ``1M`` =
1048576) in the section's unit:

==========================  =========================================
section                     ``size_bytes`` holds
==========================  =========================================
``pages per bulk r/w``      bytes: pages x 4096 (4 KiB pages assumed)
``disk I/O size``           bytes
``discontiguous pages``     a count of page gaps (not bytes)
``discontiguous blocks``    a count of block gaps (not bytes)
``disk fragmented I/Os``    a count of disk I/Os per RPC (not bytes)
``disk I/Os in flight``     a count of concurrent disk I/Os (not bytes)
``I/O time (1/1000s)``      milliseconds (not bytes)
``block maps msec``         milliseconds (not bytes)
==========================  =========================================

``count`` is the per-interval delta of the first (``rpcs``/``ios``/``maps``)
column of the read or write side, computed per target with
:func:`iochar.load._counters.deltas`: ``ts`` is the later snapshot's time
(UTC), ``interval_s`` the true interval. A bin missing from a dump counts 0
(Lustre prints only the populated range). When any bin of a target drops, the
whole dump is a **reset** (the target restarted or the stats were cleared):
every bin's count is the dump's own value, marked ``reset``. Long intervals
are marked ``gap``.

A target's first dump starts its series and yields no row (no interval);
per-target dump counts are in ``meta["brw_stats"]``. A file holding one dump
per target therefore loads no rows.

Errors (:class:`~iochar.errors.InputError` with the line): a line that is
none of the above, a last line without a newline (a cut file), a section
header without its title, a bin before any section, a dump missing sections
its target's previous dump had (cut mid-histogram), and snapshot times not
increasing within a target. ``strict=False`` skips bad lines (and
backwards dumps) and counts them.

Parsing is vectorized over 4 MiB blocks of lines, never line by line in
Python. A plain file is mapped, not read; each block's scan (:func:`_scan_block`,
which needs nothing from earlier blocks) runs on every core, blocks ahead
(:mod:`iochar.load._blocks`, issue 18 item 3), and the line-to-line state is
followed block by block in input order, so the rows and their order do not
depend on the block size or the thread count. The text columns (``target``,
``section``, ``op``, ``quality``) are dictionary arrays. The rows are built a
chunk (``chunk_rows``) at a time as the consumer takes them, each chunk's columns
written in place in one buffer of Arrow's memory pool (:mod:`iochar.load._pool`),
which the next chunk reuses once the consumer is done with the last.

Bin rows (most lines) are recognised by one anchored regular expression (a row
must have exactly the ``LABEL: n % % | n % %`` shape), matched once per distinct
line *shape* (the line with every digit written as ``0``: the expression reads
all digits alike, so a line matches exactly when its shape does; a block of
repeated dumps has a few dozen shapes for ~100,000 lines), and their numbers
decoded in numpy from the digit runs (at the offsets of the shape's, found once
per shape), eight digits per 64-bit word;
the few other lines are classified with polars regular expressions, once per
distinct line. The line-to-line state (dump, histogram, ``lctl`` parameter)
is tracked over the non-bin lines, which bin rows inherit.
Counts must fit in 18 digits.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import ClassVar, NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from iochar.errors import InputError
from iochar.load import _kinds, register
from iochar.load._base import Parsed, SkipLog
from iochar.load._blocks import (
    blocks_in_flight,
    cut_tail,
    has_high,
    line_blocks,
    ordered_map,
    parse_threads,
)
from iochar.load._counters import GAP_RESET, OK, QUALITY, RESET, deltas, mark_gaps
from iochar.load._pool import arrow_array, dictionary, pool_arrays, zeros_i32
from iochar.load._text import Source, source_name

__all__ = ["BrwStatsLoader", "SECTION_UNITS", "PAGE_SIZE"]

KIND = "brw_stats"
#: Bytes per page assumed for ``pages per bulk r/w`` (x86_64). [bytes]
PAGE_SIZE = 4096
#: Unit of ``size_bytes`` per section; sections not listed keep the label's number.
SECTION_UNITS = {
    "pages per bulk r/w": "bytes",
    "disk I/O size": "bytes",
    "discontiguous pages": "count",
    "discontiguous blocks": "count",
    "disk fragmented I/Os": "count",
    "disk I/Os in flight": "count",
    "I/O time (1/1000s)": "ms",
    "block maps msec": "ms",
}

#: Bytes per parse block: a few per core on inputs of tens of MB. [bytes]
_BLOCK_BYTES = 1 << 22

# line classes
BLANK, SNAP, START, ELAPSED, RW, TITLE, BIN, BRWPARAM, PARAM, OTHER = range(10)

_RE_SNAP = r"^snapshot_time:?\s+(\d+(?:\.\d+)?)\s*(?:\(?secs\.nsecs\)?)?\s*$"
_RE_START = r"^start_time:?\s+(\d+(?:\.\d+)?)\s*(?:\(?secs\.nsecs\)?)?\s*$"
_RE_ELAPSED = r"^elapsed_time:?\s+(\d+(?:\.\d+)?)\s*(?:\(?secs\.nsecs\)?)?\s*$"
_RE_RW = r"^\s+read\s+\|\s+write\s*$"
_RE_TITLE = r"^(\S.*?)\s+(?:rpcs|ios|maps)\s+%\s+cum\s+%\s+\|\s+(?:rpcs|ios|maps)\s+%\s+cum\s+%\s*$"
_RE_BIN = r"^\s*(\d+)([KMG]?):\s+(\d+)\s+\d+\s+\d+\s*\|\s*(\d+)\s+\d+\s+\d+\s*$"
_RE_PARAM = r"^([A-Za-z0-9_.@:-]+)=(.*)$"


class _State:
    """What carries across blocks."""

    def __init__(self, default_target: str) -> None:
        self.default_target = default_target
        self.target: str | None = None  # from the last ``.brw_stats=`` line
        self.in_brw = True
        self.seen_brwparam = False
        self.seen_snap = False
        self.snap = -1  # global dump index
        self.section = -1  # code of the current histogram (-1: none yet in this dump)
        self.last_cls = BLANK
        self.pending_rw: int | None = None  # line of a 'read | write' awaiting its title
        self.sec_names: list[str] = []  # histogram titles by code, in order of appearance
        self.sec_code: dict[str, int] = {}
        self.snaps: list[pl.DataFrame] = []
        self.extra: list[pl.DataFrame] = []  # start_time / elapsed_time per dump
        self.sec_pairs: list[tuple[np.ndarray, np.ndarray]] = []  # (dump, section code) seen
        self.bins: list[tuple[np.ndarray, ...]] = []  # dump, section code, size, read, write

    def codes(self, titles: pl.Series) -> np.ndarray:
        """Section codes of ``titles`` (new titles get the next codes)."""
        for name in titles.unique(maintain_order=True).to_list():
            if name not in self.sec_code:
                self.sec_code[name] = len(self.sec_names)
                self.sec_names.append(name)
        return titles.replace_strict(self.sec_code, return_dtype=pl.Int64).to_numpy()


def _ffill(mask: np.ndarray) -> np.ndarray:
    """Index of the last True at or before each position, -1 when none."""
    return np.maximum.accumulate(np.where(mask, np.arange(len(mask)), -1))


def _classify(lines: pa.Array) -> pl.DataFrame:
    """Class and fields of each line (no newline), in the order of ``lines``.

    Blank lines, ``read | write`` headers and titles repeat dump after dump,
    so the expressions run once per distinct line (Arrow's hash dictionary)
    and the results are gathered back.

    Returns
    -------
    polars.DataFrame
        ``cls`` (a line class), ``num`` (the time of a ``*_time`` line),
        ``title`` (of a histogram title), ``pname`` and ``pval`` (of a
        ``param=value`` line); null where they do not apply.
    """
    enc = pc.dictionary_encode(lines)
    distinct = pl.Series("line", enc.dictionary.cast(pa.large_string()))
    return _classify_distinct(distinct).drop("line")[enc.indices.to_numpy()]


def _classify_exprs() -> list[pl.Expr]:
    """The columns of :func:`_classify_distinct`, as expressions over the column ``line``."""
    line = pl.col("line")
    snap = line.str.extract(_RE_SNAP, 1)
    start = line.str.extract(_RE_START, 1)
    elapsed = line.str.extract(_RE_ELAPSED, 1)
    title = line.str.extract(_RE_TITLE, 1)
    param = line.str.extract_groups(_RE_PARAM)
    pname = param.struct.field("1")
    cls = (
        pl.when(line.str.strip_chars().str.len_bytes() == 0)
        .then(BLANK)
        .when(snap.is_not_null())
        .then(SNAP)
        .when(start.is_not_null())
        .then(START)
        .when(elapsed.is_not_null())
        .then(ELAPSED)
        .when(line.str.contains(_RE_RW))
        .then(RW)
        .when(title.is_not_null())
        .then(TITLE)
        .when(line.str.contains(_RE_BIN))
        .then(BIN)
        .when(pname.str.ends_with(".brw_stats"))
        .then(BRWPARAM)
        .when(pname.is_not_null())
        .then(PARAM)
        .otherwise(OTHER)
    )
    return [
        line,
        cls.cast(pl.Int8).alias("cls"),
        snap.fill_null(start).fill_null(elapsed).cast(pl.Float64, strict=False).alias("num"),
        title.alias("title"),
        pname.alias("pname"),
        param.struct.field("2").alias("pval"),
    ]


def _classify_distinct(s: pl.Series) -> pl.DataFrame:
    """:func:`_classify` of distinct lines, with the lines as column ``line``.

    One ``select`` of expressions built once (:data:`_CLASSIFY`): a block's few
    distinct lines cost one call into polars, not one per expression.
    """
    return pl.DataFrame({"line": s}).select(_CLASSIFY)


# A bin row, exactly: blanks are space, tab and CR; each number has at most 18 digits (so it
# fits in int64); the label's digits may be followed by K/M/G letters (the first one scales).
# As in earlier versions, a run of ':' or '|' counts as one.
_B = r"[ \t\r]"
_D = r"[0-9]{1,18}"
_RE_BIN_ROW = (
    rf"^{_B}*{_D}[KMG]*:+{_B}+{_D}{_B}+{_D}{_B}+{_D}{_B}*\|+{_B}*{_D}{_B}+{_D}{_B}+{_D}{_B}*\n\z"
)
_MULT = np.ones(256, np.int64)
_MULT[[ord("K"), ord("M"), ord("G")]] = [1 << 10, 1 << 20, 1 << 30]
_ASCII0 = np.uint64(0x3030303030303030)  # eight '0' characters
#: Bits of a little-endian 8-byte word kept when its last ``k`` bytes are digits.
_KEEP = np.array([~((1 << 8 * (8 - k)) - 1) & (1 << 64) - 1 for k in range(9)], np.uint64)
_SWAR = [  # (multiplier, shift, mask): adjacent digit groups of 1, 2, 4 -> 2, 4, 8 digits
    (np.uint64(1 + (10 << 8)), np.uint64(8), np.uint64(0x00FF00FF00FF00FF)),
    (np.uint64(1 + (100 << 16)), np.uint64(16), np.uint64(0x0000FFFF0000FFFF)),
    (np.uint64(1 + (10000 << 32)), np.uint64(32), None),
]


def _swar8(words: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Values of the last ``k`` (0 to 8) ASCII digits of little-endian 8-byte words.

    The first character is the lowest byte: ``x * (1 + (10 << 8)) >> 8`` puts
    ``10 * d[i] + d[i + 1]`` in byte ``i``, and so on for pairs and quads.
    """
    x = words ^ _ASCII0  # digits -> 0..9 without borrows
    x &= _KEEP[k]  # bytes before the run -> leading zeros
    for mul, shift, mask in _SWAR:
        x *= mul
        x >>= shift
        if mask is not None:
            x &= mask
    return x.view(np.int64)


def _decode(raw: bytes, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Values of the digit runs ``raw[start:end]`` (1 to 18 digits each).

    Eight digits at a time: the 8-byte word ending at ``end`` is read unaligned
    and reduced in registers (SWAR); the digits before those of a longer run are
    decoded the same way and added, scaled by ``10**8``.
    """
    words = np.ndarray((max(len(raw) - 7, 0),), np.dtype("<u8"), raw, 0, (1,))
    length = end - start
    if len(words):
        val = _swar8(words[np.maximum(end - 8, 0)], np.minimum(length, 8))
    else:
        val = np.zeros(len(start), np.int64)
    for j in np.flatnonzero(end < 8).tolist():  # within the first 8 bytes: no whole word
        val[j] = int(bytes(memoryview(raw)[max(start[j], end[j] - 8) : end[j]]))
    longer = np.flatnonzero(length > 8)
    if longer.size:
        val[longer] += _decode(raw, start[longer], end[longer] - 8) * 10**8
    return val


_SCRATCH = threading.local()


def _scratch(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Two ``n``-byte work arrays (uint8, bool) of the calling thread, reused.

    A block's byte-wide intermediates are written into these rather than into
    fresh arrays, whose pages would be touched for the first time on every block.
    """
    have = getattr(_SCRATCH, "arrays", None)
    if have is None or len(have[0]) < n:
        have = _SCRATCH.arrays = (np.empty(n, np.uint8), np.empty(n, bool))
    return have[0][:n], have[1][:n]


def _shape_runs(shapes: pa.Array, is_bin: np.ndarray) -> np.ndarray:
    """Where each bin-row shape's digit runs 0, 1 and 4 start and end, from its start.

    Parameters
    ----------
    shapes : pyarrow.LargeStringArray
        Distinct line shapes (digits written as ``0``, newline kept).
    is_bin : numpy.ndarray of bool
        The shapes that match the bin-row expression (exactly seven runs).

    Returns
    -------
    numpy.ndarray of int64, shape (len(shapes), 6)
        Start and end of the label's run and of the first count of each side
        (0 for a shape that is not a bin row). [bytes]
    """
    out = np.zeros((len(shapes), 6), np.int64)
    sel = np.flatnonzero(is_bin)
    if not sel.size:
        return out
    bs = shapes.take(pa.array(sel))
    offs = np.frombuffer(bs.buffers()[1], np.int64)[bs.offset : bs.offset + len(bs) + 1]
    data = np.frombuffer(bs.buffers()[2], np.uint8)[: offs[-1]]
    dig = data == 48
    chg = np.empty(len(dig), bool)
    chg[0] = dig[0]
    np.not_equal(dig[1:], dig[:-1], out=chg[1:])
    edges = np.flatnonzero(chg)  # start, end, start, end... (each shape ends in '\n')
    e0 = np.searchsorted(edges, offs[:-1])
    out[sel] = edges[e0[:, None] + np.array([0, 1, 2, 3, 8, 9])] - offs[:-1, None]
    return out


#: :func:`_classify_exprs`, built once.
_CLASSIFY = _classify_exprs()


class _Scan:
    """One block of lines: bin rows found by one regex and decoded in numpy.

    Parameters
    ----------
    raw : bytes or pyarrow.Buffer
        Whole lines, each ending in a newline (a buffer: a view of a file
        mapping, not copied).
    tail : bytes, optional
        The input's last line, cut off the block because it has no newline.

    Attributes
    ----------
    nlines : int
        Lines in the block.
    cls : numpy.ndarray of int8
        Class of every line.
    bins, subs : numpy.ndarray of int64
        Indices of the bin rows, and of the other lines.
    size, read, write : numpy.ndarray of int64
        Per bin row: the label's value (``4K`` = 4096) and the first
        (``rpcs``/``ios``/``maps``) count of each side.
    sub : polars.DataFrame
        Per other line: :func:`_classify`'s fields.

    Notes
    -----
    Bin rows (most lines) are matched with one anchored regular expression over
    the block's distinct line shapes (each line with its digits as ``0``, hashed by
    Arrow's dictionary encoding, in a per-thread scratch array), and their numbers
    are decoded from the digit runs of ``raw``: a bin row holds exactly seven
    (label, then ``count % cum`` twice), at the same offsets as its shape's ``0``
    runs, which are found once per distinct shape (:func:`_shape_runs`). Only
    the other lines are classified with the per-kind expressions of
    :func:`_classify`.
    """

    def __init__(self, raw: bytes | pa.Buffer, tail: bytes | None = None) -> None:
        self.tail = tail
        buf = np.frombuffer(raw, np.uint8)
        nl = np.flatnonzero(buf == 10)
        n = self.nlines = len(nl)
        if not n:
            self.raw, self.nl, self.starts = raw, nl, nl
            self.cls = np.zeros(0, np.int8)
            return
        offs = np.empty(n + 1, np.int64)
        offs[0] = 0
        offs[1:] = nl + 1
        self.raw, self.nl, self.starts = raw, nl, offs[:-1]
        lines = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offs), pa.py_buffer(raw))
        t8, dig = _scratch(len(buf))
        np.subtract(buf, np.uint8(48), out=t8)
        np.less(t8, np.uint8(10), out=dig)  # the digits
        # each line's shape: its digits as '0' (the expression reads every digit alike),
        # matched once per distinct shape
        np.multiply(t8, dig, out=t8)
        np.subtract(buf, t8, out=t8)
        shapes = pc.dictionary_encode(
            pa.LargeStringArray.from_buffers(n, pa.py_buffer(offs), pa.py_buffer(t8))
        )
        is_shape = pl.Series(shapes.dictionary).str.contains(_RE_BIN_ROW).to_numpy()
        shape_of = shapes.indices.to_numpy()
        is_bin = is_shape[shape_of]
        self.bins = np.flatnonzero(is_bin)
        self.subs = np.flatnonzero(~is_bin)
        # a line's digit runs sit where its shape's '0' runs do: the label's, then the
        # first count of each side (runs 0, 1 and 4 of seven)
        run = _shape_runs(shapes.dictionary, is_shape).T.take(shape_of[self.bins], axis=1)
        run += self.starts[self.bins]
        label_end = run[1]
        self.size = _decode(raw, run[0], label_end) * _MULT[buf[label_end]]
        self.read = _decode(raw, run[2], run[3])
        self.write = _decode(raw, run[4], run[5])
        self.sub = _classify(pc.utf8_rtrim(lines.take(self.subs), characters="\r\n"))
        sub_cls = self.sub["cls"].to_numpy().copy()
        sub_cls[sub_cls == BIN] = OTHER  # a bin-like row that failed the exact layout
        self.cls = np.full(n, BIN, np.int8)
        self.cls[self.subs] = sub_cls

    def line(self, i: int) -> bytes:
        """Line ``i`` of the block, without its newline."""
        return bytes(memoryview(self.raw)[self.starts[i] : self.nl[i]])


def _target_of(pname: str) -> str:
    parts = pname[: -len(".brw_stats")].split(".")
    return ".".join(parts[1:]) if len(parts) > 1 else parts[0]


def _default_target(name: str) -> str:
    base = os.path.basename(name)
    if base == "brw_stats":
        return os.path.basename(os.path.dirname(os.path.abspath(name))) or "brw_stats"
    if name == "<buffer>":
        return "brw_stats"
    return base.split(".")[0] or "brw_stats"


def _inherit(values: np.ndarray, prev: np.ndarray, carried: object) -> np.ndarray:
    """``values[prev]``, or ``carried`` where ``prev`` is -1 (nothing before in the block)."""
    if not len(values):
        return np.full(len(prev), carried, dtype=values.dtype)
    return np.where(prev >= 0, values[np.maximum(prev, 0)], carried)


_Errors = list[tuple[np.ndarray | None, np.ndarray | None, str]]  # (on subs, on bins, why)


class _Params(NamedTuple):
    """Per non-bin line of a block: where it is with respect to ``lctl`` parameters."""

    brwp: np.ndarray  # a ``PROVIDER.NAME.brw_stats=`` line
    last_brwp: np.ndarray  # the last such line at or before it (index into subs; -1: none)
    seen_brwp: np.ndarray  # a ``.brw_stats=`` line at or before it (or in an earlier block)
    seen_snap: np.ndarray  # a snapshot_time line at or before it (or in an earlier block)
    in_brw: np.ndarray  # inside a brw_stats dump, not another parameter's value
    active: np.ndarray  # in a dump and not itself a parameter line


class _Dumps(NamedTuple):
    """Per non-bin line of a block: its role in a dump, and the dump and histogram it is in."""

    snap_m: np.ndarray  # a snapshot_time line (starts a dump)
    snap_id: np.ndarray  # dump index (-1: none yet)
    rw_m: np.ndarray  # a 'read | write' line
    title_m: np.ndarray  # a histogram title line
    hdr: np.ndarray  # a start_time or elapsed_time line
    sec_at: np.ndarray  # section code of each title line (-1: not a title)
    section: np.ndarray  # section in force (-1 after a snapshot_time line, until a title)


class _BinRows(NamedTuple):
    """Per bin row of a block: the state of the last non-bin line before it."""

    in_brw: np.ndarray
    snap: np.ndarray
    section: np.ndarray


def _params(st: _State, c: np.ndarray, sub: pl.DataFrame, errors: _Errors) -> _Params:
    """Follow ``lctl`` parameters over the non-bin lines (classes ``c``); check param lines."""
    brwp = c == BRWPARAM
    par = c == PARAM
    seen_brwp = st.seen_brwparam | (np.cumsum(brwp) > 0)
    seen_snap = st.seen_snap | (np.cumsum(c == SNAP) > 0)
    # a param=value line inside a raw (unwrapped) dump is garbage
    bad_par = par & seen_snap & ~seen_brwp
    errors.append((bad_par, None, "a brw_stats line, not 'param=value'"))
    par &= ~bad_par
    lp = _ffill(brwp | par)
    in_brw = np.where(lp >= 0, brwp[np.maximum(lp, 0)], st.in_brw)
    active = in_brw & ~(brwp | par)
    with_val = np.zeros(len(c), bool)
    bp_i = np.flatnonzero(brwp)
    if bp_i.size:
        pval = sub["pval"].gather(bp_i)
        with_val[bp_i] = (pval.str.strip_chars().str.len_bytes() > 0).to_numpy()
    errors.append((with_val, None, "a newline after '.brw_stats='"))
    return _Params(brwp, _ffill(brwp), seen_brwp, seen_snap, in_brw, active)


def _dumps(st: _State, c: np.ndarray, sub: pl.DataFrame, p: _Params) -> _Dumps:
    """The dump and histogram (section) each non-bin line is in."""
    snap_m = (c == SNAP) & p.active
    title_m = (c == TITLE) & p.active
    ls = _ffill(title_m | snap_m)  # last title or snapshot_time (index into subs)
    ti = np.flatnonzero(title_m)
    sec_at = np.full(len(c), -1, np.int64)  # section code of each title line
    if ti.size:
        sec_at[ti] = st.codes(sub["title"].gather(ti))
    return _Dumps(
        snap_m=snap_m,
        snap_id=st.snap + np.cumsum(snap_m),
        rw_m=(c == RW) & p.active,
        title_m=title_m,
        hdr=((c == START) | (c == ELAPSED)) & p.active,
        sec_at=sec_at,
        # the histogram each line is in: -1 after a snapshot_time line, until a title
        section=_inherit(sec_at, ls, st.section),
    )


def _check_line_order(
    st: _State, sc: _Scan, c: np.ndarray, p: _Params, d: _Dumps, errors: _Errors
) -> None:
    """Check each dump line follows the right line: read | write, title, start/elapsed_time."""
    cls, subs, n = sc.cls, sc.subs, len(sc.cls)
    prev_cls = cls[subs - 1] if len(subs) else c
    if len(subs) and subs[0] == 0:
        prev_cls[0] = st.last_cls
    next_cls = cls[np.minimum(subs + 1, n - 1)]
    if len(subs) and subs[-1] == n - 1:
        next_cls[-1] = TITLE  # the block's last line: checked with the next block
    errors.append((d.rw_m & (next_cls != TITLE), None, "a histogram title after 'read | write'"))
    errors.append((d.title_m & (prev_cls != RW), None, "'read | write' before a histogram title"))
    hdr_first = (prev_cls == SNAP) | (prev_cls == START) | (prev_cls == ELAPSED)
    errors.append((d.hdr & ~hdr_first, None, "start/elapsed_time after snapshot_time"))
    errors.append(
        ((c == OTHER) & p.in_brw, None, "a brw_stats line (snapshot_time, title or bin row)")
    )


def _bin_rows(st: _State, bins: np.ndarray, p: _Params, d: _Dumps, errors: _Errors) -> _BinRows:
    """Give each bin row the state of the last non-bin line before it; check it has a histogram."""
    prev = bins - np.arange(len(bins)) - 1  # index into subs; -1: none in the block
    bin_m = _inherit(p.in_brw, prev, st.in_brw)
    snap_b = _inherit(d.snap_id, prev, st.snap)
    sec_b = _inherit(d.section, prev, st.section)
    errors.append(
        (
            (d.rw_m | d.title_m | d.hdr) & (d.snap_id < 0),
            bin_m & (snap_b < 0),
            "snapshot_time before a histogram",
        )
    )
    errors.append((None, bin_m & (sec_b < 0), "a histogram title before its bin rows"))
    return _BinRows(bin_m, snap_b, sec_b)


def _check_pending_rw(st: _State, sc: _Scan, name: str, strict: bool, skips: SkipLog) -> None:
    """The previous block's last line, 'read | write', needs a title as this block's first."""
    if st.pending_rw is not None and sc.cls[0] != TITLE:
        if strict:
            raise InputError(name, st.pending_rw, "a histogram title", sc.line(0), kind=KIND)
        skips.add(st.pending_rw, "'read | write' without title")


def _raise_or_skip(
    errors: _Errors, sc: _Scan, first_line: int, name: str, strict: bool, skips: SkipLog
) -> tuple[np.ndarray, np.ndarray]:
    """Raise the first bad line (strict) or skip every bad line; (bad non-bin lines, bad bins)."""
    n, subs, bins = len(sc.cls), sc.subs, sc.bins
    bad_j = np.zeros(len(subs), bool)
    bad_b = np.zeros(len(bins), bool)
    for on_j, on_b, _ in errors:
        if on_j is not None:
            bad_j |= on_j
        if on_b is not None:
            bad_b |= on_b
    if bad_j.any() or bad_b.any():
        full = []  # each check over the whole block, in order: a line's first failure names it
        for on_j, on_b, why in errors:
            m = np.zeros(n, bool)
            if on_j is not None:
                m[subs] = on_j
            if on_b is not None:
                m[bins] = on_b
            full.append((m, why))
        bad = np.flatnonzero(np.logical_or.reduce([m for m, _ in full]))
        if strict:
            i = int(bad[0])
            expected = next(e for m, e in full if m[i])
            raise InputError(name, first_line + i, expected, sc.line(i), kind=KIND)
        for i in bad.tolist():
            skips.add(first_line + i, next(e for m, e in full if m[i]))
    return bad_j, bad_b


def _keep_dumps(
    st: _State, sc: _Scan, c: np.ndarray, first_line: int, p: _Params, d: _Dumps, bad_j: np.ndarray
) -> None:
    """Keep each dump's time, target and line, its start/elapsed_time and its sections in ``st``."""
    subs, sub = sc.subs, sc.sub
    si = np.flatnonzero(d.snap_m)
    if si.size:
        tg_idx = p.last_brwp[si]
        carry_tg = st.target if st.target is not None else st.default_target
        names = sub["pname"].gather(np.maximum(tg_idx, 0)).to_list()
        tg = [
            _target_of(x) if j >= 0 else carry_tg
            for x, j in zip(names, tg_idx.tolist(), strict=True)
        ]
        st.snaps.append(
            pl.DataFrame(
                {
                    "snap": d.snap_id[si].astype(np.int64),
                    "target": pl.Series(tg, dtype=pl.String),
                    "t": sub["num"].gather(si),
                    "line": (subs[si] + first_line).astype(np.int64),
                }
            )
        )
    hi = np.flatnonzero(d.hdr & ~bad_j)
    if hi.size:
        st.extra.append(
            pl.DataFrame(
                {
                    "snap": d.snap_id[hi].astype(np.int64),
                    "what": np.where(c[hi] == START, "start", "elapsed"),
                    "v": sub["num"].gather(hi),
                }
            )
        )
    ti = np.flatnonzero(d.title_m)
    if ti.size:
        st.sec_pairs.append((d.snap_id[ti].astype(np.int64), d.sec_at[ti]))


def _keep_bins(st: _State, sc: _Scan, b: _BinRows, bad_b: np.ndarray) -> None:
    """Keep the good bin rows of brw_stats dumps (dump, section, size, read, write) in ``st``."""
    keep = b.in_brw & ~bad_b
    if keep.any():
        cols = (b.snap.astype(np.int64, copy=False), b.section, sc.size, sc.read, sc.write)
        st.bins.append(cols if keep.all() else tuple(x[keep] for x in cols))


def _carry(st: _State, sc: _Scan, first_line: int, p: _Params, d: _Dumps) -> None:
    """Keep the state at the block's end in ``st`` (that of its last non-bin line)."""
    n, subs = len(sc.cls), sc.subs
    if len(subs):
        st.snap = int(d.snap_id[-1])
        st.in_brw = bool(p.in_brw[-1])
        st.seen_brwparam = bool(p.seen_brwp[-1])
        st.seen_snap = bool(p.seen_snap[-1])
        st.section = int(d.section[-1])
        if p.last_brwp[-1] >= 0:
            st.target = _target_of(sc.sub["pname"][int(p.last_brwp[-1])])
    st.last_cls = int(sc.cls[-1])
    st.pending_rw = first_line + n - 1 if len(subs) and subs[-1] == n - 1 and d.rw_m[-1] else None


def _scan_block(item: tuple[object, bool]) -> _Scan:
    """:class:`_Scan` of a block (whole lines, and whether it ends in a newline).

    Needs nothing from earlier blocks, so it runs on a worker thread. A last
    line without its newline is cut off (``tail``); a block that is not valid
    UTF-8 is read with U+FFFD for the bad bytes.
    """
    buf, b, tail = cut_tail(*item)
    if has_high(b):
        raw = bytes(buf)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raw = raw.decode("utf-8", "replace").encode()
        buf = raw
    return _Scan(buf, tail)


def _process_block(
    st: _State, first_line: int, sc: _Scan, name: str, strict: bool, skips: SkipLog
) -> None:
    """Check one scanned block of lines; keep its dumps, titles and bin rows in ``st``.

    The state machine (which dump, which histogram, inside a ``.brw_stats=``
    parameter or not) only moves on non-bin lines, so it runs over those; each
    bin row inherits the state of the last non-bin line before it.
    """
    if not sc.nlines:
        return
    c = sc.cls[sc.subs]  # class of each non-bin line
    errors: _Errors = []  # every check, in order: a line's first failure names it
    p = _params(st, c, sc.sub, errors)
    d = _dumps(st, c, sc.sub, p)
    _check_line_order(st, sc, c, p, d, errors)
    b = _bin_rows(st, sc.bins, p, d, errors)
    _check_pending_rw(st, sc, name, strict, skips)
    bad_j, bad_b = _raise_or_skip(errors, sc, first_line, name, strict, skips)
    _keep_dumps(st, sc, c, first_line, p, d, bad_j)
    _keep_bins(st, sc, b, bad_b)
    _carry(st, sc, first_line, p, d)


class BrwStatsLoader:
    """Lustre ``brw_stats`` (raw or ``lctl get_param`` wrapped) -> ``size_hist`` deltas."""

    kind: ClassVar[str] = KIND
    suffixes: ClassVar[tuple[str, ...]] = ("brw_stats",)
    description: ClassVar[str] = "Lustre brw_stats histogram dumps (raw or lctl get_param)"

    def sniff(self, head: bytes) -> bool:
        """A ``snapshot_time`` line followed by a ``read | write`` histogram header."""
        return _kinds.sniff_brw_stats(head)  # the one rule, shared with sniffing by kind table

    def parse(
        self, src: Source, *, strict: bool = True, chunk_rows: int = 1_000_000
    ) -> Iterator[Parsed]:
        """Parse ``src``; see the module docstring for the rules."""
        name = source_name(src)
        st = _State(_default_target(name))
        skips = SkipLog()
        first = 1
        threads = parse_threads()
        with line_blocks(src, _BLOCK_BYTES, blocks_in_flight(threads)) as blocks:
            for sc in ordered_map(_scan_block, blocks, threads):
                if sc.tail is not None:  # the input's last line has no newline
                    last = first + sc.nlines
                    if strict:
                        raise InputError(
                            name,
                            last,
                            "a line ending in a newline (the input looks cut)",
                            sc.tail,
                            kind=KIND,
                        )
                    skips.add(last, "last line without newline")
                _process_block(st, first, sc, name, strict, skips)
                first += sc.nlines
        if st.pending_rw is not None:
            if strict:
                raise InputError(
                    name, st.pending_rw, "a histogram title", "end of input", kind=KIND
                )
            skips.add(st.pending_rw, "histogram header at end of input")
        if not st.snaps:
            raise InputError(name, None, "at least one brw_stats snapshot_time", "none", kind=KIND)
        yield from self._emit(st, name, strict, skips, chunk_rows)

    def _emit(
        self, st: _State, name: str, strict: bool, skips: SkipLog, chunk_rows: int
    ) -> Iterator[Parsed]:
        """Check the dumps, then yield the deltas in chunks of ``chunk_rows`` rows."""
        snaps = pl.concat(st.snaps)
        drop = _check_dumps(st, snaps, name, strict, skips)
        if drop:
            snaps = snaps.filter(~pl.col("snap").is_in(drop))
        per_target = snaps.group_by("target", maintain_order=True).agg(
            pl.len().alias("dumps"),
            pl.col("t").min().alias("first"),
            pl.col("t").max().alias("last"),
        )
        meta = {
            "tool": "lustre brw_stats",
            "page_size_assumed": PAGE_SIZE,
            "section_units": SECTION_UNITS,
            "brw_stats": {
                r["target"]: {"dumps": r["dumps"], "first": r["first"], "last": r["last"]}
                for r in per_target.iter_rows(named=True)
            },
        }
        if st.extra:
            meta["lustre_header"] = "2.14+ (start_time/elapsed_time)"
        produced = False
        for table in _interval_tables(st, snaps, drop, max(1, chunk_rows)):
            produced = True
            yield Parsed(tables={"size_hist": table}, meta=meta, skips=skips)
        if not produced:
            yield Parsed(tables={}, meta=meta, skips=skips)


def _check_dumps(
    st: _State, snaps: pl.DataFrame, name: str, strict: bool, skips: SkipLog
) -> list[int]:
    """Dumps to drop: times not increasing, or histograms lost, per target.

    Each dump is compared with the previous kept dump of its target. The
    common case (no offending dump) is decided in numpy; otherwise the dumps
    are walked in order (raising at the first in strict mode).

    Returns
    -------
    list of int
        Global indices of the dumps skipped (tolerant mode).
    """
    n = snaps.height
    pair_snap = np.concatenate([p[0] for p in st.sec_pairs] or [np.zeros(0, np.int64)])
    pair_code = np.concatenate([p[1] for p in st.sec_pairs] or [np.zeros(0, np.int64)])
    keep = (pair_snap >= 0) & (pair_snap < n)  # titles before any snapshot_time: no dump
    pair_snap, pair_code = pair_snap[keep], pair_code[keep]
    # a dump's histograms as a set of names (titles split at \x1f, as they were once joined)
    atoms: dict[str, int] = {}
    code_atoms = [frozenset(a for a in title.split("\x1f") if a) for title in st.sec_names]
    for parts in code_atoms:
        for a in sorted(parts):
            atoms.setdefault(a, len(atoms))
    t = snaps["t"].to_numpy()
    if len(atoms) <= 64 and n > 1:
        code_mask = np.array(
            [sum(1 << atoms[a] for a in parts) for parts in code_atoms] or [0], np.uint64
        )
        mask = np.zeros(n, np.uint64)
        np.bitwise_or.at(mask, pair_snap, code_mask[pair_code])
        tcode = snaps["target"].rank("dense").to_numpy()
        order = np.argsort(tcode, kind="stable")
        same = tcode[order[1:]] == tcode[order[:-1]]
        cur, prv = order[1:][same], order[:-1][same]
        bad = ~(t[cur] > t[prv]) | ((mask[prv] & ~mask[cur]) != 0)
        if not bad.any():
            return []
    elif n <= 1:
        return []
    secs: list[set[str]] = [set() for _ in range(n)]
    for s_id, code in zip(pair_snap.tolist(), pair_code.tolist(), strict=True):
        secs[s_id] |= code_atoms[code]
    drop: list[int] = []
    prev: dict[str, tuple[float, frozenset]] = {}
    for s_id, tg, t_, line in snaps.iter_rows():
        cur_set = frozenset(secs[s_id])
        if tg in prev:
            pt, psec = prev[tg]
            why = None
            if not t_ > pt:
                why = (f"snapshot_time after {pt} for target {tg!r}", t_)
            elif psec - cur_set:
                why = (
                    f"every histogram of the previous dump of {tg!r} (cut mid-dump?)",
                    f"missing {sorted(psec - cur_set)}",
                )
            if why is not None:
                if strict:
                    raise InputError(name, line, why[0], why[1], kind=KIND)
                skips.add(line, why[0])
                drop.append(s_id)
                continue
        prev[tg] = (t_, cur_set)
    return drop


def _interval_tables(
    st: _State, snaps: pl.DataFrame, drop: list[int], chunk_rows: int
) -> Iterator[pa.Table]:
    """The ``size_hist`` rows of each target with at least two (kept) dumps, in chunks.

    Rows run target by target, interval by interval, then by section (in order of
    first appearance) and bin, then read before write; each target's rows come in
    tables of ``chunk_rows`` rows (its last one fewer).
    """
    if not st.bins:
        return
    b_snap, b_sec, b_size, b_read, b_write = (np.concatenate(c) for c in zip(*st.bins, strict=True))
    if drop:
        kept = ~np.isin(b_snap, drop)
        b_snap, b_sec, b_size = b_snap[kept], b_sec[kept], b_size[kept]
        b_read, b_write = b_read[kept], b_write[kept]
    # section codes by first appearance among the kept bins
    used = pl.Series(b_sec).unique(maintain_order=True).to_numpy()
    if not np.array_equal(used, np.arange(len(used))):
        remap = np.zeros(len(st.sec_names), np.int64)
        remap[used] = np.arange(len(used))
        b_sec = remap[b_sec]
    sec_names = [st.sec_names[c] for c in used.tolist()]
    if "pages per bulk r/w" in sec_names:
        pages = b_sec == sec_names.index("pages per bulk r/w")
        b_size = np.where(pages, b_size * PAGE_SIZE, b_size)
    key_all = b_sec * (1 << 48) + b_size
    snap_np = snaps["snap"].to_numpy()
    t_np = snaps["t"].to_numpy()
    groups = list(snaps.with_row_index("i").group_by("target", maintain_order=True))
    # each bin's target group and its dump's position in the target's series
    n_ids = int(max(snap_np.max(initial=-1), b_snap.max(initial=-1))) + 1
    grp_of = np.full(n_ids, -1, np.int64)
    row_of = np.zeros(n_ids, np.int64)
    for g, (_, rows) in enumerate(groups):
        ids = snap_np[rows["i"].to_numpy()]
        grp_of[ids] = g
        row_of[ids] = np.arange(len(ids))
    b_grp = grp_of[b_snap]
    if len(groups) > 1:
        order = np.argsort(b_grp, kind="stable")
        bounds = np.searchsorted(b_grp[order], np.arange(len(groups) + 1))
    for g, ((tg,), rows) in enumerate(groups):
        ri = rows["i"].to_numpy()
        ts = t_np[ri]
        if len(ri) < 2:
            continue
        mine = order[bounds[g] : bounds[g + 1]] if len(groups) > 1 else slice(None)
        row = row_of[b_snap[mine]]
        if not len(row):
            continue
        key = key_all[mine]
        ukey, v = _dense(row, key, b_read[mine], b_write[mine], len(ri))
        yield from _target_tables(tg, ts, ukey, v, sec_names, chunk_rows)


def _target_tables(
    tg: str, ts: np.ndarray, ukey: np.ndarray, v: np.ndarray, sec_names: list[str], chunk_rows: int
) -> Iterator[pa.Table]:
    """The ``size_hist`` rows of one target, every interval between its dumps, in chunks.

    Parameters
    ----------
    tg : str
        The target.
    ts : numpy.ndarray of float64
        Its dumps' ``snapshot_time``. [s since the epoch]
    ukey : numpy.ndarray of int64
        Its bins (section code << 48 | size), increasing.
    v : numpy.ndarray of int64
        Cumulative counts, ``[dump, bin, read/write]``.
    sec_names : list of str
        Section titles by code.
    chunk_rows : int
        Rows per table (the last one fewer).

    Yields
    ------
    pyarrow.Table
        Rows interval by interval, then bin, then read before write. Each table is
        built when its turn comes (:func:`_interval_rows`), so a consumer that is
        done with one frees it before the next is written, and the pool reuses it.
    """
    n_i, n_k = v.shape[0] - 1, v.shape[1]
    per = n_k * 2
    total = v.sum(axis=(1, 2))
    d = deltas(np.zeros(len(ts), np.int64), ts, total)
    # any bin dropping means the target restarted: every bin counts from 0; a
    # restart inside a gap keeps both facts (gap_reset, see load._counters)
    reset = (v[1:] < v[:-1]).any(axis=(1, 2)) | np.isin(d.quality, (RESET, GAP_RESET))
    q = np.where(reset, RESET, OK).astype(np.int8)
    q = mark_gaps(np.zeros(len(q), np.int64), d.interval_s, q)
    ts_us = (ts[1:] * 1e6).round().astype(np.int64)
    for lo in range(0, n_i * per, chunk_rows):
        hi = min(lo + chunk_rows, n_i * per)
        i0, i1 = lo // per, -(-hi // per)  # the intervals the rows lo..hi are in
        table = _interval_rows(
            tg,
            ts_us[i0:i1],
            d.interval_s[i0:i1],
            q[i0:i1],
            reset[i0:i1],
            v[i0 : i1 + 1],
            ukey,
            sec_names,
        )
        yield table.slice(lo - i0 * per, hi - lo)


def _interval_rows(
    tg: str,
    ts_us: np.ndarray,
    interval_s: np.ndarray,
    q: np.ndarray,
    reset: np.ndarray,
    v: np.ndarray,
    ukey: np.ndarray,
    sec_names: list[str],
) -> pa.Table:
    """The rows of consecutive intervals of one target (see :func:`_target_tables`).

    ``v`` holds the counts of the dumps that start and end them (one more than
    the intervals); ``reset`` intervals count from 0 (each bin's own value). The
    columns are written in place in Arrow's pool (:mod:`iochar.load._pool`), one
    pass each.
    """
    n_i, n_k = v.shape[0] - 1, v.shape[1]
    per = n_k * 2
    n = n_i * per
    cols = pool_arrays(n, [np.int64, np.int64, np.int64, np.float64, np.int32, np.int32, np.int32])
    (ts_v, ts_b), (size_v, size_b), (count_v, count_b), (iv_v, iv_b) = cols[:4]
    (sec_v, sec_b), (op_v, op_b), (q_v, q_b) = cols[4:]
    dv = count_v.reshape(n_i, n_k, 2)
    np.subtract(v[1:], v[:-1], out=dv)
    dv[reset] = v[1:][reset]
    ts_v.reshape(n_i, per)[:] = ts_us[:, None]
    iv_v.reshape(n_i, per)[:] = interval_s[:, None]
    q_v.reshape(n_i, per)[:] = q[:, None]
    sec_v.reshape(n_i, n_k, 2)[:] = (ukey >> 48)[None, :, None]
    size_v.reshape(n_i, n_k, 2)[:] = (ukey & ((1 << 48) - 1))[None, :, None]
    op_v.reshape(n_i * n_k, 2)[:] = np.arange(2)
    # text columns as dictionaries: a few distinct strings, one int32 code per row
    return pa.table(
        {
            "target": dictionary(zeros_i32(n), [tg]),
            "ts": arrow_array(pa.timestamp("us"), n, ts_b),
            "interval_s": arrow_array(pa.float64(), n, iv_b),
            "section": dictionary(arrow_array(pa.int32(), n, sec_b), sec_names),
            "op": dictionary(arrow_array(pa.int32(), n, op_b), ["read", "write"]),
            "size_bytes": arrow_array(pa.int64(), n, size_b),
            "count": arrow_array(pa.int64(), n, count_b),
            "quality": dictionary(arrow_array(pa.int32(), n, q_b), list(QUALITY)),
        }
    )


class _Dense(NamedTuple):
    """A target's bins as one dense array."""

    ukey: np.ndarray  #: sorted distinct bin keys (section code << 48 | size)
    counts: np.ndarray  #: [dump, key, read/write] counts, 0 for a bin a dump lacks


def _dense(
    row: np.ndarray, key: np.ndarray, read: np.ndarray, write: np.ndarray, n_dumps: int
) -> _Dense:
    """Scatter bin rows (dump ``row``, bin ``key``) into a dense ``[dump, key, op]`` array.

    When every dump lists the same increasing keys (the usual case: Lustre
    prints the same populated range each time) this is a reshape; otherwise
    keys are sorted and rows scattered, a later duplicate row winning.
    """
    n_k = len(key) // n_dumps
    if n_k * n_dumps == len(key) and n_k > 0:
        first = key[:n_k]
        if (
            (np.diff(first) > 0).all()
            and (key.reshape(n_dumps, n_k) == first).all()
            and (row.reshape(n_dumps, n_k) == np.arange(n_dumps)[:, None]).all()
        ):
            return _Dense(first, np.stack([read, write], axis=1).reshape(n_dumps, n_k, 2))
    ukey = np.sort(pl.Series(key).unique().to_numpy())
    kinv = np.searchsorted(ukey, key)
    counts = np.zeros((n_dumps, len(ukey), 2), np.int64)
    counts[row, kinv, 0] = read
    counts[row, kinv, 1] = write
    return _Dense(ukey, counts)


register(BrwStatsLoader())
