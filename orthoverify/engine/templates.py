"""Claim templates: the few kinds of evidence most claims need, written once.

A claim file states what is true and supplies its cases; a template turns that into checks
built from the engine's check classes (:mod:`orthoverify.engine.checks`). As in LAPACK's
TESTING/LIN, a claim's routine only *measures* (returns a :class:`~orthoverify.engine.ratios.Measure`,
a test ratio or an exact yes/no); the check (the driver) compares the measure with the threshold,
confirms a failure at high precision, and replays a recorded counterexample through the very
same measure.

* :class:`Agreement`: two formulations of one object (a definition and a fast form, a paper's
  listing and its algorithm) agree, symbolically, exactly, in floating point and under search;
  :func:`identities` declares a list of symbolic identities (label, left, right) as one.
* :class:`Gradient`: a gradient formula against its independent references: SymPy's exact
  derivative, central differences at 50 digits, torch autograd (and a search over autograd);
  :class:`Derivative` derives those references from the formula and the loss it differentiates
  (and judges a forward value the formula also returns against its definition).
* :func:`count`: stated counts (parameters, flops) against counted ones, exhaustively over a grid,
  under one accounting convention or the best of several.
* :func:`audit`: a transcribed proof, line by line, against the exact truth.
* :func:`witness`: candidates (enumerated or searched by Hypothesis) and a violation measure that
  is both the test and the replay.
* :func:`printed_and_corrected`: a printed claim and its ``.corrected`` twin, declared together.

Bespoke procedures (timings, drift experiments) stay :class:`~orthoverify.engine.checks.FunctionCheck`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from hypothesis import strategies as st

from orthoverify import samples
from orthoverify.backends import Array, Backend, get_backend
from orthoverify.backends.base import Method
from orthoverify.engine.checks import (
    Case,
    Check,
    Confirm,
    FunctionCheck,
    Identity,
    Outcome,
    PropertyCheck,
    Quantity,
    RunContext,
    SearchCheck,
    SymbolicCheck,
)
from orthoverify.engine.model import Claim, Kind, Origin, Place, Verdict
from orthoverify.engine.ratios import THRESHOLD, Measure, agreement, residual, scaled, worst
from orthoverify.engine.reference import central_gradient, exact_gradient, fd_eps

Cases = Callable[[RunContext], Iterable[Case]]
"""The cases of a check, generated from its run context (profile sizes, seeded generator)."""
Strategy = Callable[[RunContext], Any]
"""A Hypothesis strategy of cases, built from the run context."""
Formulation = Callable[[Backend, Case], "Array | tuple[Array, ...]"]
"""One way of computing an object (or a tuple of objects) from a case on a backend."""

HP_REFERENCE = ("mpmath", "numpy-float64", "numpy-float32")
"""Where a 50-digit reference check runs: on mpmath itself, and on the float inputs it re-examines."""
TORCH = ("torch-float32", "torch-float64")
EXACT = ("sympy",)
SEARCH = ("numpy-float64", "numpy-float32")


# ---------------------------------------------------------------------------- agreement
@dataclass(frozen=True)
class Agreement:
    """Two formulations of the same object must agree: ``||left - right||_F / (n eps ||right||_F)``
    per object (the worst over a tuple of objects), with n the first dimension of ``left``'s
    first object; exactly zero in exact and symbolic arithmetic. ``condition``, when given, is
    the case's conditioning factor (LAPACK-style: how much the formulations amplify rounding,
    e.g. cond(I + A) for a solve), by which the float ratio is divided."""

    left: Formulation
    right: Formulation
    quantity_name: str
    condition: Callable[[Backend, Case], float] | None = None
    dim: Callable[[Case], int] | None = None
    """The ratio's dimension factor n when it is not ``left``'s first dimension (e.g. 2nT for T
    unrolled steps of a 2n-state, or n for a complex n-vector carried as 2n reals)."""

    def measure(self, b: Backend, case: Case) -> Measure:
        """The test ratio of one case (the check's quantity, and its replay)."""
        xs, refs = _objects(self.left(b, case)), _objects(self.right(b, case))
        if len(xs) != len(refs):
            return Measure(math.inf, f"{len(xs)} objects against {len(refs)}")
        n = self.dim(case) if self.dim is not None else int(xs[0].shape[0]) if xs[0].ndim else 1
        cond = 1.0 if self.condition is None or b.exact else self.condition(b, case)
        return worst(*(agreement(b, x, r, n, cond) for x, r in zip(xs, refs, strict=True)))

    def symbolic(self, name: str, cases: Cases) -> SymbolicCheck:
        """Symbolic cases (free SymPy symbols): ``left - right`` must vanish identically. Each
        case carries a ``label`` naming the identity."""

        def build(ctx: RunContext) -> Iterator[Identity]:
            b = get_backend("sympy")
            for case in cases(ctx):
                for x, r in zip(_objects(self.left(b, case)), _objects(self.right(b, case)), strict=True):
                    yield str(case["label"]), x - r

        return SymbolicCheck(name, build)

    def check(
        self,
        name: str,
        cases: Cases,
        backends: tuple[str, ...],
        *,
        method: Method | None = None,
        confirm: Confirm = "value",
    ) -> PropertyCheck:
        """The ratio over generated cases (exact cases on SymPy give exact differences)."""
        return PropertyCheck(name, self.measure, cases, backends, self.quantity_name, method=method, confirm=confirm)

    def search(self, name: str, strategy: Strategy, backends: tuple[str, ...] = SEARCH) -> SearchCheck:
        """Hypothesis hunting for the case that maximises the ratio."""
        return SearchCheck(name, self.measure, strategy, backends, self.quantity_name)


Sides = Callable[[int], Sequence[tuple[str, Any, Any]]]
"""A claim's identities for size n in free symbols: (label, left side, right side) each."""


def identities(sides: Sides) -> tuple[Agreement, Cases]:
    """Symbolic identities as an Agreement of each one's two sides, with its cases (one per
    identity and profile symbolic size, labelled): for identities that share one costly
    construction (a symbolic inverse, a determinant), built once per n for both sides."""
    cached = functools.lru_cache(maxsize=4)(sides)

    def left(b: Backend, case: Case) -> Any:
        return cached(int(case["n"]))[int(case["k"])][1]

    def right(b: Backend, case: Case) -> Any:
        return cached(int(case["n"]))[int(case["k"])][2]

    def cases(ctx: RunContext) -> Iterator[Case]:
        for n in ctx.profile.symbolic_sizes:
            for k, (label, _, _) in enumerate(cached(n)):
                yield {"label": label, "n": n, "k": k}

    return Agreement(left, right, "exact difference"), cases


# ---------------------------------------------------------------------------- inputs
def sampled(
    sizes: Callable[[RunContext], Iterable[Any]],
    sample: Callable[[np.random.Generator, Any], Case],
    *,
    per_size: Callable[[RunContext], int] = lambda ctx: ctx.profile.cases,
) -> Cases:
    """An input declaration the engine expands, as LAPACK's driver owns its grid: for each size
    (or shape) of ``sizes``, ``per_size`` cases (the profile's ``cases`` by default), each drawn by
    ``sample(rng, size)`` from the check's one seeded generator, in that order."""

    def cases(ctx: RunContext) -> Iterator[Case]:
        rng = ctx.rng()
        for size in sizes(ctx):
            for _ in range(per_size(ctx)):
                yield sample(rng, size)

    return cases


def float_sizes(ctx: RunContext) -> Sequence[int]:
    """The profile's sizes for the check's arithmetic (float or high precision)."""
    return ctx.profile.sizes_on(ctx.backend)


def exact_sizes(ctx: RunContext) -> Sequence[int]:
    """The profile's sizes for exact arithmetic."""
    return ctx.profile.exact_sizes


def _objects(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, tuple) else (x,)


# ---------------------------------------------------------------------------- gradient
Inputs = Mapping[str, Any]
"""A case's inputs on a backend, by name (arrays, and whatever else the loss needs)."""


def _default_step_scale(b: Backend, x: Inputs, key: str) -> Array | None:
    return None


@dataclass(frozen=True)
class Derivative:
    """A gradient formula and the loss it is the gradient of: from these two the references are
    derived, so that a gradient claim states its formula and its loss, not its references.

    Each reference differentiates ``loss`` with respect to every input ``formula`` gives a
    gradient for: :meth:`exact` (SymPy's exact derivative at rational points),
    :meth:`finite_differences` (fourth-order central differences at 50 digits on the float
    inputs), :meth:`autograd` (torch autograd; on other backends central differences in the
    backend's own precision, which is how a torch failure is re-examined); :meth:`against`
    compares with closed forms in the same arithmetic and :meth:`identities` gives the symbolic
    reference. A routine that also returns a forward value (Algorithm 1's C = W h, a torch
    Function's forward) declares it in ``values`` by its definition, and each reference judges it
    beside the gradients. The float difference is scaled LAPACK-style by ``scale`` (the size of
    the terms the formula adds, not of its result) or, without one, relative to the reference:
    ``||formula - ref|| / (1 + ||ref||)``, for gradients with no cheaper bound and entries that may
    vanish. A parameter that is a list of vectors of different lengths is one input per vector
    (``u0``, ``u1``, ...)."""

    inputs: Callable[[Backend, Case], Inputs]
    loss: Callable[[Backend, Inputs], Any]
    """The loss by its definition: a scalar function of the inputs, independent of the formula."""
    formula: Callable[[Backend, Inputs], Mapping[str, Array]]
    """The stated gradients, keyed by the input each is the gradient with respect to (and the
    stated ``values``, keyed as those are)."""
    scale: Callable[[Backend, Inputs, str], float | Sequence[float]] | None = None
    """The size of the terms of the gradient with respect to an input; a sequence (one size per
    column) judges a matrix gradient column by column; None: 1 + ||reference||."""
    dim: Callable[[Inputs], int] = field(kw_only=True)
    """The ratio's dimension factor n."""
    step_scale: Callable[[Backend, Inputs, str], Array | None] = _default_step_scale
    """Per entry, the size over which the loss varies (see :func:`~orthoverify.engine.reference.central_gradient`)."""
    autograd_loss: Callable[[Backend, Inputs], Any] | None = None
    """The loss as torch autograd differentiates it, when written otherwise than ``loss`` (the
    same function: e.g. through the dense matrix, where ``loss`` applies its factors in turn,
    which 50-digit differences afford better)."""
    values: Mapping[str, Callable[[Backend, Inputs], Array]] = field(default_factory=dict, hash=False)
    """Outputs the formula returns besides gradients (a forward value), keyed as it returns them,
    by their definition: each one's reference, exactly and beside autograd in the backend's
    arithmetic, beside 50-digit differences at 50 digits on the backend's rounded inputs (unless
    ``values_in_backend``)."""
    value_scale: Callable[[Backend, Inputs], float] | None = None
    """The size of the terms of the values (``||h||`` for C = W h); None: as a gradient's."""
    values_in_backend: bool = False
    """Beside 50-digit differences, the values' definition in the backend's own arithmetic on its
    inputs (the same rounding as the formula's where both take the same steps), not at 50 digits."""

    def _with(self, b: Backend, x: Inputs, key: str) -> Callable[[Array], Any]:
        return lambda y: self.loss(b, {**x, key: y})

    def _values(self, b: Backend, x: Inputs) -> dict[str, Array]:
        return {k: definition(b, x) for k, definition in self.values.items()}

    def _sizes(self, r: Backend, x: Inputs, key: str, ref: Array) -> float | Sequence[float]:
        """The size of output ``key``'s terms (per column for a sequence), its reference ``ref``."""
        if key in self.values and self.value_scale is not None:
            return self.value_scale(r, x)
        return 1.0 + r.to_float(r.norm(ref)) if self.scale is None else self.scale(r, x, key)

    def _judged(self, r: Backend, x: Inputs, key: str, diff: Array, ref: Array, eps: float) -> list[Measure]:
        """``diff`` (computed in ``r``) over its scale, as test ratios in units of eps."""
        n, size = self.dim(x), self._sizes(r, x, key, ref)
        return [scaled(r.to_float(r.norm(d)) / s, n, eps) for d, s in _parts(diff, size)]

    def _residuals(self, b: Backend, x: Inputs, g: Mapping[str, Array], refs: Mapping[str, Array]) -> Measure:
        """Each output against its reference in b's arithmetic (LAPACK-style residuals)."""
        n, sizes = self.dim(x), {k: self._sizes(b, x, k, refs[k]) for k in g}
        return worst(*(residual(b, d, n, s) for k in g for d, s in _parts(g[k] - refs[k], sizes[k])))

    def identities(
        self, cases: Cases, names: Mapping[str, str] | None = None
    ) -> Callable[[RunContext], Iterator[Identity]]:
        """For :meth:`Gradient.symbolic`: per case (inputs in free SymPy symbols, named by its
        ``label``), the formula minus SymPy's derivative of the loss, each gradient an identity
        (labelled ``"<label>: <names[key]>"`` when ``names`` names the gradients)."""

        def build(ctx: RunContext) -> Iterator[Identity]:
            b = get_backend("sympy")
            for case in cases(ctx):
                x = self.inputs(b, case)
                g = self.formula(b, x)
                for k in (k for k in g if k not in self.values):
                    label = f"{case['label']}: {names[k]}" if names else str(case["label"])
                    yield label, g[k] - exact_gradient(self._with(b, x, k), x[k])

        return build

    def exact(self, b: Backend, case: Case) -> Measure:
        """The formula against SymPy's exact derivative of the loss (and the values against their
        definition); in floating point (an exact counterexample replayed in float64 and at 50
        digits) against 50-digit differences."""
        if not b.exact:
            return self.finite_differences(b, case)
        x = self.inputs(b, case)
        g, n, vals = self.formula(b, x), self.dim(x), self._values(b, x)
        refs = {k: vals[k] if k in vals else exact_gradient(self._with(b, x, k), x[k]) for k in g}
        return worst(*(residual(b, g[k] - refs[k], n) for k in g))

    def autograd(self, b: Backend, case: Case) -> Measure:
        """The formula against torch autograd through the loss (the values against their
        definition, in b's arithmetic)."""
        x = self.inputs(b, case)
        g = self.formula(b, x)
        if b.family != "torch":
            return self._against_differences(b, b, x, g)
        import torch

        refs = self._values(b, x)
        keys = [k for k in g if k not in refs]
        xs = {k: v.clone().requires_grad_(True) if k in keys else v for k, v in x.items()}
        loss = self.autograd_loss or self.loss
        refs |= dict(zip(keys, torch.autograd.grad(loss(b, xs), [xs[k] for k in keys]), strict=True))
        return self._residuals(b, x, g, refs)

    def finite_differences(self, b: Backend, case: Case) -> Measure:
        """The formula on ``b`` against central differences of the loss at 50 digits, on ``b``'s
        inputs (at ``b``'s own precision when it is high precision); in units of b's eps, or of the
        differences' accuracy when that is larger."""
        x = self.inputs(b, case)
        r = b if b.method == "high-precision" else get_backend("mpmath")
        return self._against_differences(b, r, x, self.formula(b, x))

    def _against_differences(self, b: Backend, r: Backend, x: Inputs, g: Mapping[str, Array]) -> Measure:
        xr = {k: r.asarray(b.to_strings(v)) if hasattr(v, "shape") else v for k, v in x.items()}
        eps = max(b.eps, fd_eps(r))
        if self.values_in_backend:
            vals = {k: r.asarray(b.to_strings(v)) for k, v in self._values(b, x).items()}
        else:
            vals = self._values(r, xr)
        errors = []
        for k in g:
            if k in vals:  # a definition, not a difference: in b's own arithmetic, in units of b's eps
                ref, unit = vals[k], (b.eps if r is b else eps)
            else:
                ref, unit = central_gradient(self._with(r, xr, k), xr[k], r, self.step_scale(r, xr, k)), eps
            errors += self._judged(r, xr, k, r.asarray(b.to_strings(g[k])) - ref, ref, unit)
        return worst(*errors)

    def against(self, closed_forms: Callable[[Backend, Inputs], Mapping[str, Array]]) -> Quantity:
        """A measure of the formula against another formulation of the same outputs (closed forms
        of the gradients, definitions of the values) in the same arithmetic, each output scaled as
        above."""

        def measure(b: Backend, case: Case) -> Measure:
            x = self.inputs(b, case)
            return self._residuals(b, x, self.formula(b, x), closed_forms(b, x))

        return measure


def _parts(diff: Array, scale: float | Sequence[float]) -> list[tuple[Array, float]]:
    """A difference and its scale, or its columns and theirs."""
    if not isinstance(scale, Sequence):
        return [(diff, float(scale))]
    return [(diff[:, j], float(s)) for j, s in enumerate(scale)]


@dataclass(frozen=True)
class Gradient:
    """A gradient formula against independent references, each a check of its own with a fixed
    name and arithmetic. Every quantity compares the formula with one reference and returns the
    test ratio; the claim lists the references it has, in the order it wants them reported."""

    quantity_name: str
    fd_note: str = ", reference: central differences at 50 digits, eps >= eps_fd = 10^-35"
    """Appended to the quantity's name for the finite-difference check (its reference's accuracy)."""

    def symbolic(
        self, build: Callable[[RunContext], Iterable[Identity]], name: str = "symbolic_derivative"
    ) -> SymbolicCheck:
        """SymPy's derivative of the loss with fully symbolic inputs minus the formula."""
        return SymbolicCheck(name, build)

    def exact(self, quantity: Quantity, cases: Cases, name: str = "exact_derivative") -> PropertyCheck:
        """The formula against SymPy's exact derivative at rational points."""
        return PropertyCheck(name, quantity, cases, EXACT, self.quantity_name)

    def finite_differences(
        self,
        quantity: Quantity,
        cases: Cases,
        name: str = "finite_differences",
        backends: tuple[str, ...] = HP_REFERENCE,
    ) -> PropertyCheck:
        """The formula (on mpmath and on the float inputs) against central differences of the
        definition at 50 digits."""
        return PropertyCheck(name, quantity, cases, backends, self.quantity_name + self.fd_note)

    def autograd(
        self,
        quantity: Quantity,
        cases: Cases,
        name: str = "autograd",
        note: str = "",
        backends: tuple[str, ...] = TORCH,
    ) -> PropertyCheck:
        """The formula against torch autograd through the definition."""
        return PropertyCheck(name, quantity, cases, backends, self.quantity_name + note)

    def search(self, quantity: Quantity, strategy: Strategy) -> SearchCheck:
        """Hypothesis hunting for the inputs where the formula and autograd disagree most."""
        return SearchCheck("search_autograd", quantity, strategy, ("torch-float64",), self.quantity_name)


# ---------------------------------------------------------------------------- count
Tally = tuple[str, int, int]
"""(what is counted, the stated number, the counted number)."""
Tallies = Callable[[Case], Sequence[Tally]]


def count(
    name: str,
    *,
    grid: Callable[[RunContext], Iterable[Case]],
    tally: Tallies | Mapping[str, Tallies],
    backends: tuple[str, ...],
    quantity_name: str,
    stated: str = "stated",
) -> FunctionCheck:
    """Stated against counted at every point of ``grid`` (exhaustive, exact integers).

    ``tally`` gives the (what, stated, counted) rows of one point; a mapping of named tallies
    (accounting conventions) means the statement holds when *one* convention reproduces every row
    at every point. A failure is the first point where every convention has a wrong row; the
    measure (the mismatching rows, ``stated`` naming the stated numbers) is also the replay."""
    accountings = dict(tally) if isinstance(tally, Mapping) else {"": tally}

    def wrong(t: Tallies, case: Case) -> list[str]:
        return [f"{what}: {stated} {s}, counted {c}" for what, s, c in t(case) if s != c]

    def measure(case: Case) -> Measure:
        bad = {key: wrong(t, case) for key, t in accountings.items()}
        if not all(bad.values()):
            return Measure(0.0, "holds", error=0.0)
        text = " || ".join(f"{k}: " + "; ".join(v) if k else "; ".join(v) for k, v in bad.items())
        return Measure(math.inf, text, error=math.inf)

    def run(ctx: RunContext) -> Outcome:
        points = list(grid(ctx))
        for key, t in accountings.items():
            if all(not wrong(t, case) for case in points):
                how = f" counting {key}" if key else ""
                return Outcome(True, len(points), notes=f"every {stated} count holds{how} at all {len(points)} points")
        witness = next((c for c in points if math.isinf(measure(c).ratio)), None)
        if witness is None:  # each accounting fails somewhere, but no one point refutes them all
            return Outcome(
                False,
                len(points),
                notes=f"no accounting reproduces every {stated} count, "
                "but no single point fails under every accounting: no counterexample to record",
            )
        return Outcome(
            False,
            len(points),
            failure=(witness, measure(witness)),
            notes=f"no accounting reproduces every {stated} count" if len(accountings) > 1 else "",
        )

    return FunctionCheck(
        name,
        run,
        backends,
        "exhaustive",
        quantity_name,
        threshold=None,
        replay_fn=lambda inputs, b: measure(inputs),
        exact=True,
    )


# ---------------------------------------------------------------------------- audit
Line = tuple[str, bool]
"""One transcribed line: its description (label, place, how it was judged, its text) and whether it holds."""


def audit(
    name: str,
    lines: Callable[[Backend, Case], Sequence[Line]],
    cases: Cases,
    *,
    quantity_name: str = "lines that are ill-typed or differ from the truth",
    method: Method | None = None,
) -> PropertyCheck:
    """A transcribed proof judged line by line in exact arithmetic: every line of every case must
    hold; the measure names the lines that do not (the counterexample's value). ``method``:
    ``"exhaustive"`` when the cases are every instance the proof covers."""

    def measure(b: Backend, case: Case) -> Measure:
        judged = lines(b, case)
        bad = [text for text, holds in judged if not holds]
        if not bad:
            return Measure(0.0, f"all {len(judged)} lines hold", error=0.0)
        return Measure(math.inf, " | ".join(bad), error=math.inf)

    return PropertyCheck(name, measure, cases, EXACT, quantity_name, method=method)


# ---------------------------------------------------------------------------- witness
def witness(
    name: str,
    violation: Quantity,
    *,
    backends: tuple[str, ...],
    quantity_name: str,
    candidates: Cases | None = None,
    strategy: Strategy | None = None,
    threshold: float = THRESHOLD,
    confirm: Confirm = "value",
    method: Method | None = "search",
) -> Check:
    """A search for a witness that breaks a claim: enumerated ``candidates`` (every one measured,
    the worst failure confirmed) or a Hypothesis ``strategy`` steered by the measure. The
    violation measure decides nothing itself: the check compares it with ``threshold``, and a
    recorded witness replays through the same measure. ``method`` names how enumerated
    candidates were found when they are all there are (``"exhaustive"``, or ``"symbolic"`` for
    exact roots), not a sample; ``None`` gives the backend's own method (float, high-precision,
    symbolic) for generated samples."""
    if (candidates is None) == (strategy is None):
        raise ValueError("a witness search needs candidates or a strategy (one of them)")
    if strategy is not None:
        return SearchCheck(name, violation, strategy, backends, quantity_name, threshold, confirm)
    assert candidates is not None
    return PropertyCheck(name, violation, candidates, backends, quantity_name, threshold, method, confirm)


# ---------------------------------------------------------------------------- printed and corrected
def printed_and_corrected(
    id: str,
    *,
    paper: str,
    place: Place,
    kind: Kind,
    printed: str,
    corrected: str,
    checks: Callable[[bool], tuple[Check, ...]],
    expected: Verdict,
    origin: Origin,
    summary: str,
    corrected_summary: str,
    corrected_expected: Verdict = "verified",
    notes: str = "",
    printed_notes: str = "",
    corrected_notes: str = "",
) -> list[Claim]:
    """A printed claim and its ``.corrected`` twin: the same place in the paper, the statement as
    printed and as repaired, and the same checks built for each (``checks(corrected)``); ``notes``
    are shared, the others appended to one of the two. Each declares its own expected verdict
    and summary; the twin's origin is ``"corrected"``."""

    def joined(extra: str) -> str:
        return " ".join(p for p in (notes, extra) if p)

    return [
        Claim(
            id=id,
            paper=paper,
            place=place,
            statement=printed,
            kind=kind,
            checks=checks(False),
            expected=expected,
            origin=origin,
            summary=summary,
            notes=joined(printed_notes),
        ),
        Claim(
            id=f"{id}.corrected",
            paper=paper,
            place=place,
            statement=corrected,
            kind=kind,
            checks=checks(True),
            expected=corrected_expected,
            origin="corrected",
            summary=corrected_summary,
            notes=joined(corrected_notes),
            corrects=id,
        ),
    ]


# --- claimsU ---------------------------------------------------------------- inputs, witnesses
Draw = Callable[[RunContext, np.random.Generator, Any], Iterable[Case]]
"""The cases of one size: ``draw(ctx, rng, size)`` draws them from the check's one generator."""


def inexact_sizes(ctx: RunContext) -> Sequence[int]:
    """The profile's sizes on a float or high-precision backend, none in exact arithmetic (for
    input families with no exact form)."""
    return () if ctx.backend.exact else ctx.profile.sizes_on(ctx.backend)


def drawn(draw: Draw, sizes: Callable[[RunContext], Iterable[Any]] = float_sizes) -> Cases:
    """An input declaration the engine expands, as :func:`sampled` does, for families that draw a
    varying number of cases per size (structured variants, interleaved extras): for each size of
    ``sizes`` (the profile's, by default), what ``draw`` yields, from the check's one seeded
    generator, in that order (:func:`repeated` with one draw per size)."""
    return repeated(sizes, draw, per_point=lambda ctx: 1)


def listed(*cases: Case) -> Cases:
    """Fixed cases (hand-built witnesses, a whole small domain), the same on every profile."""
    return lambda ctx: iter(cases)


def exact_witness(
    name: str, violation: Quantity, quantity_name: str, candidates: Cases, method: Method | None = None
) -> Check:
    """:func:`witness` over enumerated ``candidates`` judged exactly (SymPy): a listed
    counterexample or a whole domain (``method="exhaustive"``)."""
    return witness(name, violation, backends=EXACT, quantity_name=quantity_name, candidates=candidates, method=method)


T = TypeVar("T")


def per_profile(*, quick: T, default: T, thorough: T) -> Callable[[RunContext], T]:
    """A family's effort beyond the profile's sizes and cases, one named column per profile:
    ``effort = per_profile(quick=..., default=..., thorough=...)``, then ``effort(ctx)``."""
    return lambda ctx: ctx.profile.pick(quick, default, thorough)


def by_size(low: int, high: int, fields: Callable[[int], Mapping[str, Any]]) -> Strategy:
    """A Hypothesis strategy: a size n in [low, high], then a case of the named fields' strategies for n."""
    return lambda ctx: st.integers(low, high).flatmap(lambda n: st.fixed_dictionaries(fields(n)))


def by_shape(low: int, high: int, fields: Callable[[int, int], Mapping[str, Any]]) -> Strategy:
    """As :func:`by_size` for a shape (n, m): n in [low, high], then m in [1, n - 1]."""
    return lambda ctx: st.integers(low, high).flatmap(
        lambda n: st.integers(1, n - 1).flatmap(lambda m: st.fixed_dictionaries(fields(n, m)))
    )


def signed_permutations(key: str, up_to: Callable[[RunContext], int] = lambda ctx: 3) -> Cases:
    """Every signed permutation matrix of size 1..``up_to(ctx)`` as the case's ``key`` (exhaustive)."""
    return lambda ctx: ({key: p} for n in range(1, up_to(ctx) + 1) for p in samples.signed_permutations(n))


def bespoke(
    name: str, fn: Callable[[RunContext], Outcome], backends: tuple[str, ...], method: Method, quantity_name: str
) -> FunctionCheck:
    """A bespoke procedure (a timing, an experiment, a rank test) that decides by itself: its
    Outcome says whether it passed, and no ratio is compared with a threshold."""
    return FunctionCheck(name, fn, backends, method, quantity_name, threshold=None)


# --- claimsS ---
PointCases = Callable[[RunContext, np.random.Generator, Any], "Case | Iterable[Case]"]
"""Cases at one grid point, from the check's generator: one case, or several drawn together."""


def repeated(
    points: Callable[[RunContext], Iterable[Any]],
    draw: PointCases,
    *,
    per_point: Callable[[RunContext], int] = lambda ctx: ctx.profile.cases,
    first: PointCases | None = None,
    last: PointCases | None = None,
) -> Cases:
    """:func:`sampled` for draws that depend on the run context (rational inputs on an exact
    backend, floats elsewhere) or come in groups: at each point of ``points``, the ``first``
    cases (edge cases), ``per_point`` draws, then the ``last`` cases, in that order, all from
    the check's one seeded generator."""

    def cases(ctx: RunContext) -> Iterator[Case]:
        rng = ctx.rng()
        for point in points(ctx):
            for each in (first, *[draw] * per_point(ctx), last):
                got = () if each is None else each(ctx, rng, point)
                yield from ((got,) if isinstance(got, Mapping) else got)

    return cases


def chained(*parts: Cases) -> Cases:
    """The cases of each part in turn (each part draws from its own fresh generator)."""

    def cases(ctx: RunContext) -> Iterator[Case]:
        for part in parts:
            yield from part(ctx)

    return cases


def judged(holds: bool, text: str, broken: str | None = None) -> Measure:
    """An exact yes/no as a measure that says what it found either way: ratio 0 with ``text`` when
    the statement holds, infinity with ``broken`` (``text`` when not given) when it does not.
    (:func:`~orthoverify.engine.ratios.flag` says only "holds" or "fails: what".)"""
    if holds:
        return Measure(0.0, text, error=0.0)
    return Measure(math.inf, text if broken is None else broken, error=math.inf)


# --- claims2HC ----------------------------------------------------------------------- measures
def jacobian_rank(b: Backend, f: Callable[[Any], Any], x: Any) -> tuple[int, np.ndarray, float]:
    """The numerical rank of f's torch-autograd Jacobian at ``x`` (a tensor on torch backend ``b``):
    (rank, its singular values in descending order, tol) with the standard tolerance tol = s_1
    max(rows, cols) eps (numpy.linalg.matrix_rank's). Computed singular values are within about
    tol of the exact ones, so a caller also asks for a gap: the last one counted far above tol."""
    import torch

    jac = torch.autograd.functional.jacobian(f, x)
    s = b.to_numpy(torch.linalg.svdvals(jac))
    tol = s[0] * max(jac.shape) * np.finfo(np.float64).eps
    return int(np.sum(s > tol)), s, tol
