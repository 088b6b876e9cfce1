"""The conformance checks: each turns calls of a target into evidence, in the engine's schema.

Every quantity is a scaled test ratio (threshold 30) computed from the target's output in the
dtype under test; a failing case is re-run (a deterministic target gives the same ratio again)
and, where the kind has a reference, re-measured against orthoverify's reference at 50 digits,
so a counterexample never rests on the reference's own rounding.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from orthoverify.backends import get_backend
from orthoverify.conformance.calls import DEFAULT_TIMEOUT, CallFailure, call, checked
from orthoverify.conformance.isolate import (
    InProcessRunner,
    Runner,
    op_forward,
    op_inverse,
    op_jvp,
    op_loss_grad,
    op_reach,
)
from orthoverify.conformance.kinds import Kind, Params, special_points
from orthoverify.engine.model import Counterexample, Evidence
from orthoverify.engine.ratios import THRESHOLD
from orthoverify.errors import OrthoverifyError

DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "float64": torch.float64}
EPS: dict[torch.dtype, float] = {torch.float32: 2.0**-24, torch.float64: 2.0**-53}


@dataclass
class Target:
    """A callable under test and what it declares."""

    spec: str
    fn: Callable[..., Any]
    kind: Kind
    description: str = ""
    domain: Callable[[Params], str | None] | None = None
    """Why a parameter point lies outside the target's declared domain (None: inside)."""
    inverse: Callable[[torch.Tensor], torch.Tensor] | None = None
    """The target's own inverse map (a parametrisation's ``right_inverse``), for coverage."""
    runner: Runner | None = None
    """Where the target runs when it lives in a process of its own (``fn`` is then a :class:`RemoteFn`)."""


class TargetFault(RuntimeError):
    """A call of the target through :class:`RemoteFn` failed (raised, died, hung, returned no tensor)."""


@dataclass
class Ctx:
    """Everything a conformance check reads. The target is reached through ``runner`` only (by
    default in its own process, see :mod:`~orthoverify.conformance.isolate`): :meth:`run` for its
    output at a parameter point, :meth:`remote` for any other operation."""

    target: Target
    dtypes: tuple[str, ...] = ("float32", "float64")
    device: str = "cpu"
    profile: str = "default"
    seed: int = 0
    timeout: float = DEFAULT_TIMEOUT
    examples: int = 100
    other_device: str = "cuda"
    """The device the ``devices`` check compares against (planned only when it is available)."""
    runner: Runner | None = None
    """How the target is called (None: in a thread of this process, for a Target given directly)."""
    failed_output: dict[str, str] = field(default_factory=dict)
    """dtype -> why the ``output`` check failed there: checks needing that output are not run."""
    bitwise_determinism: bool = False
    """The ``determinism`` check asks for bitwise equal repeated calls (default: equal to the allowance)."""

    def __post_init__(self) -> None:
        if self.runner is None:
            self.runner = self.target.runner or InProcessRunner(self.target)

    @property
    def calls(self) -> Runner:
        assert self.runner is not None
        return self.runner

    def rng(self, *salt: str) -> np.random.Generator:
        import zlib

        return np.random.default_rng([self.seed, *(zlib.crc32(s.encode()) for s in salt)])

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
        """The raw tensors the operation ``op`` (a name of :mod:`~orthoverify.conformance.program`'s
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

    def call(self, fn: Callable[..., Any], *args: Any, timeout: float | None = None, **kw: Any) -> Any:
        """``fn(*args)``: the target's own function through the runner, anything else (orthoverify's
        code) in a thread with a timeout."""
        if fn is self.target.fn and all(isinstance(a, torch.Tensor) for a in args):
            res = self.remote(op_forward, *args, timeout=timeout)
            return res if isinstance(res, CallFailure) else checked(res[0] if res else None, **kw)
        return call(fn, *args, timeout=self.timeout if timeout is None else timeout, **kw)

    def outside(self, params: Params) -> str | None:
        return self.target.domain(params) if self.target.domain is not None else None


class RemoteFn:
    """The target's function as the verifier's process sees it: each call is a forward operation
    in the target's process (no autograd across it)."""

    def __init__(self, runner: Runner, timeout: float = DEFAULT_TIMEOUT, op: str | None = None) -> None:
        self.runner, self.timeout, self.op = runner, timeout, op or op_forward

    def __call__(self, *args: torch.Tensor) -> torch.Tensor:
        dev = str(args[0].device) if args else "cpu"
        res = self.runner.request(self.op, [a.to("cpu") for a in args], {}, self.timeout, dev)
        if isinstance(res, CallFailure):
            raise TargetFault(str(res))
        out = res.out[0] if res.out else None
        if not isinstance(out, torch.Tensor):
            raise TargetFault("the target returned no tensor")
        return out


def not_run(reason: str) -> Case:
    """A case that was not measured (the target's process gave up, or a prerequisite failed)."""
    return Case(math.nan, reason, not_run=True)


def failed(f: CallFailure, prefix: str = "") -> Case:
    """The case of a failed call: not run when the call was never made, else a failure."""
    text = f"{prefix}{f}"
    return not_run(text) if f.kind == "not-run" else Case(math.inf, text, raised=f.kind == "raised")


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


def orthogonality(q: np.ndarray, eps: float) -> float:
    n = q.shape[-1]
    return float(np.linalg.norm(q.T @ q - np.eye(n))) / (n * eps)


def agreement(x: np.ndarray, ref: np.ndarray, eps: float) -> float:
    n = ref.shape[-1]
    scale = float(np.linalg.norm(ref)) or 1.0
    return float(np.linalg.norm(x - ref)) / (n * eps * scale)


@dataclass
class Case:
    """One measured case: the ratio, a display of it, and the failure message when the call failed
    (NaN ratio: not applicable, or, with ``not_run``, not measured at all)."""

    ratio: float
    display: str
    not_run: bool = False
    raised: bool = False
    """The target raised (at a special point: it declined an edge case, which is no defect)."""
    beyond: bool = False
    """The allowance promises no digit at this input (30 n eps kappa >= 1): not judged."""
    unsupported: str = ""
    """The first line of the exception with which the target declined the mode this case exercises
    (a refusal, not a wrong number): the check's verdict is then ``unsupported``."""


def refusal(f: CallFailure, what: str) -> Case:
    """The case of a mode the target declined with an exception of its own (``f.kind == "raised"``):
    unsupported, with the exception's first line; not measured, never a failure."""
    first = (f.message.strip().splitlines() or [""])[0][:300]
    return Case(math.nan, f"{what}: the target raised {first}", raised=True, unsupported=first or "an exception")


def _fails(r: float, thr: float = THRESHOLD) -> bool:
    return not (r <= thr)


# ------------------------------------------------------------------------------ quantities
def q_orthogonal(ctx: Ctx, params: Params, dtype: str) -> Case:
    kind = ctx.target.kind
    kappa = _kappa(kind, params)
    eps = EPS[DTYPES[dtype]]
    if _beyond(kappa, eps, _size(kind, params)):
        return Case(math.nan, f"kappa = {kappa:.3g}: no digit promised", beyond=True)
    out = ctx.run(params, dtype)
    if isinstance(out, CallFailure):
        return failed(out)
    r = orthogonality(as_np(out), eps) / kappa
    return Case(r, f"||Q'Q - I||_F / (n eps{_kappa_text(kappa)}) = {r:.6g}")


def _beyond(kappa: float, eps: float, n: int) -> bool:
    """True where the allowance promises no correct digit (30 n eps kappa >= 1): nothing to judge."""
    return not (THRESHOLD * n * eps * kappa < 1.0)


def _kappa(kind: Kind, params: Params) -> float:
    return kind.condition(params) if kind.condition is not None else 1.0


def _kappa_text(kappa: float) -> str:
    return f" kappa, kappa = {kappa:.3g}" if kappa != 1.0 else ""


def reference_np(kind: Kind, params: Params, digits: int | None = None) -> np.ndarray:
    assert kind.reference is not None
    b = get_backend("numpy-float64" if digits is None else f"mpmath-{digits}")
    return np.asarray(b.to_numpy(kind.reference(params, b)), dtype=np.float64)


