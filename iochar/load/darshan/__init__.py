"""Darshan logs (``kind="darshan"``), read through the ``darshan`` package.

One Darshan log is one job. The loader reads it with libdarshan-util through
the cffi backend of the ``darshan`` package (``pip install 'iochar[darshan]'``;
imported only when a log is parsed), except for the DXT_POSIX and DXT_MPIIO
regions, which it decodes itself (see *DXT* below), and yields contract tables
(:mod:`iochar.schema`) with loader-local ids: ``job_id`` 0 and ``file_id``
numbered from 0 in order of first appearance.

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
                    the log has none), ``record_id`` = Darshan's 64-bit hash
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
  ``file_id`` is NULL for these, for BG/Q and for MDHIM.

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
overlapping, no region for a module slot the library does not know); that
every region decompresses completely (zlib's Adler-32 or bzip2's CRC catches
corrupted bytes); that the name region splits into whole records (the names
are taken from this pass, so ``darshan_log_get_name_records`` is never
called); that every DXT record's write/read counts are non-negative and its
segments fit in the region; and that each DXT module version is one whose
layout the loader knows (DXT regions are then decoded in Python, which checks
every record again, and never reach the library). It then checks every
libdarshan-util return code. Uncompressed logs (compression type 2), whose
contents cannot be checked, are refused. What remains trusted is the content of regions with
valid checksums: a log crafted with valid checksums but inconsistent LUSTRE,
HEATMAP or APMPI/APXC record contents could still crash libdarshan-util, and
a bit flip in a module's version number in the (unchecksummed) header that
yields another version the library accepts makes it decode that module with
the wrong layout.
"""

from __future__ import annotations

import bz2
import contextlib
import datetime as _dt
import glob
import os
import re
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from iochar.errors import InputError, MissingDependencyError, ParameterError
from iochar.load import register
from iochar.load._base import Parsed, SkipLog
from iochar.load._text import Source, local_path, source_name

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

KIND = "darshan"

#: Darshan's magic number (``DARSHAN_MAGIC_NR``), stored after the version.
MAGIC_NR = 6567223

#: Log format versions libdarshan-util 3.5 reads -> (header bytes, module
#: slots, partial-flag struct code, whether per-module versions follow).
SUPPORTED_VERSIONS: dict[str, tuple[int, int, str, bool]] = {
    "3.00": (296, 16, "3xI", False),
    "3.10": (360, 16, "3xI", True),
    "3.20": (360, 16, "3xI", True),
    "3.21": (360, 16, "3xI", True),
    "3.41": (1328, 64, "7xQ", True),
}

#: Compression types in the header (``enum darshan_comp_type``).
_ZLIB, _BZIP2, _NOCOMP = 0, 1, 2

#: Access-size bucket suffix -> [lo, hi) in bytes (hi None: unbounded); the
#: edges of ``DARSHAN_BUCKET_INC`` (``value < 101`` is the first bucket...).
SIZE_BINS: dict[str, tuple[int, int | None]] = {
    "0_100": (0, 101),
    "100_1K": (101, 1025),
    "1K_10K": (1025, 10241),
    "10K_100K": (10241, 102401),
    "100K_1M": (102401, 1048577),
    "1M_4M": (1048577, 4194305),
    "4M_10M": (4194305, 10485761),
    "10M_100M": (10485761, 104857601),
    "100M_1G": (104857601, 1073741825),
    "1G_PLUS": (1073741825, None),
}
_SIZE_RE = re.compile(r"^[A-Z0-9_]+?_SIZE_(READ|WRITE)_(?:AGG_)?(" + "|".join(SIZE_BINS) + r")$")
_SIZE_MODULES = frozenset({"POSIX", "MPI-IO", "H5D", "PNETCDF_VAR", "DFS", "DAOS"})


def _timestamps(m: str) -> dict[str, str]:
    return {
        "first_read_t": f"{m}_F_READ_START_TIMESTAMP",
        "last_read_t": f"{m}_F_READ_END_TIMESTAMP",
        "first_write_t": f"{m}_F_WRITE_START_TIMESTAMP",
        "last_write_t": f"{m}_F_WRITE_END_TIMESTAMP",
    }


def _times(m: str) -> dict[str, str]:
    return {
        "read_time": f"{m}_F_READ_TIME",
        "write_time": f"{m}_F_WRITE_TIME",
        "meta_time": f"{m}_F_META_TIME",
        "slowest_rank_time": f"{m}_F_SLOWEST_RANK_TIME",
    }


#: POSIX record -> file_stats (a tuple of counters is summed).
POSIX_MAP: dict[str, str | tuple[str, ...]] = {
    "bytes_read": "POSIX_BYTES_READ",
    "bytes_written": "POSIX_BYTES_WRITTEN",
    "reads": "POSIX_READS",
    "writes": "POSIX_WRITES",
    "opens": "POSIX_OPENS",
    "seq_reads": "POSIX_SEQ_READS",
    "seq_writes": "POSIX_SEQ_WRITES",
    "consec_reads": "POSIX_CONSEC_READS",
    "consec_writes": "POSIX_CONSEC_WRITES",
    "seeks": "POSIX_SEEKS",
    "stats": "POSIX_STATS",
    "syncs": ("POSIX_FSYNCS", "POSIX_FDSYNCS"),
    "max_byte_read": "POSIX_MAX_BYTE_READ",
    "max_byte_written": "POSIX_MAX_BYTE_WRITTEN",
    "file_alignment": "POSIX_FILE_ALIGNMENT",
    "file_not_aligned": "POSIX_FILE_NOT_ALIGNED",
    "mem_not_aligned": "POSIX_MEM_NOT_ALIGNED",
    **_times("POSIX"),
    **_timestamps("POSIX"),
}

#: MPI-IO record -> file_stats: independent, collective, split and
#: non-blocking operations are summed.
MPIIO_MAP: dict[str, str | tuple[str, ...]] = {
    "bytes_read": "MPIIO_BYTES_READ",
    "bytes_written": "MPIIO_BYTES_WRITTEN",
    "reads": ("MPIIO_INDEP_READS", "MPIIO_COLL_READS", "MPIIO_SPLIT_READS", "MPIIO_NB_READS"),
    "writes": (
        "MPIIO_INDEP_WRITES",
        "MPIIO_COLL_WRITES",
        "MPIIO_SPLIT_WRITES",
        "MPIIO_NB_WRITES",
    ),
    "opens": ("MPIIO_INDEP_OPENS", "MPIIO_COLL_OPENS"),
    "syncs": "MPIIO_SYNCS",
    **_times("MPIIO"),
    **_timestamps("MPIIO"),
}

#: STDIO record -> file_stats.
STDIO_MAP: dict[str, str | tuple[str, ...]] = {
    "bytes_read": "STDIO_BYTES_READ",
    "bytes_written": "STDIO_BYTES_WRITTEN",
    "reads": "STDIO_READS",
    "writes": "STDIO_WRITES",
    "opens": ("STDIO_OPENS", "STDIO_FDOPENS"),
    "seeks": "STDIO_SEEKS",
    "syncs": "STDIO_FLUSHES",
    "max_byte_read": "STDIO_MAX_BYTE_READ",
    "max_byte_written": "STDIO_MAX_BYTE_WRITTEN",
    **_times("STDIO"),
    **_timestamps("STDIO"),
}

#: HDF5 file record -> file_stats (no data moves at this level).
H5F_MAP: dict[str, str | tuple[str, ...]] = {
    "opens": "H5F_OPENS",
    "syncs": "H5F_FLUSHES",
    "meta_time": "H5F_F_META_TIME",
}

#: HDF5 dataset record -> file_stats (``file_id`` is the dataset record).
H5D_MAP: dict[str, str | tuple[str, ...]] = {
    "bytes_read": "H5D_BYTES_READ",
    "bytes_written": "H5D_BYTES_WRITTEN",
    "reads": "H5D_READS",
    "writes": "H5D_WRITES",
    "opens": "H5D_OPENS",
    "syncs": "H5D_FLUSHES",
    **_times("H5D"),
    **_timestamps("H5D"),
}

#: PnetCDF file record -> file_stats.
PNETCDF_FILE_MAP: dict[str, str | tuple[str, ...]] = {
    "bytes_read": "PNETCDF_FILE_BYTES_READ",
    "bytes_written": "PNETCDF_FILE_BYTES_WRITTEN",
    "opens": ("PNETCDF_FILE_CREATES", "PNETCDF_FILE_OPENS"),
    "syncs": "PNETCDF_FILE_SYNCS",
    "meta_time": "PNETCDF_FILE_F_META_TIME",
}

