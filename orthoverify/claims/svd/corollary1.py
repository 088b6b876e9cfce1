"""svd.corollary1. A spurious local minimum W* of R becomes one of the svdRNN loss L = R o M only where
M is continuous at parameters p* of W* (no zero reflection vector: H(0) = I is a jump), so the
witnesses are pulled back to such p* at 50 digits and judged by a violation measure that is the
test and the replay: a hand-built n = 1 instance (exact critical points) and the n = 2 critical
points of svd.theorem5's search. Random perturbations of p* corroborate each pull-back (the
measure's stats); they decide nothing."""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from orthoverify.backends import Array, Backend
from orthoverify.claims.svd._landscape import (
    critical_near,
    exact_1d,
    instance_problem,
    nstr,
    search_instances,
    spurious_1d,
)
from orthoverify.claims.svd._shared import claim
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.model import Place
from orthoverify.engine.ratios import Measure, scaled
from orthoverify.engine.templates import witness
from orthoverify.errors import DomainError
from orthoverify.param import linear_rnn as lr
from orthoverify.param import svd

HAND_BUILT_COROLLARY: Case = {
    "Y": [["1"]],
    "A": [["-1/10", "3/2"]],
    "Sigma": [["1", "0"], ["0", "1"]],
    "t": 2,
    "sigma_star": "1",
    "r": "0.1",
}
"""The notes' hand-built instance: R(w) = (w + 1/10)^2 + (w^2 - 3/2)^2, both wells in the band (0.9, 1.1)."""


def _param_inputs(b: Backend, p: svd.SvdrnnParams, prefix: str = "") -> dict[str, Any]:
    """Parameters p as a counterexample's inputs: ``u1..un``, ``v1..vn``, ``s_hat`` (with a prefix)."""
    out = {f"{prefix}{c}{len(x)}": b.to_strings(x) for c, xs in (("u", p[0]), ("v", p[1])) for x in xs}
    return out | {f"{prefix}s_hat": b.to_strings(p[2])}


def _params_from(b: Backend, inputs: Mapping[str, Any], n: int, prefix: str = "") -> svd.SvdrnnParams:
    """The inverse of :func:`_param_inputs`, in b's arithmetic."""
    us, vs = ([b.asarray(inputs[f"{prefix}{c}{k}"]) for k in range(1, n + 1)] for c in "uv")
    return us, vs, b.asarray(inputs[f"{prefix}s_hat"])


def _smallest_vector(b: Backend, p: svd.SvdrnnParams) -> float:
    """The smallest max-norm of a reflection vector of p (0: M jumps there)."""
    return min(float(b.to_float(b.max_abs(x))) for x in (*p[0], *p[1]))


def corollary_case(
    b: Backend, inst: Mapping[str, Any], w_star: Array, w_better: Array, sigma_star: Any, r: Any
) -> Case | None:
    """The counterexample's inputs: the instance, the band, svdRNN parameters p* of the spurious
    minimum W* (smooth there) and p' of the better point W'; None when W* admits no smooth
    parameters (det W* < 0) or a singular value is outside the band."""
    try:
        p_star = svd.svdrnn_parameters(b, w_star, sigma_star, r, smooth=True)
        p_better = svd.svdrnn_parameters(b, w_better, sigma_star, r, smooth=False)
    except DomainError:
        return None
    if p_star is None or p_better is None:
        return None
    case: dict[str, Any] = {k: inst[k] for k in ("Y", "A", "Sigma", "t")} | {"sigma_star": sigma_star, "r": r}
    return case | _param_inputs(b, p_star) | _param_inputs(b, p_better, "better_")


