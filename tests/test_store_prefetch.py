"""The store's parse-ahead queue: bounded by rows or items, errors reach the consumer."""

from __future__ import annotations

import functools
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

from iochar.load._base import Parsed
from iochar.store import _INSERT_ROWS, _Prefetch


@functools.cache
def _column(rows: int) -> pa.Table:
    return pa.table({"x": pa.array(np.arange(rows))})


def _chunk(rows: int) -> Parsed:
    return Parsed(tables={"ops": _column(rows)})


class _Counting:
    """Chunks of given sizes; counts rows handed out but not yet taken back."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.out = 0  # rows produced and not yet consumed
        self.lock = threading.Lock()
        self.most = 0  # the most rows ever waiting, beyond the one being consumed

    def __iter__(self):
        for n in self.sizes:
            with self.lock:
                self.out += n
            yield _chunk(n)

    def took(self, n: int) -> None:
        with self.lock:
            self.out -= n


def _drain(pf: _Prefetch, src: _Counting, pause: float = 0.01) -> list[int]:
    got = []
    for item in pf:
        n = item.tables["ops"].num_rows
        time.sleep(pause)  # the consumer is slower: the producer fills the queue
        with src.lock:
            src.most = max(src.most, src.out - n)
        src.took(n)
        got.append(n)
    return got


def test_rows_bound_lets_the_parser_run_a_whole_insert_ahead() -> None:
    sizes = [122_880] * 12
    src = _Counting(sizes)
    got = _drain(_Prefetch(src, rows=_INSERT_ROWS), src)
    assert got == sizes  # order kept
    # at most one insert group waits, plus the chunk the producer holds while blocked
    assert src.most <= _INSERT_ROWS + 122_880
    # and more than one chunk did wait: the bound is in rows, not one item
    assert src.most > 122_880


def test_a_chunk_larger_than_the_bound_still_passes_alone() -> None:
    sizes = [3 * _INSERT_ROWS, 5, 3 * _INSERT_ROWS]
    src = _Counting(sizes)
    assert _drain(_Prefetch(src, rows=_INSERT_ROWS), src) == sizes
    assert src.most <= 3 * _INSERT_ROWS + 5


def test_depth_bound_counts_items() -> None:
    src = _Counting([1] * 40)
    got = _drain(_Prefetch(src, depth=3), src)
    assert got == [1] * 40
    assert src.most <= 3 + 1


def test_parser_error_is_raised_in_the_consumer_after_the_chunks_before_it() -> None:
    def chunks():
        yield _chunk(2)
        raise ValueError("bad line 7")

    pf = _Prefetch(chunks(), rows=_INSERT_ROWS)
    it = iter(pf)
    assert next(it).tables["ops"].num_rows == 2
    with pytest.raises(ValueError, match="bad line 7"):
        next(it)
    pf.close()


def test_close_stops_a_blocked_producer_and_closes_the_parser() -> None:
    closed = threading.Event()

    def chunks():
        try:
            while True:
                yield _chunk(_INSERT_ROWS)
        finally:
            closed.set()

    pf = _Prefetch(chunks(), rows=_INSERT_ROWS)
    next(iter(pf))
    pf.close()  # the producer waits for room; close must wake it
    assert closed.wait(5)
    assert not pf._thread.is_alive()
