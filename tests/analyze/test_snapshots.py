"""Snapshot analyses against naive pandas and the facts of the real before/after listings.

data/snapshot/tornado-{before,after}.find list a copy of the tornado package
before and after known changes (SOURCE.md): 60 new 4 KiB files in
``results/``, one new 2 MiB file in ``platform/``, three files deleted (two
in ``__pycache__``, one empty one in ``test``), two files appended to.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iochar.analyze import snapshots as S
from iochar.errors import ParameterError

DATA = Path(__file__).resolve().parents[2] / "data" / "snapshot"


@pytest.fixture
def two(store):
    store.load(DATA / "tornado-before.find")
    store.load(DATA / "tornado-after.find")
    store.load(DATA / "ubuntu-18.04-bin.stat")
    return store


def _files(store, sid):
    return store.sql(
        "SELECT f.*, s.root FROM snapshot_files f JOIN snapshots s USING (snapshot_id) "
        "WHERE snapshot_id = $s",
        {"s": sid},
    ).df()


def _naive_cdf(df, key):
    g = df.groupby(key).agg(files=("size", "size"), bytes=("size", "sum")).sort_index()
    g["cdf_files"] = g.files.cumsum() / g.files.sum()
    g["cdf_bytes"] = g.bytes.cumsum() / g.bytes.sum()
    return g


@pytest.mark.parametrize("sid", [0, 1, 2])
def test_size_cdf_equals_naive(two, sid):
    got = S.size_cdf(two, sid)
    want = _naive_cdf(_files(two, sid), "size")
    assert list(got.size_bytes) == list(want.index)
    np.testing.assert_array_equal(got.files, want.files)
    np.testing.assert_allclose(got.bytes, want.bytes)
    np.testing.assert_allclose(got.cdf_files, want.cdf_files)
    np.testing.assert_allclose(got.cdf_bytes, want.cdf_bytes)
    assert got.cdf_files.iloc[-1] == pytest.approx(1.0)


def test_size_cdf_log2_bins(two):
    got = S.size_cdf(two, 1, bins="log2")
    df = _files(two, 1)
    df["bin"] = [0 if s == 0 else 1 << (int(s).bit_length() - 1) for s in df["size"]]
    want = _naive_cdf(df, "bin")
    assert list(got.size_bytes) == list(want.index)
    np.testing.assert_allclose(got.cdf_bytes, want.cdf_bytes)
    # the 60 new 4 KiB files all land in the [4096, 8192) bin
    assert got.set_index("size_bytes").files[4096] >= 60


@pytest.mark.parametrize("kind", ["mtime", "atime"])
def test_age_cdf_equals_naive(two, kind):
    now = dt.datetime(2026, 12, 1)
    got = S.age_cdf(two, 0, kind=kind, now=now)
    df = _files(two, 0)
    df["age"] = np.floor((now - df[kind]).dt.total_seconds()).astype(int)
    want = _naive_cdf(df, "age")
    assert list(got.age_s) == list(want.index)
    np.testing.assert_allclose(got.cdf_files, want.cdf_files)
    np.testing.assert_allclose(got.cdf_bytes, want.cdf_bytes)
    np.testing.assert_allclose(got.age_days, got.age_s / 86400)


def test_age_cdf_default_now(two):
    # a find listing with a header: now is taken_at; stat output has none: latest time stamp
    assert S.age_cdf(two, 0).evidence["now"] == dt.datetime(2026, 11, 23, 2, 22, 18)
    stat = S.age_cdf(two, 2, kind="atime")
    df = _files(two, 2)
    assert stat.evidence["now"] == df[["atime", "mtime", "ctime"]].max().max()
    assert stat.age_s.min() >= 0
    aware = dt.datetime(2020, 1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert S.age_cdf(two, 2, now=aware).evidence["now"] == dt.datetime(2020, 1, 1)


def test_growth_total_facts(two):
    g = S.growth(two, 0, 1)
    assert len(g) == 1
    row = g.iloc[0]
    assert (row.files_before, row.files_after, row.d_files) == (172, 230, 58)
    assert row.new_files == 61 and row.deleted_files == 3
    assert row.new_bytes == 60 * 4096 + 2 * 1024 * 1024


def test_growth_top_dir_names_the_contributors(two):
    result = S.growth(two, 0, 1, by="top_dir")
    g = result.set_index("group")  # a derived frame: the evidence stays on the result
    # the EarthScience pattern: most new files from one directory, most new bytes elsewhere
    assert result.evidence["largest_by_files"] == "results"
    assert result.evidence["largest_by_bytes"] == "platform"
    assert g.loc["results", "new_files"] == 60 and g.loc["results", "d_bytes"] == 60 * 4096
    assert g.loc["platform", "d_bytes"] == 2 * 1024 * 1024
    assert g.loc["__pycache__", "deleted_files"] == 2
    assert g.loc["results", "share_files"] == pytest.approx(60 / 58)
    assert g.share_bytes.sum() == pytest.approx(1.0)
    assert g.loc["results", "largest_files"] and g.loc["platform", "largest_bytes"]


def test_growth_of_a_tree_against_itself_names_no_contributor(two):
    g = S.growth(two, 1, 1, by="top_dir")
    assert (g["d_files"] == 0).all() and (g["d_bytes"] == 0).all()
    assert not g["largest_files"].any() and not g["largest_bytes"].any()
    assert g.evidence["largest_by_files"] is None and g.evidence["largest_by_bytes"] is None


@pytest.mark.parametrize("by", ["total", "top_dir", "owner"])
def test_growth_equals_naive(two, by):
    def key(df):
        if by == "total":
            return pd.Series("total", index=df.index)
        if by == "owner":
            return df.uid.astype(str)
        rel = [p[len(r.rstrip("/")) + 1 :] for p, r in zip(df.path, df.root, strict=True)]
        return pd.Series([x.split("/")[0] if "/" in x else "." for x in rel], index=df.index)

    b, a = _files(two, 0), _files(two, 1)
    nb = b.groupby(key(b))["size"].agg(["size", "sum"])
    na = a.groupby(key(a))["size"].agg(["size", "sum"])
    want = na.join(nb, how="outer", suffixes=("_a", "_b")).fillna(0)
    got = S.growth(two, 0, 1, by=by).set_index("group").sort_index()
    want = want.sort_index()
    assert list(got.index) == list(want.index)
    np.testing.assert_array_equal(got.d_files, want.size_a - want.size_b)
    np.testing.assert_array_equal(got.d_bytes, want.sum_a - want.sum_b)


def test_parameters_are_checked(two):
    with pytest.raises(ParameterError, match="snapshot_id"):
        S.size_cdf(two, 99)
    with pytest.raises(ParameterError, match="bins"):
        S.size_cdf(two, 0, bins="log10")
    with pytest.raises(ParameterError, match="kind"):
        S.age_cdf(two, 0, kind="ctime")
    with pytest.raises(ParameterError, match="by"):
        S.growth(two, 0, 1, by="project")
    with pytest.raises(ParameterError, match="after_id"):
        S.growth(two, 0, 7)


@pytest.mark.parametrize("bad", [["log2"], {"log2": 1}, np.array(["log2", "exact"])])
def test_a_choice_of_any_type_is_a_parameter_error(two, bad):
    # a list or dict used to reach `bad not in dict` (TypeError: unhashable), an array
    # an ambiguous truth value; every choice goes through _validation.check_choice
    with pytest.raises(ParameterError, match="bins"):
        S.size_cdf(two, 0, bins=bad)
    with pytest.raises(ParameterError, match="kind"):
        S.age_cdf(two, 0, kind=bad)
    with pytest.raises(ParameterError, match="by"):
        S.growth(two, 0, 1, by=bad)
