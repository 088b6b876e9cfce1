"""Scans, searches and shrinking: the quantity of a check over a stream of cases, per dtype; the
telling failure is shrunk and recorded as the counterexample (confirmed by the engine).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from orthoverify.conformance.calls import CallFailure, checked
from orthoverify.conformance.context import (
    DTYPES,
    F64,
    Ctx,
    _kappa,
    _size,
    _where,
    as_np,
    extreme,
    inputs_of,
    magnitude,
    reference_np,
    remeasured,
    rounded,
)
from orthoverify.conformance.gradients import q_gradient, q_jvp
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.conformance.quantities import q_batch, q_determinism, q_devices, q_float32, q_forward, q_orthogonal
from orthoverify.conformance.wire import op_forward
from orthoverify.engine import magnitudes
from orthoverify.engine.magnitudes import distance_from_one
from orthoverify.engine.model import Counterexample, Evidence
from orthoverify.engine.ratios import THRESHOLD, Measure, agreement, fails, orthogonality


def check_determinism(ctx: Ctx) -> list[Evidence]:
    """Repeated calls agree (to the allowance, or bitwise when asked); a passing row whose calls were
    not bitwise equal says so, with the size of the difference ("deterministic up to rounding")."""
    ctx.jitter.clear()
    evidence = scan(ctx, "determinism", sized_cases(ctx, "determinism", scales=(1.0,)))
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


QUANTITIES: dict[str, Callable[[Ctx, Params, str], Measure]] = {
    "orthogonal": q_orthogonal,
    "forward": q_forward,
    "float32": q_float32,
    "determinism": q_determinism,
    "batch": q_batch,
    "gradient": q_gradient,
    "jvp": q_jvp,
    "devices": q_devices,
}


def measure_quantity(ctx: Ctx, check: str, params: Params, dtype: str) -> Measure:
    """The quantity of ``check`` (a test ratio) at ``params`` in ``dtype``: the routine the scan
    measured every case with. It fails as in the scan: a ratio above 30 (NaN: not measured)."""
    c = QUANTITIES[check](ctx, params, dtype)
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


def _order(kind: Kind, params: Params) -> tuple[float, float]:
    """The telling counterexample is the one of ordinary magnitude (closest to 1 in log scale, the
    smaller first) and smallest size."""
    m = magnitude(kind, params)
    return (round(distance_from_one(m)), _size(kind, params) + m * 1e-300)


def _telling(kind: Kind, fail: tuple[Params, Measure, str]) -> tuple[int, float, int, float]:
    """Sort key of failures: inside the ordinary domain first, then ordinary magnitude (closest to 1),
    a random draw before a special point of the same magnitude (a special point's name would
    suggest a cause it may not have), then size."""
    dist, size = _order(kind, fail[0])
    return (int(extreme(kind, fail[0])), dist, int(bool(fail[2])), size)


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


@dataclass
class _Tally:
    """What a scan saw in one dtype: the measured cases and everything it did not judge."""

    cases: int = 0
    worst: float = 0.0
    seconds: float = 0.0
    fails: list[tuple[Params, Measure, str]] = field(default_factory=list)
    points: list[tuple[float, int, float]] = field(default_factory=list)
    skipped: int = 0
    beyond: int = 0
    declined: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    nan: str | None = None

    def add(self, ctx: Ctx, check: str, q: Callable[[Ctx, Params, str], Measure], case: Labelled) -> None:
        """Measure one case (or say why it is not judged)."""
        params, dtype, label = case
        kind = ctx.target.kind
        needs = [d for d in ctx.failed_output if d == dtype or (check == "float32" and d == "float64")]
        if needs:
            self.not_run.append(f"the output check failed in {needs[0]} ({ctx.failed_output[needs[0]]})")
            return
        if ctx.outside(params) is not None:
            self.skipped += 1
            return
        t0 = time.perf_counter()
        c = q(ctx, params, dtype)
        self.seconds += time.perf_counter() - t0
        if c.not_run:
            self.not_run.append(c.display)
        elif c.beyond:
            self.beyond += 1
        elif label and c.raised:  # an exception at an edge case is an honest refusal, not a wrong answer
            self.declined.append(label)
        elif c.unsupported:  # the target declined the mode with an exception: a refusal, not a wrong number
            self.unsupported.append(c.unsupported)
        elif math.isnan(c.ratio):  # the check does not apply to this target (say, no batched calls)
            self.nan = c.display
        else:
            self.cases += 1
            self.points.append((magnitude(kind, params), _size(kind, params), c.ratio))
            if fails(c.ratio, self.worst):
                self.worst = c.ratio
            if fails(c.ratio):
                self.fails.append((params, c, label))

    def evidence(self, ctx: Ctx, check: str, dtype: str, method: str, note: str) -> Evidence:
        """The evidence row of this dtype (its counterexample not yet recorded)."""
        kind = ctx.target.kind
        measured = self.cases > 0
        notes = [note]
        if self.unsupported:
            notes.append(
                f"Unsupported: the target raised at {len(self.unsupported)} of {len(self.unsupported) + self.cases} "
                f"cases ({self.unsupported[0]}): a refusal, not a wrong number."
            )
        if check in SCALED_CHECKS:
            notes.append(f"Errors divided by the allowance {kind.allowance}.")
        if self.skipped:
            notes.append(f"{self.skipped} cases outside the target's declared domain were skipped.")
        if self.beyond:
            notes.append(
                f"{self.beyond} cases where the allowance promises no digit (30 n eps kappa >= 1) were not judged."
            )
        if self.declined:
            notes.append(
                f"The target raised (declined) at {len(self.declined)} special points, e.g. '{self.declined[0]}': "
                "no defect."
            )
        inapplicable = not measured and self.nan is not None and not self.not_run and not self.unsupported
        if inapplicable:
            notes.append(f"Not applicable (nothing was measured, so no verdict): {self.nan}")
        if self.not_run:
            notes.append(f"Not run: {len(self.not_run)} cases ({self.not_run[0]}); no verdict from them.")
        ev = Evidence(
            claim="",
            check=check,
            method=method,  # type: ignore[arg-type]
            backend=ctx.label(dtype),
            cases=self.cases,
            worst_ratio=self.worst if measured or not (self.unsupported or inapplicable or self.not_run) else None,
            threshold=THRESHOLD,
            seconds=self.seconds,
            passed=not self.fails and not self.not_run and not self.unsupported and measured,
            notes=" ".join(n.strip() for n in notes if n.strip()),
        )
        if self.unsupported:
            ev.data["unsupported"] = self.unsupported[0]
        if self.points:
            ev.data["series"] = size_series(self.points)
        if check in SCALED_CHECKS:
            ev.data["allowance"] = kind.allowance
        if self.not_run:
            ev.data["not_run"] = len(self.not_run)
        return ev


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
    by_dtype: dict[str, _Tally] = {}
    for case in cases:
        params, dtype = case[0], case[1]
        label = str(case[2]) if len(case) > 2 else ""
        by_dtype.setdefault(dtype, _Tally()).add(ctx, check, q, (params, dtype, label))
    out = []
    for dtype, tally in by_dtype.items():
        ev = tally.evidence(ctx, check, dtype, method, note)
        if tally.fails:
            shrinkable = check in SHRINKABLE if minimise is None else minimise
            _counterexample(ctx, check, q, dtype, tally.fails, ev, shrinkable)
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
    q: Callable[[Ctx, Params, str], Measure],
    dtype: str,
    fails: list[tuple[Params, Measure, str]],
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
    r50 = _against_50_digits(ctx, params, dtype) if confirmed and check == "forward" else None
    confirm = f"; against the 50-digit reference: ratio {r50:.6g}" if r50 is not None else ""
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
