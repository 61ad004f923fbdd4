"""Lustre OSTs of a job: file layouts, bytes and rate per OST, imbalance, the slow OST.

Darshan's LUSTRE module records, for each file a job opened on Lustre, its layout:
the components (one for a plain layout, several for a progressive file layout, PFL),
each with its stripe size, stripe count, extent and the OST index of each stripe.
iochar keeps them in ``module_counters`` as darshan-parser prints them
(:mod:`iochar.load.darshan`): ``LUSTRE_NUM_COMPONENTS``, ``LUSTRE_NUM_STRIPES`` and,
per component *k* (1-based), ``LUSTRE_COMP<k>_STRIPE_SIZE`` [bytes],
``LUSTRE_COMP<k>_STRIPE_COUNT``, ``LUSTRE_COMP<k>_EXT_START`` /
``LUSTRE_COMP<k>_EXT_END`` [bytes; -1: end of file], ``..._STRIPE_PATTERN``,
``..._FLAGS``, ``..._MIRROR_ID`` and ``LUSTRE_COMP<k>_OST_ID_<j>`` (the OST of stripe
*j*, 0-based). Logs written before Darshan 3.4 hold LUSTRE records of layout version 1
(``LUSTRE_OSTS``, ``LUSTRE_MDTS``, ``LUSTRE_STRIPE_OFFSET``, ``LUSTRE_STRIPE_SIZE``,
``LUSTRE_STRIPE_WIDTH`` and an OST list); libdarshan-util 3.4 and later, which iochar
reads logs with, converts them on reading into one component (stripe count = the old
stripe width, extent 0 to end of file, pattern, flags and mirror id -1), so the store
holds one form for both: the version a log had is in ``layout_version`` (from the
loader's ``sources.meta``). PyDarshan (``darshan.DarshanReport(...).records['LUSTRE']``)
gives the same components.

Bytes per OST (the split rule, column ``split``)
------------------------------------------------
Lustre stores a file RAID-0 over its stripes: within the component whose extent
``[EXT_START, EXT_END)`` holds file offset *x*, the byte goes to stripe
``(x mod (stripe_size * stripe_count)) div stripe_size`` of that component
(lustre-release ``lustre/lov/lov_offset.c``, ``lov_stripe_number``: round-robin chunks
of ``stripe_size`` bytes, counted from file offset 0). So a transfer
``[a, b)`` puts ``F_j(b) - F_j(a)`` bytes on stripe *j*, where
``F_j(x) = (x div W) * s + min(max(x mod W - j * s, 0), s)``, ``s`` the stripe size and
``W = s * stripe_count``.

* ``"dxt-offsets"``: when DXT traced the file's POSIX transfers (``ops`` with
  ``call = 'DXT_POSIX'`` and an offset) and every traced byte falls in a component
  whose OSTs are all recorded, each OST's share of the traced bytes (read and write
  apart) times the file's POSIX bytes (``POSIX_BYTES_READ`` / ``WRITTEN``) is its
  bytes.
* ``"even"``: otherwise the offsets are unknown and a file on *k* distinct OSTs puts
  ``bytes / k`` on each (exact for whole stripes written round-robin; the usual
  assumption without offsets).

Rate per OST and the slow OST
-----------------------------
Darshan times each file (``POSIX_F_READ_TIME`` / ``POSIX_F_WRITE_TIME``, summed over
its records and ranks [s]); every OST holding the file serves it for that time. An
OST's write rate is the sum over its files of the bytes it got of each, divided by the
sum of their write times [bytes/s]; reads likewise. OSTs that moved at most
``min_ost_bytes`` are not rated (small transfers measure latency, not the OST). The
slowdown of an OST is the median rate over the job's rated OSTs divided by its rate;
the job's ``slow_ost_ratio`` is the largest slowdown over writes and reads. The insight
rule BAD-OST-1 (:mod:`iochar.analyze.insights.rules_ranks`) runs :data:`SLOW_OST_SQL`,
the same query :func:`ost_summary` reads, so the two cannot disagree. PyDarshan's
sample-badost log (2048 IOR files, one stripe each, 24 OSTs) has OST 14 writing 49.5x
slower than the median OST; sample-goodost's slowest OST is 1.5x below its median.

Imbalance over OSTs
-------------------
Over the OSTs holding the job's files that have POSIX data: ``ost_imbalance`` is the
busiest OST's bytes (read + written) over the mean per OST (1 = even), ``ost_bytes_cv``
the coefficient of variation (population standard deviation over the mean).

Only POSIX bytes and times count (what Darshan saw reach the file system; MPI-IO and
HDF5 calls become POSIX calls that the POSIX module counts again, and STDIO streams'
buffered writes are not timed per file system call). A file with a layout but no POSIX
record has no bytes here (``posix_files`` counts those that have).

Examples
--------
>>> import iochar
>>> from iochar.analyze import lustre
>>> db = iochar.connect(":memory:")
>>> t = lustre.ost_table(db)
>>> len(t), t.evidence["reason"]
(0, 'the database holds no Darshan LUSTRE records')
"""

