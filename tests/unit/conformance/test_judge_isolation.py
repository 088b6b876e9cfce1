"""A target can neither crash nor forge the verdict: it runs in a process of its own, gets copies
of its inputs, and its faults (exits, segfaults, hangs, patches, floods, chdir, overwritten
inputs, nondeterminism, a dtype it cannot handle) become findings that say so, never `error`;
a JSON result is always written."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from orthoverify.cli import main
from orthoverify.conformance import validate
from orthoverify.conformance.isolate import decode, encode
from orthoverify.engine import write_json
from orthoverify.engine.replay import replay_from_file
from tests.planted.judge_planted import result, verdicts

T = "tests.planted.conformance_targets:"


def planted(name: str) -> dict[str, Any]:
    return {c.claim.id.rsplit(".", 1)[1]: c for c in result(name).claims}


def claims(spec: str, kind: str = "orthogonal-map", **kw: object) -> dict[str, object]:
    opts: dict[str, object] = {"profile": "quick", "dtypes": ["float64"], **kw}
    r = validate(spec, kind=kind, **opts)  # type: ignore[arg-type]
    by = {c.claim.id.rsplit(".", 1)[1]: c for c in r.claims}
    assert all(c.verdict != "error" for c in r.claims), {k: c.evidence[0].error for k, c in by.items()}  # type: ignore[attr-defined]
    return by


def test_the_wire_format_round_trips_without_pickle() -> None:
    import torch

    xs = [torch.randn(3, 3), None, torch.randn(2, dtype=torch.complex128), torch.arange(4), torch.ones(2).bfloat16()]
    header, back = decode(encode({"op": "x", "kw": {"a": [1, 2]}}, xs))
    assert header["kw"] == {"a": [1, 2]} and back[1] is None
    for a, b in zip(xs, back, strict=True):
        if a is not None:
            assert b is not None and a.dtype == b.dtype and torch.equal(a, b)
    with pytest.raises(ValueError):
        decode(encode({}, [torch.ones(1)])[:-3])


@pytest.mark.parametrize(("name", "says"), [("segfaults", "SIGSEGV")])
def test_a_target_that_kills_its_process_is_refuted_with_the_exit_status(name: str, says: str, tmp_path: Path) -> None:
    """(exits, os._exit(7), is in the planted suite; here through the command line, JSON written.)"""
    assert "exit status 7" in str(planted("exits")["output"].counterexample.value)
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "r.json"
    code = main(
        ["validate", T + name, "--kind", "orthogonal-map", "--profile", "quick", "--dtype", "float64",
         "--json", str(path)],
        out=out, err=err,
    )  # fmt: skip
    assert code == 1 and path.exists(), out.getvalue() + err.getvalue()
    data = json.loads(path.read_text())
    output = next(c for c in data["claims"] if c["id"].endswith(".output"))
    assert output["verdict"] == "refuted" and says in output["counterexample"]["value"]
    assert all(c["verdict"] != "error" for c in data["claims"])
    # one cause, one finding: what needs the output is not run, never verified or refuted
    for c in data["claims"]:
        if not c["id"].endswith((".output", ".side_effects")):
            assert c["verdict"] == "inconclusive", (c["id"], c["verdict"])


def test_a_target_that_patches_numpy_cannot_forge_orthogonality() -> None:
    assert verdicts("forges_norm")["orthogonal"] == "refuted"
    import numpy as np

    assert float(np.linalg.norm(np.eye(2))) > 0  # and this process's numpy is untouched


def test_side_effects_are_findings(tmp_path: Path) -> None:
    by = planted("overwrites_input")
    assert by["side_effects"].verdict == "refuted"
    assert "mutates its input" in by["side_effects"].evidence[0].notes
    assert by["forward"].verdict == "verified"  # it computes the right matrix, on its copy
    by = planted("changes_directory")
    assert "working directory" in by["side_effects"].evidence[0].notes
    assert by["side_effects"].verdict == "refuted" and by["orthogonal"].verdict == "verified"
    path = write_json(result("changes_directory"), tmp_path / "c.json")
    assert replay_from_file(path, "conformance.orthogonal-map.side_effects", target=T + "changes_directory").reproduced


def test_a_flood_of_output_is_captured_and_truncated(capfd: pytest.CaptureFixture[str]) -> None:
    r = result("floods")
    seen = r.meta["validate"]["target_output"]
    assert seen["bytes"] > 1 << 20 and len(seen["head"]) <= 500
    by = {c.claim.id.rsplit(".", 1)[1]: c for c in r.claims}
    assert by["side_effects"].verdict == "refuted" and "floods" in by["side_effects"].evidence[0].notes
    assert by["orthogonal"].verdict == "verified"
    assert len(capfd.readouterr().out) < 10_000  # nothing of it reached this process's stdout


def test_nondeterminism_is_a_refuted_determinism_not_an_error() -> None:
    v = verdicts("nondeterministic")
    assert v["determinism"] == "refuted" and v["orthogonal"] == "verified" and "error" not in v.values()


def test_after_a_timeout_later_calls_still_reach_the_target() -> None:
    by = claims(T + "hangs_when_large", timeout=2.0)
    assert by["orthogonal"].verdict == "refuted"  # type: ignore[attr-defined]
    assert "timeout" in by["orthogonal"].counterexample.value  # type: ignore[attr-defined]
    for later in ("gradient", "batch", "determinism", "bad_input"):  # the process was restarted
        c = by[later]
        assert c.verdict == "verified" and c.evidence[0].cases > 0, later  # type: ignore[attr-defined]


def test_a_target_that_hangs_everywhere_verifies_nothing() -> None:
    by = claims(T + "hangs", timeout=0.5)
    assert by["output"].verdict == "refuted"  # type: ignore[attr-defined]
    assert all(c.verdict != "verified" for c in by.values()), {k: c.verdict for k, c in by.items()}  # type: ignore[attr-defined]


def test_a_dtype_the_target_cannot_handle_is_one_finding() -> None:
    by = planted("fails_in_float64")
    assert by["output"].verdict == "refuted"
    refuted = [k for k, c in by.items() if c.verdict == "refuted"]
    assert refuted == ["output"], refuted
    orth = {e.backend: e for e in by["orthogonal"].evidence}
    assert orth["torch-float32-cpu"].passed and orth["torch-float32-cpu"].cases > 0
    assert "Not run" in orth["torch-float64-cpu"].notes and not orth["torch-float64-cpu"].passed
