"""Tables as a reader should see them: no NaN, None or NaT, numbers aligned, wide ones scroll.

:func:`frame_html` is the one HTML rendering of a pandas table in notebooks and
reports; :func:`install` makes it the DataFrame's HTML in the running IPython
kernel (``nb.setup()`` calls it). The rule: a missing value (NaN, None, NaT,
``<NA>``) shows as an em dash, with a footnote under the table saying so;
infinities show as ``∞``; times to the second; an unnamed integer index (row
numbers) is left out; snake_case headers read as words with units
(``slowest_io_s`` -> "slowest I/O [s]"); a column of bytes or bytes/s
(``io_bytes``, ``read_bps``) reads in binary units per cell ("2.1 GiB",
"12.0 MiB/s"); other numbers are right-aligned with thousands separators and
at most four significant figures below 10,000; every cell and header is
HTML-escaped; a table wider than the page scrolls inside its own box. A result
table (:class:`iochar.result.Table`) made by SQL shows that SQL under it,
folded, in a notebook and in a report run with ``--show-code``.
"""

from __future__ import annotations

import datetime as dt
import html
import math
import numbers
import os
import re
from typing import Any

import numpy as np
import pandas as pd

from iochar.report.notebook import REPORT_ENV

__all__ = ["MISSING", "cell_text", "frame_html", "header_text", "install"]

#: What a missing value shows as.
MISSING = "—"

_FOOTNOTE = f"{MISSING} no value: not measured, not defined for this row, or not applicable."


def _is_missing(v: Any) -> bool:
    if v is None or v is pd.NaT or v is pd.NA:
        return True
    if isinstance(v, float | np.floating):
        return bool(np.isnan(v))
    try:
        return bool(pd.isna(v)) if np.ndim(v) == 0 else False
    except (TypeError, ValueError):
        return False


def cell_text(v: Any) -> str:
    """One table cell as text: missing values as an em dash, numbers readable.

    Parameters
    ----------
    v : object
        The value.

    Returns
    -------
    str
        Unescaped text.

    Examples
    --------
    >>> [cell_text(x) for x in (None, float("nan"), 1234567.0, 0.012345, True, 7)]
    ['—', '—', '1,234,567', '0.01235', 'yes', '7']
    """
    if _is_missing(v):
        return MISSING
    if isinstance(v, bool | np.bool_):
        return "yes" if v else "no"
    if isinstance(v, numbers.Integral):
        return f"{int(v):,}" if abs(int(v)) >= 10_000 else str(int(v))
    if isinstance(v, numbers.Real):
        x = float(v)
        if math.isinf(x):
            return "∞" if x > 0 else "-∞"
        if abs(x) >= 1e4:
            return f"{x:,.0f}"
        if x == int(x) and abs(x) < 1e4:
            return str(int(x))
        return f"{x:.4g}"
    if isinstance(v, pd.Timestamp | dt.datetime):
        ts = pd.Timestamp(v)
        if ts.tzinfo is not None:
            ts = ts.tz_convert("UTC").tz_localize(None)
        return ts.round("s").strftime("%Y-%m-%d %H:%M:%S")  # to the second, 24-hour
    if isinstance(v, pd.Timedelta | dt.timedelta):
        return f"{pd.Timedelta(v).total_seconds():g} s"
    if isinstance(v, list | tuple | set | frozenset | np.ndarray):
        return ", ".join(cell_text(x) for x in v)
    return str(v)


_NUM = ' class="num" style="text-align:right;font-variant-numeric:tabular-nums"'
_TEXT = ' style="text-align:left"'
_TIME = ' style="text-align:left;white-space:nowrap"'  # a date and time reads on one line


_WORDS = {
    "io": "I/O", "ios": "I/Os", "mib": "MiB", "gib": "GiB", "kib": "KiB", "tib": "TiB",
    "cv": "CV", "cn": "CN", "fsu": "FSU", "ost": "OST", "id": "ID", "cdf": "CDF",
    "bw": "bandwidth", "pct": "[%]", "ts": "(UTC)", "meta": "metadata", "avg": "mean",
}  # fmt: skip
_PER_SECOND = {"mib", "gib", "kib", "tib", "b", "bytes", "ios", "reads", "writes", "ops"}


def header_text(name: Any) -> str:
    """A column name as a reader reads it: ``slowest_io_s`` -> ``slowest I/O [s]``.

    Only snake_case identifiers are rewritten (words, units in brackets, rates as
    ``/s``); a header already written for people (``read MiB/s``) is kept.

    Parameters
    ----------
    name : object
        The column name.

    Returns
    -------
    str

    Examples
    --------
    >>> [header_text(c) for c in ("slowest_io_s", "mib_s_cn", "io_time_pct", "first_ts")]
    ['slowest I/O [s]', 'MiB/s/CN', 'I/O time [%]', 'first (UTC)']
    >>> [header_text(c) for c in ("job_id", "bytes_read", "read MiB/s", "ios")]
    ['job ID', 'bytes read', 'read MiB/s', 'I/Os']
    """
    text = str(name)
    if not re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", text):
        return text
    tokens = text.split("_")
    out: list[str] = []
    for i, tok in enumerate(tokens):
        if tok == "s" and i > 1 and tokens[i - 1] == "per":
            out.pop()
            out[-1] += "/s"
        elif tok == "s" and i > 0 and tokens[i - 1] in _PER_SECOND:
            out[-1] += "/s"
        elif tok == "cn" and out and out[-1].endswith("/s"):
            out[-1] += "/CN"
        elif tok == "s" and i == len(tokens) - 1 and i > 0:
            out.append("[s]")
        else:
            out.append(_WORDS.get(tok, tok))
    return " ".join(out)


