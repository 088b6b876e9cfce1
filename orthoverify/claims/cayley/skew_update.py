"""Symbolic skewness of dL/dA; in IEEE arithmetic, bitwise A + A' = 0 after every update."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Backend
from orthoverify.claims._common import FLOAT_HP, exact_backend, symbol_array
from orthoverify.claims.cayley import claim
from orthoverify.claims.cayley._shared import NO_CHECK, random_signs, skew_symbols
from orthoverify.engine.checks import Case, PropertyCheck, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure
from orthoverify.engine.templates import identities
from orthoverify.param import cayley as cy
from orthoverify.param._validate import orthogonality_ratio


def skew_sides(n: int) -> list[tuple[str, Any, Any]]:
    """dL/dA = -(dL/dA)' and A+ = -(A+)' for A+ = A - lambda dL/dA, with free symbols."""
    b, lam, a = exact_backend(), sympy.Symbol("lam", positive=True), skew_symbols("a", n)
    grad = cy.cayley_gradient(a, tuple([-1] + [1] * (n - 1)), symbol_array("g", n, n), backend=b)
    step = a - lam * grad
    return [(f"n={n}: dL/dA + (dL/dA)'", grad, -b.transpose(grad)), (f"n={n}: A+ + A+'", step, -b.transpose(step))]


SKEW, cases_symbolic = identities(skew_sides)


def q_skew_update(b: Backend, case: Case) -> Measure:
    """Additive steps with eq. 2 and a random G each: A stays exactly skew, W orthogonal."""
    rng, n, d = np.random.default_rng(int(case["seed"])), int(case["n"]), tuple(int(s) for s in case["d"])
    a, lr, worst_orth = b.asarray(samples.random_skew(rng, n)), b.scalar(case["lr"]), 0.0
    for _ in range(int(case["steps"])):
        g = b.asarray(rng.standard_normal((n, n)))
        a = a - lr * cy.cayley_gradient(a, d, g, backend=b, threshold=NO_CHECK)
        if not b.is_zero(a + b.transpose(a)):
            return Measure(math.inf, "A + A' != 0 exactly after an update", error=math.inf)
        worst_orth = max(worst_orth, orthogonality_ratio(cy.scaled_cayley(a, d, backend=b), b))
    return Measure(worst_orth)


def cases_skew_update(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    steps = 20 if ctx.backend.method == "high-precision" else 200
    for n in [n for n in ctx.profile.sizes_on(ctx.backend) if n <= 32]:
        yield {"seed": int(rng.integers(2**31)), "n": n, "d": random_signs(rng, n), "lr": "0.01", "steps": steps}


_QUANTITY = "exact skewness, then max ||W'W - I|| / (n eps) over the steps"

CLAIMS: list[Claim] = [
    claim(
        id="cayley.skew_update",
        place=Place(section="3.2"),
        expected="verified",
        origin="catalogue",
        summary="the gradient step keeps A skew-symmetric and W orthogonal",
        statement=(
            "dL/dA is skew-symmetric, so the update A <- A - lambda dL/dA keeps A skew-symmetric and, in turn, "
            "W = (I + A)^-1 (I - A) D orthogonal"
        ),
        kind="identity",
        checks=(
            SKEW.symbolic("symbolic", cases_symbolic),
            PropertyCheck("float", q_skew_update, cases_skew_update, FLOAT_HP, _QUANTITY),
        ),
        notes=(
            "In IEEE arithmetic the computed V' - V is exactly skew (x - y and y - x round to negatives), so "
            "floating-point updates keep A exactly skew: the checks test bitwise A + A' = 0 after every step."
        ),
    )
]
