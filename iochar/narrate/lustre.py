"""Sentences about Lustre OSTs: layouts, bytes per OST, imbalance and the slow OST.

Every number comes from :func:`iochar.analyze.lustre.ost_summary` (which runs the query
of the insight rule BAD-OST-1); the rules behind them are in
:mod:`iochar.analyze.lustre`: bytes placed by Lustre RAID-0 striping (by DXT offsets, or
an even split over a file's OSTs without them), an OST's rate as the bytes it got over
its files' POSIX times, its slowdown as the median rate over the job's rated OSTs
divided by its rate, slow from :data:`iochar.analyze.lustre.SLOW_OST_RATIO` up.

Examples
--------
>>> import iochar
>>> from iochar.analyze import lustre as lustre_analysis
>>> from iochar.narrate import lustre
>>> db = iochar.connect(":memory:")
>>> print(lustre.summary(lustre_analysis.ost_summary(db))[:71])
No Darshan LUSTRE records: the database holds no Darshan LUSTRE records
"""

from __future__ import annotations

import math

import pandas as pd

from iochar.analyze.lustre import MIN_OST_BYTES, SLOW_OST_RATIO
from iochar.narrate import fmt_bytes, fmt_num, fmt_pct, fmt_rate, listing, plural
from iochar.result import evidence_of

__all__ = ["summary", "job"]


def _val(row, col):
    v = row.get(col) if hasattr(row, "get") else getattr(row, col, None)
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return None
    return v


def _none(table: pd.DataFrame) -> str:
    why = evidence_of(table).get("reason") or "no job here has Darshan LUSTRE records"
    return (
        f"No Darshan LUSTRE records: {why.split(' (')[0]}, so the OSTs that held the files "
        "are unknown (Darshan records a file's Lustre layout only for files on Lustre, "
        "with its LUSTRE module built in)."
    )


def _ratio(x: float) -> str:
    return f"{fmt_num(float(x))}x"


def summary(table: pd.DataFrame, *, slow_at: float = SLOW_OST_RATIO) -> str:
    """Which jobs have Lustre layouts, and which of them had a slow OST.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`iochar.analyze.lustre.ost_summary` (any number of jobs).
    slow_at : float, default :data:`~iochar.analyze.lustre.SLOW_OST_RATIO`
        The slowdown (median rate / OST rate) from which an OST is slow.

    Returns
    -------
    str
        Markdown: the jobs with layouts, their files and OSTs, and each job with a slow
        OST (its id and slowdown); or, plainly, that there are no LUSTRE records.
    """
    if table.empty:
        return _none(table)
    n, files = len(table), int(table["files"].sum())
    ratio = pd.to_numeric(table["slow_ost_ratio"], errors="coerce")
    slow = table[(ratio >= slow_at) & (pd.to_numeric(table["rated_osts"]) >= 3)]
    head = (
        f"{plural(n, 'job')} {'has' if n == 1 else 'have'} Lustre layouts (Darshan LUSTRE "
        f"records) for {plural(files, 'file')}."
    )
    if slow.empty:
        rated = int(ratio.notna().sum())
        return (
            head + f" No job had an OST {_ratio(slow_at)} or more below its median OST rate "
            f"({plural(rated, 'job')} with rated OSTs)."
        )
    parts = [
        f"job {int(r.job_id)} (OST {int(r.slowest_ost)}, {_ratio(r.slow_ost_ratio)} below "
        f"the median {r.slowest_ost_op} rate)"
        for r in slow.sort_values("slow_ost_ratio", ascending=False).itertuples()
    ]
    return head + f" A slow OST ({_ratio(slow_at)} or more below the median): {listing(parts)}."


