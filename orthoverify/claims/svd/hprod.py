"""svd.hprod and its correction: eq. 9 and Algorithm 2 (Hprod) of svdRNN (Zhang, Lei & Dhillon,
ICML 2018).

Statement as printed: Hprod(h, u_k) (alpha = 2 u_k'h / u_k'u_k, h~ = h - alpha u_k) computes
H_k(u_k) h. Corrected: with the guard "return h when u_k = 0" it does so for every u_k (eq. 1
defines H(0) = I, and Prop. 1 and Theorem 3's construction use u = 0).

Compared (an agreement of two formulations, printed and corrected together): param.svd.hprod
(as printed, and guarded) against the dense H_k(u) h of eq. 1.

Evidence: u = 0 and random u exactly, random and scaled u in float and at 50 digits, and a
Hypothesis search.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL, EXACT, FLOAT_HP
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._shared import random_vector
from orthoverify.engine.checks import Case, Check, PropertyCheck, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, agreement
from orthoverify.engine.templates import Agreement, printed_and_corrected
from orthoverify.errors import ZeroVectorError
from orthoverify.param import svd as sv
from orthoverify.strategies import reflection_vector


def _hprod_inputs(b: Backend, case: Case) -> tuple[Array, Array, int]:
    h = b.asarray(case["h"], name="h")
    u = b.asarray(case["u"], name="u")
    return h, u, h.shape[0]


def q_hprod_printed(b: Backend, case: Case) -> Measure:
    """Algorithm 2 against the definition H_k(u) h; for u = 0 the algorithm divides by 0."""
    h, u, n = _hprod_inputs(b, case)
    try:
        out = sv.hprod(h, u, backend=b)
    except ZeroVectorError:
        return Measure(math.inf, "Algorithm 2 divides by ||u_k||^2 = 0, while eq. 1 gives H(0) h = h", error=math.inf)
    return agreement(b, out, dense(b, case), n)


def cases_hprod(ctx: RunContext, zero: bool) -> Iterator[Case]:
    rng = ctx.rng()
    if zero:
        yield {"h": np.array([1.0, 2.0]), "u": np.zeros(2)}
    for n in ctx.profile.sizes_on(ctx.backend):
        for k in sorted({1, 2, n} & set(range(1, n + 1))):
            for _ in range(ctx.profile.cases):
                h = random_vector(ctx, rng, n)
                yield {"h": h, "u": random_vector(ctx, rng, k)}
                if zero:
                    yield {"h": h, "u": np.zeros(k)}
                if not ctx.backend.exact:  # Alg. 2 squares ||u|| unscaled: stay inside sqrt of the range
                    for e in (-20, 20) if ctx.backend.eps < 1e-10 else (-8, 8):
                        yield {"h": h, "u": rng.standard_normal(k) * 10.0**e}


def _hprod_strategy(ctx: RunContext) -> Any:
    from hypothesis import strategies as st

    def build(n: int) -> Any:
        hs = st.lists(st.floats(-1e6, 1e6), min_size=n, max_size=n).map(np.array)
        return st.integers(1, n).flatmap(
            lambda k: st.tuples(hs, st.one_of(st.just(np.zeros(k)), reflection_vector(k, max_exponent=30)))
        )

    return st.integers(1, 8).flatmap(build).map(lambda t: {"h": t[0], "u": t[1]})


def guarded(b: Backend, case: Case) -> Array:
    """Algorithm 2 with the guard "return h when u_k = 0"."""
    h, u, _ = _hprod_inputs(b, case)
    return sv.hprod(h, u, guard=True, backend=b)


def dense(b: Backend, case: Case) -> Array:
    """H_k(u) h by eq. 1's dense reflection."""
    h, u, n = _hprod_inputs(b, case)
    return sv.reflector(u, n, backend=b) @ h


GUARDED = Agreement(guarded, dense, "||Hprod - H_k(u) h|| / (n eps ||H_k(u) h||)")


def checks(corrected: bool) -> tuple[Check, ...]:
    if corrected:
        return (
            GUARDED.check("all_arithmetics", lambda ctx: cases_hprod(ctx, zero=True), ALL),
            GUARDED.search("search", _hprod_strategy, ("numpy-float64",)),
        )
    return (
        PropertyCheck(
            "exact",
            q_hprod_printed,
            lambda ctx: cases_hprod(ctx, zero=True),
            EXACT,
            "Hprod(h, u) - H_k(u) h",
        ),
        PropertyCheck(
            "float",
            q_hprod_printed,
            lambda ctx: cases_hprod(ctx, zero=False),
            FLOAT_HP,
            "||Hprod - H_k(u) h|| / (n eps ||H h||)",
        ),
    )


CLAIMS: list[Claim] = printed_and_corrected(
    "svd.hprod",
    paper=PAPER,
    place=Place(algorithm="2", equation="9"),
    expected="refuted",
    origin="catalogue",
    summary="Hprod computes H_k(u_k) h",
    corrected_summary="Hprod with a guard for u_k = 0 computes H_k(u_k) h",
    kind="identity",
    printed="Hprod(h, u_k): alpha = 2 u_k'h / u_k'u_k, h~ = h - alpha u_k computes H_k(u_k) h",
    corrected="Hprod with the guard 'return h when u_k = 0' computes H_k(u_k) h for every u_k",
    checks=checks,
    printed_notes=(
        "Right for u_k != 0. For u_k = 0, which eq. 1 defines as I and which Prop. 1 and Theorem 3's "
        "construction (v_t = 0) use, Algorithm 2 divides by zero (NaN in floating point). It also squares "
        "||u_k|| unscaled, so in floating point ||u_k|| must lie within the square root of the exponent range "
        "(orthoverify raises DomainError or NonFiniteError outside it rather than return NaN)."
    ),
)
