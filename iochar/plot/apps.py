"""Charts of one application's trace (notebook 01): I/O classes and cycles.

Miller & Katz (1991): data rate by required / checkpoint / staging class, and
the cycles of a job's I/O (section 5.3).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from iochar.errors import ParameterError
from iochar.plot._common import (
    NUM_FORMAT,
    THEME,
    NoChart,
    _alt,
    _byte_unit,
    _bytes_text,
    _duration_text,
    _duration_unit,
    _few_points,
    _log_duration_axis,
    _need,
    _title,
)

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
    altair.Chart or NoChart
        ``bps`` over ``t_s``, one colour per class, the rate in one binary unit
        (``data rate [MiB/s]``) and the time since job start in s, min or h. A
        :class:`NoChart` with fewer than two time bins.
    """
    _need(df, ("t_s", "class", "bps"), "class_rate_chart")
    none = _few_points(
        df, "t_s", "data-rate chart", y="bps", noun=("time bin", "time bins"),
        show=lambda t: f"{_duration_text(float(t))} after job start",
    )  # fmt: skip
    if none is not None:
        return none
    alt = _alt()
    rate, tu = _byte_unit(df["bps"], rate=True), _duration_unit(df["t_s"])
    d = pd.DataFrame(
        {
            "t": tu.scale(df["t_s"]),
            "class": df["class"].astype(str),
            "rate": rate.scale(df["bps"]),
            "ios": df["ios"] if "ios" in df.columns else np.nan,
        }
    )
    return (
        alt.Chart(d)
        .mark_area()
        .encode(
            x=alt.X("t:Q", title=_title("time since job start", tu)),
            y=alt.Y("rate:Q", stack=True, title=_title("data rate", rate)),
            color=alt.Color("class:N", title="I/O class"),
            tooltip=[
                alt.Tooltip("t:Q", format=NUM_FORMAT, title=_title("time since job start", tu)),
                "class:N",
                alt.Tooltip("rate:Q", format=NUM_FORMAT, title=_title("data rate", rate)),
                "ios:Q",
            ],
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
    altair.Chart or NoChart
        Horizontal bars of ``bytes_share``, ``ops_share`` (when present) and
        ``files_share`` per class. A :class:`NoChart` when the data hold fewer
        than two classes (all shares would be 100%).
    """
    _need(df, ("class", "bytes_share", "files_share"), "class_breakdown_chart")
    used = df[(df["bytes_share"].fillna(0) > 0) | (df["files_share"].fillna(0) > 0)]
    classes = used["class"].dropna().astype(str).unique()
    if len(classes) < 2:
        if not len(classes):
            return NoChart("No I/O-class chart: no file was classified.")
        return NoChart(
            f"No I/O-class chart: every file is in one class, {classes[0]}, "
            "which holds all bytes, operations and files."
        )
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
    spec = _thin_spectrum(result.spectrum, max_points)
    spec = spec[spec["power"] > 0]
    if len(spec) < 2:
        why = getattr(result, "reason", "") or "the spectrum has no power above zero"
        return NoChart(f"No periodogram: {why}.")
    alt = _alt()
    x = alt.X("period_s:Q", **_log_duration_axis(spec["period_s"], title="period"))
    base = alt.Chart(spec).encode(x=x)
    power = base.mark_line(strokeWidth=1).encode(
        y=alt.Y(
            "power:Q",
            scale=alt.Scale(type="log"),
            axis=alt.Axis(format=".0e"),
            title="power [unit² per sample]",
        ),
        tooltip=[
            alt.Tooltip("period_s:Q", format=".4g", title="period [s]"),
            alt.Tooltip("power:Q", format=".3g"),
            alt.Tooltip("false_alarm:Q", format=".2g"),
        ],
    )
    threshold = base.mark_line(strokeDash=[4, 3], color="#9d9d9d").encode(y="threshold:Q")
    periods = result.periods.assign(
        label=lambda d: [
            f"{_duration_text(p)} ({c:.3f})"
            for p, c in zip(d["period_s"], d["confidence"], strict=True)
        ]
    )
    cols = ["rank", "period_s", "confidence", "jitter", "n_cycles", "label"]
    marks = alt.Chart(periods[cols]).encode(
        x=x,
        tooltip=[
            "rank:Q",
            alt.Tooltip("label:N", title="period (confidence)"),
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
    altair.LayerChart or NoChart
        One bar per cycle from its start to its end [s, min or h since the
        first sample], as high as its volume (``bytes``, in one binary unit),
        coloured by ``similarity`` (partial first and last cycles faded), with
        the median complete cycle's volume as a dashed rule. A
        :class:`NoChart` with fewer than two cycles.
    """
    from iochar.analyze.cycles import CycleResult

    if not isinstance(result, CycleResult):
        raise ParameterError("result", "cycles_chart", "a CycleResult", type(result).__name__)
    cyc = result.cycles
    what = f"cycles chart (period {_duration_text(result.period_s)})"
    if len(cyc) < 2:
        if cyc.empty:
            return NoChart(f"No {what}: the signal holds no cycle.")
        r = cyc.iloc[0]
        return NoChart(
            f"No {what}: one cycle only, {_duration_text(float(r['duration_s']))} "
            f"moving {_bytes_text(float(r['bytes']))}."
        )
    alt = _alt()
    full = cyc[cyc["complete"]]
    med = float(full["bytes"].median()) if len(full) else float(cyc["bytes"].median())
    vol, tu = _byte_unit(cyc["bytes"]), _duration_unit(cyc["end_s"])
    d = cyc[["cycle", "complete", "similarity", "ops"]].assign(
        start=tu.scale(cyc["start_s"]),
        end=tu.scale(cyc["end_s"]),
        duration=tu.scale(cyc["duration_s"]),
        volume=vol.scale(cyc["bytes"]),
    )
    bars = (
        alt.Chart(d)
        .mark_rect()
        .encode(
            x=alt.X("start:Q", title=_title("time", tu)),
            x2="end",
            y=alt.Y("volume:Q", title=_title("volume per cycle", vol)),
            y2=alt.datum(0),
            color=alt.Color(
                "similarity:Q", scale=alt.Scale(domain=[0, 1], scheme="viridis"), title="similarity"
            ),
            opacity=alt.condition(alt.datum.complete, alt.value(0.9), alt.value(0.35)),
            tooltip=[
                "cycle:Q",
                alt.Tooltip("start:Q", format=NUM_FORMAT, title=_title("start", tu)),
                alt.Tooltip("duration:Q", format=NUM_FORMAT, title=_title("duration", tu)),
                alt.Tooltip("volume:Q", format=NUM_FORMAT, title=_title("volume", vol)),
                alt.Tooltip("ops:Q", format=",.0f"),
                alt.Tooltip("similarity:Q", format=".3f"),
            ],
        )
    )
    rule = (
        alt.Chart(pd.DataFrame({"median": [med / vol.size]}))
        .mark_rule(strokeDash=[4, 3], color="#9d9d9d")
        .encode(y=alt.Y("median:Q", title=_title("volume per cycle", vol)))
    )
    title = f"cycles of {_duration_text(result.period_s)}, similarity {result.similarity:.3f}"
    return alt.layer(bars, rule).properties(**{**THEME, "title": title, **overrides})
