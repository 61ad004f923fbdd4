"""Narrative for the notebooks: sentences computed from analysis results.

Each topic module (one per notebook) turns the tables that :mod:`iochar.analyze`
returns into short Markdown paragraphs whose every number comes from those tables, so
a notebook states what its data shows rather than canned text. The formatting helpers
here keep units and rounding the same everywhere.

Examples
--------
>>> from iochar import narrate
>>> narrate.fmt_bytes(3 * 2**30)
'3.0 GiB'
>>> narrate.fmt_pct(0.4567)
'45.7%'
>>> narrate.plural(1, "job"), narrate.plural(3, "job")
('1 job', '3 jobs')

Names that come from the data (programs, paths, devices, targets, users) go into a
sentence only through :func:`esc` or :func:`code`, so they read as text and never as
Markdown or HTML:

>>> print(narrate.esc("<img src=x onerror=alert(1)>"))
\\<img src=x onerror=alert(1)\\>
>>> print(narrate.esc("ior_easy*"), narrate.code("a`b"))
ior\\_easy\\* ``a`b``
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import re
import unicodedata

from iochar._units import fmt_bytes

__all__ = [
    "fmt_bytes",
    "fmt_rate",
    "fmt_pct",
    "fmt_s",
    "fmt_num",
    "plural",
    "listing",
    "esc",
    "code",
    "MISSING",
]

#: How a missing name or value reads in a sentence.
MISSING = "\u2014"

#: ASCII punctuation that Markdown (CommonMark with GFM tables and strikethrough) or
#: HTML gives a meaning anywhere in a line: code spans, emphasis, links, raw HTML,
#: entities, table cells, strikethrough. CommonMark lets any ASCII punctuation be
#: escaped with a backslash (spec 0.31, section 2.4), so a backslash before each keeps
#: it literal.
_MD_INLINE = re.compile(r"([\\`*_\[\]<>&|~])")
#: What starts a block when it opens a line: headings, block quotes, list items,
#: thematic breaks, setext underlines (spec sections 4.1-4.3, 5.1-5.3).
_MD_LINE_START = re.compile(r"^(\s*)([#>+=-]|\d{1,9}[.)])")


#: Unicode categories shown as a space: controls (line breaks, tabs, escapes), format
#: characters (bidirectional overrides that reorder what a reader sees), unassigned and
#: private-use code points, and line and paragraph separators.
_BREAKS = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _plain(value) -> str | None:
    """``value`` as one line of text: None for a missing value, control characters
    (line breaks, tabs, escapes) as spaces so a name cannot start a new block."""
    if value is None:
        return None
    try:
        if value != value:  # NaN, NaT, <NA> compare unequal or raise
            return None
    except (TypeError, ValueError):
        return None
    text = str(value)
    return "".join(" " if unicodedata.category(c) in _BREAKS else c for c in text)


def esc(value) -> str:
    """A name from the data as Markdown text that reads exactly as it is.

    Every character that Markdown or HTML would interpret (backslash, backtick,
    ``*``, ``_``, ``[``, ``]``, ``<``, ``>``, ``&``, ``|``, ``~``, and what opens a block
    at the start of a line) is backslash-escaped, and control characters become
    spaces. Program, path, device, target and user names are untrusted input: they go
    into narrative only through this function or :func:`code`.

    Parameters
    ----------
    value : object
        The name; ``None`` and missing values give :data:`MISSING`.

    Returns
    -------
    str
        Markdown text.
    """
    text = _plain(value)
    if text is None:
        return MISSING
    text = _MD_INLINE.sub(r"\\\1", text)
    m = _MD_LINE_START.match(text)
    if m:
        text = text[: m.end() - 1] + "\\" + text[m.end() - 1 :]
    return text


def code(value) -> str:
    """A name from the data as a Markdown code span (a path, a command).

    The fence is one backtick longer than the longest run of backticks in the name,
    with a space inside when the name starts or ends with a backtick (CommonMark
    section 6.1); nothing inside a code span is interpreted, and renderers escape it
    for HTML.

    Parameters
    ----------
    value : object
        The name; ``None`` and missing values give :data:`MISSING`.

    Returns
    -------
    str
        Markdown code span.
    """
    text = _plain(value)
    if text is None:
        return MISSING
    if not text.strip():
        return esc(repr(text))
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fmt_rate(bytes_per_s: float) -> str:
    """A data rate (``"12.3 MiB/s"``).

    Parameters
    ----------
    bytes_per_s : float
        Bytes per second.
    """
    return fmt_bytes(bytes_per_s) + "/s"


def fmt_pct(share: float, digits: int = 1) -> str:
    """A share in [0, 1] as a percentage (``0.456 -> "45.6%"``).

    Parameters
    ----------
    share : float
        Fraction (1.0 = 100%).
    digits : int, default 1
        Decimals.
    """
    if share is None or (isinstance(share, float) and math.isnan(share)):
        return "n/a"
    return f"{100 * float(share):.{digits}f}%"


def fmt_s(seconds: float) -> str:
    """A duration in the largest sensible unit (``"2.1 s"``, ``"3.5 min"``, ``"1.2 h"``).

    Parameters
    ----------
    seconds : float
        Seconds.
    """
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "n/a"
    s = float(seconds)
    if abs(s) < 1:
        return f"{s * 1000:.3g} ms"
    if abs(s) < 120:
        return f"{s:.3g} s"
    if abs(s) < 7200:
        return f"{s / 60:.3g} min"
    if abs(s) < 172800:
        return f"{s / 3600:.3g} h"
    return f"{s / 86400:.3g} days"


def fmt_num(x: float, digits: int = 3) -> str:
    """A number to ``digits`` significant figures with thousands separators.

    Parameters
    ----------
    x : float
        The number.
    digits : int, default 3
        Significant figures for non-integers.
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if float(x).is_integer():
        return f"{int(x):,}"
    return f"{float(x):,.{digits}g}"


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``"1 file"``, ``"2 files"``.

    Parameters
    ----------
    n : int
        Count.
    noun : str
        Singular.
    nouns : str, optional
        Plural when not ``noun + "s"``.
    """
    return f"{n:,} {noun if n == 1 else (nouns or noun + 's')}"


def listing(items, *, limit: int = 5) -> str:
    """``"a, b and c"``; more than ``limit`` items end in ``"and N more"``.

    Parameters
    ----------
    items : iterable of str
        The items, in order.
    limit : int, default 5
        Items shown before summarising the rest.
    """
    items = [str(i) for i in items]
    if not items:
        return "none"
    if len(items) > limit:
        return ", ".join(items[:limit]) + f" and {len(items) - limit} more"
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


#: Topic modules (one per notebook, and Darshan's modules); ``narrate.apps`` etc.
#: import on first use. Any other submodule (``narrate.insights``...) imports the
#: same way.
TOPICS = ("overview", "apps", "system", "jobs", "snapshots", "darshan", "insights")


def __getattr__(name: str):
    if name in TOPICS or (
        not name.startswith("_") and importlib.util.find_spec(f"iochar.narrate.{name}") is not None
    ):
        return importlib.import_module(f"iochar.narrate.{name}")
    raise AttributeError(f"module 'iochar.narrate' has no attribute {name!r}")
