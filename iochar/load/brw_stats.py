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

Parsing is vectorized over 16 MiB blocks of lines, never line by line in
Python: bin rows (most lines) are recognised and their numbers parsed in numpy
from byte-class runs (a row must have exactly the ``LABEL: n % % | n % %``
shape); the few other lines are classified with polars regular expressions.
Counts must fit in 18 digits.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import ClassVar

import numpy as np
import polars as pl
import pyarrow as pa

from iochar.errors import InputError
from iochar.load import register
from iochar.load._base import Parsed, SkipLog
from iochar.load._counters import QUALITY, RESET, deltas
from iochar.load._text import Source, iter_line_blocks, open_binary, source_name

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

# line classes
BLANK, SNAP, START, ELAPSED, RW, TITLE, BIN, BRWPARAM, PARAM, OTHER = range(10)

_RE_SNAP = r"^snapshot_time:?\s+(\d+(?:\.\d+)?)\s*(?:\(?secs\.nsecs\)?)?\s*$"
_RE_START = r"^start_time:?\s+(\d+(?:\.\d+)?)\s*(?:\(?secs\.nsecs\)?)?\s*$"
_RE_ELAPSED = r"^elapsed_time:?\s+(\d+(?:\.\d+)?)\s*(?:\(?secs\.nsecs\)?)?\s*$"
_RE_RW = r"^\s+read\s+\|\s+write\s*$"
_RE_TITLE = r"^(\S.*?)\s+(?:rpcs|ios|maps)\s+%\s+cum\s+%\s+\|\s+(?:rpcs|ios|maps)\s+%\s+cum\s+%\s*$"
_RE_BIN = r"^\s*(\d+)([KMG]?):\s+(\d+)\s+\d+\s+\d+\s*\|\s*(\d+)\s+\d+\s+\d+\s*$"
_RE_PARAM = r"^([A-Za-z0-9_.@:-]+)=(.*)$"
_SNIFF = re.compile(
    rb"^(?:[\w.@-]+\.brw_stats=\r?\n)?snapshot_time:?\s+\d+(?:\.\d+)?[^\n]*\n"
    rb"(?:(?:start|elapsed)_time:?[^\n]*\n)*\s*\n\s+read\s+\|\s+write\s*\n",
    re.M,
)


class _State:
    """What carries across blocks."""

    def __init__(self, default_target: str) -> None:
        self.default_target = default_target
        self.target: str | None = None  # from the last ``.brw_stats=`` line
        self.in_brw = True
        self.seen_brwparam = False
        self.seen_snap = False
        self.snap = -1  # global dump index
        self.section: str | None = None  # current histogram (None: none yet in this dump)
        self.last_cls = BLANK
        self.pending_rw: int | None = None  # line of a 'read | write' awaiting its title
        self.snaps: list[pl.DataFrame] = []
        self.extra: list[pl.DataFrame] = []  # start_time / elapsed_time per dump
        self.sec_pairs: list[pl.DataFrame] = []  # (dump, section) seen
        self.bins: list[pl.DataFrame] = []


def _ffill(mask: np.ndarray) -> np.ndarray:
    """Index of the last True at or before each position, -1 when none."""
    return np.maximum.accumulate(np.where(mask, np.arange(len(mask)), -1))


