"""The call's contract: it returns a finite tensor of the declared shape and dtype (``output``),
changes nothing but its output (``side_effects``), and never turns NaN input into a finite
answer (``bad_input``).
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from orthoverify.conformance.context import DTYPES, Ctx, _ev, blocked, failing, inputs_of, remeasured
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.engine.model import Counterexample, Evidence
from orthoverify.engine.ratios import Measure
from orthoverify.isolation.calls import CallFailure, checked
from orthoverify.isolation.runner import FLOOD_BYTES
from orthoverify.isolation.wire import op_forward


def measure_output(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """The call at ``params`` in ``dtype``: it fails when the call fails (raises, dies, hangs, or
    returns no finite tensor of the declared shape and dtype)."""
    res = ctx.run(params, dtype)
    if isinstance(res, CallFailure):
        return remeasured(res.kind != "not-run", str(res), measured=res.kind != "not-run")
    return remeasured(False, "a finite tensor of the declared shape and dtype")


def check_output(ctx: Ctx) -> list[Evidence]:
    """Typical parameters, every size: the call returns a finite tensor of the declared shape and dtype."""
    kind = ctx.target.kind
    out = []
    for dtype in ctx.dtypes:
        rng = ctx.rng("output", dtype)
        t0 = time.perf_counter()
        count, failure = 0, None
        for n in kind.sizes:
            params = kind.draw(rng, n, 1.0)
            if ctx.outside(params) is not None:
                continue
            count += 1
            res = ctx.run(params, dtype)  # measure_output's call
            if isinstance(res, CallFailure):
                failure = (params, res)
                break
        ev = _ev(ctx, "output", dtype, "float", cases=count, seconds=time.perf_counter() - t0, passed=failure is None)
        ev.worst_ratio = None
        if failure is not None:
            params, res = failure
            again = ctx.run(params, dtype) if res.kind != "not-run" else res
            if res.kind == "not-run":
                ctx.failed_output[dtype] = str(res)[:200]
                ev.notes = f"not run: {res.message}"
            elif isinstance(again, CallFailure):  # it fails again: the checks that need this output are not run
                ctx.failed_output[dtype] = str(res)[:200]
                ev.counterexample = Counterexample(inputs_of(params, dtype), "the call", str(res), 16, "output")
                ev.notes = (
                    f"the target failed: {res}. The checks that need this output in {dtype} are not run (one "
                    "finding per cause)."
                )
            else:  # it did not fail again: an unconfirmed failure never stops the other checks
                ev.counterexample = Counterexample(inputs_of(params, dtype), "the call", str(res), 16, "output")
                ev.notes = (
                    f"the target failed once: {res}; the same call made again returned a finite tensor of the "
                    "declared shape and dtype, so the checks that need this output still run."
                )
        out.append(ev)
    return out


def measure_side_effects(ctx: Ctx, params: Params, dtype: str, recorded: str = "") -> Measure:
    """A call at ``params`` in ``dtype`` and what the session has seen: it fails when the call
    changes its arguments or the working directory, when the recorded finding names a side effect
    seen earlier in this session, or when a recorded flood goes on (the session has written
    anything: what a call writes may reach the capture after its answer, so a second call is made
    when nothing has come yet)."""
    args = ctx.target.kind.args(params, DTYPES[dtype], "cpu")
    res = ctx.calls.request(op_forward, args, {}, ctx.timeout, ctx.device)
    side = [] if isinstance(res, CallFailure) else list(res.side)
    seen = ctx.calls.observed
    if "floods" in recorded and seen.written == 0:  # what the call wrote may come with the next answer
        ctx.calls.request(op_forward, args, {}, ctx.timeout, ctx.device)
    earlier = [v for v in seen.side.values() if v and v in recorded]
    bad = bool(side) or bool(earlier) or ("floods" in recorded and seen.written > 0)
    more = [("bytes written to stdout/stderr", str(seen.written))]
    return remeasured(bad, "; ".join(side + earlier) or "no side effect of the call", more=more)


def check_side_effects(ctx: Ctx) -> list[Evidence]:
    """A call changes nothing but its output: not its arguments (the target gets copies, so a
    changed argument is seen, not suffered), not the working directory, and it does not flood
    stdout/stderr (more than FLOOD_BYTES over the run). Covers every call of the run so far, and
    calls of its own at typical parameters of every size."""
    kind = ctx.target.kind
    out = []
    for dtype in ctx.dtypes:
        t0 = time.perf_counter()
        first: tuple[Params, str] | None = None
        count = 0
        rng = ctx.rng("side", dtype)
        for n in kind.sizes:
            params = kind.draw(rng, n, 1.0)
            if ctx.outside(params) is not None:
                continue
            res = ctx.calls.request(op_forward, kind.args(params, DTYPES[dtype], "cpu"), {}, ctx.timeout, ctx.device)
            if isinstance(res, CallFailure):
                continue
            count += 1
            if res.side and first is None:
                first = (params, "; ".join(res.side))
        ev = _ev(ctx, "side_effects", dtype, "float", cases=count, seconds=time.perf_counter() - t0)
        ev.worst_ratio, ev.threshold = None, None
        seen = ctx.calls.observed
        problems = [] if first is None else [first[1]]
        problems += [v for k, v in seen.side.items() if first is None or k not in first[1]]
        if seen.written > FLOOD_BYTES:
            problems.append(f"floods its output: {seen.written} bytes written to stdout/stderr")
        ev.passed = not problems and count > 0
        ev.data["written_bytes"] = seen.written
        if seen.written:
            ev.data["written_head"] = seen.head[:500]
        ev.notes = (
            "; ".join(problems)
            if problems
            else f"arguments and working directory unchanged; {seen.written} bytes written to stdout/stderr"
        )
        if count == 0:
            ev.notes += " (not run: no call succeeded)"
        if problems:
            params = dict(first[0]) if first is not None else kind.draw(ctx.rng("side", dtype), kind.sizes[0], 1.0)
            ev.counterexample = Counterexample(
                inputs_of(params, dtype), "side effects of a call", ev.notes, 16, "side_effects"
            )
        out.append(ev)
    return out


def nan_params(kind: Kind, params: Params) -> tuple[str, dict[str, np.ndarray]]:
    """``params`` with its first parameter all NaN (every entry: a target may ignore some, a
    diagonal or a triangle), and that parameter's name."""
    name = next(iter(params))
    bad = {k: np.array(v, copy=True) for k, v in params.items()}
    bad[name][...] = np.nan
    return name, bad


