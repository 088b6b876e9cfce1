"""Claims of the Householder paper (Mhammedi et al., ICML 2017; paper key ``householder``).

One module per claim (a printed claim and its ``.corrected`` twin share one), in the order of the
claim catalogue. Each pairs the statement as printed with checks that produce independent
evidence: the definition (dense products of eq. 6 blocks) against the compact WY form against
the sequential Algorithm 1; closed-form gradients against autograd, 50-digit finite differences
and SymPy's exact derivatives; exact rational and symbolic arithmetic; Hypothesis searches where
a claim could break. The maths is imported from :mod:`orthoverify.param.householder`.
"""

from __future__ import annotations

from orthoverify.claims.householder._formerly import FORMERLY as FORMERLY
from orthoverify.engine.model import Claim, Paper

PAPER = "householder"
PAPER_INFO = Paper(
    key=PAPER,
    authors="Mhammedi, Hellicar, Rahman, Bailey",
    title="Efficient Orthogonal Parametrisation of Recurrent Neural Networks Using Householder Reflections",
    venue="ICML 2017",
    short="oRNN",
)

# the claim modules import PAPER from here, so they are imported after it
from orthoverify.claims.householder import (  # noqa: E402
    algorithm1,
    algorithm1_derivation,
    algorithm2,
    algorithm2_float,
    complexity,
    flops,
    orthogonal_when,
    parameter_count,
    proposition1,
    reflection,
    theorem1,
    theorem2,
    theorem2_proof,
    two_reflections_2x2,
)

CLAIMS: list[Claim] = [
    *reflection.CLAIMS,
    *theorem1.CLAIMS,
    *algorithm2.CLAIMS,
    *algorithm2_float.CLAIMS,
    *two_reflections_2x2.CLAIMS,
    *orthogonal_when.CLAIMS,
    *parameter_count.CLAIMS,
    *proposition1.CLAIMS,
    *theorem2.CLAIMS,
    *theorem2_proof.CLAIMS,
    *algorithm1.CLAIMS,
    *algorithm1_derivation.CLAIMS,
    *flops.CLAIMS,
    *complexity.CLAIMS,
]
