"""svd.algorithm1. A gradient against its independent references, printed and corrected together:
param.svd.svdrnn_local (variant "printed" or "corrected") against the forward product and three
gradients of g' M_{k1,k2}(u, v, sigma(s)) h (torch autograd, 50-digit central differences,
SymPy's exact derivative) derived from that loss by templates.Derivative, each component judged
against 1 + ||reference|| (a gradient entry may vanish), with (m1, m2) in {(1, 0), (0, 1), (n, n),
(n/2, n - 1)} so that each loop runs alone and both together."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from orthoverify.backends import Array, Backend
from orthoverify.claims.svd._shared import gradient_sizes, random_vector, twins, vectors_case
from orthoverify.engine.checks import Case, Check, RunContext
from orthoverify.engine.model import Place
from orthoverify.engine.templates import Cases, Derivative, Gradient, Inputs, repeated
from orthoverify.param import svd as sv


def _inputs(b: Backend, case: Case) -> Inputs:
    """h, g, s and the reflection vectors u0.., v0.. (of lengths n - m + 1..n); the map of eq. 8
    (sigma* = 1, r) on float cases."""
    h, g, s = (b.asarray(case[k], name=k) for k in ("h", "g", "s"))
    n, m1, m2 = h.shape[0], int(case["m1"]), int(case["m2"])
    us = sv.unstack_padded(b.asarray(case["U"], name="U"), n - m1 + 1)
    vs = sv.unstack_padded(b.asarray(case["V"], name="V"), n - m2 + 1)
    smap = (1, case["r"]) if "r" in case and not b.exact else None
    vectors = {f"u{i}": u for i, u in enumerate(us)} | {f"v{i}": v for i, v in enumerate(vs)}
    return {"h": h, "g": g, "s": s, "n": n, "m1": m1, "m2": m2, "smap": smap} | vectors


def _vectors(x: Inputs, c: str) -> list[Array]:
    return [x[f"{c}{i}"] for i in range(x[f"m{1 if c == 'u' else 2}"])]


def _forward(b: Backend, x: Inputs) -> Array:
    """C = M_{k1,k2}(u, v, sigma(s)) h, the reflections of M_k padded with the identity
    reflections u_j = 0, j <= n - m."""
    n, smap = x["n"], x["smap"]
    us, vs = ([b.zeros(j) for j in range(1, n - x[m] + 1)] + _vectors(x, c) for c, m in (("u", "m1"), ("v", "m2")))
    sig = sv.sigma_map(x["s"], smap[0], smap[1], backend=b) if smap else x["s"]
    return sv.m_k1k2(us, vs, sig, backend=b) @ x["h"]


def _algorithm1(variant: sv.Variant) -> Callable[[Backend, Inputs], dict[str, Array]]:
    def formula(b: Backend, x: Inputs) -> dict[str, Array]:
        s, smap = x["s"], x["smap"]
        res = sv.svdrnn_local(
            x["h"],
            x["g"],
            _vectors(x, "u"),
            None if smap else s,
            _vectors(x, "v"),
            variant=variant,
            s_map=(s, smap[0], smap[1]) if smap else None,
            backend=b,
        )
        grads = {f"u{i}": d for i, d in enumerate(res.dl_du)} | {f"v{i}": d for i, d in enumerate(res.dl_dv)}
        return {"C": res.c, "h": res.dl_dh, "s": res.dl_ds if smap else res.dl_dsigma} | grads

    return formula


def derivative(variant: sv.Variant) -> Derivative:
    """Algorithm 1 (C and every gradient) and the loss g' C its gradients differentiate."""
    return Derivative(
        _inputs,
        lambda b, x: b.sum(x["g"] * _forward(b, x)),
        _algorithm1(variant),
        dim=lambda x: x["n"] * max(1, x["m1"] + x["m2"]),
        values={"C": _forward},
        values_in_backend=True,  # C beside 50-digit differences: its definition in float64, as recorded
    )


def cases_alg1(small: bool = False) -> Cases:
    """Random inputs with m1, m2 from 0 to n; ``small``: the sizes that 50-digit central differences
    (four products per parameter) afford, as exact and high-precision arithmetic always take."""

    def points(ctx: RunContext) -> list[tuple[int, int, int]]:
        pairs = lambda n: sorted({(1, 0), (0, 1), (n, n), (max(1, n // 2), n - 1)})  # noqa: E731
        return [(n, *p) for n in gradient_sizes(ctx, small) if 2 <= n <= 16 for p in pairs(n)]

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
    alg1 = derivative("corrected" if corrected else "printed")
    return (
        GRADIENT.autograd(alg1.autograd, cases_alg1()),
        GRADIENT.finite_differences(
            alg1.finite_differences, cases_alg1(small=True), backends=("numpy-float64", "mpmath")
        ),
        GRADIENT.exact(alg1.exact, cases_alg1()),
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
