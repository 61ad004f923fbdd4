"""Charts of notebook 05: capacity per level, used % per phase (Méndez et al.), rate
against scale with 95 % intervals and interference (Kwan & Reed).

- :func:`capacity_chart` -- rate against request size per level, operation and access
  mode, the repetitions' 95 % Student-t interval as a bar (Méndez Fig. 4's curves);
- :func:`used_chart` -- used % per phase and level with the capacity's spread (Méndez
  Tables 2 and 3 as dots on a log scale), a rule at 100 % and one at the insight
  threshold;
- :func:`scaling_chart` -- rate against process count per request size with 95 %
  intervals (Kwan & Reed Figs. 2-3);
- :func:`interference_chart` -- each job's degradation against running alone per
  Table 1 case, with its 95 % interval (Kwan & Reed Figs. 4-5).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from iochar.plot._common import (
    NUM_FORMAT,
    THEME,
    NoChart,
    _alt,
    _byte_unit,
    _log_bytes_axis,
    _need,
    _title,
)

__all__ = ["capacity_chart", "interference_chart", "scaling_chart", "used_chart"]


def _series_label(df: pd.DataFrame, cols) -> pd.Series:
    return df[list(cols)].astype(str).agg(" ".join, axis=1)


def capacity_chart(cap: pd.DataFrame, *, nprocs: int | None = None, **overrides: Any):
    """Capacity (mean rate of the repetitions) against request size, with 95 % intervals.

    Parameters
    ----------
    cap : pandas.DataFrame
        :func:`iochar.analyze.capacity.capacity` output.
    nprocs : int, optional
        Only this process count; default the smallest in the table.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart or NoChart
        Lines with points per ``level op access`` on a log2 size axis; error bars from
        ``ci_lo`` (at least 0) to ``ci_hi``, cut at 1.5 x the highest mean (a 95 %
        interval of two repetitions is 12.7 sd wide); NoChart when the table is empty.
    """
    _need(cap, ("level", "op", "access", "size_bytes", "nprocs", "rate"), "capacity_chart")
    if cap.empty:
        return NoChart("No capacity chart: the capacity table is empty.")
    n = int(cap["nprocs"].min()) if nprocs is None else nprocs
    d = cap[cap["nprocs"] == n].copy()
    if d.empty:
        return NoChart(f"No capacity chart: no point with {n} processes.")
    alt = _alt()
    unit = _byte_unit(pd.concat([d["rate"], d["ci_hi"].dropna()]), rate=True)
    d["series"] = _series_label(d, ("level", "op", "access"))
    d["y"] = unit.scale(d["rate"])
    d["lo"] = unit.scale(d["ci_lo"].clip(lower=0))
    d["hi"] = unit.scale(d["ci_hi"])
    d = d[["size_bytes", "series", "y", "lo", "hi", "n"]]
    y_title = _title(f"rate ({n} process{'es' if n != 1 else ''})", unit)
    x = alt.X("size_bytes:Q", **_log_bytes_axis(d["size_bytes"], title="request size"))
    base = alt.Chart(d).encode(x=x, color=alt.Color("series:N", title="level, op, access"))
    lines = base.mark_line(point=True).encode(
        y=alt.Y("y:Q", title=y_title),
        tooltip=[
            "series:N",
            alt.Tooltip("size_bytes:Q", format=",", title="request size [bytes]"),
            alt.Tooltip("y:Q", format=NUM_FORMAT, title=y_title),
            alt.Tooltip("n:Q", title="repetitions"),
        ],
    )
    top = float(np.nanmax(d["y"])) * 1.5
    scale = alt.Scale(domain=[0, top], clamp=True)
    lines = lines.encode(y=alt.Y("y:Q", title=y_title, scale=scale))
    bars = (
        base.transform_filter("isValid(datum.hi)")
        .mark_errorbar(clip=True)
        .encode(y=alt.Y("lo:Q", title=y_title, scale=scale), y2="hi:Q")
    )
    return (lines + bars).properties(**{**THEME, **overrides})


def used_chart(u: pd.DataFrame, *, threshold: float = 30.0, top: int = 12, **overrides: Any):
    """Used % per phase and level (Méndez Tables 2-3) with the capacity's spread.

    Parameters
    ----------
    u : pandas.DataFrame
        :func:`iochar.analyze.efficiency.used` output.
    threshold : float, default 30.0
        Used % under which a phase is an insight (drawn as a dashed rule).
    top : int, default 12
        At most this many phases: those that moved the most bytes.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart or NoChart
        Dots (phase on x, one per level side by side) on a log scale, error bars
        ``used_lo`` to ``used_hi``, rules at 100 % and ``threshold``; NoChart when there
        is no row.
    """
    _need(u, ("job_id", "phase", "op", "size_bytes", "bytes", "level", "used_pct"), "used_chart")
    d = u[np.isfinite(u["used_pct"]) & (u["used_pct"] > 0)].copy()
    if d.empty:
        return NoChart("No used-% chart: no phase could be matched to a capacity.")
    alt = _alt()
    keep = d.drop_duplicates(["job_id", "phase"]).nlargest(top, "bytes")[["job_id", "phase"]]
    d = d.merge(keep, on=["job_id", "phase"])
    from iochar._units import fmt_bytes

    d["phase_label"] = (
        "job "
        + d["job_id"].astype(str)
        + " #"
        + d["phase"].astype(str)
        + " "
        + d["op"]
        + " "
        + d["size_bytes"].map(fmt_bytes)
    )
    d["hi"] = d["used_hi"].where(np.isfinite(d["used_hi"]), np.nan)
    d = d[["phase_label", "level", "used_pct", "used_lo", "hi"]]
    x = alt.X("phase_label:N", title="phase (job, number, op, mean request)", sort=None)
    base = alt.Chart(d).encode(x=x, xOffset="level:N", color=alt.Color("level:N"))
    # log scale, dots not bars (a bar has no base on it): used % spans decades (Méndez
    # Tables 2-3: 0.12 to 310)
    ys = alt.Scale(type="log")
    bars = base.mark_point(filled=True, size=70, opacity=1).encode(
        y=alt.Y("used_pct:Q", title="used % of the level's capacity (log scale)", scale=ys),
        tooltip=[
            "phase_label:N",
            "level:N",
            alt.Tooltip("used_pct:Q", format=".1f", title="used %"),
            alt.Tooltip("used_lo:Q", format=".1f", title="with capacity + sd"),
            alt.Tooltip("hi:Q", format=".1f", title="with capacity - sd"),
        ],
    )
    err = (
        base.transform_filter("isValid(datum.hi)")
        .mark_errorbar()
        .encode(
            y=alt.Y("used_lo:Q", title="used % of the level's capacity (log scale)", scale=ys),
            y2="hi:Q",
        )
    )
    rules = (
        alt.Chart(pd.DataFrame({"y": [100.0, float(threshold)], "what": ["100%", "threshold"]}))
        .mark_rule(strokeDash=[4, 3])
        .encode(y="y:Q", tooltip=["what:N", "y:Q"])
    )
    return (bars + err + rules).properties(**{**THEME, **overrides})


def scaling_chart(sw: pd.DataFrame, *, op: str | None = None, **overrides: Any):
    """Rate against process count per request size, with 95 % intervals (Kwan & Reed).

    Parameters
    ----------
    sw : pandas.DataFrame
        :func:`iochar.analyze.scaling.sweep` output.
    op : str, optional
        Only ``read`` or ``write``; default both (as the series' labels say).
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart or NoChart
        % of peak against processes (log2 axis) per ``level op access size``, the
        intervals cut at 1.5 x the highest point; NoChart with fewer than two process
        counts.
    """
    _need(sw, ("nprocs", "pct_peak", "pct_lo", "pct_hi", "size_bytes", "op"), "scaling_chart")
    d = sw if op is None else sw[sw["op"] == op]
    if d["nprocs"].nunique() < 2:
        return NoChart(
            "No scaling chart: the sweep has one process count "
            f"({', '.join(map(str, sorted(d['nprocs'].unique()))) or 'none'}); "
            "a chart needs two (iochar calibrate --nprocs 1,2,4)."
        )
    alt = _alt()
    from iochar._units import fmt_bytes

    d = d.copy()
    d["series"] = _series_label(d, ("level", "op", "access")) + " " + d["size_bytes"].map(fmt_bytes)
    d["lo"] = d["pct_lo"].clip(lower=0)
    d = d[["nprocs", "series", "pct_peak", "lo", "pct_hi"]]
    x = alt.X("nprocs:Q", scale=alt.Scale(type="log", base=2), title="processes")
    base = alt.Chart(d).encode(x=x, color=alt.Color("series:N", title="level, op, access, size"))
    ys = alt.Scale(domain=[0, float(np.nanmax(d["pct_peak"])) * 1.5], clamp=True)
    lines = base.mark_line(point=True).encode(
        y=alt.Y("pct_peak:Q", title="% of peak", scale=ys),
        tooltip=["series:N", "nprocs:Q", alt.Tooltip("pct_peak:Q", format=".1f")],
    )
    bars = (
        base.transform_filter("isValid(datum.pct_hi)")
        .mark_errorbar(clip=True)
        .encode(y=alt.Y("lo:Q", title="% of peak", scale=ys), y2="pct_hi:Q")
    )
    return (lines + bars).properties(**{**THEME, **overrides})


def interference_chart(t: pd.DataFrame, **overrides: Any):
    """Degradation of each job against running alone, per Kwan & Reed Table 1 case.

    Parameters
    ----------
    t : pandas.DataFrame
        :func:`iochar.analyze.interference.fio_pairs` output (``case``, ``role``,
        ``op``, ``degradation_pct``, ``deg_lo``, ``deg_hi``).
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart or NoChart
        Bars per case and job with 95 % intervals and a rule at 0; NoChart when empty.
    """
    if t is None or len(t) == 0:
        return NoChart("No interference chart: no pair of concurrent jobs was measured.")
    _need(t, ("case", "role", "op", "degradation_pct", "deg_lo", "deg_hi"), "interference_chart")
    alt = _alt()
    d = t.copy()
    d["job"] = "job " + d["role"].str.upper() + " (" + d["op"] + ")"
    d = d[["case", "job", "degradation_pct", "deg_lo", "deg_hi"]]
    base = alt.Chart(d).encode(
        x=alt.X("case:N", title="Kwan & Reed Table 1 case", sort=None),
        xOffset="job:N",
        color=alt.Color("job:N", title="job"),
    )
    bars = base.mark_bar().encode(
        y=alt.Y("degradation_pct:Q", title="slower than alone [%]"),
        tooltip=[
            "case:N",
            "job:N",
            alt.Tooltip("degradation_pct:Q", format=".1f", title="degradation %"),
            alt.Tooltip("deg_lo:Q", format=".1f", title="95% CI low"),
            alt.Tooltip("deg_hi:Q", format=".1f", title="95% CI high"),
        ],
    )
    err = (
        base.transform_filter("isValid(datum.deg_lo)")
        .mark_errorbar()
        .encode(y=alt.Y("deg_lo:Q", title="slower than alone [%]"), y2="deg_hi:Q")
    )
    zero = alt.Chart(pd.DataFrame({"y": [0.0]})).mark_rule().encode(y="y:Q")
    return (bars + err + zero).properties(**{**THEME, **overrides})
