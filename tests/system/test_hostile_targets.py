"""Hostile targets (issue 26) through the real ``orthoverify validate`` CLI: each wrong map is
refuted (or its attack reported as a finding), exit 1, whatever it does to the verifier's
operations in its own process. The targets are in ``tests/planted/hostile_targets.py``."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orthoverify.cli import main
from tests.planted import hostile_targets

ROOT = Path(__file__).resolve().parents[2]
H = "tests.planted.hostile_targets:"
KIND = "householder-product"


def validate(name: str, tmp_path: Path) -> tuple[int, dict[str, dict[str, Any]], str]:
    """Exit status, the result's claims by check name, and the terminal output of a quick float64
    ``orthoverify validate`` of the hostile target ``name``."""
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / f"{name}.json"
    argv = ["validate", H + name, "--kind", KIND, "--profile", "quick", "--dtype", "float64", "--json", str(path)]
    code = main(argv, out=out, err=err)
    data = json.loads(path.read_text(encoding="utf-8"))
    claims = {c["id"].rsplit(".", 1)[1]: c for c in data["claims"]}
    return code, claims, out.getvalue() + err.getvalue()


def verdicts(claims: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {k: str(c["verdict"]) for k, c in claims.items()}


@pytest.mark.slow
def test_rebinding_the_verifiers_operations_does_not_hide_a_wrong_map(tmp_path: Path) -> None:
    """2Q that, on its first call, rebinds what its process could serve the verifier with (the
    lookup of operations by name, orthoverify's modules' attributes, torch.Tensor's reading
    methods): the child's program was bound before the target was imported, and the verifier
    measures 2Q. (Before the fixed program, every check was verified: exit 0.)"""
    code, claims, out = validate("rebinds_operations", tmp_path)
    got = verdicts(claims)
    assert code == 1, out
    assert got["orthogonal"] == got["forward"] == got["gradient"] == "refuted", got
    assert "error" not in got.values(), got


@pytest.mark.slow
def test_a_tensor_subclass_that_lies_about_its_values_is_read_as_it_is(tmp_path: Path) -> None:
    """2Q as a torch.Tensor subclass whose detach()/to() give itself and numpy() the identity: the
    output is read through torch.Tensor's own methods, so 2Q is judged. (Before, the identity was
    read: orthogonal and determinism verified.)"""
    code, claims, out = validate("lying_subclass", tmp_path)
    got = verdicts(claims)
    assert code == 1, out
    assert got["orthogonal"] == "refuted" and got["forward"] == "refuted", got
    assert "error" not in got.values(), got


@pytest.mark.slow
def test_nan_on_the_first_call_is_an_intermittent_finding_and_the_rest_still_runs(tmp_path: Path) -> None:
    """NaN on the process's first call, the correct Q after: the NaN on finite input is refuted as
    intermittent, and every other check runs (and passes). (Before: exit 0, output failed and
    unconfirmed, the other checks not run.)"""
    code, claims, out = validate("nan_on_first_call", tmp_path)
    got = verdicts(claims)
    assert code == 1, out
    assert got["output"] == "refuted", got
    (ev,) = claims["output"]["evidence"]
    assert "intermittent" in ev["data"] and "Intermittent" in ev["notes"], ev
    assert claims["output"]["counterexample"] is not None
    others = {k: v for k, v in got.items() if k != "output"}
    assert set(others.values()) == {"verified"}, others


@pytest.mark.slow
def test_an_input_mutation_is_seen_even_when_the_comparison_is_rebound(tmp_path: Path) -> None:
    """A target that zeroes its argument and rebinds, in its process, the comparison that would
    see it: the arguments travel back after the call and are compared in the verifier. (Before,
    the rebound comparison hid it: side_effects verified.)"""
    code, claims, out = validate("mutates_and_hides", tmp_path)
    got = verdicts(claims)
    assert code == 1, out
    assert got["side_effects"] == "refuted", got
    notes = " ".join(e["notes"] for e in claims["side_effects"]["evidence"])
    assert "mutates its input" in notes, notes


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="finds its connection through /proc")
@pytest.mark.parametrize(
    ("name", "seen"),
    [("sends_a_partial_answer", "no answer within 5 s"), ("announces_an_endless_answer", "an unreadable answer")],
)
def test_an_answer_forged_on_the_connection_cannot_hold_the_verifier(tmp_path: Path, name: str, seen: str) -> None:
    """The negated reflection that writes straight onto its connection to the verifier, once: a
    length with too little after it, or a 1 TB length. The per-call timeout covers the whole
    answer and a length beyond the bound is refused, so the call fails (its process is killed and
    started again) and the run goes on: exit 1, the map refuted, a complete JSON. (Before, the
    verifier waited for the rest for good, or read until its memory ran out.)"""
    path = tmp_path / "v.json"
    argv = [sys.executable, "-m", "orthoverify", "validate", H + name, "--kind", KIND, "--profile", "quick"]
    argv += ["--dtype", "float64", "--timeout", "5", "--json", str(path)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (tmp_path / hostile_targets.WIRE_MARK).exists()  # the attack was made
    data = json.loads(path.read_text(encoding="utf-8"))
    claims = {c["id"].rsplit(".", 1)[1]: c for c in data["claims"]}
    assert len(data["claims"]) == sum(data["summary"].values())
    assert claims["forward"]["verdict"] == "refuted", verdicts(claims)
    assert seen in path.read_text(encoding="utf-8")
