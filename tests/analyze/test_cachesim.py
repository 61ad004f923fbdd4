"""iochar.analyze.cachesim: hand-computed cases, properties, real traces, Miller & Katz §6.

The hand cases use a disk of 4096 B/s with no positioning and a CPU with no overheads,
so one 4 KiB block takes exactly 1 s and every wait can be counted on paper.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iochar.analyze import cachesim as cs
from iochar.analyze.cachesim.rates import cumulative
from iochar.errors import ParameterError

DATA = Path(__file__).resolve().parents[2] / "data"
B = 4096
SLOW = cs.DiskConfig(bandwidth_bps=B, position_min_s=0.0, position_max_s=0.0)
FREE = cs.CpuConfig(switch_s=0.0, fs_s=0.0, interrupt_s=0.0)


def trace(rows, rank=0):
    """(op, path, offset, size, t_start) rows -> a trace with t_end = t_start."""
    df = pd.DataFrame(rows, columns=["op", "path", "offset", "size", "t_start"])
    return df.assign(rank=rank, t_end=df["t_start"])


def sweep_reads(nblocks, passes, gap=1.0):
    """Sequential reads of one block each over ``nblocks`` blocks, ``passes`` times."""
    rows, t = [], gap
    for _ in range(passes):
        for b in range(nblocks):
            rows.append(("read", "/f", b * B, B, t))
            t += gap
    return trace(rows)


# ------------------------------------------------------------------ hand-computed cases


def test_sequential_read_with_read_ahead_waits_only_for_the_first_block():
    ops = sweep_reads(10, 1, gap=1.0)
    on = cs.CacheConfig(size_bytes=64 * B, read_ahead="sequential")
    off = cs.CacheConfig(size_bytes=64 * B)
    with_ra = cs.simulate(ops, cache=on, disk=SLOW, cpu=FREE)
    without = cs.simulate(ops, cache=off, disk=SLOW, cpu=FREE)
    assert with_ra.io_wait_s == pytest.approx(1.0)  # only the first block: 1 s
    assert without.io_wait_s == pytest.approx(10.0)  # every block: 10 x 1 s
    # the run is the 10 s of compute plus the one wait
    assert with_ra.makespan_s == pytest.approx(11.0)
    assert with_ra.cpu_idle_s == pytest.approx(1.0)
    assert with_ra.prefetch_bytes == 10 * B  # blocks 1..10 (the last one unused)


def test_window_read_ahead_also_hides_all_but_the_first_block():
    ops = sweep_reads(10, 1, gap=1.0)
    cache = cs.CacheConfig(size_bytes=64 * B, read_ahead="window", window_bytes=2 * B)
    assert cs.simulate(ops, cache=cache, disk=SLOW, cpu=FREE).io_wait_s == pytest.approx(1.0)


def test_sequential_read_ahead_needs_the_same_size():
    # M&K 6.2: prefetch "the amount of data just read" when the read is sequential AND
    # the same size; reads alternating 1 and 2 blocks never qualify after the first
    rows, t, off = [], 1.0, 0
    for k in range(6):
        n = B if k % 2 == 0 else 2 * B
        rows.append(("read", "/f", off, n, t))
        off, t = off + n, t + 10.0
    cache = cs.CacheConfig(size_bytes=64 * B, read_ahead="sequential")
    r = cs.simulate(trace(rows), cache=cache, disk=SLOW, cpu=FREE)
    # read 0 (offset 0) prefetches block 1, half of read 1; the others miss entirely
    assert r.prefetch_bytes == B
    assert r.read_hit_bytes == B


def test_write_behind_with_a_cache_larger_than_the_data_has_no_write_wait():
    rows = [("write", "/out", b * B, B, 1.0 + 0.5 * b) for b in range(8)]
    wb = cs.CacheConfig(size_bytes=16 * B, write_behind=True)
    through = cs.CacheConfig(size_bytes=16 * B)
    r = cs.simulate(trace(rows), cache=wb, disk=SLOW, cpu=FREE)
    assert r.io_wait_s == 0.0
    assert r.disk_write_bytes == 8 * B
    assert cs.simulate(trace(rows), cache=through, disk=SLOW, cpu=FREE).io_wait_s == 8.0


def test_dirty_limit_makes_a_write_wait_for_earlier_ones():
    # two 1-block writes at t=1 and 1.5 with room for one: the second waits until the
    # first is on disk at t=2 (0.5 s); a sync then waits for the second, on disk at 3
    rows = [("write", "/o", 0, B, 1.0), ("write", "/o", B, B, 1.5), ("sync", "/o", None, None, 1.5)]
    cache = cs.CacheConfig(size_bytes=16 * B, write_behind=True, dirty_limit_bytes=B)
    r = cs.simulate(trace(rows), cache=cache, disk=SLOW, cpu=FREE)
    assert r.io_wait_s == pytest.approx(0.5 + 1.0)


def test_a_cache_smaller_than_one_pass_gives_no_hits_on_a_sequential_sweep():
    # M&K 6.2: data that does not fit, read sequentially, makes "most logical I/Os
    # result in disk accesses": LRU evicts each block before it is read again
    ops = sweep_reads(100, 3)
    small = cs.simulate(ops, cache=cs.CacheConfig(size_bytes=99 * B), disk=SLOW, cpu=FREE)
    big = cs.simulate(ops, cache=cs.CacheConfig(size_bytes=100 * B), disk=SLOW, cpu=FREE)
    assert small.read_hit_ratio == 0.0
    assert big.read_hit_ratio == pytest.approx(2 / 3)  # passes 2 and 3 hit


def test_tier_hits_cost_per_kb_instead_of_a_disk_read():
    ops = sweep_reads(4, 2, gap=10.0)
    tier = cs.TierConfig(size_bytes=64 * B, per_kb_s=0.01, setup_s=0.0)
    r = cs.simulate(ops, cache=cs.CacheConfig(size_bytes=0), tier=tier, disk=SLOW, cpu=FREE)
    # pass 1: 4 disk reads (1 s each) plus nothing from the tier; pass 2: 4 tier hits
    # of 4 KiB at 0.01 s/KiB = 0.04 s each
    assert r.io_wait_s == pytest.approx(4 * 1.0 + 4 * 0.04)
    assert r.disk_read_bytes == 4 * B
    assert r.tier_hit_bytes == 4 * B


def test_round_robin_overlaps_one_process_wait_with_the_other_compute():
    # two processes, each: compute 1 s, read one block (1 s), compute 1 s, end.
    # Alone each takes 3 s; together on one CPU the second computes while the first
    # waits, so the CPU is busy 4 s and idle only while both wait.
    one = trace([("read", "/a", 0, B, 1.0), ("other", "/a", None, None, 2.0)], rank=0)
    two = trace([("read", "/b", 0, B, 1.0), ("other", "/b", None, None, 2.0)], rank=1)
    cpu = cs.CpuConfig(quantum_s=10.0, switch_s=0.0, fs_s=0.0, interrupt_s=0.0)
    r = cs.simulate(pd.concat([one, two]), cache=cs.CacheConfig(), disk=SLOW, cpu=cpu)
    # t=0-1 P0 computes, reads (done at 2); t=1-2 P1 computes, reads (done at 3);
    # t=2-3 P0 computes, ends; t=3-4 P1 computes, ends: no idle time at all
    assert r.cpu_busy_s == pytest.approx(4.0)
    assert r.makespan_s == pytest.approx(4.0)
    assert r.cpu_idle_s == pytest.approx(0.0)
    assert list(r.processes["io_wait_s"]) == pytest.approx([1.0, 1.0])


def test_overheads_are_charged_to_the_cpu():
    ops = trace([("read", "/a", 0, B, 1.0), ("open", "/a", None, None, 2.0)])
    cpu = cs.CpuConfig(switch_s=0.0, fs_s=0.1, interrupt_s=0.01)
    r = cs.simulate(ops, cache=cs.CacheConfig(), disk=SLOW, cpu=cpu)
    # 2 s of compute (gaps 1 + 0: the second call starts 1 s after the first began,
    # its recorded duration is 0) + 2 calls x 0.1 s + 1 disk request x 0.01 s
    assert r.cpu_busy_s == pytest.approx(1.0 + 1.0 + 0.2 + 0.01)


def test_disk_positioning_grows_with_distance_and_queueing_serializes():
    cfg = cs.DiskConfig(bandwidth_bps=1e6, position_min_s=0.001, position_max_s=0.011,
                        stroke_bytes=10_000_000, queueing=False)  # fmt: skip
    from iochar.analyze.cachesim.disk import Disk

    d = Disk(cfg)
    d.submit(0, 1000, 0.0, False)  # first: full stroke 0.011 + 0.001
    near = d.submit(1000 + 1_000_000, 1000, 0.0, False) - 0.001  # 1e6 away: 0.001 + 0.001
    far = d.submit(9_000_000, 1000, 0.0, False) - 0.001  # ~8e6 away
    assert near == pytest.approx(0.002)
    assert near < far <= 0.011
    q = Disk(cs.DiskConfig(bandwidth_bps=1000, position_min_s=0, position_max_s=0, queueing=True))
    assert [q.submit(i * 1000, 1000, 0.0, False) for i in range(3)] == [1.0, 2.0, 3.0]


def test_rate_spreads_each_transfer_over_its_time():
    c = cumulative(np.array([0.0, 1.0]), np.array([2.0, 1.0]), np.array([10.0, 4.0]),
                   np.array([0.0, 0.5, 1.0, 2.0, 3.0]))  # fmt: skip
    assert list(c) == pytest.approx([0.0, 2.5, 9.0, 14.0, 14.0])


# ------------------------------------------------------------------ properties

op_rows = st.lists(
    st.tuples(
        st.sampled_from(["read", "write", "read"]),
        st.sampled_from(["/a", "/b", "/c"]),
        st.integers(0, 40),  # offset in blocks
        st.integers(1, 6),  # size in blocks
        st.floats(0.0, 0.05),  # gap [s]
    ),
    min_size=1,
    max_size=60,
)


def _ops(rows, aligned=True):
    t, out = 0.0, []
    for op, path, ob, nb, gap in rows:
        t += gap
        off, size = (ob * B, nb * B) if aligned else (ob * 1000 + 7, nb * 1500)
        out.append((op, path, off, size, t))
    return trace(out)


@settings(max_examples=80, deadline=None)
@given(
    op_rows,
    st.integers(0, 64),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["off", "sequential", "window"]),
    st.booleans(),
    st.integers(1, 2),
)
def test_bytes_are_conserved_and_times_never_negative(rows, nblocks, wb, aligned, ra, queue, n):
    ops = _ops(rows, aligned)
    cache = cs.CacheConfig(size_bytes=nblocks * B, write_behind=wb, read_ahead=ra)
    r = cs.simulate(ops, cache=cache, disk=cs.DiskConfig(queueing=queue), copies=n)
    ops = pd.concat([ops] * n)
    reads = int(ops.loc[ops.op == "read", "size"].sum())
    writes = int(ops.loc[ops.op == "write", "size"].sum())
    assert r.bytes_read == reads and r.bytes_written == writes
    assert r.disk_write_bytes == writes  # every written byte goes to disk once
    assert 0 <= r.read_hit_bytes <= reads and 0 <= r.write_hit_bytes <= writes
    if aligned:  # whole blocks: bytes read from disk on demand + hits = bytes requested
        assert r.disk_read_bytes + r.read_hit_bytes == reads
    if ra == "off":
        assert r.prefetch_bytes == 0
    assert r.cpu_idle_s >= 0.0 and r.io_wait_s >= 0.0
    assert (r.processes["io_wait_s"] >= 0).all()
    assert r.makespan_s >= r.cpu_busy_s - 1e-9
    moved = r.rate["bps"].sum() * r.rate.evidence["bin_s"]
    disk = r.disk_read_bytes + r.prefetch_bytes + r.disk_write_bytes
    assert moved == pytest.approx(disk, rel=1e-6, abs=1e-3)


@settings(max_examples=60, deadline=None)
@given(op_rows, st.integers(0, 40), st.integers(0, 40), st.booleans())
def test_a_bigger_lru_cache_never_misses_more_for_one_process(rows, a, b, aligned):
    ops = _ops(rows, aligned)
    small, big = sorted((a, b))
    misses = [
        cs.simulate(ops, cache=cs.CacheConfig(size_bytes=n * B)).disk_read_bytes
        for n in (small, big)
    ]
    assert misses[1] <= misses[0]


# ------------------------------------------------------------------ store and real traces


def test_replays_real_strace_and_darshan_dxt_jobs_from_the_store(store):
    for f in ("strace/ckpt_tt.strace", "strace/staging/ooc.strace", "darshan/dxt.darshan"):
        store.load(DATA / f)
    sums = store.sql(
        """SELECT job_id, sum(size) FILTER (WHERE op = 'read') AS r,
                  sum(size) FILTER (WHERE op = 'write') AS w
           FROM ops WHERE error IS NULL AND file_id IS NOT NULL GROUP BY job_id"""
    ).df()
    for job, rd, wr in sums.itertuples(index=False):
        res = cs.simulate(store, int(job), copies=2)
        assert res.bytes_read == 2 * int(rd) and res.bytes_written == 2 * int(wr)
        assert res.sql is not None and res.processes.params["job_ids"] == int(job)
        assert set(res.processes["copy"]) == {0, 1}
    # the out-of-core program (staging I/O) waits on its disk far more than it computes;
    # a cache holding its data set, with read-ahead and write-behind, hides most of that
    ooc = store.sql(
        "SELECT j.job_id FROM jobs j JOIN sources s USING (source_id) "
        "WHERE s.uri LIKE '%ooc.strace'"
    ).fetchall()
    assert ooc
    tiny = cs.simulate(store, ooc[0][0], cache=cs.CacheConfig(size_bytes=0))
    big = cs.simulate(store, ooc[0][0], cache=cs.CacheConfig(size_bytes=64 * cs.MW,
                      read_ahead="sequential", write_behind=True))  # fmt: skip
    assert tiny.cpu_idle_s > tiny.cpu_busy_s
    assert big.io_wait_s < 0.5 * tiny.io_wait_s


def test_bad_parameters_and_unknown_jobs(store):
    with pytest.raises(ParameterError):
        cs.CacheConfig(read_ahead="always")
    with pytest.raises(ParameterError):
        cs.DiskConfig(bandwidth_bps=0)
    with pytest.raises(ParameterError):
        cs.simulate(sweep_reads(2, 1), copies=0)
    with pytest.raises(ParameterError):
        cs.simulate(sweep_reads(2, 1), cache=4096)
    store.load(DATA / "strace/ckpt_tt.strace")
    with pytest.raises(ParameterError, match="jobs with ops"):
        cs.simulate(store, 999)
    with pytest.raises(ParameterError):
        cs.sweep(sweep_reads(2, 1), policies=("magic",))


def test_quantum_and_context_switches_by_hand():
    # two CPU-bound processes, 3 s of compute each before one call, quantum 1 s,
    # 0.1 s per switch: P0 0-1 | P1 1.1-2.1 | P0 2.2-3.2 | P1 3.3-4.3 | P0 4.4-5.4 (ends)
    # | P1 5.5-6.5 (ends): 5 switches, no idle time
    a = trace([("open", "/a", None, None, 3.0)], rank=0)
    b = trace([("open", "/b", None, None, 3.0)], rank=1)
    cpu = cs.CpuConfig(quantum_s=1.0, switch_s=0.1, fs_s=0.0, interrupt_s=0.0)
    r = cs.simulate(pd.concat([a, b]), cpu=cpu, disk=SLOW)
    assert list(r.processes["finish_s"]) == pytest.approx([5.4, 6.5])
    assert r.switch_s == pytest.approx(0.5)
    assert r.cpu_busy_s == pytest.approx(6.5) and r.cpu_idle_s == pytest.approx(0.0)
