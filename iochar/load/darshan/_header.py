"""The log header, its region map, decompression, and the job record.

Everything here reads what comes before the module records: the uncompressed
header and its region map (checked in Python before libdarshan-util reads
anything), the decompression of a region (:func:`_inflate`, used by the
validation pass and by DXT decoding), the name records, the module list
libdarshan-util reports, and the job record with its executable and mount
table (the ``jobs`` row and the first chunk's ``meta``).
"""

from __future__ import annotations

import bz2
import datetime as _dt
import os
import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from iochar.errors import InputError
from iochar.load._base import SkipLog

KIND = "darshan"

#: Darshan's magic number (``DARSHAN_MAGIC_NR``), stored after the version.
MAGIC_NR = 6567223

#: Log format versions libdarshan-util 3.5 reads -> (header bytes, module
#: slots, partial-flag struct code, whether per-module versions follow).
#: Every format has the ``uint32_t mod_ver[]`` array after the region map:
#: libdarshan-util's ``darshan_log_get_header`` reads formats before 3.41
#: (Darshan 3.0.0 to 3.4.0) as ``header_3_00`` = version, magic, comp_type,
#: ``uint32_t partial_flag``, name map, 16 module maps, 16 module versions
#: (360 bytes; the job region starts right after it), and 3.41 (Darshan
#: 3.4.1 on) with 64 module slots and a 64-bit partial flag (1328 bytes).
SUPPORTED_VERSIONS: dict[str, tuple[int, int, str, bool]] = {
    "3.00": (360, 16, "3xI", True),
    "3.10": (360, 16, "3xI", True),
    "3.20": (360, 16, "3xI", True),
    "3.21": (360, 16, "3xI", True),
    "3.41": (1328, 64, "7xQ", True),
}

#: Compression types in the header (``enum darshan_comp_type``).
_ZLIB, _BZIP2, _NOCOMP = 0, 1, 2

_INFLATE_STEP = 1 << 20  # compressed bytes read at a time
_INFLATE_MAX = 1 << 24  # decompressed bytes produced per call (bounds memory)
_NAME_BUF = 2 * 1024 * 1024  # libdarshan-util's name-record read buffer


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
    partial_flag: int = 0  # the header's bit mask, in the log's own module numbering


def _err(path, line, expected, got=None, unit="byte"):
    return InputError(path, line, expected, got, kind=KIND, unit=unit)


def _parse_header(path: str, raw: bytes, filesize: int, n_known: int) -> _Header:
    """Decode and check the uncompressed header and the region map."""
    version, size, order, comp = _check_start(path, raw, filesize)
    job, names, slots = _region_map(path, raw, filesize, version, order, n_known)
    _check_regions(path, [job] + ([names] if names else []) + slots, size, filesize)
    partial = struct.unpack_from(order + "8sqB" + SUPPORTED_VERSIONS[version][2], raw)[3]
    return _Header(version, order, comp, size, job, names, slots, partial)


def _check_start(path: str, raw: bytes, filesize: int) -> tuple[str, int, str, int]:
    """Check version string, size, magic number and compression; return them and the byte order."""
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
    size = SUPPORTED_VERSIONS[version][0]
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
    return version, size, order, comp


def _region_map(
    path: str, raw: bytes, filesize: int, version: str, order: str, n_known: int
) -> tuple[_Region, _Region | None, list[_Region]]:
    """The job, name and module-slot regions of the header's map (the job region inferred)."""
    size, nslots, partial_code, has_ver = SUPPORTED_VERSIONS[version]
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
    return job, names, slots


def _check_regions(path: str, regions: list[_Region], size: int, filesize: int) -> None:
    """Raise unless every region lies inside the file after the header, none overlapping."""
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

    The rules are those of libdarshan-util 3.5's ``darshan_log_get_namerecs``
    (formats 3.10 on: ``darshan_record_id`` then a NUL-terminated name, so a
    record is at least 9 bytes, an id and an empty name) and
    ``darshan_log_get_namerecs_3_00`` (format 3.00: id, ``uint32_t`` length,
    that many bytes of path; a record is read while more than 12 bytes are
    left). The first record of an id wins, as in libdarshan-util's hash
    table, except that (3.10 on) a later non-empty name replaces an empty
    one. An empty name is a record without a path (Darshan 3.4 writes them
    for DAOS objects and DFS files it cannot name); :attr:`names` keeps it
    as ``""``.
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
        else:  # id | NUL-terminated name (possibly empty: 9 bytes)
            while n - pos >= 9:
                nul = buf.find(b"\x00", pos + 8)
                if nul < 0:
                    break
                (rid,) = struct.unpack_from(idfmt, buf, pos)
                name = buf[pos + 8 : nul].decode("utf-8", "backslashreplace")
                if not names.get(rid):
                    names[rid] = name
                pos = nul + 1
        self.pend = buf[pos:]
        if len(self.pend) >= _NAME_BUF // 2:
            raise ValueError(f"a name record longer than {_NAME_BUF // 2} bytes")

    def close(self) -> None:
        if self.pend:
            raise ValueError(f"{len(self.pend)} bytes after the last whole name record")


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


