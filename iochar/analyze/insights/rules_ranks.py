"""Insight rules on ranks and Lustre targets (issue 19, item 1), as data.

Topics ``imbalance``, ``straggler``, ``skew``, ``rank0-bottleneck``, ``bad-ost`` and
``striping``. Each rule reads Darshan's counters as iochar stores them
(``module_counters``: one row per record and counter; ``file_stats``: the POSIX/MPI-IO/
STDIO records; a shared record, Darshan rank -1, has ``rank`` NULL) and follows the
grading contract of :mod:`iochar.analyze.insights._rule`.

Counter meanings are those of the darshan-runtime documentation ("Darshan-runtime
installation and usage", POSIX module counters): on a record Darshan reduced over all
ranks (a file every rank opened), ``POSIX_FASTEST_RANK`` / ``POSIX_SLOWEST_RANK`` are the
ranks with the least / most I/O time (read + write + metadata) on the file,
``POSIX_FASTEST_RANK_BYTES`` / ``POSIX_SLOWEST_RANK_BYTES`` the bytes they moved,
``POSIX_F_FASTEST_RANK_TIME`` / ``POSIX_F_SLOWEST_RANK_TIME`` their times (s), and
``POSIX_F_VARIANCE_RANK_BYTES`` / ``POSIX_F_VARIANCE_RANK_TIME`` the (population)
variance over all ranks of the bytes / time; ``POSIX_F_READ_TIME``,
``POSIX_F_WRITE_TIME``, ``POSIX_F_META_TIME`` are summed over the ranks. MPI-IO time
(``MPIIO_F_*_TIME``) is the wall time of the MPI-IO calls and includes the POSIX calls
they make, which POSIX counts too. The LUSTRE module (Darshan 3.4 layout, which
libdarshan-util also gives older logs; iochar names it as darshan-parser prints it)
records each file's layout: ``LUSTRE_COMP<k>_STRIPE_COUNT`` and the OST index of each
stripe, ``LUSTRE_COMP<k>_OST_ID_<j>``. iochar takes a file's stripe count as the number
of distinct OSTs holding it (``LUSTRE_STRIPE_WIDTH`` of the older layout).

Drishti thresholds are cited as in :mod:`iochar.analyze.insights.rules` (drishti-io
4493988 ``drishti/includes/config.py:<line>``), its checks as
``drishti/handlers/handle_darshan.py:<line>`` of drishti-io 0.8 (the version
installed from PyPI). Units: shares are fractions 0..1, sizes bytes, times seconds,
rates bytes per second.
"""

from __future__ import annotations

from iochar.analyze import lustre
from iochar.analyze.insights._rule import Param, Rule

__all__ = ["RULES"]

_JOB = "($job_id IS NULL OR job_id = $job_id)"

_DRISHTI = "drishti-io 4493988 drishti/includes/config.py:{line} ('{key}': {value})"
_HANDLER = "drishti-io 0.8 drishti/handlers/handle_darshan.py:{line}"


def _drishti(line: int, key: str, value: float) -> str:
    return _DRISHTI.format(line=line, key=key, value=value)


#: Carns et al. 2011 (ACM TOS 7(3), "Understanding and improving computational science
#: storage access through continuous characterization") Sec. 5.2: rank-0 reading that
#: "constituted only 1% of the run time ... will likely not be a significant problem".
_RUNTIME_SHARE = Param(
    "runtime_share",
    0.01,
    "share",
    "Carns et al. 2011 Sec. 5.2: poor I/O costing 1% of the run time 'will likely not be "
    "a significant problem' (at or below it the finding is only info)",
)

_SMALL_BYTES = Param(
    "imbalance_bytes_absolute",
    1048576,
    "bytes",
    "iochar: a file that moved less than one small request's worth (Drishti small_bytes, "
    "drishti config.py:39) costs little however it is split (only info)",
)

# Distinct OSTs of each file (LUSTRE_COMP<k>_OST_ID_<j>; negative ids are not stripes).
_OSTS = lustre.OSTS_SQL

_STRIPES = f"""
  SELECT job_id, file_id, count(*) AS stripe_count FROM ({_OSTS}) GROUP BY job_id, file_id"""


