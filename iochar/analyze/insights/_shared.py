"""Analyses several insight rules need, computed once per store state.

:func:`classified` is :func:`iochar.analyze.classify.classify` with its default
parameters, kept while the store holds the same inputs (:func:`iochar.analyze._reuse.reuse`:
the same store object and :func:`fingerprint`): the staging rule needs the labels, and
so do the checkpoint rules and ``iochar summary``'s file table; on a Darshan log of
2,000 files one classification takes about 0.4 s.
"""

from __future__ import annotations

import pandas as pd

from iochar.analyze._reuse import fingerprint, reuse

__all__ = ["classified", "fingerprint"]


def classified(store, job_id: int | None = None) -> pd.DataFrame:
    """:func:`iochar.analyze.classify.classify` ``(store, job_id=job_id)``, reused while
    the store object holds the same inputs.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        Only this job (a result is reused for the same ``job_id`` only).

    Returns
    -------
    pandas.DataFrame
        classify's labels and evidence (a copy: callers may change it).
    """
    from iochar.analyze.classify import classify

    return reuse(store, "classify", job_id, lambda: classify(store, job_id=job_id)).copy()
