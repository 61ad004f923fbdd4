"""Benchmark output as a calibration table: fio JSON and IOR text readers.

Uselton & Wright (2013) fit ``t = a0 + a1 * b`` per operation from benchmark
runs at several transfer sizes with random offsets (their Eq. 4, Table I):
every run gives an operation, a transfer size ``b``, the number of I/Os
``N`` and the time ``T``. This module turns real benchmark output into that
table, one row per run and operation:

==============  =======================================================
column          meaning
==============  =======================================================
``op``          ``"read"`` or ``"write"``
``size_bytes``  transfer size [bytes] (the mean size when a job mixed sizes)
``ios``         I/Os of the run
``seconds``     the run's time for this op [s]
``bytes``       bytes moved [bytes]
``tool``        ``"fio"`` or ``"ior"``
``tool_version``  e.g. ``"fio-3.33"``, ``"IOR-4.0.0rc2+dev"``
``job``         fio job name, or ``"test <TestID>"`` for IOR
``group``       fio group id / IOR TestID
``iteration``   IOR repetition (``iter``); 0 for fio
``direct``      O_DIRECT was asked for (True/False; None when unknown)
``random``      random offsets (True/False; None when unknown)
``source``      input name
``line``        line of the job (fio) or result row (IOR)
==============  =======================================================

- :func:`read_fio_json` -- ``fio --output-format=json`` (or ``json+``),
  several jobs and several concatenated documents per file; each job's read
  and write sides with I/Os become rows. Jobs of one fio group that ran
  concurrently (``numjobs`` without ``group_reporting``) are combined: I/Os
  and bytes summed, the time the longest of them.
- :func:`read_ior` -- IOR 3.x/4.x text output (one or more runs
  concatenated; the ``Results:`` table, old and new column layouts).
- :func:`read_calibration` -- either, the kind sniffed from the content.

Like the other modules of :mod:`iochar.load` these are pure parsers, found
through the registry: this module registers the kinds ``fio-json`` and
``ior`` with :func:`iochar.load.register_bench`, so
:func:`iochar.load.bench_kinds` names them, :func:`iochar.load.sniff_bench`
tells them apart and :func:`iochar.load.get_bench_reader` returns their
reader. They are apart from the store's kinds (:func:`iochar.load.kinds`):
a calibration table is handed to the caller
(:func:`iochar.analyze.fsu.fit_cost_model`, ``iochar calibrate --from``),
it is not rows of the database, so ``iochar load`` does not take them.
Running fio here is :func:`iochar.capture.fio.run_fio`.

Bad input raises :class:`~iochar.errors.InputError` naming the file, the line
and the field.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from iochar.errors import InputError, ParameterError
from iochar.load import register_bench
from iochar.load._base import BenchReader
from iochar.load._text import Source, open_binary, source_name

__all__ = [
    "CALIBRATION_COLUMNS",
    "fio_documents",
    "read_calibration",
    "read_fio_json",
    "read_ior",
]

#: Columns of a calibration table, in order.
CALIBRATION_COLUMNS = (
    "op",
    "size_bytes",
    "ios",
    "seconds",
    "bytes",
    "tool",
    "tool_version",
    "job",
    "group",
    "iteration",
    "direct",
    "random",
    "source",
    "line",
)
_KIB, _MIB = 1024, 1 << 20


def _read_text(src: Source, kind: str) -> tuple[str, str]:
    name = source_name(src)
    try:
        with open_binary(src) as fh:
            raw = fh.read()
    except FileNotFoundError as exc:
        raise InputError(name, None, "an existing file", str(exc), kind=kind) from exc
    try:
        return name, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            name, line, "UTF-8 text", raw[exc.start : exc.start + 20], kind=kind
        ) from exc


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=list(CALIBRATION_COLUMNS))
    for col in ("size_bytes", "ios", "seconds", "bytes"):
        df[col] = df[col].astype(float)
    for col in ("group", "iteration", "line"):
        df[col] = df[col].astype("Int64")
    return df


# --------------------------------------------------------------------------- fio


_FIO_KIND = "fio-json"


def fio_documents(text: str, name: str) -> list[tuple[dict, int, int]]:
    """Every JSON object in fio's output (fio may print notes before or between them).

    Parameters
    ----------
    text : str
        fio's ``--output-format=json`` output.
    name : str
        The file it came from, for error messages.

    Returns
    -------
    list of (dict, int, int)
        ``(document, first line, character offset)`` per JSON object, in order.

    Raises
    ------
    InputError
        A JSON object does not parse, or there is none.
    """
    dec = json.JSONDecoder()
    docs = []
    pos = 0
    n = len(text)
    while pos < n:
        m = re.compile(r"^\{", re.M).search(text, pos)
        if m is None:
            break
        start = m.start()
        line0 = text.count("\n", 0, start) + 1
        try:
            doc, end = dec.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            bad_line = text.count("\n", 0, exc.pos) + 1
            got = text.splitlines()[bad_line - 1] if text.splitlines() else ""
            raise InputError(
                name, bad_line, f"valid fio JSON ({exc.msg})", got, kind=_FIO_KIND
            ) from exc
        docs.append((doc, line0, start))
        pos = end
    if not docs:
        first = text.strip().splitlines()[0] if text.strip() else "empty input"
        raise InputError(
            name,
            1 if text.strip() else None,
            "fio JSON output (fio --output-format=json): a line starting with '{'",
            first,
            kind=_FIO_KIND,
        )
    return docs


def _num(value, name: str, line: int, where: str) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not math.isfinite(float(value)) or float(value) < 0:
        raise InputError(name, line, f"{where} as a number >= 0", value, kind=_FIO_KIND)
    return float(value)


def _truthy(value) -> bool | None:
    if value is None:
        return None
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def _fio_side_amounts(
    side: dict, where: str, name: str, jline: int
) -> tuple[float, float, float] | None:
    """(I/Os, bytes, runtime [ms]) of one side of a fio job, checked; None if it did no I/O."""
    ios = _num(side.get("total_ios"), name, jline, f"{where}.total_ios")
    if ios == 0:
        return None
    nbytes = _num(side.get("io_bytes"), name, jline, f"{where}.io_bytes")
    ms = _num(side.get("runtime"), name, jline, f"{where}.runtime (ms)")
    if ms <= 0 or nbytes <= 0:
        raise InputError(
            name,
            jline,
            f"{where}.runtime and .io_bytes > 0 when total_ios > 0",
            f"runtime={ms:g} ms, io_bytes={nbytes:g}",
            kind=_FIO_KIND,
        )
    return ios, nbytes, ms


def _fio_job_rows(
    job: Any, i: int, jline: int, glob: dict, version: str, name: str, label: str
) -> list[dict[str, Any]]:
    """Calibration rows of ``jobs[i]``: one per read or write side that did I/O."""
    if not isinstance(job, dict):
        raise InputError(name, jline, f"jobs[{i}] as an object", type(job).__name__, kind=_FIO_KIND)
    err = job.get("error", 0)
    if err:
        raise InputError(
            name,
            jline,
            f"jobs[{i}] ({job.get('jobname')!r}) without error",
            f"error={err}",
            kind=_FIO_KIND,
        )
    opts = {**glob, **(job.get("job options") or {})}
    rw = str(opts.get("rw", opts.get("readwrite", "")))
    rows = []
    for op in ("read", "write"):
        side = job.get(op)
        if side is None:
            continue
        if not isinstance(side, dict):
            raise InputError(name, jline, f"jobs[{i}].{op} as an object", side, kind=_FIO_KIND)
        amounts = _fio_side_amounts(side, f"jobs[{i}].{op}", name, jline)
        if amounts is None:
            continue
        ios, nbytes, ms = amounts
        rows.append(
            {
                "op": op,
                "size_bytes": nbytes / ios,
                "ios": ios,
                "seconds": ms / 1000.0,
                "bytes": nbytes,
                "tool": "fio",
                "tool_version": version,
                "job": str(job.get("jobname", f"job{i}")),
                "group": int(job.get("groupid", i)),
                "iteration": 0,
                "direct": _truthy(opts.get("direct", "0")),
                "random": rw.startswith("rand") if rw else None,
                "source": label,
                "line": jline,
            }
        )
    return rows


def _fio_document_rows(
    doc: Any, line0: int, start: int, text: str, name: str, label: str
) -> list[dict[str, Any]]:
    """Calibration rows of one fio JSON document (at line ``line0``, offset ``start``)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        got = sorted(doc)[:6] if isinstance(doc, dict) else type(doc).__name__
        raise InputError(name, line0, "a fio JSON object with a 'jobs' list", got, kind=_FIO_KIND)
    version = str(doc.get("fio version", "fio"))
    glob = doc.get("global options") or {}
    # line of each job: the i-th '"jobname"' key after the document start
    job_lines = [
        text.count("\n", 0, m.start()) + 1
        for m in re.compile(r'"jobname"\s*:').finditer(text, start)
    ]
    rows = []
    for i, job in enumerate(doc["jobs"]):
        jline = job_lines[i] if i < len(job_lines) else line0
        rows += _fio_job_rows(job, i, jline, glob, version, name, label)
    return rows