#: Words that make a column of bytes a share of them (no unit).
_SHARE = {"cdf", "share", "pct", "frac", "fraction", "ratio"}


def _unit_text(name: Any):
    """How a numeric column's cells read: bytes and bytes/s in binary units, else numbers."""
    from iochar.narrate import fmt_bytes, fmt_rate

    tokens = str(name).split("_") if re.fullmatch(r"[a-z0-9_]+", str(name)) else []
    if _SHARE & set(tokens):  # cdf_bytes, share_bytes, pct_bytes: a fraction of bytes
        return cell_text
    rate = "bps" in tokens or ("bytes" in tokens and tokens[-2:] == ["per", "s"])
    unit = fmt_rate if rate else fmt_bytes if "bytes" in tokens else None
    if unit is None:
        return cell_text

    def text(v: Any) -> str:
        if _is_missing(v) or not isinstance(v, numbers.Real) or isinstance(v, bool):
            return cell_text(v)
        return unit(float(v))

    return text


def _show_sql() -> bool:
    """In a notebook (not a report) or in a report asked for its code (``--show-code``)."""
    mode = os.environ.get(REPORT_ENV)
    return not mode or mode == "code"


def _numeric(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype)


def frame_html(df: pd.DataFrame, *, max_rows: int | None = 60) -> str:
    """A DataFrame as one escaped HTML table in a horizontally scrolling box.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    max_rows : int or None, default 60
        Rows shown (the first ``max_rows``; a line says how many were left out).

    Returns
    -------
    str
        HTML: a ``div.iochar-table`` holding the table and, when any value is
        missing, a footnote saying what the dash means.

    Examples
    --------
    >>> html_ = frame_html(pd.DataFrame({"a": [1.5, None], "b": ["<x>", "y"]}))
    >>> "NaN" in html_, "&lt;x&gt;" in html_, "—" in html_
    (False, True, True)
    """
    shown = df if max_rows is None or len(df) <= max_rows else df.head(max_rows)
    idx = shown.index
    # an unnamed integer index is row numbers (0, 1, 2... or what a filter left): not shown
    keep_index = not (
        idx.nlevels == 1 and idx.name is None and pd.api.types.is_integer_dtype(idx.dtype)
    )
    cols = list(shown.columns)
    numeric = [_numeric(shown[c]) if not isinstance(c, tuple) else False for c in cols]
    texts = [_unit_text(c) if num else cell_text for c, num in zip(cols, numeric, strict=True)]
    missing = False
    head = []
    if keep_index:
        names = [n for n in (idx.names or []) if n is not None]
        head.append(f"<th>{html.escape(', '.join(map(header_text, names)))}</th>")
    for c in cols:
        label = " ".join(map(str, c)) if isinstance(c, tuple) else header_text(c)
        head.append(f"<th>{html.escape(label)}</th>")
    body = []
    values = [shown[c].tolist() for c in cols] if len(cols) else []
    labels = idx.tolist()
    for i in range(len(shown)):
        cells = []
        if keep_index:
            lab = labels[i]
            txt = ", ".join(map(cell_text, lab)) if isinstance(lab, tuple) else cell_text(lab)
            cells.append(f"<th>{html.escape(txt)}</th>")
        for j, num in enumerate(numeric):
            v = values[j][i]
            miss = _is_missing(v) if np.ndim(v) == 0 else False
            missing |= miss
            cls = _NUM if num else _TIME if isinstance(v, dt.datetime) else _TEXT
            cells.append(f"<td{cls}>{html.escape(texts[j](v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    notes = []
    if len(shown) < len(df):
        notes.append(f"first {len(shown):,} of {len(df):,} rows")
    if missing:
        notes.append(_FOOTNOTE)
    foot = "".join(f'<p class="iochar-note">{html.escape(n)}</p>' for n in notes)
    sql = getattr(df, "sql", None)
    if isinstance(sql, str) and sql.strip() and _show_sql():
        foot += (
            '<details class="iochar-sql"><summary>SQL behind this table</summary>'
            f"<pre>{html.escape(sql.strip())}</pre></details>"
        )
    return (
        '<div class="iochar-table" style="overflow-x:auto;max-width:100%">'
        '<table class="dataframe iochar">'
        f"<thead><tr>{''.join(head)}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        f"{foot}</div>"
    )


def install() -> bool:
    """Make :func:`frame_html` the HTML of every DataFrame shown in this IPython kernel.

    Returns
    -------
    bool
        False when not running under IPython (nothing to install).
    """
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    if ip is None:
        return False
    ip.display_formatter.formatters["text/html"].for_type(pd.DataFrame, frame_html)
    return True
