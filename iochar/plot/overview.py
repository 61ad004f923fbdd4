"""Charts of what a database holds (notebook 00): input coverage and bytes per job."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from iochar.plot._common import (
    THEME,
    NoChart,
    _alt,
    _bytes_text,
    _duration_text,
    _log_bytes_axis,
    _log_duration_axis,
    _need,
    _time_text,
    _time_tooltip,
    _utc,
)

__all__ = [
    "coverage_chart",
    "job_bytes_chart",
]


def coverage_chart(cov: pd.DataFrame, **overrides: Any):
    """How long each input's record runs, and when it starts.

    Parameters
    ----------
    cov : pandas.DataFrame
        The result of :func:`iochar.analyze.inventory.coverage`.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart or NoChart
        One bar per input file: the time from its first to its last sample on a
        log axis with ticks in s, min, h and d (snapshots, a single instant, are
        drawn at 1 s), labelled with its start time (UTC) and coloured by input
        kind; the tooltip gives targets, samples, start and end (UTC) and the
        span. Inputs years apart stay comparable, which a shared time axis would
        not allow. A :class:`NoChart` with fewer than two timed inputs.
    """
    _need(cov, ("table", "kind", "source", "target", "start", "end", "samples"), "coverage_chart")
    df = cov.dropna(subset=["start"])
    per = df.groupby(["source", "kind"], as_index=False).agg(
        targets=("target", "nunique"),
        samples=("samples", "sum"),
        start=("start", "min"),
        end=("end", "max"),
    )
    if len(per) < 2:
        if per.empty:
            return NoChart("No input-coverage chart: no input has a time.")
        r = per.iloc[0]
        span = (r["end"] - r["start"]).total_seconds()
        return NoChart(
            f"No input-coverage chart: one input only, {r['source']} ({r['kind']}), "
            f"from {_time_text(r['start'])}"
            + (f" for {_duration_text(span)}." if span > 0 else " (one instant).")
        )
    alt = _alt()
    per["span_s"] = ((per["end"] - per["start"]).dt.total_seconds()).clip(lower=1.0)
    per["span"] = per["span_s"].map(_duration_text)
    per["label"] = _utc(per["start"]).dt.strftime("%Y-%m-%d %H:%M UTC")
    per["start"], per["end"] = _utc(per["start"]), _utc(per["end"])
    per["base"] = 0.5  # log-scale bars need a positive start
    order = per.sort_values(["start", "source"])["source"].astype(str).tolist()  # earliest on top
    # room right of the longest bar for its label: about a third of the log width more
    hi = float(per["span_s"].max()) * (float(per["span_s"].max()) / 0.5) ** 0.35
    x = _log_duration_axis(pd.Series([0.5, hi]), title="record length")
    x["scale"] = alt.Scale(type="log", domain=[0.5, hi])
    bars = (
        alt.Chart(per)
        .mark_bar()
        .encode(
            x=alt.X("base:Q", **x),
            x2="span_s:Q",
            y=alt.Y("source:N", sort=order, title=None),
            color=alt.Color("kind:N", title="input kind"),
            tooltip=[
                "source",
                "kind",
                "targets:Q",
                "samples:Q",
                _time_tooltip("start", "start (UTC)"),
                _time_tooltip("end", "end (UTC)"),
                alt.Tooltip("span:N", title="record length"),
            ],
        )
    )
    text = (
        alt.Chart(per)
        .mark_text(align="left", dx=4, fontSize=10, color="#444")
        .encode(x="span_s:Q", y=alt.Y("source:N", sort=order), text="label:N")
    )
    return alt.layer(bars, text).properties(**{"width": THEME["width"] - 120, **overrides})


def job_bytes_chart(table: pd.DataFrame, *, top: int = 25, **overrides: Any):
    """Bytes moved per job (the largest ``top``), as horizontal bars.

    Parameters
    ----------
    table : pandas.DataFrame
        The result of :func:`iochar.analyze.characterize.app_table` (``job_id``,
        ``app``, ``io_bytes``, ``basis``).
    top : int, default 25
        Jobs shown, by bytes moved.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart or NoChart
        Bars of ``io_bytes`` on a log axis with ticks in binary units (``1 MiB``,
        ``1 GiB``) per job labelled ``job (app)``, coloured by the basis of the
        figures (per-operation trace or Darshan counters); jobs that moved
        nothing are left out. A :class:`NoChart` with fewer than two such jobs.
    """
    _need(table, ("job_id", "app", "io_bytes", "basis"), "job_bytes_chart")
    df = table.nlargest(top, "io_bytes").copy()
    df["job"] = df["job_id"].astype(str) + " (" + df["app"].fillna("?").astype(str) + ")"
    df["io_bytes"] = df["io_bytes"].astype(float)
    df = df[df["io_bytes"] > 0]
    if len(df) < 2:
        if df.empty:
            return NoChart("No bytes-per-job chart: no job moved any bytes.")
        r = df.iloc[0]
        return NoChart(
            f"No bytes-per-job chart: one job only, job {r['job']} moved "
            f"{_bytes_text(r['io_bytes'])} (from {r['basis']})."
        )
    alt = _alt()
    df["moved"] = df["io_bytes"].map(_bytes_text)
    # log-scale bars need a positive start: three powers of two below the smallest job
    df["base"] = 2.0 ** (np.floor(np.log2(df["io_bytes"].min())) - 3)
    x = _log_bytes_axis(pd.concat([df["base"], df["io_bytes"]]), title="bytes read + written")
    order = df.sort_values("io_bytes", ascending=False)["job"].tolist()
    return (
        alt.Chart(df[["job_id", "app", "job", "io_bytes", "moved", "basis", "base"]])
        .mark_bar()
        .encode(
            x=alt.X("base:Q", **x),
            x2="io_bytes:Q",
            y=alt.Y("job:N", sort=order, title=None),
            color=alt.Color("basis:N", title="from"),
            tooltip=[
                "job_id:Q",
                "app:N",
                alt.Tooltip("moved:N", title="bytes read + written"),
                "basis:N",
            ],
        )
        .properties(**{"width": THEME["width"], **overrides})
    )