#: PnetCDF variable record -> file_stats.
PNETCDF_VAR_MAP: dict[str, str | tuple[str, ...]] = {
    "bytes_read": "PNETCDF_VAR_BYTES_READ",
    "bytes_written": "PNETCDF_VAR_BYTES_WRITTEN",
    "reads": ("PNETCDF_VAR_INDEP_READS", "PNETCDF_VAR_COLL_READS", "PNETCDF_VAR_NB_READS"),
    "writes": ("PNETCDF_VAR_INDEP_WRITES", "PNETCDF_VAR_COLL_WRITES", "PNETCDF_VAR_NB_WRITES"),
    "opens": "PNETCDF_VAR_OPENS",
    **_times("PNETCDF_VAR"),
    **_timestamps("PNETCDF_VAR"),
}

#: Darshan module -> its file_stats mapping (pvlib's VARIABLE_MAP idea).
VARIABLE_MAP: dict[str, dict[str, str | tuple[str, ...]]] = {
    "POSIX": POSIX_MAP,
    "MPI-IO": MPIIO_MAP,
    "STDIO": STDIO_MAP,
    "H5F": H5F_MAP,
    "H5D": H5D_MAP,
    "PNETCDF_FILE": PNETCDF_FILE_MAP,
    "PNETCDF_VAR": PNETCDF_VAR_MAP,
}

#: file_stats value columns, in contract order.
_STAT_COLUMNS = (
    "bytes_read",
    "bytes_written",
    "reads",
    "writes",
    "opens",
    "seq_reads",
    "seq_writes",
    "consec_reads",
    "consec_writes",
    "seeks",
    "stats",
    "syncs",
    "max_byte_read",
    "max_byte_written",
    "file_alignment",
    "file_not_aligned",
    "mem_not_aligned",
    "read_time",
    "write_time",
    "meta_time",
    "slowest_rank_time",
    "first_io_t",
    "last_io_t",
    "first_read_t",
    "last_read_t",
    "first_write_t",
    "last_write_t",
)
_FLOAT_STATS = frozenset(c for c in _STAT_COLUMNS if c.endswith(("_time", "_t")))

#: A value that is 0 while this count column is 0 means "no activity": NULL.
_ACTIVITY = {
    "first_read_t": "reads",
    "last_read_t": "reads",
    "max_byte_read": "reads",
    "first_write_t": "writes",
    "last_write_t": "writes",
    "max_byte_written": "writes",
}

#: Fixed-layout modules: name -> (prefix of libdarshan-util's counter-name
#: arrays, whether a ``file_rec_id`` follows the base record).
_GENERIC: dict[str, tuple[str, bool]] = {
    "NULL": ("null", False),
    "POSIX": ("posix", False),
    "MPI-IO": ("mpiio", False),
    "H5F": ("h5f", False),
    "H5D": ("h5d", True),
    "PNETCDF_FILE": ("pnetcdf_file", False),
    "PNETCDF_VAR": ("pnetcdf_var", True),
    "BG/Q": ("bgq", False),
    "STDIO": ("stdio", False),
    "MDHIM": ("mdhim", False),
    "DFS": ("dfs", False),
    "DAOS": ("daos", False),
}
#: pydarshan's cffi struct for the generic modules it declares.
_STRUCTS = {
    "POSIX": "struct darshan_posix_file",
    "MPI-IO": "struct darshan_mpiio_file",
    "H5F": "struct darshan_hdf5_file",
    "H5D": "struct darshan_hdf5_dataset",
    "PNETCDF_FILE": "struct darshan_pnetcdf_file",
    "PNETCDF_VAR": "struct darshan_pnetcdf_var",
    "BG/Q": "struct darshan_bgq_record",
    "STDIO": "struct darshan_stdio_file",
    "DFS": "struct darshan_dfs_file",
    "DAOS": "struct darshan_daos_object",
}
_DXT = ("DXT_POSIX", "DXT_MPIIO")
#: Modules whose records are about a file (they get a ``file_id``).
_FILE_MODULES = frozenset(
    {
        "POSIX",
        "MPI-IO",
        "STDIO",
        "H5F",
        "H5D",
        "PNETCDF_FILE",
        "PNETCDF_VAR",
        "LUSTRE",
        "DXT_POSIX",
        "DXT_MPIIO",
        "DFS",
        "DAOS",
    }
)

#: One DXT segment (``struct segment_info``) and the DXT record head.
SEGMENT_DTYPE = np.dtype(
    [("offset", "=i8"), ("length", "=i8"), ("start_time", "=f8"), ("end_time", "=f8")]
)
_DXT_HEAD = 104  # sizeof(struct dxt_file_record)
_SEG = SEGMENT_DTYPE.itemsize  # sizeof(struct segment_info)
_DXT_MAX_SEGMENT_BYTES = (1 << 31) - 1  # darshan_log_get_mod takes an int length
#: Newest DXT module versions (``DXT_POSIX_VER``, ``DXT_MPIIO_VER`` in
#: Darshan 3.5) whose record layout :class:`_DxtDecoder` knows.
_DXT_VERSIONS = {"DXT_POSIX": 1, "DXT_MPIIO": 2}
#: Most decompressed DXT bytes of one log kept from the validation pass for
#: decoding (larger regions are decompressed a second time instead).
_DXT_KEEP = 1 << 25

#: Heatmap record ids -> instrumented module, used when a log lacks the
#: name record (the ids hash ``heatmap:<MODULE>``; same table as pydarshan).
HEATMAP_IDS = {
    16592106915301738621: "POSIX",
    3989511027826779520: "STDIO",
    3668870418325792824: "MPIIO",
    1597927878319380788: "DFS",
    4131494093108637317: "DAOS",
}

#: Sanity bounds on counts read from LUSTRE and HEATMAP records (libdarshan-util
#: sizes a record to at most DEF_MOD_BUF_SIZE = 81920 bytes, about 10k OSTs).
_LUSTRE_MAX = 1 << 16
_HEATMAP_MAX_BINS = 1 << 20

_OP_DICT = pa.array(["write", "read"])
_INFLATE_STEP = 1 << 20  # compressed bytes read at a time
_INFLATE_MAX = 1 << 24  # decompressed bytes produced per call (bounds memory)
_NAME_BUF = 2 * 1024 * 1024  # libdarshan-util's name-record read buffer


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


_EXTRA: dict[str, Any] = {}


def _extra_lib():
    """A second cffi view of libdarshan-util for arrays pydarshan does not declare."""
    if "lib" in _EXTRA:
        return _EXTRA["lib"]
    _EXTRA["lib"] = None
    try:
        import cffi
        import darshan

        ffi = cffi.FFI()
        ffi.cdef("extern char *mdhim_counter_names[];\nextern char *mdhim_f_counter_names[];\n")
        here = os.path.dirname(darshan.__file__)
        candidates = glob.glob(os.path.join(here, "..", "darshan.libs", "libdarshan-util*.so*"))
        with contextlib.suppress(OSError), open("/proc/self/maps") as fh:
            candidates += [ln.split()[-1] for ln in fh if "libdarshan-util" in ln]
        for path in candidates:
            try:
                _EXTRA["lib"] = (ffi, ffi.dlopen(path))
                break
            except OSError:
                continue
    except Exception:  # noqa: BLE001 - optional nicety; the module is then skipped
        _EXTRA["lib"] = None
    return _EXTRA["lib"]


_NAMES_CACHE: dict[str, list[str] | None] = {}


def _names_array(cb, var: str) -> list[str] | None:
    """Read a NULL/``*_NUM_INDICES``-terminated C array of counter names."""
    if var in _NAMES_CACHE:
        return _NAMES_CACHE[var]
    ffi, lib = cb.ffi, cb.libdutil
    try:
        arr = getattr(lib, var)
    except AttributeError:
        extra = _extra_lib()
        arr = None
        if extra is not None:
            try:
                ffi, arr = extra[0], getattr(extra[1], var)
            except AttributeError:
                arr = None
    names = None
    if arr is not None:
        names = []
        for i in range(100_000):
            if arr[i] == ffi.NULL:
                break
            name = ffi.string(arr[i]).decode("ascii", "replace")
            if name.endswith("NUM_INDICES"):
                break
            names.append(name)
    _NAMES_CACHE[var] = names
    return names


@dataclass(frozen=True)
class _Layout:
    """Counter layout of a fixed-layout module record."""

    counters: tuple[str, ...]
    fcounters: tuple[str, ...]
    dtype: np.dtype


_LAYOUTS: dict[str, _Layout | None] = {}


