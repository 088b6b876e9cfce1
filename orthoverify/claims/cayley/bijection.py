"""Both round trips, scaled by the maps' conditioning (1 + ||A||^2), and the Pfaffian argument
that I + W is never singular, symbolically; signed permutations exhaust the eigenvalue -1 cases."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.claims._common import (
    EXACT,
    FLOAT_HP,
    RIGOROUS,
    RIGOROUS_SIZES,
    exact_backend,
    frobenius,
    norm_scale,
    rigorous_check,
)
from orthoverify.claims.cayley import claim
from orthoverify.claims.cayley._shared import conjugated, skew_symbols
from orthoverify.engine.checks import Case, PropertyCheck, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, flag, residual, worst
from orthoverify.engine.templates import SEARCH, by_size, exact_sizes, identities, sampled, signed_permutations, witness
from orthoverify.engine.templates_more import guarded
from orthoverify.errors import SingularError
from orthoverify.param import cayley as cy
from orthoverify.strategies import skew_wide


def forward_residuals(b: Backend, case: Case) -> tuple[Array, Array, Array]:
    """A, and for W = cayley(A) and A~ = (I + W)^-1 (I - W): W'W - I and A~ - A, both zero exactly
    (one formulation for the float ratios and the Arb enclosure)."""
    a = b.asarray(case["A"], name="A")
    w = cy.cayley(a, backend=b)
    return a, b.transpose(w) @ w - b.eye(a.shape[0]), cy.inverse_cayley(w, backend=b, threshold=math.inf) - a


@guarded(SingularError, "I + cayley(A) is singular")
def q_forward_roundtrip(b: Backend, case: Case) -> Measure:
    """W = cayley(A) is orthogonal and A = (I + W)^-1 (I - W) is recovered. The inverse map's
    condition number is (1 + ||A||_2^2)/2, so the round trip is scaled by 1 + ||A||_F^2; W'W - I
    by 1 + ||A||, as the solve's backward error is ~ cond(I + A) eps."""
    a, orth, trip = forward_residuals(b, case)
    na, n = norm_scale(b, a), a.shape[0]
    return worst(residual(b, orth, n, 1.0 + na), residual(b, trip, n, 1.0 + na * na))


@guarded(SingularError, "I + W is singular")
def q_backward_roundtrip(b: Backend, case: Case) -> Measure:
    """For orthogonal W without eigenvalue -1 (conjugated P W P' when the case carries P):
    A = (I + W)^-1 (I - W) is skew and cayley(A) = W."""
    w = conjugated(b, case)
    n = w.shape[0]
    a = cy.inverse_cayley(w, backend=b, threshold=math.inf)
    na = norm_scale(b, a)
    return worst(
        residual(b, a + b.transpose(a), n, 1.0 + na * na),
        residual(b, cy.cayley(a, backend=b) - w, n, 1.0 + na * na),
    )


