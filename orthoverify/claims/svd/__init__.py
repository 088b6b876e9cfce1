"""The claims of the SVD-parametrisation paper (Zhang, Lei & Dhillon, ICML 2018; svdRNN), one file per
claim (or per printed claim and its correction), in the paper's order. The family's kit (its
paper, effort per profile, shared inputs and measures) is ``_shared``; ``_landscape`` holds the
inputs of Sec. 6. The maths lives in :mod:`orthoverify.param`."""

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

CATALOGUE = (
    reflector, proposition1, theorem1, theorem2, dimension, theorem3, theorem3_sharp, theorem3_proof, lemma1,
    theorem4, theorem4_proof, sigma_range, parameter_count, table3, hprod, hgrad, algorithm1, flops,
    orthogonal_rnn_omission, claim1, theorem5, corollary1,
)  # fmt: skip
"""The claims' modules in the paper's (catalogue) order."""
CLAIMS: list[Claim] = [c for module in CATALOGUE for c in module.CLAIMS]
"""The family in catalogue order."""
