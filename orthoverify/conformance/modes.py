"""``torch.func.vmap`` and low-precision dtypes, and the series and counterexample of a check that
records its cases (:func:`with_series`: these, the second-order ones of
:mod:`~orthoverify.conformance.checks_train`, the lifecycle and the entry-point checks). A mode or
dtype the target declines with an exception (and does not declare) is "unsupported"
(:func:`~orthoverify.conformance.context.refusal`).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from orthoverify.conformance.calls import CallFailure, checked
from orthoverify.conformance.context import (
    DTYPES,
    F64,
    Ctx,
    PlanEntry,
    Quantity,
    _kappa,
    as_np,
    inputs_of,
    refusal,
)
from orthoverify.conformance.declare import declaration_of
from orthoverify.conformance.derivatives import HALF, declared
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.conformance.search import scan, sized_cases
from orthoverify.conformance.target import Target
from orthoverify.conformance.wire import op_vmap
from orthoverify.engine import scan as scans
from orthoverify.engine.model import Evidence
from orthoverify.engine.ratios import Measure, agreement, orthogonality
from orthoverify.tolerance import UNIT_ROUNDOFF


def with_series(ctx: Ctx, check: str, q: Quantity, evidence: list[Evidence], what: str) -> list[Evidence]:
    """The evidence of ``check`` with the mode or lifecycle step it exercised, its (n, ratio) series
    and, for a failure, the smallest failing case as its counterexample and the replay command
    (:func:`~orthoverify.engine.scan.with_series` over the cases ``ctx.measured`` kept)."""
    return scans.with_series(
        ctx.measured,
        check,
        evidence,
        what,
        dtype_of=lambda ev: ev.backend.split("-")[1] if ev.backend.count("-") >= 2 else "",
        measure=lambda params, dtype: q(ctx, params, dtype),
        inputs=inputs_of,
        replay=f"orthoverify replay RESULT.json conformance.{ctx.target.kind.name}.{check} --target {ctx.target.spec}",
    )


# ------------------------------------------------------------------------------ vmap
def _same_shape_sets(kind: Kind, params: Params, rng: np.random.Generator, count: int = 3) -> list[Params]:
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


def q_vmap(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """``torch.func.vmap(f)`` (run in the target's process: the ``vmap`` operation) over three
    stacked parameter sets against the three single calls."""
    kind = ctx.target.kind
    dt = DTYPES[dtype]
    sets = _same_shape_sets(kind, params, ctx.rng("vmap", dtype))
    singles = [ctx.run(s, dtype) for s in sets]
    for one in singles:
        if isinstance(one, CallFailure):
            return Measure(math.inf, f"single call: {one}")
    stacked = [torch.stack(parts) for parts in zip(*(kind.args(s, dt, "cpu") for s in sets), strict=True)]
    res = ctx.remote(op_vmap, *stacked)
    out = (
        res
        if isinstance(res, CallFailure)
        else checked(res[0] if res else None, shape=(len(sets), *kind.out_shape(params)))
    )
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


def check_vmap(ctx: Ctx) -> list[Evidence]:
    cases = sized_cases(ctx, "vmap", scales=(1.0,))
    return with_series(ctx, "vmap", q_vmap, scan(ctx, "vmap", q_vmap, cases), "torch.func.vmap against a loop")


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


def check_low_precision(ctx: Ctx) -> list[Evidence]:
    cases = sized_cases(ctx, "low_precision", scales=(1.0,), dtypes=tuple(LOW))
    q = q_low_precision
    return with_series(ctx, "low_precision", q, scan(ctx, "low_precision", q, cases), "float16 and bfloat16")


def plan(kind: Kind, target: Target | None) -> list[PlanEntry]:
    """The checks of this module that apply to ``kind`` (and to what ``target`` declares)."""
    out: list[PlanEntry] = []
    d = declaration_of(target) if target is not None else None
    if d is not None and "vmap" in d.modes:
        out.append(
            PlanEntry(
                "vmap",
                "identity",
                "torch.func.vmap(f) over stacked parameters equals f on each",
                check_vmap,
                q_vmap,
                measures="max_i ||vmap(f)(stacked)[i] - f(P_i)||_F / (n eps ||f(P_i)||_F)",
            )
        )
    if d is not None and any(x in LOW for x in d.dtypes) and not kind.complex_input:  # no half complex input
        out.append(
            PlanEntry(
                "low_precision",
                "bound",
                "in float16 and bfloat16 the output agrees with float64 (and is orthogonal) to the dtype's own unit "
                "roundoff (2^-11, 2^-8; test ratio <= 30); not applicable in a dtype the target does not declare",
                check_low_precision,
                q_low_precision,
                measures="||f_low(P) - f_64(P)||_F / (n u kappa ||f_64(P)||_F)"
                + (", and ||Q'Q - I||_F / (n u kappa)" if kind.orthogonal_output else ""),
            )
        )
    return out
