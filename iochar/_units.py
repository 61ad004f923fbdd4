"""Byte counts in words: one rule for every sentence iochar writes.

Analyses put it in their evidence text (``reason`` columns) and :mod:`iochar.narrate`
in its sentences (re-exported there as ``narrate.fmt_bytes``).
"""

from __future__ import annotations

import math

__all__ = ["fmt_bytes"]

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
