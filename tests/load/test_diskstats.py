"""diskstats loader: a real timestamped series, the real jc snapshot, field variants, errors."""

from __future__ import annotations

from datetime import datetime

import polars as pl
import pyarrow as pa
import pytest

from iochar import load, schema
from iochar.errors import InputError
from iochar.load.diskstats import DiskstatsLoader
from tests.conftest import DATA_DIR

SERIES = DATA_DIR / "diskstats" / "vm-linux6.18-3dev.diskstats"
#: jc's real /proc/diskstats (one snapshot, no timestamp; data/diskstats/SOURCE.md)
JC_SNAPSHOT = DATA_DIR / "diskstats" / "jc-linux-proc.snapshot"


def _frame(src, strict=True) -> tuple[pl.DataFrame, list]:
    chunks = list(load.parse(src, "diskstats", strict=strict))
    tbs = [schema.check_frame("counters", c.tables["counters"]) for c in chunks if c.tables]
    df = pl.from_arrow(pa.concat_tables(tbs)) if tbs else pl.DataFrame()
    return df, chunks


def _err(data: bytes) -> InputError:
    with pytest.raises(InputError) as ei:
        list(load.parse(data, "diskstats"))
    assert ei.value.kind == "diskstats"
    return ei.value


def _snapshots(path) -> list[tuple[float, dict[str, list[int]]]]:
    out = []
    for ln in path.read_text().splitlines():
        f = ln.split()
        if len(f) == 1:
            out.append((float(f[0]), {}))
        elif f:
            out[-1][1][f[2]] = [int(x) for x in f[3:]]
    return out


def test_real_series_deltas():
    df, chunks = _frame(SERIES)
    snaps = _snapshots(SERIES)
    assert chunks[-1].meta["snapshots"] == len(snaps) and chunks[-1].meta["fields"] == [20]
    (t0, a), (t1, b) = snaps[0], snaps[1]
    vda = df.filter(pl.col("target") == "vda").sort("ts")
    first = vda.filter(pl.col("ts") == vda["ts"].min())
    get = dict(zip(first["metric"], first["value"], strict=True))
    assert get["read_ios"] == b["vda"][0] - a["vda"][0]
    assert get["read_bytes"] == (b["vda"][2] - a["vda"][2]) * 512
    assert get["write_bytes"] == (b["vda"][6] - a["vda"][6]) * 512
    assert get["busy_s"] == pytest.approx((b["vda"][9] - a["vda"][9]) / 1000)
    assert get["queue_time_s"] == pytest.approx((b["vda"][10] - a["vda"][10]) / 1000)
    assert get["flush_ios"] == b["vda"][15] - a["vda"][15]
    assert get["in_flight"] == b["vda"][8]
    assert first["interval_s"][0] == pytest.approx(t1 - t0)
    assert get["read_bytes"] > 100e6  # dd was reading during the capture
    assert (df["value"] >= 0).all() and set(df["quality"].unique()) <= {"ok", "gap"}
    n_intervals = len(snaps) - 1
    assert vda.filter(pl.col("metric") == "read_ios").height == n_intervals


def _two(snapshot: str, t0="1700000000.5", t1="1700000002.5", bump=None) -> bytes:
    second = snapshot
    if bump:
        second = "\n".join(bump(ln) for ln in snapshot.splitlines()) + "\n"
    return f"{t0}\n{snapshot}{t1}\n{second}".encode()


def test_real_single_snapshot_twice():
    """The jc /proc/diskstats (20 fields), wrapped as two snapshots 2 s apart."""
    snap = JC_SNAPSHOT.read_text()

    def bump(ln):
        f = ln.split()
        if len(f) > 3 and f[2] == "sda":
            f[3] = str(int(f[3]) + 100)  # 100 reads
            f[5] = str(int(f[5]) + 800)  # 800 sectors
        return " ".join(f)

    df, _ = _frame(_two(snap, bump=bump))
    sda = df.filter(pl.col("target") == "sda")
    got = dict(zip(sda["metric"], sda["value"], strict=True))
    assert got["read_ios"] == 100 and got["read_bytes"] == 800 * 512 and got["write_ios"] == 0
    assert sda["interval_s"].unique().to_list() == [2.0]
    assert sda["ts"][0] == datetime(2023, 11, 14, 22, 13, 22, 500000)
    # no timestamp at all: refused, naming line 1
    e = _err(JC_SNAPSHOT.read_bytes())
    assert e.line == 1 and "timestamp" in e.expected


