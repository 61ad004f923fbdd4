"""Required, checkpoint and staging I/O per file (Miller & Katz 1991, section 5.1).

The paper divides an application's I/O into three types:

- **required** ("compulsory") I/O reads the program's initial state and
  writes its final state: "a configuration file and perhaps an initial set of
  data points" read, "the final set of data points along with graphical and
  textual representations of the results" written, each byte about once;
- **checkpoint** I/O saves "some subset, possibly complete, of the program's
  in-memory data" "every few iterations", so that a failed run can be
  restarted: the same state written again and again, to one file overwritten
  or to a series of files (``ckpt.000``, ``ckpt.001``...), in bursts that
  "do not place a continuous high demand on the I/O system";
- **staging** I/O shuttles a data set too large for memory "in and out of
  memory at least once per iteration": the same bytes read and written again
  and again, reads following writes, all through the run.

:func:`classify` gives every (job, file) one of ``required``,
``checkpoint``, ``staging`` or ``other``, with the evidence the rule used
(``reason``) and a ``confidence`` in [0, 1]. Sizes are in bytes, times in
seconds since the job's start; a file's *extent* is the highest offset read or
written (the bytes moved when no offset is known), and re-read and re-write
factors are bytes over extent.

Not files (never classified, no row): ``/dev/*`` (but ``/dev/shm/*``, the
tmpfs of POSIX shared memory, shm_overview(7)), ``/proc`` and ``/sys``
(kernel interfaces, proc(5), sysfs(5)), and what strace ``-y`` shows as
``TYPE:[inode]`` -- pipes, sockets, eventfd and other anonymous inodes
(``pipe:[..]``, ``socket:[..]``, ``anon_inode:[eventfd]``...) -- plus memfd
objects and Darshan's ``<STDIN>``/``<STDOUT>``/``<STDERR>`` streams.

The rules, in order (the first that fits gives the label):

0. **no data moved** (only opened, stat'ed, synced): ``other``, saying so.
1. **staging**: read and written, read after written (the last read ends after
   the first write starts), the reads not a single read-back of a saved state
   (below), and re-read or re-written at least ``reuse`` times its extent.
2. **checkpoint** -- the same state saved again and again. A *read-back* is
   at most one extent read (x1.2) wholly before the first or after the last
   write: a checkpoint read at restart stays a checkpoint (rule a). A file
   is *mostly written* when it is written and its reads are at most 10% of
   its writes or a read-back.

   a. *series*: one of at least 2 mostly-written files whose names differ
      only in digits (``ckpt.000``, ``chk00010``, ``restart.3``,
      ``out.h5.0042``: the digits of the file name vary, the folder is
      kept), numbered in time (the numbers of one digit run rise with the
      first-write times: Spearman rank correlation >= 0.8), whose first
      writes (files starting within ``burst_gap_s`` of each other are one
      burst: ranks saving together) come in bursts at least
      ``min_interval_s`` apart -- at least 3 bursts at regular intervals
      (coefficient of variation <= ``max_cv``), at least two before the
      run's last ``edge``; or exactly 2 (the state saved twice, rule c), the
      first before the last ``edge`` and after at least half an interval of
      computation -- with idle time between them (the series is being
      written at most half of the time from its first burst's start to its
      last's end: Miller & Katz's checkpoints "do not place a continuous high
      demand"), each burst of about the same size (largest at most 4 times
      the smallest). A read-only member read about once, its extent within a
      factor 2 of the written members' (a restart reading the last
      checkpoint of an earlier run), is part of the series too.
   b. *one file rewritten* (per-operation records): mostly written, written
      at least 1.8 times its extent (the state saved at least twice), and
      either in at least 3 write bursts at regular intervals (CV <=
      ``max_cv``), at least ``min_interval_s`` apart, not all at one end of
      the run; or in exactly 2 bursts (the state saved twice: rule c),
      ``min_interval_s`` or more apart, the first before the last ``edge``
      and after at least half an interval of computation.
   c. *one file rewritten* (counters): mostly written, written at least 1.8
      times its extent, the writes spread over at least a quarter of the run
      and ``min_interval_s``, not all at one end, the first write after at
      least half of the estimated interval (write span over rewrites - 1).

   A file appended to (each byte written about once) is never a checkpoint,
   however regular its bursts: a log appended every iteration is output
   (rule b). Periodicity needs at least ``min_interval_s`` between bursts,
   well above strace's and Darshan's microsecond clocks and above Linux's
   scheduling period (CFS ``sched_latency``: 6 ms x (1 + log2 CPUs), at
   most 24 ms; Documentation/scheduler/sched-design-CFS.rst), so the gaps a
   short or many-threaded program leaves while its threads wait for a CPU
   do not make a period (rule h).
3. **required**: read only, with its reads in the first ``edge`` of the run
   or read at most about twice by each process that reads it (2.5 times its
   extent times the readers: an input read twice is still input, rule e; N
   ranks reading one shared input once each is input too); or written only,
   with its writes in the last ``edge`` of the run or each byte written
   about once (1.25 times its extent): output written at the end, however long the end (rule d), or
   streamed over the whole run (rule f).
4. **other**: anything else, with the facts that kept it out of 1-3.

Evidence comes from per-operation records (``ops``: strace, Darshan DXT, trace
CSV; one Darshan layer, see :mod:`iochar.analyze.fileio`) or, for a job
without them or with ``source="counters"``, from Darshan counters
(``file_stats``; see :mod:`iochar.analyze._counter_facts`). Counters carry no
per-operation times: bursts are unknown, a single file's regularity cannot be
measured, head and tail shares are estimated from the first and last
timestamps; their reasons name the counters that decided and their
confidence is 0.8 times what the same rule gives on a trace. A file that was
memory-mapped (an ``mmap`` of it traced, or ``POSIX_MMAPS`` > 0) says so:
I/O through the mapping is invisible to strace and to Darshan.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from iochar._units import fmt_bytes
from iochar._validation import check_choice, check_int, check_real
from iochar.analyze._counter_facts import COUNTER_PREFIX, counter_facts
from iochar.analyze._query import query
from iochar.analyze._sql import LAYER_OPS, SPAN_GRID
from iochar.analyze.characterize import job_span, span_bins
from iochar.analyze.fileio import FileIO, check_params, file_io
from iochar.errors import ParameterError
from iochar.result import Table

__all__ = ["classify", "class_rate", "class_breakdown", "not_a_file", "CLASSES", "SOURCES"]

#: The labels, a partition of the files with reads or writes.
CLASSES = ("required", "checkpoint", "staging", "other")

#: Where the evidence comes from: per job, the trace when there is one ("auto"),
#: only traces, or only Darshan counters.
SOURCES = ("auto", "trace", "counters")

#: Written at least this many times its extent: the same state saved at least twice.
SAME_STATE = 1.8
#: Read at most this many times its extent: still required input (read twice, rule e).
INPUT_REREAD = 2.5
#: Written at most this many times its extent: each byte about once (output).
ONCE = 1.25
#: Counters-only confidence relative to a trace's.
COUNTERS_CONFIDENCE = 0.8

_DIGITS = re.compile(r"[0-9]+")
_NOT_FILE = (
    r"^(?:/dev/(?!shm/)|/proc(?:/|$)|/sys(?:/|$)|[A-Za-z0-9_-]+:\[|/memfd:|memfd:"
    r"|<STD(?:IN|OUT|ERR)>$)"
)


def not_a_file(paths: pd.Series) -> np.ndarray:
    """Which paths name no file: devices, kernel interfaces, pipes, sockets, anonymous inodes.

    Parameters
    ----------
    paths : pandas.Series
        Paths as the tool reported them (``files.path``).

    Returns
    -------
    numpy.ndarray of bool
        True for ``/dev/*`` (not ``/dev/shm/*``: POSIX shared memory is a
        tmpfs of regular files, shm_overview(7)), ``/proc`` and ``/sys``
        (proc(5), sysfs(5)), strace ``-y``'s ``TYPE:[inode]`` names of pipes,
        sockets, eventfd, epoll and other anonymous inodes, memfd objects
        (memfd_create(2)), and Darshan's ``<STDIN>``, ``<STDOUT>``,
        ``<STDERR>``.

    Examples
    --------
    >>> not_a_file(pd.Series(["/dev/null", "pipe:[12]", "/dev/shm/x", "/tmp/a"])).tolist()
    [True, True, False, False]
    """
    s = paths.astype(object).where(paths.notna(), "")
    return s.astype(str).str.match(_NOT_FILE).to_numpy(dtype=bool)


def _series_patterns(paths: pd.Series) -> pd.Series:
    """``/d/ckpt.#`` for ``/d/ckpt.012``: the file name's digit runs as ``#`` (its
    folder kept as is), or '' when the name has no digit; in Arrow's string kernels."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = pa.array(paths.astype(object).where(paths.notna(), ""), type=pa.string())
    parts = pc.extract_regex(arr, r"^(?P<head>(?:.*/)?)(?P<name>[^/]*)$")
    head = pc.struct_field(parts, "head")
    name = pc.struct_field(parts, "name")
    folder = pc.utf8_slice_codeunits(head, 0, -1)  # without its trailing "/"
    joined = pc.binary_join_element_wise(
        folder, pc.replace_substring_regex(name, r"[0-9]+", "#"), "/"
    )
    out = pc.if_else(pc.match_substring_regex(name, r"[0-9]"), joined, "")
    return pd.Series(out.to_pylist(), index=paths.index, dtype=object)


