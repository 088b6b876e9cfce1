"""The expectation is integrated symbolically for symbolic n; the sampler itself is a random
process, so its Monte Carlo mean is judged by a z-score (a statistical test, not a test ratio)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify.claims.unitary import _shared as kit
from orthoverify.claims.unitary._effort import effort
from orthoverify.engine.checks import FunctionCheck, Outcome, RunContext, SymbolicCheck
from orthoverify.param import unitary as un


def sym_init_h0(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """E||h0||^2 = 2n E[x^2] with x ~ U[-a, a], a = sqrt(3/(2n)), for symbolic n."""
    n = sympy.Symbol("n", positive=True, integer=True)
    x = sympy.Symbol("x", real=True)
    a = sympy.sqrt(sympy.Rational(3, 2) / n)
    ex2 = sympy.integrate(x**2 / (2 * a), (x, -a, a))
    yield "2n E[x^2] - 1 (symbolic n)", sympy.simplify(2 * n * ex2 - 1)


def fn_init_h0_mc(ctx: RunContext) -> Outcome:
    """The z-score of the mean of ||h0||^2 against 1 (exact standard error sqrt(2n 4a^4/45 / N)),
    and every part within [-a, a]. Bespoke: a statistical experiment, threshold 5."""
    rng, draws = ctx.rng(), effort(ctx).init_h0_draws
    worst_z, rows = 0.0, []
    for n in (1, 2, 8, 64):
        h = un.init_h0(rng, n, size=draws)
        s = (np.abs(h) ** 2).sum(axis=1)
        a2 = 3.0 / (2 * n)
        z = abs(float(s.mean()) - 1.0) / math.sqrt(2 * n * 4 * a2 * a2 / 45 / draws)
        largest = float(max(np.abs(h.real).max(), np.abs(h.imag).max()))
        worst_z = max(worst_z, z) if largest <= math.sqrt(a2) else math.inf
        rows.append({"n": n, "mean": float(s.mean()), "z": z, "max_abs_part": largest})
    return Outcome(
        passed=worst_z <= 5.0,
        cases=4,
        worst_ratio=worst_z,
        notes=f"{draws} draws per n; |mean - 1| / standard error <= 5 (a false alarm has probability < 1e-6)",
        data={"rows": rows},
    )


CLAIMS = kit.claim(
    id="unitary.init_h0",
    place=kit.URNN(section="3.4"),
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
