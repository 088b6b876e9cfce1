"""The claims of the SVD-parametrisation paper (Zhang, Lei & Dhillon, ICML 2018; svdRNN), one file per
claim (or per printed claim and its correction), in the paper's order. The family's kit (its
paper, effort per profile, shared inputs and measures) is ``_shared``; ``_landscape`` holds the
inputs of Sec. 6 and ``_flop_rows`` the rows of svd.flops. The maths lives in
:mod:`orthoverify.param`."""

from __future__ import annotations

from orthoverify.claims.svd import (
    algorithm1,
    claim1,
    corollary1,
    dimension,
    flops,
    hgrad,
    hprod,
    lemma1,
    orthogonal_rnn_omission,
    parameter_count,
    proposition1,
    reflector,
    sigma_range,
    table3,
    theorem1,
    theorem2,
    theorem3,
    theorem3_proof,
    theorem3_sharp,
    theorem4,
    theorem4_proof,
    theorem5,
)
from orthoverify.claims.svd._formerly import FORMERLY as FORMERLY
from orthoverify.claims.svd._shared import PAPER as PAPER
from orthoverify.claims.svd._shared import PAPER_INFO as PAPER_INFO
from orthoverify.engine.model import Claim

CLAIMS: list[Claim] = [
    *reflector.CLAIMS,
    *proposition1.CLAIMS,
    *theorem1.CLAIMS,
    *theorem2.CLAIMS,
    *dimension.CLAIMS,
    *theorem3.CLAIMS,
    *theorem3_sharp.CLAIMS,
    *theorem3_proof.CLAIMS,
    *lemma1.CLAIMS,
    *theorem4.CLAIMS,
    *theorem4_proof.CLAIMS,
    *sigma_range.CLAIMS,
    *parameter_count.CLAIMS,
    *table3.CLAIMS,
    *hprod.CLAIMS,
    *hgrad.CLAIMS,
    *algorithm1.CLAIMS,
    *flops.CLAIMS,
    *orthogonal_rnn_omission.CLAIMS,
    *claim1.CLAIMS,
    *theorem5.CLAIMS,
    *corollary1.CLAIMS,
]
"""The family in catalogue order."""