def _bursts(t: np.ndarray, gap_s: float) -> np.ndarray:
    """Burst number of each sorted time: a new burst after a pause longer than ``gap_s``."""
    if len(t) == 0:
        return np.zeros(0, np.int64)
    return np.cumsum(np.concatenate(([True], np.diff(t) > gap_s))) - 1


def _cv(starts: np.ndarray) -> tuple[float, float]:
    """Mean interval and its coefficient of variation, for >= 3 starts."""
    d = np.diff(np.sort(starts))
    if len(d) < 2 or d.mean() <= 0:
        return float("nan"), float("nan")
    return float(d.mean()), float(d.std() / d.mean())


def _numbered_in_time(paths: pd.Series, first_write: np.ndarray) -> bool:
    """True when one digit run of the file names rises with the first-write times
    (Spearman rank correlation >= 0.8): a step or sequence number, not a hash."""
    runs = [_DIGITS.findall(p.rpartition("/")[2]) for p in paths]
    if len({len(r) for r in runs}) != 1:
        return False
    t = pd.Series(first_write).rank()
    for k in range(len(runs[0])):
        num = pd.Series([int(r[k]) for r in runs], dtype="float64")
        if num.nunique() < 2:
            continue
        rho = num.rank().corr(t)
        if rho >= 0.8:
            return True
    return False


