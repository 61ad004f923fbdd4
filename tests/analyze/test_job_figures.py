"""Issue 20 item 4, Darshan figures: interfaces (Carns Fig. 3(a), Table II), access-size CDF
(Fig. 10), I/O time per interface and data per mount point (PyDarshan's job summary).

Every expected number is computed here from the real logs in data/darshan through PyDarshan
(the reference reader, independent of iochar's loader), never by calling the function
under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import iochar
from iochar.analyze import jobs
from tests.conftest import DATA_DIR, requires_darshan

LOGS = [
    "ior_hdf5_example.darshan",
    "example.darshan",
    "darshan-logs/ior_pnetcdf_hdf5/"
    "shane_ior-PNETCDF_id438100-438100_11-9-41525-10280033558448664385_1.darshan",
    "darshan-logs/release_logs/mpi-io-test-x86_64-3.4.7.darshan",
    "lustre/sample-badost.darshan",
]
STD = {"<STDIN>", "<STDOUT>", "<STDERR>"}
#: PyDarshan's module names as the interfaces of Carns et al.'s Fig. 3(a).
IFACE = {"POSIX": "POSIX", "STDIO": "STDIO", "MPI-IO": "MPI-IO", "H5F": "HDF5", "H5D": "HDF5",
         "PNETCDF_FILE": "PnetCDF", "PNETCDF_VAR": "PnetCDF"}  # fmt: skip


def _report(rel):
    import darshan

    return darshan.DarshanReport(str(DATA_DIR / "darshan" / rel), read_all=True)


@pytest.fixture(scope="module")
def db():
    pytest.importorskip("darshan")
    store = iochar.connect(":memory:")
    for rel in LOGS:
        store.load(DATA_DIR / "darshan" / rel)
    yield store
    store.close()


def _job_of(db, rel):
    name = rel.rsplit("/", 1)[-1]
    return db.sql(
        "SELECT j.job_id FROM jobs j JOIN sources s USING (source_id) WHERE s.uri LIKE $u",
        params={"u": "%/" + name},
    ).fetchall()[0][0]


@requires_darshan
@pytest.mark.parametrize("rel", LOGS, ids=lambda r: r.rsplit("/", 1)[-1][:30])
def test_io_cost_is_pydarshans_io_cost(db, rel):
    """Per interface, read/write/meta time per process: PyDarshan's I/O Cost bars.

    PyDarshan sums each module's F_READ/WRITE/META_TIME over its records and divides by
    nprocs (H5F + H5D as HDF5, PNETCDF_FILE + _VAR as PnetCDF). A negative time (clock
    skew: example.darshan's STDIO record) is not a time; iochar keeps it as unknown, so it
    counts 0 here, and where a log has none the bars equal get_io_cost_df's exactly.
    """
    from darshan.experimental.plots.plot_io_cost import get_io_cost_df

    r = _report(rel)
    nprocs = r.metadata["job"]["nprocs"]
    want: dict[str, np.ndarray] = {}
    negative = False
    for mod, iface in IFACE.items():
        if mod not in r.records or len(r.records[mod]) == 0:
            continue
        f = r.records[mod].to_df()["fcounters"]
        cols = [f"{mod.replace('-', '')}_F_{k}_TIME" for k in ("READ", "WRITE", "META")]
        # H5F and PNETCDF_FILE records hold only a metadata time (as PyDarshan reindexes)
        v = f.reindex(columns=cols, fill_value=0.0).to_numpy(float)
        negative |= bool((v < 0).any())
        want[iface] = want.get(iface, np.zeros(3)) + np.clip(v, 0, None).sum(axis=0) / nprocs
    want = {k: v for k, v in want.items() if v.sum() > 0}
    got = jobs.io_cost(db, job_id=_job_of(db, rel)).set_index("interface")
    got = got[(got[["read_s", "write_s", "meta_s"]].sum(axis=1) > 0)]
    assert sorted(got.index) == sorted(want)
    cols = ["read_s_per_proc", "write_s_per_proc", "meta_s_per_proc"]
    for iface, v in want.items():
        assert got.loc[iface, cols].to_numpy(float) == pytest.approx(v, rel=1e-9, abs=1e-12)
    if not negative:
        ref = get_io_cost_df(r).rename(index={"MPIIO": "MPI-IO", "PNETCDF": "PnetCDF"})
        for iface in want:
            assert got.loc[iface, cols].to_numpy(float) == pytest.approx(
                ref.loc[iface, ["Read", "Write", "Meta"]].to_numpy(float), rel=1e-9, abs=1e-12
            )


@requires_darshan
def test_io_cost_of_ior_hdf5_by_hand(db):
    """ior_hdf5_example: 4 processes; POSIX write time summed over its records / 4."""
    r = _report("ior_hdf5_example.darshan")
    f = r.records["POSIX"].to_df()["fcounters"]
    want = float(f["POSIX_F_WRITE_TIME"].sum()) / 4
    got = jobs.io_cost(db, job_id=_job_of(db, "ior_hdf5_example.darshan")).set_index("interface")
    assert got.loc["POSIX", "nprocs"] == 4
    assert got.loc["POSIX", "write_s_per_proc"] == pytest.approx(want)
    rt = r.metadata["job"]["run_time"]
    io = float(f[["POSIX_F_READ_TIME", "POSIX_F_WRITE_TIME", "POSIX_F_META_TIME"]].sum().sum())
    assert got.loc["POSIX", "pct_runtime"] == pytest.approx(100 * io / 4 / rt, rel=1e-6)


def _longest_mount(path, mounts):
    best = None
    for mnt, fstype in mounts:
        if mnt == "/" or path == mnt or path.startswith(mnt.rstrip("/") + "/"):
            if best is None or len(mnt) > len(best[0]):
                best = (mnt, fstype)
    return best


@requires_darshan
@pytest.mark.parametrize("rel", LOGS[:4], ids=lambda r: r.rsplit("/", 1)[-1][:30])
def test_volume_by_mount_follows_the_logs_mount_table(rel):
    """POSIX + STDIO bytes of each file go to the longest mount point above its path."""
    r = _report(rel)
    names = r.data["name_records"]
    mounts = r.data["mounts"]
    want: dict[str, list[float]] = {}
    for mod in ("POSIX", "STDIO"):
        if mod not in r.records or len(r.records[mod]) == 0:
            continue
        c = r.records[mod].to_df()["counters"]
        for rid, br, bw in zip(c["id"], c[f"{mod}_BYTES_READ"], c[f"{mod}_BYTES_WRITTEN"],
                               strict=True):  # fmt: skip
            path = names[int(rid)]
            m = _longest_mount(path, mounts)
            key = m[0] if m else path
            acc = want.setdefault(key, [0.0, 0.0])
            acc[0] += max(float(br), 0.0)
            acc[1] += max(float(bw), 0.0)
    db = iochar.connect(":memory:")
    db.load(DATA_DIR / "darshan" / rel)
    got = jobs.volume_by_mount(db).set_index("mount")
    want = {k: v for k, v in want.items() if v[0] + v[1] > 0}
    got = got[(got["bytes_read"] + got["bytes_written"]) > 0]
    assert sorted(got.index) == sorted(want)
    for k, (br, bw) in want.items():
        assert got.loc[k, "bytes_read"] == br and got.loc[k, "bytes_written"] == bw, k
        assert bool(got.loc[k, "from_mount_table"])


def test_volume_by_mount_without_a_mount_table(store):
    """A strace capture has no mount table: the first path component, PyDarshan's rule."""
    store.load(DATA_DIR / "strace" / "ckpt_tt.strace")
    got = jobs.volume_by_mount(store)
    raw = store.sql(
        "SELECT f.path, sum(o.size) FILTER (WHERE o.op = 'write') AS w "
        "FROM ops o JOIN files f USING (job_id, file_id) "
        "WHERE o.op IN ('read', 'write') AND o.error IS NULL GROUP BY 1"
    ).df()
    want: dict[str, float] = {}
    for p, w in zip(raw["path"], raw["w"].fillna(0), strict=True):
        if p.startswith("/"):
            key = "/" + p.split("/")[1]
        elif p.startswith("<"):
            key = "(standard streams)"
        elif ":[" in p:
            key = "(pipes, sockets)"
        else:
            key = "(relative paths)"
        want[key] = want.get(key, 0.0) + float(w)
    g = got.set_index("mount")
    for k, w in want.items():
        if w > 0:
            assert g.loc[k, "bytes_written"] == w, k
    assert not g["from_mount_table"].any()


@requires_darshan
def test_interfaces_are_the_modules_with_records(db):
    """Fig. 3(a): each job's interfaces are PyDarshan's modules with records; bins by nprocs."""
    m = jobs.job_metrics(db)
    expect_jobs: dict[tuple[int, str], int] = {}
    bin_jobs: dict[int, int] = {}
    for rel in LOGS:
        r = _report(rel)
        used = set()
        for mod, recs in r.records.items():
            if mod in IFACE and len(recs):
                df = recs.to_df()
                part = df["counters"] if isinstance(df, dict) else df
                paths = {r.data["name_records"].get(int(i), "") for i in part["id"]}
                if paths - STD:
                    used.add(IFACE[mod])
        n = int(r.metadata["job"]["nprocs"])
        hi = 4 ** math.ceil(math.log(n, 4) - 1e-12) if n > 1 else 1
        bin_jobs[hi] = bin_jobs.get(hi, 0) + 1
        for u in used:
            expect_jobs[(hi, u)] = expect_jobs.get((hi, u), 0) + 1
        row = m.jobs[m.jobs["job_id"] == _job_of(db, rel)].iloc[0]
        assert set(filter(None, row["interfaces"].split(","))) == used, rel
    t = jobs.interface_table(m)
    got = {(int(h), i): int(j) for h, i, j in zip(t["procs_hi"], t["interface"], t["jobs"],
                                                   strict=True)}  # fmt: skip
    assert got == expect_jobs
    for h, n in bin_jobs.items():
        assert (t.loc[t["procs_hi"] == h, "bin_jobs"] == n).all()
    assert np.allclose(t["pct_jobs"], 100 * t["jobs"] / t["bin_jobs"])
    apis = jobs.api_table(m)
    assert set(apis["apis"]) <= {"H,N,M,S,P", "H,M,S,P", "N,M,S,P", "M,S,P", "M,P", "S,P", "P",
                                 "H,M,P", "N,M,P", "H,N,M,P"}  # fmt: skip


@requires_darshan
def test_size_cdf_sums_the_posix_histograms(db):
    """Fig. 10: POSIX_SIZE_{READ,WRITE}_* summed over every log's records, cumulated."""
    bins = ["0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M",
            "10M_100M", "100M_1G", "1G_PLUS"]  # fmt: skip
    want = {"read": np.zeros(10), "write": np.zeros(10)}
    m = jobs.job_metrics(db)
    for rel in LOGS:
        r = _report(rel)
        assert len(r.records["POSIX"]) > 0  # every log here has POSIX histograms
        c = r.records["POSIX"].to_df()["counters"]
        names = r.data["name_records"]
        c = c[[names.get(int(i), "") not in STD for i in c["id"]]]
        for op, tag in (("read", "READ"), ("write", "WRITE")):
            cols = [f"POSIX_SIZE_{tag}_{b}" for b in bins]
            want[op] += c[cols].clip(lower=0).sum().to_numpy(float)
    cdf = jobs.size_cdf(m)
    for op in ("read", "write"):
        sub = cdf[cdf["op"] == op]
        assert sub["count"].tolist() == want[op].astype(int).tolist()
        assert np.allclose(sub["cum_share"], np.cumsum(want[op]) / want[op].sum())
        assert cdf.evidence["most_common"][op] == sub["bin"].iloc[int(np.argmax(want[op]))]
