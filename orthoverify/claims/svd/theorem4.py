"""svd.theorem4. As for Theorem 2 (parameters from W's SVD; exactly, from rational factors), on
every shape m != n of the profile's sizes (max(m, n) <= 16), and a Hypothesis search over W up
to 6 x 6 with entries up to 1e6."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from orthoverify.claims._common import EXACT, FLOAT_HP
from orthoverify.claims.svd._shared import FACTORS, claim, factor_cases, q_svd_parameters, w_cases
from orthoverify.engine.checks import PropertyCheck, RunContext, SearchCheck
from orthoverify.engine.model import Place
from orthoverify.engine.templates import exact_sizes, float_sizes


def _matrix_strategy(ctx: RunContext) -> Any:
    elems = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    shape = st.tuples(st.integers(1, 6), st.integers(1, 6))
    return shape.flatmap(lambda s: arrays(np.float64, s, elements=elems).map(lambda w: {"W": w}))


CLAIMS = [
    claim(
        id="svd.theorem4",
        place=Place(theorem="4", appendix="A.5"),
        expected="verified",
        origin="catalogue",
        summary="the rectangular svdRNN maps reach every m x n matrix",
        kind="coverage",
        statement=(
            "m <= n: the image of M^{m,n}_{1,n-m+1} is all m x n matrices; m > n: the image of M^{m,n}_{m-n+1,1} is"
        ),
        checks=(
            PropertyCheck(
                "float",
                q_svd_parameters,
                w_cases(
                    lambda ctx: [
                        (m, n) for n in float_sizes(ctx) for m in float_sizes(ctx) if m != n and max(m, n) <= 16
                    ]
                ),
                FLOAT_HP,
                "||M(p(W)) - W|| / (max(m,n) eps ||W||)",
            ),
            FACTORS.check(
                "exact",
                factor_cases(lambda ctx: [(m, n) for m in exact_sizes(ctx) for n in exact_sizes(ctx) if m != n]),
                EXACT,
            ),
            SearchCheck(
                "search", q_svd_parameters, _matrix_strategy, ("numpy-float64",), "||M(p(W)) - W|| / (eps ||W||)"
            ),
        ),
    )
]