_COLUMNS = [
    "job_id", "file_id", "path", "class", "confidence", "reason", "basis", "bytes_read",
    "bytes_written", "reads", "writes", "extent_bytes", "reread", "rewrite", "read_after_write",
    "read_back", "head_share", "tail_share", "write_bursts", "burst_interval_s", "burst_cv",
    "series", "series_files", "mapped",
]  # fmt: skip

_READERS_SQL = """
SELECT job_id, file_id, count(DISTINCT rank) AS readers FROM ops
WHERE op = 'read' AND size > 0 AND error IS NULL AND file_id IS NOT NULL
  AND ($job_id IS NULL OR job_id = $job_id)
GROUP BY job_id, file_id
"""

_MMAP_SQL = """
SELECT DISTINCT job_id, file_id FROM ops
WHERE op = 'other' AND call IN ('mmap', 'mmap2') AND error IS NULL AND file_id IS NOT NULL
  AND ($job_id IS NULL OR job_id = $job_id)
"""


def classify(
    store,
    *,
    job_id: int | None = None,
    edge: float = 0.1,
    reuse: float = 1.5,
    burst_gap_s: float | None = None,
    max_cv: float = 0.3,
    min_interval_s: float = 0.05,
    source: str = "auto",
) -> pd.DataFrame:
    """Label each file's I/O required, checkpoint, staging or other, with evidence.

    The rules and their sources are in the module's description
    (:mod:`iochar.analyze.classify`).

    Parameters
    ----------
    store : iochar.Store or iochar.analyze.fileio.FileIO
        The database, or the per-file facts already computed from it by
        :func:`~iochar.analyze.fileio.file_io` (then ``edge`` and
        ``burst_gap_s`` are those it was computed with, ``source`` must be
        "auto", and mmaps are not looked up).
    job_id : int, optional
        Only this job.
    edge : float, default 0.1
        Share of the run that counts as its start or its end.
    reuse : float, default 1.5
        Re-read or re-write factor (bytes over extent) that marks staging.
    burst_gap_s : float, optional
        A pause between writes longer than this starts a new burst [s];
        default 1% of the job's run time (at least 1 ms).
    max_cv : float, default 0.3
        Largest coefficient of variation of burst intervals still called
        regular (tolerates jitter).
    min_interval_s : float, default 0.05
        Shortest interval between checkpoint bursts [s]: shorter periods are
        scheduling noise, not a program's checkpoint period (rule h).
    source : {"auto", "trace", "counters"}, default "auto"
        Evidence per job: its per-operation records when it has any, else its
        Darshan counters ("auto"; also the counters of a job whose DXT module
        Darshan flagged incomplete, :func:`iochar.analyze.fileio.file_io`); only
        per-operation records ("trace": jobs without them give no rows); only
        Darshan counters ("counters", the DXT of a log ignored: jobs without
        counters give no rows).

    Returns
    -------
    pandas.DataFrame
        One row per (job, file) the job touched, files only (see
        :func:`not_a_file`): ``job_id``, ``file_id``, ``path``, ``class``
        (one of :data:`CLASSES`), ``confidence`` in [0, 1], ``reason`` (the
        evidence in words; for counters, the counters that decided), and the
        evidence columns ``basis`` (``ops``, or ``file_stats:`` and the
        Darshan modules whose counters were used), ``bytes_read``,
        ``bytes_written`` [bytes], ``reads``, ``writes`` (calls),
        ``extent_bytes`` [bytes], ``reread`` and ``rewrite`` (bytes over
        extent), ``read_after_write``, ``read_back`` (at most one extent read,
        all before or all after the writes), ``head_share`` and
        ``tail_share`` (share of bytes in the first and last ``edge`` of the
        run; estimated for counters), ``write_bursts``, ``burst_interval_s``
        [s], ``burst_cv`` (unknown for counters), ``series`` (numbered-file
        pattern, when any), ``series_files`` and ``mapped`` (the file was
        memory-mapped).

    Raises
    ------
    ParameterError
        A parameter out of range.
    """
    caller = "classify"
    job_id, edge, burst_gap_s = check_params(job_id, edge, burst_gap_s, caller)
    reuse = check_real(reuse, "reuse", caller, "a float > 1", low=1, low_open=True)
    max_cv = check_real(max_cv, "max_cv", caller, "a positive float", low=0, low_open=True)
    min_interval_s = check_real(
        min_interval_s, "min_interval_s", caller, "a number of seconds >= 0", low=0
    )
    source = check_choice(source, "source", caller, SOURCES)

    mapped = readers = None
    if isinstance(store, FileIO):
        if source != "auto":
            raise ParameterError(
                "source", caller, "'auto' when the facts are given as a FileIO", source
            )
        facts = store.for_job(job_id)
        edge, burst_gap_s = facts.edge, facts.burst_gap_s
        f = facts.files
    else:
        facts = file_io(
            store, job_id=job_id, edge=edge, burst_gap_s=burst_gap_s,
            incomplete_dxt="trace" if source == "trace" else "counters",
        )  # fmt: skip
        f = facts.files
        traced = f["basis"] == "ops"
        if source == "counters":
            want = facts.jobs
        elif source == "trace":
            want = facts.jobs.iloc[0:0]
        else:
            want = facts.jobs[~facts.jobs["job_id"].isin(f.loc[traced, "job_id"])]
        parts = [] if source == "counters" else [f[traced]]
        if len(want):
            parts.append(counter_facts(store, want, edge))
        parts = [p for p in parts if len(p)]
        f = pd.concat(parts, ignore_index=True) if parts else f.iloc[0:0]
        mapped = query(store, _MMAP_SQL, params={"job_id": job_id}).df()
        readers = query(store, _READERS_SQL, params={"job_id": job_id}).df()
    f = f[f["file_id"].notna()].copy()
    f = f[~not_a_file(f["path"])]
    if f.empty:
        return pd.DataFrame(columns=_COLUMNS)
    f = f.reset_index(drop=True)
    f["file_id"] = f["file_id"].astype("int64")
    for c in ("rw_switches", "mmaps"):
        f[c] = f[c].astype("float64").fillna(0.0) if c in f else 0.0
    traced_map = np.zeros(len(f), dtype=bool)
    if mapped is not None and len(mapped):
        key = pd.MultiIndex.from_frame(mapped[["job_id", "file_id"]].astype("int64"))
        traced_map = pd.MultiIndex.from_frame(f[["job_id", "file_id"]]).isin(key)
    f["traced_mmap"] = traced_map & (f["basis"] == "ops").to_numpy()
    f["mapped"] = f["traced_mmap"] | (f["mmaps"] > 0)
    # processes that read the file: ranks of the counters' records, or of the traced reads
    f["readers"] = f["nranks"].astype("float64") if "nranks" in f else np.nan
    if readers is not None and len(readers):
        key = readers.set_index(["job_id", "file_id"])["readers"].astype("float64")
        idx = pd.MultiIndex.from_frame(f[["job_id", "file_id"]])
        traced = (f["basis"] == "ops").to_numpy()
        f.loc[traced, "readers"] = key.reindex(idx).to_numpy()[traced]
    f["readers"] = f["readers"].fillna(1.0).clip(lower=1.0)
    f["runtime_s"] = f["span_s"]
    denom = f["extent_bytes"].where(f["extent_bytes"] > 0)
    f["reread"] = f["bytes_read"] / denom
    f["rewrite"] = f["bytes_written"] / denom
    f["read_after_write"] = (f["last_read_t"] > f["first_write_t"]).fillna(False).astype(bool)
    before = (f["last_read_t"] <= f["first_write_t"]).fillna(False)
    after = (f["first_read_t"] >= f["last_write_t"]).fillna(False)
    f["read_back"] = (
        (f["bytes_read"] > 0)
        & (f["bytes_written"] > 0)
        & (f["reread"].fillna(np.inf) <= 1.2)
        & (before | after)
    ).astype(bool)
    f["mostly_written"] = (f["bytes_written"] > 0) & (
        (f["bytes_read"] <= 0.1 * f["bytes_written"]) | f["read_back"]
    )
    ranks = None if isinstance(store, FileIO) else _WriterRanks(store)
    _series(f, edge, burst_gap_s, max_cv, min_interval_s, ranks)
    f["class"], f["confidence"], f["reason"] = _rules(f, edge, reuse, max_cv, min_interval_s)
    return f[_COLUMNS].reset_index(drop=True)


