"""The brw_stats loader on real Lustre dumps (data/brw_stats/, see its SOURCE.md).

``zfs-lustrefs-OST0000-series.txt`` is the real HPE osd-zfs dump followed by
two derived dumps (+60 s: every count c -> c + c//100 + (c > 0); +180 s:
c -> c//1000, a reset); ``ldiskfs-lctl-series.txt`` wraps the real
lustre-collector ldiskfs dump in ``obdfilter.testfs-OST0000.brw_stats=`` and
repeats it +30 s with c -> 2c + 1. The ``.lctl`` files are whole real
``lctl get_param`` outputs (one dump per target, empty histograms).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import iochar
from iochar import schema
from iochar.errors import InputError
from iochar.load import get_loader, sniff
from iochar.load.brw_stats import PAGE_SIZE, BrwStatsLoader

DATA = Path(__file__).resolve().parents[2] / "data" / "brw_stats"
ZFS = DATA / "zfs-lustrefs-OST0000-series.txt"
LDISKFS = DATA / "ldiskfs-lctl-series.txt"
EX8761 = DATA / "ex8761-lctl.lctl"
DDN214 = DATA / "lustre-2.14.0_ddn145-lctl.lctl"
T0 = 1510782606.797216394  # the real dump's snapshot_time


def _load(src, **kw) -> tuple[pl.DataFrame, dict, object]:
    frames, meta, skips = [], {}, None
    for p in BrwStatsLoader().parse(src, **kw):
        for name, tb in p.tables.items():
            assert name == "size_hist"
            frames.append(pl.from_arrow(schema.check_frame(name, tb)))  # contract types
        meta.update(p.meta)
        skips = p.skips
    return (pl.concat(frames) if frames else pl.DataFrame()), meta, skips


def test_disk_io_size_deltas_from_real_dump():
    df, meta, _ = _load(ZFS)
    dio = df.filter(pl.col("section") == "disk I/O size", pl.col("op") == "write")
    first = dio.filter(pl.col("quality") == "ok")
    assert first["interval_s"].unique().to_list() == [60.0]
    assert first["ts"][0] == pl.from_epoch(pl.Series([int(round((T0 + 60) * 1e6))]), "us")[0]
    got = dict(zip(first["size_bytes"].to_list(), first["count"].to_list(), strict=True))
    assert got[4 << 20] == 4059303 // 100 + 1  # 4M bin of the real dump
    assert got[1 << 20] == 58945 // 100 + 1
    assert got[8] == 0  # bins printed but empty stay 0
    assert min(got) == 8 and max(got) == 4 << 20
    # the third dump drops: a reset, counts since the restart, never negative
    reset = dio.filter(pl.col("quality") == "reset")
    assert reset["interval_s"].unique().to_list() == [120.0]
    assert dict(zip(reset["size_bytes"], reset["count"], strict=True))[4 << 20] == 4059
    assert (df["count"] >= 0).all()
    assert meta["brw_stats"]["zfs-lustrefs-OST0000-series"]["dumps"] == 3


def test_every_section_is_kept_with_its_unit():
    df, _, _ = _load(ZFS)
    assert set(df["section"]) == {
        "pages per bulk r/w",
        "discontiguous pages",
        "disk I/Os in flight",
        "I/O time (1/1000s)",
        "disk I/O size",
    }
    pages = df.filter(pl.col("section") == "pages per bulk r/w", pl.col("quality") == "ok")
    assert pages["size_bytes"].max() == 1024 * PAGE_SIZE  # "1K:" pages
    flight = df.filter(pl.col("section") == "disk I/Os in flight", pl.col("op") == "write")
    assert sorted(set(flight["size_bytes"])) == list(range(1, 11))  # counts, not bytes
    ld, _, _ = _load(LDISKFS)
    assert {"discontiguous blocks", "disk fragmented I/Os", "block maps msec"} <= set(ld["section"])


def test_lctl_wrapper_names_targets_and_skips_other_params():
    df, meta, _ = _load(LDISKFS)
    assert set(df["target"]) == {"testfs-OST0000"}
    w = df.filter(pl.col("section") == "disk I/O size", pl.col("op") == "write")
    assert dict(zip(w["size_bytes"], w["count"], strict=True))[1 << 20] == 33  # 32 -> 65
    for path in (EX8761, DDN214):
        assert sniff(path) == "brw_stats"
        df, meta, skips = _load(path)
        assert df.height == 0  # one dump per target, empty histograms: no interval
        assert set(meta["brw_stats"]) == {"MGS", "fs-MDT0000", "fs-OST0000", "fs-OST0001"}
        assert skips.count == 0
    assert "2.14+" in _load(DDN214)[1]["lustre_header"]


def test_single_dump_gives_no_interval():
    one = ZFS.read_bytes().split(b"snapshot_time", 2)
    df, meta, _ = _load(b"snapshot_time" + one[1])
    assert df.height == 0 and meta["brw_stats"]["brw_stats"]["dumps"] == 1


def _lines() -> list[bytes]:
    return ZFS.read_bytes().splitlines(keepends=True)


def test_cut_mid_histogram_is_an_input_error():
    lines = _lines()
    second = [i for i, ln in enumerate(lines) if ln.startswith(b"snapshot_time")][1]
    # drop the second dump's last histogram (disk I/O size) but keep the third dump
    title = next(i for i in range(second, len(lines)) if lines[i].startswith(b"disk I/O size"))
    third = [i for i, ln in enumerate(lines) if ln.startswith(b"snapshot_time")][2]
    cut = b"".join(lines[: title - 1] + lines[third:])
    with pytest.raises(InputError, match=r"<buffer>:\d+: expected every histogram") as ei:
        list(BrwStatsLoader().parse(cut))
    assert ei.value.line == second + 1  # the short dump's snapshot_time line
    # a header without its title at the end
    with pytest.raises(InputError, match="histogram title"):
        list(BrwStatsLoader().parse(b"".join(lines[:title])))
    # tolerant: the short dump is skipped and counted
    df, _, skips = _load(cut, strict=False)
    assert skips.count == 1 and df.height > 0


def test_times_must_increase_per_target():
    lines = _lines()
    third = [i for i, ln in enumerate(lines) if ln.startswith(b"snapshot_time")][2]
    bad = (
        lines[:third] + [b"snapshot_time:         1510782600.0 (secs.nsecs)\n"] + lines[third + 1 :]
    )
    with pytest.raises(InputError, match="snapshot_time after") as ei:
        list(BrwStatsLoader().parse(b"".join(bad)))
    assert ei.value.line == third + 1
    df, _, skips = _load(b"".join(bad), strict=False)
    assert skips.count == 1 and set(df["quality"]) == {"ok"}


def test_garbage_line_names_its_line():
    lines = _lines()
    bad = lines[:10] + [b"this is not brw_stats\n"] + lines[10:]
    with pytest.raises(InputError, match=r"<buffer>:11: expected a brw_stats line"):
        list(BrwStatsLoader().parse(b"".join(bad)))
    df, _, skips = _load(b"".join(bad), strict=False)
    assert skips.count == 1 and skips.kept[0].line == 11
    assert df.height == _load(ZFS)[0].height
    with pytest.raises(InputError, match="newline"):
        list(BrwStatsLoader().parse(ZFS.read_bytes()[:-3]))


def test_load_through_the_store():
    with iochar.connect(":memory:") as db:
        res = db.load(ZFS)
        assert res.kind == "brw_stats"
        n = db.sql(
            "SELECT sum(count) FROM size_hist WHERE section = 'disk I/O size' AND op = 'write' "
            "AND quality = 'ok'"
        ).fetchall()[0][0]
        assert n == sum(c + c // 100 + (c > 0) for c in _real_write_disk_io()) - sum(
            _real_write_disk_io()
        )
    assert get_loader("brw_stats").kind == "brw_stats"


def _real_write_disk_io() -> list[int]:
    text = ZFS.read_text().split("snapshot_time", 2)[1]
    sec = text.split("disk I/O size", 1)[1].splitlines()[1:]
    return [int(ln.split("|")[1].split()[0]) for ln in sec if ln.strip()]


@pytest.mark.parametrize(
    "path", [ZFS, LDISKFS, EX8761, DDN214, DATA / "osd-zfs" / "lustrefs-OST0000" / "brw_stats"]
)
@pytest.mark.parametrize("threads", [1, 3])
def test_block_boundaries_change_nothing(path, threads, monkeypatch):
    """Blocks of 97 bytes (boundaries inside dumps, histograms and lctl parameters),
    scanned ahead on threads: the same rows, in the same order, as one block."""
    import iochar.load.brw_stats as mod

    monkeypatch.setenv("IOCHAR_PARSE_THREADS", "1")
    whole, meta, _ = _load(path)
    monkeypatch.setattr(mod, "_BLOCK_BYTES", 97)
    monkeypatch.setenv("IOCHAR_PARSE_THREADS", str(threads))
    small, meta2, skips = _load(path)
    assert skips.count == 0 and meta2 == meta
    assert small.equals(whole)


def test_proc_path_names_the_target(tmp_path):
    src = DATA / "osd-zfs" / "lustrefs-OST0000" / "brw_stats"  # the real file, verbatim
    dest = tmp_path / "lustrefs-OST0000" / "brw_stats"
    dest.parent.mkdir()
    dest.write_bytes(src.read_bytes())
    _, meta, _ = _load(dest)
    assert set(meta["brw_stats"]) == {"lustrefs-OST0000"}


def _dump(t: float, rows: list[str]) -> str:
    head = f"snapshot_time:         {t:.9f} (secs.nsecs)\n\n"
    head += "                           read      |     write\n"
    head += "disk I/O size          ios   % cum % |  ios         % cum %\n"
    return head + "".join(f"{r}\n" for r in rows)


def test_counts_up_to_18_digits_are_exact_and_longer_is_garbage():
    big = [10**k + 7 for k in range(8, 18)]  # 9 to 18 digits
    first = [f"{1 << k}K:\t\t {c}  10  10   | {c // 3}   0   0" for k, c in enumerate(big)]
    second = [
        f"{1 << k}K:\t\t {c + k + 1}  10  10   | {c // 3 + 2 * k}   0   0"
        for k, c in enumerate(big)
    ]
    df, _, _ = _load((_dump(100, first) + _dump(160, second)).encode())
    got = {(op, s): c for op, s, c in df.select("op", "size_bytes", "count").iter_rows()}
    for k in range(len(big)):
        assert got["read", (1 << k) * 1024] == k + 1
        assert got["write", (1 << k) * 1024] == 2 * k
    nineteen = _dump(100, ["4K:\t\t 1234567890123456789  10  10   | 1   0   0"])
    with pytest.raises(InputError, match=r"<buffer>:5: expected a brw_stats line"):
        list(BrwStatsLoader().parse(nineteen.encode()))


def test_a_bin_new_in_a_later_dump_counts_from_zero():
    rows = ["4K:\t\t 5  50  50   | 7   0   0", "8K:\t\t 5  50 100   | 9   0   0"]
    later = [rows[0].replace(" 5 ", " 6 ", 1), rows[1], "16K:\t\t 3  10 100   | 4   0   0"]
    df, _, _ = _load((_dump(100, rows) + _dump(130, later)).encode())
    got = {(op, s): c for op, s, c in df.select("op", "size_bytes", "count").iter_rows()}
    assert got == {
        ("read", 4096): 1,
        ("write", 4096): 0,
        ("read", 8192): 0,
        ("write", 8192): 0,
        ("read", 16384): 3,
        ("write", 16384): 4,
    }
    assert df["size_bytes"].to_list() == [4096, 4096, 8192, 8192, 16384, 16384]


def test_restart_inside_a_gap_keeps_both_facts():
    def rows(n):
        return [f"4K:\t\t {n}  50  50   | {2 * n}   0   0"]

    # dumps every 60 s, an outage of 600 s, then the server restarted (counts fell)
    text = "".join(_dump(t, rows(n)) for t, n in [(0, 10), (60, 20), (120, 30), (180, 40)])
    text += _dump(780, rows(5)) + _dump(840, rows(15)) + _dump(1500, rows(25))
    df, _, _ = _load(text.encode())
    read = df.filter(pl.col("op") == "read").sort("ts")
    assert read["quality"].to_list() == ["ok", "ok", "ok", "gap_reset", "ok", "gap"]
    assert read["count"].to_list() == [10, 10, 10, 5, 10, 10]  # since the restart: 5
    assert read["interval_s"].to_list() == [60.0, 60.0, 60.0, 600.0, 60.0, 660.0]


@pytest.mark.parametrize("chunk_rows", [1, 7, 100, 1_000_000])
def test_chunks_hold_chunk_rows_and_the_rows_of_one_chunk(chunk_rows):
    """Rows built chunk by chunk are those of one chunk, in order, chunk_rows per table.

    Two targets (the ldiskfs series, then the same series as a second OST) and the
    ZFS series with its reset interval: each target's rows come in tables of
    ``chunk_rows`` rows, its last one fewer, and together they are the rows of a
    one-chunk parse, row for row (deltas, resets and quality included).
    """
    two = LDISKFS.read_bytes()
    two += two.replace(b"testfs-OST0000", b"testfs-OST0001")
    for src in (two, ZFS):
        whole, _, _ = _load(src)
        assert whole.height > 0
        tables = [
            t for p in BrwStatsLoader().parse(src, chunk_rows=chunk_rows) for t in p.tables.values()
        ]
        sizes = [t.num_rows for t in tables]
        per_target = whole.group_by("target", maintain_order=True).len()["len"].to_list()
        assert len(per_target) == (2 if src is two else 1)
        expected = [min(chunk_rows, n - lo) for n in per_target for lo in range(0, n, chunk_rows)]
        assert sizes == expected
        got = pl.concat([pl.from_arrow(schema.check_frame("size_hist", t)) for t in tables])
        assert got.equals(whole)
    assert (whole["quality"] == "reset").any()  # the ZFS series' third dump


@pytest.mark.parametrize("path", [ZFS, LDISKFS, EX8761, DDN214])
def test_bin_rows_by_shape_are_the_lines_the_row_expression_matches(path):
    """Bin rows found once per line shape (digits as '0') are exactly the lines that
    match the bin-row expression one by one (the module docstring's rule), on the real
    dumps plus edge lines: a K label, ``::`` and ``||`` runs, tabs and CR, an 18- and a
    19-digit count, a missing column, letters among the digits."""
    import re

    from iochar.load.brw_stats import _RE_BIN_ROW, _Scan

    extra = [
        b"1K:\t\t         0   0 100   | 4059303  94 100",
        b"8::  1 2 3 || 4 5 6\r",
        b"  16: 123456789012345678 1 2 | 3 4 5",
        b"16: 1234567890123456789 1 2 | 3 4 5",
        b"16: 1 2 | 3 4 5",
        b"16: 1 2 3 | 4 5 6 7",
        b"16: 1 2x 3 | 4 5 6",
        b"16:1 2 3 | 4 5 6",
        b"",
    ]
    raw = path.read_bytes() + b"\n".join(extra) + b"\n"
    rx = re.compile(_RE_BIN_ROW.replace(r"\z", r"\Z").encode())
    lines = [ln + b"\n" for ln in raw.split(b"\n")[:-1]]
    expect = [i for i, ln in enumerate(lines) if rx.match(ln)]
    sc = _Scan(raw)
    assert sc.bins.tolist() == expect
    if path in (ZFS, LDISKFS):  # the .lctl dumps' histograms are empty
        assert len(expect) > 50
    # the shapes of the edge lines above decide both ways
    n0 = len(lines) - len(extra)
    assert [i - n0 for i in expect if i >= n0] == [0, 1, 2]
    # numbers read where the shape's runs are: label (K = 1024), first count of each side
    got = list(zip(sc.size.tolist(), sc.read.tolist(), sc.write.tolist(), strict=True))
    assert got[-3:] == [(1024, 0, 4059303), (8, 1, 4), (16, 123456789012345678, 3)]
    unit = {b"": 1, b"K": 1 << 10, b"M": 1 << 20, b"G": 1 << 30}
    nums = re.compile(rb"\s*(\d+)([KMG]?)[KMG]*:+\s+(\d+)[^|]*\|+\s*(\d+)")
    want = []
    for i in expect:
        m = nums.match(lines[i])
        want.append((int(m[1]) * unit[m[2]], int(m[3]), int(m[4])))
    assert got == want