# -- imbalance: shared files (Drishti P18) ---------------------------------------------
# Per shared POSIX record, |SLOWEST_RANK_BYTES - FASTEST_RANK_BYTES| over the file's
# bytes (Drishti handle_darshan.py:476). The job is graded on its worst file, chosen
# among files above the byte guard first, then by imbalance, then by bytes. The cause:
# the worst file's stripe count (1: every rank's data on one OST) and the spread of
# bytes over ranks (coefficient of variation from POSIX_F_VARIANCE_RANK_BYTES).
_IMBALANCE_SQL = f"""
WITH s AS (
  SELECT job_id, file_id, record,
         max(value) FILTER (WHERE counter = 'POSIX_SLOWEST_RANK_BYTES') AS slowest_bytes,
         max(value) FILTER (WHERE counter = 'POSIX_FASTEST_RANK_BYTES') AS fastest_bytes,
         max(value) FILTER (WHERE counter = 'POSIX_SLOWEST_RANK') AS slowest_rank,
         max(value) FILTER (WHERE counter = 'POSIX_F_VARIANCE_RANK_BYTES') AS var_bytes,
         sum(value) FILTER (WHERE counter IN ('POSIX_BYTES_READ', 'POSIX_BYTES_WRITTEN'))
           AS bytes
  FROM module_counters
  WHERE module = 'POSIX' AND rank IS NULL AND file_id IS NOT NULL AND {_JOB}
    AND counter IN ('POSIX_SLOWEST_RANK_BYTES', 'POSIX_FASTEST_RANK_BYTES',
                    'POSIX_SLOWEST_RANK', 'POSIX_F_VARIANCE_RANK_BYTES',
                    'POSIX_BYTES_READ', 'POSIX_BYTES_WRITTEN')
  GROUP BY job_id, file_id, record),
g AS (
  SELECT s.*, abs(slowest_bytes - fastest_bytes) / bytes AS imbalance,
         sqrt(greatest(var_bytes, 0)) / (bytes / j.nprocs) AS rank_bytes_cv,
         j.nprocs
  FROM s JOIN jobs j USING (job_id)
  WHERE bytes > 0 AND slowest_bytes >= 0 AND fastest_bytes >= 0 AND j.nprocs > 1),
r AS (
  SELECT *, count(*) OVER w AS shared_files,
         count(*) FILTER (WHERE imbalance > $imbalance_stragglers) OVER w AS imbalanced_files,
         row_number() OVER (w ORDER BY bytes > $imbalance_bytes_absolute DESC,
                            imbalance DESC, bytes DESC, file_id) AS pick
  FROM g WINDOW w AS (PARTITION BY job_id))
SELECT r.job_id, r.shared_files::BIGINT AS shared_files,
       r.imbalanced_files::BIGINT AS imbalanced_files, r.file_id AS worst_file_id,
       r.imbalance, r.bytes::BIGINT AS file_bytes,
       r.slowest_bytes::BIGINT AS slowest_rank_bytes,
       r.fastest_bytes::BIGINT AS fastest_rank_bytes,
       r.slowest_rank::BIGINT AS slowest_rank, r.slowest_bytes / r.bytes AS slowest_rank_share,
       r.rank_bytes_cv,
       st.stripe_count::BIGINT AS stripe_count,
       (st.stripe_count = 1)::INTEGER AS single_stripe
FROM r LEFT JOIN ({_STRIPES}) st USING (job_id, file_id)
WHERE r.pick = 1
"""

IMBALANCE_SHARED = Rule(
    code="IMBALANCE-1",
    topic="imbalance",
    title="Ranks move very different amounts of data on a shared file",
    sql=_IMBALANCE_SQL,
    measure="imbalance",
    warn_at="imbalance_stragglers",
    high_at="imbalance_stragglers_high",
    count="file_bytes",
    min_count="imbalance_bytes_absolute",
    params=(
        Param(
            "imbalance_stragglers",
            0.15,
            "share",
            _drishti(46, "imbalance_stragglers", 0.15)
            + "; Drishti P18's test, "
            + _HANDLER.format(line=476),
        ),
        Param(
            "imbalance_stragglers_high",
            0.5,
            "share",
            "iochar: the slowest and fastest ranks differ by more than half the file's bytes",
        ),
        _SMALL_BYTES,
    ),
    recommendation="Balance the data between the ranks (equal blocks per rank, or "
    "collective I/O that redistributes it); when stripe_count is 1 the whole shared file "
    "sits on one OST: stripe it over more OSTs (lfs setstripe -c) before writing it.",
    reference="Drishti P18 (check_shared_data_imblance, handle_darshan.py:476); Darshan "
    "POSIX_SLOWEST_RANK_BYTES, POSIX_FASTEST_RANK_BYTES, POSIX_F_VARIANCE_RANK_BYTES",
    needs="a shared (all-rank) Darshan POSIX record of a multi-process job",
)

