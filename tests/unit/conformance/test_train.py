"""The gradients people train with (issue 27, conformance/checks_train.py): the float32 backward,
forward mode and second derivatives, the gradient through a batch, and the backward and forward
mode in a declared half-precision dtype, each catch a planted defect that every float64,
one-matrix check misses, on an ordinary-size counterexample, and pass the correct map."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from orthoverify.conformance import causes, derivatives, validate
from orthoverify.conformance.kinds import KINDS
from orthoverify.conformance.planning import plan_checks
from orthoverify.conformance.target import load_target
from orthoverify.engine.runner import RunResult

T = "tests.planted.conformance_targets:"
CHECKS = ("gradient", "jvp", "batch", "gradient_float32", "jvp_float32", "gradient_batch")


@functools.cache
def _verdicts(name: str) -> tuple[dict[str, str], RunResult]:
    res = validate(T + name, kind="scaled-cayley", profile="quick", checks=list(CHECKS))
    return {c.claim.id.rsplit(".", 1)[1]: c.verdict for c in res.claims}, res


def _counterexample(res: RunResult, check: str) -> Any:
    c = next(c for c in res.claims if c.claim.id.endswith("." + check))
    assert c.counterexample is not None
    return c.counterexample


@pytest.mark.slow
def test_a_backward_that_rounds_float32_gradients_through_bfloat16_is_refuted_on_gradient_float32() -> None:
    got, res = _verdicts("cayley_grad_through_bfloat16")
    assert got == {**dict.fromkeys(CHECKS, "verified"), "gradient_float32": "refuted"}
    cx = _counterexample(res, "gradient_float32")
    assert cx.inputs["dtype"] == "float32" and np.shape(cx.inputs["A"])[0] <= 8  # an ordinary size
    assert [f["check"] for f in res.meta["validate"]["findings"]] == ["gradient_float32"]


@pytest.mark.slow
def test_a_backward_that_averages_the_upstream_gradient_over_a_batch_is_refuted_on_gradient_batch() -> None:
    got, res = _verdicts("cayley_grad_batch_mean")
    assert got == {**dict.fromkeys(CHECKS, "verified"), "gradient_batch": "refuted"}
    cx = _counterexample(res, "gradient_batch")
    assert np.shape(cx.inputs["A"])[0] <= 8


@pytest.mark.slow
def test_a_forward_mode_that_rounds_through_bfloat16_in_float32_is_refuted_on_jvp_float32() -> None:
    got, res = _verdicts("cayley_jvp_through_bfloat16")
    assert got == {**dict.fromkeys(CHECKS, "verified"), "jvp_float32": "refuted"}
    assert np.shape(_counterexample(res, "jvp_float32").inputs["A"])[0] <= 8


@pytest.mark.slow
def test_the_correct_map_passes_every_training_check() -> None:
    got, _res = _verdicts("cayley")
    assert got == {**dict.fromkeys(CHECKS, "verified")}


SECOND = ("second_ff", "second_fr", "second_rr")
SECOND32 = tuple(f"{m}_float32" for m in SECOND)
HALF = ("gradient_float16", "jvp_float16", "gradient_bfloat16", "jvp_bfloat16")


@functools.cache
def _run(name: str, kind: str, checks: tuple[str, ...]) -> tuple[dict[str, str], RunResult]:
    res = validate(T + name, kind=kind, profile="quick", checks=list(checks))
    return {c.claim.id.rsplit(".", 1)[1]: c.verdict for c in res.claims}, res


@pytest.mark.slow
def test_a_double_backward_rounded_through_bfloat16_in_float32_is_refuted_only_on_float32_second_order() -> None:
    """The backward recorded for a second derivative (create_graph=True: reverse over reverse, and
    torch.func.grad under forward over reverse) rounds through bfloat16 in float32: every float64
    check, every first-order float32 check and forward over forward pass."""
    checks = ("gradient", "jvp", "gradient_float32", "jvp_float32", *SECOND, *SECOND32)
    got, res = _run("cayley_second_order_through_bfloat16", "scaled-cayley", checks)
    assert got == {**dict.fromkeys(checks, "verified"), "second_fr_float32": "refuted", "second_rr_float32": "refuted"}
    cx = _counterexample(res, "second_rr_float32")
    assert cx.inputs["dtype"] == "float32" and np.shape(cx.inputs["A"])[0] <= 8
    assert [(f["check"], f["explains"]) for f in res.meta["validate"]["findings"]] == [
        ("second_fr_float32", ["second_rr_float32"])
    ]


@pytest.mark.slow
def test_the_correct_map_passes_the_float32_second_order_checks() -> None:
    got, _res = _run("cayley", "scaled-cayley", SECOND32)
    assert got == dict.fromkeys(SECOND32, "verified")


@pytest.mark.slow
def test_an_upstream_second_order_defect_is_one_finding_in_float64_and_float32() -> None:
    """The textbook Cayley map on torch.linalg.solve: torch's nested forward-mode rule is wrong in
    both dtypes; the finding is one, rooted at the float64 check with its measured cause."""
    got, res = _run("cayley_textbook", "orthogonal-map", ("second_ff", "second_ff_float32"))
    assert got == {"second_ff": "refuted", "second_ff_float32": "refuted"}
    (finding,) = res.meta["validate"]["findings"]
    assert finding["check"] == "second_ff" and finding["explains"] == ["second_ff_float32"]
    assert "torch.linalg.solve" in finding["cause"]


def _fake(verdicts: dict[str, str]) -> Any:
    claims = [
        SimpleNamespace(
            claim=SimpleNamespace(id=f"conformance.k.{check}"),
            verdict=v,
            evidence=[
                SimpleNamespace(backend="torch-float64-cpu", counterexample=object() if v != "verified" else None)
            ],
        )
        for check, v in verdicts.items()
    ]
    return SimpleNamespace(claims=claims)


def test_float32_and_half_precision_checks_follow_float64_in_the_dependency_order() -> None:
    got = causes.findings(
        _fake(
            {
                "gradient": "refuted",
                "second_rr": "refuted",
                "second_rr_float32": "refuted",
                "gradient_bfloat16": "refuted",
            }
        )
    )
    assert [(f.check, f.explains) for f in got] == [
        ("gradient", ["second_rr", "second_rr_float32", "gradient_bfloat16"])
    ]
    alone = causes.findings(_fake({"second_ff": "unsupported", "second_ff_float32": "refuted"}))
    assert [(f.check, f.explains) for f in alone] == [("second_ff_float32", [])]  # a wrong number, not a refusal


def test_half_precision_derivative_checks_are_planned_only_where_declared() -> None:
    plain = load_target(T + "householder", "householder-product")
    half = load_target(T + "householder_half_precision", "householder-product")
    names = {p[0] for p in plan_checks("householder-product", ("float32", "float64"), True, "cpu", plain)}
    assert not names & set(HALF) and set(SECOND32) <= names
    assert set(HALF) <= {p[0] for p in plan_checks("householder-product", ("float32", "float64"), True, "cpu", half)}


@pytest.mark.slow
def test_a_bfloat16_backward_that_keeps_its_loss_scale_is_refuted_on_gradient_bfloat16_only() -> None:
    """Declares float16 and bfloat16: the bfloat16 backward multiplies by 8 and never divides; the
    forward in every dtype, float16's backward and forward mode in both pass."""
    checks = ("gradient", "gradient_float32", "low_precision", *HALF)
    got, res = _run("householder_bfloat16_loss_scale", "householder-product", checks)
    assert got == {**dict.fromkeys(checks, "verified"), "gradient_bfloat16": "refuted"}
    cx = _counterexample(res, "gradient_bfloat16")
    assert cx.inputs["dtype"] == "bfloat16" and np.shape(cx.inputs["U"])[0] <= 8
    good, _ = _run("householder_half_precision", "householder-product", checks)
    assert good == dict.fromkeys(checks, "verified")