def _layout(cb, module: str) -> _Layout | None:
    if module in _LAYOUTS:
        return _LAYOUTS[module]
    prefix, has_parent = _GENERIC[module]
    c = _names_array(cb, f"{prefix}_counter_names")
    f = _names_array(cb, f"{prefix}_f_counter_names")
    layout = None
    if c is not None and f is not None:
        fields = [("id", "=u8"), ("rank", "=i8")]
        if has_parent:
            fields.append(("file_rec_id", "=u8"))
        fields += [("counters", "=i8", (len(c),)), ("fcounters", "=f8", (len(f),))]
        dtype = np.dtype(fields)
        struct_name = _STRUCTS.get(module)
        ok = True
        if struct_name is not None:
            try:
                end = cb.ffi.offsetof(struct_name, "fcounters") + 8 * len(f)
                ok = end == dtype.itemsize and cb.ffi.sizeof(struct_name) >= end
            except Exception:  # noqa: BLE001 - not declared by pydarshan: names decide
                ok = True
        if ok:
            layout = _Layout(tuple(c), tuple(f), dtype)
    _LAYOUTS[module] = layout
    return layout


# ----------------------------------------------------------------- header --


@dataclass
class _Region:
    what: str  # "job", "name", or "module slot <i>"
    off: int
    length: int
    slot: int | None = None
    module: str | None = None


@dataclass
class _Header:
    version: str
    order: str  # "<" or ">"
    comp: int
    size: int
    job: _Region
    names: _Region | None
    slots: list[_Region] = field(default_factory=list)


def _err(path, line, expected, got=None, unit="byte"):
    return InputError(path, line, expected, got, kind=KIND, unit=unit)


def _parse_header(path: str, raw: bytes, filesize: int, n_known: int) -> _Header:
    """Decode and check the uncompressed header and the region map."""
    if filesize == 0:
        raise _err(path, None, "a Darshan log, got an empty file")
    version = raw[:8].split(b"\x00", 1)[0].decode("ascii", "replace")
    if len(raw) < 8 or version not in SUPPORTED_VERSIONS:
        raise _err(
            path,
            0,
            "a Darshan log format version string ("
            + ", ".join(SUPPORTED_VERSIONS)
            + ") in the first 8 bytes",
            raw[:8],
        )
    size, nslots, partial_code, has_ver = SUPPORTED_VERSIONS[version]
    if len(raw) < size or filesize < size:
        raise _err(
            path,
            min(len(raw), filesize),
            f"a {size}-byte Darshan {version} header, but the file ends at byte "
            f"{min(len(raw), filesize)}",
        )
    for order in ("<", ">"):
        if struct.unpack_from(order + "q", raw, 8)[0] == MAGIC_NR:
            break
    else:
        raise _err(path, 8, f"the Darshan magic number {MAGIC_NR}", raw[8:16])
    comp = raw[16]
    if comp == _NOCOMP:
        raise _err(
            path,
            16,
            "a zlib- or bzip2-compressed log (iochar refuses uncompressed logs: their "
            "record counts cannot be checked before libdarshan-util trusts them)",
            "compression type 2",
        )
    if comp not in (_ZLIB, _BZIP2):
        raise _err(path, 16, "compression type 0 (zlib) or 1 (bzip2)", f"type {comp}")
    head = struct.calcsize(order + "8sqB" + partial_code)
    name_off, name_len = struct.unpack_from(order + "QQ", raw, head)
    maps = struct.unpack_from(order + f"{2 * nslots}Q", raw, head + 16)
    vers = (
        struct.unpack_from(order + f"{nslots}I", raw, head + 16 + 16 * nslots)
        if has_ver
        else (0,) * nslots
    )
    slots = []
    for i in range(nslots):
        off, length = maps[2 * i], maps[2 * i + 1]
        if length == 0:
            continue
        if version == "3.41" and i >= n_known:
            raise _err(
                path,
                head + 16 + 16 * i,
                f"no data for module slot {i} (libdarshan-util knows {n_known} modules)",
                f"{length} bytes at offset {off}",
            )
        slots.append(_Region(f"module slot {i} (version {vers[i]})", off, length, slot=i))
    # the job region ends where libdarshan-util thinks it does
    if name_off:
        job_end = name_off
    else:
        firsts = [maps[2 * i] for i in range(nslots) if maps[2 * i] != 0]
        job_end = firsts[0] if firsts else filesize
    if job_end <= size:
        raise _err(
            path,
            size,
            f"a compressed job record after the {size}-byte header",
            f"job region ending at byte {job_end}",
        )
    job = _Region("job", size, job_end - size)
    names = _Region("name", name_off, name_len) if name_len else None
    regions = [job] + ([names] if names else []) + slots
    for reg in regions:
        if reg.off < size or reg.off + reg.length > filesize:
            raise _err(
                path,
                reg.off,
                f"the {reg.what} region ({reg.length} compressed bytes at byte {reg.off}) "
                f"inside the file after the header",
                f"file of {filesize} bytes",
            )
    ordered = sorted(regions, key=lambda r: r.off)
    for a, b in zip(ordered, ordered[1:], strict=False):
        if a.off + a.length > b.off:
            raise _err(
                path,
                b.off,
                f"non-overlapping regions, but the {a.what} region runs into the {b.what} region",
            )
    return _Header(version, order, comp, size, job, names, slots)


# ------------------------------------------------------------- validation --


def _region_chunks(fh, reg: _Region) -> Iterator[bytes]:
    fh.seek(reg.off)
    left = reg.length
    while left:
        chunk = fh.read(min(left, _INFLATE_STEP))
        if not chunk:
            raise EOFError(f"file ends inside the {reg.what} region")
        left -= len(chunk)
        yield chunk


def _inflate(chunks: Iterable[bytes], comp: int) -> Iterator[bytes]:
    """Decompress a region that may hold several concatenated streams.

    Raises ``zlib.error``/``OSError``/``EOFError`` when a stream is corrupt
    or cut short, exactly the cases libdarshan-util would read as fewer
    records.
    """
    if comp == _ZLIB:
        d, fresh = zlib.decompressobj(), True
        for chunk in chunks:
            data = chunk
            while data:
                fresh = False
                out = d.decompress(data, _INFLATE_MAX)
                if out:
                    yield out
                if d.eof:
                    data = d.unused_data
                    d, fresh = zlib.decompressobj(), True
                else:
                    data = d.unconsumed_tail
        if not fresh:
            raise EOFError("compressed stream cut short")
        return
    b, fresh = bz2.BZ2Decompressor(), True
    for chunk in chunks:
        data = chunk
        while True:
            if data:
                fresh = False
            out = b.decompress(data, _INFLATE_MAX)
            data = b""
            if out:
                yield out
            if b.eof:
                data = b.unused_data
                b, fresh = bz2.BZ2Decompressor(), True
                if not data:
                    break
            elif b.needs_input:
                break
    if not fresh:
        raise EOFError("compressed stream cut short")


class _NameWalker:
    """Splits the name region into records as libdarshan-util does, keeping them.

    The first record of an id wins, as in libdarshan-util's hash table.
    """

    def __init__(self, version: str, order: str) -> None:
        self.old = version == "3.00"
        self.order = order
        self.pend = b""
        self.names: dict[int, str] = {}

    def feed(self, data: bytes) -> None:
        buf = self.pend + data
        pos, n = 0, len(buf)
        names, idfmt = self.names, self.order + "Q"
        if self.old:  # id | uint32 len | path
            while n - pos > 12:
                rid, plen = struct.unpack_from(self.order + "QI", buf, pos)
                if n - pos < 12 + plen:
                    break
                path = buf[pos + 12 : pos + 12 + plen]
                names.setdefault(rid, path.decode("utf-8", "backslashreplace"))
                pos += 12 + plen
        else:  # id | NUL-terminated name
            while n - pos > 9:
                nul = buf.find(b"\x00", pos + 8)
                if nul < 0:
                    break
                (rid,) = struct.unpack_from(idfmt, buf, pos)
                names.setdefault(rid, buf[pos + 8 : nul].decode("utf-8", "backslashreplace"))
                pos = nul + 1
        self.pend = buf[pos:]
        if len(self.pend) >= _NAME_BUF // 2:
            raise ValueError(f"a name record longer than {_NAME_BUF // 2} bytes")

    def close(self) -> None:
        if self.pend:
            raise ValueError(f"{len(self.pend)} bytes after the last whole name record")


def _check_counts(record: int, wc: int, rc: int) -> None:
    """Raise ValueError naming the DXT record unless its segment counts are sane."""
    if wc < 0 or rc < 0 or (wc + rc) * _SEG > _DXT_MAX_SEGMENT_BYTES:
        raise ValueError(
            f"DXT record {record}: write_count {wc} and read_count "
            f"{rc} are not valid segment counts"
        )


