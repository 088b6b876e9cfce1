"""svd.proposition1 and its correction: Prop. 1 (proof in App. A.1) of svdRNN (Zhang, Lei &
Dhillon, ICML 2018).

Statement as printed: every B in R^{n x n} is H_n(u_n)...H_1(u_1) R with R upper triangular with a
positive diagonal. Corrected: a non-negative diagonal, positive exactly when B is nonsingular
(for singular B, det R = +-det B = 0 forces a zero on the diagonal).

Compared: B against M_1(u) R built by the proof's construction (param.svd.householder_qr),
and the signs of R's diagonal against det B (exactly, on SymPy).

Evidence: exact rational B (nonsingular and singular, B = 0 and n = 1 included) and float /
50-digit B (the printed claim only on nonsingular inputs, the corrected one on all).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL, EXACT, FLOAT_HP, norm_scale
from orthoverify.claims.svd import PAPER
from orthoverify.engine.checks import Case, Check, PropertyCheck, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, residual, worst
from orthoverify.engine.ratios import flag as _flag
from orthoverify.engine.templates import printed_and_corrected
from orthoverify.param import svd as sv


def _qr_measure(b: Backend, bb: Array) -> Measure:
    """B = M_1(u) R with R upper triangular and non-negative diagonal, positive when B is
    nonsingular (decided exactly by det B on exact backends, else by the construction itself)."""
    n = bb.shape[0]
    res = sv.householder_qr(bb, backend=b)
    diag = b.diagonal(res.r)
    nonneg = all(not b.positive(-d) for d in diag.reshape(-1))
    rec = residual(b, sv.m_k(res.vectors, n, backend=b) @ res.r - bb, n, norm_scale(b, bb))
    if b.exact:
        singular = sympy.Matrix(bb).det() == 0
        positive = all(b.positive(d) for d in diag.reshape(-1))
        return worst(rec, _flag(nonneg and positive != singular, "diag(R) >= 0, > 0 exactly when B is nonsingular"))
    return worst(rec, _flag(nonneg, "a negative diagonal entry of R"))


def q_prop1_printed(b: Backend, case: Case) -> Measure:
    """Prop. 1 as printed: a positive diagonal. For singular B no R can have one: every
    B = Q R with Q orthogonal has det R = +-det B = 0."""
    bb = b.asarray(case["B"], name="B")
    if b.exact and sympy.Matrix(bb).det() == 0:
        return Measure(
            math.inf,
            "det B = 0: every R with B = QR (Q orthogonal) has det R = 0, a zero diagonal entry",
            error=math.inf,
        )
    res = sv.householder_qr(bb, backend=b)
    pos = all(b.positive(d) for d in b.diagonal(res.r).reshape(-1))
    return worst(_qr_measure(b, bb), _flag(pos, "a zero diagonal entry of R"))


def q_prop1_corrected(b: Backend, case: Case) -> Measure:
    return _qr_measure(b, b.asarray(case["B"], name="B"))


def _exact_qr_inputs(ctx: RunContext, rng: np.random.Generator, n: int, singular: bool) -> np.ndarray:
    """Q R with rational Q and R, so every column norm met by the construction is rational."""
    q = samples.rational_orthogonal(rng, n, det=1 if rng.random() < 0.5 else -1)
    r = samples.rational_upper(rng, n)
    if singular:  # the last pivot: earlier zeros make later column norms irrational (slow radicals)
        r[n - 1, n - 1] = sympy.Integer(0)
    return np.array((sympy.Matrix(q) * sympy.Matrix(r)).tolist(), dtype=object)


def cases_prop1(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    exact = ctx.backend.exact
    yield {"B": np.zeros((1, 1))}
    yield {"B": np.array([[1.0, 1.0], [1.0, 1.0]])}
    for n in ctx.profile.sizes_on(ctx.backend):
        yield {"B": np.zeros((n, n))}
        yield {"B": -np.eye(n)}
        for _ in range(ctx.profile.cases):
            if exact:
                yield {"B": _exact_qr_inputs(ctx, rng, n, singular=False)}
                yield {"B": _exact_qr_inputs(ctx, rng, n, singular=True)}
            else:
                g = rng.standard_normal((n, n))
                yield {"B": g}
                if n > 1:
                    g2 = g.copy()
                    g2[:, -1] = g2[:, 0]
                    yield {"B": g2}


def cases_prop1_nonsingular(ctx: RunContext) -> Iterator[Case]:
    for case in cases_prop1(ctx):
        b = np.asarray(case["B"], dtype=float)
        if abs(np.linalg.det(b)) > 1e-6 * max(1.0, np.linalg.norm(b)) ** b.shape[0]:
            yield case


def checks(corrected: bool) -> tuple[Check, ...]:
    if corrected:
        return (
            PropertyCheck("all_arithmetics", q_prop1_corrected, cases_prop1, ALL, "||M_1(u) R - B|| / (n eps ||B||)"),
        )
    return (
        PropertyCheck(
            "exhaustive",
            q_prop1_printed,
            cases_prop1,
            EXACT,
            "B = M_1(u) R with diag(R) > 0",
            method="exhaustive",
        ),
        PropertyCheck(
            "float",
            q_prop1_corrected,
            cases_prop1_nonsingular,
            FLOAT_HP,
            "||M_1(u) R - B|| / (n eps ||B||)",
        ),
    )


CLAIMS: list[Claim] = printed_and_corrected(
    "svd.proposition1",
    paper=PAPER,
    place=Place(proposition="1", appendix="A.1"),
    expected="refuted",
    origin="catalogue",
    summary="every B is a product of reflections times R with positive diagonal",
    corrected_summary="every B is a product of reflections times R with non-negative diagonal",
    kind="existence",
    printed=(
        "for every B in R^{n x n} there are an upper triangular R with positive diagonal and u_i in R^i "
        "(u_i = 0 allowed) with B = H_n(u_n)...H_1(u_1) R"
    ),
    corrected=(
        "for every B: B = H_n(u_n)...H_1(u_1) R with R upper triangular with non-negative diagonal, "
        "positive exactly when B is nonsingular (the proof's construction u = B_1 - ||B_1|| e_1)"
    ),
    checks=checks,
    printed_notes=(
        "False for singular B (B = 0 with n = 1 already): det R = +-det B = 0 forces a zero on R's diagonal. "
        "The proof's base case (u_1 = 0 if B_11 > 0, else nonzero) and its step (||B_1|| > 0) both assume it away. "
        "Theorem 1 applies it only to orthogonal B, where it holds."
    ),
)