@pytest.mark.parametrize("kind_name", ["householder-product", "scaled-cayley", "svd-parametrisation"])
def test_the_one_derivative_reference_agrees_with_itself_and_is_cached(kind_name: str) -> None:
    """derivatives.reference: the 50-digit gradient of sum(ref(P) * G), taken entry by entry, dotted
    with the tangent v equals <G, the 50-digit derivative of ref along v> (two formulations of one
    number; tril and skew parameters included); a case is computed once (cached)."""
    kind = KINDS[kind_name]
    params = kind.draw(np.random.default_rng(3), 3, 1.0)
    g, v, _w = derivatives.directions(kind, params)
    grad = derivatives.reference(kind, params, "gradient")
    jvp = derivatives.reference(kind, params, "jvp")
    lhs = sum(float(np.sum(grad[k] * v[k])) for k in v)
    rhs = float(np.sum(g * jvp))
    assert abs(lhs - rhs) <= 1e-12 * (abs(rhs) + 1.0), (lhs, rhs)
    assert derivatives.reference(kind, params, "gradient") is grad
    assert derivatives.reference(kind, params, "second") is derivatives.reference(kind, params, "second")


def test_every_derivative_check_has_one_quantity_and_no_other_name_has_one() -> None:
    for name in ("gradient", "jvp", "second_ff", "gradient_float32", "jvp_bfloat16", "second_rr_float32"):
        assert callable(derivatives.quantity(name, "torch.linalg.solve"))
    for name in ("gradient_batch", "second_ff_float16", "low_precision", "forward", "jvp_float64"):
        with pytest.raises(LookupError, match="no derivative check"):
            derivatives.quantity(name)
