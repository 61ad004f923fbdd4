"""The built-in insight rules (issue 19, item 1), as data.

Threshold defaults follow Drishti (Bez et al., "Drishti: Guiding End-Users in the
I/O Optimization Journey", PDSW 2022), whose values live in the ``thresholds`` dict
of ``drishti/includes/config.py`` in github.com/hpc-io/drishti-io (commit
449398879fec2e2cfa7a6756a7ec93f6390e6626, lines 38-53; cited below as
``drishti config.py:<line>``). Drishti reports HIGH above those values; iochar
reports ``warn`` above them, ``high`` above a stricter second value (iochar's, said
so in each Param's source), and ``info`` when Drishti's absolute guard (``*_absolute``)
is not met. Darshan counter meanings are those of the darshan-runtime documentation
("Darshan-runtime installation and usage", POSIX/MPI-IO/STDIO counter tables).

Units: shares are fractions 0..1 of requests (or bytes, or seconds), sizes in bytes,
times in seconds.
"""

from __future__ import annotations

from iochar.analyze._sql import LAYER_OPS
from iochar.analyze.insights._rule import Param, Rule

__all__ = ["RULES"]

_DRISHTI = "drishti-io 4493988 drishti/includes/config.py:{line} ('{key}': {value})"


def _drishti(line: int, key: str, value: float) -> str:
    return _DRISHTI.format(line=line, key=key, value=value)


_JOB = "($job_id IS NULL OR job_id = $job_id)"

# -- small-io ---------------------------------------------------------------------------
# Darshan's POSIX_SIZE_{READ,WRITE}_* bins (access_sizes, module POSIX; bin_hi is
# exclusive, so the 100K_1M bin ends at 1048577) give every request of the job; a job
# without them (an strace capture, a trace) is graded from the sizes of its data ops,
# one layer per job (analyze._sql.LAYER_OPS: DXT_MPIIO repeats DXT_POSIX).
_SMALL_IO_SQL = f"""
WITH h AS (
  SELECT job_id,
         sum(count) FILTER (WHERE op = 'read') AS reads,
         sum(count) FILTER (WHERE op = 'read' AND bin_hi <= $small_bytes + 1) AS small_reads,
         sum(count) FILTER (WHERE op = 'write') AS writes,
         sum(count) FILTER (WHERE op = 'write' AND bin_hi <= $small_bytes + 1) AS small_writes
  FROM access_sizes WHERE module = 'POSIX' AND {_JOB} GROUP BY job_id),
t AS (
  SELECT job_id,
         count(*) FILTER (WHERE op = 'read') AS reads,
         count(*) FILTER (WHERE op = 'read' AND size <= $small_bytes) AS small_reads,
         count(*) FILTER (WHERE op = 'write') AS writes,
         count(*) FILTER (WHERE op = 'write' AND size <= $small_bytes) AS small_writes
  FROM ({LAYER_OPS}) o
  WHERE {_JOB} AND job_id NOT IN (SELECT job_id FROM h)
  GROUP BY job_id),
u AS (SELECT * FROM h UNION ALL SELECT * FROM t)
SELECT job_id,
       coalesce(reads, 0)::BIGINT AS reads, coalesce(small_reads, 0)::BIGINT AS small_reads,
       coalesce(writes, 0)::BIGINT AS writes,
       coalesce(small_writes, 0)::BIGINT AS small_writes,
       coalesce(small_reads / nullif(reads, 0), 0) AS small_read_share,
       coalesce(small_writes / nullif(writes, 0), 0) AS small_write_share,
       greatest(coalesce(small_reads / nullif(reads, 0), 0),
                coalesce(small_writes / nullif(writes, 0), 0)) AS small_share,
       CASE WHEN coalesce(small_reads / nullif(reads, 0), 0)
                 >= coalesce(small_writes / nullif(writes, 0), 0)
            THEN coalesce(small_reads, 0) ELSE coalesce(small_writes, 0) END::BIGINT
         AS small_requests
FROM u WHERE coalesce(reads, 0) + coalesce(writes, 0) > 0
"""

