"""Job-level I/O metrics of Carns et al. (2011): MiB/s/CN, Table VI, Figs. 3, 5 and 12.

Carns et al. (2011) compare production jobs of every size by a few numbers
per job that Darshan's counters give (section 2.4, Table VI), and describe
them by their interfaces (Fig. 3(a), Table II), their file-sharing pattern
(Fig. 3(b), Fig. 5) and their access sizes (Figs. 10 and 12).
:func:`job_metrics` computes all of them for every job in the store, in two
set-wise DuckDB queries: one over Darshan counters (``file_stats``,
``access_sizes``, and ``module_counters`` for the open timestamps of the
section 2.4 fallback), one over traced operations (``ops``).

Basis (which records a job is measured from, column ``basis``)
--------------------------------------------------------------
``basis="auto"`` uses counters for jobs with ``file_stats`` rows and ops for
the others (``"counters"`` or ``"ops"`` force one; a job without such records
gets NaN and a note). From counters, only one I/O layer is counted so bytes
and time are not counted twice (MPI-IO and HDF5 calls end up as POSIX calls
underneath; STDIO is its own layer): POSIX and STDIO records, else MPI-IO,
else PNETCDF_VAR, else H5D (``modules=`` overrides). From ops, a job with
DXT_POSIX segments is measured on that layer only (DXT_MPIIO repeats it a
layer up), as in :mod:`iochar.analyze.fileio`. Records of Darshan's
``<STDIN>``, ``<STDOUT>`` and ``<STDERR>`` streams are left out everywhere
(Darshan did not see them in the paper's study).

Metrics (one row per job; the paper's name in brackets)
-------------------------------------------------------
``slowest_io_s`` [I/O time by slowest rank]
    Counters: the slowest rank's summed read, write and metadata time over
    the files only it opened, plus, for each file shared by all ranks (one
    Darshan record, rank NULL), the slowest rank's time in it
    (``F_SLOWEST_RANK_TIME``, Darshan >= 2.0) -- libdarshan-util's
    ``agg_time_by_slowest``, except that negative (clock-skewed) times,
    which the loader keeps as NULL, count as 0. A shared record without that time falls back on
    the paper's estimate: first ``open()`` to the end of the last I/O
    (section 2.4). Ops: the largest summed call time of any rank. The rule
    used is in ``time_rule``; the slowest rank of the unique files in
    ``slowest_rank``.
``mib_s`` and ``mib_s_cn`` [MiB/s/CN]
    Bytes read and written / 2**20 / ``slowest_io_s``, and that per compute
    node (section 2.4's equation). Nodes are ``jobs.nnodes`` (Darshan knows
    them only from DXT host names) or ``ceil(nprocs / procs_per_node)``;
    ``nodes_basis`` says which, and ``mib_s_cn`` is NaN without either.
``io_time_pct`` [percent of run time in I/O]
    100 * ``slowest_io_s`` / ``runtime_s`` (can pass 100 when ranks overlap
    I/O with threads; not clipped).
``meta_time_pct`` [cumulative md cost]
    100 * metadata time / (read + write + metadata time), summed over all
    ranks and files. Ops: calls other than read and write are metadata.
``files_per_proc``, ``creates_per_proc`` [files / creates per proc]
    Files opened / ``nprocs``. Darshan 3 counts no creates (its POSIX records
    have no create counter; Darshan 2's size-at-open is gone) and traces
    carry no open flags, so ``creates_per_proc`` is *estimated* as files
    written per process: section 4.3 found 99.3% of written files were
    created by the job or empty before it (``creates_basis`` says so).
``seq_pct`` [seq.], ``aligned_pct`` [aligned]
    Share of reads and writes at a higher offset than the previous one's
    last byte on the same (rank, file) (Darshan's ``SEQ_READS``/``WRITES``:
    the first access is sequential unless at offset 0), and of reads and
    writes at a multiple of the file alignment (``1 - FILE_NOT_ALIGNED /
    (READS + WRITES)``; ops: of ``alignment_bytes``). Only POSIX records have
    these counters: NaN for STDIO-only or MPI-IO-only jobs.
``mib_per_proc`` [MiB per proc]
    (bytes read + written) / 2**20 / ``nprocs``.
``sharing`` [N:N, N:1, N:M; Figs. 3(b) and 5]
    Each file is *unique* (one rank), *shared* (all ranks: a reduced Darshan
    record, or every rank in the ops) or *partially shared*. A job's pattern
    is the kind of file that moved most of its bytes, read with the number
    of ranks that moved data through unique files: unique files from every
    rank are ``N:N``, from a subset ``N:M`` (section 5.2: "the first 512 MPI
    ranks performed all of the I/O"), from a single rank ``N:1`` (rank-0
    I/O sits on Fig. 5's N:1 trend); shared files are ``N:1`` and partially
    shared ones ``N:M``. ``"1:1"`` for one process, ``"none"`` without I/O.
    A reduced Darshan record hides which ranks moved data: ``io_ranks`` is
    then ``nprocs`` (an upper bound).
``rank0_io`` [rank 0 I/O, sections 4.1 and 5.2]
    nprocs > 1 and rank 0 moved every byte.
``interfaces`` [Table II]
    Interfaces with records: POSIX, STDIO, MPI-IO, HDF5, PnetCDF (ops: MPI-IO
    for DXT_MPIIO segments, else POSIX, as traces are of system calls).

Access sizes (:attr:`JobMetrics.sizes`, Figs. 10 and 12) are counted in
Darshan's bins (0-100 bytes, 100-1K, 1K-10K, 10K-100K, 100K-1M, 1M-4M,
4M-10M, 10M-100M, 100M-1G, 1G+): POSIX histograms (section 4.4), else those
of MPI-IO, H5D or PNETCDF_VAR; from ops, every read and write.

Tables over the metrics
-----------------------
:func:`project_table` is Table VI (section 5): the means per project of the
jobs that :func:`large_jobs` keeps (at least 1,024 processes and 500 MiB read
and written). :func:`sharing_table` counts jobs, processes and data per
file-sharing pattern (Figs. 3(b) and 5); :func:`size_histogram` and
:func:`size_table` give each project's access sizes (Fig. 12), long and wide.

Units: bytes, seconds; ``MiB`` = 2**20 bytes; ``_pct`` columns are percent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from iochar._validation import check_choice, check_int
from iochar.analyze._query import query
from iochar.analyze._sql import STD_STREAMS, has_dxt_posix, one_layer, timed
from iochar.errors import ParameterError
from iochar.result import Result, Table, join_sql

__all__ = [
    "JobMetrics",
    "job_metrics",
    "project_table",
    "large_jobs",
    "sharing_table",
    "size_histogram",
    "size_table",
    "interface_table",
    "api_table",
    "size_cdf",
    "io_cost",
    "volume_by_mount",
    "INTERFACES",
    "SIZE_BINS",
    "UNKNOWN",
]

MiB = float(1 << 20)
GiB = float(1 << 30)

#: Label of the jobs whose project column (``by``) is missing, in
#: :func:`sharing_table` and :func:`size_table`.
UNKNOWN = "(unknown)"

#: Order of the file-sharing patterns in :func:`sharing_table` (ties in job counts).
_PATTERNS = ("N:N", "N:M", "N:1", "1:1", "none")

#: Darshan's access-size bins as [lo, hi) bytes (hi None: unbounded) with the
#: paper's labels (Fig. 12).
SIZE_BINS: tuple[tuple[str, int, int | None], ...] = (
    ("0-100", 0, 101),
    ("100-1K", 101, 1025),
    ("1K-10K", 1025, 10241),
    ("10K-100K", 10241, 102401),
    ("100K-1M", 102401, 1048577),
    ("1M-4M", 1048577, 4194305),
    ("4M-10M", 4194305, 10485761),
    ("10M-100M", 10485761, 104857601),
    ("100M-1G", 104857601, 1073741825),
    ("1G+", 1073741825, None),
)


_JOBS_SQL = """
SELECT j.job_id, j.app, j."user", j.nprocs, j.nnodes, j.runtime_s, j.start_ts,
       EXISTS (SELECT 1 FROM file_stats s WHERE s.job_id = j.job_id) AS has_counters,
       EXISTS (SELECT 1 FROM ops o WHERE o.job_id = j.job_id) AS has_ops
