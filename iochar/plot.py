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

__all__ = ["throughput_chart"]

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
