"""Sentences about ranks over time: which ranks did the I/O, when, and how unevenly.

Every number comes from :mod:`iochar.analyze.ranks` (:func:`rank_heatmap`,
:func:`rank_totals`, :func:`rank_extremes`). Carns et al. (2011, Sec. 5.1, Fig. 13) read
such a view for whether I/O is coordinated (all ranks in the same phases) or "a very
sparse, uncoordinated pattern", and Sec. 5.2 for "rank 0" I/O, where one process does
all of it. The time imbalance is the slowest rank's I/O time over the mean, minus one:
the share of time the other ranks wait for it, called a straggler above 15 % (Drishti's
``imbalance_stragglers`` threshold, drishti-io 4493988 ``drishti/includes/config.py:46``,
as :mod:`iochar.analyze.insights.rules_ranks` uses it).

Examples
--------
>>> import pandas as pd
>>> from iochar.result import Table
>>> from iochar.narrate import ranks
>>> empty = Table(pd.DataFrame(), evidence={"source": "none", "reason": "job 3 has no ops"})
>>> ranks.rank_summary(empty)
'No per-rank view over time: job 3 has no ops.'
"""

from __future__ import annotations

import math

import pandas as pd

from iochar.narrate import code, esc, fmt_bytes, fmt_pct, fmt_s, plural

__all__ = ["STRAGGLER_SHARE", "rank_summary"]

#: Slowest / mean - 1 above which the slowest rank is called a straggler (Drishti's
#: ``imbalance_stragglers``, 0.15).
STRAGGLER_SHARE = 0.15


def _times(x: float) -> str:
    """A ratio: ``"1.00"``, ``"3.09"``, ``"496"``."""
    return f"{x:.2f}" if x < 10 else f"{x:,.0f}"


def _who(ev: dict) -> str:
    return "task" if ev.get("rank_kind") == "task id" else "rank"


def _where(cells: pd.DataFrame, ev: dict) -> str:
    """What the matrix was made from and its grid."""
    per = int(ev.get("ranks_per_bin", 1) or 1)
    who = _who(ev)
    rows = int(ev.get("rows", 0) or 0)
    grid = (
        f"{plural(rows, who)} in {plural(int(ev.get('rank_bins', rows)), 'bin')} of "
        f"{per:,} consecutive ranks"
        if per > 1
        else plural(rows, who)
    )
    text = (
        f"Bytes per {who} over time come from {esc(ev.get('basis'))}: {grid}, "
        f"{plural(int(ev.get('time_bins', 0) or 0), 'time bin')} of "
        f"{fmt_s(float(ev.get('bin_s', math.nan)))}."
    )
    left = float(ev.get("left_out_bytes", 0) or 0)
    if left > 0:
        total = left + float(ev.get("bytes", 0) or 0)
        text += (
            f" {fmt_bytes(left)} ({fmt_pct(left / total)} of the job's bytes) are in "
            f"Darshan records shared by all ranks or without timestamps, which say nothing "
            "per rank over time and are left out."
        )
    return text


def _when(cells: pd.DataFrame, ev: dict) -> str:
    """How many time bins saw I/O, and whether the ranks moved together."""
    if cells is None or not len(cells):
        return ""
    nbins = int(ev.get("time_bins", 0) or 0)
    busy = cells.groupby("t_start_s")["row_lo"].nunique()
    active_rows = cells["row_lo"].nunique()
    if not nbins:
        return ""
    peak_t = float(busy.idxmax())
    who = "rank bins" if int(ev.get("ranks_per_bin", 1) or 1) > 1 else f"{_who(ev)}s"
    text = (
        f"I/O fell in {len(busy):,} of the {nbins:,} time bins "
        f"({fmt_pct(len(busy) / nbins)} of the run)"
    )
    if active_rows > 1:
        together = int(busy.max())
        text += (
            f"; at most {together:,} of the {active_rows:,} active {who} moved bytes in the "
            f"same bin (from {fmt_s(peak_t)})"
            + (
                ": every active one at once"
                if together == active_rows
                else ", never all of them at once"
            )
        )
    text += (
        " (estimated: each rank's bytes spread between its first and last access)."
        if ev.get("source") == "counters"
        else "."
    )
    return text


