"""Loader for ``strace`` output (kind ``"strace"``).

Reads what ``strace -f -tt -T -y -o FILE PROGRAM`` (or ``-ttt`` for epoch
times) writes, with or without ``-f`` pid prefixes (``1234  `` with ``-o``,
``[pid  1234] `` when strace writes to stderr), with or without ``-T``
durations and ``-y`` fd paths, and turns every system call on a file into one
row of ``ops``.

Parsing is vectorized over blocks of lines (16 MiB, at most ``chunk_rows``
lines per chunk): numpy locates and decodes the fields of every line eight
bytes at a time (unaligned uint64 loads of the block and byte-wise bit tests),
string fields become zero-copy Arrow string views, polars regexes run only on
the argument text of the few calls that need it (paths, explicit offsets),
and file positions come from a stable sort by (pid, fd) with forward fills
and cumulative sums. ``benchmarks/bench_strace.py`` measures about 650,000
lines/s on one core. Unfinished calls, fd states, the working directory and
the clock are carried between chunks, so the result never depends on
``chunk_rows``.

Call mapping
------------
=====================================================================  ========
strace call                                                            ``op``
=====================================================================  ========
read, pread64, pread, readv, preadv, preadv2                           read
write, pwrite64, pwrite, writev, pwritev, pwritev2                     write
open, openat, openat2, creat                                           open
close                                                                  close
lseek, _llseek                                                         seek
fsync, fdatasync, sync_file_range, sync_file_range2                    sync
stat, lstat, fstat, newfstatat, statx, access, faccessat(2), ...64     stat
any other call on an fd shown as ``N<path>`` (``-y``), on a path       other
argument (unlink, rename, mkdir, execve, ...), on a known fd
(ftruncate, getdents64, fcntl, mmap of a file, ...) or returning
one (socket, eventfd, dup2, ... with ``-y``)
calls on no file at all (brk, futex, clone, anonymous mmap, ...)       no row
=====================================================================  ========

Calls that make no row are counted by name in ``meta["non_io_calls"]``.

Columns
-------
==========  =========================================================  =======
column      meaning                                                    unit
==========  =========================================================  =======
job_id      0 (one job per trace)
rank        pid (or tid) of the caller; 0 when the trace shows none
file_id     local id into ``files`` (NULL: no known file)
op          see the table above
offset      pread/pwrite: the explicit offset; read/write/readv/       [bytes]
            writev: the file position, tracked per (pid, fd): 0 after
            open, set by lseek, advanced by each successful transfer;
            seek: the new position. NULL when unknown.
size        bytes transferred (the return value) of read/write calls;  [bytes]
            NULL for other calls and for failed calls
t_start     call start, since the trace's first timestamp               [s]
t_end       ``t_start`` + the ``-T`` duration (``t_start`` without -T)  [s]
call        raw syscall name
error       errno name (``ENOENT``, ``ERESTARTSYS``...) when it failed
==========  =========================================================  =======

``<unfinished ...>`` / ``<... name resumed>`` pairs become one op: start time,
fd and first arguments from the unfinished line, the rest of the arguments,
the result and the duration from the resumed line. Rows come out in the order
the calls *completed* (the resumed line's position), which is the same order
whether the input is parsed whole or in chunks.

``jobs`` has one row: ``job_key`` = the first pid, ``app`` = basename of the
first successful ``execve``'s program, ``exe`` = its argv joined by spaces
(as strace printed it, so long arguments may end in ``...``), ``nprocs`` =
distinct pids, ``start_ts``/``end_ts`` (UTC) only for ``-ttt`` epoch times
(``-tt`` has no date, and midnight wrap-around of ``-tt`` times is handled),
``runtime_s``.

Limits (what strace output cannot tell)
---------------------------------------
- ``cpu_s`` stays NULL: strace does not report CPU time between calls.
- File positions are tracked per pid and fd. Threads (``-f`` shows their tids
  as pids) and forked children share open file descriptions with the process
  that opened them, so their read/write offsets are NULL until they lseek or
  open themselves. Descriptors opened before tracing began, duplicated with
  dup/dup2/fcntl(F_DUPFD), or opened with ``O_APPEND`` (writes) have NULL
  offsets until an lseek; sendfile/splice/copy_file_range make the position
  unknown.
- Without ``-y`` the fd -> path map comes from the traced open calls only.
- Relative path arguments are resolved against the working directory shown
  by ``-y`` (``AT_FDCWD</dir>``: the latest one seen, and before any, the
  first one in the trace's first 64 KiB); without ``-y`` they stay relative.
  Paths are unescaped, stripped of ``(deleted)`` and of ``-yy`` device
  suffixes, and normalised lexically (symlinks are not resolved).
- In stderr captures without ``-o`` (``[pid N]`` prefixes), lines that carry
  no prefix belong to the only traced process at that time: the first
  process (its pid taken from its ``set_tid_address``/``getpid`` result) as
  long as it lives, then the last prefixed pid.
- strace ends every line with a newline, so in strict mode a last line
  without one is reported as a truncated input; tolerant mode keeps it when
  it is a complete call. A cut exactly at a line end leaves a valid, shorter
  trace and cannot be noticed.
- A call still unfinished when the trace (or its process) ends becomes an op
  with no size and ``t_end = t_start``; ``meta["unfinished_unresolved"]``
  counts them.
"""

from __future__ import annotations

import codecs
import datetime as _dt
import posixpath
import re
from collections.abc import Iterator
from typing import Any, BinaryIO, ClassVar

import numpy as np
import polars as pl
import pyarrow as pa

from iochar.errors import InputError
from iochar.load import register
from iochar.load._base import Parsed, SkipLog
from iochar.load._text import Source, iter_line_blocks, open_text, source_name
from iochar.schema import OPS

__all__ = ["StraceLoader", "CALL_OPS"]

KIND = "strace"

#: Raw syscall name -> ``ops.op`` for the calls with a specific op.
CALL_OPS: dict[str, str] = {
    **dict.fromkeys(("read", "pread64", "pread", "readv", "preadv", "preadv2"), "read"),
    **dict.fromkeys(("write", "pwrite64", "pwrite", "writev", "pwritev", "pwritev2"), "write"),
    **dict.fromkeys(("open", "openat", "openat2", "creat"), "open"),
    "close": "close",
    **dict.fromkeys(("lseek", "_llseek"), "seek"),
    **dict.fromkeys(("fsync", "fdatasync", "sync_file_range", "sync_file_range2"), "sync"),
    **dict.fromkeys(
        (
            "stat", "lstat", "fstat", "stat64", "lstat64", "fstat64", "oldstat", "oldlstat",
            "oldfstat", "newfstatat", "fstatat64", "statx", "access", "faccessat", "faccessat2",
        ),
        "stat",
    ),
}  # fmt: skip

# Argument shapes, by call name (how to find the call's file).
_FD_FIRST = 1  # first argument is a file descriptor
_PATH_FIRST = 2  # first argument is a path string
_AT_PATH = 3  # (dirfd, path, ...)
_MMAP = 4  # fd is the fifth argument

_FD_FIRST_CALLS = (
    "read", "pread64", "pread", "readv", "preadv", "preadv2", "write", "pwrite64", "pwrite",
    "writev", "pwritev", "pwritev2", "close", "lseek", "_llseek", "fsync", "fdatasync",
    "sync_file_range", "sync_file_range2", "fstat", "fstat64", "oldfstat", "ftruncate",
    "ftruncate64", "fallocate", "getdents", "getdents64", "readdir", "fcntl", "fcntl64", "flock",
    "fadvise64", "fadvise64_64", "readahead", "fstatfs", "fstatfs64", "fchmod", "fchown",
    "fchown32", "fchdir", "syncfs", "fgetxattr", "fsetxattr", "flistxattr", "fremovexattr",
    "ioctl", "dup", "dup2", "dup3", "sendfile", "sendfile64", "copy_file_range", "splice", "tee",
)  # fmt: skip
_PATH_FIRST_CALLS = (
    "open", "creat", "stat", "lstat", "stat64", "lstat64", "oldstat", "oldlstat", "access",
    "truncate", "truncate64", "unlink", "rmdir", "mkdir", "rename", "link", "symlink",
    "symlinkat", "readlink", "chdir", "chroot", "chmod", "chown", "chown32", "lchown",
    "lchown32", "utime", "utimes", "execve", "statfs", "statfs64", "getxattr", "lgetxattr",
    "setxattr", "lsetxattr", "listxattr", "llistxattr", "removexattr", "lremovexattr", "mknod",
    "acct", "swapon", "swapoff", "uselib",
)  # fmt: skip
_AT_CALLS = (
    "openat", "openat2", "newfstatat", "fstatat64", "statx", "faccessat", "faccessat2",
    "unlinkat", "mkdirat", "renameat", "renameat2", "linkat", "readlinkat", "fchmodat",
    "fchmodat2", "fchownat", "utimensat", "futimesat", "mknodat", "execveat",
    "name_to_handle_at",
)  # fmt: skip
_SHAPES: dict[str, int] = {
    **dict.fromkeys(_FD_FIRST_CALLS, _FD_FIRST),
    **dict.fromkeys(_PATH_FIRST_CALLS, _PATH_FIRST),
    **dict.fromkeys(_AT_CALLS, _AT_PATH),
    "mmap": _MMAP,
    "mmap2": _MMAP,
}

# How a call moves the (pid, fd) file position.
_POS_NONE, _POS_ADVANCE, _POS_EXPLICIT, _POS_EXPLICIT2, _POS_SEEK, _POS_LLSEEK = range(6)
_POSITION: dict[str, int] = {
    **dict.fromkeys(("read", "write", "readv", "writev"), _POS_ADVANCE),
    **dict.fromkeys(("pread64", "pread", "pwrite64", "pwrite", "preadv", "pwritev"), _POS_EXPLICIT),
    **dict.fromkeys(("preadv2", "pwritev2"), _POS_EXPLICIT2),  # offset -1: current position
    "lseek": _POS_SEEK,
    "_llseek": _POS_LLSEEK,
}
# Calls that reset what is known about an fd (position, and its file without -y).
_OPEN_CALLS = ("open", "openat", "openat2", "creat")
_DUP_CALLS = ("dup", "dup2", "dup3")
_CLOBBER_CALLS = ("sendfile", "sendfile64", "copy_file_range", "splice")
_EXEC_CALLS = ("execve", "execveat")
# Calls that never name a file or fd: their arguments are not searched.
_NO_FILE_CALLS = frozenset(
    (
        "brk", "mprotect", "munmap", "mremap", "madvise", "futex", "futex_waitv",
        "clock_nanosleep", "nanosleep", "clock_gettime", "clock_getres", "gettimeofday",
        "time", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend", "sigaltstack",
        "set_robust_list", "get_robust_list", "set_tid_address", "arch_prctl", "rseq", "exit",
        "exit_group", "wait4", "waitid", "clone", "clone3", "fork", "vfork", "getpid", "getppid",
        "gettid", "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
        "getrandom", "prlimit64", "getrlimit", "setrlimit", "getrusage", "sched_yield",
        "sched_getaffinity", "sched_setaffinity", "sched_getparam", "sched_setscheduler",
        "sched_getscheduler", "uname", "sysinfo", "umask", "kill", "tgkill", "tkill", "alarm",
        "setitimer", "getitimer", "times", "membarrier", "mlock", "munlock", "restart_syscall",
        "setpgid", "getpgid", "getpgrp", "setsid", "getsid", "prctl", "capget", "capset",
        "set_mempolicy", "get_mempolicy", "mbind", "pause",
    )
)  # fmt: skip
# Calls whose arguments beyond the first fd are read (so their text is kept).
_ARG_CALLS = frozenset(
    (*_PATH_FIRST_CALLS, *_AT_CALLS, "mmap", "mmap2", "fcntl", "fcntl64", "_llseek")
    + tuple(k for k, v in _POSITION.items() if v in (_POS_EXPLICIT, _POS_EXPLICIT2))
)

