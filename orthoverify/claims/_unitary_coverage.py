"""unitary.coverage: does the uRNN composition reach all of U(n)? (key ``unitary``)

001 Sec. 2 (after Wisdom et al. 2016) says ``W = D3 R2 F^-1 D2 Pi R1 F D1`` (Arjovsky et al.
Sec. 2; 7n real parameters) cannot span U(n) when n > 7. Evidence: the rank of the map's
Jacobian into U(n) (:mod:`orthoverify.param.unitary_rank`), by torch autograd and by the
factors' analytic derivatives (cross-checked, and against 50-digit central differences),
decided from singular values with a clear gap and confirmed in 50-digit arithmetic. A map
whose rank is below ``n^2 = dim U(n)`` everywhere has an image of measure zero (Sard), so it
misses almost all of U(n); rank n^2 at one point puts an open set in the image. Seven
directions of parameter space never move W (:func:`~orthoverify.param.unitary_rank.symmetry_directions`),
so the rank is at most ``7n - 7`` (n >= 2): one below the ``7n - 6`` the obvious symmetries
give. The measured generic rank is ``min(n^2, 7n - 7)``: measure zero already from n = 6, so
the printed threshold (n > 7, from counting 7n against n^2) is not the exact one, and
``unitary.coverage_threshold`` (added) states and checks the exact one.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from orthoverify import samples
from orthoverify.backends import Array, Backend, get_backend
from orthoverify.engine.checks import Case, FunctionCheck, Outcome, PropertyCheck, RunContext
from orthoverify.engine.model import Claim
from orthoverify.engine.ratios import Measure, agreement, flag, scaled, worst
from orthoverify.engine.reference import fd_eps
from orthoverify.param import unitary_rank as ur
from orthoverify.param.unitary import URNNParameters, urnn_random

PAPER = "unitary"
F64 = "numpy-float64"
T64 = "torch-float64"
HP = "mpmath"


@dataclass(frozen=True)
class _Plan:
    """How much each check does on one profile."""

    float_max: int  # rank for n = 1..float_max
    float_cases: int  # random points per n
    agree_max: int  # autograd vs analytic for n = 1..agree_max
    cd_sizes: tuple[int, ...]  # analytic vs 50-digit central differences
    kernel_hp: tuple[int, ...]  # symmetry directions at 50 digits
    coverage_hp: tuple[int, ...]  # 50-digit rank, n > 7
    threshold_hp: tuple[int, ...]  # 50-digit rank around the exact threshold
    perm_all: int  # every permutation for n <= perm_all
    perm_sampled: tuple[tuple[int, int], ...]  # (n, random permutations) besides identity and reversal
    haar_sizes: tuple[int, ...]
    haar_targets: int


_PLANS: dict[str, _Plan] = {
    "quick": _Plan(10, 1, 8, (2, 3), (3, 6), (8,), (5, 6), 5, ((6, 4),), (2, 3), 2),
    "default": _Plan(16, 2, 16, (2, 3), (3, 6, 8), (8, 9), (5, 6, 7), 5, ((6, 30), (7, 4), (8, 4)), (2, 3, 4, 5), 3),
    "thorough": _Plan(
        20, 4, 20, (2, 3, 4), (3, 6, 8, 9), (8, 9, 10), (4, 5, 6, 7), 6, ((7, 20), (8, 20)), (2, 3, 4, 5), 8
    ),
}


def _plan(ctx: RunContext) -> _Plan:
    return _PLANS.get(ctx.profile.name, _PLANS["default"])


# =============================================================================== points
def _case(rng: np.random.Generator, n: int, perm: tuple[int, ...] | None = None) -> dict[str, Any]:
    """A random point as Sec. 3.4 initialises the uRNN (random Pi unless given), flattened."""
    d = urnn_random(rng, n)
    x = np.concatenate([d["w1"], d["w2"], d["w3"], d["v1"][0], d["v1"][1], d["v2"][0], d["v2"][1]])
    p = d["perm"] if perm is None else list(perm)
    return {"n": n, "x": x, "perm": ",".join(str(int(i)) for i in p)}


def _params(b: Backend, case: Case) -> URNNParameters:
    """The case's parameters on backend b (decimal strings are parsed exactly)."""
    perm = [int(i) for i in str(case["perm"]).split(",")]
    return ur.urnn_from_flat(b.asarray(case["x"], name="x"), perm, backend=b)


