"""The Parquet lake on a 2-process loopback Dask cluster (issue 23, DESIGN.md "Beyond one machine").

Inputs are the real Darshan logs bundled under data/darshan (see data/darshan/SOURCE.md);
a lake and a DuckDB file loaded from the same inputs must give the same analyses.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pandas as pd
import pytest

import iochar

pytest.importorskip("darshan", reason="reading Darshan logs needs the darshan extra")
distributed = pytest.importorskip("distributed", reason="the lake needs the lake extra (Dask)")

from iochar.lake import LakeStore, cluster, ingest  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data" / "darshan"
LOGS = sorted(str(p) for p in DATA.rglob("*.darshan"))


@pytest.fixture(scope="module")
def client():
    with cluster(2, dashboard=False) as c, distributed.Client(c) as cl:
        yield cl


def _job_uri(store) -> pd.DataFrame:
    return store.sql("SELECT j.job_id, s.uri FROM jobs j JOIN sources s USING (source_id)").df()


def _by_uri(store, df: pd.DataFrame, drop: tuple[str, ...] = ()) -> pd.DataFrame:
    out = df.merge(_job_uri(store), on="job_id").drop(columns=["job_id", *drop])
    return out.sort_values("uri", kind="stable").reset_index(drop=True)


def test_lake_equals_database(tmp_path, client):
    """job_metrics, classify and insights are the same on a lake and on a DuckDB file."""
    from iochar.analyze import insights
    from iochar.analyze.classify import classify
    from iochar.analyze.jobs import job_metrics

    logs = LOGS[:12]
    rep = ingest(logs, tmp_path / "lake", client=client)
    assert not rep.errors and len(rep.landed) == len(logs)
    db = iochar.connect(str(tmp_path / "db.duckdb"))
    db.load_many(logs)
    lake = iochar.connect(lake=str(tmp_path / "lake"))
    assert isinstance(lake, LakeStore)
    assert lake.row_counts() == db.row_counts()

    a, b = job_metrics(db).jobs, job_metrics(lake).jobs
    pd.testing.assert_frame_equal(_by_uri(db, a), _by_uri(lake, b), check_dtype=False)

    ca = classify(db).drop(columns=["file_id"], errors="ignore")
    cb = classify(lake).drop(columns=["file_id"], errors="ignore")
    pd.testing.assert_frame_equal(
        _by_uri(db, ca).sort_values(["uri", "path"]).reset_index(drop=True),
        _by_uri(lake, cb).sort_values(["uri", "path"]).reset_index(drop=True),
        check_dtype=False,
    )

    fa, fb = pd.DataFrame(insights.run(db)), pd.DataFrame(insights.run(lake))
    assert len(fa) > 0
    ia = [
        (_uri(db, j), c, v, repr(e))
        for j, c, v, e in fa[["job_id", "code", "severity", "evidence"]].itertuples(index=False)
    ]  # noqa: E501
    ib = [
        (_uri(lake, j), c, v, repr(e))
        for j, c, v, e in fb[["job_id", "code", "severity", "evidence"]].itertuples(index=False)
    ]  # noqa: E501
    assert sorted(ia) == sorted(ib)
    db.close()


def _uri(store, job_id):
    if job_id is None or pd.isna(job_id):
        return None
    return store.sql(
        "SELECT s.uri FROM jobs j JOIN sources s USING (source_id) WHERE j.job_id = $j",
        {"j": int(job_id)},
    ).fetchall()[0][0]


def test_rerun_is_idempotent_and_bad_inputs_reported(tmp_path, client):
    bad = tmp_path / "bad.darshan"
    bad.write_bytes(Path(LOGS[0]).read_bytes()[:200])  # a truncated real log
    logs = LOGS[:4]
    rep = ingest([*logs, str(bad)], tmp_path / "lake", client=client)
    assert len(rep.landed) == 4
    assert [u for u, _ in rep.errors] == [str(bad.resolve())]
    assert isinstance(rep.errors[0][1], iochar.InputError)
    again = ingest([*logs, LOGS[4]], tmp_path / "lake", client=client)
    assert len(again.landed) == 1 and len(again.duplicates) == 4
    lake = iochar.connect(lake=str(tmp_path / "lake"))
    shas = lake.sql("SELECT sha256 FROM sources").df()["sha256"]
    assert shas.is_unique and len(shas) == 5
    with pytest.raises(iochar.IocharError, match="read-only"):
        lake.load(LOGS[5])


def test_copies_of_one_log_land_once(tmp_path, client):
    for i in range(3):
        shutil.copy(LOGS[0], tmp_path / f"copy{i}.darshan")
    rep = ingest(sorted(str(p) for p in tmp_path.glob("*.darshan")), tmp_path / "lake",
                 client=client, batch=1)  # fmt: skip
    assert len(rep.landed) == 1 and len(rep.duplicates) == 2
    lake = iochar.connect(lake=str(tmp_path / "lake"))
    assert lake.row_counts()["jobs"] == 1


def test_worker_killed_mid_ingest(tmp_path):
    """kill -9 of a worker: Dask runs its batch again; no input missing, none twice."""
    logs = [str(p) for p in (tmp_path / "in").glob("*")]
    (tmp_path / "in").mkdir()
    for i, p in enumerate(LOGS):  # distinct bytes per copy: the name is in no log, so
        for k in range(2):  # copies of one log are one input; make 2 distinct rounds
            dst = tmp_path / "in" / f"{k}_{i}_{Path(p).name}"
            shutil.copy(p, dst)
    logs = sorted(str(p) for p in (tmp_path / "in").iterdir())
    killed = []
    with cluster(2, dashboard=False) as c, distributed.Client(c) as cl:
        pids = cl.run(os.getpid)

        def progress(done, total):
            if not killed and done >= 1:
                victim = sorted(pids.values())[0]
                os.kill(victim, signal.SIGKILL)
                killed.append(victim)

        rep = ingest(logs, tmp_path / "lake", client=cl, batch=2, progress=progress)
    assert killed
    assert not rep.errors
    distinct = {Path(p).read_bytes() for p in logs}
    assert len(rep.landed) == len(distinct)
    lake = iochar.connect(lake=str(tmp_path / "lake"))
    src = lake.sql("SELECT count(*), count(DISTINCT sha256) FROM sources").fetchall()[0]
    assert src == (len(distinct), len(distinct))
    jobs = lake.sql("SELECT count(*), count(DISTINCT source_id) FROM jobs").fetchall()[0]
    assert jobs == (len(distinct), len(distinct))
    db = iochar.connect(":memory:")
    db.load_many(logs)
    assert lake.row_counts() == db.row_counts()


def test_uncommitted_batch_is_invisible_and_collected(tmp_path, client):
    """Worker files with no manifest entry (client killed before commit): nothing shows."""
    from iochar.lake.write import ingest_batch

    lake = tmp_path / "lake"
    ingest(LOGS[:2], lake, client=client)
    before = iochar.connect(lake=str(lake)).row_counts()
    # the state a kill -9 of the client between a worker's write and the commit leaves
    out = ingest_batch(str(lake), [(LOGS[2], 50), (LOGS[3], 51)], frozenset())
    assert [r["status"] for r in out] == ["ok", "ok"]
    assert list(lake.rglob("part-50-51.parquet"))
    assert iochar.connect(lake=str(lake)).row_counts() == before
    rep = ingest(LOGS[2:4], lake, client=client)  # collects the orphans, lands them once
    assert len(rep.landed) == 2
    assert not list(lake.rglob("part-50-51.parquet"))
    db = iochar.connect(":memory:")
    db.load_many(LOGS[:4])
    assert iochar.connect(lake=str(lake)).row_counts() == db.row_counts()


def test_per_job_analyses_on_dask_equal_the_whole_lake(tmp_path, client):
    """analyze_jobs (tasks over slices of inputs) = the same analyses on the whole lake."""
    from iochar.analyze.classify import classify
    from iochar.analyze.jobs import job_metrics
    from iochar.lake.jobs import analyze_jobs, read_results

    lake = tmp_path / "lake"
    ingest(LOGS[:9], lake, client=client)
    counts = analyze_jobs(lake, client, analyses=("job_metrics", "classify"), inputs_per_task=4)
    whole = iochar.connect(lake=str(lake))
    a = job_metrics(whole).jobs.sort_values("job_id").reset_index(drop=True)
    b = read_results(lake, "job_metrics").sort_values("job_id").reset_index(drop=True)
    assert counts["job_metrics"] == len(a) == 9
    pd.testing.assert_frame_equal(a, b[a.columns], check_dtype=False)
    key = ["job_id", "file_id"]
    ca = classify(whole).sort_values(key).reset_index(drop=True)[[*key, "class", "confidence"]]
    cb = read_results(lake, "classify").sort_values(key).reset_index(drop=True)[ca.columns]
    pd.testing.assert_frame_equal(ca, cb, check_dtype=False)


def test_cli_ingest_and_db_dir(tmp_path, capsys):
    """iochar ingest DIR --lake L, then --db L on info and insights (read-only)."""
    from iochar.cli import main

    src = tmp_path / "in"
    src.mkdir()
    for p in LOGS[:3]:
        shutil.copy(p, src / Path(p).name)
    (src / "notes.darshan").write_text("not a darshan log\n")  # named like one, is not
    lake = tmp_path / "lake"
    status = main(["ingest", str(src), str(src / "notes.darshan"), "--lake", str(lake),
                   "--workers", "1", "--no-progress"])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 1  # one input failed
    assert "Dask dashboard: http://127.0.0.1:" in out
    assert "ingested 3 input(s)" in out and "failed: " in out and "notes.darshan" in out
    assert main(["insights", "--db", str(lake), "--json"]) == 0
    assert main(["load", LOGS[4], "--db", str(lake)]) == 2
    assert "read-only" in capsys.readouterr().err
