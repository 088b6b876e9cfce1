"""Replaying a crafted result file runs no code, reads nothing outside it, and ends quickly with a
named error (issue: result files are untrusted data)."""

from __future__ import annotations

import copy
import io
import json
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import sympy

from orthoverify.backends import get_backend
from orthoverify.backends.numbers import MAX_EXPONENT, parse_exact, parse_float_text
from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.cli import RESULT_FAMILIES, main
from orthoverify.engine.replay import replay_from_file
from orthoverify.errors import ParseError, ReplayError

REPLAY = {"modules": CLAIM_MODULES, "families": RESULT_FAMILIES}  # what `orthoverify replay` passes

REFERENCE = Path(__file__).resolve().parents[2] / "reports" / "check-default.json"
EXACT_ID = "householder.theorem2_proof"  # an exact counterexample (rationals)
DIGITS_ID = "householder.algorithm2_float"  # a 50-digit one (decimals)


def _reference() -> dict[str, Any]:
    return json.loads(REFERENCE.read_text())


def _with(data: dict[str, Any], claim_id: str, edit: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    for c in out["claims"]:
        if c["id"] == claim_id:
            edit(c["counterexample"])
    return out


def _write(tmp_path: Path, data: dict[str, Any]) -> Path:
    p = tmp_path / "crafted.json"
    p.write_text(json.dumps(data))
    return p


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        code = main(list(args), out=out, err=err)
    except SystemExit as exc:  # argparse refuses an option's value: exit 2 naming the option
        code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('touch /tmp/orthoverify-pwned')",
        "10**10**10",
        "sqrt(2)/2",
        "1e999999999",
        "1" * 5000,
        "1/0",
        "",
        "nan",
        "0x10",
        "1_000",
        "Rational(1, 3)",
    ],
)
def test_the_exact_parser_refuses_anything_but_a_bounded_number(text: str) -> None:
    with pytest.raises(ParseError):
        parse_exact(text, "inputs.U")
    with pytest.raises(ParseError):
        get_backend("sympy").asarray([text])


@pytest.mark.parametrize(
    ("text", "value"),
    [("-3/7", Fraction(-3, 7)), ("0.125", Fraction(1, 8)), ("-0", Fraction(0)), ("2.5e-3", Fraction(1, 400))],
)
def test_the_exact_parser_reads_what_results_hold(text: str, value: Fraction) -> None:
    assert parse_exact(text) == value
    assert get_backend("sympy").asarray([text])[0] == sympy.Rational(value.numerator, value.denominator)


def test_the_exponent_bound_is_on_the_value_not_the_spelling() -> None:
    # 0.000...1 and 1e-N are the same size; both within or both outside the bound
    assert parse_exact("0." + "0" * 400 + "1") == Fraction(1, 10**401)
    with pytest.raises(ParseError):
        parse_exact(f"1e-{MAX_EXPONENT + 5}")
    assert parse_float_text("-inf") == float("-inf")


@pytest.mark.parametrize(
    ("claim_id", "edit", "field"),
    [
        (EXACT_ID, lambda cx: cx["inputs"]["h"].__setitem__(0, "__import__('os').system('true')"), "inputs.h[0]"),
        (EXACT_ID, lambda cx: cx["inputs"]["h"].__setitem__(0, "10**10**10"), "inputs.h[0]"),
        (DIGITS_ID, lambda cx: cx.__setitem__("precision_digits", 2_000_000), "precision_digits"),
        (DIGITS_ID, lambda cx: cx.__setitem__("precision_digits", "50; rm -rf"), "precision_digits"),
        (DIGITS_ID, lambda cx: cx["inputs"].__setitem__("A", [["1"] * 400] * 400), "inputs.A"),
        (EXACT_ID, lambda cx: cx["inputs"].__setitem__("U", [["1"] * 40] * 40), "inputs.U"),
        (DIGITS_ID, lambda cx: cx.__setitem__("threshold", -1), "threshold"),
        (DIGITS_ID, lambda cx: cx.__setitem__("inputs", ["not", "a", "dict"]), "inputs"),
        (DIGITS_ID, lambda cx: cx["inputs"].__setitem__("A", [[[[[["1"]]]]]]), "inputs.A"),
        (DIGITS_ID, lambda cx: cx["inputs"].__setitem__("family", "<script>alert(1)</script>"), "inputs.family"),
        (DIGITS_ID, lambda cx: cx.pop("check"), "check"),
    ],
)
def test_a_crafted_counterexample_is_refused_naming_the_field(
    tmp_path: Path, claim_id: str, edit: Any, field: str
) -> None:
    path = _write(tmp_path, _with(_reference(), claim_id, edit))
    start = time.monotonic()
    with pytest.raises(ReplayError, match=field.split("[")[0].replace(".", r"\.")):
        replay_from_file(path, claim_id, **REPLAY)
    code, _, err = _cli("replay", str(path), claim_id)
    assert code == 2 and "orthoverify: error:" in err and "Traceback" not in err
    assert time.monotonic() - start < 10


SVD_GRID = "svd.hprod"  # exact inputs h, u (matrices)


