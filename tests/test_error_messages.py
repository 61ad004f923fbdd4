"""The wording of errors: compiler style, bounded quotes, pickling."""

from __future__ import annotations

import pickle

import pytest

from iochar.errors import (
    InputError,
    IocharError,
    MissingDependencyError,
    ParameterError,
    UnknownKindError,
)


def test_input_error_format():
    e = InputError("iostat.txt", 1423, "14 fields for device 'sda'", "x" * 200, kind="iostat")
    s = str(e)
    assert s.startswith("iostat.txt:1423: expected 14 fields for device 'sda', got 'xxx")
    assert s.endswith("...' [kind=iostat]")
    assert len(s) < 160
    assert isinstance(e, ValueError) and isinstance(e, IocharError)


def test_input_error_record_unit():
    e = InputError("a.darshan", 7, "a complete POSIX record", unit="record", kind="darshan")
    assert str(e) == "a.darshan: record 7: expected a complete POSIX record [kind=darshan]"


@pytest.mark.parametrize(
    "err",
    [
        InputError("f", 3, "x", "y", kind="k"),
        UnknownKindError("f", ["a", "b"]),
        ParameterError("n", "f", "an int >= 1", 0),
        MissingDependencyError("darshan", "darshan", "reading Darshan logs"),
    ],
)
def test_errors_pickle(err):
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err) and str(back) == str(err)


def test_unknown_kind_lists_kinds():
    e = UnknownKindError("blob.bin", ["strace", "trace-csv"])
    assert "strace, trace-csv" in str(e) and "kind=" in str(e)
    assert isinstance(e, InputError)


def test_parameter_and_dependency_messages():
    assert str(ParameterError("tolerance", "repeated_jobs", "a float in [0, 1]", 2.0)) == (
        "The 'tolerance' parameter of repeated_jobs must be a float in [0, 1]. Got 2.0 instead."
    )
    m = MissingDependencyError("darshan", "darshan", "reading Darshan logs")
    assert "pip install 'iochar[darshan]'" in str(m) and isinstance(m, ImportError)
