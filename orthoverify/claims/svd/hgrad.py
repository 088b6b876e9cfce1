"""svd.hgrad. A gradient against its independent references, derived from the loss g' H_k(u) h with
eq. 1's dense reflector (templates.Derivative): torch autograd, 50-digit central differences and
SymPy's exact derivative, on random h, u != 0 and g of every size and reflection length 1, 2, n.
The ratio's scale is the size of the terms Hgrad adds (||g|| ||h|| / ||u|| for dL/du), not of its
result, which may cancel."""

from __future__ import annotations

from orthoverify.backends import FLOAT_BACKENDS, Array, Backend
from orthoverify.claims._common import norm_scale
from orthoverify.claims.svd._shared import claim, grad_inputs, gradient_sizes, lengths, random_vector, reflected
from orthoverify.engine.model import Place
from orthoverify.engine.templates import Derivative, Gradient, Inputs, repeated
from orthoverify.param import svd as sv


def _hgrad(b: Backend, x: Inputs) -> dict[str, Array]:
    res = sv.hgrad(x["h"], x["u"], x["g"], backend=b)
    return {"u": res.dl_du, "h": res.dl_dh}


def _scale(b: Backend, x: Inputs, key: str) -> float:
    """Size of the terms: ||g|| ||h|| / ||u|| for dL/du, ||g|| for dL/dh."""
    if key == "h":
        return norm_scale(b, x["g"])
    return norm_scale(b, x["g"]) * norm_scale(b, x["h"]) / norm_scale(b, x["u"]) if not b.exact else 1.0


HGRAD = Derivative(grad_inputs, reflected, _hgrad, _scale, dim=lambda x: x["h"].shape[0])
cases_hgrad = repeated(
    lambda ctx: [(n, k) for n in gradient_sizes(ctx) if n <= 16 for k in lengths(n)],
    lambda ctx, rng, nk: {x: random_vector(ctx, rng, nk[1] if x == "u" else nk[0]) for x in ("h", "u", "g")},
)
GRADIENT = Gradient("||Hgrad - reference|| / (n eps scale), scale ||g|| (dL/dh) or ||g|| ||h|| / ||u|| (dL/du)")

CLAIMS = [
    claim(
        id="svd.hgrad",
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
            GRADIENT.autograd(HGRAD.autograd, cases_hgrad),
            GRADIENT.finite_differences(HGRAD.finite_differences, cases_hgrad, backends=(*FLOAT_BACKENDS, "mpmath")),
            GRADIENT.exact(HGRAD.exact, cases_hgrad),
        ),
        notes="For u_k != 0 (at u_k = 0 the map u -> H(u) is not even continuous, so there is no derivative).",
    )
]
