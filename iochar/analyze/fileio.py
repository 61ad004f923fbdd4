"""Per (job, file) I/O summary in one pass: the shared basis of Tables 1-2 and the classes.

Miller & Katz (1991) describe each application by per-file totals (section 3,
Tables 1-2) and sort its files into required, checkpoint and staging I/O by
*when* and *how often* bytes move (section 5.1). Both views need the same
facts per (job, file), so :func:`file_io` computes them once:

- from per-operation records (``ops``) in **one aggregation** over the ops
  (plus a scan for the last op's end of jobs loaded without a run time): bytes, calls, first and
  last read and write times, extent, bytes in the run's first and last
  ``edge``, and a bitmap of the time bins holding writes, from which write
  bursts are counted without sorting the ops;
- for jobs with no ops -- and Darshan jobs whose DXT module Darshan flagged incomplete
  (``incomplete_dxt``) --, from Darshan counters (``file_stats``: per file the sum
  of its POSIX and STDIO records, which count disjoint call families; its MPI-IO
  record only when it has neither), with first/last read and write timestamps and
  no per-op timing:
  head and tail shares are then *estimates* (bytes spread evenly between the
  first and last access) and bursts are unknown.

Layer rule: Darshan's DXT_MPIIO segments repeat DXT_POSIX ones a layer up, so a
job with DXT_POSIX segments is measured on that layer only. Only reads and
writes with a size and no error count.

Write bursts (evidence for checkpoints): the job's span is cut into ``bins``
equal bins; a write bin that starts more than ``burst_gap_s`` after the
previous write bin starts a new burst. Burst times are therefore known to one
bin (``span / bins`` s; :attr:`FileIO.bin_s` per job), and a pause is
measured from bin start to bin start.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from iochar._validation import check_choice, check_int, check_real
from iochar.analyze._query import query
from iochar.analyze._sql import STD_STREAMS, has_dxt_posix, one_layer
from iochar.result import Result

__all__ = ["FileIO", "file_io"]

#: Bins per job span for the write-burst bitmap when ``burst_gap_s`` is the default.
DEFAULT_BINS = 400
_MAX_BINS = 4096

# dxt_partial: Darshan flagged a DXT module incomplete (it ran out of memory and kept
# only the first segments), so the job's ops undercount its files' bytes
_JOBS_SQL = """
SELECT j.job_id, j.app, j.runtime_s,
       coalesce(s.kind = 'darshan'
                AND (coalesce((s.meta -> 'modules' -> 'DXT_POSIX' ->> 'partial')::BOOLEAN, false)
                     OR coalesce((s.meta -> 'modules' -> 'DXT_MPIIO' ->> 'partial')::BOOLEAN,
                                 false)), false) AS dxt_partial
FROM jobs j LEFT JOIN sources s ON s.source_id = j.source_id
WHERE $job_id IS NULL OR j.job_id = $job_id
ORDER BY j.job_id
"""

# only for jobs whose run time was not loaded (e.g. strace without timestamps)
_LAST_T_SQL = """
SELECT job_id, max(t_end) AS last_t FROM ops WHERE list_contains($jobs, job_id) GROUP BY job_id
"""

# One pass over ops, reduced to one layer and one row per (job, file). Each op's
# start is scaled to the job's bins (u = t_start * bins / span; the per-job scale
# is a list parameter indexed by job id, $lo being the first id: ids are dense,
# see _job_lists), so the head and tail cuts are the same for every job and no
# join is needed. Head and tail bytes share one sum: head in the low 64 bits of
# a HUGEINT, tail in the high ones; the write-bin bitmap skips other ops through a
# NULL bin (cheaper than a FILTER). Ops with an error or from a Darshan DXT
# layer are aggregated apart, grouped by call and error state; all other ops
# (the bulk) are grouped by (job, file, op) alone, as narrow as a plain GROUP BY.
_AGGS = """
         sum(o.size) AS nbytes, count(*) AS n,
         min(o.t_start) AS t0, max(o.t_end) AS t1,
         max(o."offset" + o.size) AS ext_known,
         sum(CASE WHEN o.u < $head_u THEN o.size::HUGEINT
                  WHEN o.u >= $tail_u THEN o.size::HUGEINT << 64 END) AS edges,
         bitstring_agg(CASE WHEN o.op = 'write'
                            THEN least(greatest(floor(o.u), 0), $nb - 1)::INTEGER END,
                       0, $nb - 1) AS bins
