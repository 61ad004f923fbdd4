"""The demo data set: synthetic workloads with known truth plus the bundled real fixtures.

``iochar demo`` and the notebooks' default database are built here. The synthetic part
is seeded, so the same iochar version always builds the same database:

- the seven application scenarios shaped like Miller & Katz's Tables 1-2
  (:data:`iochar.datasets.synth.SCENARIOS`), one single-process trace each, with the truth file
  (required / checkpoint / staging per file) written beside it;
- a population of repeated jobs shaped like Carns et al.'s Table IV groups
  (:func:`iochar.datasets.synth_jobs.make_table_iv`), written as real Darshan logs when
  libdarshan-util is available (the ``darshan`` package) and as an iochar trace of
  per-file counters otherwise;
- every real fixture under ``data/`` (:func:`iochar.datasets.demo_inputs`).

Examples
--------
>>> from iochar.datasets import demo
>>> sorted(demo.SCENARIO_SCALE)[:3]
['bvi', 'ccm', 'forma']
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from iochar import __version__, datasets

__all__ = [
    "SCENARIO_SCALE",
    "JOB_SAMPLES",
    "SEED",
    "build_inputs",
    "build_database",
    "cache_path",
    "cached_database",
    "LoadTally",
]

#: Scale of each application scenario in the demo (run time and volumes shrink
#: together, rates are kept); chosen so the whole demo loads in seconds.
SCENARIO_SCALE: dict[str, float] = {
    "bvi": 0.1,
    "ccm": 0.5,
    "forma": 0.25,
    "gcm": 1.0,
    "les": 1.0,
    "upw": 1.0,
    "venus": 0.25,
}

#: Jobs per Table IV group in the demo population (the paper's groups have 15-1000+).
JOB_SAMPLES = 12

#: Real fixtures the demo leaves out (tests load them; see :func:`build_inputs`): a
#: snapshot's second half, the one log with DXT flagged incomplete (1.2 MB, 131,000
#: segments) and the ckpt_app run captured with -r beside -ttt (a third dated ckpt_app
#: job, 2026-11-26, beside the -tt and -ttt runs the notebooks compare).
DEMO_SKIP = frozenset({"tornado-after.parquet", "partial_data_dxt.darshan", "ckpt_r_ttt.strace"})

#: Seed of every generator the demo uses.
SEED = 20261123

Progress = Callable[[str], None]


def _quiet(msg: str) -> None:
    return None


#: The progress line of one synthetic application trace (see :func:`build_inputs`).
_APP_TRACE = re.compile(r"synth (?!jobs:)[\w-]+: ")


class LoadTally:
    """Progress of building the demo: its steps, but the inputs counted, not listed.

    Loading the demo reads over a hundred inputs; a notebook or a terminal shows one
    line per step and a count per input kind at the end, with a progress bar on a
    terminal.

    Parameters
    ----------
    echo : callable, default print
        Where the step lines go.
    bar : bool, default False
        Show a tqdm bar of inputs loaded (on standard error).

    Examples
    --------
    >>> t = LoadTally(echo=lambda s: None)
    >>> t("  a.darshan [darshan] -> 3 rows"); t("  b.darshan [darshan] -> 1 rows")
    >>> t.summary()
    'loaded 2 darshan'
    """

    def __init__(self, echo: Progress = print, *, bar: bool = False) -> None:
        self.echo = echo
        self.kinds: Counter[str] = Counter()
        self.traces = 0
        self._bar = None
        if bar:
            from tqdm import tqdm

            self._bar = tqdm(desc="loading inputs", unit=" inputs", leave=False, file=sys.stderr)

    def __call__(self, line: str) -> None:
        """Take one progress line: count an input, pass a step on."""
        m = re.search(r"\[([\w-]+)\] ->", line)
        if m:
            self.kinds[m.group(1)] += 1
            if self._bar is not None:
                self._bar.update(1)
        elif _APP_TRACE.match(line):
            self.traces += 1
        elif not line.startswith("  "):
            self.echo(line)

    def summary(self) -> str:
        """``made N synthetic application traces; loaded N kind, ...`` ("" when nothing was)."""
        made = f"made {self.traces} synthetic application traces; " if self.traces else ""
        if not self.kinds:
            return made.removesuffix("; ")
        return made + "loaded " + ", ".join(f"{n} {k}" for k, n in self.kinds.most_common())

    def close(self) -> None:
        """Remove the bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def build_inputs(
    out: str | os.PathLike[str],
    *,
    data: str | os.PathLike[str] | None = None,
    progress: Progress = _quiet,
) -> list[tuple[Path, str | None]]:
    """Write the synthetic demo inputs under ``out`` and list every file to load.

    Parameters
    ----------
    out : str or os.PathLike
        Folder for the generated files (``synth/apps/``, ``synth/jobs/``).
    data : str or os.PathLike, optional
        Real-fixture folder to use instead of the bundled ``data/``.
    progress : callable, optional
        Called with one line of text per step.

    Returns
    -------
    list of (pathlib.Path, str or None)
        Each input and its loader kind: the application traces, the job population,
        then the real fixtures.
    """
    from iochar.datasets import synth, synth_jobs

    out = Path(out)
    apps = out / "synth" / "apps"
    apps.mkdir(parents=True, exist_ok=True)
    files: list[tuple[Path, str | None]] = []
    for i, (name, scale) in enumerate(sorted(SCENARIO_SCALE.items())):
        ops, truth = synth.make_scenario(name, scale=scale, random_state=SEED + i)
        path = apps / f"{name}.parquet"
        synth.write_trace(ops, truth, path)
        files.append((path, "trace-parquet"))
        progress(
            f"synth {name}: {ops.num_rows:,} ops (scale {scale:g}), truth in {path.name}.truth.csv"
        )
    pop = synth_jobs.make_table_iv(samples=JOB_SAMPLES, random_state=SEED)
    jobs = out / "synth" / "jobs"
    jobs.mkdir(parents=True, exist_ok=True)
    for old in jobs.glob("*.darshan"):
        old.unlink()
    try:
        logs = synth_jobs.write_darshan_logs(pop, jobs)
    except (ImportError, OSError) as exc:  # no libdarshan-util: the same jobs as a trace
        path = synth_jobs.write_trace(pop, jobs / "population.parquet")
        files.append((Path(path), "trace-parquet"))
        progress(f"synth jobs: {len(pop.jobs)} jobs as a trace (no Darshan writer: {exc})")
    else:
        files.extend((p, "darshan") for p in logs)
        progress(f"synth jobs: {len(logs)} Darshan logs in {len(pop.groups)} Table IV groups")
    # tornado-after.parquet is the same tree as tornado-after.find, walked again by
    # ``iochar snapshot`` 98 s later: loading both would make the tree's latest two
    # snapshots identical and hide the growth between the before and after listings
    files.extend((p, k) for p, k in datasets.demo_inputs(data) if p.name not in DEMO_SKIP)
    return files


