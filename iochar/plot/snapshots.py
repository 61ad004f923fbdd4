"""Charts of file-system snapshots (notebook 04): file size and age CDFs.

Carns et al. (2011), Figs. 8 and 9.
"""

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
)

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


def _one_step(
    df: pd.DataFrame, pos: pd.DataFrame, x: str, what: str, show, left_off: str
) -> NoChart | None:
    """A NoChart when the CDF on its log axis is one step: no positive ``x``, or all
    of them within 2 significant digits of each other (the steps coincide)."""
    kept = float(df["cdf_files"].max()) if len(df) else 0.0
    below = float(df.loc[~df.index.isin(pos.index), "cdf_files"].max()) if len(pos) < len(df) else 0
    off = f"; {below:.0%} of files ({left_off}) are left off its log axis" if below > 0 else ""
    if df.empty:
        return NoChart(f"No {what}: the snapshot lists no file.")
    if pos.empty:
        return NoChart(f"No {what}: no file is on its log axis (all are {left_off}).")
    v = pos[x].astype(float)
    lo, hi = float(v.min()), float(v.max())
    if len({float(f"{a:.2g}") for a in v}) > 1:
        return None
    at = show(lo) if show(lo) == show(hi) else f"{show(lo)} to {show(hi)}"
    n = int(pos["files"].sum()) if "files" in pos else len(pos)
    share = f"{(kept - below):.0%} of " if below > 0 else ""
    return NoChart(
        f"No {what}: {share}the files ({n:,}) are all at {at}, so the curve is a single step{off}."
    )


def _cdf_chart(
    df: pd.DataFrame,
    x: str,
    what: str,
    axis: dict,
    show,
    left_off: str,
    overrides: dict[str, Any],
    max_points: int = 2000,
):
    """Two step lines (by file count, by bytes) over a log ``x`` axis, or a NoChart."""
    pos = df[pd.to_numeric(df[x], errors="coerce") > 0]  # a log axis has no place for 0
    none = _one_step(df, pos, x, what, show, left_off)
    if none is not None:
        return none
    alt = _alt()
    d = _thin_cdf(pos.sort_values(x), x, max_points)
    long = d.melt(id_vars=[x], value_vars=["cdf_files", "cdf_bytes"], var_name="by")
    long["by"] = long["by"].map({"cdf_files": "by file count", "cdf_bytes": "by bytes"})
    long["at"] = long[x].map(show)
    return (
        alt.Chart(long)
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X(f"{x}:Q", **axis),
            y=alt.Y("value:Q", axis=alt.Axis(format="%"), title="cumulative share"),
            color=alt.Color("by:N", title=None),
            tooltip=[
                alt.Tooltip("at:N", title=axis["title"]),
                "by:N",
                alt.Tooltip("value:Q", format=".1%"),
            ],
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
    altair.Chart or NoChart
        Two step lines over a log size axis with ticks in binary units
        (``1 KiB``, ``1 MiB``; empty files are left off it). A :class:`NoChart`
        when every non-empty file has the same size to 2 significant digits (one
        step); the sentence says what share of files the log axis leaves off.
    """
    _need(df, ("size_bytes", "cdf_files", "cdf_bytes"), "size_cdf_chart")
    pos = df.loc[pd.to_numeric(df["size_bytes"], errors="coerce") > 0, "size_bytes"]
    axis = _log_bytes_axis(pos, title="file size")
    return _cdf_chart(
        df, "size_bytes", "file-size CDF", axis, lambda b: _bytes_text(float(b)), "empty files",
        overrides, max_points,
    )  # fmt: skip


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
    altair.Chart or NoChart
        Two step lines over a log age axis with ticks in s, min, h and d
        (``1 h``, ``1 d``, ``100 d``). A :class:`NoChart` when every file with a
        positive age has the same age to 2 significant digits (one step).
    """
    _need(df, ("age_days", "cdf_files", "cdf_bytes"), "age_cdf_chart")
    keep = [c for c in ("files", "cdf_files", "cdf_bytes") if c in df.columns]
    d = df[keep].assign(age_s=df["age_days"].astype(float) * 86400)
    pos = d.loc[d["age_s"] > 0, "age_s"]
    axis = _log_duration_axis(pos, title="file age")
    return _cdf_chart(
        d, "age_s", "file-age CDF", axis, lambda a: f"age {_duration_text(float(a))}",
        "age 0 or less", overrides, max_points,
    )  # fmt: skip