FROM jobs j
WHERE $job_id IS NULL OR j.job_id = $job_id
ORDER BY j.job_id
"""

#: First-open timestamps of shared records, for the section 2.4 estimate.
_OPENED = """opened AS (
  SELECT mc.job_id, mc.file_id, mc.module, min(mc.value) FILTER (WHERE mc.value > 0) AS open_t
  FROM module_counters mc
  WHERE mc.job_id IN (SELECT unnest($fallback_jobs)) AND mc.rank IS NULL
    AND suffix(mc.counter, '_F_OPEN_START_TIMESTAMP')
  GROUP BY ALL
),"""
_NOT_OPENED = """opened AS (
  SELECT NULL::BIGINT AS job_id, NULL::BIGINT AS file_id, NULL::VARCHAR AS module,
         NULL::DOUBLE AS open_t
  WHERE $fallback_jobs IS NULL
),"""

# Counters: one layer per job; per-rank sums for files a rank opened alone;
# per shared record its slowest rank's time (or the section 2.4 estimate).
#: Per job: files and bytes by kind (unique / shared / partial), over a subquery
#: of ``per_file`` rows with a ``kind`` column that the next lines give.
_FILE_KINDS = """  SELECT job_id,
         count(*) FILTER (WHERE kind = 'unique') AS unique_files,
         count(*) FILTER (WHERE kind = 'shared') AS shared_files,
         count(*) FILTER (WHERE kind = 'partial') AS partial_files,
         coalesce(sum(moved) FILTER (WHERE kind = 'unique'), 0) AS unique_bytes,
         coalesce(sum(moved) FILTER (WHERE kind = 'shared'), 0) AS shared_bytes,
         coalesce(sum(moved) FILTER (WHERE kind = 'partial'), 0) AS partial_bytes
  FROM (
"""

_COUNTERS_SQL = f"""
WITH j AS (SELECT job_id, nprocs FROM jobs WHERE job_id IN (SELECT unnest($jobs))),
s0 AS (
  SELECT s.job_id, s.file_id, s.rank, s.module, s.bytes_read, s.bytes_written, s.reads,
         s.writes, s.seq_reads, s.seq_writes, s.file_not_aligned, s.read_time, s.write_time,
         s.meta_time, s.slowest_rank_time, s.first_io_t, s.last_io_t, j.nprocs
  FROM file_stats s JOIN j USING (job_id)
  LEFT JOIN files f ON f.job_id = s.job_id AND f.file_id = s.file_id
  WHERE f.path IS NULL OR f.path NOT IN {STD_STREAMS}
),
mods AS (
  SELECT job_id,
         bool_or(module = 'POSIX') AS posix, bool_or(module = 'STDIO') AS stdio,
         bool_or(module = 'MPI-IO') AS mpiio, bool_or(module IN ('H5F', 'H5D')) AS hdf5,
         bool_or(module IN ('PNETCDF_FILE', 'PNETCDF_VAR')) AS pnetcdf,
         CASE WHEN $modules IS NOT NULL THEN $modules::VARCHAR[]
              WHEN bool_or(module IN ('POSIX', 'STDIO')) THEN ['POSIX', 'STDIO']
              WHEN bool_or(module = 'MPI-IO') THEN ['MPI-IO']
              WHEN bool_or(module = 'PNETCDF_VAR') THEN ['PNETCDF_VAR']
              WHEN bool_or(module = 'H5D') THEN ['H5D']
              ELSE []::VARCHAR[] END AS layer
  FROM s0 GROUP BY job_id
),
s AS (
  SELECT s0.*,
         coalesce(read_time, 0) + coalesce(write_time, 0) + coalesce(meta_time, 0) AS t_io,
         coalesce(bytes_read, 0) + coalesce(bytes_written, 0) AS moved
  FROM s0 JOIN mods USING (job_id)
  WHERE list_contains(mods.layer, s0.module)
),
{_OPENED}
rec AS (
  SELECT s.*,
         s.rank IS NULL AND s.slowest_rank_time IS NULL AS fallback,
         CASE WHEN s.rank IS NULL THEN coalesce(
           s.slowest_rank_time,
           greatest(s.last_io_t - coalesce(o.open_t, s.first_io_t), 0),
           s.t_io) END AS t_shared
  FROM s LEFT JOIN opened o
    ON o.job_id = s.job_id AND o.file_id = s.file_id AND o.module = s.module
),
by_rank AS (
  SELECT job_id, rank, sum(t_io) AS t FROM rec WHERE rank IS NOT NULL GROUP BY ALL
),
uniq AS (
  SELECT job_id, max(t) AS unique_io_s, -max({{'t': t, 'r': -rank}}).r AS slowest_rank
  FROM by_rank GROUP BY job_id
),
per_file AS (
  SELECT job_id, file_id, any_value(nprocs) AS nprocs, bool_or(rank IS NULL) AS reduced,
         count(DISTINCT rank) AS nranks, sum(moved) AS moved
  FROM rec GROUP BY job_id, file_id
),
cats AS (
{_FILE_KINDS}    SELECT *, CASE WHEN reduced OR nranks >= nprocs THEN 'shared'
                   WHEN nranks <= 1 THEN 'unique' ELSE 'partial' END AS kind
    FROM per_file
  ) GROUP BY job_id
),
agg AS (
  SELECT job_id,
         coalesce(sum(bytes_read), 0) AS bytes_read,
         coalesce(sum(bytes_written), 0) AS bytes_written,
         coalesce(sum(reads), 0) AS reads, coalesce(sum(writes), 0) AS writes,
         coalesce(sum(read_time), 0) AS read_s, coalesce(sum(write_time), 0) AS write_s,
         coalesce(sum(meta_time), 0) AS meta_s,
         sum(t_shared) AS shared_io_s,
         count(*) FILTER (WHERE rank IS NULL) AS shared_records,
         count(*) FILTER (WHERE fallback) AS fallback_records,
         sum(coalesce(seq_reads, 0) + coalesce(seq_writes, 0))
           FILTER (WHERE seq_reads IS NOT NULL OR seq_writes IS NOT NULL) AS seq_ops,
         sum(coalesce(reads, 0) + coalesce(writes, 0))
           FILTER (WHERE seq_reads IS NOT NULL OR seq_writes IS NOT NULL) AS seq_base,
         sum(file_not_aligned) AS not_aligned,
         sum(coalesce(reads, 0) + coalesce(writes, 0))
           FILTER (WHERE file_not_aligned IS NOT NULL) AS align_base,
         count(DISTINCT file_id) AS files,
         count(DISTINCT file_id)
           FILTER (WHERE coalesce(bytes_written, 0) > 0 OR coalesce(writes, 0) > 0)
           AS written_files,
         count(DISTINCT rank) FILTER (WHERE rank IS NOT NULL AND moved > 0) AS ranked_io,
         bool_or(rank IS NULL AND moved > 0) AS shared_moved,
         min(rank) FILTER (WHERE moved > 0) AS min_io_rank,
         max(rank) FILTER (WHERE moved > 0) AS max_io_rank
  FROM rec GROUP BY job_id
)
SELECT mods.job_id, array_to_string(mods.layer, '+') AS layer,
       mods.posix, mods.stdio, mods.mpiio, mods.hdf5, mods.pnetcdf,
       agg.* EXCLUDE (job_id), uniq.unique_io_s, uniq.slowest_rank,
       cats.* EXCLUDE (job_id)
FROM mods
LEFT JOIN agg USING (job_id)
LEFT JOIN uniq USING (job_id)
LEFT JOIN cats USING (job_id)
ORDER BY mods.job_id
"""

_FALLBACK_SQL = """
SELECT DISTINCT job_id FROM file_stats
WHERE job_id IN (SELECT unnest($jobs)) AND rank IS NULL AND slowest_rank_time IS NULL
"""

# Ops: one layer per job; per-rank summed call time; Darshan's sequential
# rule per (rank, file, op) in time order.
_JOB_OPS_SQL = f"""
WITH j AS (SELECT job_id, nprocs FROM jobs WHERE job_id IN (SELECT unnest($jobs))),
o0 AS (
  SELECT o.job_id, o.rank, o.file_id, o.op, o."offset", o.size, o.t_start, o.call,
         o.t_end - o.t_start AS dur, j.nprocs,
         o.op IN ('read', 'write') AND o.size IS NOT NULL AND o.error IS NULL AS data
  FROM ops o JOIN j USING (job_id)
  LEFT JOIN files f ON f.job_id = o.job_id AND f.file_id = o.file_id
  WHERE f.path IS NULL OR f.path NOT IN {STD_STREAMS}
),
lay AS (
  SELECT job_id, {has_dxt_posix("call")} AS dxt_posix,
         bool_or(call = 'DXT_MPIIO') AS dxt_mpiio,
         bool_or(call IS DISTINCT FROM 'DXT_MPIIO') AS posix,
         {timed("dur")} AS timed
  FROM o0 GROUP BY job_id
),
o AS (
  SELECT o0.*, CASE WHEN data THEN size ELSE 0 END AS moved
  FROM o0 JOIN lay USING (job_id)
  WHERE {one_layer("o0.call", "lay.dxt_posix")}
),
sq AS (
  SELECT job_id,
         count(*) FILTER (WHERE "offset" > coalesce(prev_last, 0)) AS seq_ops,
         count(*) AS seq_base,
         count(*) FILTER (WHERE "offset" % $align <> 0) AS not_aligned
  FROM (
    SELECT job_id, "offset",
           lag("offset" + size - 1) OVER (
             PARTITION BY job_id, rank, file_id, op ORDER BY t_start, "offset") AS prev_last
    FROM o WHERE data AND "offset" IS NOT NULL
  ) GROUP BY job_id
),
by_rank AS (  -- a call the loader split into rows (a transfer's read and write, a
              -- rename's two paths) shares rank, times and call: its time counts once
  SELECT job_id, rank, sum(dur) AS t
  FROM (SELECT DISTINCT job_id, rank, t_start, dur, call FROM o) GROUP BY ALL
),
uniq AS (
  SELECT job_id, max(t) AS unique_io_s, -max({{'t': t, 'r': -rank}}).r AS slowest_rank
  FROM by_rank GROUP BY job_id
),
per_file AS (
  SELECT job_id, file_id, any_value(nprocs) AS nprocs, count(DISTINCT rank) AS nranks,
         sum(moved) AS moved
  FROM o WHERE file_id IS NOT NULL GROUP BY job_id, file_id
),
cats AS (
{_FILE_KINDS}    SELECT *, CASE WHEN nranks <= 1 THEN 'unique' WHEN nranks >= nprocs THEN 'shared'
                   ELSE 'partial' END AS kind
    FROM per_file
  ) GROUP BY job_id
),
agg AS (
  SELECT job_id,
         coalesce(sum(size) FILTER (WHERE data AND op = 'read'), 0) AS bytes_read,
         coalesce(sum(size) FILTER (WHERE data AND op = 'write'), 0) AS bytes_written,
         count(*) FILTER (WHERE data AND op = 'read') AS reads,
         count(*) FILTER (WHERE data AND op = 'write') AS writes,
         coalesce(sum(dur) FILTER (WHERE op = 'read'), 0) AS read_s,
         coalesce(sum(dur) FILTER (WHERE op = 'write'), 0) AS write_s,
         coalesce(sum(dur) FILTER (WHERE op NOT IN ('read', 'write')), 0) AS meta_s,
         count(DISTINCT file_id) AS files,
         count(DISTINCT file_id) FILTER (WHERE data AND op = 'write') AS written_files,
         count(DISTINCT rank) FILTER (WHERE moved > 0) AS ranked_io,
         min(rank) FILTER (WHERE moved > 0) AS min_io_rank,
         max(rank) FILTER (WHERE moved > 0) AS max_io_rank
  FROM o GROUP BY job_id
)
SELECT agg.job_id,
       CASE WHEN lay.dxt_posix THEN 'DXT_POSIX' WHEN lay.dxt_mpiio THEN 'DXT_MPIIO'
            ELSE 'trace' END AS layer,
       lay.posix, lay.dxt_mpiio AS mpiio,
       agg.* EXCLUDE (job_id, read_s, write_s, meta_s),
       CASE WHEN lay.timed THEN agg.read_s END AS read_s,
       CASE WHEN lay.timed THEN agg.write_s END AS write_s,
       CASE WHEN lay.timed THEN agg.meta_s END AS meta_s,
       sq.seq_ops, sq.seq_base, sq.not_aligned, sq.seq_base AS align_base,
       CASE WHEN lay.timed THEN uniq.unique_io_s END AS unique_io_s,
       CASE WHEN lay.timed THEN uniq.slowest_rank END AS slowest_rank,
       cats.* EXCLUDE (job_id)
