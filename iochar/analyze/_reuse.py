"""Results of analyses reused while a store holds the same inputs.

Several analyses run more than once on the same data in one ``iochar summary`` or one
:func:`iochar.analyze.insights.run`: the classification of files (the summary's file
table, the staging and checkpoint rules), the per-file facts of Darshan counters
(classification, and the job's bytes in :func:`iochar.analyze.context.job_context`),
the checkpoint bursts (two checkpoint rules). :func:`reuse` keeps the last result of
each named computation with what it was computed from, and gives it back while that
has not changed.

What it was computed from is the store object itself (a weak reference: another
store never shares a result) with its state -- the :func:`fingerprint`: the number of
inputs, the highest input id and the rows of ``ops``, ``file_stats`` and ``jobs``
(loading or removing an input changes it) -- and the computation's arguments. One
result is kept per name (the last), so memory stays bounded.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import TypeVar

from iochar.analyze._query import query

__all__ = ["fingerprint", "reuse"]

T = TypeVar("T")

_FINGERPRINT_SQL = """
SELECT (SELECT count(*) FROM sources), (SELECT max(source_id) FROM sources),
       (SELECT count(*) FROM ops), (SELECT count(*) FROM file_stats),
       (SELECT count(*) FROM jobs)
"""

#: name -> (weak reference to the store, (fingerprint, arguments), result).
_LAST: dict[str, tuple] = {}


def fingerprint(store) -> tuple:
    """The store's state as :func:`reuse` keys it (see the module description)."""
    return tuple(query(store, _FINGERPRINT_SQL).fetchall()[0])


def reuse(store, name: str, args: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, or its last result for ``name`` when the store and ``args`` are
    the same as then.

    Parameters
    ----------
    store : iochar.Store
        The database the computation reads.
    name : str
        What is computed (one result is kept per name).
    args : hashable
        The computation's arguments, compared with ``==``.
    compute : callable
        Computes the result (no arguments).

    Returns
    -------
    object
        The result, the very object kept: a caller that changes it copies it first.
    """
    key = (fingerprint(store), args)
    last = _LAST.get(name)
    if last is not None and last[0]() is store and last[1] == key:
        return last[2]
    got = compute()
    try:
        _LAST[name] = (weakref.ref(store), key, got)
    except TypeError:  # a store object without weak references: no reuse
        _LAST.pop(name, None)
    return got