def _classify(lines: pl.Series) -> pl.DataFrame:
    s = lines
    snap = s.str.extract(_RE_SNAP, 1)
    start = s.str.extract(_RE_START, 1)
    elapsed = s.str.extract(_RE_ELAPSED, 1)
    title = s.str.extract(_RE_TITLE, 1)
    param = s.str.extract_groups(_RE_PARAM)
    pname = param.struct.field("1")
    blank = s.str.strip_chars().str.len_bytes() == 0
    rw = s.str.contains(_RE_RW)
    b1 = s.str.contains(_RE_BIN)
    cls = (
        pl.select(
            pl.when(blank)
            .then(BLANK)
            .when(snap.is_not_null())
            .then(SNAP)
            .when(start.is_not_null())
            .then(START)
            .when(elapsed.is_not_null())
            .then(ELAPSED)
            .when(rw)
            .then(RW)
            .when(title.is_not_null())
            .then(TITLE)
            .when(b1)
            .then(BIN)
            .when(pname.str.ends_with(".brw_stats"))
            .then(BRWPARAM)
            .when(pname.is_not_null())
            .then(PARAM)
            .otherwise(OTHER)
            .alias("cls")
        )
        .to_series()
        .cast(pl.Int8)
    )
    return pl.DataFrame(
        {
            "cls": cls,
            "num": snap.fill_null(start).fill_null(elapsed).cast(pl.Float64, strict=False),
            "title": title,
            "pname": pname,
            "pval": param.struct.field("2"),
        }
    )


# byte classes for the bin-row signature (1-based so that every run counts)
_DIG, _BLK, _COL, _BAR, _SUF, _NL, _OTH = range(1, 8)
_LUT = np.full(256, _OTH, np.uint8)
_LUT[ord("0") : ord("9") + 1] = _DIG
_LUT[[ord(" "), ord("\t"), ord("\r")]] = _BLK
_LUT[ord(":")] = _COL
_LUT[ord("|")] = _BAR
_LUT[[ord("K"), ord("M"), ord("G")]] = _SUF
_LUT[ord("\n")] = _NL
_MAX_RUNS = 19  # 8**19 < 2**63
_POW8 = 8 ** np.arange(_MAX_RUNS, dtype=np.int64)
_POW10 = np.concatenate([10 ** np.arange(19, dtype=np.int64), [0]])


def _bin_signatures() -> np.ndarray:
    """Run-class signatures of every valid bin row (``4K:  1 2 3 | 4 5 6``)."""
    out = set()
    for suf in ((), (_SUF,)):
        for sp in range(8):  # optional blanks: before |, after |, at the end
            seq = [_DIG, *suf, _COL, _BLK, _DIG, _BLK, _DIG, _BLK, _DIG]
            seq += [_BLK] if sp & 1 else []
            seq += [_BAR] + ([_BLK] if sp & 2 else [])
            seq += [_DIG, _BLK, _DIG, _BLK, _DIG] + ([_BLK] if sp & 4 else [])
            out.add(sum(c * 8**k for k, c in enumerate(seq)))
    return np.array(sorted(out), np.int64)


_BIN_SIGS = _bin_signatures()