def violation(b: Backend, inputs: Case) -> Measure:
    """The violation, in b's arithmetic (the test and the replay). W = M(p*) (eq. 3, eq. 8); Newton
    from W finds the critical point W_c it stands for (within 1e-8 of W, ||grad R|| at rounding
    level; else nothing is measured). p* is then a local minimum of L = R o M with L(p*) above
    L(p') when three quantities are positive: the gap R(W_c) - L(p'), the Hessian's smallest
    eigenvalue (W_c a strict local minimum of R) and the smallest reflection vector of p* (M is
    continuous there). Each is a test ratio (against n^2 eps (1 + R), n^2 eps |lambda_max| and
    n eps); the violation is the smallest. Corroboration, deciding nothing: ||M(p*) - W*|| / ||W*||
    (with W* recorded as W_star when known) and min (L(p* + rho z) - L(p*)) / rho^2 over 60 random
    unit z per rho in {1e-3, 1e-6, 1e-12} (seeded by the inputs), as the measure's stats."""
    pb = instance_problem(b, inputs)
    sigma_star, r = inputs["sigma_star"], inputs["r"]
    n = pb.n
    p_star = _params_from(b, inputs, n)
    p_better = _params_from(b, inputs, n, "better_")
    w0 = svd.svdrnn_weight(b, p_star, sigma_star, r)
    w, gn, moved, eig, found = critical_near(b, pb, w0)
    r_c = pb.risk(w)
    gap = r_c - pb.risk(svd.svdrnn_weight(b, p_better, sigma_star, r))
    smallest = _smallest_vector(b, p_star)
    sig = svd.sigma_map(p_star[2], sigma_star, r, backend=b)
    desc = (
        f"R(W_c) - L(p') = {nstr(gap, 30) if b.family == 'mpmath' else f'{float(gap):.17g}'} with L(p*) = "
        f"R(M(p*)) = {float(pb.risk(w0)):.17g} at a strict local minimum W_c = M(p*) (moved {moved:.2g}) of R: "
        f"||grad R|| = {float(gn):.3g}, Hessian eigenvalues {[f'{float(v):.6g}' for v in eig]}, sigma(p*) = "
        f"{[f'{float(v):.10g}' for v in sig]} in (sigma* - r, sigma* + r) = ({sigma_star} - {r}, {sigma_star} + {r}), "
        f"smallest reflection vector entry max {smallest:.3g}"
    )
    if not found:
        why = f"||grad R|| = {float(gn):.3g}, Newton moved {moved:.3g} from M(p*)"
        return Measure(0.0, f"not a counterexample: no critical point at M(p*) ({why}; {desc})", error=0.0)
    parts = {
        "the gap": scaled(float(gap) / (1.0 + abs(float(r_c))), n * n, b.eps),
        "the Hessian's smallest eigenvalue": scaled(float(min(eig)) / max(abs(float(v)) for v in eig), n * n, b.eps),
        "the smallest reflection vector": scaled(smallest, n, b.eps),
    }
    what, m = min(parts.items(), key=lambda kv: kv[1].ratio)
    if what != "the gap":
        desc = f"{desc}; the smallest ratio: {what}"
    seed = zlib.crc32(repr(sorted((k, str(v)) for k, v in inputs.items())).encode())
    margin, _ = svd.perturbation_margin(
        b, p_star, lambda q: pb.risk(svd.svdrnn_weight(b, q, sigma_star, r)), np.random.default_rng(seed), 60
    )
    return Measure(m.ratio, desc, error=m.error, stats={"min (L(p* + rho z) - L(p*)) / rho^2": margin})


def candidates_1d(ctx: RunContext) -> Iterator[Case]:
    """The hand-built instance's spurious minimum W* (exact critical points) against its global minimum W'."""
    inst = HAND_BUILT_COROLLARY
    hp = ctx.backend
    points = exact_1d(inst)
    best = min(points, key=lambda cp: cp.risk)
    for cp, _ in spurious_1d(points):
        w_star = hp.asarray(cp.w_strings())
        case = corollary_case(hp, inst, w_star, hp.asarray(best.w_strings()), inst["sigma_star"], inst["r"])
        if case is not None:
            yield case


