"""svd.theorem1: Thm 1 (proof in App. A.2) of svdRNN (Zhang, Lei & Dhillon, ICML 2018).

Statement: the image of M_1 (products of n reflections H_n(u_n)...H_1(u_1), u = 0 giving I) is
exactly O(n).

Compared: an orthogonal Q against M_1 of the vectors of Theorem 1's construction
(param.svd.orthogonal_parameters); and M_1(u)'M_1(u) against I for arbitrary vectors.

Evidence: structured orthogonal inputs (I, -I, signs, signed permutations, det -1, near I,
near -I, rotations by pi, generic) on every arithmetic, random vectors with zeros, and a
Hypothesis search over orthogonal matrices.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from orthoverify.backends import Backend
from orthoverify.claims._common import ALL
from orthoverify.claims._inputs import orthogonal_input, structured_orthogonal_cases
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._shared import vectors_case
from orthoverify.engine.checks import Case, PropertyCheck, RunContext, SearchCheck
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, residual
from orthoverify.param import svd as sv
from orthoverify.strategies import orthogonal_matrices


def q_theorem1(b: Backend, case: Case) -> Measure:
    """Rebuild M_1 from the vectors of Theorem 1's construction and compare with Q."""
    q = orthogonal_input(b, case)
    n = q.shape[0]
    vecs = sv.orthogonal_parameters(q, backend=b)
    return residual(b, sv.m_k(vecs, n, backend=b) - q, n)


def q_image_orthogonal(b: Backend, case: Case) -> Measure:
    """M_1(u) is orthogonal for any vectors, zero ones included."""
    u = b.asarray(case["U"], name="U")
    n = u.shape[0]
    m = sv.m_k(sv.unstack_padded(u, 1), n, backend=b)
    return residual(b, b.transpose(m) @ m - b.eye(n), n)


def cases_theorem1(ctx: RunContext) -> Iterator[Case]:
    for n in ctx.profile.sizes_on(ctx.backend):
        yield from structured_orthogonal_cases(ctx, n)


def cases_image(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in ctx.profile.sizes_on(ctx.backend):
        for zeros in (0.0, 0.5):
            for _ in range(ctx.profile.cases):
                yield {"U": vectors_case(ctx, rng, n, 1, zeros)}


def _orthogonal_strategy(ctx: RunContext) -> Any:
    from hypothesis import strategies as st

    top = max(ctx.profile.sizes)
    return st.integers(1, min(top, 12)).flatmap(lambda n: orthogonal_matrices(n).map(lambda q: {"Q": q}))


THEOREM1 = Claim(
    id="svd.theorem1",
    paper=PAPER,
    place=Place(theorem="1", appendix="A.2"),
    expected="verified",
    origin="catalogue",
    summary="the image of M_1 is exactly O(n)",
    kind="coverage",
    statement="the image of M_1 (this paper's H convention, u = 0 gives I) is exactly O(n)",
    checks=(
        PropertyCheck("all_arithmetics", q_theorem1, cases_theorem1, ALL, "||M_1(u(Q)) - Q|| / (n eps)"),
        PropertyCheck("all_arithmetics:image", q_image_orthogonal, cases_image, ALL, "||M'M - I|| / (n eps)"),
        SearchCheck("search", q_theorem1, _orthogonal_strategy, ("numpy-float64",), "||M_1(u(Q)) - Q|| / (n eps)"),
    ),
    notes="Inputs: I, -I, signs, signed permutations, det -1, near I, near -I, rotations by pi, generic.",
)


CLAIMS: list[Claim] = [THEOREM1]
