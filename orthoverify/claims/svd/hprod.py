"""svd.hprod. An agreement of two formulations, Algorithm 2 (as printed, and guarded) against eq. 1's
dense H_k(u) h: exactly with u = 0 among the inputs, in float and at 50 digits with random u and u
scaled to 10^+-20 (10^+-8 in float32), the ends of the domain the notes give, and a Hypothesis
search for the guarded one."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL, EXACT, FLOAT_HP
from orthoverify.claims.svd._shared import extremes, lengths, random_vector, twins
from orthoverify.engine.checks import Case, Check, PropertyCheck, RunContext
from orthoverify.engine.model import Place
from orthoverify.engine.ratios import Measure, agreement
from orthoverify.engine.templates import Agreement, Cases, chained, float_sizes, repeated
from orthoverify.errors import ZeroVectorError
from orthoverify.param import svd as sv
from orthoverify.strategies import reflection_vector


def guarded(b: Backend, case: Case) -> Array:
    """Algorithm 2 with the guard "return h when u_k = 0"."""
    return sv.hprod(b.asarray(case["h"], name="h"), b.asarray(case["u"], name="u"), guard=True, backend=b)


def dense(b: Backend, case: Case) -> Array:
    """H_k(u) h by eq. 1's dense reflection."""
    h = b.asarray(case["h"], name="h")
    return sv.reflector(b.asarray(case["u"], name="u"), h.shape[0], backend=b) @ h


GUARDED = Agreement(guarded, dense, "||Hprod - H_k(u) h|| / (n eps ||H_k(u) h||)")


def q_hprod_printed(b: Backend, case: Case) -> Measure:
    """Algorithm 2 against the definition H_k(u) h; for u = 0 the algorithm divides by 0."""
    h, u = b.asarray(case["h"], name="h"), b.asarray(case["u"], name="u")
    try:
        out = sv.hprod(h, u, backend=b)
    except ZeroVectorError:
        return Measure(math.inf, "Algorithm 2 divides by ||u_k||^2 = 0, while eq. 1 gives H(0) h = h", error=math.inf)
    return agreement(b, out, dense(b, case), h.shape[0])


def cases_hprod(zero: bool) -> Cases:
    """Random h and u (k = 1, 2, n); with ``zero`` also u = 0; in float also u scaled to the ends of
    Alg. 2's domain."""

    def draw(ctx: RunContext, rng: np.random.Generator, nk: tuple[int, int]) -> Sequence[Case]:
        k, h = nk[1], random_vector(ctx, rng, nk[0])
        out = [{"h": h, "u": random_vector(ctx, rng, k)}, *([{"h": h, "u": np.zeros(k)}] if zero else [])]
        return out + [{"h": h, "u": u} for u in extremes(ctx, rng, k, (20, 8))]

    grid = repeated(lambda ctx: [(n, k) for n in float_sizes(ctx) for k in lengths(n)], draw)
    return chained(lambda ctx: [{"h": np.array([1.0, 2.0]), "u": np.zeros(2)}] if zero else [], grid)


def _hprod_strategy(ctx: RunContext) -> Any:
    def build(n: int) -> Any:
        hs = st.lists(st.floats(-1e6, 1e6), min_size=n, max_size=n).map(np.array)
        return st.integers(1, n).flatmap(
            lambda k: st.tuples(hs, st.one_of(st.just(np.zeros(k)), reflection_vector(k, max_exponent=30)))
        )

    return st.integers(1, 8).flatmap(build).map(lambda t: {"h": t[0], "u": t[1]})


def checks(corrected: bool) -> tuple[Check, ...]:
    if corrected:
        return (
            GUARDED.check("all_arithmetics", cases_hprod(zero=True), ALL),
            GUARDED.search("search", _hprod_strategy, ("numpy-float64",)),
        )
    return (
        PropertyCheck("exact", q_hprod_printed, cases_hprod(zero=True), EXACT, "Hprod(h, u) - H_k(u) h"),
        PropertyCheck(
            "float", q_hprod_printed, cases_hprod(zero=False), FLOAT_HP, "||Hprod - H_k(u) h|| / (n eps ||H h||)"
        ),
    )


CLAIMS = twins(
    "svd.hprod",
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
