"""Populations of repeated jobs whose I/O-time spread is known (Carns et al. 2011, section 4.1).

Carns et al. (2011) grouped Intrepid's jobs by user, process count, file
count and bytes read and written (within 1%), and found that the I/O time of
the slowest rank varied from run to run with coefficients of variation (CV)
from 7.9% to 262.2% (Table IV); the two rank-0 I/O job sets (NuclearPhysics A
and B) varied most. :func:`make_population` draws such populations with a
known mean and CV per group, and writes them as inputs that load through
``Store.load`` today:

- :func:`write_darshan_logs`: one real Darshan log per job (format 3.41,
  zlib), written by libdarshan-util's own log writer through cffi, as
  ``darshan-convert`` writes logs (the approach of
  ``benchmarks/_darshan_writer.py``). A log carries the whole identity the
  paper grouped by: uid, executable, process count, and per-file POSIX (and,
  for ``N:1`` groups, MPI-IO) records with bytes, operation counts, access
  sizes, alignment, sequentiality, cumulative read/write/metadata times and,
  for shared files, Darshan's slowest-rank time. This is the paper's own data
  source, so it is the default for identity-based grouping; it needs the
  ``darshan`` package (``iochar[darshan]``).
- :func:`write_trace`: every job in one ``trace-parquet`` file (``job_id``,
  ``job`` = application, per-operation ``open``/``read``/``write`` rows with
  their durations). One load for thousands of jobs, and no optional package;
  but the trace layout has no user, and its process count is the number of
  ranks that did I/O, so rank-0 jobs lose their size. Those are the jobs the
  signature clustering of :func:`iochar.analyze.variance.cluster_jobs` is for.

The model of one job
--------------------
A group is a :class:`JobGroup`. Each of its ``samples`` jobs has the same
identity; its bytes read and written are jittered by at most
``byte_jitter`` (default 0.4%, so a group never spreads by more than 1%).
The job's slowest-rank I/O time is ``T = floor_s + (mean - floor_s) * x /
mean(x)`` with ``x`` lognormal: an uncontended time ``floor_s = floor *
mean_io_s`` plus a heavy-tailed contention delay. With ``moments="exact"``
(default) the lognormal's shape is solved for the drawn sample so that the
realized mean and CV (``ddof=1``) equal ``mean_io_s`` and ``cv`` exactly (the
floor is lowered when ``samples`` is too small to reach ``cv``: a sample of n
cannot have a CV above about sqrt(n)); with ``moments="population"`` the
jobs are drawn from the lognormal whose population mean and CV are the
targets, and the realized values are reported in the truth.

Within a job, the I/O ranks' times are ``T * u`` with ``u`` uniform in
[``rank_balance``, 1) and exactly 1 for one rank (the slowest); each rank's
time is ``meta_share`` metadata (charged to its opens) and the rest reading
and writing, split by bytes. Ranks do their I/O from t = 1 s, file after file
(open, reads, writes, close), then compute for ``compute_s``. File patterns:

========= ================================================================
pattern   files and ranks
========= ================================================================
``N:N``   every rank has files of its own (file j on rank j mod nprocs)
``N:M``   ``io_ranks`` < nprocs ranks have files of their own
``N:1``   every file is shared by all ranks (Darshan's reduced record,
          rank -1, with the slowest rank's time; MPI-IO records on top)
``rank0`` rank 0 reads and writes every file (the others do no I/O)
========= ================================================================

So Darshan's slowest-rank estimate (section 2.4: the slowest rank's time in
unique files plus each shared file's slowest rank) equals ``T`` for every
pattern, and so does the slowest rank's summed call time in the trace.

:data:`TABLE_IV` holds the paper's seven groups at full size; use
:func:`make_table_iv` to scale them down.

>>> pop = make_population([JobGroup("A", app="sim", uid=100, nprocs=4, files=4,
...     read_bytes=2**24, write_bytes=2**20, mean_io_s=10.0, cv=0.2, samples=20)],
...     random_state=0)
>>> round(float(pop.truth.loc[0, "cv_pct"]), 6)
20.0
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from iochar.errors import MissingDependencyError, ParameterError

__all__ = [
    "JobGroup",
    "Population",
    "TABLE_IV",
    "PATTERNS",
    "make_population",
    "make_table_iv",
    "write_darshan_logs",
    "write_trace",
]

#: File-sharing patterns a group may have (see the module notes).
PATTERNS = ("N:N", "N:M", "N:1", "rank0")

MiB = 1 << 20
GiB = 1 << 30

#: When the first job of a population starts (UTC); jobs follow every ~30 min.
EPOCH = _dt.datetime(2010, 1, 23, tzinfo=_dt.UTC)


@dataclass(frozen=True)
class JobGroup:
    """One set of repeated jobs (a row of Carns et al. 2011, Table IV).

    Attributes
    ----------
    name : str
        Group label, e.g. ``"NuclearPhysics A"``.
    app : str
        Application (executable base name).
    uid : int
        User id.
    nprocs : int
        MPI processes.
    files : int
        Files the job accesses.
    read_bytes : int
        Bytes read per job (before jitter). [bytes]
    write_bytes : int
        Bytes written per job (before jitter). [bytes]
    mean_io_s : float
        Mean I/O time of the slowest rank. [s]
    cv : float
        Coefficient of variation of that time (0.921 for 92.1%).
    samples : int
        Jobs in the group.
    pattern : {"N:N", "N:M", "N:1", "rank0"}
        How files map to ranks (module notes).
    io_ranks : int, optional
        Ranks doing I/O for ``N:M`` (default nprocs // 8, at least 2).
    write_files : int, optional
        Files written (the rest are read); default in proportion to bytes,
        at least one for each direction that moves bytes.
    request_bytes : int
        Size of each read and write. [bytes]
    alignment_bytes : int
        File-system block size Darshan records as the file alignment
        (GPFS on Intrepid: 4 MiB). [bytes]
    meta_share : float
        Share of each rank's I/O time spent in metadata (opens), in [0, 1).
    floor : float
        Uncontended share of the mean I/O time, in [0, 1): the fastest a job
        can be; the rest is lognormal contention delay.
    compute_s : float
        Run time outside I/O. [s]
    procs_per_node : int
        Processes per compute node (Intrepid: 4).
    rank_balance : float
        Other ranks' I/O time as a share of the slowest rank's, drawn
        uniformly from [rank_balance, 1).
    """

    name: str
    app: str
    uid: int
    nprocs: int
    files: int
    read_bytes: int
    write_bytes: int
    mean_io_s: float
    cv: float
    samples: int
    pattern: str = "N:N"
    io_ranks: int | None = None
    write_files: int | None = None
    request_bytes: int = MiB
    alignment_bytes: int = 4 * MiB
    meta_share: float = 0.1
    floor: float = 0.5
    compute_s: float = 1000.0
    procs_per_node: int = 4
    rank_balance: float = 0.8


#: Carns et al. (2011) Table IV at full size: (samples, procs, files, GiB read,
#: GiB written, mean and CV of the slowest rank's I/O time). Patterns from
#: section 5: EarthScience N:N with many small written files, NuclearPhysics
#: A/B rank-0 I/O, C/D N:M (the first 1/8 of the ranks do all the I/O);
#: ``floor`` is the paper's min / mean.
TABLE_IV: dict[str, JobGroup] = {
    "EarthScience A": JobGroup(
        "EarthScience A", "earth", 2001, 2048, 57349, int(624.4 * GiB), int(2.8 * GiB),
        939.9, 0.199, 571, "N:N", write_files=40233, request_bytes=512 * 1024,
        meta_share=0.6, floor=0.198, compute_s=1700.0,
    ),
    "EarthScience B": JobGroup(
        "EarthScience B", "earth", 2001, 4096, 57349, int(927.8 * GiB), int(2.8 * GiB),
        1157.4, 0.096, 171, "N:N", write_files=40233, request_bytes=512 * 1024,
        meta_share=0.6, floor=0.663, compute_s=2000.0,
    ),
    "NuclearPhysics A": JobGroup(
        "NuclearPhysics A", "nuclear0", 2002, 2048, 4, int(4.3 * GiB), 0,
        23.1, 0.921, 404, "rank0", request_bytes=MiB + 4096, meta_share=0.05,
        floor=0.82, compute_s=4000.0,
    ),
    "NuclearPhysics B": JobGroup(
        "NuclearPhysics B", "nuclear0", 2002, 4096, 4, int(4.3 * GiB), 0,
        24.3, 2.622, 407, "rank0", request_bytes=MiB + 4096, meta_share=0.05,
        floor=0.78, compute_s=4000.0,
    ),
    "NuclearPhysics C": JobGroup(
        "NuclearPhysics C", "nuclearm", 2003, 4096, 10809, int(791.1 * GiB),
        int(326.8 * GiB), 450.4, 0.298, 837, "N:M", io_ranks=512, meta_share=0.3,
        floor=0.88, compute_s=3000.0,
    ),
    "NuclearPhysics D": JobGroup(
        "NuclearPhysics D", "nuclearm", 2003, 4096, 9815, int(626.8 * GiB),
        int(122.5 * GiB), 246.7, 0.120, 809, "N:M", io_ranks=512, meta_share=0.3,
        floor=0.91, compute_s=3000.0,
    ),
    "Climate A": JobGroup(
        "Climate A", "climate", 2004, 3888, 24455, int(353.8 * GiB), int(100.5 * GiB),
        720.1, 0.079, 8, "N:N", request_bytes=64 * 1024, meta_share=0.82, floor=0.92,
        compute_s=18000.0, procs_per_node=2,
    ),
}  # fmt: skip


@dataclass(frozen=True)
class Population:
    """A drawn population of repeated jobs and its truth.

    Attributes
    ----------
    groups : tuple of JobGroup
        The groups drawn.
    jobs : pandas.DataFrame
        One row per job (the truth): ``job_key`` (unique id string, also the
        Darshan job id), ``group`` (group name), ``group_id`` (its index),
        ``app``, ``uid``, ``nprocs``, ``nnodes``, ``pattern``, ``files``,
        ``read_bytes``, ``write_bytes`` [bytes], ``io_time_s`` (slowest
        rank's I/O time) [s], ``slowest_rank``, ``runtime_s`` [s] and
        ``start_ts`` (UTC).
    rows : pandas.DataFrame
        One row per (job, file, rank) that opened the file: ``job_key``,
        ``path``, ``rank``, ``shared`` (the file is shared by all ranks; a
        Darshan log reduces these rows to one record), ``read_bytes``,
        ``write_bytes`` [bytes], ``reads``, ``writes`` (calls of
        ``request_bytes`` each, the last one shorter), ``read_offset``,
        ``write_offset`` (where the rank's sequential accesses start)
        [bytes], ``read_time``, ``write_time``, ``meta_time`` [s],
        ``t_open``, ``t_read0``, ``t_read1``, ``t_write0``, ``t_write1``
        (seconds since job start; NaN without such access),
        ``request_bytes`` and ``alignment_bytes`` [bytes].
    truth : pandas.DataFrame
        One row per group in Table IV's form: ``group``, ``samples``,
        ``procs``, ``files``, ``gib_read``, ``gib_written`` (means),
        ``mean_s``, ``min_s``, ``max_s``, ``std_s`` (``ddof=1``) [s],
        ``cv_pct`` [%], and the targets ``target_mean_s``, ``target_cv_pct``.
    moments : str
        ``"exact"`` or ``"population"``.
    params : dict
        The drawing parameters (``moments``, ``byte_jitter``).
    """

    groups: tuple[JobGroup, ...]
    jobs: pd.DataFrame
    rows: pd.DataFrame
    truth: pd.DataFrame
    moments: str = "exact"
    params: dict = field(default_factory=dict)

    def match(self, store) -> pd.DataFrame:
        """The truth of each job of this population found in ``store``.

        Darshan logs keep the job key as the Darshan job id; a trace written
        by :func:`write_trace` numbers its jobs in ``jobs`` order.

        Parameters
        ----------
        store : iochar.Store
            A store the population's logs or trace were loaded into.

        Returns
        -------
        pandas.DataFrame
            ``job_id`` (the store's), ``kind`` (the input kind) and the
            columns of :attr:`jobs`, one row per job found.
        """
        loaded = store.sql(
            "SELECT j.job_id, j.job_key, s.kind FROM jobs j JOIN sources s USING (source_id)"
        ).df()
        by_key = pd.Index(self.jobs["job_key"])
        pos = np.where(
            loaded["kind"].to_numpy() == "darshan",
            by_key.get_indexer(loaded["job_key"]),
            pd.to_numeric(loaded["job_key"], errors="coerce").fillna(-1).astype(np.int64),
        )
        ok = (pos >= 0) & (pos < len(self.jobs))
        out = self.jobs.iloc[pos[ok]].reset_index(drop=True)
        out.insert(0, "kind", loaded["kind"].to_numpy()[ok])
        out.insert(0, "job_id", loaded["job_id"].to_numpy()[ok].astype(np.int64))
        return out


def _check_group(g: JobGroup, caller: str) -> None:
    checks = [
        ("nprocs", isinstance(g.nprocs, int) and g.nprocs >= 1, "an int >= 1"),
        ("files", isinstance(g.files, int) and g.files >= 1, "an int >= 1"),
        ("read_bytes", g.read_bytes >= 0, "an int >= 0 [bytes]"),
        ("write_bytes", g.write_bytes >= 0, "an int >= 0 [bytes]"),
        ("read_bytes", g.read_bytes + g.write_bytes > 0, "> 0 with write_bytes [bytes]"),
        ("mean_io_s", g.mean_io_s > 0, "a positive number of seconds"),
        ("cv", 0 <= g.cv < 50, "a float in [0, 50)"),
        ("samples", isinstance(g.samples, int) and g.samples >= 2, "an int >= 2"),
        ("pattern", g.pattern in PATTERNS, "one of " + ", ".join(PATTERNS)),
        ("request_bytes", g.request_bytes >= 1, "an int >= 1 [bytes]"),
        ("alignment_bytes", g.alignment_bytes >= 1, "an int >= 1 [bytes]"),
        ("meta_share", 0 <= g.meta_share < 1, "a float in [0, 1)"),
        ("floor", 0 <= g.floor < 1, "a float in [0, 1)"),
        ("compute_s", g.compute_s >= 0, "a number of seconds >= 0"),
        ("procs_per_node", g.procs_per_node >= 1, "an int >= 1"),
        ("rank_balance", 0 < g.rank_balance <= 1, "a float in (0, 1]"),
    ]
    for name, ok, what in checks:
        if not ok:
            raise ParameterError(f"{name}", caller, f"{what} (group {g.name!r})", getattr(g, name))
    m = _io_ranks(g)
    if g.pattern in ("N:N", "N:M") and g.files < m:
        raise ParameterError(
            "files", caller, f">= the {m} I/O ranks of a {g.pattern} group ({g.name!r})", g.files
        )
    if g.pattern == "N:M" and not 1 < m < g.nprocs:
        raise ParameterError("io_ranks", caller, "in (1, nprocs) for N:M", g.io_ranks)


def _io_ranks(g: JobGroup) -> int:
    if g.pattern == "N:N":
        return g.nprocs
    if g.pattern == "N:M":
        return g.io_ranks if g.io_ranks is not None else max(2, g.nprocs // 8)
    if g.pattern == "rank0":
        return 1
    return g.nprocs  # N:1: every rank, through the shared files


def _sample_cv(x: np.ndarray) -> float:
    m = x.mean()
    return float(x.std(ddof=1) / m) if m > 0 else 0.0


def _io_times(g: JobGroup, rng: np.random.Generator, moments: str) -> np.ndarray:
    """Slowest-rank I/O time of each job: floor plus lognormal contention [s]."""
    n, m, c = g.samples, g.mean_io_s, g.cv
    if c == 0:
        return np.full(n, m)
    z = rng.standard_normal(n)
    if moments == "population":
        floor = g.floor
        cvx = c / (1 - floor)
        sigma = math.sqrt(math.log1p(cvx * cvx))
        x = np.exp(sigma * z - sigma * sigma / 2)  # mean 1
        return m * floor + m * (1 - floor) * x
    # exact: pick the lognormal shape for this sample so that mean and CV hit
    # the targets; CV(exp(s z)) grows with s up to about sqrt(n)
    if c >= 0.95 * math.sqrt(n):
        raise ParameterError(
            "cv", "make_population", f"< 0.95 * sqrt(samples) for exact moments ({g.name!r})", c
        )
    floor = min(g.floor, 1 - c / (0.95 * math.sqrt(n)))
    want = c / (1 - floor)
    z = z - z.mean()
    lo, hi = 0.0, 1.0
    while _sample_cv(np.exp(hi * (z - z.max()))) < want and hi < 1e4:
        hi *= 2
    for _ in range(200):  # bisection on the shape (scalar work)
        mid = 0.5 * (lo + hi)
        if _sample_cv(np.exp(mid * (z - z.max()))) < want:
            lo = mid
        else:
            hi = mid
    x = np.exp(hi * (z - z.max()))
    x = x / x.mean()
    t = m * floor + m * (1 - floor) * x
    # remove the bisection's last rounding: exact affine fix of mean and sd
    t = m + (t - t.mean()) * (c * m / t.std(ddof=1))
    return t


def _split(total: np.ndarray, parts: int, unit: int = 1) -> np.ndarray:
    """Split totals into ``parts`` multiples of ``unit``, the remainder to the first ones."""
    t = total // unit
    base = t[:, None] // parts
    rem = t[:, None] - base * parts
    return (base + (np.arange(parts)[None, :] < rem)) * unit


def _file_bytes(g: JobGroup, n: int, rng: np.random.Generator, jitter: float):
    """Bytes read and written per (job, file), and which files are written."""
    f = g.files
    unit = g.nprocs if g.pattern == "N:1" else 1  # shared files split evenly over ranks
    rb = np.round(g.read_bytes * (1 + rng.uniform(-jitter, jitter, n))).astype(np.int64)
    wb = np.round(g.write_bytes * (1 + rng.uniform(-jitter, jitter, n))).astype(np.int64)
    if g.write_bytes == 0:
        nw = 0
    elif g.read_bytes == 0 or f == 1:
        nw = f
    elif g.write_files is not None:
        nw = min(max(g.write_files, 1), f - 1)
    else:
        nw = min(max(round(f * g.write_bytes / (g.read_bytes + g.write_bytes)), 1), f - 1)
    is_w = np.zeros(f, bool)
    is_w[f - nw :] = True
    is_r = ~is_w if f > 1 else np.array([g.read_bytes > 0])
    fr = np.zeros((n, f), np.int64)
    fw = np.zeros((n, f), np.int64)
    if is_r.any():
        fr[:, is_r] = _split(rb, int(is_r.sum()), unit)
    if is_w.any():
        fw[:, is_w] = _split(wb, int(is_w.sum()), unit)
    return fr, fw, is_r, is_w


def _group_rows(g: JobGroup, gi: int, keys, t_io, rng, jitter: float):
    """Per-job truth and per (job, file, rank) rows of one group, vectorized over its jobs."""
    n, p, f, q = g.samples, g.nprocs, g.files, g.request_bytes
    fr, fw, is_r, is_w = _file_bytes(g, n, rng, jitter)
    m = _io_ranks(g)
    shared = g.pattern == "N:1"
    # per-rank share of the slowest rank's time; exactly one slowest I/O rank per job
    u = rng.uniform(g.rank_balance, 1.0, (n, m)) if g.rank_balance < 1 else np.ones((n, m))
    slow = rng.integers(0, m, n)
    u[np.arange(n), slow] = 1.0
    t_rank = t_io[:, None] * u  # (n, m)
    if shared:
        # every rank moves 1/p of every file: pairs (file j, rank r) for all r
        pf, pr = np.repeat(np.arange(f), p), np.tile(np.arange(p), f)
        rbp, wbp = fr[:, pf] // p, fw[:, pf] // p  # (n, f*p)
        rd_off, wr_off = pr[None, :] * rbp, pr[None, :] * wbp
    else:
        pf = np.arange(f)
        pr = np.zeros(f, np.int64) if g.pattern == "rank0" else pf % m
        rbp, wbp = fr, fw
        rd_off = wr_off = np.zeros((n, f), np.int64)
    k = len(pf)
    # a rank's time: meta_share to its opens (equal per file), the rest to
    # reading and writing, in proportion to bytes
    nfiles = np.bincount(pr, minlength=m)[pr]
    rank_bytes = np.zeros((n, m))
    np.add.at(rank_bytes.T, pr, (rbp + wbp).T)
    own = rank_bytes[:, pr]
    tr = t_rank[:, pr]
    meta = g.meta_share * tr / nfiles
    rw = (1 - g.meta_share) * tr * (rbp + wbp) / np.where(own > 0, own, 1)
    rfrac = rbp / np.maximum(rbp + wbp, 1)
    r_t, w_t = rw * rfrac, rw * (1 - rfrac)
    dur = meta + r_t + w_t
    # each rank works through its files one after the other from t = 1 s
    order = np.lexsort((pf, pr))
    cs = np.cumsum(dur[:, order], axis=1)
    ro = pr[order]
    first = np.r_[True, ro[1:] != ro[:-1]]
    grp = np.cumsum(first) - 1
    before = cs - dur[:, order]
    start = np.empty_like(dur)
    start[:, order] = 1.0 + before - before[:, first][:, grp]
    rd0 = start + meta
    rows = {
        "rank": np.broadcast_to(pr, (n, k)),
        "shared": np.full((n, k), shared),
        "read_bytes": rbp,
        "write_bytes": wbp,
        "reads": -(-rbp // q),
        "writes": -(-wbp // q),
        "read_offset": rd_off,
        "write_offset": wr_off,
        "read_time": r_t,
        "write_time": w_t,
        "meta_time": meta,
        "t_open": start,
        "t_read0": np.where(rbp > 0, rd0, np.nan),
        "t_read1": np.where(rbp > 0, rd0 + r_t, np.nan),
        "t_write0": np.where(wbp > 0, rd0 + r_t, np.nan),
        "t_write1": np.where(wbp > 0, rd0 + r_t + w_t, np.nan),
    }
    cols = {c: np.asarray(v).reshape(n * k) for c, v in rows.items()}
    kind = np.where(is_w & ~is_r, "out", "in")[pf]
    names = np.array([f"{kd}.{j:06d}" for kd, j in zip(kind, pf, strict=True)], dtype=object)
    job_key = np.repeat(keys, k)
    cols["job_key"] = job_key
    cols["path"] = f"/scratch/{g.app}/run" + job_key + "/" + np.tile(names, n)
    cols["request_bytes"] = np.full(n * k, q, np.int64)
    cols["alignment_bytes"] = np.full(n * k, g.alignment_bytes, np.int64)
    jobs = pd.DataFrame(
        {
            "job_key": keys,
            "group": g.name,
            "group_id": gi,
            "app": g.app,
            "uid": g.uid,
            "nprocs": p,
            "nnodes": -(-p // g.procs_per_node),
            "pattern": g.pattern,
            "files": f,
            "read_bytes": fr.sum(axis=1),
            "write_bytes": fw.sum(axis=1),
            "io_time_s": t_io,
            "slowest_rank": np.zeros(n, np.int64) if g.pattern == "rank0" else slow,
            "runtime_s": 1.0 + t_io + g.compute_s,
        }
    )
    return jobs, pd.DataFrame(cols)


def make_population(
    groups,
    *,
    random_state: int | np.random.Generator | None = None,
    moments: str = "exact",
    byte_jitter: float = 0.004,
) -> Population:
    """Draw repeated jobs for each group, with their truth.

    Parameters
    ----------
    groups : sequence of JobGroup
        The groups (names must be unique).
    random_state : int, numpy.random.Generator or None
        Seed.
    moments : {"exact", "population"}, default "exact"
        ``"exact"``: each group's realized mean and CV (``ddof=1``) equal
        its targets (a sample of n jobs can only reach a CV below about
        sqrt(n): groups need ``cv < 0.95 * sqrt(samples)``); ``"population"``:
        draws from the lognormal model whose population mean and CV are the
        targets (see the module notes).
    byte_jitter : float, default 0.004
        Bytes read and written vary by at most this share between the jobs
        of a group (uniformly), in [0, 0.005): a group spreads by less
        than 1%, the paper's grouping tolerance.

    Returns
    -------
    Population
        Jobs, per-rank I/O rows and the per-group truth; jobs are in start
        order, the groups interleaved.

    Raises
    ------
    ParameterError
        A group is inconsistent (see :class:`JobGroup`), names repeat, or
        ``moments`` / ``byte_jitter`` are out of range.
    """
    caller = "make_population"
    groups = tuple(groups)
    if not groups or not all(isinstance(g, JobGroup) for g in groups):
        raise ParameterError("groups", caller, "a non-empty sequence of JobGroup", groups)
    if len({g.name for g in groups}) != len(groups):
        raise ParameterError("groups", caller, "groups with unique names", [g.name for g in groups])
    if moments not in ("exact", "population"):
        raise ParameterError("moments", caller, "'exact' or 'population'", moments)
    if not (isinstance(byte_jitter, (int, float)) and 0 <= byte_jitter < 0.005):
        raise ParameterError("byte_jitter", caller, "a float in [0, 0.005)", byte_jitter)
    for g in groups:
        _check_group(g, caller)
    rng = np.random.default_rng(random_state)
    total = sum(g.samples for g in groups)
    slot = rng.permutation(total)  # start order: the groups interleaved at random
    jobs_parts, row_parts, at = [], [], 0
    for gi, g in enumerate(groups):  # one vectorized draw per group
        idx = slot[at : at + g.samples]
        at += g.samples
        keys = np.array([str(7_000_000 + int(i)) for i in idx], dtype=object)
        j, r = _group_rows(g, gi, keys, _io_times(g, rng, moments), rng, float(byte_jitter))
        j["slot"] = idx
        jobs_parts.append(j)
        row_parts.append(r)
    jobs = pd.concat(jobs_parts, ignore_index=True).sort_values("slot", kind="stable")
    # a job every 30 min, give or take 10 (naive UTC timestamps, as the store keeps them)
    secs = 1800.0 * jobs["slot"].to_numpy() + rng.uniform(0, 600, len(jobs))
    jobs["start_ts"] = pd.Timestamp(EPOCH.replace(tzinfo=None)) + pd.to_timedelta(secs, unit="s")
    jobs = jobs.drop(columns="slot").reset_index(drop=True)
    rows = pd.concat(row_parts, ignore_index=True)
    pos = pd.Index(jobs["job_key"]).get_indexer(rows["job_key"])
    rows = rows.iloc[np.argsort(pos, kind="stable")].reset_index(drop=True)
    t = jobs.groupby("group_id", sort=True)["io_time_s"]
    by = jobs.groupby("group_id", sort=True)
    mean = t.mean().to_numpy()
    std = t.std(ddof=1).to_numpy()
    truth = pd.DataFrame(
        {
            "group": [g.name for g in groups],
            "samples": t.count().to_numpy(),
            "procs": [g.nprocs for g in groups],
            "files": [g.files for g in groups],
            "gib_read": by["read_bytes"].mean().to_numpy() / GiB,
            "gib_written": by["write_bytes"].mean().to_numpy() / GiB,
            "mean_s": mean,
            "min_s": t.min().to_numpy(),
            "max_s": t.max().to_numpy(),
            "std_s": std,
            "cv_pct": 100 * std / mean,
            "target_mean_s": [g.mean_io_s for g in groups],
            "target_cv_pct": [100 * g.cv for g in groups],
        }
    )
    params = {"moments": moments, "byte_jitter": float(byte_jitter)}
    return Population(groups, jobs, rows, truth, moments, params)


def make_table_iv(
    *,
    scale: float = 1 / 256,
    samples: int | None = None,
    names=None,
    random_state: int | np.random.Generator | None = None,
    moments: str = "exact",
) -> Population:
    """Carns et al. (2011) Table IV's seven job sets, scaled down.

    Parameters
    ----------
    scale : float, default 1/256
        Shrinks process counts, file counts and bytes (at least 2 processes;
        N:N groups keep a file per process and rank-0 groups their 4 files);
        I/O times, CVs and patterns are kept. In (0, 1].
    samples : int, optional
        Cap on jobs per group (else the paper's counts: 3,207 jobs in all).
    names : sequence of str, optional
        Only these groups (keys of :data:`TABLE_IV`).
    random_state : int, numpy.random.Generator or None
        Seed.
    moments : {"exact", "population"}, default "exact"
        As :func:`make_population`.

    Returns
    -------
    Population
        As :func:`make_population`.

    Raises
    ------
    ParameterError
        ``scale``, ``samples`` or ``names`` out of range.
    """
    caller = "make_table_iv"
    if not (isinstance(scale, (int, float)) and 0 < scale <= 1):
        raise ParameterError("scale", caller, "a float in (0, 1]", scale)
    if samples is not None and not (isinstance(samples, int) and samples >= 2):
        raise ParameterError("samples", caller, "None or an int >= 2", samples)
    names = list(TABLE_IV) if names is None else list(names)
    bad = [n for n in names if n not in TABLE_IV]
    if bad:
        raise ParameterError("names", caller, "names from TABLE_IV", bad)
    out = []
    for name in names:
        g = TABLE_IV[name]
        p = max(2, round(g.nprocs * scale))
        m = None if g.io_ranks is None else max(2, min(p - 1, round(g.io_ranks * scale)))
        need = {"N:N": p, "N:M": m or 2, "N:1": 1, "rank0": 1}[g.pattern]
        f = g.files if g.pattern == "rank0" else max(need, round(g.files * scale))
        wf = None if g.write_files is None else max(1, min(f - 1, round(g.write_files * scale)))
        out.append(
            replace(
                g,
                nprocs=p,
                io_ranks=m,
                files=f,
                write_files=wf,
                read_bytes=int(g.read_bytes * scale),
                write_bytes=int(g.write_bytes * scale),
                samples=g.samples if samples is None else min(samples, g.samples),
            )
        )
    return make_population(out, random_state=random_state, moments=moments)


# ----------------------------------------------------------------------- writers


def write_trace(pop: Population, path: str | os.PathLike[str]) -> Path:
    """Write every job of ``pop`` into one trace file (``trace-parquet`` or ``trace-csv``).

    Each (job, file, rank) row of ``pop.rows`` becomes an ``open`` lasting
    its metadata time, ``ceil(bytes / request_bytes)`` sequential ``read``
    then ``write`` calls sharing its read and write time, and a ``close`` of
    no duration. ``job_id`` numbers the jobs in ``pop.jobs`` order and
    ``job`` is the application. The trace layout has no user, and knows only
    the ranks that did I/O and the span of the I/O (see the module notes).

    Parameters
    ----------
    pop : Population
        From :func:`make_population`.
    path : str or os.PathLike
        ``.parquet`` or ``.csv`` file to write.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    import pyarrow as pa

    jobs = pop.jobs
    r = pop.rows
    jid = pd.Index(jobs["job_key"]).get_indexer(r["job_key"]).astype(np.int64)
    q = r["request_bytes"].to_numpy()
    rb, wb = r["read_bytes"].to_numpy(), r["write_bytes"].to_numpy()
    nr, nw = r["reads"].to_numpy(), r["writes"].to_numpy()
    per = 2 + nr + nw  # open, reads, writes, close
    i = np.repeat(np.arange(len(r)), per)
    pos = np.arange(len(i)) - np.repeat(np.cumsum(per) - per, per)
    nr_, nw_, q_ = nr[i], nw[i], q[i]
    is_open, is_close = pos == 0, pos == per[i] - 1
    is_read = ~is_open & (pos <= nr_)
    is_write = ~is_open & ~is_close & ~is_read
    k_r, k_w = pos - 1, pos - 1 - nr_
    size = np.where(is_read, np.minimum(q_, rb[i] - k_r * q_), np.minimum(q_, wb[i] - k_w * q_))
    offset = np.where(
        is_read,
        r["read_offset"].to_numpy()[i] + k_r * q_,
        r["write_offset"].to_numpy()[i] + k_w * q_,
    )
    meta = r["meta_time"].to_numpy()[i]
    rt, wt = r["read_time"].to_numpy()[i], r["write_time"].to_numpy()[i]
    d_r, d_w = rt / np.maximum(nr_, 1), wt / np.maximum(nw_, 1)
    t0 = r["t_open"].to_numpy()[i]
    t_start = np.select(
        [is_open, is_read, is_write],
        [t0, t0 + meta + k_r * d_r, t0 + meta + rt + k_w * d_w],
        t0 + meta + rt + wt,
    )
    t_end = t_start + np.select([is_open, is_read, is_write], [meta, d_r, d_w], 0.0)
    op = np.select([is_open, is_read, is_write], ["open", "read", "write"], "close")
    moves = is_read | is_write
    rank = r["rank"].to_numpy()[i].astype(np.int32)
    jrow = jid[i]
    # the trace loader wants t_start never to go backwards within (job, rank)
    idx = np.lexsort((pos, t_start, rank, jrow))
    tbl = pa.table(
        {
            "job_id": pa.array(jrow[idx]),
            "job": pa.array(jobs["app"].to_numpy().astype(str)[jrow[idx]]),
            "rank": pa.array(rank[idx]),
            "path": pa.array(r["path"].to_numpy().astype(str)[i[idx]]),
            "op": pa.array(op[idx]),
            "offset": pa.array(offset[idx].astype(np.int64), mask=~moves[idx]),
            "size": pa.array(size[idx].astype(np.int64), mask=~moves[idx]),
            "t_start": pa.array(t_start[idx]),
            "t_end": pa.array(t_end[idx]),
        }
    )
    out = Path(path)
    if out.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        pq.write_table(tbl, out)
    else:
        import pyarrow.csv as pacsv

        pacsv.write_csv(tbl, out)
    return out


_CDEF = """
    struct darshan_job { int64_t uid; int64_t start_time_sec; int64_t start_time_nsec;
        int64_t end_time_sec; int64_t end_time_nsec; int64_t nprocs; int64_t jobid;
        char metadata[1024]; };
    struct darshan_mnt_info { char mnt_type[3015]; char mnt_path[3015]; };
    typedef struct UT_hash_handle { void *tbl; void *prev; void *next; void *hh_prev;
        void *hh_next; void *key; unsigned keylen; unsigned hashv; } UT_hash_handle;
    struct darshan_name_record_ref { void *name_record; UT_hash_handle hlink; };
    void* darshan_log_create(const char *, int, int);
    int darshan_log_put_job(void*, struct darshan_job*);
    int darshan_log_put_exe(void*, char*);
    int darshan_log_put_mounts(void*, struct darshan_mnt_info*, int);
    int darshan_log_put_namehash(void*, struct darshan_name_record_ref*);
    int darshan_log_put_mod(void*, int, void*, int, int);
    void darshan_log_close(void*);
"""

#: Module format versions written (darshan 3.4/3.5) with their counter and
#: float-counter counts, checked against the installed library.
_MOD_VERSIONS = {"POSIX": (4, 69, 17), "MPI-IO": (3, 51, 17)}

#: Darshan's access-size bins: upper bounds (inclusive) of all but the last.
_SIZE_EDGES = np.array([100, 1024, 10240, 102400, 1 << 20, 4 << 20, 10 << 20, 100 << 20, 1 << 30])

_LIB: tuple | None = None


def _library():
    """cffi view of libdarshan-util's log writer (pydarshan exposes only the reader)."""
    global _LIB
    if _LIB is not None:
        return _LIB
    try:
        import cffi
        import darshan
        from darshan.backend import cffi_backend  # noqa: F401 - loads the library
    except ImportError as exc:
        raise MissingDependencyError("darshan", "darshan", "writing Darshan logs") from exc
    import glob

    ffi = cffi.FFI()
    ffi.cdef(_CDEF)
    here = os.path.dirname(darshan.__file__)
    paths = glob.glob(os.path.join(here, "..", "darshan.libs", "libdarshan-util*.so*"))
    if os.path.exists("/proc/self/maps"):
        with open("/proc/self/maps") as fh:
            paths += [ln.split()[-1] for ln in fh if "libdarshan-util" in ln]
    if not paths:
        raise MissingDependencyError("libdarshan-util", "darshan", "writing Darshan logs")
    _LIB = (ffi, ffi.dlopen(paths[0]))
    return _LIB


def _record_id(path: str) -> int:
    """A stable 64-bit record id for ``path`` (Darshan hashes names likewise)."""
    return int.from_bytes(hashlib.blake2b(path.encode(), digest_size=8).digest(), "little")


def _layout(module: str):
    from darshan.backend.cffi_backend import counter_names, fcounter_names

    cn, fn = counter_names(module), fcounter_names(module)
    ver, nc, nf = _MOD_VERSIONS[module]
    if (len(cn), len(fn)) != (nc, nf):
        raise MissingDependencyError(
            f"darshan with the {module} v{ver} record layout", "darshan", "writing Darshan logs"
        )
    dtype = np.dtype([("id", "<u8"), ("rank", "<i8"), ("c", "<i8", nc), ("f", "<f8", nf)])
    return ver, dtype, {x: i for i, x in enumerate(cn)}, {x: i for i, x in enumerate(fn)}


def _not_aligned(n: np.ndarray, q: np.ndarray, a: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Accesses at offsets ``base + k*q`` (k < n) that are not multiples of ``a``.

    The aligned ones are k = k0, k0 + P, ... with P = a / gcd(q, a) and k0
    solving ``k*q = -base (mod a)`` (none unless gcd(q, a) divides base).
    """
    n, q, a, base = (np.asarray(x, np.int64) for x in (n, q, a, base))
    g = np.gcd(q, a)
    period = a // g
    k0 = np.zeros(len(n), np.int64)
    solvable = base % g == 0
    odd = np.flatnonzero(solvable & (base % a != 0))
    for i in odd:  # rank parts of shared files only: one modular inverse each
        inv = pow(int(q[i] // g[i]) % int(period[i]), -1, int(period[i]))
        k0[i] = (-(int(base[i]) // int(g[i])) * inv) % int(period[i])
    hits = np.where(solvable & (k0 < n), (n - 1 - k0) // period + 1, 0)
    return n - np.where(n > 0, hits, 0)


#: Per-row Darshan counters, summed when a shared file's ranks are reduced.
_SUMS = ("read_bytes", "write_bytes", "reads", "writes", "seq_reads", "seq_writes",
         "consec_reads", "consec_writes", "not_aligned", "read_time", "write_time",
         "meta_time", "opens", "switches")  # fmt: skip


def _darshan_records(pop: Population, slowest_rank_time: bool) -> pd.DataFrame:
    """POSIX records of every job: rows of unique files as they are, shared
    files reduced over their ranks as Darshan does at shutdown."""
    r = pop.rows
    q, a = r["request_bytes"].to_numpy(), r["alignment_bytes"].to_numpy()
    d = r[["job_key", "path", "rank", "shared", "request_bytes", "alignment_bytes"]].copy()
    for op in ("read", "write"):
        nb, cnt = r[f"{op}_bytes"].to_numpy(), r[f"{op}s"].to_numpy()
        off = r[f"{op}_offset"].to_numpy()
        d[f"{op}_bytes"], d[f"{op}s"] = nb, cnt
        # Darshan: sequential when the offset is past the last byte (0 at first)
        d[f"seq_{op}s"] = cnt - ((off == 0) & (cnt > 0))
        d[f"consec_{op}s"] = np.maximum(cnt - 1, 0)
        d[f"max_byte_{op}"] = np.where(nb > 0, off + nb - 1, -1)
        full, tail = nb // q, nb % q
        for b in range(len(_SIZE_EDGES) + 1):
            d[f"{op}_bin{b}"] = 0
        bf = np.searchsorted(_SIZE_EDGES, q, side="left")
        bt = np.searchsorted(_SIZE_EDGES, np.maximum(tail, 1), side="left")
        hist = np.zeros((len(r), len(_SIZE_EDGES) + 1), np.int64)
        np.add.at(hist, (np.arange(len(r)), bf), full)
        np.add.at(hist, (np.arange(len(r)), bt), tail > 0)
        for b in range(hist.shape[1]):
            d[f"{op}_bin{b}"] = hist[:, b]
        d[f"t_{op}0"], d[f"t_{op}1"] = r[f"t_{op}0"], r[f"t_{op}1"]
    d["not_aligned"] = _not_aligned(r["reads"], q, a, r["read_offset"]) + _not_aligned(
        r["writes"], q, a, r["write_offset"]
    )
    for c in ("read_time", "write_time", "meta_time", "t_open"):
        d[c] = r[c]
    d["opens"] = 1
    d["switches"] = ((r["reads"] > 0) & (r["writes"] > 0)).astype(np.int64)
    d["io_time"] = d["read_time"] + d["write_time"] + d["meta_time"]
    d["moved"] = d["read_bytes"] + d["write_bytes"]
    d["slowest_time"] = 0.0
    d["fastest_time"] = 0.0
    d["slowest_rank"] = d["fastest_rank"] = 0
    d["slowest_bytes"] = d["fastest_bytes"] = 0
    d["var_time"] = d["var_bytes"] = 0.0
    sh = d[d["shared"]]
    if len(sh):
        g = sh.groupby(["job_key", "path"], sort=False)
        red = g[list(_SUMS) + [c for c in d if "_bin" in c]].sum()
        red["t_open"] = g["t_open"].min()
        red["t_read0"], red["t_write0"] = g["t_read0"].min(), g["t_write0"].min()
        red["t_read1"], red["t_write1"] = g["t_read1"].max(), g["t_write1"].max()
        for c in ("max_byte_read", "max_byte_write"):
            red[c] = g[c].max()
        for c in ("request_bytes", "alignment_bytes"):
            red[c] = g[c].first()
        slow = sh.loc[g["io_time"].idxmax()].set_index(["job_key", "path"])
        fast = sh.loc[g["io_time"].idxmin()].set_index(["job_key", "path"])
        red["slowest_time"] = slow["io_time"] if slowest_rank_time else -1.0
        red["slowest_rank"], red["slowest_bytes"] = slow["rank"], slow["moved"]
        red["fastest_time"] = fast["io_time"]
        red["fastest_rank"], red["fastest_bytes"] = fast["rank"], fast["moved"]
        red["var_time"] = g["io_time"].var(ddof=0)
        red["var_bytes"] = g["moved"].var(ddof=0)
        red["rank"] = -1
        red["shared"] = True
        red = red.reset_index()
        d = pd.concat([d[~d["shared"]], red[[c for c in d.columns if c in red]]])
        pos = pd.Index(pop.jobs["job_key"]).get_indexer(d["job_key"])
        d = d.iloc[np.argsort(pos, kind="stable")].reset_index(drop=True)
    return d


def _posix_buffer(d: pd.DataFrame) -> tuple[str, bytes, int]:
    ver, dtype, c, f = _layout("POSIX")
    out = np.zeros(len(d), dtype)
    out["id"] = [_record_id(p) for p in d["path"]]
    out["rank"] = d["rank"].to_numpy()
    cc, ff = out["c"], out["f"]
    for op, done in (("read", "READ"), ("write", "WRITTEN")):
        up = op.upper()
        cc[:, c[f"POSIX_{up}S"]] = d[f"{op}s"]
        cc[:, c[f"POSIX_BYTES_{done}"]] = d[f"{op}_bytes"]
        cc[:, c[f"POSIX_MAX_BYTE_{done}"]] = np.maximum(d[f"max_byte_{op}"], 0)
        cc[:, c[f"POSIX_SEQ_{up}S"]] = d[f"seq_{op}s"]
        cc[:, c[f"POSIX_CONSEC_{up}S"]] = d[f"consec_{op}s"]
        lo = c[f"POSIX_SIZE_{up}_0_100"]
        for b in range(len(_SIZE_EDGES) + 1):
            cc[:, lo + b] = d[f"{op}_bin{b}"]
        ff[:, f[f"POSIX_F_{up}_START_TIMESTAMP"]] = np.nan_to_num(d[f"t_{op}0"].to_numpy())
        ff[:, f[f"POSIX_F_{up}_END_TIMESTAMP"]] = np.nan_to_num(d[f"t_{op}1"].to_numpy())
        ff[:, f[f"POSIX_F_{up}_TIME"]] = d[f"{op}_time"]
        per = d[f"{op}_time"].to_numpy() / np.maximum(d[f"{op}s"].to_numpy(), 1)
        ff[:, f[f"POSIX_F_MAX_{up}_TIME"]] = per
        cc[:, c[f"POSIX_MAX_{up}_TIME_SIZE"]] = np.where(d[f"{op}s"] > 0, d["request_bytes"], 0)
    cc[:, c["POSIX_OPENS"]] = d["opens"]
    cc[:, c["POSIX_RW_SWITCHES"]] = d["switches"]
    cc[:, c["POSIX_MODE"]] = 0o644
    cc[:, c["POSIX_MEM_ALIGNMENT"]] = 8
    cc[:, c["POSIX_FILE_ALIGNMENT"]] = d["alignment_bytes"]
    cc[:, c["POSIX_FILE_NOT_ALIGNED"]] = d["not_aligned"]
    cc[:, c["POSIX_ACCESS1_ACCESS"]] = d["request_bytes"]
    cc[:, c["POSIX_ACCESS1_COUNT"]] = d["reads"] + d["writes"]
    t_open = d["t_open"].to_numpy()
    last = np.fmax(d["t_read1"].to_numpy(), d["t_write1"].to_numpy())
    last = np.where(np.isnan(last), t_open, last)
    ff[:, f["POSIX_F_OPEN_START_TIMESTAMP"]] = t_open
    ff[:, f["POSIX_F_OPEN_END_TIMESTAMP"]] = t_open
    ff[:, f["POSIX_F_CLOSE_START_TIMESTAMP"]] = last
    ff[:, f["POSIX_F_CLOSE_END_TIMESTAMP"]] = last
    ff[:, f["POSIX_F_META_TIME"]] = d["meta_time"]
    for who in ("FASTEST", "SLOWEST"):
        cc[:, c[f"POSIX_{who}_RANK"]] = d[f"{who.lower()}_rank"]
        cc[:, c[f"POSIX_{who}_RANK_BYTES"]] = d[f"{who.lower()}_bytes"]
        ff[:, f[f"POSIX_F_{who}_RANK_TIME"]] = d[f"{who.lower()}_time"]
    ff[:, f["POSIX_F_VARIANCE_RANK_TIME"]] = d["var_time"]
    ff[:, f["POSIX_F_VARIANCE_RANK_BYTES"]] = d["var_bytes"]
    return "POSIX", out.tobytes(), ver


def _mpiio_buffer(d: pd.DataFrame, nprocs: int) -> tuple[str, bytes, int]:
    """MPI-IO records over the shared files (collective calls, one per rank)."""
    ver, dtype, c, f = _layout("MPI-IO")
    out = np.zeros(len(d), dtype)
    out["id"] = [_record_id(p) for p in d["path"]]
    out["rank"] = -1
    cc, ff = out["c"], out["f"]
    cc[:, c["MPIIO_COLL_OPENS"]] = d["opens"]
    cc[:, c["MPIIO_MODE"]] = 0o644
    for op, done in (("read", "READ"), ("write", "WRITTEN")):
        up = op.upper()
        nb = d[f"{op}_bytes"].to_numpy()
        cc[:, c[f"MPIIO_COLL_{up}S"]] = np.where(nb > 0, nprocs, 0)
        cc[:, c[f"MPIIO_BYTES_{done}"]] = nb
        b = np.searchsorted(_SIZE_EDGES, np.maximum(nb // nprocs, 1), side="left")
        np.add.at(cc, (np.arange(len(d)), c[f"MPIIO_SIZE_{up}_AGG_0_100"] + b), (nb > 0) * nprocs)
        ff[:, f[f"MPIIO_F_{up}_TIME"]] = d[f"{op}_time"].to_numpy() * 1.01
        ff[:, f[f"MPIIO_F_{up}_START_TIMESTAMP"]] = np.nan_to_num(d[f"t_{op}0"].to_numpy())
        ff[:, f[f"MPIIO_F_{up}_END_TIMESTAMP"]] = np.nan_to_num(d[f"t_{op}1"].to_numpy())
    ff[:, f["MPIIO_F_META_TIME"]] = d["meta_time"].to_numpy() * 1.01
    ff[:, f["MPIIO_F_OPEN_START_TIMESTAMP"]] = d["t_open"].to_numpy()
    slow = d["slowest_time"].to_numpy()
    ff[:, f["MPIIO_F_SLOWEST_RANK_TIME"]] = np.where(slow >= 0, slow * 1.01, -1.0)
    ff[:, f["MPIIO_F_FASTEST_RANK_TIME"]] = d["fastest_time"].to_numpy() * 1.01
    return "MPI-IO", out.tobytes(), ver


def write_darshan_logs(
    pop: Population,
    directory: str | os.PathLike[str],
    *,
    slowest_rank_time: bool = True,
) -> list[Path]:
    """Write one real Darshan log per job of ``pop`` with libdarshan-util's writer.

    Each log holds the job's uid, executable (``/home/u<uid>/bin/<app>``),
    process count, start and end time (UTC, nanoseconds), a GPFS mount, a
    name record per file, POSIX records (one per file and rank; a shared
    file as one record reduced over its ranks, rank -1, with the fastest and
    slowest rank, their bytes and times and the variances, as Darshan
    reduces them) and, for ``N:1`` groups, MPI-IO records of the shared files.

    Parameters
    ----------
    pop : Population
        From :func:`make_population`.
    directory : str or os.PathLike
        Existing directory; logs are named ``<app>_id<job_key>.darshan``
        and must not exist yet.
    slowest_rank_time : bool, default True
        False writes shared records without the slowest rank's time (``-1``,
        as before Darshan 2.0): analyses must then fall back on the paper's
        estimate, first open to last I/O (section 2.4).

    Returns
    -------
    list of pathlib.Path
        The logs, in ``pop.jobs`` order.

    Raises
    ------
    MissingDependencyError
        The ``darshan`` package (and its libdarshan-util) is missing, or its
        POSIX / MPI-IO record layout is not the one written.
    """
    ffi, lib = _library()
    from darshan.backend.cffi_backend import _mod_names

    out_dir = Path(directory)
    recs = _darshan_records(pop, slowest_rank_time)
    keys = recs["job_key"].to_numpy()
    cut = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1], True])
    where = {keys[cut[i]]: (cut[i], cut[i + 1]) for i in range(len(cut) - 1)}
    paths = []
    for job in pop.jobs.itertuples(index=False):  # one file per job
        a, b = where[job.job_key]
        d = recs.iloc[a:b]
        mods = [_posix_buffer(d)]
        if job.pattern == "N:1":
            mods.append(_mpiio_buffer(d[d["shared"]], int(job.nprocs)))
        path = out_dir / f"{job.app}_id{job.job_key}.darshan"
        _write_log(ffi, lib, _mod_names, path, job, d["path"].tolist(), mods)
        paths.append(path)
    return paths


def _write_log(ffi, lib, mod_names, path: Path, job, names: list[str], mods) -> None:
    start = pd.Timestamp(job.start_ts).tz_localize("UTC").timestamp()
    end = start + float(job.runtime_s)
    fd = lib.darshan_log_create(os.fsencode(path), 0, 0)  # zlib, not partial
    if fd == ffi.NULL:
        raise OSError(f"darshan_log_create failed for {path} (does it exist already?)")
    try:
        dj = ffi.new("struct darshan_job *")
        dj.uid, dj.nprocs, dj.jobid = int(job.uid), int(job.nprocs), int(job.job_key)
        dj.start_time_sec, dj.start_time_nsec = int(start), int(round((start % 1) * 1e9))
        dj.end_time_sec, dj.end_time_nsec = int(end), int(round((end % 1) * 1e9))
        dj.metadata = b"lib_ver=3.4.4\nh=iochar.synth_jobs\n"
        _check(lib.darshan_log_put_job(fd, dj), "put_job")
        exe = f"/home/u{job.uid}/bin/{job.app} --input deck.{job.group_id}"
        _check(lib.darshan_log_put_exe(fd, exe.encode()), "put_exe")
        mnt = ffi.new("struct darshan_mnt_info[]", 2)
        mnt[0].mnt_type, mnt[0].mnt_path = b"gpfs", b"/scratch"
        mnt[1].mnt_type, mnt[1].mnt_path = b"ext4", b"/"
        _check(lib.darshan_log_put_mounts(fd, mnt, 2), "put_mounts")
        uniq = list(dict.fromkeys(names))
        keep = []
        refs = ffi.new("struct darshan_name_record_ref[]", len(uniq))
        for i, name in enumerate(uniq):
            buf = ffi.new("char[]", _record_id(name).to_bytes(8, "little") + name.encode() + b"\0")
            keep.append(buf)
            refs[i].name_record = buf
            refs[i].hlink.next = ffi.addressof(refs, i + 1) if i + 1 < len(uniq) else ffi.NULL
        _check(lib.darshan_log_put_namehash(fd, refs), "put_namehash")
        for module, buf, ver in mods:
            _check(lib.darshan_log_put_mod(fd, mod_names.index(module), buf, len(buf), ver), module)
    finally:
        lib.darshan_log_close(fd)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        raise OSError(f"libdarshan-util failed writing {what} ({ret})")
