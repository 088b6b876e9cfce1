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
from orthoverify.engine.templates import Line, audit, single
from orthoverify.errors import DomainError
from orthoverify.param import cayley as cy


def q_modrelu(b: Backend, case: Case) -> Measure:
    """Eq. 3 as printed against sign(z) ReLU(|z| + b), entry by entry, wherever eq. 3 is defined
    (z != 0, or |z| + b < 0); the simplified form's value at the excluded points is recorded."""
    z = b.asarray(case["z"], name="z")
    bias = b.asarray(case["b"], name="b")
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
    diff = b.stack(diffs)
    scale = max(norm_scale(b, z), norm_scale(b, bias), 1e-300) if not b.exact else 1.0
    return residual(b, diff, 1, scale)


def cases_modrelu(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    if ctx.backend.exact:
        grid = [sympy.Rational(k, 2) for k in range(-6, 7)]
        pairs = [(z, bb) for z in grid for bb in grid]
        yield {"z": np.array([p[0] for p in pairs], dtype=object), "b": np.array([p[1] for p in pairs], dtype=object)}
        return
    for _ in range(ctx.profile.cases * 4):
        z = rng.standard_normal(64) * 10.0 ** rng.uniform(-3, 3)
        bb = rng.standard_normal(64) * 10.0 ** rng.uniform(-3, 3)
        bb[:8] = -np.abs(z[:8])  # the boundary |z| + b = 0
        z[8] = 0.0
        yield {"z": z, "b": bb}


def at_zero(b: Backend, case: Case) -> list[Line]:
    """What happens at z = 0 with bias b > 0: eq. 3 is undefined there (0/0), the simplified form
    gives 0, and the limits from either side are +-b (a jump of 2b)."""
    s = exact_backend()
    bias = s.asarray([case["b"]], name="b")[0]
    t = sympy.Symbol("t", positive=True)
    right = sympy.limit(t / abs(t) * (abs(t) + bias), t, 0, "+")
    left = sympy.limit(-t / abs(-t) * (abs(-t) + bias), t, 0, "+")
    simple = cy.modrelu_real(np.array([sympy.Integer(0)], dtype=object), np.array([bias], dtype=object), backend=s)[0]
    try:
        cy.modrelu_printed(sympy.Integer(0), bias, backend=s)
        undefined = False
    except DomainError:
        undefined = True
    return [
        (f"b = {bias}: eq. 3 is undefined at z = 0", undefined),
        (f"the sign form gives {simple} at z = 0", simple == 0),
        (f"limit from the right {right} = b", right == bias),
        (f"limit from the left {left} = -b", left == -bias),
    ]


AT_ZERO = single({"b": "1/2"})


MODRELU_REAL = Claim(
    id="cayley.modrelu_real",
    paper=PAPER,
    place=Place(section="4.1", equation="3"),
    expected="verified",
    origin="catalogue",
    summary="the real modReLU is sign(z) ReLU(|z| + b)",
    statement=(
        "sigma(z) = (z/|z|)(|z| + b) if |z| + b >= 0, else 0; in the real case this simplifies to sign(z) ReLU(|z| + b)"
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


CLAIMS: list[Claim] = [MODRELU_REAL]
