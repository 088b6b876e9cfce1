"""The plan of a target's checks: which conformance checks run on a target of a kind, in order,
each with its claim kind, its statement and the function that runs it, and what
``orthoverify validate --list`` shows of them.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import torch

from orthoverify.conformance.checks_train import plan as derivative_checks
from orthoverify.conformance.context import Ctx, PlanEntry, Remeasure, Row, entries
from orthoverify.conformance.contract import (
    check_bad_input,
    check_output,
    check_side_effects,
    measure_bad_input,
    measure_output,
    measure_side_effects,
)
from orthoverify.conformance.coverage import check_coverage, check_coverage_by_optimisation, measure_coverage
from orthoverify.conformance.kinds import KINDS, Params
from orthoverify.conformance.quantities import q_batch, q_determinism, q_devices, q_float32, q_forward, q_orthogonal
from orthoverify.conformance.reach import plan as reach_plan
from orthoverify.conformance.search import check_determinism, scanned, search_orthogonal
from orthoverify.conformance.target import Target
from orthoverify.engine.ratios import Measure
from orthoverify.isolation.adapters import ADAPTERS
from orthoverify.isolation.declare import ADAPTER_DECLARATIONS, DOMAINS, KEYWORDS

Plan = list[PlanEntry]


DECLARED_CHECKS: dict[str, str] = {
    "vmap": "modes=['vmap']: torch.func.vmap(f) over stacked parameters against single calls",
    "low_precision": "dtypes=['float16'|'bfloat16']: the output in that dtype against float64, on its unit roundoff",
    "gradient_float16": "dtypes=['float16']: the backward in float16 against the float64 reference, on n u kappa",
    "jvp_float16": "dtypes=['float16']: forward mode in float16 against the float64 reference, on n u kappa",
    "gradient_bfloat16": "dtypes=['bfloat16']: the backward in bfloat16 against the float64 reference, on n u kappa",
    "jvp_bfloat16": "dtypes=['bfloat16']: forward mode in bfloat16 against the float64 reference, on n u kappa",
    "entry_points": "also=g: the second entry point g returns the same matrix as the target",
    "weight_decay": "module=factory: SGD/Adam/AdamW steps with weight decay from the module's own initialisation",
    "state_dict": "module=factory: state_dict loaded into a fresh module, one more step",
    "dtype_cast": "module=factory: .double(), .float() (and .half(), .bfloat16() if declared in dtypes)",
    "to_device": "module=factory, a GPU present: .to(the other device), one step there",
    "det": "group='SO(n)': every output has det +1 (a real orthogonal kind)",
}
"""Checks a declaration adds to the plan, with the keyword that adds them."""


def other_device(device: str) -> str | None:
    """The device the ``devices`` check compares ``device`` with: cuda from cpu when a GPU is
    there, cpu from cuda; None when there is no second device."""
    if device.startswith("cuda"):
        return "cpu"
    return "cuda" if torch.cuda.is_available() else None


def _without_record(m: Callable[[Ctx, Params, str], Measure]) -> Remeasure:
    """A measuring routine that does not read the recorded value, as a :data:`~.context.Remeasure`."""
    return lambda ctx, params, dtype, _recorded: m(ctx, params, dtype)


def plan_checks(
    kind_name: str,
    dtypes: tuple[str, ...],
    has_inverse: bool = False,
    device: str = "cpu",
    target: Target | None = None,
    bitwise_determinism: bool = False,
) -> Plan:
    kind = KINDS[kind_name]
    second = other_device(device)
    bitwise = bitwise_determinism
    coverage = kind.inverse is not None or has_inverse
    head: list[Row] = [
        (True, "output", "identity", "the call returns a finite tensor of the declared shape and dtype",
         check_output, _without_record(measure_output), ""),
        (kind.orthogonal_output, "orthogonal", "bound", "the output is orthogonal (test ratio <= 30) for every "
         "parameter value of the declared domain, at every magnitude", search_orthogonal, q_orthogonal,
         "||f(P)'f(P) - I||_F / (n eps kappa)"),
        (kind.reference is not None, "forward", "identity", "the output equals orthoverify's reference under the "
         f"declared conventions: {kind.conventions}", scanned("forward", q_forward, specials=True), q_forward,
         "||f(P) - reference(P)||_F / (n eps kappa ||reference(P)||_F)"),
    ]
    tail: list[Row] = [
        ("float32" in dtypes and "float64" in dtypes, "float32", "bound",
         "float32 agrees with float64 to float32 precision (no drift)",
         scanned("float32", q_float32, scales=(1.0,), dtypes=("float32",)), q_float32,
         "||f32(P) - f64(P)||_F / (n eps32 kappa ||f64(P)||_F)"),
        (True, "batch", "identity", "parameters stacked on a leading axis give the outputs stacked",
         scanned("batch", q_batch, scales=(1.0,)), q_batch,
         "max_i ||batched f[i] - f(P_i)||_F / (2 n eps kappa ||f(P_i)||_F)"),
        (True, "determinism", "identity", "repeated calls give bitwise equal outputs" if bitwise else "repeated "
         "calls agree to the allowance (test ratio; bitwise equality is not asked for: --bitwise-determinism)",
         check_determinism, q_determinism, "repeated calls bitwise equal" if bitwise
         else "max_i ||f_i(P) - f_1(P)||_F / (2 n eps kappa ||f_1(P)||_F) over three calls"),
        (second is not None, "devices", "identity", f"the output on {second} agrees with the output on {device} "
         "(test ratio)", scanned("devices", q_devices, scales=(1.0,)), q_devices,
         f"||f(P) on {second} - f(P) on {device}||_F / (2 n eps kappa ||f(P)||_F)"),
        (coverage or kind.coverage_by_optimisation, "coverage", "coverage", kind.coverage_statement if coverage
         else "every orthogonal matrix of each connected component of O(n) the map reaches is reached",
         check_coverage if coverage else check_coverage_by_optimisation, _without_record(measure_coverage), ""),
        (True, "bad_input", "identity", "a NaN parameter raises or propagates, never gives a finite answer",
         check_bad_input, _without_record(measure_bad_input), ""),
        (True, "side_effects", "identity", "a call changes nothing but its output: not its arguments, not the "
         "working directory, and it does not flood stdout/stderr", check_side_effects, measure_side_effects, ""),
    ]
    p = entries(head) + derivative_checks(kind, target, dtypes, stage=0) + entries(tail)  # float64 gradient, jvp
    return reach_plan(p, kind, target, second)  # second order, vmap, declared checks, lifecycle


def listing() -> dict[str, Any]:
    """What ``orthoverify validate --list`` shows, as JSON data: kinds, checks (and what plans
    them), built-in adapters (kind, package, whether it is installed, declaration), the
    declaration keywords and the named domains."""
    checks: dict[str, str] = {}
    for kind in KINDS:
        for e in plan_checks(kind, ("float32", "float64"), True, "cpu"):
            checks.setdefault(e.name, e.statement)
    checks.update({k: f"planned by a declaration, {v}" for k, v in DECLARED_CHECKS.items()})
    adapters = {}
    for name, a in ADAPTERS.items():
        d = ADAPTER_DECLARATIONS.get(name)
        adapters[name] = {
            "kind": a.kind,
            "description": a.description,
            "requires": a.requires,
            "installed": a.requires is None or importlib.util.find_spec(a.requires) is not None,
            "declaration": d.listing() if d is not None else None,
        }
    return {
        "kinds": {k.name: {"signature": k.signature, "conventions": k.conventions} for k in KINDS.values()},
        "checks": checks,
        "adapters": adapters,
        "declarations": KEYWORDS,
        "domains": list(DOMAINS),
    }
