"""Interference between concurrent I/O jobs (Kwan & Reed section 4.3, Table 1).

Kwan & Reed ran two jobs at once -- two readers of the same file, two readers of
different files, a reader and a writer, two writers (their Table 1) -- and compared each
job's data rate with the rate it has alone: a second reader of the same file was served
from the file cache (no loss), a writer cut a reader's rate by about thirty percent and a
reader cut a writer's by over twenty (section 4.3, Fig. 4).

- :func:`fio_pairs` reads such experiments from fio's JSON
  (:func:`iochar.capture.capacity.run_interference`): per case and role, the mean rate of
  the repetitions, the mean rate of the same operation alone, and the degradation
  ``100 x (1 - together / alone)`` [%] with a 95 % Welch interval of the difference of
  the means, as % of the alone mean.
- :func:`observed` asks the same of observed data: for each job (``jobs`` windows), the
  share of its window that other jobs with I/O overlap; a job is *overlapped* at or
  above ``min_overlap`` of its window, *alone* at or below ``alone_max`` (default: no
  overlap). Per application, its rate (bytes / runtime) when overlapped against alone,
  with the same interval. This is an
  observational comparison: overlapped runs may differ in input, node count, time of
  day or file-system load from outside the database (confounding), so it says that
  rates differ, not that the other jobs caused it.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
from scipy import stats

from iochar.analyze.efficiency import LAYERED_MODULES
from iochar.result import Table

__all__ = ["CAUTION", "degradation", "fio_pairs", "observed"]

#: Said with every observed comparison.
CAUTION = (
    "observational: overlapped and alone runs may differ in input size, node count, "
    "time of day or load from outside this database; a difference is not proof that "
    "the overlapping jobs caused it"
)
_NAME = re.compile(r"^(?P<case>[a-z_]+)\.(?P<role>[ab])\.r(?P<rep>\d+)$")


def degradation(together, alone, confidence: float = 0.95) -> dict:
    """Slowdown of ``together`` against ``alone`` with a Welch interval.

    Parameters
    ----------
    together, alone : array-like of float
        Rates of the repetitions [bytes/s].
    confidence : float, default 0.95
        Two-sided confidence.

    Returns
    -------
    dict
        ``together``, ``alone`` (means), ``degradation_pct`` = 100 (1 - together/alone),
        ``deg_lo``, ``deg_hi`` (Welch interval of alone - together, as % of the alone
        mean; NaN with fewer than two values on a side), ``p_value`` (Welch t-test).
    """
    x = np.asarray(together, float)
    y = np.asarray(alone, float)
    mx, my = float(x.mean()), float(y.mean())
    out = {"together": mx, "alone": my, "degradation_pct": 100.0 * (1 - mx / my)}
    if len(x) < 2 or len(y) < 2:
        return out | {"deg_lo": math.nan, "deg_hi": math.nan, "p_value": math.nan}
    vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    se = math.sqrt(vx + vy)
    if se == 0:
        d = my - mx
        return out | {"deg_lo": 100 * d / my, "deg_hi": 100 * d / my, "p_value": math.nan}
    df = (vx + vy) ** 2 / (vx**2 / (len(x) - 1) + vy**2 / (len(y) - 1))
    h = float(stats.t.ppf((1 + confidence) / 2, df)) * se
    d = my - mx
    p = float(stats.ttest_ind(y, x, equal_var=False).pvalue)
    return out | {"deg_lo": 100 * (d - h) / my, "deg_hi": 100 * (d + h) / my, "p_value": p}


def fio_pairs(src, *, confidence: float = 0.95) -> Table:
    """Kwan & Reed Table 1 cases from fio JSON (module docstring).

    Parameters
    ----------
    src : str, os.PathLike or bytes
        fio JSON of :func:`iochar.capture.capacity.run_interference` (job names
        ``<case>.<a|b>.r<rep>``, alone runs ``alone_read`` / ``alone_write``).
    confidence : float, default 0.95
        Two-sided confidence.

    Returns
    -------
    iochar.result.Table
        One row per case and role: ``case``, ``role``, ``op``, ``reps``, and the
        columns of :func:`degradation`.
    """
    from iochar.load.bench import read_fio_json

    runs = read_fio_json(src, combine_groups=False)
    m = runs["job"].str.extract(_NAME)
    runs = pd.concat([runs, m], axis=1).dropna(subset=["case"])
    runs["rate"] = runs["bytes"] / runs["seconds"]
    alone = {
        op: g["rate"].to_numpy()
        for op, g in runs[runs["case"].str.startswith("alone")].groupby("op")
    }
    rows = []
    for (case, role, op), g in runs[~runs["case"].str.startswith("alone")].groupby(
        ["case", "role", "op"], sort=False
    ):
        if op not in alone:
            continue
        rows.append(
            {"case": case, "role": role, "op": op, "reps": len(g)}
            | degradation(g["rate"].to_numpy(), alone[op], confidence)
        )
    out = pd.DataFrame(rows)
    return Table(out, evidence={"runs": len(runs)}, params={"confidence": confidence})


_JOBS_SQL = (
    "SELECT j.job_id, coalesce(j.app, '') AS app, j.start_ts, j.end_ts, j.runtime_s,"
    " coalesce(sum(f.bytes_read), 0) + coalesce(sum(f.bytes_written), 0) AS bytes"
    " FROM jobs j JOIN file_stats f USING (job_id)"
    " WHERE j.start_ts IS NOT NULL AND j.runtime_s > 0"
    " AND NOT list_contains($layered, f.module) GROUP BY ALL"
)


def observed(
    db, *, min_overlap: float = 0.5, alone_max: float = 0.0, confidence: float = 0.95
) -> Table:
    """A job's rate when other jobs' I/O overlaps it vs when it runs alone.

    Parameters
    ----------
    db : iochar.store.Store or pandas.DataFrame
        A store with ``jobs`` and ``file_stats``, or rows with ``job_id``, ``app``,
        ``start_ts``, ``end_ts`` (or ``runtime_s``) and ``bytes``.
    min_overlap : float, default 0.5
        Share of a job's window other jobs must cover for it to count as overlapped.
    alone_max : float, default 0.0
        Largest share of its window other jobs may cover for a job to count as alone
        (0: truly alone; raise it only where every run overlaps something, and say so).
    confidence : float, default 0.95
        Two-sided confidence.

    Returns
    -------
    iochar.result.Table
        One row per application with both kinds of runs: ``app``, ``n_overlapped``,
        ``n_alone`` and the columns of :func:`degradation` (rates bytes / runtime);
        ``evidence["caution"]`` is :data:`CAUTION`; ``evidence["jobs"]`` holds each job's
        ``overlap_share``.
    """
    j = (
        db.copy()
        if isinstance(db, pd.DataFrame)
        else db.sql(_JOBS_SQL, {"layered": list(LAYERED_MODULES)}).df()
    )
    j = j[j["bytes"] > 0].reset_index(drop=True)
    t0 = pd.to_datetime(j["start_ts"]).astype("int64").to_numpy() / 1e9
    if "end_ts" in j and j["end_ts"].notna().all():
        t1 = pd.to_datetime(j["end_ts"]).astype("int64").to_numpy() / 1e9
    else:
        t1 = t0 + j["runtime_s"].to_numpy(float)
    dur = np.maximum(t1 - t0, 1e-9)
    share = np.zeros(len(j))
    for i in range(len(j)):
        lo, hi = np.maximum(t0, t0[i]), np.minimum(t1, t1[i])
        seg = np.c_[lo, hi][(hi > lo) & (np.arange(len(j)) != i)]
        if len(seg):  # union of the overlapping windows
            seg = seg[np.argsort(seg[:, 0])]
            tot, cur_lo, cur_hi = 0.0, seg[0, 0], seg[0, 1]
            for a, b in seg[1:]:
                if a > cur_hi:
                    tot, cur_lo, cur_hi = tot + cur_hi - cur_lo, a, b
                else:
                    cur_hi = max(cur_hi, b)
            share[i] = (tot + cur_hi - cur_lo) / dur[i]
    j["overlap_share"] = share
    j["rate"] = j["bytes"] / dur
    rows = []
    for app, g in j.groupby("app", sort=True):
        ov = g[g["overlap_share"] >= min_overlap]["rate"]
        al = g[g["overlap_share"] <= alone_max]["rate"]
        if len(ov) and len(al):
            rows.append(
                {"app": app, "n_overlapped": len(ov), "n_alone": len(al)}
                | degradation(ov.to_numpy(), al.to_numpy(), confidence)
            )
    out = pd.DataFrame(rows)
    return Table(
        out,
        evidence={"caution": CAUTION, "jobs": j[["job_id", "app", "overlap_share", "rate"]]},
        params={"min_overlap": min_overlap, "alone_max": alone_max, "confidence": confidence},
        sql="" if isinstance(db, pd.DataFrame) else _JOBS_SQL,
    )
