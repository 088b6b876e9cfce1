"""``torch.func.vmap`` and low-precision dtypes, for a target that declares them. A mode or dtype
the target declines with an exception (and does not declare) is "unsupported"
(:func:`~orthoverify.conformance.context.refusal`).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from orthoverify.conformance.context import (
    F64,
    Ctx,
    PlanEntry,
    _kappa,
    as_np,
    entries,
    refusal,
)
from orthoverify.conformance.derivatives import HALF, declared
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.conformance.quantities import same_shape_sets, stacked
from orthoverify.conformance.search import scanned
from orthoverify.conformance.target import Target
from orthoverify.engine.ratios import Measure, agreement, orthogonality
from orthoverify.isolation.calls import CallFailure
from orthoverify.isolation.declare import declaration_of
from orthoverify.isolation.wire import op_vmap
from orthoverify.tolerance import UNIT_ROUNDOFF


def q_vmap(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """``torch.func.vmap(f)`` (run in the target's process: the ``vmap`` operation) over three
    stacked parameter sets against the three single calls."""
    kind = ctx.target.kind
    sets = same_shape_sets(kind, params, ctx.rng("vmap", dtype))
    singles = [ctx.run(s, dtype) for s in sets]
    for one in singles:
        if isinstance(one, CallFailure):
            return Measure(math.inf, f"single call: {one}")
    out = stacked(ctx, op_vmap, sets, dtype)
    n = kind.view_shape(params)[0]
    if isinstance(out, CallFailure):
        if out.kind == "raised" and "vmap" not in declared(ctx, "modes"):
            return refusal(out, "torch.func.vmap")
        ctx.measured.record("vmap", n, math.inf, params, dtype)
        return Measure(math.inf, f"torch.func.vmap: {out}")
    out = kind.view(out)
    r = max(
        agreement(F64, as_np(out[i]), as_np(s), s.shape[-1], computed_in=dtype).ratio
        for i, s in enumerate(singles)
        if isinstance(s, torch.Tensor)
    )
    ctx.measured.record("vmap", n, r, params, dtype)
    return Measure(r, f"max ||vmap(f)(stacked)[i] - f(P_i)|| / (n eps ||f(P_i)||) = {r:.6g}")


# ------------------------------------------------------------------------------ low precision
LOW: dict[str, tuple[torch.dtype, float]] = {name: (dt, UNIT_ROUNDOFF[name]) for name, dt in HALF.items()}
"""The half-precision dtypes and their unit roundoff."""


def q_low_precision(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """The target in float16 or bfloat16, judged on that dtype's own unit roundoff u: the larger of
    ||Q'Q - I|| / (n u kappa) (for an orthogonal kind) and ||f_low - f_64|| / (n u kappa ||f_64||)."""
    kind = ctx.target.kind
    low, u = LOW[dtype]
    n = kind.view_shape(params)[0]
    exact = ctx.run(params, "float64")
    if isinstance(exact, CallFailure):
        return Measure(math.inf, f"float64: {exact}")
    rounded = {k: np.asarray(torch.as_tensor(np.asarray(v, np.float64)).to(low).double()) for k, v in params.items()}
    out_dtype = None if kind.complex_output else low
    got = ctx.call_target(*kind.args(params, low, ctx.device), shape=kind.out_shape(params), dtype=out_dtype)
    if isinstance(got, CallFailure):
        if dtype not in declared(ctx, "dtypes"):
            if got.kind == "raised":
                return refusal(got, f"{dtype} (not declared)")
            return Measure(math.nan, f"the target does not run in {dtype} (not declared): {got.message[:200]}")
        ctx.measured.record("low_precision", n, math.inf, params, dtype)
        return Measure(math.inf, f"{dtype} (declared): {got}")
    ref = ctx.run(rounded, "float64")
    if isinstance(ref, CallFailure):
        return Measure(math.nan, f"float64 at the {dtype}-rounded parameters: {ref}")
    q = as_np(kind.view(got.to(torch.complex64) if got.is_complex() else got))  # complex32 has few ops
    kappa = _kappa(kind, params)
    r = agreement(F64, q, as_np(ref), ref.shape[-1], kappa, computed_in=dtype).ratio
    text = f"||f_{dtype} - f_64|| / (n u kappa ||f_64||) = {r:.6g}"
    if kind.orthogonal_output:
        ro = orthogonality(F64, q, computed_in=dtype).ratio / kappa
        text += f", ||Q'Q - I|| / (n u kappa) = {ro:.6g}"
        r = max(r, ro)
    ctx.measured.record("low_precision", n, r, params, dtype)
    return Measure(r, f"{text} (u = {u:.3g})")


def plan(kind: Kind, target: Target | None) -> list[PlanEntry]:
    """The checks of this module that apply to ``kind`` (and to what ``target`` declares)."""
    d = declaration_of(target) if target is not None else None
    if d is None:
        return []
    orthogonal = ", and ||Q'Q - I||_F / (n u kappa)" if kind.orthogonal_output else ""
    return entries(
        [
            ("vmap" in d.modes, "vmap", "identity", "torch.func.vmap(f) over stacked parameters equals f on each",
             scanned("vmap", q_vmap, "torch.func.vmap against a loop", scales=(1.0,)), q_vmap,
             "max_i ||vmap(f)(stacked)[i] - f(P_i)||_F / (n eps ||f(P_i)||_F)"),
            (any(x in LOW for x in d.dtypes) and not kind.complex_input, "low_precision", "bound",  # no half complex
             "in float16 and bfloat16 the output agrees with float64 (and is orthogonal) to the dtype's own unit "
             "roundoff (2^-11, 2^-8; test ratio <= 30); not applicable in a dtype the target does not declare",
             scanned("low_precision", q_low_precision, "float16 and bfloat16", scales=(1.0,), dtypes=tuple(LOW)),
             q_low_precision, "||f_low(P) - f_64(P)||_F / (n u kappa ||f_64(P)||_F)" + orthogonal),
        ]
    )
