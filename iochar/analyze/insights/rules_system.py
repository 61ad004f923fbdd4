"""Insight rules that need iochar's analyses, not one SQL query (issue 19, item 1).

Each rule here is a :class:`~iochar.analyze.insights.Rule` with a ``compute``
function: it runs a library analysis and returns one evidence row per job it
could check (``job_id`` and numbers), graded like every other rule. A job the
store holds no data for is *not checked*, and the row's absence says why
(``needs``, per job where the reason differs).

- **checkpoint-interval** (``CKPT-INTERVAL-1``): the measured checkpoint cost
  ``C`` and interval ``tau`` against the optimum interval for a mean time
  between failures ``M`` (Young 1974; Daly 2006).
- **checkpoint-overhead** (``CKPT-OVERHEAD-1``): the share of the run spent
  saving checkpoints.
- **variance** (``VARIANCE-1``): a run far slower than the other runs of its
  repeated-job group (Carns et al. 2011, section 4.1, Table IV).
- **fsu-suboptimal** (``FSU-SUBOPTIMAL-1``): the share of sub-optimal disk I/Os
  on the targets while the job ran (Uselton & Wright 2013, Tables II-III).
- **cycles-collide** (``CYCLES-COLLIDE-1``): the share of the job's I/O bursts
  that fell in the system's busy periods (Carns et al. 2011, section 4).

Checkpoint bursts
-----------------
:func:`checkpoint_bursts` finds one job's checkpoint saves. The files are those
:func:`iochar.analyze.classify.classify` labels ``checkpoint`` (Miller & Katz
1991, section 5.1). Each save is a burst of their I/O:

- from per-operation records (strace, Darshan DXT, traces): the time intervals
  ``[t_start, t_end]`` of every successful call on a checkpoint file except reads
  (open, write, fsync, close...: a restart's read-back is not a save), merged when
  less than ``gap`` apart; a burst without a write (the open and close around a
  read-back) is no save. Calls of several ranks or files within ``gap`` are one
  save; a Darshan log's DXT_MPIIO segments, which repeat its DXT_POSIX ones, fall
  inside the same intervals;
- from Darshan counters only: each file of a numbered checkpoint series (one save
  per file) contributes its ``[first_write_t, last_write_t]`` (from
  ``*_F_WRITE_START_TIMESTAMP`` / ``*_F_WRITE_END_TIMESTAMP``), merged the same
  way. A file rewritten in place has one first and one last write time for all
  its saves: its saves cannot be told apart, and it is left out.

``gap`` is ``burst_gap`` x the job's run time, at least 1 ms: classify's default
``burst_gap_s`` (1% of the run). The cost of one save ``C`` is the mean burst
length (end of its last call - start of its first) [s]; the interval ``tau`` is
the mean time from the end of one save to the start of the next [s], the
computation between checkpoints (Daly's ``tau``; Young's ``T_c``).

Times are seconds; shares fractions 0..1; bytes bytes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from iochar.analyze._query import query
from iochar.analyze.insights._rule import Param, Rule
from iochar.result import Table

__all__ = [
    "RULES",
    "CHECKPOINT_INTERVAL",
    "CHECKPOINT_OVERHEAD",
    "VARIANCE",
    "FSU_SUBOPTIMAL",
    "CYCLES_COLLIDE",
    "checkpoint_bursts",
    "young_interval",
    "daly_interval",
    "merge_intervals",
]

_YOUNG = (
    "Young, 'A first order approximation to the optimum checkpoint interval', "
    "CACM 17(9):530-531, 1974"
)
_DALY = (
    "Daly, 'A higher order estimate of the optimum checkpoint interval for restart "
    "dumps', FGCS 22(3):303-312, 2006"
)
_CARNS = "Carns et al., 'Understanding and improving computational science storage access "
_CARNS += "through continuous characterization', ACM TOS 7(3), 2011"
_USELTON = "Uselton & Wright, 'A file system utilization metric for I/O characterization', "
_USELTON += "PDSW 2013"


# --------------------------------------------------------------------------- helpers


def merge_intervals(start: np.ndarray, end: np.ndarray, gap: float) -> tuple[np.ndarray, ...]:
    """Union of time intervals, joining those less than ``gap`` apart.

    Parameters
    ----------
    start, end : numpy.ndarray
        Interval bounds [s] (any order; ``end >= start``).
    gap : float
        Intervals whose distance is at most this are one [s].

    Returns
    -------
    tuple of numpy.ndarray
        ``(starts, ends, members)``: the merged intervals in time order and,
        for each input interval in sorted order, the index of its merged one.

    Examples
    --------
    >>> s, e, _ = merge_intervals(np.array([0.0, 0.5, 3.0]), np.array([1.0, 1.2, 4.0]), 0.1)
    >>> s.tolist(), e.tolist()
    ([0.0, 3.0], [1.2, 4.0])
    """
    start = np.asarray(start, np.float64)
    end = np.maximum(np.asarray(end, np.float64), start)
    if len(start) == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0, np.int64)
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)  # furthest end so far
    new = np.r_[True, s[1:] > reach[:-1] + gap]
    member = np.cumsum(new) - 1
    first = np.flatnonzero(new)
    return s[first], np.maximum.reduceat(e, first), member


def young_interval(cost_s: float, mtbf_s: float) -> float:
    """Young's (1974) optimum checkpoint interval ``sqrt(2 C M)`` [s].

    Parameters
    ----------
    cost_s : float
        Time to write one checkpoint ``C`` [s].
    mtbf_s : float
        Mean time between failures ``M`` [s].

    Examples
    --------
    >>> young_interval(50.0, 3600.0)
    600.0
    """
    return math.sqrt(2.0 * cost_s * mtbf_s)


def daly_interval(cost_s: float, mtbf_s: float) -> float:
    """Daly's (2006, Eq. 37) higher-order optimum checkpoint interval [s].

    ``tau = sqrt(2 d M) [1 + 1/3 sqrt(d / (2M)) + 1/9 (d / (2M))] - d`` for
    ``d < 2M``, else ``M``, with ``d`` the checkpoint cost and ``M`` the mean time
    between failures; ``tau`` is the computation between two checkpoints.

    Parameters
    ----------
    cost_s : float
        Time to write one checkpoint ``d`` [s].
    mtbf_s : float
        Mean time between failures ``M`` [s].

    Examples
    --------
    >>> round(daly_interval(50.0, 3600.0), 3)
    567.13
    """
    if cost_s >= 2.0 * mtbf_s:
        return float(mtbf_s)
    x = cost_s / (2.0 * mtbf_s)
    return math.sqrt(2.0 * cost_s * mtbf_s) * (1 + math.sqrt(x) / 3 + x / 9) - cost_s


def _jobs(store, job_id: int | None) -> pd.DataFrame:
    return query(
        store,
        "SELECT job_id, start_ts, end_ts, runtime_s FROM jobs "
        "WHERE ($job_id IS NULL OR job_id = $job_id) ORDER BY job_id",
        {"job_id": job_id},
    ).df()


def _frame(rows: list[dict[str, Any]], columns: list[str], **kw: Any) -> Table:
    df = pd.DataFrame(rows, columns=columns)
    return Table(df, **kw)


# --------------------------------------------------------------------------- checkpoints

_CKPT_OPS_SQL = """
SELECT job_id, file_id, t_start, t_end, coalesce(size, 0) AS nbytes,
       (op = 'write' AND size > 0)::INTEGER AS writes
