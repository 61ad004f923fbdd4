"""The per-module counter records: ``files``, ``file_stats``, ``access_sizes``, ``module_counters``.

libdarshan-util reads every module but DXT (see :mod:`iochar.load.darshan._dxt`)
one record at a time (:func:`_get_records_streaming`). Fixed-layout modules
(POSIX, MPI-IO, STDIO, H5F, H5D, PNETCDF_*, BG/Q, DFS, DAOS, MDHIM) are read by
:func:`_read_generic`, mapped to ``file_stats`` by :data:`VARIABLE_MAP`; LUSTRE
and HEATMAP records, whose counter count varies, go through
:class:`_CounterRows`; APMPI and APXC through :func:`_read_ap`. :class:`_Log`
holds the state of the open log the readers share, and :func:`_long_table`
builds the ``module_counters`` rows for every reader, DXT's included.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from iochar.load._base import SkipLog
from iochar.load.darshan._header import _err, _Header, _inflate, _region_chunks, _region_error

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


# ---------------------------------------------------------------- layouts --


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


# ------------------------------------------------------ the log, tables --


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
            if not self.names.get(rid):  # no name record, or an empty name
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
                "path": pa.array([self.names.get(r) or None for r in rids], pa.string()),
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


# ---------------------------------------------------------------- readers --


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

    def stream(
        self, idx: int, consume: Callable[[Any, int], None]
    ) -> Iterator[dict[str, pa.Table]]:
        """Read the records through ``consume`` (which calls :meth:`add`), yielding the pieces.

        Pieces are yielded as they fill, then the rest is flushed and yielded.
        """
        yield from _get_records_streaming(self.log, self.module, idx, consume, self.out)
        self.flush()
        yield from self.out

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

    yield from rows.stream(idx, consume)


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

    yield from rows.stream(idx, consume)


#: APMPI/APXC: (header struct, header fields, perf struct).
_AP_FIELDS = {
    "APXC": (
        "struct darshan_apxc_header_record",
        [
            ("magic", "i8"),
            ("nblades", "i8"),
            ("nchassis", "i8"),
            ("ngroups", "i8"),
            ("memory_mode", "i8"),
            ("cluster_mode", "i8"),
            ("appid", "u8"),
        ],
        "struct darshan_apxc_perf_record",
    ),
    "APMPI": (
        "struct darshan_apmpi_header_record",
        [
            ("magic", "i8"),
            ("sync_flag", "u4"),
            ("_pad", "u4"),
            ("f_variance_total_mpitime", "f8"),
            ("f_variance_total_mpisynctime", "f8"),
        ],
        "struct darshan_apmpi_perf_record",
    ),
}

#: The APMPI/APXC record layout versions decoded here (``APMPI_VER``, ``APXC_VER``).
_AP_VERSIONS = {"APMPI": 1, "APXC": 1}


def _padded(fields: list, order: str, size: int) -> np.dtype:
    """A record dtype in byte order ``order`` (fields as ``(name, code[, shape])``),
    padded at the end to the C struct's ``size`` bytes."""
    dt = np.dtype([(f, order + t, *rest) for f, t, *rest in fields])
    if dt.itemsize > size:
        raise ValueError(f"record layout of {dt.itemsize} bytes, struct of {size}")
    return np.dtype(
        {
            "names": dt.names,
            "formats": [dt.fields[n][0] for n in dt.names],
            "offsets": [dt.fields[n][1] for n in dt.names],
            "itemsize": size,
        }
    )


def _ap_perf_fields(cb, module: str) -> tuple[list, list[str]] | None:
    """Fields (without byte order) and counter names of an APMPI/APXC performance record."""
    if module == "APXC":
        c = _names_array(cb, "apxc_counter_names")
        if c is None:
            return None
        place = ("group", "chassis", "blade", "node")
        fields = [("id", "u8"), ("rank", "i8"), *((f, "i8") for f in place)]
        fields.append(("counters", "u8", (len(c),)))
        return fields, [f"APXC_{f.upper()}" for f in place] + c
    c = _names_array(cb, "apmpi_counter_names")
    f1 = _names_array(cb, "apmpi_f_mpiop_totaltime_counter_names")
    f2 = _names_array(cb, "apmpi_f_mpiop_synctime_counter_names")
    f3 = _names_array(cb, "apmpi_f_mpi_global_counter_names")
    if c is None or f1 is None or f2 is None or f3 is None:
        return None
    fields = [
        ("id", "u8"),
        ("rank", "i8"),
        ("counters", "u8", (len(c),)),
        ("f1", "f8", (len(f1),)),
        ("f2", "f8", (len(f2),)),
        ("f3", "f8", (len(f3),)),
    ]
    return fields, c + f1 + f2 + f3


