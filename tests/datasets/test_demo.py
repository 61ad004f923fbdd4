"""``iochar demo``: the main job. Builds the demo data, loads it, runs every notebook."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import iochar
from iochar import report
from iochar.cli import main
from iochar.datasets import demo, demo_inputs, synth


@pytest.mark.notebooks
def test_demo_exits_zero_and_reports_every_notebook(demo_run):
    out, rc, log = demo_run
    assert rc == 0, log
    index = (out / "index.html").read_text()
    books = report.available()
    assert len(books) >= 5
    for b in books:
        page = out / f"{b.stem}.html"
        assert page.is_file(), log
        assert f'href="{b.stem}.html"' in index
        assert "This report stopped" not in page.read_text(), b.stem
    assert "report(s) failed" not in log


@pytest.mark.notebooks
def test_demo_database_holds_synth_and_every_real_input(demo_run):
    out, rc, log = demo_run
    assert rc == 0, log
    real = [p for p, _ in demo_inputs() if p.name not in demo.DEMO_SKIP]
    with iochar.connect(str(out / "iochar.duckdb"), read_only=True) as db:
        kinds = dict(db.sql("SELECT kind, count(*) FROM sources GROUP BY kind").fetchall())
        n = db.sql("SELECT count(*) FROM sources").fetchall()[0][0]
        apps = {r[0] for r in db.sql("SELECT app FROM jobs").fetchall()}
        # the IOR run: the POSIX-layer bytes equal its trace-csv export of the same segments
        rows = db.sql(
            "SELECT s.kind, sum(o.size) FROM ops o JOIN jobs j USING (job_id) "
            "JOIN sources s USING (source_id) "
            "WHERE s.uri LIKE '%ior-hdf5%' AND o.call IS DISTINCT FROM 'DXT_MPIIO' GROUP BY 1"
        ).fetchall()
    logs = sorted((out / "demo-data" / "synth" / "jobs").glob("*.darshan"))
    assert n == len(real) + len(demo.SCENARIO_SCALE) + len(logs)
    assert set(demo.SCENARIO_SCALE) <= apps
    assert {"strace", "darshan", "iostat", "lmt", "brw_stats", "snapshot"} <= set(kinds)
    assert len({b for _, b in rows}) == 1 and len(rows) >= 2, rows
    assert "what landed" in log


@pytest.mark.notebooks
def test_demo_truth_files_match_the_loaded_traces(demo_run):
    out, rc, log = demo_run
    apps = out / "demo-data" / "synth" / "apps"
    with iochar.connect(str(out / "iochar.duckdb"), read_only=True) as db:
        for name in demo.SCENARIO_SCALE:
            truth = pd.read_csv(apps / f"{name}.parquet.truth.csv")
            paths = {
                r[0]
                for r in db.sql(
                    "SELECT DISTINCT f.path FROM files f JOIN jobs j USING (job_id) "
                    "WHERE j.app = $app",
                    params={"app": name},
                ).fetchall()
            }
            assert set(truth["path"]) <= paths, name


def test_demo_synthetic_part_is_seeded(tmp_path):
    a = demo.build_inputs(tmp_path / "a")
    b = demo.build_inputs(tmp_path / "b")
    for (pa_, ka), (pb, kb) in zip(a, b, strict=True):
        assert ka == kb
        if pa_.suffix == ".parquet":
            assert pd.read_parquet(pa_).equals(pd.read_parquet(pb)), pa_.name
    ops, _ = synth.make_scenario("gcm", random_state=demo.SEED + 3)
    assert (
        pd.read_parquet(tmp_path / "a" / "synth" / "apps" / "gcm.parquet").shape[0] == ops.num_rows
    )


@pytest.mark.notebooks
def test_demo_no_reports_builds_and_loads_only(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--no-reports"]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "iochar.duckdb").is_file()
    assert not list(tmp_path.glob("*.html"))
    m = re.search(r"loaded (.+)", out)
    assert m and "darshan" in m.group(1)


def test_cached_database_is_built_once(tmp_path, monkeypatch):
    monkeypatch.setenv("IOCHAR_CACHE", str(tmp_path))
    lines: list[str] = []
    p1 = demo.cached_database(progress=lines.append)
    assert p1.is_file() and p1.parent == tmp_path and any("building" in x for x in lines)
    lines.clear()
    p2 = demo.cached_database(progress=lines.append)
    assert p2 == p1 and lines == []
    assert not list(Path(tmp_path).glob("*.tmp"))


def test_a_notebook_building_the_demo_prints_its_steps_not_every_input(
    tmp_path, monkeypatch, capsys
):
    from iochar.report import notebook as nb

    monkeypatch.setenv("IOCHAR_CACHE", str(tmp_path))
    store = nb.open_store("")
    store.close()
    lines = capsys.readouterr().out.splitlines()
    inputs = len(demo.build_inputs(tmp_path / "again"))
    assert inputs > 100  # over a hundred inputs ...
    assert len(lines) <= 5, lines  # ... told in a few lines: building, built, what loaded
    assert lines[-1].startswith("made 7 synthetic application traces; loaded ")
    assert "darshan" in lines[-1]