def rounded(params: Params, dtype: str) -> dict[str, np.ndarray]:
    """The parameters as the target receives them in ``dtype`` (float32 rounds them): the reference
    is evaluated on these, so the comparison measures the target, not the rounding of its input."""
    np_dt = np.float32 if dtype == "float32" else np.float64
    return {k: np.asarray(v, dtype=np.float64).astype(np_dt).astype(np.float64) for k, v in params.items()}


def q_forward(ctx: Ctx, params: Params, dtype: str) -> Case:
    kind = ctx.target.kind
    kappa = _kappa(kind, params)
    if _beyond(kappa, EPS[DTYPES[dtype]], _size(kind, params)):
        return Case(math.nan, f"kappa = {kappa:.3g}: no digit promised", beyond=True)
    try:
        with np.errstate(all="ignore"):
            ref = reference_np(kind, rounded(params, dtype))
    except OrthoverifyError as exc:  # the reference's own domain (say, n = 1 for eq. 6)
        return Case(math.nan, f"the reference is not defined here: {exc}", beyond=True)
    if not np.isfinite(ref).all():
        return Case(math.nan, "the reference is not finite here", beyond=True)
    out = ctx.run(params, dtype)
    if isinstance(out, CallFailure):
        return failed(out)
    r = agreement(as_np(out), ref, EPS[DTYPES[dtype]]) / kappa
    return Case(r, f"||f - reference||_F / (n eps{_kappa_text(kappa)} ||reference||) = {r:.6g}")


def q_float32(ctx: Ctx, params: Params, dtype: str = "float32") -> Case:
    """float32 against float64 of the target on the same (float32-rounded) parameters, scaled by the
    kind's allowance: the two agree to what a backward-stable float32 evaluation promises."""
    p32 = rounded(params, "float32")
    kappa = _kappa(ctx.target.kind, p32)
    if _beyond(kappa, EPS[torch.float32], _size(ctx.target.kind, p32)):
        return Case(math.nan, f"kappa = {kappa:.3g}: no digit promised", beyond=True)
    lo, hi = ctx.run(p32, "float32"), ctx.run(p32, "float64")
    for out in (lo, hi):
        if isinstance(out, CallFailure):
            return failed(out)
    assert isinstance(lo, torch.Tensor) and isinstance(hi, torch.Tensor)
    r = agreement(as_np(lo), as_np(hi), EPS[torch.float32]) / kappa
    text = f"||f32 - f64||_F / (n eps32{_kappa_text(kappa)} ||f64||) = {r:.6g}"
    if _fails(r):
        text += ". " + which_is_off(
            ctx, [p32], "float32", {"the float32 call": [as_np(lo)], "the float64 call": ([as_np(hi)], "float64")}
        )
    return Case(r, text)


def q_determinism(ctx: Ctx, params: Params, dtype: str) -> Case:
    """Three calls at the same parameters. By default they must agree to the kind's allowance (two
    computations, each allowed its own rounding error: a test ratio, as for ``batch``), so a target
    whose evaluation order varies from call to call (threaded reductions, GPU atomics) is
    deterministic up to rounding; with ``ctx.bitwise_determinism`` they must be bitwise equal."""
    outs = [ctx.run(params, dtype) for _ in range(3)]
    for out in outs:
        if isinstance(out, CallFailure):
            return failed(out)
    arrays = [as_np(o) for o in outs if isinstance(o, torch.Tensor)]
    if all(np.array_equal(arrays[0], a) for a in arrays[1:]):
        return Case(0.0, "bitwise equal")
    diff = max(float(np.max(np.abs(arrays[0] - a))) for a in arrays[1:])
    if ctx.bitwise_determinism:
        return Case(math.inf, f"repeated calls differ by up to {diff:.3g} (bitwise equality asked for)")
    kappa = _kappa(ctx.target.kind, params)
    r = max(agreement(a, arrays[0], EPS[DTYPES[dtype]]) for a in arrays[1:]) / (2 * kappa)
    jitter: dict[str, float] = vars(ctx).setdefault("_jitter", {})
    jitter[dtype] = max(jitter.get(dtype, 0.0), diff)
    ratio = f"max ||f_i - f_1|| / (2 n eps{_kappa_text(kappa)} ||f_1||) = {r:.6g}"
    return Case(r, f"repeated calls differ by up to {diff:.3g}: {ratio}")


def check_determinism(ctx: Ctx) -> list[Evidence]:
    """Repeated calls agree (to the allowance, or bitwise when asked); a passing row whose calls were
    not bitwise equal says so, with the size of the difference ("deterministic up to rounding")."""
    vars(ctx)["_jitter"] = {}
    evidence = scan(ctx, "determinism", sized_cases(ctx, "determinism", scales=(1.0,)))
    jitter: dict[str, float] = vars(ctx)["_jitter"]
    for ev in evidence:
        if not ctx.bitwise_determinism:
            ev.data["allowance"] = ctx.target.kind.allowance
        dtype = ev.backend.split("-")[1]
        if dtype in jitter:
            ev.data["max_difference"] = jitter[dtype]
            if ev.passed:
                ev.notes = (
                    f"Deterministic up to rounding: repeated calls differ by up to {jitter[dtype]:.3g}, within the "
                    f"allowance (worst ratio {ev.worst_ratio:.3g}); not bitwise equal. {ev.notes}"
                ).strip()
    return evidence


def q_batch(ctx: Ctx, params: Params, dtype: str) -> Case:
    """Three parameter sets stacked on a leading axis must give the three outputs stacked."""
    kind = ctx.target.kind
    dt = DTYPES[dtype]
    rng = ctx.rng("batch", dtype)
    shapes = {k: v.shape for k, v in params.items()}
    n = next(iter(params.values())).shape[0]
    sets = [params]
    for _ in range(50):  # draws of the same size until two more have the same shapes (m varies for U)
        if len(sets) == 3:
            break
        cand = kind.draw(rng, n, 1.0)
        if {k: v.shape for k, v in cand.items()} == shapes:
            sets.append(cand)
    singles = [ctx.run(s, dtype) for s in sets]
    for out in singles:
        if isinstance(out, CallFailure):
            return failed(out, "single call: ")
    stacked = [torch.stack(parts) for parts in zip(*(kind.args(s, dt, "cpu") for s in sets), strict=True)]
    res = ctx.remote(op_forward, *stacked)
    if isinstance(res, CallFailure) and res.kind in ("not-run", "died", "timeout"):
        return failed(res, "batched call: ")
    out = (
        res
        if isinstance(res, CallFailure)
        else checked(res[0] if res else None, shape=(len(sets), *kind.out_shape(params)), dtype=kind.out_dtype(dt))
    )
    if isinstance(out, CallFailure):
        return Case(math.nan, f"the target does not take stacked parameters: {out}")
    out = kind.view(out)
    kappa = max(_kappa(kind, s) for s in sets)
    r = max(agreement(as_np(out[i]), as_np(s), EPS[dt]) for i, s in enumerate(singles) if isinstance(s, torch.Tensor))
    r /= 2 * kappa  # two computations, each allowed its own error
    text = f"max ||batch[i] - single_i|| / (2 n eps{_kappa_text(kappa)} ||single_i||) = {r:.6g}"
    if _fails(r):
        text += ". " + which_is_off(
            ctx,
            sets,
            dtype,
            {
                "single calls": [as_np(x) for x in singles if isinstance(x, torch.Tensor)],
                "the batched call": list(as_np(out)),
            },
        )
    return Case(r, text)


def which_is_off(ctx: Ctx, sets: list[Params], dtype: str, outputs: dict[str, Any]) -> str:
    """Two computations of the same outputs disagree: judge each against the reference (or, for a
    kind without one, against orthogonality, both scaled by the allowance) and say which is off."""
    kind = ctx.target.kind
    verdict: dict[str, float] = {}
    for name, value in outputs.items():  # a list of outputs in ``dtype``, or (outputs, their dtype)
        outs, own = value if isinstance(value, tuple) else (value, dtype)
        eps = EPS[DTYPES[own]]
        worst = 0.0
        for p, o in zip(sets, outs, strict=True):
            kappa = _kappa(kind, p)
            if kind.reference is not None:
                r = agreement(o, reference_np(kind, rounded(p, own)), eps) / kappa
            elif kind.orthogonal_output:
                r = orthogonality(o, eps) / kappa
            else:
                return "(no reference to tell which is off)"
            worst = max(worst, r)
        verdict[name] = worst
    how = "against the reference" if kind.reference is not None else "orthogonality"
    parts = ", ".join(f"{k} {v:.3g}" for k, v in verdict.items())
    off = [k for k, v in verdict.items() if _fails(v)]
    if len(off) == 1:
        verb = "is" if off[0].startswith("the") else "are"
        return f"Judged by {how} (ratio): {parts}: {off[0]} {verb} the inaccurate one"
    if not off:
        return f"Judged by {how} (ratio): {parts}: both within the allowance, so neither can be blamed"
    return f"Judged by {how} (ratio): {parts}: both are off"


