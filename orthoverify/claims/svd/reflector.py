"""svd.reflector: the reflection of eq. 1 (Zhang, Lei & Dhillon, "Stabilizing Gradients for Deep
Neural Networks via Efficient SVD Parameterization", ICML 2018, svdRNN).

Statement: H^n_k(u) = diag(I_{n-k}, I_k - 2uu'/||u||^2), with H^n_k(0) = I_n, is symmetric and
orthogonal; for u != 0 it has n - 1 eigenvalues 1 and one eigenvalue -1.

Compared: param.svd.reflector against H' = H, H^2 = I and tr H = n - 2 (a symmetric involution
has eigenvalues +-1, the trace counts the -1s).

Evidence: the three residuals on every arithmetic (u = 0, random u, u scaled to 1e+-15 or
1e+-30) and the same identities with free SymPy symbols.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from orthoverify.backends import Backend
from orthoverify.claims._common import ALL
from orthoverify.claims._common import exact_backend as _sympy
from orthoverify.claims._common import symbol_array as _symbols
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._shared import random_vector
from orthoverify.engine.checks import Case, PropertyCheck, RunContext, SymbolicCheck
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, residual, worst
from orthoverify.param import svd as sv


def q_reflector(b: Backend, case: Case) -> Measure:
    """H = H^n_k(u) is symmetric, an involution, and has trace n - 2 (u != 0) or is I (u = 0).
    A symmetric involution has eigenvalues +-1; the trace then says exactly one is -1."""
    n = int(case["n"])
    u = b.asarray(case["u"], name="u")
    h = sv.reflector(u, n, backend=b)
    eye = b.eye(n)
    if b.is_zero(u):
        return residual(b, h - eye, n)
    tr = b.sum(b.diagonal(h)) - (n - 2)
    return worst(
        residual(b, h - b.transpose(h), n),
        residual(b, h @ h - eye, n),
        residual(b, b.stack([tr]), n),
    )


def cases_reflector(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in ctx.profile.sizes_on(ctx.backend):
        for k in sorted({1, 2, n} & set(range(1, n + 1))):
            yield {"n": n, "u": np.zeros(k)}
            for _ in range(ctx.profile.cases):
                yield {"n": n, "u": random_vector(ctx, rng, k)}
            if not ctx.backend.exact:
                for e in (-30, 30) if ctx.backend.eps < 1e-10 else (-15, 15):
                    yield {"n": n, "u": rng.standard_normal(k) * 10.0**e}


def sym_reflector(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    b = _sympy()
    for n in ctx.profile.symbolic_sizes:
        u = _symbols("u", n)
        h = sv.reflector(u, n, backend=b)
        eye = b.eye(n)
        yield f"n={n}: H' - H", b.transpose(h) - h
        yield f"n={n}: H H - I", h @ h - eye
        yield f"n={n}: trace(H) - (n - 2)", b.sum(b.diagonal(h)) - (n - 2)
        yield f"n={n}: H u + u", h @ u + u


REFLECTOR = Claim(
    id="svd.reflector",
    paper=PAPER,
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
        SymbolicCheck("symbolic", sym_reflector),
    ),
    notes="A symmetric involution has eigenvalues +-1; trace n - 2 makes exactly one of them -1.",
)


CLAIMS: list[Claim] = [REFLECTOR]
