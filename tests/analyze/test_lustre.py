"""Lustre OSTs (issue 20, item 2): layouts, bytes and rate per OST, imbalance, slow OST.

Every expected number is computed here from PyDarshan's own reading of the same logs
(``darshan.DarshanReport(...).records['LUSTRE']``, ``['POSIX']`` and ``['DXT_POSIX']``),
never through iochar's store, with the rules :mod:`iochar.analyze.lustre` states: Lustre
RAID-0 striping (lustre-release ``lustre/lov/lov_offset.c`` ``lov_stripe_number``) for
bytes, POSIX_F_WRITE_TIME / READ_TIME joined to OST ids for rates, median / OST rate for
the slowdown. Logs: ``data/darshan/**`` (``lustre/`` holds PyDarshan's sample-badost /
sample-goodost and MACSio), ``data/darshan_noposix/`` (layouts without POSIX records) and
the PyDarshan wheel's own logs.
"""

from __future__ import annotations

import statistics
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import iochar
from iochar.analyze import insights, lustre
from iochar.analyze.insights import rules_ranks
from iochar.errors import ParameterError

darshan = pytest.importorskip("darshan", reason="PyDarshan reads the logs (iochar[darshan])")

DATA = Path(__file__).resolve().parents[2] / "data"
LOGS = sorted((DATA / "darshan").rglob("*.darshan")) + [
    DATA / "darshan_noposix" / "noposix.darshan"
]
WHEEL = Path(darshan.__file__).resolve().parent
WHEEL_LOGS = sorted(
    {
        p.name: p
        for p in [*WHEEL.glob("tests/input/*.darshan"), *WHEEL.glob("examples/**/*.darshan")]
    }.values()
)

BADOST = "sample-badost.darshan"
GOODOST = "sample-goodost.darshan"
MACSIO = "shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158.darshan"
HDF5_DXT = "ior_hdf5_example.darshan"
NOPOSIX = "noposix.darshan"
EXAMPLE = "example.darshan"


