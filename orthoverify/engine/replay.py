"""Replaying a recorded counterexample from a result file.

The counterexample's inputs (decimal strings) are parsed exactly and the breaking quantity is
recomputed by the check that found it, in float64 and at high precision (or exactly).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from orthoverify.backends import get_backend
from orthoverify.engine.model import Counterexample
from orthoverify.engine.ratios import Measure
from orthoverify.engine.registry import DEFAULT_MODULES, get_registry
from orthoverify.engine.result import load_json
from orthoverify.errors import ReplayError


@dataclass(frozen=True)
class Replay:
    """The quantity of a counterexample, recomputed."""

    claim: str
    counterexample: Counterexample
    float64: Measure | None
    high_precision: Measure
    digits: int | str
    reproduced: bool
    rounded: list[tuple[str, str]] = field(default_factory=list)
    """For an exact counterexample: the quantity in float64 and at 50 digits where the check
    can evaluate it in floating point (label, display), or why not."""

    def lines(self) -> list[str]:
        cx = self.counterexample
        out = [f"claim: {self.claim}", f"check: {cx.check}", f"quantity: {cx.quantity}"]
        if self.float64 is not None:
            out.append(f"float64: {self.float64.display}")
        out += [f"{label}: {text}" for label, text in self.rounded]
        out.append(f"{'exact' if self.digits == 'exact' else f'{self.digits} digits'}: {self.high_precision.display}")
        out.append(f"recorded: {cx.value}" + (f" (threshold {cx.threshold:g})" if cx.threshold is not None else ""))
        out.append("reproduced: yes" if self.reproduced else "reproduced: NO")
        return out


def replay_counterexample(claim_id: str, cx: Counterexample, *, modules: tuple[str, ...] = DEFAULT_MODULES) -> Replay:
    """Recompute a counterexample's quantity with the check that recorded it."""
    registry = get_registry(modules)
    if claim_id not in registry:
        raise ReplayError(f"claim {claim_id!r} is not registered in this version of orthoverify")
    check = registry[claim_id].check(cx.check)
    thr = cx.threshold if cx.threshold is not None else 30.0
    if cx.precision_digits == "exact":
        hp = check.replay(cx.inputs, get_backend("sympy"))
        rounded = [(label, _rounded(check, cx.inputs, name)) for label, name in _ROUNDED]
        return Replay(claim_id, cx, None, hp, "exact", not (hp.ratio <= thr), rounded)
    digits = int(cx.precision_digits)
    hp = check.replay(cx.inputs, get_backend(f"mpmath-{digits}"))
    f64 = check.replay(cx.inputs, get_backend("numpy-float64"))
    reproduced = not (hp.ratio <= thr)
    return Replay(claim_id, cx, f64, hp, digits, reproduced)


_ROUNDED = (("float64", "numpy-float64"), ("50 digits", "mpmath-50"))


def _decimal(x: Any, digits: int) -> Any:
    """Exact rational strings ``p/q`` (recursively) as decimal strings with ``digits`` digits."""
    if isinstance(x, list):
        return [_decimal(v, digits) for v in x]
    if isinstance(x, str) and "/" in x:
        try:
            q = Fraction(x)
        except (ValueError, ZeroDivisionError):
            return x
        import mpmath

        with mpmath.workdps(digits + 5):
            return mpmath.nstr(mpmath.mpf(q.numerator) / q.denominator, digits)
    return x


def _rounded(check: Any, inputs: dict[str, Any], backend: str) -> str:
    """An exact counterexample's quantity evaluated in floating point, or why it cannot be."""
    b = get_backend(backend)
    digits = 17 if b.digits is None or b.digits < 17 else b.digits + 10
    try:
        m = check.replay({k: _decimal(v, digits) for k, v in inputs.items()}, b)
    except Exception as exc:  # the check is exact-only: say so, never fail the replay on it
        return f"not evaluated ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})"
    return m.display


def replay_from_file(path: str | Path, claim_id: str, *, modules: tuple[str, ...] = DEFAULT_MODULES) -> Replay:
    """Replay the counterexample of ``claim_id`` recorded in the result file at ``path``."""
    data: dict[str, Any] = load_json(path)
    for c in data["claims"]:
        if c["id"] == claim_id:
            if c.get("counterexample") is None:
                raise ReplayError(f"claim {claim_id} has no counterexample in {path} (verdict {c['verdict']})")
            if claim_id.startswith("conformance."):
                from orthoverify.conformance.replay import replay_conformance

                return replay_conformance(data, claim_id, c["counterexample"])  # type: ignore[return-value]
            return replay_counterexample(claim_id, Counterexample.from_json(c["counterexample"]), modules=modules)
    raise ReplayError(f"claim {claim_id} is not in {path}")
