"""Blame the operation: which torch operation, not the user's formula, makes an AD-mode check fail.

When ``jvp`` or a second-order check (:data:`BLAMED`) is refuted at a case where the map's own
first-order derivatives pass (its forward or orthogonality, its gradient, and for second order its
jvp: measured again here, at that case), the case is re-run in the target's process with one
suspect torch operation at a time computed by a reference formulation
(:mod:`~orthoverify.isolation.substitute`). The target's process returns the raw value only; the
check's own quantity (same ratio, same threshold) is computed here. When exactly one substitution
makes the case pass, that operation is the measured cause: the evidence's note and its
``data["blame"]`` say so, with the ratios before and after, and that the replacement is a
workaround measured to pass; when none does, the note says that no single operation explains it.
Nothing is matched against known bugs; the verdict stays "refuted" (the map as executed is wrong;
a baseline can acknowledge it).

The derivative checks in a lower precision (``gradient_float32``, ``jvp_float32``,
``<mode>_float32``, ``gradient_<half>``, ``jvp_<half>``) are blamed the same way, in their own
dtype and on their own allowance, where the failure is that dtype's only: the same check in
float64 (its *sibling*) must pass at the case (else the failure is the float64 one's, which is
blamed there and lists this check under it: one finding per cause), and the map's first-order
derivatives in that dtype must pass (its forward, then its gradient and, for second order, its
jvp in that dtype).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from orthoverify.conformance.context import Ctx, Quantity, inputs_of, params_of
from orthoverify.conformance.derivatives import HALF, SECOND_ORDER, at_dtype, quantity, split
from orthoverify.conformance.kinds import Params
from orthoverify.engine.model import Evidence
from orthoverify.engine.ratios import THRESHOLD, Measure
from orthoverify.isolation.substitute import SUBSTITUTIONS

_MODES = {"gradient": "reverse mode (backward)", "jvp": "forward mode (torch.func.jvp)", **SECOND_ORDER}
_LOW = [(m, dt) for dt in ("float32", *HALF) for m in _MODES if dt == "float32" or m in ("gradient", "jvp")]
BLAMED: dict[str, str] = {
    **{check: what for check, what in _MODES.items() if check != "gradient"},
    **{f"{m}_{dt}": f"{_MODES[m]} in {dt}" for m, dt in _LOW},
}
"""The AD-mode checks whose failures are attributed, and the mode each exercises: in float64, and
the derivative checks in float32 and the half-precision dtypes (:mod:`~orthoverify.conformance.checks_train`)."""


def first_order(ctx: Ctx, check: str, params: Params, quantities: Mapping[str, Quantity]) -> dict[str, float]:
    """The ratios, at ``params``, of the checks a failure of ``check`` would follow from, in the
    check's own dtype (stopping at the first that fails): forward (orthogonal for a kind without a
    reference; in a half-precision dtype the low_precision forward), gradient, and jvp under a
    second-order mode. ``quantities``: the planned checks' test ratios, by name."""
    kind = ctx.target.kind
    base, dtype = split(check)
    derivs = ["gradient", "jvp"][: {"gradient": 0, "jvp": 1}.get(base, 2)]
    forward = ["forward"] if kind.reference is not None else ["orthogonal"] if kind.orthogonal_output else []
    if dtype == "float64":
        names = forward + derivs
    elif dtype == "float32":
        names = forward + [f"{d}_float32" for d in derivs]
    else:
        names = ["low_precision"] + [f"{d}_{dtype}" for d in derivs]
    out: dict[str, float] = {}
    for name in names:
        out[name] = _unrecorded(ctx, quantities[name], params, dtype)
        if not out[name] <= THRESHOLD:
            break
    return out


def _unrecorded(ctx: Ctx, q: Callable[[Ctx, Params, str], Measure], params: Params, dtype: str) -> float:
    """The ratio of ``q`` at ``params`` in ``dtype``, leaving the cases the checks recorded (their
    series, smallest counterexamples, later blame) as they were: a measurement made for blame is no
    case of the check it measures."""
    kept = {k: dict(v) for k, v in ctx.measured.items()}
    try:
        return q(ctx, params, dtype).ratio
    finally:
        ctx.measured.clear()
        ctx.measured.update(kept)


def sibling(ctx: Ctx, check: str, params: Params, quantities: Mapping[str, Quantity]) -> float | None:
    """The ratio of the float64 check of a lower-precision ``check`` at ``params`` rounded to that
    dtype (the case that check measured), or None for a float64 check."""
    base, dtype = split(check)
    if dtype == "float64":
        return None
    return _unrecorded(ctx, quantities[base], at_dtype(params, dtype), "float64")


def _fmt(r: float) -> str:
    return f"{r:.3g}" if math.isfinite(r) else "inf (the call failed)"


