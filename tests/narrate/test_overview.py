"""narrate.overview: every number in the sentences comes from the tables."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import iochar
from iochar import narrate
from iochar.analyze import characterize, inventory
from iochar.narrate import overview
from tests.narrate import shown

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def db():
    store = iochar.connect(":memory:")
    for rel in (
        "lmt/lmtdb-reset-ost.csv",
        "strace/ckpt_tt.strace",
        "strace/workers_o.strace",
        "trace/ior-hdf5-dxt-posix.csv",
        "snapshot/tornado-before.find",
    ):
        store.load(DATA / rel)
    yield store
    store.close()


def test_loaded_names_each_kind_and_count(db):
    inv = inventory.inventory(db)
    text = overview.loaded(inv)
    assert text.startswith(f"This database holds {int(inv['sources'].sum())} inputs")
    assert "2 strace captures" in text and "1 LMT export" in text and "1 trace CSV file" in text
    ops = int(inv["ops"].sum())
    assert f"{ops:,} traced operations" in text
    assert "trace-csv carry relative times only" in text


def test_jobs_busiest_job_and_shares(db):
    table = characterize.app_table(db)
    text = shown(overview.jobs(table))
    big = table.loc[table["io_bytes"].idxmax()]
    share = big["io_bytes"] / table["io_bytes"].sum()
    app = f" ({big['app']})" if isinstance(big["app"], str) else ""  # a job with no name
    assert f"The busiest is job {int(big['job_id'])}{app}," in text
    assert narrate.fmt_pct(share) in text
    assert text.startswith(f"{len(table)} jobs moved {narrate.fmt_bytes(table['io_bytes'].sum())}")
    # a different table gives a different busiest job
    rest = table[table["job_id"] != big["job_id"]]
    assert f"job {int(big['job_id'])} " not in overview.jobs(rest)


def test_devices_reports_the_flagged_restart(db):
    cov = inventory.coverage(db)
    text = overview.devices(cov)
    flagged = int(cov["flagged"].sum())
    assert flagged == 1  # the OST restart in the LMT series
    assert "1 sample is flagged as a counter reset, wrap or gap (in snx11168-OST00ad)" in text
    n = cov.query("table == 'counters'")["target"].nunique()
    assert re.search(rf"Counters cover {n} targets? from 1 input", text)
    assert "1 snapshot of 1 tree" in text


def test_empty_inputs_say_so():
    with iochar.connect(":memory:") as empty:
        assert "empty" in overview.loaded(inventory.inventory(empty))
        assert overview.devices(inventory.coverage(empty)).startswith("No device")
        assert overview.jobs(characterize.app_table(empty)).startswith("No jobs")
