"""What the notebooks call in their first cells: open the database, check the parameters.

Every notebook under ``notebooks/`` starts with a cell tagged ``parameters`` (literals
only), then calls :func:`setup`, :func:`open_store` and :func:`require`. When a
parameter names a job, target or snapshot the database does not hold, or the database
lacks a table the notebook needs, :func:`require` raises :class:`iochar.errors.ReportError`,
which the notebook shows as one line and ``iochar report`` turns into a non-zero exit.

The notebooks import it as ``from iochar.report import notebook as nb``; the old name
``iochar.notebook`` still works, with a DeprecationWarning.

Examples
--------
>>> from iochar.report.notebook import _float
>>> _float(2097152.0), _float(1234.5678), _float(0.000123)
('2,097,152', '1235', '0.000123')
>>> import iochar
>>> from iochar.report import notebook
>>> db = iochar.connect(":memory:")
>>> _ = db.load(b"op,t_start,size\\nwrite,0.5,4096\\n", kind="trace-csv")
>>> notebook.require(db, tables=["ops"], job_id=0)
>>> notebook.require(db, job_id=7)
Traceback (most recent call last):
...
iochar.errors.ReportError: job_id 7 is not in this database; its jobs are 0 (1 job)
"""

from __future__ import annotations

import datetime as dt
import os
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iochar import _validation
from iochar.errors import ParameterError, ReportError

__all__ = [
    "setup",
    "open_store",
    "require",
    "parse_time",
    "say",
    "to_html",
    "REPORT_ENV",
    "TABLE_HINTS",
]

#: Set (to "1") by ``iochar report`` so charts render as static SVG for the HTML file.
REPORT_ENV = "IOCHAR_REPORT"

#: What loads each table, for messages about a table with no rows.
TABLE_HINTS: dict[str, str] = {
    "ops": "per-operation traces (strace, Darshan DXT, trace CSV/Parquet)",
    "jobs": "application traces or Darshan logs",
    "files": "application traces or Darshan logs",
    "file_stats": "Darshan logs",
    "access_sizes": "Darshan logs",
    "module_counters": "Darshan logs",
    "counters": "device or server counters (iostat, /proc/diskstats, LMT)",
    "size_hist": "Lustre brw_stats",
    "snapshots": "file system snapshots (find -printf, stat, iochar snapshot)",
    "snapshot_files": "file system snapshots (find -printf, stat, iochar snapshot)",
}


def setup() -> None:
    """Configure charts and tables for a notebook.

    Charts never need the network. Under ``iochar report`` (environment variable
    ``IOCHAR_REPORT`` set) altair charts render as static SVG through vl-convert, so
    the HTML report needs no script. Elsewhere the ``"iochar"`` renderer
    (:func:`_offline_renderer`) gives each chart two views: the Vega-Lite spec, which
    the Vega renderer bundled with JupyterLab 4, Notebook 7 and VS Code draws
    interactively (tooltips) without loading anything, and the same SVG, which
    ``jupyter nbconvert --to html`` and frontends without that renderer show. altair's
    own default output instead loads Vega from a CDN, and draws nothing offline.
    """
    import altair as alt
    import pandas as pd

    if os.environ.get(REPORT_ENV):
        alt.renderers.enable("svg")
    else:
        if RENDERER not in alt.renderers.names():
            alt.renderers.register(RENDERER, _offline_renderer)
        alt.renderers.enable(RENDERER)
    pd.set_option("display.max_rows", 40)
    pd.set_option("display.float_format", _float)
    from iochar.report import tables

    pd.set_option("styler.format.na_rep", tables.MISSING)
    tables.install()  # DataFrames show without NaN/None/NaT and scroll when wide


#: The altair renderer :func:`setup` enables outside ``iochar report``.
RENDERER = "iochar"

#: The Vega-Lite MIME type the frontends' bundled renderers take. JupyterLab 4.6 and
#: Notebook 7 (``@jupyterlab/vega5-extension``: "Vega 5 and Vega-Lite 3 to 5") and
#: VS Code's notebook renderers know no ``vegalite.v6`` type, which altair 6 emits.
VEGALITE_MIME = "application/vnd.vegalite.v5+json"


def _offline_renderer(spec: dict, **options: Any) -> tuple[dict, dict]:
    """One chart as an interactive Vega-Lite view plus a static SVG, both offline.

    The frontend picks: JupyterLab, Notebook 7 and VS Code draw :data:`VEGALITE_MIME`
    with the Vega they bundle (vega-embed's SVG renderer, with tooltips); nbconvert's
    HTML exporter and other frontends, which have no renderer for it, take
    ``image/svg+xml`` (vl-convert), which needs no script. The spec carries its data
    inline and no ``$schema`` URL, so nothing names the network, and its tooltips show
    a missing value as "—" (:func:`iochar.plot.tooltips.show_missing`).
    """
    import altair as alt
    from altair.utils.mimebundle import spec_to_mimebundle

    from iochar.plot.tooltips import show_missing

    svg = spec_to_mimebundle(
        spec,
        format="svg",
        mode="vega-lite",
        vega_version=alt.VEGA_VERSION,
        vegaembed_version=alt.VEGAEMBED_VERSION,
        vegalite_version=alt.VEGALITE_VERSION,
    )["image/svg+xml"]
    # tooltips read "—", not "null", where a row has no value
    view = show_missing({k: v for k, v in spec.items() if k != "$schema"})
    # local exports only: no "Open in Vega Editor" (a web page) in the chart's menu
    actions = {"export": True, "source": False, "compiled": False, "editor": False}
    embed = {"renderer": "svg", "actions": actions, **(options.get("embed_options") or {})}
    bundle = {VEGALITE_MIME: view, "image/svg+xml": svg, "text/plain": _chart_text(spec)}
    return bundle, {VEGALITE_MIME: {"embed_options": embed}}


