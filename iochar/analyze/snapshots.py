"""File-system snapshots: size and age distributions, growth between two snapshots.

The analyses of Carns et al. (2011), Sec. 4 ("file system snapshots"), over
the ``snapshots`` / ``snapshot_files`` tables:

- :func:`size_cdf` -- the file-size CDF by file count and by bytes (their Fig. 8);
- :func:`age_cdf` -- the CDF of time since last access or modification, by
  count and by bytes (their Fig. 9 a and b);
- :func:`growth` -- change in files and used bytes between two snapshots,
  overall, per top-level directory or per owner, naming the largest
  contributor (their Table V, and the finding that one project,
  EarthScience, made 88% of the new files but only 15% of the new bytes).

Every function takes a :class:`~iochar.store.Store` and snapshot ids and
returns a tidy :class:`pandas.DataFrame`; the set-wise work is SQL in DuckDB
with bound parameters.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

import pandas as pd

from iochar._validation import check_choice
from iochar.errors import ParameterError
from iochar.result import Table

__all__ = ["size_cdf", "age_cdf", "growth"]


def _check_snapshot(store, snapshot_id: int, caller: str, name: str = "snapshot_id") -> dict:
    if isinstance(snapshot_id, bool) or not isinstance(snapshot_id, int):
        raise ParameterError(name, caller, "an int snapshot_id", snapshot_id)
    row = store.sql(
        "SELECT snapshot_id, taken_at, root FROM snapshots WHERE snapshot_id = $sid",
        {"sid": snapshot_id},
    ).fetchall()
    if not row:
        raise ParameterError(
            name, caller, "a snapshot_id present in the snapshots table", snapshot_id
        )
    return {"snapshot_id": row[0][0], "taken_at": row[0][1], "root": row[0][2]}


_CDF_SQL = """
SELECT {key}, files, bytes,
       sum(files) OVER w / sum(files) OVER () AS cdf_files,
       sum(bytes) OVER w / nullif(sum(bytes) OVER (), 0) AS cdf_bytes