def _loss_grad(ctx: Ctx, params: Params, dtype: str, g: np.ndarray) -> dict[str, np.ndarray] | CallFailure:
    """The target's autograd gradient of L = sum(f(P) * G) with respect to the differentiable parameters."""
    kind = ctx.target.kind
    dt = DTYPES[dtype]
    args = list(kind.args(params, dt, "cpu"))
    names = list(params)
    if kind.name == "complex-to-real":
        wrt = [0]
    else:
        wrt = [i for i, name in enumerate(names) if name in kind.differentiable]
    res = ctx.remote(op_loss_grad, torch.as_tensor(g), *args, kw={"wrt": wrt})
    if isinstance(res, CallFailure):
        return res
    if len(res) != len(wrt) + 1 or any(r is None for r in res):
        return CallFailure("type", "the backward pass returned no gradient")
    lval = res[0]
    assert lval is not None
    if not bool(torch.isfinite(lval).all()):
        return CallFailure("non-finite", "the loss through the target is NaN or Inf")
    grads = {i: r for i, r in zip(wrt, res[1:], strict=True)}
    out: dict[str, np.ndarray] = {}
    if kind.name == "complex-to-real":
        gz = grads[0]
        assert gz is not None
        out["re"], out["im"] = gz.real.detach().double().cpu().numpy(), gz.imag.detach().double().cpu().numpy()
        return out
    for i, name in enumerate(names):
        if i in grads:
            gi = grads[i]
            assert gi is not None
            out[name] = gi.detach().double().cpu().numpy()
    return out


def _reference_grad(kind: Kind, params: Params, g: np.ndarray, digits: int = 50) -> dict[str, np.ndarray]:
    """Central differences of L = sum(ref(P) * G) at ``digits`` digits (step 1e-20: error ~1e-40)."""
    import mpmath

    b = get_backend(f"mpmath-{digits}")
    gg = b.asarray(g)
    out: dict[str, np.ndarray] = {}
    h = mpmath.mpf("1e-20")
    for name in kind.differentiable:
        base = {k: b.asarray(v) for k, v in params.items()}
        grad = np.zeros(params[name].shape)
        for idx in np.ndindex(*params[name].shape):
            if name in kind.tril and idx[0] < idx[1]:
                continue  # entries above the diagonal are not parameters (eq. 9)
            vals = []
            for sgn in (1, -1):
                p = dict(base)
                x = p[name].copy()
                x[idx] = x[idx] + sgn * h
                if name in kind.skew:  # A stays skew: move a_ij and a_ji together
                    if idx[0] >= idx[1]:
                        continue
                    x[idx[::-1]] = -x[idx]
                p[name] = x
                assert kind.reference is not None
                out_m = kind.reference(p, b)
                vals.append(b.sum(out_m * gg))
            if len(vals) == 2:
                grad[idx] = float((vals[0] - vals[1]) / (2 * h))
        out[name] = grad
    return out


def q_gradient(ctx: Ctx, params: Params, dtype: str) -> Case:
    kind = ctx.target.kind
    rng = np.random.default_rng(7)
    g = rng.standard_normal(kind.view_shape(params))
    got = _loss_grad(ctx, params, dtype, g)
    if isinstance(got, CallFailure):
        return refusal(got, "backward") if got.kind == "raised" else failed(got, "backward: ")
    eps = EPS[DTYPES[dtype]]
    if kind.reference is not None:
        ref = _reference_grad(kind, params, g)
        how = "50-digit central differences of the reference"
    else:
        ref64 = _fd_target(ctx, params, g)
        if isinstance(ref64, CallFailure):
            return failed(ref64, "finite differences of the target: ")
        ref = ref64
        how = "float64 central differences of the target"
    # only the skew part of the gradient of a skew parameter is defined: compare G - G'
    got = {k: v - v.T if k in kind.skew else v for k, v in got.items()}
    ref = {k: v - v.T if k in kind.skew else v for k, v in ref.items()}
    got = {k: np.tril(v) if k in kind.tril else v for k, v in got.items()}
    ref = {k: np.tril(v) if k in kind.tril else v for k, v in ref.items()}
    num = math.sqrt(sum(float(np.sum((got[k] - ref[k]) ** 2)) for k in ref))
    scale = math.sqrt(sum(float(np.sum(ref[k] ** 2)) for k in ref)) or 1.0
    n = kind.view_shape(params)[0]
    fd_eps = eps if kind.reference is not None else max(eps, 1e-7)
    r = num / (n * fd_eps * scale)
    return Case(r, f"||grad - {how}|| / (n eps ||reference grad||) = {r:.6g}")


def _fd_target(ctx: Ctx, params: Params, g: np.ndarray) -> dict[str, np.ndarray] | CallFailure:
    """Central differences of the target itself in float64 (for kinds without a reference)."""
    kind = ctx.target.kind
    out: dict[str, np.ndarray] = {}
    for name in kind.differentiable:
        grad = np.zeros(params[name].shape)
        for idx in np.ndindex(*params[name].shape):
            h = 1e-6 * max(1.0, abs(float(params[name][idx])))
            vals = []
            for sgn in (1, -1):
                p = {k: np.array(v, copy=True) for k, v in params.items()}
                p[name][idx] += sgn * h
                res = ctx.run(p, "float64")
                if isinstance(res, CallFailure):
                    return res
                vals.append(float(np.sum(as_np(res) * g)))
            grad[idx] = (vals[0] - vals[1]) / (2 * h)
        out[name] = grad
    return out


