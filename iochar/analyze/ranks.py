"""Per-rank view over time: which rank moved how many bytes when (Carns et al. 2011 Fig. 13).

Carns et al. (2011, Sec. 5.1, Fig. 13) show "the periods of I/O activity for each
application process over the lifetime of the job", drawn from the timestamps of each
file's first and last access that Darshan keeps, to tell a coordinated job from "a very
sparse, uncoordinated pattern of I/O". PyDarshan's job summary draws the same question as
a heat map: rank on one axis, time on the other, bytes per cell, with the totals per time
bin above and per rank beside it (``darshan.experimental.plots.plot_dxt_heatmap``).

:func:`rank_heatmap` builds that rank x time matrix of bytes (read, written, both) from
the best record a job has, in this order (``source="auto"``):

``ops``
    Per-operation records in ``ops``: Darshan DXT segments (one layer per job, the rule of
    :mod:`iochar.analyze._sql`: DXT_POSIX when the job has it, else DXT_MPIIO, whose
    segments repeat the POSIX ones a layer up), or ``strace`` calls, whose ``rank`` is
    the process or thread id (``strace -f`` prefixes each line with the task id), or an
    iochar trace. Each read or write's bytes are spread evenly over the time it was in
    flight, ``[t_start, t_end]``: a bin gets ``size * overlap / (t_end - t_start)``; an
    operation of no duration counts whole in the bin holding ``t_start``. This is
    PyDarshan's rule ("each bin is populated with the data sum and/or proportionate data
    sum for all IO events read/written during the time spanned by the bin",
    ``heatmap_handling.get_heatmap_df``).
``heatmap``
    Darshan's HEATMAP module (Darshan 3.4+, on by default): per rank and instrumented
    module, the bytes read and written in each of ``NBINS`` bins of
    ``F_BIN_WIDTH_SECONDS`` from the job's start (``module_counters`` rows
    ``HEATMAP_<SRC>_READ_BIN_<i>`` / ``_WRITE_BIN_<i>``). Layers: POSIX, STDIO and DAOS
    are the lowest Darshan instruments and do not repeat one another; MPIIO calls reach
    storage through POSIX (ROMIO) and DFS calls through DAOS, and Darshan counts both,
    so MPIIO and DFS are used only for a job with no POSIX or DAOS heatmap (the IOR
    ``-a DFS`` log in ``data/darshan/darshan-logs/ior_daos`` moves 16,777,216 bytes each
    way in DFS and 16,777,744 / 16,777,304 in DAOS: the same data). Bins are kept as
    Darshan wrote them, joined ``k`` at a time only when there are more than
    ``max_time_bins`` of them.
``counters``
    Darshan's per-rank counter records (a file opened by some ranks only keeps one
    record per rank): each record's bytes read (written) spread evenly between the
    start of its first and the end of its last read (write)
    (``*_F_READ_START_TIMESTAMP`` ... ``*_F_WRITE_END_TIMESTAMP``, the timestamps Carns
    et al. drew Fig. 13 from). An estimate: only the span of each rank's access to each
    file is known. A shared record (a file every rank opened, Darshan rank -1) says
    nothing per rank but which rank was fastest and slowest (:func:`rank_extremes`); its
    bytes are left out of the matrix and counted in the evidence. Layers as in
    :mod:`iochar.analyze._counter_facts`: POSIX and STDIO, MPI-IO only for a file
    without either.

Readable from 1 to 100,000 ranks: past ``max_rank_bins`` rows, ranks are joined into bins
of ``ranks_per_bin`` consecutive ranks, the smallest 1, 2 or 5 x 10^k giving at most
``max_rank_bins`` bins (PyDarshan's ``plot_dxt_heatmap2`` bins ranks the same way and
says "binsize" in its axis title). Time bins cover the job's run
(:func:`iochar.analyze.characterize.job_span`) and any I/O outside it: the smallest 1, 2
or 5 x 10^k seconds giving at most ``max_time_bins`` bins, unless ``bin_s`` or
``time_bins`` is given. Rows are MPI ranks 0 .. nprocs - 1 (idle ranks included, as
PyDarshan reindexes to ``range(nprocs)``) or, for strace, the traced task ids in
increasing order.

:func:`rank_totals` gives each rank's bytes and I/O time and names the slowest and fastest
rank; :func:`rank_extremes` reads Darshan's ``<MOD>_FASTEST_RANK``, ``_SLOWEST_RANK``,
their ``_BYTES`` and ``F_*_RANK_TIME`` and the variances, per shared record
(darshan-runtime documentation, POSIX counters: the ranks with the least and most I/O
time, read + write + metadata, on the file).

Units: bytes, seconds since the job's start.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from iochar._validation import check_choice, check_int, check_real
from iochar.analyze._sql import LAYER_OPS
from iochar.analyze.characterize import job_span
from iochar.errors import ParameterError
from iochar.result import Table, join_sql

__all__ = [
    "SOURCES",
    "CELL_COLUMNS",
    "nice_step",
    "rank_heatmap",
    "rank_matrix",
    "rank_totals",
    "rank_extremes",
    "pick_job",
]

#: What :func:`rank_heatmap` can read, in the order ``"auto"`` tries them.
SOURCES = ("ops", "heatmap", "counters")

#: Columns of :func:`rank_heatmap`'s table.
CELL_COLUMNS = (
    "row_lo", "row_hi", "rank_lo", "rank_hi", "t_start_s", "t_end_s",
    "read_bytes", "write_bytes", "bytes",
)  # fmt: skip

_EPS = 1e-9

#: HEATMAP layers: the lowest Darshan instruments, and the ones above them.
_LOW_LAYERS = ("POSIX", "STDIO", "DAOS")
_HIGH_LAYERS = ("MPIIO", "DFS")


def nice_step(span: float, most: int) -> float:
    """The smallest 1, 2 or 5 x 10^k at least ``span / most`` (a bin width or bin size).

    Parameters
    ----------
    span : float
        What the bins cover (seconds, or a count of ranks).
    most : int
        Most bins wanted.

    Returns
    -------
    float
        The step; 1.0 for a span that is not positive.

    Examples
    --------
    >>> nice_step(1469.0, 200), nice_step(100_000, 256), nice_step(48, 256)
    (10.0, 500.0, 0.2)
    """
    if not (span > 0) or not math.isfinite(span):
        return 1.0
    target = span / most
    e = math.floor(math.log10(target))
    for m in (1, 2, 5, 10):
        step = m * 10.0**e
        if step >= target * (1 - 1e-12):
            return float(step)
    return float(10.0 ** (e + 1))  # pragma: no cover - the loop always returns


_JOB_SQL = """
SELECT j.job_id, j.nprocs, s.kind
FROM jobs j LEFT JOIN sources s USING (source_id) WHERE j.job_id = $job_id
"""

_HAS_SQL = f"""
SELECT
  (SELECT count(*) FROM ({LAYER_OPS}) l WHERE l.job_id = $job_id) AS data_ops,
  (SELECT string_agg(DISTINCT l.call, '+' ORDER BY l.call) FROM ({LAYER_OPS}) l
    WHERE l.job_id = $job_id AND l.call LIKE 'DXT_%') AS dxt,
  (SELECT count(*) FROM module_counters
    WHERE job_id = $job_id AND module = 'HEATMAP' AND counter LIKE 'HEATMAP_%_BIN_%')
    AS heatmap_bins,
  (SELECT count(*) FROM file_stats WHERE job_id = $job_id AND rank IS NOT NULL
    AND module IN ('POSIX', 'STDIO', 'MPI-IO')
    AND coalesce(bytes_read, 0) + coalesce(bytes_written, 0) > 0) AS rank_records,
  (SELECT max(rank) FROM ops WHERE job_id = $job_id) AS max_op_rank,
  (SELECT max(rank) FROM module_counters WHERE job_id = $job_id) AS max_mc_rank
