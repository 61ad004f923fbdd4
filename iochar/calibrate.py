"""Calibration runs for the FSU cost model: fio and IOR output as a table, or fio run here.

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
- :func:`run_fio` -- run fio here over transfer sizes 4 KiB to 4 MiB with
  random offsets and direct I/O on a file in a directory (falling back to
  buffered I/O, and saying so, when the file system refuses ``O_DIRECT``),
  in bounded time; returns a :class:`CalibrationRun` with the table, the raw
  JSON and what was measured.

Bad input raises :class:`~iochar.errors.InputError` naming the file, the line
and the field.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from iochar.errors import InputError, IocharError, ParameterError
from iochar.load._text import Source, open_binary, source_name

__all__ = [
    "CALIBRATION_COLUMNS",
    "CalibrationRun",
    "calibration_sizes",
    "describe_location",
    "read_calibration",
    "read_fio_json",
    "read_ior",
    "run_fio",
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


def _fio_documents(text: str, name: str) -> list[tuple[dict, int, int]]:
    """Every JSON object in ``text`` (fio may print notes before or between them).

    Returns ``(document, first line, character offset)`` triples.
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
    for k, (doc, line0, start) in enumerate(_fio_documents(text, name)):
        if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
            got = sorted(doc)[:6] if isinstance(doc, dict) else type(doc).__name__
            raise InputError(
                name, line0, "a fio JSON object with a 'jobs' list", got, kind=_FIO_KIND
            )
        version = str(doc.get("fio version", "fio"))
        glob = doc.get("global options") or {}
        # line of each job: the i-th '"jobname"' key after the document start
        job_lines = [
            text.count("\n", 0, m.start()) + 1
            for m in re.compile(r'"jobname"\s*:').finditer(text, start)
        ]
        for i, job in enumerate(doc["jobs"]):
            jline = job_lines[i] if i < len(job_lines) else line0
            if not isinstance(job, dict):
                raise InputError(
                    name, jline, f"jobs[{i}] as an object", type(job).__name__, kind=_FIO_KIND
                )
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
            for op in ("read", "write"):
                side = job.get(op)
                if side is None:
                    continue
                if not isinstance(side, dict):
                    raise InputError(
                        name, jline, f"jobs[{i}].{op} as an object", side, kind=_FIO_KIND
                    )
                where = f"jobs[{i}].{op}"
                ios = _num(side.get("total_ios"), name, jline, f"{where}.total_ios")
                if ios == 0:
                    continue
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
                docs.append(k)
    df = _frame(rows)
    if combine_groups and len(df):
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
        df = df[list(CALIBRATION_COLUMNS)]
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
    version = command = None
    options: dict[str, str] = {}
    header: list[str] | None = None
    header_line = 0
    in_options = False
    test_id = 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        m = _RE_IOR.match(line)
        if m:
            version, command, options, header, in_options = (
                "IOR-" + m.group(1),
                None,
                {},
                None,
                False,
            )
            test_id = 0
            continue
        stripped = line.strip()
        if stripped.startswith("Command line"):
            mm = _RE_OPT.match(line)
            command = mm.group(2) if mm else None
            continue
        if stripped.startswith("TestID"):
            mm = _RE_OPT.match(line)
            try:
                test_id = int(mm.group(2)) if mm else test_id
            except ValueError:
                pass
            continue
        if stripped in ("Options:", "Summary:"):
            in_options, options, header = True, {}, None
            continue
        if in_options:
            if not stripped:
                if options:
                    in_options = False
                continue
            mm = _RE_OPT.match(line)
            if mm:
                options[mm.group(1).strip().lower()] = mm.group(2)
                continue
            in_options = False
        if stripped.startswith("access") and "bw(MiB/s)" in stripped:
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
            header, header_line = toks, lineno
            continue
        if header is None:
            continue
        if stripped.startswith(("Max Write", "Max Read", "Summary of all tests", "Finished")):
            header = None
            continue
        toks = stripped.split()
        if not toks or toks[0] not in ("write", "read"):
            continue  # dashes, 'remove' rows, progress notes, blank lines
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
        try:
            segments = int(options.get("segments", options.get("segment count", "")))
            tasks = int(options.get("tasks", options.get("clients", "")).split()[0])
            expected = block * segments * tasks
        except (ValueError, IndexError):
            expected = None
        from_bw = bw * total if bw > 0 and total > 0 else None
        if expected is not None and (from_bw is None or abs(from_bw / expected - 1) <= 0.05):
            nbytes = expected
        elif from_bw is not None:
            nbytes = from_bw
        else:
            raise InputError(
                name,
                lineno,
                "segments and tasks in the Options block, or bw(MiB/s) and total(s)",
                line,
                kind=_IOR_KIND,
            )
        seconds = nbytes / bw if bw > 0 else total
        ordering = options.get("ordering in a file", "").strip().lower()
        rows.append(
            {
                "op": toks[0],
                "size_bytes": xfer,
                "ios": nbytes / xfer,
                "seconds": seconds,
                "bytes": nbytes,
                "tool": "ior",
                "tool_version": version or "IOR",
                "job": f"test {test_id}",
                "group": test_id,
                "iteration": int(vals.get("iter", 0)),
                "direct": _ior_direct(command, options),
                "random": (ordering == "random") if ordering else None,
                "source": label,
                "line": lineno,
            }
        )
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
        if '"fio version"' in text[:4096] or re.search(r"^\{", text[:4096], re.M):
            kind = _FIO_KIND
        elif _RE_IOR.search(text) or "bw(MiB/s)" in text:
            kind = _IOR_KIND
        else:
            raise InputError(
                name,
                None,
                "fio JSON or IOR text output",
                text.strip().splitlines()[0] if text.strip() else "empty input",
            )
        src = text.encode()
    return read_fio_json(src) if kind == _FIO_KIND else read_ior(src)


