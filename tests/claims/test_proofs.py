"""Every registered claim has its entry in proofs/<paper>.md."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.engine import get_registry

ROOT = Path(__file__).resolve().parents[2]


def test_every_claim_has_a_proof_entry() -> None:
    for claim in get_registry(CLAIM_MODULES):
        text = (ROOT / "proofs" / f"{claim.paper}.md").read_text()
        headings = set(re.findall(r"^#{2,3} ([a-z0-9_.]+) ", text, re.M))
        assert claim.id in headings, f"proofs/{claim.paper}.md has no entry for {claim.id}"


def test_every_proof_entry_names_the_statement_and_the_checks_that_certify_it() -> None:
    from orthoverify.report.model import proof_entry

    for claim in get_registry(CLAIM_MODULES):
        entry = proof_entry(ROOT / "proofs", claim.paper, claim.id)
        assert entry is not None, claim.id
        names = [c.name for c in claim.checks]
        assert any(f"`{n}`" in entry.body or n in entry.body for n in names), (
            f"proofs/{claim.paper}.md, {claim.id}: names none of its checks {names}"
        )
        if claim.corrects is None:  # the statement as printed (or, for an added claim, as orthoverify states it)
            assert re.search(r"\*\*(Printed|Statement|Added)", entry.body), f"{claim.id}: no statement"


PLACES_FROM_DECLARATIONS = ("unitary", "householder", "cayley")
"""Families whose proofs cite each claim's place exactly as its declaration renders it
(``Claim.where``), so that the place is written once, in ``Claim.place``, and checked here."""

LABEL = re.compile(r"^\*\*(Printed|Statement|Corrected)(?: \((.*)\))?\.\*\*", re.M)


@pytest.mark.parametrize("paper", PLACES_FROM_DECLARATIONS)
def test_proof_statements_cite_the_declared_place(paper: str) -> None:
    """Each entry opens with ``**Printed (<where>).**`` or ``**Statement (<where>).**`` (the form
    tools/regenerate.py writes), ``where`` the claim's rendered place, both ways: a changed place or
    a hand-spelled one fails. A corrected twin's ``**Corrected.**`` names its place only where it
    differs from the printed claim's."""
    from orthoverify.report.model import proof_entry

    claims = {c.id: c for c in get_registry(CLAIM_MODULES) if c.paper == paper}
    for claim in claims.values():
        entry = proof_entry(ROOT / "proofs", paper, claim.id)
        assert entry is not None, claim.id
        m = LABEL.search(entry.body)
        assert m is not None, f"proofs/{paper}.md, {claim.id}: no statement label"
        twin = claims.get(claim.corrects or "")
        assert (m.group(1) == "Corrected") == (twin is not None), f"proofs/{paper}.md, {claim.id}: {m.group(0)}"
        want = None if twin is not None and twin.where == claim.where else claim.where
        assert m.group(2) == want, f"proofs/{paper}.md, {claim.id}: cites {m.group(2)!r}, declared {want!r}"


def test_the_drift_figures_quoted_in_the_proofs_are_the_reference_result() -> None:
    """proofs/cayley.md quotes cayley.orthogonality_drift's figures; their one home is the committed
    default result, so every number of the quoted bullets must appear in that result's notes."""
    from orthoverify.report.model import proof_entry

    entry = proof_entry(ROOT / "proofs", "cayley", "cayley.orthogonality_drift")
    assert entry is not None
    result = json.loads((ROOT / "reports" / "check-default.json").read_text())
    claim = next(c for c in result["claims"] if c["id"] == "cayley.orthogonality_drift")
    notes = {e["backend"].split("-")[-1]: e["notes"] for e in claim["evidence"]}
    bullets = {m[0]: m[1] for m in re.findall(r"^\* (float64|float32): (.*(?:\n  .*)*)", entry.body, re.M)}
    assert set(bullets) == {"float64", "float32"}, bullets
    for dtype, text in bullets.items():
        quoted = re.findall(r"\d+\.\d+", text.replace("·10³", "e+03"))
        assert quoted, text
        written = set(re.findall(r"\d+\.\d+(?:e[+-]\d+)?", notes[dtype]))
        missing = [q for q in quoted if q not in written and f"{q}e+03" not in written]
        assert not missing, f"proofs/cayley.md quotes {missing} for {dtype}; the reference notes say {notes[dtype]!r}"
