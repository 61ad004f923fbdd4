"""Calibration by running fio here (iochar.capture.fio) and the calibrate command."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from iochar.analyze.fsu import fit_cost_model
from iochar.capture import fio as calibrate
from iochar.capture.fio import calibration_sizes, run_fio
from iochar.cli import main
from iochar.errors import IocharError, ParameterError
from iochar.load.bench import read_fio_json

SWEEP = Path(__file__).resolve().parents[2] / "data" / "fio" / "iochar-calibrate-vda-ext4.json"
IOR_NEW = SWEEP.parents[1] / "ior" / "ior-4.0.0rc2-fsx-lustre-t64m.txt"
requires_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


# --------------------------------------------------------------------------- running fio


def test_calibration_sizes():
    assert calibration_sizes() == [4096, 16384, 65536, 262144, 1 << 20, 4 << 20]
    assert calibration_sizes(factor=2) == [4096 << k for k in range(11)]
    with pytest.raises(ParameterError, match="factor"):
        calibration_sizes(factor=1)


def test_run_fio_without_fio(tmp_path):
    with pytest.raises(IocharError, match="needs fio, which is not installed"):
        run_fio(tmp_path, fio="no-such-fio-binary")
    with pytest.raises(ParameterError, match="existing directory"):
        run_fio(tmp_path / "missing")


@requires_fio
def test_run_fio_here(tmp_path):
    out = tmp_path / "raw.json"
    run = run_fio(
        tmp_path, sizes=[4096, 65536, 1 << 20], runtime_s=0.15, file_bytes=8 << 20, json_path=out
    )
    t = run.table
    assert len(t) == 6 and set(t["op"]) == {"read", "write"}
    assert sorted(t["size_bytes"].unique()) == [4096, 65536, 1 << 20]
    assert t["random"].all() and (t["direct"] == run.direct).all()
    assert (t["ios"] > 0).all() and (t["seconds"] > 0.05).all()
    again = read_fio_json(out)  # the saved raw output parses to the same runs
    np.testing.assert_allclose(again["ios"], t["ios"])
    assert not list(tmp_path.glob("iochar-calibrate-*.dat"))  # data file removed
    text = "\n".join(run.describe())
    assert run.location["fstype"] in text and "random offsets" in text
    assert ("direct I/O (O_DIRECT)" in text) == run.direct
    fit_cost_model(t)


@requires_fio
def test_run_fio_falls_back_when_o_direct_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(calibrate, "_direct_ok", lambda d: (False, "open(O_DIRECT): EINVAL"))
    run = run_fio(tmp_path, sizes=[4096, 65536], runtime_s=0.1, file_bytes=1 << 20)
    assert not run.direct and not run.table["direct"].any()
    assert "fell back to buffered I/O" in run.notes[0] and "EINVAL" in run.notes[0]
    assert "end_fsync=1" in run.jobfile


# --------------------------------------------------------------------------- the command


def test_cli_calibrate_help_and_from_files(capsys):
    with pytest.raises(SystemExit):
        main(["calibrate", "--help"])
    assert "4 KiB to 4 MiB" in capsys.readouterr().out
    assert main(["calibrate", "--from", str(SWEEP)]) == 0
    out = capsys.readouterr().out
    assert "Table I" in out and "predicted (Eq. 6) vs measured" in out and "mean |error|" in out


def test_cli_calibrate_errors_are_one_line(tmp_path, capsys, monkeypatch):
    assert main(["calibrate"]) == 2
    assert capsys.readouterr().err.startswith("iochar: error: calibrate needs DIR")
    monkeypatch.setenv("PATH", str(tmp_path))  # no fio on PATH
    assert main(["calibrate", str(tmp_path), "--quick"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fio, which is not installed" in err[0]
    bad = tmp_path / "one-size.txt"
    bad.write_text(IOR_NEW.read_text())
    assert main(["calibrate", "--from", str(bad)]) == 2  # one transfer size: no fit
    assert "two or more distinct transfer sizes" in capsys.readouterr().err


@requires_fio
def test_cli_calibrate_runs_fio(tmp_path, capsys):
    rc = main(["calibrate", str(tmp_path), "--runtime", "0.1", "--file-mib", "16"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "random offsets in a 16 MiB file" in out and "4 MiB" in out
    assert (tmp_path / "iochar-calibrate.json").exists()
    assert out.count(" write ") + out.count("  write") >= 2
