"""The layered product against W h, scaled by the solve's conditioning 1 + ||A||."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.claims._common import EXACT, FLOAT_HP, norm_scale
from orthoverify.claims.cayley import claim
from orthoverify.claims.cayley._shared import NO_CHECK, random_signs, skew_symbols
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.templates import Agreement
from orthoverify.param import cayley as cy


def _inputs(b: Backend, case: Case) -> tuple[Array, tuple[int, ...], Array]:
    return b.asarray(case["A"], name="A"), tuple(int(s) for s in case["d"]), b.asarray(case["h"], name="h")


def layered(b: Backend, case: Case) -> Array:
    """h -> D h -> (I - A) D h -> (I + A)^-1 (I - A) D h, the implementation's three layers."""
    return cy.three_layers(*_inputs(b, case), backend=b, threshold=NO_CHECK)


def product(b: Backend, case: Case) -> Array:
    """W h with W = (I + A)^-1 (I - A) D formed first."""
    a, d, h = _inputs(b, case)
    return cy.scaled_cayley(a, d, backend=b, threshold=NO_CHECK) @ h


# ||W h|| = ||h||; the solve with I + A amplifies rounding by about cond(I + A) <= 1 + ||A||
AGREE = Agreement(
    layered,
    product,
    "||layers - W h|| / (n eps ||h|| (1 + ||A||))",
    condition=lambda b, case: 1.0 + norm_scale(b, b.asarray(case["A"], name="A")),
)


def cases_three_layers(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in ctx.profile.sizes_on(ctx.backend):
        for k in range(ctx.profile.cases):
            d = random_signs(rng, n)
            if ctx.backend.exact:
                a, h = samples.rational_skew(rng, n), samples.rational_matrix(rng, n, 2, bound=5, max_den=3)
                yield {"A": a, "d": d, "h": h}
            else:
                yield {"A": samples.random_skew(rng, n, 10.0 ** (k - 1)), "d": d, "h": rng.standard_normal((n, 1 + k))}


def cases_symbolic(ctx: RunContext) -> Iterator[Case]:
    for n in ctx.profile.symbolic_sizes:
        h = np.array(sympy.symbols(f"h0:{n}", real=True), dtype=object)
        for d in ((1,) * n, (-1,) + (1,) * (n - 1)):
            yield {"label": f"n={n}, D={d}", "A": skew_symbols("a", n), "d": d, "h": h}


CLAIMS: list[Claim] = [
    claim(
        id="cayley.three_layers",
        place=Place(section="4"),
        expected="verified",
        origin="catalogue",
        summary="D, then I - A, then (I + A)^-1 computes W h",
        statement="h -> D h, then -> (I - A) D h, then -> (I + A)^-1 (I - A) D h is the same as h -> W h",
        kind="identity",
        checks=(
            AGREE.symbolic("symbolic", cases_symbolic),
            AGREE.check("exact", cases_three_layers, EXACT),
            AGREE.check("float", cases_three_layers, FLOAT_HP),
        ),
    )
]
