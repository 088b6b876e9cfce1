"""Severity of `validate` findings (issue 27): a mode the target declines with an exception is
"unsupported" (exit 0), not refuted; the planted targets' verdicts are pinned in
tests/planted/judge_planted.py."""

from __future__ import annotations

import io
from pathlib import Path

from orthoverify.cli import main
from orthoverify.engine.result import load_json

T = "tests.planted.conformance_targets:"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_a_declined_mode_is_unsupported_with_its_exception_and_exits_0(tmp_path: Path) -> None:
    """torch-householder's case: a backward that writes with out= raises under reverse-over-reverse.
    The check is unsupported (the exception's first line recorded), the exit status 0, the JSON
    readable by report and replay's loader, and the report renders it."""
    path = tmp_path / "r.json"
    code, out, _ = run(
        "validate", T + "householder_out_backward", "--kind", "householder-product", "--profile", "quick",
        "--dtype", "float64", "--json", str(path), "--report", str(tmp_path),
    )  # fmt: skip
    assert code == 0, out
    data = load_json(path)
    by = {c["id"].rsplit(".", 1)[1]: c for c in data["claims"]}
    rr = by["second_rr"]
    assert rr["verdict"] == "unsupported" and rr["counterexample"] is None
    assert "out=... arguments don't support automatic differentiation" in rr["evidence"][0]["data"]["unsupported"]
    assert by["gradient"]["verdict"] == "verified"  # first order is right: only the declined modes are unsupported
    assert data["summary"]["unsupported"] == 4 and data["summary"]["refuted"] == 0
    assert "unsupported" in out and "Unsupported: the target raised" in out
    html = next(tmp_path.glob("*.html")).read_text()
    assert "unsupported" in html
