"""svd.dimension: the dimension count after Thm 2 (Sec. 3) of svdRNN (Zhang, Lei & Dhillon,
ICML 2018).

Statement: M_{1,1} maps n^2 + 2n inputs onto R^{n x n}; since H(u) does not depend on ||u||, the
input space has exactly n^2 dimensions.

Compared: the rank of the Jacobian d vec(M_{1,1}) / dp with n^2, and its kernel with the 2n
scaling directions (each u_j, v_j along itself).

Evidence: the exact Jacobian (SymPy) at rational points for n <= 3, and torch's autograd
Jacobian in float64 (rank by the conditioning sigma_1 / sigma_{n^2}, kernel by test ratios).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT, exact_backend
from orthoverify.claims.svd import PAPER
from orthoverify.engine.checks import Case, PropertyCheck, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, flag, residual, scaled, worst
from orthoverify.engine.templates import sampled, witness
from orthoverify.param import svd as sv


def _rational_point(rng: np.random.Generator, m: int, n: int, k1: int, k2: int) -> list[Any]:
    flat: list[Any] = []
    for j in [*range(k1, m + 1), *range(k2, n + 1)]:
        flat.extend(sympy.Rational(int(rng.integers(-4, 5)) or 1, int(rng.integers(1, 4))) for _ in range(j))
    # distinct singular values: a repeated one lets U and V rotate together, and the rank drops
    flat.extend(i + 1 + sympy.Rational(int(rng.integers(1, 9)), 10) for i in range(min(m, n)))
    return flat


def _radial(m: int, n: int, k1: int, k2: int, flat: list[Any]) -> list[sympy.Matrix]:
    """The scaling directions (u_j along itself): M does not depend on ||u_j||."""
    out = []
    pos = 0
    for j in [*range(k1, m + 1), *range(k2, n + 1)]:
        d = [sympy.Integer(0)] * len(flat)
        d[pos : pos + j] = flat[pos : pos + j]
        out.append(sympy.Matrix(d))
        pos += j
    return out


cases_exact = sampled(
    lambda ctx: [s for s in ctx.profile.symbolic_sizes if s <= 3],
    lambda rng, n: {"n": n, "point": np.array(_rational_point(rng, n, n, 1, 1), dtype=object)},
    per_size=lambda ctx: max(1, ctx.profile.cases // 2),
)
"""Random rational points of M_{1,1} (distinct singular values) for n <= 3."""


def violation_exact(b: Backend, case: Case) -> Measure:
    """The exact Jacobian of M_{1,1} at a rational point (parsed strictly, never evaluated): its
    rank must be n^2 and its kernel exactly the 2n scaling directions (the input space, modulo
    norms, has n^2 dimensions)."""
    n = int(case["n"])
    flat = list(exact_backend().asarray(case["point"], name="point"))
    jac = sv.exact_jacobian(n, n, 1, 1, flat)
    rank = jac.rank()
    radial = all((jac * d).is_zero_matrix for d in _radial(n, n, 1, 1, flat))
    text = f"rank {rank} (kernel {len(flat) - rank}), scaling directions in the kernel: {radial}"
    return flag(rank == n * n and radial and len(flat) - rank == 2 * n, text)


def q_dimension_float(b: Backend, case: Case) -> Measure:
    """torch autograd Jacobian of M_{1,1}: the n^2-th singular value is far from 0 (rank n^2)
    and J maps each scaling direction to 0 (ratio against ||J|| eps)."""
    import torch

    n = int(case["n"])
    flat0 = b.asarray(case["p"], name="p")

    def fm(p: Any) -> Any:
        us, vs, s = _split_torch(p, n)
        return sv.m_k1k2(us, vs, s, backend=b).reshape(-1)

    jac = torch.autograd.functional.jacobian(fm, flat0)
    svals = torch.linalg.svdvals(jac)
    ratio = float(svals[0] / svals[n * n - 1]) if float(svals[n * n - 1]) > 0 else math.inf
    radial = []
    pos = 0
    for j in [*range(1, n + 1), *range(1, n + 1)]:
        d = torch.zeros_like(flat0)
        d[pos : pos + j] = flat0[pos : pos + j]
        radial.append(residual(b, jac @ d, n, float(svals[0]) * float(torch.linalg.norm(d))))
        pos += j
    # conditioning of the rank decision: sigma_1 / sigma_{n^2} must stay far below 1/eps
    cond = scaled(ratio * b.eps, 1, b.eps * 1e6)
    return worst(cond, *radial)


def _split_torch(p: Any, n: int) -> tuple[list[Any], list[Any], Any]:
    pos = 0
    us, vs = [], []
    for j in range(1, n + 1):
        us.append(p[pos : pos + j])
        pos += j
    for j in range(1, n + 1):
        vs.append(p[pos : pos + j])
        pos += j
    return us, vs, p[pos:]


def cases_dimension_float(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in [s for s in ctx.profile.sizes if s <= 8]:
        for _ in range(ctx.profile.cases):
            p = rng.standard_normal(n * (n + 1) + n)
            p[-n:] = np.sort(rng.uniform(0.5, 2.0, n))[::-1] + np.arange(n)[::-1]  # distinct singular values
            yield {"n": n, "p": p}


DIMENSION = Claim(
    id="svd.dimension",
    paper=PAPER,
    place=Place(theorem="2", section="3", note="the remark after it"),
    expected="verified",
    origin="catalogue",
    summary="M_{1,1}'s input space has exactly n^2 dimensions",
    kind="count",
    statement=(
        "M_{1,1} maps n^2 + 2n inputs onto R^{n x n}; since H(u) is invariant to ||u||, "
        "the input space has exactly n^2 dimensions"
    ),
    checks=(
        witness(
            "exact_jacobian_rank",
            violation_exact,
            candidates=cases_exact,
            backends=EXACT,
            quantity_name="rank of d vec(M_{1,1}) / dp",
            method="symbolic",
        ),
        PropertyCheck(
            "jacobian_rank",
            q_dimension_float,
            cases_dimension_float,
            ("torch-float64",),
            "sigma_1/sigma_{n^2} of the Jacobian (units of 1e6) and ||J d_radial|| / (n eps ||J||)",
        ),
    ),
    notes="Rank n^2 = dim R^{n x n} at generic points, kernel = the 2n scaling directions (u_1, v_1 included).",
)


CLAIMS: list[Claim] = [DIMENSION]
