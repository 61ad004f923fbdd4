"""Seeded application traces whose truth is known.

:func:`make_workload` builds a per-operation trace (iochar's trace layout) of
an iterative program with the three kinds of I/O of Miller & Katz (1991,
section 5.1), and returns which file is which:

- **required**: an input file read once at the start, an output file written
  once at the end;
- **checkpoint**: every ``ckpt_every`` iterations the state is written, to a
  new file each time (``ckpt.NNN``) or over the same file;
- **staging**: a data set larger than memory shuttled through a scratch file,
  read ``reread`` times and written ``rewrite`` times per iteration;

and, when asked, the patterns real programs add to these (their class is the
one Miller & Katz's definitions give; see :mod:`iochar.analyze.classify`):
a small log appended every iteration (``run.log``: output, required, not a
checkpoint), output streamed over the whole run, each byte written once
(``stream.dat``: required), the input read more than once (still required),
output written over a long last part of the run (``output_share``:
required), only 2 or 3 checkpoints, and a restart that first reads back the
checkpoint of an earlier run (``ckpt.000`` or ``ckpt.dat``: checkpoint);

with compute ("think") time between iterations, several processes (each with
its own files, N:N), and timing jitter.

:data:`SCENARIOS` sizes workloads like the seven applications of the paper's
Tables 1 and 2 (bvi, ccm, forma, gcm, les, upw, venus) by their published
running time, data size, read and write rates and average request size;
``scale`` shrinks time and volume together (rates are kept).

>>> ops, truth = make_scenario("venus", scale=0.01, random_state=0)
>>> sorted(set(truth["class"]))
['checkpoint', 'required', 'staging']
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, replace

import numpy as np
import pandas as pd
import pyarrow as pa

from iochar.errors import ParameterError
from iochar.result import Table

__all__ = ["Workload", "SCENARIOS", "make_workload", "make_scenario", "write_trace"]

MB = 1_000_000  # the paper's MB


@dataclass(frozen=True)
class Workload:
    """Parameters of a synthetic iterative application.

    Attributes
    ----------
    runtime_s : float
        Total run time. [s]
    iterations : int
        Compute iterations.
    io_bytes : int
        Request size of staging and checkpoint I/O. [bytes]
    input_bytes : int
        Required input, read once at the start. [bytes]
    output_bytes : int
        Required output, written once at the end. [bytes]
    staging_bytes : int
        Staging file extent per process (0: no staging). [bytes]
    reread : int
        Times the staging data are read per iteration.
    rewrite : int
        Times the staging data are written per iteration.
    ckpt_every : int
        Iterations between checkpoints (0: no checkpoints).
    ckpt_bytes : int
        Size of one checkpoint. [bytes]
    ckpt_mode : {"new", "overwrite"}
        A new file per checkpoint, or one file overwritten.
    nprocs : int
        Processes, each with its own files.
    jitter : float
        Relative jitter of iteration lengths (0.05 = ±5%).
    think : float
        Share of each iteration spent computing with no I/O (think time);
        the I/O phases share the rest.
    sync : bool
        Synchronous checkpoints and output: each is followed by an ``fsync``
        (``op = "sync"``, no size) before computing resumes; False leaves
        them to the page cache (asynchronous write-behind, no sync op).
    app : str
        Application name.
    log_bytes : int
        A log line of this size appended to ``run.log`` every iteration (0:
        no log). [bytes]
    stream_bytes : int
        Output streamed to ``stream.dat`` over the whole run, a piece per
        iteration, each byte written once (0: none). [bytes]
    input_reads : int
        Times the input is read: once at the start, then again at evenly
        spaced iterations.
    output_share : float
        Share of the run, at its end, spent writing the output (0.05: the
        last 4% of the run; larger shares shorten the iterations).
    restart : bool
        The run is a restart: it first reads back the last checkpoint of an
        earlier run (``ckpt.000`` in "new" mode, ``ckpt.dat`` in "overwrite"
        mode; needs ``ckpt_every`` > 0).
    """

    runtime_s: float = 100.0
    iterations: int = 20
    io_bytes: int = 64 * 1024
    input_bytes: int = 4 * MB
    output_bytes: int = 2 * MB
    staging_bytes: int = 8 * MB
    reread: int = 2
    rewrite: int = 1
    ckpt_every: int = 4
    ckpt_bytes: int = 2 * MB
    ckpt_mode: str = "new"
    nprocs: int = 1
    jitter: float = 0.05
    think: float = 0.15
    sync: bool = False
    app: str = "synth"
    log_bytes: int = 0
    stream_bytes: int = 0
    input_reads: int = 1
    output_share: float = 0.05
    restart: bool = False


def _scenario(runtime, data_mb, read_mbs, write_mbs, avg_kb, staging_share, ckpt, app):
    """A Workload shaped by one row of Miller & Katz Tables 1-2 (see :data:`SCENARIOS`)."""
    io = int(avg_kb * 1000)
    reads, writes, data = read_mbs * MB * runtime, write_mbs * MB * runtime, data_mb * MB
    iters = 20
    if staging_share == 0:  # compulsory I/O only (gcm, upw)
        return Workload(runtime, iters, io, int(max(reads, io)), int(max(writes, io)), 0, 1, 1,
                        0, io, "new", 1, 0.05, app=app)  # fmt: skip
    inp = int(max(min(data * (1 - staging_share) / 2, 0.05 * reads), io))
    out = int(max(min(data * (1 - staging_share) / 2, 0.05 * writes), io))
    stage = int(data * staging_share)
    n_ck = iters // ckpt if ckpt else 0
    ck_bytes = int(max(min(stage, 0.2 * writes / n_ck), io)) if n_ck else io
    reread = max(1, round((reads - inp) / (iters * stage)))
    rewrite = max(1, round((writes - out - n_ck * ck_bytes) / (iters * stage)))
    return Workload(runtime, iters, io, inp, out, stage, reread, rewrite, ckpt, ck_bytes, "new",
                    1, 0.05, app=app)  # fmt: skip


#: Workloads shaped like the seven applications of Miller & Katz Tables 1-2:
#: (running time s, data size MB, read MB/s, write MB/s, average request KB).
#: Table 2's last two average sizes are swapped in the text we have; Table 1's
#: averages (venus 0.032 MB, upw 0.445 MB) decide which is which.
SCENARIOS: dict[str, Workload] = {
    "bvi": _scenario(1258, 171, 12.3, 5.34, 16.1, 0.8, 5, "bvi"),
    "ccm": _scenario(205, 11.6, 4.25, 3.96, 31.9, 0.6, 4, "ccm"),
    "forma": _scenario(206, 30.0, 62.2, 5.68, 30.4, 0.7, 5, "forma"),
    "gcm": _scenario(1897, 229, 0.011, 0.12, 31.9, 0.0, 0, "gcm"),
    "les": _scenario(146, 224, 24.0, 25.2, 325, 0.8, 4, "les"),
    "upw": _scenario(596, 56, 0.001, 0.01, 456, 0.0, 0, "upw"),
    "venus": _scenario(379, 55.2, 26.4, 14.7, 32.7, 0.8, 4, "venus"),
}


def _check(w: Workload) -> None:
    caller = "make_workload"
    checks = [
        ("runtime_s", w.runtime_s > 0, "a positive number of seconds"),
        ("iterations", w.iterations >= 3, "an int >= 3"),
        ("io_bytes", w.io_bytes >= 1, "an int >= 1 [bytes]"),
        ("reread", w.reread >= 1, "an int >= 1"),
        ("rewrite", w.rewrite >= 1, "an int >= 1"),
        ("ckpt_every", 0 <= w.ckpt_every <= w.iterations, "an int in [0, iterations]"),
        ("ckpt_mode", w.ckpt_mode in ("new", "overwrite"), "'new' or 'overwrite'"),
        ("nprocs", w.nprocs >= 1, "an int >= 1"),
        ("jitter", 0 <= w.jitter < 0.5, "a float in [0, 0.5)"),
        ("think", 0 <= w.think <= 0.9, "a float in [0, 0.9]"),
        ("log_bytes", w.log_bytes >= 0, "an int >= 0 [bytes]"),
        ("stream_bytes", w.stream_bytes >= 0, "an int >= 0 [bytes]"),
        ("input_reads", 1 <= w.input_reads <= w.iterations, "an int in [1, iterations]"),
        ("output_share", 0.05 <= w.output_share <= 0.6, "a float in [0.05, 0.6]"),
        ("restart", not w.restart or w.ckpt_every > 0, "False when ckpt_every is 0"),
    ]
    for name, ok, what in checks:
        if not ok:
            raise ParameterError(name, caller, what, getattr(w, name))


def _transfers(nbytes: int, io: int) -> tuple[np.ndarray, np.ndarray]:
    """Offsets and sizes of sequential requests covering ``nbytes``."""
    n = max(1, -(-nbytes // io))
    off = np.arange(n, dtype=np.int64) * io
    size = np.minimum(io, nbytes - off).astype(np.int64)
    return off, size


def make_workload(workload: Workload, *, random_state=None) -> tuple[pa.Table, pd.DataFrame]:
    """A trace of ``workload`` and the class of each of its files.

    Parameters
    ----------
    workload : Workload
        The program's shape.
    random_state : int, numpy.random.Generator or None
        Seed for timing jitter and request service times.

    Returns
    -------
    ops : pyarrow.Table
        Trace layout (``job``, ``rank``, ``path``, ``op``, ``offset``,
        ``size``, ``t_start``, ``t_end``), loadable as trace-parquet/csv.
    truth : iochar.result.Table
        ``rank``, ``path``, ``class`` (required, checkpoint or staging), and
        the workload's parameters in ``params`` (an :class:`iochar.result.Table`).
    """
    w = workload
    _check(w)
    rng = np.random.default_rng(random_state)
    cols: dict[str, list] = {k: [] for k in ("rank", "path", "op", "offset", "size", "t_start")}
    # I/O phases of an iteration: staging in [0.05, 0.8), checkpoint in [0.85, 0.95),
    # squeezed towards the iteration's start by the think time (default 0.15: as is)
    squeeze = (1 - w.think) / 0.85
    truth = []
    # time budget: 5% at the start for required input, output_share (5%) at the end
    # for required output, the rest split into iterations
    t_io_end = 0.05 * w.runtime_s
    iter_time = round(0.95 - w.output_share, 12) * w.runtime_s
    lengths = (iter_time / w.iterations) * (1 + rng.uniform(-w.jitter, w.jitter, w.iterations))
    lengths *= iter_time / lengths.sum()
    it_start = t_io_end + np.concatenate(([0.0], np.cumsum(lengths)[:-1]))

    def emit(rank, path, op, nbytes, t0, t1, base=0):
        off, size = _transfers(nbytes, w.io_bytes)
        n = len(off)
        times = t0 + (t1 - t0) * np.arange(n) / n
        cols["rank"].append(np.full(n, rank, np.int32))
        cols["path"].append(np.full(n, path, object))
        cols["op"].append(np.full(n, op, object))
        cols["offset"].append(off + base)
        cols["size"].append(size)
        cols["t_start"].append(times)

    def fsync(rank, path, t):
        cols["rank"].append(np.array([rank], np.int32))
        cols["path"].append(np.array([path], object))
        cols["op"].append(np.array(["sync"], object))
        cols["offset"].append(np.array([-1], np.int64))  # no offset, no size
        cols["size"].append(np.array([-1], np.int64))
        cols["t_start"].append(np.array([t]))

    for rank in range(w.nprocs):
        d = f"/synth/{w.app}/r{rank}"
        emit(rank, f"{d}/input.dat", "read", w.input_bytes, 0.0, 0.8 * t_io_end)
        truth.append((rank, f"{d}/input.dat", "required"))
        again = {(k * w.iterations) // w.input_reads for k in range(1, w.input_reads)}
        if w.restart:  # read back the last checkpoint of an earlier run
            name = "ckpt.000" if w.ckpt_mode == "new" else "ckpt.dat"
            emit(rank, f"{d}/{name}", "read", w.ckpt_bytes, 0.8 * t_io_end, 0.95 * t_io_end)
            truth.append((rank, f"{d}/{name}", "checkpoint"))
        if w.staging_bytes:
            truth.append((rank, f"{d}/scratch.dat", "staging"))
        if w.log_bytes:
            truth.append((rank, f"{d}/run.log", "required"))
        if w.stream_bytes:
            truth.append((rank, f"{d}/stream.dat", "required"))
        piece = w.stream_bytes // w.iterations
        for i in range(w.iterations):
            t0, ln = it_start[i], lengths[i]
            if i in again:  # the input read once more at the start of this iteration
                emit(rank, f"{d}/input.dat", "read", w.input_bytes, t0, t0 + 0.04 * ln)
            if piece:  # streamed output: the next piece, written once
                a = t0 + ln * 0.80 * squeeze
                emit(rank, f"{d}/stream.dat", "write", piece, a, a + ln * 0.02 * squeeze, i * piece)
            if w.log_bytes:  # a log line appended
                a = t0 + ln * 0.83 * squeeze
                emit(rank, f"{d}/run.log", "write", w.log_bytes, a, a + 1e-4, i * w.log_bytes)
            if w.staging_bytes:  # shuttle the data set in (reread times) and out (rewrite)
                passes = [("read", k) for k in range(w.reread)] + [
                    ("write", k) for k in range(w.rewrite)
                ]
                step = 0.75 * squeeze / len(passes)
                for k, (op, _) in enumerate(passes):
                    a = t0 + ln * (0.05 + step * k)
                    emit(rank, f"{d}/scratch.dat", op, w.staging_bytes, a, a + ln * step)
            if w.ckpt_every and (i + 1) % w.ckpt_every == 0:
                name = f"ckpt.{(i + 1) // w.ckpt_every:03d}" if w.ckpt_mode == "new" else "ckpt.dat"
                a, b = t0 + ln * 0.85 * squeeze, t0 + ln * 0.95 * squeeze
                emit(rank, f"{d}/{name}", "write", w.ckpt_bytes, a, b)
                if w.sync:
                    fsync(rank, f"{d}/{name}", b)
                truth.append((rank, f"{d}/{name}", "checkpoint"))
        t_end0 = w.runtime_s - 0.8 * (w.output_share * w.runtime_s)
        emit(rank, f"{d}/output.dat", "write", w.output_bytes, t_end0, w.runtime_s * 0.998)
        if w.sync:
            fsync(rank, f"{d}/output.dat", w.runtime_s * 0.998)
        truth.append((rank, f"{d}/output.dat", "required"))

    t_start = np.concatenate(cols["t_start"])
    size = np.concatenate(cols["size"])
    offset = np.concatenate(cols["offset"])
    none = size < 0  # sync ops: no offset, no size; ~2 ms each
    service = np.where(
        none, 2e-3, np.maximum(size, 0) / 500e6 * (1 + rng.exponential(0.2, len(size)))
    )  # ~500 MB/s device
    rank = np.concatenate(cols["rank"])
    order = np.lexsort((t_start, rank))
    table = pa.table(
        {
            "job": pa.array(np.full(len(order), w.app, object)),
            "rank": pa.array(rank[order]),
            "path": pa.array(np.concatenate(cols["path"])[order], pa.string()),
            "op": pa.array(np.concatenate(cols["op"])[order], pa.string()),
            "offset": pa.array(offset[order], mask=none[order]),
            "size": pa.array(size[order], mask=none[order]),
            "t_start": pa.array(t_start[order]),
            "t_end": pa.array((t_start + service)[order]),
        }
    )
    tr = pd.DataFrame(truth, columns=["rank", "path", "class"]).drop_duplicates("path")
    return table, Table(tr.reset_index(drop=True), params=asdict(w))


def make_scenario(name: str, *, scale: float = 1.0, nprocs: int = 1, random_state=None):
    """A workload shaped like one of the paper's applications (see :data:`SCENARIOS`).

    Parameters
    ----------
    name : str
        One of ``bvi``, ``ccm``, ``forma``, ``gcm``, ``les``, ``upw``, ``venus``.
    scale : float, default 1.0
        Shrinks run time and every volume together (rates are kept).
    nprocs : int, default 1
        Processes.
    random_state : int, numpy.random.Generator or None
        Seed.

    Returns
    -------
    tuple of (pyarrow.Table, pandas.DataFrame)
        As :func:`make_workload`.
    """
    if name not in SCENARIOS:
        raise ParameterError("name", "make_scenario", "one of " + ", ".join(SCENARIOS), name)
    if not (isinstance(scale, (int, float)) and 0 < scale <= 1):
        raise ParameterError("scale", "make_scenario", "a float in (0, 1]", scale)
    w = SCENARIOS[name]

    def sc(x: int) -> int:
        return max(int(x * scale), w.io_bytes)

    w = replace(
        w,
        runtime_s=w.runtime_s * scale,
        input_bytes=sc(w.input_bytes),
        output_bytes=sc(w.output_bytes),
        staging_bytes=sc(w.staging_bytes) if w.staging_bytes else 0,
        ckpt_bytes=sc(w.ckpt_bytes),
        nprocs=nprocs,
    )
    return make_workload(w, random_state=random_state)


def write_trace(ops: pa.Table, truth: pd.DataFrame, path: str | os.PathLike[str]) -> str:
    """Write a synthetic trace (Parquet or CSV by suffix) and its truth beside it.

    Parameters
    ----------
    ops : pyarrow.Table
        The trace from :func:`make_workload`.
    truth : iochar.result.Table
        Its truth.
    path : str or os.PathLike
        ``.parquet`` or ``.csv`` file; the truth goes to ``<path>.truth.csv``.

    Returns
    -------
    str
        The truth file's path.
    """
    out = os.fspath(path)
    if out.lower().endswith(".parquet"):
        import pyarrow.parquet as pq

        pq.write_table(ops, out)
    else:
        import pyarrow.csv as pacsv

        pacsv.write_csv(ops, out)
    truth_path = out + ".truth.csv"
    truth.to_csv(truth_path, index=False)
    return truth_path