FROM (
    SELECT {expr} AS {key}, count(*)::BIGINT AS files,
           coalesce(sum(size), 0)::DOUBLE AS bytes
    FROM snapshot_files WHERE snapshot_id = $sid {where}
    GROUP BY ALL
)
WINDOW w AS (ORDER BY {key} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
ORDER BY {key}
"""

_SIZE_EXPR = {
    "exact": "size",
    # power-of-two bins, like the paper's "64KiB to 128KiB" ranges; size 0 is its own bin
    "log2": "CASE WHEN size <= 0 THEN 0 ELSE (1::BIGINT << floor(log2(size))::INTEGER) END",
}


def size_cdf(store, snapshot_id: int, *, bins: Literal["exact", "log2"] = "exact") -> pd.DataFrame:
    """File-size CDF by number of files and by bytes (Carns et al. 2011, Fig. 8).

    Parameters
    ----------
    store : iochar.store.Store
        Store holding the snapshot.
    snapshot_id : int
        Snapshot to describe.
    bins : {"exact", "log2"}, default "exact"
        One row per distinct size, or per power-of-two size range
        ``[2**k, 2**(k+1))`` (size 0 alone).

    Returns
    -------
    pandas.DataFrame
        One row per size (or bin), ascending, with columns ``size_bytes``
        (the size, or the bin's lower bound) [bytes], ``files`` (files of
        that size), ``bytes`` (their total size) [bytes], ``cdf_files``
        (fraction of files with size <= this) and ``cdf_bytes`` (fraction of
        all bytes held in such files; NaN when the snapshot holds no bytes).

    Raises
    ------
    ParameterError
        Unknown snapshot id or ``bins``.

    Notes
    -----
    Carns et al. found 86% of files under 1 MiB on Intrepid while most bytes
    sat in large files: the two curves of Fig. 8 are ``cdf_files`` and
    ``cdf_bytes``.
    """
    check_choice(bins, "bins", "size_cdf", tuple(_SIZE_EXPR), "one of 'exact', 'log2'")
    _check_snapshot(store, snapshot_id, "size_cdf")
    sql = _CDF_SQL.format(key="size_bytes", expr=_SIZE_EXPR[bins], where="")
    params = {"sid": snapshot_id, "bins": bins}
    return Table(store.sql(sql, {"sid": snapshot_id}).df(), params=params, sql=sql)


def age_cdf(
    store,
    snapshot_id: int,
    *,
    kind: Literal["mtime", "atime"] = "mtime",
    now: dt.datetime | None = None,
) -> Table:
    """CDF of file age since last modification or access, by count and by bytes.

    Carns et al. 2011, Fig. 9: (a) last access time, (b) last modification
    time, each as the fraction of files and the fraction of bytes.

    Parameters
    ----------
    store : iochar.store.Store
        Store holding the snapshot.
    snapshot_id : int
        Snapshot to describe.
    kind : {"mtime", "atime"}, default "mtime"
        Which time stamp the age is measured from.
    now : datetime, optional
        Reference time (naive UTC, or aware). Default: the snapshot's
        ``taken_at``, else its latest ``atime``/``mtime``/``ctime``.

    Returns
    -------
    iochar.result.Table
        One row per whole second of age, ascending, with columns ``age_s``
        (``now`` minus the time stamp, floored) [s], ``age_days`` [days],
        ``files``, ``bytes`` [bytes], ``cdf_files`` and ``cdf_bytes``
        (fractions of files / bytes at most that old). Files with a NULL
        time stamp are left out. ``evidence["now"]`` holds the
        reference time used; ``sql`` the query.

    Raises
    ------
    ParameterError
        Unknown snapshot id or ``kind``.
    """
    check_choice(kind, "kind", "age_cdf", ("mtime", "atime"), "one of 'mtime', 'atime'")
    snap = _check_snapshot(store, snapshot_id, "age_cdf")
    if now is None:
        now = snap["taken_at"]
    if now is None:
        now = store.sql(
            "SELECT max(greatest(atime, mtime, ctime)) FROM snapshot_files "
            "WHERE snapshot_id = $sid",
            {"sid": snapshot_id},
        ).fetchall()[0][0]
    if now is not None and not isinstance(now, dt.datetime):
        raise ParameterError("now", "age_cdf", "a datetime or None", now)
    if now is not None and now.tzinfo is not None:
        now = now.astimezone(dt.UTC).replace(tzinfo=None)
    col = {"mtime": "mtime", "atime": "atime"}[kind]  # identifiers from a fixed map
    expr = f"floor((epoch_us($now::TIMESTAMP) - epoch_us({col})) / 1e6)::BIGINT"
    sql = _CDF_SQL.format(key="age_s", expr=expr, where=f"AND {col} IS NOT NULL")
    df = store.sql(sql, {"sid": snapshot_id, "now": now}).df()
    df.insert(1, "age_days", df["age_s"] / 86400.0)
    params = {"snapshot_id": snapshot_id, "kind": kind, "now": now}
    return Table(df, evidence={"now": now}, params=params, sql=sql)


_GROUP_EXPR = {
    "total": "'total'",
    "owner": "coalesce(CAST(f.uid AS VARCHAR), 'unknown')",
}
# first path component below the snapshot's root; files directly in the root are '.'
_REL = """CASE WHEN s.root IS NOT NULL AND starts_with(f.path, rtrim(s.root, '/') || '/')
          THEN substr(f.path, length(rtrim(s.root, '/')) + 2)
          ELSE ltrim(f.path, '/') END"""
_TOP = f"CASE WHEN strpos({_REL}, '/') = 0 THEN '.' ELSE split_part({_REL}, '/', 1) END"

_GROWTH_SQL = """
WITH f AS (
    SELECT f.snapshot_id, f.path, f.size, {group} AS grp
    FROM snapshot_files f JOIN snapshots s USING (snapshot_id)
    WHERE f.snapshot_id IN ($before, $after)
),
b AS (SELECT * FROM f WHERE snapshot_id = $before),
a AS (SELECT * FROM f WHERE snapshot_id = $after),
per AS (
    SELECT grp,
           count(*) FILTER (WHERE snapshot_id = $before) AS files_before,
           count(*) FILTER (WHERE snapshot_id = $after) AS files_after,
           coalesce(sum(size) FILTER (WHERE snapshot_id = $before), 0)::BIGINT AS bytes_before,
           coalesce(sum(size) FILTER (WHERE snapshot_id = $after), 0)::BIGINT AS bytes_after
    FROM f GROUP BY grp
),
new AS (
    SELECT a.grp, count(*) AS new_files, coalesce(sum(a.size), 0)::BIGINT AS new_bytes
    FROM a ANTI JOIN b USING (path) GROUP BY a.grp
),
gone AS (
    SELECT b.grp, count(*) AS deleted_files FROM b ANTI JOIN a USING (path) GROUP BY b.grp
)
SELECT per.grp AS "group", files_before, files_after, files_after - files_before AS d_files,
       bytes_before, bytes_after, bytes_after - bytes_before AS d_bytes,
       coalesce(new_files, 0) AS new_files, coalesce(new_bytes, 0) AS new_bytes,
       coalesce(deleted_files, 0) AS deleted_files
FROM per LEFT JOIN new USING (grp) LEFT JOIN gone USING (grp)
ORDER BY d_files DESC, d_bytes DESC, "group"
"""


def growth(
    store,
    before_id: int,
    after_id: int,
    *,
    by: Literal["total", "top_dir", "owner"] = "total",
) -> Table:
    """Change in file count and used bytes between two snapshots (Carns et al. 2011, Table V).

    Parameters
    ----------
    store : iochar.store.Store
        Store holding both snapshots.
    before_id, after_id : int
        The earlier and the later snapshot.
    by : {"total", "top_dir", "owner"}, default "total"
        One row overall, per first directory below each snapshot's root
        (files directly in the root are ``"."``), or per owner uid.

    Returns
    -------
    iochar.result.Table
        One row per group, most added files first, with columns ``group``,
        ``files_before``, ``files_after``, ``d_files``, ``bytes_before``,
        ``bytes_after``, ``d_bytes`` [bytes], ``new_files`` / ``new_bytes``
        (paths present only after) and ``deleted_files`` (paths present only
        before), ``share_files`` and ``share_bytes`` (the group's part of the
        net change over all groups; NaN when the net change is 0), and
        ``largest_files`` / ``largest_bytes`` flagging the group that
        contributed most added files / bytes (none when no group gained any).
        ``evidence`` holds ``largest_by_files`` and ``largest_by_bytes``
        (the group names, or None).

    Raises
    ------
    ParameterError
        Unknown snapshot ids or ``by``.

    Notes
    -----
    Carns et al. found the file count on Intrepid doubled in two months and
    one project, EarthScience, made 88% of the additional files but only 15%
    of the additional bytes: ``by="top_dir"`` (projects as top directories)
    or ``by="owner"`` finds such a contributor.
    """
    check_choice(
        by, "by", "growth", ("total", "top_dir", "owner"), "one of 'total', 'top_dir', 'owner'"
    )
    _check_snapshot(store, before_id, "growth", "before_id")
    _check_snapshot(store, after_id, "growth", "after_id")
    group = _TOP if by == "top_dir" else _GROUP_EXPR[by]
    df = store.sql(_GROWTH_SQL.format(group=group), {"before": before_id, "after": after_id}).df()
    for c in ("files", "bytes"):
        total = df[f"d_{c}"].sum()
        df[f"share_{c}"] = df[f"d_{c}"] / total if total != 0 else float("nan")
    df["largest_files"] = False
    df["largest_bytes"] = False
    ev = {"largest_by_files": None, "largest_by_bytes": None}
    # a group "contributed most" only if it gained something: no flag when nothing grew
    for c in ("files", "bytes"):
        if len(df) and df[f"d_{c}"].max() > 0:
            i = df[f"d_{c}"].idxmax()
            df.loc[i, f"largest_{c}"] = True
            ev[f"largest_by_{c}"] = df.loc[i, "group"]
    params = {"before_id": before_id, "after_id": after_id, "by": by}
    return Table(df, evidence=ev, params=params, sql=_GROWTH_SQL.format(group=group))
