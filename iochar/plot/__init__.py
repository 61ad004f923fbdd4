"""Altair chart builders over analysis results (never over a Store).

Each ``*_chart`` takes the DataFrame an ``iochar.analyze`` function returned
and gives an :class:`altair.Chart`; keyword overrides go to ``properties``.
Charts are plain Vega-Lite, so they render offline (vl-convert or inlined
scripts in reports).

One module per notebook topic, as in :mod:`iochar.narrate`; every chart is also
here, as ``iochar.plot.<name>_chart``:

========================  ================================================
:mod:`~.overview`         what a database holds (notebook 00)
:mod:`~.apps`             I/O classes and cycles of one trace (notebook 01)
:mod:`~.system`           throughput, bursts, idle time, FSU (notebook 02)
:mod:`~.jobs`             job metrics and repeated-job variance (notebook 03)
:mod:`~.snapshots`        file size and age CDFs (notebook 04)
========================  ================================================

Every chart follows the rules in :mod:`iochar.plot._common`: bytes, rates and
durations in one human unit per chart (named in the axis title), time axes in UTC
with the date, lines broken at gaps in the record; where the data hold no rows, one
point or one step, a chart function returns a :class:`NoChart`, one sentence saying
why, in place of an empty chart.

altair is imported by the first chart drawn, not by ``import iochar.plot``.
"""

from __future__ import annotations

from iochar.plot import (  # noqa: F401 - plot.<notebook topic>.<chart>
    cachesim,
    efficiency,
    tables,  # noqa: F401 - plot.tables.<name>_view: tables in a paper's units
)
from iochar.plot._common import (  # noqa: F401 - THEME importable, not in __all__ (as before)
    THEME,
    NoChart,
)
from iochar.plot.apps import (
    class_breakdown_chart,
    class_rate_chart,
    cycles_chart,
    periodogram_chart,
)
from iochar.plot.cachesim import disk_rate_chart, idle_chart
from iochar.plot.context import job_load_chart
from iochar.plot.efficiency import capacity_chart, interference_chart, scaling_chart, used_chart
from iochar.plot.jobs import cv_table_chart, cv_table_style, job_history_chart, mib_s_box_chart
from iochar.plot.lustre import ost_chart
from iochar.plot.overview import coverage_chart, job_bytes_chart
from iochar.plot.ranks import rank_extremes_chart, rank_heatmap_chart
from iochar.plot.snapshots import age_cdf_chart, size_cdf_chart
from iochar.plot.system import (  # noqa: F401 - the colour maps, like THEME
    BURST_COLORS,
    FSU_COLORS,
    burst_chart,
    cost_model_chart,
    fsu_chart,
    fsu_histogram_chart,
    idle_table_chart,
    idle_table_style,
    size_histogram_chart,
    throughput_cdf_chart,
    throughput_chart,
)

__all__ = [
    "throughput_chart",
    "class_rate_chart",
    "class_breakdown_chart",
    "size_cdf_chart",
    "age_cdf_chart",
    "burst_chart",
    "throughput_cdf_chart",
    "idle_table_chart",
    "idle_table_style",
    "periodogram_chart",
    "cycles_chart",
    "mib_s_box_chart",
    "cv_table_chart",
    "cv_table_style",
    "job_history_chart",
    "fsu_chart",
    "fsu_histogram_chart",
    "size_histogram_chart",
    "cost_model_chart",
    "coverage_chart",
    "job_bytes_chart",
    "rank_heatmap_chart",
    "rank_extremes_chart",
    "ost_chart",
    "job_load_chart",
    "capacity_chart",
    "used_chart",
    "scaling_chart",
    "interference_chart",
    "disk_rate_chart",
    "idle_chart",
    "NoChart",
]
