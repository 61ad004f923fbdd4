"""classify's numbered-series pattern, vectorized, against a one-path-at-a-time reference."""

from __future__ import annotations

import re

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from iochar.analyze.classify import _series_patterns


def _reference(path: str) -> str:
    """``/d/ckpt.#`` for ``/d/ckpt.012``: the file name's digit runs as ``#``, or ''."""
    head, _, name = path.rpartition("/")
    if not re.search(r"[0-9]", name):
        return ""
    return f"{head}/{re.sub(r'[0-9]+', '#', name)}"


parts = st.text(alphabet="ab/._-0123456789é", max_size=12)


@given(st.lists(st.one_of(st.none(), parts), max_size=30))
def test_vectorized_equals_reference(paths):
    got = _series_patterns(pd.Series(paths, dtype=object)).tolist()
    assert got == [_reference(p or "") for p in paths]


def test_folders_keep_their_digits():
    got = _series_patterns(pd.Series(["/run2/ckpt.012", "/run2/out", "ckpt7"])).tolist()
    assert got == ["/run2/ckpt.#", "", "/ckpt#"]
