"""Required, checkpoint and staging I/O per file (Miller & Katz 1991, section 5.1).

The paper divides an application's I/O into three types:

- **required** ("compulsory") I/O reads the program's initial state and
  writes its final state: reads at the start, writes at the end, each byte
  about once;
- **checkpoint** I/O saves the computation's state "every few iterations":
  writes that come back in regular bursts, to one file overwritten or to a
  series of files (``ckpt.000``, ``ckpt.001``...), seldom read back;
- **staging** I/O shuttles a data set too large for memory "in and out of
  memory at least once per iteration": the same bytes read and written again
  and again, reads following writes, all through the run.

:func:`classify` gives every (job, file) one of ``required``,
``checkpoint``, ``staging`` or ``other``, with the evidence the
rule used (``reason``) and a ``confidence`` in [0, 1]. The rules, in order:

1. staging: read and written, read after written, and re-read or re-written
   at least ``reuse`` times its extent; confidence grows with the re-use.
2. checkpoint: written (reads at most 10% of the bytes written) either in at
   least 3 write bursts at regular intervals, not all at one end of the run,
   or as one of at least 3 files of a numbered series (``ckpt.000``,
   ``ckpt.001``: the digits of the file name vary) whose first writes come at
   regular intervals, at least two of them before the run's last ``edge``;
   confidence is 1 minus the coefficient of variation of the intervals
   (jitter lowers it).
3. required: read-only with its reads in the first ``edge`` of the run, or
   read about once (at most 1.2 times its extent) from the first ``edge`` on;
   or write-only with its writes in the last ``edge`` of the run.
4. other: anything else, with the facts that kept it out of 1-3; a file the
   job only opened, stat'ed or synced (no data moved) is ``other`` saying so.

From Darshan counters alone (``file_stats``, no per-op times) bursts are
unknown: a written file is a checkpoint when a numbered series' first writes
come at regular times (rule 2's second form, from the first-write
timestamps), or when it was re-written at least ``reuse`` times its extent
over at least a quarter of the run (confidence 0.5: regularity not measurable);
head and tail shares are estimated by spreading each file's reads and writes
evenly between its first and last timestamps.

Measured on per-operation records (``ops``, one Darshan layer); a file's
extent is the highest offset touched. Files whose offsets are unknown use the
bytes transferred as their extent.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from iochar._validation import check_int, check_real
from iochar.analyze._sql import LAYER_OPS
from iochar.analyze.fileio import FileIO, check_params, file_io
from iochar.result import Table

__all__ = ["classify", "class_rate", "class_breakdown", "CLASSES"]

#: The labels, a partition of the files with reads or writes.
CLASSES = ("required", "checkpoint", "staging", "other")


_DIGITS = re.compile(r"[0-9]+")


def _series_pattern(path: str) -> str:
    """``/d/ckpt.#`` for ``/d/ckpt.012``: the file name's digit runs as ``#`` (its
    folder kept as is), or '' when the name has no digit."""
    head, _, name = path.rpartition("/")
    if not _DIGITS.search(name):
        return ""
    return f"{head}/{_DIGITS.sub('#', name)}"


def _series_patterns(paths: pd.Series) -> pd.Series:
    """:func:`_series_pattern` of every path at once, in Arrow's string kernels."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = pa.array(paths.astype(object).where(paths.notna(), ""), type=pa.string())
    parts = pc.extract_regex(arr, r"^(?P<head>(?:.*/)?)(?P<name>[^/]*)$")
    head = pc.struct_field(parts, "head")
    name = pc.struct_field(parts, "name")
    folder = pc.utf8_slice_codeunits(head, 0, -1)  # without its trailing "/"
    joined = pc.binary_join_element_wise(
        folder, pc.replace_substring_regex(name, r"[0-9]+", "#"), "/"
    )
    out = pc.if_else(pc.match_substring_regex(name, r"[0-9]"), joined, "")
    return pd.Series(out.to_pylist(), index=paths.index, dtype=object)


def _bursts(t: np.ndarray, gap_s: float) -> np.ndarray:
    """Start times of write bursts: a new burst after a pause longer than ``gap_s``."""
    if len(t) == 0:
        return t
    new = np.concatenate(([True], np.diff(t) > gap_s))
    return t[new]


def _cv(starts: np.ndarray) -> tuple[float, float]:
    """Mean interval and its coefficient of variation, for >= 3 starts."""
    d = np.diff(np.sort(starts))
    if len(d) < 2 or d.mean() <= 0:
        return float("nan"), float("nan")
    return float(d.mean()), float(d.std() / d.mean())


