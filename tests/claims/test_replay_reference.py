"""`orthoverify replay` reproduces every counterexample of the committed reference run and
prints the breaking quantity in float64 and at high precision (or exactly)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from orthoverify.cli import main
from orthoverify.tolerance import THRESHOLD

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reports" / "check-default.json"
REFUTED = [c["id"] for c in json.loads(REFERENCE.read_text())["claims"] if c["counterexample"]]


def test_the_reference_run_has_counterexamples() -> None:
    data = json.loads(REFERENCE.read_text())
    assert len(REFUTED) == data["summary"]["refuted"] > 0


@pytest.mark.parametrize("claim_id", REFUTED)
def test_replay_reproduces(claim_id: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["replay", str(REFERENCE), claim_id], out=out, err=err)
    text = out.getvalue()
    assert code == 0, text + err.getvalue()
    assert "reproduced: yes" in text and "\ninputs:\n" in text and "\ncompared: " in text
    out = io.StringIO()
    assert main(["replay", str(REFERENCE), claim_id, "--json"], out=out) == 0
    doc = json.loads(out.getvalue())
    assert doc["claim"] == claim_id and doc["reproduced"] is True
    labels = [a["label"] for a in doc["arithmetics"]]
    if doc["precision_digits"] == "exact":
        assert labels[0].startswith("exact")
        assert len({a["value"] for a in doc["arithmetics"]}) == len(labels)  # no arithmetic repeats another
    else:  # float64 and the precision that confirmed it
        assert labels == ["float64", f"{doc['precision_digits']} digits"]


def test_replay_of_an_exact_counterexample_in_floating_point() -> None:
    out = io.StringIO()
    assert main(["replay", str(REFERENCE), "svd.claim1"], out=out) == 0
    lines = dict(line.split(": ", 1) for line in out.getvalue().splitlines() if ": " in line)
    assert lines["exact"] == "−1"  # the paper's minus sign, as the report prints it
    assert float(lines["float64"]) > THRESHOLD and float(lines["50 digits"]) > THRESHOLD  # the gap, as test ratios
    out = io.StringIO()
    assert main(["replay", str(REFERENCE), "svd.claim1", "--json"], out=out) == 0
    assert json.loads(out.getvalue())["arithmetics"][0]["value"] == "-1"  # --json keeps the file's text


def test_replay_text_writes_quantities_as_the_report_does() -> None:
    """The quantity and the values in the paper's notation (‖·‖, ε, C̃′, roots by value and
    polynomial), as the report shows them; the inputs as recorded, ASCII decimals to copy."""
    out = io.StringIO()
    assert main(["replay", str(REFERENCE), "householder.algorithm2_float"], out=out) == 0
    text = out.getvalue()
    quantities = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("quantity: ")]
    assert len(quantities) == 2 and all("‖QR − A‖" in q and "||" not in q and " ε " in q for q in quantities)
    assert '\n  A = [["1.8737031465124' in text and '\n    A = [["1.8737031465124' in text
    assert "check: float_edge" in text
    out = io.StringIO()
    assert main(["replay", str(REFERENCE), "householder.theorem2_proof"], out=out) == 0
    text = out.getvalue()
    assert "Tr(C̄′ dC)" in text and "Cbar'" not in text and "C~'" not in text
    out = io.StringIO()
    assert main(["replay", str(REFERENCE), "svd.theorem5"], out=out) == 0
    assert "CRootOf" not in out.getvalue() and "(the smallest real root of 20x³ − 10x − 1)" in out.getvalue()


def test_replay_shows_what_it_replays() -> None:
    """householder.flops counts integers: one line, not three identical ones; householder.algorithm2_float's
    large inputs are abbreviated in the text and complete in --json; the threshold comparison is stated."""
    out = io.StringIO()
    assert main(["replay", str(REFERENCE), "householder.flops"], out=out) == 0
    text = out.getvalue()
    assert "\n  n = " in text and "\n  m = " in text
    assert "exact (float64 and 50 digits give the same): " in text
    assert "\nfloat64: " not in text and "\n50 digits: " not in text
    assert "compared: exact discrepancy nonzero" in text
    out = io.StringIO()
    assert main(["replay", str(REFERENCE), "householder.algorithm2_float"], out=out) == 0
    text = out.getvalue()
    assert "--json has them all)" in text and "\ncompared: test ratio " in text and f"> threshold {THRESHOLD:g}" in text
    assert max(len(line) for line in text.splitlines() if line.startswith("  ")) < 200
    out = io.StringIO()
    assert main(["replay", str(REFERENCE), "householder.algorithm2_float", "--json"], out=out) == 0
    doc = json.loads(out.getvalue())
    recorded = next(c for c in json.loads(REFERENCE.read_text())["claims"] if c["id"] == "householder.algorithm2_float")
    assert doc["inputs"] == recorded["counterexample"]["inputs"] and doc["threshold"] == THRESHOLD


def test_replay_shows_a_failing_float64_case_where_the_run_recorded_one() -> None:
    """householder.algorithm2_float's counterexample breaks at 100 digits while its float64 value
    passes; the run's float64 evidence failed at 5.8e7 on other inputs: replay shows that case too,
    recomputed in float64 (text and --json), and says nothing of the kind where float64 fails already."""
    out = io.StringIO()
    assert main(["replay", str(REFERENCE), "householder.algorithm2_float"], out=out) == 0
    text = out.getvalue()
    head, other = text.split("float64 fails on other inputs", 1)
    assert float(dict(ln.split(": ", 1) for ln in head.splitlines() if ": " in ln)["float64"]) < THRESHOLD
    rows = dict(ln.strip().split(": ", 1) for ln in other.splitlines()[1:] if ln.startswith("  ") and ": " in ln)
    assert float(rows["float64"]) > THRESHOLD
    assert "near-identity-1e-08" in other and other.rstrip().endswith("reproduced: yes")
    out = io.StringIO()
    assert main(["replay", str(REFERENCE), "householder.algorithm2_float", "--json"], out=out) == 0
    case = json.loads(out.getvalue())["float64_case"]
    assert case["arithmetics"][0]["label"] == "float64" and case["arithmetics"][0]["ratio"] > THRESHOLD
    out = io.StringIO()
    assert main(["replay", str(REFERENCE), "svd.algorithm1"], out=out) == 0  # exact: nothing to add
    assert "float64 fails on other inputs" not in out.getvalue()
