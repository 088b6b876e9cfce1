"""What every conformance check reads and returns: the session context (:class:`Ctx`), one
measured case (the engine's :class:`~orthoverify.engine.ratios.Measure`, with its status), a
re-measured counterexample (:func:`remeasured`), and the test-ratio helpers the checks share
(the arithmetic they are measured in, the kind's allowance kappa).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import torch

from orthoverify.backends import get_backend
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.conformance.target import Target
from orthoverify.engine import magnitudes
from orthoverify.engine.allowance import unpromised
from orthoverify.engine.checks import RunContext
from orthoverify.engine.model import Evidence
from orthoverify.engine.model import Kind as ClaimKind
from orthoverify.engine.profiles import Profile, get_profile
from orthoverify.engine.ratios import THRESHOLD, Measure, fails
from orthoverify.engine.scan import CaseBook
from orthoverify.isolation.calls import DEFAULT_TIMEOUT, CallFailure, checked
from orthoverify.isolation.declare import declaration_of
from orthoverify.isolation.isolate import InProcessRunner, subject_of
from orthoverify.isolation.runner import Runner
from orthoverify.isolation.wire import op_forward
from orthoverify.tolerance import unit_roundoff

DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "float64": torch.float64}

F64 = get_backend("numpy-float64")
"""Where every ratio of a target's values is measured (their own format is the ``computed_in`` of
:func:`~orthoverify.engine.ratios.agreement`, whose unit roundoff the ratio divides by)."""


@dataclass(frozen=True, kw_only=True)
class Ctx(RunContext):
    """The engine's run context of a target's session, shared by every check of a family's run:
    the run's profile, seed (``seed`` and ``run_seed``: the run's, so that every claim of the family
    draws the cases a run of the whole family would) and device, plus the target's state. The
    target is reached through ``runner`` only (by default in its own process, see
    :mod:`~orthoverify.isolation.isolate`): :meth:`run` for its output at a parameter point,
    :meth:`remote` for any other operation. Made by :func:`session`."""

    target: Target
    dtypes: tuple[str, ...] = ("float32", "float64")
    timeout: float = DEFAULT_TIMEOUT
    other_device: str = "cuda"
    """The device the ``devices`` check compares against (planned only when it is available)."""
    runner: Runner | None = None
    """How the target is called (None: in a thread of this process, for a Target given directly)."""
    failed_output: dict[str, str] = field(default_factory=dict)
    """dtype -> why the ``output`` check failed there: checks needing that output are not run."""
    bitwise_determinism: bool = False
    """The ``determinism`` check asks for bitwise equal repeated calls (default: equal to the allowance)."""
    measured: CaseBook = field(default_factory=CaseBook)
    """check -> every case a mode or lifecycle check measured (``CaseBook.record``),
    for its series, smallest counterexample and blame."""
    jitter: dict[str, float] = field(default_factory=dict)
    """dtype -> the largest difference between repeated calls the ``determinism`` check saw."""

    def __post_init__(self) -> None:
        if self.runner is None:  # frozen: the one runner of the session, fixed on creation
            t = self.target
            runner = t.runner or InProcessRunner(subject_of(t.fn, t.kind.view, t.inverse, declaration_of(t)))
            object.__setattr__(self, "runner", runner)

    @property
    def calls(self) -> Runner:
        assert self.runner is not None
        return self.runner

    def label(self, dtype: str) -> str:
        return f"torch-{dtype}-{self.device}"

    def remote(
        self,
        op: str,
        *tensors: torch.Tensor,
        kw: dict[str, Any] | None = None,
        timeout: float | None = None,
        device: str | None = None,
    ) -> list[torch.Tensor | None] | CallFailure:
        """The raw tensors the operation ``op`` (a name of :mod:`~orthoverify.isolation.program`'s
        table) returns where the target runs (copies of ``tensors`` are sent), or why there are none."""
        res = self.calls.request(
            op, tensors, kw or {}, self.timeout if timeout is None else timeout, device or self.device
        )
        return res if isinstance(res, CallFailure) else res.out

    def run(self, params: Params, dtype: str, *, device: str | None = None) -> torch.Tensor | CallFailure:
        """The target's output for ``params`` in ``dtype`` (as the checks compare it: see Kind.view)."""
        kind = self.target.kind
        dt = DTYPES[dtype]
        res = self.remote(op_forward, *kind.args(params, dt, "cpu"), device=device)
        if isinstance(res, CallFailure):
            return res
        out = checked(res[0] if res else None, shape=kind.out_shape(params), dtype=kind.out_dtype(dt))
        return out if isinstance(out, CallFailure) else kind.view(out)

    def call_target(self, *args: torch.Tensor, **expect: Any) -> torch.Tensor | CallFailure:
        """The target's output for ``args`` where it runs, checked against ``expect`` (shape, dtype,
        finite) by :func:`~orthoverify.isolation.calls.checked` (not viewed: a complex output stays complex)."""
        res = self.remote(op_forward, *args)
        return res if isinstance(res, CallFailure) else checked(res[0] if res else None, **expect)

    def outside(self, params: Params) -> str | None:
        return self.target.domain(params) if self.target.domain is not None else None