def _combine_fio_groups(df: pd.DataFrame, docs: list[int]) -> pd.DataFrame:
    """Merge the rows of one run's group with the same op and size: sums, longest seconds."""
    df["_doc"] = docs
    keys = ["_doc", "group", "op", "size_bytes"]
    g = df.groupby(keys, sort=False, dropna=False)
    if g.ngroups < len(df):
        first = g.first()
        first["ios"] = g["ios"].sum()
        first["bytes"] = g["bytes"].sum()
        first["seconds"] = g["seconds"].max()
        first["job"] = g["job"].agg(lambda s: "+".join(s))
        df = first.reset_index()
    return df[list(CALIBRATION_COLUMNS)]


def read_fio_json(src: Source, *, combine_groups: bool = True) -> pd.DataFrame:
    """A calibration table from fio JSON output.

    Parameters
    ----------
    src : str, os.PathLike, bytes or binary file
        ``fio --output-format=json`` (or ``json+``) output; several
        documents may be concatenated, and non-JSON lines before a document
        (fio's notes) are skipped.
    combine_groups : bool, default True
        Combine the jobs of one fio group (they ran at the same time) that
        share an op and transfer size into one run: I/Os and bytes summed,
        seconds the longest job's. With ``group_reporting`` fio has done it
        already.

    Returns
    -------
    pandas.DataFrame
        One row per job (or group) and op with I/Os, columns
        :data:`CALIBRATION_COLUMNS`. ``seconds`` is the op's ``runtime``
        [s] (fio reports milliseconds); ``size_bytes`` is
        ``io_bytes / total_ios`` [bytes]. ``trim`` sides are ignored.

    Raises
    ------
    InputError
        Not JSON, no ``jobs`` list, a job that reported an error, or a
        missing or non-numeric ``io_bytes``, ``total_ios`` or ``runtime``
        (the message names the line and the field, e.g.
        ``jobs[2].write.runtime``).
    """
    if not isinstance(combine_groups, bool):
        raise ParameterError("combine_groups", "read_fio_json", "a bool", combine_groups)
    name, text = _read_text(src, _FIO_KIND)
    label = os.path.basename(name)
    rows: list[dict[str, Any]] = []
    docs: list[int] = []  # the document of each row: groups combine within one run only
    for k, (doc, line0, start) in enumerate(fio_documents(text, name)):
        got = _fio_document_rows(doc, line0, start, text, name, label)
        rows += got
        docs += [k] * len(got)
    df = _frame(rows)
    if combine_groups and len(df):
        df = _combine_fio_groups(df, docs)
    return df.reset_index(drop=True)


