"""Charts of system load (notebook 02): throughput, bursts, idle time, FSU.

Rates of device and server counters over time; bursts and idle periods (Carns et
al. 2011, section 4, Fig. 7 and Table III); file-system utilization and the cost
model (Uselton & Wright 2013, Figs. 7, 10-12).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from iochar.errors import ParameterError
from iochar.plot._common import (
    NUM_FORMAT,
    THEME,
    NoChart,
    _alt,
    _break_gaps,
    _byte_unit,
    _bytes_text,
    _duration_text,
    _duration_unit,
    _few_points,
    _log_bytes_axis,
    _need,
    _thin_max,
    _time_text,
    _time_tooltip,
    _time_x,
    _title,
    _Unit,
    _utc,
)
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
    "daily_profile_chart",
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
    altair.FacetChart or NoChart
        Lines of ``rate_per_s`` over ``ts`` (UTC) coloured by target, in one
        binary unit per chart (``rate [MiB/s]``; rows named ``read``, ``write``)
        when every metric counts bytes, else with each row's own scale and its
        unit in the row's name (``read_bytes [MiB/s]``, ``read_ios [per s]``);
        intervals flagged as reset, wrap or gap are marked with points, and a
        line breaks where its record has a hole (a step over 3 times the
        median). A :class:`NoChart` when fewer than two times have a rate.
    """
    _need(df, ("target", "metric", "ts", "rate_per_s", "flagged"), "throughput_chart")
    none = _few_points(df, "ts", "throughput chart", y="rate_per_s", show=_time_text)
    if none is not None:
        return none
    alt = _alt()
    d = df[["target", "metric", "ts", "rate_per_s", "flagged"]].copy()
    d["metric"] = d["metric"].astype(str)
    is_bytes = d["metric"].str.endswith("_bytes")
    unit = _byte_unit(d.loc[is_bytes, "rate_per_s"], rate=True)
    d["rate"] = d["rate_per_s"].astype(float).where(~is_bytes, unit.scale(d["rate_per_s"]))
    all_bytes = bool(is_bytes.all())
    if all_bytes:  # one axis title; rows "read", "write"
        d["metric"] = d["metric"].str.removesuffix("_bytes")
        y_title, symbol = _title("rate", unit), unit.symbol
    else:  # each row its own scale, its unit in its name
        d["metric"] = d["metric"].where(~is_bytes, d["metric"] + f" [{unit.symbol}]")
        d["metric"] = d["metric"].where(is_bytes, d["metric"] + " [per s]")
        y_title, symbol = "rate (unit in the row name)", "row unit"
    d = _break_gaps(d.drop(columns="rate_per_s"), "ts", ["rate"], by=["target", "metric"])
    d["ts"] = _utc(d["ts"])
    d["target"] = d["target"].astype(str)
    base = alt.Chart(d).encode(
        x=_time_x("ts", d["ts"]),
        y=alt.Y("rate:Q", title=y_title),
        color=alt.Color("target:N", title="target"),
        tooltip=[
            "target:N",
            "metric:N",
            _time_tooltip("ts"),
            alt.Tooltip("rate:Q", format=NUM_FORMAT, title=f"rate [{symbol}]"),
            "flagged:N",
        ],
    )
    lines = base.mark_line()
    flags = base.transform_filter(alt.datum.flagged == True).mark_point(  # noqa: E712
        shape="triangle", size=60
    )
    props = {**THEME, **overrides}
    chart = alt.layer(lines, flags).properties(**props).facet(row=alt.Row("metric:N", title=None))
    return chart if all_bytes else chart.resolve_scale(y="independent")


# --- bursts (Carns et al. 2011, section 4) ---------------------------------------------

#: Shading of segment() phases in burst_chart.
BURST_COLORS = {"burst": "#f58518", "gap": "#9d9d9d"}


def _series_counts_bytes(rates) -> bool:
    """True unless the series' evidence names metrics and none of them counts bytes."""
    metrics = evidence_of(rates).get("metrics")
    return not metrics or any(str(m).endswith("_bytes") for m in metrics)


