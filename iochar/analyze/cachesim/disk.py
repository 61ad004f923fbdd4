"""The disk model: every physical I/O's service time, and the log of what the disk moved.

Miller & Katz (1991, section 6.1): "a simple disk model ... seek times could only be
approximated ... There was no queueing at the disks, so the completion time of a
specific I/O was dependent only on the location of the I/O and how 'close' the I/O was
to the previous I/O." :class:`Disk` does that, and optionally queues (one request at a
time, first come first served), the effect the paper names as missing from its model.
"""

from __future__ import annotations

import numpy as np

from iochar.analyze.cachesim.config import DiskConfig

__all__ = ["Disk"]


class Disk:
    """Service times of physical I/Os, and their log.

    Parameters
    ----------
    config : DiskConfig
        Bandwidth, positioning, layout and queueing.

    Examples
    --------
    >>> d = Disk(DiskConfig(bandwidth_bps=1e6, position_min_s=0.01, position_max_s=0.01))
    >>> d.submit(0, 1000, 0.0, False)  # first request: positioning + transfer
    0.011
    >>> d.submit(1000, 1000, 0.5, False)  # contiguous with the previous: transfer only
    0.501
    """

    def __init__(self, config: DiskConfig):
        self.bw = float(config.bandwidth_bps)
        self.pmin = float(config.position_min_s)
        self.span = float(config.position_max_s) - self.pmin
        self.stroke = float(config.stroke_bytes)
        self.gap = int(config.file_gap_bytes)
        self.queueing = bool(config.queueing)
        self.prev = None  # address where the previous request ended [bytes]
        self.free_at = 0.0  # with queueing: when the disk is next idle [s]
        self.requests = 0
        self.t0: list[float] = []  # transfer start [s]
        self.t1: list[float] = []  # transfer end [s]
        self.nbytes: list[int] = []
        self.write: list[bool] = []

    def submit(self, addr: int, nbytes: int, t: float, write: bool) -> float:
        """Issue one request at time ``t``; returns when it completes [s].

        Parameters
        ----------
        addr : int
            Start address on the disk's line [bytes].
        nbytes : int
            Size [bytes].
        t : float
            Issue time [s].
        write : bool
            A write (else a read).
        """
        prev = self.prev
        if prev == addr:
            pos = 0.0
        else:
            d = self.stroke if prev is None else abs(addr - prev)
            pos = self.pmin + self.span * (d / self.stroke if d < self.stroke else 1.0)
        if self.queueing and self.free_at > t:
            t = self.free_at
        start = t + pos
        end = start + nbytes / self.bw
        if self.queueing:
            self.free_at = end
        self.prev = addr + nbytes
        self.requests += 1
        self.t0.append(start)
        self.t1.append(end)
        self.nbytes.append(nbytes)
        self.write.append(write)
        return end

    def log(self) -> dict[str, np.ndarray]:
        """The requests served: transfer ``t0``, ``t1`` [s], ``nbytes`` [bytes], ``write``."""
        return {
            "t0": np.asarray(self.t0, dtype=float),
            "t1": np.asarray(self.t1, dtype=float),
            "nbytes": np.asarray(self.nbytes, dtype=np.int64),
            "write": np.asarray(self.write, dtype=bool),
        }
