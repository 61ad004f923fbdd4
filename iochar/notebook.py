"""Deprecated: ``iochar.notebook`` moved to :mod:`iochar.report.notebook`.

The notebooks import it as ``from iochar.report import notebook as nb``. Every name
read from this module is the object of the new module, with a
:class:`DeprecationWarning` saying where it lives now (:mod:`iochar._moved`).
"""

from iochar._moved import forward

__all__, __getattr__ = forward(__name__, "iochar.report.notebook")