# --------------------------------------------------------------------------- running fio


def calibration_sizes(
    min_bytes: int = 4 * _KIB, max_bytes: int = 4 * _MIB, factor: int = 4
) -> list[int]:
    """Transfer sizes from ``min_bytes`` to ``max_bytes`` by a constant factor.

    Parameters
    ----------
    min_bytes : int, default 4096
        Smallest size. [bytes]
    max_bytes : int, default 4194304
        Largest size (included when reached exactly). [bytes]
    factor : int, default 4
        Ratio of neighbouring sizes (2: the paper's eleven sizes 4 KiB to
        4 MiB; 4: six sizes).

    Returns
    -------
    list of int
        Sizes in bytes.

    Examples
    --------
    >>> calibration_sizes()
    [4096, 16384, 65536, 262144, 1048576, 4194304]
    >>> len(calibration_sizes(factor=2))
    11
    """
    caller = "calibration_sizes"
    for nm, v, lo in (
        ("min_bytes", min_bytes, 1),
        ("max_bytes", max_bytes, 1),
        ("factor", factor, 2),
    ):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ParameterError(nm, caller, f"an int >= {lo}", v)
    if max_bytes < min_bytes:
        raise ParameterError("max_bytes", caller, "an int >= min_bytes", max_bytes)
    out, b = [], min_bytes
    while b <= max_bytes:
        out.append(b)
        b *= factor
    return out


def describe_location(path: str | os.PathLike[str]) -> dict[str, Any]:
    """What a directory sits on: mount point, file system type, device (Linux).

    Parameters
    ----------
    path : str or os.PathLike
        A file or directory.

    Returns
    -------
    dict
        ``mount``, ``fstype``, ``source`` (device or remote), ``device``
        (block device name), ``rotational`` (True for spinning disks; None
        when unknown) and ``model``; None values where ``/proc`` and
        ``/sys`` do not tell.
    """
    real = os.path.realpath(os.fspath(path))
    info: dict[str, Any] = {
        "mount": None,
        "fstype": None,
        "source": None,
        "device": None,
        "rotational": None,
        "model": None,
    }
    best, majmin = -1, None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            for ln in fh:
                left, _, right = ln.partition(" - ")
                f = left.split()
                r = right.split()
                if len(f) < 5 or len(r) < 2:
                    continue
                mnt = f[4].encode().decode("unicode_escape")
                inside = real == mnt or real.startswith(mnt.rstrip("/") + "/")
                if inside and len(mnt) > best:
                    best = len(mnt)
                    info.update(mount=mnt, fstype=r[0], source=r[1])
                    majmin = f[2]
    except OSError:
        return info
    if majmin and not majmin.startswith("0:"):
        try:
            dev = os.path.realpath(f"/sys/dev/block/{majmin}")
            name = os.path.basename(dev)
            parent = os.path.dirname(dev)
            base = parent if os.path.exists(os.path.join(dev, "partition")) else dev
            info["device"] = name
            with open(os.path.join(base, "queue", "rotational")) as fh:
                info["rotational"] = fh.read().strip() == "1"
            model = os.path.join(base, "device", "model")
            if os.path.exists(model):
                with open(model) as fh:
                    info["model"] = fh.read().strip() or None
        except OSError:
            pass
    return info


