"""Per (input, target) load of devices and servers from the ``counters`` table.

How busy each device or server was, from its per-interval ``read_bytes`` and
``write_bytes`` counters (iostat, ``/proc/diskstats``, Lustre LMT): peak, share of
time below a fraction of peak, idle time, gaps and targets loaded twice; and which
input the time-series charts of notebook 02-system-load look at.

Carns et al. (2011, section 4) measured the burstiness of a whole file system from
one-minute iostat samples of the combined read and write throughput: "For 98% of
the time, the I/O system was utilized at less than 33% of peak I/O bandwidth"
(the ``share_below`` of :func:`counter_load`, default ``share_fraction=0.33``), and
their Table III counts idle periods -- consecutive intervals below 5% of peak -- by
duration bucket (the ``idle_*`` columns, default ``idle_fraction=0.05``; the
bucket table itself is :func:`iochar.analyze.bursts.idle_table`, bursts are
:func:`iochar.analyze.bursts.segment`). Here each target is measured against its
own observed peak.

Block devices nest: ``/proc/diskstats`` and iostat list whole disks, their
partitions and virtual devices stacked on them (``dm-N``, ``mdN``, ``loopN``...),
so one write shows on ``dm-0``, ``sda2`` and ``sda``. Every function here takes a
``devices`` selection, judged by :mod:`iochar.analyze.blockdev` (the kernel's
naming, matching sysfs): by default (``devices=None`` and no ``targets``) only
whole disks and targets that are no Linux block device (Lustre OSTs) are counted,
so a total counts each byte once and a partition, a device-mapper volume or an
idle loop device never stands for the machine; ``devices="all"``, ``"partitions"``
or ``"virtual"`` ask for the others, and naming ``targets`` takes them whatever
their kind.

Counters in one database often come from several inputs -- different machines,
days and sampling intervals -- so nothing here adds series of different inputs:

- :func:`inputs` -- the inputs holding counters or ``brw_stats`` histograms;
- :func:`device_map` -- what each target of each input is: disk, partition (of
  which disk), virtual or other;
- :func:`counter_load` -- one row per (input, target): peak, mean, share below,
  idle share and periods, gaps, flagged samples;
- :func:`duplicates` -- the same target with the same record in several inputs;
- :func:`pick_source` -- the input the time-series charts are about;
- :func:`rates` -- read and write throughput of that input's targets;
- :func:`burst_view` -- that input's summed throughput with its bursts, share below
  and idle periods (a :class:`BurstView`), or None when nothing moved data;
- :func:`main_target` -- the target of an FSU series with the most used intervals.

Reference: P. Carns, K. Harms, W. Allcock, C. Bacon, S. Lang, R. Latham and
R. Ross, "Understanding and improving computational science storage access
through continuous characterization", ACM Trans. Storage 7(3), Article 8, 2011,
section 4, Fig. 7 and Table III. doi:10.1145/2027066.2027068

Examples
--------
>>> import pandas as pd
>>> from iochar.analyze import devices
>>> load = pd.DataFrame({"source_id": [1, 2, 2, 3], "target": ["sda", "sda", "sdb", "sda"],
...                      "samples": [60, 60, 60, 60], "observed_s": [600.0, 600.0, 3600.0, 600.0],
...                      "mib": [10.0, 10.05, 0.0, 10.0], "peak_mib_s": [5.0, 5.0, 0.0, 5.0]})
>>> devices.pick_source(load)  # the longest record with traffic; ties: more targets, lower id
1
>>> devices.duplicates(load)[["target", "source_ids"]]
  target source_ids
0    sda  (1, 2, 3)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import numpy as np
import pandas as pd

from iochar._validation import parse_time
from iochar.analyze import blockdev, bursts
from iochar.analyze.throughput import throughput
from iochar.errors import ParameterError, ReportError
from iochar.result import Result, Table

__all__ = [
    "BYTE_METRICS",
    "inputs",
    "device_map",
    "counter_load",
    "duplicates",
    "pick_source",
    "rates",
    "BurstView",
    "burst_view",
    "main_target",
]

#: The counters whose sum is a device's or server's throughput (Carns et al. 2011).
BYTE_METRICS = ("read_bytes", "write_bytes")
_MIB = float(1 << 20)

_INPUTS_SQL = """
SELECT 'counters' AS "table", c.source_id, s.kind, s.uri,
       count(DISTINCT c.target) AS targets,
       count(DISTINCT c.target) FILTER (WHERE c.metric IN ('read_bytes', 'write_bytes'))
         AS usable_targets,
       count(*) AS rows, min(c.ts) AS first_ts, max(c.ts) AS last_ts,
       median(c.interval_s) AS interval_s
