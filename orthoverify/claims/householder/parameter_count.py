"""Counted in orthoverify's own layout of (u_1..u_n), and M_1's image dimension as its Jacobian's rank (exact
at rational points, float64 with a singular-value gap): the n redundant parameters located, not assumed."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT, exact_backend
from orthoverify.claims.householder import claim
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.templates import Tally, count
from orthoverify.engine.templates_more import full_rank, sizes_between
from orthoverify.param import householder as hh


def tally(case: Case) -> list[Tally]:
    """The entries of (u_1, ..., u_n) in orthoverify's layout (U's lower triangle, plus u_1) counted."""
    n, b = int(case["n"]), exact_backend()
    u, u1 = hh.vectors_to_u([b.asarray([1] * k) for k in range(1, n + 1)], backend=b)
    counted = int(np.count_nonzero(np.tril(np.ones(u.shape)))) + (1 if u1 is not None else 0)
    return [
        ("parameters n(n+1)/2", n * (n + 1) // 2, counted),
        ("redundant parameters beyond dim O(n) = n(n-1)/2", n, counted - n * (n - 1) // 2),
    ]


def grid(ctx: RunContext) -> list[Case]:
    return [{"n": n} for n in range(1, ctx.profile.count_max_n + 1)]


def point(b: Backend, rng: np.random.Generator, n: int) -> tuple[Any, Any]:
    """M_1 of (u_2, ..., u_n) stacked, u_1 = 1, at a random rational point (exact) or unit vectors."""
    starts, one = np.cumsum([0, *range(2, n + 1)]), b.asarray([1] if b.exact else [1.0])  # u_k: x[starts[k - 2]:]
    if b.exact:
        r = rng.integers
        x = np.array([sympy.Rational(int(r(-7, 8)) or 1, int(r(1, 5))) for _ in range(starts[-1])])
    else:
        x = np.concatenate([v / np.linalg.norm(v) for v in (rng.standard_normal(k) for k in range(2, n + 1))])

    def f(y: Any) -> Any:
        return hh.m_map([one, *(y[i:j] for i, j in itertools.pairwise(starts))], backend=b).reshape(-1)

    return f, b.asarray(x)


def dim_o(n: int) -> int:
    return n * (n - 1) // 2


CLAIMS: list[Claim] = [
    claim(
        id="householder.parameter_count",
        place=Place(section="4", note="advantage 4"),
        expected="verified",
        origin="catalogue",
        summary="m = n reflections take n(n+1)/2 parameters, n of them redundant",
        statement=(
            "When m = n the total number of parameters needed for W is n(n+1)/2: only n redundant parameters, "
            "since O(n) is an n(n-1)/2-dimensional manifold"
        ),
        kind="count",
        checks=(
            count("count", grid=grid, tally=tally, backends=EXACT, quantity_name="parameter count"),
            full_rank(
                "exact_jacobian_rank", sizes_between(2, 4, "exact_sizes"), point, dim_o, "rank of dM_1", backends=EXACT
            ),
            full_rank("jacobian_rank", sizes_between(2, 16), point, dim_o, "singular-value gap of dM_1"),
        ),
        notes=(
            "The image of M_1 has dimension n(n-1)/2 (exact Jacobian rank at rational points), so the n extra "
            "parameters are the n - 1 scales of u_2..u_n (H_k is scale-invariant) and the discrete u_1."
        ),
    )
]
