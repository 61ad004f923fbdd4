"""Burst and idle phases of a throughput series (Carns et al. 2011, section 4).

Carns et al. (2011, section 4, Fig. 7 and Table III) measured how bursty the
I/O of a whole file system is, from iostat samples of the combined read and
write throughput over one-minute intervals:

- :func:`throughput_cdf` -- the CDF of throughput as a fraction of peak, by
  share of time (their Fig. 7);
- :func:`share_below` -- the share of time below a fraction of peak ("for 98%
  of the time, the I/O system was utilized at less than 33% of peak");
- :func:`idle_table` -- their Table III: idle periods (throughput below 5% of
  peak for consecutive intervals) counted by duration bucket, with their
  minutes and percentage of total time; ``strict=True`` gives their stricter
  variant (no activity at all);
- :func:`segment` -- burst / idle / gap phases with minimum durations;
- :func:`series` and :func:`aggregate` -- the aggregated rate series, summed
  over targets and metrics, from a store or a
  :func:`iochar.analyze.throughput.throughput` table.

Input series
------------
Every analysis takes either a :class:`pandas.Series` of rates (amount per
second, e.g. bytes/s) indexed by interval-end times -- a ``DatetimeIndex`` or
a numeric index of seconds -- or the DataFrame returned by
:func:`iochar.analyze.throughput.throughput`, which is summed over all its
targets and metrics first (:func:`aggregate`).

Each sample covers the time since the previous sample; the first sample
covers the nominal sampling interval (``sample_s``, else
``series.evidence["interval_s"]``, else the median spacing). When two samples
are more than 1.5 nominal intervals apart, the later one covers one nominal
interval and the rest is a **gap**.

Gaps are never idle
-------------------
Time without a measurement is a gap: missing samples (see above), NaN
values, and intervals flagged in ``counters`` (reset, wrap, gap) or covered
by only some of the targets. Gap time counts neither as idle nor as busy: it
is left out of the observed time the shares are relative to, splits idle
periods in two, and is reported as ``gap_s`` in every result. Idle periods
that touch a gap or an end of the series are counted in
``evidence["censored_periods"]`` (their true length may be longer).

Peak
----
Carns et al. state fractions of the *observed* peak (35,890 MiB/s, the
highest one-minute total), not of the theoretical 78 GiB/s, so the default
peak is the observed maximum of the analysed series. Pass ``peak=`` to use a
theoretical or benchmarked peak instead; every result records the peak used
and where it came from.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from iochar._validation import check_choice, check_real
from iochar.errors import ParameterError
from iochar.result import Column, Result, Table, evidence_of

__all__ = [
    "IDLE_BUCKETS",
    "ShareBelowResult",
    "aggregate",
    "idle_table",
    "segment",
    "series",
    "share_below",
    "throughput_cdf",
]

#: Carns et al. 2011, Table III duration buckets: (label, low, high) in minutes.
#: A period of ``d`` minutes falls in the bucket with ``low < d <= high``; with
#: one-minute intervals ``d`` is a whole number and the buckets are exactly
#: 1, 2-5, 6-10, ... minutes.
IDLE_BUCKETS: tuple[tuple[str, float, float], ...] = (
    ("1", 0.0, 1.0),
    ("2-5", 1.0, 5.0),
    ("6-10", 5.0, 10.0),
    ("11-20", 10.0, 20.0),
    ("21-30", 20.0, 30.0),
    ("31-40", 30.0, 40.0),
    ("41-50", 40.0, 50.0),
    ("51-60", 50.0, 60.0),
    (">60", 60.0, math.inf),
)

#: Two samples further apart than this many nominal intervals leave a gap.
GAP_FACTOR = 1.5
#: Space between samples shorter than this many nominal intervals is not a gap.
HOLE_TOLERANCE = 1e-3
#: A throughput() row covering less than this share of its interval is incomplete.
MIN_COVERAGE = 0.9

_GAP, _IDLE, _BURST = np.int8(0), np.int8(1), np.int8(2)
_STATE_NAMES = np.array(["gap", "idle", "burst"], dtype=object)
_EPS = 1e-9


# --------------------------------------------------------------------------- validation


def _sample_s(value, caller: str) -> float | None:
    return check_real(
        value,
        "sample_s",
        caller,
        "a positive number of seconds or None",
        low=0.0,
        low_open=True,
        none=True,
    )


# --------------------------------------------------------------------------- timeline


@dataclass(frozen=True)
class _Timeline:
    """Contiguous pieces of time: samples (or bins) and the holes between them."""

    t0: np.ndarray  # piece start [s], relative to ``origin``
    t1: np.ndarray  # piece end [s]
    rate: np.ndarray  # amount per second; NaN = gap
    sample: np.ndarray  # bool: a sample or bin (False: a hole between samples)
    origin: int | float  # ns since the epoch (datetime index) or seconds (numeric)
    tz: object  # tz of a DatetimeIndex, or None
    is_datetime: bool
    sample_s: float  # nominal interval [s]

    @property
    def dur(self) -> np.ndarray:
        return self.t1 - self.t0

    @property
    def valid(self) -> np.ndarray:
        return ~np.isnan(self.rate)

    def observed_s(self) -> float:
        return float(self.dur[self.valid].sum())

    def span_s(self) -> float:
        return float(self.t1[-1] - self.t0[0])

    def times(self, t: np.ndarray):
        """Relative seconds as the input's time type (Timestamps or seconds)."""
        if not self.is_datetime:
            return np.asarray(t, dtype=float) + self.origin
        ns = self.origin + np.round(np.asarray(t, dtype=float) * 1e9).astype(np.int64)
        out = pd.to_datetime(ns, unit="ns")
        if self.tz is not None:
            out = out.tz_localize("UTC").tz_convert(self.tz)
        return out


