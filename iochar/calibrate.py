"""Deprecated: ``iochar.calibrate`` moved to :mod:`iochar.load.bench` and :mod:`iochar.capture.fio`.

The readers of fio JSON and IOR text (``read_fio_json``, ``read_ior``,
``read_calibration``, ``CALIBRATION_COLUMNS``) moved to :mod:`iochar.load.bench`;
running fio here (``run_fio``, ``CalibrationRun``, ``calibration_sizes``,
``describe_location``) moved to :mod:`iochar.capture.fio`. The cost model
they feed is :func:`iochar.analyze.fsu.fit_cost_model`.

Every name read from this module is the object of the new module, with a
:class:`DeprecationWarning` saying where it lives now (:mod:`iochar._moved`).
"""

from iochar._moved import forward

_, __getattr__ = forward(__name__, "iochar.load.bench", "iochar.capture.fio")
#: What ``from iochar.calibrate import *`` gave before the move (names added since are not here;
#: each is reached through ``__getattr__``, so a linter cannot see them defined).
_BEFORE = (
    "CALIBRATION_COLUMNS",
    "CalibrationRun",
    "calibration_sizes",
    "describe_location",
    "read_calibration",
    "read_fio_json",
    "read_ior",
    "run_fio",
)
__all__ = list(_BEFORE)
