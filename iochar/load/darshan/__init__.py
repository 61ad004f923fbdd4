"""Darshan logs (``kind="darshan"``), read through the ``darshan`` package.

One Darshan log is one job. The loader reads it with libdarshan-util through
the cffi backend of the ``darshan`` package (``pip install 'iochar[darshan]'``;
imported only when a log is parsed), except for the DXT_POSIX, DXT_MPIIO, APMPI
and APXC regions, which it decodes itself (see *DXT* and *Long form* below), and
yields contract tables (:mod:`iochar.schema`) with loader-local ids: ``job_id``
0 and ``file_id`` numbered from 0 in order of first appearance.

Formats and modules
-------------------
Every log format libdarshan-util 3.5 reads loads: 3.00 (Darshan 3.0.x), 3.10
(3.1.x), 3.20 (3.2.0), 3.21 (3.2.1 to 3.4.0) and 3.41 (3.4.1 on), in either
byte order (:data:`SUPPORTED_VERSIONS`; the header layouts are those of
``darshan_log_get_header`` in darshan-logutils.c). Every module the library
knows lands in ``module_counters``; those :data:`VARIABLE_MAP` maps also in
``file_stats``, DXT also in ``ops``. A module is never a reason to refuse a
log: a region in a module slot the library has no module for (written by a
later Darshan) is decompressed and checked, listed in ``meta["modules"]`` as
``"slot <i>"`` with a warning, and not read. A name record may have an empty
name (Darshan 3.4 writes them for DAOS objects and DFS files): the record's
``files.path`` is NULL.

Incomplete modules
------------------
Darshan sets a module's bit of the header's ``partial_flag`` when the module
ran out of memory for new records (STDIO's or POSIX's file-record limit, DXT's
trace buffer); darshan-parser then warns "The <MODULE> module contains
incomplete data!" The loader reads the flag from the header with
libdarshan-util's module numbering (including modules flagged without data)
and records it in ``meta``: ``incomplete`` (the flagged modules), ``partial``
(whether there is one), ``modules[<name>]["partial"]``, and a warning.
``meta["modules"][<name>]`` also gives the module's ``version``, compressed
``bytes``, ``records`` read and ``kept_in`` (``file_stats``, ``ops`` or
``module_counters``, the table its data is analyzed from);
:func:`iochar.analyze.darshan_modules.modules` reads them back from the store.

Tables
------
=================== =======================================================
table               rows
=================== =======================================================
``jobs``            one: ``job_key`` = Darshan jobid, ``app`` = base name of
                    the executable, ``exe`` = command line, ``user`` = uid,
                    ``nprocs``, ``nnodes`` (distinct DXT host names; NULL
                    without DXT), ``start_ts``/``end_ts`` (UTC),
                    ``runtime_s`` (libdarshan-util's run time)
``files``           one per record id of a file-like module (POSIX, MPI-IO,
                    STDIO, H5F, H5D, PNETCDF_FILE/VAR, LUSTRE, DXT_*, DFS,
                    DAOS): ``path`` from the log's name records (NULL when
                    the log has none for the id, or an empty one, as Darshan
                    3.4 writes for DAOS objects), ``record_id`` = Darshan's
                    64-bit hash
``file_stats``      one per POSIX, MPI-IO, STDIO, H5F, H5D, PNETCDF_FILE and
                    PNETCDF_VAR record, mapped by :data:`VARIABLE_MAP`
``access_sizes``    nonzero ``*_SIZE_{READ,WRITE}_[AGG_]<bin>`` counters of
                    POSIX, MPI-IO, H5D, PNETCDF_VAR, DFS and DAOS records
``module_counters`` every counter of every record of every module in the
                    log, in long form (see *Long form* below)
``ops``             one per DXT_POSIX / DXT_MPIIO segment (``call`` names
                    the module); writes then reads, in log order
=================== =======================================================

:data:`VARIABLE_MAP` (file_stats column <- Darshan counter, written without
the ``POSIX_``/``MPIIO_``/``STDIO_`` prefix; ``{A,B}`` are summed; ``--`` is
NULL):

================= ====================== ========================= =================
column            POSIX_                 MPIIO_                    STDIO_
================= ====================== ========================= =================
bytes_read        BYTES_READ             BYTES_READ                BYTES_READ
bytes_written     BYTES_WRITTEN          BYTES_WRITTEN             BYTES_WRITTEN
reads             READS                  {INDEP,COLL,SPLIT,NB}_    READS
                                         READS
writes            WRITES                 {INDEP,COLL,SPLIT,NB}_    WRITES
                                         WRITES
opens             OPENS                  {INDEP,COLL}_OPENS        {OPENS,FDOPENS}
seq_reads         SEQ_READS              --                        --
seq_writes        SEQ_WRITES             --                        --
consec_reads      CONSEC_READS           --                        --
consec_writes     CONSEC_WRITES          --                        --
seeks             SEEKS                  --                        SEEKS
stats             STATS                  --                        --
syncs             {FSYNCS,FDSYNCS}       SYNCS                     FLUSHES
max_byte_read     MAX_BYTE_READ          --                        MAX_BYTE_READ
max_byte_written  MAX_BYTE_WRITTEN       --                        MAX_BYTE_WRITTEN
file_alignment    FILE_ALIGNMENT         --                        --
file_not_aligned  FILE_NOT_ALIGNED       --                        --
mem_not_aligned   MEM_NOT_ALIGNED        --                        --
read_time         F_READ_TIME            F_READ_TIME               F_READ_TIME
write_time        F_WRITE_TIME           F_WRITE_TIME              F_WRITE_TIME
meta_time         F_META_TIME            F_META_TIME               F_META_TIME
slowest_rank_time F_SLOWEST_RANK_TIME    F_SLOWEST_RANK_TIME       F_SLOWEST_RANK_TIME
first_read_t      F_READ_START_TIMESTAMP (same in each module)
last_read_t       F_READ_END_TIMESTAMP
first_write_t     F_WRITE_START_TIMESTAMP
last_write_t      F_WRITE_END_TIMESTAMP
================= ====================== ========================= =================

Units: bytes for ``bytes_*``, ``max_byte_*`` and ``file_alignment``; seconds
for ``*_time``; seconds since job start for ``*_t``; the rest are counts.

H5D maps like POSIX where H5D has the counter (``H5D_BYTES_*``, ``H5D_READS``,
``H5D_WRITES``, ``H5D_OPENS``, ``H5D_FLUSHES`` -> syncs, times, timestamps);
PNETCDF_VAR like MPI-IO (``{INDEP,COLL,NB}`` reads and writes); H5F and
PNETCDF_FILE carry opens (``+CREATES``), syncs/flushes, ``meta_time`` and
(PNETCDF_FILE) bytes. DFS and DAOS records land in ``module_counters`` and
``access_sizes`` only. Derived columns: ``first_io_t`` = min(first_read_t,
first_write_t), ``last_io_t`` = max(last_read_t, last_write_t); ``rank`` is
NULL and ``nranks`` = nprocs for shared records (Darshan rank -1), otherwise
``nranks`` = 1. Darshan's ``-1`` "not available" sentinel, and any other
negative value, becomes NULL; a timestamp or max byte that is 0 while the
matching ``reads``/``writes`` count is 0 (no activity) becomes NULL.
Timestamps are seconds since job start, as Darshan 3 records them.

Access-size bins are Darshan's ``DARSHAN_BUCKET_INC`` buckets written as
half-open byte ranges: [0, 101), [101, 1025), [1025, 10241), [10241, 102401),
[102401, 1048577), [1048577, 4194305), [4194305, 10485761),
[10485761, 104857601), [104857601, 1073741825), [1073741825, NULL).

Long form
---------
``module_counters`` has one row per (record, counter): ``record`` is the
record's ordinal within its module, ``counter`` the name libdarshan-util
gives it, ``value`` a double (64-bit integers above 2**53 lose precision).
Records with a fixed counter layout (POSIX, MPI-IO, STDIO, H5F, H5D,
PNETCDF_*, BG/Q, DFS, DAOS, MDHIM) contribute every integer then every
floating-point counter. The others are encoded as darshan-parser prints them:

* LUSTRE: ``LUSTRE_NUM_COMPONENTS``, ``LUSTRE_NUM_STRIPES``, then per
  component *k* (1-based) ``LUSTRE_COMP<k>_<FIELD>`` for each
  ``LUSTRE_COMP_<FIELD>`` counter and ``LUSTRE_COMP<k>_OST_ID_<j>``
  (0-based) for each OST. Pool names (strings) are not kept.
* HEATMAP: ``HEATMAP_<SRC>_F_BIN_WIDTH_SECONDS``, ``HEATMAP_<SRC>_NBINS``,
  ``HEATMAP_<SRC>_READ_BIN_<i>`` and ``HEATMAP_<SRC>_WRITE_BIN_<i>`` (bytes
  moved in bin *i*, which spans [i*w, (i+1)*w) seconds since job start); SRC
  is the instrumented module from the record's name (``heatmap:POSIX``),
  else from :data:`HEATMAP_IDS`, else the record id. ``file_id`` is NULL.
* DXT_POSIX / DXT_MPIIO: ``DXT_WRITE_COUNT`` and ``DXT_READ_COUNT``; the
  segments themselves are in ``ops``.
* APMPI / APXC: the first record is the header (``<MOD>_HDR_<FIELD>``),
  the others performance records (``<MOD>_<FIELD>`` for the placement
  fields, then the module's counter names). Node names are not kept.
  ``file_id`` is NULL for these, for BG/Q and for MDHIM. These regions are
  decoded in Python (layout version 1, record sizes from pydarshan's struct
  declarations): libdarshan-util tells the header record from the others
  with a process-wide ``static int first_rec``, so it misreads every such
  log after the first one a process reads.

DXT
---
A DXT region is a run of records, each a 104-byte ``struct dxt_file_record``
(record id, rank, shared flag, host name, write count, read count) followed
by its ``segment_info`` segments (offset, length, start and end time; writes
first, then reads), all in the log's byte order. The loader decodes it in
Python, as libdarshan-util's ``dxt_log_get_*_file`` would (DXT_MPIIO version
1 did not record offsets: they are -1), from the bytes the validation pass
decompressed: that pass keeps them when the log's DXT regions add up to at
most :data:`_DXT_KEEP` bytes, else decoding decompresses the region again,
piece by piece. Segments become columns with ``np.frombuffer`` a run of
records at a time, and ``ops`` comes in chunks of about ``chunk_rows`` rows
(a record with more segments is split across chunks), so memory stays
bounded however large the region.

Validation and crash safety
---------------------------
libdarshan-util trusts its input. In the 3.5.0 library: an ``assert``
aborts the process when the job region is empty and another when the name
region ends in an incomplete record; ``darshan_log_get_name_records`` closes
(frees) the log handle when the name region cannot be read, so the caller's
next use of the handle is a use-after-free; a DXT or HEATMAP record whose
segment or bin count is corrupt makes the library ``malloc`` too little and
copy past it; and a region that ends early is read as "no more records", so
pydarshan returns a silently partial report (it also ignores the return codes
of ``darshan_log_get_job`` and friends). Before the library reads anything
but the header, this module therefore checks in Python: the header (version
string, magic number in either byte order, compression type, every region's
offset and length inside the file and after the header, no two regions
overlapping); that
every region decompresses completely (zlib's Adler-32 or bzip2's CRC catches
corrupted bytes); that the name region splits into whole records (the names
are taken from this pass, so ``darshan_log_get_name_records`` is never
called); that every DXT record's write/read counts are non-negative and its
segments fit in the region; and that each DXT module version is one whose
layout the loader knows (DXT regions are then decoded in Python, which checks
every record again, and never reach the library). It then checks every
libdarshan-util return code. Uncompressed logs (compression type 2), whose
contents cannot be checked, are refused. What remains trusted is the content of regions with
valid checksums: a log crafted with valid checksums but inconsistent LUSTRE
or HEATMAP record contents could still crash libdarshan-util, and
a bit flip in a module's version number in the (unchecksummed) header that
yields another version the library accepts makes it decode that module with
the wrong layout.

Layout
------
This module holds the loader and its steps; the work is in private modules
it imports (never the other way round): ``_header`` (the header, region map,
decompression, name records, job record and mount table), ``_records`` (the
per-module counter records, :data:`VARIABLE_MAP` and the other public tables
of counters, and the ``_Log`` state the readers share) and ``_dxt`` (DXT
segments). The public names are re-exported here. A tuning constant lives
in the module that reads it: ``_DXT_KEEP`` here (the validation pass),
``_INFLATE_MAX`` in ``_header``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, ClassVar

import pyarrow as pa

from iochar.errors import InputError, MissingDependencyError, ParameterError
from iochar.load import _kinds, register
from iochar.load._base import Parsed, SkipLog
from iochar.load._text import Source, local_path, source_name
from iochar.load.darshan._dxt import (
    _DXT,
    _DXT_VERSIONS,
    SEGMENT_DTYPE,
    _DxtWalker,
    _read_dxt,
)
from iochar.load.darshan._header import (
    _BZIP2,
    KIND,
    SUPPORTED_VERSIONS,
    _err,
    _Header,
    _incomplete,
    _job_warnings,
    _jobs_and_meta,
    _modules,
    _NameWalker,
    _parse_header,
    _read_job,
    _validate_region,
)
from iochar.load.darshan._records import (
    _AP_FIELDS,
    _GENERIC,
    H5D_MAP,
    H5F_MAP,
    HEATMAP_IDS,
    MPIIO_MAP,
    PNETCDF_FILE_MAP,
    PNETCDF_VAR_MAP,
    POSIX_MAP,
    SIZE_BINS,
    STDIO_MAP,
    VARIABLE_MAP,
    _Log,
    _read_ap,
    _read_generic,
    _read_heatmap,
    _read_lustre,
)

__all__ = [
    "DarshanLoader",
    "VARIABLE_MAP",
    "POSIX_MAP",
    "MPIIO_MAP",
    "STDIO_MAP",
    "H5F_MAP",
    "H5D_MAP",
    "PNETCDF_FILE_MAP",
    "PNETCDF_VAR_MAP",
    "SIZE_BINS",
    "SUPPORTED_VERSIONS",
    "HEATMAP_IDS",
    "SEGMENT_DTYPE",
]

#: Most decompressed DXT bytes of one log kept from the validation pass for
#: decoding (larger regions are decompressed a second time instead).
_DXT_KEEP = 1 << 25


# ---------------------------------------------------------------- backend --


def _backend():
    """The ``darshan`` cffi backend, imported on first use."""
    try:
        from darshan.backend import cffi_backend
    except ImportError as exc:
        raise MissingDependencyError("darshan", "darshan", "reading Darshan logs") from exc
    except (OSError, RuntimeError) as exc:  # library not found / version mismatch
        raise MissingDependencyError(
            "darshan", "darshan", f"reading Darshan logs ({type(exc).__name__}: {exc})"
        ) from exc
    return cffi_backend


# ---------------------------------------------------------------- loader --


def _split(tables: dict[str, pa.Table], rows: int) -> Iterator[dict[str, pa.Table]]:
    """Slice tables so that no piece has more than ``rows`` rows."""
    n = max((t.num_rows for t in tables.values()), default=0)
    if n <= rows:
        yield tables
        return
    for start in range(0, n, rows):
        yield {k: t.slice(start, rows) for k, t in tables.items() if start < t.num_rows}


class _Batcher:
    """Gathers small per-module tables into chunks of up to ``rows`` rows a table.

    Fewer, larger chunks mean fewer inserts for the store; a table larger
    than ``rows`` is sliced by :func:`_split`.
    """

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.parts: dict[str, list[pa.Table]] = {}
        self.counts: dict[str, int] = {}

    def add(self, tables: dict[str, pa.Table]) -> Iterator[dict[str, pa.Table]]:
        if any(self.counts.get(k, 0) + t.num_rows > self.rows for k, t in tables.items()):
            yield from self.flush()
        if any(t.num_rows > self.rows for t in tables.values()):
            yield from _split(tables, self.rows)
            return
        for k, t in tables.items():
            self.parts.setdefault(k, []).append(t)
            self.counts[k] = self.counts.get(k, 0) + t.num_rows

    def flush(self) -> Iterator[dict[str, pa.Table]]:
        if self.parts:
            out = {k: v[0] if len(v) == 1 else pa.concat_tables(v) for k, v in self.parts.items()}
            self.parts, self.counts = {}, {}
            yield out


class DarshanLoader:
    """Loader for Darshan logs (``kind="darshan"``); see the module docstring.

    Examples
    --------
    >>> from iochar.load.darshan import DarshanLoader
    >>> DarshanLoader().sniff(b"3.21\\x00\\x00\\x00\\x0075d\\x00\\x00\\x00\\x00\\x00")
    True
    >>> DarshanLoader().sniff(b"3.21 is a number in a text file")
    False
    """

    kind: ClassVar[str] = KIND
    suffixes: ClassVar[tuple[str, ...]] = (".darshan",)
    description: ClassVar[str] = (
        "Darshan 3.x logs (job, POSIX/MPI-IO/STDIO/HDF5 counters, DXT traces) via pydarshan"
    )

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts like a Darshan log.

        Parameters
        ----------
        head : bytes
            The first bytes of the (decompressed) input.

        Returns
        -------
        bool
            True for a ``"d.dd"`` version string padded with NULs to 8
            bytes, followed (when present) by Darshan's magic number in
            either byte order.
        """
        return _kinds.sniff_darshan(head)  # the one rule, shared with sniffing by kind table

    def parse(
        self, src: Source, *, strict: bool = True, chunk_rows: int = 1_000_000
    ) -> Iterator[Parsed]:
        """Parse one Darshan log into contract-shaped chunks.

        Parameters
        ----------
        src : str, os.PathLike, bytes or binary file
            The log (gzip/bz2/xz/zstd-wrapped logs are unwrapped first).
        strict : bool, default True
            Raise :class:`~iochar.errors.InputError` on the first bad region
            or record. False skips a module whose region is damaged, or the
            rest of a module after an unreadable record, and counts it in
            :attr:`Parsed.skips`; a damaged header, job or name region
            always raises.
        chunk_rows : int, default 1_000_000
            Most rows of any one table in a chunk.

        Yields
        ------
        Parsed
            First the ``jobs`` row with the log's metadata, then per-module
            chunks of ``files``, ``file_stats``, ``access_sizes``,
            ``module_counters`` and ``ops``; the last chunk's ``meta`` holds
            per-module record counts.

        Raises
        ------
        InputError
            The input is not a readable Darshan log; the message names the
            byte offset (header and regions) or the record.
        MissingDependencyError
            The ``darshan`` package is not installed.
        """
        if not isinstance(chunk_rows, int) or chunk_rows < 1:
            raise ParameterError("chunk_rows", "DarshanLoader.parse", "an int >= 1", chunk_rows)
        cb = _backend()
        name = source_name(src)
        with local_path(src, ".darshan") as path:
            yield from self._parse_path(cb, path, name, strict, chunk_rows)

    # -- the work, on a real file path --

    def _parse_path(self, cb, path, name, strict, chunk_rows) -> Iterator[Parsed]:
        ffi, lib = cb.ffi, cb.libdutil
        skips = SkipLog()
        warnings: list[str] = []
        filesize = os.path.getsize(path)
        with open(path, "rb") as fh:
            raw = fh.read(SUPPORTED_VERSIONS["3.41"][0])
            hdr = _parse_header(name, raw, filesize, len(cb._mod_names))
            # the header is sound: libdarshan-util may now read it (and only it)
            handle = lib.darshan_log_open(os.fsencode(path))
            if handle == ffi.NULL:
                raise _err(
                    name,
                    0,
                    "a Darshan log libdarshan-util can open",
                    "bzip2-compressed log (this libdarshan-util may lack bzip2)"
                    if hdr.comp == _BZIP2
                    else None,
                )
            try:
                modules = _modules(cb, handle, hdr, name)
                names, hosts = self._validate(name, fh, hdr, modules, strict, skips)
                log = _Log(name, cb, handle, 0, strict, chunk_rows, skips, names)
                log.fh, log.hdr, log.modules = fh, hdr, {m["name"]: m for m in modules}
                yield from self._read(log, hdr, modules, hosts, warnings)
            finally:
                lib.darshan_log_close(handle)

    @staticmethod
    def _validate(
        name, fh, hdr: _Header, modules, strict, skips: SkipLog
    ) -> tuple[dict[int, str], set[str] | None]:
        """Decompress every region.

        Returns the name records (parsed here, from the checked region, rather
        than with ``darshan_log_get_name_records``) and the DXT host names
        (None: the log has no DXT). A DXT region's decompressed pieces are
        kept in ``m["dxt_pieces"]`` for :func:`_read_dxt` while all the DXT
        regions kept add up to at most :data:`_DXT_KEEP` bytes.
        """
        _validate_region(name, fh, hdr, hdr.job)
        names: dict[int, str] = {}
        if hdr.names is not None:
            walker = _NameWalker(hdr.version, hdr.order)
            _validate_region(name, fh, hdr, hdr.names, walker)
            names = walker.names
        hosts: set[str] | None = None
        keep = _DXT_KEEP
        for reg, m in zip(hdr.slots, modules, strict=True):
            m["region"] = reg
            walker = _DxtWalker(hdr.order, keep) if m["name"] in _DXT else None
            try:
                if walker is not None and not 1 <= m["ver"] <= _DXT_VERSIONS[m["name"]]:
                    raise _err(
                        name,
                        reg.off,
                        f"a {m['name']} module version between 1 and "
                        f"{_DXT_VERSIONS[m['name']]} (the record layouts iochar decodes)",
                        f"version {m['ver']}",
                    )
                _validate_region(name, fh, hdr, reg, walker)
            except InputError as exc:
                if strict:
                    raise
                m["damaged"] = str(exc)
                skips.add(None, f"{m['name']} module skipped: {exc}")
                continue
            if walker is not None:
                m["dxt_records"], m["dxt_segments"] = walker.records, walker.segments
                hosts = (hosts or set()) | walker.hosts
                if walker.kept is not None:
                    m["dxt_pieces"] = walker.kept
                    keep -= walker.kept_bytes
        return names, hosts

    def _read(self, log: _Log, hdr, modules, hosts, warnings) -> Iterator[Parsed]:
        """Yield the ``jobs`` chunk, then every module's chunks, then the last chunk's counts."""
        job = _read_job(log.cb, log.handle, hdr, log.name, log.strict, log.skips)
        log.nprocs = job.nprocs
        incomplete = [n for _, n in _incomplete(hdr, log.cb._mod_names)]
        warnings += _job_warnings(log.name, modules, job.version, incomplete)
        jobs, meta = _jobs_and_meta(job, modules, hosts, incomplete)
        yield Parsed(tables={"jobs": jobs}, meta=meta, skips=log.skips, warnings=list(warnings))
        yield from self._read_modules(log, modules)
        yield self._last_chunk(log, modules, meta)

    def _read_modules(self, log: _Log, modules) -> Iterator[Parsed]:
        """Each readable module's tables (new ``files`` first), batched into chunks."""
        name = log.name
        batcher = _Batcher(log.chunk_rows)
        for m in modules:
            if "damaged" in m:
                continue
            if m["name"].startswith("slot "):
                continue  # a module newer than libdarshan-util: warned about, not read
            reader = self._reader(m["name"])
            if reader is None:
                log.skips.add(None, f"{m['name']}: no reader for this module")
                continue
            for tables in reader(log, m["name"], m["idx"]):
                files = log.take_files()
                if files is not None:
                    tables = {"files": files, **tables}
                for piece in batcher.add(tables):
                    yield Parsed(tables=piece, skips=log.skips)
            if m["name"] in _DXT and log.counts.get(m["name"]) != m.get("dxt_records"):
                raise _err(
                    name,
                    log.counts.get(m["name"], 0),
                    f"{m.get('dxt_records')} {m['name']} records, as its region holds",
                    f"{log.counts.get(m['name'])} decoded",
                    unit="record",
                )
        for piece in batcher.flush():
            yield Parsed(tables=piece, skips=log.skips)

    @staticmethod
    def _last_chunk(log: _Log, modules, meta: dict[str, Any]) -> Parsed:
        """The last chunk: per-module record counts, the file count, the unnamed-records warning.

        Each module's entry of ``meta["modules"]`` gains ``records`` (records
        read; None for a module not read) and ``kept_in``: ``"file_stats"``
        for the modules :data:`VARIABLE_MAP` maps (iochar's analyses read
        them), ``"ops"`` for DXT, ``"module_counters"`` for the modules kept
        raw (LUSTRE, HEATMAP, APMPI, APXC, BG/Q, MDHIM, DFS, DAOS), None for
        a module not read.
        """
        final_warnings = []
        if log.unnamed:
            final_warnings.append(
                f"{log.name}: {log.unnamed} record id(s) have no name record or an empty "
                "name; their path is NULL"
            )
        modules_meta = dict(meta["modules"])
        for m in modules:
            read = not m["name"].startswith("slot ") and "damaged" not in m
            modules_meta[m["name"]] = {
                **modules_meta[m["name"]],
                "records": log.counts.get(m["name"], 0) if read else None,
                "kept_in": _kept_in(m["name"]) if read else None,
            }
        for mod, entry in modules_meta.items():
            if "records" not in entry:  # flagged incomplete, no region
                modules_meta[mod] = {**entry, "records": 0, "kept_in": _kept_in(mod)}
        return Parsed(
            tables={},
            meta={"modules": modules_meta, "files": len(log.file_ids)},
            skips=log.skips,
            warnings=final_warnings,
        )

    @staticmethod
    def _reader(module: str):
        if module in _DXT:
            return _read_dxt
        if module == "LUSTRE":
            return _read_lustre
        if module == "HEATMAP":
            return _read_heatmap
        if module in _AP_FIELDS:
            return _read_ap
        if module in _GENERIC:
            return _read_generic
        return None


def _kept_in(module: str) -> str | None:
    """The table a module's records are analyzed from (see :meth:`DarshanLoader._last_chunk`)."""
    if module in VARIABLE_MAP:
        return "file_stats"
    if module in _DXT:
        return "ops"
    if DarshanLoader._reader(module) is not None:
        return "module_counters"
    return None


register(DarshanLoader())
