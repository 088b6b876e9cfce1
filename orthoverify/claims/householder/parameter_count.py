"""The count by orthoverify's own layout of (u_1..u_n), and the dimension of M_1's image by the
rank of its Jacobian (exact at rational points; torch float64 with a singular-value gap), so the
n redundant parameters are located, not assumed."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import sympy

from orthoverify.claims._common import EXACT, exact_backend, symbol_array
from orthoverify.claims.householder import claim
from orthoverify.engine.checks import Case, Outcome, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.templates import Tally, bespoke, count, jacobian_rank
from orthoverify.param import householder as hh


def counted_parameters(n: int) -> int:
    """The entries of (u_1, ..., u_n) in orthoverify's layout: U's lower triangle, plus u_1."""
    vecs = [exact_backend().asarray([1] * k) for k in range(1, n + 1)]
    u, u1 = hh.vectors_to_u(vecs, backend=exact_backend())
    return int(np.count_nonzero(np.tril(np.ones(u.shape)))) + (1 if u1 is not None else 0)


def tally(case: Case) -> list[Tally]:
    n = int(case["n"])
    counted = counted_parameters(n)
    return [
        ("parameters n(n+1)/2", n * (n + 1) // 2, counted),
        ("redundant parameters beyond dim O(n) = n(n-1)/2", n, counted - n * (n - 1) // 2),
    ]


def grid(ctx: RunContext) -> list[Case]:
    return [{"n": n} for n in range(1, ctx.profile.count_max_n + 1)]


def _jacobian_exact(n: int, rng: np.random.Generator) -> tuple[int, int]:
    """Rank of the Jacobian of M_1 w.r.t. (u_2, ..., u_n) at a random rational point (u_1 = 1)."""
    b = exact_backend()
    vecs_sym = [symbol_array(f"u{k}_", k) for k in range(2, n + 1)]
    syms = [s for v in vecs_sym for s in v]
    point = {s: sympy.Rational(int(rng.integers(-7, 8)) or 1, int(rng.integers(1, 5))) for s in syms}
    w = hh.m_map([np.array([sympy.Integer(1)], dtype=object), *vecs_sym], backend=b)
    flat = sympy.Matrix([sympy.together(x) for x in w.reshape(-1)])
    jac = flat.jacobian(syms).subs(point)
    return int(jac.rank()), len(syms)


def fn_jacobian_rank(ctx: RunContext) -> Outcome:
    """dim of the image: exact rank of dM_1 at rational points equals dim O(n) = n(n-1)/2."""
    rng = ctx.rng()
    notes = []
    sizes = [n for n in (2, 3, 4) if n <= max(ctx.profile.exact_sizes)]
    for n in sizes:
        rank, params = _jacobian_exact(n, rng)
        notes.append(f"n={n}: rank {rank} of {params} continuous parameters (+1 discrete u_1)")
        if rank != n * (n - 1) // 2:
            return Outcome(False, n, notes="; ".join(notes))
    return Outcome(True, len(sizes), notes="; ".join(notes))


def fn_jacobian_rank_float(ctx: RunContext) -> Outcome:
    """The numerical rank of dM_1 (:func:`jacobian_rank`) at random unit vectors is n(n-1)/2, the
    last singular value counted above 100 tol so that none sits near the decision."""
    rng, tb = ctx.rng(), ctx.backend  # torch-float64, on the run's device
    ok, notes, margins = True, [], []
    for n in [n for n in ctx.profile.sizes if 2 <= n <= 16]:
        vecs = [v / np.linalg.norm(v) for v in (rng.standard_normal(k) for k in range(2, n + 1))]
        starts = np.cumsum([0, *range(2, n + 1)])  # u_k is x[starts[k - 2] : starts[k - 1]]

        def f(x: Any, starts: Any = starts) -> Any:
            return hh.m_map([tb.asarray([1.0]), *(x[i:j] for i, j in itertools.pairwise(starts))]).reshape(-1)

        rank, s, tol = jacobian_rank(tb, f, tb.asarray(np.concatenate(vecs)))
        r = n * (n - 1) // 2
        margin = s[r - 1] / tol if r >= 1 else math.inf
        margins.append(margin)
        notes.append(f"n={n}: rank {rank} (expected {r}), s_r = {s[r - 1]:.2e} = {margin:.2e} tol")
        ok = ok and rank == r and margin > 100
    return Outcome(ok, len(notes), notes="; ".join(notes), data={"min_margin": min(margins) if margins else None})


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
            bespoke("exact_jacobian_rank", fn_jacobian_rank, EXACT, "symbolic", "rank of dM_1"),
            bespoke("jacobian_rank", fn_jacobian_rank_float, ("torch-float64",), "float", "singular-value gap of dM_1"),
        ),
        notes=(
            "The image of M_1 has dimension n(n-1)/2 (exact Jacobian rank at rational points), so the n extra "
            "parameters are the n - 1 scales of u_2..u_n (H_k is scale-invariant) and the discrete u_1."
        ),
    )
]
