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

:func:`classify` gives every (job, file) with reads or writes one of
``required``, ``checkpoint``, ``staging`` or ``other``, with the evidence the
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
4. other: anything else, with the facts that kept it out of 1-3.

Measured on per-operation records (``ops``, one Darshan layer); a file's
extent is the highest offset touched. Files whose offsets are unknown use the
bytes transferred as their extent.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from iochar.analyze.characterize import _OPS_SQL
from iochar.analyze.fileio import FileIO, file_io
from iochar.errors import ParameterError

__all__ = ["classify", "class_rate", "class_breakdown", "CLASSES"]

#: The labels, a partition of the files with reads or writes.
CLASSES = ("required", "checkpoint", "staging", "other")

_DIGITS = re.compile(r"\d+")


def _series_pattern(path: str) -> str:
    """``/d/ckpt.#`` for ``/d/ckpt.012``: the file name's digit runs as ``#``, or ''."""
    head, _, name = path.rpartition("/")
    if not _DIGITS.search(name):
        return ""
    return f"{head}/{_DIGITS.sub('#', name)}"


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
        One row per (job, file) with reads or writes: ``job_id``,
        ``file_id``, ``path``, ``class`` (one of :data:`CLASSES`),
        ``confidence`` in [0, 1], ``reason`` (the evidence in words), and the
        evidence columns ``basis`` (ops, or the Darshan module whose counters
        were used), ``bytes_read``, ``bytes_written``, ``extent_bytes``,
        ``reread`` and ``rewrite`` (bytes over extent), ``read_after_write``,
        ``head_share`` and ``tail_share`` (share of bytes in the first and
        last ``edge`` of the run; estimated from first/last timestamps for
        counters), ``write_bursts``, ``burst_interval_s``, ``burst_cv``
        (unknown for counters), ``series`` (numbered-file pattern, when any)
        and ``series_files``.
    """
    caller = "classify"
    if job_id is not None and not isinstance(job_id, int):
        raise ParameterError("job_id", caller, "None or an int", job_id)
    if not (isinstance(edge, (int, float)) and 0 < edge < 0.5):
        raise ParameterError("edge", caller, "a float in (0, 0.5)", edge)
    if not (isinstance(reuse, (int, float)) and reuse > 1):
        raise ParameterError("reuse", caller, "a float > 1", reuse)
    if burst_gap_s is not None and not (isinstance(burst_gap_s, (int, float)) and burst_gap_s > 0):
        raise ParameterError(
            "burst_gap_s", caller, "None or a positive number of seconds", burst_gap_s
        )
    if not (isinstance(max_cv, (int, float)) and max_cv > 0):
        raise ParameterError("max_cv", caller, "a positive float", max_cv)

    if isinstance(store, FileIO):
        facts = store
        edge, burst_gap_s = facts.edge, facts.burst_gap_s
        if job_id is not None:
            facts = FileIO(
                facts.files[facts.files["job_id"] == job_id],
                facts.jobs[facts.jobs["job_id"] == job_id],
                edge,
                burst_gap_s,
            )
    else:
        facts = file_io(store, job_id=job_id, edge=edge, burst_gap_s=burst_gap_s)
    f = facts.files[facts.files["file_id"].notna()].copy()
    cols = [
        "job_id", "file_id", "path", "class", "confidence", "reason", "basis", "bytes_read",
        "bytes_written", "extent_bytes", "reread", "rewrite", "read_after_write",
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
    pattern = f["path"].fillna("").map(_series_pattern)
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

    labels, conf, reasons = [], [], []
    for r in f.itertuples(index=False):
        lab, c, why = _rule(r, edge, reuse, max_cv)
        labels.append(lab)
        conf.append(round(float(min(max(c, 0.0), 1.0)), 3))
        reasons.append(why)
    f["class"], f["confidence"], f["reason"] = labels, conf, reasons
    return f[cols].reset_index(drop=True)


def _rule(r, edge: float, reuse: float, max_cv: float) -> tuple[str, float, str]:
    """Apply the module's rules 1-4 to one file's evidence."""
    rd, wr = r.bytes_read > 0, r.bytes_written > 0
    reread = 0.0 if pd.isna(r.reread) else float(r.reread)
    rewrite = 0.0 if pd.isna(r.rewrite) else float(r.rewrite)
    if rd and wr and r.read_after_write and max(reread, rewrite) >= reuse:
        c = min(reread, rewrite) / (2 * reuse) + 0.5
        return (
            "staging",
            c,
            (
                f"re-read {reread:.1f}x and re-written {rewrite:.1f}x its {r.extent_bytes} B "
                f"extent, read after written"
            ),
        )
    mostly_written = wr and r.bytes_read <= 0.1 * r.bytes_written
    spread = r.head_share < 0.9 and r.tail_share < 0.9  # not all at one end of the run
    timed = not pd.isna(r.write_bursts)  # per-op times known (ops, not counters)
    if mostly_written and spread and timed and r.write_bursts >= 3 and r.burst_cv <= max_cv:
        return (
            "checkpoint",
            1 - r.burst_cv,
            (
                f"written in {r.write_bursts} bursts every {r.burst_interval_s:.3g} s "
                f"(CV {r.burst_cv:.2f})"
            ),
        )
    if mostly_written and r.series_files >= 3 and r.series_cv <= max_cv:
        return (
            "checkpoint",
            1 - r.series_cv,
            (
                f"one of {r.series_files} files {r.series!r} written every "
                f"{r.series_interval_s:.3g} s (CV {r.series_cv:.2f})"
            ),
        )
    span = r.runtime_s if r.runtime_s > 0 else float("nan")
    write_span = (r.last_write_t - r.first_write_t) / span if wr else 0.0
    if mostly_written and not timed and rewrite >= reuse and write_span >= 0.5 and spread:
        return (
            "checkpoint",
            0.5,
            (
                f"written {rewrite:.1f}x its {r.extent_bytes} B extent from "
                f"{r.first_write_t / span:.0%} to {r.last_write_t / span:.0%} of the run "
                f"(counters only: regularity not measurable)"
            ),
        )
    if rd and not wr:
        early = r.first_read_t < edge * r.runtime_s
        if r.head_share >= 0.9:
            return (
                "required",
                r.head_share,
                (f"read only, {r.head_share:.0%} of it in the first {edge:.0%} of the run"),
            )
        if early and reread <= 1.2:
            return (
                "required",
                0.6,
                (f"read only, about once ({reread:.2f}x its extent), from the start of the run"),
            )
    if wr and not rd and r.tail_share >= 0.9:
        return (
            "required",
            r.tail_share,
            (f"written only, {r.tail_share:.0%} of it in the last {edge:.0%} of the run"),
        )
    facts = [
        f"read {reread:.2f}x" if rd else "never read",
        f"written {rewrite:.2f}x" if wr else "never written",
        f"{r.write_bursts} write bursts" if wr and timed else "",
        f"{r.head_share:.0%} at start, {r.tail_share:.0%} at end",
    ]
    return "other", 0.5, "no rule fits: " + ", ".join(x for x in facts if x)


_CLASS_RATE_SQL = f"""
WITH layer AS ({_OPS_SQL}),
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
    if not isinstance(job_id, int):
        raise ParameterError("job_id", "class_rate", "an int", job_id)
    if not (isinstance(bin_s, (int, float)) and bin_s > 0):
        raise ParameterError("bin_s", "class_rate", "a positive number of seconds", bin_s)
    labels = classify(store, job_id=job_id, **rules)[["job_id", "file_id", "class"]]
    store.con.register("classes", labels)
    try:
        return store.sql(
            _CLASS_RATE_SQL,
            params={"job_id": job_id, "bin_s": float(bin_s), "classes": list(CLASSES)},
        ).df()
    finally:
        store.con.unregister("classes")


def class_breakdown(labels: pd.DataFrame) -> pd.DataFrame:
    """Share of bytes and of files per class, from a :func:`classify` result.

    Parameters
    ----------
    labels : pandas.DataFrame
        The result of :func:`classify`.

    Returns
    -------
    pandas.DataFrame
        One row per class in :data:`CLASSES` order: ``files``, ``bytes``
        (read + written) [bytes], ``files_share`` and ``bytes_share``.
    """
    moved = labels["bytes_read"] + labels["bytes_written"]
    g = (
        labels.assign(bytes=moved)
        .groupby("class")
        .agg(files=("file_id", "size"), bytes=("bytes", "sum"))
    )
    g = g.reindex(list(CLASSES), fill_value=0)
    g["files_share"] = g["files"] / max(int(g["files"].sum()), 1)
    g["bytes_share"] = g["bytes"] / max(int(g["bytes"].sum()), 1)
    return g.reset_index()
