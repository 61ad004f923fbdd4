"""Shared fixtures: data paths, an in-memory store, optional-tool markers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The project's bundled fixtures (real tool output; see data/README.md).
DATA_DIR = ROOT / "data"

has_strace = shutil.which("strace") is not None
requires_strace = pytest.mark.skipif(not has_strace, reason="strace is not installed")

try:
    import darshan  # noqa: F401

    has_darshan = True
except ImportError:
    has_darshan = False
requires_darshan = pytest.mark.skipif(not has_darshan, reason="the darshan package is missing")


@pytest.fixture
def store():
    """A fresh in-memory store."""
    import iochar

    db = iochar.connect(":memory:")
    yield db
    db.close()


@pytest.fixture
def global_random_seed() -> int:
    """Seed for randomized tests; set IOCHAR_TESTS_SEED to vary it."""
    return int(os.environ.get("IOCHAR_TESTS_SEED", "42"))


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory):
    """``iochar demo`` run once, as a user would (a subprocess), for the report tests.

    Returns the output folder, the exit status and the combined output. Every notebook
    in notebooks/ is executed on the bundled data by this one run.
    """
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("demo") / "demo-report"
    env = {**os.environ, "IOCHAR_CACHE": str(tmp_path_factory.mktemp("cache"))}
    proc = subprocess.run(
        [sys.executable, "-m", "iochar.cli", "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    return out, proc.returncode, proc.stdout + proc.stderr
