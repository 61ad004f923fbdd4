"""How much of the I/O system an application uses, per phase and level (Méndez et al.).

Méndez et al. evaluate efficiency in three phases (section 2, Fig. 1):

1. characterize the I/O system per level of the I/O path (``capacity`` table,
   :mod:`iochar.analyze.capacity`);
2. characterize the application into I/O phases -- "significant phases with an access
   pattern and their weights" (section 2.1): :func:`phases` cuts each job's read/write
   operations into consecutive runs of the same operation and request-size class
   (``floor(log2(size))``), split also where the job is idle longer than ``gap_s``
   (the burst/idle split of :func:`iochar.analyze.bursts.segment` on the job's own
   operations, Carns et al.'s idle periods). A phase's access mode is ``sequential``
   when at least half of its operations start where the same process's previous
   operation on the file ended, else ``random``; its rate is bytes over its wall span
   (first start to last end, all processes together) [bytes/s]. A job with Darshan
   counters and no operations gives one phase per operation from ``file_stats``: bytes,
   count, sequential count, and time = the summed ``read_time``/``write_time`` over the
   job's process count (the ranks assumed to work in parallel);
3. :func:`used` -- per phase and level, used % = 100 x achieved rate / capacity at the
   level, operation, access mode and request size (Méndez Fig. 5(a); the capacity read
   by :func:`iochar.analyze.capacity.capacity_at`, interpolated in log2 size). The
   capacity's spread is carried through: ``used_lo``/``used_hi`` are the rate over
   capacity + sd / capacity - sd (the repetitions' minimum and maximum when there is
   one repetition only... then equal). :func:`table_mendez` lays the result out as
   Méndez Tables 2 and 3 (rows: phases; columns: level x operation).

Values above 100 % happen (Méndez Table 2: 309.74 % at the I/O library level for
BT-IO full reads): caches and aggregation make an application faster than the
characterized configuration.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from iochar.analyze.capacity import capacity_at
from iochar.errors import ParameterError
from iochar.result import Table

__all__ = ["phases", "table_mendez", "used"]

_OPS_SQL = (
    "SELECT job_id, coalesce(rank, 0) AS rank, coalesce(file_id, -1) AS file_id, op,"
    ' "offset", size, t_start, coalesce(t_end, t_start) AS t_end FROM ops'
    " WHERE op IN ('read', 'write') AND size > 0"
    " AND ($job_id IS NULL OR job_id = $job_id) ORDER BY job_id, t_start"
)
_FS_SQL = (
    "SELECT f.job_id, sum(bytes_read) AS br, sum(bytes_written) AS bw, sum(reads) AS nr,"
    " sum(writes) AS nw, sum(seq_reads) AS sr, sum(seq_writes) AS sw,"
    " sum(read_time) AS tr, sum(write_time) AS tw, max(j.nprocs) AS nprocs"
    " FROM file_stats f JOIN jobs j USING (job_id)"
    " WHERE f.rank IS NULL AND ($job_id IS NULL OR f.job_id = $job_id)"
    " AND f.job_id NOT IN (SELECT DISTINCT job_id FROM ops) GROUP BY f.job_id ORDER BY 1"
)
_PHASE_COLS = [
    "job_id",
    "phase",
    "op",
    "access",
    "size_bytes",
    "bytes",
    "ops",
    "nprocs",
    "t_start",
    "t_end",
    "duration_s",
    "rate",
    "seq_share",
    "source",
]


def _trace_phases(df: pd.DataFrame, gap_s: float) -> list[dict]:
    rows = []
    for jid, g in df.groupby("job_id", sort=True):
        g = g.sort_values(["t_start", "rank"], kind="stable").reset_index(drop=True)
        prev_end = (
            g.groupby(["rank", "file_id", "op"])["offset"].shift()
            + g.groupby(["rank", "file_id", "op"])["size"].shift()
        )
        seq = (g["offset"] == prev_end).to_numpy()
        cls = np.floor(np.log2(g["size"].to_numpy(float))).astype(int)
        op = g["op"].to_numpy()
        t0, t1 = g["t_start"].to_numpy(float), g["t_end"].to_numpy(float)
        run_end = np.maximum.accumulate(t1)
        idle = np.r_[False, t0[1:] - run_end[:-1] > gap_s]
        change = np.r_[True, (op[1:] != op[:-1]) | (cls[1:] != cls[:-1])] | idle
        pid = np.cumsum(change) - 1
        g["_p"], g["_seq"] = pid, seq
        for p, h in g.groupby("_p", sort=True):
            b = float(h["size"].sum())
            start, end = float(h["t_start"].min()), float(h["t_end"].max())
            dur = end - start
            share = float(h["_seq"].mean())
            rows.append(
                {
                    "job_id": int(jid),
                    "phase": int(p),
                    "op": str(h["op"].iloc[0]),
                    "access": "sequential" if share >= 0.5 else "random",
                    "size_bytes": b / len(h),
                    "bytes": b,
                    "ops": len(h),
                    "nprocs": int(h["rank"].nunique()),
                    "t_start": start,
                    "t_end": end,
                    "duration_s": dur,
                    "rate": b / dur if dur > 0 else math.nan,
                    "seq_share": share,
                    "source": "trace",
                }
            )
    return rows


def _counter_phases(fs: pd.DataFrame) -> list[dict]:
    rows = []
    for r in fs.itertuples(index=False):
        n = max(int(r.nprocs or 1), 1)
        for k, (op, b, c, s, t) in enumerate(
            (("read", r.br, r.nr, r.sr, r.tr), ("write", r.bw, r.nw, r.sw, r.tw))
        ):
            if not b or not c or b <= 0 or c <= 0:
                continue
            dur = (t or 0.0) / n
            share = float(s) / float(c) if s is not None and s == s else math.nan
            rows.append(
                {
                    "job_id": int(r.job_id),
                    "phase": k,
                    "op": op,
                    "access": "random" if share < 0.5 else "sequential",
                    "size_bytes": float(b) / float(c),
                    "bytes": float(b),
                    "ops": int(c),
                    "nprocs": n,
                    "t_start": math.nan,
                    "t_end": math.nan,
                    "duration_s": dur,
                    "rate": float(b) / dur if dur > 0 else math.nan,
                    "seq_share": share,
                    "source": "counters",
                }
            )
    return rows


def phases(db, *, job_id: int | None = None, gap_s: float = 1.0) -> Table:
    """Application I/O phases (Méndez et al. section 2.1; module docstring).

    Parameters
    ----------
    db : iochar.store.Store
        A store with ``ops`` (strace, DXT, trace) and/or Darshan ``file_stats``.
    job_id : int, optional
        Only this job.
    gap_s : float, default 1.0
        An idle time longer than this between operations ends a phase [s].

    Returns
    -------
    iochar.result.Table
        One row per phase: ``job_id``, ``phase``, ``op``, ``access``, ``size_bytes``
        (mean request) [bytes], ``bytes``, ``ops``, ``nprocs``, ``t_start``, ``t_end``
        [s since job start], ``duration_s`` [s], ``rate`` [bytes/s], ``seq_share``,
        ``source`` (``trace`` or ``counters``).
    """
    if not (isinstance(gap_s, (int, float)) and gap_s >= 0):
        raise ParameterError("gap_s", "phases", "a number of seconds >= 0", gap_s)
    p = {"job_id": job_id}
    ops = db.sql(_OPS_SQL, p).df()
    rows = _trace_phases(ops, float(gap_s)) if len(ops) else []
    try:
        fs = db.sql(_FS_SQL, p).df()
    except Exception:  # noqa: BLE001 - a store without jobs/file_stats rows
        fs = pd.DataFrame()
    rows += _counter_phases(fs) if len(fs) else []
    out = pd.DataFrame(rows, columns=_PHASE_COLS)
    return Table(
        out,
        evidence={"jobs": int(out["job_id"].nunique()), "phases": len(out)},
        params={"job_id": job_id, "gap_s": gap_s},
        sql=_OPS_SQL + ";\n" + _FS_SQL,
    )


def used(ph: pd.DataFrame, cap: pd.DataFrame, *, levels=None) -> Table:
    """Used % per phase and level (Méndez et al. Fig. 5(a), Tables 2 and 3).

    Parameters
    ----------
    ph : pandas.DataFrame
        :func:`phases` output (or rows with ``op``, ``access``, ``size_bytes``,
        ``nprocs``, ``rate``).
    cap : pandas.DataFrame
        :func:`iochar.analyze.capacity.capacity` output.
    levels : sequence of str, optional
        Levels to evaluate; default every level in ``cap``.

    Returns
    -------
    iochar.result.Table
        One row per phase and level: the phase's columns plus ``level``, ``capacity``
        [bytes/s], ``capacity_sd``, ``used_pct``, ``used_lo``, ``used_hi`` (rate over
        capacity + sd and capacity - sd, or over the repetitions' maximum and minimum
        when sd is unknown), ``cap_nprocs``, ``extrapolated``, ``access_substituted``,
        ``limiting`` (True on the level with the least capacity for this phase: the
        bottleneck of the path, against which the phase's used % is highest).
    """
    levels = list(levels) if levels is not None else sorted(cap["level"].unique())
    rows = []
    for r in ph.to_dict("records"):
        for lv in levels:
            c = capacity_at(
                cap,
                level=lv,
                op=r["op"],
                access=r["access"],
                size_bytes=float(r["size_bytes"]),
                nprocs=int(r.get("nprocs") or 1),
            )
            if c is None:
                continue
            sd = c["rate_sd"]
            hi_cap = c["rate"] + sd if sd == sd else c["rate_max"]
            lo_cap = c["rate"] - sd if sd == sd else c["rate_min"]
            rate = float(r["rate"])
            rows.append(
                {
                    **r,
                    "level": lv,
                    "capacity": c["rate"],
                    "capacity_sd": sd,
                    "used_pct": 100.0 * rate / c["rate"],
                    "used_lo": 100.0 * rate / hi_cap,
                    "used_hi": 100.0 * rate / lo_cap if lo_cap > 0 else math.inf,
                    "cap_nprocs": c["nprocs"],
                    "extrapolated": c["extrapolated"],
                    "access_substituted": c["access_substituted"],
                }
            )
    out = pd.DataFrame(rows)
    if out.empty:
        out = pd.DataFrame(columns=[*ph.columns, "level", "capacity", "used_pct", "limiting"])
    else:
        key = ["job_id", "phase"] if "phase" in out else ["op", "size_bytes"]
        low = out.groupby(key)["capacity"].transform("min")
        out["limiting"] = out["capacity"] == low
    return Table(
        out,
        evidence={"levels": levels, "phases": len(ph), "rows": len(out)},
        params={"levels": levels},
    )


def table_mendez(u: pd.DataFrame) -> Table:
    """Used % laid out as Méndez et al. Tables 2 and 3.

    Parameters
    ----------
    u : pandas.DataFrame
        :func:`used` output.

    Returns
    -------
    iochar.result.Table
        One row per phase (``job_id``, ``phase``, ``op``, ``size_bytes``); one column per
        level holding the used % (columns named ``<level> <op>`` as in the paper:
        "I/O Lib write", "NFS read"...); a missing level is NaN.
    """
    if u.empty:
        return Table(pd.DataFrame(), evidence={"phases": 0})
    d = u.copy()
    d["column"] = d["level"] + " " + d["op"]
    wide = d.pivot_table(
        index=["job_id", "phase", "op", "access", "size_bytes", "nprocs"],
        columns="column",
        values="used_pct",
        aggfunc="first",
    ).reset_index()
    wide.columns.name = None
    return Table(wide, evidence={"phases": len(wide)})