def _tangent(kind: Kind, params: Params, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A random direction in the differentiable parameters that stays in the domain's shape
    (lower trapezoidal where eq. 9 says so, skew for a skew parameter)."""
    out = {}
    for name in kind.differentiable:
        t = rng.standard_normal(np.shape(params[name]))
        if name in kind.tril:
            t = np.tril(t)
        if name in kind.skew:
            t = np.triu(t, 1) - np.triu(t, 1).T
        out[name] = t
    return out


def _reference_direction(kind: Kind, params: Params, tangent: dict[str, np.ndarray], digits: int = 50) -> np.ndarray:
    """(ref(P + h T) - ref(P - h T)) / 2h at ``digits`` digits (h = 1e-20: error ~1e-40)."""
    import mpmath

    assert kind.reference is not None
    b = get_backend(f"mpmath-{digits}")
    h = mpmath.mpf("1e-20")
    vals = []
    for sgn in (1, -1):
        p = {k: b.asarray(v) for k, v in params.items()}
        for name, t in tangent.items():
            p[name] = p[name] + b.asarray(t) * (sgn * h)
        vals.append(kind.reference(p, b))
    return np.asarray(b.to_numpy((vals[0] - vals[1]) / (2 * h)), dtype=np.float64)


def q_jvp(ctx: Ctx, params: Params, dtype: str, substitute: str = "") -> Case:
    """Forward-mode derivative (torch.func.jvp) along a random direction against 50-digit central
    differences of the reference (float64 differences of the target for kinds without one);
    unsupported when the target declines forward mode with an exception (:func:`refusal`).
    ``substitute``: a torch operation the target's process computes by its reference formulation
    (blame, see :mod:`~orthoverify.conformance.substitute`)."""
    kind = ctx.target.kind
    dt = DTYPES[dtype]
    tangent = _tangent(kind, params, np.random.default_rng(11))
    primals = kind.args(params, dt, "cpu")
    if kind.name == "complex-to-real":  # one complex argument: its tangent is re + i im
        tangents = {0: torch.complex(torch.as_tensor(tangent["re"]), torch.as_tensor(tangent["im"]))}
    else:
        tangents = {i: torch.as_tensor(tangent[name]) for i, name in enumerate(params) if name in tangent}
    which = sorted(tangents)
    kw: dict[str, Any] = {"which": which, **({"substitute": substitute} if substitute else {})}
    res = ctx.remote(op_jvp, *primals, *(tangents[i] for i in which), kw=kw)
    got = res if isinstance(res, CallFailure) else checked(res[0] if res else None, shape=kind.view_shape(params))
    if isinstance(got, CallFailure):
        if got.kind == "raised":  # no forward-mode rule, or one that declines: a refusal, not a wrong number
            return refusal(got, "forward mode (torch.func.jvp)")
        return failed(got, "jvp: ")
    eps = EPS[dt]
    if kind.reference is not None:
        ref = _reference_direction(kind, rounded(params, dtype), tangent)
        how, fd_eps = "50-digit central differences of the reference", eps
    else:
        h = 1e-6
        lo_hi = []
        for sgn in (1, -1):
            p = {k: np.asarray(v, dtype=np.float64) + sgn * h * tangent.get(k, 0.0) for k, v in params.items()}
            fd = ctx.run(p, "float64")
            if isinstance(fd, CallFailure):
                return failed(fd, "finite differences of the target: ")
            lo_hi.append(as_np(fd))
        ref = (lo_hi[0] - lo_hi[1]) / (2 * h)
        how, fd_eps = "float64 central differences of the target", max(eps, 1e-7)
    n = ref.shape[-1]
    scale = float(np.linalg.norm(ref)) or 1.0
    r = float(np.linalg.norm(as_np(got) - ref)) / (n * fd_eps * scale)
    return Case(r, f"||jvp - {how}|| / (n eps ||reference||) = {r:.6g}")


def q_devices(ctx: Ctx, params: Params, dtype: str) -> Case:
    """The output on ``ctx.other_device`` against the output on ``ctx.device`` (test ratio)."""
    here, there = ctx.run(params, dtype), ctx.run(params, dtype, device=ctx.other_device)
    for where, out in ((ctx.device, here), (ctx.other_device, there)):
        if isinstance(out, CallFailure):
            return failed(out, f"on {where}: ")
    assert isinstance(here, torch.Tensor) and isinstance(there, torch.Tensor)
    kappa = _kappa(ctx.target.kind, params)
    r = agreement(as_np(there), as_np(here), EPS[DTYPES[dtype]]) / (2 * kappa)  # two computations, each allowed
    text = f"||f on {ctx.other_device} - f on {ctx.device}|| / (2 n eps{_kappa_text(kappa)} ||f||) = {r:.6g}"
    if _fails(r):
        text += ". " + which_is_off(
            ctx,
            [params],
            dtype,
            {f"the {ctx.device} call": [as_np(here)], f"the {ctx.other_device} call": [as_np(there)]},
        )
    return Case(r, text)


QUANTITIES: dict[str, Callable[[Ctx, Params, str], Case]] = {
    "orthogonal": q_orthogonal,
    "forward": q_forward,
    "float32": q_float32,
    "determinism": q_determinism,
    "batch": q_batch,
    "gradient": q_gradient,
    "jvp": q_jvp,
    "devices": q_devices,
}


@dataclass
class Remeasured:
    """A recorded counterexample measured again by its check's measuring routine: whether it
    still fails (the check's own rule), the deciding value, and more lines to show."""

    failing: bool
    display: str
    ratio: float = math.nan
    more: list[tuple[str, str]] = field(default_factory=list)
    measured: bool = True
    """False when the case could not be measured (the call was never made): no answer either way."""


def measure_quantity(ctx: Ctx, check: str, params: Params, dtype: str) -> Remeasured:
    """The quantity of ``check`` (a test ratio) at ``params`` in ``dtype``: the routine the scan
    measured every case with. It fails as in the scan: a ratio above 30 (NaN: not measured)."""
    c = QUANTITIES[check](ctx, params, dtype)
    out = Remeasured(_fails(c.ratio) and not math.isnan(c.ratio), c.display, c.ratio, measured=not c.not_run)
    kind = ctx.target.kind
    if check == "forward" and kind.reference is not None and out.failing:
        target = ctx.run(params, dtype)
        if isinstance(target, torch.Tensor):
            ref = reference_np(kind, rounded(params, dtype), 50)
            r50 = agreement(as_np(target), ref, EPS[DTYPES[dtype]]) / _kappa(kind, params)
            out.more.append(("against the 50-digit reference", f"ratio {r50:.6g}"))
    return out


# ------------------------------------------------------------------------------ scans
SCALED_CHECKS = frozenset({"orthogonal", "forward", "float32", "batch", "devices"})
SHRINKABLE = frozenset({"orthogonal", "forward", "float32", "devices"})
"""Checks whose quantity depends on the case's parameters alone, so a failure can be shrunk."""
"""Checks whose ratios are divided by the kind's allowance (``Kind.condition``, stated in ``Kind.allowance``)."""


Labelled = tuple[Params, str, str]
"""A case: parameters, the dtype, and a label ("" for a random draw, else the special point's name)."""


def magnitude(kind: Kind, params: Params) -> float:
    """max |x_ij| over the parameters a draw's magnitude applies to: the size a maintainer reads."""
    names = [k for k in kind.scaled if k in params] or list(params)
    vals = []
    for k in names:  # a check of another shape (say, a lifecycle step) may record other values
        try:
            x = np.asarray(params[k], dtype=np.float64)
        except (TypeError, ValueError):
            continue
        if x.size:
            vals.append(float(np.max(np.abs(x))))
    return max(vals, default=0.0)


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


def _order(kind: Kind, params: Params) -> tuple[float, float]:
    """The telling counterexample is the one of ordinary magnitude (closest to 1 in log scale, the
    smaller first) and smallest size."""
    m = magnitude(kind, params)
    dist = abs(math.log10(m)) if m > 0 else 400.0
    return (round(dist), _size(kind, params) + m * 1e-300)


def _telling(kind: Kind, fail: tuple[Params, Case, str]) -> tuple[int, float, int, float]:
    """Sort key of failures: inside the ordinary domain first, then ordinary magnitude (closest to 1),
    a random draw before a special point of the same magnitude (a special point's name would
    suggest a cause it may not have), then size."""
    dist, size = _order(kind, fail[0])
    return (int(extreme(kind, fail[0])), dist, int(bool(fail[2])), size)


def _rescaled(kind: Kind, params: Params, t: float) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, dtype=np.float64) * t if k in kind.scaled else np.asarray(v) for k, v in params.items()}


def _round_sig(params: Params, kind: Kind, digits: int) -> dict[str, np.ndarray]:
    """The scaled parameters rounded to ``digits`` significant digits (odd-symmetric, so skew
    stays skew; nonzero stays nonzero)."""

    def r(x: float) -> float:
        return float(f"{x:.{digits}g}") if x != 0.0 and math.isfinite(x) else x

    return {
        k: np.vectorize(r, otypes=[np.float64])(np.asarray(v, dtype=np.float64)) if k in kind.scaled else np.asarray(v)
        for k, v in params.items()
    }


def shrink(
    ctx: Ctx, q: Callable[[Ctx, Params, str], Case], params: Params, dtype: str, c: Case, budget: int = 30
) -> tuple[Params, Case, list[str]]:
    """A smaller failing case near ``params``: fewer rows (fresh draws of a smaller size at the
    same magnitude), a magnitude closer to 1 (rescaled to magnitude 1, else bisected in log scale
    towards it: never deeper into the subnormal or near-overflow range), fewer digits. Returns the
    case, its measurement and the steps taken."""
    kind = ctx.target.kind
    best, best_c, steps = dict(params), c, []
    calls = 0

    def attempt(p: Params) -> Case | None:
        nonlocal calls
        if calls >= budget or ctx.outside(p) is not None:
            return None
        calls += 1
        got = q(ctx, p, dtype)
        return got if _fails(got.ratio) and not math.isnan(got.ratio) else None

    rng = ctx.rng("shrink", dtype)
    m = magnitude(kind, best)
    for n in [s for s in kind.sizes if s < _size(kind, best)]:
        found = None
        for _ in range(3):
            cand = kind.draw(rng, n, max(m, 1e-300) / 2.5)
            got = attempt(cand)
            if got is not None:
                found = (cand, got)
                break
        if found is not None:
            best, best_c = found
            steps.append(f"size {n}")
            break
    m = magnitude(kind, best)
    if m > 0 and math.isfinite(m) and abs(math.log10(m)) >= 0.25:  # towards magnitude 1, never further out
        base, lm = best, math.log10(m)

        def at(x: float) -> dict[str, np.ndarray]:
            half = 10.0 ** ((x - lm) / 2)  # in two steps: 10^(x - lm) alone overflows from a subnormal base
            return _rescaled(kind, _rescaled(kind, base, half), half)

        one = at(0.0)
        got = attempt(one)
        if got is not None:
            best, best_c = one, got
            steps.append("rescaled to magnitude 1")
        else:  # bisect log10 of the magnitude between where it fails (far) and 1 (near), where it passes
            far, near, moved = lm, 0.0, False
            for _ in range(8):
                mid = (far + near) / 2
                if abs(far - mid) < 0.25:
                    break
                cand = at(mid)
                got = attempt(cand)
                if got is not None:
                    best, best_c, far, moved = cand, got, mid, True
                else:
                    near = mid
            if moved:
                steps.append("moved towards magnitude 1")
    for digits in (2, 4):
        cand = _round_sig(best, kind, digits)
        got = attempt(cand)
        if got is not None:
            best, best_c = cand, got
            steps.append(f"rounded to {digits} digits")
            break
    return best, best_c, steps


