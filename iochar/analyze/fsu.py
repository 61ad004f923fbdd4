"""File System Utilization (FSU): Uselton & Wright (2013).

Uselton and Wright model the time one disk I/O takes as a fixed latency plus
a time per byte (their Eq. 1), separately for reads and writes (Eq. 3)::

    t = a0 + a1 * b          (w0, w1 for writes; r0, r1 for reads)

They fit the two coefficients per operation from benchmark runs at several
transfer sizes by solving ``X w = 1`` in least squares (Eq. 4), where each
run contributes the row ``[N/T, N/T * b]`` (observed IOPS and observed
bytes/s at transfer size ``b``); Table I lists the result. With the
coefficients, the time an arbitrary pattern of I/Os needs (Eq. 5), its
achievable bandwidth (Eq. 6) and the **File System Utilization** of an
observation interval of length ``T`` follow (Eq. 7)::

    FSU = 100 / T * sum_b ( N_b^W (w0 + w1 b) + N_b^R (r0 + r1 b) )   [%]

where ``N_b`` counts the disk I/Os of size ``b`` in the interval, read from
Lustre's ``brw_stats`` "disk I/O size" histogram (``size_hist``).

This module gives:

- :class:`CostModel` / :func:`fit_cost_model` -- the Eq. 4 fit, optionally
  robust (Huber weights by iteratively reweighted least squares), with
  coefficients in Table I's form and goodness of fit;
  :func:`table_i_model` -- the paper's own Table I coefficients;
  :func:`cost_model` -- either of these, as a notebook's ``calibration``
  parameter names it;
- :func:`pattern_time`, :func:`achievable_bandwidth` -- Eqs. 5 and 6;
  :func:`compare_bandwidth` -- Eq. 6 against measured bandwidth per
  transfer size (their Fig. 7);
- :func:`fsu_series` -- Eq. 7 per target per interval from ``size_hist``,
  one DuckDB aggregate with the coefficients as bound parameters;
  :func:`fsu_filesystem` -- the file-system-wide FSU (the average over
  targets, as in the paper's section V);
- :func:`fsu_histogram` -- their Fig. 11 (2% bins from 0 to 200%);
- :func:`load_table` -- their Tables II and III (idle / moderate / busy
  observations with the share of optimal and sub-optimal I/Os);
- :func:`load_ratio` -- FSU-based load against bandwidth-based load (the
  "four times as busy" of the abstract); :func:`load_ratio_or_empty` -- the
  same, with no rows where no interval was used;
- :func:`size_histogram` -- their Fig. 12 (I/O counts per size bin and op).

Conventions
-----------
- A histogram bin stands for I/Os of its labelled size ``b`` (``size_bytes``,
  the bin's lower edge), as in the paper: an I/O in the 4K bin costs
  ``a0 + a1 * 4096``.
- The bandwidth-based load of an interval is the model's time per byte
  times the bytes moved, ``100 / T * (r1 * read_bytes + w1 * write_bytes)``:
  the observed bandwidth over the peak bandwidth ``1/a1`` (their Eq. 2), so
  FSU minus the bandwidth load is exactly the latency share of Eq. 7.
- Intervals whose counters reset or wrapped, or that span a gap, are skipped
  by default (their counts are lower bounds, or averages over an outage) and
  kept in the result with ``fsu_pct`` NULL and the ``reason``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from iochar._validation import check_choice, check_int, check_real, parse_time
from iochar.errors import IocharError, ParameterError, ReportError
from iochar.result import Table, evidence_of

__all__ = [
    "DISK_IO_SIZE",
    "TABLE_I",
    "OPS",
    "CostModel",
    "fit_cost_model",
    "table_i_model",
    "cost_model",
    "pattern_time",
    "achievable_bandwidth",
    "compare_bandwidth",
    "fsu_series",
    "fsu_filesystem",
    "filesystem_of",
    "fsu_by_filesystem",
    "widest_filesystem",
    "compare_calibration",
    "fsu_histogram",
    "load_table",
    "load_ratio",
    "load_ratio_or_empty",
    "size_histogram",
]

#: The ``size_hist.section`` holding disk I/O sizes in bytes (Lustre ``brw_stats``).
DISK_IO_SIZE = "disk I/O size"
#: The operations the model covers, in the paper's order.
OPS = ("write", "read")
#: Uselton & Wright (2013), Table I: ``op -> (latency a0 [s], time per byte a1 [s/byte])``.
TABLE_I: dict[str, tuple[float, float]] = {
    "write": (1.04e-03, 1.73e-09),
    "read": (8.02e-04, 1.23e-09),
}
#: Columns a calibration table must have (see :mod:`iochar.calibrate`).
BENCH_COLUMNS = ("op", "size_bytes", "ios", "seconds")
#: ``size_hist.quality`` labels and their bit in the per-interval mask.
QUALITY_BITS = {"ok": 0, "reset": 1, "wrap": 2, "gap": 4, "gap_reset": 8, "gap_wrap": 16}
_OTHER_BIT = 32
#: Skipped by default: counts that are lower bounds, or averages over an outage.
DEFAULT_EXCLUDE = ("reset", "wrap", "gap", "gap_reset", "gap_wrap")
_REASONS = {
    "reset": "counter reset: counts since the restart only, over an unknown part of the interval",
    "wrap": "counter wrap: counts are a lower bound",
    "gap": "gap: the interval spans an outage, its counts are an average over it",
    "gap_reset": "gap with a counter reset: counts are a lower bound over a long interval",
    "gap_wrap": "gap with a counter wrap: counts are a lower bound over a long interval",
}
_MIB = float(1 << 20)


# --------------------------------------------------------------------------- validation


def _check_model(model, caller: str) -> CostModel:
    if not isinstance(model, CostModel) or not getattr(model, "a0_", None):
        raise ParameterError(
            "model",
            caller,
            "a fitted CostModel (fit_cost_model(bench) or table_i_model())",
            type(model).__name__ if not isinstance(model, CostModel) else "an unfitted CostModel",
        )
    return model


def _need_both_ops(model: CostModel, caller: str) -> None:
    missing = [op for op in OPS if op not in model.a0_]
    if missing:
        raise ParameterError(
            "model",
            caller,
            "a model with coefficients for both 'read' and 'write' (Eq. 7 sums both)",
            f"a model without {missing}",
        )


def _str_list(value, name: str, caller: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise ParameterError(name, caller, "a sequence of str or None", value)
    return list(value)


# --------------------------------------------------------------------------- the model


class CostModel:
    """Per-operation cost of one I/O, ``t = a0 + a1 * b`` (Uselton & Wright Eqs. 1, 3, 4).

    ``fit`` solves Eq. 4, ``X w = 1`` with rows ``[N/T, N/T * b]``, in least
    squares for each operation. A row's residual ``X_i w - 1`` equals
    ``t_pred / t_obs - 1``: the fit minimises relative errors of the time
    per I/O, so small and large transfers weigh alike.

    Parameters
    ----------
    robust : {None, "huber"}, default None
        None: ordinary least squares on Eq. 4 (the paper). ``"huber"``:
        iteratively reweighted least squares with Huber weights on the
        Eq. 4 residuals scaled by their median absolute value / 0.6745;
        rows with ``|r / scale| > epsilon`` get weight ``epsilon / |r / scale|``.
        Huber bounds a run's residual but not its leverage (a 4 MiB run served
        10x too fast from cache drags it to a flat model), so the robust fit
        then rejects runs past ``cutoff`` and refits the rest by least squares
        (reweighted least squares, Rousseeuw & Leroy 1987, ch. 2), starting once
        from the Huber fit and once from the least-median-of-squares fit, and
        keeps the tighter. Down-weighting alone is no verdict: about 18% of
        Gaussian errors sit past 1.35 scale units, and the old rule "weight < 1
        is an outlier" flagged 13 of 66 clean runs.
    epsilon : float, default 1.35
        Huber threshold in robust scale units (1.35 keeps 95% efficiency for
        Gaussian errors). Must be > 1.
    cutoff : float, default 2.5
        Robust fit only: a run is an outlier when its standardized residual
        ``|r - median(r)| / s`` at the final coefficients exceeds ``cutoff``,
        with ``s = 1.4826 (1 + 5 / (n - 2)) MAD`` of that operation's n
        residuals (:meth:`_standardized`). 2.5 is the
        cutoff of Rousseeuw & Leroy (1987, *Robust Regression and Outlier
        Detection*, ch. 2) for standardized residuals of a robust fit: about
        1% of Gaussian errors pass it, while a run served from cache (the
        paper's Fig. 2) or slowed by interference lands far beyond it.
    max_iter : int, default 100
        Iterations of the robust fit.
    positive : bool, default True
        Keep both coefficients >= 0: when the unconstrained solution has a
        negative coefficient, the best non-negative one (one coefficient at
        0) is used and ``notes_`` says so. A negative latency or time per
        byte has no physical meaning.

    Attributes
    ----------
    a0_ : dict of str to float
        Latency per operation. [s]
    a1_ : dict of str to float
        Time per byte per operation. [s/byte]
    r2_ : dict of str to float
        Coefficient of determination of the time per I/O (T/N against
        a0 + a1 b); NaN for a model from given coefficients.
    rmse_rel_ : dict of str to float
        Root mean square of the Eq. 4 residuals (relative error of the
        time per I/O).
    n_samples_ : dict of str to int
        Benchmark rows used per operation.
    outliers_ : numpy.ndarray of bool
        Per input row (in the order of ``residuals_``): standardized residual
        beyond ``cutoff`` in the robust fit. All False for ordinary least
        squares.
    residuals_ : pandas.DataFrame
        One row per benchmark row: ``op``, ``size_bytes``, ``ios``,
        ``seconds``, ``s_per_io`` (observed T/N [s]), ``pred_s_per_io``
        [s], ``residual`` (Eq. 4: pred/obs - 1), ``bw_bps`` (observed
        bytes/s), ``pred_bw_bps`` (Eq. 6 for that run [bytes/s]),
        ``bw_error`` (pred/obs - 1), ``weight`` (in the final fit: 0 for an
        outlier), ``std_residual`` (``|r - median(r)| / s`` per operation, see
        ``cutoff``; NaN for OLS) and ``outlier`` (``std_residual > cutoff``).
    notes_ : list of str
        What the fit had to do (constrained coefficients, non-convergence).
    source_ : str
        Where the coefficients come from.

    Notes
    -----
    A fitted model carries its evidence as every result does
    (:mod:`iochar.result`): ``params`` (the four parameters above),
    ``evidence`` (the fitted attributes by name, without the trailing ``_``
    scikit-learn puts on them) and ``sql`` (None).
    """

    def __init__(
        self,
        *,
        robust: str | None = None,
        epsilon: float = 1.35,
        cutoff: float = 2.5,
        max_iter: int = 100,
        positive: bool = True,
    ) -> None:
        self.robust = robust
        self.epsilon = epsilon
        self.cutoff = cutoff
        self.max_iter = max_iter
        self.positive = positive

    # ------------------------------------------------------------------ fitting
    def _validate(self) -> None:
        caller = "CostModel"
        check_choice(self.robust, "robust", caller, (None, "huber"), "None or 'huber'")
        check_real(self.epsilon, "epsilon", caller, "a number > 1", low=1.0, low_open=True)
        check_real(self.cutoff, "cutoff", caller, "a number > 0", low=0.0, low_open=True)
        check_int(self.max_iter, "max_iter", caller, "an int >= 1", low=1)
        if not isinstance(self.positive, bool):
            raise ParameterError("positive", caller, "a bool", self.positive)

    def fit(self, bench: pd.DataFrame) -> CostModel:
        """Fit ``a0`` and ``a1`` per operation by solving Eq. 4 in least squares.

        Parameters
        ----------
        bench : pandas.DataFrame
            A calibration table (:func:`iochar.calibrate.read_fio_json`,
            :func:`iochar.calibrate.read_ior` or your own): columns ``op``
            (``"read"`` or ``"write"``), ``size_bytes`` (transfer size
            [bytes]), ``ios`` (number of I/Os of the run) and ``seconds``
            (the run's time [s]). Each operation present needs at least two
            distinct sizes and (robust fit) three rows.

        Returns
        -------
        CostModel
            ``self``, fitted.

        Raises
        ------
        ParameterError
            Missing columns, an op other than read/write, a size, count or
            time that is not a positive finite number, or an operation with
            fewer than two distinct transfer sizes (Eq. 4 then has no unique
            solution).
        """
        self._validate()
        caller = "CostModel.fit"
        df = _bench_frame(bench, caller)
        a0, a1, r2, rmse, n = {}, {}, {}, {}, {}
        parts, notes = [], []
        for op in OPS:
            sub = df[df["op"] == op]
            if sub.empty:
                continue
            b = sub["size_bytes"].to_numpy(float)
            ios = sub["ios"].to_numpy(float)
            sec = sub["seconds"].to_numpy(float)
            distinct = np.unique(b)
            if len(distinct) < 2:
                raise ParameterError(
                    "bench",
                    caller,
                    "runs at two or more distinct transfer sizes per op (Eq. 4 has two unknowns)",
                    f"op {op!r}: {len(sub)} run(s), all at {distinct[0]:g} bytes",
                )
            if self.robust is not None and len(sub) < 3:
                raise ParameterError(
                    "bench",
                    caller,
                    "at least three runs per op for a robust fit",
                    f"op {op!r}: {len(sub)} runs",
                )
            rate = ios / sec  # observed IOPS, X[:, 0]
            X = np.column_stack([rate, rate * b])
            w, weight, note = self._solve(X)
            notes += [f"{op}: {m}" for m in note]
            a0[op], a1[op] = float(w[0]), float(w[1])
            t_obs = sec / ios
            t_pred = w[0] + w[1] * b
            resid = X @ w - 1.0
            ss_tot = float(((t_obs - t_obs.mean()) ** 2).sum())
            r2[op] = 1.0 - float(((t_obs - t_pred) ** 2).sum()) / ss_tot if ss_tot > 0 else 1.0
            rmse[op] = float(np.sqrt(np.mean(resid**2)))
            n[op] = int(len(sub))
            std = self._standardized(resid)
            bw = b / t_obs
            pred_bw = b / t_pred
            parts.append(
                pd.DataFrame(
                    {
                        "op": op,
                        "size_bytes": b,
                        "ios": ios,
                        "seconds": sec,
                        "s_per_io": t_obs,
                        "pred_s_per_io": t_pred,
                        "residual": resid,
                        "bw_bps": bw,
                        "pred_bw_bps": pred_bw,
                        "bw_error": pred_bw / bw - 1.0,
                        "weight": weight,
                        "std_residual": std,
                        "outlier": std > self.cutoff,
                    },
                    index=sub.index,
                )
            )
        if not parts:
            raise ParameterError("bench", caller, "rows with op 'read' or 'write'", "none")
        self.a0_, self.a1_, self.r2_, self.rmse_rel_, self.n_samples_ = a0, a1, r2, rmse, n
        self.residuals_ = pd.concat(parts).sort_index().reset_index(drop=True)
        self.outliers_ = self.residuals_["outlier"].to_numpy(bool)
        self.notes_ = notes
        self.source_ = "fit (Eq. 4, " + ("OLS" if self.robust is None else "Huber IRLS") + ")"
        return self

    def _standardized(self, resid: np.ndarray) -> np.ndarray:
        """``|r - median(r)| / s`` for a robust fit; NaN for OLS.

        ``s = 1.4826 (1 + 5 / (n - 2)) MAD``: the MAD scaled to the standard
        deviation of Gaussian errors, times Rousseeuw & Leroy's finite-sample
        factor for a fit of p = 2 coefficients to n runs (1987, ch. 2, the LMS scale), so
        a benchmark of six sizes does not call its spread outliers. An exact fit
        (MAD 0) has no outliers.
        """
        if self.robust is None:
            return np.full(len(resid), np.nan)
        dev = np.abs(resid - np.median(resid))
        n = len(resid)
        small = 1.0 + 5.0 / (n - 2) if n > 2 else math.inf  # finite-sample factor, p = 2
        mad = 1.4826 * small * float(np.median(dev))
        if mad <= 1e-15:
            return np.zeros(len(resid))
        return dev / mad

    def _solve(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Weights w of ``X w = 1``; returns (w, per-row weights, notes)."""
        y = np.ones(len(X))
        weight = np.ones(len(X))
        notes: list[str] = []
        w = self._lstsq(X, y, weight, notes)
        if self.robust == "huber":
            for _ in range(self.max_iter):
                r = X @ w - 1.0
                scale = float(np.median(np.abs(r))) / 0.6745
                if scale <= 1e-15:  # (nearly) exact fit: nothing to down-weight
                    break
                u = np.abs(r) / scale
                new = np.where(u <= self.epsilon, 1.0, self.epsilon / np.maximum(u, 1e-300))
                w_new = self._lstsq(X, y, new, [])
                done = np.allclose(w_new, w, rtol=1e-10, atol=0.0)
                w, weight = w_new, new
                if done:
                    break
            else:
                notes.append(f"Huber IRLS did not converge in {self.max_iter} iterations")
            # final weights at the final coefficients
            r = X @ w - 1.0
            scale = float(np.median(np.abs(r))) / 0.6745
            if scale > 1e-15:
                u = np.abs(r) / scale
                weight = np.where(u <= self.epsilon, 1.0, self.epsilon / np.maximum(u, 1e-300))
            w = self._lstsq(X, y, weight, notes)
            # Huber's weights bound a run's residual, not its leverage: reject outliers
            # from the Huber fit and from the LMS fit, keep the tighter of the two
            tries = []
            for start in (w, self._lms_start(X, w)):
                said: list[str] = []
                tries.append((*self._reject(X, y, start, weight, said), said))
            w, weight, said = min(tries, key=lambda t: self._spread(X @ t[0] - 1.0, t[1]))
            notes += said
        return w, weight, notes

    @staticmethod
    def _spread(resid: np.ndarray, weight: np.ndarray) -> float:
        """Median ``|r|`` of the runs a fit keeps: the smaller, the tighter the fit."""
        kept = resid[weight > 0]
        return float(np.median(np.abs(kept))) if len(kept) else math.inf

    def _lms_start(self, X: np.ndarray, w_ols: np.ndarray) -> np.ndarray:
        """Where the robust fit starts: the least median of squares estimate.

        Huber's weights bound a run's residual, not its leverage: a run at 4 MiB served
        10x too fast from cache drags an IRLS started at least squares to a flat
        model. The start is instead the exact fit through the pair of runs (at two
        distinct sizes, both coefficients >= 0 when ``positive``) that minimises the
        h-th smallest ``|r|``, ``h = n // 2 + 1`` (Rousseeuw & Leroy 1987, ch. 2: LMS
        with p = 2; every pair for up to 2,016 pairs, else 2,016 drawn with a fixed
        seed). Falls back to ``w_ols`` when no pair qualifies.
        """
        n = len(X)
        i, j = np.triu_indices(n, 1)
        if len(i) > 2016:
            pick = np.random.default_rng(0).choice(len(i), 2016, replace=False)
            i, j = i[pick], j[pick]
        a, b, c, d = X[i, 0], X[i, 1], X[j, 0], X[j, 1]
        det = a * d - b * c
        ok = np.abs(det) > 1e-12 * np.abs(a * d)
        with np.errstate(divide="ignore", invalid="ignore"):
            w0 = (d - b) / det  # [[a, b], [c, d]] @ w = [1, 1]
            w1 = (a - c) / det
        ok &= np.isfinite(w0) & np.isfinite(w1)
        if self.positive:
            ok &= (w0 >= 0) & (w1 >= 0)
        if not ok.any():
            return w_ols
        cand = np.column_stack([w0[ok], w1[ok]])
        r = np.abs(X @ cand.T - 1.0)  # n x candidates
        h = n // 2 + 1
        crit = np.partition(r, h - 1, axis=0)[h - 1]
        return cand[int(np.argmin(crit))]

    def _reject(self, X, y, w, weight, notes: list[str]):
        """Reweighted least squares after the robust fit (Rousseeuw & Leroy 1987, ch. 2).

        Runs whose standardized residual exceeds ``cutoff`` get weight 0 and the rest
        (weight 1) are fitted again by least squares, until the set of rejected runs
        stops changing. One fast run with a large transfer size still pulls a Huber fit
        (its leverage is not bounded); once rejected, it no longer does. Stops without
        rejecting when fewer than three runs at two distinct sizes would be left.
        """
        out = None
        for _ in range(20):
            new = self._standardized(X @ w - 1.0) > self.cutoff
            if out is not None and (new == out).all():
                break
            keep = ~new
            if keep.sum() < 3 or len(np.unique(X[keep, 1] / X[keep, 0])) < 2:
                notes.append("too few runs left to reject outliers: kept the robust fit")
                return w, weight
            out = new
            w = self._lstsq(X, y, keep.astype(float), notes)
        return w, np.where(out, 0.0, 1.0)

    def _lstsq(self, X: np.ndarray, y: np.ndarray, weight: np.ndarray, notes: list[str]):
        sw = np.sqrt(weight)[:, None]
        Xw, yw = X * sw, y * sw[:, 0]
        scale = np.linalg.norm(Xw, axis=0)  # columns differ by ~1e6: condition first
        scale[scale == 0] = 1.0
        ws, *_ = np.linalg.lstsq(Xw / scale, yw, rcond=None)
        w = ws / scale
        if self.positive and (w < 0).any():
            best, best_ss = np.zeros(2), float(yw @ yw)
            for j in (0, 1):  # one coefficient at 0, the other >= 0
                col = Xw[:, j]
                denom = float(col @ col)
                if denom <= 0:
                    continue
                c = max(float(col @ yw) / denom, 0.0)
                ss = float(((yw - c * col) ** 2).sum())
                if ss < best_ss:
                    best, best_ss = np.zeros(2), ss
                    best[j] = c
            notes.append(
                f"unconstrained fit gave a0={w[0]:.3g} s, a1={w[1]:.3g} s/byte; "
                "kept non-negative (positive=True)"
            )
            w = best
        return w

    @classmethod
    def from_coefficients(
        cls, coefficients: Mapping[str, tuple[float, float]], *, source: str = "given"
    ) -> CostModel:
        """A model from known coefficients (e.g. :data:`TABLE_I`).

        Parameters
        ----------
        coefficients : mapping of str to (float, float)
            ``op -> (a0 [s], a1 [s/byte])`` for ``"read"`` and/or ``"write"``.
        source : str, default "given"
            Where they come from (kept in ``source_`` and in results).

        Returns
        -------
        CostModel
            A model with ``a0_``/``a1_`` set; ``r2_`` and ``rmse_rel_`` NaN.

        Raises
        ------
        ParameterError
            An unknown op, or a coefficient that is not a finite number >= 0.
        """
        caller = "CostModel.from_coefficients"
        if not isinstance(coefficients, Mapping) or not coefficients:
            raise ParameterError(
                "coefficients", caller, "a non-empty mapping op -> (a0, a1)", coefficients
            )
        m = cls()
        m.a0_, m.a1_ = {}, {}
        for op, pair in coefficients.items():
            if op not in OPS:
                raise ParameterError("coefficients", caller, "keys 'read' and/or 'write'", op)
            try:
                a0, a1 = pair
            except (TypeError, ValueError) as exc:
                raise ParameterError(
                    "coefficients", caller, "(a0 [s], a1 [s/byte]) pairs", pair
                ) from exc
            m.a0_[op] = check_real(
                a0, "coefficients", caller, "a0 >= 0 [s]", low=0.0, low_open=False
            )
            m.a1_[op] = check_real(
                a1, "coefficients", caller, "a1 >= 0 [s/byte]", low=0.0, low_open=False
            )
        m.r2_ = {op: math.nan for op in m.a0_}
        m.rmse_rel_ = {op: math.nan for op in m.a0_}
        m.n_samples_ = {op: 0 for op in m.a0_}
        m.residuals_ = pd.DataFrame(
            columns=[
                "op",
                "size_bytes",
                "ios",
                "seconds",
                "s_per_io",
                "pred_s_per_io",
                "residual",
                "bw_bps",
                "pred_bw_bps",
                "bw_error",
                "weight",
                "std_residual",
                "outlier",
            ]
        )
        m.outliers_ = np.zeros(0, bool)
        m.notes_ = []
        m.source_ = source
        return m

    # ------------------------------------------------------------------ using
    def predict(self, size_bytes, op: str) -> np.ndarray:
        """Time of one I/O of each size, ``a0 + a1 * b`` (Eq. 1).

        Parameters
        ----------
        size_bytes : float or array_like
            Transfer sizes. [bytes]
        op : {"read", "write"}
            Operation.

        Returns
        -------
        numpy.ndarray
            Seconds per I/O. [s]
        """
        a0, a1 = self._coef(op, "CostModel.predict")
        b = _sizes(size_bytes, "CostModel.predict")
        return a0 + a1 * b

    def bandwidth(self, size_bytes, op: str) -> np.ndarray:
        """Achievable bandwidth at each transfer size, ``b / (a0 + a1 b)`` (Eq. 2).

        Parameters
        ----------
        size_bytes : float or array_like
            Transfer sizes. [bytes]
        op : {"read", "write"}
            Operation.

        Returns
        -------
        numpy.ndarray
            Bytes per second. [bytes/s]
        """
        a0, a1 = self._coef(op, "CostModel.bandwidth")
        b = _sizes(size_bytes, "CostModel.bandwidth")
        with np.errstate(divide="ignore", invalid="ignore"):
            return b / (a0 + a1 * b)

    def coefficients(self) -> pd.DataFrame:
        """The coefficients in the form of the paper's Table I, with goodness of fit.

        Returns
        -------
        pandas.DataFrame
            Indexed by op (write, then read): ``latency_s`` (a0 [s]),
            ``s_per_byte`` (a1 [s/byte]), ``rate_mib_s`` (1/a1 in MiB/s: the
            paper's "MB/sec" column, e.g. 1/1.73e-9 = 551), ``rate_mb_s``
            (1/a1 in 10^6 bytes/s), ``iops_limit`` (1/a0 [1/s], Eq. 2),
            ``r2``, ``rmse_rel``, ``max_abs_residual``, ``n`` (runs),
            ``n_sizes``, ``min_size_bytes``, ``max_size_bytes``,
            ``outliers`` (runs flagged, ``std_residual > cutoff``) and ``source``.
        """
        if not getattr(self, "a0_", None):
            raise ParameterError("self", "CostModel.coefficients", "a fitted model", "unfitted")
        rows = []
        res = self.residuals_
        for op in OPS:
            if op not in self.a0_:
                continue
            a0, a1 = self.a0_[op], self.a1_[op]
            sub = res[res["op"] == op]
            rows.append(
                {
                    "op": op,
                    "latency_s": a0,
                    "s_per_byte": a1,
                    "rate_mib_s": 1.0 / a1 / _MIB if a1 > 0 else math.inf,
                    "rate_mb_s": 1.0 / a1 / 1e6 if a1 > 0 else math.inf,
                    "iops_limit": 1.0 / a0 if a0 > 0 else math.inf,
                    "r2": self.r2_[op],
                    "rmse_rel": self.rmse_rel_[op],
                    "max_abs_residual": float(sub["residual"].abs().max())
                    if len(sub)
                    else math.nan,
                    "n": self.n_samples_[op],
                    "n_sizes": int(sub["size_bytes"].nunique()),
                    "min_size_bytes": float(sub["size_bytes"].min()) if len(sub) else math.nan,
                    "max_size_bytes": float(sub["size_bytes"].max()) if len(sub) else math.nan,
                    "outliers": int(sub["outlier"].sum()) if len(sub) else 0,
                    "source": self.source_,
                }
            )
        return pd.DataFrame(rows).set_index("op")

    def _coef(self, op: str, caller: str) -> tuple[float, float]:
        if not getattr(self, "a0_", None):
            raise ParameterError("self", caller, "a fitted model", "unfitted")
        check_choice(op, "op", caller, sorted(self.a0_), f"one of {sorted(self.a0_)}")
        return self.a0_[op], self.a1_[op]

    def _params(self) -> dict[str, float]:
        return {
            "r0": self.a0_["read"],
            "r1": self.a1_["read"],
            "w0": self.a0_["write"],
            "w1": self.a1_["write"],
        }

    # ------------------------------------------------------------------ as a result
    sql = None  # a cost model is fitted from a table, not read with SQL

    @property
    def params(self) -> dict[str, Any]:
        """The estimator's parameters, as for any result (:mod:`iochar.result`)."""
        return {
            "robust": self.robust,
            "epsilon": self.epsilon,
            "cutoff": self.cutoff,
            "max_iter": self.max_iter,
            "positive": self.positive,
        }

    @property
    def evidence(self) -> dict[str, Any]:
        """The fitted attributes by name without their trailing ``_`` (empty before a fit)."""
        names = ("a0", "a1", "r2", "rmse_rel", "n_samples", "notes", "source")
        return {n: getattr(self, n + "_") for n in names if hasattr(self, n + "_")}

    def _summary(self) -> dict[str, Any]:
        return {
            "source": self.source_,
            "coefficients": {op: (self.a0_[op], self.a1_[op]) for op in self.a0_},
        }

    def __repr__(self) -> str:
        if not getattr(self, "a0_", None):
            return f"CostModel(robust={self.robust!r})"
        parts = ", ".join(
            f"{op}: a0={self.a0_[op]:.3g} s, a1={self.a1_[op]:.3g} s/B" for op in self.a0_
        )
        return f"CostModel({parts}; {self.source_})"


def _bench_frame(bench, caller: str) -> pd.DataFrame:
    if not isinstance(bench, pd.DataFrame):
        raise ParameterError(
            "bench", caller, "a DataFrame with columns " + ", ".join(BENCH_COLUMNS), type(bench)
        )
    missing = [c for c in BENCH_COLUMNS if c not in bench.columns]
    if missing:
        raise ParameterError(
            "bench",
            caller,
            "a calibration table with columns " + ", ".join(BENCH_COLUMNS),
            f"DataFrame without {missing}",
        )
    if bench.empty:
        raise ParameterError("bench", caller, "a non-empty calibration table", "no rows")
    df = bench.loc[:, list(BENCH_COLUMNS)].reset_index(drop=True)
    bad_op = ~df["op"].isin(OPS)
    if bad_op.any():
        i = int(np.flatnonzero(bad_op.to_numpy())[0])
        raise ParameterError(
            "bench", caller, "op 'read' or 'write' in every row", f"row {i}: {df['op'][i]!r}"
        )
    for col, unit in (("size_bytes", "bytes"), ("ios", "I/Os"), ("seconds", "s")):
        v = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
        bad = ~(np.isfinite(v) & (v > 0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ParameterError(
                "bench",
                caller,
                f"a positive finite {col} [{unit}] in every row",
                f"row {i}: {col}={df[col][i]!r}",
            )
        df[col] = v
    return df


def _sizes(size_bytes, caller: str) -> np.ndarray:
    try:
        b = np.asarray(size_bytes, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterError("size_bytes", caller, "numbers >= 0 [bytes]", size_bytes) from exc
    if not (np.isfinite(b) & (b >= 0)).all():
        raise ParameterError("size_bytes", caller, "finite numbers >= 0 [bytes]", size_bytes)
    return b


def fit_cost_model(
    bench: pd.DataFrame,
    *,
    robust: str | None = None,
    epsilon: float = 1.35,
    cutoff: float = 2.5,
) -> CostModel:
    """Fit the per-operation cost model ``t = a0 + a1 b`` (Eq. 4); see :class:`CostModel`.

    Parameters
    ----------
    bench : pandas.DataFrame
        Calibration table with columns ``op``, ``size_bytes`` [bytes],
        ``ios`` and ``seconds`` [s].
    robust : {None, "huber"}, default None
        Ordinary least squares (the paper) or Huber IRLS.
    epsilon : float, default 1.35
        Huber threshold (robust fit only).
    cutoff : float, default 2.5
        Standardized residual beyond which a run is an outlier (robust fit only).

    Returns
    -------
    CostModel
        The fitted model.

    Examples
    --------
    >>> import pandas as pd
    >>> bench = pd.DataFrame({"op": ["write"] * 3, "size_bytes": [4096, 65536, 1048576],
    ...                       "ios": [1000] * 3,
    ...                       "seconds": [1000 * (1.04e-3 + 1.73e-9 * b)
    ...                                   for b in (4096, 65536, 1048576)]})
    >>> m = fit_cost_model(bench)
    >>> round(m.a0_["write"] * 1e3, 3), round(m.coefficients().loc["write", "rate_mib_s"])
    (1.04, 551)
    """
    return CostModel(robust=robust, epsilon=epsilon, cutoff=cutoff).fit(bench)


def table_i_model() -> CostModel:
    """The paper's own coefficients (Uselton & Wright 2013, Table I, one Grace OST).

    Returns
    -------
    CostModel
        write: a0 = 1.04e-3 s, a1 = 1.73e-9 s/byte (551 MiB/s);
        read: a0 = 8.02e-4 s, a1 = 1.23e-9 s/byte (775 MiB/s).
    """
    return CostModel.from_coefficients(TABLE_I, source="Uselton & Wright 2013, Table I")


def cost_model(calibration: str = "") -> CostModel:
    """The cost model of Uselton & Wright (2013): their Table I, or fitted to a benchmark file.

    Parameters
    ----------
    calibration : str, default ""
        A fio JSON or IOR output file (:func:`iochar.load.bench.read_calibration`)
        to fit ``t = a0 + a1 b`` per op with :func:`fit_cost_model` (Eq. 4); ""
        uses Table I (:func:`table_i_model`).

    Returns
    -------
    CostModel
        The model.

    Raises
    ------
    ReportError
        The file cannot be read or fitted (one line saying why).

    Examples
    --------
    >>> cost_model("").source_
    'Uselton & Wright 2013, Table I'
    """
    from iochar.load import bench

    if not calibration:
        return table_i_model()
    try:
        return fit_cost_model(bench.read_calibration(calibration))
    except IocharError as exc:
        raise ReportError(f"calibration {calibration!r}: {exc}") from None


# --------------------------------------------------------------------------- Eqs. 5 and 6


def _pattern(counts, op: str | None, caller: str) -> pd.DataFrame:
    if isinstance(counts, pd.DataFrame):
        missing = [c for c in ("op", "size_bytes", "count") if c not in counts.columns]
        if missing:
            raise ParameterError(
                "counts", caller, "a DataFrame with columns op, size_bytes, count", missing
            )
        df = counts[["op", "size_bytes", "count"]].copy()
    elif isinstance(counts, Mapping):
        if op is None:
            raise ParameterError("op", caller, "'read' or 'write' when counts is a mapping", op)
        df = pd.DataFrame(
            {"op": op, "size_bytes": list(counts.keys()), "count": list(counts.values())}
        )
    else:
        raise ParameterError(
            "counts",
            caller,
            "a DataFrame (op, size_bytes, count) or a mapping size_bytes -> count",
            type(counts).__name__,
        )
    for col in ("size_bytes", "count"):
        v = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
        if not (np.isfinite(v) & (v >= 0)).all():
            raise ParameterError("counts", caller, f"finite {col} >= 0", df[col].tolist()[:5])
        df[col] = v
    return df


def pattern_time(model: CostModel, counts, *, op: str | None = None) -> float:
    """Time a pattern of I/Os needs, ``T(N) = sum_b N_b (a0 + a1 b)`` (Eq. 5).

    Parameters
    ----------
    model : CostModel
        Fitted model.
    counts : pandas.DataFrame or mapping
        The pattern: a DataFrame with ``op``, ``size_bytes`` [bytes] and
        ``count`` (e.g. ``size_hist`` rows), or ``{size_bytes: count}`` for
        one ``op``.
    op : {"read", "write"}, optional
        The operation when ``counts`` is a mapping.

    Returns
    -------
    float
        Seconds. [s]
    """
    caller = "pattern_time"
    _check_model(model, caller)
    df = _pattern(counts, op, caller)
    total = 0.0
    for o, sub in df.groupby("op"):
        a0, a1 = model._coef(o, caller)
        total += float((sub["count"] * (a0 + a1 * sub["size_bytes"])).sum())
    return total


def achievable_bandwidth(model: CostModel, counts, *, op: str | None = None) -> float:
    """Achievable bandwidth of a pattern of I/Os, ``Bytes(N) / T(N)`` (Eq. 6).

    Parameters
    ----------
    model : CostModel
        Fitted model.
    counts : pandas.DataFrame or mapping
        As for :func:`pattern_time`.
    op : {"read", "write"}, optional
        The operation when ``counts`` is a mapping.

    Returns
    -------
    float
        Bytes per second; NaN for an empty pattern. [bytes/s]

    Examples
    --------
    >>> m = table_i_model()
    >>> round(achievable_bandwidth(m, {4096: 1000}, op="write") / 2**20, 2)  # MiB/s
    3.73
    """
    caller = "achievable_bandwidth"
    _check_model(model, caller)
    df = _pattern(counts, op, caller)
    t = pattern_time(model, df)
    nbytes = float((df["count"] * df["size_bytes"]).sum())
    return nbytes / t if t > 0 else math.nan


def compare_bandwidth(model: CostModel, bench: pd.DataFrame) -> Table:
    """Predicted (Eq. 6) against measured bandwidth per op and transfer size (their Fig. 7).

    Runs of one op and size are pooled (I/Os, bytes and seconds summed), so
    the measured bandwidth is ``bytes / seconds`` and the prediction is
    Eq. 6 for the same pattern, ``b / (a0 + a1 b)``.

    Parameters
    ----------
    model : CostModel
        Fitted model.
    bench : pandas.DataFrame
        Calibration table (``op``, ``size_bytes`` [bytes], ``ios``,
        ``seconds`` [s]; ``bytes`` [bytes] when present, else
        ``ios * size_bytes``), e.g. a different run than the one fitted.

    Returns
    -------
    iochar.result.Table
        ``op``, ``size_bytes``, ``runs``, ``ios``, ``seconds``,
        ``measured_bps``, ``predicted_bps`` [bytes/s], ``measured_mib_s``,
        ``predicted_mib_s`` [MiB/s] and ``error`` (predicted / measured - 1).
        ``evidence``: ``mean_abs_error`` and ``max_abs_error`` over the rows,
        and the model.
    """
    caller = "compare_bandwidth"
    _check_model(model, caller)
    df = _bench_frame(bench, caller)
    nbytes = (
        pd.to_numeric(bench["bytes"], errors="coerce").to_numpy(float)
        if "bytes" in bench.columns
        else df["ios"].to_numpy(float) * df["size_bytes"].to_numpy(float)
    )
    df["bytes"] = nbytes
    out = (
        df.groupby(["op", "size_bytes"], sort=True)
        .agg(
            runs=("ios", "size"),
            ios=("ios", "sum"),
            seconds=("seconds", "sum"),
            bytes=("bytes", "sum"),
        )
        .reset_index()
    )
    out["measured_bps"] = out["bytes"] / out["seconds"]
    pred = np.full(len(out), np.nan)
    for op in out["op"].unique():
        m = (out["op"] == op).to_numpy()
        a0, a1 = model._coef(op, caller)
        counts = out.loc[m, "ios"].to_numpy(float)
        sizes = out.loc[m, "bytes"].to_numpy(float) / counts  # mean size of the pooled runs
        pred[m] = sizes / (a0 + a1 * sizes)  # Eq. 6 for N I/Os of one size
    out["predicted_bps"] = pred
    out["measured_mib_s"] = out["measured_bps"] / _MIB
    out["predicted_mib_s"] = out["predicted_bps"] / _MIB
    out["error"] = out["predicted_bps"] / out["measured_bps"] - 1.0
    err = out["error"].abs()
    return Table(
        out,
        evidence={
            "mean_abs_error": float(err.mean()),
            "max_abs_error": float(err.max()),
            "model": model._summary(),
            "figure": "Uselton & Wright 2013, Fig. 7 (Eq. 6 against measurement)",
        },
    )


def compare_calibration(model: CostModel, calibration: str = "") -> Table:
    """The model against the benchmark runs of a calibration file (their Fig. 7).

    Uselton & Wright's Fig. 7 sets the bandwidth each calibration run
    measured beside the bandwidth Eq. 6 predicts for it with the fitted
    coefficients. This reads the runs of ``calibration`` (fio JSON or IOR
    output, :func:`iochar.load.bench.read_calibration`) and calls
    :func:`compare_bandwidth`; with no file (the paper's Table I, whose runs
    are not published) there is nothing measured to compare, and the table
    is empty with the reason in its evidence.

    Parameters
    ----------
    model : CostModel
        The model (e.g. :func:`cost_model` of the same file, or Table I).
    calibration : str, default ""
        A fio JSON or IOR output file; "" for none.

    Returns
    -------
    iochar.result.Table
        :func:`compare_bandwidth`'s table; no rows without a file.
        ``evidence``: its evidence, ``calibration`` and, without rows,
        ``reason``.

    Raises
    ------
    ReportError
        The file cannot be read (one line saying why).
    """
    from iochar.load import bench

    _check_model(model, "compare_calibration")
    cols = ["op", "size_bytes", "runs", "ios", "seconds", "bytes", "measured_bps",
            "predicted_bps", "measured_mib_s", "predicted_mib_s", "error"]  # fmt: skip
    if not calibration:
        return Table(
            pd.DataFrame({c: [] for c in cols}),
            evidence={
                "calibration": "",
                "model": model._summary(),
                "reason": "the model is the paper's Table I, whose benchmark runs are not"
                " published, and no calibration file was given",
            },
        )
    try:
        runs = bench.read_calibration(calibration)
    except IocharError as exc:
        raise ReportError(f"calibration {calibration!r}: {exc}") from None
    out = compare_bandwidth(model, runs)
    out.evidence["calibration"] = str(calibration)
    return out


# --------------------------------------------------------------------------- Eq. 7 series


def _where(section, targets, source_id, start, end, caller) -> tuple[str, dict[str, Any]]:
    """WHERE clause from fixed fragments (values are bound, never formatted in)."""
    clauses, params = [], {}
    if section is not None:
        clauses.append("section = $section")
        params["section"] = section
    if targets is not None:
        clauses.append("list_contains($targets, target)")
        params["targets"] = targets
    if source_id is not None:
        clauses.append("source_id = $source")
        params["source"] = source_id
    start, end = parse_time(start, "start", caller), parse_time(end, "end", caller)
    if start is not None:
        clauses.append("ts > $start")
        params["start"] = start
    if end is not None:
        clauses.append("ts <= $end")
        params["end"] = end
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", params


_BINS_SQL = """
SELECT size_bytes, max(count) AS max_count
FROM size_hist {where}
GROUP BY size_bytes
ORDER BY size_bytes
"""

_SECTIONS_SQL = "SELECT DISTINCT section FROM size_hist {where}"

_QBITS = (
    "CASE coalesce(quality, 'ok') WHEN 'ok' THEN 0 WHEN 'reset' THEN 1 WHEN 'wrap' THEN 2 "
    "WHEN 'gap' THEN 4 WHEN 'gap_reset' THEN 8 WHEN 'gap_wrap' THEN 16 ELSE 32 END"
)

# One pass over size_hist, one group per (target, ts). Per row, the op and the "optimal"
# test become 0/1 factors once, so the aggregate is plain sums of products (no per-
# aggregate FILTER). Eq. 7 is linear in the counts, so the model's time is
# r0 * read_ios + r1 * read_bytes + w0 * write_ios + w1 * write_bytes: the coefficients
# join the per-interval sums as bound parameters after the GROUP BY.
_FSU_SQL = """
WITH r AS (
  SELECT target, ts, interval_s,
         (op = 'read')::DOUBLE AS rd, (op = 'write')::DOUBLE AS wr,
         count::DOUBLE AS n, (count * size_bytes)::DOUBLE AS nb,
         (size_bytes >= $optimal)::DOUBLE AS big
  FROM size_hist {where}
), g AS (
  SELECT target, ts, max(interval_s) AS interval_s,
         sum(n * rd) AS read_ios, sum(n * wr) AS write_ios,
         sum(nb * rd) AS read_bytes, sum(nb * wr) AS write_bytes,
         sum(n * big * (rd + wr)) AS optimal_ios
  FROM r
  GROUP BY target, ts
)
SELECT target, ts, interval_s,
       read_ios::BIGINT AS read_ios, write_ios::BIGINT AS write_ios,
       read_bytes, write_bytes,
       optimal_ios::BIGINT AS optimal_ios,
       (read_ios + write_ios - optimal_ios)::BIGINT AS suboptimal_ios,
       $r0 * read_ios + $r1 * read_bytes + $w0 * write_ios + $w1 * write_bytes AS busy_s,
       100.0 * ($r0 * read_ios + $r1 * read_bytes + $w0 * write_ios + $w1 * write_bytes)
         / interval_s AS fsu_pct,
       100.0 * ($r1 * read_bytes + $w1 * write_bytes) / interval_s AS bw_load_pct
FROM g
ORDER BY target, ts
"""

# The quality labels (as bits) of the intervals with a row whose quality is not ok (NULL
# counts as ok). On clean data the ``quality <> 'ok'`` filter skips every row group by its
# min/max statistics, so this costs next to nothing.
_FLAGGED_SQL = """
SELECT target, ts, bit_or({qbits}) AS qbits
FROM size_hist {where}
GROUP BY target, ts
"""


def _positions(df: pd.DataFrame, keys: pd.DataFrame) -> np.ndarray:
    """Row numbers in ``df`` (sorted by target, then ts) of the (target, ts) pairs in ``keys``."""
    tgt = df["target"].to_numpy(dtype=object)
    ts = df["ts"].to_numpy()
    out = np.empty(len(keys), np.int64)
    kt = pd.to_datetime(keys["ts"]).to_numpy().astype(ts.dtype)
    for target, idx in keys.groupby("target", sort=False).indices.items():
        lo = int(np.searchsorted(tgt, target, side="left"))
        hi = int(np.searchsorted(tgt, target, side="right"))
        out[idx] = lo + np.searchsorted(ts[lo:hi], kt[idx])
    return out


def _quality_label(bits: int) -> str:
    names = [k for k, v in QUALITY_BITS.items() if v and bits & v]
    if bits & _OTHER_BIT:
        names.append("other")
    return "+".join(names) if names else "ok"


def _reason(bits: int, exclude_mask: int) -> str:
    out = [_REASONS[k] for k, v in QUALITY_BITS.items() if v and bits & v & exclude_mask]
    if bits & _OTHER_BIT & exclude_mask:
        out.append("a quality label iochar does not know")
    return "; ".join(out)


def fsu_series(
    store,
    model: CostModel,
    *,
    section: str | None = DISK_IO_SIZE,
    targets: Sequence[str] | None = None,
    source_id: int | None = None,
    start=None,
    end=None,
    optimal_bytes: int | None = None,
    exclude_quality: Sequence[str] = DEFAULT_EXCLUDE,
) -> Table:
    """FSU per target per interval from the disk I/O size histograms (Eq. 7).

    One DuckDB aggregate over ``size_hist`` per (target, ts) gives the read
    and write I/O counts and bytes of each interval; the model's
    coefficients, passed as bound parameters, turn them into the time the
    pattern needs (Eq. 5) and ``FSU = 100 * time / interval_s``.

    Parameters
    ----------
    store : iochar.Store
        The database (``size_hist`` as loaded from ``brw_stats``, or filled
        directly).
    model : CostModel
        Fitted model with both read and write coefficients.
    section : str or None, default "disk I/O size"
        ``size_hist.section`` to use (bins in bytes). None: do not filter on
        the section (then the selected rows must hold one section only).
    targets : sequence of str, optional
        Only these targets (OSTs, devices).
    source_id : int, optional
        Only rows from this input.
    start, end : str, datetime or None, optional
        Only intervals ending after ``start`` and at or before ``end`` (UTC).
    optimal_bytes : int, optional
        I/Os of at least this size are "optimal" (Tables II and III). Default:
        the largest bin that holds any I/O in the selection (1 MiB on the
        paper's ldiskfs OSTs). [bytes]
    exclude_quality : sequence of str, default ("reset", "wrap", "gap", "gap_reset", "gap_wrap")
        Intervals with any row of these ``quality`` labels get no FSU (kept
        with ``fsu_pct`` NULL and a ``reason``). Pass ``()`` to use them all.

    Returns
    -------
    iochar.result.Table
        One row per (target, ts), ordered: ``target``, ``ts`` (interval end,
        UTC), ``interval_s`` (the largest over the interval's rows [s]),
        ``read_ios``, ``write_ios``, ``read_bytes``, ``write_bytes`` (count x bin size [bytes]),
        ``optimal_ios``, ``suboptimal_ios``, ``busy_s`` (Eq. 5 [s]),
        ``fsu_pct`` (Eq. 7 [%]; NULL when skipped), ``bw_load_pct``
        (``100 * (r1 read_bytes + w1 write_bytes) / interval_s`` [%]),
        ``quality`` (the interval's labels) and ``reason`` (why it was
        skipped; empty when used). ``evidence`` holds the evidence: the model
        (``model``), ``section``, the bins present (``bins``) and those
        holding any I/O (``bins_with_ios``) [bytes], ``optimal_bytes``,
        ``exclude_quality``, ``intervals``, ``skipped`` (count per reason)
        and ``equation``.

    Raises
    ------
    ParameterError
        A model without both ops, bad filters, or ``section=None`` over
        several sections.
    """
    caller = "fsu_series"
    _check_model(model, caller)
    _need_both_ops(model, caller)
    targets = _str_list(targets, "targets", caller)
    if section is not None and not isinstance(section, str):
        raise ParameterError("section", caller, "a str or None", section)
    if source_id is not None and (isinstance(source_id, bool) or not isinstance(source_id, int)):
        raise ParameterError("source_id", caller, "an int or None", source_id)
    mask = _exclude_mask(exclude_quality, caller)
    where, params = _where(section, targets, source_id, start, end, caller)
    if section is None:
        _check_one_section(store, where, params, caller)
    bins = store.sql(_BINS_SQL.format(where=where), params=params or None).fetchall()
    optimal = _optimal_size(bins, optimal_bytes, caller)
    q_params = {**params, **model._params(), "optimal": optimal}
    df = store.sql(_FSU_SQL.format(where=where), params=q_params).to_arrow_table().to_pandas()
    skipped = _label_quality(df, _quality_bits(store, df, where, params), mask)
    return Table(
        df,
        sql=_FSU_SQL.format(where=where),
        evidence={
            "equation": "Uselton & Wright 2013, Eq. 7: FSU = 100/T * sum_b N_b (a0 + a1 b)",
            "model": model._summary(),
            "section": section,
            "bins": [int(size) for size, _ in bins],
            "bins_with_ios": [int(size) for size, mx in bins if mx and mx > 0],
            "optimal_bytes": optimal,
            "exclude_quality": list(exclude_quality),
            "intervals": int(len(df)),
            "skipped": skipped,
        },
    )


def _exclude_mask(exclude_quality, caller: str) -> int:
    """The quality bits whose intervals are left out (unknown labels always are)."""
    if isinstance(exclude_quality, str):
        raise ParameterError(
            "exclude_quality", caller, "a sequence of quality labels", exclude_quality
        )
    unknown = [q for q in exclude_quality if q not in QUALITY_BITS or q == "ok"]
    if unknown:
        raise ParameterError(
            "exclude_quality",
            caller,
            "labels among " + ", ".join(k for k in QUALITY_BITS if k != "ok"),
            unknown,
        )
    mask = 0
    for q in exclude_quality:
        mask |= QUALITY_BITS[q]
    return mask | _OTHER_BIT  # unknown labels are never trusted


def _check_one_section(store, where: str, params: dict, caller: str) -> None:
    """Refuse a selection mixing histogram sections (bins of different units)."""
    sections = store.sql(_SECTIONS_SQL.format(where=where), params=params or None).fetchall()
    if len(sections) > 1:
        raise ParameterError(
            "section",
            caller,
            "a section name when size_hist holds several (bins of different units)",
            sorted(str(r[0]) for r in sections),
        )


def _optimal_size(bins: list, optimal_bytes, caller: str) -> int:
    """The "optimal" I/O size: as given, else the largest bin that saw I/O [bytes]."""
    if optimal_bytes is None:
        nz = [int(size) for size, mx in bins if mx and mx > 0]
        return max(nz) if nz else 0
    if (
        isinstance(optimal_bytes, bool)
        or not isinstance(optimal_bytes, numbers.Integral)
        or optimal_bytes <= 0
    ):
        raise ParameterError("optimal_bytes", caller, "an int > 0 [bytes] or None", optimal_bytes)
    return int(optimal_bytes)


def _quality_bits(store, df: pd.DataFrame, where: str, params: dict) -> np.ndarray:
    """Per row of ``df``, the quality labels (as bits) of its interval's histogram rows."""
    cond = "quality <> 'ok'"
    fwhere = (where + " AND " + cond) if where else "WHERE " + cond
    det = store.sql(_FLAGGED_SQL.format(where=fwhere, qbits=_QBITS), params=params or None).df()
    qbits = np.zeros(len(df), np.int64)
    if len(det):
        qbits[_positions(df, det)] = det["qbits"].to_numpy(np.int64)
    return qbits


def _label_quality(df: pd.DataFrame, qbits: np.ndarray, mask: int) -> dict[str, int]:
    """Blank the FSU of left-out intervals, add ``quality`` and ``reason``; count the reasons."""
    iv = df["interval_s"].to_numpy(float)
    used = ((qbits & mask) == 0) & (iv > 0)
    df.loc[~used, ["fsu_pct", "bw_load_pct"]] = np.nan
    # labels and reasons per distinct mask, mapped in O(n) (masks are < 64)
    present = np.flatnonzero(np.bincount(qbits, minlength=2 * _OTHER_BIT))
    remap = np.zeros(2 * _OTHER_BIT, np.int64)
    remap[present] = np.arange(len(present))
    codes = remap[qbits]
    df["quality"] = pd.Categorical.from_codes(
        codes, categories=[_quality_label(int(u)) for u in present]
    )
    mask_text = [_reason(int(u), mask) for u in present]
    cats = list(dict.fromkeys(["", *mask_text, "non-positive interval_s"]))
    by_mask = np.array([cats.index(t) for t in mask_text], np.int64)
    rcode = np.where(used, 0, by_mask[codes] if len(by_mask) else 0)
    rcode[~(iv > 0)] = cats.index("non-positive interval_s")
    df["reason"] = pd.Categorical.from_codes(rcode, categories=cats)
    return {
        str(k): int(v) for k, v in df.loc[~used, "reason"].value_counts().items() if v and str(k)
    }


def _series_frame(series, caller: str, cols: Sequence[str] = ("fsu_pct",)) -> pd.DataFrame:
    if not isinstance(series, pd.DataFrame):
        raise ParameterError(
            "series", caller, "an fsu_series() or fsu_filesystem() DataFrame", type(series).__name__
        )
    missing = [c for c in cols if c not in series.columns]
    if missing:
        raise ParameterError(
            "series", caller, "a DataFrame with columns " + ", ".join(cols), f"missing {missing}"
        )
    return series


_FS_SQL = """
WITH t AS (
  SELECT target,
         {bucket} AS ts,
         sum(interval_s) FILTER (WHERE fsu_pct IS NOT NULL) AS interval_s,
         sum(busy_s) FILTER (WHERE fsu_pct IS NOT NULL) AS busy_s,
         sum(bw_load_pct * interval_s) FILTER (WHERE fsu_pct IS NOT NULL) AS bw_pct_s,
         sum(read_ios) FILTER (WHERE fsu_pct IS NOT NULL) AS read_ios,
         sum(write_ios) FILTER (WHERE fsu_pct IS NOT NULL) AS write_ios,
         sum(read_bytes) FILTER (WHERE fsu_pct IS NOT NULL) AS read_bytes,
         sum(write_bytes) FILTER (WHERE fsu_pct IS NOT NULL) AS write_bytes,
         sum(optimal_ios) FILTER (WHERE fsu_pct IS NOT NULL) AS optimal_ios,
         sum(suboptimal_ios) FILTER (WHERE fsu_pct IS NOT NULL) AS suboptimal_ios,
         count(*) FILTER (WHERE fsu_pct IS NULL) AS skipped
  FROM s
  GROUP BY ALL
)
SELECT ts,
       avg(interval_s) AS interval_s,
       sum(read_ios)::BIGINT AS read_ios, sum(write_ios)::BIGINT AS write_ios,
       sum(read_bytes) AS read_bytes, sum(write_bytes) AS write_bytes,
       sum(optimal_ios)::BIGINT AS optimal_ios, sum(suboptimal_ios)::BIGINT AS suboptimal_ios,
       sum(busy_s) AS busy_s,
       avg(100.0 * busy_s / interval_s) FILTER (WHERE interval_s > 0) AS fsu_pct,
       avg(bw_pct_s / interval_s) FILTER (WHERE interval_s > 0) AS bw_load_pct,
       count(*) FILTER (WHERE interval_s > 0) AS n_targets,
       sum(skipped)::BIGINT AS skipped_intervals
FROM t
GROUP BY ts
ORDER BY ts
"""


def fsu_filesystem(series: pd.DataFrame, *, bin_s: float | None = None) -> Table:
    """File-system-wide FSU: the average of the targets' FSU (paper, section V).

    "The utilization metric for the file system as a whole is the average
    of the value across the individual OSTs"; like the paper's, it ignores
    contention between targets.

    Parameters
    ----------
    series : pandas.DataFrame
        The result of :func:`fsu_series`.
    bin_s : float, optional
        Align targets to epoch-aligned bins of this width [s] (a sample falls
        in the bin holding its interval end); within a bin a target's FSU is
        its time-weighted mean. None: average targets sharing the same ``ts``.

    Returns
    -------
    iochar.result.Table
        One row per ``ts`` (bin end when binned): ``target`` ("all"),
        ``interval_s`` (mean covered seconds per target [s]), summed
        ``read_ios``, ``write_ios``, ``read_bytes``, ``write_bytes``
        [bytes], ``optimal_ios``, ``suboptimal_ios`` and ``busy_s`` [s];
        ``fsu_pct`` and ``bw_load_pct`` (means over targets [%]),
        ``n_targets`` (targets averaged) and ``skipped_intervals`` (target
        intervals left out). ``evidence`` keeps the series' evidence plus
        ``bin_s``.
    """
    caller = "fsu_filesystem"
    s = _series_frame(
        series,
        caller,
        (
            "target",
            "ts",
            "interval_s",
            "busy_s",
            "fsu_pct",
            "bw_load_pct",
            "read_ios",
            "write_ios",
            "read_bytes",
            "write_bytes",
            "optimal_ios",
            "suboptimal_ios",
        ),
    )
    params: dict[str, Any] = {}
    if bin_s is None:
        bucket = "ts"
    else:
        width = check_real(
            bin_s, "bin_s", caller, "a positive number of seconds or None", low=0.0, low_open=True
        )
        params["bin_us"] = int(round(width * 1e6))
        bucket = (
            "time_bucket(to_microseconds(CAST($bin_us AS BIGINT)), ts - INTERVAL 1 MICROSECOND)"
            " + to_microseconds(CAST($bin_us AS BIGINT))"
        )
    cols = [
        "target",
        "ts",
        "interval_s",
        "busy_s",
        "fsu_pct",
        "bw_load_pct",
        "read_ios",
        "write_ios",
        "read_bytes",
        "write_bytes",
        "optimal_ios",
        "suboptimal_ios",
    ]
    con = duckdb.connect()
    try:
        con.register("s", s[cols])
        out = con.sql(_FS_SQL.format(bucket=bucket), params=params or None).df()
    finally:
        con.close()
    out.insert(0, "target", "all")
    ev = dict(evidence_of(series))
    ev["bin_s"] = bin_s
    ev["aggregate"] = "mean FSU over targets (Uselton & Wright 2013, section V)"
    return Table(out, evidence=ev, params=dict(bin_s=bin_s), sql=_FS_SQL.format(bucket=bucket))


#: A Lustre target name: ``<fsname>-OST<hex>`` or ``<fsname>-MDT<hex>`` (the Lustre
#: Operations Manual's target labels, e.g. ``testfs-OST0000``; lctl's
#: ``obdfilter.<fsname>-OST0000`` parameter names carry the same label).
_LUSTRE_TARGET = r"^(?P<fs>.+?)-(?:OST|MDT)[0-9a-fA-F]{4,}(?:[^0-9a-fA-F].*)?$"


def filesystem_of(targets) -> pd.Series:
    """The file system a target belongs to: Lustre's ``fsname``, else the target itself.

    Lustre names every target ``<fsname>-OST<index>`` (``<fsname>-MDT<index>``
    for metadata targets), with the index in hexadecimal (Lustre Operations
    Manual, "Lustre file system labels"); the part before it is the file
    system. A name without that form (a disk such as ``sda``) is its own file
    system.

    Parameters
    ----------
    targets : sequence of str
        Target names (``size_hist.target``, ``counters.target``).

    Returns
    -------
    pandas.Series
        The file system name of each target, in order.

    Examples
    --------
    >>> filesystem_of(["testfs-OST0000", "snx11025-OST001a", "sda"]).tolist()
    ['testfs', 'snx11025', 'sda']
    """
    t = pd.Series(list(targets), dtype="object").astype(str)
    fs = t.str.extract(_LUSTRE_TARGET)["fs"]
    return fs.fillna(t).astype(object)


def fsu_by_filesystem(series: pd.DataFrame, *, bin_s: float | None = None) -> Table:
    """File-system-wide FSU (section V) for each file system in an FSU series.

    :func:`fsu_filesystem` averages the FSU of all targets it is given; a
    database can hold targets of several file systems (and of several
    machines), whose average means nothing. This groups the targets by
    :func:`filesystem_of` (Lustre's ``fsname``) and averages within each group:
    "the utilization metric for the file system as a whole is the average of
    the value across the individual OSTs" (Uselton & Wright 2013, section V).

    Parameters
    ----------
    series : pandas.DataFrame
        The result of :func:`fsu_series`.
    bin_s : float, optional
        As for :func:`fsu_filesystem` [s].

    Returns
    -------
    iochar.result.Table
        :func:`fsu_filesystem`'s columns, one block per file system, with
        ``target`` the file system's name and ``filesystem`` the same name.
        ``evidence``: ``targets`` (file system -> its targets, sorted),
        ``bin_s`` and the series' evidence.
    """
    caller = "fsu_by_filesystem"
    s = _series_frame(series, caller, ("target", "ts", "fsu_pct"))
    fs = filesystem_of(s["target"]).to_numpy()
    parts, members = [], {}
    for name in sorted(set(fs)):
        sub = s[fs == name]
        members[str(name)] = sorted(str(t) for t in sub["target"].unique())
        part = pd.DataFrame(fsu_filesystem(sub, bin_s=bin_s))
        part["target"] = name
        part.insert(1, "filesystem", name)
        parts.append(part)
    if parts:
        out = pd.concat(parts, ignore_index=True)
    else:
        out = pd.DataFrame(fsu_filesystem(s, bin_s=bin_s))
        out.insert(1, "filesystem", pd.Series([], dtype=object))
    ev = dict(evidence_of(series))
    ev.update(
        targets=members,
        bin_s=bin_s,
        aggregate="mean FSU over each file system's targets (Uselton & Wright 2013, section V)",
    )
    return Table(out, evidence=ev, params=dict(bin_s=bin_s))


def widest_filesystem(fs_series: pd.DataFrame) -> pd.DataFrame:
    """The rows of the file system averaged over the most targets in :func:`fsu_by_filesystem`.

    Parameters
    ----------
    fs_series : pandas.DataFrame
        :func:`fsu_by_filesystem`'s result.

    Returns
    -------
    pandas.DataFrame
        Its rows of the file system with the most targets (ties: the most
        intervals with an FSU, then the name); no rows when it has none.
    """
    s = _series_frame(fs_series, "widest_filesystem", ("filesystem", "n_targets", "fsu_pct"))
    if s.empty:
        return s
    members = evidence_of(fs_series).get("targets") or {}
    g = s.groupby("filesystem").agg(n=("n_targets", "max"), used=("fsu_pct", "count"))
    g["members"] = [len(members.get(str(k), ())) for k in g.index]
    g = g.reset_index().sort_values(["members", "n", "used", "filesystem"],
                                    ascending=[False, False, False, True])  # fmt: skip
    return s[s["filesystem"] == g["filesystem"].iloc[0]].reset_index(drop=True)


# --------------------------------------------------------------------------- Fig. 11, Tables II/III


def _fsu_values(series, caller: str) -> np.ndarray:
    if isinstance(series, pd.Series):
        v = pd.to_numeric(series, errors="coerce").to_numpy(float)
    else:
        v = pd.to_numeric(_series_frame(series, caller)["fsu_pct"], errors="coerce").to_numpy(float)
    return v[np.isfinite(v)]


def fsu_histogram(series, *, bin_pct: float = 2.0, max_pct: float = 200.0) -> Table:
    """Histogram of FSU observations (the paper's Fig. 11: 2% bins from 0 to 200%).

    Parameters
    ----------
    series : pandas.DataFrame or pandas.Series
        :func:`fsu_series` or :func:`fsu_filesystem` output (its
        ``fsu_pct``), or a Series of FSU values [%]. Skipped (NULL)
        intervals are not observations.
    bin_pct : float, default 2.0
        Bin width. [%]
    max_pct : float, default 200.0
        Upper edge of the last regular bin; values at or above it are
        counted in one overflow row ``[max_pct, inf)`` so no observation is
        lost. [%]

    Returns
    -------
    iochar.result.Table
        ``bin_lo``, ``bin_hi`` [%], ``count`` and ``share`` (of all
        observations). Bins are ``[lo, hi)``. ``evidence``: ``n``,
        ``bin_pct``, ``max_pct``, ``overflow`` (count >= max_pct),
        ``median_pct``.
    """
    caller = "fsu_histogram"
    width = check_real(bin_pct, "bin_pct", caller, "a positive number [%]", low=0.0, low_open=True)
    top = check_real(
        max_pct, "max_pct", caller, "a positive number [%] >= bin_pct", low=0.0, low_open=True
    )
    if top < width:
        raise ParameterError("max_pct", caller, "a positive number [%] >= bin_pct", max_pct)
    v = _fsu_values(series, caller)
    nb = int(math.ceil(top / width - 1e-9))
    edges = np.arange(nb + 1) * width
    edges[-1] = top
    counts = np.zeros(nb, np.int64)
    inside = v < top
    idx = np.minimum((v[inside] / width).astype(np.int64), nb - 1)
    np.add.at(counts, idx[idx >= 0], 1)
    over = int((~inside).sum())
    lo = np.r_[edges[:-1], top]
    hi = np.r_[edges[1:], math.inf]
    cnt = np.r_[counts, over]
    n = len(v)
    out = pd.DataFrame(
        {"bin_lo": lo, "bin_hi": hi, "count": cnt, "share": cnt / n if n else np.zeros(len(cnt))}
    )
    return Table(
        out,
        evidence={
            "n": int(n),
            "bin_pct": width,
            "max_pct": top,
            "overflow": over,
            "median_pct": float(np.median(v)) if n else math.nan,
            "figure": "Uselton & Wright 2013, Fig. 11",
        },
    )


def load_table(series, *, idle_pct: float = 2.0, busy_pct: float = 30.0) -> Table:
    """Idle / moderate / busy observations with optimal vs sub-optimal I/Os (Tables II, III).

    Parameters
    ----------
    series : pandas.DataFrame
        :func:`fsu_series` or :func:`fsu_filesystem` output (``fsu_pct``,
        ``optimal_ios``, ``suboptimal_ios``); skipped intervals are left out.
    idle_pct : float, default 2.0
        FSU below this is idle. [%]
    busy_pct : float, default 30.0
        FSU above this is busy; moderate is ``idle_pct <= FSU <= busy_pct``. [%]

    Returns
    -------
    iochar.result.Table
        Indexed ``idle``, ``moderate``, ``busy``: ``fsu_range``, ``n_obs``,
        ``pct_obs`` (share of observations [%]), ``optimal_ios``,
        ``suboptimal_ios``, ``pct_opt`` and ``pct_sub`` (share of the
        category's I/Os [%]). ``evidence["optimal_bytes"]`` says what optimal
        meant.
    """
    caller = "load_table"
    s = _series_frame(series, caller, ("fsu_pct", "optimal_ios", "suboptimal_ios"))
    lo = check_real(idle_pct, "idle_pct", caller, "a number >= 0 [%]", low=0.0, low_open=False)
    hi = check_real(
        busy_pct, "busy_pct", caller, "a number [%] >= idle_pct", low=0.0, low_open=False
    )
    if hi < lo:
        raise ParameterError("busy_pct", caller, "a number [%] >= idle_pct", busy_pct)
    f = pd.to_numeric(s["fsu_pct"], errors="coerce").to_numpy(float)
    ok = np.isfinite(f)
    opt = pd.to_numeric(s["optimal_ios"], errors="coerce").fillna(0).to_numpy(float)[ok]
    sub = pd.to_numeric(s["suboptimal_ios"], errors="coerce").fillna(0).to_numpy(float)[ok]
    f = f[ok]
    cat = np.where(f < lo, 0, np.where(f > hi, 2, 1))
    n = len(f)
    rows = []
    for k, (name, rng) in enumerate(
        (
            ("idle", f"0 <= F < {lo:g}"),
            ("moderate", f"{lo:g} <= F <= {hi:g}"),
            ("busy", f"{hi:g} < F"),
        )
    ):
        m = cat == k
        o, u = float(opt[m].sum()), float(sub[m].sum())
        tot = o + u
        rows.append(
            {
                "category": name,
                "fsu_range": rng,
                "n_obs": int(m.sum()),
                "pct_obs": 100.0 * m.sum() / n if n else math.nan,
                "optimal_ios": int(round(o)),
                "suboptimal_ios": int(round(u)),
                "pct_opt": 100.0 * o / tot if tot else math.nan,
                "pct_sub": 100.0 * u / tot if tot else math.nan,
            }
        )
    out = pd.DataFrame(rows).set_index("category")
    return Table(
        out,
        evidence={
            "optimal_bytes": evidence_of(series).get("optimal_bytes"),
            "observations": int(n),
            "skipped": int((~ok).sum()),
            "table": "Uselton & Wright 2013, Tables II and III",
        },
    )


# --------------------------------------------------------------------------- FSU vs bandwidth


_COUNTERS_SQL = """
WITH w AS (
  SELECT unnest($targets) AS target, unnest($t0) AS t0, unnest($t1) AS t1
), r AS (
  SELECT c.target, c.metric, c.value, c.interval_s, c.quality
  FROM counters c JOIN w ON c.target = w.target
  WHERE c.metric IN ('read_bytes', 'write_bytes') AND c.ts > w.t0 AND c.ts <= w.t1
), q AS (
  SELECT *, (({qbits}) & $exclude) = 0 AS ok FROM r
)
SELECT target,
       sum(value) FILTER (WHERE ok AND metric = 'read_bytes') AS read_bytes,
       sum(value) FILTER (WHERE ok AND metric = 'write_bytes') AS write_bytes,
       sum(interval_s) FILTER (WHERE ok AND metric = 'read_bytes') AS read_s,
       sum(interval_s) FILTER (WHERE ok AND metric = 'write_bytes') AS write_s,
       count(*) FILTER (WHERE NOT ok) AS skipped
FROM q
GROUP BY target
"""


def load_ratio(
    series: pd.DataFrame,
    model: CostModel,
    *,
    store=None,
    bandwidth: str = "size_hist",
    exclude_quality: Sequence[str] = DEFAULT_EXCLUDE,
) -> Table:
    """FSU-based load against bandwidth-based load, per target and for all targets.

    The FSU-based load of a target is ``100 * sum(busy_s) / sum(interval_s)``
    over its used intervals (the time-weighted mean FSU). The
    bandwidth-based load is the bytes moved over the same time divided by
    the model's peak bandwidth ``1/a1`` per op (Eq. 2):
    ``100 * (r1 * read_bytes + w1 * write_bytes) / seconds``. The paper
    found Hopper's ``/scratch`` "about four times as busy as we would
    estimate from a bandwidth metric alone"; ``ratio`` is that factor.

    Parameters
    ----------
    series : pandas.DataFrame
        The result of :func:`fsu_series`.
    model : CostModel
        The model the series was computed with (its ``a1`` give peak bandwidth).
    store : iochar.Store, optional
        Needed for ``bandwidth="counters"``.
    bandwidth : {"size_hist", "counters"}, default "size_hist"
        Where the bytes come from: the histograms themselves (count x bin
        size, the same intervals as the FSU), or the per-interval
        ``read_bytes`` / ``write_bytes`` counters (LMT, diskstats...) of the
        same target whose interval ends fall in the FSU series' time span
        (first interval start, last interval end]; counter rows with an
        excluded quality are left out too.
    exclude_quality : sequence of str, default ("reset", "wrap", "gap", "gap_reset", "gap_wrap")
        Counter rows with these labels are skipped (``bandwidth="counters"``).

    Returns
    -------
    iochar.result.Table
        Indexed by target plus a final ``"all"`` row (means over targets,
        as the file-system FSU): ``fsu_load_pct``, ``bw_load_pct`` [%],
        ``ratio`` (FSU / bandwidth load), ``seconds`` (time the FSU covers
        [s]), ``bw_seconds`` (time the bytes cover [s]), ``read_bytes``,
        ``write_bytes`` [bytes], ``bandwidth_from`` and ``skipped`` (rows
        left out).

    Raises
    ------
    ParameterError
        Unknown ``bandwidth``, no store for counters, or a target without
        counters in its span.
    """
    caller = "load_ratio"
    s = _series_frame(
        series,
        caller,
        ("target", "ts", "interval_s", "busy_s", "fsu_pct", "read_bytes", "write_bytes"),
    )
    _check_model(model, caller)
    _need_both_ops(model, caller)
    check_choice(
        bandwidth, "bandwidth", caller, ("size_hist", "counters"), "'size_hist' or 'counters'"
    )
    r1, w1 = model.a1_["read"], model.a1_["write"]
    used = s[s["fsu_pct"].notna()]
    if used.empty:
        raise ParameterError("series", caller, "an FSU series with used intervals", "none")
    g = used.groupby("target", sort=True, observed=True)
    per = pd.DataFrame(
        {
            "busy_s": g["busy_s"].sum(),
            "seconds": g["interval_s"].sum(),
            "hist_read_bytes": g["read_bytes"].sum(),
            "hist_write_bytes": g["write_bytes"].sum(),
            "skipped": s[s["fsu_pct"].isna()].groupby("target", observed=True).size(),
        }
    )
    per["skipped"] = per["skipped"].fillna(0).astype(np.int64)
    per["fsu_load_pct"] = 100.0 * per["busy_s"] / per["seconds"]
    if bandwidth == "size_hist":
        per["read_bytes"] = per["hist_read_bytes"]
        per["write_bytes"] = per["hist_write_bytes"]
        per["bw_seconds"] = per["seconds"]
    else:
        if store is None:
            raise ParameterError("store", caller, "a Store when bandwidth='counters'", None)
        ts = pd.to_datetime(used["ts"])
        first = (ts - pd.to_timedelta(used["interval_s"], unit="s")).groupby(used["target"]).min()
        last = ts.groupby(used["target"]).max()
        names = [str(t) for t in per.index]
        mask = _OTHER_BIT
        for q in exclude_quality:
            if q not in QUALITY_BITS or q == "ok":
                raise ParameterError("exclude_quality", caller, "known quality labels", q)
            mask |= QUALITY_BITS[q]
        cnt = store.sql(
            _COUNTERS_SQL.format(qbits=_QBITS),
            params={
                "targets": names,
                "t0": [first[t].to_pydatetime() for t in per.index],
                "t1": [last[t].to_pydatetime() for t in per.index],
                "exclude": mask,
            },
        ).df()
        cnt = cnt.set_index("target").reindex(per.index)
        missing = cnt.index[cnt["read_s"].isna() & cnt["write_s"].isna()].tolist()
        if missing:
            raise ParameterError(
                "store",
                caller,
                "read_bytes/write_bytes counters for every target in the FSU span",
                f"none for {missing[:5]}",
            )
        per["read_bytes"] = cnt["read_bytes"].fillna(0.0)
        per["write_bytes"] = cnt["write_bytes"].fillna(0.0)
        per["bw_seconds"] = cnt[["read_s", "write_s"]].max(axis=1)
        per["skipped"] += cnt["skipped"].fillna(0).astype(np.int64)
    per["bw_load_pct"] = (
        100.0 * (r1 * per["read_bytes"] + w1 * per["write_bytes"]) / per["bw_seconds"]
    )
    per["ratio"] = per["fsu_load_pct"] / per["bw_load_pct"]
    per["bandwidth_from"] = bandwidth
    cols = [
        "fsu_load_pct",
        "bw_load_pct",
        "ratio",
        "seconds",
        "bw_seconds",
        "read_bytes",
        "write_bytes",
        "bandwidth_from",
        "skipped",
    ]
    per = per[cols]
    allrow = {
        "fsu_load_pct": per["fsu_load_pct"].mean(),
        "bw_load_pct": per["bw_load_pct"].mean(),
        "seconds": per["seconds"].sum(),
        "bw_seconds": per["bw_seconds"].sum(),
        "read_bytes": per["read_bytes"].sum(),
        "write_bytes": per["write_bytes"].sum(),
        "bandwidth_from": bandwidth,
        "skipped": int(per["skipped"].sum()),
    }
    allrow["ratio"] = allrow["fsu_load_pct"] / allrow["bw_load_pct"]
    out = pd.concat([per, pd.DataFrame([allrow], index=["all"])[cols]])
    out.index.name = "target"
    return Table(out, evidence={"model": model._summary(), "bandwidth": bandwidth})


def load_ratio_or_empty(series: pd.DataFrame, model: CostModel) -> pd.DataFrame:
    """:func:`load_ratio` with the bytes from the histograms, or no rows when nothing was used.

    :func:`load_ratio` refuses a series without a used interval (every interval
    skipped, or none at all); a notebook shows an empty table and says why instead.

    Parameters
    ----------
    series : pandas.DataFrame
        The result of :func:`fsu_series`.
    model : CostModel
        The model the series was computed with.

    Returns
    -------
    pandas.DataFrame
        Per target plus an ``"all"`` row, as :func:`load_ratio` with
        ``bandwidth="size_hist"``; no rows, with the columns ``fsu_load_pct``,
        ``bw_load_pct`` [%], ``ratio``, ``seconds`` and ``bw_seconds`` [s], when
        the series has no used interval.
    """
    if series["fsu_pct"].notna().any():
        return load_ratio(series, model)
    cols = ["fsu_load_pct", "bw_load_pct", "ratio", "seconds", "bw_seconds"]
    return pd.DataFrame(columns=cols, index=pd.Index([], name="target"), dtype=float)


# --------------------------------------------------------------------------- Fig. 12

_SIZES_SQL = """
SELECT op, size_bytes,
       sum(count)::BIGINT AS count
FROM size_hist {where}
GROUP BY op, size_bytes
ORDER BY op, size_bytes
"""


def size_histogram(
    store,
    *,
    section: str | None = DISK_IO_SIZE,
    targets: Sequence[str] | None = None,
    source_id: int | None = None,
    start=None,
    end=None,
    exclude_quality: Sequence[str] = DEFAULT_EXCLUDE,
) -> Table:
    """Composite histogram of disk I/O counts per size bin and op (the paper's Fig. 12).

    Parameters
    ----------
    store : iochar.Store
        The database.
    section : str or None, default "disk I/O size"
        ``size_hist.section`` to use; None: no filter.
    targets : sequence of str, optional
        Only these targets.
    source_id : int, optional
        Only rows from this input.
    start, end : str, datetime or None, optional
        Only intervals ending in ``(start, end]`` (UTC).
    exclude_quality : sequence of str, default ("reset", "wrap", "gap", "gap_reset", "gap_wrap")
        Rows with these ``quality`` labels are left out (their count is in
        ``evidence["skipped_ios"]``).

    Returns
    -------
    iochar.result.Table
        ``op``, ``size_bytes`` (bin [bytes]), ``count`` (I/Os), ``share``
        (of all I/Os) and ``share_op`` (of the op's I/Os).
    """
    caller = "size_histogram"
    targets = _str_list(targets, "targets", caller)
    unknown = [q for q in exclude_quality if q not in QUALITY_BITS or q == "ok"]
    if isinstance(exclude_quality, str) or unknown:
        raise ParameterError("exclude_quality", caller, "known quality labels", exclude_quality)
    where, params = _where(section, targets, source_id, start, end, caller)
    params["excl"] = list(exclude_quality) or ["-"]
    cond = "NOT list_contains($excl, coalesce(quality, 'ok')) AND op IN ('read', 'write')"
    where_ok = (where + " AND " + cond) if where else "WHERE " + cond
    df = store.sql(_SIZES_SQL.format(where=where_ok), params=params).df()
    cond_bad = "list_contains($excl, coalesce(quality, 'ok'))"
    where_bad = (where + " AND " + cond_bad) if where else "WHERE " + cond_bad
    bad = store.sql(
        f"SELECT coalesce(sum(count), 0)::BIGINT FROM size_hist {where_bad}", params=params
    ).fetchall()[0][0]
    total = df["count"].sum()
    df["share"] = df["count"] / total if total else 0.0
    df["share_op"] = df["count"] / df.groupby("op")["count"].transform("sum").replace(0, np.nan)
    return Table(
        df,
        sql=_SIZES_SQL.format(where=where_ok),
        evidence={
            "section": section,
            "skipped_ios": int(bad),
            "exclude_quality": list(exclude_quality),
            "figure": "Uselton & Wright 2013, Fig. 12",
        },
    )
