"""Every svd.* claim of the catalogue is registered, the quick profile decides each one from its
evidence, and each counterexample replays from the JSON result."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from orthoverify.claims.svd import algorithm1
from orthoverify.param.svd import stack_padded
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
        "V": stack_padded([rng.integers(1, 4, size=j).astype(object) for j in (2, 3)], n),
        "m1": 0,
        "m2": 2,
        "s": np.array([1, 2, 3], dtype=object),
    }
    assert algorithm1.alg1_measure(b, case, "printed", "exact").ratio == 0.0
    case["U"] = stack_padded([np.array([1, 1, 2], dtype=object)], n)
    case["m1"] = 1
    assert algorithm1.alg1_measure(b, case, "printed", "exact").ratio == float("inf")
    assert algorithm1.alg1_measure(b, case, "corrected", "exact").ratio == 0.0


def test_exact_replays_parse_file_strings_and_never_evaluate_them() -> None:
    """The exact replays of svd.dimension and svd.theorem5 read a result file's strings through
    the SymPy backend's strict parser: a crafted entry is a ParseError naming the field."""
    from orthoverify.backends import get_backend
    from orthoverify.claims.svd import dimension, theorem5
    from orthoverify.errors import ParseError

    crafted = '__import__("os").getpid()'
    point = ["1/2", "1", "-3/2", "-2", "2/3", "1", "11/10", "23/10"]
    assert dimension.replay_dimension({"n": "2", "point": point}, get_backend("sympy")).ratio == 0.0
    with pytest.raises(ParseError, match="point"):
        dimension.replay_dimension({"n": "2", "point": [crafted, *point[1:]]}, get_backend("sympy"))
    instance = {"Y": [["1"]], "A": [["1/10", "1"]], "Sigma": [["1", "0"], ["0", "1"]], "t": 2}
    held = theorem5.replay_theorem5_exact({**instance, "w": "-0.65"}, get_backend("sympy"))
    assert held.ratio == float("inf")  # the hand-built spurious minimum near w = -0.6505
    with pytest.raises(ParseError, match="w"):
        theorem5.replay_theorem5_exact({**instance, "w": crafted}, get_backend("sympy"))
