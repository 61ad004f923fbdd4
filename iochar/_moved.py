"""Deprecation shims for public modules that moved to the current package layout.

A module that moved keeps its old name as a small module whose attributes
are looked up in the new one(s), each read with a :class:`DeprecationWarning`
that names the new place::

    # iochar/synth.py
    from iochar._moved import forward

    __all__, __getattr__ = forward(__name__, "iochar.datasets.synth")

``from iochar.synth import make_scenario``, ``iochar.synth.SCENARIOS`` and
``from iochar import synth; synth.make_scenario(...)`` keep working and return
the very objects of the new module. Setting an attribute on the old module
(``monkeypatch.setattr``) does not reach the new one: patch the new module.
``dir()`` of the old module does not list the moved names (``__all__`` does):
tools that read every attribute ``dir()`` names, as pytest's fixture
collection does for ``--doctest-modules``, would each time warn.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["forward"]


def forward(old: str, *new: str) -> tuple[list[str], Callable[[str], Any]]:
    """``__all__`` and ``__getattr__`` for the module ``old`` that moved.

    Parameters
    ----------
    old : str
        The old module's name (its ``__name__``).
    *new : str
        The modules its names moved to, searched in order.

    Returns
    -------
    tuple of (list of str, callable)
        The union of the new modules' ``__all__``, and the module-level
        ``__getattr__`` for ``old``.
    """
    modules = [importlib.import_module(n) for n in new]
    public = [x for m in modules for x in getattr(m, "__all__", ())]

    def __getattr__(name: str) -> Any:
        if not (name.startswith("__") and name.endswith("__")):
            for mod in modules:
                if name in vars(mod):
                    warnings.warn(
                        f"{old}.{name} moved to {mod.__name__}.{name}; import it from "
                        f"{mod.__name__} ({old} is deprecated and will be removed)",
                        DeprecationWarning,
                        stacklevel=2,
                    )
                    return vars(mod)[name]
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return list(dict.fromkeys(public)), __getattr__
