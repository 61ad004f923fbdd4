"""Sentences on one job in its system (iochar.narrate.context), from real captures."""

from __future__ import annotations

from pathlib import Path

import pytest

import iochar
from iochar.analyze import context
from iochar.narrate import context as nc
from iochar.narrate import fmt_bytes, fmt_pct, fmt_rate
from iochar.result import Table

INSIGHTS = Path(__file__).resolve().parents[2] / "data" / "insights"


def _ctx(case: str):
    db = iochar.connect(":memory:")
    db.load(INSIGHTS / f"{case}.strace")
    db.load(INSIGHTS / f"{case}.diskstats")
    return context.job_context(db, 0), context.concurrent_jobs(db, 0)


def test_a_covered_job_is_told_with_the_tables_numbers():
    ctx, others = _ctx("collide")
    row = ctx.iloc[0]
    text = nc.job_system(ctx, others)
    assert "ckpt\\_app" in text  # the name from the data, escaped
    assert "matched by time only" in text
    assert fmt_rate(row["rate_bps"]) in text and fmt_rate(row["peak_bps"]) in text
    assert fmt_pct(row["peak_share"]) + " of its observed peak" in text
    assert fmt_pct(row["busy_share"]) + " of the observed window" in text
    assert fmt_bytes(ctx.evidence["job_bytes"]) in text
    assert "most of the load came from elsewhere" in text
    assert "No other job of this database ran at the same time." in text


def test_a_job_served_by_the_cache_is_said_so():
    ctx, _ = _ctx("apart")
    assert ctx.evidence["job_share"] > 1  # its input was read from the page cache
    text = nc.job_system(ctx)
    assert "reads served from a cache never reached them" in text
    assert "less than 0.1% of its observed peak" in text


def test_an_uncovered_job_says_why_and_escapes_names():
    ev = {
        "job_id": 7,
        "app": "*evil*<b>",
        "status": "no_match",
        "reason": "counters cover the job's window, but the targets are fs_[1]",
        "window_start": None,
        "window_end": None,
        "window_s": float("nan"),
    }
    text = nc.job_system(Table({}, evidence=ev))
    assert "\\*evil\\*\\<b\\>" in text and "<b>" not in text
    assert "is not known" in text and "fs\\_\\[1\\]" in text


@pytest.mark.parametrize("status", ["no_date"])
def test_a_job_without_a_date(status):
    text = nc.job_system(Table({}, evidence={"job_id": 1, "status": status}))
    assert "has no start date" in text
