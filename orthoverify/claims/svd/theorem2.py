"""svd.theorem2: Thm 2 (proof in App. A.3) of svdRNN (Zhang, Lei & Dhillon, ICML 2018).

Statement: the image of M_{1,1}(u_1..u_n, v_1..v_n, sigma) is all of R^{n x n}.

Compared: W against M_{1,1} of the parameters read off W's SVD (param.svd.svd_parameters), and,
exactly, U diag(sigma) V' against M_{1,1} of the parameters of rational U, V, sigma.

Evidence: zero, rank-one, random and badly scaled W in float and at 50 digits; rational
orthogonal factors with a zero (singular) or negative sigma in exact arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterator

from orthoverify.claims._common import EXACT, FLOAT_HP
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._shared import FACTORS, factor_cases, q_svd_parameters, w_cases
from orthoverify.engine.checks import Case, PropertyCheck, RunContext
from orthoverify.engine.model import Claim, Place


def cases_theorem2(ctx: RunContext) -> Iterator[Case]:
    yield from w_cases(ctx, [(n, n) for n in ctx.profile.sizes_on(ctx.backend)])


def cases_theorem2_exact(ctx: RunContext) -> Iterator[Case]:
    yield from factor_cases(ctx, [(n, n) for n in ctx.profile.exact_sizes])


THEOREM2 = Claim(
    id="svd.theorem2",
    paper=PAPER,
    place=Place(theorem="2", appendix="A.3"),
    expected="verified",
    origin="catalogue",
    summary="the image of M_{1,1} is all of R^{n x n}",
    kind="coverage",
    statement="the image of M_{1,1} is all of R^{n x n}: every W = M_{1,1}(u_1..u_n, v_1..v_n, sigma)",
    checks=(
        PropertyCheck("float", q_svd_parameters, cases_theorem2, FLOAT_HP, "||M_{1,1}(p(W)) - W|| / (n eps ||W||)"),
        FACTORS.check("exact", cases_theorem2_exact, EXACT),
    ),
    notes="Zero, rank-one, singular and badly scaled W included; sigma may be zero or negative.",
)


CLAIMS: list[Claim] = [THEOREM2]
