"""Chart of one job in its system: the job's I/O rate under the system's load.

One time axis (UTC) for two panels: on top the read + write rate of the storage
targets matched with the job (:func:`iochar.analyze.context.load_series`: per counter
sample, summed over the matched targets of each input), below it the job's own rate in
the same samples; the job's window is shaded in both. The two rates differ by orders
of magnitude on a shared machine, so each panel has its own byte unit (named in its
axis title) over the same time scale. When the counters do not cover the job's window
or cannot be matched, the chart is a :class:`~iochar.plot.NoChart` carrying the
reason.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from iochar.plot._common import (
    NUM_FORMAT,
    THEME,
    NoChart,
    _alt,
    _break_gaps,
    _byte_unit,
    _few_points,
    _need,
    _time_axis,
    _time_text,
    _time_tooltip,
    _title,
    _utc,
)
from iochar.result import evidence_of

__all__ = ["job_load_chart", "WINDOW_COLOR"]

#: Shading of the job's window.
WINDOW_COLOR = "#f58518"


def job_load_chart(series: pd.DataFrame, **overrides: Any):
    """The job's I/O rate under the system's load, on one time axis.

    Parameters
    ----------
    series : pandas.DataFrame
        The result of :func:`iochar.analyze.context.load_series` (its evidence gives the
        job's window and, when nothing matched, the reason).
    **overrides
        Passed to each panel's ``properties`` (``width``, ``height``...).

    Returns
    -------
    altair.VConcatChart or NoChart
        Top: ``system_bps`` per input (step lines, broken at gaps in the record);
        bottom: the job's rate per sample (``job_all_bps``); the job's window shaded in
        both, the x scale shared. A :class:`NoChart` with the evidence's reason when the
        counters do not cover or match the job, or when fewer than two samples remain.
    """
    _need(series, ("source_id", "input", "ts", "system_bps", "job_all_bps"), "job_load_chart")
    ev = evidence_of(series)
    if series.empty and ev.get("reason"):
        return NoChart(f"No job-load chart: {ev['reason']}.")
    none = _few_points(series, "ts", "job-load chart", y="system_bps", show=_time_text)
    if none is not None:
        return none
    alt = _alt()
    d = series[["source_id", "input", "ts", "system_bps", "job_all_bps"]].copy()
    d["input"] = d["input"].astype(str) + " (" + d["source_id"].astype(str) + ")"
    sys_unit = _byte_unit(d["system_bps"], rate=True)
    job_unit = _byte_unit(d["job_all_bps"], rate=True)
    d["system"] = sys_unit.scale(d["system_bps"])
    d["job"] = job_unit.scale(d["job_all_bps"])
    d = _break_gaps(d.drop(columns=["system_bps", "job_all_bps"]), "ts", ["system", "job"],
                    by=["input"])  # fmt: skip
    d["ts"] = _utc(d["ts"])
    w0, w1 = ev.get("window_start"), ev.get("window_end")
    times = [d["ts"]]
    win = pd.DataFrame()
    if w0 is not None and w1 is not None and pd.notna(w0) and pd.notna(w1):
        win = pd.DataFrame({"start": _utc([w0]), "end": _utc([w1]), "what": ["job window"]})
        times += [win["start"], win["end"]]
    every = pd.concat(times, ignore_index=True)
    axis, title = _time_axis(every)
    span = (every.max() - every.min()).total_seconds()
    if span < 900:  # seconds: a round step giving at most 8 labels (d3 would pick 1 s)
        step = next((k for k in (1, 2, 5, 10, 15, 30, 60, 120) if span / k <= 8), 300)
        lo = math.ceil(every.min().timestamp() / step) * step
        ticks = [int(t * 1000) for t in range(int(lo), int(every.max().timestamp()) + 1, step)]
        axis = {k: v for k, v in axis.items() if k not in ("tickCount", "tickMinStep")}
        axis["values"] = ticks  # epoch milliseconds
    domain = [every.min().isoformat(), every.max().isoformat()]

    def x_of(field: str):
        return alt.X(f"{field}:T", scale=alt.Scale(type="utc", domain=domain),
                     axis=alt.Axis(**axis), title=title)  # fmt: skip

    x = x_of("ts")
    props = {**THEME, "height": 160, **overrides}
    job_name = ev.get("app")
    job_label = f"job {ev.get('job_id')}" + (f" ({job_name})" if isinstance(job_name, str) else "")

    def shade():
        if win.empty:
            return []
        return [
            alt.Chart(win)
            .mark_rect(opacity=0.15, color=WINDOW_COLOR)
            .encode(
                x=x_of("start"),
                x2="end:T",
                tooltip=[
                    "what:N",
                    _time_tooltip("start", "start (UTC)"),
                    _time_tooltip("end", "end (UTC)"),
                ],
            )
        ]

    system = (
        alt.Chart(d)
        .mark_line(interpolate="step-before")
        .encode(
            x=x,
            y=alt.Y("system:Q", title=_title("system read + write", sys_unit)),
            color=alt.Color("input:N", title="counters (input)"),
            tooltip=[
                "input:N",
                _time_tooltip("ts", "sample end (UTC)"),
                alt.Tooltip("system:Q", format=NUM_FORMAT, title=_title("system", sys_unit)),
            ],
        )
    )
    main = d["input"].iloc[0] if len(d) else None
    jd = d[d["input"] == main] if main is not None else d
    job = (
        alt.Chart(jd)
        .mark_line(interpolate="step-before", color="#4c78a8")
        .encode(
            x=x,
            y=alt.Y("job:Q", title=_title(f"{job_label} read + write", job_unit)),
            tooltip=[
                _time_tooltip("ts", "sample end (UTC)"),
                alt.Tooltip("job:Q", format=NUM_FORMAT, title=_title("job", job_unit)),
            ],
        )
    )
    top = alt.layer(*shade(), system).properties(**props)
    bottom = alt.layer(*shade(), job).properties(**props)
    return alt.vconcat(top, bottom).resolve_scale(x="shared", color="independent")
