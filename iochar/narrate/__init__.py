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
"""

from __future__ import annotations

import importlib
import math

__all__ = ["fmt_bytes", "fmt_rate", "fmt_pct", "fmt_s", "fmt_num", "plural", "listing"]

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def fmt_bytes(n: float) -> str:
    """Bytes in binary units with one decimal (``"1.5 MiB"``); ``"n/a"`` for NaN.

    Parameters
    ----------
    n : float
        Bytes.
    """
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return "n/a"
    n = float(n)
    i = 0
    while abs(n) >= 1024 and i < len(_UNITS) - 1:
        n /= 1024
        i += 1
    return f"{n:.0f} B" if i == 0 else f"{n:.1f} {_UNITS[i]}"


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


#: Topic modules, one per notebook; ``narrate.apps`` etc. import on first use.
TOPICS = ("overview", "apps", "system", "jobs", "snapshots")


def __getattr__(name: str):
    if name in TOPICS:
        return importlib.import_module(f"iochar.narrate.{name}")
    raise AttributeError(f"module 'iochar.narrate' has no attribute {name!r}")
