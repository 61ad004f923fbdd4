"""Input loaders: a registry of pure parsers, content sniffing, one error boundary.

Each ``iochar/load/<kind>.py`` defines a :class:`~iochar.load._base.Loader`
and calls :func:`register` at import. The kinds, their descriptions, suffixes
and sniff functions are listed apart in :mod:`iochar.load._kinds`, a module
that imports no third-party library: :func:`kinds` and :func:`sniff` answer
from that table and a loader module is imported only when :func:`get_loader`
(or :func:`parse`) asks for its kind, so naming an input's kind or printing
``iochar --help`` costs no NumPy, pyarrow, polars or pandas import (issue 18,
item 4). :func:`sniff` asks every kind's sniff function about the first
64 KiB of content and falls back to file suffixes; :func:`parse` is the
boundary that turns anything a parser raises into
:class:`~iochar.errors.InputError` (DESIGN: nothing else escapes a loader).

Benchmark output (fio JSON, IOR text; :mod:`iochar.load.bench`) is read here
too, through a second table of the same registry: a
:class:`~iochar.load._base.BenchReader` registers with :func:`register_bench`,
:func:`bench_kinds` lists those kinds, :func:`sniff_bench` names the kind of an
input and :func:`get_bench_reader` returns its reader. Those readers give the
caller a calibration table and write nothing to the store, so they are not
among :func:`kinds` and ``iochar load`` does not take them.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from iochar.errors import InputError, IocharError, UnknownKindError
from iochar.load import _kinds
from iochar.load._base import BenchReader, Loader, Parsed, Skip, SkipLog

if TYPE_CHECKING:
    from iochar.load._text import Source

__all__ = [
    "REGISTRY",
    "register",
    "kinds",
    "get_loader",
    "sniff",
    "parse",
    "Loader",
    "Parsed",
    "Skip",
    "SkipLog",
    "Source",
    "sha256_of",
    "source_name",
    "BENCH",
    "BenchReader",
    "register_bench",
    "bench_kinds",
    "get_bench_reader",
    "sniff_bench",
]

#: kind -> loader instance, filled by :func:`register` as each loader module is
#: imported (:func:`get_loader` imports the one it is asked for; :func:`kinds`
#: names them all without importing any).
REGISTRY: dict[str, Loader] = {}

#: kind -> reader of benchmark output (a table for the caller, nothing for the
#: store), filled by :func:`register_bench` when :mod:`iochar.load.bench` is imported.
BENCH: dict[str, BenchReader] = {}

#: names re-exported from :mod:`iochar.load._text`, which imports pyarrow: loaded on
#: first use (PEP 562 module ``__getattr__``)
_FROM_TEXT = ("Source", "sha256_of", "source_name")


def __getattr__(name: str) -> Any:
    if name in _FROM_TEXT:
        from iochar.load import _text

        return getattr(_text, name)
    raise AttributeError(f"module 'iochar.load' has no attribute {name!r}")


def register(loader: Loader) -> Loader:
    """Add ``loader`` to :data:`REGISTRY` under ``loader.kind``.

    Parameters
    ----------
    loader : Loader
        An instance whose ``kind`` is listed in :data:`iochar.load._kinds.KINDS`.

    Returns
    -------
    Loader
        ``loader`` itself.
    """
    REGISTRY[loader.kind] = loader
    return loader


def _import_kind(kind: str) -> None:
    """Import the module that registers ``kind`` (nothing when it is unknown)."""
    row = _kinds.by_kind(kind)
    if row is not None:
        importlib.import_module(row.module)


def kinds() -> list[str]:
    """Store kinds, in sniffing order (module name order; sniffers are exclusive).

    Returns
    -------
    list of str
        From :data:`iochar.load._kinds.KINDS`; no loader module is imported.
    """
    return [k.kind for k in _kinds.KINDS]


def get_loader(kind: str) -> Loader:
    """The loader registered for ``kind``.

    Raises
    ------
    UnknownKindError
        When no loader has that kind.
    """
    if kind not in REGISTRY and kind in kinds():
        _import_kind(kind)
    try:
        return REGISTRY[kind]
    except KeyError:
        raise UnknownKindError(f"<kind {kind!r}>", kinds()) from None


def register_bench(reader: BenchReader) -> BenchReader:
    """Add ``reader`` to :data:`BENCH` under ``reader.kind``.

    Parameters
    ----------
    reader : BenchReader
        A reader whose ``kind`` is listed in :data:`iochar.load._kinds.BENCH_KINDS`.

    Returns
    -------
    BenchReader
        ``reader`` itself.
    """
    BENCH[reader.kind] = reader
    return reader


def bench_kinds() -> list[str]:
    """Kinds of benchmark output, in sniffing order (``fio-json``, ``ior``).

    Returns
    -------
    list of str
        From :data:`iochar.load._kinds.BENCH_KINDS`; :mod:`iochar.load.bench` is not
        imported.
    """
    return [k.kind for k in _kinds.BENCH_KINDS]


def get_bench_reader(kind: str) -> BenchReader:
    """The reader of benchmark output registered for ``kind``.

    Parameters
    ----------
    kind : str
        One of :func:`bench_kinds`.

    Returns
    -------
    BenchReader
        Its ``read(src)`` returns the calibration table.

    Raises
    ------
    UnknownKindError
        When no reader has that kind.
    """
    if kind not in BENCH and kind in bench_kinds():
        _import_kind(kind)
    try:
        return BENCH[kind]
    except KeyError:
        raise UnknownKindError(f"<kind {kind!r}>", bench_kinds()) from None


def sniff_bench(src: Source) -> str:
    """Guess which benchmark output ``src`` is from its first 64 KiB.

    Parameters
    ----------
    src : str, os.PathLike, bytes or binary file
        The input (compressed inputs are read as :func:`sniff` reads them).

    Returns
    -------
    str
        The kind, one of :func:`bench_kinds`.

    Raises
    ------
    InputError
        The input is empty or unreadable.
    UnknownKindError
        No reader recognised it; the message lists the kinds tried.
    """
    from iochar.load._text import read_head, source_name, text_head

    for kind in bench_kinds():
        _import_kind(kind)
    head = read_head(src)
    name = source_name(src)
    if not head:
        raise InputError(name, None, "a non-empty input", "")
    text = text_head(head).decode("utf-8", errors="replace")
    for kind in bench_kinds():
        if BENCH[kind].sniff(text):
            return kind
    raise UnknownKindError(name, bench_kinds(), got=head[:80])


def sniff(src: Source) -> str:
    """Guess the kind of ``src`` from its content, then from its suffix.

    The content test is :data:`iochar.load._kinds.KINDS`' sniff functions in
    order, on the first 64 KiB (decompressed); no loader module is imported.

    Parameters
    ----------
    src : str, os.PathLike, bytes or binary file
        The input.

    Returns
    -------
    str
        The kind.

    Raises
    ------
    InputError
        The input is empty or unreadable.
    UnknownKindError
        No loader recognised it; the message lists the kinds tried.
    """
    from iochar.load._text import read_head, source_name, text_head

    head = read_head(src)
    name = source_name(src)
    if not head:
        raise InputError(name, None, "a non-empty input", "")
    kind = _kinds.sniff_head(head)
    if kind is not None:
        return kind
    # a text input with a BOM or CRLF line ends is sniffed as it will be read
    # (iochar.load._text.open_text); binary kinds matched on the raw bytes above
    text = text_head(head)
    if text != head:
        kind = _kinds.sniff_head(text)
        if kind is not None:
            return kind
    if isinstance(src, (str, os.PathLike)):
        low = os.fspath(src).lower()
        for row in _kinds.KINDS:
            if any(low.endswith(s) for s in row.suffixes):
                return row.kind
    raise UnknownKindError(name, kinds(), got=head[:80])


def parse(
    src: Source, kind: str | None = None, *, strict: bool = True, chunk_rows: int = 1_000_000
) -> Iterator[Parsed]:
    """Parse ``src`` with the loader for ``kind`` (sniffed when None).

    Every exception that is not already an :class:`~iochar.errors.IocharError`
    is re-raised as :class:`~iochar.errors.InputError` naming the input.

    Parameters
    ----------
    src : str, os.PathLike, bytes or binary file
        The input.
    kind : str, optional
        Loader kind; sniffed from the content when None.
    strict : bool, default True
        False skips and counts bad records instead of raising.
    chunk_rows : int, default 1_000_000
        Approximate rows per yielded chunk; bounds memory.

    Yields
    ------
    Parsed
        Chunks of contract-shaped tables.
    """
    from iochar.load._text import source_name

    kind = kind or sniff(src)
    loader = get_loader(kind)
    name = source_name(src)
    try:
        yield from loader.parse(src, strict=strict, chunk_rows=chunk_rows)
    except IocharError:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # the boundary: nothing else escapes a loader
        raise InputError(
            name, None, f"a readable {kind} input", f"{type(exc).__name__}: {exc}", kind=kind
        ) from exc
