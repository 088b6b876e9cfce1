"""svd.hgrad: eqs. 13-15 and Algorithm 3 (Hgrad) of svdRNN (Zhang, Lei & Dhillon, ICML 2018).

Statement: with g = dL/dC, C = H_k(u_k) h: dL/dh = g - beta u_k and dL/du_k = -alpha g - beta h +
alpha beta u_k (alpha = 2u'h/u'u, beta = 2u'g/u'u), the last term coming from the norm of u_k.

Compared (a gradient against its independent references): param.svd.hgrad against three
gradients of g' H_k(u) h: torch autograd, 50-digit central differences and SymPy's exact
derivative.

Evidence: random h, u, g (u != 0) of every size and reflection length 1, 2, n.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from orthoverify.backends import FLOAT_BACKENDS, Array, Backend
from orthoverify.claims._common import norm_scale
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._shared import grad_case, random_vector
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.templates import Derivative, Gradient, Inputs
from orthoverify.param import svd as sv


def _inputs(b: Backend, case: Case) -> Inputs:
    h, u, g, _n = grad_case(b, case)
    return {"h": h, "u": u, "g": g}


def _loss(b: Backend, x: Inputs) -> Any:
    """g' H_k(u) h with the dense reflector: the definition Hgrad differentiates."""
    return b.sum(x["g"] * (sv.reflector(x["u"], x["h"].shape[0], backend=b) @ x["h"]))


def _hgrad(b: Backend, x: Inputs) -> dict[str, Array]:
    res = sv.hgrad(x["h"], x["u"], x["g"], backend=b)
    return {"u": res.dl_du, "h": res.dl_dh}


def _scale(b: Backend, x: Inputs, key: str) -> float:
    """Size of the terms: ||g|| ||h|| / ||u|| for dL/du, ||g|| for dL/dh."""
    if key == "h":
        return norm_scale(b, x["g"])
    return norm_scale(b, x["g"]) * norm_scale(b, x["h"]) / norm_scale(b, x["u"]) if not b.exact else 1.0


HGRAD_DERIVATIVE = Derivative(_inputs, _loss, _hgrad, _scale, dim=lambda x: x["h"].shape[0])


def cases_hgrad(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    sizes = ctx.profile.sizes_on(ctx.backend) if ctx.backend.method != "high-precision" else ctx.profile.exact_sizes
    for n in sizes:
        if n > 16:
            continue
        for k in sorted({1, 2, n} & set(range(1, n + 1))):
            for _ in range(ctx.profile.cases):
                yield {
                    "h": random_vector(ctx, rng, n),
                    "u": random_vector(ctx, rng, k),
                    "g": random_vector(ctx, rng, n),
                }


GRADIENT = Gradient("||Hgrad - reference|| / (n eps scale), scale ||g|| (dL/dh) or ||g|| ||h|| / ||u|| (dL/du)")


HGRAD = Claim(
    id="svd.hgrad",
    paper=PAPER,
    place=Place(algorithm="3", equation="13-15"),
    expected="verified",
    origin="catalogue",
    summary="Hgrad computes the gradients of H_k(u_k) h",
    kind="gradient",
    statement=(
        "Hgrad(h, u_k, g) with g = dL/dC, C = H_k(u_k) h: dL/dh = g - beta u_k and "
        "dL/du_k = -alpha g - beta h + alpha beta u_k (alpha = 2u'h/u'u, beta = 2u'g/u'u), "
        "including the last term from the norm of u_k"
    ),
    checks=(
        GRADIENT.autograd(HGRAD_DERIVATIVE.autograd, cases_hgrad),
        GRADIENT.finite_differences(
            HGRAD_DERIVATIVE.finite_differences, cases_hgrad, backends=(*FLOAT_BACKENDS, "mpmath")
        ),
        GRADIENT.exact(HGRAD_DERIVATIVE.exact, cases_hgrad),
    ),
    notes="For u_k != 0 (at u_k = 0 the map u -> H(u) is not even continuous, so there is no derivative).",
)


CLAIMS: list[Claim] = [HGRAD]
