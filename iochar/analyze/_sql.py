"""SQL that several analyses share, written once.

The layer rule
--------------
Darshan's DXT_MPIIO segments repeat DXT_POSIX ones a layer up (an MPI-IO call is
traced, then the POSIX calls it makes), so a job with DXT_POSIX segments is measured
on that layer only; a job with DXT_MPIIO segments alone, or with other traces
(strace, trace CSV), keeps all its ops. :func:`has_dxt_posix` is the per-job test,
:func:`one_layer` the condition an op must meet, and :data:`LAYER_OPS` the data ops
of one layer per job as a view body (``WITH layer AS ({LAYER_OPS})``).

Fragments are plain text formatted into each query where it is built, so a query
reads the same as if the rule were written in it.

Examples
--------
>>> one_layer("o0.call", "lay.dxt_posix")
"o0.call IS DISTINCT FROM 'DXT_MPIIO' OR NOT lay.dxt_posix"
>>> has_dxt_posix("call")
"bool_or(call = 'DXT_POSIX')"
"""

from __future__ import annotations

__all__ = ["has_dxt_posix", "one_layer", "timed", "LAYER_OPS", "SPAN_GRID", "STD_STREAMS"]


def has_dxt_posix(call: str = "call") -> str:
    """SQL aggregate: true for a job (the group) that has DXT_POSIX segments.

    Parameters
    ----------
    call : str, default "call"
        The expression of the ops' ``call`` column.

    Returns
    -------
    str
        ``bool_or(<call> = 'DXT_POSIX')``.
    """
    return f"bool_or({call} = 'DXT_POSIX')"


def one_layer(call: str, has_posix: str) -> str:
    """SQL condition: the op belongs to the one layer its job is measured on.

    Parameters
    ----------
    call : str
        The expression of the op's ``call`` column.
    has_posix : str
        A boolean expression: the op's job has DXT_POSIX segments
        (e.g. a column computed with :func:`has_dxt_posix`).

    Returns
    -------
    str
        The condition, to be put in parentheses where it is combined with ``AND``.
    """
    return f"{call} IS DISTINCT FROM 'DXT_MPIIO' OR NOT {has_posix}"


def timed(dur: str = "dur") -> str:
    """SQL aggregate: true for a group of ops whose calls have durations.

    A trace without call durations (strace without ``-T``, a trace table without
    ``t_end``) stores ``t_end = t_start``: when no call of the group lasted any time,
    its times are unknown, not zero.

    Parameters
    ----------
    dur : str, default "dur"
        The expression of an op's duration (``t_end - t_start``) [s].

    Returns
    -------
    str
        ``coalesce(max(<dur>) > 0, false)``.

    Examples
    --------
    >>> timed("d")
    'coalesce(max(d) > 0, false)'
    """
    return f"coalesce(max({dur}) > 0, false)"


#: Darshan's STDIO names for the standard streams, a terminal or a pipe rather than a
#: file, as an SQL list: ``path NOT IN {STD_STREAMS}``. The job metrics, the per-file
#: facts and the summary's account of what the metrics leave out read the same list.
STD_STREAMS = "('<STDIN>', '<STDOUT>', '<STDERR>')"


#: Data ops (reads and writes with a size and no error) of one layer per job; a view
#: body: ``WITH layer AS ({LAYER_OPS})``.
LAYER_OPS = f"""
SELECT o.* FROM ops o
WHERE o.op IN ('read', 'write') AND o.size IS NOT NULL AND o.error IS NULL
  AND ({one_layer("o.call", "o.job_id IN (SELECT job_id FROM ops WHERE call = 'DXT_POSIX')")})
"""


#: The bins a per-bin series of one job covers: every bin ``b`` of a CTE ``binned``
#: (one row per bin with data) and every bin of the job's span ``$lo..$hi``
#: (:func:`iochar.analyze.characterize.span_bins`; NULL when unknown), so idle time
#: before the first and after the last I/O shows as empty bins. Two CTEs to follow
#: ``binned`` in a ``WITH``: ``bounds`` and ``grid`` (column ``b``).
SPAN_GRID = """
bounds AS (
  SELECT least(min(b), CAST($lo AS BIGINT)) AS lo, greatest(max(b), CAST($hi AS BIGINT)) AS hi
  FROM binned
),
grid AS (
  SELECT range AS b FROM bounds, range(coalesce(bounds.lo, 0), coalesce(bounds.hi, -1) + 1)
)""".strip()
