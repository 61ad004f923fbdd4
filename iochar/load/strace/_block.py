"""The strace loader's byte scanner: whole lines read eight bytes at a time.

Fields are decoded eight bytes at a time: each line's bytes at a position are
loaded as one little-endian uint64 (an unaligned view of the block), and
byte-wise tests set the high bit of the matching bytes ("SIMD within a
register"); numpy then does that for every line at once. :class:`_Block` holds
one block of whole lines and offers those loads, searches and zero-copy Arrow
string views to :mod:`iochar.load.strace._parser`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from iochar.load._blocks import has_high


def _lut(chars: bytes) -> np.ndarray:
    """A 256-entry lookup table, True for the bytes in ``chars``."""
    table = np.zeros(256, dtype=bool)
    table[np.frombuffer(chars, dtype=np.uint8)] = True
    return table


_POW10 = 10 ** np.arange(19, dtype=np.int64)

# ---------------------------------------------------------------- SWAR helpers
# Fields are decoded eight bytes at a time: each line's bytes at a position are
# loaded as one little-endian uint64 (an unaligned view of the block), and
# byte-wise tests set the high bit of the matching bytes ("SIMD within a
# register"); numpy then does that for every line at once.
_U64 = np.uint64
_HI = _U64(0x8080808080808080)
_LO7 = _U64(0x7F7F7F7F7F7F7F7F)
_C30 = _U64(0x3030303030303030)
_C46 = _U64(0x4646464646464646)
_ONES = _U64(0xFFFFFFFFFFFFFFFF)
_PAD = 256  # zero bytes after a block, so loads past a line never leave it


# uint64 masks keeping the lowest 0..8 bytes, by byte count
_LOW_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)


# the left shift [bits] moving a run of 1..8 leading digits to the top bytes (0 for none)
_DIGIT_SHIFT = np.array([0] + [8 * (8 - k) for k in range(1, 9)], dtype=np.uint64)


def _rep(byte: int) -> np.uint64:
    """``byte`` repeated in all eight bytes of a uint64."""
    return _U64(byte * 0x0101010101010101)


def _word(text: bytes) -> tuple[np.uint64, np.uint64]:
    """(value, mask) to compare the first len(text) <= 8 bytes of a load."""
    return (
        _U64(int.from_bytes(text, "little")),
        _U64((1 << (8 * len(text))) - 1),
    )


def _zero(y: np.ndarray) -> np.ndarray:
    """High bit set in each byte of ``y`` that is zero."""
    return ~(((y & _LO7) + _LO7) | y | _LO7) & _HI


def _eqb(w: np.ndarray, byte: int) -> np.ndarray:
    """High bit set in each byte of ``w`` equal to ``byte``."""
    return _zero(w ^ _rep(byte))


def _nondigit(w: np.ndarray) -> np.ndarray:
    """High bit set in each byte that is not an ASCII digit (bytes < 0x80)."""
    at_least_0 = ((w | _HI) - _C30) & _HI
    at_most_9 = ~(w + _C46) & _HI
    return ~(at_least_0 & at_most_9) & _HI


def _nonhex(w: np.ndarray) -> np.ndarray:
    """High bit set in each byte that is not a hex digit (0-9, a-f, A-F)."""
    low = w | _rep(0x20)
    at_least_a = ((low | _HI) - _rep(0x61)) & _HI
    at_most_f = ~(low + _rep(0x19)) & _HI
    return _nondigit(w) & ~(at_least_a & at_most_f) & _HI


# numpy >= 2.0 counts set bits (popcount); the fallback takes log2 of a float64
_POPCOUNT = getattr(np, "bitwise_count", None)


def _first(m: np.ndarray) -> np.ndarray:
    """Index of the lowest byte with its high bit set; 8 when none.

    ``m``: the high bits of bytes only (what the tests above return). The
    bits below the lowest set one, counted, are 8 per byte before it (64
    when none is set).
    """
    below = (m & (~m + _U64(1))) - _U64(1)
    if _POPCOUNT is not None:
        return _POPCOUNT(below).astype(np.int64) >> 3
    bit = np.log2(np.maximum(below + _U64(1), _U64(1)).astype(np.float64)).astype(np.int64)
    return np.where(m == 0, 8, bit >> 3)


def _last(m: np.ndarray) -> np.ndarray:
    """Index of the highest byte with its high bit set; -1 when none.

    ``m``: the high bits of bytes only (what the tests above return). Each
    set bit copied to the high bits of every byte below it leaves one bit per
    byte up to the highest: their count less one is its index.
    """
    if _POPCOUNT is not None:
        x = m | (m >> _U64(8))
        x |= x >> _U64(16)
        x |= x >> _U64(32)
        return _POPCOUNT(x).astype(np.int64) - 1
    bit = np.log2(np.maximum(m, _U64(1)).astype(np.float64)).astype(np.int64)
    return np.where(m == 0, -1, bit >> 3)


def _conv8(x: np.ndarray) -> np.ndarray:
    """Eight digit values (byte 0 the most significant) -> the number."""
    x = ((x & _U64(0x0F0F0F0F0F0F0F0F)) * _U64(2561)) >> _U64(8)
    x = ((x & _U64(0x00FF00FF00FF00FF)) * _U64(6553601)) >> _U64(16)
    x = ((x & _U64(0x0000FFFF0000FFFF)) * _U64(42949672960001)) >> _U64(32)
    return x.astype(np.int64)


def _digits(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Value and length of the leading run of decimal digits in each load.

    The run's digit values are kept (``_LOW_MASKS``) and moved to the top
    bytes, the first digit the most significant, for :func:`_conv8`; no
    digits leave 0.
    """
    n = _first(_nondigit(w))
    x = ((w - _C30) & _LOW_MASKS[n]) << _DIGIT_SHIFT[n]
    return _conv8(x), n


