"""Uselton & Wright 2013: the whole file system's FSU (section V) per Lustre file system, and
the model against its calibration runs (Fig. 7), on real brw_stats series and a real fio run.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import iochar
from iochar.analyze import fsu
from tests.conftest import DATA_DIR

FIO = DATA_DIR / "fio" / "iochar-calibrate-vda-ext4.json"


def test_filesystem_of_reads_lustre_target_labels_from_a_real_lctl_dump():
    """lctl names targets <fsname>-OST<hex> / <fsname>-MDT<hex> (ex8761: file system "fs")."""
    text = (DATA_DIR / "brw_stats" / "ex8761-lctl.lctl").read_text()
    names = sorted(set(re.findall(r"\b([A-Za-z0-9_]+-(?:OST|MDT)[0-9a-f]{4})\b", text)))
    assert len(names) > 2
    assert set(fsu.filesystem_of(names)) == {"fs"}
    assert fsu.filesystem_of(["sda", "testfs-OST0000", "zfs-lustrefs-OST0000-series"]).tolist() == [
        "sda",
        "testfs",
        "zfs-lustrefs",
    ]


def test_fsu_by_filesystem_never_averages_two_file_systems(store):
    """Two real series of two file systems (testfs, zfs-lustrefs): each keeps its own FSU."""
    store.load(DATA_DIR / "brw_stats" / "ldiskfs-lctl-series.txt")
    store.load(DATA_DIR / "brw_stats" / "zfs-lustrefs-OST0000-series.txt")
    usage = fsu.fsu_series(store, fsu.table_i_model())
    fs = fsu.fsu_by_filesystem(usage)
    assert fs.evidence["targets"] == {
        "testfs": ["testfs-OST0000"],
        "zfs-lustrefs": ["zfs-lustrefs-OST0000-series"],
    }
    for name, target in (
        ("testfs", "testfs-OST0000"),
        ("zfs-lustrefs", "zfs-lustrefs-OST0000-series"),
    ):
        a = usage[usage["target"] == target].sort_values("ts")
        b = fs[fs["filesystem"] == name].sort_values("ts")
        assert np.allclose(
            a["fsu_pct"].to_numpy(float), b["fsu_pct"].to_numpy(float), equal_nan=True
        )
    # all targets averaged together would mix the two (what fsu_filesystem alone does)
    assert (fs["n_targets"] <= 1).all()
    assert fsu.widest_filesystem(fs)["filesystem"].nunique() == 1


def test_fsu_by_filesystem_averages_the_targets_of_one_file_system(store):
    """Two OSTs of one file system at the same times: the mean of their FSU (section V).

    The ZFS series (a real brw_stats capture) is loaded once under its own name and the
    FSU of a second OST of the same file system is the same histogram counted twice as
    often (every count doubled), so the expected mean is (F + 2F) / 2 per interval.
    """
    store.load(DATA_DIR / "brw_stats" / "zfs-lustrefs-OST0000-series.txt")
    one = fsu.fsu_series(store, fsu.table_i_model())
    two = one.copy()
    two["target"] = "zfs-lustrefs-OST0001"
    for c in ("read_ios", "write_ios", "read_bytes", "write_bytes", "optimal_ios",
              "suboptimal_ios", "busy_s", "fsu_pct", "bw_load_pct"):  # fmt: skip
        two[c] = two[c] * 2
    both = pd.concat([one, two], ignore_index=True)
    fs = fsu.fsu_by_filesystem(both)
    used = one["fsu_pct"].notna().to_numpy()
    assert (fs["filesystem"] == "zfs-lustrefs").all()
    got = fs.sort_values("ts")["fsu_pct"].to_numpy(float)[used]
    assert np.allclose(got, 1.5 * one["fsu_pct"].to_numpy(float)[used])
    assert (fs.loc[fs["fsu_pct"].notna(), "n_targets"] == 2).all()


def test_compare_calibration_against_the_fio_json():
    """Fig. 7: measured = io_bytes / runtime from fio's JSON; predicted = b / (a0 + a1 b)."""
    model = fsu.cost_model(str(FIO))
    got = fsu.compare_calibration(model, str(FIO))
    doc = json.loads(FIO.read_text())
    rows = []
    for job in doc["jobs"]:
        for op in ("read", "write"):
            side = job[op]
            if side["total_ios"] > 0:
                rows.append((op, side["io_bytes"], side["total_ios"], side["runtime"] / 1000))
    assert len(got) == len(rows) == 12
    for op, nbytes, ios, secs in rows:
        size = nbytes / ios
        row = got[(got["op"] == op) & np.isclose(got["bytes"], nbytes)].iloc[0]
        assert row["measured_bps"] == pytest.approx(nbytes / secs)
        a0, a1 = model.a0_[op], model.a1_[op]
        assert row["predicted_bps"] == pytest.approx(size / (a0 + a1 * size))
    assert got.evidence["calibration"] == str(FIO)


def test_compare_calibration_without_runs_says_why():
    got = fsu.compare_calibration(fsu.table_i_model(), "")
    assert got.empty and "Table I" in got.evidence["reason"]
    with pytest.raises(iochar.errors.ReportError, match="calibration"):
        fsu.compare_calibration(fsu.table_i_model(), str(DATA_DIR / "fio" / "SOURCE.md"))