def _float_jacobian(b: Backend, case: Case) -> Array:
    """torch autograd on torch backends, the analytic derivative elsewhere."""
    p = _params(b, case)
    return ur.jacobian_autograd(p) if b.family == "torch" else ur.jacobian_analytic(p)


def _row(n: int, dec: ur.RankDecision, perm: str) -> dict[str, Any]:
    return {
        "n": n,
        "rank": dec.rank,
        "n2": n * n,
        "params": 7 * n,
        "bound_7n_minus_6": min(n * n, 7 * n - 6),
        "bound": ur.rank_bound(n),
        "gap": dec.gap,
        "margin": dec.margin,
        "smallest_retained": dec.smallest_retained,
        "largest_dropped": dec.largest_dropped,
        "perm": perm,
    }


def _dropped_ratio(dec: ur.RankDecision) -> float:
    """The largest dropped singular value as a test ratio ``s / (max(rows, cols) eps s_1)``."""
    return dec.largest_dropped / (max(dec.rows, dec.cols) * dec.eps)


def _ranges(ns: list[int]) -> str:
    """``[1, 2, 3, 5]`` as ``1-3, 5``."""
    out: list[str] = []
    for _, grp in itertools.groupby(enumerate(sorted(set(ns))), key=lambda t: t[1] - t[0]):
        g = [v for _, v in grp]
        out.append(str(g[0]) if len(g) == 1 else f"{g[0]}-{g[-1]}")
    return ", ".join(out) or "none"


def _summary(rows: list[dict[str, Any]]) -> str:
    """Which n reach an open set of U(n) and which have a measure-zero image, from the table."""
    full = sorted({r["n"] for r in rows if r["rank"] == r["n2"]})
    low = sorted({r["n"] for r in rows if r["rank"] is not None and r["rank"] < r["n2"]})
    text = (
        f"rank n^2 (the image contains an open set of U(n)) for n = {_ranges(full)}; "
        f"rank < n^2 (image of measure zero, so not all of U(n)) for n = {_ranges(low)}"
    )
    if low and (not full or max(full) < min(low)):
        first = min(low)
        sharp = "exact" if first == 8 else f"not exact: the image is already of measure zero from n = {first}"
        text += f"; the printed threshold n > 7 is {sharp}"
    return text


# =============================================================================== rank checks
RankRule = Callable[[int, int], bool]
"""Whether a (n, rank) pair is what the claim says (True) or breaks it (False)."""


def _coverage_rule(n: int, rank: int) -> bool:
    return n <= 7 or rank < n * n


def _threshold_rule(n: int, rank: int) -> bool:
    return rank == ur.rank_bound(n)


def _rank_measure(rule: RankRule, what: str) -> Callable[[Mapping[str, Any], Backend], Measure]:
    """The replay of a rank counterexample: the rank on b's arithmetic, flagged against the rule."""

    def replay(inputs: Mapping[str, Any], b: Backend) -> Measure:
        p = _params(b, inputs)
        dec = ur.jacobian_rank(b, ur.jacobian_analytic(p))
        n = p.n
        if dec.rank is None:
            return Measure(0.0, f"no clear rank gap at n = {n} (undecided)", error=0.0)
        m = flag(rule(n, dec.rank), f"rank {dec.rank} at n = {n} ({what})")
        return Measure(m.ratio, f"rank {dec.rank} at n = {n}" if m.ratio == 0 else m.value, error=m.error)

    return replay


def _rank_scan(ctx: RunContext, rule: RankRule, what: str) -> Outcome:
    """The rank at random points for n = 1..float_max on ctx's backend; every decision must
    be clear and obey the rule."""
    plan = _plan(ctx)
    rng = ctx.rng("rank")
    rows: list[dict[str, Any]] = []
    unclear: list[str] = []
    failure: tuple[Case, Measure] | None = None
    worst_ratio = 0.0
    for n in range(1, plan.float_max + 1):
        for _ in range(plan.float_cases):
            case = _case(rng, n)
            dec = ur.jacobian_rank(ctx.backend, _float_jacobian(ctx.backend, case))
            rows.append(_row(n, dec, str(case["perm"])))
            worst_ratio = max(worst_ratio, _dropped_ratio(dec))
            if dec.rank is None:
                unclear.append(f"n = {n} (gap {dec.gap:.3g})")
            elif not rule(n, dec.rank) and failure is None:
                failure = (case, Measure(math.inf, f"rank {dec.rank} at n = {n} ({what})", error=math.inf))
    notes = _summary(rows) + "; rank bound min(n^2, 7n - 7) (n >= 2) from seven symmetry directions"
    if unclear:
        notes = "no clear singular-value gap (rank undecided) at " + ", ".join(unclear) + "; " + notes
    data = {"table": rows, "min_gap": min((r["gap"] for r in rows), default=math.inf)}
    return Outcome(not unclear and failure is None, len(rows), worst_ratio, failure, notes, data)


