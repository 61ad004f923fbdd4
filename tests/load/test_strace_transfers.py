"""Bytes that move without read/write, and metadata calls, in real strace output.

Fixtures: ``data/strace/transfers/`` (see data/strace/SOURCE.md): GNU cp, which
copies with ``copy_file_range``, and ``src/atomic_ckpt.c``, a write-temp-then-
rename checkpoint writer whose I/O is known. Live tests run the real tools
under strace with the flags of ``data/strace/capture.sh`` and compare the bytes
the loader counts with the sizes of the files the programs made.

The rules (man 2 copy_file_range, sendfile, splice, tee; strace's decoders):
a transfer between two fds is a read row on the in-fd's file and a write row
on the out-fd's file, each of the returned byte count; a side with a NULL (or
no) offset pointer moves at its fd's position and advances it, a side with
``[N]`` moves at N and leaves the position alone; rename/link give a row per
path (old, new); ``mmap`` of a file is an ``other`` row on that file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from iochar import schema
from iochar.load.strace import TRANSFER_OPS, StraceLoader

try:
    from conftest import DATA_DIR, requires_strace
except ImportError:  # properties/conftest.py can shadow the name (see test_darshan.py)
    DATA_DIR = Path(__file__).resolve().parents[2] / "data"
    requires_strace = pytest.mark.skipif(
        shutil.which("strace") is None, reason="strace is not installed"
    )

XFER = DATA_DIR / "strace" / "transfers"
CP = XFER / "cp.strace"
ATOMIC = XFER / "atomic_ckpt.strace"
WORK = "/tmp/iochar-strace"  # where capture_transfers.sh ran the programs
INPUT_BYTES = 300_000  # head -c 300000 /dev/zero > input.dat
CKPT_BYTES = 3 * 16384  # atomic_ckpt.c: BLOCKS x BLOCK per checkpoint
CKPTS = 4  # capture_transfers.sh: ./atomic_ckpt input.dat 4
FLAGS = ["-f", "-tt", "-T", "-y", "-s", "16"]  # data/strace/capture.sh


def parse(src, **kwargs):
    """ops (with each file's path) and the last meta of one parse, tables checked."""
    frames: dict[str, list[pl.DataFrame]] = {}
    meta: dict = {}
    for chunk in StraceLoader().parse(src, **kwargs):
        meta = chunk.meta
        for table, frame in chunk.tables.items():
            frames.setdefault(table, []).append(pl.from_arrow(schema.check_frame(table, frame)))
    files = pl.concat(frames["files"]).select("file_id", "path")
    ops = pl.concat(frames["ops"]).join(files, on="file_id", how="left", maintain_order="left")
    return ops, meta


def moved(ops: pl.DataFrame, path: str, op: str) -> int:
    """Bytes of the successful ``op`` rows on ``path``."""
    sel = ops.filter((pl.col("path") == path) & (pl.col("op") == op) & pl.col("error").is_null())
    return int(sel["size"].sum())


@pytest.fixture(scope="module")
def cp_ops():
    return parse(CP)


@pytest.fixture(scope="module")
def atomic_ops():
    return parse(ATOMIC)


# ---------------------------------------------------------------- bundled captures


def test_cp_copy_file_range_counts_both_files(cp_ops):
    ops, meta = cp_ops
    src, dst = f"{WORK}/input.dat", f"{WORK}/copy.dat"
    # cp moved every byte with copy_file_range: no read() or write() of the data
    assert moved(ops, src, "read") == INPUT_BYTES == moved(ops, dst, "write")
    cfr = ops.filter(pl.col("call") == "copy_file_range")
    assert set(cfr["call"]) == {"copy_file_range"} and cfr.height == 4  # 2 calls x 2 rows
    assert cfr["op"].to_list() == ["read", "write"] * 2
    assert cfr["path"].to_list() == [src, dst] * 2
    assert cfr["size"].to_list() == [INPUT_BYTES] * 2 + [0] * 2
    # NULL offset pointers: each side at its fd's position (0 after open), then advanced
    assert cfr["offset"].to_list() == [0, 0, INPUT_BYTES, INPUT_BYTES]
    # the two rows of one call share its pid and times
    for k in (0, 2):
        a, b = cfr.row(k, named=True), cfr.row(k + 1, named=True)
        assert (a["rank"], a["t_start"], a["t_end"]) == (b["rank"], b["t_start"], b["t_end"])
    assert meta["second_rows"] == 2 and meta["io_calls"] + meta["second_rows"] == ops.height


def test_atomic_checkpoints_are_temp_files_renamed(atomic_ops):
    ops, _ = atomic_ops
    tmp, final = f"{WORK}/ckpt.tmp", f"{WORK}/ckpt.dat"
    assert moved(ops, tmp, "write") == CKPTS * CKPT_BYTES
    assert ops.filter((pl.col("path") == tmp) & (pl.col("op") == "open")).height == CKPTS
    alloc = ops.filter(pl.col("call") == "fallocate")
    assert alloc.height == CKPTS and set(alloc["path"]) == {tmp} and set(alloc["op"]) == {"other"}
    ren = ops.filter(pl.col("call") == "rename")
    # one row per path, in argument order (old, new), sharing the call's time
    assert ren["path"].to_list() == [tmp, final] * CKPTS
    assert set(ren["op"]) == {"other"} and ren["size"].null_count() == ren.height
    assert ren.group_by("t_start").len()["len"].to_list() == [2] * CKPTS
    # every rename comes after the fsync of the file it renames
    syncs = ops.filter((pl.col("op") == "sync") & (pl.col("path") == tmp))["t_end"].to_list()
    starts = ren["t_start"].unique(maintain_order=True).to_list()
    assert all(s < t for s, t in zip(syncs, starts, strict=True))


def test_atomic_sendfile_and_explicit_offsets(atomic_ops):
    ops, _ = atomic_ops
    dat, bak, cpy = (f"{WORK}/{n}" for n in ("ckpt.dat", "ckpt.bak", "ckpt.cp"))
    sf = ops.filter(pl.col("call") == "sendfile")
    # sendfile(out, in, NULL, n): the out-fd's row first, then the in-fd's
    assert sf["op"].to_list() == ["write", "read"] * 2
    assert sf["path"].to_list() == [bak, dat] * 2
    assert sf["size"].to_list() == [CKPT_BYTES] * 2 + [0] * 2
    assert sf["offset"].to_list() == [0, 0, CKPT_BYTES, CKPT_BYTES]  # positions advanced
    assert moved(ops, bak, "write") == CKPT_BYTES
    cfr = ops.filter(pl.col("call") == "copy_file_range")
    assert cfr["path"].to_list() == [dat, cpy] * 2
    assert cfr["offset"].to_list() == [0, 0, CKPT_BYTES, CKPT_BYTES]  # the [N] strace shows
    assert moved(ops, cpy, "write") == CKPT_BYTES
    # after lseek(0) and the explicit-offset copies, read() starts at 0 again
    last = ops.filter((pl.col("call") == "read") & (pl.col("path") == dat)).row(-1, named=True)
    assert (last["offset"], last["size"]) == (0, 16)
    # ckpt.dat was read 49152 (sendfile) + 49152 (copy_file_range) + 16 bytes
    assert moved(ops, dat, "read") == 2 * CKPT_BYTES + 16


def test_atomic_metadata_calls_name_their_files(atomic_ops):
    ops, _ = atomic_ops
    one = {
        "ftruncate": f"{WORK}/ckpt.cp",
        "unlink": f"{WORK}/ckpt.bak",
    }
    for call, path in one.items():
        rows = ops.filter(pl.col("call") == call)
        assert rows["path"].to_list() == [path] and rows["op"].to_list() == ["other"], call
    ren = ops.filter(pl.col("call") == "renameat")
    assert ren["path"].to_list() == [f"{WORK}/ckpt.cp", f"{WORK}/ckpt.old"]


def test_atomic_mmap_of_a_file_is_an_op(atomic_ops):
    ops, meta = atomic_ops
    src = f"{WORK}/input.dat"
    maps = ops.filter((pl.col("call") == "mmap") & (pl.col("path") == src))
    assert maps.height == 1 and maps["op"].to_list() == ["other"]
    # the program read input.dat only through the mapping: no read rows at all
    assert ops.filter((pl.col("path") == src) & (pl.col("op") == "read")).height == 0
    # anonymous mappings name no file; mapped libraries do (MAP_DENYWRITE)
    text = ATOMIC.read_text()
    anon = sum(1 for line in text.splitlines() if " mmap(" in line and "MAP_ANONYMOUS" in line)
    assert meta["non_io_calls"]["mmap"] == anon
    assert ops.filter(pl.col("call") == "mmap").height == text.count(" mmap(") - anon


@pytest.mark.parametrize("path", [CP, ATOMIC], ids=["cp", "atomic"])
@pytest.mark.parametrize("chunk_rows", [1, 7])
def test_chunked_equals_whole(path, chunk_rows):
    whole, _ = parse(path)
    part, _ = parse(path, chunk_rows=chunk_rows)
    assert part.equals(whole)


def test_transfer_ops_table():
    assert TRANSFER_OPS["copy_file_range"] == ("read", "write")
    assert TRANSFER_OPS["splice"] == ("read", "write")
    assert TRANSFER_OPS["tee"] == ("read", "write")
    assert TRANSFER_OPS["sendfile"] == ("write", "read")  # sendfile(out_fd, in_fd, ...)


# ---------------------------------------------------------------- live: real tools now


def _trace(tmp_path: Path, argv: list[str], name: str) -> Path:
    out = tmp_path / name
    subprocess.run(["strace", *FLAGS, "-o", str(out), *argv], cwd=tmp_path, check=True)
    return out


@pytest.mark.requires_strace
@requires_strace
@pytest.mark.parametrize("fd_paths", [True, False], ids=["-y", "no-y"])
def test_live_cp(tmp_path, fd_paths):
    """GNU cp, whatever it copies with (copy_file_range on coreutils >= 9).

    Without ``-y`` the files of both fds come from cp's own openat calls.
    """
    cp = shutil.which("cp")
    if cp is None:
        pytest.skip("cp is not installed")
    size = 1_234_567
    (tmp_path / "src.bin").write_bytes(os.urandom(size))
    flags = FLAGS if fd_paths else [f for f in FLAGS if f != "-y"]
    out = tmp_path / "cp.strace"
    argv = [cp, "src.bin", "dst.bin"]
    subprocess.run(["strace", *flags, "-o", str(out), *argv], cwd=tmp_path, check=True)
    assert (tmp_path / "dst.bin").stat().st_size == size
    ops, _ = parse(out)
    base = f"{os.path.realpath(tmp_path)}/" if fd_paths else ""  # no -y: paths as cp named them
    assert moved(ops, f"{base}src.bin", "read") == size
    assert moved(ops, f"{base}dst.bin", "write") == size


_PROGRAM = """
import mmap, os
n = os.path.getsize("src.bin")
RD, WR = os.O_RDONLY, os.O_WRONLY | os.O_CREAT | os.O_TRUNC
# sendfile with an offset pointer (the in-fd position stays), then with NULL
fi = os.open("src.bin", RD)
fo = os.open("sf.bin", WR, 0o644)
done = 0
while done < n:
    done += os.sendfile(fo, fi, done, 100_000)
assert os.lseek(fi, 0, os.SEEK_CUR) == 0
os.read(fi, 10)                                 # at 0
os.close(fo)
fo = os.open("sf2.bin", WR, 0o644)
while os.sendfile(fo, fi, None, 65536):         # from 10, advancing
    pass
os.close(fo); os.close(fi)
# copy_file_range with explicit offsets, then with NULL ones
fi = os.open("src.bin", RD)
fo = os.open("cfr.bin", WR, 0o644)
off = 0
while off < n:
    off += os.copy_file_range(fi, fo, 70_000, off, off)
os.read(fi, 7)                                  # at 0: the position did not move
os.close(fo)
fo = os.open("cfr2.bin", WR, 0o644)
while os.copy_file_range(fi, fo, 1 << 20):      # from 7
    pass
os.close(fo); os.close(fi)
# splice: file -> pipe -> file
r, w = os.pipe()
fi = os.open("src.bin", RD)
fo = os.open("sp.bin", WR, 0o644)
while k := os.splice(fi, w, 65536):
    while k:
        k -= os.splice(r, fo, k)
os.close(fo); os.close(fi)
# splice with explicit offsets on the file sides
fi = os.open("src.bin", RD)
fo = os.open("sp2.bin", WR, 0o644)
pos = 0
while k := os.splice(fi, w, 65536, offset_src=pos):
    while k:
        got = os.splice(r, fo, k, offset_dst=pos)
        k -= got
        pos += got
os.read(fi, 3)                                  # at 0: the position did not move
os.close(fo); os.close(fi)
# preadv2 / pwritev2 (preadv/pwritev with flags)
fi = os.open("src.bin", RD)
fo = os.open("pv.bin", WR, 0o644)
buf = bytearray(50_000)
pos = 0
while k := os.preadv(fi, [buf], pos, os.RWF_HIPRI):
    os.pwritev(fo, [memoryview(buf)[:k]], pos, os.RWF_DSYNC)
    pos += k
os.close(fo); os.close(fi)
# metadata: fallocate, ftruncate, truncate, write-temp-then-rename, unlink
fd = os.open("fa.bin", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
os.posix_fallocate(fd, 0, 1 << 20)
os.ftruncate(fd, 4096)
os.close(fd)
os.truncate("fa.bin", 100)
with open("ckpt.tmp", "wb") as f:
    f.write(b"c" * 12345)
    f.flush()
    os.fsync(f.fileno())
os.replace("ckpt.tmp", "ckpt.dat")
os.unlink("sf2.bin")
# mmap: reads strace cannot see
fd = os.open("src.bin", RD)
with mmap.mmap(fd, 0, prot=mmap.PROT_READ) as m:
    assert len(m[:]) == n
os.close(fd)
"""


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    tmp = tmp_path_factory.mktemp("xfer")
    size = 300_001
    (tmp / "src.bin").write_bytes(os.urandom(size))
    (tmp / "prog.py").write_text(textwrap.dedent(_PROGRAM))
    try:
        trace = _trace(tmp, [sys.executable, "prog.py"], "py.strace")
    except subprocess.CalledProcessError as exc:  # e.g. a kernel without RWF_HIPRI on files
        pytest.skip(f"the traced program failed on this machine: {exc}")
    ops, meta = parse(trace)
    return tmp, os.path.realpath(tmp), size, ops, meta


@pytest.mark.requires_strace
@requires_strace
def test_live_transfers_count_the_real_sizes(live):
    tmp, base, size, ops, _ = live
    for name, call in (("sf.bin", "sendfile"), ("cfr.bin", "copy_file_range")):
        assert (tmp / name).stat().st_size == size
        rows = ops.filter((pl.col("path") == f"{base}/{name}") & (pl.col("op") == "write"))
        assert set(rows["call"]) == {call} and rows["size"].sum() == size
    assert moved(ops, f"{base}/sp.bin", "write") == (tmp / "sp.bin").stat().st_size == size
    assert moved(ops, f"{base}/sp2.bin", "write") == (tmp / "sp2.bin").stat().st_size == size
    assert moved(ops, f"{base}/pv.bin", "write") == (tmp / "pv.bin").stat().st_size == size
    assert moved(ops, f"{base}/cfr2.bin", "write") == (tmp / "cfr2.bin").stat().st_size
    assert (tmp / "cfr2.bin").stat().st_size == size - 7
    # sf2.bin was unlinked at the end; it got everything after the 10 bytes read()
    assert moved(ops, f"{base}/sf2.bin", "write") == size - 10
    # src.bin: sendfile, read(10), sendfile rest, copy_file_range, read(7), rest,
    # splice, splice at explicit offsets, read(3), preadv2; the mmap reads are invisible
    assert moved(ops, f"{base}/src.bin", "read") == 7 * size + 3
    spliced = ops.filter((pl.col("call") == "splice") & pl.col("path").str.starts_with("pipe:"))
    assert spliced.height > 0 and set(spliced["op"]) == {"read", "write"}


@pytest.mark.requires_strace
@requires_strace
def test_live_positions_follow_the_offset_pointers(live):
    _, base, size, ops, _ = live
    src = ops.filter((pl.col("path") == f"{base}/src.bin") & pl.col("error").is_null())
    reads = src.filter(pl.col("call") == "read")
    # read() after explicit-offset sendfile / copy_file_range / splice: still at 0
    assert reads["offset"].to_list() == [0, 0, 0] and reads["size"].to_list() == [10, 7, 3]
    sf = src.filter(pl.col("call") == "sendfile")
    explicit = sf.filter(pl.col("t_start") < reads["t_start"][0])
    assert explicit["offset"].to_list() == list(range(0, size, 100_000))
    after = sf.filter(pl.col("t_start") > reads["t_start"][0])
    assert after["offset"][0] == 10 and after["offset"][-1] == size  # the final 0-byte call
    cfr = src.filter(pl.col("call") == "copy_file_range")
    nulls = cfr.filter(pl.col("t_start") > reads["t_start"][1])
    assert nulls["offset"][0] == 7
    sp = src.filter((pl.col("call") == "splice") & (pl.col("t_start") < reads["t_start"][2]))
    sp2 = sp.filter(pl.col("t_start") > sp.filter(pl.col("size") == 0)["t_start"][0])
    sizes = sp2["size"].to_list()  # the explicit-offset loop: offsets are the [N] printed
    assert sp2["offset"].to_list() == [sum(sizes[:k]) for k in range(len(sizes))]
    out = ops.filter((pl.col("path") == f"{base}/sp2.bin") & (pl.col("op") == "write"))
    assert out["offset"].to_list() == [sum(sizes[:k]) for k in range(len(sizes) - 1)]
    pv = src.filter(pl.col("call") == "preadv2")
    sizes = pv["size"].to_list()  # 50000 each, the rest, then 0 at the end of the file
    assert sum(sizes) == size and sizes[-1] == 0
    assert pv["offset"].to_list() == [sum(sizes[:k]) for k in range(len(sizes))]


@pytest.mark.requires_strace
@requires_strace
def test_live_metadata_and_mmap(live):
    _, base, _, ops, _ = live
    expect = {
        "fallocate": [f"{base}/fa.bin"],
        "ftruncate": [f"{base}/fa.bin"],
        "truncate": [f"{base}/fa.bin"],
        "rename": [f"{base}/ckpt.tmp", f"{base}/ckpt.dat"],
        "unlink": [f"{base}/sf2.bin"],
    }
    for call, paths in expect.items():
        rows = ops.filter(pl.col("call") == call)
        assert rows["path"].to_list() == paths and set(rows["op"]) == {"other"}, call
    assert moved(ops, f"{base}/ckpt.tmp", "write") == 12345
    maps = ops.filter((pl.col("call") == "mmap") & (pl.col("path") == f"{base}/src.bin"))
    assert maps.height == 1 and maps["op"].to_list() == ["other"]


_SPLIT = """
import os, time
r, w = os.pipe()
if os.fork() == 0:
    time.sleep(0.3)
    os.write(w, b"x" * 5000)
    os._exit(0)
fo = os.open("out.bin", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
k = os.splice(r, fo, 65536)   # blocks until the child writes
os.wait()
os.close(fo)
print(k)
"""


@pytest.mark.requires_strace
@requires_strace
def test_live_split_transfer_is_one_pair(tmp_path):
    """A splice that blocks while another process runs: <unfinished ...> / resumed."""
    (tmp_path / "split.py").write_text(textwrap.dedent(_SPLIT))
    trace = _trace(tmp_path, [sys.executable, "split.py"], "split.strace")
    text = trace.read_text()
    if "splice(" not in text or "<... splice resumed>" not in text:
        pytest.skip("strace did not split the splice call on this machine")
    ops, meta = parse(trace)
    base = os.path.realpath(tmp_path)
    rows = ops.filter(pl.col("call") == "splice")
    assert rows.height == 2 and rows["op"].to_list() == ["read", "write"]
    assert rows["path"][0].startswith("pipe:") and rows["path"][1] == f"{base}/out.bin"
    assert rows["size"].to_list() == [5000, 5000] and rows["offset"][1] == 0
    assert (tmp_path / "out.bin").stat().st_size == 5000
    assert rows["t_end"][0] - rows["t_start"][0] > 0.2  # from the unfinished line's start
    assert meta["unfinished_pairs"] >= 1
    # a chunk boundary between the unfinished and the resumed line gives the same rows
    lines = text.splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if "<... splice resumed>" in line)
    assert parse(trace, chunk_rows=cut)[0].equals(ops)
    # cut before the resumed line: still both sides, with no size (the result is unknown)
    (tmp_path / "cut.strace").write_text("".join(lines[:cut]))
    ops, meta = parse(tmp_path / "cut.strace")
    rows = ops.filter(pl.col("call") == "splice")
    assert rows["op"].to_list() == ["read", "write"] and rows["size"].null_count() == 2
    assert rows["path"][1] == f"{base}/out.bin" and meta["unfinished_unresolved"] >= 1