class _Scan:
    """One block of lines: bin rows parsed in numpy, other lines classified by regex."""

    def __init__(self, raw: bytes) -> None:
        buf = np.frombuffer(raw, np.uint8)
        nl = np.flatnonzero(buf == 10)
        self.raw, self.nl = raw, nl
        n = self.n = len(nl)
        self.starts = np.concatenate([[0], nl[:-1] + 1]).astype(np.int64)
        b = _LUT[buf]
        chg = np.empty(len(buf), bool)
        chg[0] = True
        np.not_equal(b[1:], b[:-1], out=chg[1:])
        chg |= b == _NL
        rs = np.flatnonzero(chg)  # byte-class runs; every newline is its own run
        rlen = np.diff(rs, append=len(buf))
        rc = b[rs]
        isnl = rc == _NL
        nlr = np.flatnonzero(isnl)  # one per line (the block ends with a newline)
        prev_nl = np.empty(len(rs), bool)
        prev_nl[0] = True
        prev_nl[1:] = isnl[:-1]
        counted = ~isnl & ~(prev_nl & (rc == _BLK))  # not newlines nor leading blanks
        kc = np.cumsum(counted)
        base = np.concatenate([[0], kc[nlr[:-1]]])  # counted runs before each line
        line = np.cumsum(isnl) - isnl
        k = kc - 1 - base[line]  # position of the run within its line
        contrib = rc.astype(np.int64) * _POW8[np.clip(k, 0, _MAX_RUNS - 1)]
        contrib[~counted] = 0
        sig = np.diff(np.cumsum(contrib)[nlr], prepend=0)  # base-8 digits = run classes
        runs = np.diff(kc[nlr], prepend=0)
        is_bin = np.isin(sig, _BIN_SIGS) & (runs <= _MAX_RUNS)
        # the 7 digit runs of each bin row: label, read ios % cum, write ios % cum
        dsel = (rc == _DIG) & is_bin[line]
        d_start = rs[dsel].reshape(-1, 7)
        d_len = rlen[dsel].reshape(-1, 7)
        vals = []
        too = (d_len > 18).any(axis=1)  # beyond int64: not a valid row
        for j in (0, 1, 4):
            st_, ln_ = d_start[:, j], d_len[:, j]
            width = min(int(ln_.max()), 19) if ln_.size else 1
            off = np.arange(width)
            idx = np.minimum(st_[:, None] + off, len(buf) - 1)
            dig = buf[idx].astype(np.int64) - 48
            p = ln_[:, None] - 1 - off
            w = _POW10[np.where(p >= 0, np.minimum(p, 18), 19)]
            vals.append((dig * w).sum(axis=1))
        suf = (
            buf[np.minimum(d_start[:, 0] + d_len[:, 0], len(buf) - 1)]
            if len(d_start)
            else np.zeros(0, np.uint8)
        )
        mult = np.ones(len(d_start), np.int64)
        mult[suf == ord("K")] = 1 << 10
        mult[suf == ord("M")] = 1 << 20
        mult[suf == ord("G")] = 1 << 30
        if too.any():
            is_bin[np.flatnonzero(is_bin)[too]] = False
            vals = [v[~too] for v in vals]
            mult = mult[~too]
        self.is_bin = is_bin
        self.size = vals[0] * mult if vals else np.zeros(0, np.int64)
        self.read = vals[1] if vals else np.zeros(0, np.int64)
        self.write = vals[2] if vals else np.zeros(0, np.int64)
        self.bin_pos = np.cumsum(is_bin) - 1
        nb = ~is_bin
        self.sub_pos = np.cumsum(nb) - 1
        nb_idx = np.flatnonzero(nb)
        offs = np.concatenate([self.starts, [len(raw)]]).astype(np.int64)
        arr = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offs), pa.py_buffer(raw))
        sub = (
            pl.from_arrow(arr.take(pa.array(nb_idx)))
            if nb_idx.size
            else pl.Series([], dtype=pl.String)
        )
        sub = sub.str.strip_chars_end("\r\n")
        self.sub = _classify(sub)
        cls = np.full(n, BIN, np.int8)
        sc = self.sub["cls"].to_numpy().copy()
        sc[sc == BIN] = OTHER  # a bin-like row that failed the exact layout
        cls[nb_idx] = sc
        self.cls = cls

    def line(self, i: int) -> bytes:
        return self.raw[self.starts[i] : self.nl[i]]

    def col(self, name: str, idx: np.ndarray) -> pl.Series:
        """Column of the classified (non-bin) lines at full-block line indices."""
        return self.sub[name].gather(np.maximum(self.sub_pos[idx], 0))


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


