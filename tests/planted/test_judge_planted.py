"""Measuring the judge: every planted target of ``tests/planted/judge_planted.py`` gets, on the quick
profile (``ORTHOVERIFY_PLANTED_PROFILE=default``: the default one), exactly the verdict pinned for
each of its checks; every broken one is caught by the check that names its defect, and no correct
one is refuted anywhere (the README's figures)."""

from __future__ import annotations

import pytest

from tests.planted.judge_planted import BROKEN, CORRECT, SECOND_ORDER, UPSTREAM, Planted, profile, result, verdicts


def test_the_profile_is_quick_unless_the_environment_names_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ORTHOVERIFY_PLANTED_PROFILE", raising=False)
    assert profile() == "quick"
    monkeypatch.setenv("ORTHOVERIFY_PLANTED_PROFILE", "default")
    assert profile() == "default"
    monkeypatch.setenv("ORTHOVERIFY_PLANTED_PROFILE", "thorough")
    with pytest.raises(ValueError, match="quick or default"):
        profile()


@pytest.mark.slow
@pytest.mark.parametrize("planted", CORRECT + BROKEN + UPSTREAM, ids=lambda p: p.name)
def test_every_check_gives_the_pinned_verdict(planted: Planted) -> None:
    got = verdicts(planted.name)
    assert got == planted.expected(list(got)), {k: v for k, v in got.items() if v != planted.expected(list(got))[k]}
    assert "error" not in got.values()  # a target's behaviour never makes orthoverify err
    for c in result(planted.name).claims:  # a refutation always shows its input, and only a refutation
        assert (c.counterexample is not None) == (c.verdict in ("refuted", "fragile")), c.claim.id


@pytest.mark.slow
def test_the_figures() -> None:
    """Broken caught (refuted on the check naming the defect) and correct passing (no refutation)."""
    caught = [p.name for p in BROKEN if verdicts(p.name)[str(p.defect)] == "refuted"]
    passing = [
        p.name for p in CORRECT if not any(v == "refuted" for k, v in verdicts(p.name).items() if k not in SECOND_ORDER)
    ]
    assert len(caught) == len(BROKEN) and len(passing) == len(CORRECT)
    for p in BROKEN:  # each finding names its defect with a counterexample that replays
        c = next(c for c in result(p.name).claims if c.claim.id.endswith("." + str(p.defect)))
        assert c.counterexample is not None, p.name


@pytest.mark.slow
@pytest.mark.parametrize("planted", [p for p in UPSTREAM if p.defect], ids=lambda p: p.name)
def test_an_inherited_defect_is_one_finding_whose_cause_is_the_measured_operation(planted: Planted) -> None:
    """The finding rooted at the check naming the inherited defect names the torch operation blame
    measured (not the user's formula), with a workaround measured to pass."""
    found = {f["check"]: f for f in result(planted.name).meta["validate"]["findings"]}
    assert planted.cause in found[str(planted.defect)].get("cause", ""), found
    assert "workaround measured to pass" in found[str(planted.defect)]["cause"]
