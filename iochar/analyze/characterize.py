"""Per-application I/O tables in the form of Miller & Katz (1991), Tables 1 and 2.

Miller and Katz characterise each traced application by its running time,
the total size of the files it touched ("total data size"), the total I/O it
did, the number of read and write calls, their average size, and the rates
MB/s and I/Os/s (Table 1); and by the same rates split into reads and writes
with the read/write data ratio (Table 2), optionally over "large" files only
(section 5.2: small parameter and text files "do not contribute much").

Differences from the paper, stated in each result's ``basis`` and ``note``:

- Rates are per second of the job's **wall-clock** run time
  (``jobs.runtime_s``); the paper divides by CPU time, which traces rarely
  carry (``ops.cpu_s``).
- A file's size is its **extent**: the highest byte offset the job read or
  wrote (``offset + size``), or Darshan's ``max_byte_read/written`` + 1.
- Jobs with per-operation records (``ops``) are measured from them; jobs with
  only Darshan counters use ``file_stats`` (POSIX module, else STDIO).
  Darshan's DXT_MPIIO segments repeat DXT_POSIX ones a layer up, so a job
  with DXT_POSIX segments is measured on that layer only.

Units: bytes and seconds (columns end in ``_bytes``, ``_s``, ``_bps``);
divide by 1e6 for the paper's MB.
"""

from __future__ import annotations

import pandas as pd

from iochar.errors import ParameterError

__all__ = ["app_table", "rates_table", "data_rate"]

#: Ops of one layer per job (see the module notes); a view body.
_OPS_SQL = """
SELECT o.* FROM ops o
WHERE o.op IN ('read', 'write') AND o.size IS NOT NULL AND o.error IS NULL
  AND (o.call IS DISTINCT FROM 'DXT_MPIIO'
       OR o.job_id NOT IN (SELECT job_id FROM ops WHERE call = 'DXT_POSIX'))
"""

#: Per (job, file) totals from ops, or from file_stats for jobs without ops.
_PER_FILE_SQL = f"""
WITH layer AS ({_OPS_SQL}),
from_ops AS (
  SELECT job_id, file_id,
         sum(size) FILTER (WHERE op = 'read') AS bytes_read,
         sum(size) FILTER (WHERE op = 'write') AS bytes_written,
         count(*) FILTER (WHERE op = 'read') AS reads,
         count(*) FILTER (WHERE op = 'write') AS writes,
         max(coalesce("offset", 0) + size) AS extent_bytes,
         'ops' AS basis
  FROM layer GROUP BY job_id, file_id
),
stat_module AS (
  SELECT job_id, CASE WHEN bool_or(module = 'POSIX') THEN 'POSIX' ELSE 'STDIO' END AS module
  FROM file_stats WHERE job_id NOT IN (SELECT job_id FROM from_ops) GROUP BY job_id
),
from_stats AS (
  SELECT s.job_id, s.file_id,
         sum(s.bytes_read) AS bytes_read, sum(s.bytes_written) AS bytes_written,
         sum(s.reads) AS reads, sum(s.writes) AS writes,
         max(greatest(coalesce(s.max_byte_read, -1), coalesce(s.max_byte_written, -1)) + 1)
           AS extent_bytes,
         'file_stats:' || m.module AS basis
  FROM file_stats s JOIN stat_module m ON m.job_id = s.job_id AND m.module = s.module
  GROUP BY s.job_id, s.file_id, m.module
)
SELECT * FROM from_ops UNION ALL SELECT * FROM from_stats
"""

_TABLE_SQL = f"""
WITH per_file AS ({_PER_FILE_SQL}),
sel AS (
  SELECT * FROM per_file
  WHERE $min_file_bytes IS NULL OR extent_bytes >= $min_file_bytes
)
SELECT j.job_id, j.app, j.runtime_s,
       count(sel.file_id) AS files,
       coalesce(sum(sel.extent_bytes), 0) AS data_size_bytes,
       coalesce(sum(sel.bytes_read), 0) AS bytes_read,
       coalesce(sum(sel.bytes_written), 0) AS bytes_written,
       coalesce(sum(sel.reads), 0) AS reads,
       coalesce(sum(sel.writes), 0) AS writes,
       coalesce(any_value(sel.basis), 'none') AS basis
FROM jobs j LEFT JOIN sel USING (job_id)
WHERE $job_id IS NULL OR j.job_id = $job_id
GROUP BY j.job_id, j.app, j.runtime_s
ORDER BY j.job_id
"""


def _totals(store, job_id: int | None, min_file_bytes: int | None, caller: str) -> pd.DataFrame:
    if min_file_bytes is not None and not (isinstance(min_file_bytes, int) and min_file_bytes >= 0):
        raise ParameterError(
            "min_file_bytes", caller, "None or an int >= 0 [bytes]", min_file_bytes
        )
    if job_id is not None and not isinstance(job_id, int):
        raise ParameterError("job_id", caller, "None or an int", job_id)
    df = store.sql(_TABLE_SQL, params={"job_id": job_id, "min_file_bytes": min_file_bytes}).df()
    for c in ("bytes_read", "bytes_written", "reads", "writes", "data_size_bytes"):
        df[c] = df[c].astype("int64")
    df["note"] = ""
    df.loc[df["reads"] + df["writes"] == 0, "note"] = "no read or write I/O"
    bad_rt = ~(df["runtime_s"] > 0)
    df.loc[bad_rt, "note"] = (
        df.loc[bad_rt, "note"] + "; no positive run time: rates undefined"
    ).str.strip("; ")
    return df