class _DxtWalker:
    """Checks DXT record heads and segment counts; collects host names.

    With ``keep`` > 0 it also holds on to the decompressed pieces it is fed,
    as long as they add up to at most ``keep`` bytes (``kept`` is None past
    that), so that :class:`_DxtDecoder` can decode them without
    decompressing the region again.
    """

    def __init__(self, order: str, keep: int = 0) -> None:
        self.head = struct.Struct(order + "24x64sqq")  # skip id, rank, shared_record
        self.pend = b""
        self.skip = 0
        self.records = 0
        self.segments = 0
        self._hosts: set[bytes] = set()
        self.keep = keep
        self.kept: list[bytes] | None = [] if keep > 0 else None
        self.kept_bytes = 0

    @property
    def hosts(self) -> set[str]:
        return {h.split(b"\x00", 1)[0].decode("utf-8", "replace") for h in self._hosts}

    def feed(self, data: bytes) -> None:
        if self.kept is not None:
            self.kept_bytes += len(data)
            if self.kept_bytes <= self.keep:
                self.kept.append(data)
            else:
                self.kept = None
        if self.skip:
            take = min(self.skip, len(data))
            self.skip -= take
            if take == len(data):
                return
            data = data[take:]
        buf = self.pend + data if self.pend else data
        pos, n = 0, len(buf)
        unpack, hosts = self.head.unpack_from, self._hosts
        records = segments = 0
        while n - pos >= _DXT_HEAD:
            host, wc, rc = unpack(buf, pos)
            if wc < 0 or rc < 0 or (wc + rc) * _SEG > _DXT_MAX_SEGMENT_BYTES:
                _check_counts(self.records + records, wc, rc)  # raises
            hosts.add(host)
            records += 1
            segments += wc + rc
            pos += _DXT_HEAD + (wc + rc) * _SEG
        self.records += records
        self.segments += segments
        if pos > n:
            self.skip, self.pend = pos - n, b""
        else:
            self.pend = buf[pos:]

    def close(self) -> None:
        if self.skip or self.pend:
            raise ValueError(
                f"DXT record {self.records - 1 if self.skip else self.records} is cut short "
                f"({self.skip or len(self.pend)} bytes missing or left over)"
            )


def _op_column(writes: np.ndarray, reads: np.ndarray, n: int) -> pa.Array:
    """The ``op`` column of runs of ``writes[i]`` writes then ``reads[i]`` reads.

    Built from raw buffers, which is faster than casting a dictionary array.
    """
    counts = np.column_stack([writes, reads]).ravel()
    if 5 * n >= 1 << 31:  # past int32 string offsets: leave it to Arrow's cast
        op = np.repeat(np.tile(np.array([0, 1], np.int8), len(writes)), counts)
        return pa.DictionaryArray.from_arrays(pa.array(op), _OP_DICT).cast(pa.string())
    lens = np.repeat(np.tile(np.array([5, 4], np.int32), len(writes)), counts)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(lens, out=offsets[1:])
    data = b"".join(
        [b"write" * w + b"read" * r for w, r in zip(writes.tolist(), reads.tolist(), strict=True)]
    )
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


class _DxtDecoder:
    """Decodes a DXT region's decompressed bytes into contract tables.

    Fed the region piece by piece (pieces may split a record head or a
    segment anywhere), it checks every record as :class:`_DxtWalker` does
    and queues in ``out`` tables of about ``chunk_rows`` rows: the
    ``module_counters`` rows of the record heads (``DXT_WRITE_COUNT``,
    ``DXT_READ_COUNT``) and one ``ops`` row per segment, writes then reads.
    Segments are copied a run at a time and turned into columns with
    ``np.frombuffer``; a record with more segments than fit in a chunk is
    split across chunks. Works like libdarshan-util's ``dxt_log_get_*_file``:
    fields in the log's byte order, and DXT_MPIIO version 1 offsets (not
    recorded by that version) are -1.
    """

    _COUNTERS = ["DXT_WRITE_COUNT", "DXT_READ_COUNT"]

    def __init__(self, log: _Log, module: str, order: str, version: int) -> None:
        self.log, self.module = log, module
        self.rows = log.chunk_rows
        self.head = struct.Struct(order + "Qq8x64xqq")  # id, rank, [shared, host], counts
        self.seg_dtype = SEGMENT_DTYPE.newbyteorder(order)
        self.native = self.seg_dtype == SEGMENT_DTYPE
        self.no_offsets = module == "DXT_MPIIO" and version == 1
        self.pend = bytearray()  # an incomplete head (or segment) at a piece's end
        self.left = 0  # segments of the current record still to come
        self.done = 0  # segments of the current record already taken
        self.cur = (0, 0, 0)  # rank, file_id, write_count of the current record
        self.records = 0
        self.out: list[dict[str, pa.Table]] = []
        self._reset()

    def _reset(self) -> None:
        self.raw = bytearray()  # segment bytes of this chunk
        self.heads: list[int] = []  # ordinal, file_id, rank, write_count, read_count
        self.runs: list[int] = []  # rank, file_id, writes, reads of a run of segments
        self.used = 0  # rows of this chunk (2 per head, 1 per segment)

    def feed(self, data: bytes) -> None:
        mv = memoryview(data)
        n, pos = len(data), 0
        if self.pend:  # complete the unit the previous piece ended inside
            need = (_SEG if self.left else _DXT_HEAD) - len(self.pend)
            if n < need:
                self.pend += mv
                return
            self.pend += mv[:need]
            unit, self.pend = bytes(self.pend), bytearray()
            pos = need
            if self.left:
                self._segments(unit, 0, 1)
            else:
                self._head(unit, 0)
        unpack, rows = self.head.unpack_from, self.rows
        fids, file_id = self.log.file_ids, self.log.file_id
        while True:
            if self.left:
                k = min(self.left, (n - pos) // _SEG)
                if k:
                    self._segments(mv, pos, k)
                    pos += k * _SEG
                if self.left:  # the piece ends inside this record's segments
                    self.pend += mv[pos:]
                    return
            if n - pos < _DXT_HEAD:
                self.pend += mv[pos:]
                return
            rid, rank, wc, rc = unpack(mv, pos)
            nseg = wc + rc
            end = pos + _DXT_HEAD + nseg * _SEG
            if (
                wc >= 0
                and rc >= 0
                and end <= n
                and self.used + 2 + nseg <= rows
                and nseg * _SEG <= _DXT_MAX_SEGMENT_BYTES
            ):
                # the common case, done inline: the whole record is in this
                # piece and fits in this chunk
                fid = fids.get(rid)
                if fid is None:
                    fid = file_id(rid)
                self.heads += (self.records, fid, rank, wc, rc)
                if nseg:
                    self.raw += mv[pos + _DXT_HEAD : end]
                    self.runs += (rank, fid, wc, rc)
                self.used += 2 + nseg
                self.records += 1
                pos = end
                if self.used >= rows:
                    self.flush()
                continue
            self._head(mv, pos)  # checks the counts; the segments follow
            pos += _DXT_HEAD

    def _head(self, buf, pos: int) -> None:
        rid, rank, wc, rc = self.head.unpack_from(buf, pos)
        _check_counts(self.records, wc, rc)
        if self.used and self.used + 2 > self.rows:
            self.flush()
        fid = self.log.file_id(rid)
        self.heads += (self.records, fid, rank, wc, rc)
        self.used += 2
        self.records += 1
        self.left, self.done, self.cur = wc + rc, 0, (rank, fid, wc)

    def _segments(self, buf, pos: int, k: int) -> None:
        rank, fid, wc = self.cur
        while k:
            room = self.rows - self.used
            if room <= 0:
                self.flush()
                room = self.rows
            t = min(k, room)
            self.raw += buf[pos : pos + t * _SEG]
            w = min(max(wc - self.done, 0), t)
            self.runs += (rank, fid, w, t - w)
            self.done += t
            self.left -= t
            self.used += t
            pos += t * _SEG
            k -= t

    def flush(self) -> None:
        """Queue the tables of what has been decoded since the last flush."""
        tables: dict[str, pa.Table] = {}
        if self.heads:
            ordinal, fid, rank, wc, rc = np.array(self.heads, np.int64).reshape(-1, 5).T
            tables["module_counters"] = _long_table(
                self.module,
                np.repeat(ordinal, 2),
                np.repeat(fid, 2),
                np.repeat(rank, 2),
                None,
                self._COUNTERS,
                np.column_stack([wc, rc]).ravel().astype(np.float64),
            )
        seg = np.frombuffer(self.raw, dtype=self.seg_dtype)  # raw is replaced, not reused
        n = len(seg)
        if n:
            if not self.native:
                seg = seg.astype(SEGMENT_DTYPE)
            rank, fid, w, r = np.array(self.runs, np.int64).reshape(-1, 4).T
            per = w + r
            offset = np.full(n, -1, np.int64) if self.no_offsets else seg["offset"]
            tables["ops"] = pa.table(
                {
                    "job_id": pa.array(np.zeros(n, np.int64)),
                    "rank": pa.array(np.repeat(rank, per).astype(np.int32)),
                    "file_id": pa.array(np.repeat(fid, per)),
                    "op": _op_column(w, r, n),
                    "offset": pa.array(offset),
                    "size": pa.array(seg["length"]),
                    "t_start": pa.array(seg["start_time"]),
                    "t_end": pa.array(seg["end_time"]),
                    "call": _const_str(self.module, n),
                }
            )
        if tables:
            self.out.append(tables)
        self._reset()

    def close(self) -> None:
        if self.left or self.pend:
            missing = self.left * _SEG - len(self.pend) if self.left else len(self.pend)
            raise ValueError(
                f"DXT record {self.records - 1 if self.left else self.records} is cut short "
                f"({missing} bytes missing or left over)"
            )
        self.flush()


def _validate_region(path, fh, hdr: _Header, reg: _Region, walker=None) -> None:
    """Decompress ``reg`` completely; raise InputError naming it on failure."""
    try:
        for out in _inflate(_region_chunks(fh, reg), hdr.comp):
            if walker is not None:
                walker.feed(out)
        if walker is not None:
            walker.close()
    except (zlib.error, OSError, EOFError, ValueError) as exc:
        raise _region_error(path, hdr, reg, exc) from exc


def _region_error(path, hdr: _Header, reg: _Region, exc: Exception) -> InputError:
    """The InputError for a region that does not decompress or decode."""
    return _err(
        path,
        reg.off,
        f"a complete {'zlib' if hdr.comp == _ZLIB else 'bzip2'}-compressed "
        f"{reg.module or reg.what} region ({reg.length} bytes at byte {reg.off})",
        f"{type(exc).__name__}: {exc}",
    )


# ---------------------------------------------------------------- loader --


@dataclass
class _Log:
    """State of one open log while its records are read."""

    name: str
    cb: Any
    handle: Any
    nprocs: int
    strict: bool
    chunk_rows: int
    skips: SkipLog
    names: dict[int, str] = field(default_factory=dict)
    file_ids: dict[int, int] = field(default_factory=dict)
    new_files: list[int] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    unnamed: int = 0
    fh: Any = None  # the open log file (DXT regions are decoded from it)
    hdr: _Header | None = None
    modules: dict[str, dict[str, Any]] = field(default_factory=dict)

    def file_ids_for(self, ids: np.ndarray) -> np.ndarray:
        """Loader-local file ids for record ids, numbering new ones."""
        out = np.empty(len(ids), dtype=np.int64)
        fid = self.file_ids
        for i, rid in enumerate(ids.tolist()):
            f = fid.get(rid)
            if f is None:
                f = self.file_id(rid)
            out[i] = f
        return out

    def file_id(self, rid: int) -> int:
        """The loader-local file id of one record id, numbering it if new."""
        f = self.file_ids.get(rid)
        if f is None:
            f = self.file_ids[rid] = len(self.file_ids)
            self.new_files.append(rid)
            if rid not in self.names:
                self.unnamed += 1
        return f

    def take_files(self) -> pa.Table | None:
        if not self.new_files:
            return None
        rids = self.new_files
        self.new_files = []
        start = len(self.file_ids) - len(rids)
        return pa.table(
            {
                "job_id": pa.array(np.zeros(len(rids), np.int64)),
                "file_id": pa.array(np.arange(start, start + len(rids), dtype=np.int64)),
                "path": pa.array([self.names.get(r) for r in rids], pa.string()),
                "record_id": pa.array(np.array(rids, dtype=np.uint64)),
            }
        )


def _const_str(value: str, n: int) -> pa.Array:
    """A string column holding ``value`` n times, built from raw buffers."""
    b = value.encode()
    offsets = np.arange(n + 1, dtype=np.int32) * len(b)
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(b * n)])


