"""Charts of system load (notebook 02): throughput, bursts, idle time, FSU.

Rates of device and server counters over time; bursts and idle periods (Carns et
al. 2011, section 4, Fig. 7 and Table III); file-system utilization and the cost
model (Uselton & Wright 2013, Figs. 7, 10-12).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from iochar.errors import ParameterError
from iochar.plot._common import THEME, _alt, _need
from iochar.result import evidence_of

__all__ = [
    "throughput_chart",
    "burst_chart",
    "throughput_cdf_chart",
    "idle_table_chart",
    "idle_table_style",
    "fsu_chart",
    "fsu_histogram_chart",
    "size_histogram_chart",
    "cost_model_chart",
]


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
    thr = evidence_of(phases).get("threshold_per_s")
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
        interval, peak and gap time from ``table.evidence``.
    """
    _need(table, ("count", "minutes", "percent"), "idle_table_style")
    heads = {
        "count": "Count",
        "minutes": "Cumulative Minutes",
        "percent": "Percentage of Total Time",
    }
    disp = table[list(heads)].rename(columns=heads).rename_axis("Duration (minutes)")
    whole = bool((disp["Cumulative Minutes"] % 1 == 0).all())
    a = evidence_of(table)
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
    width = float(evidence_of(hist).get("bin_pct", (df["bin_hi"] - df["bin_lo"]).iloc[0]))
    over = ~pd.Series(df["bin_hi"] < float("inf"), index=df.index)
    df["overflow"] = over.map({True: "overflow (>= last edge)", False: "FSU bin"})
    df.loc[over, "bin_hi"] = df.loc[over, "bin_lo"] + width
    n = evidence_of(hist).get("n", int(df["count"].sum()))
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
