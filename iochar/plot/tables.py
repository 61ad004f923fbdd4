"""Analysis tables in a paper's layout and units, as the notebooks show them.

:mod:`iochar.analyze` returns tables in bytes and seconds with column names made for
code (``io_bytes``, ``runtime_s``); these functions give what a reader compares with
the paper: Miller & Katz (1991) Tables 1 and 2 (:func:`table1_view`,
:func:`table2_view`), Table 1 averaged per application after Carns et al. (2011)
Table VI (:func:`app_means_view`), and the required / checkpoint / staging classes of
one job's files (:func:`class_view`). Sizes are in binary units (MiB, KiB), named in
each column's header, and rounded for display; compute on the analysis tables, not
on these.

Examples
--------
>>> import pandas as pd
>>> from iochar.plot import tables
>>> t2 = pd.DataFrame({"job_id": [7], "app": ["ccm"], "read_bps": [2.0**21],
...                    "write_bps": [2.0**20], "reads_per_s": [3.0], "writes_per_s": [1.0],
...                    "avg_read_bytes": [2.0**19], "avg_write_bytes": [2.0**20],
...                    "rw_data_ratio": [2.0], "basis": ["ops"]})
>>> tables.table2_view(t2)[["job_id", "read MiB/s", "avg write [KiB]", "read/write ratio"]]
   job_id  read MiB/s  avg write [KiB]  read/write ratio
0       7         2.0           1024.0               2.0
"""

from __future__ import annotations

import pandas as pd

__all__ = ["table1_view", "table2_view", "app_means_view", "class_view", "insights_view"]

_MIB, _KIB = 2.0**20, 2.0**10  # table units


def _top(df: pd.DataFrame, by: pd.Series, top: int | None) -> pd.DataFrame:
    """``df`` ordered by ``by``, largest first (missing last), its first ``top`` rows."""
    order = by.fillna(-1).sort_values(ascending=False, kind="stable").index
    df = df.loc[order]
    return (df if top is None else df.head(top)).reset_index(drop=True)


def table1_view(table: pd.DataFrame, top: int | None = None) -> pd.DataFrame:
    """Miller & Katz (1991) Table 1 in the paper's units, most I/O first.

    Parameters
    ----------
    table : pandas.DataFrame
        The result of :func:`iochar.analyze.characterize.app_table`.
    top : int, optional
        Keep this many jobs (None: all).

    Returns
    -------
    pandas.DataFrame
        ``job_id``, ``app``, ``run time [s]``, ``files``, ``data size [MiB]``, ``I/O
        done [MiB]``, ``I/Os``, ``avg I/O [KiB]``, ``MiB/s``, ``I/Os/s`` and ``basis``
        (rates per wall-clock second), rounded.
    """
    out = pd.DataFrame(
        {
            "job_id": table["job_id"],
            "app": table["app"],
            "run time [s]": table["runtime_s"].round(1),
            "files": table["files"],
            "data size [MiB]": (table["data_size_bytes"] / _MIB).round(1),
            "I/O done [MiB]": (table["io_bytes"] / _MIB).round(1),
            "I/Os": table["ios"],
            "avg I/O [KiB]": (table["avg_io_bytes"] / _KIB).round(1),
            "MiB/s": (table["bps"] / _MIB).round(3),
            "I/Os/s": table["ios_per_s"].round(2),
            "basis": table["basis"],
        }
    )
    return _top(out, table["io_bytes"], top)


def table2_view(table: pd.DataFrame, top: int | None = None) -> pd.DataFrame:
    """Miller & Katz (1991) Table 2 in the paper's units, most data per second first.

    Parameters
    ----------
    table : pandas.DataFrame
        The result of :func:`iochar.analyze.characterize.rates_table`.
    top : int, optional
        Keep this many jobs (None: all).

    Returns
    -------
    pandas.DataFrame
        ``job_id``, ``app``, ``read MiB/s``, ``write MiB/s``, ``reads/s``, ``writes/s``,
        ``avg read [KiB]``, ``avg write [KiB]``, ``read/write ratio`` and ``basis``,
        rounded.
    """
    out = pd.DataFrame(
        {
            "job_id": table["job_id"],
            "app": table["app"],
            "read MiB/s": (table["read_bps"] / _MIB).round(3),
            "write MiB/s": (table["write_bps"] / _MIB).round(3),
            "reads/s": table["reads_per_s"].round(2),
            "writes/s": table["writes_per_s"].round(2),
            "avg read [KiB]": (table["avg_read_bytes"] / _KIB).round(1),
            "avg write [KiB]": (table["avg_write_bytes"] / _KIB).round(1),
            "read/write ratio": table["rw_data_ratio"].round(2),
            "basis": table["basis"],
        }
    )
    return _top(out, table["read_bps"].fillna(0) + table["write_bps"].fillna(0), top)


