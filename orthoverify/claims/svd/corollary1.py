"""svd.corollary1: Cor. 1 (Sec. 6.2, with eq. 3 and eq. 8) of svdRNN (Zhang, Lei & Dhillon,
ICML 2018).

Statement: with the update rule in (8), linear svdRNNs have no spurious local minimum.

Compared: the svdRNN loss L(p) = R(M_{1,1}(u, v, sigma(s_hat))) at parameters p* of a strict
local minimum W* of R (where M is smooth, so p* is a local minimum of L) against L at
parameters p' of a better point in the same band (sigma*, r).

Evidence: a hand-built n = 1 instance (exact critical points) and the n = 2 spurious minima of
svd.theorem5's search, pulled back at 50 digits and checked by random perturbations of p*.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from orthoverify.backends import Array, Backend
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._landscape import (
    exact_1d,
    float_norm,
    instance_problem,
    nstr,
    search_instances,
    spurious_1d,
)
from orthoverify.claims.svd._shared import effort
from orthoverify.engine.checks import Case, FunctionCheck, Outcome, RunContext
from orthoverify.engine.model import Claim
from orthoverify.engine.ratios import THRESHOLD, Measure, scaled
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
"""R(w) = (w + 1/10)^2 + (w^2 - 3/2)^2: wells near w = 0.974 (spurious) and w = -1.024 (global), both
with |w| in (sigma* - r, sigma* + r) = (0.9, 1.1)."""


def _param_inputs(b: Backend, p: svd.SvdrnnParams, prefix: str = "") -> dict[str, Any]:
    """Parameters p as a counterexample's inputs: ``u1..un``, ``v1..vn``, ``s_hat`` (with a prefix)."""
    us, vs, s_hat = p
    out: dict[str, Any] = {f"{prefix}u{len(x)}": b.to_strings(x) for x in us}
    out |= {f"{prefix}v{len(x)}": b.to_strings(x) for x in vs}
    out[f"{prefix}s_hat"] = b.to_strings(s_hat)
    return out


def _params_from(b: Backend, inputs: Mapping[str, Any], n: int, prefix: str = "") -> svd.SvdrnnParams:
    """The inverse of :func:`_param_inputs`, in b's arithmetic."""
    us = [b.asarray(inputs[f"{prefix}u{k}"]) for k in range(1, n + 1)]
    vs = [b.asarray(inputs[f"{prefix}v{k}"]) for k in range(1, n + 1)]
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
    from orthoverify.errors import DomainError

    try:
        p_star = svd.svdrnn_parameters(b, w_star, sigma_star, r, smooth=True)
        p_better = svd.svdrnn_parameters(b, w_better, sigma_star, r, smooth=False)
    except DomainError:
        return None
    if p_star is None or p_better is None:
        return None
    case: dict[str, Any] = {k: inst[k] for k in ("Y", "A", "Sigma", "t")} | {"sigma_star": sigma_star, "r": r}
    return case | _param_inputs(b, p_star) | _param_inputs(b, p_better, "better_")


