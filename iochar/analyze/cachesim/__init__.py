"""Trace-driven cache simulation: what read-ahead, write-behind and a cache tier would buy.

Miller & Katz (1991, section 6, Figs. 5-8) replayed their traces through a simulator of
one CPU running several processes round-robin, a buffer cache between the processes'
logical I/Os and a simple disk model, with read-ahead, write-behind and an SSD tier,
and reported CPU idle time and the data rate to disk as the cache size and the number
of concurrent copies change. This package does the same on any job in the store
(strace, Darshan DXT, trace CSV/Parquet) or on a trace of :mod:`iochar.datasets.synth`.

Modules: :mod:`.config` (parameters), :mod:`.trace` (processes and CPU bursts),
:mod:`.scheduler` (the CPU), :mod:`.cache` (LRU, read-ahead, write-behind, tier),
:mod:`.disk` (service times), :mod:`.rates` (disk rate over time), :mod:`.run`
(:func:`simulate`), :mod:`.sweep` (:func:`sweep`).

>>> from iochar.analyze import cachesim
>>> from iochar.datasets import synth
>>> ops, _ = synth.make_scenario("ccm", scale=0.05, random_state=0)
>>> a = cachesim.simulate(ops, copies=2)
>>> b = cachesim.simulate(ops, copies=2, cache=cachesim.CacheConfig(write_behind=True))
>>> b.cpu_idle_s < a.cpu_idle_s
True
"""

from __future__ import annotations

from iochar.analyze.cachesim.config import MW, CacheConfig, CpuConfig, DiskConfig, TierConfig
from iochar.analyze.cachesim.run import SimResult, simulate
from iochar.analyze.cachesim.sweep import POLICIES, recommend, sweep
from iochar.analyze.cachesim.trace import choose_job, job_name

__all__ = [
    "MW",
    "CacheConfig",
    "CpuConfig",
    "DiskConfig",
    "TierConfig",
    "SimResult",
    "simulate",
    "sweep",
    "recommend",
    "POLICIES",
    "choose_job",
    "job_name",
]
