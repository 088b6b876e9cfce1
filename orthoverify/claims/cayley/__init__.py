"""The claims of Helfrich, Willmott, Ye, Orthogonal Recurrent Neural Networks with Scaled Cayley
Transform (ICML 2018, scoRNN): key ``cayley``.

One module per claim (a printed claim and its correction share one), listed in ``CLAIMS`` in
catalogue order. Evidence throughout: the maps of :mod:`orthoverify.param.cayley` in float32,
float64, torch, 50-digit mpmath and exact SymPy arithmetic; Theorem 3.1 by enumerating every D at
high precision, by the certified inverse map (float64 up to n = 512, exact, and its certificate
re-derived at 50 digits) and by a Hypothesis hunt for a W that no D serves; Theorem 3.2 against
torch autograd, 50-digit central differences and SymPy's exact derivatives; App. B's orthogonality
experiment measured over 10^4 updates; the printed numbers recomputed exactly. The analysis maths
that is not a check (the enumeration of D, the skew dimension, the experiments' configurations,
App. B's experiment) is :mod:`orthoverify.param.cayley_analysis`; helpers shared by several claim
files live in ``_shared``; effort per profile beyond the profile's sizes and cases is the one
table of ``_effort``.
"""

from __future__ import annotations

from orthoverify.claims.cayley._formerly import FORMERLY as FORMERLY
from orthoverify.engine.model import Claim, Paper

PAPER = "cayley"
PAPER_INFO = Paper(
    key=PAPER,
    authors="Helfrich, Willmott, Ye",
    title="Orthogonal Recurrent Neural Networks with Scaled Cayley Transform",
    venue="ICML 2018",
    short="scoRNN",
)

# The claim modules import PAPER from here, so they are imported after it is defined.
from orthoverify.claims.cayley import (  # noqa: E402
    bijection,
    example_2x2,
    init,
    modrelu_real,
    orthogonality_drift,
    parameter_count,
    skew_update,
    table_params,
    theorem3_1,
    theorem3_2,
    three_layers,
)

CLAIMS: list[Claim] = [
    *bijection.CLAIMS,
    *example_2x2.CLAIMS,
    *theorem3_1.CLAIMS,
    *theorem3_2.CLAIMS,
    *skew_update.CLAIMS,
    *orthogonality_drift.CLAIMS,
    *three_layers.CLAIMS,
    *modrelu_real.CLAIMS,
    *init.CLAIMS,
    *parameter_count.CLAIMS,
    *table_params.CLAIMS,
]
