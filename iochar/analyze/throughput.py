"""Throughput over time per target, from per-interval ``counters``.

Carns et al. 2011 (section 4) study device throughput as a time series per
storage target and aggregated; this module turns the store's per-interval
amounts into rates a chart or a burst analysis can use.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from iochar._validation import check_real
from iochar.errors import ParameterError
from iochar.result import Table

__all__ = ["throughput"]

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