def _process_block(
    st: _State, first_line: int, raw: bytes, name: str, strict: bool, skips: SkipLog
) -> None:
    if not raw:
        return
    sc = _Scan(raw)
    cls = sc.cls
    n = len(cls)
    errors: list[tuple[np.ndarray, str]] = []
    brwp = cls == BRWPARAM
    par = cls == PARAM
    seen_brwp = st.seen_brwparam | (np.cumsum(brwp) > 0)
    seen_snap = st.seen_snap | (np.cumsum(cls == SNAP) > 0)
    # a param=value line inside a raw (unwrapped) dump is garbage
    bad_par = par & seen_snap & ~seen_brwp
    errors.append((bad_par, "a brw_stats line, not 'param=value'"))
    par &= ~bad_par
    lp = _ffill(brwp | par)
    in_brw = np.where(lp >= 0, brwp[np.maximum(lp, 0)], st.in_brw)
    active = in_brw & ~(brwp | par)
    with_val = np.zeros(n, bool)
    bi = np.flatnonzero(brwp)
    if bi.size:
        with_val[bi] = (sc.col("pval", bi).str.strip_chars().str.len_bytes() > 0).to_numpy()
    errors.append((with_val, "a newline after '.brw_stats='"))
    snap_m = (cls == SNAP) & active
    snap_id = st.snap + np.cumsum(snap_m)
    rw_m = (cls == RW) & active
    title_m = (cls == TITLE) & active
    bin_m = (cls == BIN) & in_brw
    prev_cls = np.concatenate([[st.last_cls], cls[:-1]])
    next_cls = np.concatenate([cls[1:], [TITLE]])  # the block's last line: checked next block
    errors.append((rw_m & (next_cls != TITLE), "a histogram title after 'read | write'"))
    errors.append((title_m & (prev_cls != RW), "'read | write' before a histogram title"))
    hdr = ((cls == START) | (cls == ELAPSED)) & active
    errors.append(
        (hdr & ~np.isin(prev_cls, (SNAP, START, ELAPSED)), "start/elapsed_time after snapshot_time")
    )
    errors.append(((cls == OTHER) & in_brw, "a brw_stats line (snapshot_time, title or bin row)"))
    errors.append(
        ((rw_m | title_m | hdr | bin_m) & (snap_id < 0), "snapshot_time before a histogram")
    )
    ls = _ffill(title_m | snap_m)
    sec_ok = np.where(ls >= 0, title_m[np.maximum(ls, 0)], st.section is not None)
    errors.append((bin_m & ~sec_ok, "a histogram title before its bin rows"))
    if st.pending_rw is not None and cls[0] != TITLE:
        if strict:
            raise InputError(name, st.pending_rw, "a histogram title", sc.line(0), kind=KIND)
        skips.add(st.pending_rw, "'read | write' without title")
    bad_any = np.zeros(n, bool)
    for mask, _ in errors:
        bad_any |= mask
    if bad_any.any():
        if strict:
            i = int(np.flatnonzero(bad_any)[0])
            expected = next(e for m, e in errors if m[i])
            raise InputError(name, first_line + i, expected, sc.line(i), kind=KIND)
        for i in np.flatnonzero(bad_any).tolist():
            skips.add(first_line + i, next(e for m, e in errors if m[i]))
    # dumps: time, target, line
    lbp = _ffill(brwp)
    si = np.flatnonzero(snap_m)
    if si.size:
        tg_idx = lbp[si]
        carry_tg = st.target if st.target is not None else st.default_target
        names = sc.col("pname", np.maximum(tg_idx, 0)).to_list()
        tg = [
            _target_of(x) if j >= 0 else carry_tg
            for x, j in zip(names, tg_idx.tolist(), strict=True)
        ]
        st.snaps.append(
            pl.DataFrame(
                {
                    "snap": snap_id[si].astype(np.int64),
                    "target": pl.Series(tg, dtype=pl.String),
                    "t": sc.col("num", si),
                    "line": (si + first_line).astype(np.int64),
                }
            )
        )
    hi = np.flatnonzero(hdr & ~bad_any)
    if hi.size:
        st.extra.append(
            pl.DataFrame(
                {
                    "snap": snap_id[hi].astype(np.int64),
                    "what": np.where(cls[hi] == START, "start", "elapsed"),
                    "v": sc.col("num", hi),
                }
            )
        )
    ti = np.flatnonzero(title_m)
    titles_ext = sc.sub["title"].append(pl.Series([st.section], dtype=pl.String))
    n_sub = len(sc.sub)
    if ti.size:
        st.sec_pairs.append(
            pl.DataFrame({"snap": snap_id[ti].astype(np.int64), "section": sc.col("title", ti)})
        )
    sel = np.flatnonzero(bin_m & ~bad_any)
    if sel.size:
        src = ls[sel]
        sec = titles_ext.gather(np.where(src >= 0, sc.sub_pos[np.maximum(src, 0)], n_sub))
        bp = sc.bin_pos[sel]
        st.bins.append(
            pl.DataFrame(
                {
                    "snap": snap_id[sel].astype(np.int64),
                    "section": sec,
                    "size": sc.size[bp],
                    "read": sc.read[bp],
                    "write": sc.write[bp],
                }
            )
        )
    # carry
    st.snap = int(snap_id[-1])
    st.in_brw = bool(in_brw[-1])
    st.seen_brwparam = bool(seen_brwp[-1])
    st.seen_snap = bool(seen_snap[-1])
    st.last_cls = int(cls[-1])
    st.pending_rw = first_line + n - 1 if rw_m[-1] else None
    if ls[-1] >= 0:
        st.section = titles_ext[int(sc.sub_pos[ls[-1]])] if title_m[ls[-1]] else None
    if lbp[-1] >= 0:
        st.target = _target_of(sc.col("pname", lbp[-1:])[0])


