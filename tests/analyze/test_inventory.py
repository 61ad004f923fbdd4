"""inventory: what a database holds, checked against the raw input files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import iochar
from iochar.analyze import inventory

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def db():
    store = iochar.connect(":memory:")
    for rel in (
        "lmt/lmtdb-reset-ost.csv",
        "strace/ckpt_tt.strace",
        "strace/workers_o.strace",
        "snapshot/tornado-before.find",
        "brw_stats/ldiskfs-lctl-series.txt",
    ):
        store.load(DATA / rel)
    yield store
    store.close()


def test_inventory_counts_every_row_by_kind(db):
    inv = inventory.inventory(db).set_index("kind")
    assert list(inv.columns) == list(inventory.INVENTORY_COLUMNS[1:])
    assert inv.loc["strace", "sources"] == 2 and inv.loc["strace", "jobs"] == 2
    for kind, table in (("lmt", "counters"), ("brw_stats", "size_hist")):
        n = db.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        assert inv.loc[kind, table] == n > 0
    assert inv.loc["strace", "ops"] == db.sql("SELECT count(*) FROM ops").fetchall()[0][0]
    sizes = sum(
        (DATA / p).stat().st_size for p in ("strace/ckpt_tt.strace", "strace/workers_o.strace")
    )
    assert inv.loc["strace", "input_bytes"] == sizes
    # the find listing: regular files (type f) become snapshot entries
    lines = (DATA / "snapshot/tornado-before.find").read_text().splitlines()
    entries = [ln for ln in lines if ln.startswith("f\t")]
    assert inv.loc["snapshot", "snapshot_files"] == len(entries)
    assert inv.loc["lmt", "first_ts"] < inv.loc["lmt", "last_ts"]


def test_coverage_of_the_lmt_series_matches_the_csv(db):
    cov = inventory.coverage(db)
    assert list(cov.columns) == list(inventory.COVERAGE_COLUMNS)
    row = cov[(cov["kind"] == "lmt")].iloc[0]
    raw = pd.read_csv(DATA / "lmt/lmtdb-reset-ost.csv", parse_dates=["timestamp"])
    ts = raw["timestamp"].dt.tz_localize(None)
    # a counter series gives one interval per pair of samples
    assert row["samples"] == len(ts) - 1
    assert row["start"] == ts.iloc[1] and row["end"] == ts.iloc[-1]
    assert row["interval_s"] == pytest.approx(ts.diff().dt.total_seconds().median())
    drops = (raw["read_bytes"].diff() < 0) | (raw["write_bytes"].diff() < 0)
    assert row["flagged"] == int(drops.sum()) == 1  # the OST restart
    assert row["metrics"] == "read_bytes, write_bytes"
    assert row["source"] == "lmtdb-reset-ost.csv"


def test_coverage_lists_snapshots_with_their_root(db):
    snap = inventory.coverage(db).query("table == 'snapshots'").iloc[0]
    first = (DATA / "snapshot/tornado-before.find").read_text().splitlines()[0]
    assert f"root={snap['target']}" in first
    assert snap["start"] == pd.Timestamp(first.split("taken_at=")[1].rstrip("Z"))


def test_empty_database():
    with iochar.connect(":memory:") as empty:
        assert inventory.inventory(empty).empty
        assert inventory.coverage(empty).empty
