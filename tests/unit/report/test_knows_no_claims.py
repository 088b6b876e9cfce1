"""report/ renders a result from its JSON alone: its source names no claim id, no family (paper
key) and no paper's short name, so a claim added, renamed or removed changes no line of it. What a
claim wants drawn or cited travels in the result (``claims[].figures``, ``papers``)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.engine import get_registry

REPORT = Path(__file__).resolve().parents[3] / "orthoverify" / "report"


@cache
def registry_names() -> frozenset[str]:
    """Every claim id, family key and paper short name of the registry."""
    reg = get_registry(CLAIM_MODULES)
    names = {c.id for c in reg} | {c.paper for c in reg} | set(reg.papers)
    return frozenset(names | {p.short for p in reg.papers.values() if p.short})


def violations(text: str, names: frozenset[str]) -> list[str]:
    """The names that ``text`` mentions as words (any case; ``cayley.`` counts, ``font-family`` does not)."""
    found = []
    for name in sorted(names):
        if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE):
            found.append(name)
    return found


def test_the_registry_has_names_to_look_for() -> None:
    names = registry_names()
    assert len(names) > 50 and {"cayley", "unitary"} <= names


@pytest.mark.parametrize("path", sorted(REPORT.glob("*.py")), ids=lambda p: p.name)
def test_report_source_names_no_claim_and_no_family(path: Path) -> None:
    assert violations(path.read_text(encoding="utf-8"), registry_names()) == []


def test_a_planted_claim_id_or_family_name_is_caught() -> None:
    """The planted defects the test above exists for: a figure picked by claim-id prefix, a claim id
    in a caption, a family's paper number table, a paper's short name in a title."""
    source = (REPORT / "figures.py").read_text(encoding="utf-8")
    names = registry_names()
    planted = {
        '    if not claim.id.startswith("cayley."):\n': ["cayley"],
        '    caption = "... (unitary.coverage_threshold)."\n': ["unitary", "unitary.coverage_threshold"],
        '_NUMBERS = {"001": "householder", "003": "svd"}\n': ["householder", "svd"],
        'TITLE = "uRNN: Jacobian rank"\n': ["uRNN"],
    }
    for line, expected in planted.items():
        assert violations(source + line, names) == sorted(expected), line
    assert violations("font-family:ui-monospace; a unitary-looking word: unitarily", names) == []
