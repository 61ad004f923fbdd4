"""Miller & Katz Tables 1 and 2 against naive pandas on the same real inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iochar.analyze.characterize import app_table, rates_table
from iochar.errors import ParameterError


@pytest.fixture
def loaded(store):
    from pathlib import Path

    data = Path(__file__).resolve().parents[2] / "data"
    for f in (
        "strace/ckpt_tt.strace",
        "darshan/ior_hdf5_example.darshan",
        "darshan/example.darshan",
        "trace/ior-hdf5-dxt-posix.csv",
    ):
        store.load(data / f)
    store.load(b"op,t_start\nopen,0\nclose,1\n", kind="trace-csv")  # a job with no I/O
    return store


def _naive(store):
    ops = store.sql("SELECT * FROM ops").df()
    dxt_posix_jobs = set(ops.loc[ops.call == "DXT_POSIX", "job_id"])
    ops = ops[~((ops.call == "DXT_MPIIO") & ops.job_id.isin(dxt_posix_jobs))]
    ops = ops[ops.op.isin(["read", "write"]) & ops["size"].notna() & ops.error.isna()]
    return ops


def test_table1_equals_naive_on_ops(loaded):
    t1 = app_table(loaded).set_index("job_id")
    ops = _naive(loaded)
    jobs = loaded.sql("SELECT job_id, runtime_s FROM jobs").df().set_index("job_id")
    for job, g in ops.groupby("job_id"):
        row = t1.loc[job]
        assert row.basis == "ops"
        assert row.io_bytes == g["size"].sum()
        assert row.ios == len(g)
        assert row.files == g.file_id.nunique()
        known = (g["offset"] + g["size"]).groupby(g.file_id).max()
        moved = g.pivot_table(index="file_id", columns="op", values="size", aggfunc="sum")
        ext = known.fillna(moved.max(axis=1)).sum()
        assert row.data_size_bytes == ext
        assert np.isclose(row.bps, g["size"].sum() / jobs.loc[job, "runtime_s"])
        assert np.isclose(row.avg_io_bytes, g["size"].mean())


def test_ior_layers_are_not_double_counted(loaded):
    t1 = app_table(loaded)
    ior = t1[t1.app == "ior"].iloc[0]
    csv = t1[(t1.basis == "ops") & t1.app.isna() & (t1.ios == 59)].iloc[0]
    assert ior.io_bytes == csv.io_bytes == 8_398_304
    assert ior.ios == 59


def test_counters_only_job_uses_posix_file_stats(loaded):
    t1 = app_table(loaded)
    vpic = t1[t1.app == "vpicio_uni"].iloc[0]
    # its STDIO records are <STDOUT> and <STDERR> only: not files
    assert vpic.basis == "file_stats:POSIX"
    posix = loaded.sql(
        "SELECT sum(bytes_read + bytes_written), sum(reads + writes) FROM file_stats "
        "JOIN jobs USING (job_id) WHERE app = 'vpicio_uni' AND module = 'POSIX'"
    ).fetchall()[0]
    assert (vpic.io_bytes, vpic.ios) == posix


def test_counters_add_stdio_files_to_posix_ones(store):
    """Darshan's POSIX wrappers do not see the writes the C library makes behind
    fwrite, so a file's bytes are its POSIX plus its STDIO record (issue 17). This
    real log (darshan-logs' partial_data_stdio, Darshan 3.4) fopen()s 1,022 files:
    Table 1 had only the 32 MiB of its one POSIX file."""
    log = Path(__file__).resolve().parents[2] / "data" / "darshan" / "darshan-logs"
    log = log / "partial_data_stdio"
    store.load(log / "partial_data_stdio.darshan")
    t1 = app_table(store).iloc[0]
    want = store.sql(
        "SELECT sum(s.bytes_read + s.bytes_written), sum(s.reads + s.writes), "
        "count(DISTINCT s.file_id) FROM file_stats s JOIN files f USING (job_id, file_id) "
        "WHERE s.module IN ('POSIX', 'STDIO') AND f.path NOT LIKE '<%>'"
    ).fetchall()[0]
    assert (t1.io_bytes, t1.ios, t1.files) == want
    assert t1.io_bytes > 17e9 and t1.basis == "file_stats:POSIX+STDIO"


def test_table2_read_write_split(loaded):
    t2 = rates_table(loaded).set_index("job_id")
    ops = _naive(loaded)
    jobs = loaded.sql("SELECT job_id, runtime_s FROM jobs").df().set_index("job_id")
    for job, g in ops.groupby("job_id"):
        r, w = g[g.op == "read"], g[g.op == "write"]
        rt = jobs.loc[job, "runtime_s"]
        assert np.isclose(t2.loc[job, "read_bps"], r["size"].sum() / rt)
        assert np.isclose(t2.loc[job, "writes_per_s"], len(w) / rt)
        if len(w) and w["size"].sum():
            assert np.isclose(t2.loc[job, "rw_data_ratio"], r["size"].sum() / w["size"].sum())


def test_large_files_only(loaded):
    t2 = rates_table(loaded, min_file_bytes=1 << 20)
    ck = t2[t2.app == "ckpt_app"].iloc[0]
    # the checkpointing program's files are all below 1 MiB: nothing left, said so
    assert ck.read_bps == 0 and ck.note == "no read or write I/O"


def test_job_without_io_is_a_clear_row(loaded):
    t1 = app_table(loaded)
    empty = t1[t1.ios == 0]
    assert len(empty) == 1
    assert empty.iloc[0].note == "no read or write I/O" and np.isnan(empty.iloc[0].avg_io_bytes)


def test_parameters_checked(loaded):
    with pytest.raises(ParameterError, match="'min_file_bytes' parameter of app_table"):
        app_table(loaded, min_file_bytes=-1)
    with pytest.raises(ParameterError, match="'job_id' parameter of rates_table"):
        rates_table(loaded, job_id="x")


def test_data_rate_bins_sum_to_totals(loaded):
    from iochar.analyze.characterize import data_rate

    job = int(loaded.sql("SELECT job_id FROM jobs WHERE app = 'ckpt_app'").fetchall()[0][0])
    dr = data_rate(loaded, job_id=job, bin_s=0.5)
    ops = _naive(loaded)
    g = ops[ops.job_id == job]
    for op in ("read", "write"):
        assert dr.loc[dr.op == op, "bytes"].sum() == g.loc[g.op == op, "size"].sum()
    # bins are contiguous from 0 and idle bins are zeros
    ts = sorted(set(dr.t_s))
    assert ts[0] == 0 and np.allclose(np.diff(ts), 0.5)
    assert (dr.bytes == 0).any()
    assert np.allclose(dr.bps, dr.bytes / 0.5)
    # write bursts (scratch re-writes and checkpoints) show as separate busy bins
    w = dr[(dr.op == "write") & (dr.bytes > 50_000)].t_s.to_numpy()
    assert len(w) >= 4
    with pytest.raises(ParameterError):
        data_rate(loaded, job_id=job, bin_s=0)


def test_zero_run_time_is_explained_not_nan(store):
    # every op at t = 0: the job's run time is 0 s
    store.load(b"op,path,offset,size,t_start,t_end\nwrite,/a,0,10,0,0\nread,/a,0,10,0,0\n",
               kind="trace-csv")  # fmt: skip
    t1 = app_table(store).iloc[0]
    assert t1.io_bytes == 20 and t1.ios == 2  # the totals are still there
    assert np.isnan(t1.bps) and "no positive run time" in t1.note
    from iochar.analyze.classify import classify

    c = classify(store)
    assert len(c) == 1 and c["class"].iloc[0] in {"required", "staging", "other"}
    assert c.reason.iloc[0] and c.confidence.between(0, 1).all()


def test_file_table_sums_to_the_job_table(loaded):
    from iochar.analyze.characterize import file_table
    from iochar.analyze.fileio import file_io

    facts = file_io(loaded)  # one pass, shared by every table
    per_file, per_job = file_table(facts), app_table(facts)
    assert per_job.equals(app_table(loaded))
    sums = per_file.groupby("job_id")[["io_bytes", "ios", "size_bytes"]].sum()
    for row in per_job[per_job.ios > 0].itertuples():
        assert sums.loc[row.job_id, "io_bytes"] == row.io_bytes
        assert sums.loc[row.job_id, "ios"] == row.ios
        assert sums.loc[row.job_id, "size_bytes"] == row.data_size_bytes
    ck = per_file[per_file.path.str.endswith("/scratch.dat", na=False)].iloc[0]
    assert ck.bytes_read == ck.bytes_written == 40 * 65536  # re-read and re-written 40 times
    with pytest.raises(ParameterError, match="'min_file_bytes' parameter of file_table"):
        file_table(facts, min_file_bytes=-5)


@pytest.mark.parametrize("edge", [0.1, 0.25])
def test_file_io_facts_equal_naive_per_file(loaded, edge):
    """Every per-file fact of the one-pass aggregation against pandas on the raw ops:
    DXT layers, failed calls (strace), head and tail bytes, write bursts."""
    from iochar.analyze.fileio import file_io

    facts = file_io(loaded, edge=edge)
    ops = _naive(loaded)
    span = loaded.sql("SELECT job_id, runtime_s FROM jobs").df().set_index("job_id")["runtime_s"]
    ops = ops.assign(span=ops["job_id"].map(span))
    got = facts.files[facts.files["basis"] == "ops"].set_index(["job_id", "file_id"])
    assert len(got) and ops["job_id"].nunique() >= 3
    for (job, fid), g in ops.groupby(["job_id", "file_id"]):
        row = got.loc[(job, fid)]
        rd, wr = g[g.op == "read"], g[g.op == "write"]
        assert row["bytes_read"] == rd["size"].sum() and row["bytes_written"] == wr["size"].sum()
        assert row["reads"] == len(rd) and row["writes"] == len(wr)
        sp = g["span"].iloc[0]
        head = g.loc[g.t_start < edge * sp, "size"].sum()
        tail = g.loc[g.t_start >= (1 - edge) * sp, "size"].sum()
        assert row["head_bytes"] == head and row["tail_bytes"] == tail, (job, fid)
        if len(wr):
            assert row["first_write_t"] == wr["t_start"].min()
            assert row["last_write_t"] == wr["t_end"].max()
    # write bursts: bins of span/400 holding writes; a new burst after > 1% of span
    for (job, fid), g in ops[ops.op == "write"].groupby(["job_id", "file_id"]):
        sp = g["span"].iloc[0]
        b = np.unique(np.clip(np.floor(g.t_start.to_numpy() * 400 / sp), 0, 399))
        starts = 1 + int((np.diff(b) > 0.01 * sp / (sp / 400)).sum())
        assert got.loc[(job, fid), "write_bursts"] == starts, (job, fid)
    # one job at a time gives the same rows as all jobs at once
    for job in facts.jobs["job_id"]:
        one = file_io(loaded, job_id=int(job), edge=edge).files
        both = facts.files[facts.files["job_id"] == job].reset_index(drop=True)
        pd.testing.assert_frame_equal(one, both, check_dtype=False)


@pytest.mark.parametrize("gap_s", [0.17, 0.23])
def test_write_bursts_with_a_given_gap_equal_naive(loaded, gap_s):
    """With ``burst_gap_s`` the bin count is 4 x span / gap (not a multiple of 8 here):
    the bitmaps' padding must not shift bins."""
    import math

    from iochar.analyze.fileio import file_io

    facts = file_io(loaded, burst_gap_s=gap_s)
    ops = _naive(loaded)
    span = loaded.sql("SELECT job_id, runtime_s FROM jobs").df().set_index("job_id")["runtime_s"]
    nb = int(min(max(math.ceil(4 * span.max() / gap_s), 16), 4096))
    assert nb % 8 != 0
    got = facts.files.set_index(["job_id", "file_id"])
    checked = 0
    for (job, fid), g in ops[ops.op == "write"].groupby(["job_id", "file_id"]):
        sp = span[job]
        b = np.unique(np.clip(np.floor(g.t_start.to_numpy() * nb / sp), 0, nb - 1))
        starts = 1 + int((np.diff(b) > gap_s / (sp / nb)).sum())
        assert got.loc[(job, fid), "write_bursts"] == starts, (job, fid)
        checked += starts > 1
    assert checked >= 1
