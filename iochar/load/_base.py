"""The loader protocol and the chunks parsers yield.

A loader is a pure parser: it reads a :data:`~iochar.load._text.Source` and
yields :class:`Parsed` chunks of Arrow tables in the contract's layout
(:mod:`iochar.schema`). It never touches DuckDB; the store inserts what it
yields, in one transaction per input.

A :class:`BenchReader` is the other kind of parser here: it reads benchmark
output (fio, IOR) into a calibration table for the caller, not rows for the
store (:mod:`iochar.load.bench`).

This module imports no third-party library (pyarrow and pandas only name types
here), so :mod:`iochar.load` and its sniffing stay cheap to import (issue 18).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from iochar.load._text import Source

__all__ = ["Skip", "Parsed", "Loader", "BenchReader", "MAX_KEPT_SKIPS", "SkipLog"]

#: Tolerant mode keeps the first this-many skipped records verbatim.
MAX_KEPT_SKIPS = 20


@dataclass(frozen=True)
class Skip:
    """One record skipped in tolerant mode.

    Attributes
    ----------
    line : int or None
        1-based line (text) or record index (binary).
    reason : str
        Why it was skipped.
    """

    line: int | None
    reason: str


@dataclass
class SkipLog:
    """Counts skipped records and keeps the first :data:`MAX_KEPT_SKIPS`.

    Parameters
    ----------
    count : int, default 0
        Records skipped so far.
    kept : list of Skip
        The first of them, verbatim.
    """

    count: int = 0
    kept: list[Skip] = field(default_factory=list)

    def add(self, line: int | None, reason: str) -> None:
        """Record one skipped record.

        Parameters
        ----------
        line : int or None
            1-based line (text) or record index (binary).
        reason : str
            Why it was skipped.
        """
        self.count += 1
        if len(self.kept) < MAX_KEPT_SKIPS:
            self.kept.append(Skip(line, reason))


@dataclass
class Parsed:
    """A chunk of parsed rows.

    Attributes
    ----------
    tables : dict of str to pyarrow.Table
        Rows per contract table, with loader-local ``job_id``/``file_id``.
    meta : dict
        Facts about the input (``tool``, ``tool_version``, ``host``,
        ``start_ts``...). Chunks' metas are merged in order, later keys win.
    skips : SkipLog or None
        Skipped records so far (tolerant mode); the last chunk's log wins.
    warnings : list of str
        Things a user should know that are not errors.
    """

    tables: dict[str, pa.Table] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    skips: SkipLog | None = None
    warnings: list[str] = field(default_factory=list)


@runtime_checkable
class Loader(Protocol):
    """What every ``iochar/load/<kind>.py`` registers.

    Attributes
    ----------
    kind : str
        Registry key (``"strace"``).
    suffixes : tuple of str
        File suffixes used only when no sniffer recognises the content.
    description : str
        One line for ``iochar load --help``.
    """

    kind: ClassVar[str]
    suffixes: ClassVar[tuple[str, ...]]
    description: ClassVar[str]

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` (the first 64 KiB, decompressed) looks like this kind."""
        ...

    def parse(
        self, src: Source, *, strict: bool = True, chunk_rows: int = 1_000_000
    ) -> Iterator[Parsed]:
        """Parse ``src`` into contract-shaped chunks.

        Parameters
        ----------
        src : str, os.PathLike, bytes or binary file
            The input.
        strict : bool, default True
            Raise :class:`~iochar.errors.InputError` at the first bad record;
            False skips and counts them in ``Parsed.skips``.
        chunk_rows : int, default 1_000_000
            About how many rows each chunk holds; bounds memory.

        Yields
        ------
        Parsed
            Chunks with loader-local ids.
        """
        ...


@dataclass(frozen=True)
class BenchReader:
    """A reader of benchmark output, registered with :func:`iochar.load.register_bench`.

    Unlike a :class:`Loader` it returns one table to the caller (a calibration
    table, :data:`iochar.load.bench.CALIBRATION_COLUMNS`) and nothing goes to the
    store.

    Parameters
    ----------
    kind : str
        Registry key (``"fio-json"``).
    description : str
        One line saying what it reads.
    sniff : callable
        ``sniff(text) -> bool``: whether decoded text looks like this kind.
    read : callable
        ``read(src) -> pandas.DataFrame``: the table, or
        :class:`~iochar.errors.InputError` naming the file and line.
    """

    kind: str
    description: str
    sniff: Callable[[str], bool]
    read: Callable[[Source], pd.DataFrame]
