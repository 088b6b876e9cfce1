"""The plan of a target's checks: which conformance checks run on a target of a kind, in order,
each with its claim kind, its statement and the function that runs it, and what
``orthoverify validate --list`` shows of them.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import torch

from orthoverify.conformance.context import Ctx, PlanEntry, Quantity, Remeasure
from orthoverify.conformance.contract import (
    check_bad_input,
    check_output,
    check_side_effects,
    measure_bad_input,
    measure_output,
    measure_side_effects,
)
from orthoverify.conformance.coverage import check_coverage, check_coverage_by_optimisation, measure_coverage
from orthoverify.conformance.gradients import q_gradient, q_jvp
from orthoverify.conformance.kinds import KINDS, Params
from orthoverify.conformance.quantities import q_batch, q_determinism, q_devices, q_float32, q_forward, q_orthogonal
from orthoverify.conformance.reach import plan as reach_plan
from orthoverify.conformance.search import check_determinism, scan, search_orthogonal, sized_cases
from orthoverify.conformance.target import Target
from orthoverify.engine.model import Evidence
from orthoverify.engine.ratios import Measure
from orthoverify.isolation.adapters import ADAPTERS
from orthoverify.isolation.declare import ADAPTER_DECLARATIONS, DOMAINS, KEYWORDS

Plan = list[PlanEntry]


def other_device(device: str) -> str | None:
    """The device the ``devices`` check compares ``device`` with: cuda from cpu when a GPU is
    there, cpu from cuda; None when there is no second device."""
    if device.startswith("cuda"):
        return "cpu"
    return "cuda" if torch.cuda.is_available() else None


def _scan(check: str, q: Quantity, **kw: Any) -> Callable[[Ctx], list[Evidence]]:
    """A check that scans its quantity ``q`` over sized cases (``kw``: :func:`~.search.sized_cases`'s)."""
    return lambda c: scan(c, check, q, sized_cases(c, check, **kw))


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
    against = (
        "50-digit central differences of the reference"
        if kind.reference is not None
        else "float64 central differences of the target"
    )
    second = other_device(device)
    p: Plan = [
        PlanEntry(
            "output",
            "identity",
            "the call returns a finite tensor of the declared shape and dtype",
            check_output,
            measure=_without_record(measure_output),
        ),
    ]
    if kind.orthogonal_output:
        p.append(
            PlanEntry(
                "orthogonal",
                "bound",
                "the output is orthogonal (test ratio <= 30) for every parameter value of the declared domain, "
                "at every magnitude",
                search_orthogonal,
                q_orthogonal,
                measures="||f(P)'f(P) - I||_F / (n eps kappa)",
            )
        )
    if kind.reference is not None:
        p.append(
            PlanEntry(
                "forward",
                "identity",
                f"the output equals orthoverify's reference under the declared conventions: {kind.conventions}",
                _scan("forward", q_forward, specials=True),
                q_forward,
                measures="||f(P) - reference(P)||_F / (n eps kappa ||reference(P)||_F)",
            )
        )
    p.append(
        PlanEntry(
            "gradient",
            "gradient",
            f"the target's backward gives the gradient of sum(f(P) * G) (against {against})",
            _scan("gradient", q_gradient, scales=(1.0,), dtypes=("float64",)),
            q_gradient,
            measures="||gradient - reference gradient||_F / (n eps ||reference gradient||_F)",
        )
    )
    p.append(
        PlanEntry(
            "jvp",
            "gradient",
            "the target's forward-mode derivative (torch.func.jvp) along a random direction equals the directional "
            f"derivative ({against}); unsupported when the target declines forward mode with an exception",
            _scan("jvp", q_jvp, scales=(1.0,), dtypes=("float64",)),
            q_jvp,
            measures="||jvp - reference directional derivative||_F / (n eps ||reference directional derivative||_F)",
        )
    )
    if "float32" in dtypes and "float64" in dtypes:
        p.append(
            PlanEntry(
                "float32",
                "bound",
                "float32 agrees with float64 to float32 precision (no drift)",
                _scan("float32", q_float32, scales=(1.0,), dtypes=("float32",)),
                q_float32,
                measures="||f32(P) - f64(P)||_F / (n eps32 kappa ||f64(P)||_F)",
            )
        )
    p.append(
        PlanEntry(
            "batch",
            "identity",
            "parameters stacked on a leading axis give the outputs stacked",
            _scan("batch", q_batch, scales=(1.0,)),
            q_batch,
            measures="max_i ||batched f[i] - f(P_i)||_F / (2 n eps kappa ||f(P_i)||_F)",
        )
    )
    p.append(
        PlanEntry(
            "determinism",
            "identity",
            "repeated calls give bitwise equal outputs"
            if bitwise_determinism
            else "repeated calls agree to the allowance (test ratio; bitwise equality is not asked for: "
            "--bitwise-determinism)",
            check_determinism,
            q_determinism,
            measures="repeated calls bitwise equal"
            if bitwise_determinism
            else "max_i ||f_i(P) - f_1(P)||_F / (2 n eps kappa ||f_1(P)||_F) over three calls",
        )
    )
    if second is not None:
        p.append(
            PlanEntry(
                "devices",
                "identity",
                f"the output on {second} agrees with the output on {device} (test ratio)",
                _scan("devices", q_devices, scales=(1.0,)),
                q_devices,
                measures=f"||f(P) on {second} - f(P) on {device}||_F / (2 n eps kappa ||f(P)||_F)",
            )
        )
    if kind.inverse is not None or has_inverse:
        p.append(
            PlanEntry(
                "coverage",
                "coverage",
                kind.coverage_statement,
                check_coverage,
                measure=_without_record(measure_coverage),
            )
        )
    elif kind.coverage_by_optimisation:
        p.append(
            PlanEntry(
                "coverage",
                "coverage",
                "every orthogonal matrix of each connected component of O(n) the map reaches is reached",
                check_coverage_by_optimisation,
                measure=_without_record(measure_coverage),
            )
        )
    p.append(
        PlanEntry(
            "bad_input",
            "identity",
            "a NaN parameter raises or propagates, never gives a finite answer",
            check_bad_input,
            measure=_without_record(measure_bad_input),
        )
    )
    p.append(
        PlanEntry(
            "side_effects",
            "identity",
            "a call changes nothing but its output: not its arguments, not the working directory, and it does not "
            "flood stdout/stderr",
            check_side_effects,
            measure=measure_side_effects,
        )
    )
    return reach_plan(p, kind, target, second)  # second order, vmap, declared checks, lifecycle


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
