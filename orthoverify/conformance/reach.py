"""The checks of what users hit beyond a pure function (issue 19), planned by kind and by what the
target declares: second-order derivatives in three modes, ``vmap``, half precision, a second
entry point, and the module's life in training (:mod:`~orthoverify.conformance.lifecycle`)."""

from __future__ import annotations

import math
from typing import Any

import torch

from orthoverify.conformance import (
    adapters_libs,  # noqa: F401  (registers the library adapters)
    blame,
    checks_group,
    checks_train,
    lifecycle,
    modes,
)
from orthoverify.conformance import checks as ck
from orthoverify.conformance.calls import CallFailure, checked
from orthoverify.conformance.context import PlanEntry
from orthoverify.conformance.declare import declaration_of
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.conformance.wire import op_also
from orthoverify.engine.model import Evidence


def q_entry_points(ctx: ck.Ctx, params: Params, dtype: str) -> ck.Measure:
    """The declared second entry point against the target on the same parameters (test ratio)."""
    d = declaration_of(ctx.target)
    assert d is not None and d.also is not None
    kind = ctx.target.kind
    dt = ck.DTYPES[dtype]
    first = ctx.run(params, dtype)
    if isinstance(first, CallFailure):
        return ck.Measure(math.inf, f"the target: {first}")
    res = ctx.remote(op_also, *kind.args(params, dt, "cpu"))  # the declared code runs where the target lives
    second = (
        res
        if isinstance(res, CallFailure)
        else checked(res[0] if res else None, shape=kind.out_shape(params), dtype=kind.out_dtype(dt))
    )
    if isinstance(second, CallFailure):
        return ck.Measure(math.inf, f"{d.also_name}: {second}")
    r = ck.agreement(ck.F64, ck.as_np(kind.view(second)), ck.as_np(first), first.shape[-1], computed_in=dtype).ratio
    modes.record(ctx, "entry_points", kind.view_shape(params)[0], r, params, dtype)
    return ck.Measure(r, f"||{d.also_name} - target|| / (n eps ||target||) = {r:.6g}")


ck.QUANTITIES["entry_points"] = q_entry_points


def check_entry_points(ctx: ck.Ctx) -> list[Evidence]:
    cases = ck.sized_cases(ctx, "entry_points", scales=(1e-3, 1.0, 1e3))
    return modes.with_series(ctx, "entry_points", ck.scan(ctx, "entry_points", cases), "second entry point")


def declared_data(target: ck.Target) -> dict[str, Any] | None:
    """The target's declaration as JSON data (for the result's ``validate`` key), or None."""
    d = declaration_of(target)
    return d.listing() if d is not None else None


def q_batch_declared(ctx: ck.Ctx, params: Params, dtype: str) -> ck.Measure:
    """The batch check of a target that declares ``batches=True``: not taking a stack is a defect."""
    c = ck.q_batch(ctx, params, dtype)
    if math.isnan(c.ratio):
        return ck.Measure(math.inf, f"declared batches=True, but {c.display}")
    return c


def _batch_declared(ctx: ck.Ctx) -> list[Evidence]:
    return ck.scan(ctx, "batch_declared", ck.sized_cases(ctx, "batch", scales=(1.0,)))


def _batch_not_declared(ctx: ck.Ctx) -> list[Evidence]:
    ev = Evidence("", "batch", "float", ctx.label(ctx.dtypes[0]))
    ev.notes = "Not applicable (nothing was measured, so no verdict): the target declares batches=False"
    return [ev]


ck.QUANTITIES["batch_declared"] = q_batch_declared


def plan(p: list[PlanEntry], kind: Kind, target: ck.Target | None, other_device: str | None = None) -> list[PlanEntry]:
    """``p`` (the kind's plan) with the checks of this module before its last entry (bad_input),
    and the batch check as the target declares it (only the kind's own checks without a target)."""
    dtypes = ("float32", "float64") if any(name == "float32" for name, *_ in p) else ("float64",)
    extra = checks_group.plan(kind, target) + checks_train.plan(kind, target, dtypes)  # det; float32/batch gradients
    extra += modes.plan(kind, target) + checks_train.plan_second_float32(kind, dtypes)  # float64 before float32
    d = declaration_of(target) if target is not None else None
    if d is not None and d.also is not None:
        extra.append(
            PlanEntry(
                "entry_points",
                "identity",
                f"the declared {d.also_name} returns the same matrix as the target (test ratio <= 30)",
                check_entry_points,
            )
        )
    extra += lifecycle.plan(target, other_device if other_device is not None and torch.cuda.is_available() else None)
    out = []
    for name, claim_kind, statement, fn in p:
        if name == "batch" and d is not None and d.batches is not None:
            fn = _batch_declared if d.batches else _batch_not_declared
            statement += " (declared " + (
                "batches=True: a target that refuses a stack is refuted)" if d.batches else "batches=False)"
            )
        out.append(PlanEntry(name, claim_kind, statement, fn))
    planned = [*out[:-1], *extra, *out[-1:]]
    planned = [e._replace(run=blame.blamed(e.name, e.run)) for e in planned]  # AD-mode failures: blame the op
    return [checks_group.covering_entry(entry, target) for entry in planned]  # coverage judged on a declared group
