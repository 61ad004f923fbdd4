"""One-shot summary of jobs: what ``iochar summary PATH...`` prints (issue 19, item 3).

:func:`summarize` gathers, for each job in a store, the answers of iochar's analyses
into one :class:`Summary`; :func:`summarize_paths` loads Darshan logs, strace files or
traces first (into memory, or a database file) or opens an existing database.
Three renderers show the same summary: :func:`render_terminal` (rich tables that
fit the console), :func:`to_html` (one offline page, built like the notebook
reports of :mod:`iochar.report`) and :func:`to_json` (the same data as JSON).

What a job's summary holds, and where each part comes from
----------------------------------------------------------
``facts``
    The ``jobs`` row (program, command, user, processes, nodes, start and end in
    UTC, run time [s]) and the input it came from. A fact the input does not
    record (strace has no user and no date) is said to be missing.
``interfaces``
    Bytes, calls and time per interface and op (read, write, metadata). Darshan
    jobs: every ``file_stats`` record summed per module (POSIX, MPI-IO, STDIO,
    H5F/H5D, PNETCDF_*), metadata calls being opens + seeks + stats + syncs;
    modules that ``file_stats`` does not map (DFS, DAOS) from their
    ``<MODULE>_BYTES_READ``/``_BYTES_WRITTEN`` and ``_F_{READ,WRITE,META}_TIME``
    counters in ``module_counters`` (their call counts are left out: the
    modules count blocking and non-blocking calls in separate counters). Jobs
    without counters: their traced operations (``ops``) per layer -- DXT_POSIX
    and DXT_MPIIO segments as POSIX and MPI-IO, any other trace under its input
    kind (``strace``, ``trace-csv``...) -- with failed calls' bytes left out and
    every op other than read and write counted as metadata. Times are summed
    over processes [process-seconds]: Darshan's ``F_*_TIME`` of a shared record
    is already the sum over its ranks (darshan-util, darshan-parser counter
    descriptions), and ``process_time_pct`` is that time over ``nprocs`` x run
    time. The layers are not added up: MPI-IO, HDF5 and PnetCDF calls reach the
    file system as POSIX calls that Darshan records again (Darshan runtime
    documentation, "instrumentation modules"); the job's one-layer totals are
    those of :func:`iochar.analyze.jobs.job_metrics` (Carns et al. 2011,
    section 2.4: bytes, I/O time of the slowest rank, its share of the run,
    sharing pattern), shown under the table with the layer they were
    counted on.
``classes``, ``top_files``
    :func:`iochar.analyze.classify.classify` (Miller & Katz 1991, section 5.1):
    files, bytes and share per class (required, checkpoint, staging, other)
    and the files that moved most bytes, each with its class and confidence.
``sizes``
    :attr:`iochar.analyze.jobs.JobMetrics.sizes`: reads and writes per
    Darshan access-size bin (``DARSHAN_BUCKET_INC`` bins, 0-100 B to 1G+; Carns
    et al. 2011, Figs. 10 and 12) on one layer (POSIX, else MPI-IO, H5D or
    PNETCDF_VAR; traced operations binned the same way).
``cycles``
    :func:`iochar.analyze.cycles.job_cycles` on the job's bytes per time bin
    (Miller & Katz 1991, section 5.3): the strongest period, its confidence,
    the number of cycles and how alike they are. Counters carry no per-operation
    times, so a job without traced operations has no cycles to measure; a trace
    too short or too flat for a period is said to be so, with its span.
``insights``
    :func:`iochar.analyze.insights.run`: findings by severity (high, warn,
    info) with their evidence and recommendation, and how many rules could not
    be checked for lack of data.

Several jobs are also summarised as a set (:attr:`Summary.totals` and one line
per job). Nothing from the data is trusted: names reach the terminal as rich
``Text`` (never markup), control characters shown as U+FFFD, and the page
escapes every string (``html.escape``). A missing value shows as an em dash
in tables and as words in sentences, never as NaN or None; in JSON it is
``null``.

Examples
--------
>>> import iochar
>>> from iochar.report import summary
>>> db = iochar.connect(":memory:")
>>> _ = db.load(b"op,t_start,t_end,size,path\\nwrite,0.5,0.6,4096,/a\\nread,0.7,0.8,10,/b\\n",
...             kind="trace-csv")
>>> s = summary.summarize(db)
>>> [j.job_id for j in s.jobs], s.jobs[0].interfaces["bytes"].tolist()
([0], [10, 4096])
>>> s.jobs[0].cycles["found"], s.jobs[0].cycles["text"][:10]
(False, 'no cycles:')
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
import inspect
import json
import math
import os
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iochar._units import fmt_bytes
from iochar.analyze._query import query
from iochar.analyze._sql import STD_STREAMS, timed
from iochar.errors import IocharError
from iochar.result import Result

__all__ = [
    "JobSummary",
    "Summary",
    "summarize",
    "summarize_paths",
    "is_database",
    "render_terminal",
    "to_html",
    "to_json",
    "to_dict",
]

#: What a missing value shows as in tables.
MISSING = "\u2014"

#: Files listed per job, most bytes first.
TOP_FILES = 10

#: Severity order, most severe first, and how each is marked.
_SEVERITY = ("high", "warn", "info")
_MARK = {"high": "\u2716 high", "warn": "\u25b2 warn", "info": "\u2022 info"}
_STYLE = {"high": "bold red", "warn": "yellow", "info": "dim"}

#: Interfaces from the top of the I/O stack down (display order).
_ORDER = (
    "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR", "MPI-IO", "DFS", "POSIX", "STDIO", "DAOS",
)  # fmt: skip

#: Unicode categories that never reach a terminal or page as they are: controls (escape
#: sequences, line breaks), format characters (bidirectional overrides), separators of
#: lines and paragraphs, surrogates, private use and unassigned code points.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _safe(value: Any) -> str:
    """A name from the data as one line of plain text (controls shown as U+FFFD)."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join("\ufffd" if unicodedata.category(c) in _HIDDEN else c for c in text)


def _missing(v: Any) -> bool:
    if v is None or v is pd.NaT or v is pd.NA:
        return True
    try:
        return bool(pd.isna(v)) if np.ndim(v) == 0 else False
    except (TypeError, ValueError):
        return False


