"""One job in its system: the storage load while the job ran (issue 20, item 1).

A storage engineer's first question about a slow job is "what was the file system
doing while it ran?" (pytokio's ``summarize_job`` joins a job's Darshan log with
server counters for it). This module joins, in one database, a job's time window and
files with the counters of the devices and servers (LMT, ``brw_stats``, iostat,
``/proc/diskstats``):

- :func:`job_context` -- one row per storage target that was observed while the job
  ran: its throughput during the job and the share of its observed peak, the share of
  the time it was busy, its FSU (Uselton & Wright 2013) when disk I/O size histograms
  exist, and the job's own share of its bytes; its ``evidence`` says plainly when the
  counters do not cover the job's window or cannot be matched, and why;
- :func:`concurrent_jobs` -- the other jobs of the database that ran at the same
  time, with their bytes during the window;
- :func:`load_series` -- the matched targets' load per counter sample around the job,
  with the job's own bytes on the same samples (for
  :func:`iochar.plot.context.job_load_chart`).

Rules
-----
**Window.** A job runs from ``jobs.start_ts`` to ``jobs.end_ts`` or the start plus
``runtime_s``, whichever is later [UTC] (Darshan logs keep whole seconds, and
libdarshan-util's run time is ``end - start + 1``). A job without a start date cannot be
placed (status ``no_date``).

**Time match.** A counter sample covers ``[ts - interval_s, ts]`` (``counters.ts`` is
the interval's end, DESIGN.md). Within a sample, the amount is taken as spread evenly
over the interval: the bytes of a sample inside the window are ``value x overlap /
interval_s`` -- the cumulative counter linearly interpolated between two samples,
which is how iostat itself turns two counter readings into a rate (sysstat
``iostat.c``: ``S_VALUE(prev, curr, itv)``). The job's own bytes are spread the same
way: each read or write evenly over ``[t_start, t_end]`` (per-operation records), or a
file's read (write) bytes evenly between its first and last read (write) (Darshan
``*_F_{READ,WRITE}_{START,END}_TIMESTAMP``; a file without times over the whole run).

**Target match** (most specific first, ``match`` column):

1. ``ost`` -- the job's files name their Lustre OSTs (Darshan LUSTRE records,
   ``LUSTRE_COMP<k>_OST_ID_<j>`` in ``module_counters``): only targets whose name
   holds that OST index count. Lustre names an OST ``<fsname>-OST<index>`` with the
   index in hexadecimal (Lustre Operations Manual, "Lustre file system components";
   LMT and ``brw_stats`` use these names), so ``snx11168-OST00ad`` is OST 173. The job's
   bytes on each OST follow Lustre's RAID-0 layout: in a component ``[ext_start,
   ext_end)`` striped over ``c`` OSTs in units of ``s`` bytes, file offset ``x`` lies on
   the ``(x // s) mod c``-th OST of the component's list (Lustre manual, "Managing File
   Layout (Striping)"). Operations with an offset are split exactly; a file known only
   from counters is taken as written (read) over ``[0, extent)``, its extent the
   highest byte read or written plus one.
2. ``mount`` -- the job's log holds a mount table (Darshan's, in ``sources.meta``): a
   file on a ``lustre`` mount can only load Lustre targets (names with ``-OST``); a
   file on a block-device file system (:data:`BLOCK_FS`: ext4, xfs...; the kinds
   ``/proc/filesystems`` does not mark ``nodev``) only block devices (the longest mount
   point that prefixes the path decides).
3. ``time`` -- nothing says where the files are (strace, trace files, or only network
   and virtual mounts such as nfs, gpfs or dvs, which no counter target stands for):
   every target observed during the window counts, and ``match_rule`` says so.

Block devices nest (a write is counted on ``dm-0``, ``sda2`` and ``sda``): by default
only whole disks and non-block targets count (:func:`iochar.analyze.blockdev.select_targets`,
``devices="disks"``), so no byte is counted twice.

**Peak.** A target's peak is the highest read + write rate of one of its samples over
its whole record in that input (samples whose ``quality`` is ``ok``: reset, wrap and
gap samples are lower bounds or averages over an outage), as Carns et al. (2011,
section 4) measured "percent of peak" against the observed peak; ``peak_basis`` says
so and names the record, or says "given" when ``peak_bps`` is passed (a rated peak).

**Busy.** ``busy_share``: the share of the observed window in samples at or above
``busy_fraction`` (default 0.33) of the peak -- Carns et al. 2011, section 4: "for 98%
of the time, the I/O system was utilized at less than 33% of peak". ``util_share``:
the kernel's busy time (``busy_s``: ``/proc/diskstats`` field 13, time with I/O in
flight; iostat ``%util``) over the observed window. ``fsu_pct``: Uselton & Wright
2013, Eq. 7, from ``brw_stats`` disk I/O size histograms
(:func:`iochar.analyze.fsu.fsu_series`, Table I coefficients unless ``model`` is
given), time-weighted over the window; ``fsu_busy_share``: the share of that time with
FSU at or above 30% ("when the FSU is above around 30% the file system is busy",
section V, Table II); ``suboptimal_share``: sub-optimal disk I/Os (Tables II-III).

**The job's share.** ``job_share`` is the job's bytes over the target's bytes in the
same samples. The job's bytes are what the application asked for: reads served from a
cache never reach a device, and writes reach it later unless synced, so a share above
1 means the cache served the job. A target gets the job's bytes only when they can be
placed on it: by OST (``ost``), or when it is the only matched target of its input
(a machine with one disk); else ``job_bytes`` is NaN and only the total is compared
(``evidence["job_share"]``).

Units: bytes, bytes per second, seconds, shares as fractions 0..1, FSU in %.

References: Carns et al., "Understanding and improving computational science storage
access through continuous characterization", ACM TOS 7(3), 2011, section 4; Uselton &
Wright, "A file system utilization metric for I/O characterization", PDSW 2013, Eq. 7,
Tables II-III; pytokio ``tokio.tools.summarize_job`` (job log joined with server
counters).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from iochar._validation import check_int
from iochar.analyze._query import query
from iochar.errors import ParameterError
from iochar.result import Table, join_sql

__all__ = [
    "STATUSES",
    "BLOCK_FS",
    "ost_index",
    "job_window",
    "job_context",
    "concurrent_jobs",
    "load_series",
    "summary_facts",
    "pick_job",
]

#: What ``evidence["status"]`` can say, and what it means.
STATUSES = {
    "covered": "counters cover the whole window",
    "partial": "counters cover part of the window",
    "no_date": "the job has no start date to match the counters' times",
    "no_counters": "the database holds no device or server counters",
    "outside": "the counters were taken before or after the job",
    "no_match": "counters cover the window, but none of the job's targets",
}

_BYTES = ("read_bytes", "write_bytes")
_OST = re.compile(r"OST([0-9A-Fa-f]{4,8})(?![0-9A-Fa-f])")
_LUSTRE = re.compile(r"LUSTRE_COMP(\d+)_(STRIPE_SIZE|STRIPE_COUNT|EXT_START|EXT_END|OST_ID_(\d+))")
#: Uselton & Wright 2013, section V: FSU above around 30% is busy.
FSU_BUSY_PCT = 30.0


def ost_index(target: str) -> int | None:
    """The OST index a Lustre target name holds (``fsname-OSTxxxx``, hexadecimal).

    Parameters
    ----------
    target : str
        A counter target name.

    Returns
    -------
    int or None
        The index, or None for a name without ``OST`` and four or more hex digits.

    Examples
    --------
    >>> ost_index("snx11168-OST00ad"), ost_index("testfs-OST0000"), ost_index("sda")
    (173, 0, None)
    """
    m = _OST.search(str(target))
    return int(m.group(1), 16) if m else None


# --------------------------------------------------------------------------- window


@dataclass(frozen=True)
class _Window:
    job_id: int
    source_id: int | None
    start: pd.Timestamp | None
    end: pd.Timestamp | None
    runtime_s: float
    app: Any = None

    @property
    def seconds(self) -> float:
        if self.start is None or self.end is None:
            return math.nan
        return (self.end - self.start).total_seconds()


_JOB_SQL = """
SELECT job_id, source_id, app, start_ts, end_ts, runtime_s FROM jobs WHERE job_id = $job
"""


def job_window(store, job_id: int) -> dict[str, Any]:
    """The time window of one job: start and end (UTC) and its length.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int
        The job.

    Returns
    -------
    dict
        ``job_id``, ``start``, ``end`` (pandas Timestamps, naive UTC; None without a
        date) and ``seconds`` [s]. The end is ``jobs.end_ts`` or the start plus
        ``runtime_s``, whichever is later.

    Raises
    ------
    ParameterError
        No such job.
    """
    w = _window(store, job_id, "job_window")
    return {"job_id": w.job_id, "start": w.start, "end": w.end, "seconds": w.seconds}


def _window(store, job_id, caller: str) -> _Window:
    job_id = check_int(job_id, "job_id", caller, "an int")
    df = query(store, _JOB_SQL, params={"job": int(job_id)}).df()
    if df.empty:
        raise ParameterError("job_id", caller, "the id of a job in the database", job_id)
    r = df.iloc[0]
    rt = float(r["runtime_s"]) if pd.notna(r["runtime_s"]) else math.nan
    start = pd.Timestamp(r["start_ts"]) if pd.notna(r["start_ts"]) else None
    end = pd.Timestamp(r["end_ts"]) if pd.notna(r["end_ts"]) else None
    if start is not None and math.isfinite(rt) and rt > 0:
        # Darshan keeps whole seconds and a run time one second longer than end - start
        # (libdarshan-util): the window is at least the run time long
        by_rt = start + pd.to_timedelta(rt, unit="s")
        end = by_rt if end is None or end < by_rt else end
    if start is not None and end is not None and end < start:
        end = start
    sid = int(r["source_id"]) if pd.notna(r["source_id"]) else None
    return _Window(int(job_id), sid, start, end, rt, r["app"])


# --------------------------------------------------------------------------- the job's bytes

_OPS_SQL = """
WITH layer AS ({layer})
SELECT job_id, file_id, op, "offset", size, t_start, t_end
FROM layer WHERE list_contains($jobs, job_id)
"""

#: The bytes of each job's traced reads and writes, per op (what an unmatched job's
#: evidence says of them when no Lustre layout places them on OSTs).
_OPS_TOTALS_SQL = """
WITH layer AS ({layer})
SELECT job_id, op, sum(size) AS bytes
FROM layer WHERE list_contains($jobs, job_id)
GROUP BY job_id, op
"""

_HAS_OPS_SQL = """
SELECT DISTINCT job_id FROM ops
WHERE list_contains($jobs, job_id) AND op IN ('read', 'write') AND size IS NOT NULL
"""

_LAYOUT_SQL = """
SELECT file_id, record, counter, value FROM module_counters
WHERE job_id = $job AND module = 'LUSTRE' AND counter LIKE 'LUSTRE_COMP%'
ORDER BY file_id, record
"""


def _cumulative(a: np.ndarray, b: np.ndarray, w: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Bytes moved by time ``t`` when each piece's ``w`` bytes spread evenly over [a, b].

    A piece with ``b <= a`` moves all its bytes at ``a``. Exact and O((n + m) log n).
    """
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    w = np.asarray(w, np.float64)
    t = np.asarray(t, np.float64)
    out = np.zeros(t.shape, np.float64)
    if a.size == 0:
        return out
    point = ~(b > a)
    if point.any():
        o = np.argsort(a[point], kind="stable")
        pa, pw = a[point][o], w[point][o]
        out += np.r_[0.0, np.cumsum(pw)][np.searchsorted(pa, t, side="right")]
    ramp = ~point
    if ramp.any():
        ra, rb, rw = a[ramp], b[ramp], w[ramp]
        slope = rw / (rb - ra)
        for edge, sign in ((ra, 1.0), (rb, -1.0)):
            o = np.argsort(edge, kind="stable")
            e, s = edge[o], slope[o]
            k = np.searchsorted(e, t, side="right")
            cs = np.r_[0.0, np.cumsum(s)]
            cse = np.r_[0.0, np.cumsum(s * e)]
            out += sign * (cs[k] * t - cse[k])
    return out


