"""What each Darshan log held, module by module, and which modules Darshan left incomplete.

A Darshan log holds one region per instrumentation module (POSIX, MPI-IO, STDIO,
HDF5, PnetCDF, LUSTRE, DXT, HEATMAP, APMPI, APXC, DFS, DAOS...). iochar's analyses
read the modules :data:`iochar.load.darshan.VARIABLE_MAP` maps into ``file_stats``
and the DXT traces in ``ops``; the others are kept raw in ``module_counters``. When a
module runs out of memory for new records (STDIO's or POSIX's file-record limit,
DXT's trace buffer), Darshan sets its bit of the header's ``partial_flag``:
darshan-parser then prints "The <MODULE> module contains incomplete data! This
happens when a module runs out of memory to store new record data." and shows the
records only with ``--show-incomplete`` (darshan-util/darshan-parser.c). The counters
of such a module cover only the files it recorded before the limit, so any total
drawn from them is a lower bound.

:func:`modules` lists, from ``sources.meta`` (what the Darshan loader recorded), one
row per log and module; :func:`incomplete` keeps the flagged ones.

Examples
--------
>>> import iochar
>>> from iochar.analyze import darshan_modules
>>> db = iochar.connect(":memory:")
>>> list(darshan_modules.modules(db).columns) == list(darshan_modules.MODULE_COLUMNS)
True
"""

from __future__ import annotations

import pandas as pd

from iochar.result import Table

__all__ = ["modules", "incomplete", "MODULE_COLUMNS"]

#: Columns of :func:`modules`.
MODULE_COLUMNS = (
    "source_id",
    "source",
    "job_id",
    "log_format",
    "darshan_version",
    "module",
    "module_version",
    "records",
    "compressed_bytes",
    "incomplete",
    "kept_in",
)

_MODULES_SQL = """
WITH d AS (
  SELECT source_id, regexp_extract(uri, '[^/]*$') AS source, meta,
         unnest(json_keys(meta, '$.modules')) AS module
  FROM sources WHERE kind = 'darshan'),
j AS (SELECT source_id, min(job_id) AS job_id FROM jobs GROUP BY source_id)
SELECT d.source_id, d.source, j.job_id,
       d.meta ->> 'tool_version' AS log_format,
       d.meta ->> 'darshan_version' AS darshan_version,
       d.module,
       (d.meta -> 'modules' -> d.module ->> 'version')::INTEGER AS module_version,
       (d.meta -> 'modules' -> d.module ->> 'records')::BIGINT AS records,
       (d.meta -> 'modules' -> d.module ->> 'bytes')::BIGINT AS compressed_bytes,
       coalesce((d.meta -> 'modules' -> d.module ->> 'partial')::BOOLEAN, false) AS incomplete,
       d.meta -> 'modules' -> d.module ->> 'kept_in' AS kept_in
FROM d LEFT JOIN j USING (source_id)
ORDER BY d.source_id, d.module
"""


def modules(store) -> pd.DataFrame:
    """One row per Darshan log and module, with Darshan's incomplete flag.

    Parameters
    ----------
    store : iochar.Store
        The database.

    Returns
    -------
    pandas.DataFrame
        :data:`MODULE_COLUMNS`: the source and its job, the log format and the
        Darshan version that wrote it, the module and its record-layout version,
        ``records`` read (NULL for a module iochar could not read), its region's
        ``compressed_bytes`` (0 for a module flagged without data), ``incomplete``
        (Darshan's partial flag: the module ran out of memory for new records, so
        its counters cover only the records kept) and ``kept_in``: ``file_stats``
        or ``ops`` for what iochar's analyses read, ``module_counters`` for the
        modules kept raw, NULL for a module not read.
    """
    return Table(store.sql(_MODULES_SQL).df(), sql=_MODULES_SQL)


def incomplete(store) -> pd.DataFrame:
    """The rows of :func:`modules` that Darshan flagged incomplete.

    Parameters
    ----------
    store : iochar.Store
        The database.

    Returns
    -------
    pandas.DataFrame
        :data:`MODULE_COLUMNS`, only the modules whose ``incomplete`` is true.
    """
    sql = f"SELECT * FROM ({_MODULES_SQL}) WHERE incomplete"
    return Table(store.sql(sql).df(), sql=sql)
