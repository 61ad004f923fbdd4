"""Cumulative counters to per-interval deltas, with resets, wraps and gaps.

Tools such as LMT, ``brw_stats``, ``/proc/diskstats`` and Lustre ``stats``
report counters that only grow, sampled at (ir)regular times. iochar stores
per-interval amounts (DESIGN: ``counters.value`` is never cumulative), so the
loaders turn each series into deltas here, all in numpy:

- The first sample of a series starts it and yields no row (no interval).
- ``delta = v[i] - v[i-1]`` over ``interval_s = t[i] - t[i-1]`` (the true
  interval, never a nominal one).
- A drop is a **wrap** when the counter has a known width (``wrap_bits``) and
  the wrapped difference ``v[i] + 2**bits - v[i-1]`` is under a quarter of
  the range (a counter that wrapped moved a little past its top). Any other
  drop is a **reset** (the target restarted and counted from 0):
  ``delta = v[i]``, the amount counted since the restart, a lower bound. A
  restart just below the top cannot be told from a wrap; either way the delta
  is never negative and never less than what was counted since the restart.
- An interval longer than ``gap_factor`` times the series' median interval is
  a **gap**: its delta is kept over its true (long) interval and marked, never
  interpolated or spread over invented samples.
- One rule for an interval that is both: a drop inside a gap is
  **gap_reset** (the target restarted during the outage; the delta is the
  amount counted since the restart, a lower bound over the long interval) or
  **gap_wrap** (wrapped at least once; the delta is the single-wrap amount, a
  lower bound since it may have wrapped more than once during the gap). Both
  labels keep both facts, so "was there a gap" and "was there a drop" are each
  one test on the label.

Each output row carries ``quality`` in
``{"ok", "reset", "wrap", "gap", "gap_reset", "gap_wrap"}``.
Timestamps that go backwards within a series are an input error; the caller
gets the offending sample's index to name the line.

Plausible amounts
-----------------
Every cumulative sample and every per-interval amount a counter loader reads
(``iostat``, ``diskstats``, ``lmt``, ``brw_stats``) must be finite, at least 0
and at most :data:`AMOUNT_MAX` = 2**64, in the tool's own unit. The tools
these come from keep 64-bit unsigned counters (the kernel's block-layer
statistics behind ``/proc/diskstats`` and ``iostat``, Lustre's ``__u64``
lprocfs counters behind ``brw_stats`` and LMT), so no sample can be larger
and no interval can count more; 2**64 bytes is also 16 EiB, more than any
storage system moves in an interval. A negative amount is a tool bug or a
corrupt file (sysstat never prints one). :func:`implausible` finds them;
strict loads refuse the line, tolerant loads keep the row with ``value`` NULL
and ``quality`` ``"implausible"`` (:func:`flag_implausible`) when the row
exists, or skip the record.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "Deltas",
    "deltas",
    "mark_gaps",
    "series_median",
    "QUALITY",
    "AMOUNT_MAX",
    "EXPECT_AMOUNT",
    "implausible",
    "flag_implausible",
]

#: The values of the ``quality`` column, by code.
QUALITY = np.array(
    ["ok", "reset", "wrap", "gap", "gap_reset", "gap_wrap", "implausible"], dtype=object
)
OK, RESET, WRAP, GAP, GAP_RESET, GAP_WRAP, IMPLAUSIBLE = 0, 1, 2, 3, 4, 5, 6

#: Largest plausible counter sample or per-interval amount (see "Plausible amounts").
AMOUNT_MAX = float(2**64)

#: What an error says a counter value should be.
EXPECT_AMOUNT = "counter values that are finite, >= 0 and at most 2**64 (64-bit counters)"


def implausible(value) -> np.ndarray:
    """Which values cannot be a 64-bit counter's sample or amount.

    Parameters
    ----------
    value : array of float or int
        Samples or per-interval amounts, in the tool's unit.

    Returns
    -------
    numpy.ndarray of bool
        True where the value is NaN, infinite, negative or above
        :data:`AMOUNT_MAX` (see the module docstring for the rule).

    Examples
    --------
    >>> implausible(np.array([0.0, 5.0, -5.0, 1e300, np.nan, np.inf])).tolist()
    [False, False, True, True, True, True]
    """
    v = np.asarray(value)
    if v.dtype.kind == "u":
        return v.astype(np.float64) > AMOUNT_MAX
    v = v.astype(np.float64, copy=False)
    with np.errstate(invalid="ignore"):
        return ~((v >= 0) & (v <= AMOUNT_MAX))  # NaN fails both


def flag_implausible(table, bad: np.ndarray):
    """``counters`` rows with ``value`` NULL and ``quality`` ``"implausible"`` where ``bad``.

    Parameters
    ----------
    table : pyarrow.Table
        ``counters`` rows (``value`` and ``quality`` columns).
    bad : numpy.ndarray of bool
        One flag per row, from :func:`implausible`.

    Returns
    -------
    pyarrow.Table
        The same rows, the flagged ones marked (tolerant mode).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    mask = pa.array(bad)
    value = pc.if_else(mask, pa.scalar(None, pa.float64()), table.column("value"))
    old = table.column("quality")
    quality = pc.if_else(mask, "implausible", old.cast(pa.string())).cast(old.type)
    table = table.set_column(table.schema.get_field_index("value"), "value", value)
    return table.set_column(table.schema.get_field_index("quality"), "quality", quality)


