"""Notebooks as reports: conventions, ``iochar report``, the HTML it writes, bad input."""

from __future__ import annotations

import ast
import base64
import re
import subprocess
import sys

import nbformat
import papermill
import pytest

import iochar
from iochar import report
from iochar.errors import ReportError

BOOKS = report.available()
TOPICS = {
    "00-overview",
    "01-application-traces",
    "02-system-load",
    "03-jobs-and-variance",
    "04-storage-snapshots",
    "05-efficiency-and-scaling",
    "06-cache-simulation",
}


def _read(path):
    return nbformat.read(str(path), as_version=4)


def test_every_named_notebook_exists():
    assert {b.stem for b in BOOKS} == TOPICS


@pytest.mark.parametrize("book", BOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_without_outputs(book):
    nb = _read(book)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], (book.stem, cell.source[:60])
            assert cell.execution_count is None, (book.stem, cell.source[:60])


@pytest.mark.parametrize("book", BOOKS, ids=lambda p: p.stem)
def test_first_code_cell_is_literal_parameters_papermill_can_read(book):
    nb = _read(book)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert "parameters" in first.metadata.get("tags", [])
    body = ast.parse(first.source).body
    assert body and all(isinstance(n, (ast.Assign, ast.AnnAssign)) for n in body)
    for node in body:
        ast.literal_eval(node.value)  # literals only
    names = [n.targets[0].id if isinstance(n, ast.Assign) else n.target.id for n in body]
    assert names[0] == "db"
    assert ast.literal_eval(body[0].value) == ""  # default: the bundled demo database
    # papermill must parse every line too (it cannot when a comment holds "=" or ";")
    seen = [p["name"] for p in papermill.inspect_notebook(str(book)).values()]
    assert seen == names
    assert list(report.parameters(book)) == names


@pytest.mark.parametrize("book", BOOKS, ids=lambda p: p.stem)
def test_notebook_checks_its_inputs_first_and_holds_no_logic(book):
    nb = _read(book)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert "nb.open_store(db)" in code[1] and "nb.require(" in code[1]
    for src in code:
        tree = ast.parse(src)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.Lambda)):
                lines = getattr(node, "end_lineno", 0) - getattr(node, "lineno", 0) + 1
                assert lines <= 5, (book.stem, src[:80])
            assert not isinstance(node, (ast.For, ast.While, ast.ClassDef)), (book.stem, src[:80])


def test_resolve_by_stem_number_and_topic():
    assert report.resolve("02").stem == "02-system-load"
    assert report.resolve("system-load").stem == "02-system-load"
    assert report.resolve("02-system-load.ipynb").stem == "02-system-load"
    with pytest.raises(ReportError, match="no report named 'nope'; reports are 00-overview"):
        report.resolve("nope")


def test_coerce_types_and_refusals():
    book = report.resolve("00")
    assert report.coerce(book, [("top_jobs", "7")]) == {"top_jobs": 7}
    with pytest.raises(ReportError, match="parameter top_jobs expects an integer, got 'many'"):
        report.coerce(book, [("top_jobs", "many")])
    with pytest.raises(ReportError, match="00-overview has no parameter 'jobs'; its parameters"):
        report.coerce(book, [("jobs", "1")])


def test_id_parameters_are_integers_or_none():
    """Issue 19 item 5: `-p job_id abc` said the job was not in the database."""
    book = report.resolve("01")
    assert report.coerce(book, [("job_id", "3")]) == {"job_id": 3}
    assert report.coerce(book, [("job_id", "none")]) == {"job_id": None}
    assert report.coerce(book, [("bin_s", "0.5")]) == {"bin_s": 0.5}
    with pytest.raises(ReportError, match="job_id expects an integer or none, got 'abc'"):
        report.coerce(book, [("job_id", "abc")])
    for other in sorted(book.parent.glob("0*.ipynb")):  # every id is annotated int
        for name, default, ann in report._parameter_cell(other):
            if name.endswith("_id"):
                assert default is None and ann == "int", (other.name, name, ann)


