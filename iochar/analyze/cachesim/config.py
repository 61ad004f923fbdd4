"""The simulator's parameters: cache, second tier, disk and CPU, each a frozen dataclass.

Miller & Katz (1991, section 6.1) made the scheduler's quantum, the context-switch,
file-system-code and interrupt-service times, the cache size and the disk model
parameters of their simulator; section 6.3 models the SSD "as a huge main-memory cache"
with a per-kilobyte penalty for hits ("approximately 1 us per kilobyte transferred (at
1 GB/sec), with some additional overhead to set up the transfer"). Units: bytes and
seconds; a Cray Y-MP word is 8 bytes and the paper's MW is :data:`MW` bytes.

>>> CacheConfig(size_bytes=4 * MW).dirty_limit
33554432
"""

from __future__ import annotations

from dataclasses import dataclass

from iochar._validation import check_choice, check_int, check_real

__all__ = ["MW", "CacheConfig", "TierConfig", "DiskConfig", "CpuConfig"]

#: One mega-word of a Cray Y-MP (2**20 words of 8 bytes) [bytes].
MW = 8 * 2**20

READ_AHEAD = ("off", "sequential", "window")


@dataclass(frozen=True)
class CacheConfig:
    """The main-memory buffer cache (Miller & Katz section 6.2).

    Parameters
    ----------
    size_bytes : int, default 4 MW
        Capacity [bytes]; 0: no cache (every read goes to disk). Blocks are replaced
        least recently used first (LRU).
    block_bytes : int, default 4096
        Cache block [bytes]: the unit of hits, of replacement and of disk reads.
    read_ahead : {"off", "sequential", "window"}, default "off"
        ``"sequential"``: after a read that starts where the process's previous read of
        the file ended *and* has its size, fetch the next that many bytes ("prefetching
        the amount of data just read", section 6.2); ``"window"``: after any sequential
        read, keep the next ``window_bytes`` fetched. A first read at offset 0 counts as
        sequential (Linux's on-demand read-ahead starts a window there, mm/readahead.c).
    window_bytes : int, default 131072
        Read-ahead window of ``"window"`` mode [bytes].
    write_behind : bool, default False
        True: a write returns once its data is in the cache and goes to disk while the
        process runs on (section 6.2); False: the process waits for the disk write.
    dirty_limit_bytes : int or None, default None
        Most written bytes not yet on disk at once [bytes]; a write that would exceed
        it waits for earlier ones to finish. None: the cache size (write-behind
        buffers are cache buffers).
    """

    size_bytes: int = 4 * MW
    block_bytes: int = 4096
    read_ahead: str = "off"
    window_bytes: int = 128 * 1024
    write_behind: bool = False
    dirty_limit_bytes: int | None = None

    def __post_init__(self):
        c = "CacheConfig"
        check_int(self.size_bytes, "size_bytes", c, "an int >= 0 [bytes]", low=0)
        check_int(self.block_bytes, "block_bytes", c, "an int >= 1 [bytes]", low=1)
        check_choice(self.read_ahead, "read_ahead", c, READ_AHEAD)
        check_int(self.window_bytes, "window_bytes", c, "an int >= 1 [bytes]", low=1)
        check_choice(self.write_behind, "write_behind", c, (True, False))
        check_int(
            self.dirty_limit_bytes, "dirty_limit_bytes", c, "an int >= 0 or None", low=0, none=True
        )

    @property
    def blocks(self) -> int:
        """Capacity in blocks."""
        return self.size_bytes // self.block_bytes

    @property
    def dirty_limit(self) -> int:
        """The dirty limit in force [bytes]."""
        return self.size_bytes if self.dirty_limit_bytes is None else self.dirty_limit_bytes


