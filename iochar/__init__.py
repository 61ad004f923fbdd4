"""iochar: characterize storage I/O workloads.

>>> import iochar
>>> db = iochar.connect(":memory:")
>>> sorted(db.tables())[:3]
['access_sizes', 'counters', 'file_stats']
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from iochar.errors import (
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
    "__version__",
]

_LAZY = {"Store": "iochar.store", "LoadResult": "iochar.store"}
_SUBMODULES = ("load", "schema", "store", "errors", "datasets", "cli")


def connect(path: str | None = None, *, read_only: bool = False) -> Store:
    """Open (or create) an iochar database.

    Parameters
    ----------
    path : str, optional
        DuckDB file; ``":memory:"`` for a throw-away store. Defaults to
        ``$IOCHAR_DB`` or ``./iochar.duckdb``.
    read_only : bool, default False
        Open without write access (several readers may share a file).

    Returns
    -------
    Store
        The store owning that database.
    """
    from iochar.store import Store

    return Store(path, read_only=read_only)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"iochar.{name}")
    raise AttributeError(f"module 'iochar' has no attribute {name!r}")
