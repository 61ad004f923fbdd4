"""Narrative for one job in its system: what the storage was doing while the job ran.

Sentences from :func:`iochar.analyze.context.job_context` (per target load during the
job, with its evidence) and :func:`iochar.analyze.context.concurrent_jobs` (the other
jobs of the database running at the same time). Every number comes from those
tables; every name from the data (applications, targets, inputs) goes through
:func:`iochar.narrate.esc`. When the counters do not cover the job's window, or
cannot be matched with its files, the paragraph says so and why (the evidence's
``status`` and ``reason``) instead of describing a load it does not know.

The busy thresholds are the papers': a sample at or above a third of the target's
peak is busy (Carns et al. 2011, section 4), an FSU above 30% is busy (Uselton &
Wright 2013, section V).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from iochar.narrate import esc, fmt_bytes, fmt_pct, fmt_rate, fmt_s, listing, plural
from iochar.result import evidence_of

__all__ = ["job_system"]

_MATCH = {
    "ost": "by the OSTs its files are striped over (Darshan LUSTRE records)",
    "mount": "by the mounts its files are on (the log's mount table)",
    "time": "by time only (nothing names where its files are)",
}


def _when(ts: Any) -> str:
    if ts is None or pd.isna(ts):
        return "an unknown time"
    return f"{pd.Timestamp(ts):%Y-%m-%d %H:%M:%S}"


def _pct(share: Any, digits: int = 1) -> str:
    """A share as a percentage; a share too small to show at ``digits`` says so."""
    if _ok(share) and 0 < float(share) < 0.5 * 10 ** -(digits + 2):
        return f"less than {fmt_pct(10 ** -(digits + 2), digits)}"
    return fmt_pct(share, digits)


def _ok(x: Any) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _job(ev: dict) -> str:
    app = ev.get("app")
    name = f"job {int(ev['job_id'])}" if ev.get("job_id") is not None else "the job"
    return name + (f" ({esc(app)})" if isinstance(app, str) and app else "")


def job_system(ctx: pd.DataFrame, others: pd.DataFrame | None = None) -> str:
    """A paragraph on the system's load while one job ran, or why it is not known.

    Parameters
    ----------
    ctx : pandas.DataFrame
        The result of :func:`iochar.analyze.context.job_context` (its evidence is
        read).
    others : pandas.DataFrame, optional
        The result of :func:`iochar.analyze.context.concurrent_jobs`, to name the
        busiest other jobs; without it the evidence's count and bytes are used.

    Returns
    -------
    str
        Markdown.

    Examples
    --------
    >>> from iochar.result import Table
    >>> t = Table({}, evidence={"job_id": 3, "app": "ior", "status": "no_counters",
    ...     "reason": "the database holds no device or server counters",
    ...     "window_start": pd.Timestamp("2017-06-20 17:49:39"),
    ...     "window_end": pd.Timestamp("2017-06-20 18:02:38"), "window_s": 779.0})
    >>> print(job_system(t))  # doctest: +NORMALIZE_WHITESPACE
    Job 3 (ior) ran from 2017-06-20 17:49:39 to 2017-06-20 18:02:38 UTC (13 min). What the
    storage was doing then is not known: the database holds no device or server counters.
    """
    ev = dict(evidence_of(ctx))
    if not ev:
        return "No job context: pass the result of `job_context`."
    who = _job(ev)
    who = who[0].upper() + who[1:]
    status = ev.get("status")
    if status == "no_date":
        return f"{who} has no start date, so what the storage was doing then is not known."
    span = (
        f"{who} ran from {_when(ev.get('window_start'))} to {_when(ev.get('window_end'))} UTC "
        f"({fmt_s(ev.get('window_s'))})."
    )
    if status not in ("covered", "partial") or ctx.empty:
        text = f"{span} What the storage was doing then is not known: {esc(ev.get('reason'))}."
        if others is not None or ev.get("other_jobs") is not None:
            text += " " + _others(ev, others)
        return text
    out = [span, _load(ctx, ev), _own(ev)]
    out.append(_others(ev, others))
    return " ".join(s for s in out if s)


def _load(ctx: pd.DataFrame, ev: dict) -> str:
    n = len(ctx)
    cov = float(ctx["coverage"].max())
    match = _MATCH.get(ev.get("match"), "")
    head = (
        f"Counters of {plural(n, 'target')}, matched {match}, observed "
        f"{'all' if cov >= 1 - 1e-6 else _pct(cov)} of its window: together they moved "
        f"{fmt_bytes(float(ctx['bytes'].sum()))}."
    )
    top = ctx.sort_values(["peak_share", "bytes"], ascending=False, na_position="last").iloc[0]
    frac = float(ev.get("busy_fraction", 0.33))
    where = esc(top["target"]) + (
        f" ({esc(top['input'])})" if isinstance(top["input"], str) else ""
    )
    peak_kind = "observed peak" if str(top["peak_basis"]).startswith("observed") else "given peak"
    busiest = (
        f"The busiest, {where}, ran at {fmt_rate(top['rate_bps'])} on average, "
        f"{_pct(top['peak_share'])} of its {peak_kind} of {fmt_rate(top['peak_bps'])}"
        + (f" (at {_when(top['peak_ts'])} UTC)" if pd.notna(top["peak_ts"]) else "")
        + f"; its busiest sample reached {_pct(top['max_share'])} of that peak, and it "
        f"spent {_pct(top['busy_share'])} of the observed window at or above "
        f"{fmt_pct(frac, 0)} of peak"
    )
    if _ok(top["util_share"]):
        busiest += f"; the kernel counted the device busy {_pct(top['util_share'])} of it"
    busiest += "."
    fsu = ctx[ctx["fsu_pct"].notna()]
    if len(fsu):
        f = fsu.sort_values("fsu_pct", ascending=False).iloc[0]
        busiest += (
            f" Its file system utilization (Uselton & Wright's FSU) peaked on "
            f"{esc(f['target'])} at {float(f['fsu_pct']):.1f}%, busy (FSU of at least "
            f"{float(ev.get('fsu_busy_pct', 30)):.0f}%) for {_pct(f['fsu_busy_share'])} of "
            f"the window"
            + (
                f", with {_pct(f['suboptimal_share'])} of its disk I/Os sub-optimal"
                if _ok(f["suboptimal_share"])
                else ""
            )
            + "."
        )
    return f"{head} {busiest}"


def _own(ev: dict) -> str:
    jb = ev.get("job_bytes")
    if not _ok(jb):
        return ""
    share = ev.get("job_share")
    if not _ok(share):
        return (
            f"The job itself read and wrote {fmt_bytes(jb)}; with several targets and "
            f"nothing naming which of them its files are on, its share of their traffic is "
            f"not known."
        )
    text = (
        f"The job itself read and wrote {fmt_bytes(jb)}: {_pct(share, 2)} of the traffic "
        f"of the targets its bytes could be placed on"
    )
    if float(share) > 1:
        text += " (more than they moved: reads served from a cache never reached them)"
    elif float(share) < 0.5:
        text += ", so most of the load came from elsewhere"
    return text + "."


def _others(ev: dict, others: pd.DataFrame | None) -> str:
    if others is not None and len(others):
        top = others.sort_values("bytes_in_window", ascending=False).head(3)
        named = listing(
            [
                f"job {int(r.job_id)}"
                + (f" ({esc(r.app)})" if isinstance(r.app, str) and r.app else "")
                + f" {fmt_bytes(r.bytes_in_window)}"
                for r in top.itertuples(index=False)
            ]
        )
        total = float(others["bytes_in_window"].sum())
        return (
            f"{plural(len(others), 'other job')} of this database ran at the same time, "
            f"moving {fmt_bytes(total)} during the window (most: {named})."
        )
    n = int(ev.get("other_jobs") or 0)
    if n == 0:
        return "No other job of this database ran at the same time."
    return (
        f"{plural(n, 'other job')} of this database ran at the same time, moving "
        f"{fmt_bytes(float(ev.get('other_jobs_bytes') or 0.0))} during the window."
    )