SMALL_IO = Rule(
    code="SMALL-IO-1",
    topic="small-io",
    title="Many small read or write requests",
    sql=_SMALL_IO_SQL,
    measure="small_share",
    warn_at="small_requests",
    high_at="small_requests_high",
    count="small_requests",
    min_count="small_requests_absolute",
    params=(
        Param("small_bytes", 1048576, "bytes", _drishti(39, "small_bytes", 1048576)),
        Param("small_requests", 0.1, "share", _drishti(40, "small_requests", 0.1)),
        Param(
            "small_requests_high",
            0.5,
            "share",
            "iochar: most requests small (more than half), a stricter level than Drishti's",
        ),
        Param(
            "small_requests_absolute", 1000, "count", _drishti(41, "small_requests_absolute", 1000)
        ),
    ),
    recommendation="Aggregate requests into larger, contiguous ones (buffer in the "
    "application, or use MPI-IO collective buffering or a high-level library that does).",
    reference="Drishti P05/P06 (drishti/includes/module.py check_small_operation); "
    "Darshan POSIX_SIZE_READ_*/POSIX_SIZE_WRITE_* counters",
    needs="Darshan POSIX access-size counters (access_sizes) or sized read/write ops",
)

# -- misaligned -------------------------------------------------------------------------
_MISALIGNED_SQL = f"""
SELECT job_id,
       sum(coalesce(reads, 0) + coalesce(writes, 0))::BIGINT AS requests,
       sum(coalesce(file_not_aligned, 0))::BIGINT AS file_not_aligned,
       sum(coalesce(mem_not_aligned, 0))::BIGINT AS mem_not_aligned,
       max(file_alignment)::BIGINT AS file_alignment,
       sum(coalesce(file_not_aligned, 0)) / sum(coalesce(reads, 0) + coalesce(writes, 0))
         AS file_misaligned_share,
       sum(coalesce(mem_not_aligned, 0)) / sum(coalesce(reads, 0) + coalesce(writes, 0))
         AS mem_misaligned_share,
       greatest(sum(coalesce(file_not_aligned, 0)), sum(coalesce(mem_not_aligned, 0)))
         / sum(coalesce(reads, 0) + coalesce(writes, 0)) AS misaligned_share
FROM file_stats
WHERE module = 'POSIX' AND {_JOB}
  AND (file_not_aligned IS NOT NULL OR mem_not_aligned IS NOT NULL)
GROUP BY job_id
HAVING sum(coalesce(reads, 0) + coalesce(writes, 0)) > 0
"""

MISALIGNED = Rule(
    code="MISALIGNED-1",
    topic="misaligned",
    title="Requests not aligned to the file system block (file offset or memory buffer)",
    sql=_MISALIGNED_SQL,
    measure="misaligned_share",
    warn_at="misaligned_requests",
    high_at="misaligned_requests_high",
    params=(
        Param("misaligned_requests", 0.1, "share", _drishti(42, "misaligned_requests", 0.1)),
        Param(
            "misaligned_requests_high",
            0.5,
            "share",
            "iochar: most requests misaligned (more than half)",
        ),
    ),
    recommendation="Align request offsets and buffers to the file system block "
    "(POSIX_FILE_ALIGNMENT; the Lustre stripe size on Lustre), e.g. with posix_memalign "
    "and block-multiple request sizes.",
    reference="Drishti P07/P08 (check_misaligned); Darshan POSIX_FILE_NOT_ALIGNED, "
    "POSIX_MEM_NOT_ALIGNED over POSIX_READS + POSIX_WRITES",
    needs="Darshan POSIX alignment counters (file_stats.file_not_aligned)",
)

