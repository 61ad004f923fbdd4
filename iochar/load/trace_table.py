"""iochar's own per-operation trace layout: ``trace-csv`` and ``trace-parquet``.

This is the interchange format: :mod:`iochar.datasets.synth` writes it,
:meth:`iochar.store.Store.export_trace` writes it, and any tool can produce
it. One row per I/O operation, a header naming the columns (CSV) or the
column names (Parquet); column order is free, unknown columns are ignored
with a warning.

====================  ========  ========  ==================================================
column                type      unit      meaning
====================  ========  ========  ==================================================
``op`` (required)     string              read, write, open, close, seek, sync, stat, other
``t_start`` (req.)    float     s         start, seconds since the job's start
``t_end``             float     s         end (default: ``t_start``); must be >= ``t_start``
``job_id``            int                 job within this file (default 0)
``job``               string              application name of the job (-> ``jobs.app``)
``rank``              int                 MPI rank or pid (default 0)
``file_id``           int                 file within this file's jobs
``path``              string              file path; without ``file_id``, ids are assigned
                                          per (job, path): 0, 1, ... in the order each pair
                                          first appears in the input
``offset``            int       bytes     file offset of the transfer
``size``              int       bytes     bytes transferred
``cpu_s``             float     s         process CPU time since the previous I/O
``call``              string              raw call name
``error``             string              errno name when the call failed
====================  ========  ========  ==================================================

Rules checked on load (each failure is an :class:`~iochar.errors.InputError`
with the line, or the Parquet row, that broke it):

- every row has exactly the header's number of fields, and typed columns parse;
- ``op`` is one of :data:`iochar.schema.OPS`; ``t_start`` is present and finite;
- ``t_end >= t_start``; ``size`` and ``offset`` are not negative;
- within a (``job_id``, ``rank``) pair, ``t_start`` never goes backwards;
- a CSV ends with a newline (a last line without one is taken as a file cut
  short; tolerant mode drops it).

Line numbers assume one record per line (no quoted newlines in paths).

Chunks and cores: a CSV is parsed in blocks of whole lines (at most
:data:`_MAX_BLOCK` bytes; Arrow's reader parses each block's pieces on every
core), a Parquet file in runs of row groups (at most ``chunk_rows`` rows and
:data:`_MAX_PARQUET` bytes, columns decoded on every core), so memory is bounded
by a chunk. The state that crosses chunks (each (job, rank) pair's last
``t_start``, the file ids, the jobs' spans) is carried in input order, so the
rows, ids and error lines are the same however the input is cut. Each chunk's
``ops`` go to the store as one Arrow batch per column: DuckDB's insert pays per
batch of its input (measured: 10M CSV rows in 45 frames of ~16 batches took
8.2 s of CPU to load against 6.0 s in one batch each).
"""

from __future__ import annotations

import csv
import io
import math
import os
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from iochar import schema
from iochar.errors import InputError
from iochar.load import _kinds, register
from iochar.load._base import Parsed, SkipLog
from iochar.load._text import (
    Source,
    is_compressed,
    local_path,
    mmap_blocks,
    open_parquet,
    source_name,
)

__all__ = ["TraceCsvLoader", "TraceParquetLoader", "COLUMN_TYPES", "EXPORT_COLUMNS"]

#: Accepted columns and their Arrow types.
COLUMN_TYPES: dict[str, pa.DataType] = {
    "job_id": pa.int64(),
    "job": pa.string(),
    "rank": pa.int32(),
    "file_id": pa.int64(),
    "path": pa.string(),
    "op": pa.string(),
    "offset": pa.int64(),
    "size": pa.int64(),
    "t_start": pa.float64(),
    "t_end": pa.float64(),
    "cpu_s": pa.float64(),
    "call": pa.string(),
    "error": pa.string(),
}
REQUIRED = ("op", "t_start")
#: Column order of :meth:`iochar.store.Store.export_trace`.
EXPORT_COLUMNS = (
    "job_id",
    "rank",
    "file_id",
    "path",
    "op",
    "offset",
    "size",
    "t_start",
    "t_end",
    "cpu_s",
    "call",
    "error",
)
_OPS_SET = pa.array(schema.OPS)
_FIRST_BLOCK = 8 << 20  # bytes
#: Most CSV text parsed at once [bytes], whatever ``chunk_rows`` asks: a parsed row
#: costs about 9x its text on the way to the store (Arrow columns, file-id mapping,
#: the stored frame, DuckDB's copy), so 16 MiB bounds a chunk's working set to about
#: 150 MB. Measured (one-off runs, 2 cores): peak RSS during an 8M-row load 430-457 MiB
#: (828 MiB with 512 MiB blocks), same speed; closing the database afterwards (DuckDB's
#: checkpoint of the load's rows) still rises to ~950 MiB (bench_trace_csv.py --rss).
_MAX_BLOCK = 16 << 20
#: Least CSV text parsed at once [bytes] (a block always ends at a line end).
_MIN_BLOCK = 1 << 12
#: Most Parquet column data read at once [bytes, uncompressed, as the footer's
#: ``total_byte_size`` counts it]. Parquet holds a trace row in about 40 bytes where
#: CSV text takes about 70, so 8 MiB is about the rows of a :data:`_MAX_BLOCK` CSV
#: block. Measured (16M-row trace-parquet, one-off runs, 2 busy cores): peak RSS of a
#: load 401-423 MiB with 5-8 MB reads (one 122,880-row group), 508 MiB with 16 MiB
#: (three groups), same speed.
_MAX_PARQUET = 8 << 20


