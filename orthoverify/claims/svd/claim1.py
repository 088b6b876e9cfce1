"""svd.claim1. The risk is compared with its definition, the expectation computed as a sum over
finite distributions (noise +-eta given X, so E[eta | X] = 0 holds exactly), not with another
closed form. The gradients (printed, and the true one) are compared with three references
derived from the closed-form risk (templates.Derivative), the float ratio scaled by the size of
the terms the gradient sums; the true one also symbolically. The inputs: the corrected notes."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import Array, Backend
from orthoverify.claims._common import EXACT, FLOAT_HP, TORCH, symbol_array
from orthoverify.claims.svd._landscape import (
    cases_grad_exact,
    cases_grad_exact_general,
    fd_cases,
    float_cases,
    float_norm,
    gradient_case,
    risk_case,
)
from orthoverify.claims.svd._shared import twins
from orthoverify.engine.checks import Case, Check, PropertyCheck, RunContext
from orthoverify.engine.model import Place
from orthoverify.engine.ratios import Measure, agreement, scaled
from orthoverify.engine.templates import Derivative, Gradient, Inputs
from orthoverify.param import linear_rnn as lr

Formula = Callable[[lr.Problem, Array], Array]


def q_risk(b: Backend, case: Case) -> Measure:
    """Claim 1's closed form tr((Y WW - A) Sigma (Y WW - A)') + C, with Sigma and C the moments of
    the distribution, against E f computed by its definition (the sum over the distribution)."""
    w, y, a, x, p, eta = (b.asarray(case[k], name=k) for k in ("W", "Y", "A", "X", "p", "eta"))
    if not b.exact:  # probabilities rounded to b's precision: normalised there, so they sum to 1 in b
        p = p / b.sum(p)
    points = [x[k] for k in range(x.shape[0])]
    noises = [eta[k] for k in range(eta.shape[0])]
    sigma, c = lr.data_moments(points, p, noises, backend=b)
    t = int(x.shape[2])
    closed = lr.population_risk(w, y, a, sigma, t, c, backend=b)
    ref = lr.expected_loss(w, y, a, points, p, noises, backend=b)
    if b.exact:
        return agreement(b, np.array([closed], dtype=object), np.array([ref], dtype=object), 1)
    n, d = w.shape[0], y.shape[0]
    s1 = float_norm(b, y) * float_norm(b, lr.stacked_powers(w, t, backend=b)) + float_norm(b, a)
    xs, ps, es = b.to_numpy(x), b.to_numpy(p), b.to_numpy(eta)
    scale = sum(
        ps[k] * float(np.mean([(s1 * np.linalg.norm(xs[k]) + np.linalg.norm(row)) ** 2 for row in es[k]]))
        for k in range(xs.shape[0])
    )
    err = abs(b.to_float(closed) - b.to_float(ref)) if b.family != "mpmath" else float(abs(closed - ref))
    return scaled(err / scale, n * t + d + x.shape[0], b.eps)


def cases_risk(ctx: RunContext) -> Iterator[Case]:
    """Finite distributions, K = 3..5 points, d = n and n + 1, for n = 1, 2, 3 (exactly, n <= 2)."""
    rng, exact = ctx.rng(), ctx.backend.exact
    ns = (1, 2, 3) if not exact else tuple(n for n in ctx.profile.exact_sizes if n <= 2)
    ks = range(ctx.profile.cases)
    return (risk_case(rng, n, n + k % 2, t, 3 + k % 3, exact) for n in ns for t in (1, 2, 3) for k in ks)


def _of(b: Backend, x: Inputs) -> lr.Problem:
    return lr.problem(x["Y"], x["A"], x["Sigma"], x["t"], backend=b, psd=False)


def _inputs(b: Backend, case: Case) -> Inputs:
    """The case on b (psd=False: the gradient formulas hold for any symmetric Sigma, and a rounded
    PSD one may not be PSD)."""
    y, a, sigma, w = (b.asarray(case[k], name=k) for k in ("Y", "A", "Sigma", "W"))
    pb = lr.problem(y, a, sigma, int(case["t"]), backend=b, psd=False)
    return {"W": w, "Y": pb.y, "A": pb.a, "Sigma": pb.sigma, "t": pb.t}


def _risk(b: Backend, x: Inputs) -> Any:
    """R(W) by the closed form; expanded in exact arithmetic (the same polynomial, which SymPy
    then differentiates far faster than the product tree)."""
    risk = _of(b, x).risk(x["W"])
    return sympy.expand(risk) if b.exact else risk


def _derivative(formula: Formula) -> Derivative:
    """A gradient formula of R and its references (autograd, SymPy's exact derivative, central
    differences), scaled by the size of the terms the gradient sums, ||.|| / (nt eps scale)."""
    return Derivative(
        _inputs,
        _risk,
        lambda b, x: {"W": formula(_of(b, x), x["W"])},
        scale=lambda b, x, _key: lr.gradient_scale(_of(b, x), x["W"]),
        dim=lambda x: x["W"].shape[0] * x["t"],
    )


def sym_cases(ctx: RunContext) -> Iterator[Case]:
    """Free symbols: n = 1 and t = 1, 2, 3 with every input a symbol (Sigma symmetric); n = 2,
    t = 2 with W symbolic and rational Y, A, Sigma."""
    w, y = (np.array([[sympy.Symbol(c, real=True)]], dtype=object) for c in "wy")
    for t in (1, 2, 3):
        s = np.array([[sympy.Symbol(f"s{min(i, j)}{max(i, j)}", real=True) for j in range(t)] for i in range(t)])
        yield {"label": f"n=1, t={t}", "W": w, "Y": y, "A": symbol_array("a", t).reshape(1, t), "Sigma": s, "t": t}
    case = gradient_case(ctx.rng(), 2, 2, 2, "random", exact=True)
    yield {**case, "label": "n=2, t=2", "W": symbol_array("w", 2, 2)}


_RISK_RATIO = "|closed form - E f| / ((nt + d + K) eps E[(||Y WW|| ||x|| + ||A|| ||x|| + ||eta||)^2])"
_GRAD_RATIO = "||formula - reference|| / (nt eps 2||Y|| (||Y|| ||WW|| + ||A||) ||Sigma|| sum_i i ||W||^(i-1))"


def checks(corrected: bool) -> tuple[Check, ...]:
    which: str = "true" if corrected else "printed"
    formula: Formula = (lambda pb, w: pb.gradient(w)) if corrected else (lambda pb, w: pb.printed_gradient(w))
    grad, derivative = Gradient(_GRAD_RATIO, fd_note=""), _derivative(formula)
    square = not corrected  # the printed gradient needs d = n even to have W's shape
    return (
        PropertyCheck("exact", q_risk, cases_risk, EXACT, "closed form - E f (exact)"),
        PropertyCheck("float", q_risk, cases_risk, FLOAT_HP, _RISK_RATIO),
        *((grad.symbolic(derivative.identities(sym_cases)),) if corrected else ()),
        Gradient(f"{which} gradient - SymPy's exact derivative").exact(
            derivative.exact, cases_grad_exact_general if corrected else cases_grad_exact
        ),
        grad.autograd(
            derivative.autograd,
            functools.partial(float_cases, square=square),
            backends=TORCH if corrected else ("torch-float64",),
        ),
        grad.finite_differences(
            derivative.finite_differences,
            functools.partial(fd_cases, square=square),
            backends=("numpy-float32", "numpy-float64", "mpmath") if corrected else ("numpy-float64", "mpmath"),
        ),
    )


CLAIMS = twins(
    "svd.claim1",
    place=Place(claim="1", section="6.1", appendix="A.6"),
    expected="refuted",
    origin="catalogue",
    summary="the linear RNN's population risk and its gradient",
    corrected_summary="the linear RNN's population risk and its gradient, corrected",
    kind="gradient",
    printed=(
        "For the linear RNN o = Y WW vec(X), WW = (W | W^2 | ... | W^t), y = A vec(X) + eta with E[eta | X] = 0: "
        "R[W] = E f(W; X, y) = ||(Y WW - A) Sigma^(1/2)||_F^2 + C, Sigma = E[vec(X) vec(X)'], C = E||eta||^2; "
        "meanwhile grad_W R[W] = (Y WW - A) Sigma (Id | 2W | 3W^2 | ... | tW^(t-1))'"
    ),
    corrected=(
        "R[W] = ||(Y WW - A) Sigma^(1/2)||_F^2 + C, and grad_W R[W] = 2 sum_{i=1..t} sum_{j=0..i-1} "
        "(W^j)' G_i (W^(i-1-j))' with G = Y'(Y WW - A) Sigma = (G_1 | ... | G_t), G_i in R^(n x n)"
    ),
    checks=checks,
    printed_notes=(
        "The risk formula is true: the cross term 2 E<(Y WW - A) vec(X), eta> vanishes because E[eta | X] = 0; it "
        "is checked against the expectation computed by definition over finite distributions. The printed "
        "gradient is not: at n = d = t = 1 with W = Y = Sigma = 1 and A = 0, R(w) = w^2 has derivative 2 while "
        "the formula gives 1. It drops the factor 2 of the quadratic form and the factor Y' (it needs d = n "
        "even to have W's shape), and replaces the derivative of W^i, sum_j W^j dW W^(i-1-j), by i W^(i-1) dW, "
        "which App. A.6's Remark concedes only for commuting W and dW. See svd.claim1.corrected."
    ),
    corrected_notes=(
        "dR = 2 <Y'(Y WW - A) Sigma, d WW> and d(W^i) = sum_{j<i} W^j dW W^(i-1-j), so the gradient is "
        "2 sum_i sum_j (W^j)' G_i (W^(i-1-j))'. It holds for any symmetric Sigma and any d (Y d x n). Inputs: "
        "n = 1, 2, 3 (and more in float on bigger profiles), t = 1, 2, 3, d = n and d = n + 1, Sigma random, I, "
        "rank-deficient, diagonal with a zero, rank one. Central differences are fourth order at 50 digits, "
        "on the float inputs as rounded."
    ),
)