# -- random-access ----------------------------------------------------------------------
# Darshan's POSIX_SEQ_READS counts reads at a higher offset than the previous one and
# includes POSIX_CONSEC_READS (offset right after the previous), so random = reads -
# seq_reads. Drishti computes the same number: handle_darshan.py sets sequential = SEQ -
# CONSEC, then random = reads - CONSEC - sequential = reads - SEQ (its P11 says 2269 random
# reads of 7822 on nonmpi_dxt_anonymized.darshan, as this rule; benchmarks/bench_drishti.py).
_RANDOM_SQL = f"""
WITH s AS (
  SELECT job_id, sum(coalesce(reads, 0)) AS reads, sum(coalesce(writes, 0)) AS writes,
         sum(coalesce(reads, 0) - coalesce(seq_reads, 0)) AS random_reads,
         sum(coalesce(writes, 0) - coalesce(seq_writes, 0)) AS random_writes
  FROM file_stats
  WHERE module = 'POSIX' AND (seq_reads IS NOT NULL OR seq_writes IS NOT NULL) AND {_JOB}
  GROUP BY job_id)
SELECT job_id, reads::BIGINT AS reads, writes::BIGINT AS writes,
       random_reads::BIGINT AS random_reads, random_writes::BIGINT AS random_writes,
       coalesce(random_reads / nullif(reads, 0), 0) AS random_read_share,
       coalesce(random_writes / nullif(writes, 0), 0) AS random_write_share,
       greatest(coalesce(random_reads / nullif(reads, 0), 0),
                coalesce(random_writes / nullif(writes, 0), 0)) AS random_share,
       (CASE WHEN coalesce(random_reads / nullif(reads, 0), 0)
                  >= coalesce(random_writes / nullif(writes, 0), 0)
             THEN random_reads ELSE random_writes END)::BIGINT AS random_requests
FROM s WHERE reads + writes > 0
"""

RANDOM_ACCESS = Rule(
    code="RANDOM-1",
    topic="random-access",
    title="Many random (non-sequential) reads or writes",
    sql=_RANDOM_SQL,
    measure="random_share",
    warn_at="random_operations",
    high_at="random_operations_high",
    count="random_requests",
    min_count="random_operations_absolute",
    params=(
        Param("random_operations", 0.2, "share", _drishti(44, "random_operations", 0.2)),
        Param("random_operations_high", 0.5, "share", "iochar: most requests random"),
        Param(
            "random_operations_absolute",
            1000,
            "count",
            _drishti(45, "random_operations_absolute", 1000),
        ),
    ),
    recommendation="Change the data layout or access order so that each process reads "
    "and writes at increasing offsets, or let a library reorder (MPI-IO collective I/O).",
    reference="Drishti P11/P13 (check_random_operation); Darshan POSIX_SEQ_READS/WRITES "
    "(which include POSIX_CONSEC_*)",
    needs="Darshan POSIX sequence counters (file_stats.seq_reads)",
)

# -- metadata-heavy ---------------------------------------------------------------------
_META_SQL = f"""
SELECT job_id,
       sum(coalesce(meta_time, 0)) AS meta_s,
       sum(coalesce(read_time, 0) + coalesce(write_time, 0)) AS data_s,
       sum(coalesce(meta_time, 0))
         / nullif(sum(coalesce(meta_time, 0) + coalesce(read_time, 0)
                      + coalesce(write_time, 0)), 0) AS meta_share,
       max(meta_time) AS max_record_meta_s,
       count(*) FILTER (WHERE meta_time > $metadata_time_rank)::BIGINT AS records_over
FROM file_stats
WHERE module = 'POSIX' AND meta_time IS NOT NULL AND {_JOB}
GROUP BY job_id
"""

METADATA_HEAVY = Rule(
    code="METADATA-1",
    topic="metadata-heavy",
    title="Metadata operations (open, stat, seek, sync...) take much of the I/O time",
    sql=_META_SQL,
    measure="meta_share",
    warn_at="metadata_share",
    high_at="metadata_share_high",
    count="max_record_meta_s",
    min_count="metadata_time_rank",
    params=(
        Param(
            "metadata_share",
            0.1,
            "share",
            "iochar: the 10% level Drishti uses for its share thresholds (drishti config.py:38-48)",
        ),
        Param("metadata_share_high", 0.5, "share", "iochar: more metadata time than data time"),
        Param("metadata_time_rank", 30, "s", _drishti(43, "metadata_time_rank", 30)),
    ),
    recommendation="Open files once and keep them open, combine small files, avoid "
    "repeated stat/seek/sync calls, and cache metadata.",
    reference="Drishti P17 (check_long_metadata: POSIX_F_META_TIME above 30 s); Darshan "
    "POSIX_F_META_TIME, POSIX_F_READ_TIME, POSIX_F_WRITE_TIME",
    needs="Darshan POSIX timing counters (file_stats.meta_time)",
)

