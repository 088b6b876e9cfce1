"""The check names: every registered check is named from the fixed vocabulary, and a result written
before it (with the old names) still replays, with the cases its old names seeded."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from orthoverify.claims import MODULES
from orthoverify.cli import main
from orthoverify.engine import get_registry
from orthoverify.engine.check_names import RENAMED, VOCABULARY, current_name, in_vocabulary, seed_name, word
from orthoverify.engine.checks import derive_seed

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reports" / "check-default.json"


def test_every_registered_check_is_named_from_the_vocabulary() -> None:
    names = {c.name for claim in get_registry(MODULES) for c in claim.checks}
    assert sorted(n for n in names if not in_vocabulary(n)) == []
    assert {word(n) for n in names} == set(VOCABULARY)  # and every word is in use
    assert len(VOCABULARY) <= 25


@pytest.mark.parametrize(
    ("name", "ok"),
    [("float", True), ("float:inverse", True), ("float:Inverse", False), ("floats", False), ("float:", False)],
)
def test_a_qualifier_is_a_lowercase_word_after_a_vocabulary_word(name: str, ok: bool) -> None:
    assert in_vocabulary(name) is ok


def test_the_renaming_table_names_registered_claims_and_their_checks() -> None:
    """Every renamed check exists under its new name, and no old name is a check name now (so a
    new result's names pass through :func:`current_name` unchanged)."""
    registry = get_registry(MODULES)
    for claim_id, names in RENAMED.items():
        now = {c.name for c in registry[claim_id].checks}
        assert set(names.values()) <= now, claim_id
        assert not set(names) & now, claim_id
        assert all(current_name(claim_id, n) == n for n in now)
        assert all(seed_name(claim_id, new) == old for old, new in names.items())


def test_a_renamed_check_keeps_the_seed_of_its_old_name() -> None:
    claim = "householder.algorithm2_float"
    assert RENAMED[claim]["float_near_aligned"] == "float_edge"
    assert derive_seed(0, claim, "float_edge") == derive_seed(0, claim, "float_near_aligned")
    assert derive_seed(0, claim, "float_edge") != derive_seed(0, claim, "float")


@pytest.mark.parametrize(
    "claim_id", ["householder.algorithm2_float", "cayley.parameter_count", "svd.claim1", "unitary.chain_rule"]
)
def test_a_counterexample_recorded_under_its_old_check_name_replays(claim_id: str, tmp_path: Path) -> None:
    """The reference with each counterexample's check put back to its name before the vocabulary
    (as older result files carry it) replays through the renamed check."""
    data = json.loads(REFERENCE.read_text())
    (claim,) = [c for c in data["claims"] if c["id"] == claim_id]
    cx = claim["counterexample"]
    old = seed_name(claim_id, cx["check"])
    assert old != cx["check"]  # these four were renamed
    cx["check"] = old
    data["claims"] = [claim]
    path = tmp_path / "old-names.json"
    path.write_text(json.dumps(data))
    out = io.StringIO()
    assert main(["replay", str(path), claim_id, "--json"], out=out) == 0
    doc = json.loads(out.getvalue())
    assert doc["reproduced"] is True and doc["check"] == old