def _frame_parts(df: pd.DataFrame, caller: str) -> tuple[pd.Index, np.ndarray, np.ndarray | None]:
    """A throughput() table summed per ts: (ts, rate with NaN for gaps, width [s])."""
    missing = [c for c in ("ts", "rate_per_s") if c not in df.columns]
    if missing:
        raise ParameterError(
            "series",
            caller,
            "a Series of rates or a throughput() DataFrame with columns ts, rate_per_s",
            f"DataFrame without {missing}",
        )
    rate = pd.to_numeric(df["rate_per_s"], errors="coerce").to_numpy(float)
    work = pd.DataFrame({"ts": df["ts"].to_numpy(), "rate": rate})
    bad = np.isnan(rate)
    if "flagged" in df.columns:
        bad |= df["flagged"].fillna(True).to_numpy(bool)
    work["bad"] = bad
    has_width = "covered_s" in df.columns
    if has_width:
        covered = pd.to_numeric(df["covered_s"], errors="coerce").to_numpy(float)
        amount = (
            pd.to_numeric(df["amount"], errors="coerce").to_numpy(float)
            if "amount" in df.columns
            else rate * covered
        )
        # raw samples: rate = amount / covered_s; bins: rate = amount / bin_s for every
        # row, so a bin's width is known from any active row, idle bins included
        pos = rate > 0
        ratio = amount[pos] / rate[pos]
        binned = bool(np.any(np.abs(ratio - covered[pos]) > 1e-6 * np.abs(covered[pos])))
        width = np.full(len(rate), float(np.median(ratio))) if binned else covered
        work["covered"], work["width"] = covered, width
    g = work.groupby("ts", sort=True)
    out = g.agg(rate=("rate", "sum"), bad=("bad", "any"), n=("rate", "size"))
    keys = [c for c in ("target", "metric") if c in df.columns]
    if keys:
        pairs = len(df[keys].drop_duplicates())
        out["bad"] |= out["n"] < pairs  # some target or metric has no sample here
    width = None
    if has_width:
        wid = g["width"].max()
        out["bad"] |= g["covered"].min() < MIN_COVERAGE * wid
        width = wid.to_numpy(float)
    r = out["rate"].to_numpy(float, copy=True)
    r[out["bad"].to_numpy(bool)] = np.nan
    return out.index, r, width


def _prepare(obj, *, sample_s: float | None, caller: str) -> _Timeline:
    width = None
    if isinstance(obj, pd.DataFrame):
        index, values, width = _frame_parts(obj, caller)
        ev_interval = evidence_of(obj).get("interval_s")
    elif isinstance(obj, pd.Series):
        index = obj.index
        if not (pd.api.types.is_numeric_dtype(obj.dtype) or obj.dtype == object):
            raise ParameterError("series", caller, "a Series of numeric rates", str(obj.dtype))
        try:
            values = obj.to_numpy(dtype=float, na_value=np.nan)
        except (TypeError, ValueError) as exc:
            raise ParameterError(
                "series", caller, "a Series of numeric rates", str(obj.dtype)
            ) from exc
        ev_interval = evidence_of(obj).get("interval_s")
    else:
        raise ParameterError(
            "series",
            caller,
            "a pandas Series of rates indexed by time, or a throughput() DataFrame",
            type(obj).__name__,
        )
    n = len(values)
    if n == 0:
        raise ParameterError("series", caller, "a non-empty series", "an empty series")
    tz = None
    if isinstance(index, pd.DatetimeIndex) or pd.api.types.is_datetime64_any_dtype(index):
        index = pd.DatetimeIndex(index)
        if index.hasnans:
            raise ParameterError("series", caller, "timestamps without NaT", "NaT in the index")
        tz = index.tz
        ns = index.as_unit("ns").asi8
        origin: int | float = int(ns[0])
        t_end = (ns - ns[0]) / 1e9
        is_dt = True
    elif isinstance(index, pd.TimedeltaIndex) or pd.api.types.is_numeric_dtype(index):
        secs = (
            index.total_seconds().to_numpy(float)
            if isinstance(index, pd.TimedeltaIndex)
            else np.asarray(index, dtype=float)
        )
        if not np.isfinite(secs).all():
            raise ParameterError(
                "series", caller, "finite time stamps [s]", "NaN or inf in the index"
            )
        origin, t_end, is_dt = float(secs[0]), secs - secs[0], False
    else:
        raise ParameterError(
            "series",
            caller,
            "a series indexed by timestamps (DatetimeIndex) or by seconds (numeric index)",
            type(index).__name__,
        )
    d = np.diff(t_end)
    if n > 1 and not (d > 0).all():
        i = int(np.flatnonzero(~(d > 0))[0])
        raise ParameterError(
            "series",
            caller,
            "a series whose timestamps strictly increase (sort_index(), drop duplicates)",
            f"{index[i + 1]} after {index[i]}",
        )
    finite = values[~np.isnan(values)]
    if len(finite) == 0:
        raise ParameterError(
            "series", caller, "a series with at least one non-NaN rate", "only NaN (all gaps)"
        )
    if not np.isfinite(finite).all() or (finite < 0).any():
        bad = finite[~np.isfinite(finite) | (finite < 0)][0]
        raise ParameterError("series", caller, "rates that are finite and >= 0", float(bad))
    nominal = sample_s
    if nominal is None and ev_interval is not None:
        nominal = check_real(
            ev_interval,
            "series.evidence['interval_s']",
            caller,
            "a positive number of seconds",
            low=0.0,
            low_open=True,
        )
    if nominal is None and width is not None:
        nominal = float(np.median(width))
    if nominal is None:
        if n < 2:
            raise ParameterError(
                "sample_s",
                caller,
                "given (or series.evidence['interval_s'] set) when the series has one sample",
                None,
            )
        nominal = float(np.median(d))
    if width is None:
        dur = np.empty(n)
        dur[0] = nominal
        dur[1:] = np.where(d <= GAP_FACTOR * nominal, d, nominal)
    else:
        dur = np.where(np.isfinite(width) & (width > 0), width, nominal)
    start = t_end - dur
    if n > 1:
        # never overlap the previous sample; holes shorter than HOLE_TOLERANCE x nominal
        # are time-stamp rounding (microsecond ts against float intervals), not lost data
        space = start[1:] - t_end[:-1]
        start[1:] = np.where(space > HOLE_TOLERANCE * nominal, start[1:], t_end[:-1])
    hole = np.flatnonzero(start[1:] > t_end[:-1]) + 1
    m = n + len(hole)
    pos_sample = np.arange(n)
    if len(hole):
        pos_sample += np.searchsorted(hole, pos_sample, side="right")
    pos_hole = hole + np.arange(len(hole))
    t0, t1 = np.empty(m), np.empty(m)
    rate = np.full(m, np.nan)
    sample = np.zeros(m, dtype=bool)
    t0[pos_sample], t1[pos_sample], rate[pos_sample], sample[pos_sample] = (
        start,
        t_end,
        values,
        True,
    )
    t0[pos_hole], t1[pos_hole] = t_end[hole - 1], start[hole]
    return _Timeline(t0, t1, rate, sample, origin, tz, is_dt, float(nominal))


