"""Charts of file-system snapshots (notebook 04): file size and age CDFs.

Carns et al. (2011), Figs. 8 and 9.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from iochar.plot._common import THEME, _alt, _need

__all__ = [
    "size_cdf_chart",
    "age_cdf_chart",
]


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
