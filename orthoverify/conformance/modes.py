"""Differentiation modes beyond first order, ``torch.func.vmap``, and low-precision dtypes.

Second order: the directional second derivative ``s = v' H w`` of the scalar L(P) = sum(f(P) * G)
(G a fixed random matrix, v and w random directions of the kind's domain) computed by the target
three ways users reach it: forward-over-forward (``torch.func.jvp`` of ``jvp``), forward-over-
reverse (``jvp`` of ``torch.func.grad``, the Hessian-vector recipe) and reverse-over-reverse
(``torch.autograd.grad`` with ``create_graph=True`` twice, as a gradient penalty does). The
reference never shares the target's code: four-point central differences of orthoverify's
reference at 50 digits (h = 1e-15: error ~1e-30), or, for kinds without a formula, of the target's
own float64 output (Richardson-extrapolated; a point where the two step sizes disagree is not
smooth there and is skipped). A mode the target declines with an exception (and does not declare)
is "unsupported" (:func:`~orthoverify.conformance.context.refusal`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from orthoverify.backends import get_backend
from orthoverify.conformance.context import (
    DTYPES,
    F64,
    Ctx,
    PlanEntry,
    Quantity,
    _kappa,
    as_np,
    inputs_of,
    refusal,
    rounded,
)
from orthoverify.conformance.gradients import _tangent
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.conformance.search import scan, sized_cases
from orthoverify.conformance.target import Target
from orthoverify.engine import scan as scans
from orthoverify.engine.model import Evidence
from orthoverify.engine.ratios import THRESHOLD, Measure, agreement, orthogonality
from orthoverify.isolation.calls import CallFailure, checked
from orthoverify.isolation.declare import declaration_of
from orthoverify.isolation.wire import op_second, op_vmap
from orthoverify.tolerance import UNIT_ROUNDOFF, unit_roundoff

SECOND_ORDER: dict[str, str] = {
    "second_ff": "forward-over-forward (torch.func.jvp of torch.func.jvp)",
    "second_fr": "forward-over-reverse (torch.func.jvp of torch.func.grad)",
    "second_rr": "reverse-over-reverse (torch.autograd.grad twice, create_graph=True)",
}
"""The second-order checks and the mode each one exercises."""

FD_EPS = 1e-7
"""The unit the second-order ratio uses against float64 differences of the target (their error
after Richardson extrapolation is ~1e-10 relative; h = 1e-3)."""


def with_series(ctx: Ctx, check: str, q: Quantity, evidence: list[Evidence], what: str) -> list[Evidence]:
    """The evidence of ``check`` with the mode or lifecycle step it exercised, its (n, ratio) series
    and, for a failure, the smallest failing case as its counterexample and the replay command
    (:func:`~orthoverify.engine.scan.with_series` over the cases ``ctx.measured`` kept)."""
    return scans.with_series(
        ctx.measured,
        check,
        evidence,
        what,
        dtype_of=lambda ev: ev.backend.split("-")[1] if ev.backend.count("-") >= 2 else "",
        measure=lambda params, dtype: q(ctx, params, dtype),
        inputs=inputs_of,
        replay=f"orthoverify replay RESULT.json conformance.{ctx.target.kind.name}.{check} --target {ctx.target.spec}",
    )


# ------------------------------------------------------------------------------ second order
def _directions(kind: Kind, params: Params) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """G, v and w: fixed random draws (seeds 7, 11, 13) of the output's and the domain's shapes."""
    g = np.random.default_rng(7).standard_normal(kind.view_shape(params))
    v = _tangent(kind, params, np.random.default_rng(11))
    w = _tangent(kind, params, np.random.default_rng(13))
    return g, v, w


_REF_CACHE: dict[bytes, tuple[float, float]] = {}


def _key(kind: Kind, params: Params) -> bytes:
    return kind.name.encode() + scans.case_bytes(params)


def reference_second(kind: Kind, params: Params) -> tuple[float, float]:
    """(v' H w, ||G|| ||D^2 f[v, w]||) from four-point central differences of the reference at 50
    digits; cached, as the three modes share it."""
    key = _key(kind, params)
    if key in _REF_CACHE:
        return _REF_CACHE[key]
    import mpmath

    assert kind.reference is not None
    g, v, w = _directions(kind, params)
    b = get_backend("mpmath-50")
    h = mpmath.mpf("1e-15")
    vals = []
    for sv, sw in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        p = {k: b.asarray(x) for k, x in params.items()}
        for name in v:
            p[name] = p[name] + b.asarray(v[name]) * (sv * h) + b.asarray(w[name]) * (sw * h)
        vals.append(kind.reference(p, b))
    d2 = np.asarray(b.to_numpy((vals[0] - vals[1] - vals[2] + vals[3]) / (4 * h * h)), dtype=np.float64)
    out = (float(np.sum(d2 * g)), float(np.linalg.norm(g)) * float(np.linalg.norm(d2)))
    if len(_REF_CACHE) > 256:
        _REF_CACHE.clear()
    _REF_CACHE[key] = out
    return out


def _target_second_fd(ctx: Ctx, params: Params) -> tuple[float, float] | str:
    """(v' H w, scale) from float64 four-point differences of the target, Richardson-extrapolated
    over h and 2h; a reason string where the two disagree (the target is not smooth there)."""
    g, v, w = _directions(ctx.target.kind, params)
    nv = math.sqrt(sum(float(np.sum(x * x)) for x in v.values())) or 1.0
    nw = math.sqrt(sum(float(np.sum(x * x)) for x in w.values())) or 1.0
    est = []
    for h in (1e-3, 2e-3):
        vals = []
        for sv, sw in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
            p = {
                k: np.asarray(x, np.float64) + sv * h * v.get(k, 0.0) / nv + sw * h * w.get(k, 0.0) / nw
                for k, x in params.items()
            }
            res = ctx.run(p, "float64")
            if isinstance(res, CallFailure):
                return f"finite differences of the target: {res}"
            vals.append(as_np(res))
        est.append((vals[0] - vals[1] - vals[2] + vals[3]) / (4 * h * h) * nv * nw)
    d2 = (4 * est[0] - est[1]) / 3
    size = float(np.linalg.norm(d2))
    if float(np.linalg.norm(est[0] - est[1])) > 1e-2 * size + 1e-6 * nv * nw:
        return "the target is not smooth here (second differences at h and 2h disagree)"
    return float(np.sum(d2 * g)), float(np.linalg.norm(g)) * size


def _target_second(
    ctx: Ctx, params: Params, mode: str, substitute: str = "", dtype: str = "float64"
) -> float | CallFailure:
    """v'Hw by the target's own derivatives in ``mode`` (in ``dtype``: parameters and directions
    sent in it): torch's AD runs through the target in its process (the ``second`` operation),
    which returns the raw scalar; ``substitute`` names a torch operation computed there by its
    reference formulation (see :mod:`~orthoverify.conformance.substitute`)."""
    kind = ctx.target.kind
    warm = ctx.run(params, dtype)  # a plain call first: a target that builds state lazily builds it here
    if isinstance(warm, CallFailure):
        return warm
    dt = DTYPES[dtype]
    g, v, w = _directions(kind, params)
    primals = list(kind.args(params, dt, "cpu"))
    names = list(params)
    which = [i for i, name in enumerate(names) if name in v]
    vt = [torch.as_tensor(v[names[i]]).to(dt) for i in which]
    wt = [torch.as_tensor(w[names[i]]).to(dt) for i in which]
    res = ctx.remote(
        op_second,
        torch.as_tensor(g),
        *primals,
        *vt,
        *wt,
        kw={"which": which, "mode": mode, **({"substitute": substitute} if substitute else {})},
    )
    got = res if isinstance(res, CallFailure) else checked(res[0] if res else None, shape=(1,), finite=True)
    return got if isinstance(got, CallFailure) else float(got.double()[0])


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
        nudged = rounded(_nudged(ctx.target.kind, params, seed, dtype), dtype)
        again = _target_second(ctx, nudged, mode, substitute, dtype)
        if isinstance(again, float):
            out = max(out, abs(again - got))
    return out


def measure_second(
    ctx: Ctx, params: Params, mode: str, dtype: str = "float64", substitute: str = "", kappa: float = 1.0
) -> Measure:
    """One second-order case: |s - s_ref| / max(n eps kappa ||G|| ||D^2 f[v, w]||, noise), s the
    target's v'Hw in ``dtype`` at ``params`` (already representable in it), s_ref the float64
    reference there, eps that of ``dtype`` (``kappa``: the allowance's, 1 in float64); noise is how
    far the target's own s moves when its inputs move by a few ulps (see :func:`q_second`)."""
    kind = ctx.target.kind
    n = kind.view_shape(params)[0]
    got = _target_second(ctx, params, mode, substitute, dtype)
    what = SECOND_ORDER[mode] + ("" if dtype == "float64" else f" in {dtype}")
    if isinstance(got, CallFailure):
        if got.kind == "raised" and mode not in declared_modes(ctx):  # declined: unsupported, not wrong
            return refusal(got, what)
        if not substitute:
            ctx.measured.record(_recorded(mode, dtype), n, math.inf, params, dtype)
        return Measure(math.inf, f"{what}: {got}")
    eps = unit_roundoff(dtype)
    if kind.reference is not None:
        ref, scale = reference_second(kind, params)
        how, unit = "4-point differences of the reference at 50 digits", eps
    else:
        fd = _target_second_fd(ctx, params)
        if isinstance(fd, str):
            return Measure(math.nan, fd)
        (ref, scale), how, unit = fd, "float64 4-point differences of the target", max(eps, FD_EPS)
    floor = n * unit * kappa * (scale or 1.0)
    r = abs(got - ref) / floor
    wobble = noise(ctx, params, mode, got, substitute, dtype) if r > THRESHOLD else 0.0
    k = " kappa" if kappa != 1.0 else ""
    text = f"|difference| / (n eps{k} ||G|| ||D2f[v,w]||) = {r:.6g}" + (f" (kappa = {kappa:.3g})" if k else "")
    if wobble > floor:
        r = abs(got - ref) / wobble
        text = f"|difference| / (the target's own rounding noise {wobble:.3g} at inputs a few ulps away) = {r:.6g}"
    if not substitute:
        ctx.measured.record(_recorded(mode, dtype), n, r, params, dtype)
    return Measure(r, f"{what}: v'Hw = {got:.17g}, {how}: {ref:.17g}; {text}")


def _recorded(mode: str, dtype: str) -> str:
    """The check a second-order case of ``mode`` in ``dtype`` is recorded under (its series)."""
    return mode if dtype == "float64" else f"{mode}_{dtype}"


def q_second(mode: str, substitute: str = "") -> Callable[[Ctx, Params, str], Measure]:
    """The quantity of one second-order mode in float64 (:func:`measure_second`): |s - s_ref| /
    max(n eps ||G|| ||D^2 f[v, w]||, noise), noise being how far the target's own s moves when its
    inputs move by a few ulps (a correct rule evaluated by an algorithm that cancels, e.g. a
    reflection of a tiny vector, is as accurate as its rounding allows; a wrong rule is off by far
    more than that). With ``substitute`` (blame, :mod:`~orthoverify.conformance.blame`) the target
    runs with that torch operation replaced and the case is not recorded in the check's series."""

    def q(ctx: Ctx, params: Params, dtype: str = "float64") -> Measure:
        return measure_second(ctx, params, mode, "float64", substitute)

    return q


def declared_modes(ctx: Ctx) -> tuple[str, ...]:
    """The modes the target declares it supports (a failure there, an exception included, is a defect)."""
    d = declaration_of(ctx.target)
    return d.modes if d is not None else ()


def check_second(mode: str) -> Callable[[Ctx], list[Evidence]]:
    """Every size of the kind at magnitude 1 in float64 (the quick profile: every other size)."""

    def run(ctx: Ctx) -> list[Evidence]:
        kind = ctx.target.kind
        sizes = ctx.profile.pick(kind.sizes[::2], kind.sizes, kind.sizes)
        cases = (
            (p, dt)
            for p, dt, *_ in sized_cases(ctx, mode, scales=(1.0,), dtypes=("float64",))
            if kind.out_shape(p)[0] in sizes
        )
        q = q_second(mode)
        return with_series(ctx, mode, q, scan(ctx, mode, q, cases), SECOND_ORDER[mode])

    return run


# ------------------------------------------------------------------------------ vmap
def _same_shape_sets(kind: Kind, params: Params, rng: np.random.Generator, count: int = 3) -> list[Params]:
    """``params`` and more draws of the same size and shapes (m varies for U), up to ``count``."""
    shapes = {k: np.shape(v) for k, v in params.items()}
    n = next(iter(params.values())).shape[0]
    sets: list[Params] = [params]
    for _ in range(50):
        if len(sets) == count:
            break
        cand = kind.draw(rng, n, 1.0)
        if {k: np.shape(v) for k, v in cand.items()} == shapes:
            sets.append(cand)
    return sets


def q_vmap(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """``torch.func.vmap(f)`` (run in the target's process: the ``vmap`` operation) over three
    stacked parameter sets against the three single calls."""
    kind = ctx.target.kind
    dt = DTYPES[dtype]
    sets = _same_shape_sets(kind, params, ctx.rng("vmap", dtype))
    singles = [ctx.run(s, dtype) for s in sets]
    for one in singles:
        if isinstance(one, CallFailure):
            return Measure(math.inf, f"single call: {one}")
    stacked = [torch.stack(parts) for parts in zip(*(kind.args(s, dt, "cpu") for s in sets), strict=True)]
    res = ctx.remote(op_vmap, *stacked)
    out = (
        res
        if isinstance(res, CallFailure)
        else checked(res[0] if res else None, shape=(len(sets), *kind.out_shape(params)))
    )
    n = kind.view_shape(params)[0]
    if isinstance(out, CallFailure):
        if out.kind == "raised" and "vmap" not in declared_modes(ctx):
            return refusal(out, "torch.func.vmap")
        ctx.measured.record("vmap", n, math.inf, params, dtype)
        return Measure(math.inf, f"torch.func.vmap: {out}")
    out = kind.view(out)
    r = max(
        agreement(F64, as_np(out[i]), as_np(s), s.shape[-1], computed_in=dtype).ratio
        for i, s in enumerate(singles)
        if isinstance(s, torch.Tensor)
    )
    ctx.measured.record("vmap", n, r, params, dtype)
    return Measure(r, f"max ||vmap(f)(stacked)[i] - f(P_i)|| / (n eps ||f(P_i)||) = {r:.6g}")


def check_vmap(ctx: Ctx) -> list[Evidence]:
    cases = sized_cases(ctx, "vmap", scales=(1.0,))
    return with_series(ctx, "vmap", q_vmap, scan(ctx, "vmap", q_vmap, cases), "torch.func.vmap against a loop")


# ------------------------------------------------------------------------------ low precision
LOW: dict[str, tuple[torch.dtype, float]] = {
    "float16": (torch.float16, UNIT_ROUNDOFF["float16"]),
    "bfloat16": (torch.bfloat16, UNIT_ROUNDOFF["bfloat16"]),
}
"""The half-precision dtypes and their unit roundoff."""


def q_low_precision(ctx: Ctx, params: Params, dtype: str) -> Measure:
    """The target in float16 or bfloat16, judged on that dtype's own unit roundoff u: the larger of
    ||Q'Q - I|| / (n u kappa) (for an orthogonal kind) and ||f_low - f_64|| / (n u kappa ||f_64||)."""
    kind = ctx.target.kind
    low, u = LOW[dtype]
    n = kind.view_shape(params)[0]
    exact = ctx.run(params, "float64")
    if isinstance(exact, CallFailure):
        return Measure(math.inf, f"float64: {exact}")
    rounded = {k: np.asarray(torch.as_tensor(np.asarray(v, np.float64)).to(low).double()) for k, v in params.items()}
    out_dtype = None if kind.complex_output else low
    got = ctx.call_target(*kind.args(params, low, ctx.device), shape=kind.out_shape(params), dtype=out_dtype)
    if isinstance(got, CallFailure):
        if dtype not in declared_dtypes(ctx):
            if got.kind == "raised":
                return refusal(got, f"{dtype} (not declared)")
            return Measure(math.nan, f"the target does not run in {dtype} (not declared): {got.message[:200]}")
        ctx.measured.record("low_precision", n, math.inf, params, dtype)
        return Measure(math.inf, f"{dtype} (declared): {got}")
    ref = ctx.run(rounded, "float64")
    if isinstance(ref, CallFailure):
        return Measure(math.nan, f"float64 at the {dtype}-rounded parameters: {ref}")
    q = as_np(kind.view(got.to(torch.complex64) if got.is_complex() else got))  # complex32 has few ops
    kappa = _kappa(kind, params)
    r = agreement(F64, q, as_np(ref), ref.shape[-1], kappa, computed_in=dtype).ratio
    text = f"||f_{dtype} - f_64|| / (n u kappa ||f_64||) = {r:.6g}"
    if kind.orthogonal_output:
        ro = orthogonality(F64, q, computed_in=dtype).ratio / kappa
        text += f", ||Q'Q - I|| / (n u kappa) = {ro:.6g}"
        r = max(r, ro)
    ctx.measured.record("low_precision", n, r, params, dtype)
    return Measure(r, f"{text} (u = {u:.3g})")


def declared_dtypes(ctx: Ctx) -> tuple[str, ...]:
    d = declaration_of(ctx.target)
    return d.dtypes if d is not None else ()


def check_low_precision(ctx: Ctx) -> list[Evidence]:
    cases = sized_cases(ctx, "low_precision", scales=(1.0,), dtypes=tuple(LOW))
    q = q_low_precision
    return with_series(ctx, "low_precision", q, scan(ctx, "low_precision", q, cases), "float16 and bfloat16")


def plan(kind: Kind, target: Target | None) -> list[PlanEntry]:
    """The checks of this module that apply to ``kind`` (and to what ``target`` declares)."""
    how = (
        "50-digit 4-point central differences of the reference"
        if kind.reference is not None
        else "float64 4-point central differences of the target, Richardson-extrapolated"
    )
    out: list[PlanEntry] = []
    if not kind.linear:  # no second derivative to check
        for mode, what in SECOND_ORDER.items():
            out.append(
                PlanEntry(
                    mode,
                    "gradient",
                    f"the target's second derivative v'Hw of sum(f(P) * G) by {what} equals {how}; unsupported "
                    "when the target declines this mode with an exception",
                    check_second(mode),
                    q_second(mode),
                    measures="|v'Hw - reference v'Hw| / max(n eps ||G|| ||D2f[v,w]||, the target's own rounding noise)",
                )
            )
    d = None
    if target is not None:
        d = declaration_of(target)
    if d is not None and "vmap" in d.modes:
        out.append(
            PlanEntry(
                "vmap",
                "identity",
                "torch.func.vmap(f) over stacked parameters equals f on each",
                check_vmap,
                q_vmap,
                measures="max_i ||vmap(f)(stacked)[i] - f(P_i)||_F / (n eps ||f(P_i)||_F)",
            )
        )
    if d is not None and any(x in LOW for x in d.dtypes) and not kind.complex_input:  # no half complex input
        out.append(
            PlanEntry(
                "low_precision",
                "bound",
                "in float16 and bfloat16 the output agrees with float64 (and is orthogonal) to the dtype's own unit "
                "roundoff (2^-11, 2^-8; test ratio <= 30); not applicable in a dtype the target does not declare",
                check_low_precision,
                q_low_precision,
                measures="||f_low(P) - f_64(P)||_F / (n u kappa ||f_64(P)||_F)"
                + (", and ||Q'Q - I||_F / (n u kappa)" if kind.orthogonal_output else ""),
            )
        )
    return out