def _series(f: pd.DataFrame, edge, burst_gap_s, max_cv, min_interval_s, ranks) -> None:
    """Find numbered checkpoint series (rule 2a) and write ``series``,
    ``series_files``, ``series_cv``, ``series_interval_s`` and ``series_member``
    (``written`` or ``read back``) into ``f``."""
    f["series"] = None
    f["series_files"] = 0
    f["series_cv"] = np.nan
    f["series_interval_s"] = np.nan
    f["series_member"] = ""
    pattern = _series_patterns(f["path"])
    has = pattern != ""
    for (_job, _pat), g in f[has].groupby([f.loc[has, "job_id"], pattern[has]]):
        w = g[g["mostly_written"] & g["first_write_t"].notna()]
        if len(w) < 2:
            continue
        w = w.sort_values("first_write_t")
        fw = w["first_write_t"].to_numpy(np.float64)
        lw = w["last_write_t"].to_numpy(np.float64)
        rt = float(g["runtime_s"].iloc[0])
        gap = burst_gap_s if burst_gap_s is not None else max(0.01 * rt, 1e-3)
        b = _bursts(fw, gap)
        n = int(b[-1]) + 1
        if n < 2:
            continue
        first = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])  # bursts are runs: fw sorted
        starts = fw[first]
        ends = np.maximum.reduceat(np.where(np.isnan(lw), fw, lw), first)
        volume = np.add.reduceat(w["bytes_written"].to_numpy(np.float64), first)
        if n == 2:  # saved twice: no regularity to measure, a computation before the first
            mean, cv = float(starts[1] - starts[0]), float("nan")
            timing = starts[0] < (1 - edge) * rt and starts[0] >= 0.5 * mean
        else:
            mean, cv = _cv(starts)
            timing = (starts < (1 - edge) * rt).sum() >= 2 and cv <= max_cv
        busy = float(np.sum(np.maximum(ends - starts, 0.0)))
        whole = float(ends.max() - starts.min())
        ok = (
            timing
            and mean >= min_interval_s
            and whole > 0
            and busy <= 0.5 * whole
            and volume.max() <= 4 * max(volume.min(), 1)
            and _numbered_in_time(w["path"], fw)
        )
        if not ok or (ranks is not None and ranks.one_save_each(w, b)):
            continue
        ext = w["extent_bytes"].to_numpy(np.float64)
        lo, hi = 0.5 * ext.min(), 2.0 * ext.max()
        back = g[
            (g["bytes_written"] == 0)
            & (g["bytes_read"] > 0)
            & (g["reread"].fillna(np.inf) <= 1.2)
            & g["extent_bytes"].between(lo, hi)
        ]
        members = w.index.append(back.index)
        f.loc[members, "series"] = _pat
        f.loc[members, "series_files"] = len(members)
        f.loc[members, "series_cv"] = cv
        f.loc[members, "series_interval_s"] = mean
        f.loc[w.index, "series_member"] = "written"
        f.loc[back.index, "series_member"] = "read back"


