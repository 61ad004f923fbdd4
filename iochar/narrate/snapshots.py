"""Narrative for file-system snapshots: sizes, ages and growth (notebook 04).

Sentences about the results of :mod:`iochar.analyze.snapshots` (Carns et al. 2011,
Sec. 4: the file-size CDF of their Fig. 8, the age CDFs of Fig. 9 and the growth
between two snapshots of Table V). What to describe is resolved by
:func:`iochar.analyze.snapshots.choose` (a :class:`~iochar.analyze.snapshots.Selection`)
and the growth of that pair computed by
:func:`iochar.analyze.snapshots.growth_tables`; :func:`choose` and
:func:`growth_tables` here are their deprecated former names. The narrative
functions (:func:`summary`, :func:`sizes`, :func:`ages`, :func:`growth`) are pure:
every number they print comes from the tables passed in.

Examples
--------
>>> import pandas as pd
>>> from iochar.narrate import snapshots
>>> df = pd.DataFrame({"size_bytes": [100, 10_000], "files": [3, 1],
...                    "bytes": [300.0, 10_000.0]})
>>> df["cdf_files"] = df["files"].cumsum() / df["files"].sum()
>>> df["cdf_bytes"] = df["bytes"].cumsum() / df["bytes"].sum()
>>> print(snapshots.sizes(df, bins="exact"))  # doctest: +NORMALIZE_WHITESPACE
The median file is 100 B (75.0% of the files are that size or smaller), but files of
9.8 KiB or more, only 25.0% of the files, hold 97.1% of the bytes. The largest file
is 9.8 KiB. 100.0% of the files are under 1 MiB; they hold 100.0% of the bytes.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd

from iochar._moved import warn_moved
from iochar.analyze import snapshots as analysis
from iochar.analyze.snapshots import Selection
from iochar.narrate import code, esc, fmt_bytes, fmt_num, fmt_pct, fmt_s, listing, plural
from iochar.result import evidence_of

__all__ = ["Selection", "choose", "growth_tables", "summary", "sizes", "ages", "growth"]

_MIB = 2**20
#: Windows for "recently touched", widest first (Carns et al. speak of "a month").
_WINDOWS = (
    (30 * 86400, "the last 30 days", "30 days"),
    (86400, "the last day", "a day"),
    (3600, "the last hour", "an hour"),
    (60, "the last minute", "a minute"),
)


def choose(
    store,
    snapshot_id: int | None = None,
    before_id: int | None = None,
    after_id: int | None = None,
    *,
    now: str | dt.datetime | None = None,
) -> Selection:
    """Deprecated: :func:`iochar.analyze.snapshots.choose` (``store``, ``snapshot_id``,
    ``before_id``, ``after_id``, ``now``)."""
    warn_moved("iochar.narrate.snapshots.choose", "iochar.analyze.snapshots.choose")
    return analysis.choose(store, snapshot_id, before_id, after_id, now=now)


def growth_tables(store, sel: Selection) -> dict[str, pd.DataFrame]:
    """Deprecated: :func:`iochar.analyze.snapshots.growth_tables` (``store``, ``sel``)."""
    warn_moved("iochar.narrate.snapshots.growth_tables", "iochar.analyze.snapshots.growth_tables")
    return analysis.growth_tables(store, sel)


# ------------------------------------------------------------------ formatting helpers
def _when(ts) -> str:
    if ts is None or pd.isna(ts):
        return "no recorded time"
    return pd.Timestamp(ts).strftime("%Y-%m-%d %H:%M:%S") + " UTC"


def _taken(ts) -> str:
    return "no time recorded" if ts is None or pd.isna(ts) else f"taken {_when(ts)}"


def _ref(sel: Selection, snapshot_id) -> str:
    row = sel.row(snapshot_id)
    if row is None:
        return f"snapshot {snapshot_id}"
    return f"snapshot {snapshot_id} ({_taken(row['taken_at'])})"


def _root(row: dict | None) -> str:
    if row is None or row.get("root") is None or pd.isna(row.get("root")):
        return "an unnamed tree"
    return code(row["root"])


def _signed(n: float, fmt=fmt_num) -> str:
    return ("+" if n > 0 else "-" if n < 0 else "±") + fmt(abs(n))


def _first(df: pd.DataFrame, col: str, level: float = 0.5) -> int:
    """Position of the first row whose cumulative share reaches ``level``."""
    hit = (df[col].to_numpy(float) >= level - 1e-12).nonzero()[0]
    return int(hit[0]) if len(hit) else len(df) - 1


# ------------------------------------------------------------------ narrative
def summary(sel: Selection, sizes: pd.DataFrame) -> str:
    """What the snapshot is: its tree, time, files and bytes, and what else is stored.

    Parameters
    ----------
    sel : Selection
        From :func:`iochar.analyze.snapshots.choose`.
    sizes : pandas.DataFrame
        :func:`iochar.analyze.snapshots.size_cdf` of ``sel.snapshot_id``.

    Returns
    -------
    str
        Markdown.
    """
    if sel.snapshot_id is None:
        return "This database holds no file-system snapshot, so there is nothing to describe."
    row = sel.row(sel.snapshot_id)
    n = int(sizes["files"].sum()) if len(sizes) else 0
    total = float(sizes["bytes"].sum()) if len(sizes) else 0.0
    which = ", the latest in the database" if sel.latest else ""
    text = f"Snapshot {sel.snapshot_id} of {_root(row)} ({_taken(row['taken_at'])}{which}) "
    if n == 0:
        text += "lists no regular files."
    else:
        text += f"lists {plural(n, 'regular file')} holding {fmt_bytes(total)}."
    snaps = sel.snapshots
    trees = snaps["root"].astype("string").fillna("").nunique()
    k = len(sel.same_tree(row["root"]))
    text += f" The database holds {plural(len(snaps), 'snapshot')} of {plural(trees, 'tree')}; " + (
        "this is the only snapshot of its tree." if k == 1 else f"{k} are of this tree."
    )
    return text


def sizes(df: pd.DataFrame, *, bins: str = "exact") -> str:
    """Median file size against where the bytes are (Carns et al. 2011, Fig. 8).

    Parameters
    ----------
    df : pandas.DataFrame
        :func:`iochar.analyze.snapshots.size_cdf` result.
    bins : {"exact", "log2"}, default "exact"
        The ``bins`` it was computed with (log2 rows are power-of-two ranges).

    Returns
    -------
    str
        Markdown: the median file, the smallest size class of files holding half the
        bytes (and their share of the files), the largest file, empty files and the
        share of files under 1 MiB.
    """
    if df is None or len(df) == 0 or int(df["files"].sum()) == 0:
        return "The snapshot lists no regular files, so there is no size distribution."
    df = df.reset_index(drop=True)
    n = int(df["files"].sum())
    total = float(df["bytes"].sum())
    size = df["size_bytes"].to_numpy()
    if total <= 0:
        return f"All {plural(n, 'file')} in the snapshot are empty (0 bytes)."
    log2 = bins == "log2"
    m = _first(df, "cdf_files")
    if log2:
        upper = 2 * int(size[m]) if size[m] > 0 else 1
        text = (
            f"{fmt_pct(df.loc[m, 'cdf_files'])} of the files are smaller than "
            f"{fmt_bytes(upper)} (the median file is in the "
            f"{_bin(int(size[m]))} range)"
        )
    else:
        text = (
            f"The median file is {fmt_bytes(size[m])} ({fmt_pct(df.loc[m, 'cdf_files'])} "
            "of the files are that size or smaller)"
        )
    k = _first(df, "cdf_bytes")
    big_files = 1.0 - (float(df.loc[k - 1, "cdf_files"]) if k > 0 else 0.0)
    big_bytes = 1.0 - (float(df.loc[k - 1, "cdf_bytes"]) if k > 0 else 0.0)
    if big_files < 0.5:
        text += (
            f", but files of {fmt_bytes(size[k])} or more, only {fmt_pct(big_files)} of the "
            f"files, hold {fmt_pct(big_bytes)} of the bytes."
        )
    else:
        text += (
            f"; files of {fmt_bytes(size[k])} or more, {fmt_pct(big_files)} of the files, "
            f"hold {fmt_pct(big_bytes)} of the bytes, so the bytes are spread much like "
            "the files."
        )
    last = len(df) - 1
    top = int(df.loc[last, "files"])
    if log2:
        text += (
            f" The largest {'file is' if top == 1 else 'files are'} in the "
            f"{_bin(int(size[last]))} range"
            f"{'' if top == 1 else f' ({top:,} files)'}."
        )
    else:
        text += (
            f" The largest file is {fmt_bytes(size[last])}"
            f"{'' if top == 1 else f' ({top:,} files of that size)'}."
        )
    empty = int(df.loc[df["size_bytes"] <= 0, "files"].sum())
    if empty:
        text += f" {plural(empty, 'file is', 'files are')} empty."
    under = df[df["size_bytes"] < _MIB]
    if len(under):
        text += (
            f" {fmt_pct(under['cdf_files'].iloc[-1])} of the files are under 1 MiB; they hold "
            f"{fmt_pct(under['cdf_bytes'].iloc[-1])} of the bytes."
        )
    else:
        text += " No file is under 1 MiB."
    return text


def _bin(lo: int) -> str:
    if lo <= 0:
        return "0 B (empty)"
    return f"{fmt_bytes(lo)} to {fmt_bytes(2 * lo)}"


_VERB = {"mtime": "modified", "atime": "accessed"}
_STAMP = {"mtime": "last modification", "atime": "last access"}


def ages(df: pd.DataFrame, sel: Selection | None = None, *, kind: str = "mtime") -> str:
    """How old the data is, by files and by bytes (Carns et al. 2011, Fig. 9).

    Parameters
    ----------
    df : pandas.DataFrame
        :func:`iochar.analyze.snapshots.age_cdf` result (``attrs["now"]`` is the
        reference time).
    sel : Selection, optional
        From :func:`iochar.analyze.snapshots.choose`; says where the reference time came from.
    kind : {"mtime", "atime"}, default "mtime"
        The time stamp the ages were measured from.

    Returns
    -------
    str
        Markdown: the reference time, the age range, the median age by files and by
        bytes, and the shares of files and bytes touched within the last 30 days.
    """
    verb = _VERB.get(kind, kind)
    if df is None or len(df) == 0 or int(df["files"].sum()) == 0:
        return f"No file in the snapshot has a {kind} time stamp, so its age is unknown."
    now = evidence_of(df).get("now")
    df = df.reset_index(drop=True)
    source = ""
    if sel is not None:
        row = sel.row(sel.snapshot_id)
        if sel.now is not None:
            source = " (the given reference time)"
        elif row is not None and not pd.isna(row["taken_at"]):
            source = " (when the snapshot was taken)"
        else:
            source = " (the newest time stamp in the snapshot, which records no time of its own)"
    age = df["age_s"].to_numpy()
    text = f"Measured from each file's {_STAMP.get(kind, kind)} ({kind}) to {_when(now)}{source}, "
    if _age(age[0]) == _age(age[-1]):
        text += f"every file was last {verb} {_age(age[-1])} ago."
    else:
        text += f"files were last {verb} between {_age(age[0])} and {_age(age[-1])} ago."
        m = _first(df, "cdf_files")
        text += f" The median file was last {verb} {_age(age[m])} ago"
        if float(df["bytes"].sum()) > 0:
            k = _first(df, "cdf_bytes")
            text += f"; half the bytes are in files last {verb} {_age(age[k])} or more ago."
        else:
            text += "."
    text += _recent(df, verb)
    future = int(df.loc[df["age_s"] < 0, "files"].sum())
    if future:
        text += (
            f" {plural(future, 'file has its', 'files have their')} {kind} after the reference "
            "time (a snapshot time rounded down, or clock skew)."
        )
    return text


def _recent(df: pd.DataFrame, verb: str) -> str:
    """Share of files and bytes within the widest window (30 days, a day, an hour, a
    minute) that leaves some files out; 30 days is the paper's "a month"."""
    oldest = df["age_s"].iloc[-1]
    k = next((i for i, (w, _, _) in enumerate(_WINDOWS) if oldest > w), None)
    if k is None:
        return f" Every file was {verb} within {_WINDOWS[-1][2]} of that time."
    window, last, span = _WINDOWS[k]
    lead = f" Every file was {verb} within {_WINDOWS[k - 1][2]} of that time;" if k else ""
    recent = df[df["age_s"] <= window]
    if recent.empty:
        return lead + f" {'n' if lead else 'N'}o file was {verb} in {last}."
    share_f, share_b = recent["cdf_files"].iloc[-1], recent["cdf_bytes"].iloc[-1]
    return (
        lead
        + f" {fmt_pct(share_f)} of the files"
        + ("" if pd.isna(share_b) else f", holding {fmt_pct(share_b)} of the bytes,")
        + f" were {verb} in {last}; the other {fmt_pct(1 - share_f)}"
        + ("" if pd.isna(share_b) else f" ({fmt_pct(1 - share_b)} of the bytes)")
        + f" not for over {span}."
    )


