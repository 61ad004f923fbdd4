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

Which snapshots to look at: :func:`choose` resolves a notebook's snapshot
parameters against the ``snapshots`` table into a :class:`Selection` (the
latest snapshot, and the growth pair of the same tree), and
:func:`growth_tables` runs :func:`growth` overall, per top-level directory
and per owner for that pair.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from iochar._validation import check_choice, parse_time
from iochar.errors import ParameterError, ReportError
from iochar.result import Table

__all__ = ["size_cdf", "age_cdf", "growth", "Selection", "choose", "growth_tables"]


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


# --------------------------------------------------------------------------- which snapshots

_SNAP_COLUMNS = ["snapshot_id", "root", "taken_at", "files", "bytes"]
_GROWTH_COLUMNS = [
    "group",
    "files_before",
    "files_after",
    "d_files",
    "bytes_before",
    "bytes_after",
    "d_bytes",
    "new_files",
    "new_bytes",
    "deleted_files",
    "share_files",
    "share_bytes",
    "largest_files",
    "largest_bytes",
]


def _same_tree(snaps: pd.DataFrame, root) -> pd.DataFrame:
    if root is None or pd.isna(root):
        return snaps[snaps["root"].isna()]
    return snaps[snaps["root"] == root]


@dataclass(frozen=True)
class Selection:
    """The snapshots a notebook describes, resolved from its parameters by :func:`choose`.

    Parameters
    ----------
    snapshot_id : int or None
        Snapshot whose sizes and ages are described (None: the database holds none).
    before_id : int or None
        Earlier snapshot of the growth pair (None: no pair).
    after_id : int or None
        Later snapshot of the growth pair (None: no pair).
    now : datetime.datetime or None
        Reference time for ages (None: the snapshot's own time).
    snapshots : pandas.DataFrame
        The ``snapshots`` table, oldest first, with columns ``snapshot_id``, ``root``,
        ``taken_at``, ``files`` (regular files listed) and ``bytes`` [bytes].
    latest : bool
        Whether ``snapshot_id`` was chosen as the latest snapshot.
    pair_chosen : bool
        Whether the growth pair was chosen (not both given).
    """

    snapshot_id: int | None
    before_id: int | None
    after_id: int | None
    now: dt.datetime | None
    snapshots: pd.DataFrame = field(repr=False)
    latest: bool = False
    pair_chosen: bool = False

    @property
    def has_pair(self) -> bool:
        """Whether there are two snapshots to compare."""
        return self.before_id is not None and self.after_id is not None

    def row(self, snapshot_id: int | None) -> dict | None:
        """The ``snapshots`` row of one snapshot as a dict (None when absent).

        Parameters
        ----------
        snapshot_id : int or None
            The snapshot.
        """
        if snapshot_id is None:
            return None
        hit = self.snapshots[self.snapshots["snapshot_id"] == snapshot_id]
        return None if hit.empty else hit.iloc[0].to_dict()

    def same_tree(self, root) -> pd.DataFrame:
        """The rows of ``snapshots`` of one tree, oldest first.

        Parameters
        ----------
        root : str or None
            The tree's ``root``; None (or a missing value) selects the snapshots
            without one.
        """
        return _same_tree(self.snapshots, root)


def _check_id(name: str, value) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ReportError(f"{name} {value!r} is not a snapshot id (an int) or None")


def choose(
    store,
    snapshot_id: int | None = None,
    before_id: int | None = None,
    after_id: int | None = None,
    *,
    now: str | dt.datetime | None = None,
) -> Selection:
    """Resolve the snapshot parameters of a notebook against the ``snapshots`` table.

    Snapshots are ordered by ``taken_at`` (snapshots without one first), then by id.
    "The same tree" means the same ``root``. The pair defaults to the two most recent
    snapshots of one tree, as Carns et al. (2011, Table V) compare two snapshots of
    the same file system.

    Parameters
    ----------
    store : iochar.store.Store
        The open database.
    snapshot_id : int, optional
        Snapshot to describe; None = the latest.
    before_id : int, optional
        Earlier snapshot for growth; None = the snapshot of the same tree just before
        ``after_id``.
    after_id : int, optional
        Later snapshot for growth; None = ``snapshot_id`` when ``before_id`` is None,
        else the latest snapshot of ``before_id``'s tree after it. With all three None
        the pair is the two most recent snapshots of the latest snapshot's tree.
    now : str or datetime, optional
        Reference time for ages: ISO 8601 (naive = UTC) or a datetime; None = the
        snapshot's own time.

    Returns
    -------
    Selection
        The resolved ids (``before_id``/``after_id`` None when the tree has only one
        snapshot) and the ``snapshots`` table with file and byte counts.

    Raises
    ------
    ReportError
        An id that is not an int or not in the database, or an unreadable ``now``.
    """
    for name, value in (
        ("snapshot_id", snapshot_id),
        ("before_id", before_id),
        ("after_id", after_id),
    ):
        _check_id(name, value)
    when = parse_time(now, "now", "choose")
    snaps = store.sql(
        "SELECT s.snapshot_id, s.root, s.taken_at, count(f.snapshot_id)::BIGINT AS files, "
        "coalesce(sum(f.size), 0)::BIGINT AS bytes "
        "FROM snapshots s LEFT JOIN snapshot_files f USING (snapshot_id) "
        "GROUP BY ALL ORDER BY s.taken_at NULLS FIRST, s.snapshot_id"
    ).df()
    snaps = snaps.reset_index(drop=True)[_SNAP_COLUMNS]
    ids = [int(i) for i in snaps["snapshot_id"]]
    for name, value in (
        ("snapshot_id", snapshot_id),
        ("before_id", before_id),
        ("after_id", after_id),
    ):
        if value is not None and value not in ids:
            raise ReportError(f"{name} {value!r} is not in this database; its snapshots: {ids}")
    if not ids:
        return Selection(None, None, None, when, snaps)
    latest = snapshot_id is None
    sid = ids[-1] if latest else snapshot_id
    pos = {i: k for k, i in enumerate(ids)}

    def tree(of: int) -> list[int]:
        return [int(i) for i in _same_tree(snaps, snaps.loc[pos[of], "root"])["snapshot_id"]]

    chosen = before_id is None or after_id is None
    b, a = before_id, after_id
    if b is None and a is None:
        a = sid
    if b is None:
        earlier = [i for i in tree(a) if pos[i] < pos[a]]
        b = earlier[-1] if earlier else None
    elif a is None:
        later = [i for i in tree(b) if pos[i] > pos[b]]
        a = later[-1] if later else None
    if b is None or a is None:
        b = a = None
    return Selection(sid, b, a, when, snaps, latest=latest, pair_chosen=chosen)


def growth_tables(store, sel: Selection) -> dict[str, pd.DataFrame]:
    """:func:`growth` between the selected pair: overall, per top-level directory, per owner.

    Parameters
    ----------
    store : iochar.store.Store
        The open database.
    sel : Selection
        From :func:`choose`.

    Returns
    -------
    dict of str to pandas.DataFrame
        Keys ``"total"``, ``"top_dir"`` and ``"owner"``, each the result of
        :func:`growth` with that ``by``; empty frames with the same columns when
        there is no pair.
    """
    out = {}
    for by in ("total", "top_dir", "owner"):
        if sel.has_pair:
            out[by] = growth(store, sel.before_id, sel.after_id, by=by)
        else:
            out[by] = pd.DataFrame({c: [] for c in _GROWTH_COLUMNS})
    return out
