"""Per (job, file) I/O facts from Darshan counters alone, for :func:`classify`.

A facility's commonest input is a Darshan log without DXT: per file (and per
rank, or one shared record with ``rank`` NULL) the counters hold bytes and
calls, the highest offsets read and written, and the start of the first and
the end of the last read and write (Darshan ``*_F_READ_START_TIMESTAMP``,
``*_F_READ_END_TIMESTAMP``, ``*_F_WRITE_START_TIMESTAMP``,
``*_F_WRITE_END_TIMESTAMP``; seconds since the job's start). This module
reads them from ``file_stats`` and ``module_counters`` into the columns
:func:`iochar.analyze.fileio.file_io` gives for a trace, plus what only the
counters say (``rw_switches``, ``mmaps``, ``opens``, ``nranks``,
``shared``).

Layer rule (Darshan runtime documentation, "Darshan modules"): the POSIX
module records the ``read``/``write`` family an application calls and the
STDIO module its ``fread``/``fwrite`` family; the C library's own writes
behind ``fwrite`` are not seen by the POSIX wrappers, so the two layers do not
overlap and a file's bytes are their sum. MPI-IO calls reach the file through
POSIX (ROMIO), so the MPI-IO record of a file repeats its POSIX bytes and is
used only for a file with no POSIX or STDIO record (e.g. a DAOS or PnetCDF
back end that bypasses POSIX).

Head and tail shares are estimates: each file's reads (writes) are spread
evenly between the start of its first and the end of its last read (write).
Times are in seconds, sizes in bytes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from iochar.analyze._query import query

__all__ = ["counter_facts", "COUNTER_PREFIX"]

#: Counter name prefix of each module (``POSIX_BYTES_READ``, ``MPIIO_RW_SWITCHES``...).
COUNTER_PREFIX = {"POSIX": "POSIX", "STDIO": "STDIO", "MPI-IO": "MPIIO"}

_SQL = """
WITH s AS (
  SELECT * FROM file_stats
  WHERE list_contains($jobs, job_id) AND module IN ('POSIX', 'STDIO', 'MPI-IO')
),
low AS (
  SELECT *, bool_or(module IN ('POSIX', 'STDIO'))
              OVER (PARTITION BY job_id, file_id) AS has_low
  FROM s
),
use AS (SELECT * FROM low WHERE module IN ('POSIX', 'STDIO') OR NOT has_low),
mc AS (
  SELECT job_id, file_id,
         sum(value) FILTER (WHERE counter IN ('POSIX_RW_SWITCHES', 'MPIIO_RW_SWITCHES'))
           AS rw_switches,
         sum(value) FILTER (WHERE counter = 'POSIX_MMAPS') AS mmaps
  FROM module_counters
  WHERE list_contains($jobs, job_id)
    AND counter IN ('POSIX_RW_SWITCHES', 'MPIIO_RW_SWITCHES', 'POSIX_MMAPS')
    AND value > 0
  GROUP BY job_id, file_id
)
SELECT u.job_id, u.file_id, any_value(f.path) AS path,
       'file_stats:' || string_agg(DISTINCT u.module, '+' ORDER BY u.module) AS basis,
       coalesce(sum(u.bytes_read), 0) AS bytes_read,
       coalesce(sum(u.bytes_written), 0) AS bytes_written,
       coalesce(sum(u.reads), 0) AS reads, coalesce(sum(u.writes), 0) AS writes,
       coalesce(sum(coalesce(u.opens, 0) + coalesce(u.stats, 0) + coalesce(u.seeks, 0)
                    + coalesce(u.syncs, 0)), 0) AS other_calls,
       coalesce(sum(u.opens), 0) AS opens,
       min(u.first_read_t) FILTER (WHERE u.reads > 0) AS first_read_t,
       max(u.last_read_t) FILTER (WHERE u.reads > 0) AS last_read_t,
       min(u.first_write_t) FILTER (WHERE u.writes > 0) AS first_write_t,
       max(u.last_write_t) FILTER (WHERE u.writes > 0) AS last_write_t,
       max(greatest(coalesce(u.max_byte_read, -1), coalesce(u.max_byte_written, -1))) + 1
         AS ext_known,
       bool_or(u.rank IS NULL) AS shared,
       greatest(max(u.nranks), count(DISTINCT u.rank)) AS nranks,
       any_value(mc.rw_switches) AS rw_switches,
       any_value(mc.mmaps) AS mmaps
