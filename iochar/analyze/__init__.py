"""Analyses over the store: one module per topic, each returning tidy pandas tables.

Modules are imported on use (``from iochar.analyze import snapshots``).
"""

from __future__ import annotations

__all__ = [
    "blockdev",
    "bursts",
    "cachesim",
    "capacity",
    "characterize",
    "classify",
    "context",
    "cycles",
    "darshan_modules",
    "devices",
    "efficiency",
    "fileio",
    "fsu",
    "insights",
    "interference",
    "inventory",
    "jobs",
    "lustre",
    "ranks",
    "scaling",
    "snapshots",
    "throughput",
    "variance",
]