class BrwStatsLoader:
    """Lustre ``brw_stats`` (raw or ``lctl get_param`` wrapped) -> ``size_hist`` deltas."""

    kind: ClassVar[str] = KIND
    suffixes: ClassVar[tuple[str, ...]] = ("brw_stats",)
    description: ClassVar[str] = "Lustre brw_stats histogram dumps (raw or lctl get_param)"

    def sniff(self, head: bytes) -> bool:
        """A ``snapshot_time`` line followed by a ``read | write`` histogram header."""
        return _SNIFF.search(head) is not None

    def parse(
        self, src: Source, *, strict: bool = True, chunk_rows: int = 1_000_000
    ) -> Iterator[Parsed]:
        """Parse ``src``; see the module docstring for the rules."""
        name = source_name(src)
        st = _State(_default_target(name))
        skips = SkipLog()
        with open_binary(src) as fh:
            for first, block, complete in iter_line_blocks(fh):
                if not complete:
                    if strict:
                        raise InputError(
                            name,
                            first + block.count(b"\n"),
                            "a line ending in a newline (the input looks cut)",
                            block.rsplit(b"\n", 1)[-1],
                            kind=KIND,
                        )
                    skips.add(first + block.count(b"\n"), "last line without newline")
                    block = block[: block.rfind(b"\n") + 1]
                try:
                    block.decode("utf-8")
                except UnicodeDecodeError:
                    block = block.decode("utf-8", "replace").encode()
                _process_block(st, first, block, name, strict, skips)
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
        snaps = pl.concat(st.snaps)
        pairs = (
            pl.concat(st.sec_pairs)
            if st.sec_pairs
            else pl.DataFrame(schema={"snap": pl.Int64, "section": pl.String})
        )
        secs_of = dict(
            pairs.group_by("snap")
            .agg(pl.col("section").unique().sort().str.join("\x1f"))
            .iter_rows()
        )
        # checks per target: increasing times, no histograms lost (a dump cut short)
        drop: list[int] = []
        prev: dict[str, tuple[float, frozenset]] = {}
        for s_id, tg, t, line in snaps.iter_rows():
            cur = frozenset(secs_of.get(s_id, "").split("\x1f")) - {""}
            if tg in prev:
                pt, psec = prev[tg]
                why = None
                if not t > pt:
                    why = (f"snapshot_time after {pt} for target {tg!r}", t)
                elif psec - cur:
                    why = (
                        f"every histogram of the previous dump of {tg!r} (cut mid-dump?)",
                        f"missing {sorted(psec - cur)}",
                    )
                if why is not None:
                    if strict:
                        raise InputError(name, line, why[0], why[1], kind=KIND)
                    skips.add(line, why[0])
                    drop.append(s_id)
                    continue
            prev[tg] = (t, cur)
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
        if st.bins:
            b = pl.concat(st.bins)
            if drop:
                b = b.filter(~pl.col("snap").is_in(drop))
            sec_names = b["section"].unique(maintain_order=True)
            b = b.with_columns(
                pl.col("section").replace_strict(
                    sec_names, list(range(len(sec_names))), return_dtype=pl.Int64
                )
            )
            page_code = (sec_names == "pages per bulk r/w").arg_true().to_list()
            if page_code:
                b = b.with_columns(
                    pl.when(pl.col("section") == page_code[0])
                    .then(pl.col("size") * PAGE_SIZE)
                    .otherwise("size")
                )
            snap_np = snaps["snap"].to_numpy()
            t_np = snaps["t"].to_numpy()
            b_snap = b["snap"].to_numpy()
            b_sec = b["section"].to_numpy()
            b_size = b["size"].to_numpy()
            b_rw = np.stack([b["read"].to_numpy(), b["write"].to_numpy()], axis=1)
            sec_dict = pa.array(sec_names.to_list(), pa.string())
            for (tg,), rows in snaps.with_row_index("i").group_by("target", maintain_order=True):
                ri = rows["i"].to_numpy()
                s_ids, ts = snap_np[ri], t_np[ri]
                if len(s_ids) < 2:
                    continue
                pos = np.searchsorted(s_ids, b_snap)
                pos_c = np.minimum(pos, len(s_ids) - 1)
                mine = s_ids[pos_c] == b_snap
                if not mine.any():
                    continue
                row = pos_c[mine]
                key = b_sec[mine].astype(np.int64) * (1 << 48) + b_size[mine]
                ukey, kinv = np.unique(key, return_inverse=True)
                v = np.zeros((len(s_ids), len(ukey), 2), np.int64)
                v[row, kinv] = b_rw[mine]
                total = v.sum(axis=(1, 2))
                d = deltas(np.zeros(len(s_ids), np.int64), ts, total)
                q = d.quality.copy()
                dv = v[1:] - v[:-1]
                reset = (dv < 0).any(axis=(1, 2)) | (q == RESET)
                dv[reset] = v[1:][reset]
                q[reset] = RESET
                n_i, n_k = dv.shape[0], dv.shape[1]
                per = n_k * 2
                total_rows = n_i * per
                sec_idx = np.tile(np.repeat((ukey >> 48).astype(np.int32), 2), n_i)
                size = np.tile(np.repeat(ukey & ((1 << 48) - 1), 2), n_i)
                op_idx = np.tile(np.array([0, 1], np.int8), n_i * n_k)
                table = pa.table(
                    {
                        "target": pa.array([tg] * 1, pa.string()).take(
                            np.zeros(total_rows, np.int32)
                        ),
                        "ts": pa.array(
                            np.repeat((ts[1:] * 1e6).round().astype(np.int64), per),
                            pa.timestamp("us"),
                        ),
                        "interval_s": pa.array(np.repeat(d.interval_s, per), pa.float64()),
                        "section": sec_dict.take(pa.array(sec_idx)),
                        "op": pa.array(["read", "write"], pa.string()).take(pa.array(op_idx)),
                        "size_bytes": pa.array(size, pa.int64()),
                        "count": pa.array(dv.reshape(-1), pa.int64()),
                        "quality": pa.array(list(QUALITY), pa.string()).take(
                            pa.array(np.repeat(q, per))
                        ),
                    }
                )
                step = max(1, chunk_rows)
                for lo in range(0, table.num_rows, step):
                    produced = True
                    yield Parsed(
                        tables={"size_hist": table.slice(lo, step)}, meta=meta, skips=skips
                    )
        if not produced:
            yield Parsed(tables={}, meta=meta, skips=skips)


register(BrwStatsLoader())
