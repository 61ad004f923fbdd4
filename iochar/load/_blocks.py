"""Blocks of whole lines for the vectorized text loaders, read and parsed on every core.

Two helpers shared by the block parsers of ``iostat`` and ``brw_stats``:

- :func:`line_blocks` reads an input as blocks of whole lines. A plain
  (uncompressed) file is mapped and its blocks are views of the mapping (as
  :func:`iochar.load._text.mmap_blocks`: no read copy, no CRLF pass, no line
  count); anything else (compressed, a buffer, a file object, a file that
  starts with a BOM or has CRLF line ends in its first 64 KiB) is read through
  :func:`iochar.load._text.open_text`, which normalizes it, as before.
- :func:`ordered_map` runs the state-free part of each block's parse in a
  thread pool, a bounded number of blocks ahead, and hands the results back in
  input order, so the part that carries state from block to block (reports,
  dumps, layouts) runs in order in the caller. Threads, not processes: the
  heavy work is numpy, Arrow compute and polars over whole blocks, which
  release the GIL (issue 18 item 3: "large text inputs split at line
  boundaries into blocks parsed in parallel"); a block is handed over without
  a copy, and no worker interpreter has to start (about 0.3 s).

The number of threads is :func:`parse_threads`: the CPUs this process may run
on (``os.sched_getaffinity``), or ``IOCHAR_PARSE_THREADS`` when set (``1``
parses in the calling thread, as on one core).
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from iochar.load._text import BOM, Source, is_compressed, open_text

__all__ = [
    "blocks_in_flight", "cut_tail", "has_high", "line_blocks", "ordered_map", "parse_threads",
]  # fmt: skip

_END = object()  # no more items
T = TypeVar("T")
R = TypeVar("R")


#: Most parse threads for one input: each block in flight holds about ten times its
#: size in arrays, and the stage that runs in order bounds the gain anyway.
MAX_THREADS = 4


def parse_threads() -> int:
    """Threads for parsing the blocks of one input.

    Returns
    -------
    int
        ``IOCHAR_PARSE_THREADS`` when set to an integer >= 1, else the CPUs
        this process may run on (``os.sched_getaffinity``; ``os.cpu_count``
        where that is missing), at most :data:`MAX_THREADS`.
    """
    env = os.environ.get("IOCHAR_PARSE_THREADS", "").strip()
    if env.isdigit() and int(env) >= 1:
        return int(env)
    if hasattr(os, "sched_getaffinity"):
        cpus = len(os.sched_getaffinity(0))
    else:
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_THREADS))


def _plain_path(src: Source) -> bool:
    """A path to an uncompressed file that ``open_text`` would read unchanged at its start."""
    if not isinstance(src, (str, os.PathLike)):
        return False
    try:
        if not os.path.isfile(src) or is_compressed(src):
            return False
        with open(src, "rb") as fh:
            head = fh.read(64 * 1024)
    except OSError:
        return False  # open_text names the error
    return not head.startswith(BOM) and b"\r\n" not in head


def _stream_blocks(fh, block_bytes: int) -> Iterator[tuple[bytes, bool]]:
    """Blocks of whole lines of a stream, cut where ``mmap_blocks`` cuts a file.

    A block is the longest run of whole lines from where the last one ended
    that fits in ``block_bytes``, or one line when that line is longer; only
    the last may lack its newline. The same content thus gives the same blocks
    whether it is mapped or streamed (a compressed copy, a buffer).

    Parameters
    ----------
    fh : binary stream
        The input (already normalized by ``open_text``).
    block_bytes : int
        Most bytes in a block of several lines. [bytes]

    Yields
    ------
    (bytes, bool)
        A block, and whether it ends in a newline.
    """
    step = max(block_bytes, 1 << 16)
    buf, pos, eof = b"", 0, False

    def fill(need: int) -> None:  # at least ``need`` bytes after pos, or the end
        nonlocal buf, pos, eof
        while len(buf) - pos < need and not eof:
            data = fh.read(step)
            if not data:
                eof = True
                return
            buf = buf[pos:] + data
            pos = 0

    while True:
        fill(block_bytes)
        if pos >= len(buf):
            return
        end = buf.rfind(b"\n", pos, pos + block_bytes) + 1
        if end <= pos:  # a line longer than a block, or the unterminated last line
            nxt = buf.find(b"\n", pos)
            while nxt < 0 and not eof:
                fill(len(buf) - pos + step)
                nxt = buf.find(b"\n", pos)
            end = len(buf) if nxt < 0 else nxt + 1
        yield buf[pos:end], buf[end - 1 : end] == b"\n"
        pos = end


def _mapped_blocks(path: str, block_bytes: int, lag: int) -> Iterator[tuple[Any, bool]]:
    """Zero-copy blocks of whole lines of a file, cut as ``mmap_blocks`` cuts them.

    As :func:`iochar.load._text.mmap_blocks`, but a block's pages leave the
    resident set (``madvise(MADV_DONTNEED)``: read again from the page cache
    if touched) only ``lag`` blocks later, when the threads that parse blocks
    ahead are done with it; dropping them as soon as the next block is handed
    out would make a worker fault them in again, and keep them.
    """
    import pyarrow as pa

    size = os.path.getsize(path)
    if size == 0:
        return
    with open(path, "rb") as fh:
        # not closed explicitly: Arrow buffers may still view it; freed with them
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    can_drop = hasattr(mm, "madvise") and hasattr(mmap, "MADV_DONTNEED")
    page = mmap.PAGESIZE
    ends: deque[int] = deque()  # ends of the blocks handed out, pages not yet dropped
    pos = dropped = 0
    while pos < size:
        end = mm.rfind(b"\n", pos, min(pos + block_bytes, size)) + 1
        if end <= pos:  # a line longer than a block, or the unterminated last line
            nxt = mm.find(b"\n", pos)
            end = size if nxt < 0 else nxt + 1
        yield pa.py_buffer(memoryview(mm)[pos:end]), mm[end - 1 : end] == b"\n"
        ends.append(end)
        if len(ends) > lag:
            upto = (ends.popleft() // page) * page
            if can_drop and upto > dropped:
                mm.madvise(mmap.MADV_DONTNEED, dropped, upto - dropped)
                dropped = upto
        pos = end


@contextlib.contextmanager
def line_blocks(
    src: Source, block_bytes: int, lag: int = 1
) -> Iterator[Iterator[tuple[Any, bool]]]:
    """Blocks of whole lines of ``src``, each with whether it ends in a newline.

    Parameters
    ----------
    src : str, os.PathLike, bytes or binary file
        The input.
    block_bytes : int
        About this many bytes per block (a block holds whole lines, and at
        least one). [bytes]
    lag : int, default 1
        Blocks handed out before a mapped block's pages are dropped from the
        resident set: more than the blocks a caller may still be reading
        (:func:`ordered_map` keeps ``threads + 1`` in flight per stage).

    Yields
    ------
    iterator of (buffer, bool)
        Blocks in order: ``bytes`` or a read-only ``pyarrow.Buffer`` over a
        file mapping (both expose the buffer protocol), and False only for a
        last block whose last line has no newline. The same content gives the
        same blocks either way.
    """
    if _plain_path(src):
        yield _mapped_blocks(os.fspath(src), block_bytes, lag)
        return
    with open_text(src) as fh:
        yield _stream_blocks(fh, block_bytes)


def has_high(arr: np.ndarray) -> bool:
    """Whether any byte of ``arr`` (uint8) is >= 0x80, i.e. not ASCII (a max, no temporary)."""
    return arr.size > 0 and int(arr.max()) >= 0x80


def cut_tail(buf: Any, complete: bool) -> tuple[Any, np.ndarray, bytes | None]:
    """A block of :func:`line_blocks` as whole lines, and its cut-off last line.

    Parameters
    ----------
    buf : buffer
        The block.
    complete : bool
        Whether it ends in a newline (only the input's last block may not).

    Returns
    -------
    (buffer, numpy.ndarray, bytes or None)
        The whole lines (a slice of ``buf``), the same bytes as ``uint8``, and
        the last line when it has no newline (None when ``complete``).
    """
    b = np.frombuffer(buf, np.uint8)
    if complete:
        return buf, b, None
    nl = np.flatnonzero(b == 10)
    cut = int(nl[-1]) + 1 if len(nl) else 0
    return buf[:cut], b[:cut], bytes(b[cut:])


def blocks_in_flight(threads: int, stages: int = 1) -> int:
    """Blocks a parse on ``threads`` threads with ``stages`` :func:`ordered_map` stages may
    still read after handing them out (the ``lag`` for :func:`line_blocks`)."""
    return 1 if threads <= 1 else stages * (threads + 1) + 1


def ordered_map(
    fn: Callable[[T], R],
    items: Iterable[T],
    threads: int,
    ahead: int | None = None,
    pool: ThreadPoolExecutor | None = None,
) -> Iterator[R]:
    """``map(fn, items)`` computed on ``threads`` threads, results in input order.

    At most ``ahead`` items (default ``threads + 1``) are in flight, so memory
    stays a few blocks whatever the input's size. An exception raised by
    ``fn`` is raised when its item's turn comes, and one raised while taking
    the next item from ``items`` after every earlier item is delivered, so
    the first error of an input (in input order) is the one reported. With
    one thread, or a single item, ``fn`` runs in the calling thread (no pool
    is started for a small input).

    Parameters
    ----------
    fn : callable
        The per-item work; must not touch state shared with other items.
    items : iterable
        Read in the calling thread, in order.
    threads : int
        Worker threads (1: no pool).
    ahead : int, optional
        Items submitted before the first result is taken.
    pool : concurrent.futures.ThreadPoolExecutor, optional
        Run on this pool (of ``threads`` threads; the caller shuts it down),
        e.g. one shared by the stages of a parse, rather than a pool of its own.

    Yields
    ------
    object
        ``fn(item)`` for each item, in order.
    """
    it = iter(items)
    first = next(it, _END)
    if first is _END:
        return
    if threads > 1:
        try:
            second = next(it, _END)
        except BaseException:
            yield fn(first)  # the earlier item's result (or error) comes first
            raise
    if threads <= 1 or second is _END:  # one thread, or a single item: no pool
        yield fn(first)
        if threads <= 1:
            for item in it:
                yield fn(item)
        return
    ahead = ahead or threads + 1
    own = pool is None
    if own:
        pool = ThreadPoolExecutor(threads, thread_name_prefix="iochar-parse")
    pending: deque = deque()
    try:
        pending.append(pool.submit(fn, first))
        pending.append(pool.submit(fn, second))
        while True:
            try:
                item = next(it)
            except StopIteration:
                break
            except BaseException:
                # the items before the one that failed come first (theirs may fail too)
                while pending:
                    yield pending.popleft().result()
                raise
            pending.append(pool.submit(fn, item))
            if len(pending) >= ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for fut in pending:
            fut.cancel()
        if own:
            pool.shutdown(wait=True, cancel_futures=True)
        else:
            for fut in pending:  # the shared pool lives on: wait for what still runs
                if not fut.cancelled():
                    try:
                        fut.result()
                    except BaseException:  # noqa: BLE001 - its error is not the input's first
                        pass
