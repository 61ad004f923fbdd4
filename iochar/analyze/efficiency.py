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
   operation on the file ended, else ``random``; its rate is bytes over its I/O time,
   the union of its operations' [start, end] intervals over all processes (Méndez's
   application metrics: "I/O time (time to do reading and writing operations)" and
   "throughput"), so computation between requests does not count against the I/O
   system; ``wall_rate`` is bytes over the wall span (first start to last end), and is
   the rate when the trace has no durations (``strace`` without ``-T``; ``rate_basis``
   says which). A job with Darshan
   counters and no operations gives one phase per operation from ``file_stats`` (the
   POSIX and STDIO records, :data:`LAYERED_MODULES` left out): bytes,
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

__all__ = ["LAYERED_MODULES", "phase_types", "phases", "table_mendez", "used"]

#: Darshan modules whose I/O the POSIX module records again below them (MPI-IO over
#: POSIX, HDF5 and PnetCDF over MPI-IO): left out of byte counts so nothing counts twice
#: (Darshan's darshan-util documentation: each module instruments one interface layer).
LAYERED_MODULES = ("MPI-IO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR")

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
    " WHERE ($job_id IS NULL OR f.job_id = $job_id) AND NOT list_contains($layered, f.module)"
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
    "io_s",
    "rate",
    "wall_rate",
    "rate_basis",
    "seq_share",
    "weight",
    "source",
]


def _rank_runs(g: pd.DataFrame, gap_s: float) -> pd.DataFrame:
    """Runs of one op and size class per process, with their time spans."""
    g = g.sort_values(["rank", "t_start"], kind="stable").reset_index(drop=True)
    key = ["rank", "file_id", "op"]
    prev_end = g.groupby(key)["offset"].shift() + g.groupby(key)["size"].shift()
    g["_seq"] = (g["offset"] == prev_end).fillna(False).astype(bool)
    g["_cls"] = np.floor(np.log2(g["size"].to_numpy(float))).astype(int)
    rk, op, cls = g["rank"].to_numpy(), g["op"].to_numpy(), g["_cls"].to_numpy()
    t0, t1 = g["t_start"].to_numpy(float), g["t_end"].to_numpy(float)
    new_rank = np.r_[True, rk[1:] != rk[:-1]]
    reach = pd.Series(t1).groupby(rk).cummax().to_numpy()
    idle = np.r_[False, t0[1:] - reach[:-1] > gap_s] & ~new_rank
    change = new_rank | np.r_[True, (op[1:] != op[:-1]) | (cls[1:] != cls[:-1])] | idle
    g["_run"] = np.cumsum(change) - 1
    return g, g.groupby("_run", sort=False).agg(
        op=("op", "first"),
        cls=("_cls", "first"),
        rank=("rank", "first"),
        t0=("t_start", "min"),
        t1=("t_end", "max"),
        bytes=("size", "sum"),
        ops=("size", "size"),
        seq=("_seq", "sum"),
    )


def _busy_s(h: pd.DataFrame) -> float:
    """Length of the union of the operations' [t_start, t_end] intervals [s]."""
    a = h["t_start"].to_numpy(float)
    order = np.argsort(a, kind="stable")
    a, b = a[order], h["t_end"].to_numpy(float)[order]
    reach = np.maximum.accumulate(b)
    starts = np.maximum(a, np.r_[-np.inf, reach[:-1]])
    return float(np.clip(b - starts, 0, None).sum()) if len(a) else 0.0


