"""Every registered claim has its entry in proofs/<paper>.md."""

from __future__ import annotations

import re
from pathlib import Path

from orthoverify.engine import get_registry

ROOT = Path(__file__).resolve().parents[1]


def test_every_claim_has_a_proof_entry() -> None:
    for claim in get_registry():
        text = (ROOT / "proofs" / f"{claim.paper}.md").read_text()
        headings = set(re.findall(r"^#{2,3} ([a-z0-9_.]+) ", text, re.M))
        assert claim.id in headings, f"proofs/{claim.paper}.md has no entry for {claim.id}"
