"""SO(n) and det (issue 27): a map that declares ``group="SO(n)"`` claims rotations only.

``orthogonal`` says Q'Q = I, which det -1 satisfies as well as det +1. A target of a real orthogonal
kind that declares ``group="SO(n)"`` (:func:`~orthoverify.conformance.declare.declare`) gets the
``det`` check: at every case ``orthogonal`` draws (every size and magnitude, float32 and float64),
det Q, computed here from the raw output, must be +1 to the allowance. For an orthogonal Q with
Q'Q = I + E, det Q = +-(1 + tr E / 2 + ...), and |tr E| <= sqrt(n) ||E||_F, so the test ratio is
|det Q - 1| / (n sqrt(n) eps kappa): a correct rotation passes wherever ``orthogonal`` does, and a
det -1 output gives about 2 / (n sqrt(n) eps), far past the threshold.
"""

from __future__ import annotations

import math

import numpy as np

from orthoverify.conformance import checks as ck
from orthoverify.conformance.calls import CallFailure
from orthoverify.conformance.declare import declaration_of
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.conformance.modes import PlanEntry
from orthoverify.engine.model import Evidence


def q_det(ctx: ck.Ctx, params: Params, dtype: str) -> ck.Case:
    """|det f(P) - 1| / (n sqrt(n) eps kappa) for a target that declares SO(n)."""
    kind = ctx.target.kind
    kappa = ck._kappa(kind, params)
    eps = ck.EPS[ck.DTYPES[dtype]]
    n = ck._size(kind, params)
    if ck._beyond(kappa, eps, n):
        return ck.Case(math.nan, f"kappa = {kappa:.3g}: no digit promised", beyond=True)
    out = ctx.run(params, dtype)
    if isinstance(out, CallFailure):
        return ck.failed(out)
    q = ck.as_np(out)
    if not np.isfinite(q).all():
        return ck.Case(math.inf, "the output is not finite")
    det = float(np.linalg.det(q))
    m = q.shape[-1]
    r = abs(det - 1.0) / (m * math.sqrt(m) * eps * kappa)
    return ck.Case(r, f"det f(P) = {det:.17g}: |det - 1| / (n sqrt(n) eps{ck._kappa_text(kappa)}) = {r:.6g}")


ck.QUANTITIES["det"] = q_det


def check_det(ctx: ck.Ctx) -> list[Evidence]:
    return ck.scan(ctx, "det", ck.sized_cases(ctx, "det", specials=True))


def plan(kind: Kind, target: ck.Target | None) -> list[PlanEntry]:
    """The ``det`` check, for a real orthogonal kind whose target declares ``group="SO(n)"``."""
    d = declaration_of(target) if target is not None else None
    if d is None or d.group != "SO(n)" or not kind.orthogonal_output or kind.complex_output:
        return []
    statement = (
        "declared group SO(n): every output has det +1 (|det Q - 1| / (n sqrt(n) eps kappa) <= 30), at every size "
        "and magnitude, float32 and float64"
    )
    return [("det", "bound", statement, check_det)]


__all__ = ["check_det", "plan", "q_det"]
