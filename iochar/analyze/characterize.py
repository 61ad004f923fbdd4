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
  wrote (``offset + size``), or Darshan's ``max_byte_read/written`` + 1;
  when no offset is known (strace on an inherited descriptor), the bytes
  moved in the larger direction.
- Jobs with per-operation records (``ops``) are measured from them; jobs with
  only Darshan counters use ``file_stats`` (POSIX module, else STDIO).
  Darshan's DXT_MPIIO segments repeat DXT_POSIX ones a layer up, so a job
  with DXT_POSIX segments is measured on that layer only.

Over those tables: :func:`app_means` averages Table 1 over the jobs of each
application (the per-project form of Carns et al. 2011, Table VI),
:func:`pick_job` chooses the job whose I/O a notebook follows over time and
:func:`rate_bin_s` a bin width for its :func:`data_rate`, which covers the job's
whole run (:func:`job_span`), idle time after the last I/O included.

Units: bytes and seconds (columns end in ``_bytes``, ``_s``, ``_bps``);
divide by 1e6 for the paper's MB. :mod:`iochar.plot.tables` shows these
tables in the paper's layout and binary units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from iochar._validation import check_int, check_real
from iochar.analyze._sql import LAYER_OPS, SPAN_GRID
from iochar.analyze.fileio import FileIO, file_io
from iochar.errors import ParameterError
from iochar.result import Result, Table, join_sql

__all__ = [
    "app_table",
    "rates_table",
    "file_table",
    "data_rate",
    "JobSpan",
    "job_span",
    "span_bins",
    "app_means",
    "pick_job",
    "rate_bin_s",
]


def _facts(data, job_id: int | None, caller: str) -> FileIO:
    """The :class:`FileIO` of ``data`` (a Store, or facts already computed), for one job or all."""
    job_id = check_int(job_id, "job_id", caller, "None or an int", none=True)
    if isinstance(data, FileIO):
        return data.for_job(job_id)
    return file_io(data, job_id=job_id)


def _io_files(
    data, job_id: int | None, min_file_bytes: int | None, caller: str
) -> tuple[FileIO, pd.DataFrame]:
    """The facts, and their files with reads or writes (of at least ``min_file_bytes``)."""
    if min_file_bytes is not None and not (isinstance(min_file_bytes, int) and min_file_bytes >= 0):
        raise ParameterError(
            "min_file_bytes", caller, "None or an int >= 0 [bytes]", min_file_bytes
        )
    facts = _facts(data, job_id, caller)
    f = facts.files[facts.files["reads"] + facts.files["writes"] > 0]
    if min_file_bytes is not None:
        f = f[f["extent_bytes"] >= min_file_bytes]
    return facts, f


def _totals(data, job_id: int | None, min_file_bytes: int | None, caller: str) -> pd.DataFrame:
    facts, f = _io_files(data, job_id, min_file_bytes, caller)
    key = ("totals", min_file_bytes)
    if key not in facts.memo:  # Tables 1 and 2 share these sums
        facts.memo[key] = _sum_jobs(facts, f)
    return facts.memo[key].copy()


def _sum_jobs(facts, f: pd.DataFrame) -> pd.DataFrame:
    by = f["job_id"]
    sums = (
        f[["extent_bytes", "bytes_read", "bytes_written", "reads", "writes"]]
        .groupby(by)
        .sum()
        .rename(columns={"extent_bytes": "data_size_bytes"})
    )
    sums["files"] = f["file_id"].notna().groupby(by).sum()
    df = facts.jobs[["job_id", "app", "runtime_s", "basis"]].join(sums, on="job_id")
    for c in ("files", "bytes_read", "bytes_written", "reads", "writes", "data_size_bytes"):
        df[c] = df[c].fillna(0).astype("int64")
    df["note"] = ""
    df.loc[df["reads"] + df["writes"] == 0, "note"] = "no read or write I/O"
    bad_rt = ~(df["runtime_s"] > 0)
    df.loc[bad_rt, "note"] = (
        df.loc[bad_rt, "note"] + "; no positive run time: rates undefined"
    ).str.strip("; ")
    return df.reset_index(drop=True)


