"""Test configuration: Hypothesis profiles and the CUDA marker.

Hypothesis loads its own ``ci`` profile (derandomised, no database) when it detects CI (the
CI environment variable); this project adds ``quick`` (the local default: few examples) and
``thorough`` (many examples). Choose one with HYPOTHESIS_PROFILE=thorough (or =ci).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("quick", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
elif not os.environ.get("CI"):  # in CI, Hypothesis has already loaded its own "ci" profile
    settings.load_profile("quick")

PLANTED = ("tests.planted.planted_claims",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (torch.cuda.is_available() is False)")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)