def burst_chart(phases: pd.DataFrame, rates, *, max_points: int = 5000, **overrides: Any):
    """Throughput over time with burst phases (and gaps) shaded.

    Parameters
    ----------
    phases : pandas.DataFrame
        The result of :func:`iochar.analyze.bursts.segment`; its
        ``attrs["threshold_per_s"]`` is drawn as a dashed rule labelled with
        its value.
    rates : pandas.Series or pandas.DataFrame
        The series that was segmented: rates [amount/s] indexed by time, or
        a throughput() table (summed with :func:`iochar.analyze.bursts.aggregate`).
        Drawn as bytes/s in one binary unit unless its evidence names metrics
        none of which counts bytes.
    max_points : int, default 5000
        Longer series are thinned to this many points, each the highest rate
        of its run of samples, so peaks stay visible (and gaps still break
        the line).
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart or NoChart
        Shaded rectangles per burst / gap phase, the rate line (broken at
        gaps), and the threshold rule with its value. A :class:`NoChart` when
        fewer than two samples have a rate.
    """
    _need(phases, ("state", "start", "end"), "burst_chart")
    if isinstance(rates, pd.DataFrame):
        from iochar.analyze.bursts import aggregate

        rates = aggregate(rates)
    if not isinstance(rates, pd.Series):
        raise ParameterError("rates", "burst_chart", "a Series of rates", type(rates).__name__)
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 2:
        raise ParameterError("max_points", "burst_chart", "an int >= 2", max_points)
    temporal = pd.api.types.is_datetime64_any_dtype(rates.index)
    raw = pd.DataFrame({"t": rates.index, "rate_per_s": rates.to_numpy(float)})
    show = _time_text if temporal else (lambda v: f"{float(v):g} s")
    none = _few_points(raw, "t", "burst chart", y="rate_per_s", show=show)
    if none is not None:
        return none
    alt = _alt()
    counts_bytes = _series_counts_bytes(rates)
    unit = _byte_unit(raw["rate_per_s"], rate=True) if counts_bytes else _Unit("per s", 1)
    line_df = raw.assign(rate=unit.scale(raw["rate_per_s"]))[["t", "rate"]]
    line_df = _thin_max(_break_gaps(line_df, "t", ["rate"]), "t", ["rate"], max_points)
    shade = phases.loc[phases["state"].isin(list(BURST_COLORS)), ["state", "start", "end"]]
    shade = shade.rename(columns={"state": "phase"})
    if temporal:
        line_df["t"] = _utc(line_df["t"])
        shade = shade.assign(start=_utc(shade["start"]), end=_utc(shade["end"]))
        every = pd.concat([line_df["t"], shade["start"], shade["end"]])

        def x(field, **kw):
            return _time_x(field, every, **kw)

        tips = [_time_tooltip("start", "start (UTC)"), _time_tooltip("end", "end (UTC)")]
        t_tip = _time_tooltip("t")
    else:
        tu = _duration_unit(pd.concat([line_df["t"], shade["start"], shade["end"]]))
        line_df["t"] = tu.scale(line_df["t"])
        shade = shade.assign(start=tu.scale(shade["start"]), end=tu.scale(shade["end"]))

        def x(field, **kw):
            return alt.X(f"{field}:Q", title=_title("time", tu), **kw)

        tips = [alt.Tooltip("start:Q", format=NUM_FORMAT), alt.Tooltip("end:Q", format=NUM_FORMAT)]
        t_tip = alt.Tooltip("t:Q", format=NUM_FORMAT, title=_title("time", tu))
    rects = (
        alt.Chart(shade)
        .mark_rect(opacity=0.3)
        .encode(
            x=x("start"),
            x2="end",
            color=alt.Color(
                "phase:N",
                scale=alt.Scale(domain=list(BURST_COLORS), range=list(BURST_COLORS.values())),
                title="phase",
            ),
            tooltip=["phase:N", *tips],
        )
    )
    line = (
        alt.Chart(line_df)
        .mark_line(interpolate="step-before", invalid="break-paths-show-domains")
        .encode(
            x=x("t"),
            y=alt.Y("rate:Q", title=_title("rate", unit)),
            tooltip=[t_tip, alt.Tooltip("rate:Q", format=NUM_FORMAT, title=_title("rate", unit))],
        )
    )
    layers = [rects, line]
    props = {**THEME, **overrides}
    ev = evidence_of(phases)
    thr = ev.get("threshold_per_s")
    if thr is not None and math.isfinite(float(thr)):
        label = f"burst threshold {unit.text(float(thr))}"
        if ev.get("threshold") is not None:
            label += f" ({float(ev['threshold']):.0%} of peak)"
        rule = pd.DataFrame({"threshold": [float(thr) / unit.size], "label": [label]})
        base = alt.Chart(rule).encode(y=alt.Y("threshold:Q", title=_title("rate", unit)))
        layers.append(base.mark_rule(strokeDash=[4, 3]))
        layers.append(
            base.mark_text(align="right", baseline="bottom", dx=-3, dy=-2, color="#444").encode(
                x=alt.value(props["width"] if isinstance(props["width"], int) else 0),
                text="label:N",
            )
        )
    return alt.layer(*layers).properties(**props)


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
    altair.Chart or NoChart
        A step line of ``share_of_time`` over ``fraction_of_peak``; the x
        title gives the peak (``evidence["peak_per_s"]``) and the tooltip the
        rate, in one binary unit. A :class:`NoChart` when every sample has the
        same rate (one step).
    """
    _need(cdf, ("rate_per_s", "fraction_of_peak", "share_of_time"), "throughput_cdf_chart")
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 2:
        raise ParameterError("max_points", "throughput_cdf_chart", "an int >= 2", max_points)
    peak = evidence_of(cdf).get("peak_per_s")
    if peak is None or not math.isfinite(float(peak)):
        peak = float(pd.to_numeric(cdf["rate_per_s"], errors="coerce").max())
    unit = _byte_unit([peak], rate=True)
    steps = cdf[pd.to_numeric(cdf["share_of_time"], errors="coerce") > 0]
    none = _few_points(
        steps, "fraction_of_peak", "throughput CDF", noun=("sample", "samples"), step=True,
        show=lambda f: f"{float(f):.0%} of peak ({unit.text(float(f) * peak)})",
    )  # fmt: skip
    if none is not None:
        return none
    alt = _alt()
    if len(cdf) > max_points:
        import numpy as np

        frac = cdf["fraction_of_peak"].to_numpy(float)
        grid = np.linspace(frac[0], frac[-1], max_points - 1)
        rows = np.unique(np.r_[np.searchsorted(frac, grid, side="right") - 1, len(frac) - 1])
        cdf = cdf.iloc[rows[rows >= 0]]
    d = cdf[["fraction_of_peak", "share_of_time"]].assign(rate=unit.scale(cdf["rate_per_s"]))
    return (
        alt.Chart(d)
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X(
                "fraction_of_peak:Q",
                axis=alt.Axis(format="%"),
                title=f"rate, share of the {unit.text(peak)} peak",
            ),
            y=alt.Y("share_of_time:Q", axis=alt.Axis(format="%"), title="share of time"),
            tooltip=[
                alt.Tooltip("rate:Q", format=NUM_FORMAT, title=_title("rate", unit)),
                alt.Tooltip("fraction_of_peak:Q", format=".1%"),
                alt.Tooltip("share_of_time:Q", format=".1%"),
            ],
        )
        .properties(**{**THEME, **overrides})
    )


def _idle_rule(ev) -> str:
    """What counts as idle, stating the threshold used (not the peak)."""
    if ev.get("strict"):
        return "no activity at all"
    thr, frac = ev.get("threshold_per_s"), ev.get("idle_fraction")
    if thr is None and frac is not None and ev.get("peak_per_s") is not None:
        thr = float(frac) * float(ev["peak_per_s"])
    if thr is not None and math.isfinite(float(thr)):
        rule = f"rate below {_byte_unit([thr], rate=True).text(float(thr))}"
        return rule + (f", i.e. below {float(frac):.0%} of peak" if frac is not None else "")
    if frac is not None:
        return f"below {float(frac):.0%} of peak"
    return "idle"


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
    altair.LayerChart or NoChart
        Horizontal bars of ``percent`` of total time per bucket, in the
        table's order, labelled with the number of periods. A
        :class:`NoChart` when no bucket, or only one, holds idle periods.
    """
    _need(table, ("count", "minutes", "percent"), "idle_table_chart")
    df = table.rename_axis("duration_min").reset_index()
    df["duration_min"] = df["duration_min"].astype(str)
    used = df[df["count"] > 0]
    what = f"idle-period chart (idle: {_idle_rule(evidence_of(table))})"
    if used.empty:
        return NoChart(f"No {what}: no idle period in the record.")
    if len(used) == 1:
        r = used.iloc[0]
        n = int(r["count"])
        periods = "the one idle period lasts" if n == 1 else f"all {n:,} idle periods last"
        return NoChart(
            f"No {what}: {periods} {r['duration_min']} min, "
            f"{float(r['percent']):.1f}% of the total time."
        )
    alt = _alt()
    df["label"] = df["count"].map(lambda c: f"{c:,} period" + ("" if c == 1 else "s"))
    order = df["duration_min"].tolist()
    base = alt.Chart(df).encode(
        y=alt.Y("duration_min:N", sort=order, title="idle period [min]"),
        x=alt.X("percent:Q", title="% of total time"),
        tooltip=[
            alt.Tooltip("duration_min:N", title="idle period [min]"),
            "count:Q",
            alt.Tooltip("minutes:Q", format=",.1f", title="minutes"),
            alt.Tooltip("percent:Q", format=".1f"),
        ],
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
        with in-cell bars, and a caption stating the idle threshold used
        (rate and share of peak), the interval and the gap time from
        ``table.evidence``.
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
    iv = a.get("interval_s")
    every = f" over intervals of {_duration_text(float(iv))}" if iv is not None else ""
    gap_s = float(a.get("gap_s") or 0.0)
    gaps = f"gaps of {_duration_text(gap_s)} not counted" if gap_s > 0 else "no gaps"
    caption = f"Idle periods ({_idle_rule(a)}){every}; {gaps}"
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
    """A transfer size in its own binary unit: ``"4 KiB"``, ``"1 MiB"``."""
    return _bytes_text(float(b))


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
        value of its run of intervals, so peaks stay visible (and gaps still
        break the lines).
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.LayerChart or NoChart
        Read (red) and write (blue) bandwidth in one binary unit per chart
        (``[MiB/s]``) on the left axis, FSU [%] in black (line and points) on
        the right axis, over UTC time; skipped intervals (a ``reason`` given)
        and holes in the record break the lines. A :class:`NoChart` when fewer
        than two intervals have an FSU value.
    """
    _need(series, ("ts", "interval_s", "fsu_pct", "read_bytes", "write_bytes"), "fsu_chart")
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 2:
        raise ParameterError("max_points", "fsu_chart", "an int >= 2", max_points)
    s = series
    if "target" in s.columns and s["target"].nunique() > 1:
        from iochar.analyze.fsu import fsu_filesystem

        s = fsu_filesystem(s)
    s = s.sort_values("ts")
    fsu = pd.DataFrame({"ts": s["ts"].to_numpy(), "FSU": s["fsu_pct"].to_numpy(float)})
    used = fsu.dropna(subset=["FSU"])
    if used["ts"].nunique() < 2:
        if used.empty:
            return NoChart("No FSU-over-time chart: no interval has an FSU value.")
        one = used.iloc[0]
        return NoChart(
            "No FSU-over-time chart: only one interval has an FSU value "
            f"({float(one['FSU']):.3g}% at {_time_text(one['ts'])}); a line needs two."
        )
    alt = _alt()
    iv = s["interval_s"].where(s["interval_s"] > 0)
    if "reason" in s.columns:  # skipped intervals (reset, wrap, gap): no bandwidth either
        iv = iv.where(s["reason"].fillna("").eq(""))
    if bandwidth is None:
        bw = pd.DataFrame(
            {
                "ts": s["ts"].to_numpy(),
                "read": (s["read_bytes"] / iv).to_numpy(float),
                "write": (s["write_bytes"] / iv).to_numpy(float),
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
            .reset_index()
            .sort_values("ts")
        )
        bw.columns.name = None
        source = "counters"
    unit = _byte_unit(pd.concat([bw["read"], bw["write"]]), rate=True)
    bw[["read", "write"]] = bw[["read", "write"]].astype(float) / unit.size
    bw = _thin_max(_break_gaps(bw, "ts", ["read", "write"]), "ts", ["read", "write"], max_points)
    fsu = _thin_max(_break_gaps(fsu, "ts", ["FSU"]), "ts", ["FSU"], max_points)
    long = bw.melt(id_vars="ts", value_vars=["read", "write"], var_name="op", value_name="rate")
    long["ts"] = _utc(long["ts"])
    fsu["ts"] = _utc(fsu["ts"])
    x = _time_x("ts", pd.concat([long["ts"], fsu["ts"]]))
    rate_title = _title("bandwidth", unit)
    lines = (
        alt.Chart(long)
        .mark_line(strokeWidth=1)
        .encode(
            x=x,
            y=alt.Y("rate:Q", title=f"observed bandwidth [{unit.symbol}] ({source})"),
            color=alt.Color(
                "op:N",
                scale=alt.Scale(domain=list(FSU_COLORS), range=list(FSU_COLORS.values())),
                title=None,
            ),
            tooltip=[
                _time_tooltip("ts"),
                "op:N",
                alt.Tooltip("rate:Q", format=NUM_FORMAT, title=rate_title),
            ],
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
            x=x,
            y=alt.Y("FSU:Q", title="FSU [%]", axis=alt.Axis(orient="right")),
            tooltip=[_time_tooltip("ts"), alt.Tooltip("FSU:Q", format=".1f", title="FSU [%]")],
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
    altair.Chart or NoChart
        Bars of ``share`` over FSU [%]; the overflow bin (values at or above
        the last edge) is drawn one bin wide past it, in grey. A
        :class:`NoChart` with fewer than two observations.
    """
    _need(hist, ("bin_lo", "bin_hi", "count", "share"), "fsu_histogram_chart")
    n = int(evidence_of(hist).get("n", int(pd.to_numeric(hist["count"]).sum())))
    if n < 2:
        what = "No FSU histogram: "
        if n == 0:
            return NoChart(what + "no FSU observation.")
        one = hist[hist["count"] > 0]
        where = f" (in the {float(one['bin_lo'].iloc[0]):g}% bin)" if len(one) else ""
        return NoChart(what + f"only one FSU observation{where}; a histogram needs two.")
    alt = _alt()
    df = hist.copy()
    width = float(evidence_of(hist).get("bin_pct", (df["bin_hi"] - df["bin_lo"]).iloc[0]))
    over = ~pd.Series(df["bin_hi"] < float("inf"), index=df.index)
    df["overflow"] = over.map({True: "overflow (>= last edge)", False: "FSU bin"})
    df.loc[over, "bin_hi"] = df.loc[over, "bin_lo"] + width
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
    altair.Chart or NoChart
        Bars of ``count`` per size bin (``4 KiB`` ... ``1 MiB``, in size
        order), read in red and write in blue. A :class:`NoChart` when no
        I/O was counted, or all in one bin of one op.
    """
    _need(hist, ("op", "size_bytes", "count"), "size_histogram_chart")
    df = hist.copy()
    df["size"] = df["size_bytes"].map(_size_label)
    used = df[pd.to_numeric(df["count"], errors="coerce") > 0]
    if used.empty:
        return NoChart("No disk I/O size chart: no disk I/O was counted.")
    if len(used.groupby(["op", "size"])) == 1:
        r = used.iloc[0]
        n = int(used["count"].sum())
        return NoChart(
            f"No disk I/O size chart: all {n:,} disk I/Os are {r['op']}s of {r['size']}."
        )
    alt = _alt()
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
    altair.LayerChart or NoChart
        Measured bandwidth (points) and the model's Eq. 6 prediction (lines)
        in one binary unit per chart over transfer size (log scale, ticks in
        binary units), one colour per op. A :class:`NoChart` with fewer than
        two transfer sizes.
    """
    _need(
        compare,
        ("op", "size_bytes", "measured_mib_s", "predicted_mib_s", "error"),
        "cost_model_chart",
    )
    none = _few_points(
        compare, "size_bytes", "cost-model chart", y=["measured_mib_s", "predicted_mib_s"],
        noun=("transfer size", "transfer sizes"), show=_size_label,
    )  # fmt: skip
    if none is not None:
        return none
    alt = _alt()
    mib = float(1 << 20)
    unit = _byte_unit(
        pd.concat([compare["measured_mib_s"], compare["predicted_mib_s"]]) * mib, rate=True
    )
    d = compare[["op", "size_bytes", "error"]].assign(
        measured=compare["measured_mib_s"].astype(float) * mib / unit.size,
        predicted=compare["predicted_mib_s"].astype(float) * mib / unit.size,
        size=compare["size_bytes"].map(_size_label),
    )
    color = alt.Color(
        "op:N", scale=alt.Scale(domain=["read", "write"], range=["#d62728", "#1f77b4"]), title=None
    )
    x = alt.X("size_bytes:Q", **_log_bytes_axis(d["size_bytes"], title="transfer size"))
    y_title = _title("bandwidth", unit)
    base = alt.Chart(d)
    points = base.mark_point(filled=True, size=50).encode(
        x=x,
        y=alt.Y("measured:Q", title=y_title),
        color=color,
        tooltip=[
            "op:N",
            alt.Tooltip("size:N", title="transfer size"),
            alt.Tooltip("measured:Q", format=NUM_FORMAT, title=f"measured [{unit.symbol}]"),
            alt.Tooltip("predicted:Q", format=NUM_FORMAT, title=f"predicted [{unit.symbol}]"),
            alt.Tooltip("error:Q", format="+.1%"),
        ],
    )
    line = base.mark_line(strokeDash=[4, 3]).encode(
        x=x, y=alt.Y("predicted:Q", title=y_title), color=color
    )
    return alt.layer(points, line).properties(**{**THEME, **overrides})


def _hour_grid(df: pd.DataFrame, keys: list[str], step_h: float) -> pd.DataFrame:
    """``df`` with a null-rate row at every missing time-of-day bin, so lines break there."""
    hours = np.round(np.arange(0.0, 24.0, step_h), 9)
    parts = []
    for k, g in df.groupby(keys, sort=False):
        full = pd.DataFrame({"hour": hours})
        vals = k if isinstance(k, tuple) else (k,)
        for name, v in zip(keys, vals, strict=True):
            full[name] = v
        g = g.assign(hour=np.round(g["hour"].astype(float), 9))
        parts.append(full.merge(g, on=[*keys, "hour"], how="left"))
    return pd.concat(parts, ignore_index=True) if parts else df


def daily_profile_chart(profile, **overrides: Any):
    """Each day's rate by time of day against the long-term median day (U&W 2013, Fig. 9).

    Parameters
    ----------
    profile : iochar.analyze.throughput.DailyProfile
        :func:`iochar.analyze.throughput.daily_profile`.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.VConcatChart or NoChart
        One panel per metric (read, write), each in its own binary rate unit:
        every day's rate per time-of-day bin (thin grey lines with points),
        the median over days per bin (the typical day's shape, thick), and the
        long-term median of the days' mean rates (dashed rule, the paper's
        "600 MB/s averaged over the day"), over 0-24 h UTC; lines break at
        bins without samples. A :class:`NoChart` with the profile's
        ``reason`` (no counters, or fewer than two days).
    """
    for name in ("bins", "profile", "median_rate", "reason", "bin_s"):
        if not hasattr(profile, name):
            raise ParameterError("profile", "daily_profile_chart", "a DailyProfile", type(profile))
    if profile.reason:
        return NoChart(f"No daily profile chart: {profile.reason}.")
    alt = _alt()
    names = {"read_bytes": "read", "write_bytes": "write"}
    colors = {"read": "#d62728", "write": "#1f77b4"}
    step_h = profile.bin_s / 3600.0
    b, med = profile.bins, profile.profile
    x = alt.X(
        "hour:Q",
        title="time of day (UTC) [h]",
        scale=alt.Scale(domain=[0, 24]),
        axis=alt.Axis(values=list(range(0, 25, 3))),
    )
    panels = []
    for metric in sorted(set(b["metric"]), key=lambda m: (m not in names, m)):
        label = names.get(metric, metric)
        bm, pm = b[b["metric"] == metric], med[med["metric"] == metric]
        unit = _byte_unit(pd.concat([bm["rate"], pm["median_rate"]]), rate=True)
        days = _hour_grid(pd.DataFrame({
            "day": bm["date"].astype(str), "hour": bm["hour"].astype(float),
            "rate": bm["rate"].astype(float) / unit.size,
            "covered_s": bm["covered_s"].astype(float)}), ["day"], step_h)  # fmt: skip
        prof = _hour_grid(pd.DataFrame({
            "m": label, "hour": pm["hour"].astype(float),
            "rate": pm["median_rate"].astype(float) / unit.size,
            "days": pm["days"].astype(float)}), ["m"], step_h)  # fmt: skip
        rule = pd.DataFrame({
            "rate": [profile.median_rate[metric] / unit.size],
            "per_day": [_bytes_text(profile.median_per_day[metric])]})  # fmt: skip
        y = alt.Y("rate:Q", title=_title(label, unit))
        rate_tip = alt.Tooltip("rate:Q", format=NUM_FORMAT, title=f"rate [{unit.symbol}]")
        day_lines = alt.Chart(days).mark_line(point=True, color="#bbb", strokeWidth=1).encode(
            x=x, y=y, detail="day:N",
            tooltip=[alt.Tooltip("day:N", title="day (UTC)"), alt.Tooltip("hour:Q", title="hour"),
                     rate_tip, alt.Tooltip("covered_s:Q", format=",.0f",
                                           title="seconds sampled")])  # fmt: skip
        med_line = alt.Chart(prof).mark_line(
            point=alt.OverlayMarkDef(color=colors.get(label, "#333")),
            strokeWidth=2.5, color=colors.get(label, "#333"),
        ).encode(x=x, y=y, tooltip=[alt.Tooltip("hour:Q", title="hour"),
                                     alt.Tooltip("rate:Q", format=NUM_FORMAT,
                                                 title=f"median over days [{unit.symbol}]"),
                                     alt.Tooltip("days:Q", title="days")])  # fmt: skip
        med_rule = alt.Chart(rule).mark_rule(
            strokeDash=[6, 4], color=colors.get(label, "#333")
        ).encode(y=y, tooltip=[alt.Tooltip("rate:Q", format=NUM_FORMAT,
                                           title=f"median day's mean rate [{unit.symbol}]"),
                               alt.Tooltip("per_day:N", title="median day's volume")])  # fmt: skip
        panels.append(
            alt.layer(day_lines, med_line, med_rule).properties(
                width=THEME["width"], height=130,
                title=f"{label}: days (grey), median per hour (solid), median day (dashed)")
        )  # fmt: skip
    return alt.vconcat(*panels).properties(**overrides)
