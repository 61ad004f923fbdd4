"""iochar's insights side by side with Drishti (issue 19, item 2).

On every Darshan log iochar's tests can reach -- ``data/darshan/**/*.darshan`` and the
PyDarshan wheel's ``examples/example_logs/`` and ``tests/input/`` logs, the same bytes
counted once (SHA-256) -- this script runs drishti-io and iochar and prints, per log,
each Drishti HIGH/WARN insight with iochar's **match** (the rule code, its severity and
the key numbers), **miss**, or **disagree**-ment with the reason in numbers, then a
summary table: matched / missed / disagree / Drishti-crash counts.

    python benchmarks/bench_drishti.py [--timeout 300] [--log PATH]... [--no-wheel]

How Drishti is run
------------------
drishti-io 0.8 has no machine-readable report: ``--json`` is a hidden *input* option
(DXT insights to merge, ``includes/config.py`` ``load_json``) and ``--csv`` writes only
the codes of every message (INFO and OK included), without level or text. Every check of
``drishti/includes/module.py`` reports through one function,
``module.message(code, target, level, issue, recommendations, details)``, so a child
Python process (``subprocess``, ``--timeout`` seconds) sets ``sys.argv`` as the
``drishti`` command would (``drishti --code --issues LOG``, parsed at import by
``includes/parser.py``), wraps that function to record code, level (config.py: HIGH=1,
WARN=2) and text, runs ``handlers.handle_darshan.handler()`` with its terminal output
discarded, and prints the records as JSON. A Drishti exception is recorded as a crash
(exception and the line of Drishti's code it came from); the insights it produced before
crashing are still compared, marked ``(before crash)``: Drishti never shows them, since
its report is printed at the end.

How iochar is run
-----------------
Each log is loaded into an in-memory store (``iochar.connect(":memory:")``) and
``iochar.analyze.insights.run`` runs the default rules ``insights.RULES`` (``rules``,
``rules_ranks``, ``rules_system`` and ``rules_more``: rank imbalance, stragglers, bad
OST, blocking MPI-IO, staging...). An iochar exception is counted in the ``iochar
crash`` column (the goal is none).

Matching (the table :data:`DRISHTI`)
------------------------------------
Each Drishti code maps by topic to iochar's rule topics (issue 19's vocabulary), and for
M06/M07 to the one rule of the topic that measures the same direction (BLOCKING-READ-1,
BLOCKING-WRITE-1). A Drishti HIGH/WARN is *matched* when an iochar finding of one of its
topics (and codes) has severity ``warn`` or ``high``. Otherwise the code's check
computes Drishti's own numbers from the raw Darshan counters in the store
(``module_counters``: the counters as darshan-parser prints them, independent of
iochar's rule SQL) and returns *disagree* when they show the insight is not a problem
-- for a reason stated with the numbers -- or *miss* when iochar says nothing about a
problem the numbers confirm. The reasons used:

* **Drishti's test is the reverse of its message** (P09, P10): the message says "more
  data read [written] than the highest offset", the code (module.py ``check_traffic``)
  tests ``max(POSIX_MAX_BYTE_READ) > sum(POSIX_BYTES_READ)`` over the whole job, i.e.
  the highest offset exceeds the bytes moved: sparse access, not redundant traffic.
  The bytes really moved twice are, per file, ``bytes - (max byte + 1)``.
* **Too little to matter**: a share above Drishti's 10 % level that is below iochar's
  absolute guard (e.g. 2.2 KB through STDIO while DFS moved 32 MiB; M06/M07: at most
  ``blocking_seconds_absolute`` = 1 s of blocking MPI-IO time per rank, which iochar's
  BLOCKING rules grade only ``info``).
* **Amdahl bound** (M06/M07 non-blocking MPI-IO, P18/P19/P21/P22 imbalance): overlap or
  rebalancing can save at most the time involved -- the mean per-rank blocking MPI-IO
  read (write) time (iochar's BLOCKING-READ-1 / BLOCKING-WRITE-1 measure), or the time
  between the slowest and fastest rank. At or below 10 % of the job's run time
  (Drishti's share level, config.py ``interface_stdio``, ``misaligned_requests``,
  ``small_requests``) it is not a problem; no MPI-IO reads (writes) at all leaves
  nothing to make non-blocking.
* **M01 (no MPI-IO)** is advice, not a measurement: it is justified when the job has one
  process (no collective I/O possible), moved no data, or moved its data through DFS
  (DAOS's native file API, not a low-performance interface); otherwise it is matched
  when an iochar rule whose advice is MPI-IO fires (small-io, random-access,
  stdio-heavy, redundant-reads), and a disagreement when none of the problems MPI-IO
  addresses holds by Drishti's own thresholds (small > 10 % and > 1000 requests,
  random > 20 % and > 1000, STDIO > 10 % of bytes).

Before the ``blocking-io`` rules (run of 2026-11-26, 25 logs) the 11 misses were all
M06/M07 on jobs whose mean per-rank blocking MPI-IO read/write time is 13-72 % of the
run. With them: M07 on imbalanced-io (1058 s of a 1479 s run) and example.darshan (49 s
of 117 s) match (BLOCKING-WRITE-1 high); the other 9 are jobs of 0.013-4 s blocked at
most 0.87 s per rank, graded ``info`` (disagree: too little to matter). Summary of that
run: 86 Drishti HIGH/WARN, 40 matched, 0 missed, 46 disagree (was 38 / 11 / 37).

Known Drishti formula problems, verified on the logs
----------------------------------------------------
* P09/P10: test reverses the message (above); printed per log with both numbers. P10 is
  also printed twice per job (module.py appends the message twice); counted once here.
* Random access (P11/P13): the brief's suspicion that Drishti subtracts
  ``POSIX_CONSEC_READS`` twice does **not** hold for drishti-io 0.8 (nor any stored
  version): ``handle_darshan.py`` first sets ``read_sequential = SEQ - CONSEC``, then
  ``random = reads - CONSEC - read_sequential = reads - SEQ``; on
  ``nonmpi_dxt_anonymized.darshan`` Drishti's P11 says 2269 = 7822 - 5553
  (``POSIX_READS - POSIX_SEQ_READS``), the same as iochar's RANDOM-1. The check prints
  both.
* P19 divides the slowest-minus-fastest rank time of a shared file by the file's time
  *summed over all ranks* (``POSIX_F_*_TIME`` of a shared record are sums), so the same
  per-rank imbalance is 4x more "imbalanced" on 4 ranks than on 16; the check prints
  the imbalance against the job's run time.
* Crashes: ``handle_darshan.py:660`` (MPI-IO hints ``no``: ``key`` unbound) and
  ``handle_darshan.py:711`` (empty executable name: ``split()[0]``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import iochar
from iochar.analyze import insights

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data" / "darshan"

#: Drishti's levels (drishti/includes/config.py: HIGH = 1, WARN = 2).
LEVELS = {1: "HIGH", 2: "WARN"}

#: A share at or below this is "too little to matter" (Drishti's 10 % level).
SHARE = 0.1

# -- running Drishti --------------------------------------------------------------------

# Runs in a child process: argv as the ``drishti`` command, ``module.message`` wrapped.
_DRISHTI_CHILD = r"""
import contextlib, io, json, sys, traceback
log = sys.argv[1]
sys.argv = ["drishti", "--code", "--issues", log]
found, err, where = [], None, None
try:
    import drishti.includes.module as mod
    original = mod.message
    def message(code, target, level, issue, recommendations=None, details=None):
        found.append({"code": code, "level": level, "issue": issue,
                      "details": [d.get("message", "") for d in (details or [])]})
        return original(code, target, level, issue, recommendations, details)
    mod.message = message
    from drishti.handlers.handle_darshan import handler
    with contextlib.redirect_stdout(io.StringIO()):
        handler()
