"""Run a notebook as a parameterized report and write one self-contained HTML file.

``iochar report NAME [-p KEY VALUE]... -o OUT.html`` and ``iochar demo`` call
:func:`run`: papermill executes ``notebooks/NAME.ipynb`` with the parameters (checked
against the notebook's ``parameters`` cell and converted to the types of its
defaults), with ``IOCHAR_REPORT=1`` so altair charts render as static SVG through
vl-convert. The executed notebook becomes one HTML page: narrative and outputs, code
hidden, charts as inline SVG images, no ``<script>`` and no external URL, so it opens
offline. When a cell fails the page is still written, opening with the one-line
reason, and :class:`ReportResult` carries it for a non-zero exit.

What the notebooks call in their first cells (open the database, check the parameters,
show narrative) is :mod:`iochar.report.notebook`, imported there as
``from iochar.report import notebook as nb``.

Examples
--------
>>> from iochar import report
>>> [p.stem for p in report.available()][:1]
['00-overview']
>>> report.resolve("overview").stem
'00-overview'
"""

from __future__ import annotations

import ast
import datetime as dt
import html
import logging
import os
import re
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iochar import __version__
from iochar.errors import IocharError, MissingDependencyError, ParameterError, ReportError
from iochar.report.notebook import REPORT_ENV
from iochar.report.tables import MISSING, cell_text

__all__ = [
    "ReportResult",
    "notebooks_dir",
    "available",
    "resolve",
    "parameters",
    "coerce",
    "run",
    "to_html",
    "write_index",
    "external_urls",
]


@dataclass(frozen=True)
class ReportResult:
    """What one report run produced.

    Attributes
    ----------
    name : str
        Notebook stem (``01-application-traces``).
    title : str
        The notebook's first heading.
    html : pathlib.Path
        The HTML file written (also on failure).
    seconds : float
        Wall-clock time of the run.
    error : str or None
        One line saying why the report stopped; None when every cell ran.
    params : dict
        The parameters passed to the notebook.
    """

    name: str
    title: str
    html: Path
    seconds: float
    error: str | None = None
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when every cell ran."""
        return self.error is None


def notebooks_dir() -> Path:
    """The notebooks folder (``$IOCHAR_NOTEBOOKS`` or ``notebooks/`` beside the package).

    Raises
    ------
    IocharError
        When there is no such folder (a non-editable install without the repository).
    """
    for cand in (
        os.environ.get("IOCHAR_NOTEBOOKS"),
        Path(__file__).resolve().parents[2] / "notebooks",  # iochar/report/__init__.py
    ):
        if cand and Path(cand).is_dir():
            return Path(cand)
    raise IocharError(
        "notebooks not found; run from a checkout installed with pip install -e . "
        "or set IOCHAR_NOTEBOOKS to the repository's notebooks/ folder"
    )


def available() -> list[Path]:
    """Every report notebook (``NN-topic.ipynb``), in order."""
    return sorted(p for p in notebooks_dir().glob("[0-9][0-9]-*.ipynb") if p.is_file())


def resolve(name: str | os.PathLike[str]) -> Path:
    """Find a notebook by stem (``02-system-load``), number (``02``) or topic (``system-load``).

    Parameters
    ----------
    name : str or os.PathLike
        The name, or a path to an ``.ipynb`` file.

    Raises
    ------
    ReportError
        When nothing matches; the message lists the notebooks there are.
    """
    p = Path(name)
    if p.suffix == ".ipynb" and p.is_file():
        return p
    key = p.name.removesuffix(".ipynb")
    books = available()
    for b in books:
        if key in (b.stem, b.stem[:2], b.stem[3:]):
            return b
    raise ReportError(
        f"no report named {str(name)!r}; reports are " + ", ".join(b.stem for b in books)
    )


def _title(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, re.M)
            if m:
                return m.group(1).strip()
    return ""


def _parameter_cell(path: str | os.PathLike[str]) -> list[tuple[str, Any, str]]:
    """(name, default, annotation or "") of each line of the ``parameters`` cell."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            out = []
            for node in ast.parse(cell.source).body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    out.append((node.targets[0].id, ast.literal_eval(node.value), ""))
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    ann = ast.unparse(node.annotation)
                    out.append((node.target.id, ast.literal_eval(node.value), ann))
            return out
    return []


