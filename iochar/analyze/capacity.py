"""I/O system capacity per path level, with its spread (Méndez et al.; Kwan & Reed).

Méndez et al. (section 2.1, Fig. 2(a)) characterize each level of the I/O path by
benchmark sweeps over operation, access mode and block size; Kwan & Reed (section 3)
repeat each measurement and give it a 95 % confidence interval. The runs live in the
``capacity`` table, one row per repetition (:mod:`iochar.load.capacity`); this module
stores them through the store (:func:`store_capacity`), summarizes them
(:func:`capacity`: mean, standard deviation, Student-t 95 % interval of the mean,
minimum and maximum per level, op, access, size and process count) and reads a
capacity at any request size (:func:`capacity_at`: linear interpolation of the rate
in log2 of the size between the two measured sizes around it, Méndez's search of
Fig. 5(b) made continuous; outside the measured range the nearest size, flagged).

Units: bytes, seconds, bytes/s.
"""

from __future__ import annotations

import io
import math
import os

import numpy as np
import pandas as pd

from iochar.errors import ParameterError
from iochar.load.capacity import LEVELS, CapacityLoader, capacity_document
from iochar.result import Table

__all__ = ["LEVELS", "capacity", "capacity_at", "store_capacity", "t_interval"]

_KEYS = ["level", "api", "op", "access", "size_bytes", "nprocs"]


def store_capacity(
    db,
    src,
    *,
    level: str | None = None,
    target: str | None = None,
    fstype: str | None = None,
):
    """Load benchmark output into the ``capacity`` table through the store.

    Parameters
    ----------
    db : iochar.store.Store
        Open for writing.
    src : str, os.PathLike or bytes
        A capacity document (:func:`iochar.load.capacity.capacity_document`, written by
        ``iochar calibrate --levels``), or fio JSON / IOR text from any machine, which is
        wrapped in one with ``level``, ``target`` and ``fstype``.
    level : str, optional
        One of :data:`LEVELS` for raw fio/IOR output; None: the rule of
        :mod:`iochar.load.capacity` (IOR with an I/O library: library; IOR POSIX: mount;
        fio direct: device; fio buffered: local_fs).
    target : str, optional
        What was measured (directory, mount point).
    fstype : str, optional
        Its file system type.

    Returns
    -------
    iochar.store.LoadResult
        What landed (one transaction: all rows or none).
    """
    from iochar.load import sniff_bench

    if level is not None and level not in LEVELS:
        raise ParameterError("level", "store_capacity", f"one of {LEVELS}", level)
    data = bytes(src) if isinstance(src, (bytes, bytearray)) else None
    name = "<buffer>" if data is not None else os.fspath(src)
    if data is None:
        with open(name, "rb") as fh:
            data = fh.read()
    if not CapacityLoader().sniff(data[:64]):
        kind = sniff_bench(data if name == "<buffer>" else name)  # errors name the file
        text = data.decode("utf-8")
        data = capacity_document(
            [{"kind": kind, "name": os.path.basename(name), "text": text}],
            level=level,
            target=target,
            fstype=fstype,
        )
    buf = io.BytesIO(data)
    buf.name = name  # the store records where it came from
    return db.load(buf, kind=CapacityLoader.kind)


