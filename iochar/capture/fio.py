"""Run fio here to measure a device for the FSU cost model (``iochar calibrate``).

Uselton & Wright (2013) fit ``t = a0 + a1 * b`` per operation from benchmark
runs at several transfer sizes with random offsets (their Eq. 4, Table I).
:func:`run_fio` makes such runs on this machine: fio over transfer sizes
4 KiB to 4 MiB (:func:`calibration_sizes`) with random offsets and direct I/O
on a file in a directory (falling back to buffered I/O, and saying so, when
the file system refuses ``O_DIRECT``), in bounded time. It returns a
:class:`CalibrationRun` with the calibration table (read from fio's JSON by
:func:`iochar.load.bench.read_fio_json`), the raw JSON and what was measured
and where (:func:`describe_location`).

Reading benchmark output made elsewhere (fio JSON, IOR text) is
:mod:`iochar.load.bench`; fitting the model is
:func:`iochar.analyze.fsu.fit_cost_model`.
"""

from __future__ import annotations

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
from iochar.load.bench import fio_documents, read_fio_json

__all__ = [
    "CalibrationRun",
    "calibration_sizes",
    "describe_location",
    "run_fio",
]

_KIB, _MIB = 1024, 1 << 20


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
                raw = fio_documents(text, out)[0][0]
            except InputError:
                raw = None
        failed = proc.returncode != 0 or raw is None
        if not failed and any(j.get("error") for j in raw.get("jobs", [])):
            failed = True
        if failed:
            return None, (err[-1] if err else f"exit status {proc.returncode}"), jobtext, cmd
        return raw, text, jobtext, cmd