def classify(
    store,
    *,
    job_id: int | None = None,
    edge: float = 0.1,
    reuse: float = 1.5,
    burst_gap_s: float | None = None,
    max_cv: float = 0.3,
) -> pd.DataFrame:
    """Label each file's I/O required, checkpoint, staging or other, with evidence.

    Parameters
    ----------
    store : iochar.Store or iochar.analyze.fileio.FileIO
        The database, or the per-file facts already computed from it by
        :func:`~iochar.analyze.fileio.file_io` (then ``edge`` and
        ``burst_gap_s`` are those it was computed with).
    job_id : int, optional
        Only this job.
    edge : float, default 0.1
        Share of the run that counts as its start or its end.
    reuse : float, default 1.5
        Re-read or re-write factor (bytes over extent) that marks staging.
    burst_gap_s : float, optional
        A pause between writes longer than this starts a new burst [s];
        default 1% of the job's run time (at least 1 ms).
    max_cv : float, default 0.3
        Largest coefficient of variation of burst intervals still called
        regular (tolerates jitter).

    Returns
    -------
    pandas.DataFrame
        One row per (job, file) the job touched: ``job_id``,
        ``file_id``, ``path``, ``class`` (one of :data:`CLASSES`),
        ``confidence`` in [0, 1], ``reason`` (the evidence in words), and the
        evidence columns ``basis`` (ops, or the Darshan module whose counters
        were used), ``bytes_read``, ``bytes_written`` [bytes], ``reads``,
        ``writes`` (calls), ``extent_bytes`` [bytes],
        ``reread`` and ``rewrite`` (bytes over extent), ``read_after_write``,
        ``head_share`` and ``tail_share`` (share of bytes in the first and
        last ``edge`` of the run; estimated from first/last timestamps for
        counters), ``write_bursts``, ``burst_interval_s``, ``burst_cv``
        (unknown for counters), ``series`` (numbered-file pattern, when any)
        and ``series_files``.
    """
    caller = "classify"
    job_id, edge, burst_gap_s = check_params(job_id, edge, burst_gap_s, caller)
    reuse = check_real(reuse, "reuse", caller, "a float > 1", low=1, low_open=True)
    max_cv = check_real(max_cv, "max_cv", caller, "a positive float", low=0, low_open=True)

    if isinstance(store, FileIO):
        facts = store.for_job(job_id)
        edge, burst_gap_s = facts.edge, facts.burst_gap_s
    else:
        facts = file_io(store, job_id=job_id, edge=edge, burst_gap_s=burst_gap_s)
    f = facts.files[facts.files["file_id"].notna()].copy()
    cols = [
        "job_id", "file_id", "path", "class", "confidence", "reason", "basis", "bytes_read",
        "bytes_written", "reads", "writes", "extent_bytes", "reread", "rewrite", "read_after_write",
        "head_share", "tail_share", "write_bursts", "burst_interval_s", "burst_cv",
        "series", "series_files",
    ]  # fmt: skip
    if f.empty:
        return pd.DataFrame(columns=cols)
    f["file_id"] = f["file_id"].astype("int64")
    f["runtime_s"] = f["span_s"]
    denom = f["extent_bytes"].where(f["extent_bytes"] > 0)
    f["reread"] = f["bytes_read"] / denom
    f["rewrite"] = f["bytes_written"] / denom
    f["read_after_write"] = (f["last_read_t"] > f["first_write_t"]).fillna(False).astype(bool)

    # numbered series of files (ckpt.000, ckpt.001, ...) written at regular times:
    # digits of the file name (not of its folder) vary; ranks writing at the same
    # moment count once; the series must not lie wholly in the run's last part
    f["series"] = None
    f["series_files"] = 0
    f["series_cv"] = np.nan
    f["series_interval_s"] = np.nan
    pattern = _series_patterns(f["path"])
    for (_job, pat), g in f[pattern != ""].groupby([f.job_id, pattern]):
        t = np.sort(g["first_write_t"].dropna().to_numpy(dtype=np.float64))
        if len(t) < 3:
            continue
        rt = float(g["runtime_s"].iloc[0])
        gap = burst_gap_s if burst_gap_s is not None else max(0.01 * rt, 1e-3)
        starts = _bursts(t, gap)
        early = (starts < (1 - edge) * rt).sum()
        if len(starts) >= 3 and early >= 2:
            mean, cv = _cv(starts)
            f.loc[g.index, "series"] = pat
            f.loc[g.index, "series_files"] = len(g)
            f.loc[g.index, "series_cv"] = cv
            f.loc[g.index, "series_interval_s"] = mean

    f["class"], f["confidence"], f["reason"] = _rules(f, edge, reuse, max_cv)
    return f[cols].reset_index(drop=True)


