"""The checks of what users hit beyond a pure function (issue 19), planned by kind and by what the
target declares: second-order derivatives in three modes, ``vmap``, half precision, a second
entry point, and the module's life in training (:mod:`~orthoverify.conformance.lifecycle`)."""

from __future__ import annotations

import math

import torch

from orthoverify.conformance import (
    adapters_libs,  # noqa: F401  (registers the library adapters)
    lifecycle,
    modes,
)
from orthoverify.conformance import checks as ck
from orthoverify.conformance.calls import CallFailure
from orthoverify.conformance.declare import declaration_of
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.conformance.modes import PlanEntry
from orthoverify.engine.model import Evidence


def q_entry_points(ctx: ck.Ctx, params: Params, dtype: str) -> ck.Case:
    """The declared second entry point against the target on the same parameters (test ratio)."""
    d = declaration_of(ctx.target)
    assert d is not None and d.also is not None
    kind = ctx.target.kind
    dt = ck.DTYPES[dtype]
    first = ctx.run(params, dtype)
    if isinstance(first, CallFailure):
        return ck.Case(math.inf, f"the target: {first}")
    second = ctx.call(
        d.also, *kind.args(params, dt, ctx.device), shape=kind.out_shape(params), dtype=kind.out_dtype(dt)
    )
    if isinstance(second, CallFailure):
        return ck.Case(math.inf, f"{d.also_name}: {second}")
    r = ck.agreement(ck.as_np(kind.view(second)), ck.as_np(first), ck.EPS[dt])
    modes.record(ctx, "entry_points", kind.view_shape(params)[0], r)
    return ck.Case(r, f"||{d.also_name} - target|| / (n eps ||target||) = {r:.6g}")


ck.QUANTITIES["entry_points"] = q_entry_points


def check_entry_points(ctx: ck.Ctx) -> list[Evidence]:
    cases = ck.sized_cases(ctx, "entry_points", scales=(1e-3, 1.0, 1e3))
    return modes.with_series(ctx, "entry_points", ck.scan(ctx, "entry_points", cases), "second entry point")


def plan(kind: Kind, target: ck.Target | None, other_device: str | None = None) -> list[PlanEntry]:
    """The extra checks for ``kind`` and ``target`` (only the kind's own without a target)."""
    out = modes.plan(kind, target)
    d = declaration_of(target) if target is not None else None
    if d is not None and d.also is not None:
        out.append(
            (
                "entry_points",
                "identity",
                f"the declared {d.also_name} returns the same matrix as the target (test ratio <= 30)",
                check_entry_points,
            )
        )
    out += lifecycle.plan(target, other_device if other_device is not None and torch.cuda.is_available() else None)
    return out
