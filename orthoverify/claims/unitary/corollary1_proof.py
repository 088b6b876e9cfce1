"""Printed: a witness decided exactly; corrected: H x against ||x|| e_1 where the phase matters."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import sympy

from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL, exact_backend
from orthoverify.claims.unitary import _shared as kit
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.ratios import Measure
from orthoverify.engine.templates import Agreement, exact_witness, float_sizes, judged, listed, repeated
from orthoverify.param import unitary as un
from orthoverify.param.unitary import CArray

NO_THETA = listed({"x_re": ["1", "1"], "x_im": ["0", "0"]})


def theta_gap(b: Backend, inputs: Case) -> Measure:
    """|x_1| - ||x||, exactly: a theta with x_1 = e^(i theta) ||x|| exists only where it is 0."""
    sy = exact_backend()  # parses a result file's strings strictly, never evaluates them
    x = kit.complex_input(sy, inputs, "x")
    gap = un.cnorm(sy, x[:1]) - un.cnorm(sy, x)
    return judged(gap == 0, "0", f"|x_1| - ||x|| = {sympy.nsimplify(gap)}")


def reflected(b: Backend, case: Case) -> Array:
    """H x of the corrected statement (theta = 0 when x_1 = 0)."""
    x = kit.complex_input(b, case, "x")
    m1, alpha, e1 = un.cnorm(b, x[:1]), un.cnorm(b, x), b.eye(x.shape[0])[0]
    c, s = (b.scalar(1), b.scalar(0)) if b.is_zero(m1) else (x.re[0] / m1, x.im[0] / m1)
    u = x + CArray(e1 * (c * alpha), e1 * (s * alpha))
    return kit.parts(b, un.apply_reflection(u, x, backend=b) * CArray(-c, s))  # -e^(-i theta) = -(c - i s)


def target(b: Backend, case: Case) -> Array:
    return b.eye(2 * len(case["x_re"]))[0] * un.cnorm(b, kit.complex_input(b, case, "x"))


def draw(ctx: RunContext, rng: np.random.Generator, n: int) -> Iterator[Case]:
    """Per draw (n >= 2): exact, x = (3 + 4i) e_1 (Pythagorean: norms stay rational) and an integer x;
    float, a Gaussian x and one with x_1 = 0."""
    if ctx.backend.exact:
        yield {f"x_{p}": np.array([v] + [0] * (n - 1), dtype=object) for p, v in (("re", 3), ("im", 4))}
        yield kit.rational(rng, "x", n, max_den=1)
    else:
        yield kit.gaussian(rng, "x", n)
        yield {k: np.concatenate([[0.0], v[1:]]) for k, v in kit.gaussian(rng, "x", n).items()}  # x_1 = 0


EQ17 = Agreement(reflected, target, "||H x - ||x|| e_1|| / (k eps ||x||)", dim=kit.rows_of("x"))

CLAIMS = [
    *kit.claim(
        id="unitary.corollary1_proof",
        place=kit.ORNN(corollary="1", appendix="A", equation="17", note="sketch of its proof"),
        expected="refuted",
        origin="added",
        summary="the sketch of Corollary 1's proof as printed",
        kind="identity",
        statement=(
            "for any nonzero x in C^n, u = x + e^(i theta)||x|| e_1 and H = -e^(-i theta)(I - 2uu*/||u||^2), "
            "where theta is such that x_1 = e^(i theta)||x||, give H x = ||x|| e_1"
        ),
        checks=(exact_witness("witness", theta_gap, "|x_1| - ||x||", NO_THETA),),
        notes=(
            "As printed, theta exists only when |x_1| = ||x|| (x a multiple of e_1). The intended condition is "
            "x_1 = e^(i theta)|x_1|: see the corrected claim. The text marks the line with '(?)' (extraction)."
        ),
    ),
    *kit.claim(
        id="unitary.corollary1_proof.corrected",
        place=kit.ORNN(appendix="A", equation="17"),
        expected="verified",
        origin="corrected",
        summary="the sketch of Corollary 1's proof with theta from x_1",
        kind="identity",
        corrects="unitary.corollary1_proof",
        statement=(
            "with theta such that x_1 = e^(i theta)|x_1| (any theta when x_1 = 0), u = x + e^(i theta)||x|| e_1 and "
            "H = -e^(-i theta)(I - 2uu*/||u||^2) give H x = ||x|| e_1"
        ),
        checks=(EQ17.check("all_arithmetics", repeated(lambda c: [n for n in float_sizes(c) if n > 1], draw), ALL),),
    ),
]
