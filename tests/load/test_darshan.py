"""darshan: real logs against pydarshan's DarshanReport, damage sweeps, chunking, store."""

from __future__ import annotations

import functools
import glob
import gzip
import importlib.util
import os
import struct
import sys
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from iochar import schema
from iochar.errors import InputError, MissingDependencyError
from iochar.load import parse, sniff
from iochar.load.darshan import SUPPORTED_VERSIONS, DarshanLoader

# tests/conftest.py defines these too; they are rebuilt here because a second
# conftest.py (properties/) can shadow the module name ``conftest``.
DATA_DIR = Path(__file__).resolve().parents[2] / "data"
requires_darshan = pytest.mark.skipif(
    importlib.util.find_spec("darshan") is None, reason="the darshan package is missing"
)
pytestmark = requires_darshan

DARSHAN_DIR = DATA_DIR / "darshan"


def _wheel_logs() -> list[Path]:
    """Every log shipped in the installed darshan wheel (as pydarshan's test_summary)."""
    spec = importlib.util.find_spec("darshan")
    if spec is None or spec.origin is None:
        return []
    root = Path(spec.origin).parent
    found = []
    for pattern in (
        "examples/example_logs/*.darshan",
        "tests/input/*.darshan",
        "examples/darshan-graph/*.darshan",
    ):
        found += sorted(root.glob(pattern))
    return found


WHEEL_LOGS = _wheel_logs()
# the logs data/darshan/SOURCE.md describes (subfolders with their own SOURCE.md are
# other tests' fixtures)
BUNDLED_LOGS = sorted(DARSHAN_DIR.glob("*.darshan")) + sorted(
    (DARSHAN_DIR / "darshan-logs").rglob("*.darshan")
)
ALL_LOGS = WHEEL_LOGS + BUNDLED_LOGS


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.name}"


logs = pytest.mark.parametrize("log", ALL_LOGS, ids=_id)


def _registry_complete() -> bool:
    """Whether every loader module the registry imports exists yet."""
    import iochar.load

    try:
        iochar.load.kinds()
    except ModuleNotFoundError:
        return False
    return True


needs_registry = pytest.mark.skipif(
    not _registry_complete(), reason="a loader module of the registry is not written yet"
)


def _parse(src, **kw):
    return list(DarshanLoader().parse(src, **kw))


def _concat(chunks) -> dict[str, pa.Table]:
    out: dict[str, list[pa.Table]] = {}
    for c in chunks:
        for name, t in c.tables.items():
            out.setdefault(name, []).append(schema.check_frame(name, t))
    return {k: pa.concat_tables(v) for k, v in out.items()}


@functools.cache
def _loaded(path: Path):
    chunks = _parse(path)
    return chunks, _concat(chunks)


@functools.cache
def _report(path: Path):
    import darshan

    return darshan.DarshanReport(str(path), read_all=True)


def test_fixtures_present_and_match_their_manifest():
    import hashlib
    import re

    assert len(BUNDLED_LOGS) == 19
    assert len(WHEEL_LOGS) >= 15
    manifest = (DARSHAN_DIR / "SOURCE.md").read_text()
    rows = dict(re.findall(r"\| `([^`]+)` \| \d+ \| `([0-9a-f]{64})` \|", manifest))
    assert set(rows) == {p.relative_to(DARSHAN_DIR).as_posix() for p in BUNDLED_LOGS} | {
        "COPYRIGHT"
    }
    for name, digest in rows.items():
        assert hashlib.sha256((DARSHAN_DIR / name).read_bytes()).hexdigest() == digest, name


# ------------------------------------------------------------- real logs --


@logs
def test_parses_and_every_frame_passes_the_contract(log):
    chunks, tables = _loaded(log)
    for c in chunks:
        for name, t in c.tables.items():
            schema.check_frame(name, t)
    assert tables["jobs"].num_rows == 1
    assert chunks[0].meta["tool"] == "darshan"
    assert chunks[0].meta["tool_version"] in ("3.00", "3.10", "3.20", "3.21", "3.41")
    # every file_id used anywhere has a files row
    fids = set(tables["files"].column("file_id").to_pylist()) if "files" in tables else set()
    for name in ("file_stats", "access_sizes", "ops", "module_counters"):
        if name in tables:
            used = set(pc.drop_null(tables[name].column("file_id")).to_pylist())
            assert used <= fids, name


@logs
def test_every_module_lands(log):
    _, tables = _loaded(log)
    mc = tables.get("module_counters", pa.table({"module": pa.array([], pa.string())}))
    landed = set(mc.column("module").to_pylist())
    assert landed == set(_report(log).modules)


def _unnamed_records(tables, module, name_records) -> int:
    """Records of ``module`` whose id has no name record (DarshanReport leaves them out)."""
    mc = tables["module_counters"].filter(pc.equal(tables["module_counters"]["module"], module))
    files = tables["files"]
    unnamed = {
        f
        for f, r in zip(files["file_id"].to_pylist(), files["record_id"].to_pylist(), strict=True)
        if r not in name_records
    }
    recs = {
        (r, f) for r, f in zip(mc["record"].to_pylist(), mc["file_id"].to_pylist(), strict=True)
    }
    return sum(1 for _, f in recs if f in unnamed)


@logs
def test_record_counts_equal_darshan_report(log):
    chunks, tables = _loaded(log)
    report = _report(log)
    if not report.modules:  # a log with job data only (empty_log)
        assert set(tables) == {"jobs"} and chunks[-1].meta["modules"] == {}
        return
    mc = tables["module_counters"]
    for module in report.modules:
        if module in ("APMPI", "APXC", "BG/Q"):
            # DarshanReport misreads these (a second APMPI/APXC log in a process; BG/Q
            # records have no name record): test_darshan_collection compares them with
            # pydarshan's backend in a fresh process
            continue
        sub = mc.filter(pc.equal(mc["module"], module))
        ours = len(set(sub["record"].to_pylist()))
        if module == "HEATMAP":
            theirs = sum(h._num_recs for h in report.heatmaps.values())
        else:
            # DarshanReport keeps only records that have a name record
            theirs = len(report.records[module]) + _unnamed_records(
                tables, module, report.name_records
            )
        assert ours == theirs, module
        assert chunks[-1].meta["modules"][module]["records"] == ours


