"""An insight rule as data: a query, thresholds with their sources, and a grading.

A rule's evidence is one row per job it could check: a ``job_id`` column and
numeric columns. It comes from one of two places:

- **SQL** (``sql``): a query over the store's tables. It must filter on the bound
  parameter ``$job_id`` (``$job_id IS NULL OR job_id = $job_id``) and may use any
  of its :class:`Param` names as bound parameters (``$name``); nothing is
  formatted into the text.
- **a library analysis** (``compute``): ``compute(store, job_id, values)`` runs
  iochar's Python analyses (classification, variance groups, FSU, bursts) for
  ``job_id`` (None: every job) with the thresholds as used (``values``, by param
  name) and returns a DataFrame of the same shape as the SQL's rows. When it is
  an :class:`iochar.result.Table` its ``sql`` is the SQL the analysis ran (the
  finding's ``sql``; the rule's own ``sql`` is then empty or a description), and
  ``evidence["needs"]`` may map a job id to what is missing for that job (it
  overrides the rule's ``needs`` for that job). Results carry their evidence the
  one way :mod:`iochar.result` says.

A job with no row is reported as *not checked* (the store holds no data the rule
needs for it).

Grading (:meth:`Rule.grade`) is computed from the numbers, the same for every
rule, SQL or analysis: the row's ``measure`` column is compared to the
``warn_at`` threshold; at or below it there is no finding. Above it the finding
is ``high`` when the measure is also above ``high_at``, else ``warn``; when
``count`` names a column and that column is at or below the ``min_count``
threshold, the finding is only ``info``: the measure is there but the second
number says it costs little (Drishti's ``*_absolute`` guards: too few requests;
a variance rule: a slowdown within the group's own spread; an FSU rule: targets
not busy).

A recommendation may quote the row's numbers (:meth:`Rule.advice`): ``{name}`` or
``{name:spec}`` with ``name`` an evidence column is replaced by the value, formatted
with the Python format ``spec``, or with ``spec`` ``bytes`` in binary units
(``"1.5 GiB"``, :func:`iochar._units.fmt_bytes`); a missing number reads ``n/a``.
Any other braces are left as written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Param", "Rule", "SEVERITIES", "TOPICS"]

#: Severities, lowest first.
SEVERITIES = ("info", "warn", "high")

#: Topic vocabulary of issue 19 (machine-readable names).
TOPICS = (
    "small-io",
    "misaligned",
    "random-access",
    "metadata-heavy",
    "shared-file-independent",
    "no-collective",
    "imbalance",
    "straggler",
    "skew",
    "redundant-reads",
    "stdio-heavy",
    "many-small-files",
    "rank0-bottleneck",
    "bad-ost",
    "striping",
    "incomplete-log",
    "checkpoint-interval",
    "checkpoint-overhead",
    "staging-io",
    "variance",
    "fsu-suboptimal",
    "cycles-collide",
    "blocking-io",
    "io-efficiency",
)

#: ``{name}`` / ``{name:spec}`` in a recommendation (see :meth:`Rule.advice`).
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::([^{}]*))?\}")


@dataclass(frozen=True)
class Param:
    """A threshold of a rule.

    Attributes
    ----------
    name : str
        Bound-parameter name (``$name`` in the SQL, key of ``params=`` in ``run``).
    default : float
        Default value.
    unit : str
        Unit (``"share"`` for a fraction 0..1, ``"bytes"``, ``"s"``, ``"count"``).
    source : str
        Where the default comes from (file and line of the reference tool, paper
        section, or "iochar" with the reason).
    """

    name: str
    default: float
    unit: str
    source: str


@dataclass(frozen=True)
class Rule:
    """One insight rule (see the module docstring for the SQL and grading contract).

    Attributes
    ----------
    code : str
        Stable code, e.g. ``"SMALL-IO-1"``.
    topic : str
        One of :data:`TOPICS` (or a new name for a new topic).
    title : str
        One-line statement of the problem.
    sql : str
        Query over the store's tables; one row per checkable job. With
        ``compute``: empty, or the SQL the analysis runs, for the reader.
    measure : str
        Column of the row graded against ``warn_at`` / ``high_at``.
    warn_at : str
        Name of the :class:`Param` above which the rule fires.
    high_at : str or None
        Name of the :class:`Param` above which the finding is ``high``.
    count : str or None
        Column holding a second number behind the measure (for Drishti's rules
        the absolute number of requests).
    min_count : str or None
        Name of the :class:`Param`: ``count`` at or below it makes the finding
        only ``info``.
    params : tuple of Param
        Thresholds, with defaults and sources.
    recommendation : str
        What to do; may quote the evidence row's numbers as ``{name}`` or
        ``{name:spec}`` (:meth:`advice`).
    reference : str
        Where the advice and the rule come from.
    needs : str
        What data the rule needs (said when a job cannot be checked).
    compute : callable or None
        ``compute(store, job_id, values) -> DataFrame``: the evidence rows from
        a library analysis instead of ``sql`` (see the module docstring).
    """

    code: str
    topic: str
    title: str
    sql: str
    measure: str
    warn_at: str
    recommendation: str
    reference: str
    needs: str
    params: tuple[Param, ...] = field(default_factory=tuple)
    high_at: str | None = None
    count: str | None = None
    min_count: str | None = None
    compute: Callable[..., Any] | None = field(default=None, compare=False)

    def defaults(self) -> dict[str, float]:
        """The default value of each threshold, by name."""
        return {p.name: p.default for p in self.params}

    def grade(self, row: Mapping[str, Any], values: Mapping[str, float]) -> str | None:
        """The severity of one evidence row, or None when the rule does not fire.

        Parameters
        ----------
        row : mapping
            The evidence row (column name to number), from the SQL or ``compute``.
        values : mapping
            The thresholds as used, by param name.

        Returns
        -------
        str or None
            ``"info"``, ``"warn"``, ``"high"`` or None.
        """
        m = row.get(self.measure)
        if m is None or (isinstance(m, float) and math.isnan(m)):
            return None
        if not m > values[self.warn_at]:
            return None
        if self.count is not None and self.min_count is not None:
            n = row.get(self.count)
            if n is None or not n > values[self.min_count]:
                return "info"
        if self.high_at is not None and m > values[self.high_at]:
            return "high"
        return "warn"

    def advice(self, row: Mapping[str, Any]) -> str:
        """The recommendation with the evidence row's numbers filled in.

        Each ``{name}`` or ``{name:spec}`` whose ``name`` is a column of ``row`` is
        replaced by its value: ``spec`` ``bytes`` gives binary units
        (:func:`iochar._units.fmt_bytes`), any other ``spec`` is a Python format
        spec (``.0%``, ``.3g``); a missing or NaN value reads ``n/a``. Braces around
        anything else are kept as written.

        Parameters
        ----------
        row : mapping
            The evidence row (column name to number).

        Returns
        -------
        str
            The recommendation.

        Examples
        --------
        >>> r = Rule("X-1", "staging-io", "t", "", "m", "w", "Use {b:bytes} ({m:.0%}) {x}",
        ...          "ref", "needs")
        >>> r.advice({"b": 3 * 2**30, "m": 0.5})
        'Use 3.0 GiB (50%) {x}'
        """
        from iochar._units import fmt_bytes

        def fill(m: re.Match) -> str:
            name, spec = m.group(1), m.group(2)
            if name not in row:
                return m.group(0)
            v = row[name]
            if v is None or (isinstance(v, float) and math.isnan(v)):
                return "n/a"
            if spec == "bytes":
                return fmt_bytes(float(v))
            try:
                return format(v, spec or "")
            except (TypeError, ValueError):
                return str(v)

        return _PLACEHOLDER.sub(fill, self.recommendation)
