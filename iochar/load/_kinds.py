"""The table of input kinds: what each is, how to recognise it, which module reads it.

Naming the kind of an input must not cost the import of every parser: the
loaders pull in NumPy, pyarrow and polars (about 0.3 s together), and ``iochar
--help`` or a load of one strace file needs none of the other loaders. This
module is the light half of the registry: for each kind, the module that
registers its loader, the file suffixes used when no sniffer recognises the
content, the one-line description for ``iochar load --help``, and a *sniff
function* that decides from the first 64 KiB of (decompressed) content whether
an input is of that kind. It imports only the standard library (``re`` and
``struct``); :mod:`iochar.load` imports a loader module only when its kind is
chosen (lazy import, PEP 562's module ``__getattr__`` for the rest).

Each sniff function states what it matches and where the format comes from;
they are the same decisions as the loaders' ``sniff`` methods, and
``tests/load/test_sniff_table.py`` checks that the two agree on every bundled
real capture and that every loader module registers exactly the kinds listed
here.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["Kind", "KINDS", "BENCH_KINDS", "by_kind", "sniff_head"]


# ------------------------------------------------------------------- capacity
#: A capacity document (:mod:`iochar.load.capacity`, written by ``iochar calibrate
#: --levels``): a JSON object whose first key is ``"iochar_capacity": 1``.
_CAPACITY = re.compile(rb'\A\s*\{\s*"iochar_capacity"\s*:\s*1')


def sniff_capacity(head: bytes) -> bool:
    """A JSON object opening with ``"iochar_capacity": 1`` (iochar's own format).

    Parameters
    ----------
    head : bytes
        The first bytes of the (decompressed) input.

    Returns
    -------
    bool
    """
    return _CAPACITY.match(head) is not None


# ------------------------------------------------------------------ brw_stats
#: Lustre ``brw_stats`` (``lctl get_param obdfilter.*.brw_stats``, Lustre Operations
#: Manual §"Monitoring the OST Block I/O Stream"): a ``snapshot_time`` line, optional
#: ``start_time``/``elapsed_time`` lines, a blank line, then the ``read | write``
#: header of the first histogram; an optional ``target.brw_stats=`` line first.
_BRW = re.compile(
    rb"^(?:[\w.@-]+\.brw_stats=\r?\n)?snapshot_time:?\s+\d+(?:\.\d+)?[^\n]*\n"
    rb"(?:(?:start|elapsed)_time:?[^\n]*\n)*\s*\n\s+read\s+\|\s+write\s*\n",
    re.M,
)


def sniff_brw_stats(head: bytes) -> bool:
    """A ``snapshot_time`` line followed by a ``read | write`` histogram header.

    Parameters
    ----------
    head : bytes
        The first bytes of the (decompressed) input.

    Returns
    -------
    bool
    """
    return _BRW.search(head) is not None


# -------------------------------------------------------------------- darshan
#: Darshan log header (darshan-log-format.h): an 8-byte version string ``"d.dd"``
#: padded with NULs, then the 64-bit magic number in the writer's byte order.
_DARSHAN_VERSION = re.compile(rb"\A[0-9]\.[0-9]{2}\x00{4}")
_DARSHAN_MAGIC = 6567223


def sniff_darshan(head: bytes) -> bool:
    """A ``"d.dd"`` version string padded to 8 bytes, then Darshan's magic number.

    Parameters
    ----------
    head : bytes
        The first bytes of the input (a Darshan log is sniffed on its raw bytes).

    Returns
    -------
    bool
        True when the version string matches and, if 16 bytes are present, bytes
        8-15 hold ``DARSHAN_MAGIC_NR`` (6567223) in either byte order.
    """
    if not _DARSHAN_VERSION.match(head):
        return False
    if len(head) >= 16:
        return _DARSHAN_MAGIC in (
            struct.unpack_from("<q", head, 8)[0],
            struct.unpack_from(">q", head, 8)[0],
        )
    return True


# ------------------------------------------------------------------ diskstats
_EPOCH = re.compile(rb"^#?\s*(\d{1,12}(?:\.\d+)?)\s*$")
_ISO = re.compile(
    rb"^#?\s*(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?\s*$"
)
#: A /proc/diskstats line (Documentation/admin-guide/iostats.rst): major, minor,
#: device name, then counters.
_DEV = re.compile(rb"^\s*\d+\s+\d+\s+\S+(\s+\d+)+\s*$")


def _is_timestamp(line: bytes) -> bool:
    """Whether ``line`` is an epoch (``date +%s.%N``) or ISO 8601 timestamp line."""
    if _EPOCH.match(line):
        return True
    m = _ISO.match(line)
    if m is None:
        return False
    try:
        datetime.fromisoformat(m[1].decode().replace(" ", "T")).replace(tzinfo=UTC)
    except ValueError:
        return False
    return True


def sniff_diskstats(head: bytes) -> bool:
    """A timestamp line followed by a /proc/diskstats line of 14, 18 or 20 fields.

    Parameters
    ----------
    head : bytes
        The first bytes of the (decompressed) input.

    Returns
    -------
    bool
        The field counts are those of Linux < 4.18, 4.18+ (discards) and 5.5+
        (flushes) in Documentation/admin-guide/iostats.rst.
    """
    lines = [ln for ln in head.split(b"\n")[:4] if ln.strip()]
    if len(lines) < 2 or not _is_timestamp(lines[0]):
        return False
    return _DEV.match(lines[1]) is not None and len(lines[1].split()) in (14, 18, 20)


# --------------------------------------------------------------------- iostat
_IOSTAT_BLOCK = re.compile(rb"\n(Device:?\s|avg-cpu:\s)")


def sniff_iostat(head: bytes) -> bool:
    """sysstat's ``Linux ... (host) date arch (N CPU)`` banner then blocks, or its JSON.

    Parameters
    ----------
    head : bytes
        The first bytes of the (decompressed) input.

    Returns
    -------
    bool
        True for text whose first line is the banner of iostat(1) and that has a
        ``Device`` or ``avg-cpu:`` block, or for ``iostat -o JSON`` output (a
        ``"sysstat"`` object with ``disk``, ``avg-cpu`` or ``statistics``).
    """
    h = head.lstrip()
    if h.startswith(b"{") and b'"sysstat"' in h[:200]:
        return b'"disk"' in h or b'"avg-cpu"' in h or b'"statistics"' in h
    first = h.split(b"\n", 1)[0]
    if not (first.startswith(b"Linux ") and b"CPU)" in first):
        return False
    return _IOSTAT_BLOCK.search(h) is not None


# ------------------------------------------------------------------------ lmt
_SQLITE_MAGIC = b"SQLite format 3\x00"
_LMT_CSV_HEADER = re.compile(rb"^timestamp,ost((?:,(?:read_bytes|write_bytes))+)\r?\n")


def sniff_lmt(head: bytes) -> bool:
    """An SQLite file whose schema names ``OST_DATA``, or the LMT CSV header.

    Parameters
    ----------
    head : bytes
        The first bytes of the input.

    Returns
    -------
    bool
        SQLite's 16-byte header string (sqlite.org/fileformat.html §1.3.1) with
        LMT's ``OST_DATA`` and ``TIMESTAMP_INFO`` tables in the schema page, or a
        ``timestamp,ost,read_bytes|write_bytes`` CSV header.
    """
    if head.startswith(_SQLITE_MAGIC):
        return b"OST_DATA" in head and b"TIMESTAMP_INFO" in head
    return _LMT_CSV_HEADER.match(head) is not None


# ------------------------------------------------------------------- snapshot
_SNAPSHOT_HEADER = b"# iochar-snapshot"
_FIND_LINE = re.compile(rb"^[fdlbcpsD]\t\d+\t\d+(\.\d+)?\t\d+(\.\d+)?\t\d+(\.\d+)?\t\d+\t.")
#: Value of the walker Parquet's ``format`` column, near the start of its file.
_SNAPSHOT_PARQUET = b"iochar-snapshot/1"
_PARQUET_MAGIC = b"PAR1"


def sniff_snapshot(head: bytes) -> bool:
    """The find header or a find line, a GNU stat record, or the walker's Parquet marker.

    Parameters
    ----------
    head : bytes
        The first bytes of the (decompressed) input.

    Returns
    -------
    bool
        True for ``# iochar-snapshot``, a ``find -printf '%y\\t%s\\t%A@\\t%T@\\t%C@\\t%U\\t%p'``
        line, GNU stat(1)'s ``  File: `` record with a ``  Size: `` line, or a
        Parquet file (``PAR1``) carrying ``iochar-snapshot/1`` in its first 4 KiB.
    """
    if head.startswith(_SNAPSHOT_HEADER):
        return True
    if head.startswith(b"  File: ") and b"\n  Size: " in head[:8192]:
        return True
    if head.startswith(_PARQUET_MAGIC) and _SNAPSHOT_PARQUET in head[:4096]:
        return True
    return _FIND_LINE.match(head.split(b"\n", 1)[0]) is not None


# --------------------------------------------------------------------- strace
#: A strace(1) line with -f and -t/-tt/-ttt/-r: optional ``[pid N] `` or ``N  `` prefix,
#: wall-clock, epoch or relative time (-r: right-aligned, so maybe after spaces), then a
#: call, a resumption, a signal or an exit. The strace loader reads the format with it.
STRACE_LINE = re.compile(
    r"^(?:\[pid +(?P<bpid>\d+)\] |(?P<pid>\d+) +| +)?"
    r"(?:(?P<hh>\d{1,2}):\d\d:\d\d(?P<hfrac>\.\d+)?|(?P<es>\d+)\.\d+) +"
    r"(?:\(\+ *\d+\.\d+\) )?"  # -r given with -t/-tt/-ttt: the time since the previous line
    r"(?:<\.\.\. [\w?]+ resumed>|(?P<name>[\w?]+)\(|--- |\+\+\+ |<detached \.\.\.>)"
)
_STRACE_END = re.compile(r"(?:\) *= .*|<unfinished \.\.\.>| ---| \+\+\+|<detached \.\.\.>)$")
#: strace's own messages, not lines of the trace.
STRACE_MSG = ("strace: ", "[ Process PID=")


def sniff_strace(head: bytes) -> bool:
    """Whether ``head`` looks like strace output.

    Parameters
    ----------
    head : bytes
        The first 64 KiB of the (decompressed) input.

    Returns
    -------
    bool
        True when the first line that is not a ``strace:`` message is a
        timestamped ``syscall(...`` line and at least 8 in 10 of the first 20
        such lines are complete strace lines (strace(1): -f, -t, -tt, -ttt or -r).
    """
    if not head or b"\x00" in head[:4096]:
        return False
    lines = head[:16384].decode("utf-8", "replace").split("\n")
    if len(lines) > 1:
        lines = lines[:-1]  # the last one may be cut by the head's size
    checked = ok = 0
    for line in lines:
        if not line or line.startswith(STRACE_MSG):
            continue
        checked += 1
        good = bool(STRACE_LINE.match(line)) and bool(_STRACE_END.search(line))
        if checked == 1 and not good:
            return False
        ok += good
        if checked >= 20:
            break
    return checked > 0 and ok >= max(1, (8 * checked) // 10)


# ---------------------------------------------------------------- trace table
#: Columns of the iochar trace CSV/Parquet (DESIGN.md, "trace-csv").
TRACE_COLUMNS = frozenset(
    (
        "job_id",
        "job",
        "rank",
        "file_id",
        "path",
        "op",
        "offset",
        "size",
        "t_start",
        "t_end",
        "cpu_s",
        "call",
        "error",
    )
)


def sniff_trace_csv(head: bytes) -> bool:
    """A first line that is a CSV header naming ``op`` and ``t_start``.

    Parameters
    ----------
    head : bytes
        The first bytes of the (decompressed) input.

    Returns
    -------
    bool
        True when the header names both required columns and its first three
        names are trace columns.
    """
    first = head.split(b"\n", 1)[0].strip(b"\r").decode("utf-8", "replace")
    cols = [c.strip().strip('"') for c in first.split(",")]
    return "op" in cols and "t_start" in cols and all(c in TRACE_COLUMNS for c in cols[:3] if c)


def sniff_trace_parquet(head: bytes) -> bool:
    """Parquet magic ``PAR1`` (Apache Parquet file format), not the snapshot walker's.

    Parameters
    ----------
    head : bytes
        The first bytes of the input.

    Returns
    -------
    bool
        The columns are in the footer and are checked when parsing.
    """
    return head.startswith(_PARQUET_MAGIC) and _SNAPSHOT_PARQUET not in head[:4096]


# ---------------------------------------------------------------------- table
@dataclass(frozen=True)
class Kind:
    """One input kind of the registry, without its parser.

    Attributes
    ----------
    kind : str
        Registry key (``"strace"``).
    module : str
        The module whose import registers the loader (or benchmark reader).
    description : str
        One line for ``iochar load --help``.
    suffixes : tuple of str
        File suffixes used only when no sniff function recognises the content.
    sniff : callable or None
        ``sniff(head: bytes) -> bool``; None for benchmark output, which
        :func:`iochar.load.sniff_bench` names with its reader's own test.
    """

    kind: str
    module: str
    description: str
    suffixes: tuple[str, ...] = ()
    sniff: Callable[[bytes], bool] | None = None


#: Store kinds in sniffing order (module name order; the sniffers are exclusive).
KINDS: tuple[Kind, ...] = (
    Kind(
        "capacity",
        "iochar.load.capacity",
        "iochar capacity document (fio JSON / IOR text per I/O level)",
        (".capacity.json",),
        sniff_capacity,
    ),
    Kind(
        "brw_stats",
        "iochar.load.brw_stats",
        "Lustre brw_stats histogram dumps (raw or lctl get_param)",
        ("brw_stats",),
        sniff_brw_stats,
    ),
    Kind(
        "darshan",
        "iochar.load.darshan",
        "Darshan 3.x logs (job, POSIX/MPI-IO/STDIO/HDF5 counters, DXT traces) via pydarshan",
        (".darshan",),
        sniff_darshan,
    ),
    Kind(
        "diskstats",
        "iochar.load.diskstats",
        "timestamped /proc/diskstats snapshots (date +%s.%N; cat ...)",
        (".diskstats", ".diskstats.gz"),
        sniff_diskstats,
    ),
    Kind(
        "iostat",
        "iochar.load.iostat",
        "sysstat iostat -x -t text or iostat -o JSON, per device",
        (".iostat", ".iostat.gz"),
        sniff_iostat,
    ),
    Kind(
        "lmt",
        "iochar.load.lmt",
        "LMT OST/MDS counters (SQLite export or timestamp,ost,... CSV)",
        (".sqlite3", ".sqlite", ".db"),
        sniff_lmt,
    ),
    Kind(
        "snapshot",
        "iochar.load.snapshot",
        "file-system snapshot: find -printf listing, GNU stat output, or `iochar snapshot` Parquet",
        (".find", ".find.gz", ".stat", ".snapshot.parquet"),
        sniff_snapshot,
    ),
    Kind(
        "strace",
        "iochar.load.strace",
        "strace -f -tt -T -y (or -ttt) output of any Linux program",
        (".strace", ".st"),
        sniff_strace,
    ),
    Kind(
        "trace-csv",
        "iochar.load.trace_table",
        "iochar per-operation trace, CSV with a header (op, t_start, ...)",
        (".csv", ".csv.gz", ".trace.csv"),
        sniff_trace_csv,
    ),
    Kind(
        "trace-parquet",
        "iochar.load.trace_table",
        "iochar per-operation trace, Parquet with the trace-csv columns",
        (".parquet", ".pq"),
        sniff_trace_parquet,
    ),
)

#: Benchmark output kinds (:mod:`iochar.load.bench`): a calibration table for the
#: caller, nothing for the store.
BENCH_KINDS: tuple[Kind, ...] = (
    Kind(
        "fio-json",
        "iochar.load.bench",
        "fio --output-format=json (or json+) output: a calibration table",
    ),
    Kind(
        "ior",
        "iochar.load.bench",
        "IOR 3.x/4.x text output (the Results table): a calibration table",
    ),
)

_BY_KIND = {k.kind: k for k in KINDS + BENCH_KINDS}


def by_kind(kind: str) -> Kind | None:
    """The table row of ``kind`` (a store or benchmark kind), or None.

    Parameters
    ----------
    kind : str
        A kind name.

    Returns
    -------
    Kind or None
    """
    return _BY_KIND.get(kind)


def sniff_head(head: bytes) -> str | None:
    """The first store kind (in :data:`KINDS` order) whose sniff function claims ``head``.

    Parameters
    ----------
    head : bytes
        The first 64 KiB of an input.

    Returns
    -------
    str or None
    """
    for k in KINDS:
        if k.sniff is not None and k.sniff(head):
            return k.kind
    return None
