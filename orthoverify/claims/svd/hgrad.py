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

from orthoverify.backends import FLOAT_BACKENDS, Array, Backend, get_backend
from orthoverify.claims._common import norm_scale
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._shared import grad_case, random_vector
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, residual, scaled, worst
from orthoverify.engine.reference import central_gradient, exact_gradient, fd_eps
from orthoverify.engine.templates import Gradient
from orthoverify.param import svd as sv


def _hgrad_scale(b: Backend, h: Array, g: Array, u: Array) -> float:
    """Size of the terms of dL/du: ||g|| ||h|| / ||u||."""
    return norm_scale(b, g) * norm_scale(b, h) / norm_scale(b, u) if not b.exact else 1.0


def q_hgrad_autograd(b: Backend, case: Case) -> Measure:
    """Algorithm 3 against torch autograd through the dense definition g' H_k(u) h."""
    import torch

    h, u, g, n = grad_case(b, case)
    res = sv.hgrad(h, u, g, backend=b)
    uu = u.clone().requires_grad_(True)
    hq = h.clone().requires_grad_(True)
    loss = b.sum(g * (sv.reflector(uu, n, backend=b) @ hq))
    du, dh = torch.autograd.grad(loss, (uu, hq))
    return worst(
        residual(b, res.dl_du - du, n, _hgrad_scale(b, h, g, u)),
        residual(b, res.dl_dh - dh, n, norm_scale(b, g)),
    )


def q_hgrad_fd(b: Backend, case: Case) -> Measure:
    """Algorithm 3 on b against 50-digit central differences of g' H_k(u) h on b's inputs."""
    h, u, g, n = grad_case(b, case)
    res = sv.hgrad(h, u, g, backend=b)
    r = b if b.method == "high-precision" else get_backend("mpmath")
    hr, ur, gr = (r.asarray(b.to_strings(x)) for x in (h, u, g))
    ref_u = central_gradient(lambda x: r.sum(gr * (sv.reflector(x, n, backend=r) @ hr)), ur, r)
    ref_h = central_gradient(lambda x: r.sum(gr * (sv.reflector(ur, n, backend=r) @ x)), hr, r)
    eps = max(b.eps, fd_eps(r))
    e_u = r.to_float(r.norm(r.asarray(b.to_strings(res.dl_du)) - ref_u)) / _hgrad_scale(r, hr, gr, ur)
    e_h = r.to_float(r.norm(r.asarray(b.to_strings(res.dl_dh)) - ref_h)) / norm_scale(r, gr)
    return worst(scaled(e_u, n, eps), scaled(e_h, n, eps))


def q_hgrad_exact(b: Backend, case: Case) -> Measure:
    """Algorithm 3 against SymPy's exact derivative of g' H_k(u) h."""
    h, u, g, n = grad_case(b, case)
    res = sv.hgrad(h, u, g, backend=b)
    ref_u = exact_gradient(lambda x: b.sum(g * (sv.reflector(x, n, backend=b) @ h)), u)
    ref_h = exact_gradient(lambda x: b.sum(g * (sv.reflector(u, n, backend=b) @ x)), h)
    return worst(residual(b, res.dl_du - ref_u, n), residual(b, res.dl_dh - ref_h, n))


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
        GRADIENT.autograd(q_hgrad_autograd, cases_hgrad),
        GRADIENT.finite_differences(q_hgrad_fd, cases_hgrad, backends=(*FLOAT_BACKENDS, "mpmath")),
        GRADIENT.exact(q_hgrad_exact, cases_hgrad),
    ),
    notes="For u_k != 0 (at u_k = 0 the map u -> H(u) is not even continuous, so there is no derivative).",
)


CLAIMS: list[Claim] = [HGRAD]