# -- imbalance: partially shared files (Drishti P21/P22) -------------------------------
# A file with per-rank POSIX records from several ranks (opened by some ranks only, so
# Darshan kept one record per rank): (max - min) / max of the ranks' bytes written, and
# of bytes read (Drishti handle_darshan.py:533 and :549); the worse of the two.
_IMBALANCE_RANKS_SQL = f"""
WITH r AS (
  SELECT job_id, file_id, rank, sum(coalesce(bytes_written, 0)) AS w,
         sum(coalesce(bytes_read, 0)) AS rd
  FROM file_stats WHERE module = 'POSIX' AND rank IS NOT NULL AND {_JOB}
  GROUP BY job_id, file_id, rank),
f AS (
  SELECT job_id, file_id, count(*) AS ranks, sum(w + rd) AS bytes,
         coalesce((max(w) - min(w)) / nullif(max(w), 0), 0) AS write_imbalance,
         coalesce((max(rd) - min(rd)) / nullif(max(rd), 0), 0) AS read_imbalance
  FROM r GROUP BY job_id, file_id HAVING count(*) > 1 AND sum(w + rd) > 0),
g AS (
  SELECT *, greatest(write_imbalance, read_imbalance) AS imbalance,
         count(*) OVER w AS multi_rank_files,
         count(*) FILTER (WHERE greatest(write_imbalance, read_imbalance) > $imbalance_size)
           OVER w AS imbalanced_files,
         row_number() OVER (w ORDER BY bytes > $imbalance_bytes_absolute DESC,
                            greatest(write_imbalance, read_imbalance) DESC, bytes DESC,
                            file_id) AS pick
  FROM f WINDOW w AS (PARTITION BY job_id))
SELECT g.job_id, g.multi_rank_files::BIGINT AS multi_rank_files,
       g.imbalanced_files::BIGINT AS imbalanced_files, g.file_id AS worst_file_id,
       g.ranks::BIGINT AS ranks, g.imbalance, g.write_imbalance, g.read_imbalance,
       g.bytes::BIGINT AS file_bytes, st.stripe_count::BIGINT AS stripe_count,
       (st.stripe_count = 1)::INTEGER AS single_stripe
FROM g LEFT JOIN ({_STRIPES}) st USING (job_id, file_id)
WHERE g.pick = 1
"""

IMBALANCE_RANKS = Rule(
    code="IMBALANCE-2",
    topic="imbalance",
    title="Ranks sharing a file (without a shared record) write or read very different amounts",
    sql=_IMBALANCE_RANKS_SQL,
    measure="imbalance",
    warn_at="imbalance_size",
    high_at="imbalance_size_high",
    count="file_bytes",
    min_count="imbalance_bytes_absolute",
    params=(
        Param(
            "imbalance_size",
            0.3,
            "share",
            _drishti(47, "imbalance_size", 0.3)
            + "; Drishti P21/P22's test, "
            + _HANDLER.format(line=533)
            + " and :549",
        ),
        Param(
            "imbalance_size_high",
            0.9,
            "share",
            "iochar: some rank moves less than a tenth of what the busiest rank moves",
        ),
        _SMALL_BYTES,
    ),
    recommendation="Give each rank an equal share of the file's data, or let MPI-IO "
    "collective calls aggregate it on a few evenly loaded ranks.",
    reference="Drishti P21/P22 (check_individual_write/read_imbalance, "
    "handle_darshan.py:533/549); Darshan per-rank POSIX_BYTES_WRITTEN/READ",
    needs="per-rank Darshan POSIX records of one file from several ranks",
)