_TEE_C = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
int main(void) {
    int a[2], b[2];
    char buf[1000];
    memset(buf, 'x', sizeof buf);
    if (pipe(a) || pipe(b)) return 1;
    if (write(a[1], buf, sizeof buf) != sizeof buf) return 1;
    if (tee(a[0], b[1], sizeof buf, 0) != sizeof buf) return 1;   /* copy, not consume */
    if (read(a[0], buf, sizeof buf) != sizeof buf) return 1;
    if (read(b[0], buf, sizeof buf) != sizeof buf) return 1;
    return 0;
}
"""


@pytest.mark.requires_strace
@requires_strace
@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_live_tee_between_two_pipes(tmp_path):
    """tee(2) duplicates pipe contents: a read on the in-pipe, a write on the out-pipe."""
    (tmp_path / "tee.c").write_text(_TEE_C)
    subprocess.run(["gcc", "-O1", "-o", str(tmp_path / "tee"), str(tmp_path / "tee.c")], check=True)
    ops, _ = parse(_trace(tmp_path, [str(tmp_path / "tee")], "tee.strace"))
    tee = ops.filter(pl.col("call") == "tee")
    assert tee["op"].to_list() == ["read", "write"] and tee["size"].to_list() == [1000, 1000]
    assert tee["path"].str.starts_with("pipe:").all() and tee["path"].n_unique() == 2
    # the in-pipe still holds the bytes tee copied: the read() after it gets all 1000
    reads = ops.filter((pl.col("call") == "read") & pl.col("path").is_in(tee["path"].to_list()))
    assert reads["size"].to_list() == [1000, 1000]


_MMAP_C = r"""
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void) {
    int fd = open("data.bin", O_RDONLY);
    if (fd < 0) return 1;
    /* MAP_ANONYMOUS ignores fd (man 2 mmap): strace still prints 3</path> */
    void *anon = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, fd, 0);
    void *file = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    if (anon == MAP_FAILED || file == MAP_FAILED) return 1;
    volatile char c = ((char *)file)[100];   /* a read strace cannot see */
    (void)c;
    return close(fd);
}
"""


@pytest.mark.requires_strace
@requires_strace
@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_live_anonymous_mmap_names_no_file(tmp_path):
    (tmp_path / "m.c").write_text(_MMAP_C)
    (tmp_path / "data.bin").write_bytes(b"y" * 8192)
    subprocess.run(["gcc", "-O1", "-o", str(tmp_path / "m"), str(tmp_path / "m.c")], check=True)
    trace = _trace(tmp_path, [str(tmp_path / "m")], "m.strace")
    text = trace.read_text()
    assert "MAP_PRIVATE|MAP_ANONYMOUS, 3<" in text  # strace shows the ignored fd's path
    ops, _ = parse(trace)
    data = f"{os.path.realpath(tmp_path)}/data.bin"
    maps = ops.filter((pl.col("call") == "mmap") & (pl.col("path") == data))
    assert maps.height == 1  # the MAP_SHARED one only
    assert ops.filter((pl.col("path") == data) & (pl.col("op") == "read")).height == 0


def test_loaded_through_the_store(store):
    """End to end: the two rows of each call land; bytes per file as the program moved them."""
    res = store.load(ATOMIC)
    assert res.rows["ops"] == res.meta["io_calls"] + res.meta["second_rows"]
    got = dict(
        store.sql(
            "SELECT f.path || ' ' || o.op, sum(o.size) FROM ops o JOIN files f "
            "USING (job_id, file_id) WHERE o.op IN ('read', 'write') AND o.error IS NULL "
            "AND f.path LIKE $p GROUP BY ALL",
            params={"p": f"{WORK}/ckpt.%"},
        ).fetchall()
    )
    assert got == {
        f"{WORK}/ckpt.tmp write": CKPTS * CKPT_BYTES,
        f"{WORK}/ckpt.dat read": 2 * CKPT_BYTES + 16,
        f"{WORK}/ckpt.bak write": CKPT_BYTES,
        f"{WORK}/ckpt.cp write": CKPT_BYTES,
    }