def attribute(ctx: Ctx, check: str, params: Params, dtype: str) -> str:
    """Which computation is off, where a finding compares two: each is judged against the
    reference (or, for a kind without one, against orthogonality), and the note says which fails."""
    kind = ctx.target.kind
    if check != "orthogonal" or len(next(iter(params.values())).shape) < 1:
        return ""
    dt = DTYPES[dtype]
    eps = EPS[dt]
    kappa = _kappa(kind, params)
    stacked = [torch.stack([a, a]) for a in kind.args(params, dt, "cpu")]
    res = ctx.remote(op_forward, *stacked)
    out = res if isinstance(res, CallFailure) else checked(res[0] if res else None, shape=(2, *kind.out_shape(params)))
    if isinstance(out, CallFailure):
        return ""
    r_b = orthogonality(as_np(kind.view(out)[0]), eps) / kappa
    if not _fails(r_b):
        return (
            f" The same parameters in a batch of two give an orthogonal output (ratio {r_b:.3g}): the single "
            "(unbatched) call is the inaccurate one."
        )
    return f" Batched, the same parameters fail too (ratio {r_b:.3g}): the map itself, not one code path."


def scan(
    ctx: Ctx,
    check: str,
    cases: Iterator[tuple[Params, str]] | Iterator[Labelled],
    method: str = "float",
    note: str = "",
    *,
    minimise: bool | None = None,
) -> list[Evidence]:
    """Evidence per dtype from the quantity of ``check`` over ``cases``. Of the failures of a dtype
    the telling one (ordinary magnitude, smallest size) is re-run (and, with a reference,
    re-measured at 50 digits), shrunk (``minimise``) and becomes the counterexample; a failure of
    another kind (far larger or smaller magnitude) is kept in ``data['other_counterexamples']``.
    Cases of a dtype whose ``output`` check failed are not run; so are cases whose call was never
    made (the target's process gave up): evidence without a verdict, never a pass."""
    q = QUANTITIES[check]
    kind = ctx.target.kind
    by_dtype: dict[str, dict[str, Any]] = {}
    for case in cases:
        params, dtype = case[0], case[1]
        label = str(case[2]) if len(case) > 2 else ""
        st = by_dtype.setdefault(
            dtype,
            {
                "cases": 0,
                "worst": 0.0,
                "fails": [],
                "skipped": 0,
                "beyond": 0,
                "declined": [],
                "t": 0.0,
                "nan": None,
                "not_run": [],
                "points": [],
                "unsupported": [],
            },
        )
        needs = [d for d in ctx.failed_output if d == dtype or (check == "float32" and d == "float64")]
        if needs:
            st["not_run"].append(f"the output check failed in {needs[0]} ({ctx.failed_output[needs[0]]})")
            continue
        if ctx.outside(params) is not None:
            st["skipped"] += 1
            continue
        t0 = time.perf_counter()
        c = q(ctx, params, dtype)
        st["t"] += time.perf_counter() - t0
        if c.not_run:
            st["not_run"].append(c.display)
            continue
        if c.beyond:
            st["beyond"] += 1
            continue
        if label and c.raised:  # an exception at an edge case is an honest refusal, not a wrong answer
            st["declined"].append(label)
            continue
        if c.unsupported:  # the target declined the mode with an exception: a refusal, not a wrong number
            st["unsupported"].append(c.unsupported)
            continue
        if math.isnan(c.ratio):  # the check does not apply to this target (say, no batched calls)
            st["nan"] = c.display
            continue
        st["cases"] += 1
        st["points"].append((magnitude(kind, params), _size(kind, params), c.ratio))
        if _fails(c.ratio, st["worst"]):
            st["worst"] = c.ratio
        if _fails(c.ratio):
            st["fails"].append((params, c, label))
    out = []
    for dtype, st in by_dtype.items():
        ev = Evidence(
            claim="",
            check=check,
            method=method,  # type: ignore[arg-type]
            backend=ctx.label(dtype),
            cases=st["cases"],
            worst_ratio=st["worst"],
            threshold=THRESHOLD,
            seconds=st["t"],
            passed=not st["fails"] and not st["not_run"] and not st["unsupported"] and st["cases"] > 0,
            notes=note,
        )
        if st["unsupported"]:
            ev.data["unsupported"] = st["unsupported"][0]
            ev.notes = (
                ev.notes + f" Unsupported: the target raised at {len(st['unsupported'])} of "
                f"{len(st['unsupported']) + st['cases']} cases ({st['unsupported'][0]}): a refusal, not a wrong number."
            ).strip()
            if st["cases"] == 0:
                ev.worst_ratio = None
        if st["points"]:
            ev.data["series"] = size_series(st["points"])
        if check in SCALED_CHECKS:
            ev.data["allowance"] = kind.allowance
            ev.notes = (ev.notes + f" Errors divided by the allowance {kind.allowance}.").strip()
        if st["skipped"]:
            ev.notes = (ev.notes + f" {st['skipped']} cases outside the target's declared domain were skipped.").strip()
        if st["beyond"]:
            ev.notes = (
                ev.notes + f" {st['beyond']} cases where the allowance promises no digit (30 n eps kappa >= 1) "
                "were not judged."
            ).strip()
        if st["declined"]:
            ev.notes = (
                ev.notes + f" The target raised (declined) at {len(st['declined'])} special points, e.g. "
                f"'{st['declined'][0]}': no defect."
            ).strip()
        if st["cases"] == 0 and st["nan"] is not None and not st["not_run"] and not st["unsupported"]:
            ev.worst_ratio = None
            ev.notes = (ev.notes + f" Not applicable (nothing was measured, so no verdict): {st['nan']}").strip()
        if st["not_run"]:
            ev.data["not_run"] = len(st["not_run"])
            ev.notes = (
                ev.notes + f" Not run: {len(st['not_run'])} cases ({st['not_run'][0]}); no verdict from them."
            ).strip()
            if st["cases"] == 0:
                ev.worst_ratio = None
        if st["fails"]:
            _counterexample(
                ctx, check, q, dtype, st["fails"], ev, check in SHRINKABLE if minimise is None else minimise
            )
        out.append(ev)
    return out


def size_series(points: list[tuple[float, int, float]]) -> dict[str, Any]:
    """The (parameter size, test ratio) series of a scan's cases for the report's figure of the
    error against parameter size: against max|x_ij| where the cases span magnitudes (a search
    outwards), else against n; a ratio that is not finite (a failed call) is -1."""
    mags = [m for m, _n, _r in points if m > 0]
    by_mag = bool(mags) and max(mags) / min(mags) >= 10
    return {
        "x": "max|x_ij|" if by_mag else "n",
        "y": "ratio",
        "points": [[m if by_mag else float(n), r if math.isfinite(r) else -1.0] for m, n, r in points],
    }