except BaseException as e:
    err = "".join(traceback.format_exception_only(type(e), e)).strip()
    tb = [f for f in traceback.extract_tb(e.__traceback__) if "drishti" in f.filename]
    if tb:
        where = "/".join(tb[-1].filename.split("/")[-2:]) + ":" + str(tb[-1].lineno)
sys.__stdout__.write(json.dumps({"insights": found, "error": err, "where": where}))
"""


def drishti_available() -> str | None:
    """drishti-io's version, or None when it is not installed."""
    try:
        from importlib.metadata import version

        return version("drishti-io")
    except Exception:
        return None


def run_drishti(path: Path, timeout: float) -> dict:
    """Drishti's insights on one log: ``{"insights": [...], "error": str|None, "where"}``."""
    with tempfile.TemporaryDirectory() as tmp:  # Drishti may write exports in its cwd
        try:
            r = subprocess.run(
                [sys.executable, "-c", _DRISHTI_CHILD, str(path)],
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=tmp,
            )
        except subprocess.TimeoutExpired:
            return {"insights": [], "error": f"timeout after {timeout:g} s", "where": None}
    try:
        return json.loads(r.stdout)
    except ValueError:
        tail = (r.stderr or "").strip().splitlines()[-1:] or [f"exit {r.returncode}"]
        return {"insights": [], "error": tail[0], "where": None}


