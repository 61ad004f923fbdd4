"""Input loaders: a registry of pure parsers, content sniffing, one error boundary.

Each ``iochar/load/<kind>.py`` defines a :class:`~iochar.load._base.Loader`
and calls :func:`register` at import. :func:`sniff` asks every loader about
the first 64 KiB of content and falls back to file suffixes; :func:`parse` is
the boundary that turns anything a parser raises into
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
import pkgutil
from collections.abc import Iterator

from iochar.errors import InputError, IocharError, UnknownKindError
from iochar.load._base import BenchReader, Loader, Parsed, Skip, SkipLog
from iochar.load._text import Source, read_head, sha256_of, source_name, text_head

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

#: kind -> loader instance, filled by :func:`register`.
REGISTRY: dict[str, Loader] = {}

#: kind -> reader of benchmark output (a table for the caller, nothing for the
#: store), filled by :func:`register_bench`.
BENCH: dict[str, BenchReader] = {}

_imported = False


def register(loader: Loader) -> Loader:
    """Add ``loader`` to :data:`REGISTRY` under ``loader.kind``."""
    REGISTRY[loader.kind] = loader
    return loader


def _ensure_registered() -> None:
    global _imported
    if not _imported:
        # every public module in this package registers itself: a store loader,
        # or readers of benchmark output (bench.py)
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            if not info.name.startswith("_"):
                importlib.import_module(f"iochar.load.{info.name}")
        _imported = True


def kinds() -> list[str]:
    """Registered kinds, in sniffing order (module name order; sniffers are exclusive)."""
    _ensure_registered()
    return list(REGISTRY)


def get_loader(kind: str) -> Loader:
    """The loader registered for ``kind``.

    Raises
    ------
    UnknownKindError
        When no loader has that kind.
    """
    _ensure_registered()
    try:
        return REGISTRY[kind]
    except KeyError:
        raise UnknownKindError(f"<kind {kind!r}>", REGISTRY) from None


def register_bench(reader: BenchReader) -> BenchReader:
    """Add ``reader`` to :data:`BENCH` under ``reader.kind``."""
    BENCH[reader.kind] = reader
    return reader


def bench_kinds() -> list[str]:
    """Registered kinds of benchmark output, in sniffing order (``fio-json``, ``ior``)."""
    _ensure_registered()
    return list(BENCH)


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
    _ensure_registered()
    try:
        return BENCH[kind]
    except KeyError:
        raise UnknownKindError(f"<kind {kind!r}>", BENCH) from None


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
    _ensure_registered()
    head = read_head(src)
    name = source_name(src)
    if not head:
        raise InputError(name, None, "a non-empty input", "")
    text = text_head(head).decode("utf-8", errors="replace")
    for kind, reader in BENCH.items():
        if reader.sniff(text):
            return kind
    raise UnknownKindError(name, BENCH, got=head[:80])


def sniff(src: Source) -> str:
    """Guess the kind of ``src`` from its content, then from its suffix.

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
    _ensure_registered()
    head = read_head(src)
    name = source_name(src)
    if not head:
        raise InputError(name, None, "a non-empty input", "")
    for kind, loader in REGISTRY.items():
        if loader.sniff(head):
            return kind
    # a text input with a BOM or CRLF line ends is sniffed as it will be read
    # (iochar.load._text.open_text); binary kinds matched on the raw bytes above
    text = text_head(head)
    if text != head:
        for kind, loader in REGISTRY.items():
            if loader.sniff(text):
                return kind
    if isinstance(src, (str, os.PathLike)):
        low = os.fspath(src).lower()
        for kind, loader in REGISTRY.items():
            if any(low.endswith(s) for s in loader.suffixes):
                return kind
    raise UnknownKindError(name, REGISTRY, got=head[:80])


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
