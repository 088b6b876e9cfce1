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
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from orthoverify.backends import get_backend
from orthoverify.conformance.calls import DEFAULT_TIMEOUT, CallFailure, call
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.engine.model import Counterexample, Evidence
from orthoverify.engine.ratios import THRESHOLD

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


@dataclass
class Ctx:
    """Everything a conformance check reads."""

    target: Target
    dtypes: tuple[str, ...] = ("float32", "float64")
    device: str = "cpu"
    profile: str = "default"
    seed: int = 0
    timeout: float = DEFAULT_TIMEOUT
    examples: int = 100
    hung: str = ""
    other_device: str = "cuda"
    """The device the ``devices`` check compares against (planned only when it is available)."""

    def rng(self, *salt: str) -> np.random.Generator:
        import zlib

        return np.random.default_rng([self.seed, *(zlib.crc32(s.encode()) for s in salt)])

    def label(self, dtype: str) -> str:
        return f"torch-{dtype}-{self.device}"

    def run(self, params: Params, dtype: str, *, device: str | None = None) -> torch.Tensor | CallFailure:
        """The target's output for ``params`` in ``dtype`` (as the checks compare it: see Kind.view)."""
        if self.hung:  # an abandoned call may still be running: do not pile up more of them
            return CallFailure("timeout", f"not called: an earlier call hung ({self.hung})")
        kind = self.target.kind
        dt = DTYPES[dtype]
        out = call(
            self.target.fn,
            *kind.args(params, dt, device or self.device),
            timeout=self.timeout,
            shape=kind.out_shape(params),
            dtype=kind.out_dtype(dt),
        )
        if isinstance(out, CallFailure):
            if out.kind == "timeout":
                self.hung = out.message
            return out
        return kind.view(out)

    def call(self, fn: Callable[..., Any], *args: Any, timeout: float | None = None, **kw: Any) -> Any:
        """``calls.call`` that stops calling a target once one call has hung."""
        if self.hung:
            return CallFailure("timeout", f"not called: an earlier call hung ({self.hung})")
        out = call(fn, *args, timeout=self.timeout if timeout is None else timeout, **kw)
        if isinstance(out, CallFailure) and out.kind == "timeout":
            self.hung = out.message
        return out

    def outside(self, params: Params) -> str | None:
        return self.target.domain(params) if self.target.domain is not None else None


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
    """One measured case: the ratio, a display of it, and the failure message when the call failed."""

    ratio: float
    display: str


def _fails(r: float, thr: float = THRESHOLD) -> bool:
    return not (r <= thr)


# ------------------------------------------------------------------------------ quantities
def q_orthogonal(ctx: Ctx, params: Params, dtype: str) -> Case:
    out = ctx.run(params, dtype)
    if isinstance(out, CallFailure):
        return Case(math.inf, str(out))
    kappa = _kappa(ctx.target.kind, params)
    r = orthogonality(as_np(out), EPS[DTYPES[dtype]]) / kappa
    return Case(r, f"||Q'Q - I||_F / (n eps{_kappa_text(kappa)}) = {r:.6g}")


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
    out = ctx.run(params, dtype)
    if isinstance(out, CallFailure):
        return Case(math.inf, str(out))
    kappa = _kappa(kind, params)
    r = agreement(as_np(out), reference_np(kind, rounded(params, dtype)), EPS[DTYPES[dtype]]) / kappa
    return Case(r, f"||f - reference||_F / (n eps{_kappa_text(kappa)} ||reference||) = {r:.6g}")


def q_float32(ctx: Ctx, params: Params, dtype: str = "float32") -> Case:
    """float32 against float64 of the target on the same (float32-rounded) parameters, scaled by the
    kind's allowance: the two agree to what a backward-stable float32 evaluation promises."""
    p32 = rounded(params, "float32")
    lo, hi = ctx.run(p32, "float32"), ctx.run(p32, "float64")
    for out in (lo, hi):
        if isinstance(out, CallFailure):
            return Case(math.inf, str(out))
    assert isinstance(lo, torch.Tensor) and isinstance(hi, torch.Tensor)
    kappa = _kappa(ctx.target.kind, p32)
    r = agreement(as_np(lo), as_np(hi), EPS[torch.float32]) / kappa
    return Case(r, f"||f32 - f64||_F / (n eps32{_kappa_text(kappa)} ||f64||) = {r:.6g}")


