"""svd.sigma_range. The endpoints are reached in floating point (the notes), so the excess over the
interval is measured exactly (60 digits) from the values each arithmetic produced, on saturating
(+-800) and random s for several sigma*, r; the tanh form, which gives the bound, symbolically."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy
from hypothesis import strategies as st

from orthoverify.backends import Backend, get_backend
from orthoverify.claims._common import FLOAT_HP
from orthoverify.claims.svd._shared import claim
from orthoverify.engine.checks import Case, PropertyCheck, RunContext, SearchCheck, SymbolicCheck
from orthoverify.engine.model import Place
from orthoverify.engine.ratios import Measure, flag, scaled
from orthoverify.engine.templates import repeated
from orthoverify.param import svd as sv


def q_sigma_range(b: Backend, case: Case) -> Measure:
    """sigma = 2r(f(s) - 1/2) + sigma* computed in b lies in [sigma* - r, sigma* + r]; the excess,
    computed exactly from the values b produced, over eps (|sigma*| + r)."""
    s, star, r = b.asarray(case["s"], name="s"), b.asarray([case["star"]])[0], b.asarray([case["r"]])[0]
    exact = get_backend("mpmath-60")
    vals = [exact.asarray([x])[0] for x in b.to_strings(sv.sigma_map(s, star, r, backend=b))]
    st_, rr = exact.asarray(b.to_strings(b.stack([star, r])))
    excess = max(max(v - (st_ + rr), (st_ - rr) - v, 0) for v in vals)
    if b.exact:
        return flag(excess == 0, "sigma outside the interval")
    return scaled(float(excess) / (abs(float(st_)) + float(rr)), 1, b.eps)


SATURATING = np.array([0.0, 1e-8, -1e-8, 1.0, -1.0, 20.0, -20.0, 40.0, -40.0, 800.0, -800.0])
cases_sigma = repeated(
    lambda ctx: [(star, r) for star in (1.0, 0.0, -3.0, 1e6) for r in (1e-3, 0.5, 1.0, 1e6)],
    lambda ctx, rng, p: {"s": rng.standard_normal(8) * 10.0 ** rng.uniform(-3, 3), "star": p[0], "r": p[1]},
    first=lambda ctx, rng, p: {"s": SATURATING, "star": p[0], "r": p[1]},
)


def _sigma_strategy(ctx: RunContext) -> Any:
    fl = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
    return st.tuples(st.lists(fl, min_size=1, max_size=6), st.floats(-1e6, 1e6), st.floats(1e-6, 1e6)).map(
        lambda t: {"s": np.array(t[0]), "star": t[1], "r": t[2]}
    )


def sym_sigma(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    s, r, star = sympy.symbols("s r sigma_star", real=True)
    printed = 2 * r * (1 / (1 + sympy.exp(-s)) - sympy.Rational(1, 2)) + star
    tanh_form = sympy.simplify((printed - (r * sympy.tanh(s / 2) + star)).rewrite(sympy.exp))
    yield "eq. 8 - (r tanh(s/2) + sigma*)", tanh_form


CLAIMS = [
    claim(
        id="svd.sigma_range",
        place=Place(equation="8"),
        expected="verified",
        origin="catalogue",
        summary="the sigma map of eq. 8 stays in [sigma* - r, sigma* + r]",
        kind="bound",
        statement="sigma_i = 2r(f(s_i) - 0.5) + sigma* (f the sigmoid) lies in [sigma* - r, sigma* + r]",
        checks=(
            PropertyCheck(
                "float", q_sigma_range, cases_sigma, FLOAT_HP, "excess over the interval / (eps (|sigma*| + r))"
            ),
            SearchCheck("search", q_sigma_range, _sigma_strategy, ("numpy-float32", "numpy-float64"), "excess / eps"),
            SymbolicCheck("symbolic", sym_sigma),
        ),
        notes=(
            "2(f(s) - 1/2) = tanh(s/2) in (-1, 1): the open interval mathematically; in floating point the "
            "sigmoid saturates and the endpoints are reached, never passed. r <= 0 is rejected (DomainError)."
        ),
    )
]