from __future__ import annotations

import pandas as pd

from iochar._validation import check_int, check_real
from iochar.result import Table

__all__ = [
    "LAYOUT_COLUMNS",
    "OST_COLUMNS",
    "SUMMARY_COLUMNS",
    "MIN_OST_BYTES",
    "SLOW_OST_RATIO",
    "OSTS_SQL",
    "SLOW_OST_SQL",
    "layouts",
    "ost_table",
    "ost_summary",
    "slowest_job",
]

#: An OST must move more than this many bytes to be rated [bytes]: Drishti's
#: ``small_bytes`` (drishti-io ``drishti/includes/config.py:39``, one small request's
#: worth); smaller transfers measure latency, not the OST. BAD-OST-1's default.
MIN_OST_BYTES = 1048576

#: An OST at this many times below the median OST rate or more is slow: a quarter of the
#: median; on PyDarshan's sample-goodost log the slowest OST is 1.5x below. BAD-OST-1's
#: warning threshold and the mark :func:`iochar.plot.lustre.ost_chart` draws.
SLOW_OST_RATIO = 4.0

_JOB = "($job_id IS NULL OR job_id = $job_id)"

#: Distinct OSTs of each file (``LUSTRE_COMP<k>_OST_ID_<j>`` over all its LUSTRE
#: records; negative ids are not stripes): ``job_id, file_id, ost``. A file's stripe
#: count in the rules of :mod:`iochar.analyze.insights.rules_ranks` is its number of rows.
OSTS_SQL = f"""
  SELECT DISTINCT job_id, file_id, value::BIGINT AS ost FROM module_counters
  WHERE module = 'LUSTRE' AND file_id IS NOT NULL AND value >= 0 AND {_JOB}
    AND regexp_matches(counter, '^LUSTRE_COMP[0-9]+_OST_ID_[0-9]+$')"""