@pytest.mark.parametrize(
    ("claim_id", "edit", "message"),
    [  # each raised a raw exception from inside a check before (named on the right)
        # ZeroDivisionError: at 1000 digits the unit roundoff underflowed to 0.0 (the arithmetic passed for exact)
        ("svd.corollary1", lambda cx: cx.__setitem__("precision_digits", 1000), "precision_digits"),
        (DIGITS_ID, lambda cx: cx["inputs"].__setitem__("A", "1.5"), "cannot replay the recorded inputs (IndexError"),
        (SVD_GRID, lambda cx: cx["inputs"].__setitem__("h", "2"), "cannot replay the recorded inputs (ShapeError"),
        ("svd.table3", lambda cx: cx["inputs"].__setitem__("row", "no such row"), "(KeyError"),
        ("cayley.init", lambda cx: cx["inputs"].__setitem__("n", ["2"]), "(TypeError"),
        ("svd.proposition1", lambda cx: cx["inputs"].__setitem__("B", "1"), "(NotImplementedError"),
    ],
)
def test_inputs_a_check_cannot_take_are_a_named_error(tmp_path: Path, claim_id: str, edit: Any, message: str) -> None:
    """A scalar where a vector is expected, an unknown label, a precision beyond the arithmetic's:
    a usage error naming the claim and what went wrong, never a traceback."""
    path = _write(tmp_path, _with(_reference(), claim_id, edit))
    code, _, err = _cli("replay", str(path), claim_id)
    assert code == 2 and message in err and (claim_id in err or str(path) in err), err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_highest_precision_a_replay_takes_gives_a_finite_answer(tmp_path: Path) -> None:
    """At the bound (300 digits), svd.corollary1's counterexample replays and reproduces."""
    path = _write(tmp_path, _with(_reference(), "svd.corollary1", lambda cx: cx.__setitem__("precision_digits", 300)))
    code, out, _ = _cli("replay", str(path), "svd.corollary1")
    assert code == 0 and "at 300 digits: breaks the claim" in out


def test_replaying_a_validate_result_never_imports_the_target_it_names(tmp_path: Path) -> None:
    """The file names a module; without --target nothing is imported, and the error says how to opt in."""
    module = "orthoverify_planted_not_to_be_imported"
    data = {
        "orthoverify": "0.1.0",
        "claims": [
            {
                "id": "conformance.orthogonal-map.forward",
                "verdict": "refuted",
                "counterexample": {
                    "inputs": {"X": [["0.5"]], "dtype": "float64"},
                    "check": "forward",
                    "precision_digits": 50,
                    "quantity": "q",
                    "value": "1",
                },
            }
        ],
        "validate": {"target": f"{module}:f", "kind": "orthogonal-map", "dtypes": ["float64"]},
    }
    (tmp_path / f"{module}.py").write_text("raise SystemExit('imported!')\n")
    path = _write(tmp_path, data)
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(ReplayError, match="--target"):
            replay_from_file(path, "conformance.orthogonal-map.forward", **REPLAY)
        code, _, err = _cli("replay", str(path), "conformance.orthogonal-map.forward")
        assert code == 2 and "--target" in err
        assert module not in sys.modules
    finally:
        sys.path.remove(str(tmp_path))


def test_a_replay_that_runs_too_long_stops_with_a_named_error(tmp_path: Path) -> None:
    code, _, err = _cli("replay", str(REFERENCE), "householder.theorem2_proof", "--timeout", "1e-6")
    assert code == 2 and "did not finish within" in err
    assert _cli("replay", str(REFERENCE), "householder.theorem2_proof", "--timeout", "nan")[0] == 2


# --------------------------------------------------------------------------- which family a file's claims come from
def _planted_family(meta: Any, claim_id: str, target: str | None) -> Any:
    """A family named by a result's ``planted_family`` key: one claim, whose id says nothing of it."""
    from contextlib import contextmanager

    from orthoverify.engine.checks import PropertyCheck
    from orthoverify.engine.model import Claim
    from orthoverify.engine.ratios import Measure

    check = PropertyCheck("ratio", lambda b, case: Measure(float(case["r"])), lambda ctx: [], ("numpy-float64",), "r")
    claim = Claim(id="planted.ratio", paper="planted", where="here", statement="r <= 30", kind="bound", checks=(check,))
    claims = {"planted.ratio": claim}

    class Planted:
        @contextmanager
        def opened(self) -> Any:
            yield claims

    return Planted()


def _one_claim(claim_id: str, r: str, **top: Any) -> dict[str, Any]:
    cx = {"inputs": {"r": r}, "check": "ratio", "precision_digits": 50, "quantity": "r", "value": r}
    return {"orthoverify": "0.1.0", "claims": [{"id": claim_id, "verdict": "refuted", "counterexample": cx}], **top}


def test_the_result_file_names_the_family_of_its_claims_not_the_claim_id(tmp_path: Path) -> None:
    """Replay asks the file which family its claims come from (a top-level key), rebuilds it and
    replays through the claim's check: a claim id of any form, and a ``conformance.`` id without
    a family is an unknown claim like any other."""
    planted = {**REPLAY, "families": {**RESULT_FAMILIES, "planted_family": _planted_family}}
    path = _write(tmp_path, _one_claim("planted.ratio", "100", planted_family={}))
    rep = replay_from_file(path, "planted.ratio", **planted)
    assert rep.reproduced and rep.high_precision.ratio == 100.0
    assert not replay_from_file(
        _write(tmp_path, _one_claim("planted.ratio", "3", planted_family={})), "planted.ratio", **planted
    ).reproduced
    with pytest.raises(ReplayError, match="not registered"):  # the same claim without its family
        replay_from_file(_write(tmp_path, _one_claim("planted.ratio", "100")), "planted.ratio", **planted)
    with pytest.raises(ReplayError, match="not registered"):  # a conformance id is no family of its own
        replay_from_file(
            _write(tmp_path, _one_claim("conformance.orthogonal-map.output", "1")),
            "conformance.orthogonal-map.output",
            **planted,
        )
    with pytest.raises(ReplayError, match="not a claim of the family"):
        replay_from_file(
            _write(tmp_path, _one_claim("householder.reflection", "100", planted_family={})),
            "householder.reflection",
            **planted,
        )