"""

# Rows: the job's ranks as rows of the matrix. $pids: rank is a task id (strace), so rows
# are the distinct ids in increasing order; else row = rank (MPI rank).
_ROWS = """
rows AS (
  SELECT rank, CASE WHEN $pids THEN (row_number() OVER (ORDER BY rank)) - 1
                    ELSE rank END AS row
  FROM (SELECT DISTINCT rank FROM ops WHERE job_id = $job_id AND rank IS NOT NULL)
)"""

# Spread each interval's bytes over the bins of width $w it overlaps (PyDarshan's rule).
_SPREAD = """
cut AS (
  SELECT row, op, size, a, z,
         unnest(range(floor(a / $w + 1e-9)::BIGINT,
                      greatest(floor(a / $w + 1e-9), floor(z / $w - 1e-9))::BIGINT + 1)) AS b
  FROM iv WHERE size > 0
),
part AS (
  SELECT row, b, op,
         CASE WHEN z > a THEN size * greatest(least(z, (b + 1) * $w) - greatest(a, b * $w), 0)
                              / (z - a)
              ELSE size END AS bytes
  FROM cut
)"""

_CELLS = """
SELECT row // $per AS rbin, b,
       coalesce(sum(bytes) FILTER (WHERE op = 'read'), 0) AS read_bytes,
       coalesce(sum(bytes) FILTER (WHERE op = 'write'), 0) AS write_bytes,
       min(rank) AS rank_lo, max(rank) AS rank_hi
FROM part2 GROUP BY rbin, b HAVING sum(bytes) > 0
ORDER BY rbin, b
"""

_OPS_SQL = f"""
WITH layer AS ({LAYER_OPS}),
{_ROWS.strip()},
iv AS (
  SELECT r.row, l.rank, l.op, l.size::DOUBLE AS size, l.t_start AS a,
         greatest(coalesce(l.t_end, l.t_start), l.t_start) AS z
  FROM layer l JOIN rows r USING (rank) WHERE l.job_id = $job_id
),
{_SPREAD.strip()},
part2 AS (SELECT p.*, r.rank FROM part p JOIN rows r USING (row))
{_CELLS}"""

_OPS_EXTENT_SQL = f"""
SELECT min(t_start), max(greatest(coalesce(t_end, t_start), t_start))
FROM ({LAYER_OPS}) l WHERE l.job_id = $job_id
"""

_HEATMAP_SQL = """
WITH h AS (
  SELECT rank, regexp_extract(counter, '^HEATMAP_(.+)_(READ|WRITE)_BIN_([0-9]+)$', 1) AS src,
         lower(regexp_extract(counter, '^HEATMAP_(.+)_(READ|WRITE)_BIN_([0-9]+)$', 2)) AS op,
         regexp_extract(counter, '^HEATMAP_(.+)_(READ|WRITE)_BIN_([0-9]+)$', 3)::BIGINT AS i,
         value
  FROM module_counters
  WHERE job_id = $job_id AND module = 'HEATMAP' AND rank IS NOT NULL
    AND regexp_matches(counter, '^HEATMAP_(.+)_(READ|WRITE)_BIN_([0-9]+)$')
),
w AS (
  SELECT regexp_extract(counter, '^HEATMAP_(.+)_F_BIN_WIDTH_SECONDS$', 1) AS src,
         max(value) AS width
  FROM module_counters
  WHERE job_id = $job_id AND module = 'HEATMAP'
    AND regexp_matches(counter, '^HEATMAP_(.+)_F_BIN_WIDTH_SECONDS$')
  GROUP BY src
)
SELECT h.rank, h.src, h.op, h.i, w.width, h.value
FROM h JOIN w USING (src)
WHERE h.value > 0 AND list_contains($layers, h.src)
"""

_HEATMAP_LAYERS_SQL = """
SELECT DISTINCT regexp_extract(counter, '^HEATMAP_(.+)_NBINS$', 1) AS src,
       max(value) OVER (PARTITION BY counter) AS nbins
