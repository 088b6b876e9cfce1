"""svd.theorem3: Thm 3 (proof in App. A.4) of svdRNN (Zhang, Lei & Dhillon, ICML 2018).

Statement: with sigma = 1, the image of M_{k1,k2} includes O(n) whenever k1 + k2 <= n + 2.

Compared: an orthogonal A against M_{k1,k2}(u(A), v(A), 1), u and v by App. A.4's assignment
with the index slips of svd.theorem3_proof repaired (param.svd.theorem3_parameters).

Evidence: every pair (k1, k2) with k1 + k2 <= n + 2 on every structured input family, on every
arithmetic. The condition is sharp: svd.theorem3_sharp.
"""

from __future__ import annotations

from orthoverify.claims._common import ALL
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._shared import cases_theorem3, q_theorem3
from orthoverify.engine.checks import PropertyCheck
from orthoverify.engine.model import Claim, Place

THEOREM3 = Claim(
    id="svd.theorem3",
    paper=PAPER,
    place=Place(theorem="3", appendix="A.4"),
    expected="verified",
    origin="catalogue",
    summary="the image of M_{k1,k2} with sigma = 1 includes O(n) if k1 + k2 <= n + 2",
    kind="coverage",
    statement="the image of M_{k1,k2} with sigma = 1 includes O(n) if k1 + k2 <= n + 2",
    checks=(
        PropertyCheck(
            "exhaustive",
            q_theorem3,
            cases_theorem3,
            ALL,
            "||M_{k1,k2}(u(A), v(A), 1) - A|| / (n eps)",
            method="exhaustive",
        ),
    ),
    notes=(
        "Every (k1, k2) with k1 + k2 <= n + 2 on every input family; the preimage is App. A.4's "
        "assignment with the index slips of svd.theorem3_proof repaired. The condition is sharp: "
        "svd.theorem3_sharp."
    ),
)


CLAIMS: list[Claim] = [THEOREM3]
