"""Calibration input: the fio JSON and IOR text parsers (iochar.load.bench)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from iochar.analyze.fsu import compare_bandwidth, fit_cost_model
from iochar.capture.fio import calibration_sizes
from iochar.errors import InputError, ParameterError
from iochar.load.bench import CALIBRATION_COLUMNS, read_calibration, read_fio_json, read_ior

DATA = Path(__file__).resolve().parents[2] / "data"
FIO = DATA / "fio"
IOR = DATA / "ior"
MULTIJOB = FIO / "fio-3.33-multijob-vda-ext4.json"
SWEEP = FIO / "iochar-calibrate-vda-ext4.json"
IOR_OLD = IOR / "ior-3.3.0-default-ec2.txt"
IOR_NEW = IOR / "ior-4.0.0rc2-fsx-lustre-t64m.txt"


# --------------------------------------------------------------------------- fio JSON


def test_fio_multijob_fixture_both_sides_and_groups():
    raw = json.loads(MULTIJOB.read_text())
    df = read_fio_json(MULTIJOB)
    assert list(df.columns) == list(CALIBRATION_COLUMNS)
    mixed = df[df["job"] == "mixed-4k"].set_index("op")
    assert set(mixed.index) == {"read", "write"}  # randrw: both sides are runs
    assert (mixed["size_bytes"] == 4096).all() and mixed["random"].all() and mixed["direct"].all()
    j0 = raw["jobs"][0]
    assert mixed.loc["read", "ios"] == j0["read"]["total_ios"]
    assert mixed.loc["write", "seconds"] == j0["write"]["runtime"] / 1000
    # numjobs=2 without group_reporting: two job entries of one group, combined
    pair = df[df["size_bytes"] == 65536]
    assert len(pair) == 1 and pair["job"].iloc[0] == "pair-64k+pair-64k"
    jobs = [j for j in raw["jobs"] if j["jobname"] == "pair-64k"]
    assert pair["ios"].iloc[0] == sum(j["write"]["total_ios"] for j in jobs)
    assert pair["seconds"].iloc[0] == max(j["write"]["runtime"] for j in jobs) / 1000
    split = read_fio_json(MULTIJOB, combine_groups=False)
    assert (split["size_bytes"] == 65536).sum() == 2 and len(split) == len(df) + 1
    assert df["tool_version"].unique().tolist() == ["fio-3.33"]
    # each row names the line of its job in the file
    lines = MULTIJOB.read_text().splitlines()
    for row in df.itertuples():
        assert '"jobname"' in lines[row.line - 1]


def test_fio_calibration_fixture_fits():
    """The committed run of ``iochar calibrate`` on this project's machine (SOURCE.md)."""
    df = read_fio_json(SWEEP)
    assert sorted(df["size_bytes"].unique()) == calibration_sizes()
    assert (df.groupby("size_bytes")["op"].nunique() == 2).all()
    assert df["random"].all()
    m = fit_cost_model(df)
    c = m.coefficients()
    assert (c["latency_s"] > 0).all() and (c["s_per_byte"] > 0).all()
    cmp = compare_bandwidth(m, df)
    assert np.isfinite(cmp["error"]).all() and len(cmp) == 12


def test_several_documents_and_leading_notes(tmp_path):
    text = MULTIJOB.read_text()
    p = tmp_path / "two.json"
    p.write_text("note: both iodepth >= 1 and synchronous I/O engine are selected\n" + text + text)
    df = read_fio_json(p)
    assert len(df) == 2 * len(read_fio_json(MULTIJOB))


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda d: d["jobs"][1]["write"].pop("runtime"), r"jobs\[1\]\.write\.runtime"),
        (lambda d: d["jobs"][0]["read"].__setitem__("total_ios", "many"), r"jobs\[0\]\.read"),
        (lambda d: d["jobs"][3].__setitem__("error", 22), r"without error, got 'error=22'"),
        (lambda d: d.pop("jobs"), "a 'jobs' list"),
        (lambda d: d["jobs"][0]["read"].__setitem__("runtime", 0), "runtime and .io_bytes > 0"),
    ],
)
def test_bad_fio_json_names_file_line_and_field(tmp_path, mutate, match):
    d = json.loads(MULTIJOB.read_text())
    mutate(d)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d, indent=2))
    with pytest.raises(InputError, match=match) as err:
        read_fio_json(p)
    assert str(err.value).startswith(str(p))


def test_fio_text_that_is_not_json(tmp_path):
    p = tmp_path / "cut.json"
    p.write_text(MULTIJOB.read_text()[:3000])
    with pytest.raises(InputError, match=r"cut\.json:\d+: expected valid fio JSON"):
        read_fio_json(p)
    p.write_text("fio-3.33\nStarting 1 process\n")
    with pytest.raises(InputError, match="a line starting with '{'"):
        read_fio_json(p)
    with pytest.raises(InputError, match="UTF-8"):
        read_fio_json(b'{"jobs": []}\n\xff\xfe')


# --------------------------------------------------------------------------- IOR text


def test_ior_new_layout_with_repetitions():
    df = read_ior(IOR_NEW)
    assert len(df) == 10 and df["op"].tolist() == ["write", "read"] * 5
    assert df["iteration"].tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert (df["size_bytes"] == 64 * 2**20).all()  # "xfersize : 64 MiB"
    assert (df["bytes"] == 16 * 256 * 2**20).all()  # 16 tasks x 256 MiB x 1 segment
    assert (df["ios"] == 64).all()
    assert df["random"].all() and not df["direct"].any()  # -z, no -B / --posix.odirect
    assert df["tool_version"].iloc[0] == "IOR-4.0.0rc2+dev"
    # seconds = bytes / bw: IOR's own total(s) to its printed precision
    total = [5.42, 9.68, 0.271581, 15.61, 0.269041, 19.04, 0.269378, 18.15, 0.267534, 18.64]
    np.testing.assert_allclose(df["seconds"], total, rtol=3e-3)
    assert df["line"].iloc[0] == 33


def test_ior_old_layout_default_run():
    df = read_ior(IOR_OLD)
    assert df["op"].tolist() == ["write", "read"]
    assert (df["size_bytes"] == 262144).all() and (df["ios"] == 4).all()
    assert df["seconds"].iloc[0] == pytest.approx(0.000288, rel=1e-3)
    assert df["random"].tolist() == [False, False]
    assert df["direct"].tolist() == [False, False]  # "Command line : ior"


def test_read_calibration_sniffs():
    assert read_calibration(IOR_NEW)["tool"].unique().tolist() == ["ior"]
    assert read_calibration(MULTIJOB)["tool"].unique().tolist() == ["fio"]
    with pytest.raises(InputError, match="fio JSON or IOR"):
        read_calibration(b"hello\n")
    with pytest.raises(ParameterError, match="'kind' parameter"):
        read_calibration(IOR_NEW, kind="darshan")


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (
            lambda t: t.replace("0.279862   5.42       0", "0.279862   5.42"),
            r":33: expected 11 fields",
        ),
        (lambda t: t.replace("write     15082 ", "write     fast! "), r":35: expected a number"),
        (lambda t: t.replace("total(s)", "sum(s)"), r":31: expected a Results header"),
        (lambda t: t.split("Results:")[0], "an IOR Results table"),
        (lambda t: "", "empty input"),
    ],
)
def test_bad_ior_names_file_and_line(edit, match):
    text = edit(IOR_NEW.read_text())
    with pytest.raises(InputError, match=match):
        read_ior(text.encode())