def _rebin(tl: _Timeline, interval_s: float | None, caller: str) -> _Timeline:
    """Sum the timeline into epoch-aligned bins of ``interval_s`` (None: unchanged)."""
    if interval_s is None:
        return tl
    width = check_real(
        interval_s,
        "interval_s",
        caller,
        "a positive number of seconds or None",
        low=0.0,
        low_open=True,
    )
    if width < tl.sample_s * (1 - 1e-9):
        raise ParameterError(
            "interval_s",
            caller,
            f"at least the sampling interval ({tl.sample_s:g} s) or None",
            interval_s,
        )
    if tl.is_datetime:
        w_ns = round(width * 1e9)
        off = (tl.origin % w_ns) / 1e9
    else:
        off = math.fmod(tl.origin, width)
        off = off + width if off < 0 else off
    a, b = (tl.t0 + off) / width, (tl.t1 + off) / width  # in bin units from an aligned base
    tol = max(_EPS, HOLE_TOLERANCE * tl.sample_s / width)  # time-stamp rounding, in bins
    k_lo = int(math.floor(a[0] + tol)) + 1  # bin k covers (k-1, k]
    k_hi = int(math.ceil(b[-1] - tol))
    nb = k_hi - k_lo + 1
    valid = tl.valid
    k_end = np.clip(np.ceil(b - _EPS).astype(np.int64) - k_lo, 0, nb - 1)
    amount = np.bincount(k_end[valid], weights=(tl.rate * tl.dur)[valid], minlength=nb)
    has = np.bincount(k_end[valid], minlength=nb) > 0
    # bins touched by a gap piece, by a difference array (no loop over pieces)
    ga, gb = a[~valid], b[~valid]
    first = np.clip(np.floor(ga + tol).astype(np.int64) + 1 - k_lo, 0, nb)
    last = np.clip(np.ceil(gb - tol).astype(np.int64) - k_lo, -1, nb - 1)
    first, last = first[last >= first], last[last >= first]  # pieces shorter than tol
    mark = np.zeros(nb + 1, dtype=np.int64)
    np.add.at(mark, first, 1)
    np.add.at(mark, last + 1, -1)
    gap = np.cumsum(mark[:-1]) > 0
    gap[0] |= a[0] - (k_lo - 1) > tol  # the series starts inside its first bin
    gap[-1] |= k_hi - b[-1] > tol  # ... or ends inside its last
    rate = amount / width
    rate[gap | ~has] = np.nan
    if np.isnan(rate).all():
        raise ParameterError(
            "series",
            caller,
            f"a series with at least one complete {width:g}-s interval (interval_s)",
            "only NaN (all gaps) after re-binning",
        )
    k = np.arange(k_lo, k_hi + 1, dtype=float)
    t0 = (k - 1) * width - off
    return _Timeline(
        t0, t0 + width, rate, np.ones(nb, bool), tl.origin, tl.tz, tl.is_datetime, width
    )


