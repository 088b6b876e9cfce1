"""The compact WY form against the product of eq. 6 blocks, as two formulations that must agree;
the m = n variant with arbitrary u_1 (the identity does not need u_1 = +-1)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.claims._common import EXACT, FLOAT_HP
from orthoverify.claims.householder import claim
from orthoverify.claims.householder._shared import lower_symbols, sizes_nm, u_and_u1, u_sample, w_by_definition
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.templates import Agreement, by_shape, sampled
from orthoverify.param import householder as hh
from orthoverify.strategies import householder_vectors


def definition(b: Backend, case: Case) -> Array:
    """H_n(u_n) ... H_{n-m+1}(u_{n-m+1}), the product of eq. 6 blocks."""
    u, u1 = u_and_u1(b, case)
    return w_by_definition(b, u, u1) if u.shape[1] or u1 is not None else b.eye(u.shape[0])


# eq. 13: I - U T^-1 U' (times H_1(u_1) when m = n)
WY = Agreement(
    lambda b, case: hh.compact_wy(*u_and_u1(b, case), backend=b),
    definition,
    "||M - (I - U T^-1 U')||_F / (n eps ||M||_F)",
)
cases_float = sampled(
    lambda ctx: sizes_nm(ctx.profile.sizes_on(ctx.backend), include_square=True),
    lambda rng, nm: u_sample(rng, nm[0], nm[1], rng.standard_normal),
)
strategy = by_shape(2, 16, lambda n, m: {"U": householder_vectors(n, m, max_exponent=30)})


def cases_exact(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in ctx.profile.exact_sizes:
        for m in range(1, n):
            yield {"U": samples.rational_vectors(rng, n, m)}
        yield {"U": samples.rational_vectors(rng, n, n - 1), "u1": np.array([sympy.Rational(3, 2)], dtype=object)}


def cases_symbolic(ctx: RunContext) -> Iterator[Case]:
    for n in ctx.profile.symbolic_sizes:
        for m in range(1, n):
            yield {"label": f"n={n},m={m}: (I - U T^-1 U') - M", "U": lower_symbols("u", n, m)}
        u1 = np.array([sympy.Symbol("u1", real=True)], dtype=object)
        yield {"label": f"n={n},m=n: (I - U T^-1 U') H_1(u1) - M_1", "U": lower_symbols("u", n, n - 1), "u1": u1}


CLAIMS: list[Claim] = [
    claim(
        id="householder.proposition1",
        place=Place(proposition="1", equation="12-13"),
        expected="verified",
        origin="catalogue",
        summary="the compact WY form I - U T^-1 U' of a product of reflections",
        statement=(
            "For m <= n-1: H_n(u_n)...H_{n-m+1}(u_{n-m+1}) = I - U T^-1 U' with T = striu(U'U) + diag(U'U)/2; "
            "for m = n the right-hand side becomes (I - U T^-1 U') H_1(u_1) with U = (u_n|...|u_2)"
        ),
        kind="identity",
        checks=(
            WY.symbolic("symbolic", cases_symbolic),
            WY.check("exact", cases_exact, EXACT),
            WY.check("float", cases_float, FLOAT_HP),
            WY.search("search", strategy),
        ),
        notes="The m = n variant is checked with arbitrary u_1 (the identity does not need u_1 = +-1).",
    )
]