@logs
def test_dxt_segments_equal_darshan_report(log):
    _, tables = _loaded(log)
    report = _report(log)
    for module in ("DXT_POSIX", "DXT_MPIIO"):
        if module not in report.modules:
            continue
        want = []
        for rec in report.records[module]._records:
            for kind in ("write_segments", "read_segments"):
                op = kind.split("_")[0]
                for s in rec[kind]:
                    want.append(
                        (rec["rank"], op, s["offset"], s["length"], s["start_time"], s["end_time"])
                    )
        ops = tables.get("ops", pa.table({"call": pa.array([], pa.string())}))
        sub = ops.filter(pc.equal(ops["call"], module))
        got = list(
            zip(
                *(sub[c].to_pylist() for c in ("rank", "op", "offset", "size", "t_start", "t_end")),
                strict=True,
            )
        )
        assert got == want, module


@logs
def test_bytes_equal_darshan_report(log):
    _, tables = _loaded(log)
    report = _report(log)
    if not report.modules:
        assert "file_stats" not in tables
        return
    fs = tables["file_stats"]
    files = tables["files"]
    rid = dict(zip(files["file_id"].to_pylist(), files["record_id"].to_pylist(), strict=True))
    for module, prefix in (("POSIX", "POSIX"), ("MPI-IO", "MPIIO"), ("STDIO", "STDIO")):
        if module not in report.modules:
            continue
        names = report.counters[module]["counters"]
        i_read = names.index(f"{prefix}_BYTES_READ")
        i_write = names.index(f"{prefix}_BYTES_WRITTEN")

        def val(v):
            return None if v < 0 else int(v)

        want = sorted(
            (r["id"], r["rank"], val(r["counters"][i_read]), val(r["counters"][i_write]))
            for r in report.records[module]._records
        )
        sub = fs.filter(pc.equal(fs["module"], module))
        got = sorted(
            (rid[f], -1 if rank is None else rank, br, bw)
            for f, rank, br, bw in zip(
                sub["file_id"].to_pylist(),
                sub["rank"].to_pylist(),
                sub["bytes_read"].to_pylist(),
                sub["bytes_written"].to_pylist(),
                strict=True,
            )
            if rid[f] in report.name_records
        )
        assert got == want, module


@logs
def test_job_equals_darshan_report(log):
    chunks, tables = _loaded(log)
    job = tables["jobs"].to_pylist()[0]
    md = _report(log).metadata
    assert job["nprocs"] == md["job"]["nprocs"]
    assert job["runtime_s"] == md["job"]["run_time"]
    assert job["job_key"] == str(md["job"]["jobid"])
    assert job["user"] == str(md["job"]["uid"])
    assert job["start_ts"].timestamp() == pytest.approx(md["job"]["start_time_sec"], abs=1)
    assert job["exe"] == (md["exe"] or None)
    assert chunks[0].meta["job_metadata"] == md["job"]["metadata"]
    assert chunks[0].meta["tool_version"] == md["job"]["log_ver"]


def test_dxt_log_figures():
    """dxt.darshan, the one large real trace: figures from SOURCE.md."""
    chunks, t = _loaded(DARSHAN_DIR / "dxt.darshan")
    assert t["ops"].num_rows == 7623
    assert set(t["ops"]["call"].to_pylist()) == {"DXT_POSIX"}
    job = t["jobs"].to_pylist()[0]
    assert job["nnodes"] == 1 and chunks[0].meta["host"] == "bdw-0003"
    assert t["file_stats"].num_rows == 215
    # per file, DXT bytes never exceed what POSIX counted for that file
    ops = t["ops"].to_pandas()
    fs = t["file_stats"].to_pandas()
    posix = fs[fs.module == "POSIX"].set_index("file_id")
    by_file = ops.groupby(["file_id", "op"])["size"].sum().unstack(fill_value=0)
    assert (by_file["read"] <= posix.loc[by_file.index, "bytes_read"]).all()
    assert (by_file["write"] <= posix.loc[by_file.index, "bytes_written"]).all()


def test_ior_hdf5_mapping():
    _, t = _loaded(DARSHAN_DIR / "ior_hdf5_example.darshan")
    fs = t["file_stats"].to_pandas()
    mpiio = fs[fs.module == "MPI-IO"].iloc[0]
    posix = fs[fs.module == "POSIX"].iloc[0]
    assert np.isnan(mpiio["rank"]) and mpiio["nranks"] == 4  # shared record
    assert mpiio["reads"] == 36 and mpiio["writes"] == 23  # indep+coll+split+nb
    assert posix["bytes_read"] == 4202504 and posix["bytes_written"] == 4195800
    assert posix["first_io_t"] == min(posix["first_read_t"], posix["first_write_t"])
    stdio = fs[fs.module == "STDIO"].iloc[0]
    assert stdio["reads"] == 0 and np.isnan(stdio["first_read_t"])  # no activity -> NULL
    assert np.isnan(stdio["max_byte_read"])
    mc = t["module_counters"].to_pandas()
    lustre = dict(mc[mc.module == "LUSTRE"][["counter", "value"]].values)
    assert lustre["LUSTRE_COMP1_STRIPE_SIZE"] == 1048576
    assert lustre["LUSTRE_COMP1_OST_ID_0"] == 106
    sizes = t["access_sizes"].to_pandas()
    h5d = sizes[sizes.module == "H5D"]
    assert set(h5d["bin_lo"]) == {102401} and set(h5d["bin_hi"]) == {1048577}
    assert sizes["bin_hi"].isna().sum() == 0
    paths = t["files"]["path"].to_pylist()
    assert "/global/cscratch1/sd/ssnyder/test123.h5:/Dataset-0000.0000" in paths


