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
from orthoverify.engine.check_names import VOCABULARY, in_vocabulary, word
from orthoverify.engine.checks import derive_seed
from orthoverify.engine.registry import Registry
from orthoverify.errors import RegistryError

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


def test_the_former_names_are_declared_by_the_families_and_name_registered_checks() -> None:
    """Each family declares its claims' former check names (``FORMERLY``, beside ``CLAIMS``); every
    renamed check exists under its new name, and no old name is a check name now (so a new result's
    names pass through ``current_name`` unchanged). The registry refuses a table that breaks this."""
    registry = get_registry(MODULES)
    assert len(registry.formerly) == 81 and sum(len(v) for v in registry.formerly.values()) == 183
    for claim_id, names in registry.formerly.items():
        now = {c.name for c in registry[claim_id].checks}
        assert set(names.values()) <= now, claim_id
        assert not set(names) & now, claim_id
        assert all(registry.current_name(claim_id, n) == n for n in now)
        assert all(registry.current_name(claim_id, old) == new for old, new in names.items())
        assert all(registry.seed_name(claim_id, new) == old for old, new in names.items())


PLANTED = """from orthoverify.engine.checks import FunctionCheck, Outcome
from orthoverify.engine.model import Claim

CLAIMS = [
    Claim(id="planted.one", paper="planted", statement="s", kind="count", checks=(
        FunctionCheck("float", lambda ctx: Outcome(True, 1), ("numpy-float64",), "float", "q"),
    ))
]
FORMERLY = {formerly!r}
"""


@pytest.mark.parametrize(
    ("case", "formerly", "message"),
    [
        (0, {"planted.none": {"old": "float"}}, "not registered"),
        (1, {"planted.one": {"old": "search"}}, "does not have"),
        (2, {"planted.one": {"float": "float"}}, "are check names now"),
    ],
)
def test_a_bad_former_name_is_refused(
    case: int, formerly: dict[str, dict[str, str]], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planted tables the registry must refuse: a claim it does not have, a check the claim does
    not have, an old name that is a check's name now."""
    (tmp_path / f"planted_formerly_{case}.py").write_text(PLANTED.format(formerly=formerly))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RegistryError, match=message):
        Registry((f"planted_formerly_{case}",))


def test_a_renamed_check_keeps_the_seed_of_its_old_name() -> None:
    claim = "householder.algorithm2_float"
    registry = get_registry(MODULES)
    assert registry.formerly[claim]["float_near_aligned"] == "float_edge"
    assert registry.seed_name(claim, "float_edge") == "float_near_aligned"
    assert derive_seed(0, claim, registry.seed_name(claim, "float_edge")) == derive_seed(0, claim, "float_near_aligned")
    assert registry.seed_name(claim, "float") == "float_generic"  # renamed too: its own old name
    assert derive_seed(0, claim, "float_near_aligned") != derive_seed(0, claim, "float_generic")
    assert registry.seed_name(claim, "no_such_check") == "no_such_check"  # never renamed: its own name


@pytest.mark.parametrize(
    "claim_id", ["householder.algorithm2_float", "cayley.parameter_count", "svd.claim1", "unitary.chain_rule"]
)
def test_a_counterexample_recorded_under_its_old_check_name_replays(claim_id: str, tmp_path: Path) -> None:
    """The reference with each counterexample's check put back to its name before the vocabulary
    (as older result files carry it) replays through the renamed check."""
    data = json.loads(REFERENCE.read_text())
    (claim,) = [c for c in data["claims"] if c["id"] == claim_id]
    cx = claim["counterexample"]
    old = get_registry(MODULES).seed_name(claim_id, cx["check"])
    assert old != cx["check"]  # these four were renamed
    cx["check"] = old
    data["claims"] = [claim]
    path = tmp_path / "old-names.json"
    path.write_text(json.dumps(data))
    out = io.StringIO()
    assert main(["replay", str(path), claim_id, "--json"], out=out) == 0
    doc = json.loads(out.getvalue())
    assert doc["reproduced"] is True and doc["check"] == old
