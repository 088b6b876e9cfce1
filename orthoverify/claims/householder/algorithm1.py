"""Algorithm 1 is judged against the definition C = W h, dL/dh = W'c and every reference of
theorem2's gradient, and its MATLAB listing against it (transliterated keeping MATLAB's evaluation
order); the torch autograd.Function is judged in both memory strategies, on batches."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.claims._common import EXACT, FLOAT, FLOAT_HP
from orthoverify.claims.householder import claim
from orthoverify.claims.householder._shared import (
    against_high_precision_definition,
    definition_gradients,
    grad_inputs,
    gradient_cases_exact,
    gradient_measure,
    gradient_sample,
    loss,
    sizes_nm,
)
from orthoverify.engine.checks import Case, PropertyCheck, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, agreement, worst
from orthoverify.engine.reference import exact_gradient
from orthoverify.engine.templates import Agreement, Gradient, sampled
from orthoverify.param import householder as hh

GRADIENT = Gradient(
    "max of ||C - Wh|| / (n eps ||h||), ||dL/dh - W'c|| / (n eps ||c||), "
    "||dL/dU_j - ref_j|| / (n eps ||h|| ||c|| / ||U_j||)"
)


def _run(b: Backend, case: Case) -> tuple[Any, Array, Array, Array]:
    u, h, c = grad_inputs(b, case)
    return hh.algorithm1(u, h, c, backend=b), u, h, c


def q_float(b: Backend, case: Case) -> Measure:
    """Algorithm 1 against the definition (C = W h, dL/dh = W'c) and against eqs. 14-15, in b."""
    res, u, h, c = _run(b, case)
    w = hh.reflector_product(u, backend=b)
    gu, _gh = hh.theorem2_gradients(u, h, c, backend=b)
    pairs = {"c": (res.c, w @ h), "dl_dh": (res.dl_dh, b.transpose(w) @ c), "dl_du": (res.dl_du, gu)}
    return gradient_measure(b, u, h, c, pairs, b.eps)


def q_exact(b: Backend, case: Case) -> Measure:
    """Algorithm 1 against the definition and SymPy's exact derivative of c'W(U)h."""
    res, u, h, c = _run(b, case)
    n = u.shape[0]
    w = hh.reflector_product(u, backend=b)
    return worst(
        agreement(b, res.c, w @ h, n),
        agreement(b, res.dl_dh, b.transpose(w) @ c, n),
        agreement(b, res.dl_du, exact_gradient(loss(b, h, c), u), n),
    )


def q_fd(b: Backend, case: Case) -> Measure:
    """Algorithm 1 on b against high-precision central differences of c'W(U)h (and W h, W'c)."""
    res, u, h, c = _run(b, case)
    return against_high_precision_definition(b, u, h, c, {"c": res.c, "dl_dh": res.dl_dh, "dl_du": res.dl_du})


def matlab_listing(b: Backend, case: Case) -> tuple[Array, Array, Array]:
    """The MATLAB listing of App. D: C, dL/dh, dL/dU."""
    u, h, c = grad_inputs(b, case)
    mat = hh.algorithm1_matlab(u, h, c, backend=b)
    return mat.c, mat.dl_dh, mat.dl_du


def algorithm1_outputs(b: Backend, case: Case) -> tuple[Array, Array, Array]:
    """Algorithm 1: C, dL/dh, dL/dU."""
    res, _u, _h, _c = _run(b, case)
    return res.c, res.dl_dh, res.dl_du


MATLAB = Agreement(matlab_listing, algorithm1_outputs, GRADIENT.quantity_name)


def q_autograd(b: Backend, case: Case) -> Measure:
    """Algorithm 1 against the definition W(U) h and its derivative (torch autograd)."""
    res, u, h, c = _run(b, case)
    out, au, ah, eps = definition_gradients(b, u, h, c)
    pairs = {"c": (res.c, out), "dl_dh": (res.dl_dh, ah), "dl_du": (res.dl_du, au)}
    return gradient_measure(b, u, h, c, pairs, eps)


def q_function(b: Backend, case: Case) -> Measure:
    """The torch autograd.Function of Algorithm 1 (both memory strategies) on a batch, against
    autograd through the dense definition W(U) H; elsewhere :func:`q_autograd` (Algorithm 1 on the
    batch against central differences in b's precision: how a torch failure is re-examined)."""
    if b.family != "torch":
        return q_autograd(b, case)
    import torch

    from orthoverify.param.householder_torch import STRATEGIES, householder_apply

    u, h, c = grad_inputs(b, case)
    ug, hg = u.clone().requires_grad_(True), h.clone().requires_grad_(True)
    ref = hh.reflector_product(ug, backend=b) @ hg
    au, ah = torch.autograd.grad((c * ref).sum(), (ug, hg))
    out = []
    for strategy in STRATEGIES:
        uf, hf = u.clone().requires_grad_(True), h.clone().requires_grad_(True)
        cf = householder_apply(uf, hf, strategy=strategy)  # type: ignore[arg-type]
        fu, fh = torch.autograd.grad((c * cf).sum(), (uf, hf))
        pairs = {"c": (cf.detach(), ref.detach()), "dl_dh": (fh, ah), "dl_du": (fu, au)}
        out.append(gradient_measure(b, u, h, c, pairs, b.eps))
    return worst(*out)


def cases_batch(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n, m in sizes_nm(ctx.profile.sizes, min_n=2):
        batch = int(rng.integers(1, 9))
        yield {
            "U": samples.reflection_vectors(rng, n, m),
            "h": rng.standard_normal((n, batch)),
            "c": rng.standard_normal((n, batch)),
        }


cases_float = sampled(lambda ctx: sizes_nm(ctx.profile.sizes_on(ctx.backend), min_n=2), gradient_sample)
cases_fd = sampled(lambda ctx: sizes_nm(ctx.profile.hp_sizes, min_n=2), gradient_sample, per_size=lambda ctx: 1)
cases_exact = gradient_cases_exact


CLAIMS: list[Claim] = [
    claim(
        id="householder.algorithm1",
        place=Place(algorithm="1", appendix="B, D"),
        expected="verified",
        origin="catalogue",
        summary="Algorithm 1 and its MATLAB listing return C, dL/dh and dL/dU",
        statement=(
            "Algorithm 1 (local FP/BP at one time step) and its MATLAB listing (App. D) return C = W h, dL/dh and dL/dU"
        ),
        kind="gradient",
        checks=(
            GRADIENT.exact(q_exact, cases_exact),
            MATLAB.check("exact", cases_exact, EXACT),
            GRADIENT.finite_differences(q_fd, cases_fd),
            PropertyCheck("float", q_float, cases_float, FLOAT_HP, GRADIENT.quantity_name),
            MATLAB.check("float:listing", cases_float, FLOAT),
            GRADIENT.autograd(q_autograd, cases_float),
            GRADIENT.autograd(
                q_function,
                cases_batch,
                name="custom_backward",
                note="; both memory strategies of the torch autograd.Function, batched",
            ),
        ),
        notes=(
            "dL/dU is the gradient with respect to the whole n x m matrix U (the paper zeroes the upper triangle "
            "afterwards, Sec. 5). The MATLAB listing is transliterated line by line, keeping MATLAB's "
            "left-to-right evaluation order. The torch autograd.Function (orthoverify.param.householder_torch) "
            "runs the same generic code, storing H (O(nmB) per step, Table 2's assumption) or regenerating it "
            "from C (O(nB) per step, Sec. 4.2's alternative)."
        ),
    )
]
