"""One CPU shared round-robin by several processes (Miller & Katz 1991, section 6.1).

Each process is a list of calls, each preceded by a CPU burst (the compute recorded
before it). The CPU runs the process at the head of the ready queue for at most one
quantum; a context switch (``switch_s``) is charged each time the CPU passes to
another process. A burst that ends issues the call after ``fs_s`` of file-system code;
the cache answers when the process may go on. If that is later than now the process
blocks (its I/O wait) and the CPU takes the next ready process; if no process is ready
the CPU is idle until the next one is woken. A process that used up its quantum goes
to the tail of the queue when another is ready. Each disk request a call caused adds
``interrupt_s`` to the process's next burst.

CPU busy time = bursts + file-system code + interrupts + context switches; idle time =
run time - busy time, never negative.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass

from iochar.analyze.cachesim.cache import Cache
from iochar.analyze.cachesim.config import CpuConfig

__all__ = ["Proc", "Outcome", "run"]

READ, WRITE, SYNC, OTHER = 0, 1, 2, 3


@dataclass
class Proc:
    """One process's calls, as Python lists of equal length.

    Attributes
    ----------
    kind : list of int
        0 read, 1 write, 2 sync, 3 other (file-system code only).
    file : list of int
        File key (distinct per process copy).
    offset, size : list of int
        Where and how much [bytes].
    burst : list of float
        CPU time before each call [s].
    """

    kind: list
    file: list
    offset: list
    size: list
    burst: list


@dataclass
class Outcome:
    """What the scheduler measured (seconds)."""

    makespan_s: float
    busy_s: float
    switch_s: float
    switches: int
    io_wait_s: list
    finish_s: list
    cpu_s: list


def run(procs: list[Proc], cache: Cache, cpu: CpuConfig) -> Outcome:
    """Run every process to its end; see the module docstring for the rules.

    Parameters
    ----------
    procs : list of Proc
        The processes, all ready at time 0.
    cache : Cache
        The buffer cache (and through it the disk).
    cpu : CpuConfig
        Quantum and overheads.

    Returns
    -------
    Outcome
    """
    quantum, cs, fs, intr = cpu.quantum_s, cpu.switch_s, cpu.fs_s, cpu.interrupt_s
    disk = cache.disk
    n = len(procs)
    idx = [0] * n
    left = [(p.burst[0] + fs) if p.kind else 0.0 for p in procs]
    wait = [0.0] * n
    finish = [0.0] * n
    cpu_used = [0.0] * n
    ready = deque(i for i in range(n) if procs[i].kind)
    sleeping: list[tuple[float, int]] = []
    now = busy = switch_time = 0.0
    switches = 0
    last = -1
    read, write, sync = cache.read, cache.write, cache.sync
    push, pop = heapq.heappush, heapq.heappop
    while ready or sleeping:
        if not ready:
            t, q = pop(sleeping)
            if t > now:
                now = t
            ready.append(q)
        while sleeping and sleeping[0][0] <= now:
            ready.append(pop(sleeping)[1])
        p = ready.popleft()
        if p != last:
            if last >= 0:
                now += cs
                switch_time += cs
                switches += 1
            last = p
        pr = procs[p]
        kind, files, offs, sizes, bursts = pr.kind, pr.file, pr.offset, pr.size, pr.burst
        nops = len(kind)
        i = idx[p]
        qleft = quantum
        r = left[p]
        used = 0.0
        while True:
            if r > qleft:  # the quantum ends first
                now += qleft
                used += qleft
                r -= qleft
                while sleeping and sleeping[0][0] <= now:
                    ready.append(pop(sleeping)[1])
                if ready:
                    ready.append(p)
                    break
                qleft = quantum
                continue
            now += r
            used += r
            qleft -= r
            k = kind[i]
            before = disk.requests
            if k == READ:
                done = read(p, files[i], offs[i], sizes[i], now)
            elif k == WRITE:
                done = write(p, files[i], offs[i], sizes[i], now)
            elif k == SYNC:
                done = sync(p, now)
            else:
                done = now
            i += 1
            if i == nops:
                r = 0.0
                if done > now:
                    wait[p] += done - now
                finish[p] = done
                break
            r = bursts[i] + fs + intr * (disk.requests - before)
            if done > now:
                wait[p] += done - now
                push(sleeping, (done, p))
                break
            if qleft <= 0.0:
                while sleeping and sleeping[0][0] <= now:
                    ready.append(pop(sleeping)[1])
                if ready:
                    ready.append(p)
                    break
                qleft = quantum
        idx[p] = i
        left[p] = r
        busy += used
        cpu_used[p] += used
    makespan = max([now, *finish]) if n else 0.0
    return Outcome(makespan, busy + switch_time, switch_time, switches, wait, finish, cpu_used)
