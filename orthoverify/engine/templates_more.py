"""Templates beyond :mod:`orthoverify.engine.templates` (which holds the shared vocabulary and is at
its size limit): what several claim files wrote out by hand, declared once.

* :func:`recorded_lines` and :func:`recorded_values`: a figure's series read from what the checks
  recorded (``Evidence.data``), so that a claim declares which records it draws, not the loop.
* :func:`guarded`: a measure whose formulation may raise a domain error (a singular solve) turned
  into an infinite ratio naming it, so that the failure is judged, replayed and confirmed like any
  other.
* :func:`full_rank`: a map's Jacobian has the stated rank at random points, exactly (SymPy) or
  with a singular-value gap (torch float64): parameter counts, every parameter trainable or which
  are redundant.
* :func:`sizes_between`: a check's sizes as a range of the profile's, declared.
* :func:`least_cpu_times`, :func:`growth_slopes`: the timing discipline of a measured complexity
  claim (least CPU time, round robin) and its log-log slopes along each axis, written once.
* :func:`symbolic_identities`: identities in free symbols at each of the profile's symbolic sizes,
  the loop over sizes and the exact backend owned by the engine, the claim writing one size's
  identities.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, TypeVar

import numpy as np
import sympy

from orthoverify.backends import Backend, get_backend
from orthoverify.backends.base import Method
from orthoverify.engine.checks import Case, FunctionCheck, Identity, Outcome, RunContext, SymbolicCheck
from orthoverify.engine.model import Evidence, PlotSeries
from orthoverify.engine.ratios import Measure
from orthoverify.engine.templates import jacobian_rank

Series = Callable[[Sequence[Evidence]], list[PlotSeries]]
"""What a :class:`~orthoverify.engine.model.Plot` reads its series with."""


def recorded_lines(x: str, lines: Mapping[str, str], *, dashed: tuple[str, ...] = ()) -> Series:
    """A line figure's series: for every evidence row that recorded ``x`` and each key of
    ``lines`` (one list per key, point by point), one line per key, labelled ``"<label>, <backend>"``
    (the keys in ``dashed`` dashed)."""

    def series(evidence: Sequence[Evidence]) -> list[PlotSeries]:
        runs = [(ev.backend, ev.data) for ev in evidence if {x, *lines} <= set(ev.data)]
        return [
            PlotSeries(f"{label}, {backend}", data[x], data[key], dashed=key in dashed)
            for backend, data in runs
            for key, label in lines.items()
        ]

    return series


def recorded_values(stat_by_backend: Mapping[str, str]) -> Series:
    """A histogram's series: per evidence row on a backend of ``stat_by_backend``, the values of that
    backend's statistic the check recorded per case (``data["stats"][stat]``, pairs (n, value)),
    labelled ``"<stat>: <check> [<backend>]"``. A search's rows are left out: the cases a
    Hypothesis search visits are steered, not a sample."""

    def series(evidence: Sequence[Evidence]) -> list[PlotSeries]:
        out = []
        for ev in evidence:
            key = stat_by_backend.get(ev.backend)
            values = (ev.data.get("stats") or {}).get(key) if key is not None else None
            if values and ev.method != "search":
                out.append(PlotSeries(f"{key}: {ev.check} [{ev.backend}]", y=[v for _n, v in values]))
        return out

    return series


Measured = Callable[[Backend, Case], Measure]


def guarded(errors: type[Exception] | tuple[type[Exception], ...], text: str) -> Callable[[Measured], Measured]:
    """Decorate a measure: when it raises one of ``errors`` (a singular solve where the statement
    says there is none), the case measures infinite, valued ``text``, exactly as a wrong result."""

    def wrap(measure: Measured) -> Measured:
        @functools.wraps(measure)
        def guarded_measure(b: Backend, case: Case) -> Measure:
            try:
                return measure(b, case)
            except errors:
                return Measure(math.inf, text, error=math.inf)

        return guarded_measure

    return wrap


Point = Callable[[Backend, np.random.Generator, int], tuple[Callable[[Any], Any], Any]]
"""A map and a random point to take its Jacobian at, for size n, drawn from the check's generator."""


