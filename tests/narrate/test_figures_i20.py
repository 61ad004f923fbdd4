"""Sentences of issue 20 item 4: every number in them comes from the tables they narrate."""

from __future__ import annotations

import iochar
from iochar import narrate
from iochar.analyze import fsu, jobs, throughput
from tests.conftest import DATA_DIR, requires_darshan


@requires_darshan
def test_job_figure_sentences_on_a_real_log(store):
    store.load(DATA_DIR / "darshan" / "ior_hdf5_example.darshan")
    m = jobs.job_metrics(store)
    text = narrate.overview.interfaces(jobs.interface_table(m), jobs.api_table(m))
    assert text.startswith("Interfaces of the 1 measured job: POSIX in 1 (100.0%)")
    assert "ior (H,M,P;" in text  # its STDIO records are <STDOUT> only, which Carns left out
    cost = jobs.io_cost(store)
    text = narrate.overview.io_cost(cost)
    posix = cost.set_index("interface").loc["POSIX"]
    total = posix[["read_s", "write_s", "meta_s"]].sum()
    assert f"{narrate.fmt_pct(posix['write_s'] / total)} write" in text
    mounts = jobs.volume_by_mount(store)
    text = narrate.overview.mounts(mounts)
    assert text.startswith("2 mount points held the ") and "`/global/cscratch1`" in text
    cdf = jobs.size_cdf(m)
    text = narrate.overview.access_size_cdf(cdf)
    n_w = int(cdf.loc[cdf["op"] == "write", "count"].sum())
    assert f"{n_w:,} writes" in text


def test_empty_store_sentences(store):
    m = jobs.job_metrics(store)
    assert "no interface" in narrate.overview.interfaces(jobs.interface_table(m))
    assert narrate.overview.files_per_process(m).startswith("No job was measured")
    assert narrate.overview.io_cost(jobs.io_cost(store)).startswith("No read, write")
    assert narrate.overview.mounts(jobs.volume_by_mount(store)).startswith("No file")
    assert narrate.system.daily_profile(throughput.daily_profile(store)).startswith(
        "No long-term daily profile: no counters of read\\_bytes, write\\_bytes"
    )
    assert "Table I" in narrate.system.model_check(fsu.compare_calibration(fsu.table_i_model()))


def test_daily_profile_sentence_on_two_days_of_iostat(store):
    for f in ("rhel6-sysstat9-x-t-m.iostat", "rhel6-sysstat9-x-t-d.iostat"):
        store.load(DATA_DIR / "iostat" / f)
    p = throughput.daily_profile(store)
    text = narrate.system.daily_profile(p)
    assert text.startswith("2 days of counters (2 inputs, 11 targets summed;")
    assert f"writes {narrate.fmt_rate(p.median_rate['write_bytes'])}" in text
    assert "estimates" in text  # a few seconds a day: volumes are extrapolated


def test_fsu_per_file_system_sentence():
    db = iochar.connect(":memory:")
    db.load(DATA_DIR / "brw_stats" / "ldiskfs-lctl-series.txt")
    text = narrate.system.fsu_filesystems(
        fsu.fsu_by_filesystem(fsu.fsu_series(db, fsu.table_i_model()))
    )
    assert text.startswith("FSU averaged over each file system's targets: testfs (1 target:")
    assert "one target here" in text