# --------------------------------------------------------------- sniffing --


def test_sniff_claims_logs_and_nothing_else():
    loader = DarshanLoader()
    for log in ALL_LOGS:
        assert loader.sniff(log.read_bytes()[:64]), log
    for text in (
        b"3.14 is pi\n",
        b"3.21\n",
        b"",
        b"\x1f\x8b\x08",
        b"PAR1",
        b"3.21\x00\x00\x00\x00abcdefgh",
    ):
        assert not loader.sniff(text), text
    assert loader.sniff(b"3.41\x00\x00\x00\x00")  # too short to check the magic


@needs_registry
def test_registry_sniffs_darshan_logs():
    for log in ALL_LOGS:
        assert sniff(log) == "darshan", log


# ---------------------------------------------------------- damaged input --


SWEEP_LOGS = [
    *BUNDLED_LOGS,
    *(p for p in WHEEL_LOGS if p.name in ("sample-badost.darshan", "noposix.darshan")),
]


@pytest.mark.parametrize("log", SWEEP_LOGS, ids=_id)
def test_truncation_sweep_raises_input_error(log, tmp_path):
    data = log.read_bytes()
    bad = tmp_path / log.name
    for cut in np.unique(np.linspace(0, len(data) - 1, 30).astype(int)):
        bad.write_bytes(data[:cut])
        with pytest.raises(InputError) as exc:
            _parse(bad)
        err = exc.value
        assert err.path == str(bad) and err.kind == "darshan"
        assert err.unit in ("byte", "record") or err.line is None
        assert "expected" in str(err)


@pytest.mark.parametrize("log", SWEEP_LOGS, ids=_id)
def test_corrupted_compressed_bytes_raise(log, tmp_path):
    data = log.read_bytes()
    header = SUPPORTED_VERSIONS[data[:4].decode()][0]
    rng = np.random.default_rng(7)
    bad = tmp_path / log.name
    for pos in rng.integers(header, len(data), 25):
        b = bytearray(data)
        b[pos] ^= 0xFF
        bad.write_bytes(bytes(b))
        with pytest.raises(InputError, match="compressed|record|region"):
            _parse(bad)


def _patched(tmp_path, log: Path, offset: int, new: bytes) -> Path:
    b = bytearray(log.read_bytes())
    b[offset : offset + len(new)] = new
    out = tmp_path / f"patched-{offset}.darshan"
    out.write_bytes(bytes(b))
    return out


@pytest.mark.parametrize(
    ("offset", "new", "message"),
    [
        (0, b"9.99", "version string"),
        (8, b"\x00\x00\x00\x01", "magic number"),
        (16, b"\x02", "uncompressed"),
        (16, b"\x07", "compression type"),
        (24, struct.pack("<Q", 100), "job record"),  # name region before the header end
        (48, struct.pack("<Q", 10**9), "region"),  # POSIX region far past the end
    ],
)
def test_corrupted_header_raises_with_byte_offset(tmp_path, offset, new, message):
    bad = _patched(tmp_path, DARSHAN_DIR / "ior_hdf5_example.darshan", offset, new)
    with pytest.raises(InputError, match=message) as exc:
        _parse(bad)
    assert exc.value.unit == "byte"


def test_empty_and_non_darshan_files(tmp_path):
    empty = tmp_path / "empty.darshan"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        _parse(empty)
    text = tmp_path / "trace.txt"
    text.write_bytes(b"read(3, ..., 4096) = 4096\n" * 100)
    with pytest.raises(InputError, match="version string") as exc:
        _parse(text)
    assert str(text) in str(exc.value) and "[kind=darshan]" in str(exc.value)
    assert exc.value.unit == "byte" and exc.value.line == 0


@needs_registry
def test_parse_boundary_with_kind_darshan(tmp_path):
    text = tmp_path / "trace.txt"
    text.write_bytes(b"read(3, ..., 4096) = 4096\n" * 100)
    with pytest.raises(InputError, match="version string"):
        list(parse(text, kind="darshan"))


def test_tolerant_mode_skips_a_damaged_module(tmp_path):
    log = DARSHAN_DIR / "ior_hdf5_example.darshan"
    data = bytearray(log.read_bytes())
    data[3114 + 100] ^= 0xFF  # inside the DXT_MPIIO region (3114..3967)
    bad = tmp_path / "bad.darshan"
    bad.write_bytes(bytes(data))
    with pytest.raises(InputError, match="DXT_MPIIO"):
        _parse(bad)
    chunks = _parse(bad, strict=False)
    t = _concat(chunks)
    assert chunks[-1].skips.count == 1 and "DXT_MPIIO" in chunks[-1].skips.kept[0].reason
    assert set(t["ops"]["call"].to_pylist()) == {"DXT_POSIX"}
    assert "DXT_MPIIO" not in set(t["module_counters"]["module"].to_pylist())


# ------------------------------------------------------- chunks and inputs --


@pytest.mark.parametrize(
    "log",
    [DARSHAN_DIR / "dxt.darshan", DARSHAN_DIR / "ior_hdf5_example.darshan"],
    ids=_id,
)
@pytest.mark.parametrize("rows", [1, 7, 500])
def test_chunked_equals_unchunked(log, rows):
    whole = _loaded(log)[1]
    chunks = _parse(log, chunk_rows=rows)
    for c in chunks:
        assert all(t.num_rows <= rows for t in c.tables.values())
    parts = _concat(chunks)
    assert set(parts) == set(whole)
    for name in whole:
        assert parts[name].equals(whole[name]), name