def parameters(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The notebook's parameters and their defaults, read from its ``parameters`` cell.

    Parameters
    ----------
    path : str or os.PathLike
        The notebook.

    Returns
    -------
    dict of str to object
        Name to default value (Python literal), in cell order.
    """
    return {name: default for name, default, _ in _parameter_cell(path)}


_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def _literal(text: str) -> Any:
    """None for none/null/blank, else the Python literal, else the text (a bare word)."""
    if text.strip().lower() in ("none", "null", ""):
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _convert(key: str, text: str, default: Any, annotation: str = "") -> Any:
    if re.match(r"(list|tuple|Sequence)\b", annotation) or " list[" in f" {annotation}":
        # a list parameter given as a word or "a,b,c" (or a Python literal)
        value = _literal(text)
        if value is None:
            return None
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return list(value) if isinstance(value, (list, tuple)) else [value]
    if isinstance(default, bool):
        low = text.lower()
        if low in _TRUE | _FALSE:
            return low in _TRUE
        raise ReportError(f"parameter {key} expects true or false, got {text!r}")
    scalar = re.fullmatch(r"(int|float)\b.*", annotation.strip())
    if default is None and scalar:  # `job_id: int = None`: none, or that type
        if text.strip().lower() in ("none", "null", ""):
            return None
        typ, word = (int, "an integer") if scalar.group(1) == "int" else (float, "a number")
        try:
            return typ(text)
        except ValueError:
            raise ReportError(f"parameter {key} expects {word} or none, got {text!r}") from None
    for typ, word in ((int, "an integer"), (float, "a number")):
        if isinstance(default, typ):
            try:
                return typ(text)
            except ValueError:
                raise ReportError(f"parameter {key} expects {word}, got {text!r}") from None
    if isinstance(default, str):
        return text
    if isinstance(default, (list, tuple)) or default is None:
        value = _literal(text)
        if value is None:
            return None
        if isinstance(default, (list, tuple)) and isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        return list(value) if isinstance(value, tuple) else value
    return text


def coerce(path: str | os.PathLike[str], pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Check ``-p KEY VALUE`` pairs against the notebook and give them its types.

    Text values take the type of the parameter's default (``int``, ``float``, ``bool``,
    ``str``; a ``None`` or list default accepts ``none``, a Python literal, or a word;
    a list default also accepts ``a,b,c``). A parameter annotated as a list in the
    cell (``targets: list[str] = None``; papermill cannot read ``| None``) turns a
    word or ``a,b`` into a list, and one annotated ``int`` or ``float``
    (``job_id: int = None``) takes ``none`` or a number of that type, so
    ``-p job_id abc`` says the job id must be an integer. A string value naming an
    existing relative path becomes absolute, since the notebook runs in its own folder.

    Parameters
    ----------
    path : str or os.PathLike
        The notebook.
    pairs : iterable of (str, object)
        Names and values; non-string values pass unchanged.

    Returns
    -------
    dict of str to object
        The parameters to inject.

    Raises
    ------
    ReportError
        For a name the notebook does not have or a value of the wrong type.
    """
    cell = _parameter_cell(path)
    known = {name: default for name, default, _ in cell}
    notes = {name: ann for name, _, ann in cell}
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key not in known:
            raise ReportError(
                f"{Path(path).stem} has no parameter {key!r}; its parameters are "
                + ", ".join(known)
            )
        if isinstance(value, str):
            value = _convert(key, value, known[key], notes[key])
        if isinstance(value, str) and value and not os.path.isabs(value) and os.path.exists(value):
            value = os.path.abspath(value)
        out[key] = value
    return out


def _error_line(exc: Exception) -> str:
    ename, evalue = getattr(exc, "ename", type(exc).__name__), getattr(exc, "evalue", str(exc))
    if ename in ("ReportError", "DatabaseLockedError"):
        return str(evalue)
    first = str(evalue).strip().splitlines()[0] if str(evalue).strip() else ""
    cell = getattr(exc, "exec_count", None)
    where = f"cell [{cell}] " if cell else ""
    return f"{where}raised {ename}: {first}"


#: Kernels started for one report when a kernel stops before running any cell (a start
#: problem such as a kernel killed under load), counting the first: bounded, and only
#: while nothing has run, so a report never runs a cell twice.
KERNEL_STARTS = 2


def _kernel_manager_class(folder: Path, log: Path) -> type:
    """The kernel manager papermill uses for one report's kernel.

    The kernel's own stdout and stderr go to ``log`` instead of ours: what a kernel
    writes there (a thread's traceback when it shuts down, a failed start) is not the
    report's output, and ``iochar report`` keeps its error to one line; :func:`run`
    quotes the log's last line when the kernel could not run the notebook. On POSIX the
    kernel talks over Unix sockets in ``folder`` rather than TCP ports: jupyter_client
    picks free TCP ports, closes them and hands them to the kernel to bind, so two
    processes starting kernels at once (``iochar demo`` runs notebooks in parallel
    processes; tests or users run reports side by side) can pick the same port and a
    kernel then fails to bind it (``Address already in use``: the kernel dies at start,
    or its heartbeat thread dies with a traceback on stderr). Socket files in a folder
    of our own cannot be taken by anyone else.
    """
    from jupyter_client.manager import AsyncKernelManager

    class ReportKernelManager(AsyncKernelManager):
        def __init__(self, **kw: Any) -> None:
            if os.name == "posix":  # Unix sockets (Windows has no ipc transport)
                kw.update(transport="ipc", ip=str(folder / "zmq"), cache_ports=False)
            super().__init__(**kw)

        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            with open(log, "ab") as out:  # the kernel holds its own copy of the file
                kw["stdout"] = kw["stderr"] = out
                await super()._async_launch_kernel(kernel_cmd, **kw)

    return ReportKernelManager


def _cells_started(executed: Path) -> bool:
    """Whether papermill's record of the run shows any code cell started."""
    try:
        import nbformat

        nb = nbformat.read(str(executed), as_version=4)
    except Exception:  # not written: papermill stopped before the kernel ran anything
        return False
    return any(
        c.cell_type == "code"
        and (
            c.get("execution_count") is not None
            or c.metadata.get("papermill", {}).get("status", "pending") != "pending"
        )
        for c in nb.cells
    )


def _kernel_said(log: Path, starts: int) -> str:
    """The last line the kernel wrote on its stderr, for the error line."""
    try:
        lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines()]
    except OSError:
        lines = []
    lines = [ln for ln in lines if ln]
    said = f"; the kernel said: {lines[-1][:200]}" if lines else ""
    return f" (kernel started {starts} time{'s' if starts > 1 else ''}{said})"


