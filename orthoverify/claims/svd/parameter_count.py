"""svd.parameter_count: the parameter counts of Sec. 4 of svdRNN (Zhang, Lei & Dhillon, ICML 2018).

Statement: an RNN has (n_o + n_i + n + 1) n parameters; svdRNN (n_o + n_i + m1 + m2 + 2) n -
(m1^2 + m2^2 - m1 - m2)/2, which for m1 = m2 = n is (n_o + n_i + n + 3) n.

Compared: the closed forms (param.svd.*_parameter_count) against an inventory of every
parameter array (param.svd.svdrnn_parameter_shapes).

Evidence: a grid of sizes (n up to 24 on the default profile), and the closed form's algebra in
SymPy, the extreme case m1 = m2 = n included.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import sympy

from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._shared import effort
from orthoverify.engine.checks import FunctionCheck, Outcome, RunContext
from orthoverify.engine.model import Claim
from orthoverify.engine.ratios import Measure
from orthoverify.param import svd as sv


def fn_parameter_count(ctx: RunContext) -> Outcome:
    """The closed forms against an inventory of every parameter array, over a grid of sizes, and
    the closed form's algebra in SymPy (the extreme case m1 = m2 = n included)."""
    cases = 0
    top = effort(ctx, "parameter_count.largest_n")
    for n in range(1, top + 1):
        for m1 in range(0, n + 1):
            for m2 in range(0, n + 1, max(1, n // 4)):
                for n_i, n_o in ((1, 1), (3, 7)):
                    cases += 1
                    inv = sum(math.prod(s) for s in sv.svdrnn_parameter_shapes(n, n_i, n_o, m1, m2).values())
                    closed = sv.svdrnn_parameter_count(n, n_i, n_o, m1, m2)
                    if inv != closed:
                        inputs = {"n": str(n), "n_i": str(n_i), "n_o": str(n_o), "m1": str(m1), "m2": str(m2)}
                        return Outcome(False, cases, failure=(inputs, Measure(math.inf, f"{closed} != {inv}")))
        rnn_inv = n * n + n * 3 + n + 7 * n
        cases += 1
        if sv.rnn_parameter_count(n, 3, 7) != rnn_inv:
            return Outcome(False, cases, failure=({"n": str(n)}, Measure(math.inf, "RNN count")))
    n, ni, no, m1, m2, j = sympy.symbols("n n_i n_o m1 m2 j", integer=True, positive=True)
    side = sympy.summation(j, (j, n - m1 + 1, n)) + sympy.summation(j, (j, n - m2 + 1, n))
    inventory = n * ni + n + no * n + n + side
    formula = (no + ni + m1 + m2 + 2) * n - (m1**2 + m2**2 - m1 - m2) / 2
    extreme = formula.subs({m1: n, m2: n}) - (no + ni + n + 3) * n
    cases += 2
    if sympy.simplify(inventory - formula) != 0 or sympy.simplify(extreme) != 0:
        return Outcome(False, cases, failure=({"symbolic": "1"}, Measure(math.inf, "symbolic identity fails")))
    return Outcome(True, cases, notes="inventory = closed form on the grid; symbolic identity and m1 = m2 = n case")


def replay_count(inputs: Mapping[str, Any], b: Backend) -> Measure:
    if "m1" not in inputs:
        return Measure(math.inf, "replay by rerunning the check")
    args = [int(inputs[k]) for k in ("n", "n_i", "n_o", "m1", "m2")]
    inv = sum(math.prod(s) for s in sv.svdrnn_parameter_shapes(*args).values())
    closed = sv.svdrnn_parameter_count(*args)
    return Measure(0.0 if inv == closed else math.inf, f"{closed} vs {inv}")


PARAMETER_COUNT = Claim(
    id="svd.parameter_count",
    paper=PAPER,
    where="Sec. 4",
    kind="count",
    statement=(
        "RNN: (n_o + n_i + n + 1) n parameters; svdRNN: (n_o + n_i + m1 + m2 + 2) n - (m1^2 + m2^2 - m1 - m2)/2, "
        "which for m1 = m2 = n is (n_o + n_i + n + 3) n"
    ),
    checks=(
        FunctionCheck(
            "inventory_and_algebra",
            fn_parameter_count,
            EXACT,
            "exhaustive",
            "closed form vs inventory",
            replay_fn=replay_count,
            exact=True,
        ),
    ),
    notes=(
        "The general svdRNN formula is garbled in the source text; it is read as the count of M, b, Y, sigma and "
        "the reflection vectors, which reproduces the printed extreme case (n_o + n_i + n + 3) n."
    ),
)


CLAIMS: list[Claim] = [PARAMETER_COUNT]
