"""The claims of Arjovsky, Shah, Bengio, Unitary Evolution Recurrent Neural Networks (ICML 2016),
with Sec. 2, 3, 4.3 and App. A of Mhammedi et al. (ICML 2017): key ``unitary``.

One module per claim (a printed claim and its correction share one), listed in ``CLAIMS`` in
catalogue order. The maps of :mod:`orthoverify.param.unitary` carry complex numbers as real pairs,
so the independent reference throughout is each backend's native complex arithmetic. Shared by
several claim files: ``_shared`` (the paper, complex arithmetic, unitary inputs), ``_rank``
(coverage), ``_gradient``/``_gradient_cases`` (Sec. 1) and ``_effort`` (effort per profile).
"""

from __future__ import annotations

from orthoverify.claims.unitary import (
    building_blocks,
    chain_rule,
    complex_block,
    composition,
    corollary1,
    corollary1_proof,
    coverage,
    coverage_threshold,
    gradient_bound,
    gradient_bound_modrelu,
    init_h0,
    init_silent,
    lemma1,
    modrelu,
    modrelu_real,
    rnn_equivalence,
)
from orthoverify.claims.unitary._formerly import FORMERLY as FORMERLY
from orthoverify.claims.unitary._shared import PAPER as PAPER
from orthoverify.claims.unitary._shared import PAPER_INFO as PAPER_INFO
from orthoverify.engine.model import Claim

CLAIMS: list[Claim] = [
    *complex_block.CLAIMS,
    *rnn_equivalence.CLAIMS,
    *modrelu_real.CLAIMS,
    *corollary1.CLAIMS,
    *corollary1_proof.CLAIMS,
    *lemma1.CLAIMS,
    *building_blocks.CLAIMS,
    *composition.CLAIMS,
    *coverage.CLAIMS,
    *coverage_threshold.CLAIMS,
    *gradient_bound.CLAIMS,
    *gradient_bound_modrelu.CLAIMS,
    *chain_rule.CLAIMS,
    *modrelu.CLAIMS,
    *init_h0.CLAIMS,
    *init_silent.CLAIMS,
]
