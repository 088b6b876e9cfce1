"""svd.reflector. The three residuals H' - H, H^2 - I and tr H - (n - 2) decide the claim with no
eigensolver (why they suffice: the claim's notes). The float inputs go to the edges of eq. 1's
formula: u = 0 (H = I by definition) and |u| at 10^+-30 (10^+-15 in float32), where u'u under- or
overflows unless the norm is scaled."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from orthoverify.backends import Backend
from orthoverify.claims._common import ALL, symbol_array
from orthoverify.claims.svd._shared import claim, extremes, lengths, random_vector
from orthoverify.engine.checks import Case, Identity, PropertyCheck
from orthoverify.engine.model import Place
from orthoverify.engine.ratios import Measure, residual, worst
from orthoverify.engine.templates import float_sizes, repeated
from orthoverify.engine.templates_more import symbolic_identities
from orthoverify.param import svd as sv


def q_reflector(b: Backend, case: Case) -> Measure:
    """H = H^n_k(u) is symmetric, an involution, and has trace n - 2 (u != 0) or is I (u = 0)."""
    n, u = int(case["n"]), b.asarray(case["u"], name="u")
    h, eye = sv.reflector(u, n, backend=b), b.eye(n)
    if b.is_zero(u):
        return residual(b, h - eye, n)
    tr = b.sum(b.diagonal(h)) - (n - 2)
    return worst(residual(b, h - b.transpose(h), n), residual(b, h @ h - eye, n), residual(b, b.stack([tr]), n))


cases_reflector = repeated(
    lambda ctx: [(n, k) for n in float_sizes(ctx) for k in lengths(n)],
    lambda ctx, rng, nk: {"n": nk[0], "u": random_vector(ctx, rng, nk[1])},
    first=lambda ctx, rng, nk: {"n": nk[0], "u": np.zeros(nk[1])},
    last=lambda ctx, rng, nk: [{"n": nk[0], "u": u} for u in extremes(ctx, rng, nk[1], (30, 15))],
)


def sym_reflector(b: Backend, n: int) -> Iterator[Identity]:
    u = symbol_array("u", n)
    h = sv.reflector(u, n, backend=b)
    yield "H' - H", b.transpose(h) - h
    yield "H H - I", h @ h - b.eye(n)
    yield "trace(H) - (n - 2)", b.sum(b.diagonal(h)) - (n - 2)
    yield "H u + u", h @ u + u


CLAIMS = [
    claim(
        id="svd.reflector",
        place=Place(equation="1"),
        expected="verified",
        origin="catalogue",
        summary="H^n_k(u) is a symmetric orthogonal reflection (I for u = 0)",
        kind="identity",
        statement=(
            "H^n_k(u) = diag(I_{n-k}, I_k - 2uu'/||u||^2) (I_n for u = 0) is symmetric and orthogonal (H^2 = I); "
            "for u != 0 it has n - 1 eigenvalues 1 and one eigenvalue -1"
        ),
        checks=(
            PropertyCheck(
                "all_arithmetics",
                q_reflector,
                cases_reflector,
                ALL,
                "max(||H - H'||, ||H^2 - I||, |tr H - (n-2)|) / (n eps)",
            ),
            symbolic_identities("symbolic", sym_reflector),
        ),
        notes="A symmetric involution has eigenvalues +-1; trace n - 2 makes exactly one of them -1.",
    )
]