def _ranks(totals: pd.DataFrame | None) -> str:
    """Busiest, idle, slowest and fastest ranks."""
    if totals is None:
        return ""
    ev = dict(getattr(totals, "evidence", {}) or {})
    if not ev.get("active_ranks"):
        return ""
    who = _who(ev)
    n, act = int(ev["ranks"]), int(ev["active_ranks"])
    total = float(ev["bytes"])
    parts = []
    head = f"{act:,} of {plural(n, who)} moved bytes"
    if act < n:
        head += f" ({plural(n - act, who)} none)"
    share = float(ev["busiest_bytes"]) / total if total else math.nan
    whose = "the bytes in per-rank records" if ev.get("source") == "counters" else "the job's bytes"
    head += (
        f"; the busiest, {who} {int(ev['busiest_rank'])}, moved "
        f"{fmt_bytes(float(ev['busiest_bytes']))}, {fmt_pct(share)} of {whose} and "
        f"{_times(float(ev['max_over_mean_bytes']))} times the mean per {who}"
    )
    if act > 1:
        head += (
            f"; the least active, {who} {int(ev['least_rank'])}, moved "
            f"{fmt_bytes(float(ev['least_bytes']))}"
        )
    parts.append(head + ".")
    if act == 1 and n > 1:
        parts.append(
            f"All I/O went through one {who} (Carns et al. 2011 Sec. 5.2 call this "
            '"rank 0" I/O when it is rank 0): its speed is the job\'s.'
        )
    if "slowest_rank" in ev and act > 1:
        over = float(ev.get("slowest_over_mean", math.nan))
        s = (
            f"The slowest {who}, {int(ev['slowest_rank'])}, spent "
            f"{fmt_s(float(ev['slowest_time_s']))} in I/O against a mean of "
            f"{fmt_s(float(ev['mean_time_s']))} over the active {who}s; the fastest, "
            f"{int(ev['fastest_rank'])}, {fmt_s(float(ev['fastest_time_s']))}."
        )
        if math.isfinite(over):
            s += (
                f" The others wait {fmt_pct(over)} longer than the mean for the slowest: "
                + (
                    "a straggler"
                    if over > STRAGGLER_SHARE
                    else f"within the {fmt_pct(STRAGGLER_SHARE, 0)} Drishti allows"
                )
                + "."
            )
        parts.append(s)
    return " ".join(parts)


def _extremes(extremes: pd.DataFrame | None) -> str:
    """Darshan's fastest and slowest rank of the slowest shared file."""
    if extremes is None or not len(extremes):
        return ""
    ev = dict(getattr(extremes, "evidence", {}) or {})
    r = extremes.iloc[0]
    n = int(ev.get("shared_files", len(extremes)))
    s = (
        f"Darshan's counters name the slowest and fastest rank of each file all ranks "
        f"opened ({plural(n, 'such file')}); on {code(r['path'])} ({esc(r['module'])}), "
        "the slowest, "
        f"rank {int(r['slowest_rank'])}, spent {fmt_s(float(r['slowest_time_s']))} "
        f"(moving {fmt_bytes(float(r['slowest_bytes']))}) and the fastest, rank "
        f"{int(r['fastest_rank'])}, {fmt_s(float(r['fastest_time_s']))}"
    )
    mean = float(r["mean_time_s"])
    if math.isfinite(mean) and mean > 0:
        over = float(r["slowest_time_s"]) / mean - 1
        s += f", against a mean of {fmt_s(mean)} per rank ({fmt_pct(over)} above it)"
    return s + "."


def rank_summary(
    cells: pd.DataFrame,
    totals: pd.DataFrame | None = None,
    extremes: pd.DataFrame | None = None,
) -> str:
    """One paragraph on a job's ranks over time.

    Parameters
    ----------
    cells : iochar.result.Table
        :func:`iochar.analyze.ranks.rank_heatmap`.
    totals : iochar.result.Table, optional
        :func:`iochar.analyze.ranks.rank_totals` of the same job.
    extremes : iochar.result.Table, optional
        :func:`iochar.analyze.ranks.rank_extremes` of the same job.

    Returns
    -------
    str
        Markdown: what the view was made from, when the I/O happened and how many ranks
        moved together, which ranks moved most and least, the slowest and fastest rank
        and whether the slowest is a straggler, and Darshan's own slowest/fastest ranks
        of shared files; or why there is no view.
    """
    ev = dict(getattr(cells, "evidence", {}) or {})
    parts = []
    if ev.get("source", "none") == "none" or not len(cells):
        parts.append(f"No per-rank view over time: {esc(ev.get('reason') or 'no bytes per rank')}.")
    else:
        parts += [_where(cells, ev), _when(cells, ev)]
    parts += [_ranks(totals), _extremes(extremes)]
    return " ".join(p for p in parts if p)