FROM module_counters
WHERE job_id = $job_id AND module = 'HEATMAP' AND regexp_matches(counter, '^HEATMAP_(.+)_NBINS$')
"""

# Per-rank counter records, one interval per direction, with the layer rule of
# iochar.analyze._counter_facts (MPI-IO only for a file without POSIX or STDIO records).
_COUNTER_IV = """
s AS (
  SELECT *, bool_or(module IN ('POSIX', 'STDIO')) OVER (PARTITION BY file_id) AS has_low
  FROM file_stats WHERE job_id = $job_id AND module IN ('POSIX', 'STDIO', 'MPI-IO')
),
u AS (SELECT * FROM s WHERE module IN ('POSIX', 'STDIO') OR NOT has_low),
iv AS (
  SELECT rank AS row, rank, 'read' AS op, bytes_read::DOUBLE AS size,
         first_read_t AS a, greatest(coalesce(last_read_t, first_read_t), first_read_t) AS z
  FROM u WHERE rank IS NOT NULL AND bytes_read > 0 AND first_read_t IS NOT NULL
  UNION ALL
  SELECT rank, rank, 'write', bytes_written::DOUBLE,
         first_write_t, greatest(coalesce(last_write_t, first_write_t), first_write_t)
  FROM u WHERE rank IS NOT NULL AND bytes_written > 0 AND first_write_t IS NOT NULL
)"""

_COUNTERS_SQL = f"""
WITH {_COUNTER_IV.strip()},
{_SPREAD.strip()},
part2 AS (SELECT p.*, p.row AS rank FROM part p)
{_CELLS}"""

_COUNTERS_EXTENT_SQL = f"""
WITH {_COUNTER_IV.strip()}
SELECT min(a), max(z) FROM iv
"""

_COUNTERS_LEFT_SQL = """
WITH s AS (
  SELECT *, bool_or(module IN ('POSIX', 'STDIO')) OVER (PARTITION BY file_id) AS has_low
  FROM file_stats WHERE job_id = $job_id AND module IN ('POSIX', 'STDIO', 'MPI-IO')
),
u AS (SELECT * FROM s WHERE module IN ('POSIX', 'STDIO') OR NOT has_low)
SELECT
  coalesce(sum(coalesce(bytes_read, 0) + coalesce(bytes_written, 0))
           FILTER (WHERE rank IS NULL), 0) AS shared_bytes,
  count(DISTINCT file_id) FILTER (WHERE rank IS NULL) AS shared_files,
  coalesce(sum(coalesce(bytes_read, 0) + coalesce(bytes_written, 0))
           FILTER (WHERE rank IS NOT NULL AND
                   ((bytes_read > 0 AND first_read_t IS NULL)
                    OR (bytes_written > 0 AND first_write_t IS NULL))), 0) AS untimed_bytes
