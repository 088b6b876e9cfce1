"""Every svd.* claim of the catalogue is registered, the quick profile decides each one from its
evidence, and each counterexample replays from the JSON result."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from orthoverify.claims import svd as svd_claims
from tests.claims_common import (
    assert_counterexamples_replay,
    assert_registered,
    assert_verdicts,
    expected_verdicts,
    quick_run,
)

PAPER = "svd"
CATALOGUE = {
    "svd.reflector",
    "svd.proposition1",
    "svd.theorem1",
    "svd.theorem2",
    "svd.dimension",
    "svd.theorem3",
    "svd.lemma1",
    "svd.theorem4",
    "svd.sigma_range",
    "svd.parameter_count",
    "svd.table3",
    "svd.hprod",
    "svd.hgrad",
    "svd.algorithm1",
    "svd.flops",
    "svd.orthogonal_rnn_omission",
    "svd.claim1",
    "svd.theorem5",
    "svd.corollary1",
}
ADDED = {
    "svd.proposition1.corrected",
    "svd.theorem3_sharp",
    "svd.theorem3_proof",
    "svd.theorem3_proof.corrected",
    "svd.theorem4_proof",
    "svd.theorem4_proof.corrected",
    "svd.table3.corrected",
    "svd.hprod.corrected",
    "svd.algorithm1.corrected",
    "svd.flops.corrected",
    "svd.claim1.corrected",
}
EXPECTED = expected_verdicts("svd")


def test_catalogue_ids_are_registered() -> None:
    assert_registered(PAPER, CATALOGUE, ADDED)


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return quick_run(f"{PAPER}.*", tmp_path_factory)


def test_quick_profile_verdicts(quick: Path) -> None:
    assert_verdicts(quick, EXPECTED)


def test_every_counterexample_replays(quick: Path) -> None:
    assert_counterexamples_replay(quick)


def test_theorems_are_checked_by_every_method(quick: Path) -> None:
    data = json.loads(quick.read_text())
    by_id = {c["id"]: c for c in data["claims"]}
    for cid in ("svd.theorem1", "svd.theorem3", "svd.hgrad", "svd.algorithm1.corrected"):
        backends = {e["backend"] for e in by_id[cid]["evidence"]}
        assert "sympy" in backends and "mpmath-50" in backends, cid
        assert any("float32" in b for b in backends), cid


def test_algorithm1_printed_is_wrong_only_in_the_u_gradient() -> None:
    """The refutation names the right culprit: with m1 = 0 (no U loop) the printed algorithm is exact."""
    from orthoverify.backends import get_backend

    b = get_backend("sympy")
    rng = np.random.default_rng(3)
    n = 3
    case = {
        "h": np.array([1, -2, 3], dtype=object),
        "g": np.array([2, 1, -1], dtype=object),
        "U": np.zeros((n, 0)),
        "V": svd_claims._padded([rng.integers(1, 4, size=j).astype(object) for j in (2, 3)], n),
        "m1": 0,
        "m2": 2,
        "s": np.array([1, 2, 3], dtype=object),
    }
    assert svd_claims._alg1_measure(b, case, "printed", "exact").ratio == 0.0
    case["U"] = svd_claims._padded([np.array([1, 1, 2], dtype=object)], n)
    case["m1"] = 1
    assert svd_claims._alg1_measure(b, case, "printed", "exact").ratio == float("inf")
    assert svd_claims._alg1_measure(b, case, "corrected", "exact").ratio == 0.0


def test_table3_reconstruction_names_the_configuration() -> None:
    """Every row is explained by m1 = m2 = 16, an output bias and a learned initial state, and the
    stated m1 = m2 = 8 explains none."""
    for name, length, classes, depth, *printed in svd_claims.TABLE3:
        fits = svd_claims.explain_row(length // depth, classes, tuple(printed))  # type: ignore[arg-type]
        assert fits, name
        assert all(f["m1 = m2"] == 16 and f["output bias"] and f["learned h0 (c0)"] for f in fits), name
        assert svd_claims.table3_counts(length // depth, classes) != tuple(printed), name