_RANKS_SQL = """
SELECT file_id, list(DISTINCT rank ORDER BY rank) AS ranks,
       bool_and(coalesce(starts_with(call, 'DXT_'), false)) AS mpi
FROM ops
WHERE job_id = $job_id AND list_contains($files, file_id) AND op = 'write' AND size > 0
  AND error IS NULL
GROUP BY file_id
UNION ALL
SELECT file_id, list(DISTINCT rank ORDER BY rank) AS ranks,
       NOT bool_or(rank IS NULL) AS mpi
FROM file_stats
WHERE job_id = $job_id AND list_contains($files, file_id) AND bytes_written > 0
  AND file_id NOT IN (SELECT file_id FROM ops WHERE job_id = $job_id AND op = 'write')
GROUP BY file_id
"""


class _WriterRanks:
    """Which MPI ranks wrote the files of a candidate series (Darshan DXT or counters).

    A checkpoint saves *the same* state again: some process writes in two bursts or
    more. A series whose every file is written by one rank, each rank in one burst
    only (rank k writes file k at its own time), is each rank's output once. Only
    MPI ranks count (Darshan: DXT segments or per-rank records; a shared record's
    writers are unknown): strace's pids change when a program forks a child to
    save each checkpoint, so a trace of pids never decides.
    """

    def __init__(self, store):
        self.store = store

    def one_save_each(self, w: pd.DataFrame, burst: np.ndarray) -> bool:
        job = int(w["job_id"].iloc[0])
        ids = [int(x) for x in w["file_id"]]
        got = query(self.store, _RANKS_SQL, params={"job_id": job, "files": ids}).df()
        got = got.drop_duplicates("file_id").set_index("file_id")
        if len(got) < len(ids) or not got["mpi"].all():
            return False
        ranks = got["ranks"].reindex(ids).tolist()
        if any(len(r) != 1 for r in ranks):
            return False
        seen: dict[int, set] = {}
        for r, k in zip(ranks, burst.tolist(), strict=True):
            seen.setdefault(int(r[0]), set()).add(k)
        return max(len(v) for v in seen.values()) < 2


def _counter_names(basis: str, *names: str) -> str:
    """``POSIX_BYTES_READ, ...`` for the modules of a ``file_stats:POSIX+STDIO`` basis."""
    mods = [COUNTER_PREFIX.get(m, m) for m in basis.split(":", 1)[-1].split("+")]
    return ", ".join("+".join(f"{m}_{n}" for m in mods) for n in names)


