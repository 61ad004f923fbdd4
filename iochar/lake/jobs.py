"""Per-job analyses as Dask tasks over a lake; their results written back into it.

Per-job analyses (Carns et al. 2011 section 2.4 job metrics, Table VI; the file I/O
facts and the required / checkpoint / staging classification of Miller & Katz
1991; insight rules) depend on one job's rows only, so the lake is cut into slices
of inputs (``source_id`` ranges, whole inputs, hence whole jobs) and each Dask task
runs the ordinary analysis functions on a :class:`~iochar.lake.view.LakeStore`
restricted to its slice (ids stay those of the whole lake). Each task writes one
Parquet file per analysis, ``DIR/results/<analysis>/part-<lo>-<hi>.parquet``
(temporary name, then ``os.replace``); :func:`read_results` reads them back with
DuckDB. Cross-job analyses (Table IV variance over repeated jobs, FSU over a year
of OST counters) run in DuckDB over the whole lake: open it with
``iochar.connect(lake=DIR)`` and call them as on a database.

Insight rules that compare a job with others (a population) see only the jobs of
their slice here; run them on the whole lake when that matters.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa

from iochar.lake import layout
from iochar.lake.write import _write_atomic

__all__ = ["ANALYSES", "analyze_jobs", "read_results"]

#: The per-job analyses :func:`analyze_jobs` runs, by result name.
ANALYSES = ("job_metrics", "file_io", "classify", "insights")


def _frame(name: str, store) -> pd.DataFrame:
    if name == "job_metrics":
        from iochar.analyze.jobs import job_metrics

        return job_metrics(store).jobs
    if name == "file_io":
        from iochar.analyze.fileio import file_io

        return file_io(store).files
    if name == "classify":
        from iochar.analyze.classify import classify

        return classify(store)
    if name == "insights":
        from iochar.analyze import insights

        return pd.DataFrame(insights.run(store))
    raise ValueError(name)


def _jsonable(df: pd.DataFrame) -> pd.DataFrame:
    """Object columns of dicts or lists (evidence) as JSON text, for Parquet."""
    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object and out[c].map(lambda v: isinstance(v, (dict, list))).any():
            out[c] = out[c].map(lambda v: json.dumps(v, default=str) if v is not None else None)
    return out


def _run_slice(lake: str, lo: int, hi: int, names: tuple[str, ...]) -> dict[str, int]:
    """Dask task: the analyses of inputs ``lo``..``hi``; rows written per analysis."""
    from iochar.lake.view import LakeStore

    store = LakeStore(lake, sources=(lo, hi))
    done = {}
    try:
        for name in names:
            df = _jsonable(_frame(name, store))
            path = Path(lake) / "results" / name / layout.part_name(lo, hi)
            _write_atomic(pa.Table.from_pandas(df, preserve_index=False), path)
            done[name] = len(df)
    finally:
        store.close()
    return done


def analyze_jobs(
    lake: str | os.PathLike[str],
    client,
    *,
    analyses: tuple[str, ...] = ANALYSES,
    inputs_per_task: int = 64,
) -> dict[str, int]:
    """Run per-job analyses over every committed input of the lake as Dask tasks.

    Parameters
    ----------
    lake : path
        The lake.
    client : distributed.Client
        Where the tasks run.
    analyses : tuple of str
        Names from :data:`ANALYSES`.
    inputs_per_task : int, default 64
        Inputs per slice (task).

    Returns
    -------
    dict of str to int
        Result rows per analysis.
    """
    import distributed

    lake = os.fspath(lake)
    bad = set(analyses) - set(ANALYSES)
    if bad:
        from iochar.errors import ParameterError

        raise ParameterError("analyses", "analyze_jobs", f"names from {ANALYSES}", sorted(bad))
    from iochar.lake.view import LakeStore

    with LakeStore(lake) as store:
        ids = [r[0] for r in store.sql("SELECT source_id FROM sources ORDER BY 1").fetchall()]
    for name in analyses:  # results of an earlier run are replaced whole
        d = Path(lake) / "results" / name
        if d.is_dir():
            for p in d.glob("*.parquet"):
                p.unlink()
    slices = [(ids[i], ids[min(i + inputs_per_task, len(ids)) - 1])
              for i in range(0, len(ids), inputs_per_task)]  # fmt: skip
    futures = [client.submit(_run_slice, lake, lo, hi, tuple(analyses), pure=False)
               for lo, hi in slices]  # fmt: skip
    total = dict.fromkeys(analyses, 0)
    for fut in distributed.as_completed(futures):
        for name, n in fut.result().items():
            total[name] += n
    return total


def read_results(lake: str | os.PathLike[str], name: str) -> pd.DataFrame:
    """The rows :func:`analyze_jobs` wrote for one analysis, as one DataFrame."""
    import duckdb

    files = sorted(str(p) for p in (Path(lake) / "results" / name).glob("part-*.parquet"))
    if not files:
        return pd.DataFrame()
    con = duckdb.connect(":memory:")
    try:
        return con.read_parquet(files, union_by_name=True).df()
    finally:
        con.close()
