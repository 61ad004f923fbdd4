"""Throughput over time per target, from per-interval ``counters``.

Carns et al. 2011 (section 4) study device throughput as a time series per
storage target and aggregated; this module turns the store's per-interval
amounts into rates a chart or a burst analysis can use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from iochar._validation import check_int, check_real
from iochar.errors import ParameterError
from iochar.result import Result, Table

__all__ = ["throughput", "daily_profile", "DailyProfile", "same_system_inputs"]

_SQL = """
SELECT target, metric,
       time_bucket(to_microseconds(CAST($bin_us AS BIGINT)), ts - INTERVAL 1 MICROSECOND)
         + to_microseconds(CAST($bin_us AS BIGINT)) AS ts,
       sum(value) AS amount,
       sum(interval_s) AS covered_s,
       sum(value) / $bin_s AS rate_per_s,
       bool_or(quality IS DISTINCT FROM 'ok') AS flagged
FROM counters
WHERE list_contains($metrics, metric)
  AND ($targets IS NULL OR list_contains($targets, target))
  AND ($source IS NULL OR source_id = $source)
GROUP BY ALL
ORDER BY target, metric, ts
"""

_RAW_SQL = """
SELECT target, metric, ts, value AS amount, interval_s AS covered_s,
       value / interval_s AS rate_per_s, quality IS DISTINCT FROM 'ok' AS flagged
FROM counters
WHERE list_contains($metrics, metric)
  AND ($targets IS NULL OR list_contains($targets, target))
  AND ($source IS NULL OR source_id = $source)
  AND interval_s > 0
