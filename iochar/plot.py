"""Altair chart builders over analysis results (never over a Store).

Each ``*_chart`` takes the DataFrame an ``iochar.analyze`` function returned
and gives an :class:`altair.Chart`; keyword overrides go to ``properties``.
Charts are plain Vega-Lite, so they render offline (vl-convert or inlined
scripts in reports).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from iochar.errors import MissingDependencyError, ParameterError

__all__ = [
    "throughput_chart",
    "class_rate_chart",
    "class_breakdown_chart",
    "size_cdf_chart",
    "age_cdf_chart",
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
    """Share of bytes and of files per I/O class, side by side.

    Parameters
    ----------
    df : pandas.DataFrame
        The result of :func:`iochar.analyze.classify.class_breakdown`.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart
        Horizontal bars of ``bytes_share`` and ``files_share`` per class.
    """
    _need(df, ("class", "bytes_share", "files_share"), "class_breakdown_chart")
    alt = _alt()
    long = df.melt(id_vars=["class"], value_vars=["bytes_share", "files_share"], var_name="by")
    long["by"] = long["by"].map({"bytes_share": "by bytes", "files_share": "by files"})
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


def _cdf_chart(df: pd.DataFrame, x: str, x_title: str, overrides: dict[str, Any]):
    alt = _alt()
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


def size_cdf_chart(df: pd.DataFrame, **overrides: Any):
    """File-size CDF by file count and by bytes (Carns et al. 2011, Fig. 8).

    Parameters
    ----------
    df : pandas.DataFrame
        The result of :func:`iochar.analyze.snapshots.size_cdf`.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart
        Two step lines over a log size axis (empty files are left off it).
    """
    _need(df, ("size_bytes", "cdf_files", "cdf_bytes"), "size_cdf_chart")
    return _cdf_chart(df, "size_bytes", "file size [bytes]", overrides)


def age_cdf_chart(df: pd.DataFrame, **overrides: Any):
    """File-age CDF by file count and by bytes (Carns et al. 2011, Fig. 9).

    Parameters
    ----------
    df : pandas.DataFrame
        The result of :func:`iochar.analyze.snapshots.age_cdf`.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart
        Two step lines over a log age axis in days.
    """
    _need(df, ("age_days", "cdf_files", "cdf_bytes"), "age_cdf_chart")
    return _cdf_chart(df, "age_days", "age [days]", overrides)
