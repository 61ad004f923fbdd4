"""Insights: which I/O problems a job shows, with the numbers and what to do (issue 19).

Each rule is data (:class:`Rule`): a code, a topic, a title, a SQL query over the
store with bound threshold parameters (:class:`Param`, each with its default and
the source of that default) -- or, for what one query cannot say, a ``compute``
function that runs iochar's analyses and returns rows of the same shape -- a
grading computed from the numbers (``info`` / ``warn`` / ``high``), and a
recommendation with a reference. :func:`run` runs the
rules on whatever the database holds and says which rules could not be checked for
which job, for lack of data. Users change thresholds with ``params=`` and add rules
with ``rules=`` (their own :class:`Rule` objects) without editing iochar.

The built-in rules and the sources of their defaults are in
:mod:`iochar.analyze.insights.rules` (SQL over Darshan counters and traces, mostly
Drishti's ``thresholds``, drishti-io ``drishti/includes/config.py``),
:mod:`iochar.analyze.insights.rules_ranks` (ranks and Lustre OSTs: imbalance,
stragglers, MPI-IO skew, rank-0 bottleneck, slow OSTs, striping),
:mod:`iochar.analyze.insights.rules_system` (checkpoint interval and overhead,
variance across repeated jobs, FSU, bursts against system busy periods: iochar's
analyses), :mod:`iochar.analyze.insights.rules_more` (blocking MPI-IO time, staging
I/O a larger memory would remove) and :mod:`iochar.analyze.insights.rules_efficiency`
(I/O phases using little of the characterized capacity, Mendez et al.); :data:`RULES`
is all five.

Examples
--------
>>> import iochar
>>> from iochar.analyze import insights
>>> db = iochar.connect(":memory:")
>>> found = insights.run(db)
>>> list(found.columns) == list(insights.COLUMNS)
True
>>> len(found), len(found.evidence["not_checked"])
(0, 0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from iochar.analyze._query import query
from iochar.analyze.insights._rule import SEVERITIES, TOPICS, Param, Rule
from iochar.analyze.insights.rules import RULES as _SQL_RULES
from iochar.analyze.insights.rules_efficiency import RULES as _EFFICIENCY_RULES
from iochar.analyze.insights.rules_more import RULES as _MORE_RULES
from iochar.analyze.insights.rules_ranks import RULES as _RANK_RULES
from iochar.analyze.insights.rules_system import RULES as _SYSTEM_RULES
from iochar.errors import ParameterError

__all__ = [
    "COLUMNS",
    "RULES",
    "SEVERITIES",
    "TOPICS",
    "Param",
    "Pending",
    "Rule",
    "rule_params",
    "run",
    "start",
]

#: Columns of :func:`run`.
COLUMNS = ("job_id", "code", "topic", "severity", "title", "evidence", "recommendation", "sql")

#: The default rules: :mod:`~iochar.analyze.insights.rules`,
#: :mod:`~iochar.analyze.insights.rules_ranks`,
#: :mod:`~iochar.analyze.insights.rules_system`,
#: :mod:`~iochar.analyze.insights.rules_more`, then
#: :mod:`~iochar.analyze.insights.rules_efficiency` (Mendez: share of the I/O
#: system's characterized capacity used).
RULES = (*_SQL_RULES, *_RANK_RULES, *_SYSTEM_RULES, *_MORE_RULES, *_EFFICIENCY_RULES)

_CALLER = "iochar.analyze.insights.run"


def rule_params(rule: Rule, params: Mapping[str, float] | None = None) -> dict[str, float]:
    """The thresholds of ``rule`` as used: defaults, overridden by ``params``.

    ``params`` keys are a param name (applies to every rule that has it) or
    ``"CODE.name"`` (that rule only, wins over the plain name).
    """
    values = rule.defaults()
    for key, value in (params or {}).items():
        code, _, name = key.rpartition(".")
        if name in values and code in ("", rule.code):
            values[name] = float(value)
    return values


def _check_params(rules: list[Rule], params: Mapping[str, float]) -> None:
    known = {p.name for r in rules for p in r.params}
    known |= {f"{r.code}.{p.name}" for r in rules for p in r.params}
    for key, value in params.items():
        if key not in known:
            raise ParameterError(
                "params", _CALLER, f"a mapping with keys among {sorted(known)}", key
            )
        if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
            raise ParameterError(f"params[{key!r}]", _CALLER, "a number", value)


def _number(v: Any) -> Any:
    """A JSON-friendly number (ints stay ints, NaN becomes None)."""
    if v is None:
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def _evidence(
    store, rule: Rule, job_id: int | None, values: Mapping[str, float]
) -> tuple[list[str], list[tuple], str, dict[Any, str]]:
    """A rule's evidence rows: column names, rows, the SQL behind them, per-job needs.

    A SQL rule runs its query with ``job_id`` and its thresholds bound. A
    ``compute`` rule runs its analysis; the SQL is the one its result carries
    (:class:`iochar.result.Table` ``.sql``), else the rule's own text, and
    ``evidence["needs"]`` of that result says per job what is missing.
    """
    if rule.compute is None:
        binds = {"job_id": job_id, **{k: v for k, v in values.items() if f"${k}" in rule.sql}}
        res = query(store, rule.sql, binds)
        names = [d[0] for d in res.description]
        return names, res.fetchall(), rule.sql.strip(), {}
    from iochar.result import evidence_of

    frame = rule.compute(store, job_id, dict(values))
    sql = getattr(frame, "sql", None) or rule.sql
    needs = dict(evidence_of(frame).get("needs", {}))
    names = [str(c) for c in frame.columns]
    records = list(frame.itertuples(index=False, name=None))
    return names, records, (sql or "").strip(), needs


def _in_transaction(con) -> bool:
    """Whether ``con`` has a transaction open.

    Outside one, every statement runs in a transaction of its own, so two statements
    see two transaction ids; inside one, both see its id. (Asking DuckDB to begin a
    second transaction would tell too, but the refusal aborts the open one.)
    """
    ids = [con.execute("SELECT txid_current()").fetchall()[0][0] for _ in range(2)]
    return ids[0] == ids[1]


class _Connection:
    """A store-like view of one DuckDB connection: what :func:`query` needs."""

    def __init__(self, con) -> None:
        self.con = con


class Pending:
    """Insight rules under way (:func:`start`); :meth:`result` gives what :func:`run` does.

    The SQL rules' queries run on a second connection to the same database (a DuckDB
    cursor) in a worker thread from :func:`start` on; the ``compute`` rules run in the
    thread that calls :meth:`result`. DuckDB releases the GIL while it runs a
    statement, so the queries' time overlaps whatever Python that thread runs
    meanwhile: :func:`iochar.report.summary.summarize` starts the rules before its
    job metrics and file classes (a one-log summary's insights stage: 120 -> 90 ms
    with the worker inside :func:`run`, less when started ahead).

    A second connection sees what is committed, not what is private to the store's
    own connection: a transaction open there, its temporary tables and views, Python
    objects registered on it. So the worker runs only when no transaction is open
    there, and a rule whose query fails in the worker runs again on the store's
    connection, where it sees everything (and raises as it would have). A store
    without cursors runs every rule in :meth:`result`, in order.

    Parameters
    ----------
    store : iochar.Store
        The database.
    rules : list of Rule
        The rules, in the order :meth:`result` reports them.
    job_id : int or None
        Only this job (None: every job).
    used : dict
        The thresholds as used, by rule code, then param name (:func:`rule_params`).
    """

    def __init__(self, store, rules: list[Rule], job_id: int | None,
                 used: dict[str, dict[str, float]]) -> None:  # fmt: skip
        self._store, self._rules, self._job_id, self._used = store, rules, job_id, used
        self._out: list[Any] = [None] * len(rules)
        self._again: list[int] = []
        self._worker = self._second = None
        self._result = None
        con = getattr(store, "con", None)
        cursor = getattr(con, "cursor", None)
        sql_rules = [i for i, r in enumerate(rules) if r.compute is None]
        if cursor is None or len(sql_rules) < 2 or _in_transaction(con):
            return
        import threading

        self._second = cursor()
        self._worker = threading.Thread(
            target=self._work, args=(sql_rules,), name="iochar-insights-sql", daemon=True
        )
        self._worker.start()

    def _evidence(self, store, i: int) -> None:
        """Rule ``i``'s evidence read through ``store`` into its slot."""
        rule = self._rules[i]
        self._out[i] = _evidence(store, rule, self._job_id, self._used[rule.code])

    def _work(self, sql_rules: list[int]) -> None:
        view = _Connection(self._second)
        for i in sql_rules:
            try:
                self._evidence(view, i)
            except Exception:  # noqa: BLE001 -- run again on the store's connection
                self._again.append(i)

    def close(self) -> None:
        """Wait for the worker and close its connection (safe to call again)."""
        if self._worker is not None:
            self._worker.join()
            self._worker = None
        if self._second is not None:
            self._second.close()
            self._second = None

    def result(self):
        """The findings, as :func:`run` returns them (computed once).

        Returns
        -------
        iochar.result.Table
        """
        if self._result is None:
            ran = self._worker is not None
            try:
                for i, rule in enumerate(self._rules):
                    if rule.compute is not None or not ran:
                        self._evidence(self._store, i)
            finally:
                self.close()
            for i in sorted(self._again):
                self._evidence(self._store, i)
            self._result = _findings(self._store, self._rules, self._job_id, self._used, self._out)
        return self._result