def q_determinism(ctx: Ctx, params: Params, dtype: str) -> Case:
    outs = [ctx.run(params, dtype) for _ in range(3)]
    for out in outs:
        if isinstance(out, CallFailure):
            return Case(math.inf, str(out))
    arrays = [as_np(o) for o in outs if isinstance(o, torch.Tensor)]
    same = all(np.array_equal(arrays[0], a) for a in arrays[1:])
    diff = max(float(np.max(np.abs(arrays[0] - a))) for a in arrays[1:])
    return Case(0.0 if same else math.inf, "bitwise equal" if same else f"repeated calls differ by up to {diff:.3g}")


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
            return Case(math.inf, f"single call: {out}")
    stacked = [torch.stack(parts) for parts in zip(*(kind.args(s, dt, ctx.device) for s in sets), strict=True)]
    out = ctx.call(ctx.target.fn, *stacked, shape=(len(sets), *kind.out_shape(params)))
    if isinstance(out, CallFailure):
        return Case(math.nan, f"the target does not take stacked parameters: {out}")
    out = kind.view(out)
    kappa = max(_kappa(kind, s) for s in sets)
    r = max(agreement(as_np(out[i]), as_np(s), EPS[dt]) for i, s in enumerate(singles) if isinstance(s, torch.Tensor))
    r /= kappa
    return Case(r, f"max ||batch[i] - single_i|| / (n eps{_kappa_text(kappa)} ||single_i||) = {r:.6g}")


def _loss_grad(ctx: Ctx, params: Params, dtype: str, g: np.ndarray) -> dict[str, np.ndarray] | CallFailure:
    """The target's autograd gradient of L = sum(f(P) * G) with respect to the differentiable parameters."""
    kind = ctx.target.kind
    dt = DTYPES[dtype]
    args = list(kind.args(params, dt, ctx.device))
    names = list(params)
    box: dict[str, Any] = {}

    def loss(*xs: torch.Tensor) -> torch.Tensor:
        leaves = [x.detach().requires_grad_(x.is_floating_point() or x.is_complex()) for x in xs]
        out = kind.view(ctx.target.fn(*leaves))
        lval = (out * torch.as_tensor(g, dtype=out.dtype, device=out.device)).sum()
        wrt = [x for x in leaves if x.requires_grad]
        got = iter(torch.autograd.grad(lval, wrt, allow_unused=True))
        box["grads"] = [next(got) if x.requires_grad else None for x in leaves]
        return lval

    res = ctx.call(loss, *args, finite=True)
    if isinstance(res, CallFailure):
        return res
    grads = box["grads"]
    out: dict[str, np.ndarray] = {}
    if kind.name == "complex-to-real":
        gz = grads[0]
        gz = torch.zeros_like(args[0]) if gz is None else gz
        out["re"], out["im"] = gz.real.detach().double().cpu().numpy(), gz.imag.detach().double().cpu().numpy()
        return out
    for name, grad, arg in zip(names, grads, args, strict=True):
        if name in kind.differentiable:
            out[name] = (torch.zeros_like(arg) if grad is None else grad).detach().double().cpu().numpy()
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
        return Case(math.inf, f"backward: {got}")
    eps = EPS[DTYPES[dtype]]
    if kind.reference is not None:
        ref = _reference_grad(kind, params, g)
        how = "50-digit central differences of the reference"
    else:
        ref64 = _fd_target(ctx, params, g)
        if isinstance(ref64, CallFailure):
            return Case(math.inf, f"finite differences of the target: {ref64}")
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


