"""The worked example of docs/adding-a-claim.md works as printed: registered as an extra claims
module it is verified, and with a planted defect it is refuted with an exact counterexample."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from orthoverify.engine import Registry, run_checks

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "adding-a-claim.md"


def example_source() -> str:
    """The guide's claim file: its first Python block."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    assert blocks and "householder.involution" in blocks[0]
    return str(blocks[0])


def register(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> tuple[str, ...]:
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    return (name,)


def test_guide_example_is_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    modules = register(tmp_path, monkeypatch, "guide_involution", example_source())
    (claim,) = Registry(modules)
    assert claim.id == "householder.involution" and claim.paper == "householder"
    result = run_checks(["householder.involution"], profile="quick", workers=1, modules=modules)
    (c,) = result.claims
    assert c.verdict == "verified", c.notes()
    assert {e.method for e in c.evidence} >= {"symbolic", "float", "high-precision"}


def test_guide_example_refutes_a_planted_defect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = example_source()
    planted = source.replace('    return b.eye(int(case["n"]))', '    return -b.eye(int(case["n"]))')
    assert planted != source
    modules = register(tmp_path, monkeypatch, "guide_involution_planted", planted)
    result = run_checks(["householder.involution"], profile="quick", workers=1, modules=modules)
    (c,) = result.claims
    assert c.verdict == "refuted"
    assert c.counterexample is not None and c.counterexample.precision_digits == "exact"
