"""The gradients people train with: derivatives in float32 and through batches (issue 27).

``gradient`` and ``jvp`` are judged in float64 on one parameter set at a time; training runs in
float32 and on batches. ``gradient_float32`` and ``jvp_float32`` run the target's backward and its
forward mode in float32 at float32-rounded parameters and judge them against the float64 reference
(50-digit differences of orthoverify's reference, or float64 differences of the target for a kind
without one), scaled by float32's allowance: n eps32 times the kind's condition number kappa
(:attr:`~orthoverify.conformance.kinds.Kind.allowance`), so a correct float32 evaluation passes at
every conditioning the allowance judges. ``gradient_batch`` stacks three parameter sets, each
with its own upstream gradient G_i, and compares the batch's gradient with the three gradients of
single calls (two computations, each allowed its own rounding: 2 n eps kappa), whether or not the
target declares ``vmap``. ``second_ff_float32``, ``second_fr_float32`` and ``second_rr_float32``
run the three second-order modes of :mod:`~orthoverify.conformance.modes` in float32 at float32-
rounded parameters and directions against the same float64 reference, on n eps32 kappa.
Where the target declares ``dtypes=["float16"]`` or ``["bfloat16"]``, ``gradient_<dtype>`` and
``jvp_<dtype>`` judge its backward and forward mode in that dtype, at parameters, upstream gradient
and tangent rounded to it (so the reference differentiates what the target receives), against the
float64 reference, on the dtype's own unit roundoff (2^-11, 2^-8) times n kappa; sizes where
30 n u kappa >= 1 (bfloat16 from n = 9) promise no digit and are not judged. Every ratio is
computed here from the raw values the target's process returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np
import torch

from orthoverify.conformance import context as cx
from orthoverify.conformance import gradients, modes
from orthoverify.conformance.context import DTYPES, Ctx, PlanEntry, refusal
from orthoverify.conformance.gradients import q_gradient, q_jvp
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.conformance.search import scan, sized_cases
from orthoverify.conformance.target import Target
from orthoverify.engine.allowance import unpromised
from orthoverify.engine.model import Evidence
from orthoverify.engine.ratios import Measure
from orthoverify.isolation.calls import CallFailure, checked
from orthoverify.isolation.declare import declaration_of
from orthoverify.isolation.wire import op_forward
from orthoverify.tolerance import unit_roundoff

EPS32 = unit_roundoff(torch.float32)


def _scaled(c: Measure, kappa: float, what: str) -> Measure:
    """``c`` (a float32 derivative's case, ratio over n eps32) divided by the allowance's kappa."""
    if math.isnan(c.ratio) or c.unsupported or c.not_run:
        return c
    if kappa == 1.0:
        return Measure(c.ratio, f"{what}: {c.display}", status="raised" if c.raised else "")
    r = c.ratio / kappa
    return Measure(
        r, f"{what}: {c.display}; divided by kappa = {kappa:.3g}: {r:.6g}", status="raised" if c.raised else ""
    )


def _unjudged(ctx: Ctx, p32: Params, eps: float = EPS32) -> Measure | None:
    """Why a derivative at ``p32`` (in a dtype of unit roundoff ``eps``) is not judged: the
    allowance promises no digit there, or the kind has no reference and the target's float64
    output (the judge) failed."""
    kind = ctx.target.kind
    kappa = cx._kappa(kind, p32)
    skip = unpromised(kappa, eps, cx._size(kind, p32))
    if skip is not None:
        return skip
    if kind.reference is None and "float64" in ctx.failed_output:
        return cx.not_run(f"the output check failed in float64 ({ctx.failed_output['float64']}), the judge here")
    return None


def _in_float32(ctx: Ctx, params: Params, measure: Callable[..., Measure], what: str, substitute: str = "") -> Measure:
    """``measure`` (a derivative check's float32 quantity) at float32-rounded ``params``, divided by
    the allowance's kappa there; not judged where :func:`_unjudged` says so. ``substitute``: a torch
    operation the target's process computes by its reference formulation (blame)."""
    p32 = cx.rounded(params, "float32")
    skip = _unjudged(ctx, p32)
    if skip is not None:
        return skip
    return _scaled(measure(ctx, p32, "float32", substitute), cx._kappa(ctx.target.kind, p32), what)


def q_gradient_float32(ctx: Ctx, params: Params, dtype: str = "float32", substitute: str = "") -> Measure:
    """The target's float32 backward of sum(f(P) * G) at float32-rounded P against the float64
    reference gradient there: ||g32 - g_ref|| / (n eps32 kappa ||g_ref||)."""
    return _in_float32(ctx, params, q_gradient, "float32 backward", substitute)


def q_jvp_float32(ctx: Ctx, params: Params, dtype: str = "float32", substitute: str = "") -> Measure:
    """The target's float32 forward mode (torch.func.jvp) at float32-rounded P against the float64
    reference directional derivative there: ||jvp32 - ref|| / (n eps32 kappa ||ref||)."""
    return _in_float32(ctx, params, q_jvp, "float32 forward mode", substitute)


def _project(kind: Kind, grads: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The defined part of each gradient: the skew part of a skew parameter's, the lower
    trapezoid of a lower one's (over the last two axes, so stacks too)."""
    out = {k: v - np.swapaxes(v, -1, -2) if k in kind.skew else v for k, v in grads.items()}
    return {k: np.tril(v) if k in kind.tril else v for k, v in out.items()}


def q_gradient_batch(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """Three parameter sets stacked, each with its own G_i: the batch's gradient of
    sum_i sum(f(P_i) * G_i) against the single calls' gradients, max_i ||g_batch[i] - g_i|| /
    (2 n eps kappa ||g_i||); not applicable to a target that does not take stacked parameters."""
    kind = ctx.target.kind
    dt = DTYPES[dtype]
    sets = modes._same_shape_sets(kind, params, ctx.rng("gradient_batch", dtype))
    gs = [np.random.default_rng(7 + i).standard_normal(kind.view_shape(s)) for i, s in enumerate(sets)]
    singles = []
    for s, g in zip(sets, gs, strict=True):
        one = gradients._loss_grad(ctx, s, dtype, g)
        if isinstance(one, CallFailure):
            return refusal(one, "backward") if one.kind == "raised" else cx.failed(one, "single backward: ")
        singles.append(_project(kind, one))
    stacked = {k: np.stack([np.asarray(s[k], np.float64) for s in sets]) for k in params}
    fwd = ctx.remote(op_forward, *kind.args(stacked, dt, "cpu"))
    if isinstance(fwd, CallFailure) and fwd.kind in ("not-run", "died", "timeout"):
        return cx.failed(fwd, "batched call: ")
    out = (
        fwd
        if isinstance(fwd, CallFailure)
        else checked(fwd[0] if fwd else None, shape=(len(sets), *kind.out_shape(params)))
    )
    if isinstance(out, CallFailure):
        return Measure(math.nan, f"the target does not take stacked parameters: {out}")
    got = gradients._loss_grad(ctx, stacked, dtype, np.stack(gs))
    if isinstance(got, CallFailure):
        if got.kind == "raised":
            return refusal(got, "backward through stacked parameters")
        return cx.failed(got, "batched backward: ")
    batch = _project(kind, got)
    worst, at = 0.0, 0
    for i, (s, one) in enumerate(zip(sets, singles, strict=True)):
        num = math.sqrt(sum(float(np.sum((batch[k][i] - one[k]) ** 2)) for k in one))
        scale = math.sqrt(sum(float(np.sum(one[k] ** 2)) for k in one)) or 1.0
        r = num / (2 * kind.view_shape(s)[0] * unit_roundoff(dt) * cx._kappa(kind, s) * scale)
        if not r <= worst:
            worst, at = r, i
    return Measure(
        worst,
        f"max_i ||batch gradient[i] - gradient of the single call i|| / (2 n eps kappa ||single||) = {worst:.6g} "
        f"(worst at i = {at} of {len(sets)}, each with its own upstream gradient G_i)",
    )


def q_second_float32(mode: str, substitute: str = "") -> Callable[[Ctx, Params, str], Measure]:
    """The quantity of ``<mode>_float32``: the target's v'Hw by ``mode`` in float32 at float32-rounded
    parameters against the float64 reference there, |s32 - s_ref| / (n eps32 kappa ||G|| ||D2f[v,w]||)
    (:func:`~orthoverify.conformance.modes.measure_second`); not judged where :func:`_unjudged` says so.
    With ``substitute`` (blame) that torch operation is replaced and the case is not recorded."""

    def q(ctx: Ctx, params: Params, dtype: str = "float32") -> Measure:
        p32 = cx.rounded(params, "float32")
        skip = _unjudged(ctx, p32)
        if skip is not None:
            return skip
        kappa = cx._kappa(ctx.target.kind, p32)
        return modes.measure_second(ctx, p32, mode, "float32", substitute, kappa=kappa)

    return q


HALF: dict[str, torch.dtype] = {name: low for name, (low, _u) in modes.LOW.items()}
"""The half-precision dtypes a target may declare, for ``gradient_<dtype>`` and ``jvp_<dtype>``."""


def _in_half(params: Params, dtype: str) -> dict[str, np.ndarray]:
    """``params`` rounded to the half-precision ``dtype`` (as the target receives them), in float64."""
    return {k: torch.as_tensor(np.asarray(v, np.float64)).to(HALF[dtype]).double().numpy() for k, v in params.items()}


def at_dtype(params: Params, dtype: str) -> Params:
    """``params`` rounded to ``dtype`` (float32 or a half-precision one; as the target receives them), in float64."""
    return cx.rounded(params, "float32") if dtype == "float32" else _in_half(params, dtype)


def _half_case(ctx: Ctx, params: Params, dtype: str) -> tuple[Params, float] | Measure:
    """The case in ``dtype`` (parameters rounded to it) and the allowance's kappa there, or why it
    is not judged."""
    p = _in_half(params, dtype)
    skip = _unjudged(ctx, p, unit_roundoff(dtype))
    return skip if skip is not None else (p, cx._kappa(ctx.target.kind, p))


def _per_kappa(c: Measure, kappa: float, dtype: str, what: str) -> Measure:
    """A half-precision case's measure (a ratio over n u of ``dtype``) divided by kappa and labelled."""
    return _scaled(c, kappa, f"{what} in {dtype} (u = {unit_roundoff(dtype):.3g})")


def q_gradient_half(ctx: Ctx, params: Params, dtype: str, substitute: str = "") -> Measure:
    """The target's backward in float16/bfloat16 of sum(f(P) * G) (P and G rounded to the dtype)
    against the float64 reference gradient there: ||g - g_ref|| / (n u kappa ||g_ref||)."""
    case = _half_case(ctx, params, dtype)
    if isinstance(case, Measure):
        return case
    p, kappa = case
    kind = ctx.target.kind
    g = _in_half({"G": np.random.default_rng(7).standard_normal(kind.view_shape(p))}, dtype)["G"]
    got = gradients._loss_grad(ctx, p, dtype, g, substitute)
    if isinstance(got, CallFailure):
        return refusal(got, f"backward in {dtype}") if got.kind == "raised" else cx.failed(got, "backward: ")
    if kind.reference is not None:
        ref, how = gradients._reference_grad(kind, p, g), "50-digit central differences of the reference"
    else:
        fd = gradients._fd_target(ctx, p, g)
        if isinstance(fd, CallFailure):
            return cx.failed(fd, "finite differences of the target: ")
        ref, how = fd, "float64 central differences of the target"
    got, ref = _project(kind, got), _project(kind, ref)
    num = math.sqrt(sum(float(np.sum((got[k] - ref[k]) ** 2)) for k in ref))
    scale = math.sqrt(sum(float(np.sum(ref[k] ** 2)) for k in ref)) or 1.0
    r = num / (kind.view_shape(p)[0] * unit_roundoff(dtype) * scale)
    return _per_kappa(Measure(r, f"||grad - {how}|| / (n u ||reference grad||) = {r:.6g}"), kappa, dtype, "backward")


def q_jvp_half(ctx: Ctx, params: Params, dtype: str, substitute: str = "") -> Measure:
    """The target's forward mode (torch.func.jvp) in float16/bfloat16 (P and the tangent rounded to
    the dtype) against the float64 reference directional derivative: ||jvp - ref|| / (n u kappa ||ref||)."""
    case = _half_case(ctx, params, dtype)
    if isinstance(case, Measure):
        return case
    p, kappa = case
    return _per_kappa(q_jvp(ctx, p, dtype, substitute), kappa, dtype, "forward mode")


def substituted(check: str, substitute: str) -> Callable[[Ctx, Params, str], Measure]:
    """The quantity of the derivative check ``check`` of this module (``gradient_float32``,
    ``jvp_float32``, ``<mode>_float32``, ``gradient_<half>``, ``jvp_<half>``) with the target's
    ``substitute`` operation computed by its reference formulation (blame,
    :mod:`~orthoverify.conformance.blame`): the same ratio on the same allowance."""
    what, _, dtype = check.rpartition("_")
    if dtype == "float32" and what in modes.SECOND_ORDER:
        return q_second_float32(what, substitute)
    table: dict[tuple[str, bool], Callable[..., Measure]] = {
        ("gradient", True): q_gradient_float32,
        ("jvp", True): q_jvp_float32,
        ("gradient", False): q_gradient_half,
        ("jvp", False): q_jvp_half,
    }
    if (what, dtype == "float32") not in table or (dtype != "float32" and dtype not in HALF):
        raise LookupError(f"{check!r} is no derivative check in a lower precision")
    q = table[what, dtype == "float32"]
    return lambda ctx, params, dt: q(ctx, params, dt, substitute)


def _cases(ctx: Ctx, salt: str, dtype: str) -> Iterator[tuple[Params, str, str]]:
    """Every size of the kind at magnitude 1 in ``dtype`` (the quick profile: every other size)."""
    kind = ctx.target.kind
    sizes = ctx.profile.pick(kind.sizes[::2], kind.sizes, kind.sizes)
    return (c for c in sized_cases(ctx, salt, scales=(1.0,), dtypes=(dtype,)) if kind.out_shape(c[0])[0] in sizes)


def check_gradient_float32(ctx: Ctx) -> list[Evidence]:
    return scan(ctx, "gradient_float32", q_gradient_float32, _cases(ctx, "gradient", "float32"))


def check_jvp_float32(ctx: Ctx) -> list[Evidence]:
    return scan(ctx, "jvp_float32", q_jvp_float32, _cases(ctx, "jvp", "float32"))


def check_gradient_batch(ctx: Ctx) -> list[Evidence]:
    return scan(ctx, "gradient_batch", q_gradient_batch, _cases(ctx, "gradient_batch", "float64"))


def check_second_float32(mode: str) -> Callable[[Ctx], list[Evidence]]:
    """``<mode>_float32`` over the second-order check's sizes, drawn afresh in float32."""
    name = f"{mode}_float32"

    def run(ctx: Ctx) -> list[Evidence]:
        cases = ((p, dt) for p, dt, _ in _cases(ctx, mode, "float32"))
        q = q_second_float32(mode)
        return modes.with_series(ctx, name, q, scan(ctx, name, q, cases), f"{modes.SECOND_ORDER[mode]} in float32")

    return run


def check_half(what: str, dtype: str) -> Callable[[Ctx], list[Evidence]]:
    """``<what>_<dtype>`` (what: gradient or jvp) over the kind's sizes at magnitude 1."""
    q = q_gradient_half if what == "gradient" else q_jvp_half
    return lambda ctx: scan(ctx, f"{what}_{dtype}", q, _cases(ctx, what, dtype))


def plan(kind: Kind, target: Target | None, dtypes: tuple[str, ...] = ("float32", "float64")) -> list[PlanEntry]:
    """The training checks that apply: float32 derivatives when float32 is among ``dtypes``, the
    float16/bfloat16 ones where the target declares that dtype (not for complex-to-real: no half
    complex input), the batch gradient unless the target declares ``batches=False``; the float32
    second-order checks come from :func:`plan_second_float32`."""
    how = "50-digit differences of the reference" if kind.reference is not None else "float64 differences of the target"
    out: list[PlanEntry] = []
    if "float32" in dtypes:
        out += [
            PlanEntry(
                "gradient_float32",
                "gradient",
                f"in float32 the target's backward gives the gradient of sum(f(P) * G) ({how}) to float32's "
                "allowance (n eps32 kappa, test ratio <= 30)",
                check_gradient_float32,
                q_gradient_float32,
                measures="||float32 gradient - reference gradient||_F / (n eps32 kappa ||reference gradient||_F)",
            ),
            PlanEntry(
                "jvp_float32",
                "gradient",
                f"in float32 the target's forward mode (torch.func.jvp) gives the directional derivative ({how}) to "
                "float32's allowance (n eps32 kappa, test ratio <= 30); unsupported when it declines forward mode",
                check_jvp_float32,
                q_jvp_float32,
                measures="||float32 jvp - reference directional derivative||_F / (n eps32 kappa ||reference||_F)",
            ),
        ]
    d = declaration_of(target) if target is not None else None
    for dtype in HALF:
        if d is None or dtype not in d.dtypes or kind.complex_input:  # no half complex input
            continue
        u = f"2^{round(math.log2(unit_roundoff(dtype)))}"
        out += [
            PlanEntry(
                f"gradient_{dtype}",
                "gradient",
                f"declared {dtype}: in {dtype} the target's backward gives the gradient of sum(f(P) * G) ({how}) "
                f"to {dtype}'s allowance (n u kappa, u = {u}, test ratio <= 30)",
                check_half("gradient", dtype),
                q_gradient_half,
                measures=f"||{dtype} gradient - reference gradient||_F / (n u kappa ||reference gradient||_F), u = {u}",
            ),
            PlanEntry(
                f"jvp_{dtype}",
                "gradient",
                f"declared {dtype}: in {dtype} the target's forward mode (torch.func.jvp) gives the directional "
                f"derivative ({how}) to {dtype}'s allowance (n u kappa, u = {u}, test ratio <= 30); unsupported "
                "when it declines forward mode",
                check_half("jvp", dtype),
                q_jvp_half,
                measures=f"||{dtype} jvp - reference directional derivative||_F / (n u kappa ||reference||_F), u = {u}",
            ),
        ]
    if d is None or d.batches is not False:
        out.append(
            PlanEntry(
                "gradient_batch",
                "gradient",
                "the gradient through parameters stacked on a leading axis (each with its own upstream gradient) "
                "equals the single calls' gradients (2 n eps kappa, test ratio <= 30); not applicable to a target "
                "that does not take stacks",
                check_gradient_batch,
                q_gradient_batch,
                measures="max_i ||batched gradient[i] - gradient g_i of call i||_F / (2 n eps kappa ||g_i||_F)",
            )
        )
    return out


def plan_second_float32(kind: Kind, dtypes: tuple[str, ...] = ("float32", "float64")) -> list[PlanEntry]:
    """The float32 second-order checks (planned after the float64 ones), when float32 is among
    ``dtypes`` and the kind has a second derivative."""
    if "float32" not in dtypes or kind.linear:  # no second derivative
        return []
    how = "50-digit differences of the reference" if kind.reference is not None else "float64 differences of the target"
    return [
        PlanEntry(
            f"{mode}_float32",
            "gradient",
            f"in float32 the target's second derivative v'Hw of sum(f(P) * G) by {what} equals the float64 "
            f"reference's ({how}) to float32's allowance (n eps32 kappa ||G|| ||D2f[v,w]||, test ratio <= 30); "
            "unsupported when the target declines this mode with an exception",
            check_second_float32(mode),
            q_second_float32(mode),
            measures="|float32 v'Hw - reference v'Hw| / max(n eps32 kappa ||G|| ||D2f[v,w]||, its own rounding noise)",
        )
        for mode, what in modes.SECOND_ORDER.items()
    ]


__all__ = [
    "at_dtype",
    "check_gradient_batch",
    "check_gradient_float32",
    "check_half",
    "check_jvp_float32",
    "check_second_float32",
    "plan",
    "plan_second_float32",
    "substituted",
]