def _band(hp: Backend, *ws: Array) -> tuple[str, str]:
    """(sigma*, r) as 4-digit decimals with (sigma* - r, sigma* + r) holding (0.95 lo, 1.05 hi), lo and
    hi the extreme singular values of the given matrices (so sigma* - r > 0)."""
    svals = [float(v) for w in ws for v in hp.svd(w)[1]]
    lo, hi = 0.95 * min(svals), 1.05 * max(svals)
    star = float(f"{(lo + hi) / 2:.4g}")
    r = float(f"{max(star - lo, hi - star) * 1.001:.4g}")
    return f"{star!r}", f"{r!r}"


def candidates_search(ctx: RunContext) -> Iterator[Case]:
    """n = 2: every critical point W* of R found by the search of svd.theorem5 (other than the
    instance's lowest, W') at which svdRNN parameters p* with M smooth exist (det W* > 0), with a
    band (sigma*, r) holding the singular values of W* and W'."""
    hp = ctx.backend
    rng = ctx.rng("starts")
    for _, inst, starts in search_instances(ctx):
        if inst["t"] < 2:
            continue
        found = lr.find_critical_points(inst["Y"], inst["A"], inst["Sigma"], inst["t"], starts=starts, seed=rng)
        for cp in found[1:]:  # sorted by risk: found[0] is the lowest
            w_star, w_best = hp.asarray(cp.w_strings()), hp.asarray(found[0].w_strings())
            if float(np.linalg.det(hp.to_numpy(w_star))) <= 0:
                continue  # no parameters at which M is continuous
            star, r = _band(hp, w_star, w_best)
            case = corollary_case(hp, inst, w_star, w_best, star, r)
            if case is not None:
                yield case


QUANTITY = (
    "min of (R(W*) - L(p')) / (n^2 eps (1 + R)), lambda_min / (n^2 eps |lambda_max|), smallest reflection / "
    "(n eps) at a local minimum p* of L = R o M_{1,1} o (eq. 8)"
)


CLAIMS = [
    claim(
        id="svd.corollary1",
        place=Place(corollary="1", section="6.2", equation="3 and 8"),
        expected="refuted",
        origin="catalogue",
        summary="linear svdRNNs have no spurious local minimum",
        statement="With the update rule in (8), linear svdRNNs have no spurious local minimum",
        kind="existence",
        checks=(
            witness(
                "witness",
                violation,
                candidates=candidates_1d,
                backends=("mpmath",),
                quantity_name=QUANTITY,
                method="high-precision",
            ),
            witness("search", violation, candidates=candidates_search, backends=("mpmath",), quantity_name=QUANTITY),
        ),
        notes=(
            "The loss in the svdRNN parameters p = (u_1..u_n, v_1..v_n, s_hat) is "
            "L(p) = R(M_{1,1}(u, v, sigma(s_hat))). "
            "If W* is a strict local minimum of R and M is continuous at p* with M(p*) = W*, then p* is a local "
            "minimum of L (p near p* maps near W*); it is spurious when some p' in the same parametrisation has "
            "L(p') < L(p*). M is continuous at p* when no reflection vector is zero (eq. 1's H(0) = I is a jump: "
            "H^n_1(u) is I for u = 0 and diag(1, .., 1, -1) otherwise); with U D, V D (D = diag(1, .., 1, -1)) one "
            "can make u_1, v_1 nonzero exactly when det W* > 0. Hand-built: n = 1, t = 2, Y = 1, Sigma = I, "
            "A = (-1/10, 3/2), sigma* = 1, r = 1/10: W* = 0.97399 (R = 1.45743), W' = -1.02412 (R = 1.05756), "
            "p* = (u_1 = v_1 = -2, s_hat = eq. 8's inverse of 0.97399); for n = 1 with W* < 0 the pull-back fails "
            "(one of u_1, v_1 must be zero), which is why the hand-built spurious minimum sits at W* > 0."
        ),
    )
]
