"""The engine's search over magnitudes and its shrinker towards magnitude 1 (engine/magnitudes.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from orthoverify.engine import magnitudes as mg


def test_outward_visits_magnitude_1_first_then_alternates() -> None:
    assert mg.outward(0) == [0]
    assert mg.outward(2) == [0, -1, 1, -2, 2]
    got = list(mg.draws(lambda rng, n, s: (n, s), [2, 3], 1, 8, np.random.default_rng(0)))
    assert got == [(2, 1.0), (3, 1.0), (2, 0.1), (3, 0.1), (2, 10.0), (3, 10.0), (2, 1.0), (3, 1.0)]


def test_magnitude_over_the_named_arrays_only() -> None:
    case = {"A": np.array([[1e-3, -2e-3]]), "d": np.array([1.0, -1.0]), "name": "x"}
    assert mg.magnitude(case, ["A"]) == 2e-3
    assert mg.magnitude(case, ["A", "d", "name"]) == 1.0  # a value that is no array is skipped
    assert mg.distance_from_one(1e-5) == 5 and mg.distance_from_one(0.0) == 400


def _fails_above(threshold: float) -> Any:
    """A toy defect: the measure is max|A| and fails above ``threshold`` (None: outside, n = 1)."""

    def measure(case: Any) -> float | None:
        return None if np.shape(case["A"])[0] == 1 else float(np.max(np.abs(case["A"])))

    return measure, (lambda m: m > threshold)


def test_shrink_moves_towards_magnitude_1_and_never_further_out() -> None:
    """A failure far out (1e30) that still fails at 1 is rescaled there; one that fails only far
    out is bisected towards 1 and stays where it fails; the untouched key keeps its values."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4)) * 1e30
    measure, failing = _fails_above(0.5)
    case = {"A": a, "d": np.array([1.0, -1.0, 1.0, 1.0])}
    found, m, steps = mg.shrink(case, measure(case), measure, failing, ["A"])
    assert "rescaled to magnitude 1" in steps and 0.5 < mg.magnitude(found, ["A"]) <= 10 and failing(m)
    assert np.array_equal(found["d"], case["d"])
    measure, failing = _fails_above(1e10)
    found, m, steps = mg.shrink(case, measure(case), measure, failing, ["A"])
    mag = mg.magnitude(found, ["A"])
    assert "moved towards magnitude 1" in steps and 1e10 < mag < 1e30 and failing(m)


def test_shrink_tries_smaller_cases_first_within_its_budget() -> None:
    """The first failing candidate of ``smaller`` is taken (drawn lazily: later ones never drawn); a
    case the measure declines (None) is not counted; no more than ``budget`` cases are measured."""
    measure, failing = _fails_above(0.5)
    drawn: list[int] = []

    def draws(n: int) -> Iterator[dict[str, np.ndarray]]:
        for _ in range(3):
            drawn.append(n)
            yield {"A": np.full((n, n), 2.0)}

    case = {"A": np.full((4, 4), 3.0)}
    smaller = [(f"size {n}", draws(n)) for n in (1, 2, 3)]
    found, _m, steps = mg.shrink(case, 3.0, measure, failing, ["A"], smaller=smaller)
    assert steps[0] == "size 2" and np.shape(found["A"]) == (2, 2) and drawn == [1, 1, 1, 2]
    calls = []

    def counted(c: Any) -> float | None:
        calls.append(1)
        return measure(c)

    mg.shrink(case, 3.0, counted, failing, ["A"], budget=1)
    assert len(calls) == 1
