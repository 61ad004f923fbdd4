"""iochar.notebook: the one parser of time parameters shared by every notebook."""

from __future__ import annotations

import datetime as dt

import pytest

from iochar.errors import ReportError
from iochar.report.notebook import parse_time


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


def test_old_module_name_forwards_with_a_warning():
    """``iochar.notebook`` (before iochar/report/) gives the new module's objects, warning."""
    import importlib

    from iochar.report import notebook

    old = importlib.import_module("iochar.notebook")
    assert old.__all__ == notebook.__all__
    move = r"iochar\.notebook\.open_store moved to iochar\.report\.notebook\.open_store"
    with pytest.warns(DeprecationWarning, match=move):
        assert old.open_store is notebook.open_store


def test_notebooks_import_the_helpers_from_their_new_place():
    """The report notebooks use ``iochar.report.notebook``, not the deprecated name."""
    import json

    from iochar import report

    for book in report.available():
        code = "".join(
            "".join(c["source"])
            for c in json.loads(book.read_text())["cells"]
            if c["cell_type"] == "code"
        )
        assert "from iochar.report import notebook as nb" in code, book.name
        assert "from iochar import notebook" not in code, book.name
