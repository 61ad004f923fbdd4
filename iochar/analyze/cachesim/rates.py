"""The disk's data rate over time, from the log of its transfers (Miller & Katz Figs. 6-7).

Each request moves its bytes evenly over its transfer time (after positioning); the
bytes of a bin are the integral of the summed rates over the bin, computed at once for
all requests from the sorted rate changes (no per-request loop).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["cumulative", "rate_table"]


def cumulative(t0: np.ndarray, t1: np.ndarray, nbytes: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Bytes moved by time ``at`` when each request moves ``nbytes`` evenly over [t0, t1].

    Parameters
    ----------
    t0, t1 : numpy.ndarray
        Transfer start and end [s].
    nbytes : numpy.ndarray
        Bytes of each request.
    at : numpy.ndarray
        Times to evaluate, increasing [s].

    Returns
    -------
    numpy.ndarray
        Bytes moved by each time [bytes].

    Examples
    --------
    >>> cumulative(np.array([0.0]), np.array([2.0]), np.array([10]), np.array([0.0, 1.0, 5.0]))
    array([ 0.,  5., 10.])
    """
    if len(t0) == 0:
        return np.zeros(len(at))
    dur = t1 - t0
    inst = dur <= 0  # instantaneous: a step at t0
    rate = np.where(inst, 0.0, nbytes / np.where(inst, 1.0, dur))
    times = np.concatenate((t0, t1))
    delta = np.concatenate((rate, -rate))
    order = np.argsort(times, kind="stable")
    times, delta = times[order], delta[order]
    level = np.cumsum(delta)  # summed rate after each change
    area = np.concatenate(([0.0], np.cumsum(level[:-1] * np.diff(times))))
    out = np.interp(at, times, area, left=0.0, right=area[-1])
    if inst.any():  # zero-length transfers: a step of their bytes at t0
        o = np.argsort(t0[inst], kind="stable")
        steps = t0[inst][o]
        csum = np.concatenate(([0.0], np.cumsum(nbytes[inst][o])))
        out = out + csum[np.searchsorted(steps, at, side="right")]
    return out


def rate_table(log: dict[str, np.ndarray], bin_s: float, end_s: float) -> pd.DataFrame:
    """Disk data rate per bin from 0 to ``end_s``.

    Parameters
    ----------
    log : dict
        :meth:`iochar.analyze.cachesim.disk.Disk.log`.
    bin_s : float
        Bin width [s].
    end_s : float
        End of the run [s]; transfers after it (write-behind still draining) extend it.

    Returns
    -------
    pandas.DataFrame
        ``t_s`` (bin start [s]), ``read_bps``, ``write_bps``, ``bps`` [bytes/s].
    """
    last = float(log["t1"].max()) if len(log["t1"]) else 0.0
    nb = max(1, math.ceil(max(end_s, last) / bin_s - 1e-9))
    edges = np.arange(nb + 1) * bin_s
    out = {"t_s": edges[:-1]}
    w = log["write"]
    for name, sel in (("read_bps", ~w), ("write_bps", w)):
        c = cumulative(log["t0"][sel], log["t1"][sel], log["nbytes"][sel].astype(float), edges)
        out[name] = np.diff(c) / bin_s
    out["bps"] = out["read_bps"] + out["write_bps"]
    return pd.DataFrame(out)
