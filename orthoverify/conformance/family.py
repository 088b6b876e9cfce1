"""A kind's conformance checks as a family of claims over a target, run by the engine.

:func:`family` builds the claims ``conformance.<kind>.<check>`` of a kind over one target, each
with one :class:`TargetCheck`; ``validate`` hands them to the engine's runner
(:func:`orthoverify.engine.runner.plan` and :func:`~orthoverify.engine.runner.run_tasks`), which
schedules them, seeds them, decides each verdict and records the strongest counterexample, as for
the claims about orthoverify's own code. A task names its family by a :class:`FamilyRef` (target
spec, kind, dtypes, device, timeout), which rebuilds the family wherever the task runs.

Every check measures a failing case with one routine (its planned entry's measure, :class:`~.context.PlanEntry`),
LAPACK-style: the routine measures, the driver decides. The scan uses it for every case; a
refutation is confirmed through :meth:`TargetCheck.replay` (the recorded, shrunk counterexample
measured again) before it becomes the counterexample, and ``orthoverify replay`` replays a result
file's counterexample through the same method.
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from orthoverify.backends import Backend, get_backend
from orthoverify.conformance.context import DTYPES, Ctx, PlanEntry, params_of, session
from orthoverify.conformance.contract import check_output
from orthoverify.conformance.planning import other_device, plan_checks
from orthoverify.conformance.search import measure_quantity
from orthoverify.conformance.target import Target, open_target
from orthoverify.engine.checks import Check, RunContext, confirm_again
from orthoverify.engine.model import Claim, Counterexample, Evidence, jsonable
from orthoverify.engine.ratios import THRESHOLD, Measure, fails
from orthoverify.engine.replay import abbreviate
from orthoverify.errors import OrthoverifyError
from orthoverify.isolation.calls import DEFAULT_TIMEOUT, TargetFault


@dataclass(frozen=True)
class FamilyRef:
    """The name of a family of claims: a kind's checks over the target ``target`` (a built-in
    adapter or ``module:attribute``) in ``dtypes`` on ``device``. Picklable: an engine task
    carries it, and :meth:`opened` rebuilds the family where the task runs."""

    target: str
    kind: str
    dtypes: tuple[str, ...]
    device: str = "cpu"
    timeout: float = DEFAULT_TIMEOUT
    bitwise_determinism: bool = False
    """The ``determinism`` check asks for bitwise equal repeated calls (default: to the allowance)."""

    @contextmanager
    def opened(self) -> Iterator[Family]:
        """The family over the target loaded here for the block (in a process of its own, closed
        after): where an executor runs a task, or a replay from a file. A ``validate`` run's own
        tasks name the open :class:`Family` instead, whose :meth:`Family.opened` is itself."""
        t = open_target(self.target, self.kind, self.device, self.timeout)
        try:
            yield Family(self, t)
        finally:
            if t.runner is not None:
                t.runner.close()


@dataclass
class _Session:
    ctx: Ctx
    ran: set[str]


class Family:
    """A kind's claims over an opened target, in plan order, and the sessions they run in: one
    :class:`~orthoverify.conformance.context.Ctx` per (profile, seed), shared by every claim of a
    run (the ``output`` check decides which dtypes the others run in; ``side_effects`` covers
    every call of the run)."""

    def __init__(self, ref: FamilyRef, target: Target) -> None:
        self.ref, self.target = ref, target
        kind = target.kind.name
        plan = plan_checks(kind, ref.dtypes, target.inverse is not None, ref.device, target, ref.bitwise_determinism)
        self.claims = [
            Claim(
                id=f"conformance.{kind}.{entry.name}",
                paper="conformance",
                where=target.spec,
                statement=entry.statement,
                kind=entry.claim_kind,
                checks=(TargetCheck(entry, self),),
            )
            for entry in plan
        ]
        self._by_id = {c.id: c for c in self.claims}
        self._sessions: dict[tuple[str, int], _Session] = {}
        self._replay_ctx: Ctx | None = None

    def __getitem__(self, claim_id: str) -> Claim:
        return self._by_id[claim_id]

    def __contains__(self, claim_id: object) -> bool:
        return claim_id in self._by_id

    @contextmanager
    def opened(self) -> Iterator[Family]:
        """This family, open already (its target and its sessions): what the tasks of a ``validate``
        run in this process name, so that they share its sessions (the engine's ClaimFamily)."""
        yield self

    def session(self, profile: str, seed: int) -> Ctx:
        """The context every claim of a run with ``profile`` and ``seed`` runs in."""
        return self._session(profile, seed).ctx

    def _session(self, profile: str, seed: int) -> _Session:
        key = (profile, seed)
        if key not in self._sessions:
            r = self.ref
            ctx = session(
                self.target,
                r.dtypes,
                profile=profile,
                seed=seed,
                device=r.device,
                timeout=r.timeout,
                runner=self.target.runner,
                bitwise_determinism=r.bitwise_determinism,
                other_device=other_device(r.device) or "cuda",
            )
            self._sessions[key] = _Session(ctx, set())
        return self._sessions[key]

    def measuring_ctx(self) -> Ctx:
        """Where a counterexample is measured again: the run's session (confirmation), or for a
        replay from a file a context of its own (the dtypes of the file, profile default, seed 0)."""
        if self._sessions:
            return next(reversed(self._sessions.values())).ctx
        if self._replay_ctx is None:
            r = self.ref
            self._replay_ctx = session(
                self.target, r.dtypes, device=r.device, timeout=r.timeout, bitwise_determinism=r.bitwise_determinism
            )
        return self._replay_ctx


def family(
    target: Target, kind: str | None = None, dtypes: tuple[str, ...] = ("float32", "float64"), device: str = "cpu"
) -> list[Claim]:
    """The claims of ``kind`` (default: the target's) over the opened ``target``, in plan order:
    ``conformance.<kind>.<check>``, each with one :class:`TargetCheck`."""
    ref = FamilyRef(target.spec, kind or target.kind.name, tuple(dtypes), device)
    return Family(ref, target).claims


class TargetCheck(Check):
    """One conformance check of a kind, run against the session of its family's target.

    ``run`` gives one evidence row per dtype measured; each refutation is confirmed through
    :meth:`replay` before it stands. ``replay`` measures a recorded counterexample again with the
    check's measure (its planned entry's test ratio, or its routine for a check without one), in the
    verifier's process (the target's process only computes raw values)."""

    threshold: float | None = THRESHOLD

    def __init__(self, entry: PlanEntry, fam: Family) -> None:
        self.entry = entry
        self.name = entry.name
        self.fn = entry.run
        self.family = fam
        self.quantity_name = entry.statement

    def backend_names(self) -> tuple[str, ...]:
        """One task per check: its dtypes run in that task, which is labelled by the first."""
        return (f"torch-{self.family.ref.dtypes[0]}",)

    def records(self, check: str) -> bool:
        return check in (self.name, self.entry.recorded_as or self.name)

    def run(self, ctx: RunContext) -> list[Evidence]:
        s = self.family._session(ctx.profile.name, ctx.run_seed)
        planned = f"conformance.{self.family.target.kind.name}.output" in self.family
        if self.name != "output" and "output" not in s.ran and planned:
            check_output(s.ctx)  # which dtypes' outputs fail decides what runs (a task of its own elsewhere)
            s.ran.add("output")
        evidence = _evidence(s.ctx, ctx.claim, self.name, self.fn)
        s.ran.add(self.name)
        return [self._confirmed(self._stated(ev)) for ev in evidence]

    def _stated(self, ev: Evidence) -> Evidence:
        """``ev`` with its counterexample's quantity the statement of what the check measures (its
        planned ``measures``) where the scan recorded the check's name there; the check's name stays
        in ``check``, which replay resolves (results recorded with the name as quantity replay alike)."""
        cx, e = ev.counterexample, self.entry
        if cx is not None and e.measures and cx.quantity in (self.name, e.recorded_as):
            ev.counterexample = replace(cx, quantity=e.measures)
        return ev

    def _confirmed(self, ev: Evidence) -> Evidence:
        """``ev`` confirmed by measuring its counterexample again (the engine's :func:`confirm_again`
        through :meth:`replay`, the confirmation with restarts of its own); a NaN/Inf output on finite
        input stays a finding (refuted, intermittent)."""

        def again(cx: Counterexample) -> Measure:
            self.family.measuring_ctx().calls.begin_check(self.name)
            return self.replay(cx.inputs, _backend(str(cx.inputs.get("dtype", "float64"))), recorded=cx.value)

        return confirm_again(ev, again, _intermittent)

    def replay(self, inputs: Mapping[str, Any], b: Backend, *, recorded: str = "") -> Measure:
        """The recorded counterexample ``inputs`` measured again in ``b``'s dtype (torch-float32 or
        torch-float64; else, or for a half-precision case, the recorded dtype) on the family's
        target, by the check's measuring routine. Its ratio is inf when it fails without one (a
        failed call, a side effect), 0 when it passes without one, NaN when it could not be
        measured; further values are the lines of ``note`` ("label: text")."""
        params, dtype = params_of(dict(inputs))
        if b.name in ("torch-float32", "torch-float64") and dtype in DTYPES:  # half precision stays itself
            dtype = b.name.removeprefix("torch-")
        ctx, e = self.family.measuring_ctx(), self.entry
        if e.quantity is not None:
            return measure_quantity(ctx, self.name, e.quantity, params, dtype)
        if e.measure is not None:
            return e.measure(ctx, params, dtype, recorded)
        raise OrthoverifyError(f"check {self.name!r} has no measuring routine to replay a counterexample with")

    def replay_recorded(self, claim: str, cx: Counterexample) -> Any:
        """``orthoverify replay`` of ``cx``: the value in its dtype (and in float64 beside it, for a
        test ratio other than float32's), more values the routine reports, whether it reproduces."""
        _, dtype = params_of(dict(cx.inputs))
        ratio_check = self.entry.quantity is not None and self.name != "float32" and dtype in DTYPES
        dtypes = sorted({dtype, "float64"}, key=lambda d: d != dtype) if ratio_check else [dtype]
        values: list[tuple[str, str]] = []
        reproduced = False
        for dt in dtypes:
            m = self.replay(cx.inputs, _backend(dt), recorded=cx.value)
            values.append((f"target in {dt}", m.display))
            values += [(line.partition(": ")[0], line.partition(": ")[2]) for line in m.note.splitlines()]
            if dt == dtype:
                reproduced = fails(m.ratio) and not math.isnan(m.ratio)
        return ConformanceReplay(
            claim, self.family.target.spec, values, cx.value, reproduced, cx.check, cx.quantity, dict(cx.inputs)
        )


def _evidence(ctx: Ctx, cid: str, name: str, fn: Callable[[Ctx], list[Evidence]]) -> list[Evidence]:
    """The evidence of one check. A crash of orthoverify's own code is recorded as an error; a
    target fault that escaped the check (a :class:`~orthoverify.isolation.calls.TargetFault`)
    makes the check not run, with the reason: never an error."""
    c0 = time.perf_counter()
    ctx.calls.begin_check(name)
    try:
        evidence = fn(ctx)  # measured here, from the raw values the target's process returns
    except TargetFault as exc:
        ev = Evidence(cid, name, "float", ctx.label(ctx.dtypes[0]), notes=f"Not run: the target failed ({exc}).")
        ev.data["not_run"] = 1
        evidence = [ev]
    except Exception as exc:  # a bug of orthoverify's, never of the target's: recorded as an error
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


@dataclass(frozen=True)
class ConformanceReplay:
    """A re-run of a target on a recorded failing case."""

    claim: str
    target: str
    values: list[tuple[str, str]]
    recorded: str
    reproduced: bool
    check: str = ""
    quantity: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)
    """The recorded case (parameters and dtype, as decimal strings), as ``check``'s replay prints them."""

    def lines(self) -> list[str]:
        """What ``orthoverify replay --target`` prints: the case's inputs (long ones abbreviated),
        the quantity, the target's values, what was recorded and whether it reproduces."""
        out = [f"claim: {self.claim}", f"target: {self.target}", f"check: {self.check}", "inputs:"]
        out += [f"  {name} = {abbreviate(value)}" for name, value in self.inputs.items()]
        out.append(f"quantity: {self.quantity}")
        out += [f"{label}: {text}" for label, text in self.values]
        out.append(f"recorded: {self.recorded}")
        out.append("reproduced: yes" if self.reproduced else "reproduced: NO")
        return out

    def to_json(self) -> dict[str, Any]:
        """The replay for scripts (``--json``): every input in full."""
        return {
            "claim": self.claim,
            "target": self.target,
            "check": self.check,
            "inputs": jsonable(self.inputs),
            "quantity": self.quantity,
            "values": [{"label": label, "value": text} for label, text in self.values],
            "recorded": self.recorded,
            "reproduced": self.reproduced,
        }


def nan_on_finite_input(cx: Counterexample) -> bool:
    """The counterexample records an output (or loss) that was NaN or Inf for finite input: what
    the target did at that call, a defect whether or not it happens again."""
    if "non-finite:" not in cx.value:
        return False
    try:
        params, _dtype = params_of(dict(cx.inputs))
    except (TypeError, ValueError):
        return False
    return bool(params) and all(bool(np.all(np.isfinite(v))) for v in params.values())


def _intermittent(cx: Counterexample, m: Measure) -> str:
    """Why an unreproduced NaN/Inf output on finite input is a finding all the same ("" otherwise)."""
    if not nan_on_finite_input(cx):
        return ""
    return (
        f"Intermittent: the target returned NaN/Inf for finite input, and this did not happen again when the "
        f"counterexample was measured again ({m.display}); an observed NaN on finite input is a finding (refuted, "
        "intermittent)."
    )


def _backend(dtype: str) -> Backend:
    return get_backend(f"torch-{dtype}" if dtype in DTYPES else "torch-float64")


__all__ = ["Family", "FamilyRef", "TargetCheck", "family"]