def _tiled_str(names: list[str], n: int) -> pa.Array:
    """``names`` repeated n times as one string column, built from raw buffers."""
    blobs = [x.encode() for x in names]
    lens = np.fromiter((len(b) for b in blobs), np.int32, len(blobs))
    block = int(lens.sum())
    base = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int32)
    offsets = (np.arange(n, dtype=np.int32)[:, None] * block + base).ravel()
    offsets = np.append(offsets, np.int32(n * block))
    return pa.Array.from_buffers(
        pa.string(),
        n * len(names),
        [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(blobs) * n)],
    )


def _nullable_rank(ranks: np.ndarray) -> pa.Array:
    if len(ranks) and ranks.min() >= 0:
        return pa.array(ranks.astype(np.int32))
    return pa.array(ranks.astype(np.int32), mask=ranks < 0)


def _long_table(
    module: str,
    rec: np.ndarray,
    file_id: np.ndarray | None,
    rank: np.ndarray,
    codes: np.ndarray | None,
    names: list[str],
    values: np.ndarray,
) -> pa.Table:
    """The module_counters long table from flat, equally long arrays.

    ``codes`` index ``names`` row by row; None means every record lists all
    of ``names`` in order (fixed layouts), which is built without a gather.
    """
    n = len(values)
    if codes is None:
        counter = _tiled_str(names, n // len(names))
    else:
        counter = pa.array(names, pa.string()).take(pa.array(codes.astype(np.int32)))
    return pa.table(
        {
            "job_id": pa.array(np.zeros(n, np.int64)),
            "module": _const_str(module, n),
            "record": pa.array(rec.astype(np.int32)),
            "file_id": (
                pa.nulls(n, pa.int64()) if file_id is None else pa.array(file_id, pa.int64())
            ),
            "rank": _nullable_rank(rank),
            "counter": counter,
            "value": pa.array(values.astype(np.float64)),
        }
    )


@dataclass(frozen=True)
class _StatPlan:
    """Precomputed gather of one module's VARIABLE_MAP over its counter layout."""

    columns: tuple[str, ...]  # mapped file_stats columns, in order
    sources: np.ndarray  # counter columns used (counters then fcounters numbering)
    weights: np.ndarray  # len(sources) x len(columns), 1 where a source feeds a column


_PLANS: dict[tuple[str, _Layout], _StatPlan] = {}


def _stat_plan(module: str, layout: _Layout) -> _StatPlan:
    key = (module, layout)
    if key not in _PLANS:
        index = {n: i for i, n in enumerate(layout.counters + layout.fcounters)}
        columns, feeds = [], []
        for col in _STAT_COLUMNS:
            spec = VARIABLE_MAP[module].get(col)
            if spec is None:
                continue
            parts = [index[n] for n in ((spec,) if isinstance(spec, str) else spec) if n in index]
            if parts:
                columns.append(col)
                feeds.append(parts)
        sources = np.array(sorted({i for parts in feeds for i in parts}), dtype=np.int64)
        where = {s: k for k, s in enumerate(sources.tolist())}
        weights = np.zeros((len(sources), len(columns)))
        for j, parts in enumerate(feeds):
            weights[[where[i] for i in parts], j] = 1.0
        _PLANS[key] = _StatPlan(tuple(columns), sources, weights)
    return _PLANS[key]


def _file_stats(
    module: str, layout: _Layout, recs: np.ndarray, file_ids: np.ndarray, nprocs: int
) -> pa.Table:
    """file_stats rows for a batch of fixed-layout records (see VARIABLE_MAP)."""
    plan = _stat_plan(module, layout)
    n = len(recs)
    nc = len(layout.counters)
    ci = plan.sources[plan.sources < nc]
    fi = plan.sources[plan.sources >= nc] - nc
    X = np.hstack([recs["counters"][:, ci].astype(np.float64), recs["fcounters"][:, fi]])
    valid = X >= 0  # Darshan's -1 "not available" (and any negative) is NULL
    V = np.where((valid @ plan.weights) > 0, np.where(valid, X, 0.0) @ plan.weights, np.nan)
    at = {col: j for j, col in enumerate(plan.columns)}

    def col(name: str) -> np.ndarray | None:
        j = at.get(name)
        return None if j is None else V[:, j]

    for name, count in _ACTIVITY.items():
        v, k = col(name), col(count)
        if v is not None and k is not None:
            v[(v == 0) & (k == 0)] = np.nan  # a view of V: edits in place
    extra = {}
    for name, a, b, fn in (
        ("first_io_t", "first_read_t", "first_write_t", np.fmin),
        ("last_io_t", "last_read_t", "last_write_t", np.fmax),
    ):
        x, y = col(a), col(b)
        extra[name] = fn(x, y) if x is not None and y is not None else (x if y is None else y)
    VT = np.ascontiguousarray(V.T)  # one contiguous row per column: cheap to wrap
    nulls = np.isnan(VT)
    Vi = np.where(nulls, 0, VT).astype(np.int64)
    ranks = recs["rank"]
    out: dict[str, pa.Array] = {
        "job_id": pa.array(np.zeros(n, np.int64)),
        "file_id": pa.array(file_ids),
        "rank": _nullable_rank(ranks),
        "module": _const_str(module, n),
    }
    for c in _STAT_COLUMNS:
        j = at.get(c)
        if c in _FLOAT_STATS:
            v = extra.get(c) if j is None else VT[j]
            out[c] = pa.nulls(n, pa.float64()) if v is None else pa.array(v, from_pandas=True)
        elif j is None:
            out[c] = pa.nulls(n, pa.int64())
        else:
            m = nulls[j]
            out[c] = pa.array(Vi[j], mask=m) if m.any() else pa.array(Vi[j])
    out["nranks"] = pa.array(np.where(ranks < 0, nprocs, 1).astype(np.int32))
    return pa.table(out)


_SIZE_INDEX: dict[tuple[str, ...], tuple[np.ndarray, list[str], np.ndarray, np.ndarray]] = {}


def _size_index(counters: tuple[str, ...]):
    """Columns of the access-size counters with their op and [lo, hi) bin."""
    if counters not in _SIZE_INDEX:
        idx, ops, lo, hi = [], [], [], []
        for i, name in enumerate(counters):
            m = _SIZE_RE.match(name)
            if m:
                idx.append(i)
                ops.append(m.group(1).lower())
                a, b = SIZE_BINS[m.group(2)]
                lo.append(a)
                hi.append(-1 if b is None else b)
        _SIZE_INDEX[counters] = (np.array(idx, np.int64), ops, np.array(lo), np.array(hi))
    return _SIZE_INDEX[counters]


def _access_sizes(
    module: str, layout: _Layout, recs: np.ndarray, file_ids: np.ndarray
) -> pa.Table | None:
    idx, ops, lo, hi = _size_index(layout.counters)
    if not len(idx):
        return None
    B = recs["counters"][:, idx]
    r, c = np.nonzero(B > 0)
    if not len(r):
        return None
    op_codes = np.array([0 if o == "write" else 1 for o in ops], np.int8)[c]
    n = len(r)
    return pa.table(
        {
            "job_id": pa.array(np.zeros(n, np.int64)),
            "file_id": pa.array(file_ids[r]),
            "rank": _nullable_rank(recs["rank"][r]),
            "module": _const_str(module, n),
            "op": pa.DictionaryArray.from_arrays(pa.array(op_codes), _OP_DICT).cast(pa.string()),
            "bin_lo": pa.array(lo[c].astype(np.int64)),
            "bin_hi": pa.array(hi[c].astype(np.int64), mask=hi[c] < 0),
            "count": pa.array(B[r, c].astype(np.int64)),
        }
    )


def _read_generic(log: _Log, module: str, idx: int) -> Iterator[dict[str, pa.Table]]:
    layout = _layout(log.cb, module)
    if layout is None:
        log.skips.add(None, f"{module}: counter layout unknown to this libdarshan-util")
        return
    ffi = log.cb.ffi
    size = layout.dtype.itemsize
    k = len(layout.counters) + len(layout.fcounters)
    per_batch = max(1, log.chunk_rows // k)
    names = list(layout.counters) + list(layout.fcounters)
    file_like = module in _FILE_MODULES
    buf = bytearray()
    start = 0

    def flush(count: int) -> dict[str, pa.Table]:
        nonlocal buf, start
        recs = np.frombuffer(buf, dtype=layout.dtype)  # keeps buf alive; a new one follows
        buf = bytearray()
        ordinals = np.arange(start, start + count)
        start += count
        fids = log.file_ids_for(recs["id"]) if file_like else None
        values = np.hstack([recs["counters"].astype(np.float64), recs["fcounters"]])
        tables = {
            "module_counters": _long_table(
                module,
                np.repeat(ordinals, k),
                None if fids is None else np.repeat(fids, k),
                np.repeat(recs["rank"], k),
                None,
                names,
                values.ravel(),
            )
        }
        if module in VARIABLE_MAP:
            tables["file_stats"] = _file_stats(module, layout, recs, fids, log.nprocs)
        if module in _SIZE_MODULES:
            sizes = _access_sizes(module, layout, recs, fids)
            if sizes is not None:
                tables["access_sizes"] = sizes
        return tables

    pending = 0
    out: list[dict[str, pa.Table]] = []

    buffer = ffi.buffer

    def consume(ptr, ordinal):
        nonlocal pending
        buf.extend(buffer(ptr, size))
        pending += 1
        if pending >= per_batch:
            out.append(flush(pending))
            pending = 0

    yield from _get_records_streaming(log, module, idx, consume, out)
    if pending:
        yield flush(pending)


def _get_records_streaming(
    log: _Log, module: str, idx: int, consume: Callable[[Any, int], None], out: list
) -> Iterator[dict[str, pa.Table]]:
    """Call libdarshan-util's get_record until it reports the end.

    ``consume(ptr, ordinal)`` copies what it needs from each record (the C
    buffer is freed right after) and may queue finished tables in ``out``,
    which are yielded as they appear. The record count lands in
    ``log.counts[module]``.
    """
    ffi, lib = log.cb.ffi, log.cb.libdutil
    cell = ffi.new("void **")
    null, handle = ffi.NULL, log.handle
    get_record, free = lib.darshan_log_get_record, lib.darshan_free
    n = 0
    while True:
        cell[0] = null
        r = get_record(handle, idx, cell)
        if r == 0:
            break
        if r < 0:
            if log.strict:
                raise _err(
                    log.name,
                    n,
                    f"a readable {module} record (libdarshan-util returned {r})",
                    unit="record",
                )
            log.skips.add(n, f"{module} record {n} unreadable; rest of module skipped")
            break
        ptr = cell[0]
        try:
            consume(ptr, n)
        finally:
            free(ptr)
        n += 1
        if out:
            yield from out
            out.clear()
    log.counts[module] = n
    yield from out
    out.clear()


def _read_dxt(log: _Log, module: str, idx: int) -> Iterator[dict[str, pa.Table]]:
    """DXT segments -> ops, decoded in Python from the region's decompressed bytes.

    libdarshan-util never reads a DXT region: the pieces the validation pass
    kept are decoded (the region is decompressed again only when it was too
    large to keep), and the record count lands in ``log.counts[module]``.
    """
    m, hdr = log.modules[module], log.hdr
    reg: _Region = m["region"]
    dec = _DxtDecoder(log, module, hdr.order, m["ver"])
    kept = m.pop("dxt_pieces", None)
    pieces = _drain(kept) if kept is not None else _inflate(_region_chunks(log.fh, reg), hdr.comp)
    while True:
        try:
            piece = next(pieces, None)
            if piece is None:
                dec.close()
            else:
                dec.feed(piece)
        except (zlib.error, OSError, EOFError, ValueError) as exc:
            raise _region_error(log.name, hdr, reg, exc) from exc
        out, dec.out = dec.out, []
        yield from out
        if piece is None:
            break
    log.counts[module] = dec.records


def _drain(pieces: list[bytes]) -> Iterator[bytes]:
    """Yield and drop the pieces of a list, so each is freed once decoded."""
    pieces.reverse()
    while pieces:
        yield pieces.pop()


class _CounterRows:
    """Records of a variable number of counters each, buffered as ``module_counters`` rows.

    LUSTRE and HEATMAP records hold as many counters as their stripes or bins; each
    record's codes (indexes into ``names``, which grows as new counters are met) and
    values are added, and every ``log.chunk_rows`` rows become one piece in ``out``.

    Parameters
    ----------
    log : _Log
        The open log.
    module : str
        The module the records belong to.
    names : list of str
        Counter names by code; read at each flush, so it may grow in between.
    file_like : bool
        The record ids name files (their ``file_id`` is filled in), or not (NULL).
    """

    def __init__(self, log: _Log, module: str, names: list[str], *, file_like: bool) -> None:
        self.log, self.module, self.names, self.file_like = log, module, names, file_like
        self.out: list[dict[str, pa.Table]] = []
        self._clear()

    def _clear(self) -> None:
        self.recs: list[int] = []
        self.ids: list[int] = []
        self.ranks: list[int] = []
        self.codes: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.rows = 0

    def add(self, ordinal: int, rid: int, rank: int, codes: list, values: list) -> None:
        """Buffer one record: its counters' codes and values, given as lists of arrays."""
        self.recs.append(ordinal)
        self.ids.append(rid)
        self.ranks.append(rank)
        self.codes.append(np.concatenate(codes))
        self.values.append(np.concatenate(values))
        self.rows += len(self.values[-1])
        if self.rows >= self.log.chunk_rows:
            self.flush()

    def flush(self) -> None:
        """Move the buffered records into one piece of ``out``."""
        if not self.recs:
            return
        reps = np.array([len(v) for v in self.values])
        fids = None
        if self.file_like:
            fids = np.repeat(self.log.file_ids_for(np.array(self.ids, dtype=np.uint64)), reps)
        self.out.append(
            {
                "module_counters": _long_table(
                    self.module,
                    np.repeat(np.array(self.recs), reps),
                    fids,
                    np.repeat(np.array(self.ranks, np.int64), reps),
                    np.concatenate(self.codes),
                    list(self.names),
                    np.concatenate(self.values),
                )
            }
        )
        self._clear()


def _read_lustre(log: _Log, module: str, idx: int) -> Iterator[dict[str, pa.Table]]:
    ffi = log.cb.ffi
    comp_names = _names_array(log.cb, "lustre_comp_counter_names") or []
    ncomp = len(comp_names)
    suffixes = [n.removeprefix("LUSTRE_COMP_") for n in comp_names]
    names: list[str] = ["LUSTRE_NUM_COMPONENTS", "LUSTRE_NUM_STRIPES"]
    code_of = {n: i for i, n in enumerate(names)}

    def code(name: str) -> int:
        c = code_of.get(name)
        if c is None:
            c = code_of[name] = len(names)
            names.append(name)
        return c

    comp_codes: dict[int, np.ndarray] = {}
    ost_codes: dict[tuple[int, int], int] = {}
    rows = _CounterRows(log, module, names, file_like=True)

    def consume(ptr, ordinal):
        rec = ffi.cast("struct darshan_lustre_record *", ptr)
        nc, ns = int(rec.num_comps), int(rec.num_stripes)
        if not (0 <= nc <= _LUSTRE_MAX and 0 <= ns <= _LUSTRE_MAX):
            raise _err(
                log.name,
                ordinal,
                f"LUSTRE component and stripe counts between 0 and {_LUSTRE_MAX}",
                f"{nc} components, {ns} stripes",
                unit="record",
            )
        codes = [np.array([0, 1])]
        values = [np.array([nc, ns], np.float64)]
        ost = np.frombuffer(ffi.buffer(rec.ost_ids, 8 * ns), dtype="=i8") if ns else None
        used = 0
        for k in range(nc):
            counters = np.frombuffer(ffi.buffer(rec.comps[k].counters), dtype="=i8")
            if k not in comp_codes:
                comp_codes[k] = np.array([code(f"LUSTRE_COMP{k + 1}_{s}") for s in suffixes])
            codes.append(comp_codes[k])
            values.append(counters[:ncomp].astype(np.float64))
            stripes = int(counters[1]) if ncomp > 1 else 0
            stripes = max(0, min(stripes, ns - used))
            if stripes:
                keys = [(k, j) for j in range(stripes)]
                for key in keys:
                    if key not in ost_codes:
                        ost_codes[key] = code(f"LUSTRE_COMP{k + 1}_OST_ID_{key[1]}")
                codes.append(np.array([ost_codes[key] for key in keys]))
                values.append(ost[used : used + stripes].astype(np.float64))
                used += stripes
        rows.add(ordinal, rec.base_rec.id, rec.base_rec.rank, codes, values)

    yield from _get_records_streaming(log, module, idx, consume, rows.out)
    rows.flush()
    yield from rows.out


def _read_heatmap(log: _Log, module: str, idx: int) -> Iterator[dict[str, pa.Table]]:
    ffi = log.cb.ffi
    names: list[str] = []
    code_of: dict[str, int] = {}

    def codes_for(src: str, nbins: int) -> np.ndarray:
        key = f"{src}\x00{nbins}"
        if key not in code_of:
            base = len(names)
            names.append(f"HEATMAP_{src}_F_BIN_WIDTH_SECONDS")
            names.append(f"HEATMAP_{src}_NBINS")
            names.extend(f"HEATMAP_{src}_READ_BIN_{i}" for i in range(nbins))
            names.extend(f"HEATMAP_{src}_WRITE_BIN_{i}" for i in range(nbins))
            code_of[key] = base
        base = code_of[key]
        return np.arange(base, base + 2 + 2 * nbins)

    rows = _CounterRows(log, module, names, file_like=False)

    def consume(ptr, ordinal):
        rec = ffi.cast("struct darshan_heatmap_record *", ptr)
        nbins = int(rec.nbins)
        if not 0 <= nbins <= _HEATMAP_MAX_BINS:
            raise _err(
                log.name,
                ordinal,
                f"a HEATMAP bin count between 0 and {_HEATMAP_MAX_BINS}",
                nbins,
                unit="record",
            )
        rid = int(rec.base_rec.id)
        name = log.names.get(rid, "")
        if name.startswith("heatmap:"):
            src = name.split(":", 1)[1]
        else:
            src = HEATMAP_IDS.get(rid, str(rid))
        reads = np.frombuffer(ffi.buffer(rec.read_bins, 8 * nbins), "=i8") if nbins else []
        writes = np.frombuffer(ffi.buffer(rec.write_bins, 8 * nbins), "=i8") if nbins else []
        values = np.concatenate(
            [
                np.array([rec.bin_width_seconds, nbins], np.float64),
                np.asarray(reads, np.float64),
                np.asarray(writes, np.float64),
            ]
        )
        rows.add(ordinal, rid, rec.base_rec.rank, [codes_for(src, nbins)], [values])

    yield from _get_records_streaming(log, module, idx, consume, rows.out)
    rows.flush()
    yield from rows.out


#: APMPI/APXC: (header struct, header fields, perf struct, perf layout).
_AP_FIELDS = {
    "APXC": (
        "struct darshan_apxc_header_record",
        [
            ("magic", "=i8"),
            ("nblades", "=i8"),
            ("nchassis", "=i8"),
            ("ngroups", "=i8"),
            ("memory_mode", "=i8"),
            ("cluster_mode", "=i8"),
            ("appid", "=u8"),
        ],
        "struct darshan_apxc_perf_record",
    ),
    "APMPI": (
        "struct darshan_apmpi_header_record",
        [
            ("magic", "=i8"),
            ("sync_flag", "=u4"),
            ("_pad", "=u4"),
            ("f_variance_total_mpitime", "=f8"),
            ("f_variance_total_mpisynctime", "=f8"),
        ],
        "struct darshan_apmpi_perf_record",
    ),
}


def _ap_perf_layout(cb, module: str) -> tuple[np.dtype, list[str]] | None:
    if module == "APXC":
        c = _names_array(cb, "apxc_counter_names")
        if c is None:
            return None
        fields = [("id", "=u8"), ("rank", "=i8")]
        fields += [(f, "=i8") for f in ("group", "chassis", "blade", "node")]
        fields.append(("counters", "=u8", (len(c),)))
        names = [f"APXC_{f.upper()}" for f in ("group", "chassis", "blade", "node")] + c
        return np.dtype(fields), names
    c = _names_array(cb, "apmpi_counter_names")
    f1 = _names_array(cb, "apmpi_f_mpiop_totaltime_counter_names")
    f2 = _names_array(cb, "apmpi_f_mpiop_synctime_counter_names")
    f3 = _names_array(cb, "apmpi_f_mpi_global_counter_names")
    if c is None or f1 is None or f2 is None or f3 is None:
        return None
    fields = [
        ("id", "=u8"),
        ("rank", "=i8"),
        ("counters", "=u8", (len(c),)),
        ("f1", "=f8", (len(f1),)),
        ("f2", "=f8", (len(f2),)),
        ("f3", "=f8", (len(f3),)),
    ]
    return np.dtype(fields), c + f1 + f2 + f3


def _read_ap(log: _Log, module: str, idx: int) -> Iterator[dict[str, pa.Table]]:
    ffi = log.cb.ffi
    hdr_struct, hdr_fields, perf_struct = _AP_FIELDS[module]
    perf = _ap_perf_layout(log.cb, module)
    hdr_dtype = np.dtype([("id", "=u8"), ("rank", "=i8"), *hdr_fields])
    try:
        sizes_ok = (
            perf is not None
            and ffi.sizeof(hdr_struct) >= hdr_dtype.itemsize
            and ffi.sizeof(perf_struct) >= perf[0].itemsize
        )
    except ffi.error:
        sizes_ok = False
    if not sizes_ok:
        log.skips.add(None, f"{module}: record layout unknown to this darshan package")
        return
    perf_dtype, perf_names = perf
    hdr_names = [f"{module}_HDR_{f.upper()}" for f, _ in hdr_fields if f != "_pad"]
    names = hdr_names + perf_names
    parts: dict[str, list] = {"rec": [], "rank": [], "codes": [], "values": []}
    out: list[dict[str, pa.Table]] = []

    def consume(ptr, ordinal):
        if ordinal == 0:
            h = np.frombuffer(ffi.buffer(ptr, hdr_dtype.itemsize), hdr_dtype)[0]
            vals = np.array([float(h[f]) for f, _ in hdr_fields if f != "_pad"])
            codes = np.arange(len(hdr_names))
        else:
            p = np.frombuffer(ffi.buffer(ptr, perf_dtype.itemsize), perf_dtype)[0]
            vals = np.concatenate(
                [
                    np.asarray(p[f], np.float64).ravel()
                    for f in perf_dtype.names
                    if f not in ("id", "rank")
                ]
            )
            codes = np.arange(len(hdr_names), len(hdr_names) + len(vals))
            h = p
        parts["rec"].append(ordinal)
        parts["rank"].append(int(h["rank"]))
        parts["codes"].append(codes)
        parts["values"].append(vals)

    yield from _get_records_streaming(log, module, idx, consume, out)
    if parts["rec"]:
        reps = np.array([len(v) for v in parts["values"]])
        yield {
            "module_counters": _long_table(
                module,
                np.repeat(np.array(parts["rec"]), reps),
                None,
                np.repeat(np.array(parts["rank"], np.int64), reps),
                np.concatenate(parts["codes"]),
                names,
                np.concatenate(parts["values"]),
            )
        }


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


def _utc(sec: int, nsec: int) -> pa.Array:
    us = int(sec) * 1_000_000 + int(nsec) // 1000
    return pa.array([us], pa.timestamp("us"))


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

    _SNIFF = re.compile(rb"\A[0-9]\.[0-9]{2}\x00{4}")

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
        if not self._SNIFF.match(head):
            return False
        if len(head) >= 16:
            return MAGIC_NR in (
                struct.unpack_from("<q", head, 8)[0],
                struct.unpack_from(">q", head, 8)[0],
            )
        return True

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
                modules = self._modules(cb, handle, hdr, name)
                names, hosts = self._validate(name, fh, hdr, modules, strict, skips)
                log = _Log(name, cb, handle, 0, strict, chunk_rows, skips, names)
                log.fh, log.hdr, log.modules = fh, hdr, {m["name"]: m for m in modules}
                yield from self._read(log, hdr, modules, hosts, warnings)
            finally:
                lib.darshan_log_close(handle)

    @staticmethod
    def _modules(cb, handle, hdr: _Header, name: str) -> list[dict[str, Any]]:
        ffi, lib = cb.ffi, cb.libdutil
        mods = ffi.new("struct darshan_mod_info **")
        cnt = ffi.new("int *")
        lib.darshan_log_get_modules(handle, mods, cnt)
        out = []
        try:
            for i in range(cnt[0]):
                m = mods[0][i]
                out.append(
                    {
                        "name": ffi.string(m.name).decode("ascii", "replace"),
                        "len": int(m.len),
                        "ver": int(m.ver),
                        "idx": int(m.idx),
                        "partial": bool(m.partial_flag),
                    }
                )
        finally:
            if cnt[0]:
                lib.darshan_free(mods[0])
        if [m["len"] for m in out] != [r.length for r in hdr.slots]:
            raise _err(
                name,
                0,
                "module regions libdarshan-util agrees with",
                f"header regions {[r.length for r in hdr.slots]}, library "
                f"{[m['len'] for m in out]}",
            )
        for reg, m in zip(hdr.slots, out, strict=True):
            reg.module = m["name"]
        return out

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
        cb, ffi, lib, handle, name = log.cb, log.cb.ffi, log.cb.libdutil, log.handle, log.name
        job = ffi.new("struct darshan_job *")
        if lib.darshan_log_get_job(handle, job) < 0:
            raise _err(name, hdr.job.off, "a readable job record")
        runtime = ffi.new("double *")
        if lib.darshan_log_get_job_runtime(handle, job[0], runtime) < 0:
            raise _err(name, hdr.job.off, "a job run time libdarshan-util can compute")
        exe_buf = ffi.new("char[]", 4096)
        if lib.darshan_log_get_exe(handle, exe_buf) < 0:
            raise _err(name, hdr.job.off, "a readable executable name in the job record")
        exe = ffi.string(exe_buf).decode("utf-8", "backslashreplace")
        mounts = self._mounts(cb, handle, log, hdr)
        metadata: dict[str, str] = {}
        for line in ffi.string(job[0].metadata).decode("utf-8", "backslashreplace").splitlines():
            if line:
                k, _, v = line.partition("=")
                metadata[k] = v
        log.nprocs = int(job[0].nprocs)
        version = ffi.string(ffi.cast("char *", handle)).decode("ascii", "replace")
        partial = [m["name"] for m in modules if m["partial"]]
        if partial:
            warnings.append(
                f"{name}: Darshan ran out of memory for module(s) {', '.join(partial)}; "
                "their records are incomplete (partial_flag set)"
            )
        if version == "3.20":
            warnings.append(
                f"{name}: logs written by Darshan 3.2.0 (format 3.20) may hold corrupted "
                "counter values (a known Darshan bug)"
            )
        first = exe.split(" ", 1)[0] if exe else ""
        start_ts = _dt.datetime.fromtimestamp(int(job[0].start_time_sec), _dt.UTC)
        jobs = pa.table(
            {
                "job_id": pa.array([0], pa.int64()),
                "job_key": pa.array([str(int(job[0].jobid))]),
                "app": pa.array([os.path.basename(first) or None], pa.string()),
                "exe": pa.array([exe or None], pa.string()),
                "user": pa.array([str(int(job[0].uid))]),
                "nprocs": pa.array([log.nprocs], pa.int32()),
                "nnodes": pa.array([len(hosts) if hosts else None], pa.int32()),
                "start_ts": _utc(job[0].start_time_sec, job[0].start_time_nsec),
                "end_ts": _utc(job[0].end_time_sec, job[0].end_time_nsec),
                "runtime_s": pa.array([float(runtime[0])]),
            }
        )
        lib_version = ffi.string(lib.darshan_log_get_lib_version()).decode("ascii", "replace")
        meta: dict[str, Any] = {
            "tool": "darshan",
            "tool_version": version,
            "darshan_version": metadata.get("lib_ver"),
            "darshan_util_version": lib_version,
            "jobid": int(job[0].jobid),
            "start_ts": start_ts.replace(tzinfo=None).isoformat(),
            "exe": exe,
            "job_metadata": metadata,
            "mounts": mounts,
            "modules": {
                m["name"]: {"version": m["ver"], "bytes": m["len"], "partial": m["partial"]}
                for m in modules
            },
            "partial": bool(partial),
        }
        if hosts:
            meta["hosts"] = sorted(hosts)[:1000]
            if len(hosts) == 1:
                meta["host"] = next(iter(hosts))
        yield Parsed(tables={"jobs": jobs}, meta=meta, skips=log.skips, warnings=list(warnings))

        batcher = _Batcher(log.chunk_rows)
        for m in modules:
            if "damaged" in m:
                continue
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
        final_warnings = []
        if log.unnamed:
            final_warnings.append(
                f"{name}: {log.unnamed} record id(s) have no name record; their path is NULL"
            )
        modules_meta = dict(meta["modules"])
        for m in modules:
            modules_meta[m["name"]] = {
                **modules_meta[m["name"]],
                "records": log.counts.get(m["name"], 0),
            }
        yield Parsed(
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

    @staticmethod
    def _mounts(cb, handle, log: _Log, hdr) -> list[list[str]]:
        ffi, lib = cb.ffi, cb.libdutil
        mnts = ffi.new("struct darshan_mnt_info **")
        cnt = ffi.new("int *")
        ret = lib.darshan_log_get_mounts(handle, mnts, cnt)
        out = []
        try:
            if ret < 0:
                if log.strict:
                    raise _err(log.name, hdr.job.off, "a well-formed mount table in the job record")
                log.skips.add(None, "mount table unreadable; mounts skipped")
                return out
            for i in range(cnt[0]):
                out.append(
                    [
                        ffi.string(mnts[0][i].mnt_path).decode("utf-8", "backslashreplace"),
                        ffi.string(mnts[0][i].mnt_type).decode("utf-8", "backslashreplace"),
                    ]
                )
        finally:
            if cnt[0] and mnts[0] != ffi.NULL:
                lib.darshan_free(mnts[0])
        return out


register(DarshanLoader())