def fn_coverage_rank(ctx: RunContext) -> Outcome:
    """The autograd rank for n = 1..N: below n^2 for every n > 7 (the claim as printed)."""
    return _rank_scan(ctx, _coverage_rule, "rank n^2 for n > 7: an open set of U(n) is reached")


def fn_threshold_rank(ctx: RunContext) -> Outcome:
    """The analytic rank for n = 1..N: exactly min(n^2, 7n - 7) (the exact threshold)."""
    return _rank_scan(ctx, _threshold_rule, "not min(n^2, 7n - 7)")


def _hp_confirm(ctx: RunContext, sizes: tuple[int, ...], float_name: str, rule: RankRule, what: str) -> Outcome:
    """At random points for each n: the float64 rank (on ``float_name``) and the 50-digit
    analytic rank agree, values declared zero fall to the 50-digit rounding floor, retained
    ones stay put (Weyl: ``|s_hp - s_64| <= ||J_hp - J_64||``, a test ratio against float64),
    and the rank obeys the rule."""
    hp = ctx.backend
    fb = get_backend(float_name)
    rng = ctx.rng("hp")
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    failure: tuple[Case, Measure] | None = None
    worst_ratio = 0.0
    for n in sizes:
        case = _case(rng, n)
        d64 = ur.jacobian_rank(fb, _float_jacobian(fb, case))
        dhp = ur.jacobian_rank(hp, ur.jacobian_analytic(_params(hp, case)))
        k = dhp.rank if dhp.rank is not None else 0
        weyl = max((abs(a - c) for a, c in zip(dhp.relative[:k], d64.relative[:k], strict=True)), default=0.0)
        weyl_ratio = weyl / (max(d64.rows, d64.cols) * d64.eps)
        worst_ratio = max(worst_ratio, weyl_ratio, _dropped_ratio(dhp))
        row = _row(n, dhp, str(case["perm"]))
        row.update({"float64_rank": d64.rank, "float64_gap": d64.gap, "digits": hp.digits, "weyl_ratio": weyl_ratio})
        rows.append(row)
        if dhp.rank is None or dhp.rank != d64.rank:
            problems.append(f"n = {n}: rank {dhp.rank} at {hp.digits} digits vs {d64.rank} in float64")
        elif not weyl_ratio <= 30:
            problems.append(f"n = {n}: retained singular values moved (ratio {weyl_ratio:.3g})")
        elif not rule(n, dhp.rank) and failure is None:
            failure = (case, Measure(math.inf, f"rank {dhp.rank} at n = {n} ({what})", error=math.inf))
    notes = "; ".join(
        f"n = {r['n']}: rank {r['rank']} of n^2 = {r['n2']}, gap {r['gap']:.3g} at {r['digits']} digits "
        f"(float64 gap {r['float64_gap']:.3g})"
        for r in rows
    )
    if problems:
        notes = "; ".join(problems) + "; " + notes
    return Outcome(not problems and failure is None, len(rows), worst_ratio, failure, notes, {"table": rows})


def fn_coverage_hp(ctx: RunContext) -> Outcome:
    plan = _plan(ctx)
    return _hp_confirm(ctx, plan.coverage_hp, T64, _coverage_rule, "rank n^2 for n > 7")


def fn_threshold_hp(ctx: RunContext) -> Outcome:
    plan = _plan(ctx)
    return _hp_confirm(ctx, plan.threshold_hp, F64, _threshold_rule, "not min(n^2, 7n - 7)")


