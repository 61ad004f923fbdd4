"""Narrative for notebook 02-system-load: how busy devices and servers were.

Two views of load, each from its own data:

- **Throughput** from per-interval device or server counters (``counters``: iostat,
  ``/proc/diskstats``, LMT), with the burst and idle analysis of Carns et al. (2011,
  section 4, Fig. 7 and Table III): peak, share of time below a fraction of peak,
  idle periods by duration. The tables come from :mod:`iochar.analyze.devices`
  (:func:`~iochar.analyze.devices.inputs`,
  :func:`~iochar.analyze.devices.counter_load`, ...) and
  :mod:`iochar.analyze.bursts`.
- **File System Utilization** (Uselton & Wright 2013) from Lustre ``brw_stats`` disk
  I/O size histograms (``size_hist``): the time a cost model says the disk needed
  for the I/Os seen, as a share of the interval (Eq. 7), its idle / moderate / busy
  split (Tables II and III) and how it compares with a bandwidth-only load. The
  tables come from :mod:`iochar.analyze.fsu`.

The narrative functions (:func:`inputs_summary`, :func:`device_load`,
:func:`burst_summary`, :func:`burst_view_summary`, :func:`model_summary`, :func:`fsu_summary`,
:func:`fsu_vs_bandwidth`, :func:`transfer_sizes`) are pure: tables in, Markdown
out, every number taken from the tables. The cost model a notebook's
``calibration`` names comes from :func:`iochar.analyze.fsu.cost_model` and the load
ratio from :func:`iochar.analyze.fsu.load_ratio_or_empty`; :func:`cost_model` and
:func:`load_ratio` here are their deprecated former names.

Examples
--------
>>> import pandas as pd
>>> from iochar.narrate import system
>>> hist = pd.DataFrame({"op": ["write", "write"], "size_bytes": [4096, 1048576],
...                      "count": [10, 30]})
>>> print(system.transfer_sizes(hist))  # doctest: +NORMALIZE_WHITESPACE
Disk I/O sizes (brw_stats, 40 I/Os): the most common write size is 1.0 MiB (75.0% of 40
writes); 25.0% of the writes are smaller than 1.0 MiB.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from iochar._moved import warn_moved
from iochar.analyze import devices, fsu
from iochar.narrate import esc, fmt_bytes, fmt_num, fmt_pct, fmt_rate, fmt_s, listing, plural
from iochar.result import evidence_of, params_of

__all__ = [
    "cost_model",
    "load_ratio",
    "inputs_summary",
    "device_load",
    "burst_summary",
    "burst_view_summary",
    "model_summary",
    "fsu_summary",
    "fsu_vs_bandwidth",
    "transfer_sizes",
    "model_check",
    "fsu_filesystems",
    "daily_profile",
]

_MIB = float(1 << 20)
#: Uselton & Wright (2013, abstract): /scratch was "about four times as busy" as bandwidth said.
PAPER_RATIO = 4.0
#: Carns et al. (2011, section 4): "For 98% of the time ... less than 33% of peak".
PAPER_SHARE, PAPER_FRACTION = 0.98, 0.33


# --------------------------------------------------------------------------- helpers


def _when(ts: Any) -> str:
    if ts is None or (isinstance(ts, float) and math.isnan(ts)) or pd.isna(ts):
        return "n/a"
    return pd.Timestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def _num(x: Any) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v


def _ok(x: Any) -> bool:
    return math.isfinite(_num(x))


def _input(row: pd.Series | dict) -> str:
    """``input 106 (lmt, lmtdb-reset-ost.csv)``."""
    kind = row.get("kind")
    name = row.get("input")
    what = [esc(v) for v in (kind, name) if isinstance(v, str) and v]
    return f"input {int(row['source_id'])}" + (f" ({', '.join(what)})" if what else "")


# --------------------------------------------------------------------------- FSU adapters


def cost_model(calibration: str = "") -> fsu.CostModel:
    """Deprecated: :func:`iochar.analyze.fsu.cost_model` (``calibration``)."""
    warn_moved("iochar.narrate.system.cost_model", "iochar.analyze.fsu.cost_model")
    return fsu.cost_model(calibration)


def load_ratio(series: pd.DataFrame, model: fsu.CostModel) -> pd.DataFrame:
    """Deprecated: :func:`iochar.analyze.fsu.load_ratio_or_empty` (``series``, ``model``)."""
    warn_moved("iochar.narrate.system.load_ratio", "iochar.analyze.fsu.load_ratio_or_empty")
    return fsu.load_ratio_or_empty(series, model)


# --------------------------------------------------------------------------- narrative


def inputs_summary(table: pd.DataFrame) -> str:
    """Which inputs hold counters and histograms, and whether they can be combined.

    Parameters
    ----------
    table : pandas.DataFrame
        The result of :func:`iochar.analyze.devices.inputs`.

    Returns
    -------
    str
        Markdown.
    """
    if table.empty:
        return "The selection holds no device counters and no brw_stats histograms."
    have, missing = [], []
    for name, what in (("counters", "device/server counters"), ("size_hist", "brw_stats")):
        t = table[table["table"] == name]
        if t.empty:
            missing.append(what)
            continue
        kinds = t["kind"].fillna("?").value_counts()
        kinds_txt = listing([f"{k} ×{n}" if n > 1 else k for k, n in kinds.items()], limit=6)
        ivs = sorted({fmt_s(v) for v in t["interval_s"] if _ok(v)})
        have.append(
            f"{what} from {plural(len(t), 'input')} ("
            + (f"{kinds_txt}; " if name == "counters" else "")
            + f"{plural(int(t['usable_targets'].sum()), 'target')} usable here, "
            f"sampled every {listing(ivs, limit=6)})"
        )
    text = "The selection holds " + " and ".join(have)
    text += (", but no " + " and no ".join(missing) + ".") if missing else "."
    first, last = table["first_ts"].min(), table["last_ts"].max()
    days = table["last_ts"].dt.date.astype(str).unique()
    if len(table) > 1:
        text += (
            f" They span {_when(first)} to {_when(last)} UTC over "
            f"{plural(len(days), 'distinct day')}"
        )
        if len(days) > 1:
            text += (
                ": the inputs come from different machines or times, so each (input, target) "
                "pair is analysed on its own and never added to another input's."
            )
        else:
            text += "."
    return text


def device_load(load: pd.DataFrame) -> str:
    """How busy each device or server target was (peak, share below, idle, gaps).

    Parameters
    ----------
    load : pandas.DataFrame
        The result of :func:`iochar.analyze.devices.counter_load`.

    Returns
    -------
    str
        Markdown: the busiest and least busy targets (each named with its input),
        the longest idle period, the targets without traffic and the gaps.
    """
    if load.empty:
        return "No device or server has read/write byte counters in this selection."
    frac = params_of(load).get("share_fraction", PAPER_FRACTION)
    idle_frac = params_of(load).get("idle_fraction", 0.05)
    n_in = load["source_id"].nunique()
    busy = load[load["peak_mib_s"] > 0]
    quiet = load[load["peak_mib_s"] == 0]
    unknown = load[~(load["peak_mib_s"] >= 0)]
    out = [
        f"**{plural(len(load), 'target')}** in {plural(n_in, 'input')} have read/write byte "
        f"counters; {len(busy):,} of them moved data."
    ]
    if not busy.empty:
        top = busy.loc[busy["peak_mib_s"].idxmax()]
        out.append(
            f"The highest peak is **{esc(top['target'])}** in {_input(top)}: "
            f"{fmt_rate(top['peak_mib_s'] * _MIB)} at {_when(top['peak_ts'])} UTC, "
            f"{fmt_bytes(top['mib'] * _MIB)} in {fmt_s(top['observed_s'])} observed "
            f"(mean {fmt_rate(top['mean_mib_s'] * _MIB)})."
        )
        out.append(_share_text(busy[busy["share_below"].notna()], frac))
        idle = busy[busy["idle_periods"] > 0]
        if idle.empty:
            out.append(
                f"No target with traffic had an interval below {fmt_pct(idle_frac, 0)} of its peak."
            )
        else:
            li = idle.loc[idle["longest_idle_s"].idxmax()]
            mi = idle.loc[idle["idle_share"].idxmax()]
            out.append(
                f"{plural(len(idle), 'target')} had idle periods (below "
                f"{fmt_pct(idle_frac, 0)} of peak); the longest lasted "
                f"{fmt_s(li['longest_idle_s'])}, on {esc(li['target'])} in {_input(li)}, and "
                f"{esc(mi['target'])} in {_input(mi)} was idle the largest share of its time, "
                f"{fmt_pct(mi['idle_share'])}."
            )
    if not unknown.empty:
        bin_s = params_of(load).get("bin_s")
        why = f"records shorter than the {fmt_s(bin_s)} bins, or" if bin_s else ""
        out.append(
            f"{plural(len(unknown), 'target')} have no complete interval to judge ({why} "
            f"only flagged intervals): {listing(map(esc, unknown['target']), limit=6)}."
        )
    if not quiet.empty:
        by_in = quiet.groupby("source_id")["target"].apply(list)
        names = [
            f"{listing(map(esc, t), limit=4)} in {_input(quiet[quiet['source_id'] == s].iloc[0])}"
            for s, t in by_in.items()
        ]
        out.append(f"No traffic at all on {plural(len(quiet), 'target')}: {'; '.join(names)}.")
    dup = [
        f"{esc(d.target)} in inputs {listing(d.source_ids)}"
        for d in devices.duplicates(busy).itertuples(index=False)
    ]
    if dup:
        out.append(
            "Loaded more than once (same target, samples and data within 1%, so count each "
            "record once): " + "; ".join(dup) + "."
        )
    gaps = load[(load["gap_s"] > 0) | (load["flagged"] > 0)]
    if gaps.empty:
        out.append("No gaps: every target has a sample for every interval of its record.")
    else:
        g = gaps.loc[gaps["gap_s"].fillna(0).idxmax()]
        out.append(
            f"{plural(len(gaps), 'target')} have gaps (flagged counter resets or wraps, or "
            f"missing samples), left out of every share; the largest: "
            f"{fmt_s(g['gap_s'])} on {esc(g['target'])} in {_input(g)}."
        )
    return " ".join(p for p in out if p)


def _share_text(sb: pd.DataFrame, frac: float) -> str:
    """The share-below sentence of :func:`device_load`."""
    if sb.empty:
        return ""
    paper = (
        f"(Carns et al. 2011 saw {fmt_pct(PAPER_SHARE, 0)} below {fmt_pct(PAPER_FRACTION, 0)} "
        "on a whole file system)"
    )
    if len(sb) == 1:
        t = sb.iloc[0]
        return (
            f"Relative to its own peak, {esc(t['target'])} in {_input(t)} stayed below "
            f"{fmt_pct(frac, 0)} of peak for {fmt_pct(t['share_below'])} of its "
            f"{fmt_s(t['observed_s'])} observed {paper}."
        )
    hi = sb.loc[sb["share_below"].idxmax()]
    lo = sb.loc[sb["share_below"].idxmin()]
    text = (
        f"Relative to its own peak, the median target stayed below {fmt_pct(frac, 0)} of peak "
        f"for {fmt_pct(float(sb['share_below'].median()))} of its observed time {paper}"
    )
    if hi["share_below"] == lo["share_below"]:
        return text + f"; all {len(sb)} targets alike ({fmt_pct(hi['share_below'])})."
    return (
        text + f"; the burstiest is {esc(hi['target'])} in {_input(hi)} (below for "
        f"{fmt_pct(hi['share_below'])} of {fmt_s(hi['observed_s'])}), the most steadily loaded "
        f"{esc(lo['target'])} in {_input(lo)} (below for {fmt_pct(lo['share_below'])} of "
        f"{fmt_s(lo['observed_s'])})."
    )


def _bucket_text(idle: pd.DataFrame) -> str:
    if idle is None or idle.empty or int(idle["count"].sum()) == 0:
        return ""
    top = idle["minutes"].idxmax()
    row = idle.loc[top]
    share_of_idle = float(row["minutes"]) / float(idle["minutes"].sum())
    return (
        f" By Table III's duration buckets, most idle time falls in the **{top} min** bucket "
        f"({plural(int(row['count']), 'period')}, {fmt_pct(share_of_idle)} of the idle time, "
        f"{float(row['percent']):.1f}% of the observed time)."
    )


def burst_summary(
    load: pd.DataFrame,
    source_id: int,
    *,
    phases: pd.DataFrame,
    share,
    idle: pd.DataFrame,
) -> str:
    """Bursts and idle periods of one input's summed throughput (Carns et al. 2011).

    Parameters
    ----------
    load : pandas.DataFrame
        The result of :func:`iochar.analyze.devices.counter_load` (names the input and
        its targets).
    source_id : int
        The input analysed.
    phases : pandas.DataFrame
        :func:`iochar.analyze.bursts.segment` of the input's series.
    share : iochar.analyze.bursts.ShareBelowResult or None
        :func:`iochar.analyze.bursts.share_below` of the same series.
    idle : pandas.DataFrame or None
        :func:`iochar.analyze.bursts.idle_table` of the same series.

    Returns
    -------
    str
        Markdown; one sentence saying there is nothing to analyse when ``phases``,
        ``share`` or ``idle`` is missing or empty.
    """
    rows = load[load["source_id"] == source_id]
    if rows.empty or phases is None or phases.empty or share is None or idle is None:
        return f"Input {source_id} has no throughput to analyse in this selection."
    about = _input(rows.iloc[0])
    tg = rows["target"].tolist()
    a = evidence_of(phases)
    observed = float(a.get("observed_s", math.nan))
    gap = float(a.get("gap_s", 0.0))
    out = [
        f"**{about[0].upper() + about[1:]}**: read + write throughput of "
        f"{plural(len(tg), 'target')} ({listing(map(esc, tg), limit=6)}) summed, "
        f"{fmt_s(float(a.get('sample_s', math.nan)))} intervals, {fmt_s(observed)} observed"
        + (f" and {fmt_s(gap)} of gaps (not counted as idle)." if gap > 0 else ", no gaps.")
    ]
    out.append(
        f"Peak {fmt_rate(share.peak_per_s)} ({share.peak_source}); the throughput stayed "
        f"below {fmt_pct(share.fraction, 0)} of peak ({fmt_rate(share.threshold_per_s)}) for "
        f"**{fmt_pct(share.share)}** of the observed time, against Carns et al.'s "
        f"{fmt_pct(PAPER_SHARE, 0)} below {fmt_pct(PAPER_FRACTION, 0)}."
    )
    b = phases[phases["state"] == "burst"]
    total = float(phases["bytes"].sum(skipna=True))
    if not b.empty and total > 0:
        out.append(
            f"{plural(len(b), 'burst')} (at or above {fmt_pct(float(a['threshold']), 0)} of "
            f"peak) carried {fmt_pct(float(b['bytes'].sum()) / total)} of the "
            f"{fmt_bytes(total)} in {fmt_pct(float(b['duration_s'].sum()) / observed)} of the "
            f"time; the longest lasted {fmt_s(float(b['duration_s'].max()))}."
        )
    ia = evidence_of(idle)
    if ia.get("periods", 0) == 0:
        out.append(
            f"No interval was idle (below {fmt_pct(float(ia.get('idle_fraction') or 0), 0)} "
            "of peak)."
        )
    else:
        rule = (
            "no activity at all"
            if ia.get("strict")
            else f"below {fmt_pct(float(ia['idle_fraction']), 0)} of peak"
        )
        cens = int(ia.get("censored_periods", 0))
        out.append(
            f"{plural(int(ia['periods']), 'idle period')} ({rule}) add up to "
            f"{fmt_s(float(ia['idle_s']))}, {fmt_pct(float(ia['idle_s']) / float(ia['total_s']))}"
            f" of the observed time; the longest ran {fmt_s(float(ia['longest_s']))} from "
            f"{_when(ia['longest_start'])} to {_when(ia['longest_end'])} UTC"
            + (
                f" ({plural(cens, 'period')} touch a gap or an end of the record, so "
                f"{'it' if cens == 1 else 'they'} may have lasted longer)."
                if cens
                else "."
            )
        )
        out.append(_bucket_text(idle).strip())
    return " ".join(p for p in out if p)


def burst_view_summary(load: pd.DataFrame, view) -> str:
    """Bursts and idle periods of the input the charts show, or why there are none.

    Parameters
    ----------
    load : pandas.DataFrame
        The result of :func:`iochar.analyze.devices.counter_load` for the selection.
    view : iochar.analyze.devices.BurstView or None
        The result of :func:`iochar.analyze.devices.burst_view`; None when no target
        moved data.

    Returns
    -------
    str
        Markdown: :func:`burst_summary` of the view, or one sentence saying that the
        selection has no read/write byte counters, or none with traffic, so the
        throughput, burst and idle charts are left out.
    """
    if view is not None:
        return burst_summary(
            load, view.source_id, phases=view.phases, share=view.share, idle=view.idle
        )
    if load is None or load.empty:
        return (
            "No device or server counters with read/write bytes in this selection; the "
            "throughput, burst and idle analysis (Carns et al. 2011) needs iostat, "
            "/proc/diskstats or Lustre LMT counters, so it shows no charts here."
        )
    names = sorted({str(t) for t in load["target"]})
    return (
        "No device or server moved data in this selection: the read/write byte counters of "
        f"{listing(map(esc, names), limit=6)} "
        f"(in {plural(int(load['source_id'].nunique()), 'input')}) "
        "show no traffic in any complete, unflagged interval, so there are no bursts or idle "
        "periods to analyse and no charts here."
    )


def model_summary(model) -> str:
    """Which cost model the FSU uses and what it says about the disk.

    Parameters
    ----------
    model : iochar.analyze.fsu.CostModel
        The fitted model.

    Returns
    -------
    str
        Markdown.
    """
    c = model.coefficients()
    parts = [
        f"{op}s cost {row['latency_s'] * 1e3:.3g} ms per I/O plus the bytes at "
        f"{fmt_rate(row['rate_mib_s'] * _MIB) if math.isfinite(row['rate_mib_s']) else 'no cost'}"
        f" (so at most {row['iops_limit']:,.0f} I/Os/s)"
        for op, row in c.iterrows()
    ]
    text = f"Cost model from **{esc(model.source_)}**: " + "; ".join(parts) + "."
    r2 = c["r2"].dropna()
    if not r2.empty:
        fits = [f"{fmt_pct(v)} of the {op} time per I/O" for op, v in r2.items()]
        text += f" The fit explains {listing(fits)} (R², {plural(int(c['n'].sum()), 'run')})."
    for n in getattr(model, "notes_", []) or []:
        text += f" Note: {esc(n)}."
    return text


def fsu_summary(series: pd.DataFrame, table: pd.DataFrame) -> str:
    """FSU per interval: how many were used, the idle/moderate/busy split, the peak.

    Parameters
    ----------
    series : pandas.DataFrame
        :func:`iochar.analyze.fsu.fsu_series` output.
    table : pandas.DataFrame
        :func:`iochar.analyze.fsu.load_table` of that series.

    Returns
    -------
    str
        Markdown.
    """
    if series.empty:
        return "No brw_stats disk I/O size histograms in this selection, so no FSU."
    used = series[series["fsu_pct"].notna()]
    skipped = evidence_of(series).get("skipped", {}) or {}
    n_skip = int(sum(skipped.values()))
    tg = sorted(series["target"].unique())
    out = [
        f"FSU (Uselton & Wright 2013, Eq. 7) for {plural(len(tg), 'target')} "
        f"({listing(map(esc, tg), limit=4)}): {plural(len(series), 'interval')}, "
        f"{len(used):,} used"
    ]
    if n_skip:
        why = "; ".join(f"{n} for {r.split(':')[0]}" for r, n in skipped.items())
        out[0] += f", {n_skip:,} skipped ({why})."
    else:
        out[0] += "."
    if used.empty:
        out.append("No interval is usable, so there is nothing to classify.")
        return " ".join(p for p in out if p)
    if len(used) < 10:
        out.append(
            f"With only {plural(len(used), 'observation')} the shares below are anecdotes, "
            "not a distribution."
        )
    split = [
        f"{cat} {float(table.loc[cat, 'pct_obs']):.0f}% ({table.loc[cat, 'fsu_range']})"
        for cat in ("idle", "moderate", "busy")
        if cat in table.index
    ]
    out.append("Observations: " + ", ".join(split) + " (the thresholds of Tables II and III).")
    top = used.loc[used["fsu_pct"].idxmax()]
    out.append(
        f"The highest FSU is **{float(top['fsu_pct']):.1f}%** on {esc(top['target'])} in the "
        f"{fmt_s(float(top['interval_s']))} ending {_when(top['ts'])} UTC "
        f"({fmt_num(int(top['read_ios']) + int(top['write_ios']))} disk I/Os, "
        f"{fmt_bytes(float(top['read_bytes']) + float(top['write_bytes']))})."
    )
    over = used[used["fsu_pct"] > 100]
    if not over.empty:
        out.append(
            f"{plural(len(over), 'interval')} {'exceeds' if len(over) == 1 else 'exceed'} "
            "100%: the model says the disk needed more time than the interval had, so this "
            "target is faster than the model's disk; "
            "calibrate the model on this hardware (parameter `calibration`) before reading "
            "FSU as a share of capacity."
        )
    opt = evidence_of(series).get("optimal_bytes")
    if "busy" in table.index and int(table.loc["busy", "n_obs"]) > 0 and opt:
        out.append(
            f"In busy intervals {float(table.loc['busy', 'pct_sub']):.0f}% of the I/Os were "
            f"sub-optimal (smaller than {fmt_bytes(opt)}, the largest size seen); "
            "Uselton & Wright found three quarters on Hopper's /scratch."
        )
    return " ".join(p for p in out if p)


def fsu_vs_bandwidth(ratio: pd.DataFrame) -> str:
    """FSU-based load against bandwidth-based load (the paper's "four times as busy").

    Parameters
    ----------
    ratio : pandas.DataFrame
        :func:`iochar.analyze.fsu.load_ratio` (or
        :func:`~iochar.analyze.fsu.load_ratio_or_empty`) output.

    Returns
    -------
    str
        Markdown.
    """
    if ratio.empty or "all" not in ratio.index:
        return "No used FSU interval, so FSU and bandwidth load cannot be compared."
    a = ratio.loc["all"]
    r = float(a["ratio"])
    per = ratio.drop(index="all")
    out = [
        f"Averaged over targets, the FSU-based load is **{float(a['fsu_load_pct']):.1f}%** "
        f"against a bandwidth-based load of {float(a['bw_load_pct']):.1f}% (bytes moved over "
        f"the model's peak bandwidth): FSU is **{r:.2f}×** the bandwidth load"
    ]
    if r >= 2:
        out[0] += (
            ", so the per-I/O latency of small transfers makes the disks much busier than "
            "bandwidth alone suggests (Uselton & Wright found about "
            f"{PAPER_RATIO:.0f}× on Hopper's /scratch)."
        )
    else:
        out[0] += (
            ": large transfers dominate, so bandwidth tells the load nearly as well here "
            f"(Uselton & Wright found about {PAPER_RATIO:.0f}× on Hopper's /scratch, "
            "where small I/Os dominated)."
        )
    if len(per) > 1 and per["ratio"].notna().any():
        hi = per["ratio"].idxmax()
        out.append(
            f"Per target the ratio ranges from {float(per['ratio'].min()):.2f}× to "
            f"{float(per['ratio'].max()):.2f}× (highest on {esc(hi)}, "
            f"{float(per.loc[hi, 'fsu_load_pct']):.1f}% FSU vs "
            f"{float(per.loc[hi, 'bw_load_pct']):.1f}% bandwidth load)."
        )
    return " ".join(p for p in out if p)


def transfer_sizes(hist: pd.DataFrame) -> str:
    """Which disk I/O sizes dominate, per op (Uselton & Wright 2013, Fig. 12).

    Parameters
    ----------
    hist : pandas.DataFrame
        :func:`iochar.analyze.fsu.size_histogram` output (``op``, ``size_bytes``,
        ``count``).

    Returns
    -------
    str
        Markdown.
    """
    total = int(hist["count"].sum()) if not hist.empty else 0
    if total == 0:
        return "No disk I/Os in the brw_stats histograms of this selection."
    parts = []
    for op in ("read", "write"):
        h = hist[(hist["op"] == op) & (hist["count"] > 0)]
        n = int(h["count"].sum())
        if n == 0:
            continue
        peak = int(h["count"].max())
        tops = h[h["count"] == peak]
        big = float(h["size_bytes"].max())
        small = int(h.loc[h["size_bytes"] < big, "count"].sum())
        if len(tops) > 1:
            head = (
                f"no {op} size dominates: {plural(len(tops), 'size bin')} share the highest "
                f"count ({plural(peak, op)} each, of {n:,})"
            )
        else:
            head = (
                f"the most common {op} size is {fmt_bytes(float(tops['size_bytes'].iloc[0]))} "
                f"({fmt_pct(peak / n)} of {plural(n, op)})"
            )
        parts.append(f"{head}; {fmt_pct(small / n)} of the {op}s are smaller than {fmt_bytes(big)}")
    return f"Disk I/O sizes (brw_stats, {plural(total, 'I/O')}): " + "; ".join(parts) + "."


# --------------------------------------------------------------------------- issue 20 figures


def model_check(compare: pd.DataFrame) -> str:
    """How well the cost model predicts its calibration runs (Uselton & Wright 2013, Fig. 7).

    Parameters
    ----------
    compare : pandas.DataFrame
        :func:`iochar.analyze.fsu.compare_calibration` (or
        :func:`~iochar.analyze.fsu.compare_bandwidth`).

    Returns
    -------
    str
        Markdown: runs compared, the mean and largest error of Eq. 6's
        prediction and where it is largest; or why nothing was compared.
    """
    ev = evidence_of(compare)
    if compare.empty:
        why = ev.get("reason") or "no benchmark runs to compare"
        return (
            f"No measured bandwidth to set beside the model: {esc(why)}. Set `calibration` to a"
            " fio JSON or IOR output to fit the model and draw its Fig. 7."
        )
    err = pd.to_numeric(compare["error"], errors="coerce")
    i = err.abs().idxmax()
    r = compare.loc[i]
    return (
        f"Eq. 6 predicts the bandwidth of {plural(len(compare), 'calibration point')}"
        f" ({plural(int(compare['runs'].sum()), 'run')} in"
        f" {esc(str(ev.get('calibration', '')).replace(chr(92), '/').rsplit('/', 1)[-1])})"
        f" within {fmt_pct(float(err.abs().mean()))} on average; the largest miss is the"
        f" {r['op']} at {fmt_bytes(float(r['size_bytes']))}: measured"
        f" {fmt_rate(float(r['measured_bps']))}, predicted {fmt_rate(float(r['predicted_bps']))}"
        f" ({float(r['error']):+.0%})."
    )


def fsu_filesystems(fs_series: pd.DataFrame) -> str:
    """The file-system-wide FSU (Uselton & Wright 2013, section V), per file system.

    Parameters
    ----------
    fs_series : pandas.DataFrame
        :func:`iochar.analyze.fsu.fsu_by_filesystem`.

    Returns
    -------
    str
        Markdown: file systems and their targets, the median and peak of
        each one's mean FSU, and whether a chart follows (only where a file
        system has two or more targets to average).
    """
    members = evidence_of(fs_series).get("targets") or {}
    if fs_series.empty or not members:
        return "No FSU series, so no file-system-wide FSU."
    parts = []
    for name, targets in members.items():
        v = pd.to_numeric(
            fs_series.loc[fs_series["filesystem"] == name, "fsu_pct"], errors="coerce"
        ).dropna()
        if v.empty:
            parts.append(f"{esc(name)} ({plural(len(targets), 'target')}, no interval used)")
            continue
        parts.append(
            f"{esc(name)} ({plural(len(targets), 'target')}: median {fmt_num(v.median())}%,"
            f" peak {fmt_num(v.max())}% over {plural(len(v), 'interval')})"
        )
    text = "FSU averaged over each file system's targets: " + listing(parts, limit=6) + "."
    if all(len(t) < 2 for t in members.values()):
        text += (
            " Each file system holds one target here, so its FSU is that target's (above);"
            " no chart of its own."
        )
    return text


def daily_profile(profile) -> str:
    """A system's days against its long-term median day (Uselton & Wright 2013, Fig. 9).

    Parameters
    ----------
    profile : iochar.analyze.throughput.DailyProfile
        :func:`iochar.analyze.throughput.daily_profile`.

    Returns
    -------
    str
        Markdown: the inputs and targets, days covered, each metric's median
        daily mean rate and volume, and the busiest day against it; or why
        there is no long-term view.
    """
    if profile.reason:
        return f"No long-term daily profile: {esc(profile.reason)}."
    names = {"read_bytes": "reads", "write_bytes": "writes"}
    d = profile.days
    cov = float(d.groupby("date")["coverage"].max().mean())
    text = (
        f"{plural(profile.n_days, 'day')} of counters ({plural(len(profile.sources), 'input')},"
        f" {plural(len(profile.targets), 'target')} summed; samples cover on average"
        f" {fmt_s(cov * 86400)} of a day"
        + (f", {fmt_pct(cov)}" if cov >= 0.01 else "")
        + "). The median day's mean rate: "
    )
    parts = []
    for metric, rate in profile.median_rate.items():
        sub = d[d["metric"] == metric]
        top = sub.loc[sub["rate"].idxmax()]
        ratio = float(top["rate"]) / rate if rate > 0 else math.inf
        parts.append(
            f"{names.get(metric, esc(metric))} {fmt_rate(rate)}"
            f" ({fmt_bytes(profile.median_per_day[metric])} a day); the busiest day,"
            f" {top['date']}, ran at {fmt_rate(float(top['rate']))}"
            + (f" ({fmt_num(ratio)} times the median)" if math.isfinite(ratio) else "")
        )
    text += "; ".join(parts) + "."
    if cov < 0.99:
        text += (
            " Days only partly sampled are judged by their mean rate over the sampled time,"
            " so their daily volumes are estimates."
        )
    return text
