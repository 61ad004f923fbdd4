"""Sentences for the overview notebook (00): what is loaded, which jobs, which devices.

Every number comes from the tables passed in (:func:`iochar.analyze.inventory.inventory`,
:func:`iochar.analyze.inventory.coverage`, :func:`iochar.analyze.characterize.app_table`).

Examples
--------
>>> import pandas as pd
>>> from iochar.narrate import overview
>>> overview.jobs(pd.DataFrame(columns=["job_id", "app", "io_bytes", "bps", "basis"]))
'No jobs are loaded: there are no application traces or Darshan logs in this database.'
"""

from __future__ import annotations

import pandas as pd

from iochar.narrate import (
    code,
    esc,
    fmt_bytes,
    fmt_num,
    fmt_pct,
    fmt_rate,
    fmt_s,
    listing,
    plural,
)

__all__ = [
    "loaded",
    "jobs",
    "devices",
    "interfaces",
    "files_per_process",
    "access_size_cdf",
    "io_cost",
    "mounts",
    "KIND_NOUNS",
]

#: How an input kind is named in a sentence (singular, plural).
KIND_NOUNS: dict[str, tuple[str, str]] = {
    "darshan": ("Darshan log", "Darshan logs"),
    "strace": ("strace capture", "strace captures"),
    "trace-csv": ("trace CSV file", "trace CSV files"),
    "trace-parquet": ("trace Parquet file", "trace Parquet files"),
    "iostat": ("iostat report", "iostat reports"),
    "diskstats": ("/proc/diskstats series", "/proc/diskstats series"),
    "lmt": ("LMT export", "LMT exports"),
    "brw_stats": ("brw_stats series", "brw_stats series"),
    "snapshot": ("file-system snapshot", "file-system snapshots"),
}


def _kind(kind: str, n: int) -> str:
    one, many = KIND_NOUNS.get(kind, (f"{esc(kind)} input", f"{esc(kind)} inputs"))
    return f"{n:,} {one if n == 1 else many}"


def _app(name, form: str = "{}") -> str:
    """An application name escaped into ``form``; a missing one as "no name" (or nothing,
    when ``form`` only wraps the name)."""
    if isinstance(name, str) and name:
        return form.format(esc(name))
    return "" if form != "{}" else "jobs without an application name"


def loaded(inv: pd.DataFrame) -> str:
    """What the database holds, by input kind.

    Parameters
    ----------
    inv : pandas.DataFrame
        :func:`iochar.analyze.inventory.inventory`.

    Returns
    -------
    str
        Markdown: inputs by kind, the rows they gave, and the dates they span.
    """
    if inv.empty or int(inv["sources"].sum()) == 0:
        return "The database is empty: nothing has been loaded yet (`iochar load FILE`)."
    inv = inv.sort_values("sources", ascending=False)
    kinds = [_kind(k, int(n)) for k, n in zip(inv["kind"], inv["sources"], strict=True)]
    total = int(inv["sources"].sum())
    parts = []
    for col, noun, nouns in (
        ("jobs", "job", None),
        ("ops", "traced operation", None),
        ("file_stats", "per-file counter record", None),
        ("counters", "device or server counter sample", None),
        ("size_hist", "I/O size histogram row", None),
        ("snapshot_files", "snapshot entry", "snapshot entries"),
    ):
        n = int(inv[col].sum())
        if n:
            parts.append(plural(n, noun, nouns))
    text = (
        f"This database holds {plural(total, 'input')} "
        f"({fmt_bytes(float(inv['input_bytes'].sum()))}) of {plural(len(inv), 'kind')}: "
        f"{listing(kinds, limit=len(kinds))}. "
        f"Together they give {listing(parts, limit=len(parts))}."
    )
    t0, t1 = inv["first_ts"].min(), inv["last_ts"].max()
    if pd.notna(t0) and pd.notna(t1):
        text += f" Dated records run from {t0:%Y-%m-%d} to {t1:%Y-%m-%d}"
        undated = inv.loc[inv["first_ts"].isna() & (inv["sources"] > 0), "kind"].tolist()
        if undated:
            text += f"; {listing(undated)} carry relative times only"
        text += "."
    return text


