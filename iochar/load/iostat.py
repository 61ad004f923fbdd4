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

Parsing is vectorized over blocks of lines with numpy (token boundaries from
byte classes; sysstat's ``%.2f`` numbers decoded digit by digit), with a
slow exact path only for the rare token of another shape.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import polars as pl
import pyarrow as pa

from iochar.errors import InputError
from iochar.load import register
from iochar.load._base import Parsed, SkipLog
from iochar.load._text import Source, iter_line_blocks, open_binary, source_name

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
_MAXINT = 12  # digits before the point decoded on the fast path

# line classes
_BLANK, _TS, _BANNER_L, _CPUHDR, _CPUVAL, _DEVHDR, _DEV = range(7)


def _bad(name: str, line: int | None, expected: str, got: object = None) -> InputError:
    return InputError(name, line, expected, got, kind=KIND)


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
    b: np.ndarray, s: np.ndarray, e: np.ndarray, buf: bytes
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
        tok = buf[s[i] : e[i]]
        try:
            v = float(tok)
        except ValueError:
            continue
        if np.isfinite(v) and tok.strip(b"0123456789.-+eE") == b"":
            vals[i], ok[i] = v, True
    return vals, ok


class _Block:
    """Lines and tokens of one block, computed once, vectorized."""

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        b = np.frombuffer(buf, np.uint8)
        self.b = b
        nl = np.flatnonzero(b == 10)
        self.starts = np.concatenate(([0], nl[:-1] + 1)).astype(np.int64)
        self.ends = nl.astype(np.int64)
        # tokens: maximal runs of bytes > 32 (space, tab, CR, LF are <= 32)
        nonws = (b > 32).view(np.int8)
        edge = np.diff(nonws, prepend=np.int8(0), append=np.int8(0))
        self.ts_ = np.flatnonzero(edge == 1)
        self.te_ = np.flatnonzero(edge == -1)
        self.first_tok = np.searchsorted(self.ts_, self.starts)
        self.ntok = np.diff(self.first_tok, append=len(self.ts_))

    def line_bytes(self, i: int) -> bytes:
        return self.buf[self.starts[i] : self.ends[i]]

    def line_text(self, i: int) -> str:
        return self.line_bytes(i).decode("utf-8", "backslashreplace")


def _classify(blk: _Block) -> np.ndarray:
    b, st, en = blk.b, blk.starts, blk.ends
    n = len(st)
    cls = np.full(n, _DEV, np.int8)
    if n == 0:
        return cls
    fb = b[st]  # an empty line's "first byte" is its newline
    cls[blk.ntok == 0] = _BLANK
    cls[(fb >= 48) & (fb <= 57)] = _TS
    # the few lines that may be banners or headers: compare their first 8 bytes
    cand = np.flatnonzero((fb == 76) | (fb == 97) | (fb == 68))  # L, a, D
    if len(cand):
        p = _prefix_codes(b, st[cand], en[cand], 8)
        cls[cand[_as_bytes_rows(p, b"Linux ")]] = _BANNER_L
        cls[cand[_as_bytes_rows(p, b"avg-cpu:")]] = _CPUHDR
        dev = _as_bytes_rows(p, b"Device") & ((p[:, 6] == 58) | (p[:, 6] == 32) | (p[:, 6] == 9))
        cls[cand[dev]] = _DEVHDR
    # a line that starts with white space and has tokens: CPU values
    cls[((fb == 32) | (fb == 9)) & (blk.ntok > 0)] = _CPUVAL
    return cls


def _detect_format(text: str) -> str | None:
    for rx, fmt in _TS_FORMATS:
        if rx.match(text):
            return fmt
    return None


def _parse_ts(texts: list[str], fmt: str) -> np.ndarray:
    """Timestamps [us since epoch, UTC], -1 where unparseable."""
    s = pl.Series(texts, dtype=pl.String)
    if "%z" in fmt:
        dt = s.str.strptime(pl.Datetime("us", "UTC"), fmt, strict=False).dt.replace_time_zone(None)
    else:
        dt = s.str.strptime(pl.Datetime("us"), fmt, strict=False)
    return dt.dt.epoch("us").fill_null(-1).to_numpy().astype(np.int64)


class IostatLoader:
    """``iostat``: sysstat ``iostat -x -t`` text or ``-o JSON`` (see module docs)."""

    kind: ClassVar[str] = KIND
    suffixes: ClassVar[tuple[str, ...]] = (".iostat", ".iostat.gz")
    description: ClassVar[str] = "sysstat iostat -x -t text or iostat -o JSON, per device"

    def sniff(self, head: bytes) -> bool:
        """A ``Linux ... (host) date arch (N CPU)`` banner then iostat blocks, or sysstat JSON."""
        h = head.lstrip()
        if h.startswith(b"{") and b'"sysstat"' in h[:200]:
            return b'"disk"' in h or b'"avg-cpu"' in h or b'"statistics"' in h
        first = h.split(b"\n", 1)[0]
        if not (first.startswith(b"Linux ") and b"CPU)" in first):
            return False
        return re.search(rb"\n(Device:?\s|avg-cpu:\s)", h) is not None

    def parse(
        self, src: Source, *, strict: bool = True, chunk_rows: int = 1_000_000
    ) -> Iterator[Parsed]:
        """Parse iostat output into ``counters`` chunks."""
        name = source_name(src)
        with open_binary(src) as fh:
            head = fh.read(1)
            while head[-1:].isspace():
                more = fh.read(1)
                if not more:
                    break
                head += more
            if head[-1:] == b"{":
                yield from self._parse_json(head + fh.read(), name, strict)
                return
            yield from self._parse_text(_Prepend(head, fh), name, strict, chunk_rows)

    # -- text --------------------------------------------------------------------------

    def _parse_text(self, fh, name: str, strict: bool, chunk_rows: int) -> Iterator[Parsed]:
        st = _State()
        skips = None if strict else SkipLog()
        block_bytes = int(min(64 << 20, max(1 << 16, chunk_rows * 16)))
        any_line = False
        for first_line, block, complete in iter_line_blocks(fh, block_bytes):
            if not complete:
                last_line = first_line + block.count(b"\n")
                if strict:
                    raise _bad(
                        name,
                        last_line,
                        "a last line ending in a newline (file cut short?)",
                        block.rsplit(b"\n", 1)[-1],
                    )
                skips.add(last_line, "last line cut short (no newline)")
                block = block[: block.rfind(b"\n") + 1]
                if not block:
                    continue
            any_line = True
            tables = self._text_block(block, first_line, st, name, skips)
            if tables is not None:
                yield Parsed(tables={"counters": tables}, skips=skips)
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

    def _text_block(
        self, buf: bytes, first_line: int, st: _State, name: str, skips: SkipLog | None
    ) -> pa.Table | None:
        blk = _Block(buf)
        cls = _classify(blk)
        n = len(cls)
        if not st.seen_banner:
            nonblank = np.flatnonzero(cls != _BLANK)
            if not len(nonblank):
                return None
            i0 = int(nonblank[0])
            if cls[i0] != _BANNER_L:
                raise _bad(
                    name,
                    first_line + i0,
                    "the iostat banner 'Linux <release> (<host>) <date> <arch> (<N> CPU)'",
                    blk.line_text(i0),
                )
        # the line after an avg-cpu header holds the CPU values
        cpu_after = np.zeros(n, bool)
        hdr_idx = np.flatnonzero(cls == _CPUHDR)
        nxt = hdr_idx + 1
        cpu_after[nxt[nxt < n]] = True
        if st.cpu_pending and n:
            cpu_after[0] = True
        st.cpu_pending = bool(len(hdr_idx) and hdr_idx[-1] == n - 1)
        problems: list[tuple[int, str, str | None]] = []  # (line index, expected, got)
        for i in np.flatnonzero((cls == _CPUVAL) & ~cpu_after).tolist():
            problems.append((i, "a device line (not indented)", None))
        for i in np.flatnonzero(cpu_after & (cls != _CPUVAL) & (cls != _DEV)).tolist():
            problems.append((i, "the avg-cpu values line", None))
        cls[cpu_after & (cls == _DEV)] = _CPUVAL  # validated by field counts below
        idx_all = np.arange(n)

        # Device / avg-cpu header layouts -> ids (layouts are few; lines are not)
        hdr_id = self._layouts(blk, cls == _DEVHDR, st.dev_layouts, st.header_id)
        st.header_id = int(hdr_id[-1]) if n else st.header_id
        cpu_id = self._layouts(blk, cls == _CPUHDR, st.cpu_layouts, st.cpu_id)
        st.cpu_id = int(cpu_id[-1]) if n else st.cpu_id

        # banners (few) and report timestamps
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
        ts_lines = np.flatnonzero(cls == _TS)
        texts = [
            buf[a:b].decode("ascii", "replace").strip()
            for a, b in zip(blk.starts[ts_lines].tolist(), blk.ends[ts_lines].tolist(), strict=True)
        ]
        if texts and st.ts_format is None:
            st.ts_format = _detect_format(texts[0])
            if st.ts_format is None:
                raise _bad(name, first_line + int(ts_lines[0]), "an iostat -t timestamp", texts[0])
        t = _parse_ts(texts, st.ts_format) if texts else np.empty(0, np.int64)
        # previous report time within the same run (a banner starts a run)
        run_of_ts = np.searchsorted(ban, ts_lines)  # banners before each ts line
        prev = np.empty(len(t), np.int64)
        if len(t):
            prev[1:] = t[:-1]
            prev[0] = st.cur_ts if st.cur_ts is not None else -1
            same_run = np.empty(len(t), bool)
            same_run[1:] = run_of_ts[1:] == run_of_ts[:-1]
            same_run[0] = run_of_ts[0] == 0
            prev[~same_run] = -1
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
        # forward-fill the report (or banner) each line belongs to
        ev = np.full(n, -1, np.int64)
        ev[ts_lines] = np.arange(len(ts_lines))
        ev[ban] = -2 - np.arange(len(ban))  # banners: no report until the next ts
        last = np.maximum.accumulate(np.where(ev != -1, idx_all, -1)) if n else ev
        has = last >= 0
        k_of = np.where(has, ev[np.maximum(last, 0)], -1)
        rep_ok = np.zeros(n, bool)
        rep_iv = np.full(n, np.nan)
        rep_ts = np.full(n, -1, np.int64)
        in_rep = k_of >= 0
        rep_ok[in_rep] = True
        rep_iv[in_rep] = iv[k_of[in_rep]]
        rep_ts[in_rep] = t[k_of[in_rep]]
        carry = ~has  # lines before any event in this block: the carried report
        rep_ok[carry] = st.cur_ts is not None
        rep_iv[carry] = st.cur_iv
        rep_ts[carry] = st.cur_ts if st.cur_ts is not None else -1
        # state for the next block
        if len(ban) and (not len(ts_lines) or ban[-1] > ts_lines[-1]):
            st.cur_ts, st.cur_iv, st.cur_ok_t = None, np.nan, False
        elif len(ts_lines):
            if ok_t[-1]:
                st.cur_ts, st.cur_iv, st.cur_ok_t = int(t[-1]), float(iv[-1]), True
            else:  # keep the last good time for ordering; this report yields nothing
                st.cur_iv, st.cur_ok_t = np.nan, False
                if st.cur_ts is None and np.any(ok_t):
                    st.cur_ts = int(t[ok_t][-1])

        # device and cpu lines: structure checks
        dev = np.flatnonzero(cls == _DEV)
        cpu = np.flatnonzero(cls == _CPUVAL)
        for i in dev[~rep_ok[dev]].tolist():
            problems.append((i, "a timestamp line (iostat -t) before device lines", None))
        for i in dev[rep_ok[dev] & (hdr_id[dev] < 0)].tolist():
            problems.append((i, "a 'Device' header line before device lines", None))
        dev_len = np.array([len(h) + 1 for h in st.dev_layouts] + [0], np.int64)
        want = dev_len[hdr_id[dev]]
        wrong = (blk.ntok[dev] != want) & (hdr_id[dev] >= 0)
        for i, w in zip(dev[wrong].tolist(), want[wrong].tolist(), strict=True):
            problems.append((i, f"{w} fields as in the Device header", None))
        cpu_len = np.array([len(h) for h in st.cpu_layouts] + [0], np.int64)
        wantc = cpu_len[cpu_id[cpu]]
        wrong = blk.ntok[cpu] != wantc
        for i, w in zip(cpu[wrong].tolist(), wantc[wrong].tolist(), strict=True):
            problems.append((i, f"{w} avg-cpu values", None))
        drop = np.zeros(n, bool)
        for i, _, _ in problems:
            drop[i] = True

        # numbers, one matrix per layout
        groups = []  # (rows, layout id, is_cpu, values, ok)
        for rows_all, ids, lay, off, is_cpu in (
            (dev, hdr_id, st.dev_layouts, 1, False),
            (cpu, cpu_id, st.cpu_layouts, 0, True),
        ):
            rows_all = rows_all[~drop[rows_all]]
            for h in np.unique(ids[rows_all]).tolist():
                rows = rows_all[ids[rows_all] == h]
                ncol = len(lay[h])
                tok = (blk.first_tok[rows] + off)[:, None] + np.arange(ncol)[None, :]
                vals, ok = _parse_numbers(blk.b, blk.ts_[tok.ravel()], blk.te_[tok.ravel()], buf)
                ok = ok.reshape(len(rows), ncol).all(axis=1)
                for i in rows[~ok].tolist():
                    problems.append((i, "numbers after the device name", None))
                groups.append((rows, h, is_cpu, vals.reshape(len(rows), ncol), ok))
        if problems:
            problems.sort()
            if skips is None:
                i, exp, got = problems[0]
                raise _bad(name, first_line + i, exp, blk.line_text(i) if got is None else got)
            for i, exp, _ in problems:
                skips.add(first_line + i, f"expected {exp}")
        out = []
        for rows, h, is_cpu, mat, ok in groups:
            keep = ok & ~np.isnan(rep_iv[rows])
            if not keep.any():
                continue
            rows, mat = rows[keep], mat[keep]
            if is_cpu:
                names = pa.DictionaryArray.from_arrays(
                    pa.array(np.zeros(len(rows), np.int32)), pa.array(["cpu"])
                )
                cols = st.cpu_layouts[h]
            else:
                fi = blk.first_tok[rows]
                names = _names(buf, blk.ts_[fi], blk.te_[fi])
                cols = st.dev_layouts[h]
            out.append(self._emit(names, rep_ts[rows], rep_iv[rows], mat, cols, st, is_cpu))
        if not out:
            return None
        return pa.concat_tables(out) if len(out) > 1 else out[0]

    @staticmethod
    def _layouts(blk: _Block, mask: np.ndarray, layouts: list[list[str]], carry: int) -> np.ndarray:
        """Layout id in force on each line (forward-filled from header lines; -1: none)."""
        lines = np.flatnonzero(mask)
        ids = np.empty(len(lines), np.int64)
        index = {" ".join(h): k for k, h in enumerate(layouts)}
        seen: dict[bytes, int] = {}
        buf = blk.buf
        pairs = zip(blk.starts[lines].tolist(), blk.ends[lines].tolist(), strict=True)
        raws = [buf[a:b] for a, b in pairs]
        for k, raw in enumerate(raws):
            got = seen.get(raw)
            if got is None:
                cols = raw.decode("utf-8", "replace").split()[1:]
                got = index.get(" ".join(cols))
                if got is None:
                    got = len(layouts)
                    layouts.append(cols)
                    index[" ".join(cols)] = got
                seen[raw] = got
            ids[k] = got
        n = len(mask)
        pos = np.where(mask, np.arange(n), -1)
        last = np.maximum.accumulate(pos) if n else pos
        out = np.full(n, carry, np.int64)
        has = last >= 0
        lid = np.full(n, -1, np.int64)
        lid[lines] = ids
        out[has] = lid[last[has]]
        return out

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
        """Long-format counters rows for a (rows × columns) matrix of one layout."""
        metrics, parts = [], []
        for j, c in enumerate(cols):
            if cpu:
                m = CPU_MAP.get(c)
                if m is None:
                    st.ignored.add(c)
                    continue
                parts.append(mat[:, j])
            else:
                spec = COLUMN_MAP.get(c)
                if spec is None:
                    if c not in IGNORED:
                        st.ignored.add(c)
                    continue
                m, scale, rate = spec
                parts.append(mat[:, j] * (scale * iv if rate else scale))
            metrics.append(m)
        k, r = len(metrics), len(names)
        enc = names.dictionary_encode() if not isinstance(names, pa.DictionaryArray) else names
        target = pa.DictionaryArray.from_arrays(
            pa.array(np.tile(enc.indices.to_numpy(zero_copy_only=False), k).astype(np.int32)),
            enc.dictionary,
        )
        metric = pa.DictionaryArray.from_arrays(
            pa.array(np.repeat(np.arange(k, dtype=np.int32), r)), pa.array(metrics, pa.string())
        )
        quality = pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(k * r, np.int32)), pa.array(["ok"], pa.string())
        )
        return pa.table(
            {
                "target": target,
                "metric": metric,
                "ts": pa.array(np.tile(ts_us, k).astype("datetime64[us]")),
                "interval_s": pa.array(np.tile(iv, k)),
                "value": pa.array(np.concatenate(parts) if parts else np.empty(0)),
                "quality": quality,
            }
        )

    # -- JSON --------------------------------------------------------------------------

    def _parse_json(self, raw: bytes, name: str, strict: bool) -> Iterator[Parsed]:
        try:
            doc = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            line = getattr(exc, "lineno", None)
            raise _bad(name, line, "complete sysstat JSON (iostat -o JSON)", str(exc)) from exc
        try:
            hosts = doc["sysstat"]["hosts"]
        except (KeyError, TypeError) as exc:
            raise _bad(name, None, "a JSON object with sysstat.hosts", str(raw[:80])) from exc
        skips = None if strict else SkipLog()
        if not raw.endswith(b"\n"):  # sysstat ends its JSON with a newline
            if strict:
                raise _bad(
                    name,
                    raw.count(b"\n") + 1,
                    "a last line ending in a newline (file cut short?)",
                    raw.rsplit(b"\n", 1)[-1],
                )
            skips.add(raw.count(b"\n") + 1, "last line without a newline")
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
            prev = None
            for r, rep in enumerate(host["statistics"]):
                where = f"hosts[{h}].statistics[{r}]"
                try:
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
                for dev, d in rows:
                    cols = [JSON_KEYS.get(k, k) for k in d if k != "disk_device"]
                    try:
                        vals = np.array([[float(d[k]) for k in d if k != "disk_device"]])
                    except (TypeError, ValueError) as exc:
                        if skips is None:
                            raise _bad(
                                name, None, f"numbers in {where} disk {dev}", str(exc)
                            ) from exc
                        skips.add(r, f"{where}: {exc}")
                        continue
                    out.append(
                        self._emit(
                            pa.array([str(dev)]),
                            np.array([t]),
                            np.array([iv]),
                            vals,
                            cols,
                            st,
                            False,
                        )
                    )
                if isinstance(cpu, dict):
                    cols = ["%" + k for k in cpu]
                    vals = np.array([[float(v) for v in cpu.values()]])
                    out.append(
                        self._emit(
                            pa.array(["cpu"]), np.array([t]), np.array([iv]), vals, cols, st, True
                        )
                    )
        meta.update(ts_format=st.ts_format, skipped_first_reports=st.first_reports)
        meta["timezone"] = "UTC assumed unless the timestamp has an offset"
        tables = {}
        if out:
            tb = pa.concat_tables([t.cast(out[0].schema) for t in out])
            tables["counters"] = tb
        yield Parsed(tables=tables, meta=meta, skips=skips)


def _names(buf: bytes, s: np.ndarray, e: np.ndarray) -> pa.Array:
    """Device names ``buf[s:e]`` as a string array, built from offsets without a loop."""
    lens = (e - s).astype(np.int64)
    offsets = np.concatenate(([0], np.cumsum(lens))).astype(np.int32)
    idx = np.repeat(s - offsets[:-1], lens) + np.arange(int(offsets[-1]))
    data = np.frombuffer(buf, np.uint8)[idx]
    arr = pa.Array.from_buffers(
        pa.binary(), len(s), [None, pa.py_buffer(offsets), pa.py_buffer(data.tobytes())]
    )
    return arr.cast(pa.string())


class _Prepend:
    """A binary stream with some already-read bytes put back in front."""

    def __init__(self, head: bytes, fh) -> None:
        self.head, self.fh = head, fh

    def read(self, n: int = -1) -> bytes:
        if self.head:
            h, self.head = self.head, b""
            if n is None or n < 0:
                return h + self.fh.read()
            return h + self.fh.read(max(0, n - len(h)))
        return self.fh.read(n)


register(IostatLoader())