def _rules(f: pd.DataFrame, edge: float, reuse: float, max_cv: float):
    """Apply the module's rules 1-4 to every file's evidence at once.

    Returns the labels, confidences and reasons as arrays in ``f``'s order.
    """
    n = len(f)
    num = {c: f[c].to_numpy(np.float64, na_value=np.nan) for c in _RULE_COLUMNS}
    br, bw = num["bytes_read"], num["bytes_written"]
    rd, wr = br > 0, bw > 0
    reread = np.nan_to_num(num["reread"])
    rewrite = np.nan_to_num(num["rewrite"])
    head, tail = num["head_share"], num["tail_share"]
    bursts, cv = num["write_bursts"], num["burst_cv"]
    span = np.where(num["runtime_s"] > 0, num["runtime_s"], np.nan)
    raw = f["read_after_write"].to_numpy(bool)
    staging = rd & wr & raw & (np.maximum(reread, rewrite) >= reuse)
    mostly_written = wr & (br <= 0.1 * bw)
    spread = (head < 0.9) & (tail < 0.9)  # not all at one end of the run
    timed = ~np.isnan(bursts)  # per-op times known (ops, not counters)
    ck_bursts = mostly_written & spread & timed & (bursts >= 3) & (cv <= max_cv)
    ck_series = mostly_written & (num["series_files"] >= 3) & (num["series_cv"] <= max_cv)
    write_span = np.where(wr, (num["last_write_t"] - num["first_write_t"]) / span, 0.0)
    ck_counters = mostly_written & ~timed & (rewrite >= reuse) & (write_span >= 0.25) & spread
    read_only, write_only = rd & ~wr, wr & ~rd
    req_head = read_only & (head >= 0.9)
    req_once = read_only & (num["first_read_t"] < edge * num["runtime_s"]) & (reread <= 1.2)
    req_tail = write_only & (tail >= 0.9)
    no_data = ~rd & ~wr  # metadata calls only (or reads at end of file)
    masks = [no_data, staging, ck_bursts, ck_series, ck_counters, req_head, req_once, req_tail]
    which = np.select(masks, np.arange(len(masks)), default=len(masks))
    labels = np.array(
        ["other", "staging", "checkpoint", "checkpoint", "checkpoint", "required", "required",
         "required", "other"],
        dtype=object,
    )[which]  # fmt: skip
    conf = np.select(
        masks,
        [np.ones(n), np.minimum(reread, rewrite) / (2 * reuse) + 0.5, 1 - cv,
         1 - num["series_cv"],
         np.full(n, 0.5), head, np.full(n, 0.6), tail],
        default=0.5,
    )  # fmt: skip
    conf = np.round(np.clip(np.nan_to_num(conf, nan=0.5), 0.0, 1.0), 3)

    reasons = np.empty(n, dtype=object)
    # the reasons are written one file at a time: Python lists index far faster
    # than numpy arrays element by element
    ext = f["extent_bytes"].to_numpy().tolist()
    series = f["series"].to_numpy(object).tolist()
    calls = f[["reads", "writes", "other_calls"]].to_numpy().tolist()
    num = {k: v.tolist() for k, v in num.items()}
    reread, rewrite, head, tail = reread.tolist(), rewrite.tolist(), head.tolist(), tail.tolist()
    bursts, cv, span, rd, wr = bursts.tolist(), cv.tolist(), span.tolist(), rd.tolist(), wr.tolist()
    timed = timed.tolist()

    def fill(k, fmt):
        idx = np.flatnonzero(which == k)
        reasons[idx] = [fmt(i) for i in idx.tolist()]

    fill(0, lambda i: (
        f"no data moved: {calls[i][0]} reads and {calls[i][1]} writes of 0 bytes, "
        f"{calls[i][2]} other calls (metadata only)"
    ))  # fmt: skip
    fill(1, lambda i: (
        f"re-read {reread[i]:.1f}x and re-written {rewrite[i]:.1f}x its {ext[i]} B "
        "extent, read after written"
    ))  # fmt: skip
    fill(2, lambda i: (
        f"written in {int(bursts[i])} bursts every {num['burst_interval_s'][i]:.3g} s "
        f"(CV {cv[i]:.2f})"
    ))  # fmt: skip
    fill(3, lambda i: (
        f"one of {int(num['series_files'][i])} files {series[i]!r} written every "
        f"{num['series_interval_s'][i]:.3g} s (CV {num['series_cv'][i]:.2f})"
    ))  # fmt: skip
    fill(4, lambda i: (
        f"written {rewrite[i]:.1f}x its {ext[i]} B extent from "
        f"{num['first_write_t'][i] / span[i]:.0%} to {num['last_write_t'][i] / span[i]:.0%} "
        "of the run (counters only: regularity not measurable)"
    ))  # fmt: skip
    fill(5, lambda i: f"read only, {head[i]:.0%} of it in the first {edge:.0%} of the run")
    fill(6, lambda i: (
        f"read only, about once ({reread[i]:.2f}x its extent), from the start of the run"
    ))  # fmt: skip
    fill(7, lambda i: f"written only, {tail[i]:.0%} of it in the last {edge:.0%} of the run")

    def other(i):
        facts = [
            f"read {reread[i]:.2f}x" if rd[i] else "never read",
            f"written {rewrite[i]:.2f}x" if wr[i] else "never written",
            (f"{int(bursts[i])} write burst" + ("" if int(bursts[i]) == 1 else "s"))
            if wr[i] and timed[i]
            else "",
            f"{head[i]:.0%} at start, {tail[i]:.0%} at end",
        ]
        return "no rule fits: " + ", ".join(x for x in facts if x)

    fill(8, other)
    return labels, conf, reasons


