"""The buffer cache between the processes' logical I/Os and the disk (Miller & Katz Fig. 5).

Each call takes one logical I/O at simulated time ``now`` and answers when the calling
process may go on. The rules (Miller & Katz 1991, sections 6.2 and 6.3):

- blocks of ``block_bytes`` are kept least recently used first out (LRU); a read's
  missing blocks are read from disk, one request per contiguous run, and the read
  waits for the last of them (and for any block it finds still on its way in);
- read-ahead (``"sequential"``: the amount just read, after a sequential read of the
  same size; ``"window"``: a fixed window after any sequential read) issues the next
  blocks' disk reads at once and does not wait for them;
- every write goes to disk once, as one request of its size. Without write-behind the
  process waits for it; with write-behind it goes on at once unless more than the
  dirty limit of written bytes would be outstanding, then it waits until enough earlier
  writes are on disk. A ``sync`` waits for all of the process's outstanding writes;
- a second tier (SSD, burst buffer) holds every block read from disk or written
  (inclusive, LRU); a main-cache miss found there costs ``setup_s + KiB * per_kb_s``
  instead of a disk read, and a write copies its data there at the same cost.

Hit bytes are the bytes of a request whose block was already cached (in flight or
not); the rest are miss bytes, so hit + miss bytes = requested bytes. Disk reads move
whole blocks; disk writes move the bytes written.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict

from iochar.analyze.cachesim.config import CacheConfig, TierConfig
from iochar.analyze.cachesim.disk import Disk

__all__ = ["Cache"]

_SHIFT = 36  # key = file << 36 | block (2**36 blocks per file)


class Cache:
    """An LRU block cache with read-ahead, write-behind and an optional second tier.

    Parameters
    ----------
    config : CacheConfig
        Size, block, read-ahead and write-behind.
    disk : Disk
        Where misses and writes go.
    tier : TierConfig or None
        The second tier, if any.
    nprocs : int
        Processes (for per-process write-behind state).

    Examples
    --------
    >>> from iochar.analyze.cachesim.config import DiskConfig
    >>> disk = Disk(DiskConfig(bandwidth_bps=4096.0, position_min_s=0, position_max_s=0))
    >>> c = Cache(CacheConfig(size_bytes=8192), disk, None, 1)
    >>> c.read(0, 0, 0, 4096, 0.0), c.read(0, 0, 0, 4096, 5.0)  # miss (1 s), then hit
    (1.0, 5.0)
    """

    def __init__(self, config: CacheConfig, disk: Disk, tier: TierConfig | None, nprocs: int):
        self.B = int(config.block_bytes)
        self.cap = int(config.blocks)
        self.blocks: OrderedDict[int, float] = OrderedDict()  # key -> time the data is in
        self.ra = config.read_ahead
        self.window = int(config.window_bytes)
        self.wb = bool(config.write_behind)
        self.limit = int(config.dirty_limit)
        self.disk = disk
        self.gap = disk.gap
        self.tier = tier
        self.tcap = tier.size_bytes // self.B if tier is not None else 0
        self.tblocks: OrderedDict[int, None] = OrderedDict()
        self.seq: dict[tuple[int, int], tuple[int, int]] = {}  # (pid, file) -> (end, size)
        self.dirty: list[tuple[float, int]] = []  # heap of (on disk at, bytes)
        self.dirty_bytes = 0
        self.pending = [0.0] * nprocs  # when each process's writes are all on disk
        # tallies [bytes]
        self.read_bytes = self.read_hit_bytes = self.tier_hit_bytes = 0
        self.write_bytes = self.write_hit_bytes = 0
        self.disk_read_bytes = self.prefetch_bytes = self.disk_write_bytes = 0
        self.write_waits = 0

    # ------------------------------------------------------------------ internals
    def _insert(self, key: int, t: float) -> None:
        blocks = self.blocks
        blocks[key] = t
        if len(blocks) > self.cap:
            blocks.popitem(last=False)

    def _tier_put(self, key: int) -> None:
        tb = self.tblocks
        if key in tb:
            tb.move_to_end(key)
        else:
            tb[key] = None
            if len(tb) > self.tcap:
                tb.popitem(last=False)

    def _fetch(self, f: int, b0: int, b1: int, now: float, prefetch: bool) -> float:
        """Bring blocks ``[b0, b1)`` of file ``f`` in; returns when the last is in [s]."""
        B, base = self.B, f << _SHIFT
        ready = now
        if self.tier is None:
            runs = ((b0, b1),)
        else:  # blocks in the tier come from there, the rest from disk
            runs, start, in_tier = [], -1, 0
            for b in range(b0, b1):
                key = base | b
                if key in self.tblocks:
                    self.tblocks.move_to_end(key)
                    in_tier += 1
                    if start >= 0:
                        runs.append((start, b))
                        start = -1
                elif start < 0:
                    start = b
            if start >= 0:
                runs.append((start, b1))
            if in_tier:
                t = now + self.tier.setup_s + in_tier * B / 1024 * self.tier.per_kb_s
                ready = t
                self.tier_hit_bytes += in_tier * B
                for b in range(b0, b1):
                    key = base | b
                    if key in self.tblocks:
                        self._insert(key, t)
        for lo, hi in runs:
            n = (hi - lo) * B
            t = self.disk.submit(f * self.gap + lo * B, n, now, False)
            if t > ready:
                ready = t
            if prefetch:
                self.prefetch_bytes += n
            else:
                self.disk_read_bytes += n
            for b in range(lo, hi):
                key = base | b
                if self.cap:
                    self._insert(key, t)
                if self.tcap:
                    self._tier_put(key)
        return ready

    def _read_ahead(self, f: int, lo: int, hi: int, now: float) -> None:
        """Issue disk reads for the blocks of bytes ``[lo, hi)`` not cached."""
        if not self.cap:
            return
        B, blocks, base = self.B, self.blocks, f << _SHIFT
        start = -1
        b1 = (hi - 1) // B + 1
        for b in range(lo // B, b1):
            if (base | b) in blocks:
                if start >= 0:
                    self._fetch(f, start, b, now, True)
                    start = -1
            elif start < 0:
                start = b
        if start >= 0:
            self._fetch(f, start, b1, now, True)

    # ------------------------------------------------------------------ calls
    def read(self, pid: int, f: int, off: int, size: int, now: float) -> float:
        """A read of ``size`` bytes at ``off`` of file ``f``; returns when it is done [s]."""
        B, blocks = self.B, self.blocks
        end = off + size
        base = f << _SHIFT
        ready = now
        miss = 0
        start = -1
        b1 = (end - 1) // B + 1
        for b in range(off // B, b1):
            key = base | b
            t = blocks.get(key)
            if t is None:
                lo = b * B
                miss += (end if end < lo + B else lo + B) - (off if off > lo else lo)
                if start < 0:
                    start = b
            else:
                blocks.move_to_end(key)
                if t > ready:
                    ready = t
                if start >= 0:
                    t = self._fetch(f, start, b, now, False)
                    if t > ready:
                        ready = t
                    start = -1
        if start >= 0:
            t = self._fetch(f, start, b1, now, False)
            if t > ready:
                ready = t
        self.read_bytes += size
        self.read_hit_bytes += size - miss
        ra = self.ra
        if ra != "off":
            k = (pid, f)
            last = self.seq.get(k)
            seq = off == 0 if last is None else off == last[0]
            if seq and ra == "sequential" and last is not None and size != last[1]:
                seq = False
            if seq:
                self._read_ahead(f, end, end + (size if ra == "sequential" else self.window), now)
            self.seq[k] = (end, size)
        return ready

    def write(self, pid: int, f: int, off: int, size: int, now: float) -> float:
        """A write of ``size`` bytes at ``off`` of file ``f``; returns when the process goes on."""
        B, blocks = self.B, self.blocks
        end = off + size
        base = f << _SHIFT
        hit = 0
        cap = self.cap
        for b in range((off // B), (end - 1) // B + 1):
            key = base | b
            if key in blocks:
                lo = b * B
                hit += (end if end < lo + B else lo + B) - (off if off > lo else lo)
                blocks.move_to_end(key)
                if blocks[key] < now:
                    blocks[key] = now
            elif cap:
                self._insert(key, now)
            if self.tcap:
                self._tier_put(key)
        self.write_bytes += size
        self.write_hit_bytes += hit
        go = now
        if self.tier is not None:
            go = now + self.tier.setup_s + size / 1024 * self.tier.per_kb_s
        addr = f * self.gap + off
        if not self.wb:
            self.disk_write_bytes += size
            done = self.disk.submit(addr, size, go, True)
            if done > self.pending[pid]:
                self.pending[pid] = done
            return done
        heap = self.dirty
        while heap and heap[0][0] <= go:
            self.dirty_bytes -= heapq.heappop(heap)[1]
        while heap and self.dirty_bytes + size > self.limit:
            t, n = heapq.heappop(heap)
            self.dirty_bytes -= n
            go = t
            self.write_waits += 1
        done = self.disk.submit(addr, size, go, True)
        self.disk_write_bytes += size
        if done > self.pending[pid]:
            self.pending[pid] = done
        if self.dirty_bytes + size > self.limit:  # no buffer for it: write-through
            return done
        heapq.heappush(heap, (done, size))
        self.dirty_bytes += size
        return go

    def sync(self, pid: int, now: float) -> float:
        """An fsync: returns when all of the process's writes are on disk [s]."""
        p = self.pending[pid]
        return p if p > now else now
