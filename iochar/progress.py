"""A one-line progress display for long loads in a terminal (issue 18, item 5).

``iochar load`` of a 428 MB strace file used to print nothing for 5.6 s. The
store reports rows after each parsed chunk (``Store.load(progress=...)``), which
can be a second or more apart, so :class:`LoadProgress` redraws from its own
thread: the first line appears ``delay`` seconds (0.5 s) after the load starts,
then every ``interval`` seconds, and the line is erased when the load ends, so
short loads show nothing and the summary lines stay as they were.

What it shows, each when known: rows stored so far, bytes of the input read
and the file's size, the read rate [bytes/s] and rows per second, the time
since the load began and the estimated time left (ETA = bytes left / mean read
rate so far). Bytes read are not given by the store's hook; on Linux they are
the file offset of the process's own open descriptors of the input, from
``/proc/self/fdinfo/<fd>`` (proc(5): "pos: the current file offset"; the
technique of pv(1) ``-d`` and of progress(1)). When several descriptors read the
file (the store hashes it in a second thread while it parses) the slowest
reader, the lowest offset, is the one that bounds the load. An input that is
memory-mapped, compressed past the first block or not a path shows rows and
rate only.

Quiet unless the stream is a terminal (``isatty()``): piped output, log files
and notebooks (whose ``sys.stderr`` is not a tty) get no progress text at all.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from typing import TextIO

from iochar._units import fmt_bytes

__all__ = ["LoadProgress", "fd_offset_reader", "format_line"]


def fd_offset_reader(path: str | os.PathLike):
    """A callable giving how far this process has read ``path`` [bytes], or None.

    Parameters
    ----------
    path : str or os.PathLike
        The input file.

    Returns
    -------
    callable or None
        ``read() -> int | None``: the lowest ``pos`` among this process's open
        descriptors of the file (same device and inode), from
        ``/proc/self/fdinfo`` (proc(5)); None while none is open. None instead of
        a callable when ``/proc/self/fdinfo`` does not exist (not Linux) or the
        path cannot be stat'ed.
    """
    if not os.path.isdir("/proc/self/fdinfo"):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    ident = (st.st_dev, st.st_ino)

    def read() -> int | None:
        low = None
        try:
            fds = os.listdir("/proc/self/fd")
        except OSError:
            return None
        for fd in fds:
            try:
                fst = os.stat(f"/proc/self/fd/{fd}")
                if (fst.st_dev, fst.st_ino) != ident:
                    continue
                with open(f"/proc/self/fdinfo/{fd}", "rb") as fh:
                    first = fh.readline()  # b"pos:\t12345\n"
            except OSError:  # closed between the listing and the look
                continue
            if first.startswith(b"pos:"):
                pos = int(first.split()[1])
                low = pos if low is None else min(low, pos)
        return low

    return read


def _fmt_count(n: float) -> str:
    """A count with an SI suffix (``"1.2 M"``), exact below 10,000."""
    if n < 10_000:
        return f"{n:,.0f}"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.1f} {suffix}"
    return f"{n:,.0f}"


def _fmt_seconds(s: float) -> str:
    """``"42 s"``, ``"3 min 05 s"`` or ``"1 h 02 min"``."""
    s = max(0, int(round(s)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def format_line(
    name: str,
    elapsed: float,
    rows: int,
    read: int | None = None,
    size: int | None = None,
) -> str:
    """The progress line for a load so far.

    Parameters
    ----------
    name : str
        The input's name.
    elapsed : float
        Seconds since the load began [s].
    rows : int
        Rows stored so far.
    read : int, optional
        Bytes of the input read so far [bytes].
    size : int, optional
        The input's size [bytes].

    Returns
    -------
    str
        ``name: R rows, B of S (P%), X/s, N rows/s, T s, ETA E`` with the parts
        that are known; the ETA is ``(size - read) / (read / elapsed)``.
    """
    parts = [f"{_fmt_count(rows)} rows"]
    if read:
        if size:
            pct = min(100.0, 100.0 * read / size)
            parts.append(f"{fmt_bytes(read)} of {fmt_bytes(size)} ({pct:.0f}%)")
        else:
            parts.append(f"{fmt_bytes(read)} read")
        if elapsed > 0:
            parts.append(f"{fmt_bytes(read / elapsed)}/s")
    if rows and elapsed > 0:
        parts.append(f"{_fmt_count(rows / elapsed)} rows/s")
    parts.append(f"{elapsed:.1f} s")
    if read and size and elapsed > 0 and read < size:
        parts.append(f"ETA {_fmt_seconds((size - read) * elapsed / read)}")
    return f"{name}: " + ", ".join(parts)


class LoadProgress:
    """Draw one self-erasing progress line on a terminal while an input loads.

    Use as a context manager around ``Store.load(..., progress=p.update)``.

    Parameters
    ----------
    name : str
        Shown at the start of the line (the input's file name).
    path : str or os.PathLike, optional
        The input file: its size and, on Linux, bytes read (:func:`fd_offset_reader`).
    stream : text file, optional
        Where to draw; default ``sys.stderr``.
    enabled : bool, optional
        Default: ``stream.isatty()``. Nothing is written when False.
    delay : float, default 0.5
        Seconds before the first line [s]; a load shorter than this shows nothing.
    interval : float, default 0.5
        Seconds between redraws [s].
    """

    def __init__(
        self,
        name: str,
        path: str | os.PathLike | None = None,
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        delay: float = 0.5,
        interval: float = 0.5,
    ) -> None:
        self.name = name
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.delay = delay
        self.interval = interval
        self.rows = 0
        self.size: int | None = None
        self._read = None
        if enabled and path is not None:
            try:
                self.size = os.path.getsize(path)
            except OSError:
                self.size = None
            self._read = fd_offset_reader(path)
        self._t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False
        self.lines = 0  # lines drawn (for tests and callers)

    def update(self, rows: int, _total: int | None = None) -> None:
        """The store's progress hook: ``rows`` stored so far.

        Parameters
        ----------
        rows : int
            Rows stored so far.
        _total : int or None
            The store's expected total (it passes None).
        """
        self.rows = rows

    def line(self) -> str:
        """The current progress line (see :func:`format_line`).

        Returns
        -------
        str
        """
        read = self._read() if self._read is not None else None
        return format_line(self.name, time.monotonic() - self._t0, self.rows, read, self.size)

    def _width(self) -> int:
        """Columns of the terminal drawn on (a longer line would wrap and not erase)."""
        try:
            cols = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            cols = 0
        return cols if cols > 0 else shutil.get_terminal_size((100, 24)).columns

    def _draw(self) -> None:
        text = self.line()[: max(10, self._width() - 1)]
        try:
            self.stream.write(f"\r{text}\x1b[K")
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: stop drawing
            self._stop.set()
            return
        self._drawn = True
        self.lines += 1

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        while not self._stop.is_set():
            self._draw()
            self._stop.wait(self.interval)

    def __enter__(self) -> LoadProgress:
        self._t0 = time.monotonic()
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="iochar-progress", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop drawing and erase the line, if one was drawn."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._drawn:
            try:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            except (OSError, ValueError):
                pass
            self._drawn = False

    def __exit__(self, *exc: object) -> None:
        self.close()


class InputsProgress(LoadProgress):
    """The progress line of many inputs loaded at once (``Store.load_many``).

    Use as ``progress=p.update``: the store calls it as ``(inputs_done, inputs_total)``
    after each batch. The line reads ``N of M inputs (P%), R inputs/s, T s, ETA E``.

    Parameters
    ----------
    total : int
        Inputs to load.
    **kw
        As for :class:`LoadProgress` (``stream``, ``enabled``, ``delay``, ``interval``).
    """

    def __init__(self, total: int, **kw) -> None:
        super().__init__("inputs", None, **kw)
        self.total = total
        self.done = 0

    def update(self, done: int, total: int | None = None) -> None:
        """``done`` inputs of ``total`` (default: the total given) written so far."""
        self.done = done
        if total:
            self.total = total

    def line(self) -> str:
        """``N of M inputs (P%), R inputs/s, T s, ETA E`` with the parts that are known."""
        elapsed = time.monotonic() - self._t0
        parts = [f"{self.done:,} of {self.total:,} inputs"]
        if self.total:
            parts[0] += f" ({100 * self.done / self.total:.0f}%)"
        if self.done and elapsed > 0:
            rate = self.done / elapsed
            parts.append(f"{rate:,.1f} inputs/s")
            parts.append(f"{elapsed:.0f} s")
            parts.append(f"ETA {max(self.total - self.done, 0) / rate:.0f} s")
        else:
            parts.append(f"{elapsed:.0f} s")
        return ", ".join(parts)
