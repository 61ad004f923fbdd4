"""Seeded periodic I/O signals whose true period is known: jitter, drift, several periods.

Miller & Katz (1991, section 5.3) describe the I/O of iterative programs as
bursts that "came in cycles" matching the program's iterations. Real
iterations do not last exactly the same time: the length of each cycle
varies (jitter) and the typical length may change over a run (drift). The
generators here build such bytes-per-bin signals with the truth that a period
detector (:func:`iochar.analyze.cycles.find_periods`) should report:

- :func:`burst_train`: bursts of ``duty`` x the cycle length at the start of
  every cycle; cycle ``i`` lasts ``period x (1 + drift x (c_i - 1/2)) x
  (1 + u_i)`` samples, ``u_i`` uniform in ``[-jitter, +jitter]`` (independent
  from cycle to cycle, so that burst onsets wander like a random walk, as
  they do when each iteration's compute time varies) and ``c_i`` the cycle's
  position in the span (0 at the start, 1 at the end);
- :func:`true_period`: the mean cycle length actually realised in the signal
  (first to last onset inside the span over the number of cycles between
  them). With jitter the realised mean differs from the nominal ``period``
  by about ``jitter / sqrt(3 x cycles)``; it is the period a detector can
  know;
- :func:`benchmark_signals`: a seeded mixed set (jittered 0-25%, drifting,
  two interleaved periods, few cycles, and non-periodic noise controls) with
  the true periods of each signal, for benchmarks and calibration tests.

References
----------
E. L. Miller and R. H. Katz, "Input/output behavior of supercomputing
applications", Supercomputing '91, section 5.3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "Signal",
    "burst_train",
    "true_period",
    "two_periods",
    "jittered_set",
    "benchmark_signals",
    "KINDS",
]

#: Categories of :func:`benchmark_signals`.
KINDS = ("jitter", "drift", "multi", "few", "noise")


@dataclass(frozen=True)
class Signal:
    """One generated signal and its truth.

    Attributes
    ----------
    kind : str
        Category (one of :data:`KINDS`).
    label : str
        What was generated (e.g. ``"jitter 15%"``).
    x : numpy.ndarray
        Values per sample (one sample per second).
    truth : tuple of float
        True mean periods [samples = s]; empty for noise (no period).
    jitter : float
        Half-width of the uniform cycle-length variation (0.15 = +-15%).
    """

    kind: str
    label: str
    x: np.ndarray
    truth: tuple[float, ...]
    jitter: float = 0.0


def burst_train(
    n: int,
    period: float,
    rng: np.random.Generator,
    *,
    duty: float = 0.1,
    jitter: float = 0.0,
    drift: float = 0.0,
    height: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Bursts at the start of every cycle; cycle lengths jitter and drift.

    Parameters
    ----------
    n : int
        Samples (one per second).
    period : float
        Nominal cycle length [samples].
    rng : numpy.random.Generator
        Source of randomness (first onset, cycle lengths).
    duty : float, default 0.1
        Burst length as a share of the nominal period (at least one sample).
    jitter : float, default 0.0
        Each cycle's length is multiplied by ``1 + u``, ``u`` uniform in
        ``[-jitter, jitter]``, independently per cycle.
    drift : float, default 0.0
        Relative change of the nominal cycle length from the start to the end
        of the span (0.2: from 0.9 to 1.1 x ``period``).
    height : float, default 1.0
        Signal value inside a burst [signal unit per sample].

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        The signal (``n`` values) and the burst onsets inside it [samples].
    """
    cycles = int(n / (period * (1 - abs(drift) / 2))) + 3
    pos = np.arange(cycles) * period / n  # approximate position of each cycle in the span
    nominal = period * (1 + drift * (np.clip(pos, 0, 1) - 0.5))
    lengths = nominal * (1 + rng.uniform(-jitter, jitter, cycles))
    onsets = rng.uniform(0, lengths[0]) + np.concatenate(([0.0], np.cumsum(lengths)[:-1]))
    onsets = onsets[onsets < n]
    width = max(1.0, duty * period)
    x = np.zeros(n + 1)
    start = np.clip(onsets, 0, n)
    stop = np.clip(onsets + width, 0, n)
    for edge, sign in ((start, 1.0), (stop, -1.0)):  # exact fractional burst edges
        i = np.floor(edge).astype(np.int64)
        frac = edge - i
        np.add.at(x, i, sign * (1 - frac))
        np.add.at(x, np.minimum(i + 1, n), sign * frac)
    return height * np.cumsum(x)[:n], onsets


def true_period(onsets: np.ndarray) -> float:
    """Mean realised cycle length: (last onset - first onset) / (onsets - 1) [samples].

    Parameters
    ----------
    onsets : numpy.ndarray
        Burst onsets inside the signal [samples], ascending.

    Returns
    -------
    float
        The mean interval between consecutive onsets (NaN with fewer than 2).
    """
    if len(onsets) < 2:
        return float("nan")
    return float((onsets[-1] - onsets[0]) / (len(onsets) - 1))


def _log_uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))


def two_periods(rng: np.random.Generator, n: int) -> tuple[float, float]:
    """Two periods of interleaved trains in ``n`` samples, neither a near multiple of
    the other [samples].

    The first is log-uniform for 8 to 300 cycles (at most ``n / 12``); the second
    is it divided or multiplied by a ratio in [1.6, 6] at least 0.15 from an integer
    (a harmonic ratio would make one comb), kept at 4 samples or more; both are
    halved when the longer would fit fewer than 5 times.
    """
    p1 = n / _log_uniform(rng, 8, min(300, n / 12))
    ratio = rng.uniform(1.6, 6.0)
    while abs(ratio - round(ratio)) < 0.15:
        ratio = rng.uniform(1.6, 6.0)
    p2 = p1 / ratio if p1 / ratio >= 4 else p1 * ratio
    if n / max(p1, p2) < 5:
        p1, p2 = p1 / 2, p2 / 2
    return p1, p2


