"""Loader for ``strace`` output (kind ``"strace"``).

Reads what ``strace -f -tt -T -y -o FILE PROGRAM`` (or ``-ttt`` for epoch
times, ``-t``, or ``-r`` for the seconds since the previous line, summed into
times since the first; ``-r`` beside an absolute clock is stepped over) writes,
with or without ``-f`` pid prefixes (``1234  `` with ``-o``, ``[pid  1234] ``
when strace writes to stderr), with or without ``-T`` durations and ``-y`` fd
paths, and turns every system call on a file into one row of ``ops``. Output
without any timestamp is refused with the flags to record it with.

Parsing is vectorized over blocks of lines (8 MiB, at most ``chunk_rows``
lines per chunk): numpy locates and decodes the fields of every line eight
bytes at a time (unaligned uint64 loads of the block and byte-wise bit tests),
string fields become zero-copy Arrow string views, polars regexes run only on
the argument text of the few calls that need it (paths, explicit offsets),
and file positions come from a stable sort by (pid, fd) with forward fills
and cumulative sums. ``benchmarks/bench_strace.py`` measures about 900,000
lines/s on one core (2M lines), and blocks are parsed on every core (see
"Parallel blocks"). Unfinished calls, fd states, the working directory and the clock
are carried between chunks, so the result never depends on ``chunk_rows``,
the block size or the number of threads.

Parallel blocks
---------------
Large traces are parsed on every core (issue 18, item 3): the text is cut at
line boundaries into blocks, and each block goes through two passes.

1. A **scan** that depends on nothing outside the block: every line's pid
   prefix, time of day, kind (call, ``<unfinished ...>``, ``<... resumed>``,
   signal, exit, bad), syscall name (numbered in order of first appearance in
   the block), result, errno, returned ``-y`` path, first fd and its ``-y``
   path, and where its argument text lies. Blocks are scanned on
   ``threads - 1`` worker threads (numpy releases the GIL over whole
   blocks); the thread running the ordered pass scans queued blocks itself
   when the one it needs next is still being scanned (work stealing, so a
   worker on a core another process holds does not hold the parse back).
2. An **ordered pass**, one block at a time in input order, for everything
   that crosses lines: the ``-tt`` clock's midnight wrap (a time of day more
   than 12 h before the previous one is the next day), the pid of unprefixed
   lines, per-pid time order, the calls still ``<unfinished ...>`` per pid
   (joined with their ``<... resumed>`` line in whatever later block it is),
   each (pid, fd)'s file and position, the working directory, the global
   name and file ids, the job's program and counters.

The scan leaves every field that depends on earlier lines unresolved and the
ordered pass resolves them exactly as a single pass over the whole text would,
so the rows, files, job and meta are the same for any block size and number of
threads (``tests/load/test_strace_blocks.py`` checks every capture in
``data/strace`` cut into one-line blocks). The format (prefixes, clock, ``-T``,
``-y``, the first working directory and leader pid) is read from the input's
first 64 KiB before any block is parsed. At most ``threads + 1`` blocks are
in flight, so memory is bounded by a few blocks (8 MiB of text each) whatever
the input's size. A block's intermediates (numpy arrays per line, Arrow and
polars columns per call) take about ten times its text at their peak, so the
block size sets the parse's peak memory: with 8 MiB blocks the parse of 4M
lines peaked at about 290 MB and ``Store.load`` of them at 519 MB (median of 7,
504-530), against about 400 and 620 MB (611-638) with 16 MiB blocks, and two
cores parse as fast (2M lines, best of 3: 1.50 s against 1.66 s; 4 MiB: 1.86 s,
2 MiB: 2.54 s, where the fixed cost per block, mostly polars queries, starts to
show); ``bench_strace.py --rss`` measures it.
A plain, uncompressed file is read straight into the scanner's buffers
(``_read``), normalized as :func:`~iochar.load._text.open_text` would.

Code layout
-----------
- this module: :class:`StraceLoader` (sniffing, the entry point) and
  :data:`CALL_OPS`;
- ``_syscalls``: what each call means here (its op, where it names its file,
  how it moves the file position);
- ``_parser``: ``_Parser``, one parse: lines -> call records -> rows;
- ``_block``: ``_Block``, the scanner reading a block of lines eight bytes at
  a time;
- ``_read``: plain files read into zero-padded block buffers;
- ``_steal``: ``Scans``, blocks scanned on worker threads, taken in order.

Call mapping
------------
=====================================================================  ========
strace call                                                            ``op``
=====================================================================  ========
read, pread64, pread, readv, preadv, preadv2                           read
write, pwrite64, pwrite, writev, pwritev, pwritev2                     write
copy_file_range, splice, sendfile, sendfile64, tee (two rows)          read and
                                                                       write
open, openat, openat2, creat                                           open
close                                                                  close
lseek, _llseek                                                         seek
fsync, fdatasync, sync_file_range, sync_file_range2                    sync
stat, lstat, fstat, newfstatat, statx, access, faccessat(2), ...64     stat
any other call on an fd shown as ``N<path>`` (``-y``), on a path       other
argument (unlink, rename, mkdir, execve, ...), on a known fd
(ftruncate, fallocate, getdents64, fcntl, mmap of a file, ...) or
returning one (socket, eventfd, dup2, ... with ``-y``)
calls on no file at all (brk, futex, clone, anonymous mmap, ...)       no row
=====================================================================  ========

Calls that make no row are counted by name in ``meta["non_io_calls"]``.

Bytes that move without read/write (man 2 copy_file_range, sendfile, splice,
tee): a transfer between two fds is **two rows**, a ``read`` on the in-fd's
file and a ``write`` on the out-fd's file, each with the returned byte count
as ``size`` (:data:`TRANSFER_OPS` gives the op of the first and the second fd
argument: sendfile's first fd is its out-fd). A side whose offset pointer is
``NULL`` (or that has none: sendfile's out-fd, tee's pipes) moves at its fd's
position and advances it, like read/write; a side with an explicit offset,
which strace prints as ``[N]`` before the call (sendfile: ``[N] => [M]``,
before => after), moves at N and leaves the fd's position alone, like pread.
A pipe or socket end is a file named as ``-y`` shows it (``pipe:[N]``), as
for read() and write() on it. A failed call moves nothing: ``size`` NULL and
``error`` set, as for read/write. preadv2/pwritev2 are preadv/pwritev; their
offset -1 means the fd's position (man 2 preadv2).

Metadata calls are ``other`` rows (``stat``/``sync`` where they are that)
with ``call`` set and the file they name: ``ftruncate``, ``fallocate`` (fd),
``truncate``, ``unlink``, ``unlinkat``, ``rename``... (path). Calls naming two
paths (rename, renameat, renameat2, link, linkat) are **two rows**, the old
path's then the new path's, so write-temp-then-rename checkpoints show which
file the written one became.

The two rows of one call share ``rank``, ``t_start``, ``t_end`` and ``call``
and come out in argument order; they are one call's time, so sum durations
over calls (not rows) for time spent. ``meta["second_rows"]`` counts the
second rows (``meta["io_calls"]`` counts calls).

Memory-mapped I/O is invisible to strace: the loads and stores through a
mapping are not system calls. An ``mmap`` of a file (not ``MAP_ANONYMOUS``,
whose fd is ignored, man 2 mmap) is an ``other`` row with ``call = 'mmap'``
on the mapped file (this includes the program's own shared libraries), so
analyses can say that a file's I/O through the mapping is not in the trace.

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
            transfers: ``[N]`` or the position (see above); seek: the
            new position. NULL when unknown.
size        bytes transferred (the return value) of read/write calls   [bytes]
            and of each side of a transfer; NULL for other calls and
            for failed calls
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
  offsets until an lseek; a transfer whose arguments do not parse (one row,
  its first fd's side) makes its first fd's position unknown.
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

import os
from collections.abc import Iterator
from typing import ClassVar

from iochar.load import _kinds, register
from iochar.load._base import Parsed
from iochar.load._text import Source, open_text, source_name
from iochar.load.strace._parser import KIND, _Parser
from iochar.load.strace._read import plain_file
from iochar.load.strace._syscalls import CALL_OPS, TRANSFER_OPS

__all__ = ["StraceLoader", "CALL_OPS", "TRANSFER_OPS"]


def _cores() -> int:
    """Threads for one parse: ``IOCHAR_PARSE_THREADS`` when set (an integer >= 1), else
    the CPUs this process may run on (its affinity, so ``taskset`` pins it)."""
    env = os.environ.get("IOCHAR_PARSE_THREADS", "").strip()
    if env.isdigit() and int(env) >= 1:
        return int(env)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


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
        return _kinds.sniff_strace(head)  # the one rule, shared with sniffing by kind table

    def parse(
        self,
        src: Source,
        *,
        strict: bool = True,
        chunk_rows: int = 1_000_000,
        threads: int | None = None,
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
        threads : int, optional
            Threads the parse may use (see "Parallel blocks"); by default
            ``IOCHAR_PARSE_THREADS`` or the CPUs this process may run on.
            Results do not depend on it.

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
        if threads is None:
            threads = _cores()
        parser = _Parser(source_name(src), strict, max(1, int(chunk_rows)), threads=threads)
        if plain_file(src):  # read straight into the scanner's buffers
            with open(src, "rb", buffering=0) as fh:
                yield from parser.run(fh, plain=True)
            return
        with open_text(src) as fh:
            yield from parser.run(fh)


register(StraceLoader())