@dataclass
class CalibrationRun:
    """What :func:`run_fio` measured.

    Attributes
    ----------
    table : pandas.DataFrame
        The calibration table (:data:`CALIBRATION_COLUMNS`).
    raw : dict
        fio's JSON output, as parsed.
    command : list of str
        The fio command line run.
    jobfile : str
        The fio job file text.
    fio_version : str
        ``fio --version``.
    directory : str
        Where the data file lived.
    location : dict
        :func:`describe_location` of ``directory``.
    direct : bool
        Whether O_DIRECT was used.
    notes : list of str
        Honest remarks (O_DIRECT refused, memory file system...).
    sizes : list of int
        Transfer sizes. [bytes]
    runtime_s : float
        Time per size and op. [s]
    file_bytes : int
        Size of the file the random offsets fall in. [bytes]
    ioengine : str
        fio I/O engine (queue depth 1).
    wall_s : float
        Wall-clock time of the whole run (laying out the file included). [s]
    json_path : str or None
        Where the raw JSON was saved.
    """

    table: pd.DataFrame
    raw: dict
    command: list[str]
    jobfile: str
    fio_version: str
    directory: str
    location: dict
    direct: bool
    notes: list[str] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    runtime_s: float = 0.0
    file_bytes: int = 0
    ioengine: str = "psync"
    wall_s: float = 0.0
    json_path: str | None = None

    def describe(self) -> list[str]:
        """Lines saying what was measured, where and how (for a report or the CLI).

        Returns
        -------
        list of str
            Human-readable lines.
        """
        loc = self.location
        dev = loc.get("source") or "?"
        if loc.get("device"):
            kind = {True: "rotational", False: "non-rotational", None: "rotation unknown"}[
                loc.get("rotational")
            ]
            dev += (
                f" ({loc['device']}, {kind}"
                + (f", {loc['model']}" if loc.get("model") else "")
                + ")"
            )
        io = "direct I/O (O_DIRECT)" if self.direct else "buffered I/O (no O_DIRECT)"
        lines = [
            f"{self.fio_version} in {self.directory}: {loc.get('fstype') or '?'} on {dev}, "
            f"mounted at {loc.get('mount') or '?'}",
            f"{io}, random offsets in a {_human(self.file_bytes)} file, {self.ioengine} engine, "
            "queue depth 1, writes then reads per size",
            "sizes: "
            + ", ".join(_human(s) for s in self.sizes)
            + f"; {self.runtime_s:g} s per size and op; {len(self.table)} runs in "
            f"{self.wall_s:.1f} s",
        ]
        lines += [f"note: {n}" for n in self.notes]
        return lines


