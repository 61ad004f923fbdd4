"""Sentences about Lustre OSTs (issue 20, item 2) on real Darshan logs.

The numbers a sentence must carry are computed here from PyDarshan's own LUSTRE and
POSIX records of the same logs (median write rate over OSTs / the slowest OST's, bytes
split over each file's OSTs), then formatted as the narrative formats them.
"""

from __future__ import annotations

import statistics
import warnings
from collections import defaultdict
from pathlib import Path

import pytest

import iochar
from iochar import narrate
from iochar.analyze import lustre as analysis
from iochar.narrate import lustre

darshan = pytest.importorskip("darshan", reason="PyDarshan reads the logs (iochar[darshan])")

DATA = Path(__file__).resolve().parents[2] / "data"
LUSTRE = DATA / "darshan" / "lustre"
BADOST = LUSTRE / "sample-badost.darshan"
GOODOST = LUSTRE / "sample-goodost.darshan"
MACSIO = LUSTRE / "shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158.darshan"
NOPOSIX = DATA / "darshan_noposix" / "noposix.darshan"


@pytest.fixture(scope="module")
def db():
    store = iochar.connect(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in (BADOST, GOODOST, MACSIO, NOPOSIX):
            store.load(p)
    jobs = dict(
        store.sql(
            "SELECT regexp_extract(s.uri, '[^/]*$'), j.job_id "
            "FROM jobs j JOIN sources s USING (source_id)"
        ).fetchall()
    )
    yield store, jobs
    store.close()


def _write_rates(path):
    """{OST: (bytes written, write rate)} from PyDarshan (every file on one stripe)."""
    rep = darshan.DarshanReport(str(path), read_all=False)
    rep.mod_read_all_lustre_records()
    rep.mod_read_all_records("POSIX")
    d = rep.records["POSIX"].to_df()
    f = d["counters"].merge(d["fcounters"], on=["id", "rank"]).groupby("id").sum()
    b, t, n = defaultdict(float), defaultdict(float), defaultdict(int)
    for rec in rep.records["LUSTRE"]:
        (ost,) = {int(o) for c in rec["components"] for o in c["ost_ids"]}
        b[ost] += f.loc[rec["id"], "POSIX_BYTES_WRITTEN"]
        t[ost] += f.loc[rec["id"], "POSIX_F_WRITE_TIME"]
        n[ost] += 1
    return {o: (b[o], b[o] / t[o], n[o]) for o in b}


def test_badost_sentence_names_ost_14_with_its_numbers(db):
    store, jobs = db
    per = _write_rates(BADOST)
    median = statistics.median(r for _, r, _ in per.values())
    slow = min(per, key=lambda o: per[o][1])
    text = lustre.job(analysis.ost_summary(store), jobs[BADOST.name])
    assert f"OST {slow} wrote at {narrate.fmt_rate(per[slow][1])}" in text
    assert f"{median / per[slow][1]:.3g}x below the median of 24 rated OSTs" in text
    assert f"({narrate.fmt_rate(median)}): a slow OST" in text
    assert f"its {per[slow][2]} files took" in text
    assert "2,048 files with a Lustre layout sit on 24 OSTs" in text
    assert "split evenly over each file's OSTs (no DXT offsets)" in text
    s = lustre.summary(analysis.ost_summary(store))
    assert f"job {jobs[BADOST.name]} (OST 14, {median / per[slow][1]:.3g}x below" in s
    assert f"job {jobs[GOODOST.name]} " not in s


def test_goodost_says_no_slow_ost(db):
    store, jobs = db
    per = _write_rates(GOODOST)
    rates = [r for _, r, _ in per.values()]
    ratio = statistics.median(rates) / min(rates)
    text = lustre.job(analysis.ost_summary(store), jobs[GOODOST.name])
    assert text.count("No slow OST") == 1 and "a slow OST" not in text
    assert f"{ratio:.3g}x below the median" in text
    each = sum(b for b, _, _ in per.values()) / len(per)
    assert f"{narrate.fmt_bytes(each)} on each OST" in text


def test_no_lustre_records_said_plainly(db):
    store, jobs = db
    job = jobs[MACSIO.name]
    table = analysis.ost_summary(store, job)
    assert lustre.summary(table).startswith(
        f"No Darshan LUSTRE records: job {job} has no Darshan LUSTRE records, so the OSTs "
        "that held the files are unknown"
    )
    assert lustre.job(analysis.ost_summary(store), job).startswith(
        f"Job {job} has no Darshan LUSTRE records"
    )


def test_layouts_without_posix(db):
    store, jobs = db
    text = lustre.job(analysis.ost_summary(store), jobs[NOPOSIX.name])
    assert "519 files with a Lustre layout sit on 222 OSTs" in text
    assert "None of them has a POSIX record, so there are no bytes" in text