def test_buffers_and_compressed_logs_parse_the_same():
    log = DARSHAN_DIR / "ior_hdf5_example.darshan"
    whole = _loaded(log)[1]
    for src in (log.read_bytes(), gzip.compress(log.read_bytes())):
        got = _concat(_parse(src))
        for name in whole:
            assert got[name].equals(whole[name]), name


def test_chunk_rows_must_be_positive():
    from iochar.errors import ParameterError

    with pytest.raises(ParameterError):
        _parse(DARSHAN_DIR / "dxt.darshan", chunk_rows=0)


def test_missing_darshan_package_names_the_extra(monkeypatch):
    for mod in ("darshan", "darshan.backend", "darshan.backend.cffi_backend"):
        monkeypatch.setitem(sys.modules, mod, None)  # as if not installed
    with pytest.raises(MissingDependencyError, match=r"iochar\[darshan\]"):
        _parse(DARSHAN_DIR / "dxt.darshan")


# ------------------------------------- a 3.41 log written by libdarshan-util --


def _writer():
    """cffi view of libdarshan-util's log writer (not exposed by pydarshan)."""
    import cffi
    import darshan
    from darshan.backend import cffi_backend  # noqa: F401 - loads the library

    ffi = cffi.FFI()
    ffi.cdef(
        """
        struct darshan_job { int64_t uid; int64_t start_time_sec; int64_t start_time_nsec;
            int64_t end_time_sec; int64_t end_time_nsec; int64_t nprocs; int64_t jobid;
            char metadata[1024]; };
        struct darshan_mnt_info { char mnt_type[3015]; char mnt_path[3015]; };
        void* darshan_log_create(const char *, int, int);
        int darshan_log_put_job(void*, struct darshan_job*);
        int darshan_log_put_exe(void*, char*);
        int darshan_log_put_mounts(void*, struct darshan_mnt_info*, int);
        int darshan_log_put_mod(void*, int, void*, int, int);
        void darshan_log_close(void*);
        """
    )
    here = os.path.dirname(darshan.__file__)
    paths = glob.glob(os.path.join(here, "..", "darshan.libs", "libdarshan-util*.so*"))
    if os.path.exists("/proc/self/maps"):
        with open("/proc/self/maps") as fh:
            paths += [ln.split()[-1] for ln in fh if "libdarshan-util" in ln]
    if not paths:
        pytest.skip("cannot locate libdarshan-util to write a log")
    return ffi, ffi.dlopen(paths[0])


POSIX_REC = np.dtype([("id", "<u8"), ("rank", "<i8"), ("c", "<i8", 69), ("f", "<f8", 17)])


@pytest.fixture(scope="module")
def log_341(tmp_path_factory) -> Path:
    """A format-3.41 log (POSIX, DXT_POSIX, HEATMAP) written through the library."""
    from darshan.backend.cffi_backend import _mod_names, counter_names

    if counter_names("POSIX") is None or len(counter_names("POSIX")) != 69:
        pytest.skip("POSIX record layout differs from the one this test writes")
    ffi, lib = _writer()
    path = tmp_path_factory.mktemp("v341") / "sim.darshan"
    fd = lib.darshan_log_create(os.fsencode(path), 0, 1 << _mod_names.index("POSIX"))
    assert fd != ffi.NULL
    job = ffi.new("struct darshan_job *")
    job.uid, job.nprocs, job.jobid = 1234, 2, 99
    job.start_time_sec, job.start_time_nsec = 1_700_000_000, 250_000_000
    job.end_time_sec, job.end_time_nsec = 1_700_000_010, 500_000_000
    job.metadata = b"lib_ver=3.5.0\n"
    assert lib.darshan_log_put_job(fd, job) == 0
    assert lib.darshan_log_put_exe(fd, b"/opt/bin/sim --steps 3") == 0
    mnt = ffi.new("struct darshan_mnt_info[1]")
    mnt[0].mnt_type, mnt[0].mnt_path = b"lustre", b"/scratch"
    assert lib.darshan_log_put_mounts(fd, mnt, 1) == 0
    posix = np.zeros(2, POSIX_REC)
    posix["id"], posix["rank"] = [111, 222], [0, -1]
    posix["c"][:, 3] = [4, 0]  # POSIX_READS
    posix["c"][:, 4] = [0, 8]  # POSIX_WRITES
    posix["c"][:, 14] = [4096, 0]  # POSIX_BYTES_READ
    posix["c"][:, 15] = [0, 8 << 20]  # POSIX_BYTES_WRITTEN
    posix["c"][0, 32] = 4  # POSIX_SIZE_READ_10K_100K
    posix["f"][0, 1], posix["f"][0, 5] = 0.5, 0.75  # READ_START / READ_END
    buf = posix.tobytes()
    assert lib.darshan_log_put_mod(fd, _mod_names.index("POSIX"), buf, len(buf), 4) == 0
    head = bytearray(104)
    struct.pack_into("<Qqq", head, 0, 111, 0, 0)
    head[24:30] = b"node07"
    struct.pack_into("<qq", head, 88, 2, 1)
    segs = np.array([(0, 10, 0.1, 0.2), (10, 10, 0.2, 0.3), (0, 20, 0.4, 0.5)], "<i8,<i8,<f8,<f8")
    buf = bytes(head) + segs.tobytes()
    assert lib.darshan_log_put_mod(fd, _mod_names.index("DXT_POSIX"), buf, len(buf), 1) == 0
    buf = struct.pack("<Qqdq", 16592106915301738621, 0, 0.5, 3) + bytes(16)
    buf += np.array([0, 100, 0], "<i8").tobytes() + np.array([4096, 0, 0], "<i8").tobytes()
    assert lib.darshan_log_put_mod(fd, _mod_names.index("HEATMAP"), buf, len(buf), 1) == 0
    lib.darshan_log_close(fd)
    assert path.read_bytes()[:4] == b"3.41"
    return path