# The layout of each file from its first LUSTRE record (Darshan keeps one per rank that
# opened the file unless it reduced them to a shared one; they describe one layout),
# per component and per stripe; POSIX bytes and times per file; DXT_POSIX transfers
# split over the stripes (F_j above); per (file, OST) bytes by the split rule; per OST
# loads; rated OSTs; per (job, op) median and slowest.
_CTES = f"""
l_rec AS (
  SELECT job_id, file_id, min(record) AS record FROM module_counters
  WHERE module = 'LUSTRE' AND file_id IS NOT NULL AND {_JOB} GROUP BY job_id, file_id),
l_kv AS (
  SELECT m.job_id, m.file_id,
         CAST(regexp_extract(m.counter, '^LUSTRE_COMP([0-9]+)_', 1) AS INTEGER) AS comp,
         regexp_extract(m.counter, '^LUSTRE_COMP[0-9]+_(.+)$', 1) AS field, m.value
  FROM module_counters m JOIN l_rec r USING (job_id, file_id, record)
  WHERE m.module = 'LUSTRE' AND regexp_matches(m.counter, '^LUSTRE_COMP[0-9]+_.+$')),
l_stripe AS (
  SELECT job_id, file_id, comp,
         CAST(regexp_extract(field, '^OST_ID_([0-9]+)$', 1) AS BIGINT) AS stripe,
         CAST(value AS BIGINT) AS ost
  FROM l_kv WHERE regexp_matches(field, '^OST_ID_[0-9]+$') AND value >= 0),
l_comp AS (
  SELECT k.job_id, k.file_id, k.comp,
         CAST(max(k.value) FILTER (WHERE k.field = 'STRIPE_SIZE') AS BIGINT) AS stripe_size,
         CAST(max(k.value) FILTER (WHERE k.field = 'STRIPE_COUNT') AS BIGINT) AS stripe_count,
         CAST(max(k.value) FILTER (WHERE k.field = 'EXT_START') AS BIGINT) AS ext_start,
         CAST(nullif(greatest(max(k.value) FILTER (WHERE k.field = 'EXT_END'), -1), -1)
              AS BIGINT) AS ext_end
  FROM l_kv k GROUP BY k.job_id, k.file_id, k.comp),
l_full AS (
  SELECT c.job_id, c.file_id, c.comp, c.stripe_size, c.stripe_count, c.ext_start, c.ext_end,
         count(s.ost) AS ost_rows, list(s.ost ORDER BY s.stripe) FILTER (WHERE s.ost IS NOT NULL)
           AS osts
  FROM l_comp c LEFT JOIN l_stripe s USING (job_id, file_id, comp)
  GROUP BY c.job_id, c.file_id, c.comp, c.stripe_size, c.stripe_count, c.ext_start, c.ext_end),
f_osts AS ({OSTS_SQL}),
f_k AS (SELECT job_id, file_id, count(*) AS k FROM f_osts GROUP BY job_id, file_id),
p_file AS (
  SELECT job_id, file_id, sum(coalesce(bytes_written, 0)) AS bw,
         sum(coalesce(write_time, 0)) AS wt, sum(coalesce(bytes_read, 0)) AS br,
         sum(coalesce(read_time, 0)) AS rt
  FROM file_stats WHERE module = 'POSIX' AND {_JOB} GROUP BY job_id, file_id),
d_seg AS (
  SELECT o.job_id, o.file_id, o.op::VARCHAR AS op, o."offset" AS a, o."offset" + o.size AS b
  FROM ops o SEMI JOIN l_rec r ON o.job_id = r.job_id AND o.file_id = r.file_id
  WHERE o.call = 'DXT_POSIX' AND o.op IN ('read', 'write') AND o.size > 0
    AND o."offset" >= 0 AND o.error IS NULL),
d_tot AS (SELECT job_id, file_id, op, sum(b - a) AS bytes FROM d_seg GROUP BY job_id, file_id, op),
d_piece AS (
  SELECT s.job_id, s.file_id, s.op, c.comp, c.stripe_size AS sz,
         c.stripe_size * c.stripe_count AS w, greatest(s.a, c.ext_start) AS a,
         least(s.b, coalesce(c.ext_end, s.b)) AS b
  FROM d_seg s JOIN l_full c USING (job_id, file_id)
  WHERE c.stripe_size > 0 AND c.stripe_count > 0 AND c.ost_rows = c.stripe_count),
d_ost AS (
  SELECT p.job_id, p.file_id, p.op, t.ost,
         sum((p.b // p.w) * p.sz + least(greatest(p.b % p.w - t.stripe * p.sz, 0), p.sz)
             - (p.a // p.w) * p.sz - least(greatest(p.a % p.w - t.stripe * p.sz, 0), p.sz))
           AS bytes
  FROM d_piece p JOIN l_stripe t USING (job_id, file_id, comp)
  WHERE p.a < p.b GROUP BY p.job_id, p.file_id, p.op, t.ost),
d_ok AS (
  SELECT t.job_id, t.file_id, t.op, t.bytes FROM d_tot t
  JOIN (SELECT job_id, file_id, op, sum(bytes) AS bytes FROM d_ost
        GROUP BY job_id, file_id, op) c USING (job_id, file_id, op)
  WHERE c.bytes = t.bytes),
f_ost AS (
  SELECT o.job_id, o.file_id, o.ost, k.k, p.file_id IS NOT NULL AS has_posix, p.wt, p.rt,
         CASE WHEN dw.bytes IS NOT NULL THEN p.bw::DOUBLE * coalesce(ow.bytes, 0) / dw.bytes
              ELSE p.bw / k.k END AS bw,
         CASE WHEN dr.bytes IS NOT NULL THEN p.br::DOUBLE * coalesce(orr.bytes, 0) / dr.bytes
              ELSE p.br / k.k END AS br,
         (dw.bytes IS NOT NULL OR dr.bytes IS NOT NULL) AS dxt
  FROM f_osts o JOIN f_k k USING (job_id, file_id)
  LEFT JOIN p_file p USING (job_id, file_id)
  LEFT JOIN d_ok dw ON dw.job_id = o.job_id AND dw.file_id = o.file_id AND dw.op = 'write'
  LEFT JOIN d_ok dr ON dr.job_id = o.job_id AND dr.file_id = o.file_id AND dr.op = 'read'
  LEFT JOIN d_ost ow ON ow.job_id = o.job_id AND ow.file_id = o.file_id AND ow.op = 'write'
    AND ow.ost = o.ost
  LEFT JOIN d_ost orr ON orr.job_id = o.job_id AND orr.file_id = o.file_id AND orr.op = 'read'
    AND orr.ost = o.ost),
ost_load AS (
  SELECT job_id, ost, count(*) AS files, count(*) FILTER (WHERE has_posix) AS posix_files,
         count(*) FILTER (WHERE dxt) AS dxt_files,
         sum(bw) AS bw, sum(wt) AS wt, sum(br) AS br, sum(rt) AS rt
  FROM f_ost GROUP BY job_id, ost),
ost_rate AS (
  SELECT job_id, 'write' AS op, ost, bw AS bytes, bw / wt AS rate FROM ost_load
  WHERE bw > $min_ost_bytes AND wt > 0
  UNION ALL
  SELECT job_id, 'read', ost, br, br / rt FROM ost_load WHERE br > $min_ost_bytes AND rt > 0),
ost_median AS (
  SELECT job_id, op, count(*) AS osts, median(rate) AS median_rate, min(rate) AS min_rate,
         arg_min(ost, (rate, ost)) AS slowest_ost,  -- equal rates: the lowest OST index
         median(rate) / min(rate) AS ratio
  FROM ost_rate GROUP BY job_id, op)"""