def jobs(table: pd.DataFrame, *, top: int = 3) -> str:
    """Who moved the data: the busiest jobs and applications.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`iochar.analyze.characterize.app_table` (one row per job).
    top : int, default 3
        Applications named.

    Returns
    -------
    str
        Markdown: jobs, bytes moved, the busiest job and its share, the top
        applications by bytes, and how many jobs have per-operation traces.
    """
    if table.empty:
        return (
            "No jobs are loaded: there are no application traces or Darshan logs in this database."
        )
    total = float(table["io_bytes"].fillna(0).sum())
    n = len(table)
    traced = int((table["basis"] == "ops").sum())
    text = f"{plural(n, 'job')} moved {fmt_bytes(total)} in all"
    text += (
        f"; {traced:,} of them have per-operation traces, the other {n - traced:,} "
        "per-file counters only."
        if 0 < traced < n
        else (
            "; all have per-operation traces." if traced == n else "; all from per-file counters."
        )
    )
    if total > 0:
        big = table.loc[table["io_bytes"].fillna(0).idxmax()]
        text += (
            f" The busiest is job {int(big['job_id'])}{_app(big['app'], ' ({})')}, "
            f"{fmt_bytes(float(big['io_bytes']))} "
            f"({fmt_pct(float(big['io_bytes']) / total)} of all)"
        )
        if pd.notna(big.get("bps")):
            text += f" at {fmt_rate(float(big['bps']))} over its run"
        text += "."
        by_app = table.groupby("app", dropna=False)["io_bytes"].agg(["sum", "size"])
        by_app = by_app.sort_values("sum", ascending=False).head(top)
        apps = [
            f"{_app(a)} ({plural(int(r['size']), 'job')}, {fmt_pct(r['sum'] / total)})"
            for a, r in by_app.iterrows()
        ]
        text += f" By application: {listing(apps)}."
    else:
        text += " None of them moved any bytes."
    return text


def devices(cov: pd.DataFrame) -> str:
    """What the device, server and histogram records cover.

    Parameters
    ----------
    cov : pandas.DataFrame
        :func:`iochar.analyze.inventory.coverage`.

    Returns
    -------
    str
        Markdown: targets per table, the longest record, sampling intervals and
        flagged samples; snapshots and their roots.
    """
    mon = cov[cov["table"].isin(["counters", "size_hist"])]
    snaps = cov[cov["table"] == "snapshots"]
    out = []
    if mon.empty:
        out.append("No device, server or brw_stats counters are loaded.")
    else:
        n_src = mon["source_id"].nunique()
        span = (mon["end"] - mon["start"]).dt.total_seconds()
        longest = mon.loc[span.idxmax()]
        ivals = list(dict.fromkeys(fmt_s(i) for i in sorted(mon["interval_s"].dropna())))
        flagged = int(mon["flagged"].sum())
        out.append(
            f"Counters cover {plural(mon['target'].nunique(), 'target')} from "
            f"{plural(n_src, 'input')}, sampled every "
            f"{listing(ivals)}. The longest record is "
            f"{esc(longest['target'])} in {code(longest['source'])}: "
            f"{plural(int(longest['samples']), 'sample')} "
            f"over {fmt_s(float(span.max()))}, from {longest['start']:%Y-%m-%d %H:%M:%S}."
        )
        if flagged:
            where = mon.loc[mon["flagged"] > 0]
            out.append(
                f"{plural(flagged, 'sample')} {'is' if flagged == 1 else 'are'} flagged as a "
                "counter reset, wrap or gap "
                f"(in {listing(esc(t) for t in sorted(set(where['target'])))}); analyses "
                "leave those intervals out and say so."
            )
        else:
            out.append("No sample is flagged as a counter reset, wrap or gap.")
    if not snaps.empty:
        roots = snaps.groupby("target")["samples"].agg(["size", "sum"])
        out.append(
            f"{plural(len(snaps), 'snapshot')} of {plural(len(roots), 'tree')} "
            f"({listing(code(r) for r in roots.index)}) list "
            f"{plural(int(roots['sum'].sum()), 'entry', 'entries')}."
        )
    return " ".join(out)


# --------------------------------------------------------------------------- issue 20 figures


