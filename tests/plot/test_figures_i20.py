"""Charts of issue 20 item 4 on real logs and counters: drawn (SVG with marks) in their
units, or a sentence saying why (NoChart) when the data cannot make the figure."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import iochar
from iochar.analyze import fsu, jobs, throughput
from iochar.plot import NoChart, cost_model_chart, fsu_chart
from iochar.plot import jobs as pj
from iochar.plot import system as ps
from tests.conftest import DATA_DIR, requires_darshan

vlc = pytest.importorskip("vl_convert")


def _svg(chart) -> str:
    svg = vlc.vegalite_to_svg(chart.to_dict())
    assert svg.startswith("<svg") and "class=\"marks\"" in svg
    return svg


def _texts(svg: str) -> list[str]:
    return [t for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


@pytest.fixture(scope="module")
def logs():
    pytest.importorskip("darshan")
    db = iochar.connect(":memory:")
    for rel in ("ior_hdf5_example.darshan", "example.darshan", "lustre/sample-badost.darshan",
                "darshan-logs/release_logs/mpi-io-test-x86_64-3.4.7.darshan"):  # fmt: skip
        db.load(DATA_DIR / "darshan" / rel)
    db.load(DATA_DIR / "strace" / "ckpt_tt.strace")
    yield db
    db.close()


@requires_darshan
def test_darshan_figures_draw_on_real_logs(logs):
    m = jobs.job_metrics(logs)
    texts = _texts(_svg(pj.interface_chart(jobs.interface_table(m))))
    assert "processes per job" in texts and "MPI-IO" in texts and "HDF5" in texts
    texts = _texts(_svg(pj.files_procs_chart(m)))
    assert "files accessed" in texts and "processes" in texts
    texts = _texts(_svg(pj.access_size_cdf_chart(jobs.size_cdf(m))))
    assert "0-100" in texts and "1G+" in texts and "100%" in texts
    cost = jobs.io_cost(logs)
    texts = _texts(_svg(pj.io_cost_chart(cost)))
    assert any(t.startswith("time summed over processes [") for t in texts)
    assert {"POSIX", "MPI-IO", "HDF5", "metadata"} <= set(texts)
    texts = _texts(_svg(pj.mount_volume_chart(jobs.volume_by_mount(logs))))
    assert "/global/cscratch1" in texts  # ior_hdf5_example's Lustre scratch
    assert any(re.fullmatch(r"\d+ (KiB|MiB|GiB)", t) for t in texts)  # binary ticks


def test_job_figures_say_why_without_data(store):
    m = jobs.job_metrics(store)
    for chart in (
        pj.interface_chart(jobs.interface_table(m)),
        pj.files_procs_chart(m),
        pj.access_size_cdf_chart(jobs.size_cdf(m)),
        pj.io_cost_chart(jobs.io_cost(store)),
        pj.mount_volume_chart(jobs.volume_by_mount(store)),
    ):
        assert isinstance(chart, NoChart) and chart.reason.startswith("No "), chart


def test_one_job_is_no_scatter(store):
    store.load(DATA_DIR / "strace" / "ckpt_tt.strace")
    got = pj.files_procs_chart(jobs.job_metrics(store))
    assert isinstance(got, NoChart) and "one job only" in got.reason


def test_daily_profile_chart_on_two_days_of_real_iostat(store):
    for f in ("rhel6-sysstat9-x-t-m.iostat", "rhel6-sysstat9-x-t-d.iostat"):
        store.load(DATA_DIR / "iostat" / f)
    p = throughput.daily_profile(store)
    texts = _texts(_svg(ps.daily_profile_chart(p)))
    assert "time of day (UTC) [h]" in texts and "24" in texts
    assert any(re.fullmatch(r"write \[(B|KiB|MiB)/s\]", t) for t in texts)
    one = throughput.daily_profile(store, source_id=p.sources[0])
    # one input alone still finds its sibling; a store of one day says so
    assert one.sources == p.sources
    db = iochar.connect(":memory:")
    db.load(DATA_DIR / "lmt" / "snx11025_2018-01-28-trimmed.sqlite3")
    got = ps.daily_profile_chart(throughput.daily_profile(db))
    assert isinstance(got, NoChart) and "one day only (2018-01-28" in got.reason


def test_model_against_fio_runs_and_whole_file_system_fsu(store):
    path = str(DATA_DIR / "fio" / "iochar-calibrate-vda-ext4.json")
    check = fsu.compare_calibration(fsu.cost_model(path), path)
    texts = _texts(_svg(cost_model_chart(check)))
    assert "4 KiB" in texts and "4 MiB" in texts
    none = fsu.compare_calibration(fsu.table_i_model(), "")
    assert none.empty  # the notebook says why (narrate.system.model_check) and draws nothing
    store.load(DATA_DIR / "brw_stats" / "zfs-lustrefs-OST0000-series.txt")
    fs = fsu.fsu_by_filesystem(fsu.fsu_series(store, fsu.table_i_model()))
    got = fsu_chart(fsu.widest_filesystem(fs))
    assert isinstance(got, NoChart) and "only one interval" in got.reason


def test_mount_chart_keeps_the_top_and_sums_the_rest():
    t = pd.DataFrame({"mount": [f"/m{i}" for i in range(15)], "bytes_read": range(1, 16),
                      "bytes_written": 0, "jobs": 1})  # fmt: skip
    spec = pj.mount_volume_chart(t, top=5).to_dict()
    data = next(iter(spec["datasets"].values()))
    mounts = {d["mount"] for d in data}
    assert len(mounts) == 5 and "(others: 11)" in mounts
    other = next(d for d in data if d["mount"] == "(others: 11)")
    assert other["bytes"] == sum(range(1, 12))