FROM counters c LEFT JOIN sources s USING (source_id)
WHERE ($targets IS NULL OR list_contains($targets, c.target))
  AND ($keys IS NULL OR list_contains($keys, c.source_id::VARCHAR || '/' || c.target))
  AND (CAST($start AS TIMESTAMP) IS NULL OR c.ts > CAST($start AS TIMESTAMP))
  AND (CAST($end AS TIMESTAMP) IS NULL OR c.ts <= CAST($end AS TIMESTAMP))
GROUP BY ALL
UNION ALL
SELECT 'size_hist', h.source_id, s.kind, s.uri,
       count(DISTINCT h.target),
       count(DISTINCT h.target) FILTER (WHERE h.section = 'disk I/O size'),
       count(*), min(h.ts), max(h.ts), median(h.interval_s)
FROM size_hist h LEFT JOIN sources s USING (source_id)
WHERE ($targets IS NULL OR list_contains($targets, h.target))
  AND ($keys IS NULL OR list_contains($keys, h.source_id::VARCHAR || '/' || h.target))
  AND (CAST($start AS TIMESTAMP) IS NULL OR h.ts > CAST($start AS TIMESTAMP))
  AND (CAST($end AS TIMESTAMP) IS NULL OR h.ts <= CAST($end AS TIMESTAMP))
GROUP BY ALL
ORDER BY 1, 2
"""

# Every (table, input, target) of the selection, before the device selection.
_TARGETS_SQL = """
SELECT 'counters' AS "table", source_id, target FROM counters c
WHERE ($targets IS NULL OR list_contains($targets, c.target))
  AND (CAST($start AS TIMESTAMP) IS NULL OR c.ts > CAST($start AS TIMESTAMP))
  AND (CAST($end AS TIMESTAMP) IS NULL OR c.ts <= CAST($end AS TIMESTAMP))
GROUP BY ALL
UNION ALL
SELECT 'size_hist', source_id, target FROM size_hist h
WHERE ($targets IS NULL OR list_contains($targets, h.target))
  AND (CAST($start AS TIMESTAMP) IS NULL OR h.ts > CAST($start AS TIMESTAMP))
  AND (CAST($end AS TIMESTAMP) IS NULL OR h.ts <= CAST($end AS TIMESTAMP))