ORDER BY target, metric, ts
"""


def throughput(
    store,
    *,
    metrics: Sequence[str] = ("read_bytes", "write_bytes"),
    targets: Sequence[str] | None = None,
    bin_s: float | None = None,
    source_id: int | None = None,
) -> pd.DataFrame:
    """Per-target rate of each metric over time.

    Parameters
    ----------
    store : iochar.Store
        The database.
    metrics : sequence of str, default ("read_bytes", "write_bytes")
        ``counters.metric`` values to include.
    targets : sequence of str, optional
        Only these targets (devices, OSTs); all when None.
    bin_s : float, optional
        Re-bin to this width [s] (amounts summed per bin, rate = amount /
        bin_s; bins are aligned to the epoch and a sample falls wholly in the
        bin holding its interval end). None keeps each sample's own interval.
    source_id : int, optional
        Only counters from this input.

    Returns
    -------
    pandas.DataFrame
        Columns ``target``, ``metric``, ``ts`` (interval or bin end, UTC),
        ``amount`` (per interval or bin, in the metric's unit),
        ``covered_s`` (seconds of samples behind it [s]), ``rate_per_s``
        (amount per second) and ``flagged`` (evidence: the interval holds a
        counter reset, wrap or gap).

    Raises
    ------
    ParameterError
        ``bin_s`` not positive, or ``metrics`` empty.
    """
    if not metrics:
        raise ParameterError(
            "metrics", "throughput", "a non-empty sequence of metric names", metrics
        )
    params = {
        "metrics": list(metrics),
        "targets": list(targets) if targets is not None else None,
        "source": source_id,
    }
    if bin_s is None:
        return Table(store.sql(_RAW_SQL, params=params).df(), params=params, sql=_RAW_SQL)
    bin_s = check_real(
        bin_s, "bin_s", "throughput", "a positive number of seconds", low=0, low_open=True
    )
    params.update(bin_s=float(bin_s), bin_us=int(round(bin_s * 1e6)))
    return Table(store.sql(_SQL, params=params).df(), params=params, sql=_SQL)


# --------------------------------------------------------------------------- Fig. 9 of U&W

_INPUTS_SQL = """
SELECT c.source_id, any_value(s.kind) AS kind,
       list_sort(list_distinct(list(c.target))) AS targets,
       min(c.ts - to_microseconds(CAST(round(c.interval_s * 1e6) AS BIGINT))) AS first_t,
       max(c.ts) AS last_t,
       count(DISTINCT CAST(c.ts AS DATE)) AS days
FROM counters c JOIN sources s USING (source_id)
WHERE list_contains($metrics, c.metric)
  AND ($targets IS NULL OR list_contains($targets, c.target))
  AND c.interval_s > 0
GROUP BY c.source_id
ORDER BY c.source_id
"""

_BINS_SQL = """
WITH b AS (
  SELECT target, metric,
         time_bucket(to_microseconds(CAST($bin_us AS BIGINT)), ts - INTERVAL 1 MICROSECOND)
           AS bin_start,
         sum(value) AS amount, sum(interval_s) AS covered_s
  FROM counters
  WHERE list_contains($metrics, metric)
    AND list_contains($sources, source_id)
    AND ($targets IS NULL OR list_contains($targets, target))
    AND interval_s > 0 AND quality IS NOT DISTINCT FROM 'ok'
  GROUP BY ALL
)
SELECT metric, bin_start, sum(amount) AS amount, least(max(covered_s), $bin_s) AS covered_s,
       count(*) AS targets
FROM b GROUP BY ALL ORDER BY metric, bin_start
"""


def same_system_inputs(
    store,
    *,
    source_id: int | None = None,
    targets=None,
    metrics: Sequence[str] = ("read_bytes", "write_bytes"),
) -> list[int]:
    """The inputs that record one system over time, for a long-term view.

    A long record usually arrives as many inputs (one LMT export or iostat
    capture per day). Inputs are taken as one system's record when they are
    of the same kind and hold exactly the same set of targets; an input whose
    time span overlaps one already taken is left out (the same samples loaded
    twice, e.g. an LMT database and its CSV export), earliest first. Without
    ``source_id`` the group covering the most calendar days (then the most
    inputs) is taken.

    Parameters
    ----------
    store : iochar.Store
        The database.
    source_id : int, optional
        An input of the wanted system.
    targets : sequence of str, optional
        Only these targets.
    metrics : sequence of str
        Counter metrics that must be present.

    Returns
    -------
    list of int
        Source ids, in time order; empty when no input holds the metrics.
    """
    check_int(source_id, "source_id", "same_system_inputs", "None or an int", none=True)
    params = {"metrics": list(metrics), "targets": None if targets is None else list(targets)}
    inp = store.sql(_INPUTS_SQL, params=params).df()
    if inp.empty:
        return []
    inp["key"] = [(k, tuple(t)) for k, t in zip(inp["kind"], inp["targets"], strict=True)]
    groups: dict = {}
    for key, g in inp.sort_values(["first_t", "source_id"]).groupby("key", sort=False):
        kept, spans = [], []
        for r in g.itertuples():
            if any(r.first_t < e and s < r.last_t for s, e in spans):
                continue
            kept.append(int(r.source_id))
            spans.append((r.first_t, r.last_t))
        groups[key] = kept
    if source_id is not None:
        row = inp[inp["source_id"] == int(source_id)]
        if row.empty:
            return []
        kept = groups[row["key"].iloc[0]]
        return kept if int(source_id) in kept else [int(source_id)]

    def days(ids):
        sub = inp[inp["source_id"].isin(ids)]
        d = set()
        for a, b in zip(sub["first_t"], sub["last_t"], strict=True):
            d.update(pd.date_range(pd.Timestamp(a).normalize(), pd.Timestamp(b).normalize()))
        return len(d)

    best = max(groups.values(), key=lambda ids: (days(ids), len(ids), -min(ids)))
    return best


@dataclass(frozen=True, kw_only=True)
class DailyProfile(Result):
    """The long-term daily view of one system's counters (Uselton & Wright 2013, Fig. 9).

    Attributes
    ----------
    bins : pandas.DataFrame
        The system's amount per bin: ``metric``, ``bin_start`` (UTC),
        ``date``, ``hour`` (time of day of the bin start [h]), ``amount``
        (summed over targets [bytes]), ``covered_s`` (seconds of samples
        behind it, the most of any target [s]), ``rate`` (amount /
        covered_s [bytes/s]) and ``targets``.
    days : pandas.DataFrame
        One row per (date, metric): ``amount`` [bytes], ``covered_s`` [s],
        ``coverage`` (covered_s / 86400), ``rate`` (amount / covered_s, the
        day's mean rate [bytes/s]) and ``per_day`` (rate * 86400: the day's
        volume, estimated where the day is not fully covered [bytes]).
    profile : pandas.DataFrame
        One row per (metric, time-of-day bin): ``hour`` [h], ``median_rate``
        (median over the days with samples in that bin [bytes/s]) and
        ``days``.
    sources : list of int
        The inputs used (:func:`same_system_inputs`).
    targets : list of str
        The targets summed.
    n_days : int
        Calendar days (UTC) with samples.
    median_rate : dict
        Per metric, the median over days of the day's mean rate [bytes/s]
        (the paper's "long term median", 600 MB/s each way on Hopper).
    median_per_day : dict
        The same as a volume per day [bytes/day].
    bin_s : float
        Width of the time-of-day bins [s].
    reason : str
        Why there is no long-term view ("" when there is one).
    params : dict
        The arguments the profile was computed with.
    sql : str or None
        The query that read the counters.
    """

    bins: pd.DataFrame = field(repr=False)
    days: pd.DataFrame = field(repr=False)
    profile: pd.DataFrame = field(repr=False)
    sources: list
    targets: list
    n_days: int
    median_rate: dict
    median_per_day: dict
    bin_s: float
    reason: str


def daily_profile(
    store,
    *,
    source_id: int | None = None,
    targets: Sequence[str] | None = None,
    metrics: Sequence[str] = ("read_bytes", "write_bytes"),
    bin_s: float = 3600.0,
) -> DailyProfile:
    """A system's days against its long-term median day (Uselton & Wright 2013, Fig. 9).

    Uselton & Wright judge one day of LMT traffic of Hopper's ``/scratch``
    against "the long term median for I/O during a 24 hour period" (Fig. 9):
    over six months the median day moved about 50 TB each way, 600 MB/s
    averaged over the day. This sums the targets' per-interval amounts
    (``counters``) of one system (:func:`same_system_inputs`), per bin of
    ``bin_s`` seconds, and gives each day's mean rate over the time its
    samples cover, the median of those over the days, and per time-of-day bin
    the median rate over the days (the typical day's shape). Samples flagged
    by the loader (reset, wrap, gap) are left out: their amounts are not the
    bin's. A day only partly covered by samples gets its mean rate over the
    covered time; ``coverage`` says how much of it was covered.

    Parameters
    ----------
    store : iochar.Store
        The database.
    source_id : int, optional
        An input of the system; default the system covering the most days.
    targets : sequence of str, optional
        Only these targets; default the whole disks and OSTs of the inputs
        (no partitions or virtual devices, which would count bytes twice:
        :func:`iochar.analyze.devices.device_map`).
    metrics : sequence of str, default ("read_bytes", "write_bytes")
        Counter metrics, each on its own.
    bin_s : float, default 3600
        Time-of-day bin width [s]; must divide a day.

    Returns
    -------
    DailyProfile
        The bins, days and profile, the median day, and ``reason`` (why there
        is no long-term view: no counters, or fewer than two days).
    """
    caller = "daily_profile"
    bin_s = check_real(bin_s, "bin_s", caller, "seconds dividing a day", low=0, low_open=True)
    if abs(86400.0 / bin_s - round(86400.0 / bin_s)) > 1e-9:
        raise ParameterError("bin_s", caller, "seconds dividing a day (e.g. 3600)", bin_s)
    if not metrics or isinstance(metrics, str):
        raise ParameterError("metrics", caller, "a non-empty sequence of metric names", metrics)
    tl = None if targets is None else [str(t) for t in targets]
    sources = same_system_inputs(store, source_id=source_id, targets=tl, metrics=metrics)
    sel = tl
    if tl is None and sources:  # whole disks and OSTs only, as devices.counter_load counts
        from iochar.analyze import devices

        dm = devices.device_map(store)
        dm = dm[dm["source_id"].isin(sources) & dm["in_default"]]
        sel = sorted(set(dm["target"].astype(str)))
    params = {"metrics": list(metrics), "sources": sources, "targets": sel,
              "bin_us": int(round(bin_s * 1e6)), "bin_s": float(bin_s)}  # fmt: skip
    bins = store.sql(_BINS_SQL, params=params).df() if sources else pd.DataFrame(
        {"metric": [], "bin_start": pd.to_datetime([]), "amount": [], "covered_s": [],
         "targets": []})  # fmt: skip
    bins["bin_start"] = pd.to_datetime(bins["bin_start"])
    bins = bins[bins["covered_s"] > 0].reset_index(drop=True)
    bins["date"] = bins["bin_start"].dt.date
    bins["hour"] = (
        bins["bin_start"] - bins["bin_start"].dt.normalize()
    ).dt.total_seconds() / 3600.0
    bins["rate"] = bins["amount"] / bins["covered_s"]
    days = bins.groupby(["date", "metric"], as_index=False).agg(
        amount=("amount", "sum"), covered_s=("covered_s", "sum")
    )
    days["coverage"] = days["covered_s"] / 86400.0
    days["rate"] = days["amount"] / days["covered_s"]
    days["per_day"] = days["rate"] * 86400.0
    prof = bins.groupby(["metric", "hour"], as_index=False).agg(
        median_rate=("rate", "median"), days=("date", "nunique")
    )
    med = {str(k): float(v) for k, v in days.groupby("metric")["rate"].median().items()}
    n_days = int(days["date"].nunique())
    tg = []
    if sources:
        rows = store.sql(
            "SELECT DISTINCT target FROM counters WHERE list_contains($s, source_id) "
            "AND list_contains($m, metric) AND ($t IS NULL OR list_contains($t, target)) "
            "ORDER BY 1",
            params={"s": sources, "m": list(metrics), "t": sel},
        ).fetchall()
        tg = [str(r[0]) for r in rows]
    if bins.empty:
        reason = "no counters of " + ", ".join(metrics) + " in this selection"
    elif n_days < 2:
        d = days["date"].iloc[0]
        reason = (
            f"the counters cover one day only ({d}, {days['covered_s'].max():,.0f} s of samples); "
            "a long-term median day needs at least two days"
        )
    else:
        reason = ""
    return DailyProfile(
        bins=bins[
            ["metric", "bin_start", "date", "hour", "amount", "covered_s", "rate", "targets"]
        ],  # fmt: skip
        days=days,
        profile=prof,
        sources=sources,
        targets=tg,
        n_days=n_days,
        median_rate=med,
        median_per_day={k: v * 86400.0 for k, v in med.items()},
        bin_s=float(bin_s),
        reason=reason,
        params={
            "source_id": source_id,
            "targets": tl,
            "metrics": list(metrics),
            "bin_s": float(bin_s),
        },  # fmt: skip
        sql=_BINS_SQL,
    )
