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
from orthoverify.claims.unitary import _rank
from orthoverify.claims.unitary import _shared as kit
from orthoverify.claims.unitary._effort import effort
from orthoverify.engine.checks import Case, FunctionCheck, Outcome, PropertyCheck, RunContext
from orthoverify.engine.ratios import THRESHOLD as RATIO_THRESHOLD
from orthoverify.engine.ratios import Measure, flag, scaled, worst
from orthoverify.param import unitary_rank as ur

NOT_THRESHOLD = "not min(n^2, 7n - 7)"


def q_symmetry_kernel(b: Backend, case: Case) -> Measure:
    """``||J K||_F / (n eps ||J||_F ||K||_F)`` for the seven symmetry directions K (zero in
    exact arithmetic), and K of rank 7 (6 at n = 1, where the reflections are constant)."""
    p = _rank.point_params(b, case)
    j, k = ur.jacobian_analytic(p), ur.symmetry_directions(p)
    ratio = scaled(b.to_float(b.norm(j @ k)) / (b.to_float(b.norm(j)) * b.to_float(b.norm(k))), p.n, b.eps)
    rank, want = ur.jacobian_rank(b, k).rank, 6 if p.n == 1 else 7
    return worst(ratio, flag(rank == want, f"the symmetry directions have rank {rank}, not {want}"))


cases_kernel = _rank.point_cases("kernel", lambda e: e.rank_max_n, lambda e: e.kernel_hp_sizes)


def fn_permutations(ctx: RunContext) -> Outcome:
    """Every fixed Pi for n <= every_pi_max_n, the identity, the reversal and random ones above:
    the rank is min(n^2, 7n - 7) whatever the permutation."""
    e, rng = effort(ctx), ctx.rng("perm")
    families = [(n, list(itertools.permutations(range(n)))) for n in range(1, e.every_pi_max_n + 1)]
    for n, extra in e.sampled_pi:
        perms = [tuple(range(n)), tuple(range(n))[::-1]]
        perms += [tuple(int(i) for i in rng.permutation(n)) for _ in range(extra)]
        families.append((n, perms))
    points = (_rank.point_case(rng, n, perm) for n, perms in families for perm in perms)
    rows, unclear, failure, worst_ratio = _rank.float_ranks(
        ctx, points, _rank.threshold_rule, lambda c, r: f"rank {r} at n = {c['n']}, Pi = {c['perm']}"
    )
    counts: dict[str, dict[str, int]] = {}
    for r in rows:
        tally = counts.setdefault(str(r["n"]), {})
        key = "undecided" if r["rank"] is None else str(r["rank"])
        tally[key] = tally.get(key, 0) + 1
    notes = "; ".join(
        f"n = {n}: {sum(t.values())} permutations, ranks {t} (bound {ur.rank_bound(int(n))})" for n, t in counts.items()
    )
    return Outcome(not unclear and failure is None, len(rows), worst_ratio, failure, notes, {"ranks": counts})


def fn_haar_targets(ctx: RunContext) -> Outcome:
    """Random Haar unitary targets for small n, solved for by Gauss-Newton from random starts:
    reached to a test ratio within the engine's threshold is evidence the image has positive
    measure (a measure-zero image is missed by Haar samples with probability 1) and of
    surjectivity, not a proof."""
    e, rng = effort(ctx), ctx.rng("haar")
    rows: list[dict[str, Any]] = []
    missed: list[str] = []
    for n in e.haar_sizes:
        for _ in range(e.haar_targets):
            u = samples.haar_unitary(rng, n)
            best, tries = math.inf, 0
            while tries < 5 and not best <= RATIO_THRESHOLD:
                tries += 1
                start = _rank.point_case(rng, n)
                _, ratio = ur.urnn_preimage(u, [int(i) for i in str(start["perm"]).split(",")], start["x"])
                best = min(best, ratio)
            rows.append({"n": n, "ratio": best, "starts": tries})
            if not best <= RATIO_THRESHOLD:
                missed.append(f"n = {n} (best ratio {best:.3g})")
    worst_ratio = max((r["ratio"] for r in rows), default=0.0)
    notes = f"{len(rows) - len(missed)} of {len(rows)} Haar targets reached for n in {list(e.haar_sizes)}"
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
        *_rank.rank_checks(
            _rank.threshold_rule,
            NOT_THRESHOLD,
            float_backend=_rank.F64,
            hp_sizes=lambda e: e.threshold_hp_sizes,
            quantities=(
                "rank of the analytic Jacobian vs min(n^2, 7n - 7), n = 1..N",
                "50-digit rank of the analytic Jacobian around the threshold",
            ),
        ),
        PropertyCheck(
            "float",
            q_symmetry_kernel,
            cases_kernel,
            (_rank.F64, _rank.HP),
            "||J K|| / (n eps ||J|| ||K||) for the 7 symmetry directions K, and rank K = 7",
        ),
        FunctionCheck(
            "exhaustive",
            fn_permutations,
            (_rank.F64,),
            "exhaustive",
            "rank vs min(n^2, 7n - 7) for every Pi (small n) and sampled Pi",
            replay_fn=_rank.rank_measure(_rank.threshold_rule, NOT_THRESHOLD),
        ),
        FunctionCheck(
            "search",
            fn_haar_targets,
            (_rank.F64,),
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
    figures=(_rank.RANK_FIGURE,),
)