"""
_SCALED = """(
  SELECT *, t_start * list_extract($scale, job_id - $lo + 1) AS u
  FROM ops WHERE job_id BETWEEN $lo AND $hi
) o"""
_PLAIN = "o.error IS NULL AND (o.call IS NULL OR NOT starts_with(o.call, 'DXT_'))"
_FILE_OPS_SQL = f"""
WITH agg AS (
  SELECT o.job_id, o.file_id, o.op, NULL::VARCHAR AS call, true AS ok, {_AGGS}
  FROM {_SCALED}
  WHERE {_PLAIN}
  GROUP BY o.job_id, o.file_id, o.op
  UNION ALL
  SELECT o.job_id, o.file_id, o.op, o.call, o.error IS NULL AS ok, {_AGGS}
  FROM {_SCALED}
  WHERE NOT ({_PLAIN})
  GROUP BY o.job_id, o.file_id, o.op, o.call, o.error IS NULL
),
io AS (
  SELECT *, op IN ('read', 'write') AND ok AND nbytes IS NOT NULL AS data,
         {has_dxt_posix("call")} OVER (PARTITION BY job_id) AS has_posix
  FROM agg
  WHERE list_extract($want, job_id - $lo + 1)
    AND ((op IN ('read', 'write') AND ok AND nbytes IS NOT NULL) OR file_id IS NOT NULL)
),
layer AS (
  SELECT * FROM io WHERE {one_layer("call", "has_posix")}
)
SELECT l.job_id, l.file_id, any_value(f.path) AS path,
       coalesce(sum(nbytes) FILTER (WHERE data AND op = 'read'), 0) AS bytes_read,
       coalesce(sum(nbytes) FILTER (WHERE data AND op = 'write'), 0) AS bytes_written,
       coalesce(sum(n) FILTER (WHERE data AND op = 'read'), 0) AS reads,
       coalesce(sum(n) FILTER (WHERE data AND op = 'write'), 0) AS writes,
       coalesce(sum(n) FILTER (WHERE NOT data), 0) AS other_calls,
       min(t0) FILTER (WHERE data AND op = 'read') AS first_read_t,
       max(t1) FILTER (WHERE data AND op = 'read') AS last_read_t,
       min(t0) FILTER (WHERE data AND op = 'write') AS first_write_t,
       max(t1) FILTER (WHERE data AND op = 'write') AS last_write_t,
       max(ext_known) FILTER (WHERE data) AS ext_known,
       coalesce(sum(edges % 18446744073709551616) FILTER (WHERE data), 0)::BIGINT AS head_bytes,
       coalesce(sum(edges // 18446744073709551616) FILTER (WHERE data), 0)::BIGINT AS tail_bytes,
       bit_or(bins) FILTER (WHERE data AND op = 'write')::BLOB AS wbits
FROM layer l LEFT JOIN files f ON f.job_id = l.job_id AND f.file_id = l.file_id
GROUP BY l.job_id, l.file_id
ORDER BY l.job_id, l.file_id
"""


def _job_lists(ids: np.ndarray, **values: np.ndarray) -> dict:
    """Per-job constants as lists indexed by ``job_id - lo`` (see ``_FILE_OPS_SQL``).

    Job ids are allocated densely by the store, so the lists are about as long
    as the number of jobs; ids missing from ``ids`` get ``want = false``.
    """
    lo, hi = (int(ids.min()), int(ids.max())) if len(ids) else (0, -1)
    pos = ids.astype(np.int64) - lo
    out: dict = {"lo": lo, "hi": hi}
    want = np.zeros(hi - lo + 1, dtype=bool)
    want[pos] = True
    out["want"] = want.tolist()
    for name, v in values.items():
        full = np.zeros(hi - lo + 1, dtype=np.float64)
        full[pos] = v
        out[name] = full.tolist()
    return out


# Layer rule as in _counter_facts (Darshan's POSIX and STDIO modules record disjoint
# call families, so a file's bytes are their sum; MPI-IO repeats POSIX through ROMIO
# and counts only for a file with neither record). Darshan's STDIO module names the
# standard streams <STDIN>, <STDOUT>, <STDERR>: a terminal or a pipe, not a file.
_STATS_SQL = f"""
WITH s0 AS (
  SELECT s.*,
         bool_or(s.module IN ('POSIX', 'STDIO')) OVER (PARTITION BY s.job_id, s.file_id) AS low
  FROM file_stats s
  LEFT JOIN files f0 ON f0.job_id = s.job_id AND f0.file_id = s.file_id
  WHERE list_contains($jobs, s.job_id) AND s.module IN ('POSIX', 'STDIO', 'MPI-IO')
    AND coalesce(f0.path, '') NOT IN {STD_STREAMS}
),
s AS (SELECT * FROM s0 WHERE module IN ('POSIX', 'STDIO') OR NOT low)
SELECT s.job_id, s.file_id, any_value(f.path) AS path,
       coalesce(sum(s.bytes_read), 0) AS bytes_read,
       coalesce(sum(s.bytes_written), 0) AS bytes_written,
       coalesce(sum(s.reads), 0) AS reads, coalesce(sum(s.writes), 0) AS writes,
       coalesce(sum(coalesce(s.opens, 0) + coalesce(s.stats, 0) + coalesce(s.seeks, 0)
                    + coalesce(s.syncs, 0)), 0) AS other_calls,
       min(s.first_read_t) FILTER (WHERE s.reads > 0) AS first_read_t,
       max(s.last_read_t) FILTER (WHERE s.reads > 0) AS last_read_t,
       min(s.first_write_t) FILTER (WHERE s.writes > 0) AS first_write_t,
       max(s.last_write_t) FILTER (WHERE s.writes > 0) AS last_write_t,
       max(greatest(coalesce(s.max_byte_read, -1), coalesce(s.max_byte_written, -1)) + 1)
         AS ext_known,
       'file_stats:' || string_agg(DISTINCT s.module, '+' ORDER BY s.module) AS basis
FROM s
LEFT JOIN files f ON f.job_id = s.job_id AND f.file_id = s.file_id
GROUP BY s.job_id, s.file_id
ORDER BY s.job_id, s.file_id
"""


def _job_basis(per_file: pd.Series) -> str:
    """``ops``, or ``file_stats:`` and the modules of all the job's files (``POSIX+STDIO``)."""
    if (per_file == "ops").any():
        return "ops"
    mods = {m for b in per_file for m in b.removeprefix("file_stats:").split("+") if m}
    return "file_stats:" + "+".join(sorted(mods))


_FILE_COLUMNS = [
    "job_id", "file_id", "path", "basis", "span_s", "bytes_read", "bytes_written", "reads",
    "writes", "other_calls", "first_read_t", "last_read_t", "first_write_t", "last_write_t",
    "extent_bytes", "head_bytes", "tail_bytes", "head_share", "tail_share",
    "write_bursts", "burst_interval_s", "burst_cv",
]  # fmt: skip


@dataclass(frozen=True)
class FileIO(Result):
    """The per (job, file) I/O facts behind Tables 1-2 and :func:`classify`.

    Attributes
    ----------
    files : pandas.DataFrame
        One row per (job, file) the job touched (``file_id`` may be NULL for
        I/O on unknown files; a file with only metadata calls has zero reads
        and writes): ``basis`` (``ops`` or ``file_stats:`` and the Darshan
        modules the file's counters came from, ``POSIX+STDIO``),
        ``span_s`` (the job's run time: ``jobs.runtime_s``, or its last op's
        end when no run time was loaded [s]; ops past it count in the last
        burst bin and in the tail), ``bytes_read``,
        ``bytes_written`` [bytes], ``reads``, ``writes``, ``other_calls``
        (opens, stats, seeks, syncs... counted but moving no data),
        ``first_read_t``,
        ``last_read_t``, ``first_write_t``, ``last_write_t`` (start of the
        first and end of the last read, and of the writes; seconds since job
        start), ``extent_bytes`` (the file's size as the job saw it: highest
        byte offset read or written; the bytes moved in the larger direction
        when no offset is known) [bytes], ``head_bytes``, ``tail_bytes`` [bytes] and
        ``head_share``, ``tail_share`` (share of the bytes moved in the
        first and last ``edge`` of the span; estimated for counters),
        ``write_bursts``, ``burst_interval_s`` [s] and ``burst_cv`` (count,
        mean interval and coefficient of variation of the intervals of the
        write bursts; NaN with fewer than 3 bursts, or without ops).
    jobs : pandas.DataFrame
        One row per job: ``job_id``, ``app``, ``runtime_s`` (wall clock, as
        loaded) [s], ``span_s`` [s], ``basis`` (``ops``,
        ``file_stats:MODULE`` or ``none``) and ``bin_s`` (burst time
        resolution [s]).
    edge : float
        Share of the span counted as its start or its end.
    burst_gap_s : float or None
        Pause that starts a new write burst [s]; None: 1% of each job's span.
    memo : dict
        Results derived from these facts (e.g. the per-job sums Tables 1 and 2
        share), filled on first use.
    params : dict
        The parameters as used (see :class:`iochar.result.Result`).
    sql : str or None
        The SQL that read the store, or None.
    """

    files: pd.DataFrame
    jobs: pd.DataFrame
    edge: float
    burst_gap_s: float | None
    #: Results derived from these facts, kept for the tables that share them.
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    def for_job(self, job_id: int | None) -> FileIO:
        """These facts for one job only (all of them when ``job_id`` is None).

        Parameters
        ----------
        job_id : int or None
            The job to keep.

        Returns
        -------
        FileIO
            The rows of ``files`` and ``jobs`` for that job.
        """
        if job_id is None:
            return self
        return FileIO(
            self.files[self.files["job_id"] == job_id].reset_index(drop=True),
            self.jobs[self.jobs["job_id"] == job_id].reset_index(drop=True),
            self.edge,
            self.burst_gap_s,
        )


def check_params(
    job_id: object, edge: object, burst_gap_s: object, caller: str
) -> tuple[int | None, float, float | None]:
    """Check the parameters of :func:`file_io`, for it and for the functions that pass
    them on (:func:`iochar.analyze.classify.classify`).

    Parameters
    ----------
    job_id, edge, burst_gap_s : object
        As :func:`file_io` takes them.
    caller : str
        The function named in the message.

    Returns
    -------
    tuple of (int or None, float, float or None)
        ``job_id``, ``edge``, ``burst_gap_s`` as computed with.

    Raises
    ------
    ParameterError
        One of them out of range.
    """
    job_id = check_int(job_id, "job_id", caller, "None or an int", none=True)
    edge = check_real(
        edge, "edge", caller, "a float in (0, 0.5)", low=0, high=0.5, low_open=True, high_open=True
    )
    burst_gap_s = check_real(
        burst_gap_s,
        "burst_gap_s",
        caller,
        "None or a positive number of seconds",
        low=0,
        low_open=True,
        none=True,
    )
    return job_id, edge, burst_gap_s


def file_io(
    store,
    *,
    job_id: int | None = None,
    edge: float = 0.1,
    burst_gap_s: float | None = None,
    incomplete_dxt: str = "counters",
) -> FileIO:
    """Per (job, file) I/O facts from ops (one pass) or Darshan counters.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        Only this job.
    edge : float, default 0.1
        Share of the run counted as its start or its end (head and tail
        shares), in (0, 0.5).
    burst_gap_s : float, optional
        A pause between writes longer than this starts a new burst [s];
        default 1% of the job's span (at least 1 ms). Burst times are
        resolved to ``span / bins`` with bins = 400 by default, or enough
        for 4 bins per gap (at most 4,096).
    incomplete_dxt : {"counters", "trace"}, default "counters"
        What to read for a Darshan job whose DXT module Darshan flagged incomplete
        (its trace buffer filled, so the segments kept undercount the files' bytes):
        its counters, which count every call, when it has them ("counters"), or the
        segments kept ("trace").

    Returns
    -------
    FileIO
        The per-file and per-job frames (see :class:`FileIO`).

    Raises
    ------
    ParameterError
        ``job_id``, ``edge``, ``burst_gap_s`` or ``incomplete_dxt`` out of range.
    """
    job_id, edge, burst_gap_s = check_params(job_id, edge, burst_gap_s, "file_io")
    incomplete_dxt = check_choice(
        incomplete_dxt, "incomplete_dxt", "file_io", ("counters", "trace"),
        "'counters' or 'trace'",
    )  # fmt: skip
    jobs = query(store, _JOBS_SQL, params={"job_id": job_id}).df()
    rt = jobs["runtime_s"].astype("float64")
    unknown = jobs.loc[~(rt >= 0), "job_id"].astype("int64").tolist()
    last = (
        query(store, _LAST_T_SQL, params={"jobs": unknown}).df().set_index("job_id")["last_t"]
        if unknown
        else pd.Series(dtype="float64")
    )
    jobs["span_s"] = rt.where(rt >= 0, last.reindex(jobs["job_id"]).to_numpy()).fillna(0.0)
    span = jobs["span_s"].to_numpy(dtype=np.float64)
    gap = np.maximum(0.01 * span, 1e-3) if burst_gap_s is None else np.full(len(span), burst_gap_s)
    if burst_gap_s is None:
        nb = DEFAULT_BINS
    else:
        need = 4.0 * span.max(initial=0.0) / float(burst_gap_s)
        nb = int(min(max(math.ceil(need), 16), _MAX_BINS))
    jobs["bin_s"] = span / nb
    scale = np.where(span > 0, nb / np.where(span > 0, span, 1.0), 0.0)
    params = _job_lists(jobs["job_id"].to_numpy(dtype=np.int64), scale=scale)
    params.update(nb=nb, head_u=edge * nb, tail_u=(1 - edge) * nb)
    ops = query(store, _FILE_OPS_SQL, params=params).df()
    # a job with no positive span: every op starts at or after its end (the tail)
    flat = ops["job_id"].isin(jobs.loc[~(span > 0), "job_id"])
    if flat.any():
        ops.loc[flat, "tail_bytes"] = ops.loc[flat, ["bytes_read", "bytes_written"]].sum(axis=1)
        ops.loc[flat, "head_bytes"] = 0
    ops["basis"] = "ops"
    ops["extent_bytes"] = ops["ext_known"].where(
        ops["ext_known"].notna(), np.maximum(ops["bytes_read"], ops["bytes_written"])
    )
    info = jobs.set_index("job_id")
    k = (gap / np.where(jobs["bin_s"] > 0, jobs["bin_s"], 1.0)).astype(np.float64)
    bursts = _bursts_from_bits(
        ops["wbits"].to_numpy(),
        pd.Series(k, index=jobs["job_id"]).reindex(ops["job_id"]).to_numpy(),
        info["bin_s"].reindex(ops["job_id"]).to_numpy(),
        nb,
    )
    for c, v in bursts.items():
        ops[c] = v

    # a job whose DXT segments Darshan cut short is read from its counters, which count
    # every call, when it has them
    partial = set()
    if incomplete_dxt == "counters":
        partial = set(jobs.loc[jobs["dxt_partial"].astype(bool), "job_id"])
    no_ops = sorted((set(jobs["job_id"]) - set(ops["job_id"])) | partial)
    stats = (
        query(store, _STATS_SQL, params={"jobs": [int(j) for j in no_ops]}).df()
        if no_ops
        else pd.DataFrame()
    )
    if partial and not stats.empty:
        ops = ops[~ops["job_id"].isin(partial & set(stats["job_id"]))]
    if not stats.empty:
        stats["extent_bytes"] = stats["ext_known"].where(
            stats["ext_known"] > 0, np.maximum(stats["bytes_read"], stats["bytes_written"])
        )
        sp = info["span_s"].reindex(stats["job_id"]).to_numpy()
        head_t, tail_t = edge * sp, (1 - edge) * sp
        stats["head_bytes"] = _spread(stats, "read", 0.0, head_t) + _spread(
            stats, "write", 0.0, head_t
        )
        stats["tail_bytes"] = _spread(stats, "read", tail_t, np.inf) + _spread(
            stats, "write", tail_t, np.inf
        )
        stats["write_bursts"] = pd.NA
        stats["burst_interval_s"] = np.nan
        stats["burst_cv"] = np.nan
    parts = [f for f in (ops, stats) if not f.empty]
    files = pd.concat(parts, ignore_index=True) if parts else ops.reindex(columns=_FILE_COLUMNS)
    files["span_s"] = info["span_s"].reindex(files["job_id"]).to_numpy()
    for c in ("bytes_read", "bytes_written", "reads", "writes", "other_calls"):
        files[c] = files[c].astype("int64")
    files["extent_bytes"] = files["extent_bytes"].astype("float64").fillna(0).astype("int64")
    moved = (files["bytes_read"] + files["bytes_written"]).astype("float64")
    moved = moved.where(moved > 0)
    files["head_share"] = (files["head_bytes"] / moved).fillna(0.0).clip(0, 1)
    files["tail_share"] = (files["tail_bytes"] / moved).fillna(0.0).clip(0, 1)
    files["write_bursts"] = files["write_bursts"].astype("Int64")
    files = files[_FILE_COLUMNS].sort_values(["job_id", "file_id"], na_position="last")

    # a job's basis names every module its files' counters came from (POSIX+STDIO...)
    basis = files.groupby("job_id")["basis"].agg(_job_basis)
    jobs["basis"] = basis.reindex(jobs["job_id"]).fillna("none").to_numpy()
    jobs = jobs[["job_id", "app", "runtime_s", "span_s", "basis", "bin_s"]]
    return FileIO(files.reset_index(drop=True), jobs, float(edge), burst_gap_s)


def _spread(df: pd.DataFrame, op: str, lo, hi) -> np.ndarray:
    """Bytes of ``op`` in [lo, hi), spreading them evenly over [first, last] access."""
    nbytes = df[f"bytes_{op}" if op == "read" else "bytes_written"].to_numpy(np.float64)
    a = df[f"first_{op}_t"].to_numpy(np.float64, na_value=np.nan)
    b = df[f"last_{op}_t"].to_numpy(np.float64, na_value=np.nan)
    a = np.where(np.isnan(a), 0.0, a)
    b = np.where(np.isnan(b), a, np.maximum(a, b))
    width = b - a
    inside = np.clip(np.minimum(b, hi) - np.maximum(a, lo), 0.0, None)
    point = (a >= lo) & (a < hi)  # all at one instant
    share = np.where(width > 0, inside / np.where(width > 0, width, 1.0), point.astype(float))
    return np.where(nbytes > 0, nbytes * share, 0.0)


def _bursts_from_bits(
    bits: np.ndarray, gap_bins: np.ndarray, bin_s: np.ndarray, nb: int
) -> dict[str, np.ndarray]:
    """Write bursts per file from bitmaps of the time bins holding writes.

    ``bits`` holds DuckDB ``BIT`` values cast to ``BLOB`` (bin 0 first, after
    ``-nb % 8`` padding bits at the front of the first byte), or None for files
    without writes. A write bin more than ``gap_bins`` bins after the previous
    write bin starts a burst. Returns ``write_bursts`` and, with >= 3 bursts, the
    mean interval between burst starts [s] and its coefficient of variation.
    """
    n = len(bits)
    out = {
        "write_bursts": np.zeros(n, np.int64),
        "burst_interval_s": np.full(n, np.nan),
        "burst_cv": np.full(n, np.nan),
    }
    has = np.array([isinstance(b, (bytes, bytearray, memoryview)) for b in bits], dtype=bool)
    if not has.any():
        return out
    rows = np.flatnonzero(has)
    width, pad = (nb + 7) // 8, -nb % 8
    raw = np.frombuffer(b"".join(bytes(b) for b in bits[rows]), np.uint8).reshape(-1, width)
    occupied = np.unpackbits(raw, axis=1)[:, pad : pad + nb]
    # occupied bins as (row, col), in row then column order
    row, col = np.nonzero(occupied)
    first = np.r_[True, row[1:] != row[:-1]] if len(row) else np.zeros(0, bool)
    prev = np.r_[0, col[:-1]] if len(row) else col
    start = first | (col - prev > gap_bins[rows][row])
    s_row, s_col = row[start], col[start].astype(np.float64)
    count = np.bincount(s_row, minlength=len(rows))
    out["write_bursts"][rows] = count
    # intervals between consecutive burst starts of the same file
    same = s_row[1:] == s_row[:-1]
    step, at = (s_col[1:] - s_col[:-1])[same], s_row[1:][same]
    m = np.maximum(count - 1, 1)
    mean = np.bincount(at, weights=step, minlength=len(rows)) / m
    var = np.bincount(at, weights=step**2, minlength=len(rows)) / m - mean**2
    ok = (count >= 3) & (mean > 0)
    w = bin_s[rows]
    out["burst_interval_s"][rows[ok]] = (mean * w)[ok]
    out["burst_cv"][rows[ok]] = (np.sqrt(np.clip(var, 0, None)) / np.where(mean > 0, mean, 1))[ok]
    return out
