"""sysstat ``iostat -x -t`` text and ``iostat -o JSON`` → ``counters``.

iostat reports, for each interval, per-device *rates* (per second) and
*averages* (await, queue size, request size). iochar stores per-interval
amounts (DESIGN: ``counters``), so rates are multiplied by the interval:
``read_bytes = rkB/s × 1024 × interval_s``; averages keep their own metric
with the unit in the name (``read_await_s``, ``queue_depth_avg``).

Accepted inputs
---------------
- ``iostat -x -t [-y] [-k|-m] [-p ...] [-d] INTERVAL [COUNT]`` text, in every
  column layout sysstat has used: the old one (``rrqm/s wrqm/s r/s w/s
  rkB/s wkB/s avgrq-sz avgqu-sz await r_await w_await svctm %util``; sysstat
  ≤ 11.6, ``Device:`` header, ``rsec/s``/``rkB/s``/``rMB/s`` units) and the
  new one (sysstat ≥ 11.7/12: ``r/s rkB/s rrqm/s %rrqm r_await rareq-sz w/s
  ... d/s dkB/s ... f/s f_await aqu-sz %util``, ``Device`` header), with or
  without the ``avg-cpu`` block. Plain ``iostat -t`` (``tps kB_read/s ...``)
  also loads. The layout is read from each ``Device`` header, so columns may
  come in any order.
- ``iostat -x -t -o JSON`` (sysstat's JSON; ``.json``).

Times
-----
``ts`` is the interval end: the report's ``-t`` timestamp. Formats: the C
locale ``MM/DD/YY HH:MM:SS``, ``MM/DD/YYYY HH:MM:SS [AM|PM]`` (en_US),
``DD.MM.YYYY HH:MM:SS`` and ISO 8601 (``S_TIME_FORMAT=ISO``:
``YYYY-MM-DDTHH:MM:SS+hhmm``). iostat prints *local* time; a timestamp
without an offset is taken as UTC (no time zone is written anywhere else in
the output), one with an offset (ISO) is converted to UTC.
``interval_s`` is the difference between consecutive report timestamps
(1 s resolution, as printed). Timestamps must increase strictly.

The first report of a run has no predecessor: without ``-y`` it holds
averages since boot, with ``-y`` its start time is not printed. Either way it
yields no rows (it is counted in ``meta["skipped_first_reports"]``). A
``Linux ...`` banner line starts a new run (several runs concatenated), whose
first report is skipped too.

Metrics
-------
See :data:`COLUMN_MAP` (raw column → metric, scale, whether it is a rate)
and :data:`CPU_MAP`. Rates become per-interval amounts; ``%util`` becomes
``busy_s = %util / 100 × interval_s``. CPU lines (``avg-cpu``) become rows
with ``target = "cpu"`` and metrics ``user_pct``, ``system_pct``... (the
interval's average percentages, as printed). Columns not in the map are
ignored (listed in the warnings). ``quality`` is always ``"ok"``.

Errors (``InputError`` with the line): a first line that is not the
``Linux ...`` banner, a device line before any ``Device`` header or
timestamp, a line with a different field count than its header, a value
that is not a number, an unparseable or non-increasing timestamp, and a last
line without a newline (file cut short). ``strict=False`` skips and counts
bad lines (and the reports whose timestamp is bad).

Parsing is vectorized over blocks of lines of about 1 MB (small enough for the
CPU caches; chunks of about ``chunk_rows`` rows are yielded): one numpy
``nonzero`` finds every token boundary of a block; one Arrow ``cast`` of the
block's bytes, viewed as a string array whose elements are its tokens, decodes
all its numbers (:meth:`_Block.numbers`); timestamps in the usual fixed-width
formats are decoded with numpy, others with polars. Every value is exactly what
digit-by-digit decoding of sysstat's ``%.2f`` (:func:`_parse_numbers`, also the
path for garbage and for other number shapes) gives.

Blocks are parsed on every core (issue 18 item 3): a plain file is mapped, not
read (:func:`iochar.load._blocks.line_blocks`); the state-free part of each
block (:func:`_prepare`) and the building of its rows (:func:`_emit_block`) run
on :func:`~iochar.load._blocks.parse_threads` threads, blocks ahead, while what
crosses blocks — the report each line is in and the previous report's time, the
``Device``/``avg-cpu`` header in force, the line after an ``avg-cpu`` header,
device-name codes — is followed block by block in input order. That ordered stage
holds the GIL, so it does only per-block work where it can: a block's device
names are keyed on its worker (:func:`_block_names`) and only its few distinct
names are looked up in order; each line's code is gathered when its rows are built. Rows come block
by block in input order; within a block, the rows of each ``Device`` layout and
then the ``avg-cpu`` rows, metric by metric. The blocks depend only on the
content and the block size, so the thread count changes neither rows nor order
(``tests/load/test_iostat_blocks.py``).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

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
    line_blocks,
    ordered_map,
    parse_threads,
)
from iochar.load._counters import EXPECT_AMOUNT, flag_implausible, implausible
from iochar.load._pool import arrow_array, pool_arrays, zeros_i32
from iochar.load._pool import dictionary as dictionary_of
from iochar.load._text import Source, source_name

__all__ = ["IostatLoader", "COLUMN_MAP", "CPU_MAP", "JSON_KEYS"]

KIND = "iostat"

#: raw iostat column -> (metric, scale, is_rate). value = raw × scale (× interval_s if a rate).
COLUMN_MAP: dict[str, tuple[str, float, bool]] = {
    # operations completed [count]
    "r/s": ("read_ios", 1.0, True),
    "w/s": ("write_ios", 1.0, True),
    "d/s": ("discard_ios", 1.0, True),
    "f/s": ("flush_ios", 1.0, True),
    "tps": ("ios", 1.0, True),
    # merges [count]
    "rrqm/s": ("read_merges", 1.0, True),
    "wrqm/s": ("write_merges", 1.0, True),
    "drqm/s": ("discard_merges", 1.0, True),
    # bytes [bytes]; sectors are 512 bytes
    "rkB/s": ("read_bytes", 1024.0, True),
    "wkB/s": ("write_bytes", 1024.0, True),
    "dkB/s": ("discard_bytes", 1024.0, True),
    "rMB/s": ("read_bytes", 1048576.0, True),
    "wMB/s": ("write_bytes", 1048576.0, True),
    "dMB/s": ("discard_bytes", 1048576.0, True),
    "rsec/s": ("read_bytes", 512.0, True),
    "wsec/s": ("write_bytes", 512.0, True),
    "kB_read/s": ("read_bytes", 1024.0, True),
    "kB_wrtn/s": ("write_bytes", 1024.0, True),
    "kB_dscd/s": ("discard_bytes", 1024.0, True),
    "MB_read/s": ("read_bytes", 1048576.0, True),
    "MB_wrtn/s": ("write_bytes", 1048576.0, True),
    "MB_dscd/s": ("discard_bytes", 1048576.0, True),
    "Blk_read/s": ("read_bytes", 512.0, True),
    "Blk_wrtn/s": ("write_bytes", 512.0, True),
    # busy time [s]
    "%util": ("busy_s", 0.01, True),
    # averages over the interval (not amounts)
    "await": ("await_s", 0.001, False),
    "r_await": ("read_await_s", 0.001, False),
    "w_await": ("write_await_s", 0.001, False),
    "d_await": ("discard_await_s", 0.001, False),
    "f_await": ("flush_await_s", 0.001, False),
    "svctm": ("service_time_s", 0.001, False),
    "avgqu-sz": ("queue_depth_avg", 1.0, False),
    "aqu-sz": ("queue_depth_avg", 1.0, False),
    "avgrq-sz": ("request_size_avg_bytes", 512.0, False),
    "rareq-sz": ("read_request_size_avg_bytes", 1024.0, False),
    "wareq-sz": ("write_request_size_avg_bytes", 1024.0, False),
    "dareq-sz": ("discard_request_size_avg_bytes", 1024.0, False),
    "%rrqm": ("read_merged_pct", 1.0, False),
    "%wrqm": ("write_merged_pct", 1.0, False),
    "%drqm": ("discard_merged_pct", 1.0, False),
}
#: Columns knowingly ignored: per-interval totals that repeat the ``/s`` rates.
IGNORED = frozenset(
    {"kB_read", "kB_wrtn", "kB_dscd", "MB_read", "MB_wrtn", "MB_dscd", "Blk_read", "Blk_wrtn"}
)
#: avg-cpu column -> metric (percent of CPU time in the interval, average over CPUs).
CPU_MAP: dict[str, str] = {
    "%user": "user_pct",
    "%nice": "nice_pct",
    "%system": "system_pct",
    "%iowait": "iowait_pct",
    "%steal": "steal_pct",
    "%idle": "idle_pct",
}
#: sysstat JSON disk keys that differ from the text columns.
JSON_KEYS: dict[str, str] = {"util": "%util", "rrqm": "%rrqm", "wrqm": "%wrqm", "drqm": "%drqm"}

_BANNER = re.compile(
    r"^(?P<sys>\S+) (?P<release>\S+) \((?P<host>[^)]*)\)\s+(?P<date>\S+)\s+(?P<arch>\S+)?\s*"
    r"(?:\((?P<ncpu>\d+) CPU\))?"
)
#: (regex on a timestamp line, polars/strptime format) in detection order.
_TS_FORMATS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{4}$"), "%Y-%m-%dT%H:%M:%S%z"),
    (re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$"), "%Y-%m-%dT%H:%M:%S"),
    (re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$"), "%Y-%m-%d %H:%M:%S"),
    (re.compile(r"^\d{2}/\d{2}/\d{4} \d{2}:\d{2}:\d{2} [AP]M$"), "%m/%d/%Y %I:%M:%S %p"),
    (re.compile(r"^\d{2}/\d{2}/\d{4} \d{2}:\d{2}:\d{2}$"), "%m/%d/%Y %H:%M:%S"),
    (re.compile(r"^\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} [AP]M$"), "%m/%d/%y %I:%M:%S %p"),
    (re.compile(r"^\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}$"), "%m/%d/%y %H:%M:%S"),
    (re.compile(r"^\d{2}\.\d{2}\.\d{4} \d{2}:\d{2}:\d{2}$"), "%d.%m.%Y %H:%M:%S"),
)
#: The same formats as fixed-width templates (Y year, y 2-digit year, M month, D day,
#: h hour, I 12-hour hour, m minute, s second, P AM/PM; other characters literal).
_TS_TEMPLATES: dict[str, str] = {
    "%Y-%m-%dT%H:%M:%S": "YYYY-MM-DDThh:mm:ss",
    "%Y-%m-%d %H:%M:%S": "YYYY-MM-DD hh:mm:ss",
    "%m/%d/%Y %I:%M:%S %p": "MM/DD/YYYY II:mm:ss PP",
    "%m/%d/%Y %H:%M:%S": "MM/DD/YYYY hh:mm:ss",
    "%m/%d/%y %I:%M:%S %p": "MM/DD/yy II:mm:ss PP",
    "%m/%d/%y %H:%M:%S": "MM/DD/yy hh:mm:ss",
    "%d.%m.%Y %H:%M:%S": "DD.MM.YYYY hh:mm:ss",
}
_MAXINT = 12  # digits before the point decoded on the fast path
_BLOCK_BYTES = 1 << 21  # parse block: small enough for the CPU caches (measured best) [bytes]
_MIN_BLOCK_BYTES = 1 << 16  # parse block for a small chunk_rows [bytes]
_SLOW_RUN = 1024  # tokens: below this, a slice that fails to cast is decoded slowly
#: byte -> uint16 with bit t moved to bit 2 t (token flags -> flags of tokens and gaps)
_SPREAD = np.array([sum(((x >> t) & 1) << (2 * t) for t in range(8)) for x in range(256)], "<u2")
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], np.uint64)  # masks of n bytes

# line classes
_BLANK, _TS, _BANNER_L, _CPUHDR, _CPUVAL, _DEVHDR, _DEV = range(7)
_BY_FIRST_BYTE = np.full(256, _DEV, np.int8)
_BY_FIRST_BYTE[48:58] = _TS
_BY_FIRST_BYTE[[9, 32]] = _CPUVAL
_SPACE = np.zeros(256, bool)  # what bytes.isspace() calls white space
_SPACE[[9, 10, 11, 12, 13, 32]] = True


def _bad(name: str, line: int | None, expected: str, got: object = None) -> InputError:
    return InputError(name, line, expected, got, kind=KIND)


class _BlockNames(NamedTuple):
    """The device names of a block's device lines, keyed without the state of other blocks.

    Computed by :func:`_prepare` on a worker thread (:func:`_block_names`), so the stage
    that runs in order only looks up the block's few distinct names
    (:meth:`_NameCodes.lookup`), and the worker that builds the rows gathers each
    line's code (:func:`_counters_table`, from a :class:`_Targets`).
    """

    keys: np.ndarray  # of uint64: the block's distinct name keys, increasing
    local: np.ndarray  # of int32: per line of the block, its name's index in ``keys``


class _Targets(NamedTuple):
    """Target codes of some device lines, left to the worker that builds their rows."""

    local: np.ndarray  # of int32: per line of the block, its name's index in the block's keys
    rows: np.ndarray  # the lines
    lut: np.ndarray  # of int32: dictionary code of each of the block's keys
    dictionary: pa.Array  # the names, as they were when the block was looked up


def _name_keys(blk: _Block, lines: np.ndarray) -> np.ndarray | None:
    """Key of the device name (first token) of lines ``lines``; None: a name is too long.

    A name of at most 8 bytes is keyed by those bytes read as one little-endian
    integer (zero-padded; token bytes are never 0, so the key is unique).
    """
    start = blk.starts[lines]  # a device line starts with its name
    size = blk.te_[blk.first_tok[lines]] - start
    if not len(start) or size.max() > 8 or start[-1] + 8 > len(blk.b):
        return None
    words = np.ndarray((len(blk.b) - 7,), "<u8", blk.b, 0, (1,))  # 8 bytes from each byte
    return words[start] & _LOW_BYTES[size]


def _block_names(blk: _Block, lines: np.ndarray) -> _BlockNames | None:
    """:class:`_BlockNames` of device lines ``lines`` (None: none, or a name too long).

    Names are few and repeat report after report: the distinct keys are found
    among the first lines' and looked up for all (``searchsorted``), without a
    sort of every line's key.
    """
    key = _name_keys(blk, lines)
    if key is None:
        return None
    keys = np.unique(key[:256])
    pos = np.searchsorted(keys, key)
    miss = keys[np.minimum(pos, len(keys) - 1)] != key
    if miss.any():
        keys = np.union1d(keys, key[miss])
        pos = np.searchsorted(keys, key)
    local = np.zeros(len(blk.ends), np.int32)
    local[lines] = pos
    return _BlockNames(keys, local)


class _NameCodes:
    """Device names -> dictionary codes, kept from block to block (names are few).

    A name of at most 8 bytes is keyed by those bytes read as one integer
    (:func:`_name_keys`); longer names take the general path,
    :meth:`_Block.names`. New names get the next codes, in increasing key order
    within a block.
    """

    def __init__(self) -> None:
        self.keys = np.empty(0, np.uint64)  # sorted
        self.codes = np.empty(0, np.int32)  # dictionary index of each key
        self.dictionary = pa.array([], pa.string())

    def encode(self, blk: _Block, rows: np.ndarray) -> pa.DictionaryArray:
        """Names of device lines ``rows`` (increasing) as a dictionary array."""
        key = _name_keys(blk, rows)
        if key is None:
            return blk.names(rows)
        pos = np.searchsorted(self.keys, key)
        if not len(self.keys) or (self.keys[np.minimum(pos, len(self.keys) - 1)] != key).any():
            self._add(np.setdiff1d(key, self.keys))
            pos = np.searchsorted(self.keys, key)
        codes = pa.array(self.codes[pos])
        return pa.DictionaryArray.from_arrays(codes, self.dictionary, safe=False)

    def lookup(self, names: _BlockNames, rows: np.ndarray) -> _Targets:
        """Codes of device lines ``rows`` of a block whose names :func:`_block_names` keyed.

        Gives the codes :meth:`encode` gives (the same new names, added in the same
        order), but touches only the block's distinct names; the lines' codes are
        gathered by :meth:`_Targets.array`, on a worker thread.
        """
        keys = names.keys
        pos = np.searchsorted(self.keys, keys)
        last = len(self.keys) - 1
        found = np.zeros(len(keys), bool)
        if last >= 0:
            found = (pos <= last) & (self.keys[np.minimum(pos, last)] == keys)
        if not found.all():
            used = np.bincount(names.local[rows], minlength=len(keys)) > 0
            new = keys[used & ~found]  # increasing, as encode's setdiff1d gives them
            if len(new):
                self._add(new)
            pos = np.searchsorted(self.keys, keys)  # names not in rows: never gathered
        lut = self.codes[np.minimum(pos, len(self.keys) - 1)]
        return _Targets(names.local, rows, lut, self.dictionary)

    def _add(self, new: np.ndarray) -> None:
        raw = [int(k).to_bytes(8, "little").rstrip(b"\0") for k in new.tolist()]
        names = pa.array(raw, pa.binary()).cast(pa.string())  # invalid UTF-8 raises
        codes = np.arange(len(self.dictionary), len(self.dictionary) + len(raw), dtype=np.int32)
        self.dictionary = pa.concat_arrays([self.dictionary, names])
        keys = np.concatenate([self.keys, new])
        order = np.argsort(keys, kind="stable")
        self.keys, self.codes = keys[order], np.concatenate([self.codes, codes])[order]


@dataclass
class _State:
    """What carries from one block to the next."""

    dev_layouts: list[list[str]] = field(default_factory=list)  # Device header columns
    cpu_layouts: list[list[str]] = field(default_factory=list)  # avg-cpu header columns
    header_id: int = -1  # Device layout in force at the end of the last block
    cpu_id: int = -1
    cpu_pending: bool = False  # the block ended on an avg-cpu header line
    cur_ts: int | None = None  # current report's ts [us]; None at a run start
    cur_iv: float = float("nan")  # current report's interval [s]; nan: yields nothing
    cur_ok_t: bool = False  # current report's time is good (a predecessor for the next)
    ts_format: str | None = None
    seen_banner: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    first_reports: int = 0
    ignored: set[str] = field(default_factory=set)
    names: _NameCodes = field(default_factory=_NameCodes)


def _prefix_codes(b: np.ndarray, starts: np.ndarray, ends: np.ndarray, n: int) -> np.ndarray:
    """First ``n`` bytes of each line as an (nlines, n) array, 0-padded past line end."""
    idx = starts[:, None] + np.arange(n)[None, :]
    inside = idx < ends[:, None]
    out = b[np.minimum(idx, len(b) - 1)]
    out[~inside] = 0
    return out


def _as_bytes_rows(p: np.ndarray, text: bytes) -> np.ndarray:
    want = np.frombuffer(text, np.uint8)
    return np.all(p[:, : len(want)] == want, axis=1)


def _parse_numbers(
    b: np.ndarray, s: np.ndarray, e: np.ndarray, buf: bytes | memoryview
) -> tuple[np.ndarray, np.ndarray]:
    """Decode number tokens ``buf[s:e]``; returns (values, ok mask).

    Fast path: sysstat's ``%.2f`` (``digits.dd``), decoded digit by digit in
    numpy, one pass per integer-part length. Other shapes (integers, other
    decimals, signs) use ``float()``.
    """
    n = len(s)
    vals = np.zeros(n, np.float64)
    ok = np.zeros(n, bool)
    if n == 0:
        return vals, ok
    nint = e - s - 3
    ep = np.maximum(e, 3)
    d1 = b[ep - 2] - np.uint8(48)  # uint8: non-digits wrap to >= 10
    d2 = b[ep - 1] - np.uint8(48)
    fast = (nint >= 1) & (nint <= _MAXINT) & (b[ep - 3] == 46) & (d1 < 10) & (d2 < 10)
    key = np.where(fast, nint, 0).astype(np.int8)
    order = np.argsort(key, kind="stable")  # radix sort on small ints
    bounds = np.concatenate(([0], np.cumsum(np.bincount(key, minlength=_MAXINT + 1))))
    for L in range(1, _MAXINT + 1):
        sel = order[bounds[L] : bounds[L + 1]]
        if not len(sel):
            continue
        ss = s[sel]
        dig = b[ss] - np.uint8(48)
        good = dig < 10
        iv = dig.astype(np.float64)
        for j in range(1, L):
            dig = b[ss + j] - np.uint8(48)
            good &= dig < 10
            iv *= 10.0
            iv += dig
        vals[sel] = iv + (d1[sel] * 10.0 + d2[sel]) / 100.0
        ok[sel] = good
    for i in np.flatnonzero(~ok):  # rare: other number shapes, or garbage
        tok = bytes(buf[s[i] : e[i]])
        try:
            v = float(tok)
        except ValueError:
            continue
        if np.isfinite(v) and tok.strip(b"0123456789.-+eE") == b"":
            vals[i], ok[i] = v, True
    return vals, ok


class _InForce:
    """Values set on some lines of a block and in force until the next such line.

    Parameters
    ----------
    lines : numpy.ndarray of int
        The lines that set a value, increasing.
    values : numpy.ndarray
        The value each sets.
    carry
        The value in force before the first (carried from the previous block).
    """

    def __init__(self, lines: np.ndarray, values: np.ndarray, carry: Any) -> None:
        self.lines = lines
        self.values = np.concatenate(([carry], values)).astype(values.dtype, copy=False)

    @property
    def last(self) -> Any:
        """The value in force after the last line."""
        return self.values[-1]

    def at(self, rows: np.ndarray) -> np.ndarray:
        """The values in force on lines ``rows``."""
        return self.values[np.searchsorted(self.lines, rows, side="right")]


class _Block:
    """Lines and tokens of one block, computed once, vectorized.

    Parameters
    ----------
    buf : bytes or pyarrow.Buffer
        Whole lines, each ending in a newline (a buffer: a view of a file
        mapping, not copied).

    Notes
    -----
    Tokens are maximal runs of bytes > 32 (space, tab, CR, LF... are <= 32).
    ``edges`` holds their boundaries in order, start, end, start, end..., so
    one ``nonzero`` over the block finds them all; ``ts_`` and ``te_`` are
    views of it (token start, and end exclusive).
    """

    def __init__(self, buf: bytes | pa.Buffer) -> None:
        self.buf = buf if isinstance(buf, bytes) else memoryview(buf)
        b = np.frombuffer(buf, np.uint8)
        self.b = b
        self.ends = np.flatnonzero(b == 10)
        self.starts = np.empty_like(self.ends)
        self.starts[:1] = 0
        self.starts[1:] = self.ends[:-1] + 1
        word = np.empty(len(b) + 2, bool)
        word[0] = word[-1] = False
        np.greater(b, 32, out=word[1:-1])
        self.edges = np.flatnonzero(word[1:] != word[:-1])
        self.ts_ = self.edges[0::2]
        self.te_ = self.edges[1::2]
        # a token never spans a newline: the edges before a line start come in pairs
        self.first_tok = np.searchsorted(self.edges, self.starts) >> 1
        self.ntok = np.diff(self.first_tok, append=len(self.ts_))

    def line_bytes(self, i: int) -> bytes:
        return bytes(self.buf[self.starts[i] : self.ends[i]])

    def line_text(self, i: int) -> str:
        return self.line_bytes(i).decode("utf-8", "backslashreplace")

    def spans(self, starts: np.ndarray, ends: np.ndarray) -> pa.Array:
        """Byte ranges ``[starts, ends)`` of the block, every other element of an array.

        Parameters
        ----------
        starts, ends : numpy.ndarray of int
            Increasing, non-overlapping ranges.

        Returns
        -------
        pyarrow.Array
            ``large_binary`` over the block's memory (no copy): element ``2 j``
            is range ``j``, element ``2 j + 1`` (null) the gap after it.
        """
        m = len(starts)
        offsets = np.empty(2 * m, np.int64)
        offsets[0::2] = starts
        offsets[1::2] = ends
        bits = _SPREAD[np.packbits(np.ones(m, bool), bitorder="little")]
        buffers = [pa.py_buffer(bits), pa.py_buffer(offsets), pa.py_buffer(self.b)]
        return pa.Array.from_buffers(pa.large_binary(), max(2 * m - 1, 0), buffers)

    def lines(self, rows: np.ndarray) -> pa.Array:
        """Lines ``rows`` (increasing; without their newline) as a ``large_binary`` array."""
        return pc.drop_null(self.spans(self.starts[rows], self.ends[rows]))

    def names(self, rows: np.ndarray) -> pa.DictionaryArray:
        """First token (device name) of lines ``rows`` (increasing), dictionary-encoded."""
        fi = self.first_tok[rows]
        enc = pc.dictionary_encode(self.spans(self.ts_[fi], self.te_[fi]))
        ind = enc.indices
        codes = np.frombuffer(ind.buffers()[1], np.int32, len(ind), 4 * ind.offset)[0::2]
        return pa.DictionaryArray.from_arrays(pa.array(codes), enc.dictionary.cast(pa.string()))

    def numbers(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Decode the tokens where ``mask`` as numbers, all in one pass.

        Parameters
        ----------
        mask : numpy.ndarray of bool
            Which tokens to decode (one flag per token).

        Returns
        -------
        values : numpy.ndarray of float64
            One per token (read-only). Where ``mask``: the number, correctly
            rounded; 0 if not a number; inf or nan where the text says so
            (:func:`_parse_numbers` decides about those: see
            :func:`_value_matrices`).
        bad : numpy.ndarray of bool or None
            Tokens of ``mask`` that are not numbers; None: none.

        Notes
        -----
        The block's bytes become, without a copy, an Arrow string array whose
        elements alternate between the tokens and the gaps between them (its
        offsets are ``edges``); only the wanted tokens are valid, and one
        ``cast`` to float64 (a correctly rounded parser) decodes them. Where
        the cast fails (garbage), it is narrowed down to slices of
        ``_SLOW_RUN`` tokens, which :func:`_parse_numbers` decodes.
        """
        n = len(self.ts_)
        if n == 0 or not mask.any():
            return np.zeros(n), None
        # token i is element 2 i + par; element 0 starts at offset 0
        par = int(self.edges[0] != 0)
        offsets = np.concatenate(([0], self.edges)) if par else self.edges
        bits = _SPREAD[np.packbits(mask, bitorder="little")] << par
        arr = pa.Array.from_buffers(
            pa.large_string(),
            len(offsets) - 1,
            [pa.py_buffer(bits), pa.py_buffer(offsets), pa.py_buffer(self.b)],
        )
        values = None
        slow = []  # (lo, hi) token slices that failed to cast
        pieces = [(0, n)]
        while pieces:
            lo, hi = pieces.pop()
            try:
                out = pc.cast(arr.slice(2 * lo + par, 2 * (hi - lo) - 1), pa.float64())
            except pa.ArrowInvalid:  # garbage somewhere: narrow it down, then decode slowly
                if values is None:
                    values = np.zeros(n)
                if hi - lo <= _SLOW_RUN:
                    slow.append((lo, hi))
                else:
                    mid = (lo + hi) // 2
                    pieces += [(lo, mid), (mid, hi)]
                continue
            got = np.frombuffer(out.buffers()[1], np.float64, 2 * (hi - lo) - 1, 8 * out.offset)
            if values is None:  # the whole block at once: keep Arrow's buffer
                values = got[0::2]
            else:
                values[lo:hi] = got[0::2]
        if not slow:
            return values, None
        idx = np.concatenate([lo + np.flatnonzero(mask[lo:hi]) for lo, hi in slow])
        values[idx], ok = _parse_numbers(self.b, self.ts_[idx], self.te_[idx], self.buf)
        bad = np.zeros(n, bool)
        bad[idx] = ~ok
        return values, bad


