"""svd.theorem1. Theorem 1's construction (the corrected Prop. 1 applied to orthogonal Q) is run and
multiplied back on the structured inputs where a QR-based construction breaks first (the notes
list them); the other inclusion, M_1(u)'M_1(u) = I, on arbitrary vectors, half of them zero
(H(0) = I is a jump of eq. 1)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from orthoverify.backends import Backend
from orthoverify.claims._common import ALL
from orthoverify.claims._inputs import orthogonal_input, structured_orthogonal_cases
from orthoverify.claims.svd._shared import claim, vectors_case
from orthoverify.engine.checks import Case, PropertyCheck, RunContext, SearchCheck
from orthoverify.engine.model import Place
from orthoverify.engine.ratios import Measure, residual
from orthoverify.engine.templates import float_sizes, repeated
from orthoverify.param import svd as sv
from orthoverify.strategies import orthogonal_matrices

RATIO = "||M_1(u(Q)) - Q|| / (n eps)"


def q_theorem1(b: Backend, case: Case) -> Measure:
    """Rebuild M_1 from the vectors of Theorem 1's construction and compare with Q."""
    q = orthogonal_input(b, case)
    return residual(b, sv.m_k(sv.orthogonal_parameters(q, backend=b), q.shape[0], backend=b) - q, q.shape[0])


def q_image_orthogonal(b: Backend, case: Case) -> Measure:
    """M_1(u) is orthogonal for any vectors, zero ones included."""
    u = b.asarray(case["U"], name="U")
    m = sv.m_k(sv.unstack_padded(u, 1), u.shape[0], backend=b)
    return residual(b, b.transpose(m) @ m - b.eye(u.shape[0]), u.shape[0])


def cases_theorem1(ctx: RunContext) -> Iterator[Case]:
    return (case for n in float_sizes(ctx) for case in structured_orthogonal_cases(ctx, n))


def _orthogonal_strategy(ctx: RunContext) -> Any:
    top = min(max(ctx.profile.sizes), 12)
    return st.integers(1, top).flatmap(lambda n: orthogonal_matrices(n).map(lambda q: {"Q": q}))


CLAIMS = [
    claim(
        id="svd.theorem1",
        place=Place(theorem="1", appendix="A.2"),
        expected="verified",
        origin="catalogue",
        summary="the image of M_1 is exactly O(n)",
        kind="coverage",
        statement="the image of M_1 (this paper's H convention, u = 0 gives I) is exactly O(n)",
        checks=(
            PropertyCheck("all_arithmetics", q_theorem1, cases_theorem1, ALL, RATIO),
            PropertyCheck(
                "all_arithmetics:image",
                q_image_orthogonal,
                repeated(
                    lambda ctx: [(n, z) for n in float_sizes(ctx) for z in (0.0, 0.5)],
                    lambda ctx, rng, nz: {"U": vectors_case(ctx, rng, nz[0], 1, nz[1])},
                ),
                ALL,
                "||M'M - I|| / (n eps)",
            ),
            SearchCheck("search", q_theorem1, _orthogonal_strategy, ("numpy-float64",), RATIO),
        ),
        notes="Inputs: I, -I, signs, signed permutations, det -1, near I, near -I, rotations by pi, generic.",
    )
]