def interfaces(table: pd.DataFrame, apis: pd.DataFrame | None = None, *, by: str = "app") -> str:
    """Which interfaces the jobs used, by job size (Carns et al. 2011, Fig. 3(a), Table II).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`iochar.analyze.jobs.interface_table`.
    apis : pandas.DataFrame, optional
        :func:`iochar.analyze.jobs.api_table`, for the projects that used the
        most interfaces.
    by : str, default "app"
        The project column of ``apis``.

    Returns
    -------
    str
        Markdown: jobs measured, the share using each interface, the share of
        the largest jobs using MPI-IO, and the projects using the most
        interfaces (Table II's letters).
    """
    from iochar.result import evidence_of

    ev = evidence_of(table)
    n = int(ev.get("jobs", 0) or 0)
    if table.empty or n == 0:
        return "No job has Darshan counters or traced calls, so no interface can be named."
    per = ev.get("by_interface", {})
    used = [f"{k} in {int(v):,} ({fmt_pct(v / n)})" for k, v in per.items() if v]
    text = f"Interfaces of the {plural(n, 'measured job')}: {listing(used, limit=6)}"
    text += " (a job counts under every interface its records show)."
    big = table[table["procs_lo"] == table["procs_lo"].max()]
    mp = big[big["interface"] == "MPI-IO"]
    label = big["procs_bin"].iloc[0]
    nb = int(big["bin_jobs"].iloc[0])
    share = float(mp["jobs"].iloc[0]) / nb if not mp.empty else 0.0
    text += (
        f" Among the largest jobs ({label} processes, {plural(nb, 'job')}), "
        f"{fmt_pct(share)} used MPI-IO"
        " (Carns et al. found MPI-IO most used at the highest process counts)."
    )
    if apis is not None and len(apis):
        many = apis.assign(_k=apis["apis"].str.count(",") + 1).sort_values(
            ["_k", "io_bytes"], ascending=False
        )
        top = many.iloc[0]
        text += (
            f" Most interfaces: {esc(top[by])} ({esc(top['apis'])}; H = HDF5, N = PnetCDF,"
            " M = MPI-IO, S = POSIX stream, P = POSIX, as in Table II)."
        )
    return text


def files_per_process(metrics) -> str:
    """Files against processes: the N:N, N:1 and N:M trends and jobs on no files (Fig. 5).

    Parameters
    ----------
    metrics : iochar.analyze.jobs.JobMetrics or pandas.DataFrame
        :func:`iochar.analyze.jobs.job_metrics` (or its ``jobs``).

    Returns
    -------
    str
        Markdown: jobs per file-sharing pattern, the most files per process
        and the jobs that accessed no file.
    """
    df = getattr(metrics, "jobs", metrics)
    d = df[df["basis"].isin(["counters", "ops"])] if "basis" in df else df
    if d.empty:
        return "No job was measured, so files cannot be set against processes."
    files = pd.to_numeric(d["files"], errors="coerce").fillna(0).astype(float)
    procs = pd.to_numeric(d["nprocs"], errors="coerce").astype(float)
    counts = d["sharing"].value_counts()
    order = [p for p in ("N:N", "N:M", "N:1", "1:1", "none") if p in counts.index]
    text = f"{plural(len(d), 'job')} by pattern: " + listing(
        [f"{p} {int(counts[p]):,}" for p in order], limit=5
    )
    fpp = (files / procs.where(procs > 0)).dropna()
    if len(fpp):
        i = fpp.idxmax()
        text += (
            f". The most files per process: job {int(d.loc[i, 'job_id'])}"
            f"{_app(d.loc[i, 'app'], ' ({})')}, {plural(int(files[i]), 'file')} over "
            f"{plural(int(procs[i]), 'process', 'processes')} ({fmt_num(fpp[i])} per process)"
        )
    zero = int((files == 0).sum())
    text += (
        f". {plural(zero, 'job')} accessed no file (Darshan does not count standard streams; "
        "Carns et al. saw many such debug runs)."
        if zero
        else ". Every job accessed at least one file."
    )
    return text