def _load(paths):
    store = iochar.connect(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # partial-module warnings of two logs
        for path in paths:
            store.load(path)
    return store


@pytest.fixture(scope="module")
def db():
    store = _load(LOGS)
    yield store
    store.close()


@pytest.fixture(scope="module")
def jobs(db):
    return dict(
        db.sql(
            "SELECT regexp_extract(s.uri, '[^/]*$'), j.job_id "
            "FROM jobs j JOIN sources s USING (source_id)"
        ).fetchall()
    )


def _path(name):
    (path,) = [p for p in LOGS if p.name == name]
    return str(path)


def _lustre(path):
    """PyDarshan's LUSTRE records: {record id: [component dicts]} (first record of an id),
    and the module's layout version."""
    rep = darshan.DarshanReport(str(path), read_all=False)
    if "LUSTRE" not in rep.modules:
        return {}, None
    rep.mod_read_all_lustre_records()
    comps = rep.records["LUSTRE"].to_df()["components"]
    out, seen_rank = {}, {}
    for row in comps.itertuples(index=False):
        rid = int(row.id)
        if rid in seen_rank and seen_rank[rid] != row.rank:
            continue  # a later record of the same file (another rank): same layout
        seen_rank.setdefault(rid, row.rank)
        out.setdefault(rid, []).append(
            {
                "stripe_size": int(row.LUSTRE_COMP_STRIPE_SIZE),
                "stripe_count": int(row.LUSTRE_COMP_STRIPE_COUNT),
                "ext_start": int(row.LUSTRE_COMP_EXT_START),
                "ext_end": int(row.LUSTRE_COMP_EXT_END),
                "osts": [int(o) for o in row.LUSTRE_OST_IDS if o >= 0],
            }
        )
    return out, rep.modules["LUSTRE"]["ver"]


def _posix(path):
    """{record id: (bytes written, write time, bytes read, read time)} summed over records."""
    rep = darshan.DarshanReport(str(path), read_all=False)
    if "POSIX" not in rep.modules:
        return {}
    rep.mod_read_all_records("POSIX")
    d = rep.records["POSIX"].to_df()
    f = d["counters"].merge(d["fcounters"], on=["id", "rank"])
    cols = ["POSIX_BYTES_WRITTEN", "POSIX_F_WRITE_TIME", "POSIX_BYTES_READ", "POSIX_F_READ_TIME"]
    g = f.groupby("id")[cols].sum()
    return {
        int(i): tuple(float(v) for v in row) for i, row in zip(g.index, g.to_numpy(), strict=True)
    }


def _even_per_ost(path):
    """Per OST, from PyDarshan: bytes written/read (bytes / k over the file's k distinct
    OSTs) and the summed write/read times of its files."""
    layouts, _ = _lustre(path)
    posix = _posix(path)
    per = defaultdict(lambda: np.zeros(4))
    for rid, comps in layouts.items():
        osts = {o for c in comps for o in c["osts"]}
        if rid not in posix or not osts:
            continue
        bw, wt, br, rt = posix[rid]
        for o in osts:
            per[o] += [bw / len(osts), wt, br / len(osts), rt]
    return per


def _rates(per, col_b, col_t, floor=lustre.MIN_OST_BYTES):
    return {o: v[col_b] / v[col_t] for o, v in per.items() if v[col_b] > floor and v[col_t] > 0}


def _rows(table, job):
    return table[table["job_id"] == job].set_index("ost")


# -- layouts ----------------------------------------------------------------------------


def _check_layouts(store, path, job):
    want, version = _lustre(path)
    got = lustre.layouts(store, job)
    ids = dict(
        store.sql("SELECT file_id, record_id FROM files WHERE job_id = $j", {"j": job}).fetchall()
    )
    assert len(got) == sum(len(c) for c in want.values())
    assert got[["job_id", "file_id"]].drop_duplicates().shape[0] == len(want)
    for row in got.itertuples(index=False):
        comp = want[int(ids[row.file_id])][row.component - 1]
        assert row.stripe_size == comp["stripe_size"]
        assert row.stripe_count == comp["stripe_count"]
        assert row.osts == comp["osts"]  # in stripe order
        assert row.ext_start == comp["ext_start"]
        if comp["ext_end"] < 0:  # Darshan's -1: to end of file
            assert pd.isna(row.ext_end)
        else:
            assert row.ext_end == comp["ext_end"]
        assert row.layout_version == version
    return got


def test_layouts_match_pydarshan_on_every_log_with_lustre(db, jobs):
    """Every bundled log with a LUSTRE module, layout versions 1 (Darshan < 3.4, which
    libdarshan-util converts) and 2 (3.4+): stripe size, count and OSTs per file."""
    seen = set()
    for path in LOGS:
        _, version = _lustre(path)
        if version is None:
            assert lustre.layouts(db, jobs[path.name]).empty
            continue
        seen.add(version)
        _check_layouts(db, path, jobs[path.name])
    assert seen == {1, 2}
    got = lustre.layouts(db, jobs[BADOST])
    assert len(got) == 2048 and set(got["stripe_count"]) == {1}
    assert set(got["stripe_size"]) == {1 << 20}
    assert {o for v in got["osts"] for o in v} == set(range(24))
    assert len(lustre.layouts(db, jobs[EXAMPLE]).iloc[0]["osts"]) == 24


def test_layouts_of_the_wheels_logs():
    """The PyDarshan wheel's logs (tests/input and examples), as shipped."""
    with_lustre = [p for p in WHEEL_LOGS if _lustre(p)[1] is not None]
    assert {p.name for p in with_lustre} >= {BADOST, GOODOST, NOPOSIX, EXAMPLE, HDF5_DXT}
    store = _load(with_lustre)
    try:
        jobs = dict(
            store.sql(
                "SELECT s.uri, j.job_id FROM jobs j JOIN sources s USING (source_id)"
            ).fetchall()
        )
        by_uri = {Path(u).resolve(): j for u, j in jobs.items()}
        for p in with_lustre:
            if p.resolve() in by_uri:  # a copy with the same bytes is loaded once
                _check_layouts(store, p, by_uri[p.resolve()])
    finally:
        store.close()


# -- per-OST bytes and rates, the slow OST ------------------------------------------------


def test_badost_names_ost_14(db, jobs):
    per = _even_per_ost(_path(BADOST))
    rates = _rates(per, 0, 1)
    median = statistics.median(rates.values())
    assert len(rates) == 24
    got = _rows(lustre.ost_table(db, jobs[BADOST]), jobs[BADOST])
    assert sorted(got.index) == sorted(per)
    for o, v in per.items():
        assert got.loc[o, "bytes_written"] == pytest.approx(v[0])
        assert got.loc[o, "write_time_s"] == pytest.approx(v[1])
        assert got.loc[o, "write_bytes_per_s"] == pytest.approx(rates[o])
        assert got.loc[o, "write_slowdown"] == pytest.approx(median / rates[o])
        assert np.isnan(got.loc[o, "read_bytes_per_s"])  # IOR -w: nothing read, no read rate
    assert got["files"].sum() == 2048 and got.loc[14, "files"] == 85
    slow = got.index[got["slowdown"] >= lustre.SLOW_OST_RATIO].tolist()
    assert slow == [14] and 45 < got.loc[14, "slowdown"] < 55  # "~48x" (issue 20)
    s = lustre.ost_summary(db, jobs[BADOST]).iloc[0]
    assert s["slowest_ost"] == 14 and s["slow_ost_ratio"] == pytest.approx(median / rates[14])
    assert s["rated_osts"] == 24 and s["split"] == "even" and s["layout_version"] == 1
    # files on OST 14 took most of the job's write time
    layouts, _ = _lustre(_path(BADOST))
    posix = _posix(_path(BADOST))
    on14 = [r for r, c in layouts.items() if 14 in c[0]["osts"]]
    share = sum(posix[r][1] for r in on14) / sum(v[1] for v in posix.values())
    assert s["slowest_ost_files"] == len(on14) == 85
    assert s["slowest_ost_time_share"] == pytest.approx(share) and share > 0.5


def test_goodost_has_no_slow_ost_and_even_bytes(db, jobs):
    per = _even_per_ost(_path(GOODOST))
    rates = _rates(per, 0, 1)
    ratio = statistics.median(rates.values()) / min(rates.values())
    assert ratio < 2
    got = _rows(lustre.ost_table(db, jobs[GOODOST]), jobs[GOODOST])
    assert (got["slowdown"] < lustre.SLOW_OST_RATIO).all()
    s = lustre.ost_summary(db, jobs[GOODOST]).iloc[0]
    assert s["slow_ost_ratio"] == pytest.approx(ratio)
    # imbalance: 48 files of 1 GiB on 24 OSTs, two each
    b = np.array([v[0] + v[2] for v in per.values()])
    assert s["osts"] == len(b) == 24
    assert s["ost_imbalance"] == pytest.approx(b.max() / b.mean())
    assert s["ost_bytes_cv"] == pytest.approx(b.std() / b.mean(), abs=1e-12)
    assert s["bytes"] == pytest.approx(b.sum()) == 48 * 2**30


def test_imbalance_one_big_file_on_one_ost(db, jobs):
    """imbalanced-io: one 105 GB shared file on a single OST among 12."""
    name = "imbalanced-io.darshan"
    per = _even_per_ost(_path(name))
    b = np.array([v[0] + v[2] for v in per.values()])
    s = lustre.ost_summary(db, jobs[name]).iloc[0]
    assert s["ost_imbalance"] == pytest.approx(b.max() / b.mean()) and s["ost_imbalance"] > 7
    assert s["ost_bytes_cv"] == pytest.approx(b.std() / b.mean())
    assert s["busiest_ost"] == max(per, key=lambda o: per[o][0] + per[o][2])


def test_summary_and_bad_ost_rule_agree_on_every_job(db, jobs):
    summary = lustre.ost_summary(db).set_index("job_id")
    found = insights.run(db, rules=[rules_ranks.BAD_OST], params={"slow_ost_ratio": 0})
    found = found.set_index("job_id")
    assert set(found.index) == set(summary.index[summary["slow_ost_ratio"].notna()])
    for job, f in found.iterrows():
        ev = f["evidence"]
        assert summary.loc[job, "slow_ost_ratio"] == pytest.approx(ev["slow_ost_ratio"])
        assert summary.loc[job, "slowest_ost"] == ev["slowest_ost"]
        assert summary.loc[job, "rated_osts"] == ev["osts"]
    assert found.loc[jobs[BADOST], "evidence"]["slowest_ost"] == 14


def test_no_lustre_records(db, jobs):
    job = jobs[MACSIO]
    for fn in (lustre.layouts, lustre.ost_table, lustre.ost_summary):
        t = fn(db, job)
        assert t.empty and f"job {job} has no Darshan LUSTRE records" in t.evidence["reason"]
    assert lustre.ost_table(db, jobs[BADOST]).evidence["reason"] is None
    empty = iochar.connect(":memory:")
    t = lustre.ost_summary(empty)
    assert t.empty and t.evidence["reason"] == "the database holds no Darshan LUSTRE records"
    assert lustre.slowest_job(t) is None
    assert lustre.slowest_job(lustre.ost_summary(db)) == jobs[BADOST]


def test_layouts_without_posix_data(db, jobs):
    """noposix: 519 files laid out on 222 OSTs, no POSIX module: no bytes, no rate."""
    job = jobs[NOPOSIX]
    want, _ = _lustre(_path(NOPOSIX))
    s = lustre.ost_summary(db, job).iloc[0]
    assert s["files"] == len(want) == 519 and s["posix_files"] == 0
    assert s["osts"] == len({o for c in want.values() for o in c[0]["osts"]}) == 222
    assert s["split"] is None and np.isnan(s["bytes"]) and np.isnan(s["slow_ost_ratio"])
    t = lustre.ost_table(db, job)
    assert len(t) == 222 and t["bytes"].isna().all() and (t["posix_files"] == 0).all()


# -- bytes by DXT offsets ---------------------------------------------------------------


def _dxt_segments(path, rid):
    rep = darshan.DarshanReport(str(path), read_all=False)
    rep.mod_read_all_dxt_records("DXT_POSIX", dtype="pandas")
    out = {"write": [], "read": []}
    for rec in rep.records["DXT_POSIX"]:
        if int(rec["id"]) != rid:
            continue
        for op in out:
            seg = rec[f"{op}_segments"]
            out[op] += list(zip(seg["offset"].astype(int), seg["length"].astype(int), strict=True))
    return out


def _holds(comp, x):
    """The component's extent [EXT_START, EXT_END) holds offset x (EXT_END -1: EOF)."""
    return comp["ext_start"] <= x and (comp["ext_end"] < 0 or x < comp["ext_end"])


def _stripe_walk(segments, comps):
    """Bytes per OST of the segments, walking each one stripe chunk at a time."""
    per = defaultdict(int)
    for off, length in segments:
        x, end = off, off + length
        while x < end:
            (c,) = [
                c for c in comps if c["ext_start"] <= x and (c["ext_end"] < 0 or x < c["ext_end"])
            ]
            s, n = c["stripe_size"], len(c["osts"])
            stop = min(end, (x // s + 1) * s, end if c["ext_end"] < 0 else c["ext_end"])
            per[c["osts"][(x % (s * n)) // s]] += stop - x
            x = stop
    return per


def test_dxt_offsets_on_the_real_single_stripe_file(db, jobs):
    """ior_hdf5_example: DXT traced the file; its one OST (106) gets all its bytes."""
    job = jobs[HDF5_DXT]
    ((rid, comps),) = _lustre(_path(HDF5_DXT))[0].items()
    bw, _, br, _ = _posix(_path(HDF5_DXT))[rid]
    got = _rows(lustre.ost_table(db, job), job)
    assert list(got.index) == comps[0]["osts"] == [106]
    assert got.loc[106, "bytes_written"] == bw and got.loc[106, "bytes_read"] == br
    assert got.loc[106, "dxt_files"] == 1
    assert lustre.layouts(db, job).iloc[0]["split"] == "dxt-offsets"


def test_dxt_offsets_split_over_striped_components():
    """The real DXT_POSIX offsets of ior_hdf5_example (256 KiB transfers at 2048 + k *
    256 KiB, small HDF5 metadata writes) under a two-component layout put in the store
    in place of the file's one stripe: [0, 1 MiB) on 2 OSTs of 64 KiB, then [1 MiB, EOF)
    on 3 OSTs of 128 KiB, OST 5 in both. Expected bytes: each segment walked chunk by
    chunk, each OST's share of the traced bytes times the POSIX bytes."""
    path = _path(HDF5_DXT)
    ((rid, _),) = _lustre(path)[0].items()
    comps = [
        {"stripe_size": 65536, "ext_start": 0, "ext_end": 1 << 20, "osts": [5, 9]},
        {"stripe_size": 131072, "ext_start": 1 << 20, "ext_end": -1, "osts": [2, 7, 5]},
    ]
    store = _load([path])
    try:
        ((job, fid),) = store.sql(
            "SELECT job_id, file_id FROM files WHERE record_id = $r", {"r": rid}
        ).fetchall()
        store.sql(
            "DELETE FROM module_counters WHERE module = 'LUSTRE' AND file_id = $f", {"f": fid}
        )
        rows = []
        for k, c in enumerate(comps, 1):
            rows += [
                (f"LUSTRE_COMP{k}_STRIPE_SIZE", c["stripe_size"]),
                (f"LUSTRE_COMP{k}_STRIPE_COUNT", len(c["osts"])),
                (f"LUSTRE_COMP{k}_EXT_START", c["ext_start"]),
                (f"LUSTRE_COMP{k}_EXT_END", c["ext_end"]),
            ]
            rows += [(f"LUSTRE_COMP{k}_OST_ID_{j}", o) for j, o in enumerate(c["osts"])]
        for name, value in rows:
            store.sql(
                "INSERT INTO module_counters VALUES ($j, 'LUSTRE', 0, $f, NULL, $n, $v)",
                {"j": job, "f": fid, "n": name, "v": float(value)},
            )
        got = _rows(lustre.ost_table(store, job, min_ost_bytes=0), job)
        lay = lustre.layouts(store, job)
    finally:
        store.close()
    bw, _, br, _ = _posix(path)[rid]
    segs = _dxt_segments(path, rid)
    for op, posix_bytes, col in (("write", bw, "bytes_written"), ("read", br, "bytes_read")):
        walk = _stripe_walk(segs[op], comps)
        total = sum(walk.values())
        assert total == sum(length for _, length in segs[op])
        assert len(walk) >= 3  # the transfers cross stripes of both components
        for o in (2, 5, 7, 9):
            want = posix_bytes * walk.get(o, 0) / total
            assert got.loc[o, col] == pytest.approx(want, abs=1e-6), (op, o)
    assert (got["dxt_files"] == 1).all() and list(lay["split"]) == ["dxt-offsets"] * 2
    assert [v for v in lay["osts"]] == [[5, 9], [2, 7, 5]]
    assert lay["ext_end"].isna().tolist() == [False, True]


def test_parameters_are_checked(db):
    with pytest.raises(ParameterError):
        lustre.ost_table(db, job_id="1")
    with pytest.raises(ParameterError):
        lustre.ost_summary(db, min_ost_bytes=-1)
