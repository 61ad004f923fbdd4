"""Charts of one application's trace (notebook 01): I/O classes and cycles.

Miller & Katz (1991): data rate by required / checkpoint / staging class, and
the cycles of a job's I/O (section 5.3).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from iochar.errors import ParameterError
from iochar.plot._common import THEME, _alt, _need

__all__ = [
    "class_rate_chart",
    "class_breakdown_chart",
    "periodogram_chart",
    "cycles_chart",
]


def class_rate_chart(df: pd.DataFrame, **overrides: Any):
    """Data rate over time coloured by I/O class (stacked areas).

    Parameters
    ----------
    df : pandas.DataFrame
        The result of :func:`iochar.analyze.classify.class_rate`.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart
        ``bps`` over ``t_s``, one colour per class.
    """
    _need(df, ("t_s", "class", "bps"), "class_rate_chart")
    alt = _alt()
    return (
        alt.Chart(df)
        .mark_area()
        .encode(
            x=alt.X("t_s:Q", title="time since job start [s]"),
            y=alt.Y("bps:Q", stack=True, title="bytes/s"),
            color=alt.Color("class:N", title="I/O class"),
            tooltip=["t_s:Q", "class:N", "bps:Q", "ios:Q"],
        )
        .properties(**{**THEME, **overrides})
    )


def class_breakdown_chart(df: pd.DataFrame, **overrides: Any):
    """Share of bytes, of I/O operations and of files per I/O class, side by side.

    Parameters
    ----------
    df : pandas.DataFrame
        The result of :func:`iochar.analyze.classify.class_breakdown`.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart
        Horizontal bars of ``bytes_share``, ``ops_share`` (when present) and
        ``files_share`` per class.
    """
    _need(df, ("class", "bytes_share", "files_share"), "class_breakdown_chart")
    alt = _alt()
    shares = [c for c in ("bytes_share", "ops_share", "files_share") if c in df.columns]
    long = df.melt(id_vars=["class"], value_vars=shares, var_name="by")
    long["by"] = long["by"].map(
        {"bytes_share": "by bytes", "ops_share": "by operations", "files_share": "by files"}
    )
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            y=alt.Y("class:N", title=None),
            x=alt.X("value:Q", axis=alt.Axis(format="%"), title="share"),
            color=alt.Color("class:N", legend=None),
            column=alt.Column("by:N", title=None),
            tooltip=["class:N", "by:N", alt.Tooltip("value:Q", format=".1%")],
        )
        .properties(**{"width": 280, "height": 120, **overrides})
    )


# --- cycles (Miller & Katz 1991, section 5.3) ---------------------------------------------


def _thin_spectrum(spec: pd.DataFrame, max_points: int) -> pd.DataFrame:
    """At most ``max_points`` rows: the strongest of each run of frequencies (peaks stay)."""
    n = len(spec)
    if n <= max_points:
        return spec

    # runs evenly spaced in log frequency, so the long periods keep their detail
    logf = np.log(spec["frequency_hz"].to_numpy(float))
    edges = np.searchsorted(logf, np.linspace(logf[0], logf[-1], max_points + 1)[:-1])
    starts = np.unique(edges)
    power = spec["power"].to_numpy(float)
    ids = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))
    order = np.lexsort((power, ids))
    last = np.r_[np.flatnonzero(np.diff(ids[order])), n - 1]
    return spec.iloc[np.sort(order[last])]


def periodogram_chart(result, *, max_points: int = 2000, **overrides: Any):
    """Power against period, with the noise threshold and the detected periods.

    Parameters
    ----------
    result : iochar.analyze.cycles.PeriodResult
        The result of :func:`iochar.analyze.cycles.find_periods`.
    max_points : int, default 2000
        Longer spectra are thinned to this many points, each the strongest
        line of its run of frequencies (evenly spaced in log frequency), so
        peaks stay visible.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart
        The periodogram (power per sample [signal unit squared], log axes,
        period [s] on x), the power a line must exceed to be reported
        (dashed), and one labelled rule per detected period.
    """
    from iochar.analyze.cycles import PeriodResult

    caller = "periodogram_chart"
    if not isinstance(result, PeriodResult):
        raise ParameterError("result", caller, "a PeriodResult", type(result).__name__)
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 2:
        raise ParameterError("max_points", caller, "an int >= 2", max_points)
    alt = _alt()
    spec = _thin_spectrum(result.spectrum, max_points)
    spec = spec[spec["power"] > 0]
    x = alt.X("period_s:Q", scale=alt.Scale(type="log"), title="period [s]")
    base = alt.Chart(spec).encode(x=x)
    power = base.mark_line(strokeWidth=1).encode(
        y=alt.Y("power:Q", scale=alt.Scale(type="log"), title="power [unit² per sample]"),
        tooltip=[
            alt.Tooltip("period_s:Q", format=".4g"),
            alt.Tooltip("power:Q", format=".3g"),
            alt.Tooltip("false_alarm:Q", format=".2g"),
        ],
    )
    threshold = base.mark_line(strokeDash=[4, 3], color="#9d9d9d").encode(y="threshold:Q")
    periods = result.periods.assign(
        label=lambda d: [
            f"{p:.4g} s ({c:.3f})" for p, c in zip(d["period_s"], d["confidence"], strict=True)
        ]
    )
    cols = ["rank", "period_s", "confidence", "jitter", "n_cycles", "label"]
    marks = alt.Chart(periods[cols]).encode(
        x=x,
        tooltip=[
            "rank:Q",
            alt.Tooltip("period_s:Q", format=".4g"),
            alt.Tooltip("confidence:Q", format=".4f"),
            alt.Tooltip("jitter:Q", format=".3f"),
            alt.Tooltip("n_cycles:Q", format=".1f"),
        ],
    )
    rules = marks.mark_rule(color="#f58518", strokeWidth=2)
    text = marks.mark_text(align="left", dx=4, dy=-4, color="#f58518").encode(
        y=alt.value(10), text="label:N"
    )
    return alt.layer(power, threshold, rules, text).properties(**{**THEME, **overrides})


def cycles_chart(result, **overrides: Any):
    """Volume per cycle over time, coloured by similarity to the median cycle.

    Parameters
    ----------
    result : iochar.analyze.cycles.CycleResult
        The result of :func:`iochar.analyze.cycles.split_cycles` (or
        :func:`iochar.analyze.cycles.job_cycles`).
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart
        One bar per cycle from its start to its end [s since the first
        sample], as high as its volume [signal unit], coloured by
        ``similarity`` (partial first and last cycles faded), with the median
        complete cycle's volume as a dashed rule.
    """
    from iochar.analyze.cycles import CycleResult

    if not isinstance(result, CycleResult):
        raise ParameterError("result", "cycles_chart", "a CycleResult", type(result).__name__)
    alt = _alt()
    cyc = result.cycles
    full = cyc[cyc["complete"]]
    med = float(full["bytes"].median()) if len(full) else float(cyc["bytes"].median())
    bars = (
        alt.Chart(cyc)
        .mark_rect()
        .encode(
            x=alt.X("start_s:Q", title="time [s]"),
            x2="end_s",
            y=alt.Y("bytes:Q", title="volume per cycle"),
            y2=alt.datum(0),
            color=alt.Color(
                "similarity:Q", scale=alt.Scale(domain=[0, 1], scheme="viridis"), title="similarity"
            ),
            opacity=alt.condition(alt.datum.complete, alt.value(0.9), alt.value(0.35)),
            tooltip=[
                "cycle:Q",
                alt.Tooltip("start_s:Q", format=".4g"),
                alt.Tooltip("duration_s:Q", format=".4g"),
                alt.Tooltip("bytes:Q", format=",.0f"),
                alt.Tooltip("ops:Q", format=",.0f"),
                alt.Tooltip("similarity:Q", format=".3f"),
            ],
        )
    )
    rule = (
        alt.Chart(pd.DataFrame({"median": [med]}))
        .mark_rule(strokeDash=[4, 3], color="#9d9d9d")
        .encode(y="median:Q")
    )
    title = f"cycles of {result.period_s:.4g} s, similarity {result.similarity:.3f}"
    return alt.layer(bars, rule).properties(**{**THEME, "title": title, **overrides})