def _counterexample(
    ctx: Ctx,
    check: str,
    q: Callable[[Ctx, Params, str], Case],
    dtype: str,
    fails: list[tuple[Params, Case, str]],
    ev: Evidence,
    minimise: bool,
) -> None:
    """Shrink and record the telling failure of ``fails`` (see :func:`scan`); the engine confirms
    it by measuring it again (``family.TargetCheck``), so it is not re-run here."""
    kind = ctx.target.kind
    fails = sorted(fails, key=lambda f: _telling(kind, f))
    params, c, label = fails[0]
    steps: list[str] = []
    if minimise and c.ratio != math.inf:
        p2, c2, steps = shrink(ctx, q, params, dtype, c)
        if steps:
            found_at = f"found at the special point '{label}', " if label else ""
            params, c, label = p2, c2, ""
            steps = [found_at + ", ".join(steps)] if found_at else steps
    confirmed = not math.isnan(c.ratio)  # a NaN measure is no counterexample (the engine re-measures the rest)
    confirm = ""
    if confirmed and check == "forward" and kind.reference is not None:
        out_t = ctx.run(params, dtype)
        if isinstance(out_t, torch.Tensor):
            kappa = _kappa(kind, params)
            r50 = agreement(as_np(out_t), reference_np(kind, rounded(params, dtype), 50), EPS[DTYPES[dtype]]) / kappa
            confirm = f"; against the 50-digit reference: ratio {r50:.6g}"
    where = _where(kind, params)
    if label:
        where = f"at the special point '{label}' ({where.removeprefix('at ')})"
    if steps:
        where += f" (shrunk: {', '.join(steps)})"
    cause = attribute(ctx, check, params, dtype) if confirmed else ""
    if confirmed:
        ev.counterexample = Counterexample(
            inputs_of(params, dtype),
            check,
            f"{where}: {c.display}.{cause}",
            16 if dtype == "float64" else 7,
            check,
            THRESHOLD,
            None,
        )
    ev.notes = (
        ev.notes + f" Failure {where}: {c.display}{confirm}" + ("" if confirmed else " (not measured)") + cause
    ).strip()
    if confirmed and extreme(kind, params):  # every failure is outside the ordinary domain (they sort first)
        lo, hi = kind.ordinary
        domain = f"max|x_ij| of {', '.join(kind.scaled)} zero or in [{lo:g}, {hi:g}]"
        ev.data["fragile"] = f"fails only outside the ordinary domain ({domain})"
        ev.notes = f"Fragile: {ev.data['fragile']}; every ordinary case passed. {ev.notes}"
    m0 = magnitude(kind, params)
    others: list[dict[str, Any]] = []
    for p, oc, lab in fails[1:]:
        m = magnitude(kind, p)
        far = m0 > 0 and m > 0 and abs(math.log10(m / m0)) >= 2
        if (
            (far or lab)
            and len(others) < 3
            and all(abs(math.log10(max(float(o["max_abs"]), 1e-300) / max(m, 1e-300))) >= 2 for o in others)
        ):
            others.append({"inputs": inputs_of(p, dtype), "value": oc.display, "max_abs": m, "label": lab})
    if others:
        ev.data["other_counterexamples"] = others
        ev.notes += " Other failures of another kind: " + "; ".join(
            f"{o['label'] or 'max|x_ij| = ' + format(o['max_abs'], '.3g')}: {o['value']}" for o in others
        )


def outward(ctx: Ctx, dtype: str, salt: str) -> Iterator[Labelled]:
    """Random draws from ordinary magnitudes outwards (10^0, 10^-1, 10^1, 10^-2, ...), every size
    at each, ``ctx.examples`` in all, seeded."""
    kind = ctx.target.kind
    top = {"quick": 4, "default": 8, "thorough": 12}.get(ctx.profile, 8)
    if dtype == "float32":
        top = min(top, 6)
    exps = [0] + [e for k in range(1, top + 1) for e in (-k, k)]
    combos = [(e, n) for e in exps for n in kind.sizes]
    rng = ctx.rng(salt, dtype)
    for i in range(ctx.examples):
        e, n = combos[i % len(combos)]
        yield kind.draw(rng, n, 10.0**e), dtype, ""


def search_orthogonal(ctx: Ctx) -> list[Evidence]:
    """The special points of the kind first (deterministic), then seeded random draws from ordinary
    magnitudes outwards; the telling failure per dtype is shrunk to the smallest size and
    magnitude that still fails."""
    out: list[Evidence] = []
    for dtype in ctx.dtypes:
        specials = [(p, dtype, name) for name, p in special_points(ctx.target.kind, dtype)]
        cases = [*specials, *outward(ctx, dtype, "orthogonal")]
        out += scan(
            ctx,
            "orthogonal",
            iter(cases),
            method="search",
            note=f"{len(specials)} special points, then {len(cases) - len(specials)} draws from magnitude 1 outwards.",
        )
    return out


def _ev(ctx: Ctx, check: str, dtype: str, method: str, **kw: Any) -> Evidence:
    return Evidence(claim="", check=check, method=method, backend=ctx.label(dtype), threshold=THRESHOLD, **kw)  # type: ignore[arg-type]


def measure_output(ctx: Ctx, params: Params, dtype: str) -> Remeasured:
    """The call at ``params`` in ``dtype``: it fails when the call fails (raises, dies, hangs, or
    returns no finite tensor of the declared shape and dtype)."""
    res = ctx.run(params, dtype)
    if isinstance(res, CallFailure):
        return Remeasured(res.kind != "not-run", str(res), measured=res.kind != "not-run")
    return Remeasured(False, "a finite tensor of the declared shape and dtype")


def check_output(ctx: Ctx) -> list[Evidence]:
    """Typical parameters, every size: the call returns a finite tensor of the declared shape and dtype."""
    kind = ctx.target.kind
    out = []
    for dtype in ctx.dtypes:
        rng = ctx.rng("output", dtype)
        t0 = time.perf_counter()
        count, failure = 0, None
        for n in kind.sizes:
            params = kind.draw(rng, n, 1.0)
            if ctx.outside(params) is not None:
                continue
            count += 1
            res = ctx.run(params, dtype)  # measure_output's call
            if isinstance(res, CallFailure):
                failure = (params, res)
                break
        ev = _ev(ctx, "output", dtype, "float", cases=count, seconds=time.perf_counter() - t0, passed=failure is None)
        ev.worst_ratio = None
        if failure is not None:
            params, res = failure
            again = ctx.run(params, dtype) if res.kind != "not-run" else res
            if res.kind == "not-run":
                ctx.failed_output[dtype] = str(res)[:200]
                ev.notes = f"not run: {res.message}"
            elif isinstance(again, CallFailure):  # it fails again: the checks that need this output are not run
                ctx.failed_output[dtype] = str(res)[:200]
                ev.counterexample = Counterexample(inputs_of(params, dtype), "the call", str(res), 16, "output")
                ev.notes = (
                    f"the target failed: {res}. The checks that need this output in {dtype} are not run (one "
                    "finding per cause)."
                )
            else:  # it did not fail again: an unconfirmed failure never stops the other checks
                ev.counterexample = Counterexample(inputs_of(params, dtype), "the call", str(res), 16, "output")
                ev.notes = (
                    f"the target failed once: {res}; the same call made again returned a finite tensor of the "
                    "declared shape and dtype, so the checks that need this output still run."
                )
        out.append(ev)
    return out


def blocked(ctx: Ctx, check: str, dtype: str, method: str = "float") -> Evidence | None:
    """Evidence that ``check`` was not run in ``dtype`` because ``output`` failed there (None: it can run)."""
    if dtype not in ctx.failed_output:
        return None
    ev = _ev(ctx, check, dtype, method, cases=0)
    ev.worst_ratio, ev.threshold = None, None
    ev.notes = f"Not run: the output check failed in {dtype} ({ctx.failed_output[dtype]})."
    ev.data["not_run"] = 1
    return ev


def measure_side_effects(ctx: Ctx, params: Params, dtype: str, recorded: str = "") -> Remeasured:
    """A call at ``params`` in ``dtype`` and what the session has seen: it fails when the call
    changes its arguments or the working directory, when the recorded finding names a side effect
    seen earlier in this session, or when a recorded flood goes on (the session has written
    anything: what a call writes may reach the capture after its answer, so a second call is made
    when nothing has come yet)."""
    args = ctx.target.kind.args(params, DTYPES[dtype], "cpu")
    res = ctx.calls.request(op_forward, args, {}, ctx.timeout, ctx.device)
    side = [] if isinstance(res, CallFailure) else list(res.side)
    seen = ctx.calls.observed
    if "floods" in recorded and seen.written == 0:  # what the call wrote may come with the next answer
        ctx.calls.request(op_forward, args, {}, ctx.timeout, ctx.device)
    earlier = [v for v in seen.side.values() if v and v in recorded]
    failing = bool(side) or bool(earlier) or ("floods" in recorded and seen.written > 0)
    more = [("bytes written to stdout/stderr", str(seen.written))]
    return Remeasured(failing, "; ".join(side + earlier) or "no side effect of the call", more=more)


