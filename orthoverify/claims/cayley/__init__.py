"""The scaled Cayley paper's claims (the paper: PAPER_INFO), one module per claim in catalogue
order. The maps are :mod:`orthoverify.param.cayley`, the analysis that is not a check
:mod:`orthoverify.param.cayley_analysis`; what several claim files share, with the family's
effort per profile, is ``_shared``."""

from __future__ import annotations

import functools

from orthoverify.claims.cayley._formerly import FORMERLY as FORMERLY
from orthoverify.engine.model import Claim, Paper
from orthoverify.engine.templates import printed_and_corrected

PAPER = "cayley"
PAPER_INFO = Paper(
    key=PAPER,
    authors="Helfrich, Willmott, Ye",
    title="Orthogonal Recurrent Neural Networks with Scaled Cayley Transform",
    venue="ICML 2018",
    short="scoRNN",
)
claim = functools.partial(Claim, paper=PAPER)
"""A claim of this paper."""
twins = functools.partial(printed_and_corrected, paper=PAPER)
"""A printed claim of this paper and its ``.corrected`` twin."""

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
