"""Narrative for the insights of notebooks 01 and 03: what is a problem, and what to do.

Sentences about the result of :func:`iochar.analyze.insights.run`: how many findings
of each severity, the most severe with the number that made it fire and the advice,
and which rules could not be checked for lack of data (and what data they need).
Every number in a sentence is read from the result passed in; an empty result says
that no rule fired and how many (job, rule) pairs were checked, so a quiet page is
never mistaken for a check that did not run.

Examples
--------
>>> import iochar
>>> from iochar.analyze import insights
>>> from iochar.narrate import insights as say
>>> db = iochar.connect(":memory:")
>>> print(say.findings(insights.run(db)))
No job in the database: no insight rule had anything to check.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from iochar.narrate import esc, fmt_num, listing, plural

__all__ = ["findings", "evidence_text", "advice"]

_ORDER = ("high", "warn", "info")
_MARK = {"high": "**high**", "warn": "**warn**", "info": "info"}


def evidence_text(evidence: dict[str, Any], *, limit: int = 4, markdown: bool = True) -> str:
    """The first ``limit`` numbers of a finding's evidence as ``name = value`` text.

    Names are the rule's SQL column names, values as :func:`fmt_num` gives them
    (integers whole, others to three significant figures; a missing value reads
    "n/a"). With ``markdown`` (default) names and text values are escaped for a
    Markdown sentence; without, the text is plain (for a table cell, which the
    renderer escapes).
    """
    show = esc if markdown else str
    parts = [
        f"{show(k)} = {show(v) if isinstance(v, str) else fmt_num(v)}"
        for k, v in (evidence or {}).items()
    ]
    more = len(parts) - limit
    return "; ".join(parts[:limit]) + (f" (+{more} more)" if more > 0 else "")


def advice(recommendation: str) -> str:
    """A finding's recommendation without its trailing ``[reference]`` (plain text).

    :func:`iochar.analyze.insights.run` appends the rule's reference in brackets;
    the narrative names the advice and leaves the reference to the table.
    """
    text = str(recommendation or "")
    if text.endswith("]") and " [" in text:
        text = text[: text.rindex(" [")]
    return text


def findings(found, *, job_id: int | None = None, top: int = 3) -> str:
    """Markdown: the findings of :func:`iochar.analyze.insights.run`, most severe first.

    Parameters
    ----------
    found : iochar.result.Table
        The result of :func:`iochar.analyze.insights.run`.
    job_id : int, optional
        Only this job's findings (the result may hold several jobs).
    top : int, default 3
        Findings named one by one (the most severe; ties by code).

    Returns
    -------
    str
        One paragraph, plus a list of the ``top`` findings.
    """
    ev = getattr(found, "evidence", {}) or {}
    rows = found if job_id is None else found[found["job_id"] == job_id]
    not_checked = [
        n for n in ev.get("not_checked", []) if job_id is None or n.get("job_id") == job_id
    ]
    checked = ev.get("checked", 0)
    if not ev.get("jobs", 0):
        return "No job in the database: no insight rule had anything to check."
    who = f"Job {job_id}" if job_id is not None else "The jobs"
    if rows.empty:
        text = (
            f"{who}: no insight rule fired ({plural(checked, 'check')} of a job "
            "against a rule passed)."
        )
    else:
        counts = Counter(rows["severity"])
        parts = [plural(counts[s], f"{s} finding") for s in _ORDER if counts[s]]
        text = f"{who}: {listing(parts)}, from {plural(checked, 'check')} of a job against a rule."
        order = {s: i for i, s in enumerate(_ORDER)}
        ranked = sorted(
            rows.to_dict("records"), key=lambda r: (order[r["severity"]], r["code"], r["job_id"])
        )
        lines = []
        for r in ranked[:top]:
            job = "" if job_id is not None else f"job {r['job_id']}: "
            lines.append(
                f"- {_MARK[r['severity']]} {job}{esc(r['code'])}, {esc(r['title'])} "
                f"({evidence_text(r['evidence'])}). {esc(advice(r['recommendation']))}"
            )
        if len(ranked) > top:
            lines.append(f"- and {plural(len(ranked) - top, 'more finding')} in the table below.")
        text += "\n\n" + "\n".join(lines)
    if not_checked:
        needs = Counter(n["needs"] for n in not_checked)
        missing = [f"{esc(need)} ({plural(k, 'rule')})" for need, k in needs.most_common(3)]
        text += (
            f"\n\n{plural(len(not_checked), 'check')} could not be made for lack of data; "
            f"most often missing: {listing(missing, limit=3)}."
        )
    return text