# -- stdio-heavy ------------------------------------------------------------------------
# Bytes moved through MPI-IO are also counted by the file API under it, so the job's
# volume is STDIO + max(POSIX, MPI-IO, DFS). Drishti takes STDIO + max(POSIX, MPI-IO)
# (handle_darshan.py:246-249) and misses DFS, the DAOS file API an application (IOR
# -a DFS) or ROMIO's DAOS driver calls instead of POSIX: darshan-runtime's DFS module
# counts its bytes in DFS_BYTES_READ / DFS_BYTES_WRITTEN (one record per file, kept in
# module_counters). The DAOS module below DFS counts the same bytes again as object
# I/O, so it is left out. Without DFS, a DFS job's few STDIO bytes (its console output)
# read as all of its data.
_STDIO_SQL = f"""
WITH b AS (
  SELECT job_id, module, sum(coalesce(bytes_read, 0) + coalesce(bytes_written, 0)) AS bytes
  FROM file_stats WHERE module IN ('STDIO', 'POSIX', 'MPI-IO') AND {_JOB}
  GROUP BY job_id, module
  UNION ALL
  SELECT job_id, 'DFS' AS module, sum(value) AS bytes
  FROM module_counters
  WHERE module = 'DFS' AND counter IN ('DFS_BYTES_READ', 'DFS_BYTES_WRITTEN') AND {_JOB}
  GROUP BY job_id),
p AS (
  SELECT job_id,
         coalesce(sum(bytes) FILTER (WHERE module = 'STDIO'), 0) AS stdio_bytes,
         coalesce(sum(bytes) FILTER (WHERE module = 'DFS'), 0) AS dfs_bytes,
         greatest(coalesce(sum(bytes) FILTER (WHERE module = 'POSIX'), 0),
                  coalesce(sum(bytes) FILTER (WHERE module = 'MPI-IO'), 0),
                  coalesce(sum(bytes) FILTER (WHERE module = 'DFS'), 0)) AS other_bytes
  FROM b GROUP BY job_id
  HAVING bool_or(module = 'STDIO'))
SELECT job_id, stdio_bytes::BIGINT AS stdio_bytes, dfs_bytes::BIGINT AS dfs_bytes,
       (stdio_bytes + other_bytes)::BIGINT AS total_bytes,
       stdio_bytes / nullif(stdio_bytes + other_bytes, 0) AS stdio_share
FROM p
"""

STDIO_HEAVY = Rule(
    code="STDIO-1",
    topic="stdio-heavy",
    title="Much of the data moves through STDIO (fread/fwrite/fprintf)",
    sql=_STDIO_SQL,
    measure="stdio_share",
    warn_at="interface_stdio",
    high_at="interface_stdio_high",
    count="stdio_bytes",
    min_count="stdio_bytes_absolute",
    params=(
        Param("interface_stdio", 0.1, "share", _drishti(48, "interface_stdio", 0.1)),
        Param("interface_stdio_high", 0.5, "share", "iochar: most bytes through STDIO"),
        Param(
            "stdio_bytes_absolute",
            1048576,
            "bytes",
            "iochar: less than one small request's worth through STDIO (Drishti "
            "small_bytes, drishti config.py:39) is only info; the data of a job may move "
            "through a module neither file_stats nor DFS counts (e.g. DAOS objects)",
        ),
    ),
    recommendation="Move bulk data to a high-performance interface (POSIX with large "
    "requests, MPI-IO, or HDF5/PnetCDF); keep STDIO for logs and small text.",
    reference="Drishti S01 (check_stdio); Darshan STDIO_BYTES_READ/WRITTEN, "
    "POSIX_/MPIIO_/DFS_BYTES_READ/WRITTEN",
    needs="Darshan STDIO module records (file_stats module STDIO)",
)