def _per_s(num: pd.Series, den: pd.Series) -> pd.Series:
    den = den.where(den > 0)
    return (num / den).astype("float64")


def app_table(
    store, *, job_id: int | None = None, min_file_bytes: int | None = None
) -> pd.DataFrame:
    """Miller & Katz Table 1 for each job.

    Parameters
    ----------
    store : iochar.Store or iochar.analyze.fileio.FileIO
        The database, or the per-file facts already computed from it by
        :func:`~iochar.analyze.fileio.file_io` (one pass shared with
        :func:`rates_table` and :func:`~iochar.analyze.classify.classify`).
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
    store : iochar.Store or iochar.analyze.fileio.FileIO
        The database, or the per-file facts already computed from it.
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


def file_table(
    store, *, job_id: int | None = None, min_file_bytes: int | None = None
) -> pd.DataFrame:
    """Miller & Katz Tables 1 and 2 per (job, file).

    The paper's per-application rows summed over files; here each file's own
    share, with rates per second of its job's run time.

    Parameters
    ----------
    store : iochar.Store or iochar.analyze.fileio.FileIO
        The database, or the per-file facts already computed from it.
    job_id : int, optional
        Only this job.
    min_file_bytes : int, optional
        Only files whose extent is at least this large [bytes].

    Returns
    -------
    pandas.DataFrame
        One row per (job, file) with reads or writes: ``job_id``,
        ``file_id``, ``path``, ``size_bytes`` (extent) [bytes],
        ``bytes_read``, ``bytes_written``, ``io_bytes`` [bytes], ``reads``,
        ``writes``, ``ios``, ``avg_io_bytes`` [bytes], ``bps``, ``read_bps``,
        ``write_bps`` [bytes/s], ``ios_per_s`` [1/s], ``rw_data_ratio`` and
        the evidence ``basis``.
    """
    facts, f = _io_files(store, job_id, min_file_bytes, "file_table")
    rt = facts.jobs.set_index("job_id")["runtime_s"].reindex(f["job_id"]).to_numpy()
    rt = pd.Series(rt, index=f.index)
    out = f[["job_id", "file_id", "path"]].copy()
    out["size_bytes"] = f["extent_bytes"]
    out["bytes_read"], out["bytes_written"] = f["bytes_read"], f["bytes_written"]
    out["io_bytes"] = f["bytes_read"] + f["bytes_written"]
    out["reads"], out["writes"] = f["reads"], f["writes"]
    out["ios"] = f["reads"] + f["writes"]
    out["avg_io_bytes"] = _per_s(out["io_bytes"].astype(float), out["ios"].astype(float))
    out["bps"] = _per_s(out["io_bytes"].astype(float), rt)
    out["read_bps"] = _per_s(f["bytes_read"].astype(float), rt)
    out["write_bps"] = _per_s(f["bytes_written"].astype(float), rt)
    out["ios_per_s"] = _per_s(out["ios"].astype(float), rt)
    out["rw_data_ratio"] = _per_s(f["bytes_read"].astype(float), f["bytes_written"].astype(float))
    out["basis"] = f["basis"]
    return out.reset_index(drop=True)


#: Tolerance on span / bin before rounding up, so 3.0 s in 1 s bins is 3 bins, not 4.
_EPS = 1e-9

_SPAN_SQL = """
SELECT j.runtime_s,
       date_diff('microsecond', j.start_ts, j.end_ts) / 1e6 AS wall_s,
       (SELECT min(t_start) FROM ops WHERE job_id = $job_id) AS first_t,
       (SELECT max(greatest(t_start, coalesce(t_end, t_start))) FROM ops
        WHERE job_id = $job_id) AS last_t