def test_coerce_list_parameters_from_their_annotation(tmp_path):
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                'db = ""  # database\n'
                "targets: list[str] = None  # devices; None: all\n"
                "label = None  # a name\n",
                metadata={"tags": ["parameters"]},
            )
        ]
    )
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = tmp_path / "99-x.ipynb"
    nbformat.write(nb, str(path))
    assert [p["name"] for p in papermill.inspect_notebook(str(path)).values()] == [
        "db",
        "targets",
        "label",
    ]
    got = report.coerce(path, [("targets", "sda"), ("label", "sda")])
    assert got == {"targets": ["sda"], "label": "sda"}
    assert report.coerce(path, [("targets", "sda, sdb")]) == {"targets": ["sda", "sdb"]}
    assert report.coerce(path, [("targets", '["a,b"]')]) == {"targets": ["a,b"]}
    assert report.coerce(path, [("targets", "none")]) == {"targets": None}


def test_coerce_makes_relative_paths_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.duckdb").write_bytes(b"")
    got = report.coerce(report.resolve("00"), [("db", "x.duckdb")])
    assert got["db"] == str(tmp_path / "x.duckdb")


# ------------------------------------------------------------------ the HTML pages


def _charts_in(book) -> int:
    """Code cells whose last line draws a chart (``plot.*_chart(...)``)."""
    n = 0
    for cell in _read(book).cells:
        if cell.cell_type == "code" and cell.source.strip():
            last = cell.source.strip().splitlines()[-1]
            n += bool(re.match(r"^plot\.\w+_chart\(", last))
    return n


@pytest.mark.notebooks
@pytest.mark.parametrize("book", BOOKS, ids=lambda p: p.stem)
def test_report_html_is_self_contained_with_rendered_charts(demo_run, book):
    out, rc, log = demo_run
    page = (out / f"{book.stem}.html").read_text()
    assert report.external_urls(page) == []
    assert "<script" not in page.lower()
    svgs = re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', page)
    expected = _charts_in(book)
    assert expected >= 1, book.stem
    # each chart call shows a drawn chart or, with too little to draw, a sentence saying why
    said = re.findall(r'<p class="iochar-no-chart">', page)
    assert svgs and len(svgs) + len(said) >= expected, (book.stem, len(svgs), len(said), expected)
    for b64 in svgs:
        svg = base64.b64decode(b64).decode()
        assert svg.startswith("<svg") and 'class="marks"' in svg  # drawn by Vega
    assert "This report stopped" not in page
    assert "Traceback" not in page and "Error" not in re.sub(r"<[^>]+>", "", page)[:2000]


@pytest.mark.notebooks
def test_report_narrative_is_computed_from_the_data(demo_run):
    out, rc, log = demo_run
    page = (out / "00-overview.html").read_text()
    with iochar.connect(str(out / "iochar.duckdb"), read_only=True) as db:
        n_sources = db.sql("SELECT count(*) FROM sources").fetchall()[0][0]
        n_ops = db.sql("SELECT count(*) FROM ops").fetchall()[0][0]
    assert f"This database holds {n_sources:,} inputs" in page
    assert f"{n_ops:,} traced operations" in page


# ------------------------------------------------------------------ bad input


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "iochar.cli", "report", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def _first_output_text(ipynb) -> str:
    nb = _read(ipynb)
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.output_type == "error":
                return f"{o.ename}: {o.evalue}"
            if o.output_type == "stream":
                return o.text
            return str(o.get("data", {}).get("text/plain", ""))
    return ""


BAD = [
    ("01", "job_id", "99999", "job_id 99999 is not in this database"),
    ("02", "targets", "no-such-ost", "target 'no-such-ost' is not in this database"),
    ("03", "job_id", "99999", "job_id 99999 is not in this database"),
    ("04", "snapshot_id", "777", "snapshot_id 777 is not in this database"),
]


