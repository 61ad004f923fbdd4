"""Charts of jobs and their variance (notebook 03): MiB/s/CN, Table IV, one job's history.

Carns et al. (2011), sections 4.1 and 5.
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
    "interface_chart",
    "files_procs_chart",
    "access_size_cdf_chart",
    "io_cost_chart",
    "mount_volume_chart",
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


# --- figures of Carns et al. 2011 (Figs. 3(a), 5, 10) and PyDarshan's summary ---------

#: Colours of the interfaces (Fig. 3(a)) and of read / write / metadata time.
IFACE_ORDER = ("POSIX", "STDIO", "MPI-IO", "HDF5", "PnetCDF")
_RWM = {"read": "#d62728", "write": "#1f77b4", "metadata": "#7f7f7f"}


def interface_chart(table: pd.DataFrame, **overrides: Any):
    """Share of jobs using each interface per job size (Carns et al. 2011, Fig. 3(a)).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`iochar.analyze.jobs.interface_table`.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart or NoChart
        Grouped bars: per process-count bin (x, in size order), the percent of
        its jobs that used each interface (one colour per interface; a job can
        use several, so bars do not add to 100). Tooltips give the jobs and the
        data those jobs moved. A :class:`NoChart` when no job was measured.
    """
    _need(table, ("procs_bin", "procs_lo", "interface", "jobs", "bin_jobs", "pct_jobs",
                  "io_bytes"), "interface_chart")  # fmt: skip
    if table.empty:
        return NoChart("No interface chart: no job has Darshan counters or traced calls.")
    alt = _alt()
    d = table.assign(
        moved=table["io_bytes"].astype(float).map(_bytes_text),
        procs_lo=table["procs_lo"].astype(float),
    )
    order = d.sort_values("procs_lo")["procs_bin"].drop_duplicates().tolist()
    iface = [i for i in IFACE_ORDER if i in set(d["interface"])]
    return (
        alt.Chart(
            d[["procs_bin", "procs_lo", "interface", "jobs", "bin_jobs", "pct_jobs", "moved"]]
        )  # fmt: skip
        .mark_bar()
        .encode(
            x=alt.X(
                "procs_bin:N", sort=order, title="processes per job", axis=alt.Axis(labelAngle=0)
            ),  # fmt: skip
            xOffset=alt.XOffset("interface:N", sort=iface),
            y=alt.Y(
                "pct_jobs:Q", title="jobs using the interface [%]", scale=alt.Scale(domain=[0, 100])
            ),  # fmt: skip
            color=alt.Color("interface:N", sort=iface, title="interface"),
            tooltip=[
                alt.Tooltip("procs_bin:N", title="processes"),
                "interface:N",
                alt.Tooltip("jobs:Q", title="jobs using it"),
                alt.Tooltip("bin_jobs:Q", title="jobs of this size"),
                alt.Tooltip("pct_jobs:Q", format=".1f", title="share [%]"),
                alt.Tooltip("moved:N", title="data those jobs moved"),
            ],
        )
        .properties(**{**THEME, **overrides})
    )


def files_procs_chart(jobs, *, by: str = "app", **overrides: Any):
    """Files accessed against processes per job (Carns et al. 2011, Fig. 5).

    Parameters
    ----------
    jobs : pandas.DataFrame or iochar.analyze.jobs.JobMetrics
        :func:`iochar.analyze.jobs.job_metrics` (or its ``jobs`` frame:
        ``nprocs``, ``files``, ``sharing``, ``by``).
    by : str, default "app"
        Column naming the project (in the tooltip).
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart or NoChart
        One point per measured job, processes (x, log) against files (y,
        symmetric log so jobs on no files sit on the 0 line, as Fig. 5's
        fourth group), coloured by file-sharing pattern, with the N:N line
        (one file per process, dashed) and the N:1 line (one file, dotted).
        A :class:`NoChart` with fewer than two measured jobs.
    """
    caller = "files_procs_chart"
    df = getattr(jobs, "jobs", jobs)
    if not isinstance(df, pd.DataFrame):
        raise ParameterError("jobs", caller, "a JobMetrics or its jobs DataFrame", type(jobs))
    _need(df, ("job_id", "nprocs", "files", "sharing", by), caller)
    d = pd.DataFrame(
        {
            "job_id": df["job_id"].to_numpy(),
            "project": df[by].astype("string").fillna("(unknown)").astype(object).to_numpy(),
            "nprocs": pd.to_numeric(df["nprocs"], errors="coerce").astype(float).to_numpy(),
            "files": pd.to_numeric(df["files"], errors="coerce").astype(float).to_numpy(),
            "sharing": df["sharing"].astype(object).to_numpy(),
        }
    ).dropna(subset=["nprocs", "files"])
    d = d[d["nprocs"] >= 1]
    if len(d) < 2:
        if d.empty:
            return NoChart("No files-per-process chart: no job with a process count was measured.")
        r = d.iloc[0]
        return NoChart(
            f"No files-per-process chart: one job only (job {r['job_id']}: "
            f"{r['nprocs']:,.0f} processes, {r['files']:,.0f} files)."
        )
    alt = _alt()
    hi = float(max(d["nprocs"].max(), d["files"].max(), 2.0))
    ref = pd.DataFrame(
        {"nprocs": [1.0, hi, 1.0, hi], "files": [1.0, hi, 1.0, 1.0],
         "trend": ["N:N (a file per process)"] * 2 + ["N:1 (one file)"] * 2}
    )  # fmt: skip
    x = alt.X("nprocs:Q", scale=alt.Scale(type="log"), title="processes")
    ticks = [0.0] + [10.0**k for k in range(int(np.floor(np.log10(hi))) + 1)]
    y = alt.Y("files:Q", scale=alt.Scale(type="symlog"), title="files accessed",
              axis=alt.Axis(values=ticks, format=",.0f"))  # fmt: skip
    lines = (
        alt.Chart(ref)
        .mark_line(color="#999", strokeDash=[4, 3])
        .encode(
            x=x, y=y, detail="trend:N", tooltip=[alt.Tooltip("trend:N", title="reference")]
        )  # fmt: skip
    )
    pats = [p for p in ("N:N", "N:M", "N:1", "1:1", "none") if p in set(d["sharing"])]
    pts = (
        alt.Chart(d)
        .mark_point(filled=True, size=40, opacity=0.7)
        .encode(
            x=x,
            y=y,
            color=alt.Color("sharing:N", sort=pats, title="pattern"),
            tooltip=[
                "job_id:Q",
                alt.Tooltip("project:N", title=by),
                "nprocs:Q",
                "files:Q",
                "sharing:N",
            ],  # fmt: skip
        )
    )
    return alt.layer(lines, pts).properties(**{**THEME, **overrides})


def access_size_cdf_chart(cdf: pd.DataFrame, **overrides: Any):
    """Cumulative share of accesses by access size (Carns et al. 2011, Fig. 10).

    Parameters
    ----------
    cdf : pandas.DataFrame
        :func:`iochar.analyze.jobs.size_cdf`.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart or NoChart
        Per op (read red, write blue), the share of accesses at or below each
        of Darshan's ten size bins (x, in size order: 0-100 B ... 1G+), as
        lines with points. A :class:`NoChart` when no access was counted.
    """
    _need(cdf, ("op", "bin", "bin_lo", "count", "share", "cum_share"), "access_size_cdf_chart")
    if cdf.empty or cdf["count"].sum() == 0:
        return NoChart("No access-size CDF: no read or write was counted in any size bin.")
    alt = _alt()
    from iochar.analyze.jobs import SIZE_BINS

    order = [b for b, _, _ in SIZE_BINS]
    d = cdf[["op", "bin", "count", "share", "cum_share"]].copy()
    ops = [o for o in ("read", "write") if o in set(d["op"])]
    return (
        alt.Chart(d)
        .mark_line(point=True, interpolate="step-after")
        .encode(
            x=alt.X(
                "bin:N",
                sort=order,
                title="access size [bytes, Darshan bins]",
                axis=alt.Axis(labelAngle=0),
            ),  # fmt: skip
            y=alt.Y(
                "cum_share:Q",
                title="share of accesses at or below",
                scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%"),
            ),  # fmt: skip
            color=alt.Color(
                "op:N",
                sort=ops,
                title=None,
                scale=alt.Scale(domain=["read", "write"], range=[_RWM["read"], _RWM["write"]]),
            ),  # fmt: skip
            tooltip=[
                "op:N",
                alt.Tooltip("bin:N", title="size"),
                alt.Tooltip("count:Q", format=","),
                alt.Tooltip("share:Q", format=".1%", title="in this bin"),
                alt.Tooltip("cum_share:Q", format=".1%", title="at or below"),
            ],  # fmt: skip
        )
        .properties(**{**THEME, **overrides})
    )


def io_cost_chart(cost: pd.DataFrame, **overrides: Any):
    """Read, write and metadata time per interface (PyDarshan summary's "I/O Cost").

    Parameters
    ----------
    cost : pandas.DataFrame
        :func:`iochar.analyze.jobs.io_cost` (one job, or many: their times
        are summed per interface).
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart or NoChart
        One horizontal bar per interface, split into read, write and metadata
        time summed over processes (and jobs) in one duration unit; interfaces
        are drawn apart, never added (MPI-IO time holds the POSIX time under
        it). A :class:`NoChart` when no time was recorded.
    """
    _need(cost, ("interface", "read_s", "write_s", "meta_s", "job_id"), "io_cost_chart")
    g = cost.groupby("interface").agg(
        read=("read_s", "sum"),
        write=("write_s", "sum"),
        metadata=("meta_s", "sum"),
        jobs=("job_id", "nunique"),
    )
    g = g[(g[["read", "write", "metadata"]].sum(axis=1) > 0)]  # fmt: skip
    if g.empty:
        return NoChart("No I/O cost chart: no read, write or metadata time was recorded.")
    alt = _alt()
    long = g.reset_index().melt(id_vars=["interface", "jobs"], var_name="kind", value_name="s")
    unit = _duration_unit(g[["read", "write", "metadata"]].sum(axis=1))
    long["t"] = long["s"] / unit.size
    tot = long.groupby("interface")["s"].transform("sum")
    long["share"] = long["s"] / tot
    order = [i for i in IFACE_ORDER if i in set(long["interface"])]
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            y=alt.Y("interface:N", sort=order, title=None),
            x=alt.X("t:Q", stack="zero", title=_title("time summed over processes", unit)),
            color=alt.Color(
                "kind:N",
                sort=list(_RWM),
                title=None,
                scale=alt.Scale(domain=list(_RWM), range=list(_RWM.values())),
            ),
            order=alt.Order("kind:N"),
            tooltip=[
                "interface:N",
                alt.Tooltip("kind:N", title="time in"),
                alt.Tooltip("t:Q", format=NUM_FORMAT, title=f"time [{unit.symbol}]"),
                alt.Tooltip("share:Q", format=".1%", title="of the interface's time"),
                alt.Tooltip("jobs:Q", title="jobs"),
            ],  # fmt: skip
        )
        .properties(**{"width": THEME["width"], **overrides})
    )


def mount_volume_chart(table: pd.DataFrame, *, top: int = 12, **overrides: Any):
    """Bytes read and written per mount point (PyDarshan summary's "Data Access by Category").

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`iochar.analyze.jobs.volume_by_mount`.
    top : int, default 12
        Mount points shown, by bytes moved (the others are summed in "(others)").
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart or NoChart
        Per mount point (y, most data first) bars of bytes read and written
        side by side on a log axis in binary units. A :class:`NoChart` when no
        file moved any byte.
    """
    _need(table, ("mount", "bytes_read", "bytes_written", "jobs"), "mount_volume_chart")
    d = table[["mount", "bytes_read", "bytes_written", "jobs"]].copy()
    d[["bytes_read", "bytes_written"]] = d[["bytes_read", "bytes_written"]].astype(float)
    d = d[(d["bytes_read"] + d["bytes_written"]) > 0]
    if d.empty:
        return NoChart("No data-by-mount chart: no file read or written any bytes.")
    d["_t"] = d["bytes_read"] + d["bytes_written"]
    d = d.sort_values("_t", ascending=False)
    if len(d) > top:
        rest = d.iloc[top - 1 :]
        d = pd.concat([d.iloc[: top - 1], pd.DataFrame({
            "mount": [f"(others: {len(rest)})"], "bytes_read": [rest["bytes_read"].sum()],
            "bytes_written": [rest["bytes_written"].sum()], "jobs": [rest["jobs"].sum()],
            "_t": [rest["_t"].sum()]})], ignore_index=True)  # fmt: skip
    alt = _alt()
    order = d["mount"].astype(str).tolist()
    long = d.melt(id_vars=["mount", "jobs"], value_vars=["bytes_read", "bytes_written"],
                  var_name="op", value_name="bytes")  # fmt: skip
    long["op"] = long["op"].map({"bytes_read": "read", "bytes_written": "write"})
    long = long[long["bytes"] > 0].copy()
    long["moved"] = long["bytes"].map(_bytes_text)
    long["mount"] = long["mount"].astype(str)
    from iochar.plot._common import _log_bytes_axis

    base = 2.0 ** (np.floor(np.log2(long["bytes"].min())) - 3)
    long["base"] = base
    x = _log_bytes_axis(pd.concat([long["base"], long["bytes"]]), title="bytes")
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            y=alt.Y("mount:N", sort=order, title=None),
            yOffset=alt.YOffset("op:N", sort=["read", "write"]),
            x=alt.X("base:Q", **x),
            x2="bytes:Q",
            color=alt.Color(
                "op:N",
                sort=["read", "write"],
                title=None,
                scale=alt.Scale(domain=["read", "write"], range=[_RWM["read"], _RWM["write"]]),
            ),  # fmt: skip
            tooltip=[
                alt.Tooltip("mount:N", title="mount point"),
                "op:N",
                alt.Tooltip("moved:N", title="bytes"),
                "jobs:Q",
            ],  # fmt: skip
        )
        .properties(**{"width": THEME["width"], "height": {"step": 9}, **overrides})
    )