def session(
    target: Target,
    dtypes: tuple[str, ...] = ("float32", "float64"),
    *,
    profile: str | Profile = "default",
    seed: int = 0,
    device: str = "cpu",
    **state: Any,
) -> Ctx:
    """The context of a session over ``target`` for a run with ``profile`` and ``seed``: the
    engine's :class:`RunContext` of the family's run (no claim or check of its own; its backend the
    arithmetic of the first dtype) with the target's ``state`` (Ctx's own fields)."""
    prof = get_profile(profile) if isinstance(profile, str) else profile
    return Ctx(
        claim="",
        check="",
        backend=get_backend(f"torch-{dtypes[0]}" if dtypes and dtypes[0] in DTYPES else "torch-float64"),
        profile=prof,
        seed=seed,
        run_seed=seed,
        device=device,
        target=target,
        dtypes=tuple(dtypes),
        **state,
    )


def not_run(reason: str) -> Measure:
    """A case that was not measured (the target's process gave up, or a prerequisite failed)."""
    return Measure(math.nan, reason, status="not-run")


def failed(f: CallFailure, prefix: str = "") -> Measure:
    """The case of a failed call: not run when the call was never made, else a failure."""
    text = f"{prefix}{f}"
    return (
        not_run(text) if f.kind == "not-run" else Measure(math.inf, text, status="raised" if f.kind == "raised" else "")
    )


def as_np(x: torch.Tensor) -> np.ndarray:
    return x.detach().to("cpu", torch.float64).numpy()


def inputs_of(params: Params, dtype: str) -> dict[str, Any]:
    """A case as exact decimal strings (every float64 is a short repr), with its dtype."""
    out: dict[str, Any] = {
        k: np.vectorize(repr, otypes=[object])(np.asarray(v, dtype=np.float64)).tolist() for k, v in params.items()
    }
    out["dtype"] = dtype
    return out


def params_of(inputs: dict[str, Any]) -> tuple[dict[str, np.ndarray], str]:
    params = {k: np.array(v, dtype=object).astype(np.float64) for k, v in inputs.items() if k != "dtype"}
    return params, str(inputs.get("dtype", "float64"))


Quantity = Callable[[Ctx, Params, str], Measure]
"""A check's test ratio at one case: (session, parameters, dtype) -> the measure."""
Remeasure = Callable[[Ctx, Params, str, str], Measure]
"""A check without a test ratio measuring a recorded case again: (session, parameters, dtype, recorded value)."""


class PlanEntry(NamedTuple):
    """One planned check of a target: its name (the claim is ``conformance.<kind>.<name>``), the
    claim's kind, the statement it checks, the function that runs it over a session, and its
    measure: the one routine its cases, confirmation, replay and blame are measured by."""

    name: str
    claim_kind: ClaimKind
    statement: str
    run: Callable[[Ctx], list[Evidence]]
    quantity: Quantity | None = None
    """The test ratio every case of the check is measured with (None: ``measure`` instead)."""
    measure: Remeasure | None = None
    """How a recorded counterexample of a check without a test ratio is measured again."""
    recorded_as: str = ""
    """The check name its counterexamples are recorded under when not ``name`` (``batch_declared``)."""
    measures: str = ""
    """What a test ratio check measures, as the statement of its ratio: its counterexamples' quantity."""


Row = tuple[bool, str, ClaimKind, str, Callable[[Ctx], list[Evidence]], Any, str]
"""A check of a plan table: whether it applies, its name, claim kind and statement, the function that runs
it, its test ratio (then its measured ratio in words last) or, without one (""), its :data:`Remeasure`."""


def entries(rows: list[Row]) -> list[PlanEntry]:
    """The plan entries of the rows that apply."""
    return [
        PlanEntry(name, claim, statement, run, q if ratio else None, None if ratio else q, measures=ratio)
        for when, name, claim, statement, run, q, ratio in rows
        if when
    ]


def refusal(f: CallFailure, what: str) -> Measure:
    """The case of a mode the target declined with an exception of its own (``f.kind == "raised"``):
    unsupported, with the exception's first line; not measured, never a failure."""
    first = (f.message.strip().splitlines() or [""])[0][:300]
    return Measure(math.nan, f"{what}: the target raised {first}", status="raised", unsupported=first or "an exception")


def _kappa(kind: Kind, params: Params) -> float:
    return kind.condition(params) if kind.condition is not None else 1.0