def _layouts(store, job_id: int) -> pd.DataFrame:
    """The Lustre layout of each file of a job, one row per (file, component, stripe).

    Columns ``file_id``, ``comp``, ``e0``, ``e1`` (the component's extent [bytes];
    ``inf`` for Darshan's -1, "to the end of the file"), ``size`` (stripe size
    [bytes]; NaN when not recorded), ``count`` (stripes in the component), ``k`` (the
    stripe's position, 0-based) and ``ost`` (its OST index).
    """
    cols = ["file_id", "comp", "e0", "e1", "size", "count", "k", "ost"]
    df = query(store, _LAYOUT_SQL, params={"job": int(job_id)}).df()
    df = df[df["file_id"].notna()]
    if df.empty:
        return pd.DataFrame(columns=cols)
    # one record per file (a file has one layout; a rank's copy repeats it)
    df = df[df["record"] == df.groupby("file_id")["record"].transform("min")]
    m = df["counter"].str.extract(_LUSTRE)
    df = df.assign(comp=pd.to_numeric(m[0]), field=m[1], j=pd.to_numeric(m[2]))
    df = df[df["comp"].notna()]
    scal = df[df["j"].isna()].pivot_table(
        index=["file_id", "comp"], columns="field", values="value", aggfunc="first"
    )
    for c in ("STRIPE_SIZE", "STRIPE_COUNT", "EXT_START", "EXT_END"):
        if c not in scal.columns:
            scal[c] = np.nan
    ost = df[df["j"].notna() & (df["value"] >= 0)][["file_id", "comp", "j", "value"]]
    lay = ost.merge(scal.reset_index(), on=["file_id", "comp"], how="left")
    count = lay.groupby(["file_id", "comp"])["j"].transform("size").astype("float64")
    declared = lay["STRIPE_COUNT"]
    lay = lay[~(declared > 0) | (lay["j"] < declared)]  # ids past the stripe count: unused
    count = count.loc[lay.index].where(~(declared.loc[lay.index] > 0), declared.loc[lay.index])
    e0 = lay["EXT_START"].where(lay["EXT_START"] >= 0, 0.0)
    e1 = lay["EXT_END"].where(lay["EXT_END"] > e0, np.inf)
    size = lay["STRIPE_SIZE"].where(lay["STRIPE_SIZE"] > 0)
    k = lay.groupby(["file_id", "comp"])["j"].rank(method="first").astype("int64") - 1
    return pd.DataFrame(
        {
            "file_id": lay["file_id"].astype("int64"),
            "comp": lay["comp"].astype("int64"),
            "e0": e0.astype("float64"),
            "e1": e1.astype("float64"),
            "size": size.astype("float64"),
            "count": count.astype("float64"),
            "k": k,
            "ost": lay["value"].astype("int64"),
        }
    ).reset_index(drop=True)


