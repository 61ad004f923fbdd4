"""darshan: logs of every Darshan release and of every module, against pydarshan.

The logs under ``data/darshan/darshan-logs/`` come from the darshan-hpc project's
public collection (see ``data/darshan/SOURCE.md``): one per log format version
(3.00 to 3.41, Darshan 3.0.0 to 3.5.0, little- and big-endian), the modules iochar
keeps raw in ``module_counters`` (DFS, DAOS, APMPI, APXC, HEATMAP, BG/Q, LUSTRE) and
logs whose modules Darshan flagged incomplete. Every record and counter must be what
pydarshan's backend (libdarshan-util 3.5.0) reads, read in a fresh interpreter per log
(``_pydarshan_truth.py``: libdarshan-util's APMPI/APXC reader keeps process-wide state).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pyarrow as pa
import pytest

from iochar import schema
from iochar.load.darshan import SUPPORTED_VERSIONS, DarshanLoader
from iochar.load.darshan._header import MAGIC_NR as MAGIC
from iochar.load.darshan._header import _inflate

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("darshan") is None, reason="the darshan package is missing"
)

DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "darshan"
COLLECTION_DIR = DATA_DIR / "darshan-logs"
COLLECTION = sorted(COLLECTION_DIR.rglob("*.darshan"))
ALL_BUNDLED = sorted(DATA_DIR.glob("*.darshan")) + COLLECTION
TRUTH = Path(__file__).with_name("_pydarshan_truth.py")

#: Modules whose records name a file: matched with pydarshan's by (record id, rank).
FILE_MODULES = {
    "POSIX", "MPI-IO", "STDIO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR", "DFS", "DAOS",
}  # fmt: skip


def _rel(p: Path) -> str:
    return p.relative_to(DATA_DIR).as_posix()


def _log(name: str) -> Path:
    return COLLECTION_DIR / name


@functools.cache
def _truth(path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, str(TRUTH), str(path)], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)


@functools.cache
def _parsed(path: Path):
    chunks = list(DarshanLoader().parse(path))
    tables: dict[str, list[pa.Table]] = {}
    for c in chunks:
        for name, t in c.tables.items():
            tables.setdefault(name, []).append(schema.check_frame(name, t))
    return chunks, {k: pa.concat_tables(v) for k, v in tables.items()}


def _ours(path: Path) -> dict[str, list[tuple[int | None, int, dict[str, float]]]]:
    """module -> [(record id or None, rank, {counter: value})] in record order."""
    _, t = _parsed(path)
    if "module_counters" not in t:
        return {}
    rid = {}
    if "files" in t:
        files = t["files"]
        rid = dict(zip(files["file_id"].to_pylist(), files["record_id"].to_pylist(), strict=True))
    mc = t["module_counters"].to_pydict()
    recs: dict[tuple[str, int], tuple] = {}
    for mod, rec, fid, rank, counter, value in zip(
        mc["module"],
        mc["record"],
        mc["file_id"],
        mc["rank"],
        mc["counter"],
        mc["value"],
        strict=True,
    ):
        key = (mod, rec)
        if key not in recs:
            recs[key] = (rid.get(fid), -1 if rank is None else rank, {})
        recs[key][2][counter] = value
    out: dict[str, list] = {}
    for (mod, _), r in sorted(recs.items(), key=lambda kv: kv[0][1]):
        out.setdefault(mod, []).append(r)
    return out


def _same(a, b) -> bool:
    if a is None:  # NaN in the log (pydarshan's JSON writes None)
        return b is None or math.isnan(b)
    return a == b or abs(a - b) <= 1e-12 * abs(a)


# ------------------------------------------------------------- coverage --


def test_collection_covers_every_format_module_and_flag():
    """The shipped logs span every log format libdarshan-util 3.5 reads and the modules."""
    versions = {p.read_bytes()[:4].decode() for p in COLLECTION}
    assert versions == set(SUPPORTED_VERSIONS)
    modules: set[str] = set()
    partial: set[str] = set()
    for p in COLLECTION:
        chunks, _ = _parsed(p)
        modules |= set(chunks[-1].meta["modules"])
        partial |= set(chunks[0].meta["incomplete"])
    assert {"DFS", "DAOS", "APMPI", "APXC", "HEATMAP", "BG/Q", "LUSTRE", "PNETCDF_VAR"} <= modules
    assert {"STDIO", "POSIX", "DXT_POSIX", "DXT_MPIIO"} <= partial
    big_endian = [p for p in COLLECTION if struct.unpack_from(">q", p.read_bytes(), 8)[0] == MAGIC]
    assert {p.read_bytes()[:4] for p in big_endian} == {b"3.00", b"3.10"}


# ------------------------------------------------------ against pydarshan --


@pytest.mark.parametrize("log", ALL_BUNDLED, ids=_rel)
def test_every_record_and_counter_equals_pydarshan(log):
    """Every record of every module but DXT and LUSTRE, counter by counter."""
    want = _truth(log)["records"]
    ours = _ours(log)
    chunks, _ = _parsed(log)
    for module, theirs in want.items():
        mine = ours.get(module, [])
        assert len(mine) == len(theirs), module
        assert chunks[-1].meta["modules"][module]["records"] == len(theirs), module
        if module in FILE_MODULES:
            by_key = {(r[0], r[1]): r[2] for r in mine}
            pairs = [(c, by_key[(rid, rank)]) for rid, rank, c in theirs]
        else:  # no record id kept (file_id NULL): log order
            assert [r[1] for r in mine] == [r[1] for r in theirs], module
            pairs = [(c, r[2]) for (_, _, c), r in zip(theirs, mine, strict=True)]
        for c, m in pairs:
            for counter, value in c.items():
                if isinstance(value, str):  # APXC memory/cluster mode names
                    continue
                assert _same(value, m[counter]), (module, counter, value, m[counter])


@pytest.mark.parametrize("log", ALL_BUNDLED, ids=_rel)
def test_paths_are_the_name_records(log):
    """files.path is the log's name record for the id; an empty name is NULL."""
    names = _truth(log)["names"]
    _, t = _parsed(log)
    if "files" not in t:
        assert not names or set(t) == {"jobs"}
        return
    files = t["files"]
    for rid, path in zip(files["record_id"].to_pylist(), files["path"].to_pylist(), strict=True):
        assert path == (names.get(str(rid)) or None)


