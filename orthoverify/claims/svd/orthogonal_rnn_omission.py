"""svd.orthogonal_rnn_omission: Sec. 4.1 of svdRNN (Zhang, Lei & Dhillon, ICML 2018).

Statement: the oRNN method of Mhammedi et al. omitted the last term of (15), 4 (u'h)(u'g)/(u'u)^2 u,
by assuming ||u_k|| fixed.

Compared: dL/du of the Householder paper's Algorithm 1 run as printed
(param.householder.algorithm1) against eq. 15 without its last term (an exact yes/no naming the
term), and, as a gradient against its reference, against SymPy's exact derivative (the full
eq. 15).

Evidence: random rational h, u, g, exactly.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._shared import grad_case, random_vector
from orthoverify.engine.checks import Case, PropertyCheck, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, residual
from orthoverify.engine.reference import exact_gradient
from orthoverify.engine.templates import Gradient
from orthoverify.param import householder as hh
from orthoverify.param import svd as sv


def q_omission(b: Backend, case: Case) -> Measure:
    """The Householder paper's Algorithm 1 (as printed) for one reflection against the gradient
    with the last term of eq. 15 omitted: they differ by alpha beta u, so the term is there."""
    h, u, g, n = grad_case(b, case)
    res = hh.algorithm1(u.reshape(n, 1), h, g, backend=b)
    two = 2 / (u @ u)
    alpha, beta = two * (u @ h), two * (u @ g)
    omitted = -alpha * g - beta * h
    diff = res.dl_du.reshape(n) - omitted
    return Measure(
        0.0 if b.is_zero(diff) else math.inf,
        "0" if b.is_zero(diff) else "alpha beta u != 0",
        error=0.0 if b.is_zero(diff) else math.inf,
    )


def q_omission_full(b: Backend, case: Case) -> Measure:
    """The Householder paper's Algorithm 1 equals the full eq. 15 (exact derivative)."""
    h, u, g, n = grad_case(b, case)
    res = hh.algorithm1(u.reshape(n, 1), h, g, backend=b)
    ref = exact_gradient(lambda x: b.sum(g * (sv.reflector(x, n, backend=b) @ h)), u)
    return residual(b, res.dl_du.reshape(n) - ref, n)


def cases_omission(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in ctx.profile.exact_sizes:
        if n < 2:
            continue
        for _ in range(ctx.profile.cases):
            yield {"h": random_vector(ctx, rng, n), "u": random_vector(ctx, rng, n), "g": random_vector(ctx, rng, n)}


OMISSION = Claim(
    id="svd.orthogonal_rnn_omission",
    paper=PAPER,
    place=Place(section="4.1"),
    expected="refuted",
    origin="catalogue",
    summary="the oRNN method omits the norm term of eq. 15",
    kind="gradient",
    statement=(
        "the oRNN method of Mhammedi et al. omitted the last term of (15), 4 (u'h)(u'g)/(u'u)^2 u, "
        "by assuming ||u_k|| fixed"
    ),
    checks=(
        PropertyCheck(
            "witness",
            q_omission,
            cases_omission,
            EXACT,
            "Householder Alg. 1 dL/du - (eq. 15 without its last term)",
        ),
        Gradient("Householder Alg. 1 dL/du - exact derivative").exact(q_omission_full, cases_omission),
    ),
    notes=(
        "Algorithm 1 of the Householder paper (lines 12-14, run as printed) computes "
        "U_bar_k = g_new (-h~_k)' - H_{k+1} c~_k' with g_new = g - beta u: expanding, -alpha g - beta h + "
        "alpha beta u, the full eq. 15. The term is not omitted (householder.algorithm1 also matches autograd)."
    ),
)


CLAIMS: list[Claim] = [OMISSION]
