"""svd.dimension. The claim is read as: the Jacobian of p -> vec M_{1,1}(p) has rank n^2 and its
kernel is spanned by the 2n scaling directions (u_j along itself). Exactly at rational points
with distinct singular values (a repeated one lets U and V rotate together and the rank drops),
n <= 3; in float64 by torch's Jacobian, where rank is a conditioning question: sigma_1 /
sigma_{n^2} is judged against 1/eps, the kernel by test ratios."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT, exact_backend
from orthoverify.claims.svd._shared import claim
from orthoverify.engine.checks import Case, PropertyCheck
from orthoverify.engine.model import Place
from orthoverify.engine.ratios import Measure, flag, residual, scaled, worst
from orthoverify.engine.templates import sampled, witness
from orthoverify.param import svd as sv


def _blocks(n: int) -> list[slice]:
    """Where u_1..u_n, then v_1..v_n sit in M_{1,1}'s flat parameter vector (sigma follows)."""
    ends = np.cumsum([0, *range(1, n + 1), *range(1, n + 1)])
    return [slice(int(a), int(b)) for a, b in itertools.pairwise(ends)]


def _rational_point(rng: np.random.Generator, n: int) -> list[Any]:
    flat = [sympy.Rational(int(rng.integers(-4, 5)) or 1, int(rng.integers(1, 4))) for _ in range(n * (n + 1))]
    # distinct singular values: a repeated one lets U and V rotate together, and the rank drops
    return flat + [i + 1 + sympy.Rational(int(rng.integers(1, 9)), 10) for i in range(n)]


def _radial(flat: Any, block: slice, zeros: Any) -> Any:
    """A scaling direction, written into ``zeros``: u_j along itself (M does not depend on ||u_j||)."""
    zeros[block] = flat[block]
    return zeros


cases_exact = sampled(
    lambda ctx: [s for s in ctx.profile.symbolic_sizes if s <= 3],
    lambda rng, n: {"n": n, "point": np.array(_rational_point(rng, n), dtype=object)},
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
    zero = sympy.Integer(0)
    radial = all((jac * sympy.Matrix(_radial(flat, s, [zero] * len(flat)))).is_zero_matrix for s in _blocks(n))
    text = f"rank {rank} (kernel {len(flat) - rank}), scaling directions in the kernel: {radial}"
    return flag(rank == n * n and radial and len(flat) - rank == 2 * n, text)


def q_dimension_float(b: Backend, case: Case) -> Measure:
    """torch autograd Jacobian of M_{1,1}: the n^2-th singular value is far from 0 (rank n^2)
    and J maps each scaling direction to 0 (ratio against ||J|| eps)."""
    import torch

    n = int(case["n"])
    flat0 = b.asarray(case["p"], name="p")

    def fm(p: Any) -> Any:
        blocks = _blocks(n)
        us, vs = [p[s] for s in blocks[:n]], [p[s] for s in blocks[n:]]
        return sv.m_k1k2(us, vs, p[blocks[-1].stop :], backend=b).reshape(-1)

    jac = torch.autograd.functional.jacobian(fm, flat0)
    svals = torch.linalg.svdvals(jac)
    ratio = float(svals[0] / svals[n * n - 1]) if float(svals[n * n - 1]) > 0 else math.inf
    radial = []
    for block in _blocks(n):
        d = _radial(flat0, block, torch.zeros_like(flat0))
        radial.append(residual(b, jac @ d, n, float(svals[0]) * float(torch.linalg.norm(d))))
    # conditioning of the rank decision: sigma_1 / sigma_{n^2} must stay far below 1/eps
    cond = scaled(ratio * b.eps, 1, b.eps * 1e6)
    return worst(cond, *radial)


def _float_point(rng: np.random.Generator, n: int) -> Case:
    p = rng.standard_normal(n * (n + 1) + n)
    p[-n:] = np.sort(rng.uniform(0.5, 2.0, n))[::-1] + np.arange(n)[::-1]  # distinct singular values
    return {"n": n, "p": p}


CLAIMS = [
    claim(
        id="svd.dimension",
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
                sampled(lambda ctx: [s for s in ctx.profile.sizes if s <= 8], _float_point),
                ("torch-float64",),
                "sigma_1/sigma_{n^2} of the Jacobian (units of 1e6) and ||J d_radial|| / (n eps ||J||)",
            ),
        ),
        notes="Rank n^2 = dim R^{n x n} at generic points, kernel = the 2n scaling directions (u_1, v_1 included).",
    )
]
