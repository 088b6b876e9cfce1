"""Seven directions of parameter space never move W, so the rank is at most 7n - 7 < n^2 from n = 6:
the analytic rank against min(n^2, 7n - 7), at 50 digits around the threshold, the seven
directions in the kernel, every fixed Pi for small n, and Haar targets reached by Gauss-Newton
(evidence of an open image, not a proof). The rank scans and the permutation sweep stay bespoke
(an undecided rank fails without a counterexample; their tables are what the report plots); a
missed Haar target is a failed search, never a counterexample."""

from __future__ import annotations

import itertools
import math
from typing import Any

from orthoverify import samples
from orthoverify.backends import Backend
from orthoverify.claims.unitary import _shared as kit
from orthoverify.claims.unitary._rank import (
    F64,
    HP,
    RANK_FIGURE,
    coverage_plan,
    dropped_ratio,
    float_jacobian,
    point_case,
    point_cases,
    point_params,
    rank_checks,
    rank_measure,
    threshold_rule,
)
from orthoverify.engine.checks import Case, FunctionCheck, Outcome, PropertyCheck, RunContext
from orthoverify.engine.ratios import THRESHOLD as RATIO_THRESHOLD
from orthoverify.engine.ratios import Measure, flag, scaled, worst
from orthoverify.param import unitary_rank as ur

NOT_THRESHOLD = "not min(n^2, 7n - 7)"


def q_symmetry_kernel(b: Backend, case: Case) -> Measure:
    """``||J K||_F / (n eps ||J||_F ||K||_F)`` for the seven symmetry directions K (zero in
    exact arithmetic), and K of rank 7 (6 at n = 1, where the reflections are constant)."""
    p = point_params(b, case)
    n = p.n
    j = ur.jacobian_analytic(p)
    k = ur.symmetry_directions(p)
    scale = b.to_float(b.norm(j)) * b.to_float(b.norm(k))
    jk = b.to_float(b.norm(j @ k))
    ratio = scaled(jk / scale, n, b.eps)
    kdec = ur.jacobian_rank(b, k)
    want = 6 if n == 1 else 7
    return worst(ratio, flag(kdec.rank == want, f"the symmetry directions have rank {kdec.rank}, not {want}"))


cases_kernel = point_cases("kernel", lambda plan: plan.float_max, lambda plan: plan.kernel_hp)


def fn_permutations(ctx: RunContext) -> Outcome:
    """Every fixed Pi for n <= perm_all, the identity, the reversal and random ones above:
    the rank is min(n^2, 7n - 7) whatever the permutation."""
    plan = coverage_plan(ctx)
    b = ctx.backend
    rng = ctx.rng("perm")
    counts: dict[str, dict[str, int]] = {}
    failure: tuple[Case, Measure] | None = None
    unclear = 0
    cases = 0
    worst_ratio = 0.0
    families: list[tuple[int, list[tuple[int, ...]]]] = [
        (n, list(itertools.permutations(range(n)))) for n in range(1, plan.perm_all + 1)
    ]
    for n, extra in plan.perm_sampled:
        perms = [tuple(range(n)), tuple(range(n))[::-1]]
        perms += [tuple(int(i) for i in rng.permutation(n)) for _ in range(extra)]
        families.append((n, perms))
    for n, perms in families:
        tally = counts.setdefault(str(n), {})
        for perm in perms:
            case = point_case(rng, n, perm)
            dec = ur.jacobian_rank(b, float_jacobian(b, case))
            cases += 1
            worst_ratio = max(worst_ratio, dropped_ratio(dec))
            key = "undecided" if dec.rank is None else str(dec.rank)
            tally[key] = tally.get(key, 0) + 1
            if dec.rank is None:
                unclear += 1
            elif not threshold_rule(n, dec.rank) and failure is None:
                failure = (case, Measure(math.inf, f"rank {dec.rank} at n = {n}, Pi = {case['perm']}", error=math.inf))
    notes = "; ".join(
        f"n = {n}: {sum(t.values())} permutations, ranks {t} (bound {ur.rank_bound(int(n))})" for n, t in counts.items()
    )
    return Outcome(unclear == 0 and failure is None, cases, worst_ratio, failure, notes, {"ranks": counts})