@pytest.mark.parametrize("log", ALL_BUNDLED, ids=_rel)
def test_incomplete_modules_are_libdarshan_utils(log):
    chunks, _ = _parsed(log)
    assert chunks[0].meta["incomplete"] == _truth(log)["partial"]
    assert chunks[0].meta["partial"] == bool(_truth(log)["partial"])


# ------------------------------------------------------------ the formats --


def test_format_300_logs_load():
    """Darshan 3.0.x logs (format 3.00): the header has per-module versions (360 bytes)."""
    for name in ("mpi-io-test-x86_64-3.0.0.darshan", "mpi-io-test-ppc64-3.0.1.darshan"):
        chunks, t = _parsed(_log(f"release_logs/{name}"))
        assert chunks[0].meta["tool_version"] == "3.00"
        assert chunks[0].meta["modules"]["POSIX"]["version"] == 1
        assert t["jobs"]["nprocs"].to_pylist() == [4]  # mpi-io-test with 4 processes
        fs = t["file_stats"].to_pylist()
        posix = [r for r in fs if r["module"] == "POSIX"]
        assert len(posix) == 1 and posix[0]["nranks"] == 4
        # mpi-io-test writes then reads the same bytes
        assert posix[0]["bytes_read"] == posix[0]["bytes_written"] > 0
        assert t["files"]["path"].to_pylist()[0].endswith("mpi-io-test.tmp.dat")


def test_every_release_reads_the_same_benchmark():
    """mpi-io-test with the same defaults moves the same POSIX bytes in every release."""
    moved = set()
    for p in sorted((COLLECTION_DIR / "release_logs").glob("*.darshan")):
        _, t = _parsed(p)
        posix = [r for r in t["file_stats"].to_pylist() if r["module"] == "POSIX"]
        moved.add((sum(r["bytes_read"] for r in posix), sum(r["bytes_written"] for r in posix)))
    assert len(moved) == 1


# ------------------------------------------------------ raw modules --


