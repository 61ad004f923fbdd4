"""What a database holds: inputs by kind, and what each input covers in time.

The overview notebook starts here. :func:`inventory` counts, per input kind, the
sources loaded, their bytes, and the jobs, operations, counter samples, histogram rows
and snapshot entries they contributed; :func:`coverage` lists each monitored target
(device, OST, server) or snapshot with the time it covers, its sampling interval and
how many intervals the loaders flagged (reset, wrap, gap; see :mod:`iochar.schema`).

Examples
--------
>>> import iochar
>>> from iochar.analyze import inventory
>>> db = iochar.connect(":memory:")
>>> _ = db.load(b"op,t_start,size\\nwrite,0.5,4096\\nread,1.0,512\\n", kind="trace-csv")
>>> inventory.inventory(db)[["kind", "sources", "jobs", "ops"]].to_dict("records")
[{'kind': 'trace-csv', 'sources': 1, 'jobs': 1, 'ops': 2}]
"""

from __future__ import annotations

import pandas as pd

from iochar.result import Table

__all__ = ["inventory", "coverage", "INVENTORY_COLUMNS", "COVERAGE_COLUMNS"]

#: Columns of :func:`inventory`.
INVENTORY_COLUMNS = (
    "kind",
    "sources",
    "input_bytes",
    "jobs",
    "ops",
    "file_stats",
    "counters",
    "size_hist",
    "snapshot_files",
    "first_ts",
    "last_ts",
)

#: Columns of :func:`coverage`.
COVERAGE_COLUMNS = (
    "table",
    "kind",
    "source_id",
    "source",
    "target",
    "metrics",
    "samples",
    "start",
    "end",
    "interval_s",
    "flagged",
)

_INVENTORY_SQL = """
WITH s AS (SELECT source_id, kind, size_bytes FROM sources),
j AS (SELECT source_id, count(*) AS jobs, min(start_ts) AS t0, max(end_ts) AS t1
      FROM jobs GROUP BY source_id),
o AS (SELECT j.source_id, count(*) AS ops FROM ops JOIN jobs j USING (job_id)
      GROUP BY j.source_id),
f AS (SELECT j.source_id, count(*) AS file_stats FROM file_stats JOIN jobs j USING (job_id)
      GROUP BY j.source_id),
c AS (SELECT source_id, count(*) AS counters, min(ts) AS t0, max(ts) AS t1
      FROM counters GROUP BY source_id),
h AS (SELECT source_id, count(*) AS size_hist, min(ts) AS t0, max(ts) AS t1
      FROM size_hist GROUP BY source_id),
n AS (SELECT sn.source_id, count(*) AS snapshot_files, min(sn.taken_at) AS t0,
             max(sn.taken_at) AS t1
      FROM snapshot_files sf JOIN snapshots sn USING (snapshot_id) GROUP BY sn.source_id)
SELECT s.kind,
       count(*) AS sources,
       sum(s.size_bytes)::BIGINT AS input_bytes,
       coalesce(sum(j.jobs), 0)::BIGINT AS jobs,
       coalesce(sum(o.ops), 0)::BIGINT AS ops,
       coalesce(sum(f.file_stats), 0)::BIGINT AS file_stats,
       coalesce(sum(c.counters), 0)::BIGINT AS counters,
       coalesce(sum(h.size_hist), 0)::BIGINT AS size_hist,
       coalesce(sum(n.snapshot_files), 0)::BIGINT AS snapshot_files,
       least(min(j.t0), min(c.t0), min(h.t0), min(n.t0)) AS first_ts,
       greatest(max(j.t1), max(c.t1), max(h.t1), max(n.t1)) AS last_ts
FROM s LEFT JOIN j USING (source_id) LEFT JOIN o USING (source_id)
     LEFT JOIN f USING (source_id) LEFT JOIN c USING (source_id)
     LEFT JOIN h USING (source_id) LEFT JOIN n USING (source_id)
GROUP BY s.kind ORDER BY sources DESC, s.kind
"""

_COVERAGE_SQL = """
WITH src AS (SELECT source_id, kind, regexp_extract(uri, '[^/]*$') AS source FROM sources),
c AS (
  SELECT 'counters' AS "table", source_id, target,
         string_agg(DISTINCT metric, ', ' ORDER BY metric) AS metrics,
         count(DISTINCT ts) AS samples, min(ts) AS start, max(ts) AS "end",
         median(interval_s) AS interval_s,
         count(DISTINCT ts) FILTER (WHERE quality <> 'ok') AS flagged
  FROM counters GROUP BY source_id, target),
h AS (
  SELECT 'size_hist', source_id, target, string_agg(DISTINCT section, ', ' ORDER BY section),
         count(DISTINCT ts), min(ts), max(ts), median(interval_s),
         count(DISTINCT ts) FILTER (WHERE quality <> 'ok')
  FROM size_hist GROUP BY source_id, target),
n AS (
  SELECT 'snapshots', sn.source_id, sn.root, 'snapshot ' || sn.snapshot_id::VARCHAR,
         count(sf.snapshot_id), sn.taken_at, sn.taken_at, NULL::DOUBLE, 0
  FROM snapshots sn LEFT JOIN snapshot_files sf USING (snapshot_id)
  GROUP BY sn.source_id, sn.root, sn.snapshot_id, sn.taken_at)
SELECT u."table", src.kind, u.source_id, src.source, u.target, u.metrics, u.samples,
       u.start, u."end", u.interval_s, u.flagged
FROM (SELECT * FROM c UNION ALL SELECT * FROM h UNION ALL SELECT * FROM n) u
JOIN src USING (source_id)
ORDER BY u."table", u.source_id, u.target
"""


def inventory(store) -> pd.DataFrame:
    """Inputs per kind and the rows they put in each table.

    Parameters
    ----------
    store : iochar.Store
        The database.

    Returns
    -------
    pandas.DataFrame
        One row per input kind with :data:`INVENTORY_COLUMNS`: sources, their total
        size [bytes], jobs, operations (``ops``), per-file counter rows (``file_stats``),
        counter samples, histogram rows, snapshot entries, and the first and last
        timestamp any of them carries (NaT for traces with relative times only).
        Ordered by number of sources.
    """
    return Table(store.sql(_INVENTORY_SQL).df(), sql=_INVENTORY_SQL)


def coverage(store) -> pd.DataFrame:
    """Each monitored target and each snapshot, with the time it covers.

    Parameters
    ----------
    store : iochar.Store
        The database.

    Returns
    -------
    pandas.DataFrame
        :data:`COVERAGE_COLUMNS`: the table (``counters``, ``size_hist``,
        ``snapshots``), input kind, source id and file name, target (for snapshots:
        the root), metrics or sections recorded (for snapshots: ``snapshot N``),
        distinct sample times, first and last sample time, median sampling interval
        [s], and samples the loader flagged as not ``ok`` (reset, wrap, gap).
    """
    return Table(store.sql(_COVERAGE_SQL).df(), sql=_COVERAGE_SQL)
