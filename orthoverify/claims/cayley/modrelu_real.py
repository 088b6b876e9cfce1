"""Eq. 3 against the sign form wherever eq. 3 is defined, over the inputs' size (the result
cancels on |z| + b = 0); the behaviour at z = 0, where eq. 3 is 0/0, audited with limits."""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy

from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT, FLOAT_HP, exact_backend, norm_scale
from orthoverify.claims.cayley import claim
from orthoverify.engine.checks import Case, PropertyCheck, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, residual
from orthoverify.engine.templates import Line, audit, listed, repeated
from orthoverify.errors import DomainError
from orthoverify.param import cayley as cy


def _printed(b: Backend, z: Any, bias: Any) -> Any:
    """Eq. 3 at one z, or None where it is undefined (z = 0 with |z| + b >= 0: not part of the claim)."""
    try:
        return cy.modrelu_printed(z, bias, backend=b)
    except DomainError:
        return None


def q_modrelu(b: Backend, case: Case) -> Measure:
    """Eq. 3 against sign(z) ReLU(|z| + b), entry by entry, where eq. 3 is defined (z != 0 or |z| + b < 0)."""
    z, bias = b.asarray(case["z"], name="z"), b.asarray(case["b"], name="b")
    simple = cy.modrelu_real(z, bias, backend=b)
    printed = [_printed(b, z[i], bias[i]) for i in range(z.shape[0])]
    diffs = [p - simple[i] for i, p in enumerate(printed) if p is not None]
    if not diffs:
        return Measure(0.0, error=0.0)
    scale = max(norm_scale(b, z), norm_scale(b, bias), 1e-300) if not b.exact else 1.0
    return residual(b, b.stack(diffs), 1, scale)


def _float_pair(ctx: RunContext, rng: np.random.Generator, size: int) -> Case:
    """Magnitudes 10^+-3, with the boundary |z| + b = 0 in the first 8 entries and z = 0 in the 9th."""
    z = rng.standard_normal(size) * 10.0 ** rng.uniform(-3, 3)
    bb = rng.standard_normal(size) * 10.0 ** rng.uniform(-3, 3)
    bb[:8], z[8] = -np.abs(z[:8]), 0.0
    return {"z": z, "b": bb}


GRID = np.array([sympy.Rational(k, 2) for k in range(-6, 7)], dtype=object)
EVERY_PAIR = listed({"z": np.repeat(GRID, len(GRID)), "b": np.tile(GRID, len(GRID))})  # of -3, -2.5, ..., 3
FLOAT_PAIRS = repeated(lambda ctx: [64], _float_pair, per_point=lambda ctx: 4 * ctx.profile.cases)


def at_zero(b: Backend, case: Case) -> list[Line]:
    """At z = 0 with bias b > 0: eq. 3 is 0/0, the sign form 0, the one-sided limits +-b."""
    s, t = exact_backend(), sympy.Symbol("t", positive=True)
    bias = s.asarray([case["b"]], name="b")[0]
    right = sympy.limit(t / abs(t) * (abs(t) + bias), t, 0, "+")
    left = sympy.limit(-t / abs(-t) * (abs(-t) + bias), t, 0, "+")
    simple = cy.modrelu_real(np.array([sympy.Integer(0)], dtype=object), np.array([bias], dtype=object), backend=s)[0]
    undefined = _printed(s, sympy.Integer(0), bias) is None
    return [
        (f"b = {bias}: eq. 3 is undefined at z = 0", undefined),
        (f"the sign form gives {simple} at z = 0", simple == 0),
        (f"limit from the right {right} = b", right == bias),
        (f"limit from the left {left} = -b", left == -bias),
    ]


AT_ZERO = listed({"b": "1/2"})
CLAIMS: list[Claim] = [
    claim(
        id="cayley.modrelu_real",
        place=Place(section="4.1", equation="3"),
        expected="verified",
        origin="catalogue",
        summary="the real modReLU is sign(z) ReLU(|z| + b)",
        statement=(
            "sigma(z) = (z/|z|)(|z| + b) if |z| + b >= 0, else 0; in the real case this simplifies to "
            "sign(z) ReLU(|z| + b)"
        ),
        kind="identity",
        checks=(
            PropertyCheck("exhaustive", q_modrelu, EVERY_PAIR, EXACT, "eq. 3 - sign form", method="exhaustive"),
            audit("exact", at_zero, AT_ZERO, quantity_name="behaviour at z = 0"),
            PropertyCheck("float", q_modrelu, FLOAT_PAIRS, FLOAT_HP, "||eq. 3 - sign form|| / eps"),
        ),
        notes=(
            "Equal wherever eq. 3 is defined. At z = 0 with b >= 0 eq. 3 is 0/0; the sign form defines it as 0, "
            "and for b > 0 the function jumps from -b to b there (discontinuous, so not differentiable at 0)."
        ),
    )
]
