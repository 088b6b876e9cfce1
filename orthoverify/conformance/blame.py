"""Blame the operation: which torch operation, not the user's formula, makes an AD-mode check fail.

When ``jvp`` or a second-order check (:data:`BLAMED`) is refuted at a case where the map's own
first-order derivatives pass (its forward or orthogonality, its gradient, and for second order its
jvp: measured again here, at that case), the case is re-run in the target's process with one
suspect torch operation at a time computed by a reference formulation
(:mod:`~orthoverify.conformance.substitute`). The target's process returns the raw value only; the
check's own quantity (same ratio, same threshold) is computed here. When exactly one substitution
makes the case pass, that operation is the measured cause: the evidence's note and its
``data["blame"]`` say so, with the ratios before and after, and that the replacement is a
workaround measured to pass. Nothing is matched against known bugs; the verdict stays "refuted"
(the map as executed is wrong; a baseline can acknowledge it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from orthoverify.conformance import checks as ck
from orthoverify.conformance import modes
from orthoverify.conformance.kinds import Params
from orthoverify.conformance.substitute import SUBSTITUTIONS
from orthoverify.engine.model import Evidence
from orthoverify.engine.ratios import THRESHOLD

BLAMED: dict[str, str] = {"jvp": "forward mode (torch.func.jvp)", **modes.SECOND_ORDER}
"""The AD-mode checks whose failures are attributed, and the mode each exercises."""


def quantity(check: str, substitute: str = "") -> Callable[[ck.Ctx, Params, str], ck.Measure]:
    """The quantity of ``check`` with the target's ``substitute`` operation replaced ("" for none)."""
    if check == "jvp":
        return lambda ctx, params, dtype: ck.q_jvp(ctx, params, dtype, substitute)
    return modes.q_second(check, substitute)


def first_order(ctx: ck.Ctx, check: str, params: Params) -> dict[str, float]:
    """The ratios, at ``params`` in float64, of the checks a failure of ``check`` would follow from:
    forward (orthogonal for a kind without a reference), gradient, and jvp under a second-order mode."""
    kind = ctx.target.kind
    names = ["forward"] if kind.reference is not None else ["orthogonal"] if kind.orthogonal_output else []
    names += ["gradient"] + (["jvp"] if check != "jvp" else [])
    out: dict[str, float] = {}
    for name in names:
        out[name] = ck.QUANTITIES[name](ctx, params, "float64").ratio
        if not out[name] <= THRESHOLD:
            break
    return out


def _fmt(r: float) -> str:
    return f"{r:.3g}" if math.isfinite(r) else "inf (the call failed)"


def attribute(ctx: ck.Ctx, check: str, params: Params, dtype: str) -> dict[str, Any] | None:
    """The measured attribution of a failure of ``check`` at ``params`` (see the module's
    docstring): ``blame`` data, or None when the failure does not reproduce as a wrong number (a
    call that raised, died or hung is no wrong number). ``operation`` is set only when exactly one
    substitution makes the case pass."""
    before = quantity(check)(ctx, params, dtype).ratio
    if not math.isfinite(before) or before <= THRESHOLD:  # passes again, or a failed call: no wrong number to blame
        return None
    first = first_order(ctx, check, params)
    data: dict[str, Any] = {"ratio_before": before, "first_order": first}
    if not all(r <= THRESHOLD for r in first.values()):
        bad = next(k for k, r in first.items() if not r <= THRESHOLD)
        data["not_tried"] = f"{bad} fails at this case too (ratio {_fmt(first[bad])}): the formula itself is suspect"
        return data
    after = {op: quantity(check, op)(ctx, params, dtype).ratio for op in SUBSTITUTIONS}
    data["ratios_after"] = after
    passing = [op for op, r in after.items() if r <= THRESHOLD]
    if len(passing) != 1:
        data["not_attributed"] = f"no single substitution makes it pass (passing with: {', '.join(passing) or 'none'})"
        return data
    op = passing[0]
    others = "; ".join(f"{o} replaced: {_fmt(r)}" for o, r in after.items() if o != op)
    passed = ", ".join(f"{k} {_fmt(r)}" for k, r in first.items())
    data.update(
        operation=op,
        workaround=SUBSTITUTIONS[op],
        ratio_after=after[op],
        cause=(
            f"{op} under {BLAMED[check]}, not the user's formula; workaround measured to pass: "
            f"{SUBSTITUTIONS[op]} (ratio {_fmt(before)} -> {_fmt(after[op])})"
        ),
        sentence=(
            f"Cause measured: {op} under {BLAMED[check]}. At this case the map's first-order derivatives pass "
            f"({passed}), so the user's formula is not at fault. Re-run in the target's process with {op} "
            f"computed by {SUBSTITUTIONS[op]} (a torch function mode; nothing else changed), the same case "
            f"passes: ratio {_fmt(before)} before, {_fmt(after[op])} after (threshold {THRESHOLD:g}); with "
            f"another operation replaced it still fails ({others}). Workaround measured to pass: "
            f"{SUBSTITUTIONS[op]}."
        ),
    )
    return data


def blame_evidence(ctx: ck.Ctx, check: str, evidence: list[Evidence]) -> list[Evidence]:
    """``evidence`` of ``check`` with the attribution of each refuted row's counterexample (a fragile
    one is left alone) in ``data["blame"]`` and, when one operation is the measured cause, its note."""
    for ev in evidence:
        cx = ev.counterexample
        if cx is None or "fragile" in ev.data:
            continue
        params, dtype = ck.params_of(cx.inputs)
        data = attribute(ctx, check, params, dtype)
        if data is None:
            continue
        for other in _other_failures(ctx, check, dtype, params) if "not_tried" in data else []:
            again = attribute(ctx, check, other, dtype)  # a failing case where the first order passes
            if again is not None and "not_tried" not in again:
                n = ctx.target.kind.view_shape(other)[0]
                again["at"] = ck.inputs_of(other, dtype)
                again["counterexample_first_order"] = data["first_order"]
                if "sentence" in again:
                    again["sentence"] = (
                        f"{again['sentence']} (Measured at another failing case, n = {n} (data['blame']['at']): at "
                        f"the counterexample itself a first-order check fails too: {data['not_tried']}.)"
                    )
                data = again
                break
        ev.data["blame"] = data
        if "sentence" in data:
            ev.notes = f"{data['sentence']} {ev.notes}".strip()
    return evidence


def _other_failures(ctx: ck.Ctx, check: str, dtype: str, seen: Params, most: int = 3) -> list[Params]:
    """Up to ``most`` other failing cases of ``check`` in ``dtype`` the scan recorded (a wrong number,
    not a failed call), smallest first."""
    cases = ctx.measured.get(check, {}).values()
    key = ck.inputs_of(seen, dtype)
    fails = sorted(
        (c for c in cases if c[3] == dtype and math.isfinite(c[1]) and c[1] > THRESHOLD), key=lambda c: (c[0], c[1])
    )
    return [c[2] for c in fails if ck.inputs_of(c[2], dtype) != key][:most]


def blamed(check: str, fn: Callable[[ck.Ctx], list[Evidence]]) -> Callable[[ck.Ctx], list[Evidence]]:
    """The check function ``fn`` of ``check`` followed by :func:`blame_evidence` (``fn`` itself when
    ``check`` is not an AD-mode check)."""
    if check not in BLAMED:
        return fn

    def run(ctx: ck.Ctx) -> list[Evidence]:
        return blame_evidence(ctx, check, fn(ctx))

    return run


__all__ = ["BLAMED", "attribute", "blame_evidence", "blamed", "first_order", "quantity"]
