"""The processes to replay: each traced process's calls and the CPU bursts between them.

Miller & Katz (1991, section 6.1): "For each process, there is an input trace ... which
determines the size of each I/O and the elapsed time between it and the next I/O." The
CPU burst before a call is its recorded ``cpu_s`` (process CPU time since the previous
I/O) when the trace has it, else the time from the end of the process's previous call
(its ``t_end``, else its ``t_start``) to the start of this one, never negative; the
first call's burst is its ``t_start`` (seconds since the job's start). The recorded I/O
time itself is left out: the simulator puts its own in its place.

One process per (job, rank). A read or write on no known file, or one that failed,
costs file-system code only, like open, close, seek and stat; ``sync`` waits for the
process's writes. A read or write without an offset continues where the process's
previous one on that file ended. Darshan DXT jobs are replayed from their POSIX layer
only when they have one (:func:`iochar.analyze._sql.one_layer`). ``copies`` runs that
many identical copies of the set, each on its own files ("not sharing data sets",
section 6.3).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from iochar.analyze._sql import one_layer
from iochar.analyze.cachesim.scheduler import OTHER, READ, SYNC, WRITE, Proc
from iochar.errors import ParameterError

__all__ = ["OPS_SQL", "read_ops", "processes", "choose_job", "job_name"]

#: The ops of the chosen jobs, one layer per job, in each process's order.
OPS_SQL = f"""
SELECT o.job_id, o.rank, o.file_id, CAST(o.op AS VARCHAR) AS op, o.offset, o.size,
       o.t_start, o.t_end, o.cpu_s, o.error IS NOT NULL AS failed
FROM ops o
WHERE list_contains($job_ids, o.job_id)
  AND ({one_layer("o.call", "o.job_id IN (SELECT job_id FROM ops WHERE call = 'DXT_POSIX')")})
