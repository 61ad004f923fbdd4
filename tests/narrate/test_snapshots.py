"""Narrative of notebook 04 (file-system snapshots) against the snapshot tables.

Every number expected in a sentence is computed here from the raw ``snapshot_files``
rows (or from the listing the test wrote), not copied from the narrative's own
arithmetic. The real listings are data/snapshot/ (tornado before/after, /bin stat).
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iochar.analyze import snapshots as S
from iochar.errors import ReportError
from iochar.narrate import fmt_bytes, fmt_pct, fmt_s
from iochar.narrate import snapshots as N

DATA = Path(__file__).resolve().parents[2] / "data" / "snapshot"
EPOCH = dt.datetime(2020, 1, 1)


def _sid(store, result) -> int:
    """Snapshot id of one load."""
    return store.sql(
        "SELECT snapshot_id FROM snapshots WHERE source_id = $s", {"s": result.source_id}
    ).fetchall()[0][0]


@pytest.fixture
def real(store):
    ids = {
        name: _sid(store, store.load(DATA / name))
        for name in ("tornado-before.find", "tornado-after.find", "ubuntu-18.04-bin.stat")
    }
    return store, ids


def _raw(store, sid) -> pd.DataFrame:
    return store.sql("SELECT * FROM snapshot_files WHERE snapshot_id = $s", {"s": sid}).df()


def _listing(root: str, taken: dt.datetime, files: list[tuple[str, int, float, int]]) -> bytes:
    """A find -printf listing: (relative path, size, age in s at ``taken``, uid) per file."""
    t0 = (taken - dt.datetime(1970, 1, 1)).total_seconds()
    lines = [f"# iochar-snapshot root={root} taken_at={taken.isoformat()}Z"]
    lines.append(f"d\t4096\t{t0:.1f}\t{t0:.1f}\t{t0:.1f}\t0\t{root}")
    for path, size, age, uid in files:
        t = t0 - age
        lines.append(f"f\t{size}\t{t:.1f}\t{t:.1f}\t{t:.1f}\t{uid}\t{root}/{path}")
    return ("\n".join(lines) + "\n").encode()


# ---------------------------------------------------------------- choose
def test_choose_latest_and_previous_of_the_same_tree(real):
    store, ids = real
    sel = S.choose(store)
    snaps = store.sql("SELECT snapshot_id, taken_at, root FROM snapshots").df()
    dated = snaps.dropna(subset=["taken_at"]).sort_values("taken_at")
    assert sel.snapshot_id == dated["snapshot_id"].iloc[-1] == ids["tornado-after.find"]
    assert (sel.before_id, sel.after_id) == (ids["tornado-before.find"], sel.snapshot_id)
    assert sel.latest and sel.pair_chosen


def test_choose_single_snapshot_tree_has_no_pair(real):
    store, ids = real
    sel = S.choose(store, ids["ubuntu-18.04-bin.stat"])
    assert not sel.has_pair and sel.before_id is None


def test_choose_before_only_finds_the_later_one(real):
    store, ids = real
    sel = S.choose(store, before_id=ids["tornado-before.find"])
    assert sel.after_id == ids["tornado-after.find"]


@pytest.mark.parametrize(
    "kwargs, word",
    [({"snapshot_id": 99}, "snapshot_id 99"), ({"after_id": "x"}, "after_id 'x'")],
)
def test_choose_rejects_unknown_ids(real, kwargs, word):
    with pytest.raises(ReportError, match=word):
        S.choose(real[0], **kwargs)


def test_choose_rejects_unreadable_now(real):
    with pytest.raises(ReportError, match="now 'yesterday'"):
        S.choose(real[0], now="yesterday")


# ---------------------------------------------------------------- summary
@pytest.mark.parametrize("name", ["tornado-before.find", "ubuntu-18.04-bin.stat"])
def test_summary_counts_files_and_bytes(real, name):
    store, ids = real
    sel = S.choose(store, ids[name])
    raw = _raw(store, ids[name])
    text = N.summary(sel, S.size_cdf(store, ids[name]))
    assert f"lists {len(raw):,} regular files holding {fmt_bytes(raw['size'].sum())}" in text
    assert f"holds {len(ids)} snapshots of 2 trees" in text


# ---------------------------------------------------------------- sizes
def _size_facts(sizes: np.ndarray) -> dict:
    s = np.sort(sizes)
    n, total = len(s), s.sum()
    median = s[math.ceil(n / 2) - 1]  # smallest size with at least half the files <= it
    cum = np.cumsum(s)
    byte_median = s[np.searchsorted(cum, total / 2)]  # smallest size holding half the bytes
    big = s >= byte_median
    return {
        "median": median,
        "median_share": (s <= median).mean(),
        "big": byte_median,
        "big_files": big.mean(),
        "big_bytes": s[big].sum() / total,
        "largest": s[-1],
        "under_mib": (s < 2**20).mean(),
        "under_mib_bytes": s[s < 2**20].sum() / total,
        "empty": int((s == 0).sum()),
    }


@pytest.mark.parametrize("name", ["tornado-before.find", "tornado-after.find"])
def test_sizes_exact_numbers_come_from_the_files(real, name):
    store, ids = real
    f = _size_facts(_raw(store, ids[name])["size"].to_numpy())
    text = N.sizes(S.size_cdf(store, ids[name]), bins="exact")
    assert f"The median file is {fmt_bytes(f['median'])} ({fmt_pct(f['median_share'])}" in text
    assert (
        f"files of {fmt_bytes(f['big'])} or more, only {fmt_pct(f['big_files'])} of the "
        f"files, hold {fmt_pct(f['big_bytes'])} of the bytes"
    ) in text
    assert f"The largest file is {fmt_bytes(f['largest'])}" in text
    assert f"{f['empty']} files are empty" in text
    assert f"{fmt_pct(f['under_mib'])} of the files are under 1 MiB" in text
    assert f"they hold {fmt_pct(f['under_mib_bytes'])} of the bytes" in text


def test_sizes_change_with_the_data(real):
    store, ids = real
    a, b = (
        N.sizes(S.size_cdf(store, ids[n]), bins="exact")
        for n in ("tornado-before.find", "tornado-after.find")
    )
    assert a != b


def test_sizes_log2_names_power_of_two_bounds(real):
    store, ids = real
    sid = ids["ubuntu-18.04-bin.stat"]
    f = _size_facts(_raw(store, sid)["size"].to_numpy())
    text = N.sizes(S.size_cdf(store, sid, bins="log2"), bins="log2")
    lo = 2 ** int(np.floor(np.log2(f["median"])))
    share = (_raw(store, sid)["size"] < 2 * lo).mean()
    assert f"{fmt_pct(share)} of the files are smaller than {fmt_bytes(2 * lo)}" in text
    big_lo = 2 ** int(np.floor(np.log2(f["big"])))
    assert f"files of {fmt_bytes(big_lo)} or more" in text


def test_sizes_empty_and_all_empty(store):
    no_files = store.load(_listing("/e", EPOCH, []))
    zeros = store.load(_listing("/z", EPOCH, [("a", 0, 1, 0), ("b", 0, 1, 0), ("c", 0, 1, 0)]))
    df = S.size_cdf(store, _sid(store, no_files))
    assert N.sizes(df) == "The snapshot lists no regular files, so there is no size distribution."
    assert N.sizes(S.size_cdf(store, _sid(store, zeros))) == (
        "All 3 files in the snapshot are empty (0 bytes)."
    )
    sel = S.choose(store, _sid(store, no_files))
    assert "lists no regular files" in N.summary(sel, df)


# ---------------------------------------------------------------- ages
def _ages_listing(store, ages_s, sizes, now=EPOCH):
    files = [(f"f{i}", s, a, 0) for i, (a, s) in enumerate(zip(ages_s, sizes, strict=True))]
    return _sid(store, store.load(_listing("/ages", now, files)))


def test_ages_medians_and_month_from_the_listing(store):
    day = 86400
    ages_s = np.array([2, 10, 25, 45, 100, 400, 900]) * day
    sizes = np.array([10, 10, 10, 10, 5000, 6000, 7000])
    sid = _ages_listing(store, ages_s, sizes)
    sel = S.choose(store, sid)
    text = N.ages(S.age_cdf(store, sid), sel, kind="mtime")
    order = np.argsort(ages_s)
    a, s = ages_s[order], sizes[order]
    median = a[math.ceil(len(a) / 2) - 1]
    byte_median = a[np.searchsorted(np.cumsum(s), s.sum() / 2)]
    month = a <= 30 * day
    assert "2020-01-01 00:00:00 UTC (when the snapshot was taken)" in text
    assert f"between {fmt_s(a[0])} and {a[-1] / (365.25 * day):.3g} years ago" in text
    assert f"The median file was last modified {fmt_s(median)} ago" in text
    assert f"half the bytes are in files last modified {fmt_s(byte_median)} or more" in text
    assert (
        f"{fmt_pct(month.mean())} of the files, holding {fmt_pct(s[month].sum() / s.sum())} "
        "of the bytes, were modified in the last 30 days"
    ) in text


def test_ages_follow_the_reference_time(store):
    sid = _ages_listing(store, [60.0, 7200.0], [1, 1])
    later = EPOCH + dt.timedelta(days=40)
    texts = [
        N.ages(S.age_cdf(store, sid, now=sel.now), sel)
        for sel in (S.choose(store, sid), S.choose(store, sid, now=later.isoformat()))
    ]
    assert "50.0% of the files" in texts[0] and "in the last hour" in texts[0]
    assert "(the given reference time)" in texts[1]
    assert "No file was modified in the last 30 days." in texts[1]


def test_ages_counts_files_after_the_reference_time(real):
    # tornado-after's header time is rounded down to the second; files written in that
    # second are newer than it
    store, ids = real
    sid = ids["tornado-after.find"]
    raw = _raw(store, sid)
    taken = store.sql("SELECT taken_at FROM snapshots WHERE snapshot_id = $s", {"s": sid})
    future = int((raw["mtime"] > taken.fetchall()[0][0]).sum())
    assert future > 0
    text = N.ages(S.age_cdf(store, sid), S.choose(store, sid))
    assert f"{future} files have their mtime after the reference time" in text


def test_ages_empty():
    df = pd.DataFrame({c: [] for c in ("age_s", "age_days", "files", "bytes")})
    assert N.ages(df, kind="atime") == (
        "No file in the snapshot has a atime time stamp, so its age is unknown."
    )


# ---------------------------------------------------------------- growth
def test_growth_numbers_and_contributors_from_paths(real):
    store, ids = real
    b, a = _raw(store, ids["tornado-before.find"]), _raw(store, ids["tornado-after.find"])
    sel = S.choose(store)
    text = N.growth(S.growth_tables(store, sel), sel)
    new = set(a["path"]) - set(b["path"])
    gone = set(b["path"]) - set(a["path"])
    assert (
        f"went from {len(b):,} to {len(a):,} (+{len(a) - len(b)}: {len(new)} new, "
        f"{len(gone)} deleted, +{100 * (len(a) - len(b)) / len(b):.1f}%)"
    ) in text
    d_bytes = a["size"].sum() - b["size"].sum()
    assert f"from {fmt_bytes(b['size'].sum())} to {fmt_bytes(a['size'].sum())}" in text
    assert f"(+{fmt_bytes(d_bytes)}, +{100 * d_bytes / b['size'].sum():.1f}%)" in text

    root = "/tmp/iochar-snap/tornado/"

    def per_dir(df):
        top = df["path"].str.removeprefix(root).str.split("/").str[0]
        return df.assign(top=top).groupby("top").agg(n=("size", "size"), by=("size", "sum"))

    d = per_dir(a).sub(per_dir(b), fill_value=0)
    top_files, top_bytes = d["n"].idxmax(), d["by"].idxmax()
    assert top_files != top_bytes  # the fixture's EarthScience-like shape
    net_files = len(a) - len(b)
    assert (
        f"`{top_files}/` gained the most files (+{int(d.loc[top_files, 'n'])}, "
        f"{fmt_pct(d.loc[top_files, 'n'] / net_files)} of the net +{net_files})"
    ) in text
    assert f"but only {fmt_pct(d.loc[top_files, 'by'] / d_bytes)} of the net added bytes" in text
    assert (
        f"`{top_bytes}/` gained the most bytes (+{fmt_bytes(d.loc[top_bytes, 'by'])}, "
        f"{fmt_pct(d.loc[top_bytes, 'by'] / d_bytes)} of the net +{fmt_bytes(d_bytes)})"
    ) in text
    uids = sorted(a["uid"].unique())
    assert f"All files belong to uid {uids[0]}." in text and len(uids) == 1


def test_growth_by_owner_names_both_contributors(store):
    before = [("keep", 1000, 100, 1)]
    after = before + [(f"small{i}", 10, 1, 2) for i in range(5)] + [("big", 90_000, 1, 1)]
    b = _sid(store, store.load(_listing("/o", EPOCH, before)))
    a = _sid(store, store.load(_listing("/o", EPOCH + dt.timedelta(hours=1), after)))
    sel = S.choose(store)
    assert (sel.before_id, sel.after_id) == (b, a)
    text = N.growth(S.growth_tables(store, sel), sel)
    added_bytes = 5 * 10 + 90_000
    assert f"{fmt_s(3600)} later" in text
    assert f"uid 2 gained the most files (+5, {fmt_pct(5 / 6)} of the net +6)" in text
    assert f"but only {fmt_pct(50 / added_bytes)} of the net added bytes" in text
    assert f"uid 1 gained the most bytes (+{fmt_bytes(90_000)}" in text
    # the same data seen per top-level entry: all files sit directly in the root
    assert "All files sit directly in the root, so one top-level entry made all" in text


def test_growth_single_snapshot_says_it_cannot(real):
    store, ids = real
    sid = ids["ubuntu-18.04-bin.stat"]
    sel = S.choose(store, sid)
    tables = S.growth_tables(store, sel)
    assert all(len(t) == 0 for t in tables.values())
    text = N.growth(tables, sel)
    assert text.startswith(
        f"Snapshot {sid} is the only snapshot of `/bin` in this database, so growth cannot "
        "be computed"
    )
    assert f"(2 snapshots, latest {ids['tornado-after.find']})" in text


def test_growth_earliest_snapshot_points_to_later_ones(real):
    store, ids = real
    sel = S.choose(store, ids["tornado-before.find"])
    text = N.growth(S.growth_tables(store, sel), sel)
    assert f"set `after_id` to a later one ({ids['tornado-after.find']})" in text


def test_growth_identical_snapshots_and_older_hint(real):
    store, ids = real
    walker = _sid(store, store.load(DATA / "tornado-after.parquet"))
    sel = S.choose(store)
    assert (sel.before_id, sel.after_id) == (ids["tornado-after.find"], walker)
    raw = _raw(store, walker)
    text = N.growth(S.growth_tables(store, sel), sel)
    assert (
        f"nothing changed: both list the same {len(raw)} paths holding "
        f"{fmt_bytes(raw['size'].sum())}"
    ) in text
    assert f"set `before_id = {ids['tornado-before.find']}`" in text


def test_growth_no_snapshots(store):
    sel = S.choose(store)
    assert sel.snapshot_id is None
    assert N.growth(S.growth_tables(store, sel), sel) == (
        "This database holds no snapshot, so growth cannot be computed."
    )
    assert "no file-system snapshot" in N.summary(sel, pd.DataFrame())