def _plain(v: Any) -> Any:
    """A JSON-ready value: numpy scalars as Python ones, missing as None, times as ISO text."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if _missing(v):
        return None
    if isinstance(v, pd.Timestamp | dt.datetime):
        return pd.Timestamp(v).isoformat()
    if isinstance(v, np.bool_ | bool):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating | float):
        x = float(v)
        return x if math.isfinite(x) else None
    return v


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [_plain(r) for r in df.to_dict("records")]


# --------------------------------------------------------------------------- the result


@dataclass(frozen=True)
class JobSummary(Result):
    """Everything the summary says about one job (see the module description).

    Attributes
    ----------
    job_id : int
        The job.
    facts : dict
        ``program``, ``command``, ``user``, ``nprocs``, ``nnodes``, ``start``,
        ``end`` (UTC timestamps), ``runtime_s`` [s], ``job_key``, ``kind`` and
        ``input`` (the input's path) and ``files`` (files or records the job touched, in
        ``files``); None where the input records none.
    totals : dict
        One-layer totals from :func:`iochar.analyze.jobs.job_metrics`:
        ``layer``, ``bytes_read``, ``bytes_written`` [bytes], ``reads``,
        ``writes``, ``slowest_io_s`` [s], ``io_time_pct`` and ``meta_time_pct``
        [%], ``mib_s`` [MiB/s], ``sharing``, ``files``.
    interfaces : pandas.DataFrame
        ``interface``, ``op`` (read, write, meta), ``bytes`` [bytes],
        ``calls``, ``time_s`` [process-seconds], ``process_time_pct`` [%].
    classes : pandas.DataFrame
        ``class``, ``files``, ``bytes`` [bytes], ``bytes_pct`` [%].
    top_files : pandas.DataFrame
        ``path``, ``class``, ``confidence``, ``bytes_read``, ``bytes_written``
        [bytes], ``reason``.
    sizes : pandas.DataFrame
        ``bin`` (Darshan's label), ``bin_lo``, ``bin_hi`` [bytes], ``reads``,
        ``reads_pct``, ``writes``, ``writes_pct`` [%].
    sizes_layer : str or None
        The layer the sizes were counted on.
    cycles : dict
        ``found``, ``text`` (one sentence), ``period_s``, ``confidence``,
        ``n_cycles``, ``similarity``, ``span_s``, ``bin_s``, ``periods``.
    insights : list of dict
        ``severity``, ``code``, ``topic``, ``title``, ``evidence``,
        ``recommendation``; most severe first.
    not_checked : int
        Rules that could not be checked on this job for lack of data.
    checked : int
        Rules checked on this job (their data was there).
    notes : list of str
        What a reader should know about the data (incomplete Darshan modules).
    system : dict
        The system during the job (issue 20): the numbers of
        :func:`iochar.analyze.context.summary_facts` and ``text``, one plain
        sentence (the load on the busiest matched target, or why no counters cover
        the job's window).
    """

    job_id: int
    facts: dict[str, Any]
    totals: dict[str, Any]
    interfaces: pd.DataFrame
    classes: pd.DataFrame
    top_files: pd.DataFrame
    sizes: pd.DataFrame
    sizes_layer: str | None
    cycles: dict[str, Any]
    insights: list[dict[str, Any]]
    not_checked: int
    checked: int = 0
    notes: list[str] = field(default_factory=list)
    system: dict[str, Any] = field(default_factory=dict)

    def severity_counts(self) -> dict[str, int]:
        """Findings per severity (every severity present, possibly 0)."""
        out = dict.fromkeys(_SEVERITY, 0)
        for f in self.insights:
            out[f["severity"]] += 1
        return out


@dataclass(frozen=True)
class Summary(Result):
    """The summary of one or more jobs and of the set (see :func:`summarize`).

    Attributes
    ----------
    jobs : tuple of JobSummary
        One per job, in job order.
    inputs : tuple of dict
        Each input named: ``path``, ``kind``, ``source_id``, ``status``
        (loaded, already loaded, database, failed) and ``error``.
    totals : dict
        Over the jobs: ``jobs``, ``nprocs``, ``bytes_read``, ``bytes_written``
        [bytes], ``slowest_io_s`` [s], ``runtime_s`` [s, summed], ``findings``
        (per severity), ``not_checked``.
    seconds : dict of str to float
        Wall time of each stage [s]: ``load`` (by :func:`summarize_paths`),
        ``facts`` (facts and interfaces), ``job_metrics``, ``classify``,
        ``insights``, ``cycles``; for benchmarks/bench_summary.py.
    """

    jobs: tuple[JobSummary, ...]
    inputs: tuple[dict[str, Any], ...] = ()
    totals: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict, repr=False, compare=False)


# --------------------------------------------------------------------------- gathering

_FACTS_SQL = """
SELECT j.job_id, j.app, j.exe, j."user", j.nprocs, j.nnodes, j.start_ts, j.end_ts,
       j.runtime_s, j.job_key, s.kind, s.uri,
       (SELECT count(*) FROM files f WHERE f.job_id = j.job_id) AS files
FROM jobs j LEFT JOIN sources s USING (source_id)
WHERE list_contains($jobs, j.job_id)
ORDER BY j.job_id
"""

_META_CALLS = "coalesce(opens, 0) + coalesce(seeks, 0) + coalesce(stats, 0) + coalesce(syncs, 0)"

#: Per job and Darshan module: file_stats sums, then modules file_stats does not map.
_COUNTER_IF_SQL = f"""
WITH fs AS (
  SELECT job_id, module AS interface,
         sum(bytes_read) AS read_bytes, sum(bytes_written) AS write_bytes,
         sum(reads) AS read_calls, sum(writes) AS write_calls,
         sum({_META_CALLS}) AS meta_calls,
         sum(read_time) AS read_s, sum(write_time) AS write_s, sum(meta_time) AS meta_s
  FROM file_stats WHERE list_contains($jobs, job_id) GROUP BY ALL
),
mc AS (
  SELECT job_id, module AS interface,
         sum(value) FILTER (WHERE suffix(counter, '_BYTES_READ')) AS read_bytes,
         sum(value) FILTER (WHERE suffix(counter, '_BYTES_WRITTEN')) AS write_bytes,
         CAST(NULL AS DOUBLE) AS read_calls, CAST(NULL AS DOUBLE) AS write_calls,
         CAST(NULL AS DOUBLE) AS meta_calls,
         sum(value) FILTER (WHERE suffix(counter, '_F_READ_TIME')) AS read_s,
         sum(value) FILTER (WHERE suffix(counter, '_F_WRITE_TIME')) AS write_s,
         sum(value) FILTER (WHERE suffix(counter, '_F_META_TIME')) AS meta_s
  FROM module_counters m
  WHERE list_contains($jobs, job_id)
    AND NOT EXISTS (SELECT 1 FROM fs WHERE fs.job_id = m.job_id AND fs.interface = m.module)
  GROUP BY ALL
  HAVING read_bytes IS NOT NULL OR write_bytes IS NOT NULL
)
SELECT * FROM fs UNION ALL SELECT * FROM mc
"""

#: Per job without counters: its traced operations per layer (DXT module or input kind).
_OPS_IF_SQL = f"""
WITH o AS (
  SELECT o.job_id, o.op, o.size, o.error, o.t_end - o.t_start AS d,
         CASE o.call WHEN 'DXT_POSIX' THEN 'POSIX' WHEN 'DXT_MPIIO' THEN 'MPI-IO'
              ELSE coalesce(s.kind, 'trace') END AS interface
  FROM ops o JOIN jobs j ON j.job_id = o.job_id
  LEFT JOIN sources s ON s.source_id = j.source_id
  WHERE list_contains($jobs, o.job_id)
)
SELECT job_id, interface,
       coalesce(sum(size) FILTER (WHERE op = 'read' AND error IS NULL), 0) AS read_bytes,
       coalesce(sum(size) FILTER (WHERE op = 'write' AND error IS NULL), 0) AS write_bytes,
       count(*) FILTER (WHERE op = 'read') AS read_calls,
       count(*) FILTER (WHERE op = 'write') AS write_calls,
       count(*) FILTER (WHERE op NOT IN ('read', 'write')) AS meta_calls,
       CASE WHEN {timed("d")} THEN coalesce(sum(d) FILTER (WHERE op = 'read'), 0) END AS read_s,
       CASE WHEN {timed("d")} THEN coalesce(sum(d) FILTER (WHERE op = 'write'), 0) END AS write_s,
       CASE WHEN {timed("d")}
            THEN coalesce(sum(d) FILTER (WHERE op NOT IN ('read', 'write')), 0) END AS meta_s
FROM o GROUP BY ALL
"""

_HAS_OPS_SQL = """
SELECT job_id, count(*) FILTER (WHERE op IN ('read', 'write') AND size IS NOT NULL) AS data_ops
FROM ops WHERE list_contains($jobs, job_id) GROUP BY job_id
"""

# Darshan's standard streams, left out of the job metrics (iochar.analyze.jobs) but in
# the interface table: the totals sentence says what they moved
_STD_SQL = f"""
SELECT s.job_id, s.module,
       coalesce(sum(s.bytes_read), 0) AS bytes_read,
       coalesce(sum(s.bytes_written), 0) AS bytes_written
FROM file_stats s JOIN files f ON f.job_id = s.job_id AND f.file_id = s.file_id
WHERE list_contains($jobs, s.job_id) AND f.path IN {STD_STREAMS}
GROUP BY ALL
"""

_TOTAL_KEYS = (
    "layer", "bytes_read", "bytes_written", "reads", "writes", "slowest_io_s", "io_time_pct",
    "meta_time_pct", "mib_s", "sharing", "files",
)  # fmt: skip


def _interfaces(store, jobs: list[int], nprocs: dict[int, float], runtime: dict) -> pd.DataFrame:
    """Long form: (job, interface, op) with bytes, calls, time and share of process time."""
    wide = query(store, _COUNTER_IF_SQL, params={"jobs": jobs}).df()
    rest = sorted(set(jobs) - set(wide["job_id"].astype(int)))
    if rest:
        ops = query(store, _OPS_IF_SQL, params={"jobs": rest}).df()
        if len(ops):
            wide = pd.concat([w for w in (wide, ops) if len(w)], ignore_index=True)
    cols = ["job_id", "interface", "op", "bytes", "calls", "time_s", "process_time_pct"]
    if wide.empty:
        return pd.DataFrame({c: [] for c in cols})
    parts = []
    for op in ("read", "write", "meta"):
        p = pd.DataFrame(
            {
                "job_id": wide["job_id"].astype("int64"),
                "interface": wide["interface"].astype(str),
                "op": op,
                "bytes": wide[f"{op}_bytes"] if op != "meta" else np.nan,
                "calls": wide[f"{op}_calls"],
                "time_s": wide[f"{op}_s"],
            }
        )
        parts.append(p)
    long = pd.concat(parts, ignore_index=True)
    # an op that moved nothing, took no time and made no call says nothing
    empty = (
        long["bytes"].fillna(0).eq(0)
        & long["calls"].fillna(0).eq(0)
        & long["time_s"].fillna(0).eq(0)
    )
    long = long[~empty].copy()
    budget = long["job_id"].map(lambda j: nprocs.get(j, np.nan) * runtime.get(j, np.nan))
    budget = pd.to_numeric(budget, errors="coerce")
    long["process_time_pct"] = 100 * long["time_s"] / budget.where(budget > 0)
    rank = {m: i for i, m in enumerate(_ORDER)}
    long["_i"] = long["interface"].map(lambda m: rank.get(m, len(_ORDER)))
    long["_o"] = long["op"].map({"read": 0, "write": 1, "meta": 2})
    long = long.sort_values(["job_id", "_i", "interface", "_o"])
    long["bytes"] = long["bytes"].astype("Float64").round().astype("Int64")
    long["calls"] = long["calls"].astype("Float64").round().astype("Int64")
    return long[cols].reset_index(drop=True)


def _sizes(metrics_sizes: pd.DataFrame, job_id: int) -> tuple[pd.DataFrame, str | None]:
    """One job's access-size histogram, reads and writes side by side."""
    s = metrics_sizes[metrics_sizes["job_id"] == job_id]
    cols = ["bin", "bin_lo", "bin_hi", "reads", "reads_pct", "writes", "writes_pct"]
    if s.empty or not s["count"].sum():
        return pd.DataFrame({c: [] for c in cols}), None
    layer = str(s["module"].dropna().iloc[0]) if s["module"].notna().any() else None
    out = s.drop_duplicates("bin_lo")[["bin", "bin_lo", "bin_hi"]].sort_values("bin_lo")
    for op, name in (("read", "reads"), ("write", "writes")):
        one = s[s["op"] == op].set_index("bin_lo")
        out[name] = out["bin_lo"].map(one["count"]).fillna(0).astype("int64")
        total = out[name].sum()
        out[f"{name}_pct"] = 100 * out[name] / total if total > 0 else np.nan
    used = (out["reads"] + out["writes"]).to_numpy() > 0
    # from the first bin with accesses to the last: the shape, without empty tails
    idx = np.flatnonzero(used)
    out = out.iloc[idx[0] : idx[-1] + 1]
    return out[cols].reset_index(drop=True), layer


def _span_text(seconds: float) -> str:
    from iochar.narrate import fmt_s

    return fmt_s(seconds) if _finite(seconds) else "an unknown time"


def _finite(x: Any) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _cycles(store, job_id: int, data_ops: int, has_any_ops: bool) -> dict[str, Any]:
    """The job's strongest I/O period and its cycles, or why there is none."""
    out: dict[str, Any] = {
        "found": False, "text": "", "period_s": None, "confidence": None, "n_cycles": None,
        "similarity": None, "span_s": None, "bin_s": None, "periods": [],
    }  # fmt: skip
    if not has_any_ops:
        out["text"] = (
            "no cycles: the job has no per-operation records (Darshan counters hold "
            "totals, not the time of each operation; a DXT trace or strace would)"
        )
        return out
    if not data_ops:
        out["text"] = "no cycles: the job's trace holds no reads or writes with a size"
        return out
    from iochar.analyze import cycles
    from iochar.narrate import fmt_num, fmt_pct, fmt_s

    found, cyc = cycles.job_cycles(store, job_id=job_id)
    n = int(found.n_samples)
    width = float(found.dt_s) if _finite(found.dt_s) else float("nan")
    span = n * width if n > 3 and _finite(width) else float("nan")
    if not _finite(span):  # job_cycles gives a 3-bin stand-in for a job under 3 bins
        row = query(
            store,
            "SELECT greatest(max(t_end), max(runtime_s)) FROM ops JOIN jobs USING (job_id) "
            "WHERE job_id = $j",
            params={"j": job_id},
        ).fetchall()
        span = float(row[0][0]) if row and _finite(row[0][0]) else float("nan")
        width = float("nan")
    out["span_s"] = span if _finite(span) else None
    out["bin_s"] = width if _finite(width) else None
    p = found.periods
    if p.empty:
        reason = found.reason or "no period stands out"
        # find_periods' default: a period must fit this many times into the span
        reps = inspect.signature(cycles.find_periods).parameters["min_cycles"].default
        if reason == "constant signal" and not _finite(width):
            why = f"the job's trace spans {_span_text(span)}, too short to hold a cycle"
        elif reason == "constant signal":
            why = (
                f"the bytes moved per {fmt_s(width)} bin do not vary over the "
                f"{_span_text(span)} of the trace"
            )
        elif reason.startswith("too short"):
            why = (
                f"the job's trace spans {_span_text(span)}, too short for a period to "
                f"repeat {fmt_num(reps)} times"
            )
        else:
            why = (
                f"no period stands out in the {_span_text(span)} of the trace (a period must "
                f"repeat {fmt_num(reps)} times, so periods up to {_span_text(span / reps)} "
                f"were searched; {reason})"
            )
        out["text"] = f"no cycles: {why}"
        return out
    first = p.iloc[0]
    out.update(
        found=True,
        period_s=float(first["period_s"]),
        confidence=float(first["confidence"]),
        n_cycles=float(first["n_cycles"]),
        periods=_records(p[["rank", "period_s", "confidence", "n_cycles", "jitter"]]),
    )
    conf = float(first["confidence"])
    sure = "above 99.99%" if conf >= 0.9999 else fmt_pct(conf, 2)
    text = (
        f"I/O repeats every {fmt_s(first['period_s'])} (confidence "
        f"{sure}, {fmt_num(first['n_cycles'])} cycles in "
        f"{_span_text(span)})"
    )
    if cyc is not None and _finite(cyc.similarity):
        out["similarity"] = float(cyc.similarity)
        full = int(cyc.cycles["complete"].sum())
        text += (
            f"; its {full:,} complete cycles have a median similarity of "
            f"{fmt_num(cyc.similarity, 2)} to the typical one"
        )
    if len(p) > 1:
        text += "; also every " + ", ".join(fmt_s(x) for x in p["period_s"].iloc[1:])
    out["text"] = text
    return out


def _top_files(labels: pd.DataFrame, job_id: int, top: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    from iochar.analyze.classify import CLASSES

    f = labels[labels["job_id"] == job_id]
    moved = f["bytes_read"].fillna(0) + f["bytes_written"].fillna(0)
    classes = pd.DataFrame({"class": list(CLASSES)})
    g = (
        f.assign(bytes=moved)
        .groupby("class")
        .agg(files=("file_id", "size"), bytes=("bytes", "sum"))
    )
    classes["files"] = classes["class"].map(g["files"]).fillna(0).astype("int64")
    classes["bytes"] = classes["class"].map(g["bytes"]).fillna(0).astype("int64")
    total = classes["bytes"].sum()
    classes["bytes_pct"] = 100 * classes["bytes"] / total if total > 0 else np.nan
    classes = classes[classes["files"] > 0].reset_index(drop=True)
    t = f.assign(_m=moved)
    t = t[t["_m"] > 0].sort_values(["_m", "path"], ascending=[False, True]).head(top)
    cols = ["path", "class", "confidence", "bytes_read", "bytes_written", "reason"]
    return classes, t[cols].reset_index(drop=True)


def _system(store, job_id: int) -> dict[str, Any]:
    """The system during one job (:func:`iochar.analyze.context.job_context`), as facts
    and one plain sentence."""
    from iochar.analyze import context
    from iochar.narrate import fmt_bytes, fmt_pct, fmt_rate

    ctx = context.job_context(store, job_id)
    out = context.summary_facts(ctx)
    others = out.get("other_jobs") or 0
    along = (
        f"; {others} other job{'s' if others != 1 else ''} ran at the same time"
        + (
            f" ({fmt_bytes(out['other_jobs_bytes'])})"
            if _finite(out.get("other_jobs_bytes"))
            else ""
        )
        if others
        else ""
    )
    if out.get("status") in ("covered", "partial") and out.get("busiest_target") is not None:
        match = {"ost": "by OST", "mount": "by mount", "time": "by time only"}.get(
            str(out.get("match")), str(out.get("match") or "")
        )
        parts = [f"{_safe(out['busiest_target'])} ran at {fmt_rate(out['rate_bps'])}"]
        if _finite(out.get("peak_share")):
            parts.append(f"{fmt_pct(out['peak_share'])} of its observed peak")
        if _finite(out.get("busy_share")):
            parts.append(f"busy {fmt_pct(out['busy_share'])} of the window")
        if _finite(out.get("fsu_pct")):
            parts.append(f"FSU {out['fsu_pct']:.0f}%")
        text = (
            f"Counters matched {match} ({out['targets']} target"
            f"{'s' if out['targets'] != 1 else ''}"
            + (
                f", {fmt_pct(out['coverage'])} of the window observed"
                if out.get("status") == "partial" and _finite(out.get("coverage"))
                else ""
            )
            + "): the busiest, "
            + ", ".join(parts)
            + (
                f"; the job's own share of the traffic {fmt_pct(out['job_share'], 2)}"
                + (
                    " (it moved more than the devices saw: a cache served part of it)"
                    if out["job_share"] > 1
                    else ""
                )
                if _finite(out.get("job_share"))
                else ""
            )
            + along
            + "."
        )
    else:
        text = f"Not known: {_safe(out.get('reason') or 'no counters matched')}{along}."
    out["text"] = text
    return out


def summarize(
    store,
    *,
    job_ids: Iterable[int] | None = None,
    top: int = TOP_FILES,
    inputs: Sequence[dict[str, Any]] = (),
) -> Summary:
    """Summarise jobs of a store: facts, volume and time, files, sizes, cycles, insights.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_ids : iterable of int, optional
        The jobs (default: every job in ``jobs``).
    top : int, default 10
        Files listed per job.
    inputs : sequence of dict, optional
        What was loaded to make the store (kept in :attr:`Summary.inputs`).

    Returns
    -------
    Summary

    Raises
    ------
    IocharError
        When there is no job to summarise.
    """
    from iochar.analyze import insights
    from iochar.analyze import jobs as jobs_mod
    from iochar.analyze.darshan_modules import incomplete
    from iochar.analyze.insights._shared import classified

    if job_ids is None:
        ids = [int(r[0]) for r in query(store, "SELECT job_id FROM jobs ORDER BY 1").fetchall()]
    else:
        ids = sorted({int(j) for j in job_ids})
    if not ids:
        raise IocharError(
            "no job to summarise: the inputs hold no job (device counters and snapshots "
            "are not jobs; iochar info lists what the database holds)"
        )
    one = ids[0] if len(ids) == 1 else None
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal t0
        now = time.perf_counter()
        seconds[stage] = seconds.get(stage, 0.0) + now - t0
        t0 = now

    # the rules' queries run on a second connection while the analyses below run
    pending = insights.start(store, job_id=one)
    try:
        facts = query(store, _FACTS_SQL, params={"jobs": ids}).df()
        nprocs = dict(zip(facts["job_id"], pd.to_numeric(facts["nprocs"]), strict=True))
        runtime = dict(zip(facts["job_id"], pd.to_numeric(facts["runtime_s"]), strict=True))
        iface = _interfaces(store, ids, nprocs, runtime)
        lap("facts")
        metrics = jobs_mod.job_metrics(store, job_id=one)
        mj = metrics.jobs.set_index("job_id")
        lap("job_metrics")
        labels = classified(store, job_id=one)  # shared with the insight rules that need it
        lap("classify")
        found = pending.result()
        lap("insights")
    finally:
        pending.close()
    not_checked: dict[int, int] = {}
    for nc in found.evidence["not_checked"]:
        not_checked[int(nc["job_id"])] = not_checked.get(int(nc["job_id"]), 0) + 1
    opsn = dict(query(store, _HAS_OPS_SQL, params={"jobs": ids}).fetchall())
    cyc = {j: _cycles(store, j, int(opsn.get(j, 0)), j in opsn) for j in ids}
    lap("cycles")
    system = {j: _system(store, j) for j in ids}
    lap("context")
    partial = incomplete(store)
    std: dict[int, list[tuple[str, float, float]]] = {}
    for j, m, r, w in query(store, _STD_SQL, params={"jobs": ids}).fetchall():
        std.setdefault(int(j), []).append((str(m), float(r), float(w)))
    out = []
    for r in facts.to_dict("records"):
        j = int(r["job_id"])
        fact = {
            "program": r["app"],
            "command": r["exe"],
            "user": r["user"],
            "nprocs": r["nprocs"],
            "nnodes": r["nnodes"],
            "start": r["start_ts"],
            "end": r["end_ts"],
            "runtime_s": r["runtime_s"],
            "job_key": r["job_key"],
            "kind": r["kind"],
            "input": r["uri"],
            "files": r["files"],
        }
        tot = {k: (mj.at[j, k] if j in mj.index else None) for k in _TOTAL_KEYS}
        measured = str(tot.get("layer") or "").split("+")  # the modules the totals count
        streams = [(rb, wb) for m, rb, wb in std.get(j, ()) if m in measured]
        tot["std_bytes_read"] = sum(rb for rb, _ in streams)
        tot["std_bytes_written"] = sum(wb for _, wb in streams)
        classes, top_files = _top_files(labels, j, top)
        sizes, layer = _sizes(metrics.sizes, j)
        mine = found[found["job_id"] == j]
        finds = [
            {
                k: row[k]
                for k in ("severity", "code", "topic", "title", "evidence", "recommendation")
            }
            for row in mine.to_dict("records")
        ]
        notes = [
            f"Darshan flagged the {m} module incomplete: it ran out of memory for new "
            "records, so its counters cover only the records kept"
            for m in partial.loc[partial["job_id"] == j, "module"]
        ]
        out.append(
            JobSummary(
                job_id=j,
                facts=_plain(fact),
                totals=_plain(tot),
                interfaces=iface[iface["job_id"] == j]
                .drop(columns="job_id")
                .reset_index(drop=True),
                classes=classes,
                top_files=top_files,
                sizes=sizes,
                sizes_layer=layer,
                cycles=cyc[j],
                insights=_plain(finds),
                not_checked=not_checked.get(j, 0),
                checked=len(found.params) - not_checked.get(j, 0),
                notes=notes,
                system=system[j],
            )
        )
    findings = dict.fromkeys(_SEVERITY, 0)
    for js in out:
        for k, v in js.severity_counts().items():
            findings[k] += v

    def total(key: str) -> float | None:
        vals = [js.totals.get(key) for js in out if _finite(js.totals.get(key))]
        return float(sum(vals)) if vals else None

    totals = {
        "jobs": len(out),
        "nprocs": int(sum(int(js.facts["nprocs"] or 0) for js in out)),
        "bytes_read": total("bytes_read"),
        "bytes_written": total("bytes_written"),
        "slowest_io_s": total("slowest_io_s"),
        "runtime_s": float(sum(float(js.facts["runtime_s"] or 0) for js in out)),
        "findings": findings,
        "not_checked": int(sum(js.not_checked for js in out)),
    }
    return Summary(
        jobs=tuple(out),
        inputs=tuple(dict(i) for i in inputs),
        totals=totals,
        params={"job_ids": ids, "top": top},
        seconds=seconds,
    )


# --------------------------------------------------------------------------- inputs


def is_database(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a DuckDB database file (an iochar database, or another).

    A DuckDB file starts with an 8-byte checksum and then the magic bytes ``DUCK``
    (DuckDB storage format, ``MainHeader::MAGIC_BYTES``); a ``.duckdb`` name counts too.

    Parameters
    ----------
    path : str or os.PathLike
        A file.

    Returns
    -------
    bool
    """
    p = Path(path)
    if p.suffix.lower() == ".duckdb":
        return True
    try:
        with open(p, "rb") as fh:
            head = fh.read(12)
    except OSError:
        return False
    return head[8:12] == b"DUCK"


def summarize_paths(
    paths: Sequence[str | os.PathLike[str]],
    *,
    db: str | os.PathLike[str] | None = None,
    wait: float | None = None,
    top: int = TOP_FILES,
    kind: str | None = None,
) -> Summary:
    """Load inputs (or open a database) and summarise their jobs.

    Parameters
    ----------
    paths : sequence of str or os.PathLike
        Darshan logs, strace files, traces (sniffed, or ``kind``), or one iochar
        database (``.duckdb``), opened read-only and summarised whole.
    db : str or os.PathLike, optional
        Load into this database file (created when missing) instead of memory;
        only the jobs of ``paths`` are summarised.
    wait : float, optional
        Seconds to wait for a database another process holds [s].
    top : int, default 10
        Files listed per job.
    kind : str, optional
        Input kind for every path (default: sniffed).

    Returns
    -------
    Summary
        :attr:`Summary.inputs` says what happened to each input; an input that
        failed to load (several inputs) has ``status`` "failed" and its
        ``error``, and the others are summarised.

    Raises
    ------
    IocharError
        A database given with other inputs or with ``db``; no input loaded; no
        job in what was loaded. A single bad input raises its
        :class:`~iochar.errors.InputError`.
    """
    import iochar

    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise IocharError("summary needs at least one input or database")
    bases = [p for p in paths if is_database(p)]
    if bases:
        if len(paths) > 1 or db is not None:
            raise IocharError(
                f"{bases[0]} is a database: summarise it alone (iochar summary DB.duckdb), "
                "or name logs and traces with --db DB to load them into one"
            )
        if not os.path.exists(bases[0]):
            raise IocharError(f"database {bases[0]!r} does not exist")
        with iochar.connect(bases[0], read_only=True, wait=wait) as store:
            info = {"path": bases[0], "kind": "database", "source_id": None, "status": "database"}
            return summarize(store, top=top, inputs=[info | {"error": None}])
    import warnings

    from iochar.errors import SkippedRecordsWarning

    store = iochar.connect(":memory:" if db is None else os.fspath(db), wait=wait)
    with store, warnings.catch_warnings():
        # what a loader warns about is kept in its result and said in the summary
        warnings.simplefilter("ignore", SkippedRecordsWarning)
        warnings.simplefilter("ignore", UserWarning)
        t0 = time.perf_counter()
        if len(paths) == 1:
            results = [store.load(paths[0], kind=kind)]
        else:
            results = store.load_many(paths, kind=kind)
        inputs = []
        for res in results:
            status = "failed" if res.error else "already loaded" if res.duplicate else "loaded"
            inputs.append(
                {
                    "path": res.uri,
                    "kind": res.kind,
                    "source_id": res.source_id,
                    "status": status,
                    "error": None if res.error is None else str(res.error),
                    "warnings": list(res.warnings),
                }
            )
        sources = [r.source_id for r in results if r.error is None]
        if not sources:
            raise IocharError("no input loaded: " + "; ".join(str(r.error) for r in results))
        ids = [
            int(r[0])
            for r in query(
                store,
                "SELECT job_id FROM jobs WHERE list_contains($s, source_id) ORDER BY 1",
                params={"s": sources},
            ).fetchall()
        ]
        if not ids:
            raise IocharError(
                "no job to summarise in " + ", ".join(paths) + ": they hold no job (device "
                "counters and snapshots are not jobs)"
            )
        loaded = time.perf_counter() - t0
        found = summarize(store, job_ids=ids, top=top, inputs=inputs)
        return dataclasses.replace(found, seconds={"load": loaded, **found.seconds})


# --------------------------------------------------------------------------- words


def _n(v: Any) -> str:
    """A count with thousands separators, or the dash."""
    if not _finite(v):
        return MISSING
    return f"{int(round(float(v))):,}"


def _moved(verb: str, none: str, nbytes: Any, calls: Any) -> str:
    """``read 2.0 MiB in 3 calls``, or ``no reads`` when nothing moved in no call."""
    if not (_finite(nbytes) and float(nbytes)) and not (_finite(calls) and float(calls)):
        return none
    return f"{verb} {_b(nbytes)} in {_calls(calls)}"


def _calls(v: Any) -> str:
    if not _finite(v):
        return "an unknown number of calls"
    return f"{_n(v)} call{'' if int(round(float(v))) == 1 else 's'}"


def _b(v: Any) -> str:
    return fmt_bytes(float(v)) if _finite(v) else MISSING


def _s(v: Any) -> str:
    from iochar.narrate import fmt_s

    return fmt_s(float(v)) if _finite(v) else MISSING


def _pct(v: Any, digits: int = 1) -> str:
    return f"{float(v):.{digits}f}%" if _finite(v) else MISSING


def _g(v: Any) -> str:
    """A number of evidence: integers whole, others to 3 significant figures."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if not _finite(v):
        return MISSING if not isinstance(v, str) else _safe(v)
    x = float(v)
    return f"{int(x):,}" if x.is_integer() and abs(x) < 1e15 else f"{x:.3g}"


def _when(v: Any) -> str | None:
    if _missing(v):
        return None
    ts = pd.Timestamp(v)
    return ts.strftime("%Y-%m-%d %H:%M:%S UTC")


_NO_FILES = (
    "No file classified: none moved data in the records the classifier reads (POSIX, "
    "MPI-IO, STDIO, HDF5 and PnetCDF counters, or traced operations)."
)


def fact_rows(js: JobSummary) -> list[tuple[str, str]]:
    """The job's facts as (label, text) pairs; missing facts said in words."""
    f = js.facts
    none = "not recorded in the input"
    nodes = _n(f["nnodes"]) if _finite(f["nnodes"]) else "not recorded"
    start, end = _when(f["start"]), _when(f["end"])
    rows = [
        ("program", _safe(f["program"]) if f["program"] is not None else none),
        ("command", _safe(f["command"]) if f["command"] is not None else none),
        ("user", _safe(f["user"]) if f["user"] is not None else none),
        ("processes", f"{_n(f['nprocs'])} (nodes: {nodes})"),
        ("start", start or "no date in the input"),
        ("end", end or "no date in the input"),
        ("run time", _s(f["runtime_s"]) if _finite(f["runtime_s"]) else none),
        ("input", f"{_safe(f['kind'] or 'unknown kind')}: {_safe(f['input'] or '<buffer>')}"),
    ]
    if f.get("job_key") is not None:
        rows.insert(0, ("job key", _safe(f["job_key"])))
    return rows


def totals_text(js: JobSummary) -> str:
    """One sentence: the job's one-layer totals (Carns et al. 2011 section 2.4)."""
    t = js.totals
    if js.interfaces.empty:
        return ""
    if not t.get("layer"):
        return (
            "One-layer totals: no bytes on POSIX, STDIO, MPI-IO, HDF5 or PnetCDF records "
            "(the layers the job metrics read); the table above shows what each interface "
            "recorded."
        )
    parts = [
        f"Measured on {_safe(t['layer'])}: "
        + _moved("read", "no reads", t["bytes_read"], t["reads"])
        + ", "
        + _moved("wrote", "no writes", t["bytes_written"], t["writes"])
    ]
    if _finite(t.get("slowest_io_s")):
        parts.append(
            f"I/O time of the slowest process {_s(t['slowest_io_s'])}"
            + (f" ({_pct(t['io_time_pct'])} of the run)" if _finite(t.get("io_time_pct")) else "")
        )
    elif t.get("layer") == "trace":
        # every call of the job lasted no time: the trace holds no durations
        parts.append(
            "no I/O time: the trace holds no call durations"
            + (" (strace records them with -T)" if js.facts.get("kind") == "strace" else "")
        )
    else:
        parts.append("no I/O time recorded")
    if _finite(t.get("meta_time_pct")):
        parts.append(f"metadata {_pct(t['meta_time_pct'])} of I/O time")
    if t.get("sharing"):
        parts.append(f"file sharing {_safe(t['sharing'])}")
    std = [
        f"{verb} {_b(t[key])}"
        for verb, key in (("read", "std_bytes_read"), ("wrote", "std_bytes_written"))
        if _finite(t.get(key)) and float(t[key]) > 0
    ]
    if std:
        parts.append(
            "the standard streams (<STDIN>, <STDOUT>, <STDERR>) are left out: they "
            + " and ".join(std)
        )
    return "; ".join(parts) + "."


def _no_finding(js: JobSummary) -> str:
    if js.checked <= 0:
        return "No finding: no rule had the data it needs."
    if js.checked == 1:
        return "No finding: the one rule checked did not cross its threshold."
    return f"No finding: none of the {js.checked} rules checked crossed its threshold."


def _evidence_text(ev: dict[str, Any]) -> str:
    return ", ".join(f"{_safe(k)}={_g(v)}" for k, v in (ev or {}).items())


def set_rows(s: Summary) -> pd.DataFrame:
    """One line per job: the set's table."""
    rows = []
    for js in s.jobs:
        c = js.severity_counts()
        rows.append(
            {
                "job_id": js.job_id,
                "program": js.facts["program"],
                "nprocs": js.facts["nprocs"],
                "runtime_s": js.facts["runtime_s"],
                "bytes_read": js.totals.get("bytes_read"),
                "bytes_written": js.totals.get("bytes_written"),
                "io_time_pct": js.totals.get("io_time_pct"),
                "high": c["high"],
                "warn": c["warn"],
                "info": c["info"],
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- JSON


def to_dict(s: Summary) -> dict[str, Any]:
    """The summary as plain JSON-ready data (missing values are None).

    Parameters
    ----------
    s : Summary

    Returns
    -------
    dict
        ``inputs``, ``jobs`` (each: ``job_id``, ``facts``, ``notes``, ``interfaces``,
        ``totals``, ``classes``, ``top_files``, ``sizes`` (``layer``, ``bins``),
        ``cycles``, ``insights``, ``not_checked``, ``checked``) and ``set`` (``totals`` and
        ``jobs``, one line per job; present for every summary).
    """
    jobs = []
    for js in s.jobs:
        jobs.append(
            {
                "job_id": js.job_id,
                "facts": _plain(js.facts),
                "notes": list(js.notes),
                "interfaces": _records(js.interfaces),
                "totals": _plain(js.totals),
                "classes": _records(js.classes),
                "top_files": _records(js.top_files),
                "sizes": {"layer": js.sizes_layer, "bins": _records(js.sizes)},
                "cycles": _plain(js.cycles),
                "system": _plain(js.system),
                "insights": _plain(js.insights),
                "not_checked": js.not_checked,
                "checked": js.checked,
            }
        )
    return {
        "inputs": [_plain(i) for i in s.inputs],
        "jobs": jobs,
        "set": {"totals": _plain(s.totals), "jobs": _records(set_rows(s))},
    }


def to_json(s: Summary) -> str:
    """:func:`to_dict` as JSON text (strict: no NaN)."""
    return json.dumps(to_dict(s), indent=1, allow_nan=False, ensure_ascii=False)


# --------------------------------------------------------------------------- terminal


def _tail(text: str, width: int) -> str:
    """Text cut at the front to ``width`` characters (a path keeps its file name)."""
    if len(text) <= width:
        return text
    return "\u2026" + text[-(width - 1) :] if width > 1 else "\u2026"


def _fit_columns(
    names: list[str], cells: list[list[str]], width: int, drop: Sequence[str]
) -> set[str]:
    """Columns to show so that each row fits ``width``: ``drop`` names go first, in order.

    A column needs its widest cell (or header) plus 2 characters between columns.
    """
    need = {n: max([len(n), *(len(r[i]) for r in cells)]) for i, n in enumerate(names)}
    keep = list(names)
    for name in drop:
        if sum(need[n] for n in keep) + 2 * (len(keep) - 1) <= width:
            break
        keep.remove(name)
    return set(keep)


def render_terminal(s: Summary, console) -> None:
    """Print the summary with rich: headings, tables, colour and severity markers.

    Every name from the data is a ``rich.text.Text`` (never markup); every line
    fits ``console.width`` (paths are cut at the front, long text wraps).

    Parameters
    ----------
    s : Summary
    console : rich.console.Console
    """
    from rich import box
    from rich.table import Table as RTable
    from rich.text import Text

    width = console.width

    def table(*cols: tuple[str, str]) -> RTable:
        t = RTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
        for name, justify in cols:
            t.add_column(Text(name), justify=justify, overflow="fold")
        return t

    def heading(text: str) -> None:
        console.print(Text(text, style="bold"))

    failed = [i for i in s.inputs if i.get("status") == "failed"]
    for i in failed:
        console.print(Text.assemble(("not loaded: ", "bold red"), _safe(i["error"])))
    for js in s.jobs:
        title = Text.assemble(
            (f"job {js.job_id}", "bold cyan"),
            (f" \u00b7 {_safe(js.facts['program'])}" if js.facts["program"] else ""),
        )
        title.truncate(max(width - 6, 8), overflow="ellipsis")
        console.rule(title, style="cyan")
        ft = RTable.grid(padding=(0, 2))
        ft.add_column(style="bold", no_wrap=True)
        ft.add_column(overflow="fold")
        for label, value in fact_rows(js):
            ft.add_row(Text(label), Text(value))
        console.print(ft)
        for note in js.notes:
            console.print(Text.assemble(("note: ", "yellow"), note))

        console.print()
        heading("Volume and time by interface and op")
        if js.interfaces.empty:
            console.print(Text("No I/O recorded for this job.", style="dim"))
        else:
            t = table(
                ("interface", "left"), ("op", "left"), ("bytes", "right"), ("calls", "right"),
                ("time", "right"), ("of process time", "right"),
            )  # fmt: skip
            for r in js.interfaces.itertuples():
                t.add_row(
                    Text(_safe(r.interface)), Text(r.op), Text(_b(r.bytes)), Text(_n(r.calls)),
                    Text(_s(r.time_s)), Text(_pct(r.process_time_pct, 2)),
                )  # fmt: skip
            console.print(t)
            console.print(
                Text(
                    "Time is summed over processes; layers are not added up (MPI-IO, HDF5 "
                    "and PnetCDF calls reach the file system as POSIX calls).",
                    style="dim",
                )
            )
        if js.interfaces.size:
            console.print(Text(totals_text(js)))

        console.print()
        nfiles = js.facts.get("files")
        heading(f"Files ({_n(nfiles)} seen)" if _finite(nfiles) else "Files")
        if js.classes.empty:
            console.print(Text(_NO_FILES, style="dim"))
        else:
            t = table(("class", "left"), ("files", "right"), ("bytes", "right"), ("share", "right"))
            for r in js.classes.itertuples():
                t.add_row(Text(r[1]), Text(_n(r.files)), Text(_b(r.bytes)), Text(_pct(r.bytes_pct)))
            console.print(t)
        if len(js.top_files):
            # path gets what the other columns leave (their widths plus 2 per gap)
            room = max(width - (10 + 5 + 10 + 10) - 2 * 4, 8)
            t = table(
                ("path", "left"), ("class", "left"), ("conf", "right"), ("read", "right"),
                ("written", "right"),
            )  # fmt: skip
            paths = [_safe(p) if p is not None else "(no name)" for p in js.top_files["path"]]
            for p, r in zip(paths, js.top_files.itertuples(), strict=True):
                t.add_row(
                    Text(_tail(p, room)), Text(r[2]), Text(_g(round(float(r.confidence), 2))),
                    Text(_b(r.bytes_read)), Text(_b(r.bytes_written)),
                )  # fmt: skip
            console.print(Text(f"Top {len(js.top_files)} files by bytes moved", style="bold"))
            console.print(t)

        console.print()
        layer = f" ({_safe(js.sizes_layer)})" if js.sizes_layer else ""
        heading(f"Access sizes{layer}")
        if js.sizes.empty:
            console.print(Text("No reads or writes with a size recorded.", style="dim"))
        else:
            t = table(
                ("size", "left"), ("reads", "right"), ("%", "right"), ("writes", "right"),
                ("%", "right"),
            )  # fmt: skip
            for r in js.sizes.itertuples():
                t.add_row(
                    Text(str(r.bin)), Text(_n(r.reads)), Text(_pct(r.reads_pct)),
                    Text(_n(r.writes)), Text(_pct(r.writes_pct)),
                )  # fmt: skip
            console.print(t)

        console.print()
        heading("Cycles")
        console.print(Text(js.cycles["text"], style="" if js.cycles["found"] else "dim"))

        console.print()
        heading("The system during the job")
        covered = js.system.get("status") in ("covered", "partial")
        console.print(Text(js.system.get("text", ""), style="" if covered else "dim"))

        console.print()
        c = js.severity_counts()
        heading(
            f"Insights: {c['high']} high, {c['warn']} warn, {c['info']} info "
            f"({js.not_checked} rule{'s' if js.not_checked != 1 else ''} not checked for "
            "lack of data)"
        )
        if not js.insights:
            console.print(Text(_no_finding(js), style="dim"))
        else:
            t = RTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=True)
            t.add_column(Text("severity"), no_wrap=True)
            t.add_column(Text("finding, evidence and advice"), overflow="fold")
            for f in js.insights:
                finding = Text.assemble(
                    (_safe(f["code"]), "bold"), " ", _safe(f["title"]), "\n",
                    (_evidence_text(f["evidence"]), "cyan"), "\n",
                    (_safe(f["recommendation"]), "dim"),
                )  # fmt: skip
                t.add_row(Text(_MARK[f["severity"]], style=_STYLE[f["severity"]]), finding)
            console.print(t)
        console.print()

    if len(s.jobs) > 1 or failed:
        tot = s.totals
        console.rule(Text(f"the set: {tot['jobs']} jobs", style="bold cyan"), style="cyan")
        fnd = tot["findings"]
        console.print(
            Text(
                f"{_n(tot['nprocs'])} processes over {_s(tot['runtime_s'])} of run time; "
                f"read {_b(tot['bytes_read'])}, wrote {_b(tot['bytes_written'])}; "
                f"I/O time of the slowest processes {_s(tot['slowest_io_s'])}; findings: "
                f"{fnd['high']} high, {fnd['warn']} warn, {fnd['info']} info."
            )
        )
        names = ["job", "program", "procs", "run time", "read", "written", "I/O %", "findings"]
        right = {"job", "procs", "run time", "read", "written", "I/O %"}
        cells = [
            [
                str(r.job_id), MISSING if _missing(r.program) else _safe(r.program),
                _n(r.nprocs), _s(r.runtime_s), _b(r.bytes_read), _b(r.bytes_written),
                _pct(r.io_time_pct), f"{r.high} high, {r.warn} warn, {r.info} info",
            ]
            for r in set_rows(s).itertuples()
        ]  # fmt: skip
        keep = _fit_columns(names, cells, width, drop=("I/O %", "procs", "run time"))
        t = table(*((n, "right" if n in right else "left") for n in names if n in keep))
        for row in cells:
            t.add_row(*(Text(c) for n, c in zip(names, row, strict=True) if n in keep))
        console.print(t)
        if failed:
            console.print(
                Text(f"{len(failed)} input{'s' if len(failed) != 1 else ''} not loaded (above).")
            )


# --------------------------------------------------------------------------- HTML

_PAGE_CSS = """
h2{margin-top:2em;border-bottom:1px solid #ddd}
h3{margin:1.4em 0 .4em;font-size:1.05em}
.facts td{padding:1px 6px;vertical-align:top;overflow-wrap:anywhere}
.facts td:first-child{font-weight:600;padding-right:1.5em;white-space:nowrap}
.sev{display:inline-block;min-width:4.2em;font-weight:600}
.sev-high{color:#b3261e}.sev-warn{color:#8a6100}.sev-info{color:#666}
ul.findings{list-style:none;padding-left:0}
ul.findings li{margin:.5em 0;padding:.3em .6em;border-left:4px solid #ccc}
ul.findings li.high{border-color:#b3261e}ul.findings li.warn{border-color:#e0a800}
.rec,.ev{color:#444;font-size:.9em;overflow-wrap:anywhere}
.note{background:#fff8e1;border-left:4px solid #e0a800;padding:.3em .8em}
"""


def to_html(s: Summary, *, title: str = "iochar summary") -> str:
    """The summary as one self-contained HTML page: no script, no outside request.

    The page is built like the notebook reports (:func:`iochar.report.to_html`):
    their style sheet, tables through :func:`iochar.report.tables.frame_html`
    (every cell escaped, missing values as an em dash with a footnote, bytes in
    binary units), one H1. Every string from the data is escaped.

    Parameters
    ----------
    s : Summary
    title : str, default "iochar summary"

    Returns
    -------
    str
        The HTML document.
    """
    from iochar import __version__
    from iochar.report import _CSS
    from iochar.report.tables import frame_html

    e = html.escape

    def p(text: str, cls: str = "") -> str:
        attr = f' class="{cls}"' if cls else ""
        return f"<p{attr}>{e(text)}</p>"

    body: list[str] = []
    if len(s.jobs) > 1:
        body.append('<nav class="summary"><h2 id="jobs">Jobs</h2><ul>')
        for js in s.jobs:
            name = f"job {js.job_id}" + (
                f": {_safe(js.facts['program'])}" if js.facts["program"] else ""
            )
            body.append(f'<li><a href="#job-{js.job_id}">{e(name)}</a></li>')
        body.append("</ul></nav>")
    for i in s.inputs:
        if i.get("status") == "failed":
            body.append(
                f'<div class="error"><strong>Not loaded:</strong> {e(_safe(i["error"]))}</div>'
            )
    for js in s.jobs:
        head = f"Job {js.job_id}" + (
            f": {_safe(js.facts['program'])}" if js.facts["program"] else ""
        )
        body.append(f'<section><h2 id="job-{js.job_id}">{e(head)}</h2>')
        rows = "".join(f"<tr><td>{e(k)}</td><td>{e(v)}</td></tr>" for k, v in fact_rows(js))
        body.append(f'<table class="facts">{rows}</table>')
        body += [f'<p class="note">{e(n)}</p>' for n in js.notes]
        body.append("<h3>Volume and time by interface and op</h3>")
        if js.interfaces.empty:
            body.append(p("No I/O recorded for this job."))
        else:
            view = js.interfaces.assign(process_time_pct=js.interfaces["process_time_pct"].round(3))
            body.append(frame_html(_safe_frame(view), max_rows=None))
            body.append(
                p(
                    "Time is summed over processes; layers are not added up (MPI-IO, HDF5 "
                    "and PnetCDF calls reach the file system as POSIX calls).",
                    "iochar-note",
                )
            )
        if js.interfaces.size:
            body.append(p(totals_text(js)))
        nfiles = js.facts.get("files")
        body.append(
            f"<h3>Files ({e(_n(nfiles))} seen)</h3>" if _finite(nfiles) else "<h3>Files</h3>"
        )
        if js.classes.empty:
            body.append(p(_NO_FILES))
        else:
            body.append(frame_html(js.classes, max_rows=None))
        if len(js.top_files):
            body.append(f"<h3>Top {len(js.top_files)} files by bytes moved</h3>")
            body.append(frame_html(_safe_frame(js.top_files), max_rows=None))
        layer = f" ({_safe(js.sizes_layer)})" if js.sizes_layer else ""
        body.append(f"<h3>Access sizes{e(layer)}</h3>")
        if js.sizes.empty:
            body.append(p("No reads or writes with a size recorded."))
        else:
            view = js.sizes.drop(columns=["bin_lo", "bin_hi"])
            body.append(frame_html(view, max_rows=None))
        body.append("<h3>Cycles</h3>")
        body.append(p(js.cycles["text"]))
        body.append("<h3>The system during the job</h3>")
        body.append(p(js.system.get("text", "")))
        c = js.severity_counts()
        body.append(
            f"<h3>Insights: {c['high']} high, {c['warn']} warn, {c['info']} info</h3>"
            + p(
                f"{js.not_checked} rule{'s' if js.not_checked != 1 else ''} not checked for "
                "lack of data.",
                "iochar-note",
            )
        )
        if not js.insights:
            body.append(p(_no_finding(js)))
        else:
            items = []
            for f in js.insights:
                sev = f["severity"]
                items.append(
                    f'<li class="{e(sev)}"><span class="sev sev-{e(sev)}">{e(_MARK[sev])}</span> '
                    f"<strong>{e(_safe(f['code']))}</strong> {e(_safe(f['title']))}"
                    f'<div class="ev">{e(_evidence_text(f["evidence"]))}</div>'
                    f'<div class="rec">{e(_safe(f["recommendation"]))}</div></li>'
                )
            body.append('<ul class="findings">' + "".join(items) + "</ul>")
        body.append("</section>")
    if len(s.jobs) > 1:
        tot = s.totals
        fnd = tot["findings"]
        body.append('<section><h2 id="set">The set</h2>')
        body.append(
            p(
                f"{tot['jobs']} jobs, {_n(tot['nprocs'])} processes over "
                f"{_s(tot['runtime_s'])} of run time; read {_b(tot['bytes_read'])}, wrote "
                f"{_b(tot['bytes_written'])}; I/O time of the slowest processes "
                f"{_s(tot['slowest_io_s'])}; findings: {fnd['high']} high, {fnd['warn']} "
                f"warn, {fnd['info']} info."
            )
        )
        body.append(frame_html(_safe_frame(set_rows(s)), max_rows=None))
        body.append("</section>")
    when = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    inputs = ", ".join(_safe(i["path"]) for i in s.inputs) or MISSING
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{e(title)}</title><style>{_CSS}{_PAGE_CSS}</style></head><body>"
        f"<header><h1>{e(title)}</h1>"
        f'<div class="meta">iochar {e(__version__)}, {e(when)}. Inputs: {e(inputs)}</div>'
        f"</header><main>{''.join(body)}</main></body></html>\n"
    )


def _safe_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Text columns with control characters shown as U+FFFD (HTML escapes the rest)."""
    out = df.copy()
    for c in out.columns:
        if not pd.api.types.is_numeric_dtype(out[c].dtype):
            out[c] = out[c].map(lambda v: v if not isinstance(v, str) else _safe(v))
    return out