#: BAD-OST-1's evidence, one row per job with rated OSTs: ``slow_ost_ratio`` (the larger
#: of median / slowest rate over writes and reads), the ``slowest_ost`` and the number of
#: rated ``osts`` of that direction, then both directions' ratio, slowest OST, rated
#: OSTs, median and slowest rate [bytes/s]. Binds ``$job_id`` and ``$min_ost_bytes``.
SLOW_OST_SQL = f"""
WITH {_CTES},
w AS (SELECT * FROM ost_median WHERE op = 'write'),
r AS (SELECT * FROM ost_median WHERE op = 'read'),
b AS (
  SELECT coalesce(w.job_id, r.job_id) AS job_id, w.osts AS write_osts, w.ratio AS write_ratio,
         w.slowest_ost AS write_slowest_ost, w.median_rate AS write_median_Bps,
         w.min_rate AS write_min_Bps, r.osts AS read_osts, r.ratio AS read_ratio,
         r.slowest_ost AS read_slowest_ost, r.median_rate AS read_median_Bps,
         r.min_rate AS read_min_Bps
  FROM w FULL JOIN r USING (job_id))
SELECT job_id,
       greatest(coalesce(write_ratio, 0), coalesce(read_ratio, 0)) AS slow_ost_ratio,
       (CASE WHEN coalesce(write_ratio, 0) >= coalesce(read_ratio, 0)
             THEN write_slowest_ost ELSE read_slowest_ost END)::BIGINT AS slowest_ost,
       (CASE WHEN coalesce(write_ratio, 0) >= coalesce(read_ratio, 0)
             THEN write_osts ELSE read_osts END)::BIGINT AS osts,
       write_ratio, write_slowest_ost::BIGINT AS write_slowest_ost, write_osts::BIGINT
         AS write_osts, write_median_Bps, write_min_Bps,
       read_ratio, read_slowest_ost::BIGINT AS read_slowest_ost, read_osts::BIGINT
         AS read_osts, read_median_Bps, read_min_Bps
FROM b
"""

