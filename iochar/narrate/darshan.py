"""Sentences about Darshan logs: modules Darshan flagged incomplete, modules kept raw.

Every number comes from :func:`iochar.analyze.darshan_modules.modules`. An incomplete
module is one whose bit of the log header's ``partial_flag`` Darshan set because the
module ran out of memory for new records (darshan-util/darshan-parser.c: "This happens
when a module runs out of memory to store new record data"); its counters cover only
the records kept before that, so totals drawn from them are lower bounds.

Examples
--------
>>> import pandas as pd
>>> from iochar.analyze.darshan_modules import MODULE_COLUMNS
>>> from iochar.narrate import darshan
>>> darshan.incomplete(pd.DataFrame(columns=list(MODULE_COLUMNS)))
'No Darshan log here has a module Darshan flagged incomplete.'
"""

from __future__ import annotations

import pandas as pd

from iochar.narrate import code, esc, listing, plural

__all__ = ["incomplete", "raw_modules"]


def incomplete(table: pd.DataFrame) -> str:
    """Which Darshan logs have modules Darshan flagged incomplete, and what that means.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`iochar.analyze.darshan_modules.modules` (one row per log and module).

    Returns
    -------
    str
        Markdown: the logs and their flagged modules with the records kept, and that
        their counters are lower bounds; or that no log has one.
    """
    flagged = table[table["incomplete"].fillna(False).astype(bool)]
    if flagged.empty:
        return "No Darshan log here has a module Darshan flagged incomplete."
    logs = table["source_id"].nunique()
    parts = []
    for (_, source, job), rows in flagged.groupby(["source_id", "source", "job_id"], sort=True):
        mods = [
            f"{esc(r.module)} ({'no' if pd.isna(r.records) else f'{int(r.records):,}'} "
            f"{'record' if r.records == 1 else 'records'} kept)"
            for r in rows.itertuples()
        ]
        parts.append(f"{code(source)} (job {int(job)}): {listing(mods)}")
    n = flagged["source_id"].nunique()
    return (
        f"{n:,} of {plural(logs, 'Darshan log')} {'has' if n == 1 else 'have'} modules that "
        f"Darshan flagged incomplete: {listing(parts)}. Such a module ran out of memory "
        "for new records (for example STDIO's or POSIX's file-record limit, or DXT's "
        "trace buffer), so its counters cover only the files it recorded before the "
        "limit: totals from it are lower bounds."
    )


def raw_modules(table: pd.DataFrame) -> str:
    """The Darshan modules loaded but kept raw in ``module_counters``.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`iochar.analyze.darshan_modules.modules`.

    Returns
    -------
    str
        Markdown: the modules iochar keeps only as raw counters (not analyzed), with
        how many logs hold each; or an empty string when there are none.
    """
    raw = table[table["kept_in"] == "module_counters"]
    if raw.empty:
        return ""
    counts = raw.groupby("module")["source_id"].nunique().sort_index()
    mods = [f"{esc(m)} ({plural(int(k), 'log')})" for m, k in counts.items()]
    return f"Kept as raw counters in `module_counters`, not analyzed: {listing(mods, limit=10)}."
