"""Darshan-like counters made from a trace, to test what counters alone can tell.

A facility's commonest input is a Darshan log without DXT: per file the bytes and
calls, the highest offsets read and written, and the first and last read and write
times (:mod:`iochar.analyze._counter_facts`). :func:`trace_to_counters` turns the
per-operation records of an in-memory test database into exactly those
``file_stats`` rows (one shared POSIX record per file) and drops the operations,
so the same workload with known truth can be classified both ways.
"""

from __future__ import annotations

import io

__all__ = ["TRACE_TO_COUNTERS_SQL", "trace_to_counters", "classify_both_ways", "agreement"]

#: The ``file_stats`` rows Darshan's POSIX module would hold for the traced files.
TRACE_TO_COUNTERS_SQL = """
INSERT INTO file_stats (job_id, file_id, rank, module, bytes_read, bytes_written, reads, writes,
  max_byte_read, max_byte_written, first_read_t, last_read_t, first_write_t, last_write_t)
SELECT job_id, file_id, NULL, 'POSIX',
  coalesce(sum(size) FILTER (WHERE op = 'read'), 0),
  coalesce(sum(size) FILTER (WHERE op = 'write'), 0),
  count(*) FILTER (WHERE op = 'read'), count(*) FILTER (WHERE op = 'write'),
  max("offset" + size - 1) FILTER (WHERE op = 'read'),
  max("offset" + size - 1) FILTER (WHERE op = 'write'),
  min(t_start) FILTER (WHERE op = 'read'), max(t_end) FILTER (WHERE op = 'read'),
  min(t_start) FILTER (WHERE op = 'write'), max(t_end) FILTER (WHERE op = 'write')
FROM ops WHERE op IN ('read', 'write') GROUP BY job_id, file_id
"""


def trace_to_counters(store) -> None:
    """Replace a test database's operations by the counters Darshan would keep of them.

    For test and benchmark databases only (``iochar.connect(":memory:")`` with a
    trace loaded): it writes ``file_stats`` and deletes every ``ops`` row, outside
    the store's loading rules.

    Parameters
    ----------
    store : iochar.Store
        The database.
    """
    store.con.execute(TRACE_TO_COUNTERS_SQL)
    store.con.execute("DELETE FROM ops")


def classify_both_ways(ops, truth):
    """A synthetic workload's classes from its trace and from its counters alone.

    Parameters
    ----------
    ops : pyarrow.Table
        The workload's operations (:func:`iochar.datasets.synth.make_workload`).
    truth : pandas.DataFrame
        Its files' true classes (``path``, ``class``).

    Returns
    -------
    dict of str to pandas.DataFrame
        ``"trace"`` and ``"counters"``: :func:`iochar.analyze.classify.classify`'s
        labels merged with the truth on ``path`` (the true class in ``class_true``).
    """
    import pyarrow.parquet as pq

    import iochar
    from iochar.analyze.classify import classify

    buf = io.BytesIO()
    pq.write_table(ops, buf)
    out = {}
    with iochar.connect(":memory:") as db:
        db.load(buf.getvalue(), kind="trace-parquet")
        for source in ("trace", "counters"):
            if source == "counters":
                trace_to_counters(db)
            out[source] = classify(db).merge(truth, on="path", suffixes=("", "_true"))
    return out


def agreement(store):
    """How far counters alone agree with the trace of the same run (a DXT log).

    Parameters
    ----------
    store : iochar.Store
        A database holding a log with both counters and a trace.

    Returns
    -------
    (float, float, pandas.DataFrame)
        The share of the trace's files with data, and of their bytes, whose
        counters-only class equals their trace class; and the merged labels
        (counters' columns suffixed ``_cnt``).
    """
    from iochar.analyze.classify import classify

    trace = classify(store, source="trace")
    counters = classify(store, source="counters")
    both = trace.merge(counters, on=["job_id", "file_id"], how="left", suffixes=("", "_cnt"))
    nbytes = both.bytes_read + both.bytes_written
    data = nbytes > 0
    same = both["class"] == both["class_cnt"]
    return float(same[data].mean()), float(nbytes[same].sum() / nbytes.sum()), both
