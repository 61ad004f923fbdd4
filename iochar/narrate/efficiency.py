"""Sentences of notebook 05: capacity per level, used % per phase (Méndez et al.), scaling
and % of peak, interference (Kwan & Reed). Every number comes from the results passed
in; names from the data go through :func:`iochar.narrate.esc`.
"""

from __future__ import annotations

import math

import pandas as pd

from iochar.narrate import esc, fmt_bytes, fmt_num, fmt_rate, plural

__all__ = [
    "capacity_summary",
    "interference_summary",
    "observed_summary",
    "scaling_summary",
    "used_summary",
]

_LEVEL = {
    "device": "the device (O_DIRECT)",
    "local_fs": "the local file system (buffered)",
    "mount": "the network/parallel mount",
    "library": "the I/O library",
}


def _procs(n) -> str:
    return plural(int(n), "process", "processes")


def _pct(x: float) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:.1f}%"


def capacity_summary(cap: pd.DataFrame) -> str:
    """What the capacity table holds: levels, points, repetitions, the best rate per level.

    Parameters
    ----------
    cap : pandas.DataFrame
        :func:`iochar.analyze.capacity.capacity` output.

    Returns
    -------
    str
        Markdown.
    """
    if cap.empty:
        return (
            "The database holds no capacity table: run `iochar calibrate DIR --levels "
            "device,local_fs --db DB` on the machine the jobs ran on (or `--from` its "
            "fio/IOR output) to characterize the I/O system."
        )
    parts = []
    for lv, g in cap.groupby("level", sort=False):
        best = g.loc[g["rate"].idxmax()]
        parts.append(
            f"{esc(_LEVEL.get(lv, lv))}: {plural(len(g), 'point')}, best "
            f"{fmt_rate(best['rate'])} ({esc(best['op'])}, {esc(best['access'])}, "
            f"{fmt_bytes(best['size_bytes'])} requests, {_procs(best['nprocs'])})"
        )
    reps = int(cap["n"].min()), int(cap["n"].max())
    r = f"{reps[0]}" if reps[0] == reps[1] else f"{reps[0]} to {reps[1]}"
    return (
        f"The I/O system was characterized at {plural(cap['level'].nunique(), 'level')} "
        f"of the I/O path, each point repeated {r} times (the intervals are Student-t 95% "
        "intervals of the mean, as Kwan & Reed report every point): " + "; ".join(parts) + "."
    )


def used_summary(u: pd.DataFrame, *, threshold: float = 30.0) -> str:
    """Used % per phase (Méndez Tables 2-3): the range, the phases under ``threshold``.

    Parameters
    ----------
    u : pandas.DataFrame
        :func:`iochar.analyze.efficiency.used` output.
    threshold : float, default 30.0
        Used % under which a phase is reported (Méndez: BT-IO simple at about 30 %).

    Returns
    -------
    str
        Markdown.
    """
    d = u[u["used_pct"].notna()] if len(u) else u
    if d is None or d.empty:
        return "No phase could be compared with a characterized capacity."
    lim = d[d["limiting"]] if "limiting" in d else d
    low = lim[lim["used_pct"] < threshold]
    n = lim.drop_duplicates(["job_id", "phase"]).shape[0]
    s = (
        f"Against the slowest characterized level for its operation, access mode and request "
        f"size (its limiting level), the {plural(n, 'phase')} used "
        f"{_pct(lim['used_pct'].min())} to {_pct(lim['used_pct'].max())} of the capacity. "
    )
    if low.empty:
        s += f"No phase is under {threshold:g}%: the I/O system is not what limits them. "
    else:
        w = low.loc[low["used_pct"].idxmin()]
        s += (
            f"{plural(len(low), 'phase')} stay under {threshold:g}%; the lowest, job "
            f"{int(w['job_id'])} phase {int(w['phase'])} ({esc(w['op'])}, "
            f"{esc(w['access'])}, about {fmt_bytes(w['size_bytes'])} per request), used "
            f"{_pct(w['used_pct'])} of {esc(_LEVEL.get(w['level'], w['level']))} "
            f"(between {_pct(w['used_lo'])} and {_pct(w['used_hi'])} with the capacity's "
            "spread): its access pattern, not the system, limits it. "
        )
    over = lim[lim["used_pct"] > 100]
    if len(over):
        s += (
            f"{plural(len(over), 'phase')} exceed 100%, as in Méndez et al.'s Table 2 (309% "
            "at the I/O library level): caches or aggregation served them faster than the "
            "characterized configuration."
        )
    return s.strip()


