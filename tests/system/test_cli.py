"""The command line is a contract: output, JSON and exit statuses (0 ok, 1 a check errored,
2 bad usage)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from orthoverify.cli import main
from orthoverify.engine.registry import EXTRA_ENV
from orthoverify.tolerance import THRESHOLD


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_list_text_and_json() -> None:
    code, out, _ = run("list")
    assert code == 0 and "householder.theorem1" in out and "Thm 1" in out
    code, out, _ = run("list", "--json")
    claims = json.loads(out)
    assert code == 0
    assert {"id", "paper", "where", "kind", "statement"} <= set(claims[0])
    assert "householder.flops.corrected" in {c["id"] for c in claims}


def test_list_takes_patterns() -> None:
    code, out, _ = run("list", "householder.theorem*", "--json")
    ids = {c["id"] for c in json.loads(out)}
    assert code == 0 and ids and all(i.startswith("householder.theorem") for i in ids)
    assert run("list", "nothing.*")[0] == 2


def test_every_option_has_help_and_its_default() -> None:
    """`orthoverify COMMAND --help` explains every argument, and names the default of each option
    that has one (validate's --json, --report and --timeout had none)."""
    import argparse

    from orthoverify.cli import build_parser

    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    missing = []
    for command, parser in sub.choices.items():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            name = f"{command} {'/'.join(action.option_strings) or action.dest}"
            if not action.help:
                missing.append(f"{name}: no help")
            elif action.default not in (None, False) and "default" not in action.help:
                missing.append(f"{name}: default {action.default!r} not shown")
    assert not missing, missing
    for command, parser in sub.choices.items():  # the help renders, %(default)s substituted
        assert "%(" not in parser.format_help(), command
    assert "(default: 30)" in " ".join(sub.choices["validate"].format_help().split())


def test_check_writes_json_and_summary(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    code, out, err = run(
        "check",
        "householder.reflection",
        "householder.two_*",
        "--profile",
        "quick",
        "--workers",
        "1",
        "--seed",
        "5",
        "--json",
        str(path),
    )
    assert code == 0, err
    assert "householder.reflection" in out and "verified" in out and "worst ratio" in out
    assert "[" in err and "householder.reflection ::" in err  # progress lines
    data = json.loads(path.read_text())
    assert data["profile"] == "quick" and data["seed"] == 5
    assert [c["id"] for c in data["claims"]] == ["householder.reflection", "householder.two_reflections_2x2"]


def test_backend_restriction(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    code, _, _ = run(
        "check",
        "householder.proposition1",
        "--profile",
        "quick",
        "--workers",
        "1",
        "--backend",
        "numpy-float64,sympy",
        "--json",
        str(path),
        "--quiet",
    )
    assert code == 0
    backends = {e["backend"] for e in json.loads(path.read_text())["claims"][0]["evidence"]}
    assert backends == {"numpy-float64", "sympy"}


@pytest.mark.parametrize(
    "argv",
    [
        ("check", "--profile", "huge"),
        ("check", "no.such.claim", "--workers", "1"),
        ("check", "householder.theorem1", "--backend", "numpy-float16", "--workers", "1"),
        ("check", "--workers", "0"),
        ("frobnicate",),
        ("replay", "missing.json", "householder.flops"),
    ],
)
def test_bad_usage_exits_2(argv: tuple[str, ...]) -> None:
    with pytest.raises(SystemExit) as info:
        code, _, _ = run(*argv)
        raise SystemExit(code)
    assert info.value.code == 2


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
def test_cuda_without_gpu_exits_2() -> None:
    code, _, err = run("check", "householder.theorem1", "--device", "cuda", "--workers", "1")
    assert code == 2 and "CUDA" in err


def test_errored_check_exits_1_and_refuted_is_not_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EXTRA_ENV, "tests.planted.planted_claims")
    path = tmp_path / "r.json"
    code, out, err = run("check", "planted.crashes", "--profile", "quick", "--workers", "1", "--json", str(path))
    assert code == 1 and "planted crash" in err
    code, out, _ = run("check", "planted.false_*", "--profile", "quick", "--workers", "1", "--json", str(path))
    assert code == 0 and "refuted" in out
    code, out, _ = run("replay", str(path), "planted.false_reflection_fixes_u")
    assert code == 0 and "reproduced: yes" in out
    code, _, err = run("replay", str(path), "planted.crashes")
    assert code == 2 and "not in" in err


def test_module_entry_point_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "orthoverify", "list", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ},
        check=False,
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)


def test_summary_shows_what_refutes_a_claim_and_where_to_go_next() -> None:
    """A refuted claim's row shows the figure that refutes it, never the worst ratio of the evidence
    that passed (svd.proposition1 once read "refuted ... 0.954 / 30"), and the summary points to
    the replay command and the report."""
    from types import SimpleNamespace

    from orthoverify.cli import _next_steps, summary_table
    from orthoverify.engine.model import Counterexample

    exact = Counterexample({}, "B = M_1(u) R", "det B = 0: every R has det R = 0", "exact", "exhaustive")
    hp = Counterexample({}, "ratio", "3.95954e+19", 100, "float_edge", threshold=THRESHOLD)

    def claim(cid: str, verdict: str, cx: Counterexample | None) -> SimpleNamespace:
        return SimpleNamespace(
            claim=SimpleNamespace(id=cid), verdict=verdict, methods=["exhaustive"], worst_ratio=(0.954, THRESHOLD),
            counterexample=cx,
        )

    claims = [claim("a.fine", "verified", None), claim("b.exact", "refuted", exact), claim("c.float", "refuted", hp)]
    result = SimpleNamespace(
        claims=claims, profile="quick", seed=0, seconds=1.0, counts=lambda: {"verified": 1, "refuted": 2}
    )
    rows = {line.split()[0]: line for line in summary_table(result).splitlines() if line[:2] in ("a.", "b.", "c.")}
    assert rows["a.fine"].endswith("0.954 / 30")
    assert "0.954" not in rows["b.exact"] and "exact: det B = 0" in rows["b.exact"]
    assert "0.954" not in rows["c.float"] and rows["c.float"].endswith("3.96e+19 / 30 at 100 digits")
    steps = _next_steps(result, "out/check-quick.json", [])
    assert "orthoverify replay out/check-quick.json b.exact" in steps
    assert "orthoverify report out/check-quick.json" in steps
    assert "open out/x.html" in _next_steps(result, "out/x.json", [Path("out/x.html"), Path("out/x.md")])
    assert _next_steps(SimpleNamespace(claims=claims[:1]), "out/x.json", []) == ""
