"""SO(n) and det (issue 27): a map that declares the group it reaches, O(n) or SO(n).

``orthogonal`` says Q'Q = I, which det -1 satisfies as well as det +1. A target of a real orthogonal
kind that declares ``group="SO(n)"`` (:func:`~orthoverify.isolation.declare.declare`) gets the
``det`` check: at every case ``orthogonal`` draws (every size and magnitude, float32 and float64),
det Q, computed here from the raw output, must be +1 to the allowance. For an orthogonal Q with
Q'Q = I + E, det Q = +-(1 + tr E / 2 + ...), and |tr E| <= sqrt(n) ||E||_F, so the test ratio is
|det Q - 1| / (n sqrt(n) eps kappa): a correct rotation passes wherever ``orthogonal`` does, and a
det -1 output gives about 2 / (n sqrt(n) eps), far past the threshold.

``coverage`` of an ``orthogonal-map`` without an inverse (L-BFGS towards Haar targets of each
determinant) then judges reaching exactly the declared group (:func:`covering`): at a size where
the optimisation settled (it reached some target), a component of the declared group that no
target reached is refuted, with a Haar target of that component that three more L-BFGS starts do
not reach as the counterexample (measured again by the check's own routine before it stands). A
component outside the declared group is not asked for (a det -1 output of an SO(n) map is the
``det`` check's finding).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from orthoverify import samples
from orthoverify.conformance import context as cx
from orthoverify.conformance.context import Ctx, PlanEntry, as_np, failing, inputs_of
from orthoverify.conformance.coverage import measure_coverage
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.conformance.search import scanned
from orthoverify.conformance.target import Target
from orthoverify.engine.allowance import kappa_text
from orthoverify.engine.model import Counterexample, Evidence
from orthoverify.engine.ratios import THRESHOLD, Measure
from orthoverify.isolation.calls import CallFailure
from orthoverify.isolation.declare import declaration_of
from orthoverify.tolerance import unit_roundoff


def q_det(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """|det f(P) - 1| / (n sqrt(n) eps kappa) for a target that declares SO(n)."""
    kappa, skip = cx.allowance(ctx, params, dtype)
    eps = unit_roundoff(dtype)
    if skip is not None:
        return skip
    out = ctx.run(params, dtype)
    if isinstance(out, CallFailure):
        return cx.failed(out)
    q = as_np(out)
    if not np.isfinite(q).all():
        return Measure(math.inf, "the output is not finite")
    det = float(np.linalg.det(q))
    m = q.shape[-1]
    r = abs(det - 1.0) / (m * math.sqrt(m) * eps * kappa)
    return Measure(r, f"det f(P) = {det:.17g}: |det - 1| / (n sqrt(n) eps{kappa_text(kappa)}) = {r:.6g}")


def _declared_group(ctx: Ctx) -> str | None:
    d = declaration_of(ctx.target)
    return d.group if d is not None else None


def judge_group(ctx: Ctx, group: str, ev: Evidence) -> Evidence:
    """``ev`` (coverage by optimisation) judged against the declared ``group``: a component of it
    never reached at a size where the optimisation settled is refuted (see the module's docstring)."""
    wanted = (1, -1) if group == "O(n)" else (1,)
    reached = {(int(n), int(d)): int(r) for n, d, r, _total in ev.data.get("reached", [])}
    ev.data["group"] = group
    comps = " and ".join(f"det {d:+d}" for d in wanted)
    ev.notes = f"{ev.notes}. Declared group {group}: every size where the optimisation settled must reach {comps}"
    rng = ctx.rng("coverage-group")
    for n in sorted({n for n, _d in reached}):
        settled = any(reached.get((n, d), 0) > 0 for d in (1, -1))
        for det in wanted:
            if not settled or reached.get((n, det), 0) > 0:
                continue
            q = samples.haar_orthogonal(rng, n)
            if np.linalg.det(q) * det < 0:
                q[:, 0] *= -1
            m = measure_coverage(ctx, {"Q": q}, "float64")
            if not failing(m):
                ev.notes += f"; a further det {det:+d} target at n = {n} was reached ({m.display})"
                continue
            what = f"declared {group}, but no det {det:+d} target is reached at n = {n}: {m.display}"
            ev.passed = False
            ev.counterexample = Counterexample(
                inputs_of({"Q": q}, "float64"), "f(X) = Q", what, 16, "coverage", THRESHOLD
            )
            ev.notes += f"; refuted: {what}"
            return ev
    return ev


def covering(fn: Callable[[Ctx], list[Evidence]]) -> Callable[[Ctx], list[Evidence]]:
    """The coverage check ``fn`` judged against the target's declared group, where it declares one."""

    def run(ctx: Ctx) -> list[Evidence]:
        group = _declared_group(ctx)
        evidence = fn(ctx)
        if group is None:
            return evidence
        return [judge_group(ctx, group, ev) if "reached" in ev.data else ev for ev in evidence]

    return run


def covering_entry(entry: PlanEntry, target: Target | None) -> PlanEntry:
    """The planned ``coverage`` entry judged against the group ``target`` declares (any other entry,
    or no declared group: unchanged)."""
    d = declaration_of(target) if target is not None else None
    if entry.name != "coverage" or d is None or d.group is None:
        return entry
    statement = f"{entry.statement}; declared group {d.group}: every component of it is reached"
    return entry._replace(statement=statement, run=covering(entry.run))


def plan(kind: Kind, target: Target | None) -> list[PlanEntry]:
    """The ``det`` check, for a real orthogonal kind whose target declares ``group="SO(n)"``."""
    d = declaration_of(target) if target is not None else None
    if d is None or d.group != "SO(n)" or not kind.orthogonal_output or kind.complex_output:
        return []
    statement = (
        "declared group SO(n): every output has det +1 (|det Q - 1| / (n sqrt(n) eps kappa) <= 30), at every size "
        "and magnitude, float32 and float64"
    )
    run = scanned("det", q_det, specials=True)
    return [PlanEntry("det", "bound", statement, run, q_det, measures="|det f(P) - 1| / (n sqrt(n) eps kappa)")]


__all__ = ["covering", "covering_entry", "judge_group", "plan", "q_det"]