# --------------------------------------------------------------------------- IOR


_IOR_KIND = "ior"
_RE_IOR = re.compile(r"^\s*IOR-(\S+):\s+MPI Coordinated Test of Parallel I/O")
_RE_OPT = re.compile(r"^\s*([A-Za-z][\w ()/#.-]*?)\s*[:=]\s*(.*?)\s*$")
_UNITS = {
    "bytes": 1,
    "b": 1,
    "kib": _KIB,
    "kb": _KIB,
    "k": _KIB,
    "mib": _MIB,
    "mb": _MIB,
    "m": _MIB,
    "gib": 1 << 30,
    "gb": 1 << 30,
    "g": 1 << 30,
    "tib": 1 << 40,
    "tb": 1 << 40,
    "t": 1 << 40,
}
_NEEDED = ("access", "bw(MiB/s)", "block(KiB)", "xfer(KiB)", "total(s)")


def _ior_size(text: str) -> float | None:
    """``"262144 bytes"``, ``"64 MiB"``, ``"1.5 GiB"`` -> bytes (IOR prints binary units)."""
    m = re.match(r"^\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*$", text)
    if not m:
        return None
    unit = m.group(2).lower() or "bytes"
    if unit not in _UNITS:
        return None
    return float(m.group(1)) * _UNITS[unit]


