"""svd.proposition1. det R = +-det B for every B = QR with Q orthogonal, so singular B decides the
printed claim: exactly, where det B = 0 is a fact and not a rounding, on rational B = QR built so
that every column norm the construction meets is rational (one zero pivot, the last). Float and
50-digit B judge the construction's residual, the printed claim on nonsingular B only."""

from __future__ import annotations

import math

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL, EXACT, FLOAT_HP, norm_scale
from orthoverify.claims.svd._shared import twins
from orthoverify.engine.checks import Case, Check, PropertyCheck, RunContext
from orthoverify.engine.model import Place
from orthoverify.engine.ratios import Measure, flag, residual, worst
from orthoverify.engine.templates import chained, float_sizes, repeated
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
        return worst(rec, flag(nonneg and positive != singular, "diag(R) >= 0, > 0 exactly when B is nonsingular"))
    return worst(rec, flag(nonneg, "a negative diagonal entry of R"))


def q_prop1_printed(b: Backend, case: Case) -> Measure:
    """Prop. 1 as printed: a positive diagonal, which no R of a singular B has."""
    bb = b.asarray(case["B"], name="B")
    if b.exact and sympy.Matrix(bb).det() == 0:
        why = "det B = 0: every R with B = QR (Q orthogonal) has det R = 0, a zero diagonal entry"
        return Measure(math.inf, why, error=math.inf)
    pos = all(b.positive(d) for d in b.diagonal(sv.householder_qr(bb, backend=b).r).reshape(-1))
    return worst(_qr_measure(b, bb), flag(pos, "a zero diagonal entry of R"))


def q_prop1_corrected(b: Backend, case: Case) -> Measure:
    return _qr_measure(b, b.asarray(case["B"], name="B"))


def _exact_qr(rng: np.random.Generator, n: int, singular: bool) -> Case:
    """B = Q R with rational Q and R (a zero last pivot when singular: earlier zeros make later
    column norms irrational, slow radicals)."""
    q = samples.rational_orthogonal(rng, n, det=1 if rng.random() < 0.5 else -1)
    r = samples.rational_upper(rng, n)
    if singular:
        r[n - 1, n - 1] = sympy.Integer(0)
    return {"B": np.array((sympy.Matrix(q) * sympy.Matrix(r)).tolist(), dtype=object)}


def _draw(ctx: RunContext, rng: np.random.Generator, n: int) -> list[Case]:
    """Exactly: a nonsingular and a singular B; in float: a random B and (n > 1) a copy with two
    equal columns."""
    if ctx.backend.exact:
        return [_exact_qr(rng, n, singular=False), _exact_qr(rng, n, singular=True)]
    g = rng.standard_normal((n, n))
    return [{"B": g}, *([{"B": np.column_stack([g[:, :-1], g[:, 0]])}] if n > 1 else [])]


cases_prop1 = chained(
    lambda ctx: [{"B": np.zeros((1, 1))}, {"B": np.array([[1.0, 1.0], [1.0, 1.0]])}],
    repeated(float_sizes, _draw, first=lambda ctx, rng, n: [{"B": np.zeros((n, n))}, {"B": -np.eye(n)}]),
)


def cases_prop1_nonsingular(ctx: RunContext) -> list[Case]:
    nonsingular = lambda b: abs(np.linalg.det(b)) > 1e-6 * max(1.0, np.linalg.norm(b)) ** b.shape[0]  # noqa: E731
    return [case for case in cases_prop1(ctx) if nonsingular(np.asarray(case["B"], dtype=float))]


def checks(corrected: bool) -> tuple[Check, ...]:
    residual_ratio = "||M_1(u) R - B|| / (n eps ||B||)"
    if corrected:
        return (PropertyCheck("all_arithmetics", q_prop1_corrected, cases_prop1, ALL, residual_ratio),)
    return (
        PropertyCheck(
            "exhaustive", q_prop1_printed, cases_prop1, EXACT, "B = M_1(u) R with diag(R) > 0", method="exhaustive"
        ),
        PropertyCheck("float", q_prop1_corrected, cases_prop1_nonsingular, FLOAT_HP, residual_ratio),
    )


CLAIMS = twins(
    "svd.proposition1",
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
