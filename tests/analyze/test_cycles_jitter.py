"""Periods of I/O cycles whose lengths vary (jitter, drift), and calibrated confidence.

Real iterations do not last the same time (Miller & Katz 1991, section 5.3:
I/O "came in cycles" matching the program's iterations). The signals here come
from :mod:`iochar.datasets.signals` (burst trains whose cycle lengths are
drawn uniformly within +-jitter of the period, independently per cycle, or
drift along the run), with their truth: the mean cycle length actually
realised (first to last burst onset over the cycles between them). A reported
period is **right** when it is within 10% of a true mean period (any of them
for two interleaved trains); every period reported for noise is wrong.

The real captures are ``data/strace-jitter/*.strace`` (``jitter_app``: 150 ms
+-15% and 100 ms +-25% iterations, a state write each) and
``data/strace/ckpt_tt.strace`` (``ckpt_app -i 40 -c 300 -k 2``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from iochar.analyze import cycles as C
from iochar.analyze.cycles import find_periods, signal_from_ops
from iochar.datasets.signals import benchmark_signals, burst_train, jittered_set, true_period

DATA = Path(__file__).resolve().parents[2] / "data"
RIGHT = 0.10  # a period is right within 10% of a true mean period


def right(period, truth):
    return any(abs(period - t) <= RIGHT * t for t in truth)


# --------------------------------------------------------------------------- generators


def test_true_period_is_the_realised_mean_cycle():
    rng = np.random.default_rng(0)
    x, on = burst_train(20000, 100.0, rng, jitter=0.15)
    d = np.diff(on)
    assert math.isclose(true_period(on), d.mean(), rel_tol=1e-12)
    assert 0.06 < d.std() / d.mean() < 0.11  # uniform +-15%: 8.7% relative std
    assert x.max() == pytest.approx(1.0) and len(x) == 20000
    y, on2 = burst_train(20000, 100.0, rng, drift=0.4)  # 80 -> 120 samples per cycle
    d2 = np.diff(on2)
    assert d2[:20].mean() < 90 and d2[-20:].mean() > 110


# --------------------------------------------------------------------------- jitter


def test_fifteen_percent_jitter_periods_are_right_and_sure():
    # 60 signals of 5 to 500 cycles at +-15%: at least 95% get the right period
    # first, and no period at confidence >= 0.9 is wrong
    sigs = [s for seed in (1, 2, 3) for s in jittered_set(20, 0.15, seed)]
    ok, wrong_sure = 0, []
    for s in sigs:
        P = find_periods(s.x).periods
        ok += bool(len(P)) and right(P.period_s.iloc[0], s.truth)
        sure = P[P.confidence >= 0.9].period_s
        wrong_sure += [(s.truth, p) for p in sure if not right(p, s.truth)]
    assert ok >= 57, ok
    assert wrong_sure == []


def test_fifteen_percent_jitter_on_held_out_seeds():
    """At least 95% right and nothing wrong at confidence >= 0.9, over 10 unseen seeds.

    Issue 17 item 7: 200 burst trains of 5 to 500 cycles, cycle lengths +-15%
    (uniform, per cycle), 10^3 to 10^6 samples (``jittered_set`` with the
    benchmark's lengths). The rules of issue 17's follow-up (a line is
    evidence for one period only, the rescue gate at half the threshold, the
    autocorrelation within half a cycle, sub-harmonics that are the line's
    own skirt) were tuned on seeds 4-13 and 20-29; seeds 30-39 were not
    looked at before this test (measured: 191 of 200 right, none wrong at
    >= 0.9; 4-13: 193, 20-29: 189).
    """
    lengths = (1_000, 10_000, 100_000, 1_000_000)
    ok, total, wrong_sure = 0, 0, []
    for seed in range(30, 40):
        for s in jittered_set(20, 0.15, seed, lengths):
            P = find_periods(s.x).periods
            total += 1
            ok += bool(len(P)) and right(P.period_s.iloc[0], s.truth)
            sure = P[P.confidence >= 0.9].period_s
            wrong_sure += [(seed, s.truth, p) for p in sure if not right(p, s.truth)]
    assert total == 200 and ok >= 190, ok
    assert wrong_sure == []


def test_jitter_estimate_follows_the_cycle_lengths():
    rng = np.random.default_rng(5)
    x, on = burst_train(30000, 150.0, rng, duty=0.1, jitter=0.15)
    top = find_periods(x + rng.normal(0, 0.02, 30000)).periods.iloc[0]
    d = np.diff(on)
    assert abs(top.period_s - d.mean()) <= 0.01 * d.mean()
    assert abs(top.jitter - d.std() / d.mean()) < 0.35 * d.std() / d.mean()


def test_drifting_period_gives_the_mean_cycle():
    rng = np.random.default_rng(8)
    x, on = burst_train(20000, 100.0, rng, duty=0.1, jitter=0.05, drift=0.35)
    P = find_periods(x + rng.normal(0, 0.02, 20000)).periods
    assert len(P) == 1 and right(P.period_s.iloc[0], (true_period(on),))


# --------------------------------------------------------------------------- calibration


def test_confidence_is_calibrated():
    # reliability: of the periods reported at confidence >= c, at least a
    # fraction c are right (c = 0.5, 0.7, 0.9), over jittered (0-25%),
    # drifting, two-period, few-cycle and noise signals (100, seed 17)
    sigs = benchmark_signals(20, 17)
    conf, ok = [], []
    for s in sigs:
        P = find_periods(s.x, min_confidence=0.5).periods
        conf += P.confidence.tolist()
        ok += [right(p, s.truth) for p in P.period_s]
    conf, ok = np.array(conf), np.array(ok)
    for c in (0.5, 0.7, 0.9):
        sel = conf >= c
        assert sel.sum() >= 50 and ok[sel].mean() >= c, (c, sel.sum(), ok[sel].mean())


def test_noise_and_two_period_signals():
    # noise: no period at the default confidence; two trains (0-10% jitter):
    # both periods found in at least 14 of 20 (as before jitter handling), and
    # nothing wrong is reported
    sigs = benchmark_signals(20, 17)
    noise = [s for s in sigs if s.kind == "noise"]
    assert all(find_periods(s.x).periods.empty for s in noise)
    both, wrong = 0, 0
    for s in (s for s in sigs if s.kind == "multi"):
        P = find_periods(s.x).periods
        both += all(any(abs(p - t) <= RIGHT * t for p in P.period_s) for t in s.truth)
        wrong += sum(not right(p, s.truth) for p in P.period_s)
    assert both >= 14 and wrong == 0, (both, wrong)


def test_envelope_test_is_calibrated_on_noise():
    # the envelope p-value of a band of white noise is (at most) uniform
    rng = np.random.default_rng(3)
    qs = []
    for i in range(120):
        n, cyc = 4096, (6, 12, 40, 150)[i % 4]
        x = rng.normal(size=n)
        X, N, _ = C._transform(x - x.mean())
        L = n / cyc
        pos, psi, env = C._phase_grid(X, N, N / L)
        keep = (pos >= 2 * L) & (pos <= n - 1 - 2 * L)
        e = env[keep] if keep.sum() >= 16 else env[pos < n]
        qs.append(C._envelope_pval(e.mean() ** 2 / (e**2).mean(), cyc))
    qs = np.array(qs)
    assert np.mean(qs < 0.05) <= 0.05 + 0.04
    assert np.mean(qs < 0.5) <= 0.5 + 0.12
    assert np.mean(qs < 0.9) >= 0.5  # not uselessly conservative either


# --------------------------------------------------------------------------- real captures


def _iteration_starts(store, pattern):
    t = store.sql(
        "SELECT o.t_start FROM ops o JOIN files f USING (job_id, file_id) "
        "WHERE o.op = 'write' AND f.path GLOB $p ORDER BY 1",
        params={"p": pattern},
    ).df()["t_start"]
    return t.to_numpy()[::4]  # 4 writes per iteration (src/jitter_app.c)


@pytest.mark.parametrize(("name", "compute_ms"), [("jitter15", 150.0), ("jitter25", 100.0)])
def test_real_jittered_iterations(store, name, compute_ms):
    # jitter_app computes COMPUTE_MS x (1 +- jitter) per iteration, then writes
    # its state: the I/O period is the mean iteration, the program's own mean
    # compute time (stdout) plus the few ms its 5 traced syscalls take
    store.load(DATA / "strace-jitter" / f"{name}.strace")
    starts = _iteration_starts(store, "*/state.dat")
    d = np.diff(starts)
    mean_ms = float((DATA / "strace-jitter" / f"{name}.stdout").read_text().split("mean_ms=")[1])
    assert abs(mean_ms - compute_ms) <= 0.05 * compute_ms  # the drawn times average out
    res = find_periods(signal_from_ops(store))
    top = res.periods.iloc[0]
    assert abs(top.period_s - d.mean()) <= 0.05 * d.mean()
    assert mean_ms / 1e3 * 0.98 <= top.period_s <= mean_ms / 1e3 * 1.05
    assert top.confidence > 0.99 and len(res.periods) == 1
    assert abs(top.jitter - d.std() / d.mean()) < 0.35 * d.std() / d.mean()


def test_real_checkpoint_period_from_the_program_source(store):
    # ckpt_app -i 40 -c 300 -k 2: a checkpoint after the first iteration that
    # ends 2 s or more after the last one, i.e. every ceil(2 / 0.3) = 7
    # iterations of 300 ms compute (plus their I/O)
    store.load(DATA / "strace" / "ckpt_tt.strace")
    it = store.sql(
        "SELECT o.t_start FROM ops o JOIN files f USING (job_id, file_id) "
        "WHERE f.path LIKE '%scratch.dat' AND o.call = 'readv' ORDER BY 1"
    ).df()["t_start"]
    iteration = float(np.diff(it).mean())
    assert 0.3 <= iteration < 0.31
    every = math.ceil(2.0 / 0.3)
    res = find_periods(signal_from_ops(store, path="*/ckpt.*", op="write"))
    assert abs(res.period_s - every * iteration) <= 0.02 * every * iteration
    assert res.periods.confidence.iloc[0] > 0.99


# --------------------------------------------------------------------------- burst rules

BENCH_LENGTHS = (1_000, 10_000, 100_000, 1_000_000)  # benchmarks/bench_ftio.py --jitter-seeds


def test_a_harmonic_of_few_bursts_is_no_cycle():
    """Seed 45 #5: 6 bursts of a 5.7-cycle train (+-15%) over 10^4 samples.

    Its 5th harmonic (355 samples) used to be reported at confidence 0.999. A
    cycle of a burst train holds a burst (Miller & Katz 1991, section 5.3):
    windows of 355 samples hold an onset in 6 of 28, under half, so it is no
    cycle. No period is better than a wrong sure one.
    """
    s = jittered_set(20, 0.15, 45, BENCH_LENGTHS)[5]
    n, truth = len(s.x), s.truth[0]
    assert n == 10_000 and 5 < n / truth < 6
    b = C._bursts(s.x)
    assert b is not None and len(b.start) == 6  # one burst per realised cycle
    assert C._unsupported(b, {"L": truth / 5, "coverage": 0.9}, n)
    assert not C._unsupported(b, {"L": truth, "coverage": 0.9}, n)
    P = find_periods(s.x, min_confidence=0.5).periods
    assert all(right(p, s.truth) for p in P.period_s[P.confidence >= 0.9])


def test_lines_of_one_comb_give_one_period():
    """Seed 49 #8: 9 alike bursts of an 8.8-cycle train (+-15%), 10^3 samples.

    2x and 2/3 x the period (223.8 and 74.7 samples: frequency ratios 1/2 and
    3/2 of the 113.7-sample period) used to be reported at confidence >= 0.99
    beside it. Their bursts are the reported period's bursts, all alike: one
    comb, one period.
    """
    s = jittered_set(20, 0.15, 49, BENCH_LENGTHS)[8]
    n, truth = len(s.x), s.truth[0]
    b = C._bursts(s.x)
    assert b is not None and len(b.start) == 9
    first = [{"L": truth, "coverage": 1.0}]
    for L in (2 * truth, 2 * truth / 3):
        assert C._comb_only(b, {"L": L, "coverage": 0.9}, first, n)
    P = find_periods(s.x).periods
    assert len(P) == 1 and right(P.period_s.iloc[0], s.truth)
    P = find_periods(s.x, min_confidence=0.5).periods
    assert all(right(p, s.truth) for p in P.period_s[P.confidence >= 0.9])


def test_nested_and_second_trains_keep_both_periods():
    # a burst every 10 s, every third one larger (a checkpoint every 3
    # iterations), and two trains (every 10 s and every 30 s, separate bursts):
    # periods in a ratio 1/3 with bursts of their own, both reported
    rng = np.random.default_rng(7)
    n = 3000
    x, on = burst_train(n, 10.0, rng, duty=0.2)
    for t0 in on[::3]:
        x[int(t0) + 2 : int(t0) + 4] += 1.0
    x += rng.normal(0, 0.02, n)
    rng = np.random.default_rng(8)
    a, _ = burst_train(n, 10.0, rng, duty=0.2)
    b, _ = burst_train(n, 30.0, rng, duty=0.07)
    y = a + b + rng.normal(0, 0.02, n)
    for sig in (x, y):
        bursts = C._bursts(sig)
        assert bursts is not None
        ten, thirty = {"L": 10.0, "coverage": 1.0}, {"L": 30.0, "coverage": 1.0}
        assert not C._comb_only(bursts, ten, [thirty], n)
        assert not C._comb_only(bursts, thirty, [ten], n)
        P = find_periods(sig).periods
        assert len(P) == 2 and (P.confidence > 0.99).all()
        assert sorted(round(p) for p in P.period_s) == [10, 30]


def test_burst_rules_stay_out_of_busy_or_noisy_signals():
    # bursts are counted only when they stand clear of the noise: a busy signal
    # (active most of the time) or Poisson arrivals give no count
    rng = np.random.default_rng(2)
    busy, _ = burst_train(5000, 50.0, rng, duty=0.7)
    assert C._bursts(busy + rng.normal(0, 0.02, 5000)) is None
    assert C._bursts(rng.poisson(3.0, 5000).astype(float)) is None