def q_jvp(ctx: Ctx, params: Params, dtype: str) -> Case:
    """Forward-mode derivative (torch.func.jvp) along a random direction against 50-digit central
    differences of the reference (float64 differences of the target for kinds without one); NaN
    (not applicable) when the target has no forward-mode derivative."""
    kind = ctx.target.kind
    dt = DTYPES[dtype]
    tangent = _tangent(kind, params, np.random.default_rng(11))
    primals = kind.args(params, dt, ctx.device)
    if kind.name == "complex-to-real":  # one complex argument: its tangent is re + i im
        tangents = {0: torch.complex(torch.as_tensor(tangent["re"]), torch.as_tensor(tangent["im"]))}
    else:
        tangents = {i: torch.as_tensor(tangent[name]) for i, name in enumerate(params) if name in tangent}
    which = sorted(tangents)

    def forward_mode() -> torch.Tensor:
        from torch.func import jvp

        def f(*xs: torch.Tensor) -> torch.Tensor:
            args = list(primals)
            for i, x in zip(which, xs, strict=True):
                args[i] = x
            return kind.view(ctx.target.fn(*args))

        ts = tuple(tangents[i].to(dtype=primals[i].dtype, device=primals[i].device) for i in which)
        return jvp(f, tuple(primals[i] for i in which), ts)[1]

    got = ctx.call(forward_mode, finite=True)
    if isinstance(got, CallFailure):
        msg = got.message.lower()
        if got.kind == "raised" and ("forward" in msg or "jvp" in msg or "not implemented" in msg):
            return Case(math.nan, f"no forward-mode derivative: {got.message[:200]}")
        return Case(math.inf, f"jvp: {got}")
    eps = EPS[dt]
    if kind.reference is not None:
        ref = _reference_direction(kind, rounded(params, dtype), tangent)
        how, fd_eps = "50-digit central differences of the reference", eps
    else:
        h = 1e-6
        lo_hi = []
        for sgn in (1, -1):
            p = {k: np.asarray(v, dtype=np.float64) + sgn * h * tangent.get(k, 0.0) for k, v in params.items()}
            res = ctx.run(p, "float64")
            if isinstance(res, CallFailure):
                return Case(math.inf, f"finite differences of the target: {res}")
            lo_hi.append(as_np(res))
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
            return Case(math.inf, f"on {where}: {out}")
    assert isinstance(here, torch.Tensor) and isinstance(there, torch.Tensor)
    r = agreement(as_np(there), as_np(here), EPS[DTYPES[dtype]])
    return Case(r, f"||f on {ctx.other_device} - f on {ctx.device}|| / (n eps ||f||) = {r:.6g}")


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


# ------------------------------------------------------------------------------ scans
SCALED_CHECKS = frozenset({"orthogonal", "forward", "float32", "batch"})
"""Checks whose ratios are divided by the kind's allowance (``Kind.condition``, stated in ``Kind.allowance``)."""


def scan(
    ctx: Ctx,
    check: str,
    cases: Iterator[tuple[Params, str]],
    method: str = "float",
    note: str = "",
) -> list[Evidence]:
    """Evidence per dtype from the quantity of ``check`` over ``cases``; the worst failure of each dtype
    is re-run and, with a reference, re-measured at 50 digits before it becomes a counterexample."""
    q = QUANTITIES[check]
    by_dtype: dict[str, dict[str, Any]] = {}
    for params, dtype in cases:
        reason = ctx.outside(params)
        st = by_dtype.setdefault(dtype, {"cases": 0, "worst": 0.0, "fail": None, "skipped": 0, "t": 0.0, "nan": None})
        if reason is not None:
            st["skipped"] += 1
            continue
        t0 = time.perf_counter()
        c = q(ctx, params, dtype)
        st["t"] += time.perf_counter() - t0
        if math.isnan(c.ratio):  # the check does not apply to this target (say, no batched calls)
            st["nan"] = c.display
            continue
        st["cases"] += 1
        if _fails(c.ratio, st["worst"]):
            st["worst"] = c.ratio
            if _fails(c.ratio):
                st["fail"] = (params, c)
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
            passed=st["fail"] is None and st["cases"] > 0,
            notes=note,
        )
        if check in SCALED_CHECKS:
            ev.data["allowance"] = ctx.target.kind.allowance
            ev.notes = (ev.notes + f" Errors divided by the allowance {ctx.target.kind.allowance}.").strip()
        if st["skipped"]:
            ev.notes = (ev.notes + f" {st['skipped']} cases outside the target's declared domain were skipped.").strip()
        if st["cases"] == 0 and st["nan"] is not None:
            ev.worst_ratio = None
            ev.notes = (ev.notes + f" Not applicable (nothing was measured, so no verdict): {st['nan']}").strip()
        if st["fail"] is not None:
            params, c = st["fail"]
            again = q(ctx, params, dtype)
            confirm = f"re-run: {again.display}"
            if check in ("forward",) and ctx.target.kind.reference is not None:
                out_t = ctx.run(params, dtype)
                if isinstance(out_t, torch.Tensor):
                    r50 = agreement(as_np(out_t), reference_np(ctx.target.kind, params, 50), EPS[DTYPES[dtype]])
                    confirm += f"; against the 50-digit reference: ratio {r50:.6g}"
            confirmed = _fails(again.ratio)
            if confirmed:
                ev.counterexample = Counterexample(
                    inputs_of(params, dtype),
                    check,
                    c.display,
                    16 if dtype == "float64" else 7,
                    check,
                    THRESHOLD,
                    None,
                )
            ev.notes = (
                ev.notes + f" failure ({c.display}); {confirm}" + ("" if confirmed else " (not reproduced)")
            ).strip()
        out.append(ev)
    return out


