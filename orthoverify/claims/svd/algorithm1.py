"""svd.algorithm1. A gradient against its independent references, printed and corrected together:
param.svd.svdrnn_local (variant "printed" or "corrected") against the forward product and three
gradients of g' M_{k1,k2}(u, v, sigma(s)) h (torch autograd, 50-digit central differences,
SymPy's exact derivative), with (m1, m2) in {(1, 0), (0, 1), (n, n), (n/2, n - 1)} so that each
loop runs alone and both together. The references are written here, not by templates.Derivative:
the parameters are lists of vectors of different lengths, and a component is judged against
1 + ||reference|| (a gradient entry may vanish)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from orthoverify.backends import Array, Backend, get_backend
from orthoverify.claims._common import norm_scale
from orthoverify.claims.svd._shared import random_vector, twins, vectors_case
from orthoverify.engine.checks import Case, Check, RunContext
from orthoverify.engine.model import Place
from orthoverify.engine.ratios import Measure, residual, scaled, worst
from orthoverify.engine.reference import central_gradient, exact_gradient, fd_eps
from orthoverify.engine.templates import Cases, Gradient, repeated
from orthoverify.param import svd as sv


def _alg1_inputs(b: Backend, case: Case) -> tuple[Array, Array, list[Array], Array, list[Array], int, int, int]:
    h, g, s = (b.asarray(case[k], name=k) for k in ("h", "g", "s"))
    n, m1, m2 = h.shape[0], int(case["m1"]), int(case["m2"])
    us = sv.unstack_padded(b.asarray(case["U"], name="U"), n - m1 + 1)
    vs = sv.unstack_padded(b.asarray(case["V"], name="V"), n - m2 + 1)
    return h, g, us, s, vs, n, m1, m2


def _full(b: Backend, vecs: list[Array], n: int, m: int) -> list[Array]:
    """The reflection vectors of M_{k} padded with the identity reflections u_j = 0, j <= n - m."""
    return [b.zeros(j) for j in range(1, n - m + 1)] + list(vecs)


def _alg1_loss(b: Backend, g: Array, n: int, m1: int, m2: int, smap: tuple[Any, Any] | None) -> Any:
    def loss(h: Array, us: list[Array], s: Array, vs: list[Array]) -> Any:
        return b.sum(g * _forward(b, us, s, vs, h, n, m1, m2, smap))

    return loss


def _swap(xs: list[Any], i: int, x: Any) -> list[Any]:
    """``xs`` with entry i replaced by x."""
    return [*xs[:i], x, *xs[i + 1 :]]


def _reference_grads(
    grad: Callable[[Callable[[Array], Any], Array], Array],
    loss: Any,
    h: Array,
    us: list[Array],
    s: Array,
    vs: list[Array],
) -> tuple[Array, list[Array], Array, list[Array]]:
    """dL/dh, dL/du_i, dL/ds, dL/dv_i of ``loss(h, us, s, vs)`` by a reference ``grad(f, x)``."""

    def at_u(i: int) -> Array:
        return grad(lambda x: loss(h, _swap(us, i, x), s, vs), us[i])

    def at_v(i: int) -> Array:
        return grad(lambda x: loss(h, us, s, _swap(vs, i, x)), vs[i])

    return (
        grad(lambda x: loss(x, us, s, vs), h),
        [at_u(i) for i in range(len(us))],
        grad(lambda x: loss(h, us, x, vs), s),
        [at_v(i) for i in range(len(vs))],
    )


def alg1_measure(b: Backend, case: Case, variant: sv.Variant, ref: str) -> Measure:
    """Algorithm 1 against a reference gradient: torch autograd, 50-digit central differences
    (fd) or SymPy's exact derivative. A failure seen with autograd is confirmed at high
    precision, where there is no autograd: there the reference is central differences."""
    if ref == "autograd" and b.family != "torch":
        ref = "fd"
    h, g, us, s, vs, n, m1, m2 = _alg1_inputs(b, case)
    smap = (1, case["r"]) if "r" in case and not b.exact else None
    res = sv.svdrnn_local(
        h, g, us, None if smap else s, vs, variant=variant, s_map=(s, smap[0], smap[1]) if smap else None, backend=b
    )
    got_s = res.dl_ds if smap else res.dl_dsigma
    loss = _alg1_loss(b, g, n, m1, m2, smap)
    if ref == "autograd":
        import torch

        leaves = [x.clone().requires_grad_(True) for x in (h, *us, s, *vs)]
        lh, lus, ls, lvs = leaves[0], leaves[1 : 1 + m1], leaves[1 + m1], leaves[2 + m1 :]
        grads = torch.autograd.grad(loss(lh, lus, ls, lvs), leaves)
        rh, rs = grads[0], grads[1 + m1]
        rus: list[Any] = list(grads[1 : 1 + m1])
        rvs: list[Any] = list(grads[2 + m1 :])
        rb = b
    elif ref == "exact":
        rh, rus, rs, rvs = _reference_grads(exact_gradient, loss, h, us, s, vs)
        rb = b
    else:  # 50-digit central differences on b's inputs
        rb = get_backend("mpmath") if b.method != "high-precision" else b
        conv = lambda x: rb.asarray(b.to_strings(x))  # noqa: E731
        lr = _alg1_loss(rb, conv(g), n, m1, m2, smap)
        fd = lambda f, x: central_gradient(f, x, rb)  # noqa: E731
        rh, rus, rs, rvs = _reference_grads(fd, lr, conv(h), [conv(x) for x in us], conv(s), [conv(x) for x in vs])
    eps = b.eps if ref != "fd" else max(b.eps, fd_eps(rb))

    def cmp(x: Array, y: Array) -> Measure:
        if b.exact:
            return residual(b, x - y, n)
        xr = rb.asarray(b.to_strings(x)) if rb is not b else x
        yy = y if rb is b else rb.asarray(rb.to_strings(y)) if ref != "fd" else y
        scale = 1.0 + norm_scale(rb, yy)
        return scaled(rb.to_float(rb.norm(xr - yy)) / scale, n * max(1, m1 + m2), eps)

    parts = [cmp(res.c, _forward(b, us, s, vs, h, n, m1, m2, smap)), cmp(res.dl_dh, rh), cmp(got_s, rs)]
    parts += [cmp(a, r) for a, r in zip(res.dl_du, rus, strict=True)]
    parts += [cmp(a, r) for a, r in zip(res.dl_dv, rvs, strict=True)]
    return worst(*parts)


def _forward(
    b: Backend, us: list[Array], s: Array, vs: list[Array], h: Array, n: int, m1: int, m2: int, smap: Any
) -> Array:
    """C = M_{k1,k2}(u, v, sigma(s)) h, the reflections of M_k padded with identities."""
    sig = sv.sigma_map(s, smap[0], smap[1], backend=b) if smap else s
    return sv.m_k1k2(_full(b, us, n, m1), _full(b, vs, n, m2), sig, backend=b) @ h


def cases_alg1(small: bool = False) -> Cases:
    """Random inputs with m1, m2 from 0 to n; ``small``: the sizes that 50-digit central differences
    (four products per parameter) afford, as exact and high-precision arithmetic always take."""

    def points(ctx: RunContext) -> list[tuple[int, int, int]]:
        few = small or ctx.backend.exact or ctx.backend.method == "high-precision"
        pairs = lambda n: sorted({(1, 0), (0, 1), (n, n), (max(1, n // 2), n - 1)})  # noqa: E731
        return [
            (n, *p) for n in (ctx.profile.exact_sizes if few else ctx.profile.sizes) if 2 <= n <= 16 for p in pairs(n)
        ]

    def draw(ctx: RunContext, rng: np.random.Generator, point: tuple[int, int, int]) -> Case:
        n, m1, m2 = point
        h, g = random_vector(ctx, rng, n), random_vector(ctx, rng, n)
        u, v = vectors_case(ctx, rng, n, n - m1 + 1), vectors_case(ctx, rng, n, n - m2 + 1)
        case = {"h": h, "g": g, "U": u, "V": v, "m1": m1, "m2": m2, "s": random_vector(ctx, rng, n)}
        return case if ctx.backend.exact else {**case, "r": 0.5}

    return repeated(points, draw, per_point=lambda ctx: max(1, ctx.profile.cases // 2))


GRADIENT = Gradient(
    "max over C, dL/dh, dL/dsigma (or dL/ds), dL/du, dL/dv of ||Alg1 - reference|| / (n (m1+m2) eps (1 + ||ref||))",
    fd_note="",
)


def checks(corrected: bool) -> tuple[Check, ...]:
    """Algorithm 1 as printed (or corrected) against its three independent references."""
    variant: sv.Variant = "corrected" if corrected else "printed"
    return (
        GRADIENT.autograd(lambda b, c: alg1_measure(b, c, variant, "autograd"), cases_alg1()),
        GRADIENT.finite_differences(
            lambda b, c: alg1_measure(b, c, variant, "fd"), cases_alg1(small=True), backends=("numpy-float64", "mpmath")
        ),
        GRADIENT.exact(lambda b, c: alg1_measure(b, c, variant, "exact"), cases_alg1()),
    )


CLAIMS = twins(
    "svd.algorithm1",
    place=Place(algorithm="1", appendix="B"),
    expected="refuted",
    origin="catalogue",
    summary="svdRNN's local forward and back propagation return the exact gradients",
    corrected_summary="Algorithm 1 with the reflection's input in the U loop returns the exact gradients",
    kind="gradient",
    printed=(
        "the local FP/BP of svdRNN (Alg. 1, with Hprod and Hgrad) returns C = U Sigma V' h, dL/dU, dL/dV, "
        "dL/dsigma (through eq. 8) and dL/dh"
    ),
    corrected="Algorithm 1 with Hgrad(h^(u)_{k-1}, u_k, g) in the U loop returns the exact gradients",
    checks=checks,
    printed_notes=(
        "As printed, the U loop calls Hgrad(h^(u)_k, u_k, g): the output of H(u_k), where Algorithm 3 needs "
        "its input h^(u)_{k-1} (the V loop passes h^(v)_{k+1}, the input, correctly). C, dL/dh, dL/dsigma and "
        "dL/dV are right; dL/dU is wrong whenever m1 >= 1."
    ),
)