#: The counters each rule's decision rests on (without the module prefix), by rule index
#: of :func:`_rules` (4 and 5 need per-operation times and never run on counters).
_DECIDING = {
    0: ("READS", "WRITES", "BYTES_READ", "BYTES_WRITTEN", "OPENS"),
    1: ("BYTES_READ", "BYTES_WRITTEN", "MAX_BYTE_READ", "MAX_BYTE_WRITTEN",
        "F_READ_END_TIMESTAMP", "F_WRITE_START_TIMESTAMP"),
    2: ("BYTES_WRITTEN", "F_WRITE_START_TIMESTAMP", "F_WRITE_END_TIMESTAMP"),
    3: ("BYTES_READ", "BYTES_WRITTEN", "MAX_BYTE_READ"),
    6: ("BYTES_WRITTEN", "MAX_BYTE_WRITTEN", "F_WRITE_START_TIMESTAMP",
        "F_WRITE_END_TIMESTAMP"),
    7: ("BYTES_READ", "BYTES_WRITTEN", "MAX_BYTE_READ", "F_READ_START_TIMESTAMP",
        "F_READ_END_TIMESTAMP"),
    8: ("BYTES_READ", "BYTES_WRITTEN", "MAX_BYTE_WRITTEN", "F_WRITE_START_TIMESTAMP",
        "F_WRITE_END_TIMESTAMP"),
    9: ("BYTES_READ", "BYTES_WRITTEN", "MAX_BYTE_READ", "MAX_BYTE_WRITTEN",
        "F_READ_START_TIMESTAMP", "F_WRITE_START_TIMESTAMP", "F_WRITE_END_TIMESTAMP"),
}  # fmt: skip


def _rules(f: pd.DataFrame, edge: float, reuse: float, max_cv: float, min_interval_s: float):
    """Apply the module's rules 0-4 to every file's evidence at once.

    Returns the labels, confidences and reasons as arrays in ``f``'s order.
    """
    n = len(f)
    num = {c: f[c].to_numpy(np.float64, na_value=np.nan) for c in _RULE_COLUMNS}
    br, bw = num["bytes_read"], num["bytes_written"]
    rd, wr = br > 0, bw > 0
    reread = np.nan_to_num(num["reread"])
    rewrite = np.nan_to_num(num["rewrite"])
    head, tail = num["head_share"], num["tail_share"]
    bursts, cv, interval = num["write_bursts"], num["burst_cv"], num["burst_interval_s"]
    fw, lw = num["first_write_t"], num["last_write_t"]
    span = np.where(num["runtime_s"] > 0, num["runtime_s"], np.nan)
    raw = f["read_after_write"].to_numpy(bool)
    back = f["read_back"].to_numpy(bool)
    mostly = f["mostly_written"].to_numpy(bool)
    member = f["series_member"].to_numpy(object)
    timed = ~np.isnan(bursts)  # per-op times known (ops, not counters)
    spread = (head < 0.9) & (tail < 0.9)  # not all at one end of the run
    same_state = mostly & (rewrite >= SAME_STATE)
    wspan = np.nan_to_num(lw - fw)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = wspan / np.maximum(np.round(rewrite) - 1, 1)  # interval if one burst per save

    staging = rd & wr & raw & ~back & (np.maximum(reread, rewrite) >= reuse)
    ck_series = member == "written"
    ck_back = member == "read back"
    ck_bursts = (
        same_state & timed & spread & (bursts >= 3) & (cv <= max_cv) & (interval >= min_interval_s)
    )
    ck_twice = (
        same_state & timed & (bursts == 2) & (rewrite < 3.0) & (wspan >= min_interval_s)
        & (fw >= 0.5 * wspan) & (fw < (1 - edge) * span)
    )  # fmt: skip
    ck_counters = (
        same_state & ~timed & spread & (wspan >= np.maximum(0.25 * span, min_interval_s))
        & (fw >= 0.5 * est)
    )  # fmt: skip
    read_only, write_only = rd & ~wr, wr & ~rd
    req_in = read_only & ((head >= 0.9) | (reread <= INPUT_REREAD * num["readers"]))
    req_out = write_only & ((tail >= 0.9) | (rewrite <= ONCE))
    no_data = ~rd & ~wr  # metadata calls only (or reads at end of file)
    masks = [no_data, staging, ck_series, ck_back, ck_bursts, ck_twice, ck_counters, req_in,
             req_out]  # fmt: skip
    which = np.select(masks, np.arange(len(masks)), default=len(masks))
    labels = np.array(
        ["other", "staging", "checkpoint", "checkpoint", "checkpoint", "checkpoint", "checkpoint",
         "required", "required", "other"],
        dtype=object,
    )[which]  # fmt: skip
    scv = num["series_cv"]
    conf = np.select(
        masks,
        [np.ones(n), np.minimum(reread, rewrite) / (2 * reuse) + 0.5, _series_conf(scv),
         0.9 * _series_conf(scv),
         1 - cv, np.full(n, 0.6), np.full(n, 0.5), np.where(head >= 0.9, head, 0.7),
         np.where(tail >= 0.9, tail, 0.7)],
        default=0.5,
    )  # fmt: skip
    basis = f["basis"].to_numpy(object)
    counters = basis != "ops"
    scale = counters & (which != 0) & (which != 6)  # rule 6 is counters-only already
    conf = np.where(scale, COUNTERS_CONFIDENCE * conf, conf)
    conf = np.round(np.clip(np.nan_to_num(conf, nan=0.5), 0.0, 1.0), 3)
    return labels, conf, _reasons(f, which, num, edge, counters, min_interval_s)


