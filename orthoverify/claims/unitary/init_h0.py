"""unitary.init_h0: the initial state of Sec. 3.4 has E||h0||^2 = 1.

Arjovsky et al. (ICML 2016) Sec. 3.4. Evidence: the expectation integrated symbolically for
symbolic n, and a Monte Carlo run of the sampler whose mean is judged by its z-score.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify.claims.unitary import PAPER
from orthoverify.claims.unitary._effort import effort
from orthoverify.engine.checks import FunctionCheck, Outcome, RunContext, SymbolicCheck
from orthoverify.engine.model import Claim, Place
from orthoverify.param import unitary as un


def sym_init_h0(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """E||h0||^2 = 2n E[x^2] with x ~ U[-a, a], a = sqrt(3/(2n)), for symbolic n."""
    n = sympy.Symbol("n", positive=True, integer=True)
    x = sympy.Symbol("x", real=True)
    a = sympy.sqrt(sympy.Rational(3, 2) / n)
    ex2 = sympy.integrate(x**2 / (2 * a), (x, -a, a))
    yield "2n E[x^2] - 1 (symbolic n)", sympy.simplify(2 * n * ex2 - 1)


def fn_init_h0_mc(ctx: RunContext) -> Outcome:
    """Monte Carlo of init_h0 (the sampler as Sec. 3.4 describes it): the z-score of the mean of
    ||h0||^2 against 1, with the exact standard error sqrt(2n * 4a^4/45 / N). Bespoke: a
    statistical experiment judged by a z-score (threshold 5), not a rounding test ratio."""
    rng = ctx.rng()
    draws = effort(ctx).init_h0_draws
    worst_z = 0.0
    rows = []
    for n in (1, 2, 8, 64):
        h = un.init_h0(rng, n, size=draws)
        s = (np.abs(h) ** 2).sum(axis=1)
        a2 = 3.0 / (2 * n)
        se = math.sqrt(2 * n * 4 * a2 * a2 / 45 / draws)
        z = abs(float(s.mean()) - 1.0) / se
        worst_z = max(worst_z, z)
        rows.append(
            {
                "n": n,
                "mean": float(s.mean()),
                "z": z,
                "max_abs_part": float(max(np.abs(h.real).max(), np.abs(h.imag).max())),
            }
        )
        if max(np.abs(h.real).max(), np.abs(h.imag).max()) > math.sqrt(a2):
            worst_z = math.inf
    return Outcome(
        passed=worst_z <= 5.0,
        cases=4,
        worst_ratio=worst_z,
        notes=f"{draws} draws per n; |mean - 1| / standard error <= 5 (a false alarm has probability < 1e-6)",
        data={"rows": rows},
    )


INIT_H0 = Claim(
    id="unitary.init_h0",
    paper=PAPER,
    place=Place(source="Arjovsky et al.", section="3.4"),
    expected="verified",
    origin="catalogue",
    summary="the uRNN's initial hidden state has E||h0||^2 = 1",
    kind="identity",
    statement="h0 uniform in [-sqrt(3/(2n)), sqrt(3/(2n))] (real and imaginary parts) gives E||h0||^2 = 1",
    checks=(
        SymbolicCheck("symbolic", sym_init_h0),
        FunctionCheck(
            "float", fn_init_h0_mc, ("numpy-float64",), "float", "|mean ||h0||^2 - 1| / std. error", threshold=5.0
        ),
    ),
    notes=(
        "E[x^2] = a^2/3 for x ~ U[-a, a]; 2n such parts with a^2 = 3/(2n) give 1. The Monte Carlo threshold is a "
        "z-score."
    ),
)

CLAIMS: list[Claim] = [INIT_H0]
