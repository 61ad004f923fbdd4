"""Narrative for notebook 06 (cache simulation): Miller & Katz (1991) section 6.

Sentences about runs of :func:`iochar.analyze.cachesim.simulate` and the grid of
:func:`iochar.analyze.cachesim.sweep`: what the CPU did, what the cache caught, what
the disk still saw, and the recommendation "a cache of X hides Y% of this job's I/O
wait; the disk still sees a peak of Z". Every number is read from the results passed
in; cache sizes are given in the paper's Cray Y-MP words (1 MW = 8 MiB) and in bytes.

Examples
--------
>>> import pandas as pd
>>> t = pd.DataFrame({"cache_bytes": [0, 2 * 2**23, 16 * 2**23], "policy": "both",
...                   "copies": 2, "io_wait_s": [400.0, 120.0, 8.0],
...                   "peak_disk_bps": [5e6, 60e6, 58e6]})
>>> print(recommendation(t, "job 3 (venus)"))  # doctest: +NORMALIZE_WHITESPACE
A cache of 16 MW (128.0 MiB) hides 98.0% of the I/O wait of job 3 (venus) (2 copies
at once, read-ahead and write-behind), from 6.67 min to 8 s; the disk still sees a
peak of 55.3 MiB/s.
"""

from __future__ import annotations

import math

import pandas as pd

from iochar.analyze.cachesim.config import MW
from iochar.analyze.cachesim.sweep import recommend
from iochar.narrate import esc, fmt_bytes, fmt_pct, fmt_rate, fmt_s, plural

__all__ = [
    "job_label",
    "cache_size",
    "setup_summary",
    "run_summary",
    "policy_effect",
    "tier_summary",
    "recommendation",
]

_POLICY = {
    "none": "no read-ahead or write-behind",
    "read-ahead": "read-ahead",
    "write-behind": "write-behind",
    "both": "read-ahead and write-behind",
}


def job_label(job_id: int | None, app: str | None = None) -> str:
    """``"job 6 (venus)"``, the name escaped; ``"no job"`` for None.

    >>> job_label(6, "venus"), job_label(3)
    ('job 6 (venus)', 'job 3')
    """
    if job_id is None:
        return "no job"
    return f"job {job_id} ({esc(app)})" if app else f"job {job_id}"


def cache_size(nbytes: float) -> str:
    """A cache size in MW and bytes: ``"4 MW (32.0 MiB)"``; ``"no cache"`` for 0.

    >>> cache_size(4 * 2**23), cache_size(0)
    ('4 MW (32.0 MiB)', 'no cache')
    """
    if not nbytes:
        return "no cache"
    mw = nbytes / MW
    words = f"{mw:g} MW" if mw >= 0.1 else "under 0.1 MW"
    return f"{words} ({fmt_bytes(nbytes)})"


def _copies(n: int) -> str:
    return "one copy" if n == 1 else f"{n} copies at once"


def setup_summary(result, label: str) -> str:
    """What is replayed: the job, its copies, processes and calls.

    Parameters
    ----------
    result : iochar.analyze.cachesim.SimResult
        Any run of the job.
    label : str
        The job in words (``"job 3 (venus)"``), already escaped.
    """
    per = result.processes
    if per is None or not len(per):
        return f"{label} has no calls to replay."
    copies = int(per["copy"].max()) + 1
    return (
        f"The simulator replays **{label}** as {_copies(copies)} on one CPU: "
        f"{plural(len(per), 'process', 'processes')} making {int(per['ops'].sum()):,} calls "
        f"that read {fmt_bytes(result.bytes_read)} and write {fmt_bytes(result.bytes_written)}. "
        f"The CPU work alone (the recorded compute between calls, plus system overheads) "
        f"is {fmt_s(result.cpu_busy_s)}: a run without idle time would take that long."
    )


def run_summary(result, title: str) -> str:
    """One run in a sentence: CPU busy and idle, hits, disk bytes and rates.

    Parameters
    ----------
    result : iochar.analyze.cachesim.SimResult
        The run.
    title : str
        What the run is (``"With a 2 MW cache"``).
    """
    span = result.makespan_s
    idle = result.cpu_idle_s
    share = idle / span if span > 0 else math.nan
    hits = []
    if result.read_hit_ratio == result.read_hit_ratio:  # not NaN
        ahead = (
            f" (read-ahead had brought {fmt_bytes(result.prefetch_bytes)} in)"
            if result.prefetch_bytes
            else ""
        )
        hits.append(
            f"reads found {fmt_pct(result.read_hit_ratio)} of their bytes in the cache{ahead}"
        )
    if result.write_hit_ratio == result.write_hit_ratio:
        hits.append(f"writes found {fmt_pct(result.write_hit_ratio)} of their bytes already cached")
    hit_text = "; " + " and ".join(hits) if hits else ""
    return (
        f"{title}, the run takes {fmt_s(span)} with the CPU idle {fmt_s(idle)} "
        f"({fmt_pct(share)} of it){hit_text}. The disk reads "
        f"{fmt_bytes(result.disk_read_bytes + result.prefetch_bytes)} and writes "
        f"{fmt_bytes(result.disk_write_bytes)}, at a peak of {fmt_rate(result.peak_disk_bps)} "
        f"against a mean of {fmt_rate(result.mean_disk_bps)}."
    )


