"""The store: the one place that owns the DuckDB database.

The store creates the contract tables (:mod:`iochar.schema`), records the
schema version, and is the only writer: every input is loaded in one
transaction (all of its rows land, or none do), its provenance goes to
``sources``, and the same bytes loaded twice are recognised by SHA-256 and
not loaded again (the digest is over the decompressed content, so a gzip
copy of a loaded file is the same input).

Examples
--------
>>> import iochar
>>> db = iochar.connect(":memory:")
>>> res = db.load(b"op,t_start,size\\nwrite,0.5,4096\\n", kind="trace-csv")
>>> res.rows["ops"]
1
>>> db.load(b"op,t_start,size\\nwrite,0.5,4096\\n", kind="trace-csv").duplicate
True

Many small inputs load faster with :meth:`Store.load_many`: several inputs per
transaction, each still all or nothing.
"""

from __future__ import annotations

import collections
import contextlib
import datetime as _dt
import json
import os
import re
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from iochar import _parallel, schema
from iochar import load as _load
from iochar.errors import (
    DatabaseLockedError,
    InputError,
    IocharError,
    ParameterError,
    SkippedRecordsWarning,
)
from iochar.load import Skip, Source, sha256_of, source_name
from iochar.load._text import is_compressed

__all__ = ["Store", "LoadResult", "default_path", "default_wait", "DEFAULT_WAIT"]

#: Tables whose rows describe an input or name things in it, not its records: a
#: tolerant load that landed rows only here kept nothing valid and is refused.
_DESCRIPTIVE_TABLES = frozenset({"jobs", "files", "snapshots"})

#: Id sequences the store allocates, and which table/column holds them.
_ID_KINDS = {
    "job_id": ("jobs", "job_id"),
    "file_id": ("files", "file_id"),
    "snapshot_id": ("snapshots", "snapshot_id"),
}

ProgressFn = Callable[[int, int | None], None]


def default_path() -> str:
    """``$IOCHAR_DB`` when set, else ``./iochar.duckdb``."""
    return os.environ.get("IOCHAR_DB") or "iochar.duckdb"


#: Seconds a store keeps retrying to open a database another process holds. [s]
DEFAULT_WAIT = 5.0

#: DuckDB's words for "another process holds the file lock" (duckdb 1.x and 2.x).
_LOCK_RE = re.compile(r"Could not set lock on file|Conflicting lock is held")
_HOLDER_RE = re.compile(r"Conflicting lock is held in (.*?) \(PID (\d+)\)")


def default_wait() -> float:
    """``$IOCHAR_WAIT`` (seconds) when set, else :data:`DEFAULT_WAIT` (5 s).

    Raises
    ------
    IocharError
        When ``$IOCHAR_WAIT`` is not a number >= 0.
    """
    text = os.environ.get("IOCHAR_WAIT", "").strip()
    if not text:
        return DEFAULT_WAIT
    try:
        return _check_wait(text)
    except ParameterError:
        raise IocharError(f"$IOCHAR_WAIT must be a number of seconds >= 0, got {text!r}") from None


def _check_wait(wait: Any, caller: str = "Store") -> float:
    try:
        value = float(wait)
    except (TypeError, ValueError):
        value = float("nan")
    if not value >= 0 or isinstance(wait, bool):  # NaN and negatives fail here
        raise ParameterError("wait", caller, "a number of seconds >= 0", wait)
    return value


@dataclass
class LoadResult:
    """What one :meth:`Store.load` did.

    Attributes
    ----------
    source_id : int or None
        Id of the input in ``sources`` (the earlier one for a duplicate); None
        when ``error`` is set.
    kind : str
        Loader kind used.
    uri : str
        Absolute path of the input, or ``<buffer>``.
    sha256 : str
        SHA-256 of the input's content (decompressed: a gzip copy of a loaded
        file has the file's digest).
    duplicate : bool
        True when this content was already loaded; nothing was written.
    rows : dict of str to int
        Rows landed per table.
    skipped : int
        Records skipped in tolerant mode.
    skips : list of Skip
        The first skipped records, with line and reason.
    warnings : list of str
        Loader remarks worth reading.
    meta : dict
        The loader's facts about the input, as stored in ``sources.meta``.
    seconds : float
        Wall-clock time of the load. [s]
    error : IocharError or None
        Why :meth:`Store.load_many` left this input out (an
        :class:`~iochar.errors.InputError` for bad input); nothing of it landed.
        Always None from :meth:`Store.load`, which raises instead.
    """

    source_id: int | None
    kind: str
    uri: str
    sha256: str
    duplicate: bool = False
    rows: dict[str, int] = field(default_factory=dict)
    skipped: int = 0
    skips: list[Skip] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    error: IocharError | None = None

    @property
    def total_rows(self) -> int:
        """Rows landed, all tables."""
        return sum(self.rows.values())

    def summary(self) -> str:
        """One human line: what landed where, that it was a duplicate, or why it did not."""
        if self.error is not None:
            return f"{self.uri}: not loaded: {self.error}"
        if self.duplicate:
            return (
                f"{self.uri}: already loaded as source {self.source_id} "
                f"(sha256 {self.sha256[:12]}); nothing changed"
            )
        parts = ", ".join(f"{t} {n:,}" for t, n in self.rows.items() if n)
        msg = f"{self.uri}: source {self.source_id} [{self.kind}] -> {parts or 'no rows'}"
        if self.skipped:
            msg += f"; skipped {self.skipped:,} bad records"
        return msg


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (_dt.datetime, _dt.date)):
        return obj.isoformat()
    if isinstance(obj, Skip):
        return {"line": obj.line, "reason": obj.reason}
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


