"""Scans, searches and shrinking of a target's checks: the engine's scan
(:mod:`orthoverify.engine.scan`: per-dtype tallies, the telling counterexample, the size series)
with the kind's callbacks (:func:`scanner`), the quantity of each check, the kind's shrinker, and
the streams of cases (special points, draws outwards from magnitude 1, sizes at fixed scales).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import torch

from orthoverify.conformance.context import (
    DTYPES,
    F64,
    Ctx,
    Quantity,
    _kappa,
    _size,
    _where,
    as_np,
    extreme,
    inputs_of,
    magnitude,
    output_failed,
    reference_np,
    remeasured,
    rounded,
)
from orthoverify.conformance.kinds import Params
from orthoverify.conformance.quantities import q_determinism, q_orthogonal
from orthoverify.engine import magnitudes
from orthoverify.engine import scan as scans
from orthoverify.engine.model import Evidence
from orthoverify.engine.ratios import Measure, agreement, fails, orthogonality
from orthoverify.isolation.calls import CallFailure, checked
from orthoverify.isolation.wire import op_forward


def check_determinism(ctx: Ctx) -> list[Evidence]:
    """Repeated calls agree (to the allowance, or bitwise when asked); a passing row whose calls were
    not bitwise equal says so, with the size of the difference ("deterministic up to rounding")."""
    ctx.jitter.clear()
    evidence = scan(ctx, "determinism", q_determinism, sized_cases(ctx, "determinism", scales=(1.0,)))
    jitter = ctx.jitter
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


def measure_quantity(ctx: Ctx, check: str, q: Quantity, params: Params, dtype: str) -> Measure:
    """The quantity ``q`` of ``check`` (a test ratio) at ``params`` in ``dtype``: the routine the scan
    measured every case with. It fails as in the scan: a ratio above 30 (NaN: not measured)."""
    c = q(ctx, params, dtype)
    failing = fails(c.ratio) and not math.isnan(c.ratio)
    r50 = _against_50_digits(ctx, params, dtype) if check == "forward" and failing else None
    more = [("against the 50-digit reference", f"ratio {r50:.6g}")] if r50 is not None else []
    return remeasured(failing, c.display, c.ratio, more, measured=not c.not_run)


def _against_50_digits(ctx: Ctx, params: Params, dtype: str) -> float | None:
    """The ratio of the target's output against the kind's reference at 50 digits, so that a
    forward counterexample never rests on the float64 reference's rounding (None: no reference,
    or the call failed)."""
    kind = ctx.target.kind
    out = ctx.run(params, dtype) if kind.reference is not None else None
    if not isinstance(out, torch.Tensor):
        return None
    ref = reference_np(kind, rounded(params, dtype), 50)
    return agreement(F64, as_np(out), ref, ref.shape[-1], _kappa(kind, params), computed_in=dtype).ratio


# ------------------------------------------------------------------------------ scans
SCALED_CHECKS = frozenset({"orthogonal", "forward", "float32", "batch", "devices"})
"""Checks whose ratios are divided by the kind's allowance (``Kind.condition``, stated in ``Kind.allowance``)."""
SHRINKABLE = frozenset({"orthogonal", "forward", "float32", "devices"})
"""Checks whose quantity depends on the case's parameters alone, so a failure can be shrunk."""


Labelled = tuple[Params, str, str]
"""A case: parameters, the dtype, and a label ("" for a random draw, else the special point's name)."""


def shrink(
    ctx: Ctx, q: Callable[[Ctx, Params, str], Measure], params: Params, dtype: str, c: Measure, budget: int = 30
) -> tuple[Params, Measure, list[str]]:
    """A smaller failing case near ``params`` by the engine's :func:`~orthoverify.engine.magnitudes.shrink`
    over the kind's scaled parameters: fewer rows first (three fresh draws of each smaller size at
    the same magnitude), never a case outside the target's declared domain. Returns the case, its
    measurement and the steps taken."""
    kind = ctx.target.kind
    rng = ctx.rng("shrink", dtype)
    m = magnitude(kind, params)

    def draws(n: int) -> Iterator[Params]:
        for _ in range(3):
            yield kind.draw(rng, n, max(m, 1e-300) / 2.5)

    def measure(p: Params) -> Measure | None:
        return None if ctx.outside(p) is not None else q(ctx, p, dtype)

    smaller = [(f"size {n}", draws(n)) for n in kind.sizes if n < _size(kind, params)]
    found, got, steps = magnitudes.shrink(params, c, measure, _failing, kind.scaled, smaller=smaller, budget=budget)
    return dict(found), got, steps


def _failing(m: Measure) -> bool:
    return fails(m.ratio) and not math.isnan(m.ratio)


def attribute(ctx: Ctx, check: str, params: Params, dtype: str) -> str:
    """Which computation is off, where a finding compares two: each is judged against the
    reference (or, for a kind without one, against orthogonality), and the note says which fails."""
    kind = ctx.target.kind
    if check != "orthogonal" or len(next(iter(params.values())).shape) < 1:
        return ""
    dt = DTYPES[dtype]
    kappa = _kappa(kind, params)
    stacked = [torch.stack([a, a]) for a in kind.args(params, dt, "cpu")]
    res = ctx.remote(op_forward, *stacked)
    out = res if isinstance(res, CallFailure) else checked(res[0] if res else None, shape=(2, *kind.out_shape(params)))
    if isinstance(out, CallFailure):
        return ""
    r_b = orthogonality(F64, as_np(kind.view(out)[0]), computed_in=dtype).ratio / kappa
    if not fails(r_b):
        return (
            f" The same parameters in a batch of two give an orthogonal output (ratio {r_b:.3g}): the single "
            "(unbatched) call is the inaccurate one."
        )
    return f" Batched, the same parameters fail too (ratio {r_b:.3g}): the map itself, not one code path."