FROM u
"""


def _job(store, job_id: int, caller: str) -> tuple[int | None, str | None, dict]:
    row = store.sql(_JOB_SQL, params={"job_id": job_id}).fetchall()
    if not row:
        raise ParameterError("job_id", caller, "a job the database holds", job_id)
    _, nprocs, kind = row[0]
    has = store.sql(_HAS_SQL, params={"job_id": job_id}).df().iloc[0].to_dict()
    return (None if pd.isna(nprocs) else int(nprocs)), kind, has


def _pick_source(source: str, has: dict) -> str | None:
    avail = {
        "ops": int(has["data_ops"] or 0) > 0,
        "heatmap": int(has["heatmap_bins"] or 0) > 0,
        "counters": int(has["rank_records"] or 0) > 0,
    }
    if source == "auto":
        return next((s for s in SOURCES if avail[s]), None)
    return source if avail[source] else None


def _heatmap_layers(store, job_id: int, layer: str | None) -> tuple[list[str], dict]:
    got = store.sql(_HEATMAP_LAYERS_SQL, params={"job_id": job_id}).df()
    nbins = dict(zip(got["src"], got["nbins"], strict=True))
    if layer is not None:
        return [layer], nbins
    low = [s for s in nbins if s in _LOW_LAYERS]
    if any(s in ("POSIX", "DAOS") for s in low):
        return sorted(low), nbins
    return sorted(s for s in nbins if s in _LOW_LAYERS + _HIGH_LAYERS), nbins


def _rows_of(store, job_id: int, pids: bool, nprocs: int | None, has: dict) -> tuple[int, int]:
    """How many rows the matrix has, and the largest rank."""
    if pids:
        n = store.sql(
            "SELECT count(DISTINCT rank), max(rank) FROM ops WHERE job_id = $job_id",
            params={"job_id": job_id},
        ).fetchall()[0]
        return int(n[0] or 0), int(n[1] if n[1] is not None else -1)
    top = max(
        -1
        if has["max_op_rank"] is None or pd.isna(has["max_op_rank"])
        else int(has["max_op_rank"]),
        -1
        if has["max_mc_rank"] is None or pd.isna(has["max_mc_rank"])
        else int(has["max_mc_rank"]),
    )
    rows = max(nprocs or 0, top + 1, 1)
    return rows, rows - 1


def _empty(evidence: dict, params: dict, sql: str | None = None) -> Table:
    df = pd.DataFrame({c: pd.Series(dtype="float64") for c in CELL_COLUMNS})
    for c in ("row_lo", "row_hi", "rank_lo", "rank_hi"):
        df[c] = df[c].astype("int64")
    return Table(df, evidence=evidence, params=params, sql=sql)


def rank_heatmap(
    store,
    *,
    job_id: int,
    source: str = "auto",
    layer: str | None = None,
    bin_s: float | None = None,
    time_bins: int | None = None,
    max_time_bins: int = 200,
    max_rank_bins: int = 256,
) -> Table:
    """Bytes per rank and time bin of one job: the matrix of Carns et al. Fig. 13.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int
        The job.
    source : {"auto", "ops", "heatmap", "counters"}, default "auto"
        Where the bytes come from (module notes); ``"auto"``: the first the job has.
    layer : str, optional
        For ``source="heatmap"``: one Darshan HEATMAP module (``"POSIX"``, ``"MPIIO"``,
        ``"STDIO"``, ``"DFS"``, ``"DAOS"``) instead of the layer rule.
    bin_s : float, optional
        Time bin width [s] (ops and counters; HEATMAP bins are Darshan's own).
    time_bins : int, optional
        Number of bins over the job's span instead (``bin_s = span / time_bins``; ops and
        counters only, as ``bin_s``).
    max_time_bins : int, default 200
        Most time bins when neither is given (PyDarshan draws 200).
    max_rank_bins : int, default 256
        Most rank rows before ranks are joined into bins.

    Returns
    -------
    iochar.result.Table
        One row per (rank bin, time bin) with bytes (cells with none are left out):
        ``row_lo``, ``row_hi`` (first and last row of the bin, 0-based, inclusive),
        ``rank_lo``, ``rank_hi`` (the ranks or task ids there), ``t_start_s``,
        ``t_end_s`` (the bin [s since job start]), ``read_bytes``, ``write_bytes``,
        ``bytes`` [bytes]. ``evidence``: ``source``, ``basis`` (what was read, in words),
        ``rank_kind`` ("MPI rank" or "task id"), ``rows`` (ranks shown, idle ones
        included), ``ranks_per_bin``, ``rank_bins``, ``bin_s`` [s], ``time_bins``,
        ``t_lo_s``, ``t_hi_s`` (the grid) [s], ``span_s`` and ``span_basis`` (the job's
        run), ``read_bytes``, ``write_bytes``, ``bytes`` [bytes], ``left_out_bytes``
        (shared-record or untimed bytes the counters cannot place) [bytes], ``layers``
        and ``reason`` (why the table is empty, else None).
    """
    caller = "rank_heatmap"
    job_id = check_int(job_id, "job_id", caller, "an int")
    source = check_choice(source, "source", caller, ("auto", *SOURCES))
    if layer is not None:
        layer = check_choice(layer, "layer", caller, _LOW_LAYERS + _HIGH_LAYERS)
    bin_s = check_real(
        bin_s, "bin_s", caller, "a positive number of seconds", low=0, low_open=True, none=True
    )
    time_bins = check_int(time_bins, "time_bins", caller, "an int >= 1", low=1, none=True)
    if bin_s is not None and time_bins is not None:
        raise ParameterError("time_bins", caller, "None when bin_s is given", time_bins)
    max_time_bins = check_int(max_time_bins, "max_time_bins", caller, "an int >= 1", low=1)
    max_rank_bins = check_int(max_rank_bins, "max_rank_bins", caller, "an int >= 1", low=1)
    params = {
        "job_id": job_id, "source": source, "layer": layer, "bin_s": bin_s,
        "time_bins": time_bins, "max_time_bins": max_time_bins, "max_rank_bins": max_rank_bins,
    }  # fmt: skip
    nprocs, kind, has = _job(store, job_id, caller)
    span = job_span(store, job_id=job_id)
    used = _pick_source(source, has)
    base = {
        "source": used or "none", "span_s": span.duration_s, "span_basis": span.basis,
        "left_out_bytes": 0.0, "layers": None, "reason": None,
    }  # fmt: skip
    if used is None:
        base["reason"] = (
            f"job {job_id} has no per-rank record over time: no read or write in ops "
            "(DXT, strace, trace), no Darshan HEATMAP bins and no per-rank Darshan counter "
            "records with bytes"
            if source == "auto"
            else f"job {job_id} has no {source!r} record to read"
        )
        return _empty(base, params, join_sql(_JOB_SQL, _HAS_SQL))
    pids = used == "ops" and kind == "strace"
    nrows, _ = _rows_of(store, job_id, pids, nprocs, has)
    per = max(1, int(nice_step(nrows, max_rank_bins))) if nrows > max_rank_bins else 1
    sql_parts = [_JOB_SQL, _HAS_SQL]

    if used == "heatmap":
        layers, nbins = _heatmap_layers(store, job_id, layer)
        hm = store.sql(_HEATMAP_SQL, params={"job_id": job_id, "layers": layers}).df()
        sql_parts.append(_HEATMAP_SQL)
        w0 = float(hm["width"].max()) if len(hm) else math.nan
        n0 = int(max((nbins.get(s, 0) for s in layers), default=0))
        k = max(1, math.ceil(n0 / max_time_bins))
        w = w0 * k
        hm["b"] = np.floor(hm["i"] * hm["width"] / w + _EPS).astype(np.int64)
        hm["row"] = hm["rank"].astype(np.int64)
        hm["rbin"] = hm["row"] // per
        cells = (
            hm.pivot_table(index=["rbin", "b"], columns="op", values="value", aggfunc="sum")
            .reindex(columns=["read", "write"])
            .fillna(0.0)
            .rename(columns={"read": "read_bytes", "write": "write_bytes"})
            .reset_index()
        )
        rk = hm.groupby(["rbin", "b"])["rank"].agg(["min", "max"]).reset_index()
        cells = cells.merge(rk, on=["rbin", "b"]).rename(
            columns={"min": "rank_lo", "max": "rank_hi"}
        )
        lo_b, hi_b = 0, max(n0 - 1, 0) // k
        basis = f"Darshan HEATMAP {'+'.join(layers)} ({n0} bins of {w0:g} s per rank)"
        base["layers"] = "+".join(layers)
    else:
        if used == "ops":
            ext = store.sql(_OPS_EXTENT_SQL, params={"job_id": job_id}).fetchall()[0]
        else:
            ext = store.sql(_COUNTERS_EXTENT_SQL, params={"job_id": job_id}).fetchall()[0]
        first = float(ext[0]) if ext[0] is not None else 0.0
        last = float(ext[1]) if ext[1] is not None else first
        if math.isfinite(span.start_s) and span.duration_s > 0:
            s0, s1 = span.start_s, span.end_s
        else:
            s0, s1 = first, last
        if bin_s is not None:
            w = bin_s
        elif time_bins is not None:
            w = (s1 - s0) / time_bins if s1 > s0 else 1.0
        else:
            w = nice_step(max(s1, last) - min(s0, first), max_time_bins)
        lo_b = math.floor(min(s0, first) / w + _EPS)
        hi_b = max(math.ceil(max(s1, last) / w - _EPS) - 1, lo_b)
        q = {"job_id": job_id, "w": w, "per": per}
        if used == "ops":
            q["pids"] = pids
            sql = _OPS_SQL
            what = (
                f"{has['dxt']} segments"
                if has["dxt"]
                else f"{kind or 'trace'} reads and writes"
                + (" (rank = process or thread id)" if pids else "")
            )
            basis = f"{what}, bytes spread over each call's duration"
        else:
            sql = _COUNTERS_SQL
            left = store.sql(_COUNTERS_LEFT_SQL, params={"job_id": job_id}).fetchall()[0]
            base["left_out_bytes"] = float(left[0]) + float(left[2])
            base["shared_files"] = int(left[1])
            sql_parts.append(_COUNTERS_LEFT_SQL)
            basis = (
                "Darshan per-rank counter records, each direction's bytes spread evenly "
                "between its first and last access (an estimate)"
            )
        cells = store.sql(sql, params=q).df()
        sql_parts.append(sql)
        base["layers"] = has["dxt"] if used == "ops" else "POSIX+STDIO (MPI-IO without them)"
    cells = cells.sort_values(["rbin", "b"]).reset_index(drop=True)
    out = pd.DataFrame(
        {
            "row_lo": (cells["rbin"] * per).astype("int64"),
            "row_hi": np.minimum(cells["rbin"] * per + per - 1, nrows - 1).astype("int64"),
            "rank_lo": cells["rank_lo"].astype("int64"),
            "rank_hi": cells["rank_hi"].astype("int64"),
            "t_start_s": cells["b"].astype("float64") * w,
            "t_end_s": (cells["b"].astype("float64") + 1) * w,
            "read_bytes": cells["read_bytes"].astype("float64"),
            "write_bytes": cells["write_bytes"].astype("float64"),
        }
    )
    out["bytes"] = out["read_bytes"] + out["write_bytes"]
    if not pids and per == 1:
        out["rank_lo"], out["rank_hi"] = out["row_lo"], out["row_hi"]
    elif not pids:  # a bin of MPI ranks names its whole range, idle ranks included
        out["rank_lo"], out["rank_hi"] = out["row_lo"], out["row_hi"]
    if len(out):
        lo_b = min(lo_b, int(cells["b"].min()))
        hi_b = max(hi_b, int(cells["b"].max()))
    base.update(
        {
            "basis": basis,
            "rank_kind": "task id" if pids else "MPI rank",
            "rows": int(nrows),
            "ranks_per_bin": int(per),
            "rank_bins": int(math.ceil(nrows / per)),
            "bin_s": float(w),
            "time_bins": int(hi_b - lo_b + 1),
            "t_lo_s": float(lo_b * w),
            "t_hi_s": float((hi_b + 1) * w),
            "read_bytes": float(out["read_bytes"].sum()),
            "write_bytes": float(out["write_bytes"].sum()),
            "bytes": float(out["bytes"].sum()),
        }
    )
    if out.empty:
        base["reason"] = f"job {job_id}'s {used} records hold no bytes"
    return Table(out, evidence=base, params=params, sql=join_sql(*sql_parts))


def rank_matrix(cells: pd.DataFrame, *, op: str = "both") -> pd.DataFrame:
    """:func:`rank_heatmap`'s cells as a dense matrix: one row per rank bin, one column
    per time bin (every bin of the grid, zeros included).

    Parameters
    ----------
    cells : iochar.result.Table
        The result of :func:`rank_heatmap` (its evidence gives the grid).
    op : {"both", "read", "write"}, default "both"
        Which bytes.

    Returns
    -------
    pandas.DataFrame
        Index ``row_lo`` (first row of each rank bin), columns ``t_start_s`` [s], values
        bytes [bytes].
    """
    op = check_choice(op, "op", "rank_matrix", ("both", "read", "write"))
    col = {"both": "bytes", "read": "read_bytes", "write": "write_bytes"}[op]
    ev = getattr(cells, "evidence", {}) or {}
    per, rows = int(ev.get("ranks_per_bin", 1) or 1), int(ev.get("rows", 0) or 0)
    w, n, t0 = ev.get("bin_s"), int(ev.get("time_bins", 0) or 0), ev.get("t_lo_s", 0.0)
    index = pd.Index(np.arange(0, max(rows, 1), per, dtype=np.int64), name="row_lo")
    cols = pd.Index((t0 + np.arange(n) * w) if w else np.array([], dtype=float), name="t_start_s")
    m = pd.DataFrame(0.0, index=index, columns=cols)
    if len(cells) and n:
        j = np.rint((cells["t_start_s"].to_numpy(float) - t0) / w).astype(np.int64)
        i = (cells["row_lo"].to_numpy(np.int64) // per).astype(np.int64)
        vals = m.to_numpy(copy=True)
        np.add.at(vals, (i, j), cells[col].to_numpy(float))
        m = pd.DataFrame(vals, index=index, columns=cols)
    return m


# ------------------------------------------------------------------------------ per rank

_TOTALS_OPS_SQL = f"""
WITH layer AS ({LAYER_OPS}),
meta AS (
  SELECT rank, sum(greatest(coalesce(t_end, t_start) - t_start, 0)) AS meta_time_s
  FROM ops WHERE job_id = $job_id AND op IN ('open', 'close', 'seek', 'sync', 'stat')
  GROUP BY rank
),
d AS (
  SELECT rank,
         coalesce(sum(size) FILTER (WHERE op = 'read'), 0) AS read_bytes,
         coalesce(sum(size) FILTER (WHERE op = 'write'), 0) AS write_bytes,
         coalesce(sum(greatest(coalesce(t_end, t_start) - t_start, 0))
                  FILTER (WHERE op = 'read'), 0) AS read_time_s,
         coalesce(sum(greatest(coalesce(t_end, t_start) - t_start, 0))
                  FILTER (WHERE op = 'write'), 0) AS write_time_s,
         min(t_start) AS first_io_s, max(coalesce(t_end, t_start)) AS last_io_s
  FROM layer WHERE job_id = $job_id GROUP BY rank
)
SELECT r.rank, coalesce(d.read_bytes, 0)::DOUBLE AS read_bytes,
       coalesce(d.write_bytes, 0)::DOUBLE AS write_bytes,
       coalesce(d.read_time_s, 0) AS read_time_s, coalesce(d.write_time_s, 0) AS write_time_s,
       coalesce(m.meta_time_s, 0) AS meta_time_s, d.first_io_s, d.last_io_s
