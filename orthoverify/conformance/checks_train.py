"""The derivative checks of a target, one table row each: the gradient and forward mode in float64,
float32 and the half-precision dtypes it declares, the three second-order modes in float64 and
float32, and the gradient through a batch (the gradients people train with, issue 27).

Each row is a derivative and a dtype; its quantity is :func:`~orthoverify.conformance.derivatives.quantity`
(one measure per derivative order, parametrised by dtype and substitute), its cases every size of the
kind at magnitude 1 (the quick profile: every other size; the float64 gradient and jvp: every size),
and its statement one of :data:`_STATEMENTS`. In float32 the ratio is on n eps32 kappa (the allowance,
:attr:`~orthoverify.conformance.kinds.Kind.allowance`), in a declared float16 or bfloat16 on the
dtype's own unit roundoff (2^-11, 2^-8) times n kappa, at parameters (and G and v) rounded to it.
``gradient_batch`` stacks three parameter sets, each with its own upstream gradient G_i, and
compares the batch's gradient with the three gradients of single calls (two computations, each
allowed its own rounding: 2 n eps kappa), whether or not the target declares ``vmap``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from orthoverify.conformance.context import Ctx, PlanEntry, Quantity, _kappa, failed, refusal
from orthoverify.conformance.derivatives import HALF, SECOND_ORDER, _loss_grad, _project, distance, quantity, split
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.conformance.quantities import same_shape_sets, stacked
from orthoverify.conformance.search import scan, sized_cases, with_series
from orthoverify.conformance.target import Target
from orthoverify.engine.model import Evidence
from orthoverify.engine.ratios import Measure
from orthoverify.isolation.calls import CallFailure
from orthoverify.isolation.declare import declaration_of
from orthoverify.isolation.wire import op_forward
from orthoverify.tolerance import unit_roundoff


def q_gradient_batch(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """Three parameter sets stacked, each with its own G_i: the batch's gradient of
    sum_i sum(f(P_i) * G_i) against the single calls' gradients, max_i ||g_batch[i] - g_i|| /
    (2 n eps kappa ||g_i||); not applicable to a target that does not take stacked parameters."""
    kind = ctx.target.kind
    sets = same_shape_sets(kind, params, ctx.rng("gradient_batch", dtype))
    gs = [np.random.default_rng(7 + i).standard_normal(kind.view_shape(s)) for i, s in enumerate(sets)]
    singles = []
    for s, g in zip(sets, gs, strict=True):
        one = _loss_grad(ctx, s, dtype, g)
        if isinstance(one, CallFailure):
            return refusal(one, "backward") if one.kind == "raised" else failed(one, "single backward: ")
        singles.append(_project(kind, one))
    out = stacked(ctx, op_forward, sets, dtype)
    if isinstance(out, CallFailure) and out.kind in ("not-run", "died", "timeout"):
        return failed(out, "batched call: ")
    if isinstance(out, CallFailure):
        return Measure(math.nan, f"the target does not take stacked parameters: {out}")
    batched = {k: np.stack([np.asarray(s[k], np.float64) for s in sets]) for k in params}
    got = _loss_grad(ctx, batched, dtype, np.stack(gs))
    if isinstance(got, CallFailure):
        if got.kind == "raised":
            return refusal(got, "backward through stacked parameters")
        return failed(got, "batched backward: ")
    batch = _project(kind, got)
    worst, at = 0.0, 0
    for i, (s, one) in enumerate(zip(sets, singles, strict=True)):
        num, scale = distance({k: batch[k][i] for k in one}, one)
        r = num / (2 * kind.view_shape(s)[0] * unit_roundoff(dtype) * _kappa(kind, s) * scale)
        if not r <= worst:
            worst, at = r, i
    return Measure(
        worst,
        f"max_i ||batch gradient[i] - gradient of the single call i|| / (2 n eps kappa ||single||) = {worst:.6g} "
        f"(worst at i = {at} of {len(sets)}, each with its own upstream gradient G_i)",
    )


_LOW = "{declared}in {dtype} the target's {claim} ({how}) to {dtype}'s allowance (n {unit} kappa{u}, test ratio <= 30)"
_STATEMENTS: dict[str, tuple[str, str]] = {  # (derivative, "64"/"low") -> statement, measures
    "gradient 64": (
        "the target's backward gives the gradient of sum(f(P) * G) (against {central})",
        "||gradient - reference gradient||_F / (n eps ||reference gradient||_F)",
    ),
    "jvp 64": (
        "the target's forward-mode derivative (torch.func.jvp) along a random direction equals the directional "
        "derivative ({central}); unsupported when the target declines forward mode with an exception",
        "||jvp - reference directional derivative||_F / (n eps ||reference directional derivative||_F)",
    ),
    "gradient low": (
        _LOW.replace("{claim}", "backward gives the gradient of sum(f(P) * G)"),
        "||{dtype} gradient - reference gradient||_F / (n {unit} kappa ||reference gradient||_F){u}",
    ),
    "jvp low": (
        _LOW.replace("{claim}", "forward mode (torch.func.jvp) gives the directional derivative")
        + "; unsupported when it declines forward mode",
        "||{dtype} jvp - reference directional derivative||_F / (n {unit} kappa ||reference||_F){u}",
    ),
    "second 64": (
        "the target's second derivative v'Hw of sum(f(P) * G) by {what} equals {four}; unsupported when the "
        "target declines this mode with an exception",
        "|v'Hw - reference v'Hw| / max(n eps ||G|| ||D2f[v,w]||, the target's own rounding noise)",
    ),
    "second low": (
        "in float32 the target's second derivative v'Hw of sum(f(P) * G) by {what} equals the float64 reference's "
        "({how}) to float32's allowance (n eps32 kappa ||G|| ||D2f[v,w]||, test ratio <= 30); unsupported when "
        "the target declines this mode with an exception",
        "|float32 v'Hw - reference v'Hw| / max(n eps32 kappa ||G|| ||D2f[v,w]||, its own rounding noise)",
    ),
    "gradient_batch 64": (
        "the gradient through parameters stacked on a leading axis (each with its own upstream gradient) equals "
        "the single calls' gradients (2 n eps kappa, test ratio <= 30); not applicable to a target that does not "
        "take stacks",
        "max_i ||batched gradient[i] - gradient g_i of call i||_F / (2 n eps kappa ||g_i||_F)",
    ),
}
"""The statement and the measured ratio of each derivative check, by derivative and precision."""


def _runner(name: str, q: Quantity) -> Callable[[Ctx], list[Evidence]]:
    """The check ``name`` over its cases (series and smallest counterexample for second order)."""
    base, dtype = split(name)

    def run(ctx: Ctx) -> list[Evidence]:
        kind = ctx.target.kind  # every size for the float64 gradient and jvp, else every other on quick
        every = base in ("gradient", "jvp") and dtype == "float64"
        sizes = ctx.profile.pick(kind.sizes[::2], kind.sizes, kind.sizes)
        cases = sized_cases(ctx, base, scales=(1.0,), dtypes=(dtype,))
        evidence = scan(ctx, name, q, (c for c in cases if every or kind.out_shape(c[0])[0] in sizes))
        if base not in SECOND_ORDER:
            return evidence
        return with_series(ctx, name, q, evidence, SECOND_ORDER[base] + ("" if dtype == "float64" else " in float32"))

    return run


def entry(kind: Kind, name: str) -> PlanEntry:
    """The plan entry of the derivative check ``name`` (its row of the table)."""
    base, dtype = split(name)
    ref = 0 if kind.reference is not None else 1
    fill = {
        "dtype": dtype,
        "what": SECOND_ORDER.get(base, ""),
        "declared": f"declared {dtype}: " if dtype in HALF else "",
        "unit": "eps32" if dtype == "float32" else "u",
        "u": f", u = 2^{round(math.log2(unit_roundoff(dtype)))}" if dtype in HALF else "",
        "central": ("50-digit central differences of the reference", "float64 central differences of the target")[ref],
        "how": ("50-digit differences of the reference", "float64 differences of the target")[ref],
        "four": (
            "50-digit 4-point central differences of the reference",
            "float64 4-point central differences of the target, Richardson-extrapolated",
        )[ref],
    }
    row = ("second" if base in SECOND_ORDER else base) + (" 64" if dtype == "float64" else " low")
    statement, measures = (text.format(**fill) for text in _STATEMENTS[row])
    q = q_gradient_batch if name == "gradient_batch" else quantity(name)
    return PlanEntry(name, "gradient", statement, _runner(name, q), q, measures=measures)


def plan(
    kind: Kind, target: Target | None, dtypes: tuple[str, ...] = ("float32", "float64"), stage: int = 1
) -> list[PlanEntry]:
    """The derivative checks of one stage of the plan that apply to ``kind`` and ``target``: 0, the
    float64 gradient and jvp (after the forward checks); 1, the float32 ones when float32 is among
    ``dtypes``, the float16/bfloat16 ones where the target declares that dtype (not for
    complex-to-real: no half complex input) and the batch gradient unless it declares
    ``batches=False``; 2, the float64 second-order modes; 3, their float32 runs (when float32 is among
    ``dtypes``), after the other modes. A kind that is linear has no second derivative."""
    d = declaration_of(target) if target is not None else None
    if stage == 0:
        names = ["gradient", "jvp"]
    elif stage == 1:
        names = ["gradient_float32", "jvp_float32"] if "float32" in dtypes else []
        half = [dt for dt in HALF if d is not None and dt in d.dtypes and not kind.complex_input]
        names += [f"{what}_{dt}" for dt in half for what in ("gradient", "jvp")]
        names += ["gradient_batch"] if d is None or d.batches is not False else []
    elif kind.linear or (stage == 3 and "float32" not in dtypes):
        names = []
    else:
        names = [mode + ("_float32" if stage == 3 else "") for mode in SECOND_ORDER]
    return [entry(kind, name) for name in names]


__all__ = ["entry", "plan", "q_gradient_batch"]