# -- straggler -------------------------------------------------------------------------
# A group of ranks waits for its slowest one. Groups: each shared POSIX record (slowest
# rank's time POSIX_F_SLOWEST_RANK_TIME against the mean over all ranks, the record's
# read + write + meta time / nprocs), and the job's per-rank POSIX records taken
# together (each rank's summed time, over the ranks that have such records, two or
# more). measure = slowest / mean - 1. Drishti P19 divides slowest - fastest by the
# sum over ranks (handle_darshan.py:504), which shrinks with the rank count (a rank 100x
# slower than 2047 others gives 0.046 < 0.15); for two ranks its test is exactly
# slowest / mean - 1 > 0.15, which iochar applies at every scale. Guard: the time the
# group loses waiting (slowest - mean) as a share of the job's run time.
_STRAGGLER_SQL = f"""
WITH s AS (
  SELECT job_id, file_id,
         max(value) FILTER (WHERE counter = 'POSIX_F_SLOWEST_RANK_TIME') AS slowest_s,
         max(value) FILTER (WHERE counter = 'POSIX_F_FASTEST_RANK_TIME') AS fastest_s,
         max(value) FILTER (WHERE counter = 'POSIX_SLOWEST_RANK') AS slowest_rank,
         sum(value) FILTER (WHERE counter IN ('POSIX_F_READ_TIME', 'POSIX_F_WRITE_TIME',
                                              'POSIX_F_META_TIME')) AS total_s
  FROM module_counters
  WHERE module = 'POSIX' AND rank IS NULL AND file_id IS NOT NULL AND {_JOB}
    AND counter IN ('POSIX_F_SLOWEST_RANK_TIME', 'POSIX_F_FASTEST_RANK_TIME',
                    'POSIX_SLOWEST_RANK', 'POSIX_F_READ_TIME', 'POSIX_F_WRITE_TIME',
                    'POSIX_F_META_TIME')
  GROUP BY job_id, file_id, record),
shared AS (
  SELECT s.job_id, s.file_id, j.nprocs AS ranks, slowest_rank, slowest_s, fastest_s,
         total_s / j.nprocs AS mean_s
  FROM s JOIN jobs j USING (job_id)
  WHERE j.nprocs > 1 AND total_s > 0 AND slowest_s >= 0 AND fastest_s >= 0),
pr AS (
  SELECT job_id, rank,
         sum(coalesce(read_time, 0) + coalesce(write_time, 0) + coalesce(meta_time, 0)) AS t
  FROM file_stats WHERE module = 'POSIX' AND rank IS NOT NULL AND {_JOB}
  GROUP BY job_id, rank),
per_rank AS (
  SELECT job_id, NULL::BIGINT AS file_id, count(*) AS ranks,
         arg_max(rank, (t, -rank)) AS slowest_rank,  -- equal times: the lowest rank
         max(t) AS slowest_s, min(t) AS fastest_s, avg(t) AS mean_s
  FROM pr GROUP BY job_id HAVING count(*) > 1 AND sum(t) > 0),
g AS (
  SELECT u.*, slowest_s / mean_s - 1 AS excess, slowest_s - mean_s AS lost_s,
         (slowest_s - mean_s) / j.runtime_s AS lost_runtime_share
  FROM (SELECT * FROM shared UNION ALL SELECT * FROM per_rank) u JOIN jobs j USING (job_id)),
r AS (
  SELECT *, count(*) OVER w AS groups,
         row_number() OVER (w ORDER BY coalesce(lost_runtime_share, 0) > $runtime_share DESC,
                            excess DESC, lost_s DESC, file_id NULLS FIRST) AS pick
  FROM g WINDOW w AS (PARTITION BY job_id))
SELECT r.job_id, r.groups::BIGINT AS groups, r.file_id AS worst_file_id,
       r.ranks::BIGINT AS ranks, r.slowest_rank::BIGINT AS slowest_rank,
       r.slowest_s, r.mean_s, r.fastest_s, r.excess, r.lost_s, r.lost_runtime_share,
       st.stripe_count::BIGINT AS stripe_count,
       (st.stripe_count = 1)::INTEGER AS single_stripe
FROM r LEFT JOIN ({_STRIPES}) st USING (job_id, file_id)
WHERE r.pick = 1
"""