def _peak(tl: _Timeline, peak, caller: str, *, needed: bool = True) -> tuple[float, str]:
    observed = float(np.nanmax(tl.rate))
    if peak is None:
        if observed <= 0 and needed:
            raise ParameterError(
                "peak",
                caller,
                "given when every rate of the series is 0 (no observed peak to be relative to)",
                None,
            )
        return observed, "observed maximum"
    p = check_real(
        peak, "peak", caller, "a positive rate or None", low=0.0, low_open=True, none=True
    )
    if p < observed * (1 - 1e-12):
        raise ParameterError(
            "peak", caller, f"at least the observed maximum rate ({observed:g}/s) or None", peak
        )
    return p, "given"


def _states(tl: _Timeline, threshold: float) -> np.ndarray:
    """gap / idle / burst per piece: burst when rate >= threshold and rate > 0."""
    st = np.full(len(tl.rate), _GAP)
    ok = tl.valid
    r = tl.rate[ok]
    st[ok] = np.where((r >= threshold) & (r > 0), _BURST, _IDLE)
    return st


def _runs(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Run-length encoding: start and end (exclusive) piece index of each run."""
    change = np.flatnonzero(state[1:] != state[:-1]) + 1
    return np.r_[0, change], np.r_[change, len(state)]


def _merge(st: np.ndarray, starts: np.ndarray, ends: np.ndarray):
    keep = np.r_[True, st[1:] != st[:-1]]
    new_starts = starts[keep]
    return st[keep], new_starts, np.r_[new_starts[1:], ends[-1]]


# --------------------------------------------------------------------------- public API


def aggregate(df: pd.DataFrame) -> Column:
    """Sum a throughput table over its targets and metrics into one rate series.

    Carns et al. (2011, section 4) study the combined read and write
    throughput of the whole file system; this adds the ``rate_per_s`` of all
    rows that share a ``ts``.

    Parameters
    ----------
    df : pandas.DataFrame
        The result of :func:`iochar.analyze.throughput.throughput` (columns
        ``ts`` and ``rate_per_s``; ``flagged``, ``covered_s``, ``amount``,
        ``target`` and ``metric`` are used when present). Filter it first to
        aggregate only some targets or metrics.

    Returns
    -------
    iochar.result.Column
        Named ``rate_per_s`` [amount/s], indexed by ``ts`` ascending. NaN
        where the time holds a gap: any row is ``flagged`` (reset, wrap, gap),
        a (target, metric) pair has no row at that ``ts``, or a row covers
        less than 90% of its interval (``covered_s`` against the sample's
        interval, or against the bin width when ``df`` is binned; the width
        is read from ``amount / rate_per_s``). ``evidence``: ``interval_s`` (the median
        interval width [s]), ``gaps`` (number of NaN samples), ``targets``
        and ``metrics`` (sorted lists, when the columns exist).

    Raises
    ------
    ParameterError
        ``df`` is not a DataFrame with columns ``ts`` and ``rate_per_s``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"target": ["a", "b", "a", "b"], "metric": "read_bytes",
    ...                    "ts": pd.to_datetime([60, 60, 120, 120], unit="s"),
    ...                    "rate_per_s": [1.0, 2.0, 3.0, 4.0], "flagged": False})
    >>> aggregate(df).tolist()
    [3.0, 7.0]
    """
    if not isinstance(df, pd.DataFrame):
        raise ParameterError("df", "aggregate", "a throughput() DataFrame", type(df).__name__)
    index, rate, width = _frame_parts(df, "aggregate")
    ev: dict = {}
    if width is not None and len(width):
        ev["interval_s"] = float(np.median(width))
    elif len(index) > 1:
        ev["interval_s"] = float(
            np.median(np.diff(pd.Index(index).to_numpy()) / np.timedelta64(1, "s"))
            if pd.api.types.is_datetime64_any_dtype(index)
            else np.median(np.diff(np.asarray(index, dtype=float)))
        )
    ev["gaps"] = int(np.isnan(rate).sum())
    for col in ("target", "metric"):
        if col in df.columns:
            ev[col + "s"] = sorted(map(str, df[col].unique()))
    return Column(rate, index=pd.Index(index, name="ts"), name="rate_per_s", evidence=ev)


def series(
    store,
    *,
    metrics: Sequence[str] = ("read_bytes", "write_bytes"),
    targets: Sequence[str] | None = None,
    bin_s: float | None = 60.0,
    source_id: int | None = None,
) -> Column:
    """The aggregated rate of some counters over time, ready for burst analysis.

    :func:`iochar.analyze.throughput.throughput` followed by
    :func:`aggregate`: by default the combined read and write throughput of
    all targets in one-minute bins, as in Carns et al. (2011, section 4).

    Parameters
    ----------
    store : iochar.store.Store
        The database.
    metrics : sequence of str, default ("read_bytes", "write_bytes")
        ``counters.metric`` values to add up.
    targets : sequence of str, optional
        Only these targets (devices, OSTs); all when None.
    bin_s : float or None, default 60.0
        Bin width [s] (see ``throughput``); None keeps the samples' own
        intervals (then all targets should share their time stamps).
    source_id : int, optional
        Only counters from this input.

    Returns
    -------
    iochar.result.Column
        ``rate_per_s`` [amount/s] indexed by bin end (UTC), NaN in gaps, as
        from :func:`aggregate`; ``evidence["interval_s"]`` is ``bin_s`` when
        given. Empty when no counters match.

    Raises
    ------
    ParameterError
        Bad ``metrics`` or ``bin_s`` (from ``throughput``).
    """
    from iochar.analyze.throughput import throughput

    df = throughput(store, metrics=metrics, targets=targets, bin_s=bin_s, source_id=source_id)
    if df.empty:
        out = Column([], index=pd.DatetimeIndex([], name="ts"), name="rate_per_s", dtype=float)
    else:
        out = aggregate(df)
    if bin_s is not None:
        out.evidence["interval_s"] = float(bin_s)
    out.evidence["metrics"] = list(metrics)
    out.params = {
        "metrics": list(metrics),
        "targets": None if targets is None else list(targets),
        "bin_s": bin_s,
        "source_id": source_id,
    }
    return out


def segment(
    series: pd.Series | pd.DataFrame,
    *,
    threshold: float = 0.05,
    min_burst_s: float = 0.0,
    min_idle_s: float = 0.0,
    peak: float | None = None,
    sample_s: float | None = None,
) -> Table:
    """Split a throughput series into burst, idle and gap phases.

    A sample is *burst* when its rate is at least ``threshold`` x peak (and
    above 0), *idle* otherwise, and *gap* when it has no measurement (see
    the module notes). With the default threshold, idle phases are exactly
    the idle periods of Carns et al. (2011, section 4, Table III).

    Minimum durations are applied once each, in this order: an idle run
    shorter than ``min_idle_s`` between two burst runs joins them; then a
    burst run shorter than ``min_burst_s`` becomes idle. Gap runs are never
    relabelled and always split phases.

    Parameters
    ----------
    series : pandas.Series or pandas.DataFrame
        Rates [amount/s] indexed by interval end (datetimes or seconds), or a
        :func:`~iochar.analyze.throughput.throughput` table (summed over its
        targets and metrics).
    threshold : float, default 0.05
        Burst threshold as a fraction of ``peak``, in [0, 1]. 0 means any
        activity is a burst (idle = exactly zero, Carns' strict variant).
    min_burst_s : float, default 0.0
        Shortest burst phase [s].
    min_idle_s : float, default 0.0
        Shortest idle lull inside a burst [s].
    peak : float, optional
        Rate [amount/s] the threshold is relative to; default the observed
        maximum. Must not be below the observed maximum.
    sample_s : float, optional
        Nominal sampling interval [s]; default ``series.evidence["interval_s"]``
        or the median spacing of the samples.

    Returns
    -------
    iochar.result.Table
        One row per phase, in time order, tiling the series from the start of
        its first sample to its last time stamp without overlap: ``state``
        ("burst", "idle", "gap"), ``start``, ``end`` (the input's time type),
        ``duration_s`` [s], ``bytes`` (rate x time, in the series' amount
        unit; NaN for gaps), ``mean_per_s`` (``bytes / duration_s``),
        ``peak_per_s`` (highest sample rate), ``n_samples`` (samples in the
        phase; holes between samples are not samples) and ``n_relabeled``
        (samples whose own state differs from the phase's, by the minimum
        durations). ``evidence`` holds the evidence: ``threshold``,
        ``threshold_per_s`` (absolute), ``peak_per_s``, ``peak_source``,
        ``sample_s``, ``min_burst_s``, ``min_idle_s``, ``observed_s`` and
        ``gap_s`` [s].

    Raises
    ------
    ParameterError
        Bad input series (empty, unsorted or duplicate times, negative or
        infinite rates, only NaN, one sample without ``sample_s``), a
        ``threshold`` outside [0, 1], negative minimum durations, a ``peak``
        below the observed maximum, or an all-zero series with ``threshold >
        0`` and no ``peak``.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.Series([0.0, 100, 90, 0, 0, 0], index=[60, 120, 180, 240, 300, 360])
    >>> segment(s)[["state", "start", "end", "bytes"]]
       state  start    end    bytes
    0   idle    0.0   60.0      0.0
    1  burst   60.0  180.0  11400.0
    2   idle  180.0  360.0      0.0
    """
    caller = "segment"
    thr = check_real(
        threshold, "threshold", caller, "a fraction in [0, 1]", low=0.0, high=1, low_open=False
    )
    min_burst = check_real(
        min_burst_s, "min_burst_s", caller, "a number of seconds >= 0", low=0.0, low_open=False
    )
    min_idle = check_real(
        min_idle_s, "min_idle_s", caller, "a number of seconds >= 0", low=0.0, low_open=False
    )
    tl = _prepare(series, sample_s=_sample_s(sample_s, caller), caller=caller)
    pk, source = _peak(tl, peak, caller, needed=thr > 0)
    raw = _states(tl, thr * pk)
    starts, ends = _runs(raw)
    st = raw[starts]
    dur = tl.t1[ends - 1] - tl.t0[starts]
    if min_idle > 0 and len(st) >= 3:
        lull = np.zeros(len(st), dtype=bool)
        lull[1:-1] = (
            (st[1:-1] == _IDLE) & (dur[1:-1] < min_idle) & (st[:-2] == _BURST) & (st[2:] == _BURST)
        )
        st, starts, ends = _merge(np.where(lull, _BURST, st), starts, ends)
        dur = tl.t1[ends - 1] - tl.t0[starts]
    if min_burst > 0:
        short = (st == _BURST) & (dur < min_burst)
        st, starts, ends = _merge(np.where(short, _IDLE, st), starts, ends)
        dur = tl.t1[ends - 1] - tl.t0[starts]
    amount = np.where(tl.valid, tl.rate * tl.dur, 0.0)
    nbytes = np.add.reduceat(amount, starts)
    peak_rate = np.fmax.reduceat(tl.rate, starts)
    n_samples = np.add.reduceat(tl.sample.astype(np.int64), starts)
    relabeled = np.add.reduceat((raw != np.repeat(st, ends - starts)).astype(np.int64), starts)
    gap = st == _GAP
    nbytes[gap] = np.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = nbytes / dur
    out = pd.DataFrame(
        {
            "state": _STATE_NAMES[st],
            "start": tl.times(tl.t0[starts]),
            "end": tl.times(tl.t1[ends - 1]),
            "duration_s": dur,
            "bytes": nbytes,
            "mean_per_s": mean,
            "peak_per_s": peak_rate,
            "n_samples": n_samples,
            "n_relabeled": relabeled,
        }
    )
    out["state"] = out["state"].astype(str)
    observed = tl.observed_s()
    ev = dict(
        threshold=thr,
        threshold_per_s=thr * pk,
        peak_per_s=pk,
        peak_source=source,
        sample_s=tl.sample_s,
        min_burst_s=min_burst,
        min_idle_s=min_idle,
        observed_s=observed,
        gap_s=tl.span_s() - observed,
    )
    params = dict(
        threshold=threshold,
        min_burst_s=min_burst_s,
        min_idle_s=min_idle_s,
        peak=peak,
        sample_s=sample_s,
    )
    return Table(out, evidence=ev, params=params)


def throughput_cdf(
    series: pd.Series | pd.DataFrame,
    *,
    peak: float | None = None,
    interval_s: float | None = None,
    points: int | None = None,
    sample_s: float | None = None,
) -> Table:
    """Cumulative share of time at or below each throughput (Carns et al. 2011, Fig. 7).

    Time-weighted over the observed (non-gap) time: each sample counts for
    the time it covers, so one-minute samples count equally, as in the paper.

    Parameters
    ----------
    series : pandas.Series or pandas.DataFrame
        Rates [amount/s] indexed by interval end, or a throughput() table.
    peak : float, optional
        Rate [amount/s] the fractions are relative to; default the observed
        maximum (Carns et al. used the observed 35,890 MiB/s).
    interval_s : float, optional
        Re-bin to epoch-aligned intervals of this width [s] first (60 for
        Carns' one-minute view); bins touched by a gap or only partly
        covered are gaps. Default: the samples as they are.
    points : int, optional
        Evaluate at this many evenly spaced fractions of peak from 0 to 1
        (for charts). Default: one row per distinct observed rate.
    sample_s : float, optional
        Nominal sampling interval [s] of the input (see :func:`segment`).

    Returns
    -------
    iochar.result.Table
        Columns ``rate_per_s`` [amount/s], ``fraction_of_peak`` and
        ``share_of_time`` (fraction of observed time with a rate at or below
        it), ascending. ``evidence``: ``peak_per_s``, ``peak_source``,
        ``interval_s`` (the interval analysed [s]), ``observed_s``, ``gap_s``.

    Raises
    ------
    ParameterError
        Bad input series (see :func:`segment`), ``points`` < 2, an
        ``interval_s`` shorter than the sampling interval, or an all-zero
        series without ``peak``.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.Series([0.0, 10, 10, 40], index=[1, 2, 3, 4])
    >>> throughput_cdf(s)
       rate_per_s  fraction_of_peak  share_of_time
    0         0.0              0.00           0.25
    1        10.0              0.25           0.75
    2        40.0              1.00           1.00
    """
    caller = "throughput_cdf"
    if points is not None and (
        isinstance(points, bool) or not isinstance(points, numbers.Integral) or points < 2
    ):
        raise ParameterError("points", caller, "an int >= 2 or None", points)
    tl = _rebin(
        _prepare(series, sample_s=_sample_s(sample_s, caller), caller=caller), interval_s, caller
    )
    pk, source = _peak(tl, peak, caller)
    ok = tl.valid
    r, w = tl.rate[ok], tl.dur[ok]
    order = np.argsort(r, kind="stable")
    r, w = r[order], w[order]
    cum = np.cumsum(w)
    total = cum[-1]
    if points is None:
        last = np.r_[r[1:] != r[:-1], True]
        rate, share = r[last], cum[last] / total
    else:
        rate = np.linspace(0.0, 1.0, int(points)) * pk
        k = np.searchsorted(r, rate, side="right")
        share = np.where(k > 0, cum[np.maximum(k - 1, 0)], 0.0) / total
    ev = dict(
        peak_per_s=pk,
        peak_source=source,
        interval_s=tl.sample_s,
        observed_s=float(total),
        gap_s=tl.span_s() - float(total),
    )
    params = dict(peak=peak, interval_s=interval_s, points=points, sample_s=sample_s)
    return Table(
        {"rate_per_s": rate, "fraction_of_peak": rate / pk, "share_of_time": share},
        evidence=ev,
        params=params,
    )


@dataclass(frozen=True)
class ShareBelowResult(Result):
    """Share of observed time below a fraction of peak, with its evidence.

    Attributes
    ----------
    fraction : float
        The fraction of peak asked for.
    share : float
        Share of observed time with a rate strictly below
        ``threshold_per_s`` (Carns et al. 2011: 0.98 below 0.33).
    threshold_per_s : float
        ``fraction * peak_per_s`` [amount/s].
    peak_per_s : float
        The peak used [amount/s].
    peak_source : str
        "observed maximum" or "given".
    below_s : float
        Time below the threshold [s].
    observed_s : float
        Observed (non-gap) time [s], the denominator of ``share``.
    gap_s : float
        Time without a measurement, left out [s].
    interval_s : float
        Interval analysed [s] (the sampling interval, or the re-binned width).
    params : dict
        The parameters as used (see :class:`iochar.result.Result`).
    sql : str or None
        The SQL that read the store, or None.
    """

    fraction: float
    share: float
    threshold_per_s: float
    peak_per_s: float
    peak_source: str
    below_s: float
    observed_s: float
    gap_s: float
    interval_s: float


def share_below(
    series: pd.Series | pd.DataFrame,
    fraction: float = 0.33,
    *,
    peak: float | None = None,
    interval_s: float | None = None,
    sample_s: float | None = None,
) -> ShareBelowResult:
    """Share of time the throughput stayed below a fraction of peak.

    Carns et al. (2011, section 4): "For 98% of the time, the I/O system was
    utilized at less than 33% of peak I/O bandwidth."

    Parameters
    ----------
    series : pandas.Series or pandas.DataFrame
        Rates [amount/s] indexed by interval end, or a throughput() table.
    fraction : float, default 0.33
        Fraction of peak, in (0, 1]; the comparison is strict (rate <
        fraction x peak).
    peak : float, optional
        Rate [amount/s] the fraction is relative to; default the observed
        maximum.
    interval_s : float, optional
        Re-bin to intervals of this width [s] first (see
        :func:`throughput_cdf`).
    sample_s : float, optional
        Nominal sampling interval [s] of the input (see :func:`segment`).

    Returns
    -------
    ShareBelowResult
        The share and its evidence (threshold, peak, times).

    Raises
    ------
    ParameterError
        Bad input series (see :func:`segment`), ``fraction`` outside (0, 1],
        or an all-zero series without ``peak``.

    Examples
    --------
    >>> import pandas as pd
    >>> r = share_below(pd.Series([0.0, 10, 10, 40], index=[1, 2, 3, 4]), 0.5)
    >>> r.share, r.threshold_per_s
    (0.75, 20.0)
    """
    caller = "share_below"
    frac = check_real(
        fraction, "fraction", caller, "a fraction in (0, 1]", low=0.0, high=1.0, low_open=True
    )
    tl = _rebin(
        _prepare(series, sample_s=_sample_s(sample_s, caller), caller=caller), interval_s, caller
    )
    pk, source = _peak(tl, peak, caller)
    ok = tl.valid
    observed = float(tl.dur[ok].sum())
    below = float(tl.dur[ok][tl.rate[ok] < frac * pk].sum())
    return ShareBelowResult(
        fraction=frac,
        share=below / observed,
        threshold_per_s=frac * pk,
        peak_per_s=pk,
        peak_source=source,
        below_s=below,
        observed_s=observed,
        gap_s=tl.span_s() - observed,
        interval_s=tl.sample_s,
        params=dict(fraction=fraction, peak=peak, interval_s=interval_s, sample_s=sample_s),
    )


def idle_table(
    series: pd.Series | pd.DataFrame,
    *,
    idle_fraction: float = 0.05,
    strict: bool = False,
    interval_s: float | None = None,
    peak: float | None = None,
    total: str = "observed",
    sample_s: float | None = None,
) -> Table:
    """Idle periods by duration, in the layout of Carns et al. (2011), Table III.

    An idle period is a maximal run of consecutive intervals whose rate is
    below ``idle_fraction`` x peak (Carns: "less than 5% of peak for
    consecutive 60-second intervals"); with ``strict=True``, of intervals
    with no activity at all (rate exactly 0). Gaps are not idle and end a
    period.

    Parameters
    ----------
    series : pandas.Series or pandas.DataFrame
        Rates [amount/s] indexed by interval end, or a throughput() table.
    idle_fraction : float, default 0.05
        An interval is idle when its rate is strictly below this fraction of
        ``peak``, in (0, 1].
    strict : bool, default False
        Idle only when the rate is exactly 0 (Carns' "no disk activity was
        observed at all"); ``idle_fraction`` and ``peak`` are then unused.
    interval_s : float, optional
        Judge idleness on epoch-aligned intervals of this width [s] (60 for
        Carns' one-minute intervals): samples are summed into bins first, and
        a bin touched by a gap, or only partly covered, is a gap. Default:
        each sample is one interval.
    peak : float, optional
        Rate [amount/s] the fraction is relative to; default the observed
        maximum of the analysed intervals (as Carns et al. did).
    total : {"observed", "span"}, default "observed"
        Denominator of ``percent``: the observed (non-gap) time, or the whole
        span from first to last sample including gaps. Table III's
        percentages imply about 83,480 minutes (e.g. 30,935 min = 37.1%):
        the 62-day span less the 4 days of lost data, more than the 63,211
        one-minute intervals recorded -- "span" with the lost days removed.
    sample_s : float, optional
        Nominal sampling interval [s] of the input (see :func:`segment`).

    Returns
    -------
    iochar.result.Table
        Nine rows indexed by ``duration_min`` -- "1", "2-5", "6-10",
        "11-20", "21-30", "31-40", "41-50", "51-60", ">60" -- with columns
        ``count`` (idle periods), ``minutes`` (their summed duration [min])
        and ``percent`` (of total time [%]). A period of ``d`` minutes (its
        summed interval lengths / 60) goes in the bucket ``low < d <= high``
        of :data:`IDLE_BUCKETS`: with 60-s intervals ``d`` is a whole number
        and the buckets are Carns'; with 5-s samples a 90-s period is 1.5
        minutes, in "2-5". ``evidence`` holds the evidence and totals:
        ``interval_s`` (the interval analysed [s]), ``strict``,
        ``idle_fraction``, ``threshold_per_s``, ``peak_per_s``,
        ``peak_source``, ``total``, ``total_s``, ``observed_s``, ``gap_s``,
        ``span_s``, ``idle_s``, ``periods``, ``censored_periods`` (periods
        touching a gap or an end of the series), ``longest_s``,
        ``longest_start`` and ``longest_end`` (None without idle periods).

    Raises
    ------
    ParameterError
        Bad input series (see :func:`segment`), ``idle_fraction`` outside
        (0, 1], ``strict`` not a bool, an unknown ``total``, an
        ``interval_s`` shorter than the sampling interval, or an all-zero
        series (no peak) without ``peak`` and ``strict=False``.

    Notes
    -----
    Carns et al. used 60-s iostat intervals over 63,211 minutes: 169 idle
    periods over 60 minutes made 37.1% of the total time. For data sampled
    more finely, ``interval_s=60`` reproduces their method; the default
    keeps the finer resolution, which finds more, shorter periods.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.Series([100.0, 0, 0, 100, 1, 100], index=[60, 120, 180, 240, 300, 360])
    >>> t = idle_table(s)
    >>> t.loc[["1", "2-5"], ["count", "minutes"]].to_dict("index")
    {'1': {'count': 1, 'minutes': 1.0}, '2-5': {'count': 1, 'minutes': 2.0}}
    >>> round(float(t["percent"].sum()), 1), t.evidence["threshold_per_s"]
    (50.0, 5.0)
    """
    caller = "idle_table"
    if not isinstance(strict, bool | np.bool_):
        raise ParameterError("strict", caller, "a bool", strict)
    frac = check_real(
        idle_fraction,
        "idle_fraction",
        caller,
        "a fraction in (0, 1]",
        low=0.0,
        high=1.0,
        low_open=True,
    )
    check_choice(total, "total", caller, ("observed", "span"), "one of 'observed', 'span'")
    tl = _rebin(
        _prepare(series, sample_s=_sample_s(sample_s, caller), caller=caller), interval_s, caller
    )
    if strict:
        pk, source = _peak(tl, peak, caller, needed=False)
        thr = 0.0
    else:
        pk, source = _peak(tl, peak, caller)
        thr = frac * pk
    st = _states(tl, thr)
    starts, ends = _runs(st)
    idle = st[starts] == _IDLE
    s, e = starts[idle], ends[idle]
    dur = tl.t1[e - 1] - tl.t0[s]
    minutes = dur / 60.0
    highs = np.array([b[2] for b in IDLE_BUCKETS[:-1]])
    bucket = np.searchsorted(highs, np.round(minutes, 9), side="left")
    nb = len(IDLE_BUCKETS)
    count = np.bincount(bucket, minlength=nb)
    mins = np.bincount(bucket, weights=minutes, minlength=nb)
    observed, span = tl.observed_s(), tl.span_s()
    total_s = observed if total == "observed" else span
    table = pd.DataFrame(
        {"count": count.astype(np.int64), "minutes": mins, "percent": 100.0 * mins * 60 / total_s},
        index=pd.Index([b[0] for b in IDLE_BUCKETS], name="duration_min"),
    )
    ev: dict = {}
    before_gap = np.r_[True, st[:-1] == _GAP]  # the piece before each piece is a gap/edge
    after_gap = np.r_[st[1:] == _GAP, True]
    censored = int((before_gap[s] | after_gap[e - 1]).sum())
    longest = int(np.argmax(dur)) if len(dur) else None
    ev.update(
        interval_s=tl.sample_s,
        strict=bool(strict),
        idle_fraction=None if strict else frac,
        threshold_per_s=thr,
        peak_per_s=pk,
        peak_source=source,
        total=total,
        total_s=total_s,
        observed_s=observed,
        gap_s=span - observed,
        span_s=span,
        idle_s=float(dur.sum()),
        periods=int(len(dur)),
        censored_periods=censored,
        longest_s=float(dur[longest]) if longest is not None else None,
        longest_start=tl.times(tl.t0[s[longest : longest + 1]])[0] if longest is not None else None,
        longest_end=tl.times(tl.t1[e[longest : longest + 1] - 1])[0]
        if longest is not None
        else None,
    )
    params = dict(
        idle_fraction=idle_fraction,
        strict=strict,
        peak=peak,
        interval_s=interval_s,
        total=total,
        sample_s=sample_s,
    )
    return Table(table, evidence=ev, params=params)