def _as_digit_by_digit(mat: np.ndarray, tok: np.ndarray, blk: _Block) -> None:
    """Give ``%.2f`` numbers the value :func:`_parse_numbers` gives them (in place).

    It decodes ``digits.dd`` (at most 12 digits before the point) as
    ``int + dd / 100``, which can differ in the last bit from the correctly
    rounded value ``v``: for 43 of the 1,500 decimals 1.00 to 15.99, and for
    none above (there the exact sum is at least 1/50 of a unit in the last
    place from a rounding midpoint, farther than ``dd / 100`` is off). For
    such a token, ``floor(v)`` is the integer part and ``rint((v - floor(v))
    × 100)`` the two decimals, so the digit-by-digit value is recomputed from
    ``v`` for values in (1, 16) and, where it differs, used if the token has
    that shape.

    Parameters
    ----------
    mat : numpy.ndarray of float64
        Finite values, decoded correctly rounded (rows × columns).
    tok : numpy.ndarray of int
        Token index of each row's first value; the row's others follow it.
    blk : _Block
        The block the tokens are in.
    """
    flat = mat.reshape(-1)
    # 1 < v < 16 from the bits: positive doubles order as their bit patterns
    bits = flat.view(np.uint64) - np.uint64(0x3FF0000000000001)
    at = np.flatnonzero(bits < np.uint64(0x4030000000000000 - 0x3FF0000000000001))
    if not len(at):
        return
    v = flat[at]
    whole = np.floor(v)
    digit_by_digit = whole + np.rint((v - whole) * 100.0) / 100.0
    differ = digit_by_digit != v
    if not differ.any():
        return
    at, digit_by_digit = at[differ], digit_by_digit[differ]
    t = tok[at // mat.shape[1]] + at % mat.shape[1]
    b, s, e = blk.b, blk.ts_[t], blk.te_[t]
    shape = (
        (e - s >= 4)
        & (e - s - 3 <= _MAXINT)
        & (b[s] - np.uint8(48) < 10)  # no sign: then all before the point are digits
        & (b[e - 3] == 46)
        & (b[e - 2] - np.uint8(48) < 10)
        & (b[e - 1] - np.uint8(48) < 10)
    )
    flat[at[shape]] = digit_by_digit[shape]


def _classify(blk: _Block) -> np.ndarray:
    b, st, en = blk.b, blk.starts, blk.ends
    n = len(st)
    if n == 0:
        return np.full(n, _DEV, np.int8)
    fb = b[st]  # an empty line's "first byte" is its newline
    # digit: a timestamp; white space (and tokens): CPU values; else a device line
    cls = _BY_FIRST_BYTE[fb]
    cls[blk.ntok == 0] = _BLANK
    # the few lines that may be banners or headers: compare their first 8 bytes
    cand = np.flatnonzero((fb == 76) | (fb == 97) | (fb == 68))  # L, a, D
    if len(cand):
        p = _prefix_codes(b, st[cand], en[cand], 8)
        cls[cand[_as_bytes_rows(p, b"Linux ")]] = _BANNER_L
        cls[cand[_as_bytes_rows(p, b"avg-cpu:")]] = _CPUHDR
        dev = _as_bytes_rows(p, b"Device") & ((p[:, 6] == 58) | (p[:, 6] == 32) | (p[:, 6] == 9))
        cls[cand[dev]] = _DEVHDR
    return cls


def _detect_format(text: str) -> str | None:
    for rx, fmt in _TS_FORMATS:
        if rx.match(text):
            return fmt
    return None


def _ts_lines(blk: _Block, rows: np.ndarray, fmt: str) -> np.ndarray:
    """Timestamps of lines ``rows`` [us since epoch, UTC], -1 where unparseable.

    Lines that all match ``fmt``'s template exactly, with in-range fields,
    are decoded with numpy; otherwise :func:`_parse_ts` (polars) decides.
    """
    fast = _ts_template(blk, rows, _TEMPLATES.get(fmt))
    return fast if fast is not None else _parse_ts(_ts_texts(blk, rows), fmt)


@dataclass(frozen=True)
class _Template:
    """Where the literals and the digits of each field are in a timestamp template."""

    width: int
    literal_at: np.ndarray  # positions of literal characters
    literal: np.ndarray  # their bytes
    digit_at: np.ndarray  # positions of digits
    weights: np.ndarray  # digits @ weights: the fields Y y M D h I m s
    ampm_at: int  # position of AM/PM, -1: none
    short_year: bool  # %y rather than %Y

    @classmethod
    def of(cls, template: str) -> _Template:
        """Parse a :data:`_TS_TEMPLATES` value."""
        fields = "YyMDhIms"
        digit_at = [i for i, c in enumerate(template) if c in fields]
        weights = np.zeros((len(digit_at), len(fields)), np.int64)
        for k, i in enumerate(digit_at):
            run_end = i
            while run_end + 1 < len(template) and template[run_end + 1] == template[i]:
                run_end += 1
            weights[k, fields.index(template[i])] = 10 ** (run_end - i)
        literal_at = [i for i, c in enumerate(template) if c not in fields + "P"]
        return cls(
            width=len(template),
            literal_at=np.array(literal_at),
            literal=np.frombuffer(template.encode(), np.uint8)[literal_at],
            digit_at=np.array(digit_at),
            weights=weights,
            ampm_at=template.find("P"),
            short_year="y" in template,
        )


_TEMPLATES = {fmt: _Template.of(t) for fmt, t in _TS_TEMPLATES.items()}
_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])


