"""One way for an analysis result to carry its evidence.

Every analysis answers with a *result* that holds what it found together with
why: its ``evidence`` (the numbers that back the answer: a threshold, a peak,
the time left out, how sure a period is), its ``params`` (the parameters as
used, defaults filled in) and its ``sql`` (the SQL that read the store, or
None when no SQL ran). A result comes in one of two shapes, both with those
three attributes:

- :class:`Table` (or :class:`Column` for one series): a pandas DataFrame
  (Series) that *is* the answer. Indexing, plotting and ``to_html`` work as on
  any DataFrame; anything derived from it (a slice, ``pd.concat``, ``merge``,
  ``sort_values``) is a plain pandas object without evidence, so evidence
  never follows rows it no longer describes. Keep the result to keep its
  evidence. (Evidence used to ride in ``DataFrame.attrs``, which pandas 3
  drops or keeps depending on the operation.)
- a frozen dataclass deriving from :class:`Result`, for answers with several
  tables or with named scalars (:class:`iochar.analyze.cycles.PeriodResult`,
  :class:`iochar.analyze.jobs.JobMetrics`, ...). Its ``evidence`` is every
  field that is not a table.

This mirrors splink, which keeps ``sql_used_to_create`` beside each result
table, and scikit-learn, whose estimators hold their fitted evidence beside
their parameters.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pandas as pd

__all__ = ["Column", "Result", "Table", "evidence_of", "join_sql", "params_of"]

_META = ["evidence", "params", "sql"]


class _Carrier:
    """What Table and Column share: the three declared attributes, kept off derived objects."""

    _metadata = _META

    def __init__(
        self,
        data: Any = None,
        *args: Any,
        evidence: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        sql: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(data, *args, **kwargs)
        self.evidence = dict(evidence or {})
        self.params = dict(params or {})
        self.sql = sql


class Table(_Carrier, pd.DataFrame):
    """A result table: a DataFrame with ``evidence``, ``params`` and ``sql``.

    Parameters
    ----------
    data : pandas.DataFrame or anything ``pandas.DataFrame`` accepts
        The table (not copied: pandas copy-on-write shares it lazily).
    evidence : mapping, optional
        Numbers and words that back the table, by name.
    params : mapping, optional
        The parameters as used.
    sql : str, optional
        The SQL that read the store to make the table.

    Notes
    -----
    Operations on a Table return plain ``pandas.DataFrame`` objects: the
    evidence describes this table, not what is derived from it.

    Examples
    --------
    >>> t = Table({"x": [1, 2]}, evidence={"n": 2}, params={"bin_s": 60.0})
    >>> t.evidence["n"], t.params, t.sql, type(t.head()).__name__
    (2, {'bin_s': 60.0}, None, 'DataFrame')
    """

    @property
    def _constructor(self):
        return pd.DataFrame


class Column(_Carrier, pd.Series):
    """A result series: a Series with ``evidence``, ``params`` and ``sql`` (see :class:`Table`).

    Parameters
    ----------
    data : pandas.Series or anything ``pandas.Series`` accepts
        The values.
    evidence : mapping, optional
        Numbers and words that back the series, by name.
    params : mapping, optional
        The parameters as used.
    sql : str, optional
        The SQL that read the store to make the series.

    Examples
    --------
    >>> c = Column([1.0, 2.0], name="rate_per_s", evidence={"interval_s": 60.0})
    >>> c.evidence["interval_s"], type(c * 2).__name__
    (60.0, 'Series')
    """

    @property
    def _constructor(self):
        return pd.Series

    @property
    def _constructor_expanddim(self):
        return pd.DataFrame


@dataclasses.dataclass(frozen=True, kw_only=True)
class Result:
    """Base of the dataclass results: ``params`` and ``sql`` fields, ``evidence`` property.

    Attributes
    ----------
    params : dict
        The parameters as used (empty when the result's own fields say it all).
    sql : str or None
        The SQL that read the store, or None.
    """

    params: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False)
    sql: str | None = dataclasses.field(default=None, repr=False)

    @property
    def evidence(self) -> dict[str, Any]:
        """Every field that is not a table, series, ``params`` or ``sql``, by name."""
        out = {}
        for f in dataclasses.fields(self):
            if f.name in ("params", "sql") or not f.repr:
                continue
            v = getattr(self, f.name)
            if not isinstance(v, pd.DataFrame | pd.Series):
                out[f.name] = v
        return out


def evidence_of(obj: Any) -> Mapping[str, Any]:
    """The evidence a result carries (empty for a plain pandas object or None).

    Parameters
    ----------
    obj : object
        A result, a plain pandas object or None.

    Returns
    -------
    Mapping
        ``obj.evidence``, or an empty mapping.

    Examples
    --------
    >>> evidence_of(Table({"x": [1]}, evidence={"n": 1})), evidence_of(pd.DataFrame())
    ({'n': 1}, {})
    """
    ev = getattr(obj, "evidence", None)
    return ev if isinstance(ev, Mapping) else {}


def params_of(obj: Any) -> Mapping[str, Any]:
    """The parameters a result was made with (empty for a plain pandas object or None).

    Parameters
    ----------
    obj : object
        A result, a plain pandas object or None.

    Returns
    -------
    Mapping
        ``obj.params``, or an empty mapping.
    """
    pa = getattr(obj, "params", None)
    return pa if isinstance(pa, Mapping) else {}


def join_sql(*queries: str | None) -> str | None:
    """Several queries that together made one result, as one script (None when none ran).

    Parameters
    ----------
    *queries : str or None
        The queries, in the order they ran; None and blank ones are left out.

    Returns
    -------
    str or None
        The queries, each ending in ``;``, one after another.

    Examples
    --------
    >>> print(join_sql("SELECT 1", None, "SELECT 2;"))
    SELECT 1;
    SELECT 2;
    """
    parts = [q.strip().rstrip(";") + ";" for q in queries if q and q.strip()]
    return "\n".join(parts) or None
