"""The store's table contract (DESIGN.md) as data.

Each table maps to an ordered tuple of :class:`Column`. The store builds its
DDL from here, loaders are checked against it (:func:`check_frame`), and SQL
in iochar takes identifiers only from these constants.

Units: bytes, seconds, UTC. ``ops.t_start``/``t_end`` are seconds since the
job's start; timestamps (``*_ts``) are naive ``TIMESTAMP`` values in UTC.

Loader-local identifiers
------------------------
Loaders number jobs and files from 0 within one input (``job_id``,
``file_id``). The store shifts them by the database's next free id when it
inserts, so ids are unique across every source in one database.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from iochar.errors import SchemaError

_QUALITY_DOC = "ok, reset, wrap, gap, gap_reset, gap_wrap or implausible (see load._counters)."

__all__ = ["Column", "TABLES", "OPS", "SCHEMA_VERSION", "ID_COLUMNS", "check_frame", "ddl"]

#: Bumped whenever a table or column changes; stored in ``iochar_meta``.
SCHEMA_VERSION = 1

#: The values ``ops.op`` may take.
OPS = ("read", "write", "open", "close", "seek", "sync", "stat", "other")


@dataclass(frozen=True)
class Column:
    """One column of the contract.

    Attributes
    ----------
    name : str
        Column name.
    sql : str
        DuckDB type.
    arrow : pyarrow.DataType
        The Arrow type a loader should produce (others are cast when safe).
    unit : str
        Unit, or ``""`` for none.
    nullable : bool
        Whether loaders may leave it NULL / omit it.
    doc : str
        One-line description.
    """

    name: str
    sql: str
    arrow: pa.DataType
    unit: str = ""
    nullable: bool = True
    doc: str = ""


_I64, _I32, _F64, _STR, _BOOL = pa.int64(), pa.int32(), pa.float64(), pa.string(), pa.bool_()
_TS = pa.timestamp("us")
_OP_ENUM = "ENUM(" + ", ".join(f"'{o}'" for o in OPS) + ")"


def _c(name, sql, arrow, unit="", nullable=True, doc=""):
    return Column(name, sql, arrow, unit, nullable, doc)


TABLES: dict[str, tuple[Column, ...]] = {
    "sources": (
        _c("source_id", "BIGINT", _I64, nullable=False, doc="Input id."),
        _c("kind", "VARCHAR", _STR, nullable=False, doc="Loader kind."),
        _c("uri", "VARCHAR", _STR, nullable=False, doc="Absolute path of the input."),
        _c("sha256", "VARCHAR", _STR, nullable=False, doc="SHA-256 of the input bytes."),
        _c("size_bytes", "BIGINT", _I64, "bytes", doc="Input size on disk."),
        _c("loaded_at", "TIMESTAMP", _TS, "UTC", nullable=False, doc="When it was loaded."),
        _c("rows", "BIGINT", _I64, nullable=False, doc="Rows landed, all tables."),
        _c("meta", "JSON", _STR, doc="Tool, version, host, per-table rows, skips."),
    ),
    "jobs": (
        _c("job_id", "BIGINT", _I64, nullable=False, doc="Job id (store-wide)."),
        _c("source_id", "BIGINT", _I64, doc="Input it came from (set by the store)."),
        _c("job_key", "VARCHAR", _STR, doc="The tool's own id (scheduler job id, root pid)."),
        _c("app", "VARCHAR", _STR, doc="Application (executable base name)."),
        _c("exe", "VARCHAR", _STR, doc="Command line, when known."),
        _c("user", "VARCHAR", _STR, doc="User name or uid."),
        _c("nprocs", "INTEGER", _I32, doc="Processes (MPI ranks or traced pids)."),
        _c("nnodes", "INTEGER", _I32, doc="Compute nodes, when known."),
        _c("start_ts", "TIMESTAMP", _TS, "UTC", doc="Job start, when the date is known."),
        _c("end_ts", "TIMESTAMP", _TS, "UTC", doc="Job end, when the date is known."),
        _c("runtime_s", "DOUBLE", _F64, "s", doc="Wall-clock run time."),
    ),
    "files": (
        _c("job_id", "BIGINT", _I64, nullable=False),
        _c("file_id", "BIGINT", _I64, nullable=False, doc="File id (store-wide)."),
        _c("path", "VARCHAR", _STR, doc="Path (or name) as the tool reported it."),
        _c("record_id", "UBIGINT", pa.uint64(), doc="Darshan record hash, when any."),
    ),
    "ops": (
        _c("job_id", "BIGINT", _I64, nullable=False),
        _c("rank", "INTEGER", _I32, nullable=False, doc="pid (strace) or MPI rank."),
        _c("file_id", "BIGINT", _I64, doc="NULL for calls on no known file."),
        _c("op", _OP_ENUM, _STR, nullable=False, doc="One of iochar.schema.OPS."),
        _c("offset", "BIGINT", _I64, "bytes", doc="File offset of the transfer, when known."),
        _c("size", "BIGINT", _I64, "bytes", doc="Bytes transferred (NULL: not a transfer)."),
        _c("t_start", "DOUBLE", _F64, "s", nullable=False, doc="Start, since job start."),
        _c("t_end", "DOUBLE", _F64, "s", nullable=False, doc="End, since job start."),
        _c("cpu_s", "DOUBLE", _F64, "s", doc="Process CPU time since previous I/O."),
        _c("call", "VARCHAR", _STR, doc="Raw call name (pread64, DXT_MPIIO...)."),
        _c("error", "VARCHAR", _STR, doc="errno name when the call failed."),
    ),
    "file_stats": (
        _c("job_id", "BIGINT", _I64, nullable=False),
        _c("file_id", "BIGINT", _I64, nullable=False),
        _c("rank", "INTEGER", _I32, doc="NULL: aggregate over all ranks (shared record)."),
        _c("module", "VARCHAR", _STR, nullable=False, doc="POSIX, MPI-IO, STDIO, TRACE..."),
        _c("bytes_read", "BIGINT", _I64, "bytes"),
        _c("bytes_written", "BIGINT", _I64, "bytes"),
        _c("reads", "BIGINT", _I64),
        _c("writes", "BIGINT", _I64),
        _c("opens", "BIGINT", _I64),
        _c("seq_reads", "BIGINT", _I64),
        _c("seq_writes", "BIGINT", _I64),
        _c("consec_reads", "BIGINT", _I64),
        _c("consec_writes", "BIGINT", _I64),
        _c("seeks", "BIGINT", _I64),
        _c("stats", "BIGINT", _I64),
        _c("syncs", "BIGINT", _I64),
        _c("max_byte_read", "BIGINT", _I64, "bytes", doc="Highest offset read."),
        _c("max_byte_written", "BIGINT", _I64, "bytes", doc="Highest offset written."),
        _c("file_alignment", "BIGINT", _I64, "bytes"),
        _c("file_not_aligned", "BIGINT", _I64, doc="Accesses not on file_alignment."),
        _c("mem_not_aligned", "BIGINT", _I64),
        _c("read_time", "DOUBLE", _F64, "s"),
        _c("write_time", "DOUBLE", _F64, "s"),
        _c("meta_time", "DOUBLE", _F64, "s"),
        _c("slowest_rank_time", "DOUBLE", _F64, "s", doc="Shared records: slowest rank I/O."),
        _c("first_io_t", "DOUBLE", _F64, "s", doc="First read/write start, since job start."),
        _c("last_io_t", "DOUBLE", _F64, "s", doc="Last read/write end, since job start."),
        _c("first_read_t", "DOUBLE", _F64, "s"),
        _c("last_read_t", "DOUBLE", _F64, "s"),
        _c("first_write_t", "DOUBLE", _F64, "s"),
        _c("last_write_t", "DOUBLE", _F64, "s"),
        _c("nranks", "INTEGER", _I32, doc="Ranks that accessed the file."),
    ),
    "access_sizes": (
        _c("job_id", "BIGINT", _I64, nullable=False),
        _c("file_id", "BIGINT", _I64, doc="NULL: whole job."),
        _c("rank", "INTEGER", _I32, doc="NULL: all ranks."),
        _c("module", "VARCHAR", _STR),
        _c("op", "VARCHAR", _STR, nullable=False, doc="read or write."),
        _c("bin_lo", "BIGINT", _I64, "bytes", nullable=False, doc="Inclusive."),
        _c("bin_hi", "BIGINT", _I64, "bytes", doc="Exclusive; NULL: unbounded."),
        _c("count", "BIGINT", _I64, nullable=False),
    ),
    "module_counters": (
        _c("job_id", "BIGINT", _I64, nullable=False),
        _c("module", "VARCHAR", _STR, nullable=False, doc="Darshan module (POSIX, H5D...)."),
        _c("record", "INTEGER", _I32, nullable=False, doc="Record ordinal within module."),
        _c("file_id", "BIGINT", _I64, doc="File (or dataset) the record is about."),
        _c("rank", "INTEGER", _I32, doc="NULL: shared record (all ranks)."),
        _c("counter", "VARCHAR", _STR, nullable=False, doc="Tool's counter name."),
        _c("value", "DOUBLE", _F64, doc="Counter value as the tool reported it."),
    ),
    "counters": (
        _c("source_id", "BIGINT", _I64),
        _c("target", "VARCHAR", _STR, nullable=False, doc="OST, device..."),
        _c("metric", "VARCHAR", _STR, nullable=False, doc="read_bytes, write_ios, busy_s..."),
        _c("ts", "TIMESTAMP", _TS, "UTC", nullable=False, doc="Interval end."),
        _c("interval_s", "DOUBLE", _F64, "s", nullable=False),
        _c("value", "DOUBLE", _F64, doc="Per-interval amount, never cumulative."),
        _c("quality", "VARCHAR", _STR, doc=_QUALITY_DOC),
    ),
    "size_hist": (
        _c("source_id", "BIGINT", _I64),
        _c("target", "VARCHAR", _STR, nullable=False),
        _c("ts", "TIMESTAMP", _TS, "UTC", nullable=False, doc="Interval end."),
        _c("interval_s", "DOUBLE", _F64, "s", nullable=False),
        _c("section", "VARCHAR", _STR, doc="Histogram name (disk I/O size...)."),
        _c("op", "VARCHAR", _STR, nullable=False),
        _c("size_bytes", "BIGINT", _I64, "bytes", nullable=False, doc="Bin (lower edge)."),
        _c("count", "BIGINT", _I64, nullable=False),
        _c("quality", "VARCHAR", _STR, doc=_QUALITY_DOC),
    ),
    "snapshots": (
        _c("snapshot_id", "BIGINT", _I64, nullable=False),
        _c("source_id", "BIGINT", _I64),
        _c("taken_at", "TIMESTAMP", _TS, "UTC"),
        _c("root", "VARCHAR", _STR),
    ),
    "snapshot_files": (
        _c("snapshot_id", "BIGINT", _I64, nullable=False),
        _c("path", "VARCHAR", _STR, nullable=False),
        _c("size", "BIGINT", _I64, "bytes"),
        _c("atime", "TIMESTAMP", _TS, "UTC"),
        _c("mtime", "TIMESTAMP", _TS, "UTC"),
        _c("ctime", "TIMESTAMP", _TS, "UTC"),
        _c("uid", "BIGINT", _I64),
    ),
    # Méndez et al.: I/O system capacity per path level, one row per benchmark run
    # (repetitions kept, so the spread is computed, never assumed); Kwan & Reed: scale.
    "capacity": (
        _c("source_id", "BIGINT", _I64),
        _c("level", "VARCHAR", _STR, nullable=False, doc="device, local_fs, mount or library."),
        _c("target", "VARCHAR", _STR, doc="Directory, mount point or file measured."),
        _c("fstype", "VARCHAR", _STR, doc="File system type of target, when known."),
        _c("api", "VARCHAR", _STR, doc="I/O interface: POSIX, MPIIO, HDF5... (IOR -a)."),
        _c("op", "VARCHAR", _STR, nullable=False, doc="read or write."),
        _c("access", "VARCHAR", _STR, nullable=False, doc="sequential or random."),
        _c("size_bytes", "DOUBLE", _F64, "bytes", nullable=False, doc="Request size."),
        _c("nprocs", "INTEGER", _I32, nullable=False, doc="Concurrent processes / jobs."),
        _c("rep", "INTEGER", _I32, nullable=False, doc="Repetition (0-based)."),
        _c("bytes", "DOUBLE", _F64, "bytes", nullable=False, doc="Bytes moved."),
        _c("seconds", "DOUBLE", _F64, "s", nullable=False, doc="Time of the run."),
        _c("rate", "DOUBLE", _F64, "bytes/s", nullable=False, doc="bytes / seconds."),
        _c("direct", "BOOLEAN", _BOOL, doc="O_DIRECT asked for."),
        _c("tool", "VARCHAR", _STR, doc="fio or ior."),
        _c("tool_version", "VARCHAR", _STR),
        _c("job", "VARCHAR", _STR, doc="Benchmark job / test name."),
    ),
}

#: Loader-local id columns that the store shifts to store-wide ids, by table.
ID_COLUMNS: dict[str, tuple[str, ...]] = {
    "jobs": ("job_id",),
    "files": ("job_id", "file_id"),
    "ops": ("job_id", "file_id"),
    "file_stats": ("job_id", "file_id"),
    "access_sizes": ("job_id", "file_id"),
    "module_counters": ("job_id", "file_id"),
    "snapshots": ("snapshot_id",),
    "snapshot_files": ("snapshot_id",),
}

#: Tables the store fills in ``source_id`` for.
SOURCE_COLUMN_TABLES = ("jobs", "counters", "size_hist", "snapshots", "capacity")

#: Tables a loader may return (``sources`` is written by the store alone).
LOADABLE = tuple(t for t in TABLES if t != "sources")


def columns(table: str) -> dict[str, Column]:
    """Columns of ``table`` by name."""
    return {c.name: c for c in TABLES[table]}


def ddl() -> list[str]:
    """``CREATE TABLE IF NOT EXISTS`` statements for every contract table."""
    out = []
    for table, cols in TABLES.items():
        body = ",\n  ".join(
            f'"{c.name}" {c.sql}' + ("" if c.nullable else " NOT NULL") for c in cols
        )
        out.append(f'CREATE TABLE IF NOT EXISTS "{table}" (\n  {body}\n)')
    return out


def check_frame(table: str, frame: pa.Table) -> pa.Table:
    """Check a loader's frame against the contract and cast it to contract types.

    Parameters
    ----------
    table : str
        Contract table name (not ``sources``).
    frame : pyarrow.Table
        The loader's output; may hold a subset of the columns.

    Returns
    -------
    pyarrow.Table
        The frame with every column cast to its contract Arrow type.

    Raises
    ------
    SchemaError
        Unknown table or column, a missing non-nullable column, a NULL in a
        non-nullable column, a type that cannot be cast safely, or an ``op``
        outside :data:`OPS`.
    """
    if table not in LOADABLE:
        raise SchemaError(f"loaders may not write table {table!r}")
    spec = columns(table)
    unknown = [n for n in frame.column_names if n not in spec]
    if unknown:
        raise SchemaError(f"table {table!r} has no column(s) {unknown}")
    for col in spec.values():
        if col.nullable or col.name in ("source_id",):
            continue
        if col.name not in frame.column_names:
            raise SchemaError(f"table {table!r}: required column {col.name!r} missing")
        if frame.column(col.name).null_count:
            raise SchemaError(f"table {table!r}: NULL in required column {col.name!r}")
    arrays, names = [], []
    for name in frame.column_names:
        arr = frame.column(name)
        want = spec[name].arrow
        if arr.type != want:
            try:
                arr = arr.cast(want, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise SchemaError(
                    f"table {table!r} column {name!r}: cannot cast {arr.type} to {want}: {exc}"
                ) from exc
        arrays.append(arr)
        names.append(name)
    out = pa.Table.from_arrays(arrays, names=names)
    if table == "ops" and "op" in names:
        import pyarrow.compute as pc

        bad = pc.invert(pc.is_in(out.column("op"), value_set=pa.array(OPS)))
        if pc.any(bad).as_py():
            first = pc.filter(out.column("op"), bad)[0].as_py()
            raise SchemaError(f"table 'ops': op {first!r} is not one of {OPS}")
    return out