def _low_mask(nbytes: np.ndarray) -> np.ndarray:
    """uint64 masks keeping the lowest ``nbytes`` (0..8, clipped) bytes."""
    return _LOW_MASKS[np.clip(nbytes, 0, 8)]


class _Block:
    """Whole lines in a zero-padded byte array, read eight bytes at a time.

    Every field of every line is located and decoded with vectorized numpy
    operations on unaligned uint64 loads, and string fields become zero-copy
    Arrow string views into the same buffer.
    """

    def __init__(self, buf: np.ndarray, n: int) -> None:
        """Take ``buf`` (uint8: ``n`` bytes of whole lines, then >= ``_PAD`` zero bytes).

        Bytes >= 0x80 become ``?`` in place (strace escapes non-ASCII; only
        garbage has it). Use :meth:`of_bytes` for a ``bytes`` block.
        """
        body = buf[:n]
        if has_high(body):
            body[body >= 0x80] = ord("?")
        self.n = n
        self.buf = buf
        size = n + _PAD
        self.u64 = np.ndarray(shape=(size - 8,), dtype="<u8", buffer=buf, strides=(1,))
        self.u32 = np.ndarray(shape=(size - 4,), dtype="<u4", buffer=buf, strides=(1,))
        self.arrow = pa.py_buffer(buf)
        self._eq: np.ndarray | None = None

    @classmethod
    def of_bytes(cls, data: bytes) -> _Block:
        """A block of ``data`` (whole lines) copied into a zero-padded buffer."""
        n = len(data)
        buf = np.zeros(n + _PAD, dtype=np.uint8)
        buf[:n] = np.frombuffer(data, dtype=np.uint8)
        return cls(buf, n)

    def load(self, pos: np.ndarray) -> np.ndarray:
        """Eight bytes from each position (positions below 0 read from 0)."""
        if pos.size and pos.min() < 0:  # rare: a check first spares a temporary
            pos = np.maximum(pos, 0)
        return self.u64[pos]

    def match(self, pos: np.ndarray, word: tuple[np.uint64, np.uint64]) -> np.ndarray:
        """Whether the bytes at each position start with ``word`` (see :func:`_word`)."""
        return (self.load(pos) & word[1]) == word[0]

    def uint(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Value and length of the decimal digits at each position (<= 16)."""
        value, length = _digits(self.load(pos))
        more = np.flatnonzero(length == 8)
        if more.size:
            v2, l2 = _digits(self.load(pos[more] + 8))
            value[more] = value[more] * _POW10[l2] + v2
            length[more] += l2
        return value, length

    def span(self, pos: np.ndarray, stop, limit: int) -> np.ndarray:
        """Offset of the first byte at or after each position for which
        ``stop(load)`` sets the high bit; ``limit`` when none is that close."""
        out = np.full(pos.size, limit, dtype=np.int64)
        todo = np.arange(pos.size)
        for off in range(0, limit, 8):
            f = _first(stop(self.load(pos[todo] + off)))
            hit = f < 8
            out[todo[hit]] = np.minimum(off + f[hit], limit)
            todo = todo[~hit]
            if todo.size == 0:
                break
        return out

    def find(self, pos: np.ndarray, byte: int, limit: int) -> np.ndarray:
        """Offset of the first ``byte`` at or after each position; -1 if none
        within ``limit`` bytes."""
        out = self.span(pos, lambda w: _eqb(w, byte), limit)
        out[out >= limit] = -1
        return out

    def skip(self, pos: np.ndarray, byte: int, limit: int = 64) -> np.ndarray:
        """Length of the run of ``byte`` starting at each position."""
        return self.span(pos, lambda w: ~_eqb(w, byte) & _HI, limit)

    def skip_back(self, end: np.ndarray, byte: int, limit: int = 128) -> np.ndarray:
        """Length of the run of ``byte`` ending just before each position."""
        out = np.full(end.size, limit, dtype=np.int64)
        todo = np.arange(end.size)
        for off in range(0, limit, 8):
            h = _last(~_eqb(self.load(end[todo] - off - 8), byte) & _HI)
            hit = h >= 0
            out[todo[hit]] = off + 7 - h[hit]
            todo = todo[~hit]
            if todo.size == 0:
                break
        return out

    def last_eq(self, end: np.ndarray, start: np.ndarray, limit: int = 96) -> np.ndarray:
        """Position of the '=' of the last ' = ' before each ``end`` (after
        ``start``); -1 when there is none."""
        out = np.full(end.size, -1, dtype=np.int64)
        todo = np.arange(end.size)
        # words overlapping by two bytes, so every middle byte is checked once
        for off in range(8, limit + 8, 6):
            at = end[todo] - off
            w = self.load(at)
            sp = _eqb(w, 32)
            hit3 = _eqb(w, 61) & (sp << _U64(8)) & (sp >> _U64(8)) & _U64(0x00FFFFFFFFFFFF00)
            h = _last(hit3)
            found = (h >= 0) & (at + h > start[todo])
            out[todo[found]] = at[found] + h[found]
            todo = todo[~found & (at > start[todo])]
            if todo.size == 0:
                return out
        if todo.size:  # long tails: every ' = ' of the block, searched
            eqs = self.eqs()
            if eqs.size:
                j = np.searchsorted(eqs, end[todo]) - 1
                e = eqs[np.maximum(j, 0)]
                ok = (j >= 0) & (e > start[todo])
                out[todo[ok]] = e[ok]
        return out

    def eqs(self) -> np.ndarray:
        """Positions of every ' = ' in the block (the '=')."""
        if self._eq is None:
            b = self.buf
            c = np.flatnonzero(b[: self.n] == 61)
            c = c[c > 0]
            self._eq = c[(b[c - 1] == 32) & (b[c + 1] == 32)]
        return self._eq

    def strings(self, starts: np.ndarray, lens: np.ndarray, valid: np.ndarray) -> pa.Array:
        """Arrow string views of ``buf[start:start+len]`` (NULL where not valid)."""
        n = starts.size
        # a view is 16 bytes, two little-endian uint64 here: the length (4 bytes)
        # and the first 4 bytes; then the next 8 bytes (a string of <= 12
        # bytes, inline) or buffer 0 (4 bytes) and the offset in it (4 bytes)
        views = np.zeros((n, 2), dtype=np.uint64)
        idx = np.flatnonzero(valid)
        if idx.size:
            st = starts[idx].astype(np.int64)
            ln = np.maximum(lens[idx], 0).astype(np.int64)
            w0 = self.u64[st] & _low_mask(ln)
            w1 = self.u32[st + 8].astype(np.uint64) & _low_mask(ln - 8)
            head = ln.astype(np.uint64) | (w0 << _U64(32))
            tail = np.where(
                ln <= 12,
                (w0 >> _U64(32)) | (w1 << _U64(32)),
                (st.astype(np.uint64) & _U64(0xFFFFFFFF)) << _U64(32),
            )
            if idx.size == n:
                views[:, 0] = head
                views[:, 1] = tail
            else:
                views[idx, 0] = head
                views[idx, 1] = tail
        validity = None
        if idx.size < n:
            validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
        return pa.Array.from_buffers(
            pa.string_view(), n, [validity, pa.py_buffer(views), self.arrow]
        )

    def text(self, start: int, end: int) -> str:
        """``buf[start:end]`` as text (for messages and carried fields)."""
        return bytes(self.buf[start:end]).decode("ascii", "replace")