def app_means_view(means: pd.DataFrame) -> pd.DataFrame:
    """Table 1 averaged per application (Carns et al. 2011, Table VI form), in MiB and KiB.

    Parameters
    ----------
    means : pandas.DataFrame
        The result of :func:`iochar.analyze.characterize.app_means`.

    Returns
    -------
    pandas.DataFrame
        One row per ``app`` ("?" for the jobs without a name), in the order of
        ``means`` (most I/O first): ``jobs``, ``mean run time [s]``, ``mean files``,
        ``mean I/O done [MiB]``, ``mean avg I/O [KiB]``, ``mean MiB/s`` and ``total
        I/O done [MiB]``, rounded.
    """
    out = pd.DataFrame(
        {
            "app": means["app"].fillna("?"),
            "jobs": means["jobs"],
            "mean run time [s]": means["runtime_s"].round(1),
            "mean files": means["files"].round(1),
            "mean I/O done [MiB]": (means["io_bytes"] / _MIB).round(1),
            "mean avg I/O [KiB]": (means["avg_io_bytes"] / _KIB).round(1),
            "mean MiB/s": (means["bps"] / _MIB).round(3),
            "total I/O done [MiB]": (means["total_io_bytes"] / _MIB).round(1),
        }
    )
    return out.reset_index(drop=True)


def class_view(labels: pd.DataFrame, job_id: int | None = None) -> pd.DataFrame:
    """The classes of one job's files with their evidence (Miller & Katz 1991, section 5.1).

    Parameters
    ----------
    labels : pandas.DataFrame
        The result of :func:`iochar.analyze.classify.classify`.
    job_id : int, optional
        Only this job (None: all).

    Returns
    -------
    pandas.DataFrame
        ``job_id``, ``path``, ``class``, ``confidence``, ``reason``, ``MiB read``, ``MiB
        written``, ``reread``, ``rewrite``, ``head_share``, ``tail_share``,
        ``write_bursts`` and ``series``, rounded.
    """
    f = labels if job_id is None else labels[labels["job_id"] == job_id]
    out = pd.DataFrame(
        {
            "job_id": f["job_id"],
            "path": f["path"],
            "class": f["class"],
            "confidence": f["confidence"],
            "reason": f["reason"],
            "MiB read": (f["bytes_read"] / _MIB).round(2),
            "MiB written": (f["bytes_written"] / _MIB).round(2),
            "reread": f["reread"].astype(float).round(2),
            "rewrite": f["rewrite"].astype(float).round(2),
            "head_share": f["head_share"].astype(float).round(2),
            "tail_share": f["tail_share"].astype(float).round(2),
            "write_bursts": f["write_bursts"],
            "series": f["series"],
        }
    )
    return out.reset_index(drop=True)


def insights_view(found, job_id: int | None = None) -> pd.DataFrame:
    """The findings of :func:`iochar.analyze.insights.run` as a table to read.

    Parameters
    ----------
    found : iochar.result.Table
        The result of :func:`iochar.analyze.insights.run`.
    job_id : int, optional
        Only this job (None: all).

    Returns
    -------
    pandas.DataFrame
        ``job_id``, ``severity``, ``code``, ``topic``, ``title``, ``evidence`` (the
        numbers the rule's query returned, as ``name = value`` text) and
        ``recommendation`` (with its reference), most severe first. The SQL of each
        finding stays in ``found["sql"]``.
    """
    from iochar.narrate.insights import evidence_text

    f = found if job_id is None else found[found["job_id"] == job_id]
    out = pd.DataFrame(
        {
            "job_id": f["job_id"],
            "severity": f["severity"],
            "code": f["code"],
            "topic": f["topic"],
            "title": f["title"],
            "evidence": [evidence_text(e, limit=8, markdown=False) for e in f["evidence"]],
            "recommendation": f["recommendation"],
        }
    )
    return out.reset_index(drop=True)
