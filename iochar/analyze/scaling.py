"""Rate against request size and scale, with 95 % intervals and % of peak (Kwan & Reed).

Kwan & Reed (1994, section 3) measure data rates over request sizes and partition sizes,
every point shown with a ninety-five percent confidence interval, and compare the
observed peak with a theoretical one computed from the hardware: "1.8 megabytes/second
per disk x 56 disks per file partition, or 100.8 megabytes/second" (section 4.1), so
the fixed-format writes reach 32/100.8 = 30 % of peak.

:func:`sweep` gives one row per level, op, access, request size and process count
(fio ``numjobs``, IOR ``tasks``; both in the ``capacity`` table) with the mean rate of
the repetitions, its Student-t 95 % interval (:func:`iochar.analyze.capacity.t_interval`)
and the percentage of a peak: the user's theoretical peak (:func:`theoretical_peak`,
disks x per-disk rate) or, without one, the highest mean rate of the sweep (the
calibrated peak). :func:`job_scaling` asks the same of observed jobs: Darshan job
populations where ``nprocs`` varies, rate per job = bytes / (I/O time / nprocs).
"""

from __future__ import annotations

import pandas as pd

from iochar.analyze.capacity import capacity, t_interval
from iochar.analyze.efficiency import LAYERED_MODULES
from iochar.errors import ParameterError
from iochar.result import Table

__all__ = ["job_scaling", "sweep", "theoretical_peak"]


def theoretical_peak(disks: int, per_disk_rate: float) -> float:
    """Theoretical peak = disks x per-disk rate (Kwan & Reed section 4.1).

    Parameters
    ----------
    disks : int
        Data disks the file is spread over.
    per_disk_rate : float
        Sustained rate of one disk [bytes/s].

    Returns
    -------
    float
        [bytes/s]; 56 x 1.8e6 = 100.8e6 as in the paper.
    """
    if not isinstance(disks, int) or disks < 1:
        raise ParameterError("disks", "theoretical_peak", "an int >= 1", disks)
    if not per_disk_rate > 0:
        raise ParameterError("per_disk_rate", "theoretical_peak", "a rate > 0", per_disk_rate)
    return disks * float(per_disk_rate)


def sweep(db, *, peak: float | None = None, confidence: float = 0.95) -> Table:
    """Rate vs request size and process count with CIs and % of peak.

    Parameters
    ----------
    db : iochar.store.Store or pandas.DataFrame
        A store with a ``capacity`` table or its rows.
    peak : float, optional
        Theoretical peak [bytes/s] (:func:`theoretical_peak`); default the highest mean
        rate of each level and op (the calibrated peak).
    confidence : float, default 0.95
        Two-sided confidence of the interval.

    Returns
    -------
    iochar.result.Table
        :func:`iochar.analyze.capacity.capacity` columns plus ``peak`` [bytes/s],
        ``pct_peak``, ``pct_lo``, ``pct_hi`` (the interval as % of peak) and
        ``peak_kind`` (``theoretical`` or ``calibrated``).
    """
    if peak is not None and not peak > 0:
        raise ParameterError("peak", "sweep", "a rate > 0 [bytes/s]", peak)
    cap = capacity(db, confidence=confidence)
    out = pd.DataFrame(cap)
    if peak is None:
        out["peak"] = out.groupby(["level", "op"])["rate"].transform("max")
        out["peak_kind"] = "calibrated"
    else:
        out["peak"] = float(peak)
        out["peak_kind"] = "theoretical"
    for a, b in (("pct_peak", "rate"), ("pct_lo", "ci_lo"), ("pct_hi", "ci_hi")):
        out[a] = 100.0 * out[b] / out["peak"]
    return Table(
        out,
        evidence={**cap.evidence, "peak": peak},
        params={"peak": peak, "confidence": confidence},
        sql=cap.sql,
    )


_JOBS_SQL = (
    "SELECT j.job_id, coalesce(j.app, '') AS app, j.nprocs,"
    " sum(f.bytes_read) + sum(f.bytes_written) AS bytes,"
    " sum(f.read_time) + sum(f.write_time) AS io_time"
    " FROM jobs j JOIN file_stats f USING (job_id)"
    " WHERE j.nprocs > 0 AND NOT list_contains($layered, f.module)"
    " GROUP BY ALL HAVING sum(f.read_time) + sum(f.write_time) > 0"
)


def job_scaling(db, *, confidence: float = 0.95) -> Table:
    """Observed rate per job against its process count, per application, with CIs.

    Parameters
    ----------
    db : iochar.store.Store
        A store with ``jobs`` and ``file_stats`` (Darshan logs).
    confidence : float, default 0.95
        Two-sided confidence of the interval of the mean.

    Returns
    -------
    iochar.result.Table
        One row per ``app`` and ``nprocs``: ``jobs``, ``rate`` (mean over jobs of
        bytes / (I/O time / nprocs)) [bytes/s], ``rate_sd``, ``ci_lo``, ``ci_hi``.
    """
    j = db.sql(_JOBS_SQL, {"layered": list(LAYERED_MODULES)}).df()
    rows = []
    if len(j):
        j["rate"] = j["bytes"] / (j["io_time"] / j["nprocs"])
        for (app, n), g in j.groupby(["app", "nprocs"], sort=True):
            m, sd, lo, hi = t_interval(g["rate"], confidence)
            rows.append(
                {"app": app, "nprocs": int(n), "jobs": len(g), "rate": m}
                | {"rate_sd": sd, "ci_lo": lo, "ci_hi": hi}
            )
    cols = ["app", "nprocs", "jobs", "rate", "rate_sd", "ci_lo", "ci_hi"]
    out = pd.DataFrame(rows, columns=cols)
    return Table(out, evidence={"jobs": len(j)}, params={"confidence": confidence}, sql=_JOBS_SQL)
