"""svd.theorem3. The construction differs with (k1, k2), so it is multiplied back for every pair and
input family the notes name (exhaustive), on every arithmetic."""

from __future__ import annotations

from orthoverify.claims._common import ALL
from orthoverify.claims.svd._shared import THEOREM3_RATIO, cases_theorem3, claim, q_theorem3
from orthoverify.engine.checks import PropertyCheck
from orthoverify.engine.model import Place

CLAIMS = [
    claim(
        id="svd.theorem3",
        place=Place(theorem="3", appendix="A.4"),
        expected="verified",
        origin="catalogue",
        summary="the image of M_{k1,k2} with sigma = 1 includes O(n) if k1 + k2 <= n + 2",
        kind="coverage",
        statement="the image of M_{k1,k2} with sigma = 1 includes O(n) if k1 + k2 <= n + 2",
        checks=(PropertyCheck("exhaustive", q_theorem3, cases_theorem3, ALL, THEOREM3_RATIO, method="exhaustive"),),
        notes=(
            "Every (k1, k2) with k1 + k2 <= n + 2 on every input family; the preimage is App. A.4's "
            "assignment with the index slips of svd.theorem3_proof repaired. The condition is sharp: "
            "svd.theorem3_sharp."
        ),
    )
]