def _ior_direct(command: str | None, options: dict[str, str]) -> bool | None:
    if "useo_direct" in options:
        return _truthy(options["useo_direct"])
    if command is None:
        return None
    toks = command.split()
    return any(t == "-B" or t.startswith("--posix.odirect") or "useO_DIRECT=1" in t for t in toks)


@dataclass
class _IorContext:
    """What IOR's lines so far say about the rows that follow: run, options, Results header."""

    version: str | None = None  # "IOR-<version>" of the run
    command: str | None = None  # its "Command line"
    options: dict[str, str] = field(default_factory=dict)  # Options block, keys lower case
    header: list[str] | None = None  # columns of the Results table in force
    header_line: int = 0
    in_options: bool = False  # inside an Options (or Summary) block
    test_id: int = 0


def _ior_context_line(ctx: _IorContext, line: str, stripped: str) -> bool:
    """Follow a run banner, Command line, TestID or Options block line; False: none of those."""
    m = _RE_IOR.match(line)
    if m:
        ctx.version, ctx.command, ctx.options, ctx.header, ctx.in_options = (
            "IOR-" + m.group(1),
            None,
            {},
            None,
            False,
        )
        ctx.test_id = 0
        return True
    if stripped.startswith("Command line"):
        mm = _RE_OPT.match(line)
        ctx.command = mm.group(2) if mm else None
        return True
    if stripped.startswith("TestID"):
        mm = _RE_OPT.match(line)
        try:
            ctx.test_id = int(mm.group(2)) if mm else ctx.test_id
        except ValueError:
            pass
        return True
    if stripped in ("Options:", "Summary:"):
        ctx.in_options, ctx.options, ctx.header = True, {}, None
        return True
    if ctx.in_options:
        if not stripped:
            if ctx.options:
                ctx.in_options = False
            return True
        mm = _RE_OPT.match(line)
        if mm:
            ctx.options[mm.group(1).strip().lower()] = mm.group(2)
            return True
        ctx.in_options = False
    return False


def _ior_results_header(ctx: _IorContext, line: str, stripped: str, lineno: int, name: str) -> bool:
    """Take a Results header line (``access ... bw(MiB/s) ...``), checking its columns."""
    if not (stripped.startswith("access") and "bw(MiB/s)" in stripped):
        return False
    toks = stripped.split()
    missing = [c for c in _NEEDED if c not in toks]
    if missing:
        raise InputError(
            name,
            lineno,
            "a Results header with columns " + ", ".join(_NEEDED),
            line,
            kind=_IOR_KIND,
        )
    ctx.header, ctx.header_line = toks, lineno
    return True


