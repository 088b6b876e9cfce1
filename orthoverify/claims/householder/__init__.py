"""The Householder paper's claims (the paper: PAPER_INFO), one module per claim in catalogue order;
each claim's evidence pairs independent formulations (eq. 6 blocks, compact WY, Algorithm 1) and
independent references (autograd, 50-digit differences, SymPy). The maths is
:mod:`orthoverify.param.householder`."""

from __future__ import annotations

import functools

from orthoverify.claims.householder._formerly import FORMERLY as FORMERLY
from orthoverify.engine.model import Claim, Paper
from orthoverify.engine.templates import printed_and_corrected

PAPER = "householder"
PAPER_INFO = Paper(
    key=PAPER,
    authors="Mhammedi, Hellicar, Rahman, Bailey",
    title="Efficient Orthogonal Parametrisation of Recurrent Neural Networks Using Householder Reflections",
    venue="ICML 2017",
    short="oRNN",
)
claim = functools.partial(Claim, paper=PAPER)
"""A claim of this paper."""
twins = functools.partial(printed_and_corrected, paper=PAPER)
"""A printed claim of this paper and its ``.corrected`` twin."""

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
