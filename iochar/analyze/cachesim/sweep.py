"""Many runs at once: cache sizes x policies x concurrent copies, as one tidy table.

The grid of Miller & Katz's section 6: idle time against cache size (Fig. 8) for one,
two or more identical copies, with and without read-ahead and write-behind. The trace
is read once and turned into processes once per number of copies.
"""

from __future__ import annotations

import pandas as pd

from iochar._validation import check_int
from iochar.analyze.cachesim.config import CacheConfig, CpuConfig, DiskConfig, TierConfig
from iochar.analyze.cachesim.run import _params, simulate_procs
from iochar.analyze.cachesim.trace import OPS_SQL, processes, read_ops
from iochar.errors import ParameterError
from iochar.result import Table

__all__ = ["POLICIES", "sweep", "recommend"]

#: Named cache policies: read-ahead mode and write-behind.
POLICIES: dict[str, dict] = {
    "none": {"read_ahead": "off", "write_behind": False},
    "read-ahead": {"read_ahead": "sequential", "write_behind": False},
    "write-behind": {"read_ahead": "off", "write_behind": True},
    "both": {"read_ahead": "sequential", "write_behind": True},
}


def sweep(
    source,
    job_ids=None,
    *,
    cache_sizes=(0, 2 * 8 * 2**20, 4 * 8 * 2**20, 16 * 8 * 2**20),
    policies=("none", "both"),
    copies=(1, 2),
    block_bytes: int = 4096,
    tier: TierConfig | None = None,
    disk: DiskConfig | None = None,
    cpu: CpuConfig | None = None,
    bin_s: float = 1.0,
) -> Table:
    """Simulate every combination of cache size, policy and number of copies.

    Parameters
    ----------
    source : iochar.Store, pandas.DataFrame or pyarrow.Table
        As :func:`iochar.analyze.cachesim.simulate`.
    job_ids : int or list of int, optional
        Jobs (with a store).
    cache_sizes : sequence of int, default 0, 2, 4 and 16 MW
        Main-cache sizes [bytes].
    policies : sequence of str, default ("none", "both")
        Names in :data:`POLICIES`.
    copies : sequence of int, default (1, 2)
        Numbers of identical concurrent copies.
    block_bytes : int, default 4096
        Cache block [bytes].
    tier : TierConfig, optional
        A second tier, the same for every run.
    disk : DiskConfig, optional
        The disk model, the same for every run.
    cpu : CpuConfig, optional
        The CPU, the same for every run.
    bin_s : float, default 1.0
        Bin of the disk data rate [s].

    Returns
    -------
    iochar.result.Table
        One row per run: ``cache_bytes``, ``policy``, ``copies``, then every scalar
        of :class:`iochar.analyze.cachesim.SimResult` (``cpu_idle_s``, ``io_wait_s``,
        ``read_hit_ratio``, ``peak_disk_bps`` ...). ``evidence``: ``runs``,
        ``baseline_io_wait_s`` (per number of copies: the smallest cache with the
        first policy).
    """
    for p in policies:
        if p not in POLICIES:
            raise ParameterError("policies", "sweep", "names in " + ", ".join(POLICIES), p)
    sizes = [check_int(s, "cache_sizes", "sweep", "ints >= 0 [bytes]", low=0) for s in cache_sizes]
    ns = [check_int(n, "copies", "sweep", "ints >= 1", low=1) for n in copies]
    disk = disk if disk is not None else DiskConfig()
    cpu = cpu if cpu is not None else CpuConfig()
    sql = None
    if hasattr(source, "sql") and hasattr(source, "con"):
        ops, sql = read_ops(source, job_ids), OPS_SQL
    else:
        ops = source
    rows = []
    for n in ns:
        procs, who = processes(ops, n)
        for size in sizes:
            for pol in policies:
                cache = CacheConfig(size_bytes=size, block_bytes=block_bytes, **POLICIES[pol])
                r = simulate_procs(
                    procs, who, cache=cache, tier=tier, disk=disk, cpu=cpu, bin_s=bin_s
                )
                rows.append({"cache_bytes": size, "policy": pol, "copies": n, **r.row()})
    df = pd.DataFrame(rows)
    base = {}
    if len(df):
        first = df[(df["cache_bytes"] == min(sizes)) & (df["policy"] == policies[0])]
        base = dict(zip(first["copies"], first["io_wait_s"], strict=True))
    prm = _params(CacheConfig(block_bytes=block_bytes), tier, disk, cpu, list(ns), bin_s)
    prm.update(cache_sizes=sizes, policies=list(policies), job_ids=job_ids)
    for k in [k for k in prm if k.startswith("cache.") and k != "cache.block_bytes"]:
        del prm[k]
    ev = {"runs": len(df), "baseline_io_wait_s": base}
    return Table(df, evidence=ev, params=prm, sql=sql)


