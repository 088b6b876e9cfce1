"""Coverage shown constructively: Algorithm 2's preimage rebuilt through M_1 must return Q."""

from __future__ import annotations

from orthoverify import samples
from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT, FLOAT_HP
from orthoverify.claims._inputs import orthogonal_input, structured_orthogonal_cases
from orthoverify.claims.householder import claim
from orthoverify.claims.householder._shared import is_sign
from orthoverify.engine.checks import Case, PropertyCheck, SearchCheck
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, residual, worst
from orthoverify.engine.ratios import flag as _flag
from orthoverify.engine.templates import SEARCH, by_size, drawn, sampled, signed_permutations
from orthoverify.errors import NotOrthogonalError
from orthoverify.param import householder as hh
from orthoverify.strategies import orthogonal_matrices
from orthoverify.tolerance import THRESHOLD

_Q = "||M_1(u) - Q||_F / (n eps)"


def q_theorem1(b: Backend, case: Case) -> Measure:
    """Invert Q with Algorithm 2, rebuild M_1(u_1, ..., u_n), and compare with Q."""
    q = orthogonal_input(b, case)
    if (ratio := hh.orthogonality_ratio(q, b)) > THRESHOLD:  # the input must lie in the theorem's domain
        raise NotOrthogonalError("a sampler bug: the input is not orthogonal", ratio=ratio, threshold=THRESHOLD)
    res = hh.algorithm2(q, backend=b, variant="printed" if b.exact else "stable")
    return worst(
        residual(b, hh.m_map(res.vectors, backend=b) - q, q.shape[0]),
        _flag(is_sign(b, res.vectors[0][0]), "u_1 is not +-1, so M_1(u) is not orthogonal"),
    )


cases_exact = sampled(
    lambda ctx: [(n, det) for n in ctx.profile.exact_sizes for det in (1, -1)],
    lambda rng, size: {"Q": samples.rational_orthogonal(rng, size[0], det=size[1])},
    per_size=lambda ctx: max(1, ctx.profile.cases // 2),
)
SIGNED_PERMUTATIONS = signed_permutations("Q", lambda ctx: min(ctx.profile.exact_sizes[-1], 3))
strategy = by_size(1, 12, lambda n: {"Q": orthogonal_matrices(n)})
cases_float = drawn(lambda ctx, rng, n: structured_orthogonal_cases(ctx, n))


CLAIMS: list[Claim] = [
    claim(
        id="householder.theorem1",
        place=Place(theorem="1", appendix="A"),
        expected="verified",
        origin="catalogue",
        summary="every orthogonal matrix is a product of n Householder reflections M_1(u_1..u_n)",
        statement=(
            "The image of M_1 includes the set of all n x n orthogonal matrices: O(n) is a subset of M_1[R x ... x R^n]"
        ),
        kind="coverage",
        checks=(
            PropertyCheck("exact", q_theorem1, cases_exact, EXACT, "M_1(u) - Q"),
            PropertyCheck("exhaustive", q_theorem1, SIGNED_PERMUTATIONS, EXACT, "M_1(u) - Q", method="exhaustive"),
            PropertyCheck("float", q_theorem1, cases_float, FLOAT_HP, _Q),
            SearchCheck("search", q_theorem1, strategy, SEARCH, _Q),
        ),
        notes=(
            "Preimages come from Algorithm 2 (App. A): as printed in exact arithmetic, and in its "
            "cancellation-free form in floating point (see householder.algorithm2_float). Exact cases: "
            "rational orthogonal matrices (Cayley transforms of integer skew matrices, both determinants) and "
            "every signed permutation matrix of size <= 3; float cases: identity, -I, signs, permutations, "
            "det -1, near-identity at 1e-3..1e-12, rotation by pi, reflections, Haar."
        ),
    )
]