def _on_stripe(x: np.ndarray, size: np.ndarray, count: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Bytes of [0, x) on the k-th of ``count`` stripes of ``size`` bytes (RAID-0)."""
    full = np.floor(x / (size * count))
    rest = x - full * size * count
    return full * size + np.clip(rest - k * size, 0.0, size)


def _split_osts(pieces: pd.DataFrame, layout: pd.DataFrame) -> pd.DataFrame:
    """Each piece of a file with a layout, split into one piece per OST it touches.

    A piece's byte range ``[lo, hi)`` is cut by the components' extents and dealt to
    the stripes as RAID-0 does (:func:`_on_stripe`); its bytes are split in the same
    proportion. A range with no known bound, or a component without a stripe size, is
    split evenly over the stripes (of the first component, for an unknown range).
    """
    x = pieces.reset_index(drop=True).assign(_piece=lambda d: np.arange(len(d)))
    x["file_id"] = x["file_id"].astype("int64")
    j = x.drop(columns="ost").merge(layout, on="file_id")
    lo, hi = j["lo"].to_numpy(np.float64), j["hi"].to_numpy(np.float64)
    known = np.isfinite(lo) & np.isfinite(hi) & (hi > lo)
    e0, e1 = j["e0"].to_numpy(), j["e1"].to_numpy()
    a, b = np.clip(lo, e0, e1), np.clip(hi, e0, e1)
    size, count, k = j["size"].to_numpy(), j["count"].to_numpy(), j["k"].to_numpy()
    inside = np.where(known & (b > a), 1.0, 0.0)
    striped = np.isfinite(size)
    with np.errstate(invalid="ignore", divide="ignore"):
        got = np.where(
            striped,
            _on_stripe(np.where(striped, b, 0.0), np.where(striped, size, 1.0), count, k)
            - _on_stripe(np.where(striped, a, 0.0), np.where(striped, size, 1.0), count, k),
            (b - a) / count,
        )
        share = np.where(known, inside * got / np.where(known, hi - lo, 1.0), 0.0)
    first = j["comp"] == j.groupby("file_id")["comp"].transform("min")
    share = np.where(~known & first.to_numpy(), 1.0 / count, share)
    j["bytes"] = j["bytes"].to_numpy() * np.nan_to_num(share)
    j = j[j["bytes"] > 0]
    out = j.groupby(["_piece", "ost"], sort=False)["bytes"].sum().reset_index()
    base = x.drop(columns=["bytes", "ost"]).set_index("_piece")
    out = out.join(base, on="_piece").drop(columns="_piece")
    return out[[c for c in pieces.columns]]


@dataclass
class _Pieces:
    """Byte pieces of jobs: ``job_id``, ``a``, ``b`` [s since job start], ``bytes``,
    ``op``, ``ost`` (-1: not known), ``basis`` per job."""

    frame: pd.DataFrame
    basis: dict[int, str] = field(default_factory=dict)
    sql: str | None = None


def _pieces(
    store,
    jobs: pd.DataFrame,
    *,
    layouts: bool | Mapping[int, pd.DataFrame],
    totals_only: bool = False,
) -> _Pieces:
    """The reads and writes of ``jobs`` (``job_id``, ``runtime_s``) as time pieces.

    ``layouts``: split them by OST (:func:`_by_ost`); a mapping gives jobs' layouts
    already read (:func:`_layouts`), the others are read. ``totals_only`` (the job
    matched no counters: only its bytes per op are said): traced operations not split
    by OST are summed per op in the database, one piece each, with no times or
    offsets."""
    from iochar.analyze._counter_facts import counter_facts
    from iochar.analyze._sql import LAYER_OPS

    ids = [int(j) for j in jobs["job_id"]]
    cols = ["job_id", "file_id", "a", "b", "bytes", "op", "lo", "hi"]
    if not ids:
        return _Pieces(pd.DataFrame(columns=[*cols, "ost"]))
    traced = {int(j) for (j,) in query(store, _HAS_OPS_SQL, params={"jobs": ids}).fetchall()}
    parts, basis = [], {}
    ops_sql = _OPS_SQL.format(layer=LAYER_OPS)
    if traced and totals_only and layouts is False:
        ops_sql = _OPS_TOTALS_SQL.format(layer=LAYER_OPS)
        o = query(store, ops_sql, params={"jobs": sorted(traced)}).df()
        parts.append(
            pd.DataFrame(
                {
                    "job_id": o["job_id"].astype("int64"),
                    "file_id": np.nan,
                    "a": np.nan,
                    "b": np.nan,
                    "bytes": o["bytes"].astype("float64"),
                    "op": o["op"].astype(str),
                    "lo": np.nan,
                    "hi": np.nan,
                }
            )
        )
        basis.update({j: "ops" for j in traced})
    elif traced:
        o = query(store, ops_sql, params={"jobs": sorted(traced)}).df()
        off = o["offset"].astype("float64")
        parts.append(
            pd.DataFrame(
                {
                    "job_id": o["job_id"].astype("int64"),
                    "file_id": o["file_id"].astype("float64"),
                    "a": o["t_start"].astype("float64"),
                    "b": o["t_end"].astype("float64"),
                    "bytes": o["size"].astype("float64"),
                    "op": o["op"].astype(str),
                    "lo": off,
                    "hi": off + o["size"].astype("float64"),
                }
            )
        )
        basis.update({j: "ops" for j in traced})
    rest = jobs[~jobs["job_id"].astype("int64").isin(traced)]
    if len(rest):
        span = rest["runtime_s"].astype("float64").fillna(0.0)
        f = counter_facts(store, pd.DataFrame({"job_id": rest["job_id"], "span_s": span}), 0.1)
        for op in ("read", "write"):
            nb = f[f"bytes_{op}" if op == "read" else "bytes_written"].astype("float64")
            a = f[f"first_{op}_t"].astype("float64")
            b = f[f"last_{op}_t"].astype("float64")
            unknown = a.isna() | b.isna()
            run = f["span_s"].astype("float64").fillna(0.0)
            parts.append(
                pd.DataFrame(
                    {
                        "job_id": f["job_id"].astype("int64"),
                        "file_id": f["file_id"].astype("float64"),
                        "a": a.where(~unknown, 0.0),
                        "b": b.where(~unknown, run),
                        "bytes": nb,
                        "op": op,
                        "lo": 0.0,
                        "hi": f["extent_bytes"].astype("float64"),
                    }
                )[nb > 0]
            )
        basis.update({int(j): "file_stats" for j in f["job_id"].unique()})
    kept = [p for p in parts if len(p)]  # a job that moved no bytes has no piece at all
    frame = pd.concat(kept, ignore_index=True) if kept else None
    if frame is None or frame.empty:
        frame = pd.DataFrame(columns=cols)
    frame = frame.astype({"a": "float64", "b": "float64", "bytes": "float64"})
    frame["ost"] = -1
    if layouts is not False and len(frame):
        frame = _by_ost(store, frame, layouts if isinstance(layouts, Mapping) else {})
    return _Pieces(frame, basis, join_sql(_HAS_OPS_SQL, ops_sql))


def _by_ost(store, frame: pd.DataFrame, known: Mapping[int, pd.DataFrame]) -> pd.DataFrame:
    """Pieces of files with a Lustre layout split into one piece per OST (``known``:
    layouts already read, by job)."""
    out = [frame[frame["file_id"].isna()]]
    for jid, g in frame[frame["file_id"].notna()].groupby("job_id", sort=False):
        lay = known.get(int(jid))
        if lay is None:
            lay = _layouts(store, int(jid))
        has = g["file_id"].astype("int64").isin(lay["file_id"].unique())
        out.append(g[~has])
        if has.any():
            out.append(_split_osts(g[has], lay))
    return pd.concat([o for o in out if len(o)], ignore_index=True) if out else frame


# --------------------------------------------------------------------------- counters

_SEC = "to_microseconds(CAST(interval_s * 1e6 AS BIGINT))"

_RANGES_SQL = f"""
SELECT 'counters' AS "table", coalesce(c.source_id, -1) AS source_id,
       any_value(s.kind) AS kind, any_value(s.uri) AS uri,
       min(c.ts - {_SEC}) AS record_start, max(c.ts) AS record_end,
       count(DISTINCT c.target) AS targets
FROM counters c LEFT JOIN sources s ON s.source_id = c.source_id
WHERE c.metric IN ('read_bytes', 'write_bytes') AND c.interval_s > 0
GROUP BY coalesce(c.source_id, -1)
UNION ALL
SELECT 'size_hist', coalesce(h.source_id, -1), any_value(s.kind), any_value(s.uri),
       min(h.ts - {_SEC}), max(h.ts), count(DISTINCT h.target)
FROM size_hist h LEFT JOIN sources s ON s.source_id = h.source_id
WHERE h.section = $section AND h.interval_s > 0
GROUP BY coalesce(h.source_id, -1)
ORDER BY 2
"""

_SAMPLES_SQL = f"""
SELECT coalesce(source_id, -1) AS source_id, target, ts, ts - {_SEC} AS start,
       max(interval_s) AS interval_s,
       coalesce(sum(value) FILTER (WHERE metric = 'read_bytes'), 0) AS read_bytes,
       coalesce(sum(value) FILTER (WHERE metric = 'write_bytes'), 0) AS write_bytes,
       sum(value) FILTER (WHERE metric = 'busy_s') AS busy_s,
       bool_and(coalesce(quality, 'ok') = 'ok') AS ok
FROM counters
WHERE list_contains($sources, coalesce(source_id, -1)) AND list_contains($targets, target)
  AND metric IN ('read_bytes', 'write_bytes', 'busy_s') AND interval_s > 0
GROUP BY coalesce(source_id, -1), target, ts, interval_s
HAVING count(*) FILTER (WHERE metric IN ('read_bytes', 'write_bytes')) > 0
ORDER BY source_id, target, ts
"""

_TARGETS_SQL = """
SELECT DISTINCT coalesce(source_id, -1) AS source_id, target FROM counters
WHERE list_contains($sources, coalesce(source_id, -1)) AND metric IN ('read_bytes', 'write_bytes')
UNION
SELECT DISTINCT coalesce(source_id, -1), target FROM size_hist
WHERE list_contains($sources, coalesce(source_id, -1)) AND section = $section
ORDER BY 1, 2
"""


def _mounts(store, source_id: int | None) -> list[tuple[str, str]]:
    """The job's mount table ([path, type] pairs from a Darshan log's meta), longest first."""
    if source_id is None:
        return []
    row = query(
        store, "SELECT meta FROM sources WHERE source_id = $s", params={"s": int(source_id)}
    ).fetchall()
    if not row or not row[0][0]:
        return []
    try:
        mounts = json.loads(row[0][0]).get("mounts") or []
    except (TypeError, ValueError, AttributeError):
        return []
    out = [(str(m[0]), str(m[1])) for m in mounts if isinstance(m, list | tuple) and len(m) >= 2]
    return sorted(out, key=lambda m: -len(m[0]))


#: File systems that live on a block device of the machine (``/proc/filesystems`` lists
#: every other kind -- network, virtual, FUSE -- as ``nodev``; Lustre's client is nodev
#: too and is matched with its OSTs instead).
BLOCK_FS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "vfat", "exfat", "f2fs", "jfs", "reiserfs",
     "ntfs", "ntfs3", "hfsplus", "nilfs2", "zfs", "bcachefs"}
)  # fmt: skip


def _mount_kinds(store, w: _Window) -> tuple[set[str], set[str]]:
    """What the job's files are on: ``lustre`` and/or ``block``, and the other types seen.

    A file's mount is the longest mount point that is a prefix of its path (Darshan's
    mount table, in the log's ``sources.meta``).
    """
    mounts = _mounts(store, w.source_id)
    if not mounts:
        return set(), set()
    paths = query(
        store,
        "SELECT DISTINCT path FROM files WHERE job_id = $j AND path LIKE '/%'",
        params={"j": w.job_id},
    ).df()["path"]
    kinds, other = set(), set()
    for p in paths:
        for mp, typ in mounts:
            if p == mp or p.startswith(mp.rstrip("/") + "/"):
                t = typ.lower()
                if t == "lustre":
                    kinds.add("lustre")
                elif t in BLOCK_FS:
                    kinds.add("block")
                else:
                    other.add(t)
                break
    return kinds, other


# --------------------------------------------------------------------------- matching


@dataclass
class _Match:
    window: _Window
    status: str
    reason: str
    match: str | None = None
    ranges: pd.DataFrame | None = None
    samples: pd.DataFrame | None = None  # every sample of the matched targets
    osts: list[int] = field(default_factory=list)
    pieces: _Pieces | None = None
    sql: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)


def _ts_text(t) -> str:
    return "unknown" if t is None or pd.isna(t) else f"{pd.Timestamp(t):%Y-%m-%d %H:%M:%S}"


def _range_text(a, b) -> str:
    return f"{_ts_text(a)} to {_ts_text(b)} UTC"


def _match(store, job_id, caller: str, *, devices, model, optimal_bytes) -> _Match:
    from iochar.analyze import blockdev
    from iochar.analyze.fsu import DISK_IO_SIZE

    w = _window(store, job_id, caller)
    kinds = blockdev.check_devices(devices, caller, targets_named=False)
    ranges = query(store, _RANGES_SQL, params={"section": DISK_IO_SIZE}).df()
    for c in ("record_start", "record_end"):
        ranges[c] = pd.to_datetime(ranges[c])
    jobs = pd.DataFrame({"job_id": [w.job_id], "runtime_s": [w.runtime_s]})
    lay = _layouts(store, w.job_id)
    t0 = t1 = None
    if w.start is not None:
        t0, t1 = w.start, max(w.end, w.start + pd.Timedelta(microseconds=1))
    # no date, no counters, or counters that do not overlap the window: nothing to
    # place in time, only the job's bytes to say
    unmatched = (
        t0 is None
        or ranges.empty
        or not ((ranges["record_start"] < t1) & (ranges["record_end"] > t0)).any()
    )
    pieces = _pieces(
        store, jobs, layouts={w.job_id: lay} if len(lay) else False, totals_only=unmatched
    )
    osts = sorted({int(o) for o in lay["ost"]})  # the OSTs the job's files name
    m = _Match(w, "", "", ranges=ranges, osts=osts, pieces=pieces)
    m.sql = [_JOB_SQL, _RANGES_SQL, pieces.sql or ""]
    if w.start is None:
        m.status = "no_date"
        m.reason = (
            "the job has no start date (jobs.start_ts), so its window cannot be matched "
            "with the counters' times"
        )
        return m
    if ranges.empty:
        m.status = "no_counters"
        m.reason = (
            "the database holds no device or server counters (no read_bytes or write_bytes "
            "in counters, no disk I/O size histograms in size_hist)"
        )
        return m
    over = ranges[(ranges["record_start"] < t1) & (ranges["record_end"] > t0)]
    if over.empty:
        m.status = "outside"
        before = ranges[ranges["record_end"] <= t0]
        after = ranges[ranges["record_start"] >= t1]
        parts = []
        if len(before):
            parts.append(
                f"{len(before)} input(s) end before it (the latest at "
                f"{_ts_text(before['record_end'].max())} UTC)"
            )
        if len(after):
            parts.append(
                f"{len(after)} input(s) start after it (the earliest at "
                f"{_ts_text(after['record_start'].min())} UTC)"
            )
        m.reason = (
            f"the counters do not cover the job's window ({_range_text(t0, w.end)}): they run "
            f"from {_range_text(ranges['record_start'].min(), ranges['record_end'].max())}; "
            + "; ".join(parts)
        )
        return m
    srcs = [int(s) for s in over["source_id"].unique()]
    tg = query(store, _TARGETS_SQL, params={"sources": srcs, "section": DISK_IO_SIZE}).df()
    keep = []
    for _sid, g in tg.groupby("source_id", sort=True):
        sel = set(blockdev.select_targets(list(g["target"]), kinds))
        keep.append(g[g["target"].isin(sel)])
    tg = pd.concat(keep, ignore_index=True) if keep else tg.iloc[0:0]
    tg["ost"] = [ost_index(t) for t in tg["target"]]
    tg["is_block"] = [blockdev.device_class(t).kind != "other" for t in tg["target"]]
    observed = sorted(set(tg["target"]))
    if osts:
        m.match = "ost"
        sel = tg[tg["ost"].isin(osts)]
        why = f"the job's files are on OSTs {_ids(osts)} (Darshan LUSTRE records)"
    else:
        mk, other = _mount_kinds(store, w)
        if mk:
            m.match = "mount"
            want = pd.Series(False, index=tg.index)
            if "lustre" in mk:
                want |= tg["ost"].notna()
            if "block" in mk:
                want |= tg["is_block"]
            sel = tg[want]
            why = "the job's files are on " + " and ".join(
                {"lustre": "Lustre mounts (OST targets)", "block": "local mounts (block devices)"}[
                    k
                ]
                for k in sorted(mk)
            )
        else:
            m.match = "time"
            sel = tg
            why = "nothing names where the job's files are: every target observed counts"
            if other:
                why = (
                    f"the job's files are on {', '.join(sorted(other))} mounts, which name no "
                    "counter target: every target observed counts"
                )
    m.evidence["match_rule"] = why
    if sel.empty:
        m.status = "no_match"
        m.reason = (
            f"counters cover the job's window, but {why}, and the targets observed then are "
            f"{', '.join(observed[:12]) or 'none'}" + (" ..." if len(observed) > 12 else "")
        )
        return m
    m.samples = _samples(store, sel, model, optimal_bytes, m)
    _verdict(m)
    return m


def _verdict(m: _Match) -> None:
    """``covered`` or ``partial``: the best-observed target's share of the window."""
    w, s = m.window, m.samples
    if s is None or s.empty:
        m.status, m.reason = "no_match", "no sample of the matched targets holds bytes"
        return
    t1 = max(w.end, w.start + pd.Timedelta(microseconds=1))
    ov = pd.Series(_overlap_s(s["start"], s["ts"], w.start, t1), index=s.index)
    best = float(ov.groupby([s["source_id"], s["target"]]).sum().max())
    cov = best / w.seconds if w.seconds > 0 else (1.0 if best >= 0 and (ov > 0).any() else 0.0)
    n = int((ov.groupby([s["source_id"], s["target"]]).sum() > 0).sum())
    if n == 0:
        m.status = "no_match"
        m.reason = "no sample of the matched targets overlaps the job's window"
    elif cov >= 1 - 1e-6:
        m.status = "covered"
        m.reason = f"counters of {n} target(s) cover the job's whole window"
    else:
        m.status = "partial"
        m.reason = (
            f"counters cover at most {100 * cov:.0f}% of the job's window "
            f"({_range_text(w.start, w.end)})"
        )