def check_side_effects(ctx: Ctx) -> list[Evidence]:
    """A call changes nothing but its output: not its arguments (the target gets copies, so a
    changed argument is seen, not suffered), not the working directory, and it does not flood
    stdout/stderr (more than FLOOD_BYTES over the run). Covers every call of the run so far, and
    calls of its own at typical parameters of every size."""
    from orthoverify.conformance.isolate import FLOOD_BYTES

    kind = ctx.target.kind
    out = []
    for dtype in ctx.dtypes:
        t0 = time.perf_counter()
        first: tuple[Params, str] | None = None
        count = 0
        rng = ctx.rng("side", dtype)
        for n in kind.sizes:
            params = kind.draw(rng, n, 1.0)
            if ctx.outside(params) is not None:
                continue
            res = ctx.calls.request(op_forward, kind.args(params, DTYPES[dtype], "cpu"), {}, ctx.timeout, ctx.device)
            if isinstance(res, CallFailure):
                continue
            count += 1
            if res.side and first is None:
                first = (params, "; ".join(res.side))
        ev = _ev(ctx, "side_effects", dtype, "float", cases=count, seconds=time.perf_counter() - t0)
        ev.worst_ratio, ev.threshold = None, None
        seen = ctx.calls.observed
        problems = [] if first is None else [first[1]]
        problems += [v for k, v in seen.side.items() if first is None or k not in first[1]]
        if seen.written > FLOOD_BYTES:
            problems.append(f"floods its output: {seen.written} bytes written to stdout/stderr")
        ev.passed = not problems and count > 0
        ev.data["written_bytes"] = seen.written
        if seen.written:
            ev.data["written_head"] = seen.head[:500]
        ev.notes = (
            "; ".join(problems)
            if problems
            else f"arguments and working directory unchanged; {seen.written} bytes written to stdout/stderr"
        )
        if count == 0:
            ev.notes += " (not run: no call succeeded)"
        if problems:
            params = dict(first[0]) if first is not None else kind.draw(ctx.rng("side", dtype), kind.sizes[0], 1.0)
            ev.counterexample = Counterexample(
                inputs_of(params, dtype), "side effects of a call", ev.notes, 16, "side_effects"
            )
        out.append(ev)
    return out


def _target_inverse(ctx: Ctx) -> Callable[[np.ndarray], dict[str, np.ndarray] | None]:
    """Parameters for a matrix through the target's own inverse map (float64)."""
    assert ctx.target.inverse is not None

    def params(q: np.ndarray) -> dict[str, np.ndarray] | None:
        res = ctx.remote(op_inverse, torch.as_tensor(q))
        out = res if isinstance(res, CallFailure) else checked(res[0] if res else None, finite=True)
        return None if isinstance(out, CallFailure) else {"X": as_np(out)}

    return params


def measure_coverage(ctx: Ctx, params: Params, dtype: str) -> Remeasured:
    """The target at a preimage against the matrix ``params["Q"]`` it must reach (test ratio);
    a failed call fails (ratio inf), a call never made is NaN. Without ``Q`` (a counterexample
    recorded before it was kept) the comparison is with the kind's reference, where there is one.
    With ``Q`` alone (a gap of the optimisation) the distance L-BFGS reaches from three starts."""
    p = {k: v for k, v in params.items() if k != "Q"}
    q = params.get("Q")
    if not p and q is not None:
        n = q.shape[0]
        tries = [_reach(ctx, q, np.random.default_rng(s).standard_normal((n, n)) * 0.1, 200) for s in range(3)]
        dist = min((t for t in tries if isinstance(t, float)), default=math.inf)
        return Remeasured(not (dist < 1e-6), f"min ||f(X) - Q||_F over 3 L-BFGS starts (float64) = {dist:.6g}", dist)
    res = ctx.run(p, dtype)
    if isinstance(res, CallFailure):
        ran = res.kind != "not-run"
        return Remeasured(ran, str(res), math.inf if ran else math.nan, measured=ran)
    if q is None:
        if ctx.target.kind.reference is None:
            return Remeasured(False, "returned a tensor (no Q recorded, no reference to compare with)")
        q = reference_np(ctx.target.kind, p)
    r = agreement(as_np(res), q, EPS[DTYPES[dtype]])
    return Remeasured(_fails(r), f"||f(preimage) - Q|| ratio {r:.6g}", r)


def check_coverage(ctx: Ctx) -> list[Evidence]:
    """Targets of the claimed set (Haar of both determinants, -I, a cyclic shift) reached through an
    inverse map (the reference's, or the target's own ``right_inverse``): the target's output at the
    preimage must equal the target matrix."""
    from orthoverify import samples

    kind = ctx.target.kind
    inverse = kind.inverse if ctx.target.inverse is None else _target_inverse(ctx)
    assert inverse is not None
    rng = ctx.rng("coverage")
    targets: list[tuple[str, np.ndarray]] = []
    for n in kind.sizes:
        if kind.coverage_targets is not None:
            targets += kind.coverage_targets(rng, n)
            continue
        q = samples.haar_orthogonal(rng, n)
        targets.append(("haar", q))
        q2 = q.copy()
        q2[:, 0] *= -1
        targets.append(("haar, other determinant", q2))
        targets.append(("-I", -np.eye(n)))
        targets.append(("cyclic shift", np.roll(np.eye(n), 1, axis=0)))
    out = []
    for dtype in ctx.dtypes:
        stop = blocked(ctx, "coverage", dtype)
        if stop is not None:
            out.append(stop)
            continue
        t0 = time.perf_counter()
        worst, failure, count, skipped = 0.0, None, 0, 0
        for name, q in targets:
            params = inverse(q)
            if params is None or ctx.outside(params) is not None:
                skipped += 1
                continue
            m = measure_coverage(ctx, {**params, "Q": q}, dtype)
            if not m.measured:  # the call was never made
                skipped += 1
                continue
            count += 1
            r = m.ratio
            if _fails(r, worst):
                worst = r
            if m.failing and failure is None:
                failure = ({**params, "Q": q}, f"{name}: {m.display}")
        ev = _ev(
            ctx,
            "coverage",
            dtype,
            "float",
            cases=count,
            worst_ratio=worst,
            seconds=time.perf_counter() - t0,
            passed=failure is None and count > 0,
        )
        how = "the target's own right_inverse" if ctx.target.inverse is not None else "orthoverify's inverse map"
        ev.notes = f"{count} targets reached through {how}" + (
            f"; {skipped} outside the target's domain" if skipped else ""
        )
        if failure is not None:
            ev.counterexample = Counterexample(
                inputs_of(failure[0], dtype), "f(preimage of Q) = Q", failure[1], 16, "coverage", THRESHOLD
            )
            ev.notes += f"; missed: {failure[1]}"
        out.append(ev)
    return out


def _reach(ctx: Ctx, q: np.ndarray, x0: np.ndarray, steps: int) -> float | CallFailure:
    """||f(X) - Q||_F at the X L-BFGS finds from X0 in the target's process (3 x ``steps``
    iterations), measured here from a forward call at X; or why the target could not be optimised."""
    res = ctx.remote(op_reach, torch.as_tensor(q), torch.as_tensor(x0), kw={"steps": steps}, timeout=ctx.timeout * 20)
    x = res if isinstance(res, CallFailure) else checked(res[0] if res else None, shape=q.shape, finite=False)
    if isinstance(x, CallFailure):
        return x
    out = ctx.run({"X": as_np(x)}, "float64")
    if isinstance(out, CallFailure):
        return math.inf if out.kind == "non-finite" else out
    return float(np.linalg.norm(as_np(out) - q))