def start(
    store,
    *,
    job_id: int | None = None,
    rules: Iterable[Rule] | None = None,
    params: Mapping[str, float] | None = None,
) -> Pending:
    """Start :func:`run` and return at once: its SQL rules run while the caller goes on.

    ``start(...).result()`` is ``run(...)``; see :class:`Pending` for what runs
    where. Call ``.result()`` (or ``.close()``) before writing to the store or
    closing it.

    Parameters
    ----------
    store, job_id, rules, params : see :func:`run`
        Checked here, before anything runs.

    Returns
    -------
    Pending

    Raises
    ------
    ParameterError
        As :func:`run`, before anything runs.
    """
    rules = list(RULES if rules is None else rules)
    params = dict(params or {})
    _check_params(rules, params)
    if job_id is not None and (isinstance(job_id, bool) or not isinstance(job_id, int)):
        raise ParameterError("job_id", _CALLER, "an integer or None", job_id)
    used = {rule.code: rule_params(rule, params) for rule in rules}
    return Pending(store, rules, job_id, used)


def run(
    store,
    *,
    job_id: int | None = None,
    rules: Iterable[Rule] | None = None,
    params: Mapping[str, float] | None = None,
):
    """Run insight rules on the store.

    Parameters
    ----------
    store : iochar.Store
        The database.
    job_id : int, optional
        Only this job (default: every job in ``jobs``).
    rules : iterable of Rule, optional
        The rules to run (default :data:`RULES`; pass ``[*RULES, my_rule]`` to add).
    params : mapping, optional
        Threshold overrides: ``{"small_requests": 0.2}`` for every rule that has that
        param, ``{"SMALL-IO-1.small_requests": 0.2}`` for one rule.

    Returns
    -------
    iochar.result.Table
        One row per finding, columns :data:`COLUMNS`: ``evidence`` is a dict of the
        numbers the rule's SQL (or analysis) returned for the job,
        ``recommendation`` the rule's advice with those numbers filled in
        (:meth:`Rule.advice`) and its reference, ``sql`` the rule's
        query (run with ``job_id`` and the thresholds in ``.params[code]`` bound), or
        for an analysis the SQL its result carries (empty when it exposes none).
        Sorted by job, then severity (high first), then code.
        ``.evidence["not_checked"]``: a list of ``{"job_id", "code", "needs"}`` for
        each job a rule could not check (no data for it); ``.evidence["checked"]``:
        how many (job, rule) pairs were checked; ``.params``: thresholds as used, by
        rule code.

    Raises
    ------
    ParameterError
        ``params`` names a threshold no rule has, or a value is not a number;
        ``job_id`` is not an integer.
    """
    return start(store, job_id=job_id, rules=rules, params=params).result()


