"""Lustre OSTs of one job: bytes and rate per OST, the slow OST marked (issue 20, item 2).

Draws :func:`iochar.analyze.lustre.ost_table`: how the job's bytes fell on the OSTs
holding its files (Lustre RAID-0 striping, by DXT offsets or an even split) and each
OST's read and write rate (bytes over its files' POSIX times), with every OST whose
rate is :data:`iochar.analyze.lustre.SLOW_OST_RATIO` times or more below the median of
the job's rated OSTs drawn in red and named. The x axis is the OST index, a number, so
1,000 OSTs and more stay readable: one thin bar or small point per OST, ticks chosen by
the axis, labels only for the (at most :data:`MAX_LABELS`) slowest OSTs.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from iochar.analyze.lustre import SLOW_OST_RATIO
from iochar.errors import ParameterError
from iochar.plot._common import (
    NUM_FORMAT,
    THEME,
    NoChart,
    _alt,
    _byte_unit,
    _bytes_text,
    _log_bytes_axis,
    _need,
    _num,
    _title,
)
from iochar.result import evidence_of

__all__ = ["ost_chart", "MAX_LABELS"]

#: At most this many slow OSTs are named on the chart (the slowest first).
MAX_LABELS = 5

_SLOW = "#d62728"
_OK = "#4c78a8"
_OPS = {"write": "#4c78a8", "read": "#f58518"}
_COLUMNS = (
    "job_id", "ost", "files", "bytes", "write_bytes_per_s", "read_bytes_per_s", "write_slowdown",
    "read_slowdown", "slowdown",
)  # fmt: skip


def _one_job(osts: pd.DataFrame, job_id, caller: str) -> pd.DataFrame:
    jobs = sorted(pd.unique(osts["job_id"]))
    if job_id is None:
        if len(jobs) > 1:
            raise ParameterError("job_id", caller, f"one of the table's jobs {jobs[:10]}", None)
        return osts
    if job_id not in jobs:
        raise ParameterError("job_id", caller, f"one of the table's jobs {jobs[:10]}", job_id)
    return osts[osts["job_id"] == job_id]


def ost_chart(
    osts: pd.DataFrame,
    *,
    job_id: int | None = None,
    slow_at: float = SLOW_OST_RATIO,
    **overrides: Any,
):
    """Bytes and rate per OST of one job, slow OSTs in red (Lustre, Darshan LUSTRE records).

    Parameters
    ----------
    osts : pandas.DataFrame
        :func:`iochar.analyze.lustre.ost_table` (one job, or several with ``job_id``).
    job_id : int, optional
        The job to draw when the table holds several.
    slow_at : float, default :data:`~iochar.analyze.lustre.SLOW_OST_RATIO`
        An OST whose ``slowdown`` (median rated rate / its rate) is at least this is
        slow: red, and named when among the :data:`MAX_LABELS` slowest.
    **overrides
        Passed to ``properties`` of the whole chart.

    Returns
    -------
    altair.VConcatChart or NoChart
        Top: bytes per OST (read + written, one binary unit), bars red for slow OSTs.
        Bottom: write and read rate per rated OST on a log axis [B/s ... in binary
        units per tick], the median of each direction dashed, slow OSTs ringed in red
        and labelled ``"OST 14: 49.5x below median"``. Both share the OST-index axis.
        A :class:`NoChart` when the table is empty (no LUSTRE records: the sentence
        says so), when no OST has POSIX bytes, or when all the job's bytes are on one
        OST.
    """
    caller = "ost_chart"
    _need(osts, _COLUMNS, caller)
    slow_at = float(slow_at)
    if not math.isfinite(slow_at) or slow_at <= 1:
        raise ParameterError("slow_at", caller, "a ratio > 1", slow_at)
    if osts.empty:
        why = evidence_of(osts).get("reason") or "the table holds no OST"
        return NoChart(f"No OST chart: {why}.")
    df = _one_job(osts, job_id, caller).copy()
    job = int(df["job_id"].iloc[0])
    df["bytes"] = pd.to_numeric(df["bytes"], errors="coerce")
    if df["bytes"].isna().all():
        return NoChart(
            f"No OST chart: job {job}'s files are laid out on {len(df):,} OSTs, but none "
            "of them has POSIX counters, so there are no bytes or rates per OST."
        )
    if len(df) < 2:
        row = df.iloc[0]
        return NoChart(
            f"No OST chart: all of job {job}'s files are on one OST ({int(row['ost'])}, "
            f"{_bytes_text(float(row['bytes']))}); one OST has nothing to compare with."
        )
    alt = _alt()
    df["slowdown"] = pd.to_numeric(df["slowdown"], errors="coerce")
    df["slow"] = df["slowdown"] >= slow_at
    unit = _byte_unit(df["bytes"])
    df["amount"] = unit.scale(df["bytes"])
    df["ost"] = df["ost"].astype(int)
    lo, hi = int(df["ost"].min()), int(df["ost"].max())
    domain = [lo - 0.5, hi + 0.5]
    width = overrides.get("width", THEME["width"])
    bar = max(1.0, min(12.0, 0.8 * width / (hi - lo + 1)))
    x = alt.X(
        "ost:Q",
        title="OST index",
        scale=alt.Scale(domain=domain, nice=False, zero=False),
        axis=alt.Axis(format="d", tickMinStep=1, labelOverlap=True),
    )
    y_title = _title("bytes", unit)
    colour = alt.condition(alt.datum.slow, alt.value(_SLOW), alt.value(_OK))
    top = (
        alt.Chart(df[["ost", "files", "amount", "slow", "slowdown"]])
        .mark_bar(size=bar)
        .encode(
            x=x,
            y=alt.Y("amount:Q", title=y_title),
            color=colour,
            tooltip=[
                alt.Tooltip("ost:Q", title="OST"),
                alt.Tooltip("files:Q", title="files"),
                alt.Tooltip("amount:Q", format=NUM_FORMAT, title=y_title),
                alt.Tooltip("slowdown:Q", format=".3~r", title="median rate / OST rate"),
            ],
        )
        .properties(width=width, height=THEME["height"] * 0.7)
    )
    rates = _rates(df, slow_at)
    n = len(df)
    title = f"job {job}: bytes and rate per OST ({n:,} OSTs)"
    if rates.empty:
        chart = top.properties(title=title + ", none rated (too few bytes or no time)")
        return chart.properties(**{k: v for k, v in overrides.items() if k != "width"})
    worst = df.sort_values(["slowdown", "ost"], ascending=[False, True]).iloc[0]
    n_slow = int(df["slow"].sum())
    if n_slow == 1:
        title += f"; OST {int(worst['ost'])} is {_num(float(worst['slowdown']))}x below the median"
    elif n_slow > 1:
        title += (
            f"; {n_slow:,} OSTs {_num(slow_at)}x or more below the median, the slowest "
            f"OST {int(worst['ost'])} at {_num(float(worst['slowdown']))}x"
        )
    bottom = _rate_panel(alt, rates, x, width, (lo, hi))
    chart = alt.vconcat(top, bottom, spacing=8).resolve_scale(x="shared")
    props = {k: v for k, v in overrides.items() if k not in ("width", "height")}
    return chart.properties(title=title, **props)


def _rates(df: pd.DataFrame, slow_at: float) -> pd.DataFrame:
    """Long form: one row per OST and direction it is rated in; slow in that direction."""
    parts = []
    for op in ("write", "read"):
        rate = pd.to_numeric(df[f"{op}_bytes_per_s"], errors="coerce")
        slowdown = pd.to_numeric(df[f"{op}_slowdown"], errors="coerce")
        part = pd.DataFrame(
            {"ost": df["ost"], "op": op, "rate": rate, "slowdown": slowdown,
             "slow": slowdown >= slow_at}
        )  # fmt: skip
        parts.append(part[rate > 0])
    out = pd.concat(parts, ignore_index=True)
    if out.empty:
        return out
    out["median"] = out.groupby("op")["rate"].transform("median")
    out["rate_text"] = [_bytes_text(float(r), rate=True) for r in out["rate"]]
    return out


def _spaced(slow: pd.DataFrame, px_per_ost: float, lo: int, middle: float) -> pd.DataFrame:
    """The slow OSTs to name: at most MAX_LABELS, slowest first, no two labels overlapping.

    A label ``"OST 14: 49.5x below median"`` is about 7 px per character wide (the
    chart's 11 px bold font) and sits 10 px right of its mark (OSTs left of the middle)
    or left of it; an OST is named when its label's span does not meet the span of any
    label named before it at a similar rate (within a factor of 2 on the log axis).
    """
    kept: list = []
    for r in slow.itertuples():
        label = f"OST {int(r.ost)}: {_num(float(r.slowdown))}x below median"
        x = (r.ost - lo) * px_per_ost
        w = 7.0 * len(label)
        span = (x + 10, x + 10 + w) if r.ost <= middle else (x - 10 - w, x - 10)
        if all(
            span[1] + 8 < k[1][0] or k[1][1] + 8 < span[0] or not 0.5 <= r.rate / k[0].rate <= 2
            for k in kept
        ):
            kept.append((r, span, label))
        if len(kept) == MAX_LABELS:
            break
    out = pd.DataFrame([k[0]._asdict() for k in kept]).drop(columns="Index", errors="ignore")
    out["label"] = [k[2] for k in kept]
    return out


def _rate_panel(alt, rates: pd.DataFrame, x, width: float, bounds: tuple[int, int]):
    lo, hi = bounds
    span, middle = hi - lo + 1, (lo + hi) / 2
    n = rates["ost"].nunique()
    axis = _log_bytes_axis(rates["rate"], title="rate per OST", rate=True)
    y = alt.Y("rate:Q", scale=axis["scale"], axis=axis["axis"], title=axis["title"])
    size = 60 if n <= 50 else 25 if n <= 300 else 8
    ops = [op for op in _OPS if op in set(rates["op"])]
    colour = alt.Color(
        "op:N",
        title="direction",
        scale=alt.Scale(domain=ops, range=[_OPS[o] for o in ops]),
    )
    points = (
        alt.Chart(rates)
        .mark_point(filled=True, size=size, opacity=0.9)
        .encode(
            x=x,
            y=y,
            color=colour,
            tooltip=[
                alt.Tooltip("ost:Q", title="OST"),
                alt.Tooltip("op:N", title="direction"),
                alt.Tooltip("rate_text:N", title="rate"),
                alt.Tooltip("slowdown:Q", format=".3~r", title="median rate / OST rate"),
            ],
        )
    )
    med = rates.drop_duplicates("op")[["op", "median"]]
    median = (
        alt.Chart(med)
        .mark_rule(strokeDash=[4, 3], opacity=0.8)
        .encode(y=alt.Y("median:Q", scale=axis["scale"]), color=colour)
    )
    layers = [median, points]
    slow = rates[rates["slow"]].sort_values(["slowdown", "ost"], ascending=[False, True])
    if not slow.empty:
        ring = (
            alt.Chart(slow)
            .mark_point(filled=False, size=4 * size, strokeWidth=2 if n <= 300 else 1, color=_SLOW)
            .encode(x=x, y=y)
        )
        named = _spaced(slow.drop_duplicates("ost"), width / max(span, 1), lo, middle)
        layers.append(ring)
        # labels point inwards: left of the middle OST to the right of the mark, else left
        for part, align, dx in (
            (named[named["ost"] <= middle], "left", 10),
            (named[named["ost"] > middle], "right", -10),
        ):
            if not part.empty:
                layers.append(
                    alt.Chart(part)
                    .mark_text(align=align, dx=dx, dy=-8, color=_SLOW, fontWeight="bold")
                    .encode(x=x, y=y, text="label:N")
                )
    return alt.layer(*layers).properties(width=width, height=THEME["height"])