#: Columns of :func:`layouts`.
LAYOUT_COLUMNS = (
    "job_id",
    "file_id",
    "path",
    "component",
    "stripe_size",
    "stripe_count",
    "osts",
    "ext_start",
    "ext_end",
    "layout_version",
    "bytes_read",
    "bytes_written",
    "read_time_s",
    "write_time_s",
    "split",
)

_LAYOUT_SQL = f"""
WITH {_CTES},
ver AS (
  SELECT j.job_id, (s.meta -> 'modules' -> 'LUSTRE' ->> 'version')::INTEGER AS layout_version
  FROM jobs j JOIN sources s USING (source_id)),
fdxt AS (SELECT job_id, file_id, bool_or(dxt) AS dxt FROM f_ost GROUP BY job_id, file_id)
SELECT c.job_id, c.file_id, f.path, c.comp AS component, c.stripe_size, c.stripe_count,
       coalesce(c.osts, []::BIGINT[]) AS osts, c.ext_start, c.ext_end, v.layout_version,
       p.br::BIGINT AS bytes_read, p.bw::BIGINT AS bytes_written, p.rt AS read_time_s,
       p.wt AS write_time_s,
       CASE WHEN p.file_id IS NULL THEN NULL WHEN x.dxt THEN 'dxt-offsets' ELSE 'even' END
         AS split
FROM l_full c LEFT JOIN files f USING (job_id, file_id) LEFT JOIN ver v USING (job_id)
LEFT JOIN p_file p USING (job_id, file_id) LEFT JOIN fdxt x USING (job_id, file_id)
ORDER BY c.job_id, c.file_id, c.comp
"""

#: Columns of :func:`ost_table`.
OST_COLUMNS = (
    "job_id",
    "ost",
    "files",
    "posix_files",
    "dxt_files",
    "bytes_read",
    "bytes_written",
    "bytes",
    "share",
    "read_time_s",
    "write_time_s",
    "read_bytes_per_s",
    "write_bytes_per_s",
    "read_slowdown",
    "write_slowdown",
    "slowdown",
)

_OST_BODY = f"""
WITH {_CTES},
per AS (
  SELECT l.job_id, l.ost, l.files, l.posix_files, l.dxt_files, l.br AS bytes_read,
         l.bw AS bytes_written, l.br + l.bw AS bytes, l.rt AS read_time_s,
         l.wt AS write_time_s, rr.rate AS read_bytes_per_s, rw.rate AS write_bytes_per_s,
         mr.median_rate / rr.rate AS read_slowdown, mw.median_rate / rw.rate AS write_slowdown
  FROM ost_load l
  LEFT JOIN ost_rate rw ON rw.job_id = l.job_id AND rw.ost = l.ost AND rw.op = 'write'
  LEFT JOIN ost_rate rr ON rr.job_id = l.job_id AND rr.ost = l.ost AND rr.op = 'read'
  LEFT JOIN ost_median mw ON mw.job_id = l.job_id AND mw.op = 'write'
  LEFT JOIN ost_median mr ON mr.job_id = l.job_id AND mr.op = 'read')"""

_OST_SQL = (
    _OST_BODY
    + """
SELECT job_id, ost, files, posix_files, dxt_files, bytes_read, bytes_written, bytes,
       bytes / nullif(sum(bytes) OVER (PARTITION BY job_id), 0) AS share,
       read_time_s, write_time_s, read_bytes_per_s, write_bytes_per_s, read_slowdown,
       write_slowdown,
       greatest(read_slowdown, write_slowdown) AS slowdown
FROM per ORDER BY job_id, ost
"""
)

#: Columns of :func:`ost_summary`.
SUMMARY_COLUMNS = (
    "job_id",
    "layout_version",
    "files",
    "posix_files",
    "dxt_files",
    "osts",
    "stripe_size_min",
    "stripe_size_max",
    "stripe_count_min",
    "stripe_count_max",
    "bytes",
    "ost_bytes_max",
    "ost_bytes_mean",
    "ost_imbalance",
    "ost_bytes_cv",
    "busiest_ost",
    "split",
    "slow_ost_ratio",
    "slowest_ost",
    "rated_osts",
    "slowest_ost_op",
    "median_bytes_per_s",
    "slowest_bytes_per_s",
    "slowest_ost_files",
    "slowest_ost_time_share",
    "write_ratio",
    "read_ratio",
)

