"""Uselton & Wright 2013, Fig. 9: a system's days against its long-term median day.

The real case: three sysstat 9 iostat captures of one RHEL 6 machine with 11 disks
(data/iostat/SOURCE.md: "same" machine), one on 2018-06-13 and two on 2018-06-14. The
expected numbers are summed here from the loaded ``counters`` rows with pandas.
"""

from __future__ import annotations

import pandas as pd
import pytest

import iochar
from iochar.analyze import throughput
from iochar.errors import ParameterError
from tests.conftest import DATA_DIR

RHEL6 = ["rhel6-sysstat9-x-t-m.iostat", "rhel6-sysstat9-x-t-d.iostat",
         "rhel6-sysstat9-x-t-sectors.iostat"]  # fmt: skip


@pytest.fixture(scope="module")
def db():
    store = iochar.connect(":memory:")
    for f in RHEL6:
        store.load(DATA_DIR / "iostat" / f)
    store.load(DATA_DIR / "iostat" / "rhel8-sysstat11.7.3-x-t-m.iostat")  # another machine
    store.load(DATA_DIR / "lmt" / "lmtdb-reset.sqlite3")
    store.load(DATA_DIR / "lmt" / "lmtdb-reset-ost.csv")  # the same samples again
    yield store
    store.close()


def _ids(db, names):
    rows = db.sql("SELECT source_id, uri FROM sources").fetchall()
    return sorted(i for i, u in rows if any(u.endswith("/" + n) for n in names))


def test_the_three_captures_of_one_machine_are_one_system(db):
    got = throughput.same_system_inputs(db)
    assert sorted(got) == _ids(db, RHEL6)  # same kind and same 11 disks; covers two days
    # an LMT database and its CSV export hold the same samples: one of them is kept
    lmt = throughput.same_system_inputs(db, source_id=_ids(db, ["lmtdb-reset.sqlite3"])[0])
    assert len(lmt) == 1
    # the RHEL 8 machine's sda is not the RHEL 6 machine's sda
    r8 = _ids(db, ["rhel8-sysstat11.7.3-x-t-m.iostat"])
    assert throughput.same_system_inputs(db, source_id=r8[0]) == r8


def test_daily_means_and_median_day_by_hand(db):
    ids = _ids(db, RHEL6)
    c = db.sql(
        "SELECT target, metric, ts, interval_s, value FROM counters "
        "WHERE list_contains($s, source_id) AND metric IN ('read_bytes', 'write_bytes') "
        "AND quality = 'ok' AND target <> 'cpu'",
        params={"s": ids},
    ).df()
    assert sorted(c["target"].unique()) == [f"sd{x}" for x in "abcdefghijk"]
    c["date"] = (c["ts"] - pd.Timedelta(microseconds=1)).dt.date
    p = throughput.daily_profile(db)
    assert p.reason == "" and p.n_days == 2 and sorted(p.sources) == ids
    for metric in ("read_bytes", "write_bytes"):
        rates = []
        for date, g in c[c["metric"] == metric].groupby("date"):
            amount = g["value"].sum()
            covered = g.groupby("target")["interval_s"].sum().max()  # 29 s, then 4 + 4 s
            row = p.days[(p.days["date"] == date) & (p.days["metric"] == metric)].iloc[0]
            assert row["amount"] == pytest.approx(amount)
            assert row["covered_s"] == pytest.approx(covered)
            assert row["rate"] == pytest.approx(amount / covered)
            rates.append(amount / covered)
        assert sorted(p.days.loc[p.days["metric"] == metric, "covered_s"]) == [8.0, 29.0]
        assert p.median_rate[metric] == pytest.approx(sum(rates) / 2)  # median of two days
        assert p.median_per_day[metric] == pytest.approx(86400 * sum(rates) / 2)
    # the hour bins: 14:00 on the 13th, 18:00 on the 14th, each from one day
    assert sorted(p.profile["hour"].unique()) == [14.0, 18.0]
    assert (p.profile["days"] == 1).all()


def test_one_day_says_why(db):
    p = throughput.daily_profile(db, source_id=_ids(db, ["lmtdb-reset.sqlite3"])[0])
    assert p.n_days == 1
    assert p.reason.startswith("the counters cover one day only (2018-04-18")
    # the counter reset and the outage are flagged samples: left out of the covered time
    flagged = db.sql(
        "SELECT count(*) FROM counters WHERE source_id = $s AND quality <> 'ok'",
        params={"s": p.sources[0]},
    ).fetchall()[0][0]
    assert flagged > 0
    ok = db.sql(
        "SELECT sum(interval_s) FROM counters WHERE source_id = $s AND quality = 'ok' "
        "AND metric = 'read_bytes'",
        params={"s": p.sources[0]},
    ).fetchall()[0][0]
    assert p.days["covered_s"].max() == pytest.approx(ok)


def test_no_counters_and_bad_bins(store):
    p = throughput.daily_profile(store)
    assert p.sources == [] and p.reason.startswith("no counters of read_bytes, write_bytes")
    with pytest.raises(ParameterError):
        throughput.daily_profile(store, bin_s=7)
