"""Every registered claim has its entry in proofs/<paper>.md."""

from __future__ import annotations

import re
from pathlib import Path

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


PLACE_FROM_THE_CLAIM = ("householder", "cayley")
"""Families whose proofs entries spell each claim's place as Claim.where renders it (the others
still write it by hand)."""


def test_each_entry_spells_the_place_its_claim_declares() -> None:
    """A claim's place in the paper has one home, Claim.place: the entry of a claim as printed (or
    as orthoverify states it) opens with **Printed (where).** or **Statement (where).**, with
    ``where`` exactly as the claim renders it, so the two cannot drift apart."""
    from orthoverify.report.model import proof_entry

    for claim in get_registry(CLAIM_MODULES):
        if claim.paper not in PLACE_FROM_THE_CLAIM or claim.corrects is not None:
            continue
        entry = proof_entry(ROOT / "proofs", claim.paper, claim.id)
        assert entry is not None, claim.id
        spelled = (f"**Printed ({claim.where}).**", f"**Statement ({claim.where}).**")
        assert any(s in entry.body for s in spelled), f"proofs/{claim.paper}.md, {claim.id}: not {spelled[0]!r}"