STRAGGLER = Rule(
    code="STRAGGLER-1",
    topic="straggler",
    title="One rank's I/O takes far longer than the other ranks' (a straggler)",
    sql=_STRAGGLER_SQL,
    measure="excess",
    warn_at="imbalance_stragglers",
    high_at="straggler_high",
    count="lost_runtime_share",
    min_count="runtime_share",
    params=(
        Param(
            "imbalance_stragglers",
            0.15,
            "share",
            _drishti(46, "imbalance_stragglers", 0.15)
            + "; Drishti P19 ("
            + _HANDLER.format(line=504)
            + ") equals slowest/mean - 1 > 0.15 for two ranks",
        ),
        Param(
            "straggler_high",
            1.0,
            "share",
            "iochar: the slowest rank takes twice the mean (half its I/O time is waiting "
            "the others would not do)",
        ),
        _RUNTIME_SHARE,
    ),
    recommendation="Find why the slowest rank is slow: more data (see IMBALANCE), a "
    "shared file on one OST (stripe_count 1: stripe it), a slow OST (see BAD-OST), or a "
    "busy node; balance the work or let a collective spread it.",
    reference="Drishti P19 (check_shared_time_imbalance, handle_darshan.py:504); Carns "
    "et al. 2011 Sec. 2.4 (the slowest process's I/O time); Darshan "
    "POSIX_F_SLOWEST_RANK_TIME, POSIX_F_FASTEST_RANK_TIME",
    needs="Darshan POSIX times of a shared record, or per-rank records of two or more ranks",
)

# -- skew ------------------------------------------------------------------------------
# Per file with both an MPI-IO and a POSIX record, MPI-IO read + write + meta time
# against the POSIX time under it (both summed over ranks); the job's ratio over those
# files. The MPI-IO time includes the POSIX calls it makes, so the ratio is >= 1 when
# all POSIX work is under MPI-IO; the excess is time in the MPI-IO layer itself
# (two-phase exchange, waiting for other ranks in a collective, locks).
_SKEW_SQL = f"""
WITH f AS (
  SELECT job_id, file_id, module,
         sum(coalesce(read_time, 0) + coalesce(write_time, 0) + coalesce(meta_time, 0)) AS t
  FROM file_stats WHERE module IN ('MPI-IO', 'POSIX') AND {_JOB}
  GROUP BY job_id, file_id, module),
b AS (
  SELECT m.job_id, count(*) AS files, sum(m.t) AS mpiio_s, sum(p.t) AS posix_s
  FROM f m JOIN f p ON m.job_id = p.job_id AND m.file_id = p.file_id
  WHERE m.module = 'MPI-IO' AND p.module = 'POSIX'
  GROUP BY m.job_id HAVING sum(p.t) > 0)
SELECT b.job_id, b.files::BIGINT AS files, b.mpiio_s, b.posix_s,
       b.mpiio_s / b.posix_s AS mpiio_over_posix,
       greatest(b.mpiio_s - b.posix_s, 0) AS layer_s,
       greatest(b.mpiio_s - b.posix_s, 0) / (j.runtime_s * j.nprocs) AS layer_runtime_share
FROM b JOIN jobs j USING (job_id)
"""

SKEW = Rule(
    code="SKEW-1",
    topic="skew",
    title="MPI-IO calls take far longer than the POSIX I/O they do",
    sql=_SKEW_SQL,
    measure="mpiio_over_posix",
    warn_at="mpiio_over_posix",
    high_at="mpiio_over_posix_high",
    count="layer_runtime_share",
    min_count="runtime_share",
    params=(
        Param(
            "mpiio_over_posix",
            2.0,
            "ratio",
            "iochar: MPI-IO time includes the POSIX time under it (darshan-runtime docs), "
            "so above 2 more than half of it is spent in the MPI-IO layer, not the file "
            "system",
        ),
        Param(
            "mpiio_over_posix_high",
            10.0,
            "ratio",
            "iochar: nine tenths of the MPI-IO time is outside the file system",
        ),
        Param(
            "runtime_share",
            0.01,
            "share",
            "Carns et al. 2011 Sec. 5.2 (1% of the run time is not a significant problem); "
            "here the MPI-IO layer's excess over the job's process time "
            "(run time x processes)",
        ),
    ),
    recommendation="Look at what the MPI-IO layer waits for: ranks arriving late at "
    "collective calls (see STRAGGLER), too few or overloaded aggregators (cb_nodes, "
    "cb_buffer_size hints), or file locking; independent calls can also hide POSIX "
    "requests the layer splits.",
    reference="Darshan MPIIO_F_READ/WRITE/META_TIME vs POSIX_F_READ/WRITE/META_TIME "
    "(darshan-runtime docs); Thakur et al., 'Data sieving and collective I/O in ROMIO', "
    "Frontiers 1999",
    needs="Darshan MPI-IO and POSIX records of the same files",
)