@pytest.mark.parametrize("nfields", [14, 18, 20])
def test_field_count_variants(nfields):
    base = "   8       0 sda " + " ".join(str(10 * (k + 1)) for k in range(17))
    short = " ".join(base.split()[:nfields])
    longer = " ".join(str(int(x) * 2) if k >= 3 else x for k, x in enumerate(short.split()))
    df, _ = _frame(f"# 1700000000\n{short}\n# 1700000001\n{longer}\n".encode())
    metrics = set(df["metric"])
    assert ("discard_ios" in metrics) == (nfields >= 18)
    assert ("flush_ios" in metrics) == (nfields == 20)
    assert df.filter(pl.col("metric") == "read_ios")["value"][0] == 10


def test_iso_timestamps():
    line = "   8       0 sda 1 0 8 1 0 0 0 0 0 1 1\n"
    line2 = "   8       0 sda 3 0 24 1 0 0 0 0 0 1 1\n"
    data = f"2026-11-23T04:00:00+02:00\n{line}2026-11-23T02:00:01.5Z\n{line2}".encode()
    df, _ = _frame(data)
    assert df["ts"][0] == datetime(2026, 11, 23, 2, 0, 1, 500000)
    assert df["interval_s"][0] == 1.5


def _series(rows: list[tuple[float, dict[str, int]]]) -> bytes:
    out = []
    for t, devs in rows:
        out.append(f"{t}")
        for name, reads in devs.items():
            out.append(f"   8 0 {name} {reads} 0 {reads * 8} 5 0 0 0 0 0 7 9")
    return ("\n".join(out) + "\n").encode()


def test_device_vanishing_and_reset():
    data = _series(
        [
            (100.0, {"sda": 10, "sdb": 5}),
            (101.0, {"sda": 20, "sdb": 6}),
            (102.0, {"sda": 30}),  # sdb gone: its series ends
            (103.0, {"sda": 4, "sdb": 1}),  # sda reset; sdb back: a new series
            (104.0, {"sda": 9, "sdb": 3}),
        ]
    )
    df, _ = _frame(data)
    r = df.filter(pl.col("metric") == "read_ios").sort("target", "ts")
    sda = r.filter(pl.col("target") == "sda")
    assert sda["value"].to_list() == [10, 10, 4, 5]
    assert sda["quality"].to_list() == ["ok", "ok", "reset", "ok"]
    sdb = r.filter(pl.col("target") == "sdb")
    assert sdb["value"].to_list() == [1, 2] and sdb["interval_s"].to_list() == [1.0, 1.0]
    assert (df["value"] >= 0).all()


def test_backwards_time_names_the_line():
    data = _series([(100.0, {"sda": 1}), (101.0, {"sda": 2}), (100.5, {"sda": 3})])
    e = _err(data)
    assert e.line == 5 and "after the previous" in e.expected
    df, chunks = _frame(data, strict=False)
    assert chunks[-1].skips.count >= 1 and df.height > 0


def test_cut_mid_block_and_truncated_line():
    data = _series([(100.0, {"sda": 1, "sdb": 1}), (101.0, {"sda": 2, "sdb": 2})])
    cut = data[: data.rindex(b"   8 0 sdb")]  # last snapshot lost its last device line
    e = _err(cut)
    assert e.line == 4 and "cut short" in e.expected
    df, chunks = _frame(cut, strict=False)
    assert df.height == 0 or df["ts"].max() < datetime(1970, 1, 1, 0, 1, 41)
    e = _err(data[:-4])
    assert e.line == 6 and "newline" in e.expected


def test_garbage_and_wrong_field_count():
    data = _series([(100.0, {"sda": 1}), (101.0, {"sda": 2})]).decode().splitlines()
    bad = data[:]
    bad.insert(3, "hello there")
    assert _err(("\n".join(bad) + "\n").encode()).line == 4
    bad = data[:]
    bad[3] = bad[3] + " 7 7"  # 16 fields
    e = _err(("\n".join(bad) + "\n").encode())
    assert e.line == 4 and "14, 18 or 20" in e.expected
    bad = data[:]
    bad[1] = bad[1].replace(" 5 ", " x ")
    assert _err(("\n".join(bad) + "\n").encode()).line == 2
    df, chunks = _frame(("\n".join(bad) + "\n").encode(), strict=False)
    assert chunks[-1].skips.count == 1


def test_duplicate_device_in_snapshot():
    data = b"100\n 8 0 sda 1 0 8 1 0 0 0 0 0 1 1\n 8 0 sda 1 0 8 1 0 0 0 0 0 1 1\n"
    assert _err(data).line == 3


def test_sniff():
    lo = DiskstatsLoader()
    assert lo.sniff(SERIES.read_bytes())
    assert not lo.sniff(JC_SNAPSHOT.read_bytes())  # no timestamp: name the kind
    assert not lo.sniff((DATA_DIR / "iostat" / "vm-sysstat12.6.1-x-t.iostat").read_bytes())