def _ts_template(blk: _Block, rows: np.ndarray, tpl: _Template | None) -> np.ndarray | None:
    """Timestamps of lines ``rows`` that all match template ``tpl`` exactly, else None.

    Only canonical text is accepted: every field its full width of digits,
    month, day, hour, minute and second in range (second < 60: polars reads 60
    as the next minute), year 1900-2999 (``%y``: 00-69 are 2000-2069, as
    chrono reads them), AM/PM in capitals. For such text polars gives the
    same instant.

    Parameters
    ----------
    blk : _Block
        The block.
    rows : numpy.ndarray of int
        Timestamp lines.
    tpl : _Template or None
        The format's template; None: no fast path.

    Returns
    -------
    numpy.ndarray of int64 or None
        [us since epoch], or None: let polars parse them.
    """
    if tpl is None:
        return None
    starts = blk.starts[rows]
    if not (blk.ends[rows] - starts == tpl.width).all():
        return None
    text = blk.b[starts[:, None] + np.arange(tpl.width)]
    digits = text[:, tpl.digit_at] - np.uint8(48)
    if not (text[:, tpl.literal_at] == tpl.literal).all() or (digits >= 10).any():
        return None
    year4, year2, month, day, hour, hour12, minute, sec = (digits @ tpl.weights).T
    year = year2 + np.where(year2 < 70, 2000, 1900) if tpl.short_year else year4
    ok = (month >= 1) & (month <= 12) & (day >= 1) & (minute <= 59) & (sec <= 59)
    if tpl.ampm_at >= 0:
        ampm = text[:, tpl.ampm_at]
        ok &= (hour12 >= 1) & (hour12 <= 12) & (text[:, tpl.ampm_at + 1] == 77)  # M
        ok &= (ampm == 65) | (ampm == 80)  # A, P
        hour = hour12 % 12 + (ampm == 80) * 12
    else:
        ok &= hour <= 23
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    ok &= (year >= 1900) & (year <= 2999)
    ok &= day <= _MONTH_DAYS[np.clip(month, 0, 12)] + (leap & (month == 2))
    if not ok.all():
        return None
    # days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil)
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + np.where(month > 2, -3, 9)) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    return (days * 86400 + hour * 3600 + minute * 60 + sec) * 1_000_000