# -- many-small-files -------------------------------------------------------------------
_FILES_SQL = f"""
WITH f AS (
  SELECT job_id, file_id,
         max(greatest(coalesce(max_byte_read, -1), coalesce(max_byte_written, -1))) + 1
           AS extent
  FROM file_stats
  WHERE module IN ('POSIX', 'STDIO') AND {_JOB}
    AND (max_byte_read IS NOT NULL OR max_byte_written IS NOT NULL)
  GROUP BY job_id, file_id)
SELECT job_id, count(*)::BIGINT AS files,
       count(*) FILTER (WHERE extent > 0 AND extent <= $small_file_bytes)::BIGINT
         AS small_files,
       count(*) FILTER (WHERE extent > 0 AND extent <= $small_file_bytes)
         / count(*) FILTER (WHERE extent > 0) AS small_file_share
FROM f GROUP BY job_id HAVING count(*) FILTER (WHERE extent > 0) > 0
"""

MANY_SMALL_FILES = Rule(
    code="SMALL-FILES-1",
    topic="many-small-files",
    title="Many small files accessed",
    sql=_FILES_SQL,
    measure="small_file_share",
    warn_at="small_file_share",
    high_at="small_file_share_high",
    count="small_files",
    min_count="small_files_absolute",
    params=(
        Param(
            "small_file_bytes",
            1048576,
            "bytes",
            "Lustre Operations Manual, Data on MDT: default DoM component size 1 MiB "
            "(files up to it fit on the metadata target); same as Drishti small_bytes "
            "(drishti config.py:39)",
        ),
        Param("small_file_share", 0.5, "share", "iochar: most accessed files are small"),
        Param("small_file_share_high", 0.9, "share", "iochar: nearly all files are small"),
        Param(
            "small_files_absolute",
            100,
            "count",
            "iochar: below a hundred files the per-file open/close cost stays small",
        ),
    ),
    recommendation="Pack small files into fewer larger ones (an archive, HDF5 or "
    "a container file), or place them where small files are cheap (Lustre Data on MDT, "
    "node-local storage).",
    reference="Carns et al., 'Small-file access in parallel file systems', IPDPS 2009; "
    "Darshan POSIX_MAX_BYTE_READ/WRITTEN",
    needs="per-file extents (file_stats.max_byte_read / max_byte_written)",
)

# -- incomplete-log ---------------------------------------------------------------------
_INCOMPLETE_SQL = """
WITH s AS (
  SELECT source_id, json_array_length(coalesce(meta -> 'incomplete', '[]')) AS n
  FROM sources WHERE kind = 'darshan')
SELECT j.job_id, s.n::BIGINT AS incomplete_modules
FROM jobs j JOIN s USING (source_id)
WHERE ($job_id IS NULL OR j.job_id = $job_id)
"""

INCOMPLETE_LOG = Rule(
    code="INCOMPLETE-1",
    topic="incomplete-log",
    title="Darshan ran out of memory in a module: its totals are lower bounds",
    sql=_INCOMPLETE_SQL,
    measure="incomplete_modules",
    warn_at="incomplete_modules",
    params=(
        Param(
            "incomplete_modules",
            0,
            "count",
            "darshan-util darshan-parser.c: any module with its partial_flag bit set "
            "'contains incomplete data'",
        ),
    ),
    recommendation="Rerun with more Darshan record memory (DARSHAN_MODMEM, or "
    "DARSHAN_MOD_ENABLE/DARSHAN_CONFIG_PATH to raise the module's record limit); read "
    "the flagged module's totals as lower bounds.",
    reference="darshan-runtime documentation, 'Darshan configuration' (MODMEM, "
    "MAX_RECORDS); iochar.analyze.darshan_modules",
    needs="a Darshan log (sources.meta)",
)