def _ior_result_tokens(ctx: _IorContext, stripped: str) -> list[str] | None:
    """Fields of a write or read row of the Results table in force; None: not one.

    The table ends at its summary lines (``Max Write``, ``Finished``...).
    """
    if ctx.header is None:
        return None
    if stripped.startswith(("Max Write", "Max Read", "Summary of all tests", "Finished")):
        ctx.header = None
        return None
    toks = stripped.split()
    if not toks or toks[0] not in ("write", "read"):
        return None  # dashes, 'remove' rows, progress notes, blank lines
    return toks


def _ior_numbers(
    header: list[str], header_line: int, toks: list[str], line: str, lineno: int, name: str
) -> dict[str, float]:
    """The numeric columns of a result row (bw, block, xfer, total, iter), checked."""
    if len(toks) != len(header):
        raise InputError(
            name,
            lineno,
            f"{len(header)} fields as in the Results header at line {header_line}",
            line,
            kind=_IOR_KIND,
        )
    vals: dict[str, float] = {}
    for col in ("bw(MiB/s)", "block(KiB)", "xfer(KiB)", "total(s)", "iter"):
        if col not in header:
            continue
        tok = toks[header.index(col)]
        try:
            vals[col] = float(tok)
        except ValueError as exc:
            raise InputError(
                name, lineno, f"a number in column {col!r}", tok, kind=_IOR_KIND
            ) from exc
    return vals


def _ior_bytes(
    options: dict[str, str],
    block: float,
    bw: float,
    total: float,
    line: str,
    lineno: int,
    name: str,
) -> float:
    """Bytes moved: block x segments x tasks, unless bw x total is more than 5% off (or only it)."""
    try:
        segments = int(options.get("segments", options.get("segment count", "")))
        tasks = int(options.get("tasks", options.get("clients", "")).split()[0])
        expected = block * segments * tasks
    except (ValueError, IndexError):
        expected = None
    from_bw = bw * total if bw > 0 and total > 0 else None
    if expected is not None and (from_bw is None or abs(from_bw / expected - 1) <= 0.05):
        return expected
    if from_bw is not None:
        return from_bw
    raise InputError(
        name,
        lineno,
        "segments and tasks in the Options block, or bw(MiB/s) and total(s)",
        line,
        kind=_IOR_KIND,
    )


def _ior_row(
    ctx: _IorContext, toks: list[str], line: str, lineno: int, name: str, label: str
) -> dict[str, Any]:
    """The calibration row of one write or read result row."""
    vals = _ior_numbers(ctx.header, ctx.header_line, toks, line, lineno, name)
    options = ctx.options
    xfer = _ior_size(options.get("xfersize", "")) or vals["xfer(KiB)"] * _KIB
    block = vals["block(KiB)"] * _KIB
    bw = vals["bw(MiB/s)"] * _MIB
    total = vals["total(s)"]
    if xfer <= 0 or block <= 0 or not (bw > 0 or total > 0):
        raise InputError(
            name,
            lineno,
            "positive xfer(KiB), block(KiB) and bw(MiB/s) or total(s)",
            line,
            kind=_IOR_KIND,
        )
    nbytes = _ior_bytes(options, block, bw, total, line, lineno, name)
    seconds = nbytes / bw if bw > 0 else total
    ordering = options.get("ordering in a file", "").strip().lower()
    return {
        "op": toks[0],
        "size_bytes": xfer,
        "ios": nbytes / xfer,
        "seconds": seconds,
        "bytes": nbytes,
        "tool": "ior",
        "tool_version": ctx.version or "IOR",
        "job": f"test {ctx.test_id}",
        "group": ctx.test_id,
        "iteration": int(vals.get("iter", 0)),
        "direct": _ior_direct(ctx.command, options),
        "random": (ordering == "random") if ordering else None,
        "source": label,
        "line": lineno,
    }


