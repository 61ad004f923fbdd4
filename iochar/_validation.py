"""Checks of function parameters, one rule each, all raising :class:`~iochar.errors.ParameterError`.

Every analysis in :mod:`iochar.analyze` checks its arguments with these helpers (in
the spirit of scikit-learn's ``check_scalar``), so the same bad value raises the same
error class with the same sentence wherever it is passed: ``The 'name' parameter of
caller must be constraint. Got value instead.`` A :class:`~iochar.errors.ParameterError`
is a :class:`ValueError`.

Each helper returns the value in the form the caller computes with (a ``float``, an
``int``, a tuple, a naive UTC ``datetime``), so a check and its conversion are one line.

Examples
--------
>>> from iochar._validation import check_int, check_real, parse_time
>>> check_real(0.25, "edge", "classify", "a float in (0, 0.5)", low=0, high=0.5,
...            low_open=True, high_open=True)
0.25
>>> check_int(True, "max_periods", "find_periods", "an int >= 1", low=1)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
iochar.errors.ParameterError: The 'max_periods' parameter of find_periods must be an int >= 1. ...
>>> parse_time("2018-01-28T07:30+01:30", "start", "fsu_series")
datetime.datetime(2018, 1, 28, 6, 0)
>>> parse_time("yesterday", "start", "fsu_series")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
iochar.errors.TimeParameterError: start 'yesterday' is not a date and time (use ISO 8601, ...)
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
from collections.abc import Iterable
from typing import Any

from iochar.errors import ParameterError, TimeParameterError

__all__ = ["check_int", "check_real", "check_choice", "check_names", "parse_time"]


def _in_bounds(v: float, low: float, high: float, low_open: bool, high_open: bool) -> bool:
    above = v > low if low_open else v >= low
    below = v < high if high_open else v <= high
    return above and below


def check_real(
    value: Any,
    name: str,
    caller: str,
    constraint: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
    none: bool = False,
) -> float | None:
    """A finite real number (not a bool) within ``[low, high]``, as a float.

    Parameters
    ----------
    value : object
        The argument.
    name : str
        The parameter's name.
    caller : str
        The function that takes it.
    constraint : str
        What is allowed, in words, for the message (e.g. ``"a float in (0, 1)"``).
    low, high : float, default -inf, inf
        Bounds.
    low_open, high_open : bool, default False
        Exclude the bound (an open interval end).
    none : bool, default False
        Accept None (returned as None).

    Returns
    -------
    float or None
        ``float(value)``.

    Raises
    ------
    ParameterError
        ``value`` is not a finite real number within the bounds.
    """
    if value is None and none:
        return None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        v = float(value)
        if math.isfinite(v) and _in_bounds(v, low, high, low_open, high_open):
            return v
    raise ParameterError(name, caller, constraint, value)


def check_int(
    value: Any,
    name: str,
    caller: str,
    constraint: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    none: bool = False,
) -> int | None:
    """An integer (Python or NumPy, not a bool) within ``[low, high]``, as an int.

    Parameters
    ----------
    value : object
        The argument.
    name : str
        The parameter's name.
    caller : str
        The function that takes it.
    constraint : str
        What is allowed, in words, for the message (e.g. ``"an int >= 1"``).
    low, high : float, default -inf, inf
        Inclusive bounds.
    none : bool, default False
        Accept None (returned as None).

    Returns
    -------
    int or None
        ``int(value)``.

    Raises
    ------
    ParameterError
        ``value`` is not an integer within the bounds.
    """
    if value is None and none:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and low <= value <= high:
        return int(value)
    raise ParameterError(name, caller, constraint, value)


def check_choice(
    value: Any, name: str, caller: str, choices: Iterable[Any], constraint: str | None = None
) -> Any:
    """One of a fixed set of values (compared with ``==``).

    Parameters
    ----------
    value : object
        The argument.
    name : str
        The parameter's name.
    caller : str
        The function that takes it.
    choices : iterable
        The allowed values.
    constraint : str, optional
        What is allowed, in words; default ``"one of 'a', 'b'"``.

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    ParameterError
        ``value`` is not one of ``choices``.
    """
    choices = tuple(choices)
    if any(value is c or (isinstance(value, type(c)) and value == c) for c in choices):
        return value
    if constraint is None:
        constraint = "one of " + ", ".join(repr(c) for c in choices)
    raise ParameterError(name, caller, constraint, value)


def check_names(
    value: Any, name: str, caller: str, allowed: Iterable[str], *, empty_ok: bool = False
) -> tuple[str, ...]:
    """Distinct names from ``allowed``: one name (a str) or a sequence of them.

    Parameters
    ----------
    value : str or iterable of str
        The argument.
    name : str
        The parameter's name.
    caller : str
        The function that takes it.
    allowed : iterable of str
        The names allowed.
    empty_ok : bool, default False
        Accept an empty sequence.

    Returns
    -------
    tuple of str
        The names, in the order given.

    Raises
    ------
    ParameterError
        Not iterable, empty (unless ``empty_ok``), a name not allowed, or a repeated name.
    """
    allowed = tuple(allowed)
    if isinstance(value, str):
        value = (value,)
    try:
        out = tuple(value)
    except TypeError:
        raise ParameterError(name, caller, f"a sequence of {', '.join(allowed)}", value) from None
    if (not out and not empty_ok) or any(c not in allowed for c in out) or len(set(out)) < len(out):
        raise ParameterError(name, caller, f"distinct names from {', '.join(allowed)}", value)
    return out


def parse_time(value: Any, name: str = "start", caller: str = "parse_time") -> dt.datetime | None:
    """A time parameter as the store keeps times: a naive datetime in UTC.

    Parameters
    ----------
    value : str, datetime, numpy.datetime64 or None
        ISO 8601 text (``2018-01-28T06:00``; with an offset it is converted to UTC,
        without one it is taken as UTC), a datetime (a :class:`pandas.Timestamp` is one)
        or a ``numpy.datetime64``; None, blank text or NaT give None.
    name : str, default "start"
        The parameter's name, for the message.
    caller : str, default "parse_time"
        The function that takes it.

    Returns
    -------
    datetime.datetime or None
        Naive, in UTC.

    Raises
    ------
    TimeParameterError
        ``value`` is not a date and time (a :class:`~iochar.errors.ParameterError`).
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, dt.datetime):
        t = value
    elif isinstance(value, str):
        try:
            t = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise TimeParameterError(name, caller, "a date and time", value) from None
    elif type(value).__name__ == "datetime64":
        import pandas as pd

        t = pd.Timestamp(value)
    else:
        raise TimeParameterError(name, caller, "a date and time", value)
    if t != t:  # NaT
        return None
    if t.tzinfo is not None:
        t = t.astimezone(dt.UTC).replace(tzinfo=None)
    if hasattr(t, "to_pydatetime"):
        t = t.to_pydatetime(warn=False)  # a pandas Timestamp: microseconds, as the store
    return t
