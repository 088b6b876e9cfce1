"""`orthoverify replay` reproduces every counterexample of the committed reference run and
prints the breaking quantity in float64 and at high precision (or exactly)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from orthoverify.cli import main

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "reference" / "check-default.json"
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
    assert "reproduced: yes" in text
    lines = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    assert "float64" in lines  # the float64 value (or why the quantity has none in floating point)
    assert "exact" in lines or any(k.endswith(" digits") for k in lines)  # and the high-precision one


def test_replay_of_an_exact_counterexample_in_floating_point() -> None:
    out = io.StringIO()
    assert main(["replay", str(REFERENCE), "svd.claim1"], out=out) == 0
    lines = dict(line.split(": ", 1) for line in out.getvalue().splitlines() if ": " in line)
    assert lines["exact"] == "-1"
    assert float(lines["float64"]) > 30 and float(lines["50 digits"]) > 30  # the gap, as test ratios
