"""The strace loader on real strace output (data/strace/, see its SOURCE.md).

The fixtures trace ``data/strace/src/ckpt_app.c``, whose I/O is known: the
assertions below are facts of that program (input read once in full,
checkpoint files every 2 s, scratch re-writes at offset 0 after an lseek...).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

import iochar
from iochar import schema
from iochar.errors import InputError
from iochar.load import get_loader
from iochar.load.strace import CALL_OPS, StraceLoader

try:
    from conftest import DATA_DIR, requires_strace
except ImportError:  # properties/conftest.py can shadow the name (see test_darshan.py)
    DATA_DIR = Path(__file__).resolve().parents[2] / "data"
    requires_strace = pytest.mark.skipif(
        shutil.which("strace") is None, reason="strace is not installed"
    )

STRACE = DATA_DIR / "strace"
CKPT_TT = STRACE / "ckpt_tt.strace"
CKPT_TTT = STRACE / "ckpt_ttt.strace"
WORKERS_O = STRACE / "workers_o.strace"
WORKERS_ERR = STRACE / "workers_stderr.strace"
PLAIN = STRACE / "ckpt_plain.strace"
SAMPLES = STRACE / "strace-parser" / "samples.txt"
FIXTURES = [CKPT_TT, CKPT_TTT, WORKERS_O, WORKERS_ERR, PLAIN, SAMPLES]
WORK = "/tmp/iochar-strace"  # where capture.sh ran the program (paths -y shows)
INPUT_BYTES = 300_000  # capture.sh: head -c 300000 /dev/zero > input.dat


def parse(src, **kwargs):
    """All chunks of one parse, each table checked against the contract.

    Returns ops (with each file's path), files, jobs, the last meta, the
    chunks.
    """
    chunks = list(StraceLoader().parse(src, **kwargs))
    frames: dict[str, list[pl.DataFrame]] = {}
    for chunk in chunks:
        for table, frame in chunk.tables.items():
            checked = schema.check_frame(table, frame)
            frames.setdefault(table, []).append(pl.from_arrow(checked))
    ops = pl.concat(frames["ops"]) if "ops" in frames else pl.DataFrame()
    files = pl.concat(frames["files"]) if "files" in frames else pl.DataFrame()
    if ops.height:
        ops = ops.join(
            files.select("file_id", "path"), on="file_id", how="left", maintain_order="left"
        )
    assert len(frames["jobs"]) == 1
    return ops, files, frames["jobs"][0], chunks[-1].meta, chunks


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def errors_of(data: bytes, **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        list(StraceLoader().parse(data, **kwargs))
    return info.value


# ---------------------------------------------------------------- registry, sniffing


def test_registered_and_described():
    loader = get_loader("strace")
    assert isinstance(loader, StraceLoader)
    assert loader.kind == "strace" and ".strace" in loader.suffixes and loader.description


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_sniffs_every_fixture(path):
    assert StraceLoader().sniff(path.read_bytes()[: 64 * 1024])


def _other_formats() -> list[Path]:
    out = sorted((DATA_DIR / "trace").glob("*.csv"))
    out += sorted((DATA_DIR / "darshan").glob("*.darshan"))
    out += sorted((DATA_DIR / "iostat").glob("*.iostat"))  # iostat-tool's and ours
    out += sorted((DATA_DIR / "iostat").glob("*.json"))
    out += sorted((DATA_DIR / "iostat").glob("jc-*.out"))  # jc's iostat and iostat -x
    return out


@pytest.mark.parametrize("path", _other_formats(), ids=lambda p: p.name)
def test_does_not_claim_other_formats(path):
    assert not StraceLoader().sniff(path.read_bytes()[: 64 * 1024])


def test_does_not_claim_csv_or_garbage():
    sniff = StraceLoader().sniff
    assert not sniff(b"op,t_start,size\nwrite,0.5,4096\n")
    assert not sniff(b"")
    assert not sniff(bytes(range(256)) * 16)
    assert not sniff(b"12:00:00.000000 this is not a syscall\n")


# ---------------------------------------------------------------- the contract


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_tables_follow_the_contract(path):
    ops, files, jobs, meta, _ = parse(path)
    assert ops.height > 0
    assert set(ops["op"].unique()) <= set(schema.OPS)
    assert (ops["job_id"] == 0).all() and (files["job_id"] == 0).all()
    assert files["file_id"].to_list() == list(range(files.height))  # local ids from 0
    assert ops["file_id"].drop_nulls().is_in(files["file_id"].implode()).all()
    assert (ops["t_end"] >= ops["t_start"]).all() and (ops["t_start"] >= 0).all()
    assert "cpu_s" not in ops.columns  # strace cannot tell
    assert jobs["job_id"].to_list() == [0]
    assert meta["tool"] == "strace" and meta["io_calls"] == ops.height


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
@pytest.mark.parametrize("chunk_rows", [1, 2, 7, 64])
def test_chunked_equals_whole(path, chunk_rows):
    whole = parse(path)
    part = parse(path, chunk_rows=chunk_rows)
    assert len(part[4]) > len(whole[4])  # it really was cut into chunks
    for a, b in zip(whole[:3], part[:3], strict=True):
        assert a.equals(b)
    assert whole[3] == part[3]


# ---------------------------------------------------------------- the checkpointing program


@pytest.fixture(scope="module", params=[CKPT_TT, CKPT_TTT], ids=["tt", "ttt"])
def ckpt(request):
    return parse(request.param)


def test_required_input_is_read_once_in_full(ckpt):
    ops = ckpt[0]
    inp = ops.filter(pl.col("path") == f"{WORK}/input.dat")
    assert inp["call"].to_list() == ["newfstatat", "openat"] + ["read"] * 6 + ["close"]
    reads = inp.filter(pl.col("op") == "read")
    assert reads["size"].to_list() == [65536] * 4 + [37856, 0]
    assert reads["size"].sum() == INPUT_BYTES
    assert reads["offset"].to_list() == [0, 65536, 131072, 196608, 262144, 300000]
    assert (reads["rank"] == reads["rank"][0]).all()


def test_checkpoints_are_new_files_two_seconds_apart(ckpt):
    ops = ckpt[0]
    ck = ops.filter(pl.col("path").str.contains(r"/ckpt\.\d{3}$"))
    names = ck.filter(pl.col("op") == "open")["path"].to_list()
    assert names == [f"{WORK}/ckpt.{i:03d}" for i in range(5)]  # 12 s run, every 2 s
    for name in names:
        one = ck.filter(pl.col("path") == name)
        assert one["call"].to_list() == ["openat", "write", "write", "write", "fsync", "close"]
        writes = one.filter(pl.col("op") == "write")
        assert writes["offset"].to_list() == [0, 16384, 32768]
        assert writes["size"].to_list() == [16384] * 3
    starts = ck.filter(pl.col("op") == "open")["t_start"]
    assert (starts.diff().drop_nulls() >= 2.0).all()


def test_scratch_rewrites_restart_at_zero_after_lseek(ckpt):
    ops = ckpt[0]
    sc = ops.filter(pl.col("path") == f"{WORK}/scratch.dat")
    loop = sc.filter(pl.col("call").is_in(["lseek", "write", "readv"]))
    # 40 iterations of lseek 0, write, write, lseek 0, readv
    assert loop["call"].to_list() == ["lseek", "write", "write", "lseek", "readv"] * 40
    assert loop["offset"].to_list() == [0, 0, 32768, 0, 0] * 40
    assert loop.filter(pl.col("op") == "write")["size"].unique().to_list() == [32768]
    assert loop.filter(pl.col("call") == "readv")["size"].unique().to_list() == [65536]
    assert loop.filter(pl.col("op") == "seek")["size"].null_count() == 80
    # opened once, truncated, closed and unlinked by a relative path at the end
    assert sc["call"].to_list()[:2] == ["openat", "ftruncate"]
    assert sc["call"].to_list()[-2:] == ["close", "unlink"]
    assert sc.filter(pl.col("call").is_in(["ftruncate", "unlink"]))["op"].unique().to_list() == [
        "other"
    ]


def test_final_output_offsets(ckpt):
    ops = ckpt[0]
    out = ops.filter(pl.col("path") == f"{WORK}/output.dat")
    assert out["call"].to_list() == ["openat", "writev"] + ["pwrite64"] * 4 + [
        "fdatasync",
        "close",
    ]
    writes = out.filter(pl.col("op") == "write")
    assert writes["offset"].to_list() == [0, 64, 8256, 16448, 24640]
    assert writes["size"].to_list() == [64] + [8192] * 4
    assert out.filter(pl.col("call") == "fdatasync")["op"].to_list() == ["sync"]


def test_errors_and_non_io_calls(ckpt):
    ops, _, _, meta, _ = ckpt
    failed = ops.filter(pl.col("error").is_not_null())
    assert failed.select("call", "path", "error").rows() == [
        ("access", "/etc/ld.so.preload", "ENOENT"),
        ("access", f"{WORK}/ckpt.conf", "ENOENT"),
    ]
    assert failed["size"].null_count() == 2 and (failed["op"] == "stat").all()
    # calls on no file make no row but are counted
    assert not ops["call"].is_in(["brk", "mprotect", "set_tid_address", "exit_group"]).any()
    assert meta["non_io_calls"]["brk"] == 3 and meta["non_io_calls"]["exit_group"] == 1
    assert meta["calls"] == meta["io_calls"] + meta["non_io_calls_total"]
    assert meta["io_calls"] == ops.height
    # mmap of a file is "other"; anonymous mmap is not I/O
    maps = ops.filter(pl.col("call") == "mmap")
    assert maps.height > 0 and maps["path"].str.starts_with("/").all()
    assert meta["non_io_calls"]["mmap"] == 3


def test_durations_and_job(ckpt):
    ops, _, jobs, meta, _ = ckpt
    assert meta["durations"] and meta["fd_paths"]
    fsyncs = ops.filter(pl.col("call") == "fsync")
    assert ((fsyncs["t_end"] - fsyncs["t_start"]) > 0).all()
    job = jobs.row(0, named=True)
    assert job["app"] == "ckpt_app"
    assert job["exe"] == "./ckpt_app -i 40 -c 300 -k 2 input.dat ."
    assert job["nprocs"] == 1 and job["job_key"] == str(ops["rank"][0])
    assert 12.0 < job["runtime_s"] < 13.0  # 40 x 300 ms of compute
    assert ops["t_start"][0] == 0.0 and ops["path"][0] == f"{WORK}/ckpt_app"


def test_dates_only_with_epoch_times():
    _, _, jobs_tt, meta_tt, _ = parse(CKPT_TT)
    _, _, jobs_ttt, meta_ttt, _ = parse(CKPT_TTT)
    assert meta_tt["time_format"] == "-tt" and meta_ttt["time_format"] == "-ttt"
    assert jobs_tt["start_ts"][0] is None and jobs_tt["end_ts"][0] is None
    first = float(lines_of(CKPT_TTT)[0].split()[1])
    start, end = jobs_ttt["start_ts"][0], jobs_ttt["end_ts"][0]
    assert start == dt.datetime(1970, 1, 1) + dt.timedelta(seconds=round(first, 6))
    assert abs((end - start).total_seconds() - jobs_ttt["runtime_s"][0]) < 1e-5


def _as_tt(path: Path) -> bytes:
    """The -ttt trace rewritten with -tt times (UTC time of day)."""
    out = []
    for line in lines_of(path):
        pid_pad = re.match(rb"\d+ +", line).group(0)
        stamp = line[len(pid_pad) :].split(b" ", 1)[0]
        rest = line[len(pid_pad) + len(stamp) :]
        sec, frac = stamp.split(b".")
        tod = dt.datetime.fromtimestamp(int(sec), dt.UTC).strftime("%H:%M:%S")
        out.append(pid_pad + tod.encode() + b"." + frac + rest)
    return b"".join(out)


def test_tt_and_ttt_give_the_same_ops():
    ops_ttt = parse(CKPT_TTT)[0]
    ops_tt = parse(_as_tt(CKPT_TTT))[0]
    assert ops_tt.equals(ops_ttt)


def test_two_real_runs_do_the_same_io():
    """The -tt and the -ttt captures are separate runs of a deterministic program."""
    cols = ["op", "call", "offset", "size", "error", "path"]
    a, b = parse(CKPT_TT)[0].select(cols), parse(CKPT_TTT)[0].select(cols)
    assert a.equals(b)


def test_midnight_wrap_of_tt_times():
    src = lines_of(CKPT_TT)
    first = src[0].split()[1].decode()  # HH:MM:SS.ffffff
    h, m, s = first.split(":")
    shift = (23 * 3600 + 59 * 60 + 59) - (int(h) * 3600 + int(m) * 60 + float(s))
    out = []
    for line in src:
        pid_pad = re.match(rb"\d+ +", line).group(0)
        stamp = line[len(pid_pad) :].split(b" ", 1)[0].decode()
        hh, mm, ss = stamp.split(":")
        t = (int(hh) * 3600 + int(mm) * 60 + float(ss) + shift) % 86400
        new = f"{int(t // 3600):02d}:{int(t % 3600 // 60):02d}:{t % 60:09.6f}"
        out.append(pid_pad + new.encode() + line[len(pid_pad) + len(stamp) :])
    wrapped = b"".join(out)
    assert b" 00:00:0" in wrapped  # the trace now crosses midnight
    ops, _, jobs, _, _ = parse(wrapped)
    ref, _, ref_jobs, _, _ = parse(CKPT_TT)
    assert ops.drop("t_start", "t_end").equals(ref.drop("t_start", "t_end"))
    assert ((ops["t_start"] - ref["t_start"]).abs() < 1e-5).all()
    assert ops["t_start"].is_sorted() or (ops["t_start"].diff().drop_nulls() >= -1e-9).all()
    assert abs(jobs["runtime_s"][0] - ref_jobs["runtime_s"][0]) < 1e-5


# ---------------------------------------------------------------- several processes


@pytest.fixture(scope="module", params=[WORKERS_O, WORKERS_ERR], ids=["o", "stderr"])
def workers(request):
    return (request.param, *parse(request.param))


def test_workers_write_their_own_files(workers):
    path, ops, _, jobs, meta, _ = workers
    parent = int(jobs["job_key"][0])
    assert meta["npids"] == 4 and jobs["nprocs"][0] == 4 and parent in meta["pids"]
    writes = ops.filter(pl.col("path").str.contains("worker") & (pl.col("op") == "write"))
    per = writes.group_by("path").agg(pl.col("rank").unique(), pl.col("size").sum())
    assert per.height == 3
    ranks = set()
    for (rank,) in per["rank"].to_list():
        ranks.add(rank)
    assert len(ranks) == 3 and parent not in ranks
    assert per["size"].to_list() == [8 * 4096] * 3
    for name in ("worker.0.dat", "worker.1.dat", "worker.2.dat"):
        offs = writes.filter(pl.col("path") == f"{WORK}/{name}")["offset"].to_list()
        assert offs == list(range(0, 8 * 4096, 4096))
    # the parent's own I/O, including lines strace printed without a pid prefix
    out = ops.filter(pl.col("path") == f"{WORK}/output.dat")
    assert (out["rank"] == parent).all() and ops["rank"][0] == parent


def test_pipe_reads_are_merged_pairs(workers):
    path, ops, _, jobs, meta, _ = workers
    parent = int(jobs["job_key"][0])
    assert meta["unfinished_pairs"] > 0 and meta["unfinished_unresolved"] == 0
    reads = ops.filter(pl.col("path").str.starts_with("pipe:") & (pl.col("op") == "read"))
    assert (reads["rank"] == parent).all()
    # three 32-byte status lines, then EOF; interrupted reads have no size
    ok = reads.filter(pl.col("error").is_null())
    assert ok["size"].to_list() == [32, 32, 32, 0]
    assert reads.filter(pl.col("error").is_not_null())["size"].null_count() == (
        reads.height - ok.height
    )
    # the first read was split: start from the unfinished line, end from the resumed one
    text = path.read_text()
    unf = re.search(
        r"^(?:\[pid +\d+\] |\d+ +)?(\S+) read\(3<pipe:\[\d+\]>,  <unfinished", text, re.M
    )
    res = re.search(r"(\S+) <\.\.\. read resumed>\"worker.*= 32 <([\d.]+)>", text)
    assert unf and res
    first = reads.row(0, named=True)

    def sec(stamp):
        h, m, s = stamp.split(":")
        return int(h) * 3600 + int(m) * 60 + float(s)

    t0 = sec(re.search(r"^(?:\[pid +\d+\] |\d+ +)?(\S+)", text).group(1))
    assert first["t_start"] == pytest.approx(sec(unf.group(1)) - t0, abs=1e-6)
    assert first["t_end"] - first["t_start"] == pytest.approx(float(res.group(2)), abs=1e-6)
    assert first["size"] == 32


def test_pid_prefix_forms():
    meta_o = parse(WORKERS_O)[3]
    meta_err = parse(WORKERS_ERR)[3]
    assert meta_o["pid_prefix"] == "bare" and meta_err["pid_prefix"] == "none"
    assert b"[pid " in WORKERS_ERR.read_bytes() and b"[pid " not in WORKERS_O.read_bytes()
    # strace's own messages, one of them cutting a clone() line in two
    assert meta_err["strace_messages"] == 3 and meta_o["strace_messages"] == 0
    for frame in (parse(WORKERS_O)[0], parse(WORKERS_ERR)[0]):
        assert frame.filter(pl.col("path") == f"{WORK}/output.dat").height == 8


def test_o_and_stderr_captures_agree():
    a, b = parse(WORKERS_O)[0], parse(WORKERS_ERR)[0]
    key = ["op", "call", "offset", "size", "path"]
    one = a.filter(pl.col("path").str.contains("worker|output|input")).select(key).sort(key)
    two = b.filter(pl.col("path").str.contains("worker|output|input")).select(key).sort(key)
    assert one.equals(two)


# ---------------------------------------------------------------- without -f, -T, -y


def test_plain_trace_without_f_t_y():
    ops, _, jobs, meta, chunks = parse(PLAIN)
    assert meta["pid_prefix"] == "none" and not meta["durations"] and not meta["fd_paths"]
    assert (ops["t_end"] == ops["t_start"]).all()
    warn = " ".join(chunks[-1].warnings)
    assert "-T" in warn and "-y" in warn
    # the pid comes from set_tid_address(...) = pid
    tid = re.search(rb"set_tid_address\(.*\) += (\d+)", PLAIN.read_bytes())
    assert (ops["rank"] == int(tid.group(1))).all() and jobs["job_key"][0] == tid.group(1).decode()
    # without -y, read() on an fd gets its file from the traced openat
    reads = ops.filter((pl.col("path") == "input.dat") & (pl.col("op") == "read"))
    assert reads["size"].sum() == INPUT_BYTES
    assert reads["offset"].to_list() == [0, 65536, 131072, 196608, 262144, 300000]
    ck = ops.filter(pl.col("path").str.starts_with("./ckpt.") & (pl.col("op") == "write"))
    assert ck.height == 15 and ck["offset"].to_list() == [0, 16384, 32768] * 5
    # fds inherited from the shell (stdout) have no known file
    assert ops.filter((pl.col("call") == "write") & pl.col("file_id").is_null()).height == 1


# ---------------------------------------------------------------- syntax coverage


def test_every_strace_parser_sample_parses():
    ops, _, jobs, meta, chunks = parse(SAMPLES, strict=True)
    n = len(lines_of(SAMPLES))
    assert n == 154 and meta["lines"] == n
    assert meta["calls"] == 153 and meta["exits"] == 1  # the +++ exited line
    assert meta["io_calls"] + meta["non_io_calls_total"] == meta["calls"]
    assert meta["io_calls"] == ops.height == 106
    assert chunks[-1].skips is None  # strict mode keeps no skip log
    # every line that makes no row is a call on no file at all
    non_io = set(meta["non_io_calls"])
    assert "socket" not in non_io  # it returns an fd with its -y path: "other"
    assert non_io == {
        "arch_prctl", "brk", "clock_getres", "clone", "exit_group", "futex", "getegid",
        "geteuid", "getgid", "getpid", "getppid", "getrandom", "getresgid", "getresuid",
        "getuid", "mmap", "mprotect", "munmap", "prlimit64", "rt_sigaction", "rt_sigprocmask",
        "sched_setscheduler", "set_robust_list", "set_tid_address", "sysinfo",
        "uname",
    }  # fmt: skip
    for call, op in CALL_OPS.items():
        if call in set(ops["call"]):
            assert set(ops.filter(pl.col("call") == call)["op"]) == {op}, call
    assert set(ops.filter(~pl.col("call").is_in(list(CALL_OPS)))["op"]) == {"other"}
    failed = ops.filter(pl.col("call") == "openat")
    assert failed["error"].to_list().count("ENOENT") == 2
    assert ops.filter(pl.col("call") == "futex").height == 0


# ---------------------------------------------------------------- bad input


def test_empty_input():
    err = errors_of(b"")
    assert err.line == 1 and err.kind == "strace"


def test_binary_garbage():
    data = bytes((i * 151 + 7) % 256 for i in range(5000))
    err = errors_of(data)
    assert err.line == 1


def test_a_line_that_is_not_strace():
    src = lines_of(WORKERS_O)
    src[9] = b"this is not strace\n"
    err = errors_of(b"".join(src))
    assert err.line == 10 and "this is not strace" in str(err)


def test_a_call_without_a_result():
    src = lines_of(CKPT_TT)
    src[20] = src[20].split(b" = ")[0] + b"\n"
    err = errors_of(b"".join(src))
    assert err.line == 21 and "= result" in err.expected


@pytest.mark.parametrize("keep", [1, 30, 0.5])
def test_truncated_last_line(keep):
    src = lines_of(CKPT_TT)
    last = src[100]
    cut = int(len(last) * keep) if isinstance(keep, float) else keep
    data = b"".join(src[:100]) + last[:cut]
    err = errors_of(data)
    assert err.line == 101 and "truncated" in err.expected


def test_missing_final_newline_is_a_cut():
    data = CKPT_TT.read_bytes()
    err = errors_of(data[:-1])
    assert err.line == len(lines_of(CKPT_TT))
    # tolerant mode keeps a last line that is complete
    ops = parse(data[:-1], strict=False)[0]
    assert ops.equals(parse(data)[0])


def _backwards(path: Path, index: int) -> bytes:
    src = lines_of(path)
    line = src[index].decode()
    src[index] = re.sub(
        r"(\d\d:\d\d:)(\d\d)", lambda m: m.group(1) + f"{int(m.group(2)) - 1:02d}", line, count=1
    ).encode()
    return b"".join(src)


def test_timestamps_going_back_within_a_pid():
    err = errors_of(_backwards(WORKERS_O, 30))
    assert err.line == 31 and "timestamp" in err.expected
    # the same in a later chunk
    err = errors_of(_backwards(WORKERS_O, 30), chunk_rows=4)
    assert err.line == 31


def _without_first_unfinished(path: Path) -> tuple[bytes, int, bytes]:
    src = lines_of(path)
    i = next(j for j, line in enumerate(src) if line.rstrip().endswith(b"<unfinished ...>"))
    call = re.search(rb"(\w+)\(", src[i]).group(1)
    pid = src[i].split()[0]
    del src[i]
    j = next(
        k
        for k, line in enumerate(src)
        if line.startswith(pid + b" ") and b"<... " + call + b" resumed>" in line
    )
    return b"".join(src), j + 1, call


@pytest.mark.parametrize("chunk_rows", [1_000_000, 3])
def test_resumed_without_unfinished(chunk_rows):
    data, line, call = _without_first_unfinished(WORKERS_O)
    err = errors_of(data, chunk_rows=chunk_rows)
    assert err.line == line and call.decode() in err.expected and "resumed" in str(err)


def test_tolerant_mode_skips_and_counts():
    src = lines_of(WORKERS_O)
    src[9] = b"garbage line\n"
    src[50] = b"\x00\x01 more garbage\n"
    data = b"".join(src)
    strict_ops = parse(WORKERS_O)[0]
    ops, _, _, _, chunks = parse(data, strict=False)
    skips = chunks[-1].skips
    assert skips is not None and skips.count == 2
    assert [s.line for s in skips.kept] == [10, 51]
    assert all(c.skips is skips for c in chunks)
    assert ops.height < strict_ops.height
    # the resumed line without its unfinished half, and a timestamp going back
    data, line, _ = _without_first_unfinished(WORKERS_O)
    skips = parse(data, strict=False)[4][-1].skips
    assert skips.count == 1 and skips.kept[0].line == line
    skips = parse(_backwards(WORKERS_O, 30), strict=False, chunk_rows=5)[4][-1].skips
    assert skips.count == 1 and skips.kept[0].line == 31


def test_skip_log_keeps_the_first_20():
    src = lines_of(CKPT_TT)
    for i in range(40, 80):
        src[i] = b"not strace\n"
    skips = parse(b"".join(src), strict=False)[4][-1].skips
    assert skips.count == 40 and [s.line for s in skips.kept] == list(range(41, 61))


def test_unfinished_at_the_end_of_the_trace():
    src = lines_of(WORKERS_O)
    i = next(j for j, line in enumerate(src) if b"read(3<pipe:" in line and b"<unfinished" in line)
    data = b"".join(src[: i + 1])
    ops, _, _, meta, _ = parse(data)
    assert meta["unfinished_unresolved"] >= 1  # this read, and other pids' calls
    last = ops.filter(pl.col("path").str.starts_with("pipe:") & (pl.col("op") == "read"))
    assert last.height == 1 and last["size"][0] is None and last["t_end"][0] == last["t_start"][0]


# ---------------------------------------------------------------- through the store


def test_load_through_the_store():
    db = iochar.connect(":memory:")
    try:
        res = db.load(WORKERS_O)
        assert res.kind == "strace" and res.rows["ops"] == 82 and res.rows["jobs"] == 1
        rows = db.sql(
            "SELECT f.path, sum(o.size) FROM ops o JOIN files f USING (job_id, file_id) "
            "WHERE o.op = 'write' AND f.path LIKE '%worker%' GROUP BY 1 ORDER BY 1"
        ).fetchall()
        assert [r[1] for r in rows] == [32768] * 3
        meta = db.sql("SELECT meta FROM sources").fetchall()[0][0]
        assert '"tool": "strace"' in meta
        assert db.load(WORKERS_O).duplicate
    finally:
        db.close()


def test_sniffed_by_the_registry(tmp_path):
    from iochar.load import sniff

    assert sniff(CKPT_TT) == "strace"
    odd = tmp_path / "trace.log"
    odd.write_bytes(WORKERS_ERR.read_bytes())
    assert sniff(odd) == "strace"


# ---------------------------------------------------------------- live: real strace now


requires_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


@pytest.mark.requires_strace
@requires_strace
@requires_gcc
def test_live_capture_of_the_program(tmp_path):
    exe = tmp_path / "ckpt_app"
    subprocess.run(["gcc", "-O1", "-o", str(exe), str(STRACE / "src" / "ckpt_app.c")], check=True)
    (tmp_path / "input.dat").write_bytes(b"x" * 123_457)
    trace = tmp_path / "live.strace"
    run = subprocess.run(
        ["strace", "-f", "-tt", "-T", "-y", "-s", "16", "-o", str(trace), str(exe)]
        + ["-i", "3", "-c", "20", "-k", "0", "input.dat", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "checkpoints=3" in run.stdout  # -k 0: a checkpoint after every iteration
    ops, _, jobs, meta, _ = parse(trace)
    base = os.path.realpath(tmp_path)
    reads = ops.filter((pl.col("path") == f"{base}/input.dat") & (pl.col("op") == "read"))
    assert reads["size"].sum() == 123_457 and reads["offset"][-1] == 123_457
    opens = ops.filter(pl.col("path").str.contains(r"/ckpt\.\d{3}$") & (pl.col("op") == "open"))
    assert opens.height == 3
    assert jobs["app"][0] == "ckpt_app" and meta["npids"] == 1


@pytest.mark.requires_strace
@requires_strace
def test_live_shell_append_and_redirections(tmp_path):
    """A real shell: '>>' opens with O_APPEND (write offsets unknown), and
    children write through fds the shell dup2()ed (their positions unknown)."""
    sh = shutil.which("sh")
    trace = tmp_path / "sh.strace"
    script = "echo one >> log.txt; echo two >> log.txt; cat log.txt > copy.txt"
    subprocess.run(
        ["strace", "-f", "-ttt", "-T", "-y", "-o", str(trace), sh, "-c", script],
        cwd=tmp_path,
        check=True,
    )
    assert (tmp_path / "copy.txt").read_text() == "one\ntwo\n"
    ops = parse(trace)[0]
    base = os.path.realpath(tmp_path)
    log = ops.filter(pl.col("path") == f"{base}/log.txt")
    appends = log.filter(pl.col("op") == "write")
    assert appends["size"].to_list() == [4, 4] and appends["offset"].null_count() == 2
    # cat copies with copy_file_range (coreutils >= 9) or read/write: either way a
    # read of log.txt's 8 bytes and a write of them to copy.txt
    copied = ops.filter(pl.col("call").is_in(["copy_file_range", "read"]))
    copied = copied.filter(pl.col("path") == f"{base}/log.txt")
    assert copied.filter(pl.col("op") == "read")["size"].sum() == 8
    out = ops.filter((pl.col("path") == f"{base}/copy.txt") & (pl.col("op") == "write"))
    assert out["size"].sum() == 8
    # the shell's dup2 onto stdout: a call on the duplicated fd's file
    dups = ops.filter(pl.col("call") == "dup2")
    assert dups.height >= 1 and dups["op"].unique().to_list() == ["other"]
    # "(deleted)" after a -y path is not part of the name
    assert not ops["path"].drop_nulls().str.contains(r"\(deleted\)|>").any()
