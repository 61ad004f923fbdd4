"""The former helpers of :mod:`iochar.narrate` that are not prose still work.

Each is a thin forward to its new place in :mod:`iochar.analyze` or
:mod:`iochar.plot.tables`: it returns what the new function returns and warns, for
its caller, with a DeprecationWarning naming the new place.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pandas as pd
import pytest

from iochar.analyze import characterize, classify, fileio, fsu
from iochar.analyze import snapshots as S
from iochar.narrate import apps, snapshots, system
from iochar.plot import tables

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture
def traced(store):
    store.load(DATA / "strace" / "ckpt_tt.strace")
    facts = fileio.file_io(store)
    return {
        "t1": characterize.app_table(facts),
        "t2": characterize.rates_table(facts),
        "labels": classify.classify(facts),
    }


def _same(got, want) -> None:
    if isinstance(want, pd.DataFrame):
        pd.testing.assert_frame_equal(got, want)
    elif isinstance(want, dict):
        assert got.keys() == want.keys()
        for k in want:
            _same(got[k], want[k])
    else:
        assert got == want


def _forwards(old, new, *args, **kwargs):
    """Call ``old``: it warns for this file, naming ``new``, and gives what ``new`` gives."""
    where = f"{new.__module__}.{new.__name__}"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = old(*args, **kwargs)
    dep = [w for w in seen if issubclass(w.category, DeprecationWarning)]
    assert len(dep) == 1, [str(w.message) for w in seen]
    msg = str(dep[0].message)
    assert msg.startswith(f"{old.__module__}.{old.__name__} moved to ") and where in msg, msg
    assert dep[0].filename == __file__  # the caller's line, not the forward's
    return got


def test_apps_helpers_forward(traced):
    t1, t2, labels = traced["t1"], traced["t2"], traced["labels"]
    job = characterize.pick_job(t1)
    _same(_forwards(apps.pick_job, characterize.pick_job, t1), job)
    _same(_forwards(apps.pick_job, characterize.pick_job, t1, 5), 5)
    _same(
        _forwards(apps.rate_bin_s, characterize.rate_bin_s, t1, job),
        characterize.rate_bin_s(t1, job),
    )
    _same(_forwards(apps.table1_view, tables.table1_view, t1, top=1), tables.table1_view(t1, 1))
    _same(_forwards(apps.table2_view, tables.table2_view, t2), tables.table2_view(t2))
    want = tables.class_view(labels, job)
    _same(_forwards(apps.class_view, tables.class_view, labels, job), want)


def test_by_app_is_the_means_in_the_papers_units(traced):
    t1 = traced["t1"]
    with pytest.warns(DeprecationWarning, match=re.escape("call app_means_view(app_means(table))")):
        got = apps.by_app(t1)
    _same(got, tables.app_means_view(characterize.app_means(t1)))
    assert list(got.columns) == [
        "app",
        "jobs",
        "mean run time [s]",
        "mean files",
        "mean I/O done [MiB]",
        "mean avg I/O [KiB]",
        "mean MiB/s",
        "total I/O done [MiB]",
    ]


def test_system_helpers_forward():
    model = _forwards(system.cost_model, fsu.cost_model, "")
    assert model.source_ == fsu.table_i_model().source_
    _same(model.coefficients(), fsu.table_i_model().coefficients())
    unused = pd.DataFrame({"fsu_pct": [float("nan")]})
    got = _forwards(system.load_ratio, fsu.load_ratio_or_empty, unused, model)
    _same(got, fsu.load_ratio_or_empty(unused, model))
    assert got.empty


def test_snapshot_helpers_forward(store):
    for name in ("tornado-before.find", "tornado-after.find"):
        store.load(DATA / "snapshot" / name)
    sel = _forwards(snapshots.choose, S.choose, store)
    want = S.choose(store)
    assert (sel.snapshot_id, sel.before_id, sel.after_id) == (
        want.snapshot_id,
        want.before_id,
        want.after_id,
    )
    assert sel.has_pair
    growth = _forwards(snapshots.growth_tables, S.growth_tables, store, sel)
    _same(growth, S.growth_tables(store, sel))
    assert snapshots.Selection is S.Selection  # the prose takes the same selection
