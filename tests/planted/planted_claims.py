"""Planted claims for the engine's own tests: one true, one false, one whose float evidence
fails only through rounding, one that crashes. Their verdicts must come out as
verified, refuted (with a replayable counterexample), inconclusive and error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from orthoverify.backends import Backend
from orthoverify.engine import Claim, PropertyCheck, RunContext, SearchCheck, SymbolicCheck
from orthoverify.engine.checks import Case
from orthoverify.engine.ratios import Measure, agreement, residual
from orthoverify.param import householder as hh

FLOAT_HP = ("numpy-float32", "numpy-float64", "torch-float64", "mpmath")


def cases_u(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in (2, 3, 5):
        for _ in range(3):
            yield {"n": n, "u": rng.standard_normal(n)}


def q_true(b: Backend, case: Case) -> Measure:
    """True: H_n(u) is orthogonal."""
    h = hh.reflection(b.asarray(case["u"]), int(case["n"]), backend=b)
    return residual(b, b.transpose(h) @ h - b.eye(int(case["n"])), int(case["n"]))


def q_false(b: Backend, case: Case) -> Measure:
    """False: H_n(u) u = u (in truth H u = -u)."""
    u = b.asarray(case["u"])
    h = hh.reflection(u, int(case["n"]), backend=b)
    return agreement(b, h @ u, u, int(case["n"]))


def q_rounding(b: Backend, case: Case) -> Measure:
    """True in exact arithmetic, but computed by a cancelling formula: (1 + x) - 1 = x for tiny x."""
    x = b.asarray(case["u"])[0] * b.scalar("1e-12")
    one = b.scalar(1)
    return agreement(b, b.stack([(one + x) - one]), b.stack([x]), 1)


def strategy_u(ctx: RunContext) -> Any:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    return st.integers(2, 6).flatmap(
        lambda n: st.fixed_dictionaries(
            {"n": st.just(n), "u": hnp.arrays(np.float64, n, elements=st.floats(-5, 5)).filter(lambda v: np.any(v))}
        )
    )


def sym_false(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    import sympy

    a = sympy.Symbol("a", real=True)
    yield "(a + 1)^2 - (a^2 + 1)", (a + 1) ** 2 - (a**2 + 1)


def crashing(ctx: RunContext) -> Iterator[Case]:
    raise RuntimeError("planted crash")
    yield {}


CLAIMS = [
    Claim(
        id="planted.true_reflection_orthogonal",
        paper="planted",
        where="test",
        kind="identity",
        statement="H_n(u) is orthogonal",
        checks=(
            PropertyCheck("float", q_true, cases_u, FLOAT_HP, "||H'H - I|| / (n eps)"),
            SearchCheck("search", q_true, strategy_u, ("numpy-float64",), "||H'H - I|| / (n eps)"),
        ),
    ),
    Claim(
        id="planted.false_reflection_fixes_u",
        paper="planted",
        where="test",
        kind="identity",
        statement="H_n(u) u = u",
        checks=(
            PropertyCheck("float", q_false, cases_u, FLOAT_HP, "||H u - u|| / (n eps ||u||)"),
            SearchCheck("search", q_false, strategy_u, ("numpy-float64",), "||H u - u|| / (n eps ||u||)"),
        ),
    ),
    Claim(
        id="planted.false_square",
        paper="planted",
        where="test",
        kind="identity",
        statement="(a + 1)^2 = a^2 + 1",
        checks=(SymbolicCheck("symbolic", sym_false),),
    ),
    Claim(
        id="planted.rounding_only",
        paper="planted",
        where="test",
        kind="identity",
        statement="(1 + x) - 1 = x",
        checks=(PropertyCheck("float", q_rounding, cases_u, ("numpy-float64",), "relative error / eps"),),
    ),
    Claim(
        id="planted.crashes",
        paper="planted",
        where="test",
        kind="identity",
        statement="crashes",
        checks=(PropertyCheck("float", q_true, crashing, ("numpy-float64",), "n/a"),),
    ),
]