def test_dfs_daos_log_keeps_every_module_raw():
    log = _log("ior_daos/snyder_ior-DFS_id4681120-53379_5-8-15060-3270540599978592154_1.darshan")
    chunks, t = _parsed(log)
    meta = chunks[-1].meta["modules"]
    assert meta["DFS"]["kept_in"] == meta["DAOS"]["kept_in"] == "module_counters"
    assert meta["POSIX"]["kept_in"] == "file_stats"
    mc = t["module_counters"].to_pandas()
    dfs = mc[mc.module == "DFS"].set_index("counter")["value"]
    # IOR, 16 processes, default 256 KiB transfers: 64 reads and 64 writes of 16 MiB
    assert dfs["DFS_BYTES_WRITTEN"] == dfs["DFS_BYTES_READ"] == 16 * 2**20
    assert dfs["DFS_WRITES"] == dfs["DFS_READS"] == 64
    sizes = t["access_sizes"].to_pandas()
    assert set(sizes[sizes.module == "DFS"]["bin_lo"]) == {102401}
    # the DFS file and a DAOS object have an empty name record: no path, and said so
    unnamed = [w for w in chunks[-1].warnings if "empty name" in w]
    assert unnamed and unnamed[0].split(": ")[1].startswith("2 record id(s)")


def test_apmpi_apxc_read_alike_however_many_logs_a_process_reads():
    """libdarshan-util's APMPI/APXC reader misreads the second such log of a process;
    iochar decodes these regions itself: header record then one record per rank."""
    log = _log("apmpi_apxc/mpi-io-test.darshan")
    first = list(DarshanLoader().parse(log))
    list(DarshanLoader().parse(_log("release_logs/mpi-io-test-x86_64-3.4.7.darshan")))
    again = list(DarshanLoader().parse(log))

    def mc(chunks):
        return pa.concat_tables(
            c.tables["module_counters"] for c in chunks if "module_counters" in c.tables
        )

    assert mc(first).equals(mc(again))
    nprocs = first[0].tables["jobs"]["nprocs"][0].as_py()
    assert first[-1].meta["modules"]["APMPI"]["records"] == 1 + nprocs
    assert first[-1].meta["modules"]["APXC"]["records"] == 2  # header + 1 node


# --------------------------------------------------- incomplete modules --


def test_incomplete_modules_are_recorded_and_kept():
    chunks, t = _parsed(_log("partial_data_stdio/partial_data_stdio.darshan"))
    meta = chunks[-1].meta["modules"]
    assert chunks[0].meta["incomplete"] == ["STDIO"] and meta["STDIO"]["partial"]
    # more than 1024 fopen()s; Darshan kept the records made before its limit
    assert 1000 < meta["STDIO"]["records"] < 1025
    assert any("STDIO contain incomplete data" in w for w in chunks[0].warnings)
    chunks, _ = _parsed(_log("imbalanced_io/imbalanced-io.darshan"))
    assert chunks[0].meta["incomplete"] == ["POSIX"]


def _set_partial_bit(tmp_path, log: Path, bit: int) -> Path:
    data = bytearray(log.read_bytes())
    version = data[:4].decode()
    code = SUPPORTED_VERSIONS[version][2]
    off = struct.calcsize("<8sqB" + code) - struct.calcsize("<" + code[-1])
    (flag,) = struct.unpack_from("<" + code[-1], data, off)
    struct.pack_into("<" + code[-1], data, off, flag | (1 << bit))
    out = tmp_path / log.name
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize(
    ("log", "bit", "module"),
    [
        # format 3.10 numbers STDIO 7 (no H5D, no PNETCDF_VAR yet); 3.21 numbers it 8
        ("release_logs/mpi-io-test-x86_64-3.1.8.darshan", 7, "STDIO"),
        ("release_logs/mpi-io-test-x86_64-3.4.0.darshan", 8, "STDIO"),
        ("release_logs/mpi-io-test-x86_64-3.5.0.darshan", 9, "STDIO"),
        ("release_logs/mpi-io-test-x86_64-3.5.0.darshan", 1, "POSIX"),
    ],
)
def test_partial_bits_are_numbered_as_libdarshan_util_does(tmp_path, log, bit, module):
    bad = _set_partial_bit(tmp_path, _log(log), bit)
    chunks = list(DarshanLoader().parse(bad))
    assert chunks[0].meta["incomplete"] == [module] == _truth(bad)["partial"]


