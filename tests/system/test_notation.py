"""validate's lines under its summary and the pytest plugin's failure message speak the paper's
notation, as the report and replay do (one helper: orthoverify.notation.math_text), while
claim ids, check names, backends and inputs stay as written."""

from __future__ import annotations

from types import SimpleNamespace

from orthoverify.cli import failure_notes, in_notation
from orthoverify.pytest_plugin import failure_text

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