def allowance(ctx: Ctx, params: Params, dtype: str) -> tuple[float, Measure | None]:
    """The allowance's kappa at ``params`` and, where it promises no digit in ``dtype``, the case's
    measure (not judged; :func:`~orthoverify.engine.allowance.unpromised`), else None."""
    kappa = _kappa(ctx.target.kind, params)
    return kappa, unpromised(kappa, unit_roundoff(dtype), _size(ctx.target.kind, params))


def reference_np(kind: Kind, params: Params, digits: int | None = None) -> np.ndarray:
    assert kind.reference is not None
    b = get_backend("numpy-float64" if digits is None else f"mpmath-{digits}")
    return np.asarray(b.to_numpy(kind.reference(params, b)), dtype=np.float64)


def rounded(params: Params, dtype: str) -> dict[str, np.ndarray]:
    """The parameters as the target receives them in ``dtype`` (float32 rounds them): the reference
    is evaluated on these, so the comparison measures the target, not the rounding of its input."""
    np_dt = np.float32 if dtype == "float32" else np.float64
    return {k: np.asarray(v, dtype=np.float64).astype(np_dt).astype(np.float64) for k, v in params.items()}


def remeasured(
    failing: bool, display: str, ratio: float = math.nan, more: Sequence[tuple[str, str]] = (), measured: bool = True
) -> Measure:
    """A recorded case measured again by its check's measuring routine, as the engine's measure:
    the ratio when it decides (``failing`` by the check's own rule), else inf when it fails without
    one (a failed call, a side effect), 0 when it passes without one; NaN, status ``not-run``,
    when it could not be measured (no answer either way). ``more`` are further values to show,
    one "label: text" line each of the measure's note."""
    note = "\n".join(f"{k}: {v}" for k, v in more)
    if not measured:
        return Measure(math.nan, display, note, status="not-run")
    if failing:
        return Measure(ratio if fails(ratio) and not math.isnan(ratio) else math.inf, display, note)
    return Measure(ratio if ratio <= THRESHOLD else 0.0, display, note)


def failing(m: Measure) -> bool:
    """Whether a measure of :func:`remeasured` fails again (not when it could not be measured)."""
    return fails(m.ratio) and not m.not_run


def magnitude(kind: Kind, params: Params) -> float:
    """max|x_ij| over the parameters a draw's magnitude applies to: the size a maintainer reads (a
    check of another shape, say a lifecycle step, may record other values: then over all)."""
    return magnitudes.magnitude(params, [k for k in kind.scaled if k in params] or list(params))


def extreme(kind: Kind, params: Params) -> bool:
    """True where the parameters lie outside the kind's ordinary domain (``Kind.ordinary``): their
    magnitude max|x_ij| is nonzero and below it (subnormal, say) or above it (near overflow)."""
    if not any(k in params for k in kind.scaled):
        return False  # a case of another shape (a lifecycle step, a mode's settings)
    m = magnitude(kind, params)
    lo, hi = kind.ordinary
    return (0.0 < m < lo) or m > hi


def _where(kind: Kind, params: Params) -> str:
    """Where a failure is, as a maintainer reads it: the parameters' magnitude and the size n; for
    a case of another shape (a lifecycle step, a mode's settings: scalars only), its settings."""
    if not any(k in params for k in kind.scaled) and all(np.size(v) == 1 for v in params.values()):
        settings = []
        for k, v in params.items():
            x = float(np.asarray(v, dtype=np.float64).reshape(-1)[0])
            settings.append(f"{k} = {int(x)}" if x.is_integer() else f"{k} = {x:.3g}")
        return "at " + ", ".join(settings)
    return f"at max|x_ij| = {magnitude(kind, params):.3g}, n = {_size(kind, params)}"


def _size(kind: Kind, params: Params) -> int:
    try:
        return int(kind.view_shape(params)[0])
    except (KeyError, IndexError, TypeError, AttributeError):  # parameters of another shape
        return 0


def _ev(ctx: Ctx, check: str, dtype: str, method: str, **kw: Any) -> Evidence:
    return Evidence(claim="", check=check, method=method, backend=ctx.label(dtype), threshold=THRESHOLD, **kw)  # type: ignore[arg-type]


def output_failed(ctx: Ctx, dtype: str, *also: str) -> str | None:
    """Why a check in ``dtype`` is not run: the ``output`` check failed there (or in one of the
    dtypes ``also`` it needs), or None: it can run."""
    where = next((d for d in ctx.failed_output if d == dtype or d in also), None)
    return None if where is None else f"the output check failed in {where} ({ctx.failed_output[where]})"


def blocked(ctx: Ctx, check: str, dtype: str, method: str = "float") -> Evidence | None:
    """Evidence that ``check`` was not run in ``dtype`` because ``output`` failed there (None: it can run)."""
    why = output_failed(ctx, dtype)
    if why is None:
        return None
    ev = _ev(ctx, check, dtype, method, cases=0)
    ev.worst_ratio, ev.threshold = None, None
    ev.notes = f"Not run: {why}."
    ev.data["not_run"] = 1
    return ev