# =============================================================================== Jacobian agreement
def q_jacobian_agreement(b: Backend, case: Case) -> Measure:
    """torch: autograd vs the analytic Jacobian, ``||J_ad - J_an||_F / (n eps ||J_an||_F)``;
    other arithmetic: the analytic Jacobian vs central differences, error over ``n fd_eps``."""
    p = _params(b, case)
    n = p.n
    if b.family == "torch":  # the analytic form in NumPy float64 (the same arithmetic, less overhead)
        ref = ur.jacobian_analytic(_params(get_backend(F64), case))
        return agreement(b, ur.jacobian_autograd(p), b.asarray(ref), n)
    ja = ur.jacobian_analytic(p)
    err = b.to_float(b.norm(ur.jacobian_central(p) - ja)) / b.to_float(b.norm(ja))
    return scaled(err, n, fd_eps(b))


def cases_agreement(ctx: RunContext) -> Iterator[Case]:
    plan = _plan(ctx)
    rng = ctx.rng("agree")
    sizes = range(1, plan.agree_max + 1) if ctx.backend.method == "float" else plan.cd_sizes
    for n in sizes:
        yield _case(rng, n)


# =============================================================================== symmetry directions
def q_symmetry_kernel(b: Backend, case: Case) -> Measure:
    """``||J K||_F / (n eps ||J||_F ||K||_F)`` for the seven symmetry directions K (zero in
    exact arithmetic), and K of rank 7 (6 at n = 1, where the reflections are constant)."""
    p = _params(b, case)
    n = p.n
    j = ur.jacobian_analytic(p)
    k = ur.symmetry_directions(p)
    scale = b.to_float(b.norm(j)) * b.to_float(b.norm(k))
    jk = b.to_float(b.norm(j @ k))
    ratio = scaled(jk / scale, n, b.eps)
    kdec = ur.jacobian_rank(b, k)
    want = 6 if n == 1 else 7
    return worst(ratio, flag(kdec.rank == want, f"the symmetry directions have rank {kdec.rank}, not {want}"))


def cases_kernel(ctx: RunContext) -> Iterator[Case]:
    plan = _plan(ctx)
    rng = ctx.rng("kernel")
    sizes = range(1, plan.float_max + 1) if ctx.backend.method == "float" else plan.kernel_hp
    for n in sizes:
        yield _case(rng, n)


# =============================================================================== permutations
def fn_permutations(ctx: RunContext) -> Outcome:
    """Every fixed Pi for n <= perm_all, the identity, the reversal and random ones above:
    the rank is min(n^2, 7n - 7) whatever the permutation."""
    plan = _plan(ctx)
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
            case = _case(rng, n, perm)
            dec = ur.jacobian_rank(b, _float_jacobian(b, case))
            cases += 1
            worst_ratio = max(worst_ratio, _dropped_ratio(dec))
            key = "undecided" if dec.rank is None else str(dec.rank)
            tally[key] = tally.get(key, 0) + 1
            if dec.rank is None:
                unclear += 1
            elif not _threshold_rule(n, dec.rank) and failure is None:
                failure = (case, Measure(math.inf, f"rank {dec.rank} at n = {n}, Pi = {case['perm']}", error=math.inf))
    notes = "; ".join(
        f"n = {n}: {sum(t.values())} permutations, ranks {t} (bound {ur.rank_bound(int(n))})" for n, t in counts.items()
    )
    return Outcome(unclear == 0 and failure is None, cases, worst_ratio, failure, notes, {"ranks": counts})


# =============================================================================== Haar targets
def fn_haar_targets(ctx: RunContext) -> Outcome:
    """Random Haar unitary targets for small n, solved for by Gauss-Newton from random starts:
    reached to a test ratio <= 30 is evidence the image has positive measure (a measure-zero
    image is missed by Haar samples with probability 1) and of surjectivity, not a proof."""
    plan = _plan(ctx)
    rng = ctx.rng("haar")
    rows: list[dict[str, Any]] = []
    missed: list[str] = []
    for n in plan.haar_sizes:
        for _ in range(plan.haar_targets):
            u = samples.haar_unitary(rng, n)
            best, tries = math.inf, 0
            while tries < 5 and not best <= 30:
                tries += 1
                start = _case(rng, n)
                _, ratio = ur.urnn_preimage(u, [int(i) for i in str(start["perm"]).split(",")], start["x"])
                best = min(best, ratio)
            rows.append({"n": n, "ratio": best, "starts": tries})
            if not best <= 30:
                missed.append(f"n = {n} (best ratio {best:.3g})")
    worst_ratio = max((r["ratio"] for r in rows), default=0.0)
    notes = f"{len(rows) - len(missed)} of {len(rows)} Haar targets reached for n in {list(plan.haar_sizes)}"
    if missed:
        notes += "; not reached (a failed search, not a counterexample): " + ", ".join(missed)
    return Outcome(not missed, len(rows), worst_ratio, None, notes, {"targets": rows})


