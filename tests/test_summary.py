"""``iochar summary`` (issue 19, item 3) on real Darshan logs, a real strace capture and a
database, as the command runs (``iochar.cli.main``, as tests/test_cli.py does).

What the summary says is checked against the real tools: Darshan logs against
PyDarshan's reading of the same counters (``tests/load/_pydarshan_truth.py`` in a fresh
process, ``darshan.DarshanReport`` for the job header), the strace capture against what
its program does (data/strace/SOURCE.md: 40 iterations of 300 ms, 5 checkpoint files of
3 x 16 KiB, a scratch file written and read back 64 KiB per iteration).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from iochar.cli import main
from iochar.report import external_urls
from iochar.report.browser import LEAK_PATTERN, chromium

DATA = Path(__file__).resolve().parents[1] / "data"
IMBALANCED = DATA / "darshan" / "darshan-logs" / "imbalanced_io" / "imbalanced-io.darshan"
EMPTY = DATA / "darshan" / "darshan-logs" / "empty_log" / "empty_log.darshan"
EXAMPLE = DATA / "darshan" / "example.darshan"
DXT = DATA / "darshan" / "dxt.darshan"
STRACE = DATA / "strace" / "ckpt_tt.strace"
TRUTH = Path(__file__).resolve().parent / "load" / "_pydarshan_truth.py"

#: A path and a program name that rich would read as markup and a browser as HTML, with
#: an escape sequence a terminal would obey.
HOSTILE_PATH = "/x/[/bold]<script>alert(1)</script>\x1b[31mred"
HOSTILE_APP = "[red]app<b>"


def summary(capsys, monkeypatch, *args: str, columns: int = 100) -> tuple[int, str, str]:
    monkeypatch.setenv("COLUMNS", str(columns))
    rc = main(["summary", *map(str, args)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def summary_json(capsys, monkeypatch, *args: str) -> tuple[int, dict]:
    rc, out, _ = summary(capsys, monkeypatch, *args, "--json")

    def no_nan(token: str):
        raise AssertionError(f"JSON holds {token}")

    return rc, json.loads(out, parse_constant=no_nan)


def rows(job: dict, interface: str, op: str) -> dict:
    (row,) = [r for r in job["interfaces"] if r["interface"] == interface and r["op"] == op]
    return row


def pydarshan(log: Path) -> dict:
    """Records of every module as PyDarshan's backend reads them (fresh process)."""
    pytest.importorskip("darshan")
    r = subprocess.run(
        [sys.executable, str(TRUTH), str(log)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def counter_sum(truth: dict, module: str, counter: str) -> float:
    return sum(rec[2].get(counter) or 0 for rec in truth["records"].get(module, []))


def leaks(text: str) -> list[str]:
    return re.findall(LEAK_PATTERN, text)


def test_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["summary", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "usage: iochar summary" in out and "--html" in out and "--json" in out


def test_darshan_log_agrees_with_pydarshan(capsys, monkeypatch):
    """imbalanced-io.darshan: every number of the interface table and the access sizes is
    PyDarshan's sum of the log's counters; the job header is Darshan's."""
    darshan = pytest.importorskip("darshan")
    rc, d = summary_json(capsys, monkeypatch, IMBALANCED)
    assert rc == 0 and len(d["jobs"]) == 1
    job = d["jobs"][0]
    truth = pydarshan(IMBALANCED)
    meta = darshan.DarshanReport(str(IMBALANCED), read_all=False).metadata["job"]
    assert job["facts"]["nprocs"] == meta["nprocs"] == 496
    assert job["facts"]["runtime_s"] == pytest.approx(meta["run_time"], abs=1)
    assert job["facts"]["start"].startswith("2021-04-14T21:29:55")
    for module, prefix in (("POSIX", "POSIX"), ("MPI-IO", "MPIIO"), ("STDIO", "STDIO")):
        for op, what in (("read", "READ"), ("write", "WRITTEN")):
            want = counter_sum(truth, module, f"{prefix}_BYTES_{what}")
            assert rows(job, module, op)["bytes"] == want, (module, op)
        for op, what in (("read", "READ"), ("write", "WRITE"), ("meta", "META")):
            want = counter_sum(truth, module, f"{prefix}_F_{what}_TIME")
            assert rows(job, module, op)["time_s"] == pytest.approx(want, rel=1e-9)
    assert rows(job, "POSIX", "read")["calls"] == counter_sum(truth, "POSIX", "POSIX_READS")
    # share of process time: summed time over nprocs x run time
    r = rows(job, "MPI-IO", "write")
    assert r["process_time_pct"] == pytest.approx(
        100 * r["time_s"] / (496 * job["facts"]["runtime_s"])
    )
    # access sizes on POSIX, Darshan's bins
    assert job["sizes"]["layer"] == "POSIX"
    bins = {b["bin"]: b for b in job["sizes"]["bins"]}
    assert bins["100K-1M"]["reads"] == counter_sum(truth, "POSIX", "POSIX_SIZE_READ_100K_1M")
    assert bins["100K-1M"]["writes"] == counter_sum(truth, "POSIX", "POSIX_SIZE_WRITE_100K_1M")
    total_reads = sum(b["reads"] for b in job["sizes"]["bins"])
    assert bins["100K-1M"]["reads_pct"] == pytest.approx(
        100 * bins["100K-1M"]["reads"] / total_reads
    )
    # Darshan flagged POSIX incomplete; no DXT, so no cycles to measure
    assert truth["partial"] == ["POSIX"] and "POSIX module incomplete" in job["notes"][0]
    assert not job["cycles"]["found"]
    assert job["cycles"]["text"].startswith("no cycles: the job has no per-operation records")
    # insights: the engine's findings for this job, most severe first
    sev = [f["severity"] for f in job["insights"]]
    assert sev == sorted(sev, key=("high", "warn", "info").index)
    assert {"SMALL-IO-1", "MISALIGNED-1"} <= {f["code"] for f in job["insights"]}
    assert job["checked"] + job["not_checked"] > 0
    # the file that moved most: the shared file, 49.3 GiB read and written (POSIX counters)
    top = job["top_files"][0]
    assert top["path"] == "/lus/theta-fs0/3981085427"
    assert top["class"] in ("required", "checkpoint", "staging", "other")


def test_strace_capture(capsys, monkeypatch):
    """ckpt_tt.strace: the program's files in their classes, its 300 ms iteration as
    the cycle, and the facts strace does not record said as missing."""
    rc, d = summary_json(capsys, monkeypatch, STRACE)
    assert rc == 0
    job = d["jobs"][0]
    assert job["facts"]["program"] == "ckpt_app"
    assert job["facts"]["user"] is None and job["facts"]["start"] is None
    classes = {c["class"]: c for c in job["classes"]}
    assert classes["checkpoint"]["files"] == 5
    assert classes["checkpoint"]["bytes"] == 5 * 3 * 16384
    assert classes["staging"]["files"] == 1
    top = job["top_files"][0]
    assert top["path"].endswith("/scratch.dat") and top["class"] == "staging"
    assert top["bytes_read"] == top["bytes_written"] == 40 * 65536
    assert rows(job, "strace", "write")["calls"] >= 40 * 2 + 5 * 3
    cyc = job["cycles"]
    assert cyc["found"] and cyc["confidence"] >= 0.99
    assert 0.29 <= cyc["period_s"] <= 0.33  # 300 ms of computation plus the iteration's I/O
    assert 38 <= cyc["n_cycles"] <= 42  # 40 iterations
    rc, out, _ = summary(capsys, monkeypatch, STRACE)
    assert rc == 0
    assert "user       not recorded in the input" in out
    assert "start      no date in the input" in out
    assert "I/O repeats every 30" in out
    assert leaks(out) == []


def test_trace_without_durations_says_time_is_unknown(capsys, monkeypatch):
    """ckpt_plain.strace was captured with -tt but not -T (data/strace/capture.sh): no
    call has a duration, so the I/O time is unknown -- not 0 ms, not 0% of the run. The
    same program captured with -T (ckpt_tt.strace) keeps its measured times."""
    rc, d = summary_json(capsys, monkeypatch, DATA / "strace" / "ckpt_plain.strace")
    assert rc == 0
    (job,) = d["jobs"]
    for op in ("read", "write", "meta"):
        row = rows(job, "strace", op)
        assert row["calls"] > 0
        assert row["time_s"] is None and row["process_time_pct"] is None
    assert job["totals"]["slowest_io_s"] is None
    assert job["totals"]["meta_time_pct"] is None
    rc, out, _ = summary(capsys, monkeypatch, DATA / "strace" / "ckpt_plain.strace")
    text = " ".join(out.split())
    assert "no I/O time: the trace holds no call durations (strace records them with -T)" in text
    assert "0 ms" not in text and "0.00%" not in text

    rc, d = summary_json(capsys, monkeypatch, STRACE)
    (job,) = d["jobs"]
    assert all(rows(job, "strace", op)["time_s"] > 0 for op in ("read", "write", "meta"))
    assert job["totals"]["slowest_io_s"] > 0


def test_standard_streams_left_out_of_the_totals_are_said(capsys, monkeypatch):
    """example.darshan's STDIO records include <STDOUT> and <STDERR>: the interface table
    counts their bytes, the one-layer totals leave them out (iochar.analyze.jobs), and the
    totals sentence says how much they wrote -- the STDIO_BYTES_WRITTEN of those records
    as PyDarshan reads them."""
    truth = pydarshan(EXAMPLE)
    names = truth["names"]
    std = sum(
        rec[2]["STDIO_BYTES_WRITTEN"]
        for rec in truth["records"]["STDIO"]
        if names.get(str(rec[0])) in ("<STDIN>", "<STDOUT>", "<STDERR>")
    )
    assert std > 0
    rc, d = summary_json(capsys, monkeypatch, EXAMPLE)
    (job,) = d["jobs"]
    assert job["totals"]["std_bytes_written"] == std
    assert job["totals"]["std_bytes_read"] == 0
    stdio = rows(job, "STDIO", "write")["bytes"]
    assert stdio == counter_sum(truth, "STDIO", "STDIO_BYTES_WRITTEN")
    rc, out, _ = summary(capsys, monkeypatch, EXAMPLE)
    text = " ".join(out.split())
    assert "the standard streams (<STDIN>, <STDOUT>, <STDERR>) are left out: they wrote" in text
    # a log whose streams moved nothing says nothing of them
    rc, out, _ = summary(capsys, monkeypatch, EMPTY)
    assert "standard streams" not in out


@pytest.mark.parametrize("columns", [100, 60])
def test_terminal_fits_the_console(capsys, monkeypatch, columns):
    """Long paths (dxt.darshan) and long findings stay within the console's width."""
    rc, out, _ = summary(capsys, monkeypatch, DXT, STRACE, columns=columns)
    assert rc == 0
    lines = out.splitlines()
    assert max(map(len, lines)) <= columns, [ln for ln in lines if len(ln) > columns][:3]
    assert "Top 10 files by bytes moved" in out and "\u2716 high" in out
    assert "the set: 2 jobs" in out
    assert leaks(out) == []


def test_several_inputs_each_job_then_the_set(capsys, monkeypatch, tmp_path):
    """A Darshan log, a strace capture and a bad CSV: each job, then the set; the bad
    input is named and the exit status is 1."""
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"op,t_start\nwrite,x\n")
    rc, d = summary_json(capsys, monkeypatch, EXAMPLE, STRACE, bad)
    assert rc == 1
    status = [i["status"] for i in d["inputs"]]
    assert status == ["loaded", "loaded", "failed"]
    assert "expected column 't_start' to be double" in d["inputs"][2]["error"]
    assert [j["facts"]["program"] for j in d["jobs"]] == ["vpicio_uni", "ckpt_app"]
    tot = d["set"]["totals"]
    assert tot["jobs"] == 2 and tot["nprocs"] == 2048 + 1
    assert tot["bytes_written"] == sum(j["totals"]["bytes_written"] for j in d["jobs"])
    assert [r["job_id"] for r in d["set"]["jobs"]] == [j["job_id"] for j in d["jobs"]]
    assert sum(tot["findings"].values()) == sum(len(j["insights"]) for j in d["jobs"])

    rc, out, _ = summary(capsys, monkeypatch, EXAMPLE, STRACE, bad)
    assert rc == 1
    assert "not loaded:" in out and "bad.csv" in out
    assert out.index("job 0") < out.index("job 1") < out.index("the set: 2 jobs")
    set_part = out[out.index("the set: 2 jobs") :]
    assert "vpicio_uni" in set_part and "ckpt_app" in set_part


def test_json_keys(capsys, monkeypatch):
    rc, d = summary_json(capsys, monkeypatch, EXAMPLE)
    assert rc == 0
    assert set(d) == {"inputs", "jobs", "set"}
    job = d["jobs"][0]
    assert set(job) == {
        "job_id", "facts", "notes", "interfaces", "totals", "classes", "top_files", "sizes",
        "cycles", "system", "insights", "not_checked", "checked",
    }  # fmt: skip
    assert {"program", "command", "user", "nprocs", "nnodes", "start", "end", "runtime_s"} <= set(
        job["facts"]
    )
    assert set(job["interfaces"][0]) == {
        "interface", "op", "bytes", "calls", "time_s", "process_time_pct"
    }  # fmt: skip
    assert set(job["insights"][0]) == {
        "severity", "code", "topic", "title", "evidence", "recommendation"
    }  # fmt: skip
    assert {"found", "text", "period_s", "confidence", "n_cycles"} <= set(job["cycles"])
    assert set(d["set"]) == {"totals", "jobs"}


def test_the_system_during_the_job(capsys, monkeypatch):
    """Issue 20 item 1 in the summary: a strace job with the disk's counters of the same
    minutes (data/insights: dd loaded the disk during `collide`) gets the load of its
    disk; the numbers are job_context's, and a log without counters says why."""
    import iochar
    from iochar.analyze import context

    paths = [DATA / "insights" / "collide.strace", DATA / "insights" / "collide.diskstats"]
    rc, d = summary_json(capsys, monkeypatch, *paths)
    assert rc == 0
    (job,) = d["jobs"]
    with iochar.connect(":memory:") as db:
        for p in paths:
            db.load(p)
        (jid,) = db.sql("SELECT job_id FROM jobs").fetchall()[0]
        want = context.summary_facts(context.job_context(db, jid))
    sys_ = job["system"]
    assert sys_["status"] == "covered" and sys_["busiest_target"] == want["busiest_target"]
    assert sys_["peak_share"] == pytest.approx(want["peak_share"])
    assert f"{100 * want['peak_share']:.1f}% of its observed peak" in sys_["text"]
    rc, d = summary_json(capsys, monkeypatch, EXAMPLE)
    text = d["jobs"][0]["system"]["text"]
    assert text.startswith("Not known: ") and "holds no device or server counters" in text


def test_empty_log_is_said_plainly(capsys, monkeypatch):
    """A Darshan log of a job that did no I/O: every part says so in words."""
    rc, out, _ = summary(capsys, monkeypatch, EMPTY)
    assert rc == 0
    assert "No I/O recorded for this job." in out
    assert "No reads or writes with a size recorded." in out
    assert "no cycles: the job has no per-operation records" in out
    assert "No finding" in out
    assert leaks(out) == []


@pytest.fixture
def hostile(tmp_path):
    src = tmp_path / "hostile.csv"
    src.write_text(
        "op,t_start,t_end,size,offset,path,job\n"
        f'write,0.5,0.6,4096,0,"{HOSTILE_PATH}",{HOSTILE_APP}\n'
        f"read,0.7,0.8,10,0,/b,{HOSTILE_APP}\n",
        encoding="utf-8",
    )
    return src


def test_names_from_the_data_print_literally(capsys, monkeypatch, hostile, tmp_path):
    """rich markup in a path or program is printed as written, an escape sequence is
    not passed to the terminal, and the page escapes both and fetches nothing."""
    page = tmp_path / "page.html"
    rc, out, _ = summary(capsys, monkeypatch, hostile, "--html", page)
    assert rc == 0
    assert "/x/[/bold]<script>alert(1)</script>\ufffd[31mred" in out
    assert HOSTILE_APP in out and "\x1b" not in out
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text and "\x1b" not in text
    assert "/x/[/bold]&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "[red]app&lt;b&gt;" in text
    assert external_urls(text) == []
    assert text.count("<h1>") == 1


@pytest.mark.skipif(chromium() is None, reason="Chromium is not installed")
def test_page_reads_cleanly_in_a_browser(capsys, monkeypatch, hostile, tmp_path):
    """The page of a Darshan log, a strace capture and hostile names, opened offline in
    headless Chromium: one H1, no horizontal scroll, no NaN/None, no request out."""
    from iochar.report.browser import open_page

    page = tmp_path / "page.html"
    rc, _, _ = summary(capsys, monkeypatch, IMBALANCED, STRACE, hostile, "--html", page)
    assert rc == 0
    r = open_page(page, screenshot=tmp_path / "page.png")
    assert len(r.h1) == 1 and r.h1[0] == "iochar summary"
    assert r.overflow_px == 0, (r.scroll_width, r.inner_width)
    assert r.leaks == [] and r.console_errors == [] and r.requests_out == []
    assert "/x/[/bold]<script>alert(1)</script>" in r.text
    assert "The set" in r.text and "Job 2: [red]app<b>" in r.text


def test_database_input(capsys, monkeypatch, tmp_path):
    """A database (loaded by iochar load, or by summary --db) is summarised as the logs
    were; a database is not mixed with logs."""
    db = tmp_path / "jobs.duckdb"
    assert main(["load", str(EXAMPLE), str(STRACE), "--db", str(db)]) == 0
    capsys.readouterr()
    rc, from_db = summary_json(capsys, monkeypatch, db)
    assert rc == 0
    rc, from_logs = summary_json(capsys, monkeypatch, EXAMPLE, STRACE)
    assert rc == 0
    assert from_db["inputs"][0]["status"] == "database"
    for a, b in zip(from_db["jobs"], from_logs["jobs"], strict=True):
        for key in ("interfaces", "totals", "classes", "sizes", "insights"):
            assert a[key] == b[key], key
        assert a["cycles"]["text"] == b["cycles"]["text"]

    # --db keeps what summary loaded; summarising that database gives the same job
    kept = tmp_path / "kept.duckdb"
    rc, first = summary_json(capsys, monkeypatch, STRACE, "--db", kept)
    assert rc == 0 and kept.exists()
    rc, again = summary_json(capsys, monkeypatch, kept)
    assert rc == 0 and again["jobs"][0]["interfaces"] == first["jobs"][0]["interfaces"]

    rc, _, err = summary(capsys, monkeypatch, db, STRACE)
    assert rc == 2 and "is a database: summarise it alone" in err


def test_trace_gives_the_numbers_of_the_log_it_came_from(capsys, monkeypatch):
    """data/trace/ior-hdf5-dxt-posix.parquet holds every DXT_POSIX segment of
    ior_hdf5_example.darshan (data/trace/SOURCE.md): summarised from its operations, its
    POSIX bytes and calls, and its access sizes in Darshan's bins, are the log's POSIX
    counters (POSIX_BYTES_*, POSIX_READS/WRITES, POSIX_SIZE_*)."""
    log = DATA / "darshan" / "ior_hdf5_example.darshan"
    trace = DATA / "trace" / "ior-hdf5-dxt-posix.parquet"
    rc, d = summary_json(capsys, monkeypatch, log, trace)
    assert rc == 0
    from_log, from_trace = d["jobs"]
    assert from_trace["facts"]["kind"] == "trace-parquet"
    for op in ("read", "write"):
        a, b = rows(from_log, "POSIX", op), rows(from_trace, "POSIX", op)
        assert (a["bytes"], a["calls"]) == (b["bytes"], b["calls"]), op
    assert from_log["sizes"]["bins"] == from_trace["sizes"]["bins"]
    assert from_trace["cycles"]["text"].startswith("no cycles: ")