def scaling_summary(sw: pd.DataFrame) -> str:
    """Rate against scale and % of peak (Kwan & Reed section 4.1).

    Parameters
    ----------
    sw : pandas.DataFrame
        :func:`iochar.analyze.scaling.sweep` output.

    Returns
    -------
    str
        Markdown.
    """
    if sw.empty:
        return "No sweep to compare with a peak."
    best = sw.loc[sw["pct_peak"].idxmax()]
    kind = best["peak_kind"]
    peak = (
        f"the theoretical peak of {fmt_rate(best['peak'])}"
        if kind == "theoretical"
        else "the highest rate measured at that level and operation (the calibrated peak)"
    )
    ci = (
        ""
        if not math.isfinite(best["ci_lo"])
        else f" (95% interval {fmt_rate(max(best['ci_lo'], 0))} to {fmt_rate(best['ci_hi'])})"
    )
    counts = sorted(int(x) for x in sw["nprocs"].unique())
    s = (
        f"The best point, {esc(best['level'])} {esc(best['op'])} {esc(best['access'])} with "
        f"{fmt_bytes(best['size_bytes'])} requests and {_procs(best['nprocs'])}, "
        f"reached {fmt_rate(best['rate'])}{ci}: {_pct(best['pct_peak'])} of {peak}. "
    )
    if len(counts) > 1:
        s += f"Process counts measured: {', '.join(map(str, counts))}."
    else:
        s += (
            "Only one process count was measured; `iochar calibrate --nprocs 1,2,4` adds "
            "Kwan & Reed's scale axis."
        )
    return s


def interference_summary(t: pd.DataFrame) -> str:
    """Kwan & Reed Table 1 cases: each job's slowdown against running alone.

    Parameters
    ----------
    t : pandas.DataFrame
        :func:`iochar.analyze.interference.fio_pairs` output.

    Returns
    -------
    str
        Markdown.
    """
    if t is None or len(t) == 0:
        return "No concurrent-job experiment was measured."
    parts = []
    for r in t.itertuples():
        sig = (
            ""
            if not math.isfinite(r.deg_lo)
            else f" (95% interval {r.deg_lo:.0f} to {r.deg_hi:.0f})"
        )
        parts.append(f"{esc(r.case)} job {esc(r.role)} ({esc(r.op)}) {r.degradation_pct:.0f}%{sig}")
    return (
        "Slowdown of each job against the same operation alone, as in Kwan & Reed's "
        "interference experiments (a writer cut their reader's rate by about 30%): "
        + "; ".join(parts)
        + ". An interval that includes 0 does not show a slowdown."
    )


def observed_summary(obs) -> str:
    """Observed jobs: rate when others overlap against alone, with the caution.

    Parameters
    ----------
    obs : iochar.result.Table
        :func:`iochar.analyze.interference.observed` output.

    Returns
    -------
    str
        Markdown.
    """
    caution = obs.evidence.get("caution", "") if hasattr(obs, "evidence") else ""
    if len(obs) == 0:
        return (
            "No application has both runs that overlap other jobs and runs alone, so the "
            "observed question cannot be asked of this database."
        )
    parts = [
        f"{esc(r.app) or '—'}: {fmt_num(r.degradation_pct)}% slower overlapped "
        f"({r.n_overlapped} runs) than alone ({r.n_alone})"
        + (
            ""
            if not math.isfinite(r.deg_lo)
            else f", 95% interval {r.deg_lo:.0f} to {r.deg_hi:.0f}"
        )
        for r in obs.itertuples()
    ]
    return "; ".join(parts) + f". Caution: {caution}."