def _ts_texts(blk: _Block, rows: np.ndarray) -> pl.Series:
    """Timestamp lines ``rows`` as text: ASCII (others replaced), white space stripped.

    Parameters
    ----------
    blk : _Block
        The block.
    rows : numpy.ndarray of int
        Line indices.

    Returns
    -------
    polars.Series
        Strings, as ``line.decode("ascii", "replace").strip()`` gives them.
    """
    arr = blk.lines(rows)
    data = np.frombuffer(arr.buffers()[2] or b"", np.uint8)
    # polars strips what Python strips, but for the separators \x1c-\x1f
    if len(data) and ((data >= 128) | ((data >= 28) & (data <= 31))).any():
        texts = [raw.decode("ascii", "replace").strip() for raw in arr.to_pylist()]
        return pl.Series(texts, dtype=pl.String)
    texts = pl.Series(arr.cast(pa.large_string()))
    if (blk.b[blk.ends[rows] - 1] > 32).all():  # they start with a digit: nothing to strip
        return texts
    return texts.str.strip_chars()


def _parse_ts(texts: pl.Series | list[str], fmt: str) -> np.ndarray:
    """Timestamps [us since epoch, UTC], -1 where unparseable."""
    s = texts if isinstance(texts, pl.Series) else pl.Series(texts, dtype=pl.String)
    if "%z" in fmt:
        dt = s.str.strptime(pl.Datetime("us", "UTC"), fmt, strict=False).dt.replace_time_zone(None)
    else:
        dt = s.str.strptime(pl.Datetime("us"), fmt, strict=False)
    return dt.dt.epoch("us").fill_null(-1).to_numpy().astype(np.int64)


# -- the state-free part of a block's parse ------------------------------------------------


class _Headers(NamedTuple):
    """Header lines of one kind (``Device`` or ``avg-cpu``) in a block."""

    lines: np.ndarray  # line indices, increasing
    distinct: list[bytes]  # the distinct header lines, in order of appearance
    codes: np.ndarray  # of int: index into ``distinct`` of each line


class _Pre(NamedTuple):
    """What :func:`_prepare` computes for a block without the state of earlier blocks."""

    blk: _Block | None  # None: no whole line
    nlines: int  # lines in the block (its whole lines)
    tail: bytes | None  # a last line without its newline (cut off the block); None: none
    cls: np.ndarray  # line classes (:func:`_classify`)
    ts_lines: np.ndarray  # timestamp lines
    ts_format: str | None  # format of the block's first timestamp (None: none or unknown)
    ts: np.ndarray | None  # their times in that format [us, -1: bad]; None: not decoded
    dev_hdr: _Headers
    cpu_hdr: _Headers
    mask: np.ndarray  # of bool: the tokens decoded in ``values``
    values: np.ndarray  # of float64: per token (see _Block.numbers)
    bad: np.ndarray | None  # tokens of ``mask`` that are not numbers; None: none
    finite: bool  # every value of ``mask`` is finite
    names: _BlockNames | None  # device names of the device lines; None: none, or too long


def _headers(blk: _Block, lines: np.ndarray) -> _Headers:
    """Header lines ``lines`` of a block, dictionary-encoded (they repeat report after report)."""
    enc = pc.dictionary_encode(blk.lines(lines))
    return _Headers(lines, enc.dictionary.to_pylist(), enc.indices.to_numpy())


