"""iostat loader: real sysstat output (four layouts, text and JSON) and its errors."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from iochar import load, schema
from iochar.errors import InputError
from iochar.load.iostat import COLUMN_MAP, IostatLoader
from tests.conftest import DATA_DIR

IOSTAT = DATA_DIR / "iostat"
VM_TEXT = IOSTAT / "vm-sysstat12.6.1-x-t.iostat"
VM_JSON = IOSTAT / "vm-sysstat12.6.1-x-t.json"
RHEL6_MB = IOSTAT / "rhel6-sysstat9-x-t-m.iostat"
RHEL6_SECT = IOSTAT / "rhel6-sysstat9-x-t-sectors.iostat"
RHEL6_NOCPU = IOSTAT / "rhel6-sysstat9-x-t-d.iostat"
RHEL8 = IOSTAT / "rhel8-sysstat11.7.3-x-t-m.iostat"
ALL = [VM_TEXT, VM_JSON, RHEL6_MB, RHEL6_SECT, RHEL6_NOCPU, RHEL8]


def _frame(src, strict=True, chunk_rows=1_000_000) -> tuple[pl.DataFrame, list]:
    chunks = list(load.parse(src, "iostat", strict=strict, chunk_rows=chunk_rows))
    tbs = [schema.check_frame("counters", c.tables["counters"]) for c in chunks if c.tables]
    df = pl.from_arrow(pa.concat_tables(tbs)) if tbs else pl.DataFrame()
    return df, chunks


def _get(df: pl.DataFrame, target: str, metric: str, ts: str) -> float:
    row = df.filter(
        (pl.col("target") == target)
        & (pl.col("metric") == metric)
        & (pl.col("ts") == datetime.fromisoformat(ts))
    )
    assert row.height == 1, row
    return row["value"][0]


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_real_fixtures_load_and_follow_contract(path):
    df, chunks = _frame(path)
    assert df.height > 0
    assert set(df["quality"].unique()) == {"ok"}
    assert (df["interval_s"] > 0).all()
    assert chunks[-1].meta["skipped_first_reports"] == 1
    assert load.sniff(path) == "iostat"


def test_sysstat12_text_facts():
    """vda at 02:21:43: r/s 803.00, rkB/s 409612.00, %util 58.80, aqu-sz 1.08, r_await 0.70."""
    df, chunks = _frame(VM_TEXT)
    ts = "2026-11-23 02:21:43"
    assert _get(df, "vda", "read_bytes", ts) == pytest.approx(409612.00 * 1024 * 1.0)
    assert _get(df, "vda", "read_ios", ts) == pytest.approx(803.0)
    assert _get(df, "vda", "write_bytes", ts) == pytest.approx(408600.00 * 1024)
    assert _get(df, "vda", "discard_bytes", ts) == pytest.approx(204836.00 * 1024)
    assert _get(df, "vda", "busy_s", ts) == pytest.approx(0.588)
    assert _get(df, "vda", "queue_depth_avg", ts) == pytest.approx(1.08)
    assert _get(df, "vda", "read_await_s", ts) == pytest.approx(0.0007)
    assert _get(df, "vda", "read_request_size_avg_bytes", ts) == pytest.approx(510.10 * 1024)
    assert _get(df, "cpu", "iowait_pct", ts) == pytest.approx(26.53)
    # the first report (since boot, 02:21:42) yields nothing; 4 intervals remain
    assert df["ts"].min() == datetime(2026, 11, 23, 2, 21, 43)
    assert df.filter(pl.col("metric") == "read_bytes").height == 4
    meta = chunks[-1].meta
    assert meta["host"] == "vm" and meta["ncpu"] == 2 and meta["os_release"] == "6.18.44-fc-v595"


def test_json_matches_its_own_numbers_and_the_text_metrics():
    js, chunks = _frame(VM_JSON)
    tx, _ = _frame(VM_TEXT)
    ts = "2026-11-23 02:21:43"
    assert _get(js, "vda", "read_bytes", ts) == pytest.approx(409612.00 * 1024)
    assert _get(js, "vda", "write_bytes", ts) == pytest.approx(409624.00 * 1024)
    assert _get(js, "vda", "busy_s", ts) == pytest.approx(0.588)
    assert _get(js, "vda", "read_merged_pct", "2026-11-23 02:21:45") == pytest.approx(3.47)
    assert set(js["metric"].unique()) == set(tx["metric"].unique())
    assert chunks[-1].meta["format"] == "json"


def test_old_layout_megabytes_and_pm_timestamps():
    """sysstat 9, -m: 02:10:51 PM is 14:10:51; rMB/s × 2**20 × interval."""
    df, _ = _frame(RHEL6_MB)
    raw = RHEL6_MB.read_text().splitlines()
    i = raw.index("06/13/2018 02:11:05 PM")
    sdb = next(ln for ln in raw[i:] if ln.startswith("sdb")).split()
    ts = "2018-06-13 14:11:05"
    assert _get(df, "sdb", "read_bytes", ts) == pytest.approx(float(sdb[5]) * 1048576)
    assert _get(df, "sdb", "write_merges", ts) == pytest.approx(float(sdb[2]))
    assert _get(df, "sdb", "busy_s", ts) == pytest.approx(float(sdb[13]) / 100)
    assert _get(df, "sdb", "request_size_avg_bytes", ts) == pytest.approx(float(sdb[7]) * 512)
    assert df["target"].n_unique() == 12  # 11 disks + cpu


def test_sectors_and_no_cpu_variants():
    df, _ = _frame(RHEL6_SECT)
    raw = RHEL6_SECT.read_text().splitlines()
    i = raw.index("06/14/2018 06:08:38 PM")
    sdb = next(ln for ln in raw[i:] if ln.startswith("sdb")).split()
    assert _get(df, "sdb", "read_bytes", "2018-06-14 18:08:38") == pytest.approx(
        float(sdb[5]) * 512
    )
    nocpu, _ = _frame(RHEL6_NOCPU)
    assert "cpu" not in nocpu["target"].to_list()


def test_new_layout_11_7():
    df, _ = _frame(RHEL8)
    # 03:35:23: w/s 577.00, wMB/s 72.00, wareq-sz 127.79 (kB), %util 8.80
    ts = "2021-09-26 03:35:23"
    assert _get(df, "sda", "write_ios", ts) == pytest.approx(577.0)
    assert _get(df, "sda", "write_bytes", ts) == pytest.approx(72.0 * 1048576)
    assert _get(df, "sda", "write_request_size_avg_bytes", ts) == pytest.approx(127.79 * 1024)
    assert _get(df, "sda", "busy_s", ts) == pytest.approx(0.088)


def test_blocks_carry_state():
    """Tiny blocks (many boundaries mid-report) give the same rows as one block."""
    raw = RHEL6_MB.read_bytes() * 3
    big, _ = _frame(raw, chunk_rows=10_000_000)
    small, chunks = _frame(raw, chunk_rows=1)
    assert len(chunks) > 3
    key = ["target", "metric", "ts", "value"]
    assert big.sort(key).equals(small.sort(key))
    assert big.height == 3 * _frame(RHEL6_MB)[0].height  # each copy is its own run


def test_interval_from_timestamps():
    text = VM_TEXT.read_text().replace("11/23/26 02:21:45", "11/23/26 02:21:47")
    text = text.replace("11/23/26 02:21:46", "11/23/26 02:21:48")
    df, _ = _frame(text.encode())
    rb = df.filter(pl.col("metric") == "read_bytes").sort("ts")
    assert rb["interval_s"].to_list() == [1.0, 1.0, 3.0, 1.0]
    assert rb["value"][2] == pytest.approx(412504.00 * 1024 * 3)


def test_iso_timestamps_with_offset_become_utc():
    text = VM_TEXT.read_text()
    for k in range(42, 47):
        text = text.replace(f"11/23/26 02:21:{k}", f"2026-11-23T04:21:{k}+0200")
    df, _ = _frame(text.encode())
    assert df["ts"].min() == datetime(2026, 11, 23, 2, 21, 43)


def _lines(path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


def _err(data: bytes) -> InputError:
    with pytest.raises(InputError) as ei:
        list(load.parse(data, "iostat"))
    assert ei.value.kind == "iostat"
    return ei.value


def _lineno(lines: list[str], prefix: str, nth: int = 0) -> int:
    return [i for i, ln in enumerate(lines) if ln.startswith(prefix)][nth] + 1


def test_truncated_last_line():
    raw = VM_TEXT.read_bytes().rstrip(b"\n")[:-3]
    e = _err(raw)
    assert e.line == raw.count(b"\n") + 1 and "newline" in e.expected
    df, chunks = _frame(raw, strict=False)
    assert chunks[-1].skips.count == 1 and df.height > 0


def test_garbage_line_names_its_line():
    lines = _lines(RHEL6_MB)
    at = _lineno(lines, "sdc", 3)
    lines.insert(at, "this is not iostat output at all\n")
    e = _err("".join(lines).encode())
    assert e.line == at + 1
    df, chunks = _frame("".join(lines).encode(), strict=False)
    assert chunks[-1].skips.count == 1 and chunks[-1].skips.kept[0].line == at + 1


def test_wrong_field_count_and_bad_number():
    lines = _lines(RHEL8)
    at = _lineno(lines, "sda", 2)
    lines[at - 1] = lines[at - 1].rsplit(" ", 2)[0] + "\n"
    e = _err("".join(lines).encode())
    assert e.line == at and "16 fields" in e.expected
    lines = _lines(RHEL8)
    lines[at - 1] = lines[at - 1].replace("0.00", "x.yz", 1)
    e = _err("".join(lines).encode())
    assert e.line == at and "numbers" in e.expected


def test_backwards_time_and_bad_timestamp():
    lines = _lines(VM_TEXT)
    at = _lineno(lines, "11/23/26 02:21:45")
    lines[at - 1] = "11/23/26 02:21:41\n"
    e = _err("".join(lines).encode())
    assert e.line == at and "after the previous" in e.expected
    lines[at - 1] = "11/23/26 99:99:99\n"
    assert _err("".join(lines).encode()).line == at


def test_missing_banner_or_header():
    lines = _lines(VM_TEXT)
    assert _err("".join(lines[1:]).encode()).line == 2  # first non-blank line
    no_hdr = [ln for ln in lines if not ln.startswith("Device")]
    e = _err("".join(no_hdr).encode())
    assert "Device" in e.expected


def test_column_map_units():
    assert COLUMN_MAP["rkB/s"] == ("read_bytes", 1024.0, True)
    assert COLUMN_MAP["%util"] == ("busy_s", 0.01, True)
    assert not COLUMN_MAP["aqu-sz"][2]
    assert all(
        m.endswith(("_s", "_bytes", "_ios", "_merges", "_avg", "_pct", "ios"))
        for m, _, _ in COLUMN_MAP.values()
    )


def test_sniffer_rejects_other_text():
    lo = IostatLoader()
    assert not lo.sniff(b"op,t_start\nread,0\n")
    assert not lo.sniff(b"1795400502.05\n   7  0 loop0 0 0 0 0 0 0 0 0 0 0 0\n")
    assert lo.sniff(VM_JSON.read_bytes()[:4096])
    assert np.isfinite(1.0)


def test_json_cut_or_without_final_newline():
    raw = VM_JSON.read_bytes()
    assert _err(raw[:-1]).line == raw.count(b"\n")  # valid JSON, but cut before its newline
    assert "JSON" in _err(raw[: len(raw) // 2] + b"\n").expected
    df, chunks = _frame(raw[:-1], strict=False)
    assert chunks[-1].skips.count == 1 and df.height > 0


def test_two_decimal_numbers_keep_their_digit_by_digit_value():
    """1.57 is decoded as 1 + 57/100 (one bit off float("1.57")), as it always was."""
    assert 1 + 57 / 100 != float("1.57")  # the case that matters
    lines = _lines(RHEL6_MB)
    at = _lineno(lines, "06/13/2018 02:11:05 PM")
    i = next(k for k in range(at, len(lines)) if lines[k].startswith("sdb"))
    fields = lines[i].split()
    fields[3], fields[10], fields[11] = "1.57", "1.57", "7.94"  # r/s, r_await, w_await
    lines[i] = " ".join(fields) + "\n"
    df, _ = _frame("".join(lines).encode())
    ts = "2018-06-13 14:11:05"
    assert _get(df, "sdb", "read_ios", ts) == 1 + 57 / 100  # × 1.0 s
    assert _get(df, "sdb", "read_await_s", ts) == (1 + 57 / 100) * 0.001
    assert _get(df, "sdb", "write_await_s", ts) == (7 + 94 / 100) * 0.001


def test_bad_numbers_deep_in_a_large_block():
    """Garbage among many good numbers: found on its line; the rest still loads."""
    lines = _lines(RHEL6_MB) * 40  # ~200,000 numbers in one block
    at = [i for i, ln in enumerate(lines) if ln.startswith("sdc")][1000]
    clean, _ = _frame("".join(lines).encode())
    for bad in ("x.yz", "inf", "1e999", "nan", "1_0", "."):
        cut = lines[:at] + [lines[at].replace("0.00", bad, 1)] + lines[at + 1 :]
        e = _err("".join(cut).encode())
        assert e.line == at + 1 and "numbers" in e.expected
        df, chunks = _frame("".join(cut).encode(), strict=False)
        assert chunks[-1].skips.count == 1 and chunks[-1].skips.kept[0].line == at + 1
        assert df.height == clean.height - 13  # one device line of 13 metrics


def test_timestamps_decoded_alike_by_numpy_and_polars():
    """A timestamp with trailing blanks takes the polars path: same instants."""
    text = VM_TEXT.read_text()
    odd = text.replace("11/23/26 02:21:44\n", "11/23/26 02:21:44  \n")
    assert odd != text
    for chunk_rows in (1, 1_000_000):
        a, _ = _frame(text.encode(), chunk_rows=chunk_rows)
        b, _ = _frame(odd.encode(), chunk_rows=chunk_rows)
        key = ["target", "metric", "ts"]
        assert a.sort(key).equals(b.sort(key))


def test_device_names_short_and_long():
    raw = RHEL6_MB.read_bytes()
    renamed = raw.replace(b"\nsdb ", b"\nmapper-vg-root ").replace(b"\nsda ", b"\nnvme0n1 ")
    a, _ = _frame(raw)
    b, _ = _frame(renamed)
    names = {"sdb": "mapper-vg-root", "sda": "nvme0n1"}
    a = a.with_columns(pl.col("target").cast(pl.String).replace(names))
    key = ["target", "metric", "ts"]
    assert a.sort(key).equals(b.with_columns(pl.col("target").cast(pl.String)).sort(key))
