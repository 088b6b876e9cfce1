"""Replaying a conformance counterexample: load the target the user names (never on the result
file's word alone), rebuild the parameters from their decimal strings, and re-run the check's
quantity in each dtype."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from orthoverify.errors import ReplayError


@dataclass(frozen=True)
class ConformanceReplay:
    """A re-run of a target on a recorded failing case."""

    claim: str
    target: str
    values: list[tuple[str, str]]
    recorded: str
    reproduced: bool

    def lines(self) -> list[str]:
        out = [f"claim: {self.claim}", f"target: {self.target}"]
        out += [f"{label}: {text}" for label, text in self.values]
        out.append(f"recorded: {self.recorded}")
        out.append("reproduced: yes" if self.reproduced else "reproduced: NO")
        return out


def replay_conformance(
    data: dict[str, Any], claim_id: str, cx: dict[str, Any], *, target: str | None = None
) -> ConformanceReplay:
    """Re-run the quantity of a recorded conformance failure on ``target``.

    The target is the one the user names, never the one the file names on its own word: a result
    file is untrusted, and loading a target imports and runs its code. Without ``target`` this
    raises a ReplayError that says which target the file was recorded on and how to name it. The
    target runs in a process of its own, as under ``validate``."""
    from orthoverify.conformance import checks as ck
    from orthoverify.conformance import open_target
    from orthoverify.conformance.kinds import KINDS

    meta = data.get("validate")
    if not isinstance(meta, dict):
        raise ReplayError(f"{claim_id}: the result names no validation target (no 'validate' key)")
    recorded, kind = str(meta.get("target", "?"))[:200], meta.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise ReplayError(f"{claim_id}: validate.kind {str(kind)[:40]!r} is not a known kind ({', '.join(KINDS)})")
    if target is None:
        raise ReplayError(
            f"this counterexample was recorded on the target {recorded!r} (kind {kind}); replaying it imports and "
            f"runs that target's code, so name the target yourself: --target {recorded!r}"
        )
    dtypes = meta.get("dtypes")
    if dtypes is not None and not (isinstance(dtypes, list) and all(d in ck.DTYPES for d in dtypes)):
        raise ReplayError(f"{claim_id}: validate.dtypes must be a list of {', '.join(ck.DTYPES)}")
    loaded = open_target(target, kind)  # in a process of its own
    try:
        return _replay(loaded, meta, claim_id, cx)
    finally:
        if loaded.runner is not None:
            loaded.runner.close()


def _replay(loaded: Any, meta: dict[str, Any], claim_id: str, cx: dict[str, Any]) -> ConformanceReplay:
    from orthoverify.conformance import checks as ck
    from orthoverify.conformance.calls import CallFailure

    check = str(cx["check"])
    params, dtype = ck.params_of(cx["inputs"])
    ctx = ck.Ctx(loaded, tuple(meta.get("dtypes") or (dtype,)))
    values: list[tuple[str, str]] = []
    failing = False
    if check in ck.QUANTITIES:
        dtypes = [dtype] if check == "float32" else sorted({dtype, "float64"}, key=lambda d: d != dtype)
        for dt in dtypes:
            c = ck.QUANTITIES[check](ctx, params, dt)
            values.append((f"target in {dt}", c.display))
            failing = failing or (dt == dtype and not (c.ratio <= 30.0))
        if check == "forward" and loaded.kind.reference is not None:
            out = ctx.run(params, dtype)
            if not isinstance(out, CallFailure):
                r = ck.agreement(ck.as_np(out), ck.reference_np(loaded.kind, params, 50), ck.EPS[ck.DTYPES[dtype]])
                values.append(("against the 50-digit reference", f"ratio {r:.6g}"))
    elif check == "coverage" and "Q" in params:
        import numpy as np

        q = params["Q"]
        n = q.shape[0]
        tries = [ck._reach(ctx, q, np.random.default_rng(s).standard_normal((n, n)) * 0.1, 200) for s in range(3)]
        dist = min((t for t in tries if isinstance(t, float)), default=math.inf)
        values.append(("min ||f(X) - Q||_F over 3 L-BFGS starts (float64)", f"{dist:.6g}"))
        failing = not (dist < 1e-6)
    elif check == "coverage":
        out = ctx.run(params, dtype)
        text = str(out) if isinstance(out, CallFailure) else "returned a tensor"
        values.append((f"target in {dtype} at the preimage", text))
        failing = isinstance(out, CallFailure)
        if not isinstance(out, CallFailure):
            ref = ck.reference_np(loaded.kind, params) if loaded.kind.reference is not None else None
            if ref is not None:
                r = ck.agreement(ck.as_np(out), ref, ck.EPS[ck.DTYPES[dtype]])
                values.append(("||f(preimage) - Q|| ratio", f"{r:.6g}"))
                failing = not (r <= 30.0)
    elif check == "side_effects":
        from orthoverify.conformance.isolate import op_forward

        reply = ctx.calls.request(op_forward, loaded.kind.args(params, ck.DTYPES[dtype], "cpu"), {}, ctx.timeout, "cpu")
        side = [] if isinstance(reply, CallFailure) else reply.side
        values.append((f"target in {dtype}", "; ".join(side) or "no side effect of the call"))
        seen = ctx.calls.observed
        values.append(("bytes written to stdout/stderr", str(seen.written)))
        failing = bool(side) or ("floods" in str(cx.get("value", "")) and seen.written > 0)
    else:  # output, bad_input: re-run the call
        from orthoverify.conformance.calls import call

        res = call(loaded.fn, *loaded.kind.args(params, ck.DTYPES[dtype], "cpu"), finite=(check != "bad_input"))
        if isinstance(res, CallFailure):
            values.append((f"target in {dtype}", str(res)))
            failing = check == "output"
        else:
            finite = bool(res.detach().isfinite().all())
            values.append((f"target in {dtype}", "finite output" if finite else "non-finite output"))
            failing = check == "bad_input" and finite
    return ConformanceReplay(claim_id, loaded.spec, values, str(cx.get("value", "")), failing)
