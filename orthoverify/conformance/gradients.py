"""The derivative quantities of a target: its backward (``gradient``) against 50-digit central
differences of the reference (or float64 ones of the target), and its forward mode (``jvp``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from orthoverify.backends import get_backend
from orthoverify.conformance.context import DTYPES, Ctx, as_np, failed, refusal, rounded
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.engine.ratios import Measure
from orthoverify.isolation.calls import CallFailure, checked
from orthoverify.isolation.wire import op_jvp, op_loss_grad
from orthoverify.tolerance import unit_roundoff

TORCH_DTYPES: dict[str, torch.dtype] = {**DTYPES, "float16": torch.float16, "bfloat16": torch.bfloat16}
"""The dtypes a derivative is taken in: float32 and float64, and the half-precision ones a target
may declare (checks_train's ``gradient_<dtype>``, ``jvp_<dtype>``)."""


def _loss_grad(
    ctx: Ctx, params: Params, dtype: str, g: np.ndarray, substitute: str = ""
) -> dict[str, np.ndarray] | CallFailure:
    """The target's autograd gradient of L = sum(f(P) * G) with respect to the differentiable parameters
    (``substitute``: as in :func:`q_jvp`)."""
    kind = ctx.target.kind
    dt = TORCH_DTYPES[dtype]
    args = list(kind.args(params, dt, "cpu"))
    names = list(params)
    if kind.complex_input:
        wrt = [0]
    else:
        wrt = [i for i, name in enumerate(names) if name in kind.differentiable]
    kw: dict[str, Any] = {"wrt": wrt, **({"substitute": substitute} if substitute else {})}
    res = ctx.remote(op_loss_grad, torch.as_tensor(g), *args, kw=kw)
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
    if kind.complex_input:
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


def q_gradient(ctx: Ctx, params: Params, dtype: str, substitute: str = "") -> Measure:
    kind = ctx.target.kind
    rng = np.random.default_rng(7)
    g = rng.standard_normal(kind.view_shape(params))
    got = _loss_grad(ctx, params, dtype, g, substitute)
    if isinstance(got, CallFailure):
        return refusal(got, "backward") if got.kind == "raised" else failed(got, "backward: ")
    eps = unit_roundoff(dtype)
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
    return Measure(r, f"||grad - {how}|| / (n eps ||reference grad||) = {r:.6g}")


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


def q_jvp(ctx: Ctx, params: Params, dtype: str, substitute: str = "") -> Measure:
    """Forward-mode derivative (torch.func.jvp) along a random direction against 50-digit central
    differences of the reference (float64 differences of the target for kinds without one);
    unsupported when the target declines forward mode with an exception (:func:`refusal`).
    ``substitute``: a torch operation the target's process computes by its reference formulation
    (blame, see :mod:`~orthoverify.conformance.substitute`)."""
    kind = ctx.target.kind
    dt = TORCH_DTYPES[dtype]
    tangent = _tangent(kind, params, np.random.default_rng(11))
    if dt.itemsize == 2:  # a half-precision tangent as the target receives it: the reference moves along the same
        tangent = {k: torch.as_tensor(t).to(dt).double().numpy() for k, t in tangent.items()}
    primals = kind.args(params, dt, "cpu")
    if kind.complex_input:  # one complex argument: its tangent is re + i im
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
    eps = unit_roundoff(dt)
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
    return Measure(r, f"||jvp - {how}|| / (n eps ||reference||) = {r:.6g}")
