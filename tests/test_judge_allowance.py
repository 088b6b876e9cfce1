"""The judge scales every ratio by what a correct, backward-stable evaluation promises at that
input (LAPACK's error / (n eps kappa)): correct Cayley and exponential maps pass at every
magnitude, maps broken at ordinary sizes still fail, and the evidence says which allowance it used."""

from __future__ import annotations

import numpy as np
import pytest

from orthoverify.conformance import KINDS, validate
from orthoverify.conformance.kinds import free_map_condition

T = "tests.conformance_targets:"


def by_check(spec: str, kind: str | None = "orthogonal-map", profile: str = "quick") -> dict[str, object]:
    r = validate(spec, kind=kind, profile=profile)
    return {c.claim.id.rsplit(".", 1)[1]: c for c in r.claims}


def test_the_free_map_allowance_bounds_cayley_conditioning() -> None:
    """1 + 2||X||_F >= cond(I + A) for both skew parts a Cayley map may take from X."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        x = rng.standard_normal((4, 4)) * 10.0 ** rng.integers(-3, 4)
        kappa = free_map_condition({"X": x})
        for a in (x - x.T, np.tril(x, -1) - np.tril(x, -1).T):
            assert np.linalg.cond(np.eye(4) + a) <= kappa * (1 + 1e-12)
    assert all(k.allowance for k in KINDS.values())


@pytest.mark.parametrize("name", ["cayley_textbook", "expm_scaled", "reflections"])
def test_correct_maps_pass_at_every_magnitude(name: str) -> None:
    by = by_check(T + name)
    for check in ("orthogonal", "float32", "batch"):
        c = by[check]
        assert c.verdict == "verified", (check, [e.notes for e in c.evidence])  # type: ignore[attr-defined]
    ev = by["orthogonal"].evidence[0]  # type: ignore[attr-defined]
    assert ev.data["allowance"] == KINDS["orthogonal-map"].allowance and "allowance" in ev.notes


@pytest.mark.parametrize("name", ["expm_truncated", "cayley_not_skew", "reflections_unnormalised"])
def test_maps_wrong_at_ordinary_sizes_still_fail(name: str) -> None:
    c = by_check(T + name)["orthogonal"]
    assert c.verdict == "refuted"  # type: ignore[attr-defined]
    assert c.evidence[0].worst_ratio > 30  # type: ignore[attr-defined]