@pytest.mark.notebooks
@pytest.mark.parametrize("name,key,value,message", BAD, ids=[b[0] for b in BAD])
def test_missing_job_target_or_snapshot_stops_the_report_with_one_line(
    demo_run, tmp_path, name, key, value, message
):
    out, rc, log = demo_run
    html = tmp_path / "r.html"
    proc = _cli(
        name,
        "--db",
        str(out / "iochar.duckdb"),
        "-p",
        key,
        value,
        "-o",
        str(html),
        "--keep-notebook",
    )
    assert proc.returncode != 0
    err = [ln for ln in proc.stderr.splitlines() if ln.startswith("iochar: error:")]
    assert len(err) == 1 and message in err[0], proc.stderr
    first = _first_output_text(tmp_path / "r.ipynb")
    assert first.startswith("ReportError: ") and message in first, first
    page = html.read_text()
    assert "This report stopped" in page and message in page
    assert "Traceback" not in page


@pytest.mark.notebooks
@pytest.mark.parametrize("book", BOOKS, ids=lambda p: p.stem)
def test_database_without_the_needed_tables(tmp_path, book):
    empty = tmp_path / "empty.duckdb"
    iochar.connect(str(empty)).close()
    html = tmp_path / "r.html"
    proc = _cli(book.stem, "--db", str(empty), "-o", str(html), "--keep-notebook")
    assert proc.returncode != 0
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and "this database has no rows in" in err[0], proc.stderr
    assert "; load " in err[0]  # says what to load
    first = _first_output_text(tmp_path / "r.ipynb")
    assert first.startswith("ReportError: this database has no rows in"), first
    assert "no rows in" in html.read_text() and "Traceback" not in html.read_text()


@pytest.mark.notebooks
def test_database_that_does_not_exist(tmp_path):
    proc = _cli("00", "--db", str(tmp_path / "missing.duckdb"), "-o", str(tmp_path / "r.html"))
    assert proc.returncode != 0
    assert "does not exist" in proc.stderr


def test_unknown_parameter_and_report_fail_before_running(tmp_path):
    proc = _cli("00", "-p", "colour", "red", "-o", str(tmp_path / "r.html"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "iochar: error: 00-overview has no parameter 'colour'; its parameters are "
        + ", ".join(report.parameters(report.resolve("00")))
    )
    assert not (tmp_path / "r.html").exists()
    proc = _cli("99", "-o", str(tmp_path / "r.html"))
    assert proc.returncode == 2 and "no report named '99'" in proc.stderr


def test_list_shows_every_notebook_and_its_parameters():
    proc = _cli("--list")
    assert proc.returncode == 0
    for b in BOOKS:
        assert b.stem in proc.stdout
        assert "db=''" in proc.stdout


@pytest.mark.notebooks
def test_default_parameters_run_top_to_bottom(tmp_path, monkeypatch):
    """What ``jupyter lab notebooks/`` does: no parameters, the demo database by default."""
    monkeypatch.setenv("IOCHAR_CACHE", str(tmp_path / "cache"))
    res = report.run("00", tmp_path / "r.html")
    assert res.ok, res.error
    assert res.params["db"] == ""
    assert list((tmp_path / "cache").glob("demo-*.duckdb"))


def test_to_html_banner_and_no_external_urls():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# Title here"),
            nbformat.v4.new_code_cell(
                "x",
                outputs=[
                    nbformat.v4.new_output(
                        "display_data", data={"image/svg+xml": '<svg class="marks"></svg>'}
                    )
                ],
            ),
        ]
    )
    page = report.to_html(nb, title="T", params={"db": "a.duckdb"}, error="job_id 3 is not in")
    assert report.external_urls(page) == []
    assert "This report stopped:</strong> job_id 3 is not in" in page
    assert "data:image/svg+xml;base64," in page
    # parameters read as values, not Python reprs (issue 16); the title H1 is the page's one
    assert "<td>db</td><td>a.duckdb</td>" in page
    assert page.count("<h1") == 1 and "<h2" in page  # the notebook's other H1 is demoted


@pytest.mark.notebooks
def test_a_target_given_as_one_word_on_the_command_line(demo_run, tmp_path):
    out, rc, log = demo_run
    html = tmp_path / "r.html"
    proc = _cli("02", "--db", str(out / "iochar.duckdb"), "-p", "targets", "sda", "-o", str(html))
    assert proc.returncode == 0, proc.stderr
    page = html.read_text()
    assert "<td>targets</td><td>sda</td>" in page  # a list of one, shown as its value
    assert "This report stopped" not in page