# -------------------------------------------------------------------- job --


def _modules(cb, handle, hdr: _Header, name: str) -> list[dict[str, Any]]:
    """The modules libdarshan-util lists, checked against the header's regions (and naming them).

    libdarshan-util's ``darshan_log_get_modules`` lists every region, in module
    index order; a region in a slot beyond the modules it knows (a module added
    by a later Darshan) has no name there and is named ``"slot <i>"`` here (it
    is decompressed and checked, but not read: there is no record layout for it).
    """
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
                    "name": f"slot {int(m.idx)}"
                    if m.name == ffi.NULL
                    else ffi.string(m.name).decode("ascii", "replace"),
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
            f"header regions {[r.length for r in hdr.slots]}, library {[m['len'] for m in out]}",
        )
    for reg, m in zip(hdr.slots, out, strict=True):
        reg.module = m["name"]
    flagged = {i for i, _ in _incomplete(hdr, cb._mod_names)}
    for m in out:
        m["partial"] = m["idx"] in flagged
    return out


def _shift_flags(flag: int, index: int) -> int:
    """Make room for a module inserted at ``index``: bits at and above it move up one."""
    moved = ((flag << 1) >> (index + 1)) << (index + 1)
    return (flag & ((1 << index) - 1)) | moved


def _incomplete(hdr: _Header, mod_names: list[str]) -> list[tuple[int, str]]:
    """The modules whose data Darshan flagged incomplete, as (module index, name).

    Darshan sets bit *i* of the header's ``partial_flag`` when module *i* ran
    out of memory for new records (STDIO's or POSIX's file-record limit, DXT's
    trace buffer): its records are the ones kept before the limit
    (darshan-parser prints "The <MODULE> module contains incomplete data!"
    and shows them only with ``--show-incomplete``). The bit is set whether or
    not the module wrote a region, so a flagged module may have no data at all.
    Module numbers are libdarshan-util 3.5's: as its ``darshan_log_get_header``
    does, formats before 3.20 make room for H5D and formats before 3.41 for
    PNETCDF_VAR (the bits from that module's index up move up one). A bit past
    the modules the library knows is named ``"slot <i>"``.

    Parameters
    ----------
    hdr : _Header
        The checked header.
    mod_names : list of str
        libdarshan-util's module names by index (``darshan_module_names``).

    Returns
    -------
    list of (int, str)
        Flagged modules in index order.
    """
    flag = hdr.partial_flag
    minor = int(hdr.version.split(".", 1)[1])
    if minor < 20 and "H5D" in mod_names:
        flag = _shift_flags(flag, mod_names.index("H5D"))
    if minor < 41 and "PNETCDF_VAR" in mod_names:
        flag = _shift_flags(flag, mod_names.index("PNETCDF_VAR"))
    flag &= (1 << 64) - 1
    return [
        (i, mod_names[i] if i < len(mod_names) else f"slot {i}") for i in range(64) if flag >> i & 1
    ]


@dataclass
class _Job:
    """The job record, executable, mount table and versions, as libdarshan-util reads them."""

    jobid: int
    uid: int
    nprocs: int
    start: tuple[int, int]  # seconds, nanoseconds
    end: tuple[int, int]
    runtime: float
    exe: str
    mounts: list[list[str]]
    metadata: dict[str, str]  # the job record's key=value lines
    version: str  # the log format version
    lib_version: str  # libdarshan-util's


def _read_job(cb, handle, hdr: _Header, name: str, strict: bool, skips: SkipLog) -> _Job:
    """Read the job record, its run time, the executable and the mount table."""
    ffi, lib = cb.ffi, cb.libdutil
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
    mounts = _mounts(cb, handle, hdr, name, strict, skips)
    metadata: dict[str, str] = {}
    for line in ffi.string(job[0].metadata).decode("utf-8", "backslashreplace").splitlines():
        if line:
            k, _, v = line.partition("=")
            metadata[k] = v
    return _Job(
        jobid=int(job[0].jobid),
        uid=int(job[0].uid),
        nprocs=int(job[0].nprocs),
        start=(int(job[0].start_time_sec), int(job[0].start_time_nsec)),
        end=(int(job[0].end_time_sec), int(job[0].end_time_nsec)),
        runtime=float(runtime[0]),
        exe=exe,
        mounts=mounts,
        metadata=metadata,
        version=ffi.string(ffi.cast("char *", handle)).decode("ascii", "replace"),
        lib_version=ffi.string(lib.darshan_log_get_lib_version()).decode("ascii", "replace"),
    )