_RULE_COLUMNS = (
    "bytes_read", "bytes_written", "reread", "rewrite", "head_share", "tail_share",
    "write_bursts", "burst_cv", "burst_interval_s", "runtime_s", "series_files", "series_cv",
    "series_interval_s", "first_write_t", "last_write_t", "first_read_t",
)  # fmt: skip


_CLASS_RATE_SQL = f"""
WITH layer AS ({LAYER_OPS}),
lab AS (SELECT * FROM classes),
binned AS (
  SELECT floor(l.t_start / $bin_s)::BIGINT AS b, coalesce(c.class, 'other') AS class,
         sum(l.size) AS nbytes, count(*) AS n
  FROM layer l LEFT JOIN lab c ON c.job_id = l.job_id AND c.file_id = l.file_id
  WHERE l.job_id = $job_id GROUP BY ALL
),
grid AS (SELECT range AS b FROM range(0, (SELECT coalesce(max(b), -1) + 1 FROM binned)))
SELECT g.b * $bin_s AS t_s, k.class, coalesce(x.nbytes, 0) AS bytes, coalesce(x.n, 0) AS ios,
       coalesce(x.nbytes, 0) / $bin_s AS bps
FROM grid g CROSS JOIN (SELECT unnest($classes) AS class) k
LEFT JOIN binned x ON x.b = g.b AND x.class = k.class
ORDER BY t_s, k.class
"""


def class_rate(store, *, job_id: int, bin_s: float = 1.0, **rules) -> pd.DataFrame:
    """Data rate over time of one job, split by I/O class (Miller & Katz Figs. 3-4).

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int
        The job.
    bin_s : float, default 1.0
        Bin width. [s]
    **rules
        Passed to :func:`classify` (``edge``, ``reuse``...).

    Returns
    -------
    pandas.DataFrame
        ``t_s`` (bin start since job start [s]), ``class``, ``bytes``
        [bytes], ``ios``, ``bps`` [bytes/s]; every bin and class present.
    """
    job_id = check_int(job_id, "job_id", "class_rate", "an int")
    bin_s = check_real(
        bin_s, "bin_s", "class_rate", "a positive number of seconds", low=0, low_open=True
    )
    labels = classify(store, job_id=job_id, **rules)[["job_id", "file_id", "class"]]
    store.con.register("classes", labels)
    try:
        params = {"job_id": job_id, "bin_s": float(bin_s), "classes": list(CLASSES)}
        df = store.sql(_CLASS_RATE_SQL, params=params).df()
        return Table(df, params={**params, **rules}, sql=_CLASS_RATE_SQL)
    finally:
        store.con.unregister("classes")


def class_breakdown(labels: pd.DataFrame) -> pd.DataFrame:
    """Share of bytes, of I/O operations and of files per class, from a :func:`classify` result.

    Parameters
    ----------
    labels : pandas.DataFrame
        The result of :func:`classify`.

    Returns
    -------
    pandas.DataFrame
        One row per class in :data:`CLASSES` order: ``files``, ``bytes``
        (read + written) [bytes], ``ops`` (read and write calls), and
        ``files_share``, ``bytes_share`` and ``ops_share``.
    """
    g = (
        labels.assign(
            bytes=labels["bytes_read"] + labels["bytes_written"],
            ops=labels["reads"] + labels["writes"],
        )
        .groupby("class")
        .agg(files=("file_id", "size"), bytes=("bytes", "sum"), ops=("ops", "sum"))
    )
    g = g.reindex(list(CLASSES), fill_value=0)
    for c in ("files", "bytes", "ops"):
        g[f"{c}_share"] = g[c] / max(int(g[c].sum()), 1)
    return g.reset_index()
