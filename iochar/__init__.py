"""iochar: characterize storage I/O workloads.

>>> import iochar
>>> db = iochar.connect(":memory:")
>>> sorted(db.tables())[:3]
['access_sizes', 'capacity', 'counters']
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from iochar.errors import (
    DatabaseLockedError,
    InputError,
    IocharError,
    MissingDependencyError,
    ParameterError,
    UnknownKindError,
)

if TYPE_CHECKING:
    from iochar.store import LoadResult, Store

__version__ = "0.1.0"
__all__ = [
    "connect",
    "Store",
    "LoadResult",
    "IocharError",
    "InputError",
    "UnknownKindError",
    "ParameterError",
    "MissingDependencyError",
    "DatabaseLockedError",
    "__version__",
]

_LAZY = {"Store": "iochar.store", "LoadResult": "iochar.store"}
#: Subpackages imported on first use (``iochar.analyze``, ``from iochar import plot``).
_SUBMODULES = (
    "analyze",
    "plot",
    "narrate",
    "report",
    "load",
    "datasets",
    "synth",
    "capture",
    "result",
    "schema",
    "store",
    "errors",
    "cli",
    "lake",
)


def connect(
    path: str | None = None,
    *,
    read_only: bool = False,
    wait: float | None = None,
    lake: str | None = None,
) -> Store:
    """Open (or create) an iochar database.

    Parameters
    ----------
    path : str, optional
        DuckDB file; ``":memory:"`` for a throw-away store. Defaults to
        ``$IOCHAR_DB`` or ``./iochar.duckdb``.
    read_only : bool, default False
        Open without write access (several readers may share a file).
    wait : float, optional
        Seconds to keep retrying while another process holds the file (one writer or
        several readers at a time); 0 fails at once. Default ``$IOCHAR_WAIT``, else 5.
    lake : str, optional
        A lake folder (``iochar ingest``): the store's tables are then read-only
        DuckDB views over its Parquet (:class:`iochar.lake.LakeStore`). A ``path``
        that is a lake folder is opened the same way.

    Returns
    -------
    Store
        The store owning that database.

    Raises
    ------
    DatabaseLockedError
        When the file is still held by another process after ``wait`` seconds.
    """
    import os

    if lake is None and path is not None and os.path.isdir(path):
        lake = path
    if lake is not None:
        if path is not None and os.fspath(path) != os.fspath(lake):
            raise ParameterError("lake", "connect", "no path as well (one store)", lake)
        from iochar.lake.view import LakeStore

        return LakeStore(lake)
    from iochar.store import Store

    return Store(path, read_only=read_only, wait=wait)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"iochar.{name}")
    raise AttributeError(f"module 'iochar' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names and the subpackages, though they are imported only on use."""
    return sorted({*__all__, *_SUBMODULES})