# -- running iochar ---------------------------------------------------------------------


def iochar_rules() -> tuple[list, list[str]]:
    """The default rules plus any of the rule sets not in them that import."""
    rules, sets = list(insights.RULES), ["insights.RULES"]
    for name in ("rules_ranks", "rules_system", "rules_more"):
        try:
            mod = __import__(f"iochar.analyze.insights.{name}", fromlist=["RULES"])
        except ImportError:
            continue
        have = {r.code for r in rules}
        rules += [r for r in mod.RULES if r.code not in have]
        sets.append(f"{name}.RULES")
    return rules, sets


@dataclass
class Job:
    """One log in an in-memory store, with iochar's findings."""

    store: object
    job_id: int
    found: object  # iochar.result.Table
    rules: dict

    def counters(self, names, *, per="job", module=None) -> list[dict]:
        """Sums of raw Darshan counters: one dict for the job, or one per file
        (``per="file"``) or per (file, rank) (``per="rank"``, shared records as rank -1)."""
        keys = {"job": "", "file": "file_id,", "rank": "file_id, coalesce(rank, -1),"}[per]
        cols = ", ".join(f"sum(value) FILTER (WHERE counter = '{n}')" for n in names)
        sql = (
            f"SELECT {keys} {cols} FROM module_counters WHERE job_id = $j "
            "AND ($m IS NULL OR module = $m) AND list_contains($c, counter) "
            f"GROUP BY ALL"
        )
        if not keys:
            sql = sql.replace("GROUP BY ALL", "")
        rows = self.store.sql(sql, {"j": self.job_id, "m": module, "c": list(names)}).fetchall()
        head = {"job": [], "file": ["file_id"], "rank": ["file_id", "rank"]}[per]
        return [
            {k: (0.0 if v is None else v) for k, v in zip(head + list(names), r, strict=True)}
            for r in rows
        ] or [dict.fromkeys(head + list(names), 0.0)]

    def job(self) -> dict:
        nprocs, runtime = self.store.sql(
            "SELECT nprocs, runtime_s FROM jobs WHERE job_id = $j", {"j": self.job_id}
        ).fetchall()[0]
        return {"nprocs": nprocs or 1, "runtime": runtime or 0.0}

    def findings(self, topics, codes=None) -> list:
        """iochar's findings for the job in ``topics`` (and ``codes``, when given)."""
        f = self.found
        return [
            r
            for r in f.itertuples()
            if r.job_id == self.job_id and r.topic in topics and (codes is None or r.code in codes)
        ]