_SUMMARY_SQL = f"""
WITH slow AS ({SLOW_OST_SQL.strip()}),
{_CTES},
ver AS (
  SELECT j.job_id, (s.meta -> 'modules' -> 'LUSTRE' ->> 'version')::INTEGER AS layout_version
  FROM jobs j JOIN sources s USING (source_id)),
files AS (
  SELECT k.job_id, count(*) AS files, count(p.file_id) AS posix_files,
         min(k.k) AS stripe_count_min, max(k.k) AS stripe_count_max
  FROM f_k k LEFT JOIN p_file p USING (job_id, file_id) GROUP BY k.job_id),
sizes AS (
  SELECT job_id, min(stripe_size) AS stripe_size_min, max(stripe_size) AS stripe_size_max
  FROM l_full GROUP BY job_id),
fdxt AS (
  SELECT job_id, count(DISTINCT file_id) FILTER (WHERE dxt) AS dxt_files
  FROM f_ost GROUP BY job_id),
load AS (
  SELECT job_id, count(*) AS osts,
         sum(br + bw) AS bytes, max(br + bw) AS ost_bytes_max, avg(br + bw) AS ost_bytes_mean,
         max(br + bw) / nullif(avg(br + bw), 0) AS ost_imbalance,
         stddev_pop(br + bw) / nullif(avg(br + bw), 0) AS ost_bytes_cv,
         first(ost ORDER BY br + bw DESC, ost) FILTER (WHERE posix_files > 0) AS busiest_ost
  FROM ost_load GROUP BY job_id),
pick AS (
  SELECT job_id, slow_ost_ratio, slowest_ost, osts AS rated_osts, write_ratio, read_ratio,
         CASE WHEN coalesce(write_ratio, 0) >= coalesce(read_ratio, 0) THEN 'write'
              ELSE 'read' END AS slowest_ost_op,
         CASE WHEN coalesce(write_ratio, 0) >= coalesce(read_ratio, 0) THEN write_median_Bps
              ELSE read_median_Bps END AS median_bytes_per_s,
         CASE WHEN coalesce(write_ratio, 0) >= coalesce(read_ratio, 0) THEN write_min_Bps
              ELSE read_min_Bps END AS slowest_bytes_per_s
  FROM slow),
t AS (
  SELECT f.job_id,
         count(DISTINCT f.file_id) FILTER (WHERE f.ost = k.slowest_ost) AS slowest_ost_files,
         sum(p.wt + p.rt) FILTER (WHERE f.ost = k.slowest_ost) AS slow_s
  FROM f_osts f JOIN pick k USING (job_id) JOIN p_file p USING (job_id, file_id)
  GROUP BY f.job_id),
tot AS (
  SELECT job_id, sum(p.wt + p.rt) AS all_s FROM p_file p SEMI JOIN f_k USING (job_id, file_id)
  GROUP BY job_id)
SELECT fl.job_id, v.layout_version, fl.files, fl.posix_files, d.dxt_files, l.osts,
       z.stripe_size_min, z.stripe_size_max, fl.stripe_count_min, fl.stripe_count_max,
       l.bytes, l.ost_bytes_max, l.ost_bytes_mean, l.ost_imbalance, l.ost_bytes_cv,
       l.busiest_ost,
       CASE WHEN fl.posix_files = 0 THEN NULL WHEN d.dxt_files = 0 THEN 'even'
            WHEN d.dxt_files = fl.posix_files THEN 'dxt-offsets' ELSE 'mixed' END AS split,
       k.slow_ost_ratio, k.slowest_ost, k.rated_osts, k.slowest_ost_op, k.median_bytes_per_s,
       k.slowest_bytes_per_s, t.slowest_ost_files,
       t.slow_s / nullif(tot.all_s, 0) AS slowest_ost_time_share, k.write_ratio, k.read_ratio
FROM files fl LEFT JOIN ver v USING (job_id) LEFT JOIN sizes z USING (job_id)
LEFT JOIN fdxt d USING (job_id) LEFT JOIN load l USING (job_id) LEFT JOIN pick k USING (job_id)
LEFT JOIN t USING (job_id) LEFT JOIN tot USING (job_id)
ORDER BY fl.job_id
"""

