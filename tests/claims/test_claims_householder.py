"""Every householder.* claim of the catalogue is registered, and the quick profile decides each
one from its evidence; each counterexample replays from the JSON result."""

from __future__ import annotations

from pathlib import Path

import pytest

from orthoverify.engine import get_registry, replay_from_file
from tests.claims.claims_common import (
    assert_registered,
    assert_rerun_identical,
    assert_verdicts,
    expected_verdicts,
    quick_run,
)

# the householder ids of the claim catalogue (stable public ids)
CATALOGUE = {
    "householder.reflection",
    "householder.theorem1",
    "householder.algorithm2",
    "householder.two_reflections_2x2",
    "householder.orthogonal_when",
    "householder.parameter_count",
    "householder.proposition1",
    "householder.theorem2",
    "householder.algorithm1",
    "householder.flops",
    "householder.complexity",
}
# claims added from the paper (proof lines, implicit numerical claims) and corrected forms
ADDED = {
    "householder.algorithm2_float",
    "householder.algorithm2_float.corrected",
    "householder.theorem2_proof",
    "householder.theorem2_proof.corrected",
    "householder.algorithm1_derivation",
    "householder.algorithm1_derivation.corrected",
    "householder.flops.corrected",
}
EXPECTED = expected_verdicts("householder")


def test_catalogue_ids_are_registered() -> None:
    assert_registered("householder", CATALOGUE, ADDED, catalogue_exact=False)


def test_every_claim_has_statement_location_and_checks() -> None:
    for c in get_registry():
        assert c.statement and c.where and c.checks
        if c.corrects:
            assert c.corrects in get_registry()


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return quick_run("householder", tmp_path_factory)


def test_quick_profile_verdicts(quick: Path) -> None:
    import json

    assert_verdicts(quick, EXPECTED)
    for c in json.loads(quick.read_text())["claims"]:
        if c["verdict"] == "verified":
            assert {e["method"] for e in c["evidence"]} - {"measured"}  # evidence beyond a timing


def test_every_counterexample_replays(quick: Path) -> None:
    import json

    data = json.loads(quick.read_text())
    refuted = [c for c in data["claims"] if c["verdict"] == "refuted"]
    assert refuted
    for c in refuted:
        cx = c["counterexample"]
        assert cx["precision_digits"] == "exact" or cx["precision_digits"] >= 50
        rep = replay_from_file(quick, c["id"])
        assert rep.reproduced, c["id"]


def test_same_seed_same_verdicts_and_counterexamples(quick: Path) -> None:

    # in this process (test modules loaded) against fresh worker processes: Hypothesis searches
    # must not depend on which modules happen to be loaded
    ids = [
        "householder.algorithm2_float",
        "householder.theorem2_proof",
        "householder.flops",
        "householder.theorem1",
        "householder.reflection",
        "householder.theorem2",
    ]
    assert_rerun_identical(quick, ids)