def attribute(
    ctx: Ctx, check: str, params: Params, dtype: str, quantities: Mapping[str, Quantity]
) -> dict[str, Any] | None:
    """The measured attribution of a failure of ``check`` at ``params`` (see the module's
    docstring): ``blame`` data, or None when the failure does not reproduce as a wrong number (a
    call that raised, died or hung is no wrong number). ``operation`` is set only when exactly one
    substitution makes the case pass."""
    before = quantity(check)(ctx, params, dtype).ratio
    if not math.isfinite(before) or before <= THRESHOLD:  # passes again, or a failed call: no wrong number to blame
        return None
    base, low = split(check)
    data: dict[str, Any] = {"ratio_before": before}
    passed = ""
    if low != "float64":
        s64 = sibling(ctx, check, params, quantities)
        assert s64 is not None
        data.update(dtype=low, sibling={base: s64}, first_order={})
        if not s64 <= THRESHOLD:
            data["follows"] = base
            data["not_tried"] = (
                f"{base} fails at this case in float64 too (ratio {_fmt(s64)}): the failure is not {low}'s own; "
                f"blamed as {base}'s, whose finding lists this check"
            )
            return data
        passed = f"the same check in float64 passes (ratio {_fmt(s64)}) and in {low} "
    first = first_order(ctx, check, params, quantities)
    data["first_order"] = first
    if not all(r <= THRESHOLD for r in first.values()):
        bad = next(k for k, r in first.items() if not r <= THRESHOLD)
        data["follows"] = bad
        data["not_tried"] = f"{bad} fails at this case too (ratio {_fmt(first[bad])}): " + (
            "the formula itself is suspect" if low == "float64" else "this failure follows from that one"
        )
        return data
    after = {op: _unrecorded(ctx, quantity(check, op), params, dtype) for op in SUBSTITUTIONS}
    data["ratios_after"] = after
    passing = [op for op, r in after.items() if r <= THRESHOLD]
    passed += "the map's first-order derivatives pass (" + ", ".join(f"{k} {_fmt(r)}" for k, r in first.items()) + ")"
    where = "" if low == "float64" else f" in {low}, on {low}'s allowance"
    if len(passing) != 1:
        data["not_attributed"] = f"no single substitution makes it pass (passing with: {', '.join(passing) or 'none'})"
        tried = "; ".join(f"{o} replaced: {_fmt(r)}" for o, r in after.items())
        data["sentence"] = (
            f"No single torch operation explains it (measured): at this case {passed}; re-run in the target's "
            f"process with each suspect operation computed by its reference formulation, the case "
            + ("still fails" if not passing else "passes with more than one replaced")
            + f"{where} ({tried}; threshold {THRESHOLD:g}). The cause is the map's own rule under {BLAMED[check]} "
            "or an operation not substituted."
        )
        return data
    op = passing[0]
    others = "; ".join(f"{o} replaced: {_fmt(r)}" for o, r in after.items() if o != op)
    data.update(
        operation=op,
        workaround=SUBSTITUTIONS[op],
        ratio_after=after[op],
        cause=(
            f"{op} under {BLAMED[check]}, not the user's formula; workaround measured to pass: "
            f"{SUBSTITUTIONS[op]} (ratio {_fmt(before)} -> {_fmt(after[op])})"
        ),
        sentence=(
            f"Cause measured: {op} under {BLAMED[check]}. At this case {passed}, so the user's formula is not "
            f"at fault. Re-run in the target's process with {op} computed by {SUBSTITUTIONS[op]} (a torch "
            f"function mode; nothing else changed), the same case passes{where}: ratio {_fmt(before)} before, "
            f"{_fmt(after[op])} after (threshold {THRESHOLD:g}); with another operation replaced it still fails "
            f"({others}). Workaround measured to pass: {SUBSTITUTIONS[op]}."
        ),
    )
    return data


def blame_evidence(
    ctx: Ctx, check: str, evidence: list[Evidence], quantities: Mapping[str, Quantity]
) -> list[Evidence]:
    """``evidence`` of ``check`` with the attribution of each refuted row's counterexample (a fragile
    one is left alone) in ``data["blame"]`` and, when one operation is the measured cause, its note."""
    for ev in evidence:
        cx = ev.counterexample
        if cx is None or "fragile" in ev.data:
            continue
        params, dtype = params_of(cx.inputs)
        data = attribute(ctx, check, params, dtype, quantities)
        if data is None:
            continue
        search = "not_tried" in data and data.get("follows") != split(check)[0]  # not when float64's own
        for other in _other_failures(ctx, check, dtype, params) if search else []:
            again = attribute(ctx, check, other, dtype, quantities)  # a failing case where the first order passes
            if again is not None and "not_tried" not in again:
                n = ctx.target.kind.view_shape(other)[0]
                again["at"] = inputs_of(other, dtype)
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


def _other_failures(ctx: Ctx, check: str, dtype: str, seen: Params, most: int = 3) -> list[Params]:
    """Up to ``most`` other failing cases of ``check`` in ``dtype`` the scan recorded (a wrong number,
    not a failed call), smallest first."""
    cases = ctx.measured.get(check, {}).values()
    key = inputs_of(seen, dtype)
    fails = sorted(
        (c for c in cases if c[3] == dtype and math.isfinite(c[1]) and c[1] > THRESHOLD), key=lambda c: (c[0], c[1])
    )
    return [c[2] for c in fails if inputs_of(c[2], dtype) != key][:most]


def blamed(
    check: str, fn: Callable[[Ctx], list[Evidence]], quantities: Mapping[str, Quantity]
) -> Callable[[Ctx], list[Evidence]]:
    """The check function ``fn`` of ``check`` followed by :func:`blame_evidence` (``fn`` itself when
    ``check`` is not an AD-mode check), measuring with the plan's ``quantities`` (name -> test ratio)."""
    if check not in BLAMED:
        return fn

    def run(ctx: Ctx) -> list[Evidence]:
        return blame_evidence(ctx, check, fn(ctx), quantities)

    return run


__all__ = ["BLAMED", "attribute", "blame_evidence", "blamed", "first_order", "quantity", "sibling", "split"]