# -- no-collective ----------------------------------------------------------------------
_COLL_SQL = f"""
WITH c AS (
  SELECT job_id,
         sum(value) FILTER (WHERE counter IN ('MPIIO_INDEP_READS', 'MPIIO_INDEP_WRITES'))
           AS indep_ops,
         sum(value) FILTER (WHERE counter IN ('MPIIO_COLL_READS', 'MPIIO_COLL_WRITES'))
           AS coll_ops,
         sum(value) FILTER (WHERE counter = 'MPIIO_INDEP_READS') AS indep_reads,
         sum(value) FILTER (WHERE counter = 'MPIIO_INDEP_WRITES') AS indep_writes,
         sum(value) FILTER (WHERE counter = 'MPIIO_COLL_READS') AS coll_reads,
         sum(value) FILTER (WHERE counter = 'MPIIO_COLL_WRITES') AS coll_writes
  FROM module_counters
  WHERE module = 'MPI-IO' AND counter IN ('MPIIO_INDEP_READS', 'MPIIO_INDEP_WRITES',
        'MPIIO_COLL_READS', 'MPIIO_COLL_WRITES') AND {_JOB}
  GROUP BY job_id)
SELECT job_id, indep_ops::BIGINT AS indep_ops, coll_ops::BIGINT AS coll_ops,
       indep_reads::BIGINT AS indep_reads, indep_writes::BIGINT AS indep_writes,
       coll_reads::BIGINT AS coll_reads, coll_writes::BIGINT AS coll_writes,
       indep_ops / (indep_ops + coll_ops) AS indep_share
FROM c WHERE indep_ops + coll_ops > 0
"""


def _collective_params(high_source: str) -> tuple[Param, ...]:
    """The thresholds of the MPI-IO collective rules: Drishti's share and absolute
    count, and iochar's high level (0.99), whose source each rule states."""
    return (
        Param("collective_operations", 0.5, "share", _drishti(49, "collective_operations", 0.5)),
        Param("collective_operations_high", 0.99, "share", high_source),
        Param(
            "collective_operations_absolute",
            1000,
            "count",
            _drishti(50, "collective_operations_absolute", 1000),
        ),
    )


NO_COLLECTIVE = Rule(
    code="NO-COLLECTIVE-1",
    topic="no-collective",
    title="MPI-IO used mostly with independent rather than collective reads/writes",
    sql=_COLL_SQL,
    measure="indep_share",
    warn_at="collective_operations",
    high_at="collective_operations_high",
    count="indep_ops",
    min_count="collective_operations_absolute",
    params=_collective_params(
        "iochar: no collective calls at all, Drishti M02/M03's condition "
        "(MPIIO_COLL_* == 0, module.py:1459)"
    ),
    recommendation="Use collective calls (MPI_File_read_all / MPI_File_write_at_all) so "
    "that ROMIO's two-phase I/O aggregates requests; set one aggregator per node "
    "(cb_nodes hint).",
    reference="Drishti M02/M03 (check_mpi_collective_*_operation); Thakur et al., "
    "'Data sieving and collective I/O in ROMIO', Frontiers 1999",
    needs="Darshan MPI-IO counters (module_counters MPIIO_INDEP_*/MPIIO_COLL_*)",
)

# -- redundant-reads --------------------------------------------------------------------
# A file's bytes read beyond its read extent (POSIX_MAX_BYTE_READ + 1) were read more
# than once (by one rank, or by several ranks of a shared record): a lower bound of the
# re-read bytes. Drishti P09's message says the same ("more data read than the highest
# offset") but its test is the reverse (module.py:506, max offset > bytes read, i.e.
# sparse reads), over job-wide maxima; iochar tests the message's condition per file.
_REDUNDANT_SQL = f"""
WITH f AS (
  SELECT job_id, file_id, sum(coalesce(bytes_read, 0)) AS bytes_read,
         max(max_byte_read) + 1 AS extent
  FROM file_stats
  WHERE module = 'POSIX' AND max_byte_read IS NOT NULL AND {_JOB}
  GROUP BY job_id, file_id)
SELECT job_id, sum(bytes_read)::BIGINT AS bytes_read,
       sum(greatest(0, bytes_read - extent))::BIGINT AS reread_bytes,
       count(*) FILTER (WHERE bytes_read > extent)::BIGINT AS reread_files,
       sum(greatest(0, bytes_read - extent)) / sum(bytes_read) AS reread_share
FROM f GROUP BY job_id HAVING sum(bytes_read) > 0
"""