FROM ops
WHERE list_contains($files, file_id) AND op <> 'read' AND error IS NULL
"""

_CKPT_COUNTERS_SQL = """
SELECT job_id, file_id, first_write_t AS t_start, last_write_t AS t_end,
       coalesce(bytes_written, 0) AS nbytes, 1 AS writes
FROM file_stats
WHERE list_contains($files, file_id) AND bytes_written > 0
  AND first_write_t IS NOT NULL AND last_write_t IS NOT NULL
"""


def _bursts_once(store, job_id: int | None, burst_gap: float) -> Table:
    """:func:`checkpoint_bursts`, reused while the store holds the same inputs
    (:func:`iochar.analyze._reuse.reuse`): CKPT-INTERVAL-1 and CKPT-OVERHEAD-1 run one
    after the other on the same bursts."""
    from iochar.analyze._reuse import reuse

    return reuse(
        store,
        "checkpoint_bursts",
        (job_id, burst_gap),
        lambda: checkpoint_bursts(store, job_id=job_id, burst_gap=burst_gap),
    )


def checkpoint_bursts(store, *, job_id: int | None = None, burst_gap: float = 0.01) -> Table:
    """The checkpoint saves of each job: one row per burst (see the module notes).

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        Only this job.
    burst_gap : float, default 0.01
        Calls less than this share of the run apart (at least 1 ms) are one save.

    Returns
    -------
    iochar.result.Table
        ``job_id``, ``burst`` (0, 1, ... in time order), ``start_s``, ``end_s``
        (since job start) and ``duration_s`` [s], ``nbytes`` (bytes written)
        [bytes]. ``sql``: the queries that read the calls and the counters;
        ``evidence["needs"]``: job id to why a job with checkpoint files has no
        burst; ``evidence["runtime_s"]``: job id to its run time [s].
    """
    from iochar.analyze.insights._shared import classified
    from iochar.result import join_sql

    labels = classified(store, job_id=job_id)  # one classification per store state
    ck = labels[labels["class"] == "checkpoint"]
    jobs = _jobs(store, job_id)
    runtime = {
        int(j): float(r) if r == r and r is not None else float("nan")
        for j, r in zip(jobs["job_id"], jobs["runtime_s"], strict=True)
    }
    traced = ck[ck["basis"] == "ops"]
    series = ck[(ck["basis"] != "ops") & ck["series"].notna()]
    parts = []
    if len(traced):
        parts.append(
            query(store, _CKPT_OPS_SQL, {"files": [int(f) for f in traced["file_id"]]}).df()
        )
    if len(series):
        files = [int(f) for f in series["file_id"]]
        parts.append(query(store, _CKPT_COUNTERS_SQL, {"files": files}).df())
    calls = pd.concat([p for p in parts if len(p)], ignore_index=True) if parts else None
    rows: list[dict[str, Any]] = []
    needs: dict[int, str] = {}
    for jid in sorted(set(int(j) for j in ck["job_id"])):
        sub = calls[calls["job_id"] == jid] if calls is not None else None
        if sub is None or sub.empty:
            needs[jid] = (
                "checkpoint files whose saves can be told apart: per-operation records, "
                "or a numbered series in Darshan counters (a file rewritten in place has "
                "one first and last write time for all its saves)"
            )
            continue
        rt = runtime.get(jid, float("nan"))
        span = float(sub["t_end"].max())
        rt = rt if rt == rt and rt > 0 else span
        gap = max(burst_gap * rt, 1e-3)
        s, e, member = merge_intervals(sub["t_start"].to_numpy(), sub["t_end"].to_numpy(), gap)
        order = np.argsort(sub["t_start"].to_numpy(np.float64), kind="stable")
        nbytes = np.bincount(member, sub["nbytes"].to_numpy(np.float64)[order], len(s))
        writes = np.bincount(member, sub["writes"].to_numpy(np.float64)[order], len(s))
        saves = np.flatnonzero(writes > 0)  # a restart's open/close around its read-back
        if len(saves) == 0:
            needs[jid] = "a write to a checkpoint file"
        for n, k in enumerate(saves):
            rows.append(
                {
                    "job_id": jid,
                    "burst": n,
                    "start_s": float(s[k]),
                    "end_s": float(e[k]),
                    "duration_s": float(e[k] - s[k]),
                    "nbytes": float(nbytes[k]),
                }
            )
    cols = ["job_id", "burst", "start_s", "end_s", "duration_s", "nbytes"]
    return _frame(
        rows,
        cols,
        evidence={"needs": needs, "runtime_s": runtime},
        params={"burst_gap": burst_gap},
        sql=join_sql(_CKPT_OPS_SQL, _CKPT_COUNTERS_SQL),
    )


_NO_CKPT = "checkpoint files (iochar.analyze.classify) with per-save times"


def _interval_rows(store, job_id: int | None, values: dict[str, float]) -> Table:
    b = _bursts_once(store, job_id, values["burst_gap"])
    needs = dict(b.evidence["needs"])
    mtbf = values["mtbf_s"]
    rows = []
    for jid, g in b.groupby("job_id", sort=True):
        jid = int(jid)
        if len(g) < 2:
            needs[jid] = "at least two checkpoint saves (one save has no interval)"
            continue
        c = float(g["duration_s"].mean())
        tau = float((g["start_s"].to_numpy()[1:] - g["end_s"].to_numpy()[:-1]).mean())
        opt = daly_interval(c, mtbf)
        if not (tau > 0 and opt > 0):
            needs[jid] = "a positive checkpoint cost and interval"
            continue
        ratio = tau / opt
        rows.append(
            {
                "job_id": jid,
                "saves": len(g),
                "ckpt_cost_s": c,
                "interval_s": tau,
                "mtbf_s": mtbf,
                "young_opt_s": young_interval(c, mtbf),
                "daly_opt_s": opt,
                "interval_ratio": ratio,
                "off_factor": max(ratio, 1.0 / ratio),
                "ckpt_bytes": float(g["nbytes"].mean()),
            }
        )
    cols = ["job_id", "saves", "ckpt_cost_s", "interval_s", "mtbf_s", "young_opt_s",
            "daly_opt_s", "interval_ratio", "off_factor", "ckpt_bytes"]  # fmt: skip
    return _frame(rows, cols, evidence={"needs": needs}, sql=b.sql)


def _overhead_rows(store, job_id: int | None, values: dict[str, float]) -> Table:
    b = _bursts_once(store, job_id, values["burst_gap"])
    runtime = b.evidence["runtime_s"]
    needs = dict(b.evidence["needs"])
    rows = []
    for jid, g in b.groupby("job_id", sort=True):
        jid = int(jid)
        rt = runtime.get(jid, float("nan"))
        if not rt > 0:
            needs[jid] = "the job's run time (jobs.runtime_s)"
            continue
        spent = float(g["duration_s"].sum())
        rows.append(
            {
                "job_id": jid,
                "saves": len(g),
                "ckpt_time_s": spent,
                "runtime_s": rt,
                "ckpt_share": spent / rt,
                "ckpt_bytes": float(g["nbytes"].sum()),
            }
        )
    cols = ["job_id", "saves", "ckpt_time_s", "runtime_s", "ckpt_share", "ckpt_bytes"]
    return _frame(rows, cols, evidence={"needs": needs}, sql=b.sql)


_BURST_GAP = Param(
    "burst_gap",
    0.01,
    "share",
    "iochar.analyze.classify: burst_gap_s default, a pause longer than 1% of the run "
    "(at least 1 ms) starts a new burst",
)

CHECKPOINT_INTERVAL = Rule(
    code="CKPT-INTERVAL-1",
    topic="checkpoint-interval",
    title="Checkpoints far more or far less often than the optimum for the failure rate",
    sql="",
    compute=_interval_rows,
    measure="off_factor",
    warn_at="interval_factor",
    high_at="interval_factor_high",
    params=(
        Param(
            "mtbf_s",
            86400.0,
            "s",
            "iochar: one day, a system mean time between failures within the range "
            "Schroeder & Gibson (DSN 2006) report for LANL's HPC systems (20 to over 1000 "
            "failures a year); set your system's",
        ),
        Param(
            "interval_factor",
            2.0,
            "ratio",
            "iochar, from Young 1974's first-order loss C/tau + tau/(2M): at a factor k "
            "from the optimum the time lost is (k + 1/k)/2 of the optimum's, 1.25 at k=2",
        ),
        Param(
            "interval_factor_high",
            4.0,
            "ratio",
            "iochar, same model: at k=4 the time lost is 2.1 times the optimum's",
        ),
        _BURST_GAP,
    ),
    recommendation="Move the checkpoint interval towards daly_opt_s: save less often when "
    "interval_ratio < 1 (time lost to saving), more often when > 1 (work lost at a "
    "failure); set mtbf_s to your system's mean time between failures.",
    reference=f"{_YOUNG}; {_DALY}, Eq. 37; Miller & Katz 1991 section 5.1",
    needs=f"{_NO_CKPT}: at least two saves",
)

CHECKPOINT_OVERHEAD = Rule(
    code="CKPT-OVERHEAD-1",
    topic="checkpoint-overhead",
    title="A large share of the run spent writing checkpoints",
    sql="",
    compute=_overhead_rows,
    measure="ckpt_share",
    warn_at="ckpt_share",
    high_at="ckpt_share_high",
    params=(
        Param(
            "ckpt_share",
            0.1,
            "share",
            "iochar, from Young 1974: at the optimum interval the share of time saving "
            "is about sqrt(C/(2M)); with the default one-day MTBF it exceeds 10% only "
            "when one save takes over 29 min (C > 0.02 M)",
        ),
        Param(
            "ckpt_share_high",
            0.25,
            "share",
            "iochar, same formula: 25% at the optimum needs a save of over 3 h (C > 0.125 M)",
        ),
        _BURST_GAP,
    ),
    recommendation="Save checkpoints less often (see CKPT-INTERVAL-1), save less state, or "
    "make the saves faster (one shared file with collective MPI-IO, asynchronous or "
    "multi-level checkpointing to node-local storage).",
    reference=f"{_YOUNG}; Miller & Katz 1991 section 5.1",
    needs=_NO_CKPT,
)


# --------------------------------------------------------------------------- variance


_GROUP_NEEDS = (
    "a repeated-job group of at least 3 runs (same user, application, process and file "
    "count, bytes within the tolerance: Carns et al. 2011 Table IV)"
)


def _variance_rows(store, job_id: int | None, values: dict[str, float]) -> Table:
    want = _jobs(store, job_id)["job_id"].astype("int64").tolist()
    rows: list[dict[str, Any]] = []
    if query(store, "SELECT count(*) FROM jobs").fetchall()[0][0] < 3:  # no group possible
        needs = {int(j): _GROUP_NEEDS for j in want}
        return _frame(rows, _VARIANCE_COLS, evidence={"needs": needs})
    from iochar.analyze.jobs import job_metrics
    from iochar.analyze.variance import repeated_jobs

    metrics = job_metrics(store)
    jm = metrics.jobs
    needs = {int(j): "the slowest rank's I/O time (Darshan counters or traced I/O)" for j in want}
    if jm.empty:
        return _frame(rows, _VARIANCE_COLS, evidence={"needs": needs}, sql=metrics.sql)
    rep = repeated_jobs(jm, values["group_tolerance"], min_samples=1)
    t = jm.set_index("job_id")["slowest_io_s"].astype("float64")
    mem = rep.members.dropna(subset=["group_id"])
    size = mem.groupby("group_id")["job_id"].transform("size")
    for jid, gid, n in zip(mem["job_id"], mem["group_id"], size, strict=True):
        jid = int(jid)
        if jid not in needs:
            continue
        if n < 3:
            needs[jid] = _GROUP_NEEDS
            continue
        ids = mem.loc[(mem["group_id"] == gid) & (mem["job_id"] != jid), "job_id"]
        others = t.reindex(ids.astype("int64")).to_numpy(np.float64)
        others = others[np.isfinite(others)]
        me = float(t.get(jid, np.nan))
        med = float(np.median(others)) if len(others) else np.nan
        if not (len(others) >= 2 and np.isfinite(me) and med > 0):
            continue
        mean, std = float(others.mean()), float(others.std(ddof=1))
        flat = std <= 1e-12 * max(abs(mean), 1e-300)
        allt = np.r_[others, me]
        rows.append(
            {
                "job_id": jid,
                "group_runs": int(n),
                "slowest_io_s": me,
                "group_median_s": med,
                "group_mean_s": mean,
                "group_std_s": std,
                "group_cv_pct": float(100 * allt.std(ddof=1) / allt.mean()),
                "slowdown": me / med,
                "z": np.nan if flat else (me - mean) / std,
            }
        )
        needs.pop(jid)
    return _frame(rows, _VARIANCE_COLS, evidence={"needs": needs}, sql=metrics.sql)


_VARIANCE_COLS = ["job_id", "group_runs", "slowest_io_s", "group_median_s", "group_mean_s",
                  "group_std_s", "group_cv_pct", "slowdown", "z"]  # fmt: skip

VARIANCE = Rule(
    code="VARIANCE-1",
    topic="variance",
    title="A run far slower at I/O than the other runs of the same job",
    sql="",
    compute=_variance_rows,
    measure="slowdown",
    warn_at="slowdown",
    high_at="slowdown_high",
    count="z",
    min_count="z_min",
    params=(
        Param(
            "slowdown",
            2.0,
            "ratio",
            "Carns et al. 2011 section 4.1: the groups of Table IV with high variance have "
            "'a maximum I/O time that at least doubled the minimum'",
        ),
        Param(
            "slowdown_high",
            10.0,
            "ratio",
            "Carns et al. 2011 Table IV: NuclearPhysics A's slowest run took 10.8 times "
            "its group's mean (248.8 s / 23.1 s), the rank-0 I/O case the paper singles out",
        ),
        Param(
            "z_min",
            2.0,
            "count",
            "iochar: within 2 standard deviations of the other runs (similar_jobs' z) the "
            "slowdown is the group's usual spread: info only",
        ),
        Param(
            "group_tolerance",
            0.01,
            "share",
            "Carns et al. 2011 section 4.1: bytes read and written 'never varied by more "
            "than 1%' within a group",
        ),
    ),
    recommendation="The same job ran much faster before: the difference is outside the "
    "application (contention from other jobs, a degraded target). Compare with the system's "
    "load at that time (cycles-collide, fsu-suboptimal); spread I/O over more ranks when a "
    "single process does it (the most variable groups of Table IV did rank-0 I/O).",
    reference=f"{_CARNS}, section 4.1, Table IV; iochar.analyze.variance",
    needs="a repeated-job group of at least 3 runs with the slowest rank's I/O time",
)


# --------------------------------------------------------------------------- FSU

_NO_DATE = "the job's start and end date (jobs.start_ts, end_ts) to match the system's data"


def _fsu_rows(store, job_id: int | None, values: dict[str, float]) -> Table:
    from iochar.analyze.fsu import DISK_IO_SIZE, fsu_series, table_i_model

    jobs = _jobs(store, job_id)
    needs = {int(j): _NO_DATE for j in jobs.loc[jobs["start_ts"].isna(), "job_id"]}
    dated = jobs[jobs["start_ts"].notna()]
    rows: list[dict[str, Any]] = []
    has = query(
        store, "SELECT count(*) FROM size_hist WHERE section = $s", {"s": DISK_IO_SIZE}
    ).fetchall()[0][0]
    if not has:
        for j in dated["job_id"]:
            needs[int(j)] = "disk I/O size histograms of the targets (size_hist, brw_stats)"
        return _frame(rows, _FSU_COLS, evidence={"needs": needs})
    s = fsu_series(store, table_i_model(), optimal_bytes=int(values["optimal_bytes"]))
    used = s[s["fsu_pct"].notna()]
    end = pd.to_datetime(used["ts"]).to_numpy()
    begin = end - (used["interval_s"].to_numpy(np.float64) * 1e6).astype("timedelta64[us]")
    for jid, t0, t1, rt in dated.itertuples(index=False, name=None):
        t0 = pd.Timestamp(t0).to_datetime64()
        t1 = pd.Timestamp(t1).to_datetime64() if t1 is not None and t1 == t1 else None
        if t1 is None:
            t1 = t0 + np.timedelta64(int(round((rt if rt == rt else 0.0) * 1e6)), "us")
        hit = (end > t0) & (begin < max(t1, t0 + np.timedelta64(1, "us")))
        w = used[hit]
        if w.empty:
            needs[int(jid)] = "disk I/O size histograms (size_hist) covering the job's run"
            continue
        ios = float(w["read_ios"].sum() + w["write_ios"].sum())
        sub = float(w["suboptimal_ios"].sum())
        rows.append(
            {
                "job_id": int(jid),
                "intervals": len(w),
                "targets": int(w["target"].nunique()),
                "ios": ios,
                "suboptimal_ios": sub,
                "suboptimal_share": sub / ios if ios > 0 else 0.0,
                "fsu_pct": float(w["fsu_pct"].mean()),
                "bw_load_pct": float(w["bw_load_pct"].mean()),
                "optimal_bytes": float(s.evidence["optimal_bytes"]),
            }
        )
    return _frame(rows, _FSU_COLS, evidence={"needs": needs}, sql=s.sql)


_FSU_COLS = ["job_id", "intervals", "targets", "ios", "suboptimal_ios", "suboptimal_share",
             "fsu_pct", "bw_load_pct", "optimal_bytes"]  # fmt: skip

FSU_SUBOPTIMAL = Rule(
    code="FSU-SUBOPTIMAL-1",
    topic="fsu-suboptimal",
    title="Most disk I/Os on the storage targets were sub-optimal while the job ran",
    sql="",
    compute=_fsu_rows,
    measure="suboptimal_share",
    warn_at="suboptimal_share",
    high_at="suboptimal_share_high",
    count="fsu_pct",
    min_count="busy_fsu_pct",
    params=(
        Param(
            "optimal_bytes",
            1048576,
            "bytes",
            "Uselton & Wright 2013 section V: 'any I/O below 1MB is sub-optimal' on "
            "ldiskfs OSTs (the largest brw_stats bin)",
        ),
        Param(
            "suboptimal_share",
            0.4,
            "share",
            "Uselton & Wright 2013 section V, Fig. 12: the 60/40 split of /scratch, the "
            "file system whose sub-optimal load they flag (/scratch2: 5-22%, Table III)",
        ),
        Param(
            "suboptimal_share_high",
            0.77,
            "share",
            "Uselton & Wright 2013 Table II: 77% sub-optimal I/Os on /scratch when busy",
        ),
        Param(
            "busy_fsu_pct",
            30.0,
            "%",
            "Uselton & Wright 2013 section V: 'when the FSU is above around 30% the file "
            "system is busy' (Table II's busy row); below it: info only",
        ),
    ),
    recommendation="The targets spent their time on small disk I/Os while the job ran: "
    "write in large aligned requests (MPI-IO collective buffering, larger stripes) and "
    "check which jobs issue the small I/Os; FSU, not bandwidth, shows this load.",
    reference=f"{_USELTON}, Eq. 7, Tables II-III; iochar.analyze.fsu",
    needs="disk I/O size histograms (size_hist) covering the job's dated run",
)


# --------------------------------------------------------------------------- cycles-collide

_JOB_IO_SQL = """
WITH layer AS ({layer})
SELECT job_id, t_start, t_end, size FROM layer WHERE list_contains($jobs, job_id)
"""


def _collide_rows(store, job_id: int | None, values: dict[str, float]) -> Table:
    from iochar.analyze._sql import LAYER_OPS

    jobs = _jobs(store, job_id)
    needs = {int(j): _NO_DATE for j in jobs.loc[jobs["start_ts"].isna(), "job_id"]}
    dated = jobs[jobs["start_ts"].notna()]
    rows: list[dict[str, Any]] = []
    spans = query(
        store,
        "SELECT source_id, min(ts - to_microseconds(CAST(interval_s * 1e6 AS BIGINT))) AS t0, "
        "max(ts) AS t1 FROM counters WHERE metric IN ('read_bytes', 'write_bytes') "
        "GROUP BY source_id ORDER BY source_id",
    ).df()
    sql = _JOB_IO_SQL.format(layer=LAYER_OPS)
    ops = query(store, sql, {"jobs": [int(j) for j in dated["job_id"]]}).df()
    phases: dict[int, pd.DataFrame] = {}
    for jid, t0, _t1, rt in dated.itertuples(index=False, name=None):
        jid = int(jid)
        o = ops[ops["job_id"] == jid]
        if o.empty:
            needs[jid] = "the job's reads and writes with their times (ops)"
            continue
        run = rt if rt == rt and rt > 0 else float(o["t_end"].max())
        s, e, member = merge_intervals(
            o["t_start"].to_numpy(), o["t_end"].to_numpy(), max(values["burst_gap"] * run, 1e-3)
        )
        origin = pd.Timestamp(t0)
        a = origin + pd.to_timedelta(s, unit="s")
        b = origin + pd.to_timedelta(e, unit="s")
        over = spans[(spans["t0"] < b.max()) & (spans["t1"] > a.min())]
        if over.empty:
            needs[jid] = "device or target throughput counters (read_bytes, write_bytes) "
            needs[jid] += "covering the job's run"
            continue
        busy = observed = 0.0
        for src in over["source_id"]:
            key = -1 if pd.isna(src) else int(src)
            if key not in phases:
                phases[key] = _busy_phases(store, None if key < 0 else key, values["busy_share"])
            ph = phases[key]
            if ph.empty:
                continue
            busy += _overlap(a, b, ph[ph["state"] == "burst"])
            observed += _overlap(a, b, ph[ph["state"] != "gap"])
        if not observed > 0:
            needs[jid] = "throughput counters observing the time of the job's I/O bursts"
            continue
        rows.append(
            {
                "job_id": jid,
                "io_bursts": len(s),
                "io_burst_s": float(np.sum(e - s)),
                "observed_s": observed,
                "busy_overlap_s": busy,
                "collide_share": busy / observed,
                "busy_share_of_peak": values["busy_share"],
            }
        )
    cols = ["job_id", "io_bursts", "io_burst_s", "observed_s", "busy_overlap_s",
            "collide_share", "busy_share_of_peak"]  # fmt: skip
    return _frame(rows, cols, evidence={"needs": needs}, sql=sql)


def _busy_phases(store, source_id: int | None, busy_share: float) -> pd.DataFrame:
    """Burst / idle / gap phases of one input's summed read and write throughput, in the
    samples' own intervals (:func:`iochar.analyze.bursts.segment`, threshold
    ``busy_share`` of the observed peak); empty when the series has no activity."""
    from iochar.analyze import bursts
    from iochar.errors import ParameterError

    ser = bursts.series(store, bin_s=None, source_id=source_id)
    if ser.notna().sum() < 2 or not np.nanmax(ser.to_numpy(np.float64)) > 0:
        return pd.DataFrame()
    try:
        return bursts.segment(ser, threshold=busy_share)
    except ParameterError:  # a series segment() refuses (unsorted, duplicate times)
        return pd.DataFrame()


def _overlap(a: pd.DatetimeIndex, b: pd.DatetimeIndex, ph: pd.DataFrame) -> float:
    """Seconds of the intervals ``[a, b)`` inside the phases ``ph`` (start, end)."""
    if ph.empty:
        return 0.0
    x0 = a.to_numpy()[:, None]
    x1 = b.to_numpy()[:, None]
    p0 = pd.to_datetime(ph["start"]).to_numpy()[None, :]
    p1 = pd.to_datetime(ph["end"]).to_numpy()[None, :]
    lo = np.maximum(x0, p0)
    hi = np.minimum(x1, p1)
    d = (hi - lo) / np.timedelta64(1, "s")
    return float(np.clip(d, 0, None).sum())


CYCLES_COLLIDE = Rule(
    code="CYCLES-COLLIDE-1",
    topic="cycles-collide",
    title="The job's I/O bursts fell in the system's busy periods",
    sql="",
    compute=_collide_rows,
    measure="collide_share",
    warn_at="collide_share",
    high_at="collide_share_high",
    params=(
        Param(
            "busy_share",
            0.33,
            "share",
            "Carns et al. 2011 section 4: 'for 98% of the time, the I/O system was "
            "utilized at less than 33% of peak': at or above a third of the observed peak "
            "the system is busy",
        ),
        Param(
            "collide_share",
            0.5,
            "share",
            "iochar: most of the job's I/O-burst time in busy periods, 25 times what chance "
            "gives where the system is busy 2% of the time (Carns et al. 2011 section 4)",
        ),
        Param(
            "collide_share_high",
            0.9,
            "share",
            "iochar: nearly all of the job's I/O-burst time in busy periods",
        ),
        _BURST_GAP,
    ),
    recommendation="The job did its I/O when the storage was busiest: move its I/O phases "
    "(checkpoint times, staging) to idle periods, or stagger them with the jobs it "
    "collides with. The counters include the job's own I/O: compare busy_overlap_s with the "
    "job's share of the system's bytes before blaming other jobs.",
    reference=f"{_CARNS}, section 4 (Fig. 7, Table III); iochar.analyze.bursts",
    needs="dated per-operation records of the job and throughput counters covering its run",
)

#: The rules of this module, in report order.
RULES: tuple[Rule, ...] = (
    CHECKPOINT_INTERVAL,
    CHECKPOINT_OVERHEAD,
    VARIANCE,
    FSU_SUBOPTIMAL,
    CYCLES_COLLIDE,
)