class _State:
    """What carries from one chunk to the next."""

    def __init__(self) -> None:
        self.paths: dict[tuple[int, str], int] = {}  # (job, path) -> local file_id
        self.files: dict[tuple[int, int], str | None] = {}  # (job, file_id) -> path
        self.last_t: dict[tuple[int, int], float] = {}  # (job, rank) -> last t_start
        self.jobs: dict[int, dict[str, Any]] = {}


def _bad(path: str, line: int | None, expected: str, got: object, kind: str, unit: str = "line"):
    return InputError(path, line, expected, got, kind=kind, unit=unit)


def _mask_np(mask: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A boolean Arrow mask (no nulls) as a numpy bool array."""
    return np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)


def _check_rows(tb: pa.Table) -> list[tuple[pa.Array, str]]:
    """Boolean masks of rows breaking a rule, with the rule in words."""
    checks: list[tuple[Any, str]] = []
    op = tb.column("op")
    checks.append(
        (
            pc.invert(pc.fill_null(pc.is_in(op, value_set=_OPS_SET), False)),
            "op one of " + "/".join(schema.OPS),
        )
    )
    t0 = tb.column("t_start")
    checks.append((pc.invert(pc.fill_null(pc.is_finite(t0), False)), "a finite t_start [s]"))
    if "t_end" in tb.column_names:
        t1 = tb.column("t_end")
        checks.append((pc.fill_null(pc.less(t1, t0), False), "t_end >= t_start"))
    for col in ("size", "offset"):
        if col in tb.column_names:
            checks.append((pc.fill_null(pc.less(tb.column(col), 0), False), f"{col} >= 0 [bytes]"))
    return checks


def _filled(tb: pa.Table, col: str, typ: pa.DataType) -> pa.ChunkedArray | pa.Array:
    """Column ``col`` with NULLs as 0, or all 0 when the column is absent."""
    if col not in tb.column_names:
        return pa.repeat(pa.scalar(0, typ), tb.num_rows)
    arr = tb.column(col)
    return pc.fill_null(arr, 0) if arr.null_count else arr


def _normalize(
    tb: pa.Table,
    st: _State,
    first_line: int,
    name: str,
    kind: str,
    unit: str,
    skips: SkipLog | None,
) -> Parsed:
    """Validate one batch and turn it into contract tables (``ops``).

    Chunks must come in input order: the state ``st`` carries each (job, rank)
    pair's last ``t_start``, the file ids and the jobs' spans from one chunk to
    the next, so the result does not depend on where the input was cut.
    """
    # per-row rules; a row breaking several is reported (tolerant: counted) once per rule
    keep = None
    for mask, rule in _check_rows(tb):
        if not pc.any(mask).as_py():
            continue
        bad = _mask_np(mask)
        if skips is None:
            i = int(np.flatnonzero(bad)[0])
            raise _bad(name, first_line + i, rule, _row_text(tb, i), kind, unit)
        for j in np.flatnonzero(bad):
            skips.add(first_line + int(j), rule)
        keep = ~bad if keep is None else keep & ~bad
    lines = np.arange(first_line, first_line + tb.num_rows, dtype=np.int64)
    if keep is not None:
        tb = tb.filter(pa.array(keep))
        lines = lines[keep]
    job = _filled(tb, "job_id", pa.int64())
    rank = _filled(tb, "rank", pa.int32())
    t0 = tb.column("t_start")
    t1 = pc.fill_null(tb.column("t_end"), t0) if "t_end" in tb.column_names else t0
    jn, rn, tn = job.to_numpy(), rank.to_numpy(), t0.to_numpy()

    # t_start never goes backwards within (job, rank), across chunks too
    back = _backwards(jn, rn, tn, st.last_t)
    if back is not None:
        bad_idx = np.flatnonzero(back)
        if skips is None:
            i = int(bad_idx[0])
            raise _bad(
                name,
                int(lines[i]),
                f"t_start not going backwards for job {jn[i]} rank {rn[i]}",
                str(t0[i]),
                kind,
                unit,
            )
        for i in bad_idx:
            skips.add(int(lines[int(i)]), "t_start not going backwards")
        keepm = pa.array(~back)
        tb, job, rank, t0, t1 = (x.filter(keepm) for x in (tb, job, rank, t0, t1))
        jn, rn, tn = job.to_numpy(), rank.to_numpy(), t0.to_numpy()
        _backwards(jn, rn, tn, st.last_t)
    return _normalize_tail(tb, job, rank, t0, t1, jn, rn, tn, st)


def _codes(x: np.ndarray, ordered: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(each row's code, the distinct values) of integers: ``values[codes] == x``.

    The values come in order of first appearance when ``ordered``, else in any
    order. Values within a range of about twice the rows are coded by direct
    indexing (linear time), others by sorting.
    """
    n = len(x)
    if n == 0:
        return np.empty(0, dtype=np.intp), x[:0]
    lo, hi = int(x.min()), int(x.max())
    if lo == hi:
        return np.zeros(n, dtype=np.intp), x[:1]
    if hi - lo <= 2 * n + (1 << 16):
        off = (x - lo).astype(np.intp, copy=False)
        if ordered:
            first = np.full(hi - lo + 1, n, dtype=np.intp)
            np.minimum.at(first, off, np.arange(n, dtype=np.intp))
            seen = np.flatnonzero(first < n)
            seen = seen[np.argsort(first[seen], kind="stable")]
        else:
            seen = np.flatnonzero(np.bincount(off, minlength=hi - lo + 1))
        code_of = np.empty(hi - lo + 1, dtype=np.intp)
        code_of[seen] = np.arange(len(seen), dtype=np.intp)
        return code_of[off], (seen + lo).astype(x.dtype)
    uniq, first, inverse = np.unique(x, return_index=True, return_inverse=True)
    if not ordered:
        return inverse.ravel(), uniq
    order = np.argsort(first, kind="stable")
    code_of = np.empty(len(uniq), dtype=np.intp)
    code_of[order] = np.arange(len(uniq), dtype=np.intp)
    return code_of[inverse.ravel()], uniq[order]


def _pair_codes(
    a: np.ndarray, b: np.ndarray, ordered: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(each row's code, first and second value of each code) of the pairs (a, b).

    The pairs come in order of first appearance when ``ordered``.
    """
    if len(a) and a.min() == a.max():  # one value of a: the pairs are b's values
        codes, bu = _codes(b, ordered)
        return codes, np.repeat(a[:1], len(bu)), bu
    ac, au = _codes(a)
    bc, bu = _codes(b)
    codes, pu = _codes(ac * len(bu) + bc, ordered)
    return codes, au[pu // len(bu)], bu[pu % len(bu)]


def _backwards(
    jn: np.ndarray, rn: np.ndarray, tn: np.ndarray, last_t: dict[tuple[int, int], float]
) -> np.ndarray | None:
    """Rows whose ``t_start`` is earlier than the previous row of the same (job, rank).

    ``last_t`` holds each pair's last ``t_start`` from earlier chunks; it is
    updated when the chunk is clean. Returns None when no row goes backwards.
    """
    n = len(tn)
    if n == 0:
        return None
    codes, jobs, ranks = _pair_codes(jn, rn)
    k = len(jobs)
    back = np.zeros(n, dtype=bool)
    if n > 1 and not np.all(tn[1:] >= tn[:-1]):
        # a stable sort by pair keeps each pair's rows in input order (radix sort for
        # codes that fit 16 bits: linear in the rows)
        small = codes.astype(np.int16) if k <= np.iinfo(np.int16).max else codes
        order = np.argsort(small, kind="stable")
        cs, ts = codes[order], tn[order]
        back[order[1:]] = (cs[1:] == cs[:-1]) & (ts[1:] < ts[:-1])
    first = np.full(k, n, dtype=np.intp)
    np.minimum.at(first, codes, np.arange(n, dtype=np.intp))
    last = np.full(k, -1, dtype=np.intp)
    np.maximum.at(last, codes, np.arange(n, dtype=np.intp))
    pairs = list(zip(jobs.tolist(), ranks.tolist(), strict=True))
    for g, pair in enumerate(pairs):
        prev = last_t.get(pair)
        if prev is not None and tn[first[g]] < prev:
            back[first[g]] = True
    if back.any():
        return back
    for pair, t in zip(pairs, tn[last].tolist(), strict=True):
        last_t[pair] = t
    return None


def _new_job() -> dict[str, Any]:
    return {"t0": math.inf, "t1": -math.inf, "ranks": set(), "app": None}


def _note_jobs(
    st: _State, jn: np.ndarray, rn: np.ndarray, tn: np.ndarray, t1n: np.ndarray, app
) -> None:
    """Widen each job's time span, add its ranks and take its first application name.

    A job's span is its earliest ``t_start`` and latest ``t_end`` [s]; ``app``
    (the ``job`` column, or None) gives a job's name as its first non-NULL value.
    """
    if not len(jn):
        return
    if jn.min() == jn.max():  # one job in the chunk: no grouping
        info = st.jobs.setdefault(int(jn[0]), _new_job())
        info["t0"] = min(info["t0"], float(np.min(tn)))
        info["t1"] = max(info["t1"], float(np.max(t1n)))
        info["ranks"].update(_codes(rn)[1].tolist())
        if app is not None and info["app"] is None:
            apps = pc.drop_null(app)
            info["app"] = apps[0].as_py() if len(apps) else None
        return
    jc, juniq = _codes(jn)
    lo = np.full(len(juniq), np.inf)
    np.minimum.at(lo, jc, tn)
    hi = np.full(len(juniq), -np.inf)
    np.maximum.at(hi, jc, t1n)  # NaN propagates, as np.max over the job's rows
    infos = [st.jobs.setdefault(int(j), _new_job()) for j in juniq]
    for info, a, b in zip(infos, lo.tolist(), hi.tolist(), strict=True):
        info["t0"] = min(info["t0"], a)
        info["t1"] = max(info["t1"], b)
    _, pj, pr = _pair_codes(jc, rn)
    for g, r in zip(pj.tolist(), pr.tolist(), strict=True):
        infos[g]["ranks"].add(r)
    if app is not None and any(info["app"] is None for info in infos):
        idx = np.flatnonzero(_mask_np(app.is_valid()))
        if idx.size:
            codes, first = np.unique(jc[idx], return_index=True)
            names = app.take(pa.array(idx[first])).to_pylist()
            for g, nm in zip(codes.tolist(), names, strict=True):
                if infos[g]["app"] is None:
                    infos[g]["app"] = nm


def _normalize_tail(tb, job, rank, t0, t1, jn, rn, tn, st: _State) -> Parsed:
    n = tb.num_rows
    cols = tb.column_names
    # files: ids as given, or assigned per (job, path)
    if "file_id" in cols:
        fid = tb.column("file_id")
        _note_given_files(jn, fid, tb.column("path") if "path" in cols else None, st)
    elif "path" in cols:
        fid = _assign_file_ids(jn, tb.column("path"), st)
    else:
        fid = pa.nulls(n, pa.int64())
    t1n = tn if t1 is t0 else t1.to_numpy()
    _note_jobs(st, jn, rn, tn, t1n, tb.column("job") if "job" in cols else None)
    ops = {
        "job_id": job,
        "rank": rank,
        "file_id": fid,
        "op": tb.column("op"),
        "t_start": t0,
        "t_end": t1,
    }
    for c in ("offset", "size", "cpu_s", "call", "error"):
        if c in cols:
            ops[c] = tb.column(c)
    # one Arrow chunk per column: DuckDB's insert pays per batch of its input (a load
    # of 10M trace-csv rows in 45 frames of 16 batches each took 2.5 s more CPU than
    # the same frames in one batch each, 8.2 against 6.0 s), and the copy is cheap
    return Parsed(tables={"ops": pa.table(ops).combine_chunks()})


def _note_given_files(
    jn: np.ndarray, fid: pa.ChunkedArray, path: pa.ChunkedArray | None, st: _State
) -> None:
    """Remember each (job, file_id) pair first seen here, with its first row's path."""
    idx = np.flatnonzero(_mask_np(fid.is_valid()))
    if not idx.size:
        return
    codes, _, _ = _pair_codes(jn[idx], pc.fill_null(fid, 0).to_numpy()[idx])
    first = np.full(codes.max() + 1, len(idx), dtype=np.intp)
    np.minimum.at(first, codes, np.arange(len(idx), dtype=np.intp))
    rows = idx[np.sort(first)]  # each pair's first row, in input order
    paths = [None] * len(rows) if path is None else path.take(pa.array(rows)).to_pylist()
    for j, fi, p in zip(
        jn[rows].tolist(), fid.take(pa.array(rows)).to_pylist(), paths, strict=True
    ):
        st.files.setdefault((int(j), int(fi)), p)


def _dictionary(path: pa.ChunkedArray | pa.Array) -> tuple[pa.Array, np.ndarray]:
    """(distinct values, each row's index into them or -1 for NULL) of a string column.

    Takes a dictionary-encoded column as it is (Parquet's own dictionary), otherwise
    encodes it; the chunks' dictionaries are unified into one.
    """
    if not pa.types.is_dictionary(path.type):
        path = pc.dictionary_encode(path)
    if isinstance(path, pa.ChunkedArray):
        if path.num_chunks == 0:
            return pa.array([], pa.string()), np.empty(0, dtype=np.int64)
        path = path.unify_dictionaries()
        values = path.chunk(0).dictionary
        indices = pa.chunked_array([c.indices for c in path.chunks])
    else:
        values, indices = path.dictionary, path.indices
    return values, pc.fill_null(indices, -1).to_numpy().astype(np.int64)


def _assign_file_ids(jn: np.ndarray, path: pa.ChunkedArray, st: _State) -> pa.Array:
    """Local file ids for (job, path) pairs: 0, 1, ... in the order pairs first appear.

    Numbering by first appearance in the input (and ``st`` carrying it across
    chunks) makes the ids the same however the input is cut into chunks. A
    NULL path has a NULL file id.
    """
    values, pidx = _dictionary(path)
    nv = len(values) + 1  # pair code: job's code * nv + path index + 1 (0: NULL path)
    jc, juniq = _codes(jn)
    codes, uniq = _codes(jc * nv + (pidx + 1), ordered=True)
    job_of, pi = np.divmod(uniq, nv)
    has = pi > 0
    names = values.take(pa.array(pi[has] - 1)).to_pylist()
    ids = np.zeros(len(uniq), dtype=np.int64)
    at = np.flatnonzero(has)
    for u, j, p in zip(at.tolist(), juniq[job_of[has]].tolist(), names, strict=True):
        f = st.paths.get((j, p))
        if f is None:
            f = len(st.files)
            st.paths[(j, p)] = f
            st.files[(j, f)] = p
        ids[u] = f
    out = ids[codes]
    if has.all():
        return pa.array(out, pa.int64())
    return pa.array(out, pa.int64(), mask=~has[codes])


def _final(
    st: _State, kind: str, cols: list[str], unknown: list[str], skips: SkipLog | None
) -> Parsed:
    """The last chunk: jobs and files seen, meta, skips and warnings."""
    jobs = sorted(st.jobs.items())
    files = sorted(st.files.items())
    warnings = [f"ignored unknown column(s): {', '.join(unknown)}"] if unknown else []
    return Parsed(
        meta={"tool": "iochar", "format": kind, "columns": cols},
        skips=skips,
        warnings=warnings,
        tables={
            "jobs": pa.table(
                {
                    "job_id": pa.array([j for j, _ in jobs], pa.int64()),
                    "job_key": pa.array([str(j) for j, _ in jobs], pa.string()),
                    "app": pa.array([i["app"] for _, i in jobs], pa.string()),
                    "nprocs": pa.array([len(i["ranks"]) for _, i in jobs], pa.int32()),
                    "runtime_s": pa.array(
                        [i["t1"] - min(i["t0"], 0.0) for _, i in jobs], pa.float64()
                    ),
                }
            ),
            "files": pa.table(
                {
                    "job_id": pa.array([j for (j, _), _ in files], pa.int64()),
                    "file_id": pa.array([f for (_, f), _ in files], pa.int64()),
                    "path": pa.array([p for _, p in files], pa.string()),
                }
            ),
        },
    )


def _row_text(tb: pa.Table, i: int) -> str:
    return ",".join("" if v is None else str(v) for v in tb.slice(i, 1).to_pylist()[0].values())


def _check_columns(names: list[str], name: str, kind: str) -> tuple[list[str], list[str]]:
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise _bad(
            name,
            1,
            "a header naming at least the columns "
            + ", ".join(REQUIRED)
            + f" (missing {', '.join(missing)})",
            ",".join(names),
            kind,
        )
    dup = {c for c in names if names.count(c) > 1}
    if dup:
        raise _bad(name, 1, "each column named once", ",".join(sorted(dup)), kind)
    unknown = [c for c in names if c not in COLUMN_TYPES]
    return [c for c in names if c in COLUMN_TYPES], unknown


class TraceCsvLoader:
    """``trace-csv``: iochar's per-operation layout as CSV (see module docs)."""

    kind: ClassVar[str] = "trace-csv"
    suffixes: ClassVar[tuple[str, ...]] = (".csv", ".csv.gz", ".trace.csv")
    description: ClassVar[str] = "iochar per-operation trace, CSV with a header (op, t_start, ...)"

    def sniff(self, head: bytes) -> bool:
        """A first line that is a CSV header naming ``op`` and ``t_start``."""
        return _kinds.sniff_trace_csv(head)  # the one rule, shared with sniffing by kind table

    def parse(
        self, src: Source, *, strict: bool = True, chunk_rows: int = 1_000_000
    ) -> Iterator[Parsed]:
        """Parse a trace CSV in chunks of about ``chunk_rows`` rows."""
        name = source_name(src)
        with local_path(src, ".csv", text=True) as path:
            yield from self._parse_path(path, name, strict, chunk_rows)

    def _parse_path(self, path: str, name: str, strict: bool, chunk_rows: int) -> Iterator[Parsed]:
        kind = self.kind
        size = os.path.getsize(path)
        if size == 0:
            raise _bad(name, None, "a non-empty input", "", kind)
        with open(path, "rb") as fh:
            header = fh.readline()
            if b"\x00" in header:
                raise _bad(name, 1, "a CSV header line", header[:80], kind)
            if not header.endswith(b"\n"):
                raise _bad(
                    name, 1, "a header line ending in a newline (file cut short?)", header, kind
                )
            fh.seek(max(size - 1, 0))
            ends_nl = fh.read(1) == b"\n"
        try:
            names = next(csv.reader([header.decode("utf-8")]))
        except (UnicodeDecodeError, StopIteration) as exc:
            raise _bad(name, 1, "a UTF-8 CSV header line", header[:80], kind) from exc
        names = [c.strip() for c in names]
        cols, unknown = _check_columns(names, name, kind)
        skips = None if strict else SkipLog()
        truncated_tail = not ends_nl and size > len(header)
        if truncated_tail and strict:
            raise _bad(
                name,
                _count_lines(path),
                "a last line ending in a newline (file cut short?)",
                _last_line(path),
                kind,
            )
        types = {c: COLUMN_TYPES[c] if strict else pa.string() for c in cols}
        bad_rows: list[tuple[int, str]] = []
        conv = pacsv.ConvertOptions(
            column_types=types, include_columns=cols, strings_can_be_null=True
        )
        read_opts = pacsv.ReadOptions(column_names=names, use_threads=True)
        st = _State()
        # the first block is small; later ones are sized to hold about chunk_rows rows
        sizing = {"next": min(_FIRST_BLOCK, max(_MIN_BLOCK, chunk_rows * 16))}
        line = 2  # the header is line 1
        for block, complete in mmap_blocks(path, len(header), sizing):
            nbytes = block.size
            if not strict:
                block = _drop_bad_field_counts(
                    block.to_pybytes(), line, len(names), skips, bad_rows
                )
            try:
                tb = pacsv.read_csv(
                    pa.BufferReader(block), read_options=read_opts, convert_options=conv
                )
            except pa.ArrowInvalid as exc:
                raise _locate_csv_error(
                    pa.py_buffer(block).to_pybytes(), line, name, names, cols, exc
                ) from exc
            if not strict:
                tb = _cast_tolerant(tb, line, skips, drop_last=truncated_tail and not complete)
            yield _normalize(tb, st, line, name, kind, "line", skips)
            line += tb.num_rows
            per_row = max(1.0, nbytes / max(tb.num_rows, 1))
            sizing["next"] = int(min(_MAX_BLOCK, max(_MIN_BLOCK, chunk_rows * per_row)))
        yield _final(st, kind, cols, unknown, skips)


def _cast_tolerant(tb: pa.Table, first_line: int, skips: SkipLog, drop_last: bool) -> pa.Table:
    keep = np.ones(tb.num_rows, dtype=bool)
    if drop_last and tb.num_rows:
        keep[-1] = False
        skips.add(first_line + tb.num_rows - 1, "last line cut short (no newline)")
    arrays = {}
    for c in tb.column_names:
        want = COLUMN_TYPES[c]
        col = tb.column(c)
        if want == pa.string():
            arrays[c] = col
            continue
        vals = col.to_pylist()
        out = []
        for i, v in enumerate(vals):
            if v is None or v == "":
                out.append(None)
                continue
            try:
                out.append(float(v) if pa.types.is_floating(want) else int(v))
            except ValueError:
                out.append(None)
                if keep[i]:
                    keep[i] = False
                    skips.add(first_line + i, f"column {c!r}: not a {want}: {v[:40]!r}")
        arrays[c] = pa.array(out, want)
    return pa.table(arrays).filter(pa.array(keep))


def _count_lines(path: str) -> int:
    n = 0
    with open(path, "rb") as fh:
        while b := fh.read(1 << 24):
            n += b.count(b"\n")
    return n + 1


def _last_line(path: str) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(0, io.SEEK_END)
        end = fh.tell()
        fh.seek(max(0, end - 4096))
        return fh.read().rsplit(b"\n", 1)[-1]


def _locate_csv_error(
    block: bytes, first_line: int, name: str, names: list[str], cols: list[str], exc: Exception
) -> InputError:
    """Find the line behind a pyarrow CSV error in ``block`` (slow path, only on error)."""
    kinds = {c: COLUMN_TYPES[c] for c in cols}
    for k, rec, raw in _records(block):
        line = first_line + k
        if len(rec) != len(names):
            return _bad(name, line, f"{len(names)} fields as in the header", raw, "trace-csv")
        for field, value in zip(names, rec, strict=True):
            if _bad_value(kinds.get(field), value):
                return _bad(
                    name, line, f"column {field!r} to be {kinds[field]}", value, "trace-csv"
                )
    return _bad(name, first_line, "valid CSV", str(exc), "trace-csv")


def _records(block: bytes) -> Iterator[tuple[int, list[str], str]]:
    """(line offset in block, fields, raw text) for each non-empty line."""
    for k, raw in enumerate(block.decode("utf-8", "replace").split("\n")):
        raw = raw.rstrip("\r")
        if raw:
            yield k, _split(raw), raw


def _split(raw: str) -> list[str]:
    """The fields of one CSV line, as Python's csv module splits it.

    The csv module refuses a field over ``csv.field_size_limit()`` (128 KiB by default)
    that the Arrow reader of the strict path accepts; such a line is split again with
    the limit raised to the line's length, under a lock and restored afterwards, so
    both paths read the same fields. A line that still fails has no fields.
    """
    try:
        return next(csv.reader([raw]))
    except csv.Error:
        pass
    with _CSV_LIMIT_LOCK:
        old = csv.field_size_limit(max(len(raw) + 1, csv.field_size_limit()))
        try:
            return next(csv.reader([raw]))
        except csv.Error:
            return []
        finally:
            csv.field_size_limit(old)


#: Serializes the temporary raise of the process-wide csv field size limit.
_CSV_LIMIT_LOCK = threading.Lock()


def _bad_value(want: pa.DataType | None, value: str) -> bool:
    if want is None or want == pa.string() or value == "":
        return False
    try:
        float(value) if pa.types.is_floating(want) else int(value)
    except ValueError:
        return True
    return False


def _drop_bad_field_counts(
    block: bytes, first_line: int, nfields: int, skips: SkipLog, bad_rows: list
) -> bytes:
    """Tolerant mode: drop lines whose field count differs from the header's."""
    keep = []
    for k, rec, raw in _records(block):
        if len(rec) != nfields:
            skips.add(first_line + k, f"{nfields} fields expected, got {len(rec)}")
            keep.append("")  # keep line numbering: an empty line is skipped by pyarrow
        else:
            keep.append(raw)
    return ("\n".join(keep) + "\n").encode()


class TraceParquetLoader:
    """``trace-parquet``: the same layout as Parquet (row numbers instead of lines)."""

    kind: ClassVar[str] = "trace-parquet"
    suffixes: ClassVar[tuple[str, ...]] = (".parquet", ".pq")
    description: ClassVar[str] = "iochar per-operation trace, Parquet with the trace-csv columns"

    def sniff(self, head: bytes) -> bool:
        """Parquet magic ``PAR1``, not marked as another kind's Parquet.

        The columns are in the footer, so they are checked when parsing; the
        snapshot walker marks its files near the start (see
        :data:`iochar.load.snapshot.PARQUET_MARKER`).
        """
        return _kinds.sniff_trace_parquet(head)  # the one rule, shared with sniffing by kind table

    def parse(
        self, src: Source, *, strict: bool = True, chunk_rows: int = 1_000_000
    ) -> Iterator[Parsed]:
        """Parse a trace Parquet file in chunks of at most ``chunk_rows`` rows.

        Consecutive row groups are read together (their columns decoded in
        parallel, ``use_threads``) while they hold at most ``chunk_rows`` rows and
        :data:`_MAX_PARQUET` bytes of column data (the footer's uncompressed
        ``total_byte_size``); a larger row group is streamed in batches of that
        size, so memory is bounded by a chunk whatever the file's row groups.
        A ``path`` column is read dictionary-encoded (Parquet stores strings
        that way, so the file's distinct paths are mapped once, not per row).
        """
        name = source_name(src)
        kind = self.kind
        pf = open_parquet(src, kind=kind)
        names = pf.schema_arrow.names
        cols, unknown = _check_columns(list(names), name, kind)
        pf = _with_dictionary_paths(pf, src, cols)
        skips = None if strict else SkipLog()
        st = _State()
        row = 1
        for groups, batch_rows in _row_group_runs(pf.metadata, chunk_rows, _MAX_PARQUET):
            try:
                if batch_rows is None:
                    tables = iter([pf.read_row_groups(groups, columns=cols, use_threads=True)])
                else:
                    tables = (
                        pa.Table.from_batches([b])
                        for b in pf.iter_batches(
                            batch_size=batch_rows, row_groups=groups, columns=cols
                        )
                    )
                for tb in tables:
                    tb = _trace_types(tb, cols, name, row, kind)
                    yield _normalize(tb, st, row, name, kind, "row", skips)
                    row += tb.num_rows
            except (OSError, pa.ArrowInvalid) as exc:
                raise _bad(
                    name, row, f"readable row group {groups[0]}", str(exc), kind, "row"
                ) from exc
        yield _final(st, kind, cols, unknown, skips)


def _with_dictionary_paths(pf, src: Source, cols: list[str]):
    """``pf`` reopened to read a string ``path`` column dictionary-encoded, when it can be.

    Only a plain file is reopened (with the footer already read); a buffer or
    a compressed input keeps ``pf``, whose paths are encoded after reading.
    """
    if "path" not in cols or not isinstance(src, (str, os.PathLike)) or is_compressed(src):
        return pf
    typ = pf.schema_arrow.field("path").type
    if not (pa.types.is_string(typ) or pa.types.is_large_string(typ)):
        return pf
    import pyarrow.parquet as pq

    return pq.ParquetFile(os.fspath(src), metadata=pf.metadata, read_dictionary=["path"])


def _row_group_runs(
    meta, chunk_rows: int, max_bytes: int
) -> Iterator[tuple[list[int], int | None]]:
    """Runs of consecutive row groups to read at once, with the batch size for big ones.

    Yields ``(groups, None)`` for groups read whole (together at most
    ``chunk_rows`` rows and ``max_bytes`` of uncompressed column data [bytes]),
    and ``([g], batch_rows)`` for a group larger than that, read in batches of
    ``batch_rows`` rows that each fit the same bounds.
    """
    run: list[int] = []
    rows = nbytes = 0
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        n, b = rg.num_rows, max(rg.total_byte_size, 0)
        if run and (rows + n > chunk_rows or nbytes + b > max_bytes):
            yield run, None
            run, rows, nbytes = [], 0, 0
        if n > chunk_rows or b > max_bytes:
            per_row = b / n if n else 0.0
            fit = int(max_bytes // per_row) if per_row else chunk_rows
            yield [g], max(1, min(chunk_rows, fit))
            continue
        run.append(g)
        rows, nbytes = rows + n, nbytes + b
    if run:
        yield run, None


def _trace_types(tb: pa.Table, cols: list[str], name: str, row: int, kind: str) -> pa.Table:
    """Columns cast to :data:`COLUMN_TYPES` (a dictionary-encoded path is kept as it is)."""
    out = {}
    try:
        for c in cols:
            col = tb.column(c)
            want = COLUMN_TYPES[c]
            if col.type == want:
                out[c] = col
            elif pa.types.is_dictionary(col.type) and col.type.value_type == want:
                out[c] = col
            else:
                out[c] = col.cast(want)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise _bad(name, row, "columns of the trace layout types", str(exc), kind, "row") from exc
    return pa.table(out)


register(TraceCsvLoader())
register(TraceParquetLoader())
