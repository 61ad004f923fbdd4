"""Run fio here: capacity sweeps per I/O path level and interference pairs.

- :func:`run_sweep` -- Méndez et al. section 2.1: one level of the I/O path measured by a
  sweep of read/write x sequential/random x request sizes (x process counts, Kwan &
  Reed's scale axis, fio ``numjobs``), each point repeated ``reps`` times (Kwan & Reed
  §3: every point with a 95 % confidence interval needs repetitions). Levels here:
  ``device`` (``O_DIRECT`` on a file in the directory: the page cache bypassed, the
  device and its driver measured), ``local_fs`` (buffered I/O through the page cache,
  reads after ``invalidate``), ``mount`` (buffered I/O on a given network or parallel
  mount). The I/O library level comes from IOR output (``iochar calibrate --from``).
- :func:`run_interference` -- Kwan & Reed Table 1: two jobs at once (read/read same
  file, read/read different files, read/write different files, write/write different
  files) and each job alone, repeated.

Both return fio's JSON text verbatim; :func:`iochar.load.capacity.capacity_document`
wraps a sweep for the store, :func:`iochar.analyze.interference.fio_pairs` reads the
pairs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence

from iochar.capture.fio import _direct_ok, describe_location
from iochar.errors import IocharError, ParameterError

__all__ = [
    "SWEEP_LEVELS",
    "PAIR_CASES",
    "QUICK_PLAN",
    "capacity_runs",
    "run_interference",
    "run_sweep",
]

#: Levels :func:`run_sweep` measures with fio.
SWEEP_LEVELS = ("device", "local_fs", "mount")
#: Kwan & Reed Table 1: (case, job A, job B, same file?).
PAIR_CASES = (
    ("read_read_same", "read", "read", True),
    ("read_read_diff", "read", "read", False),
    ("read_write_diff", "read", "write", False),
    ("write_write_diff", "write", "write", False),
)


def _fio() -> str:
    exe = shutil.which("fio")
    if exe is None:
        raise IocharError(
            "capacity sweeps need fio, which is not installed; install it, e.g. apt-get install fio"
        )
    return exe


def _run(jobtext: str, timeout: float) -> str:
    exe = _fio()
    with tempfile.TemporaryDirectory(prefix="iochar-fio-") as tmp:
        job = os.path.join(tmp, "sweep.fio")
        out = os.path.join(tmp, "out.json")
        with open(job, "w", encoding="utf-8") as fh:
            fh.write(jobtext)
        cmd = [exe, "--output-format=json", f"--output={out}", job]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise IocharError(f"fio did not finish within {timeout:.0f} s") from exc
        if proc.returncode != 0 or not os.path.exists(out):
            err = (proc.stderr or "").strip().splitlines()
            raise IocharError(f"fio failed: {err[-1] if err else proc.returncode}")
        with open(out, encoding="utf-8") as fh:
            return fh.read()


def run_sweep(
    directory: str | os.PathLike[str],
    level: str,
    *,
    ops: Sequence[str] = ("read", "write"),
    accesses: Sequence[str] = ("sequential", "random"),
    sizes: Sequence[int] = (4096, 65536, 1 << 20),
    nprocs: Sequence[int] = (1,),
    reps: int = 3,
    runtime_s: float = 0.3,
    file_bytes: int = 32 << 20,
) -> dict:
    """Sweep one level of the I/O path with fio (module docstring).

    Every point (op, access, size, nprocs, repetition) is a fio job of its own,
    ``stonewall`` between them, ``time_based`` for ``runtime_s``, psync engine, queue
    depth 1 per process; ``nprocs`` > 1 runs that many processes on one shared file
    (``numjobs``, ``group_reporting``), their aggregate rate is the point's rate.
    Total time about ``len(ops) * len(accesses) * len(sizes) * len(nprocs) * reps *
    runtime_s`` plus laying out the file.

    Parameters
    ----------
    directory : str or os.PathLike
        Existing writable directory (on the mount for ``mount``).
    level : str
        One of :data:`SWEEP_LEVELS`.
    ops : sequence of str, default ("read", "write")
        Operations.
    accesses : sequence of str, default ("sequential", "random")
        Access modes.
    sizes : sequence of int, default (4096, 65536, 1048576)
        Request sizes [bytes], multiples of 4096 for ``device``.
    nprocs : sequence of int, default (1,)
        Concurrent processes per point.
    reps : int, default 3
        Repetitions of every point.
    runtime_s : float, default 0.3
        Time per job [s].
    file_bytes : int, default 33554432
        Size of the data file [bytes].

    Returns
    -------
    dict
        ``runs`` (for :func:`~iochar.load.capacity.capacity_document`), ``level``,
        ``target``, ``fstype``, ``notes``, ``jobfile``.
    """
    caller = "run_sweep"
    d = os.fspath(directory)
    if not os.path.isdir(d):
        raise ParameterError("directory", caller, "an existing directory", d)
    if level not in SWEEP_LEVELS:
        raise ParameterError("level", caller, f"one of {SWEEP_LEVELS}", level)
    if not isinstance(reps, int) or reps < 1:
        raise ParameterError("reps", caller, "an int >= 1", reps)
    if set(ops) - {"read", "write"} or set(accesses) - {"sequential", "random"}:
        raise ParameterError("ops/accesses", caller, "read/write, sequential/random", ops)
    loc = describe_location(d)
    notes = []
    direct = level == "device"
    if direct:
        ok, why = _direct_ok(d)
        if not ok:
            raise IocharError(f"the device level needs O_DIRECT in {d}: {why}")
    data = os.path.join(d, f"iochar-sweep-{os.getpid()}.dat")
    lines = [
        "; written by iochar.capture.capacity.run_sweep",
        "[global]",
        f"filename={data}",
        f"size={int(file_bytes)}",
        "ioengine=psync",
        "iodepth=1",
        f"direct={1 if direct else 0}",
        "time_based=1",
        f"runtime={max(1, round(runtime_s * 1000))}ms",
        "randrepeat=0",
        "norandommap=1",
        "invalidate=1",
        "group_reporting=1",
    ]
    for op in ops:
        for acc in accesses:
            rw = ("rand" if acc == "random" else "") + op
            for b in sizes:
                for n in nprocs:
                    for r in range(reps):
                        lines += [
                            "",
                            f"[{level}-{rw}-{b}-np{n}-r{r}]",
                            f"rw={rw}",
                            f"bs={int(b)}",
                            f"numjobs={int(n)}",
                            "stonewall",
                        ]
    jobtext = "\n".join(lines) + "\n"
    njobs = len(ops) * len(accesses) * len(sizes) * len(nprocs) * reps
    try:
        text = _run(jobtext, timeout=njobs * runtime_s * 4 + 120)
    finally:
        if os.path.exists(data):
            os.unlink(data)
    if loc.get("fstype") in ("tmpfs", "ramfs"):
        notes.append(f"{loc['fstype']} is memory: no storage device is measured")
    return {
        "runs": [{"kind": "fio-json", "name": f"fio-{level}.json", "text": text}],
        "level": level,
        "target": os.path.realpath(d),
        "fstype": loc.get("fstype"),
        "notes": notes,
        "jobfile": jobtext,
    }


def run_interference(
    directory: str | os.PathLike[str],
    *,
    size: int = 1 << 20,
    reps: int = 3,
    runtime_s: float = 0.3,
    file_bytes: int = 32 << 20,
    direct: bool = True,
    cases: Sequence[str] | None = None,
) -> str:
    """Kwan & Reed Table 1 with fio: each pair of jobs together and each job alone.

    Job names say the case, the role and the repetition
    (``<case>.<a|b>.r<rep>``; alone runs are ``alone_read.a.r<rep>`` and
    ``alone_write.a.r<rep>``). The two jobs of a pair run at once (same
    ``new_group``-less stonewalled group), sequential access at ``size``, on the same
    file or on two files as the case says.

    Parameters
    ----------
    directory : str or os.PathLike
        Existing writable directory.
    size : int, default 1048576
        Request size [bytes].
    reps : int, default 3
        Repetitions of every case.
    runtime_s : float, default 0.3
        Time per case [s].
    file_bytes : int, default 33554432
        Size of each data file [bytes].
    direct : bool, default True
        O_DIRECT (falls back to buffered when refused).
    cases : sequence of str, optional
        Subset of :data:`PAIR_CASES` names.

    Returns
    -------
    str
        fio's JSON output.
    """
    d = os.fspath(directory)
    if not os.path.isdir(d):
        raise ParameterError("directory", "run_interference", "an existing directory", d)
    if direct and not _direct_ok(d)[0]:
        direct = False
    use = [c for c in PAIR_CASES if cases is None or c[0] in cases]
    f1 = os.path.join(d, f"iochar-pair-{os.getpid()}-1.dat")
    f2 = os.path.join(d, f"iochar-pair-{os.getpid()}-2.dat")
    lines = [
        "; written by iochar.capture.capacity.run_interference",
        "[global]",
        f"size={int(file_bytes)}",
        "ioengine=psync",
        f"direct={1 if direct else 0}",
        "time_based=1",
        f"runtime={max(1, round(runtime_s * 1000))}ms",
        f"bs={int(size)}",
        "invalidate=1",
    ]
    for r in range(reps):
        for op in ("read", "write"):
            lines += ["", f"[alone_{op}.a.r{r}]", f"rw={op}", f"filename={f1}", "stonewall"]
        for name, a, b, same in use:
            lines += ["", f"[{name}.a.r{r}]", f"rw={a}", f"filename={f1}", "stonewall"]
            lines += ["", f"[{name}.b.r{r}]", f"rw={b}", f"filename={f1 if same else f2}"]
    njobs = reps * (2 + len(use))
    try:
        return _run("\n".join(lines) + "\n", timeout=njobs * runtime_s * 4 + 120)
    finally:
        for f in (f1, f2):
            if os.path.exists(f):
                os.unlink(f)


#: The short sweep of notebook 05 (``calibrate_here``): per level, the access modes
#: and process counts measured, at 64 KiB and 1 MiB; about 0.4 s per fio job, 16 s.
QUICK_PLAN: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {
    "device": (("sequential", "random"), (1, 2)),
    "local_fs": (("sequential",), (1,)),
}


def capacity_runs(
    store,
    *,
    calibrate_here: bool = False,
    directory: str | os.PathLike[str] | None = None,
    reps: int = 2,
) -> tuple:
    """The capacity runs a report uses: the database's, a quick sweep here, or the bundled one.

    Parameters
    ----------
    store : iochar.Store
        The database; its ``capacity`` table is used whenever it has rows.
    calibrate_here : bool, default False
        Also run :data:`QUICK_PLAN` with :func:`run_sweep` on this machine (skipped,
        and said, without fio; a level fio refuses -- O_DIRECT on tmpfs -- is said
        and left out).
    directory : str or os.PathLike, optional
        Where to measure (default: a new temporary directory).
    reps : int, default 2
        Repetitions of every point (Kwan & Reed's intervals need 2 or more).

    Returns
    -------
    runs : pandas.DataFrame
        One row per repetition, the columns of the ``capacity`` table.
    source : str
        Where the runs come from, for a sentence ("the database", "a fio sweep run
        now in DIR", "the bundled calibration of the development machine").
    notes : list of str
        What did not run, and why.
    """
    import pandas as pd

    from iochar.datasets import data_dir
    from iochar.load.capacity import capacity_document, capacity_rows

    stored = store.sql("SELECT * FROM capacity").df()
    here: list[pd.DataFrame] = []
    notes: list[str] = []
    source = "the database"
    if calibrate_here and shutil.which("fio") is None:
        notes.append("fio is not installed here, so no sweep ran on this machine")
    elif calibrate_here:
        where = os.fspath(directory) if directory else tempfile.mkdtemp(prefix="iochar-05-")
        for level, (accesses, nprocs) in QUICK_PLAN.items():
            try:
                got = run_sweep(
                    where, level, accesses=accesses, sizes=(65536, 1 << 20), nprocs=nprocs,
                    reps=reps, runtime_s=0.1, file_bytes=16 << 20,
                )  # fmt: skip
            except IocharError as exc:  # O_DIRECT refused, fio failed: say so, go on
                notes.append(f"the {level} sweep did not run here: {exc}")
                continue
            doc = capacity_document(
                got["runs"], level=level, target=got["target"], fstype=got["fstype"]
            )
            here.append(capacity_rows(doc, f"fio-{level}"))
        if here:
            source = f"a fio sweep run now in {where}" + (
                " and the database" if len(stored) else ""
            )
    if not here and stored.empty:
        bundled = data_dir() / "fio" / "iochar-calibrate-vda-ext4.json"
        doc = capacity_document(
            [{"kind": "fio-json", "name": bundled.name, "text": bundled.read_text()}]
        )
        here.append(capacity_rows(doc, bundled.name))
        source = "the bundled calibration of the development machine (fio was not run here)"
    runs = pd.concat([stored, *here], ignore_index=True) if here else stored
    return runs, source, notes
