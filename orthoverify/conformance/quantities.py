"""The forward quantities of a target, one test ratio per case: orthogonality, agreement with
the kind's reference, float32 against float64, determinism, batching and a second device.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from orthoverify.conformance.context import DTYPES, F64, Ctx, _kappa, allowance, as_np, failed, reference_np, rounded
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.engine.allowance import kappa_text
from orthoverify.engine.ratios import Measure, agreement, fails, orthogonality
from orthoverify.errors import OrthoverifyError
from orthoverify.isolation.calls import CallFailure, checked
from orthoverify.isolation.wire import op_forward


# ------------------------------------------------------------------------------ quantities
def q_orthogonal(ctx: Ctx, params: Params, dtype: str) -> Measure:
    kappa, skip = allowance(ctx, params, dtype)
    if skip is not None:
        return skip
    out = ctx.run(params, dtype)
    if isinstance(out, CallFailure):
        return failed(out)
    r = orthogonality(F64, as_np(out), computed_in=dtype).ratio / kappa
    return Measure(r, f"||Q'Q - I||_F / (n eps{kappa_text(kappa)}) = {r:.6g}")


def q_forward(ctx: Ctx, params: Params, dtype: str) -> Measure:
    kind = ctx.target.kind
    kappa, skip = allowance(ctx, params, dtype)
    if skip is not None:
        return skip
    try:
        with np.errstate(all="ignore"):
            ref = reference_np(kind, rounded(params, dtype))
    except OrthoverifyError as exc:  # the reference's own domain (say, n = 1 for eq. 6)
        return Measure(math.nan, f"the reference is not defined here: {exc}", status="beyond")
    if not np.isfinite(ref).all():
        return Measure(math.nan, "the reference is not finite here", status="beyond")
    out = ctx.run(params, dtype)
    if isinstance(out, CallFailure):
        return failed(out)
    r = agreement(F64, as_np(out), ref, ref.shape[-1], kappa, computed_in=dtype).ratio
    return Measure(r, f"||f - reference||_F / (n eps{kappa_text(kappa)} ||reference||) = {r:.6g}")


def q_float32(ctx: Ctx, params: Params, dtype: str = "float32") -> Measure:
    """float32 against float64 of the target on the same (float32-rounded) parameters, scaled by the
    kind's allowance: the two agree to what a backward-stable float32 evaluation promises."""
    p32 = rounded(params, "float32")
    kappa, skip = allowance(ctx, p32, "float32")
    if skip is not None:
        return skip
    lo, hi = ctx.run(p32, "float32"), ctx.run(p32, "float64")
    for out in (lo, hi):
        if isinstance(out, CallFailure):
            return failed(out)
    assert isinstance(lo, torch.Tensor) and isinstance(hi, torch.Tensor)
    r = agreement(F64, as_np(lo), as_np(hi), hi.shape[-1], kappa, computed_in="float32").ratio
    text = f"||f32 - f64||_F / (n eps32{kappa_text(kappa)} ||f64||) = {r:.6g}"
    if fails(r):
        text += ". " + which_is_off(
            ctx, [p32], "float32", {"the float32 call": [as_np(lo)], "the float64 call": ([as_np(hi)], "float64")}
        )
    return Measure(r, text)