_SPLIT_RULE = (
    "Lustre RAID-0 striping: file offset x of a component goes to its stripe "
    "(x mod (stripe_size * stripe_count)) div stripe_size (lustre-release "
    "lustre/lov/lov_offset.c lov_stripe_number); split 'dxt-offsets' places the file's "
    "DXT_POSIX transfers so, 'even' (no offsets) puts bytes / k on each of its k OSTs"
)
_RATE_RULE = (
    "OST rate = sum over its files of the bytes it got / sum of their POSIX_F_WRITE_TIME "
    "(reads: POSIX_F_READ_TIME); rated when it moved more than min_ost_bytes; slowdown = "
    "median rate of the job's rated OSTs / the OST's rate (BAD-OST-1's definition)"
)


def _check(job_id, min_ost_bytes, caller: str) -> dict:
    job = check_int(job_id, "job_id", caller, "an int job id or None", low=0, none=True)
    mob = check_real(min_ost_bytes, "min_ost_bytes", caller, "a number of bytes >= 0", low=0)
    return {"job_id": job, "min_ost_bytes": mob}


def _reason(store, job_id: int | None) -> str | None:
    """Why a table is empty: no LUSTRE records (in the database, or for the job)."""
    ((n,),) = store.sql(
        f"SELECT count(*) FROM module_counters WHERE module = 'LUSTRE' AND {_JOB}",
        {"job_id": job_id},
    ).fetchall()
    if n:
        return None
    if job_id is None:
        return "the database holds no Darshan LUSTRE records"
    return (
        f"job {job_id} has no Darshan LUSTRE records (Darshan records Lustre layouts only "
        "for files on Lustre, with its LUSTRE module built in)"
    )


def _evidence(store, params: dict, **more) -> dict:
    ev = {"split_rule": _SPLIT_RULE, "rate_rule": _RATE_RULE, **more}
    ev["reason"] = _reason(store, params["job_id"])
    return ev


def layouts(store, job_id: int | None = None) -> Table:
    """Each file's Lustre layout: stripe size, stripe count and OSTs, per component.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        One job (default: every job with LUSTRE records).

    Returns
    -------
    Table
        :data:`LAYOUT_COLUMNS`, one row per file and layout component (one component
        for a plain layout): ``stripe_size`` [bytes] and ``stripe_count`` as Darshan
        recorded them (``LUSTRE_COMP<k>_STRIPE_SIZE`` / ``_STRIPE_COUNT``), ``osts`` the
        OST index of each stripe in stripe order (a list of ints; empty for a component
        without instantiated stripes), the component's extent [bytes; ``ext_end`` NULL:
        to end of file], the log's LUSTRE ``layout_version`` (1: before Darshan 3.4,
        converted by libdarshan-util; 2: Darshan 3.4+), the file's POSIX bytes and
        times [bytes, s] (NULL without a POSIX record) and the ``split`` rule its bytes
        take (module docstring). ``evidence["reason"]`` says why it is empty.
    """
    params = _check(job_id, MIN_OST_BYTES, "layouts")
    df = store.sql(_LAYOUT_SQL, params).df()
    df["osts"] = [[int(o) for o in v] for v in df["osts"]]
    ev = _evidence(store, params, files=int(df[["job_id", "file_id"]].drop_duplicates().shape[0]))
    return Table(df[list(LAYOUT_COLUMNS)], evidence=ev, params=params, sql=_LAYOUT_SQL)