def _probe(ctx: Ctx, dtype: str, found: list[tuple[Params, str]], exp_top: int) -> Callable[[], None]:
    """The Hypothesis test of one dtype: draws (n, magnitude exponent, seed), records every case in
    ``found`` and raises AssertionError on the first non-orthogonal output."""
    from hypothesis import given, target
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    from orthoverify.engine.checks import search_settings

    kind = ctx.target.kind

    @search_settings(ctx.examples)
    @hseed(ctx.seed)
    @given(st.sampled_from(kind.sizes), st.integers(-exp_top, exp_top), st.integers(0, 2**32 - 1))
    def probe(n: int, e: int, s: int) -> None:
        params = kind.draw(np.random.default_rng(s), n, 10.0**e)
        if ctx.outside(params) is not None:
            return
        c = q_orthogonal(ctx, params, dtype)
        if math.isfinite(c.ratio):
            target(c.ratio)
        found.append((params, dtype))
        if _fails(c.ratio):
            raise AssertionError(c.display)

    out: Callable[[], None] = probe
    return out


def search_orthogonal(ctx: Ctx) -> list[Evidence]:
    """Hypothesis hunts the declared domain (sizes, magnitudes 10^-e .. 10^e, seeds) for the
    parameter value whose output is least orthogonal, per dtype; the last case Hypothesis ran
    is its shrunk failure when there is one."""
    from orthoverify.engine.checks import _no_local_constants

    top = {"quick": 4, "default": 8, "thorough": 12}.get(ctx.profile, 8)
    out: list[Evidence] = []
    for dtype in ctx.dtypes:
        found: list[tuple[Params, str]] = []
        probe = _probe(ctx, dtype, found, top if dtype == "float64" else min(top, 6))
        try:
            with _no_local_constants():
                probe()
        except AssertionError:
            pass
        out += scan(ctx, "orthogonal", iter(found), method="search", note=f"Hypothesis search, {len(found)} examples")
    return out


def _ev(ctx: Ctx, check: str, dtype: str, method: str, **kw: Any) -> Evidence:
    return Evidence(claim="", check=check, method=method, backend=ctx.label(dtype), threshold=THRESHOLD, **kw)  # type: ignore[arg-type]


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
            res = ctx.run(params, dtype)
            if isinstance(res, CallFailure):
                failure = (params, str(res))
                break
        ev = _ev(ctx, "output", dtype, "float", cases=count, seconds=time.perf_counter() - t0, passed=failure is None)
        ev.worst_ratio = None
        if failure is not None:
            ev.counterexample = Counterexample(inputs_of(failure[0], dtype), "the call", failure[1], 16, "output")
            ev.notes = f"the target failed: {failure[1]}"
        out.append(ev)
    return out