def _findings(store, rules: list[Rule], job_id: int | None,
              used: dict[str, dict[str, float]], found: list[Any]):  # fmt: skip
    """Grade every rule's evidence rows into :func:`run`'s table."""
    import pandas as pd

    from iochar.result import Table

    jobs = [
        r[0]
        for r in query(
            store,
            "SELECT job_id FROM jobs WHERE ($job_id IS NULL OR job_id = $job_id) ORDER BY job_id",
            {"job_id": job_id},
        ).fetchall()
    ]
    rows: list[dict[str, Any]] = []
    not_checked: list[dict[str, Any]] = []
    checked = 0
    for rule, (names, records, sql, needs) in zip(rules, found, strict=True):
        values = used[rule.code]
        seen = set()
        for rec in records:
            row = {n: _number(v) for n, v in zip(names, rec, strict=True)}
            jid = row.pop("job_id")
            if job_id is not None and jid != job_id:
                continue
            seen.add(jid)
            checked += 1
            sev = rule.grade(row, values)
            if sev is None:
                continue
            rows.append(
                {
                    "job_id": jid,
                    "code": rule.code,
                    "topic": rule.topic,
                    "severity": sev,
                    "title": rule.title,
                    "evidence": row,
                    "recommendation": f"{rule.advice(row)} [{rule.reference}]",
                    "sql": sql,
                }
            )
        not_checked += [
            {"job_id": j, "code": rule.code, "needs": needs.get(j, rule.needs)}
            for j in jobs
            if j not in seen
        ]
    order = {s: i for i, s in enumerate(reversed(SEVERITIES))}
    rows.sort(key=lambda r: (r["job_id"], order[r["severity"]], r["code"]))
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    return Table(
        frame,
        evidence={"not_checked": not_checked, "checked": checked, "jobs": len(jobs)},
        params=used,
        sql=None,
    )
