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

from iochar.narrate import code, esc, fmt_bytes, fmt_pct, fmt_rate, fmt_s, listing, plural

__all__ = ["loaded", "jobs", "devices", "KIND_NOUNS"]

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
