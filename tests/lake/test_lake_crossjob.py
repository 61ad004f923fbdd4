"""Cross-job analyses in DuckDB over a lake equal those over a database (issue 23, item 3).

Table IV (variance across repeated jobs, Carns et al. 2011 section 4.1) on Darshan logs
written by libdarshan-util's own writer (iochar.datasets.synth_jobs.write_darshan_logs,
the population's truth known), and FSU (Uselton & Wright 2013, Eq. 7) over the real Lustre
brw_stats captures in data/brw_stats (see its SOURCE.md).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import iochar

pytest.importorskip("darshan", reason="writing Darshan logs needs the darshan extra")
distributed = pytest.importorskip("distributed", reason="the lake needs the lake extra (Dask)")

from iochar.lake import cluster, ingest  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def client():
    with cluster(2, dashboard=False) as c, distributed.Client(c) as cl:
        yield cl


def _pair(tmp_path, paths, client):
    rep = ingest(paths, tmp_path / "lake", client=client)
    assert not rep.errors, rep.errors
    db = iochar.connect(":memory:")
    db.load_many(paths)
    return db, iochar.connect(lake=str(tmp_path / "lake"))


def test_table_iv_variance_on_a_lake(tmp_path, client):
    from iochar.analyze.variance import repeated_jobs
    from iochar.datasets.synth_jobs import JobGroup, make_population, write_darshan_logs

    groups = [
        JobGroup("A", app="sim", uid=100, nprocs=4, files=4, read_bytes=2**24,
                 write_bytes=2**20, mean_io_s=10.0, cv=0.2, samples=6),
        JobGroup("B", app="post", uid=101, nprocs=8, files=8, read_bytes=2**22,
                 write_bytes=2**22, mean_io_s=4.0, cv=0.5, samples=5),
    ]  # fmt: skip
    pop = make_population(groups, random_state=0)
    (tmp_path / "logs").mkdir()
    logs = [str(p) for p in write_darshan_logs(pop, tmp_path / "logs")]
    db, lake = _pair(tmp_path, logs, client)
    a, b = repeated_jobs(db).groups, repeated_jobs(lake).groups
    assert len(a) == 2
    pd.testing.assert_frame_equal(a, b, rtol=1e-12)
    # the paper's coefficient of variation is the population's (make_population's truth)
    got = sorted(a["cv_pct"].round(6))
    want = sorted(pop.truth["cv_pct"].round(6))
    assert got == want


def test_fsu_over_ost_histograms_on_a_lake(tmp_path, client):
    from iochar.analyze.fsu import fsu_series, table_i_model

    paths = [str(p) for p in sorted((DATA / "brw_stats").glob("*series.txt"))]
    assert paths
    db, lake = _pair(tmp_path, paths, client)
    assert lake.row_counts()["size_hist"] == db.row_counts()["size_hist"] > 0
    model = table_i_model()
    a = pd.DataFrame(fsu_series(db, model)).sort_values(["target", "ts"]).reset_index(drop=True)
    b = pd.DataFrame(fsu_series(lake, model)).sort_values(["target", "ts"]).reset_index(drop=True)
    assert len(a) > 0
    pd.testing.assert_frame_equal(a, b, rtol=1e-12)
