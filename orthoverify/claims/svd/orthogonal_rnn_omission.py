"""svd.orthogonal_rnn_omission. The claim is about what the Householder paper's Algorithm 1 computes,
so that algorithm is run as printed (param.householder.algorithm1) and its dL/du is compared,
exactly, with eq. 15 without its last term (a yes/no naming the term) and, as a gradient
against its reference, with SymPy's exact derivative (the full eq. 15), on random rational h,
u, g."""

from __future__ import annotations

from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT
from orthoverify.claims.svd._shared import claim, grad_inputs, random_vector, reflected
from orthoverify.engine.checks import Case, PropertyCheck
from orthoverify.engine.model import Place
from orthoverify.engine.ratios import Measure
from orthoverify.engine.templates import Derivative, Gradient, judged, repeated
from orthoverify.param import householder as hh


def q_omission(b: Backend, case: Case) -> Measure:
    """The Householder paper's Algorithm 1 (as printed) for one reflection against the gradient
    with the last term of eq. 15 omitted: they differ by alpha beta u, so the term is there."""
    h, u, g = grad_inputs(b, case).values()
    n = h.shape[0]
    two = 2 / (u @ u)
    diff = hh.algorithm1(u.reshape(n, 1), h, g, backend=b).dl_du.reshape(n) - (-two * (u @ h) * g - two * (u @ g) * h)
    return judged(b.is_zero(diff), "0", "alpha beta u != 0")


FULL = Derivative(
    grad_inputs,
    reflected,
    lambda b, x: {"u": hh.algorithm1(x["u"].reshape(-1, 1), x["h"], x["g"], backend=b).dl_du.reshape(-1)},
    scale=lambda b, x, key: 1.0,
    dim=lambda x: x["h"].shape[0],
)
"""The Householder paper's Algorithm 1 (as printed) against the full eq. 15, the derivative of g' H(u) h."""


cases_omission = repeated(
    lambda ctx: [n for n in ctx.profile.exact_sizes if n >= 2],
    lambda ctx, rng, n: {x: random_vector(ctx, rng, n) for x in ("h", "u", "g")},
)

CLAIMS = [
    claim(
        id="svd.orthogonal_rnn_omission",
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
            Gradient("Householder Alg. 1 dL/du - exact derivative").exact(FULL.exact, cases_omission),
        ),
        notes=(
            "Algorithm 1 of the Householder paper (lines 12-14, run as printed) computes "
            "U_bar_k = g_new (-h~_k)' - H_{k+1} c~_k' with g_new = g - beta u: expanding, -alpha g - beta h + "
            "alpha beta u, the full eq. 15. The term is not omitted (householder.algorithm1 also matches autograd)."
        ),
    )
]