def q_determinism(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """Three calls at the same parameters. By default they must agree to the kind's allowance (two
    computations, each allowed its own rounding error: a test ratio, as for ``batch``), so a target
    whose evaluation order varies from call to call (threaded reductions, GPU atomics) is
    deterministic up to rounding; with ``ctx.bitwise_determinism`` they must be bitwise equal."""
    outs = [ctx.run(params, dtype) for _ in range(3)]
    for out in outs:
        if isinstance(out, CallFailure):
            return failed(out)
    arrays = [as_np(o) for o in outs if isinstance(o, torch.Tensor)]
    if all(np.array_equal(arrays[0], a) for a in arrays[1:]):
        return Measure(0.0, "bitwise equal")
    diff = max(float(np.max(np.abs(arrays[0] - a))) for a in arrays[1:])
    if ctx.bitwise_determinism:
        return Measure(math.inf, f"repeated calls differ by up to {diff:.3g} (bitwise equality asked for)")
    kappa = _kappa(ctx.target.kind, params)
    r = max(agreement(F64, a, arrays[0], a.shape[-1], 2 * kappa, computed_in=dtype).ratio for a in arrays[1:])
    ctx.jitter[dtype] = max(ctx.jitter.get(dtype, 0.0), diff)
    ratio = f"max ||f_i - f_1|| / (2 n eps{kappa_text(kappa)} ||f_1||) = {r:.6g}"
    return Measure(r, f"repeated calls differ by up to {diff:.3g}: {ratio}")


def same_shape_sets(kind: Kind, params: Params, rng: np.random.Generator, count: int = 3) -> list[Params]:
    """``params`` and more draws of the same size and shapes (m varies for U), up to ``count``."""
    shapes = {k: np.shape(v) for k, v in params.items()}
    n = next(iter(params.values())).shape[0]
    sets: list[Params] = [params]
    for _ in range(50):
        if len(sets) == count:
            break
        cand = kind.draw(rng, n, 1.0)
        if {k: np.shape(v) for k, v in cand.items()} == shapes:
            sets.append(cand)
    return sets


def stacked(ctx: Ctx, op: str, sets: list[Params], in_dtype: str, **expect: Any) -> torch.Tensor | CallFailure:
    """The raw output of the target's operation ``op`` on ``sets`` stacked on a leading axis (in
    ``in_dtype``), checked to have that axis (and ``expect``: :func:`~.calls.checked`'s)."""
    kind = ctx.target.kind
    args = [torch.stack(parts) for parts in zip(*(kind.args(s, DTYPES[in_dtype], "cpu") for s in sets), strict=True)]
    res = ctx.remote(op, *args)
    shape = (len(sets), *kind.out_shape(sets[0]))
    return res if isinstance(res, CallFailure) else checked(res[0] if res else None, shape=shape, **expect)


def q_batch(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """Three parameter sets stacked on a leading axis must give the three outputs stacked."""
    kind = ctx.target.kind
    sets = same_shape_sets(kind, params, ctx.rng("batch", dtype))
    singles = [ctx.run(s, dtype) for s in sets]
    for out in singles:
        if isinstance(out, CallFailure):
            return failed(out, "single call: ")
    out = stacked(ctx, op_forward, sets, dtype, dtype=kind.out_dtype(DTYPES[dtype]))
    if isinstance(out, CallFailure) and out.kind in ("not-run", "died", "timeout"):
        return failed(out, "batched call: ")
    if isinstance(out, CallFailure):
        return Measure(math.nan, f"the target does not take stacked parameters: {out}")
    out = kind.view(out)
    kappa = max(_kappa(kind, s) for s in sets)
    r = max(  # two computations, each allowed its own error
        agreement(F64, as_np(out[i]), as_np(s), s.shape[-1], 2 * kappa, computed_in=dtype).ratio
        for i, s in enumerate(singles)
        if isinstance(s, torch.Tensor)
    )
    text = f"max ||batch[i] - single_i|| / (2 n eps{kappa_text(kappa)} ||single_i||) = {r:.6g}"
    if fails(r):
        text += ". " + which_is_off(
            ctx,
            sets,
            dtype,
            {
                "single calls": [as_np(x) for x in singles if isinstance(x, torch.Tensor)],
                "the batched call": list(as_np(out)),
            },
        )
    return Measure(r, text)


def which_is_off(ctx: Ctx, sets: list[Params], dtype: str, outputs: dict[str, Any]) -> str:
    """Two computations of the same outputs disagree: judge each against the reference (or, for a
    kind without one, against orthogonality, both scaled by the allowance) and say which is off."""
    kind = ctx.target.kind
    verdict: dict[str, float] = {}
    for name, value in outputs.items():  # a list of outputs in ``dtype``, or (outputs, their dtype)
        outs, own = value if isinstance(value, tuple) else (value, dtype)
        worst = 0.0
        for p, o in zip(sets, outs, strict=True):
            kappa = _kappa(kind, p)
            if kind.reference is not None:
                ref = reference_np(kind, rounded(p, own))
                r = agreement(F64, o, ref, ref.shape[-1], kappa, computed_in=own).ratio
            elif kind.orthogonal_output:
                r = orthogonality(F64, o, computed_in=own).ratio / kappa
            else:
                return "(no reference to tell which is off)"
            worst = max(worst, r)
        verdict[name] = worst
    how = "against the reference" if kind.reference is not None else "orthogonality"
    parts = ", ".join(f"{k} {v:.3g}" for k, v in verdict.items())
    off = [k for k, v in verdict.items() if fails(v)]
    if len(off) == 1:
        verb = "is" if off[0].startswith("the") else "are"
        return f"Judged by {how} (ratio): {parts}: {off[0]} {verb} the inaccurate one"
    if not off:
        return f"Judged by {how} (ratio): {parts}: both within the allowance, so neither can be blamed"
    return f"Judged by {how} (ratio): {parts}: both are off"


def q_devices(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """The output on ``ctx.other_device`` against the output on ``ctx.device`` (test ratio)."""
    here, there = ctx.run(params, dtype), ctx.run(params, dtype, device=ctx.other_device)
    for where, out in ((ctx.device, here), (ctx.other_device, there)):
        if isinstance(out, CallFailure):
            return failed(out, f"on {where}: ")
    assert isinstance(here, torch.Tensor) and isinstance(there, torch.Tensor)
    kappa = _kappa(ctx.target.kind, params)
    r = agreement(F64, as_np(there), as_np(here), here.shape[-1], 2 * kappa, computed_in=dtype).ratio  # each allowed
    text = f"||f on {ctx.other_device} - f on {ctx.device}|| / (2 n eps{kappa_text(kappa)} ||f||) = {r:.6g}"
    if fails(r):
        text += ". " + which_is_off(
            ctx,
            [params],
            dtype,
            {f"the {ctx.device} call": [as_np(here)], f"the {ctx.other_device} call": [as_np(there)]},
        )
    return Measure(r, text)
