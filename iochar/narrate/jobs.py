"""Narrative for notebook 03 (jobs and variance): Carns et al. (2011) Tables IV and VI.

The paragraphs state what :func:`iochar.analyze.jobs.project_table`,
:func:`~iochar.analyze.jobs.sharing_table`, :func:`~iochar.analyze.jobs.size_histogram`,
:func:`iochar.analyze.variance.repeated_jobs` and
:func:`~iochar.analyze.variance.similar_jobs` found: which applications move the most
data and how fast (Table VI, Fig. 11), which file-sharing patterns dominate (Figs. 3(b)
and 5), the most common access sizes (Figs. 10 and 12), how much repeated runs of one
job vary (Table IV) and where one job sits among its repeated runs. The tables the
notebook shows beside them (:func:`~iochar.analyze.jobs.large_jobs`,
:func:`~iochar.analyze.jobs.size_table`, :func:`~iochar.analyze.variance.most_variable_job`)
are :mod:`iochar.analyze`'s too.

Examples
--------
>>> import pandas as pd
>>> from iochar.analyze.jobs import sharing_table
>>> from iochar.narrate import jobs
>>> jobs.sharing(sharing_table(pd.DataFrame({"job_id": [], "sharing": []})))
'No job has file records, so there is no file-sharing pattern to report.'
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from iochar.analyze.jobs import UNKNOWN, JobMetrics
from iochar.narrate import code, fmt_bytes, fmt_num, fmt_pct, fmt_rate, fmt_s, listing, plural

__all__ = [
    "projects",
    "sharing",
    "access_sizes",
    "variance",
    "history",
]

MiB = float(1 << 20)
GiB = float(1 << 30)


def _jobs_frame(metrics) -> pd.DataFrame:
    return metrics.jobs if isinstance(metrics, JobMetrics) else metrics


def _labels(values: pd.Series) -> pd.Series:
    """Project names as the analysis tables label them (a missing one as ``UNKNOWN``)."""
    return values.astype("string").fillna(UNKNOWN).astype(object)


def _name(label) -> str:
    """An application name for a sentence (the unknown one spelled out)."""
    return "the unnamed application" if label == UNKNOWN else code(label)


def _names(joined: str, limit: int = 5) -> str:
    """Comma-joined project labels (as in ``sharing_table``'s ``apps``) as a sentence list."""
    items = [a for a in str(joined).split(", ") if a]
    return listing(
        ["jobs without an application name" if a == UNKNOWN else code(a) for a in items],
        limit=limit,
    )


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _finite(x) -> bool:
    try:
        return x is not None and not pd.isna(x) and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _num(values) -> pd.Series:
    return pd.to_numeric(pd.Series(values), errors="coerce").astype("float64")


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


# --------------------------------------------------------------------------- narrative


def projects(table: pd.DataFrame, *, min_procs: int, min_mib: float, by: str = "app") -> str:
    """Which projects move the most data, and how fast (Table VI and Fig. 11).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`iochar.analyze.jobs.project_table`'s result (its ``jobs`` and
        ``mib_moved`` [MiB] give the jobs kept and the data they moved).
    min_procs : int
        The process filter used [processes].
    min_mib : float
        The data filter used [MiB].
    by : str, default "app"
        The project column.

    Returns
    -------
    str
        Markdown.
    """
    procs = plural(min_procs, "process", "processes")
    crit = f"at least {procs} and moved at least {fmt_num(min_mib)} MiB"
    if len(table) == 0:
        return (
            f"No job ran {crit}, so Table VI has no rows; lower `min_procs` or `min_mib` "
            "to see smaller jobs."
        )
    t = table.assign(_label=_labels(table[by]).to_numpy()).set_index("_label")
    moved = (_num(t["mib_moved"]).fillna(0) * MiB).sort_index()  # bytes, by name
    njobs = _num(t["jobs"]).fillna(0).astype(int)
    total = float(moved.sum())
    top = str(moved.idxmax())
    parts = [
        f"**{plural(int(njobs.sum()), 'job')}** ran {crit} (section 5's filter), "
        f"{plural(len(moved), 'application')}"
        + (" (counting the jobs without a name as one)" if UNKNOWN in moved.index else "")
        + f", {fmt_bytes(total)} read and written in all."
    ]
    s = (
        f"{_cap(_name(top))} moved the most data: {fmt_bytes(moved[top])} in "
        f"{plural(int(njobs[top]), 'job')} ({fmt_pct(moved[top] / total if total > 0 else np.nan)}"
        " of it)"
    )
    rate = t.loc[top, "mib_s_cn"]
    s += (
        f", at {fmt_num(rate)} MiB/s per compute node on average (Carns et al.'s MiB/s/CN: "
        "bytes over the slowest rank's I/O time, per compute node; notebook 01's MiB/s "
        "divides by the whole wall-clock run time)."
        if _finite(rate)
        else "."
    )
    parts.append(s)
    med = _num(t["median_mib_s_cn"]).dropna()
    if len(med) > 1:
        fast, slow = med.idxmax(), med.idxmin()
        s = (
            f"By median MiB/s/CN the fastest application is {_name(fast)} "
            f"({fmt_num(med[fast])}) and the slowest {_name(slow)} ({fmt_num(med[slow])})"
        )
        if med[slow] > 0:
            s += f", {fmt_num(med[fast] / med[slow])} times slower"
        parts.append(s + ".")
    io = _num(t["io_time_pct"]).dropna()
    md = _num(t["meta_time_pct"]).dropna()
    facts = []
    for col, what in ((io, "of its run time in I/O"), (md, "of its I/O time in metadata")):
        if len(col) > 1 and fmt_pct(col.max() / 100) == fmt_pct(col.min() / 100):
            facts.append((None, f"every application spends {fmt_pct(col.max() / 100)} {what}"))
        elif len(col):
            facts.append((col.idxmax(), f"the largest share {what} ({fmt_pct(col.max() / 100)})"))
    if len(facts) == 2 and facts[0][0] is not None and facts[0][0] == facts[1][0]:
        both = facts[1][1].replace("the largest share ", "")
        parts.append(f"{_cap(_name(facts[0][0]))} spends {facts[0][1]} and {both}.")
    elif facts:
        said = [f"{_name(a)} spends {w}" if a is not None else w for a, w in facts]
        parts.append(_cap("; ".join(said)) + ".")
    return " ".join(parts)


def sharing(table: pd.DataFrame) -> str:
    """Which file-sharing patterns dominate, by jobs and by data (Figs. 3(b) and 5).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`iochar.analyze.jobs.sharing_table`'s result.

    Returns
    -------
    str
        Markdown.
    """
    io = table[table["sharing"] != "none"] if len(table) else table
    if len(io) == 0:
        return "No job has file records, so there is no file-sharing pattern to report."
    n = int(io["jobs"].sum())
    top = io.sort_values("jobs", ascending=False, kind="stable").iloc[0]
    counts = listing(f"{r.sharing} {int(r.jobs)}" for r in io.itertuples())
    parts = [
        f"Of {plural(n, 'job')} with file records, the most common pattern is "
        f"**{top['sharing']}** ({plural(int(top['jobs']), 'job')}, {fmt_pct(top['jobs'] / n)}; "
        f"{_names(top['apps'])}); all patterns: {counts}."
    ]
    pb = _num(io["pct_bytes"])
    if pb.notna().any():
        b = io.loc[pb.idxmax()]
        s = (
            f"By data, **{b['sharing']}** files carry the most: "
            f"{fmt_bytes(b['gib_moved'] * GiB)} ({fmt_pct(b['pct_bytes'] / 100)} of all bytes"
        )
        s += f", from {_names(b['apps'])})." if b["sharing"] != top["sharing"] else ")."
        parts.append(s)
    r0 = int(_num(io["rank0_jobs"]).fillna(0).sum()) if "rank0_jobs" in io else 0
    if r0:
        apps = _names(
            ", ".join(sorted({a for x in io["rank0_apps"] for a in str(x).split(", ") if a}))
        )
        parts.append(
            f"{plural(r0, 'job')} ({apps}) moved every byte from rank 0 alone, the rank-0 I/O "
            "of Carns et al.'s NuclearPhysics A and B."
        )
    none = table.loc[table["sharing"] == "none", "jobs"]
    if len(none) and int(none.iloc[0]):
        parts.append(f"{plural(int(none.iloc[0]), 'job')} had no file records at all.")
    return " ".join(parts)


def access_sizes(hist: pd.DataFrame, *, by: str = "app") -> str:
    """The most common read and write sizes, and who makes them (Figs. 10 and 12).

    Parameters
    ----------
    hist : pandas.DataFrame
        :func:`iochar.analyze.jobs.size_histogram`'s result.
    by : str, default "app"
        Its project column.

    Returns
    -------
    str
        Markdown.
    """
    if hist is None or len(hist) == 0 or _num(hist["count"]).fillna(0).sum() == 0:
        return "No read or write access sizes were recorded for these jobs."
    d = hist.assign(_app=_labels(hist[by]).to_numpy(), _n=_num(hist["count"]).fillna(0))
    parts = []
    for op in ("read", "write"):
        o = d[d["op"] == op]
        total = float(o["_n"].sum())
        if total == 0:
            parts.append(f"No {op}s were recorded.")
            continue
        per_bin = o.groupby("bin", sort=False)["_n"].sum()
        b = per_bin.idxmax()
        who = o[o["bin"] == b].groupby("_app")["_n"].sum()
        app = who.idxmax()
        s = (
            f"The most common {op} size is **{b} bytes**: {fmt_pct(per_bin[b] / total)} of "
            f"{plural(int(total), op)}"
        )
        if len(who[who > 0]) > 1:
            s += f"; {_name(app)} makes {fmt_pct(who[app] / per_bin[b])} of them"
        parts.append(s + ".")
    tops = []
    for app, g in d[d["_n"] > 0].groupby("_app", sort=True):
        bins = [f"{op}s {x.loc[x['_n'].idxmax(), 'bin']}" for op, x in g.groupby("op", sort=True)]
        tops.append(f"{_name(app)} " + ", ".join(bins))
    if len(tops) > 1:
        more = f"; and {len(tops) - 8} more" if len(tops) > 8 else ""
        parts.append("Most common sizes per application: " + "; ".join(tops[:8]) + more + ".")
    return " ".join(parts)


def _span_pct(pct: pd.Series) -> str:
    lo, hi = fmt_pct(pct.min() / 100), fmt_pct(pct.max() / 100)
    return lo if lo == hi else f"{lo} to {hi}"


def _group_label(row: pd.Series, by: tuple[str, ...] = ()) -> str:
    bits = []
    if "app" in row.index:
        bits.append(_name(UNKNOWN if pd.isna(row["app"]) else row["app"]))
    if "procs" in row.index and _finite(row["procs"]):
        bits.append(plural(int(row["procs"]), "proc"))
    if "files" in row.index and _finite(row["files"]):
        bits.append(plural(int(row["files"]), "file"))
    if not bits:
        bits.append(f"group {int(row['group_id'])}")
    return ", ".join(bits)


def variance(repeated, metrics=None) -> str:
    """How much repeated runs of one job vary in I/O time (Carns et al. 2011, Table IV).

    Parameters
    ----------
    repeated : iochar.analyze.variance.RepeatedJobs
        :func:`iochar.analyze.variance.repeated_jobs`'s result.
    metrics : iochar.analyze.jobs.JobMetrics or pandas.DataFrame, optional
        The per-job metrics the groups were formed from; with them the paragraph
        also compares groups that do their I/O from rank 0 with the others.

    Returns
    -------
    str
        Markdown.
    """
    g = repeated.groups
    ident = listing(repeated.by) if repeated.by else "no identity column"
    if len(g) == 0:
        return (
            f"No group of repeated jobs was found: no jobs agree in {ident} with bytes read "
            f"and written within {fmt_pct(repeated.tolerance)} (and enough runs)."
        )
    n = _num(g["samples"])
    parts = [
        f"**{plural(len(g), 'group')}** of repeated jobs ({ident} equal, bytes read and "
        f"written within {fmt_pct(repeated.tolerance)}), {int(n.min())} to {int(n.max())} "
        f"runs each, {plural(int(n.sum()), 'job')} in all."
    ]
    if "mode" in g and (g["mode"].astype(str) == "cluster").any():
        k = int((g["mode"].astype(str) == "cluster").sum())
        parts.append(
            f"{plural(k, 'group')} of jobs without a known identity were formed by I/O "
            "signature instead."
        )
    cv = _num(g["cv_pct"])
    if cv.notna().any():
        hi, lo = g.loc[cv.idxmax()], g.loc[cv.idxmin()]
        by = tuple(repeated.by)
        parts.append(
            f"The coefficient of variation of the slowest rank's I/O time ranges from "
            f"{fmt_pct(cv[cv.idxmin()] / 100)} ({_group_label(lo, by)}) to "
            f"**{fmt_pct(cv[cv.idxmax()] / 100)}** ({_group_label(hi, by)}: "
            f"{fmt_s(hi['mean_s'])} on average, {fmt_s(hi['min_s'])} to {fmt_s(hi['max_s'])})."
        )
    mn, mx = _num(g["min_s"]), _num(g["max_s"])
    ok = mn.notna() & mx.notna()
    if ok.any():
        k = int((mx[ok] >= 2 * mn[ok]).sum())
        parts.append(
            f"In {k} of {plural(int(ok.sum()), 'group')} the slowest run took at least twice "
            "as long as the fastest."
        )
    if metrics is not None and cv.notna().any():
        df = _jobs_frame(metrics)
        r0 = df.set_index("job_id")["rank0_io"].fillna(False).astype(bool)
        mem = repeated.members.dropna(subset=["group_id"])
        mem = mem.assign(r0=r0.reindex(mem["job_id"]).fillna(False).to_numpy())
        all_r0 = mem.groupby("group_id")["r0"].all()
        flag = g["group_id"].map(all_r0).fillna(False).astype(bool).to_numpy()
        if flag.any() and (~flag).any():
            a, b = cv[flag].dropna(), cv[~flag].dropna()
            if len(a) and len(b):
                more = "more" if a.median() > b.median() else "less"
                one = len(a) == 1
                parts.append(
                    f"The {'group' if one else plural(len(a), 'group')} whose rank 0 does all "
                    f"the I/O {'varies' if one else 'vary'} {more} (CV {_span_pct(a)}) than "
                    f"the {plural(len(b), 'other')} ({_span_pct(b)})"
                    + (
                        ", as Carns et al. found for NuclearPhysics A and B."
                        if more == "more"
                        else "."
                    )
                )
    return " ".join(parts)


def _not_in_table_iv(job_id: int, runs: int, repeated) -> list[str]:
    """A sentence when the job's runs are too few for a Table IV group (else nothing)."""
    if repeated is None:
        return []
    mem = repeated.members
    row = mem[mem["job_id"] == job_id]
    if len(row) and pd.notna(row["group_id"].iloc[0]):
        return []
    need = repeated.params.get("min_samples")
    why = f"fewer than the {need} runs" if need else "too few runs"
    return [
        f"These {runs} runs are {why} a group needs in Table IV above, so they are not "
        "among its groups."
    ]


def history(similar, metrics=None, *, metric: str = "slowest_io_s", repeated=None) -> str:
    """Where one job sits among the other runs of its group (e.g. slowest of 12).

    Parameters
    ----------
    similar : iochar.analyze.variance.SimilarJobs
        :func:`iochar.analyze.variance.similar_jobs`'s result.
    metrics : iochar.analyze.jobs.JobMetrics or pandas.DataFrame, optional
        Per-job metrics, to name the job's application and size.
    metric : str, default "slowest_io_s"
        The compared metric to describe (a time [s] or a rate).
    repeated : iochar.analyze.variance.RepeatedJobs, optional
        The Table IV groups shown on the same page: when the job's runs are too few
        to make one of them, the sentence says so rather than contradict the table.

    Returns
    -------
    str
        Markdown.
    """
    jid = similar.job_id
    who = f"Job {jid}"
    if metrics is not None:
        df = _jobs_frame(metrics)
        row = df[df["job_id"] == jid]
        if len(row):
            r = row.iloc[0]
            app = "no application name" if pd.isna(r.get("app")) else code(r["app"])
            procs = r.get("nprocs")
            who += f" ({app}" + (
                f", {plural(int(procs), 'process', 'processes')})" if _finite(procs) else ")"
            )
    place = similar.placement
    row = place[place["metric"] == metric] if len(place) else place
    h = similar.history
    if len(row) == 0 or metric not in h:
        return f"{who} has no {code(metric)} to compare with other runs."
    p = row.iloc[0]
    v = p["value"]
    if not _finite(v):
        return f"{who} has no {code(metric)} recorded, so it cannot be placed among other runs."
    others = _num(h.loc[~h["is_job"], metric]).dropna()
    if similar.group_id is None or len(others) == 0:
        return (
            f"{who} has no other run with the same identity and bytes within tolerance, so "
            "there is no history to compare it with."
        )
    fmt = fmt_s if metric.endswith("_s") else fmt_num
    n = len(others) + 1
    higher = int((others > v).sum())
    lower = int((others < v).sum())
    time_like = metric.endswith("_s")
    if higher == 0 and lower == n - 1:
        where = f"the {'slowest' if time_like else 'highest'} of its {n} runs"
    elif lower == 0 and higher == n - 1:
        where = f"the {'fastest' if time_like else 'lowest'} of its {n} runs"
    else:
        where = (
            f"the {_ordinal(higher + 1)} {'slowest' if time_like else 'highest'} of its {n} runs"
        )
    what = (
        "spent " + fmt(v) + " in I/O (slowest rank)"
        if metric == "slowest_io_s"
        else (f"has {metric} = {fmt(v)}")
    )
    med = float(others.median())
    s = (
        f"{who} {what}: {where}. The other {plural(len(others), 'run')} "
        f"{'took' if time_like else 'had'} {fmt(others.min())} to {fmt(others.max())}, "
        f"median {fmt(med)}"
    )
    if med > 0:
        s += f", so this run is {fmt_num(v / med)} times the median"
    extras = []
    if _finite(p["percentile"]):
        extras.append(f"percentile {p['percentile']:.0f}")
    if _finite(p["z"]):
        extras.append(f"z = {p['z']:+.2f}")
    s += f" ({', '.join(extras)})." if extras else "."
    parts = [s, *_not_in_table_iv(jid, n, repeated)]
    pos = h.index[h["is_job"]]
    if "start_ts" in h and len(pos) and h["start_ts"].notna().all():
        parts.append(f"It is run {int(pos[0]) + 1} of {n} in start order.")
    rate = place[place["metric"] == "mib_s"]
    if metric != "mib_s" and len(rate) and _finite(rate.iloc[0]["value"]):
        rr = rate.iloc[0]
        if _finite(rr["median"]):
            parts.append(
                f"Its rate, {fmt_rate(rr['value'] * MiB)}, compares with a median "
                f"{fmt_rate(rr['median'] * MiB)} over the other runs."
            )
    return " ".join(parts)
