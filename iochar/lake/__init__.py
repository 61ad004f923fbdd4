"""Many inputs on Dask into a Parquet lake that every analysis reads (DESIGN.md).

- :func:`ingest` — parse inputs on a Dask cluster into ``DIR`` (``iochar ingest``);
- :class:`LakeStore` — a read-only :class:`iochar.Store` of DuckDB views over it
  (``iochar.connect(lake=DIR)``, ``--db DIR``);
- :func:`to_lake` / :func:`to_database` — a database into a lake and back
  (``iochar export --lake``);
- :func:`analyze_jobs` — per-job analyses as Dask tasks, results into the lake.

Layout and id rules: :mod:`iochar.lake.layout`; commit protocol:
:mod:`iochar.lake.manifest`.
"""

from __future__ import annotations

from iochar.lake.export import to_database, to_lake
from iochar.lake.ingest import IngestReport, cluster, ingest
from iochar.lake.jobs import analyze_jobs, read_results
from iochar.lake.view import LakeStore

__all__ = [
    "IngestReport",
    "LakeStore",
    "analyze_jobs",
    "cluster",
    "ingest",
    "read_results",
    "to_database",
    "to_lake",
]
