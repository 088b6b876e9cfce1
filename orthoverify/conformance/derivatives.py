"""The derivatives of a target, each measured here against one reference: its backward
(``gradient``), its forward mode (``jvp``) and the three second-order modes, in float64, float32 or
a half-precision dtype, optionally with one torch operation substituted in the target's process.

Every case draws the same directions (:func:`directions`: the upstream gradient G, seed 7, and the
tangents v and w, seeds 11 and 13). The judge is :func:`reference`: central differences of
orthoverify's reference at 50 digits (the gradient of sum(ref(P) * G) entry by entry, the
derivative along v, and the four-point v'Hw), cached per case; for a kind without a formula, the
target's own float64 differences (:func:`_target_differences`). Second order is the directional
second derivative ``s = v' H w`` of L(P) = sum(f(P) * G) in three modes users reach
(:data:`SECOND_ORDER`). A lower precision (``<check>_<dtype>``) runs the same measure at the
parameters rounded to that dtype, on the dtype's own unit roundoff times the allowance's kappa
(:func:`quantity`); sizes where 30 n u kappa >= 1 promise no digit and are not judged. The
target's process returns raw tensors; every reference, ratio and verdict is computed here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import mpmath
import numpy as np
import torch

from orthoverify.backends import get_backend
from orthoverify.conformance.context import DTYPES, Ctx, Quantity, allowance, as_np, failed, not_run, refusal, rounded
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.engine import scan as scans
from orthoverify.engine.ratios import THRESHOLD, Measure
from orthoverify.isolation.calls import CallFailure, checked
from orthoverify.isolation.declare import declaration_of
from orthoverify.isolation.wire import op_jvp, op_loss_grad, op_second
from orthoverify.tolerance import unit_roundoff

HALF: dict[str, torch.dtype] = {"float16": torch.float16, "bfloat16": torch.bfloat16}
"""The half-precision dtypes a target may declare (``gradient_<dtype>``, ``jvp_<dtype>``, ``low_precision``)."""
TORCH_DTYPES: dict[str, torch.dtype] = {**DTYPES, **HALF}
"""The dtypes a derivative is taken in."""

SECOND_ORDER: dict[str, str] = {
    "second_ff": "forward-over-forward (torch.func.jvp of torch.func.jvp)",
    "second_fr": "forward-over-reverse (torch.func.jvp of torch.func.grad)",
    "second_rr": "reverse-over-reverse (torch.autograd.grad twice, create_graph=True)",
}
"""The second-order checks and the mode each one exercises."""

FD_EPS = 1e-7
"""The least unit a ratio against float64 differences of the target divides by (their error:
~1e-10 relative for second order after Richardson extrapolation, h = 1e-3)."""


# ------------------------------------------------------------------------------ the reference
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


def _in(x: Any, dtype: str) -> np.ndarray:
    """``x`` rounded to the half-precision ``dtype`` (as the target receives it), in float64."""
    return torch.as_tensor(np.asarray(x, np.float64)).to(HALF[dtype]).double().numpy()


def directions(
    kind: Kind, params: Params, dtype: str = "float64"
) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """G, v and w of a case: fixed random draws (seeds 7, 11, 13) of the output's and the domain's
    shapes; G and v rounded to a half-precision ``dtype`` (so the reference differentiates what the
    target receives)."""
    g = np.random.default_rng(7).standard_normal(kind.view_shape(params))
    v = _tangent(kind, params, np.random.default_rng(11))
    w = _tangent(kind, params, np.random.default_rng(13))
    if dtype in HALF:
        g, v = _in(g, dtype), {k: _in(t, dtype) for k, t in v.items()}
    return g, v, w


def _fifty_gradient(kind: Kind, params: Params, g: np.ndarray, *_: Any) -> dict[str, np.ndarray]:
    """Central differences of L = sum(ref(P) * G) at 50 digits, entry by entry (h = 1e-20: error ~1e-40)."""
    b = get_backend("mpmath-50")
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
                vals.append(b.sum(kind.reference(p, b) * gg))
            if len(vals) == 2:
                grad[idx] = float((vals[0] - vals[1]) / (2 * h))
        out[name] = grad
    return out


def _fifty_jvp(kind: Kind, params: Params, _g: np.ndarray, v: dict[str, np.ndarray], *_: Any) -> np.ndarray:
    """(ref(P + h v) - ref(P - h v)) / 2h at 50 digits (h = 1e-20: error ~1e-40)."""
    assert kind.reference is not None
    b = get_backend("mpmath-50")
    h = mpmath.mpf("1e-20")
    vals = []
    for sgn in (1, -1):
        p = {k: b.asarray(x) for k, x in params.items()}
        for name, t in v.items():
            p[name] = p[name] + b.asarray(t) * (sgn * h)
        vals.append(kind.reference(p, b))
    return np.asarray(b.to_numpy((vals[0] - vals[1]) / (2 * h)), dtype=np.float64)


def _fifty_second(
    kind: Kind, params: Params, g: np.ndarray, v: dict[str, np.ndarray], w: dict[str, np.ndarray]
) -> tuple[float, float]:
    """(v'Hw, ||G|| ||D^2 ref[v, w]||) from four-point central differences at 50 digits (h = 1e-15: error ~1e-30)."""
    assert kind.reference is not None
    b = get_backend("mpmath-50")
    h = mpmath.mpf("1e-15")
    vals = []
    for sv, sw in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        p = {k: b.asarray(x) for k, x in params.items()}
        for name in v:
            p[name] = p[name] + b.asarray(v[name]) * (sv * h) + b.asarray(w[name]) * (sw * h)
        vals.append(kind.reference(p, b))
    d2 = np.asarray(b.to_numpy((vals[0] - vals[1] - vals[2] + vals[3]) / (4 * h * h)), dtype=np.float64)
    return float(np.sum(d2 * g)), float(np.linalg.norm(g)) * float(np.linalg.norm(d2))


_FIFTY: dict[str, Callable[..., Any]] = {"gradient": _fifty_gradient, "jvp": _fifty_jvp, "second": _fifty_second}
_CENTRAL = "50-digit central differences of the reference"
_CACHE: dict[bytes, Any] = {}


def reference(kind: Kind, params: Params, order: str, dtype: str = "float64") -> Any:
    """The 50-digit reference of ``order`` ("gradient", "jvp" or "second") at ``params`` along the
    case's :func:`directions` in ``dtype``: the gradient of sum(ref(P) * G) by parameter, the
    derivative along v, or (v'Hw, ||G|| ||D^2 ref[v, w]||). Cached per case (a check, its blame
    and its lower-precision sibling measure the same case again); the values are not to be mutated."""
    shapes = repr([(k, np.shape(v)) for k, v in params.items()]).encode()
    key = b"\0".join([kind.name.encode(), order.encode(), dtype.encode() if dtype in HALF else b"", shapes])
    key += scans.case_bytes(params)
    if key not in _CACHE:
        if len(_CACHE) > 256:
            _CACHE.clear()
        _CACHE[key] = _FIFTY[order](kind, params, *directions(kind, params, dtype))
    return _CACHE[key]


def _outputs(ctx: Ctx, points: Sequence[Params]) -> list[np.ndarray] | CallFailure:
    """The target's float64 outputs at ``points``, in order (stopping at the first failed call)."""
    out = []
    for p in points:
        res = ctx.run(p, "float64")
        if isinstance(res, CallFailure):
            return res
        out.append(as_np(res))
    return out


def _target_differences(ctx: Ctx, params: Params, order: str, dtype: str) -> Any:
    """For a kind without a reference: ``order`` from float64 central differences of the target
    itself along the case's directions (a CallFailure, or for second order a reason string, when
    they cannot be taken)."""
    kind = ctx.target.kind
    g, v, w = directions(kind, params, dtype)
    if order == "gradient":  # entry by entry, h = 1e-6 max(1, |x|)
        out: dict[str, np.ndarray] = {}
        for name in kind.differentiable:
            out[name] = np.zeros(params[name].shape)
            for idx in np.ndindex(*params[name].shape):
                h = 1e-6 * max(1.0, abs(float(params[name][idx])))
                pair = [{k: np.array(x, copy=True) for k, x in params.items()} for _ in (1, -1)]
                pair[0][name][idx] += h
                pair[1][name][idx] += -h
                vals = _outputs(ctx, pair)
                if isinstance(vals, CallFailure):
                    return vals
                out[name][idx] = (float(np.sum(vals[0] * g)) - float(np.sum(vals[1] * g))) / (2 * h)
        return out
    if order == "jvp":  # along v, h = 1e-6
        pair = [{k: np.asarray(x, np.float64) + s * 1e-6 * v.get(k, 0.0) for k, x in params.items()} for s in (1, -1)]
        vals = _outputs(ctx, pair)
        return vals if isinstance(vals, CallFailure) else (vals[0] - vals[1]) / (2 * 1e-6)
    # second order: four-point differences along v/|v| and w/|w|, Richardson-extrapolated over h and 2h
    nv = math.sqrt(sum(float(np.sum(x * x)) for x in v.values())) or 1.0
    nw = math.sqrt(sum(float(np.sum(x * x)) for x in w.values())) or 1.0
    est, p64 = [], params.items()
    for h in (1e-3, 2e-3):
        points = [
            {k: np.asarray(x, np.float64) + a * h * v.get(k, 0.0) / nv + b * h * w.get(k, 0.0) / nw for k, x in p64}
            for a, b in ((1, 1), (1, -1), (-1, 1), (-1, -1))
        ]
        four = _outputs(ctx, points)
        if isinstance(four, CallFailure):
            return f"finite differences of the target: {four}"
        est.append((four[0] - four[1] - four[2] + four[3]) / (4 * h * h) * nv * nw)
    d2 = (4 * est[0] - est[1]) / 3
    size = float(np.linalg.norm(d2))
    if float(np.linalg.norm(est[0] - est[1])) > 1e-2 * size + 1e-6 * nv * nw:
        return "the target is not smooth here (second differences at h and 2h disagree)"
    return float(np.sum(d2 * g)), float(np.linalg.norm(g)) * size


def _judge(ctx: Ctx, params: Params, order: str, dtype: str) -> tuple[Any, str, float] | Measure:
    """The judge of ``order`` (gradient, jvp or a second-order mode) at ``params`` in ``dtype``: the
    reference, how it was taken, and the unit the ratio divides by (eps of ``dtype``, at least
    :data:`FD_EPS` against the target's differences); or the measure of why there is none."""
    kind = ctx.target.kind
    eps = unit_roundoff(dtype)
    form = "second" if order in SECOND_ORDER else order
    four = form == "second"
    if kind.reference is not None:
        how = "4-point differences of the reference at 50 digits" if four else _CENTRAL
        return reference(kind, rounded(params, dtype) if form == "jvp" else params, form, dtype), how, eps
    fd = _target_differences(ctx, params, form, dtype)
    if isinstance(fd, CallFailure):
        return failed(fd, "finite differences of the target: ")
    if isinstance(fd, str):
        return Measure(math.nan, fd)
    how = f"float64 {'4-point ' if four else 'central '}differences of the target"
    return fd, how, max(eps, FD_EPS)


# ------------------------------------------------------------------------------ the target's derivatives
def _args(ctx: Ctx, params: Params, dtype: str) -> tuple[list[torch.Tensor], list[str]]:
    return list(ctx.target.kind.args(params, TORCH_DTYPES[dtype], "cpu")), list(params)


def _sub(substitute: str) -> dict[str, str]:
    return {"substitute": substitute} if substitute else {}


def _loss_grad(
    ctx: Ctx, params: Params, dtype: str, g: np.ndarray, substitute: str = ""
) -> dict[str, np.ndarray] | CallFailure:
    """The target's autograd gradient of L = sum(f(P) * G) with respect to the differentiable
    parameters (``substitute``: a torch operation the target's process computes by its reference
    formulation, see :mod:`~orthoverify.isolation.substitute`)."""
    kind = ctx.target.kind
    args, names = _args(ctx, params, dtype)
    wrt = [0] if kind.complex_input else [i for i, name in enumerate(names) if name in kind.differentiable]
    res = ctx.remote(op_loss_grad, torch.as_tensor(g), *args, kw={"wrt": wrt, **_sub(substitute)})
    if isinstance(res, CallFailure):
        return res
    if len(res) != len(wrt) + 1 or any(r is None for r in res):
        return CallFailure("type", "the backward pass returned no gradient")
    lval = res[0]
    assert lval is not None
    if not bool(torch.isfinite(lval).all()):
        return CallFailure("non-finite", "the loss through the target is NaN or Inf")
    grads = {i: r.detach() for i, r in zip(wrt, res[1:], strict=True) if r is not None}
    if kind.complex_input:
        return {"re": grads[0].real.double().cpu().numpy(), "im": grads[0].imag.double().cpu().numpy()}
    return {name: grads[i].double().cpu().numpy() for i, name in enumerate(names) if i in grads}


def _jvp(
    ctx: Ctx, params: Params, dtype: str, tangent: dict[str, np.ndarray], substitute: str = ""
) -> torch.Tensor | CallFailure:
    """The target's forward-mode derivative (torch.func.jvp) along ``tangent``."""
    kind = ctx.target.kind
    primals, names = _args(ctx, params, dtype)
    if kind.complex_input:  # one complex argument: its tangent is re + i im
        tangents = {0: torch.complex(torch.as_tensor(tangent["re"]), torch.as_tensor(tangent["im"]))}
    else:
        tangents = {i: torch.as_tensor(tangent[name]) for i, name in enumerate(names) if name in tangent}
    which = sorted(tangents)
    res = ctx.remote(op_jvp, *primals, *(tangents[i] for i in which), kw={"which": which, **_sub(substitute)})
    return res if isinstance(res, CallFailure) else checked(res[0] if res else None, shape=kind.view_shape(params))


def _second(ctx: Ctx, params: Params, mode: str, substitute: str = "", dtype: str = "float64") -> float | CallFailure:
    """v'Hw by the target's own derivatives in ``mode`` (parameters and directions sent in
    ``dtype``), after a plain call (a target that builds state lazily builds it there)."""
    warm = ctx.run(params, dtype)
    if isinstance(warm, CallFailure):
        return warm
    dt = DTYPES[dtype]
    g, v, w = directions(ctx.target.kind, params)
    primals, names = _args(ctx, params, dtype)
    which = [i for i, name in enumerate(names) if name in v]
    vt = [torch.as_tensor(v[names[i]]).to(dt) for i in which]
    wt = [torch.as_tensor(w[names[i]]).to(dt) for i in which]
    kw = {"which": which, "mode": mode, **_sub(substitute)}
    res = ctx.remote(op_second, torch.as_tensor(g), *primals, *vt, *wt, kw=kw)
    got = res if isinstance(res, CallFailure) else checked(res[0] if res else None, shape=(1,), finite=True)
    return got if isinstance(got, CallFailure) else float(got.double()[0])


def _project(kind: Kind, grads: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The defined part of each gradient: the skew part of a skew parameter's, the lower
    trapezoid of a lower one's (over the last two axes, so stacks too)."""
    out = {k: v - np.swapaxes(v, -1, -2) if k in kind.skew else v for k, v in grads.items()}
    return {k: np.tril(v) if k in kind.tril else v for k, v in out.items()}


def distance(got: dict[str, np.ndarray], ref: dict[str, np.ndarray]) -> tuple[float, float]:
    """(||got - ref||, ||ref|| or 1) over every parameter's gradient (Frobenius)."""
    num = math.sqrt(sum(float(np.sum((got[k] - ref[k]) ** 2)) for k in ref))
    return num, math.sqrt(sum(float(np.sum(ref[k] ** 2)) for k in ref)) or 1.0


# ------------------------------------------------------------------------------ measures
def measure_first(ctx: Ctx, params: Params, order: str, dtype: str, substitute: str = "") -> Measure:
    """The target's ``order`` (gradient: its backward of sum(f(P) * G); jvp: torch.func.jvp along v)
    in ``dtype`` at ``params`` against the judge: ||d - d_ref|| / (n eps ||d_ref||); unsupported
    when the target declines the mode with an exception (:func:`refusal`)."""
    kind = ctx.target.kind
    g, v, _ = directions(kind, params, dtype)
    if order == "gradient":
        got: Any = _loss_grad(ctx, params, dtype, g, substitute)
        what, prefix = "backward" + (f" in {dtype}" if dtype in HALF else ""), "backward: "
    else:
        got, what, prefix = _jvp(ctx, params, dtype, v, substitute), "forward mode (torch.func.jvp)", "jvp: "
    if isinstance(got, CallFailure):  # raised: no rule for this mode, or one that declines; not a wrong number
        return refusal(got, what) if got.kind == "raised" else failed(got, prefix)
    judge = _judge(ctx, params, order, dtype)
    if isinstance(judge, Measure):
        return judge
    ref, how, unit = judge
    if order == "gradient":
        num, scale = distance(_project(kind, got), _project(kind, ref))
        r = num / (kind.view_shape(params)[0] * unit * scale)
        u = "u" if dtype in HALF else "eps"
        return Measure(r, f"||grad - {how}|| / (n {u} ||reference grad||) = {r:.6g}")
    scale = float(np.linalg.norm(ref)) or 1.0
    r = float(np.linalg.norm(as_np(got) - ref)) / (ref.shape[-1] * unit * scale)
    return Measure(r, f"||jvp - {how}|| / (n eps ||reference||) = {r:.6g}")


def _nudged(kind: Kind, params: Params, seed: int, dtype: str = "float64") -> dict[str, np.ndarray]:
    """``params`` with each differentiable entry multiplied by 1 + 4 eps r (eps of ``dtype``, r
    standard normal; symmetric for a skew parameter, so it stays skew; zeros stay zero)."""
    rng = np.random.default_rng(seed)
    out = {k: np.asarray(v, np.float64).copy() for k, v in params.items()}
    for name in kind.differentiable:
        r = rng.standard_normal(out[name].shape)
        if name in kind.skew:
            r = (r + r.T) / 2
        out[name] = out[name] * (1.0 + 4 * unit_roundoff(dtype) * r)
    return out


def noise(ctx: Ctx, params: Params, mode: str, got: float, substitute: str = "", dtype: str = "float64") -> float:
    """How far the target's own v'Hw in ``dtype`` moves when its inputs move by a few units in the
    last place (the rounding noise of its computation there; 0 when the nudged calls fail)."""
    out = 0.0
    for seed in (1, 2):
        again = _second(ctx, rounded(_nudged(ctx.target.kind, params, seed, dtype), dtype), mode, substitute, dtype)
        if isinstance(again, float):
            out = max(out, abs(again - got))
    return out


def measure_second(
    ctx: Ctx, params: Params, mode: str, dtype: str = "float64", substitute: str = "", kappa: float = 1.0
) -> Measure:
    """One second-order case: |s - s_ref| / max(n eps kappa ||G|| ||D^2 f[v, w]||, noise), s the
    target's v'Hw in ``dtype`` at ``params`` (already representable in it), s_ref the reference there,
    eps that of ``dtype`` (``kappa``: the allowance's, 1 in float64); noise is how far the target's
    own s moves when its inputs move by a few ulps (a correct rule evaluated by an algorithm that
    cancels, e.g. a reflection of a tiny vector, is as accurate as its rounding allows; a wrong
    rule is off by far more). With ``substitute`` (blame) the case is not recorded in the series."""
    kind = ctx.target.kind
    n = kind.view_shape(params)[0]
    check = mode if dtype == "float64" else f"{mode}_{dtype}"  # the cases are recorded under it: its series
    got = _second(ctx, params, mode, substitute, dtype)
    what = SECOND_ORDER[mode] + ("" if dtype == "float64" else f" in {dtype}")
    if isinstance(got, CallFailure):
        if got.kind == "raised" and mode not in declared(ctx, "modes"):  # declined: unsupported, not wrong
            return refusal(got, what)
        if not substitute:
            ctx.measured.record(check, n, math.inf, params, dtype)
        return Measure(math.inf, f"{what}: {got}")
    judge = _judge(ctx, params, mode, dtype)
    if isinstance(judge, Measure):
        return judge
    (ref, scale), how, unit = judge
    floor = n * unit * kappa * (scale or 1.0)
    r = abs(got - ref) / floor
    wobble = noise(ctx, params, mode, got, substitute, dtype) if r > THRESHOLD else 0.0
    k = " kappa" if kappa != 1.0 else ""
    text = f"|difference| / (n eps{k} ||G|| ||D2f[v,w]||) = {r:.6g}" + (f" (kappa = {kappa:.3g})" if k else "")
    if wobble > floor:
        r = abs(got - ref) / wobble
        text = f"|difference| / (the target's own rounding noise {wobble:.3g} at inputs a few ulps away) = {r:.6g}"
    if not substitute:
        ctx.measured.record(check, n, r, params, dtype)
    return Measure(r, f"{what}: v'Hw = {got:.17g}, {how}: {ref:.17g}; {text}")


def declared(ctx: Ctx, what: str) -> tuple[str, ...]:
    """What the target declares it supports (``what``: "modes" or "dtypes"); a failure there, an
    exception included, is a defect."""
    d = declaration_of(ctx.target)
    return getattr(d, what) if d is not None else ()


# ------------------------------------------------------------------------------ one quantity per check
def at_dtype(params: Params, dtype: str) -> Params:
    """``params`` rounded to ``dtype`` (as the target receives them), in float64."""
    return rounded(params, dtype) if dtype in DTYPES else {k: _in(v, dtype) for k, v in params.items()}


def _unjudged(ctx: Ctx, p: Params, dtype: str) -> tuple[float, Measure | None]:
    """The allowance's kappa at ``p`` and why a derivative there in ``dtype`` is not judged: the
    allowance promises no digit there, or the kind has no reference and the target's float64 output
    (the judge) failed; None where it is judged."""
    kappa, skip = allowance(ctx, p, dtype)
    if skip is None and ctx.target.kind.reference is None and "float64" in ctx.failed_output:
        skip = not_run(f"the output check failed in float64 ({ctx.failed_output['float64']}), the judge here")
    return kappa, skip


def _scaled(c: Measure, kappa: float, what: str) -> Measure:
    """``c`` (a lower-precision derivative's case, ratio over n eps) divided by the allowance's kappa."""
    if math.isnan(c.ratio) or c.unsupported or c.not_run:
        return c
    r = c.ratio / kappa
    text = f"{what}: {c.display}" + ("" if kappa == 1.0 else f"; divided by kappa = {kappa:.3g}: {r:.6g}")
    return Measure(c.ratio if kappa == 1.0 else r, text, status="raised" if c.raised else "")


def split(check: str) -> tuple[str, str]:
    """(the derivative, the dtype) of a derivative check: ("second_ff", "float32") for
    ``second_ff_float32``, ("gradient", "float64") for ``gradient``."""
    base, _, dtype = check.rpartition("_")
    return (base, dtype) if dtype in TORCH_DTYPES and dtype != "float64" else (check, "float64")


def quantity(check: str, substitute: str = "") -> Quantity:
    """The test ratio of the derivative check ``check`` (gradient, jvp or a second-order mode,
    ``_<dtype>`` for a lower precision) with the target's ``substitute`` operation computed by its
    reference formulation ("" for none; blame, :mod:`~orthoverify.conformance.blame`). In a lower
    precision: the measure at the parameters rounded to that dtype, divided by the allowance's
    kappa there, or why it is not judged (:func:`_unjudged`)."""
    base, low = split(check)
    if base not in ("gradient", "jvp", *SECOND_ORDER) or (base in SECOND_ORDER and low not in DTYPES):
        raise LookupError(f"{check!r} is no derivative check")

    def q(ctx: Ctx, params: Params, dtype: str = low) -> Measure:
        if low == "float64":
            if base in SECOND_ORDER:
                return measure_second(ctx, params, base, "float64", substitute)
            return measure_first(ctx, params, base, dtype, substitute)
        p = at_dtype(params, low)
        kappa, skip = _unjudged(ctx, p, low)
        if skip is not None:
            return skip
        if base in SECOND_ORDER:
            return measure_second(ctx, p, base, low, substitute, kappa=kappa)
        what = "backward" if base == "gradient" else "forward mode"
        what = f"float32 {what}" if low == "float32" else f"{what} in {low} (u = {unit_roundoff(low):.3g})"
        return _scaled(measure_first(ctx, p, base, low, substitute), kappa, what)

    return q


__all__ = ["HALF", "SECOND_ORDER", "TORCH_DTYPES", "at_dtype", "declared", "directions", "measure_first"]
__all__ += ["measure_second", "quantity", "reference", "split"]
