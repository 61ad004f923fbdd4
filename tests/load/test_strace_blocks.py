"""The strace loader's parallel blocks give the one-block answer (issue 18, item 3).

A trace is cut at line boundaries into blocks; worker threads scan blocks
while the ordered pass carries what crosses them (``<unfinished ...>`` calls
per pid, fd files and positions, the working directory, the ``-tt`` clock
past midnight, unprefixed pids, file and name ids). Every real capture under
``data/strace/`` (see the SOURCE.md files there) is parsed as one block on one
thread, and again cut into blocks of one line each (so every unfinished call
is resumed in a later block) and of a few hundred bytes, on one and on three
threads: the rows, files, job and meta must be the same.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from iochar.errors import InputError
from iochar.load._text import BOM, open_text
from iochar.load.strace import StraceLoader, _block
from iochar.load.strace._parser import _Parser
from iochar.load.strace._read import plain_file

try:
    from conftest import DATA_DIR
except ImportError:  # properties/conftest.py can shadow the name (see test_darshan.py)
    DATA_DIR = Path(__file__).resolve().parents[2] / "data"

STRACE = DATA_DIR / "strace"
CAPTURES = sorted(STRACE.rglob("*.strace")) + [STRACE / "strace-parser" / "samples.txt"]
WORKERS_O = STRACE / "workers_o.strace"
CKPT_TT = STRACE / "ckpt_tt.strace"

# (threads, block_bytes, chunk_rows): one line per block; a few lines per block
# with batches inside blocks; blocks of a few KiB
CUTS = [(3, 1, 1_000_000), (1, 300, 2), (2, 4096, 7)]


def run(
    src,
    *,
    strict=True,
    threads=1,
    block_bytes=None,
    chunk_rows=1_000_000,
    plain=False,
    depth=None,
    metas=None,
):
    """(ops, files, jobs, meta, skips, number of chunks) of one parse with this cut.

    ``plain``: read the file ``src`` with ``padded_blocks`` (as the loader reads
    a plain file) instead of ``open_text``. ``depth``: blocks in flight (default
    ``threads + 1``). ``metas``: a list that receives every chunk's meta.
    """
    parser = _Parser("trace", strict, chunk_rows, threads=threads, block_bytes=block_bytes)
    if depth is not None:
        parser.depth = depth
    if plain:
        with open(src, "rb", buffering=0) as fh:
            chunks = list(parser.run(fh, plain=True))
    else:
        with open_text(src) as fh:
            chunks = list(parser.run(fh))
    if metas is not None:
        metas.extend(chunk.meta for chunk in chunks)
    tables: dict[str, list[pa.Table]] = {}
    for chunk in chunks:
        for name, table in chunk.tables.items():
            tables.setdefault(name, []).append(table)
    joined = {name: pa.concat_tables(parts) for name, parts in tables.items()}
    skips = chunks[-1].skips
    kept = None if skips is None else (skips.count, [(s.line, s.reason) for s in skips.kept])
    return (
        joined.get("ops"),
        joined.get("files"),
        joined["jobs"],
        chunks[-1].meta,
        kept,
        len(chunks),
    )


def assert_same(a, b):
    """Same rows in the same order, same files, job, meta and skips."""
    for x, y in zip(a[:3], b[:3], strict=True):
        assert (x is None) == (y is None)
        if x is not None:
            assert x.equals(y), (x.slice(0, 5), y.slice(0, 5))
    assert a[3] == b[3]
    assert a[4] == b[4]


def test_every_capture_is_covered():
    names = {p.name for p in CAPTURES}
    assert {"workers_o.strace", "workers_stderr.strace", "cp.strace", "ooc.strace"} <= names
    assert len(CAPTURES) >= 12


@pytest.mark.parametrize("cut", CUTS, ids=lambda c: f"t{c[0]}-b{c[1]}-c{c[2]}")
@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.parent.name + "/" + p.name)
def test_blocks_equal_one_block(path, cut):
    threads, block_bytes, chunk_rows = cut
    whole = run(path)
    part = run(path, threads=threads, block_bytes=block_bytes, chunk_rows=chunk_rows)
    assert part[5] > whole[5] or whole[0] is None  # it really was cut
    assert_same(whole, part)


@pytest.mark.parametrize("block_bytes", [1, 4096])
@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.parent.name + "/" + p.name)
def test_plain_file_reader_equals_open_text(path, block_bytes):
    # the loader reads plain files straight into the scanner's buffers
    assert plain_file(path) and not plain_file(path.read_bytes())
    whole = run(path)
    assert_same(whole, run(path, plain=True, threads=2, block_bytes=block_bytes))


def _variants(path: Path, tmp_path: Path) -> list[Path]:
    """``path`` with CRLF line ends; with a BOM too; and cut inside its last line."""
    data = path.read_bytes()
    out = []
    for name, text in (
        ("crlf", data.replace(b"\n", b"\r\n")),
        ("bom-crlf", BOM + data.replace(b"\n", b"\r\n")),
        ("bom", BOM + data),
        ("cut", data[:-7]),
    ):
        f = tmp_path / f"{name}.strace"
        f.write_bytes(text)
        out.append(f)
    return out


@pytest.mark.parametrize("path", [WORKERS_O, CKPT_TT], ids=lambda p: p.name)
def test_plain_reader_normalizes_like_open_text(path, tmp_path):
    # open_text drops a leading BOM and reads CRLF as LF; a cut last line is
    # an error in strict mode and kept if complete in tolerant mode
    for variant in _variants(path, tmp_path):
        for strict in (True, False):
            try:
                ref = run(variant, strict=strict)
            except InputError as exc:
                for block_bytes in (1, None):
                    with pytest.raises(InputError) as got:
                        run(variant, strict=strict, plain=True, block_bytes=block_bytes)
                    assert (got.value.line, got.value.expected) == (exc.line, exc.expected)
                assert variant.name == "cut.strace" and strict
                continue
            if variant.name != "cut.strace":
                assert_same(run(path, strict=strict), ref)
            for block_bytes in (1, None):
                got = run(variant, strict=strict, plain=True, threads=2, block_bytes=block_bytes)
                assert_same(ref, got)


def test_resumed_calls_cross_blocks():
    # workers_o.strace: the parent's pipe reads are <unfinished ...> / <... read
    # resumed> pairs with other pids' lines between (SOURCE.md); with one line
    # per block every pair spans blocks, and each is still one op
    whole = run(WORKERS_O)
    assert whole[3]["unfinished_pairs"] >= 3 and whole[3]["unfinished_unresolved"] == 0
    text = WORKERS_O.read_bytes()
    assert text.count(b"<unfinished ...>") == whole[3]["unfinished_pairs"]
    for threads in (1, 2, 4):
        assert_same(whole, run(WORKERS_O, threads=threads, block_bytes=1))


def _wrapped(path: Path) -> bytes:
    """``path`` (-tt, bare pids) moved so its clock passes midnight midway."""
    src = path.read_bytes().splitlines(keepends=True)
    stamps = [re.match(rb"\d+ +(\d\d):(\d\d):(\d\d\.\d+)", line) for line in src]
    secs = [int(m[1]) * 3600 + int(m[2]) * 60 + float(m[3]) for m in stamps]
    shift = 86_400 - (secs[0] + secs[-1]) / 2  # midnight halfway through the run
    out = []
    for line, m, t in zip(src, stamps, secs, strict=True):
        t = (t + shift) % 86_400
        new = f"{int(t // 3600):02d}:{int(t % 3600 // 60):02d}:{t % 60:09.6f}".encode()
        out.append(line[: m.start(1)] + new + line[m.end(3) :])
    return b"".join(out)


@pytest.mark.parametrize("path", [CKPT_TT, WORKERS_O], ids=lambda p: p.name)
def test_midnight_inside_the_blocks(path):
    data = _wrapped(path)
    assert b" 23:59:" in data and b" 00:00:" in data
    whole = run(data)
    ref = run(path)
    # the wrap is seen: the times are those of the unwrapped trace
    a = whole[0].column("t_start").to_numpy()
    b = ref[0].column("t_start").to_numpy()
    assert abs(a - b).max() < 1e-5
    for threads, block_bytes, chunk_rows in CUTS:
        assert_same(
            whole, run(data, threads=threads, block_bytes=block_bytes, chunk_rows=chunk_rows)
        )


def _broken() -> list[bytes]:
    """workers_o.strace with a timestamp going back (line 31) and an orphan resumed line."""
    src = WORKERS_O.read_bytes().splitlines(keepends=True)
    back = list(src)
    line = back[30].decode()
    back[30] = re.sub(
        r"(\d\d:\d\d:)(\d\d)", lambda m: m.group(1) + f"{int(m.group(2)) - 1:02d}", line, count=1
    ).encode()
    orphan = list(src)
    i = next(j for j, text in enumerate(orphan) if text.rstrip().endswith(b"<unfinished ...>"))
    del orphan[i]
    return [b"".join(back), b"".join(orphan)]


@pytest.mark.parametrize("which", [0, 1], ids=["backwards", "orphan-resumed"])
def test_errors_and_skips_do_not_depend_on_blocks(which):
    data = _broken()[which]
    with pytest.raises(InputError) as whole:
        run(data)
    for threads, block_bytes, chunk_rows in CUTS:
        with pytest.raises(InputError) as part:
            run(data, threads=threads, block_bytes=block_bytes, chunk_rows=chunk_rows)
        assert (part.value.line, part.value.expected) == (whole.value.line, whole.value.expected)
    tolerant = run(data, strict=False)
    assert tolerant[4][0] == 1
    for threads, block_bytes, chunk_rows in CUTS:
        cut = run(
            data, strict=False, threads=threads, block_bytes=block_bytes, chunk_rows=chunk_rows
        )
        assert_same(tolerant, cut)


def test_default_parse_uses_threads_and_stops_them():
    # the loader's entry point: threads by default, all of them gone when the
    # caller stops reading early or reads to the end
    before = threading.active_count()
    data = WORKERS_O.read_bytes()
    gen = StraceLoader().parse(data, threads=3, chunk_rows=4)
    next(gen)
    gen.close()
    assert threading.active_count() == before
    one = list(StraceLoader().parse(data, threads=1))
    many = list(StraceLoader().parse(data, threads=3))
    assert one[-1].meta == many[-1].meta
    assert threading.active_count() == before


def test_slow_workers_are_helped(monkeypatch):
    # a worker whose core is taken: the ordered pass scans the queued blocks
    # itself (work stealing) and the answer is still the one-block answer
    whole = run(WORKERS_O)
    scan = _Parser._scan_block
    who: list[str] = []

    def slow_scan(self, *args):
        name = threading.current_thread().name
        who.append(name)
        if name != "MainThread":
            threading.Event().wait(0.05)
        return scan(self, *args)

    monkeypatch.setattr(_Parser, "_scan_block", slow_scan)
    part = run(WORKERS_O, threads=2, block_bytes=2048)
    assert_same(whole, part)
    assert len(who) >= 8
    assert who.count("MainThread") >= 2  # the consumer scanned blocks (a worker never does that)
    assert len(set(who)) == 2  # and the worker did some


@pytest.mark.parametrize("depth", [1, 2, 5])
def test_blocks_in_flight_do_not_show(depth):
    # at most `depth` blocks are queued or scanned ahead of the ordered pass
    # (fewer blocks in flight, less memory); with 1 the ordered pass scans each
    # block itself as soon as it is read, with more the worker runs ahead
    whole = run(WORKERS_O)
    assert_same(whole, run(WORKERS_O, threads=2, block_bytes=300, depth=depth))
    ckpt = run(CKPT_TT)
    assert_same(ckpt, run(CKPT_TT, threads=3, block_bytes=4096, chunk_rows=7, depth=depth))


@pytest.mark.parametrize("path", [WORKERS_O, CKPT_TT], ids=lambda p: p.name)
def test_merged_meta_is_the_one_block_meta(path):
    # chunks' metas are merged in order, later keys winning (what Store.load
    # does); earlier chunks may leave keys out (the pid list), the merge may not
    whole = run(path)
    metas: list[dict] = []
    part = run(path, threads=2, block_bytes=300, metas=metas)
    assert len(metas) > 2
    merged: dict = {}
    for meta in metas:
        merged.update(meta)
    assert merged == whole[3] == part[3]
    pids = whole[3]["pids"]  # every pid of the trace, sorted (fewer than 1000 here)
    assert pids == sorted(pids) and len(pids) == whole[3]["npids"]
    assert set(whole[0]["rank"].to_pylist()) <= set(pids)


def _first_last(hit):
    """Index of the first and of the last True of each row of 8 (8 / -1 when none)."""
    some = hit.any(axis=1)
    first = np.where(some, hit.argmax(axis=1), 8)
    last = np.where(some, 7 - hit[:, ::-1].argmax(axis=1), -1)
    return first, last


@pytest.mark.parametrize("popcount", [True, False], ids=["popcount", "log2"])
@pytest.mark.parametrize("path", [WORKERS_O, CKPT_TT], ids=lambda p: p.name)
def test_swar_byte_search_finds_the_bytes_and_digits(path, popcount, monkeypatch):
    # the scanner finds bytes eight at a time (_first/_last of a high-bit mask);
    # at every offset of a real capture they must name the byte a plain
    # byte-by-byte search names, with popcount (numpy >= 2) and without
    if not popcount:
        monkeypatch.setattr(_block, "_POPCOUNT", None)
    data = np.frombuffer(path.read_bytes()[: 1 << 16], dtype=np.uint8)
    blk = _block._Block.of_bytes(data.tobytes())
    pos = np.arange(data.size - 8)
    words = blk.load(pos)
    window = np.lib.stride_tricks.sliding_window_view(data, 8)[: pos.size]
    digit = (window >= 48) & (window <= 57)
    cases = [(_block._eqb(words, byte), window == byte) for byte in b' =(<>,"0\n']
    cases.append((_block._nondigit(words), ~digit))
    for mask, hit in cases:
        first, last = _first_last(hit)
        assert (_block._first(mask) == first).all()
        assert (_block._last(mask) == last).all()
    # the leading run of digits of each load: its length and decimal value
    length = _first_last(~digit)[0]
    places = np.arange(8)[None, :] < length[:, None]
    value = np.zeros(pos.size, dtype=np.int64)
    for k in range(8):
        value = np.where(places[:, k], value * 10 + (window[:, k].astype(np.int64) - 48), value)
    got, got_len = _block._digits(words)
    assert (got_len == length).all() and (got == value).all()
    assert (length > 0).sum() > 1000  # timestamps, pids, fds and results


@pytest.mark.parametrize("path", [WORKERS_O, CKPT_TT], ids=lambda p: p.name)
def test_string_views_are_the_bytes(path):
    # the scanner hands strings out as Arrow views into the block: inline up to
    # 12 bytes, else buffer 0 at an offset (Arrow columnar format, "Variable-size
    # Binary View Layout"); each must read back as the bytes it points at
    data = path.read_bytes()
    blk = _block._Block.of_bytes(data)
    rng = np.random.default_rng(18)
    starts = rng.integers(0, len(data) - 64, 5000)
    lens = rng.integers(-1, 40, 5000)  # around the 12-byte inline limit; -1 reads as ""
    valid = rng.random(5000) < 0.9
    want = [
        data[s : s + max(n, 0)].decode() if v else None
        for s, n, v in zip(starts.tolist(), lens.tolist(), valid.tolist(), strict=True)
    ]
    assert blk.strings(starts, lens, valid).to_pylist() == want
    every = np.ones(5000, dtype=bool)
    pairs = zip(starts.tolist(), lens.tolist(), strict=True)
    assert blk.strings(starts, lens, every).to_pylist() == [
        data[s : s + max(n, 0)].decode() for s, n in pairs
    ]