def scanner(ctx: Ctx, check: str, q: Quantity, minimise: bool | None = None) -> scans.Scan[Params]:
    """The engine's :class:`~orthoverify.engine.scan.Scan` of ``check`` over ``ctx``'s target: its
    quantity ``q``, the kind's magnitude, size, ordinary domain and allowance; a dtype whose ``output``
    check failed (float64's too, for ``float32``) is not run, a case outside the target's declared
    domain skipped; the telling failure is shrunk where ``minimise`` (default: the check is
    :data:`SHRINKABLE`), a forward one re-measured against the 50-digit reference, and an
    orthogonality failure attributed to a code path."""
    kind = ctx.target.kind
    lo, hi = kind.ordinary

    def recheck(params: Params, dtype: str) -> str:
        r50 = _against_50_digits(ctx, params, dtype)
        return f"; against the 50-digit reference: ratio {r50:.6g}" if r50 is not None else ""

    shrinkable = check in SHRINKABLE if minimise is None else minimise
    return scans.Scan(
        check=check,
        measure=lambda params, dtype: q(ctx, params, dtype),
        backend=ctx.label,
        magnitude=lambda params: magnitude(kind, params),
        size=lambda params: _size(kind, params),
        extreme=lambda params: extreme(kind, params),
        where=lambda params: _where(kind, params),
        inputs=inputs_of,
        domain=f"max|x_ij| of {', '.join(kind.scaled)} zero or in [{lo:g}, {hi:g}]",
        blocked=lambda dtype: output_failed(ctx, dtype, *(("float64",) if check == "float32" else ())),
        outside=lambda params: ctx.outside(params) is not None,
        allowance=kind.allowance if check in SCALED_CHECKS else None,
        shrink=(lambda params, dtype, c: shrink(ctx, q, params, dtype, c)) if shrinkable else None,
        recheck=recheck if check == "forward" else None,
        cause=lambda params, dtype: attribute(ctx, check, params, dtype),
    )


def scan(
    ctx: Ctx,
    check: str,
    q: Quantity,
    cases: Iterator[tuple[Params, str]] | Iterator[Labelled],
    method: str = "float",
    note: str = "",
    *,
    minimise: bool | None = None,
) -> list[Evidence]:
    """Evidence per dtype from the quantity ``q`` of ``check`` over ``cases`` (the engine's
    :func:`~orthoverify.engine.scan.scan` with :func:`scanner`): of the failures of a dtype the
    telling one (ordinary magnitude, smallest size) is shrunk (``minimise``) and becomes the
    counterexample; a failure of another kind (far larger or smaller magnitude) is kept in
    ``data['other_counterexamples']``. Cases of a dtype whose ``output`` check failed are not run;
    so are cases whose call was never made (the target's process gave up): evidence without a
    verdict, never a pass."""
    return scans.scan(scanner(ctx, check, q, minimise), cases, method, note)


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


def scanned(check: str, q: Quantity, series: str = "", salt: str = "", **kw: Any) -> Callable[[Ctx], list[Evidence]]:
    """A check that scans its quantity ``q`` over sized cases (``kw``: :func:`sized_cases`'s, drawn
    with ``salt``, default the check's name), with its recorded series (:func:`with_series`, the
    mode it exercises in words) when ``series`` says what it exercises."""

    def run(ctx: Ctx) -> list[Evidence]:
        evidence = scan(ctx, check, q, sized_cases(ctx, salt or check, **kw))
        return with_series(ctx, check, q, evidence, series) if series else evidence

    return run


def outward(ctx: Ctx, dtype: str, salt: str) -> Iterator[Labelled]:
    """Random draws from ordinary magnitudes outwards (10^0, 10^-1, 10^1, 10^-2, ...), every size
    at each, ``ctx.profile.validate_examples`` in all, seeded."""
    kind = ctx.target.kind
    top = ctx.profile.search_decades
    if dtype == "float32":
        top = min(top, 6)
    rng = ctx.rng(salt, dtype)
    for params in magnitudes.draws(kind.draw, kind.sizes, top, ctx.profile.validate_examples, rng):
        yield params, dtype, ""


def search_orthogonal(ctx: Ctx) -> list[Evidence]:
    """The special points of the kind first (deterministic), then seeded random draws from ordinary
    magnitudes outwards; the telling failure per dtype is shrunk to the smallest size and
    magnitude that still fails."""
    out: list[Evidence] = []
    for dtype in ctx.dtypes:
        specials = [(p, dtype, name) for name, p in ctx.target.kind.specials(dtype)]
        cases = [*specials, *outward(ctx, dtype, "orthogonal")]
        out += scan(
            ctx,
            "orthogonal",
            q_orthogonal,
            iter(cases),
            method="search",
            note=f"{len(specials)} special points, then {len(cases) - len(specials)} draws from magnitude 1 outwards.",
        )
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
            for name, p in kind.specials(dtype):
                if p and next(iter(p.values())).shape[0] in (*kind.sizes, 1):
                    yield p, dtype, name
        rng = ctx.rng(salt, dtype)
        for n in kind.sizes:
            for s in scales:
                yield kind.draw(rng, n, s), dtype, ""
