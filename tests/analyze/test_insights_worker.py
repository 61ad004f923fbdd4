"""The insight rules' SQL runs on a second connection while the analyses run (issue 19).

:func:`iochar.analyze.insights.run` runs the SQL rules' queries in a worker thread on a
DuckDB cursor of the store while its own thread runs the ``compute`` rules. The
findings must be exactly those of running every rule in turn on the store's
connection, and what only that connection sees (an open transaction, a temporary
view) must still be seen.
"""

from __future__ import annotations

import threading
import warnings
from pathlib import Path

import duckdb
import pytest

import iochar
from iochar.analyze import insights
from iochar.analyze.insights import RULES, Param, Rule

DATA = Path(__file__).resolve().parents[2] / "data"
LOGS = [
    DATA / "darshan" / "lustre" / "sample-badost.darshan",
    DATA / "darshan" / "darshan-logs" / "imbalanced_io" / "imbalanced-io.darshan",
    DATA / "darshan" / "example.darshan",
    DATA / "strace" / "ckpt_plain.strace",
]


@pytest.fixture(scope="module")
def db():
    store = iochar.connect(":memory:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in LOGS:
            store.load(path)
    yield store
    store.close()


def _mine(code: str, sql: str) -> Rule:
    return Rule(
        code=code,
        topic="small-io",
        title="test rule",
        sql=sql,
        measure="m",
        warn_at="at",
        params=(Param("at", 0.0, "count", "test"),),
        recommendation="none",
        reference="test",
        needs="test",
    )


def _plain(found) -> list[dict]:
    return [
        {k: (sorted(v.items()) if isinstance(v, dict) else v) for k, v in r.items()}
        for r in found.to_dict("records")
    ]


def test_worker_gives_the_findings_of_one_connection(db, monkeypatch):
    threads: dict[str, set[str]] = {}
    evidence = insights._evidence

    def spy(store, rule, job_id, values):
        threads.setdefault(rule.code, set()).add(threading.current_thread().name)
        return evidence(store, rule, job_id, values)

    monkeypatch.setattr(insights, "_evidence", spy)
    both = insights.run(db)
    sql_codes = {r.code for r in RULES if r.compute is None}
    assert sql_codes and len(sql_codes) < len(RULES)
    assert {c for c, t in threads.items() if t == {"iochar-insights-sql"}} == sql_codes
    assert all(threads[r.code] == {threading.main_thread().name} for r in RULES if r.compute)

    threads.clear()
    monkeypatch.setattr(insights, "_in_transaction", lambda con: True)
    one = insights.run(db)
    assert set().union(*threads.values()) == {threading.main_thread().name}
    assert len(both) > 0
    assert _plain(both) == _plain(one)
    assert both.evidence == one.evidence
    assert both.params == one.params


def test_an_open_transaction_is_seen(db):
    rule = _mine(
        "MY-TX",
        "SELECT job_id, count(*) FILTER (WHERE path = 'uncommitted') AS m FROM files "
        "WHERE $job_id IS NULL OR job_id = $job_id GROUP BY job_id",
    )
    job = db.sql("SELECT min(job_id) FROM files").fetchall()[0][0]
    db.con.execute("BEGIN TRANSACTION")
    try:
        db.con.execute(
            "UPDATE files SET path = 'uncommitted' WHERE job_id = $j AND file_id = "
            "(SELECT min(file_id) FROM files WHERE job_id = $j)",
            {"j": job},
        )
        found = insights.run(db, rules=[*RULES, rule])
    finally:
        db.con.execute("ROLLBACK")
    mine = found[found["code"] == "MY-TX"]
    assert list(mine["job_id"]) == [job]
    assert mine.iloc[0]["evidence"]["m"] == 1


def test_a_temporary_view_of_the_store_connection_is_seen(db):
    db.con.execute("CREATE OR REPLACE TEMP VIEW my_jobs AS SELECT job_id, 2 AS m FROM jobs")
    try:
        rule = _mine("MY-TEMP", "SELECT job_id, m FROM my_jobs "
                     "WHERE $job_id IS NULL OR job_id = $job_id")  # fmt: skip
        found = insights.run(db, rules=[*RULES, rule])
    finally:
        db.con.execute("DROP VIEW my_jobs")
    jobs = {r[0] for r in db.sql("SELECT job_id FROM jobs").fetchall()}
    assert set(found.loc[found["code"] == "MY-TEMP", "job_id"]) == jobs


def test_a_broken_rule_raises_from_the_store_connection(db):
    rule = _mine("MY-BAD", "SELECT job_id, m FROM no_such_table WHERE $job_id IS NULL")
    with pytest.raises(duckdb.CatalogException, match="no_such_table"):
        insights.run(db, rules=[*RULES, rule])
    # the store is usable afterwards
    assert db.sql("SELECT count(*) FROM jobs").fetchall()[0][0] == len(LOGS)


def test_start_runs_while_the_store_connection_is_used(db):
    from iochar.analyze import jobs as jobs_mod

    alone = insights.run(db)
    pending = insights.start(db)
    # the caller goes on with the store's own connection meanwhile
    metrics = jobs_mod.job_metrics(db)
    assert len(metrics.jobs) == len(LOGS)
    found = pending.result()
    assert pending.result() is found
    assert _plain(found) == _plain(alone)
    assert found.evidence == alone.evidence


def test_start_checks_its_arguments_and_close_stops_it(db):
    from iochar.errors import ParameterError

    with pytest.raises(ParameterError):
        insights.start(db, params={"no_such_threshold": 1})
    with pytest.raises(ParameterError):
        insights.start(db, job_id="1")
    pending = insights.start(db)
    pending.close()
    pending.close()
    assert not any(t.name == "iochar-insights-sql" for t in threading.enumerate())
    db.con.execute("CREATE OR REPLACE TEMP TABLE after_close AS SELECT 1 AS x")
    db.con.execute("DROP TABLE after_close")