def _prepare(item: tuple[Any, bool]) -> _Pre:
    """The part of a block's parse that needs nothing from earlier blocks.

    Tokens and line classes; every token that may be a value decoded as a
    number (those of ``avg-cpu`` value lines, device lines but their first,
    and lines that follow an ``avg-cpu`` header); the timestamps, in the
    format of the block's first one; the distinct header lines. Runs on a
    worker thread (:func:`iochar.load._blocks.ordered_map`); the block's
    stage that carries state (:meth:`IostatLoader._text_block`) checks that
    what it needs is covered and recomputes what is not.

    Parameters
    ----------
    item : (buffer, bool)
        Whole lines, and whether the block ends in a newline (the input's
        last block may not: that line is cut off and kept as ``tail``).
    """
    buf, _, tail = cut_tail(*item)
    none = np.empty(0, np.int64)
    if not len(buf):
        empty = _Headers(none, [], none)
        nothing = np.zeros(0, bool)
        return _Pre(
            None, 0, tail, nothing, none, None, None, empty, empty, nothing, none, None, True, None
        )
    blk = _Block(buf)
    cls = _classify(blk)
    n = len(cls)
    cpu_hdr = np.flatnonzero(cls == _CPUHDR)
    cpu_after = np.zeros(n, bool)
    nxt = cpu_hdr + 1
    cpu_after[nxt[nxt < n]] = True
    mask = np.repeat((cls == _CPUVAL) | (cls == _DEV), blk.ntok)
    mask[blk.first_tok[np.flatnonzero((cls == _DEV) & ~cpu_after)]] = False  # device names
    values, bad = blk.numbers(mask)
    ts_lines = np.flatnonzero(cls == _TS)
    fmt, ts = None, None
    if len(ts_lines):  # as _ts_texts reads it, without a pass over the whole block
        fmt = _detect_format(blk.line_bytes(int(ts_lines[0])).decode("ascii", "replace").strip())
        if fmt is not None:
            ts = _ts_lines(blk, ts_lines, fmt)
    return _Pre(
        blk,
        n,
        tail,
        cls,
        ts_lines,
        fmt,
        ts,
        _headers(blk, np.flatnonzero(cls == _DEVHDR)),
        _headers(blk, cpu_hdr),
        mask,
        values,
        bad,
        bool((np.isfinite(values) | ~mask).all()),
        _block_names(blk, np.flatnonzero(cls == _DEV)),
    )


# -- text block stages -------------------------------------------------------------------


class _Reports(NamedTuple):
    """The reports of a block: the one each line is in, and each one's time.

    Reports are indexed by the block's timestamp lines, then two more: "after
    a banner, before any timestamp" (none) and "carried from the previous block".
    """

    at_line: _InForce  # report index in force on each line
    ok: np.ndarray  # of bool: the report has a time (device lines may be in it)
    ts: np.ndarray  # of int64: interval end [us since epoch]
    iv: np.ndarray  # of float64: interval [s]; nan: the report yields nothing


class _Lines(NamedTuple):
    """Value lines of one kind (device or avg-cpu) and what they belong to."""

    rows: np.ndarray  # line indices, increasing
    rep: np.ndarray  # report index of each
    layout: np.ndarray  # header layout id of each (-1: none)
    is_cpu: bool


class _Lazy(NamedTuple):
    """A values matrix not gathered yet: ``ncol`` tokens from ``tok0`` on, per line."""

    values: np.ndarray  # of float64: per token of the block, correctly rounded
    tok0: np.ndarray  # first value token of each line
    ncol: int

    def take(self, keep: np.ndarray) -> _Lazy:
        """The lines where ``keep``."""
        return _Lazy(self.values, self.tok0[keep], self.ncol)

    def matrix(self, blk: _Block) -> np.ndarray:
        """The (lines x ncol) values, as digit-by-digit decoding gives them."""
        mat = self.values[self.tok0[:, None] + np.arange(self.ncol)]
        _as_digit_by_digit(mat, self.tok0, blk)
        return mat


class _Group(NamedTuple):
    """Value lines of one layout and their values."""

    rows: np.ndarray  # line indices, increasing
    rep: np.ndarray  # report index of each
    layout: int  # header layout id
    is_cpu: bool
    mat: np.ndarray | _Lazy  # of float64: values (rows × columns)
    ok: np.ndarray | None  # of bool: every value of the row is a number; None: all


def _banner_first(blk: _Block, cls: np.ndarray, first_line: int, name: str) -> bool:
    """Whether the block has a non-blank line; raise unless the first is the banner."""
    nonblank = np.flatnonzero(cls != _BLANK)
    if not len(nonblank):
        return False
    i0 = int(nonblank[0])
    if cls[i0] != _BANNER_L:
        raise _bad(
            name,
            first_line + i0,
            "the iostat banner 'Linux <release> (<host>) <date> <arch> (<N> CPU)'",
            blk.line_text(i0),
        )
    return True


def _mark_cpu_values(cls: np.ndarray, st: _State, problems: list) -> None:
    """Mark the line after each avg-cpu header as its values (in place); note misplaced ones."""
    n = len(cls)
    cpu_after = np.zeros(n, bool)
    hdr_idx = np.flatnonzero(cls == _CPUHDR)
    nxt = hdr_idx + 1
    cpu_after[nxt[nxt < n]] = True
    if st.cpu_pending and n:
        cpu_after[0] = True
    st.cpu_pending = bool(len(hdr_idx) and hdr_idx[-1] == n - 1)
    for i in np.flatnonzero((cls == _CPUVAL) & ~cpu_after).tolist():
        problems.append((i, "a device line (not indented)", None))
    for i in np.flatnonzero(cpu_after & (cls != _CPUVAL) & (cls != _DEV)).tolist():
        problems.append((i, "the avg-cpu values line", None))
    cls[cpu_after & (cls == _DEV)] = _CPUVAL  # validated by field counts later


def _read_banners(blk: _Block, cls: np.ndarray, st: _State) -> np.ndarray:
    """Banner lines of the block; the first banner of the input fills ``st.meta``."""
    ban = np.flatnonzero(cls == _BANNER_L)
    for i in ban[:1].tolist() if not st.meta else []:
        m = _BANNER.match(blk.line_text(i))
        if m:
            st.meta.update(
                host=m["host"],
                os_release=m["release"],
                banner_date=m["date"],
                ncpu=int(m["ncpu"]) if m["ncpu"] else None,
            )
    if len(ban):
        st.seen_banner = True
    return ban


def _report_times(
    pre: _Pre, ts_lines: np.ndarray, first_line: int, st: _State, name: str
) -> np.ndarray:
    """Times of timestamp lines ``ts_lines`` [us, -1: bad]; the first one fixes the format.

    The times :func:`_prepare` decoded are used when it read them in the same format.
    """
    blk = pre.blk
    if len(ts_lines) and st.ts_format is None:
        first = _ts_texts(blk, ts_lines[:1])[0]
        st.ts_format = _detect_format(first)
        if st.ts_format is None:
            raise _bad(name, first_line + int(ts_lines[0]), "an iostat -t timestamp", first)
    if not len(ts_lines):
        return np.empty(0, np.int64)
    if pre.ts is not None and pre.ts_format == st.ts_format:
        return pre.ts
    return _ts_lines(blk, ts_lines, st.ts_format)


def _previous_times(t: np.ndarray, ts_lines: np.ndarray, ban: np.ndarray, st: _State) -> np.ndarray:
    """Previous report time of each timestamp in the same run (a banner starts a run); -1: none."""
    run_of_ts = np.searchsorted(ban, ts_lines)  # banners before each ts line
    prev = np.empty(len(t), np.int64)
    if len(t):
        prev[1:] = t[:-1]
        prev[0] = st.cur_ts if st.cur_ts is not None else -1
        same_run = np.empty(len(t), bool)
        same_run[1:] = run_of_ts[1:] == run_of_ts[:-1]
        same_run[0] = run_of_ts[0] == 0
        prev[~same_run] = -1
    return prev


def _intervals(
    t: np.ndarray,
    prev: np.ndarray,
    ts_lines: np.ndarray,
    first_line: int,
    st: _State,
    skips: SkipLog | None,
    problems: list,
) -> tuple[np.ndarray, np.ndarray]:
    """Check the times increase; (good time, interval [s], nan: none) of each timestamp."""
    bad_t = t < 0
    back = (prev >= 0) & (t <= prev) & ~bad_t
    for k in np.flatnonzero(bad_t | back).tolist():
        i = int(ts_lines[k])
        exp = (
            f"a timestamp like {st.ts_format}"
            if bad_t[k]
            else "a report time after the previous report's"
        )
        if skips is None:
            problems.append((i, exp, None))
        else:
            skips.add(first_line + i, exp)
    ok_t = ~bad_t & ~back
    prev_ok = np.r_[st.cur_ts is not None and st.cur_ok_t, ok_t[:-1]] if len(t) else ok_t
    iv = np.where(ok_t & (prev >= 0) & prev_ok, (t - prev) / 1e6, np.nan)
    st.first_reports += int(np.sum(ok_t & (prev < 0)))
    return ok_t, iv


def _assign_reports(
    ts_lines: np.ndarray, ban: np.ndarray, t: np.ndarray, iv: np.ndarray, st: _State
) -> _Reports:
    """The report of each line: the last timestamp (or banner: none) before it, else carried."""
    ev_lines = np.concatenate((ts_lines, ban))
    order = np.argsort(ev_lines, kind="stable")
    at_line = _InForce(
        ev_lines[order],
        np.concatenate((np.arange(len(t)), np.full(len(ban), len(t))))[order],
        len(t) + 1,
    )
    return _Reports(
        at_line,
        ok=np.concatenate((np.ones(len(t), bool), [False, st.cur_ts is not None])),
        ts=np.concatenate((t, [-1, st.cur_ts if st.cur_ts is not None else -1])),
        iv=np.concatenate((iv, [np.nan, st.cur_iv])),
    )