FROM (SELECT DISTINCT rank FROM ops WHERE job_id = $job_id) r
LEFT JOIN d USING (rank) LEFT JOIN meta m USING (rank)
ORDER BY r.rank
"""

_TOTALS_COUNTERS_SQL = """
WITH s AS (
  SELECT *, bool_or(module IN ('POSIX', 'STDIO')) OVER (PARTITION BY file_id) AS has_low
  FROM file_stats WHERE job_id = $job_id AND module IN ('POSIX', 'STDIO', 'MPI-IO')
),
u AS (SELECT * FROM s WHERE module IN ('POSIX', 'STDIO') OR NOT has_low)
SELECT rank, coalesce(sum(bytes_read), 0)::DOUBLE AS read_bytes,
       coalesce(sum(bytes_written), 0)::DOUBLE AS write_bytes,
       coalesce(sum(read_time), 0) AS read_time_s, coalesce(sum(write_time), 0) AS write_time_s,
       coalesce(sum(meta_time), 0) AS meta_time_s,
       min(first_io_t) AS first_io_s, max(last_io_t) AS last_io_s
FROM u WHERE rank IS NOT NULL GROUP BY rank ORDER BY rank
"""


def rank_totals(store, *, job_id: int, source: str = "auto") -> Table:
    """Each rank's bytes and I/O time, with the slowest and fastest rank.

    The slowest rank is the one with the most I/O time (read + write + metadata), the
    fastest the one with the least among the ranks that moved bytes: Darshan's
    definition of ``POSIX_SLOWEST_RANK`` / ``POSIX_FASTEST_RANK`` (darshan-runtime
    documentation), here over the whole job rather than one file.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int
        The job.
    source : {"auto", "ops", "heatmap", "counters"}, default "auto"
        ``ops`` (one layer, :mod:`iochar.analyze._sql`; metadata time from the job's
        open/close/seek/sync/stat calls, which DXT does not record), Darshan's HEATMAP
        bins summed per rank (bytes only: the times are NaN) or Darshan's per-rank
        counter records (shared records have no per-rank split: see
        :func:`rank_extremes`); ``"auto"``: the first the job has, as
        :func:`rank_heatmap`.

    Returns
    -------
    iochar.result.Table
        One row per rank (task id for strace; MPI ranks 0 .. nprocs - 1 otherwise, idle
        ones included): ``rank``, ``read_bytes``, ``write_bytes``, ``bytes`` [bytes],
        ``read_time_s``, ``write_time_s``, ``meta_time_s``, ``io_time_s`` [s],
        ``first_io_s``, ``last_io_s`` [s since job start]. ``evidence``: ``source``,
        ``ranks``, ``active_ranks`` (moved bytes), ``idle_ranks``, ``bytes``,
        ``mean_bytes`` (over all ranks) [bytes], ``max_over_mean_bytes``,
        ``busiest_rank`` and ``busiest_bytes``, ``least_rank`` and ``least_bytes`` (the
        active rank that moved least), and when times are known ``slowest_rank``,
        ``slowest_time_s``, ``slowest_bytes``, ``fastest_rank``, ``fastest_time_s``,
        ``fastest_bytes``, ``mean_time_s`` (over the active ranks) and
        ``slowest_over_mean`` (slowest / mean - 1: the share of time the others wait,
        as :mod:`iochar.analyze.insights.rules_ranks` STRAGGLER), ``reason``.
    """
    caller = "rank_totals"
    job_id = check_int(job_id, "job_id", caller, "an int")
    source = check_choice(source, "source", caller, ("auto", *SOURCES))
    nprocs, kind, has = _job(store, job_id, caller)
    used = _pick_source(source, has)
    params = {"job_id": job_id, "source": source}
    cols = ["rank", "read_bytes", "write_bytes", "bytes", "read_time_s", "write_time_s",
            "meta_time_s", "io_time_s", "first_io_s", "last_io_s"]  # fmt: skip
    if used is None:
        ev = {"source": "none", "ranks": 0, "active_ranks": 0,
              "reason": f"job {job_id} has no per-rank reads or writes (ops) and no per-rank "
              "Darshan counter records"}  # fmt: skip
        return Table(pd.DataFrame(columns=cols), evidence=ev, params=params)
    if used == "heatmap":
        layers, _ = _heatmap_layers(store, job_id, None)
        sql = _HEATMAP_SQL
        hm = store.sql(sql, params={"job_id": job_id, "layers": layers}).df()
        df = (
            hm.pivot_table(index="rank", columns="op", values="value", aggfunc="sum")
            .reindex(columns=["read", "write"])
            .fillna(0.0)
            .rename(columns={"read": "read_bytes", "write": "write_bytes"})
            .reset_index()
        )
        for c in ("read_time_s", "write_time_s", "meta_time_s", "first_io_s", "last_io_s"):
            df[c] = np.nan
    else:
        sql = _TOTALS_OPS_SQL if used == "ops" else _TOTALS_COUNTERS_SQL
        df = store.sql(sql, params={"job_id": job_id}).df()
    pids = used == "ops" and kind == "strace"
    if not pids:
        n = max(nprocs or 0, int(df["rank"].max()) + 1 if len(df) else 0)
        df = df.set_index("rank").reindex(pd.RangeIndex(n, name="rank")).reset_index()
        fill = ("read_bytes", "write_bytes") + (
            () if used == "heatmap" else ("read_time_s", "write_time_s", "meta_time_s")
        )
        for c in fill:
            df[c] = df[c].fillna(0.0)
    df["bytes"] = df["read_bytes"] + df["write_bytes"]
    df["io_time_s"] = df["read_time_s"] + df["write_time_s"] + df["meta_time_s"]
    df = df[cols]
    active = df[df["bytes"] > 0]
    ev: dict = {
        "source": used,
        "rank_kind": "task id" if pids else "MPI rank",
        "ranks": int(len(df)),
        "active_ranks": int(len(active)),
        "idle_ranks": int(len(df) - len(active)),
        "bytes": float(df["bytes"].sum()),
        "reason": None,
    }
    ev["mean_bytes"] = ev["bytes"] / len(df) if len(df) else math.nan
    if len(active):
        busy = active.sort_values(["bytes", "rank"], ascending=[False, True]).iloc[0]
        least = active.sort_values(["bytes", "rank"], ascending=[True, True]).iloc[0]
        ev.update(
            {
                "max_over_mean_bytes": float(busy["bytes"]) / ev["mean_bytes"],
                "busiest_rank": int(busy["rank"]),
                "busiest_bytes": float(busy["bytes"]),
                "least_rank": int(least["rank"]),
                "least_bytes": float(least["bytes"]),
            }
        )
    if len(active) and active["io_time_s"].notna().any():
        slow = active.sort_values(["io_time_s", "rank"], ascending=[False, True]).iloc[0]
        fast = active.sort_values(["io_time_s", "rank"], ascending=[True, True]).iloc[0]
        mean_t = float(active["io_time_s"].mean())
        ev.update(
            {
                "slowest_rank": int(slow["rank"]),
                "slowest_time_s": float(slow["io_time_s"]),
                "slowest_bytes": float(slow["bytes"]),
                "fastest_rank": int(fast["rank"]),
                "fastest_time_s": float(fast["io_time_s"]),
                "fastest_bytes": float(fast["bytes"]),
                "mean_time_s": mean_t,
                "slowest_over_mean": float(slow["io_time_s"]) / mean_t - 1
                if mean_t > 0
                else math.nan,
            }
        )
    if not len(active):
        ev["reason"] = f"no rank of job {job_id} moved bytes"
    return Table(df.reset_index(drop=True), evidence=ev, params=params, sql=join_sql(_JOB_SQL, sql))


_EXTREMES_SQL = """
WITH c AS (
  SELECT m.file_id, m.module, m.record,
    max(value) FILTER (WHERE counter LIKE '%\\_FASTEST\\_RANK' ESCAPE '\\') AS fastest_rank,
    max(value) FILTER (WHERE counter LIKE '%\\_FASTEST\\_RANK\\_BYTES' ESCAPE '\\')
      AS fastest_bytes,
    max(value) FILTER (WHERE counter LIKE '%\\_F\\_FASTEST\\_RANK\\_TIME' ESCAPE '\\')
      AS fastest_time_s,
    max(value) FILTER (WHERE counter LIKE '%\\_SLOWEST\\_RANK' ESCAPE '\\') AS slowest_rank,
    max(value) FILTER (WHERE counter LIKE '%\\_SLOWEST\\_RANK\\_BYTES' ESCAPE '\\')
      AS slowest_bytes,
    max(value) FILTER (WHERE counter LIKE '%\\_F\\_SLOWEST\\_RANK\\_TIME' ESCAPE '\\')
      AS slowest_time_s,
    max(value) FILTER (WHERE counter LIKE '%\\_F\\_VARIANCE\\_RANK\\_TIME' ESCAPE '\\')
      AS var_time,
    max(value) FILTER (WHERE counter LIKE '%\\_F\\_VARIANCE\\_RANK\\_BYTES' ESCAPE '\\')
      AS var_bytes
  FROM module_counters m
  WHERE m.job_id = $job_id AND m.rank IS NULL AND m.module IN ('POSIX', 'STDIO', 'MPI-IO')
    AND m.file_id IS NOT NULL
  GROUP BY m.file_id, m.module, m.record
),
s AS (
  SELECT file_id, module, coalesce(bytes_read, 0) + coalesce(bytes_written, 0) AS bytes,
         coalesce(read_time, 0) + coalesce(write_time, 0) + coalesce(meta_time, 0)
           AS total_time_s
  FROM file_stats WHERE job_id = $job_id AND rank IS NULL
),
k AS (
  SELECT c.*, s.bytes, s.total_time_s,
         bool_or(c.module IN ('POSIX', 'STDIO')) OVER (PARTITION BY c.file_id) AS has_low
  FROM c JOIN s USING (file_id, module)
)
SELECT k.file_id, f.path, k.module, k.bytes, k.total_time_s,
       k.fastest_rank::BIGINT AS fastest_rank, k.fastest_bytes, k.fastest_time_s,
       k.slowest_rank::BIGINT AS slowest_rank, k.slowest_bytes, k.slowest_time_s,
       k.var_time, k.var_bytes
