"""Narrative of notebook 01 (application traces): sentences state what the results hold.

The store holds two synthetic applications shaped like Miller & Katz's ccm (required,
staging and a numbered checkpoint series) and gcm (required I/O only), and the real
strace capture of ``data/strace/src/ckpt_app.c``. Expected numbers are computed here
from the ops table with SQL, independently of :mod:`iochar.analyze`.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import iochar
from iochar.analyze import characterize, classify, cycles, fileio
from iochar.datasets.synth import make_scenario
from iochar.narrate import apps, fmt_bytes, fmt_num, fmt_pct, fmt_rate, fmt_s, plural
from iochar.plot import tables
from tests.narrate import shown

DATA = Path(__file__).resolve().parents[2] / "data"
MiB = 1 << 20


def _load_synth(db, name: str, seed: int = 0) -> None:
    ops, _truth = make_scenario(name, scale=0.05, random_state=seed)
    buf = io.BytesIO()
    pq.write_table(ops, buf)
    db.load(buf.getvalue(), kind="trace-parquet")


def _results(db, min_file_bytes: int = MiB) -> dict:
    facts = fileio.file_io(db)
    return {
        "db": db,
        "facts": facts,
        "t1": characterize.app_table(facts),
        "t2": characterize.rates_table(facts),
        "l1": characterize.app_table(facts, min_file_bytes=min_file_bytes),
        "l2": characterize.rates_table(facts, min_file_bytes=min_file_bytes),
        "labels": classify.classify(facts),
    }


@pytest.fixture(scope="module")
def mixed():
    """ccm, gcm and the real ckpt_app strace capture: jobs 0, 1, 2."""
    db = iochar.connect(":memory:")
    _load_synth(db, "ccm")
    _load_synth(db, "gcm")
    db.load(DATA / "strace" / "ckpt_tt.strace")
    yield _results(db)
    db.close()


@pytest.fixture(scope="module")
def gcm_only():
    """Required I/O only: no staging, no checkpoints, no cycles."""
    db = iochar.connect(":memory:")
    _load_synth(db, "gcm")
    yield _results(db)
    db.close()


def _per_job(db) -> pd.DataFrame:
    """Bytes read and written per job, straight from ops."""
    return (
        db.sql(
            """SELECT job_id,
                      coalesce(sum(size) FILTER (WHERE op = 'read'), 0) AS r,
                      coalesce(sum(size) FILTER (WHERE op = 'write'), 0) AS w
               FROM ops WHERE op IN ('read', 'write') AND size IS NOT NULL
                 AND error IS NULL GROUP BY job_id ORDER BY job_id"""
        )
        .df()
        .set_index("job_id")
    )


def _no_nan(text: str) -> None:
    assert not re.search(r"\bnan\b|\bNaN\b|<NA>|None", text), text


# --------------------------------------------------------------------------- helpers


def test_pick_job_is_the_job_that_moved_most(mixed):
    per = _per_job(mixed["db"])
    want = int((per["r"] + per["w"]).idxmax())
    assert characterize.pick_job(mixed["t1"]) == want == 0  # ccm moved most
    assert characterize.pick_job(mixed["t1"], 2) == 2
    assert characterize.pick_job(mixed["t1"].iloc[0:0]) is None


def test_pick_job_prefers_jobs_with_ops():
    t = pd.DataFrame(
        {
            "job_id": [0, 1, 2],
            "io_bytes": [10, 500, 20],
            "basis": ["ops", "file_stats:POSIX", "ops"],
        }
    )
    assert characterize.pick_job(t) == 2
    assert characterize.pick_job(t.assign(basis="file_stats:POSIX")) == 1


@pytest.mark.parametrize("runtime", [0.9, 10.132, 145.6, 1893.0, 20000.0])
def test_rate_bin_is_nice_and_gives_at_most_200_bins(runtime):
    t = pd.DataFrame({"job_id": [5], "runtime_s": [runtime]})
    b = characterize.rate_bin_s(t, 5)
    mant = b / 10 ** np.floor(np.log10(b))
    assert round(mant, 9) in (1.0, 2.0, 5.0)
    assert runtime / b <= 200 < runtime / (b * 0.5 if round(mant, 9) != 5 else b * 0.4)
    assert characterize.rate_bin_s(t, 5, 0.25) == 0.25
    assert characterize.rate_bin_s(t.assign(runtime_s=np.nan), 5) == 1.0


def test_table_views_are_in_binary_units_most_io_first(mixed):
    t1 = mixed["t1"]
    v = tables.table1_view(t1)
    assert list(v["job_id"]) == list(t1.sort_values("io_bytes", ascending=False)["job_id"])
    row = t1.set_index("job_id").loc[0]
    assert v.set_index("job_id").loc[0, "I/O done [MiB]"] == round(row["io_bytes"] / MiB, 1)
    assert len(tables.table1_view(t1, top=2)) == 2
    v2 = tables.table2_view(mixed["t2"]).set_index("job_id")
    per = _per_job(mixed["db"])
    rt = t1.set_index("job_id")["runtime_s"]
    assert v2.loc[1, "write MiB/s"] == round(per.loc[1, "w"] / rt.loc[1] / MiB, 3)


def test_by_app_averages_per_application(mixed):
    t = pd.concat([mixed["t1"], mixed["t1"].assign(job_id=lambda d: d.job_id + 10)])
    means = characterize.app_means(t)
    g = tables.app_means_view(means).set_index("app")
    assert (g["jobs"] == 2).all()
    per = _per_job(mixed["db"])
    assert g.loc["ccm", "total I/O done [MiB]"] == round(2 * per.loc[0].sum() / MiB, 1)
    m = means.set_index("app")  # the averages themselves stay in bytes and seconds
    assert m.loc["ccm", "total_io_bytes"] == 2 * per.loc[0].sum()
    assert m.loc["ccm", "io_bytes"] == per.loc[0].sum()
    assert list(g.index) == list(m.index)  # most I/O first


def test_class_view_is_one_jobs_files_in_mib(mixed):
    labels = mixed["labels"]
    v = tables.class_view(labels, 0)
    mine = labels[labels["job_id"] == 0].reset_index(drop=True)
    assert len(v) == len(mine) > 0 and set(v["job_id"]) == {0}
    assert list(v["class"]) == list(mine["class"])
    assert list(v["MiB written"]) == list((mine["bytes_written"] / MiB).round(2))
    assert len(tables.class_view(labels)) == len(labels)


def test_job_periods_finds_ccm_checkpoint_cycle(mixed):
    periods, cyc = apps.job_periods(mixed["db"], 0, bin_s=0.05)
    ref = cycles.find_periods(cycles.signal_from_ops(mixed["db"], job_id=0, bin_s=0.05))
    assert periods.period_s == pytest.approx(ref.period_s)
    assert cyc is not None and cyc.period_s == pytest.approx(periods.period_s)
    # a stricter confidence never reports more periods
    strict, _ = apps.job_periods(mixed["db"], 0, bin_s=0.05, min_confidence=0.999999)
    assert len(strict.periods) <= len(periods.periods)


# --------------------------------------------------------------------------- narrative


def test_volume_summary_numbers_come_from_the_data(mixed):
    db, t1, t2 = mixed["db"], mixed["t1"], mixed["t2"]
    text = apps.volume_summary(t1, t2, mixed["facts"], top=3)
    _no_nan(text)
    per = _per_job(db)
    total = float(per.values.sum())
    assert f"moved {fmt_bytes(total)}" in text
    lead = int((per["r"] + per["w"]).idxmax())
    assert f"job {lead} (ccm) with {fmt_bytes(per.loc[lead].sum())}" in text
    assert f"carries {fmt_pct(per.loc[lead].sum() / total)} of all bytes" in text
    n_more_read = int(((per["r"] > per["w"]) & (per["w"] > 0)).sum())
    assert f"{plural(n_more_read, 'job')} read more bytes" in text
    rt = t1.set_index("job_id")["runtime_s"]
    top_writer = int(per["w"].idxmax())
    assert fmt_rate(per.loc[top_writer, "w"] / rt.loc[top_writer]) in text


def test_volume_summary_changes_with_the_data(mixed, gcm_only):
    a = apps.volume_summary(mixed["t1"], mixed["t2"], mixed["facts"])
    b = apps.volume_summary(gcm_only["t1"], gcm_only["t2"], gcm_only["facts"])
    assert a != b and "The 1 job in this database" in b and "(gcm)" in b
    empty = mixed["t1"].iloc[0:0]
    assert "no jobs" in apps.volume_summary(empty, mixed["t2"].iloc[0:0], mixed["facts"])


def test_large_files_summary_counts_files_over_the_threshold(mixed):
    db = mixed["db"]
    for thr in (MiB, 64 * 1024):
        l1 = characterize.app_table(mixed["facts"], min_file_bytes=thr)
        text = apps.large_files_summary(mixed["t1"], l1, thr)
        _no_nan(text)
        ext = db.sql(
            """SELECT job_id, file_id, max("offset" + size) AS ext, sum(size) AS b
               FROM ops WHERE op IN ('read', 'write') AND size IS NOT NULL
               AND error IS NULL GROUP BY ALL"""
        ).df()
        big = ext[ext["ext"] >= thr]
        assert f"Files of at least {fmt_bytes(thr)} are {plural(len(big), 'file')}" in text
        assert f"of {fmt_num(len(ext))} " in text
        share = big["b"].sum() / ext["b"].sum()
        assert (fmt_pct(share) if share < 0.9995 or share == 1 else "100.0%") in text
    assert "every file counts" in apps.large_files_summary(mixed["t1"], mixed["t1"], None)


def test_large_files_summary_names_jobs_with_only_small_files(mixed):
    ext = (
        mixed["db"]
        .sql(
            """SELECT job_id, max("offset" + size) AS ext FROM ops
           WHERE op IN ('read', 'write') AND size IS NOT NULL GROUP BY job_id, file_id"""
        )
        .df()
    )
    small = sorted(set(ext["job_id"]) - set(ext.loc[ext["ext"] >= MiB, "job_id"]))
    assert 2 in small  # the strace capture's files are all under 1 MiB
    text = shown(apps.large_files_summary(mixed["t1"], mixed["l1"], MiB))
    apps_of = mixed["t1"].set_index("job_id")["app"]
    named = ", ".join(f"job {j} ({apps_of[j]})" for j in small)
    assert named.rsplit(", ", 1)[0] in text and f"job {small[-1]} ({apps_of[small[-1]]})." in text
    assert f"{plural(len(small), 'job')} touched only smaller files" in text
    # with a threshold below every file, nobody drops out
    text = apps.large_files_summary(mixed["t1"], mixed["t1"], 1)
    assert "touched only smaller files" not in text and "add little" in text


def test_rates_summary_gives_the_range_of_request_sizes(mixed):
    text = apps.rates_summary(mixed["l2"], MiB)
    _no_nan(text)
    l2 = mixed["l2"]
    active = l2[(l2["reads_per_s"] + l2["writes_per_s"]) > 0]
    sizes = pd.concat([active["avg_read_bytes"], active["avg_write_bytes"]]).dropna()
    assert f"range from {fmt_bytes(sizes.min())}" in text
    assert f"to {fmt_bytes(sizes.max())}" in text
    r = active["rw_data_ratio"].dropna()
    assert f"median {fmt_num(r.median())}" in text
    empty = l2.assign(reads_per_s=0.0, writes_per_s=0.0)
    assert "Table 2 is empty" in apps.rates_summary(empty, MiB)


def test_class_summary_shares_match_the_labels(mixed):
    labels = mixed["labels"]
    text = apps.class_summary(labels)
    _no_nan(text)
    moved = labels["bytes_read"] + labels["bytes_written"]
    by = moved.groupby(labels["class"]).sum()
    for c, b in by.items():
        share = b / moved.sum()
        shown = "<0.1%" if 0 < share < 0.0005 else fmt_pct(share)
        assert f"**{c}** {plural(int((labels['class'] == c).sum()), 'file')}" in text
        assert f"{shown} of the bytes ({fmt_bytes(b)})" in text
    assert f"By bytes **{by.idxmax()}** I/O dominates" in text


def test_class_summary_of_one_job_and_of_nothing(mixed, gcm_only):
    text = apps.class_summary(mixed["labels"], 1)
    assert text.startswith("Of 2 files of job 1:") and "**required** 2 files" in text
    assert "checkpoint" not in text.split("Mean confidence")[0]
    assert apps.class_summary(gcm_only["labels"]) != apps.class_summary(mixed["labels"])
    assert "no files" in apps.class_summary(mixed["labels"], 99)


def test_checkpoint_summary_lists_the_series_with_evidence(mixed, gcm_only):
    labels = mixed["labels"]
    text = apps.checkpoint_summary(labels)
    _no_nan(text)
    ck = labels[labels["class"] == "checkpoint"]
    assert text.startswith(
        f"{plural(len(ck), 'file')} in {plural(ck['job_id'].nunique(), 'job')} are checkpoints"
    )
    for job, g in ck.groupby("job_id"):
        files = f"`{g['path'].min()}` ... `{g['path'].max()}` ({len(g)} files)"
        assert f"- job {job}: {files}" in text
        assert g["reason"].iloc[0] in text
    assert apps.checkpoint_summary(gcm_only["labels"]) == (
        "No file was classified as a checkpoint."
    )


def test_rate_summary_peak_and_idle_bins(mixed):
    db = mixed["db"]
    bin_s = 0.5
    rate = characterize.data_rate(db, job_id=0, bin_s=bin_s)
    by_class = classify.class_rate(db, job_id=0, bin_s=bin_s)
    text = apps.rate_summary(rate, by_class, mixed["t1"], 0)
    _no_nan(text)
    bins = db.sql(
        f"""SELECT floor(t_start / {bin_s})::BIGINT AS b, sum(size) AS n FROM ops
            WHERE job_id = 0 AND op IN ('read', 'write') AND size IS NOT NULL
            AND error IS NULL GROUP BY 1"""
    ).df()
    nbins = int(bins["b"].max()) + 1
    assert f"peaks at {fmt_rate(bins['n'].max() / bin_s)}" in text
    assert f"at t = {fmt_s(float(bins.loc[bins['n'].idxmax(), 'b']) * bin_s)}" in text
    assert f"{fmt_pct(1 - len(bins) / nbins)} of the {nbins} bins have no I/O" in text
    assert "staging I/O" in text and "checkpoint I/O" in text
    other = apps.rate_summary(
        characterize.data_rate(db, job_id=1, bin_s=5.0),
        classify.class_rate(db, job_id=1, bin_s=5.0),
        mixed["t1"],
        1,
    )
    assert other != text and "job 1 (gcm)" in other and "staging" not in other
    assert "no timed reads or writes" in apps.rate_summary(rate.iloc[0:0], by_class, None, 0)


def test_cycles_summary_period_confidence_and_checkpoint_interval(mixed):
    db = mixed["db"]
    periods, cyc = apps.job_periods(db, 0, bin_s=0.05)
    assert not periods.periods.empty
    text = apps.cycles_summary(
        periods, cyc, job_id=0, table=mixed["t1"], labels=mixed["labels"], facts=mixed["facts"]
    )
    _no_nan(text)
    first = periods.periods.iloc[0]
    assert f"repeats every **{fmt_s(first['period_s'])}**" in text
    assert f"false-alarm probability {float(first['false_alarm']):.2g}" in text
    full = cyc.cycles[cyc.cycles["complete"]]
    assert f"its {plural(len(full), 'complete cycle')}" in text
    assert f"median of {fmt_bytes(full['bytes'].median())}" in text
    # the checkpoint series' spacing, from its files' first writes
    t = np.sort(
        db.sql(
            """SELECT min(o.t_start) AS t FROM ops o JOIN files f USING (job_id, file_id)
               WHERE o.job_id = 0 AND o.op = 'write' AND f.path GLOB '*/ckpt.*'
               GROUP BY o.file_id"""
        )
        .df()["t"]
        .to_numpy()
    )
    assert f"every {fmt_s(np.diff(t).mean())}" in text


def test_cycles_summary_without_a_period(mixed, gcm_only):
    periods, cyc = apps.job_periods(gcm_only["db"], 0, bin_s=1.0)
    assert periods.periods.empty and cyc is None
    text = apps.cycles_summary(periods, cyc, job_id=0, table=gcm_only["t1"])
    assert text.startswith("No period was found in job 0 (gcm)'s I/O")
    assert periods.reason in text
    counters = gcm_only["t1"].assign(basis="file_stats:POSIX")
    text = apps.cycles_summary(periods, cyc, job_id=0, table=counters)
    assert "no per-operation records" in text and "file_stats:POSIX" in text


def test_job_choice_says_why(mixed):
    t1 = mixed["t1"]
    auto = apps.job_choice(t1, characterize.pick_job(t1))
    per = _per_job(mixed["db"])
    assert "job 0 (ccm)" in auto and "the job that moved the most bytes among the 3 jobs" in auto
    assert fmt_bytes(per.loc[0].sum()) in auto
    chosen = apps.job_choice(t1, 1, 1)
    assert "job 1 (gcm)**, as chosen" in chosen
    assert "counters only" in apps.job_choice(t1.assign(basis="file_stats:POSIX"), 1, 1)
    assert "no jobs" in apps.job_choice(t1.iloc[0:0], None)
