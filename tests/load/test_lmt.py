"""The LMT loader on real NERSC LMT exports (data/lmt/, see its SOURCE.md).

``lmtdb-reset.sqlite3`` (one Cori OST, 5 s samples) holds a real outage
(07:35:45 -> 07:39:05) during which the OST restarted (its cumulative
counters drop from ~4.4e14 to 0). ``lmtdb-reset-ost.csv`` is the same OST
data in iochar's LMT CSV layout; ``snx11025_2018-01-28-trimmed.sqlite3`` is
the Edison export cut to 8 OSTs and the first minute.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

import polars as pl
import pytest

import iochar
from iochar import schema
from iochar.errors import InputError
from iochar.load import sniff
from iochar.load.lmt import LmtLoader

DATA = Path(__file__).resolve().parents[2] / "data" / "lmt"
RESET = DATA / "lmtdb-reset.sqlite3"
CSV = DATA / "lmtdb-reset-ost.csv"
EDISON = DATA / "snx11025_2018-01-28-trimmed.sqlite3"
OST = "snx11168-OST00ad"


def _load(src, **kw) -> tuple[pl.DataFrame, dict, object]:
    frames, meta, skips = [], {}, None
    for p in LmtLoader().parse(src, **kw):
        for name, tb in p.tables.items():
            assert name == "counters"
            schema.check_frame(name, tb)
            frames.append(pl.from_arrow(tb))
        meta.update(p.meta)
        skips = p.skips
    return pl.concat(frames), meta, skips


@pytest.mark.parametrize("path", [RESET, CSV])
def test_real_reset_and_gap(path):
    df, meta, _ = _load(path)
    ost = df.filter(pl.col("target") == OST, pl.col("metric").is_in(["read_bytes", "write_bytes"]))
    assert (ost["value"] >= 0).all()
    assert ost["value"].max() < 1e9  # no absurd delta from the 4.4e14 -> 0 drop
    gap = ost.filter(pl.col("quality") == "gap_reset")  # the restart happened in the outage
    assert gap.height == 2  # read_bytes and write_bytes
    assert gap["ts"].unique().to_list() == [dt.datetime(2018, 4, 18, 7, 39, 5)]
    assert gap["interval_s"].unique().to_list() == [200.0]  # one long interval, kept
    assert gap["value"].to_list() == [0.0, 0.0]  # counted since the restart
    assert set(ost["quality"]) == {"ok", "gap_reset"}
    ok = ost.filter(pl.col("quality") == "ok")
    assert ok["interval_s"].unique().to_list() == [5.0]
    assert meta["resets"] == 2
    # the first interval is the real difference of the two first samples
    rd = ost.filter(pl.col("metric") == "read_bytes").sort("ts")
    assert rd["value"][0] == 438210628444160 - 438210627739648
    # after the restart, the counter grows from 0 again
    assert rd.filter(pl.col("ts") == dt.datetime(2018, 4, 18, 7, 40, 20))["value"][0] == 62537728
    assert rd.height == 25  # 26 samples -> 25 intervals


def test_sqlite_and_csv_agree():
    a, _, _ = _load(RESET)
    b, _, _ = _load(CSV)
    a = a.filter(pl.col("metric").is_in(["read_bytes", "write_bytes"])).sort("metric", "ts")
    assert a.equals(b.sort("metric", "ts"))


def test_edison_ost_and_mds_counters():
    df, meta, _ = _load(EDISON)
    assert meta["filesystem"] == "snx11025"
    osts = df.filter(pl.col("metric") == "write_bytes")
    assert osts["target"].n_unique() == 8 and osts.height == 8 * 12
    assert set(osts["interval_s"]) == {5.0} and set(osts["quality"]) == {"ok"}
    mds = df.filter(pl.col("metric") == "mds_open_ops")
    assert set(mds["target"]) == {"snx11025-MDT0000"}
    assert mds.sort("ts")["value"][0] == 8355  # 2875074501 - 2875066146
    assert (df["value"] >= 0).all()


def test_sniff_and_store_load():
    for p in (RESET, CSV, EDISON):
        assert sniff(p) == "lmt"
    with iochar.connect(":memory:") as db:
        res = db.load(RESET)
        assert res.kind == "lmt"
        rows = db.sql(
            "SELECT quality, count(*) FROM counters WHERE metric = 'write_bytes' GROUP BY 1"
        ).fetchall()
        assert dict(rows) == {"ok": 24, "gap_reset": 1}


def test_cut_or_corrupt_database(tmp_path):
    raw = RESET.read_bytes()
    for cut in (100, 4096, len(raw) // 2, len(raw) - 1):
        bad = tmp_path / "cut.sqlite3"
        bad.write_bytes(raw[:cut])
        with pytest.raises(InputError, match="cut.sqlite3"):
            _load(bad)
    empty = tmp_path / "empty.sqlite3"
    sqlite3.connect(empty).execute("CREATE TABLE x(a)").connection.commit()
    with pytest.raises(InputError, match="LMT tables"):
        _load(empty)


def test_csv_errors(tmp_path):
    text = CSV.read_text().splitlines(keepends=True)
    bad = "".join(text[:5] + ["2018-04-18T07:36:00Z,snx11168-OST00ad,12,oops\n"] + text[5:])
    with pytest.raises(InputError, match=r"<buffer>:6: expected an ISO 8601"):
        _load(bad.encode())
    df, _, skips = _load(bad.encode(), strict=False)
    assert skips.count == 1 and df.height == 50
    back = "".join(text[:5] + text[2:3] + text[5:])  # a repeated, earlier sample
    with pytest.raises(InputError, match="times increasing"):
        _load(back.encode())
    with pytest.raises(InputError, match="newline"):
        _load(CSV.read_bytes()[:-2])
    epoch = "timestamp,ost,read_bytes\n1524036915,a,0\n1524036920.5,a,10\n"
    df, _, _ = _load(epoch.encode())
    assert df["ts"][0] == dt.datetime(2018, 4, 18, 7, 35, 20, 500000)
    assert df["interval_s"][0] == 5.5 and df["value"][0] == 10