FROM (SELECT 1) AS one LEFT JOIN jobs j ON j.job_id = $job_id
"""


@dataclass(frozen=True)
class JobSpan(Result):
    """The time a job ran, in seconds since its start (the ``ops.t_start`` clock).

    Attributes
    ----------
    job_id : int
        The job.
    start_s : float
        Start of the span [s]: 0 (the job's start) when the job's run time is known,
        else the start of its first recorded event; NaN when nothing is known.
    end_s : float
        End of the span [s].
    basis : str
        Where the span comes from: ``"jobs.runtime_s"``, ``"jobs.start_ts..end_ts"``,
        ``"ops: first..last event"`` or ``"none"``.
    params : dict
        The parameters as used (see :class:`iochar.result.Result`).
    sql : str or None
        The SQL that read the store.
    """

    job_id: int
    start_s: float
    end_s: float
    basis: str

    @property
    def duration_s(self) -> float:
        """``end_s - start_s`` [s] (NaN when the span is unknown)."""
        return self.end_s - self.start_s


def _finite_pos(x) -> bool:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return False
    return math.isfinite(v) and v > 0


def job_span(store, *, job_id: int) -> JobSpan:
    """The span a job's rates are measured over: its whole run, not its first to last I/O.

    Miller & Katz (1991) divide a program's I/O by its whole running time: "For a
    program which runs for only 200 seconds, reading 50 MB of configuration and
    initialization data and writing 100 MB of output, the overall I/O rate is only
    0.75 MB/sec", its peaks occupying "a small fraction of the total running time"
    (section 5.1); Table 1 rates are per second of running time and Figs. 3 and 4
    plot the rate over the whole run, idle stretches included. A span that stopped
    at the last read or write would leave out the time a program computes, waits or
    sleeps after it, and overstate its mean rate and the share of time it does I/O.
    (The paper's running time is CPU time; here it is wall-clock time, see the
    module docstring.)

    Rule, first that applies: the job's wall-clock run time ``jobs.runtime_s``
    (span 0..runtime_s, as ``ops.t_start`` counts from the job's start); else
    ``jobs.end_ts - jobs.start_ts``; else, for a job without run-time metadata,
    the first to the last event of any kind in ``ops`` (any call, not only reads
    and writes: start of the first, end of the last).

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int
        The job.

    Returns
    -------
    JobSpan
        ``start_s``, ``end_s`` [s] and the ``basis`` they come from; NaN and "none"
        for a job with no run time and no events.
    """
    job_id = check_int(job_id, "job_id", "job_span", "an int")
    rt, wall, first, last = store.sql(_SPAN_SQL, params={"job_id": job_id}).fetchall()[0]
    how = {"params": {"job_id": job_id}, "sql": _SPAN_SQL}
    if _finite_pos(rt):
        return JobSpan(job_id=job_id, start_s=0.0, end_s=float(rt), basis="jobs.runtime_s", **how)
    if _finite_pos(wall):
        return JobSpan(
            job_id=job_id, start_s=0.0, end_s=float(wall), basis="jobs.start_ts..end_ts", **how
        )
    if first is not None and last is not None:
        return JobSpan(
            job_id=job_id,
            start_s=float(first),
            end_s=float(last),
            basis="ops: first..last event",
            **how,
        )
    return JobSpan(job_id=job_id, start_s=math.nan, end_s=math.nan, basis="none", **how)


def span_bins(span: JobSpan, bin_s: float) -> tuple[int, int] | None:
    """The first and last bin (``floor(t / bin_s)``) a job's span covers.

    For any per-bin series of one job (data rate, rate by class, cycle signal), so
    that all cover the same run: from the bin holding ``span.start_s`` to the one
    holding the last instant before ``span.end_s``.

    Parameters
    ----------
    span : JobSpan
        The result of :func:`job_span`.
    bin_s : float
        Bin width [s].

    Returns
    -------
    tuple of int or None
        ``(first, last)`` bin indexes (bin ``b`` covers ``[b * bin_s, (b + 1) * bin_s)``
        [s]); None when the span is unknown or has no length.

    Examples
    --------
    >>> span_bins(JobSpan(job_id=0, start_s=0.0, end_s=3.0, basis="jobs.runtime_s"), 1.0)
    (0, 2)
    >>> span_bins(JobSpan(job_id=0, start_s=0.0, end_s=12.057, basis="jobs.runtime_s"), 0.5)
    (0, 24)
    """
    if not (math.isfinite(span.start_s) and math.isfinite(span.end_s)):
        return None
    if span.end_s <= span.start_s:
        return None
    lo = math.floor(span.start_s / bin_s + _EPS)
    return lo, max(math.ceil(span.end_s / bin_s - _EPS) - 1, lo)


_RATE_SQL = f"""
WITH layer AS ({LAYER_OPS}),
binned AS (
  SELECT job_id, op, floor(t_start / $bin_s)::BIGINT AS b, sum(size) AS nbytes, count(*) AS n
  FROM layer WHERE job_id = $job_id GROUP BY ALL
),
{SPAN_GRID}
SELECT g.b * $bin_s AS t_s, o.op,
       coalesce(x.nbytes, 0) AS bytes, coalesce(x.n, 0) AS ios,
       coalesce(x.nbytes, 0) / $bin_s AS bps
FROM grid g CROSS JOIN (VALUES ('read'), ('write')) o(op)
LEFT JOIN binned x ON x.b = g.b AND x.op = o.op
ORDER BY t_s, o.op
"""


def data_rate(store, *, job_id: int, bin_s: float = 1.0) -> pd.DataFrame:
    """Data rate over time of one job, over its whole run (Miller & Katz Figs. 3 and 4).

    Each read or write is counted in the bin of its start time. The bins cover the
    job's span (:func:`job_span`: its run time from the job metadata, else its first
    to last event of any kind), so idle time before the first and after the last
    I/O shows as bins of zeros, and a mean over the bins or the share of bins with
    I/O is one over the run (a read or write outside the span, if any, still gets
    its bin).

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
    iochar.result.Table
        ``t_s`` (bin start since job start [s]), ``op`` (read/write),
        ``bytes`` [bytes], ``ios``, ``bps`` (bytes per second in the bin
        [bytes/s]). ``evidence``: ``span_start_s``, ``span_end_s``, ``span_s`` [s]
        and ``span_basis`` (:func:`job_span`), ``bins``, ``active_bins`` (with a
        read or write) and ``active_share`` (their share), ``bytes`` [bytes] and
        ``mean_bps`` (bytes per second of the span [bytes/s]).
    """
    job_id = check_int(job_id, "job_id", "data_rate", "an int")
    bin_s = check_real(
        bin_s, "bin_s", "data_rate", "a positive number of seconds", low=0, low_open=True
    )
    span = job_span(store, job_id=job_id)
    lo, hi = span_bins(span, bin_s) or (None, None)
    params = {"job_id": job_id, "bin_s": bin_s, "lo": lo, "hi": hi}
    df = store.sql(_RATE_SQL, params=params).df()
    per_bin = df.groupby("t_s", sort=True)["bytes"].sum()
    total = float(per_bin.sum())
    bins, active = int(len(per_bin)), int((per_bin > 0).sum())
    evidence = {
        "span_start_s": span.start_s,
        "span_end_s": span.end_s,
        "span_s": span.duration_s,
        "span_basis": span.basis,
        "bins": bins,
        "active_bins": active,
        "active_share": active / bins if bins else math.nan,
        "bytes": total,
        "mean_bps": total / span.duration_s if _finite_pos(span.duration_s) else math.nan,
    }
    return Table(
        df,
        evidence=evidence,
        params={"job_id": job_id, "bin_s": bin_s},
        sql=join_sql(_SPAN_SQL, _RATE_SQL),
    )


# --------------------------------------------------------------------------- over the tables


def app_means(table: pd.DataFrame) -> pd.DataFrame:
    """Table 1 averaged over the jobs of each application.

    The form of Carns et al. (2011), Table VI, which averages per project.

    Parameters
    ----------
    table : pandas.DataFrame
        The result of :func:`app_table`.

    Returns
    -------
    pandas.DataFrame
        One row per ``app`` (the jobs without a name together, ``app`` missing), most
        bytes moved first: ``jobs``, the means over its jobs of ``runtime_s`` [s],
        ``files``, ``io_bytes`` [bytes], ``avg_io_bytes`` [bytes] and ``bps``
        [bytes/s] (a job with a missing value is left out of that mean), and
        ``total_io_bytes`` (the sum of ``io_bytes``) [bytes].

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"job_id": [0, 1, 2], "app": ["a", "b", "b"],
    ...                   "runtime_s": [10.0, 20.0, 40.0], "files": [1, 2, 4],
    ...                   "io_bytes": [5, 9, 3], "avg_io_bytes": [5.0, 3.0, 1.0],
    ...                   "bps": [0.5, 0.45, 0.075]})
    >>> app_means(t)[["app", "jobs", "runtime_s", "total_io_bytes"]]
      app  jobs  runtime_s  total_io_bytes
    0   b     2       30.0              12
    1   a     1       10.0               5
    """
    g = table.groupby("app", sort=False, dropna=False).agg(
        jobs=("job_id", "size"),
        runtime_s=("runtime_s", "mean"),
        files=("files", "mean"),
        io_bytes=("io_bytes", "mean"),
        avg_io_bytes=("avg_io_bytes", "mean"),
        bps=("bps", "mean"),
        total_io_bytes=("io_bytes", "sum"),
    )
    out = g.reset_index()
    return out.sort_values("total_io_bytes", ascending=False, kind="stable").reset_index(drop=True)


def pick_job(table: pd.DataFrame, job_id: int | None = None) -> int | None:
    """The job whose I/O a notebook follows over time (data rate, classes, cycles).

    Parameters
    ----------
    table : pandas.DataFrame
        The result of :func:`app_table` (all files).
    job_id : int, optional
        A job chosen by the notebook's parameter: returned as it is.

    Returns
    -------
    int or None
        ``job_id`` when given; else the job with per-operation records (``basis ==
        "ops"``) that moved the most bytes (the lowest id on a tie), else the job that
        moved the most bytes at all; None when ``table`` is empty.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"job_id": [0, 1], "io_bytes": [5, 9],
    ...                   "basis": ["ops", "file_stats:POSIX"]})
    >>> pick_job(t)          # the job with per-operation records that moved the most
    0
    >>> pick_job(t, 1)       # a job named by the notebook's parameter
    1
    """
    if job_id is not None:
        return int(job_id)
    if table.empty:
        return None
    t = table.assign(_io=table["io_bytes"].fillna(0))
    ops = t[t["basis"] == "ops"]
    pool = ops if len(ops) else t
    pool = pool.sort_values(["_io", "job_id"], ascending=[False, True])
    return int(pool["job_id"].iloc[0])


def rate_bin_s(table: pd.DataFrame, job_id: int | None, bin_s: float | None = None) -> float:
    """Bin width for one job's :func:`data_rate` and its cycles.

    Parameters
    ----------
    table : pandas.DataFrame
        The result of :func:`app_table`.
    job_id : int or None
        The job.
    bin_s : float, optional
        A width chosen by the notebook's parameter [s]: returned as it is.

    Returns
    -------
    float
        ``bin_s`` when given; else the smallest of 1, 2 or 5 x 10^k seconds giving at
        most 200 bins over the job's run time (1 s when the run time is unknown) [s].

    Examples
    --------
    >>> import pandas as pd
    >>> rate_bin_s(pd.DataFrame({"job_id": [4], "runtime_s": [145.6]}), 4)
    1.0
    >>> rate_bin_s(pd.DataFrame({"job_id": [3], "runtime_s": [1893.0]}), 3)
    10.0
    """
    if bin_s is not None:
        return float(bin_s)
    rt = table.loc[table["job_id"] == job_id, "runtime_s"]
    try:
        span = float(rt.iloc[0]) if len(rt) else math.nan
    except (TypeError, ValueError):
        span = math.nan
    if not (span > 0):
        return 1.0
    target = span / 200
    e = math.floor(math.log10(target))
    return float(next(m * 10.0**e for m in (1, 2, 5, 10) if m * 10.0**e >= target))
