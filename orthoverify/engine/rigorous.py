"""A bound proved from Arb enclosures (python-flint balls): the template for claims of the form
"this quantity is at most this bound", where a proof, not a float estimate, is the evidence. A
case whose whole ball lies above the bound is a proved violation (a counterexample that replays
as the quantity's value on any backend); one whose ball straddles the bound is undecided."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from orthoverify.backends import Array, Backend, get_backend, rigorous_backend_names
from orthoverify.backends.flint_backend import INSTALL_HINT, frobenius_enclosure, prove_below, upper_bound
from orthoverify.engine.checks import Case, FunctionCheck, Outcome, RunContext
from orthoverify.engine.ratios import Measure

RIGOROUS = rigorous_backend_names()
"""Where rigorous checks run: flint when installed, else mpmath (on which they record a skip)."""
RIGOROUS_SIZES = (4, 8, 16)
"""The sizes n of the rigorous checks of every family."""


def frobenius(b: Backend, x: Array) -> Any:
    """||x||_F: on flint an Arb ball that contains it (every entry's enclosure counted), on
    other backends the value in that arithmetic (how a rigorous counterexample replays)."""
    if b.family == "flint":
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