def _mounts(cb, handle, hdr: _Header, name: str, strict: bool, skips: SkipLog) -> list[list[str]]:
    """The mount table as [path, type] pairs (empty, counted in ``skips``, when unreadable)."""
    ffi, lib = cb.ffi, cb.libdutil
    mnts = ffi.new("struct darshan_mnt_info **")
    cnt = ffi.new("int *")
    ret = lib.darshan_log_get_mounts(handle, mnts, cnt)
    out = []
    try:
        if ret < 0:
            if strict:
                raise _err(name, hdr.job.off, "a well-formed mount table in the job record")
            skips.add(None, "mount table unreadable; mounts skipped")
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


def _job_warnings(
    name: str, modules: list[dict[str, Any]], version: str, incomplete: list[str]
) -> list[str]:
    """Warnings about the whole log: incomplete and unread modules, the 3.20 format's bug."""
    warnings = []
    if incomplete:
        warnings.append(
            f"{name}: module(s) {', '.join(incomplete)} contain incomplete data: Darshan ran "
            "out of memory to store new records (partial flag set); the records kept are "
            "the ones recorded before the limit"
        )
    unknown = [m["name"] for m in modules if m["name"].startswith("slot ")]
    if unknown:
        warnings.append(
            f"{name}: module {', '.join(unknown)} is newer than this libdarshan-util "
            "(no name or record layout); its region was checked but not read"
        )
    if version == "3.20":
        warnings.append(
            f"{name}: logs written by Darshan 3.2.0 (format 3.20) may hold corrupted "
            "counter values (a known Darshan bug)"
        )
    return warnings


def _jobs_and_meta(
    job: _Job, modules: list[dict[str, Any]], hosts: set[str] | None, incomplete: list[str]
) -> tuple[pa.Table, dict[str, Any]]:
    """The ``jobs`` row and the first chunk's ``meta``.

    ``meta["modules"]`` has one entry per module region (``version``,
    compressed ``bytes``, ``partial``) and one per module flagged incomplete
    without a region (``version`` None, ``bytes`` 0); ``meta["incomplete"]``
    lists the flagged modules and ``meta["partial"]`` says whether there is one.
    """
    first = job.exe.split(" ", 1)[0] if job.exe else ""
    start_ts = _dt.datetime.fromtimestamp(job.start[0], _dt.UTC)
    jobs = pa.table(
        {
            "job_id": pa.array([0], pa.int64()),
            "job_key": pa.array([str(job.jobid)]),
            "app": pa.array([os.path.basename(first) or None], pa.string()),
            "exe": pa.array([job.exe or None], pa.string()),
            "user": pa.array([str(job.uid)]),
            "nprocs": pa.array([job.nprocs], pa.int32()),
            "nnodes": pa.array([len(hosts) if hosts else None], pa.int32()),
            "start_ts": _utc(*job.start),
            "end_ts": _utc(*job.end),
            "runtime_s": pa.array([job.runtime]),
        }
    )
    meta: dict[str, Any] = {
        "tool": "darshan",
        "tool_version": job.version,
        "darshan_version": job.metadata.get("lib_ver"),
        "darshan_util_version": job.lib_version,
        "jobid": job.jobid,
        "start_ts": start_ts.replace(tzinfo=None).isoformat(),
        "exe": job.exe,
        "job_metadata": job.metadata,
        "mounts": job.mounts,
        "modules": {
            m["name"]: {"version": m["ver"], "bytes": m["len"], "partial": m["partial"]}
            for m in modules
        },
        "incomplete": list(incomplete),
        "partial": bool(incomplete),
    }
    for mod in incomplete:
        meta["modules"].setdefault(mod, {"version": None, "bytes": 0, "partial": True})
    if hosts:
        meta["hosts"] = sorted(hosts)[:1000]
        if len(hosts) == 1:
            meta["host"] = next(iter(hosts))
    return jobs, meta


def _utc(sec: int, nsec: int) -> pa.Array:
    """One timestamp[us] value from seconds and nanoseconds since the epoch."""
    us = int(sec) * 1_000_000 + int(nsec) // 1000
    return pa.array([us], pa.timestamp("us"))