def _age(seconds: float) -> str:
    if seconds <= 0:
        return "less than 1 s"
    if seconds >= 2 * 365.25 * 86400:
        return f"{seconds / (365.25 * 86400):.3g} years"
    return fmt_s(float(seconds))


def _group(name, by: str) -> str:
    if by == "top_dir":
        return "files directly in the root" if name == "." else code(f"{name}/")
    return "unknown owners" if name == "unknown" else f"uid {esc(name)}"


def _gain(df: pd.DataFrame, col: str, fmt) -> tuple[pd.Series, str] | None:
    """The group that gained most ``col`` (files or bytes) and '+N, P% of the net +M'."""
    d = df[f"d_{col}"]
    if len(df) == 0 or d.max() <= 0:
        return None
    row = df.loc[d.idxmax()]
    net = d.sum()
    part = _signed(row[f"d_{col}"], fmt)
    if net > 0 and not pd.isna(row[f"share_{col}"]):
        part += f", {fmt_pct(row[f'share_{col}'])} of the net {_signed(net, fmt)}"
    return row, part


def _contributors(df: pd.DataFrame, by: str) -> str:
    if len(df) == 1:
        name = _group(df["group"].iloc[0], by)
        if by == "owner":
            return f" All files belong to {name}."
        where = "directly in the root" if df["group"].iloc[0] == "." else f"under {name}"
        return f" All files sit {where}, so one top-level entry made all of the change."
    files, nbytes = _gain(df, "files", fmt_num), _gain(df, "bytes", fmt_bytes)
    what, whats = ("top-level directory", "directories") if by == "top_dir" else ("owner", "owners")
    if files is None and nbytes is None:
        return f" No {what} gained files or bytes."
    if files is not None and nbytes is not None and files[0]["group"] == nbytes[0]["group"]:
        return (
            f" Per {what}, {_group(files[0]['group'], by)} gained the most files ({files[1]}) "
            f"and the most bytes ({nbytes[1]})."
        )
    text = f" Per {what},"
    if files is not None:
        row = files[0]
        text += f" {_group(row['group'], by)} gained the most files ({files[1]})"
        if df["d_bytes"].sum() > 0 and not pd.isna(row["share_bytes"]):
            word = "but only" if row["share_bytes"] < row["share_files"] else "and"
            text += f" {word} {fmt_pct(row['share_bytes'])} of the net added bytes"
        text += ";" if nbytes is not None else "."
    if nbytes is not None:
        text += f" {_group(nbytes[0]['group'], by)} gained the most bytes ({nbytes[1]})."
    if files is not None and files[0]["share_files"] > 1:
        text += f" (A share over 100% means other {whats} lost files.)"
    return text


