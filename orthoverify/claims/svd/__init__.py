"""The claims of the SVD-parametrisation paper: Zhang, Lei & Dhillon, "Stabilizing Gradients for
Deep Neural Networks via Efficient SVD Parameterization", ICML 2018 (svdRNN; paper key ``svd``).

One file per claim (or per printed claim and its correction), in the paper's order: the
reflection and the coverage theorems of Secs. 3 and 5 with their proofs (App. A), the sigma
map (eq. 8), the parameter counts (Sec. 4, Table 3), Hprod, Hgrad and Algorithm 1 (Algs. 1-3),
the flop counts (Sec. 4.2, Table 1), the oRNN omission (Sec. 4.1), and the linear-RNN landscape
of Sec. 6 (Claim 1, Thm 5, Cor. 1). Each file's docstring states its claim, what it compares
and on which evidence; the maths lives in :mod:`orthoverify.param.svd`,
:mod:`orthoverify.param.svd_flops` (with :mod:`orthoverify.param.polynomial_fit`),
:mod:`orthoverify.param.svd_table3` and :mod:`orthoverify.param.linear_rnn`. Helpers shared by
several files are in ``_shared`` (with the family's effort per profile), ``_landscape`` (inputs
of Sec. 6) and ``_flop_rows`` (the rows of svd.flops).
"""

from __future__ import annotations

from orthoverify.claims.svd._formerly import FORMERLY as FORMERLY
from orthoverify.engine.model import Claim, Paper

PAPER = "svd"
PAPER_INFO = Paper(
    key=PAPER,
    authors="Zhang, Lei, Dhillon",
    title="Stabilizing Gradients for Deep Neural Networks via Efficient SVD Parameterization",
    venue="ICML 2018",
    short="svdRNN",
)

# the claim files read PAPER from here, so they are imported after it
from orthoverify.claims.svd import (  # noqa: E402
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
