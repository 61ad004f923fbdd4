"""What every chart shares: the theme, the lazy altair import, the column check, and
the rules that keep a chart readable.

The rules, applied by every ``*_chart`` function:

* **Units.** Bytes and byte rates are drawn in one binary unit per chart, chosen so
  that the largest value reads 1-1023 of it (:func:`_byte_unit`: B ... TiB, B/s ...
  TiB/s); durations in s, min or h (d past two days; :func:`_duration_unit`). The unit
  is in the axis title (``"write [MiB/s]"``) and the tooltips. Log axes spanning decades label each
  tick in its own unit instead (``"4 KiB"``, ``"1 MiB"``; ``"10 s"``, ``"1 h"``).
* **Time.** Time axes are UTC on a UTC scale, one 24-hour label format per axis, and
  the date always readable: in the labels, or in the title when every sample falls
  on one date (``"time (UTC), 2018-04-18"``); tooltips give ``%Y-%m-%d %H:%M:%S``.
* **Gaps.** A line breaks where its record has a hole: a missing (NaN) value, or a
  time step more than :data:`GAP_FACTOR` times the median step
  (:func:`_break_gaps` inserts a null row there; Vega-Lite breaks paths at nulls).
* **Nothing to draw.** No rows, a single point or a single step give a
  :class:`NoChart`, one sentence saying why, in place of an empty or lone-mark chart.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from iochar.errors import MissingDependencyError, ParameterError

__all__ = ["THEME", "NoChart"]

#: One look for every chart.
THEME = {"width": 640, "height": 220}

#: A time step this many times the median step is a gap in the record.
GAP_FACTOR = 3.0


def _alt():
    """The altair module, or MissingDependencyError naming the ``report`` extra."""
    try:
        import altair as alt
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise MissingDependencyError("altair", "report", "drawing charts") from exc
    return alt


def _need(df: pd.DataFrame, cols: tuple[str, ...], caller: str) -> None:
    """Raise ParameterError unless ``df`` has every column in ``cols``."""
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ParameterError(
            "df", caller, f"a DataFrame with columns {', '.join(cols)} (missing {missing})", "..."
        )


# ------------------------------------------------------------------------ no chart


class NoChart:
    """One sentence saying why a chart function drew no chart.

    A chart of no rows, of one point or of one step shows an empty frame or a lone
    mark; chart functions return this instead. A notebook cell ending in it shows the
    sentence (HTML, Markdown or plain text), as does ``print``.

    Parameters
    ----------
    reason : str
        The sentence: which chart, and what the data hold instead.

    Examples
    --------
    >>> from iochar.plot import NoChart
    >>> nc = NoChart("No chart: only one sample (2018-04-18 07:35:15 UTC).")
    >>> print(nc)
    No chart: only one sample (2018-04-18 07:35:15 UTC).
    >>> NoChart("rate < 5% of peak")._repr_html_()
    '<p class="iochar-no-chart">rate &lt; 5% of peak</p>'
    >>> NoChart("a_b *c*")._repr_markdown_()
    'a\\\\_b \\\\*c\\\\*'
    """

    def __init__(self, reason: str) -> None:
        if not isinstance(reason, str) or not reason.strip():
            raise ParameterError("reason", "NoChart", "a sentence", reason)
        self.reason = reason.strip()

    def __str__(self) -> str:
        return self.reason

    def __repr__(self) -> str:
        return f"NoChart({self.reason!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NoChart) and other.reason == self.reason

    __hash__ = None  # type: ignore[assignment]

    def _repr_html_(self) -> str:
        return f'<p class="iochar-no-chart">{html.escape(self.reason)}</p>'

    def _repr_markdown_(self) -> str:
        return re.sub(r"([\\`*_{}\[\]<>#|~])", r"\\\1", self.reason)

    def _repr_pretty_(self, p, cycle: bool) -> None:  # IPython's text/plain
        p.text(self.reason)


def _few_points(
    df: pd.DataFrame,
    x: str,
    what: str,
    *,
    y: str | Sequence[str] | None = None,
    noun: tuple[str, str] = ("sample", "samples"),
    show: Callable[[object], str] = str,
    step: bool = False,
    empty: str | None = None,
) -> NoChart | None:
    """A :class:`NoChart` when ``df`` has no row, or one ``x`` value, with a value in ``y``.

    ``what`` names the chart ("throughput chart"), ``noun`` what a row is, ``show``
    formats the lone ``x`` value for the sentence; ``step`` says the chart is a CDF
    or step line, whose single ``x`` is a single step; ``empty`` replaces the
    sentence's end for no rows.
    """
    ys = [y] if isinstance(y, str) else list(y or [])
    rows = df.dropna(subset=ys, how="all") if ys else df
    rows = rows[rows[x].notna()]
    if rows.empty:
        return NoChart(f"No {what}: {empty or f'no {noun[1]} to draw'}.")
    xs = pd.unique(rows[x])
    if len(xs) > 1:
        return None
    at = show(xs[0])
    if step:
        return NoChart(
            f"No {what}: every {noun[0]} is at {at}, so the curve is a single step "
            f"({len(rows):,} {noun[1] if len(rows) != 1 else noun[0]})."
        )
    return NoChart(f"No {what}: only one {noun[0]} ({at}); a chart needs two.")


# --------------------------------------------------------------------------- units


@dataclass(frozen=True)
class _Unit:
    """A display unit: its symbol and how many base units (bytes, seconds) it holds."""

    symbol: str
    size: float

    def scale(self, values):
        """``values`` in this unit (a Series stays a Series)."""
        if isinstance(values, pd.Series):
            return pd.to_numeric(values, errors="coerce").astype(float) / self.size
        return np.asarray(values, dtype=float) / self.size

    def text(self, value: float) -> str:
        """``value`` (in base units) as ``"152.6 MiB/s"``."""
        return f"{_num(value / self.size)} {self.symbol}"


#: The d3 number format of a scaled value in tooltips: four significant digits.
NUM_FORMAT = ",.4~r"

_BINARY = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")

#: The d3 format of a log-axis tick label's number (``"4"``, ``"0.25"``, ``"1,000"``).
_LABEL = ",.4~g"


def _num(v: float) -> str:
    """A number for a sentence or label: 3 significant digits, whole from 1,000 up."""
    if not math.isfinite(v):
        return "-"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def _peak(values) -> float:
    a = np.abs(np.asarray(pd.to_numeric(pd.Series(values), errors="coerce"), dtype=float))
    a = a[np.isfinite(a)]
    return float(a.max()) if a.size else 0.0


def _byte_unit(values: Iterable[float], *, rate: bool = False) -> _Unit:
    """One binary unit for a chart's bytes (or bytes/s): the largest value reads 1-1023.

    Examples
    --------
    >>> _byte_unit([0, 160_000_000], rate=True)
    _Unit(symbol='MiB/s', size=1048576)
    >>> _byte_unit([512.0]).symbol, _byte_unit([]).symbol, _byte_unit([3 << 40]).symbol
    ('B', 'B', 'TiB')
    """
    peak, k = _peak(values), 0
    while peak >= 1024 and k < len(_BINARY) - 1:
        peak /= 1024
        k += 1
    return _Unit(_BINARY[k] + ("/s" if rate else ""), 1024**k)


def _duration_unit(values: Iterable[float]) -> _Unit:
    """s, min, h or d for a chart's durations [s]: the largest unit the peak holds twice.

    Examples
    --------
    >>> [_duration_unit([v]).symbol for v in (90, 600, 7200, 50_000, 400_000)]
    ['s', 'min', 'h', 'h', 'd']
    """
    peak = _peak(values)
    for symbol, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if peak >= 2 * size:
            return _Unit(symbol, size)
    return _Unit("s", 1)


def _bytes_text(value: float, *, rate: bool = False) -> str:
    """One value in its own binary unit: ``"4 KiB"``, ``"152 MiB/s"``."""
    return _byte_unit([value], rate=rate).text(value)


def _duration_text(value: float) -> str:
    """One duration [s] in its own unit: ``"45 s"``, ``"3.5 min"``, ``"1.5 h"``."""
    return _duration_unit([value]).text(value)


def _title(name: str, unit: _Unit | str) -> str:
    """``"write [MiB/s]"``."""
    return f"{name} [{unit if isinstance(unit, str) else unit.symbol}]"


def _log_ticks(lo: float, hi: float, candidates: Sequence[float], most: int = 12) -> list[float]:
    inside = [c for c in candidates if lo * (1 - 1e-9) <= c <= hi * (1 + 1e-9)]
    if len(inside) <= most:
        return inside
    step = math.ceil(len(inside) / most)
    return inside[::step]


def _bytes_expr(suffix: str = "") -> str:
    """A Vega expression labelling ``datum.value`` bytes in its own binary unit."""
    parts = [
        f"datum.value >= {1024**k} ? format(datum.value / {1024**k}, '{_LABEL}') + ' {u}{suffix}'"
        for k, u in reversed(list(enumerate(_BINARY)))
        if k
    ]
    return " : ".join([*parts, f"format(datum.value, '{_LABEL}') + ' B{suffix}'"])


def _log_bytes_axis(values, *, title: str, rate: bool = False, base: int = 2) -> dict:
    """``scale`` and ``axis`` of a log axis of bytes: ticks at powers of 2, in binary units.

    Each tick is labelled in its own unit (``"4 KiB"``, ``"1 MiB"``), the one format
    a log axis spanning decades can carry; ``title`` gets no unit.
    """
    alt = _alt()
    v = pd.to_numeric(pd.Series(values), errors="coerce")
    v = v[(v > 0) & np.isfinite(v)]
    lo, hi = (float(v.min()), float(v.max())) if len(v) else (1.0, 1024.0)
    k0, k1 = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    ticks: list[float] = []
    for step in (1, 2, 5, 10, 20, 30, 40, 50, 60):
        ticks = [2.0**k for k in range(k0, k1 + 1) if k % step == 0 and lo <= 2.0**k <= hi]
        if len(ticks) <= 10:
            break
    # a narrow range holds fewer than two powers of 2: Vega's own ticks, in our labels
    where = {"values": ticks} if len(ticks) >= 2 else {}
    return {
        "scale": alt.Scale(type="log", base=base),
        "axis": alt.Axis(**where, labelExpr=_bytes_expr("/s" if rate else "")),
        "title": title,
    }


#: Round durations [s] for log-axis ticks: the powers of ten of each unit first.
_DURATION_MAJOR = (
    *(10.0**e for e in range(-3, 2)), 60, 600, 3600, 36_000, 86_400, 864_000, 8_640_000,
    86_400_000,
)  # fmt: skip
_DURATION_ALL = tuple(
    sorted(
        {m * 10.0**e for e in range(-3, 1) for m in (1, 2, 5)}
        | {10.0, 20.0, 30.0}
        | {60.0 * m for m in (1, 2, 5, 10, 20, 30)}
        | {3600.0 * m for m in (1, 2, 3, 6, 12)}
        | {86400.0 * m * 10**e for e in range(0, 4) for m in (1, 2, 5)}
    )
)

_DURATION_EXPR = (
    f"datum.value < 60 ? format(datum.value, '{_LABEL}') + ' s'"
    f" : datum.value < 3600 ? format(datum.value / 60, '{_LABEL}') + ' min'"
    f" : datum.value < 86400 ? format(datum.value / 3600, '{_LABEL}') + ' h'"
    f" : format(datum.value / 86400, '{_LABEL}') + ' d'"
)


def _log_duration_axis(values, *, title: str) -> dict:
    """``scale`` and ``axis`` of a log axis of durations [s]: ticks at round s, min, h."""
    alt = _alt()
    v = pd.to_numeric(pd.Series(values), errors="coerce")
    v = v[(v > 0) & np.isfinite(v)]
    lo, hi = (float(v.min()), float(v.max())) if len(v) else (1.0, 60.0)
    ticks = _log_ticks(lo, hi, _DURATION_MAJOR)
    if len(ticks) < 4:
        ticks = _log_ticks(lo, hi, _DURATION_ALL)
    where = {"values": ticks} if len(ticks) >= 2 else {}  # else Vega's ticks, our labels
    return {
        "scale": alt.Scale(type="log"),
        "axis": alt.Axis(**where, labelExpr=_DURATION_EXPR),
        "title": title,
    }


# ---------------------------------------------------------------------------- time

#: The tooltip format of a time.
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def _utc(values) -> pd.Series:
    """Times as a UTC-aware Series (naive times are UTC already, as in the store).

    Charts carry them as ``...+00:00`` strings, so Vega reads the instant right
    whatever the viewer's time zone.
    """
    s = pd.to_datetime(values)
    if not isinstance(s, pd.Series):
        s = pd.Series(s)
    if s.dt.tz is None:
        return s.dt.tz_localize("UTC")
    return s.dt.tz_convert("UTC")


def _time_axis(values, title: str = "time (UTC)") -> tuple[dict, str]:
    """One label format for a time axis, and its title.

    Every sample on one UTC date: the date goes in the title and the labels are
    ``%H:%M`` (``%H:%M:%S`` under 15 minutes); several dates within a week:
    ``%Y-%m-%d %H:%M``; longer: ``%Y-%m-%d``. ``tickMinStep`` keeps two ticks from
    getting the same label.

    Examples
    --------
    >>> import pandas as pd
    >>> ts = pd.date_range("2018-04-18 07:35", periods=4, freq="5min")
    >>> kw, t = _time_axis(ts)
    >>> kw["format"], t
    ('%H:%M', 'time (UTC), 2018-04-18')
    >>> _time_axis(pd.date_range("2018-04-18", periods=3, freq="20D"))[0]["format"]
    '%Y-%m-%d'
    """
    t = _utc(values).dropna()
    if t.empty:
        return {"format": TIME_FORMAT}, title
    lo, hi = t.min(), t.max()
    span = (hi - lo).total_seconds()
    # about one label per 80 px of the default width: none overlaps the next
    if lo.date() == hi.date():
        if span < 900:
            return _axis("%H:%M:%S", 1_000, 8), f"{title}, {lo:%Y-%m-%d}"
        return _axis("%H:%M", 60_000, 10), f"{title}, {lo:%Y-%m-%d}"
    if span <= 7 * 86400:
        return _axis("%Y-%m-%d %H:%M", 60_000, 5), title
    return _axis("%Y-%m-%d", 86_400_000, 7), title


def _axis(fmt: str, min_step_ms: int, count: int) -> dict:
    return {"format": fmt, "tickMinStep": min_step_ms, "tickCount": count, "labelOverlap": True}


def _time_x(field: str, values, *, title: str = "time (UTC)", **kw):
    """An ``alt.X`` for a UTC time field (see :func:`_time_axis`)."""
    alt = _alt()
    axis, title = _time_axis(values, title)
    return alt.X(
        f"{field}:T", scale=alt.Scale(type="utc"), axis=alt.Axis(**axis), title=title, **kw
    )


def _time_tooltip(field: str, title: str = "time (UTC)"):
    """A tooltip giving ``field`` as ``%Y-%m-%d %H:%M:%S`` in UTC."""
    alt = _alt()
    return alt.Tooltip(
        f"{field}:T", timeUnit="utcyearmonthdatehoursminutesseconds", format=TIME_FORMAT,
        title=title,
    )  # fmt: skip


def _time_text(value) -> str:
    """One time for a sentence: ``"2018-04-18 07:35:15 UTC"``."""
    return f"{_utc([value]).iloc[0]:%Y-%m-%d %H:%M:%S} UTC"


# ---------------------------------------------------------------------------- gaps


def _break_gaps(
    df: pd.DataFrame,
    x: str,
    ys: Sequence[str],
    *,
    by: Sequence[str] = (),
    factor: float = GAP_FACTOR,
) -> pd.DataFrame:
    """``df`` sorted by ``by`` and ``x``, with a row of nulls in ``ys`` inside each gap.

    A gap is a step in ``x`` more than ``factor`` times the median step of its
    ``by`` group; the inserted row sits halfway and copies the group's ``by`` values,
    so a Vega-Lite line (default ``invalid`` mode) breaks there instead of drawing
    straight across. Rows whose ``ys`` are already NaN break the line by themselves.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"t": [0.0, 5, 10, 200, 205], "v": [1.0, 2, 3, 4, 5]})
    >>> _break_gaps(df, "t", ["v"])["v"].isna().tolist()
    [False, False, False, True, False, False]
    """
    by = list(by)
    df = df.sort_values([*by, x], kind="stable").reset_index(drop=True)
    if len(df) < 3:
        return df
    xv = df[x]
    temporal = pd.api.types.is_datetime64_any_dtype(xv)
    num = xv.astype("int64").to_numpy(float) if temporal else xv.to_numpy(float)
    step = np.diff(num)
    keys = (
        df.groupby(by, sort=False, dropna=False).ngroup().to_numpy()
        if by
        else np.zeros(len(df), dtype=np.int64)
    )
    same = keys[1:] == keys[:-1]
    gap = np.zeros(len(step), dtype=bool)
    groups = pd.Series(keys[:-1])
    for _, idx in groups.groupby(groups).groups.items():
        idx = np.asarray(idx)
        idx = idx[same[idx] & (step[idx] > 0)]
        if len(idx) < 2:
            continue
        med = float(np.median(step[idx]))
        gap[idx] = step[idx] > factor * med
    where = np.flatnonzero(gap)
    if not where.size:
        return df
    mid = df.iloc[where][by].copy() if by else pd.DataFrame(index=range(len(where)))
    mid = mid.reset_index(drop=True)
    half = (
        xv.iloc[where].reset_index(drop=True)
        + (xv.iloc[where + 1].reset_index(drop=True) - xv.iloc[where].reset_index(drop=True)) / 2
    )
    mid[x] = half
    for y in ys:
        mid[y] = np.nan
    mid["_order"] = where + 0.5
    out = pd.concat([df.assign(_order=np.arange(len(df), dtype=float)), mid], ignore_index=True)
    return out.sort_values("_order").drop(columns="_order").reset_index(drop=True)


def _thin_max(df: pd.DataFrame, x: str, cols: Sequence[str], max_points: int) -> pd.DataFrame:
    """At most ``max_points`` runs of rows, each drawn as its maximum (peaks stay).

    A run holding a null in ``cols`` (a gap) also keeps one null row, at the first
    such row's ``x``, so a thinned line still breaks there: the result has at most
    ``max_points`` rows plus one per run with a gap. ``df`` is sorted by ``x``.
    """
    n = len(df)
    if n <= max_points:
        return df
    starts = np.unique(np.linspace(0, n, max_points, endpoint=False).astype(np.int64))
    last = np.r_[starts[1:], n] - 1
    run = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))
    xs = df[x].to_numpy()
    out = {x: xs[last]}
    holes = np.zeros(len(starts), dtype=bool)
    first_hole = np.full(len(starts), -1)
    for c in cols:
        v = df[c].to_numpy(float)
        with np.errstate(invalid="ignore"):
            out[c] = np.fmax.reduceat(v, starts)
        nan = np.isnan(v)
        holes |= np.bincount(run, weights=nan, minlength=len(starts)) > 0
        idx = np.flatnonzero(nan)
        if idx.size:
            firsts = pd.Series(idx).groupby(run[idx]).min()
            cur = first_hole[firsts.index.to_numpy()]
            first_hole[firsts.index.to_numpy()] = np.where(
                cur < 0, firsts.to_numpy(), np.minimum(cur, firsts.to_numpy())
            )
    thin = pd.DataFrame(out)
    valid = np.zeros(len(starts), dtype=bool)
    for c in cols:
        valid |= ~np.isnan(thin[c].to_numpy(float))
    extra = np.flatnonzero(holes & valid)
    if not extra.size:
        return thin
    breaks = pd.DataFrame({x: xs[first_hole[extra]], **{c: np.nan for c in cols}})
    order = np.r_[np.arange(len(thin), dtype=float), extra - 0.5]
    both = pd.concat([thin, breaks], ignore_index=True).assign(_o=order)
    return both.sort_values("_o", kind="stable").drop(columns="_o").reset_index(drop=True)