def _target_inverse(ctx: Ctx) -> Callable[[np.ndarray], dict[str, np.ndarray] | None]:
    """Parameters for a matrix through the target's own inverse map (float64)."""
    inv = ctx.target.inverse
    assert inv is not None

    def params(q: np.ndarray) -> dict[str, np.ndarray] | None:
        res = ctx.call(inv, torch.as_tensor(q))
        return None if isinstance(res, CallFailure) else {"X": as_np(res)}

    return params


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
        t0 = time.perf_counter()
        worst, failure, count, skipped = 0.0, None, 0, 0
        for name, q in targets:
            params = inverse(q)
            if params is None or ctx.outside(params) is not None:
                skipped += 1
                continue
            count += 1
            res = ctx.run(params, dtype)
            r = math.inf if isinstance(res, CallFailure) else agreement(as_np(res), q, EPS[DTYPES[dtype]])
            if _fails(r, worst):
                worst = r
            if _fails(r) and failure is None:
                failure = (
                    params,
                    f"{name}: " + (str(res) if isinstance(res, CallFailure) else f"||f(preimage) - Q|| ratio {r:.6g}"),
                )
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
    """min ||f(X) - Q||_F found by L-BFGS from X0, or why the target could not be optimised."""
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    qt = torch.as_tensor(q)
    opt = torch.optim.LBFGS(
        [x], lr=1, max_iter=steps, line_search_fn="strong_wolfe", tolerance_grad=1e-14, tolerance_change=1e-16
    )

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = ((ctx.target.fn(x) - qt) ** 2).sum()
        loss.backward()
        return loss

    def optimise() -> torch.Tensor:
        for _ in range(3):
            opt.step(closure)
        with torch.no_grad():
            return ((ctx.target.fn(x) - qt) ** 2).sum().sqrt().reshape(1)

    res = ctx.call(optimise, timeout=ctx.timeout * 20, finite=False)
    return res if isinstance(res, CallFailure) else float(res[0])


def check_coverage_by_optimisation(ctx: Ctx) -> list[Evidence]:
    """For a map with no inverse: L-BFGS minimises ||f(X) - Q||_F for Haar targets Q of each
    determinant (two or more per size). A component of O(n) the map reaches must be reached at
    every target in it; a component reached at no target is reported as missed."""
    from orthoverify import samples

    kind = ctx.target.kind
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
    if missed:
        ev.notes += f". Never reached (a component of O(n) outside the image): {', '.join(missed)}"
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
        ev.counterexample = Counterexample(inputs_of({"Q": q}, "float64"), "f(X) = Q", what, 16, "coverage")
        ev.notes += f"; gap: {what}"
    return [ev]


def check_bad_input(ctx: Ctx) -> list[Evidence]:
    """A parameter full of NaN must raise or propagate (NaN out), never come back as a finite answer."""
    kind = ctx.target.kind
    out = []
    for dtype in ctx.dtypes:
        params = kind.draw(ctx.rng("bad", dtype), kind.sizes[1], 1.0)
        name = next(iter(params))
        bad = {k: np.array(v, copy=True) for k, v in params.items()}
        bad[name][...] = np.nan  # every entry: a target may ignore some (a diagonal, a triangle)
        t0 = time.perf_counter()
        res = ctx.call(ctx.target.fn, *kind.args(bad, DTYPES[dtype], ctx.device), finite=False)
        if isinstance(res, CallFailure):
            passed, what = True, f"raised ({res.message[:160]})"
        elif isinstance(res, torch.Tensor) and not bool(torch.isfinite(res.detach()).all()):
            passed, what = True, "returned NaN/Inf (propagated)"
        else:
            passed, what = False, "returned an all-finite result for a NaN input (the NaN was silently absorbed)"
        ev = _ev(ctx, "bad_input", dtype, "float", cases=1, seconds=time.perf_counter() - t0, passed=passed)
        ev.worst_ratio, ev.threshold = None, None
        ev.notes = f"{name} all NaN: the target {what}"
        if not passed:
            ev.counterexample = Counterexample(inputs_of(bad, dtype), "output for a NaN input", what, 16, "bad_input")
        out.append(ev)
    return out


def sized_cases(
    ctx: Ctx, salt: str, scales: tuple[float, ...] = (1e-3, 1.0, 1e3), dtypes: tuple[str, ...] | None = None
) -> Iterator[tuple[Params, str]]:
    kind = ctx.target.kind
    for dtype in dtypes or ctx.dtypes:
        rng = ctx.rng(salt, dtype)
        for n in kind.sizes:
            for s in scales:
                yield kind.draw(rng, n, s), dtype