def _ids(ids: list[int]) -> str:
    if len(ids) > 8:
        return f"{', '.join(map(str, ids[:8]))} ... ({len(ids)})"
    return ", ".join(map(str, ids))


def _samples(store, sel: pd.DataFrame, model, optimal_bytes, m: _Match) -> pd.DataFrame:
    """Every sample of the selected (source, target) pairs: counters, else brw_stats bytes."""
    from iochar.analyze import fsu

    srcs = sorted({int(s) for s in sel["source_id"]})
    names = sorted(set(sel["target"]))
    c = query(store, _SAMPLES_SQL, params={"sources": srcs, "targets": names}).df()
    c = c.merge(sel[["source_id", "target"]], on=["source_id", "target"])
    c["basis"] = "counters"
    m.sql.append(_SAMPLES_SQL)
    parts = [c]
    fs = None
    if query(
        store,
        "SELECT count(*) FROM size_hist WHERE section = $s AND list_contains($t, target)",
        params={"s": fsu.DISK_IO_SIZE, "t": names},
    ).fetchall()[0][0]:
        model = model if model is not None else fsu.table_i_model()
        fs = fsu.fsu_series(store, model, targets=names, optimal_bytes=optimal_bytes)
        m.sql.append(fs.sql)
        m.evidence["fsu_model"] = fs.evidence.get("model")
        m.evidence["optimal_bytes"] = fs.evidence.get("optimal_bytes")
        have = set(c["target"])
        h = fs[~fs["target"].isin(have)]
        hs = sel[~sel["target"].isin(have)]
        if len(h) and len(hs):
            h = h.assign(
                start=pd.to_datetime(h["ts"]) - pd.to_timedelta(h["interval_s"], unit="s"),
                busy_s=np.nan,
                ok=h["reason"].astype(str) == "",
                basis="brw_stats",
            )
            # the brw_stats input of each target
            src = query(
                store,
                "SELECT DISTINCT coalesce(source_id, -1) AS source_id, target, ts FROM size_hist "
                "WHERE section = $s "
                "AND list_contains($t, target)",
                params={"s": fsu.DISK_IO_SIZE, "t": sorted(set(hs["target"]))},
            ).df()
            h = h.merge(src, on=["target", "ts"])
            h = h.merge(hs[["source_id", "target"]], on=["source_id", "target"])
            parts.append(
                h[
                    [
                        "source_id",
                        "target",
                        "ts",
                        "start",
                        "interval_s",
                        "read_bytes",
                        "write_bytes",
                        "busy_s",
                        "ok",
                        "basis",
                    ]
                ]  # fmt: skip
            )
    out = pd.concat([p for p in parts if len(p)], ignore_index=True) if parts else c
    for col in ("ts", "start"):
        out[col] = pd.to_datetime(out[col])
    out["fsu_pct"] = np.nan
    out["suboptimal_ios"] = np.nan
    out["ios"] = np.nan
    if fs is not None and len(fs):
        f = fs[["target", "ts", "interval_s", "fsu_pct", "suboptimal_ios", "read_ios",
                "write_ios"]].copy()  # fmt: skip
        f["ts"] = pd.to_datetime(f["ts"])
        m.evidence["_fsu"] = f
    return out.sort_values(["source_id", "target", "ts"], kind="stable").reset_index(drop=True)


