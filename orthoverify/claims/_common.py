"""The vocabulary every claim family shares: backend sets, the exact backend, arrays of SymPy
symbols, and the rigorous (Arb enclosure) checks. A name used by two families lives here, once."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import FLOAT_BACKENDS, Array, Backend, get_backend, rigorous_backend_names
from orthoverify.engine.checks import Case, FunctionCheck, Outcome, RunContext
from orthoverify.engine.ratios import Measure
from orthoverify.engine.templates import EXACT as EXACT  # the templates' backend sets, re-exported
from orthoverify.engine.templates import TORCH as TORCH

FLOAT = FLOAT_BACKENDS
"""NumPy and torch in float32 and float64."""
FLOAT_HP = (*FLOAT_BACKENDS, "mpmath")
"""The float backends and 50-digit mpmath."""

RIGOROUS = rigorous_backend_names()
"""Where rigorous checks run: flint when installed, else mpmath (on which they record a skip)."""
RIGOROUS_SIZES = (4, 8, 16)


def exact_backend() -> Backend:
    """SymPy's exact arithmetic."""
    return get_backend("sympy")


def symbol_array(prefix: str, n: int, m: int | None = None) -> np.ndarray:
    """Real symbols ``prefix0..`` (length n) or ``prefix{i}_{j}`` (n x m), as an object array."""
    if m is None:
        return np.array(sympy.symbols(f"{prefix}0:{n}", real=True), dtype=object).reshape(n)
    return np.array(sympy.symbols(f"{prefix}0:{n}_0:{m}", real=True), dtype=object).reshape(n, m)


def frobenius(b: Backend, x: Array) -> Any:
    """||x||_F: on flint an Arb ball that contains it (every entry's enclosure counted), on
    other backends the value in that arithmetic (how a rigorous counterexample replays)."""
    if b.family == "flint":
        from orthoverify.backends.flint_backend import frobenius_enclosure

        return frobenius_enclosure(x)
    return b.norm(x)


def rigorous_scan(
    ctx: RunContext, cases: Iterable[Case], enclose: Any, *, bound: str, quantity: str, digits: int | None = None
) -> Outcome:
    """Prove ``quantity <= bound`` on every case from the Arb enclosure ``enclose(b, case)``
    (python-flint balls computed from the exact inputs, at ``digits`` when given, else at the
    backend's digits). A case whose whole ball is above the bound is a proved violation (a
    counterexample); one whose ball straddles it is undecided and fails the check without a
    counterexample. Without python-flint the check is skipped."""
    from orthoverify.backends import get_backend
    from orthoverify.backends.flint_backend import INSTALL_HINT, prove_below, upper_bound

    if ctx.backend.family != "flint":
        return Outcome(
            False,
            0,
            notes=f"skipped: {quantity} <= {bound} not proved ({INSTALL_HINT})",
            data={"skipped": "python-flint is not installed"},
        )
    b = ctx.backend if digits is None else get_backend(f"flint-{digits}")
    count, worst_upper, largest = 0, 0.0, "0"
    undecided: list[str] = []
    for case in cases:
        ball = enclose(b, case)
        proof = prove_below(ball, bound)
        count += 1
        if proof.status == "violated":
            value = float(ball.mid())
            display = f"{quantity} in [{proof.lower}, {proof.upper}]: {proof.text}"
            return Outcome(
                False,
                count,
                worst_ratio=value,
                failure=(case, Measure(value, display, error=value)),
                notes=f"case {count}: {quantity} {proof.text}",
            )
        if proof.status == "undecided":
            undecided.append(f"case {count}: {proof.text}")
        elif float(proof.upper) >= worst_upper:
            worst_upper, largest = float(proof.upper), upper_bound(ball)
    if undecided:
        return Outcome(False, count, notes=f"{quantity} <= {bound} NOT proved: " + "; ".join(undecided))
    return Outcome(
        True,
        count,
        worst_ratio=worst_upper,
        notes=f"proved from Arb enclosures ({b.label}): {quantity} <= {largest} < {bound} in all {count} cases",
        data={"proved_upper": largest, "bound": bound},
    )


def rigorous_check(
    name: str,
    cases: Callable[[RunContext], Iterable[Case]],
    enclose: Any,
    *,
    quantity: str,
    bound: str = "1e-40",
    backends: tuple[str, ...] = RIGOROUS,
) -> FunctionCheck:
    """A check that proves ``quantity <= bound`` on every case from Arb enclosures
    (:func:`rigorous_scan`), whose recorded violation replays as the quantity's value on any
    backend (:func:`replay_frobenius`)."""

    def run(ctx: RunContext) -> Outcome:
        return rigorous_scan(ctx, cases(ctx), enclose, bound=bound, quantity=quantity)

    return FunctionCheck(
        name, run, backends, "rigorous", quantity, threshold=float(bound), replay_fn=replay_frobenius(enclose)
    )


def replay_frobenius(enclose: Any) -> Any:
    """A replay function for a rigorous check: the quantity's value on any backend."""

    def replay(inputs: Mapping[str, Any], b: Backend) -> Measure:
        q = enclose(b, inputs)
        value = float(q.mid()) if b.family == "flint" else b.to_float(q)
        return Measure(value, f"{value:.6g}", error=value)

    return replay


ALL = (*FLOAT_HP, "sympy")
"""The float backends, 50-digit mpmath and exact SymPy."""


def backend_sizes(ctx: RunContext) -> tuple[int, ...]:
    """The profile's sizes n for ctx's arithmetic: exact, high-precision or float."""
    if ctx.backend.exact:
        return ctx.profile.exact_sizes
    return ctx.profile.hp_sizes if ctx.backend.method == "high-precision" else ctx.profile.sizes


def norm_scale(b: Backend, x: Array) -> float:
    """||x|| as the scale of a test ratio; 1 on an exact backend, where a residual is compared with 0."""
    return 1.0 if b.exact else b.to_float(b.norm(x))
