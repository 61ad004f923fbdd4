"""Reading a plain strace file straight into the parser's zero-padded block buffers.

:func:`iochar.load._text.open_text` reads any input (compressed, a buffer, a
stream) and normalizes it (a UTF-8 byte order mark dropped, CRLF read as LF);
through it a block of text is copied several times before the scanner copies
it once more into its zero-padded buffer (:class:`~iochar.load.strace._block.
_Block`). For a plain, uncompressed file, :func:`padded_blocks` reads each
block of whole lines directly into that buffer (``readinto``: the one copy
from the page cache) and applies the same normalization itself, so the
parser sees the same bytes and line numbers either way:

- a BOM at the start of the file is dropped;
- CRLF becomes LF (a block holding a carriage return is rewritten with
  ``bytes.replace``, as ``open_text`` does); a lone CR is kept. Blocks end at
  a newline, so a CRLF is never split between blocks;
- line numbers count the newlines before each block.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import BinaryIO

import numpy as np

from iochar.errors import InputError
from iochar.load._text import BOM, Source, is_compressed
from iochar.load.strace._block import _PAD

__all__ = ["plain_file", "padded_blocks"]


def plain_file(src: Source) -> bool:
    """Whether ``src`` is a path to a regular, uncompressed file (for :func:`padded_blocks`)."""
    if not isinstance(src, (str, os.PathLike)):
        return False
    try:
        return os.path.isfile(src) and not is_compressed(src)
    except (OSError, InputError):  # open_text reports unreadable files
        return False


def padded_blocks(fh: BinaryIO, block_bytes: int) -> Iterator[tuple[int, np.ndarray, int, bool]]:
    """Blocks of whole lines of a plain file, each in its own zero-padded buffer.

    Parameters
    ----------
    fh : binary file
        The open file (unbuffered is best: ``readinto`` fills the buffer).
    block_bytes : int
        Bytes read per block (a block is the lines they complete). [bytes]

    Yields
    ------
    first_line : int
        1-based number of the block's first line.
    buf : numpy.ndarray
        uint8; the block's ``n`` bytes, then at least ``_PAD`` zero bytes.
    n : int
        The block's length. [bytes]
    complete : bool
        False only for a last block whose last line has no newline.
    """
    line = 1
    carry = b""
    while len(carry) < len(BOM):  # a UTF-8 byte order mark starts no line (open_text drops it)
        more = fh.read(len(BOM) - len(carry))
        if not more:
            break
        carry += more
    if carry == BOM:
        carry = b""
    while True:
        c = len(carry)
        raw = bytearray(c + block_bytes + _PAD)  # zero-filled: the pad after the block
        raw[:c] = carry
        view = memoryview(raw)
        end = c
        while end < c + block_bytes:
            got = fh.readinto(view[end : c + block_bytes])
            if not got:
                break
            end += got
        del view
        eof = end < c + block_bytes
        if eof and end == 0:
            return
        cut = raw.rfind(b"\n", 0, end) if not eof else end - 1
        if not eof and cut < c:  # no newline in the block: read on
            carry = bytes(raw[:end])
            block_bytes *= 2
            continue
        n = cut + 1 if not eof else end
        carry = bytes(raw[n:end])
        complete = not eof or raw[n - 1] == 10
        if raw.find(b"\r", 0, n) >= 0:  # CRLF as LF, as open_text reads it
            text = bytes(raw[:n]).replace(b"\r\n", b"\n")
            n = len(text)
            raw = bytearray(n + _PAD)
            raw[:n] = text
        else:
            raw[n:end] = bytes(end - n)  # the pad: what the next block re-reads from the carry
        buf = np.frombuffer(raw, dtype=np.uint8)
        yield line, buf, n, bool(complete)
        line += int(np.count_nonzero(buf[:n] == 10))  # numpy: 4x bytearray.count, no GIL
        if eof:
            return