def read_ior(src: Source) -> pd.DataFrame:
    """A calibration table from IOR text output (IOR 3.x and 4.x).

    Parameters
    ----------
    src : str, os.PathLike, bytes or binary file
        IOR's standard output: one or more runs, each starting with
        ``IOR-<version>: MPI Coordinated Test of Parallel I/O``, with an
        ``Options:`` block and a ``Results:`` table (other lines, such as
        ``Commencing write performance test`` or a module's banner, are
        skipped).

    Returns
    -------
    pandas.DataFrame
        One row per ``write`` / ``read`` result row (each repetition),
        columns :data:`CALIBRATION_COLUMNS`. ``size_bytes`` is the
        transfer size (``xfersize`` of the Options block, else the
        ``xfer(KiB)`` column); ``bytes`` is ``block x segments x tasks``
        (or ``bw x total`` when those are missing or disagree by more than 5%,
        as with stonewalling); ``seconds`` is ``bytes / bw``, IOR's own
        bandwidth time (open + transfer + close, the ``total(s)`` column,
        carried with more digits); ``ios = bytes / size_bytes``.

    Raises
    ------
    InputError
        Empty input, no Results table with read or write rows, a Results
        header without ``bw(MiB/s)``, ``block(KiB)``, ``xfer(KiB)`` and
        ``total(s)``, or a result row with the wrong number of fields or a
        field that is not a number (the message names the line and column).
    """
    name, text = _read_text(src, _IOR_KIND)
    label = os.path.basename(name)
    if not text.strip():
        raise InputError(name, None, "IOR text output", "empty input", kind=_IOR_KIND)
    rows: list[dict[str, Any]] = []
    ctx = _IorContext()
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        stripped = line.strip()
        if _ior_context_line(ctx, line, stripped):
            continue
        if _ior_results_header(ctx, line, stripped, lineno, name):
            continue
        toks = _ior_result_tokens(ctx, stripped)
        if toks is not None:
            rows.append(_ior_row(ctx, toks, line, lineno, name, label))
    if not rows:
        raise InputError(
            name,
            None,
            "an IOR Results table with write or read rows (IOR 3.x/4.x text output)",
            text.strip().splitlines()[0],
            kind=_IOR_KIND,
        )
    return _frame(rows)


def read_calibration(src: Source, *, kind: str | None = None) -> pd.DataFrame:
    """A calibration table from fio JSON or IOR text, the kind sniffed from the content.

    Parameters
    ----------
    src : str, os.PathLike, bytes or binary file
        The benchmark output.
    kind : {"fio-json", "ior"}, optional
        Skip sniffing.

    Returns
    -------
    pandas.DataFrame
        See :data:`CALIBRATION_COLUMNS`.
    """
    if kind not in (None, _FIO_KIND, _IOR_KIND):
        raise ParameterError("kind", "read_calibration", "None, 'fio-json' or 'ior'", kind)
    if kind is None:
        name, text = _read_text(src, "calibration")
        kind = _sniff_text(text)
        if kind is None:
            raise InputError(
                name,
                None,
                "fio JSON or IOR text output",
                text.strip().splitlines()[0] if text.strip() else "empty input",
            )
        src = text.encode()
    return read_fio_json(src) if kind == _FIO_KIND else read_ior(src)


def _is_fio(text: str) -> bool:
    return '"fio version"' in text[:4096] or re.search(r"^\{", text[:4096], re.M) is not None


def _is_ior(text: str) -> bool:
    return _RE_IOR.search(text) is not None or "bw(MiB/s)" in text


def _sniff_text(text: str) -> str | None:
    """The benchmark kind of ``text`` (fio first: its notes may mention IOR), or None."""
    for reader in _READERS:
        if reader.sniff(text):
            return reader.kind
    return None


# --------------------------------------------------------------------------- registry

_READERS = (
    register_bench(
        BenchReader(
            kind=_FIO_KIND,
            description="fio --output-format=json (or json+) output: a calibration table",
            sniff=_is_fio,
            read=read_fio_json,
        )
    ),
    register_bench(
        BenchReader(
            kind=_IOR_KIND,
            description="IOR 3.x/4.x text output (the Results table): a calibration table",
            sniff=_is_ior,
            read=read_ior,
        )
    ),
)
