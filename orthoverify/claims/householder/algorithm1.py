"""Algorithm 1 is judged against the definition C = W h, dL/dh = W'c and every reference of
theorem2's gradient, and its MATLAB listing against it (transliterated keeping MATLAB's evaluation
order); the torch autograd.Function is judged in both memory strategies, on batches."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from orthoverify import samples
from orthoverify._lazy import lazy_module
from orthoverify.backends import Array, Backend
from orthoverify.claims._common import EXACT, FLOAT, FLOAT_HP
from orthoverify.claims.householder import claim
from orthoverify.claims.householder._shared import (
    EQ14_15,
    grad_inputs,
    gradient_cases_exact,
    gradient_sample,
    h_norm,
    sizes_nm,
    theorem2,
    w_h,
)
from orthoverify.engine.checks import Case, PropertyCheck, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, worst
from orthoverify.engine.templates import Agreement, Derivative, Gradient, Inputs, sampled
from orthoverify.param import householder as hh

if TYPE_CHECKING:  # torch loads when a torch check first runs
    from orthoverify.param import householder_torch
else:
    householder_torch = lazy_module("orthoverify.param.householder_torch")

GRADIENT = Gradient(
    "max of ||C - Wh|| / (n eps ||h||), ||dL/dh - W'c|| / (n eps ||c||), "
    "||dL/dU_j - ref_j|| / (n eps ||h|| ||c|| / ||U_j||)"
)


def algorithm1(b: Backend, x: Inputs) -> dict[str, Array]:
    """Algorithm 1: C, dL/dh, dL/dU."""
    res = hh.algorithm1(x["U"], x["h"], x["c"], backend=b)
    return {"C": res.c, "h": res.dl_dh, "U": res.dl_du}


ALGORITHM1 = dataclasses.replace(EQ14_15, formula=algorithm1, values={"C": w_h}, value_scale=h_norm)
"""Algorithm 1 against C = W h and every reference of L = c' W(U) h, derived by the engine."""


def closed_forms(b: Backend, x: Inputs) -> dict[str, Array]:
    """C = W h, dL/dh = W'c and eq. 14, in the same arithmetic."""
    w = hh.reflector_product(x["U"], backend=b)
    return {"C": w @ x["h"], "h": b.transpose(w) @ x["c"], "U": theorem2(b, x)["U"]}


def matlab_listing(b: Backend, case: Case) -> tuple[Array, Array, Array]:
    """The MATLAB listing of App. D: C, dL/dh, dL/dU."""
    x = grad_inputs(b, case)
    mat = hh.algorithm1_matlab(x["U"], x["h"], x["c"], backend=b)
    return mat.c, mat.dl_dh, mat.dl_du


def algorithm1_outputs(b: Backend, case: Case) -> tuple[Array, Array, Array]:
    """Algorithm 1: C, dL/dh, dL/dU."""
    out = algorithm1(b, grad_inputs(b, case))
    return out["C"], out["h"], out["U"]


MATLAB = Agreement(matlab_listing, algorithm1_outputs, GRADIENT.quantity_name)


BATCHED = dataclasses.replace(ALGORITHM1, autograd_loss=lambda b, x: (x["c"] * w_h(b, x)).sum())
"""L = c' W(U) h on n x B batches (autograd through the dense definition)."""


def q_function(b: Backend, case: Case) -> Measure:
    """The torch autograd.Function of Algorithm 1 in both memory strategies, on a batch: its
    forward and its backward (through torch autograd) against the dense definition W(U) H;
    elsewhere Algorithm 1 on the batch against central differences in b's precision (how a torch
    failure is re-examined)."""
    if b.family != "torch":
        return ALGORITHM1.autograd(b, case)
    import torch

    def function(strategy: Any) -> Derivative:
        def run(b: Backend, x: Inputs) -> dict[str, Array]:
            u, h = x["U"].clone().requires_grad_(True), x["h"].clone().requires_grad_(True)
            out = householder_torch.householder_apply(u, h, strategy=strategy)
            gu, gh = torch.autograd.grad((x["c"] * out).sum(), (u, h))
            return {"C": out.detach(), "U": gu, "h": gh}

        return dataclasses.replace(BATCHED, formula=run)

    return worst(*(function(s).autograd(b, case) for s in householder_torch.STRATEGIES))


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
            GRADIENT.exact(ALGORITHM1.exact, cases_exact),
            MATLAB.check("exact", cases_exact, EXACT),
            GRADIENT.finite_differences(ALGORITHM1.finite_differences, cases_fd),
            PropertyCheck("float", ALGORITHM1.against(closed_forms), cases_float, FLOAT_HP, GRADIENT.quantity_name),
            MATLAB.check("float:listing", cases_float, FLOAT),
            GRADIENT.autograd(ALGORITHM1.autograd, cases_float),
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
