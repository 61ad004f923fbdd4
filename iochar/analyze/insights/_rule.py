"""An insight rule as data: a query, thresholds with their sources, and a grading.

A rule's SQL reads the store and returns one row per job it could check: a
``job_id`` column and numeric columns (the evidence). It must filter on the bound
parameter ``$job_id`` (``$job_id IS NULL OR job_id = $job_id``) and may use any of
its :class:`Param` names as bound parameters (``$name``); nothing is formatted into
the text. A job with no row is reported as *not checked* (the store holds no data
the rule needs for it).

Grading (:meth:`Rule.grade`) is computed from the numbers, the same for every rule:
the row's ``measure`` column is compared to the ``warn_at`` threshold; at or below
it there is no finding. Above it the finding is ``high`` when the measure is also
above ``high_at``, else ``warn``; when ``count`` names a column and that column is
at or below the ``min_count`` threshold, the finding is only ``info`` (the share is
there but too few requests for it to cost much: Drishti's ``*_absolute`` guards).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
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
)


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
        Query over the store's tables; one row per checkable job.
    measure : str
        Column of the row graded against ``warn_at`` / ``high_at``.
    warn_at : str
        Name of the :class:`Param` above which the rule fires.
    high_at : str or None
        Name of the :class:`Param` above which the finding is ``high``.
    count : str or None
        Column holding the absolute number behind the measure.
    min_count : str or None
        Name of the :class:`Param`: at or below it, the finding is only ``info``.
    params : tuple of Param
        Thresholds, with defaults and sources.
    recommendation : str
        What to do.
    reference : str
        Where the advice and the rule come from.
    needs : str
        What data the rule needs (said when a job cannot be checked).
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

    def defaults(self) -> dict[str, float]:
        """The default value of each threshold, by name."""
        return {p.name: p.default for p in self.params}

    def grade(self, row: Mapping[str, Any], values: Mapping[str, float]) -> str | None:
        """The severity of one evidence row, or None when the rule does not fire.

        Parameters
        ----------
        row : mapping
            The row the SQL returned (column name to number).
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
