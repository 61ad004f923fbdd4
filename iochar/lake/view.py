"""A read-only :class:`iochar.Store` whose tables are DuckDB views over a lake's Parquet.

Every contract table is a view that reads its folder with
``read_parquet(files, hive_partitioning = true, union_by_name = true)``, casts each
column to its contract type (so ``ops.op`` is the same ENUM and ``meta`` the same
JSON as in a database file) and keeps only rows whose input the manifest records
(:mod:`iochar.lake.layout`: ``id >> 32`` or ``source_id`` in ``sources``). Every
analysis, notebook, report, ``summary`` and ``insights`` reads these views as it
reads tables. Filters on ``lake_kind`` / ``lake_month`` (the partition folders) prune
files; filters on time columns skip Parquet row groups by their min/max statistics.
The list of files is taken when the store opens (and again after
:meth:`~iochar.Store.release`), so a long-lived store sees later ingests after
``release()``.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from iochar import schema
from iochar.errors import IocharError
from iochar.lake import layout
from iochar.store import Store

__all__ = ["LakeStore"]


def _files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("part-*.parquet") if layout.part_range(p.name))


class LakeStore(Store):
    """A store over a lake folder (read-only: new inputs come in with ``iochar ingest``).

    Parameters
    ----------
    lake : str or os.PathLike
        The lake folder (made by :func:`iochar.lake.ingest` or ``iochar ingest``).
    sources : (int, int), optional
        Only inputs with ``lo <= source_id <= hi`` (per-job analyses on Dask use
        this to give each task its slice of the lake).

    Raises
    ------
    IocharError
        When ``lake`` is not a lake folder.
    """

    _retry = "the lake is read-only"

    def __init__(
        self, lake: str | os.PathLike[str], *, sources: tuple[int, int] | None = None
    ) -> None:
        if not layout.is_lake(lake):
            raise IocharError(f"{os.fspath(lake)!r} is not an iochar lake (no sources/ folder)")
        self.lake = str(Path(lake).resolve())
        self.slice = sources
        super().__init__(self.lake, read_only=True, wait=0)

    def _open(self) -> None:
        con = duckdb.connect(":memory:")
        try:
            con.execute("SET enable_progress_bar = false")
        except duckdb.InvalidInputException:
            pass
        self._con = con
        self._ids = self._ids_mark = None
        self._views()

    def _views(self) -> None:
        con = self._con
        con.execute("CREATE TABLE iochar_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)")
        con.execute(
            "INSERT INTO iochar_meta VALUES ('schema_version', $v), ('lake', $p)",
            {"v": str(schema.SCHEMA_VERSION), "p": self.lake},
        )
        for table in ["sources", *layout.tables()]:
            cols = schema.TABLES[table]
            casts = ", ".join(f'CAST("{c.name}" AS {c.sql}) AS "{c.name}"' for c in cols)
            files = _files(Path(self.lake) / table)
            raw = f"_lake_{table}"
            if table == "sources" and not files:
                extra = ", ".join(f"CAST(NULL AS BIGINT) AS lake_{k}s" for k in layout.ID_KEYS)
                nulls = ", ".join(f'CAST(NULL AS {c.sql}) AS "{c.name}"' for c in cols)
                con.execute(f"CREATE VIEW {raw} AS SELECT {nulls}, {extra} WHERE false")
            elif files:
                rel = con.read_parquet(files, hive_partitioning=True, union_by_name=True)
                rel.create_view(raw)
            else:
                nulls = ", ".join(f'CAST(NULL AS {c.sql}) AS "{c.name}"' for c in cols)
                con.execute(f"CREATE VIEW {raw} AS SELECT {nulls} WHERE false")
            if table == "sources":
                where = "true"
                if self.slice is not None:
                    where = "source_id BETWEEN getvariable('lake_lo') AND getvariable('lake_hi')"
                con.execute(f"CREATE VIEW sources AS SELECT {casts} FROM {raw} WHERE {where}")
                # dense ids: each input's ids start after those of the inputs before it
                bases = ", ".join(
                    f"coalesce(sum(lake_{k}s) OVER (ORDER BY source_id ROWS BETWEEN "
                    f"UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS {k}_base"
                    for k in layout.ID_KEYS
                )
                # over every committed input (a slice keeps the whole lake's ids)
                con.execute(f"CREATE VIEW _lake_all_bases AS SELECT source_id, {bases} FROM {raw}")
                con.execute(
                    "CREATE VIEW _lake_bases AS SELECT * FROM _lake_all_bases "
                    "WHERE source_id IN (SELECT source_id FROM sources)"
                )
                continue
            col, shifted = layout.SOURCE_OF[table]
            key = f'(r."{col}" >> {layout.ID_SHIFT})' if shifted else f'r."{col}"'
            ids = schema.ID_COLUMNS.get(table, ())
            mask = (1 << layout.ID_SHIFT) - 1
            exprs = []
            for c in cols:
                if c.name in ids:
                    e = f'CAST(b.{c.name}_base + (r."{c.name}" & {mask}) AS {c.sql})'
                else:
                    e = f'CAST(r."{c.name}" AS {c.sql})'
                exprs.append(f'{e} AS "{c.name}"')
            con.execute(  # identifiers from schema/layout only
                f"CREATE VIEW {table} AS SELECT {', '.join(exprs)} FROM {raw} r "
                f"JOIN _lake_bases b ON b.source_id = {key}"
            )
        if self.slice is not None:
            con.execute("SET VARIABLE lake_lo = $lo", {"lo": self.slice[0]})
            con.execute("SET VARIABLE lake_hi = $hi", {"hi": self.slice[1]})

    def _reclaim(self) -> None:  # nothing to reclaim: the lake is written by ingest only
        return None

    def _refuse(self, *args, **kwargs):
        raise IocharError(
            f"the lake {self.lake!r} is read-only: add inputs with "
            "`iochar ingest SRC... --lake DIR`"
        )

    load = load_many = _refuse

    def __repr__(self) -> str:
        return f"LakeStore({self.lake!r})"