def build_database(
    db_path: str | os.PathLike[str],
    *,
    data: str | os.PathLike[str] | None = None,
    work: str | os.PathLike[str] | None = None,
    progress: Progress = _quiet,
) -> dict[str, int]:
    """Build the demo database at ``db_path`` (replacing it atomically).

    The database is written beside its final name and renamed into place when
    complete, so a reader never sees a half-built file.

    Parameters
    ----------
    db_path : str or os.PathLike
        Where the DuckDB file goes.
    data : str or os.PathLike, optional
        Real-fixture folder to use instead of the bundled ``data/``.
    work : str or os.PathLike, optional
        Folder for the generated inputs (default: ``<db_path's folder>/demo-data``).
    progress : callable, optional
        Called with one line of text per step.

    Returns
    -------
    dict of str to int
        Rows per table in the finished database.
    """
    import iochar

    db_path = Path(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    work = Path(work) if work is not None else db_path.parent / "demo-data"
    files = build_inputs(work, data=data, progress=progress)
    fd, tmp = tempfile.mkstemp(prefix=db_path.name + ".", suffix=".tmp", dir=db_path.parent)
    os.close(fd)
    os.unlink(tmp)  # DuckDB wants to create the file itself
    try:
        with iochar.connect(tmp) as db:
            for path, kind in files:
                res = db.load(path, kind=kind)
                progress(f"  {res.summary()}")
            counts = db.row_counts()
        os.replace(tmp, db_path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp + ".wal")
    return counts


def cache_path(data: str | os.PathLike[str] | None = None) -> Path:
    """Where the notebooks' default demo database is cached.

    ``$IOCHAR_CACHE`` or ``$XDG_CACHE_HOME/iochar`` (``~/.cache/iochar``), in a file
    named for the iochar version and the real fixtures' names and sizes, so a new
    version or new fixtures build a fresh one.

    Parameters
    ----------
    data : str or os.PathLike, optional
        Real-fixture folder to use instead of the bundled ``data/``.

    Returns
    -------
    pathlib.Path
        The database file (it may not exist yet).
    """
    base = os.environ.get("IOCHAR_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "iochar"
    )
    h = hashlib.sha256(
        f"{__version__} {SEED} {JOB_SAMPLES} {sorted(SCENARIO_SCALE.items())}".encode()
    )
    for path, kind in datasets.demo_inputs(data):
        if path.name in DEMO_SKIP:
            continue
        h.update(f"{path.name} {kind} {path.stat().st_size}".encode())
    return Path(base) / f"demo-{__version__}-{h.hexdigest()[:12]}.duckdb"


def cached_database(
    data: str | os.PathLike[str] | None = None, *, progress: Progress = _quiet
) -> Path:
    """The cached demo database, built first if it is not there yet.

    Parameters
    ----------
    data : str or os.PathLike, optional
        Real-fixture folder to use instead of the bundled ``data/``.
    progress : callable, optional
        Called with one line of text per step while building.

    Returns
    -------
    pathlib.Path
        The database file.
    """
    path = cache_path(data)
    if not path.exists():
        t0 = time.perf_counter()
        progress(f"building the demo database at {path} (once) ...")
        build_database(path, data=data, work=path.with_suffix(".data"), progress=progress)
        progress(f"built in {time.perf_counter() - t0:.1f} s")
    return path