def _read_ap(log: _Log, module: str, idx: int) -> Iterator[dict[str, pa.Table]]:
    """APMPI / APXC records, decoded in Python from the module's region.

    The region is a header record (``struct darshan_<mod>_header_record``)
    followed by one performance record per rank
    (``struct darshan_<mod>_perf_record``), in the log's byte order, as
    darshan-apmpi-logutils.c reads them (version 1). libdarshan-util is not
    used for these: its ``darshan_log_get_apmpi_rec`` (and the APXC one) tells
    the header from the others with a ``static int first_rec``, so in a process
    that has already read one such log it reads the next log's header as a
    performance record and every record after it shifted (pydarshan shows the
    second log of a process with one record fewer). The node name is not kept.
    """
    ffi = log.cb.ffi
    hdr_struct, hdr_fields, perf_struct = _AP_FIELDS[module]
    m = log.modules[module]
    if m["ver"] != _AP_VERSIONS[module]:
        log.skips.add(None, f"{module}: record layout version {m['ver']} is not one iochar decodes")
        return
    perf = _ap_perf_fields(log.cb, module)
    order = log.hdr.order
    try:
        hdr_dtype = _padded(
            [("id", "u8"), ("rank", "i8"), *hdr_fields], order, ffi.sizeof(hdr_struct)
        )
        perf_dtype = None if perf is None else _padded(perf[0], order, ffi.sizeof(perf_struct))
    except (ffi.error, ValueError):
        perf_dtype = None
    if perf_dtype is None:
        log.skips.add(None, f"{module}: record layout unknown to this darshan package")
        return
    perf_names = perf[1]
    hdr_names = [f"{module}_HDR_{f.upper()}" for f, _ in hdr_fields if f != "_pad"]
    names = hdr_names + perf_names
    reg = m["region"]
    try:
        data = b"".join(_inflate(_region_chunks(log.fh, reg), log.hdr.comp))
    except (zlib.error, OSError, EOFError) as exc:  # checked before; the file changed since
        raise _region_error(log.name, log.hdr, reg, exc) from exc
    hsize, psize = hdr_dtype.itemsize, perf_dtype.itemsize
    if len(data) < hsize or (len(data) - hsize) % psize:
        exc = _err(
            log.name,
            reg.off,
            f"a {module} region of one {hsize}-byte header record and whole {psize}-byte "
            "performance records",
            f"{len(data)} bytes",
        )
        if log.strict:
            raise exc
        log.skips.add(None, f"{module} module skipped: {exc}")
        return
    h = np.frombuffer(data, hdr_dtype, count=1)[0]
    p = np.frombuffer(data, perf_dtype, offset=hsize)
    n = len(p)
    log.counts[module] = n + 1
    hdr_vals = np.array([float(h[f]) for f, _ in hdr_fields if f != "_pad"])
    fields = [f for f in perf_dtype.names if f not in ("id", "rank")]
    cols = [np.asarray(p[f], np.float64).reshape(n, -1) for f in fields]
    perf_vals = np.hstack(cols) if n else np.empty((0, len(perf_names)))
    k = len(perf_names)
    yield {
        "module_counters": _long_table(
            module,
            np.concatenate([np.zeros(len(hdr_names), np.int64), np.repeat(np.arange(1, n + 1), k)]),
            None,
            np.concatenate([np.full(len(hdr_names), int(h["rank"])), np.repeat(p["rank"], k)]),
            np.concatenate(
                [np.arange(len(hdr_names)), np.tile(np.arange(len(hdr_names), len(names)), n)]
            ),
            names,
            np.concatenate([hdr_vals, perf_vals.ravel()]),
        )
    }
