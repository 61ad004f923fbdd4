"""Hypothesis profiles: 'ci' (default) and 'slow' (IOCHAR_HYPOTHESIS_PROFILE=slow).

Tests marked ``slow_hypothesis`` (long runs) are skipped unless the slow profile is on.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("slow", max_examples=1000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("IOCHAR_HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(config, items):
    if os.environ.get("IOCHAR_HYPOTHESIS_PROFILE") == "slow":
        return
    skip = pytest.mark.skip(reason="long hypothesis run: IOCHAR_HYPOTHESIS_PROFILE=slow runs it")
    for item in items:
        if "slow_hypothesis" in item.keywords:
            item.add_marker(skip)