def _chart_text(spec: dict) -> str:
    """The plain-text view of a chart: its title, else its mark type."""
    title = spec.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    if isinstance(title, list):
        title = " ".join(map(str, title))
    mark = spec.get("mark")
    if isinstance(mark, dict):
        mark = mark.get("type")
    label = title or mark
    return f"<altair chart: {label}>" if label else "<altair chart>"


def _float(x: float) -> str:
    """Table cells: large numbers in full with separators, small ones to 4 figures."""
    if x != x:  # NaN
        return "—"
    if abs(x) >= 1e4:
        return f"{x:,.0f}"
    return f"{x:.4g}"


def open_store(
    db: str | os.PathLike[str] = "",
    *,
    data: str | None = None,
    wait: float | None = None,
    hold: bool = False,
):
    """Open the notebook's database read-only, holding the file only while a cell runs.

    DuckDB lets one process write a file or several read it, not both. So that
    ``iochar load`` can add data while a notebook stays open, inside IPython (Jupyter,
    papermill, ``iochar report``) the store's connection is released when each cell
    ends (an IPython ``post_run_cell`` hook) and opened again by the next query, which
    then sees what was loaded meanwhile. If a load holds the file at that moment the
    query retries for ``wait`` seconds, then fails with one line
    (:class:`iochar.errors.DatabaseLockedError`).

    Everything that returns data (``store.sql(...).df()``, ``store.row_counts()``, the
    analysis functions) works as before. What does not outlive its cell: a relation
    not yet fetched (``rel = store.sql(...)`` in one cell, ``rel.df()`` in the next),
    cursors, and views or temporary tables made on ``store.con``. Fetch in the same
    cell, or pass ``hold=True``.

    Parameters
    ----------
    db : str or os.PathLike, default ""
        A DuckDB file built by ``iochar load``. Empty: the demo database built from
        the bundled data (:func:`iochar.datasets.demo.cached_database`; built once, about 10 s).
    data : str, optional
        Real-fixture folder for the demo database instead of the bundled ``data/``.
    wait : float, optional
        Seconds to retry opening while another process (a load) holds the file; 0
        fails at once. Default ``$IOCHAR_WAIT`` (``iochar report --wait`` sets it),
        else 5. [s]
    hold : bool, default False
        Keep the file open until the kernel stops or ``store.close()`` (the behaviour
        before: every ``iochar load`` on it fails meanwhile).

    Returns
    -------
    iochar.Store
        A read-only store.

    Raises
    ------
    ReportError
        When ``db`` names a file that does not exist.
    DatabaseLockedError
        When another process still holds the file after ``wait`` seconds.
    """
    import iochar
    from iochar.errors import DatabaseLockedError

    if not db:
        from iochar.datasets import demo

        tally = demo.LoadTally(print)  # steps only: not a line per input
        path = demo.cached_database(data, progress=tally)
        if tally.summary():
            tally.echo(tally.summary())
    else:
        path = Path(db)
        if not path.is_file():
            raise ReportError(f"database {str(db)!r} does not exist")
    retry = (
        "retry with a longer iochar report --wait SECONDS"
        if os.environ.get(REPORT_ENV)
        else "retry with open_store(db, wait=SECONDS)"
    )
    try:
        store = iochar.connect(str(path), read_only=True, wait=wait)
    except DatabaseLockedError as exc:
        raise exc.with_retry(retry) from None
    store._retry = retry  # for the reopening queries of later cells
    if not hold:
        _release_after_each_cell(store)
    return store


#: Stores whose connection is released when a cell ends (weak: a dropped store goes).
_RELEASED: weakref.WeakSet = weakref.WeakSet()


def _release_stores(result: Any = None) -> None:
    """IPython ``post_run_cell`` hook: free the database files between cells."""
    for store in list(_RELEASED):
        try:
            store.release()
        except Exception:  # a failed close must not disturb the cell's output
            pass


