"""Eqs. 14-15 against the derivative of L = c' W(U) h with W by its definition, each reference
scaled by the size of the terms the formula adds (LAPACK-style), for dense U and eq. 9's shape."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from orthoverify import samples
from orthoverify.claims._common import symbol_array
from orthoverify.claims.householder import claim
from orthoverify.claims.householder._shared import EQ14_15, gradient_cases_exact, sizes_nm
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.templates import Gradient, by_shape, sampled
from orthoverify.strategies import householder_vectors, reflection_vector

GRADIENT = Gradient(
    "max over columns j of ||dL/dU_j - ref_j|| / (n eps ||h|| ||c|| / ||U_j||), and ||dL/dh - ref|| / (n eps ||c||)"
)


def _random_case(rng: np.random.Generator, nm: tuple[int, int]) -> Case:
    """Dense U or U of eq. 9's shape, at random, with h and dL/dC."""
    n, m = nm
    dense = bool(rng.integers(0, 2))
    u = rng.standard_normal((n, m)) if dense else samples.reflection_vectors(rng, n, m)
    return {"U": u, "h": rng.standard_normal(n), "c": rng.standard_normal(n)}


cases_float = sampled(lambda ctx: sizes_nm(ctx.profile.sizes, min_n=2), _random_case)
"""Random U (dense or of eq. 9's shape), h and dL/dC for every profile size."""


cases_fd = sampled(
    lambda ctx: sizes_nm(ctx.profile.hp_sizes, min_n=2),
    _random_case,
    per_size=lambda ctx: max(1, ctx.profile.cases // 4),
)
"""Fewer, smaller cases for 50-digit finite differences (2nm evaluations at 50 digits each):
the profile's high-precision sizes, a quarter of its cases (at least one)."""


cases_exact = gradient_cases_exact


def cases_symbolic(ctx: RunContext) -> Iterator[Case]:
    """Fully symbolic U (dense n x m, m < n), h and dL/dC at the profile's symbolic sizes."""
    for n in ctx.profile.symbolic_sizes:
        for m in range(1, n):
            yield {
                "label": f"n={n},m={m}",
                "U": symbol_array("U", n, m),
                "h": symbol_array("h", n),
                "c": symbol_array("c", n),
            }


strategy = by_shape(
    2,
    12,
    lambda n, m: {
        "U": householder_vectors(n, m, max_exponent=20, within_column=4),
        "h": reflection_vector(n, max_exponent=20),
        "c": reflection_vector(n, max_exponent=20),
    },
)
"""U of eq. 9's shape with column scales 10^+-20 and entries spread over 10^4, h and c with entries
0 or of magnitude 10^+-20: every intermediate stays in float64's normal range, so a test ratio
measures rounding, not under/overflow."""


CLAIMS: list[Claim] = [
    claim(
        id="householder.theorem2",
        place=Place(theorem="2", equation="14-15"),
        expected="verified",
        origin="catalogue",
        summary="the gradients dL/dU and dL/dh of C = (I - U T^-1 U') h",
        statement=(
            "For m <= n-1, C = (I - U T^-1 U') h: dL/dU = U[(h~ C~') o B' + (C~ h~') o B] - (dL/dC) h~' - h C~' "
            "and dL/dh = dL/dC - U C~, with h~ = T^-1 U' h, C~ = T'^-1 U' dL/dC, B = striu(J) + I/2"
        ),
        kind="gradient",
        checks=(
            GRADIENT.symbolic(EQ14_15.identities(cases_symbolic, {"U": "dL/dU - eq. 14", "h": "dL/dh - eq. 15"})),
            GRADIENT.exact(EQ14_15.exact, cases_exact),
            GRADIENT.finite_differences(EQ14_15.finite_differences, cases_fd),
            GRADIENT.autograd(EQ14_15.autograd, cases_float),
            GRADIENT.search(EQ14_15.autograd, strategy),
        ),
        notes=(
            "Checked for general dense U (the theorem's U is any n x m matrix) and for eq. 9's shape. Finite "
            "differences are fourth order with step 10^(-digits/5); their assumed accuracy eps_fd = "
            "10^(-0.7 digits) is stated in orthoverify.engine.reference."
        ),
    )
]
