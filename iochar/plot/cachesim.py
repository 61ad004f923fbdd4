"""Charts of the cache simulation (notebook 06): Miller & Katz (1991) Figs. 6, 7 and 8.

- :func:`disk_rate_chart`: the disk's data rate over the first seconds of a run (their
  Figs. 6 and 7: "Data rate for 2 simultaneously running copies of venus with a 2 MW
  cache (first 100 seconds of wall time)"), reads and writes stacked;
- :func:`idle_chart`: CPU idle time against cache size, one line per policy (their
  Fig. 8: "Idle time while running two instances of venus with varying cache sizes").
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from iochar.plot._common import (
    NUM_FORMAT,
    THEME,
    _alt,
    _byte_unit,
    _duration_unit,
    _few_points,
    _need,
    _title,
)

__all__ = ["disk_rate_chart", "idle_chart"]


def disk_rate_chart(result, *, first_s: float | None = 100.0, **overrides: Any):
    """Disk data rate over time of one simulation run, reads and writes stacked.

    Parameters
    ----------
    result : iochar.analyze.cachesim.SimResult or pandas.DataFrame
        A run, or its ``rate`` table (``t_s``, ``read_bps``, ``write_bps``).
    first_s : float or None, default 100.0
        Show the first this many seconds (the paper's figures show 100 s); None: all.
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart or NoChart
        Areas of ``read`` and ``write`` rate over time since the start, in one binary
        unit; a :class:`NoChart` with fewer than two bins.
    """
    df = getattr(result, "rate", result)
    _need(df, ("t_s", "read_bps", "write_bps"), "disk_rate_chart")
    if first_s is not None:
        df = df[df["t_s"] < first_s]
    none = _few_points(df, "t_s", "disk-rate chart", y="read_bps", noun=("time bin", "time bins"))
    if none is not None:
        return none
    alt = _alt()
    long = df.melt(id_vars="t_s", value_vars=["read_bps", "write_bps"], var_name="op")
    long["op"] = long["op"].str.replace("_bps", "", regex=False)
    rate, tu = _byte_unit(df["read_bps"] + df["write_bps"], rate=True), _duration_unit(df["t_s"])
    d = pd.DataFrame(
        {"t": tu.scale(long["t_s"]), "op": long["op"], "rate": rate.scale(long["value"])}
    )
    x_title, y_title = _title("time since start", tu), _title("disk data rate", rate)
    return (
        alt.Chart(d)
        .mark_area(interpolate="step-after")
        .encode(
            x=alt.X("t:Q", title=x_title),
            y=alt.Y("rate:Q", stack=True, title=y_title),
            color=alt.Color(
                "op:N", title="to/from disk", scale=alt.Scale(domain=["read", "write"])
            ),
            tooltip=[
                alt.Tooltip("t:Q", format=NUM_FORMAT, title=x_title),
                "op:N",
                alt.Tooltip("rate:Q", format=NUM_FORMAT, title=y_title),
            ],
        )
        .properties(**{**THEME, **overrides})
    )


def idle_chart(table: pd.DataFrame, **overrides: Any):
    """CPU idle time against cache size, one line per policy (and number of copies).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`iochar.analyze.cachesim.sweep` (``cache_bytes``, ``policy``,
        ``copies``, ``cpu_idle_s``).
    **overrides
        Passed to ``Chart.properties``.

    Returns
    -------
    altair.Chart or NoChart
        Lines with points; cache size in one binary unit, idle time in s, min or h; a
        :class:`NoChart` with fewer than two cache sizes.
    """
    _need(table, ("cache_bytes", "policy", "copies", "cpu_idle_s"), "idle_chart")
    none = _few_points(
        table.drop_duplicates("cache_bytes"), "cache_bytes", "idle-time chart",
        y="cpu_idle_s", noun=("cache size", "cache sizes"),
    )  # fmt: skip
    if none is not None:
        return none
    alt = _alt()
    size, tu = _byte_unit(table["cache_bytes"]), _duration_unit(table["cpu_idle_s"])
    many = table["copies"].nunique() > 1
    d = pd.DataFrame(
        {
            "size": size.scale(table["cache_bytes"]),
            "idle": tu.scale(table["cpu_idle_s"]),
            "policy": table["policy"].astype(str)
            + (", " + table["copies"].astype(str) + " copies" if many else ""),
            "hits": table["read_hit_ratio"] if "read_hit_ratio" in table else float("nan"),
        }
    )
    x_title, y_title = _title("cache size", size), _title("CPU idle time", tu)
    return (
        alt.Chart(d)
        .mark_line(point=True)
        .encode(
            x=alt.X("size:Q", title=x_title),
            y=alt.Y("idle:Q", title=y_title),
            color=alt.Color("policy:N", title="policy"),
            tooltip=[
                alt.Tooltip("size:Q", format=NUM_FORMAT, title=x_title),
                "policy:N",
                alt.Tooltip("idle:Q", format=NUM_FORMAT, title=y_title),
                alt.Tooltip("hits:Q", format=".1%", title="read hit ratio"),
            ],
        )
        .properties(**{**THEME, **overrides})
    )