def _human(n: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", _MIB), ("KiB", _KIB)):
        if n >= size and n % size == 0:
            return f"{n // size:g} {unit}"
    return f"{n:g} B"


def _direct_ok(directory: str) -> tuple[bool, str | None]:
    """Can a file in ``directory`` be opened and written with O_DIRECT?"""
    flag = getattr(os, "O_DIRECT", None)
    if flag is None:
        return False, "this platform has no O_DIRECT"
    fd, path = tempfile.mkstemp(prefix=".iochar-odirect-", dir=directory)
    os.close(fd)
    try:
        fd = os.open(path, os.O_RDWR | flag)
    except OSError as exc:
        os.unlink(path)
        return False, f"open(O_DIRECT) failed: {exc.strerror}"
    buf = mmap.mmap(-1, 4096)  # page-aligned
    try:
        os.write(fd, buf)
        return True, None
    except OSError as exc:
        return False, f"an O_DIRECT write failed: {exc.strerror}"
    finally:
        buf.close()
        os.close(fd)
        os.unlink(path)


def _jobfile(
    data: str,
    sizes: Sequence[int],
    *,
    direct: bool,
    runtime_s: float,
    file_bytes: int,
    ioengine: str,
) -> str:
    ms = max(1, int(round(runtime_s * 1000)))
    lines = [
        "; written by iochar.calibrate.run_fio",
        "[global]",
        f"filename={data}",
        f"size={file_bytes}",
        f"ioengine={ioengine}",
        "iodepth=1",
        f"direct={1 if direct else 0}",
        "time_based=1",
        f"runtime={ms}ms",
        "randrepeat=0",
        "norandommap=1",
        "invalidate=1",
        "group_reporting=1",
    ]
    for b in sizes:
        lines += ["", f"[randwrite-{b}]", "rw=randwrite", f"bs={b}", "stonewall"]
        if not direct:
            lines.append("end_fsync=1")  # count the flush, not only the page cache
        lines += ["", f"[randread-{b}]", "rw=randread", f"bs={b}", "stonewall"]
    return "\n".join(lines) + "\n"


def run_fio(
    directory: str | os.PathLike[str],
    *,
    sizes: Sequence[int] | None = None,
    runtime_s: float = 2.0,
    file_bytes: int = 256 * _MIB,
    direct: bool = True,
    ioengine: str = "psync",
    fio: str = "fio",
    keep_file: bool = False,
    json_path: str | os.PathLike[str] | None = None,
) -> CalibrationRun:
    """Run fio calibration jobs on a file in ``directory`` and parse them.

    For each transfer size, a random-write job then a random-read job run
    for ``runtime_s`` each (``stonewall``: one at a time, queue depth 1),
    with offsets drawn at random in a ``file_bytes`` file, with O_DIRECT
    when the file system accepts it. When it refuses (``EINVAL``, as older
    tmpfs does), the run falls back to buffered I/O, adds ``end_fsync`` to
    the writes, and says so in ``notes``. The total time is about
    ``2 * len(sizes) * runtime_s`` plus laying out the file.

    Parameters
    ----------
    directory : str or os.PathLike
        An existing, writable directory on the device to measure.
    sizes : sequence of int, optional
        Transfer sizes [bytes]; default :func:`calibration_sizes` (4 KiB to
        4 MiB by powers of 4). Multiples of 4096 for direct I/O.
    runtime_s : float, default 2.0
        Time per size and op. [s]
    file_bytes : int, default 268435456
        Size of the data file (at least 4 x the largest size). [bytes]
    direct : bool, default True
        Ask for O_DIRECT (falls back when refused).
    ioengine : str, default "psync"
        fio I/O engine.
    fio : str, default "fio"
        The fio executable.
    keep_file : bool, default False
        Keep the data file afterwards.
    json_path : str or os.PathLike, optional
        Also save fio's raw JSON output there.

    Returns
    -------
    CalibrationRun
        The table, the raw output and what was measured.

    Raises
    ------
    IocharError
        fio is not installed, or fio failed.
    ParameterError
        A missing directory or bad sizes, run time or file size.
    """
    caller = "run_fio"
    d = os.fspath(directory)
    if not os.path.isdir(d):
        raise ParameterError("directory", caller, "an existing directory", d)
    exe = shutil.which(fio)
    if exe is None:
        raise IocharError(
            f"calibration needs fio, which is not installed (looked for {fio!r} on PATH); "
            "install it, e.g. apt-get install fio, dnf install fio or brew install fio"
        )
    sizes = list(calibration_sizes() if sizes is None else sizes)
    if not sizes or any(isinstance(b, bool) or not isinstance(b, int) or b < 512 for b in sizes):
        raise ParameterError("sizes", caller, "a non-empty sequence of ints >= 512 [bytes]", sizes)
    if not (
        isinstance(runtime_s, (int, float))
        and not isinstance(runtime_s, bool)
        and 0.05 <= runtime_s <= 600
    ):
        raise ParameterError("runtime_s", caller, "a number of seconds in [0.05, 600]", runtime_s)
    if (
        isinstance(file_bytes, bool)
        or not isinstance(file_bytes, int)
        or file_bytes < 4 * max(sizes)
    ):
        raise ParameterError(
            "file_bytes", caller, f"an int >= 4 x the largest size ({4 * max(sizes)})", file_bytes
        )
    notes: list[str] = []
    location = describe_location(d)
    use_direct = bool(direct)
    if use_direct:
        ok, why = _direct_ok(d)
        if not ok:
            use_direct = False
            notes.append(
                f"O_DIRECT refused on {location.get('fstype') or 'this file system'} ({why}); "
                "fell back to buffered I/O: writes end with an fsync, reads may be served "
                "from the page cache, so small-transfer costs are underestimated"
            )
        elif any(b % 4096 for b in sizes):
            notes.append("some sizes are not multiples of 4096; O_DIRECT may reject them")
    else:
        notes.append("buffered I/O was asked for (no O_DIRECT): the page cache is measured too")
    if location.get("fstype") in ("tmpfs", "ramfs"):
        notes.append(
            f"{location['fstype']} is a memory file system: this measures memory copies "
            "and system calls, not a storage device"
        )
    if location.get("fstype") in ("overlay", "fuse", "9p", "virtiofs", "nfs", "nfs4"):
        notes.append(
            f"{location['fstype']}: I/O passes through another layer (container, "
            "hypervisor or network); the device behind it is not measured alone"
        )
    dev, model = location.get("device") or "", location.get("model") or ""
    if re.match(r"^(vd|xvd)", dev) or re.search(r"QEMU|Virtual|VBOX", model, re.I):
        notes.append(
            f"{dev or model} is a virtual disk: the hypervisor's storage and caches sit behind "
            "it (O_DIRECT bypasses only this guest's page cache), and its 'rotational' flag "
            "says nothing about the media"
        )
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    data = os.path.join(d, f"iochar-calibrate-{os.getpid()}.dat")
    t0 = time.perf_counter()
    try:
        raw, text, jobtext, cmd = _run_fio_once(
            exe, data, sizes, use_direct, runtime_s, file_bytes, ioengine
        )
        if raw is None and use_direct:  # fio itself refused O_DIRECT
            use_direct = False
            notes.append(
                "fio's O_DIRECT jobs failed; fell back to buffered I/O (writes end with an "
                "fsync; reads may come from the page cache)"
            )
            raw, text, jobtext, cmd = _run_fio_once(
                exe, data, sizes, use_direct, runtime_s, file_bytes, ioengine
            )
        if raw is None:
            raise IocharError(f"fio failed: {text}")
    finally:
        if not keep_file and os.path.exists(data):
            os.unlink(data)
    wall = time.perf_counter() - t0
    if json_path is not None:  # fio's own bytes
        with open(json_path, "w", encoding="utf-8") as fh:
            fh.write(text)
    table = read_fio_json(text.encode())
    table["source"] = os.path.basename(os.fspath(json_path)) if json_path else "fio"
    return CalibrationRun(
        table=table,
        raw=raw,
        command=cmd,
        jobfile=jobtext,
        fio_version=version or "fio",
        directory=os.path.realpath(d),
        location=location,
        direct=use_direct,
        notes=notes,
        sizes=sizes,
        runtime_s=float(runtime_s),
        file_bytes=file_bytes,
        ioengine=ioengine,
        wall_s=wall,
        json_path=os.fspath(json_path) if json_path is not None else None,
    )


def _run_fio_once(exe, data, sizes, direct, runtime_s, file_bytes, ioengine):
    """(raw JSON or None, fio's output text or the error, job file text, command)."""
    jobtext = _jobfile(
        data, sizes, direct=direct, runtime_s=runtime_s, file_bytes=file_bytes, ioengine=ioengine
    )
    with tempfile.TemporaryDirectory(prefix="iochar-fio-") as tmp:
        job = os.path.join(tmp, "calibrate.fio")
        out = os.path.join(tmp, "out.json")
        with open(job, "w", encoding="utf-8") as fh:
            fh.write(jobtext)
        cmd = [exe, "--output-format=json", f"--output={out}", job]
        timeout = 2 * len(sizes) * runtime_s * 4 + 120
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise IocharError(f"fio did not finish within {timeout:.0f} s") from exc
        err = (proc.stderr or "").strip().splitlines()
        raw, text = None, ""
        if os.path.exists(out) and os.path.getsize(out):
            with open(out, encoding="utf-8") as fh:
                text = fh.read()
            try:
                raw = _fio_documents(text, out)[0][0]
            except InputError:
                raw = None
        failed = proc.returncode != 0 or raw is None
        if not failed and any(j.get("error") for j in raw.get("jobs", [])):
            failed = True
        if failed:
            return None, (err[-1] if err else f"exit status {proc.returncode}"), jobtext, cmd
        return raw, text, jobtext, cmd
