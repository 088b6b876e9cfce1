"""A Routine (engine/routines.py) is judged on its value and its gradients, with references the
engine derives: each measure verifies a right routine and catches a planted defect in either."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from orthoverify.backends import Array, Backend, get_backend
from orthoverify.engine import RunContext, get_profile
from orthoverify.engine.checks import Case, Check, PropertyCheck
from orthoverify.engine.model import Evidence
from orthoverify.engine.routines import VALUE, Routine
from orthoverify.engine.templates import Derivative, Inputs


def run(check: Check, backend: str) -> Evidence:
    ctx = RunContext("t.x", check.name, get_backend(backend), get_profile("quick"), 0)
    return check.run(ctx)


def cases_rational(ctx: RunContext) -> Iterator[Case]:
    yield {"x": ["1/2", "-2/3", "3"], "c": ["2", "1/5", "-1"]}


def cases_float(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in (2, 3, 5):
        yield {"x": rng.standard_normal(n), "c": rng.standard_normal(n)}


def size(b: Backend, x: Inputs, key: str = "x") -> float:
    return 1.0 + float(np.linalg.norm(b.to_numpy(x["x"]))) * (1.0 + float(np.linalg.norm(b.to_numpy(x["c"]))))


# the value y = x o x (elementwise), the loss L = c'y, its gradient dL/dx = 2 c o x
SQUARES = Derivative(
    lambda b, case: {k: b.asarray(case[k], name=k) for k in ("x", "c")},
    lambda b, x: b.sum(x["c"] * x["x"] * x["x"]),
    lambda b, x: {},  # replaced by each routine's gradients
    size,
    dim=lambda x: x["x"].shape[0],
)


def routine(value_off: int = 0, gradient_factor: int = 2) -> Routine:
    """The right routine, or one with a planted defect: its value off by ``value_off`` in the last
    entry, or its gradient ``gradient_factor`` c o x."""

    def outputs(b: Backend, x: Inputs) -> dict[str, Array]:
        y = x["x"] * x["x"]
        bump = b.asarray([0] * (y.shape[0] - 1) + [value_off])
        return {VALUE: y + bump, "x": gradient_factor * x["c"] * x["x"]}

    return Routine(SQUARES, outputs, definition=lambda b, x: x["x"] * x["x"], value_scale=size)


def closed_form(b: Backend, x: Inputs) -> dict[str, Any]:
    return {VALUE: x["x"] * x["x"], "x": 2 * x["c"] * x["x"]}


@pytest.mark.parametrize(
    ("reference", "backend"),
    [
        ("exact", "sympy"),
        ("finite_differences", "numpy-float64"),
        ("finite_differences", "mpmath"),
        ("autograd", "torch-float64"),
        ("autograd", "numpy-float64"),  # off torch: central differences in the backend's precision
        ("against", "numpy-float64"),
    ],
)
@pytest.mark.parametrize("planted", ["value", "gradient"])
def test_a_routine_is_judged_on_its_value_and_its_gradients(reference: str, backend: str, planted: str) -> None:
    """Each measure verifies the right routine and refutes, with a confirmed counterexample, one
    whose value (planted: off by 1 in one entry) or gradient (planted: c o x for 2 c o x) is wrong."""
    cases = cases_rational if backend == "sympy" else cases_float

    def measure(r: Routine) -> Any:
        return r.against(closed_form) if reference == "against" else getattr(r, reference)

    wrong = routine(value_off=1) if planted == "value" else routine(gradient_factor=1)
    assert run(PropertyCheck("c", measure(routine()), cases, (backend,), "q"), backend).passed
    ev = run(PropertyCheck("c", measure(wrong), cases, (backend,), "q"), backend)
    assert not ev.passed and ev.counterexample is not None