def _cv_text(cv: float) -> str:
    return " (saved twice)" if cv != cv else f" (CV {cv:.2f})"


def _series_conf(cv: np.ndarray) -> np.ndarray:
    """1 - CV of a series' intervals; 0.6 for a series saved twice (one interval, CV NaN)."""
    return np.where(np.isnan(cv), 0.6, 1 - cv)


def _pct(x: float) -> str:
    return "?" if x != x else f"{x:.0%}"


def _reasons(
    f: pd.DataFrame,
    which: np.ndarray,
    num: dict,
    edge: float,
    counters: np.ndarray,
    min_interval_s: float,
):
    """The evidence in words, one file at a time (Python lists index far faster
    than numpy arrays element by element)."""
    n = len(f)
    reasons = np.empty(n, dtype=object)
    ext = f["extent_bytes"].to_numpy().tolist()
    series = f["series"].to_numpy(object).tolist()
    calls = f[["reads", "writes", "other_calls"]].to_numpy().tolist()
    v = {k: np.nan_to_num(x, nan=np.nan).tolist() for k, x in num.items()}
    reread = np.nan_to_num(num["reread"]).tolist()
    rewrite = np.nan_to_num(num["rewrite"]).tolist()
    span = np.where(num["runtime_s"] > 0, num["runtime_s"], np.nan).tolist()
    head, tail = v["head_share"], v["tail_share"]
    rd, wr = (num["bytes_read"] > 0).tolist(), (num["bytes_written"] > 0).tolist()
    timed = (~np.isnan(num["write_bursts"])).tolist()
    back = f["read_back"].to_numpy(bool).tolist()

    def when(i, a, b):
        return f"from {_pct(v[a][i] / span[i])} to {_pct(v[b][i] / span[i])} of the run"

    text = {
        0: lambda i: (
            f"no data moved: {calls[i][0]} reads and {calls[i][1]} writes of 0 bytes, "
            f"{calls[i][2]} other calls (metadata only)"
        ),
        1: lambda i: (
            f"re-read {reread[i]:.1f}x and re-written {rewrite[i]:.1f}x its {fmt_bytes(ext[i])} "
            "extent, read after written"
        ),
        2: lambda i: (
            f"one of {int(v['series_files'][i])} files {series[i]!r} written every "
            f"{v['series_interval_s'][i]:.3g} s"
            + _cv_text(v["series_cv"][i])
            + ", idle between saves"
        ),
        3: lambda i: (
            f"read back once ({reread[i]:.2f}x its {fmt_bytes(ext[i])} extent), never written: a "
            f"restart reading the checkpoint series {series[i]!r} "
            f"({int(v['series_files'][i])} files, every {v['series_interval_s'][i]:.3g} s)"
        ),
        4: lambda i: (
            f"the same state written {rewrite[i]:.1f}x its {fmt_bytes(ext[i])} extent in "
            f"{int(v['write_bursts'][i])} bursts every {v['burst_interval_s'][i]:.3g} s "
            f"(CV {v['burst_cv'][i]:.2f})" + (", read back once" if back[i] else "")
        ),
        5: lambda i: (
            f"the same state written {rewrite[i]:.1f}x its {fmt_bytes(ext[i])} extent in 2 bursts "
            f"{v['last_write_t'][i] - v['first_write_t'][i]:.3g} s apart, the first after "
            f"{v['first_write_t'][i]:.3g} s of the run" + (", read back once" if back[i] else "")
        ),
        6: lambda i: (
            f"the same state written {rewrite[i]:.1f}x its {fmt_bytes(ext[i])} extent "
            f"{when(i, 'first_write_t', 'last_write_t')} (counters only: regularity not "
            "measurable)" + (", read back once" if back[i] else "")
        ),
        7: lambda i: (
            f"read only, {reread[i]:.2f}x its {fmt_bytes(ext[i])} extent, "
            + (
                f"{head[i]:.0%} of it in the first {edge:.0%} of the run"
                if head[i] >= 0.9
                else "at most about twice"
                + (f" by each of {int(v['readers'][i])} processes" if v["readers"][i] > 1 else "")
                + f": input, {when(i, 'first_read_t', 'last_read_t')}"
            )
        ),
        8: lambda i: (
            f"written only, {rewrite[i]:.2f}x its {fmt_bytes(ext[i])} extent, "
            + (
                f"{tail[i]:.0%} of it in the last {edge:.0%} of the run"
                if tail[i] >= 0.9
                else f"each byte about once: output, {when(i, 'first_write_t', 'last_write_t')}"
            )
        ),
    }

    def other(i):
        bursts = int(v["write_bursts"][i]) if wr[i] and timed[i] else 0
        every = v["burst_interval_s"][i]
        facts = [
            f"read {reread[i]:.2f}x" if rd[i] else "never read",
            f"written {rewrite[i]:.2f}x" if wr[i] else "never written",
            (f"{bursts} write burst" + ("" if bursts == 1 else "s")) if wr[i] and timed[i] else "",
            f"bursts every {every:.3g} s, under {min_interval_s:g} s: scheduling noise, no period"
            if every < min_interval_s
            else "",
            "read back once" if back[i] else "",
            f"{head[i]:.0%} at start, {tail[i]:.0%} at end",
        ]
        return "no rule fits: " + ", ".join(x for x in facts if x)

    text[9] = other
    basis = f["basis"].to_numpy(object).tolist()
    traced_mmap = f["traced_mmap"].to_numpy(bool).tolist()
    mmaps = f["mmaps"].to_numpy(np.float64).tolist()
    cnt = counters.tolist()
    for i, k in enumerate(which.tolist()):
        r = text[k](i)
        if cnt[i] and k in _DECIDING:
            r += f" [counters: {_counter_names(basis[i], *_DECIDING[k])}]"
        if traced_mmap[i]:
            r += "; memory-mapped: I/O through the mapping is invisible to strace"
        elif mmaps[i] > 0:
            r += (
                f"; memory-mapped (POSIX_MMAPS {int(mmaps[i])}): I/O through the mapping is "
                "invisible to Darshan's counters"
            )
        reasons[i] = r
    return reasons


