"""`orthoverify validate --list`, exit statuses a CI can gate on, and the acceptance finding on
torch's matrix_exp map: an ordinary-size counterexample that blames the single call."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.cli import RESULT_FAMILIES, main
from orthoverify.conformance import ADAPTERS, KINDS, validate
from orthoverify.engine.replay import replay_from_file
from orthoverify.notation import math_text

REPLAY = {"modules": CLAIM_MODULES, "families": RESULT_FAMILIES}  # what `orthoverify replay` passes

T = "tests.planted.conformance_targets:"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_list_prints_every_kind_and_adapter() -> None:
    code, out, _ = run("validate", "--list")
    assert code == 0
    for k in KINDS.values():
        assert k.name in out and k.signature in out and k.allowance in out
    for name in ADAPTERS:
        assert name in out
    assert run("validate")[0] == 2  # no target, no --list: usage


def test_list_answers_without_importing_torch() -> None:
    """`validate --list` prints the recorded listing (orthoverify/validate_listing.json, checked
    against the code in test_reach_declare): no torch, no conformance layer to import."""
    code = (
        "import sys, io; from orthoverify.cli import main; out = io.StringIO(); "
        "assert main(['validate', '--list'], out, io.StringIO()) == 0; "
        "assert 'torch' not in sys.modules and 'orthoverify.conformance' not in sys.modules, 'imported'; "
        "print(out.getvalue())"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "householder-product" in run.stdout and "Declaration keywords" in run.stdout


def test_exit_status_zero_without_defect_one_with(tmp_path: Path) -> None:
    good = run("validate", T + "expm_scaled", "--kind", "orthogonal-map", "--profile", "quick",
               "--dtype", "float64", "--json", str(tmp_path / "g.json"))  # fmt: skip
    assert good[0] == 0, good[1]
    bad = run("validate", T + "expm_truncated", "--kind", "orthogonal-map", "--profile", "quick",
              "--dtype", "float64", "--json", str(tmp_path / "b.json"))  # fmt: skip
    assert bad[0] == 1, bad[1]
    data = json.loads((tmp_path / "b.json").read_text())
    assert data["validate"]["isolated"] is True
    code, out, _ = run("report", str(tmp_path / "b.json"), "--out", str(tmp_path), "--name", "r")
    assert code == 0 and (tmp_path / "r.html").exists()
    code, out, _ = run(
        "replay", str(tmp_path / "b.json"), "conformance.orthogonal-map.orthogonal", "--target", T + "expm_truncated"
    )
    assert code == 0 and "reproduced: yes" in out, out
    # the inputs are printed, as check's replay and the pytest plugin print them
    (claim,) = [c for c in data["claims"] if c["id"] == "conformance.orthogonal-map.orthogonal"]
    lines = out.splitlines()
    assert lines[2:4] == [f"check: {claim['counterexample']['check']}", "inputs:"], out
    assert {ln.split(" = ", 1)[0].strip() for ln in lines if ln.startswith("  ")} == set(
        claim["counterexample"]["inputs"]
    ), out
    assert f"quantity: {math_text(claim['counterexample']['quantity'])}" in lines  # as the report writes it
    code, out, _ = run(
        "replay", str(tmp_path / "b.json"), "conformance.orthogonal-map.orthogonal", "--target", T + "expm_truncated",
        "--json",
    )  # fmt: skip
    doc = json.loads(out)
    assert code == 0 and doc["reproduced"] is True and doc["inputs"] == claim["counterexample"]["inputs"]


def test_torch_matrix_exp_is_refuted_at_an_ordinary_size_blaming_the_single_call(tmp_path: Path) -> None:
    """torch 2.13's single-matrix matrix_exp (a wrong coefficient in its degree-8 Taylor path) is
    inaccurate at small norms; batched calls are accurate. The telling counterexample is of
    ordinary size, and the note says the single call is off."""
    r = validate("torch-orthogonal-matrix_exp", profile="quick", dtypes=["float64"])
    c = next(c for c in r.claims if c.claim.id.endswith(".orthogonal"))
    assert c.verdict == "refuted"
    cx = c.counterexample
    assert cx is not None
    biggest = max(abs(float(v)) for row in cx.inputs["X"] for v in row)
    assert biggest <= 2.0, cx.inputs
    assert "single (unbatched) call is the inaccurate one" in cx.value
    from orthoverify.engine import write_json

    path = write_json(r, tmp_path / "m.json")
    assert replay_from_file(
        path, "conformance.orthogonal-map.orthogonal", target="torch-orthogonal-matrix_exp", **REPLAY
    ).reproduced
