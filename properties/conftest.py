"""Hypothesis profiles: 'ci' (default) and 'slow' (IOCHAR_HYPOTHESIS_PROFILE=slow)."""

import os

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
