"""Output columns written in place in Arrow's memory pool (shared by the text loaders).

The loaders of large counter inputs (``iostat``, ``brw_stats``) emit millions
of rows per chunk, a few tens of MB per column. A numpy array of that size is
its own ``mmap``: fresh pages each time, each costing a page fault (measured on
the 2-core benchmark machine: 10 to 150 ms for 26 MB touched for the first
time, ~3 ms once reused). Arrow's pool (mimalloc or jemalloc) keeps freed pages
for the next allocation, so the columns of one chunk reuse those of the last.
:func:`pool_arrays` hands out uninitialized numpy views of one pool buffer, which
the caller fills (broadcasting, ``out=``), then wraps as Arrow arrays without a
copy (:func:`arrow_array`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

__all__ = ["arrow_array", "dictionary", "pool_arrays", "zeros_i32"]


def pool_arrays(shape: int | tuple[int, ...], dtypes: list) -> list[tuple[np.ndarray, pa.Buffer]]:
    """Uninitialized arrays of ``shape``, one of each dtype, in one Arrow pool allocation.

    Parameters
    ----------
    shape : int or tuple of int
        Shape of every array (C order).
    dtypes : list of numpy dtype
        One array per entry.

    Returns
    -------
    list of (numpy.ndarray, pyarrow.Buffer)
        Writable views, each 64-byte aligned, and the (read-only) buffer each one
        is, for :func:`arrow_array`.
    """
    size = int(np.prod(shape))
    widths = [np.dtype(d).itemsize for d in dtypes]
    steps = [-(-w * size // 64) * 64 for w in widths]  # 64-byte aligned
    buf = pa.allocate_buffer(max(sum(steps), 1))
    mem = np.frombuffer(buf, np.uint8)  # writable; the slices of buf are not
    out, at = [], 0
    for dtype, width, step in zip(dtypes, widths, steps, strict=True):
        view = mem[at : at + width * size].view(dtype).reshape(shape)
        out.append((view, buf.slice(at, width * size)))
        at += step
    return out


def arrow_array(type_: pa.DataType, n: int, data: pa.Buffer) -> pa.Array:
    """``n`` values of a fixed-width ``type_`` (no nulls) over ``data``, without a copy."""
    return pa.Array.from_buffers(type_, n, [None, data])


def dictionary(codes: pa.Array, values: list[str]) -> pa.DictionaryArray:
    """A string column as ``values[codes]``; the int32 codes are in range by construction
    (no validation pass over them)."""
    return pa.DictionaryArray.from_arrays(codes, pa.array(values, pa.string()), safe=False)


_ZEROS = [pa.py_buffer(np.zeros(1 << 16, np.int32))]


def zeros_i32(n: int) -> pa.Array:
    """``n`` int32 zeros, views of one shared read-only buffer."""
    if _ZEROS[0].size < 4 * n:
        _ZEROS[0] = pa.py_buffer(np.zeros(max(n, 2 * _ZEROS[0].size // 4), np.int32))
    return pa.Array.from_buffers(pa.int32(), n, [None, _ZEROS[0]])
