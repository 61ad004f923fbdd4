"""The few special functions :mod:`iochar.analyze.cycles` needs, without SciPy.

Importing ``scipy.special`` (or ``scipy.fft``, which imports it) takes 0.15-0.5 s, more
than the whole of ``iochar summary``'s work on a Darshan DXT log; cycles needs four
functions of it, each with a short exact form:

- :func:`gammaln`: ``ln |Gamma(x)|`` element-wise: from 10 on Stirling's series
  (Abramowitz & Stegun 6.1.41, to the x^-13 term, whose size there is under 1e-16),
  below 10 the C library's ``lgamma`` (:func:`math.lgamma`); ``+inf`` at the poles
  0, -1, -2, ... as ``scipy.special.gammaln`` gives.
- :func:`gammaincc_int`: the regularized upper incomplete gamma function
  ``Q(a, x) = Gamma(a, x) / Gamma(a)`` for a whole ``a >= 1``, by its finite sum
  ``Q(a, x) = exp(-x) sum_{k<a} x^k / k!`` (Abramowitz & Stegun 6.5.13; the Poisson
  distribution's lower tail), each term in logarithms so that no power overflows.
- :func:`betaincc`: the regularized upper incomplete beta function
  ``1 - I_x(a, b)``, by the continued fraction of ``I_x(a, b)`` (Abramowitz & Stegun
  26.5.8) evaluated with the modified Lentz method (Press et al., *Numerical Recipes*,
  3rd ed., section 6.4), on the side of ``x`` where it converges fast
  (``x < (a + 1) / (a + b + 2)``; else ``I_{1-x}(b, a)``, A&S 26.5.2).
- :func:`next_fast_len`: SciPy's rule for a fast FFT length (``scipy.fft.next_fast_len``):
  the least ``n >= target`` whose prime factors are 2, 3 and 5 (``real=True``) or 2, 3,
  5, 7 and 11 (``real=False``); numpy's pocketfft (numpy >= 2) is fast on the same sizes.

All are checked against SciPy in ``tests/analyze/test_special.py``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = ["gammaln", "gammaincc_int", "betaincc", "next_fast_len"]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
#: Stirling's series of ln Gamma: coefficients of x^-1, x^-3, ... x^-9 (A&S 6.1.41).
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188)
#: From here on the series to x^-9 is exact to under 1e-16 relative (Cephes' ``lgam``).
_STIRLING_FROM = 13.0
#: Arrays up to this size go element by element through the C library's lgamma (faster
#: than the vectorized series below about 100 elements).
_SMALL = 64


def _lgamma_or_pole(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # 0, -1, -2, ...: a pole
        return math.inf


_LGAMMA = np.frompyfunc(_lgamma_or_pole, 1, 1)


def _stirling(a: np.ndarray) -> np.ndarray:
    """ln Gamma(a) by Stirling's series, a >= 13 and finite."""
    r = 1.0 / a
    r2 = r * r
    c1, c3, c5, c7, c9 = _STIRLING
    poly = (((c9 * r2 + c7) * r2 + c5) * r2 + c3) * r2 + c1
    return (a - 0.5) * np.log(a) - a + (_HALF_LOG_2PI + poly * r)


