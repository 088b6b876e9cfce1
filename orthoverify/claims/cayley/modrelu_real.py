"""Eq. 3 against the sign form wherever eq. 3 is defined, over the inputs' size (the result
cancels on |z| + b = 0); the behaviour at z = 0, where eq. 3 is 0/0, audited with limits."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import sympy

from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT, FLOAT_HP, exact_backend, norm_scale
from orthoverify.claims.cayley import PAPER
from orthoverify.engine.checks import Case, PropertyCheck, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, residual
from orthoverify.engine.templates import Line, audit, listed
from orthoverify.errors import DomainError
from orthoverify.param import cayley as cy


def q_modrelu(b: Backend, case: Case) -> Measure:
    """Eq. 3 against sign(z) ReLU(|z| + b), entry by entry, where eq. 3 is defined (z != 0 or |z| + b < 0)."""
    z, bias = b.asarray(case["z"], name="z"), b.asarray(case["b"], name="b")
    simple = cy.modrelu_real(z, bias, backend=b)
    diffs = []
    for i in range(z.shape[0]):
        try:
            printed = cy.modrelu_printed(z[i], bias[i], backend=b)
        except DomainError:  # eq. 3 undefined (z = 0 with |z| + b >= 0): not part of the claim
            continue
        diffs.append(printed - simple[i])
    if not diffs:
        return Measure(0.0, error=0.0)
    scale = max(norm_scale(b, z), norm_scale(b, bias), 1e-300) if not b.exact else 1.0
    return residual(b, b.stack(diffs), 1, scale)


def cases_modrelu(ctx: RunContext) -> Iterator[Case]:
    """Exact: every pair of -3, -2.5, ..., 3; float: magnitudes 10^+-3, the boundary and z = 0."""
    rng = ctx.rng()
    if ctx.backend.exact:
        grid = np.array([sympy.Rational(k, 2) for k in range(-6, 7)], dtype=object)
        yield {"z": np.repeat(grid, len(grid)), "b": np.tile(grid, len(grid))}
        return
    for _ in range(ctx.profile.cases * 4):
        z = rng.standard_normal(64) * 10.0 ** rng.uniform(-3, 3)
        bb = rng.standard_normal(64) * 10.0 ** rng.uniform(-3, 3)
        bb[:8] = -np.abs(z[:8])  # the boundary |z| + b = 0
        z[8] = 0.0
        yield {"z": z, "b": bb}


def at_zero(b: Backend, case: Case) -> list[Line]:
    """At z = 0 with bias b > 0: eq. 3 is 0/0, the sign form 0, the one-sided limits +-b."""
    s, t = exact_backend(), sympy.Symbol("t", positive=True)
    bias = s.asarray([case["b"]], name="b")[0]
    right = sympy.limit(t / abs(t) * (abs(t) + bias), t, 0, "+")
    left = sympy.limit(-t / abs(-t) * (abs(-t) + bias), t, 0, "+")
    simple = cy.modrelu_real(np.array([sympy.Integer(0)], dtype=object), np.array([bias], dtype=object), backend=s)[0]
    undefined = False
    try:
        cy.modrelu_printed(sympy.Integer(0), bias, backend=s)
    except DomainError:
        undefined = True
    return [
        (f"b = {bias}: eq. 3 is undefined at z = 0", undefined),
        (f"the sign form gives {simple} at z = 0", simple == 0),
        (f"limit from the right {right} = b", right == bias),
        (f"limit from the left {left} = -b", left == -bias),
    ]


AT_ZERO = listed({"b": "1/2"})
CLAIMS: list[Claim] = [
    Claim(
        id="cayley.modrelu_real",
        paper=PAPER,
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
            PropertyCheck("exhaustive", q_modrelu, cases_modrelu, EXACT, "eq. 3 - sign form", method="exhaustive"),
            audit("exact", at_zero, AT_ZERO, quantity_name="behaviour at z = 0"),
            PropertyCheck("float", q_modrelu, cases_modrelu, FLOAT_HP, "||eq. 3 - sign form|| / eps"),
        ),
        notes=(
            "Equal wherever eq. 3 is defined. At z = 0 with b >= 0 eq. 3 is 0/0; the sign form defines it as 0, "
            "and for b > 0 the function jumps from -b to b there (discontinuous, so not differentiable at 0)."
        ),
    )
]
