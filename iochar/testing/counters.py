"""Darshan-like counters made from a trace, to test what counters alone can tell.

A facility's commonest input is a Darshan log without DXT: per file the bytes and
calls, the highest offsets read and written, and the first and last read and write
times (:mod:`iochar.analyze._counter_facts`). :func:`trace_to_counters` turns the
per-operation records of an in-memory test database into exactly those
``file_stats`` rows (one shared POSIX record per file) and drops the operations,
so the same workload with known truth can be classified both ways.
"""

from __future__ import annotations

__all__ = ["TRACE_TO_COUNTERS_SQL", "trace_to_counters"]

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