def gammaln(x: Any) -> Any:
    """``ln |Gamma(x)|``, element-wise (``scipy.special.gammaln``).

    Small arrays and arguments under 13: the C library's ``lgamma``
    (:func:`math.lgamma`); from 13 on in larger arrays, Stirling's series to the x^-9
    term (A&S 6.1.41), vectorized, as Cephes' ``lgam`` (behind SciPy's) does from 13
    on: relative error under 1e-15. ``+inf`` at the poles 0, -1, -2, ...

    Parameters
    ----------
    x : float or array_like
        Arguments.

    Returns
    -------
    float or numpy.ndarray
        A float for a scalar, else an array of ``x``'s shape.
    """
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 0:
        return _lgamma_or_pole(float(a))
    if a.size <= _SMALL:
        values = a.ravel().tolist()
        try:
            got = [math.lgamma(v) for v in values]
        except ValueError:  # a pole
            got = [_lgamma_or_pole(v) for v in values]
        return np.array(got, dtype=np.float64).reshape(a.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        out = _stirling(np.maximum(a, _STIRLING_FROM))
    other = ~(a >= _STIRLING_FROM) | np.isinf(a)
    if other.any():
        out[other] = _LGAMMA(a[other]).astype(np.float64)
    return out


def gammaincc_int(a: int, x: Any) -> Any:
    """Regularized upper incomplete gamma ``Q(a, x)`` for a whole ``a >= 1``
    (``scipy.special.gammaincc(a, x)``).

    ``Q(a, x) = sum_{k=0}^{a-1} exp(k ln x - x - ln k!)`` (A&S 6.5.13): ``a`` terms, each
    in (0, 1], so the sum is exact to a few ulp for any ``x >= 0``.

    Parameters
    ----------
    a : int
        Shape, a whole number >= 1.
    x : float or array_like
        Arguments, >= 0 (NaN where negative).

    Returns
    -------
    float or numpy.ndarray
        A float for a scalar, else an array of ``x``'s shape.
    """
    a = int(a)
    if a < 1:
        raise ValueError(f"gammaincc_int needs a whole a >= 1, not {a}")
    xs = np.asarray(x, dtype=np.float64)
    flat = xs.reshape(-1)
    k = np.arange(a, dtype=np.float64)
    logfact = np.array([math.lgamma(i + 1.0) for i in range(a)])
    with np.errstate(divide="ignore", invalid="ignore"):
        lx = np.log(flat)
        # 0 * ln 0 is 0 here: Q(a, 0) = 1 (the k = 0 term)
        powers = np.where(k[None, :] == 0, 0.0, k[None, :] * lx[:, None])
        terms = np.exp(powers - flat[:, None] - logfact[None, :])
    out = np.minimum(terms.sum(axis=1), 1.0)
    out = np.where(flat < 0, np.nan, np.where(np.isposinf(flat), 0.0, out))
    out = out.reshape(xs.shape)
    return float(out) if out.ndim == 0 else out


def _beta_cf(a: float, b: float, x: float) -> float:
    """Continued fraction of ``I_x(a, b)`` (A&S 26.5.8), modified Lentz (NR 3rd ed., 5.2)."""
    tiny, eps = 1e-300, 1e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        step = d * c
        h *= step
        if abs(step - 1.0) <= eps:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge ({a}, {b}, {x})")


def _stirling_delta(x: float) -> float:
    """``ln Gamma(x) - ((x - 1/2) ln x - x + ln(2 pi) / 2)`` for x >= 10 (Stirling's
    series, A&S 6.1.41, to the x^-13 term: under 1e-16 there)."""
    x2 = 1.0 / (x * x)
    poly = -691 / 360360 + x2 / 156
    for c in (1 / 1188, -1 / 1680, 1 / 1260, -1 / 360, 1 / 12):
        poly = c + x2 * poly
    return poly / x


def _log_power_terms(a: float, b: float, x: float, y: float) -> float:
    """``ln(x^a y^b / B(a, b))``, y = 1 - x.

    With ``a`` and ``b`` of 10 or more the log-gammas of ``B(a, b)`` are large and
    cancel (about 1e-9 relative error at a = 3e5); Stirling's series puts the terms in
    the form ``a ln(x (a + b) / a) + b ln(y (a + b) / b) + ln(a b / (2 pi (a + b))) / 2``
    minus the series' corrections, each small where the tail is not negligible (the
    power terms of Boost.Math's ``ibeta_power_terms``; error about 1e-12 there).
    """
    if min(a, b) < 10.0:
        lbeta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
        return a * math.log(x) + b * math.log(y) - lbeta
    s = a + b
    d = x * b - y * a  # x (a + b) - a
    return (
        a * math.log1p(d / a)
        + b * math.log1p(-d / b)
        + 0.5 * math.log(a * b / (2.0 * math.pi * s))
        - (_stirling_delta(a) + _stirling_delta(b) - _stirling_delta(s))
    )


def betaincc(a: float, b: float, x: float) -> float:
    """Regularized upper incomplete beta ``1 - I_x(a, b)`` (``scipy.special.betaincc``).

    Parameters
    ----------
    a, b : float
        Shapes, > 0.
    x : float
        Argument in [0, 1] (NaN outside, as SciPy).

    Returns
    -------
    float
    """
    a, b, x = float(a), float(b), float(x)
    if not (a > 0 and b > 0) or not (0.0 <= x <= 1.0):
        return math.nan
    if x == 0.0:
        return 1.0
    if x == 1.0:
        return 0.0
    y = 1.0 - x
    log_front = _log_power_terms(a, b, x, y)
    if x < (a + 1.0) / (a + b + 2.0):
        return 1.0 - math.exp(log_front) * _beta_cf(a, b, x) / a
    return math.exp(log_front) * _beta_cf(b, a, y) / b


@lru_cache(maxsize=256)
def _smooth_above(target: int, primes: tuple[int, ...]) -> int:
    best = 1 << (target - 1).bit_length()  # a power of two is always smooth
    odd = [1]
    for p in primes[1:]:  # every product of the odd primes below best
        more = []
        for m in odd:
            while m < best:
                more.append(m)
                m *= p
        odd = more
    for m in odd:
        q = -(-target // m)  # the least power of two times m that reaches target
        best = min(best, m << (q - 1).bit_length())
    return best


def next_fast_len(target: int, real: bool = False) -> int:
    """Least FFT length ``>= target`` that is fast (``scipy.fft.next_fast_len``'s rule).

    Parameters
    ----------
    target : int
        Least length, >= 1.
    real : bool, default False
        A real transform (prime factors 2, 3, 5) or a complex one (2, 3, 5, 7, 11).

    Returns
    -------
    int
    """
    target = int(target)
    if target < 1:
        raise ValueError(f"next_fast_len needs a target >= 1, not {target}")
    return _smooth_above(target, (2, 3, 5) if real else (2, 3, 5, 7, 11))
