"""svd.theorem4: Thm 4 (proof in App. A.5) of svdRNN (Zhang, Lei & Dhillon, ICML 2018).

Statement: for m <= n the image of M^{m,n}_{1,n-m+1} is all m x n matrices; for m > n the image
of M^{m,n}_{m-n+1,1} is.

Compared: W against M^{m,n} of the parameters read off W's SVD, and, exactly, U Sigma V'
against M^{m,n} of the parameters of rational U, V, sigma.

Evidence: zero, rank-one, random and badly scaled W of every shape m != n (max(m, n) <= 16) in
float and at 50 digits; rational factors in exact arithmetic; a Hypothesis search over
matrices up to 6 x 6.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from orthoverify.claims._common import EXACT, FLOAT_HP
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._shared import FACTORS, factor_cases, q_svd_parameters, w_cases
from orthoverify.engine.checks import Case, PropertyCheck, RunContext, SearchCheck
from orthoverify.engine.model import Claim, Place


def cases_theorem4(ctx: RunContext) -> Iterator[Case]:
    sizes = ctx.profile.sizes_on(ctx.backend)
    shapes = [(m, n) for n in sizes for m in sizes if m != n and max(m, n) <= 16]
    yield from w_cases(ctx, shapes)


def cases_theorem4_exact(ctx: RunContext) -> Iterator[Case]:
    sizes = ctx.profile.exact_sizes
    yield from factor_cases(ctx, [(m, n) for m in sizes for n in sizes if m != n])


def _matrix_strategy(ctx: RunContext) -> Any:
    from hypothesis import strategies as st
    from hypothesis.extra.numpy import arrays

    elems = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    shape = st.tuples(st.integers(1, 6), st.integers(1, 6))
    return shape.flatmap(lambda s: arrays(np.float64, s, elements=elems).map(lambda w: {"W": w}))


THEOREM4 = Claim(
    id="svd.theorem4",
    paper=PAPER,
    place=Place(theorem="4", appendix="A.5"),
    expected="verified",
    origin="catalogue",
    summary="the rectangular svdRNN maps reach every m x n matrix",
    kind="coverage",
    statement=(
        "m <= n: the image of M^{m,n}_{1,n-m+1} is all m x n matrices; m > n: the image of M^{m,n}_{m-n+1,1} is"
    ),
    checks=(
        PropertyCheck("float", q_svd_parameters, cases_theorem4, FLOAT_HP, "||M(p(W)) - W|| / (max(m,n) eps ||W||)"),
        FACTORS.check("exact", cases_theorem4_exact, EXACT),
        SearchCheck("search", q_svd_parameters, _matrix_strategy, ("numpy-float64",), "||M(p(W)) - W|| / (eps ||W||)"),
    ),
)


CLAIMS: list[Claim] = [THEOREM4]
