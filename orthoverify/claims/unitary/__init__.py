"""The claims of Arjovsky, Shah, Bengio, Unitary Evolution Recurrent Neural Networks (ICML 2016),
with Sec. 3 and 4.3 of Mhammedi et al., Efficient Orthogonal Parametrisation of Recurrent Neural
Networks Using Householder Reflections (ICML 2017): key ``unitary``.

One module per claim (a printed claim and its correction share one), listed in ``CLAIMS`` in
catalogue order. Evidence throughout: the maps of :mod:`orthoverify.param.unitary`, which carry
complex numbers as real pairs, against native complex arithmetic (NumPy, torch, mpmath ``mpc``,
SymPy with ``I``); SymPy proofs with free symbols; constructive inversion; exhaustive
enumeration; exact flop counts; the Jacobian rank of the uRNN map; gradients by autograd, the
backward recursion, SymPy and 50-digit central differences. Claims of a known kind are declared
through :mod:`orthoverify.engine.templates` (Agreement, Gradient, count, witness,
printed_and_corrected); the bespoke procedures left (rank scans, the Monte Carlo of init_h0, the
flop fit, the recorded gradient trajectory) say why in their docstrings. Helpers shared by several
claim files live in ``_shared`` (complex arithmetic, unitary inputs), ``_rank`` (coverage) and
``_gradient``/``_gradient_cases`` (Sec. 1); effort per profile beyond the profile's sizes and
cases is the one table of ``_effort``.
"""

from __future__ import annotations

from orthoverify.claims.unitary._formerly import FORMERLY as FORMERLY
from orthoverify.engine.model import Claim, Paper

PAPER = "unitary"
PAPER_INFO = Paper(
    key=PAPER,
    authors="Arjovsky, Shah, Bengio",
    title="Unitary Evolution Recurrent Neural Networks",
    venue="ICML 2016",
    short="uRNN",
    scope="with Sec. 3 and 4.3 of the Householder paper",
)

# The claim modules import PAPER from here, so they are imported after it is defined.
from orthoverify.claims.unitary import (  # noqa: E402
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