FROM agg JOIN lay USING (job_id)
LEFT JOIN sq USING (job_id)
LEFT JOIN uniq USING (job_id)
LEFT JOIN cats USING (job_id)
ORDER BY agg.job_id
"""

_BIN_CASE = (
    "CASE "
    + " ".join(f"WHEN size < {hi} THEN {i}" for i, (_, _, hi) in enumerate(SIZE_BINS[:-1]))
    + f" ELSE {len(SIZE_BINS) - 1} END"
)

_OPS_SIZES_SQL = f"""
WITH o AS (
  SELECT o.job_id, o.op, o.size, o.call FROM ops o
  LEFT JOIN files f ON f.job_id = o.job_id AND f.file_id = o.file_id
  WHERE o.job_id IN (SELECT unnest($jobs)) AND o.op IN ('read', 'write') AND o.size IS NOT NULL
    AND o.error IS NULL AND (f.path IS NULL OR f.path NOT IN {STD_STREAMS})
    AND (o.call IS DISTINCT FROM 'DXT_MPIIO'
         OR o.job_id NOT IN (SELECT job_id FROM ops WHERE call = 'DXT_POSIX'
                             AND job_id IN (SELECT unnest($jobs))))
)
SELECT job_id, op::VARCHAR AS op, {_BIN_CASE} AS bin, count(*) AS count,
       CASE WHEN bool_or(call = 'DXT_POSIX') THEN 'DXT_POSIX'
            WHEN bool_or(call = 'DXT_MPIIO') THEN 'DXT_MPIIO' ELSE 'trace' END AS module