def measure_bad_input(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """The call at the NaN parameters ``params``: it passes when the target raises or returns
    NaN/Inf, fails when it returns an all-finite result (or dies or hangs); ratio NaN when it
    was never called (not run)."""
    got = ctx.remote(op_forward, *ctx.target.kind.args(params, DTYPES[dtype], "cpu"))
    res = got if isinstance(got, CallFailure) else checked(got[0] if got else None, finite=False)
    if isinstance(res, CallFailure) and res.kind == "not-run":
        return remeasured(False, f"was not called ({res.message[:160]})", measured=False)
    if isinstance(res, CallFailure) and res.kind in ("died", "timeout"):
        return remeasured(True, f"{res.kind}: {res.message[:160]}", math.inf)
    if isinstance(res, CallFailure):
        return remeasured(False, f"raised ({res.message[:160]})", 0.0)
    if not bool(torch.isfinite(res.detach()).all()):
        return remeasured(False, "returned NaN/Inf (propagated)", 0.0)
    return remeasured(True, "returned an all-finite result for a NaN input (the NaN was silently absorbed)", math.inf)


def check_bad_input(ctx: Ctx) -> list[Evidence]:
    """A parameter full of NaN must raise or propagate (NaN out), never come back as a finite answer."""
    kind = ctx.target.kind
    out = []
    for dtype in ctx.dtypes:
        stop = blocked(ctx, "bad_input", dtype)
        if stop is not None:
            out.append(stop)
            continue
        name, bad = nan_params(kind, kind.draw(ctx.rng("bad", dtype), kind.sizes[1], 1.0))
        t0 = time.perf_counter()
        m = measure_bad_input(ctx, bad, dtype)
        ran = not m.not_run
        seconds = time.perf_counter() - t0
        ev = _ev(ctx, "bad_input", dtype, "float", cases=int(ran), seconds=seconds, passed=not failing(m) and ran)
        ev.worst_ratio, ev.threshold = None, None
        ev.notes = f"{name} all NaN: the target {m.display}" + ("" if ran else " (not run: no verdict)")
        if failing(m):
            cx = Counterexample(inputs_of(bad, dtype), "output for a NaN input", m.display, 16, "bad_input")
            ev.counterexample = cx
        out.append(ev)
    return out
