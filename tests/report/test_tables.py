"""Tables as a reader sees them (iochar.report.tables): no missing-value tokens, escaped."""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pandas as pd
import pytest

from iochar.report.browser import LEAK_PATTERN
from iochar.report.tables import MISSING, cell_text, frame_html
from iochar.result import Table


def _visible(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def test_missing_values_of_every_kind_show_as_a_dash_with_a_footnote():
    df = pd.DataFrame(
        {
            "float": [1.5, np.nan, math.inf],
            "object": [None, "x", pd.NA],
            "time": pd.to_datetime(
                ["2024-01-01 10:00:00", None, "2024-01-01 10:00:00.7"], format="ISO8601"
            ),
            "int": pd.array([1, None, 3], dtype="Int64"),
            "bool": [True, False, None],
        }
    )
    out = frame_html(df)
    text = _visible(out)
    assert re.findall(LEAK_PATTERN, text) == []
    assert text.count(MISSING) >= 5 + 1  # the cells, and the footnote that explains them
    assert "∞" in text and "2024-01-01 10:00:00" in text and "2024-01-01 10:00:01" in text
    assert ".7" not in text and ".000000" not in text  # times to the second
    assert "yes" in text and "no" in text


def test_no_footnote_without_missing_values_and_default_index_hidden():
    out = frame_html(pd.DataFrame({"a": [1, 20_000]}))
    assert MISSING not in _visible(out) and "20,000" in out
    assert out.count("<th>") == 1  # the column only: no 0, 1 index column
    filtered = frame_html(pd.DataFrame({"a": [1, 2, 3]}).iloc[[2, 0]])
    assert filtered.count("<th>") == 1  # what a filter left of the row numbers is not shown
    named = frame_html(pd.DataFrame({"a": [1, 2]}, index=pd.Index(["x", "y"], name="k")))
    assert "<th>k</th>" in named and "<th>x</th>" in named


def test_cells_and_headers_are_escaped():
    out = frame_html(pd.DataFrame({"<b>col</b>": ["<img src=x onerror=alert(1)>"]}))
    assert "<img" not in out and "<b>" not in out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out


def test_wide_tables_scroll_in_their_own_box_and_long_ones_say_what_was_cut():
    out = frame_html(pd.DataFrame({"v": range(100)}), max_rows=10)
    assert "overflow-x:auto" in out
    assert "first 10 of 100 rows" in _visible(out)


def test_a_result_table_renders_like_a_dataframe():
    t = Table({"x": [1.0, None]}, evidence={"n": 2})
    assert frame_html(t) == frame_html(pd.DataFrame({"x": [1.0, None]}))


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, MISSING), (float("nan"), MISSING), (pd.NaT, MISSING), (pd.NA, MISSING),
     (-math.inf, "-∞"), (12345.678, "12,346"), (0.000123456, "0.0001235"), (3.0, "3"),
     (np.int64(123456), "123,456"), ([1, None], "1, " + MISSING)],
)  # fmt: skip
def test_cell_text(value, text):
    assert cell_text(value) == text


def test_the_sql_behind_a_result_table_shows_in_notebooks_and_show_code_reports(monkeypatch):
    t = Table({"x": [1]}, sql="SELECT 1 AS x WHERE 'a' < 'b'")
    monkeypatch.delenv("IOCHAR_REPORT", raising=False)
    shown = frame_html(t)
    assert "SQL behind this table" in shown and "&#x27;a&#x27; &lt; &#x27;b&#x27;" in shown
    monkeypatch.setenv("IOCHAR_REPORT", "1")
    assert "SQL behind" not in frame_html(t)  # a report for readers: no code
    monkeypatch.setenv("IOCHAR_REPORT", "code")
    assert "SQL behind this table" in frame_html(t)
    assert "SQL behind" not in frame_html(pd.DataFrame({"x": [1]}))  # no SQL, nothing shown


def test_byte_and_rate_columns_read_in_binary_units():
    df = pd.DataFrame(
        {"io_bytes": [2_246_939_998, 7, None], "read_bps": [2.0**20 * 12, 0.0, 1.0], "n": [1, 2, 3]}
    )
    df["cdf_bytes"] = [0.25, 0.5, 1.0]  # a share of the bytes: a number, not bytes
    df["bytes_per_s"] = [2.0**30, 1.0, 2.0]
    text = _visible(frame_html(df))
    assert "2.1 GiB" in text and "7 B" in text and "12.0 MiB/s" in text
    assert "CDF bytes" in text and "0.25" in text and "0.5" in text and "1.0 GiB/s" in text
    assert "bytes/s" in text  # the header of bytes_per_s
    assert not re.search(r"\b0 B\b(?!/)", text)  # no share of bytes shown as bytes
    assert "2,246,939,998" not in text and MISSING in text
    assert re.findall(LEAK_PATTERN, text) == []
