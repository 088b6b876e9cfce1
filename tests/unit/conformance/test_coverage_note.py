"""The coverage note of a map with no inverse (L-BFGS towards Haar targets of each determinant)
states a component of O(n) outside the image only when every size agrees; an optimisation that
failed somewhere is reported as what it did not do, never as a fact about the map."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from orthoverify.conformance import checks as ck
from orthoverify.conformance.adapters import load_target


def _coverage(monkeypatch: pytest.MonkeyPatch, reaches: Callable[[int, int], bool]) -> tuple[bool, str]:
    """The coverage evidence when the optimisation reaches a target of size n and determinant d
    exactly when ``reaches(n, d)`` (the target itself is never called)."""

    def scripted(_ctx: ck.Ctx, q: np.ndarray, _x0: np.ndarray, _steps: int) -> float:
        return 0.0 if reaches(q.shape[0], 1 if np.linalg.det(q) > 0 else -1) else 0.5

    monkeypatch.setattr(ck, "_reach", scripted)
    ctx = ck.Ctx(load_target("torch-orthogonal-cayley"), ("float64",), profile="quick")
    (ev,) = ck.check_coverage_by_optimisation(ctx)
    return ev.passed, ev.notes


def test_a_component_missed_at_every_size_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    passed, notes = _coverage(monkeypatch, lambda n, d: d > 0)  # a map onto SO(n)
    assert passed, notes
    assert "Never reached at any size tried (n = 2, 3, 4), while the other determinant was reached at each: " in notes
    assert notes.endswith("det -1, a component of O(n) outside the image")


def test_an_unsettled_size_makes_a_miss_no_fact_about_the_map(monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's QR-based map onto O(n): nothing reached at n = 3, det +1 missed at n = 4."""
    passed, notes = _coverage(monkeypatch, lambda n, d: n == 2 or (n == 4 and d < 0))
    assert not passed
    assert "Never reached" not in notes and "outside the image" not in notes, notes
    assert "Not reached by the optimisation (n = 3 unsettled, and a failed optimisation is no proof" in notes
    assert notes.split("no verdict on the image): ", 1)[1].startswith("det +1 at n = 4")


def test_sizes_that_disagree_name_no_component(monkeypatch: pytest.MonkeyPatch) -> None:
    passed, notes = _coverage(monkeypatch, lambda n, d: not (n == 2 and d < 0))
    assert "outside the image" not in notes and "the sizes do not agree" in notes, notes
    assert "det -1 at n = 2" in notes and passed  # every component reached somewhere: no gap within one