def test_a_flagged_module_without_data_is_reported(tmp_path):
    """darshan-parser reports the flag of a module that wrote no region too."""
    bad = _set_partial_bit(tmp_path, _log("release_logs/mpi-io-test-x86_64-3.5.0.darshan"), 10)
    chunks = list(DarshanLoader().parse(bad))
    assert chunks[0].meta["incomplete"] == ["DXT_POSIX"]
    entry = chunks[-1].meta["modules"]["DXT_POSIX"]
    assert entry["bytes"] == 0 and entry["partial"] and entry["records"] == 0
    assert not any("ops" in c.tables for c in chunks)


# ------------------------------------------------- a module from later --


def test_module_newer_than_the_library_is_kept_not_refused(tmp_path):
    """A region in a slot libdarshan-util has no module for is checked, listed, not read."""
    log = _log("release_logs/mpi-io-test-x86_64-3.5.0.darshan")
    data = bytearray(log.read_bytes())
    blob = zlib.compress(b"\x00" * 64)
    slot = 40
    head = struct.calcsize("<8sqBxxxxxxxQ")
    struct.pack_into("<QQ", data, head + 16 + 16 * slot, len(data), len(blob))
    struct.pack_into("<I", data, head + 16 + 16 * 64 + 4 * slot, 1)
    out = tmp_path / "later.darshan"
    out.write_bytes(bytes(data) + blob)
    chunks = list(DarshanLoader().parse(out))
    meta = chunks[-1].meta["modules"]
    assert meta[f"slot {slot}"] == {
        "version": 1, "bytes": len(blob), "partial": False, "records": None, "kept_in": None,
    }  # fmt: skip
    assert meta["POSIX"]["records"] == 1
    assert any(f"slot {slot} is newer" in w for w in chunks[0].warnings)
    # its bytes are still checked: a corrupt region is refused like any other
    bad = tmp_path / "later-bad.darshan"
    bad.write_bytes(bytes(data) + blob[:-3] + b"xyz")
    with pytest.raises(Exception, match="slot 40"):
        list(DarshanLoader().parse(bad))


# ----------------------------------------------------------------- store --


def test_store_keeps_the_flags_in_sources_meta():
    import iochar

    db = iochar.connect(":memory:")
    db.load(_log("partial_data_stdio/partial_data_stdio.darshan"))
    db.load(_log("release_logs/mpi-io-test-x86_64-3.0.0.darshan"))
    rows = db.sql(
        "SELECT json_extract(meta, '$.incomplete')::VARCHAR, "
        "json_extract(meta, '$.modules.STDIO.partial')::VARCHAR FROM sources ORDER BY source_id"
    ).fetchall()
    assert rows == [('["STDIO"]', "true"), ("[]", None)]


def _with_region(tmp_path, log: Path, slot: int, transform) -> Path:
    """``log`` (format 3.41, little-endian) with module slot ``slot``'s region replaced by
    ``transform(decompressed bytes)``, recompressed and appended (the map points at it)."""
    data = bytearray(log.read_bytes())
    head = struct.calcsize("<8sqBxxxxxxxQ")
    off, length = struct.unpack_from("<QQ", data, head + 16 + 16 * slot)
    raw = b"".join(_inflate([bytes(data[off : off + length])], 0))  # concatenated streams
    region = zlib.compress(transform(raw))
    struct.pack_into("<QQ", data, head + 16 + 16 * slot, len(data), len(region))
    out = tmp_path / f"slot{slot}-{log.name}"
    out.write_bytes(bytes(data) + region)
    return out


def test_apmpi_region_of_partial_records_is_refused_or_skipped(tmp_path):
    """The APMPI region is a header record and whole per-rank records; a cut one is not
    read as fewer records (libdarshan-util's reading), it is an error."""
    from iochar.errors import InputError

    log = _log("release_logs/mpi-io-test-x86_64-3.4.7.darshan")
    apmpi = 14  # libdarshan-util's module number, which format 3.41 uses as is
    same = _with_region(tmp_path, log, apmpi, lambda b: b)
    assert list(DarshanLoader().parse(same))[-1].meta["modules"]["APMPI"]["records"] == 5
    cut = _with_region(tmp_path, log, apmpi, lambda b: b[:-8])
    with pytest.raises(InputError, match="APMPI region of one 48-byte header record"):
        list(DarshanLoader().parse(cut))
    chunks = list(DarshanLoader().parse(cut, strict=False))
    assert chunks[-1].meta["modules"]["POSIX"]["records"] == 1
    assert any("APMPI module skipped" in r.reason for r in chunks[-1].skips.kept)