def cases_forward(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    top = 8 if ctx.backend.eps > 1e-10 else 15
    for n in ctx.profile.sizes_on(ctx.backend):
        yield {"A": np.zeros((n, n))}
        for scale in (1e-12, 1e-3, 1.0, 10.0, *(() if ctx.backend.eps > 1e-10 else (1e3,))):
            for _ in range(ctx.profile.cases):
                yield {"A": samples.random_skew(rng, n, scale)}
        yield {"A": samples.random_skew(rng, n, 10.0 ** rng.uniform(-top, 2))}


cases_forward_exact = sampled(exact_sizes, lambda rng, n: {"A": samples.rational_skew(rng, n, bound=4)})


def cases_backward(ctx: RunContext) -> Iterator[Case]:
    """Orthogonal W with no eigenvalue -1, built in each arithmetic's precision: Cayley transforms
    conjugated by signed permutations, near I, and (float) Haar matrices of determinant 1."""
    rng = ctx.rng()
    for n in ctx.profile.sizes_on(ctx.backend):
        for scale in (1e-6, 1.0, 30.0):
            yield {"A": samples.random_skew(rng, n, scale), "S": np.eye(n)}
        p = samples.random_signed_permutation(rng, n)
        yield {"A": samples.random_skew(rng, n), "S": np.eye(n), "conj": 0, "P": p}
        if ctx.backend.method == "float":
            for _ in range(ctx.profile.cases):
                yield {"Q": samples.haar_orthogonal_det(rng, n, 1)}


def symbolic_sides(n: int) -> tuple[tuple[str, Any, Any], ...]:
    """(label, left, right) of each identity for a skew A of free symbols: both compositions, and
    the Pfaffian argument that I + W is never singular."""
    b = exact_backend()
    a = skew_symbols("a", n)
    eye = b.eye(n)
    w = cy.cayley(a, backend=b)
    # det(I + A) = 1 + sum of squared Pfaffians >= 1, so I + W = 2 (I + A)^-1 is never singular
    minors = sum(
        (sympy.Matrix(a[np.ix_(s, s)]).det() for k in range(2, n + 1, 2) for s in itertools.combinations(range(n), k)),
        sympy.Integer(0),
    )
    det_a = sympy.Matrix(eye + a).det()
    return (
        (f"n={n}: W'W - I", b.transpose(w) @ w, eye),
        (f"n={n}: (I - A)(I + A)^-1 - W", (eye - a) @ b.solve(eye + a, eye), w),
        # A solves (I + W) X = I - W, and I + W is invertible (below), so (I + W)^-1 (I - W) = A
        (f"n={n}: (I + W) A - (I - W)", (eye + w) @ a, eye - w),
        (f"n={n}: det(I + A) - (1 + sum of even principal minors of A)", det_a, 1 + minors),
        (f"n={n}: det(I + W) det(I + A) - 2^n", sympy.Matrix(eye + w).det() * det_a, sympy.Integer(2**n)),
    )


SYMBOLIC, cases_symbolic = identities(symbolic_sides)


def minus_one_excluded(b: Backend, case: Case) -> Measure:
    """Exactly: inverse_cayley rejects W exactly when W has the eigenvalue -1 (det(I + W) = 0),
    and otherwise returns a skew A with cayley(A) = W."""
    s = exact_backend()
    w = s.asarray(case["W"], name="W")
    n = w.shape[0]
    singular = sympy.Matrix(s.eye(n) + w).det() == 0
    try:
        a = cy.inverse_cayley(w, backend=s)
    except SingularError:
        return flag(singular, "rejected a W without eigenvalue -1")
    if singular:
        return flag(False, "inverse returned for singular I + W")
    return flag(
        s.is_zero(a + s.transpose(a)) and s.is_zero(cy.cayley(a, backend=s) - w), "A not skew or cayley(A) != W"
    )


def strategy_skew(ctx: RunContext) -> Any:
    top = 6 if ctx.backend.eps > 1e-10 else 12
    return by_size(1, 8, lambda n: {"A": skew_wide(n, max_exponent=top)})(ctx)


def enclose_bijection(b: Backend, case: Case) -> Any:
    """max(||W'W - I||_F, ||(I + W)^-1 (I - W) - A||_F) for W = cayley(A), from exact A."""
    orth, trip = (frobenius(b, r) for r in forward_residuals(b, case)[1:])
    return orth.max(trip) if b.family == "flint" else max(orth, trip)


cases_bijection_rational = sampled(
    lambda ctx: RIGOROUS_SIZES, lambda rng, n: {"A": samples.rational_skew(rng, n, bound=4)}, per_size=lambda ctx: 2
)
"""Integer skew-symmetric A (exact in Arb) with entries up to 4 in magnitude."""


FORWARD = "max(||W'W - I|| / (1 + ||A||), ||A~ - A|| / (1 + ||A||^2)) / (n eps)"
BACKWARD = "max(||A + A'||, ||cayley(A) - W||) / ((1 + ||A||^2) n eps)"

# Two solves with condition number ~ ||A||^2 widen 50-digit balls past 1e-40 at n = 16: 100 digits.
RIGOROUS_100 = tuple("flint-100" if name == "flint" else name for name in RIGOROUS)


CLAIMS: list[Claim] = [
    claim(
        id="cayley.bijection",
        place=Place(section="3.1"),
        expected="verified",
        origin="catalogue",
        summary=(
            "the Cayley transform is a bijection between skew matrices and orthogonal matrices without eigenvalue -1"
        ),
        statement=(
            "W = (I+A)^-1 (I-A) and A = (I+W)^-1 (I-W) are inverse bijections between the skew-symmetric "
            "matrices and the orthogonal matrices with no eigenvalue -1"
        ),
        kind="identity",
        checks=(
            SYMBOLIC.symbolic("symbolic", cases_symbolic),
            PropertyCheck(
                "exhaustive",
                minus_one_excluded,
                signed_permutations("W"),  # all 58 for n <= 3
                EXACT,
                "inverse map vs det(I + W)",
                method="exhaustive",
            ),
            PropertyCheck("exact", q_forward_roundtrip, cases_forward_exact, EXACT, "round trip"),
            PropertyCheck("float", q_forward_roundtrip, cases_forward, FLOAT_HP, FORWARD),
            PropertyCheck("float:inverse", q_backward_roundtrip, cases_backward, FLOAT_HP, BACKWARD),
            witness("search", q_forward_roundtrip, backends=SEARCH, quantity_name=FORWARD, strategy=strategy_skew),
            rigorous_check(
                "rigorous",
                cases_bijection_rational,
                enclose_bijection,
                quantity="max(||W'W - I||_F, ||A~ - A||_F)",
                backends=RIGOROUS_100,
            ),
        ),
        notes=(
            "Symbolic for n = 2, 3: both compositions are the identity, and det(I + A) = 1 + (sum of the squared "
            "Pfaffians of A's even principal submatrices) >= 1, so I + W = 2 (I + A)^-1 is never singular: no "
            "Cayley transform has the eigenvalue -1, and every W without it is reached. Float round trips are scaled "
            "by 1 + ||A||^2 (twice the inverse map's condition number) and W'W - I by 1 + ||A|| (the solve's "
            "backward error is cond(I + A) eps, and cond(I + A) = sqrt(1 + ||A||_2^2))."
        ),
    )
]