def _overlap_s(start, end, t0, t1) -> np.ndarray:
    lo = np.maximum(pd.to_datetime(start).to_numpy(), np.datetime64(t0))
    hi = np.minimum(pd.to_datetime(end).to_numpy(), np.datetime64(t1))
    return np.clip((hi - lo) / np.timedelta64(1, "s"), 0.0, None)


def _job_bytes_in(p: pd.DataFrame, w: _Window, start, end) -> np.ndarray:
    """The job's bytes of pieces ``p`` inside each [start, end) (absolute times)."""
    if p.empty:
        return np.zeros(len(start))
    lo = (pd.to_datetime(start) - w.start).dt.total_seconds().to_numpy(np.float64)
    hi = (pd.to_datetime(end) - w.start).dt.total_seconds().to_numpy(np.float64)
    a, b, nb = p["a"].to_numpy(), p["b"].to_numpy(), p["bytes"].to_numpy()
    # closed at the job's end: a piece at exactly the last instant still counts
    return _cumulative(a, b, nb, np.nextafter(hi, np.inf)) - _cumulative(a, b, nb, lo)


# --------------------------------------------------------------------------- public

_COLUMNS = [
    "source_id", "kind", "input", "target", "basis", "match", "samples", "covered_s",
    "coverage", "read_bytes", "write_bytes", "bytes", "rate_bps", "max_bps", "peak_bps",
    "peak_ts", "peak_basis", "peak_share", "max_share", "busy_share", "util_share",
    "fsu_pct", "fsu_busy_share", "suboptimal_share", "job_bytes", "job_share", "flagged",
]  # fmt: skip


