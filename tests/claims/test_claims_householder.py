"""The householder.* claims' quick run: the evidence each one rests on, and each counterexample
replays from the JSON result (each claim's verdict is tests/claims/test_verdicts.py's test_verdict[<id>])."""

from __future__ import annotations

from pathlib import Path

import pytest

from orthoverify.backends import get_backend
from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.claims.householder import flops
from orthoverify.engine import RunContext, get_profile, get_registry, replay_from_file
from orthoverify.engine.checks import Case
from orthoverify.engine.templates import Tally
from tests.claims.claims_common import assert_rerun_identical, quick_run


def test_every_claim_has_statement_location_and_checks() -> None:
    for c in get_registry(CLAIM_MODULES):
        assert c.statement and c.where and c.checks
        if c.corrects:
            assert c.corrects in get_registry(CLAIM_MODULES)


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return quick_run("householder", tmp_path_factory)


def test_verified_claims_rest_on_more_than_a_timing(quick: Path) -> None:
    import json

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
        rep = replay_from_file(quick, c["id"], modules=CLAIM_MODULES)
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


def test_the_corrected_counts_refute_a_planted_wrong_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """householder.flops.corrected's check can fail: Table 2's FP stated one flop high is refuted at
    the smallest point of the grid, and its replay names the row."""
    right = flops.corrected_items

    def planted(case: Case) -> list[Tally]:
        return [(w, s + 1 if w.startswith("Table 2: FP") else s, c) for w, s, c in right(case)]

    check = flops.checks(True)[0]
    ctx = RunContext("householder.flops.corrected", "count", get_backend("sympy"), get_profile("quick"), 0)
    assert check.run(ctx).passed
    monkeypatch.setattr(flops, "corrected_items", planted)
    ev = flops.checks(True)[0].run(ctx)
    assert not ev.passed and ev.counterexample is not None and ev.counterexample.inputs == {"n": "2", "m": "1"}
    assert ev.counterexample.value == "Table 2: FP (4n-m+2)m: stated 10, counted 9"
