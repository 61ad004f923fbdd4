"""The snapshot loader on real listings (data/snapshot/, see its SOURCE.md).

Fixtures: two ``find -printf`` listings of a copy of the tornado package taken
before and after known changes, a GNU ``stat`` sample from jc (Ubuntu 18.04,
/bin), and the walker's Parquet of the "after" tree. Live tests walk a fresh
temporary tree and compare the walker with GNU find.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import iochar
from iochar import load, schema
from iochar.capture.walk import snapshot_dir
from iochar.errors import InputError
from iochar.load.snapshot import FIND_PRINTF, SnapshotLoader, format_header

DATA = Path(__file__).resolve().parents[2] / "data" / "snapshot"
BEFORE, AFTER = DATA / "tornado-before.find", DATA / "tornado-after.find"
STAT = DATA / "ubuntu-18.04-bin.stat"
WALKED = DATA / "tornado-after.parquet"
ROOT = "/tmp/iochar-snap/tornado"
requires_find = pytest.mark.skipif(shutil.which("find") is None, reason="GNU find missing")

LINE = "f\t10\t1700000000.5000000000\t1700000000.2500000000\t1700000000.0000000000\t0\t/r/a\n"


def _files(store, sid=None):
    q = "SELECT * FROM snapshot_files" + (" WHERE snapshot_id = $s" if sid is not None else "")
    return store.sql(q + " ORDER BY path", {"s": sid} if sid is not None else None).df()


def test_find_fixtures_facts(store):
    store.load(BEFORE)
    store.load(AFTER)
    snaps = store.sql("SELECT * FROM snapshots ORDER BY snapshot_id").df()
    assert list(snaps.root) == [ROOT, ROOT]
    assert snaps.taken_at[0] < snaps.taken_at[1]
    counts = store.sql(
        "SELECT snapshot_id, count(*), sum(size) FROM snapshot_files GROUP BY 1 ORDER BY 1"
    ).fetchall()
    assert [c[1] for c in counts] == [172, 230]
    after = _files(store, 1)
    big = after[after.path == f"{ROOT}/platform/big.bin"]
    assert int(big["size"].iloc[0]) == 2 * 1024 * 1024
    assert (after.path.str.startswith(f"{ROOT}/results/")).sum() == 60
    # only regular files: the directories of the listing are not rows
    assert not (after.path == ROOT).any()


def test_stat_fixture_facts(store):
    res = store.load(STAT)
    assert res.kind == "snapshot" and res.rows["snapshot_files"] == 117
    assert res.meta["entries"] == {"regular file": 117, "symbolic link": 23}
    df = _files(store)
    bash = df[df.path == "/bin/bash"].iloc[0]
    assert bash["size"] == 1113504 and bash["uid"] == 0
    # Access: 2019-11-14 08:18:03.509681766 +0000, rounded to the microsecond
    assert bash["atime"] == dt.datetime(2019, 11, 14, 8, 18, 3, 509682)
    assert bash["mtime"] == dt.datetime(2019, 6, 6, 22, 28, 15)
    assert not df.path.str.contains(" -> ").any()
    assert store.sql("SELECT root FROM snapshots").fetchall() == [("/bin",)]


def test_stat_offsets_and_quotes():
    text = (
        b"  File: '/d/x y'\n  Size: 5         \tBlocks: 8          IO Block: 4096   regular file\n"
        b"Device: 802h/2050d\tInode: 1      Links: 1\n"
        b"Access: (0644/-rw-r--r--)  Uid: ( 1000/    user)   Gid: ( 1000/    user)\n"
        b"Access: 2020-01-01 02:00:00.000000000 +0200\n"
        b"Modify: 2020-01-01 00:00:00.000000000 -0130\n"
        b"Change: 2020-01-01 00:00:00 +0000\n"
    )
    chunks = list(SnapshotLoader().parse(text))
    files = chunks[0].tables["snapshot_files"].to_pylist()[0]
    assert files["path"] == "/d/x y" and files["uid"] == 1000
    assert files["atime"] == dt.datetime(2020, 1, 1, 0, 0)
    assert files["mtime"] == dt.datetime(2020, 1, 1, 1, 30)


def test_walker_fixture_matches_find_listing(store):
    store.load(AFTER)
    store.load(WALKED)
    a, w = _files(store, 0), _files(store, 1)
    assert list(a.path) == list(w.path)
    assert list(a["size"]) == list(w["size"])
    # same tree, mtimes unchanged since the listing; find's decimal seconds go
    # through float64, so they may land 1 us off the walker's rounded nanoseconds
    assert (a.mtime - w.mtime).abs().max() <= dt.timedelta(microseconds=1)
    snap = store.sql("SELECT root, taken_at FROM snapshots WHERE snapshot_id = 1").fetchall()
    assert snap[0][0] == ROOT and snap[0][1] is not None


def test_header_is_optional_and_root_from_first_dir():
    body = "d\t4096\t1.0\t1.0\t1.0\t0\t/r\n" + LINE
    chunks = list(load.parse(body.encode()))
    snaps = chunks[-1].tables["snapshots"].to_pylist()[0]
    assert snaps["root"] == "/r" and snaps["taken_at"] is None
    files = chunks[0].tables["snapshot_files"].to_pylist()
    assert files == [
        {
            "snapshot_id": 0,
            "path": "/r/a",
            "size": 10,
            "atime": dt.datetime(2023, 11, 14, 22, 13, 20, 500000),
            "mtime": dt.datetime(2023, 11, 14, 22, 13, 20, 250000),
            "ctime": dt.datetime(2023, 11, 14, 22, 13, 20),
            "uid": 0,
        }
    ]
    head = format_header("/r", dt.datetime(2024, 1, 2, 3, 4, 5)) + "\n"
    chunks = list(load.parse((head + LINE).encode()))
    snaps = chunks[-1].tables["snapshots"].to_pylist()[0]
    assert snaps == {"snapshot_id": 0, "taken_at": dt.datetime(2024, 1, 2, 3, 4, 5), "root": "/r"}


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("garbage here\n", "7 tab-separated fields"),
        ("f\t10\t1.0\t1.0\t1.0\t0\n", "7 tab-separated fields"),
        ("f\tten\t1.0\t1.0\t1.0\t0\t/r/b\n", "numbers"),
        ("f\t-3\t1.0\t1.0\t1.0\t0\t/r/b\n", "size"),
        ("x\t3\t1.0\t1.0\t1.0\t0\t/r/b\n", "type"),
        ("\n", "7 tab-separated fields"),
        ("f\t99999999999999999999\t1.0\t1.0\t1.0\t0\t/r/b\n", "size"),
        ("f\t3\t1.0\tnan\t1.0\t0\t/r/b\n", "mtime"),
        ("f\t3\t1.0\t1.0\t1.0\t0\t\n", "path"),
    ],
)
def test_bad_lines_name_their_line(bad, why, store):
    head = format_header("/r", None) + "\n"
    text = (head + LINE * 3 + bad + LINE).encode()
    with pytest.raises(InputError) as err:
        store.load(text, kind="snapshot")
    assert err.value.line == 5, str(err.value)
    assert why in str(err.value)
    assert store.row_counts()["snapshot_files"] == 0
    with pytest.warns(iochar.errors.SkippedRecordsWarning):
        res = store.load(text, kind="snapshot", strict=False)
    assert res.skipped == 1 and res.skips[0].line == 5
    assert res.rows["snapshot_files"] == 4


def test_truncated_last_line(store):
    text = (LINE * 3 + LINE[:20]).encode()
    with pytest.raises(InputError, match="newline") as err:
        store.load(text, kind="snapshot")
    assert err.value.line == 4
    with pytest.warns(iochar.errors.SkippedRecordsWarning):
        res = store.load(text, kind="snapshot", strict=False)
    assert res.rows["snapshot_files"] == 3 and res.skipped == 1


def test_bad_stat_line_names_its_line():
    raw = STAT.read_bytes().split(b"\n")
    raw[12] = b"Modify: yesterday"
    with pytest.raises(InputError) as err:
        list(load.parse(b"\n".join(raw), "snapshot"))
    assert err.value.line == 13
    chunks = list(load.parse(b"\n".join(raw), "snapshot", strict=False))
    assert chunks[-1].skips.count == 1
    assert sum(c.tables.get("snapshot_files", []).__len__() for c in chunks) == 116


def test_chunked_equals_unchunked(store):
    one = [c.tables for c in load.parse(AFTER, "snapshot", chunk_rows=10_000_000)]
    many = [c.tables for c in load.parse(AFTER, "snapshot", chunk_rows=7)]
    assert len(many) > len(one)

    def rows(chunks):
        out = []
        for t in chunks:
            if "snapshot_files" in t:
                out += t["snapshot_files"].to_pylist()
        return out

    assert rows(one) == rows(many)
    for t in many:
        for name, frame in t.items():
            schema.check_frame(name, frame)


def test_cut_parquet_is_input_error(tmp_path):
    raw = WALKED.read_bytes()
    bad = tmp_path / "cut.parquet"
    bad.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(InputError):
        list(load.parse(bad, "snapshot"))


def _make_tree(root: Path) -> None:
    (root / "a" / "b").mkdir(parents=True)
    (root / "c").mkdir()
    for i in range(50):
        (root / ("a" if i % 2 else "c") / f"f{i}.dat").write_bytes(b"x" * (i * 37))
    (root / "a" / "b" / "deep.bin").write_bytes(os.urandom(5000))
    (root / "top.txt").write_text("hello\n")
    os.symlink(root / "top.txt", root / "link")
    os.utime(root / "top.txt", ns=(1_600_000_000_123_456_789, 1_500_000_000_987_654_321))


@requires_find
def test_live_walker_matches_find(tmp_path, store):
    tree = tmp_path / "tree"
    _make_tree(tree)
    out = tmp_path / "walk.parquet"
    assert snapshot_dir(tree, out) == 52
    listing = subprocess.run(
        ["find", str(tree), "-printf", FIND_PRINTF.replace(r"\t", "\t").replace(r"\n", "\n")],
        check=True,
        capture_output=True,
    ).stdout
    (tmp_path / "tree.find").write_bytes(listing)
    store.load(out)
    store.load(tmp_path / "tree.find")
    w, f = _files(store, 0), _files(store, 1)
    assert len(w) == 52 and list(w.path) == list(f.path)
    assert list(w["size"]) == list(f["size"])
    diff = (w.mtime - f.mtime).abs().max()
    assert diff <= dt.timedelta(microseconds=1)
    top = w[w.path.str.endswith("top.txt")].iloc[0]
    assert top.mtime == dt.datetime(2017, 7, 14, 2, 40, 0, 987654)
    meta = pq.read_metadata(out).metadata
    assert meta[b"iochar.root"].decode() == str(tree)
    roots = [r[0] for r in store.sql("SELECT root FROM snapshots ORDER BY 1").fetchall()]
    assert roots == [str(tree), str(tree)]


def test_walker_follows_symlinks_once(tmp_path):
    tree = tmp_path / "t"
    (tree / "d").mkdir(parents=True)
    (tree / "d" / "x").write_bytes(b"12345")
    os.symlink(tree, tree / "d" / "loop")
    os.symlink(tree / "d" / "x", tree / "lx")
    assert snapshot_dir(tree, tmp_path / "n.parquet") == 1
    assert snapshot_dir(tree, tmp_path / "y.parquet", follow_symlinks=True) == 2


def test_cli_snapshot(tmp_path, capsys):
    from iochar.cli import main

    tree = tmp_path / "tree"
    _make_tree(tree)
    out = tmp_path / "s.parquet"
    assert main(["snapshot", str(tree), "-o", str(out)]) == 0
    assert "wrote 52 files" in capsys.readouterr().out
    assert main(["snapshot", str(tmp_path / "nope"), "-o", str(out)]) == 2


def test_bad_line_far_into_a_multi_block_file(store):
    lines = [LINE] * 400
    lines[349] = "f\t1\t1.0\t1.0\t1.0\troot\t/r/b\n"
    with pytest.raises(InputError) as err:
        list(load.parse("".join(lines).encode(), "snapshot", chunk_rows=1))
    assert err.value.line == 350
    chunks = list(load.parse("".join(lines).encode(), "snapshot", chunk_rows=1, strict=False))
    assert len(chunks) > 3 and chunks[-1].skips.count == 1
    assert sum(len(c.tables.get("snapshot_files", [])) for c in chunks) == 399


def test_compressed_listing(tmp_path, store):
    import gzip

    gz = tmp_path / "before.find.gz"
    gz.write_bytes(gzip.compress(BEFORE.read_bytes()))
    res = store.load(gz)
    assert res.kind == "snapshot" and res.rows["snapshot_files"] == 172


@pytest.mark.skipif(shutil.which("stat") is None, reason="GNU stat missing")
def test_live_stat_matches_walker(tmp_path, store):
    tree = tmp_path / "tree"
    _make_tree(tree)
    (tree / "empty").write_bytes(b"")
    names = sorted(str(p) for p in tree.rglob("*"))
    out = subprocess.run(["stat", *names], check=True, capture_output=True).stdout
    (tmp_path / "tree.stat").write_bytes(out)
    snapshot_dir(tree, tmp_path / "w.parquet")
    store.load(tmp_path / "w.parquet")
    res = store.load(tmp_path / "tree.stat")
    assert res.meta["entries"]["regular empty file"] == 2  # f0.dat and empty
    w, s = _files(store, 0), _files(store, 1)
    assert list(w.path) == list(s.path) and len(s) == 53
    assert list(w["size"]) == list(s["size"]) and list(w.uid) == list(s.uid)
    assert (w.mtime == s.mtime).all() and (w.ctime == s.ctime).all()