@pytest.mark.notebooks
def test_a_cell_that_runs_too_long_stops_the_report(tmp_path, monkeypatch):
    """A failure outside the cells' own errors (here nbclient's timeout) still writes the
    page with the reason and returns it; nothing escapes as a traceback."""
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# Slow"),
            nbformat.v4.new_code_cell('db = ""', metadata={"tags": ["parameters"]}),
            nbformat.v4.new_code_cell("import time\ntime.sleep(30)"),
        ]
    )
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = tmp_path / "98-slow.ipynb"
    nbformat.write(nb, str(path))
    res = report.run(path, tmp_path / "slow.html", timeout_s=2)
    assert not res.ok and "Timeout" in res.error, res.error
    assert "This report stopped" in (tmp_path / "slow.html").read_text()


#: A real kernel launcher that dies at start (exit 1, one line on stderr, as a kernel
#: that cannot bind its sockets does) the first N times, then runs ipykernel.
_DIES_AT_START = """
import os, sys
count, dies = sys.argv[1], int(sys.argv[2])
n = len(open(count).read()) if os.path.exists(count) else 0
open(count, "a").write("x")
if n < dies:
    print("simulated start failure: Address already in use", file=sys.stderr, flush=True)
    os._exit(1)
os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *sys.argv[3:]])
"""


def _kernel_that_dies_at_start(tmp_path, monkeypatch, dies: int):
    """Make "python3" (the kernel reports use) a launcher that dies ``dies`` times."""
    import json

    script = tmp_path / "dies_at_start.py"
    script.write_text(_DIES_AT_START)
    count = tmp_path / "starts"
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [sys.executable, str(script), str(count), str(dies), "-f", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "Python 3", "language": "python"})
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# Tiny"),
            nbformat.v4.new_code_cell('db = ""', metadata={"tags": ["parameters"]}),
            nbformat.v4.new_code_cell("print(6 * 7)"),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    path = tmp_path / "97-tiny.ipynb"
    nbformat.write(nb, str(path))
    return path, count


@pytest.mark.notebooks
def test_a_kernel_that_dies_before_any_cell_is_started_once_more(tmp_path, monkeypatch):
    path, count = _kernel_that_dies_at_start(tmp_path, monkeypatch, dies=1)
    proc = _cli(str(path), "-o", str(tmp_path / "r.html"))  # inherits JUPYTER_PATH
    assert proc.returncode == 0, proc.stderr
    assert count.read_text() == "xx"  # died once, the second kernel ran the notebook
    assert "42" in (tmp_path / "r.html").read_text()
    # neither the dead kernel's stderr nor papermill's log of it reach ours
    assert proc.stderr == ""


@pytest.mark.notebooks
def test_a_kernel_that_keeps_dying_stops_the_report_after_two_starts(tmp_path, monkeypatch):
    path, count = _kernel_that_dies_at_start(tmp_path, monkeypatch, dies=10)
    res = report.run(path, tmp_path / "r.html")
    assert not res.ok and count.read_text() == "x" * report.KERNEL_STARTS == "xx"
    assert "Kernel died" in res.error and "\n" not in res.error, res.error
    assert "(kernel started 2 times; the kernel said: simulated start failure" in res.error
    assert "This report stopped" in (tmp_path / "r.html").read_text()


