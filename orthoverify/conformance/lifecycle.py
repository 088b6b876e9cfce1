"""The module's life in training: what happens to a parametrised weight after optimiser steps
with weight decay, a state_dict round trip, dtype casts and a device move.

A target takes part when it declares a module factory (``declare(module=...)``, or a built-in
adapter's declaration): ``module(n)`` builds a fresh module from its own initialisation (after
``torch.manual_seed``), whose matrix is ``module.weight`` (or the declared ``weight`` reader).
After every step the weight must still be orthogonal (test ratio ``||W'W - I|| / (n eps)``, eps
of the weight's dtype) or, where the declaration says so, have its singular values in the declared
range; and it must not be degenerate (no zero or repeated columns). The training loss is the
linear L(W) = sum(W * G) with a fixed random G, so every step moves the weight.

Each scenario is a point of "parameters" (n, optimiser, seed, cast), so a failure is an ordinary
counterexample that ``orthoverify replay`` re-runs.

A module itself can be the target (:func:`module_target`): a factory ``n -> module`` (or a module
class whose constructor takes n) whose weight is parametrised (``torch.nn.utils.parametrize``:
torch's and geotorch's ``orthogonal``, a ``register_parametrization``) is judged as an
``orthogonal-map`` from the parametrised original X to the weight, with its lifecycle checks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from orthoverify.conformance import checks as ck
from orthoverify.conformance.calls import CallFailure
from orthoverify.conformance.declare import Declaration, declaration_of
from orthoverify.conformance.kinds import Params
from orthoverify.conformance.modes import LOW, PlanEntry, record, with_series
from orthoverify.engine.model import Evidence

OPTIMISERS: tuple[tuple[str, Callable[[Any], torch.optim.Optimizer]], ...] = (
    ("SGD(lr=0.1, weight_decay=0.1)", lambda ps: torch.optim.SGD(ps, lr=0.1, weight_decay=0.1)),
    ("Adam(lr=0.01, weight_decay=0.1)", lambda ps: torch.optim.Adam(ps, lr=0.01, weight_decay=0.1)),
    ("AdamW(lr=0.01, weight_decay=0.1)", lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1)),
)
"""The optimisers of the weight-decay check (by index: the scenario's ``opt``)."""

CASTS: tuple[tuple[str, torch.dtype], ...] = (
    ("double", torch.float64),
    ("float", torch.float32),
    ("half", torch.float16),
    ("bfloat16", torch.bfloat16),
)
"""The casts of the dtype check (by index: the scenario's ``cast``): ``module.double()`` etc."""

_EPS: dict[torch.dtype, float] = {**ck.EPS, **{dt: u for dt, u in LOW.values()}}

STEPS = {"quick": 5, "default": 10, "thorough": 25}


def _decl(ctx: ck.Ctx) -> Declaration:
    d = declaration_of(ctx.target)
    assert d is not None and d.module is not None
    return d


def _weight(d: Declaration, m: torch.nn.Module) -> torch.Tensor:
    w = d.weight(m) if d.weight is not None else m.weight
    assert isinstance(w, torch.Tensor)
    return w


def _build(d: Declaration, n: int, seed: int, dtype: torch.dtype) -> torch.nn.Module:
    """A fresh module after ``torch.manual_seed(seed)``, built with ``dtype`` as the default dtype
    (so its initialisation is as accurate as the dtype allows), then moved to ``dtype``."""
    torch.manual_seed(seed)
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        m = d.module(n) if d.module is not None else None
    finally:
        torch.set_default_dtype(default)
    if not isinstance(m, torch.nn.Module):
        raise TypeError(f"the declared module factory returned {type(m).__name__}, not a torch.nn.Module")
    return m.to(dtype)


def invariant(d: Declaration, w: torch.Tensor, eps: float | None = None) -> tuple[float, str]:
    """The weight's test ratio against its declared property (0 when it holds exactly) and what
    was measured, degeneracy (zero or repeated columns) included; ``eps``: the unit roundoff to
    judge by (default: the weight's dtype's)."""
    eps = eps if eps is not None else _EPS.get(w.dtype, ck.EPS[torch.float64])
    q = w.detach().to("cpu", torch.float64).numpy()
    n = q.shape[-1]
    if not np.all(np.isfinite(q)):
        return math.inf, f"{int(np.sum(~np.isfinite(q)))} entries of the weight are NaN or Inf"
    norms = np.linalg.norm(q, axis=0)
    # an orthogonal weight is far from both; a declared singular-value range may allow nearly parallel
    # columns (sigma_min -> 0), so there only exact degeneracy counts (the range check does the rest)
    tol = math.sqrt(eps) if d.sigma is None else 4 * eps
    zero = int(np.sum(norms <= (tol if d.sigma is None else 0.0) * max(1.0, float(norms.max(initial=0.0)))))
    unit = q / np.where(norms > 0, norms, 1.0)
    cos = np.abs(unit.T @ unit) - np.eye(n)
    repeated = int(np.sum(np.triu(cos, 1) >= 1.0 - tol))
    degenerate = ""
    if zero or repeated:
        degenerate = f"degenerate: {zero} zero column(s), {repeated} pair(s) of repeated columns; "
    if d.sigma is None:
        r = ck.orthogonality(q, eps)
        return (math.inf if degenerate else r), f"{degenerate}||W'W - I||_F / (n eps) = {r:.6g}"
    lo, hi = d.sigma
    s = np.linalg.svd(q, compute_uv=False)
    out = max(0.0, lo - float(s.min()), float(s.max()) - hi) / (n * eps * max(1.0, hi))
    text = f"{degenerate}singular values in [{s.min():.6g}, {s.max():.6g}], declared [{lo:g}, {hi:g}]"
    return (math.inf if degenerate else out), f"{text}; distance outside / (n eps) = {out:.6g}"


def _loss(w: torch.Tensor, seed: int) -> torch.Tensor:
    g = torch.as_tensor(np.random.default_rng(seed).standard_normal(tuple(w.shape)), device=w.device)
    return (w * g.to(w.dtype)).sum()


def _step(m: torch.nn.Module, d: Declaration, opt: torch.optim.Optimizer, seed: int) -> None:
    opt.zero_grad()
    _loss(_weight(d, m), seed).backward()
    opt.step()


def _scenario(ctx: ck.Ctx, body: Callable[[], tuple[float, str]]) -> ck.Case:
    """Runs one scenario through ``ctx.call`` (the timeout, exceptions recorded as failures)."""
    box: dict[str, tuple[float, str]] = {}

    def run() -> torch.Tensor:
        box["r"] = body()
        return torch.zeros(1)

    res = ctx.call(run, timeout=ctx.timeout * 10)
    if isinstance(res, CallFailure):
        return ck.Case(math.inf, str(res))
    r, text = box["r"]
    return ck.Case(r, text)


def _n(params: Params) -> int:
    return round(float(np.asarray(params["n"]).reshape(-1)[0]))


def _i(params: Params, key: str) -> int:
    return round(float(np.asarray(params[key]).reshape(-1)[0]))


def q_weight_decay(ctx: ck.Ctx, params: Params, dtype: str) -> ck.Case:
    """From the module's initialisation, ``steps`` optimiser steps with weight decay; the first
    step after which the weight breaks its invariant, or the worst ratio over all steps."""
    d = _decl(ctx)
    n, which, steps, seed = _n(params), _i(params, "opt"), _i(params, "steps"), _i(params, "seed")
    name, make = OPTIMISERS[which]

    def body() -> tuple[float, str]:
        m = _build(d, n, seed, ck.DTYPES[dtype])
        r0, t0 = invariant(d, _weight(d, m))
        if not r0 <= ck.THRESHOLD:
            return r0, f"at initialisation (before any step): {t0}"
        opt = make(list(m.parameters()))
        worst, text = r0, f"at initialisation: {t0}"
        for k in range(1, steps + 1):
            _step(m, d, opt, seed)
            r, t = invariant(d, _weight(d, m))
            if not r <= ck.THRESHOLD:
                return r, f"after step {k} of {name}: {t}"
            if r > worst:
                worst, text = r, f"after step {k} of {name}: {t}"
        return worst, f"{steps} steps of {name}, worst {text}"

    c = _scenario(ctx, body)
    record(ctx, "weight_decay", n, c.ratio, params, dtype)
    return c


def q_state_dict(ctx: ck.Ctx, params: Params, dtype: str) -> ck.Case:
    """Two Adam steps (no weight decay: that is the other check's business) on module A; A's
    state_dict (tensors copied in memory) loaded into a fresh module B built from another seed;
    B's weight must equal A's; one more step on both (fresh SGD) must keep them equal and the
    invariant true."""
    d = _decl(ctx)
    n, seed = _n(params), _i(params, "seed")
    dt = ck.DTYPES[dtype]
    eps = _EPS[dt]

    def body() -> tuple[float, str]:
        a = _build(d, n, seed, dt)
        opt = torch.optim.Adam(list(a.parameters()), lr=0.01)
        for _ in range(2):
            _step(a, d, opt, seed)
        saved = {k: v.detach().clone() for k, v in a.state_dict().items()}
        b = _build(d, n, seed + 1, dt)
        b.load_state_dict(saved)
        wa, wb = ck.as_np(_weight(d, a)), ck.as_np(_weight(d, b))
        r = ck.agreement(wb, wa, eps)
        if not r <= ck.THRESHOLD:
            return r, f"after load_state_dict the fresh module's weight differs from the saved one: ratio {r:.6g}"
        for mod in (a, b):
            _step(mod, d, torch.optim.SGD(list(mod.parameters()), lr=0.1), seed + 2)
        r2 = ck.agreement(ck.as_np(_weight(d, b)), ck.as_np(_weight(d, a)), eps)
        if not r2 <= ck.THRESHOLD:
            return (
                r2,
                f"one step after loading, the reloaded module's weight differs from the original's: ratio {r2:.6g}",
            )
        ri, ti = invariant(d, _weight(d, b))
        return max(
            r, r2, ri
        ), f"reloaded weight ratio {r:.3g}, after one step {r2:.3g}; reloaded module after one step: {ti}"

    c = _scenario(ctx, body)
    record(ctx, "state_dict", n, c.ratio, params, dtype)
    return c


def q_dtype_cast(ctx: ck.Ctx, params: Params, dtype: str) -> ck.Case:
    """``module.double()`` (or .float(), .half(), .bfloat16()) of a module built in float32: the
    weight comes out in that dtype, satisfies the invariant on the larger of float32's and that
    dtype's unit roundoff (a cast up cannot add accuracy a float32 initialisation lacks), and
    survives one optimiser step. A cast the target does not declare that fails is not applicable."""
    d = _decl(ctx)
    n, cast, seed = _n(params), _i(params, "cast"), _i(params, "seed")
    name, dt = CASTS[cast]
    declared = str(dt).removeprefix("torch.") in (*declared_casts(d),)

    def body() -> tuple[float, str]:
        m = getattr(_build(d, n, seed, torch.float32), name)()
        w = _weight(d, m)
        if w.dtype != dt:
            return math.inf, f"after .{name}() the weight is {w.dtype}, not {dt} (a buffer or constant kept its dtype)"
        eps = max(_EPS[torch.float32], _EPS[dt])
        r0, t0 = invariant(d, w, eps)
        _step(m, d, torch.optim.SGD(list(m.parameters()), lr=0.1), seed)
        w1 = _weight(d, m)
        if w1.dtype != dt:
            return math.inf, f"after .{name}() and one step the weight is {w1.dtype}, not {dt}"
        r1, t1 = invariant(d, w1, eps)
        return max(r0, r1), f"after .{name}(): {t0}; after one SGD step: {t1}"

    c = _scenario(ctx, body)
    if not c.ratio <= ck.THRESHOLD and not declared:
        return ck.Case(math.nan, f".{name}() is not declared and fails: {c.display[:200]}")
    record(ctx, "dtype_cast", n, c.ratio, params, dtype)
    return ck.Case(c.ratio, f".{name}(): {c.display}")


def q_to_device(ctx: ck.Ctx, params: Params, dtype: str) -> ck.Case:
    """``module.to(other device)``: the weight lives there, satisfies the invariant and agrees with
    the weight on the first device; one optimiser step runs there."""
    d = _decl(ctx)
    n, seed = _n(params), _i(params, "seed")
    dt = ck.DTYPES[dtype]
    other = ctx.other_device

    def body() -> tuple[float, str]:
        m = _build(d, n, seed, dt)
        here = ck.as_np(_weight(d, m))  # built on the cpu
        m = m.to(other)
        w = _weight(d, m)
        if w.device.type != torch.device(other).type:
            return math.inf, f"after .to({other!r}) the weight is on {w.device}"
        r = ck.agreement(ck.as_np(w), here, _EPS[dt])
        _step(m, d, torch.optim.SGD(list(m.parameters()), lr=0.1), seed)
        ri, ti = invariant(d, _weight(d, m))
        return max(r, ri), f"weight on {other} against {ctx.device}: ratio {r:.3g}; after one step there: {ti}"

    c = _scenario(ctx, body)
    record(ctx, "to_device", n, c.ratio, params, dtype)
    return c


def declared_casts(d: Declaration) -> tuple[str, ...]:
    """float32 and float64 (every module claims them), and the declared half dtypes."""
    return ("float32", "float64", *d.dtypes)


ck.QUANTITIES.update(
    {"weight_decay": q_weight_decay, "state_dict": q_state_dict, "dtype_cast": q_dtype_cast, "to_device": q_to_device}
)


def _point(**kw: int) -> dict[str, np.ndarray]:
    return {k: np.array([float(v)]) for k, v in kw.items()}


def _dtype(ctx: ck.Ctx) -> str:
    """The dtype the modules are built in: float32 (torch's default) when it is under test."""
    return "float32" if "float32" in ctx.dtypes else ctx.dtypes[0]


def _sizes(ctx: ck.Ctx) -> tuple[int, ...]:
    return ctx.target.kind.sizes[1::2] if ctx.profile == "quick" else ctx.target.kind.sizes


def _run(ctx: ck.Ctx, check: str, cases: Iterator[tuple[Params, str]], what: str) -> list[Evidence]:
    """ck.scan over the scenarios (their points are not in the kind's domain: no domain filter)."""
    plain = replace(ctx, target=replace(ctx.target, domain=None))
    return with_series(plain, check, ck.scan(plain, check, cases), what)


def check_weight_decay(ctx: ck.Ctx) -> list[Evidence]:
    steps = STEPS.get(ctx.profile, 10)
    cases = (
        (_point(n=n, opt=i, steps=steps, seed=ctx.seed + n), _dtype(ctx))
        for n in _sizes(ctx)
        for i in range(len(OPTIMISERS))
    )
    return _run(ctx, "weight_decay", cases, "optimiser steps with weight decay (SGD, Adam, AdamW)")


def check_state_dict(ctx: ck.Ctx) -> list[Evidence]:
    cases = ((_point(n=n, seed=ctx.seed + n), _dtype(ctx)) for n in _sizes(ctx))
    return _run(ctx, "state_dict", cases, "state_dict save, load into a fresh module, one step")


def check_dtype_cast(ctx: ck.Ctx) -> list[Evidence]:
    cases = ((_point(n=n, cast=i, seed=ctx.seed + n), "float32") for n in _sizes(ctx) for i in range(len(CASTS)))
    return _run(ctx, "dtype_cast", cases, ".double(), .float(), .half(), .bfloat16()")


def check_to_device(ctx: ck.Ctx) -> list[Evidence]:
    cases = ((_point(n=n, seed=ctx.seed + n), _dtype(ctx)) for n in _sizes(ctx))
    return _run(ctx, "to_device", cases, f".to({ctx.other_device!r})")


def plan(target: ck.Target | None, other_device: str | None) -> list[PlanEntry]:
    """The lifecycle checks the target's declaration asks for (none without a module factory)."""
    d = declaration_of(target) if target is not None else None
    if d is None or d.module is None:
        return []
    what = (
        f"singular values in [{d.sigma[0]:g}, {d.sigma[1]:g}]"
        if d.sigma is not None
        else "orthogonal (test ratio <= 30)"
    ) + " and not degenerate (no zero or repeated columns)"
    out: list[PlanEntry] = []
    if "weight_decay" in d.lifecycle:
        out.append(
            (
                "weight_decay",
                "bound",
                f"from the module's own initialisation, after each of several SGD, Adam and AdamW steps with weight "
                f"decay the weight is {what}",
                check_weight_decay,
            )
        )
    if "state_dict" in d.lifecycle:
        out.append(
            (
                "state_dict",
                "identity",
                f"a state_dict loaded into a fresh module gives the same weight, before and after one more step, "
                f"and the weight is {what}",
                check_state_dict,
            )
        )
    if "dtype_cast" in d.lifecycle:
        out.append(
            (
                "dtype_cast",
                "bound",
                f"after .double(), .float() (and .half(), .bfloat16() where declared) the weight has that dtype and is "
                f"{what} on that dtype's unit roundoff, before and after one step; an undeclared cast that fails is "
                "not applicable",
                check_dtype_cast,
            )
        )
    if "to_device" in d.lifecycle and other_device is not None:
        out.append(
            (
                "to_device",
                "identity",
                f"after .to({other_device!r}) the weight lives there, equals the weight before the move and is "
                f"{what} after one step there",
                check_to_device,
            )
        )
    return out


# ------------------------------------------------------------------------------ a module as the target
PROBE_N = 3
"""The size a module target is built at when it is loaded, to say at once whether it can be judged."""


def _weight_map(m: torch.nn.Module, what: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """X -> the weight the module's parametrisation computes from X in place of its original (the
    chain of parametrisations registered on ``weight``); raises ValueError saying why there is none."""
    from torch.nn.utils import parametrize

    if not isinstance(m, torch.nn.Module):
        raise ValueError(f"{what} is a {type(m).__name__}, not a torch.nn.Module")
    if not parametrize.is_parametrized(m, "weight"):
        raise ValueError(
            f"{what} has no parametrised weight (torch.nn.utils.parametrize): with a plain weight parameter no map "
            "takes parameters to an orthogonal weight; declare(module=...) on the map that computes it instead"
        )
    plist: Any = m.parametrizations
    plist = plist.weight
    chain, shape, w = list(plist), tuple(plist.original.shape), m.weight
    if len(shape) != 2 or shape[0] != shape[1] or not isinstance(w, torch.Tensor) or tuple(w.shape) != shape:
        raise ValueError(
            f"{what}: its parametrised original is {list(shape)} and its weight {list(getattr(w, 'shape', ()))}; a "
            "module target "
            "is judged as orthogonal-map, X (n x n) -> Q (n x n)"
        )

    def f(x: torch.Tensor) -> torch.Tensor:
        for p in chain:
            x = p(x)
        return x

    return f


def module_target(factory: Callable[[int], torch.nn.Module], name: str = "the module") -> Callable[..., torch.Tensor]:
    """A module factory (``n -> module``, or a module class whose constructor takes n) as a target of
    kind ``orthogonal-map``: X -> the module's weight with X in place of its parametrised original,
    one module per (n, dtype, device) built in float64 after ``torch.manual_seed(0)`` (as the
    built-in torch and geotorch adapters), declared with ``module=factory`` so the lifecycle checks
    run on it. Built once at n = PROBE_N here; a module that cannot be judged so raises
    :class:`~orthoverify.conformance.adapters.TargetLoadError` saying why."""
    from orthoverify.conformance.adapters import TargetLoadError, _per_dtype, float64_default
    from orthoverify.conformance.declare import declare

    def make(n: int, dtype: torch.dtype, device: str) -> Callable[[torch.Tensor], torch.Tensor]:
        with float64_default():
            m = factory(n)
        return _weight_map(m.to(dtype=dtype, device=device) if isinstance(m, torch.nn.Module) else m, name)

    try:
        with torch.random.fork_rng(devices=[]):  # the caller's random state is left as it was
            torch.manual_seed(0)
            make(PROBE_N, torch.float64, "cpu")
    except ValueError as exc:
        raise TargetLoadError(str(exc)) from exc
    except Exception as exc:
        raise TargetLoadError(f"cannot build {name} at n = {PROBE_N}: {type(exc).__name__}: {exc}") from exc
    fn = _per_dtype(make)
    fn.__doc__ = f"{name}: its weight as a function of its parametrised original"
    return declare(module=factory)(fn)
