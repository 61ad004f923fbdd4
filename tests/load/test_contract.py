"""One contract, every loader (xarray's backend base-test idea).

For each registered kind and each of its bundled real fixtures: the kind's
sniffer claims it and no other kind's does; every yielded frame passes the
schema; loading twice is a no-op; the input cut at random bytes, or garbage,
raises InputError and leaves the database file byte-for-byte as it was.
"""

from __future__ import annotations

import hashlib
import random

import pytest

import iochar
from iochar import load, schema
from iochar.datasets import DEMO_PATTERNS, data_dir
from iochar.errors import InputError
from iochar.load._text import read_head


def _fixtures() -> list[tuple[str, object]]:
    out = []
    root = data_dir()
    for pattern, kind in DEMO_PATTERNS:
        for path in sorted(root.glob(pattern)):
            out.append(pytest.param(kind, path, id=f"{kind}:{path.name}"))
    return out


FIXTURES = _fixtures()


def test_every_kind_has_a_real_fixture():
    kinds = {p.values[0] for p in FIXTURES}
    assert set(load.kinds()) <= kinds, set(load.kinds()) - kinds


@pytest.mark.parametrize(("kind", "path"), FIXTURES)
def test_sniffs_own_fixture_only(kind, path):
    head = read_head(path)
    claims = [k for k in load.kinds() if load.get_loader(k).sniff(head)]
    assert claims == [kind]


@pytest.mark.parametrize(("kind", "path"), FIXTURES)
def test_frames_follow_the_contract(kind, path):
    n = 0
    for chunk in load.parse(path, kind, chunk_rows=500):
        for table, frame in chunk.tables.items():
            schema.check_frame(table, frame)
            n += frame.num_rows
    assert n > 0


@pytest.mark.parametrize(("kind", "path"), FIXTURES)
def test_loading_twice_changes_nothing(kind, path, store):
    first = store.load(path)
    assert first.kind == kind and first.total_rows > 0
    before = store.row_counts()
    again = store.load(path)
    assert again.duplicate and store.row_counts() == before


def _digest(p) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.parametrize(("kind", "path"), FIXTURES)
def test_cut_or_garbage_input_is_refused_atomically(kind, path, tmp_path, global_random_seed):
    dbp = tmp_path / "x.duckdb"
    with iochar.connect(str(dbp)) as db:
        db.load(b"op,t_start\nread,0\n", kind="trace-csv")
    before = _digest(dbp)
    raw = path.read_bytes()
    rng = random.Random(global_random_seed)
    # a cut right after a newline leaves a valid, shorter text file: not a cut
    cuts = [c for c in range(1, len(raw)) if raw[c - 1 : c] != b"\n"]
    cuts = sorted(rng.sample(cuts, 6))
    bad = tmp_path / path.name
    for cut in cuts:
        bad.write_bytes(raw[:cut])
        with iochar.connect(str(dbp)) as db:
            try:
                db.load(bad, kind=kind)
            except InputError as exc:
                assert str(exc).startswith(str(bad)), str(exc)
            else:
                pytest.fail(f"{kind}: cut at byte {cut} of {len(raw)} loaded without error")
        assert _digest(dbp) == before
    bad.write_bytes(bytes(rng.randrange(256) for _ in range(4096)))
    with iochar.connect(str(dbp)) as db, pytest.raises(InputError):
        db.load(bad, kind=kind)
    assert _digest(dbp) == before
