"""Names from the data cannot inject HTML or Markdown into any report.

A database is loaded with hostile names of every kind a report shows: a traced
program's name (strace ``execve``), a trace-CSV job and path, a Darshan executable,
iostat and /proc/diskstats devices, an LMT OST, a brw_stats target and a snapshot root,
each made by editing a real capture in ``data/``. Every notebook then runs as
``iochar report`` on it, and each page is read as a browser would: no tag or attribute
from the data may appear (no event handler, no script, no frame, no image but the
inline chart images), and every name must read exactly as it was written, next to a
normal name (``ckpt_app``) that reads normally.
"""

from __future__ import annotations

import base64
import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

import iochar
from iochar import report
from iochar.datasets import synth_jobs
from tests.conftest import DATA_DIR

pytestmark = pytest.mark.notebooks

PROGRAM = "<img src=x onerror=alert(1)>*em*_u_"  # strace: execve's file name
JOB = "<script>alert(2)</script>"  # trace CSV: the job column
PATH = "/scratch/<iframe src=javascript:alert(3)>/[x](javascript:alert(4))"  # trace CSV
DEVICE = "<svg/onload=alert(5)>"  # iostat device; /proc/diskstats device + "x"
EXE = "<b>*em*_u_<i>"  # Darshan: the executable (its first word is the app)
ROOT = "/tmp/<svg/onload=alert(7)>"  # snapshot root
OST = "<svg/onload=alert(8)>"  # LMT OST
TARGET = "__b__-OST0000"  # brw_stats target: Lustre names allow only [\w.@-]


class _Page(HTMLParser):
    """Start tags with their attributes, and the text a reader sees."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def _read(page: str) -> tuple[_Page, list[_Page]]:
    """The page and the SVG documents of its inline chart images."""
    p = _Page()
    p.feed(page)
    charts = []
    for tag, attrs in p.tags:
        src = attrs.get("src") or ""
        if tag == "img" and src.startswith("data:image/svg+xml;base64,"):
            svg = _Page()
            svg.feed(base64.b64decode(src.split(",", 1)[1]).decode("utf-8"))
            charts.append(svg)
    return p, charts


def _injected(p: _Page, *, chart: bool = False) -> list[tuple[str, dict]]:
    bad = []
    for tag, attrs in p.tags:
        events = [k for k in attrs if k.lower().startswith("on")]
        scripted = [v for v in attrs.values() if v and "javascript:" in v.lower()]
        foreign = tag in ("script", "iframe", "object", "embed", "foreignobject", "b", "i")
        image = tag == "img" and not (attrs.get("src") or "").startswith("data:image/svg+xml")
        if events or scripted or foreign or image or (chart and tag == "a"):
            bad.append((tag, attrs))
    return bad


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("hostile")
    db = d / "hostile.duckdb"

    def edited(src: str, name: str, old: str, new: str) -> Path:
        text = (DATA_DIR / src).read_text()
        assert old in text, (src, old)
        (d / name).write_text(text.replace(old, new))
        return d / name

    with iochar.connect(db) as store:
        store.load(DATA_DIR / "strace" / "ckpt_tt.strace")  # the normal name: ckpt_app
        store.load(edited("strace/ckpt_tt.strace", "p.strace", '"./ckpt_app"', f'"{PROGRAM}"'))
        (d / "t.csv").write_text(
            "op,t_start,t_end,job,path,offset,size\n"
            f"write,0,0.5,{JOB},{PATH},0,1048576\nread,1,1.5,{JOB},{PATH},0,1048576\n"
        )
        store.load(d / "t.csv")
        store.load(edited("iostat/vm-sysstat12.6.1-x-t.iostat", "i.iostat", "vda ", DEVICE + " "))
        store.load(edited("diskstats/vm-linux6.18-3dev.diskstats", "d.ds", " vda ", f" {DEVICE}x "))
        store.load(edited("lmt/lmtdb-reset-ost.csv", "l.csv", "snx11168-OST00ad", OST), kind="lmt")
        store.load(
            edited("brw_stats/ldiskfs-lctl-series.txt", "b.txt", "testfs-OST0000", TARGET),
            kind="brw_stats",
        )
        store.load(
            edited("snapshot/tornado-before.find", "s.find", "/tmp/iochar-snap/tornado", ROOT)
        )
        group = synth_jobs.JobGroup(
            name="h", app=EXE, uid=1, nprocs=4, files=4, read_bytes=2**24,
            write_bytes=2**24, mean_io_s=2.0, cv=0.2, samples=6, pattern="N:N",
        )  # fmt: skip
        pop = synth_jobs.make_population([group], random_state=1)
        (d / "logs").mkdir()
        for log in synth_jobs.write_darshan_logs(pop, d / "logs"):
            store.load(log)
        apps = {r[0] for r in store.sql("SELECT DISTINCT app FROM jobs").fetchall()}
        assert {"ckpt_app", PROGRAM, JOB}.issubset(apps) and any(EXE[:8] in a for a in apps)
    return db


def _job(db: Path, app: str) -> int:
    with iochar.connect(db, read_only=True) as store:
        return store.sql("SELECT min(job_id) FROM jobs WHERE app = $a", {"a": app}).fetchall()[0][0]


#: Each report with parameters that bring the hostile names into its narrative, tables
#: and charts, and the names the page must show as written.
CASES = [
    ("00", {}, [PROGRAM, JOB, DEVICE, OST, TARGET, ROOT, "ckpt_app"]),
    ("01", {"job_id": JOB}, [PROGRAM, JOB, PATH, "ckpt_app"]),
    ("02", {}, [DEVICE, TARGET]),
    ("02", {"targets": [DEVICE, OST]}, [DEVICE, OST]),
    ("03", {"job_id": "darshan"}, [PROGRAM, JOB, "ckpt_app"]),
    ("04", {}, [ROOT]),
]


@pytest.mark.parametrize(("name", "params", "names"), CASES, ids=[c[0] for c in CASES])
def test_hostile_names_stay_text_in_every_report(hostile_db, tmp_path, name, params, names):
    params = dict(params)
    if params.get("job_id") == "darshan":
        with iochar.connect(hostile_db, read_only=True) as store:
            params["job_id"] = store.sql(
                "SELECT min(job_id) FROM jobs WHERE app LIKE '<b>%'"
            ).fetchall()[0][0]
    elif isinstance(params.get("job_id"), str):
        params["job_id"] = _job(hostile_db, params["job_id"])
    res = report.run(name, tmp_path / "r.html", params={"db": str(hostile_db), **params})
    assert res.ok, res.error
    page, charts = _read(res.html.read_text())
    assert _injected(page) == []
    for svg in charts:
        assert _injected(svg, chart=True) == []
    text = " ".join(" ".join(page.text + [t for svg in charts for t in svg.text]).split())
    for n in names:
        assert n in text, f"{n!r} does not read as itself in report {name}"
    # the Markdown escapes are not shown to the reader
    assert not re.search(r"\\[\\`*_\[\]<>&|~]", text)
    assert "<script" not in res.html.read_text().lower()


def test_a_report_stopped_by_a_hostile_name_escapes_it(hostile_db, tmp_path):
    res = report.run(
        "02", tmp_path / "r.html", params={"db": str(hostile_db), "targets": ["no-such-ost"]}
    )
    assert not res.ok and DEVICE in res.error  # the message lists the targets there are
    page, _ = _read(res.html.read_text())
    assert _injected(page) == []
    assert DEVICE in html.unescape(" ".join(page.text))
