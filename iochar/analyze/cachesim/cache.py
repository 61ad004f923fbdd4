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
from collections import OrderedDict, deque
from itertools import repeat

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
    def _place(self, keys: range, t: float) -> None:
        """Put blocks not cached at the most recently used end, in order; evict the excess.

        Inserting a run at once and then evicting the least recently used blocks leaves
        the same cache as inserting them one by one, each evicting as it comes.
        """
        blocks, cap = self.blocks, self.cap
        if cap:
            blocks.update(zip(keys, repeat(t)))
            n = len(blocks) - cap
            if n > 0:
                pop = blocks.popitem
                for _ in range(n):
                    pop(False)

    def _load(self, f: int, lo: int, hi: int, now: float, prefetch: bool) -> float:
        """Read blocks ``[lo, hi)`` of file ``f``, none of them cached, into the cache.

        Blocks in the tier come from there, the rest from disk, one request per
        contiguous run; each block enters the cache, in order, with the time its data
        is in. Returns when the last block is in [s].
        """
        B, base, tb, tcap = self.B, f << _SHIFT, self.tblocks, self.tcap
        if self.tier is None:  # the common case, inline
            n = (hi - lo) * B
            t = self.disk.submit(f * self.gap + lo * B, n, now, False)
            if prefetch:
                self.prefetch_bytes += n
            else:
                self.disk_read_bytes += n
            cap = self.cap
            if cap:
                blocks = self.blocks
                blocks.update(zip(range(base | lo, base | hi), repeat(t)))
                n = len(blocks) - cap
                if n > 0:
                    pop = blocks.popitem
                    for _ in range(n):
                        pop(False)
            return t if t > now else now
        else:
            segs, start, state, n_tier = [], lo, None, 0
            for b in range(lo, hi):
                key = base | b
                inside = key in tb
                if inside:
                    tb.move_to_end(key)
                    n_tier += 1
                if inside is not state:
                    if state is not None:
                        segs.append((start, b, state))
                    start, state = b, inside
            segs.append((start, hi, state))
            t_tier = now + self.tier.setup_s + n_tier * B / 1024 * self.tier.per_kb_s
            self.tier_hit_bytes += n_tier * B
        ready = now
        for r0, r1, from_tier in segs:
            keys = range(base | r0, base | r1)
            if from_tier:
                t = t_tier
            else:
                n = (r1 - r0) * B
                t = self.disk.submit(f * self.gap + r0 * B, n, now, False)
                if prefetch:
                    self.prefetch_bytes += n
                else:
                    self.disk_read_bytes += n
                if tcap:  # none of them is in the tier
                    tb.update(zip(keys, repeat(None)))
                    k = len(tb) - tcap
                    if k > 0:
                        deque(map(tb.popitem, repeat(False, k)), maxlen=0)
            self._place(keys, t)
            if t > ready:
                ready = t
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
                    self._load(f, start, b, now, True)
                    start = -1
            elif start < 0:
                start = b
        if start >= 0:
            self._load(f, start, b1, now, True)

    # ------------------------------------------------------------------ calls
    def read(self, pid: int, f: int, off: int, size: int, now: float) -> float:
        """A read of ``size`` bytes at ``off`` of file ``f``; returns when it is done [s].

        The blocks are referenced in order, an exact LRU reference stream: a run of
        missing blocks enters the cache (and is read) before the next cached block is
        touched; a block that the run pushed out is then a miss too.
        """
        B, blocks, load = self.B, self.blocks, self._load
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
                if start < 0:
                    start = b
                continue
            if start >= 0:  # the missing run before this block
                lo, hi = start * B, b * B
                miss += hi - (off if off > lo else lo)
                t2 = load(f, start, b, now, False)
                if t2 > ready:
                    ready = t2
                start = -1
                t = blocks.get(key)
                if t is None:
                    start = b
                    continue
            blocks.move_to_end(key)
            if t > ready:
                ready = t
        if start >= 0:
            lo = start * B
            miss += end - (off if off > lo else lo)
            t = load(f, start, b1, now, False)
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
        B, blocks, tcap, tb = self.B, self.blocks, self.tcap, self.tblocks
        end = off + size
        base = f << _SHIFT
        hit = 0
        start = -1
        b0, b1 = off // B, (end - 1) // B + 1
        for b in range(b0, b1):
            key = base | b
            t = blocks.get(key)
            if t is None:
                if start < 0:
                    start = b
                continue
            if start >= 0:
                self._place(range(base | start, key), now)
                start = -1
                t = blocks.get(key)
                if t is None:
                    start = b
                    continue
            lo = b * B
            hit += (end if end < lo + B else lo + B) - (off if off > lo else lo)
            blocks.move_to_end(key)
            if t < now:
                blocks[key] = now
        if start >= 0:
            self._place(range(base | start, base | b1), now)
        if tcap:
            for key in range(base | b0, base | b1):
                if key in tb:
                    tb.move_to_end(key)
                else:
                    tb[key] = None
            k = len(tb) - tcap
            if k > 0:
                deque(map(tb.popitem, repeat(False, k)), maxlen=0)
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
