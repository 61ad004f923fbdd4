"""Insight rules on blocking MPI-IO and on staging I/O (issue 19, item 1).

Topics ``blocking-io`` and ``staging-io``; every rule follows the grading contract of
:mod:`iochar.analyze.insights._rule`. Units: shares are fractions 0..1, sizes bytes,
times seconds.

Blocking MPI-IO (``BLOCKING-READ-1``, ``BLOCKING-WRITE-1``)
-----------------------------------------------------------
Drishti's M06/M07 ("Application could benefit from non-blocking (asynchronous)
reads/writes", WARN) fire whenever a job with an MPI-IO module made no non-blocking
read (write): drishti-io 0.8 ``drishti/handlers/handle_darshan.py:632-635`` sums
``MPIIO_NB_READS`` and ``MPIIO_NB_WRITES`` over the job's MPI-IO records and calls
``check_mpi_none_block_operation`` (``drishti/includes/module.py:1630``), which tests
``mpiio_nb_reads == 0`` (module.py:1641) and ``mpiio_nb_writes == 0`` (module.py:1666)
and nothing else: no time, no count. A job that reads 4 bytes through MPI-IO gets the
same warning as one that blocks for an hour.

iochar measures what asynchronous I/O could gain. Darshan's MPI-IO module (darshan-
runtime ``lib/darshan-mpiio.c``) adds the wall time of every read call -- the blocking
``MPI_File_read*`` (``MPIIO_INDEP_READS``, ``MPIIO_COLL_READS``), the split-collective
``*_begin`` (``MPIIO_SPLIT_READS``) and the non-blocking ``MPI_File_iread*``
(``MPIIO_NB_READS``) -- to ``MPIIO_F_READ_TIME``, and likewise for writes (plus
``MPI_File_sync``) to ``MPIIO_F_WRITE_TIME``; on a record shared by all ranks the
times are summed over the ranks. The *blocking read time per rank* is the job's
``MPIIO_F_READ_TIME`` summed over its MPI-IO records and divided by its process count,
when it made any blocking read (``INDEP + COLL > 0``), else 0 (every read is already
split or non-blocking). A job that mixes both also counts the time its non-blocking
calls took to post their requests: an upper bound. The measure is that time over the
job's run time (``jobs.runtime_s``): overlapping the reads with computation can hide at
most that share of the run (Amdahl's law), and at most the rest of the run, the time
not spent in MPI-IO (``overlap_bound_s``).

Staging I/O (``STAGING-1``)
---------------------------
Miller & Katz (1991, section 5.1) name three types of application I/O: required,
checkpoint and "staging I/Os ... done because the memory allocated to the problem is
insufficient to hold the entire problem ... the equivalent of paging": "the entire data
set is usually shuttled in and out of memory at least once per iteration", so, unlike
the other two types, its rate is continuous and high (their example: almost 25 MB/s
against 0.75 MB/s of required and 2 MB/s of checkpoint I/O). A larger memory removes
it. :func:`staging_io` measures, per job:

- the **share of the job's I/O bytes** (bytes read plus written on files) that went to
  the files :func:`iochar.analyze.classify.classify` labels ``staging`` (read and
  written, read after written, re-read or re-written at least 1.5 times their extent);
  and the share of the **I/O time** where it is known (per-operation durations, e.g.
  ``strace -T``; Darshan ``*_F_READ_TIME + *_F_WRITE_TIME``);
- the **peak live staging volume**: the most staging data the job held at once. A
  staging file's data is live from the start of its first write to the end of its last
  read (after that it is never read again); its size is its written extent (the highest
  byte offset written, ``offset + size``, or Darshan ``MAX_BYTE_WRITTEN + 1``; the
  file's extent when no offset is known). The peak is the largest sum of the sizes of
  the files live at one moment (a sweep over the intervals; one file ending when
  another starts do not overlap). A file's extent is its size at its last write, so
  the peak is an upper bound when a file grows while others are live.

The rule fires when staging is more than half of the job's bytes, and is only ``info``
when the peak live volume fits in a file cache (Miller & Katz section 6.2): the staging
I/O then already hits memory.

What cache would hide the wait (simulated)
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The peak live volume says how much memory would hold the staging data; Miller & Katz
(section 6, Figs. 6-8) also replayed their traces through a simulated buffer cache and
disk to see what cache size, with read-ahead and write-behind, keeps the CPU from
waiting. For a job the rule fires on (staging share above ``staging_share``) that has
per-operation records (strace, Darshan DXT, trace CSV/Parquet: rows in ``ops``),
:func:`staging_cache_sim` replays its operations with :mod:`iochar.analyze.cachesim`
(one copy; :func:`iochar.analyze.cachesim.sweep` over the caches 0, ``cache_bytes``,
the peak live volume rounded up to whole MW (1 MW = 8 MiB,
:data:`iochar.analyze.cachesim.MW`) and twice that, each with no read-ahead or
write-behind (``"none"``) and with both (``"both"``)) and
:func:`iochar.analyze.cachesim.recommend` names the smallest of those caches (then the
first policy) whose I/O wait is at most ``1 - sim_hide`` of the wait with no cache and
no policy; when none is, the run that hides most (``sim_enough`` 0). The evidence then
holds ``sim_cache_bytes`` [bytes], ``sim_read_ahead_write_behind`` (1: that run used
both), ``sim_hidden_share``, ``sim_io_wait_s`` and ``sim_baseline_io_wait_s`` [s] and
``sim_peak_disk_bps`` (highest 1 s disk rate of that run [bytes/s]), and the
recommendation quotes them. The simulator's disk and CPU are its defaults
(:class:`iochar.analyze.cachesim.DiskConfig`: a 10 MB/s disk with 2-15 ms positioning,
Miller & Katz's Cray DD-40), so the times are those of that model, not of the traced
machine; the cache size is what the trace's reuse pattern needs.

The simulator's cost grows with the operations and the bytes it replays: measured on
the demo's synthetic jobs (``iochar demo``), one run costs about 2.6 us per operation
plus 0.28 us per 4 KiB cache block moved, and a job takes six to eight runs. Jobs with
more than ``sim_max_ops`` operations (default 100,000: about 2 s of simulation per job
at the cap, plus the bytes) are not simulated. Every row says what happened in
numbers: ``simulated`` (1 simulated, 0 not, NaN when the rule did not fire),
``sim_ops`` (the job's operations, 0 when it is known only from Darshan counters) and
``sim_max_ops``; the recommendation says "not simulated: counters only" or "not
simulated: ... operations, above sim_max_ops" in words.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from iochar.analyze._query import query
from iochar.analyze.insights._rule import Param, Rule
from iochar.result import Table

__all__ = [
    "RULES",
    "BLOCKING_READ",
    "BLOCKING_WRITE",
    "STAGING",
    "staging_io",
    "staging_cache_sim",
    "sim_cache_sizes",
    "peak_live",
]

_JOB = "($job_id IS NULL OR job_id = $job_id)"

_DRISHTI = "drishti-io 4493988 drishti/includes/config.py:{line} ('{key}': {value})"
_MODULE = "drishti-io 0.8 drishti/includes/module.py"
_HANDLER = "drishti-io 0.8 drishti/handlers/handle_darshan.py"

_MILLER = (
    "Miller & Katz, 'Input/output behavior of supercomputing applications', Supercomputing '91"
)
_CARNS = "Carns et al., 'Understanding and improving computational science storage access "
_CARNS += "through continuous characterization', ACM TOS 7(3), 2011"


# -- blocking-io --------------------------------------------------------------------------

_BLOCKING_SQL = """
WITH c AS (
  SELECT job_id,
         sum(greatest(value, 0)) FILTER (WHERE counter = 'MPIIO_INDEP_{OPS}') AS indep,
         sum(greatest(value, 0)) FILTER (WHERE counter = 'MPIIO_COLL_{OPS}') AS coll,
         sum(greatest(value, 0)) FILTER (WHERE counter = 'MPIIO_SPLIT_{OPS}') AS split,
         sum(greatest(value, 0)) FILTER (WHERE counter = 'MPIIO_NB_{OPS}') AS nb,
         sum(greatest(value, 0)) FILTER (WHERE counter = 'MPIIO_F_{OP}_TIME') AS t,
         sum(greatest(value, 0)) FILTER (WHERE counter IN
           ('MPIIO_F_READ_TIME', 'MPIIO_F_WRITE_TIME', 'MPIIO_F_META_TIME')) AS t_all
  FROM module_counters
  WHERE module = 'MPI-IO' AND {job}
    AND counter IN ('MPIIO_INDEP_{OPS}', 'MPIIO_COLL_{OPS}', 'MPIIO_SPLIT_{OPS}',
                    'MPIIO_NB_{OPS}', 'MPIIO_F_READ_TIME', 'MPIIO_F_WRITE_TIME',
                    'MPIIO_F_META_TIME')
  GROUP BY job_id),
