"""The conformance checks by name, and the measuring routine of each (:func:`remeasure`).

The checks live in one module per family: the forward quantities (:mod:`.quantities`), the
derivatives (:mod:`.gradients`), scans, searches and shrinking (:mod:`.search`), the call's
contract (:mod:`.contract`: output, side effects, bad input) and coverage (:mod:`.coverage`), over
the session context of :mod:`.context`. This module gathers the names the other conformance
modules use as ``ck.<name>``.

Every quantity is a scaled test ratio (threshold 30) computed from the target's output in the
dtype under test; a failing case is re-run (a deterministic target gives the same ratio again)
and, where the kind has a reference, re-measured against orthoverify's reference at 50 digits,
so a counterexample never rests on the reference's own rounding.
"""

from __future__ import annotations

from collections.abc import Callable

from orthoverify.conformance.context import (
    DTYPES,
    F64,
    Ctx,
    _kappa,
    as_np,
    extreme,
    failing,
    inputs_of,
    magnitude,
    params_of,
    refusal,
    session,
)
from orthoverify.conformance.contract import (
    check_bad_input,
    check_output,
    check_side_effects,
    measure_bad_input,
    measure_output,
    measure_side_effects,
)
from orthoverify.conformance.coverage import check_coverage, check_coverage_by_optimisation, measure_coverage
from orthoverify.conformance.gradients import _tangent, q_gradient, q_jvp
from orthoverify.conformance.kinds import Params
from orthoverify.conformance.quantities import q_batch
from orthoverify.conformance.search import (
    QUANTITIES,
    check_determinism,
    measure_quantity,
    scan,
    search_orthogonal,
    shrink,
    sized_cases,
)
from orthoverify.conformance.target import Target, TargetFault
from orthoverify.engine.ratios import THRESHOLD, Measure, agreement, orthogonality
from orthoverify.errors import OrthoverifyError

__all__ = [
    "DTYPES",
    "F64",
    "MEASURES",
    "QUANTITIES",
    "THRESHOLD",
    "Ctx",
    "Measure",
    "Target",
    "TargetFault",
    "_kappa",
    "_tangent",
    "agreement",
    "as_np",
    "check_bad_input",
    "check_coverage",
    "check_coverage_by_optimisation",
    "check_determinism",
    "check_output",
    "check_side_effects",
    "extreme",
    "failing",
    "inputs_of",
    "magnitude",
    "orthogonality",
    "params_of",
    "q_batch",
    "q_gradient",
    "q_jvp",
    "refusal",
    "remeasure",
    "scan",
    "search_orthogonal",
    "session",
    "shrink",
    "sized_cases",
]


MEASURES: dict[str, Callable[[Ctx, Params, str, str], Measure]] = {
    "output": lambda ctx, p, dt, rec: measure_output(ctx, p, dt),
    "bad_input": lambda ctx, p, dt, rec: measure_bad_input(ctx, p, dt),
    "coverage": lambda ctx, p, dt, rec: measure_coverage(ctx, p, dt),
    "side_effects": measure_side_effects,
}
"""The measuring routine of each check that is not a test ratio of :data:`QUANTITIES`, by the
check name its counterexamples are recorded under: (ctx, parameters, dtype, recorded value)."""


def remeasure(ctx: Ctx, check: str, params: Params, dtype: str, recorded: str = "") -> Measure:
    """A recorded counterexample of ``check`` measured again by the routine the check measured it
    with (:data:`QUANTITIES`, :data:`MEASURES`): the confirmation of a finding and its replay."""
    if check in QUANTITIES:
        return measure_quantity(ctx, check, params, dtype)
    if check in MEASURES:
        return MEASURES[check](ctx, params, dtype, recorded)
    raise OrthoverifyError(f"check {check!r} has no measuring routine to replay a counterexample with")
