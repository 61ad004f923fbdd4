"""Read queries whose rows are fetched at once, run in one step.

:meth:`iochar.Store.sql` returns a DuckDB relation: DuckDB parses the statement, binds
it to learn its columns, and plans and runs it again when the rows are fetched. An
analysis that fetches the rows straight away (``.df()``, ``.fetchall()``) needs none of
the relation's laziness; ``DuckDBPyConnection.execute`` parses, plans and runs the
statement once (DuckDB Python API: ``execute`` runs a prepared statement with its
parameters and leaves the result on the connection to be fetched). Over the 57-62
queries of an ``iochar summary`` of one Darshan log that is about a quarter of the
summary's CPU time once imports are done (0.52 -> 0.39 s on sample-goodost.darshan).

The result sits on the store's connection until the next statement: fetch it before
running another query. Parameters are bound (``$name``), never formatted in.
"""

from __future__ import annotations

from typing import Any

__all__ = ["query"]


def query(store, sql: str, params: dict[str, Any] | list[Any] | None = None):
    """Run one read statement now; fetch its rows before the next statement.

    Parameters
    ----------
    store : iochar.Store
        The database (anything with ``con.execute``; else its ``sql`` is used).
    sql : str
        The statement, values bound as ``$name``.
    params : dict or list, optional
        Bound values.

    Returns
    -------
    duckdb.DuckDBPyConnection or duckdb.DuckDBPyRelation
        Something with ``.df()``, ``.fetchall()``, ``.fetchone()`` and ``.description``.
    """
    con = getattr(store, "con", None)
    execute = getattr(con, "execute", None)
    if execute is None:
        return store.sql(sql, params)
    return execute(sql, params)
