"""Every registered claim declares its front matter (Claim.place, .origin, .summary, .expected),
once: its place in the paper as structured fields, rendered to the one spelling ``where`` shows;
``.corrected`` twins and only they are of origin "corrected"; the rest of the suite (the golden
verdicts, the README's tables, the proofs' headings, the reference) reads or checks these."""

from __future__ import annotations

import pytest

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.engine import get_registry
from orthoverify.engine.model import Claim, Place
from orthoverify.errors import RegistryError


def test_every_claim_declares_its_front_matter() -> None:
    for c in get_registry(CLAIM_MODULES):
        assert c.place is not None and c.where == c.place.render(), c.id
        assert c.expected in ("verified", "refuted", "inconclusive"), c.id
        assert c.origin in ("catalogue", "added", "corrected"), c.id
        assert c.summary and "\n" not in c.summary and len(c.summary) <= 120, c.id
        assert c.statement and c.checks


def test_corrected_twins_are_of_origin_corrected() -> None:
    for c in get_registry(CLAIM_MODULES):
        assert (c.origin == "corrected") == (c.corrects is not None) == c.id.endswith(".corrected"), c.id


def test_each_family_has_catalogue_claims() -> None:
    by_paper: dict[str, set[str]] = {}
    for c in get_registry(CLAIM_MODULES):
        by_paper.setdefault(c.paper, set()).add(str(c.origin))
    assert by_paper and all("catalogue" in origins for origins in by_paper.values())


def test_place_renders_one_spelling() -> None:
    assert Place(theorem="5", section="6.2", note="and its proof").render() == "Thm 5, Sec. 6.2 (and its proof)"
    assert Place(equation="14-15", theorem="2").render() == "Thm 2, eqs. 14-15"
    assert Place(table="2 and 5", section="4.2").render() == "Sec. 4.2, Tables 2 and 5"
    more = (Place(source="A et al.", section="3.2"), Place(source="W et al.", note="2016"))
    both = Place(source="A et al.", section="1", also=more)
    assert both.render() == "A et al. Sec. 1; Sec. 3.2; W et al. (2016)"
    with pytest.raises(RegistryError, match="at least one"):
        Place()


def _claim(**kw: object) -> Claim:
    from orthoverify.engine.templates import witness

    check = witness("w", lambda b, case: 0.0, candidates=lambda ctx: [], backends=("numpy-float64",), quantity_name="q")
    args: dict[str, object] = {"id": "planted.x", "paper": "planted", "statement": "s", "kind": "bound"}
    args["checks"] = (check,)
    return Claim(**(args | kw))  # type: ignore[arg-type]


def test_bad_front_matter_is_refused() -> None:
    assert _claim(place=Place(section="1")).where == "Sec. 1"
    with pytest.raises(RegistryError, match="not both"):
        _claim(place=Place(section="1"), where="Sec. 1")
    with pytest.raises(RegistryError, match="expected verdict"):
        _claim(expected="fine")
    with pytest.raises(RegistryError, match="origin"):
        _claim(origin="borrowed")
    with pytest.raises(RegistryError, match="corrected"):
        _claim(origin="corrected")
    with pytest.raises(RegistryError, match="one line"):
        _claim(summary="two\nlines")