FROM use u
LEFT JOIN files f ON f.job_id = u.job_id AND f.file_id = u.file_id
LEFT JOIN mc ON mc.job_id = u.job_id AND mc.file_id = u.file_id
GROUP BY u.job_id, u.file_id
ORDER BY u.job_id, u.file_id
"""


def _spread(nbytes, first, last, lo, hi) -> np.ndarray:
    """Bytes moved in [lo, hi) when ``nbytes`` are spread evenly over [first, last] [bytes]."""
    a = np.where(np.isnan(first), 0.0, first)
    b = np.where(np.isnan(last), a, np.maximum(a, last))
    width = b - a
    inside = np.clip(np.minimum(b, hi) - np.maximum(a, lo), 0.0, None)
    point = ((a >= lo) & (a < hi)).astype(float)  # all at one instant
    share = np.where(width > 0, inside / np.where(width > 0, width, 1.0), point)
    return np.where(nbytes > 0, nbytes * share, 0.0)


def counter_facts(store, jobs: pd.DataFrame, edge: float) -> pd.DataFrame:
    """The per-file facts of ``jobs`` from their Darshan counters.

    Computed once per store state and arguments (:func:`iochar.analyze._reuse.reuse`):
    :func:`iochar.analyze.classify.classify` and
    :func:`iochar.analyze.context.job_context` ask for the same facts of a job.

    Parameters
    ----------
    store : iochar.Store
        The database.
    jobs : pandas.DataFrame
        ``job_id`` and ``span_s`` (the run time [s]) of the jobs wanted.
    edge : float
        Share of the run counted as its start or its end.

    Returns
    -------
    pandas.DataFrame
        One row per (job, file) with a POSIX, STDIO or MPI-IO record: the
        columns of :class:`iochar.analyze.fileio.FileIO` ``files`` (bursts
        unknown: ``write_bursts`` NA, ``burst_interval_s`` and ``burst_cv``
        NaN) and ``opens``, ``rw_switches`` (read/write alternations,
        ``POSIX_RW_SWITCHES``), ``mmaps`` (``POSIX_MMAPS``), ``shared``
        (a record over all ranks) and ``nranks``.
    """
    from iochar.analyze._reuse import reuse

    ids = tuple(int(j) for j in jobs["job_id"])
    spans = tuple(None if s != s else float(s) for s in jobs["span_s"].astype("float64"))
    key = (ids, spans, float(edge))
    return reuse(store, "counter_facts", key, lambda: _facts(store, jobs, edge)).copy()


def _facts(store, jobs: pd.DataFrame, edge: float) -> pd.DataFrame:
    ids = [int(j) for j in jobs["job_id"]]
    df = query(store, _SQL, params={"jobs": ids}).df()
    span = jobs.set_index("job_id")["span_s"].astype("float64")
    df["span_s"] = span.reindex(df["job_id"]).to_numpy()
    ext = df["ext_known"].astype("float64")
    df["extent_bytes"] = (
        ext.where(ext > 0, np.maximum(df["bytes_read"], df["bytes_written"])).fillna(0)
    ).astype("int64")
    sp = df["span_s"].to_numpy(np.float64)
    head_t, tail_t = edge * sp, (1 - edge) * sp
    br = df["bytes_read"].to_numpy(np.float64)
    bw = df["bytes_written"].to_numpy(np.float64)
    t = {c: df[c].to_numpy(np.float64, na_value=np.nan) for c in
         ("first_read_t", "last_read_t", "first_write_t", "last_write_t")}  # fmt: skip
    df["head_bytes"] = _spread(br, t["first_read_t"], t["last_read_t"], 0.0, head_t) + _spread(
        bw, t["first_write_t"], t["last_write_t"], 0.0, head_t
    )
    df["tail_bytes"] = _spread(br, t["first_read_t"], t["last_read_t"], tail_t, np.inf) + _spread(
        bw, t["first_write_t"], t["last_write_t"], tail_t, np.inf
    )
    moved = br + bw
    with np.errstate(invalid="ignore", divide="ignore"):
        df["head_share"] = np.clip(np.nan_to_num(df["head_bytes"] / moved), 0, 1)
        df["tail_share"] = np.clip(np.nan_to_num(df["tail_bytes"] / moved), 0, 1)
    df["write_bursts"] = pd.array([pd.NA] * len(df), dtype="Int64")
    df["burst_interval_s"] = np.nan
    df["burst_cv"] = np.nan
    for c in ("bytes_read", "bytes_written", "reads", "writes", "other_calls", "opens"):
        df[c] = df[c].astype("int64")
    for c in ("rw_switches", "mmaps"):
        df[c] = df[c].astype("float64").fillna(0.0)
    return df.drop(columns=["ext_known"])