r AS (
  SELECT c.job_id, greatest(coalesce(j.nprocs, 1), 1) AS nprocs, j.runtime_s,
         coalesce(indep, 0) + coalesce(coll, 0) AS blocking,
         coalesce(split, 0) AS split, coalesce(nb, 0) AS nb, coalesce(t, 0) AS t,
         coalesce(t_all, 0) AS t_all
  FROM c JOIN jobs j USING (job_id)
  WHERE j.runtime_s > 0),
s AS (
  SELECT *, CASE WHEN blocking > 0 THEN t / nprocs ELSE 0 END AS per_rank FROM r)
SELECT job_id, nprocs::BIGINT AS nprocs, runtime_s,
       blocking::BIGINT AS blocking_{ops}, split::BIGINT AS split_{ops},
       nb::BIGINT AS nonblocking_{ops},
       t AS {op}_time_s,
       per_rank AS blocking_{op}_s_per_rank,
       per_rank / runtime_s AS blocking_{op}_share,
       t_all / nprocs AS mpiio_s_per_rank,
       least(per_rank, greatest(runtime_s - t_all / nprocs, 0)) AS overlap_bound_s
FROM s
"""


def _blocking_sql(op: str) -> str:
    ops = "READS" if op == "read" else "WRITES"
    return _BLOCKING_SQL.format(
        OPS=ops, OP=op.upper(), ops=ops.lower(), op=op, job=_JOB
    )  # constants only: nothing from the data is formatted in


_BLOCKING_SHARE = Param(
    "blocking_share",
    0.1,
    "share",
    "Drishti's share level: "
    + _DRISHTI.format(line=40, key="small_requests", value=0.1)
    + ", and the same 0.1 at :42 ('misaligned_requests') and :48 ('interface_stdio'); "
    "Drishti's own M06/M07 have no level at all (module.py:1641, :1666)",
)

_BLOCKING_SHARE_HIGH = Param(
    "blocking_share_high",
    0.3922,
    "share",
    f"{_CARNS}, Table VI: 39.22% of the run in I/O (all I/O, not only blocking) is the "
    "highest average of the ten most I/O-intensive projects on Intrepid (Energy1; "
    "EarthScience 36.18%); blocking time above it is more than the most I/O-bound "
    "production project spent in all its I/O",
)

_BLOCKING_SECONDS = Param(
    "blocking_seconds_absolute",
    1.0,
    "s",
    "iochar: at most one second per rank to hide is tiny: the resolution of the run time "
    "of older Darshan logs, whose job start and end are whole seconds (libdarshan-util "
    "gives end - start + 1 s: 1 s for the release logs up to 3.4.0 in data/darshan), "
    "and far below the several minutes a large job takes to start and stop, beside which "
    "Carns et al. 2011 Sec. 2.3 call Darshan's 7 s shutdown 'not likely to "
    "be noticeable' (only info)",
)


def _blocking_rule(op: str) -> Rule:
    code = "M06" if op == "read" else "M07"
    line = 1641 if op == "read" else 1666
    call = (
        "MPI_File_iread / MPI_File_read_all_begin"
        if op == "read"
        else ("MPI_File_iwrite / MPI_File_write_all_begin")
    )
    return Rule(
        code=f"BLOCKING-{op.upper()}-1",
        topic="blocking-io",
        title=f"Much of the run spent in blocking MPI-IO {op}s",
        sql=_blocking_sql(op),
        measure=f"blocking_{op}_share",
        warn_at="blocking_share",
        high_at="blocking_share_high",
        count=f"blocking_{op}_s_per_rank",
        min_count="blocking_seconds_absolute",
        params=(_BLOCKING_SHARE, _BLOCKING_SHARE_HIGH, _BLOCKING_SECONDS),
        recommendation=f"Overlap the {op}s with computation: post them with non-blocking "
        f"or split-collective calls ({call}) and wait only when the data is needed (with "
        "HDF5, the asynchronous VOL connector). overlap_bound_s is the most this can save "
        "per rank: the blocking time, at most the time the ranks spend outside MPI-IO.",
        reference=f"Drishti {code} ({_MODULE}:{line}, check_mpi_none_block_operation; "
        f"{_HANDLER}:632-635); Darshan MPIIO_INDEP/COLL/SPLIT/NB_{op.upper()}S and "
        f"MPIIO_F_{op.upper()}_TIME (darshan-runtime lib/darshan-mpiio.c)",
        needs="Darshan MPI-IO counters (module_counters, module MPI-IO) and the run time",
    )


BLOCKING_READ = _blocking_rule("read")
BLOCKING_WRITE = _blocking_rule("write")


# -- staging-io ---------------------------------------------------------------------------

# Per (job, file) from one layer of ops (analyze._sql.LAYER_OPS): when the data is
# live (first write start, last read end), its written extent and the I/O time.
_OPS_FACTS_SQL = """
WITH layer AS ({layer})
SELECT job_id, file_id,
       min(t_start) FILTER (WHERE op = 'write' AND size > 0) AS first_write_t,
       max(t_end) FILTER (WHERE op = 'read' AND size > 0) AS last_read_t,
       max("offset" + size) FILTER (WHERE op = 'write' AND size > 0) AS written_extent,
       sum(greatest(t_end - t_start, 0)) AS io_time_s