def test_log_341_from_the_library(log_341):
    chunks = _parse(log_341)
    t = _concat(chunks)
    meta = chunks[0].meta
    assert meta["tool_version"] == "3.41" and meta["host"] == "node07"
    assert any("POSIX" in w and "partial" in w for w in chunks[0].warnings)
    assert any("no name record" in w for w in chunks[-1].warnings)
    job = t["jobs"].to_pylist()[0]
    assert (job["nprocs"], job["nnodes"], job["app"], job["runtime_s"]) == (2, 1, "sim", 10.25)
    assert job["start_ts"].microsecond == 250_000
    assert t["files"]["path"].null_count == 2
    fs = t["file_stats"].to_pylist()
    assert [r["bytes_read"] for r in fs] == [4096, 0]
    assert [r["nranks"] for r in fs] == [1, 2] and fs[1]["rank"] is None
    assert fs[0]["first_read_t"] == 0.5 and fs[0]["max_byte_written"] is None
    assert t["access_sizes"].to_pylist()[0] | {} == {
        "job_id": 0,
        "file_id": 0,
        "rank": 0,
        "module": "POSIX",
        "op": "read",
        "bin_lo": 10241,
        "bin_hi": 102401,
        "count": 4,
    }
    assert t["ops"].select(["op", "offset", "size"]).to_pylist() == [
        {"op": "write", "offset": 0, "size": 10},
        {"op": "write", "offset": 10, "size": 10},
        {"op": "read", "offset": 0, "size": 20},
    ]
    mc = t["module_counters"].to_pandas()
    heat = dict(mc[mc.module == "HEATMAP"][["counter", "value"]].values)
    assert heat["HEATMAP_POSIX_F_BIN_WIDTH_SECONDS"] == 0.5
    assert heat["HEATMAP_POSIX_READ_BIN_0"] == 4096 and heat["HEATMAP_POSIX_WRITE_BIN_1"] == 100
    # pydarshan sees the same heatmap and segments
    report = _report(log_341)
    assert set(mc["module"]) == set(report.modules)
    hm = report.heatmaps["POSIX"]
    assert hm._num_recs == 1 and hm._nbins == 3


def test_log_341_truncation_sweep(log_341, tmp_path):
    data = log_341.read_bytes()
    bad = tmp_path / "cut.darshan"
    for cut in range(0, len(data), 7):
        bad.write_bytes(data[:cut])
        with pytest.raises(InputError):
            _parse(bad)


# ------------------------------------------------------------------ store --


@needs_registry
def test_store_loads_dxt_log(store):
    log = DARSHAN_DIR / "dxt.darshan"
    res = store.load(log)
    assert res.rows["ops"] == 7623
    assert res.rows["file_stats"] == 215 and res.rows["jobs"] == 1
    assert store.sql("SELECT count(*) FROM ops").fetchall() == [(7623,)]
    n_files = store.sql("SELECT count(*) FROM files").fetchall()[0][0]
    assert n_files == 215
    orphans = store.sql(
        "SELECT count(*) FROM ops o ANTI JOIN files f USING (job_id, file_id)"
    ).fetchall()[0][0]
    assert orphans == 0
    meta = store.sql("SELECT kind, meta->>'$.tool_version' FROM sources").fetchall()
    assert meta == [("darshan", "3.10")]
    again = store.load(log)
    assert store.sql("SELECT count(*) FROM ops").fetchall() == [(7623,)]
    assert again.duplicate


def _as_bzip2(log: Path, out: Path) -> Path:
    """Rewrite a zlib log (format 3.21) with every region bzip2-compressed."""
    import bz2
    import zlib

    data = log.read_bytes()
    assert data[:4] == b"3.21"
    name_off, name_len = struct.unpack_from("<QQ", data, 24)
    maps = list(struct.unpack_from("<32Q", data, 40))
    regions = [(360, name_off - 360, None), (name_off, name_len, "name")]
    regions += [(maps[2 * i], maps[2 * i + 1], i) for i in range(16) if maps[2 * i + 1]]
    header = bytearray(data[:360])
    header[16] = 1  # DARSHAN_BZIP2_COMP
    body = b""
    for off, length, key in sorted(regions):
        blob = bz2.compress(zlib.decompress(data[off : off + length]))
        new_off = 360 + len(body)
        if key == "name":
            struct.pack_into("<QQ", header, 24, new_off, len(blob))
        elif key is not None:
            struct.pack_into("<QQ", header, 40 + 16 * key, new_off, len(blob))
        body += blob
    out.write_bytes(bytes(header) + body)
    return out


def test_bzip2_log_is_checked_then_read_or_refused(tmp_path):
    log = DARSHAN_DIR / "ior_hdf5_example.darshan"
    bz = _as_bzip2(log, tmp_path / "bz.darshan")
    try:
        got = _concat(_parse(bz))
    except InputError as exc:  # the wheel's libdarshan-util is built without bzip2
        assert "bzip2" in str(exc) and exc.unit == "byte"
    else:
        whole = _loaded(log)[1]
        for name in whole:
            assert got[name].equals(whole[name]), name
    # a damaged bzip2 region is caught by the Python-side check (CRC), not the library
    data = bytearray(bz.read_bytes())
    data[len(data) - 200] ^= 0xFF
    bad = tmp_path / "bz-bad.darshan"
    bad.write_bytes(bytes(data))
    with pytest.raises(InputError, match="bzip2-compressed"):
        _parse(bad)


# ------------------------------------------- DXT decoded in Python, not in C --


