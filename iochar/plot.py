"""Altair chart builders over analysis results (never over a Store).

Each ``*_chart`` takes the DataFrame an ``iochar.analyze`` function returned
and gives an :class:`altair.Chart`; keyword overrides go to ``properties``.
Charts are plain Vega-Lite, so they render offline (vl-convert or inlined
scripts in reports).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from iochar.errors import MissingDependencyError, ParameterError

__all__ = [
    "throughput_chart",
    "class_rate_chart",
    "class_breakdown_chart",
    "size_cdf_chart",
    "age_cdf_chart",
    "burst_chart",
    "throughput_cdf_chart",
    "idle_table_chart",
    "idle_table_style",
    "periodogram_chart",
    "cycles_chart",
]

#: One look for every chart.
THEME = {"width": 640, "height": 220}


def _alt():
    try:
        import altair as alt
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise MissingDependencyError("altair", "report", "drawing charts") from exc
    return alt


def _need(df: pd.DataFrame, cols: tuple[str, ...], caller: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ParameterError(
            "df", caller, f"a DataFrame with columns {', '.join(cols)} (missing {missing})", "..."
        )


def throughput_chart(df: pd.DataFrame, **overrides: Any):
    """Rate over time per target, one row of panels per metric.

    Parameters
    ----------
    df : pandas.DataFrame
        The result of :func:`iochar.analyze.throughput.throughput`.
    **overrides
        Passed to ``Chart.properties`` (``width``, ``height``, ``title``...).

    Returns
    -------
    altair.FacetChart
        Lines of ``rate_per_s`` over ``ts`` coloured by target; intervals
        flagged as reset, wrap or gap are marked with points.
    """
    _need(df, ("target", "metric", "ts", "rate_per_s", "flagged"), "throughput_chart")
    alt = _alt()
    base = alt.Chart(df).encode(
        x=alt.X("ts:T", title="time (UTC)"),
        y=alt.Y("rate_per_s:Q", title="per second"),
        color=alt.Color("target:N", title="target"),
        tooltip=["target", "metric", "ts:T", "rate_per_s:Q", "flagged"],
    )
    lines = base.mark_line()
    flags = base.transform_filter(alt.datum.flagged).mark_point(shape="triangle", size=60)
    props = {**THEME, **overrides}
    return alt.layer(lines, flags).properties(**props).facet(row=alt.Row("metric:N", title=None))


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


def _thin_cdf(df: pd.DataFrame, x: str, max_points: int) -> pd.DataFrame:
    """At most ``max_points`` rows of a CDF sorted by ``x``, for a log ``x`` axis.

    Keeps, for each point of a geometric grid, the last row at or below it (the
    step's value there), plus the first and last rows: the drawn steps are exact at
    grid resolution (``max_points`` points per decade span) and never invented.
    """
    pos = df[df[x] > 0]
    if len(pos) <= max_points:
        return df
    xs = pos[x].to_numpy(dtype=float)
    grid = np.geomspace(xs[0], xs[-1], max_points)
    idx = np.unique(np.clip(np.searchsorted(xs, grid, side="right") - 1, 0, len(xs) - 1))
    idx = np.union1d(idx, [0, len(xs) - 1])
    return pos.iloc[idx]


def _cdf_chart(
    df: pd.DataFrame, x: str, x_title: str, overrides: dict[str, Any], max_points: int = 2000
):
    alt = _alt()
    df = _thin_cdf(df.sort_values(x), x, max_points)
    long = df.melt(id_vars=[x], value_vars=["cdf_files", "cdf_bytes"], var_name="by")
    long["by"] = long["by"].map({"cdf_files": "by file count", "cdf_bytes": "by bytes"})
    long = long[long[x] > 0]  # a log axis has no place for 0
    return (
        alt.Chart(long)
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X(f"{x}:Q", scale=alt.Scale(type="log"), title=x_title),
            y=alt.Y("value:Q", axis=alt.Axis(format="%"), title="cumulative share"),
            color=alt.Color("by:N", title=None),
            tooltip=[f"{x}:Q", "by:N", alt.Tooltip("value:Q", format=".1%")],
        )
        .properties(**{**THEME, **overrides})
    )


def size_cdf_chart(df: pd.DataFrame, *, max_points: int = 2000, **overrides: Any):
    """File-size CDF by file count and by bytes (Carns et al. 2011, Fig. 8).

    Parameters
    ----------
    df : pandas.DataFrame
        The result of :func:`iochar.analyze.snapshots.size_cdf`.
    max_points : int, default 2000
        Rows drawn at most; longer CDFs are sampled on a geometric grid of the
        size axis, keeping each step's exact value (a real file system has far
        more distinct sizes than a chart can carry).
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart
        Two step lines over a log size axis (empty files are left off it).
    """
    _need(df, ("size_bytes", "cdf_files", "cdf_bytes"), "size_cdf_chart")
    return _cdf_chart(df, "size_bytes", "file size [bytes]", overrides, max_points)


def age_cdf_chart(df: pd.DataFrame, *, max_points: int = 2000, **overrides: Any):
    """File-age CDF by file count and by bytes (Carns et al. 2011, Fig. 9).

    Parameters
    ----------
    df : pandas.DataFrame
        The result of :func:`iochar.analyze.snapshots.age_cdf`.
    max_points : int, default 2000
        Rows drawn at most; longer CDFs are sampled on a geometric grid of the
        age axis, keeping each step's exact value.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart
        Two step lines over a log age axis in days.
    """
    _need(df, ("age_days", "cdf_files", "cdf_bytes"), "age_cdf_chart")
    return _cdf_chart(df, "age_days", "age [days]", overrides, max_points)


# --- bursts (Carns et al. 2011, section 4) ---------------------------------------------

#: Shading of segment() phases in burst_chart.
BURST_COLORS = {"burst": "#f58518", "gap": "#9d9d9d"}


def _thin(rates: pd.Series, max_points: int) -> pd.Series:
    """At most ``max_points`` points: the maximum of each run of samples (peaks stay)."""
    n = len(rates)
    if n <= max_points:
        return rates
    import numpy as np

    starts = np.unique(np.linspace(0, n, max_points, endpoint=False).astype(np.int64))
    values = rates.to_numpy(float)
    peak = np.fmax.reduceat(values, starts)
    last = np.r_[starts[1:], n] - 1
    return pd.Series(peak, index=rates.index[last], name=rates.name)


def burst_chart(phases: pd.DataFrame, rates, *, max_points: int = 5000, **overrides: Any):
    """Throughput over time with burst phases (and gaps) shaded.

    Parameters
    ----------
    phases : pandas.DataFrame
        The result of :func:`iochar.analyze.bursts.segment`; its
        ``attrs["threshold_per_s"]`` is drawn as a dashed rule.
    rates : pandas.Series or pandas.DataFrame
        The series that was segmented: rates [amount/s] indexed by time, or
        a throughput() table (summed with :func:`iochar.analyze.bursts.aggregate`).
    max_points : int, default 5000
        Longer series are thinned to this many points, each the highest rate
        of its run of samples, so peaks stay visible.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart
        Shaded rectangles per burst / gap phase, the rate line, and the
        threshold rule.
    """
    _need(phases, ("state", "start", "end"), "burst_chart")
    if isinstance(rates, pd.DataFrame):
        from iochar.analyze.bursts import aggregate

        rates = aggregate(rates)
    if not isinstance(rates, pd.Series):
        raise ParameterError("rates", "burst_chart", "a Series of rates", type(rates).__name__)
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 2:
        raise ParameterError("max_points", "burst_chart", "an int >= 2", max_points)
    alt = _alt()
    temporal = pd.api.types.is_datetime64_any_dtype(rates.index)
    kind = "T" if temporal else "Q"
    x_title = "time (UTC)" if temporal else "time [s]"
    line_df = _thin(rates, max_points).rename("rate_per_s").rename_axis("t").reset_index()
    shade = phases.loc[phases["state"].isin(list(BURST_COLORS)), ["state", "start", "end"]]
    shade = shade.rename(columns={"state": "phase"})
    rects = (
        alt.Chart(shade)
        .mark_rect(opacity=0.3)
        .encode(
            x=alt.X(f"start:{kind}", title=x_title),
            x2="end",
            color=alt.Color(
                "phase:N",
                scale=alt.Scale(domain=list(BURST_COLORS), range=list(BURST_COLORS.values())),
                title="phase",
            ),
            tooltip=["phase:N", f"start:{kind}", f"end:{kind}"],
        )
    )
    line = (
        alt.Chart(line_df)
        .mark_line(interpolate="step-before", invalid="break-paths-show-domains")
        .encode(
            x=alt.X(f"t:{kind}", title=x_title),
            y=alt.Y("rate_per_s:Q", title="per second"),
            tooltip=[f"t:{kind}", "rate_per_s:Q"],
        )
    )
    layers = [rects, line]
    thr = phases.attrs.get("threshold_per_s")
    if thr is not None:
        rule = pd.DataFrame({"threshold_per_s": [float(thr)]})
        layers.append(alt.Chart(rule).mark_rule(strokeDash=[4, 3]).encode(y="threshold_per_s:Q"))
    return alt.layer(*layers).properties(**{**THEME, **overrides})


def throughput_cdf_chart(cdf: pd.DataFrame, *, max_points: int = 2000, **overrides: Any):
    """CDF of throughput as a fraction of peak, by share of time (Carns et al. 2011, Fig. 7).

    Parameters
    ----------
    cdf : pandas.DataFrame
        The result of :func:`iochar.analyze.bursts.throughput_cdf`.
    max_points : int, default 2000
        A longer CDF is drawn from its exact steps at this many evenly
        spaced fractions of peak (and its last row).
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart
        A step line of ``share_of_time`` over ``fraction_of_peak``.
    """
    _need(cdf, ("rate_per_s", "fraction_of_peak", "share_of_time"), "throughput_cdf_chart")
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 2:
        raise ParameterError("max_points", "throughput_cdf_chart", "an int >= 2", max_points)
    alt = _alt()
    if len(cdf) > max_points:
        import numpy as np

        frac = cdf["fraction_of_peak"].to_numpy(float)
        grid = np.linspace(frac[0], frac[-1], max_points - 1)
        rows = np.unique(np.r_[np.searchsorted(frac, grid, side="right") - 1, len(frac) - 1])
        cdf = cdf.iloc[rows[rows >= 0]]
    return (
        alt.Chart(cdf)
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("fraction_of_peak:Q", axis=alt.Axis(format="%"), title="share of peak"),
            y=alt.Y("share_of_time:Q", axis=alt.Axis(format="%"), title="share of time"),
            tooltip=[
                "rate_per_s:Q",
                alt.Tooltip("fraction_of_peak:Q", format=".1%"),
                alt.Tooltip("share_of_time:Q", format=".1%"),
            ],
        )
        .properties(**{**THEME, **overrides})
    )


def idle_table_chart(table: pd.DataFrame, **overrides: Any):
    """Idle time per duration bucket, as bars (Carns et al. 2011, Table III).

    Parameters
    ----------
    table : pandas.DataFrame
        The result of :func:`iochar.analyze.bursts.idle_table`.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart
        Horizontal bars of ``percent`` of total time per bucket, in the
        table's order, labelled with the number of periods.
    """
    _need(table, ("count", "minutes", "percent"), "idle_table_chart")
    alt = _alt()
    df = table.rename_axis("duration_min").reset_index()
    df["duration_min"] = df["duration_min"].astype(str)
    df["label"] = df["count"].map(lambda c: f"{c:,} periods")
    order = df["duration_min"].tolist()
    base = alt.Chart(df).encode(
        y=alt.Y("duration_min:N", sort=order, title="idle period [minutes]"),
        x=alt.X("percent:Q", title="% of total time"),
        tooltip=["duration_min:N", "count:Q", "minutes:Q", alt.Tooltip("percent:Q", format=".1f")],
    )
    bars = base.mark_bar()
    text = base.mark_text(align="left", dx=3).encode(text="label:N")
    return alt.layer(bars, text).properties(**{"width": 480, "height": 220, **overrides})


def idle_table_style(table: pd.DataFrame):
    """The idle table styled like Carns et al. (2011) Table III, for notebooks.

    Parameters
    ----------
    table : pandas.DataFrame
        The result of :func:`iochar.analyze.bursts.idle_table`.

    Returns
    -------
    pandas.io.formats.style.Styler
        Columns "Count", "Cumulative Minutes", "Percentage of Total Time"
        with in-cell bars, and a caption stating the idle definition,
        interval, peak and gap time from ``table.attrs``.
    """
    _need(table, ("count", "minutes", "percent"), "idle_table_style")
    heads = {
        "count": "Count",
        "minutes": "Cumulative Minutes",
        "percent": "Percentage of Total Time",
    }
    disp = table[list(heads)].rename(columns=heads).rename_axis("Duration (minutes)")
    whole = bool((disp["Cumulative Minutes"] % 1 == 0).all())
    a = table.attrs
    if a.get("strict"):
        rule = "no activity at all"
    elif a.get("idle_fraction") is not None:
        rule = (
            f"below {a['idle_fraction']:.0%} of peak ({a.get('peak_per_s', float('nan')):,.0f}/s)"
        )
    else:
        rule = "idle"
    caption = (
        f"Idle periods ({rule}) over {a.get('interval_s', float('nan')):g}-s intervals; "
        f"gaps {a.get('gap_s', 0.0) / 60:,.1f} min not counted"
    )
    return (
        disp.style.format(
            {
                "Count": "{:,}",
                "Cumulative Minutes": "{:,.0f}" if whole else "{:,.2f}",
                "Percentage of Total Time": "{:.1f}%",
            },
            escape="html",
        )
        .bar(subset=["Percentage of Total Time"], color="#f5851855", vmin=0)
        .set_caption(caption)
    )


# --- cycles (Miller & Katz 1991, section 5.3) ---------------------------------------------


def _thin_spectrum(spec: pd.DataFrame, max_points: int) -> pd.DataFrame:
    """At most ``max_points`` rows: the strongest of each run of frequencies (peaks stay)."""
    n = len(spec)
    if n <= max_points:
        return spec
    import numpy as np

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
    altair.Chart
        One horizontal box per project on a log MiB/s/CN axis, projects in
        order of their median; jobs without MiB/s/CN are left out.
    """
    caller = "mib_s_box_chart"
    df = getattr(jobs, "jobs", jobs)
    if not isinstance(df, pd.DataFrame):
        raise ParameterError("jobs", caller, "a JobMetrics or its jobs DataFrame", type(jobs))
    _need(df, (by, "mib_s_cn"), caller)
    alt = _alt()
    data = pd.DataFrame(
        {
            "project": df[by].astype("string").fillna("(unknown)"),
            "mib_s_cn": pd.to_numeric(df["mib_s_cn"], errors="coerce"),
        }
    )
    data = data[data["mib_s_cn"] > 0].astype({"project": object})
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
    altair.LayerChart
        Horizontal bars of ``cv_pct`` [%], largest first, labelled with the
        samples and mean ± standard deviation of the slowest rank's time.
    """
    caller = "cv_table_chart"
    _need(groups, ("group_id", "samples", "mean_s", "std_s", "cv_pct"), caller)
    if label is not None and label not in groups.columns:
        raise ParameterError("label", caller, "None or a column of groups", label)
    alt = _alt()
    df = groups.copy()
    if label is not None:
        df["group"] = df[label].astype(str)
    elif "app" in df.columns:
        procs = " x" + df["procs"].astype("string") if "procs" in df.columns else ""
        app = df["app"].astype("string").fillna("?")
        df["group"] = (df["group_id"].astype(str) + ": " + app + procs).astype(str)
    else:
        df["group"] = df["group_id"].astype(str)
    df["text"] = [
        f"n={n}, {m:,.1f} ± {s:,.1f} s"
        for n, m, s in zip(df["samples"], df["mean_s"], df["std_s"].fillna(0), strict=True)
    ]
    order = df.sort_values("cv_pct", ascending=False)["group"].tolist()
    base = alt.Chart(df[["group", "cv_pct", "samples", "mean_s", "std_s", "text"]]).encode(
        y=alt.Y("group:N", sort=order, title=None),
        x=alt.X("cv_pct:Q", title="CV of slowest-rank I/O time [%]"),
        tooltip=["group:N", "samples:Q", alt.Tooltip("mean_s:Q", format=",.1f"),
                 alt.Tooltip("std_s:Q", format=",.1f"), alt.Tooltip("cv_pct:Q", format=".1f")],
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
        Columns samples, procs, files, GiB rd, GiB wr, then mean, min, max,
        stddev [s] and CV [%] of the slowest rank's I/O time, with in-cell
        bars on CV.
    """
    _need(groups, ("samples", "gib_read", "gib_written", "mean_s", "cv_pct"), "cv_table_style")
    heads = {
        "samples": "samples", "procs": "procs", "files": "files", "gib_read": "GiB rd",
        "gib_written": "GiB wr", "mean_s": "mean", "min_s": "min", "max_s": "max",
        "std_s": "stddev", "cv_pct": "CV",
    }  # fmt: skip
    keep = [c for c in heads if c in groups.columns]
    # group_id first: one app may have several groups (EarthScience A and B)
    name = [c for c in ("group_id", "app", "user") if c in groups.columns]
    disp = (groups.set_index(name) if name else groups)[keep].rename(columns=heads)
    fmt = {h: "{:,.1f}" for h in ("GiB rd", "GiB wr", "mean", "min", "max", "stddev")}
    fmt["CV"] = "{:.1f}%"
    return (
        disp.style.format(
            {k: v for k, v in fmt.items() if k in disp.columns}, na_rep="-", escape="html"
        )
        .format_index(escape="html")  # app and user names come from the data
        .bar(subset=["CV"], color="#f5851855", vmin=0)
        .set_caption("I/O time by slowest rank (seconds) of repeated jobs (Carns et al. 2011)")
    )


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
    altair.LayerChart
        The group's runs in start order (time axis when known, else run
        number), a band of mean ± one standard deviation and a median rule
        of the other runs, and the job as a larger red point; the title
        gives its percentile and z-score.
    """
    caller = "job_history_chart"
    hist = getattr(similar, "history", None)
    place = getattr(similar, "placement", None)
    if not isinstance(hist, pd.DataFrame) or not isinstance(place, pd.DataFrame):
        raise ParameterError("similar", caller, "a SimilarJobs result", type(similar).__name__)
    if metric not in hist.columns or metric not in set(place["metric"]):
        raise ParameterError("metric", caller, "one of the compared metrics", metric)
    alt = _alt()
    df = hist[["job_id", "is_job", metric]].copy()
    df["value"] = pd.to_numeric(df[metric], errors="coerce")
    temporal = "start_ts" in hist.columns and hist["start_ts"].notna().all()
    if temporal:
        df["x"] = pd.to_datetime(hist["start_ts"])
        x_enc, x_title = "x:T", "job start (UTC)"
    else:
        df["x"] = range(1, len(df) + 1)
        x_enc, x_title = "x:O", "run"
    df = df.drop(columns=metric)
    row = place[place["metric"] == metric].iloc[0]
    band = pd.DataFrame(
        {"lo": [row["mean"] - (row["std"] if pd.notna(row["std"]) else 0)],
         "hi": [row["mean"] + (row["std"] if pd.notna(row["std"]) else 0)],
         "median": [row["median"]]}
    )  # fmt: skip
    pts = (
        alt.Chart(df)
        .mark_point(filled=True)
        .encode(
            x=alt.X(x_enc, title=x_title),
            y=alt.Y("value:Q", title=metric),
            color=alt.condition(alt.datum.is_job, alt.value("#d62728"), alt.value("#4c78a8")),
            size=alt.condition(alt.datum.is_job, alt.value(120), alt.value(30)),
            tooltip=["job_id:Q", "value:Q", "is_job:N"],
        )
    )
    layers = [pts]
    if band["lo"].notna().all():
        layers.insert(0, alt.Chart(band).mark_rect(opacity=0.15).encode(y="lo:Q", y2="hi"))
    if band["median"].notna().all():
        layers.insert(1, alt.Chart(band).mark_rule(strokeDash=[4, 3]).encode(y="median:Q"))
    pct, z = row["percentile"], row["z"]
    title = f"job {similar.job_id}: {metric}"
    if pd.notna(pct):
        title += f", percentile {pct:.0f}"
    if pd.notna(z):
        title += f", z = {z:+.2f}"
    return alt.layer(*layers).properties(**{**THEME, "title": title, **overrides})


__all__ += ["mib_s_box_chart", "cv_table_chart", "cv_table_style", "job_history_chart"]


# ------------------------------------------------------------- FSU (Uselton & Wright 2013)

#: Read red and write blue, as in Uselton & Wright's figures; FSU in black.
FSU_COLORS = {"read": "#d62728", "write": "#1f77b4", "FSU": "#000000"}


def _size_label(b: float) -> str:
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= size and b % size == 0:
            return f"{int(b // size)}{unit}"
    return f"{int(b)}"


def _thin_frame(df: pd.DataFrame, cols: list[str], max_points: int) -> pd.DataFrame:
    """At most ``max_points`` rows: each the maximum of its run of rows (peaks stay)."""
    n = len(df)
    if n <= max_points:
        return df
    import numpy as np

    starts = np.unique(np.linspace(0, n, max_points, endpoint=False).astype(np.int64))
    last = np.r_[starts[1:], n] - 1
    out = {"ts": df["ts"].to_numpy()[last]}
    for c in cols:
        out[c] = np.fmax.reduceat(df[c].to_numpy(float), starts)
    return pd.DataFrame(out)


def fsu_chart(series: pd.DataFrame, *, bandwidth=None, max_points: int = 5000, **overrides: Any):
    """Observed bandwidth and FSU over time on two axes (Uselton & Wright 2013, Fig. 10).

    Parameters
    ----------
    series : pandas.DataFrame
        :func:`iochar.analyze.fsu.fsu_series` (averaged over targets with
        :func:`iochar.analyze.fsu.fsu_filesystem` when it holds several) or
        :func:`~iochar.analyze.fsu.fsu_filesystem` output.
    bandwidth : pandas.DataFrame, optional
        A :func:`iochar.analyze.throughput.throughput` table of
        ``read_bytes`` / ``write_bytes`` (e.g. LMT counters), summed over
        targets, for the bandwidth lines. Default: the bytes in the
        histograms themselves (count x bin size per interval).
    max_points : int, default 5000
        Longer series are thinned to this many points, each the highest
        value of its run of intervals, so peaks stay visible.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart
        Read (red) and write (blue) bandwidth [MiB/s] on the left axis, FSU
        [%] in black (line and points, so a lone interval shows) on the right
        axis; skipped intervals (a ``reason`` given) break both.
    """
    _need(series, ("ts", "interval_s", "fsu_pct", "read_bytes", "write_bytes"), "fsu_chart")
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 2:
        raise ParameterError("max_points", "fsu_chart", "an int >= 2", max_points)
    alt = _alt()
    s = series
    if "target" in s.columns and s["target"].nunique() > 1:
        from iochar.analyze.fsu import fsu_filesystem

        s = fsu_filesystem(s)
    s = s.sort_values("ts")
    iv = s["interval_s"].where(s["interval_s"] > 0)
    if "reason" in s.columns:  # skipped intervals (reset, wrap, gap): no bandwidth either
        iv = iv.where(s["reason"].fillna("").eq(""))
    if bandwidth is None:
        bw = pd.DataFrame(
            {
                "ts": s["ts"].to_numpy(),
                "read": (s["read_bytes"] / iv / (1 << 20)).to_numpy(float),
                "write": (s["write_bytes"] / iv / (1 << 20)).to_numpy(float),
            }
        )
        source = "bytes in the I/O size histograms"
    else:
        _need(bandwidth, ("metric", "ts", "rate_per_s"), "fsu_chart")
        b = bandwidth[bandwidth["metric"].isin(["read_bytes", "write_bytes"])]
        bw = (
            b.groupby(["ts", "metric"])["rate_per_s"]
            .sum()
            .unstack("metric")
            .reindex(columns=["read_bytes", "write_bytes"])
            .rename(columns={"read_bytes": "read", "write_bytes": "write"})
            .div(1 << 20)
            .reset_index()
            .sort_values("ts")
        )
        source = "counters"
    bw = _thin_frame(bw, ["read", "write"], max_points)
    fsu = _thin_frame(
        pd.DataFrame({"ts": s["ts"].to_numpy(), "FSU": s["fsu_pct"].to_numpy(float)}),
        ["FSU"],
        max_points,
    )
    long = bw.melt(id_vars="ts", value_vars=["read", "write"], var_name="op", value_name="mib_s")
    lines = (
        alt.Chart(long)
        .mark_line(strokeWidth=1)
        .encode(
            x=alt.X("ts:T", title="time (UTC)"),
            y=alt.Y("mib_s:Q", title=f"observed bandwidth [MiB/s] ({source})"),
            color=alt.Color(
                "op:N",
                scale=alt.Scale(domain=list(FSU_COLORS), range=list(FSU_COLORS.values())),
                title=None,
            ),
            tooltip=["ts:T", "op:N", alt.Tooltip("mib_s:Q", format=",.1f")],
        )
    )
    fsu_line = (
        alt.Chart(fsu.assign(op="FSU"))
        .mark_line(
            color=FSU_COLORS["FSU"],
            invalid="break-paths-show-domains",
            point=alt.OverlayMarkDef(color=FSU_COLORS["FSU"], size=18),
        )
        .encode(
            x="ts:T",
            y=alt.Y("FSU:Q", title="FSU [%]", axis=alt.Axis(orient="right")),
            tooltip=["ts:T", alt.Tooltip("FSU:Q", format=".1f")],
        )
    )
    return (
        alt.layer(lines, fsu_line)
        .resolve_scale(y="independent")
        .properties(**{**THEME, **overrides})
    )


def fsu_histogram_chart(hist: pd.DataFrame, **overrides: Any):
    """Share of FSU observations per 2% bin (Uselton & Wright 2013, Fig. 11).

    Parameters
    ----------
    hist : pandas.DataFrame
        The result of :func:`iochar.analyze.fsu.fsu_histogram`.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart
        Bars of ``share`` over FSU [%]; the overflow bin (values at or above
        the last edge) is drawn one bin wide past it, in grey.
    """
    _need(hist, ("bin_lo", "bin_hi", "count", "share"), "fsu_histogram_chart")
    alt = _alt()
    df = hist.copy()
    width = float(hist.attrs.get("bin_pct", (df["bin_hi"] - df["bin_lo"]).iloc[0]))
    over = ~pd.Series(df["bin_hi"] < float("inf"), index=df.index)
    df["overflow"] = over.map({True: "overflow (>= last edge)", False: "FSU bin"})
    df.loc[over, "bin_hi"] = df.loc[over, "bin_lo"] + width
    n = hist.attrs.get("n", int(df["count"].sum()))
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("bin_lo:Q", bin="binned", title="FSU [%]"),
            x2="bin_hi",
            y=alt.Y("share:Q", axis=alt.Axis(format="%"), title=f"share of {n:,} observations"),
            color=alt.Color(
                "overflow:N",
                scale=alt.Scale(
                    domain=["FSU bin", "overflow (>= last edge)"], range=["#4c78a8", "#9d9d9d"]
                ),
                legend=None,
            ),
            tooltip=["bin_lo:Q", "bin_hi:Q", "count:Q", alt.Tooltip("share:Q", format=".2%")],
        )
        .properties(**{**THEME, **overrides})
    )


def size_histogram_chart(hist: pd.DataFrame, **overrides: Any):
    """Disk I/O counts per size bin, reads and writes side by side (Uselton & Wright, Fig. 12).

    Parameters
    ----------
    hist : pandas.DataFrame
        The result of :func:`iochar.analyze.fsu.size_histogram`.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart
        Bars of ``count`` per size bin (4K ... 1M, in size order), read in
        red and write in blue.
    """
    _need(hist, ("op", "size_bytes", "count"), "size_histogram_chart")
    alt = _alt()
    df = hist.copy()
    df["size"] = df["size_bytes"].map(_size_label)
    order = [_size_label(b) for b in sorted(df["size_bytes"].unique())]
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("size:N", sort=order, title="disk I/O size (bin)"),
            xOffset=alt.XOffset("op:N", sort=["read", "write"]),
            y=alt.Y("count:Q", title="I/Os"),
            color=alt.Color(
                "op:N",
                scale=alt.Scale(domain=["read", "write"], range=["#d62728", "#1f77b4"]),
                title=None,
            ),
            tooltip=["op:N", "size:N", "count:Q"],
        )
        .properties(**{**THEME, **overrides})
    )


def cost_model_chart(compare: pd.DataFrame, **overrides: Any):
    """Measured and predicted bandwidth per transfer size (Uselton & Wright 2013, Fig. 7).

    Parameters
    ----------
    compare : pandas.DataFrame
        The result of :func:`iochar.analyze.fsu.compare_bandwidth`.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart
        Measured bandwidth (points) and the model's Eq. 6 prediction (lines)
        [MiB/s] over transfer size (log scale), one colour per op.
    """
    _need(
        compare,
        ("op", "size_bytes", "measured_mib_s", "predicted_mib_s", "error"),
        "cost_model_chart",
    )
    alt = _alt()
    color = alt.Color(
        "op:N", scale=alt.Scale(domain=["read", "write"], range=["#d62728", "#1f77b4"]), title=None
    )
    x = alt.X("size_bytes:Q", scale=alt.Scale(type="log", base=2), title="transfer size [bytes]")
    base = alt.Chart(compare)
    points = base.mark_point(filled=True, size=50).encode(
        x=x,
        y=alt.Y("measured_mib_s:Q", title="bandwidth [MiB/s]"),
        color=color,
        tooltip=[
            "op:N",
            "size_bytes:Q",
            alt.Tooltip("measured_mib_s:Q", format=",.1f"),
            alt.Tooltip("predicted_mib_s:Q", format=",.1f"),
            alt.Tooltip("error:Q", format="+.1%"),
        ],
    )
    line = base.mark_line(strokeDash=[4, 3]).encode(x=x, y="predicted_mib_s:Q", color=color)
    return alt.layer(points, line).properties(**{**THEME, **overrides})


__all__ += ["fsu_chart", "fsu_histogram_chart", "size_histogram_chart", "cost_model_chart"]


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


__all__ += ["coverage_chart", "job_bytes_chart"]