def _carry_report(
    st: _State,
    ts_lines: np.ndarray,
    ban: np.ndarray,
    t: np.ndarray,
    iv: np.ndarray,
    ok_t: np.ndarray,
) -> None:
    """Keep the report in force at the block's end in ``st`` for the next block."""
    if len(ban) and (not len(ts_lines) or ban[-1] > ts_lines[-1]):
        st.cur_ts, st.cur_iv, st.cur_ok_t = None, np.nan, False
    elif len(ts_lines):
        if ok_t[-1]:
            st.cur_ts, st.cur_iv, st.cur_ok_t = int(t[-1]), float(iv[-1]), True
        else:  # keep the last good time for ordering; this report yields nothing
            st.cur_iv, st.cur_ok_t = np.nan, False
            if st.cur_ts is None and np.any(ok_t):
                st.cur_ts = int(t[ok_t][-1])


def _reports(
    pre: _Pre,
    ban: np.ndarray,
    first_line: int,
    st: _State,
    name: str,
    skips: SkipLog | None,
    problems: list,
) -> _Reports:
    """Time and interval of the block's reports, and the report each line is in."""
    ts_lines = pre.ts_lines
    t = _report_times(pre, ts_lines, first_line, st, name)
    prev = _previous_times(t, ts_lines, ban, st)
    ok_t, iv = _intervals(t, prev, ts_lines, first_line, st, skips, problems)
    reports = _assign_reports(ts_lines, ban, t, iv, st)
    _carry_report(st, ts_lines, ban, t, iv, ok_t)
    return reports


def _check_value_lines(
    blk: _Block,
    cls: np.ndarray,
    reports: _Reports,
    dev_layout: _InForce,
    cpu_layout: _InForce,
    st: _State,
    problems: list,
) -> tuple[_Lines, _Lines]:
    """Check device and avg-cpu lines (in a report, under a header, field counts); keep the good.

    Every line with a problem so far (``problems``) is left out.
    """
    dev = np.flatnonzero(cls == _DEV)
    cpu = np.flatnonzero(cls == _CPUVAL)
    dev_rep, cpu_rep = reports.at_line.at(dev), reports.at_line.at(cpu)
    dev_lay, cpu_lay = dev_layout.at(dev), cpu_layout.at(cpu)
    in_rep = reports.ok[dev_rep]
    for i in dev[~in_rep].tolist():
        problems.append((i, "a timestamp line (iostat -t) before device lines", None))
    for i in dev[in_rep & (dev_lay < 0)].tolist():
        problems.append((i, "a 'Device' header line before device lines", None))
    dev_len = np.array([len(h) + 1 for h in st.dev_layouts] + [0], np.int64)
    want = dev_len[dev_lay]
    wrong = (blk.ntok[dev] != want) & (dev_lay >= 0)
    for i, w in zip(dev[wrong].tolist(), want[wrong].tolist(), strict=True):
        problems.append((i, f"{w} fields as in the Device header", None))
    cpu_len = np.array([len(h) for h in st.cpu_layouts] + [0], np.int64)
    wantc = cpu_len[cpu_lay]
    wrong = blk.ntok[cpu] != wantc
    for i, w in zip(cpu[wrong].tolist(), wantc[wrong].tolist(), strict=True):
        problems.append((i, f"{w} avg-cpu values", None))
    kinds = (_Lines(dev, dev_rep, dev_lay, False), _Lines(cpu, cpu_rep, cpu_lay, True))
    if not problems:
        return kinds
    drop = np.zeros(len(cls), bool)
    for i, _, _ in problems:
        drop[i] = True
    return tuple(_Lines(*(x[~drop[k.rows]] for x in k[:3]), k.is_cpu) for k in kinds)


def _number_tokens(
    blk: _Block, kinds: tuple[_Lines, _Lines], st: _State
) -> tuple[list[tuple[_Lines, int, np.ndarray, int, np.ndarray]], np.ndarray]:
    """Split value lines by layout and flag their number tokens.

    Returns
    -------
    specs : list of (lines, layout id, token mask, column count, first value token)
        One per layout in use; the lines are those of that layout.
    tok_mask : numpy.ndarray of bool
        Every number token of the block (the union of the specs' masks).
    """
    n = len(blk.ends)
    specs = []
    tok_mask = np.zeros(len(blk.ts_), bool)
    for kind in kinds:
        layouts = st.cpu_layouts if kind.is_cpu else st.dev_layouts
        lay_all = kind.layout
        one = len(lay_all) and (lay_all == lay_all[0]).all()
        for h in [int(lay_all[0])] if one else np.unique(lay_all).tolist():
            sel = lay_all == h
            lines = (
                kind if one else _Lines(kind.rows[sel], kind.rep[sel], lay_all[sel], kind.is_cpu)
            )
            # kept lines have exactly their layout's field count: all their tokens
            # but the device name are numbers
            line = np.zeros(n, bool)
            line[lines.rows] = True
            tm = np.repeat(line, blk.ntok)
            if not kind.is_cpu:
                tm[blk.first_tok[lines.rows]] = False
            tok_mask |= tm
            tok0 = blk.first_tok[lines.rows] + (not kind.is_cpu)
            specs.append((lines, h, tm, len(layouts[h]), tok0))
    return specs, tok_mask


def _lazy_groups(
    blk: _Block, kinds: tuple[_Lines, _Lines], st: _State, values: np.ndarray
) -> list[_Group]:
    """Value lines split by layout, their matrices left to :func:`_emit_block` to gather.

    For a block whose every wanted token :func:`_prepare` decoded as a finite
    number: a kept line has exactly its layout's field count, so its values
    are the ``ncol`` tokens from its first value token on.
    """
    groups = []
    for kind in kinds:
        layouts = st.cpu_layouts if kind.is_cpu else st.dev_layouts
        lay_all = kind.layout
        one = len(lay_all) and (lay_all == lay_all[0]).all()
        for h in [int(lay_all[0])] if one else np.unique(lay_all).tolist():
            if one:
                lines = kind
            else:
                sel = lay_all == h
                lines = _Lines(kind.rows[sel], kind.rep[sel], lay_all[sel], kind.is_cpu)
            tok0 = blk.first_tok[lines.rows] + (not kind.is_cpu)
            lazy = _Lazy(values, tok0, len(layouts[h]))
            groups.append(_Group(lines.rows, lines.rep, h, kind.is_cpu, lazy, None))
    return groups


