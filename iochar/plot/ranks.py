"""Charts of ranks over time: the heat map of Carns et al. 2011 Fig. 13 and PyDarshan's.

:func:`rank_heatmap_chart` draws :func:`iochar.analyze.ranks.rank_heatmap` as PyDarshan's
job summary does (``darshan.experimental.plots.plot_dxt_heatmap.plot_heatmap``): rank
(or rank bin) up, time across, bytes as colour on a log scale (PyDarshan: ``LogNorm``,
``YlOrRd``), with the bytes per time bin summed over the ranks above and the bytes per
rank bin summed over time to the right. Cells without bytes are left blank. When ranks
are joined into bins, the rank axis and the title say how many ranks a bin holds.

:func:`rank_extremes_chart` draws :func:`iochar.analyze.ranks.rank_extremes`: per shared
file, the fastest rank's, the mean and the slowest rank's I/O time (a straggler shows as
a slowest point far right of the mean).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from iochar._validation import check_choice
from iochar.analyze.ranks import CELL_COLUMNS
from iochar.plot._common import (
    THEME,
    NoChart,
    _alt,
    _byte_unit,
    _bytes_text,
    _duration_unit,
    _need,
    _title,
)

__all__ = ["rank_heatmap_chart", "rank_extremes_chart"]

_OPS = {"both": ("bytes", "read + write"), "read": ("read_bytes", "read"),
        "write": ("write_bytes", "write")}  # fmt: skip


def rank_heatmap_chart(cells: pd.DataFrame, *, op: str = "both", **overrides: Any):
    """Heat map of bytes per rank and time bin, with marginal totals.

    Parameters
    ----------
    cells : iochar.result.Table
        :func:`iochar.analyze.ranks.rank_heatmap` (its evidence gives the grid: bin
        width, rank bins, rank kind).
    op : {"both", "read", "write"}, default "both"
        Which bytes to colour.
    **overrides
        Passed to the heat map's ``properties`` (``width``, ``height``, ``title``).

    Returns
    -------
    altair.VConcatChart or NoChart
        The chart; a :class:`NoChart` when no cell holds the chosen bytes (with the
        analysis' reason) or all of them fall in one cell.
    """
    alt = _alt()
    op = check_choice(op, "op", "rank_heatmap_chart", tuple(_OPS))
    _need(cells, CELL_COLUMNS, "rank_heatmap_chart")
    col, what = _OPS[op]
    ev = dict(getattr(cells, "evidence", {}) or {})
    df = cells[cells[col] > 0].copy()
    if df.empty:
        why = ev.get("reason") or f"no {what} bytes in any rank and time bin"
        return NoChart(f"No rank heat map: {why}.")
    if len(df) == 1:
        r = df.iloc[0]
        return NoChart(
            f"No rank heat map: all {_bytes_text(float(r[col]))} ({what}) fall in one cell "
            f"(rank {int(r['rank_lo'])}, {r['t_start_s']:g}-{r['t_end_s']:g} s)."
        )
    per = int(ev.get("ranks_per_bin", 1) or 1)
    rows = int(ev.get("rows", int(df["row_hi"].max()) + 1) or 1)
    pids = ev.get("rank_kind") == "task id"
    bu = _byte_unit(df[col])
    t_lo = float(ev.get("t_lo_s", df["t_start_s"].min()))
    t_hi = float(ev.get("t_hi_s", df["t_end_s"].max()))
    tu = _duration_unit([t_hi - t_lo])
    df["v"] = bu.scale(df[col])
    df["t0"] = df["t_start_s"] / tu.size
    df["t1"] = df["t_end_s"] / tu.size
    # a row r spans [r - 0.5, r + 0.5], so integer ticks name the row they sit on
    df["y0"] = df["row_lo"].astype(float) - 0.5
    df["y1"] = df["row_hi"].astype(float) + 0.5
    df["ranks"] = np.where(
        df["rank_lo"] == df["rank_hi"],
        df["rank_lo"].astype(str),
        df["rank_lo"].astype(str) + "-" + df["rank_hi"].astype(str),
    )
    df["read"] = bu.scale(df["read_bytes"])
    df["write"] = bu.scale(df["write_bytes"])
    who = "task id" if pids else "rank"
    y_title = who if per == 1 else f"rank (bins of {per:,} ranks)"
    x_dom = [t_lo / tu.size, t_hi / tu.size]
    y_dom = [-0.5, float(rows) - 0.5]
    x = alt.X("t0:Q", scale=alt.Scale(domain=x_dom, nice=False, zero=False),
              title=_title("time since job start", tu))  # fmt: skip
    tips = [
        alt.Tooltip("ranks:N", title=who if per == 1 else f"{who}s"),
        alt.Tooltip("t0:Q", title=f"from [{tu.symbol}]", format=",.4~r"),
        alt.Tooltip("t1:Q", title=f"to [{tu.symbol}]", format=",.4~r"),
        alt.Tooltip("read:Q", title=_title("read", bu), format=",.4~r"),
        alt.Tooltip("write:Q", title=_title("write", bu), format=",.4~r"),
    ]
    if pids:
        order = df.drop_duplicates("row_lo").sort_values("row_lo")["ranks"].tolist()
        y = alt.Y("ranks:N", sort=order, title=y_title)
        y2 = {}
    else:
        y = alt.Y("y0:Q", scale=alt.Scale(domain=y_dom, nice=False, zero=False), title=y_title,
                  axis=alt.Axis(format="d", tickMinStep=1))  # fmt: skip
        y2 = {"y2": "y1:Q"}
    width = int(overrides.pop("width", THEME["width"] - 120))
    nbins = int(ev.get("rank_bins", rows) or rows)
    height = int(overrides.pop("height", 260 if nbins > 16 else max(90, 22 * nbins)))
    title = overrides.pop(
        "title",
        f"bytes ({what}) per {who} and {ev.get('bin_s', 0):g} s bin"
        + (f", ranks in bins of {per:,}" if per > 1 else ""),
    )
    main = (
        alt.Chart(df)
        .mark_rect()
        .encode(
            x=x,
            x2="t1:Q",
            y=y,
            **y2,
            color=alt.Color(
                "v:Q",
                scale=alt.Scale(type="log", scheme="yelloworangered"),
                title=_title(what, bu),
                legend=alt.Legend(format=",.3~r"),
            ),
            tooltip=tips,
        )
        .properties(width=width, height=height, **overrides)
    )
    per_t = df.groupby(["t0", "t1"], as_index=False)["v"].sum()
    top = (
        alt.Chart(per_t)
        .mark_rect(color="black")
        .encode(
            x=alt.X("t0:Q", scale=alt.Scale(domain=x_dom, nice=False, zero=False), axis=None),
            x2="t1:Q",
            y=alt.Y("v:Q", title=_title("all ranks", bu)),
            y2=alt.datum(0),
            tooltip=[
                alt.Tooltip("t0:Q", title=f"from [{tu.symbol}]", format=",.4~r"),
                alt.Tooltip("v:Q", title=_title(what, bu), format=",.4~r"),
            ],
        )
        .properties(width=width, height=70, title=title)
    )
    keys = ["ranks", "row_lo"] if pids else ["y0", "y1", "ranks"]
    per_r = df.groupby(keys, as_index=False)["v"].sum()
    if pids:
        ry = alt.Y("ranks:N", sort=order, axis=None)
        ry2 = {}
    else:
        ry = alt.Y("y0:Q", scale=alt.Scale(domain=y_dom, nice=False, zero=False), axis=None)
        ry2 = {"y2": "y1:Q"}
    side = (
        alt.Chart(per_r)
        .mark_rect(color="black")
        .encode(
            y=ry,
            **ry2,
            x=alt.X("v:Q", title=_title("over time", bu)),
            x2=alt.datum(0),
            tooltip=[
                alt.Tooltip("ranks:N", title=who if per == 1 else f"{who}s"),
                alt.Tooltip("v:Q", title=_title(what, bu), format=",.4~r"),
            ],
        )
        .properties(width=90, height=height)
    )
    return alt.vconcat(top, alt.hconcat(main, side, spacing=4), spacing=4).resolve_scale(
        color="independent"
    )


def rank_extremes_chart(extremes: pd.DataFrame, *, top: int = 20, **overrides: Any):
    """Fastest, mean and slowest rank's I/O time per shared file (Darshan counters).

    Parameters
    ----------
    extremes : iochar.result.Table
        :func:`iochar.analyze.ranks.rank_extremes`.
    top : int, default 20
        Files drawn (the slowest first, as the table is ordered).
    **overrides
        Passed to ``properties``.

    Returns
    -------
    altair.LayerChart or NoChart
        A range bar from the fastest to the slowest rank's time with a tick at the mean,
        one row per file; NoChart when there is no shared record with times.
    """
    alt = _alt()
    _need(
        extremes,
        ("file_id", "path", "module", "fastest_rank", "fastest_time_s", "slowest_rank",
         "slowest_time_s", "mean_time_s"),
        "rank_extremes_chart",
    )  # fmt: skip
    ev = dict(getattr(extremes, "evidence", {}) or {})
    df = extremes.dropna(subset=["slowest_time_s", "fastest_time_s"]).head(int(top)).copy()
    df = df[df["slowest_time_s"] > 0]
    if df.empty:
        why = ev.get("reason") or "no shared file has a rank with I/O time"
        return NoChart(f"No fastest/slowest rank chart: {why}.")
    tu = _duration_unit(df["slowest_time_s"])
    df["file"] = [
        f"{p if isinstance(p, str) else '—'} ({m})"
        for p, m in zip(df["path"], df["module"], strict=True)
    ]
    for c in ("fastest_time_s", "mean_time_s", "slowest_time_s"):
        df[c.replace("_time_s", "")] = tu.scale(df[c])
    order = df["file"].tolist()
    y = alt.Y("file:N", sort=order, title=None, axis=alt.Axis(labelLimit=320))
    tips = [
        alt.Tooltip("file:N", title="file"),
        alt.Tooltip("fastest_rank:Q", title="fastest rank"),
        alt.Tooltip("fastest:Q", title=_title("fastest", tu), format=",.4~r"),
        alt.Tooltip("mean:Q", title=_title("mean over ranks", tu), format=",.4~r"),
        alt.Tooltip("slowest_rank:Q", title="slowest rank"),
        alt.Tooltip("slowest:Q", title=_title("slowest", tu), format=",.4~r"),
    ]
    base = alt.Chart(df).encode(y=y, tooltip=tips)
    bar = base.mark_rule(strokeWidth=2, color="#999").encode(
        x=alt.X("fastest:Q", title=_title("I/O time of a rank on the file", tu)), x2="slowest:Q"
    )
    fast = base.mark_point(filled=True, color="#1f77b4", size=50).encode(x="fastest:Q")
    mean = base.mark_tick(color="black", thickness=2).encode(x="mean:Q")
    slow = base.mark_point(filled=True, color="#d62728", size=50).encode(x="slowest:Q")
    props = {"width": THEME["width"] - 200, "height": max(60, 22 * len(df))}
    props["title"] = "fastest (blue), mean (tick) and slowest (red) rank per shared file"
    props.update(overrides)
    return alt.layer(bar, fast, mean, slow).properties(**props)
