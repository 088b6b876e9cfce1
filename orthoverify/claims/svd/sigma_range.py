"""svd.sigma_range: eq. 8 of svdRNN (Zhang, Lei & Dhillon, ICML 2018).

Statement: sigma_i = 2r(f(s_i) - 1/2) + sigma* (f the sigmoid) lies in [sigma* - r, sigma* + r].

Compared: the values param.svd.sigma_map computes in each arithmetic against the interval,
the excess measured exactly (60 digits) from the values produced; symbolically, eq. 8 against
r tanh(s/2) + sigma*.

Evidence: saturating and random s for several sigma*, r on the float backends and at 50
digits, a Hypothesis search, and the tanh form in SymPy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import Backend, get_backend
from orthoverify.claims._common import FLOAT_HP
from orthoverify.claims.svd import PAPER
from orthoverify.engine.checks import Case, PropertyCheck, RunContext, SearchCheck, SymbolicCheck
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, scaled
from orthoverify.engine.ratios import flag as _flag
from orthoverify.param import svd as sv


def q_sigma_range(b: Backend, case: Case) -> Measure:
    """sigma = 2r(f(s) - 1/2) + sigma* computed in b lies in [sigma* - r, sigma* + r]; the excess,
    computed exactly from the values b produced, over eps (|sigma*| + r)."""
    s = b.asarray(case["s"], name="s")
    star = b.asarray([case["star"]])[0]
    r = b.asarray([case["r"]])[0]
    sig = sv.sigma_map(s, star, r, backend=b)
    exact = get_backend("mpmath-60")
    vals = [exact.asarray([x])[0] for x in b.to_strings(sig)]
    st_, rr = exact.asarray(b.to_strings(b.stack([star, r])))
    excess = max(max(v - (st_ + rr), (st_ - rr) - v, 0) for v in vals)
    scale = abs(float(st_)) + float(rr)
    if b.exact:
        return _flag(excess == 0, "sigma outside the interval")
    return scaled(float(excess) / scale, 1, b.eps)


def cases_sigma(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    s = np.array([0.0, 1e-8, -1e-8, 1.0, -1.0, 20.0, -20.0, 40.0, -40.0, 800.0, -800.0])
    for star in (1.0, 0.0, -3.0, 1e6):
        for r in (1e-3, 0.5, 1.0, 1e6):
            yield {"s": s, "star": star, "r": r}
            for _ in range(ctx.profile.cases):
                yield {"s": rng.standard_normal(8) * 10.0 ** rng.uniform(-3, 3), "star": star, "r": r}


def _sigma_strategy(ctx: RunContext) -> Any:
    from hypothesis import strategies as st

    fl = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
    return st.tuples(st.lists(fl, min_size=1, max_size=6), st.floats(-1e6, 1e6), st.floats(1e-6, 1e6)).map(
        lambda t: {"s": np.array(t[0]), "star": t[1], "r": t[2]}
    )


def sym_sigma(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    s, r, star = sympy.symbols("s r sigma_star", real=True)
    printed = 2 * r * (1 / (1 + sympy.exp(-s)) - sympy.Rational(1, 2)) + star
    yield (
        "eq. 8 - (r tanh(s/2) + sigma*)",
        sympy.simplify((printed - (r * sympy.tanh(s / 2) + star)).rewrite(sympy.exp)),
    )


SIGMA_RANGE = Claim(
    id="svd.sigma_range",
    paper=PAPER,
    place=Place(equation="8"),
    expected="verified",
    origin="catalogue",
    summary="the sigma map of eq. 8 stays in [sigma* - r, sigma* + r]",
    kind="bound",
    statement="sigma_i = 2r(f(s_i) - 0.5) + sigma* (f the sigmoid) lies in [sigma* - r, sigma* + r]",
    checks=(
        PropertyCheck(
            "float", q_sigma_range, cases_sigma, (*FLOAT_HP,), "excess over the interval / (eps (|sigma*| + r))"
        ),
        SearchCheck("search", q_sigma_range, _sigma_strategy, ("numpy-float32", "numpy-float64"), "excess / eps"),
        SymbolicCheck("symbolic", sym_sigma),
    ),
    notes=(
        "2(f(s) - 1/2) = tanh(s/2) in (-1, 1): the open interval mathematically; in floating point the "
        "sigmoid saturates and the endpoints are reached, never passed. r <= 0 is rejected (DomainError)."
    ),
)


CLAIMS: list[Claim] = [SIGMA_RANGE]