# =============================================================================== claims
COVERAGE = Claim(
    id="unitary.coverage",
    paper=PAPER,
    where="001 Sec. 2; Wisdom et al. 2016",
    kind="coverage",
    statement=(
        "the uRNN parametrisation W = D3 R2 F^-1 D2 Pi R1 F D1 (7n real parameters) does not allow the "
        "transition matrix to span the full unitary group U(n) when n > 7"
    ),
    checks=(
        FunctionCheck(
            "jacobian_rank",
            fn_coverage_rank,
            (T64,),
            "float",
            "rank of dW (tangent coordinates of W* dW) by autograd, n = 1..N",
            replay_fn=_rank_measure(_coverage_rule, "rank n^2 for n > 7"),
        ),
        FunctionCheck(
            "rank_50_digits",
            fn_coverage_hp,
            (HP,),
            "high-precision",
            "50-digit rank of the analytic Jacobian, n > 7",
            replay_fn=_rank_measure(_coverage_rule, "rank n^2 for n > 7"),
        ),
        PropertyCheck(
            "jacobian_agreement",
            q_jacobian_agreement,
            cases_agreement,
            (T64, HP),
            "||J_autograd - J_analytic|| / (n eps ||J||); 50 digits: analytic vs central differences / (n fd_eps)",
        ),
    ),
    notes=(
        "Jacobian of p -> W(p) in tangent coordinates of U(n) (n^2 of them) at random points drawn as Sec. 3.4 "
        "initialises the uRNN, random Pi. Rank n^2 at a point <=> the image contains an open set; rank < n^2 at "
        "generic points means rank < n^2 everywhere (the rank of an analytic map is maximal on an open dense set), "
        "so the image has measure zero (Sard) and is not U(n). For n > 7 this already follows from 7n < n^2; the "
        "checks measure the rank for every n and see it is min(n^2, 7n - 7): deficient from n = 6 on (see "
        "unitary.coverage_threshold)."
    ),
)

THRESHOLD = Claim(
    id="unitary.coverage_threshold",
    paper=PAPER,
    where="added; 001 Sec. 2; Wisdom et al. 2016",
    kind="coverage",
    statement=(
        "(added) for every fixed permutation Pi, the image of W = D3 R2 F^-1 D2 Pi R1 F D1 contains an open set "
        "of U(n) exactly when n <= 5: the Jacobian into U(n) has rank n^2 at generic points for n <= 5, and for "
        "n >= 6 rank at most 7n - 7 < n^2 everywhere (generic rank min(n^2, 7n - 7)), so the image has measure "
        "zero and W does not reach all of U(n) already for n = 6 and 7"
    ),
    checks=(
        FunctionCheck(
            "jacobian_rank",
            fn_threshold_rank,
            (F64,),
            "float",
            "rank of the analytic Jacobian vs min(n^2, 7n - 7), n = 1..N",
            replay_fn=_rank_measure(_threshold_rule, "not min(n^2, 7n - 7)"),
        ),
        FunctionCheck(
            "rank_50_digits",
            fn_threshold_hp,
            (HP,),
            "high-precision",
            "50-digit rank of the analytic Jacobian around the threshold",
            replay_fn=_rank_measure(_threshold_rule, "not min(n^2, 7n - 7)"),
        ),
        PropertyCheck(
            "symmetry_kernel",
            q_symmetry_kernel,
            cases_kernel,
            (F64, HP),
            "||J K|| / (n eps ||J|| ||K||) for the 7 symmetry directions K, and rank K = 7",
        ),
        FunctionCheck(
            "permutations",
            fn_permutations,
            (F64,),
            "exhaustive",
            "rank vs min(n^2, 7n - 7) for every Pi (small n) and sampled Pi",
            replay_fn=_rank_measure(_threshold_rule, "not min(n^2, 7n - 7)"),
        ),
        FunctionCheck(
            "haar_targets",
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
)

COVERAGE_CLAIMS: list[Claim] = [COVERAGE, THRESHOLD]
CLAIMS = COVERAGE_CLAIMS