@dataclass(frozen=True)
class Deltas:
    """Per-interval deltas of one or more cumulative series.

    Attributes
    ----------
    index : numpy.ndarray of int64
        Index (into the input arrays) of each interval's end sample.
    delta : numpy.ndarray of float64
        Amount counted in the interval; never negative.
    interval_s : numpy.ndarray of float64
        Interval length. [s]
    quality : numpy.ndarray of int8
        Codes into :data:`QUALITY`.
    backwards : int or None
        Index of the first sample whose time is not after the previous
        sample of its series (an input error), or None.
    """

    index: np.ndarray
    delta: np.ndarray
    interval_s: np.ndarray
    quality: np.ndarray
    backwards: int | None

    def quality_labels(self) -> np.ndarray:
        """``quality`` as strings."""
        return QUALITY[self.quality]


def deltas(
    series: np.ndarray,
    t: np.ndarray,
    value: np.ndarray,
    *,
    wrap_bits: int | None = None,
    gap_factor: float = 3.0,
) -> Deltas:
    """Turn cumulative samples into per-interval deltas.

    Parameters
    ----------
    series : array of int
        Series code of each sample (e.g. a factorized (target, metric) key).
        Samples of one series must be in time order in the input; series may
        interleave.
    t : array of float
        Sample time. [s]
    value : array of float or int
        Cumulative counter value.
    wrap_bits : int, optional
        Counter width when it can wrap (32 for ``/proc/diskstats`` fields on
        32-bit kernels, 64 otherwise); None treats every drop as a reset.
    gap_factor : float, default 3.0
        An interval longer than this many median intervals of its series is
        marked ``gap``.

    Returns
    -------
    Deltas
        One entry per sample that has a predecessor in its series.

    Examples
    --------
    >>> d = deltas(np.zeros(5, int), np.arange(5.0), np.array([0, 10, 30, 5, 15]))
    >>> d.delta.tolist(), d.quality_labels().tolist()
    ([10.0, 20.0, 5.0, 10.0], ['ok', 'ok', 'reset', 'ok'])
    """
    series = np.asarray(series)
    t = np.asarray(t, dtype=np.float64)
    v = np.asarray(value)
    n = len(t)
    empty = np.empty(0)
    if n < 2:
        return Deltas(np.empty(0, np.int64), empty, empty, np.empty(0, np.int8), None)
    order = np.argsort(series, kind="stable")
    s_o, t_o = series[order], t[order]
    v_o = v[order].astype(np.float64) if v.dtype.kind == "f" else v[order]
    same = s_o[1:] == s_o[:-1]
    dt = t_o[1:] - t_o[:-1]
    bad = same & ~(dt > 0)
    backwards = int(order[1:][bad].min()) if bad.any() else None
    idx = np.flatnonzero(same)
    end = idx + 1
    prev_v, cur_v = v_o[idx], v_o[end]
    if v_o.dtype.kind in "iu":
        raw = cur_v.astype(np.float64) - prev_v.astype(np.float64)
        # exact integer difference where it fits, for large 64-bit counters
        exact = cur_v >= prev_v
        raw[exact] = (cur_v[exact] - prev_v[exact]).astype(np.float64)
    else:
        raw = cur_v - prev_v
    quality = np.zeros(len(idx), np.int8)
    delta = raw.astype(np.float64)
    drop = raw < 0
    if drop.any():
        if wrap_bits is not None:
            top = float(2**wrap_bits)
            wrapped = cur_v.astype(np.float64) + top - prev_v.astype(np.float64)
            wrap = drop & (wrapped >= 0) & (wrapped < top / 4)
            delta[wrap] = wrapped[wrap]
            quality[wrap] = WRAP
            reset = drop & ~wrap
        else:
            reset = drop
        delta[reset] = np.maximum(cur_v[reset].astype(np.float64), 0.0)
        quality[reset] = RESET
    interval = dt[idx]
    quality = mark_gaps(s_o[end], interval, quality, gap_factor=gap_factor)
    return Deltas(order[end].astype(np.int64), delta, interval, quality, backwards)


