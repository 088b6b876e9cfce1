"""The gradients people train with (issue 27, conformance/checks_train.py): the float32 backward and
forward mode, and the gradient through a batch, each catch a planted defect that every float64,
one-matrix check misses, on an ordinary-size counterexample, and pass the correct map."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from orthoverify.conformance import validate
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