def job(table: pd.DataFrame, job_id: int, *, slow_at: float = SLOW_OST_RATIO) -> str:
    """One job's OSTs: layouts, how its bytes fell on them, and its slowest OST.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`iochar.analyze.lustre.ost_summary` holding the job (others are ignored).
    job_id : int
        The job.
    slow_at : float, default :data:`~iochar.analyze.lustre.SLOW_OST_RATIO`
        The slowdown from which an OST is slow.

    Returns
    -------
    str
        Markdown: the files and OSTs, stripe sizes and counts; the split rule and the
        imbalance (busiest OST over the mean, CV); the slowest OST against the median
        and the share of the job's I/O time its files took. Said plainly when the job
        has no LUSTRE records, no POSIX data, or too few rated OSTs to compare.
    """
    rows = table[table["job_id"] == job_id] if not table.empty else table
    if rows.empty:
        return (
            f"Job {int(job_id)} has no Darshan LUSTRE records, so the OSTs that held its "
            "files are unknown."
        )
    r = rows.iloc[0]
    size_lo, size_hi = _val(r, "stripe_size_min"), _val(r, "stripe_size_max")
    size = (
        f"stripe size {fmt_bytes(size_lo)}"
        if size_lo == size_hi
        else f"stripe sizes {fmt_bytes(size_lo)} to {fmt_bytes(size_hi)}"
    )
    c_lo, c_hi = int(r["stripe_count_min"]), int(r["stripe_count_max"])
    count = (
        f"{plural(c_lo, 'stripe')} per file"
        if c_lo == c_hi
        else f"{c_lo:,} to {c_hi:,} stripes per file"
    )
    version = _val(r, "layout_version")
    ver = ""
    if version == 1:
        ver = "; layout version 1, written before Darshan 3.4"
    out = [
        f"Job {int(job_id)}'s {plural(int(r['files']), 'file')} with a Lustre layout "
        f"{'sits' if int(r['files']) == 1 else 'sit'} on "
        f"{plural(int(r['osts']), 'OST')} ({size}, {count}{ver})."
    ]
    if int(r["posix_files"]) == 0:
        out.append(
            "None of them has a POSIX record, so there are no bytes, times or rates per OST."
        )
        return " ".join(out)
    split = {
        "even": "split evenly over each file's OSTs (no DXT offsets)",
        "dxt-offsets": "placed on the OSTs by their DXT offsets (Lustre RAID-0 striping)",
        "mixed": f"placed by DXT offsets for {plural(int(r['dxt_files']), 'file')} and split "
        "evenly over the OSTs for the others",
    }[r["split"]]
    imb = _val(r, "ost_imbalance")
    spread = ""
    if int(r["osts"]) == 1:
        spread = f": all on OST {int(r['busiest_ost'])}"
    elif imb is not None and imb < 1.005:
        spread = f": {fmt_bytes(r['ost_bytes_mean'])} on each OST"
    elif imb is not None:
        spread = (
            f": the busiest OST ({int(r['busiest_ost'])}) holds "
            f"{fmt_bytes(r['ost_bytes_max'])}, {_ratio(imb)} the mean per OST "
            f"(CV {fmt_num(float(r['ost_bytes_cv']))})"
        )
    their = "Its" if int(r["posix_files"]) == 1 else "Their"
    out.append(f"{their} {fmt_bytes(r['bytes'])} of POSIX bytes are {split}{spread}.")
    rated = _val(r, "rated_osts")
    if rated is None or rated < 3:
        out.append(
            f"{'No OST' if rated is None else plural(int(rated), 'OST')} moved more than "
            f"{fmt_bytes(MIN_OST_BYTES)} in one direction with a recorded time, too few to "
            "single out a slow one."
        )
        return " ".join(out)
    op = r["slowest_ost_op"]
    ratio = float(r["slow_ost_ratio"])
    verb = "wrote" if op == "write" else "read"
    if ratio < 1.005:  # e.g. one file striped over them all: the same bytes and time each
        out.append(
            f"All {plural(int(rated), 'rated OST')} {verb} at {fmt_rate(r['median_bytes_per_s'])}: "
            "no slow OST."
        )
        return " ".join(out)
    share = _val(r, "slowest_ost_time_share")
    took = ""
    if share is not None:
        took = (
            f"; its {plural(int(r['slowest_ost_files']), 'file')} took "
            f"{fmt_pct(share)} of the job's POSIX read and write time on Lustre files"
        )
    line = (
        f"OST {int(r['slowest_ost'])} {verb} at "
        f"{fmt_rate(r['slowest_bytes_per_s'])}, {_ratio(ratio)} below the median of "
        f"{plural(int(rated), 'rated OST')} ({fmt_rate(r['median_bytes_per_s'])})"
    )
    if ratio >= slow_at:
        out.append(f"{line}: a slow OST{took}.")
    else:
        out.append(
            f"No slow OST: the slowest, {line}, is within the {_ratio(slow_at)} that marks one."
        )
    return " ".join(out)