def _dxt_blob(specs, seed: int) -> tuple[bytes, list[tuple]]:
    """Little-endian DXT records for ``(record id, rank, host, writes, reads)`` specs.

    Returns the region bytes and the ops rows they hold, as
    ``(record id, rank, op, offset, size, t_start, t_end)``.
    """
    rng = np.random.default_rng(seed)
    blob, rows = b"", []
    for rid, rank, host, nw, nr in specs:
        head = bytearray(104)
        struct.pack_into("<Qqq", head, 0, rid, rank, 0)
        head[24 : 24 + len(host)] = host
        struct.pack_into("<qq", head, 88, nw, nr)
        segs = np.zeros(nw + nr, "<i8,<i8,<f8,<f8")
        segs["f0"] = rng.integers(0, 1 << 40, nw + nr)
        segs["f1"] = rng.integers(1, 1 << 22, nw + nr)
        segs["f2"] = np.sort(rng.random(nw + nr) * 100)
        segs["f3"] = segs["f2"] + rng.random(nw + nr)
        blob += bytes(head) + segs.tobytes()
        for i, s in enumerate(segs.tolist()):
            rows.append((rid, rank, "write" if i < nw else "read", *s))
    return blob, rows


def _write_log(path: Path, modules: list[tuple[str, bytes, int]]) -> Path:
    """A format-3.41 zlib log holding ``(module, region bytes, version)`` regions."""
    from darshan.backend.cffi_backend import _mod_names

    ffi, lib = _writer()
    fd = lib.darshan_log_create(os.fsencode(path), 0, 0)
    assert fd != ffi.NULL
    job = ffi.new("struct darshan_job *")
    job.uid, job.nprocs, job.jobid = 1000, 4, 7
    job.start_time_sec, job.end_time_sec = 1_700_000_000, 1_700_000_100
    job.metadata = b"lib_ver=3.5.0\n"
    assert lib.darshan_log_put_job(fd, job) == 0
    assert lib.darshan_log_put_exe(fd, b"/bin/dxt-app") == 0
    mnt = ffi.new("struct darshan_mnt_info[1]")
    mnt[0].mnt_type, mnt[0].mnt_path = b"xfs", b"/data"
    assert lib.darshan_log_put_mounts(fd, mnt, 1) == 0
    for name, buf, ver in modules:
        assert lib.darshan_log_put_mod(fd, _mod_names.index(name), buf, len(buf), ver) == 0
    lib.darshan_log_close(fd)
    return path


def _inflate_all(blob: bytes) -> bytes:
    out = b""
    while blob:
        d = zlib.decompressobj()
        out += d.decompress(blob)
        blob = d.unused_data
    return out


def _swap_dxt(raw: bytes) -> bytes:
    """DXT records with every integer and double byte-swapped (hosts kept)."""
    out, pos = bytearray(), 0
    while pos < len(raw):
        head = bytearray(raw[pos : pos + 104])
        nw, nr = struct.unpack_from("<qq", head, 88)
        for at in (0, 8, 16, 88, 96):
            head[at : at + 8] = head[at : at + 8][::-1]
        end = pos + 104 + 32 * (nw + nr)
        out += head + np.frombuffer(raw[pos + 104 : end], "<u8").byteswap().tobytes()
        pos = end
    return bytes(out)


def _as_big_endian(log: Path, out: Path) -> Path:
    """Rewrite a 3.41 log holding only job and DXT regions in big-endian order."""
    from darshan.backend.cffi_backend import _mod_names

    data = log.read_bytes()
    assert data[:4] == b"3.41"
    name_off, name_len = struct.unpack_from("<QQ", data, 32)
    assert name_len == 0
    maps = struct.unpack_from("<128Q", data, 48)
    dxt = {_mod_names.index("DXT_POSIX"), _mod_names.index("DXT_MPIIO")}
    mods = [(maps[2 * i], maps[2 * i + 1], i) for i in range(64) if maps[2 * i + 1]]
    assert {i for _, _, i in mods} <= dxt
    job_end = min(off for off, _, _ in mods)
    header = bytearray(data[:1328])
    struct.pack_into(">q", header, 8, struct.unpack_from("<q", data, 8)[0])
    struct.pack_into(">Q", header, 24, struct.unpack_from("<Q", data, 24)[0])
    struct.pack_into(">QQ", header, 32, 0, 0)
    struct.pack_into(">128Q", header, 48, *([0] * 128))
    struct.pack_into(">64I", header, 1072, *struct.unpack_from("<64I", data, 1072))
    job = _inflate_all(data[1328:job_end])
    job = np.frombuffer(job[:56], "<i8").byteswap().tobytes() + job[56:]
    body = zlib.compress(job)
    for off, length, i in sorted(mods):
        blob = zlib.compress(_swap_dxt(_inflate_all(data[off : off + length])))
        struct.pack_into(">QQ", header, 48 + 16 * i, 1328 + len(body), len(blob))
        body += blob
    out.write_bytes(bytes(header) + body)
    return out


POSIX_SPECS = [
    (111, 0, b"node01", 3, 2),
    (222, 1, b"node02", 0, 0),
    (111, 1, b"node02", 0, 5),
    (333, 0, b"node01", 40, 0),
    (444, 3, b"node03", 17, 23),
]
MPIIO_SPECS = [(111, 0, b"node01", 2, 2), (555, 2, b"node02", 1, 0)]


@pytest.fixture(scope="module")
def dxt_logs(tmp_path_factory):
    """A 3.41 log with DXT_POSIX and DXT_MPIIO records, the same in big-endian
    order, and the ops rows both hold."""
    tmp = tmp_path_factory.mktemp("dxt")
    posix, posix_rows = _dxt_blob(POSIX_SPECS, 1)
    mpiio, mpiio_rows = _dxt_blob(MPIIO_SPECS, 2)
    le = _write_log(tmp / "le.darshan", [("DXT_POSIX", posix, 1), ("DXT_MPIIO", mpiio, 2)])
    be = _as_big_endian(le, tmp / "be.darshan")
    assert be.read_bytes()[8:16] == struct.pack(">q", 6567223)
    rows = [(*r, "DXT_POSIX") for r in posix_rows] + [(*r, "DXT_MPIIO") for r in mpiio_rows]
    return le, be, rows


