"""Validating third-party implementations: ``orthoverify validate`` and ``orthoverify.validate``.

A target (a built-in adapter or ``module:attribute``) of a kind (what it claims to compute) is
run through the kind's conformance checks; the result is an ordinary
:class:`~orthoverify.engine.runner.RunResult` whose claims are ``conformance.<kind>.<check>``,
so ``orthoverify report`` renders it and ``orthoverify replay`` re-runs its counterexamples.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import Any

import torch

from orthoverify import _limits, validate_listing
from orthoverify.conformance import causes
from orthoverify.conformance.context import DTYPES
from orthoverify.conformance.family import Family, FamilyRef, _evidence
from orthoverify.conformance.kinds import KINDS
from orthoverify.conformance.planning import listing as declared_listing
from orthoverify.conformance.planning import other_device, plan_checks
from orthoverify.conformance.reach import declared_data
from orthoverify.conformance.target import Target, load_target, memory_cap, open_target, resolve_kind
from orthoverify.engine.model import Evidence
from orthoverify.engine.profiles import PROFILES
from orthoverify.engine.runner import RunResult, SerialExecutor, Task, execute, plan, run_tasks
from orthoverify.errors import BackendError, InputError, OrthoverifyError
from orthoverify.isolation.adapters import ADAPTERS
from orthoverify.isolation.calls import DEFAULT_TIMEOUT, TargetLoadError

__all__ = [
    "ADAPTERS",
    "KINDS",
    "TargetLoadError",
    "_evidence",
    "listing",
    "load_target",
    "memory_cap",
    "open_target",
    "other_device",
    "validate",
]

def listing_data() -> dict[str, Any]:
    """What ``validate --list`` shows, as JSON data computed from the code: the declaration
    listing (:func:`orthoverify.conformance.planning.listing`) with each kind's allowance and checks
    (as planned without a declaration). ``devices`` is left out (planned only where a GPU is
    present) and so is each adapter's ``installed`` (decided where the listing is printed), so that
    the data is the same on every machine: ``orthoverify/validate_listing.json`` records it for
    the command line, which then needs no torch."""
    data = declared_listing()
    data["checks"].pop("devices", None)
    for name, k in KINDS.items():
        plan = plan_checks(name, ("float32", "float64"), k.inverse is not None)
        data["kinds"][name]["allowance"] = k.allowance
        data["kinds"][name]["checks"] = [c for c, *_ in plan if c != "devices"]
    for a in data["adapters"].values():
        a.pop("installed", None)
    result: dict[str, Any] = json.loads(json.dumps(data))  # as recorded: lists, not tuples
    return result


def listing() -> str:
    """What ``orthoverify validate --list`` prints: every kind (signature, conventions, allowance,
    checks) and every built-in adapter (kind, what it wraps, whether its package is installed)."""
    return validate_listing.render(validate_listing.with_installed(listing_data()))


def run_one_check(
    spec: str,
    kind: str,
    name: str,
    dtypes: tuple[str, ...],
    device: str,
    profile: str,
    seed: int,
    timeout: float,
    bitwise_determinism: bool = False,
) -> list[Evidence]:
    """One conformance check of the target ``spec``: the engine task an executor (a Dask worker)
    runs for ``validate(..., executor=...)``, run here. The family is rebuilt over the target,
    loaded in a process of its own, the output check runs first; the same evidence as in a run
    of the whole family."""
    ref = FamilyRef(spec, resolve_kind(spec, kind), tuple(dtypes), device, timeout, bitwise_determinism)
    task = Task(f"conformance.{ref.kind}.{name}", name, f"torch-{ref.dtypes[0]}", device, profile, seed, (), ref)
    return execute(task)


def validate(
    target: str | Target,
    *,
    kind: str | None = None,
    dtypes: Sequence[str] = ("float32", "float64"),
    device: str = "cpu",
    profile: str = "default",
    seed: int = 0,
    timeout: float = DEFAULT_TIMEOUT,
    executor: Executor | None = None,
    executor_name: str | None = None,
    memory_limit: int | str | None = "default",
    bitwise_determinism: bool = False,
    checks: Sequence[str] | None = None,
) -> RunResult:
    """Run the conformance checks of ``kind`` on ``target`` and return the result (JSON-ready).

    The checks are the kind's family of claims over the target (:mod:`~orthoverify.conformance.family`),
    run by the engine's runner like every claim. A target named by a string runs in a process of
    its own, loaded there by name (restarted after it dies or hangs); a :class:`Target` object
    runs in a thread of this process. With ``executor`` (see
    :func:`orthoverify.engine.executors.open_executor`, e.g. a Dask cluster's) each check is an
    engine task that rebuilds the family where it runs, loading the target by name, so ``target``
    must then be a spec string; the evidence is the same as in this process for the same seed.
    ``executor_name`` is what the result records about it (default: serial, or the class name).

    ``timeout`` (seconds, at most a day) bounds each call of the target, and loading it (at least
    :data:`~orthoverify._limits.LOAD_FLOOR_SECONDS`: past it, a TargetLoadError); ``memory_limit``
    caps its process's memory and that of all its processes together (see :func:`memory_cap`),
    so that exhaustion is a failed allocation or their death, a finding. Processes the target
    leaves behind are killed and listed in the result's ``validate.left_behind``. Containment is
    not a sandbox: the target runs as the user.

    ``bitwise_determinism``: the ``determinism`` check asks for bitwise equal repeated calls (by
    default they must agree to the kind's allowance: deterministic up to rounding).

    ``checks`` names the checks to run (default: every check planned for the target; the output
    check still runs first where another check needs to know which dtypes work, as in a whole run).
    """
    if not isinstance(target, (str, Target)):
        raise InputError(
            f"target: expected a built-in adapter name, 'module:attribute' or a Target, got {type(target).__name__}"
        )
    timeout = _limits.seconds(timeout, "timeout")
    cap = memory_cap(memory_limit, device if isinstance(device, str) else "cpu")
    if executor is not None and not isinstance(target, str):
        raise OrthoverifyError("with an executor the target must be given by name (an adapter or module:attribute)")
    bad = [d for d in dtypes if d not in DTYPES]
    if bad or not dtypes:
        raise OrthoverifyError(f"unknown dtype(s) {bad or list(dtypes)}; choose from float32, float64")
    if profile not in PROFILES:
        raise OrthoverifyError(f"unknown profile {profile!r}; choose from {', '.join(PROFILES)}")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise BackendError("--device cuda, but torch.cuda.is_available() is False")
    t = open_target(target, kind, device, timeout, cap) if isinstance(target, str) else target
    try:
        res = _validate(
            t, tuple(dtypes), device, profile, seed, timeout, executor, executor_name, bitwise_determinism, checks
        )
    finally:
        if t.runner is not None and isinstance(target, str):
            t.runner.close()
    res.meta["validate"]["memory_limit"] = cap if isinstance(target, str) else None
    res.meta["validate"]["left_behind"] = list(getattr(t.runner, "left_behind", []))
    return res


def _validate(
    t: Target,
    dtypes: tuple[str, ...],
    device: str,
    profile: str,
    seed: int,
    timeout: float,
    executor: Executor | None,
    executor_name: str | None,
    bitwise_determinism: bool = False,
    checks: Sequence[str] | None = None,
) -> RunResult:
    ref = FamilyRef(t.spec, t.kind.name, dtypes, device, timeout, bitwise_determinism)
    fam = Family(ref, t)
    claims = list(fam.claims)
    if checks is not None:
        names = [c.id.rsplit(".", 1)[1] for c in claims]
        unknown = sorted(set(checks) - set(names))
        if unknown:
            raise OrthoverifyError(f"no check {', '.join(unknown)} for {t.spec}; its checks: {', '.join(names)}")
        claims = [c for c, name in zip(claims, names, strict=True) if name in checks]
    # Tasks run here name the open family itself (they share its target and sessions); tasks an
    # executor runs elsewhere name it by its picklable reference, which opens the target there.
    tasks = plan(
        claims, profile=profile, seed=seed, device=device, backends=None, modules=(), family=ref if executor else fam
    )
    options: dict[str, Any] = {"profile": profile, "seed": seed, "device": device, "executor_name": executor_name}
    if executor is None:  # the tasks run here, in order, in the session of the target opened above
        res = run_tasks(claims, tasks, executor=SerialExecutor(), **options)
        res.executor = executor_name or "serial"
    else:
        if t.runner is not None:
            t.runner.close()  # each task starts the target where it runs
        res = run_tasks(claims, tasks, executor=executor, **options)
        res.executor = executor_name or type(executor).__name__
    res.backends = [f"torch-{d}" for d in dtypes]
    ctx = fam.session(profile, seed)
    seen = ctx.calls.observed
    res.meta = {
        "validate": {
            "target": t.spec,
            "kind": t.kind.name,
            "dtypes": list(dtypes),
            "description": t.description,
            "devices": [device, other_device(device)] if other_device(device) else [device],
            "isolated": ctx.calls.isolated,
            "target_output": {"bytes": seen.written, "head": seen.head[:500]},
            "target_deaths": seen.deaths,
            "declaration": declared_data(t),  # what the target declares it supports (None: nothing)
            "findings": [f.to_json() for f in causes.findings(res)],  # one per cause (every claim kept above)
        }
    }
    return res
