"""unitary.corollary1_proof and unitary.corollary1_proof.corrected: the reflection of eq. 17
that maps x to ||x|| e_1.

Mhammedi et al. (ICML 2017) App. A, sketch of the proof of Cor. 1, eq. 17. As printed, theta with
x_1 = e^(i theta) ||x|| exists only when |x_1| = ||x||: x = (1, 1) is an exact counterexample.
Corrected (x_1 = e^(i theta) |x_1|): H x is compared with ||x|| e_1 in float, at 50 digits and
exactly (Pythagorean entries keep the norms rational), including x_1 = 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL, exact_backend
from orthoverify.claims.unitary import PAPER
from orthoverify.claims.unitary._shared import complex_input, parts, rows_of, split_complex
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure
from orthoverify.engine.templates import Agreement, witness
from orthoverify.param import unitary as un
from orthoverify.param.unitary import CArray

NO_THETA = ({"x_re": ["1", "1"], "x_im": ["0", "0"]},)
"""The printed sketch needs x_1 = e^(i theta) ||x||, i.e. |x_1| = ||x||: x = (1, 1) has no such theta."""


def cases_no_theta(ctx: RunContext) -> Iterator[Case]:
    yield from NO_THETA


def theta_gap(b: Backend, inputs: Case) -> Measure:
    """|x_1| - ||x||, exactly: a theta with x_1 = e^(i theta) ||x|| exists only where it is 0."""
    sy = exact_backend()  # parses a result file's strings strictly, never evaluates them
    re, im = list(sy.asarray(inputs["x_re"], name="x_re")), list(sy.asarray(inputs["x_im"], name="x_im"))
    gap = sympy.sqrt(re[0] ** 2 + im[0] ** 2) - sympy.sqrt(sum(r * r + i * i for r, i in zip(re, im, strict=True)))
    return Measure(0.0, "0") if gap == 0 else Measure(math.inf, f"|x_1| - ||x|| = {sympy.nsimplify(gap)}")


def _phase(b: Backend, x: CArray) -> tuple[Any, Any]:
    """(cos theta, sin theta) with x_1 = e^(i theta)|x_1| (theta = 0 when x_1 = 0)."""
    m1 = b.sqrt(x.re[0] * x.re[0] + x.im[0] * x.im[0])
    return (b.scalar(1), b.scalar(0)) if b.is_zero(m1) else (x.re[0] / m1, x.im[0] / m1)


def reflected(b: Backend, case: Case) -> Array:
    """Eq. 17 with the phase corrected: u = x + e^(i theta)||x|| e_1, H = -e^(-i theta)(I - 2uu*/||u||^2), H x."""
    x = complex_input(b, case, "x")
    c, s = _phase(b, x)
    alpha = un.cnorm(b, x)
    e1 = _e1(b, x.shape[0])
    u = x + CArray(e1 * (c * alpha), e1 * (s * alpha))
    return parts(b, un.apply_reflection(u, x, backend=b) * CArray(-c, s))  # -e^(-i theta) = -(c - i s)


def target(b: Backend, case: Case) -> Array:
    """||x|| e_1."""
    x = complex_input(b, case, "x")
    k = x.shape[0]
    return parts(b, CArray(_e1(b, k) * un.cnorm(b, x), b.zeros(k)))


def _e1(b: Backend, k: int) -> Array:
    return b.concat([b.stack([b.scalar(1)]), b.zeros(k - 1)])


EQ17 = Agreement(reflected, target, "||H x - ||x|| e_1|| / (k eps ||x||)", dim=rows_of("x"))


def cases_eq17(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in ctx.profile.sizes_on(ctx.backend):
        if n < 2:
            continue
        for _ in range(ctx.profile.cases):
            if ctx.backend.exact:
                # components on Pythagorean moduli keep ||x|| and |x_1| rational
                yield {
                    "x_re": np.array([3] + [0] * (n - 1), dtype=object),
                    "x_im": np.array([4] + [0] * (n - 1), dtype=object),
                }
                v = samples.rational_matrix(rng, n, 2, bound=3, max_den=1)
                yield {"x_re": v[:, 0], "x_im": v[:, 1]}
            else:
                yield {"x_re": rng.standard_normal(n), "x_im": rng.standard_normal(n)}
                z = rng.standard_normal(n) + 1j * rng.standard_normal(n)
                z[0] = 0.0
                yield split_complex(z, "x")


COROLLARY1_PROOF = Claim(
    id="unitary.corollary1_proof",
    paper=PAPER,
    place=Place(source="Mhammedi et al.", corollary="1", appendix="A", equation="17", note="sketch of its proof"),
    expected="refuted",
    origin="added",
    summary="the sketch of Corollary 1's proof as printed",
    kind="identity",
    statement=(
        "for any nonzero x in C^n, u = x + e^(i theta)||x|| e_1 and H = -e^(-i theta)(I - 2uu*/||u||^2), "
        "where theta is such that x_1 = e^(i theta)||x||, give H x = ||x|| e_1"
    ),
    checks=(
        witness(
            "witness",
            theta_gap,
            backends=("sympy",),
            quantity_name="|x_1| - ||x||",
            candidates=cases_no_theta,
            method=None,
        ),
    ),
    notes=(
        "As printed, theta exists only when |x_1| = ||x|| (x a multiple of e_1). The intended condition is "
        "x_1 = e^(i theta)|x_1|: see the corrected claim. The text marks the line with '(?)' (extraction)."
    ),
)

COROLLARY1_PROOF_CORRECTED = Claim(
    id="unitary.corollary1_proof.corrected",
    paper=PAPER,
    place=Place(source="Mhammedi et al.", appendix="A", equation="17"),
    expected="verified",
    origin="corrected",
    summary="the sketch of Corollary 1's proof with theta from x_1",
    kind="identity",
    corrects="unitary.corollary1_proof",
    statement=(
        "with theta such that x_1 = e^(i theta)|x_1| (any theta when x_1 = 0), u = x + e^(i theta)||x|| e_1 and "
        "H = -e^(-i theta)(I - 2uu*/||u||^2) give H x = ||x|| e_1"
    ),
    checks=(EQ17.check("all_arithmetics", cases_eq17, ALL),),
)

CLAIMS: list[Claim] = [COROLLARY1_PROOF, COROLLARY1_PROOF_CORRECTED]