FROM layer
WHERE list_contains($jobs, job_id) AND file_id IS NOT NULL
GROUP BY job_id, file_id
"""

# The same from Darshan counters, with analyze.fileio's layer rule: a file's POSIX and
# STDIO records (disjoint call families), its MPI-IO record only when it has neither.
_COUNTER_FACTS_SQL = """
WITH s0 AS (
  SELECT *, bool_or(module IN ('POSIX', 'STDIO')) OVER (PARTITION BY job_id, file_id) AS low
  FROM file_stats
  WHERE list_contains($jobs, job_id) AND module IN ('POSIX', 'STDIO', 'MPI-IO')),
s AS (SELECT * FROM s0 WHERE module IN ('POSIX', 'STDIO') OR NOT low)
SELECT job_id, file_id,
       min(first_write_t) FILTER (WHERE writes > 0) AS first_write_t,
       max(last_read_t) FILTER (WHERE reads > 0) AS last_read_t,
       max(max_byte_written) FILTER (WHERE bytes_written > 0) + 1 AS written_extent,
       CASE WHEN count(read_time) + count(write_time) > 0
            THEN coalesce(sum(read_time), 0) + coalesce(sum(write_time), 0) END AS io_time_s
FROM s
GROUP BY job_id, file_id
"""


def peak_live(start: np.ndarray, end: np.ndarray, size: np.ndarray) -> tuple[float, float]:
    """Largest total size of the intervals live at one moment, and that moment.

    Parameters
    ----------
    start, end : numpy.ndarray
        When each item becomes live and stops being live [s]; ``end < start`` is
        taken as ``end = start``.
    size : numpy.ndarray
        Size of each item [bytes].

    Returns
    -------
    tuple of float
        ``(peak, t)``: the peak [bytes] and the first time it is reached [s]
        (``(0.0, nan)`` with no items). An interval ending when another starts does
        not overlap it.

    Examples
    --------
    >>> peak_live(np.array([0.0, 1.0, 5.0]), np.array([2.0, 3.0, 6.0]), np.array([4, 2, 5]))
    (6.0, 1.0)
    >>> peak_live(np.array([0.0, 2.0]), np.array([2.0, 3.0]), np.array([4, 2]))
    (4.0, 0.0)
    """
    start = np.asarray(start, np.float64)
    end = np.maximum(np.asarray(end, np.float64), start)
    size = np.asarray(size, np.float64)
    if len(start) == 0:
        return 0.0, float("nan")
    t = np.r_[start, end]
    delta = np.r_[size, -size]
    # at equal times, ends (0) before starts (1): touching intervals do not overlap
    order = np.lexsort((np.r_[np.ones(len(start)), np.zeros(len(end))], t))
    live = np.cumsum(delta[order])
    k = int(np.argmax(live))
    return float(live[k]), float(t[order][k])


_STAGING_COLS = [
    "job_id", "files", "staging_files", "io_bytes", "staging_bytes", "staging_share",
    "io_time_s", "staging_time_s", "staging_time_share", "peak_live_bytes", "peak_live_t_s",
    "largest_staging_bytes", "cache_bytes", "runtime_s",
]  # fmt: skip


def staging_io(store, *, job_id: int | None = None, cache_bytes: float = 16 * 2**20) -> Table:
    """Staging I/O per job: its share of the bytes and time, and the peak live volume.

    Definitions (Miller & Katz 1991, section 5.1) and the computation are in the
    module's description (:mod:`iochar.analyze.insights.rules_more`).

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        Only this job.
    cache_bytes : float, default 16 MiB
        File cache size [bytes], reported beside the peak (the rule's ``cache_bytes``).

    Returns
    -------
    iochar.result.Table
        One row per job with file reads or writes: ``files`` and ``staging_files``
        (count), ``io_bytes`` and ``staging_bytes`` (read + written) [bytes],
        ``staging_share`` (of the bytes), ``io_time_s`` and ``staging_time_s`` [s] and
        ``staging_time_share`` (NaN when the durations are unknown), ``peak_live_bytes``
        [bytes] and ``peak_live_t_s`` (when it is first reached, since job start [s]),
        ``largest_staging_bytes`` (largest written extent of one staging file)
        [bytes], ``cache_bytes`` [bytes], ``runtime_s`` [s]. ``sql``: the queries
        behind the intervals and times; ``evidence["needs"]``: job id to what is
        missing for a job that has no row.
    """
    from iochar.analyze._sql import LAYER_OPS
    from iochar.analyze.insights._shared import classified
    from iochar.result import join_sql

    labels = classified(store, job_id=job_id)
    jobs = query(
        store,
        "SELECT job_id, runtime_s FROM jobs WHERE ($job_id IS NULL OR job_id = $job_id) "
        "ORDER BY job_id",
        {"job_id": job_id},
    ).df()
    ops_sql = _OPS_FACTS_SQL.format(layer=LAYER_OPS)
    sql = join_sql(ops_sql, _COUNTER_FACTS_SQL)
    needs = {
        int(j): "files with reads or writes (per-operation records or Darshan counters) "
        "that iochar.analyze.classify can label"
        for j in jobs["job_id"]
    }
    labels = labels[(labels["bytes_read"] > 0) | (labels["bytes_written"] > 0)]
    if labels.empty:
        return Table(pd.DataFrame(columns=_STAGING_COLS), evidence={"needs": needs}, sql=sql)
    traced = labels["basis"] == "ops"
    parts = []
    for mask, q in ((traced, ops_sql), (~traced, _COUNTER_FACTS_SQL)):
        ids = sorted({int(j) for j in labels.loc[mask, "job_id"]})
        if ids:
            parts.append(query(store, q, {"jobs": ids}).df())
    facts = pd.concat([p for p in parts if len(p)], ignore_index=True) if parts else None
    f = labels[["job_id", "file_id", "class", "bytes_read", "bytes_written", "extent_bytes"]]
    f = f.astype({"job_id": "int64", "file_id": "int64"})
    if facts is not None and len(facts):
        facts = facts.astype({"job_id": "int64", "file_id": "int64"})
        f = f.merge(facts, on=["job_id", "file_id"], how="left")
    else:
        for c in ("first_write_t", "last_read_t", "written_extent", "io_time_s"):
            f[c] = np.nan
    runtime = dict(zip(jobs["job_id"].astype("int64"), jobs["runtime_s"], strict=True))
    rows: list[dict[str, Any]] = []
    for jid, g in f.groupby("job_id", sort=True):
        jid = int(jid)
        needs.pop(jid, None)
        moved = (g["bytes_read"] + g["bytes_written"]).astype("float64")
        st = (g["class"] == "staging").to_numpy()
        io_bytes = float(moved.sum())
        staging_bytes = float(moved[st].sum())
        tm = g["io_time_s"].astype("float64")
        io_time = float(tm.sum()) if tm.notna().any() else float("nan")
        staging_time = float(tm[st].sum()) if tm[st].notna().any() else 0.0
        if not io_time > 0:
            io_time, staging_time = float("nan"), float("nan")
        rt = runtime.get(jid)
        rt = float(rt) if rt is not None and rt == rt else float("nan")
        s = g[st]
        size = s["written_extent"].astype("float64")
        size = size.where(size > 0, s["extent_bytes"].astype("float64")).fillna(0.0)
        first = s["first_write_t"].astype("float64").fillna(0.0).to_numpy()
        last = s["last_read_t"].astype("float64")
        last = last.fillna(rt if rt == rt else float(np.nanmax(np.r_[first, 0.0]))).to_numpy()
        peak, at = peak_live(first, last, size.to_numpy())
        rows.append(
            {
                "job_id": jid,
                "files": len(g),
                "staging_files": int(st.sum()),
                "io_bytes": io_bytes,
                "staging_bytes": staging_bytes,
                "staging_share": staging_bytes / io_bytes if io_bytes > 0 else 0.0,
                "io_time_s": io_time,
                "staging_time_s": staging_time,
                "staging_time_share": staging_time / io_time if io_time > 0 else float("nan"),
                "peak_live_bytes": peak,
                "peak_live_t_s": at,
                "largest_staging_bytes": float(size.max()) if len(size) else 0.0,
                "cache_bytes": float(cache_bytes),
                "runtime_s": rt,
            }
        )
    out = pd.DataFrame(rows, columns=_STAGING_COLS)
    return Table(out, evidence={"needs": needs}, params={"cache_bytes": cache_bytes}, sql=sql)


_SIM_COLS = [
    "job_id", "simulated", "sim_ops", "sim_max_ops", "sim_cache_bytes",
    "sim_read_ahead_write_behind", "sim_enough", "sim_hidden_share", "sim_io_wait_s",
    "sim_baseline_io_wait_s", "sim_peak_disk_bps", "sim_peak_live_mw_bytes", "sim_hide",
]  # fmt: skip

#: Operations per job of the simulator's replay (its own query: one layer per job).
_SIM_OPS_SQL = """
SELECT job_id, count(*) AS ops FROM ({ops}) GROUP BY job_id
"""


def sim_cache_sizes(cache_bytes: float, peak_live_bytes: float) -> list[int]:
    """The caches :func:`staging_cache_sim` simulates [bytes], ascending, without repeats.

    No cache, the file cache ``cache_bytes``, the peak live volume rounded up to whole
    MW (:data:`iochar.analyze.cachesim.MW`, 8 MiB; at least 1 MW) and twice that.

    Examples
    --------
    >>> sim_cache_sizes(16 * 2**20, 32 * 2**20 + 1)
    [0, 16777216, 41943040, 83886080]
    >>> sim_cache_sizes(16 * 2**20, 65536)
    [0, 8388608, 16777216]
    """
    from iochar.analyze.cachesim import MW

    mw = max(1, math.ceil(float(peak_live_bytes) / MW)) * MW
    return sorted({0, int(cache_bytes), mw, 2 * mw})


def staging_cache_sim(
    store,
    rows: pd.DataFrame,
    *,
    staging_share: float = 0.5,
    max_ops: float = 100_000,
    hide: float = 0.9,
) -> Table:
    """Simulated cache that hides a staging job's I/O wait (Miller & Katz 1991, section 6).

    The computation and its limits are in the module's description
    (:mod:`iochar.analyze.insights.rules_more`).

    Parameters
    ----------
    store : iochar.Store
        The database.
    rows : pandas.DataFrame
        :func:`staging_io` rows (``job_id``, ``staging_share``, ``peak_live_bytes``,
        ``cache_bytes``).
    staging_share : float, default 0.5
        Only jobs whose staging share is above it are simulated (the rule's level).
    max_ops : float, default 100000
        Jobs with more operations are not simulated [count].
    hide : float, default 0.9
        Share of the I/O wait the named cache must hide, in (0, 1].

    Returns
    -------
    iochar.result.Table
        One row per job of ``rows``: ``simulated`` (1, 0, NaN when the share is at or
        below ``staging_share``), ``sim_ops`` (operations replayed or that would be; 0:
        counters only) and ``sim_max_ops`` [count], ``sim_cache_bytes`` [bytes],
        ``sim_read_ahead_write_behind`` (1 when the run named used read-ahead and
        write-behind), ``sim_enough`` (1 when it hides ``hide``), ``sim_hidden_share``,
        ``sim_io_wait_s`` and ``sim_baseline_io_wait_s`` [s], ``sim_peak_disk_bps``
        [bytes/s], ``sim_peak_live_mw_bytes`` (the peak rounded up to whole MW)
        [bytes], ``sim_hide``. NaN where not simulated. ``sql``: the count of the
        jobs' operations and the simulator's query, those that ran.
    """
    from iochar.result import join_sql

    nan = float("nan")
    fire = rows[rows["staging_share"] > staging_share]
    ids = [int(j) for j in fire["job_id"]]
    counts: dict[int, int] = {}
    q = ops_sql = None
    if ids:  # the simulator (about 14 ms to import) only when a job is simulated
        from iochar.analyze import cachesim
        from iochar.analyze.cachesim.trace import OPS_SQL as ops_sql

        q = _SIM_OPS_SQL.format(ops=ops_sql)  # constants only
        counts = {int(j): int(n) for j, n in query(store, q, {"job_ids": ids}).fetchall()}
    out, ran = [], False
    for r in rows.itertuples(index=False):
        jid = int(r.job_id)
        row: dict[str, Any] = dict.fromkeys(_SIM_COLS, nan)
        row.update(job_id=jid, sim_max_ops=float(max_ops), sim_hide=float(hide))
        if jid in ids:
            n = counts.get(jid, 0)
            row.update(simulated=0.0, sim_ops=float(n))
            if 0 < n <= max_ops:
                sizes = sim_cache_sizes(r.cache_bytes, r.peak_live_bytes)
                grid = cachesim.sweep(
                    store, jid, cache_sizes=sizes, policies=["none", "both"], copies=[1]
                )
                ran = True
                row.update(simulated=1.0, sim_peak_live_mw_bytes=float(sizes[-1] // 2))
                best = cachesim.recommend(grid, hide=hide)
                row["sim_baseline_io_wait_s"] = float(best.evidence["baseline_io_wait_s"])
                if len(best):
                    b = best.iloc[0]
                    row.update(
                        sim_cache_bytes=float(b["cache_bytes"]),
                        sim_read_ahead_write_behind=float(b["policy"] == "both"),
                        sim_enough=float(bool(b["enough"])),
                        sim_hidden_share=float(b["hidden_share"]),
                        sim_io_wait_s=float(b["io_wait_s"]),
                        sim_peak_disk_bps=float(b["peak_disk_bps"]),
                    )
        out.append(row)
    frame = pd.DataFrame(out, columns=_SIM_COLS)
    prm = {"staging_share": staging_share, "max_ops": max_ops, "hide": hide}
    return Table(frame, params=prm, sql=join_sql(q, ops_sql if ran else None))


def _staging_rows(store, job_id: int | None, values: dict[str, float]) -> Table:
    from iochar.result import join_sql

    base = staging_io(store, job_id=job_id, cache_bytes=values["cache_bytes"])
    if not len(base):
        return base
    sim = staging_cache_sim(
        store,
        base,
        staging_share=values["staging_share"],
        max_ops=values["sim_max_ops"],
        hide=values["sim_hide"],
    )
    frame = pd.DataFrame(base).merge(pd.DataFrame(sim), on="job_id", how="left")
    return Table(
        frame,
        evidence=dict(base.evidence),
        params={**base.params, **sim.params},
        sql=join_sql(base.sql, sim.sql),
    )


_SIM_TEXT = {
    "enough": " Replaying its {sim_ops:,.0f} operations through Miller & Katz's cache "
    "simulator (section 6; a 10 MB/s disk), a cache of {sim_cache_bytes:bytes}{policy} "
    "hides {sim_hidden_share:.0%} of the I/O wait ({sim_baseline_io_wait_s:.3g} s without "
    "a cache, {sim_io_wait_s:.3g} s with it); the disk then peaks at "
    "{sim_peak_disk_bps:bytes}/s.",
    "short": " Replaying its {sim_ops:,.0f} operations through Miller & Katz's cache "
    "simulator (section 6; a 10 MB/s disk), no simulated cache up to twice the peak hides "
    "{sim_hide:.0%} of the I/O wait: the best, {sim_cache_bytes:bytes}{policy}, hides "
    "{sim_hidden_share:.0%} ({sim_baseline_io_wait_s:.3g} s without a cache, "
    "{sim_io_wait_s:.3g} s with it); overlap the staging with computation as well.",
    "no_wait": " Replaying its {sim_ops:,.0f} operations through Miller & Katz's cache "
    "simulator, the job never waits on I/O even without a cache.",
    "counters": " Not simulated: counters only (no per-operation records to replay).",
    "cap": " Not simulated: {sim_ops:,.0f} operations, above sim_max_ops ({sim_max_ops:,.0f}).",
}


class _StagingRule(Rule):
    """STAGING-1: :class:`Rule` whose advice adds what the cache simulator found."""

    def advice(self, row):
        """The recommendation, then one sentence on the simulation (see the module)."""
        text = super().advice(row)
        done, n = row.get("simulated"), row.get("sim_ops")
        if done is None or done != done:
            return text
        if done == 1:
            if not (row.get("sim_baseline_io_wait_s") or 0) > 0:
                key = "no_wait"
            else:
                key = "enough" if row.get("sim_enough") == 1 else "short"
        else:
            key = "counters" if not n else "cap"
        policy = (
            " with read-ahead and write-behind"
            if row.get("sim_read_ahead_write_behind") == 1
            else " (no read-ahead or write-behind needed)"
        )
        sim = Rule(
            self.code, self.topic, self.title, "", self.measure, self.warn_at,
            _SIM_TEXT[key].replace("{policy}", policy), self.reference, self.needs,
        )  # fmt: skip
        return text + sim.advice(row)


_SIM_HIDE = 0.9

STAGING = _StagingRule(
    code="STAGING-1",
    topic="staging-io",
    title="Most of the job's I/O stages data a larger memory would hold (out-of-core I/O)",
    sql="",
    compute=_staging_rows,
    measure="staging_share",
    warn_at="staging_share",
    high_at="staging_share_high",
    count="peak_live_bytes",
    min_count="cache_bytes",
    params=(
        Param(
            "staging_share",
            0.5,
            "share",
            f"{_MILLER}, section 5.1: staging I/O runs at a rate 'far more than either the "
            "compulsory I/O data rate or the checkpoint I/O data rate'; above half the "
            "job's bytes it outweighs the other two types together",
        ),
        Param(
            "staging_share_high",
            25.0 / 27.75,
            "share",
            f"{_MILLER}, section 5.1's example program: almost 25 MB/s of staging beside "
            "2 MB/s of checkpoint and 0.75 MB/s of required I/O, staging 90.1% of its bytes",
        ),
        Param(
            "cache_bytes",
            16 * 2**20,
            "bytes",
            f"{_MILLER}, section 6.2: a processor's share of the main-memory file cache, "
            "0.5 to 2 MW (at most 2 MW of 8-byte words, 16 MiB); staging data that fits is "
            "already served from the cache (only info). Set it to your node's page cache",
        ),
        Param(
            "sim_max_ops",
            100_000,
            "count",
            "iochar: cost of iochar.analyze.cachesim, measured on the demo's synthetic jobs: "
            "per run about 2.6 us per operation plus 0.28 us per 4 KiB block moved, six to "
            "eight runs per job: about 2 s per job at the cap (plus the bytes); larger jobs "
            "are not simulated (said in the evidence and the advice)",
        ),
        Param(
            "sim_hide",
            _SIM_HIDE,
            "share",
            "iochar.analyze.cachesim.recommend's default (hide=0.9): the cache named must "
            "remove nine tenths of the simulated I/O wait, Miller & Katz section 6.4's "
            "question of what keeps the CPU from waiting",
        ),
    ),
    recommendation="A memory (or node-local burst buffer, tmpfs, SSD tier) holding "
    "{peak_live_bytes:bytes} of staging data at once -- the peak live volume -- would "
    "remove this job's out-of-core I/O ({staging_bytes:bytes}, {staging_share:.0%} of its "
    "bytes): run it where the data set fits in memory (more nodes or memory per rank), or "
    "keep the staging files on node-local storage; otherwise read ahead and write behind "
    "(asynchronous I/O) so the staging overlaps computation.",
    reference=f"{_MILLER}, sections 5.1 and 6.2-6.4; iochar.analyze.classify",
    needs="files with reads or writes that iochar.analyze.classify can label",
)

#: The rules of this module, in report order.
RULES: tuple[Rule, ...] = (BLOCKING_READ, BLOCKING_WRITE, STAGING)