# Line kinds.
_BAD, _MSG, _CALL, _UNF, _RES, _SIG, _EXIT = range(7)

_DAY_NS = 86_400 * 1_000_000_000
_HALF_DAY_NS = _DAY_NS // 2
_OP_CODE = {op: i for i, op in enumerate(OPS)}
_OTHER = _OP_CODE["other"]

# ---------------------------------------------------------------- Python regexes
# (sniffing, format detection and messages: a few lines each)
_PY_LINE = re.compile(
    r"^(?:\[pid +(?P<bpid>\d+)\] |(?P<pid>\d+) +)?"
    r"(?:(?P<hh>\d{1,2}):\d\d:\d\d(?P<hfrac>\.\d+)?|(?P<es>\d+)\.\d+) +"
    r"(?:<\.\.\. [\w?]+ resumed>|(?P<name>[\w?]+)\(|--- |\+\+\+ |<detached \.\.\.>)"
)
_PY_END = re.compile(r"(?:\) *= .*|<unfinished \.\.\.>| ---| \+\+\+|<detached \.\.\.>)$")
_PY_DUR = re.compile(r"\) *= .* <\d+\.\d+>$")
_PY_FDPATH = re.compile(r"(?:\d|AT_FDCWD)<")
_PY_TID = re.compile(
    r"^(?:\d{1,2}:\d\d:\d\d(?:\.\d+)?|\d+\.\d+) +"
    r"(?:set_tid_address|getpid|gettid)\(.*\) += (\d+)"
)
_PY_CWD = re.compile(r"AT_FDCWD<((?:[^<>\n]|<[^<>\n]*>)*)>")
_PY_MSG = ("strace: ", "[ Process PID=")
_PY_MIDLINE_MSG = re.compile(r"strace: Process \d+ (?:attached|detached|suspended)\n$")
_PY_STR = re.compile(r'"((?:[^"\\]|\\.)*)"')

# ---------------------------------------------------------------- polars regexes
# On argument text of the few calls that need more than their first fd.
# (?-u) keeps classes ASCII (fast); (?u:...) marks the ones that may see anything.
_P_ANN = r"(?:->|(?u:[^<>\n])|<(?u:[^<>\n])*>)*"
_P_PATHARG = (
    r"(?-u)^(?:(?P<dirfd>AT_FDCWD|-?[0-9]+)(?:<(?P<dann>" + _P_ANN + r")>)?, )?"
    r'(?:"(?P<sp>(?:(?u:[^"\\])|\\(?u:.))*)"|NULL)'
)
_P_ANYFD = r"(?-u)(?:^|[ (\[{=,])-?[0-9]+<(" + _P_ANN + r")>"
_P_MMAPFD = r"(?-u)^(?u:[^,])*, (?u:[^,])*, (?u:[^,])*, (?u:[^,])*, ([0-9]+)"
_P_OFF = r"(?-u), (-?[0-9]+)$"
_P_OFF2 = r"(?-u), (-?[0-9]+), [A-Z0-9_|]+$"
_P_LLSEEK = r"(?-u)\[([0-9]+)\]"

_EXPECT_LINE = "an strace line: [pid] timestamp syscall(args) = result"
_EXPECT_TAIL = "'= result' or '<unfinished ...>' at the end of the call"
_EXPECT_TRUNC = "a complete line (the input looks truncated)"


def _lut(chars: bytes) -> np.ndarray:
    table = np.zeros(256, dtype=bool)
    table[np.frombuffer(chars, dtype=np.uint8)] = True
    return table


_FOLLOW = _lut(b",) ]}(\n\x00")  # what may follow the '>' closing an fd path
_NAME_RE = re.compile(r"^[A-Za-z0-9_?]+$")
_POW10 = 10 ** np.arange(19, dtype=np.int64)

# ---------------------------------------------------------------- SWAR helpers
# Fields are decoded eight bytes at a time: each line's bytes at a position are
# loaded as one little-endian uint64 (an unaligned view of the block), and
# byte-wise tests set the high bit of the matching bytes ("SIMD within a
# register"); numpy then does that for every line at once.
_U64 = np.uint64
_HI = _U64(0x8080808080808080)
_LO7 = _U64(0x7F7F7F7F7F7F7F7F)
_C30 = _U64(0x3030303030303030)
_C46 = _U64(0x4646464646464646)
_ONES = _U64(0xFFFFFFFFFFFFFFFF)
_PAD = 256  # zero bytes after a block, so loads past a line never leave it


def _rep(byte: int) -> np.uint64:
    return _U64(byte * 0x0101010101010101)


def _word(text: bytes) -> tuple[np.uint64, np.uint64]:
    """(value, mask) to compare the first len(text) <= 8 bytes of a load."""
    return (
        _U64(int.from_bytes(text, "little")),
        _U64((1 << (8 * len(text))) - 1),
    )


def _zero(y: np.ndarray) -> np.ndarray:
    """High bit set in each byte of ``y`` that is zero."""
    return ~(((y & _LO7) + _LO7) | y | _LO7) & _HI


def _eqb(w: np.ndarray, byte: int) -> np.ndarray:
    return _zero(w ^ _rep(byte))


def _nondigit(w: np.ndarray) -> np.ndarray:
    """High bit set in each byte that is not an ASCII digit (bytes < 0x80)."""
    at_least_0 = ((w | _HI) - _C30) & _HI
    at_most_9 = ~(w + _C46) & _HI
    return ~(at_least_0 & at_most_9) & _HI


def _nonhex(w: np.ndarray) -> np.ndarray:
    """High bit set in each byte that is not a hex digit (0-9, a-f, A-F)."""
    low = w | _rep(0x20)
    at_least_a = ((low | _HI) - _rep(0x61)) & _HI
    at_most_f = ~(low + _rep(0x19)) & _HI
    return _nondigit(w) & ~(at_least_a & at_most_f) & _HI


def _first(m: np.ndarray) -> np.ndarray:
    """Index of the lowest byte with its high bit set; 8 when none."""
    low = m & (~m + _U64(1))
    bit = np.log2(np.maximum(low, _U64(1)).astype(np.float64)).astype(np.int64)
    return np.where(m == 0, 8, bit >> 3)


def _last(m: np.ndarray) -> np.ndarray:
    """Index of the highest byte with its high bit set; -1 when none."""
    bit = np.log2(np.maximum(m, _U64(1)).astype(np.float64)).astype(np.int64)
    return np.where(m == 0, -1, bit >> 3)


def _conv8(x: np.ndarray) -> np.ndarray:
    """Eight digit values (byte 0 the most significant) -> the number."""
    x = ((x & _U64(0x0F0F0F0F0F0F0F0F)) * _U64(2561)) >> _U64(8)
    x = ((x & _U64(0x00FF00FF00FF00FF)) * _U64(6553601)) >> _U64(16)
    x = ((x & _U64(0x0000FFFF0000FFFF)) * _U64(42949672960001)) >> _U64(32)
    return x.astype(np.int64)


