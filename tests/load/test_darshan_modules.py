"""analyze.darshan_modules and narrate.darshan: each log's modules and Darshan's flags.

Logs from the darshan-logs collection (``data/darshan/SOURCE.md``) loaded into a store;
the modules, record counts and incomplete flags must be the ones pydarshan reads.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

import iochar
from iochar.analyze import darshan_modules
from iochar.narrate import darshan as narrate_darshan

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("darshan") is None, reason="the darshan package is missing"
)

LOGS = Path(__file__).resolve().parents[2] / "data" / "darshan" / "darshan-logs"
LOADED = [
    LOGS / "partial_data_stdio/partial_data_stdio.darshan",
    LOGS / "imbalanced_io/imbalanced-io.darshan",
    LOGS / "release_logs/mpi-io-test-x86_64-3.0.0.darshan",
    LOGS / "ior_daos/snyder_ior-DFS_id4681120-53379_5-8-15060-3270540599978592154_1.darshan",
]


@pytest.fixture(scope="module")
def db():
    store = iochar.connect(":memory:")
    for p in LOADED:
        store.load(p)
    store.load(b"op,t_start,size\nwrite,0.5,4096\n", kind="trace-csv")  # not a Darshan log
    yield store
    store.close()


def test_one_row_per_log_and_module_as_pydarshan_reads_them(db):
    import darshan

    table = darshan_modules.modules(db)
    assert list(table.columns) == list(darshan_modules.MODULE_COLUMNS)
    for source_id, p in enumerate(LOADED):
        report = darshan.DarshanReport(str(p), read_all=True)
        rows = table[table.source_id == source_id].set_index("module")
        assert set(rows.index) == set(report.modules)
        for module, info in report.modules.items():
            assert rows.loc[module, "incomplete"] == bool(info["partial_flag"]), module
            assert rows.loc[module, "compressed_bytes"] == info["len"], module
            assert rows.loc[module, "module_version"] == info["ver"], module
        assert (rows["log_format"] == report.metadata["job"]["log_ver"]).all()
        for module in ("POSIX", "STDIO", "DFS"):
            if module in report.modules:
                assert rows.loc[module, "records"] == len(report.records[module]), module


def test_incomplete_lists_the_flagged_modules(db):
    flagged = darshan_modules.incomplete(db)
    got = sorted(zip(flagged["source"], flagged["module"], strict=True))
    assert got == [("imbalanced-io.darshan", "POSIX"), ("partial_data_stdio.darshan", "STDIO")]
    # the STDIO test opened more than 1024 files; Darshan kept fewer records than that
    stdio = flagged[flagged.module == "STDIO"].iloc[0]
    assert stdio["records"] < 1024 and stdio["kept_in"] == "file_stats"


def test_kept_in_tells_analyzed_from_raw(db):
    table = darshan_modules.modules(db)
    kept = dict(zip(table["module"], table["kept_in"], strict=True))
    assert kept["POSIX"] == kept["MPI-IO"] == kept["STDIO"] == "file_stats"
    assert kept["DFS"] == kept["DAOS"] == kept["HEATMAP"] == kept["LUSTRE"] == "module_counters"


def test_sentences_name_logs_modules_and_counts(db):
    table = darshan_modules.modules(db)
    text = narrate_darshan.incomplete(table)
    assert text.startswith("2 of 4 Darshan logs have modules that Darshan flagged incomplete")
    assert "`partial_data_stdio.darshan` (job 0): STDIO (1,022 records kept)" in text
    assert "`imbalanced-io.darshan` (job 1): POSIX (2,014 records kept)" in text
    raw = narrate_darshan.raw_modules(table)
    assert "DAOS (1 log)" in raw and "LUSTRE (1 log)" in raw and "POSIX" not in raw
    none = table[~table["incomplete"]]
    assert narrate_darshan.incomplete(none) == (
        "No Darshan log here has a module Darshan flagged incomplete."
    )


def test_empty_store():
    store = iochar.connect(":memory:")
    table = darshan_modules.modules(store)
    assert table.empty and list(table.columns) == list(darshan_modules.MODULE_COLUMNS)
    assert narrate_darshan.raw_modules(pd.DataFrame(table)) == ""