FROM k LEFT JOIN files f ON f.job_id = $job_id AND f.file_id = k.file_id
WHERE (k.module IN ('POSIX', 'STDIO') OR NOT k.has_low) AND k.slowest_rank IS NOT NULL
ORDER BY k.slowest_time_s DESC, k.bytes DESC, k.file_id
"""


def rank_extremes(store, *, job_id: int) -> Table:
    """The fastest and slowest rank of each shared file, from Darshan's counters alone.

    Darshan reduces a file every rank opened to one record (rank -1) and keeps, per
    module, ``<MOD>_FASTEST_RANK`` / ``<MOD>_SLOWEST_RANK`` (the ranks with the least /
    most I/O time on the file, read + write + metadata), ``_BYTES`` (their bytes),
    ``<MOD>_F_FASTEST_RANK_TIME`` / ``_F_SLOWEST_RANK_TIME`` [s] and the population
    variances over all ranks ``<MOD>_F_VARIANCE_RANK_TIME`` [s^2] and
    ``_F_VARIANCE_RANK_BYTES`` [bytes^2] (darshan-runtime documentation, POSIX module
    counters). Layers as in :mod:`iochar.analyze._counter_facts`: POSIX and STDIO, MPI-IO
    only for a file without them.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int
        The job.

    Returns
    -------
    iochar.result.Table
        One row per shared record, slowest first: ``file_id``, ``path``, ``module``,
        ``bytes`` [bytes], ``total_time_s`` (summed over ranks) [s], ``fastest_rank``,
        ``fastest_bytes``, ``fastest_time_s``, ``slowest_rank``, ``slowest_bytes``,
        ``slowest_time_s``, ``mean_time_s`` (``total_time_s / nprocs``) [s],
        ``slowest_over_mean`` (slowest / mean - 1), ``time_cv`` (standard deviation over
        mean of the ranks' time) and ``bytes_cv``. ``evidence``: ``nprocs``,
        ``shared_files``, the worst file's ``slowest_rank``, ``slowest_time_s``,
        ``fastest_rank``, ``fastest_time_s``, ``path`` and ``reason`` (when none).
    """
    caller = "rank_extremes"
    job_id = check_int(job_id, "job_id", caller, "an int")
    nprocs, _, _ = _job(store, job_id, caller)
    df = store.sql(_EXTREMES_SQL, params={"job_id": job_id}).df()
    n = float(nprocs) if nprocs else math.nan
    df["mean_time_s"] = df["total_time_s"] / n
    with np.errstate(divide="ignore", invalid="ignore"):
        df["slowest_over_mean"] = np.where(
            df["mean_time_s"] > 0, df["slowest_time_s"] / df["mean_time_s"] - 1, np.nan
        )
        df["time_cv"] = np.where(
            df["mean_time_s"] > 0,
            np.sqrt(df["var_time"].clip(lower=0)) / df["mean_time_s"],
            np.nan,
        )
        mean_b = df["bytes"] / n
        df["bytes_cv"] = np.where(
            mean_b > 0, np.sqrt(df["var_bytes"].clip(lower=0)) / mean_b, np.nan
        )
    df = df.drop(columns=["var_time", "var_bytes"])
    ev: dict = {"nprocs": nprocs, "shared_files": int(len(df)), "reason": None}
    if len(df):
        top = df.iloc[0]
        ev.update(
            {
                "path": top["path"],
                "slowest_rank": int(top["slowest_rank"]),
                "slowest_time_s": float(top["slowest_time_s"]),
                "fastest_rank": int(top["fastest_rank"]),
                "fastest_time_s": float(top["fastest_time_s"]),
                "mean_time_s": float(top["mean_time_s"]),
            }
        )
    else:
        ev["reason"] = f"job {job_id} has no shared Darshan record with fastest/slowest ranks"
    return Table(df, evidence=ev, params={"job_id": job_id}, sql=join_sql(_JOB_SQL, _EXTREMES_SQL))


_PICK_SQL = f"""
WITH o AS (
  SELECT job_id, 0 AS pref, count(DISTINCT rank) AS ranks, sum(size) AS bytes
  FROM ({LAYER_OPS}) GROUP BY job_id
),
h AS (
  SELECT job_id, 1 AS pref, count(DISTINCT rank) AS ranks, sum(value) AS bytes
  FROM module_counters
  WHERE module = 'HEATMAP' AND regexp_matches(counter, '^HEATMAP_.+_(READ|WRITE)_BIN_[0-9]+$')
  GROUP BY job_id
),
c AS (
  SELECT job_id, 2 AS pref, count(DISTINCT rank) AS ranks,
         sum(coalesce(bytes_read, 0) + coalesce(bytes_written, 0)) AS bytes
  FROM file_stats WHERE rank IS NOT NULL AND module IN ('POSIX', 'STDIO', 'MPI-IO')
    AND first_io_t IS NOT NULL
  GROUP BY job_id
)
SELECT job_id FROM (SELECT * FROM o UNION ALL SELECT * FROM h UNION ALL SELECT * FROM c)
WHERE bytes > 0
ORDER BY pref, ranks DESC, bytes DESC, job_id
LIMIT 1
"""


#: A job with Darshan's fastest/slowest counters on a shared record, else the first job.
_ANY_JOB_SQL = """
SELECT job_id FROM (
  SELECT job_id, 0 AS pref FROM module_counters
  WHERE rank IS NULL AND counter LIKE '%\\_SLOWEST\\_RANK' ESCAPE '\\'
  UNION ALL SELECT job_id, 1 FROM jobs)
ORDER BY pref, job_id LIMIT 1
"""


def pick_job(store, job_id: int | None = None) -> int | None:
    """The job whose ranks over time a notebook shows.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        A job chosen by the reader: returned as it is.

    Returns
    -------
    int or None
        ``job_id`` when given; else the job with the most detailed per-rank record (the
        order of :data:`SOURCES`: per-operation records, then Darshan HEATMAP bins, then
        per-rank counter records with timestamps), then the most ranks, then the most
        bytes, then the lowest id; when no job has any, the first job with Darshan's
        fastest/slowest rank counters on a shared record, else the first job (whose
        results then say why there is no view); None for a database without jobs.
    """
    if job_id is not None:
        return check_int(job_id, "job_id", "pick_job", "an int or None")
    got = store.sql(_PICK_SQL).fetchall() or store.sql(_ANY_JOB_SQL).fetchall()
    return int(got[0][0]) if got else None
