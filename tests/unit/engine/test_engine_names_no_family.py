"""The engine names no family: no string or name in the code of orthoverify/engine/ is a claim id
or a family's key, so the claims (and their facts: papers, former check names, figures) are data
the engine is given. Docstrings may cite a claim as an example; code may not branch on one."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.engine import get_registry

ENGINE = Path(__file__).resolve().parents[3] / "orthoverify" / "engine"


@cache
def family_names() -> frozenset[str]:
    """Every claim id and family key of the registry."""
    reg = get_registry(CLAIM_MODULES)
    return frozenset({c.id for c in reg} | {c.paper for c in reg} | set(reg.papers))


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
        if isinstance(node, (ast.Module, ast.ClassDef)):  # attribute docstrings: a string after an assignment
            for prev, cur in zip(node.body, node.body[1:], strict=False):
                if not isinstance(prev, (ast.Assign, ast.AnnAssign)) or not isinstance(cur, ast.Expr):
                    continue
                if isinstance(cur.value, ast.Constant):
                    out.add(id(cur.value))
    return out


def named_families(source: str, names: frozenset[str]) -> list[str]:
    """The claim ids and family keys that ``source``'s code (strings other than docstrings,
    identifiers) names: as a whole word of a string, or a whole identifier."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    words: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            words |= {w for w in names if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", node.value, re.I)}
        elif isinstance(node, ast.Name) and node.id.lower() in names:
            words.add(node.id.lower())
        elif isinstance(node, ast.Attribute) and node.attr.lower() in names:
            words.add(node.attr.lower())
        elif isinstance(node, (ast.Import, ast.ImportFrom)):  # a family module imported
            dotted = [a.name for a in node.names] + (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            )
            words |= {part for d in dotted for part in d.lower().split(".") if part in names}
    return sorted(words)


@pytest.mark.parametrize("path", sorted(ENGINE.glob("*.py")), ids=lambda p: p.name)
def test_engine_code_names_no_claim_and_no_family(path: Path) -> None:
    assert named_families(path.read_text(encoding="utf-8"), family_names()) == []


def test_a_planted_family_in_engine_code_is_caught() -> None:
    """The defects this guards against: the former-names table keyed by claim id (engine/check_names.py
    before the families declared it), a branch on a claim-id prefix, an import of a family."""
    names = family_names()
    planted = {
        'RENAMED = {"householder.reflection": {"exact_rational": "exact"}}\n': [
            "householder",
            "householder.reflection",
        ],
        'def f(claim):\n    return claim.id.startswith("cayley.")\n': ["cayley"],
        "from orthoverify.claims import svd\n": ["svd"],
    }
    for code, expected in planted.items():
        assert named_families(code, names) == sorted(expected), code
    assert named_families('"""A docstring may cite unitary.coverage as an example."""\nX = 1\n', names) == []