def ost_table(store, job_id: int | None = None, *, min_ost_bytes: float = MIN_OST_BYTES) -> Table:
    """Bytes, time, rate and slowdown per OST of each job (Lustre RAID-0 striping).

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        One job (default: every job with LUSTRE records).
    min_ost_bytes : float, default :data:`MIN_OST_BYTES`
        An OST that moved at most this many bytes in a direction is not rated in it
        [bytes].

    Returns
    -------
    Table
        :data:`OST_COLUMNS`, one row per job and OST holding any of its files:
        ``files`` on it (``posix_files`` with POSIX data, ``dxt_files`` split by DXT
        offsets), ``bytes_read`` / ``bytes_written`` / ``bytes`` it got by the split
        rule and its ``share`` of the job's [bytes], ``read_time_s`` /
        ``write_time_s`` summed over its files [s], ``read_bytes_per_s`` / ``write_bytes_per_s``
        [bytes/s] (NULL when not rated), ``read_slowdown`` / ``write_slowdown``
        (median rated rate / this rate) and ``slowdown`` (the larger). Evidence:
        ``split_rule``, ``rate_rule``, ``min_ost_bytes`` and ``reason`` (why it is
        empty, else None).
    """
    params = _check(job_id, min_ost_bytes, "ost_table")
    df = store.sql(_OST_SQL, params).df()
    for c in ("files", "posix_files", "dxt_files"):
        df[c] = df[c].astype("int64")
    ev = _evidence(store, params, min_ost_bytes=params["min_ost_bytes"])
    return Table(df[list(OST_COLUMNS)], evidence=ev, params=params, sql=_OST_SQL)


def ost_summary(store, job_id: int | None = None, *, min_ost_bytes: float = MIN_OST_BYTES) -> Table:
    """Per job: layouts, OST imbalance and the slow OST (BAD-OST-1's numbers).

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        One job (default: every job with LUSTRE records).
    min_ost_bytes : float, default :data:`MIN_OST_BYTES`
        As in :func:`ost_table` [bytes].

    Returns
    -------
    Table
        :data:`SUMMARY_COLUMNS`, one row per job with LUSTRE records: its LUSTRE
        ``layout_version``, ``files`` with a layout (``posix_files`` with POSIX data,
        ``dxt_files`` split by DXT offsets), ``osts`` holding them, the range of stripe
        sizes [bytes] and of stripe counts (distinct OSTs per file), the ``bytes`` they
        moved, the busiest OST's and the mean OST's bytes, ``ost_imbalance`` (max /
        mean) and ``ost_bytes_cv`` (population standard deviation / mean) over OSTs
        with POSIX data, ``busiest_ost``, ``split`` (``even``, ``dxt-offsets`` or
        ``mixed``; NULL without POSIX data); then :data:`SLOW_OST_SQL`'s
        ``slow_ost_ratio`` (median / slowest rate of the direction where it is larger),
        ``slowest_ost``, ``rated_osts`` and ``slowest_ost_op`` of that direction, its
        ``median_bytes_per_s`` and ``slowest_bytes_per_s`` [bytes/s], the ``slowest_ost_files`` and
        their share of the job's POSIX read + write time on files with layouts
        (``slowest_ost_time_share``), and each direction's ratio (NULL: no OST rated).
    """
    params = _check(job_id, min_ost_bytes, "ost_summary")
    df = store.sql(_SUMMARY_SQL, params).df()
    ev = _evidence(
        store,
        params,
        min_ost_bytes=params["min_ost_bytes"],
        slow_ost_ratio=SLOW_OST_RATIO,
        imbalance_rule="ost_imbalance = max / mean of bytes per OST with POSIX data; "
        "ost_bytes_cv = population standard deviation / mean",
    )
    return Table(df[list(SUMMARY_COLUMNS)], evidence=ev, params=params, sql=_SUMMARY_SQL)


def slowest_job(summary: pd.DataFrame) -> int | None:
    """The job whose slowest OST is furthest below its median (None: no job rated).

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`ost_summary`.

    Returns
    -------
    int or None
        The ``job_id`` with the largest ``slow_ost_ratio`` (ties: the smaller id), else
        the job with the most bytes on Lustre, else None when the table is empty.
    """
    if summary.empty:
        return None
    ranked = summary.assign(
        _r=pd.to_numeric(summary["slow_ost_ratio"], errors="coerce").fillna(-1.0),
        _b=pd.to_numeric(summary["bytes"], errors="coerce").fillna(-1.0),
    ).sort_values(["_r", "_b", "job_id"], ascending=[False, False, True], kind="stable")
    return int(ranked["job_id"].iloc[0])