def _trace_phases(df: pd.DataFrame, gap_s: float) -> list[dict]:
    rows = []
    for jid, g in df.groupby("job_id", sort=True):
        ops, runs = _rank_runs(g, gap_s)
        runs = runs.sort_values("t0", kind="stable")
        # runs of the same op and size class on different processes that overlap in
        # time are one phase: the processes did it together
        open_: dict[tuple, int] = {}
        ends: list[float] = []
        pid = np.empty(len(runs), dtype=int)
        for i, (op, cls, a, b) in enumerate(
            zip(runs["op"], runs["cls"], runs["t0"], runs["t1"], strict=True)
        ):
            k = (op, cls)
            p = open_.get(k)
            if p is not None and a <= ends[p]:
                ends[p] = max(ends[p], b)
            else:
                p = len(ends)
                ends.append(b)
                open_[k] = p
            pid[i] = p
        runs["_p"] = pid
        ops["_p"] = runs["_p"].reindex(ops["_run"]).to_numpy()
        busy = ops.groupby("_p").apply(_busy_s, include_groups=False)
        total = float(runs["bytes"].sum())
        for p, h in runs.groupby("_p", sort=True):
            b, n = float(h["bytes"].sum()), int(h["ops"].sum())
            start, end = float(h["t0"].min()), float(h["t1"].max())
            dur = end - start
            io_s = float(busy.get(p, 0.0))
            share = float(h["seq"].sum()) / n
            rows.append(
                {
                    "job_id": int(jid),
                    "phase": int(p),
                    "op": str(h["op"].iloc[0]),
                    "access": "sequential" if share >= 0.5 else "random",
                    "size_bytes": b / n,
                    "bytes": b,
                    "ops": n,
                    "nprocs": int(h["rank"].nunique()),
                    "t_start": start,
                    "t_end": end,
                    "duration_s": dur,
                    "io_s": io_s,
                    "rate": b / io_s if io_s > 0 else (b / dur if dur > 0 else math.nan),
                    "wall_rate": b / dur if dur > 0 else math.nan,
                    "rate_basis": "io_time" if io_s > 0 else "wall",
                    "seq_share": share,
                    "weight": b / total if total else math.nan,
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
                    "io_s": dur,
                    "rate": float(b) / dur if dur > 0 else math.nan,
                    "wall_rate": math.nan,
                    "rate_basis": "io_time",
                    "seq_share": share,
                    "weight": float(b) / float((r.br or 0) + (r.bw or 0)),
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
        [s since job start], ``duration_s`` (wall span) [s], ``io_s`` (I/O time) [s],
        ``rate`` (bytes / io_s) and ``wall_rate`` (bytes / duration_s) [bytes/s], ``seq_share``,
        ``weight`` (share of the job's bytes, Méndez's phase weight), ``source``
        (``trace`` or ``counters``).
    """
    if not (isinstance(gap_s, (int, float)) and gap_s >= 0):
        raise ParameterError("gap_s", "phases", "a number of seconds >= 0", gap_s)
    p = {"job_id": job_id}
    ops = db.sql(_OPS_SQL, p).df()
    rows = _trace_phases(ops, float(gap_s)) if len(ops) else []
    try:
        fs = db.sql(_FS_SQL, {**p, "layered": list(LAYERED_MODULES)}).df()
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


def phase_types(ph: pd.DataFrame) -> Table:
    """Phases of the same kind taken together, with their weights (Méndez section 2.1).

    "Due that scientific applications show a repetitive behavior, P phases will exist in
    the application" (BT-IO: 40 write phases, one read phase): phases of one job with the
    same operation, access mode and request-size class (``floor(log2(size))``) are one
    type; its rate is its bytes over its summed I/O time, its weight its share of the
    job's bytes.

    Parameters
    ----------
    ph : pandas.DataFrame
        :func:`phases` output.

    Returns
    -------
    iochar.result.Table
        One row per job and type: ``job_id``, ``phase`` (type number, heaviest first),
        ``op``, ``access``, ``size_bytes`` (mean request) [bytes], ``bytes``, ``ops``,
        ``nprocs`` (most in one phase), ``occurrences``, ``io_s`` [s], ``rate``
        [bytes/s], ``weight``, ``source``.
    """
    d = ph[ph["rate"].notna()].copy()
    if d.empty:
        return Table(pd.DataFrame(columns=[*_PHASE_COLS, "occurrences"]), evidence={"types": 0})
    d["_cls"] = np.floor(np.log2(d["size_bytes"].astype(float))).astype(int)
    d["_t"] = d["bytes"] / d["rate"]  # the time each phase's rate was computed over
    g = d.groupby(["job_id", "op", "access", "_cls", "source"], sort=False)
    out = g.agg(
        bytes=("bytes", "sum"),
        ops=("ops", "sum"),
        nprocs=("nprocs", "max"),
        occurrences=("phase", "size"),
        io_s=("_t", "sum"),
    ).reset_index()
    out["size_bytes"] = out["bytes"] / out["ops"]
    out["rate"] = out["bytes"] / out["io_s"]
    out["weight"] = out["bytes"] / out.groupby("job_id")["bytes"].transform("sum")
    out = out.sort_values(["job_id", "weight"], ascending=[True, False], kind="stable")
    out["phase"] = out.groupby("job_id").cumcount()
    cols = ["job_id", "phase", "op", "access", "size_bytes", "bytes", "ops", "nprocs"]
    cols += ["occurrences", "io_s", "rate", "weight", "source"]
    return Table(out[cols].reset_index(drop=True), evidence={"types": len(out)})


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
