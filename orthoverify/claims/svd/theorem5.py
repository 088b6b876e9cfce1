"""svd.theorem5. Two witness searches, each a list of candidates and a violation measure that is both
the test and the replay, so that a recorded counterexample is re-judged from its numbers alone:
for n = 1 every real critical point exactly (the real roots of R', classified by the sign of
R''), on the hand-built instance and random rational ones; for n = 2 the critical points found
by search (float64 Newton from many starts, refined and classified at 50 digits), with a t = 1
control where R is convex. That the search finds exactly the exact roots at n = 1 is a test
(tests/claims/test_claims_svd.py)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import sympy

from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT
from orthoverify.claims._common import exact_backend as _sympy
from orthoverify.claims.svd._landscape import (
    HAND_BUILT_1D,
    critical_near,
    exact_1d,
    float_norm,
    instance_problem,
    nstr,
    search_instances,
    sigma_exact,
)
from orthoverify.claims.svd._shared import claim, effort
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.model import Place
from orthoverify.engine.ratios import Measure, scaled
from orthoverify.engine.templates import judged, witness
from orthoverify.param import linear_rnn as lr


def _rational_1d(rng: np.random.Generator, t: int) -> Case:
    a = [[str(sympy.Rational(int(rng.integers(-9, 10)), int(rng.integers(1, 6)))) for _ in range(t)]]
    sig = sigma_exact(rng, t, "random")
    return {
        "Y": [[str(sympy.Rational(int(rng.integers(1, 4)), int(rng.integers(1, 3))))]],
        "A": a,
        "Sigma": [[str(v) for v in row] for row in sig],
        "t": t,
    }


def candidates_exact_1d(ctx: RunContext) -> Iterator[Case]:
    """n = 1: every real critical point of R, found exactly (the real roots of the polynomial
    R'(w)), of the hand-built instance and then of random rational instances with t = 2, 3;
    within an instance the points farthest from singular W (largest |w|) first."""
    rng = ctx.rng()
    extra = effort(ctx).theorem5_random_exact_instances
    for case in [HAND_BUILT_1D] + [_rational_1d(rng, 2 + i % 2) for i in range(extra)]:
        for cp in sorted(exact_1d(case), key=lambda p: -p.sigma_min):
            # numbers only (a result file's inputs are parsed strictly); the exact root is in the measure's text
            yield dict(case) | {"w": nstr(cp.w[0, 0], 40)}


def violation_exact(b: Backend, inputs: Case) -> Measure:
    """n = 1, exactly: the real root of R' nearest the recorded w, its class (simple root, sign
    of R''), |w| and R(w) - min over all real critical points of R. The recorded strings are
    parsed strictly, never evaluated."""
    points = exact_1d(inputs)
    target = float(_sympy().asarray([str(inputs["w"])], name="w")[0])
    if not points:
        return Measure(0.0, "R is constant: every point is a global minimum", error=0.0)
    cp = min(points, key=lambda p: abs(float(p.w[0, 0]) - target))
    glob = min(points, key=lambda p: p.risk)
    gap = cp.risk - glob.risk
    desc = (
        f"R(w*) - R_min = {nstr(gap, 30)} at the exact critical point w* = {cp.exact} = {nstr(cp.w[0, 0], 25)} "
        f"(R'' = {nstr(cp.hessian_eigenvalues[0], 15)}, sigma_min = |w*| = {nstr(cp.sigma_min, 15)}, "
        f"class {cp.kind}); the global minimum w' = {nstr(glob.w[0, 0], 25)}, sigma_min = |w'| = "
        f"{nstr(glob.sigma_min, 15)}; {len(points)} real critical points in all"
    )
    broken = cp.kind == "min" and gap > 0 and cp.sigma_min > 0 and glob.sigma_min > 0
    return judged(not broken, "holds: " + desc, desc)


def candidates_search(ctx: RunContext) -> Iterator[Case]:
    """n = 2: the critical points found by search (float64 damped Newton from many starts, half
    minimising and half solving grad R = 0, then Newton and the Hessian's eigenvalues at 50
    digits: param.linear_rnn), each paired with its instance's lowest critical point W'."""
    rng = ctx.rng("starts")
    for _, inst, starts in search_instances(ctx):
        found = lr.find_critical_points(inst["Y"], inst["A"], inst["Sigma"], inst["t"], starts=starts, seed=rng)
        data = {k: inst[k] for k in ("Y", "A", "Sigma", "t")}
        for cp in found[1:]:  # sorted by risk: found[0] is the lowest
            yield data | {"W": cp.w_strings(), "W_better": found[0].w_strings()}


def violation_search(b: Backend, inputs: Case) -> Measure:
    """The violation, in b's arithmetic. Newton from the recorded W* finds the critical point W_c
    it stands for (the point must stay within 1e-8 of W* and ||grad R(W_c)|| reach rounding level,
    else it is not a critical point and nothing is measured); then W_c breaks Theorem 5 when three
    quantities are positive: the gap R(W_c) - R(W'), the Hessian's smallest eigenvalue (a strict
    local minimum) and eps = min(sigma_min(W_c), sigma_min(W')). Each is a test ratio (against
    n^2 eps (1 + R), n^2 eps |lambda_max| and n eps (1 + ||W||)); the violation is the smallest,
    so the check's threshold decides all three at once."""
    pb = instance_problem(b, inputs)
    w0 = b.asarray(inputs["W"])
    n = pb.n
    w, gn, moved, eig, found = critical_near(b, pb, w0)
    smin = lr.sigma_min(w, backend=b)
    smin_better = lr.sigma_min(b.asarray(inputs["W_better"]), backend=b)
    r_star = pb.risk(w)
    gap = r_star - pb.risk(b.asarray(inputs["W_better"]))
    digits = min(b.digits or 17, 30)
    desc = (
        f"R(W*) - R(W') = {nstr(gap, digits) if b.family == 'mpmath' else f'{float(gap):.17g}'} at a critical point "
        f"W* with ||grad R(W*)|| = {float(gn):.3g}, Hessian eigenvalues {[f'{float(v):.6g}' for v in eig]}, "
        f"R(W*) = {float(r_star):.17g}; sigma_min(W*) = {float(smin):.10g}, sigma_min(W') = "
        f"{float(smin_better):.10g}, so both lie in sigma_min(W) >= eps = {min(float(smin), float(smin_better)):.6g}"
    )
    if not found:
        why = f"||grad R|| = {float(gn):.3g}, Newton moved {moved:.3g} from the recorded W"
        return Measure(0.0, f"not a counterexample: no critical point at the recorded W ({why}; {desc})", error=0.0)
    parts = {
        "the gap R(W*) - R(W')": scaled(float(gap) / (1.0 + abs(float(r_star))), n * n, b.eps),
        "the Hessian's smallest eigenvalue": scaled(float(min(eig)) / max(abs(float(v)) for v in eig), n * n, b.eps),
        "eps = min(sigma_min(W*), sigma_min(W'))": scaled(
            min(float(smin), float(smin_better)) / (1.0 + float_norm(b, w)), n, b.eps
        ),
    }
    what, m = min(parts.items(), key=lambda kv: kv[1].ratio)
    return Measure(m.ratio, f"{desc}; the smallest ratio: {what}", error=m.error)


CLAIMS = [
    claim(
        id="svd.theorem5",
        place=Place(theorem="5", section="6.2", note="and its proof"),
        expected="refuted",
        origin="catalogue",
        summary="with sigma_min(W) >= eps > 0, every critical point of a linear RNN's risk is a global minimum",
        statement=(
            "With linear recurrent neural networks, if the transition matrix W satisfies sigma_min(W) >= eps > 0, all "
            "critical points of the population risk are global minima"
        ),
        kind="bound",
        checks=(
            witness(
                "search",
                violation_search,
                candidates=candidates_search,
                backends=("mpmath",),
                quantity_name="min of (R(W*) - R(W')) / (n^2 eps (1 + R)), lambda_min / (n^2 eps |lambda_max|), "
                "eps / (n eps_mach (1 + ||W*||)) at a critical point W*",
            ),
            witness(
                "witness",
                violation_exact,
                candidates=candidates_exact_1d,
                backends=EXACT,
                quantity_name="R(W*) - R_min at a strict local minimum W* with sigma_min(W*) > 0 (exact)",
                method="symbolic",
            ),
        ),
        notes=(
            "False for t >= 2. Hand-built: n = d = 1, t = 2, Y = 1, Sigma = I, A = (1/10, 1), so R(w) = (w - 1/10)^2 "
            "+ (w^2 - 1)^2; R' has three real roots: a global minimum near w = 0.7526 (R = 0.6139), a maximum near "
            "-0.1021 and a strict local minimum near w = -0.6505 (R = 0.8960, R'' = 3.08 > 0, sigma_min = 0.65). The "
            "search finds such minima for n = 2 too (t = 2, 3; Sigma = I, random, diagonal with a zero). For t = 1, R "
            "is a convex quadratic and the theorem holds (the control instance). The printed proof uses Claim 1's "
            "wrong gradient, bounds ||(E_1|...|E_t)(Id|2W'|...)'|| below by the sum of the blocks' norms (a "
            "sum of products of blocks is not bounded below by their separate norms), and concludes Y WW = A from a "
            "zero gradient, which fails whenever A is not of the form Y WW (then R* > C and no W reaches it)."
        ),
    )
]
