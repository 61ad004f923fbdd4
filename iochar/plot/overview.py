"""Charts of what a database holds (notebook 00): input coverage and bytes per job."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from iochar.plot._common import THEME, _alt, _need

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
    altair.Chart
        One bar per input file: the time from its first to its last sample [s] on a
        log scale (snapshots, a single instant, are drawn at 1 s), labelled with its
        start date and coloured by input kind; the tooltip gives targets and samples.
        Inputs years apart stay comparable, which a shared time axis would not allow.
    """
    _need(cov, ("table", "kind", "source", "target", "start", "end", "samples"), "coverage_chart")
    alt = _alt()
    df = cov.dropna(subset=["start"])
    per = df.groupby(["source", "kind"], as_index=False).agg(
        targets=("target", "nunique"),
        samples=("samples", "sum"),
        start=("start", "min"),
        end=("end", "max"),
    )
    per["span_s"] = ((per["end"] - per["start"]).dt.total_seconds()).clip(lower=1.0)
    per["label"] = per["start"].dt.strftime("%Y-%m-%d %H:%M")
    per["base"] = 0.5  # log-scale bars need a positive start
    bars = (
        alt.Chart(per)
        .mark_bar()
        .encode(
            x=alt.X("base:Q", scale=alt.Scale(type="log"), title="record length [s]"),
            x2="span_s:Q",
            y=alt.Y("source:N", sort=alt.EncodingSortField("start"), title=None),
            color=alt.Color("kind:N", title="input kind"),
            tooltip=[
                "source",
                "kind",
                "targets:Q",
                "samples:Q",
                "start:T",
                "end:T",
                alt.Tooltip("span_s:Q", format=",.0f"),
            ],
        )
    )
    text = (
        alt.Chart(per)
        .mark_text(align="left", dx=4, fontSize=10, color="#444")
        .encode(
            x="span_s:Q", y=alt.Y("source:N", sort=alt.EncodingSortField("start")), text="label:N"
        )
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
    altair.Chart
        Bars of ``io_bytes`` [MiB, log scale] per job labelled ``job (app)``, coloured
        by the basis of the figures (per-operation trace or Darshan counters); jobs that
        moved nothing are left out.
    """
    _need(table, ("job_id", "app", "io_bytes", "basis"), "job_bytes_chart")
    alt = _alt()
    df = table.nlargest(top, "io_bytes").copy()
    df["job"] = df["job_id"].astype(str) + " (" + df["app"].fillna("?").astype(str) + ")"
    df["MiB"] = df["io_bytes"].astype(float) / 2**20
    df = df[df["MiB"] > 0]
    # log-scale bars need a positive start: one decade below the smallest job
    df["base"] = 10.0 ** np.floor(np.log10(df["MiB"].min())) / 10 if len(df) else 1.0
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("base:Q", scale=alt.Scale(type="log"), title="bytes read + written [MiB]"),
            x2="MiB:Q",
            y=alt.Y("job:N", sort=alt.EncodingSortField("MiB", order="descending"), title=None),
            color=alt.Color("basis:N", title="from"),
            tooltip=["job_id:Q", "app:N", alt.Tooltip("MiB:Q", format=",.3f"), "basis:N"],
        )
        .properties(**{"width": THEME["width"], **overrides})
    )
