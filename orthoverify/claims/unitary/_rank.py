"""The rank machinery of unitary.coverage and unitary.coverage_threshold: points of parameter
space drawn as Sec. 3.4 of Arjovsky et al. initialises the uRNN, the Jacobian of p -> W(p) into
U(n), rank scans over n with a rule saying which ranks the claim allows, their 50-digit
confirmation, and the replay of a rank counterexample. The rank decisions themselves are
:mod:`orthoverify.param.unitary_rank`."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from orthoverify.backends import Array, Backend, get_backend
from orthoverify.claims.unitary._effort import Effort, effort
from orthoverify.engine.checks import Case, FunctionCheck, Outcome, RunContext
from orthoverify.engine.model import Evidence, Plot, PlotSeries
from orthoverify.engine.ratios import THRESHOLD, Measure
from orthoverify.engine.templates import judged
from orthoverify.param import unitary_rank as ur
from orthoverify.param.unitary import URNNParameters, urnn_random

F64 = "numpy-float64"
T64 = "torch-float64"
HP = "mpmath"


def point_case(rng: np.random.Generator, n: int, perm: tuple[int, ...] | None = None) -> dict[str, Any]:
    """A random point as Sec. 3.4 initialises the uRNN (random Pi unless given), flattened."""
    d = urnn_random(rng, n)
    x = np.concatenate([d["w1"], d["w2"], d["w3"], d["v1"][0], d["v1"][1], d["v2"][0], d["v2"][1]])
    p = d["perm"] if perm is None else list(perm)
    return {"n": n, "x": x, "perm": ",".join(str(int(i)) for i in p)}


def point_cases(
    salt: str, float_max: Callable[[Effort], int], hp_sizes: Callable[[Effort], tuple[int, ...]]
) -> Callable[[RunContext], Iterator[Case]]:
    """One random point per n: n = 1..float_max(e) in float, hp_sizes(e) at 50 digits."""

    def gen(ctx: RunContext) -> Iterator[Case]:
        e = effort(ctx)
        rng = ctx.rng(salt)
        sizes = range(1, float_max(e) + 1) if ctx.backend.method == "float" else hp_sizes(e)
        for n in sizes:
            yield point_case(rng, n)

    return gen


def point_params(b: Backend, case: Case) -> URNNParameters:
    """The case's parameters on backend b (decimal strings are parsed exactly)."""
    perm = [int(i) for i in str(case["perm"]).split(",")]
    return ur.urnn_from_flat(b.asarray(case["x"], name="x"), perm, backend=b)


def float_jacobian(b: Backend, case: Case) -> Array:
    """torch autograd on torch backends, the analytic derivative elsewhere."""
    p = point_params(b, case)
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


def dropped_ratio(dec: ur.RankDecision) -> float:
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


RankRule = Callable[[int, int], bool]
"""Whether a (n, rank) pair is what the claim says (True) or breaks it (False)."""


def coverage_rule(n: int, rank: int) -> bool:
    return n <= 7 or rank < n * n


def threshold_rule(n: int, rank: int) -> bool:
    return rank == ur.rank_bound(n)


def rank_measure(rule: RankRule, what: str) -> Callable[[Mapping[str, Any], Backend], Measure]:
    """The replay of a rank counterexample: the rank on b's arithmetic, flagged against the rule."""

    def replay(inputs: Mapping[str, Any], b: Backend) -> Measure:
        p = point_params(b, inputs)
        n, dec = p.n, ur.jacobian_rank(b, ur.jacobian_analytic(p))
        if dec.rank is None:
            return judged(True, f"no clear rank gap at n = {n} (undecided)")
        return judged(rule(n, dec.rank), f"rank {dec.rank} at n = {n}", f"fails: rank {dec.rank} at n = {n} ({what})")

    return replay


Failure = tuple[Case, Measure]


def float_ranks(
    ctx: RunContext, points: Iterable[Case], rule: RankRule, broken: Callable[[Case, int], str]
) -> tuple[list[dict[str, Any]], list[str], Failure | None, float]:
    """The float rank (:func:`float_jacobian`) at each point on ctx's backend: the table's rows,
    the points without a clear singular-value gap (undecided), the first decided rank the rule
    refuses (its value ``broken(case, rank)``) and the largest dropped singular value's ratio."""
    rows: list[dict[str, Any]] = []
    unclear: list[str] = []
    failure: Failure | None = None
    worst_ratio = 0.0
    for case in points:
        n = int(case["n"])
        dec = ur.jacobian_rank(ctx.backend, float_jacobian(ctx.backend, case))
        rows.append(_row(n, dec, str(case["perm"])))
        worst_ratio = max(worst_ratio, dropped_ratio(dec))
        if dec.rank is None:
            unclear.append(f"n = {n} (gap {dec.gap:.3g})")
        elif failure is None and not rule(n, dec.rank):
            failure = (case, Measure(math.inf, broken(case, dec.rank), error=math.inf))
    return rows, unclear, failure, worst_ratio


def rank_scan(ctx: RunContext, rule: RankRule, what: str) -> Outcome:
    """The rank at random points for n = 1..rank_max_n on ctx's backend; every decision must
    be clear and obey the rule."""
    e, rng = effort(ctx), ctx.rng("rank")
    points = (point_case(rng, n) for n in range(1, e.rank_max_n + 1) for _ in range(e.rank_points))
    rows, unclear, failure, worst_ratio = float_ranks(
        ctx, points, rule, lambda c, r: f"rank {r} at n = {c['n']} ({what})"
    )
    notes = _summary(rows) + "; rank bound min(n^2, 7n - 7) (n >= 2) from seven symmetry directions"
    if unclear:
        notes = "no clear singular-value gap (rank undecided) at " + ", ".join(unclear) + "; " + notes
    data = {"table": rows, "min_gap": min((r["gap"] for r in rows), default=math.inf)}
    return Outcome(not unclear and failure is None, len(rows), worst_ratio, failure, notes, data)


