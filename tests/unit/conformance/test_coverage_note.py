"""The coverage note of a map with no inverse (L-BFGS towards Haar targets of each determinant)
names a component of O(n) outside the image only when the optimisation settled every size; beside a
size where it reached nothing, a miss is reported as what it did not do, never as a fact about the map."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from orthoverify.conformance import coverage
from orthoverify.conformance.context import Ctx, session
from orthoverify.conformance.coverage import check_coverage_by_optimisation
from orthoverify.conformance.target import load_target


def _coverage(monkeypatch: pytest.MonkeyPatch, reaches: Callable[[int, int], bool]) -> tuple[bool, str]:
    """The coverage evidence when the optimisation reaches a target of size n and determinant d
    exactly when ``reaches(n, d)`` (the target itself is never called)."""

    def scripted(_ctx: Ctx, q: np.ndarray, _x0: np.ndarray, _steps: int) -> float:
        return 0.0 if reaches(q.shape[0], 1 if np.linalg.det(q) > 0 else -1) else 0.5

    monkeypatch.setattr(coverage, "_reach", scripted)
    ctx = session(load_target("torch-orthogonal-cayley"), ("float64",), profile="quick")
    (ev,) = check_coverage_by_optimisation(ctx)
    return ev.passed, ev.notes


def test_a_component_missed_where_every_size_was_settled_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """A map onto one component per size (torch's Cayley map: its base point's, det +1 at n = 2, 3
    and det -1 at n = 4)."""
    passed, notes = _coverage(monkeypatch, lambda n, d: (d > 0) == (n < 4))
    assert passed, notes
    assert notes.endswith(". Never reached (a component of O(n) outside the image): det -1 at n = 2, det -1 at n = 3, "
                          "det +1 at n = 4")  # fmt: skip


def test_an_unsettled_size_makes_a_miss_no_fact_about_the_map(monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's QR-based map onto O(n): nothing reached at n = 3, det +1 missed at n = 4."""
    passed, notes = _coverage(monkeypatch, lambda n, d: n == 2 or (n == 4 and d < 0))
    assert not passed
    assert "Never reached" not in notes and "outside the image" not in notes, notes
    assert (
        ". Not reached by the optimisation: det +1 at n = 4 (the optimisation did not settle n = 3, so this is no "
        "fact about the map: no verdict on the image)" in notes
    ), notes