def full_rank(
    name: str,
    sizes: Callable[[RunContext], Iterable[int]],
    point: Point,
    rank: Callable[[int], int],
    quantity_name: str,
    backends: tuple[str, ...] = ("torch-float64",),
) -> FunctionCheck:
    """The rank of a map's Jacobian at one random point per size n is ``rank(n)``. In exact
    arithmetic (SymPy: the map of free symbols, differentiated, then evaluated at the point) the
    rank is exact; in floating point (torch autograd, :func:`~orthoverify.engine.templates.jacobian_rank`)
    it comes with a gap: the ``rank(n)``-th singular value more than 100 times the tolerance, so that
    no singular value sits near the decision (the smallest such margin is ``data["min_margin"]``)."""

    def run(ctx: RunContext) -> Outcome:
        rng, b = ctx.rng(), ctx.backend
        ok, notes, margins = True, [], []
        for n in sizes(ctx):
            f, x = point(b, rng, n)
            r = rank(n)
            if b.exact:
                got = _exact_rank(f, x)
                notes.append(f"n={n}: rank {got} (expected {r}) of {len(x)} parameters, exactly")
                ok = ok and got == r
                continue
            got, s, tol = jacobian_rank(b, f, x)
            margin = s[r - 1] / tol if r >= 1 else math.inf
            margins.append(margin)
            notes.append(f"n={n}: rank {got} (expected {r}), s_r = {s[r - 1]:.2e} = {margin:.2e} tol")
            ok = ok and got == r and margin > 100
        data = {"min_margin": min(margins)} if margins else {}
        return Outcome(ok, len(notes), notes="; ".join(notes), data=data)

    method: Method = "symbolic" if all(get_backend(k).exact for k in backends) else "float"
    return FunctionCheck(name, run, backends, method, quantity_name, threshold=None)


def _exact_rank(f: Callable[[Any], Any], x: Any) -> int:
    """The exact rank of f's Jacobian at x: f of free real symbols, differentiated, evaluated at x."""
    syms = sympy.symbols(f"x0:{len(x)}", real=True)
    flat = sympy.Matrix([sympy.together(v) for v in f(np.array(syms, dtype=object))])
    return int(flat.jacobian(syms).subs(dict(zip(syms, x, strict=True))).rank())


K = TypeVar("K")


def least_cpu_times(
    jobs: Mapping[K, Callable[[], object]], repeats: int, clock: Callable[[], float] = time.process_time
) -> dict[K, float]:
    """Each job's time by ``clock`` (this process's CPU time, which other processes' load does not
    inflate), the least over ``repeats`` rounds, each round running every job once in turn (round
    robin), so that what load remains (caches, memory bandwidth) hits every job alike."""
    best = dict.fromkeys(jobs, math.inf)
    for _ in range(repeats):
        for key, job in jobs.items():
            t0 = clock()
            job()
            best[key] = min(best[key], clock() - t0)
    return best


def growth_slopes(
    base: Mapping[str, int],
    axes: Mapping[str, Sequence[int]],
    job: Callable[..., Callable[[], object]],
    repeats: int,
    clock: Callable[[], float] = time.process_time,
) -> tuple[dict[str, float], dict[tuple[int, ...], float]]:
    """A measured complexity: ``job(*point)`` (a point's sizes in ``base``'s order; it sets the
    work up and returns the call to time) at the base point with one axis varied at a time, timed
    by :func:`least_cpu_times` (points set up and timed in sorted order), and per axis the slope of
    log time against log size: 1 for linear growth, 2 for quadratic. Returns (slopes, each point's
    time)."""
    along = {a: [tuple((dict(base) | {a: x}).values()) for x in xs] for a, xs in axes.items()}
    jobs = {p: job(*p) for p in sorted({p for ps in along.values() for p in ps})}
    best = least_cpu_times(jobs, repeats, clock)
    slopes = {a: float(np.polyfit(np.log(axes[a]), np.log([best[p] for p in ps]), 1)[0]) for a, ps in along.items()}
    return slopes, best


SizeList = Literal["sizes", "hp_sizes", "exact_sizes", "symbolic_sizes"]


def sizes_between(low: int, high: float = math.inf, of: SizeList | None = None) -> Callable[[RunContext], list[int]]:
    """The profile's sizes n with low <= n <= high: of the list ``of`` names, or (None) of the
    check's arithmetic (:meth:`~orthoverify.engine.profiles.Profile.sizes_on`), so that a claim
    declares the range its check affords, not the loop that filters it."""

    def sizes(ctx: RunContext) -> list[int]:
        every = ctx.profile.sizes_on(ctx.backend) if of is None else getattr(ctx.profile, of)
        return [n for n in every if low <= n <= high]

    return sizes


SizeIdentities = Callable[[Backend, int], Iterable[Identity]]
"""One size's identities on SymPy's exact backend: (label, expression that must vanish) each."""


def symbolic_identities(
    name: str,
    identities: SizeIdentities,
    *,
    size: str = "n",
    sizes: Callable[[RunContext], Sequence[int]] = lambda ctx: ctx.profile.symbolic_sizes,
    quantity_name: str = "exact difference",
) -> SymbolicCheck:
    """A :class:`~orthoverify.engine.checks.SymbolicCheck` of ``identities(b, n)`` for each n of
    ``sizes`` (the profile's symbolic sizes by default), each label prefixed ``"{size}={n}: "``
    so that a failure names the size it was found at."""

    def build(ctx: RunContext) -> Iterator[Identity]:
        b = get_backend("sympy")
        for n in sizes(ctx):
            for label, expr in identities(b, n):
                yield f"{size}={n}: {label}", expr

    return SymbolicCheck(name, build, quantity_name)
