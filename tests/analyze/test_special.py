"""iochar.analyze._special against SciPy, the functions it stands in for in cycles.

SciPy is the reference: ``scipy.special.gammaln``, ``gammaincc`` and ``betaincc`` and
``scipy.fft.next_fast_len`` on the arguments cycles gives them (band sizes, Fisher
statistics of up to 64 harmonics, the Beta law of a noise envelope's coverage over
3 to 1e5 cycles) and beyond.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from iochar.analyze import _special as S

sfft = pytest.importorskip("scipy.fft", reason="SciPy is the reference")
ss = pytest.importorskip("scipy.special", reason="SciPy is the reference")


@pytest.mark.parametrize("real", [True, False])
def test_next_fast_len_is_scipys(real):
    got = [S.next_fast_len(n, real=real) for n in range(1, 20_001)]
    assert got == [sfft.next_fast_len(n, real=real) for n in range(1, 20_001)]
    rng = np.random.default_rng(5)
    big = [int(n) for n in rng.integers(20_000, 10**10, 500)] + [2**31 - 1, 3**19 + 1]
    assert [S.next_fast_len(n, real) for n in big] == [sfft.next_fast_len(n, real) for n in big]


def test_next_fast_len_rejects_zero():
    with pytest.raises(ValueError):
        S.next_fast_len(0)


def test_gammaln_is_scipys():
    x = np.concatenate(
        [np.linspace(0.01, 60, 3001), np.geomspace(1e-8, 1e9, 3000), [-0.5, -2.5, -7.25]]
    )
    got, want = S.gammaln(x), ss.gammaln(x)
    np.testing.assert_allclose(got, want, rtol=2e-15, atol=2e-15)
    # small arrays and scalars take the element-wise path: the same values
    np.testing.assert_allclose(S.gammaln(x[:20]), want[:20], rtol=2e-15, atol=2e-15)
    assert S.gammaln(5.0) == pytest.approx(math.log(24.0), rel=1e-15)
    # poles, infinity and NaN as SciPy gives them, in small and large arrays
    odd = np.array([0.0, -1.0, -3.0, np.inf, np.nan])
    for arr in (odd, np.concatenate([odd, np.arange(40.0, 80.0)])):
        np.testing.assert_allclose(S.gammaln(arr), ss.gammaln(arr), rtol=2e-15)
    assert S.gammaln(np.ones((2, 3))).shape == (2, 3)


@pytest.mark.parametrize("a", [1, 2, 3, 4, 7, 16, 31, 64])
def test_gammaincc_int_is_scipys(a):
    x = np.concatenate([[0.0], np.geomspace(1e-10, 5e4, 4000), [np.inf]])
    got, want = S.gammaincc_int(a, x), ss.gammaincc(a, x)
    keep = want > 1e-300
    np.testing.assert_allclose(got[keep], want[keep], rtol=3e-13)
    assert np.all(got[~keep] <= 1e-299)
    assert S.gammaincc_int(a, 2.5) == pytest.approx(float(ss.gammaincc(a, 2.5)), rel=1e-13)


def test_gammaincc_int_needs_a_whole_shape():
    with pytest.raises(ValueError):
        S.gammaincc_int(0, 1.0)


def test_betaincc_is_scipys_on_the_envelope_law():
    # the Beta law of cycles._envelope_pval: mean pi/4 + 0.2/c, sd min(0.07, 0.2/sqrt(c))
    worst = 0.0
    for c in np.geomspace(1.0, 1e5, 40):
        mu = math.pi / 4 + 0.2 / c
        sd = min(0.07, 0.2 / math.sqrt(c))
        nu = mu * (1 - mu) / sd**2 - 1
        for cov in np.linspace(0.0, 1.0, 101):
            want = float(ss.betaincc(mu * nu, (1 - mu) * nu, cov))
            got = S.betaincc(mu * nu, (1 - mu) * nu, cov)
            if want > 1e-300:
                worst = max(worst, abs(got - want) / want)
            else:
                assert got <= 1e-299
    assert worst < 1e-10


@pytest.mark.parametrize(
    ("a", "b"), [(0.5, 0.5), (1.0, 1.0), (2.0, 5.0), (9.5, 30.0), (40.0, 3.0), (1e4, 2e3)]
)
def test_betaincc_is_scipys_elsewhere(a, b):
    for x in (0.0, 1e-6, 0.1, 0.3, 0.5, 0.7, 0.83, 0.9, 0.999, 1.0):
        want = float(ss.betaincc(a, b, x))
        assert S.betaincc(a, b, x) == pytest.approx(want, rel=1e-11, abs=1e-300)
    assert math.isnan(S.betaincc(a, b, 1.5))
