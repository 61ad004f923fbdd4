"""I/O cycles: dominant periods of an I/O signal, and a cycle-by-cycle view.

Miller & Katz (1991, section 5.3) found that the I/O of iterative
supercomputer programs "followed cycles that matched the iterations of the
program": request-rate peaks "generally evenly spaced through the program's
execution", bursts that "came in cycles", demand patterns "remarkably similar"
for all cycles, and reference patterns "essentially identical from cycle to
cycle". Carns et al. (2011, section 4) show bursty, mostly idle device
throughput (iostat series) on a whole system. This module measures both:

- :func:`find_periods` finds the dominant periods of a sampled I/O signal
  (bytes per bin of a job, file or rank from ``ops``; a ``counters`` series
  per target or summed) and says how sure it is of each one;
- :func:`split_cycles` cuts the signal into cycles of a period and gives each
  cycle's volume, operations and duration with its similarity to the median
  cycle; :func:`job_cycles` does both for one job of the store;
- :func:`signal_from_ops` and :func:`signal_from_counters` build the signals.

How :func:`find_periods` works (vectorized numpy; no loop over
samples, a few Python steps per reported period):

1. **Spectrum and noise level.** The signal, mean removed, is Hann-windowed
   (as a 3-tap filter of its FFT) and Fourier transformed, with 2x zero
   padding below 32768 samples. Its periodogram is divided by a smooth noise
   level: per band of +-25% in frequency (at least 8 bins), the median, or
   where lines fill the band (a dense comb, as few-cycle burst trains give)
   the 20% quantile after taking out the band's local power law; interpolated
   in log-log and computed again without the strongest lines. For noise with
   any smooth spectrum (white, Poisson arrivals, bursty on/off, red) the power
   ratio ``z`` at a frequency then has a known distribution: exponential over
   a level estimated from ``n`` bins, whose tail follows in closed form from
   Renyi's representation of order statistics (heavier where few bins set
   the level, as at the lowest frequencies). The false-alarm probability of
   the best line among the ``m`` searched frequencies is
   ``1 - (1 - p)**m``: the logic of Fisher's g test, against a local rather
   than a global noise level. A period is reported only when the clearest
   line of its harmonic comb has a false-alarm probability of at most
   ``1 - min_confidence``.
2. **Harmonics.** The strong lines (within 6 dB of the strongest) are taken
   lowest frequency first, then the others strongest first. A line whose
   sub-harmonics (1/2 ... 1/32 of its frequency) carry power belongs to a
   longer cycle: its fundamental is the lowest sub-harmonic with power whose
   multiples up to the line mostly show power too (Fisher's combination of
   their local p-values). Lines on the comb of an accepted period (its
   harmonics, the window's side lobes, the Lorentzian skirts of lines
   broadened by jitter, sidebands within 10% of a harmonic and 10 dB under
   it, harmonics above Nyquist folded back by binning) are assigned to it.
   A harmonic four times stronger than its fundamental is reported as a
   period of its own (``harmonic_of`` names the longer one): staging I/O
   every iteration with a checkpoint every seventh iteration gives both the
   iteration and the checkpoint period. A period whose component shows in
   less than a fifth of the span (e.g. the cadence of requests inside a few
   bursts) is not reported.
3. **Refinement and evidence.** The period is refined by a weighted fit of
   its harmonics' positions (Gaussian interpolation of each peak) or, with no
   harmonics and fewer than 30 cycles, by the autocorrelation peak within
   half a cycle over the span of it.
   Amplitude and phase are those of the fitted sinusoid. The instantaneous
   phase of the band around the period (its analytic signal, +-50% in
   frequency, other periods' lines cut out) crosses a multiple of 2 pi once
   per cycle: the relative standard deviation of the intervals between those
   onsets, less the part the band's noise explains, is the jitter.
4. **Cycles that jitter.** Real iterations do not last the same time; when
   each cycle's length varies independently (uniform +-15%, say), the burst
   onsets wander like a random walk, harmonic h of the comb is smeared into a
   Lorentzian ``pi sigma^2 h^2`` times the fundamental wide, and the high
   harmonics merge into a rippled continuum. Three rules keep the period
   right and its confidence honest:

   - *The phase counts the cycles.* The mean length of the cycles between
     the onsets above (cycles lost in gaps left out) is the mean cycle
     actually realised. It replaces the spectral estimate when the two
     differ by more than one cycle over the span (the spectrum's
     resolution), unless a sharp comb pinned the period (``harmonics``) or
     the line's power does not reach the phase's frequency (there noise,
     not the signal, drove the count: each wrap noise adds shortens it).
   - *A line must have a steady envelope.* Band-limited noise has a
     Rayleigh envelope, whose coverage ``(E e)^2 / E e^2`` is pi / 4; a
     periodic component has coverage near 1. A ripple of a smeared
     continuum can stand far above the local noise level and still be
     noise: its envelope says so. For a line above a stronger, lower line,
     measured over at least 2 interior cycles and not pinned by a sharp
     comb, the envelope's p-value against the Rayleigh law (a Beta law
     fitted to simulated white noise, see :func:`_envelope_pval`) enters
     the false alarm, and a line with p > 0.1 is no period at all.
   - *A broadened fundamental may pass on its envelope.* The clearest and
     strongest lines that fail the spectral tests (a fundamental whose
     noise level is set by few bins has a heavy-tailed p-value) are tried
     last, on Fisher's combination of their spectral and envelope p-values,
     when their power ratio reaches half of what would pass against a
     well-estimated noise level (jitter spreads a line's power over its
     skirt: one as wide as the window's main lobe keeps about half its peak)
     and their envelope's coverage is at least 0.9.
   - *A line is evidence for one period only.* The power ratio of a period's
     own line is the highest peak near its frequency that no period already
     reported claims (its lines, skirts, sidebands): a jittered period's
     wide tolerance must not borrow a stronger neighbour's line. A period
     with no spectral peak at its own frequency (the phase counted a
     continuum there) is no period.
   - *A sub-harmonic that is the line's own skirt is no longer cycle.* With
     few cycles a jittered line's Lorentzian skirt is realised as a few
     discrete sidebands (the random walk of the onsets has a few slow
     swings), which can sit where a sub-harmonic comb would. A fundamental
     found below a strong line counts only when some of its lines below the
     strong one stand above that skirt (10x its Lorentzian tail, the rule
     for skirts of an accepted period), see :func:`_skirt_only`.
   - *The autocorrelation refines within half a cycle over the span.* Below
     30 cycles the autocorrelation peak is searched within half a Rayleigh
     bin (``L^2 / (2 n)``) of the spectral period, where the interpolated
     peak of a resolved line lies; a jittered train's autocorrelation peak
     wanders further and would move a right period off by a cycle.
   - *A cycle of a burst train holds a burst.* Miller & Katz's cycles are
     bursts that "came in cycles" matching the iterations. When the signal
     is bursty (active, i.e. 5 robust noise deviations and 2% of the range
     above its median idle level, less than half of the time, and the
     active samples carry 80% of the excess over the idle level, so that
     bursts stand clear of the noise), a period of ``L`` samples that shows
     in a share ``c`` of the span of ``n`` samples needs a burst onset in at
     least half of its ``c n / L`` windows of ``L`` samples; otherwise it is
     a harmonic (harmonic ``h`` of the true cycle: one window in ``h``) or
     a cadence inside bursts, and is rejected (:func:`_unsupported`). With
     5 or 6 jittered cycles the fundamental's line may be too broad to pass
     while its 5th harmonic stands out: no period is then better than the
     harmonic reported as sure.
   - *Periods of one comb are one period.* A jittered train of few cycles
     has lines at 1/2, 3/2 ... of its frequency (the random walk of its
     onsets). A further period whose frequency is ``p / q`` (``p, q <= 4``,
     within 10%) times a reported one's is reported only with bursts of its
     own: more bursts than the reported period's cycles account for (at
     least half of its own cycles more: a second train), or bursts not all
     alike (the largest or the smallest interior burst 1.5 times off the
     median: a checkpoint every ``k`` iterations). Identical bursts, one per
     reported cycle, give no second period (:func:`_comb_only`). When the
     longer period came first and a harmonic four times stronger stands out
     of its comb, the same test asks whether the longer one has bursts of
     its own; if not, the harmonic replaces it. A signal
     whose bursts cannot be counted (busy, or bursts lost in noise) is left
     to the spectral tests alone.

   Calibrated on seeded signals of :mod:`iochar.datasets.signals`
   (jittered 0-25%, drifting, two trains, 3-8 cycles, noise) and checked on
   the real captures in ``data/strace-jitter/`` (``benchmarks/bench_ftio.py
   --suite jitter`` prints the figures): of the periods reported at
   confidence >= c, at least a share c is within 10% of a true mean period
   (c = 0.5, 0.7, 0.9). At +-15% jitter (``jittered_set(20, 0.15, seed)``,
   10^3-10^6 samples) the first period is right for 193 of 200 signals over
   seeds 4-13, 189 over 20-29 (both used for tuning) and 191 over 30-39
   (held out), with no wrong period at confidence >= 0.9 on those 600; the
   misses are mostly trains of 5-9 cycles, where no period is reported. The
   two burst rules removed the wrong sure periods of seeds 40-49 (a 5th
   harmonic of a 5.7-cycle train; 2x and 2/3x the period of an 8.8-cycle
   train) with no change to the right counts (190 of 200); on seeds 50-59
   and 60-69, checked once afterwards, 194 and 188 of 200 are right, none
   wrong at >= 0.9 (before the rules: 194 and 188, one wrong at >= 0.9).

References
----------
E. L. Miller and R. H. Katz, "Input/output behavior of supercomputing
applications", Supercomputing '91, section 5.3 (cycles in program I/O).

P. Carns, K. Harms, W. Allcock, C. Bacon, S. Lang, R. Latham and R. Ross,
"Understanding and improving computational science storage access through
continuous characterization", ACM Transactions on Storage 7(3), 2011,
section 4 (bursty throughput and idle periods of storage devices).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from iochar._validation import check_choice, check_int, check_real
from iochar.analyze._special import betaincc, gammaincc_int, gammaln, next_fast_len
from iochar.analyze._sql import LAYER_OPS
from iochar.errors import ParameterError
from iochar.result import Result

__all__ = [
    "PeriodResult",
    "CycleResult",
    "signal_from_ops",
    "signal_from_counters",
    "find_periods",
    "split_cycles",
    "job_cycles",
    "PERIOD_COLUMNS",
    "CYCLE_COLUMNS",
]

#: Columns of :attr:`PeriodResult.periods`.
PERIOD_COLUMNS = (
    "rank", "period_s", "frequency_hz", "amplitude", "phase_rad", "first_peak_s", "jitter",
    "confidence", "false_alarm", "power_ratio", "acf", "coverage", "n_cycles", "harmonics",
    "harmonic_of", "refined_by",
)  # fmt: skip

#: Columns of :attr:`CycleResult.cycles`.
CYCLE_COLUMNS = (
    "cycle", "start_s", "end_s", "duration_s", "bytes", "ops", "onset_s", "complete",
    "shape_similarity", "volume_ratio", "similarity",
)  # fmt: skip

_LN2 = math.log(2.0)
_TINY = float(np.finfo(float).tiny)
_BG_REL = 0.25  # background window: +-25% of the frequency ...
_BG_MIN = 8  # ... and at least +-8 original bins
_EXCESS = 4.0  # a harmonic this many times stronger (power) than its fundamental is a period
_MIN_SUB = 1e-4  # a fundamental has at least this share of the power of its strongest line
_RANGE = 1e-6  # lines weaker than this share of the strongest line's power are not trusted
_MAX_SUB = 32  # highest sub-harmonic order searched
_N_HARM = 16  # harmonics counted as evidence (2.._N_HARM)
_SIDE_D, _SIDE_P = 0.1, 0.1  # sidebands: within 10% of the spacing, under 10% of the line
_STRONG = 0.25  # lines within this share of the strongest are taken lowest frequency first
_BAND = 0.5  # half-width of the phase-tracking band, relative to the frequency
_EDGE = 2.0  # cycles left out at each end of the phase track (band-pass ringing)
_PAD_BELOW = 1 << 15  # 2x zero padding (oversampled spectrum) below this many samples
_CORR = 1.5  # adjacent bins of a Hann periodogram per independent one
_Q_LOW = 0.2  # the second noise level: this quantile, detrended within its band
_BG_SAMPLES = 256  # bins per band behind its noise level (evenly spread)
_DENSE = 0.25  # a band whose quantile level is under this share of its median level is dense
_MASK_Z = 20.0  # lines above this many times the first noise level leave the second
_ACF_BELOW = 30.0  # refine with the autocorrelation below this many cycles (no harmonics)
_ACF_WIN = 0.5  # ... within this many cycles over the span of the spectral period
_COMB_TOP = 16  # strongest lines whose harmonic combs are tested as a whole
_MIN_COVER = 0.2  # a period must show in at least this share of the signal's span
_ENV_SD0, _ENV_SD = 0.07, 0.2  # spread of a noise envelope's coverage (see _envelope_pval)
_RESCUE_COVER = 0.9  # least coverage of a period found on its envelope's evidence
_Q_VETO = 0.1  # an exposed line whose envelope test gives more is noise (see _steady)
_LATE_Z = 0.7  # ... whose power ratio is at least this share of the threshold
_RESCUE_Z = 0.5  # least share of the threshold a line passing on its envelope is held to
_ENV_TOP = 4  # clearest and strongest lines failing the spectral tests, tried on their envelope
_PH_MIN = 2.0  # cycles of tracked phase needed to count the mean cycle length
_SKIRT = 0.2  # unassigned lines this near (relative) may be the line's own jitter skirt
_PH_POWER = 0.1  # ... and the spectrum keeps this share of the line's power up to there
_PH_CYCLES = 1.0  # the phase's count replaces the spectrum's when they differ by more cycles
_B_SIGMA = 5.0  # a sample is active this many robust noise deviations above the idle level ...
_B_FLOOR = 0.02  # ... and at least this share of the signal's range above it
_B_LEVEL_SAMPLES = 1 << 14  # idle and noise levels from about this many evenly spread samples
_B_MASS = 0.8  # bursts are counted when active samples carry this share of the excess mass
_B_GAP = 0.25  # runs closer than this share of a period are one burst of it
_B_SUPPORT = 0.5  # a period needs bursts in at least this share of the cycles it shows in
_B_RATIO = 4  # small-integer frequency ratios p / q (p, q up to this) relate two periods
_B_RATIO_TOL = 0.1  # ... within this relative tolerance
_B_ALIKE = 1.5  # bursts differ when the largest/smallest volume is this far from the median


# --------------------------------------------------------------------------- results


class SpectrumSearch(NamedTuple):
    """What a period search keeps to draw its spectrum later (views of its arrays, no copies)."""

    k_lo: int  # first searched frequency bin
    k_hi: int  # last searched frequency bin
    span_s: float  # transform length (zero-padded samples x sample spacing) [s]
    n_samples: int  # samples analysed: the periodogram's normalisation
    power: np.ndarray  # Hann-windowed periodogram per bin
    background: np.ndarray  # local noise level per bin
    centres: np.ndarray  # background bands' centres [bins]
    neff: np.ndarray  # independent bins per band
    dense: np.ndarray  # whether lines fill the band
    searched: int  # frequencies searched (the false-alarm correction)
    p_thr: float  # per-frequency p-value a line must be below


@dataclass(frozen=True)
class PeriodResult(Result):
    """Dominant periods of a signal, with their evidence (see :func:`find_periods`).

    Attributes
    ----------
    periods : pandas.DataFrame
        One row per period, strongest first (columns :data:`PERIOD_COLUMNS`):
        ``rank`` (1 = strongest), ``period_s`` [s], ``frequency_hz`` [Hz],
        ``amplitude`` (of the fitted sinusoid [signal unit]), ``phase_rad``
        (of that sinusoid, ``A cos(2 pi t / period + phase)``, at the first
        sample) [rad], ``first_peak_s`` (its first maximum after the first
        sample: about the first burst's centre) [s], ``jitter`` (relative
        standard deviation of the cycle lengths between detected onsets;
        NaN with fewer than about 9 cycles), ``confidence`` (1 -
        ``false_alarm``), ``false_alarm`` (probability that noise with the
        same smooth spectrum gives a line as clear as the clearest line of
        this period's comb somewhere in the searched band; for a period found
        as the fundamental of a stronger line, at least the local test of
        its sub-harmonics; for a line above a stronger one, also that its
        envelope is as steady as noise's, see the module docstring),
        ``power_ratio`` (its line's power over the local
        noise level, at most 1e6), ``acf`` (autocorrelation of the signal in
        blocks of 1/64 period at the period, in [-1, 1]), ``coverage`` (share
        of the span in which the period's component shows: 1 when steady),
        ``n_cycles`` (span over period), ``harmonics`` (how many of the
        multiples 2..16 of the frequency carry power too), ``harmonic_of``
        (rank of a longer reported period this one divides, else <NA>) and
        ``refined_by`` (``"harmonics"``, ``"acf"``, ``"phase"``: the mean
        cycle counted by the phase, see the module docstring, or
        ``"spectrum"``).
    dt_s : float
        Sample spacing of the analysed signal. [s]
    n_samples : int
        Samples analysed (after resampling and gap filling).
    t0 : float or pandas.Timestamp
        Time of the first sample (seconds, or a timestamp for datetime input);
        phases and ``first_peak_s`` count from it.
    gap_share : float
        Share of the samples that were missing and filled with the mean.
    threshold : float
        Power ratio a line must exceed to be reported where the noise level
        is well estimated (``min_confidence`` over the searched frequencies;
        more at low frequencies, see ``spectrum.threshold``); NaN when
        nothing was searched.
    reason : str
        Why no period was reported (empty when some were).
    search : SpectrumSearch or None
        What the search kept to draw :attr:`spectrum` (None when nothing was
        searched).
    params : dict
        The parameters of :func:`find_periods` as given.
    sql : str or None
        The SQL that read the store, or None.
    """

    periods: pd.DataFrame
    dt_s: float
    n_samples: int
    t0: Any
    gap_share: float
    threshold: float
    reason: str
    search: SpectrumSearch | None = field(default=None, repr=False, compare=False)

    @cached_property
    def spectrum(self) -> pd.DataFrame:
        """The searched spectrum, for charts and checks.

        Returns
        -------
        pandas.DataFrame
            Per searched frequency (ascending): ``frequency_hz`` [Hz],
            ``period_s`` [s], ``power`` (Hann-windowed periodogram per
            sample [signal unit squared]), ``background`` (local noise level,
            same unit), ``power_ratio`` (power over background),
            ``threshold`` (the power a line must exceed there to be reported,
            same unit) and ``false_alarm`` (of a line at that frequency).
        """
        data = self.search
        if data is None:
            cols = ("frequency_hz", "period_s", "power", "background", "power_ratio")
            cols += ("threshold", "false_alarm")
            return pd.DataFrame({c: np.empty(0) for c in cols})
        k_lo, k_hi, span, n, S, B, centres, neff_c, dense_c, m, p_thr = data
        ks = np.arange(k_lo, k_hi + 1)
        freq = ks / span
        power, bg = S[k_lo : k_hi + 1] / n, B[k_lo : k_hi + 1] / n
        i = np.minimum(np.searchsorted(centres, ks), len(centres) - 1)
        neff, dense = neff_c[i], dense_c[i]
        z = power / bg
        return pd.DataFrame(
            {
                "frequency_hz": freq,
                "period_s": 1.0 / freq,
                "power": power,
                "background": bg,
                "power_ratio": z,
                "threshold": bg * _z_for(p_thr, neff, dense),
                "false_alarm": _fap(_pval(z, neff, dense), m),
            }
        )

    @property
    def period_s(self) -> float:
        """The strongest period [s], or NaN when none was found.

        Returns
        -------
        float
            ``periods.period_s`` of rank 1.
        """
        return float(self.periods["period_s"].iloc[0]) if len(self.periods) else float("nan")


@dataclass(frozen=True)
class CycleResult(Result):
    """A signal cut into cycles of one period (see :func:`split_cycles`).

    Attributes
    ----------
    cycles : pandas.DataFrame
        One row per cycle (columns :data:`CYCLE_COLUMNS`): ``cycle`` (0, 1...),
        ``start_s``, ``end_s``, ``duration_s`` [s, since the first sample],
        ``bytes`` (sum of the signal over the cycle [signal unit]), ``ops``
        (sum of the ``ops`` signal over the cycle, when given, else NaN),
        ``onset_s`` (first sample at or above half the cycle's range; NaN for
        a flat cycle) [s], ``complete`` (False for a partial first or last
        cycle), ``shape_similarity`` (1 minus the earth mover's distance, in
        cycles, between the cycle's time profile and the median cycle's: the
        cumulative share of the cycle's volume over phase, compared bin by
        bin; 1 for the same profile, 1 - 1/32 for a burst 1/32 cycle late, 0
        for a cycle without I/O; negative values count as 0),
        ``volume_ratio`` (smaller over larger of the cycle's and the median
        complete cycle's volume, in [0, 1]) and ``similarity`` (their
        product, in [0, 1]).
    period_s : float
        The period used. [s]
    similarity : float
        Median ``similarity`` of the complete cycles: 1 when every cycle
        moves the same volume with the same time profile (Miller & Katz's
        "remarkably similar" demand patterns). NaN without complete cycles.
    jitter : float
        Relative standard deviation of the intervals between the onsets of
        complete cycles (NaN with fewer than 4 onsets).
    profile : pandas.DataFrame
        The typical cycle: ``phase`` (bin start as a fraction of the cycle,
        in [0, 1)), ``mean`` (mean signal value in that phase bin over the
        complete cycles [signal unit]) and ``cdf`` (the median cumulative
        share of a cycle's volume up to the end of the bin, the reference of
        ``shape_similarity``).
    t0 : float or pandas.Timestamp
        Time of the first sample; ``start_s``, ``end_s`` and ``onset_s``
        count from it.
    params : dict
        The parameters as used (see :class:`iochar.result.Result`).
    sql : str or None
        The SQL that read the store, or None.
    """

    cycles: pd.DataFrame
    period_s: float
    similarity: float
    jitter: float
    profile: pd.DataFrame
    t0: Any


# --------------------------------------------------------------------------- input


@dataclass
class _Sig:
    x: np.ndarray  # values on a regular grid, gaps filled with the mean
    dt: float
    t0: Any
    gaps: int
    ops: np.ndarray | None = None


def _finite_values(v: Any, name: str, caller: str) -> np.ndarray:
    try:
        arr = np.asarray(v, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterError(name, caller, "numeric values", type(v).__name__) from exc
    if arr.ndim != 1:
        raise ParameterError(name, caller, "one-dimensional values", f"shape {arr.shape}")
    if not np.isfinite(arr).all():
        bad = int((~np.isfinite(arr)).sum())
        raise ParameterError(
            name, caller, "finite values (no NaN or inf)", f"{bad} non-finite value(s)"
        )
    return arr


def _times(idx: Any, caller: str) -> tuple[np.ndarray, Any]:
    """Seconds since the first timestamp, and that first timestamp."""
    kind = getattr(getattr(idx, "dtype", None), "kind", "")
    if isinstance(idx, pd.DatetimeIndex | pd.TimedeltaIndex) or kind in "mM" and kind:
        ix = pd.Index(idx)
        if ix.hasnans:
            raise ParameterError("signal", caller, "timestamps without NaT", "NaT")
        if len(ix) == 0:
            return np.empty(0), None
        origin = ix[0]
        return np.asarray((ix - origin) / pd.Timedelta(seconds=1), dtype=float), origin
    t = _finite_values(idx, "signal", caller)
    if len(t) == 0:
        return t, 0.0
    return t - t[0], float(t[0])


def _as_signal(signal: Any, dt_s: Any, caller: str, ops: Any = None) -> _Sig:
    """A regular float signal from an array, a Series or (timestamps, values)."""
    if dt_s is not None:
        check_real(
            dt_s, "dt_s", caller, "None or a positive number of seconds", low=0, low_open=True
        )
    t = None
    origin: Any = 0.0
    if isinstance(signal, pd.DataFrame):
        raise ParameterError(
            "signal", caller, "an array, a Series or (timestamps, values)", "a DataFrame"
        )
    if isinstance(signal, pd.Series):
        if signal.dtype.kind not in "biuf":
            try:
                signal = signal.astype(float)
            except (TypeError, ValueError) as exc:
                raise ParameterError("signal", caller, "numeric values", str(signal.dtype)) from exc
        v = _finite_values(signal.to_numpy(dtype=float, na_value=np.nan), "signal", caller)
        if not isinstance(signal.index, pd.RangeIndex):
            t, origin = _times(signal.index, caller)
    elif isinstance(signal, tuple) and len(signal) == 2:
        v = _finite_values(signal[1], "signal", caller)
        ts = signal[0]
        t, origin = _times(ts if isinstance(ts, pd.Index) else np.asarray(ts), caller)
        if len(t) != len(v):
            raise ParameterError(
                "signal", caller, "timestamps and values of the same length", (len(t), len(v))
            )
    else:
        v = _finite_values(signal, "signal", caller)
    if len(v) < 2:
        raise ParameterError("signal", caller, "at least 2 samples", f"{len(v)} sample(s)")
    w = None if ops is None else _finite_values(ops, "ops", caller)
    if w is not None and len(w) != len(v):
        raise ParameterError("ops", caller, f"{len(v)} samples, as many as signal", len(w))
    if t is None:
        return _Sig(v, float(dt_s or 1.0), origin, 0, w)
    d = np.diff(t)
    if (d < 0).any():
        i = int(np.flatnonzero(d < 0)[0])
        raise ParameterError(
            "signal", caller, "timestamps sorted in increasing order", f"a decrease at {i + 1}"
        )
    span = float(t[-1])
    if span <= 0:
        raise ParameterError("signal", caller, "timestamps spanning some time", "all equal")
    pos = d[d > 0]
    base = float(dt_s) if dt_s else float(np.median(pos))
    steps = d / base
    r = np.rint(steps)
    if (r >= 1).all() and (np.abs(steps - r) <= 0.01).all() and r.sum() < 64 * len(v) + 2**20:
        # a regular grid, maybe with missing samples: those carry the mean (no signal)
        idx = np.concatenate(([0], np.cumsum(r).astype(np.int64)))
        x = np.full(int(idx[-1]) + 1, float(v.mean()))
        x[idx] = v
        o = None
        if w is not None:
            o = np.zeros(len(x))
            o[idx] = w
        return _Sig(x, base, origin, len(x) - len(v), o)
    # irregular times: events whose values are summed per bin
    width = float(dt_s) if dt_s else max(float(np.median(pos)), span / 65536)
    b = np.floor(t / width).astype(np.int64)
    x = np.bincount(b, weights=v)
    o = np.bincount(b, weights=w) if w is not None else None
    return _Sig(x, width, origin, 0, o)


# --------------------------------------------------------------------------- spectrum


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Dot product without BLAS threads (steady timing on busy machines)."""
    return float(np.einsum("i,i->", a, b))


def _renyi(z: Any, neff: Any, q: float) -> np.ndarray:
    """P(S / B >= z) when B is the q-quantile of neff unit exponentials / -ln(1 - q).

    By Renyi's representation the k-th order statistic of n unit exponentials
    is a sum of independent exponentials of rates n, n-1, ..., n-k+1, so
    ``P = E[exp(-z M / c)] = prod (n - i) / (n - i + z / c)``, in closed form
    with log-gamma functions.
    """
    c = np.maximum(np.asarray(z, dtype=float), 0.0) / -math.log1p(-q)
    n = np.asarray(neff, dtype=float)
    k = np.maximum(q * (n + 1.0), 1.0)
    a, b = n + 1.0, n - k + 1.0
    return np.exp(gammaln(a) - gammaln(b) - gammaln(a + c) + gammaln(b + c))


def _pval(z: Any, neff: Any, dense: Any = False) -> np.ndarray:
    """P(power ratio >= z) at one frequency, for noise with a smooth spectrum.

    The ratio is ``S / B`` with ``S`` exponential (mean 1) and ``B`` the median
    of ``neff`` such values / ln 2 (:func:`_renyi`). Where a dense comb of
    lines hides the noise (``dense``), ``B`` is their 20% quantile / -ln 0.8
    instead, and the p-value is doubled (a union bound over the choice). It
    tends to ``exp(-z)`` where many bins set the level and is heavier-tailed
    where few do (low frequencies).
    """
    med = _renyi(z, neff, 0.5)
    if not np.any(dense):
        return med
    return np.where(dense, np.minimum(1.0, 2.0 * _renyi(z, neff, _Q_LOW)), med)


def _z_for(p: float, neff: np.ndarray, dense: np.ndarray) -> np.ndarray:
    """Power ratio whose p-value is ``p``, per band kind (vectorized bisection)."""
    key = np.asarray(neff, dtype=float) * np.where(dense, -1.0, 1.0)
    u, inv = np.unique(key, return_inverse=True)
    lo, hi = np.zeros(len(u)), np.full(len(u), 1e7)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        above = _pval(mid, np.abs(u), u < 0) > p
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return hi[inv]


def _fap(p: Any, m: int) -> np.ndarray:
    """Probability that the least of ``m`` independent p-values is <= p (Sidak)."""
    p = np.minimum(np.maximum(np.asarray(p, dtype=float), 0.0), 1.0)
    with np.errstate(divide="ignore"):
        return np.minimum(np.maximum(-np.expm1(m * np.log1p(-np.minimum(p, 1 - 1e-16))), 0.0), 1.0)


@lru_cache(maxsize=64)
def _bands(n: int, ov: int) -> tuple[np.ndarray, np.ndarray]:
    """Edges of the background bands over bins 1..n-1 (cached per size)."""
    wmin = 2 * _BG_MIN * ov
    edges = [1]
    while edges[-1] < n - 1:
        e = edges[-1]
        edges.append(min(n, max(e + wmin, int(e * (1 + 2 * _BG_REL)))))
    if len(edges) > 2 and edges[-1] - edges[-2] < wmin // 2:  # no sliver at the top
        edges.pop(-2)
    e = np.asarray(edges, dtype=np.int64)
    return e[:-1], e[1:]


@lru_cache(maxsize=16)
def _log_bins(n: int) -> np.ndarray:
    """log(1..n-1), cached per spectrum size (read-only)."""
    out = np.log(np.arange(1, n, dtype=float))
    out.flags.writeable = False
    return out


def _band_levels(
    S: np.ndarray, idx: np.ndarray, c: np.ndarray, slope: np.ndarray | None, masked: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median and (detrended) 20% quantile per band row of ``idx``, and kept counts."""
    vals = S[idx]
    if slope is not None:
        vals = vals * (idx / c[:, None]) ** -slope[:, None]
    if masked is not None:
        vals = np.where(masked[idx], np.inf, vals)
    vals = np.sort(vals, axis=1)
    kept = np.isfinite(vals).sum(axis=1)
    rows = np.arange(len(idx))
    med = vals[rows, np.maximum(kept // 2, 0)]
    q = vals[rows, np.maximum((_Q_LOW * kept).astype(np.int64), 0)]
    ok = kept > 0
    return np.where(ok, med, np.nan), np.where(ok, q, np.nan), kept


def _background(
    S: np.ndarray, ov: int, masked: np.ndarray | None = None, prior: tuple | None = None
) -> tuple:
    """Noise level of S per band of +-_BG_REL in frequency (at least 2 x _BG_MIN bins).

    Per band, from up to ``_BG_SAMPLES`` evenly spread bins: the median / ln 2
    and, where lines fill the band (a dense comb: the 20% quantile of the
    periodogram detrended by the local power law is under ``_DENSE`` of the
    median level), that quantile / -ln 0.8 instead. Each level stands at its
    band's centre, so that a monotone red spectrum's level lands where it
    belongs, and is interpolated in log power over log frequency; below the
    first centre it follows the local power law (never rising towards zero
    frequency, nor steeper than f^-3). Levels are floored at ``_RANGE`` of the
    highest power. With ``masked`` (strong lines), bands that lose some but less
    than half of their bins are taken again without them (``prior``: the
    first pass). All bands are sorted in one vectorized call. Returns the
    mean noise level per bin, the band centres, the independent bins behind
    each level and the dense flags (then the pass's internals).
    """
    n = len(S)
    lo, hi = _bands(n, ov)
    width = hi - lo
    c = 0.5 * (lo + hi - 1)
    cols = np.arange(_BG_SAMPLES)
    idx = lo[:, None] + (cols[None, :] * width[:, None]) // _BG_SAMPLES
    cnt = np.minimum(width / (_CORR * ov), float(_BG_SAMPLES))  # Hann: neighbours correlate
    if prior is None:
        meds, qs, _ = _band_levels(S, idx, c, None, None)
        lm = np.log(np.maximum(meds, _TINY))
        slope = np.zeros(len(c))
        if len(c) > 1:  # local power law per band, from the medians
            slope[1:-1] = (lm[2:] - lm[:-2]) / (np.log(c[2:]) - np.log(c[:-2]))
            slope[0] = (lm[1] - lm[0]) / math.log(c[1] / c[0])
            slope[-1] = (lm[-1] - lm[-2]) / math.log(c[-1] / c[-2])
        # a band looks dense when its quantile is low; the trend is taken out first
        # (a steep red spectrum lowers the raw quantile too)
        look = np.flatnonzero(qs / -math.log1p(-_Q_LOW) < _DENSE * meds / _LN2 * 2.0)
        if len(look):
            qs[look] = _band_levels(S, idx[look], c[look], slope[look], None)[1]
    else:
        meds, qs, slope = prior[4].copy(), prior[5].copy(), prior[6]
        share = np.add.reduceat(masked.astype(np.int64), lo)[: len(lo)] / width
        redo = np.flatnonzero((share > 0) & (share < 0.5))
        if len(redo) == 0:
            return prior
        if len(redo):
            m2, q2, kept = _band_levels(S, idx[redo], c[redo], slope[redo], masked)
            meds[redo], qs[redo] = m2, q2
            cnt[redo] = cnt[redo] * kept / _BG_SAMPLES
    lmed, lq = meds / _LN2, qs / -math.log1p(-_Q_LOW)
    dense = lq < _DENSE * lmed  # lines fill the band: the quantile sees between them
    level = np.where(dense, lq, lmed)
    floor = _RANGE * float(S[1:].max()) if n > 1 else 0.0
    level = np.maximum(level, floor)  # no trust in more dynamic range than 1 / _RANGE
    good = np.isfinite(level) & (level > 0)
    if not good.any():
        good = np.ones(len(level), dtype=bool)
    cg, mg = c[good], np.maximum(level[good], _TINY)
    lc, lm = np.log(cg), np.log(mg)
    # piecewise linear in log-log between the centres (a vectorized np.interp over
    # sorted bins): slope and intercept per segment, repeated over its bins
    first_sl = 0.0
    if len(cg) >= 2:  # below the first centre: the local power law, never rising to 0 Hz
        j = min(len(cg) - 1, 2)
        first_sl = min(max((lm[j] - lm[0]) / (lc[j] - lc[0]), -3.0), 0.0)
    slope = np.concatenate(([first_sl], np.diff(lm) / np.diff(lc), [0.0]))
    icept = np.concatenate(([lm[0] - first_sl * lc[0]], lm[:-1] - slope[1:-1] * lc[:-1], [lm[-1]]))
    edges = np.concatenate(([1], np.clip(np.ceil(cg).astype(np.int64), 1, n), [n]))
    counts = np.diff(edges)
    lk = _log_bins(n)
    out = np.repeat(icept, counts) + np.repeat(slope, counts) * lk
    B = np.empty(n)
    np.exp(out, out=B[1:])
    B[0] = B[1]
    return B, cg, np.maximum(cnt[good], 1.0), dense[good], meds, qs, slope


def _interp_peak(S: np.ndarray, k: int) -> tuple[float, float]:
    """Gaussian (log-parabolic) interpolation of a spectral peak: (bin, power)."""
    if k <= 0 or k >= len(S) - 1:
        return float(k), float(S[k])
    a, b, c = (math.log(max(float(S[j]), _TINY)) for j in (k - 1, k, k + 1))
    den = a - 2 * b + c
    d = 0.5 * (a - c) / den if den < 0 else 0.0
    d = min(max(d, -0.5), 0.5)
    return k + d, math.exp(b - 0.25 * (a - c) * d)


@dataclass
class _Spec:
    X: np.ndarray  # rfft of the zero-padded, mean-removed signal (no window)
    S: np.ndarray  # Hann-windowed periodogram
    B: np.ndarray  # background (mean noise level per bin)
    N: int  # transform length
    ov: int  # oversampling: bins per original (1 / span) bin
    gain: float  # coherent gain of the window over the data
    k_lo: int
    k_hi: int
    m: int  # frequencies searched
    p_thr: float  # per-frequency p-value a line must be below
    z_thr: float  # least power ratio that can pass (well-estimated noise level)
    alpha: float
    centres: np.ndarray  # background bands' centres [bins] ...
    neff: np.ndarray  # ... their independent bins ...
    dense: np.ndarray  # ... and whether lines fill them
    peak: np.ndarray  # local maxima of S
    S_pk: np.ndarray  # S at local maxima, 0 elsewhere (peaks, not lobe edges)
    z_pk: np.ndarray  # z at local maxima, 0 elsewhere

    def pval(self, k: Any, z: Any = None) -> np.ndarray:
        """P-value of the power ratio at bins k (or of ratios z found near them)."""
        k = np.asarray(k)
        i = np.minimum(np.searchsorted(self.centres, k), len(self.centres) - 1)
        if z is None:
            z = self.S[k] / self.B[k]
        return _pval(z, self.neff[i], self.dense[i])


def _transform(x: np.ndarray) -> tuple[np.ndarray, int, int]:
    """rfft of the mean-removed signal, zero-padded: (X, N, ov).

    ``numpy.fft`` (pocketfft; numpy >= 2), in double precision: numpy's single-precision
    transform is not faster (1.5-1.7x slower at 4e4-3e5 samples), and ``scipy.fft``
    costs 0.15-0.5 s to import (it imports ``scipy.special``), more than a whole
    summary's work. The length is padded to the next 2-3-5-smooth size
    (:func:`iochar.analyze._special.next_fast_len`, SciPy's rule).
    """
    n = len(x)
    n_pad = next_fast_len(n, real=True)
    ov = 2 if n < _PAD_BELOW else 1
    N = ov * n_pad
    X = np.fft.rfft(x, n=N)
    return X, N, ov


def _spectrum(x: np.ndarray, min_k: float, max_k: float, alpha: float) -> _Spec | None:
    n = len(x)
    X, N, ov = _transform(x)
    # Hann window over the padded length N / ov, as a 3-tap filter of X
    Xh = 0.5 * X
    Xh[ov:] -= 0.25 * X[:-ov]
    Xh[:-ov] -= 0.25 * X[ov:]
    Xh[:ov] -= 0.25 * np.conj(X[ov:0:-1])  # negative frequencies mirror the positive ones
    S = Xh.real**2 + Xh.imag**2
    if S.dtype != np.float64:
        S = S.astype(np.float64)
    k_lo = max(int(math.ceil(min_k)), 2 * ov)
    k_hi = min(int(math.floor(max_k)), len(S) - 2 - ov)
    if k_hi - k_lo < 3:
        return None
    floor = _RANGE * float(S[k_lo : k_hi + 1].max())
    first = _background(S, ov)
    B, centres, neff, dense = first[:4]
    B = np.maximum(B, floor)
    # strong lines (and their main lobes) out, then the noise level again
    strong = S > B * _MASK_Z
    if strong.any():
        near = strong.copy()  # and their main lobes: +-2 original bins
        for sh in range(1, 2 * ov + 1):
            near[sh:] |= strong[:-sh]
            near[:-sh] |= strong[sh:]
        B, centres, neff, dense = _background(S, ov, near, first)[:4]
        B = np.maximum(B, floor)
    # frequencies searched: with 2x oversampling the bins are not independent, but the
    # highest of them exceeds the highest independent one about as often as if they were
    m = k_hi - k_lo + 1
    p_thr = float(-math.expm1(math.log1p(-alpha) / m))
    z_thr = -math.log(p_thr)
    # coherent gain of the Hann window over the n data samples (closed form)
    th = np.pi / (N // ov)
    gain = 0.5 * n - 0.5 * math.sin(th * n) * math.cos(th * (n - 1)) / math.sin(th)
    peak = np.zeros(len(S), dtype=bool)
    peak[1:-1] = (S[1:-1] > S[:-2]) & (S[1:-1] >= S[2:])
    S_pk = np.where(peak, S, 0.0)
    z_pk = S_pk / B
    return _Spec(
        X, S, B, N, ov, gain, k_lo, k_hi, m, p_thr, z_thr, alpha, centres, neff, dense,
        peak, S_pk, z_pk,
    )  # fmt: skip


def _hann_env(d_orig: np.ndarray) -> np.ndarray:
    """Upper envelope of the Hann window's power response at d original bins."""
    d = np.abs(np.asarray(d_orig, dtype=float))
    with np.errstate(divide="ignore"):
        env = 1.0 / (np.pi * d * np.abs(d * d - 1.0)) ** 2
    return np.where(d < 2.0, 1.0, np.minimum(env, 1.0))


def _window_max(a: np.ndarray, centers: Any, half: Any) -> np.ndarray:
    """Max of ``a`` within +-half bins of each center (centers ascending).

    Windows are clipped so that they do not overlap, then reduced in one
    ``np.maximum.reduceat`` call.
    """
    centers = np.asarray(centers, dtype=float)
    if len(centers) == 0:
        return np.empty(0)
    half = np.broadcast_to(np.asarray(half, dtype=float), centers.shape)
    last = len(a) - 1
    lo = np.minimum(np.maximum(np.ceil(centers - half).astype(np.int64), 1), last)
    hi = np.minimum(np.maximum(np.floor(centers + half).astype(np.int64), 1), last)
    hi = np.maximum(hi, lo)
    nxt = np.concatenate((lo[1:], [last + 1]))
    hi = np.minimum(hi, np.maximum(nxt - 1, lo))
    bounds = np.empty(2 * len(lo), dtype=np.int64)
    bounds[0::2] = lo
    bounds[1::2] = hi + 1
    if bounds[-1] > last:  # the last window reaches the end of the array
        return np.maximum.reduceat(np.append(a, a[-1]), bounds)[0::2]
    return np.maximum.reduceat(a, bounds)[0::2]


def _near_max(a: np.ndarray, centres: np.ndarray, half: np.ndarray) -> np.ndarray:
    """Max of ``a`` within +-half (a few bins) of each centre; windows may overlap."""
    w = int(math.ceil(float(np.max(half))))
    off = np.arange(-w, w + 1)
    idx = np.rint(centres).astype(np.int64)[:, None] + off[None, :]
    inside = (np.abs(idx - centres[:, None]) <= half[:, None]) & (idx >= 1) & (idx < len(a))
    np.maximum(idx, 1, out=idx)
    np.minimum(idx, len(a) - 1, out=idx)
    return np.where(inside, a[idx], 0.0).max(axis=1)


def _tol(h: Any, sigma: float, K0: float, ov: int) -> np.ndarray:
    """Half-width [bins] around harmonic h of a line at K0 bins, jitter sigma."""
    h = np.asarray(h, dtype=float)
    tol = ov * (1.0 + 0.05 * h) + 3.0 * math.pi * sigma**2 * h**2 * K0
    return np.minimum(tol, np.maximum(1.0, 0.5 * np.asarray(K0) - 0.5))  # no overlap


# --------------------------------------------------------------------------- time domain


def _acf_at(x: np.ndarray, lag: float, norm: float) -> float:
    """Autocorrelation at a fractional lag (linear interpolation of two lags)."""
    n = len(x)
    lo = int(math.floor(lag))
    if lo < 1 or lo + 2 >= n or norm <= 0:
        return float("nan")
    a0 = _dot(x[:-lo], x[lo:]) / (n - lo)
    a1 = _dot(x[: -(lo + 1)], x[lo + 1 :]) / (n - lo - 1)
    fr = lag - lo
    return min(max(((1 - fr) * a0 + fr * a1) / norm, -1.0), 1.0)


def _acf_evidence(x: np.ndarray, lag: float) -> float:
    """Autocorrelation at ``lag`` of x in blocks of about lag / 64 samples.

    The blocks make the value robust to jitter of a few samples in the
    timing of narrow bursts.
    """
    d = max(1, int(lag // 64))
    xd = x[: len(x) // d * d].reshape(-1, d).sum(axis=1) if d > 1 else x
    return _acf_at(xd, lag / d, _dot(xd, xd) / len(xd))


def _acf_peak(x: np.ndarray, lag: float, window: float, d: int) -> float | None:
    """Lag of the autocorrelation peak of x in blocks of d within +-window of lag."""
    xd = x[: len(x) // d * d].reshape(-1, d).sum(axis=1) if d > 1 else x
    nd = len(xd)
    lo = max(1, int(math.floor((lag - window) / d)))
    hi = min(nd - 2, int(math.ceil((lag + window) / d)))
    if hi - lo < 2:
        return None
    lags = np.arange(lo, hi + 1)
    vals = np.array([_dot(xd[:-j], xd[j:]) / (nd - j) for j in lags])
    p = int(vals.argmax())
    if p == 0 or p == len(vals) - 1 or vals[p] <= 0:
        return None
    a, b, c = vals[p - 1], vals[p], vals[p + 1]
    den = a - 2 * b + c
    off = 0.5 * (a - c) / den if den < 0 else 0.0
    return float((lags[p] + min(max(off, -0.5), 0.5)) * d)


def _acf_refine(x: np.ndarray, lag: float, window: float) -> float | None:
    """Lag of the autocorrelation peak within +-window of ``lag``, or None.

    First on block sums of about window / 8 samples (few lags to try), then
    around that peak on finer blocks (about lag / 1000 samples).
    """
    d1 = max(1, int(window // 8))
    best = _acf_peak(x, lag, window, d1)
    if best is None or abs(best - lag) > window:
        return None
    d2 = max(1, int(lag // 1000), d1 // 8)
    if d2 < d1:
        fine = _acf_peak(x, best, 2.0 * d1, d2)
        if fine is not None and abs(fine - lag) <= window:
            best = fine
    return best


def _phase_grid(
    X: np.ndarray, N: int, K0: float, notches: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Instantaneous phase of the band +-_BAND*K0 bins around K0 (analytic signal).

    The band is shifted to base band and inverse-transformed on a coarse grid
    (about 8 points per cycle), so the cost grows with the number of cycles,
    not of samples. ``notches`` (centres and half-widths [bins]) are cut out
    of the band. Returns grid positions [samples], the unwrapped
    non-decreasing phase [rad] and the band's envelope.
    """
    J = max(2, int(_BAND * K0))
    kc = int(round(K0))
    lo, hi = max(1, kc - J), min(len(X) - 1, kc + J)
    ks = np.arange(lo, hi + 1)
    band = X[lo : hi + 1].astype(complex)
    if notches is not None and len(notches[0]):
        L = len(ks)
        a = np.clip(np.ceil(notches[0] - notches[1]).astype(np.int64) - lo, 0, L)
        b = np.clip(np.floor(notches[0] + notches[1]).astype(np.int64) - lo + 1, 0, L)
        cover = np.bincount(a, minlength=L + 1) - np.bincount(b, minlength=L + 1)
        band[np.cumsum(cover)[:-1] > 0] = 0
    M = next_fast_len(max(64, 4 * (hi - lo + 1)))
    Y = np.zeros(M, dtype=complex)
    Y[(ks - kc) % M] = band
    zb = np.fft.ifft(Y) * M
    pos = np.arange(M) * (N / M)
    step = np.angle(zb[1:] * np.conj(zb[:-1]))  # unwrapped: base band turns slowly
    psi = np.concatenate(([np.angle(zb[0])], np.angle(zb[0]) + np.cumsum(step)))
    psi += 2 * np.pi * kc * np.arange(M) / M
    return pos, np.maximum.accumulate(psi), np.abs(zb)


def _median(a: np.ndarray) -> float:
    """Median (upper middle for even sizes) by partition: cheaper than np.median."""
    h = len(a) // 2
    return float(np.partition(a, h)[h])


def _coverage(env: np.ndarray, pos: np.ndarray, keep: np.ndarray, n: int) -> float:
    """(mean envelope)^2 / mean square envelope, over the interior when it has 16 points.

    1 for a steady envelope, f for one present a fraction f of the time, pi / 4
    for band-limited noise (Rayleigh).
    """
    inside = env[keep] if keep.sum() >= 16 else env[pos < n]
    msq = float(np.add.reduce(inside * inside)) / len(inside)
    return (float(np.add.reduce(inside)) / len(inside)) ** 2 / msq if msq > 0 else 0.0


def _phase_period(
    pos: np.ndarray, psi: np.ndarray, keep: np.ndarray, onsets: tuple
) -> float | None:
    """Mean cycle length [samples] counted by the phase over the tracked interior.

    The unwrapped phase of the band around a period gains 2 pi per cycle,
    whatever each cycle's length: the mean length of the cycles between its
    crossings of multiples of 2 pi (the onsets; cycles lost in gaps left out,
    see :func:`_onset_jitter`) is the mean cycle length actually realised, the
    quantity that a random walk of cycle lengths (jitter) leaves well defined
    while it smears the spectral line. With fewer than 4 such cycles: the
    interior's span x 2 pi / (phase gained), when that is at least
    ``_PH_MIN`` cycles. ``onsets`` is :func:`_onset_jitter` of the interior.
    Returns the length, or None without enough cycles.
    """
    mean, count = onsets[2:]
    if count >= 4:
        return mean
    if keep.sum() < 4:
        return None
    p, q = pos[keep], psi[keep]
    turns = (q[-1] - q[0]) / (2 * np.pi)
    if turns < _PH_MIN:
        return None
    return float((p[-1] - p[0]) / turns)


def _onset_jitter(
    pos: np.ndarray, psi: np.ndarray, env: np.ndarray
) -> tuple[float, float, float, int]:
    """Relative std of the cycle lengths between phase crossings (onsets).

    Additive noise in the band moves the phase as much as the envelope (both
    by ``noise / (sqrt(2) amplitude)``); that share, measured robustly on the
    envelope, is taken out of the variance of the cycle lengths. Cycles whose
    envelope falls under a quarter of its median (lost in gaps, missing
    bursts) and lengths more than 30% from the median (phase slips there) are
    left out. Returns the jitter with and without that correction, and the
    mean length [samples] and number of the cycles kept (NaN, NaN, NaN, 0
    with too few cycles).
    """
    nan = (float("nan"), float("nan"), float("nan"), 0)
    if len(psi) < 4 or psi[-1] - psi[0] < 5 * 2 * np.pi:
        return nan
    levels = 2 * np.pi * np.arange(math.ceil(psi[0] / (2 * np.pi)), psi[-1] // (2 * np.pi) + 1)
    t = np.interp(levels, psi, pos)
    e = np.interp(0.5 * (levels[1:] + levels[:-1]), psi, env)
    med_env = _median(env)
    lengths = np.diff(t)[e >= 0.25 * med_env]  # skip cycles lost in gaps
    if len(lengths) < 4 or med_env <= 0:
        return nan
    med = _median(lengths)
    lengths = lengths[np.abs(lengths - med) <= 0.3 * med]
    if len(lengths) < 4:
        return nan
    mean = float(np.add.reduce(lengths)) / len(lengths)
    dev = lengths - mean
    var = float(np.add.reduce(dev * dev)) / len(lengths) / mean**2
    rel_noise = 1.4826 * _median(np.abs(env - med_env)) / med_env
    var_noise = 2.0 * rel_noise**2 / (2 * np.pi) ** 2
    return math.sqrt(max(var - var_noise, 0.0)), math.sqrt(var), mean, len(lengths)


# --------------------------------------------------------------------------- find_periods


def find_periods(
    signal: Any,
    *,
    dt_s: float | None = None,
    max_periods: int = 3,
    min_confidence: float = 0.99,
    min_cycles: float = 3.0,
    min_period_s: float | None = None,
    max_period_s: float | None = None,
) -> PeriodResult:
    """Dominant periods of an I/O signal, ranked, with how sure each one is.

    Finds the cycles Miller & Katz (1991, section 5.3) saw in iterative
    programs' I/O ("request rate peaks were generally evenly spaced through
    the program's execution") in a job's, file's or rank's binned operations
    (:func:`signal_from_ops`), or in a device's throughput
    (:func:`signal_from_counters`; Carns et al. 2011, section 4). The method
    is in the module docstring. Noise (white, Poisson arrivals, bursty on/off
    traffic) and a single burst give no period, except with probability
    about ``1 - min_confidence``.

    Parameters
    ----------
    signal : array-like, pandas.Series or tuple of (timestamps, values)
        The signal, e.g. bytes per bin. A 1-D array (or a Series with a
        default RangeIndex) is sampled every ``dt_s``. A Series with a
        numeric index [s] or a datetime index, or a ``(timestamps, values)``
        pair, gives the sample times: on a regular grid, missing samples are
        filled with the mean (a gap carries no signal; see
        ``PeriodResult.gap_share``); irregular times are events whose values
        are summed into bins of ``dt_s``. Values must be finite and
        timestamps sorted.
    dt_s : float, optional
        Sample spacing of an array [s] (default 1), or the bin width for
        irregular timestamps [s] (default: their median spacing, at least the
        span / 65536). Regular timestamps give their own spacing.
    max_periods : int, default 3
        Most periods reported.
    min_confidence : float, default 0.99
        Least confidence (1 - false-alarm probability) of a reported period,
        in (0, 1).
    min_cycles : float, default 3.0
        A period must fit at least this many times into the signal's span.
    min_period_s : float, optional
        Shortest period searched [s]; default two samples (Nyquist).
    max_period_s : float, optional
        Longest period searched [s]; default span / ``min_cycles``.

    Returns
    -------
    PeriodResult
        ``periods`` (strongest first; empty when the signal shows no period,
        and then ``reason`` says why; a constant signal gives an empty table
        with reason "constant signal"), ``spectrum`` and the sampling facts.

    Raises
    ------
    ParameterError
        An empty or one-sample signal, NaN or infinite values, unsorted or
        all-equal timestamps, or a parameter out of range.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.arange(2000)                      # one sample per second
    >>> x = np.where(t % 50 < 5, 1e6, 0.0)       # 1 MB/s for 5 s, every 50 s
    >>> res = find_periods(x, dt_s=1.0)
    >>> round(res.period_s, 2), bool(res.periods.confidence[0] > 0.99)
    (50.0, True)
    >>> rng = np.random.default_rng(0)
    >>> find_periods(rng.poisson(3.0, 2000)).periods.empty   # Poisson arrivals
    True
    """
    caller = "find_periods"
    check_int(max_periods, "max_periods", caller, "an int >= 1", low=1)
    check_real(
        min_confidence,
        "min_confidence",
        caller,
        "a float in (0, 1)",
        low=0,
        high=1,
        low_open=True,
        high_open=True,
    )
    check_real(min_cycles, "min_cycles", caller, "a number >= 2", low=2)
    for name, val in (("min_period_s", min_period_s), ("max_period_s", max_period_s)):
        check_real(
            val,
            name,
            caller,
            "None or a positive number of seconds",
            low=0,
            low_open=True,
            none=True,
        )
    sig = _as_signal(signal, dt_s, caller)
    res = _find(
        sig, int(max_periods), float(min_confidence), float(min_cycles), min_period_s, max_period_s
    )
    params = dict(
        dt_s=dt_s,
        max_periods=max_periods,
        min_confidence=min_confidence,
        min_cycles=min_cycles,
        min_period_s=min_period_s,
        max_period_s=max_period_s,
    )
    return dataclasses.replace(res, params=params)


_DTYPES = {c: "float64" for c in PERIOD_COLUMNS} | {
    "rank": "int64", "harmonics": "int64", "harmonic_of": "Int64", "refined_by": "str"
}  # fmt: skip
_EMPTY = pd.DataFrame({c: pd.Series(dtype=t) for c, t in _DTYPES.items()})


def _result(sig: _Sig, rows: list[dict], spec: _Spec | None, reason: str) -> PeriodResult:
    if rows:
        order = sorted(range(len(rows)), key=lambda i: -rows[i]["amplitude"])
        new_rank = {old: r + 1 for r, old in enumerate(order)}
        rows = [rows[i] for i in order]
        cols: dict[str, Any] = {}
        for c in PERIOD_COLUMNS:
            vals = [r[c] for r in rows]
            if c == "rank":
                cols[c] = np.arange(1, len(rows) + 1, dtype=np.int64)
            elif c == "harmonic_of":
                cols[c] = pd.array([new_rank.get(v) for v in vals], dtype="Int64")
            elif c == "refined_by":
                cols[c] = pd.array(vals, dtype="str")
            elif c == "harmonics":
                cols[c] = np.array(vals, dtype=np.int64)
            else:
                cols[c] = np.array(vals, dtype=float)
        periods = pd.DataFrame(cols)
    else:
        periods = _EMPTY.copy()
    n = len(sig.x)
    search = None
    if spec is not None:  # kept (views, no copies) for the lazy ``spectrum`` table
        search = SpectrumSearch(
            spec.k_lo, spec.k_hi, spec.N * sig.dt, n, spec.S, spec.B, spec.centres,
            spec.neff, spec.dense, spec.m, spec.p_thr,
        )  # fmt: skip
    return PeriodResult(
        periods=periods,
        dt_s=sig.dt,
        n_samples=n,
        t0=sig.t0,
        gap_share=sig.gaps / n,
        threshold=spec.z_thr if spec is not None else float("nan"),
        reason=reason,
        search=search,
    )


def _find(
    sig: _Sig,
    max_periods: int,
    min_confidence: float,
    min_cycles: float,
    min_period_s: float | None,
    max_period_s: float | None,
) -> PeriodResult:
    x = sig.x
    n, dt = len(x), sig.dt
    mean = float(x.mean())
    xc = x - mean
    var = _dot(xc, xc) / n
    if var <= (1e-9 * abs(mean)) ** 2 or var == 0:
        return _result(sig, [], None, "constant signal")
    # search band in bins of the padded transform (bin = 1 / (N dt) Hz)
    n_pad = next_fast_len(n, real=True)
    N = (2 if n < _PAD_BELOW else 1) * n_pad
    longest = n * dt / min_cycles
    if max_period_s is not None:
        longest = min(longest, float(max_period_s))
    shortest = 2 * dt if min_period_s is None else max(float(min_period_s), 2 * dt)
    spec = _spectrum(xc, N * dt / longest, N * dt / shortest, 1.0 - min_confidence)
    if spec is None:
        return _result(sig, [], None, f"too short: {n} samples leave no period to search")
    S, B, lo, hi = spec.S, spec.B, spec.k_lo, spec.k_hi
    peaks = lo + np.flatnonzero(spec.peak[lo : hi + 1])
    cand = peaks[S[peaks] > spec.z_thr * B[peaks]]
    cand = cand[spec.pval(cand) < spec.p_thr]
    # the strongest lines also count when their harmonic comb is significant as a
    # whole (few-cycle burst trains: each line alone is weak against a noise level
    # set by few bins)
    top = peaks[np.argsort(-S[peaks])[:_COMB_TOP]]
    top = top[S[top] > (S[cand].max() if len(cand) else 0.0)]  # stronger than any line
    if len(top):  # that passed alone: their combs may be what makes them clear
        cand = np.union1d(cand, top[_comb_pval(spec, _interp_bins(S, top)) < spec.alpha])
    # the clearest lines that pass neither test are tried last, on their spectral and
    # envelope evidence together (a jittered train's broadened fundamental, against a
    # noise level set by few bins)
    taken = np.zeros(len(S), dtype=bool)
    taken[cand] = True
    rest = peaks[~taken[peaks]]
    rest = rest[spec.z_pk[rest] >= _LATE_Z * spec.z_thr]  # may pass the rescue (_steady)
    late = np.union1d(_top(rest, spec.z_pk[rest], _ENV_TOP), _top(rest, S[rest], _ENV_TOP))
    if len(cand) == 0 and len(late) == 0:
        best = lo + int(np.argmax(S[lo : hi + 1] / B[lo : hi + 1]))
        fap = float(_fap(spec.pval(best), spec.m))
        return _result(
            sig, [], spec, f"no spectral line above the noise level (least false alarm {fap:.2g})"
        )
    cand = np.union1d(cand, late)
    # strong lines lowest frequency first (in a flat comb of narrow bursts any
    # harmonic may be the strongest), then the others strongest first
    strong = S[cand] >= _STRONG * S[cand].max(initial=0.0)
    cand = np.concatenate((np.sort(cand[strong]), cand[~strong][np.argsort(-S[cand[~strong]])]))
    open_ = np.ones(len(cand), dtype=bool)
    groups: list[dict] = []
    rows: list[dict] = []
    vetoed: list[float] = []  # fundamentals [bins] whose envelope is noise's
    reported: list[dict] = []  # groups of the periods reported
    bursts: list[_Bursts | None] = []  # the signal's bursts, found once when first needed
    for _ in range(4 * max_periods + 16):
        if not open_.any() or len(rows) >= max_periods:
            break
        ia = int(np.argmax(open_))
        ka = int(cand[ia])
        open_[ia] = False
        Ka, Sa = _interp_peak(S, ka)
        K0, S0, h, p_sub = _fundamental(spec, Ka, Sa)
        if h > 1 and _skirt_only(spec, K0, h, _describe(spec, xc, var, Ka, Sa, groups, cand)):
            K0, S0, h, p_sub = Ka, Sa, 1, 0.0  # its sub-harmonics are the line's own skirt
        if any(abs(K0 - v) <= float(_tol(1, 0.0, v, spec.ov)) for v in vetoed):
            continue  # a fluctuation already seen
        if any(_on_comb(K0, g, spec.ov) for g in groups):
            continue  # a line of a period already reported
        if groups and _claimed(spec, np.array([int(round(K0))]), groups)[0]:
            continue  # a side lobe, skirt, sideband or alias of one
        g = _describe(spec, xc, var, K0, S0, groups, cand)
        if g["refined_by"] == "phase" and any(
            _on_comb(g["K0"], o, spec.ov) for o in groups if not o.get("rejected")
        ):
            continue  # its phase counts the cycles of a period already reported
        groups.append(g)
        if g["z"] <= 0.0:  # no spectral peak at its own frequency: no line, no period
            g["rejected"] = True
            open_ &= ~_explained(spec, cand, g)
            continue
        if g["coverage"] < _MIN_COVER:  # present in a few stretches only (e.g. the
            g["rejected"] = True  # cadence of requests inside bursts): not a period
            open_ &= ~_explained(spec, cand, g)
            continue
        fap = float(_fap(min(g["p"], float(spec.pval(ka))), spec.m))
        if fap > 1e-9:  # the comb as a whole may be clearer than its lines
            fap = min(fap, float(_comb_pval(spec, np.array([g["K0"]]), groups[:-1])[0]))
        fap = max(fap, p_sub)
        fap = _steady(spec, fap, min(g["p"], float(spec.pval(ka))), g)
        if g["veto"]:  # an envelope as unsteady as noise's: a fluctuation of a broad
            groups.pop()  # continuum, which explains no other line
            vetoed += [K0, g["K0"]]
            continue
        if fap > spec.alpha:  # its own lines (not other periods') are not clear enough
            g["rejected"] = True
            open_ &= ~_explained(spec, cand, g)
            continue
        if not bursts:
            bursts.append(_bursts(x))
        if _unsupported(bursts[0], g, n) or _comb_only(bursts[0], g, reported, n):
            g["rejected"] = True  # a harmonic, a cadence inside bursts, or a line of
            open_ &= ~_explained(spec, cand, g)  # a reported period's comb: no cycle
            continue
        parent = len(rows)
        rows.append(_row(g, sig.dt, parent, -1, fap))
        reported.append(g)
        if h > 1 and Sa >= _EXCESS * S0 and len(rows) < max_periods:
            # the line stands out of its fundamental's comb: report the longest
            # period of that strong sub-comb too (e.g. staging inside a checkpoint cycle)
            Ke, Se = _excess(spec, Ka, Sa, h, S0)
            sub = _describe(spec, xc, var, Ke, Se, groups[:-1], cand)
            groups.append(sub)
            open_ &= ~_explained(spec, cand, sub)
            if sub["coverage"] >= _MIN_COVER:
                fap = float(_fap(min(sub["p"], float(spec.pval(ka))), spec.m))
                fap = _steady(spec, fap, min(sub["p"], float(spec.pval(ka))), sub)
                if not (
                    sub["veto"]
                    or _unsupported(bursts[0], sub, n)
                    or _comb_only(bursts[0], sub, [o for o in reported if o is not g], n)
                ):
                    if _comb_only(bursts[0], g, [sub], n):  # the longer period's bursts
                        rows[parent] = _row(sub, sig.dt, parent, -1, fap)  # are the sub-comb's,
                        reported[-1] = sub  # alike: one period, the line that stands out
                    else:
                        rows.append(_row(sub, sig.dt, len(rows), parent, fap))
                        reported.append(sub)
        open_ &= ~_explained(spec, cand, g)
    if not rows:
        return _result(sig, [], spec, "lines found, but none shows through the signal's span")
    return _result(sig, rows, spec, "")


class _Bursts(NamedTuple):
    """Active runs of a bursty signal: start and stop samples, excess volume of each."""

    start: np.ndarray
    stop: np.ndarray
    volume: np.ndarray


def _bursts(x: np.ndarray) -> _Bursts | None:
    """The bursts of a signal that is active a minority of the time, or None.

    The idle level is the median, the noise its median absolute deviation
    (x 1.4826), both from about ``_B_LEVEL_SAMPLES`` evenly spread samples,
    as is the share of the excess mass below; a sample is active
    ``_B_SIGMA`` noise deviations and ``_B_FLOOR`` of the range above the
    idle level. The count of bursts is trusted only when the signal is
    bursty (active less than half the time; Carns et al. 2011, section 4:
    mostly idle devices) and the active samples carry ``_B_MASS`` of the
    excess over the idle level (bursts that stand clear of the noise; under
    heavy noise, no count and no burst rule). Start and stop are sample
    indices (stop exclusive), volumes in signal units x samples.
    """
    step = max(1, len(x) // _B_LEVEL_SAMPLES)  # levels from evenly spread samples
    xs = x[::step]
    lo = float(np.median(xs))
    noise = 1.4826 * float(np.median(np.abs(xs - lo)))
    thr = max(_B_SIGMA * noise, _B_FLOOR * (float(x.max()) - lo))
    if not thr > 0:
        return None
    act = x > lo + thr
    count = int(np.count_nonzero(act))
    if count == 0 or count >= 0.5 * len(x):
        return None
    ds = np.maximum(xs - lo, 0.0)  # the excess over the idle level (same samples)
    if float(np.add.reduce(ds[ds > thr])) < _B_MASS * float(np.add.reduce(ds)):
        return None
    xa = x[act] - lo
    d = np.flatnonzero(act[1:] != act[:-1]) + 1  # edges of the active runs
    start = np.concatenate(([0], d[~act[d - 1]])) if act[0] else d[~act[d - 1]]
    stop = d[act[d - 1]]
    if act[-1]:
        stop = np.concatenate((stop, [len(x)]))
    offsets = np.concatenate(([0], np.cumsum(stop - start)[:-1]))
    return _Bursts(start, stop, np.add.reduceat(xa, offsets))


def _merged(b: _Bursts, L: float) -> tuple[int, np.ndarray]:
    """Bursts of a period of L samples (runs closer than ``_B_GAP L`` merged), volumes."""
    new = np.concatenate(([True], b.start[1:] - b.stop[:-1] >= _B_GAP * L))
    idx = np.flatnonzero(new)
    return len(idx), np.add.reduceat(b.volume, idx)


def _unsupported(b: _Bursts | None, g: dict, n: int) -> bool:
    """Too few bursts for g's period to be a cycle of a burst train.

    An I/O cycle of a bursty program holds a burst (Miller & Katz 1991,
    section 5.3: bursts "came in cycles" matching the iterations). Cut the
    span into consecutive windows of the period, L samples: a period showing
    in a share ``coverage`` of the span has a burst onset in about
    ``coverage n / L`` of them (jitter moves onsets between neighbouring
    windows, it does not empty half of them). With onsets in fewer than
    ``_B_SUPPORT`` of those it is a harmonic of a longer cycle (harmonic h:
    one window in h) or a cadence inside bursts (only the windows inside
    bursts), not a cycle.
    """
    if b is None:
        return False
    held = len(np.unique((b.start // g["L"]).astype(np.int64)))  # cycles holding an onset
    return held < _B_SUPPORT * g["coverage"] * n / g["L"]


def _ratio_of(L2: float, L1: float) -> bool:
    """Is the frequency of a period of L2 samples p / q times that of L1 (p, q <= 4, != 1)?"""
    r = L1 / L2
    for q in range(1, _B_RATIO + 1):
        for p in range(1, _B_RATIO + 1):
            if p != q and math.gcd(p, q) == 1 and abs(r - p / q) <= _B_RATIO_TOL * p / q:
                return True
    return False


def _comb_only(b: _Bursts | None, g: dict, reported: list[dict], n: int) -> bool:
    """Is g's period, in a small-integer ratio to a reported one, without bursts of its own?

    Two periods whose frequencies are in a ratio p / q (p, q <= 4) may be one
    comb: a jittered train of few cycles puts lines at 1/2, 3/2 ... of its
    frequency. A nested period is real when it has bursts of its own: more
    bursts than the reported period's cycles explain (at least half of its
    own cycles more; two trains), or bursts that are not all alike (a larger
    or smaller burst every k iterations: a checkpoint, Miller & Katz 1991,
    section 5.3). Identical bursts, as many as the reported period's cycles,
    give no second period.
    """
    if b is None:
        return False
    L2 = g["L"]
    for o in reported:
        L1 = o["L"]
        if not _ratio_of(L2, L1):
            continue
        count, vol = _merged(b, min(L1, L2))
        if count - o["coverage"] * n / L1 >= _B_SUPPORT * g["coverage"] * n / L2:
            continue  # bursts of its own
        v = vol[1:-1]  # edge bursts may be cut by the span
        if len(v) >= 2:
            med = float(np.median(v))
            if v.max() >= _B_ALIKE * med or v.min() * _B_ALIKE <= med:
                continue  # bursts that differ: a nested period may repeat them
        return True
    return False


def _skirt_only(spec: _Spec, K0: float, h: int, g: dict) -> bool:
    """Are the lines at j K0 (j = 1..h-1) all within the skirts of g's comb?

    A line at ``K0 = Ka / h`` counts as the fundamental of the strong line at
    ``Ka`` when its multiples below ``Ka`` carry power (:func:`_fundamental`).
    When the strong line's own cycles jitter by ``sigma`` (measured by its
    phase, ``g``), its harmonic ``i`` is a Lorentzian of half-width ``gamma =
    pi sigma^2 i^2 Ka`` bins whose tail at ``d`` bins holds ``(gamma / d)^2``
    of its peak, above the Hann window's side lobes: the same rule as the
    skirts assigned to an accepted period (:func:`_explained`, within 10x the
    tail). Sub-harmonic lines no stronger than that are the skirt, not a
    longer cycle. Empty places (no local maximum) count as skirt too.
    """
    ov, Ka = spec.ov, g["K0"]
    sigma = 0.0 if not np.isfinite(g["sigma"]) else float(g["sigma"])
    j = np.arange(1, h, dtype=float)
    pk = _peaks_in(spec, j * K0, _tol(j, 0.0, K0, ov))
    k = pk[pk > 0].astype(float)
    if len(k) == 0:
        return True
    i = np.maximum(np.rint(k / Ka), 1.0)
    d = np.abs(k - i * Ka)
    ui, inv = np.unique(i, return_inverse=True)  # one window per harmonic
    line = _window_max(spec.S_pk, ui * Ka, _tol(ui, sigma, Ka, ov))[inv]
    gamma = np.maximum(math.pi * sigma**2 * i**2 * Ka, 1e-9)
    env = np.maximum(_hann_env(d / ov), (gamma / np.maximum(d, gamma)) ** 2)
    return bool(np.all(spec.S[pk[pk > 0]] <= 10.0 * line * env))


def _top(items: np.ndarray, key: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` items of largest ``key`` (any order; argpartition, not a full sort)."""
    if len(items) <= k:
        return items
    return items[np.argpartition(-key, k)[:k]]


def _either(p: float, q: float) -> float:
    """Probability that at least one of two independent false alarms happens."""
    return float(1.0 - (1.0 - p) * (1.0 - q))


def _steady(spec: _Spec, fap: float, p_line: float, g: dict) -> float:
    """False alarm of a period from its spectral and its envelope evidence.

    ``q`` is the envelope test (:func:`_envelope_pval`). The spectral false
    alarm ``fap`` may be replaced by Fisher's combination of the line's local
    p-value and ``q`` (``-2 ln(p q) ~ chi2(4)``), corrected for the ``m``
    searched frequencies like ``fap``, when the envelope is steady in absolute
    terms too (coverage at least ``_RESCUE_COVER``, where noise's is pi / 4)
    and the line's power ratio is at least half of ``spec.z_thr`` (the ratio
    that passes against a well-estimated noise level): a jittered train's
    broadened fundamental is such a line. Its peak ratio understates it twice
    over: a Lorentzian as wide as the Hann main lobe's half-power width (0.72
    bins, Harris 1978, table 1) keeps about half of a sharp line's peak, and
    its own skirt and smeared harmonics raise the level of the few bins that
    set the noise level below 10 cycles. The envelope then carries the
    evidence. Red noise, whose steep spectrum steadies the envelope of a band,
    makes no such line: on 690 noise signals (white, Poisson, one burst,
    on/off, AR(1) 0.9-0.999 with and without a random walk, 10^3-10^5
    samples) none reached confidence 0.99 with the gate at half, as at one.

    Where the coverage was measured away from the band's edge ringing
    (``g["interior"]``: at least 2 cycles between the ``_EDGE`` cycles left
    out at each end), and unless the period
    is pinned by a sharp comb (3 or more clear harmonics on their places,
    ``refined_by == "harmonics"``: no smeared continuum makes those; random
    missing bursts make the envelope unsteady but keep the comb sharp), the
    envelope test is also necessary: the false alarm is ``1 - (1 - f)(1 - q)``, and with
    ``q > _Q_VETO`` the line is no period at all but a fluctuation of a broad
    continuum (e.g. of a burst train's harmonics smeared by jitter), which
    explains no other line (``g["veto"]``). Sets ``g["q_env"]`` and
    ``g["veto"]``; returns the false alarm.
    """
    q = g["q_env"] = _envelope_pval(g["coverage"], g["n_cycles"])
    stat = -math.log(max(p_line, 1e-300)) - math.log(max(q, 1e-300))
    joint = float(_fap(float(gammaincc_int(2, stat)), spec.m))
    rescue = g["coverage"] >= _RESCUE_COVER and g["z"] >= _RESCUE_Z * spec.z_thr
    f = min(fap, joint) if rescue else fap
    top = int(math.floor(g["K0"] - float(_tol(1, g["sigma"], g["K0"], spec.ov))))
    exposed = top > spec.k_lo and float(spec.S_pk[spec.k_lo : top].max()) > g["S"]
    test = exposed and g["interior"] and g["refined_by"] != "harmonics"
    g["veto"] = bool(test and q > _Q_VETO)
    return _either(f, q) if test else f


def _envelope_pval(coverage: float, cycles: float) -> float:
    """P(a narrowband noise component shows an envelope as steady as ``coverage``).

    Band-limited Gaussian noise has a Rayleigh envelope, whose coverage
    ``(E e)^2 / E e^2`` is pi / 4; a steady periodic component has coverage 1.
    A spectral line that stands above a local noise level may still be a
    random fluctuation of a broad continuum (the high harmonics of a burst
    train smeared by cycle-to-cycle jitter are one), and then its envelope is
    Rayleigh. The coverage measured over ``c`` cycles of the tracked band
    (+-_BAND of the frequency) is modelled, for such noise, by a Beta law of
    mean ``pi / 4 + 0.2 / c`` and standard deviation ``min(0.07, 0.2 /
    sqrt(c))``: both fitted to 200-300 white-noise runs per ``c`` in 3..30000
    through :func:`_phase_grid` (simulated: 0.17-0.197 / sqrt(c) from 12
    cycles on; the law is conservative in the upper tail). Returns the upper tail
    at ``coverage``.
    """
    c = max(float(cycles), 1.0)
    mu = math.pi / 4 + 0.2 / c
    sd = min(_ENV_SD0, _ENV_SD / math.sqrt(c))
    nu = mu * (1.0 - mu) / sd**2 - 1.0
    cov = min(max(float(coverage), 0.0), 1.0)
    return float(betaincc(mu * nu, (1.0 - mu) * nu, cov))


def _interp_bins(S: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Gaussian interpolation of the peaks at bins k (vectorized :func:`_interp_peak`)."""
    la, lb, lc = (np.log(np.maximum(S[k + i], _TINY)) for i in (-1, 0, 1))
    den = la - 2 * lb + lc
    off = np.where(den < 0, 0.5 * (la - lc) / np.where(den < 0, den, -1.0), 0.0)
    return k + np.minimum(np.maximum(off, -0.5), 0.5)


def _comb_pval(spec: _Spec, K: np.ndarray, groups: list[dict] | None = None) -> np.ndarray:
    """False-alarm probability of the harmonic combs of fundamentals K [bins].

    For each K and H in 4, 16, 64 (harmonics below the searched band's top):
    the local p-values of the highest peak near h K (h = 1..H, window-corrected)
    are combined by Fisher's method, ``-2 sum ln p ~ chi2(2H)``; the least
    over H, times ``3 m`` (orders and frequencies tried), bounds the
    probability that noise makes such a comb anywhere. Lines on the combs of
    ``groups`` (periods already reported) do not count.
    """
    if len(K) == 0:
        return np.empty(0)
    ov = spec.ov
    best = np.ones(len(K))
    for H in (4, 16, 64):
        h = np.arange(1, H + 1, dtype=float)
        cen = (K[:, None] * h[None, :]).ravel()
        tol = _tol(np.tile(h, len(K)), 0.0, np.repeat(K, H), ov)
        inside = cen <= spec.k_hi
        zmax = np.zeros(len(cen))
        if inside.any():
            zmax[inside] = _near_max(spec.z_pk, cen[inside], tol[inside])
        kk = np.minimum(np.rint(cen).astype(np.int64), len(spec.S) - 1)
        p = spec.pval(kk, zmax) * (2 * tol + 1) / ov
        if groups:
            inside &= ~_claimed(spec, _peaks_in(spec, cen, tol), groups)
        p = np.where(inside, np.minimum(np.maximum(p, 1e-300), 1.0), 1.0)
        stat = -np.log(p).reshape(len(K), H).sum(axis=1)
        best = np.minimum(best, gammaincc_int(H, stat))
    return np.minimum(1.0, best * 3 * spec.m)


def _fundamental(spec: _Spec, Ka: float, Sa: float) -> tuple[float, float, int, float]:
    """Lowest sub-harmonic of the line at Ka bins whose comb carries power.

    Order h qualifies when the line's sub-harmonic Ka / h has at least
    ``_MIN_SUB`` of its power and some power of its own (local p < 0.05), at
    least half of the multiples j Ka / h (j < h) show power (local p < 0.01),
    and Fisher's combination of those local p-values, corrected for the
    orders tried, is below ``alpha``. Returns the fundamental's bin, power,
    order h (1: the line itself) and that corrected p-value (0 for h = 1).
    """
    S, ov = spec.S, spec.ov
    h_max = min(_MAX_SUB, int(Ka // spec.k_lo))
    if h_max < 2:
        return Ka, Sa, 1, 0.0
    # first gate, all orders at once: the sub-harmonic shows power of its own
    hs = np.arange(h_max, 1, -1)
    kh = Ka / hs
    t1 = _tol(np.ones(len(hs)), 0.0, kh, ov)
    s1 = _near_max(spec.S_pk, kh, t1)
    p1 = spec.pval(np.rint(kh).astype(np.int64), _near_max(spec.z_pk, kh, t1))
    gate = (s1 >= _MIN_SUB * Sa) & (p1 * (2 * t1 + 1) / ov < 0.05)
    for h in hs[gate]:
        h = int(h)
        kh = Ka / h
        j = np.arange(1, h)
        tj = _tol(j, 0.0, kh, ov)
        zj = _window_max(spec.z_pk, j * kh, tj)
        pj = spec.pval(np.rint(j * kh).astype(np.int64), zj) * (2 * tj + 1) / ov
        pj = np.minimum(np.maximum(pj, 1e-300), 1.0)
        if h > 2 and np.mean(pj < 0.01) < 0.5:
            continue
        p = float(gammaincc_int(h - 1, -np.log(pj).sum())) * (h_max - 1)
        if p >= spec.alpha:
            continue
        half = float(tj[0])
        a, b = max(1, math.ceil(kh - half)), math.floor(kh + half)
        Kf, Sf = _interp_peak(S, a + int(np.argmax(spec.S_pk[a : b + 1])))
        if abs(h * Kf - Ka) <= float(_tol(h, 0.0, Kf, ov)):  # Ka is h times Kf indeed
            return Kf, Sf, h, p
    return Ka, Sa, 1, 0.0


def _peaks_in(spec: _Spec, centres: np.ndarray, half: np.ndarray) -> np.ndarray:
    """Bin of the highest local maximum within +-half (a few bins) of each centre.

    -1 where there is none. Vectorized by gathering the windows as a matrix.
    """
    S_pk = spec.S_pk
    w = int(math.ceil(float(np.max(half))))
    off = np.arange(-w, w + 1)
    idx = np.rint(centres).astype(np.int64)[:, None] + off[None, :]
    np.maximum(idx, 1, out=idx)
    np.minimum(idx, len(S_pk) - 1, out=idx)
    vals = np.where(np.abs(idx - centres[:, None]) <= half[:, None], S_pk[idx], 0.0)
    j = vals.argmax(axis=1)
    rows = np.arange(len(centres))
    return np.where(vals[rows, j] > 0, idx[rows, j], -1)


def _harmonic_fit(spec: _Spec, K0: float) -> tuple[float, int]:
    """Fundamental [bins] from the positions of its harmonics (weighted fit).

    Harmonics 1..8, then 1..64 are located (the highest peak
    within the tolerance of h K) and interpolated; K is their least-squares
    slope through the origin, weighted by the power ratio (capped). Returns
    K and the number of significant lines used.
    """
    K, used = K0, 0
    ov = spec.ov
    for H in (8, 64):
        hs = np.arange(1, H + 1, dtype=float)
        hs = hs[hs * K <= spec.k_hi]
        if len(hs) < 2:
            break
        ks = _peaks_in(spec, hs * K, _tol(hs, 0.0, K, ov))
        ok = ks > 0
        ok[ok] = spec.S[ks[ok]] > 25.0 * spec.B[ks[ok]]  # clear lines only
        if ok.sum() < 2:
            break
        k = ks[ok]
        pos = _interp_bins(spec.S, k)
        w = np.minimum(spec.S[k] / spec.B[k], 1e4) * hs[ok] ** 2
        K = float(np.add.reduce(w * pos / hs[ok]) / np.add.reduce(w))
        used = int(ok.sum())
    return K, used


def _excess(spec: _Spec, Ka: float, Sa: float, h: int, S0: float) -> tuple[float, float]:
    """Lowest frequency Ka / d (d divides h) still _EXCESS times stronger than S0."""
    for d in range(h - 1, 1, -1):
        if h % d:
            continue
        kd = Ka / d
        tol = float(_tol(1, 0.0, kd, spec.ov))
        a, b = max(1, math.ceil(kd - tol)), math.floor(kd + tol)
        if b < a:
            continue
        k = a + int(np.argmax(spec.S_pk[a : b + 1]))
        if spec.S_pk[k] >= _EXCESS * S0:
            return _interp_peak(spec.S, k)
    return Ka, Sa


def _describe(
    spec: _Spec,
    xc: np.ndarray,
    var: float,
    K0: float,
    S0: float,
    groups: list[dict],
    others: np.ndarray,
) -> dict:
    """Refined period, amplitude, phase, jitter and evidence of the line at K0 bins."""
    n, N, ov = len(xc), spec.N, spec.ov
    L = N / K0  # period [samples]
    refined = "spectrum"
    Kh, used = _harmonic_fit(spec, K0)
    if used >= 3:  # the comb's lines pin the period down (error / h for harmonic h)
        L, refined = N / Kh, "harmonics"
    elif n / L < _ACF_BELOW:  # coarse spectral resolution: use the autocorrelation peak
        better = _acf_refine(xc, L, max(2.0, _ACF_WIN * L * L / n))
        if better is not None:
            L, refined = better, "acf"
    Kr = N / L
    own = float(_tol(1, 0.0, Kr, ov))
    # other lines inside the tracked band (other periods' combs, lines not yet
    # assigned) are cut out so that they do not pull the phase
    strong = others[(spec.S[others] >= 0.05 * S0) & (np.abs(others - Kr) > _SKIRT * Kr)]
    centres = [strong.astype(float)]  # (nearer lines may be this line's jitter skirt)
    widths = [np.full(len(strong), 2.0 * ov)]
    for g in groups:
        hs = np.arange(1, int((1 + _BAND) * Kr / g["K0"]) + 2)
        centres.append(hs * g["K0"])
        widths.append(_tol(hs, g["sigma"], g["K0"], ov))
    cen, wid = np.concatenate(centres), np.concatenate(widths)
    keep = (np.abs(cen - Kr) > own + wid) & (np.abs(cen - Kr) <= (_BAND + 0.1) * Kr)
    notches = (cen[keep], wid[keep])
    pos, psi, env = _phase_grid(spec.X, N, Kr, notches)
    keep = (pos >= _EDGE * L) & (pos <= n - 1 - _EDGE * L)
    onsets = _onset_jitter(pos[keep], psi[keep], env[keep])
    for _ in range(2):  # the mean cycle length the phase counts (robust to jitter)
        if _coverage(env, pos, keep, n) < _MIN_COVER:
            break  # a component of a few stretches (rejected below): nothing to count
        L_ph = _phase_period(pos, psi, keep, onsets)
        if L_ph is None or not spec.k_lo <= N / L_ph <= spec.k_hi:
            break  # too few cycles, or out of the searched band
        if abs(n / L_ph - n / L) <= _PH_CYCLES or refined == "harmonics":
            break  # within the spectrum's resolution, or pinned by sharp harmonics
        a, b = sorted((int(round(N / L_ph)), int(round(Kr))))
        if float(np.mean(spec.S[a : b + 1])) < _PH_POWER * S0:
            break  # the line's power does not reach where the phase points: noise counted
        L, refined = L_ph, "phase"
        Kr = N / L
        pos, psi, env = _phase_grid(spec.X, N, Kr, notches)
        keep = (pos >= _EDGE * L) & (pos <= n - 1 - _EDGE * L)
        onsets = _onset_jitter(pos[keep], psi[keep], env[keep])
    sigma, raw = onsets[:2]
    # the share of the span the component shows in: (mean envelope)^2 / mean square,
    # 1 for a steady envelope, f for one present a fraction f of the time
    coverage = _coverage(env, pos, keep, n)
    k = min(max(int(round(Kr)), ov), len(spec.X) - 1 - ov)
    X = spec.X
    Xh = 0.5 * X[k] - 0.25 * X[k - ov] - 0.25 * X[k + ov]
    phase = float(np.angle(Xh)) - np.pi * (Kr - k) / ov
    phase = (phase + np.pi) % (2 * np.pi) - np.pi
    hs = np.arange(2, _N_HARM + 1)
    hs = hs[hs * Kr <= spec.k_hi]
    harmonics = 0
    s = 0.0 if np.isnan(raw) else raw  # tolerances use the jitter before noise removal
    t1 = float(_tol(1, s, Kr, ov))
    a1 = max(1, math.ceil(Kr - t1))
    z_win = spec.z_pk[a1 : math.floor(Kr + t1) + 1]
    if groups and len(z_win):  # lines of periods already reported are not this one's
        pk = a1 + np.flatnonzero(z_win > 0)
        z_win = np.where(_claimed(spec, pk, groups), 0.0, z_win[pk - a1])
    z_own = float(z_win.max(initial=0.0))
    p_best = float(spec.pval(min(int(round(Kr)), len(spec.S) - 1), z_own))
    if len(hs):
        th = _tol(hs, s, Kr, ov)
        zh = _window_max(spec.z_pk, hs * Kr, th)
        ph = spec.pval(np.rint(hs * Kr).astype(np.int64), zh)
        if groups:  # lines that belong to other periods are theirs, not evidence here
            ph[_claimed(spec, _peaks_in(spec, hs * Kr, th), groups)] = 1.0
        harmonics = int(np.sum(ph * len(hs) < spec.alpha))
        p_best = min(p_best, float(ph.min()))  # the comb's clearest line
    return {
        "K0": Kr,
        "L": L,
        "S": S0,
        "sigma": s,
        "jitter": sigma,
        "amplitude": 2.0 * math.sqrt(max(S0, 0.0)) / spec.gain,
        "phase": phase,
        "acf": _acf_evidence(xc, L),
        "n_cycles": n / L,
        "harmonics": harmonics,
        "refined_by": refined,
        "z": z_own,
        "p": p_best,
        "coverage": coverage,
        "interior": bool(keep.sum() >= 16),  # coverage measured away from the edges
    }


def _row(g: dict, dt: float, idx: int, parent: int, fap: float) -> dict:
    P = g["L"] * dt
    return {
        "rank": idx,
        "period_s": P,
        "frequency_hz": 1.0 / P,
        "amplitude": g["amplitude"],
        "phase_rad": g["phase"],
        "first_peak_s": ((-g["phase"] / (2 * np.pi)) % 1.0) * P,
        "jitter": g["jitter"],
        "confidence": 1.0 - fap,
        "false_alarm": fap,
        "power_ratio": g["z"],
        "acf": g["acf"],
        "n_cycles": g["n_cycles"],
        "harmonics": g["harmonics"],
        "harmonic_of": parent,
        "refined_by": g["refined_by"],
        "coverage": g["coverage"],
    }


def _claimed(spec: _Spec, bins: np.ndarray, groups: list[dict]) -> np.ndarray:
    """Which peak bins belong to earlier periods (lines, skirts, sidebands, aliases)."""
    hit = np.zeros(len(bins), dtype=bool)
    ok = bins > 0
    for g in groups:
        if ok.any():
            hit[ok] |= _explained(spec, bins[ok], g)
    return hit


def _on_comb(K: float, g: dict, ov: int) -> bool:
    """Is the frequency K [bins] a multiple of group g's fundamental?"""
    h = round(K / g["K0"])
    return h >= 1 and abs(K - h * g["K0"]) <= float(_tol(h, g["sigma"], g["K0"], ov))


def _explained(spec: _Spec, cand: np.ndarray, g: dict) -> np.ndarray:
    """Candidates that are lines, side lobes, skirts, sidebands or aliases of g's comb."""
    K0, sigma, ov = g["K0"], g["sigma"], spec.ov
    k = cand.astype(float)
    h = np.rint(k / K0)
    out = np.zeros(len(cand), dtype=bool)
    sel = h >= 1
    if not sel.any():
        return out
    hh = h[sel]
    d = np.abs(k[sel] - hh * K0)
    uh, inv = np.unique(hh, return_inverse=True)
    line = _window_max(spec.S_pk, uh * K0, _tol(uh, sigma, K0, ov))[inv]
    # Hann side lobes, and the Lorentzian skirts of lines broadened by jitter
    # (random-walk cycle lengths: half-width pi sigma^2 h^2 K0 bins)
    gamma = np.maximum(math.pi * sigma**2 * hh**2 * K0, 1e-9)
    env = np.maximum(_hann_env(d / ov), 1.0 / (1.0 + (d / gamma) ** 2))
    Sc = spec.S[cand[sel]]
    # sidebands: weak lines close to a harmonic (modulation of the bursts or of
    # their timing, not a period of their own)
    side = (d <= np.maximum(_SIDE_D * K0, 4.0 * ov)) & (Sc <= _SIDE_P * line)
    if g.get("rejected"):  # an intermittent component: its lines are as wide as
        # 1 / (its coverage) bins; whatever is weaker within that belongs to it
        wide = 2.0 * ov / max(g["coverage"], 1e-3)
        side |= (d <= wide) & (Sc <= line)
    out[sel] = (d <= _tol(hh, 0.0, K0, ov)) | (Sc <= 10.0 * line * env) | side
    # aliases: harmonics above the Nyquist frequency fold back into the band
    # (binning does not remove them): harmonic h of f0 appears at |h f0 - m fs|;
    # they are no stronger than the comb's own lines below Nyquist
    nyq = spec.N / 2.0  # bins
    h_nyq = nyq / K0
    jit = 0.0 if np.isnan(g["jitter"]) else g["jitter"]
    if h_nyq >= 2 and math.pi * jit**2 * h_nyq**2 * K0 <= ov:  # sharp lines up there
        ht = np.arange(max(1, int(0.5 * h_nyq)), int(h_nyq) + 1)
        top = float(_window_max(spec.S_pk, ht * K0, _tol(ht, sigma, K0, ov)).max())
        weak = ~out & (spec.S[cand] <= 10.0 * top)
        if weak.any():
            kw = k[weak]
            # harmonics up to 4 x the sampling rate fold to m fs -+ f (m = 1..4)
            fs = 2.0 * nyq * np.repeat(np.arange(1.0, 5.0), 2)[:, None]
            r = (fs + np.tile([-1.0, 1.0], 4)[:, None] * kw[None, :]) / K0
            hr = np.rint(r)
            cap = np.where(fs > 2.0 * nyq, 1.0, 10.0) * top  # beyond the first fold: weaker
            near = np.abs(r - hr) * K0 <= ov * (1.0 + 0.01 * hr)  # a sharp comb
            ok = near & (hr > h_nyq) & (hr <= 8 * h_nyq) & (spec.S[cand][weak][None, :] <= cap)
            out[np.flatnonzero(weak)[ok.any(axis=0)]] = True
    return out


# --------------------------------------------------------------------------- split_cycles


def split_cycles(
    signal: Any,
    period_s: float | None = None,
    *,
    dt_s: float | None = None,
    ops: Any = None,
    phase_bins: int = 32,
) -> CycleResult:
    """Cut a signal into cycles of one period: volume, ops, duration, similarity.

    The cycle-by-cycle view of Miller & Katz (1991, section 5.3): in their
    programs the demand patterns of all cycles were "remarkably similar" and
    the reference patterns "essentially identical from cycle to cycle".
    Boundaries follow the instantaneous phase of the signal's component at
    the period, half a cycle away from its peaks, so that they stay between
    bursts when cycle lengths jitter.

    Parameters
    ----------
    signal : array-like, pandas.Series or tuple of (timestamps, values)
        As for :func:`find_periods` (e.g. bytes per bin).
    period_s : float, optional
        The period [s]; default the strongest period :func:`find_periods`
        finds (a :class:`~iochar.errors.ParameterError` when there is none).
    dt_s : float, optional
        Sample spacing [s], as for :func:`find_periods`.
    ops : array-like, optional
        A second signal on the same samples (e.g. operations per bin, from
        :func:`signal_from_ops` with ``value="ops"``), summed per cycle into
        the ``ops`` column.
    phase_bins : int, default 32
        Bins per cycle of the profiles compared for similarity (>= 4).

    Returns
    -------
    CycleResult
        The per-cycle table, the median cycle's profile and the summary
        similarity and jitter.

    Raises
    ------
    ParameterError
        A bad signal (see :func:`find_periods`), a period outside
        [2 samples, span / 2], or no period found when ``period_s`` is None.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.where(np.arange(1000) % 100 < 10, 5.0, 0.0)   # 50 bytes every 100 s
    >>> res = split_cycles(x, 100.0)
    >>> res.cycles.loc[res.cycles.complete, "bytes"].unique().tolist()
    [50.0]
    >>> round(res.similarity, 3)
    1.0
    """
    caller = "split_cycles"
    check_int(phase_bins, "phase_bins", caller, "an int >= 4", low=4)
    sig = _as_signal(signal, dt_s, caller, ops=ops)
    n, dt, x = len(sig.x), sig.dt, sig.x
    if period_s is None:
        found = _find(sig, 1, 0.99, 2.0, None, None)
        if found.periods.empty:
            raise ParameterError(
                "period_s", caller, "given, as the signal shows no period", found.reason
            )
        period_s = float(found.periods["period_s"].iloc[0])
    check_real(
        period_s,
        "period_s",
        caller,
        f"a number of seconds in [{2 * dt:g}, {n * dt / 2:g}] (2 samples to half the span)",
        low=2 * dt,
        high=n * dt / 2,
    )
    X, N, _ = _transform(x - x.mean())
    gpos, gpsi, _ = _phase_grid(X, N, N * dt / float(period_s))
    i = np.arange(n)
    # phase at every sample, shifted so boundaries fall at the component's troughs
    psi = (np.interp(i, gpos, gpsi) - np.pi) / (2 * np.pi)
    turn = np.floor(psi)
    cyc = (turn - turn[0]).astype(np.int64)
    n_cyc = int(cyc[-1]) + 1
    frac = psi - turn
    first = np.searchsorted(cyc, np.arange(n_cyc), side="left")
    last = np.searchsorted(cyc, np.arange(n_cyc), side="right")
    vol = np.bincount(cyc, weights=x, minlength=n_cyc)
    nops = (
        np.bincount(cyc, weights=sig.ops, minlength=n_cyc)
        if sig.ops is not None
        else np.full(n_cyc, np.nan)
    )
    start, end = first * dt, last * dt
    dur = end - start
    inner = dur[1:-1] if n_cyc > 2 else dur
    med_dur = float(np.median(inner))
    complete = np.ones(n_cyc, dtype=bool)
    complete[[0, -1]] = dur[[0, -1]] >= 0.9 * med_dur
    # onset: first sample at or above half of the cycle's range
    peak = np.maximum.reduceat(x, first)
    base = np.minimum.reduceat(x, first)
    above = x >= (base + 0.5 * (peak - base))[cyc]
    onset_i = np.minimum.reduceat(np.where(above, i, n), first)
    onset = np.where(peak > base, onset_i * dt, np.nan)
    # time profiles over phase, compared as cumulative shares (1 - earth mover's
    # distance in cycles: a burst 1/32 cycle late costs 1/32)
    G = int(phase_bins)
    cell = cyc * G + np.minimum((frac * G).astype(np.int64), G - 1)
    pos_x = np.maximum(x, 0.0)
    tot = np.bincount(cell, weights=pos_x, minlength=n_cyc * G).reshape(n_cyc, G)
    cnt = np.bincount(cell, minlength=n_cyc * G).reshape(n_cyc, G)
    mass = tot.sum(axis=1)
    sums = np.bincount(cell, weights=x, minlength=n_cyc * G).reshape(n_cyc, G)
    with np.errstate(invalid="ignore", divide="ignore"):
        cdf = np.cumsum(tot, axis=1) / mass[:, None]
    ref = complete & (mass > 0)
    if not ref.any():
        ref = mass > 0
    ref_cdf = np.median(cdf[ref], axis=0) if ref.any() else np.full(G, np.nan)
    shape = 1.0 - np.abs(cdf - ref_cdf[None, :]).mean(axis=1)
    shape = np.where(mass > 0, np.nan_to_num(shape, nan=0.0), 0.0)
    med_vol = float(np.median(vol[complete])) if complete.any() else float(np.median(vol))
    lo_v = np.minimum(np.abs(vol), abs(med_vol))
    hi_v = np.maximum(np.abs(vol), abs(med_vol))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(hi_v > 0, lo_v / hi_v, 1.0)
    sim = shape * ratio
    cycles = pd.DataFrame(
        {
            "cycle": np.arange(n_cyc, dtype=np.int64),
            "start_s": start,
            "end_s": end,
            "duration_s": dur,
            "bytes": vol,
            "ops": nops,
            "onset_s": onset,
            "complete": complete,
            "shape_similarity": shape,
            "volume_ratio": ratio,
            "similarity": sim,
        }
    )
    on = onset[complete]
    on = np.diff(on[np.isfinite(on)])
    jitter = float(np.std(on) / np.mean(on)) if len(on) >= 3 and np.mean(on) > 0 else float("nan")
    score = float(np.median(sim[complete])) if complete.any() else float("nan")
    use = complete if complete.any() else np.ones(n_cyc, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        typical = sums[use].sum(axis=0) / cnt[use].sum(axis=0)
    profile = pd.DataFrame({"phase": np.arange(G) / G, "mean": typical, "cdf": ref_cdf})
    params = dict(period_s=period_s, dt_s=dt_s, phase_bins=phase_bins)
    return CycleResult(cycles, float(period_s), score, jitter, profile, sig.t0, params=params)


# --------------------------------------------------------------------------- store


def _nice_bin(span: float) -> float:
    """Smallest of 1, 2 or 5 x 10^k seconds giving at most 16384 bins over ``span``."""
    target = max(span, 1e-6) / 16384
    e = math.floor(math.log10(target))
    return float(next(m * 10.0**e for m in (1, 2, 5, 10) if m * 10.0**e >= target))


_SPAN_SQL = f"""
WITH layer AS ({LAYER_OPS})
SELECT CASE WHEN count(*) > 0 THEN
         greatest(coalesce(max(j.runtime_s), 0),
                  coalesce((SELECT max(t_end) FROM layer WHERE job_id = $job_id), 0),
                  coalesce((SELECT max(t_start) FROM layer WHERE job_id = $job_id), 0))
       END
FROM jobs j WHERE j.job_id = $job_id
"""

_SIGNAL_SQL = f"""
WITH layer AS ({LAYER_OPS})
SELECT floor(l.t_start / $bin_s)::BIGINT AS b, sum(l.size) AS nbytes, count(*) AS n
FROM layer l LEFT JOIN files f ON f.job_id = l.job_id AND f.file_id = l.file_id
WHERE l.job_id = $job_id
  AND ($file_ids IS NULL OR list_contains($file_ids, l.file_id))
  AND ($rank IS NULL OR l.rank = $rank)
  AND ($op IS NULL OR l.op = $op)
  AND ($path IS NULL OR f.path GLOB $path)
GROUP BY ALL ORDER BY b
"""


def _job(store, job_id: Any, caller: str) -> int:
    if job_id is not None:
        return check_int(job_id, "job_id", caller, "None or an int")
    ids = [r[0] for r in store.sql("SELECT DISTINCT job_id FROM ops ORDER BY 1").fetchall()]
    if len(ids) != 1:
        raise ParameterError(
            "job_id", caller, f"given, as the store holds {len(ids)} jobs with ops", None
        )
    return int(ids[0])


def signal_from_ops(
    store,
    *,
    job_id: int | None = None,
    file_id: int | Sequence[int] | None = None,
    path: str | None = None,
    rank: int | None = None,
    op: str | None = None,
    bin_s: float | None = None,
    value: str = "bytes",
) -> pd.Series:
    """Bytes (or operations) per time bin of one job's reads and writes.

    Each read or write counts in the bin of its start time (``ops.t_start``,
    seconds since job start). The bins cover the job from 0 to its run time;
    empty bins are 0. Darshan jobs use one DXT layer (POSIX when present,
    else MPI-IO), as :mod:`iochar.analyze.characterize` does. This is the
    data rate over time of Miller & Katz (1991, Figs. 3 and 4) whose cycles
    :func:`find_periods` measures.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        The job; may be left out when the store holds one job.
    file_id : int or sequence of int, optional
        Only these files.
    path : str, optional
        Only files whose path matches this glob pattern (``"*/ckpt.*"``).
    rank : int, optional
        Only this rank (MPI rank or pid).
    op : {"read", "write"}, optional
        Only this operation; both when None.
    bin_s : float, optional
        Bin width [s]; default the smallest of 1, 2 or 5 x 10^k s that gives
        at most 16384 bins over the run.
    value : {"bytes", "ops"}, default "bytes"
        Sum of request sizes [bytes] or number of operations per bin.

    Returns
    -------
    pandas.Series
        Values per bin, indexed by the bin start ``t_s`` [s since job start]
        on a regular grid of ``bin_s``, named ``value``.

    Raises
    ------
    ParameterError
        An unknown job, a bad ``op``, ``value`` or ``bin_s``, or no job given
        while the store holds several.

    Examples
    --------
    >>> import io, iochar, pyarrow.parquet as pq
    >>> from iochar.datasets.synth import make_scenario
    >>> ops, truth = make_scenario("ccm", scale=0.05, random_state=0)
    >>> buf = io.BytesIO()
    >>> pq.write_table(ops, buf)
    >>> db = iochar.connect(":memory:")
    >>> _ = db.load(buf.getvalue(), kind="trace-parquet")
    >>> s = signal_from_ops(db, path="*/ckpt.*")     # checkpoint files only
    >>> round(find_periods(s).period_s, 1)            # every 4 iterations of 0.46 s
    1.9
    """
    caller = "signal_from_ops"
    check_choice(op, "op", caller, (None, "read", "write"), "None, 'read' or 'write'")
    check_choice(value, "value", caller, ("bytes", "ops"), "'bytes' or 'ops'")
    check_real(
        bin_s,
        "bin_s",
        caller,
        "None or a positive number of seconds",
        low=0,
        low_open=True,
        none=True,
    )
    check_int(rank, "rank", caller, "None or an int", none=True)
    if path is not None and not isinstance(path, str):
        raise ParameterError("path", caller, "None or a glob pattern (str)", path)
    if file_id is None:
        file_ids = None
    elif isinstance(file_id, int | np.integer) and not isinstance(file_id, bool):
        file_ids = [int(file_id)]
    else:
        try:
            file_ids = [int(f) for f in file_id]
        except (TypeError, ValueError) as exc:
            raise ParameterError("file_id", caller, "None, an int or ints", file_id) from exc
    job = _job(store, job_id, caller)
    row = store.sql(_SPAN_SQL, params={"job_id": job}).fetchall()
    if not row or row[0][0] is None:
        raise ParameterError("job_id", caller, "a job in the store", job)
    span = float(row[0][0])
    width = float(bin_s) if bin_s is not None else _nice_bin(span)
    got = store.sql(
        _SIGNAL_SQL,
        params={
            "job_id": job,
            "file_ids": file_ids,
            "rank": None if rank is None else int(rank),
            "op": op,
            "path": path,
            "bin_s": width,
        },
    ).fetchnumpy()
    b = np.asarray(got["b"], dtype=np.int64)
    w = np.asarray(got["nbytes" if value == "bytes" else "n"], dtype=float)
    nb = max(int(math.floor(span / width)) + 1, int(b.max()) + 1 if len(b) else 1)
    vals = np.bincount(b, weights=w, minlength=nb) if len(b) else np.zeros(nb)
    return pd.Series(vals, index=pd.Index(np.arange(nb) * width, name="t_s"), name=value)


def signal_from_counters(
    store,
    *,
    target: str | None = None,
    metric: str = "write_bytes",
    bin_s: float | None = None,
    source_id: int | None = None,
) -> pd.Series:
    """A device or target counter series, per target or summed over targets.

    Built with :func:`iochar.analyze.throughput.throughput`: the device
    throughput series in which Carns et al. (2011, section 4) measure
    burstiness and idle periods.

    Parameters
    ----------
    store : iochar.Store
        The database.
    target : str, optional
        One target (device, OST); None sums all targets per interval.
    metric : str, default "write_bytes"
        A ``counters.metric`` (``read_bytes``, ``write_ios``...).
    bin_s : float, optional
        Re-bin to this width [s]; default each sample's own interval (when
        several targets are summed: their median interval).
    source_id : int, optional
        Only counters from this input.

    Returns
    -------
    pandas.Series
        Per-interval amount (in the metric's unit), indexed by the interval
        end ``ts`` (UTC), named after the metric. Missing intervals stay
        missing (:func:`find_periods` fills them with the mean).

    Raises
    ------
    ParameterError
        No counters match, or ``bin_s`` is not positive.
    """
    from iochar.analyze.throughput import throughput

    caller = "signal_from_counters"
    check_real(
        bin_s,
        "bin_s",
        caller,
        "None or a positive number of seconds",
        low=0,
        low_open=True,
        none=True,
    )
    targets = [target] if target is not None else None
    df = throughput(store, metrics=[metric], targets=targets, bin_s=bin_s, source_id=source_id)
    if df.empty:
        raise ParameterError(
            "metric", caller, "a metric with counters for the target", (metric, target)
        )
    if bin_s is None and df["target"].nunique() > 1:
        width = float(df["covered_s"].median())
        df = throughput(store, metrics=[metric], targets=targets, bin_s=width, source_id=source_id)
    s = df.groupby("ts", sort=True)["amount"].sum()
    s.name = metric
    return s


def job_cycles(
    store,
    *,
    job_id: int | None = None,
    bin_s: float | None = None,
    period_s: float | None = None,
    phase_bins: int = 32,
    min_confidence: float = 0.99,
    **select: Any,
) -> tuple[PeriodResult, CycleResult | None]:
    """Periods of one job's I/O and its cycle-by-cycle view, in one call.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        The job; may be left out when the store holds one job.
    bin_s : float, optional
        Bin width [s] (see :func:`signal_from_ops`).
    period_s : float, optional
        Cut cycles of this period [s]; default the strongest period found.
    phase_bins : int, default 32
        See :func:`split_cycles`.
    min_confidence : float, default 0.99
        See :func:`find_periods`.
    **select
        ``file_id``, ``path``, ``rank`` or ``op``, passed to
        :func:`signal_from_ops`.

    Returns
    -------
    tuple of (PeriodResult, CycleResult or None)
        The periods of the job's bytes per bin, and its cycles (None when no
        period was found and none was given). A job with fewer than 3 bins is too
        short to hold a cycle: an empty result (reason "constant signal") and None.
    """
    b = signal_from_ops(store, job_id=job_id, bin_s=bin_s, value="bytes", **select)
    if len(b) < 3:  # too short to hold a cycle: no period, as for a flat signal
        flat = pd.Series(np.zeros(3), index=pd.Index(np.arange(3.0), name="t_s"), name="bytes")
        return find_periods(flat, min_confidence=min_confidence), None
    width = float(b.index[1] - b.index[0])
    o = signal_from_ops(store, job_id=job_id, bin_s=width, value="ops", **select)
    found = find_periods(b, min_confidence=min_confidence)
    p = period_s if period_s is not None else (found.period_s if len(found.periods) else None)
    if p is None:
        return found, None
    return found, split_cycles(b, p, ops=o.to_numpy(), phase_bins=phase_bins)
