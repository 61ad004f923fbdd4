"""Bad input for every loader: only InputError, and the database unchanged.

Each test starts from a real fixture in ``data/`` (see data/README.md for where each
came from) and mutates it the way fuzzing found problems: cuts at any byte, flipped
bytes, CRLF line ends and a UTF-8 BOM, numbers replaced by huge, negative or
non-finite ones, lines dropped or repeated. Whatever comes out, a load either
succeeds or raises :class:`~iochar.errors.InputError` (never another exception), and
after an InputError the row counts and the ``sources`` table are exactly as before.

Default runs are short (the 'ci' profile); ``IOCHAR_HYPOTHESIS_PROFILE=slow`` runs
many more examples of the same tests.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import iochar
from iochar.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "data"

#: kind -> fixtures the mutations start from (small real files of each layout).
FIXTURES: dict[str, list[str]] = {
    "strace": ["strace/ckpt_plain.strace", "strace/workers_stderr.strace"],
    "darshan": ["darshan/ior_hdf5_example.darshan", "darshan/sample-dxt-simple.darshan"],
    "iostat": ["iostat/vm-sysstat12.6.1-x-t.iostat", "iostat/vm-sysstat12.6.1-x-t.json"],
    "diskstats": ["diskstats/vm-linux6.18-3dev.diskstats"],
    "lmt": ["lmt/lmtdb-reset-ost.csv", "lmt/snx11025_2018-01-28-trimmed.sqlite3"],
    "brw_stats": ["brw_stats/ldiskfs-lctl-series.txt", "brw_stats/zfs-lustrefs-OST0000-series.txt"],
    "snapshot": [
        "snapshot/tornado-before.find",
        "snapshot/ubuntu-18.04-bin.stat",
        "snapshot/tornado-after.parquet",
    ],
}

_SLOW = os.environ.get("IOCHAR_HYPOTHESIS_PROFILE") == "slow"
#: Examples per kind: about 5 s a kind by default (the whole module well under 60 s).
_EXAMPLES = 400 if _SLOW else 25

#: Replacements for a number in the text: what fuzzing found slipping through.
_NUMBERS = [
    b"-5.00",
    b"-1",
    b"1e300",
    b"-1e300",
    b"inf",
    b"nan",
    b"9" * 26,  # a 26-digit pid or counter
    b"18446744073709551616",  # 2**64: one past a 64-bit counter
    b"18446744073709551615",  # 2**64 - 1: the largest 64-bit counter
    b"0",
    b"",
]

_NUMBER_RE = re.compile(rb"-?\d+(?:\.\d+)?")


def _read(rel: str) -> bytes:
    return (DATA / rel).read_bytes()


@st.composite
def mutated(draw, kind: str) -> bytes:
    """One fixture of ``kind``, mutated one to three times."""
    raw = bytearray(_read(draw(st.sampled_from(FIXTURES[kind]))))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["cut", "flip", "crlf", "bom", "number", "lines"]))
        if not raw:
            break
        if op == "cut":
            raw = raw[: draw(st.integers(0, len(raw) - 1))]
        elif op == "flip":
            for _ in range(draw(st.integers(1, 4))):
                i = draw(st.integers(0, len(raw) - 1))
                raw[i] = draw(st.integers(0, 255))
        elif op == "crlf":
            raw = bytearray(bytes(raw).replace(b"\n", b"\r\n"))
        elif op == "bom":
            raw = bytearray(b"\xef\xbb\xbf" + raw)
        elif op == "number":
            spots = [m.span() for m in _NUMBER_RE.finditer(raw[:200_000])]
            if spots:
                lo, hi = spots[draw(st.integers(0, len(spots) - 1))]
                raw[lo:hi] = draw(st.sampled_from(_NUMBERS))
        else:  # drop or repeat a line
            lines = bytes(raw).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            if draw(st.booleans()):
                del lines[i]
            else:
                lines.insert(i, lines[i])
            raw = bytearray(b"\n".join(lines))
    return bytes(raw)


def _state(db) -> tuple:
    return db.row_counts(), db.sql("SELECT * FROM sources ORDER BY source_id").fetchall()


def _check(kind: str, data: bytes, strict: bool, named: bool) -> None:
    db = iochar.connect(":memory:")
    try:
        db.load(b"op,t_start\nread,0\n", kind="trace-csv")  # something already there
        before = _state(db)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                db.load(data, kind=kind if named else None, strict=strict)
            except InputError as exc:
                assert exc.line is None or exc.line >= 0
                assert str(exc).startswith("<buffer>")
                # converted where it arose, not by the loaders' last-resort boundary
                # (iochar.load.parse), which cannot say where the problem is
                assert not exc.expected.startswith(f"a readable {kind} input"), str(exc)
                assert _state(db) == before
    finally:
        db.close()


_SETTINGS = settings(
    max_examples=_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("kind", sorted(FIXTURES))
def test_mutated_input_loads_or_raises_input_error(kind):
    @_SETTINGS
    @given(mutated(kind), st.booleans(), st.booleans())
    def run(data, strict, named):
        _check(kind, data, strict, named)

    run()


@pytest.mark.slow_hypothesis
@pytest.mark.skipif(not _SLOW, reason="IOCHAR_HYPOTHESIS_PROFILE=slow runs it")
@pytest.mark.parametrize("kind", sorted(FIXTURES))
def test_mutated_input_long_run(kind):
    @settings(_SETTINGS, max_examples=5000)
    @given(mutated(kind), st.booleans(), st.booleans())
    def run(data, strict, named):
        _check(kind, data, strict, named)

    run()