REDUNDANT_READS = Rule(
    code="REDUNDANT-READS-1",
    topic="redundant-reads",
    title="The same file bytes are read more than once",
    sql=_REDUNDANT_SQL,
    measure="reread_share",
    warn_at="reread_share",
    high_at="reread_share_high",
    count="reread_bytes",
    min_count="reread_bytes_absolute",
    params=(
        Param(
            "reread_share",
            0.0,
            "share",
            "Drishti P09 warns on any excess (drishti-io module.py:506, message's condition)",
        ),
        Param(
            "reread_share_high",
            0.5,
            "share",
            "iochar: half the bytes read are re-reads (the data is read at least twice)",
        ),
        Param(
            "reread_bytes_absolute",
            1048576,
            "bytes",
            "iochar: less than one small request's worth (Drishti small_bytes, drishti "
            "config.py:39) is only info",
        ),
    ),
    recommendation="Read each piece once and keep it (cache in memory, or read on one "
    "rank and broadcast with MPI_Bcast / collective reads).",
    reference="Drishti P09 (check_traffic); Darshan POSIX_BYTES_READ, POSIX_MAX_BYTE_READ",
    needs="per-file POSIX bytes read and extents (file_stats.max_byte_read)",
)

# -- shared-file-independent ------------------------------------------------------------
# A file is shared when Darshan reduced its MPI-IO record over all ranks (rank NULL) or
# when several ranks have records of it. On each shared file, the share of MPI-IO calls
# that were independent; the job is graded on its worst shared file (Drishti's per-file
# detail of M02/M03, module.py:582-584, uses the same 1000-call guard). The worst file
# has the highest share, ties broken by the most independent calls (share * 1e18 +
# calls orders by share first: calls are far below 1e18).
_SHARED_INDEP_SQL = f"""
WITH f AS (
  SELECT job_id, file_id,
         sum(value) FILTER (WHERE counter IN ('MPIIO_INDEP_READS', 'MPIIO_INDEP_WRITES'))
           AS indep_ops,
         sum(value) FILTER (WHERE counter IN ('MPIIO_COLL_READS', 'MPIIO_COLL_WRITES'))
           AS coll_ops
  FROM module_counters
  WHERE module = 'MPI-IO' AND file_id IS NOT NULL AND {_JOB}
    AND counter IN ('MPIIO_INDEP_READS', 'MPIIO_INDEP_WRITES',
                    'MPIIO_COLL_READS', 'MPIIO_COLL_WRITES')
  GROUP BY job_id, file_id
  HAVING bool_or(rank IS NULL) OR count(DISTINCT rank) > 1),
g AS (SELECT *, indep_ops / (indep_ops + coll_ops) AS share FROM f
      WHERE indep_ops + coll_ops > 0)
SELECT job_id, count(*)::BIGINT AS shared_files,
       arg_max(file_id, (share, indep_ops, -file_id)) AS worst_file_id,  -- ties: lowest id
       max(share) AS indep_share,
       arg_max(indep_ops, (share, indep_ops, -file_id))::BIGINT AS indep_ops,
       arg_max(coll_ops, (share, indep_ops, -file_id))::BIGINT AS coll_ops
FROM g GROUP BY job_id
"""

SHARED_FILE_INDEPENDENT = Rule(
    code="SHARED-INDEP-1",
    topic="shared-file-independent",
    title="A file shared by several ranks is accessed with independent MPI-IO calls",
    sql=_SHARED_INDEP_SQL,
    measure="indep_share",
    warn_at="collective_operations",
    high_at="collective_operations_high",
    count="indep_ops",
    min_count="collective_operations_absolute",
    params=_collective_params("iochar: (nearly) no collective call on the file"),
    recommendation="Access the shared file with collective calls (MPI_File_write_all, "
    "MPI_File_read_at_all) so ROMIO's two-phase I/O merges the ranks' requests.",
    reference="Drishti M02/M03 per-file detail (module.py:582); Thakur et al., 'Data "
    "sieving and collective I/O in ROMIO', Frontiers 1999",
    needs="Darshan MPI-IO counters of a shared file (module_counters)",
)

#: The built-in rules, in report order.
RULES: tuple[Rule, ...] = (
    INCOMPLETE_LOG,
    SMALL_IO,
    MISALIGNED,
    RANDOM_ACCESS,
    METADATA_HEAVY,
    STDIO_HEAVY,
    MANY_SMALL_FILES,
    REDUNDANT_READS,
    NO_COLLECTIVE,
    SHARED_FILE_INDEPENDENT,
)