def replay_corollary(inputs: Mapping[str, Any], b: Backend) -> Measure:
    """From the recorded inputs, in b's arithmetic: W = M(p*) (eq. 3, eq. 8); Newton from W to the
    critical point W_c it converges to (within 1e-8); W_c must be a strict local minimum of R
    (gradient at rounding level, every Hessian eigenvalue > 0) and p* must be a point where M is
    smooth (every reflection vector nonzero): then L = R o M has a local minimum at parameters of
    W_c next to p*. The breaking quantity: R(W_c) - L(p') > 0, p' another svdRNN parameter point
    with the same band (sigma*, r), as a ratio to (n^2 eps (1 + R))."""
    pb = instance_problem(b, inputs)
    sigma_star, r = inputs["sigma_star"], inputs["r"]
    n = pb.n
    p_star = _params_from(b, inputs, n)
    p_better = _params_from(b, inputs, n, "better_")
    w0 = svd.svdrnn_weight(b, p_star, sigma_star, r)
    w, gn = lr.refine_critical_point(w0, pb.y, pb.a, pb.sigma, pb.t, backend=b)
    moved = float_norm(b, w - w0) / (1.0 + float_norm(b, w0))
    eig = lr.hessian_eigenvalues(pb.hessian(w), b)
    top = max(abs(float(v)) for v in eig)
    r_c = pb.risk(w)
    l_better = pb.risk(svd.svdrnn_weight(b, p_better, sigma_star, r))
    gap = r_c - l_better
    smallest = _smallest_vector(b, p_star)
    sig = svd.sigma_map(p_star[2], sigma_star, r, backend=b)
    problems = []
    if not float(gn) <= 1e3 * n * n * b.eps * lr.gradient_scale(pb, w):
        problems.append(f"||grad R|| = {float(gn):.3g} is not at rounding level")
    if not moved <= 1e-8:
        problems.append(f"Newton moved {moved:.3g} away from M(p*)")
    if not float(min(eig)) > 30 * n * n * b.eps * top:
        problems.append(f"the Hessian's smallest eigenvalue {float(min(eig)):.3g} is not positive")
    if not smallest > 1e-6:
        problems.append(f"a reflection vector of p* is (nearly) zero ({smallest:.3g}): M is not continuous there")
    desc = (
        f"R(W_c) - L(p') = {nstr(gap, 30) if b.family == 'mpmath' else f'{float(gap):.17g}'} with L(p*) = "
        f"R(M(p*)) = {float(pb.risk(w0)):.17g} at a strict local minimum W_c = M(p*) (moved {moved:.2g}) of R: "
        f"||grad R|| = {float(gn):.3g}, Hessian eigenvalues {[f'{float(v):.6g}' for v in eig]}, sigma(p*) = "
        f"{[f'{float(v):.10g}' for v in sig]} in (sigma* - r, sigma* + r) = ({sigma_star} - {r}, {sigma_star} + {r}), "
        f"smallest reflection vector entry max {smallest:.3g}"
    )
    if problems:
        return Measure(0.0, "not a counterexample: " + "; ".join(problems) + f" ({desc})", error=0.0)
    return _with_desc(scaled(float(gap) / (1.0 + abs(float(r_c))), n * n, b.eps), desc)


def _with_desc(m: Measure, desc: str) -> Measure:
    return Measure(m.ratio, desc, error=m.error)


def _corollary_outcome(
    ctx: RunContext, inst: Mapping[str, Any], w_star: Array, w_better: Array, sigma_star: Any, r: Any, label: str
) -> tuple[Case, Measure, dict[str, Any]] | None:
    hp = ctx.backend
    case = corollary_case(hp, inst, w_star, w_better, sigma_star, r)
    if case is None:
        return None
    pb = instance_problem(hp, inst)
    n = pb.n
    p_star = _params_from(hp, case, n)
    rebuilt = float_norm(hp, svd.svdrnn_weight(hp, p_star, sigma_star, r) - w_star) / float_norm(hp, w_star)
    margin, samples = svd.perturbation_margin(
        hp,
        p_star,
        lambda q: pb.risk(svd.svdrnn_weight(hp, q, sigma_star, r)),
        ctx.rng("perturb", label),
        effort(ctx, "corollary1.perturbations"),
    )
    data = {
        "instance": label,
        "sigma_star": str(sigma_star),
        "r": str(r),
        "W*": [[nstr(v, 20) for v in row] for row in w_star],
        "W'": [[nstr(v, 20) for v in row] for row in w_better],
        "singular_values_W*": [nstr(v, 12) for v in hp.svd(w_star)[1]],
        "singular_values_W'": [nstr(v, 12) for v in hp.svd(w_better)[1]],
        "||M(p*) - W*|| / ||W*||": f"{rebuilt:.3g}",
        "perturbations": samples,
        "min (L(p* + rho z) - L(p*)) / rho^2": f"{margin:.6g}",
    }
    m = replay_corollary(case, hp)
    if not rebuilt <= 1e-40 or not margin >= -1e-20 or not m.ratio > THRESHOLD:
        return None
    return case, m, data


def fn_corollary_1d(ctx: RunContext) -> Outcome:
    """The hand-built n = 1 instance (exact critical points), band sigma* = 1, r = 1/10: the spurious
    minimum W* and the global minimum W' both have |w| in (0.9, 1.1); p* = parameters of W* with every
    reflection nonzero (U = V = -1), checked M(p*) = W* at 50 digits and by perturbations of p*."""
    inst = HAND_BUILT_COROLLARY
    points = exact_1d(inst)
    bad = spurious_1d(points)
    if not bad:
        return Outcome(True, 1, notes="no spurious local minimum of R in this instance")
    best = min(points, key=lambda cp: cp.risk)
    hp = ctx.backend
    cp = bad[0][0]
    out = _corollary_outcome(
        ctx,
        inst,
        hp.asarray(cp.w_strings()),
        hp.asarray(best.w_strings()),
        inst["sigma_star"],
        inst["r"],
        "hand-built n=1",
    )
    if out is None:
        return Outcome(False, 1, notes="the spurious minimum of R did not give a spurious minimum of the svdRNN loss")
    case, m, data = out
    return Outcome(False, 1, failure=(case, m), notes=f"{data}", data=data)