# -- rank0-bottleneck ------------------------------------------------------------------
# Bytes (and I/O time) per rank over POSIX and STDIO (MPI-IO's bytes are POSIX's again):
# per-rank records count for their rank; a shared record counts its slowest rank's
# bytes/time for POSIX_SLOWEST_RANK and its fastest rank's for POSIX_FASTEST_RANK (when
# they differ), the rest of it for no rank (spread over all). The busiest rank's share
# of all bytes, normalised so that an even spread (1/nprocs) is 0 and one rank doing
# everything is 1: (share - 1/n) / (1 - 1/n).
_RANK0_SQL = f"""
WITH sh AS (
  SELECT job_id, module, record,
         max(value) FILTER (WHERE counter IN ('POSIX_SLOWEST_RANK', 'STDIO_SLOWEST_RANK'))
           AS sr,
         max(value) FILTER (WHERE counter IN ('POSIX_SLOWEST_RANK_BYTES',
                                              'STDIO_SLOWEST_RANK_BYTES')) AS sb,
         max(value) FILTER (WHERE counter IN ('POSIX_F_SLOWEST_RANK_TIME',
                                              'STDIO_F_SLOWEST_RANK_TIME')) AS st,
         max(value) FILTER (WHERE counter IN ('POSIX_FASTEST_RANK', 'STDIO_FASTEST_RANK'))
           AS fr,
         max(value) FILTER (WHERE counter IN ('POSIX_FASTEST_RANK_BYTES',
                                              'STDIO_FASTEST_RANK_BYTES')) AS fb,
         max(value) FILTER (WHERE counter IN ('POSIX_F_FASTEST_RANK_TIME',
                                              'STDIO_F_FASTEST_RANK_TIME')) AS ft
  FROM module_counters
  WHERE module IN ('POSIX', 'STDIO') AND rank IS NULL AND {_JOB}
    AND counter IN ('POSIX_SLOWEST_RANK', 'POSIX_SLOWEST_RANK_BYTES',
                    'POSIX_F_SLOWEST_RANK_TIME', 'POSIX_FASTEST_RANK',
                    'POSIX_FASTEST_RANK_BYTES', 'POSIX_F_FASTEST_RANK_TIME',
                    'STDIO_SLOWEST_RANK', 'STDIO_SLOWEST_RANK_BYTES',
                    'STDIO_F_SLOWEST_RANK_TIME', 'STDIO_FASTEST_RANK',
                    'STDIO_FASTEST_RANK_BYTES', 'STDIO_F_FASTEST_RANK_TIME')
  GROUP BY job_id, module, record),
pr AS (
  SELECT job_id, rank, coalesce(bytes_read, 0) + coalesce(bytes_written, 0) AS b,
         coalesce(read_time, 0) + coalesce(write_time, 0) + coalesce(meta_time, 0) AS t
  FROM file_stats WHERE module IN ('POSIX', 'STDIO') AND rank IS NOT NULL AND {_JOB}
  UNION ALL
  SELECT job_id, sr::INTEGER, sb, st FROM sh WHERE sr >= 0 AND sb >= 0
  UNION ALL
  SELECT job_id, fr::INTEGER, fb, ft FROM sh WHERE fr >= 0 AND fb >= 0 AND fr <> sr),
tot AS (
  SELECT job_id, sum(coalesce(bytes_read, 0) + coalesce(bytes_written, 0)) AS bytes
  FROM file_stats WHERE module IN ('POSIX', 'STDIO') AND {_JOB} GROUP BY job_id),
rk AS (SELECT job_id, rank, sum(b) AS b, sum(coalesce(t, 0)) AS t FROM pr
       GROUP BY job_id, rank),
top AS (
  SELECT job_id, rank AS top_rank, b AS top_bytes, t AS top_s,
         row_number() OVER (PARTITION BY job_id ORDER BY b DESC, rank) AS pick
  FROM rk)
SELECT t.job_id, j.nprocs::BIGINT AS nprocs, t.top_rank::BIGINT AS top_rank,
       t.top_bytes::BIGINT AS top_rank_bytes, tot.bytes::BIGINT AS total_bytes,
       t.top_bytes / tot.bytes AS top_share, coalesce(r0.b, 0)::BIGINT AS rank0_bytes,
       coalesce(r0.b, 0) / tot.bytes AS rank0_share,
       (t.top_bytes / tot.bytes - 1 / j.nprocs) / (1 - 1 / j.nprocs) AS concentration,
       t.top_s, t.top_s / j.runtime_s AS top_runtime_share
FROM top t JOIN tot USING (job_id) JOIN jobs j USING (job_id)
LEFT JOIN rk r0 ON r0.job_id = t.job_id AND r0.rank = 0
WHERE t.pick = 1 AND j.nprocs > 1 AND tot.bytes > 0
"""

