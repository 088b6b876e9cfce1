"""The module's life in training: what happens to a parametrised weight after optimiser steps
with weight decay, a state_dict round trip, dtype casts and a device move.

A target takes part when it declares a module factory (``declare(module=...)``, or a built-in
adapter's declaration): ``module(n)`` builds a fresh module from its own initialisation (after
``torch.manual_seed``), whose matrix is ``module.weight`` (or the declared ``weight`` reader).
After every step the weight must still be orthogonal (test ratio ``||W'W - I|| / (n eps)``, eps
of the weight's dtype) or, where the declaration says so, have its singular values in the declared
range; and it must not be degenerate (no zero or repeated columns). The training loss is the
linear L(W) = sum(W * G) with a fixed random G, so every step moves the weight.

Each scenario is a point of "parameters" (n, optimiser, seed, cast), so a failure is an ordinary
counterexample that ``orthoverify replay`` re-runs. A scenario runs in the target's process (an
operation of :mod:`~orthoverify.isolation.program`), which returns the raw weights it produced;
they are judged here.

A module itself can be the target (:func:`module_target`): a factory ``n -> module`` (or a module
class whose constructor takes n) whose weight is parametrised (``torch.nn.utils.parametrize``:
torch's and geotorch's ``orthogonal``, a ``register_parametrization``) is judged as an
``orthogonal-map`` from the parametrised original X to the weight, with its lifecycle checks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from orthoverify.conformance.context import F64, Ctx, PlanEntry, Quantity, as_np
from orthoverify.conformance.kinds import Params
from orthoverify.conformance.search import scan, with_series
from orthoverify.conformance.target import Target
from orthoverify.engine.model import Evidence
from orthoverify.engine.model import Kind as ClaimKind
from orthoverify.engine.ratios import THRESHOLD, Measure, agreement, orthogonality
from orthoverify.isolation.build import module_target as module_target  # a layer as a target (re-exported)
from orthoverify.isolation.calls import CallFailure
from orthoverify.isolation.declare import Declaration, declaration_of
from orthoverify.isolation.program import CASTS, OPTIMISERS
from orthoverify.isolation.wire import op_dtype_cast, op_state_dict, op_to_device, op_weight_decay
from orthoverify.tolerance import UNIT_ROUNDOFF, unit_roundoff


def _decl(ctx: Ctx) -> Declaration:
    d = declaration_of(ctx.target)
    assert d is not None and d.module is not None
    return d


def invariant(d: Declaration, w: torch.Tensor, fmt: str | None = None) -> tuple[float, str]:
    """The weight's test ratio against its declared property (0 when it holds exactly) and what
    was measured, degeneracy (zero or repeated columns) included; ``fmt``: the format whose unit roundoff
    to judge by (default: the weight's dtype's)."""
    own = str(w.dtype).removeprefix("torch.")
    fmt = fmt if fmt is not None else own if own in UNIT_ROUNDOFF else "float64"
    eps = unit_roundoff(fmt)
    q = w.detach().to("cpu", torch.float64).numpy()
    n = q.shape[-1]
    if not np.all(np.isfinite(q)):
        return math.inf, f"{int(np.sum(~np.isfinite(q)))} entries of the weight are NaN or Inf"
    norms = np.linalg.norm(q, axis=0)
    # an orthogonal weight is far from both; a declared singular-value range may allow nearly parallel
    # columns (sigma_min -> 0), so there only exact degeneracy counts (the range check does the rest)
    tol = math.sqrt(eps) if d.sigma is None else 4 * eps
    zero = int(np.sum(norms <= (tol if d.sigma is None else 0.0) * max(1.0, float(norms.max(initial=0.0)))))
    unit = q / np.where(norms > 0, norms, 1.0)
    cos = np.abs(unit.T @ unit) - np.eye(n)
    repeated = int(np.sum(np.triu(cos, 1) >= 1.0 - tol))
    degenerate = ""
    if zero or repeated:
        degenerate = f"degenerate: {zero} zero column(s), {repeated} pair(s) of repeated columns; "
    if d.sigma is None:
        r = orthogonality(F64, q, computed_in=fmt).ratio
        return (math.inf if degenerate else r), f"{degenerate}||W'W - I||_F / (n eps) = {r:.6g}"
    lo, hi = d.sigma
    s = np.linalg.svd(q, compute_uv=False)
    out = max(0.0, lo - float(s.min()), float(s.max()) - hi) / (n * eps * max(1.0, hi))
    text = f"{degenerate}singular values in [{s.min():.6g}, {s.max():.6g}], declared [{lo:g}, {hi:g}]"
    return (math.inf if degenerate else out), f"{text}; distance outside / (n eps) = {out:.6g}"


def _scenario(ctx: Ctx, op: str, count: int, **kw: Any) -> tuple[list[torch.Tensor], list[str | None]] | Measure:
    """The weights the scenario ``op`` produced in the target's process (with the device each was
    on there), ``count`` of them; a failed scenario (it raised, died or hung) is a failing case."""
    res = ctx.calls.request(op, [], kw, ctx.timeout * 10, ctx.device)
    if isinstance(res, CallFailure):
        return Measure(math.inf, str(res))
    ws = [w for w in res.out if w is not None]
    if len(ws) != count or len(res.out) != count:
        return Measure(math.inf, f"type: the scenario gave {len(res.out)} weights, expected {count}")
    return ws, list(res.devices) + [None] * (count - len(res.devices))


def _i(params: Params, key: str) -> int:
    return round(float(np.asarray(params[key]).reshape(-1)[0]))


def q_weight_decay(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """From the module's initialisation, ``steps`` optimiser steps with weight decay (in the target's
    process, which returns the weight after each); the first step after which the weight breaks its
    invariant, or the worst ratio over all steps."""
    d = _decl(ctx)
    n, which, steps, seed = _i(params, "n"), _i(params, "opt"), _i(params, "steps"), _i(params, "seed")
    name = OPTIMISERS[which]
    got = _scenario(ctx, op_weight_decay, steps + 1, n=n, opt=which, steps=steps, seed=seed, dtype=dtype)
    if isinstance(got, Measure):
        c = got
    else:
        ws = got[0]
        r0, t0 = invariant(d, ws[0])
        c = Measure(r0, f"at initialisation (before any step): {t0}")
        if r0 <= THRESHOLD:
            worst, text = r0, f"at initialisation: {t0}"
            broke = None
            for k, w in enumerate(ws[1:], 1):
                r, t = invariant(d, w)
                if not r <= THRESHOLD:
                    broke = Measure(r, f"after step {k} of {name}: {t}")
                    break
                if r > worst:
                    worst, text = r, f"after step {k} of {name}: {t}"
            c = broke or Measure(worst, f"{steps} steps of {name}, worst {text}")
    ctx.measured.record("weight_decay", n, c.ratio, params, dtype)
    return c


def q_state_dict(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """Two Adam steps (no weight decay: that is the other check's business) on module A; A's
    state_dict (tensors copied in memory) loaded into a fresh module B built from another seed;
    B's weight must equal A's; one more step on both (fresh SGD) must keep them equal and the
    invariant true. The scenario runs in the target's process; its weights are judged here."""
    d = _decl(ctx)
    n, seed = _i(params, "n"), _i(params, "seed")
    got = _scenario(ctx, op_state_dict, 4, n=n, seed=seed, dtype=dtype)
    c = got if isinstance(got, Measure) else Measure(*_judge_state_dict(d, got[0], dtype))
    ctx.measured.record("state_dict", n, c.ratio, params, dtype)
    return c


def _judge_state_dict(d: Declaration, ws: list[torch.Tensor], dtype: str) -> tuple[float, str]:
    wa, wb, wa1, wb1 = ws
    r = agreement(F64, as_np(wb), as_np(wa), wa.shape[-1], computed_in=dtype).ratio
    if not r <= THRESHOLD:
        return r, f"after load_state_dict the fresh module's weight differs from the saved one: ratio {r:.6g}"
    r2 = agreement(F64, as_np(wb1), as_np(wa1), wa1.shape[-1], computed_in=dtype).ratio
    if not r2 <= THRESHOLD:
        return r2, f"one step after loading, the reloaded module's weight differs from the original's: ratio {r2:.6g}"
    ri, ti = invariant(d, wb1)
    return max(
        r, r2, ri
    ), f"reloaded weight ratio {r:.3g}, after one step {r2:.3g}; reloaded module after one step: {ti}"


def q_dtype_cast(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """``module.double()`` (or .float(), .half(), .bfloat16()) of a module built in float32: the
    weight comes out in that dtype, satisfies the invariant on the larger of float32's and that
    dtype's unit roundoff (a cast up cannot add accuracy a float32 initialisation lacks), and
    survives one optimiser step. A cast the target does not declare that fails is not applicable."""
    d = _decl(ctx)
    n, cast, seed = _i(params, "n"), _i(params, "cast"), _i(params, "seed")
    name, dt = CASTS[cast]
    declared = str(dt).removeprefix("torch.") in (*declared_casts(d),)
    got = _scenario(ctx, op_dtype_cast, 2, n=n, cast=cast, seed=seed)
    if isinstance(got, Measure):
        c = got
    else:
        w, w1 = got[0]
        fmt = max("float32", str(dt).removeprefix("torch."), key=unit_roundoff)
        if w.dtype != dt:
            c = Measure(
                math.inf, f"after .{name}() the weight is {w.dtype}, not {dt} (a buffer or constant kept its dtype)"
            )
        elif w1.dtype != dt:
            c = Measure(math.inf, f"after .{name}() and one step the weight is {w1.dtype}, not {dt}")
        else:
            (r0, t0), (r1, t1) = invariant(d, w, fmt), invariant(d, w1, fmt)
            c = Measure(max(r0, r1), f"after .{name}(): {t0}; after one SGD step: {t1}")
    if not c.ratio <= THRESHOLD and not declared:
        return Measure(math.nan, f".{name}() is not declared and fails: {c.display[:200]}")
    ctx.measured.record("dtype_cast", n, c.ratio, params, dtype)
    return Measure(c.ratio, f".{name}(): {c.display}")


def q_to_device(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """``module.to(other device)``: the weight lives there, satisfies the invariant and agrees with
    the weight on the first device; one optimiser step runs there."""
    d = _decl(ctx)
    n, seed = _i(params, "n"), _i(params, "seed")
    other = ctx.other_device
    got = _scenario(ctx, op_to_device, 3, n=n, seed=seed, dtype=dtype, other=other)
    if isinstance(got, Measure):
        c = got
    else:
        (here, there, after), devices = got
        where = devices[1] or "an unknown device"
        if devices[1] is None or torch.device(devices[1]).type != torch.device(other).type:
            c = Measure(math.inf, f"after .to({other!r}) the weight is on {where}")
        else:
            r = agreement(F64, as_np(there), as_np(here), here.shape[-1], computed_in=dtype).ratio
            ri, ti = invariant(d, after)
            c = Measure(
                max(r, ri), f"weight on {other} against {ctx.device}: ratio {r:.3g}; after one step there: {ti}"
            )
    ctx.measured.record("to_device", n, c.ratio, params, dtype)
    return c


def declared_casts(d: Declaration) -> tuple[str, ...]:
    """float32 and float64 (every module claims them), and the declared half dtypes."""
    return ("float32", "float64", *d.dtypes)


def _scenarios(ctx: Ctx, check: str) -> list[tuple[Params, str]]:
    """The points of ``check``: every size of the profile (every other one on quick), at each
    optimiser or cast, seeded by the run's seed plus n, in the dtype the modules are built in
    (float32, torch's default, when it is under test; a cast always starts from float32)."""
    kind = ctx.target.kind
    dtype = "float32" if "float32" in ctx.dtypes or check == "dtype_cast" else ctx.dtypes[0]
    steps = ctx.profile.lifecycle_steps
    axis = {
        "weight_decay": [{"opt": i, "steps": steps} for i in range(len(OPTIMISERS))],
        "dtype_cast": [{"cast": i} for i in range(len(CASTS))],
    }.get(check, [{}])
    sizes = ctx.profile.pick(kind.sizes[1::2], kind.sizes, kind.sizes)
    return [
        ({k: np.array([float(v)]) for k, v in {"n": n, **a, "seed": ctx.seed + n}.items()}, dtype)
        for n in sizes
        for a in axis
    ]


def _check(check: str, q: Quantity, what: str) -> Callable[[Ctx], list[Evidence]]:
    """``check`` scanned over its scenarios (their points are not in the kind's domain: no domain
    filter), with its series; ``what`` the step it exercises ({other}: the second device)."""

    def run(ctx: Ctx) -> list[Evidence]:
        plain = replace(ctx, target=replace(ctx.target, domain=None))
        evidence = scan(plain, check, q, iter(_scenarios(ctx, check)))
        return with_series(plain, check, q, evidence, what.format(other=ctx.other_device))

    return run


_STATEMENTS: dict[str, tuple[ClaimKind, str, str]] = {  # {what}: the invariant; {other}: the second device
    "weight_decay": (
        "bound",
        "from the module's own initialisation, after each of several SGD, Adam and AdamW steps with weight decay "
        "the weight is {what}",
        "the weight's ratio against its invariant ({what}), worst over SGD, Adam and AdamW steps",
    ),
    "state_dict": (
        "identity",
        "a state_dict loaded into a fresh module gives the same weight, before and after one more step, and the "
        "weight is {what}",
        "||reloaded weight - saved weight||_F / (n eps ||saved weight||_F), before and after one step",
    ),
    "dtype_cast": (
        "bound",
        "after .double(), .float() (and .half(), .bfloat16() where declared) the weight has that dtype and is {what} "
        "on that dtype's unit roundoff, before and after one step; an undeclared cast that fails is not applicable",
        "the cast weight's ratio against its invariant ({what}) on that dtype's unit roundoff",
    ),
    "to_device": (
        "identity",
        "after .to({other!r}) the weight lives there, equals the weight before the move and is {what} after one "
        "step there",
        "||weight on {other!r} - weight before the move||_F / (n eps ||weight||_F)",
    ),
}
"""Each lifecycle check's claim kind, statement and measured ratio."""
_CHECKS: dict[str, tuple[Quantity, str]] = {  # the quantity and the step it exercises
    "weight_decay": (q_weight_decay, "optimiser steps with weight decay (SGD, Adam, AdamW)"),
    "state_dict": (q_state_dict, "state_dict save, load into a fresh module, one step"),
    "dtype_cast": (q_dtype_cast, ".double(), .float(), .half(), .bfloat16()"),
    "to_device": (q_to_device, ".to({other!r})"),
}


def plan(target: Target | None, other_device: str | None) -> list[PlanEntry]:
    """The lifecycle checks the target's declaration asks for (none without a module factory;
    ``to_device`` only with a second device)."""
    d = declaration_of(target) if target is not None else None
    if d is None or d.module is None:
        return []
    what = (
        f"singular values in [{d.sigma[0]:g}, {d.sigma[1]:g}]"
        if d.sigma is not None
        else "orthogonal (test ratio <= 30)"
    ) + " and not degenerate (no zero or repeated columns)"
    out: list[PlanEntry] = []
    for name, (claim_kind, statement, measures) in _STATEMENTS.items():
        if name in d.lifecycle and (name != "to_device" or other_device is not None):
            text, ratio = (t.format(what=what, other=other_device) for t in (statement, measures))
            q, step = _CHECKS[name]
            out.append(PlanEntry(name, claim_kind, text, _check(name, q, step), q, measures=ratio))
    return out
