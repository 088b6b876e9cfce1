"""The checks of what users hit beyond a pure function (issue 19), planned by kind and by what the
target declares: second-order derivatives in three modes, ``vmap``, half precision, a second
entry point, and the module's life in training (:mod:`~orthoverify.conformance.lifecycle`)."""

from __future__ import annotations

import math
from typing import Any

import torch

from orthoverify.conformance import blame, checks_group, checks_train, lifecycle, modes
from orthoverify.conformance.context import DTYPES, F64, Ctx, PlanEntry, Row, as_np, entries
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.conformance.quantities import q_batch
from orthoverify.conformance.search import scanned
from orthoverify.conformance.target import Target
from orthoverify.engine.model import Evidence
from orthoverify.engine.ratios import Measure, agreement
from orthoverify.isolation.calls import CallFailure, checked
from orthoverify.isolation.declare import declaration_of
from orthoverify.isolation.wire import op_also


def q_entry_points(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """The declared second entry point against the target on the same parameters (test ratio)."""
    d = declaration_of(ctx.target)
    assert d is not None and d.also is not None
    kind = ctx.target.kind
    dt = DTYPES[dtype]
    first = ctx.run(params, dtype)
    if isinstance(first, CallFailure):
        return Measure(math.inf, f"the target: {first}")
    res = ctx.remote(op_also, *kind.args(params, dt, "cpu"))  # the declared code runs where the target lives
    second = (
        res
        if isinstance(res, CallFailure)
        else checked(res[0] if res else None, shape=kind.out_shape(params), dtype=kind.out_dtype(dt))
    )
    if isinstance(second, CallFailure):
        return Measure(math.inf, f"{d.also_name}: {second}")
    r = agreement(F64, as_np(kind.view(second)), as_np(first), first.shape[-1], computed_in=dtype).ratio
    ctx.measured.record("entry_points", kind.view_shape(params)[0], r, params, dtype)
    return Measure(r, f"||{d.also_name} - target|| / (n eps ||target||) = {r:.6g}")


def declared_data(target: Target) -> dict[str, Any] | None:
    """The target's declaration as JSON data (for the result's ``validate`` key), or None."""
    d = declaration_of(target)
    return d.listing() if d is not None else None


def q_batch_declared(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """The batch check of a target that declares ``batches=True``: not taking a stack is a defect."""
    c = q_batch(ctx, params, dtype)
    if math.isnan(c.ratio):
        return Measure(math.inf, f"declared batches=True, but {c.display}")
    return c


def _batch_not_declared(ctx: Ctx) -> list[Evidence]:
    ev = Evidence("", "batch", "float", ctx.label(ctx.dtypes[0]))
    ev.notes = "Not applicable (nothing was measured, so no verdict): the target declares batches=False"
    return [ev]


def plan(p: list[PlanEntry], kind: Kind, target: Target | None, other_device: str | None = None) -> list[PlanEntry]:
    """``p`` (the kind's plan) with the checks of this module before its last entry (bad_input),
    and the batch check as the target declares it (only the kind's own checks without a target)."""
    dtypes = ("float32", "float64") if any(name == "float32" for name, *_ in p) else ("float64",)
    derivs = [checks_train.plan(kind, target, dtypes, stage) for stage in (1, 2, 3)]  # float32/half/batch; 2nd order
    extra = checks_group.plan(kind, target) + derivs[0] + derivs[1] + modes.plan(kind, target) + derivs[2]
    d = declaration_of(target) if target is not None else None
    also = d.also_name if d is not None and d.also is not None else None
    statement = f"the declared {also} returns the same matrix as the target (test ratio <= 30)"
    entry_points = scanned("entry_points", q_entry_points, "second entry point", scales=(1e-3, 1.0, 1e3))
    ratio = f"||{also}(P) - f(P)||_F / (n eps ||f(P)||_F)"
    row: Row = (also is not None, "entry_points", "identity", statement, entry_points, q_entry_points, ratio)
    extra += entries([row])
    extra += lifecycle.plan(target, other_device if other_device is not None and torch.cuda.is_available() else None)
    declared_batch = scanned("batch_declared", q_batch_declared, salt="batch", scales=(1.0,))
    out = []
    for e in p:
        if e.name == "batch" and d is not None and d.batches is True:
            statement = f"{e.statement} (declared batches=True: a target that refuses a stack is refuted)"
            e = e._replace(statement=statement, run=declared_batch, quantity=q_batch_declared)
            e = e._replace(recorded_as="batch_declared")
        elif e.name == "batch" and d is not None and d.batches is False:
            e = e._replace(statement=f"{e.statement} (declared batches=False)", run=_batch_not_declared)
        out.append(e)
    planned = [*out[:-1], *extra, *out[-1:]]
    quantities = {e.name: e.quantity for e in planned if e.quantity is not None}
    planned = [e._replace(run=blame.blamed(e.name, e.run, quantities)) for e in planned]  # AD failures: blame the op
    return [checks_group.covering_entry(entry, target) for entry in planned]  # coverage judged on a declared group