@dataclass(frozen=True)
class TierConfig:
    """A second cache tier below the main cache: SSD, burst buffer (section 6.3).

    Parameters
    ----------
    size_bytes : int
        Capacity [bytes], LRU like the main cache, in the main cache's blocks. It holds
        every block read from disk or written (inclusive of the main cache).
    per_kb_s : float, default 1e-6
        Transfer cost of one KiB (1024 bytes) between tier and memory [s]; the paper's
        1 us per kilobyte (1 GB/s).
    setup_s : float, default 1e-5
        Cost of setting up one transfer [s].
    """

    size_bytes: int
    per_kb_s: float = 1e-6
    setup_s: float = 1e-5

    def __post_init__(self):
        c = "TierConfig"
        check_int(self.size_bytes, "size_bytes", c, "an int >= 0 [bytes]", low=0)
        check_real(self.per_kb_s, "per_kb_s", c, "a float >= 0 [s]", low=0)
        check_real(self.setup_s, "setup_s", c, "a float >= 0 [s]", low=0)


@dataclass(frozen=True)
class DiskConfig:
    """The disk model: bandwidth plus a positioning time that grows with distance.

    Files are laid out on one address line in the order they are first touched,
    ``file_gap_bytes`` apart. A request that starts where the previous request ended
    costs no positioning; any other costs ``position_min_s`` plus
    ``(position_max_s - position_min_s) * min(1, distance / stroke_bytes)``, then
    ``bytes / bandwidth_bps``. Without ``queueing`` every request is served as soon as
    it is issued, whatever else is outstanding, as in Miller & Katz's model ("There was
    no queueing at the disks", section 6.1); with it, one request at a time, first come
    first served.

    Parameters
    ----------
    bandwidth_bps : float, default 10e6
        Transfer rate [bytes/s] (a Cray DD-40 disk moved about 10 MB/s).
    position_min_s, position_max_s : float, default 2e-3, 15e-3
        Positioning time for the shortest and the longest move [s] (the paper's
        slow-seeking Y-MP disks: "as long as 15 ms").
    stroke_bytes : int, default 4 GiB
        Distance at which positioning reaches its maximum [bytes].
    file_gap_bytes : int, default 512 MiB
        Distance between the starts of two files [bytes].
    queueing : bool, default False
        Serve one request at a time (FIFO).
    """

    bandwidth_bps: float = 10e6
    position_min_s: float = 2e-3
    position_max_s: float = 15e-3
    stroke_bytes: int = 4 * 2**30
    file_gap_bytes: int = 512 * 2**20
    queueing: bool = False

    def __post_init__(self):
        c = "DiskConfig"
        check_real(self.bandwidth_bps, "bandwidth_bps", c, "a float > 0", low=0, low_open=True)
        check_real(self.position_min_s, "position_min_s", c, "a float >= 0 [s]", low=0)
        check_real(
            self.position_max_s, "position_max_s", c, "a float >= position_min_s [s]",
            low=self.position_min_s,
        )  # fmt: skip
        check_int(self.stroke_bytes, "stroke_bytes", c, "an int >= 1 [bytes]", low=1)
        check_int(self.file_gap_bytes, "file_gap_bytes", c, "an int >= 0 [bytes]", low=0)
        check_choice(self.queueing, "queueing", c, (True, False))


@dataclass(frozen=True)
class CpuConfig:
    """One CPU shared round-robin by the processes (section 6.1).

    Parameters
    ----------
    quantum_s : float, default 0.01
        Scheduling quantum [s].
    switch_s : float, default 5e-5
        Context-switch time, charged whenever the CPU passes to another process [s].
    fs_s : float, default 5e-5
        File-system code run on the CPU for each I/O call [s].
    interrupt_s : float, default 1e-5
        Interrupt service time of each disk request the call caused (its own,
        read-ahead, write-behind) [s], charged to the process's next CPU burst.
    """

    quantum_s: float = 0.01
    switch_s: float = 5e-5
    fs_s: float = 5e-5
    interrupt_s: float = 1e-5

    def __post_init__(self):
        c = "CpuConfig"
        check_real(self.quantum_s, "quantum_s", c, "a float > 0 [s]", low=0, low_open=True)
        for name in ("switch_s", "fs_s", "interrupt_s"):
            check_real(getattr(self, name), name, c, "a float >= 0 [s]", low=0)
