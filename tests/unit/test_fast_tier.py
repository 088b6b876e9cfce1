"""The fast tier (``pytest -m "not slow"``, tests/conftest.py) covers every layer: each keeps tests
outside ``slow``, so that moving an expensive test out of the tier never leaves a layer untested
in the edit-test loop."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LAYERS: dict[str, tuple[str, ...]] = {
    "backends": ("tests/unit/backends/",),
    "param": ("tests/unit/param/",),
    "engine": ("tests/unit/engine/",),
    "claims": ("tests/claims/",),
    "conformance": ("tests/unit/conformance/",),
    "isolation": ("tests/unit/conformance/test_judge_isolation.py", "tests/system/test_hostile_containment.py"),
    "report": ("tests/unit/report/", "tests/system/test_report"),
    "cli": ("tests/system/test_cli.py",),
    "bench": ("tests/unit/bench/",),
}
"""Each layer of the package (pyproject.toml's import contract) and the node-id prefixes of its tests."""

LEAST = 5
"""Fast tests each layer keeps at the least."""


def _fast_ids(session: pytest.Session) -> list[str]:
    """Node ids of the fast tier: this session's items not marked ``slow`` when it collected every
    layer (a whole or a ``-m "not slow"`` run), else those of a collection of the whole suite."""
    ids = [item.nodeid for item in session.items if item.get_closest_marker("slow") is None]
    if all(any(i.startswith(LAYERS[layer]) for i in ids) for layer in LAYERS):
        return ids
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow", "-p", "no:cacheprovider", "tests"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return [line for line in run.stdout.splitlines() if "::" in line]


def layer_counts(ids: list[str]) -> dict[str, int]:
    """How many of the node ids each layer has."""
    return {layer: sum(i.startswith(prefixes) for i in ids) for layer, prefixes in LAYERS.items()}


def test_every_layer_keeps_fast_tests(request: pytest.FixtureRequest) -> None:
    counts = layer_counts(_fast_ids(request.session))
    assert all(n >= LEAST for n in counts.values()), counts


def test_a_layer_without_fast_tests_is_seen() -> None:
    """The count the test above judges: a tier whose bench tests were all moved out shows 0 for bench."""
    ids = [f"{prefixes[0]}x.py::t{k}" for prefixes in LAYERS.values() for k in range(LEAST)]
    assert min(layer_counts(ids).values()) >= LEAST
    counts = layer_counts([i for i in ids if not i.startswith("tests/unit/bench/")])
    assert counts["bench"] == 0 and min(n for layer, n in counts.items() if layer != "bench") >= LEAST
