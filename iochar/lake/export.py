"""A database into a lake, and a lake into a database (``iochar export --lake DIR``).

Database -> lake: every input of the database becomes one committed input of the
lake, under one batch range (``part-<lo>-<hi>``, lo/hi its lowest and highest
``source_id``); ids become lake ids, ``(source_id << 32) + (id - the input's
lowest id)`` (:mod:`iochar.lake.layout`), partitioned by kind and month like an
ingest. The manifest is written last (:func:`iochar.lake.manifest.commit`).

Lake -> database: the lake's views (dense ids) inserted table by table into a new
database in one transaction, so the database holds exactly what the lake shows.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from iochar import schema
from iochar.errors import IocharError
from iochar.lake import layout, manifest
from iochar.lake.write import _write_atomic

__all__ = ["to_lake", "to_database"]

#: id column -> (table holding the ids, column): the input's lowest id is the base
_ID_HOME = {"job_id": "jobs", "file_id": "files", "snapshot_id": "snapshots"}

# SQL pieces below use identifiers from iochar.schema / layout only; values are bound
_SOURCE_OF_JOB = "(SELECT job_id, source_id FROM jobs)"


def _source_expr(table: str) -> str:
    col, shifted = layout.SOURCE_OF[table]
    if not shifted:
        return "t.source_id"
    if col == "job_id":
        return "(SELECT source_id FROM jobs j WHERE j.job_id = t.job_id)"
    return "(SELECT source_id FROM snapshots s WHERE s.snapshot_id = t.snapshot_id)"


def to_lake(store, lake: str | os.PathLike[str]) -> int:
    """Write every input of ``store`` into a new lake folder; returns inputs written.

    Raises
    ------
    IocharError
        When ``lake`` already holds inputs.
    """
    with manifest.Lock(lake):
        if manifest.committed(lake)[1] > 0:
            raise IocharError(f"the lake {os.fspath(lake)!r} already holds inputs")
        con = store.con
        srcs = con.sql("SELECT * FROM sources ORDER BY source_id").to_arrow_table()
        if srcs.num_rows == 0:
            raise IocharError("the database has no input to export")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _lake_src AS SELECT s.source_id, s.kind, "
            "coalesce(strftime(least(min(j.start_ts), min(c.ts), min(h.ts), min(n.taken_at)), "
            "'%Y-%m'), 'unknown') AS month FROM sources s "
            "LEFT JOIN jobs j USING (source_id) LEFT JOIN counters c USING (source_id) "
            "LEFT JOIN size_hist h USING (source_id) LEFT JOIN snapshots n USING (source_id) "
            "GROUP BY s.source_id, s.kind"
        )
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _lake_base AS SELECT s.source_id, "
            "(SELECT min(job_id) FROM jobs j WHERE j.source_id = s.source_id) AS job_id, "
            "(SELECT min(f.file_id) FROM files f JOIN jobs j USING (job_id) "
            " WHERE j.source_id = s.source_id) AS file_id, "
            "(SELECT min(snapshot_id) FROM snapshots n WHERE n.source_id = s.source_id) "
            " AS snapshot_id, "
            "(SELECT max(job_id) - min(job_id) + 1 FROM jobs j "
            " WHERE j.source_id = s.source_id) AS n_job_id, "
            "(SELECT max(f.file_id) - min(f.file_id) + 1 FROM files f JOIN jobs j USING (job_id) "
            " WHERE j.source_id = s.source_id) AS n_file_id, "
            "(SELECT max(snapshot_id) - min(snapshot_id) + 1 FROM snapshots n "
            " WHERE n.source_id = s.source_id) AS n_snapshot_id FROM sources s"
        )
        lo, hi = srcs.column("source_id")[0].as_py(), srcs.column("source_id")[-1].as_py()
        name = layout.part_name(lo, hi)
        for table in layout.tables():
            cols = [c.name for c in schema.TABLES[table]]
            ids = schema.ID_COLUMNS.get(table, ())
            sel = []
            for c in cols:
                if c in ids:
                    sel.append(
                        f'(src.source_id << {layout.ID_SHIFT}) + (t."{c}" - b."{c}") AS "{c}"'
                    )
                else:
                    sel.append(f't."{c}"')
            query = (
                f"SELECT {', '.join(sel)}, src.kind AS _k, src.month AS _m "
                f'FROM "{table}" t JOIN _lake_src src ON src.source_id = {_source_expr(table)} '
                "JOIN _lake_base b ON b.source_id = src.source_id"
            )
            data = con.sql(query).to_arrow_table()
            if data.num_rows == 0:
                continue
            keys = data.select(["_k", "_m"]).group_by(["_k", "_m"]).aggregate([])
            for k, m in zip(keys.column("_k").to_pylist(), keys.column("_m").to_pylist(),
                            strict=True):  # fmt: skip
                mask = pc.and_(pc.equal(data.column("_k"), k), pc.equal(data.column("_m"), m))
                part = data.filter(mask).select(cols)
                _write_atomic(part, layout.table_dir(lake, table, k, m) / name)
        base = con.sql(
            "SELECT source_id, n_job_id, n_file_id, n_snapshot_id FROM _lake_base "
            "ORDER BY source_id"
        ).fetchall()
        counts = {r[0]: r[1:] for r in base}
        rows = srcs.to_pylist()
        for r in rows:
            for key, n in zip(layout.ID_KEYS, counts[r["source_id"]], strict=True):
                r[f"lake_{key}s"] = int(n or 0)
        manifest.commit(lake, lo, hi, rows)
        return len(rows)


def to_database(lake: str | os.PathLike[str], path: str | os.PathLike[str]) -> int:
    """Copy what the lake shows into a new database file; returns inputs copied.

    Raises
    ------
    IocharError
        When ``path`` already holds inputs.
    """
    import iochar
    from iochar.lake.view import LakeStore

    src = LakeStore(lake)
    if Path(path).exists():
        raise IocharError(f"{os.fspath(path)!r} exists; export a lake into a new database")
    dst = iochar.connect(os.fspath(path))
    try:
        dst.con.execute("BEGIN TRANSACTION")
        try:
            for table in schema.TABLES:
                data: pa.Table = src.sql(
                    f'SELECT * FROM "{table}"'
                ).to_arrow_table()  # name from schema
                if data.num_rows:
                    dst._append(table, data)
            dst.con.execute("COMMIT")
        except BaseException:
            dst.con.execute("ROLLBACK")
            raise
        return dst.sql("SELECT count(*) FROM sources").fetchall()[0][0]
    finally:
        dst.close()
        src.close()