def hp_confirm(ctx: RunContext, sizes: tuple[int, ...], float_name: str, rule: RankRule, what: str) -> Outcome:
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
        case = point_case(rng, n)
        d64 = ur.jacobian_rank(fb, float_jacobian(fb, case))
        dhp = ur.jacobian_rank(hp, ur.jacobian_analytic(point_params(hp, case)))
        k = dhp.rank if dhp.rank is not None else 0
        weyl = max((abs(a - c) for a, c in zip(dhp.relative[:k], d64.relative[:k], strict=True)), default=0.0)
        weyl_ratio = weyl / (max(d64.rows, d64.cols) * d64.eps)
        worst_ratio = max(worst_ratio, weyl_ratio, dropped_ratio(dhp))
        extra = {"float64_rank": d64.rank, "float64_gap": d64.gap, "digits": hp.digits, "weyl_ratio": weyl_ratio}
        rows.append(_row(n, dhp, str(case["perm"])) | extra)
        if dhp.rank is None or dhp.rank != d64.rank:
            problems.append(f"n = {n}: rank {dhp.rank} at {hp.digits} digits vs {d64.rank} in float64")
        elif not weyl_ratio <= THRESHOLD:
            problems.append(f"n = {n}: retained singular values moved (ratio {weyl_ratio:.3g})")
        elif failure is None and not rule(n, dhp.rank):
            failure = (case, Measure(math.inf, f"rank {dhp.rank} at n = {n} ({what})", error=math.inf))
    notes = "; ".join(
        f"n = {r['n']}: rank {r['rank']} of n^2 = {r['n2']}, gap {r['gap']:.3g} at {r['digits']} digits "
        f"(float64 gap {r['float64_gap']:.3g})"
        for r in rows
    )
    if problems:
        notes = "; ".join(problems) + "; " + notes
    return Outcome(not problems and failure is None, len(rows), worst_ratio, failure, notes, {"table": rows})


def rank_checks(
    rule: RankRule,
    what: str,
    *,
    float_backend: str,
    hp_sizes: Callable[[Effort], tuple[int, ...]],
    quantities: tuple[str, str],
) -> tuple[FunctionCheck, FunctionCheck]:
    """The rank at random points for n = 1..N on ``float_backend`` (``jacobian_rank``) and its
    50-digit confirmation at ``hp_sizes`` (``rank_50_digits``), both judged by ``rule`` and
    replayed through :func:`rank_measure`. Bespoke procedures, not templates: a rank decision can
    be undecided (no clear singular-value gap), which fails the check without a counterexample,
    and the scan's table is what the report plots."""
    replay = rank_measure(rule, what)
    return (
        FunctionCheck(
            "jacobian_rank",
            lambda ctx: rank_scan(ctx, rule, what),
            (float_backend,),
            "float",
            quantities[0],
            replay_fn=replay,
        ),
        FunctionCheck(
            "jacobian_rank_50_digits",
            lambda ctx: hp_confirm(ctx, hp_sizes(effort(ctx)), float_backend, rule, what),
            (HP,),
            "high-precision",
            quantities[1],
            replay_fn=replay,
        ),
    )


def rank_series(evidence: Sequence[Evidence]) -> list[PlotSeries]:
    """The generic rank measured by each ``jacobian_rank`` evidence (the minimum over the sampled
    points and permutations at each n), then n^2, the parameter count 7n and the bound 7n - 7 at
    those n (reference series)."""
    out: list[PlotSeries] = []
    ns: set[int] = set()
    for ev in evidence:
        if ev.check != "jacobian_rank":
            continue
        per: dict[int, int] = {}
        for row in ev.data.get("table") or []:
            if isinstance(row, dict) and row.get("rank") is not None:
                n = int(row["n"])
                per[n] = min(per.get(n, 10**9), int(row["rank"]))
        if per:
            xs = sorted(per)
            out.append(PlotSeries(f"measured rank ({ev.backend})", xs, [per[n] for n in xs], "points"))
            ns |= set(per)
    if not out:
        return out
    xs = sorted(ns)
    out.append(PlotSeries("n² = dim U(n)", xs, [n * n for n in xs], "line", dashed=True, reference=True))
    out.append(PlotSeries("7n parameters", xs, [7 * n for n in xs], "line", dashed=True, reference=True))
    out.append(PlotSeries("7n − 7", xs, [max(7 * n - 7, 1) for n in xs], "line", reference=True))
    return out


RANK_FIGURE = Plot(
    ident="urnn-rank",
    kind="line",
    title="uRNN: Jacobian rank of the map to U(n) against n²",
    caption=(
        "The generic rank of the uRNN parametrisation's Jacobian (minimum over the sampled points and "
        "permutations) meets n² up to n = 5 and then follows 7n − 7, below n² from n = 6: the image has measure "
        "zero in U(n) there (unitary.coverage_threshold)."
    ),
    x_label="n",
    y_label="dimension",
    log_y=True,
    series=rank_series,
)
"""The figure of the rank checks (:func:`rank_checks`); the claims that run them declare it."""