ORDER BY o.job_id, o.rank, o.t_start
"""

_KIND = {"read": READ, "write": WRITE, "sync": SYNC}


def read_ops(store, job_ids) -> pd.DataFrame:
    """The ops of ``job_ids`` from the store (:data:`OPS_SQL`).

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_ids : int or sequence of int
        The jobs.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ParameterError
        A job has no ops in the store.
    """
    ids = [job_ids] if isinstance(job_ids, (int, np.integer)) else list(job_ids)
    if not ids or not all(isinstance(j, (int, np.integer)) for j in ids):
        raise ParameterError("job_ids", "cachesim", "an int or a list of ints", job_ids)
    ids = [int(j) for j in ids]
    df = store.sql(OPS_SQL, params={"job_ids": ids}).df()
    missing = sorted(set(ids) - set(df["job_id"].unique().tolist()))
    if missing:
        raise ParameterError("job_ids", "cachesim", "jobs with ops in this database", missing)
    return df


def _frame(ops) -> pd.DataFrame:
    """A trace as a DataFrame with ``job_id``, ``rank``, ``file`` and the op columns."""
    if not isinstance(ops, pd.DataFrame):
        ops = ops.to_pandas()  # pyarrow.Table (iochar.datasets.synth)
    df = pd.DataFrame(
        {
            "job_id": ops["job_id"] if "job_id" in ops else ops.get("job", 0),
            "rank": ops["rank"] if "rank" in ops else 0,
            "op": ops["op"].astype(str),
            "t_start": ops["t_start"].astype(float),
        }
    )
    df["file"] = ops["file_id"] if "file_id" in ops else ops.get("path")
    for col in ("offset", "size", "t_end", "cpu_s"):
        df[col] = ops[col] if col in ops else np.nan
    df["failed"] = ops["failed"] if "failed" in ops else (
        ops["error"].notna() if "error" in ops else False
    )  # fmt: skip
    return df


def processes(ops, copies: int = 1) -> tuple[list[Proc], pd.DataFrame]:
    """The processes of a trace, ``copies`` times over.

    Parameters
    ----------
    ops : pandas.DataFrame or pyarrow.Table
        Ops in the store's layout (:func:`read_ops`) or the trace layout
        (:func:`iochar.datasets.synth.make_workload`: ``job``, ``path``).
    copies : int, default 1
        Identical copies, each with its own files.

    Returns
    -------
    procs : list of Proc
        Copy by copy, then (job, rank).
    who : pandas.DataFrame
        ``pid``, ``copy``, ``job_id``, ``rank``, ``ops`` per process.
    """
    df = _frame(ops)
    df = df.sort_values(["job_id", "rank", "t_start"], kind="stable").reset_index(drop=True)
    grp = [df["job_id"], df["rank"]]
    t_end = df["t_end"].astype(float).fillna(df["t_start"])
    prev_end = t_end.groupby(grp).shift(1)
    gap = (df["t_start"] - prev_end.fillna(0.0)).clip(lower=0.0)
    cpu = pd.to_numeric(df["cpu_s"], errors="coerce").astype(float)
    burst = cpu.where(cpu.notna() & (cpu >= 0), gap).to_numpy(float)
    op_codes, op_names = pd.factorize(df["op"])
    kind = np.array([_KIND.get(str(o), OTHER) for o in op_names] + [OTHER], np.int64)[op_codes]
    has_file = df["file"].notna().to_numpy()
    size = pd.to_numeric(df["size"], errors="coerce").to_numpy(float)
    data = (kind <= WRITE) & has_file & ~df["failed"].to_numpy(bool) & (np.nan_to_num(size) > 0)
    kind = np.where((kind <= WRITE) & ~data, OTHER, kind)
    size = np.where(data, np.nan_to_num(size), 0).astype(np.int64)
    # file keys: one per (job, file); offsets missing -> continue where the last ended
    fkey = pd.Series(-1, index=df.index, dtype=np.int64)
    job_codes = pd.factorize(df["job_id"])[0].astype(np.int64)
    file_codes, file_names = pd.factorize(df["file"])
    codes = pd.factorize(job_codes * (len(file_names) + 1) + file_codes)[0]
    fkey[:] = np.where(has_file, codes, -1)
    off = pd.to_numeric(df["offset"], errors="coerce").astype(float)
    if off[data].isna().any():
        d = pd.DataFrame({"k": fkey, "r": df["rank"], "size": np.where(data, size, 0)})
        pointer = d.groupby(["r", "k"])["size"].cumsum() - d["size"]
        off = off.where(off.notna(), pointer)
    offset = np.where(data, np.nan_to_num(off).clip(min=0), 0).astype(np.int64)
    nfiles = int(fkey.max()) + 1 if len(fkey) else 0
    fk = fkey.to_numpy()
    rank = df["rank"].to_numpy()
    bounds = np.flatnonzero((np.diff(job_codes) != 0) | (rank[1:] != rank[:-1])) + 1
    starts = np.concatenate(([0], bounds))
    ends = np.concatenate((bounds, [len(df)]))
    procs, rows = [], []
    for c in range(int(copies)):
        fc = (fk + c * nfiles).tolist()
        for a, b in zip(starts, ends, strict=True):
            if a == b:
                continue
            procs.append(
                Proc(
                    kind[a:b].tolist(),
                    fc[a:b],
                    offset[a:b].tolist(),
                    size[a:b].tolist(),
                    burst[a:b].tolist(),
                )
            )
            rows.append((len(rows), c, df["job_id"].iat[a], int(df["rank"].iat[a]), int(b - a)))
    who = pd.DataFrame(rows, columns=["pid", "copy", "job_id", "rank", "ops"])
    return procs, who


_CHOOSE_SQL = """
SELECT o.job_id, any_value(j.app) AS app, sum(o.size) AS nbytes
FROM ops o LEFT JOIN jobs j USING (job_id)
WHERE o.op IN ('read', 'write') AND o.size IS NOT NULL
GROUP BY o.job_id
ORDER BY (any_value(j.app) = $app) DESC NULLS LAST, nbytes DESC, o.job_id
LIMIT 1
"""


def choose_job(store, job_id: int | None = None, app: str | None = None) -> int | None:
    """The job to replay: ``job_id`` as given, else the one named ``app`` that moved the
    most bytes, else the job with per-operation records that moved the most.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        Taken as it is when given.
    app : str, optional
        Application name (``jobs.app``) preferred.

    Returns
    -------
    int or None
        None when no job has reads or writes in ``ops``.
    """
    if job_id is not None:
        return int(job_id)
    rows = store.sql(_CHOOSE_SQL, params={"app": app or ""}).fetchall()
    return int(rows[0][0]) if rows else None


def job_name(store, job_id: int) -> str | None:
    """The job's application name (``jobs.app``), or None when unknown.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int
        The job.
    """
    rows = store.sql("SELECT app FROM jobs WHERE job_id = $j", params={"j": int(job_id)}).fetchall()
    return rows[0][0] if rows and isinstance(rows[0][0], str) and rows[0][0] else None