def check_coverage_by_optimisation(ctx: Ctx) -> list[Evidence]:
    """For a map with no inverse: L-BFGS minimises ||f(X) - Q||_F for Haar targets Q of each
    determinant (two or more per size). A component of O(n) the map reaches must be reached at
    every target in it; a component reached at no target is reported as missed."""
    from orthoverify import samples

    kind = ctx.target.kind
    stop = blocked(ctx, "coverage", "float64", "measured")
    if stop is not None:
        return [stop]
    rng = ctx.rng("coverage-opt")
    steps = {"quick": 100, "default": 200, "thorough": 500}.get(ctx.profile, 200)
    per = {"quick": 2, "default": 2, "thorough": 4}.get(ctx.profile, 2)
    t0 = time.perf_counter()
    table: dict[tuple[int, int], list[float]] = {}
    misses: list[tuple[int, int, np.ndarray, float]] = []
    stopped = ""
    for n in kind.sizes[:3]:
        for det in (1, -1):
            for _ in range(per):
                q = samples.haar_orthogonal(rng, n)
                if np.linalg.det(q) * det < 0:
                    q[:, 0] *= -1
                got = _reach(ctx, q, rng.standard_normal((n, n)) * 0.1, steps)
                if isinstance(got, CallFailure):
                    stopped = stopped or str(got)
                    got = math.inf
                table.setdefault((n, det), []).append(got)
                if got >= 1e-6:
                    misses.append((n, det, q, got))
    reached = {k: sum(d < 1e-6 for d in v) for k, v in table.items()}
    partial = [k for k, v in table.items() if 0 < reached[k] < len(v)]
    nothing = [n for n in kind.sizes[:3] if reached[(n, 1)] + reached[(n, -1)] == 0]
    ev = _ev(ctx, "coverage", "float64", "measured", cases=sum(len(v) for v in table.values()))
    ev.seconds = time.perf_counter() - t0
    ev.worst_ratio, ev.threshold = None, None
    ev.passed = not partial and not nothing
    parts = [
        f"n = {n}: det +1 {reached[(n, 1)]}/{len(table[(n, 1)])}, det -1 {reached[(n, -1)]}/{len(table[(n, -1)])}"
        for n in kind.sizes[:3]
    ]
    ev.notes = f"L-BFGS (3 x {steps} iterations) from small random X, reached when ||f(X) - Q||_F < 1e-6: " + "; ".join(
        parts
    )
    missed = [
        f"det {'+1' if d > 0 else '-1'} at n = {n}" for (n, d), r in reached.items() if r == 0 and n not in nothing
    ]
    # a component is named outside the image only when the optimisation settled every size; beside a
    # size where it reached nothing, a miss is what the optimisation did not do, no fact about the map
    if missed and not nothing:
        ev.notes += f". Never reached (a component of O(n) outside the image): {', '.join(missed)}"
    elif missed:
        ev.notes += (
            f". Not reached by the optimisation: {', '.join(missed)} (the optimisation did not settle n = "
            f"{', '.join(map(str, nothing))}, so this is no fact about the map: no verdict on the image)"
        )
    if nothing:
        ev.notes += (
            f". No target of either determinant was reached at n = {', '.join(map(str, nothing))}: the optimisation "
            "failed everywhere (flat or integer-valued directions, or starts outside the map's working region), so "
            "coverage is unknown there (inconclusive), not refuted"
        )
    if stopped:
        ev.notes += f". The optimisation stopped: {stopped}"
    ev.data = {"reached": [[n, d, reached[(n, d)], len(v)] for (n, d), v in table.items()]}
    gaps = [m for m in misses if (m[0], m[1]) in partial]
    if gaps:
        n, det, q, dist = gaps[0]
        what = f"n = {n}, det {det:+d}: min ||f(X) - Q||_F = {dist:.3g} although the map reaches this component"
        # L-BFGS failing to reach Q proves nothing (a Cayley map needs a huge X near an eigenvalue -1 of
        # Q, and geotorch's was missed there on thorough): a gap is reported, never refuted
        ev.data["gap"] = {"inputs": inputs_of({"Q": q}, "float64"), "value": what}
        ev.notes += f"; not reached by the optimisation (no verdict: a failed optimisation is no proof): {what}"
    return [ev]


def nan_params(kind: Kind, params: Params) -> tuple[str, dict[str, np.ndarray]]:
    """``params`` with its first parameter all NaN (every entry: a target may ignore some, a
    diagonal or a triangle), and that parameter's name."""
    name = next(iter(params))
    bad = {k: np.array(v, copy=True) for k, v in params.items()}
    bad[name][...] = np.nan
    return name, bad


def measure_bad_input(ctx: Ctx, params: Params, dtype: str) -> Remeasured:
    """The call at the NaN parameters ``params``: it passes when the target raises or returns
    NaN/Inf, fails when it returns an all-finite result (or dies or hangs); ratio NaN when it
    was never called (not run)."""
    got = ctx.remote(op_forward, *ctx.target.kind.args(params, DTYPES[dtype], "cpu"))
    res = got if isinstance(got, CallFailure) else checked(got[0] if got else None, finite=False)
    if isinstance(res, CallFailure) and res.kind == "not-run":
        return Remeasured(False, f"was not called ({res.message[:160]})", measured=False)
    if isinstance(res, CallFailure) and res.kind in ("died", "timeout"):
        return Remeasured(True, f"{res.kind}: {res.message[:160]}", math.inf)
    if isinstance(res, CallFailure):
        return Remeasured(False, f"raised ({res.message[:160]})", 0.0)
    if not bool(torch.isfinite(res.detach()).all()):
        return Remeasured(False, "returned NaN/Inf (propagated)", 0.0)
    return Remeasured(True, "returned an all-finite result for a NaN input (the NaN was silently absorbed)", math.inf)


def check_bad_input(ctx: Ctx) -> list[Evidence]:
    """A parameter full of NaN must raise or propagate (NaN out), never come back as a finite answer."""
    kind = ctx.target.kind
    out = []
    for dtype in ctx.dtypes:
        stop = blocked(ctx, "bad_input", dtype)
        if stop is not None:
            out.append(stop)
            continue
        name, bad = nan_params(kind, kind.draw(ctx.rng("bad", dtype), kind.sizes[1], 1.0))
        t0 = time.perf_counter()
        m = measure_bad_input(ctx, bad, dtype)
        ran = m.measured
        seconds = time.perf_counter() - t0
        ev = _ev(ctx, "bad_input", dtype, "float", cases=int(ran), seconds=seconds, passed=not m.failing and ran)
        ev.worst_ratio, ev.threshold = None, None
        ev.notes = f"{name} all NaN: the target {m.display}" + ("" if ran else " (not run: no verdict)")
        if m.failing:
            cx = Counterexample(inputs_of(bad, dtype), "output for a NaN input", m.display, 16, "bad_input")
            ev.counterexample = cx
        out.append(ev)
    return out


def sized_cases(
    ctx: Ctx,
    salt: str,
    scales: tuple[float, ...] = (1e-3, 1.0, 1e3),
    dtypes: tuple[str, ...] | None = None,
    specials: bool = False,
) -> Iterator[tuple[Params, str, str]]:
    """Draws of every size at each scale per dtype (the kind's special points first, with ``specials``)."""
    kind = ctx.target.kind
    for dtype in dtypes or ctx.dtypes:
        if specials:
            for name, p in special_points(kind, dtype):
                if p and next(iter(p.values())).shape[0] in (*kind.sizes, 1):
                    yield p, dtype, name
        rng = ctx.rng(salt, dtype)
        for n in kind.sizes:
            for s in scales:
                yield kind.draw(rng, n, s), dtype, ""


MEASURES: dict[str, Callable[[Ctx, Params, str, str], Remeasured]] = {
    "output": lambda ctx, p, dt, rec: measure_output(ctx, p, dt),
    "bad_input": lambda ctx, p, dt, rec: measure_bad_input(ctx, p, dt),
    "coverage": lambda ctx, p, dt, rec: measure_coverage(ctx, p, dt),
    "side_effects": measure_side_effects,
}
"""The measuring routine of each check that is not a test ratio of :data:`QUANTITIES`, by the
check name its counterexamples are recorded under: (ctx, parameters, dtype, recorded value)."""


def remeasure(ctx: Ctx, check: str, params: Params, dtype: str, recorded: str = "") -> Remeasured:
    """A recorded counterexample of ``check`` measured again by the routine the check measured it
    with (:data:`QUANTITIES`, :data:`MEASURES`): the confirmation of a finding and its replay."""
    if check in QUANTITIES:
        return measure_quantity(ctx, check, params, dtype)
    if check in MEASURES:
        return MEASURES[check](ctx, params, dtype, recorded)
    raise OrthoverifyError(f"check {check!r} has no measuring routine to replay a counterexample with")
