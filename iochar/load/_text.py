"""Opening inputs: paths or buffers, transparent compression, line blocks.

Loaders accept a :data:`Source` — a path, raw ``bytes``, or an open binary
file — and use these helpers so every format handles gzip, bzip2, xz and
(when the ``zstandard`` package is present) zstd the same way, detected from
magic bytes rather than suffixes (pvlib's ``_file_context_manager`` idea).

Text kinds read through :func:`open_text` (or ``local_path(..., text=True)``),
which accept the two harmless variants an editor or a Windows tool leaves in a
text file: a leading UTF-8 byte order mark is dropped (Unicode 15, section 23.8:
U+FEFF at the start of a stream is a signature, not content) and CRLF line ends
become LF (RFC 4180 and Windows tools end lines with CRLF). Lines keep their
numbers, so every message still names the right line.

A compressed stream that ends early or is corrupt raises
:class:`~iochar.errors.InputError` at the byte of decompressed content where
it broke; :func:`open_text` names the line instead.
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
from typing import TYPE_CHECKING, BinaryIO

from iochar.errors import InputError, MissingDependencyError

if TYPE_CHECKING:  # pyarrow is imported where buffers are made, not to sniff a kind
    import pyarrow as pa

__all__ = [
    "Source",
    "source_name",
    "open_binary",
    "open_text",
    "text_head",
    "BOM",
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


#: The UTF-8 byte order mark; at the start of a text input it is dropped.
BOM = b"\xef\xbb\xbf"

#: What the decompressors raise on a stream cut short or corrupt.
_STREAM_ERRORS: tuple[type[BaseException], ...] = (EOFError, OSError, lzma.LZMAError)
try:  # zstandard's own error type, when it is installed
    import zstandard as _zstd

    _STREAM_ERRORS += (_zstd.ZstdError,)
except ImportError:  # pragma: no cover - the [all] extra installs it
    pass


def source_name(src: Source) -> str:
    """A printable name for a source (its path, or ``<buffer>``).

    Parameters
    ----------
    src : str, os.PathLike, bytes or binary file
        The input.

    Returns
    -------
    str
        The path, a file object's ``name``, or ``"<buffer>"``.
    """
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
            return
        if comp == "gzip":
            stream = gzip.GzipFile(fileobj=raw)
        elif comp == "bz2":
            stream = bz2.BZ2File(raw)
        elif comp == "xz":
            stream = lzma.LZMAFile(raw)
        else:
            try:
                import zstandard
            except ImportError as exc:
                raise MissingDependencyError(
                    "zstandard", "all", "reading zstd-compressed input"
                ) from exc
            stream = _ZstdReader(raw, zstandard)
        yield _Checked(stream, source_name(src), comp)


class _ZstdReader(io.RawIOBase):
    """zstd frames decompressed one after another.

    zstandard's ``stream_reader`` returns ``b""`` at the end of a source that
    stops inside a frame, which would read a cut file as a shorter one; this
    reader raises ``EOFError`` there, as gzip, bz2 and xz do.
    """

    def __init__(self, raw: BinaryIO, zstandard) -> None:
        self._raw, self._zstd = raw, zstandard
        self._dec = None  # the current frame's decompressor
        self._buf = b""  # decompressed, not yet returned
        self._next = b""  # compressed bytes after the current frame

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        while not self._buf:
            chunk, self._next = self._next or self._raw.read(1 << 17), b""
            if not chunk:
                if self._dec is not None and not self._dec.eof:
                    raise EOFError("zstd stream ended inside a frame")
                return b""
            if self._dec is None or self._dec.eof:
                self._dec = self._zstd.ZstdDecompressor().decompressobj()
            self._buf = self._dec.decompress(chunk)
            if self._dec.eof:
                self._next = self._dec.unused_data
        if n is None or n < 0:
            out, self._buf = self._buf, b""
        else:
            out, self._buf = self._buf[:n], self._buf[n:]
        return out

    read1 = read


class _Checked(io.RawIOBase):
    """A decompressing stream whose read errors become :class:`InputError`.

    gzip raises ``EOFError`` on a stream cut short and ``BadGzipFile``
    (an ``OSError``) on a corrupt one, bz2 and xz ``EOFError``/``OSError``/
    ``LZMAError``, zstd ``ZstdError``: all mean the input is cut short or
    damaged, and are reported at the byte of decompressed content reached.
    """

    #: Bytes decompressed per step, so the content before a break is delivered
    #: before the error (a reader then knows the line it broke in). [bytes]
    STEP = 1 << 20

    def __init__(self, stream: BinaryIO, name: str, comp: str) -> None:
        self._stream, self._name, self._comp = stream, name, comp
        self.pos = 0  # decompressed bytes delivered [bytes]
        self._error: InputError | None = None  # raised at the next read
        self._read1 = getattr(stream, "read1", stream.read)

    def readable(self) -> bool:
        return True

    def _fail(self, exc: BaseException) -> InputError:
        return InputError(
            self._name,
            self.pos,
            f"a complete {self._comp} stream (the file is cut short or corrupt)",
            f"{type(exc).__name__}: {exc}",
            unit="byte",
        )

    def read(self, n: int = -1) -> bytes:
        if self._error is not None:
            raise self._error
        parts: list[bytes] = []
        got = 0
        while n is None or n < 0 or got < n:
            want = self.STEP if n is None or n < 0 else min(self.STEP, n - got)
            try:  # read1: one decompression step, so what came before a break is kept
                data = self._read1(want)
            except _STREAM_ERRORS as exc:
                self._error = self._fail(exc)
                self._error.__cause__ = exc
                if not parts:
                    raise self._error from exc
                break
            if not data:
                break
            parts.append(data)
            got += len(data)
            self.pos += len(data)
        return b"".join(parts)

    def readinto(self, buf) -> int:
        data = self.read(len(buf))
        buf[: len(data)] = data
        return len(data)

    def readline(self, size: int | None = -1) -> bytes:
        if self._error is not None:
            raise self._error
        try:
            data = self._stream.readline(-1 if size is None else size)
        except _STREAM_ERRORS as exc:
            raise self._fail(exc) from exc
        self.pos += len(data)
        return data

    def close(self) -> None:
        self._stream.close()
        super().close()


class _TextReader(io.RawIOBase):
    """A binary stream with a leading UTF-8 BOM dropped and CRLF turned into LF.

    A ``\\r`` at the end of one read is held back until the next shows whether
    a ``\\n`` follows, so a CRLF split across reads is still joined; a lone
    ``\\r`` is kept (it is not a line end).
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._start = True
        self._held = b""  # a trailing CR, or the first bytes while the BOM is undecided
        self._out = b""  # normalized bytes not yet delivered
        self._lines = 0  # newlines read so far

    def readable(self) -> bool:
        return True

    def _read_raw(self, n: int) -> bytes:
        try:
            data = self._stream.read(n)
        except InputError as exc:  # a compressed stream broke: name the line it broke in
            if exc.unit != "byte":
                raise
            raise InputError(
                exc.path, self._lines + self._held.count(b"\n") + 1, exc.expected, exc.got
            ) from exc
        self._lines += data.count(b"\n")
        return data

    def _fill(self, n: int) -> None:
        while not self._out:
            data = self._read_raw(max(n, 4))
            if not data:
                self._out, self._held = self._held, b""
                return
            data = self._held + data
            self._held = b""
            if self._start:
                if len(data) < len(BOM) and BOM.startswith(data):
                    self._held = data
                    continue
                if data.startswith(BOM):
                    data = data[len(BOM) :]
                self._start = False
            if data.endswith(b"\r"):
                data, self._held = data[:-1], b"\r"
            self._out = data.replace(b"\r\n", b"\n")

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            parts = []
            while chunk := self.read(1 << 20):
                parts.append(chunk)
            return b"".join(parts)
        self._fill(n)
        out, self._out = self._out[:n], self._out[n:]
        return out

    def readinto(self, buf) -> int:
        data = self.read(len(buf))
        buf[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._stream.close()
        super().close()


@contextlib.contextmanager
def open_text(src: Source) -> Iterator[BinaryIO]:
    """Open a text input: :func:`open_binary`, less a BOM, with CRLF read as LF.

    Parameters
    ----------
    src : str, os.PathLike, bytes or binary file
        The input.

    Yields
    ------
    BinaryIO
        A buffered binary stream of the decompressed content with a leading
        UTF-8 byte order mark dropped and every CRLF turned into LF (see the
        module docstring for the rule and its source). Line numbers are those
        of the original input.
    """
    with open_binary(src) as fh:
        yield io.BufferedReader(_TextReader(fh), buffer_size=1 << 20)


def text_head(head: bytes) -> bytes:
    """``head`` as :func:`open_text` would read it (no BOM, CRLF as LF)."""
    if head.startswith(BOM):
        head = head[len(BOM) :]
    return head.replace(b"\r\n", b"\n")


def read_head(src: Source, n: int = 64 * 1024) -> bytes:
    """The first ``n`` bytes of the decompressed content (for sniffing)."""
    with open_binary(src) as fh:
        # a compressed stream broken inside the head gives what came before the
        # break; one broken before any content raises InputError
        return fh.read(n)


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
    A block's pages are dropped from the resident set when the next is asked for
    (``MADV_DONTNEED``; they are read again from the file if still used), so the
    file's mapped pages do not pile up in RSS as the load goes.
    """
    import pyarrow as pa

    size = os.path.getsize(path)
    if size <= start:
        return
    with open(path, "rb") as fh:
        # not closed explicitly: Arrow buffers may still view it; freed with them
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    pos = start
    page = mmap.PAGESIZE
    dropped = 0  # pages before this offset were handed back to the kernel
    while pos < size:
        end = mm.rfind(b"\n", pos, min(pos + sizing["next"], size)) + 1
        if end <= pos:  # a line longer than a block, or the unterminated last line
            nxt = mm.find(b"\n", pos)
            end = size if nxt < 0 else nxt + 1
        yield pa.py_buffer(memoryview(mm)[pos:end]), mm[end - 1 : end] == b"\n"
        # the caller asks for the next block once it has parsed this one: its pages
        # leave the resident set (madvise(2) MADV_DONTNEED on a read-only file
        # mapping: a later read of them faults the file's bytes in again), so the
        # memory of a load stays one block, not the whole file
        upto = (end // page) * page
        if upto > dropped and hasattr(mm, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
            mm.madvise(mmap.MADV_DONTNEED, dropped, upto - dropped)
            dropped = upto
        pos = end


@contextlib.contextmanager
def local_path(src: Source, suffix: str = "", *, text: bool = False) -> Iterator[str]:
    """A real file path holding the (decompressed) content of ``src``.

    Tools that open files themselves (Darshan's C library) need a path; a
    plain uncompressed path is passed through, anything else is copied to a
    temporary file that is removed afterwards.

    Parameters
    ----------
    src : str, os.PathLike, bytes or binary file
        The input.
    suffix : str, optional
        Suffix of the temporary file.
    text : bool, default False
        A text input: the path holds it as :func:`open_text` reads it. A
        plain file is still passed through unless it starts with a BOM or its
        first 64 KiB hold a CRLF (then it is copied, normalized; CRLF files
        are rare and the copy keeps the readers on one line-end convention).
    """
    if isinstance(src, (str, os.PathLike)) and not is_compressed(src):
        if not text:
            yield os.fspath(src)
            return
        with _open_raw(src) as fh:
            head = fh.read(64 * 1024)
        if not head.startswith(BOM) and b"\r\n" not in head:
            yield os.fspath(src)
            return
    opener = open_text if text else open_binary
    fd, tmp = tempfile.mkstemp(suffix=suffix, prefix="iochar-")
    try:
        with os.fdopen(fd, "wb") as out, opener(src) as fh:
            while chunk := fh.read(1 << 20):
                out.write(chunk)
        yield tmp
    finally:
        os.unlink(tmp)


def sha256_of(src: Source) -> tuple[str, int]:
    """SHA-256 hex digest of the content, and the size of the raw bytes.

    The digest is taken over the decompressed stream (what :func:`open_binary`
    reads), so a gzip, bzip2, xz or zstd copy of an input has the digest of
    the input itself: the store recognises it as the same content. The size
    is that of the file as stored (compressed or not). [bytes]

    Parameters
    ----------
    src : str, os.PathLike, bytes or binary file
        The input.

    Returns
    -------
    tuple of (str, int)
        The hex digest and the raw size [bytes].

    Raises
    ------
    InputError
        A compressed stream that is cut short or corrupt (at the byte where
        it broke).
    """
    h = hashlib.sha256()
    with open_binary(src) as fh:
        while chunk := fh.read(8 * 1024 * 1024):
            h.update(chunk)
    with _open_raw(src) as raw:
        if isinstance(src, (str, os.PathLike)):
            size = os.fstat(raw.fileno()).st_size
        else:
            raw.seek(0, os.SEEK_END)
            size = raw.tell()
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
    import pyarrow as pa
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
