"""Hypothesis strategies for iochar's data (xarray's ``testing.strategies`` idea).

>>> from iochar.testing.strategies import trace_tables
>>> trace_tables().example().column_names[:3]  # doctest: +SKIP
['job_id', 'rank', 'path']
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import strategies as st

from iochar.schema import OPS

__all__ = ["trace_tables", "trace_csv_bytes", "workloads"]

_PATHS = st.sampled_from(["/scratch/in.dat", "/scratch/ckpt.0", "/tmp/scr", "a,b.txt", "/d/ü"])


@st.composite
def trace_tables(draw, max_rows: int = 60, max_jobs: int = 3, max_ranks: int = 4) -> pa.Table:
    """A valid trace table in the trace-csv layout.

    Times never go backwards within a (job, rank) pair; ``t_end >= t_start``;
    sizes and offsets are not negative; some optional values are null.
    """
    n = draw(st.integers(1, max_rows))
    job = draw(st.lists(st.integers(0, max_jobs - 1), min_size=n, max_size=n))
    rank = draw(st.lists(st.integers(0, max_ranks - 1), min_size=n, max_size=n))
    op = draw(st.lists(st.sampled_from(OPS), min_size=n, max_size=n))
    path = draw(st.lists(st.one_of(st.none(), _PATHS), min_size=n, max_size=n))
    gaps = draw(st.lists(st.integers(0, 10_000), min_size=n, max_size=n))
    durs = draw(st.lists(st.integers(0, 5_000), min_size=n, max_size=n))
    size = draw(st.lists(st.one_of(st.none(), st.integers(0, 1 << 40)), min_size=n, max_size=n))
    offset = draw(st.lists(st.one_of(st.none(), st.integers(0, 1 << 50)), min_size=n, max_size=n))
    # microsecond times, per (job, rank) cumulative so they never go backwards
    clock: dict[tuple[int, int], int] = {}
    t0 = []
    for j, r, g in zip(job, rank, gaps, strict=True):
        clock[(j, r)] = clock.get((j, r), 0) + g
        t0.append(clock[(j, r)] / 1e6)
    t1 = [a + d / 1e6 for a, d in zip(t0, durs, strict=True)]
    return pa.table(
        {
            "job_id": pa.array(job, pa.int64()),
            "rank": pa.array(rank, pa.int32()),
            "path": pa.array(path, pa.string()),
            "op": pa.array(op, pa.string()),
            "offset": pa.array(offset, pa.int64()),
            "size": pa.array(size, pa.int64()),
            "t_start": pa.array(np.round(t0, 6), pa.float64()),
            "t_end": pa.array(np.round(t1, 6), pa.float64()),
        }
    )


def trace_csv_bytes(table: pa.Table) -> bytes:
    """``table`` written as trace-csv bytes (pyarrow's CSV writer, with header)."""
    import pyarrow.csv as pacsv

    sink = pa.BufferOutputStream()
    pacsv.write_csv(table, sink)
    return sink.getvalue().to_pybytes()


@st.composite
def workloads(draw, max_runtime_s: float = 500.0):
    """A :class:`iochar.datasets.synth.Workload` with every knob drawn.

    Required input and output, staging (possibly none), checkpoints (new files
    or one overwritten, possibly none) every few iterations, jitter up to 5%,
    think time, sync or async, one to three processes.
    """
    from iochar.datasets.synth import Workload

    iters = draw(st.integers(6, 40))
    return Workload(
        runtime_s=draw(st.floats(5.0, max_runtime_s)),
        iterations=iters,
        io_bytes=draw(st.sampled_from([4096, 65536, 1 << 20])),
        input_bytes=draw(st.integers(1, 50)) << 20,
        output_bytes=draw(st.integers(1, 50)) << 20,
        staging_bytes=draw(st.sampled_from([0, 1, 4, 16])) << 20,
        reread=draw(st.integers(1, 3)),
        rewrite=draw(st.integers(1, 2)),
        ckpt_every=draw(st.one_of(st.just(0), st.integers(1, max(1, iters // 3)))),
        ckpt_bytes=draw(st.integers(1, 15)) << 20,
        ckpt_mode=draw(st.sampled_from(["new", "overwrite"])),
        nprocs=draw(st.integers(1, 3)),
        jitter=draw(st.floats(0.0, 0.05)),
        think=draw(st.floats(0.0, 0.6)),
        sync=draw(st.booleans()),
    )
