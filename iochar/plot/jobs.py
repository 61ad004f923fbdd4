"""Charts of jobs and their variance (notebook 03): MiB/s/CN, Table IV, one job's history.

Carns et al. (2011), sections 4.1 and 5.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from iochar.errors import ParameterError
from iochar.plot._common import (
    NUM_FORMAT,
    THEME,
    NoChart,
    _alt,
    _byte_unit,
    _duration_unit,
    _need,
    _num,
    _time_tooltip,
    _time_x,
    _title,
    _Unit,
    _utc,
)

__all__ = [
    "mib_s_box_chart",
    "cv_table_chart",
    "cv_table_style",
    "job_history_chart",
]


# --- job metrics and repeated jobs (Carns et al. 2011, sections 4.1 and 5) ------------


def mib_s_box_chart(jobs, *, by: str = "app", **overrides: Any):
    """MiB/s/CN per project as box plots (Carns et al. 2011, Fig. 11).

    Boxes span Q1 to Q3 with the median, whiskers the minimum and maximum,
    as in the paper; filter the jobs first (the paper kept jobs of at least
    1,024 processes that moved at least 500 MiB).

    Parameters
    ----------
    jobs : pandas.DataFrame or iochar.analyze.jobs.JobMetrics
        :func:`iochar.analyze.jobs.job_metrics` (or its ``jobs`` frame).
    by : str, default "app"
        Column naming the project.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart or NoChart
        One horizontal box per project on a log MiB/s/CN axis, projects in
        order of their median; jobs without MiB/s/CN are left out. A
        :class:`NoChart` with fewer than two such jobs.
    """
    caller = "mib_s_box_chart"
    df = getattr(jobs, "jobs", jobs)
    if not isinstance(df, pd.DataFrame):
        raise ParameterError("jobs", caller, "a JobMetrics or its jobs DataFrame", type(jobs))
    _need(df, (by, "mib_s_cn"), caller)
    data = pd.DataFrame(
        {
            "project": df[by].astype("string").fillna("(unknown)"),
            "mib_s_cn": pd.to_numeric(df["mib_s_cn"], errors="coerce"),
        }
    )
    data = data[data["mib_s_cn"] > 0].astype({"project": object})
    if len(data) < 2:
        what = "No MiB/s/CN chart: "
        if data.empty:
            return NoChart(what + "no job has a MiB/s per compute node.")
        r = data.iloc[0]
        return NoChart(
            what + f"one job only ({by} {r['project']}: {r['mib_s_cn']:,.3g} MiB/s/CN); "
            "a box needs more."
        )
    alt = _alt()
    order = data.groupby("project")["mib_s_cn"].median().sort_values(ascending=False).index
    return (
        alt.Chart(data)
        .mark_boxplot(extent="min-max")
        .encode(
            y=alt.Y("project:N", sort=list(order), title=by),
            x=alt.X("mib_s_cn:Q", scale=alt.Scale(type="log"), title="MiB/s/CN"),
        )
        .properties(**{**THEME, **overrides})
    )


def cv_table_chart(groups: pd.DataFrame, *, label: str | None = None, **overrides: Any):
    """Coefficient of variation of I/O time per group of repeated jobs (Table IV as bars).

    Parameters
    ----------
    groups : pandas.DataFrame
        ``RepeatedJobs.groups`` from :func:`iochar.analyze.variance.repeated_jobs`.
    label : str, optional
        Column naming each bar (default: ``app`` with the process count, or
        the group id).
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart or NoChart
        Horizontal bars of ``cv_pct`` [%], largest first, labelled with the
        samples and mean ± standard deviation of the slowest rank's time (in
        s, min or h, one unit per chart). A :class:`NoChart` with fewer than
        two groups (the sentence gives the one group's figures).
    """
    caller = "cv_table_chart"
    _need(groups, ("group_id", "samples", "mean_s", "std_s", "cv_pct"), caller)
    if label is not None and label not in groups.columns:
        raise ParameterError("label", caller, "None or a column of groups", label)
    df = groups.copy()
    if label is not None:
        df["group"] = df[label].astype(str)
    elif "app" in df.columns:
        procs = " x" + df["procs"].astype("string") if "procs" in df.columns else ""
        app = df["app"].astype("string").fillna("?")
        df["group"] = (df["group_id"].astype(str) + ": " + app + procs).astype(str)
    else:
        df["group"] = df["group_id"].astype(str)
    tu = _duration_unit(pd.concat([df["mean_s"], df["std_s"]]))
    df["text"] = [
        f"n={n}, {m / tu.size:,.1f} ± {sd / tu.size:,.1f} {tu.symbol}"
        for n, m, sd in zip(df["samples"], df["mean_s"], df["std_s"].fillna(0), strict=True)
    ]
    what = "repeated-job CV chart (Table IV)"
    if len(df) < 2:
        if df.empty:
            return NoChart(f"No {what}: no group of repeated jobs.")
        r = df.iloc[0]
        return NoChart(
            f"No {what}: one group only ({r['group']}), whose slowest rank's I/O time "
            f"varies by {float(r['cv_pct']):.1f}% CV ({r['text']})."
        )
    alt = _alt()
    df["mean"], df["std"] = tu.scale(df["mean_s"]), tu.scale(df["std_s"])
    order = df.sort_values("cv_pct", ascending=False)["group"].tolist()
    base = alt.Chart(df[["group", "cv_pct", "samples", "mean", "std", "text"]]).encode(
        y=alt.Y("group:N", sort=order, title=None),
        x=alt.X("cv_pct:Q", title="CV of slowest-rank I/O time [%]"),
        tooltip=["group:N", "samples:Q",
                 alt.Tooltip("mean:Q", format=NUM_FORMAT, title=_title("mean", tu)),
                 alt.Tooltip("std:Q", format=NUM_FORMAT, title=_title("std", tu)),
                 alt.Tooltip("cv_pct:Q", format=".1f")],
    )  # fmt: skip
    bars = base.mark_bar()
    text = base.mark_text(align="left", dx=3).encode(text="text:N")
    return alt.layer(bars, text).properties(**{"width": 480, "height": 220, **overrides})


def cv_table_style(groups: pd.DataFrame):
    """Repeated-job groups styled like Carns et al. (2011) Table IV, for notebooks.

    Parameters
    ----------
    groups : pandas.DataFrame
        ``RepeatedJobs.groups`` from :func:`iochar.analyze.variance.repeated_jobs`.

    Returns
    -------
    pandas.io.formats.style.Styler
        Columns samples, procs, files, bytes read and written (``MiB rd``,
        ``MiB wr``: one binary unit for both, chosen from the largest), then
        mean, min, max, stddev (one unit of s, min or h, named in the caption)
        and CV [%] of the slowest rank's I/O time, with in-cell bars on CV.
    """
    _need(groups, ("samples", "gib_read", "gib_written", "mean_s", "cv_pct"), "cv_table_style")
    g = groups.copy()
    gib = float(1 << 30)
    bu = _byte_unit(pd.concat([g["gib_read"], g["gib_written"]]).astype(float) * gib)
    g[["gib_read", "gib_written"]] = g[["gib_read", "gib_written"]].astype(float) * gib / bu.size
    times = [c for c in ("mean_s", "min_s", "max_s", "std_s") if c in g.columns]
    tu = _duration_unit(pd.concat([g[c] for c in times]))
    g[times] = g[times].astype(float) / tu.size
    heads = {
        "samples": "samples", "procs": "procs", "files": "files",
        "gib_read": f"{bu.symbol} rd", "gib_written": f"{bu.symbol} wr", "mean_s": "mean",
        "min_s": "min", "max_s": "max", "std_s": "stddev", "cv_pct": "CV",
    }  # fmt: skip
    keep = [c for c in heads if c in g.columns]
    # group_id first: one app may have several groups (EarthScience A and B)
    name = [c for c in ("group_id", "app", "user") if c in g.columns]
    disp = (g.set_index(name) if name else g)[keep].rename(columns=heads)
    fmt = {heads[c]: "{:,.1f}" for c in ("gib_read", "gib_written", *times)}
    fmt["CV"] = "{:.1f}%"
    unit = {"s": "seconds", "min": "minutes", "h": "hours", "d": "days"}[tu.symbol]
    return (
        disp.style.format(
            {k: v for k, v in fmt.items() if k in disp.columns}, na_rep="-", escape="html"
        )
        .format_index(escape="html")  # app and user names come from the data
        .bar(subset=["CV"], color="#f5851855", vmin=0)
        .set_caption(f"I/O time by slowest rank ({unit}) of repeated jobs (Carns et al. 2011)")
    )


def _metric_unit(name: str, values: pd.Series):
    """Axis title and unit of a job metric: durations (``*_s``) and bytes scaled."""
    if name.endswith("_bytes"):
        unit = _byte_unit(values)
        return _title(name.removesuffix("_bytes"), unit), unit
    if name.endswith("_s") and not name.endswith("mib_s"):
        unit = _duration_unit(values)
        return _title(name.removesuffix("_s"), unit), unit
    if name.endswith("_pct"):
        return _title(name.removesuffix("_pct"), "%"), _Unit("%", 1)
    return name, _Unit("", 1)


def job_history_chart(similar, *, metric: str = "slowest_io_s", **overrides: Any):
    """One job against its group's history (:func:`iochar.analyze.variance.similar_jobs`).

    Parameters
    ----------
    similar : iochar.analyze.variance.SimilarJobs
        The job's placement and its group's history.
    metric : str, default "slowest_io_s"
        Metric column to plot (one of the compared metrics).
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart or NoChart
        The group's runs in start order (UTC time axis when known, else run
        number), a band of mean ± one standard deviation and a median rule
        of the other runs, and the job as a larger red point; durations
        (``*_s``) in s, min or h and bytes in one binary unit; the title gives
        its percentile and z-score. A :class:`NoChart` when the job is its
        group's only run with the metric.
    """
    caller = "job_history_chart"
    hist = getattr(similar, "history", None)
    place = getattr(similar, "placement", None)
    if not isinstance(hist, pd.DataFrame) or not isinstance(place, pd.DataFrame):
        raise ParameterError("similar", caller, "a SimilarJobs result", type(similar).__name__)
    if metric not in hist.columns or metric not in set(place["metric"]):
        raise ParameterError("metric", caller, "one of the compared metrics", metric)
    df = hist[["job_id", "is_job", metric]].copy()
    df["value"] = pd.to_numeric(df[metric], errors="coerce")
    y_title, unit = _metric_unit(metric, df["value"])
    if df["value"].notna().sum() < 2:
        own = df.loc[df["is_job"].astype(bool), "value"].dropna()
        val = ""
        if len(own):
            val = f" ({_num(float(own.iloc[0]) / unit.size)} {unit.symbol}".rstrip() + ")"
        return NoChart(
            f"No job-history chart: job {similar.job_id} is the only run of its group "
            f"with {metric}{val}."
        )
    alt = _alt()
    df["value"] = unit.scale(df["value"])
    temporal = "start_ts" in hist.columns and hist["start_ts"].notna().all()
    if temporal:
        df["x"] = _utc(hist["start_ts"])
        x_enc = _time_x("x", df["x"], title="job start (UTC)")
        x_tip = _time_tooltip("x", "job start (UTC)")
    else:
        df["x"] = range(1, len(df) + 1)
        x_enc = alt.X("x:O", title="run")
        x_tip = alt.Tooltip("x:O", title="run")
    df = df.drop(columns=metric)
    row = place[place["metric"] == metric].iloc[0]
    std = row["std"] if pd.notna(row["std"]) else 0
    band = pd.DataFrame(
        {"lo": [(row["mean"] - std) / unit.size], "hi": [(row["mean"] + std) / unit.size],
         "median": [row["median"] / unit.size]}
    )  # fmt: skip
    y = alt.Y("value:Q", title=y_title)
    pts = (
        alt.Chart(df)
        .mark_point(filled=True)
        .encode(
            x=x_enc,
            y=y,
            color=alt.condition(alt.datum.is_job, alt.value("#d62728"), alt.value("#4c78a8")),
            size=alt.condition(alt.datum.is_job, alt.value(120), alt.value(30)),
            tooltip=[
                "job_id:Q",
                x_tip,
                alt.Tooltip("value:Q", format=NUM_FORMAT, title=y_title),
                "is_job:N",
            ],
        )
    )
    layers = [pts]
    if band["lo"].notna().all():
        layers.insert(
            0,
            alt.Chart(band).mark_rect(opacity=0.15).encode(y=alt.Y("lo:Q", title=y_title), y2="hi"),
        )
    if band["median"].notna().all():
        layers.insert(
            1,
            alt.Chart(band).mark_rule(strokeDash=[4, 3]).encode(y=alt.Y("median:Q", title=y_title)),
        )
    pct, z = row["percentile"], row["z"]
    title = f"job {similar.job_id}: {metric}"
    if pd.notna(pct):
        title += f", percentile {pct:.0f}"
    if pd.notna(z):
        title += f", z = {z:+.2f}"
    return alt.layer(*layers).properties(**{**THEME, "title": title, **overrides})
