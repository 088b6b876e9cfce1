"""Validating third-party implementations: ``orthoverify validate`` and ``orthoverify.validate``.

A target (a built-in adapter or ``module:attribute``) of a kind (what it claims to compute) is
run through the kind's conformance checks; the result is an ordinary
:class:`~orthoverify.engine.runner.RunResult` whose claims are ``conformance.<kind>.<check>``,
so ``orthoverify report`` renders it and ``orthoverify replay`` re-runs its counterexamples.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any

import torch

from orthoverify import _limits, validate_listing
from orthoverify.conformance import causes
from orthoverify.conformance import checks as ck
from orthoverify.conformance.adapters import ADAPTERS, TargetLoadError, load_target, resolve_kind
from orthoverify.conformance.calls import DEFAULT_TIMEOUT
from orthoverify.conformance.declare import apply as apply_declaration
from orthoverify.conformance.declare import listing as declared_listing
from orthoverify.conformance.isolate import ProcessRunner, op_inverse
from orthoverify.conformance.kinds import KINDS
from orthoverify.conformance.reach import declared_data
from orthoverify.conformance.reach import plan as reach_plan
from orthoverify.engine.model import Evidence, Kind
from orthoverify.engine.runner import RunResult
from orthoverify.errors import BackendError, InputError, OrthoverifyError

__all__ = ["ADAPTERS", "KINDS", "TargetLoadError", "listing", "load_target", "validate"]

EXAMPLES = {"quick": 40, "default": 150, "thorough": 1000}


Plan = list[tuple[str, Kind, str, Callable[[ck.Ctx], list[Evidence]]]]


def other_device(device: str) -> str | None:
    """The device the ``devices`` check compares ``device`` with: cuda from cpu when a GPU is
    there, cpu from cuda; None when there is no second device."""
    if device.startswith("cuda"):
        return "cpu"
    return "cuda" if torch.cuda.is_available() else None


def _plan(
    kind_name: str,
    dtypes: tuple[str, ...],
    has_inverse: bool = False,
    device: str = "cpu",
    target: ck.Target | None = None,
    bitwise_determinism: bool = False,
) -> Plan:
    kind = KINDS[kind_name]
    p: Plan = [
        ("output", "identity", "the call returns a finite tensor of the declared shape and dtype", ck.check_output),
    ]
    if kind.orthogonal_output:
        p.append(
            (
                "orthogonal",
                "bound",
                "the output is orthogonal (test ratio <= 30) for every parameter value of the declared domain, "
                "at every magnitude",
                ck.search_orthogonal,
            )
        )
    if kind.reference is not None:
        p.append(
            (
                "forward",
                "identity",
                f"the output equals orthoverify's reference under the declared conventions: {kind.conventions}",
                lambda c: ck.scan(c, "forward", ck.sized_cases(c, "forward", specials=True)),
            )
        )
    p.append(
        (
            "gradient",
            "gradient",
            "the target's backward gives the gradient of sum(f(P) * G)"
            + (
                " (against 50-digit central differences of the reference)"
                if kind.reference is not None
                else " (against float64 central differences of the target)"
            ),
            lambda c: ck.scan(c, "gradient", ck.sized_cases(c, "gradient", scales=(1.0,), dtypes=("float64",))),
        )
    )
    p.append(
        (
            "jvp",
            "gradient",
            "the target's forward-mode derivative (torch.func.jvp) along a random direction equals the directional "
            "derivative"
            + (
                " (50-digit central differences of the reference)"
                if kind.reference is not None
                else " (float64 central differences of the target)"
            )
            + "; unsupported when the target declines forward mode with an exception",
            lambda c: ck.scan(c, "jvp", ck.sized_cases(c, "jvp", scales=(1.0,), dtypes=("float64",))),
        )
    )
    if "float32" in dtypes and "float64" in dtypes:
        p.append(
            (
                "float32",
                "bound",
                "float32 agrees with float64 to float32 precision (no drift)",
                lambda c: ck.scan(c, "float32", ck.sized_cases(c, "float32", scales=(1.0,), dtypes=("float32",))),
            )
        )
    p.append(
        (
            "batch",
            "identity",
            "parameters stacked on a leading axis give the outputs stacked",
            lambda c: ck.scan(c, "batch", ck.sized_cases(c, "batch", scales=(1.0,))),
        )
    )
    p.append(
        (
            "determinism",
            "identity",
            "repeated calls give bitwise equal outputs"
            if bitwise_determinism
            else "repeated calls agree to the allowance (test ratio; bitwise equality is not asked for: "
            "--bitwise-determinism)",
            ck.check_determinism,
        )
    )
    second = other_device(device)
    if second is not None:
        p.append(
            (
                "devices",
                "identity",
                f"the output on {second} agrees with the output on {device} (test ratio)",
                lambda c: ck.scan(c, "devices", ck.sized_cases(c, "devices", scales=(1.0,))),
            )
        )
    if kind.inverse is not None or has_inverse:
        p.append(("coverage", "coverage", kind.coverage_statement, ck.check_coverage))
    elif kind.name == "orthogonal-map":
        p.append(
            (
                "coverage",
                "coverage",
                "every orthogonal matrix of each connected component of O(n) the map reaches is reached",
                ck.check_coverage_by_optimisation,
            )
        )
    p.append(
        (
            "bad_input",
            "identity",
            "a NaN parameter raises or propagates, never gives a finite answer",
            ck.check_bad_input,
        )
    )
    p.append(
        (
            "side_effects",
            "identity",
            "a call changes nothing but its output: not its arguments, not the working directory, and it does not "
            "flood stdout/stderr",
            ck.check_side_effects,
        )
    )
    return reach_plan(p, kind, target, other_device(device))  # second order, vmap, declared checks, lifecycle


def listing_data() -> dict[str, Any]:
    """What ``validate --list`` shows, as JSON data computed from the code: the declaration
    listing (:func:`orthoverify.conformance.declare.listing`) with each kind's allowance and checks
    (as planned without a declaration). ``devices`` is left out (planned only where a GPU is
    present) and so is each adapter's ``installed`` (decided where the listing is printed), so that
    the data is the same on every machine: ``orthoverify/validate_listing.json`` records it for
    the command line, which then needs no torch."""
    data = declared_listing()
    data["checks"].pop("devices", None)
    for name, k in KINDS.items():
        plan = _plan(name, ("float32", "float64"), k.inverse is not None)
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


def _evidence(ctx: ck.Ctx, cid: str, name: str, fn: Callable[[ck.Ctx], list[Evidence]]) -> list[Evidence]:
    """The evidence of one check. A crash of orthoverify's own code is recorded as an error; a
    target fault that escaped the check (a :class:`~orthoverify.conformance.checks.TargetFault`)
    makes the check not run, with the reason: never an error."""
    c0 = time.perf_counter()
    ctx.calls.begin_check(name)
    try:
        evidence = fn(ctx)  # measured here, from the raw values the target's process returns
    except ck.TargetFault as exc:
        ev = Evidence(cid, name, "float", ctx.label(ctx.dtypes[0]), notes=f"Not run: the target failed ({exc}).")
        ev.data["not_run"] = 1
        evidence = [ev]
    except Exception as exc:  # a bug of orthoverify's, never of the target's: recorded as an error
        import traceback

        evidence = [
            Evidence(
                cid,
                name,
                "float",
                ctx.label(ctx.dtypes[0]),
                error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}",
            )
        ]
    for ev in evidence:
        ev.claim = cid
        if not ev.seconds:
            ev.seconds = time.perf_counter() - c0
    return evidence


def open_target(
    spec: str,
    kind: str | None,
    device: str = "cpu",
    timeout: float = DEFAULT_TIMEOUT,
    memory_limit: int | str | None = "default",
) -> ck.Target:
    """The target ``spec`` started in a process of its own (see :mod:`~orthoverify.conformance.isolate`)
    and seen from here: its calls go to that process (close it with ``t.runner.close()``), whose
    memory is capped (see :func:`memory_cap`). In a daemonic process, which may not start children
    (a Dask worker), it is loaded here instead."""
    import multiprocessing

    kind_name = resolve_kind(spec, kind)
    if multiprocessing.current_process().daemon:  # a daemonic process (a Dask worker) may start none:
        return load_target(spec, kind_name)  # the target runs in this (worker) process, in a thread
    runner = ProcessRunner(spec, kind_name, device, memory_cap(memory_limit, device))
    hello = runner.start()
    domain = ADAPTERS[spec].domain if spec in ADAPTERS else None
    inverse = ck.RemoteFn(runner, timeout, op_inverse) if hello.get("inverse") else None
    fn = ck.RemoteFn(runner, timeout)
    if hello.get("declaration") is not None:  # plain data from the target's process, checked here; never imported
        from orthoverify.conformance.isolate import remote_declaration

        fn.__orthoverify__ = remote_declaration(spec, hello["declaration"], runner, timeout)  # type: ignore[attr-defined]
    t = ck.Target(spec, fn, KINDS[kind_name], str(hello.get("description") or ""), domain, inverse)
    t.runner = runner
    return apply_declaration(t)


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
    from orthoverify.conformance.family import FamilyRef
    from orthoverify.engine.runner import Task, execute

    ref = FamilyRef(spec, resolve_kind(spec, kind), tuple(dtypes), device, timeout, bitwise_determinism)
    task = Task(f"conformance.{ref.kind}.{name}", name, f"torch-{ref.dtypes[0]}", device, profile, seed, (), ref)
    return execute(task)


def memory_cap(memory_limit: int | str | None, device: str) -> int | None:
    """The cap on a target process's memory in bytes (None: none) from ``memory_limit``: a number
    of bytes, a size such as ``"4G"``, None or ``"none"`` for no cap, or ``"default"``:
    :data:`~orthoverify._limits.DEFAULT_MEMORY_LIMIT` on the CPU, none with CUDA (whose driver
    maps large host regions of its own). Raises InputError for anything else."""
    if memory_limit == "default":
        return None if device.startswith("cuda") else _limits.DEFAULT_MEMORY_LIMIT
    return _limits.memory_bytes(memory_limit, "memory_limit")


def validate(
    target: str | ck.Target,
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

    ``timeout`` (seconds, at most a day) bounds each call of the target; ``memory_limit`` caps its
    process's memory (see :func:`memory_cap`), so that exhaustion is a failed allocation, a
    finding. Processes the target leaves behind are killed and listed in the result's
    ``validate.left_behind``. Containment is not a sandbox: the target runs as the user.

    ``bitwise_determinism``: the ``determinism`` check asks for bitwise equal repeated calls (by
    default they must agree to the kind's allowance: deterministic up to rounding).

    ``checks`` names the checks to run (default: every check planned for the target; the output
    check still runs first where another check needs to know which dtypes work, as in a whole run).
    """
    if not isinstance(target, (str, ck.Target)):
        raise InputError(
            f"target: expected a built-in adapter name, 'module:attribute' or a Target, got {type(target).__name__}"
        )
    timeout = _limits.seconds(timeout, "timeout")
    cap = memory_cap(memory_limit, device if isinstance(device, str) else "cpu")
    if executor is not None and not isinstance(target, str):
        raise OrthoverifyError("with an executor the target must be given by name (an adapter or module:attribute)")
    bad = [d for d in dtypes if d not in ck.DTYPES]
    if bad or not dtypes:
        raise OrthoverifyError(f"unknown dtype(s) {bad or list(dtypes)}; choose from float32, float64")
    if profile not in EXAMPLES:
        raise OrthoverifyError(f"unknown profile {profile!r}; choose from {', '.join(EXAMPLES)}")
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
    t: ck.Target,
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
    from orthoverify.conformance.family import Family, FamilyRef
    from orthoverify.engine.runner import SerialExecutor, plan, run_tasks

    ref = FamilyRef(t.spec, t.kind.name, dtypes, device, timeout, bitwise_determinism)
    fam = Family(ref, t)
    claims = list(fam.claims)
    if checks is not None:
        names = [c.id.rsplit(".", 1)[1] for c in claims]
        unknown = sorted(set(checks) - set(names))
        if unknown:
            raise OrthoverifyError(f"no check {', '.join(unknown)} for {t.spec}; its checks: {', '.join(names)}")
        claims = [c for c, name in zip(claims, names, strict=True) if name in checks]
    tasks = plan(claims, profile=profile, seed=seed, device=device, backends=None, modules=(), family=ref)
    options: dict[str, Any] = {"profile": profile, "seed": seed, "device": device, "executor_name": executor_name}
    if executor is None:  # the tasks run here, in order, in the session of the target opened above
        with fam.live():
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
