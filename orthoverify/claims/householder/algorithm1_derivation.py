"""App. B's statements transcribed as exact SymPy matrix algebra and judged line by line: an
audit, since only the lines (not Algorithm 1, householder.algorithm1) are in question."""

from __future__ import annotations

from orthoverify.claims.householder import twins
from orthoverify.claims.householder._shared import audited_proof
from orthoverify.engine.checks import Check
from orthoverify.engine.model import Claim, Place
from orthoverify.param.householder_proofs import appendix_b_lines, appendix_b_reference


def checks(corrected: bool) -> tuple[Check, ...]:
    keys = ("U", "h", "c")
    return (audited_proof(appendix_b_lines, appendix_b_reference, keys, corrected=corrected),)


CLAIMS: list[Claim] = twins(
    "householder.algorithm1_derivation",
    place=Place(appendix="B"),
    expected="refuted",
    origin="added",
    summary="the derivation of Algorithm 1 in App. B holds as printed",
    corrected_summary="the derivation of Algorithm 1 with the closing sum to k",
    kind="gradient",
    printed=(
        "The derivation of Algorithm 1: the t_ij formula, eqs. 18-23, the elementwise form of dL/dU, and "
        "[dL/dU]_{*,k} = -C~_k H_{*,k+1} - h~_k g with g = dL/dC - sum_{j=1}^{k-1} C~_j U_{*,j}"
    ),
    corrected=(
        "With g = dL/dC - sum_{j=1}^{k} C~_j U_{*,j} in the closing formula, the continuation lines of "
        "(18)-(19) and (22)-(23) read as t_kk h~_k = ... (t_kk C~_k = ...), and eq. 18's sum over r running to "
        "n, every statement of App. B holds"
    ),
    checks=checks,
    printed_notes=(
        "As printed, the closing formula's g sums to k-1, while the derivation just above it and Algorithm 1 "
        "(line 13 updates g before line 14 uses it) need the sum to k; for m >= 2 the displays after the first "
        "in (18)-(19) and (22)-(23) equal t_kk h~_k (t_kk C~_k) rather than their left-hand side, and eq. 18's "
        "inner sum stops at m instead of n. Algorithm 1 itself is right (householder.algorithm1)."
    ),
)