def _per_s(num: pd.Series, den: pd.Series) -> pd.Series:
    den = den.where(den > 0)
    return (num / den).astype("float64")


def app_table(
    store, *, job_id: int | None = None, min_file_bytes: int | None = None
) -> pd.DataFrame:
    """Miller & Katz Table 1 for each job.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        Only this job.
    min_file_bytes : int, optional
        Count only files whose extent is at least this large [bytes] (the
        paper's "large files" view); None counts every file.

    Returns
    -------
    pandas.DataFrame
        One row per job: ``job_id``, ``app``, ``runtime_s`` [s], ``files``,
        ``data_size_bytes`` (sum of file extents) [bytes], ``io_bytes``
        (read + written) [bytes], ``ios`` (read and write calls),
        ``avg_io_bytes`` [bytes], ``bps`` (io_bytes per run-time second)
        [bytes/s], ``ios_per_s`` [1/s], and the evidence ``basis`` (ops or
        file_stats module) and ``note`` (why a value is missing).
    """
    df = _totals(store, job_id, min_file_bytes, "app_table")
    out = df[["job_id", "app", "runtime_s", "files", "data_size_bytes"]].copy()
    out["io_bytes"] = df["bytes_read"] + df["bytes_written"]
    out["ios"] = df["reads"] + df["writes"]
    out["avg_io_bytes"] = _per_s(out["io_bytes"].astype(float), out["ios"].astype(float))
    out["bps"] = _per_s(out["io_bytes"].astype(float), df["runtime_s"])
    out["ios_per_s"] = _per_s(out["ios"].astype(float), df["runtime_s"])
    out["basis"] = df["basis"]
    out["note"] = df["note"]
    return out


def rates_table(
    store, *, job_id: int | None = None, min_file_bytes: int | None = None
) -> pd.DataFrame:
    """Miller & Katz Table 2 for each job: read and write rates and sizes.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        Only this job.
    min_file_bytes : int, optional
        Count only files whose extent is at least this large [bytes]; the
        paper's Table 2 considers large files only.

    Returns
    -------
    pandas.DataFrame
        One row per job: ``job_id``, ``app``, ``read_bps``, ``write_bps``
        [bytes/s], ``reads_per_s``, ``writes_per_s`` [1/s],
        ``avg_read_bytes``, ``avg_write_bytes`` [bytes], ``rw_data_ratio``
        (bytes read / bytes written; NaN when nothing was written), and the
        evidence ``basis`` and ``note``.
    """
    df = _totals(store, job_id, min_file_bytes, "rates_table")
    rt = df["runtime_s"]
    out = df[["job_id", "app"]].copy()
    out["read_bps"] = _per_s(df["bytes_read"].astype(float), rt)
    out["write_bps"] = _per_s(df["bytes_written"].astype(float), rt)
    out["reads_per_s"] = _per_s(df["reads"].astype(float), rt)
    out["writes_per_s"] = _per_s(df["writes"].astype(float), rt)
    out["avg_read_bytes"] = _per_s(df["bytes_read"].astype(float), df["reads"].astype(float))
    out["avg_write_bytes"] = _per_s(df["bytes_written"].astype(float), df["writes"].astype(float))
    out["rw_data_ratio"] = _per_s(df["bytes_read"].astype(float), df["bytes_written"].astype(float))
    out["basis"] = df["basis"]
    out["note"] = df["note"]
    return out


_RATE_SQL = f"""
WITH layer AS ({_OPS_SQL}),
binned AS (
  SELECT job_id, op, floor(t_start / $bin_s)::BIGINT AS b, sum(size) AS nbytes, count(*) AS n
  FROM layer WHERE job_id = $job_id GROUP BY ALL
),
grid AS (
  SELECT range AS b FROM range(0, (SELECT coalesce(max(b), -1) + 1 FROM binned))
)
SELECT g.b * $bin_s AS t_s, o.op,
       coalesce(x.nbytes, 0) AS bytes, coalesce(x.n, 0) AS ios,
       coalesce(x.nbytes, 0) / $bin_s AS bps
FROM grid g CROSS JOIN (VALUES ('read'), ('write')) o(op)
LEFT JOIN binned x ON x.b = g.b AND x.op = o.op
ORDER BY t_s, o.op
"""


def data_rate(store, *, job_id: int, bin_s: float = 1.0) -> pd.DataFrame:
    """Data rate over time of one job (Miller & Katz Figs. 3 and 4).

    Each read or write is counted in the bin of its start time; bins with no
    I/O are present with zeros, so idle time shows.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int
        The job.
    bin_s : float, default 1.0
        Bin width. [s]

    Returns
    -------
    pandas.DataFrame
        ``t_s`` (bin start since job start [s]), ``op`` (read/write),
        ``bytes`` [bytes], ``ios``, ``bps`` (bytes per second in the bin
        [bytes/s]).
    """
    if not isinstance(job_id, int):
        raise ParameterError("job_id", "data_rate", "an int", job_id)
    if not (isinstance(bin_s, (int, float)) and bin_s > 0):
        raise ParameterError("bin_s", "data_rate", "a positive number of seconds", bin_s)
    return store.sql(_RATE_SQL, params={"job_id": job_id, "bin_s": float(bin_s)}).df()