RANK0_BOTTLENECK = Rule(
    code="RANK0-1",
    topic="rank0-bottleneck",
    title="One rank (often rank 0) does most of the I/O of a multi-process job",
    sql=_RANK0_SQL,
    measure="concentration",
    warn_at="rank_concentration",
    high_at="rank_concentration_high",
    count="top_runtime_share",
    min_count="runtime_share",
    params=(
        Param(
            "rank_concentration",
            0.5,
            "share",
            "issue 19 ('rank 0 ... does most of the I/O'): above half of the bytes beyond "
            "an even share",
        ),
        Param(
            "rank_concentration_high",
            0.9,
            "share",
            "Carns et al. 2011 Sec. 5.2 and 5.8: 'a single process is responsible for all "
            "of the I/O' (nine tenths or more)",
        ),
        _RUNTIME_SHARE,
    ),
    recommendation="Spread the I/O over the ranks: every rank writes its part of a "
    "shared file (MPI-IO collective, parallel HDF5/PnetCDF), or a few aggregators per "
    "node instead of one rank for the whole job.",
    reference="Carns et al., 'Understanding and improving computational science storage "
    "access through continuous characterization', ACM TOS 2011, Sec. 4.1, 5.2, 5.8 "
    "(rank 0 I/O); Darshan per-rank and SLOWEST/FASTEST_RANK counters",
    needs="Darshan POSIX/STDIO records of a multi-process job",
)

# -- bad-ost ----------------------------------------------------------------------------
# Each file's POSIX bytes split over its OSTs (Lustre RAID-0 striping: by DXT offsets when
# DXT traced the file, else evenly over its k OSTs) and its POSIX times joined to its
# OSTs; all k serve it for the file's time, so an OST's rate is the sum of the bytes it
# got over the sum of its files' times, for writes and for reads separately. OSTs that
# moved at most min_ost_bytes are not rated (small transfers are latency-bound). The
# job's measure is the larger of median rate / slowest rate over writes and reads. The
# query is iochar.analyze.lustre.SLOW_OST_SQL, which lustre.ost_summary reads too, so the
# rule and the per-OST analysis never disagree.
_BADOST_SQL = lustre.SLOW_OST_SQL

BAD_OST = Rule(
    code="BAD-OST-1",
    topic="bad-ost",
    title="One Lustre OST served this job's data far slower than the others",
    sql=_BADOST_SQL,
    measure="slow_ost_ratio",
    warn_at="slow_ost_ratio",
    high_at="slow_ost_ratio_high",
    count="osts",
    min_count="min_osts",
    params=(
        Param(
            "slow_ost_ratio",
            lustre.SLOW_OST_RATIO,
            "ratio",
            "iochar: an OST at a quarter of the median OST rate or less; on PyDarshan's "
            "sample-goodost log (24 OSTs) the median-to-slowest ratio is 1.5",
        ),
        Param(
            "slow_ost_ratio_high",
            10.0,
            "ratio",
            "iochar: an order of magnitude below the median",
        ),
        Param(
            "min_ost_bytes",
            lustre.MIN_OST_BYTES,
            "bytes",
            "iochar: an OST must move more than one small request's worth (Drishti "
            "small_bytes, drishti config.py:39) to be rated: smaller transfers measure "
            "latency, not the OST",
        ),
        Param(
            "min_osts",
            2,
            "count",
            "iochar: with two OSTs the median is their mean; three or more rated OSTs are "
            "needed to single one out (fewer: only info)",
        ),
    ),
    recommendation="Report the OST (slowest_ost) to the file-system administrators; "
    "meanwhile avoid it (lfs setstripe -o / an OST pool without it) or stripe files over "
    "more OSTs so one slow target holds less of each.",
    reference="Darshan LUSTRE module (LUSTRE_COMP<k>_OST_ID_<j>) joined to POSIX "
    "BYTES/F_*_TIME, bytes placed by Lustre RAID-0 striping (lustre/lov/lov_offset.c "
    "lov_stripe_number; iochar.analyze.lustre); PyDarshan test logs sample-badost / "
    "sample-goodost",
    needs="Darshan LUSTRE layout records joined to POSIX data of the same files",
)

