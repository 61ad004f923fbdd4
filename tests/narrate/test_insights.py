"""Narrative and table of the insights (notebooks 01 and 03), on real inputs.

The numbers a sentence states must be those of :func:`iochar.analyze.insights.run`'s
result (severity counts, checks, the finding's evidence), the order most severe
first, and names from the data escaped.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

import iochar
from iochar.analyze import insights
from iochar.narrate import esc
from iochar.narrate import insights as say
from iochar.plot import tables
from iochar.result import Table

DATA = Path(__file__).resolve().parents[2] / "data"
IMBALANCED = DATA / "darshan" / "darshan-logs" / "imbalanced_io" / "imbalanced-io.darshan"
STRACE = DATA / "strace" / "ckpt_tt.strace"

pytest.importorskip("darshan", reason="the darshan package is missing")


@pytest.fixture(scope="module")
def found():
    with iochar.connect(":memory:") as db:
        db.load(IMBALANCED)
        db.load(STRACE)
        return insights.run(db)


def test_sentence_counts_are_the_results(found):
    text = say.findings(found)
    counts = Counter(found["severity"])
    for sev in ("high", "warn", "info"):
        if counts[sev]:
            assert f"{counts[sev]} {sev} finding" in text
    assert f"{found.evidence['checked']} checks" in text
    # the three named findings are the three most severe, in that order
    named = re.findall(r"^- \*{0,2}(high|warn|info)\*{0,2} job (\d+): ([A-Z0-9-]+)", text, re.M)
    order = {"high": 0, "warn": 1, "info": 2}
    best = sorted(found.to_dict("records"), key=lambda r: (order[r["severity"]], r["code"]))[:3]
    assert [(s, int(j), c.replace("\\", "")) for s, j, c in named] == [
        (r["severity"], r["job_id"], r["code"]) for r in best
    ]
    assert "more finding" in text  # the rest are left to the table
    assert "could not be made for lack of data" in text


def test_one_job_and_its_numbers(found):
    job = int(found["job_id"].iloc[0])
    mine = found[found["job_id"] == job]
    text = say.findings(found, job_id=job)
    assert text.startswith(f"Job {job}: ")
    first = mine.iloc[0]
    k, v = next(iter(first["evidence"].items()))
    assert f"{esc(k)} = " in text
    # the advice without its [reference]; the table keeps the reference
    assert say.advice(first["recommendation"]) in text.replace("\\", "")
    assert not say.advice(first["recommendation"]).endswith("]")
    view = tables.insights_view(found, job_id=job)
    assert list(view.columns) == [
        "job_id", "severity", "code", "topic", "title", "evidence", "recommendation"
    ]  # fmt: skip
    assert view["code"].tolist() == mine["code"].tolist()
    assert view["recommendation"].iloc[0].endswith("]")
    assert f"{k} = " in view["evidence"].iloc[0] and "\\" not in view["evidence"].iloc[0]


def test_no_finding_and_no_job_are_said():
    with iochar.connect(":memory:") as db:
        assert "no insight rule had anything to check" in say.findings(insights.run(db))
        db.load(DATA / "darshan" / "darshan-logs" / "empty_log" / "empty_log.darshan")
        res = insights.run(db)
        text = say.findings(res)
    if res.empty:
        assert "no insight rule fired" in text
        assert f"{res.evidence['checked']} check" in text


def test_names_from_the_data_are_escaped():
    frame = pd.DataFrame(
        [
            {
                "job_id": 3,
                "code": "X-1",
                "topic": "small-io",
                "severity": "high",
                "title": "a *bold* <b>title</b>",
                "evidence": {"path": "/tmp/[x](javascript:alert(1))", "n": 1234.0},
                "recommendation": "do `this` [ref]",
                "sql": "",
            }
        ]
    )
    found = Table(frame, evidence={"not_checked": [], "checked": 1, "jobs": 1})
    text = say.findings(found)
    assert "<b>" not in text and "\\<b\\>" in text
    assert "\\[x\\]" in text and "n = 1,234" in text
    view = tables.insights_view(found)
    assert view["evidence"].iloc[0] == "path = /tmp/[x](javascript:alert(1)); n = 1,234"