_RULE_COLUMNS = (
    "bytes_read", "bytes_written", "reread", "rewrite", "head_share", "tail_share",
    "write_bursts", "burst_cv", "burst_interval_s", "runtime_s", "series_files", "series_cv",
    "series_interval_s", "first_write_t", "last_write_t", "first_read_t", "last_read_t",
    "readers",
)  # fmt: skip


_CLASS_RATE_SQL = f"""
WITH layer AS ({LAYER_OPS}),
lab AS (SELECT * FROM classes),
binned AS (
  SELECT floor(l.t_start / $bin_s)::BIGINT AS b, coalesce(c.class, 'other') AS class,
         sum(l.size) AS nbytes, count(*) AS n
  FROM layer l LEFT JOIN lab c ON c.job_id = l.job_id AND c.file_id = l.file_id
  WHERE l.job_id = $job_id GROUP BY ALL
),
{SPAN_GRID}
SELECT g.b * $bin_s AS t_s, k.class, coalesce(x.nbytes, 0) AS bytes, coalesce(x.n, 0) AS ios,
       coalesce(x.nbytes, 0) / $bin_s AS bps
FROM grid g CROSS JOIN (SELECT unnest($classes) AS class) k
LEFT JOIN binned x ON x.b = g.b AND x.class = k.class
ORDER BY t_s, k.class
"""


def class_rate(store, *, job_id: int, bin_s: float = 1.0, **rules) -> pd.DataFrame:
    """Data rate over time of one job, split by I/O class (Miller & Katz Figs. 3-4).

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int
        The job.
    bin_s : float, default 1.0
        Bin width. [s]
    **rules
        Passed to :func:`classify` (``edge``, ``reuse``...).

    Returns
    -------
    pandas.DataFrame
        ``t_s`` (bin start since job start [s]), ``class``, ``bytes``
        [bytes], ``ios``, ``bps`` [bytes/s]; every bin and class present. The bins
        cover the job's whole run, as :func:`~iochar.analyze.characterize.data_rate`'s
        do (:func:`~iochar.analyze.characterize.job_span`), so both series have the
        same bins and idle time after the last I/O shows as zeros.
    """

    job_id = check_int(job_id, "job_id", "class_rate", "an int")
    bin_s = check_real(
        bin_s, "bin_s", "class_rate", "a positive number of seconds", low=0, low_open=True
    )
    labels = classify(store, job_id=job_id, **rules)[["job_id", "file_id", "class"]]
    store.con.register("classes", labels)
    try:
        lo, hi = span_bins(job_span(store, job_id=job_id), float(bin_s)) or (None, None)
        params = {
            "job_id": job_id,
            "bin_s": float(bin_s),
            "classes": list(CLASSES),
            "lo": lo,
            "hi": hi,
        }
        df = query(store, _CLASS_RATE_SQL, params=params).df()
        return Table(df, params={**params, **rules}, sql=_CLASS_RATE_SQL)
    finally:
        store.con.unregister("classes")


def class_breakdown(labels: pd.DataFrame) -> pd.DataFrame:
    """Share of bytes, of I/O operations and of files per class, from a :func:`classify` result.

    Parameters
    ----------
    labels : pandas.DataFrame
        The result of :func:`classify`.

    Returns
    -------
    pandas.DataFrame
        One row per class in :data:`CLASSES` order: ``files``, ``bytes``
        (read + written) [bytes], ``ops`` (read and write calls), and
        ``files_share``, ``bytes_share`` and ``ops_share``.
    """
    g = (
        labels.assign(
            bytes=labels["bytes_read"] + labels["bytes_written"],
            ops=labels["reads"] + labels["writes"],
        )
        .groupby("class")
        .agg(files=("file_id", "size"), bytes=("bytes", "sum"), ops=("ops", "sum"))
    )
    g = g.reindex(list(CLASSES), fill_value=0)
    for c in ("files", "bytes", "ops"):
        g[f"{c}_share"] = g[c] / max(int(g[c].sum()), 1)
    return g.reset_index()
