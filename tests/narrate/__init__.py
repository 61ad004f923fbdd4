"""Tests of the notebooks' sentences; :func:`shown` reads them as a reader would."""

from __future__ import annotations

import html
import re

from iochar.report.notebook import to_html


def shown(markdown: str) -> str:
    """The text a reader sees: the Markdown rendered as the notebooks render it,
    tags dropped and entities decoded (emphasis and code marks are gone)."""
    return html.unescape(re.sub(r"<[^>]*>", "", to_html(markdown))).strip()
