"""Narrative for notebook 01 (application traces): Miller & Katz (1991) sections 3 and 5.

Sentences about the per-job tables (:func:`iochar.analyze.characterize.app_table`,
:func:`~iochar.analyze.characterize.rates_table`: Miller & Katz Tables 1 and 2), the
required / checkpoint / staging classes of every (job, file)
(:func:`iochar.analyze.classify.classify`, section 5.1), one job's data rate over time
(Figs. 3 and 4) and its cycles (:mod:`iochar.analyze.cycles`, section 5.3). Every number
in a sentence is read from the result passed in; empty results give a sentence saying
there is nothing to report.

The job the time and cycle views follow comes from
:func:`iochar.analyze.characterize.pick_job`, its bin width from
:func:`~iochar.analyze.characterize.rate_bin_s`, its periods and cycles from
:func:`iochar.analyze.cycles.job_cycles`; the tables a notebook shows come from
:mod:`iochar.plot.tables`. The former helpers here (:func:`pick_job`,
:func:`rate_bin_s`, :func:`job_periods`, :func:`table1_view`, :func:`table2_view`,
:func:`by_app`, :func:`class_view`) are deprecated and call those.

Examples
--------
>>> import pandas as pd
>>> from iochar.narrate import apps
>>> t = pd.DataFrame({"job_id": [4], "app": ["les"], "runtime_s": [145.6],
...                   "io_bytes": [3 * 2**20], "ios": [12], "basis": ["ops"]})
>>> print(apps.job_choice(t, 4, job_id=4))  # doctest: +NORMALIZE_WHITESPACE
The views below follow **job 4 (les)**, as chosen: it moved 3.0 MiB in 12 read and
write calls over 2.43 min.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from iochar._moved import warn_moved
from iochar.analyze import characterize
from iochar.narrate import code, esc, fmt_bytes, fmt_num, fmt_pct, fmt_rate, fmt_s, listing, plural

__all__ = [
    "pick_job",
    "rate_bin_s",
    "job_periods",
    "table1_view",
    "table2_view",
    "by_app",
    "class_view",
    "job_choice",
    "volume_summary",
    "large_files_summary",
    "rates_summary",
    "class_summary",
    "checkpoint_summary",
    "rate_summary",
    "cycles_summary",
]

# --------------------------------------------------------------------------- helpers


def _num(x) -> float:
    """``x`` as a float; NaN for None or <NA>."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


def _ok(x) -> bool:
    return math.isfinite(_num(x))


def _label(table: pd.DataFrame | None, job_id) -> str:
    """``"job 4 (les)"``, or ``"job 4"`` when the app is unknown."""
    app = None
    if table is not None and "app" in table.columns and job_id is not None:
        row = table.loc[table["job_id"] == job_id, "app"]
        if len(row) and isinstance(row.iloc[0], str) and row.iloc[0]:
            app = row.iloc[0]
    return f"job {job_id} ({esc(app)})" if app else f"job {job_id}"


def _cap(text: str) -> str:
    """``text`` with its first letter upper-case and the rest as it is (a name keeps its case)."""
    return text[:1].upper() + text[1:]


def _ratio(r: float) -> str:
    """A read/write data ratio in words."""
    if not _ok(r):
        return "read only"
    if r == 0:
        return "write only"
    return f"read/write ratio {fmt_num(r)}"


def _rate(bps: float) -> str:
    """A data rate, or "no rate" when the run time is unknown."""
    return "no rate (no run time)" if not _ok(bps) else fmt_rate(bps)


def _pct(x: float) -> str:
    """A share, with "<0.1%" rather than "0.0%" for a small non-zero one."""
    return "<0.1%" if 0 < _num(x) < 0.0005 else fmt_pct(x)


