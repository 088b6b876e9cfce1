"""svd.theorem3_proof. The printed assignment is executed as printed (param.svd.theorem3_printed)
and multiplied back, on the very cases of svd.theorem3, so the printed and the repaired
assignment (param.svd.theorem3_parameters) meet the same inputs."""

from __future__ import annotations

from orthoverify.claims._common import ALL
from orthoverify.claims.svd._shared import THEOREM3_RATIO, cases_theorem3, q_theorem3, theorem3_measure, twins
from orthoverify.engine.checks import Check, PropertyCheck
from orthoverify.engine.model import Place
from orthoverify.param import svd as sv

q_theorem3_printed = theorem3_measure(sv.theorem3_printed)
"""App. A.4's assignment executed as printed (the zero range starts at k1 + k2 - 2)."""


def checks(corrected: bool) -> tuple[Check, ...]:
    if corrected:
        q, quantity = q_theorem3, THEOREM3_RATIO
    else:
        q, quantity = q_theorem3_printed, "||M_{k1,k2}(printed u, v, 1) - A|| / (n eps)"
    return (PropertyCheck("exhaustive", q, cases_theorem3, ALL, quantity, method="exhaustive"),)


CLAIMS = twins(
    "svd.theorem3_proof",
    place=Place(appendix="A.4", equation="19-22"),
    expected="refuted",
    origin="added",
    summary="the assignment in Theorem 3's proof reaches every orthogonal A",
    corrected_summary="Theorem 3's proof with the zero range starting at k2 + k1 - 1",
    kind="identity",
    printed=(
        "the proof's assignment (k2 >= k1 - 1): u_k = a_k (k >= k1), v_{k2+k1-k-1} = a_k (k = k1-1..1), "
        "v_t = 0 (t = k2+k1-2..n), and symmetrically (21), gives M_{k1,k2}(u, v, 1) = A"
    ),
    corrected=(
        "with v_{k2+k1-k-1} = (0, ..., 0, a_k) and v_t = 0 for t = k2+k1-1..n (and symmetrically), "
        "M_{k1,k2}(u, v, 1) = A for every orthogonal A and k1 + k2 <= n + 2"
    ),
    checks=checks,
    printed_notes=(
        "Two slips: v_{k2+k1-k-1} (length k2+k1-k-1) receives a_k (length k), which only makes sense "
        "padded with leading zeros; and the zero range starts at t = k2+k1-2, the slot just given a_1, "
        "so executed in order it erases H_1(a_1) and the product is A H_1(a_1) != A whenever a_1 != 0 "
        "(e.g. n = 2, k1 = 2, k2 = 1, A = diag(1, -1)). With padding and the range starting at "
        "k2+k1-1 the construction works (svd.theorem3_proof.corrected)."
    ),
)