def recommend(table: pd.DataFrame, *, hide: float = 0.9, copies: int | None = None) -> Table:
    """The smallest cache of a sweep that hides ``hide`` of the I/O wait, and its disk peak.

    The I/O wait hidden by a run is ``1 - io_wait_s / baseline``, the baseline being the
    run with the smallest cache and the first policy of the sweep (no cache when the
    sweep has size 0) at ``copies``. The run named is the smallest cache (then the
    first policy) that hides at least ``hide``; when none does, the run that hides most.
    Today's form of Miller & Katz's section 6.4 question: what cache (or SSD tier) keeps
    the CPU from waiting, and what the disk still sees.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`sweep`.
    hide : float, default 0.9
        Share of the I/O wait to hide, in (0, 1].
    copies : int, optional
        Number of copies to read; default the largest in the table.

    Returns
    -------
    iochar.result.Table
        One row (none when the table is empty or the baseline never waits):
        ``cache_bytes``, ``policy``, ``copies``, ``io_wait_s``, ``baseline_io_wait_s``
        [s], ``hidden_share``, ``enough`` (it hides at least ``hide``),
        ``peak_disk_bps``, ``mean_disk_bps`` [bytes/s]. ``evidence``: ``baseline_io_wait_s``,
        ``candidates`` (runs compared).

    Examples
    --------
    >>> t = pd.DataFrame({"cache_bytes": [0, 8, 64], "policy": "both", "copies": 1,
    ...                   "io_wait_s": [10.0, 2.0, 0.5], "peak_disk_bps": [1.0, 2.0, 3.0],
    ...                   "mean_disk_bps": 1.0})
    >>> recommend(t)[["cache_bytes", "hidden_share", "enough"]].to_dict("records")
    [{'cache_bytes': 64, 'hidden_share': 0.95, 'enough': True}]
    """
    from iochar._validation import check_real

    hide = check_real(hide, "hide", "recommend", "a float in (0, 1]", low=0, high=1, low_open=True)
    cols = ["cache_bytes", "policy", "copies", "io_wait_s", "baseline_io_wait_s",
            "hidden_share", "enough", "peak_disk_bps", "mean_disk_bps"]  # fmt: skip
    params = {"hide": hide, "copies": copies}
    if table is None or not len(table):
        return Table(pd.DataFrame(columns=cols), evidence={"candidates": 0}, params=params)
    n = int(table["copies"].max()) if copies is None else int(copies)
    rows = table[table["copies"] == n].sort_values("cache_bytes", kind="stable")
    base = float(rows["io_wait_s"].iloc[0]) if len(rows) else float("nan")
    ev = {"baseline_io_wait_s": base, "candidates": len(rows)}
    if not base > 0:
        return Table(pd.DataFrame(columns=cols), evidence=ev, params=params)
    hidden = 1 - rows["io_wait_s"] / base
    ok = rows[hidden >= hide]
    pick = ok.index[0] if len(ok) else hidden.idxmax()
    r = rows.loc[pick]
    out = {
        "cache_bytes": r["cache_bytes"], "policy": r["policy"], "copies": n,
        "io_wait_s": float(r["io_wait_s"]), "baseline_io_wait_s": base,
        "hidden_share": float(hidden.loc[pick]), "enough": bool(len(ok)),
        "peak_disk_bps": float(r["peak_disk_bps"]),
        "mean_disk_bps": float(r["mean_disk_bps"]) if "mean_disk_bps" in r else float("nan"),
    }  # fmt: skip
    return Table(pd.DataFrame([out], columns=cols), evidence=ev, params=params)