def _noise(rng: np.random.Generator, n: int, i: int) -> tuple[str, np.ndarray]:
    kind = ("white", "poisson", "one burst", "on/off", "red")[i % 5]
    if kind == "white":
        return kind, rng.normal(5, 1, n)
    if kind == "poisson":
        return kind, rng.poisson(rng.uniform(0.05, 3), n).astype(float)
    if kind == "one burst":
        a = int(rng.uniform(0.1, 0.7) * n)
        x = np.zeros(n)
        x[a : a + int(rng.uniform(0.01, 0.2) * n)] = 1.0
        return kind, x + rng.normal(0, 0.02, n)
    if kind == "on/off":
        dur = rng.exponential(n / 100, 400)  # alternating on and off stretches
        edges = np.cumsum(dur).astype(np.int64)
        state = np.zeros(n + 1)
        on = edges[edges < n]
        np.add.at(state, on, np.where(np.arange(len(on)) % 2 == 0, 1.0, -1.0))
        return kind, np.cumsum(state)[:n] + rng.normal(0, 0.05, n)
    from scipy.signal import lfilter

    x = lfilter([1.0], [1.0, -0.95], rng.normal(size=n))  # red noise: AR(1), 0.95
    return kind, x


def jittered_set(
    count: int, jitter: float, seed: int, lengths: tuple[int, ...] = (1_000, 10_000, 100_000)
) -> list[Signal]:
    """``count`` single burst trains with cycle lengths +-``jitter`` (5 to 500 cycles).

    Parameters
    ----------
    count : int
        Signals.
    jitter : float
        Half-width of the uniform cycle-length variation.
    seed : int
        Seed of the generator.
    lengths : tuple of int
        Signal lengths [samples], used in turn.

    Returns
    -------
    list of Signal
        Kind ``"jitter"``, truth the realised mean period.
    """
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n = lengths[i % len(lengths)]
        period = n / _log_uniform(rng, 5, min(500, n / 8))
        x, on = burst_train(n, period, rng, duty=rng.uniform(0.02, 0.3), jitter=jitter)
        x = x + rng.normal(0, 0.02, n)
        out.append(Signal("jitter", f"jitter {jitter:.0%}", x, (true_period(on),), jitter))
    return out


def benchmark_signals(
    per_kind: int = 20, seed: int = 17, lengths: tuple[int, ...] = (1_000, 10_000, 100_000)
) -> list[Signal]:
    """A seeded mixed set of signals with known periods (for benchmarks and calibration).

    Per kind, ``per_kind`` signals of the given lengths in turn:

    - ``jitter``: one burst train (5 to 500 cycles, duty 2-30%), cycle
      lengths +-0, 5, 10, 15, 20 or 25% in turn;
    - ``drift``: one burst train whose period changes by 10 to 40% from start
      to end, with +-5% jitter;
    - ``multi``: two interleaved burst trains with non-harmonic periods
      (ratio 1.6 to 6, 8 to 300 cycles of the shorter), +-0 to 10% jitter:
      both are true periods;
    - ``few``: one burst train of 3 to 8 cycles, +-0 to 15% jitter;
    - ``noise``: white, Poisson, one burst, on/off and red noise: no period.

    Parameters
    ----------
    per_kind : int, default 20
        Signals per kind.
    seed : int, default 17
        Seed of the generator.
    lengths : tuple of int
        Signal lengths [samples].

    Returns
    -------
    list of Signal
        The signals with their truth (realised mean periods).
    """
    rng = np.random.default_rng(seed)
    out: list[Signal] = []
    levels = (0.0, 0.05, 0.10, 0.15, 0.20, 0.25)
    for kind in KINDS:
        for i in range(per_kind):
            n = lengths[i % len(lengths)]
            duty = rng.uniform(0.02, 0.3)
            noise = rng.normal(0, 0.02, n)
            if kind == "jitter":
                j = levels[i % len(levels)]
                period = n / _log_uniform(rng, 5, min(500, n / 8))
                x, on = burst_train(n, period, rng, duty=duty, jitter=j)
                out.append(Signal(kind, f"jitter {j:.0%}", x + noise, (true_period(on),), j))
            elif kind == "drift":
                d = rng.uniform(0.1, 0.4) * rng.choice([-1.0, 1.0])
                period = n / _log_uniform(rng, 8, min(300, n / 10))
                x, on = burst_train(n, period, rng, duty=duty, jitter=0.05, drift=d)
                out.append(Signal(kind, f"drift {d:+.0%}", x + noise, (true_period(on),), 0.05))
            elif kind == "multi":
                j = (0.0, 0.05, 0.10)[i % 3]
                p1, p2 = two_periods(rng, n)
                a, on1 = burst_train(n, p1, rng, duty=duty, jitter=j)
                b, on2 = burst_train(
                    n, p2, rng, duty=rng.uniform(0.02, 0.2), jitter=j, height=rng.uniform(0.5, 2)
                )
                truth = (true_period(on1), true_period(on2))
                out.append(Signal(kind, f"two trains +-{j:.0%}", a + b + noise * 2.5, truth, j))
            elif kind == "few":
                j = (0.0, 0.05, 0.10, 0.15)[i % 4]
                period = n / rng.uniform(3, 8)
                x, on = burst_train(n, period, rng, duty=duty, jitter=j)
                out.append(Signal(kind, f"few cycles +-{j:.0%}", x + noise, (true_period(on),), j))
            else:
                label, x = _noise(rng, n, i)
                out.append(Signal(kind, label, x, ()))
    return out
