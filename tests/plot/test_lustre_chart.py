"""The per-OST chart (issue 20, item 2): the slow OST visible, a sentence when there is
nothing to draw, readable at 1,000+ OSTs.

Built from real Darshan logs in data/ (PyDarshan's sample-badost / sample-goodost,
MACSio, ior_hdf5_example, noposix) and rendered with vl-convert, as reports do. The
slow OST's ratio is computed here from PyDarshan's own records.
"""

from __future__ import annotations

import re
import statistics
import warnings
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest

import iochar
from iochar.analyze import lustre
from iochar.plot import NoChart
from iochar.plot.lustre import MAX_LABELS, ost_chart

pytest.importorskip("altair")
vlc = pytest.importorskip("vl_convert")
darshan = pytest.importorskip("darshan", reason="PyDarshan reads the logs (iochar[darshan])")

DATA = Path(__file__).resolve().parents[2] / "data"
LUSTRE = DATA / "darshan" / "lustre"
BADOST = LUSTRE / "sample-badost.darshan"
GOODOST = LUSTRE / "sample-goodost.darshan"
MACSIO = LUSTRE / "shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158.darshan"
HDF5_DXT = DATA / "darshan" / "ior_hdf5_example.darshan"
NOPOSIX = DATA / "darshan_noposix" / "noposix.darshan"
RED = "#d62728"


@pytest.fixture(scope="module")
def db():
    store = iochar.connect(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in (BADOST, GOODOST, MACSIO, HDF5_DXT, NOPOSIX):
            store.load(p)
    jobs = dict(
        store.sql(
            "SELECT regexp_extract(s.uri, '[^/]*$'), j.job_id "
            "FROM jobs j JOIN sources s USING (source_id)"
        ).fetchall()
    )
    yield store, jobs
    store.close()


def _svg(chart) -> str:
    return vlc.vegalite_to_svg(chart.to_json())


def _texts(svg: str) -> list[str]:
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def _bars(svg: str) -> list[str]:
    """The fill of every bar of the bytes panel."""
    return re.findall(r'aria-roledescription="bar" d="[^"]*" fill="([^"]*)"', svg)


def _write_slowdowns(path):
    """Per OST median write rate / its write rate, from PyDarshan (one stripe per file)."""
    rep = darshan.DarshanReport(str(path), read_all=False)
    rep.mod_read_all_lustre_records()
    rep.mod_read_all_records("POSIX")
    d = rep.records["POSIX"].to_df()
    f = d["counters"].merge(d["fcounters"], on=["id", "rank"]).groupby("id").sum()
    b, t = defaultdict(float), defaultdict(float)
    for rec in rep.records["LUSTRE"]:
        (ost,) = {int(o) for c in rec["components"] for o in c["ost_ids"]}
        b[ost] += f.loc[rec["id"], "POSIX_BYTES_WRITTEN"]
        t[ost] += f.loc[rec["id"], "POSIX_F_WRITE_TIME"]
    rates = {o: b[o] / t[o] for o in b}
    med = statistics.median(rates.values())
    return {o: med / r for o, r in rates.items()}


def test_badost_chart_shows_ost_14(db):
    store, jobs = db
    slowdown = _write_slowdowns(BADOST)
    worst = max(slowdown, key=slowdown.get)
    assert worst == 14
    table = lustre.ost_table(store, jobs[BADOST.name])
    svg = _svg(ost_chart(table))
    texts = _texts(svg)
    label = f"OST 14: {slowdown[14]:.3g}x below median"
    assert label in texts
    assert any(t.startswith("job ") and f"OST 14 is {slowdown[14]:.3g}x below" in t for t in texts)
    bars = _bars(svg)
    assert len(bars) == 24 and bars.count(RED) == 1  # one red bar: OST 14's
    assert "OST index" in texts and "bytes [GiB]" in texts and "rate per OST" in texts
    assert {"512 KiB/s", "16 MiB/s"} <= set(texts)  # the log rate axis, binary units


def test_goodost_chart_has_no_slow_ost(db):
    store, jobs = db
    assert max(_write_slowdowns(GOODOST).values()) < lustre.SLOW_OST_RATIO
    svg = _svg(ost_chart(lustre.ost_table(store, jobs[GOODOST.name])))
    assert not [t for t in _texts(svg) if "below" in t]
    bars = _bars(svg)
    assert len(bars) == 24 and RED not in bars and RED not in svg


def test_no_chart_without_lustre_records(db):
    store, jobs = db
    job = jobs[MACSIO.name]
    nc = ost_chart(lustre.ost_table(store, job))
    assert isinstance(nc, NoChart)
    assert str(nc).startswith(f"No OST chart: job {job} has no Darshan LUSTRE records")
    empty = iochar.connect(":memory:")
    assert str(ost_chart(lustre.ost_table(empty))) == (
        "No OST chart: the database holds no Darshan LUSTRE records."
    )


def test_no_chart_without_bytes_or_with_one_ost(db):
    store, jobs = db
    nc = ost_chart(lustre.ost_table(store, jobs[NOPOSIX.name]))
    assert isinstance(nc, NoChart) and "222 OSTs" in str(nc) and "POSIX counters" in str(nc)
    rep = darshan.DarshanReport(str(HDF5_DXT), read_all=False)
    rep.mod_read_all_records("POSIX")
    c = rep.records["POSIX"].to_df()["counters"]
    mib = (c["POSIX_BYTES_READ"].sum() + c["POSIX_BYTES_WRITTEN"].sum()) / 2**20
    nc = ost_chart(lustre.ost_table(store, jobs[HDF5_DXT.name]))
    assert isinstance(nc, NoChart) and f"one OST (106, {mib:.3g} MiB)" in str(nc)


def test_several_jobs_need_a_job_id(db):
    store, jobs = db
    both = lustre.ost_table(store)
    with pytest.raises(iochar.errors.ParameterError):
        ost_chart(both)
    with pytest.raises(iochar.errors.ParameterError):
        ost_chart(both, job_id=jobs[MACSIO.name])  # not in the table
    one = ost_chart(both, job_id=jobs[BADOST.name]).to_dict()
    assert "OST 14" in one["title"]


def test_readable_at_1200_osts(db):
    """sample-badost's 24 real OSTs repeated 50 times (OSTs 0-1199, every 24th slow):
    one bar per OST, at most MAX_LABELS labels and none overlapping, ticks that fit."""
    store, jobs = db
    table = lustre.ost_table(store, jobs[BADOST.name])
    big = pd.concat([table.assign(ost=table["ost"] + 24 * k) for k in range(50)])
    svg = _svg(ost_chart(big))
    assert len(_bars(svg)) == 1200 and _bars(svg).count(RED) == 50
    texts = _texts(svg)
    assert any("50 OSTs 4x or more below the median, the slowest OST 14" in t for t in texts)
    labels = re.findall(
        r'text-anchor="(start|end)" transform="translate\(([-\d.]+),([-\d.]+)\)"[^>]*>'
        r"(OST \d+: [^<]*)</text>",
        svg,
    )
    assert 2 <= len(labels) <= MAX_LABELS
    spans = []
    for anchor, x, _, text in labels:
        w = 7.0 * len(text)
        x = float(x)
        spans.append((x, x + w) if anchor == "start" else (x - w, x))
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
    ticks = [t for t in texts if re.fullmatch(r"\d+", t)]
    assert "1000" in ticks and len(set(ticks)) <= 20  # not one label per OST