def _verb(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def pick_job(table: pd.DataFrame, job_id: int | None = None) -> int | None:
    """Deprecated: :func:`iochar.analyze.characterize.pick_job` (``table``, ``job_id``)."""
    warn_moved("iochar.narrate.apps.pick_job", "iochar.analyze.characterize.pick_job")
    return characterize.pick_job(table, job_id)


def rate_bin_s(table: pd.DataFrame, job_id: int | None, bin_s: float | None = None) -> float:
    """Deprecated: :func:`iochar.analyze.characterize.rate_bin_s` (``table``, ``job_id``,
    ``bin_s``)."""
    warn_moved("iochar.narrate.apps.rate_bin_s", "iochar.analyze.characterize.rate_bin_s")
    return characterize.rate_bin_s(table, job_id, bin_s)


def job_periods(store, job_id: int, *, bin_s: float | None = None, min_confidence: float = 0.99):
    """Periods of one job's bytes per bin, and its cycles when a period is found.

    .. deprecated::
        Use :func:`iochar.analyze.cycles.job_cycles` (``job_cycles(store,
        job_id=job_id, bin_s=bin_s, min_confidence=min_confidence)``), which this calls.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int
        The job.
    bin_s : float, optional
        Bin width [s]; default that of :func:`iochar.analyze.cycles.signal_from_ops`.
    min_confidence : float, default 0.99
        Least confidence of a reported period, in (0, 1).

    Returns
    -------
    tuple of (PeriodResult, CycleResult or None)
        The periods (a job with fewer than 3 bins gives an empty result, reason
        "constant signal"), and the cycles of the strongest one (None without a period).
    """
    from iochar.analyze import cycles

    warnings.warn(
        "iochar.narrate.apps.job_periods is deprecated; call "
        "iochar.analyze.cycles.job_cycles(store, job_id=..., bin_s=..., min_confidence=...)",
        DeprecationWarning,
        stacklevel=2,
    )
    return cycles.job_cycles(store, job_id=job_id, bin_s=bin_s, min_confidence=min_confidence)


# --------------------------------------------------------------------------- tables


def table1_view(table: pd.DataFrame, top: int | None = None) -> pd.DataFrame:
    """Deprecated: :func:`iochar.plot.tables.table1_view` (``table``, ``top``)."""
    from iochar.plot import tables

    warn_moved("iochar.narrate.apps.table1_view", "iochar.plot.tables.table1_view")
    return tables.table1_view(table, top)


def table2_view(table: pd.DataFrame, top: int | None = None) -> pd.DataFrame:
    """Deprecated: :func:`iochar.plot.tables.table2_view` (``table``, ``top``)."""
    from iochar.plot import tables

    warn_moved("iochar.narrate.apps.table2_view", "iochar.plot.tables.table2_view")
    return tables.table2_view(table, top)


def by_app(table: pd.DataFrame) -> pd.DataFrame:
    """Deprecated: :func:`iochar.analyze.characterize.app_means` of ``table`` (the means)
    shown by :func:`iochar.plot.tables.app_means_view` (in MiB and KiB)."""
    from iochar.plot import tables

    warn_moved(
        "iochar.narrate.apps.by_app",
        "iochar.analyze.characterize.app_means and iochar.plot.tables.app_means_view",
        call="app_means_view(app_means(table))",
    )
    return tables.app_means_view(characterize.app_means(table))


def class_view(labels: pd.DataFrame, job_id: int | None = None) -> pd.DataFrame:
    """Deprecated: :func:`iochar.plot.tables.class_view` (``labels``, ``job_id``)."""
    from iochar.plot import tables

    warn_moved("iochar.narrate.apps.class_view", "iochar.plot.tables.class_view")
    return tables.class_view(labels, job_id)


# --------------------------------------------------------------------------- narrative


def job_choice(table: pd.DataFrame, job: int | None, job_id: int | None = None) -> str:
    """Which job the time and cycle views follow, and why.

    Parameters
    ----------
    table : pandas.DataFrame
        The result of :func:`iochar.analyze.characterize.app_table` (all files).
    job : int or None
        The job followed (from :func:`iochar.analyze.characterize.pick_job`).
    job_id : int, optional
        The notebook's parameter (None: the job was picked automatically).

    Returns
    -------
    str
        Markdown.
    """
    if job is None or table.empty:
        return "There are no jobs in this database, so no job's I/O can be followed over time."
    row = table[table["job_id"] == job]
    if row.empty:
        return f"Job {job} is not in the table of jobs, so its I/O cannot be followed."
    r = row.iloc[0]
    what = (
        f"it moved {fmt_bytes(r['io_bytes'])} in {plural(int(r['ios']), 'read and write call')}"
        f" over {fmt_s(r['runtime_s'])}"
    )
    ops = table[table["basis"] == "ops"]
    if job_id is not None:
        head = f"The views below follow **{_label(table, job)}**, as chosen: {what}."
    elif r["basis"] == "ops":
        head = (
            f"The views below follow **{_label(table, job)}**, the job that moved the most "
            f"bytes among the {plural(len(ops), 'job')} with per-operation records: {what}."
        )
    else:
        head = (
            f"No job has per-operation records, so the views below follow "
            f"**{_label(table, job)}**, the job that moved the most bytes: {what}."
        )
    if r["basis"] != "ops":
        head += (
            f" Its I/O is known from counters only ({r['basis']}), not per operation: its data "
            "rate over time and its cycles cannot be measured."
        )
    return head


def volume_summary(table1: pd.DataFrame, table2: pd.DataFrame, facts, *, top: int = 3) -> str:
    """Which jobs read and write most, with their read/write ratios and rates (Tables 1-2).

    Parameters
    ----------
    table1 : pandas.DataFrame
        The result of :func:`iochar.analyze.characterize.app_table` (all files).
    table2 : pandas.DataFrame
        The result of :func:`iochar.analyze.characterize.rates_table` for the same files.
    facts : iochar.analyze.fileio.FileIO
        The per-file facts both tables were computed from (bytes read and written).
    top : int, default 3
        Jobs named per ranking.

    Returns
    -------
    str
        Markdown.
    """
    if table1.empty:
        return "There are no jobs in this database, so there is no I/O to characterise."
    t = table1.merge(
        table2[["job_id", "read_bps", "write_bps", "rw_data_ratio"]], on="job_id", how="left"
    )
    rw = facts.files.groupby("job_id")[["bytes_read", "bytes_written"]].sum()
    t = t.join(rw, on="job_id")
    t[["bytes_read", "bytes_written"]] = t[["bytes_read", "bytes_written"]].fillna(0)
    total = float(t["io_bytes"].sum())
    active = t[t["io_bytes"] > 0]
    if active.empty:
        return (
            f"None of the {plural(len(t), 'job')} in this database read or wrote any data, "
            "so there is no I/O to characterise."
        )
    br, bw = t["bytes_read"], t["bytes_written"]
    n_read_more = int(((br > bw) & (bw > 0)).sum())
    n_write_more = int(((bw > br) & (br > 0)).sum())
    n_write_only = int(((bw > 0) & (br == 0)).sum())
    n_read_only = int(((br > 0) & (bw == 0)).sum())
    no_rt = int((~(t["runtime_s"] > 0)).sum())

    def job_io(r) -> str:
        return (
            f"{_label(t, r['job_id'])} with {fmt_bytes(r['io_bytes'])} "
            f"({_ratio(r['rw_data_ratio'])}, {_rate(r['bps'])})"
        )

    by_io = active.sort_values(["io_bytes", "job_id"], ascending=[False, True]).head(top)
    lead = by_io.iloc[0]
    parts = [
        f"The {plural(len(t), 'job')} in this database moved {fmt_bytes(total)} "
        f"({plural(int(t['ios'].sum()), 'read and write call')}); "
        + (
            "all of them read or wrote data."
            if len(active) == len(t)
            else f"{len(active)} of them read or wrote data."
        ),
        "Most I/O (rates are bytes over the job's wall-clock run time; notebook 03's "
        "MiB/s/CN divides by the slowest rank's I/O time instead): "
        f"{listing([job_io(r) for _, r in by_io.iterrows()], limit=top)}"
        + (
            f"; the first alone carries {fmt_pct(lead['io_bytes'] / total)} of all bytes."
            if total > 0
            else "."
        ),
    ]
    readers = t[t["bytes_read"] > 0].sort_values(["bytes_read", "job_id"], ascending=[False, True])
    writers = t[t["bytes_written"] > 0].sort_values(
        ["bytes_written", "job_id"], ascending=[False, True]
    )
    if len(readers):
        parts.append(
            "Most read: "
            + listing(
                [
                    f"{_label(t, r['job_id'])}: {fmt_bytes(r['bytes_read'])} at "
                    f"{_rate(r['read_bps'])}"
                    for _, r in readers.head(top).iterrows()
                ],
                limit=top,
            )
            + "."
        )
    if len(writers):
        parts.append(
            "Most written: "
            + listing(
                [
                    f"{_label(t, r['job_id'])}: {fmt_bytes(r['bytes_written'])} at "
                    f"{_rate(r['write_bps'])}"
                    for _, r in writers.head(top).iterrows()
                ],
                limit=top,
            )
            + "."
        )
    parts.append(
        f"{plural(n_read_more, 'job')} read more bytes than they wrote (ratio above 1, as "
        f"in Miller & Katz's programs that stage data through files), "
        f"{plural(n_write_more, 'job')} wrote more than they read; {n_write_only} only "
        f"wrote and {n_read_only} only read."
    )
    if no_rt:
        parts.append(f"{plural(no_rt, 'job')} have no positive run time, so no rates.")
    return " ".join(parts)


def large_files_summary(
    table_all: pd.DataFrame, table_large: pd.DataFrame, min_file_bytes: int | None
) -> str:
    """How much of the I/O the "large" files carry (Miller & Katz section 5.2).

    Parameters
    ----------
    table_all : pandas.DataFrame
        :func:`iochar.analyze.characterize.app_table` over all files.
    table_large : pandas.DataFrame
        The same with ``min_file_bytes``.
    min_file_bytes : int or None
        The threshold used [bytes].

    Returns
    -------
    str
        Markdown.
    """
    files_all = int(table_all["files"].sum()) if len(table_all) else 0
    if files_all == 0:
        return "No job read or wrote any file, so there are no large or small files to compare."
    if not min_file_bytes:
        return "No size threshold was given, so every file counts as large."
    files_l = int(table_large["files"].sum())
    io_all, io_l = float(table_all["io_bytes"].sum()), float(table_large["io_bytes"].sum())
    ios_all, ios_l = int(table_all["ios"].sum()), int(table_large["ios"].sum())
    thr = fmt_bytes(min_file_bytes)
    parts = [
        f"Files of at least {thr} are {plural(files_l, 'file')} of {fmt_num(files_all)} "
        f"({_pct(files_l / files_all)}) and carry "
        f"{_pct(io_l / io_all) if io_all else 'n/a'} of the bytes moved and "
        f"{_pct(ios_l / ios_all) if ios_all else 'n/a'} of the read and write calls."
    ]
    m = table_all[["job_id", "io_bytes"]].merge(
        table_large[["job_id", "io_bytes"]], on="job_id", suffixes=("", "_l")
    )
    m = m[m["io_bytes"] > 0]
    share = m["io_bytes_l"] / m["io_bytes"]
    none = m[share == 0]
    small = m[(share > 0) & (share < 0.5)]
    if io_all and io_l / io_all >= 0.9:
        parts.append(
            "As Miller & Katz observed, the small files (parameters, text output) add "
            "little to the total."
        )
    elif io_all:
        parts.append(
            "Unlike Miller & Katz's programs, small files carry a large part of the I/O here."
        )
    if len(none):
        parts.append(
            f"{plural(len(none), 'job')} touched only smaller files and "
            f"{_verb(len(none), 'drops', 'drop')} out of the large-files tables: "
            f"{listing([_label(table_all, j) for j in none['job_id']])}."
        )
    if len(small):
        parts.append(
            f"In {plural(len(small), 'job')} small files carry most of the bytes (their "
            "share in brackets): "
            + listing(
                [
                    f"{_label(table_all, r.job_id)} ({_pct(1 - r.io_bytes_l / r.io_bytes)})"
                    for r in small.itertuples()
                ]
            )
            + "."
        )
    return " ".join(parts)


def rates_summary(table2: pd.DataFrame, min_file_bytes: int | None = None) -> str:
    """Access sizes and read/write ratios of Table 2 (Miller & Katz section 5.2).

    Parameters
    ----------
    table2 : pandas.DataFrame
        The result of :func:`iochar.analyze.characterize.rates_table`.
    min_file_bytes : int, optional
        The threshold it was computed with [bytes], named in the sentence.

    Returns
    -------
    str
        Markdown.
    """
    scope = f"files of at least {fmt_bytes(min_file_bytes)}" if min_file_bytes else "all files"
    t = table2[(table2["reads_per_s"].fillna(0) + table2["writes_per_s"].fillna(0)) > 0]
    if t.empty:
        return f"No job read or wrote {scope} with a known run time, so Table 2 is empty."
    parts = []
    avg = pd.concat([t["avg_read_bytes"], t["avg_write_bytes"]]).dropna()
    if len(avg):
        lo, hi = avg.idxmin(), avg.idxmax()
        parts.append(
            f"On {scope}, average request sizes range from {fmt_bytes(avg.min())} in "
            f"{_label(t, t.loc[lo, 'job_id'])} to {fmt_bytes(avg.max())} in "
            f"{_label(t, t.loc[hi, 'job_id'])}; Miller & Katz saw 32 KB to 512 KB on "
            "their large files."
        )
    r = t["rw_data_ratio"].dropna()
    if len(r):
        parts.append(
            f"Read/write data ratios run from {fmt_num(r.min())} in "
            f"{_label(t, t.loc[r.idxmin(), 'job_id'])} to {fmt_num(r.max())} in "
            f"{_label(t, t.loc[r.idxmax(), 'job_id'])}, median {fmt_num(r.median())} over "
            f"{plural(len(r), 'job')} that wrote."
        )
    wonly = t["rw_data_ratio"].isna()
    if wonly.any():
        parts.append(f"{plural(int(wonly.sum()), 'job')} wrote nothing (no ratio).")
    fast = t.assign(_b=t["read_bps"].fillna(0) + t["write_bps"].fillna(0)).sort_values(
        ["_b", "job_id"], ascending=[False, True]
    )
    f = fast.iloc[0]
    parts.append(
        f"The highest data rate is {_label(t, f['job_id'])}'s: {_rate(f['read_bps'])} read "
        f"and {_rate(f['write_bps'])} written, {fmt_num(f['reads_per_s'])} reads/s and "
        f"{fmt_num(f['writes_per_s'])} writes/s."
    )
    return " ".join(parts)


def _shares(labels: pd.DataFrame) -> pd.DataFrame:
    from iochar.analyze.classify import class_breakdown

    return class_breakdown(labels).set_index("class")


def class_summary(labels: pd.DataFrame, job_id: int | None = None) -> str:
    """What share of files, bytes and calls each class carries, and how sure the labels are.

    Parameters
    ----------
    labels : pandas.DataFrame
        The result of :func:`iochar.analyze.classify.classify`.
    job_id : int, optional
        Only this job (None: all jobs).

    Returns
    -------
    str
        Markdown.
    """
    f = labels if job_id is None else labels[labels["job_id"] == job_id]
    where = "" if job_id is None else f" of job {job_id}"
    if f.empty:
        return f"There are no files{where} to classify."
    b = _shares(f)
    pairs = "file" if job_id is not None else "(job, file) pair"
    moved = float(b["bytes"].sum())
    parts = [f"Of {plural(len(f), pairs)}{where}:"]
    for c in b.index:
        r = b.loc[c]
        if r["files"] == 0:
            continue
        parts.append(
            f"**{c}** {plural(int(r['files']), 'file')} ({_pct(r['files_share'])}) "
            f"{_verb(int(r['files']), 'carries', 'carry')} {_pct(r['bytes_share'])} of the "
            f"bytes ({fmt_bytes(r['bytes'])}) and {_pct(r['ops_share'])} of the calls;"
        )
    parts[-1] = parts[-1].rstrip(";") + "."
    if moved > 0:
        top = b["bytes"].idxmax()
        g = f[f["class"] == top].assign(_b=lambda d: d["bytes_read"] + d["bytes_written"])
        big = g.sort_values("_b", ascending=False).iloc[0]
        who = code(big["path"]) + ("" if job_id is not None else f" of job {big['job_id']}")
        parts.append(
            f"By bytes **{top}** I/O dominates; its largest file is {who} "
            f"({fmt_bytes(big['_b'])}, {_pct(big['_b'] / moved)} of all bytes): "
            f"{esc(big['reason'])}."
        )
    if (b.loc[["required", "checkpoint", "staging"], "files"] == 0).all():
        parts.append("No file fits the required, checkpoint or staging rules.")
    conf = f.groupby("class")["confidence"].agg(["mean", "size"])
    sure = [
        f"{c} {fmt_num(conf.loc[c, 'mean'], 2)}"
        for c in ("required", "checkpoint", "staging", "other")
        if c in conf.index
    ]
    low = int((f["confidence"] < 0.6).sum())
    lows = (
        "no label has a confidence under 0.6"
        if low == 0
        else f"{plural(low, 'label')} {_verb(low, 'has', 'have')} a confidence under 0.6 "
        "(0.5 marks a label made without measurable regularity, e.g. from counters, or a "
        "file no rule fits)"
    )
    parts.append(f"Mean confidence: {listing(sure, limit=4)}; {lows}.")
    return " ".join(parts)


def checkpoint_summary(labels: pd.DataFrame, *, limit: int = 6) -> str:
    """Which files are checkpoints and why (their evidence), grouped by job and series.

    Parameters
    ----------
    labels : pandas.DataFrame
        The result of :func:`iochar.analyze.classify.classify`.
    limit : int, default 6
        Most groups (a job's series, or a single file) described.

    Returns
    -------
    str
        Markdown.
    """
    ck = labels[labels["class"] == "checkpoint"].copy()
    if ck.empty:
        return "No file was classified as a checkpoint."
    ck["_key"] = ck["series"].where(ck["series"].notna(), ck["path"])
    ck["_b"] = ck["bytes_written"]
    groups = (
        ck.groupby(["job_id", "_key"], sort=False)
        .agg(
            n=("file_id", "size"),
            b=("_b", "sum"),
            conf=("confidence", "mean"),
            reason=("reason", "first"),
            first=("path", "min"),
            last=("path", "max"),
        )
        .reset_index()
        .sort_values(["b", "job_id"], ascending=[False, True])
    )
    jobs = ck["job_id"].nunique()
    items = []
    for g in groups.head(limit).itertuples():
        files = code(g.first) if g.n == 1 else f"{code(g.first)} ... {code(g.last)} ({g.n} files)"
        items.append(
            f"- job {g.job_id}: {files}, {fmt_bytes(g.b)} written, confidence "
            f"{fmt_num(g.conf, 2)}: {esc(g.reason)}"
        )
    more = len(groups) - limit
    tail = f"\n- ... and {plural(more, 'more group')}" if more > 0 else ""
    return (
        f"{plural(len(ck), 'file')} in {plural(jobs, 'job')} are checkpoints "
        f"({fmt_bytes(ck['_b'].sum())} written), largest first:\n\n" + "\n".join(items) + tail
    )


def rate_summary(
    rate: pd.DataFrame, by_class: pd.DataFrame, table: pd.DataFrame | None, job_id: int
) -> str:
    """One job's data rate over time: peak, idle bins, and when each class moves data.

    Parameters
    ----------
    rate : pandas.DataFrame
        The result of :func:`iochar.analyze.characterize.data_rate` for the job.
    by_class : pandas.DataFrame
        The result of :func:`iochar.analyze.classify.class_rate` for the job, same bins.
    table : pandas.DataFrame, optional
        :func:`iochar.analyze.characterize.app_table`, for the job's application name.
    job_id : int
        The job.

    Returns
    -------
    str
        Markdown.
    """
    who = _label(table, job_id)
    if rate.empty or float(rate["bytes"].sum()) == 0:
        return f"{_cap(who)} has no timed reads or writes, so it has no data rate over time."
    per = rate.pivot_table(index="t_s", columns="op", values="bytes", aggfunc="sum").fillna(0)
    for op in ("read", "write"):
        if op not in per.columns:
            per[op] = 0.0
    tot = per["read"] + per["write"]
    t = np.asarray(per.index, dtype=float)
    width = float(t[1] - t[0]) if len(t) > 1 else float("nan")
    if not _ok(width):
        width = float(rate["bytes"].sum() / rate["bps"].sum()) if rate["bps"].sum() else 1.0
    peak_at = float(tot.idxmax())
    mean_bps = float(tot.sum()) / (len(tot) * width)
    peak_bps = float(tot.max()) / width
    idle = float((tot == 0).mean())
    parts = [
        f"In {fmt_s(width)} bins, {who}'s I/O peaks at {fmt_rate(peak_bps)} "
        f"({fmt_rate(per.loc[peak_at, 'read'] / width)} read, "
        f"{fmt_rate(per.loc[peak_at, 'write'] / width)} written) at t = {fmt_s(peak_at)}, "
        f"{fmt_num(peak_bps / mean_bps)} times its mean of {fmt_rate(mean_bps)}; "
        f"{fmt_pct(idle)} of the {len(tot)} bins have no I/O."
    ]
    at = by_class[np.isclose(by_class["t_s"].to_numpy(float), peak_at)]
    if len(at) and float(at["bytes"].sum()) > 0:
        c = at.loc[at["bytes"].idxmax()]
        parts.append(
            f"The peak bin is {fmt_pct(float(c['bytes']) / float(at['bytes'].sum()))} "
            f"{c['class']} I/O."
        )
    if not by_class.empty:
        span = (t.max() + width) if len(t) else float("nan")
        total = float(by_class["bytes"].sum())
        items = []
        for c, g in by_class.groupby("class", sort=False):
            on = g[g["bytes"] > 0]
            if on.empty:
                continue
            items.append(
                f"{c} I/O ({_pct(float(on['bytes'].sum()) / total)} of the bytes) is "
                f"active in {fmt_pct(len(on) / len(g))} of the bins, from "
                f"{fmt_pct(float(on['t_s'].min()) / span, 0)} to "
                f"{fmt_pct(float(on['t_s'].max() + width) / span, 0)} of the run"
            )
        if items:
            parts.append("By class: " + "; ".join(items) + ".")
    return " ".join(parts)


def _conf(c) -> str:
    c = _num(c)
    return "above 99.99%" if c >= 0.9999 else fmt_pct(c, 2)


def _checkpoint_intervals(labels: pd.DataFrame, facts, job_id: int) -> list[tuple[str, float]]:
    """(series or path, interval [s]) of the job's checkpoints: burst or series spacing."""
    ck = labels[(labels["job_id"] == job_id) & (labels["class"] == "checkpoint")]
    out: list[tuple[str, float]] = []
    if ck.empty:
        return out
    bursts = ck[ck["burst_interval_s"].notna()]
    for r in bursts.itertuples():
        out.append((str(r.path), float(r.burst_interval_s)))
    if facts is not None:
        f = facts.files[facts.files["job_id"] == job_id][["file_id", "first_write_t"]]
        s = ck[ck["series"].notna() & ck["burst_interval_s"].isna()].merge(f, on="file_id")
        for pat, g in s.groupby("series"):
            t = np.unique(np.round(g["first_write_t"].dropna().to_numpy(float), 6))
            if len(t) >= 2:
                out.append((str(pat), float(np.diff(t).mean())))
    return out


def cycles_summary(
    periods,
    cycles=None,
    *,
    job_id: int,
    table: pd.DataFrame | None = None,
    labels: pd.DataFrame | None = None,
    facts=None,
) -> str:
    """Whether the job's I/O repeats, how sure that is, and how alike its cycles are.

    Parameters
    ----------
    periods : iochar.analyze.cycles.PeriodResult
        The job's periods (:func:`iochar.analyze.cycles.job_cycles` or
        :func:`iochar.analyze.cycles.find_periods`).
    cycles : iochar.analyze.cycles.CycleResult, optional
        Its cycles at the strongest period.
    job_id : int
        The job.
    table : pandas.DataFrame, optional
        :func:`iochar.analyze.characterize.app_table`, for the application name.
    labels : pandas.DataFrame, optional
        :func:`iochar.analyze.classify.classify`: checkpoint intervals are compared
        with the periods.
    facts : iochar.analyze.fileio.FileIO, optional
        The facts ``labels`` came from (first-write times of numbered checkpoint series).

    Returns
    -------
    str
        Markdown.
    """
    who = _label(table, job_id)
    p = periods.periods
    basis = None
    if table is not None and "basis" in table.columns:
        row = table.loc[table["job_id"] == job_id, "basis"]
        basis = row.iloc[0] if len(row) else None
    if p.empty and basis is not None and basis != "ops":
        return (
            f"{_cap(who)} has no per-operation records (its I/O is known from "
            f"{basis}), so its cycles cannot be measured."
        )
    if p.empty:
        reason = periods.reason or "no period stands out"
        if reason == "constant signal":
            return (
                f"{_cap(who)}'s bytes per bin do not vary ({periods.n_samples} bins, "
                "constant), so there is no cycle to find."
            )
        return f"No period was found in {who}'s I/O: {reason}."
    first = p.iloc[0]
    conf = float(first["confidence"])
    sure = f"confidence {_conf(conf)}"
    jit = (
        f", cycle lengths vary by {fmt_pct(first['jitter'])}"
        if _ok(first["jitter"])
        else ", too few cycles to measure jitter"
    )
    by_rank = dict(zip(p["rank"].astype(int), p["period_s"].astype(float), strict=True))

    def harm(r) -> str:
        longer = by_rank.get(int(r["harmonic_of"])) if not pd.isna(r["harmonic_of"]) else None
        if longer is None:
            return ""
        return (
            f"; it fits {fmt_num(longer / float(r['period_s']), 3)} times into the "
            f"{fmt_s(longer)} period"
        )

    parts = [
        f"{_cap(who)}'s I/O repeats every **{fmt_s(first['period_s'])}** ({sure}, "
        f"false-alarm probability {float(first['false_alarm']):.2g}; "
        f"{fmt_num(first['n_cycles'])} cycles in the run{jit}{harm(first)})."
    ]
    if len(p) > 1:
        others = [
            f"{fmt_s(r['period_s'])} (confidence {_conf(r['confidence'])}{harm(r)})"
            for _, r in p.iloc[1:].iterrows()
        ]
        parts.append(f"It also repeats every {listing(others)}.")
    if cycles is not None and len(cycles.cycles):
        c = cycles.cycles
        full = c[c["complete"]]
        if len(full):
            sim = cycles.similarity
            word = (
                "remarkably similar, as Miller & Katz found"
                if sim >= 0.8
                else "similar"
                if sim >= 0.5
                else "unlike each other"
            )
            parts.append(
                f"Cut at {fmt_s(cycles.period_s)}, its {plural(len(full), 'complete cycle')} "
                "move a median "
                f"of {fmt_bytes(full['bytes'].median())} each (from "
                f"{fmt_bytes(full['bytes'].min())} to {fmt_bytes(full['bytes'].max())}); "
                f"their median similarity to the typical cycle is {fmt_num(sim, 2)}: {word}."
            )
    if labels is not None:
        iv = _checkpoint_intervals(labels, facts, job_id)
        if iv:
            ps = p["period_s"].to_numpy(float)
            items = []
            for name, v in iv[:3]:
                k = int(np.argmin(np.abs(np.log(v / ps))))
                ratio = v / ps[k]
                rel = (
                    f"matching the {fmt_s(ps[k])} period"
                    if abs(ratio - 1) <= 0.05
                    else f"{fmt_num(ratio, 2)} times the {fmt_s(ps[k])} period"
                )
                items.append(f"{code(name)} every {fmt_s(v)}, {rel}")
            parts.append(f"Its checkpoints come {listing(items, limit=3)}.")
    return " ".join(parts)
