"""Timestamped ``/proc/diskstats`` snapshots → per-interval ``counters``.

Input format
------------
Repeated blocks: one timestamp line, then the ``/proc/diskstats`` lines of
that moment, as written by::

    while :; do date +%s.%N; cat /proc/diskstats; sleep 1; done > disks.diskstats

A timestamp line is one of

- seconds since the epoch, with an optional fraction: ``1795400502.058252892``;
- the same after a hash: ``# 1795400502.058``;
- ISO 8601 (``date -Is`` / ``date --iso-8601=ns``): ``2026-11-23T02:21:42+00:00``,
  ``2026-11-23T02:21:42.123Z``, or without an offset (taken as UTC); a
  leading ``#`` is allowed too.

Blank lines are ignored. A device line is ``major minor name`` followed by 11,
15 or 17 counters (14, 18 or 20 fields: kernels < 4.18, ≥ 4.18 with discards,
≥ 5.5 with flushes). A device may list a different count than another; each
device gets the metrics its fields carry.

Metrics (:data:`FIELDS`)
------------------------
Cumulative counters become per-interval deltas with
:func:`iochar.load._counters.deltas` (the first snapshot starts each series
and yields no row; a drop is a ``reset``, or a ``wrap`` for the 32-bit
millisecond fields, never a negative value; a long interval is a ``gap``).
``in_flight`` is a gauge: its value at the interval's end, quality ``ok``.
Sectors are 512 bytes whatever the device's block size (the kernel's unit).

Rules (``InputError`` with the line)
------------------------------------
- the first non-blank line is a timestamp; every timestamp is after the one
  before (time going backwards is an error, never a negative interval);
- a device line has 14, 18 or 20 fields, integers after the name;
- a device appears once per snapshot;
- a device that disappears ends its series (and a new one starts if it
  comes back); but a *last* snapshot that lists fewer devices than the one
  before is taken as cut short (strict: error; tolerant: dropped);
- the input ends with a newline.

``ts`` is the interval end: the timestamp line of the later snapshot (the
moment the writer read the clock, just before reading the file), in UTC.

Parsing walks the lines in Python (snapshots are small and few per second of
monitoring; not tuned like the iostat parser) and keeps the whole input's
integer samples in memory to build each device's series in one pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar

import numpy as np
import pyarrow as pa

from iochar.errors import InputError
from iochar.load import _kinds, register
from iochar.load._base import Parsed, SkipLog
from iochar.load._counters import QUALITY, deltas
from iochar.load._text import Source, open_text, source_name

__all__ = ["DiskstatsLoader", "FIELDS"]

KIND = "diskstats"

#: The largest value of a ``/proc/diskstats`` field: the kernel prints them from
#: ``unsigned long`` (64-bit) counters (Documentation/admin-guide/iostats.rst).
_U64_MAX = 2**64 - 1

_EXPECT_COUNTERS = "integer counters from 0 to 2**64-1 after the device name"

#: counter position after the name (0-based) -> (metric, scale, wrap bits; None = gauge).
#: The millisecond fields are ``unsigned int`` in the kernel and wrap at 2**32.
FIELDS: tuple[tuple[str, float, int | None], ...] = (
    ("read_ios", 1.0, 64),
    ("read_merges", 1.0, 64),
    ("read_bytes", 512.0, 64),
    ("read_time_s", 0.001, 32),
    ("write_ios", 1.0, 64),
    ("write_merges", 1.0, 64),
    ("write_bytes", 512.0, 64),
    ("write_time_s", 0.001, 32),
    ("in_flight", 1.0, None),
    ("busy_s", 0.001, 32),
    ("queue_time_s", 0.001, 32),
    ("discard_ios", 1.0, 64),
    ("discard_merges", 1.0, 64),
    ("discard_bytes", 512.0, 64),
    ("discard_time_s", 0.001, 32),
    ("flush_ios", 1.0, 64),
    ("flush_time_s", 0.001, 32),
)
_NCOUNTERS = (11, 15, 17)
_EPOCH = re.compile(rb"^#?\s*(\d{1,12}(?:\.\d+)?)\s*$")
_ISO = re.compile(
    rb"^#?\s*(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?\s*$"
)


def _bad(name: str, line: int | None, expected: str, got: object = None) -> InputError:
    return InputError(name, line, expected, got, kind=KIND)


def _parse_time(line: bytes) -> float | None:
    """Seconds since the epoch (UTC) of a timestamp line, or None."""
    m = _EPOCH.match(line)
    if m:
        return float(m[1])
    m = _ISO.match(line)
    if m:
        base = datetime.fromisoformat(m[1].decode().replace(" ", "T"))
        off = (m[3] or b"Z").decode()
        if off == "Z":
            base = base.replace(tzinfo=UTC)
        else:
            sign = 1 if off[0] == "+" else -1
            hh, mm = int(off[1:3]), int(off[-2:])
            base = base.replace(tzinfo=UTC)
            base = base.fromtimestamp(base.timestamp() - sign * (hh * 3600 + mm * 60), tz=UTC)
        frac = float(m[2]) if m[2] else 0.0
        return base.timestamp() + frac
    return None


class DiskstatsLoader:
    """``diskstats``: timestamped ``/proc/diskstats`` snapshots (see module docs)."""

    kind: ClassVar[str] = KIND
    suffixes: ClassVar[tuple[str, ...]] = (".diskstats", ".diskstats.gz")
    description: ClassVar[str] = "timestamped /proc/diskstats snapshots (date +%s.%N; cat ...)"

    def sniff(self, head: bytes) -> bool:
        """A timestamp line followed by a diskstats line (14, 18 or 20 fields)."""
        return _kinds.sniff_diskstats(head)  # the one rule, shared with sniffing by kind table

    def parse(
        self, src: Source, *, strict: bool = True, chunk_rows: int = 1_000_000
    ) -> Iterator[Parsed]:
        """Parse snapshots into ``counters`` (one chunk: the series need all samples).

        Memory is bounded by the numeric samples (devices × snapshots × 17
        integers), not by the text. The stages: :func:`_lines` (whole lines),
        :func:`_scan` (timestamps and device lines, checked), :func:`_drop_cut_last`
        (a last snapshot cut short), :func:`_series` (a device that comes back starts
        a new series), :func:`_counter_tables` (per-interval deltas per field).
        """
        name = source_name(src)
        skips = None if strict else SkipLog()
        lines = _lines(src, name, skips)
        scan = _scan(lines, name, skips)
        _drop_cut_last(scan, name, skips)
        t_snap = np.array([t for _, t in scan.snaps])
        names = [k.decode("utf-8", "backslashreplace") for k in scan.dev_names]
        counters = _counter_tables(scan, _series(scan.dev, scan.snap), t_snap, names)
        meta = {
            "tool": "/proc/diskstats",
            "format": "timestamped snapshots",
            "snapshots": len(scan.snaps),
            "devices": len(names),
            "fields": [n + 3 for n in sorted(set(scan.nf.tolist()))],
            "start_ts": datetime.fromtimestamp(t_snap[0], tz=UTC).isoformat(),
        }
        yield Parsed(
            tables={"counters": counters} if counters is not None else {},
            meta=meta,
            skips=skips,
        )


def _refuse(skips: SkipLog | None, err: InputError, reason: str) -> None:
    """Strict: raise ``err``; tolerant: count the line as skipped with ``reason``."""
    if skips is None:
        raise err
    skips.add(err.line, reason)


def _lines(src: Source, name: str, skips: SkipLog | None) -> list[bytes]:
    """The input's whole lines; a last line without its newline is cut short."""
    with open_text(src) as fh:
        raw = fh.read()
    if not raw.strip():
        raise _bad(name, None, "a non-empty input")
    lines = raw.split(b"\n")
    tail = lines.pop()  # after the last newline: b"" when the input ends with one
    if tail:
        expected = "a last line ending in a newline (file cut short?)"
        _refuse(
            skips, _bad(name, len(lines) + 1, expected, tail), "last line cut short (no newline)"
        )
    return lines