def run_iochar(path: Path, rules: list) -> Job:
    store = iochar.connect(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # partial-module warnings
        store.load(path)
    job_id = store.sql("SELECT min(job_id) FROM jobs").fetchall()[0][0]
    found = insights.run(store, rules=rules)
    return Job(store, job_id, found, {r.code: r for r in rules})


def describe(job: Job, finding, keys=()) -> str:
    """``CODE severity measure=.. count=..`` with the rule's key numbers (``keys``
    first, when the finding's evidence has them)."""
    rule = job.rules.get(finding.code)
    keys = [k for k in keys if k in finding.evidence]
    keys += [k for k in ((rule.measure, rule.count) if rule else ()) if k and k not in keys]
    keys += [k for k in finding.evidence if k not in keys][: max(0, 3 - len(keys))]
    nums = " ".join(f"{k}={_num(finding.evidence.get(k))}" for k in keys)
    return f"{finding.code} {finding.severity} {nums}"


def _num(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.3g}"
    return f"{int(v)}"


def _b(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


# -- per-code checks: Drishti's numbers from the raw counters ---------------------------
# Each returns (verdict, reason) for a Drishti insight iochar did not match.

Check = Callable[[Job, dict], tuple[str, str]]


def _unmatched(job: Job, topics) -> str:
    got = [describe(job, f) for f in job.findings(topics)]
    return "; iochar: " + ", ".join(got) if got else "; iochar: no finding"


def _check_share(job: Job, ins: dict, topics) -> tuple[str, str]:
    """A share rule iochar grades only ``info`` (absolute guard) or not at all."""
    got = job.findings(topics)
    if got and all(f.severity == "info" for f in got):
        rule = job.rules[got[0].code]
        return "disagree", (
            f"below iochar's absolute guard {rule.min_count}="
            f"{_num(job.found.params[got[0].code][rule.min_count])}" + _unmatched(job, topics)
        )
    return "miss", "iochar finds no such problem" + _unmatched(job, topics)


def check_stdio(job: Job, ins: dict) -> tuple[str, str]:
    c = job.counters(
        [
            "STDIO_BYTES_READ",
            "STDIO_BYTES_WRITTEN",
            "POSIX_BYTES_READ",
            "POSIX_BYTES_WRITTEN",
            "MPIIO_BYTES_READ",
            "MPIIO_BYTES_WRITTEN",
            "DFS_BYTES_READ",
            "DFS_BYTES_WRITTEN",
        ]
    )[0]
    stdio = c["STDIO_BYTES_READ"] + c["STDIO_BYTES_WRITTEN"]
    posix = c["POSIX_BYTES_READ"] + c["POSIX_BYTES_WRITTEN"]
    mpiio = c["MPIIO_BYTES_READ"] + c["MPIIO_BYTES_WRITTEN"]
    dfs = c["DFS_BYTES_READ"] + c["DFS_BYTES_WRITTEN"]
    total = stdio + max(posix, mpiio, dfs)
    share = stdio / total if total else 0.0
    why = (
        f"STDIO {_b(stdio)} of POSIX {_b(posix)}, MPI-IO {_b(mpiio)}, DFS {_b(dfs)}: "
        f"{share:.2%} of the job's bytes"
    )
    if share <= SHARE or stdio <= 1048576:
        return "disagree", why + _unmatched(job, ("stdio-heavy",))
    return "miss", why + _unmatched(job, ("stdio-heavy",))


# iochar topics whose recommendation is MPI-IO (collective buffering, read once and
# broadcast, a high-performance interface instead of STDIO): M01's advice.
_MPIIO_FIXES = ("small-io", "random-access", "stdio-heavy", "redundant-reads")


def check_no_mpiio(job: Job, ins: dict) -> tuple[str, str]:
    """M01 is advice: MPI-IO helps a multi-process job whose requests are small or random
    or go through STDIO (Drishti's own P05/P06, P11/P13 and S01 conditions)."""
    j = job.job()
    bins = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M")
    names = [f"POSIX_{k}" for k in ("READS", "WRITES", "SEQ_READS", "SEQ_WRITES")]
    names += [f"POSIX_SIZE_{op}_{b}" for op in ("READ", "WRITE") for b in bins]
    names += [f"{m}_BYTES_{d}" for m in ("POSIX", "STDIO", "DFS") for d in ("READ", "WRITTEN")]
    c = job.counters(names)[0]
    posix = c["POSIX_BYTES_READ"] + c["POSIX_BYTES_WRITTEN"]
    stdio = c["STDIO_BYTES_READ"] + c["STDIO_BYTES_WRITTEN"]
    dfs = c["DFS_BYTES_READ"] + c["DFS_BYTES_WRITTEN"]
    nums = f"{j['nprocs']} process(es); POSIX {_b(posix)}, STDIO {_b(stdio)}, DFS {_b(dfs)}"
    if j["nprocs"] <= 1:
        return "disagree", nums + ": one process, no collective I/O to gain"
    if posix + stdio + dfs == 0:
        return "disagree", nums + ": no data moved"
    if dfs > 0:
        return "disagree", nums + ": data through DFS, DAOS's native file API"
    problems = []
    for op, kind in (("READ", "reads"), ("WRITE", "writes")):
        n = c[f"POSIX_{op}S"]
        small = sum(c[f"POSIX_SIZE_{op}_{b}"] for b in bins)
        rand = n - c[f"POSIX_SEQ_{op}S"]
        if n and small / n > 0.1 and small > 1000:
            problems.append(f"{small:.0f} small {kind}")
        if n and rand / n > 0.2 and rand > 1000:
            problems.append(f"{rand:.0f} random {kind}")
    if stdio / (stdio + posix) > 0.1:
        problems.append(f"STDIO {stdio / (stdio + posix):.0%} of bytes")
    fired = [f for f in job.findings(_MPIIO_FIXES) if f.severity != "info"]
    if fired:
        return "match", "advice via " + ", ".join(describe(job, f) for f in fired)
    if not problems:
        n = c["POSIX_READS"] + c["POSIX_WRITES"]
        return "disagree", (
            f"{nums}; of {n:.0f} POSIX requests none of the problems MPI-IO addresses "
            "holds by Drishti's own thresholds (small > 10% and > 1000, random > 20% and "
            "> 1000, STDIO > 10%)"
        )
    return "miss", nums + "; " + ", ".join(problems) + _unmatched(job, ("small-io",))


def _traffic(job: Job, op: str) -> tuple[str, str]:
    byte, top = (
        ("POSIX_BYTES_READ", "POSIX_MAX_BYTE_READ")
        if op == "read"
        else ("POSIX_BYTES_WRITTEN", "POSIX_MAX_BYTE_WRITTEN")
    )
    files = job.counters([byte, top], per="file", module="POSIX")
    total = sum(f[byte] for f in files)
    # per file: max over its records of the highest byte + 1
    ext = job.store.sql(
        "SELECT file_id, max(value) + 1 FROM module_counters WHERE job_id = $j "
        "AND module = 'POSIX' AND counter = $c GROUP BY file_id",
        {"j": job.job_id, "c": top},
    ).fetchall()
    extent = dict(ext)
    twice = sum(max(0.0, f[byte] - extent.get(f["file_id"], 0.0)) for f in files)
    highest = max(extent.values(), default=0.0) - 1
    drishti = highest > total
    verb = "read" if op == "read" else "written"
    why = (
        f"Drishti tests job-wide max offset {highest:.0f} > {total:.0f} B {verb} "
        f"({'true' if drishti else 'false'}; true means sparse {op}s, the reverse of its "
        f"message); bytes {verb} beyond each file's extent: {twice:.0f} B "
        f"({twice / total:.2%} of {_b(total)})"
        if total
        else f"Drishti tests max offset {highest:.0f} > 0 B {verb}: nothing {verb}"
    )
    share = twice / total if total else 0.0
    return ("disagree" if share <= SHARE or twice <= 1048576 else "miss"), why


def check_redundant_read(job: Job, ins: dict) -> tuple[str, str]:
    verdict, why = _traffic(job, "read")
    return verdict, why + _unmatched(job, ("redundant-reads",))


def check_redundant_write(job: Job, ins: dict) -> tuple[str, str]:
    verdict, why = _traffic(job, "write")
    return verdict, why + "; no iochar rule for redundant writes"


def check_random(job: Job, ins: dict) -> tuple[str, str]:
    c = job.counters(["POSIX_READS", "POSIX_SEQ_READS", "POSIX_CONSEC_READS"], module="POSIX")
    c = c[0]
    verdict, why = _check_share(job, ins, ("random-access",))
    return verdict, (
        f"reads {_num(c['POSIX_READS'])} - SEQ {_num(c['POSIX_SEQ_READS'])} = "
        f"{_num(c['POSIX_READS'] - c['POSIX_SEQ_READS'])} random; " + why
    )


def _mpiio_time(job: Job, op: str) -> tuple[str, str]:
    """M06/M07 that iochar's BLOCKING rule did not grade warn or high: Drishti's
    question answered from the raw MPI-IO counters, and iochar's finding if any."""
    j = job.job()
    kind = "READ" if op == "read" else "WRITE"
    names = [f"MPIIO_INDEP_{kind}S", f"MPIIO_COLL_{kind}S", f"MPIIO_SPLIT_{kind}S"]
    names += [f"MPIIO_NB_{kind}S", f"MPIIO_F_{kind}_TIME"]
    c = job.counters(names, module="MPI-IO")[0]
    calls = sum(c[n] for n in names[:4])
    per_rank = c[f"MPIIO_F_{kind}_TIME"] / j["nprocs"]
    share = per_rank / j["runtime"] if j["runtime"] else 0.0
    nums = (
        f"{_num(calls)} MPI-IO {op}s, {_num(c[f'MPIIO_NB_{kind}S'])} non-blocking; "
        f"mean per-rank {op} time {per_rank:.3g} s of the {j['runtime']:.3g} s run "
        f"({share:.1%})"
    )
    code = f"BLOCKING-{op.upper()}-1"
    got = job.findings(("blocking-io",), (code,))
    tail = "; iochar: " + (", ".join(describe(job, f) for f in got) or f"{code} no finding")
    if calls == 0:
        return "disagree", nums + f": no MPI-IO {op}s to make non-blocking" + tail
    if share <= SHARE:
        return "disagree", nums + ": async I/O can hide at most that" + tail
    if got and all(f.severity == "info" for f in got):
        guard = job.found.params[code]["blocking_seconds_absolute"]
        return "disagree", (
            nums + f": at most {_num(guard)} s per rank to hide, iochar's absolute guard "
            "blocking_seconds_absolute" + tail
        )
    return "miss", nums + tail


def check_nb_read(job: Job, ins: dict) -> tuple[str, str]:
    return _mpiio_time(job, "read")


def check_nb_write(job: Job, ins: dict) -> tuple[str, str]:
    return _mpiio_time(job, "write")


# Drishti's imbalance codes by what they measure: bytes between ranks (P18, P21, P22:
# iochar's imbalance and rank-0 rules) or time between ranks (P19: imbalance, straggler).
# "skew" (MPI-IO time far above POSIX time) is another question, matched by no code.
_BYTES = ("imbalance", "rank0-bottleneck")
_TIME = ("imbalance", "straggler")
_IMBALANCE = (*_BYTES, "straggler")


def _rank_time_gap(job: Job, shared: bool) -> float:
    """Largest slowest-minus-fastest rank I/O time over the job's POSIX files, seconds.

    ``shared``: files Darshan reduced over all ranks (rank -1 records carry
    POSIX_F_SLOWEST_RANK_TIME / POSIX_F_FASTEST_RANK_TIME, Drishti P18/P19); otherwise
    files with several per-rank records (Drishti P21/P22): max - min over their ranks of
    POSIX_F_READ_TIME + POSIX_F_WRITE_TIME + POSIX_F_META_TIME.
    """
    if shared:
        sql = (
            "SELECT coalesce(max(s - f), 0) FROM (SELECT file_id, "
            "max(value) FILTER (WHERE counter = 'POSIX_F_SLOWEST_RANK_TIME') AS s, "
            "max(value) FILTER (WHERE counter = 'POSIX_F_FASTEST_RANK_TIME') AS f "
            "FROM module_counters WHERE job_id = $j AND module = 'POSIX' AND rank IS NULL "
            "GROUP BY file_id)"
        )
    else:
        sql = (
            "WITH t AS (SELECT file_id, rank, sum(value) AS s FROM module_counters "
            "WHERE job_id = $j AND module = 'POSIX' AND rank IS NOT NULL AND counter IN "
            "('POSIX_F_READ_TIME', 'POSIX_F_WRITE_TIME', 'POSIX_F_META_TIME') "
            "GROUP BY file_id, rank) "
            "SELECT coalesce(max(g), 0) FROM (SELECT max(s) - min(s) AS g FROM t "
            "GROUP BY file_id HAVING count(*) > 1)"
        )
    return job.store.sql(sql, {"j": job.job_id}).fetchall()[0][0] or 0.0


def check_imbalance(job: Job, ins: dict) -> tuple[str, str]:
    j = job.job()
    shared = ins["code"] in ("P18", "P19")
    gap = _rank_time_gap(job, shared)
    share = gap / j["runtime"] if j["runtime"] else 0.0
    nums = (
        f"slowest - fastest rank I/O time on a {'shared' if shared else 'per-rank'} file "
        f"{gap:.3g} s of the {j['runtime']:.3g} s run ({share:.1%}), {j['nprocs']} ranks"
    )
    topics = DRISHTI[ins["code"]].topics
    has_rule = any(r.topic in topics for r in job.rules.values())
    tail = _unmatched(job, topics) if has_rule else "; no iochar imbalance rule loaded"
    if share <= SHARE:
        return "disagree", nums + ": rebalancing saves at most that" + tail
    return "miss", nums + tail


@dataclass(frozen=True)
class Map:
    """One Drishti code: what it says, iochar's topics for it, and its check
    (``codes``: only these iochar rules of the topics match, when given)."""

    says: str
    topics: tuple[str, ...]
    check: Check | None
    keys: tuple[str, ...] = ()
    codes: tuple[str, ...] | None = None


def _share(topics):
    return lambda job, ins: _check_share(job, ins, topics)


#: Drishti HIGH/WARN codes (drishti/includes/config.py) mapped to iochar topics by what
#: they test. INFO/OK codes (P01-P04, P12, P14, M04, M05, M08, M10) are not compared.
DRISHTI: dict[str, Map] = {
    "S01": Map("STDIO share of bytes > 10 %", ("stdio-heavy",), check_stdio),
    "M01": Map("no MPI-IO module in the log", (), check_no_mpiio),
    "P05": Map(
        "small reads > 10 % and > 1000",
        ("small-io",),
        _share(("small-io",)),
        ("small_read_share", "small_reads"),
    ),
    "P06": Map(
        "small writes > 10 % and > 1000",
        ("small-io",),
        _share(("small-io",)),
        ("small_write_share", "small_writes"),
    ),
    "P07": Map(
        "memory-misaligned > 10 %",
        ("misaligned",),
        _share(("misaligned",)),
        ("mem_misaligned_share", "mem_not_aligned"),
    ),
    "P08": Map(
        "file-misaligned > 10 %",
        ("misaligned",),
        _share(("misaligned",)),
        ("file_misaligned_share", "file_not_aligned"),
    ),
    "P09": Map("max read offset > bytes read", ("redundant-reads",), check_redundant_read),
    "P10": Map("max write offset > bytes written", (), check_redundant_write),
    "P11": Map(
        "random reads > 20 % and > 1000",
        ("random-access",),
        check_random,
        ("random_read_share", "random_reads"),
    ),
    "P13": Map(
        "random writes > 20 % and > 1000",
        ("random-access",),
        check_random,
        ("random_write_share", "random_writes"),
    ),
    "P15": Map(
        "small reads on shared files",
        ("small-io",),
        _share(("small-io",)),
        ("small_read_share", "small_reads"),
    ),
    "P16": Map(
        "small writes on shared files",
        ("small-io",),
        _share(("small-io",)),
        ("small_write_share", "small_writes"),
    ),
    "P17": Map(
        "a record with meta time > 30 s",
        ("metadata-heavy",),
        _share(("metadata-heavy",)),
        ("max_record_meta_s", "records_over"),
    ),
    "P18": Map("shared file: slowest/fastest rank bytes", _BYTES, check_imbalance),
    "P19": Map("shared file: slowest/fastest rank time", _TIME, check_imbalance),
    "P21": Map("per-rank files: write bytes max/min", _BYTES, check_imbalance),
    "P22": Map("per-rank files: read bytes max/min", _BYTES, check_imbalance),
    "M02": Map("no collective reads", ("no-collective", "shared-file-independent"), None),
    "M03": Map("no collective writes", ("no-collective", "shared-file-independent"), None),
    "M06": Map(
        "no non-blocking MPI-IO reads",
        ("blocking-io",),
        check_nb_read,
        ("blocking_read_share", "blocking_read_s_per_rank"),
        ("BLOCKING-READ-1",),
    ),
    "M07": Map(
        "no non-blocking MPI-IO writes",
        ("blocking-io",),
        check_nb_write,
        ("blocking_write_share", "blocking_write_s_per_rank"),
        ("BLOCKING-WRITE-1",),
    ),
    "M09": Map("more aggregators than nodes (sacct)", (), None),
}


def compare(job: Job, ins: dict) -> tuple[str, str]:
    """(verdict, text) for one Drishti HIGH/WARN insight."""
    m = DRISHTI.get(ins["code"])
    if m is None:
        return "miss", "code not in the mapping table"
    fired = [f for f in job.findings(m.topics, m.codes) if f.severity in ("warn", "high")]
    if fired:
        return "match", ", ".join(describe(job, f, m.keys) for f in fired)
    if m.check is None:
        return _check_share(job, ins, m.topics)
    return m.check(job, ins)


# -- logs -------------------------------------------------------------------------------


def logs(extra: list[Path], wheel: bool) -> list[Path]:
    """Every reachable Darshan log, each byte-identical file once (repo copy first)."""
    paths = sorted(DATA.rglob("*.darshan"))
    if wheel:
        try:
            import darshan

            root = Path(darshan.__file__).parent
            for sub in ("examples/example_logs", "tests/input"):
                paths += sorted((root / sub).glob("*.darshan"))
        except ImportError:
            pass
    paths += extra
    seen: dict[str, Path] = {}
    for p in paths:
        seen.setdefault(hashlib.sha256(p.read_bytes()).hexdigest(), p)
    return list(seen.values())


def _label(p: Path) -> str:
    try:
        return str(p.relative_to(REPO))
    except ValueError:
        parts = p.parts
        return "wheel:" + "/".join(parts[parts.index("darshan") + 1 :])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=300.0, help="Drishti seconds per log")
    ap.add_argument("--log", type=Path, action="append", default=[], help="another log")
    ap.add_argument("--no-wheel", action="store_true", help="skip PyDarshan's wheel logs")
    a = ap.parse_args(argv)
    version = drishti_available()
    if version is None:
        print("drishti-io is not installed (pip install drishti-io): nothing to compare")
        return 2
    rules, sets = iochar_rules()
    print(f"drishti-io {version}; iochar {iochar.__version__} rules: {' + '.join(sets)}")
    summary = []
    for path in logs(a.log, not a.no_wheel):
        label = _label(path)
        d = run_drishti(path, a.timeout)
        crash = d["error"] and f"{d['error']} at {d['where']}"
        try:
            job, ierr = run_iochar(path, rules), None
        except Exception as e:  # counted, the goal is none
            job, ierr = None, f"{type(e).__name__}: {e}"
        print(f"\n== {label}")
        if crash:
            print(f"   Drishti CRASH: {crash}")
        if ierr:
            print(f"   iochar CRASH: {ierr}")
        counts = {"match": 0, "miss": 0, "disagree": 0}
        seen = set()
        for ins in d["insights"]:
            if ins["level"] not in LEVELS or (ins["code"], ins["issue"]) in seen:
                continue
            seen.add((ins["code"], ins["issue"]))
            note = " (before crash)" if crash else ""
            print(f"   [{ins['code']} {LEVELS[ins['level']]}]{note} {ins['issue']}")
            if job is None:
                verdict, text = "miss", "iochar crashed"
            else:
                verdict, text = compare(job, ins)
            counts[verdict] += 1
            print(f"      -> {verdict.upper()}: {text}")
        if not seen:
            print("   (no Drishti HIGH/WARN insight)")
        summary.append((label, len(seen), counts, bool(crash), bool(ierr)))
        if job is not None:
            job.store.close()
    print("\n| log | Drishti HIGH/WARN | matched | missed | disagree | Drishti crash |", end="")
    print(" iochar crash |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    tot = [0, 0, 0, 0, 0, 0]
    for label, n, c, dc, ic in summary:
        row = [n, c["match"], c["miss"], c["disagree"], int(dc), int(ic)]
        tot = [x + y for x, y in zip(tot, row, strict=True)]
        print(f"| {Path(label).name} | " + " | ".join(map(str, row)) + " |")
    print(f"| **all {len(summary)} logs** | " + " | ".join(map(str, tot)) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
