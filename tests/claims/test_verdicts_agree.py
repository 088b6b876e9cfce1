"""The claims' declarations (Claim.expected, Claim.origin) are the one home of each verdict and
origin; the committed reference result, the README's claim tables, the headings of
proofs/*.md and the refuted ids reports/README.md offers to replay are checked
against them (the first three both ways: every claim is there with its
verdict, and everything there is a registered claim saying the same). Each comparison is a
function of the text, so a planted mismatch shows that it can fail."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.engine import get_registry
from orthoverify.engine.model import Claim

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reports" / "check-default.json"
PROOFS = ROOT / "proofs"
VERDICT = r"(verified|refuted|inconclusive|error)"
FIX = "run `python tools/regenerate.py` (docs/adding-a-claim.md), which writes them from the declarations"


def readme_rows(text: str) -> dict[str, tuple[str, bool]]:
    """Claim id -> (verdict, marked "(added)") from the README's tables
    (rows | `id`[, `id` ...] | verdict | text ...)."""
    out: dict[str, tuple[str, bool]] = {}
    row = rf"^\| ((?:`[a-z0-9_.-]+`(?:, )?)+) \| \**{VERDICT}\** \|(.*)$"
    for ids, verdict, rest in re.findall(row, text, re.M):
        added = rest.strip().startswith("(added)")
        out.update(dict.fromkeys(re.findall(r"`([a-z0-9_.-]+)`", ids), (verdict, added)))
    return out


def proof_headings(texts: Iterable[str]) -> dict[str, tuple[str, bool]]:
    """Claim id -> (verdict, marked "(added claim)") from proof headings (## id — verdict [(added claim)])."""
    out: dict[str, tuple[str, bool]] = {}
    heading = rf"^#{{2,3}} ([a-z0-9_.-]+) — {VERDICT}( \(added claim\))?\s*$"
    for text in texts:
        for cid, verdict, mark in re.findall(heading, text, re.M):
            out[cid] = (verdict, bool(mark))
    return out


def mismatches(found: dict[str, tuple[str, bool]], claims: list[Claim], *, every: bool) -> list[str]:
    """What ``found`` (id -> verdict, added mark) says that the declarations do not: an unknown id,
    another verdict, an added mark on a claim that is not added (and, with ``every``, a missing
    mark or a missing claim). Without ``every``, corrected twins may be left out (the README
    describes them in their printed claim's row)."""
    by_id = {c.id: c for c in claims}
    out = [f"{cid}: not a registered claim" for cid in found if cid not in by_id]
    for c in claims:
        if c.id not in found:
            if every or c.origin != "corrected":
                out.append(f"{c.id}: missing")
            continue
        verdict, added = found[c.id]
        if verdict != c.expected:
            out.append(f"{c.id}: says {verdict}, the claim declares {c.expected}")
        if added and c.origin != "added":
            out.append(f"{c.id}: marked added, the claim's origin is {c.origin}")
        if every and not added and c.origin == "added":
            out.append(f"{c.id}: not marked added, the claim's origin is added")
    return out


CLAIMS = list(get_registry(CLAIM_MODULES))


@pytest.mark.skipif(not REFERENCE.exists(), reason="no committed reference result")
def test_reference_result_agrees() -> None:
    data = json.loads(REFERENCE.read_text())
    assert {c["id"]: c["verdict"] for c in data["claims"]} == {c.id: c.expected for c in CLAIMS}, FIX


def test_readme_tables_agree() -> None:
    assert mismatches(readme_rows((ROOT / "README.md").read_text()), CLAIMS, every=False) == [], FIX


def test_proof_headings_agree() -> None:
    texts = [p.read_text() for p in sorted(PROOFS.glob("*.md"))]
    assert mismatches(proof_headings(texts), CLAIMS, every=True) == [], FIX


def replayable_ids(text: str) -> list[str]:
    """The claim ids the reference's README offers as refuted counterexamples to replay (its
    "Replay a counterexample ... (or any refuted id: ...)" paragraph)."""
    para = re.search(r"^Replay a counterexample.*?(?:\n\n|\Z)", text, re.M | re.S)
    return re.findall(r"\b([a-z]+\.[a-z0-9_]+(?:\.corrected)?)\b", para.group(0)) if para else []


@pytest.mark.skipif(not (REFERENCE.parent / "README.md").exists(), reason="no reference README")
def test_reference_readme_names_refuted_claims() -> None:
    papers = {c.paper for c in CLAIMS}
    named = [i for i in replayable_ids((REFERENCE.parent / "README.md").read_text()) if i.split(".")[0] in papers]
    by_id = {c.id: c for c in CLAIMS}
    assert named, "no replayable claim id found in the reference README"
    assert {cid: by_id[cid].expected if cid in by_id else "not registered" for cid in named} == dict.fromkeys(
        named, "refuted"
    )


def test_a_planted_disagreement_fails() -> None:
    """Each direction can fail: a flipped verdict, a row for no claim, a claim without a row or
    heading, an added mark on a catalogue claim and a missing one on an added claim."""
    readme = (ROOT / "README.md").read_text()
    flipped = readme.replace("| `svd.theorem5` | **refuted** |", "| `svd.theorem5` | verified |")
    assert mismatches(readme_rows(flipped), CLAIMS, every=False) == [
        "svd.theorem5: says verified, the claim declares refuted"
    ]
    extra = readme + "\n| `svd.theorem9` | verified | no such claim |\n"
    assert mismatches(readme_rows(extra), CLAIMS, every=False) == ["svd.theorem9: not a registered claim"]
    dropped = re.sub(r"^\| `svd.theorem5` \|.*\n", "", readme, flags=re.M)
    assert mismatches(readme_rows(dropped), CLAIMS, every=False) == ["svd.theorem5: missing"]
    proofs = (PROOFS / "svd.md").read_text()
    marked = proofs.replace("## svd.theorem5 — refuted", "## svd.theorem5 — refuted (added claim)")
    svd = [c for c in CLAIMS if c.paper == "svd"]
    assert mismatches(proof_headings([marked]), svd, every=True) == [
        "svd.theorem5: marked added, the claim's origin is catalogue"
    ]
    unmarked = proofs.replace("## svd.theorem3_sharp — verified (added claim)", "## svd.theorem3_sharp — verified")
    assert mismatches(proof_headings([unmarked]), svd, every=True) == [
        "svd.theorem3_sharp: not marked added, the claim's origin is added"
    ]