GROUP BY ALL
ORDER BY 1, 2, 3
"""

# The targets of one input's counters (all of them: a partition is judged next to its disk).
_SOURCE_TARGETS_SQL = "SELECT DISTINCT target FROM counters WHERE source_id = $s ORDER BY 1"


# --------------------------------------------------------------------------- helpers


def _targets(targets: Sequence[str] | str | None) -> list[str] | None:
    if targets is None:
        return None
    return [targets] if isinstance(targets, str) else [str(t) for t in targets]


def _window(df: pd.DataFrame, start: Any, end: Any, caller: str) -> pd.DataFrame:
    """Rows whose interval end ``ts`` lies in ``(start, end]``."""
    t0, t1 = parse_time(start, "start", caller), parse_time(end, "end", caller)
    keep = np.ones(len(df), dtype=bool)
    if t0 is not None:
        keep &= (df["ts"] > pd.Timestamp(t0)).to_numpy(bool)
    if t1 is not None:
        keep &= (df["ts"] <= pd.Timestamp(t1)).to_numpy(bool)
    return df if keep.all() else df.loc[keep].reset_index(drop=True)


def _keep(store, source_id: int, tg: list[str] | None, kinds: tuple[str, ...]) -> list[str] | None:
    """The targets of one input a selection keeps; None when it keeps them all."""
    if kinds == blockdev.KINDS:
        return tg
    names = [r[0] for r in store.sql(_SOURCE_TARGETS_SQL, params={"s": int(source_id)}).fetchall()]
    t = blockdev.device_table(names)
    keep = t.loc[t["device"].isin(kinds), "target"].tolist()
    return keep if tg is None else [n for n in keep if n in set(tg)]


# --------------------------------------------------------------------------- inputs


def inputs(
    store,
    *,
    targets: Sequence[str] | str | None = None,
    start: Any = None,
    end: Any = None,
    devices: str | Sequence[str] | None = None,
) -> pd.DataFrame:
    """The inputs that hold device/server counters or brw_stats histograms, one row each.

    Parameters
    ----------
    store : iochar.Store
        The database.
    targets : str or sequence of str, optional
        Only rows of these targets; all when None.
    start : str or datetime, optional
        Only intervals ending after this time (ISO 8601; UTC when no zone is given).
    end : str or datetime, optional
        Only intervals ending at or before this time (ISO 8601; UTC when no zone is
        given).
    devices : str or sequence of str, optional
        Which block devices count (:func:`iochar.analyze.blockdev.check_devices`):
        ``"disks"`` (whole disks, and targets that are no Linux block device, such
        as Lustre OSTs), ``"partitions"``, ``"virtual"`` (dm, md, loop, zram...),
        ``"all"``, or kinds from :data:`iochar.analyze.blockdev.KINDS`. None:
        ``"disks"``, or every named target when ``targets`` is given.

    Returns
    -------
    pandas.DataFrame
        ``table`` ("counters" or "size_hist"), ``source_id``, ``kind``, ``input``
        (file name), ``targets`` (of the ``devices`` selection), ``usable_targets``
        (of those, with ``read_bytes`` / ``write_bytes`` counters, or with a "disk
        I/O size" histogram), ``rows``, ``first_ts``, ``last_ts`` (interval ends,
        UTC), ``interval_s`` (median sampling interval [s]) and ``all_targets``
        (every target of the input in the time window, whatever its kind). An input
        none of whose targets the selection keeps has no row.

    Raises
    ------
    TimeParameterError
        ``start`` or ``end`` is not a date and time (a ParameterError, and a
        ReportError as before).
    """
    tg = _targets(targets)
    kinds = blockdev.check_devices(devices, "inputs", targets_named=tg is not None)
    params = {
        "targets": tg,
        "start": parse_time(start, "start", "inputs"),
        "end": parse_time(end, "end", "inputs"),
    }
    every = store.sql(_TARGETS_SQL, params=params).df()
    keys = None
    if kinds != blockdev.KINDS:
        keys = []
        for (table, sid), g in every.groupby(["table", "source_id"], sort=True):
            names = (
                g["target"]
                if table == "size_hist"
                else store.sql(_SOURCE_TARGETS_SQL, params={"s": int(sid)}).df()["target"]
            )
            t = blockdev.device_table(names)
            kept = set(t.loc[t["device"].isin(kinds), "target"]) & set(g["target"])
            keys += [f"{int(sid)}/{n}" for n in sorted(kept)]
    df = store.sql(_INPUTS_SQL, params={**params, "keys": keys}).df()
    df.insert(3, "input", [PurePath(u).name if isinstance(u, str) else "" for u in df["uri"]])
    n_all = every.groupby(["table", "source_id"]).size().rename("all_targets").reset_index()
    df = df.merge(n_all, on=["table", "source_id"], how="left")
    df["all_targets"] = df["all_targets"].fillna(0).astype("int64")
    return df.drop(columns="uri")


def device_map(
    store,
    *,
    source_id: int | None = None,
    targets: Sequence[str] | str | None = None,
) -> pd.DataFrame:
    """What each counters target of each input is: whole disk, partition, virtual, other.

    The names are judged per input by :func:`iochar.analyze.blockdev.device_class`
    (Linux partition naming of ``block/partitions/core.c``; virtual devices as sysfs
    places them under ``/sys/devices/virtual/block``), each next to the other
    names of its input.

    Parameters
    ----------
    store : iochar.Store
        The database.
    source_id : int, optional
        Only this input; all when None.
    targets : str or sequence of str, optional
        Only these targets; all when None.

    Returns
    -------
    pandas.DataFrame
        One row per (input, target) of ``counters``, ordered by ``source_id`` and
        ``target``: ``source_id``, ``target``, ``device`` ("disk", "partition",
        "virtual" or "other"), ``parent`` (the disk of a partition, else None),
        ``virtual`` (the device, or a partition's disk, is virtual) and
        ``in_default`` (counted by the default ``devices="disks"`` selection).
    """
    tg = _targets(targets)
    ids = store.sql(
        "SELECT DISTINCT source_id FROM counters WHERE $s IS NULL OR source_id = $s ORDER BY 1",
        params={"s": None if source_id is None else int(source_id)},
    ).fetchall()
    parts = []
    for (sid,) in ids:
        names = store.sql(_SOURCE_TARGETS_SQL, params={"s": int(sid)}).df()["target"]
        t = blockdev.device_table(names)
        if tg is not None:
            t = t[t["target"].isin(tg)]
        parts.append(t.assign(source_id=int(sid)))
    cols = ["source_id", "target", "device", "parent", "virtual"]
    out = pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)
    out["in_default"] = out["device"].isin(blockdev.SELECTIONS["disks"]).astype(bool)
    return out.reset_index(drop=True)


# --------------------------------------------------------------------------- load


def _target_row(g: pd.DataFrame, share_fraction: float, idle_fraction: float) -> dict:
    """Peak, share below, idle time and gaps of one target's throughput rows."""
    series = bursts.aggregate(g)
    valid = ~np.isnan(series.to_numpy(float))
    ok = ~g["flagged"].fillna(True).to_numpy(bool)
    row: dict[str, Any] = {
        "interval_s": float(series.evidence.get("interval_s", math.nan)),
        "samples": int(len(series)),
        "flagged": int((~valid).sum()),
        "mib": float(g.loc[ok, "amount"].sum()) / _MIB,
        "peak_mib_s": math.nan,
        "mean_mib_s": math.nan,
        "peak_ts": pd.NaT,
        "observed_s": math.nan,
        "gap_s": math.nan,
        "share_below": math.nan,
        "idle_share": math.nan,
        "idle_periods": 0,
        "longest_idle_s": math.nan,
        "note": "",
    }
    if not valid.any():
        row["note"] = "only gaps (every interval flagged)"
        return row
    peak = float(np.nanmax(series.to_numpy(float)))
    row["peak_mib_s"] = peak / _MIB
    row["peak_ts"] = series.idxmax() if peak > 0 else pd.NaT
    try:
        if peak > 0:
            share = bursts.share_below(series, share_fraction)
            idle = bursts.idle_table(series, idle_fraction=idle_fraction)
            row["share_below"] = share.share
        else:
            idle = bursts.idle_table(series, strict=True)
            row["note"] = "no traffic"
    except ParameterError as exc:  # e.g. a single sample without a known interval
        row["note"] = str(exc)
        return row
    a = idle.evidence
    row["observed_s"] = a["observed_s"]
    row["gap_s"] = a["gap_s"]
    row["mean_mib_s"] = row["mib"] / a["observed_s"] if a["observed_s"] > 0 else math.nan
    row["idle_share"] = a["idle_s"] / a["observed_s"] if a["observed_s"] > 0 else math.nan
    row["idle_periods"] = a["periods"]
    row["longest_idle_s"] = a["longest_s"] if a["longest_s"] is not None else 0.0
    return row


_LOAD_COLUMNS = [
    "source_id",
    "kind",
    "input",
    "target",
    "device",
    "parent",
    "interval_s",
    "samples",
    "observed_s",
    "gap_s",
    "flagged",
    "mib",
    "peak_mib_s",
    "peak_ts",
    "mean_mib_s",
    "share_below",
    "idle_share",
    "idle_periods",
    "longest_idle_s",
    "note",
]


def counter_load(
    store,
    *,
    targets: Sequence[str] | str | None = None,
    start: Any = None,
    end: Any = None,
    bin_s: float | None = None,
    share_fraction: float = 0.33,
    idle_fraction: float = 0.05,
    devices: str | Sequence[str] | None = None,
) -> Table:
    """How busy each device or server target was, one row per (input, target).

    Each target's read plus write throughput (``counters`` metrics
    ``read_bytes`` and ``write_bytes``, :func:`iochar.analyze.throughput.throughput`)
    is analysed on its own with :mod:`iochar.analyze.bursts`, relative to its own
    observed peak, as Carns et al. (2011, section 4) did for a whole file system.
    Targets of different inputs are never added: the same device name in two
    inputs is two rows. By default only whole disks (and targets that are no
    Linux block device) have a row, so no partition, device-mapper volume or loop
    device is read as the busiest or idlest target of a machine.

    Parameters
    ----------
    store : iochar.Store
        The database.
    targets : str or sequence of str, optional
        Only these targets; all when None.
    start : str or datetime, optional
        Only intervals ending after this time (ISO 8601, UTC).
    end : str or datetime, optional
        Only intervals ending at or before this time (ISO 8601, UTC).
    bin_s : float, optional
        Re-bin each input's samples to this width [s]; None keeps them.
    share_fraction : float, default 0.33
        Fraction of peak for ``share_below`` [fraction of peak] (Carns: 98% of the
        time below 33%).
    idle_fraction : float, default 0.05
        An interval below this fraction of peak is idle [fraction of peak] (Carns'
        Table III).
    devices : str or sequence of str, optional
        Which block devices count (:func:`iochar.analyze.blockdev.check_devices`):
        ``"disks"`` (whole disks, and targets that are no Linux block device, such
        as Lustre OSTs), ``"partitions"``, ``"virtual"`` (dm, md, loop, zram...),
        ``"all"``, or kinds from :data:`iochar.analyze.blockdev.KINDS`. None:
        ``"disks"``, or every named target when ``targets`` is given.

    Returns
    -------
    iochar.result.Table
        Ordered by ``source_id``, ``target``: ``kind``, ``input`` (file name),
        ``device`` ("disk", "partition", "virtual" or "other") and ``parent`` (a
        partition's disk) (:func:`device_map`),
        ``interval_s`` [s], ``samples``, ``observed_s`` and ``gap_s`` [s],
        ``flagged`` (samples that are gaps: reset, wrap, missing target),
        ``mib`` (data moved [MiB]), ``peak_mib_s``, ``peak_ts``, ``mean_mib_s``
        [MiB/s], ``share_below`` (share of observed time below
        ``share_fraction`` x peak), ``idle_share`` (share of observed time in
        idle periods), ``idle_periods``, ``longest_idle_s`` [s] and ``note``
        ("no traffic": idle means no activity at all). ``params`` holds the
        parameters as used (``devices``: the kinds kept).

    Raises
    ------
    TimeParameterError
        ``start`` or ``end`` is not a date and time (a ParameterError, and a
        ReportError as before).
    """
    tg = _targets(targets)
    kinds = blockdev.check_devices(devices, "counter_load", targets_named=tg is not None)
    src = inputs(store, targets=tg, start=start, end=end, devices=kinds)
    src = src[(src["table"] == "counters") & (src["usable_targets"] > 0)]
    rows = []
    for s in src.itertuples(index=False):
        keep = _keep(store, int(s.source_id), tg, kinds)
        df = throughput(
            store, metrics=BYTE_METRICS, targets=keep, bin_s=bin_s, source_id=int(s.source_id)
        )
        df = _window(df, start, end, "counter_load")
        kind_of = blockdev.device_table(
            store.sql(_SOURCE_TARGETS_SQL, params={"s": int(s.source_id)}).df()["target"]
        ).set_index("target")
        for target, g in df.groupby("target", sort=True):
            row = _target_row(g, share_fraction, idle_fraction)
            row.update(
                source_id=int(s.source_id),
                kind=s.kind,
                input=s.input,
                target=target,
                device=kind_of.at[target, "device"],
                parent=kind_of.at[target, "parent"],
            )
            rows.append(row)
    out = pd.DataFrame(rows, columns=_LOAD_COLUMNS)
    out["peak_ts"] = pd.to_datetime(out["peak_ts"])
    params = dict(
        share_fraction=float(share_fraction),
        idle_fraction=float(idle_fraction),
        bin_s=bin_s,
        start=parse_time(start, "start", "counter_load"),
        end=parse_time(end, "end", "counter_load"),
        targets=tg,
        devices=kinds,
    )
    return Table(out, params=params)


def duplicates(load: pd.DataFrame, *, rtol: float = 0.01) -> pd.DataFrame:
    """Targets loaded more than once: the same target and record in several inputs.

    Two rows of one target in different inputs are the same record when they have
    the same number of samples and their observed time and data moved agree within
    ``rtol``; such a record should be counted once.

    Parameters
    ----------
    load : pandas.DataFrame
        The result of :func:`counter_load` (or some of its rows, e.g. those with
        traffic).
    rtol : float, default 0.01
        Relative tolerance on ``observed_s`` and ``mib`` [fraction].

    Returns
    -------
    pandas.DataFrame
        One row per group of at least two inputs, ordered by ``target`` then
        lowest ``source_id``: ``target``, ``source_ids`` (tuple of int,
        ascending) and the first input's ``samples``, ``observed_s`` [s] and
        ``mib`` [MiB].
    """
    rows = []
    for target, g in load.groupby("target", sort=True):
        if g["source_id"].nunique() < 2:
            continue
        g = g.sort_values("source_id")
        seen: set[int] = set()
        for i, a in g.iterrows():
            if i in seen:
                continue
            same = g[
                (g["samples"] == a["samples"])
                & (np.isclose(g["observed_s"], a["observed_s"], rtol=rtol))
                & (np.isclose(g["mib"], a["mib"], rtol=rtol))
            ]
            seen.update(same.index)
            if len(same) > 1:
                rows.append(
                    {
                        "target": target,
                        "source_ids": tuple(int(v) for v in same["source_id"]),
                        "samples": int(a["samples"]),
                        "observed_s": float(a["observed_s"]),
                        "mib": float(a["mib"]),
                    }
                )
    return pd.DataFrame(rows, columns=["target", "source_ids", "samples", "observed_s", "mib"])


# --------------------------------------------------------------------------- one input


def pick_source(load: pd.DataFrame, source_id: int | None = None) -> int:
    """The input the time-series charts are about.

    Parameters
    ----------
    load : pandas.DataFrame
        The result of :func:`counter_load`.
    source_id : int, optional
        Use this input; it must have a target with traffic in ``load``.

    Returns
    -------
    int
        ``source_id`` when given, else the input with the longest observed
        time of a target with traffic (ties: more targets, then the lower id).

    Raises
    ------
    ReportError
        No input with traffic, or ``source_id`` names none of them.
    """
    busy = load[load["peak_mib_s"] > 0]
    have = sorted({int(s) for s in busy["source_id"]})
    if not have:
        raise ReportError(
            "no device or server moved data in this selection: none of its targets has "
            "read_bytes/write_bytes counters above 0 in this time range, and the throughput "
            "part of this notebook needs some"
        )
    if source_id is not None:
        if source_id not in have:
            raise ReportError(
                f"source_id {source_id!r} has no read/write byte counters with traffic in this "
                f"selection; inputs that do: {', '.join(map(str, have))}"
            )
        return int(source_id)
    g = busy.groupby("source_id").agg(observed=("observed_s", "max"), n=("target", "size"))
    g = g.assign(neg=-g.index.to_numpy()).sort_values(["observed", "n", "neg"], ascending=False)
    return int(g.index[0])


def rates(
    store,
    source_id: int,
    *,
    targets: Sequence[str] | str | None = None,
    start: Any = None,
    end: Any = None,
    bin_s: float | None = None,
    devices: str | Sequence[str] | None = None,
) -> Table:
    """Read and write throughput of one input's targets in a time window.

    Parameters
    ----------
    store : iochar.Store
        The database.
    source_id : int
        The input (``sources.source_id``), e.g. from :func:`pick_source`.
    targets : str or sequence of str, optional
        Only these targets; all when None.
    start : str or datetime, optional
        Only intervals ending after this time (ISO 8601, UTC).
    end : str or datetime, optional
        Only intervals ending at or before this time (ISO 8601, UTC).
    bin_s : float, optional
        Re-bin to this width [s]; None keeps the samples.
    devices : str or sequence of str, optional
        Which block devices count (:func:`iochar.analyze.blockdev.check_devices`):
        ``"disks"`` (whole disks, and targets that are no Linux block device, such
        as Lustre OSTs), ``"partitions"``, ``"virtual"`` (dm, md, loop, zram...),
        ``"all"``, or kinds from :data:`iochar.analyze.blockdev.KINDS`. None:
        ``"disks"``, or every named target when ``targets`` is given.

    Returns
    -------
    iochar.result.Table
        :func:`iochar.analyze.throughput.throughput` rows of ``read_bytes`` and
        ``write_bytes`` of the selected targets; ``params["source_id"]`` names the
        input and ``params["devices"]`` the kinds kept.

    Raises
    ------
    TimeParameterError
        ``start`` or ``end`` is not a date and time (a ParameterError, and a
        ReportError as before).
    """
    tg = _targets(targets)
    kinds = blockdev.check_devices(devices, "rates", targets_named=tg is not None)
    keep = _keep(store, int(source_id), tg, kinds)
    df = throughput(store, metrics=BYTE_METRICS, targets=keep, bin_s=bin_s, source_id=source_id)
    df = _window(df, start, end, "rates")
    params = dict(
        source_id=int(source_id),
        targets=tg,
        start=parse_time(start, "start", "rates"),
        end=parse_time(end, "end", "rates"),
        bin_s=bin_s,
        devices=kinds,
    )
    return Table(df, params=params)


@dataclass(frozen=True)
class BurstView(Result):
    """One input's summed throughput and its burst and idle analysis (Carns et al. 2011).

    What the time-series part of notebook 02-system-load shows, from
    :func:`burst_view`.

    Attributes
    ----------
    source_id : int
        The input analysed (``sources.source_id``).
    rates : pandas.DataFrame
        :func:`rates` of the input: ``read_bytes`` and ``write_bytes`` throughput per
        target [bytes/s].
    series : pandas.Series
        ``rates`` summed over targets and metrics (:func:`iochar.analyze.bursts.aggregate`)
        [bytes/s], indexed by interval end.
    targets : tuple of str
        The targets summed (by default the input's whole disks: no byte is counted
        on a disk and again on its partitions or on devices stacked on it).
    phases : pandas.DataFrame
        :func:`iochar.analyze.bursts.segment` of ``series``: burst, idle and gap phases.
    share : iochar.analyze.bursts.ShareBelowResult
        :func:`iochar.analyze.bursts.share_below` of ``series``.
    idle : pandas.DataFrame
        :func:`iochar.analyze.bursts.idle_table` of ``series`` (Table III layout).
    params : dict
        The parameters as used (see :class:`iochar.result.Result`).
    sql : str or None
        The SQL that read the store, or None.
    """

    source_id: int
    rates: pd.DataFrame
    series: pd.Series
    targets: tuple[str, ...]
    phases: pd.DataFrame
    share: bursts.ShareBelowResult
    idle: pd.DataFrame


def burst_view(
    store,
    source_id: int | None = None,
    *,
    targets: Sequence[str] | str | None = None,
    start: Any = None,
    end: Any = None,
    bin_s: float | None = None,
    share_fraction: float = 0.33,
    idle_fraction: float = 0.05,
    load: pd.DataFrame | None = None,
    devices: str | Sequence[str] | None = None,
) -> BurstView | None:
    """Bursts, share below and idle periods of one input's summed throughput, if any.

    Picks the input (:func:`pick_source`), takes its read and write throughput
    (:func:`rates`), sums it (:func:`iochar.analyze.bursts.aggregate`) and analyses the
    sum with :func:`iochar.analyze.bursts.segment` (bursts at or above
    ``idle_fraction`` of peak), :func:`~iochar.analyze.bursts.share_below` and
    :func:`~iochar.analyze.bursts.idle_table`, relative to the observed peak (Carns
    et al. 2011, section 4). The sum is over whole disks by default: a partition
    or a device stacked on a disk (dm, md, loop) would count the disk's bytes again.

    Parameters
    ----------
    store : iochar.Store
        The database.
    source_id : int, optional
        The input to analyse; None picks the longest record with traffic.
    targets : str or sequence of str, optional
        Only these targets; all when None.
    start : str or datetime, optional
        Only intervals ending after this time (ISO 8601, UTC).
    end : str or datetime, optional
        Only intervals ending at or before this time (ISO 8601, UTC).
    bin_s : float, optional
        Re-bin the samples to this width [s]; None keeps them.
    share_fraction : float, default 0.33
        Fraction of peak for the share below [fraction of peak].
    idle_fraction : float, default 0.05
        An interval below this fraction of peak is idle, at or above it part of a
        burst [fraction of peak].
    load : pandas.DataFrame, optional
        :func:`counter_load` of the same selection, to choose the input from; computed
        when None.
    devices : str or sequence of str, optional
        Which block devices count (:func:`iochar.analyze.blockdev.check_devices`):
        ``"disks"`` (whole disks, and targets that are no Linux block device, such
        as Lustre OSTs), ``"partitions"``, ``"virtual"`` (dm, md, loop, zram...),
        ``"all"``, or kinds from :data:`iochar.analyze.blockdev.KINDS`. None:
        ``"disks"``, or every named target when ``targets`` is given; when
        ``load`` is given, the kinds ``load`` was made with.

    Returns
    -------
    BurstView or None
        None when no target of the selection moved data: no ``read_bytes`` /
        ``write_bytes`` counters (e.g. only brw_stats histograms), or only zero,
        flagged or too short records.

    Raises
    ------
    ReportError
        ``source_id`` names an input without traffic while others have some, or
        ``start`` / ``end`` is not a date and time.
    """
    tg = _targets(targets)
    if devices is None and load is not None:
        devices = getattr(load, "params", {}).get("devices")
    kinds = blockdev.check_devices(devices, "burst_view", targets_named=tg is not None)
    if load is None:
        load = counter_load(
            store,
            targets=tg,
            start=start,
            end=end,
            bin_s=bin_s,
            share_fraction=share_fraction,
            idle_fraction=idle_fraction,
            devices=kinds,
        )
    if not (load["peak_mib_s"] > 0).any():
        return None
    src = pick_source(load, source_id)
    df = rates(store, src, targets=tg, start=start, end=end, bin_s=bin_s, devices=kinds)
    series = bursts.aggregate(df)
    values = series.to_numpy(float)
    if not (np.isfinite(values) & (values > 0)).any():
        return None
    return BurstView(
        source_id=src,
        rates=df,
        series=series,
        targets=tuple(sorted({str(t) for t in df["target"]})),
        phases=bursts.segment(series, threshold=idle_fraction),
        share=bursts.share_below(series, share_fraction),
        idle=bursts.idle_table(series, idle_fraction=idle_fraction),
        params=dict(
            source_id=src,
            targets=tg,
            start=parse_time(start, "start", "burst_view"),
            end=parse_time(end, "end", "burst_view"),
            bin_s=bin_s,
            share_fraction=float(share_fraction),
            idle_fraction=float(idle_fraction),
            devices=kinds,
        ),
    )


def main_target(series: pd.DataFrame) -> str | None:
    """The target with the most used FSU intervals, for a chart.

    Ties go to the target with more intervals (skipped ones too), then more disk
    I/Os, then the first by name.

    Parameters
    ----------
    series : pandas.DataFrame
        The result of :func:`iochar.analyze.fsu.fsu_series`.

    Returns
    -------
    str or None
        None when the series is empty.
    """
    if series.empty:
        return None
    g = (
        series.assign(used=series["fsu_pct"].notna(), ios=series["read_ios"] + series["write_ios"])
        .groupby("target", sort=True)
        .agg(used=("used", "sum"), n=("ts", "size"), ios=("ios", "sum"))
    )
    g = g.sort_values(["used", "n", "ios"], ascending=False, kind="stable")
    return str(g.index[0])