@pytest.mark.notebooks
def test_system_load_on_brw_stats_only(tmp_path):
    """Without counters the FSU part still runs; the counters part says why it is empty."""
    from tests.conftest import DATA_DIR

    path = tmp_path / "brw.duckdb"
    db = iochar.connect(str(path))
    db.load(DATA_DIR / "brw_stats" / "zfs-lustrefs-OST0000-series.txt")
    db.load(DATA_DIR / "brw_stats" / "ldiskfs-lctl-series.txt")
    db.close()
    html = tmp_path / "r.html"
    proc = _cli("02", "--db", str(path), "-o", str(html))
    assert proc.returncode == 0, proc.stderr
    page = html.read_text()
    assert "This report stopped" not in page and "Traceback" not in page
    assert "FSU (Uselton &amp; Wright 2013, Eq. 7) for 2 targets" in page
    assert "FSU-based load is" in page and "Disk I/O sizes (brw_stats" in page
    assert "No device or server counters with read/write bytes in this selection" in page
    # the FSU and transfer size charts (drawn, or a sentence when too little to draw) and
    # Fig. 7 on the bundled calibration (it needs no counters), none of the throughput ones
    svgs = re.findall(r'src="data:image/svg\+xml;base64,', page)
    said = re.findall(r'<p class="iochar-no-chart">', page)
    assert svgs and len(svgs) + len(said) == 4
    assert "Eq. 6 predicts the bandwidth of 12 calibration points" in page


@pytest.mark.notebooks
def test_system_load_on_a_brw_stats_only_target(demo_run, tmp_path):
    out, rc, log = demo_run
    html = tmp_path / "r.html"
    proc = _cli(
        "02", "--db", str(out / "iochar.duckdb"), "-p", "targets", "testfs-OST0000", "-o", str(html)
    )
    assert proc.returncode == 0, proc.stderr
    page = html.read_text()
    assert "This report stopped" not in page and "Traceback" not in page
    assert "No device or server counters with read/write bytes in this selection" in page
    assert "FSU (Uselton &amp; Wright 2013, Eq. 7) for 1 target (testfs-OST0000)" in page
    svgs = re.findall(r'src="data:image/svg\+xml;base64,', page)
    said = re.findall(r'<p class="iochar-no-chart">', page)
    assert svgs and len(svgs) + len(said) == 4  # with Fig. 7 on the bundled calibration


def test_show_code_keeps_the_cells_and_stays_offline():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "x = 41 + 1",
                outputs=[
                    nbformat.v4.new_output(
                        "execute_result", data={"text/plain": "42"}, execution_count=1
                    )
                ],
            )
        ]
    )
    hidden = report.to_html(nb, title="t")
    shown = report.to_html(nb, title="t", show_code=True)

    def body_text(page: str) -> str:
        # what a reader sees of the cells: the page's <main>, tags dropped (the header
        # holds the time the page was made and the cells' attributes a random id,
        # either of which can hold "41" by chance)
        return re.sub(r"<[^>]+>", "", page.split("<main>", 1)[1])

    assert "41" not in body_text(hidden) and "42" in body_text(hidden)
    assert "41" in body_text(shown) and "42" in body_text(shown)
    assert report.external_urls(shown) == [] and "<script" not in shown.lower()


def test_page_opens_with_a_summary_of_each_sections_computed_finding():
    def out(markup):
        return nbformat.v4.new_output("display_data", data={"text/html": markup})

    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# T\n\nProse with 1 number is not a finding."),
            nbformat.v4.new_markdown_cell("## Jobs <b>x</b>"),
            nbformat.v4.new_code_cell("x", outputs=[out("<p>No number here.</p>")]),
            nbformat.v4.new_code_cell(
                "x", outputs=[out("<p>There are 3 <em>jobs</em>. Two more.</p>")]
            ),
            nbformat.v4.new_markdown_cell("## Devices"),
            nbformat.v4.new_code_cell(
                "x", outputs=[out("<p>" + "Disk sda peaked at 5 MiB/s " * 20 + "</p>")]
            ),
            nbformat.v4.new_markdown_cell("## Nothing computed"),
        ]
    )
    page = report.to_html(nb, title="T", params={})
    nav = re.search(r'<nav class="summary">(.*?)</nav>', page, re.S).group(1)
    items = re.findall(r'<li><a href="#([^"]+)">(.*?)</a>: (.*?)</li>', nav)
    assert [(a, t) for a, t, _ in items] == [("Jobs-x", "Jobs x"), ("Devices", "Devices")]
    assert items[0][2] == "There are 3 jobs."  # the first sentence, as text
    assert items[1][2].endswith(" …") and len(items[1][2]) < 270  # long ones are cut
    assert page.index('<nav class="summary">') < page.index('id="Jobs-x"')
