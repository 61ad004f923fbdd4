"""Names from the data read as themselves in narrative, whatever characters they hold.

:func:`iochar.narrate.esc` and :func:`iochar.narrate.code` are the only way a program,
path, device, target or user name enters a sentence; :func:`iochar.notebook.to_html`
renders the sentence as the notebooks and reports show it. For any name, the rendered
text must be the name itself (control characters as spaces) and the HTML must hold no
tag but those the sentence itself asked for.
"""

from __future__ import annotations

import html
import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from iochar.narrate import code, esc
from iochar.report.notebook import to_html

#: Characters Markdown or HTML give a meaning, plus letters, spaces and controls.
_ALPHABET = st.sampled_from(
    list("ab <>&*_`[]()!#+-=.|~\\\"':/1\t\n\r") + ["é", "\x00", "\x1b", "\u2028", "\u202e"]
)
NAMES = st.text(alphabet=_ALPHABET, max_size=30) | st.text(max_size=12)
#: What a sentence may put before a name: nothing (the name opens the paragraph), words,
#: emphasis.
LEADS = st.sampled_from(["", "In ", "**3 jobs** from "])


def _seen(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", page))


def _tags(page: str) -> set[str]:
    return {t.lower() for t in re.findall(r"</?([A-Za-z][\w-]*)", page)}


def _as_text(name: str) -> str:
    return "".join(
        " " if unicodedata.category(c) in {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"} else c
        for c in name
    )


@settings(max_examples=400, deadline=None)
@given(NAMES, LEADS)
def test_an_escaped_name_reads_as_itself_and_adds_no_tag(name, lead):
    page = to_html(f"{lead}[{esc(name)}] end")
    text = " ".join(_seen(page).split())
    want = " ".join(f"[{_as_text(name)}] end".split())
    assert text.endswith(want), (name, page)
    assert _tags(page) <= {"p", "strong"}, (name, page)


@settings(max_examples=400, deadline=None)
@given(NAMES.filter(lambda s: _as_text(s).strip()), LEADS)
def test_a_name_as_code_reads_as_itself_inside_one_code_element(name, lead):
    page = to_html(f"{lead}{code(name)} end")
    assert _tags(page) <= {"p", "strong", "code"}, (name, page)
    inner = re.findall(r"<code>(.*?)</code>", page, flags=re.S)
    assert len(inner) == 1, (name, page)
    # CommonMark strips one space from each side of a padded code span and turns line
    # ends into spaces; the name's own characters are all there
    assert html.unescape(inner[0]).strip() == _as_text(name).strip(), (name, page)
