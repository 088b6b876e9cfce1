"""svd.parameter_count. A count, stated against counted: the closed forms (param.svd.*_parameter_count)
against an inventory of every parameter array (param.svd.svdrnn_parameter_shapes) on a grid of
sizes, and the closed form's algebra (the inventory summed symbolically; the case m1 = m2 = n)
as two more points, each counting the identities that do not reduce to 0."""

from __future__ import annotations

import math

import sympy

from orthoverify.claims._common import EXACT
from orthoverify.claims.svd._shared import claim, effort
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.model import Place
from orthoverify.engine.templates import Tally, count
from orthoverify.param import svd as sv


def grid(ctx: RunContext) -> list[Case]:
    """Every svdRNN size (n, m1, m2 on a grid, two (n_i, n_o)) with an RNN size per n, then the two
    symbolic identities."""
    points: list[Case] = []
    for n in range(1, effort(ctx).parameter_count_largest_n + 1):
        sizes = [
            (m1, m2, *io) for m1 in range(n + 1) for m2 in range(0, n + 1, max(1, n // 4)) for io in ((1, 1), (3, 7))
        ]
        points += [{"n": n, "n_i": n_i, "n_o": n_o, "m1": m1, "m2": m2} for m1, m2, n_i, n_o in sizes]
        points.append({"n": n, "n_i": 3, "n_o": 7, "rnn": "1"})
    return [*points, {"identity": "inventory"}, {"identity": "m1 = m2 = n"}]


def _symbolic(which: str) -> sympy.Expr:
    """The closed form minus the symbolic inventory (or, at m1 = m2 = n, minus (n_o + n_i + n + 3) n)."""
    n, ni, no, m1, m2, j = sympy.symbols("n n_i n_o m1 m2 j", integer=True, positive=True)
    formula = (no + ni + m1 + m2 + 2) * n - (m1**2 + m2**2 - m1 - m2) / 2
    if which == "inventory":
        side = sympy.summation(j, (j, n - m1 + 1, n)) + sympy.summation(j, (j, n - m2 + 1, n))
        return sympy.simplify(n * ni + n + no * n + n + side - formula)
    return sympy.simplify(formula.subs({m1: n, m2: n}) - (no + ni + n + 3) * n)


QUANTITY = "closed form vs inventory"


def tally(case: Case) -> list[Tally]:
    if "identity" in case:
        which = str(case["identity"])
        return [(f"symbolic identity ({which}) that does not reduce to 0", 0, int(_symbolic(which) != 0))]
    n, n_i, n_o = (int(case[k]) for k in ("n", "n_i", "n_o"))
    if "rnn" in case:  # W (n x n), M (n x n_i), b (n), Y (n_o x n)
        return [("RNN parameters", sv.rnn_parameter_count(n, n_i, n_o), n * n + n * n_i + n + n_o * n)]
    m1, m2 = int(case["m1"]), int(case["m2"])
    inventory = sum(math.prod(s) for s in sv.svdrnn_parameter_shapes(n, n_i, n_o, m1, m2).values())
    return [("svdRNN parameters", sv.svdrnn_parameter_count(n, n_i, n_o, m1, m2), inventory)]


CLAIMS = [
    claim(
        id="svd.parameter_count",
        place=Place(section="4"),
        expected="verified",
        origin="catalogue",
        summary="the parameter counts of an RNN and an svdRNN",
        kind="count",
        statement=(
            "RNN: (n_o + n_i + n + 1) n parameters; svdRNN: (n_o + n_i + m1 + m2 + 2) n - (m1^2 + m2^2 - m1 - m2)/2, "
            "which for m1 = m2 = n is (n_o + n_i + n + 3) n"
        ),
        checks=(count("count", grid=grid, tally=tally, backends=EXACT, quantity_name=QUANTITY, stated="closed form"),),
        notes=(
            "The general svdRNN formula is garbled in the source text; it is read as the count of M, b, Y, sigma and "
            "the reflection vectors, which reproduces the printed extreme case (n_o + n_i + n + 3) n."
        ),
    )
]