def _value_matrices(
    pre: _Pre, kinds: tuple[_Lines, _Lines], st: _State, problems: list, uncovered: bool
) -> list[_Group]:
    """Decode every number of the block in one pass, then a values matrix per layout.

    Values are those digit-by-digit decoding gives; lines with a token that
    is not a number are noted in ``problems``. The numbers :func:`_prepare`
    decoded are used when they cover every token wanted here (``uncovered``:
    the block's first line holds the values of an ``avg-cpu`` header that
    ended the previous block, a token :func:`_prepare` could not know was a
    number) and all were finite numbers (then the matrices are gathered later,
    on a worker thread: :func:`_lazy_groups`); otherwise the wanted tokens are
    decoded again, as a one-block parse would.
    """
    blk = pre.blk
    if pre.bad is None and pre.finite and not uncovered:
        return _lazy_groups(blk, kinds, st, pre.values)
    specs, tok_mask = _number_tokens(blk, kinds, st)
    if pre.bad is None and not (tok_mask & ~pre.mask).any():
        values, bad = pre.values, None
    else:
        values, bad = blk.numbers(tok_mask)
    groups = []
    for lines, h, tm, ncol, tok0 in specs:
        shape = (len(lines.rows), ncol)
        mat = values[tm].reshape(shape)
        good = None if bad is None else ~bad[tm].reshape(shape)
        finite = np.isfinite(mat)
        if not finite.all():  # inf, nan, 1e999: the exact decoder rejects them
            at = np.flatnonzero(~finite)
            t = tok0[at // ncol] + at % ncol
            vals, ok = _parse_numbers(blk.b, blk.ts_[t], blk.te_[t], blk.buf)
            good = np.ones(shape, bool) if good is None else good
            mat.reshape(-1)[at], good.reshape(-1)[at] = vals, ok
        _as_digit_by_digit(mat, tok0, blk)
        ok = np.ones(len(lines.rows), bool) if good is None else good.all(axis=1)
        for i in lines.rows[~ok].tolist():
            problems.append((i, "numbers after the device name", None))
        groups.append(_Group(lines.rows, lines.rep, h, lines.is_cpu, mat, ok))
    return groups


def _raise_or_skip(
    problems: list, blk: _Block, first_line: int, name: str, skips: SkipLog | None
) -> None:
    """Raise the block's first problem (strict), or skip every problem line."""
    if not problems:
        return
    problems.sort()
    if skips is None:
        i, exp, got = problems[0]
        raise _bad(name, first_line + i, exp, blk.line_text(i) if got is None else got)
    for i, exp, _ in problems:
        skips.add(first_line + i, f"expected {exp}")


class IostatLoader:
    """``iostat``: sysstat ``iostat -x -t`` text or ``-o JSON`` (see module docs)."""

    kind: ClassVar[str] = KIND
    suffixes: ClassVar[tuple[str, ...]] = (".iostat", ".iostat.gz")
    description: ClassVar[str] = "sysstat iostat -x -t text or iostat -o JSON, per device"

    def sniff(self, head: bytes) -> bool:
        """A ``Linux ... (host) date arch (N CPU)`` banner then iostat blocks, or sysstat JSON."""
        return _kinds.sniff_iostat(head)  # the one rule, shared with sniffing by kind table

    def parse(
        self, src: Source, *, strict: bool = True, chunk_rows: int = 1_000_000
    ) -> Iterator[Parsed]:
        """Parse iostat output into ``counters`` chunks.

        Text is parsed in blocks of about 1 MB of whole lines (see the module
        notes): the part of a block's parse that needs nothing from earlier
        blocks (:func:`_prepare`: tokens, line classes, every number, the
        timestamps, the header lines) runs on :func:`~iochar.load._blocks.parse_threads`
        threads, blocks ahead; what carries from block to block (reports,
        intervals, header layouts, device names) then runs block by block in
        input order, so the rows are those of a one-block parse, in the same order.
        """
        name = source_name(src)
        # parse in cache-sized blocks; yield about chunk_rows rows at a time
        block_bytes = int(min(_BLOCK_BYTES, max(_MIN_BLOCK_BYTES, chunk_rows * 16)))
        threads = parse_threads()
        with line_blocks(src, block_bytes, blocks_in_flight(threads, 2)) as blocks:
            seen = []  # blocks read while looking for the first byte that is not white space
            first = None
            for item in blocks:
                seen.append(item)
                b = np.frombuffer(item[0], np.uint8)
                at = np.flatnonzero(~_SPACE[b])[:1]
                if len(at):
                    first = int(b[at[0]])
                    break
            if first == ord("{"):
                raw = b"".join([bytes(x) for x, _ in seen] + [bytes(x) for x, _ in blocks])
                yield from self._parse_json(raw, name, strict)
                return
            yield from self._parse_text(
                itertools.chain(seen, blocks), name, strict, chunk_rows, threads
            )

    # -- text --------------------------------------------------------------------------

    def _parse_text(
        self,
        blocks: Iterator[tuple[Any, bool]],
        name: str,
        strict: bool,
        chunk_rows: int,
        threads: int,
    ) -> Iterator[Parsed]:
        # one pool for both threaded stages (fewer threads contending for the GIL)
        pool = (
            ThreadPoolExecutor(threads, thread_name_prefix="iochar-parse") if threads > 1 else None
        )
        try:
            st = _State()
            skips = None if strict else SkipLog()
            any_line = False
            first_line = 1
            pending: list[pa.Table] = []
            rows = 0

            def block_jobs() -> Iterator[list[_Emit]]:  # in input order, with the state
                nonlocal any_line, first_line
                for pre in ordered_map(_prepare, blocks, threads, pool=pool):
                    if pre.tail is not None:  # the last line, cut short
                        last_line = first_line + pre.nlines
                        if strict:
                            raise _bad(
                                name,
                                last_line,
                                "a last line ending in a newline (file cut short?)",
                                pre.tail,
                            )
                        skips.add(last_line, "last line cut short (no newline)")
                    if pre.blk is None:
                        continue
                    any_line = True
                    yield self._text_block(pre, first_line, st, name, skips)
                    first_line += pre.nlines

            for table in ordered_map(_emit_block, block_jobs(), threads, pool=pool):
                if table is not None:
                    pending.append(table)
                    rows += table.num_rows
                    if rows >= chunk_rows:
                        yield Parsed(tables={"counters": _concat(pending)}, skips=skips)
                        pending, rows = [], 0
            if pending:
                yield Parsed(tables={"counters": _concat(pending)}, skips=skips)
            if not any_line or not st.seen_banner:
                raise _bad(name, 1 if any_line else None, "iostat output starting with 'Linux ...'")
            meta = dict(st.meta)
            meta.update(
                tool="sysstat iostat",
                format="text",
                ts_format=st.ts_format,
                timezone="UTC assumed (iostat prints local time)",
                skipped_first_reports=st.first_reports,
            )
            warnings = []
            if st.ignored:
                warnings.append(f"ignored iostat column(s): {', '.join(sorted(st.ignored))}")
            yield Parsed(meta=meta, skips=skips, warnings=warnings)
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

    def _text_block(
        self, pre: _Pre, first_line: int, st: _State, name: str, skips: SkipLog | None
    ) -> list[_Emit]:
        """The rows to build from one prepared block; bad lines raise or are skipped."""
        blk, cls = pre.blk, pre.cls
        if not st.seen_banner and not _banner_first(blk, cls, first_line, name):
            return []
        problems: list[tuple[int, str, str | None]] = []  # (line index, expected, got)
        uncovered = st.cpu_pending and cls[0] == _DEV  # see _value_matrices
        _mark_cpu_values(cls, st, problems)
        # Device / avg-cpu header layouts -> ids (layouts are few; lines are not)
        dev_layout = self._layouts(pre.dev_hdr, st.dev_layouts, st.header_id)
        st.header_id = int(dev_layout.last)
        cpu_layout = self._layouts(pre.cpu_hdr, st.cpu_layouts, st.cpu_id)
        st.cpu_id = int(cpu_layout.last)
        ban = _read_banners(blk, cls, st)
        reports = _reports(pre, ban, first_line, st, name, skips, problems)
        kinds = _check_value_lines(blk, cls, reports, dev_layout, cpu_layout, st, problems)
        groups = _value_matrices(pre, kinds, st, problems, uncovered)
        _raise_or_skip(problems, blk, first_line, name, skips)
        return self._block_jobs(pre, groups, reports, first_line, st, name, skips)

    def _block_jobs(
        self,
        pre: _Pre,
        groups: list[_Group],
        reports: _Reports,
        first_line: int,
        st: _State,
        name: str,
        skips: SkipLog | None,
    ) -> list[_Emit]:
        """What :func:`_emit_block` needs to build the rows of the good lines of reports
        with an interval (device names get their codes here: the dictionary carries)."""
        blk = pre.blk
        out = []
        for rows, rep, h, is_cpu, mat, ok in groups:
            keep = ~np.isnan(reports.iv[rep])
            if ok is not None:
                keep &= ok
            if not keep.any():
                continue
            if not keep.all():
                rows, rep = rows[keep], rep[keep]
                mat = mat.take(keep) if isinstance(mat, _Lazy) else mat[keep]
            if is_cpu:
                names = dictionary_of(zeros_i32(len(rows)), ["cpu"])
                cols = st.cpu_layouts[h]
            else:
                names = (
                    st.names.encode(blk, rows)
                    if pre.names is None
                    else st.names.lookup(pre.names, rows)
                )
                cols = st.dev_layouts[h]
            metrics, picks = _metric_picks(cols, st, is_cpu)
            out.append(
                _Emit(
                    names,
                    reports.ts[rep],
                    reports.iv[rep],
                    mat,
                    metrics,
                    picks,
                    rows,
                    blk,
                    first_line,
                    name,
                    skips is None,
                )
            )
        return out

    @staticmethod
    def _layouts(hdr: _Headers, layouts: list[list[str]], carry: int) -> _InForce:
        """Layout id in force on each line (set by header lines; -1: none)."""
        index = {" ".join(h): k for k, h in enumerate(layouts)}
        lay = []  # layout id of each distinct header line, in order of appearance
        for raw in hdr.distinct:
            cols = raw.decode("utf-8", "replace").split()[1:]
            got = index.get(" ".join(cols))
            if got is None:
                got = len(layouts)
                layouts.append(cols)
                index[" ".join(cols)] = got
            lay.append(got)
        ids = np.asarray(lay, np.int64)[hdr.codes] if lay else np.empty(0, np.int64)
        return _InForce(hdr.lines, ids, carry)

    @staticmethod
    def _emit(
        names: pa.Array,
        ts_us: np.ndarray,
        iv: np.ndarray,
        mat: np.ndarray,
        cols: list[str],
        st: _State,
        cpu: bool,
    ) -> pa.Table:
        """Long-format counters rows for a (rows × columns) matrix of one layout.

        Parameters
        ----------
        names : pyarrow.Array
            Target of each row (strings, or a dictionary array).
        ts_us : numpy.ndarray of int64
            Interval end of each row. [us since the epoch]
        iv : numpy.ndarray of float64
            Interval of each row. [s]
        mat : numpy.ndarray of float64
            The values as printed, one column per name in ``cols``.
        cols : list of str
            Column names (``COLUMN_MAP`` or ``CPU_MAP`` keys; others are ignored).
        st : _State
            Collects the ignored column names.
        cpu : bool
            ``avg-cpu`` values rather than device columns.

        Returns
        -------
        pyarrow.Table
            ``counters`` rows, metric by metric.
        """
        metrics, picks = _metric_picks(cols, st, cpu)
        return _counters_table(names, ts_us, iv, mat, metrics, picks)

    # -- JSON --------------------------------------------------------------------------

    def _parse_json(self, raw: bytes, name: str, strict: bool) -> Iterator[Parsed]:
        """Parse sysstat JSON (``iostat -o JSON``) into one ``counters`` chunk."""
        hosts = _json_hosts(raw, name)
        skips = None if strict else SkipLog()
        _check_json_end(raw, name, skips)
        st = _State()
        out = []
        meta: dict[str, Any] = {"tool": "sysstat iostat", "format": "json"}
        for h, host in enumerate(hosts):
            if not isinstance(host, dict) or not isinstance(host.get("statistics"), list):
                raise _bad(name, None, f"hosts[{h}] with a statistics list", str(host)[:80])
            meta.update(
                host=host.get("nodename"),
                os_release=host.get("release"),
                ncpu=host.get("number-of-cpus"),
                banner_date=host.get("date"),
            )
            out += self._json_host_tables(host, h, st, name, skips)
        meta.update(ts_format=st.ts_format, skipped_first_reports=st.first_reports)
        meta["timezone"] = "UTC assumed unless the timestamp has an offset"
        tables = {}
        if out:
            tables["counters"] = _json_counters(out, name, skips)
        yield Parsed(tables=tables, meta=meta, skips=skips)

    def _json_host_tables(
        self, host: dict, h: int, st: _State, name: str, skips: SkipLog | None
    ) -> list[pa.Table]:
        """Counters tables of one host's reports; its first report only starts the series."""
        out = []
        prev = None
        for r, rep in enumerate(host["statistics"]):
            where = f"hosts[{h}].statistics[{r}]"
            try:
                t, rows, cpu = _json_report(rep, st, prev)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                if skips is None:
                    raise _bad(name, None, f"a valid report at {where}", str(exc)) from exc
                skips.add(r, f"{where}: {exc}")
                continue
            if prev is None:
                prev = t
                st.first_reports += 1
                continue
            iv = (t - prev) / 1e6
            prev = t
            out += self._json_report_tables(t, iv, rows, cpu, r, where, st, name, skips)
        return out

    def _json_report_tables(
        self,
        t: int,
        iv: float,
        rows: list[tuple[Any, dict]],
        cpu: Any,
        r: int,
        where: str,
        st: _State,
        name: str,
        skips: SkipLog | None,
    ) -> list[pa.Table]:
        """Counters tables of one JSON report: one per disk, and avg-cpu's."""
        out = []
        for dev, d in rows:
            cols = [JSON_KEYS.get(k, k) for k in d if k != "disk_device"]
            try:
                vals = np.array([[float(d[k]) for k in d if k != "disk_device"]])
            except (TypeError, ValueError) as exc:
                if skips is None:
                    raise _bad(name, None, f"numbers in {where} disk {dev}", str(exc)) from exc
                skips.add(r, f"{where}: {exc}")
                continue
            out.append(
                self._emit(
                    pa.array([str(dev)]), np.array([t]), np.array([iv]), vals, cols, st, False
                )
            )
        if isinstance(cpu, dict):
            cols = ["%" + k for k in cpu]
            vals = np.array([[float(v) for v in cpu.values()]])
            out.append(
                self._emit(pa.array(["cpu"]), np.array([t]), np.array([iv]), vals, cols, st, True)
            )
        return out


def _counters_table(
    names: pa.Array | _Targets,
    ts_us: np.ndarray,
    iv: np.ndarray,
    mat: np.ndarray,
    metrics: list[str],
    picks: list[tuple[int, tuple[float, bool] | None]],
) -> pa.Table:
    """Long-format counters rows, metric by metric, of the picked columns of ``mat``.

    See :meth:`IostatLoader._emit`; ``metrics`` and ``picks`` are :func:`_metric_picks`'s.
    ``names`` may be :class:`_Targets`: the codes are then gathered straight into the
    column.
    """
    k = len(metrics)
    r = len(names.rows) if isinstance(names, _Targets) else len(names)
    # output columns live in Arrow's memory pool, which reuses freed pages: fresh
    # memory costs a page fault per 4 kB, more than writing it
    cols = pool_arrays((k, r), [np.float64, np.int64, np.float64, np.int32, np.int32])
    (value, value_buf), (ts, ts_buf), (interval, interval_buf) = cols[:3]
    (target_codes, target_buf), (metric_codes, metric_buf) = cols[3:]
    _scale_values(value, mat, picks, iv)
    if isinstance(names, _Targets):
        target_codes[:] = names.lut[names.local[names.rows]]
        dictionary = names.dictionary
    else:
        enc = names.dictionary_encode() if not isinstance(names, pa.DictionaryArray) else names
        target_codes[:] = enc.indices.to_numpy(zero_copy_only=False)
        dictionary = enc.dictionary
    metric_codes[:] = np.arange(k, dtype=np.int32)[:, None]
    ts[:] = ts_us
    interval[:] = iv
    n = k * r
    # the codes are in range by construction: no validation pass over them
    return pa.table(
        {
            "target": pa.DictionaryArray.from_arrays(
                arrow_array(pa.int32(), n, target_buf), dictionary, safe=False
            ),
            "metric": dictionary_of(arrow_array(pa.int32(), n, metric_buf), metrics),
            "ts": arrow_array(pa.timestamp("us"), n, ts_buf),
            "interval_s": arrow_array(pa.float64(), n, interval_buf),
            "value": arrow_array(pa.float64(), n, value_buf),
            "quality": dictionary_of(zeros_i32(n), ["ok"]),
        }
    )


class _Emit(NamedTuple):
    """The rows of one layout's lines in a block, ready to build (:func:`_emit_block`)."""

    names: pa.Array | _Targets  # target of each line
    ts: np.ndarray  # of int64: interval end of each line [us]
    iv: np.ndarray  # of float64: interval of each line [s]
    mat: np.ndarray | _Lazy  # of float64: the values as printed (lines x columns)
    metrics: list[str]
    picks: list[tuple[int, tuple[float, bool] | None]]
    rows: np.ndarray  # line index of each (in the block)
    blk: _Block
    first_line: int
    name: str
    strict: bool


def _emit_block(jobs: list[_Emit]) -> pa.Table | None:
    """Counters rows of a block's lines (None: none); check the amounts.

    Needs nothing from other blocks, so it runs on a worker thread. An
    implausible amount raises (strict) naming its line, or is flagged.
    """
    out = []
    for j in jobs:
        mat = j.mat.matrix(j.blk) if isinstance(j.mat, _Lazy) else j.mat
        table = _counters_table(j.names, j.ts, j.iv, mat, j.metrics, j.picks)
        bad = implausible(table.column("value").to_numpy())
        if bad.any():  # rows are metric-major: row k is line rows[k % len(rows)]
            if j.strict:
                i = int(j.rows[np.flatnonzero(bad) % len(j.rows)].min())
                raise _bad(j.name, j.first_line + i, EXPECT_AMOUNT, j.blk.line_text(i))
            table = flag_implausible(table, bad)
        out.append(table)
    return _concat(out) if out else None


def _json_hosts(raw: bytes, name: str) -> Any:
    """The ``sysstat.hosts`` of a sysstat JSON document."""
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise _bad(name, line, "complete sysstat JSON (iostat -o JSON)", str(exc)) from exc
    try:
        return doc["sysstat"]["hosts"]
    except (KeyError, TypeError) as exc:
        raise _bad(name, None, "a JSON object with sysstat.hosts", str(raw[:80])) from exc


def _check_json_end(raw: bytes, name: str, skips: SkipLog | None) -> None:
    """Raise (strict) or skip a last line without its newline (sysstat ends JSON with one)."""
    if raw.endswith(b"\n"):
        return
    if skips is None:
        raise _bad(
            name,
            raw.count(b"\n") + 1,
            "a last line ending in a newline (file cut short?)",
            raw.rsplit(b"\n", 1)[-1],
        )
    skips.add(raw.count(b"\n") + 1, "last line without a newline")


def _json_report(rep: Any, st: _State, prev: int | None) -> tuple[int, list[tuple[Any, dict]], Any]:
    """Time [us], (device, disk entry) pairs and avg-cpu entry of one JSON report.

    Raises KeyError, TypeError, ValueError or AttributeError for a bad report
    (the first timestamp fixes ``st.ts_format``).
    """
    text = str(rep["timestamp"]).strip()
    fmt = st.ts_format or _detect_format(text)
    if fmt is None:
        raise ValueError(f"timestamp {text!r}")
    st.ts_format = fmt
    t = int(_parse_ts([text], fmt)[0])
    if t < 0:
        raise ValueError(f"timestamp {text!r}")
    if prev is not None and t <= prev:
        raise ValueError("a report time after the previous report's")
    disks = rep.get("disk", [])
    cpu = rep.get("avg-cpu")
    rows = [(d["disk_device"], d) for d in disks]
    return t, rows, cpu


def _json_counters(out: list[pa.Table], name: str, skips: SkipLog | None) -> pa.Table:
    """The JSON reports' tables as one; check the amounts (raise, or flag when tolerant)."""
    tb = pa.concat_tables([t.cast(out[0].schema) for t in out])
    bad = implausible(tb.column("value").to_numpy())
    if bad.any():
        if skips is None:
            k = int(np.flatnonzero(bad)[0])
            row = {c: tb.column(c)[k].as_py() for c in ("target", "metric", "ts")}
            raise _bad(name, None, EXPECT_AMOUNT, f"{row} = {tb.column('value')[k]}")
        tb = flag_implausible(tb, bad)
    return tb


def _metric_picks(
    cols: list[str], st: _State, cpu: bool
) -> tuple[list[str], list[tuple[int, tuple[float, bool] | None]]]:
    """Metrics of the mapped columns, and (column index, (scale, is_rate) or None: as is) of each.

    Unmapped columns are noted in ``st.ignored`` (but for the known per-interval totals).
    """
    metrics, picks = [], []
    for j, c in enumerate(cols):
        if cpu:
            m = CPU_MAP.get(c)
            if m is None:
                st.ignored.add(c)
                continue
            picks.append((j, None))
        else:
            spec = COLUMN_MAP.get(c)
            if spec is None:
                if c not in IGNORED:
                    st.ignored.add(c)
                continue
            m, scale, rate = spec
            picks.append((j, (scale, rate)))
        metrics.append(m)
    return metrics, picks


def _scale_values(
    value: np.ndarray,
    mat: np.ndarray,
    picks: list[tuple[int, tuple[float, bool] | None]],
    iv: np.ndarray,
) -> None:
    """Fill ``value`` (metrics × rows) from the picked columns: scaled, rates × interval."""
    factors: dict[float, np.ndarray] = {}  # scale × interval, once per scale
    for q, (j, spec) in enumerate(picks):
        if spec is None:
            value[q] = mat[:, j]
        elif spec[1]:
            f = factors.get(spec[0])
            if f is None:
                f = factors[spec[0]] = spec[0] * iv
            np.multiply(mat[:, j], f, out=value[q])
        else:
            np.multiply(mat[:, j], spec[0], out=value[q])


def _concat(tables: list[pa.Table]) -> pa.Table:
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


register(IostatLoader())
