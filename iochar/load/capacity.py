"""Benchmark sweeps as rows of the ``capacity`` table (Méndez et al.; Kwan & Reed).

Méndez et al. (section 2.1, Fig. 2(a)) characterize the I/O system at each level of the
I/O path -- device, local file system, network/parallel file system, I/O library -- by
benchmark runs over operation, access mode and block size, kept as rows of operation
type, block size, access mode and transfer rate [MB/s]. Kwan & Reed (section 3) repeat
every measurement and report it with a 95 % confidence interval, so the repetitions are
kept: one row per run, the spread is computed from them
(:func:`iochar.analyze.capacity.capacity`).

The input is a *capacity document*, JSON written by :func:`capacity_document` (and by
``iochar calibrate --levels``): the level and target it measured and the benchmark's own
output, verbatim::

    {"iochar_capacity": 1, "level": "device", "target": "/scratch", "fstype": "ext4",
     "runs": [{"kind": "fio-json", "name": "sweep.json", "text": "<fio's JSON>"}]}

so fio JSON or IOR text from another machine loads too (wrapped, with the level said by
the caller). Each run's text is read by :mod:`iochar.load.bench` (its checks and
:class:`~iochar.errors.InputError` messages apply) and then:

- ``access``: ``random`` when fio's ``rw`` starts with ``rand`` or IOR's ``ordering in a
  file`` is ``random`` (``-z``), else ``sequential`` (fio ``rw`` man page; IOR ``-z``).
- ``nprocs``: for fio, the number of job entries of one group that ran together (jobs
  without ``group_reporting``) or the ``numjobs`` option when fio reported them as one;
  for IOR the ``tasks`` line of the run's Options block (``-np``).
- ``api``: IOR's ``api`` line (``-a``); ``POSIX`` for fio's synchronous engines.
- ``level`` (when the document does not name one): an IOR run through an I/O library
  (api other than POSIX) is ``library``, other IOR runs ``mount`` (IOR is the parallel
  file system benchmark of Méndez section 2.1), fio with ``direct=1`` ``device``, fio
  buffered ``local_fs``.
- ``rep``: IOR's ``iter``; for fio, the order of a run among the runs of the same level,
  op, access, size and nprocs in the document.
- ``rate`` = ``bytes / seconds`` [bytes/s], the aggregate over the processes of a run.

The loader is the ``capacity`` kind of :mod:`iochar.load._kinds`: a capacity document
is recognised by its first key, so ``iochar load`` takes one like any input; raw fio
JSON or IOR text is wrapped in one by :func:`iochar.analyze.capacity.store_capacity`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, ClassVar

import pandas as pd
import pyarrow as pa

from iochar.errors import InputError
from iochar.load import _kinds, register
from iochar.load._base import Parsed
from iochar.load._text import Source, open_binary, source_name

__all__ = ["LEVELS", "CapacityLoader", "capacity_document", "capacity_rows"]

KIND = "capacity"
#: Levels of the I/O path (Méndez et al. Fig. 2(a)), lowest first.
LEVELS = ("device", "local_fs", "mount", "library")
_RUN_KINDS = ("fio-json", "ior")
_COLS = [
    "level",
    "target",
    "fstype",
    "api",
    "op",
    "access",
    "size_bytes",
    "nprocs",
    "rep",
    "bytes",
    "seconds",
    "rate",
    "direct",
    "tool",
    "tool_version",
    "job",
]


def capacity_document(
    runs: list[dict[str, str]],
    *,
    level: str | None = None,
    target: str | None = None,
    fstype: str | None = None,
    notes: list[str] | None = None,
) -> bytes:
    """A capacity document (JSON bytes) around benchmark output.

    Parameters
    ----------
    runs : list of dict
        Each ``{"kind": "fio-json" or "ior", "name": str, "text": str}``: the
        benchmark's output verbatim.
    level : str, optional
        One of :data:`LEVELS`; None lets the rule of the module docstring decide.
    target : str, optional
        Directory, mount point or file measured.
    fstype : str, optional
        Its file system type.
    notes : list of str, optional
        Remarks kept with the runs (O_DIRECT refused...).

    Returns
    -------
    bytes
        UTF-8 JSON.
    """
    if level is not None and level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    doc = {
        "iochar_capacity": 1,
        "level": level,
        "target": target,
        "fstype": fstype,
        "notes": list(notes or []),
        "runs": [{"kind": r["kind"], "name": r["name"], "text": r["text"]} for r in runs],
    }
    return json.dumps(doc, indent=1).encode("utf-8")


def _fio_extra(text: str, name: str) -> list[dict[str, Any]]:
    """Per job entry: (document, group, rw, numjobs), in the order read_fio_json reads them."""
    from iochar.load.bench import fio_documents

    out = []
    for d, (doc, _, _) in enumerate(fio_documents(text, name)):
        glob = doc.get("global options") or {}
        for job in doc.get("jobs", []):
            opts = {**glob, **(job.get("job options") or {})}
            out.append(
                {
                    "doc": d,
                    "group": int(job.get("groupid", 0)),
                    "rw": str(opts.get("rw", opts.get("readwrite", "read"))),
                    "numjobs": int(str(opts.get("numjobs", "1")) or 1),
                    "sides": [
                        op
                        for op in ("read", "write")
                        if isinstance(job.get(op), dict) and job[op].get("total_ios", 0)
                    ],
                }
            )
    return out


def _fio_rows(text: str, name: str) -> pd.DataFrame:
    from iochar.load.bench import read_fio_json

    per_job = read_fio_json(text.encode("utf-8"), combine_groups=False)
    extra = _fio_extra(text, name)
    keys = []
    for e in extra:
        keys += [(e["doc"], e["group"], e["rw"], e["numjobs"]) for _ in e["sides"]]
    if len(keys) != len(per_job):  # pragma: no cover - both walk the same jobs
        raise InputError(name, None, "fio jobs read consistently", len(per_job), kind="fio-json")
    per_job["_doc"] = [k[0] for k in keys]
    per_job["_numjobs"] = [k[3] for k in keys]
    g = per_job.groupby(["_doc", "group", "op"], sort=False)
    out = g.agg(
        bytes=("bytes", "sum"),
        ios=("ios", "sum"),
        seconds=("seconds", "max"),
        entries=("job", "size"),
        numjobs=("_numjobs", "max"),
        job=("job", "first"),
        random=("random", "first"),
        direct=("direct", "first"),
        tool_version=("tool_version", "first"),
    ).reset_index()
    out["size_bytes"] = out["bytes"] / out["ios"]
    out["nprocs"] = out["entries"].where(out["entries"] > 1, out["numjobs"])
    out["access"] = out["random"].map({True: "random"}).fillna("sequential")
    out["api"] = "POSIX"
    out["tool"] = "fio"
    out["iteration"] = -1
    return out


_RE_API = re.compile(r"^\s*api\s*:\s*(\S+)", re.M)
_RE_TASKS = re.compile(r"^\s*tasks\s*:\s*(\d+)", re.M)


def _last_before(rx: re.Pattern, text: str, pos: int) -> str | None:
    got = None
    for m in rx.finditer(text, 0, pos):
        got = m.group(1)
    return got


def _ior_rows(text: str, name: str) -> pd.DataFrame:
    from iochar.load.bench import read_ior

    df = read_ior(text.encode("utf-8"))
    starts = [0]
    for ln in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(ln))
    apis, tasks = [], []
    for line in df["line"]:
        pos = starts[min(int(line) - 1, len(starts) - 1)]
        apis.append(_last_before(_RE_API, text, pos) or "POSIX")
        t = _last_before(_RE_TASKS, text, pos)
        tasks.append(int(t) if t else 1)
    df["api"] = [a.upper() for a in apis]
    df["nprocs"] = tasks
    df["access"] = df["random"].map({True: "random"}).fillna("sequential")
    return df


def _default_level(tool: str, api: str, direct: Any) -> str:
    if tool == "ior":
        return "mount" if api == "POSIX" else "library"
    return "device" if direct is True else "local_fs"


def capacity_rows(data: bytes, name: str = "<buffer>") -> pd.DataFrame:
    """The ``capacity`` rows of a capacity document.

    Parameters
    ----------
    data : bytes
        The document (:func:`capacity_document`).
    name : str, default "<buffer>"
        Its name, for error messages.

    Returns
    -------
    pandas.DataFrame
        Columns of the ``capacity`` table but ``source_id`` (units: bytes, s, bytes/s).

    Raises
    ------
    InputError
        Not a capacity document, an unknown run kind or level, or bad benchmark output.
    """
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(name, None, "a JSON capacity document", str(exc), kind=KIND) from exc
    if not isinstance(doc, dict) or doc.get("iochar_capacity") != 1:
        raise InputError(name, 1, 'an object with "iochar_capacity": 1', str(doc)[:60], kind=KIND)
    level = doc.get("level")
    if level is not None and level not in LEVELS:
        raise InputError(name, None, f"level one of {LEVELS}", level, kind=KIND)
    runs = doc.get("runs")
    if not isinstance(runs, list) or not runs:
        raise InputError(name, None, "a non-empty 'runs' list", runs, kind=KIND)
    frames = []
    for i, run in enumerate(runs):
        if not isinstance(run, dict) or run.get("kind") not in _RUN_KINDS:
            got = run.get("kind") if isinstance(run, dict) else run
            raise InputError(name, None, f"runs[{i}].kind one of {_RUN_KINDS}", got, kind=KIND)
        text = run.get("text")
        if not isinstance(text, str):
            raise InputError(name, None, f"runs[{i}].text as a string", type(text), kind=KIND)
        rname = f"{name}:runs[{i}]:{run.get('name', '')}"
        df = _fio_rows(text, rname) if run["kind"] == "fio-json" else _ior_rows(text, rname)
        df["_run"] = i
        frames.append(df)
    df = pd.concat(frames, ignore_index=True)
    df["level"] = [
        level or _default_level(t, a, d)
        for t, a, d in zip(df["tool"], df["api"], df["direct"], strict=True)
    ]
    df["target"] = doc.get("target")
    df["fstype"] = doc.get("fstype")
    keys = ["level", "op", "access", "size_bytes", "nprocs"]
    fio_rep = df.groupby(keys, sort=False).cumcount()
    df["rep"] = df["iteration"].where(df["iteration"] >= 0, fio_rep).astype(int)
    df["rate"] = df["bytes"] / df["seconds"]
    df["direct"] = df["direct"].astype(object).where(df["direct"].notna(), None)
    return df[_COLS].reset_index(drop=True)


class CapacityLoader:
    """The ``capacity`` kind: a capacity document to ``capacity`` rows (module docstring)."""

    kind: ClassVar[str] = KIND
    suffixes: ClassVar[tuple[str, ...]] = (".capacity.json",)
    description: ClassVar[str] = "iochar capacity document (fio JSON / IOR text per I/O level)"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts a capacity document.

        Parameters
        ----------
        head : bytes
            First bytes of the input.
        """
        return _kinds.sniff_capacity(head)  # the one rule, shared with the kind table

    def parse(
        self, src: Source, *, strict: bool = True, chunk_rows: int = 1_000_000
    ) -> Iterator[Parsed]:
        """Parse a capacity document (one chunk; such documents are small).

        Parameters
        ----------
        src : str, os.PathLike, bytes or binary file
            The document.
        strict : bool, default True
            Unused: a run is read whole or the document is refused.
        chunk_rows : int, default 1_000_000
            Unused (one chunk).
        """
        name = source_name(src)
        with open_binary(src) as fh:
            data = fh.read()
        df = capacity_rows(data, name)
        tab = pa.Table.from_pandas(df, preserve_index=False)
        levels = sorted(set(df["level"]))
        yield Parsed(tables={"capacity": tab}, meta={"tool": "capacity", "levels": levels})


register(CapacityLoader())