def _band(hp: Backend, *ws: Array) -> tuple[str, str]:
    """(sigma*, r) as 4-digit decimals with (sigma* - r, sigma* + r) holding (0.95 lo, 1.05 hi), lo and
    hi the extreme singular values of the given matrices (so sigma* - r > 0)."""
    svals = [float(v) for w in ws for v in hp.svd(w)[1]]
    lo, hi = 0.95 * min(svals), 1.05 * max(svals)
    star = float(f"{(lo + hi) / 2:.4g}")
    r = float(f"{max(star - lo, hi - star) * 1.001:.4g}")
    return f"{star!r}", f"{r!r}"


def fn_corollary_search(ctx: RunContext) -> Outcome:
    """n = 2: spurious local minima of R from the critical-point search (as for Theorem 5); for each
    one with det W* > 0 (so that parameters exist at which M is smooth), a band (sigma*, r) holding
    the singular values of W* and of the best critical point W', and the pull-back; the failing case
    reported is the one with the narrowest band (smallest r / sigma*)."""
    hp = ctx.backend
    rng = ctx.rng("starts")
    rows: list[dict[str, Any]] = []
    pulled: list[tuple[float, tuple[Case, Measure, dict[str, Any]]]] = []
    for label, inst, starts in search_instances(ctx):
        if inst["t"] < 2 or len(inst["Y"]) < 2:
            continue
        found = lr.find_critical_points(inst["Y"], inst["A"], inst["Sigma"], inst["t"], starts=starts, seed=rng)
        if not found:
            continue
        best = found[0]
        spurious = [cp for cp in found if cp.kind == "min" and cp.risk - best.risk > 1e-30]
        for cp in sorted(spurious, key=lambda c: -float(c.sigma_min)):
            w_star, w_best = hp.asarray(cp.w_strings()), hp.asarray(best.w_strings())
            det = float(np.linalg.det(hp.to_numpy(w_star)))
            rows.append({"instance": label, "sigma_min": nstr(cp.sigma_min, 10), "det": f"{det:.6g}"})
            if det <= 0:
                continue
            star, r = _band(hp, w_star, w_best)
            out = _corollary_outcome(ctx, inst, w_star, w_best, star, r, label)
            if out is not None:
                pulled.append((float(r) / float(star), out))
    if not pulled:
        return Outcome(
            True, len(rows), notes=f"{len(rows)} spurious minima of R, none pulled back", data={"spurious": rows}
        )
    _, (case, m, data) = min(pulled, key=lambda x: x[0])  # the narrowest band r / sigma*
    note = f"{len(rows)} spurious minima of R, {len(pulled)} pulled back; the narrowest band: {data}"
    return Outcome(False, len(rows), failure=(case, m), notes=note, data=data | {"spurious": rows})


COROLLARY1 = Claim(
    id="svd.corollary1",
    paper=PAPER,
    where="Cor. 1, Sec. 6.2 (with eq. 3 and eq. 8)",
    statement="With the update rule in (8), linear svdRNNs have no spurious local minimum",
    kind="existence",
    checks=(
        FunctionCheck(
            "pullback_hand_built_n1",
            fn_corollary_1d,
            ("mpmath",),
            "high-precision",
            "(R(W*) - L(p')) / (n^2 eps (1 + R)) at a local minimum p* of L = R o M_{1,1} o (eq. 8)",
            replay_fn=replay_corollary,
        ),
        FunctionCheck(
            "pullback_search_n2",
            fn_corollary_search,
            ("mpmath",),
            "search",
            "(R(W*) - L(p')) / (n^2 eps (1 + R)) at a local minimum p* of L = R o M_{1,1} o (eq. 8)",
            replay_fn=replay_corollary,
        ),
    ),
    notes=(
        "The loss in the svdRNN parameters p = (u_1..u_n, v_1..v_n, s_hat) is L(p) = R(M_{1,1}(u, v, sigma(s_hat))). "
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


CLAIMS: list[Claim] = [COROLLARY1]
