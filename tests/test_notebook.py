"""iochar.notebook: the one parser of time parameters shared by every notebook."""

from __future__ import annotations

import datetime as dt

import pytest

from iochar.errors import ReportError
from iochar.notebook import parse_time


def test_parse_time_gives_naive_utc():
    assert parse_time("2018-01-28T06:00") == dt.datetime(2018, 1, 28, 6, 0)
    assert parse_time("2018-01-28T07:30+01:30") == dt.datetime(2018, 1, 28, 6, 0)
    aware = dt.datetime(2018, 1, 28, 6, 0, tzinfo=dt.timezone(dt.timedelta(hours=-2)))
    assert parse_time(aware) == dt.datetime(2018, 1, 28, 8, 0)
    assert parse_time(None) is None and parse_time("  ") is None


def test_parse_time_refuses_what_is_not_iso_8601():
    with pytest.raises(ReportError, match="^end 'yesterday' is not a date and time"):
        parse_time("yesterday", "end")
    with pytest.raises(ReportError, match="^now 'Jan 28 2018' is not a date and time"):
        parse_time("Jan 28 2018", "now")