def growth(tables: dict[str, pd.DataFrame], sel: Selection) -> str:
    """What grew between two snapshots and who contributed most (Carns et al. 2011, Table V).

    Parameters
    ----------
    tables : dict of str to pandas.DataFrame
        From :func:`iochar.analyze.snapshots.growth_tables` (keys ``"total"``,
        ``"top_dir"``, ``"owner"``).
    sel : Selection
        From :func:`iochar.analyze.snapshots.choose`.

    Returns
    -------
    str
        Markdown: the change in files and bytes (new and deleted files), the top
        directory and the owner that added the most files and bytes; or why growth
        cannot be computed.
    """
    snaps = sel.snapshots
    if sel.snapshot_id is None:
        return "This database holds no snapshot, so growth cannot be computed."
    total = tables.get("total")
    if not sel.has_pair or total is None or len(total) == 0:
        row = sel.row(sel.snapshot_id)
        same = sel.same_tree(row["root"])
        if len(same) <= 1:
            text = (
                f"Snapshot {sel.snapshot_id} is the only snapshot of {_root(row)} in this "
                "database, so growth cannot be computed: it needs two snapshots of the same tree."
            )
        else:
            text = (
                f"Snapshot {sel.snapshot_id} is the earliest of the "
                f"{len(same)} snapshots of {_root(row)}, so there is no earlier one to "
                "compare it with; set `after_id` to a later one ("
                + listing(int(i) for i in same["snapshot_id"] if i != sel.snapshot_id)
                + ")."
            )
        counts = snaps.groupby(snaps["root"].astype("string").fillna(""), sort=False).agg(
            n=("snapshot_id", "size"), last=("snapshot_id", "last")
        )
        other = counts[
            (counts["n"] >= 2) & (counts.index != ("" if pd.isna(row["root"]) else row["root"]))
        ]
        if len(other):
            text += " Trees with several snapshots: " + listing(
                f"`{r}` ({plural(int(c.n), 'snapshot')}, latest {int(c['last'])})"
                for r, c in other.iterrows()
            )
            text += "; set `snapshot_id` to one of them."
        return text
    t = total.iloc[0]
    b, a = sel.row(sel.before_id), sel.row(sel.after_id)
    gap = ""
    if not pd.isna(b["taken_at"]) and not pd.isna(a["taken_at"]):
        secs = (pd.Timestamp(a["taken_at"]) - pd.Timestamp(b["taken_at"])).total_seconds()
        gap = f", {fmt_s(abs(secs))} {'later' if secs >= 0 else 'earlier'}"
    head = (
        f"From {_ref(sel, sel.before_id)} to snapshot {sel.after_id} ({_taken(a['taken_at'])}{gap})"
    )
    same_root = _root(b) == _root(a)
    tree = f" of {_root(a)}" if same_root else f" ({_root(b)} to {_root(a)})"
    fb, fa, bb, ba = (
        int(t[c]) for c in ("files_before", "files_after", "bytes_before", "bytes_after")
    )
    new, gone = int(t["new_files"]), int(t["deleted_files"])
    if fb == fa and bb == ba and new == 0 and gone == 0:
        text = (
            f"{head}{tree}, nothing changed: both list the same {plural(fa, 'path')} holding "
            f"{fmt_bytes(ba)} in total; no file was added or deleted."
        )
    else:
        text = (
            f"{head}{tree}, the number of files went from {fb:,} to {fa:,} "
            f"({_signed(fa - fb)}: {new:,} new, {gone:,} deleted"
            + (f", {_signed(100 * (fa - fb) / fb, lambda x: f'{x:.1f}%')}" if fb else "")
            + f") and the bytes from {fmt_bytes(bb)} to {fmt_bytes(ba)} "
            f"({_signed(ba - bb, fmt_bytes)}"
            + (f", {_signed(100 * (ba - bb) / bb, lambda x: f'{x:.1f}%')}" if bb else "")
            + ")."
        )
        text += _contributors(tables["top_dir"], "top_dir")
        text += _contributors(tables["owner"], "owner")
    if sel.pair_chosen and sel.before_id is not None:
        same = sel.same_tree(a["root"])
        ids = [int(i) for i in same["snapshot_id"]]
        older = ids[: ids.index(sel.before_id)] if sel.before_id in ids else []
        if older:
            text += (
                f" The tree also has {plural(len(older), 'older snapshot')}: "
                + listing(f"{i} ({_taken(sel.row(i)['taken_at'])})" for i in older)
                + f"; set `before_id = {older[-1]}` (or another) to compare with an older state."
            )
    return text