def _ops_rows(t: dict[str, pa.Table]) -> list[tuple]:
    files = t["files"]
    rid = dict(zip(files["file_id"].to_pylist(), files["record_id"].to_pylist(), strict=True))
    cols = ("file_id", "rank", "op", "offset", "size", "t_start", "t_end", "call")
    columns = (t["ops"][c].to_pylist() for c in cols)
    return [(rid[f], *rest) for f, *rest in zip(*columns, strict=True)]


def test_dxt_ops_are_the_segments_written(dxt_logs):
    le, _, rows = dxt_logs
    assert _library_dxt_rows(le) == rows  # the fixture is what libdarshan-util reads
    chunks = _parse(le)
    t = _concat(chunks)
    assert _ops_rows(t) == rows
    mc = t["module_counters"]
    for module, specs in (("DXT_POSIX", POSIX_SPECS), ("DXT_MPIIO", MPIIO_SPECS)):
        sub = mc.filter(pc.equal(mc["module"], module))
        assert sub["counter"].to_pylist() == ["DXT_WRITE_COUNT", "DXT_READ_COUNT"] * len(specs)
        assert sub["value"].to_pylist() == [float(x) for s in specs for x in s[3:]]
        assert sub["record"].to_pylist() == [i for i in range(len(specs)) for _ in (0, 1)]
        assert sub["rank"].to_pylist() == [s[1] for s in specs for _ in (0, 1)]
        assert chunks[-1].meta["modules"][module]["records"] == len(specs)
    assert t["files"]["record_id"].to_pylist() == [111, 222, 333, 444, 555]
    assert chunks[0].meta["hosts"] == ["node01", "node02", "node03"]
    assert t["jobs"]["nnodes"].to_pylist() == [3]


def test_big_endian_dxt_log_parses_the_same(dxt_logs):
    le, be, rows = dxt_logs
    want, got = _parse(le), _parse(be)

    def same(meta):  # compressed region sizes differ
        mods = {k: {**v, "bytes": None} for k, v in meta["modules"].items()}
        return {**meta, "modules": mods}

    assert same(got[0].meta) == same(want[0].meta)
    assert same(got[-1].meta) == same(want[-1].meta)
    want_t, got_t = _concat(want), _concat(got)
    assert set(got_t) == set(want_t)
    for name in want_t:
        assert got_t[name].equals(want_t[name]), name
    assert _ops_rows(got_t) == rows
    # libdarshan-util, which swaps as it reads, sees the same segments
    assert _library_dxt_rows(be) == rows


def _library_dxt_rows(path: Path) -> list[tuple]:
    """Ops rows as libdarshan-util reads them (DarshanReport drops unnamed records)."""
    from darshan.backend import cffi_backend as cb

    log = cb.log_open(str(path))
    rows = []
    try:
        for module in ("DXT_POSIX", "DXT_MPIIO"):
            while rec := cb.log_get_dxt_record(log, module, dtype="dict"):
                for op in ("write", "read"):
                    for s in rec[f"{op}_segments"]:
                        seg = (s["offset"], s["length"], s["start_time"], s["end_time"])
                        rows.append((rec["id"], rec["rank"], op, *seg, module))
    finally:
        cb.log_close(log)
    return rows


@pytest.mark.parametrize("rows", [1, 3, 50, 1_000_000])
def test_dxt_decoded_from_any_piece_boundaries(monkeypatch, dxt_logs, rows):
    """Pieces that split heads and segments anywhere; regions decompressed again."""
    import iochar.load.darshan as mod

    logs = [dxt_logs[0], dxt_logs[1]]
    if rows >= 50:  # tiny chunks of the large log take seconds
        logs.append(DARSHAN_DIR / "dxt.darshan")
    whole = {log: _concat(_parse(log)) for log in logs}
    for keep, piece in ((0, 37), (1 << 25, 101), (0, 1 << 16)):
        monkeypatch.setattr(mod, "_DXT_KEEP", keep)
        monkeypatch.setattr(mod._header, "_INFLATE_MAX", piece)
        for log in logs:
            chunks = _parse(log, chunk_rows=rows)
            for c in chunks:
                assert all(t.num_rows <= max(rows, 2) for t in c.tables.values())
            got = _concat(chunks)
            for name in whole[log]:
                assert got[name].equals(whole[log][name]), (log.name, name, keep, piece)


def test_dxt_is_not_read_by_libdarshan_util(monkeypatch):
    import iochar.load.darshan._records as mod

    seen = []
    real = mod._get_records_streaming

    def spy(log, module, idx, consume, out):
        seen.append(module)
        return real(log, module, idx, consume, out)

    monkeypatch.setattr(mod, "_get_records_streaming", spy)
    t = _concat(_parse(DARSHAN_DIR / "ior_hdf5_example.darshan"))
    assert {"DXT_POSIX", "DXT_MPIIO"} <= set(t["ops"]["call"].to_pylist())
    assert "POSIX" in seen and not set(seen) & {"DXT_POSIX", "DXT_MPIIO"}