class Store:
    """An iochar database: the contract tables in one DuckDB file.

    Parameters
    ----------
    path : str or os.PathLike, optional
        Database file, or ``":memory:"``. Default :func:`default_path`.
    read_only : bool, default False
        Open without write access.
    wait : float, optional
        While another process holds the file (DuckDB allows one writer or several
        readers), keep retrying this long before raising
        :class:`~iochar.errors.DatabaseLockedError`; 0 fails at once. Default
        :func:`default_wait` (``$IOCHAR_WAIT``, else 5 s). Also used when the
        connection is reopened after :meth:`release`. [s]

    Attributes
    ----------
    path : str
        The database path.
    con : duckdb.DuckDBPyConnection
        The connection (read with it freely; write only through the store). After
        :meth:`release` the next use of ``con`` (or of any method) opens it again.
    wait : float
        Seconds to retry opening a locked file. [s]

    Raises
    ------
    DatabaseLockedError
        When another process still holds the file after ``wait`` seconds.
    IocharError
        When the file cannot be opened otherwise, or is not an iochar database of
        this schema version.
    """

    #: how to wait longer, the last clause of a DatabaseLockedError (the CLI and the
    #: notebooks name their own option)
    _retry = "retry with a longer wait=SECONDS"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        read_only: bool = False,
        wait: float | None = None,
    ):
        self.path = os.fspath(path) if path is not None else default_path()
        self.read_only = read_only
        self.wait = default_wait() if wait is None else _check_wait(wait)
        self._con: duckdb.DuckDBPyConnection | None = None
        self._closed = False
        # next free ids and the mark of ``sources`` they were read at (see _cursor)
        self._ids: dict[str, int] | None = None
        self._ids_mark: tuple[int, int] | None = None
        self._open()

    # ------------------------------------------------------------------ connection
    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection, opened again on first use after :meth:`release`."""
        if self._con is None:
            if self._closed:
                raise IocharError(f"database {self.path!r} is closed")
            self._open()
        return self._con

    def _open(self) -> None:
        """Connect, retrying for ``self.wait`` seconds while another process holds the lock."""
        t0 = time.monotonic()
        pause = 0.05
        while True:
            try:
                con = duckdb.connect(self.path, read_only=self.read_only)
                break
            except duckdb.Error as exc:
                text = str(exc)
                if not _LOCK_RE.search(text):
                    raise IocharError(f"cannot open database {self.path!r}: {exc}") from exc
                waited = time.monotonic() - t0
                if waited >= self.wait:
                    m = _HOLDER_RE.search(text)
                    raise DatabaseLockedError(
                        os.path.abspath(self.path),
                        int(m.group(2)) if m else None,
                        m.group(1) if m else None,
                        self.wait,
                        self._retry,
                        holder_writes=self.read_only,  # only a writer keeps readers out
                    ) from None
                time.sleep(min(pause, self.wait - waited))
                pause = min(pause * 2, 0.5)
        try:
            con.execute("SET enable_progress_bar = false")
        except duckdb.InvalidInputException:
            # in a Jupyter kernel without ipywidgets DuckDB refuses to touch the setting
            # at all; it cannot draw a bar there either, so there is nothing to switch off
            pass
        self._con = con
        self._ids = self._ids_mark = None  # another process may have written meanwhile
        try:
            self._init_schema()
        except BaseException:
            self._con = None
            con.close()  # do not keep holding a file we refuse
            raise
        self._reclaim()

    def _reclaim(self) -> None:
        """Give back the file space a killed or failed load left behind.

        A load's rows that do not fit in memory are written to blocks of the
        database file before ``COMMIT``. When the process is killed, those
        blocks are past the end DuckDB's header records, and when the load
        is rolled back they are free; DuckDB reuses free blocks but never
        shrinks the file (measured: a ``kill -9`` during an 8M-row load left
        a 2.4 MB database at 47 MB, and ``CHECKPOINT`` kept it so).

        Rule: when the dead bytes (file size minus the bytes of used blocks,
        :data:`_RECLAIM_MIN` at least) exceed the live ones, the database is
        copied into a fresh file (``COPY FROM DATABASE``: tables, constraints
        and rows) and that file replaces this one. Copying the live bytes to
        free at least as many dead ones keeps the cost in proportion. The
        copy is made while this connection still holds DuckDB's lock on the
        file and is renamed over it atomically (``os.replace``), so no other
        process can write between copy and rename, and a crash at any point
        leaves either the old file or the new one, whole. Read-only and
        in-memory stores are left alone.
        """
        if self.read_only or not self.path or self.path.startswith(":memory:"):
            return
        con = self._con
        if con is None:
            return
        try:
            size = os.path.getsize(self.path)
        except OSError:
            return
        block, total, free = con.execute(
            "SELECT block_size, total_blocks, free_blocks FROM pragma_database_size() "
            "WHERE database_name = current_database()"
        ).fetchall()[0]
        live = (total - free) * block
        dead = size - live
        if dead < max(_RECLAIM_MIN, live):
            return
        fresh = f"{self.path}.iochar-compact"
        with contextlib.suppress(FileNotFoundError):
            os.remove(fresh)
        try:
            con.execute("CHECKPOINT")
            name = con.execute("SELECT current_database()").fetchall()[0][0]
            con.execute("ATTACH $p AS iochar_compact", {"p": fresh})
            try:
                quoted = '"' + name.replace('"', '""') + '"'
                con.execute(f"COPY FROM DATABASE {quoted} TO iochar_compact")
            finally:
                con.execute("DETACH iochar_compact")
            os.replace(fresh, self.path)
        except (duckdb.Error, OSError) as exc:
            with contextlib.suppress(OSError):
                os.remove(fresh)
            warnings.warn(
                f"{self.path}: could not give back {dead / 2**20:.0f} MiB of dead space "
                f"left by a failed load ({type(exc).__name__}: {exc})",
                stacklevel=3,
            )
            return
        # this connection still has the old file, now unlinked: reopen the new one
        self._con = None
        con.close()
        self._open()

    def release(self) -> None:
        """Close the connection but keep the store: the next query opens it again.

        Between a release and the next use the file is free for other processes
        (``iochar load`` while a notebook stays open; :func:`iochar.notebook.open_store`
        releases after every cell). Relations from :meth:`sql`, cursors, registered
        views and temporary tables made before the release do not survive it. An
        in-memory database is never released (it would be lost).
        """
        if self._con is None or not self.path or self.path.startswith(":memory:"):
            return
        con, self._con = self._con, None
        con.close()

    # ------------------------------------------------------------------ schema
    def _init_schema(self) -> None:
        have = {
            r[0]
            for r in self.con.sql("SELECT table_name FROM information_schema.tables").fetchall()
        }
        if "iochar_meta" in have:
            row = self.con.execute(
                "SELECT value FROM iochar_meta WHERE key = 'schema_version'"
            ).fetchall()
            version = int(row[0][0]) if row else None
            if version != schema.SCHEMA_VERSION:
                raise IocharError(
                    f"database {self.path!r} has iochar schema version {version}; "
                    f"this iochar uses version {schema.SCHEMA_VERSION}"
                )
            return
        if self.read_only:
            raise IocharError(f"database {self.path!r} is not an iochar database")
        self.con.execute("BEGIN TRANSACTION")
        try:
            self.con.execute(
                "CREATE TABLE iochar_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)"
            )
            self.con.execute(
                "INSERT INTO iochar_meta VALUES ('schema_version', $v), ('created_at', $t)",
                {"v": str(schema.SCHEMA_VERSION), "t": _now().isoformat()},
            )
            for stmt in schema.ddl():
                self.con.execute(stmt)
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        # the tables were just made empty: every id starts at 0, and the mark of an
        # empty ``sources`` is (0 rows, highest id -1), so the first load's cursor
        # check needs no max() over the tables (see _cursor)
        self._ids = {"source_id": 0, **dict.fromkeys(_ID_KINDS, 0)}
        self._ids_mark = (0, -1)

    @property
    def schema_version(self) -> int:
        """The schema version recorded in the database."""
        row = self.con.execute(
            "SELECT value FROM iochar_meta WHERE key = 'schema_version'"
        ).fetchall()
        return int(row[0][0])

    def tables(self) -> list[str]:
        """Contract tables present in the database."""
        have = {
            r[0]
            for r in self.con.sql("SELECT table_name FROM information_schema.tables").fetchall()
        }
        return [t for t in schema.TABLES if t in have]

    # ------------------------------------------------------------------ reading
    def sql(self, query: str, params: dict[str, Any] | list[Any] | None = None):
        """Run a query; returns a DuckDB relation (``.df()``, ``.pl()``, ``.fetchall()``).

        Parameters
        ----------
        query : str
            SQL text. Bind values as ``$name`` with ``params``; never format them in.
        params : dict or list, optional
            Bound parameter values.
        """
        return self.con.sql(query, params=params)

    def row_counts(self) -> dict[str, int]:
        """Rows per contract table."""
        return {
            t: self.con.sql(f'SELECT count(*) FROM "{t}"').fetchall()[0][0]  # t from schema
            for t in self.tables()
        }

    def sources(self):
        """The ``sources`` table as a pandas DataFrame."""
        return self.con.sql("SELECT * FROM sources ORDER BY source_id").df()

    def find_source(self, sha256: str) -> int | None:
        """The ``source_id`` of already-loaded bytes, if any.

        Parameters
        ----------
        sha256 : str
            Hex SHA-256 of the input bytes.

        Returns
        -------
        int or None
            The earlier source, or None.
        """
        row = self.con.execute(
            "SELECT source_id FROM sources WHERE sha256 = $h", {"h": sha256}
        ).fetchall()
        return int(row[0][0]) if row else None

    # ------------------------------------------------------------------ loading
    def load(
        self,
        src: Source,
        *,
        kind: str | None = None,
        strict: bool = True,
        chunk_rows: int = 1_000_000,
        progress: ProgressFn | None = None,
    ) -> LoadResult:
        """Load one input in one transaction.

        Parameters
        ----------
        src : str, os.PathLike, bytes or binary file
            The input.
        kind : str, optional
            Loader kind (see ``iochar.load.kinds()``); sniffed when None.
        strict : bool, default True
            False skips and counts bad records (reported in the result,
            ``sources.meta`` and one :class:`~iochar.errors.SkippedRecordsWarning`).
        chunk_rows : int, default 1_000_000
            Rows per parsed chunk; bounds memory.
        progress : callable, optional
            Called as ``progress(rows_so_far, None)`` after each chunk.

        Returns
        -------
        LoadResult
            What landed, or ``duplicate=True`` when the bytes were loaded before.

        Raises
        ------
        InputError
            Bad input; the database is left exactly as it was.

        Notes
        -----
        A file of at least :data:`_OVERLAP_BYTES` on disk is hashed in one
        thread and parsed one chunk ahead in another while the previous chunk
        is inserted; a smaller one is hashed, then parsed, in the calling
        thread (starting two threads costs more than they overlap on a small
        input). Many small inputs load faster with :meth:`load_many`.
        """
        if self.read_only:
            raise IocharError(f"database {self.path!r} is open read-only")
        if not isinstance(chunk_rows, int) or chunk_rows < 1:
            raise ParameterError("chunk_rows", "Store.load", "an int >= 1", chunk_rows)
        t0 = time.perf_counter()
        name = source_name(src)
        is_path = isinstance(src, (str, os.PathLike))
        uri = str(Path(name).resolve()) if is_path else name
        asked = kind  # the kind the caller named, if any
        on_disk = _disk_size(src) if is_path else 0  # [bytes]
        overlap = on_disk >= _OVERLAP_BYTES
        if overlap:  # hash in the background while the first chunk is parsed
            hasher = ThreadPoolExecutor(1, thread_name_prefix="iochar-sha256")
            hashed = hasher.submit(sha256_of, src)
        else:  # small, a buffer or an open file: one reader at a time
            hasher, hashed = None, None
            try:
                digest, size = sha256_of(src)
            except InputError as exc:
                raise _parse_error(src, kind, strict, exc) from exc
        chunks = limit = None
        try:
            if hashed is None:
                earlier = self.find_source(digest)
                if earlier is not None:
                    return self._duplicate(earlier, uri, digest, t0, asked)
            kind = kind or _load.sniff(src)
            _load.get_loader(kind)  # an unknown kind fails before the transaction
            chunks = _load.parse(src, kind, strict=strict, chunk_rows=chunk_rows)
            if overlap:
                chunks = _Prefetch(chunks, rows=_INSERT_ROWS)
            late = None  # the hash, when it is checked only before COMMIT

            def hashed_digest() -> tuple[str, int]:
                try:
                    return hashed.result()
                except InputError as exc:
                    raise _parse_error(src, kind, strict, exc) from exc

            if hashed is not None and self._may_hold(uri, src, on_disk):
                digest, size = hashed_digest()
                earlier = self.find_source(digest)
                if earlier is not None:
                    return self._duplicate(earlier, uri, digest, t0, asked)
            elif hashed is not None:
                digest, size = "", on_disk

                def late(inp: _Input) -> None:
                    inp.digest, inp.size = hashed_digest()
                    earlier = self.find_source(inp.digest)
                    if earlier is not None:
                        raise _LateDuplicate(earlier, inp.digest)

            if overlap:
                # rows of a chunk may land in any order (reads must ORDER BY anyway);
                # this lets DuckDB append in parallel, about 1.5x faster
                self.con.execute("SET preserve_insertion_order = false")
                limit = self._bound_memory()
            self.con.execute("BEGIN TRANSACTION")
            try:
                ids = self._cursor()
                result = self._load_in_transaction(
                    chunks, _Input(kind, uri, digest, size), ids, progress, late
                )
                self.con.execute("COMMIT")
                if limit is not None:  # write the blocks out under the bound
                    self.con.execute("CHECKPOINT")
            except _LateDuplicate as dup:
                self.con.execute("ROLLBACK")
                self._reclaim()
                return self._duplicate(dup.earlier, uri, dup.digest, t0, asked)
            except BaseException:
                self.con.execute("ROLLBACK")
                self._reclaim()
                raise
            self._committed(ids, 1)
        finally:
            if overlap:
                self.con.execute("RESET preserve_insertion_order")
                if limit is not None:
                    self.con.execute(f"SET memory_limit = '{limit}'")
            if chunks is not None:
                chunks.close()
            if hasher is not None:
                hasher.shutdown(wait=True, cancel_futures=True)
        result.seconds = time.perf_counter() - t0
        _warn_skips(result)
        return result

    def load_many(
        self,
        srcs: Iterable[Source],
        *,
        kind: str | None = None,
        strict: bool = True,
        batch: int = 200,
        batch_rows: int = 1_000_000,
        chunk_rows: int = 1_000_000,
        progress: ProgressFn | None = None,
        workers: int | None = None,
    ) -> list[LoadResult]:
        """Load many inputs, several per transaction, each still all or nothing.

        Small inputs are hashed and parsed completely first; those that parse
        are written together in one transaction (one insert per table for the
        whole batch), so a batch commits or vanishes as a whole and every
        input in it is either wholly in the database or not at all. An input
        that fails to parse is left out of its batch and reported in its
        result (``error``); the others land. When a batch's transaction fails
        in the database, it is rolled back and its inputs are written again
        one per transaction, so one bad write costs only its own input. Bytes
        loaded before, or twice in ``srcs``, land once (SHA-256 in
        ``sources``). A file of at least :data:`_OVERLAP_BYTES` on disk is not
        held in memory: it goes through :meth:`load` (streamed, its own
        transaction) at its place in the order.

        Parameters
        ----------
        srcs : iterable of str, os.PathLike, bytes or binary file
            The inputs; ids are given in this order, as by calling
            :meth:`load` on each in turn.
        kind : str, optional
            Loader kind for every input; each is sniffed when None.
        strict : bool, default True
            As for :meth:`load`.
        batch : int, default 200
            Most inputs written in one transaction.
        batch_rows : int, default 1_000_000
            A batch is written once its parsed inputs hold this many rows
            (bounds memory: a Darshan ``module_counters`` row is about 70
            bytes in Arrow, held twice while the batch is written).
        chunk_rows : int, default 1_000_000
            Rows per parsed chunk, as for :meth:`load`.
        progress : callable, optional
            Called as ``progress(inputs_done, inputs_total)`` after each batch
            and each input loaded on its own.
        workers : int, optional
            Processes that parse small file inputs (:mod:`iochar._parallel`;
            this process still writes every row). None: every core this
            process may use when there are at least
            :data:`iochar._parallel.MIN_INPUTS` of them, else 1 (parse in a
            thread of this process, overlapping the writes). Inputs given as
            bytes or open files are always parsed here.

        Returns
        -------
        list of LoadResult
            One per input, in ``srcs`` order. A failed input has ``error``
            set (an :class:`~iochar.errors.IocharError`: its
            :class:`~iochar.errors.InputError` for bad input) and
            ``source_id`` None; nothing of it was written. Inputs loaded in a
            batch report the batch's wall-clock time in ``seconds``.

        Raises
        ------
        IocharError
            The store is read-only.
        ParameterError
            ``batch``, ``batch_rows`` or ``chunk_rows`` is not an int >= 1.

        Notes
        -----
        The guarantees are DESIGN.md's loading rules, kept per input: a batch
        is one DuckDB transaction, whose rows reach the write-ahead log only
        at ``COMMIT``, so a process killed before it (``kill -9``) leaves none
        of the batch visible and a rolled-back batch leaves the database as
        it was. Ids are those :meth:`load` would give, input after input (see
        :meth:`_cursor`). Memory holds at most one batch (``batch`` inputs or
        ``batch_rows`` rows) plus :data:`_PARSE_AHEAD` inputs parsed ahead.

        Examples
        --------
        >>> import iochar
        >>> db = iochar.connect(":memory:")
        >>> ok = b"op,t_start,size\\nwrite,0.5,4096\\n"
        >>> res = db.load_many([ok, b"op,t_start,size\\nwrite,x,1\\n", ok], kind="trace-csv")
        >>> [(r.source_id, r.duplicate, r.error is not None) for r in res]
        [(0, False, False), (None, False, True), (0, True, False)]
        """
        if self.read_only:
            raise IocharError(f"database {self.path!r} is open read-only")
        for pname, val in (
            ("batch", batch),
            ("batch_rows", batch_rows),
            ("chunk_rows", chunk_rows),
            ("workers", 1 if workers is None else workers),
        ):
            if not isinstance(val, int) or isinstance(val, bool) or val < 1:
                raise ParameterError(pname, "Store.load_many", "an int >= 1", val)
        srcs = list(srcs)
        results: list[LoadResult | None] = [None] * len(srcs)
        done = [0]

        def tick(n: int) -> None:
            done[0] += n
            if progress is not None and n:
                progress(done[0], len(srcs))

        segment: list[tuple[int, Source]] = []
        for i, src in enumerate(srcs):
            if isinstance(src, (str, os.PathLike)) and _disk_size(src) >= _OVERLAP_BYTES:
                # streamed on its own, at its place in the order of ids
                self._load_segment(
                    segment, kind, strict, batch, batch_rows, chunk_rows, results, tick, workers
                )
                segment = []
                results[i] = self._load_alone(src, kind, strict, chunk_rows)
                tick(1)
            else:
                segment.append((i, src))
        self._load_segment(
            segment, kind, strict, batch, batch_rows, chunk_rows, results, tick, workers
        )
        return results  # type: ignore[return-value]

    def _load_alone(
        self, src: Source, kind: str | None, strict: bool, chunk_rows: int
    ) -> LoadResult:
        """:meth:`load`, its errors returned in the result for :meth:`load_many`."""
        try:
            return self.load(src, kind=kind, strict=strict, chunk_rows=chunk_rows)
        except IocharError as exc:
            return _failed(_uri(src), kind, exc)

    def _load_segment(
        self,
        items: list[tuple[int, Source]],
        kind: str | None,
        strict: bool,
        batch: int,
        batch_rows: int,
        chunk_rows: int,
        results: list[LoadResult | None],
        tick: Callable[[int], None],
        workers: int | None = None,
    ) -> None:
        """Load small inputs in batches: hash and dedupe all, parse ahead, write per batch.

        Every input is hashed first and the digests looked up in ``sources``
        (one query per 10,000), so bytes loaded before are never parsed. The
        rest are parsed in a thread up to :data:`_PARSE_AHEAD` inputs ahead
        while the previous batch is written (DuckDB inserts release the GIL),
        or, for many file inputs, in ``workers`` processes
        (:func:`iochar._parallel.parse_runs`) while this one writes.
        """
        if not items:
            return
        t0 = time.perf_counter()
        hashed: list[tuple[int, Source, str, str, int]] = []
        failed = 0
        for i, src in items:
            uri = _uri(src)
            try:
                digest, size = sha256_of(src)
            except InputError as exc:
                results[i] = _failed(uri, kind, _parse_error(src, kind, strict, exc))
                failed += 1
                continue
            hashed.append((i, src, uri, digest, size))
        digests = sorted({h[3] for h in hashed})
        known: dict[str, tuple[int, str]] = {}
        for at in range(0, len(digests), 10_000):
            known.update(
                (sha, (sid, k))
                for sha, sid, k in self.con.execute(
                    "SELECT sha256, source_id, kind FROM sources WHERE list_contains($h, sha256)",
                    {"h": digests[at : at + 10_000]},
                ).fetchall()
            )
        first: dict[str, int] = {}  # digest -> index of its first input here
        later: list[tuple[int, int, str]] = []  # (index, index of its first, uri)
        plan: list[tuple[int, Source, str, str, int]] = []
        for i, src, uri, digest, size in hashed:
            if digest in known:
                sid, old_kind = known[digest]
                results[i] = self._duplicate_result(sid, old_kind, uri, digest, t0, kind)
                failed += 1
            elif digest in first:
                later.append((i, first[digest], uri))
            else:
                first[digest] = i
                plan.append((i, src, uri, digest, size))
        tick(failed)

        def outcome(i: int, got: _Input | IocharError) -> tuple[int, _Input | LoadResult]:
            if isinstance(got, IocharError):
                return i, _failed(plan_uri[i], kind, got, plan_digest[i])
            return i, got

        plan_uri = {p[0]: p[2] for p in plan}
        plan_digest = {p[0]: p[3] for p in plan}
        paths = all(isinstance(p[1], (str, os.PathLike)) for p in plan)
        n_workers = _parallel.default_workers(len(plan)) if workers is None else workers
        pool = None
        if n_workers > 1 and paths and len(plan) > 1:
            pool = _parallel.parse_runs(
                [p[1:] for p in plan],
                kind=kind,
                strict=strict,
                chunk_rows=chunk_rows,
                workers=n_workers,
            )
            ahead = (outcome(p[0], got) for p, got in zip(plan, pool, strict=True))
        else:
            parsed = (
                outcome(i, _parse_input(src, uri, digest, size, kind, strict, chunk_rows))
                for i, src, uri, digest, size in plan
            )
            ahead = _Prefetch(parsed, depth=_PARSE_AHEAD) if len(plan) > 1 else parsed
        todo: list[tuple[int, _Input]] = []
        rows = 0
        try:
            for i, got in ahead:
                if isinstance(got, LoadResult):
                    results[i] = got
                    tick(1)
                    continue
                todo.append((i, got))
                rows += got.total
                if len(todo) >= batch or rows >= batch_rows:
                    self._write_batch(todo, results, t0)
                    tick(len(todo))
                    todo, rows = [], 0
        finally:
            ahead.close()
            if pool is not None:
                pool.close()
        self._write_batch(todo, results, t0)
        tick(len(todo))
        for i, j, uri in later:
            res = results[j]
            assert res is not None
            if res.error is not None:
                results[i] = replace(res, uri=uri)
            else:
                results[i] = LoadResult(
                    res.source_id, res.kind, uri, res.sha256, duplicate=True, seconds=res.seconds
                )
        tick(len(later))
        for i, _ in items:
            res = results[i]
            if res is not None and res.skipped and not res.duplicate:
                _warn_skips(res, stacklevel=4)

    def _write_batch(
        self, todo: list[tuple[int, _Input]], results: list[LoadResult | None], t0: float
    ) -> None:
        """Write parsed inputs in one transaction; on a database error, one by one."""
        if not todo:
            return
        try:
            done = self._write(todo)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception:  # a database error: retry input by input
            done = []
            for item in todo:
                inp = item[1]
                try:
                    done.extend(self._write([item]))
                except (KeyboardInterrupt, SystemExit):
                    raise
                except Exception as exc:
                    err = (
                        exc
                        if isinstance(exc, IocharError)
                        else IocharError(
                            f"{inp.uri}: the database refused the input: "
                            f"{type(exc).__name__}: {exc}"
                        )
                    )
                    done.append((item[0], _failed(inp.uri, inp.kind, err, inp.digest)))
        seconds = time.perf_counter() - t0
        for i, res in done:
            res.seconds = seconds
            results[i] = res

    def _write(self, todo: list[tuple[int, _Input]]) -> list[tuple[int, LoadResult]]:
        """Insert parsed inputs in one transaction: one insert per table, then ``sources``."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            ids = self._cursor()
            # frames of one table with the same columns are shifted and inserted together
            groups: dict[tuple[str, tuple[str, ...]], list[tuple[pa.Table, dict, int]]] = {}
            srows: list[dict[str, Any]] = []
            out = []
            for i, inp in todo:
                source_id = ids["source_id"]
                offsets = dict(ids)
                for table, parts in inp.frames.items():
                    for frame in parts:
                        key = (table, tuple(frame.column_names))
                        groups.setdefault(key, []).append((frame, offsets, source_id))
                inp.advance(ids)
                srows.append(inp.source_row(source_id))
                out.append((i, inp.result(source_id)))
            by_table: dict[str, list[pa.Table]] = {}
            for (table, _), items in groups.items():
                by_table.setdefault(table, []).append(_stored_frames(table, items))
            for table, parts in by_table.items():
                # one contiguous frame: DuckDB scans it about 1.5x faster than many small chunks
                self._append(table, pa.concat_tables(parts).combine_chunks())
            self._append("sources", _sources_frame(srows))
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self._committed(ids, len(todo))
        return out

    def _may_hold(self, uri: str, src: Source, size: int) -> bool:
        """Whether the database may hold this large input already, so its load waits
        for the SHA-256 before the first insert.

        Rule: an uncompressed input whose path and size on disk are both new to
        ``sources`` is most likely new content, so it is inserted while it is
        hashed and the digest is checked for a duplicate only before ``COMMIT``
        (rolled back when found: the same bytes still load once). This takes the
        hash (0.6-1.0 s for 711 MB) off the load's critical path. A path loaded
        before, or a size seen before (a copy), waits for the hash as a small
        input does; so does a compressed input, whose digest is that of its
        decompressed content and so may equal that of an input of any size.
        ``size`` is the input's size on disk [bytes].
        """
        if is_compressed(src):
            return True
        return bool(
            self.con.execute(
                "SELECT count(*) FROM sources WHERE uri = $u OR size_bytes = $s",
                {"u": uri, "s": size},
            ).fetchall()[0][0]
        )

    def _duplicate(
        self, earlier: int, uri: str, digest: str, t0: float, asked: str | None
    ) -> LoadResult:
        """The result for content loaded before; refuses a different explicit kind.

        The same content is stored once, as the kind it was first loaded as.
        Asking for another kind by name cannot be honoured without loading the
        content twice, so it is refused (:class:`ParameterError`) rather than
        silently answered with the earlier kind.
        """
        old_kind = self.con.execute(
            "SELECT kind FROM sources WHERE source_id = $s", {"s": earlier}
        ).fetchall()[0][0]
        res = self._duplicate_result(earlier, old_kind, uri, digest, t0, asked)
        if res.error is not None:
            raise res.error
        return res

    @staticmethod
    def _duplicate_result(
        earlier: int, old_kind: str, uri: str, digest: str, t0: float, asked: str | None
    ) -> LoadResult:
        if asked is not None and asked != old_kind:
            err = ParameterError(
                "kind",
                "Store.load",
                f"{old_kind!r} or None: {uri} has the content (sha256 {digest[:12]}) of "
                f"source {earlier}, loaded as {old_kind!r}",
                asked,
            )
            return LoadResult(None, asked, uri, digest, error=err)
        return LoadResult(
            earlier, old_kind, uri, digest, duplicate=True, seconds=time.perf_counter() - t0
        )

    # ------------------------------------------------------------------ ids
    def _cursor(self) -> dict[str, int]:
        """The next free ``source_id``, ``job_id``, ``file_id`` and ``snapshot_id``.

        Call inside the write transaction. The store keeps the ids it handed
        out (its cursor) with a mark of ``sources`` as it left it: the row
        count and the highest ``source_id``. Every load by any store adds one
        ``sources`` row and no store deletes one, so an unchanged mark means
        no one else wrote since and the cursor holds; one ``count``/``max``
        over the small ``sources`` table checks it. Otherwise (first load,
        another process or connection wrote, the store was released and
        opened again) the ids are found again as ``max(id) + 1`` over
        ``jobs``, ``files`` and ``snapshots``, as the loaders number from 0.

        Returns
        -------
        dict of str to int
            A copy; :meth:`_committed` records the advanced cursor.
        """
        [(n, top)] = self.con.execute(
            "SELECT count(*), coalesce(max(source_id), -1) FROM sources"
        ).fetchall()
        if self._ids is None or self._ids_mark != (n, top):
            ids = {"source_id": top + 1}
            for key, (table, col) in _ID_KINDS.items():
                ids[key] = self.con.execute(
                    f'SELECT coalesce(max("{col}") + 1, 0) FROM "{table}"'  # names from _ID_KINDS
                ).fetchall()[0][0]
            self._ids, self._ids_mark = ids, (n, top)
        return dict(self._ids)

    def _committed(self, ids: dict[str, int], added: int) -> None:
        """Record the cursor after a commit that added ``added`` sources."""
        n, _ = self._ids_mark
        self._ids, self._ids_mark = dict(ids), (n + added, ids["source_id"] - 1)

    def _load_in_transaction(
        self, chunks, inp: _Input, ids: dict[str, int], progress, late=None
    ) -> LoadResult:
        """Insert an input's chunks and its ``sources`` row; ``late(inp)``, when given,
        sets the input's digest first (and raises :class:`_LateDuplicate`)."""
        source_id = ids["source_id"]
        offsets = dict(ids)
        held: dict[str, list[pa.Table]] = {}  # per table, frames not inserted yet
        for chunk in chunks:
            for table, frame in inp.add(chunk, keep=False):
                frames = held.setdefault(table, [])
                frames.append(_stored_frame(table, frame, offsets, source_id))
                if sum(f.num_rows for f in frames) >= _INSERT_ROWS:
                    self._append(table, _joined(held.pop(table)))
            if progress is not None:
                progress(inp.total, None)
        for table, frames in held.items():
            self._append(table, _joined(frames))
        inp.finish()
        if late is not None:
            late(inp)
        inp.advance(ids)
        row = inp.source_row(source_id)
        self.con.execute(
            "INSERT INTO sources VALUES ($id, $kind, $uri, $sha, $size, $at, $rows, $meta)",
            {
                "id": row["source_id"],
                "kind": row["kind"],
                "uri": row["uri"],
                "sha": row["sha256"],
                "size": row["size_bytes"],
                "at": row["loaded_at"],
                "rows": row["rows"],
                "meta": row["meta"],
            },
        )
        return inp.result(source_id)

    def _bound_memory(self) -> str | None:
        """Lower DuckDB's ``memory_limit`` to :data:`_LOAD_MEMORY` for one large load.

        Returns the setting to restore afterwards, as DuckDB prints it (to its
        0.1 unit, e.g. ``18.8 GiB``), or None when the database's limit is
        already at most that (then nothing changes) or is not one DuckDB
        printed. A file-backed store only: an in-memory database has nowhere to
        put the blocks.
        """
        if not self.path or self.path.startswith(":memory:"):
            return None
        (setting,) = self.con.execute("SELECT current_setting('memory_limit')").fetchone()
        setting = str(setting).strip()
        if not _MEMORY_SETTING_RE.fullmatch(setting) or _bytes_of(setting) <= _LOAD_MEMORY:
            return None
        self.con.execute(f"SET memory_limit = '{_LOAD_MEMORY}B'")
        return setting

    def _append(self, table: str, frame: pa.Table) -> None:
        """Insert a frame holding every column of ``table`` in contract order.

        ``INSERT ... SELECT * FROM frame`` (DuckDB scans the local Arrow table
        by name, by position) was measured 10-30 % faster than
        ``from_arrow(frame).insert_into`` for 300 to 1M rows (0.75 against
        0.84 ms at 300 rows, 196 against 222 ms at 1M), the difference being
        the relation object built per insert. The local name is one no table
        of a database would have (a table's name wins over a Python variable's).
        """
        _iochar_append_frame = frame  # noqa: F841 - scanned by name below
        self.con.execute(  # table names come from schema.TABLES
            f'INSERT INTO "{table}" SELECT * FROM _iochar_append_frame'
        )

    # ------------------------------------------------------------------ export
    def export_trace(self, path: str | os.PathLike[str], *, job_id: int | None = None) -> int:
        """Write ops as an iochar trace (``.csv`` or ``.parquet`` by suffix).

        The columns are those the ``trace-csv`` / ``trace-parquet`` loaders
        read (see :mod:`iochar.load.trace_table`), so exporting and loading
        again gives the same ops.

        Parameters
        ----------
        path : str or os.PathLike
            Output file: ``.csv`` (trace-csv) or ``.parquet`` (trace-parquet).
        job_id : int, optional
            Only this job.

        Returns
        -------
        int
            Rows written.

        Raises
        ------
        ParameterError
            Another suffix: nothing is written (a ``.txt`` once got CSV silently).
        """
        from iochar.load.trace_table import EXPORT_COLUMNS

        out = os.fspath(path)
        suffix = os.path.splitext(out)[1].lower()
        if suffix not in (".csv", ".parquet"):
            raise ParameterError(
                "path", "Store.export_trace", "a file name ending in .csv or .parquet", out
            )

        cols = ", ".join('f."path"' if c == "path" else f'o."{c}"' for c in EXPORT_COLUMNS)
        where = "WHERE o.job_id = $job" if job_id is not None else ""
        params = {"job": job_id} if job_id is not None else None
        rel = self.con.sql(
            f"SELECT {cols} FROM ops o LEFT JOIN files f "
            f"ON f.job_id = o.job_id AND f.file_id = o.file_id {where} "
            "ORDER BY o.job_id, o.rank, o.t_start, o.t_end",
            params=params,
        )
        n = rel.aggregate("count(*)").fetchall()[0][0]
        if suffix == ".parquet":
            rel.write_parquet(out)
        else:
            rel.write_csv(out, header=True)
        return n

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Close the connection for good (use :meth:`release` to reopen on demand)."""
        self._closed = True
        if self._con is not None:
            con, self._con = self._con, None
            con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.path!r})"


#: Files at least this large on disk are hashed and parsed in threads while
#: chunks are inserted, and :meth:`Store.load_many` streams them through
#: :meth:`Store.load` instead of holding them parsed in memory. [bytes]
_OVERLAP_BYTES = 8 << 20

#: DuckDB's buffer-pool limit while a large input loads [bytes]. DuckDB keeps a
#: transaction's appended blocks in its pool up to ``memory_limit`` (by default 80 %
#: of RAM) and writes them at the checkpoint after ``COMMIT``, so a load's peak RSS
#: grew with the input (8M trace-csv rows: 947 MiB, 457 MiB of it before the
#: checkpoint). Under this limit the blocks go to the database file as they fill,
#: and the peak was 458 MiB at 8M rows and 462 MiB at 2M
#: (``python benchmarks/bench_trace_csv.py --rss``). It is not free: the blocks
#: are written during the load and a ``CHECKPOINT`` follows ``COMMIT``; a
#: store-alone load of 6M trace-csv rows took 1.95-2.48 s under it against
#: 1.73-1.99 s without it (load and close, noisy 2-core machine).
_LOAD_MEMORY = 128 << 20

#: Rows a load gathers per table before one ``INSERT`` [rows]: four of DuckDB's row
#: groups (122,880 rows each). DuckDB appends an ``INSERT`` of one row group on one
#: thread and a larger one on every core: 49 inserts of one row group each (a
#: 6M-row trace-parquet) took 1.57 s, the same rows in 13 inserts of four 0.83 s,
#: on 2 cores. Loaders' chunks are often one row group or less (Parquet row groups,
#: strace's 8 MiB text blocks).
_INSERT_ROWS = 4 * 122_880

#: DuckDB's spelling of a ``memory_limit`` setting, e.g. ``19.0 GiB``.
_MEMORY_SETTING_RE = re.compile(r"(\d+(?:\.\d+)?) ?([KMGTPE]?)(i?)B")


def _bytes_of(setting: str) -> float:
    """Bytes of a ``memory_limit`` setting as DuckDB prints it (``18.8 GiB``)."""
    m = _MEMORY_SETTING_RE.fullmatch(setting)
    if m is None:
        raise ValueError(setting)
    base = 1024 if m.group(3) else 1000
    return float(m.group(1)) * base ** "_KMGTPE".index(m.group(2) or "_")


#: Least dead space [bytes] :meth:`Store._reclaim` copies a database to give back.
_RECLAIM_MIN = 16 << 20

#: Inputs :meth:`Store.load_many` parses ahead of the batch being written.
_PARSE_AHEAD = 16


def _disk_size(path: str | os.PathLike[str]) -> int:
    """Size on disk, or 0 when it cannot be read (the parser then names the problem). [bytes]"""
    try:
        return os.path.getsize(path)
    except (OSError, ValueError):
        return 0


def _uri(src: Source) -> str:
    name = source_name(src)
    return str(Path(name).resolve()) if isinstance(src, (str, os.PathLike)) else name


def _failed(uri: str, kind: str | None, error: IocharError, digest: str = "") -> LoadResult:
    """The result of an input :meth:`Store.load_many` left out: nothing of it landed."""
    return LoadResult(None, kind or "", uri, digest, error=error)


def _warn_skips(result: LoadResult, stacklevel: int = 3) -> None:
    if result.skipped:
        warnings.warn(
            f"{result.uri}: skipped {result.skipped} bad record(s) in tolerant mode; "
            f"first: {result.skips[0].line}: {result.skips[0].reason}",
            SkippedRecordsWarning,
            stacklevel=stacklevel,
        )


#: Each table's columns as Arrow, in the order of the table (inserts are by position).
_ARROW_SCHEMAS = {
    table: pa.schema([pa.field(c.name, c.arrow) for c in cols])
    for table, cols in schema.TABLES.items()
}


def _stored_frame(
    table: str,
    frame: pa.Table,
    offsets: dict[str, int] | dict[str, np.ndarray],
    source_id: int | np.ndarray,
) -> pa.Table:
    """A loader's checked frame as the table stores it.

    Every column of the table in its order (absent ones NULL), the
    loader-local ids (:data:`iochar.schema.ID_COLUMNS`) shifted by the
    store's next free id, ``source_id`` set for the tables that carry it.
    Shifting in Arrow lets the frame go to DuckDB as it is, by position, with
    no view registered and no ``SELECT`` to plan per chunk.
    """
    n = frame.num_rows
    shift = schema.ID_COLUMNS.get(table, ())
    have = set(frame.column_names)
    arrays = []
    for col in schema.TABLES[table]:
        if col.name == "source_id":
            if table in schema.SOURCE_COLUMN_TABLES:
                arrays.append(
                    pa.array(source_id, pa.int64())
                    if isinstance(source_id, np.ndarray)
                    else pa.repeat(pa.scalar(source_id, pa.int64()), n)
                )
            else:
                arrays.append(pa.nulls(n, col.arrow))
        elif col.name in have:
            arr = frame.column(col.name)
            off = offsets[col.name] if col.name in shift else 0
            if isinstance(off, np.ndarray):  # one offset per row (several inputs)
                arr = pc.add_checked(arr, pa.array(off, pa.int64()))
            elif off:
                arr = pc.add_checked(arr, pa.scalar(off, pa.int64()))
            arrays.append(arr)
        else:
            arrays.append(pa.nulls(n, col.arrow))
    return pa.Table.from_arrays(arrays, schema=_ARROW_SCHEMAS[table])


def _joined(frames: list[pa.Table]) -> pa.Table:
    """Frames of one table as one (their chunks kept, nothing copied)."""
    return frames[0] if len(frames) == 1 else pa.concat_tables(frames)


def _stored_frames(table: str, items: list[tuple[pa.Table, dict[str, int], int]]) -> pa.Table:
    """:func:`_stored_frame` of several inputs' frames (same columns) in one pass.

    ``items`` holds ``(frame, offsets, source_id)`` per frame; the offsets are
    repeated row-wise, so one vectorized add shifts the ids of every input.
    """
    if len(items) == 1:
        return _stored_frame(table, *items[0])
    counts = np.array([f.num_rows for f, _, _ in items], dtype=np.int64)
    offsets = {
        key: np.repeat(np.array([o[key] for _, o, _ in items], dtype=np.int64), counts)
        for key in _ID_KINDS
    }
    source_ids = np.repeat(np.array([s for _, _, s in items], dtype=np.int64), counts)
    raw = pa.concat_tables([f for f, _, _ in items]).combine_chunks()
    return _stored_frame(table, raw, offsets, source_ids)


def _sources_frame(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=_ARROW_SCHEMAS["sources"])


def _parse_input(
    src: Source, uri: str, digest: str, size: int, kind: str | None, strict: bool, chunk_rows: int
) -> _Input | IocharError:
    """Sniff (unless ``kind``) and parse one input completely, its frames checked and kept.

    Returns the :class:`_Input`, or the :class:`IocharError` the input failed
    with (for :meth:`Store.load_many`, in this process or a worker's).
    """
    try:
        k = kind or _load.sniff(src)
        inp = _Input(k, uri, digest, size)
        for chunk in _load.parse(src, k, strict=strict, chunk_rows=chunk_rows):
            inp.add(chunk, keep=True)
        inp.finish()
    except IocharError as exc:
        return exc
    return inp


class _LateDuplicate(Exception):
    """A large input found, at the end of its load, to hold content loaded before."""

    def __init__(self, earlier: int, digest: str) -> None:
        super().__init__(earlier, digest)
        self.earlier, self.digest = earlier, digest


class _Input:
    """One input on its way into the store: its checked frames, counts, meta and skips.

    Loaders number jobs, files and snapshots from 0 within the input
    (:mod:`iochar.schema`); ``tops`` keeps the highest number each used, so
    the store's id cursor moves past them without asking the database.
    """

    def __init__(self, kind: str, uri: str, digest: str, size: int) -> None:
        self.kind, self.uri, self.digest, self.size = kind, uri, digest, size
        self.rows: dict[str, int] = {}
        self.meta: dict[str, Any] = {}
        self.warn: list[str] = []
        self.skips = None
        self.total = 0
        self.frames: dict[str, list[pa.Table]] = {}
        self.tops: dict[str, int] = {}

    def add(self, chunk, *, keep: bool) -> list[tuple[str, pa.Table]]:
        """Check a parsed chunk's frames against the contract; keep them when asked."""
        self.meta.update(chunk.meta)
        self.warn.extend(chunk.warnings)
        if chunk.skips is not None:
            self.skips = chunk.skips
        out = []
        for table, frame in chunk.tables.items():
            if frame is None or frame.num_rows == 0:
                continue
            frame = schema.check_frame(table, frame)
            for key, (id_table, col) in _ID_KINDS.items():
                if id_table == table:
                    top = pc.max(frame.column(col)).as_py()
                    if top is not None:
                        self.tops[key] = max(self.tops.get(key, top), top)
            self.rows[table] = self.rows.get(table, 0) + frame.num_rows
            self.total += frame.num_rows
            if keep:
                self.frames.setdefault(table, []).append(frame)
            out.append((table, frame))
        return out

    def finish(self) -> None:
        """Refuse a tolerant load that kept nothing valid; complete ``meta``.

        Raises
        ------
        InputError
            Every record was skipped (rows landed only in descriptive tables).
        """
        skips = self.skips
        if skips is not None and skips.count and not set(self.rows) - _DESCRIPTIVE_TABLES:
            first = skips.kept[0]
            raise InputError(
                self.uri,
                first.line,
                f"at least one valid record (tolerant mode skipped all {skips.count:,} "
                f"bad records; the first: {first.reason})",
                kind=self.kind,
            )
        self.meta["rows"] = self.rows
        if skips is not None and skips.count:
            self.meta["skipped"] = skips.count
            self.meta["skips"] = skips.kept
        if self.warn:
            self.meta["warnings"] = self.warn

    def advance(self, ids: dict[str, int]) -> None:
        """Move the cursor ``ids`` (this input's offsets) past this input's ids."""
        for key, top in self.tops.items():
            ids[key] = max(ids[key], ids[key] + top + 1)
        ids["source_id"] += 1

    def source_row(self, source_id: int) -> dict[str, Any]:
        return {
            "source_id": source_id,
            "kind": self.kind,
            "uri": self.uri,
            "sha256": self.digest,
            "size_bytes": self.size,
            "loaded_at": _now(),
            "rows": self.total,
            "meta": json.dumps(self.meta, default=_json_default),
        }

    def result(self, source_id: int) -> LoadResult:
        skips = self.skips
        return LoadResult(
            source_id,
            self.kind,
            self.uri,
            self.digest,
            rows=self.rows,
            skipped=skips.count if skips else 0,
            skips=list(skips.kept) if skips else [],
            warnings=self.warn,
            meta=self.meta,
        )


class _Prefetch:
    """Run a chunk iterator ahead in a thread (parsing overlaps inserting).

    Parsers spend their time in Arrow/numpy/polars code and DuckDB inserts
    release the GIL too, so the two overlap. What waits in the queue is
    bounded, which keeps memory bounded: at most ``depth`` items, or, with
    ``rows``, items until the rows of their tables reach ``rows`` (one item
    always may wait). A store inserts a table's frames in groups of
    :data:`_INSERT_ROWS` rows, so a bound of one group lets the parser run
    through a whole insert instead of stopping after one chunk: a
    trace-parquet hands over a row group (122,880 rows) per chunk and an
    insert takes four. Exceptions are re-raised in the consumer.
    """

    def __init__(self, it: Iterable[Any], depth: int = 1, rows: int | None = None) -> None:
        self._items: collections.deque = collections.deque()
        self._waiting = 0  # rows (or items) in the queue
        self._limit = rows if rows is not None else depth
        self._by_rows = rows is not None
        self._cond = threading.Condition()
        self._stop = False
        self._thread = threading.Thread(
            target=self._run, args=(iter(it),), name="iochar-parse", daemon=True
        )
        self._thread.start()

    def _weight(self, tag: str, item: Any) -> int:
        """What ``item`` counts against the bound: 1 an item, or, by rows, its rows
        (the end and an error count nothing)."""
        if not self._by_rows:
            return 1
        if tag != "item":
            return 0
        tables = getattr(item, "tables", None)
        if not isinstance(tables, dict):
            return self._limit  # unknown size: one such item at a time
        return sum(t.num_rows for t in tables.values())

    def _put(self, tag: str, item: Any) -> bool:
        n = self._weight(tag, item)
        with self._cond:
            while not self._stop and self._items and self._waiting + n > self._limit:
                self._cond.wait()
            if self._stop:
                return False
            self._items.append((tag, item, n))
            self._waiting += n
            self._cond.notify_all()
            return True

    def _run(self, it) -> None:
        try:
            for item in it:
                if not self._put("item", item):
                    return
        except BaseException as exc:  # handed to the consumer
            self._put("error", exc)
            return
        finally:
            if hasattr(it, "close"):
                it.close()
        self._put("end", None)

    def __iter__(self):
        while True:
            with self._cond:
                while not self._items:
                    self._cond.wait()
                tag, item, n = self._items.popleft()
                self._waiting -= n
                self._cond.notify_all()
            if tag == "end":
                return
            if tag == "error":
                raise item
            yield item

    def close(self) -> None:
        """Stop the producer and wait for it."""
        with self._cond:
            self._stop = True
            self._items.clear()
            self._cond.notify_all()
        self._thread.join()


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC).replace(tzinfo=None)


def _parse_error(src: Source, kind: str | None, strict: bool, hash_error: InputError) -> InputError:
    """The parser's own error for an input whose content could not be hashed.

    Hashing reads the whole decompressed stream first, so a compressed input
    cut short fails there, at a byte offset. A text parser names the line
    where the stream broke (:func:`iochar.load._text.open_text`), which is
    what a user can look at; parse once more to get it, else keep the hash
    error.
    """
    try:
        for _ in _load.parse(src, kind, strict=strict):
            pass
    except InputError as exc:
        return exc
    except IocharError:
        pass
    return hash_error
