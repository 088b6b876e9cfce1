"""Eq. 2 against the derivative of L(P) = sum(G * W(triu(P,1) - triu(P,1)')) along E_ij - E_ji,
which covers every loss since only G = dL/dW enters; the torch Function's backward against
autograd through the solve."""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy
from hypothesis import strategies as st

from orthoverify import samples
from orthoverify._lazy import lazy_module
from orthoverify.backends import Array, Backend
from orthoverify.claims._common import exact_backend, norm_scale, symbol_array
from orthoverify.claims.cayley import claim
from orthoverify.claims.cayley._shared import NO_CHECK, random_signs, skew_of, skew_symbols
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, residual, worst
from orthoverify.engine.templates import Derivative, Gradient, Inputs, by_size
from orthoverify.engine.templates_more import sizes_between
from orthoverify.param import cayley as cy
from orthoverify.strategies import skew_wide

if TYPE_CHECKING:  # torch loads when a torch check first runs
    from orthoverify.param import cayley_torch
else:
    cayley_torch = lazy_module("orthoverify.param.cayley_torch")

GRADIENT = Gradient(
    "||eq. 2 - reference|| / (n eps ||G|| (1 + ||A||))",
    fd_note=", reference: fourth-order central differences at 50 digits, eps >= eps_fd",
)


def _weight(b: Backend, x: Inputs) -> Array:
    """W(A) by the generic solve with A = triu(P, 1) - triu(P, 1)': P's strict upper triangle holds
    A's free entries, so dL/dP_ij (i < j) is the derivative along E_ij - E_ji (the paper's)."""
    return cy.scaled_cayley(skew_of(b, x["P"]), x["d"], backend=b, threshold=NO_CHECK)


def _inputs(b: Backend, case: Case) -> Inputs:
    a = b.asarray(case["A"], name="A")
    return {"P": b.triu(a, 1), "A": a, "d": tuple(int(s) for s in case["d"]), "G": b.asarray(case["G"], name="G")}


def _eq2(b: Backend, x: Inputs) -> dict[str, Array]:
    """Eq. 2's dL/dA, read in the strict upper triangle (the free entries P)."""
    return {"P": b.triu(cy.cayley_gradient(x["A"], x["d"], x["G"], backend=b, threshold=NO_CHECK), 1)}


EQ2 = Derivative(
    _inputs,
    loss=lambda b, x: b.sum(x["G"] * _weight(b, x)),
    formula=_eq2,
    # the size of the terms of dL/dA: ||G|| (1 + ||A||); the solves' rounding is ~cond(I + A) eps
    scale=lambda b, x, _key: norm_scale(b, x["G"]) * (1.0 + norm_scale(b, x["A"])),
    dim=lambda x: x["A"].shape[0],
)
"""Eq. 2 and L(P) = sum(G * W(P)): its references are autograd through the solve and 50-digit differences."""


def q_theorem3_2_function(b: Backend, case: Case) -> Measure:
    """The torch autograd.Function whose backward is eq. 2 (param.cayley_torch): its forward
    against the generic solve (over the solve's conditioning 1 + ||A||), its backward against
    autograd through the solve."""
    import torch

    def function(b: Backend, x: Inputs) -> dict[str, Array]:
        p = x["P"].clone().requires_grad_(True)
        w = cayley_torch.scaled_cayley_weight(p, torch.tensor(x["d"], dtype=p.dtype, device=p.device))
        return {"W": w.detach(), "P": torch.autograd.grad(b.sum(x["G"] * w), (p,))[0]}

    return dataclasses.replace(
        EQ2, formula=function, values={"W": _weight}, value_scale=lambda b, x: 1.0 + norm_scale(b, x["A"])
    ).autograd(b, case)


def q_theorem3_2_exact(b: Backend, case: Case) -> Measure:
    """Eq. 2 against SymPy's exact derivative at a rational point (:attr:`EQ2`'s exact reference);
    also the full matrix V' - V is skew with zero diagonal."""
    x = _inputs(b, case)
    full = cy.cayley_gradient(x["A"], x["d"], x["G"], backend=b)
    return worst(EQ2.exact(b, case), residual(b, full + b.transpose(full), x["A"].shape[0]))


