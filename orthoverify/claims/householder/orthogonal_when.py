"""W'W = I for W by the definition and by compact WY: symbolic for every m, over 10^+-100 column
scales in floating point, proved from Arb enclosures; rational u_1 other than +-1 shows the
requirement is necessary."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy
from hypothesis import strategies as st

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.claims._common import EXACT, FLOAT_HP, RIGOROUS_SIZES, exact_backend, frobenius, rigorous_check
from orthoverify.claims.householder import claim
from orthoverify.claims.householder._shared import (
    exponent_range,
    lower_symbols,
    sizes_nm,
    u_and_u1,
    u_sample,
    w_by_definition,
)
from orthoverify.engine.checks import Case, PropertyCheck, RunContext, SearchCheck, SymbolicCheck
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, residual, worst
from orthoverify.engine.ratios import flag as _flag
from orthoverify.engine.templates import float_sizes, sampled
from orthoverify.param import householder as hh
from orthoverify.strategies import householder_vectors

_Q = "||W'W - I||_F / (n eps)"


def gram(b: Backend, case: Case, form: Any = w_by_definition, *, u1_squared: bool = False) -> Array:
    """W'W - I for W = M_{n-m+1}(u) built by ``form`` (the definition, or compact WY), in any
    arithmetic (symbolic, exact, float, balls); with ``u1_squared``, W'W - diag(I, u_1^2), which
    vanishes for every nonzero u: so W is orthogonal exactly when m < n or u_1 = +-1."""
    u, u1 = u_and_u1(b, case)
    w = form(b, u, u1)
    r = b.transpose(w) @ w - b.eye(u.shape[0])
    if u1_squared and u1 is not None:
        r[-1, -1] = r[-1, -1] - (u1[0] * u1[0] - 1)
    return r


def q_orthogonal(b: Backend, case: Case) -> Measure:
    """Orthogonality of W = M_{n-m+1}(u) built by the definition and by the compact WY form."""
    return worst(*(residual(b, gram(b, case, form), len(case["U"])) for form in FORMS))


FORMS = (w_by_definition, lambda b, u, u1: hh.compact_wy(u, u1, backend=b))
"""W by the definition (a product of eq. 6 blocks) and by the compact WY form."""


cases_float = sampled(
    lambda ctx: [(*nm, exponent_range(ctx.backend)) for nm in sizes_nm(float_sizes(ctx), include_square=True)],
    lambda rng, s: u_sample(rng, s[0], s[1], lambda: rng.choice([-1.0, 1.0]), log10_range=s[2]),
)
"""Columns scaled over 10^+-100 (10^+-15 in float32); for m = n, u_1 = +-1."""


def strategy(ctx: RunContext) -> Any:
    e = exponent_range(ctx.backend)

    def build(nm: tuple[int, int, bool]) -> Any:
        n, m, square = nm
        d: dict[str, Any] = {"U": householder_vectors(n, m, max_exponent=e)}
        if square:
            d["u1"] = st.sampled_from([np.array([1.0]), np.array([-1.0])])
        return st.fixed_dictionaries(d)

    sizes = st.integers(2, 12).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(1, n - 1), st.booleans()).map(
            lambda t: (t[0], t[0] - 1, True) if t[2] else (t[0], t[1], False)
        )
    )
    return sizes.flatmap(build)


def sym_orthogonal_when(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """Symbolic vectors: W'W = I for every m < n; for m = n, W'W = diag(I, u_1^2)."""
    for n in ctx.profile.symbolic_sizes:
        for m in range(1, n):
            yield f"n={n},m={m}: W'W - I", gram(exact_backend(), {"U": lower_symbols("u", n, m)})
        square = {"U": lower_symbols("u", n, n - 1), "u1": np.array([sympy.Symbol("u1", real=True)], dtype=object)}
        yield f"n={n},m=n: W'W - diag(I, u1^2)", gram(exact_backend(), square, u1_squared=True)


def q_u1_necessary(b: Backend, case: Case) -> Measure:
    """m = n with u_1 not +-1: W'W - diag(I, u_1^2) = 0 exactly, and u_1^2 is not 1."""
    u1 = b.asarray(case["u1"], name="u1")[0]
    exact = residual(b, gram(b, case, u1_squared=True), len(case["U"]))
    return worst(exact, _flag(not b.is_zero(u1 * u1 - 1), "u_1^2 = 1"))


cases_u1_necessary = sampled(
    lambda ctx: [(n, u1) for n in ctx.profile.exact_sizes for u1 in ("0", "1/2", "-1/3", "2", "-3")],
    lambda rng, size: {
        "U": samples.rational_vectors(rng, size[0], size[0] - 1),
        "u1": np.array([sympy.Rational(size[1])], dtype=object),
    },
    per_size=lambda ctx: 1,
)


def enclose_orthogonal(b: Backend, case: Case) -> Any:
    """||W'W - I||_F for W = M_{n-m+1}(u) by the definition, from the case's exact inputs."""
    return frobenius(b, gram(b, case))


def cases_orthogonal_rational(ctx: RunContext) -> Iterator[Case]:
    """Integer reflection vectors (exact in Arb) for m = 1, n/2, n - 1, and m = n with u_1 = +-1."""
    rng = ctx.rng()
    for n in RIGOROUS_SIZES:
        for m in sorted({1, n // 2, n - 1}):
            yield {"U": samples.rational_vectors(rng, n, m)}
        yield {"U": samples.rational_vectors(rng, n, n - 1), "u1": np.array([int(rng.choice([-1, 1]))], dtype=object)}


ORTHOGONAL_WHEN = claim(
    id="householder.orthogonal_when",
    place=Place(section="4", note="advantage 3"),
    expected="verified",
    origin="catalogue",
    summary="W is orthogonal for nonzero vectors (m < n), and for u_1 = ±1 (m = n)",
    statement=(
        "When m < n, W is always orthogonal as long as the reflection vectors are nonzero; for m = n the only "
        "additional requirement is u_1 in {-1, 1}"
    ),
    kind="identity",
    checks=(
        SymbolicCheck("symbolic", sym_orthogonal_when),
        PropertyCheck("converse", q_u1_necessary, cases_u1_necessary, EXACT, "W'W - I - diag(0, u1^2 - 1)"),
        PropertyCheck("float_edge", q_orthogonal, cases_float, FLOAT_HP, _Q),
        SearchCheck("search", q_orthogonal, strategy, ("numpy-float64", "numpy-float32"), _Q),
        rigorous_check("rigorous", cases_orthogonal_rational, enclose_orthogonal, quantity="||W'W - I||_F"),
    ),
    notes="Columns are scaled over 10^+-100 (10^+-15 in float32); W is built by the definition and by compact WY.",
)

CLAIMS: list[Claim] = [ORTHOGONAL_WHEN]
