"""Data iochar ships or makes: the bundled fixtures, synthetic inputs, the demo.

This package holds what produces inputs for the loaders without running a
tool on this machine (that is :mod:`iochar.capture`):

- here: where the bundled real fixtures are (:func:`data_dir`) and which of
  them the demo loads (:func:`demo_inputs`, :data:`DEMO_PATTERNS`). They live
  in the repository's ``data/`` folder (each subfolder's ``SOURCE.md`` says
  where the bytes came from); an editable install (``pip install -e .``)
  finds them beside the package;
- :mod:`iochar.datasets.synth`: seeded application traces with known truth
  (``iochar synth``);
- :mod:`iochar.datasets.synth_jobs`: populations of repeated jobs with a
  known I/O-time spread, as Darshan logs or a trace;
- :mod:`iochar.datasets.demo`: the demo database (``iochar demo``, the
  notebooks' default).
"""

from __future__ import annotations

import os
from pathlib import Path

from iochar.errors import IocharError

__all__ = ["data_dir", "demo_inputs", "DEMO_PATTERNS"]

#: (glob under data/, kind) pairs the demo loads, in order; kind None = sniffed.
DEMO_PATTERNS: tuple[tuple[str, str | None], ...] = (
    ("strace/*.strace", "strace"),
    ("insights/*.strace", "strace"),
    ("darshan/**/*.darshan", "darshan"),
    ("trace/*.csv", "trace-csv"),
    ("trace/*.parquet", "trace-parquet"),
    ("iostat/*.iostat", "iostat"),
    ("iostat/*.json", "iostat"),
    ("diskstats/*.diskstats", "diskstats"),
    ("insights/*.diskstats", "diskstats"),
    ("lmt/*.csv", "lmt"),
    ("lmt/*.sqlite3", "lmt"),
    ("brw_stats/*.txt", "brw_stats"),
    ("snapshot/*.find", "snapshot"),
    ("snapshot/*.stat", "snapshot"),
    ("snapshot/*.parquet", "snapshot"),
    ("capacity/*.capacity.json", "capacity"),
)


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The bundled data folder (``$IOCHAR_DATA`` or ``data/`` beside the package).

    Parameters
    ----------
    override : str or os.PathLike, optional
        A folder to use instead, when it exists.

    Raises
    ------
    IocharError
        When no such folder exists (a non-editable install without the repo).
    """
    cands = [override, os.environ.get("IOCHAR_DATA"), Path(__file__).resolve().parents[2] / "data"]
    for c in cands:
        if c and Path(c).is_dir():
            return Path(c)
    raise IocharError(
        "bundled data not found; run from a checkout installed with pip install -e . "
        "or set IOCHAR_DATA to the repository's data/ folder"
    )


def demo_inputs(override: str | os.PathLike[str] | None = None) -> list[tuple[Path, str | None]]:
    """The files ``iochar demo`` loads, with their kinds.

    Parameters
    ----------
    override : str or os.PathLike, optional
        Data folder to use instead of the bundled one.

    Returns
    -------
    list of (pathlib.Path, str or None)
        Each file and its kind, in :data:`DEMO_PATTERNS` order.
    """
    root = data_dir(override)
    out: list[tuple[Path, str | None]] = []
    seen: set[Path] = set()
    for pattern, kind in DEMO_PATTERNS:
        for path in sorted(root.glob(pattern)):
            if path.is_file() and path not in seen:
                seen.add(path)
                out.append((path, kind))
    return out