@dataclass
class _Scan:
    """Timestamps and device lines as read: one row per accepted device line."""

    snaps: list[tuple[int, float]]  # (line, epoch seconds) per snapshot
    dev_names: dict[bytes, int]  # device name -> index, in order of appearance
    dev: np.ndarray  # device index per row
    snap: np.ndarray  # snapshot index per row
    vals: np.ndarray  # (rows, 17) uint64 counters, zero-padded
    nf: np.ndarray  # counters present per row (11, 15 or 17)


def _device_values(f: list[bytes]) -> list[int] | None:
    """The counters of a device line, or None when one is not an integer in 0..2**64-1."""
    try:
        vals = [int(x) for x in f[3:]]
    except ValueError:
        return None
    return None if any(v < 0 or v > _U64_MAX for v in vals) else vals


def _scan(lines: list[bytes], name: str, skips: SkipLog | None) -> _Scan:
    """Walk the lines: a timestamp opens a snapshot, device lines fill it (rules in the
    module notes: integers in range, after a timestamp, once per snapshot, times rising)."""
    snaps: list[tuple[int, float]] = []
    dev_names: dict[bytes, int] = {}
    rows_dev, rows_snap, rows_vals, rows_nf = [], [], [], []
    cur = -1
    seen: set[bytes] = set()
    for i, ln in enumerate(lines):
        lineno = i + 1
        f = ln.split()
        if not f:
            continue
        if len(f) in (14, 18, 20) and f[0].isdigit() and f[1].isdigit():
            vals = _device_values(f)
            if vals is None:
                err = _bad(name, lineno, _EXPECT_COUNTERS, ln)
                _refuse(skips, err, "counters not integers from 0 to 2**64-1")
            elif cur < 0:
                err = _bad(name, lineno, "a timestamp line before diskstats lines", ln)
                _refuse(skips, err, "device line before any timestamp")
            elif f[2] in seen:
                err = _bad(name, lineno, f"device {f[2].decode()!r} once per snapshot", ln)
                _refuse(skips, err, "device twice in one snapshot")
            else:
                seen.add(f[2])
                rows_dev.append(dev_names.setdefault(f[2], len(dev_names)))
                rows_snap.append(cur)
                rows_vals.append(vals + [0] * (17 - len(vals)))
                rows_nf.append(len(vals))
            continue
        t = _parse_time(ln) if len(f) <= 3 else None
        if t is None:
            exp = (
                "a diskstats line of 14, 18 or 20 fields, or a timestamp line"
                if cur >= 0
                else "a timestamp line (epoch seconds, '# <epoch>' or ISO 8601)"
            )
            _refuse(skips, _bad(name, lineno, exp, ln), exp)
            continue
        if snaps and t <= snaps[-1][1]:
            err = _bad(name, lineno, "a time after the previous snapshot's", ln)
            _refuse(skips, err, "time not after the previous snapshot")
            cur = -1  # drop this snapshot's lines
            continue
        snaps.append((lineno, t))
        cur = len(snaps) - 1
        seen = set()
    if not snaps:
        raise _bad(name, None, "at least one timestamp line")
    return _Scan(
        snaps=snaps,
        dev_names=dev_names,
        dev=np.array(rows_dev, np.int64),
        snap=np.array(rows_snap, np.int64),
        # the kernel's fields are unsigned long: uint64 holds every one of them exactly
        vals=np.array(rows_vals, np.uint64).reshape(len(rows_vals), 17),
        nf=np.array(rows_nf, np.int64),
    )


