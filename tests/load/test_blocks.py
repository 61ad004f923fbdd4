"""load._blocks: the same blocks from a mapped file and a stream; results in input order.

Issue 18 item 3 splits large text inputs at line boundaries into blocks parsed on
threads. A loader's rows may depend on where blocks end (iostat builds rows block by
block), so a plain file (mapped) and the same bytes from a compressed file or a buffer
(streamed) must be cut alike; and the first error of an input must be the one raised,
however far ahead the threads have parsed. Checked on the real captures in ``data/``.
"""

from __future__ import annotations

import gzip
import lzma
import threading

import pytest

from iochar.load._blocks import (
    blocks_in_flight,
    cut_tail,
    line_blocks,
    ordered_map,
    parse_threads,
)
from tests.conftest import DATA_DIR

CAPTURES = [
    DATA_DIR / "iostat" / "rhel6-sysstat9-x-t-m.iostat",
    DATA_DIR / "iostat" / "vm-sysstat12.6.1-x-t-p.iostat",
    DATA_DIR / "brw_stats" / "zfs-lustrefs-OST0000-series.txt",
    DATA_DIR / "brw_stats" / "lustre-2.14.0_ddn145-lctl.lctl",
]


def _blocks(src, nbytes: int, lag: int = 1) -> list[tuple[bytes, bool]]:
    with line_blocks(src, nbytes, lag) as blocks:
        return [(bytes(b), complete) for b, complete in blocks]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
@pytest.mark.parametrize("nbytes", [1, 64, 4096, 1 << 20])
def test_mapped_and_streamed_blocks_are_the_same(path, nbytes, tmp_path):
    raw = path.read_bytes()
    mapped = _blocks(path, nbytes, lag=3)
    gz = tmp_path / (path.name + ".gz")
    gz.write_bytes(gzip.compress(raw))
    assert _blocks(gz, nbytes) == mapped
    assert _blocks(raw, nbytes) == mapped
    assert b"".join(b for b, _ in mapped) == raw
    for block, complete in mapped:
        assert complete and block.endswith(b"\n")
        # whole lines only; several lines only when they fit in nbytes
        assert len(block) <= nbytes or block.count(b"\n") == 1


def test_a_cut_last_line_comes_last_and_incomplete(tmp_path):
    raw = lzma.decompress(
        (DATA_DIR / "iostat" / "rhel6-sysstat9-x-t-m-318s.iostat.xz").read_bytes()
    )
    cut = raw[: len(raw) - 7]  # inside the last line
    path = tmp_path / "cut.iostat"
    path.write_bytes(cut)
    for src in (path, cut):
        blocks = _blocks(src, 1000)
        assert b"".join(b for b, _ in blocks) == cut
        assert [c for _, c in blocks[:-1]] == [True] * (len(blocks) - 1)
        assert blocks[-1] == (cut[cut.rfind(b"\n") + 1 :], False)


def test_cut_tail_splits_whole_lines_from_a_cut_last_line():
    raw = lzma.decompress(
        (DATA_DIR / "iostat" / "rhel6-sysstat9-x-t-m-318s.iostat.xz").read_bytes()
    )[:5000]
    end = raw.rfind(b"\n") + 1
    lines, b, tail = cut_tail(raw, False)
    assert bytes(lines) == raw[:end] and bytes(b) == raw[:end] and tail == raw[end:] != b""
    lines, b, tail = cut_tail(raw[:end], True)
    assert bytes(lines) == raw[:end] and len(b) == end and tail is None
    assert cut_tail(b"no newline", False)[2] == b"no newline"


def test_ordered_map_keeps_order_and_raises_the_first_error():
    seen = set()

    def work(i: int) -> int:
        seen.add(threading.current_thread().name)
        if i in (7, 9):
            raise ValueError(i)
        return i * i

    assert list(ordered_map(work, range(7), 3)) == [i * i for i in range(7)]
    assert any(name.startswith("iochar-parse") for name in seen)
    out = []
    with pytest.raises(ValueError) as exc:
        for v in ordered_map(work, range(20), 3):
            out.append(v)
    assert exc.value.args == (7,) and out == [i * i for i in range(7)]

    def items():  # the item source fails after 5 items: those 5 come out first
        yield from range(5)
        raise KeyError("source")

    out = []
    with pytest.raises(KeyError):
        for v in ordered_map(lambda i: i + 1, items(), 2):
            out.append(v)
    assert out == [1, 2, 3, 4, 5]


def test_thread_count(monkeypatch):
    monkeypatch.setenv("IOCHAR_PARSE_THREADS", "3")
    assert parse_threads() == 3
    monkeypatch.delenv("IOCHAR_PARSE_THREADS")
    assert 1 <= parse_threads() <= 4
    assert blocks_in_flight(1) == 1 and blocks_in_flight(2, 2) == 7
