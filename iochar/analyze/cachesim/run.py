"""One simulation run: trace in, CPU idle time, I/O wait, hit ratios and disk rates out.

The path of an I/O is Miller & Katz's Fig. 5: logical I/Os from the processes
(:mod:`.trace`, scheduled by :mod:`.scheduler`) go through the buffer model
(:mod:`.cache`), whose physical I/Os go to the disk model (:mod:`.disk`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import pandas as pd

from iochar._validation import check_int, check_real
from iochar.analyze.cachesim.cache import Cache
from iochar.analyze.cachesim.config import CacheConfig, CpuConfig, DiskConfig, TierConfig
from iochar.analyze.cachesim.disk import Disk
from iochar.analyze.cachesim.rates import rate_table
from iochar.analyze.cachesim.scheduler import Proc, run
from iochar.analyze.cachesim.trace import OPS_SQL, processes, read_ops
from iochar.errors import ParameterError
from iochar.result import Result, Table

__all__ = ["SimResult", "simulate", "simulate_procs"]


@dataclass(frozen=True)
class SimResult(Result):
    """What one simulation run measured.

    Attributes
    ----------
    processes : iochar.result.Table
        Per process: ``pid``, ``copy``, ``job_id``, ``rank``, ``ops``, ``cpu_s`` (CPU
        time it used [s]), ``io_wait_s`` (time blocked on I/O [s]), ``finish_s`` [s].
    rate : iochar.result.Table
        Disk data rate per bin: ``t_s``, ``read_bps``, ``write_bps``, ``bps`` [bytes/s].
    makespan_s : float
        Time until every process ended [s].
    cpu_busy_s, cpu_idle_s : float
        CPU time spent on bursts, file-system code, interrupts and context switches, and
        the rest of the makespan [s].
    switch_s : float
        Of the busy time, context switches [s].
    io_wait_s : float
        I/O wait summed over the processes [s].
    read_hit_ratio, write_hit_ratio : float
        Requested bytes found in the main cache, over bytes requested (NaN when none).
    bytes_read, bytes_written : int
        Requested by the processes [bytes].
    read_hit_bytes, write_hit_bytes : int
        Of those, found in the main cache [bytes]; a read's other bytes are its misses.
    disk_read_bytes, prefetch_bytes, disk_write_bytes : int
        Read from disk on demand, by read-ahead, and written to disk [bytes].
    tier_hit_bytes : int
        Main-cache misses served by the second tier [bytes].
    peak_disk_bps, mean_disk_bps : float
        Highest binned disk rate, and disk bytes over the span of the rate table
        [bytes/s].
    disk_requests : int
        Physical I/Os.
    params : dict
        The parameters as used (``cache.*``, ``disk.*``, ``cpu.*``, ``tier.*``,
        ``copies``, ``bin_s``, ``job_ids``).
    sql : str or None
        The query that read the ops from the store, or None for a trace.
    """

    processes: pd.DataFrame = dataclasses.field(repr=False)
    rate: pd.DataFrame = dataclasses.field(repr=False)
    makespan_s: float
    cpu_busy_s: float
    cpu_idle_s: float
    switch_s: float
    io_wait_s: float
    read_hit_ratio: float
    write_hit_ratio: float
    bytes_read: int
    bytes_written: int
    read_hit_bytes: int
    write_hit_bytes: int
    disk_read_bytes: int
    prefetch_bytes: int
    disk_write_bytes: int
    tier_hit_bytes: int
    peak_disk_bps: float
    mean_disk_bps: float
    disk_requests: int

    def row(self) -> dict:
        """The scalar results as one dict (a row of :func:`iochar.analyze.cachesim.sweep`)."""
        return dict(self.evidence)


def _params(cache, tier, disk, cpu, copies, bin_s) -> dict:
    out = {"copies": copies, "bin_s": bin_s}
    for name, cfg in (("cache", cache), ("disk", disk), ("cpu", cpu)):
        out.update({f"{name}.{k}": v for k, v in dataclasses.asdict(cfg).items()})
    if tier is not None:
        out.update({f"tier.{k}": v for k, v in dataclasses.asdict(tier).items()})
    return out


def simulate_procs(
    procs: list[Proc],
    who: pd.DataFrame,
    *,
    cache: CacheConfig,
    tier: TierConfig | None,
    disk: DiskConfig,
    cpu: CpuConfig,
    bin_s: float = 1.0,
    params: dict | None = None,
    sql: str | None = None,
) -> SimResult:
    """Run already-built processes (see :func:`simulate`; :func:`.trace.processes`)."""
    d = Disk(disk)
    c = Cache(cache, d, tier, len(procs))
    out = run(procs, c, cpu)
    log = d.log()
    rates = rate_table(log, bin_s, out.makespan_s)
    span = len(rates) * bin_s
    moved = float(log["nbytes"].sum())
    ev_rate = {"bin_s": bin_s, "span_s": span, "disk_bytes": moved}
    prm = params or {}
    per = who.assign(cpu_s=out.cpu_s, io_wait_s=out.io_wait_s, finish_s=out.finish_s)

    def ratio(a, b):
        return a / b if b else math.nan

    return SimResult(
        processes=Table(per, evidence={"processes": len(per)}, params=prm, sql=sql),
        rate=Table(rates, evidence=ev_rate, params=prm, sql=sql),
        makespan_s=out.makespan_s,
        cpu_busy_s=out.busy_s,
        cpu_idle_s=max(0.0, out.makespan_s - out.busy_s),
        switch_s=out.switch_s,
        io_wait_s=float(sum(out.io_wait_s)),
        read_hit_ratio=ratio(c.read_hit_bytes, c.read_bytes),
        write_hit_ratio=ratio(c.write_hit_bytes, c.write_bytes),
        bytes_read=c.read_bytes,
        bytes_written=c.write_bytes,
        read_hit_bytes=c.read_hit_bytes,
        write_hit_bytes=c.write_hit_bytes,
        disk_read_bytes=c.disk_read_bytes,
        prefetch_bytes=c.prefetch_bytes,
        disk_write_bytes=c.disk_write_bytes,
        tier_hit_bytes=c.tier_hit_bytes,
        peak_disk_bps=float(rates["bps"].max()) if len(rates) else 0.0,
        mean_disk_bps=moved / span if span else 0.0,
        disk_requests=d.requests,
        params=prm,
        sql=sql,
    )


def simulate(
    source,
    job_ids=None,
    *,
    copies: int = 1,
    cache: CacheConfig | None = None,
    tier: TierConfig | None = None,
    disk: DiskConfig | None = None,
    cpu: CpuConfig | None = None,
    bin_s: float = 1.0,
) -> SimResult:
    """Replay jobs' I/O through a cache and a disk on one CPU (Miller & Katz section 6).

    Parameters
    ----------
    source : iochar.Store, pandas.DataFrame or pyarrow.Table
        A database (then ``job_ids`` names the jobs) or a trace (the store's ops
        layout, or the trace layout of :mod:`iochar.datasets.synth`).
    job_ids : int or list of int, optional
        Jobs to replay together (with a store).
    copies : int, default 1
        Identical copies of the jobs run at once, each on its own files.
    cache : CacheConfig, optional
        Default ``CacheConfig()``: 4 MW, 4 KiB blocks, no read-ahead or write-behind.
    tier : TierConfig, optional
        A second tier (SSD, burst buffer); None: none.
    disk : DiskConfig, optional
        Default ``DiskConfig()``.
    cpu : CpuConfig, optional
        Default ``CpuConfig()``.
    bin_s : float, default 1.0
        Bin of the disk data rate [s].

    Returns
    -------
    SimResult

    Examples
    --------
    >>> import pandas as pd
    >>> ops = pd.DataFrame({"rank": 0, "path": "/a", "op": "read", "offset": [0, 0],
    ...                     "size": 4096, "t_start": [1.0, 2.0], "t_end": [1.0, 2.0]})
    >>> r = simulate(ops, cache=CacheConfig(size_bytes=4096),
    ...              disk=DiskConfig(bandwidth_bps=4096, position_min_s=0, position_max_s=0),
    ...              cpu=CpuConfig(switch_s=0, fs_s=0, interrupt_s=0))
    >>> round(r.cpu_idle_s, 9), r.read_hit_ratio  # the first read waits 1 s, the second hits
    (1.0, 0.5)
    """
    copies = check_int(copies, "copies", "simulate", "an int >= 1", low=1)
    bin_s = check_real(bin_s, "bin_s", "simulate", "a float > 0 [s]", low=0, low_open=True)
    cache = cache if cache is not None else CacheConfig()
    disk = disk if disk is not None else DiskConfig()
    cpu = cpu if cpu is not None else CpuConfig()
    for name, v, cls in (("cache", cache, CacheConfig), ("disk", disk, DiskConfig),
                         ("cpu", cpu, CpuConfig)):  # fmt: skip
        if not isinstance(v, cls):
            raise ParameterError(name, "simulate", f"a {cls.__name__}", v)
    if tier is not None and not isinstance(tier, TierConfig):
        raise ParameterError("tier", "simulate", "a TierConfig or None", tier)
    sql = None
    if hasattr(source, "sql") and hasattr(source, "con"):
        ops, sql = read_ops(source, job_ids), OPS_SQL
    else:
        ops = source
    procs, who = processes(ops, copies)
    prm = _params(cache, tier, disk, cpu, copies, bin_s)
    if job_ids is not None:
        prm["job_ids"] = job_ids
    return simulate_procs(
        procs, who, cache=cache, tier=tier, disk=disk, cpu=cpu, bin_s=bin_s, params=prm, sql=sql
    )
