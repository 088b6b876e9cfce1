"""One home per verdict: tests/data/expected_verdicts.json. The committed reference result, the
README's claim tables and the headings of proofs/*.md must say the same for every claim."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from orthoverify.engine import get_registry
from tests.claims.claims_common import expected_verdicts

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reports" / "check-default.json"
VERDICT = r"(verified|refuted|inconclusive|error)"


def readme_verdicts() -> dict[str, str]:
    """Claim id -> verdict from the README's tables (rows | `id`[, `id` ...] | verdict | ...)."""
    text = (ROOT / "README.md").read_text()
    out: dict[str, str] = {}
    for ids, verdict in re.findall(rf"^\| ((?:`[a-z0-9_.-]+`(?:, )?)+) \| \**{VERDICT}\** \|", text, re.M):
        out.update(dict.fromkeys(re.findall(r"`([a-z0-9_.-]+)`", ids), verdict))
    return out


def proof_verdicts() -> dict[str, str]:
    """Claim id -> verdict from the headings of proofs/*.md (## id — verdict ...)."""
    out: dict[str, str] = {}
    for path in sorted((ROOT / "proofs").glob("*.md")):
        out.update(re.findall(rf"^#{{2,3}} ([a-z0-9_.-]+) — {VERDICT}\b", path.read_text(), re.M))
    return out


def test_expected_verdicts_cover_the_registry() -> None:
    assert set(expected_verdicts()) == set(get_registry().ids())


@pytest.mark.skipif(not REFERENCE.exists(), reason="no committed reference result")
def test_reference_result_agrees() -> None:
    data = json.loads(REFERENCE.read_text())
    assert {c["id"]: c["verdict"] for c in data["claims"]} == expected_verdicts()


def test_readme_tables_agree() -> None:
    listed = readme_verdicts()
    expected = expected_verdicts()
    assert listed, "no claim table found in the README"
    assert {cid: v for cid, v in listed.items() if expected.get(cid) != v} == {}
    assert {cid.split(".")[0] for cid in listed} == {cid.split(".")[0] for cid in expected}  # a table per paper


def test_proof_headings_agree() -> None:
    headed = proof_verdicts()
    expected = expected_verdicts()
    assert headed, "no verdict headings found in proofs/"
    assert {cid: v for cid, v in headed.items() if expected.get(cid) != v} == {}