def _grad_cases(
    ctx: RunContext, *, sizes: Callable[[RunContext], Sequence[int]], exact: bool = False
) -> Iterator[Case]:
    """ctx.profile.cases per size, the first with D = -I; float ||A|| from 0.1 up by decades."""
    rng = ctx.rng()
    for n in sizes(ctx):
        for k in range(ctx.profile.cases):
            d = [-1] * n if k == 0 else random_signs(rng, n)
            if exact:
                a, g = samples.rational_skew(rng, n), samples.rational_matrix(rng, n, n, bound=5, max_den=3)
                yield {"A": a, "d": d, "G": g}
            else:
                scale = (0.1, 1.0, 10.0, 100.0)[k % 4]
                yield {"A": samples.random_skew(rng, n, scale), "d": d, "G": rng.standard_normal((n, n))}


cases_grad_float = functools.partial(_grad_cases, sizes=sizes_between(1, 32, "sizes"))
cases_grad_fd = functools.partial(_grad_cases, sizes=sizes_between(1, 4, "hp_sizes"))
cases_grad_exact = functools.partial(_grad_cases, sizes=sizes_between(1, 3, "exact_sizes"), exact=True)


def sym_theorem3_2(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """n = 2 and 3 with free symbols for A and G, every D: eq. 2 minus the derivative of
    sum(G * W) along E_ij - E_ji."""
    b = exact_backend()
    for n in (2, 3):
        a = skew_symbols("a", n)
        g = symbol_array("g", n, n)
        for d in itertools.product((1, -1), repeat=n):
            if n == 3 and d not in ((1, 1, 1), (-1, 1, 1), (-1, -1, -1)):
                continue
            closed = cy.cayley_gradient(a, d, g, backend=b)
            w = cy.scaled_cayley(a, d, backend=b)
            loss = sympy.together(b.sum(g * w))
            for i in range(n):
                for j in range(i + 1, n):
                    yield f"n={n}, D={d}, entry ({i},{j})", closed[i, j] - sympy.diff(loss, a[i, j])


strategy_gradients = by_size(
    1,
    7,
    lambda n: {
        "A": skew_wide(n, max_exponent=3),
        "d": st.lists(st.sampled_from([1, -1]), min_size=n, max_size=n),
        "G": st.integers(0, 2**32 - 1).map(lambda s: np.random.default_rng(s).standard_normal((n, n))),
    },
)


CLAIMS: list[Claim] = [
    claim(
        id="cayley.theorem3_2",
        place=Place(theorem="3.2", equation="2", appendix="A"),
        expected="verified",
        origin="catalogue",
        summary="the gradient dL/dA = V' - V of the scaled Cayley map",
        statement=(
            "For W = (I + A)^-1 (I - A) D with A skew-symmetric and D fixed, dL/dA = V' - V where "
            "V = (I + A)^-T dL/dW (D + W')"
        ),
        kind="gradient",
        checks=(
            GRADIENT.symbolic(sym_theorem3_2),
            GRADIENT.exact(q_theorem3_2_exact, cases_grad_exact),
            GRADIENT.autograd(EQ2.autograd, cases_grad_float),
            GRADIENT.autograd(
                q_theorem3_2_function,
                cases_grad_float,
                name="custom_backward",
                note=" (the Function's backward against autograd through the solve; forward too)",
            ),
            GRADIENT.finite_differences(EQ2.finite_differences, cases_grad_fd),
            GRADIENT.search(EQ2.autograd, strategy_gradients),
        ),
        notes=(
            "dL/dA_ij is the derivative along E_ij - E_ji (A_ij and A_ji = -A_ij move together), as in App. A; "
            "references differentiate L(P) = sum(G * W(triu(P,1) - triu(P,1)')), which covers every loss since "
            "only G = dL/dW enters. The extracted proof prints 'i = j' where 'i != j' is meant."
        ),
    )
]