def _digits(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Value and length of the leading run of decimal digits in each load."""
    n = _first(_nondigit(w))
    shift = (8 * (8 - np.minimum(n, 8))).astype(np.uint64)
    x = np.where(n == 0, _U64(0), (w - _C30) << np.minimum(shift, _U64(63)))
    return np.where(n == 0, 0, _conv8(x)), n


def _low_mask(nbytes: np.ndarray) -> np.ndarray:
    """uint64 masks keeping the lowest ``nbytes`` (0..8) bytes."""
    nb = np.clip(nbytes, 0, 8).astype(np.uint64)
    return np.where(nb >= 8, _ONES, (_U64(1) << np.minimum(nb * _U64(8), _U64(63))) - _U64(1))


_W_RES, _W_SIG, _W_EXIT = _word(b"<... "), _word(b"--- "), _word(b"+++ ")
_W_SIGEND, _W_EXITEND = _word(b" ---"), _word(b" +++")
_W_DET1, _W_DET2 = _word(b"<detache"), _word(b"d ...>")
_W_UNF1, _W_UNF2 = _word(b"<unfinis"), _word(b"hed ...>")
_W_UNAV1, _W_UNAV2 = _word(b" <unav"), _word(b"ailable>")
_W_RESUMED, _W_PID = _word(b" resumed"), _word(b"[pid ")
_W_DELETED = _word(b"(deleted")
_W_MSG, _W_PROC1, _W_PROC2 = _word(b"strace: "), _word(b"[ Proces"), _word(b"s PID=")


class _Block:
    """Whole lines in a zero-padded byte array, read eight bytes at a time.

    Every field of every line is located and decoded with vectorized numpy
    operations on unaligned uint64 loads, and string fields become zero-copy
    Arrow string views into the same buffer.
    """

    def __init__(self, data: bytes) -> None:
        n = len(data)
        buf = np.zeros(n + _PAD, dtype=np.uint8)
        body = buf[:n]
        body[:] = np.frombuffer(data, dtype=np.uint8)
        if not data.isascii():  # strace escapes non-ASCII; only garbage has it
            body[body >= 0x80] = ord("?")
        self.n = n
        self.buf = buf
        self.u64 = np.ndarray(shape=(n + _PAD - 8,), dtype="<u8", buffer=buf, strides=(1,))
        self.u32 = np.ndarray(shape=(n + _PAD - 4,), dtype="<u4", buffer=buf, strides=(1,))
        self.arrow = pa.py_buffer(buf)
        self._eq: np.ndarray | None = None

    def load(self, pos: np.ndarray) -> np.ndarray:
        """Eight bytes from each position (positions below 0 read from 0)."""
        return self.u64[np.maximum(pos, 0)]

    def match(self, pos: np.ndarray, word: tuple[np.uint64, np.uint64]) -> np.ndarray:
        return (self.load(pos) & word[1]) == word[0]

    def uint(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Value and length of the decimal digits at each position (<= 16)."""
        value, length = _digits(self.load(pos))
        more = np.flatnonzero(length == 8)
        if more.size:
            v2, l2 = _digits(self.load(pos[more] + 8))
            value[more] = value[more] * _POW10[l2] + v2
            length[more] += l2
        return value, length

    def span(self, pos: np.ndarray, stop, limit: int) -> np.ndarray:
        """Offset of the first byte at or after each position for which
        ``stop(load)`` sets the high bit; ``limit`` when none is that close."""
        out = np.full(pos.size, limit, dtype=np.int64)
        todo = np.arange(pos.size)
        for off in range(0, limit, 8):
            f = _first(stop(self.load(pos[todo] + off)))
            hit = f < 8
            out[todo[hit]] = np.minimum(off + f[hit], limit)
            todo = todo[~hit]
            if todo.size == 0:
                break
        return out

    def find(self, pos: np.ndarray, byte: int, limit: int) -> np.ndarray:
        """Offset of the first ``byte`` at or after each position; -1 if none
        within ``limit`` bytes."""
        out = self.span(pos, lambda w: _eqb(w, byte), limit)
        out[out >= limit] = -1
        return out

    def skip(self, pos: np.ndarray, byte: int, limit: int = 64) -> np.ndarray:
        """Length of the run of ``byte`` starting at each position."""
        return self.span(pos, lambda w: ~_eqb(w, byte) & _HI, limit)

    def skip_back(self, end: np.ndarray, byte: int, limit: int = 128) -> np.ndarray:
        """Length of the run of ``byte`` ending just before each position."""
        out = np.full(end.size, limit, dtype=np.int64)
        todo = np.arange(end.size)
        for off in range(0, limit, 8):
            h = _last(~_eqb(self.load(end[todo] - off - 8), byte) & _HI)
            hit = h >= 0
            out[todo[hit]] = off + 7 - h[hit]
            todo = todo[~hit]
            if todo.size == 0:
                break
        return out

    def last_eq(self, end: np.ndarray, start: np.ndarray, limit: int = 96) -> np.ndarray:
        """Position of the '=' of the last ' = ' before each ``end`` (after
        ``start``); -1 when there is none."""
        out = np.full(end.size, -1, dtype=np.int64)
        todo = np.arange(end.size)
        # words overlapping by two bytes, so every middle byte is checked once
        for off in range(8, limit + 8, 6):
            at = end[todo] - off
            w = self.load(at)
            sp = _eqb(w, 32)
            hit3 = _eqb(w, 61) & (sp << _U64(8)) & (sp >> _U64(8)) & _U64(0x00FFFFFFFFFFFF00)
            h = _last(hit3)
            found = (h >= 0) & (at + h > start[todo])
            out[todo[found]] = at[found] + h[found]
            todo = todo[~found & (at > start[todo])]
            if todo.size == 0:
                return out
        if todo.size:  # long tails: every ' = ' of the block, searched
            eqs = self.eqs()
            if eqs.size:
                j = np.searchsorted(eqs, end[todo]) - 1
                e = eqs[np.maximum(j, 0)]
                ok = (j >= 0) & (e > start[todo])
                out[todo[ok]] = e[ok]
        return out

    def eqs(self) -> np.ndarray:
        """Positions of every ' = ' in the block (the '=')."""
        if self._eq is None:
            b = self.buf
            c = np.flatnonzero(b[: self.n] == 61)
            c = c[c > 0]
            self._eq = c[(b[c - 1] == 32) & (b[c + 1] == 32)]
        return self._eq

    def strings(self, starts: np.ndarray, lens: np.ndarray, valid: np.ndarray) -> pa.Array:
        """Arrow string views of ``buf[start:start+len]`` (NULL where not valid)."""
        n = starts.size
        views = np.zeros((n, 4), dtype=np.uint32)
        idx = np.flatnonzero(valid)
        if idx.size:
            st = starts[idx].astype(np.int64)
            ln = np.maximum(lens[idx], 0).astype(np.int64)
            w0 = self.u64[st] & _low_mask(ln)
            w1 = self.u32[st + 8] & _low_mask(ln - 8).astype(np.uint32)
            inline = ln <= 12
            cols = (
                ln.astype(np.uint32),
                (w0 & _U64(0xFFFFFFFF)).astype(np.uint32),
                np.where(inline, (w0 >> _U64(32)).astype(np.uint32), 0),
                np.where(inline, w1, st.astype(np.uint32)),
            )
            for k, col in enumerate(cols):
                if idx.size == n:
                    views[:, k] = col
                else:
                    views[idx, k] = col
        validity = None
        if idx.size < n:
            validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
        return pa.Array.from_buffers(
            pa.string_view(), n, [validity, pa.py_buffer(views), self.arrow]
        )

    def text(self, start: int, end: int) -> str:
        return bytes(self.buf[start:end]).decode("ascii", "replace")


def _nullable(values: np.ndarray, valid: np.ndarray) -> pa.Array:
    return pa.array(values, mask=~valid)


def _unescape(text: str) -> str:
    """Undo strace's C-style string escapes (``\\x41``, ``\\101``, ``\\n``...)."""
    if "\\" not in text:
        return text
    try:
        raw = codecs.escape_decode(text.encode("latin-1", "backslashreplace"))[0]
    except (ValueError, UnicodeError):
        return text
    return raw.decode("utf-8", "backslashreplace")


def _norm_path(kind: str, raw: str, base: str | None) -> str:
    """A file's name from an fd annotation (kind "a") or a path argument ("s")."""
    if kind == "a":
        # -yy appends <char 1:3> / <block 8:1> to device paths
        if raw.endswith(">") and "<" in raw:
            raw = raw[: raw.rindex("<")]
        path = _unescape(raw)
        if path.endswith(" (deleted)"):
            path = path[: -len(" (deleted)")]
    else:
        path = _unescape(raw)
        if not path.startswith("/") and base:
            path = _unescape(base).rstrip("/") + "/" + path
    if path.startswith("/"):
        path = posixpath.normpath(path)
    return path


def _split_exe(args: str) -> tuple[str | None, str | None]:
    """(program path, argv joined by spaces) from execve's printed arguments."""
    strings = _PY_STR.finditer(args)
    first = next(strings, None)
    if first is None:
        return None, None
    prog = _unescape(first.group(1))
    rest = args[first.end() :]
    lo = rest.find("[")
    if lo < 0:
        return prog, None
    hi = rest.find("]", lo)
    inside = rest[lo + 1 : hi if hi >= 0 else len(rest)]
    parts = []
    for m in _PY_STR.finditer(inside):
        part = _unescape(m.group(1))
        if inside[m.end() : m.end() + 3] == "...":
            part += "..."
        parts.append(part)
    if inside.rstrip().endswith(", ..."):
        parts.append("...")
    return prog, " ".join(parts) if parts else None


def _detect(text: str) -> dict[str, Any] | None:
    """Format facts from the first lines of a trace, or None if none parse."""
    fmt: dict[str, Any] | None = None
    durations = fd_paths = False
    leader = cwd = None
    for n, line in enumerate(text.split("\n")[:2000]):
        if not line or line.startswith(_PY_MSG):
            continue
        m = _PY_LINE.match(line)
        if m is None:
            continue
        if fmt is None:
            if m.group("bpid"):
                prefix = "bracket"
            elif m.group("pid"):
                prefix = "bare"
            else:
                prefix = "none"
            if m.group("hh") is not None:
                clock = "-tt" if m.group("hfrac") else "-t"
            else:
                clock = "-ttt"
            fmt = {"prefix": prefix, "clock": clock, "first_line": n}
        durations = durations or bool(_PY_DUR.search(line))
        fd_paths = fd_paths or bool(_PY_FDPATH.search(line))
        if cwd is None and "AT_FDCWD<" in line:
            c = _PY_CWD.search(line)
            cwd = c.group(1) if c else None
        if leader is None and fmt["prefix"] != "bare":
            t = _PY_TID.match(line)
            if t:
                leader = int(t.group(1))
    if fmt is not None:
        fmt.update(durations=durations, fd_paths=fd_paths, leader=leader, cwd=cwd)
    return fmt


class StraceLoader:
    """Loader for ``strace -f -tt -T -y`` (or ``-ttt``) output.

    See the module docstring for the call mapping, the columns and the
    limits. Register name: ``"strace"``.
    """

    kind: ClassVar[str] = KIND
    suffixes: ClassVar[tuple[str, ...]] = (".strace", ".st")
    description: ClassVar[str] = "strace -f -tt -T -y (or -ttt) output of any Linux program"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` looks like strace output.

        The first line that is not a ``strace:`` message must be a
        timestamped ``syscall(...`` line, and most of the first 20 lines must
        be complete strace lines.

        Parameters
        ----------
        head : bytes
            The first 64 KiB of the (decompressed) input.

        Returns
        -------
        bool
        """
        if not head or b"\x00" in head[:4096]:
            return False
        text = head[:16384].decode("utf-8", "replace")
        lines = text.split("\n")
        if len(lines) > 1:
            lines = lines[:-1]  # the last one may be cut by the head's size
        checked = ok = 0
        for line in lines:
            if not line or line.startswith(_PY_MSG):
                continue
            checked += 1
            good = bool(_PY_LINE.match(line)) and bool(_PY_END.search(line))
            if checked == 1 and not good:
                return False
            ok += good
            if checked >= 20:
                break
        return checked > 0 and ok >= max(1, (8 * checked) // 10)

    def parse(
        self, src: Source, *, strict: bool = True, chunk_rows: int = 1_000_000
    ) -> Iterator[Parsed]:
        """Parse strace output into ``ops``, ``files`` and ``jobs`` chunks.

        Parameters
        ----------
        src : str, os.PathLike, bytes or binary file
            The trace (optionally gzip/bz2/xz/zstd compressed).
        strict : bool, default True
            Raise :class:`~iochar.errors.InputError` on the first bad line;
            False skips bad lines and counts them (``Parsed.skips``).
        chunk_rows : int, default 1_000_000
            Lines parsed per chunk; bounds memory. Results do not depend on it.

        Yields
        ------
        Parsed
            ``ops`` and new ``files`` rows per chunk; the last chunk also has
            the ``jobs`` row. ``meta`` is cumulative (the last chunk's wins).

        Raises
        ------
        InputError
            Empty input, a line that is not strace output, a truncated last
            line, a timestamp earlier than the previous one of the same pid,
            a ``<... resumed>`` line with no matching ``<unfinished ...>``.
        """
        parser = _Parser(source_name(src), strict, max(1, int(chunk_rows)))
        with open_text(src) as fh:
            yield from parser.run(fh)


# name flags
_F_OPEN, _F_DUP, _F_FCNTL, _F_CLOSE, _F_CLOBBER, _F_ARGS, _F_EXEC = (1 << i for i in range(7))


class _Parser:
    """One parse. The state carried across blocks makes chunking invisible."""

    def __init__(self, name: str, strict: bool, chunk_rows: int) -> None:
        self.name = name
        self.strict = strict
        self.chunk_rows = chunk_rows
        self.skips = SkipLog() if not strict else None
        self.fmt: dict[str, Any] = {}
        # syscall names seen: global id -> name and its attributes
        self.names: list[str] = []
        self.name_ids: dict[str, int] = {}
        self.g_op = np.zeros(0, dtype=np.int8)
        self.g_shape = np.zeros(0, dtype=np.int8)
        self.g_pos = np.zeros(0, dtype=np.int8)
        self.g_flags = np.zeros(0, dtype=np.int16)
        # carried state
        self.split_carry: tuple[str, int] | None = None
        self.utf8_bad: list[tuple[int, str, object]] = []
        self.last_pid: int | None = None  # last prefixed pid ([pid N] captures)
        self.leader_alive = True
        self.last_sod: int | None = None  # -tt: last raw time of day [ns]
        self.days = 0
        self.t0: int | None = None
        self.t_max: int | None = None  # latest timestamp, lines and call ends [ns]
        self.t_gmax: int | None = None  # latest line timestamp [ns]
        self.pid_max: dict[int, int] = {}
        self.first_pid: int | None = None
        self.pend: dict[str, Any] | None = None  # unfinished calls
        self.fds: dict[str, np.ndarray] | None = None  # (pid, fd) state
        self.cwd: str | None = None
        self.key2fid: dict[str, int] = {}
        self.path2fid: dict[str, int] = {}
        self.new_files: list[tuple[int, str]] = []
        self.exe: tuple[bool, str] | None = None  # (succeeded, args)
        # counters
        self.lines = 0
        self.calls = 0
        self.io_calls = 0
        self.non_io = np.zeros(0, dtype=np.int64)
        self.signals = 0
        self.exits = 0
        self.messages = 0
        self.pairs = 0
        self.unresolved = 0

    # ------------------------------------------------------------ names
    def _gid(self, name: str) -> int:
        gid = self.name_ids.get(name)
        if gid is None:
            gid = len(self.names)
            self.names.append(name)
            self.name_ids[name] = gid
            op = CALL_OPS.get(name)
            flags = (
                (_F_OPEN if name in _OPEN_CALLS else 0)
                | (_F_DUP if name in _DUP_CALLS else 0)
                | (_F_FCNTL if name in ("fcntl", "fcntl64") else 0)
                | (_F_CLOSE if name == "close" else 0)
                | (_F_CLOBBER if name in _CLOBBER_CALLS else 0)
                | (
                    _F_ARGS
                    if name in _ARG_CALLS or (name not in _SHAPES and name not in _NO_FILE_CALLS)
                    else 0
                )
                | (_F_EXEC if name in _EXEC_CALLS else 0)
            )
            self.g_op = np.append(self.g_op, np.int8(-1 if op is None else _OP_CODE[op]))
            self.g_shape = np.append(self.g_shape, np.int8(_SHAPES.get(name, 0)))
            self.g_pos = np.append(self.g_pos, np.int8(_POSITION.get(name, _POS_NONE)))
            self.g_flags = np.append(self.g_flags, np.int16(flags))
            self.non_io = np.append(self.non_io, 0)
        return gid

    # ------------------------------------------------------------ errors
    def _fail(self, line: int | None, expected: str, got: object) -> InputError:
        return InputError(self.name, line, expected, got, kind=KIND)

    def _skip_or_raise(self, problems: list[tuple[int, str, object]]) -> None:
        """Raise the earliest problem (strict) or log them all (tolerant)."""
        if not problems:
            return
        problems.sort(key=lambda p: p[0])
        if self.strict:
            line, expected, got = problems[0]
            raise self._fail(line, expected, got)
        assert self.skips is not None
        for line, expected, _got in problems:
            self.skips.add(line, f"expected {expected}")

    # ------------------------------------------------------------ driver
    def run(self, fh: BinaryIO) -> Iterator[Parsed]:
        block_bytes = int(min(16 << 20, max(1 << 20, self.chunk_rows * 128)))
        seen_any = False
        for first_line, block, complete in iter_line_blocks(fh, block_bytes):
            seen_any = True
            if not self.fmt:
                self._set_format(block)
            data, starts, ends, linenos = self._lines(block, first_line, complete)
            if len(starts) == 0:
                continue
            blk = _Block(data)
            n = len(starts)
            for lo in range(0, n, self.chunk_rows):
                hi = min(n, lo + self.chunk_rows)
                last = (not complete) and hi == n
                out = self._batch(blk, starts[lo:hi], ends[lo:hi], linenos[lo:hi], last)
                if out is not None:
                    yield out
        if not seen_any:
            raise self._fail(1, "strace output (timestamped syscall lines)", "")
        if self.split_carry is not None:  # the input ended inside a split line
            text, line = self.split_carry
            self._skip_or_raise([(line, _EXPECT_TRUNC, text)])
        yield self._finish()

    def _set_format(self, block: bytes) -> None:
        fmt = _detect(block[: 64 * 1024].decode("utf-8", "replace"))
        if fmt is None:
            raise self._fail(1, _EXPECT_LINE, block.split(b"\n", 1)[0])
        self.fmt = fmt
        self.cwd = fmt["cwd"]  # the first working directory -y shows

    def _lines(
        self, block: bytes, first_line: int, complete: bool
    ) -> tuple[bytes, np.ndarray, np.ndarray, np.ndarray]:
        """The block's lines: (bytes, starts, ends without newline, 1-based numbers)."""
        if not block.isascii():
            try:
                block.decode("utf-8")
            except UnicodeDecodeError as exc:
                if self.strict:
                    line = first_line + block.count(b"\n", 0, exc.start)
                    lo = block.rfind(b"\n", 0, exc.start) + 1
                    hi = block.find(b"\n", exc.start)
                    self.utf8_bad.append((line, "UTF-8 text", block[lo : hi if hi >= 0 else None]))
        if self.split_carry is not None or (
            self.fmt["prefix"] != "bare" and b"strace: Process" in block
        ):
            return self._lines_joined(block, first_line)
        nl = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
        starts = np.empty(len(nl), dtype=np.int64)
        starts[:1] = 0
        starts[1:] = nl[:-1] + 1
        ends = nl.astype(np.int64)
        if not complete:
            starts = np.append(starts, nl[-1] + 1 if len(nl) else 0)
            ends = np.append(ends, len(block))
        return block, starts, ends, first_line + np.arange(len(starts), dtype=np.int64)

    def _lines_joined(
        self, block: bytes, first_line: int
    ) -> tuple[bytes, np.ndarray, np.ndarray, np.ndarray]:
        """Slow path for stderr captures: re-join lines that strace's own
        ``strace: Process N attached`` message cut in two."""
        texts: list[str] = []
        numbers: list[int] = []
        carry = self.split_carry
        self.split_carry = None
        parts = block.decode("utf-8", "replace").split("\n")
        pieces = [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
        for i, text in enumerate(pieces):
            line = first_line + i
            if carry is not None:
                text, line = carry[0] + text, carry[1]
                carry = None
            m = _PY_MIDLINE_MSG.search(text)
            if m is not None and m.start() > 0:
                self.messages += 1
                carry = (text[: m.start()], line)
                continue
            texts.append(text)
            numbers.append(line)
        self.split_carry = carry
        raw = [t.encode("utf-8") for t in texts]
        lens = np.array([len(r) for r in raw], dtype=np.int64)
        starts = np.zeros(len(raw), dtype=np.int64)
        np.cumsum(lens[:-1], out=starts[1:])
        ends = starts + lens - np.array([r.endswith(b"\n") for r in raw], dtype=np.int64)
        return b"".join(raw), starts, ends, np.asarray(numbers, dtype=np.int64)

    # ------------------------------------------------------------ one batch
    def _batch(
        self,
        blk: _Block,
        ls: np.ndarray,
        le: np.ndarray,
        linenos: np.ndarray,
        last_incomplete: bool,
    ) -> Parsed | None:
        fmt = self.fmt
        buf = blk.buf
        n = len(ls)
        self.lines += n
        problems: list[tuple[int, str, object]] = []
        if self.utf8_bad:
            top = int(linenos[-1])
            problems += [p for p in self.utf8_bad if p[0] <= top]
            self.utf8_bad = [p for p in self.utf8_bad if p[0] > top]

        # ---- prefix: pid and timestamp
        ok = np.ones(n, dtype=bool)
        pid = np.full(n, -1, dtype=np.int64)
        if fmt["prefix"] == "bare":
            pid, plen = blk.uint(ls)
            nsp = blk.skip(ls + plen, 32, limit=16)
            ok &= (plen > 0) & (plen < 12) & (nsp > 0) & (nsp < 16)
            ts0 = ls + plen + nsp
        else:
            ts0 = ls.copy()
            br = np.flatnonzero(blk.match(ls, _W_PID))
            if br.size:
                p0 = ls[br] + 5
                p0 = p0 + blk.skip(p0, 32, limit=16)
                v, vl = blk.uint(p0)
                close = p0 + vl
                good = (vl > 0) & (vl < 12) & (buf[close] == 93) & (buf[close + 1] == 32)
                pid[br] = np.where(good, v, -1)
                ok[br] &= good
                ts0[br] = close + 2
        if fmt["clock"] == "-ttt":
            sec, sl = blk.uint(ts0)
            ok &= (sl > 0) & (sl <= 10)
            dot = ts0 + sl
        else:  # HH:MM:SS
            w = blk.load(ts0)
            ok &= (_nondigit(w) & _U64(0x8080008080008080)) == 0
            ok &= (w & _U64(0x0000FF0000FF0000)) == _U64(0x00003A00003A0000)
            d = [((w >> _U64(8 * k)) & _U64(0x0F)).astype(np.int64) for k in (0, 1, 3, 4, 6, 7)]
            sec = (d[0] * 10 + d[1]) * 3600 + (d[2] * 10 + d[3]) * 60 + d[4] * 10 + d[5]
            dot = ts0 + 8
        has_frac = buf[dot] == 46
        fv, fl = blk.uint(dot + 1)
        fgood = (fl > 0) & (fl <= 9)
        ok &= ~has_frac | fgood
        frac = np.where(has_frac & fgood, fv * _POW10[np.clip(9 - fl, 0, 18)], 0)
        tend = np.where(has_frac, dot + 1 + fl, dot)
        ok &= buf[tend] == 32
        b = tend + 1
        ts = sec * 1_000_000_000 + frac

        # ---- line kinds and syscall names
        head = blk.load(b)
        last8 = blk.load(le - 8)  # the line's last 8 and 16 bytes
        last16 = blk.load(le - 16)
        end8 = last8 >> _U64(32)
        res = (head & _W_RES[1]) == _W_RES[0]
        sig = ((head & _W_SIG[1]) == _W_SIG[0]) & (end8 == _W_SIGEND[0])
        ext = ((head & _W_EXIT[1]) == _W_EXIT[0]) & (end8 == _W_EXITEND[0])
        det = np.flatnonzero((head & _W_DET1[1]) == _W_DET1[0])
        if det.size:
            ext[det] = blk.match(b[det] + 8, _W_DET2)
        nm0 = np.where(res, b + 5, b)
        nlen = np.zeros(n, dtype=np.int64)
        ci = np.flatnonzero(ok & ~res & ~sig & ~ext)
        nlen[ci] = blk.find(b[ci], 40, limit=64)  # '('
        ri = np.flatnonzero(ok & res)
        if ri.size:
            nlen[ri] = blk.find(nm0[ri], 32, limit=64)  # ' '
            rafter = nm0[ri] + nlen[ri]
            res[ri] = (nlen[ri] > 0) & blk.match(rafter, _W_RESUMED) & (buf[rafter + 8] == 62)
        after = nm0 + nlen
        call = ~res & (nlen > 0)
        unf = call & (last16 == _W_UNF1[0]) & (last8 == _W_UNF2[0])
        kind = np.full(n, _BAD, dtype=np.int8)
        kind[ok & call] = _CALL
        kind[ok & unf] = _UNF
        kind[ok & res] = _RES
        kind[ok & sig] = _SIG
        kind[ok & ext] = _EXIT
        gid_all = self._names(blk, kind, nm0, nlen)

        # ---- results: ' = ret[<path>][ ERRNO (text)][ (extra)][ <duration>]'
        ti = np.flatnonzero((kind == _CALL) | (kind == _RES))
        ret = np.zeros(n, dtype=np.int64)
        retok = np.zeros(n, dtype=bool)
        dur = np.full(n, np.nan)
        aend = np.zeros(n, dtype=np.int64)  # position of the ')' closing the arguments
        err_st = np.zeros(n, dtype=np.int64)
        err_len = np.zeros(n, dtype=np.int64)
        rp_st = np.zeros(n, dtype=np.int64)
        rp_len = np.zeros(n, dtype=np.int64)
        has_err = np.zeros(n, dtype=bool)
        has_rp = np.zeros(n, dtype=bool)
        tail_bad = np.zeros(0, dtype=np.int64)
        if ti.size:
            lt = le[ti]
            tail_end = lt.copy()
            good = np.ones(ti.size, dtype=bool)
            if fmt["durations"]:
                # ' <S.UUUUUU>' (or ' <unavailable>') ends the line
                wf = last8[ti]
                cand = ((wf & _U64(0xFF000000000000FF)) == _U64(0x3E0000000000002E)) & (
                    (_nondigit(wf) & _U64(0x00FFFFFFFFFFFF00)) == 0
                )
                wi = last16[ti]
                h = _last(_nondigit(wi))  # the byte before the seconds' digits
                nsec = 7 - h
                hb = (8 * np.maximum(h, 0)).astype(np.uint64)
                lt_ch = (wi >> hb) & _U64(0xFF)
                sp_ch = (wi >> np.maximum(hb, _U64(8)) - _U64(8)) & _U64(0xFF)
                has_dur = cand & (h >= 1) & (nsec >= 1) & (lt_ch == 60) & (sp_ch == 32)
                keep_hi = ~_low_mask(h + 1)
                # mask before subtracting '0', so no borrow crosses into the digits
                secs = _conv8((wi & keep_hi) - (_C30 & keep_hi))
                mid = _U64(0x00FFFFFFFFFFFF00)
                usec = _conv8(((wf & mid) - (_C30 & mid)) << _U64(8))
                dur[ti] = np.where(has_dur, secs + usec / 1e6, np.nan)
                tail_end = np.where(has_dur, lt - 10 - nsec, tail_end)
                unav = (wi >> _U64(16)) == _W_UNAV1[0]
                unav &= wf == _W_UNAV2[0]
                tail_end = np.where(unav, lt - 14, tail_end)
            e_at = blk.last_eq(tail_end, after[ti])
            good &= e_at >= 0
            r0 = e_at + 2
            rw = blk.load(r0)
            c0 = rw & _U64(0xFF)
            q = c0 == 63
            neg = c0 == 45
            hexr = (rw & _U64(0xFFFF)) == _U64(0x7830)
            dv, dl = blk.uint(r0 + neg)
            hl = np.zeros(ti.size, dtype=np.int64)
            hi = np.flatnonzero(hexr)
            if hi.size:
                hl[hi] = blk.span(r0[hi] + 2, _nonhex, limit=24)
            ret_end = r0 + np.where(q, 1, np.where(hexr, 2 + hl, neg + dl))
            ret[ti] = np.where(neg, -dv, dv)
            retok[ti] = ~q & ~hexr & (dl > 0) & (dl < 16)
            c = buf[ret_end]
            lastc = buf[tail_end - 1]
            good &= q | (hexr & (hl > 0)) | ((dl > 0) & (dl < 16))
            good &= (ret_end == tail_end) | (
                ((c == 32) | (c == 60)) & ((lastc == 41) | (lastc == 62))
            )
            if fmt["durations"]:
                good &= has_dur | q | unav
            # the ')' before the padding spaces in front of ' = '
            close = e_at - 1 - blk.skip_back(e_at, 32)
            good &= (buf[close] == 41) & (close >= after[ti])
            aend[ti] = close
            ei = np.flatnonzero(good & (c == 32) & (buf[ret_end + 1] == 69))
            if ei.size:
                has_err[ti[ei]] = True
                err_st[ti[ei]] = ret_end[ei] + 1
                err_len[ti[ei]] = blk.find(ret_end[ei] + 1, 32, limit=48).clip(0)
            # strace 6 prints a deleted file's fd as <path>(deleted)
            deleted = (lastc == 41) & blk.match(tail_end - 9, _W_DELETED)
            deleted &= buf[tail_end - 10] == 62
            pi = np.flatnonzero(good & (c == 60) & ((lastc == 62) | deleted))
            if pi.size:
                has_rp[ti[pi]] = True
                rp_st[ti[pi]] = ret_end[pi] + 1
                rp_len[ti[pi]] = tail_end[pi] - np.where(deleted[pi], 10, 1) - rp_st[ti[pi]]
            tail_bad = ti[~good]
            kind[tail_bad] = _BAD

        # ---- bad lines
        if last_incomplete and self.strict:
            # strace ends every line with a newline: without one, the input was cut
            kind[n - 1] = _BAD
        bad = np.flatnonzero(kind == _BAD)
        if bad.size:
            msg = blk.match(ls[bad], _W_MSG) | (
                blk.match(ls[bad], _W_PROC1) & blk.match(ls[bad] + 8, _W_PROC2)
            )
            kind[bad[msg]] = _MSG
            self.messages += int(msg.sum())
            bad = bad[~msg]
            tail_set = set(tail_bad.tolist()) if tail_bad.size < 10_000 else set(tail_bad)
            for i in bad[:1] if self.strict else bad:
                if last_incomplete and i == n - 1:
                    expected = _EXPECT_TRUNC
                elif i in tail_set:
                    expected = _EXPECT_TAIL
                else:
                    expected = _EXPECT_LINE
                problems.append((int(linenos[i]), expected, blk.text(ls[i], le[i])))

        # ---- keep syscall, signal and exit lines
        keep = np.flatnonzero(kind >= _CALL)
        m = keep.size
        if m == 0:
            self._skip_or_raise(problems)
            return None
        kind = kind[keep]
        t = ts[keep]
        pid = pid[keep]
        lineno = linenos[keep]
        if fmt["clock"] != "-ttt":  # -tt wraps around at midnight
            prev = np.empty_like(t)
            prev[1:] = t[:-1]
            prev[0] = self.last_sod if self.last_sod is not None else t[0]
            days = np.cumsum(t < prev - _HALF_DAY_NS) + self.days
            self.last_sod = int(t[-1])
            self.days = int(days[-1])
            t = t + days * _DAY_NS
        if self.t0 is None:
            self.t0 = int(t[0])
        pid = self._assign_pids(pid, kind)

        # ---- timestamps must not go back within a pid
        gmax = self.t_gmax
        if not (bool((t[1:] >= t[:-1]).all()) and (gmax is None or t[0] >= gmax)):
            frame = pl.DataFrame({"pid": pid, "ts": t})
            prev_max = pl.col("ts").cum_max().shift(1).over("pid")
            if self.pid_max:
                carried = pl.col("pid").replace_strict(
                    self.pid_max, default=None, return_dtype=pl.Int64
                )
                prev_max = pl.max_horizontal(prev_max, carried)
            back = frame.select(back=(pl.col("ts") < prev_max).fill_null(False))["back"]
            back = back.to_numpy()
            if back.any():
                for i in np.flatnonzero(back)[: 1 if self.strict else None]:
                    k = keep[i]
                    problems.append(
                        (
                            int(lineno[i]),
                            f"a timestamp not earlier than the previous line of pid {pid[i]}",
                            blk.text(ls[k], le[k]),
                        )
                    )
                good = ~back
                keep, kind, t = keep[good], kind[good], t[good]
                pid, lineno = pid[good], lineno[good]
                m = keep.size
        if m == 0:
            self._skip_or_raise(problems)
            return None
        latest = pl.DataFrame({"pid": pid, "ts": t}).group_by("pid").agg(pl.col("ts").max())
        for p, tmax in zip(latest["pid"].to_list(), latest["ts"].to_list(), strict=True):
            old = self.pid_max.get(p)
            self.pid_max[p] = tmax if old is None or tmax > old else old
        tmax = int(t.max())
        self.t_gmax = tmax if gmax is None else max(gmax, tmax)
        self.t_max = tmax if self.t_max is None else max(self.t_max, tmax)
        if self.first_pid is None:
            self.first_pid = int(pid[0])
        self.signals += int((kind == _SIG).sum())
        self.exits += int((kind == _EXIT).sum())
        exited = np.unique(pid[kind == _EXIT]).tolist()

        gid = gid_all[keep]

        # ---- the first argument: an fd with its -y path
        fd = np.zeros(m, dtype=np.int64)
        fdok = np.zeros(m, dtype=bool)
        ann_st = np.zeros(m, dtype=np.int64)
        ann_len = np.zeros(m, dtype=np.int64)
        has_ann = np.zeros(m, dtype=bool)
        fi = np.flatnonzero(((kind == _CALL) | (kind == _UNF)) & (gid >= 0))
        fi = fi[self.g_shape[gid[fi]] == _FD_FIRST]
        if fi.size:
            fk = keep[fi]
            a0 = after[fk] + 1
            neg = buf[a0] == 45
            fv, fl = blk.uint(a0 + neg)
            fdok[fi] = (fl > 0) & (fl < 12)
            fd[fi] = np.where(neg, -fv, fv)
            st = a0 + neg + fl + 1
            ai = np.flatnonzero(fdok[fi] & (buf[st - 1] == 60))
            if ai.size:
                st = st[ai]
                off = blk.find(st, 62, limit=4096)  # the closing '>'
                found = off >= 0
                close = st + np.maximum(off, 0)
                for _ in range(4):  # '>' inside: -yy "<char 1:3>>", sockets "1.2:3->4.5:6"
                    inner = np.flatnonzero(found & ~_FOLLOW[buf[close + 1]])
                    if inner.size == 0:
                        break
                    nxt = blk.find(close[inner] + 1, 62, limit=4096)
                    close[inner] = np.where(nxt >= 0, close[inner] + 1 + nxt, close[inner])
                    found[inner[nxt < 0]] = False
                valid = found & (close < le[fk[ai]])
                has_ann[fi[ai]] = valid
                ann_st[fi[ai]] = st
                ann_len[fi[ai]] = close - st

        # ---- argument text, for the calls that need more than the first fd
        flags = np.where(gid >= 0, self.g_flags[np.maximum(gid, 0)], 0)
        need = (kind == _UNF) | (kind == _RES) | ((kind == _CALL) & ((flags & _F_ARGS) != 0))
        kk = keep
        a_st = np.where(kind == _RES, after[kk] + 9, after[kk] + 1)
        unf_end = le[kk] - 16
        unf_end = unf_end - (buf[np.maximum(unf_end - 1, 0)] == 32)
        a_end = np.where(kind == _UNF, unf_end, aend[kk])
        need &= a_end >= a_st

        # ---- pair <unfinished ...> with <... resumed>: one record per completed call
        k = {
            "lineno": lineno, "pid": pid, "ts": t, "kind": kind, "gid": gid, "fd": fd,
            "fdok": fdok, "ann_st": ann_st, "ann_len": ann_len, "has_ann": has_ann,
            "a_st": a_st, "a_len": a_end - a_st, "need": need, "ls": ls[kk], "le": le[kk],
        }  # fmt: skip
        old = self.pend
        rec, start = self._pair(blk, k, problems)
        self._skip_or_raise(problems)
        if rec.size == 0:
            self._drop_exited(exited)
            return None
        r = self._gather(blk, k, rec, start, old)
        r.update(
            ret=ret[kk][rec],
            retok=retok[kk][rec],
            has_err=has_err[kk][rec],
            err=blk.strings(err_st[kk][rec], err_len[kk][rec], has_err[kk][rec]),
            rpath=blk.strings(rp_st[kk][rec], rp_len[kk][rec], has_rp[kk][rec]),
            has_rpath=has_rp[kk][rec],
            dur=dur[kk][rec],
        )
        return self._records(r, exited)

    def _names(
        self, blk: _Block, kind: np.ndarray, start: np.ndarray, length: np.ndarray
    ) -> np.ndarray:
        """Global syscall-name ids of call lines (-1 elsewhere); lines whose
        name is not a syscall name become bad lines."""
        gid = np.full(kind.size, -1, dtype=np.int32)
        ci = np.flatnonzero((kind == _CALL) | (kind == _UNF) | (kind == _RES))
        if ci.size == 0:
            return gid
        st, ln = start[ci], length[ci]
        h = ln.astype(np.uint64) * _U64(0x9E3779B97F4A7C15)
        for k in range(0, min(int(ln.max()), 64), 8):
            w = blk.load(st + k) & _low_mask(ln - k)
            h = (h ^ w) * _U64(0x100000001B3)
        from pandas import factorize

        codes, _ = factorize(h)
        first = np.flatnonzero(np.diff(np.maximum.accumulate(codes), prepend=-1) > 0)
        names = [blk.text(st[i], st[i] + ln[i]) for i in first]
        l2g = np.array([self._gid(nm) if _NAME_RE.match(nm) else -1 for nm in names])
        gid[ci] = l2g[codes]
        kind[ci[gid[ci] < 0]] = _BAD
        return gid

    def _assign_pids(self, pid: np.ndarray, kind: np.ndarray) -> np.ndarray:
        """Fill the pid of unprefixed lines (see the module's limits)."""
        if self.fmt["prefix"] == "bare":
            return pid
        leader = self.fmt["leader"] if self.fmt["leader"] is not None else 0
        unp = pid < 0
        m = pid.size
        if unp.any():
            alive = np.full(m, self.leader_alive)
            if self.leader_alive:
                ex = np.flatnonzero((kind == _EXIT) & (unp | (pid == leader)))
                if ex.size:
                    alive[ex[0] + 1 :] = False
                    self.leader_alive = False
            idx = np.where(unp, -1, np.arange(m))
            np.maximum.accumulate(idx, out=idx)
            before = self.last_pid if self.last_pid is not None else leader
            ffill = np.where(idx >= 0, pid[np.maximum(idx, 0)], before)
            filled = np.where(unp, np.where(alive, leader, ffill), pid)
        else:
            if self.leader_alive and ((kind == _EXIT) & (pid == leader)).any():
                self.leader_alive = False
            filled = pid
        prefixed = np.flatnonzero(~unp)
        if prefixed.size:
            self.last_pid = int(pid[prefixed[-1]])
        return filled

    def _pair(
        self, blk: _Block, k: dict[str, Any], problems: list
    ) -> tuple[np.ndarray, np.ndarray]:
        """Records (completed calls) as (end line, start line) row indices.

        A start index below 0 names a call still unfinished at the end of the
        previous batch (``-1 - i`` for ``self.pend`` entry ``i``).
        """
        kind, pid, lineno, gid = k["kind"], k["pid"], k["lineno"], k["gid"]
        m = kind.size
        calls = kind == _CALL
        pend = self.pend
        q = 0 if pend is None else pend["pid"].size
        split = (kind == _UNF) | (kind == _RES)
        if q == 0 and not split.any():
            rec = np.flatnonzero(calls)
            return rec, rec.copy()
        sidx = np.flatnonzero(split | (kind == _EXIT))
        s_pid, s_line, s_gid = pid[sidx], lineno[sidx], gid[sidx]
        s_kind, s_src = kind[sidx], sidx.astype(np.int64)
        if q:
            assert pend is not None
            s_pid = np.concatenate([pend["pid"], s_pid])
            s_line = np.concatenate([pend["lineno"], s_line])
            s_gid = np.concatenate([pend["gid"], s_gid])
            s_kind = np.concatenate([np.full(q, _UNF, dtype=np.int8), s_kind])
            s_src = np.concatenate([-1 - np.arange(q), s_src])
        order = np.lexsort((s_line, s_pid))
        s_pid, s_line, s_gid, s_kind, s_src = (
            x[order] for x in (s_pid, s_line, s_gid, s_kind, s_src)
        )
        ns = s_pid.size
        same = np.zeros(ns + 1, dtype=bool)
        same[1:-1] = s_pid[1:] == s_pid[:-1]
        p_kind = np.full(ns, -1, dtype=np.int8)
        p_kind[1:] = s_kind[:-1]
        p_kind[~same[:-1]] = -1
        p_gid = np.full(ns, -2, dtype=np.int64)
        p_gid[1:] = s_gid[:-1]
        n_kind = np.full(ns, -1, dtype=np.int8)
        n_kind[:-1] = s_kind[1:]
        n_kind[~same[1:]] = -1
        n_gid = np.full(ns, -2, dtype=np.int64)
        n_gid[:-1] = s_gid[1:]
        is_unf, is_res = s_kind == _UNF, s_kind == _RES
        res_ok = is_res & (p_kind == _UNF) & (p_gid == s_gid)
        paired = is_unf & (n_kind == _RES) & (n_gid == s_gid)
        ended = is_unf & (n_kind == _EXIT)
        pending = is_unf & (n_kind == -1)
        bad = np.flatnonzero(is_res & ~res_ok)
        if self.strict and bad.size:
            bad = bad[np.argmin(s_line[bad])][None]
        for j in bad:
            name = self.names[s_gid[j]]
            problems.append(
                (
                    int(s_line[j]),
                    f"an earlier '{name}(... <unfinished ...>' line of pid {s_pid[j]}",
                    blk.text(k["ls"][s_src[j]], k["le"][s_src[j]]),
                )
            )
        bad = np.flatnonzero(is_unf & ~paired & ~ended & ~pending)
        if self.strict:
            bad = bad[n_kind[bad] != _RES]  # a mismatched resumed line is reported itself
            if bad.size:
                bad = bad[np.argmin(s_line[bad + 1])][None]
        for j in bad:
            expected = f"'<... {self.names[s_gid[j]]} resumed>' for pid {s_pid[j]}"
            if self.strict:
                nxt = s_src[j + 1]
                problems.append(
                    (int(s_line[j + 1]), expected, blk.text(k["ls"][nxt], k["le"][nxt]))
                )
            else:
                problems.append((int(s_line[j]), expected + " (unfinished call dropped)", None))
        starts = np.arange(m, dtype=np.int64)
        is_rec = calls.copy()
        ok_r = np.flatnonzero(res_ok)
        starts[s_src[ok_r]] = s_src[ok_r - 1]
        is_rec[s_src[ok_r]] = True
        en = np.flatnonzero(ended)
        starts[s_src[en + 1]] = s_src[en]
        is_rec[s_src[en + 1]] = True
        self.pairs += ok_r.size
        self.unresolved += en.size
        pj = np.flatnonzero(pending)
        self.pend = self._pending(blk, k, s_src[pj], pend) if pj.size else None
        rec = np.flatnonzero(is_rec)
        return rec, starts[rec]

    @staticmethod
    def _take(cur: np.ndarray, old: np.ndarray | None, idx: np.ndarray) -> np.ndarray:
        """``cur[idx]``, where an index below 0 reads ``old[-1 - idx]``."""
        out = cur[np.maximum(idx, 0)]
        neg = np.flatnonzero(idx < 0)
        if neg.size:
            assert old is not None
            out[neg] = old[-1 - idx[neg]]
        return out

    def _pending(
        self, blk: _Block, k: dict[str, Any], src: np.ndarray, old: dict[str, Any] | None
    ) -> dict[str, Any]:
        """Unfinished calls carried to the next batch, their text copied out."""
        out: dict[str, Any] = {}
        for name in ("pid", "lineno", "ts", "gid", "fd", "fdok"):
            out[name] = self._take(k[name], None if old is None else old[name], src)
        ann: list[str | None] = []
        args: list[str | None] = []
        for s in src.tolist():
            if s < 0:
                assert old is not None
                ann.append(old["ann"][-1 - s])
                args.append(old["args"][-1 - s])
            else:
                a0, al = int(k["ann_st"][s]), int(k["ann_len"][s])
                ann.append(blk.text(a0, a0 + al) if k["has_ann"][s] else None)
                g0, gl = int(k["a_st"][s]), int(k["a_len"][s])
                args.append(blk.text(g0, g0 + gl) if k["need"][s] else None)
        out["ann"], out["args"] = ann, args
        return out

    def _gather(
        self,
        blk: _Block,
        k: dict[str, Any],
        rec: np.ndarray,
        start: np.ndarray,
        old: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """Per-record fields: start side from the start line, the rest from ``rec``."""

        def take(name: str) -> np.ndarray:
            return self._take(k[name], None if old is None else old[name], start)

        here = start >= 0
        st = np.maximum(start, 0)
        gid = take("gid")
        r: dict[str, Any] = {
            "pid": k["pid"][rec],
            "seq": k["lineno"][rec],
            "ts": take("ts"),
            "gid": gid,
            "fd": take("fd"),
            "fdok": take("fdok"),
        }
        has_ann = k["has_ann"][st] & here
        ann = pl.Series(blk.strings(k["ann_st"][st], k["ann_len"][st], has_ann), dtype=pl.String)
        away = np.flatnonzero(~here)
        if away.size:
            assert old is not None
            values = [old["ann"][-1 - s] for s in start[away]]
            ann = ann.scatter(away, pl.Series(values, dtype=pl.String))
            has_ann[away] = [v is not None for v in values]
        r["ann"], r["has_ann"] = ann, has_ann
        # argument text of the calls that need it: start part + resumed part
        ai = np.flatnonzero((self.g_flags[gid] & _F_ARGS) != 0)
        r["ai"] = ai
        if ai.size:
            sa, ra = st[ai], rec[ai]
            first = pl.Series(
                blk.strings(k["a_st"][sa], k["a_len"][sa], k["need"][sa] & here[ai]),
                dtype=pl.String,
            )
            far = np.flatnonzero(~here[ai])
            if far.size:
                assert old is not None
                values = [old["args"][-1 - s] for s in start[ai[far]]]
                first = first.scatter(far, pl.Series(values, dtype=pl.String))
            resumed = k["kind"][ra] == _RES
            rest = pl.Series(
                blk.strings(k["a_st"][ra], k["a_len"][ra], resumed & k["need"][ra]),
                dtype=pl.String,
            )
            r["args"] = first + rest.fill_null("")
        else:
            r["args"] = pl.Series([], dtype=pl.String)
        return r

    # ------------------------------------------------------------ records -> ops
    def _records(self, r: dict[str, Any], exited: list[int]) -> Parsed:
        """Contract rows from call records (numpy arrays, one entry per call)."""
        assert self.t0 is not None
        n = r["pid"].size
        self.calls += n
        gid = r["gid"]
        op, shape = self.g_op[gid], self.g_shape[gid]
        poskind, flags = self.g_pos[gid], self.g_flags[gid]
        ok = r["retok"] & ~r["has_err"]
        a = self._arguments(r, shape, poskind, flags, ok)
        dfid, dvalid, rfid, rvalid = self._fids(r, a)
        # ---- where each (pid, fd) stands
        ret = r["ret"]
        is_open = ((flags & _F_OPEN) != 0) & ok
        is_dup = (((flags & _F_DUP) != 0) | a["dupfd"]) & ok
        is_new = is_open | is_dup | (ok & r["has_rpath"])  # socket, eventfd... with -y
        is_close = (flags & _F_CLOSE) != 0
        llseek = poskind == _POS_LLSEEK
        seek = (poskind == _POS_SEEK) | llseek
        seek_pos = np.where(llseek, a["llpos"], ret)
        seek_ok = seek & ok & (~llseek | a["llpos_ok"])
        by_fd = (shape == _FD_FIRST) & r["fdok"]
        by_mmap = (shape == _MMAP) & a["mfd_ok"]
        key = np.select(
            [is_new, by_fd, a["dirfd_ok"], by_mmap], [ret, r["fd"], a["dirfd"], a["mfd"]], 0
        )
        key_ok = is_new | by_fd | a["dirfd_ok"] | by_mmap
        advancing = (poskind == _POS_ADVANCE) | (
            (poskind == _POS_EXPLICIT2) & a["off_ok"] & (a["off"] == -1)
        )
        ev = {
            "path_ev": is_new | is_close,
            "ev_fid": np.where(rvalid, rfid, dfid),
            "ev_ok": is_new & (rvalid | dvalid),
            "ev_append": is_open & a["append"],
            "base_ev": is_new | is_close | ((flags & _F_CLOBBER) != 0) | seek_ok,
            "adv": np.where(advancing & ok & (ret > 0), ret, 0),
            "advancing": advancing,
            "is_write": op == _OP_CODE["write"],
        }
        fresh = is_open & ~ev["ev_append"]
        ev["base"] = np.where(seek_ok, seek_pos, 0)
        ev["base_ok"] = fresh | seek_ok
        sel = np.flatnonzero(key_ok & (advancing | ev["base_ev"] | ev["path_ev"] | ~dvalid))
        lk, lk_ok, pos, pos_ok, append_w = self._positions(r["pid"], key, ev, sel, exited)
        # ---- the ops table
        fid = np.where(dvalid, dfid, lk)
        fid_ok = dvalid | lk_ok
        opc = np.where(op >= 0, op, np.where(fid_ok, _OTHER, -1))
        io = np.flatnonzero(opc >= 0)
        self.non_io += np.bincount(gid[opc < 0], minlength=len(self.names))
        explicit = (poskind == _POS_EXPLICIT) | (poskind == _POS_EXPLICIT2)
        offset = np.select([seek, advancing, explicit], [seek_pos, pos, a["off"]], 0)
        offset_ok = np.select(
            [seek, advancing, explicit], [seek_ok, ~append_w & pos_ok, a["off_ok"]], False
        )
        rw = (opc == _OP_CODE["read"]) | (opc == _OP_CODE["write"])
        t_start = (r["ts"][io] - self.t0) / 1e9  # numpy: the same bits whatever the chunking
        dur = r["dur"][io]
        self.io_calls += io.size
        table = pa.table(
            {
                "job_id": pa.array(np.zeros(io.size, dtype=np.int64)),
                "rank": pa.array(r["pid"][io].astype(np.int32)),
                "file_id": _nullable(fid[io], fid_ok[io]),
                "op": pa.DictionaryArray.from_arrays(
                    pa.array(opc[io].astype(np.int8)), pa.array(OPS)
                ).cast(pa.string()),
                "offset": _nullable(offset[io], offset_ok[io]),
                "size": _nullable(ret[io], (rw & ok)[io]),
                "t_start": pa.array(t_start),
                "t_end": pa.array(t_start + np.where(np.isnan(dur), 0.0, dur)),
                "call": pa.DictionaryArray.from_arrays(
                    pa.array(gid[io]), pa.array(self.names)
                ).cast(pa.string()),
                "error": r["err"].cast(pa.string()).take(pa.array(io)),
            }
        )
        tables: dict[str, pa.Table] = {"ops": table}
        if self.new_files:
            fids, paths = zip(*self.new_files, strict=True)
            tables["files"] = pa.table(
                {
                    "job_id": pa.array(np.zeros(len(fids), dtype=np.int64)),
                    "file_id": pa.array(fids, pa.int64()),
                    "path": pa.array(paths, pa.string()),
                }
            )
            self.new_files = []
        return Parsed(tables=tables, meta=self._meta(), skips=self.skips)

    def _arguments(
        self,
        r: dict[str, Any],
        shape: np.ndarray,
        poskind: np.ndarray,
        flags: np.ndarray,
        ok: np.ndarray,
    ) -> dict[str, Any]:
        """What the argument text of the few calls that need it says."""
        n = shape.size
        a: dict[str, Any] = {
            name: np.zeros(n, dtype=np.int64) for name in ("dirfd", "mfd", "off", "llpos")
        }
        for name in ("dirfd_ok", "mfd_ok", "off_ok", "llpos_ok", "dupfd", "append"):
            a[name] = np.zeros(n, dtype=bool)
        ai = r["ai"]
        args = pl.col("args")
        sub = pl.DataFrame(
            {
                "i": ai,
                "args": r["args"],
                "shape": shape[ai],
                "poskind": poskind[ai],
                "flags": flags[ai],
                "ok": ok[ai],
                "ret": r["ret"][ai],
                "ann": r["ann"].gather(ai),
                "rpath": pl.Series(r["rpath"], dtype=pl.String).gather(ai),
            }
        )
        sh, pk, fl = pl.col("shape"), pl.col("poskind"), pl.col("flags")
        sub = sub.with_columns(
            pl.when(sh.is_in((_PATH_FIRST, _AT_PATH)))
            .then(args)
            .str.extract_groups(_P_PATHARG)
            .alias("p"),
            gann=pl.when(sh.is_in((0, _MMAP)) & args.str.contains("<", literal=True))
            .then(args)
            .str.extract(_P_ANYFD, 1),
            # an fd beyond int64 names no open file: no fd, as for offsets below
            mfd=pl.when(sh == _MMAP)
            .then(args)
            .str.extract(_P_MMAPFD, 1)
            .cast(pl.Int64, strict=False),
            off=pl.coalesce(
                pl.when(pk == _POS_EXPLICIT).then(args).str.extract(_P_OFF, 1),
                pl.when(pk == _POS_EXPLICIT2).then(args).str.extract(_P_OFF2, 1),
            ).cast(pl.Int64, strict=False),
            llpos=pl.when(pk == _POS_LLSEEK)
            .then(args)
            .str.extract(_P_LLSEEK, 1)
            .cast(pl.Int64, strict=False),
            dupfd=((fl & _F_FCNTL) != 0) & args.str.contains("F_DUPFD", literal=True),
            append=((fl & _F_OPEN) != 0) & args.str.contains("O_APPEND", literal=True),
        ).unnest("p")
        sp, dirfd = pl.col("sp"), pl.col("dirfd")
        sub = sub.with_columns(
            dirfd_fd=pl.when(sp.is_null() | (sp == "")).then(dirfd.cast(pl.Int64, strict=False))
        )
        idx = sub["i"].to_numpy().astype(np.int64)
        pairs = (("dirfd", "dirfd_fd"), ("mfd", "mfd"), ("off", "off"), ("llpos", "llpos"))
        for name, col in pairs:
            values = sub[col]
            a[name][idx] = values.fill_null(0).to_numpy()
            a[name + "_ok"][idx] = values.is_not_null().to_numpy()
        for name in ("dupfd", "append"):
            a[name][idx] = sub[name].fill_null(False).to_numpy()
        a["sub"] = sub
        if self.exe is None or not self.exe[0]:
            ex = sub.filter((fl & _F_EXEC) != 0)
            for ret_v, ok_v, text in ex.select("ret", "ok", "args").iter_rows():
                if ok_v and ret_v == 0:
                    self.exe = (True, text)
                    break
                if self.exe is None:
                    self.exe = (False, text)
        return a

    def _fids(self, r: dict[str, Any], a: dict[str, Any]) -> tuple[np.ndarray, ...]:
        """File ids: of the file a call names, and of the fd it returns."""
        n = r["pid"].size
        sub = a["sub"]
        # most calls name their file by their first fd's -y path: categorical codes
        ann = r["ann"].cast(pl.Categorical)
        has_a = r["has_ann"]
        acode = ann.to_physical().fill_null(0).to_numpy().astype(np.int64)
        firsts = (
            pl.DataFrame({"c": acode[has_a], "pos": np.flatnonzero(has_a) * 2})
            .group_by("c")
            .agg(pl.col("pos").min())
        )
        # the others: path arguments, returned fds, fds deeper in the arguments
        ok, flags = pl.col("ok"), pl.col("flags")
        dirfd, dann, sp, rpath = pl.col("dirfd"), pl.col("dann"), pl.col("sp"), pl.col("rpath")
        if sub["dann"].null_count() < sub.height or self.cwd is not None:
            # the working directory -y shows for AT_FDCWD, latest first
            cwd = pl.when(dirfd == "AT_FDCWD").then(dann).forward_fill()
            if self.cwd is not None:
                cwd = cwd.fill_null(self.cwd)
            sub = sub.with_columns(cwd=cwd)
            if sub.height and sub["cwd"][-1] is not None:
                self.cwd = sub["cwd"][-1]
        else:
            sub = sub.with_columns(cwd=pl.lit(None, pl.String))
        has_sp = sp.is_not_null() & (sp != "")
        base = (
            pl.when(sp.str.starts_with("/"))
            .then(pl.lit(""))
            .when(dirfd.is_null() | (dirfd == "AT_FDCWD"))
            .then(pl.col("cwd"))
            .otherwise(dann)
            .fill_null("")
        )
        # annotation keys are the raw text; path-argument keys "base\0path"
        key = (
            pl.when(((flags & _F_OPEN) != 0) & ok & rpath.is_not_null())
            .then(rpath)
            .when(has_sp)
            .then(base + pl.lit("\x00") + sp)
            .when(dann.is_not_null())
            .then(dann)
            .when(pl.col("gann").is_not_null())
            .then(pl.col("gann"))
            .when(ok)
            .then(rpath)
        )
        sub = sub.select(
            "i",
            "ann",
            pk=pl.when(pl.col("ann").is_null()).then(key),
            rk=pl.when(ok).then(rpath),
        )
        i2 = sub["i"].cast(pl.Int64) * 2
        other = pl.concat(
            [
                pl.DataFrame({"k": sub["pk"], "pos": i2}),
                pl.DataFrame(
                    {
                        "k": sub.select(
                            pl.when(pl.col("rk") != pl.coalesce("pk", "ann")).then(pl.col("rk"))
                        ).to_series(),
                        "pos": i2 + 1,
                    }
                ),
            ]
        ).drop_nulls("k")
        keyed = [
            (int(p), None, k) for k, p in other.group_by("k").agg(pl.col("pos").min()).iter_rows()
        ]
        if firsts.height:
            distinct = ann.drop_nulls().unique()
            names = dict(
                zip(
                    distinct.to_physical().to_list(),
                    distinct.cast(pl.String).to_list(),
                    strict=True,
                )
            )
            keyed += [(int(p), c, names[c]) for c, p in firsts.iter_rows()]
        keyed.sort(key=lambda e: e[0])
        batch_map: dict[str, int] = {}
        code2fid = np.zeros(int(acode.max(initial=0)) + 1, dtype=np.int64)
        for _pos, code, k in keyed:
            fid = self.key2fid.get(k)
            if fid is None:
                if "\x00" in k:
                    kbase, raw = k.split("\x00", 1)
                    path = _norm_path("s", raw, kbase or None)
                else:
                    path = _norm_path("a", k, None)
                fid = self.path2fid.get(path)
                if fid is None:
                    fid = len(self.path2fid)
                    self.path2fid[path] = fid
                    self.new_files.append((fid, path))
                if len(self.key2fid) < 1_000_000:
                    self.key2fid[k] = fid
            batch_map[k] = fid
            if code is not None:
                code2fid[code] = fid
        dfid = np.where(has_a, code2fid[acode], 0)
        dvalid = has_a.copy()
        rfid = np.zeros(n, dtype=np.int64)
        rvalid = np.zeros(n, dtype=bool)
        if sub.height:
            mapped = sub.select(
                o=pl.col("pk").replace_strict(batch_map, default=None, return_dtype=pl.Int64),
                r=pl.col("rk").replace_strict(batch_map, default=None, return_dtype=pl.Int64),
            )
            ii = sub["i"].to_numpy().astype(np.int64)
            o, rr = mapped["o"], mapped["r"]
            o_ok = o.is_not_null().to_numpy() & ~has_a[ii]
            dfid[ii] = np.where(o_ok, o.fill_null(0).to_numpy(), dfid[ii])
            dvalid[ii] |= o_ok
            rfid[ii] = rr.fill_null(0).to_numpy()
            rvalid[ii] = rr.is_not_null().to_numpy()
        return dfid, dvalid, rfid, rvalid

    def _positions(
        self,
        pid: np.ndarray,
        key: np.ndarray,
        ev: dict[str, np.ndarray],
        sel: np.ndarray,
        exited: list[int],
    ) -> tuple[np.ndarray, ...]:
        """Each (pid, fd)'s file and position before each call: a stable sort by
        (pid, fd), then segment starts, forward fills and cumulative sums."""
        n = pid.size
        st = self.fds
        q = 0 if st is None else st["pid"].size
        cols = ("path_ev", "ev_fid", "ev_ok", "ev_append", "base_ev", "base", "base_ok", "adv")
        c = {name: ev[name][sel] for name in (*cols, "advancing", "is_write")}
        c["pid"], c["key"] = pid[sel], key[sel]
        rid = sel.astype(np.int64)
        if q:
            assert st is not None
            for name in ("pid", "key", "ev_fid", "ev_ok", "ev_append", "base", "base_ok"):
                c[name] = np.concatenate([st[name], c[name]])
            for name, value in (("path_ev", True), ("base_ev", True)):
                c[name] = np.concatenate([np.full(q, value), c[name]])
            for name in ("adv",):
                c[name] = np.concatenate([np.zeros(q, dtype=np.int64), c[name]])
            for name in ("advancing", "is_write"):
                c[name] = np.concatenate([np.zeros(q, dtype=bool), c[name]])
            rid = np.concatenate([np.full(q, -1, dtype=np.int64), rid])
        lk = np.zeros(n, dtype=np.int64)
        lk_ok = np.zeros(n, dtype=bool)
        pos = np.zeros(n, dtype=np.int64)
        pos_ok = np.zeros(n, dtype=bool)
        append_w = np.zeros(n, dtype=bool)
        size = rid.size
        if size == 0:
            self._drop_exited(exited)
            return lk, lk_ok, pos, pos_ok, append_w
        gk = c["pid"] * (1 << 31) + (c["key"] & 0x7FFFFFFF)
        order = np.argsort(gk, kind="stable")
        gk = gk[order]
        c = {name: v[order] for name, v in c.items()}
        rid = rid[order]
        i = np.arange(size)
        gs = np.ones(size, dtype=bool)
        gs[1:] = gk[1:] != gk[:-1]

        def after_event(flag: np.ndarray) -> np.ndarray:
            """Segment starts: group starts, and rows right after an event."""
            start = gs.copy()
            start[1:] |= flag[:-1]
            return np.maximum.accumulate(np.where(start, i, 0))

        def prev(v: np.ndarray, empty: Any) -> np.ndarray:
            out = np.empty_like(v)
            out[0] = empty
            out[1:] = v[:-1]
            out[gs] = empty
            return out

        # file segments: open/close/dup (and carried state) set the fd's file
        pidx = after_event(c["path_ev"])
        f_lk = prev(c["ev_fid"], 0)[pidx]
        f_ok = prev(c["ev_ok"], False)[pidx]
        f_app = prev(c["ev_append"], False)[pidx]
        # position segments: open, lseek, close, dup, and writes to O_APPEND fds
        f_aw = c["advancing"] & c["is_write"] & f_app
        reset = c["base_ev"] | f_aw
        ridx = after_event(reset)
        adv = c["adv"]
        before = np.cumsum(adv) - adv
        f_pos = prev(c["base"], 0)[ridx] + before - before[ridx]
        f_pos_ok = prev(c["base_ok"] & ~f_aw, False)[ridx]
        # what each (pid, fd) is left with, for the next chunk
        last = np.ones(size, dtype=bool)
        last[:-1] = gs[1:]
        path_ev = c["path_ev"]
        state = {
            "pid": c["pid"],
            "key": c["key"],
            "ev_fid": np.where(path_ev, c["ev_fid"], f_lk),
            "ev_ok": np.where(path_ev, c["ev_ok"], f_ok),
            "ev_append": np.where(path_ev, c["ev_append"], f_app),
            "base": np.where(reset, c["base"], f_pos + adv),
            "base_ok": np.where(reset, c["base_ok"] & ~f_aw, f_pos_ok),
        }
        keep = last & (state["ev_ok"] | state["base_ok"] | state["ev_append"])
        if exited:
            keep &= ~np.isin(c["pid"], exited)
        self.fds = {name: v[keep] for name, v in state.items()} if keep.any() else None
        real = rid >= 0
        rows = rid[real]
        lk[rows], lk_ok[rows] = f_lk[real], f_ok[real]
        pos[rows], pos_ok[rows] = f_pos[real], f_pos_ok[real]
        append_w[rows] = f_aw[real]
        return lk, lk_ok, pos, pos_ok, append_w

    def _drop_exited(self, exited: list[int]) -> None:
        if exited and self.fds is not None:
            keep = ~np.isin(self.fds["pid"], exited)
            self.fds = {k: v[keep] for k, v in self.fds.items()} if keep.any() else None

    # ------------------------------------------------------------ the end
    def _finish(self) -> Parsed:
        tables: dict[str, pa.Table] = {}
        pend = self.pend
        if pend is not None:
            # calls still unfinished when the trace ended (strace was stopped)
            self.pend = None
            order = np.argsort(pend["lineno"], kind="stable")
            q = order.size
            gid = pend["gid"][order]
            ann = [pend["ann"][j] for j in order]
            ai = np.flatnonzero((self.g_flags[gid] & _F_ARGS) != 0)
            r = {
                "pid": pend["pid"][order],
                "seq": pend["lineno"][order],
                "ts": pend["ts"][order],
                "gid": gid,
                "fd": pend["fd"][order],
                "fdok": pend["fdok"][order],
                "ann": pl.Series(ann, dtype=pl.String),
                "has_ann": np.array([v is not None for v in ann], dtype=bool),
                "ai": ai,
                "args": pl.Series([pend["args"][order[j]] for j in ai], dtype=pl.String),
                "ret": np.zeros(q, dtype=np.int64),
                "retok": np.zeros(q, dtype=bool),
                "has_err": np.zeros(q, dtype=bool),
                "err": pa.nulls(q, pa.string()),
                "rpath": pa.nulls(q, pa.string()),
                "has_rpath": np.zeros(q, dtype=bool),
                "dur": np.full(q, np.nan),
            }
            self.unresolved += q
            tables.update(self._records(r, []).tables)
        tables["jobs"] = self._jobs()
        warnings = []
        if self.fmt and not self.fmt["durations"]:
            warnings.append("strace ran without -T: t_end = t_start")
        if self.fmt and not self.fmt["fd_paths"]:
            warnings.append("strace ran without -y: the files of fds come from traced opens")
        return Parsed(tables=tables, meta=self._meta(), skips=self.skips, warnings=warnings)

    def _jobs(self) -> pa.Table:
        prog = argv = None
        if self.exe is not None:
            prog, argv = _split_exe(self.exe[1] or "")
        start_ts = end_ts = None
        runtime = None
        if self.t0 is not None and self.t_max is not None:
            runtime = (self.t_max - self.t0) / 1e9
            if self.fmt.get("clock") == "-ttt":
                epoch = _dt.datetime(1970, 1, 1)
                start_ts = epoch + _dt.timedelta(microseconds=self.t0 // 1000)
                end_ts = epoch + _dt.timedelta(microseconds=self.t_max // 1000)
        known_pid = self.fmt.get("prefix") != "none" or self.fmt.get("leader") is not None
        job_key = str(self.first_pid) if known_pid and self.first_pid is not None else None
        return pa.table(
            {
                "job_id": pa.array([0], pa.int64()),
                "job_key": pa.array([job_key], pa.string()),
                "app": pa.array([posixpath.basename(prog) if prog else None], pa.string()),
                "exe": pa.array([argv], pa.string()),
                "nprocs": pa.array([len(self.pid_max) or None], pa.int32()),
                "start_ts": pa.array([start_ts], pa.timestamp("us")),
                "end_ts": pa.array([end_ts], pa.timestamp("us")),
                "runtime_s": pa.array([runtime], pa.float64()),
            }
        )

    def _meta(self) -> dict[str, Any]:
        pids = sorted(self.pid_max)
        counts = {self.names[i]: int(c) for i, c in enumerate(self.non_io) if c}
        return {
            "tool": "strace",
            "tool_version": None,
            "time_format": self.fmt.get("clock"),
            "pid_prefix": self.fmt.get("prefix"),
            "durations": self.fmt.get("durations"),
            "fd_paths": self.fmt.get("fd_paths"),
            "lines": self.lines,
            "calls": self.calls,
            "io_calls": self.io_calls,
            "non_io_calls_total": sum(counts.values()),
            "non_io_calls": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
            "signals": self.signals,
            "exits": self.exits,
            "strace_messages": self.messages,
            "unfinished_pairs": self.pairs,
            "unfinished_unresolved": self.unresolved,
            "npids": len(pids),
            "pids": pids[:1000],
            "files": len(self.path2fid),
        }


register(StraceLoader())
