"""classify's numbered-series pattern in Arrow kernels against the one-path rule."""

from __future__ import annotations

import re

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from iochar.analyze.classify import _series_patterns


def _series_pattern(path: str) -> str:
    """The one-path rule: the file name's ASCII digit runs as ``#``, its folder kept
    as is; '' when the name has no digit."""
    head, _, name = path.rpartition("/")
    if not re.search(r"[0-9]", name):
        return ""
    return f"{head}/{re.sub(r'[0-9]+', '#', name)}"


parts = st.text(alphabet="ab/._-0123456789é٣ ", max_size=12)


@given(st.lists(st.one_of(st.none(), parts), max_size=30))
def test_vectorized_equals_the_one_path_rule(paths):
    got = _series_patterns(pd.Series(paths, dtype=object)).tolist()
    assert got == [_series_pattern(p or "") for p in paths]


def test_folders_keep_their_digits():
    got = _series_patterns(pd.Series(["/run2/ckpt.012", "/run2/out", "ckpt7"])).tolist()
    assert got == ["/run2/ckpt.#", "", "/ckpt#"]