def _drop_cut_last(scan: _Scan, name: str, skips: SkipLog | None) -> None:
    """A last snapshot listing fewer devices than the one before was cut short: refuse it
    (strict) or drop its rows (tolerant)."""
    if len(scan.snaps) < 2:
        return
    last, before = len(scan.snaps) - 1, len(scan.snaps) - 2
    n_last = int(np.sum(scan.snap == last))
    n_before = int(np.sum(scan.snap == before))
    if n_last >= n_before:
        return
    got = "no device lines" if n_last == 0 else f"{n_last} devices"
    expected = f"a last snapshot listing the {n_before} devices of the one before (file cut short?)"
    _refuse(skips, _bad(name, scan.snaps[last][0], expected, got), "last snapshot cut short")
    keep = scan.snap != last
    scan.dev, scan.snap, scan.vals, scan.nf = (
        scan.dev[keep],
        scan.snap[keep],
        scan.vals[keep],
        scan.nf[keep],
    )


def _series(dev: np.ndarray, snap: np.ndarray) -> np.ndarray:
    """A series id per row: a device that vanishes and comes back starts a new series."""
    order = np.lexsort((snap, dev))
    run = np.zeros(len(dev), np.int64)
    if len(dev):
        d_o, s_o = dev[order], snap[order]
        brk = np.r_[True, (d_o[1:] != d_o[:-1]) | (s_o[1:] != s_o[:-1] + 1)]
        run[order] = np.cumsum(brk) - 1
    return run


def _counter_tables(
    scan: _Scan, run: np.ndarray, t_snap: np.ndarray, names: list[str]
) -> pa.Table | None:
    """Per-interval ``counters`` rows for every field of :data:`FIELDS` the lines carry:
    deltas of cumulative counters (wraps at the field's width), gauges as sampled."""
    tables = []
    dev, snap, vals, nf = scan.dev, scan.snap, scan.vals, scan.nf
    for j, (metric, scale, bits) in enumerate(FIELDS):
        v = vals[:, j]
        has = nf > j
        if not has.any():
            continue
        idx = np.flatnonzero(has)
        if bits is None:  # gauge: value at each interval end that has a predecessor
            d = deltas(run[idx], t_snap[snap[idx]], np.zeros(len(idx)))
            value = v[idx][d.index].astype(np.float64) * scale
            quality = np.zeros(len(d.index), np.int8)
        else:
            d = deltas(run[idx], t_snap[snap[idx]], v[idx], wrap_bits=bits)
            value = d.delta * scale
            quality = d.quality
        if not len(d.index):
            continue
        rows = idx[d.index]
        tables.append(
            pa.table(
                {
                    "target": pa.DictionaryArray.from_arrays(
                        pa.array(dev[rows].astype(np.int32)), pa.array(names, pa.string())
                    ),
                    "metric": pa.array([metric] * len(rows), pa.string()),
                    "ts": pa.array((t_snap[snap[rows]] * 1e6).round().astype("datetime64[us]")),
                    "interval_s": pa.array(d.interval_s),
                    "value": pa.array(value),
                    "quality": pa.array(QUALITY[quality].tolist(), pa.string()),
                }
            )
        )
    return pa.concat_tables(tables) if tables else None


register(DiskstatsLoader())