def series_median(codes: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Median of ``x`` within each series, broadcast back to every element.

    Parameters
    ----------
    codes : array of int
        Series code of each element.
    x : array of float
        Values.

    Returns
    -------
    numpy.ndarray of float64
        For each element, the median of ``x`` over the elements of its series.

    Examples
    --------
    >>> series_median(np.array([0, 1, 0, 0, 1]), np.array([1.0, 5.0, 3.0, 2.0, 7.0])).tolist()
    [2.0, 6.0, 2.0, 2.0, 6.0]
    """
    codes = np.asarray(codes)
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x.copy()
    order = np.lexsort((x, codes))
    c_o, x_o = codes[order], x[order]
    starts = np.flatnonzero(np.r_[True, c_o[1:] != c_o[:-1]])
    counts = np.diff(np.r_[starts, len(c_o)])
    lo = starts + (counts - 1) // 2
    hi = starts + counts // 2
    med = (x_o[lo] + x_o[hi]) / 2.0
    out = np.empty_like(x)
    out[order] = np.repeat(med, counts)
    return out


def mark_gaps(
    codes: np.ndarray, interval_s: np.ndarray, quality: np.ndarray, *, gap_factor: float = 3.0
) -> np.ndarray:
    """Mark intervals longer than ``gap_factor`` median intervals of their series.

    Parameters
    ----------
    codes : array of int
        Series code of each interval.
    interval_s : array of float
        Interval length. [s]
    quality : array of int8
        Codes into :data:`QUALITY` before gaps are considered (ok, reset or wrap).
    gap_factor : float, default 3.0
        Threshold in median intervals of the series.

    Returns
    -------
    numpy.ndarray of int8
        ``quality`` with ok → gap, reset → gap_reset, wrap → gap_wrap on long
        intervals.

    Examples
    --------
    >>> iv = np.array([5.0, 5, 5, 50, 50])
    >>> QUALITY[mark_gaps(np.zeros(5, int), iv, np.array([0, 1, 0, 0, 1], np.int8))].tolist()
    ['ok', 'reset', 'ok', 'gap', 'gap_reset']
    """
    quality = np.asarray(quality, dtype=np.int8).copy()
    gap = np.asarray(interval_s) > gap_factor * series_median(codes, interval_s)
    to = np.array([GAP, GAP_RESET, GAP_WRAP, GAP, GAP_RESET, GAP_WRAP], np.int8)
    quality[gap] = to[quality[gap]]
    return quality