FROM o GROUP BY ALL
"""

_COUNTER_SIZES_SQL = """
WITH a AS (
  SELECT job_id, module, op, bin_lo, sum(count) AS count FROM access_sizes
  WHERE job_id IN (SELECT unnest($jobs)) GROUP BY ALL
),
pick AS (
  SELECT job_id, CASE WHEN bool_or(module = 'POSIX') THEN 'POSIX'
                      WHEN bool_or(module = 'MPI-IO') THEN 'MPI-IO'
                      WHEN bool_or(module = 'H5D') THEN 'H5D'
                      WHEN bool_or(module = 'PNETCDF_VAR') THEN 'PNETCDF_VAR'
                      ELSE any_value(module) END AS module
  FROM a GROUP BY job_id
)
SELECT a.job_id, a.op, a.bin_lo, a.count, a.module
FROM a JOIN pick USING (job_id, module)
"""

_JOB_COLUMNS = [
    "job_id", "app", "user", "nprocs", "nnodes", "start_ts", "runtime_s", "basis", "layer",
    "bytes_read", "bytes_written", "io_bytes", "reads", "writes", "slowest_io_s", "time_rule",
    "slowest_rank", "unique_io_s", "shared_io_s", "mib_s", "mib_s_cn", "nodes_basis",
    "io_time_pct", "meta_time_pct", "files", "files_per_proc", "written_files",
    "creates_per_proc", "creates_basis", "seq_pct", "aligned_pct", "mib_per_proc", "io_ranks",
    "rank0_io", "sharing", "unique_files", "shared_files", "partial_files", "unique_bytes",
    "shared_bytes", "partial_bytes", "interfaces", "posix", "stdio", "mpiio", "hdf5", "pnetcdf",
    "note",
]  # fmt: skip

_CREATES_BASIS = "estimate: files written (no create counts; section 4.3)"


@dataclass(frozen=True)
class JobMetrics(Result):
    """Per-job metrics of Carns et al. (2011) and their evidence.

    Attributes
    ----------
    jobs : pandas.DataFrame
        One row per job, the columns described in :mod:`iochar.analyze.jobs`:
        identity (``job_id``, ``app``, ``user``, ``nprocs``, ``nnodes``,
        ``start_ts``, ``runtime_s`` [s]); evidence (``basis``: counters or
        ops or none, ``layer``: the module(s) or trace layer measured,
        ``time_rule``, ``slowest_rank``, ``nodes_basis``, ``creates_basis``,
        ``note``); volumes (``bytes_read``, ``bytes_written``, ``io_bytes``
        [bytes], ``reads``, ``writes``); times (``slowest_io_s``,
        ``unique_io_s``, ``shared_io_s`` [s]); Table VI (``mib_s_cn``,
        ``io_time_pct``, ``meta_time_pct``, ``files_per_proc``,
        ``creates_per_proc``, ``seq_pct``, ``aligned_pct``,
        ``mib_per_proc``) with ``mib_s`` [MiB/s], ``files`` and
        ``written_files``; sharing (``sharing``, ``io_ranks``, ``rank0_io``,
        ``unique_files``, ``shared_files``, ``partial_files`` and their
        ``*_bytes``); interfaces (``interfaces`` and a boolean per
        interface: ``posix``, ``stdio``, ``mpiio``, ``hdf5``, ``pnetcdf``).
    sizes : pandas.DataFrame
        Access-size histogram per job: ``job_id``, ``op`` (read/write),
        ``bin`` (label), ``bin_lo``, ``bin_hi`` [bytes; hi exclusive, NaN
        unbounded], ``count``, ``pct`` (share of the job's accesses of that
        op) [%] and ``module`` (histogram source: POSIX, MPI-IO... or the
        ops layer). Every bin is present, with zeros.
    params : dict
        The parameters as used (see :class:`iochar.result.Result`).
    sql : str or None
        The SQL that read the store, or None.
    """

    jobs: pd.DataFrame
    sizes: pd.DataFrame


def _check_common(caller, job_id, basis, modules, procs_per_node, alignment_bytes) -> None:
    check_int(job_id, "job_id", caller, "None or an int", none=True)
    check_choice(basis, "basis", caller, ("auto", "counters", "ops"), "'auto', 'counters' or 'ops'")
    if modules is not None and (
        isinstance(modules, str) or not all(isinstance(m, str) for m in modules) or not modules
    ):
        raise ParameterError(
            "modules", caller, "None or a non-empty sequence of module names", modules
        )
    check_int(procs_per_node, "procs_per_node", caller, "None or an int >= 1", low=1, none=True)
    check_int(alignment_bytes, "alignment_bytes", caller, "an int >= 1 [bytes]", low=1)


def job_metrics(
    store,
    *,
    job_id: int | None = None,
    basis: str = "auto",
    modules=None,
    procs_per_node: int | None = None,
    alignment_bytes: int = 4096,
) -> JobMetrics:
    """Carns et al. (2011) job metrics (section 2.4, Table VI, Figs. 3, 5, 12) for each job.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        Only this job.
    basis : {"auto", "counters", "ops"}, default "auto"
        Measure from Darshan counters, from traced operations, or counters
        when the job has any and ops otherwise (see the module notes).
    modules : sequence of str, optional
        Darshan modules to count from counters (e.g. ``("POSIX",)``);
        default: POSIX and STDIO, else MPI-IO, else PNETCDF_VAR, else H5D.
    procs_per_node : int, optional
        Processes per compute node, for jobs whose node count is unknown
        (MiB/s/CN; Intrepid ran 4). None leaves those ``mib_s_cn`` NaN.
    alignment_bytes : int, default 4096
        File alignment for ``aligned_pct`` of ops-measured jobs [bytes]
        (Darshan records its own, the file system's block size).

    Returns
    -------
    JobMetrics
        ``jobs`` (one row per job) and ``sizes`` (access-size histograms).

    Raises
    ------
    ParameterError
        An argument is out of range.

    Examples
    --------
    >>> import iochar
    >>> db = iochar.connect(":memory:")
    >>> _ = db.load(b"rank,path,op,offset,size,t_start,t_end\\n"
    ...             b"0,/d/a,write,0,1048576,1.0,3.0\\n1,/d/b,write,0,1048576,1.0,2.0\\n",
    ...             kind="trace-csv")
    >>> m = job_metrics(db).jobs
    >>> float(m.loc[0, "slowest_io_s"]), float(m.loc[0, "mib_s"]), m.loc[0, "sharing"]
    (2.0, 1.0, 'N:N')
    """
    caller = "job_metrics"
    _check_common(caller, job_id, basis, modules, procs_per_node, alignment_bytes)
    jobs = query(store, _JOBS_SQL, params={"job_id": None if job_id is None else int(job_id)}).df()
    ran = [_JOBS_SQL]
    if basis == "auto":
        use = np.where(jobs["has_counters"], "counters", np.where(jobs["has_ops"], "ops", "none"))
    elif basis == "counters":
        use = np.where(jobs["has_counters"], "counters", "none")
    else:
        use = np.where(jobs["has_ops"], "ops", "none")
    jobs["basis"] = use
    cj = jobs.loc[jobs["basis"] == "counters", "job_id"].astype("int64").tolist()
    oj = jobs.loc[jobs["basis"] == "ops", "job_id"].astype("int64").tolist()
    parts = []
    if cj:
        fb = [int(r[0]) for r in query(store, _FALLBACK_SQL, params={"jobs": cj}).fetchall()]
        mods = None if modules is None else [str(m) for m in modules]
        # module_counters is read only when a shared record lacks its slowest-rank time
        sql = _COUNTERS_SQL if fb else _COUNTERS_SQL.replace(_OPENED, _NOT_OPENED)
        parts.append(
            query(store, sql, params={"jobs": cj, "modules": mods, "fallback_jobs": fb}).df()
        )
        ran += [_FALLBACK_SQL, sql]
    if oj:
        ops = query(store, _JOB_OPS_SQL, params={"jobs": oj, "align": int(alignment_bytes)}).df()
        ran.append(_JOB_OPS_SQL)
        ops["stdio"] = ops["hdf5"] = ops["pnetcdf"] = False
        ops["shared_io_s"] = np.nan
        ops["shared_records"] = ops["fallback_records"] = 0
        ops["shared_moved"] = False
        parts.append(ops)
    facts = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame({"job_id": []})
    df = jobs.merge(facts, on="job_id", how="left")
    out = _derive(df, procs_per_node)
    sizes = _sizes(store, cj, oj)
    params = dict(
        job_id=job_id,
        basis=basis,
        modules=modules,
        procs_per_node=procs_per_node,
        alignment_bytes=alignment_bytes,
    )
    return JobMetrics(out, sizes, params=params, sql=join_sql(*ran))


def _num(df: pd.DataFrame, col: str) -> np.ndarray:
    if col not in df:
        return np.full(len(df), np.nan)
    return pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def _flag(df: pd.DataFrame, col: str) -> np.ndarray:
    if col not in df:
        return np.zeros(len(df), bool)
    return df[col].fillna(False).to_numpy(dtype=bool)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((den > 0) & np.isfinite(den), num / np.where(den > 0, den, 1.0), np.nan)


def _derive(df: pd.DataFrame, procs_per_node: int | None) -> pd.DataFrame:
    """Table VI and the labels from the per-job sums (vectorized).

    The columns are gathered as arrays and made a frame once (one insertion per
    column into a frame costs about 0.2 ms each, a tenth of the summary's metrics)."""
    n = len(df)
    out: dict[str, Any] = {"job_id": df["job_id"].astype("int64").to_numpy()}
    for c in ("app", "user", "nprocs", "nnodes", "start_ts", "runtime_s", "basis"):
        out[c] = df[c].to_numpy()
    out["layer"] = df["layer"].to_numpy() if "layer" in df else np.full(n, None, dtype=object)
    is_c = (df["basis"] == "counters").to_numpy()
    is_o = (df["basis"] == "ops").to_numpy()
    measured = is_c | is_o
    br, bw = _num(df, "bytes_read"), _num(df, "bytes_written")
    for c, v in (("bytes_read", br), ("bytes_written", bw)):
        out[c] = pd.array(np.where(measured, v, np.nan)).astype("Int64")
    io = np.nan_to_num(br) + np.nan_to_num(bw)
    io = np.where(measured, io, np.nan)
    out["io_bytes"] = pd.array(io).astype("Int64")
    for c in ("reads", "writes"):
        out[c] = pd.array(np.where(measured, _num(df, c), np.nan)).astype("Int64")
    uniq, shared = _num(df, "unique_io_s"), _num(df, "shared_io_s")
    has_u = np.isfinite(uniq)
    nshared = np.nan_to_num(_num(df, "shared_records"))
    nfall = np.nan_to_num(_num(df, "fallback_records"))
    slowest = np.nan_to_num(uniq) + np.where(is_c, np.nan_to_num(shared), 0.0)
    slowest = np.where(measured & (has_u | (nshared > 0)), slowest, np.nan)
    out["slowest_io_s"] = slowest
    part_u = np.where(has_u, "max over ranks of unique-file time", "")
    part_s = np.where(
        nshared > 0,
        np.where(
            nfall >= nshared,
            "per shared file first open to last I/O (section 2.4)",
            np.where(
                nfall > 0,
                "per shared file slowest-rank time, else first open to last I/O (section 2.4)",
                "per shared file slowest-rank time",
            ),
        ),
        "",
    )
    both = (part_u != "") & (part_s != "")
    rule_c = "counters: " + np.char.add(
        np.char.add(part_u.astype(str), np.where(both, " + ", "")), part_s.astype(str)
    )
    rule = np.where(is_c, rule_c, np.where(is_o, "ops: max over ranks of summed call time", ""))
    rule = np.where(np.isfinite(slowest), rule, None)
    out["time_rule"] = rule
    out["slowest_rank"] = pd.array(np.where(has_u, _num(df, "slowest_rank"), np.nan)).astype(
        "Int64"
    )
    out["unique_io_s"] = np.where(measured, uniq, np.nan)
    out["shared_io_s"] = np.where(is_c & (nshared > 0), shared, np.where(measured, 0.0, np.nan))
    mib = io / MiB
    out["mib_s"] = _ratio(mib, slowest)
    nprocs = _num(df, "nprocs")
    nnodes = _num(df, "nnodes")
    if procs_per_node is not None:
        est = np.ceil(nprocs / procs_per_node)
        nodes = np.where(np.isfinite(nnodes) & (nnodes > 0), nnodes, est)
        nb = np.where(
            np.isfinite(nnodes) & (nnodes > 0),
            "jobs.nnodes",
            np.where(np.isfinite(est), f"ceil(nprocs / {procs_per_node})", None),
        )
    else:
        nodes = np.where(nnodes > 0, nnodes, np.nan)
        nb = np.where(np.isfinite(nodes), "jobs.nnodes", None)
    out["mib_s_cn"] = _ratio(out["mib_s"], nodes)
    out["nodes_basis"] = nb
    out["io_time_pct"] = 100 * _ratio(slowest, _num(df, "runtime_s"))
    rs, ws, ms = _num(df, "read_s"), _num(df, "write_s"), _num(df, "meta_s")
    out["meta_time_pct"] = 100 * _ratio(ms, rs + ws + ms)
    files = np.where(measured, np.nan_to_num(_num(df, "files")), np.nan)
    out["files"] = pd.array(files).astype("Int64")
    out["files_per_proc"] = _ratio(files, nprocs)
    wf = np.where(measured, np.nan_to_num(_num(df, "written_files")), np.nan)
    out["written_files"] = pd.array(wf).astype("Int64")
    out["creates_per_proc"] = _ratio(wf, nprocs)
    out["creates_basis"] = np.where(measured, _CREATES_BASIS, None)
    out["seq_pct"] = 100 * _ratio(_num(df, "seq_ops"), _num(df, "seq_base"))
    out["aligned_pct"] = 100 * (1 - _ratio(_num(df, "not_aligned"), _num(df, "align_base")))
    out["mib_per_proc"] = _ratio(mib, nprocs)
    # ranks that moved data; a reduced (shared) Darshan record hides which did
    ranked = np.nan_to_num(_num(df, "ranked_io"))
    shared_moved = _flag(df, "shared_moved")
    io_ranks = np.where(shared_moved, np.fmax(nprocs, ranked), ranked)
    io_ranks = np.where(measured, io_ranks, np.nan)
    out["io_ranks"] = pd.array(io_ranks).astype("Int64")
    lo, hi = _num(df, "min_io_rank"), _num(df, "max_io_rank")
    single = (io_ranks == 1) & ~shared_moved
    out["rank0_io"] = np.where(
        measured, (nprocs > 1) & single & (lo == 0) & (hi == 0), False
    ).astype(bool)
    ub, sb, pb = (np.nan_to_num(_num(df, c)) for c in ("unique_bytes", "shared_bytes",
                                                         "partial_bytes"))  # fmt: skip
    uf, sf, pf = (np.nan_to_num(_num(df, c)) for c in ("unique_files", "shared_files",
                                                         "partial_files"))  # fmt: skip
    # the kind of file that moved most bytes (by file count when nothing moved)
    key_u, key_s, key_p = (
        np.where(io > 0, ub, uf),
        np.where(io > 0, sb, sf),
        np.where(io > 0, pb, pf),
    )
    kind = np.where(
        (key_s >= key_u) & (key_s >= key_p) & (key_s > 0),
        "shared",
        np.where((key_p >= key_u) & (key_p > 0), "partial", np.where(key_u > 0, "unique", "")),
    )
    sharing = np.select(
        [
            ~measured | (kind == ""),
            nprocs == 1,
            (kind == "unique") & (ranked <= 1),
            (kind == "unique") & (ranked < nprocs),
            kind == "unique",
            kind == "shared",
        ],
        ["none", "1:1", "N:1", "N:M", "N:N", "N:1"],
        "N:M",
    )
    out["sharing"] = sharing
    for c, v in (("unique_files", uf), ("shared_files", sf), ("partial_files", pf),
                 ("unique_bytes", ub), ("shared_bytes", sb), ("partial_bytes", pb)):  # fmt: skip
        out[c] = pd.array(np.where(measured, v, np.nan)).astype("Int64")
    flags = {k: _flag(df, k) & measured for k in ("posix", "stdio", "mpiio", "hdf5", "pnetcdf")}
    names = {"posix": "POSIX", "stdio": "STDIO", "mpiio": "MPI-IO", "hdf5": "HDF5",
             "pnetcdf": "PnetCDF"}  # fmt: skip
    iface = np.full(n, "", dtype=object)
    for k, label in names.items():
        iface = np.where(flags[k], np.where(iface == "", label, iface + "," + label), iface)
    out["interfaces"] = iface
    for k, v in flags.items():
        out[k] = v
    frame = pd.DataFrame(out)
    frame["note"] = _notes(df, frame, measured, is_o, procs_per_node, nfall)
    return frame[_JOB_COLUMNS].reset_index(drop=True)


def _notes(df, out, measured, is_o, procs_per_node, nfall) -> np.ndarray:
    """Why a metric is missing or estimated, one '; '-joined string per job."""
    n = len(out)
    notes = [
        (~measured, "no I/O records (file_stats or ops)"),
        (measured & ~np.isfinite(out["slowest_io_s"].to_numpy()), "no I/O time recorded"),
        (measured & (out["io_bytes"].fillna(0).to_numpy() == 0), "no bytes read or written"),
        (
            measured & ~np.isfinite(out["mib_s_cn"].to_numpy()) & np.isfinite(out["mib_s"]),
            "node count unknown: MiB/s/CN needs jobs.nnodes or procs_per_node",
        ),
        (
            measured & ~np.isfinite(out["seq_pct"].to_numpy()),
            "no sequentiality counts (POSIX counters or offsets)",
        ),
        (
            measured & ~np.isfinite(out["aligned_pct"].to_numpy()),
            "no alignment counts (POSIX counters or offsets)",
        ),
        (nfall > 0, "shared records without slowest-rank time: section 2.4 estimate"),
        (
            is_o & (out["layer"].to_numpy() == "DXT_POSIX"),
            "DXT records reads and writes only: no metadata time",
        ),
        (measured & ~(_num(df, "runtime_s") > 0), "no positive run time: io_time_pct undefined"),
    ]
    acc = np.full(n, "", dtype=object)
    for mask, text in notes:
        mask = np.asarray(mask, dtype=bool)
        acc = np.where(mask, np.where(acc == "", text, acc + "; " + text), acc)
    return acc


def _sizes(store, cj: list[int], oj: list[int]) -> pd.DataFrame:
    parts = []
    if cj:
        c = query(store, _COUNTER_SIZES_SQL, params={"jobs": cj}).df()
        lows = np.array([lo for _, lo, _ in SIZE_BINS])
        c["bin"] = np.searchsorted(lows, c["bin_lo"].to_numpy(), side="right") - 1
        parts.append(c.drop(columns="bin_lo"))
    if oj:
        parts.append(query(store, _OPS_SIZES_SQL, params={"jobs": oj}).df())
    cols = ["job_id", "op", "bin", "bin_lo", "bin_hi", "count", "pct", "module"]
    if not parts:
        return pd.DataFrame({c: [] for c in cols})
    got = pd.concat(parts, ignore_index=True)
    got = got.groupby(["job_id", "op", "bin"], as_index=False).agg(
        count=("count", "sum"), module=("module", "first")
    )
    # every bin of every (job, op) present, with zeros
    keys = got[["job_id", "op"]].drop_duplicates()
    grid = keys.merge(pd.DataFrame({"bin": np.arange(len(SIZE_BINS))}), how="cross")
    full = grid.merge(got, on=["job_id", "op", "bin"], how="left")
    full["module"] = full.groupby(["job_id", "op"])["module"].transform("first")
    full["count"] = full["count"].fillna(0).astype("int64")
    tot = full.groupby(["job_id", "op"])["count"].transform("sum")
    full["pct"] = 100 * full["count"] / tot.where(tot > 0)
    full["bin_lo"] = np.array([lo for _, lo, _ in SIZE_BINS])[full["bin"]]
    full["bin_hi"] = np.array(
        [np.nan if hi is None else hi for _, _, hi in SIZE_BINS], dtype=np.float64
    )[full["bin"]]
    full["bin"] = np.array([name for name, _, _ in SIZE_BINS], dtype=object)[full["bin"]]
    return full[cols].sort_values(["job_id", "op", "bin_lo"]).reset_index(drop=True)


def _metrics_frame(data, caller: str) -> pd.DataFrame:
    if isinstance(data, JobMetrics):
        return data.jobs
    if isinstance(data, pd.DataFrame):
        return data
    raise ParameterError("metrics", caller, "a JobMetrics or its jobs DataFrame", type(data))


#: Table VI's columns: (output name, metric column).
_TABLE_VI = (
    ("mib_s_cn", "mib_s_cn"),
    ("io_time_pct", "io_time_pct"),
    ("meta_time_pct", "meta_time_pct"),
    ("files_per_proc", "files_per_proc"),
    ("creates_per_proc", "creates_per_proc"),
    ("seq_pct", "seq_pct"),
    ("aligned_pct", "aligned_pct"),
    ("mib_per_proc", "mib_per_proc"),
)


def _large(df: pd.DataFrame, min_procs, min_mib, caller: str) -> np.ndarray:
    """Section 5's filter as a mask: at least ``min_procs`` processes and ``min_mib`` MiB."""
    if not (isinstance(min_procs, (int, np.integer)) and min_procs >= 0):
        raise ParameterError("min_procs", caller, "an int >= 0", min_procs)
    if not (isinstance(min_mib, (int, float)) and min_mib >= 0):
        raise ParameterError("min_mib", caller, "a number of MiB >= 0", min_mib)
    missing = [c for c in ("nprocs", "io_bytes") if c not in df.columns]
    if missing:
        raise ParameterError("metrics", caller, f"per-job metrics (missing {missing})", "...")
    return (_num(df, "nprocs") >= min_procs) & (_num(df, "io_bytes") >= min_mib * MiB)


def project_table(
    metrics,
    *,
    by: str = "app",
    min_procs: int = 1024,
    min_mib: float = 500.0,
) -> pd.DataFrame:
    """Carns et al. (2011) Table VI: average I/O characteristics of large jobs by project.

    Jobs are kept when they ran at least ``min_procs`` processes and moved at
    least ``min_mib`` MiB (section 5's filter: 1,024 processes, 500 MiB; the
    jobs :func:`large_jobs` returns); each metric is the mean over a
    project's jobs where it is defined.

    Parameters
    ----------
    metrics : JobMetrics or pandas.DataFrame
        :func:`job_metrics`'s result (or its ``jobs`` frame).
    by : str, default "app"
        Column naming the project (``app``, ``user``...).
    min_procs : int, default 1024
        Fewest processes of a job kept [processes].
    min_mib : float, default 500.0
        Least data a kept job moved [MiB].

    Returns
    -------
    pandas.DataFrame
        One row per project: ``jobs`` (kept), ``mib_moved`` (bytes they read
        and wrote) [MiB], then the means of ``mib_s_cn`` [MiB/s per node],
        ``io_time_pct``, ``meta_time_pct`` [%], ``files_per_proc``,
        ``creates_per_proc`` (estimated, see :mod:`iochar.analyze.jobs`),
        ``seq_pct``, ``aligned_pct`` [%] and ``mib_per_proc`` [MiB], and
        ``median_mib_s_cn`` (Fig. 11's middle line) [MiB/s per node]; sorted
        by ``mib_moved``, most first.
    """
    caller = "project_table"
    df = _metrics_frame(metrics, caller)
    if by not in df.columns:
        raise ParameterError("by", caller, "a column of the metrics", by)
    keep = df[_large(df, min_procs, min_mib, caller)].copy()
    keep["_moved"] = pd.to_numeric(keep["io_bytes"], errors="coerce").astype("float64")
    for _, col in _TABLE_VI:
        keep[col] = pd.to_numeric(keep[col], errors="coerce").astype("float64")
    g = keep.groupby(by, dropna=False)
    out = g.agg(
        jobs=("job_id", "count"),
        **{name: (col, "mean") for name, col in _TABLE_VI},
        median_mib_s_cn=("mib_s_cn", "median"),
        moved=("_moved", "sum"),
    )
    out.insert(1, "mib_moved", out["moved"] / MiB)
    return out.sort_values("moved", ascending=False).drop(columns="moved").reset_index()


def large_jobs(metrics, *, min_procs: int = 1024, min_mib: float = 500.0) -> JobMetrics:
    """The jobs section 5 of Carns et al. (2011) keeps, with their access sizes.

    The jobs that ran at least ``min_procs`` processes and read and wrote at
    least ``min_mib`` MiB (the paper: 1,024 processes and 500 MiB, for
    Fig. 11, Table VI and Fig. 12): the same filter as :func:`project_table`,
    so ``large_jobs(m).jobs`` are the jobs that table averages.

    Parameters
    ----------
    metrics : JobMetrics
        :func:`job_metrics`'s result.
    min_procs : int, default 1024
        Fewest processes of a kept job [processes].
    min_mib : float, default 500.0
        Least data a kept job read and wrote [MiB].

    Returns
    -------
    JobMetrics
        The kept jobs (in their order in ``metrics``) and their rows of ``sizes``.

    Raises
    ------
    ParameterError
        ``metrics`` is not a JobMetrics, or a threshold is negative.

    Examples
    --------
    >>> import pandas as pd
    >>> m = JobMetrics(pd.DataFrame({"job_id": [1, 2], "nprocs": [8, 2],
    ...                              "io_bytes": [2**30, 2**30]}),
    ...                pd.DataFrame({"job_id": [1, 2], "count": [3, 4]}))
    >>> large_jobs(m, min_procs=4, min_mib=1).jobs["job_id"].tolist()
    [1]
    """
    caller = "large_jobs"
    if not isinstance(metrics, JobMetrics):
        raise ParameterError("metrics", caller, "a JobMetrics", type(metrics))
    df = metrics.jobs
    jobs = df[_large(df, min_procs, min_mib, caller)].reset_index(drop=True)
    sizes = metrics.sizes[metrics.sizes["job_id"].isin(jobs["job_id"])].reset_index(drop=True)
    return JobMetrics(jobs, sizes)


def _labels(values: pd.Series) -> pd.Series:
    """Project names as labels, a missing one as :data:`UNKNOWN`."""
    return values.astype("string").fillna(UNKNOWN).astype(object)


def sharing_table(metrics, *, by: str = "app") -> pd.DataFrame:
    """Jobs, processes and data per file-sharing pattern (Carns et al. 2011, Figs. 3(b), 5).

    Fig. 3(b) of Carns et al. (2011) counts jobs and bytes by access pattern,
    and Fig. 5 shows the N:N, N:1 and N:M trends (and jobs without files) of
    each project; this is both as one table of the ``sharing`` column of
    :func:`job_metrics`, with the rank-0 I/O of section 4.1 counted apart.

    Parameters
    ----------
    metrics : JobMetrics or pandas.DataFrame
        :func:`job_metrics`'s result (or its ``jobs`` frame, with ``sharing``,
        ``io_bytes`` [bytes], ``nprocs``, ``rank0_io`` and ``by``).
    by : str, default "app"
        Column naming the project, listed per pattern.

    Returns
    -------
    pandas.DataFrame
        One row per ``sharing`` pattern (N:N, N:M, N:1, 1:1, none), most jobs
        first (ties in that order): ``jobs``, ``pct_jobs`` (of all jobs) [%],
        ``min_procs`` and ``max_procs`` (process counts of its jobs)
        [processes], ``gib_moved`` (bytes read and written) [GiB],
        ``pct_bytes`` (of all data moved; NaN when nothing moved) [%],
        ``rank0_jobs`` (jobs whose rank 0 moved every byte), ``apps`` and
        ``rank0_apps`` (``by`` values, sorted, comma-separated; a missing one
        as :data:`UNKNOWN`). No rows for no jobs.

    Raises
    ------
    ParameterError
        ``metrics`` is neither a JobMetrics nor a DataFrame, or lacks a column.

    Examples
    --------
    >>> import pandas as pd
    >>> jobs = pd.DataFrame({"job_id": [1, 2, 3], "app": ["a", "b", None],
    ...                      "nprocs": [8, 8, 4], "io_bytes": [2**30, 3 * 2**30, 0],
    ...                      "sharing": ["N:N", "N:1", "N:N"],
    ...                      "rank0_io": [False, True, False]})
    >>> sharing_table(jobs)[["sharing", "jobs", "gib_moved", "rank0_jobs", "apps"]]
      sharing  jobs  gib_moved  rank0_jobs          apps
    0     N:N     2        1.0           0  (unknown), a
    1     N:1     1        3.0           1             b
    """
    caller = "sharing_table"
    df = _metrics_frame(metrics, caller)
    cols = ["sharing", "jobs", "pct_jobs", "min_procs", "max_procs", "gib_moved", "pct_bytes",
            "rank0_jobs", "apps", "rank0_apps"]  # fmt: skip
    if len(df) == 0:
        return pd.DataFrame({c: [] for c in cols})
    need = ["sharing", "io_bytes", "nprocs", "rank0_io", by]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ParameterError(
            "metrics", caller, f"per-job columns {need} (missing {missing})", "..."
        )
    moved = _num(df, "io_bytes")
    d = pd.DataFrame(
        {
            "sharing": df["sharing"].astype(object).to_numpy(),
            "moved": np.where(np.isnan(moved), 0.0, moved),
            "procs": _num(df, "nprocs"),
            "rank0": df["rank0_io"].fillna(False).astype(bool).to_numpy(),
            "app": _labels(df[by]).to_numpy(),
        }
    )
    d["app0"] = d["app"].where(d["rank0"])
    g = d.groupby("sharing", sort=False)
    out = g.agg(
        jobs=("moved", "size"),
        min_procs=("procs", "min"),
        max_procs=("procs", "max"),
        moved=("moved", "sum"),
        rank0_jobs=("rank0", "sum"),
        apps=("app", lambda s: ", ".join(sorted(set(s)))),
        rank0_apps=("app0", lambda s: ", ".join(sorted(set(s.dropna())))),
    ).reset_index()
    total = out["moved"].sum()
    out["pct_jobs"] = 100 * out["jobs"] / out["jobs"].sum()
    out["gib_moved"] = out["moved"] / GiB
    out["pct_bytes"] = 100 * out["moved"] / total if total > 0 else np.nan
    order = {p: i for i, p in enumerate(_PATTERNS)}
    out["_o"] = out["sharing"].map(order).fillna(len(order))
    out = out.sort_values(["jobs", "_o"], ascending=[False, True])
    return out[cols].reset_index(drop=True)


def size_histogram(metrics, *, by: str = "app") -> pd.DataFrame:
    """Access sizes per project in the paper's bins (Carns et al. 2011, Fig. 12).

    Parameters
    ----------
    metrics : JobMetrics
        :func:`job_metrics`'s result.
    by : str, default "app"
        Job column naming the project.

    Returns
    -------
    pandas.DataFrame
        ``by``, ``op``, ``bin``, ``bin_lo`` [bytes], ``count`` and ``pct``
        (share of the project's reads, or writes, in the bin) [%].
    """
    caller = "size_histogram"
    if not isinstance(metrics, JobMetrics):
        raise ParameterError("metrics", caller, "a JobMetrics", type(metrics))
    if by not in metrics.jobs.columns:
        raise ParameterError("by", caller, "a column of the jobs frame", by)
    s = metrics.sizes.merge(metrics.jobs[["job_id", by]], on="job_id")
    out = s.groupby([by, "op", "bin_lo", "bin"], dropna=False, as_index=False)["count"].sum()
    tot = out.groupby([by, "op"], dropna=False)["count"].transform("sum")
    out["pct"] = 100 * out["count"] / tot.where(tot > 0)
    return out[[by, "op", "bin", "bin_lo", "count", "pct"]].sort_values([by, "op", "bin_lo"])


def size_table(hist: pd.DataFrame, *, by: str = "app") -> pd.DataFrame:
    """Fig. 12 of Carns et al. (2011) as one table: each project's share of accesses per size.

    :func:`size_histogram` side by side: one row per project and operation,
    one column per Darshan size bin (Fig. 12's histograms, section 4.4).

    Parameters
    ----------
    hist : pandas.DataFrame
        :func:`size_histogram`'s result.
    by : str, default "app"
        Its project column.

    Returns
    -------
    pandas.DataFrame
        Rows (``by``, ``op``), a missing project as :data:`UNKNOWN`; columns
        the bins of :data:`SIZE_BINS` that hold any access, in size order
        (columns name ``"size [bytes]"``); values the share of the project's
        reads (or writes) in the bin [%]. No rows or columns when no access
        was counted.

    Examples
    --------
    >>> import pandas as pd
    >>> hist = pd.DataFrame({"app": ["a", "a"], "op": ["read", "read"],
    ...                      "bin": ["0-100", "1M-4M"], "bin_lo": [0, 1048577],
    ...                      "count": [1, 3], "pct": [25.0, 75.0]})
    >>> wide = size_table(hist)
    >>> list(wide.columns), wide.loc[("a", "read")].tolist()
    (['0-100', '1M-4M'], [25.0, 75.0])
    """
    if hist is None or len(hist) == 0 or np.nansum(_num(hist, "count")) == 0:
        return pd.DataFrame(index=pd.MultiIndex.from_tuples([], names=[by, "op"]))
    d = hist.assign(**{by: _labels(hist[by])})
    wide = d.pivot_table(index=[by, "op"], columns="bin", values="pct", aggfunc="sum")
    used = d.groupby("bin")["count"].sum()
    bins = [b for b, _, _ in SIZE_BINS if used.get(b, 0) > 0]
    wide = wide.reindex(columns=bins).fillna(0.0)
    wide.columns.name = "size [bytes]"
    return wide


# --------------------------------------------------------------------------- issue 20 figures

#: Interfaces of :func:`interface_table`: (metrics column, the paper's name, Table II letter).
INTERFACES = (
    ("posix", "POSIX", "P"),
    ("stdio", "STDIO", "S"),
    ("mpiio", "MPI-IO", "M"),
    ("hdf5", "HDF5", "H"),
    ("pnetcdf", "PnetCDF", "N"),
)


def _procs_bin(nprocs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Process-count bins in powers of 4: [1], [2, 4], [5, 16], [17, 64], ... (lo, hi)."""
    n = np.where(np.isfinite(nprocs) & (nprocs >= 1), nprocs, np.nan)
    k = np.ceil(np.log(n) / np.log(4.0) - 1e-12)
    hi = np.where(np.isfinite(k), 4.0**k, np.nan)
    lo = np.where(k > 0, 4.0 ** (k - 1) + 1, 1.0)
    return lo, hi


def interface_table(metrics) -> Table:
    """Jobs per I/O interface at each job size (Carns et al. 2011, Fig. 3(a)).

    Fig. 3(a) of Carns et al. (2011) shows, for jobs of increasing process
    count, the share of jobs that used each interface (POSIX, POSIX stream
    (STDIO), MPI-IO, high-level libraries) and the data they moved. A job
    uses an interface when its Darshan log holds records of that module
    (``interfaces`` of :func:`job_metrics`; a traced job's system calls are
    POSIX). Darshan records POSIX calls made by MPI-IO underneath too, so an
    MPI-IO job also counts as POSIX (Table II's "used directly" cannot be told
    apart from counters).

    Parameters
    ----------
    metrics : JobMetrics or pandas.DataFrame
        :func:`job_metrics`'s result (or its ``jobs`` frame).

    Returns
    -------
    iochar.result.Table
        One row per (process-count bin, interface) with any job: ``procs_lo``,
        ``procs_hi`` [processes] (bins in powers of 4: 1, 2-4, 5-16, ...),
        ``procs_bin`` (label), ``interface``, ``jobs`` (jobs of the bin using
        it), ``bin_jobs`` (measured jobs in the bin), ``pct_jobs``
        (``100 * jobs / bin_jobs``) [%] and ``io_bytes`` (bytes read and
        written by those jobs, all their layers counted once) [bytes].
        ``evidence``: ``jobs`` (measured jobs), ``by_interface`` (jobs per
        interface over all bins) and ``figure``.

    Examples
    --------
    >>> import pandas as pd
    >>> jobs = pd.DataFrame({"job_id": [1, 2, 3], "nprocs": [1, 8, 16], "basis": "counters",
    ...                      "io_bytes": [10, 20, 30], "posix": [True, True, False],
    ...                      "stdio": [True, False, False], "mpiio": [False, True, True],
    ...                      "hdf5": False, "pnetcdf": False})
    >>> t = interface_table(jobs)
    >>> for row in t[["procs_bin", "interface", "jobs", "bin_jobs", "pct_jobs"]].values:
    ...     print(*row)
    1 POSIX 1 1 100.0
    1 STDIO 1 1 100.0
    5-16 POSIX 1 2 50.0
    5-16 MPI-IO 2 2 100.0
    """
    caller = "interface_table"
    df = _metrics_frame(metrics, caller)
    missing = [c for c in ("nprocs", "io_bytes", "basis", *(k for k, _, _ in INTERFACES))
               if c not in df.columns]  # fmt: skip
    if missing:
        raise ParameterError("metrics", caller, f"per-job metrics (missing {missing})", "...")
    d = df[df["basis"].isin(["counters", "ops"])]
    lo, hi = _procs_bin(_num(d, "nprocs"))
    base = pd.DataFrame({"procs_lo": lo, "procs_hi": hi, "io": np.nan_to_num(_num(d, "io_bytes"))})
    base = base[np.isfinite(base["procs_hi"])]
    keep = np.isfinite(hi)
    bin_jobs = base.groupby(["procs_lo", "procs_hi"]).size().rename("bin_jobs")
    parts = []
    for col, name, _ in INTERFACES:
        use = _flag(d, col)[keep]
        sub = base[use]
        if sub.empty:
            continue
        g = sub.groupby(["procs_lo", "procs_hi"]).agg(jobs=("io", "size"), io_bytes=("io", "sum"))
        parts.append(g.reset_index().assign(interface=name))
    cols = ["procs_lo", "procs_hi", "procs_bin", "interface", "jobs", "bin_jobs", "pct_jobs",
            "io_bytes"]  # fmt: skip
    if not parts:
        out = pd.DataFrame({c: [] for c in cols})
    else:
        out = pd.concat(parts, ignore_index=True).join(bin_jobs, on=["procs_lo", "procs_hi"])
        out["pct_jobs"] = 100.0 * out["jobs"] / out["bin_jobs"]
        out["procs_bin"] = [
            f"{int(a):,}" if a == b else f"{int(a):,}-{int(b):,}"
            for a, b in zip(out["procs_lo"], out["procs_hi"], strict=True)
        ]
        order = {name: i for i, (_, name, _) in enumerate(INTERFACES)}
        out["_o"] = out["interface"].map(order)
        out = out.sort_values(["procs_lo", "_o"]).drop(columns="_o")[cols].reset_index(drop=True)
        for c in ("procs_lo", "procs_hi", "jobs", "bin_jobs"):
            out[c] = out[c].astype("int64")
    by_iface = {name: int(_flag(d, col).sum()) for col, name, _ in INTERFACES}
    return Table(
        out,
        evidence={
            "jobs": int(len(base)),
            "by_interface": by_iface,
            "figure": "Carns et al. 2011, Fig. 3(a)",
        },
    )


def api_table(metrics, *, by: str = "app") -> Table:
    """Interfaces used by each project (Carns et al. 2011, Table II's APIs column).

    Parameters
    ----------
    metrics : JobMetrics or pandas.DataFrame
        :func:`job_metrics`'s result (or its ``jobs`` frame).
    by : str, default "app"
        Column naming the project.

    Returns
    -------
    iochar.result.Table
        One row per project (a missing name as :data:`UNKNOWN`), most data
        first: ``jobs`` (measured), ``io_bytes`` [bytes], ``apis`` (Table II's
        letters: H = HDF5, N = PnetCDF, M = MPI-IO, S = POSIX stream (STDIO),
        P = POSIX, in the paper's order) and a job count per interface
        (``POSIX`` ... ``PnetCDF``).
    """
    caller = "api_table"
    df = _metrics_frame(metrics, caller)
    if by not in df.columns:
        raise ParameterError("by", caller, "a column of the metrics", by)
    d = df[df["basis"].isin(["counters", "ops"])]
    t = pd.DataFrame(
        {by: _labels(d[by]).to_numpy(), "io_bytes": np.nan_to_num(_num(d, "io_bytes"))}
    )
    for col, name, _ in INTERFACES:
        t[name] = _flag(d, col)
    g = t.groupby(by, sort=False)
    out = g.agg(jobs=("io_bytes", "size"), io_bytes=("io_bytes", "sum"),
                **{name: (name, "sum") for _, name, _ in INTERFACES})  # fmt: skip
    letters = ("HDF5", "PnetCDF", "MPI-IO", "STDIO", "POSIX")  # the paper's H,M,S,P order
    code = {name: letter for _, name, letter in INTERFACES}
    out["apis"] = [",".join(code[n] for n in letters if row[n] > 0) for _, row in out.iterrows()]
    out = out.sort_values("io_bytes", ascending=False).reset_index()
    out = out[[by, "jobs", "io_bytes", "apis", *(name for _, name, _ in INTERFACES)]]
    return Table(out, evidence={"figure": "Carns et al. 2011, Table II (APIs)"})


def size_cdf(metrics) -> Table:
    """Cumulative distribution of access sizes over all jobs (Carns et al. 2011, Fig. 10).

    Section 4.4 sums the POSIX access-size histograms of every job and draws
    their CDF per operation; a job's histogram is the one :func:`job_metrics`
    keeps (POSIX, else MPI-IO, H5D or PNETCDF_VAR; every read and write of a
    trace), so no access is counted twice.

    Parameters
    ----------
    metrics : JobMetrics
        :func:`job_metrics`'s result (its ``sizes``).

    Returns
    -------
    iochar.result.Table
        One row per op and Darshan bin (:data:`SIZE_BINS`, in size order):
        ``op``, ``bin``, ``bin_lo``, ``bin_hi`` [bytes; hi exclusive, NaN
        unbounded], ``count``, ``share`` and ``cum_share`` (fraction of the op's
        accesses in the bin and at or below it). Ops without accesses have no
        rows. ``evidence``: ``accesses`` (per op), ``jobs`` (per op),
        ``most_common`` (the bin holding most accesses, per op) and ``figure``.

    Examples
    --------
    >>> import pandas as pd
    >>> sizes = pd.DataFrame({"job_id": [1, 1, 2], "op": "read",
    ...                       "bin": ["0-100", "100-1K", "100-1K"],
    ...                       "bin_lo": [0, 101, 101], "bin_hi": [101.0, 1025.0, 1025.0],
    ...                       "count": [1, 2, 1]})
    >>> c = size_cdf(JobMetrics(pd.DataFrame({"job_id": [1, 2]}), sizes))
    >>> c.loc[:1, "cum_share"].tolist(), c.evidence["most_common"]
    ([0.25, 1.0], {'read': '100-1K'})
    """
    caller = "size_cdf"
    if not isinstance(metrics, JobMetrics):
        raise ParameterError("metrics", caller, "a JobMetrics", type(metrics))
    s = metrics.sizes
    cols = ["op", "bin", "bin_lo", "bin_hi", "count", "share", "cum_share"]
    names = [b for b, _, _ in SIZE_BINS]
    if s.empty:
        return Table(pd.DataFrame({c: [] for c in cols}),
                     evidence={"accesses": {}, "jobs": {}, "most_common": {},
                               "figure": "Carns et al. 2011, Fig. 10"})  # fmt: skip
    used = s[s["count"] > 0]
    jobs = {str(k): int(v) for k, v in used.groupby("op")["job_id"].nunique().items()}
    g = s.groupby(["op", "bin"], as_index=False)["count"].sum()
    g["_i"] = g["bin"].map({b: i for i, b in enumerate(names)})
    g = g.sort_values(["op", "_i"])
    tot = g.groupby("op")["count"].transform("sum")
    g = g[tot > 0].copy()
    tot = tot[tot > 0]
    g["share"] = g["count"] / tot
    g["cum_share"] = g.groupby("op")["count"].cumsum() / tot
    g["bin_lo"] = [SIZE_BINS[i][1] for i in g["_i"]]
    g["bin_hi"] = [np.nan if SIZE_BINS[i][2] is None else float(SIZE_BINS[i][2]) for i in g["_i"]]
    g["count"] = g["count"].astype("int64")
    out = g[cols].reset_index(drop=True)
    acc = {str(k): int(v) for k, v in out.groupby("op")["count"].sum().items()}
    top = {str(op): str(sub.loc[sub["count"].idxmax(), "bin"]) for op, sub in out.groupby("op")}
    return Table(
        out,
        evidence={
            "accesses": acc,
            "jobs": jobs,
            "most_common": top,
            "figure": "Carns et al. 2011, Fig. 10",
        },  # fmt: skip
    )


#: Darshan modules of :func:`io_cost` and the interface each is shown as (PyDarshan's
#: summary joins H5F with H5D and PNETCDF_FILE with PNETCDF_VAR).
_COST_MODULES = {
    "POSIX": "POSIX",
    "MPI-IO": "MPI-IO",
    "STDIO": "STDIO",
    "H5F": "HDF5",
    "H5D": "HDF5",
    "PNETCDF_FILE": "PnetCDF",
    "PNETCDF_VAR": "PnetCDF",
}

_COST_SQL = """
WITH c AS (
  SELECT s.job_id,
         CASE s.module WHEN 'H5F' THEN 'HDF5' WHEN 'H5D' THEN 'HDF5'
                       WHEN 'PNETCDF_FILE' THEN 'PnetCDF' WHEN 'PNETCDF_VAR' THEN 'PnetCDF'
                       ELSE s.module END AS interface,
         coalesce(s.read_time, 0) AS read_s, coalesce(s.write_time, 0) AS write_s,
         coalesce(s.meta_time, 0) AS meta_s
  FROM file_stats s
  WHERE list_contains($modules, s.module)
    AND ($job_id IS NULL OR s.job_id = $job_id)
),
o AS (
  SELECT o.job_id,
         CASE WHEN o.call = 'DXT_MPIIO' THEN 'MPI-IO' ELSE 'POSIX' END AS interface,
         CASE WHEN o.op = 'read' THEN o.t_end - o.t_start ELSE 0 END AS read_s,
         CASE WHEN o.op = 'write' THEN o.t_end - o.t_start ELSE 0 END AS write_s,
         CASE WHEN o.op NOT IN ('read', 'write') THEN o.t_end - o.t_start ELSE 0 END AS meta_s
  FROM (SELECT DISTINCT job_id, rank, t_start, t_end, call, op FROM ops
        WHERE ($job_id IS NULL OR job_id = $job_id)
          AND job_id NOT IN (SELECT job_id FROM file_stats)
          AND t_end IS NOT NULL) o
),
u AS (SELECT *, 'counters' AS basis FROM c UNION ALL SELECT *, 'ops' AS basis FROM o)
SELECT u.job_id, j.app, j.nprocs, j.runtime_s, u.interface, any_value(u.basis) AS basis,
       sum(u.read_s) AS read_s, sum(u.write_s) AS write_s, sum(u.meta_s) AS meta_s
FROM u JOIN jobs j USING (job_id)
GROUP BY ALL
ORDER BY u.job_id, u.interface
"""


def io_cost(store, *, job_id: int | None = None) -> Table:
    """Time in reads, writes and metadata per job and interface (PyDarshan's "I/O Cost").

    PyDarshan's job summary (``darshan summary``, ``plot_io_cost``) draws, per
    module, the read, write and metadata time (``<MOD>_F_READ_TIME``,
    ``_F_WRITE_TIME``, ``_F_META_TIME``) summed over the module's records and
    divided by the job's process count: the time an average process spent,
    against the run time. This is that table, for every job: H5F and H5D are
    one interface (HDF5), PNETCDF_FILE and PNETCDF_VAR one (PnetCDF), as in
    PyDarshan. Each interface is shown on its own: MPI-IO time includes the
    POSIX time beneath it, so interfaces are never added up. A job without
    Darshan counters is measured from its traced calls (DXT_MPIIO segments as
    MPI-IO, every other call as POSIX; calls other than read and write are
    metadata), each call once.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        Only this job.

    Returns
    -------
    iochar.result.Table
        One row per (job, interface): ``job_id``, ``app``, ``nprocs``,
        ``runtime_s`` [s], ``interface``, ``basis`` (counters or ops),
        ``read_s``, ``write_s``, ``meta_s`` (summed over processes and files
        [s]), ``io_s`` (their sum [s]), ``read_s_per_proc``,
        ``write_s_per_proc``, ``meta_s_per_proc`` (divided by ``nprocs``:
        PyDarshan's bars [s]) and ``pct_runtime`` (``100 * io_s / nprocs /
        runtime_s``: PyDarshan's right axis [%]; NaN without a run time).
    """
    check_int(job_id, "job_id", "io_cost", "None or an int", none=True)
    params = {"modules": list(_COST_MODULES), "job_id": None if job_id is None else int(job_id)}
    df = query(store, _COST_SQL, params=params).df()
    df["io_s"] = df["read_s"] + df["write_s"] + df["meta_s"]
    n = pd.to_numeric(df["nprocs"], errors="coerce").astype("float64")
    n = n.where(n > 0)
    for c in ("read_s", "write_s", "meta_s"):
        df[f"{c}_per_proc"] = df[c] / n
    rt = pd.to_numeric(df["runtime_s"], errors="coerce").astype("float64")
    df["pct_runtime"] = 100.0 * df["io_s"] / n / rt.where(rt > 0)
    return Table(
        df,
        params={"job_id": job_id},
        sql=_COST_SQL,
        evidence={"source": "PyDarshan summary, I/O Cost (darshan.experimental.plots)"},
    )


_MOUNT_SQL = r"""
WITH jm AS (
  SELECT j.job_id, unnest(from_json(s.meta -> 'mounts', '["VARCHAR[]"]')) AS m
  FROM jobs j JOIN sources s USING (source_id)
  WHERE json_type(s.meta -> 'mounts') = 'ARRAY'
),
mounts AS (SELECT job_id, m[1] AS mount, m[2] AS fs_type FROM jm WHERE len(m) >= 1),
c AS (
  SELECT s.job_id, s.file_id, coalesce(s.bytes_read, 0) AS bytes_read,
         coalesce(s.bytes_written, 0) AS bytes_written
  FROM file_stats s WHERE s.module IN ('POSIX', 'STDIO')
),
o AS (
  SELECT job_id, file_id,
         CASE WHEN op = 'read' THEN size ELSE 0 END AS bytes_read,
         CASE WHEN op = 'write' THEN size ELSE 0 END AS bytes_written
  FROM ops
  WHERE op IN ('read', 'write') AND size IS NOT NULL AND error IS NULL
    AND call IS DISTINCT FROM 'DXT_MPIIO'
    AND job_id NOT IN (SELECT job_id FROM file_stats)
),
per_file AS (
  SELECT u.job_id, u.file_id, f.path, sum(u.bytes_read) AS bytes_read,
         sum(u.bytes_written) AS bytes_written
  FROM (SELECT * FROM c UNION ALL SELECT * FROM o) u
  LEFT JOIN files f ON f.job_id = u.job_id AND f.file_id = u.file_id
  GROUP BY ALL
),
matched AS (
  SELECT p.*, arg_max(m.mount, length(m.mount)) AS mount,
         arg_max(m.fs_type, length(m.mount)) AS fs_type
  FROM per_file p LEFT JOIN mounts m
    ON m.job_id = p.job_id
   AND (m.mount = '/' OR p.path = m.mount OR starts_with(p.path, m.mount || '/'))
  GROUP BY ALL
)
SELECT coalesce(mount, CASE WHEN path IS NULL THEN '(no name)'
                            WHEN starts_with(path, '/') THEN regexp_extract(path, '^/[^/]*')
                            WHEN starts_with(path, '<') THEN '(standard streams)'
                            WHEN regexp_matches(path, '^[a-z_]+:\[') THEN '(pipes, sockets)'
                            ELSE '(relative paths)' END) AS mount,
       string_agg(DISTINCT fs_type, ',' ORDER BY fs_type) AS fs_type,
       bool_or(mount IS NOT NULL) AS from_mount_table,
       count(DISTINCT job_id) AS jobs,
       count(*) FILTER (WHERE bytes_read > 0) AS files_read,
       count(*) FILTER (WHERE bytes_written > 0) AS files_written,
       sum(bytes_read)::BIGINT AS bytes_read, sum(bytes_written)::BIGINT AS bytes_written
FROM matched
GROUP BY 1
ORDER BY sum(bytes_read) + sum(bytes_written) DESC, 1
"""


def volume_by_mount(store) -> Table:
    """Bytes read and written per mount point (PyDarshan's "Data Access by Category").

    PyDarshan's job summary groups the POSIX and STDIO records by file system
    and shows, per group, the bytes and files read and written. The rule here:
    a file belongs to the longest mount point of its job's Darshan mount table
    (``darshan_log_get_mounts``: the mount path and file system type) that is
    the file's path or a directory above it (libdarshan-util matches file to
    mount this way); without a mount table (traces) or a match, PyDarshan's
    rule: the path's first component (``/scratch`` for
    ``/scratch/x/y``). Names that are not absolute paths form groups of their
    own: ``(standard streams)`` (``<STDOUT>``...), ``(pipes, sockets)``
    (strace's ``pipe:[N]``, ``socket:[N]``), ``(relative paths)`` (a trace's
    ``./x``: no mount can be told) and ``(no name)``.
    Only POSIX and STDIO records are counted (MPI-IO and HDF5 calls end up in
    POSIX ones); a job without Darshan counters counts its traced reads and
    writes (DXT_MPIIO segments left out).

    Parameters
    ----------
    store : iochar.Store
        The database.

    Returns
    -------
    iochar.result.Table
        One row per mount point, most data first: ``mount``, ``fs_type``
        (from the mount tables, comma-separated when jobs disagree; else
        NULL), ``from_mount_table``, ``jobs``,
        ``files_read``, ``files_written`` (job x file pairs that moved bytes),
        ``bytes_read`` and ``bytes_written`` [bytes].
    """
    df = query(store, _MOUNT_SQL).df()
    return Table(
        df,
        sql=_MOUNT_SQL,
        evidence={"source": "PyDarshan summary, Data Access by Category"},
    )