def policy_effect(table: pd.DataFrame, cache_bytes: int, copies: int | None = None) -> str:
    """How much each policy cuts idle time at one cache size (the paper's 211 s to 1 s).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`iochar.analyze.cachesim.sweep`.
    cache_bytes : int
        The cache size to compare at [bytes].
    copies : int, optional
        Number of copies; default the largest in the table.
    """
    if table is None or not len(table):
        return "No runs to compare."
    copies = int(table["copies"].max()) if copies is None else copies
    rows = table[(table["cache_bytes"] == cache_bytes) & (table["copies"] == copies)]
    base = rows[rows["policy"] == "none"]
    if base.empty or len(rows) < 2:
        return f"No runs with a cache of {cache_size(cache_bytes)} to compare policies."
    b = float(base["cpu_idle_s"].iloc[0])
    parts = [
        f"{_POLICY.get(p, p)} to {fmt_s(float(r))}"
        for p, r in zip(rows["policy"], rows["cpu_idle_s"], strict=True)
        if p != "none"
    ]
    return (
        f"With a cache of {cache_size(cache_bytes)} and {_copies(copies)}, CPU idle time is "
        f"{fmt_s(b)} without read-ahead or write-behind; it falls with "
        + ", with ".join(parts)
        + " (Miller & Katz: write-behind cut two venus copies' idle time from 211 s to 1 s "
        "with a 4 MW cache)."
    )


def tier_summary(with_tier, without, tier_bytes: int) -> str:
    """What a second tier (SSD, burst buffer) under the main cache changes.

    Parameters
    ----------
    with_tier, without : iochar.analyze.cachesim.SimResult
        The same run with and without the tier.
    tier_bytes : int
        The tier's size [bytes].
    """
    span = with_tier.makespan_s
    busy = with_tier.cpu_busy_s / span if span > 0 else math.nan
    reads = with_tier.bytes_read
    disk = with_tier.disk_read_bytes + with_tier.prefetch_bytes
    disk_text = (
        f"; the disk served {fmt_bytes(disk)} of reads (on demand and read-ahead)" if reads else ""
    )
    return (
        f"A tier of {cache_size(tier_bytes)} under the main cache keeps the CPU busy "
        f"{fmt_pct(busy)} of the run (idle {fmt_s(with_tier.cpu_idle_s)}, against "
        f"{fmt_s(without.cpu_idle_s)} without it){disk_text}. The disk still peaks at "
        f"{fmt_rate(with_tier.peak_disk_bps)}: the writes still reach it in bursts."
    )


def recommendation(table: pd.DataFrame, label: str, *, hide: float = 0.9) -> str:
    """The smallest cache that hides ``hide`` of the job's I/O wait, and the disk's peak.

    The rule is :func:`iochar.analyze.cachesim.recommend`'s: against the run with the
    smallest cache and the first policy at the largest number of copies, the smallest
    cache (then the first policy) that hides at least ``hide`` of the I/O wait; when
    none does, the one that hides most.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`iochar.analyze.cachesim.sweep`.
    label : str
        The job in words, already escaped.
    hide : float, default 0.9
        Share of the I/O wait to hide.
    """
    if table is None or not len(table):
        return f"No simulation runs of {label} to recommend from."
    rec = recommend(table, hide=hide)
    if not len(rec):
        return f"{label[:1].upper() + label[1:]} never waits for I/O here: no cache is needed."
    best = rec.iloc[0]
    n = int(best["copies"])
    pol = _POLICY.get(best["policy"], str(best["policy"]))
    lead = "A cache of" if best["enough"] else "Even the best cache tried,"
    verb = "hides" if best["enough"] else "hides only"
    return (
        f"{lead} {cache_size(float(best['cache_bytes']))} {verb} "
        f"{fmt_pct(float(best['hidden_share']))} of the I/O wait of {label} "
        f"({_copies(n).replace('at once', 'at once,')} {pol}), from "
        f"{fmt_s(float(best['baseline_io_wait_s']))} to {fmt_s(float(best['io_wait_s']))}; "
        f"the disk still sees a peak of {fmt_rate(float(best['peak_disk_bps']))}."
    )