@logs
def test_dxt_records_equal_darshan_report(log):
    """Per record: id, rank and counts, and each segment's file, as libdarshan-util reads them."""
    _, t = _loaded(log)
    report = _report(log)
    for module in ("DXT_POSIX", "DXT_MPIIO"):
        if module not in report.modules:
            continue
        recs = report.records[module]._records
        mc = t["module_counters"].filter(pc.equal(t["module_counters"]["module"], module))
        files = t["files"]
        rid = dict(zip(files["file_id"].to_pylist(), files["record_id"].to_pylist(), strict=True))
        got = list(
            zip(
                [rid[f] for f in mc["file_id"].to_pylist()[::2]],
                mc["rank"].to_pylist()[::2],
                mc["value"].to_pylist()[::2],
                mc["value"].to_pylist()[1::2],
                strict=True,
            )
        )
        assert got == [(r["id"], r["rank"], r["write_count"], r["read_count"]) for r in recs]
        ops = t["ops"].filter(pc.equal(t["ops"]["call"], module))
        want = [r["id"] for r in recs for _ in range(r["write_count"] + r["read_count"])]
        assert [rid[f] for f in ops["file_id"].to_pylist()] == want


def _dxt_slot(data: bytes, module_offset: int) -> int:
    maps = struct.unpack_from("<32Q", data, 40)
    return next(i for i in range(16) if maps[2 * i] == module_offset)


def test_dxt_mpiio_version_1_has_no_offsets(tmp_path):
    log = DARSHAN_DIR / "ior_hdf5_example.darshan"
    data = log.read_bytes()
    slot = _dxt_slot(data, 3114)  # the DXT_MPIIO region
    assert struct.unpack_from("<I", data, 296 + 4 * slot)[0] == 2
    v1 = _patched(tmp_path, log, 296 + 4 * slot, struct.pack("<I", 1))
    t = _concat(_parse(v1))
    whole = _loaded(log)[1]
    ops, old = t["ops"], whole["ops"]
    mpiio = pc.equal(ops["call"], "DXT_MPIIO")
    assert set(ops.filter(mpiio)["offset"].to_pylist()) == {-1}
    assert ops.filter(pc.invert(mpiio)).equals(old.filter(pc.invert(mpiio)))
    assert ops.filter(mpiio).drop_columns("offset").equals(old.filter(mpiio).drop_columns("offset"))
    report = _report(v1)  # libdarshan-util does the same
    offs = {s["offset"] for r in report.records["DXT_MPIIO"]._records for s in r["read_segments"]}
    assert offs == {-1}


def test_unknown_dxt_version_is_refused(tmp_path):
    log = DARSHAN_DIR / "ior_hdf5_example.darshan"
    data = log.read_bytes()
    slot = _dxt_slot(data, 3114)
    bad = _patched(tmp_path, log, 296 + 4 * slot, struct.pack("<I", 3))
    with pytest.raises(InputError, match="DXT_MPIIO module version") as exc:
        _parse(bad)
    assert exc.value.unit == "byte" and exc.value.line == 3114
    chunks = _parse(bad, strict=False)
    t = _concat(chunks)
    assert chunks[-1].skips.count == 1 and "DXT_MPIIO" in chunks[-1].skips.kept[0].reason
    assert set(t["ops"]["call"].to_pylist()) == {"DXT_POSIX"}


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        # record 1 claims 9 segments, the region holds 4
        (lambda b: b[: 104 + 5 * 32 + 104 + 4 * 32], r"DXT record 1 is cut short"),
        # record 0 has a negative read count
        (lambda b: b[:96] + struct.pack("<q", -1) + b[104:], r"DXT record 0: .*read_count -1"),
        # record 1 claims 2**40 segments
        (
            lambda b: b[: 104 + 5 * 32 + 88] + struct.pack("<q", 1 << 40) + b[104 + 5 * 32 + 96 :],
            r"DXT record 1: write_count 1099511627776",
        ),
        # a head cut short after the last record
        (lambda b: b + bytes(50), r"DXT record 2 is cut short \(50 bytes"),
    ],
    ids=["cut-short", "negative", "huge", "partial-head"],
)
def test_inconsistent_dxt_records_with_valid_checksums(tmp_path, blob, message):
    good, _ = _dxt_blob([(1, 0, b"h", 3, 2), (2, 0, b"h", 4, 5)], 3)
    assert len(good) == 2 * 104 + 14 * 32
    bad = _write_log(tmp_path / "bad.darshan", [("DXT_POSIX", blob(good), 1)])
    with pytest.raises(InputError, match=message) as exc:
        _parse(bad)
    assert "DXT_POSIX" in str(exc.value)
    chunks = _parse(bad, strict=False)
    assert chunks[-1].skips.count == 1
    assert "ops" not in _concat(chunks)


def test_large_dxt_region_streams_in_bounded_memory(monkeypatch, tmp_path):
    """A DXT region too large to keep is decoded piece by piece, chunk by chunk."""
    import tracemalloc

    import iochar.load.darshan as mod

    n = 1_000_000  # 32 MB of segments
    head = bytearray(104)
    struct.pack_into("<Qqq", head, 0, 9, 0, 0)
    struct.pack_into("<qq", head, 88, n // 4, n - n // 4)
    segs = np.zeros(n, "<i8,<i8,<f8,<f8")
    segs["f0"] = np.arange(n) * 4096
    segs["f1"] = 4096
    segs["f2"] = np.arange(n) * 1e-3
    segs["f3"] = segs["f2"] + 5e-4
    log = _write_log(tmp_path / "big.darshan", [("DXT_POSIX", bytes(head) + segs.tobytes(), 1)])
    monkeypatch.setattr(mod, "_DXT_KEEP", 1 << 20)
    monkeypatch.setattr(mod._header, "_INFLATE_MAX", 1 << 18)
    rows = 0
    tracemalloc.start()
    try:
        for c in DarshanLoader().parse(log, chunk_rows=20_000):
            if "ops" in c.tables:
                ops = c.tables["ops"]
                assert ops.num_rows <= 20_000
                assert ops["offset"][0].as_py() == rows * 4096
                rows += ops.num_rows
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rows == n
    # a compressed read (1 MiB), pieces, a chunk being built and one queued
    assert peak < segs.nbytes / 4, peak