def fn_haar_targets(ctx: RunContext) -> Outcome:
    """Random Haar unitary targets for small n, solved for by Gauss-Newton from random starts:
    reached to a test ratio within the engine's threshold is evidence the image has positive
    measure (a measure-zero image is missed by Haar samples with probability 1) and of
    surjectivity, not a proof."""
    plan = coverage_plan(ctx)
    rng = ctx.rng("haar")
    rows: list[dict[str, Any]] = []
    missed: list[str] = []
    for n in plan.haar_sizes:
        for _ in range(plan.haar_targets):
            u = samples.haar_unitary(rng, n)
            best, tries = math.inf, 0
            while tries < 5 and not best <= RATIO_THRESHOLD:
                tries += 1
                start = point_case(rng, n)
                _, ratio = ur.urnn_preimage(u, [int(i) for i in str(start["perm"]).split(",")], start["x"])
                best = min(best, ratio)
            rows.append({"n": n, "ratio": best, "starts": tries})
            if not best <= RATIO_THRESHOLD:
                missed.append(f"n = {n} (best ratio {best:.3g})")
    worst_ratio = max((r["ratio"] for r in rows), default=0.0)
    notes = f"{len(rows) - len(missed)} of {len(rows)} Haar targets reached for n in {list(plan.haar_sizes)}"
    if missed:
        notes += "; not reached (a failed search, not a counterexample): " + ", ".join(missed)
    return Outcome(not missed, len(rows), worst_ratio, None, notes, {"targets": rows})


CLAIMS = kit.claim(
    id="unitary.coverage_threshold",
    place=kit.ORNN(section="2", also=(kit.WISDOM,)),
    expected="verified",
    origin="added",
    summary="the uRNN's image contains an open set of U(n) exactly when n <= 5",
    kind="coverage",
    statement=(
        "(added) for every fixed permutation Pi, the image of W = D3 R2 F^-1 D2 Pi R1 F D1 contains an open set "
        "of U(n) exactly when n <= 5: the Jacobian into U(n) has rank n^2 at generic points for n <= 5, and for "
        "n >= 6 rank at most 7n - 7 < n^2 everywhere (generic rank min(n^2, 7n - 7)), so the image has measure "
        "zero and W does not reach all of U(n) already for n = 6 and 7"
    ),
    checks=(
        *rank_checks(
            threshold_rule,
            NOT_THRESHOLD,
            float_backend=F64,
            hp_sizes=lambda plan: plan.threshold_hp,
            quantities=(
                "rank of the analytic Jacobian vs min(n^2, 7n - 7), n = 1..N",
                "50-digit rank of the analytic Jacobian around the threshold",
            ),
        ),
        PropertyCheck(
            "float",
            q_symmetry_kernel,
            cases_kernel,
            (F64, HP),
            "||J K|| / (n eps ||J|| ||K||) for the 7 symmetry directions K, and rank K = 7",
        ),
        FunctionCheck(
            "exhaustive",
            fn_permutations,
            (F64,),
            "exhaustive",
            "rank vs min(n^2, 7n - 7) for every Pi (small n) and sampled Pi",
            replay_fn=rank_measure(threshold_rule, NOT_THRESHOLD),
        ),
        FunctionCheck(
            "search",
            fn_haar_targets,
            (F64,),
            "search",
            "||W(p) - U||_F / (n eps) after Gauss-Newton towards Haar-random U",
        ),
    ),
    notes=(
        "Bound: R(c v) = R(v) for complex c != 0 (2 real directions each for v1, v2); a global phase moves "
        "between D1, D2, D3 (2 directions); and with X = F^-1 D2 Pi, G = X* R2 X R1, K = G - G*, the flow "
        "v1 -> e^(tK) v1, v2 -> X e^(tK) X* v2 conjugates both reflections by a unitary commuting with G, so "
        "R2 X R1 = X G does not move (the seventh direction, a rotation of the two reflection vectors inside "
        "the plane they span). Hence rank <= 7n - 7 everywhere (n >= 2); 7n - 7 < n^2 iff n >= 6. Measured: the "
        "rank equals min(n^2, 7n - 7), so rank n^2 (open set in the image) for n <= 5 and measure zero for "
        "n >= 6. The printed threshold n > 7 is sufficient, not exact. Haar targets reached for small n are "
        "evidence of surjectivity there, not a proof."
    ),
    figures=(RANK_FIGURE,),
)