# -- striping --------------------------------------------------------------------------
# A file that moved at least striping_bytes held by one OST. NERSC's Lustre striping
# recommendations: a single shared file of 1-10 GB should be striped over 8 OSTs, 10-100
# GB over 24, more over 72 (default striping only below 1 GB). The job is graded on its
# biggest single-stripe file; a file only one rank accessed is info (the advice is for
# shared files; NERSC counts serial I/O to one file too, which gains less).
_STRIPING_SQL = f"""
WITH st AS ({_STRIPES}),
f AS (
  SELECT job_id, file_id,
         sum(coalesce(bytes_read, 0) + coalesce(bytes_written, 0)) AS bytes,
         greatest(max(nranks) FILTER (WHERE rank IS NULL),
                  count(DISTINCT rank) FILTER (WHERE rank IS NOT NULL)) AS ranks
  FROM file_stats WHERE module = 'POSIX' AND {_JOB} GROUP BY job_id, file_id),
g AS (
  SELECT f.*, st.stripe_count, count(*) OVER w AS striped_files,
         row_number() OVER (w ORDER BY st.stripe_count = 1 DESC, coalesce(f.ranks, 0) > 1 DESC,
                            f.bytes DESC, f.file_id) AS pick
  FROM f JOIN st USING (job_id, file_id) WINDOW w AS (PARTITION BY f.job_id))
SELECT job_id, striped_files::BIGINT AS lustre_files, file_id AS worst_file_id,
       stripe_count::BIGINT AS stripe_count, coalesce(ranks, 0)::BIGINT AS ranks,
       bytes::BIGINT AS file_bytes,
       (CASE WHEN stripe_count = 1 THEN bytes ELSE 0 END)::BIGINT AS single_stripe_bytes
FROM g WHERE pick = 1
"""

STRIPING = Rule(
    code="STRIPING-1",
    topic="striping",
    title="A large shared file sits on a single Lustre stripe (one OST)",
    sql=_STRIPING_SQL,
    measure="single_stripe_bytes",
    warn_at="striping_bytes",
    high_at="striping_bytes_high",
    count="ranks",
    min_count="striping_min_ranks",
    params=(
        Param(
            "striping_bytes",
            1e9,
            "bytes",
            "NERSC 'Lustre file striping recommendations' (docs.nersc.gov/performance/io/"
            "lustre): single shared files of 1-10 GB take stripe_small (8 OSTs); default "
            "striping only below 1 GB",
        ),
        Param(
            "striping_bytes_high",
            1e10,
            "bytes",
            "NERSC (same page): 10-100 GB take stripe_medium (24 OSTs), 24x what one stripe gives",
        ),
        Param(
            "striping_min_ranks",
            1,
            "count",
            "iochar: the topic is shared files; a file one rank accessed is only info",
        ),
    ),
    recommendation="Stripe the file over several OSTs before it is written (lfs "
    "setstripe -c 8 for 1-10 GB, -c 24 for 10-100 GB, more beyond, on its directory), "
    "or use the site's progressive file layout.",
    reference="NERSC Lustre striping recommendations (stripe_small/medium/large); "
    "Darshan LUSTRE_COMP<k>_STRIPE_COUNT / OST ids (LUSTRE_STRIPE_WIDTH before 3.4)",
    needs="Darshan LUSTRE layout records of files with POSIX data",
)

#: The rules of this module, in report order.
RULES: tuple[Rule, ...] = (
    IMBALANCE_SHARED,
    IMBALANCE_RANKS,
    STRAGGLER,
    SKEW,
    RANK0_BOTTLENECK,
    BAD_OST,
    STRIPING,
)
