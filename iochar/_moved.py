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

A function that moved out of a module that stays keeps its old name as a thin
function that calls :func:`warn_moved` and then the new one::

    def pick_job(table, job_id=None):
        warn_moved("iochar.narrate.apps.pick_job", "iochar.analyze.characterize.pick_job")
        return characterize.pick_job(table, job_id)
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["forward", "warn_moved"]


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


def warn_moved(old: str, new: str, *, call: str | None = None) -> None:
    """Warn, for the caller of the function ``old``, that it moved to ``new``.

    Parameters
    ----------
    old : str
        The old function's full name (``"iochar.narrate.apps.pick_job"``).
    new : str
        Its new place, the full name of the function to call instead.
    call : str, optional
        How to call the new place when that is not plain ``new(...)`` with the same
        arguments (``"app_means_view(app_means(table))"``).
    """
    how = f"; call {call}" if call else "; call it from there"
    warnings.warn(
        f"{old} moved to {new}{how} ({old} is deprecated and will be removed)",
        DeprecationWarning,
        stacklevel=3,
    )
