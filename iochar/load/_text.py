"""Opening inputs: paths or buffers, transparent compression, line blocks.

Loaders accept a :data:`Source` — a path, raw ``bytes``, or an open binary
file — and use these helpers so every format handles gzip, bzip2, xz and
(when the ``zstandard`` package is present) zstd the same way, detected from
magic bytes rather than suffixes (pvlib's ``_file_context_manager`` idea).
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import hashlib
import io
import lzma
import mmap
import os
import tempfile
from collections.abc import Iterator
from typing import BinaryIO

import pyarrow as pa

from iochar.errors import InputError, MissingDependencyError

__all__ = [
    "Source",
    "source_name",
    "open_binary",
    "read_head",
    "iter_line_blocks",
    "local_path",
    "mmap_blocks",
    "sha256_of",
    "open_parquet",
    "is_compressed",
]

Source = str | os.PathLike | bytes | BinaryIO

_MAGIC = {
    b"\x1f\x8b": "gzip",
    b"BZh": "bz2",
    b"\xfd7zXZ\x00": "xz",
    b"\x28\xb5\x2f\xfd": "zstd",
}


def source_name(src: Source) -> str:
    """A printable name for a source (its path, or ``<buffer>``)."""
    if isinstance(src, (str, os.PathLike)):
        return os.fspath(src)
    name = getattr(src, "name", None)
    return name if isinstance(name, str) else "<buffer>"


def _compression(head: bytes) -> str | None:
    for magic, name in _MAGIC.items():
        if head.startswith(magic):
            return name
    return None


def is_compressed(src: Source) -> bool:
    """Whether the raw bytes of ``src`` start with a known compression magic."""
    with _open_raw(src) as fh:
        return _compression(_peek(fh, 8)) is not None


def _peek(fh: BinaryIO, n: int) -> bytes:
    if hasattr(fh, "peek"):
        return fh.peek(n)[:n]
    pos = fh.tell()
    head = fh.read(n)
    fh.seek(pos)
    return head


@contextlib.contextmanager
def _open_raw(src: Source) -> Iterator[BinaryIO]:
    if isinstance(src, (str, os.PathLike)):
        try:
            fh = open(src, "rb")
        except OSError as exc:
            raise InputError(src, None, "a readable file", exc.strerror) from exc
        with fh:
            yield fh
    elif isinstance(src, (bytes, bytearray, memoryview)):
        yield io.BufferedReader(io.BytesIO(bytes(src)))
    else:
        if hasattr(src, "seek"):
            src.seek(0)
        yield src


@contextlib.contextmanager
def open_binary(src: Source) -> Iterator[BinaryIO]:
    """Open ``src`` for binary reading, decompressing when its magic says so.

    Parameters
    ----------
    src : str, os.PathLike, bytes or binary file
        The input.

    Yields
    ------
    BinaryIO
        A readable binary stream of the (decompressed) content.
    """
    with _open_raw(src) as raw:
        comp = _compression(_peek(raw, 8))
        if comp is None:
            yield raw
        elif comp == "gzip":
            yield gzip.GzipFile(fileobj=raw)
        elif comp == "bz2":
            yield bz2.BZ2File(raw)
        elif comp == "xz":
            yield lzma.LZMAFile(raw)
        else:
            try:
                import zstandard
            except ImportError as exc:
                raise MissingDependencyError(
                    "zstandard", "all", "reading zstd-compressed input"
                ) from exc
            yield zstandard.ZstdDecompressor().stream_reader(raw)


def read_head(src: Source, n: int = 64 * 1024) -> bytes:
    """The first ``n`` bytes of the decompressed content (for sniffing)."""
    with open_binary(src) as fh:
        try:
            return fh.read(n)
        except (OSError, EOFError, lzma.LZMAError):
            return b""


def iter_line_blocks(
    fh: BinaryIO, block_bytes: int = 16 * 1024 * 1024
) -> Iterator[tuple[int, bytes, bool]]:
    """Read ``fh`` in blocks that end on a line boundary.

    Parameters
    ----------
    fh : BinaryIO
        Open binary stream.
    block_bytes : int
        Approximate block size. [bytes]

    Yields
    ------
    first_line : int
        1-based number of the block's first line.
    block : bytes
        Whole lines, each ending in ``\\n`` except possibly the very last
        line of the input.
    complete : bool
        False only for a final block whose last line has no newline (a
        truncated input, or a file written without a final newline).
    """
    line = 1
    carry = b""
    while True:
        data = fh.read(block_bytes)
        if not data:
            if carry:
                yield line, carry, False
            return
        data = carry + data
        cut = data.rfind(b"\n")
        if cut < 0:
            carry = data
            continue
        block, carry = data[: cut + 1], data[cut + 1 :]
        yield line, block, True
        line += block.count(b"\n")


def mmap_blocks(path: str, start: int, sizing: dict[str, int]) -> Iterator[tuple[pa.Buffer, bool]]:
    """Zero-copy blocks of whole lines from ``start`` on (the last may lack a newline).

    ``sizing["next"]`` is read before each block, so the caller can adapt it. [bytes]
    """
    size = os.path.getsize(path)
    if size <= start:
        return
    with open(path, "rb") as fh:
        # not closed explicitly: Arrow buffers may still view it; freed with them
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    pos = start
    while pos < size:
        end = mm.rfind(b"\n", pos, min(pos + sizing["next"], size)) + 1
        if end <= pos:  # a line longer than a block, or the unterminated last line
            nxt = mm.find(b"\n", pos)
            end = size if nxt < 0 else nxt + 1
        yield pa.py_buffer(memoryview(mm)[pos:end]), mm[end - 1 : end] == b"\n"
        pos = end


@contextlib.contextmanager
def local_path(src: Source, suffix: str = "") -> Iterator[str]:
    """A real file path holding the (decompressed) content of ``src``.

    Tools that open files themselves (Darshan's C library) need a path; a
    plain uncompressed path is passed through, anything else is copied to a
    temporary file that is removed afterwards.
    """
    if isinstance(src, (str, os.PathLike)) and not is_compressed(src):
        yield os.fspath(src)
        return
    fd, tmp = tempfile.mkstemp(suffix=suffix, prefix="iochar-")
    try:
        with os.fdopen(fd, "wb") as out, open_binary(src) as fh:
            while chunk := fh.read(1 << 20):
                out.write(chunk)
        yield tmp
    finally:
        os.unlink(tmp)


def sha256_of(src: Source) -> tuple[str, int]:
    """SHA-256 hex digest and size of the raw (undecompressed) bytes. [bytes]"""
    h = hashlib.sha256()
    size = 0
    with _open_raw(src) as fh:
        while chunk := fh.read(8 * 1024 * 1024):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def open_parquet(src: Source, *, kind: str):
    """A :class:`pyarrow.parquet.ParquetFile` over ``src`` (paths read in place).

    Parameters
    ----------
    src : str, os.PathLike, bytes or binary file
        The input; buffers and compressed files are read into memory.
    kind : str
        Loader kind, for the error message.

    Raises
    ------
    InputError
        The footer is missing or unreadable (a file cut short, or not Parquet).
    """
    import pyarrow.parquet as pq

    if isinstance(src, (str, os.PathLike)) and not is_compressed(src):
        target = os.fspath(src)
    else:
        with open_binary(src) as fh:
            target = pa.BufferReader(fh.read())
    try:
        return pq.ParquetFile(target)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(
            source_name(src),
            None,
            "a Parquet file with a valid footer (file cut short?)",
            str(exc),
            kind=kind,
        ) from exc