def run(
    name: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    params: Mapping[str, Any] | Sequence[tuple[str, Any]] = (),
    timeout_s: float = 600.0,
    keep_notebook: bool = False,
    show_code: bool = False,
    wait: float | None = None,
) -> ReportResult:
    """Execute a notebook with papermill and write its HTML report.

    Parameters
    ----------
    name : str or os.PathLike
        Notebook stem, number, topic or path (:func:`resolve`).
    out : str or os.PathLike
        The HTML file to write (its folder is created).
    params : mapping or sequence of (str, object), optional
        Parameters; text values are converted by :func:`coerce`.
    timeout_s : float, default 600
        Longest a single cell may run [s].
    keep_notebook : bool, default False
        Also keep the executed ``.ipynb`` beside the HTML file.
    show_code : bool, default False
        Show the code cells in the page too (default: narrative and outputs only).
    wait : float, optional
        Seconds the notebook's cells retry opening the database while another process
        (``iochar load``) holds it, before failing with one line; default
        ``$IOCHAR_WAIT``, else 5. The notebook holds the file only while a cell
        queries it (:func:`iochar.report.notebook.open_store`). [s]

    Returns
    -------
    ReportResult
        Where the page went, how long it took, and the error line if a cell failed.

    Raises
    ------
    ReportError
        For an unknown notebook or parameter (before anything runs).
    MissingDependencyError
        When papermill or nbconvert is not installed.
    """
    try:
        import nbformat
        import papermill
        from papermill.exceptions import PapermillExecutionError
    except ImportError as exc:
        raise MissingDependencyError(exc.name or "papermill", "report", "iochar report") from exc
    if wait is not None and not (type(wait) in (int, float) and wait >= 0):
        raise ParameterError("wait", "report.run", "a number of seconds >= 0", wait)
    path = resolve(name)
    pairs = list(params.items()) if isinstance(params, Mapping) else list(params)
    values = coerce(path, pairs)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    executed = out.with_suffix(".ipynb")
    error: str | None = None
    old = os.environ.get(REPORT_ENV)
    os.environ[REPORT_ENV] = "code" if show_code else "1"  # "code": tables show their SQL
    old_wait = os.environ.get("IOCHAR_WAIT")
    if wait is not None:  # the kernel inherits the environment
        os.environ["IOCHAR_WAIT"] = repr(float(wait))
    t0 = time.perf_counter()
    # papermill logs a kernel that died at start; the retry or our error line covers it
    quiet = logging.NullHandler()
    logging.getLogger("papermill").addHandler(quiet)
    try:
        with tempfile.TemporaryDirectory(prefix="iochar-report-") as tmp:
            target = executed if keep_notebook else Path(tmp) / path.name
            for attempt in range(1, KERNEL_STARTS + 1):
                kernel_log = Path(tmp) / f"kernel-{attempt}.log"
                error = None
                try:
                    papermill.execute_notebook(
                        str(path),
                        str(target),
                        parameters=values,
                        kernel_name="python3",
                        kernel_manager_class=_kernel_manager_class(Path(tmp), kernel_log),
                        progress_bar=False,
                        request_save_on_cell_execute=False,
                        cwd=str(path.parent),
                        execution_timeout=timeout_s,
                        # the kernel's own log (TCP without encryption at start, an interrupt
                        # at shutdown) is noise here; cell errors come back as outputs
                        extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
                    )
                except PapermillExecutionError as exc:
                    error = _error_line(exc)
                except Exception as exc:  # the kernel died, a cell timed out, no kernel...
                    text = str(exc).strip().splitlines()
                    error = f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")
                    if not _cells_started(target):
                        if attempt < KERNEL_STARTS:
                            continue  # nothing ran: a fresh kernel cannot do harm
                        error += _kernel_said(kernel_log, attempt)
                break
            nb = nbformat.read(str(target if target.exists() else path), as_version=4)
    finally:
        logging.getLogger("papermill").removeHandler(quiet)
        if old is None:
            os.environ.pop(REPORT_ENV, None)
        else:
            os.environ[REPORT_ENV] = old
        if old_wait is None:
            os.environ.pop("IOCHAR_WAIT", None)
        else:
            os.environ["IOCHAR_WAIT"] = old_wait
    seconds = time.perf_counter() - t0
    shown = parameters(path) | values
    title = _title(nb) or path.stem
    page = to_html(nb, title=title, params=shown, error=error, show_code=show_code)
    out.write_text(page, encoding="utf-8")
    return ReportResult(path.stem, title, out, seconds, error, shown)


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;max-width:1100px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
header{border-bottom:1px solid #ccc;margin-bottom:1.5em;padding-bottom:.5em}
header .meta{color:#555;font-size:.9em}
.params{border-collapse:collapse;font-size:.85em;margin:.5em 0}
.params td{border:1px solid #ddd;padding:2px 8px;font-family:monospace}
.error{background:#fde8e8;border-left:4px solid #c0392b;padding:.6em 1em;margin:1em 0}
table.dataframe{border-collapse:collapse;font-size:.85em;margin:.5em 0}
table.dataframe td,table.dataframe th{border:1px solid #ddd;padding:2px 6px;text-align:right}
table.dataframe thead th{background:#f3f3f3}
.output_area pre,.output_subarea pre{background:#f7f7f7;padding:.5em;overflow-x:auto;
font-size:.85em}
.output_stderr pre{background:#fff5e6}
img{max-width:100%;height:auto}
main{min-width:0}
.jp-OutputArea-output,.output_html{overflow-x:auto;max-width:100%}
table.dataframe td.num{font-variant-numeric:tabular-nums}
.iochar-note{color:#555;font-size:.8em;margin:.2em 0 1em}
.summary{background:#f5f8fb;border-left:4px solid #1f5f99;padding:.2em 1em .4em;margin:1em 0 2em}
.summary h2{font-size:1.1em;margin:.5em 0}
.summary li{margin:.3em 0}
.anchor-link{display:none}
a{color:#1f5f99}
"""


def to_html(
    nb,
    *,
    title: str,
    params: Mapping[str, Any] | None = None,
    error: str | None = None,
    show_code: bool = False,
) -> str:
    """One self-contained HTML page of an executed notebook: outputs and narrative, no code.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The executed notebook.
    title : str
        Page title.
    params : mapping, optional
        Parameters to list under the title.
    error : str, optional
        One line shown at the top when the run stopped.
    show_code : bool, default False
        Keep the code cells (as plain highlighted text) in the page.

    Returns
    -------
    str
        The HTML document (charts are inline ``data:`` SVG/PNG images).
    """
    import copy

    from nbconvert import HTMLExporter

    nb = copy.deepcopy(nb)
    # papermill's own red banner cell is replaced by ours
    nb.cells = [c for c in nb.cells if "papermill-error-cell-tag" not in c.metadata.get("tags", [])]
    exporter = HTMLExporter(template_name="basic")
    exporter.exclude_input = not show_code
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(nb)
    body = re.sub(r"<div class=\"prompt[^\"]*\">\s*</div>", "", body)
    body = _one_h1(body, title)
    body = _summary_block(body) + body
    rows = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(_param_text(v))}</td></tr>"
        for k, v in (params or {}).items()
    )
    unset = any(_param_text(v) == MISSING for v in (params or {}).values())
    unset_note = (
        f'<div class="meta">{MISSING} not set: the notebook chooses (see each parameter\'s '
        "comment in the notebook).</div>"
        if unset
        else ""
    )
    banner = (
        f'<div class="error"><strong>This report stopped:</strong> {html.escape(error)}</div>'
        if error
        else ""
    )
    when = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f'<header><div class="meta"><a href="index.html">all reports</a></div>'
        f"<h1>{html.escape(title)}</h1>"
        f'<div class="meta">iochar {html.escape(__version__)}, {html.escape(when)}. '
        "Parameters:</div>"
        f'<table class="params">{rows}</table>{unset_note}</header>{banner}'
        f"<main>{body}</main></body></html>\n"
    )


def _param_text(v: Any) -> str:
    """A parameter's value as a reader reads it: no Python reprs, unset as a dash."""
    if v is None or v == "":
        return MISSING
    if isinstance(v, str):
        return v
    if isinstance(v, list | tuple):
        return ", ".join(_param_text(x) for x in v) or MISSING
    return cell_text(v)


_H1 = re.compile(r"<h1([^>]*)>(.*?)</h1>", re.S)
_SECTION = re.compile(r'<h2 id="([^"]+)">(.*?)</h2>', re.S)
_OUTPUT_P = re.compile(r'<div class="output_html[^"]*">\s*<p>(.*?)</p>', re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def _text(fragment: str) -> str:
    """The text a reader sees in an HTML fragment (tags and the anchor pilcrow gone)."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).replace("\u00b6", "").strip()


def _lead(paragraph: str, limit: int = 260) -> str:
    """The first sentence of a paragraph, cut at a word near ``limit`` characters."""
    first = _SENTENCE_END.split(paragraph, maxsplit=1)[0]
    if len(first) > limit:
        first = first[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return first


def _summary_block(body: str, most: int = 6) -> str:
    """What matters first: each section's lead finding (a computed sentence with a number).

    For each H2 section in order, the first narrative output paragraph (a sentence the
    notebook computed from the data, not its prose) that holds a number gives one finding,
    linked to its section; at most ``most``. Empty when fewer than two sections have one.
    """
    heads = list(_SECTION.finditer(body))
    items = []
    for k, h in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(body)
        for m in _OUTPUT_P.finditer(body, h.end(), end):
            text = _text(m.group(1))
            if re.search(r"\d", text):
                items.append((h.group(1), _text(h.group(2)), _lead(text)))
                break
        if len(items) == most:
            break
    if len(items) < 2:
        return ""
    lis = "".join(
        f'<li><a href="#{html.escape(anchor, quote=True)}">{html.escape(name)}</a>: '
        f"{html.escape(finding)}</li>"
        for anchor, name, finding in items
    )
    return f'<nav class="summary"><h2 id="summary">Summary</h2><ul>{lis}</ul></nav>'


def _one_h1(body: str, title: str) -> str:
    """The page's one H1 is its header: drop the notebook's title H1, demote any other."""
    dropped = False

    def fix(m: re.Match) -> str:
        nonlocal dropped
        if not dropped and _text(m.group(2)) == title.strip():
            dropped = True
            return ""
        return f"<h2{m.group(1)}>{m.group(2)}</h2>"

    return _H1.sub(fix, body)


def write_index(
    results: Sequence[ReportResult],
    out: str | os.PathLike[str],
    *,
    intro: str = "",
    counts: Mapping[str, int] | None = None,
) -> Path:
    """Write ``index.html`` linking each report, with its status and run time.

    Parameters
    ----------
    results : sequence of ReportResult
        The reports, in order.
    out : str or os.PathLike
        The index file.
    intro : str, optional
        A paragraph (plain text) under the title.
    counts : mapping of str to int, optional
        Rows per table of the database the reports read.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    out = Path(out)
    items = []
    for r in results:
        href = os.path.relpath(r.html, out.parent)
        status = "ok" if r.ok else f"stopped: {html.escape(r.error or '')}"
        items.append(
            f'<li><a href="{html.escape(href)}">{html.escape(r.title or r.name)}</a> '
            f'<span class="meta">({html.escape(r.name)}, {r.seconds:.1f} s, {status})</span></li>'
        )
    table = ""
    if counts:
        table = (
            '<table class="params">'
            + "".join(
                f"<tr><td>{html.escape(t)}</td><td>{n:,}</td></tr>" for t, n in counts.items() if n
            )
            + "</table>"
        )
    when = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    out.write_text(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>iochar reports</title>'
        f"<style>{_CSS}</style></head><body><header><h1>iochar reports</h1>"
        f'<div class="meta">iochar {html.escape(__version__)}, {html.escape(when)}</div></header>'
        f"<p>{html.escape(intro)}</p><ul>{''.join(items)}</ul>"
        + (f"<h2>Database</h2>{table}" if table else "")
        + "</body></html>\n",
        encoding="utf-8",
    )
    return out


_EXTERNAL = re.compile(
    r"""<(?:script|link|img|iframe|source|embed)\b[^>]*\b(?:src|href)\s*=\s*["']?\s*((?:https?:)?//[^"'\s>]+)"""
    r"""|@import\s+(?:url\()?["']?((?:https?:)?//[^"')\s]+)""",
    re.I,
)


def external_urls(page: str) -> list[str]:
    """URLs a page would fetch when opened: scripts, stylesheets, images, frames, imports.

    Plain links (``<a href>``) are not fetched and are not listed.

    Parameters
    ----------
    page : str
        HTML text.

    Returns
    -------
    list of str
        The URLs, in order of appearance.

    Examples
    --------
    >>> external_urls('<script src="https://cdn.example/x.js"></script><a href="https://x">x</a>')
    ['https://cdn.example/x.js']
    """
    return [a or b for a, b in _EXTERNAL.findall(page)]