def access_size_cdf(cdf: pd.DataFrame) -> str:
    """The most common access sizes and the share of small accesses (Fig. 10).

    Parameters
    ----------
    cdf : pandas.DataFrame
        :func:`iochar.analyze.jobs.size_cdf`.

    Returns
    -------
    str
        Markdown: accesses per op, the most common bin, and the share at or
        below 1 KiB and 1 MiB.
    """
    if cdf.empty or cdf["count"].sum() == 0:
        return "No read or write was counted in any access-size bin."
    parts = []
    for op, sub in cdf.groupby("op", sort=True):
        n = int(sub["count"].sum())
        top = sub.loc[sub["count"].idxmax()]
        small = float(sub.loc[sub["bin"] == "100-1K", "cum_share"].sum())
        mib = float(sub.loc[sub["bin"] == "100K-1M", "cum_share"].sum())
        parts.append(
            f"{n:,} {op}s, most often {top['bin']} bytes ({fmt_pct(float(top['share']))}); "
            f"{fmt_pct(small)} at most 1 KiB and {fmt_pct(mib)} at most 1 MiB"
        )
    return (
        "Over all jobs: "
        + "; ".join(parts)
        + ". Carns et al. found 100 KiB-1 MiB the most common size for both once two"
        " projects of tiny writes were set aside."
    )


def io_cost(cost: pd.DataFrame) -> str:
    """Where the I/O time went per interface: reads, writes, metadata (PyDarshan's I/O Cost).

    Parameters
    ----------
    cost : pandas.DataFrame
        :func:`iochar.analyze.jobs.io_cost`.

    Returns
    -------
    str
        Markdown: per interface with time, the split into read, write and
        metadata, and the job spending the largest share of its run in I/O.
    """
    if cost.empty:
        return "No read, write or metadata time is recorded for any job."
    g = cost.groupby("interface")[["read_s", "write_s", "meta_s"]].sum()
    g = g[g.sum(axis=1) > 0]
    if g.empty:
        return "No read, write or metadata time is recorded for any job."
    g = g.loc[g.sum(axis=1).sort_values(ascending=False).index]
    parts = []
    for iface, r in g.iterrows():
        tot = float(r.sum())
        parts.append(
            f"{esc(iface)} {fmt_s(tot)} ({fmt_pct(r['read_s'] / tot)} read, "
            f"{fmt_pct(r['write_s'] / tot)} write, {fmt_pct(r['meta_s'] / tot)} metadata)"
        )
    text = "Time summed over processes and jobs: " + listing(parts, limit=6) + "."
    pr = pd.to_numeric(cost["pct_runtime"], errors="coerce")
    if pr.notna().any():
        i = pr.idxmax()
        text += (
            f" The largest share of a run: job {int(cost.loc[i, 'job_id'])}"
            f"{_app(cost.loc[i, 'app'], ' ({})')}, whose processes spent on average"
            f" {fmt_pct(pr[i] / 100)} of its run time in {esc(cost.loc[i, 'interface'])} calls"
        )
        text += (
            " (more than the run: calls overlapped, in threads or asynchronous I/O)."
            if pr[i] > 100
            else "."
        )
    return text


def mounts(table: pd.DataFrame) -> str:
    """Where the data went: bytes per mount point (PyDarshan's Data Access by Category).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`iochar.analyze.jobs.volume_by_mount`.

    Returns
    -------
    str
        Markdown: mount points with data, the top ones with their share and
        file-system type, and how many files were placed without a mount table.
    """
    if table.empty:
        return "No file read or written any bytes."
    tot = table["bytes_read"].astype(float) + table["bytes_written"].astype(float)
    total = float(tot.sum())
    if total <= 0:
        return "No file read or written any bytes."
    items = []
    for i in tot.sort_values(ascending=False).index[:3]:
        r = table.loc[i]
        fs = f", {esc(r['fs_type'])}" if pd.notna(r["fs_type"]) and r["fs_type"] else ""
        items.append(
            f"{code(r['mount'])} ({fmt_bytes(float(tot[i]))}, {fmt_pct(tot[i] / total)}{fs})"
        )
    text = f"{plural(len(table), 'mount point')} held the {fmt_bytes(total)} moved; most: "
    text += listing(items, limit=3) + "."
    guessed = table[~table["from_mount_table"].astype(bool)]
    if len(guessed):
        text += (
            f" {plural(len(guessed), 'group')} without a Darshan mount table (traces) are named"
            " by the path's first component, as PyDarshan does."
        )
    return text