def _check_share(value, name: str, caller: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ParameterError(name, caller, "a fraction in (0, 1]", value)
    return float(value)


def job_context(
    store,
    job_id: int,
    *,
    busy_fraction: float = 0.33,
    peak_bps: float | Mapping[str, float] | None = None,
    devices: str | None = None,
    model=None,
    optimal_bytes: int | None = None,
) -> Table:
    """The system's load while one job ran, per storage target (see the module rules).

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int
        The job.
    busy_fraction : float, default 0.33
        A sample at or above this share of the peak is busy (Carns et al. 2011,
        section 4: 33% of peak).
    peak_bps : float or mapping of target to float, optional
        A rated peak [bytes/s] to measure against instead of the observed one.
    devices : str, optional
        Which block devices count (:func:`iochar.analyze.blockdev.check_devices`);
        default whole disks and non-block targets.
    model : iochar.analyze.fsu.CostModel, optional
        The FSU cost model; default Uselton & Wright's Table I.
    optimal_bytes : int, optional
        Disk I/Os at least this large are optimal [bytes]
        (:func:`iochar.analyze.fsu.fsu_series`'s default when None).

    Returns
    -------
    iochar.result.Table
        One row per matched (input, target) observed during the window:
        ``source_id``, ``kind``, ``input`` (file name), ``target``, ``basis``
        (``counters`` or ``brw_stats``: bytes from the disk I/O size histogram),
        ``match`` (ost / mount / time), ``samples`` (overlapping the window),
        ``covered_s`` [s] and ``coverage`` (share of the window observed),
        ``read_bytes``, ``write_bytes``, ``bytes`` (in the window [bytes]),
        ``rate_bps`` (bytes / covered_s), ``max_bps`` (highest sample in the window),
        ``peak_bps``, ``peak_ts`` and ``peak_basis`` (which peak), ``peak_share`` and
        ``max_share`` (of the peak), ``busy_share``, ``util_share``, ``fsu_pct``,
        ``fsu_busy_share``, ``suboptimal_share``, ``job_bytes`` [bytes],
        ``job_share`` and ``flagged`` (samples in the window whose quality is not ok).
        Empty when nothing matched; ``evidence`` then says why: ``status`` (one of
        :data:`STATUSES`), ``reason`` (a sentence), ``window_start``, ``window_end``,
        ``window_s``, ``counter_ranges`` (each input's record: table, source_id, kind,
        input, record_start, record_end), ``match_rule``, ``job_osts``, ``job_bytes``
        (all of the job's bytes), ``job_bytes_by_ost``, ``job_basis`` (ops or
        file_stats), ``system_bytes``, ``job_share`` (the job's placed bytes over the
        bytes of the targets they were placed on), ``other_jobs`` and
        ``other_jobs_bytes`` (:func:`concurrent_jobs`).

    Raises
    ------
    ParameterError
        No such job, or a parameter out of range.
    """
    caller = "job_context"
    busy_fraction = _check_share(busy_fraction, "busy_fraction", caller)
    m = _match(store, job_id, caller, devices=devices, model=model, optimal_bytes=optimal_bytes)
    w = m.window
    pieces = m.pieces.frame
    ev: dict[str, Any] = {
        "job_id": w.job_id,
        "app": w.app,
        "status": m.status,
        "window_start": w.start,
        "window_end": w.end,
        "window_s": w.seconds,
        "counter_ranges": _ranges_list(m.ranges),
        "match": m.match,
        "match_rule": m.evidence.get("match_rule"),
        "job_osts": m.osts,
        "job_bytes": float(pieces["bytes"].sum()) if len(pieces) else 0.0,
        "job_read_bytes": float(pieces.loc[pieces["op"] == "read", "bytes"].sum()),
        "job_write_bytes": float(pieces.loc[pieces["op"] == "write", "bytes"].sum()),
        "job_bytes_by_ost": (
            {
                int(k): float(v)
                for k, v in pieces[pieces["ost"] >= 0].groupby("ost")["bytes"].sum().items()
            }
            if len(pieces)
            else {}  # fmt: skip
        ),
        "job_basis": m.pieces.basis.get(w.job_id, "none"),
        "busy_fraction": busy_fraction,
        "fsu_busy_pct": FSU_BUSY_PCT,
    }
    params = {"job_id": w.job_id, "busy_fraction": busy_fraction, "peak_bps": peak_bps,
              "devices": devices, "optimal_bytes": optimal_bytes}  # fmt: skip
    if m.status not in ("covered", "partial"):
        ev.update(status=m.status, reason=m.reason, system_bytes=math.nan, job_share=math.nan)
        _add_others(store, ev, w, math.nan)
        return Table(pd.DataFrame(columns=_COLUMNS), evidence=ev, params=params,
                     sql=join_sql(*m.sql))  # fmt: skip
    rows = _rows(store, m, busy_fraction, peak_bps)
    placed = rows["job_bytes"].notna()
    sysb = float(rows["bytes"].sum())
    jb = float(rows.loc[placed, "job_bytes"].sum())
    tb = float(rows.loc[placed, "bytes"].sum())
    ev.update(
        status=m.status,
        reason=m.reason,
        system_bytes=sysb,
        job_bytes_placed=jb if placed.any() else math.nan,
        job_share=jb / tb if placed.any() and tb > 0 else math.nan,
        fsu_model=m.evidence.get("fsu_model"),
        optimal_bytes=m.evidence.get("optimal_bytes"),
    )
    _add_others(store, ev, w, sysb)
    return Table(rows[_COLUMNS], evidence=ev, params=params, sql=join_sql(*m.sql))


def _ranges_list(r: pd.DataFrame | None) -> list[dict[str, Any]]:
    if r is None or r.empty:
        return []
    out = []
    for x in r.itertuples(index=False):
        out.append(
            {
                "table": x.table,
                "source_id": int(x.source_id) if pd.notna(x.source_id) else None,
                "kind": x.kind,
                "input": str(x.uri).rsplit("/", 1)[-1] if isinstance(x.uri, str) else None,
                "record_start": x.record_start,
                "record_end": x.record_end,
            }
        )
    return out


def _add_others(store, ev: dict, w: _Window, system_bytes: float) -> None:
    if w.start is None:
        ev.update(other_jobs=0, other_jobs_bytes=math.nan)
        return
    o = concurrent_jobs(store, w.job_id, system_bytes=system_bytes)
    ev.update(other_jobs=len(o), other_jobs_bytes=float(o["bytes_in_window"].sum()))


def _rows(store, m: _Match, busy_fraction: float, peak_bps) -> pd.DataFrame:
    w = m.window
    s = m.samples
    t0, t1 = w.start, max(w.end, w.start + pd.Timedelta(microseconds=1))
    s = s.assign(bytes=s["read_bytes"] + s["write_bytes"])
    s["bps"] = s["bytes"] / s["interval_s"]
    srcmeta = query(store, "SELECT source_id, kind, uri FROM sources").df().set_index("source_id")
    fsu_all = m.evidence.get("_fsu")
    pieces = m.pieces.frame
    targets_per_input = s.groupby("source_id")["target"].nunique()
    rows = []
    for (sid, target), g in s.groupby(["source_id", "target"], sort=True):
        okg = g[g["ok"].astype(bool)]
        given = peak_bps.get(target) if isinstance(peak_bps, Mapping) else peak_bps
        if given is not None:
            peak, pts = float(given), pd.NaT
            basis = f"given: {float(given):.6g} bytes/s"
        else:
            ref = okg if len(okg) else g
            i = int(ref["bps"].to_numpy().argmax())
            peak, pts = float(ref["bps"].iloc[i]), ref["ts"].iloc[i]
            basis = (
                f"observed: the highest read + write rate of one sample over the target's "
                f"whole record in this input ({_range_text(g['start'].min(), g['ts'].max())}, "
                f"{len(ref)} samples with quality ok)"
            )
        ov = _overlap_s(g["start"], g["ts"], t0, t1)
        inside = ov > 0
        if not inside.any():
            continue
        gi = g[inside]
        ovi = ov[inside]
        frac = ovi / gi["interval_s"].to_numpy(np.float64)
        covered = float(ovi.sum())
        rb = float((gi["read_bytes"].to_numpy() * frac).sum())
        wb = float((gi["write_bytes"].to_numpy() * frac).sum())
        nb = rb + wb
        bps = gi["bps"].to_numpy(np.float64)
        busy = float(ovi[bps >= busy_fraction * peak].sum()) / covered if peak > 0 else 0.0
        util = math.nan
        if gi["busy_s"].notna().any():
            util = float((gi["busy_s"].fillna(0).to_numpy() * frac).sum()) / covered
        fsu_pct = fsu_busy = subopt = math.nan
        if fsu_all is not None:
            f = fsu_all[(fsu_all["target"] == target) & fsu_all["fsu_pct"].notna()]
            if len(f):
                fo = _overlap_s(
                    f["ts"] - pd.to_timedelta(f["interval_s"], unit="s"), f["ts"], t0, t1
                )
                if fo.sum() > 0:
                    fsu_pct = float((f["fsu_pct"].to_numpy() * fo).sum() / fo.sum())
                    fsu_busy = float(fo[f["fsu_pct"].to_numpy() >= FSU_BUSY_PCT].sum() / fo.sum())
                    share = fo / f["interval_s"].to_numpy(np.float64)
                    ios = float(((f["read_ios"] + f["write_ios"]).to_numpy() * share).sum())
                    sub = float((f["suboptimal_ios"].to_numpy() * share).sum())
                    subopt = sub / ios if ios > 0 else math.nan
        job = math.nan
        osti = ost_index(target)
        p = None
        if m.match == "ost" and osti is not None:
            p = pieces[pieces["ost"] == osti]
        elif targets_per_input.get(sid, 0) == 1:
            p = pieces
        if p is not None:
            a, b = gi["start"].clip(lower=t0), gi["ts"].clip(upper=t1)
            job = float(_job_bytes_in(p, w, a, b).sum())
        kind = srcmeta["kind"].get(sid) if sid in srcmeta.index else None
        uri = srcmeta["uri"].get(sid) if sid in srcmeta.index else None
        rows.append(
            {
                "source_id": int(sid),
                "kind": kind,
                "input": str(uri).rsplit("/", 1)[-1] if isinstance(uri, str) else None,
                "target": target,
                "basis": g["basis"].iloc[0],
                "match": m.match,
                "samples": int(inside.sum()),
                "covered_s": covered,
                # samples end and start on the same microsecond: at most the window
                "coverage": min(1.0, covered / w.seconds) if w.seconds > 0 else 1.0,
                "read_bytes": rb,
                "write_bytes": wb,
                "bytes": nb,
                "rate_bps": nb / covered if covered > 0 else math.nan,
                "max_bps": float(bps.max()),
                "peak_bps": peak,
                "peak_ts": pts,
                "peak_basis": basis,
                "peak_share": (nb / covered) / peak if peak > 0 and covered > 0 else math.nan,
                "max_share": float(bps.max()) / peak if peak > 0 else math.nan,
                "busy_share": busy,
                "util_share": util,
                "fsu_pct": fsu_pct,
                "fsu_busy_share": fsu_busy,
                "suboptimal_share": subopt,
                "job_bytes": job,
                "job_share": job / nb if nb > 0 and job == job else math.nan,
                "flagged": int((~gi["ok"].astype(bool)).sum()),
            }
        )
    out = pd.DataFrame(rows, columns=_COLUMNS)
    out["peak_ts"] = pd.to_datetime(out["peak_ts"])
    return out


_OTHERS_SQL = """
SELECT job_id, app, "user", start_ts,
       coalesce(end_ts, start_ts + to_microseconds(CAST(coalesce(runtime_s, 0) * 1e6 AS BIGINT)))
         AS end_ts,
       runtime_s
FROM jobs
WHERE job_id <> $job AND start_ts IS NOT NULL
  AND start_ts < $t1
  AND coalesce(end_ts, start_ts + to_microseconds(CAST(coalesce(runtime_s, 0) * 1e6 AS BIGINT)))
      > $t0
ORDER BY start_ts, job_id
"""


def concurrent_jobs(store, job_id: int, *, system_bytes: float | None = None) -> Table:
    """The other jobs that ran while this one did, with their bytes during its window.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int
        The job.
    system_bytes : float, optional
        The matched targets' bytes in the window (``evidence["system_bytes"]`` of
        :func:`job_context`) [bytes], for ``share_of_system``.

    Returns
    -------
    iochar.result.Table
        One row per other job whose run overlaps the window: ``job_id``, ``app``,
        ``user``, ``start_ts``, ``end_ts``, ``overlap_s`` [s], ``bytes`` (all its reads
        and writes [bytes]), ``bytes_in_window`` (spread as the module rules say
        [bytes]), ``basis`` (ops or file_stats) and ``share_of_system``
        (``bytes_in_window / system_bytes``: an upper bound of its share, since its
        bytes may have gone to other targets). Empty for a job without a date
        (``evidence["reason"]``).
    """
    w = _window(store, job_id, "concurrent_jobs")
    cols = ["job_id", "app", "user", "start_ts", "end_ts", "overlap_s", "bytes",
            "bytes_in_window", "basis", "share_of_system"]  # fmt: skip
    params = {"job_id": w.job_id, "system_bytes": system_bytes}
    if w.start is None:
        return Table(pd.DataFrame(columns=cols), params=params,
                     evidence={"reason": "the job has no start date (jobs.start_ts)"})  # fmt: skip
    t0, t1 = w.start, max(w.end, w.start + pd.Timedelta(microseconds=1))
    o = query(store, _OTHERS_SQL, params={"job": w.job_id, "t0": t0, "t1": t1}).df()
    if o.empty:
        return Table(pd.DataFrame(columns=cols), params=params, sql=_OTHERS_SQL,
                     evidence={"window_start": t0, "window_end": w.end, "jobs": 0})  # fmt: skip
    o["start_ts"] = pd.to_datetime(o["start_ts"])
    o["end_ts"] = pd.to_datetime(o["end_ts"])
    span = (o["end_ts"] - o["start_ts"]).dt.total_seconds()
    p = _pieces(store, pd.DataFrame({"job_id": o["job_id"], "runtime_s": span}), layouts=False)
    total, inwin = [], []
    for jid, st in zip(o["job_id"], o["start_ts"], strict=True):
        q = p.frame[p.frame["job_id"] == jid]
        total.append(float(q["bytes"].sum()))
        lo = (t0 - st).total_seconds()
        hi = (w.end - st).total_seconds()
        a, b, nb = q["a"].to_numpy(), q["b"].to_numpy(), q["bytes"].to_numpy()
        got = _cumulative(a, b, nb, np.array([np.nextafter(hi, np.inf)]))
        got -= _cumulative(a, b, nb, np.array([lo]))
        # a difference of two cumulative sums: rounding must not take it out of [0, total]
        inwin.append(min(max(float(got[0]), 0.0), total[-1]))
    o["overlap_s"] = _overlap_s(o["start_ts"], o["end_ts"], t0, t1)
    o["bytes"] = total
    o["bytes_in_window"] = inwin
    o["basis"] = [p.basis.get(int(j), "none") for j in o["job_id"]]
    sb = system_bytes if system_bytes is not None else math.nan
    o["share_of_system"] = o["bytes_in_window"] / sb if sb and sb == sb and sb > 0 else math.nan
    o = o.sort_values(["bytes_in_window", "job_id"], ascending=[False, True], kind="stable")
    return Table(
        o[cols].reset_index(drop=True),
        params=params,
        sql=join_sql(_OTHERS_SQL, p.sql),
        evidence={"window_start": t0, "window_end": w.end, "jobs": int(len(o))},
    )


def load_series(
    store,
    job_id: int,
    *,
    margin_s: float | None = None,
    devices: str | None = None,
) -> Table:
    """The matched targets' load per counter sample around the job, and the job's bytes.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int
        The job.
    margin_s : float, optional
        Also show this long before and after the job [s]; default the job's run time
        (at least 5 samples' worth).
    devices : str, optional
        As for :func:`job_context`.

    Returns
    -------
    iochar.result.Table
        One row per (input, sample end) within the margin: ``source_id``, ``input``,
        ``start``, ``ts`` (UTC), ``interval_s`` [s], ``targets`` (matched targets
        summed), ``bytes`` and ``system_bps`` (their read + write [bytes], [bytes/s]),
        ``job_bytes`` and ``job_bps`` (the job's bytes placed on them in the same sample,
        NaN where they cannot be placed), ``job_all_bytes`` and ``job_all_bps`` (all of
        the job's bytes in the sample's time, wherever they went). ``evidence``:
        ``status`` and ``reason`` (as in :func:`job_context`), ``window_start``,
        ``window_end``, ``match``.
    """
    caller = "load_series"
    m = _match(store, job_id, caller, devices=devices, model=None, optimal_bytes=None)
    w = m.window
    cols = ["source_id", "input", "start", "ts", "interval_s", "targets", "bytes",
            "system_bps", "job_bytes", "job_bps", "job_all_bytes", "job_all_bps"]  # fmt: skip
    ev = {"status": m.status, "reason": m.reason, "window_start": w.start,
          "window_end": w.end, "match": m.match, "app": w.app, "job_id": w.job_id}  # fmt: skip
    if m.status not in ("covered", "partial"):
        return Table(pd.DataFrame(columns=cols), evidence=ev, sql=join_sql(*m.sql))
    s = m.samples
    step = float(s["interval_s"].median())
    margin = margin_s if margin_s is not None else max(w.seconds, 5 * step)
    lo = w.start - pd.to_timedelta(margin, unit="s")
    hi = w.end + pd.to_timedelta(margin, unit="s")
    s = s[(s["ts"] > lo) & (s["start"] < hi)].copy()
    s["bytes"] = s["read_bytes"] + s["write_bytes"]
    pieces = m.pieces.frame
    per_input = s.groupby("source_id")["target"].nunique()
    s["job_bytes"] = np.nan
    for (sid, target), g in s.groupby(["source_id", "target"], sort=False):
        osti = ost_index(target)
        if m.match == "ost" and osti is not None:
            p = pieces[pieces["ost"] == osti]
        elif per_input.get(sid, 0) == 1:
            p = pieces
        else:
            continue
        s.loc[g.index, "job_bytes"] = _job_bytes_in(p, w, g["start"], g["ts"])
    agg = (
        s.groupby(["source_id", "ts"], sort=True)
        .agg(
            start=("start", "min"),
            interval_s=("interval_s", "max"),
            targets=("target", "nunique"),
            bytes=("bytes", "sum"),
            job_bytes=("job_bytes", lambda v: v.sum() if v.notna().any() else np.nan),
        )
        .reset_index()
    )
    agg["system_bps"] = agg["bytes"] / agg["interval_s"]
    agg["job_bps"] = agg["job_bytes"] / agg["interval_s"]
    agg["job_all_bytes"] = _job_bytes_in(pieces, w, agg["start"], agg["ts"])
    agg["job_all_bps"] = agg["job_all_bytes"] / agg["interval_s"]
    names = query(store, "SELECT source_id, uri FROM sources").df().set_index("source_id")["uri"]
    agg["input"] = [str(names.get(i, "")).rsplit("/", 1)[-1] for i in agg["source_id"]]
    return Table(agg[cols], evidence=ev, params={"job_id": w.job_id, "margin_s": margin},
                 sql=join_sql(*m.sql))  # fmt: skip


def summary_facts(ctx: pd.DataFrame) -> dict[str, Any]:
    """The few numbers a one-page summary shows about a job's system, from :func:`job_context`.

    Parameters
    ----------
    ctx : pandas.DataFrame
        The result of :func:`job_context` (its evidence is read).

    Returns
    -------
    dict
        ``status``, ``reason``, ``match``, ``targets`` (matched targets observed),
        ``coverage`` (the best-observed target's share of the window), ``system_bytes``
        [bytes], ``busiest_target``, ``rate_bps`` [bytes/s], ``peak_bps`` [bytes/s],
        ``peak_share``, ``busy_share``, ``fsu_pct`` [%] (of the busiest target; NaN when
        unknown), ``job_bytes`` [bytes], ``job_share``, ``other_jobs`` and
        ``other_jobs_bytes`` [bytes]. Plain Python values (None for missing).

    Examples
    --------
    >>> from iochar.result import Table
    >>> summary_facts(Table({}, evidence={"status": "no_counters", "reason": "no counters"}))[
    ...     "status"]
    'no_counters'
    """
    from iochar.result import evidence_of

    ev = dict(evidence_of(ctx))

    def val(x: Any) -> Any:
        if x is None:
            return None
        if isinstance(x, pd.Timestamp):
            return x
        try:
            f = float(x)
        except (TypeError, ValueError):
            return x
        return f if math.isfinite(f) else None

    out: dict[str, Any] = {
        "status": ev.get("status"),
        "reason": ev.get("reason"),
        "match": ev.get("match"),
        "targets": int(len(ctx)),
        "coverage": None,
        "system_bytes": val(ev.get("system_bytes")),
        "busiest_target": None,
        "rate_bps": None,
        "peak_bps": None,
        "peak_share": None,
        "busy_share": None,
        "fsu_pct": None,
        "job_bytes": val(ev.get("job_bytes")),
        "job_share": val(ev.get("job_share")),
        "other_jobs": ev.get("other_jobs"),
        "other_jobs_bytes": val(ev.get("other_jobs_bytes")),
    }
    if len(ctx) and "peak_share" in ctx.columns:
        top = ctx.sort_values(["peak_share", "bytes"], ascending=False, na_position="last")
        t = top.iloc[0]
        out.update(
            coverage=val(ctx["coverage"].max()),
            busiest_target=t["target"],
            rate_bps=val(t["rate_bps"]),
            peak_bps=val(t["peak_bps"]),
            peak_share=val(t["peak_share"]),
            busy_share=val(t["busy_share"]),
            fsu_pct=val(t["fsu_pct"]),
        )
    return out


_COVERED_SQL = """
WITH w AS (
  SELECT job_id, start_ts AS lo,
         greatest(coalesce(end_ts, start_ts),
                  start_ts + to_microseconds(CAST(coalesce(runtime_s, 0) * 1e6 AS BIGINT))) AS hi
  FROM jobs WHERE start_ts IS NOT NULL),
c AS (
  SELECT min(ts - to_microseconds(CAST(coalesce(interval_s, 0) * 1e6 AS BIGINT))) AS lo,
         max(ts) AS hi
  FROM counters GROUP BY source_id),
o AS (
  SELECT w.job_id, w.lo, w.hi, max(least(w.hi, c.hi) - greatest(w.lo, c.lo)) AS overlap
  FROM w JOIN c ON c.lo < w.hi AND c.hi > w.lo GROUP BY ALL)
SELECT o.job_id, o.overlap >= (o.hi - o.lo) AS whole,
       epoch(o.overlap) / nullif(epoch(o.hi - o.lo), 0) AS covered_share,
       coalesce((SELECT sum(value) FROM counters k
                 WHERE k.metric IN ('read_bytes', 'write_bytes')
                   AND k.ts > o.lo AND k.ts <= o.hi), 0) AS system_bytes
FROM o
ORDER BY whole DESC, covered_share DESC, system_bytes DESC, o.job_id
LIMIT 1
"""


def pick_job(store, job_id: int | None = None) -> int | None:
    """The job whose system a notebook shows: the reader's, else one the counters cover.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        A job chosen by the reader: returned as it is.

    Returns
    -------
    int or None
        ``job_id`` when given; else, among the dated jobs some input's counters
        overlap, one whose whole window is covered, then the largest covered share
        of its window (ties: the most bytes the counters saw during it -- the system
        busiest around the job -- then the lowest id); else the first dated
        job (whose context then says why nothing covers it); else the first job; None
        for a database without jobs.
    """
    if job_id is not None:
        return check_int(job_id, "job_id", "pick_job", "an int or None")
    for sql in (
        _COVERED_SQL,
        "SELECT job_id FROM jobs WHERE start_ts IS NOT NULL ORDER BY job_id LIMIT 1",
        "SELECT job_id FROM jobs ORDER BY job_id LIMIT 1",
    ):
        got = query(store, sql).fetchall()
        if got:
            return int(got[0][0])
    return None
