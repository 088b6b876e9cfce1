"""validate's lines under its summary and the pytest plugin's failure message speak the paper's
notation, as the report and replay do (one helper: orthoverify.notation.math_text), while
claim ids, check names, backends and inputs stay as written."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from orthoverify.cli import failure_notes, in_notation, readable_replay
from orthoverify.notation import typeset
from orthoverify.pytest_plugin import failure_text
from orthoverify.tolerance import THRESHOLD

NOTE = (
    "Failure at max|x_ij| = 1.78, n = 2: forward-over-forward: v'Hw = -0.545, float64 4-point differences "
    "of the target: -1.09; |difference| / (n eps ||G|| ||D2f[v,w]||) = 1.80379e+06"
)
"""The first line of a refuted second_ff note of `orthoverify validate torch-orthogonal-cayley`,
shortened, in the ASCII the checks write."""

ASCII = ("||", "eps", "v'Hw", " -0.545")
UNICODE = ("‖G‖ ‖D2f[v,w]‖", "n ε", "v′Hw", " −0.545")


def _evidence(passed: bool, notes: str) -> SimpleNamespace:
    return SimpleNamespace(backend="torch-float64-cpu", passed=passed, error=None, notes=notes)


def _claim(notes: str, counterexample: SimpleNamespace | None = None) -> SimpleNamespace:
    return SimpleNamespace(
        claim=SimpleNamespace(id="conformance.orthogonal-map.second_ff", statement="second derivatives agree"),
        verdict="refuted",
        evidence=[_evidence(True, "a passing note with ||x||"), _evidence(False, notes + "\nsecond line")],
        counterexample=counterexample,
    )


def test_validate_failure_notes_are_in_the_papers_notation() -> None:
    (line,) = failure_notes(SimpleNamespace(claims=[_claim(NOTE)]))
    assert line.startswith("  conformance.orthogonal-map.second_ff [torch-float64-cpu]: Failure at")
    assert all(u in line for u in UNICODE) and not any(a in line for a in ASCII), line
    assert "second line" not in line  # the first line of the notes only


def test_validate_cause_lines_keep_the_check_and_backend_and_typeset_the_rest() -> None:
    cause = "  second_ff [torch-float64-cpu]: refuted; cause: torch.linalg.solve ... (ratio 1.8e+06 -> 0.000894)"
    assert in_notation(cause) == (
        "  second_ff [torch-float64-cpu]: refuted; cause: torch.linalg.solve ... (ratio 1.8e+06 → 0.000894)"
    )
    assert in_notation("no label here ||x||") == "no label here ||x||"  # not a summary line: as it is


def test_plugin_failure_message_is_in_the_papers_notation() -> None:
    cx = SimpleNamespace(quantity="||W'W - I||_F / (n eps)", value="-6.5e+03", inputs={"x": ["0.5", "-1e-300"]})
    text = failure_text(_claim(NOTE, cx))
    lines = text.splitlines()
    assert lines[0] == "conformance.orthogonal-map.second_ff: refuted"
    assert lines[2] == "  [torch-float64-cpu] pass: a passing note with ‖x‖"
    assert all(u in lines[3] for u in UNICODE) and not any(a in lines[3] for a in ASCII), lines[3]
    assert lines[-2] == "counterexample: ‖W′W − I‖_F / (n ε) = −6.5e+03", text
    assert lines[-1] == "inputs: {'x': ['0.5', '-1e-300']}"  # inputs as recorded, to copy


def test_a_separator_of_findings_is_not_a_norm() -> None:
    """`` || `` between two findings (a count's two accountings) reads as a separator, ``||x||`` as a norm."""
    assert typeset("counted 24 || negations counted: (11n-3m+5)m") == "counted 24 | negations counted: (11n-3m+5)m"
    assert typeset("||x|| ||y||, ||(E_1|...|E_t)||") == "‖x‖ ‖y‖, ‖(E_1|...|E_t)‖"


REPLAY = [
    "claim: householder.flops",
    "check: count",
    "inputs:",
    '  U = [["1/2"], ["-1"]]',
    "  label = ||x|| <= 1",
    "quantity: ||QR - A|| / (n eps ||A||) over sigma_min(W')",
    "exact (float64 and 50 digits give the same): printed 28, counted 27 || negations counted: C~'h' = -6",
    "compared: test ratio 3.9e+19 > threshold 30 at 100 digits: breaks the claim",
    "recorded: R'' = 3 at CRootOf(20*x**3 - 10*x - 1, 0) = -0.6505",
    "float64 fails on other inputs (recorded by the run's float64 evidence, float_edge):",
    "  quantity: ||QR - A||",
    "  float64: 5.8e+07 (test ratio 5.8e+07)",
    "reproduced: yes",
]
"""A replay's printed lines as the engine writes them, in the ASCII its claims record."""


def test_replay_prints_every_quantity_and_value_in_the_papers_notation() -> None:
    """Every line but the ids, the check and the inputs (decimal strings to copy) in the report's
    notation (orthoverify.notation.math_text): norms, ε, σ_min, primes, minus signs, roots by value and
    polynomial, the separator of two findings; the float64 case's own lines too."""
    lines = readable_replay(REPLAY)
    assert lines[:5] == REPLAY[:5]  # claim, check, inputs as recorded
    assert lines[5] == "quantity: ‖QR − A‖ / (n ε ‖A‖) over σ_min(W′)"
    assert (
        lines[6] == "exact (float64 and 50 digits give the same): printed 28, counted 27 | negations counted: C̃′h′ = −6"
    )
    assert lines[8].startswith("recorded: R″ = 3 at ") and "20x³ − 10x − 1" in lines[8] and "CRootOf" not in lines[8]
    assert lines[10] == "  quantity: ‖QR − A‖" and lines[-1] == "reproduced: yes"
    ascii_math = ("||", "eps", "sigma", "C~", "h'", "**", "CRootOf")
    assert not any(a in line for line in lines[5:] for a in ascii_math), lines


def _replay_svd_algorithm1(json_out: bool = False) -> str:
    """``orthoverify replay`` of the reference's svd.algorithm1 counterexample (exact SymPy inputs)."""
    import io
    from pathlib import Path

    from orthoverify.cli import main

    argv = ["replay", str(Path(__file__).resolve().parents[2] / "reports" / "check-default.json"), "svd.algorithm1"]
    out, err = io.StringIO(), io.StringIO()
    assert main([*argv, *(["--json"] if json_out else [])], out, err) == 0, err.getvalue()
    return out.getvalue()


def test_an_exact_counterexample_replays_in_every_arithmetic_its_check_takes() -> None:
    """svd.algorithm1's exact counterexample: off the exact backend its Derivative takes 50-digit
    differences as the reference, so float64 and 50 digits evaluate it too, and the failure shows
    in all three."""
    text = _replay_svd_algorithm1()
    lines = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    assert lines["exact"] == "−6" and "not apply" not in text and "not evaluated" not in text, text
    assert float(lines["float64"]) > THRESHOLD and float(lines["50 digits"]) > THRESHOLD, text
    assert "reproduced: yes" in text and "Error" not in text, text


def test_replay_of_an_exact_only_check_says_which_arithmetics_do_not_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    """A check that takes its inputs exactly only (its float replay raises) is replayed exactly, and
    the printed replay says in words that float64 and 50 digits do not apply, with no exception's
    internals; --json keeps the reason."""
    import json

    from orthoverify.claims import MODULES
    from orthoverify.engine import get_registry

    claim = get_registry(MODULES)["svd.algorithm1"]
    check = next(c for c in claim.checks if c.records("exact_derivative"))
    original = type(check).replay

    def replay(self: Any, inputs: Any, b: Any) -> Any:
        if self.name == check.name and not b.exact:
            raise TypeError("this planted check takes its inputs exactly only")
        return original(self, inputs, b)

    # the check is frozen: planted on its class, for checks of its name (only this claim is replayed)
    monkeypatch.setattr(type(check), "replay", replay)
    text = _replay_svd_algorithm1()
    assert "float64 and 50 digits: do not apply (the check takes these inputs exactly only)" in text, text
    assert "Error" not in text and "not evaluated" not in text and "reproduced: yes" in text, text
    values = {a["label"]: a["value"] for a in json.loads(_replay_svd_algorithm1(json_out=True))["arithmetics"]}
    rounded = next(v for label, v in values.items() if "float64" in label)  # one label per distinct value
    assert rounded.startswith("not evaluated (TypeError") and values["exact"] == "-6", values
