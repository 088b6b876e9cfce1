"""svd.theorem2. Two independent routes to the image: W's computed SVD turned into parameters (in float
and at 50 digits), and, exactly, rational orthogonal factors of either determinant, with a zero or
negative sigma, which no float SVD produces."""

from __future__ import annotations

from orthoverify.claims._common import EXACT, FLOAT_HP
from orthoverify.claims.svd._shared import FACTORS, claim, factor_cases, q_svd_parameters, w_cases
from orthoverify.engine.checks import PropertyCheck
from orthoverify.engine.model import Place
from orthoverify.engine.templates import exact_sizes, float_sizes

CLAIMS = [
    claim(
        id="svd.theorem2",
        place=Place(theorem="2", appendix="A.3"),
        expected="verified",
        origin="catalogue",
        summary="the image of M_{1,1} is all of R^{n x n}",
        kind="coverage",
        statement="the image of M_{1,1} is all of R^{n x n}: every W = M_{1,1}(u_1..u_n, v_1..v_n, sigma)",
        checks=(
            PropertyCheck(
                "float",
                q_svd_parameters,
                w_cases(lambda ctx: [(n, n) for n in float_sizes(ctx)]),
                FLOAT_HP,
                "||M_{1,1}(p(W)) - W|| / (n eps ||W||)",
            ),
            FACTORS.check("exact", factor_cases(lambda ctx: [(n, n) for n in exact_sizes(ctx)]), EXACT),
        ),
        notes="Zero, rank-one, singular and badly scaled W included; sigma may be zero or negative.",
    )
]