def t_interval(values, confidence: float = 0.95) -> tuple[float, float, float, float]:
    """Mean, standard deviation and Student-t interval of the mean (Kwan & Reed §3).

    Parameters
    ----------
    values : array-like of float
        Repetitions.
    confidence : float, default 0.95
        Two-sided confidence.

    Returns
    -------
    tuple of float
        ``(mean, sd, lo, hi)``: ``mean ± t_{(1+c)/2, n-1} sd / sqrt(n)``; sd, lo and hi
        are NaN for fewer than two values.
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    n = x.size
    if n == 0:
        return (math.nan,) * 4
    m = float(x.mean())
    if n < 2:
        return m, math.nan, math.nan, math.nan
    sd = float(x.std(ddof=1))
    from scipy import stats  # 0.2-0.4 s to import: only when an interval is asked for

    h = float(stats.t.ppf((1 + confidence) / 2, n - 1)) * sd / math.sqrt(n)
    return m, sd, m - h, m + h


def _summary(runs: pd.DataFrame, keys: list[str], confidence: float) -> pd.DataFrame:
    rows = []
    for key, g in runs.groupby(keys, sort=True, dropna=False):
        m, sd, lo, hi = t_interval(g["rate"], confidence)
        rows.append(
            dict(
                zip(keys, key, strict=True),
                rate=m,
                rate_sd=sd,
                ci_lo=lo,
                ci_hi=hi,
                rate_min=float(g["rate"].min()),
                rate_max=float(g["rate"].max()),
                n=len(g),
            )
        )
    cols = keys + ["rate", "rate_sd", "ci_lo", "ci_hi", "rate_min", "rate_max", "n"]
    return pd.DataFrame(rows, columns=cols)


_SQL = (
    "SELECT level, coalesce(api, 'POSIX') AS api, op, access, size_bytes, nprocs, rep, rate,"
    " target, source_id FROM capacity ORDER BY level, op, access, size_bytes, nprocs, rep"
)


def capacity(db, *, confidence: float = 0.95) -> Table:
    """The capacity table summarized: one row per level, api, op, access, size, nprocs.

    Parameters
    ----------
    db : iochar.store.Store or pandas.DataFrame
        A store with a ``capacity`` table, or its rows (columns of that table).
    confidence : float, default 0.95
        Confidence of the interval of the mean (Kwan & Reed use 95 %).

    Returns
    -------
    iochar.result.Table
        ``level, api, op, access, size_bytes, nprocs`` and ``rate`` (mean of the
        repetitions) [bytes/s], ``rate_sd``, ``ci_lo``, ``ci_hi``, ``rate_min``,
        ``rate_max`` [bytes/s], ``n`` (repetitions).
    """
    if not (isinstance(confidence, float) and 0 < confidence < 1):
        raise ParameterError("confidence", "capacity", "a float in (0, 1)", confidence)
    if isinstance(db, pd.DataFrame):
        runs, sql = db.copy(), ""
        runs["api"] = runs.get("api", pd.Series("POSIX", index=runs.index)).fillna("POSIX")
    else:
        runs, sql = db.sql(_SQL).df(), _SQL
    out = _summary(runs, _KEYS, confidence)
    return Table(
        out,
        evidence={
            "runs": len(runs),
            "levels": sorted(out["level"].unique().tolist()),
            "confidence": confidence,
        },
        params={"confidence": confidence},
        sql=sql,
    )


def _interp(sizes: np.ndarray, vals: np.ndarray, size: float) -> tuple[float, bool]:
    x = np.log2(sizes)
    xs = math.log2(size)
    if xs < x[0] or xs > x[-1]:
        return float(vals[0] if xs < x[0] else vals[-1]), True
    return float(np.interp(xs, x, vals)), False


def capacity_at(
    cap: pd.DataFrame,
    *,
    level: str,
    op: str,
    access: str,
    size_bytes: float,
    nprocs: int = 1,
    api: str | None = None,
) -> dict | None:
    """The capacity of one level for one request, interpolated in log2 size.

    Méndez et al. Fig. 5(b) search the characterized values for the row with the
    application's operation, access mode and block size. Here: the rows of ``level``
    and ``op`` with the same ``access`` (else the other access mode, flagged), the
    process count nearest in log2 to ``nprocs``, and the rate, its standard deviation,
    minimum and maximum interpolated linearly in log2 of the size between the two
    measured sizes around ``size_bytes`` (the nearest measured size outside them, with
    ``extrapolated`` True).

    Parameters
    ----------
    cap : pandas.DataFrame
        :func:`capacity` output.
    level, op, access : str
        Level of the I/O path, ``read``/``write``, ``sequential``/``random``.
    size_bytes : float
        Request size [bytes], > 0.
    nprocs : int, default 1
        Processes of the phase.
    api : str, optional
        Interface (``POSIX``, ``MPIIO``, ``HDF5``); None: any.

    Returns
    -------
    dict or None
        ``rate``, ``rate_sd``, ``rate_min``, ``rate_max`` [bytes/s], ``nprocs`` and
        ``access`` used, ``extrapolated``, ``access_substituted``, ``n`` (fewest
        repetitions of the points used); None when the level has no rows for ``op``.
    """
    if not size_bytes or not size_bytes > 0:
        raise ParameterError("size_bytes", "capacity_at", "a number > 0", size_bytes)
    c = cap[(cap["level"] == level) & (cap["op"] == op)]
    if api is not None and (c["api"] == api).any():
        c = c[c["api"] == api]
    if c.empty:
        return None
    sub = c["access"] != access
    if (c["access"] == access).any():
        c, sub = c[c["access"] == access], False
    else:
        sub = bool(sub.any())
    np_avail = np.array(sorted(c["nprocs"].unique()), dtype=float)
    best = int(np_avail[np.argmin(np.abs(np.log2(np_avail) - math.log2(max(nprocs, 1))))])
    c = c[c["nprocs"] == best].sort_values("size_bytes")
    sizes = c["size_bytes"].to_numpy(float)
    out = {"nprocs": best, "access": str(c["access"].iloc[0]), "access_substituted": sub}
    for col in ("rate", "rate_sd", "rate_min", "rate_max"):
        out[col], ext = _interp(sizes, c[col].to_numpy(float), float(size_bytes))
    out["extrapolated"] = ext
    out["n"] = int(c["n"].min())
    return out
