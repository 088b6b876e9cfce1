"""The judge scales every ratio by what a correct, backward-stable evaluation promises at that
input (LAPACK's error / (n eps kappa)): correct Cayley and exponential maps pass at every
magnitude, maps broken at ordinary sizes still fail, and the evidence says which allowance it used."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from orthoverify.conformance import KINDS
from orthoverify.conformance.kinds import free_map_condition
from orthoverify.engine.allowance import beyond, unpromised
from orthoverify.tolerance import THRESHOLD
from tests.planted.judge_planted import result


def by_check(name: str) -> dict[str, Any]:
    return {c.claim.id.rsplit(".", 1)[1]: c for c in result(name).claims}


SLOW = pytest.mark.slow  # the Cayley cases take about 2 s each: the full suite runs them


def test_the_free_map_allowance_bounds_cayley_conditioning() -> None:
    """1 + 2||X||_F >= cond(I + A) for both skew parts a Cayley map may take from X."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        x = rng.standard_normal((4, 4)) * 10.0 ** rng.integers(-3, 4)
        kappa = free_map_condition({"X": x})
        for a in (x - x.T, np.tril(x, -1) - np.tril(x, -1).T):
            assert np.linalg.cond(np.eye(4) + a) <= kappa * (1 + 1e-12)
    assert all(k.allowance for k in KINDS.values())


@pytest.mark.parametrize("name", [pytest.param("cayley_textbook", marks=SLOW), "expm_scaled", "reflections"])
def test_correct_maps_pass_at_every_magnitude(name: str) -> None:
    by = by_check(name)
    for check in ("orthogonal", "float32", "batch"):
        c = by[check]
        assert c.verdict == "verified", (check, [e.notes for e in c.evidence])
    ev = by["orthogonal"].evidence[0]
    assert ev.data["allowance"] == KINDS["orthogonal-map"].allowance and "allowance" in ev.notes


@pytest.mark.parametrize(
    "name", ["expm_truncated", pytest.param("cayley_not_skew", marks=SLOW), "reflections_unnormalised"]
)
def test_maps_wrong_at_ordinary_sizes_still_fail(name: str) -> None:
    c = by_check(name)["orthogonal"]
    assert c.verdict == "refuted"
    assert c.evidence[0].worst_ratio > THRESHOLD
    assert c.evidence[0].data["allowance"] == KINDS["orthogonal-map"].allowance


def test_no_digit_promised_means_not_judged() -> None:
    """Where 30 n eps kappa >= 1 a correct evaluation may return anything: such cases are counted
    and left unjudged, never refuted."""
    assert beyond(1e16, 2.0**-53, 4) and not beyond(10.0, 2.0**-53, 4)
    skip = unpromised(1e16, 2.0**-53, 4)
    assert skip is not None and skip.beyond and unpromised(10.0, 2.0**-53, 4) is None
    notes = " ".join(e.notes for e in by_check("expm_scaled")["orthogonal"].evidence)
    assert "promises no digit" in notes
