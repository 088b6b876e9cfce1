"""cayley.three_layers: h -> D h -> (I - A) D h -> (I + A)^-1 (I - A) D h, the three layers of
the implementation, compute W h.

Helfrich, Willmott, Ye (ICML 2018) Sec. 4. Compared: the layered product against W h. Evidence:
SymPy with free symbols, exact rationals, float and 50-digit arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT, FLOAT_HP, exact_backend, norm_scale
from orthoverify.claims.cayley import PAPER
from orthoverify.claims.cayley._shared import NO_CHECK, random_signs, skew_symbols
from orthoverify.engine.checks import Case, PropertyCheck, RunContext, SymbolicCheck
from orthoverify.engine.model import Claim
from orthoverify.engine.ratios import Measure, residual
from orthoverify.param import cayley as cy


def q_three_layers(b: Backend, case: Case) -> Measure:
    a = b.asarray(case["A"], name="A")
    d = tuple(int(s) for s in case["d"])
    h = b.asarray(case["h"], name="h")
    n = a.shape[0]
    w = cy.scaled_cayley(a, d, backend=b, threshold=NO_CHECK)
    layered = cy.three_layers(a, d, h, backend=b, threshold=NO_CHECK)
    return residual(b, layered - w @ h, n, norm_scale(b, h) * (1.0 + norm_scale(b, a)))


def cases_three_layers(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    exact = ctx.backend.exact
    for n in ctx.profile.sizes_on(ctx.backend):
        for k in range(ctx.profile.cases):
            d = random_signs(rng, n)
            if exact:
                yield {
                    "A": samples.rational_skew(rng, n),
                    "d": d,
                    "h": samples.rational_matrix(rng, n, 2, bound=5, max_den=3),
                }
            else:
                bsz = 1 + k
                yield {"A": samples.random_skew(rng, n, 10.0 ** (k - 1)), "d": d, "h": rng.standard_normal((n, bsz))}


def sym_three_layers(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    b = exact_backend()
    for n in ctx.profile.symbolic_sizes:
        a = skew_symbols("a", n)
        h = np.array(sympy.symbols(f"h0:{n}", real=True), dtype=object)
        for d in ((1,) * n, (-1,) + (1,) * (n - 1)):
            yield f"n={n}, D={d}", cy.three_layers(a, d, h, backend=b) - cy.scaled_cayley(a, d, backend=b) @ h


THREE_LAYERS = Claim(
    id="cayley.three_layers",
    paper=PAPER,
    where="Sec. 4",
    statement="h -> D h, then -> (I - A) D h, then -> (I + A)^-1 (I - A) D h is the same as h -> W h",
    kind="identity",
    checks=(
        SymbolicCheck("symbolic", sym_three_layers),
        PropertyCheck("exact_rational", q_three_layers, cases_three_layers, EXACT, "three layers - W h"),
        PropertyCheck(
            "float", q_three_layers, cases_three_layers, FLOAT_HP, "||layers - W h|| / (n eps ||h|| (1 + ||A||))"
        ),
    ),
)


CLAIMS: list[Claim] = [THREE_LAYERS]
