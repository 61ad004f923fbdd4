"""iochar.analyze._reuse: one computation per store state and arguments.

On real Darshan logs (data/darshan, see its SOURCE.md): classification and the job's
system context both need the per-file facts of the job's counters; they are read once
while the store holds the same inputs, and again after an input is loaded, and another
store never gets them.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import iochar
from iochar.analyze import _counter_facts, _reuse, context
from iochar.analyze.classify import classify

DATA = Path(__file__).resolve().parents[2] / "data" / "darshan"
GOODOST = DATA / "lustre" / "sample-goodost.darshan"
BADOST = DATA / "lustre" / "sample-badost.darshan"


def _counting(monkeypatch) -> list:
    calls: list = []
    real = _counter_facts._facts

    def facts(store, jobs, edge):
        calls.append([int(j) for j in jobs["job_id"]])
        return real(store, jobs, edge)

    monkeypatch.setattr(_counter_facts, "_facts", facts)
    return calls


def _jobs(store) -> pd.DataFrame:
    return store.sql("SELECT job_id, runtime_s AS span_s FROM jobs ORDER BY 1").df()


def test_counter_facts_read_once_for_classify_and_context(monkeypatch):
    calls = _counting(monkeypatch)
    with iochar.connect(":memory:") as db:
        db.load(GOODOST)
        (job,) = [int(r[0]) for r in db.sql("SELECT job_id FROM jobs").fetchall()]
        labels = classify(db, job_id=job)
        ctx = context.job_context(db, job)
        assert calls == [[job]]  # the context's pieces reused classify's facts
        # the reused facts give what a fresh read gives
        fresh = _counter_facts._facts(db, _jobs(db), 0.1)
        got = _counter_facts.counter_facts(db, _jobs(db), 0.1)
        pd.testing.assert_frame_equal(got, fresh)
        moved = float((fresh["bytes_read"] + fresh["bytes_written"]).sum())
        assert ctx.evidence["job_bytes"] == moved
        assert set(labels["file_id"]) <= set(fresh["file_id"])


def test_counter_facts_read_again_on_new_state_arguments_or_store(monkeypatch):
    calls = _counting(monkeypatch)
    with iochar.connect(":memory:") as db:
        db.load(GOODOST)
        first = _counter_facts.counter_facts(db, _jobs(db), 0.1)
        first.loc[:, "bytes_read"] = -1  # a caller's change does not reach the kept result
        again = _counter_facts.counter_facts(db, _jobs(db), 0.1)
        assert len(calls) == 1 and (again["bytes_read"] >= 0).all()
        _counter_facts.counter_facts(db, _jobs(db), 0.2)  # another edge
        assert len(calls) == 2
        db.load(BADOST)  # a new input: the fingerprint changes
        both = _counter_facts.counter_facts(db, _jobs(db), 0.2)
        assert len(calls) == 3 and both["job_id"].nunique() == 2
    with iochar.connect(":memory:") as other:
        other.load(GOODOST)
        _counter_facts.counter_facts(other, _jobs(other), 0.2)
        assert len(calls) == 4  # another store never shares a result


def test_fingerprint_follows_loads():
    with iochar.connect(":memory:") as db:
        empty = _reuse.fingerprint(db)
        db.load(GOODOST)
        one = _reuse.fingerprint(db)
        assert one != empty and one[0] == 1
        assert one[3] == db.sql("SELECT count(*) FROM file_stats").fetchall()[0][0]


def test_query_gives_what_store_sql_gives():
    from iochar.analyze._query import query

    with iochar.connect(":memory:") as db:
        db.load(GOODOST)
        sql = (
            "SELECT job_id, file_id, module, rank, bytes_read, bytes_written FROM file_stats "
            "WHERE job_id = $j ORDER BY file_id, module, rank"
        )
        want = db.sql(sql, {"j": 0}).df()
        got = query(db, sql, {"j": 0}).df()
        assert len(got) > 0
        pd.testing.assert_frame_equal(got, want)
        res = query(db, sql, {"j": 0})
        assert [d[0] for d in res.description] == list(want.columns)
        assert res.fetchall() == db.sql(sql, {"j": 0}).fetchall()