def _release_after_each_cell(store) -> bool:
    """Release ``store`` after every cell of the running IPython; False outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None or not hasattr(shell, "events"):
        return False
    if _release_stores not in shell.events.callbacks["post_run_cell"]:
        shell.events.register("post_run_cell", _release_stores)
    _RELEASED.add(store)
    return True


def _span(values: Sequence[Any], noun: str) -> str:
    values = sorted(values)
    n = len(values)
    if n == 0:
        return f"it has no {noun}s"
    plural = noun if n == 1 else noun + "s"
    shown = ", ".join(str(v) for v in values[:8])
    if n > 8:
        shown += f", ... {values[-1]}"
    return f"its {noun}s are {shown} ({n} {plural})"


def parse_time(value: Any, name: str = "start") -> dt.datetime | None:
    """A time parameter as the store keeps times: a naive UTC datetime.

    The rule is :func:`iochar._validation.parse_time`, the one every analysis uses;
    here its error is a plain :class:`~iochar.errors.ReportError` for the notebook.

    Parameters
    ----------
    value : str, datetime or None
        ISO 8601 text (``2018-01-28T06:00``; with an offset it is converted to UTC,
        without one it is taken as UTC) or a datetime; None or blank gives None.
    name : str, default "start"
        The parameter's name, for the message.

    Returns
    -------
    datetime.datetime or None
        Naive, in UTC.

    Raises
    ------
    ReportError
        When ``value`` is not ISO 8601.
    """
    try:
        return _validation.parse_time(value, name, "notebook")
    except ParameterError as exc:
        raise ReportError(str(exc)) from None


def require(
    store,
    *,
    tables: Sequence[str] = (),
    any_of: Sequence[str] = (),
    job_id: int | None = None,
    targets: Sequence[str] | str | None = None,
    snapshot_ids: Sequence[int] | None = None,
    start: Any = None,
    end: Any = None,
) -> None:
    """Check that the database can answer the notebook for these parameters.

    Parameters
    ----------
    store : iochar.Store
        The open database.
    tables : sequence of str, optional
        Tables that must hold rows.
    any_of : sequence of str, optional
        At least one of these tables must hold rows.
    job_id : int, optional
        Must be a ``jobs.job_id``.
    targets : str or sequence of str, optional
        Each must be a target of ``counters`` or ``size_hist``.
    snapshot_ids : sequence of int, optional
        Each must be a ``snapshots.snapshot_id``.
    start, end : str or datetime, optional
        ISO 8601 times; ``start`` must come before ``end``.

    Raises
    ------
    ReportError
        With one line naming the parameter, the value and what the database holds.
    """
    counts = store.row_counts()
    for t in tables:
        if not counts.get(t):
            raise ReportError(
                f"this database has no rows in table {t!r}; "
                f"load {TABLE_HINTS.get(t, 'data for it')}"
            )
    if any_of and not any(counts.get(t) for t in any_of):
        raise ReportError(
            "this database has no rows in any of "
            + ", ".join(repr(t) for t in any_of)
            + "; load "
            + " or ".join(dict.fromkeys(TABLE_HINTS.get(t, t) for t in any_of))
        )
    if job_id is not None:
        ids = [r[0] for r in store.sql("SELECT job_id FROM jobs ORDER BY job_id").fetchall()]
        if job_id not in ids:
            raise ReportError(f"job_id {job_id!r} is not in this database; {_span(ids, 'job')}")
    if targets:
        want = [targets] if isinstance(targets, str) else list(targets)
        have = {
            r[0]
            for r in store.sql(
                "SELECT DISTINCT target FROM counters UNION SELECT DISTINCT target FROM size_hist"
            ).fetchall()
        }
        for t in want:
            if t not in have:
                raise ReportError(
                    f"target {t!r} is not in this database; {_span(list(have), 'target')}"
                )
    if snapshot_ids:
        ids = [r[0] for r in store.sql("SELECT snapshot_id FROM snapshots").fetchall()]
        for s in snapshot_ids:
            if s not in ids:
                raise ReportError(
                    f"snapshot_id {s!r} is not in this database; {_span(ids, 'snapshot')}"
                )
    t0, t1 = parse_time(start, "start"), parse_time(end, "end")
    if t0 is not None and t1 is not None and t0 >= t1:
        raise ReportError(f"start {start!r} is not before end {end!r}")


def say(markdown: str) -> None:
    """Show a paragraph of narrative (Markdown) computed by :mod:`iochar.narrate`.

    The Markdown is rendered here to HTML with raw HTML switched off (CommonMark via
    markdown-it-py, GFM tables and strikethrough), so any tag in the text, from the data
    or not, shows as text; Jupyter and nbconvert would pass raw HTML in Markdown
    output through. Names from the data are escaped for Markdown by
    :func:`iochar.narrate.esc` / :func:`iochar.narrate.code` before they get here.

    Parameters
    ----------
    markdown : str
        The text.
    """
    from IPython.display import display

    display({"text/html": to_html(markdown), "text/plain": markdown}, raw=True)


def to_html(markdown: str) -> str:
    """Narrative Markdown as HTML, with every raw tag escaped.

    Parameters
    ----------
    markdown : str
        The text.

    Returns
    -------
    str
        HTML.

    Examples
    --------
    >>> to_html("**3 jobs**, one named <img src=x onerror=alert(1)>")
    '<p><strong>3 jobs</strong>, one named &lt;img src=x onerror=alert(1)&gt;</p>\\n'
    """
    global _MD
    if _MD is None:
        from markdown_it import MarkdownIt

        _MD = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    return _MD.render(markdown)


_MD = None
