"""Reusable check kinds: each turns one claim's maths into evidence on one backend.

* :class:`PropertyCheck`: a quantity (a test ratio) over generated, structured or
  exhaustively enumerated cases.
* :class:`SearchCheck`: the same quantity, with Hypothesis hunting for the case that
  maximises it (``hypothesis.target``).
* :class:`SymbolicCheck`: expressions with free symbols that must vanish identically.
* :class:`FunctionCheck`: a bespoke procedure (counts, timings, shape audits).

A failure found in floating point is recomputed at high precision on the very same inputs
before it becomes a counterexample. How depends on what the claim is about (``confirm``):

* ``"value"`` (claims of exact mathematics): the discrepancy is recomputed at 50 and at 100
  digits; it is confirmed when it has converged (the two agree to 1%) and still exceeds the
  threshold, so it is a property of the mathematics, not of rounding. A failure that shrinks
  with the precision is a rounding effect (say, of an unstable formula), never a
  counterexample to an exact statement.
* ``"ratio"`` (claims about an algorithm's floating-point behaviour): the test ratio itself,
  in 50-digit arithmetic, must still exceed the threshold.

A failure that does not survive is reported as a failed, unconfirmed check (the claim is then
inconclusive).
"""

from __future__ import annotations

import contextlib
import math
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from orthoverify.backends import Backend, get_backend
from orthoverify.backends.base import Method
from orthoverify.backends.sympy_backend import expr_is_zero, nonzero_point
from orthoverify.engine.model import Counterexample, Evidence
from orthoverify.engine.profiles import Profile, get_profile
from orthoverify.engine.ratios import THRESHOLD, Measure, as_measure, fails

Case = Mapping[str, Any]
Quantity = Callable[[Backend, Case], "Measure | float"]
Confirm = Literal["value", "ratio"]


@dataclass(frozen=True)
class RunContext:
    """Everything a check may read while it runs."""

    claim: str
    check: str
    backend: Backend
    profile: Profile
    seed: int
    device: str = "cpu"
    run_seed: int = 0
    """The run's seed before :func:`derive_seed`: checks that share one session of cases (the
    claims of a target's family, see :mod:`orthoverify.conformance.family`) draw from it, so that
    every claim of the family sees the cases a run of the whole family would."""

    def rng(self, *salt: int | str) -> np.random.Generator:
        """A fresh generator for this check; the same seed gives the same cases on every backend."""
        return seeded_rng(self.seed, *salt)


def seeded_rng(seed: int, *salt: int | str) -> np.random.Generator:
    """A fresh generator from ``seed`` and the ``salt`` (names of what draws from it): the same
    seed and salt give the same draws in every process (a check's, a target's session)."""
    return np.random.default_rng([seed, *(zlib.crc32(str(s).encode()) for s in salt)])


def derive_seed(seed: int, claim: str, check: str) -> int:
    """The seed of one check, stable across runs, processes and backends. ``check`` is the name the
    check is seeded by: a renamed check's old name (the registry's ``seed_name``), so that renaming
    keeps its cases."""
    return int(
        np.random.SeedSequence([seed, zlib.crc32(claim.encode()), zlib.crc32(check.encode())]).generate_state(1)[0]
    )


def case_strings(b: Backend, case: Case) -> dict[str, Any]:
    """A case as decimal strings, exactly as the backend saw it (after its rounding)."""
    out: dict[str, Any] = {}
    for key, v in case.items():
        if isinstance(v, (bool, np.bool_)):
            out[key] = str(bool(v))
        elif isinstance(v, (int, np.integer)):
            out[key] = str(int(v))
        elif isinstance(v, str):
            out[key] = v
        else:
            out[key] = b.to_strings(b.asarray(v, name=key))
    return out


def confirm_backend(b: Backend, digits: int = 50) -> Backend:
    """The arithmetic that confirms a failure seen on ``b``: mpmath at ``digits``, or at
    twice b's digits when b already is high precision."""
    if b.method == "high-precision" and b.digits is not None and b.digits >= digits:
        return get_backend(f"mpmath-{2 * b.digits}")
    return get_backend("mpmath" if digits == 50 else f"mpmath-{digits}")


def case_size(case: Case) -> int | None:
    """The size n of a case, for the report's ratio-against-n figures: its ``n`` when it has
    one, else the largest dimension of its array inputs (None when it has none)."""
    n = case.get("n")
    if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
        return int(n)
    dims = [max(np.shape(v)) for v in case.values() if isinstance(v, (np.ndarray, list)) and np.ndim(v) > 0]
    dims = [d for d in dims if d > 0]
    return max(dims) if dims else None


class CaseLog:
    """Per-size summaries of a scan's ratios (cases, worst, median) and the named per-case
    ``stats`` of its measures: the data behind the report's figures, kept in evidence ``data``."""

    def __init__(self) -> None:
        self.ratios: dict[int, list[float]] = {}
        self.stats: dict[str, list[list[float]]] = {}  # [n, value] per case

    def add(self, case: Case, m: Measure) -> None:
        n = case_size(case)
        if n is not None:
            self.ratios.setdefault(n, []).append(m.ratio)
        for key, value in (m.stats or {}).items():
            self.stats.setdefault(key, []).append([n if n is not None else 0, float(value)])

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.ratios:
            rows = []
            for n in sorted(self.ratios):
                r = self.ratios[n]
                finite = sorted(x for x in r if not math.isnan(x))
                worst = max(r, key=lambda x: math.inf if math.isnan(x) else x)
                median = finite[len(finite) // 2] if finite else math.nan
                rows.append([n, len(r), worst, median])
            out["by_n"] = rows
        if self.stats:
            out["stats"] = self.stats
        return out


class Check(ABC):
    """One way of producing evidence about a claim."""

    name: str
    quantity_name: str
    threshold: float | None
    confirm: Confirm = "value"

    @abstractmethod
    def backend_names(self) -> tuple[str, ...]:
        """Backends this check runs on (before the user's --backend selection)."""

    @abstractmethod
    def run(self, ctx: RunContext) -> Evidence | list[Evidence]:
        """Run on ``ctx.backend`` and return the evidence (seconds are filled in by the engine); a
        check over a target's session (:class:`~orthoverify.conformance.family.TargetCheck`) returns
        one row per dtype it measured."""

    def method_on(self, b: Backend) -> Method:
        """The evidence method this check produces on backend ``b``."""
        return b.method

    def replay(self, inputs: Mapping[str, Any], b: Backend) -> Measure:
        """Recompute the breaking quantity of a recorded counterexample on backend ``b``."""
        raise NotImplementedError(f"check {self.name} cannot replay counterexamples")

    def records(self, check: str) -> bool:
        """Whether a counterexample recorded under the check name ``check`` is this check's to replay."""
        return check == self.name

    def replay_recorded(self, claim: str, cx: Counterexample) -> Any | None:
        """A replay of ``cx`` in the arithmetics this check measures in, or None for the engine's
        (float64 and the recorded high precision, or exactly). Either way through :meth:`replay`."""
        return None

    def _evidence(self, ctx: RunContext, **kw: Any) -> Evidence:
        exact = ctx.backend.exact or getattr(self, "exact", False)
        if exact:  # exact arithmetic has no rounding to measure: no ratio, no threshold
            kw["worst_ratio"] = None
        return Evidence(
            claim=ctx.claim,
            check=self.name,
            method=self.method_on(ctx.backend),
            backend=ctx.backend.label,
            threshold=None if exact else self.threshold,
            **kw,
        )

    def _finish(
        self,
        ctx: RunContext,
        *,
        cases: int,
        worst: float,
        failure: tuple[Case, Measure] | None,
        notes: str = "",
        data: dict[str, Any] | None = None,
    ) -> Evidence:
        """Evidence from a scan of cases, confirming the given (worst) failure at high precision."""
        ev = self._evidence(ctx, cases=cases, worst_ratio=worst, passed=failure is None, notes=notes, data=data or {})
        if failure is not None:
            case, measure = failure
            ev.counterexample, note = self._confirm(ctx.backend, case, measure)
            ev.notes = (ev.notes + " " + note).strip()
        return ev

    def _confirm(self, b: Backend, case: Case, measure: Measure) -> tuple[Counterexample | None, str]:
        thr = self.threshold if self.threshold is not None else THRESHOLD
        inputs = case_strings(b, case)
        if b.exact or getattr(self, "exact", False):
            cx = Counterexample(inputs, self.quantity_name, measure.display, "exact", self.name)
            return cx, f"exact counterexample: {self.quantity_name} = {measure.display}"
        hp = confirm_backend(b)
        m_hp = as_measure(self.replay(inputs, hp))
        if self.confirm == "ratio":
            confirmed = fails(m_hp.ratio, thr)
            how = f"its ratio in {hp.digits}-digit arithmetic is {m_hp.display}"
        else:
            hp2 = get_backend(f"mpmath-{2 * (hp.digits or 50)}")
            m_hp2 = as_measure(self.replay(inputs, hp2))
            # the unscaled discrepancy; a measure without one gives it through its ratio (ratio * eps
            # is the error over the check's dimension factor, the same factor at both precisions)
            e1 = m_hp.error if m_hp.error is not None else m_hp.ratio * hp.eps
            e2 = m_hp2.error if m_hp2.error is not None else m_hp2.ratio * hp2.eps
            converged = (math.isinf(e1) and math.isinf(e2)) or (e2 > 0 and abs(e1 - e2) <= 0.01 * e2)
            confirmed = converged and fails(m_hp.ratio, thr)
            how = f"discrepancy {e1:.3g} at {hp.digits} digits, {e2:.3g} at {hp2.digits} digits"
        if confirmed:
            f64 = measure.display
            if b.name != "numpy-float64":
                f64 = as_measure(self.replay(inputs, get_backend("numpy-float64"))).display
            cx = Counterexample(inputs, self.quantity_name, m_hp.display, hp.digits or 0, self.name, thr, f64)
            return cx, f"failure on {b.label} ({measure.display}) confirmed: {how}"
        return None, (
            f"failure on {b.label} ({self.quantity_name} = {measure.display} > {thr}) is NOT confirmed at "
            f"high precision ({how}): a rounding effect of this arithmetic, not a counterexample"
        )


def confirm_again(
    ev: Evidence,
    measure_again: Callable[[Counterexample], Measure],
    standing: Callable[[Counterexample, Measure], str] | None = None,
) -> Evidence:
    """``ev`` with its counterexample confirmed by measuring the recorded case again
    (``measure_again``: the check's own measuring routine, where a high-precision recomputation
    has nothing to add, say a target measured as a black box). It stands when it fails again; it
    is kept, marked, when it could not be measured again (NaN ratio: no answer either way); else
    the row is failed and unconfirmed (no counterexample: the claim is inconclusive), unless
    ``standing`` gives a sentence saying why the observation is a finding all the same (then
    refuted, marked intermittent)."""
    cx = ev.counterexample
    if cx is None or ev.error is not None:
        return ev
    m = measure_again(cx)
    if math.isnan(m.ratio):
        ev.data["confirmation"] = f"not measured again: {m.display}"
        return ev
    if fails(m.ratio):
        ev.data["confirmation"] = f"measured again: {m.display}"
        return ev
    why = standing(cx, m) if standing is not None else ""
    if why:
        ev.passed = False
        ev.data["intermittent"] = {"remeasured": m.display}
        ev.notes = f"{ev.notes} {why}".strip()
        return ev
    ev.counterexample, ev.passed = None, False
    ev.data["unconfirmed"] = {"counterexample": cx.to_json(), "remeasured": m.display}
    ev.notes = (
        f"{ev.notes} The failure did not reproduce when its counterexample was measured again ({m.display}): "
        "failed, unconfirmed (no verdict from it)."
    ).strip()
    return ev


@dataclass(frozen=True)
class PropertyCheck(Check):
    """A test ratio that must stay at or below ``threshold`` on every generated case."""

    name: str
    quantity: Quantity
    cases: Callable[[RunContext], Iterable[Case]]
    backends: tuple[str, ...]
    quantity_name: str
    threshold: float | None = THRESHOLD
    method: Method | None = None
    confirm: Confirm = "value"

    def backend_names(self) -> tuple[str, ...]:
        return self.backends

    def method_on(self, b: Backend) -> Method:
        return self.method or b.method

    def run(self, ctx: RunContext) -> Evidence:
        thr = self.threshold if self.threshold is not None else THRESHOLD
        worst = 0.0
        count = 0
        failure: tuple[Case, Measure] | None = None
        log = CaseLog()
        for case in self.cases(ctx):
            m = as_measure(self.quantity(ctx.backend, case))
            count += 1
            log.add(case, m)
            if fails(m.ratio, worst):
                worst = m.ratio
                if fails(m.ratio, thr):  # confirm the worst failing case: the clearest counterexample
                    failure = (case, m)
        return self._finish(ctx, cases=count, worst=worst, failure=failure, data=log.data())

    def replay(self, inputs: Mapping[str, Any], b: Backend) -> Measure:
        return as_measure(self.quantity(b, inputs))


class _Found(Exception):
    """Raised inside a Hypothesis probe when a case exceeds the threshold."""


@contextlib.contextmanager
def _no_local_constants() -> Iterator[None]:
    """Keep Hypothesis from drawing constants mined from loaded local modules.

    Hypothesis (6.131 and later) mixes into generation the literals of every local module in
    ``sys.modules``. Which modules a worker has loaded depends on the tasks it ran before, and
    whether orthoverify is installed in site-packages or in place, so a seed would not give the
    same search. Global constants (0, 1, inf, ...) are kept. Older versions need nothing.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if original is None or not hasattr(providers, "Constants"):
        yield
        return
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    if cache is not None:
        cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        if cache is not None:
            cache.cache.clear()


def search_settings(max_examples: int) -> Any:
    """Hypothesis settings of every orthoverify search: no database, no deadline, targeted phases,
    quiet; the caller fixes the seed, so a search is reproducible."""
    from hypothesis import HealthCheck, Phase, Verbosity, settings

    return settings(
        max_examples=max_examples,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.generate, Phase.target, Phase.shrink),
        report_multiple_bugs=False,
        print_blob=False,
        verbosity=Verbosity.quiet,
    )


@dataclass(frozen=True)
class SearchCheck(Check):
    """Hypothesis hunts for a case whose ratio exceeds ``threshold``, steering by ``target``."""

    name: str
    quantity: Quantity
    strategy: Callable[[RunContext], Any]
    backends: tuple[str, ...]
    quantity_name: str
    threshold: float | None = THRESHOLD
    confirm: Confirm = "value"

    def backend_names(self) -> tuple[str, ...]:
        return self.backends

    def method_on(self, b: Backend) -> Method:
        return "search"

    def run(self, ctx: RunContext) -> Evidence:
        from hypothesis import given, target
        from hypothesis import seed as hseed

        thr = self.threshold if self.threshold is not None else THRESHOLD
        state: dict[str, Any] = {"count": 0, "worst": 0.0, "failure": None}
        b = ctx.backend
        log = CaseLog()

        @search_settings(ctx.profile.search_examples)
        @hseed(ctx.seed)
        @given(self.strategy(ctx))
        def probe(case: Case) -> None:
            m = as_measure(self.quantity(b, case))
            state["count"] += 1
            log.add(case, m)
            if fails(m.ratio, state["worst"]):
                state["worst"] = m.ratio
            if math.isfinite(m.ratio):
                target(m.ratio, label=self.quantity_name)
            if fails(m.ratio, thr):
                state["failure"] = (dict(case), m)
                raise _Found

        try:
            with _no_local_constants():
                probe()
        except _Found:
            pass  # Hypothesis re-ran the shrunk case last: state["failure"] holds it
        return self._finish(
            ctx,
            cases=state["count"],
            worst=state["worst"],
            failure=state["failure"],
            notes=f"Hypothesis search, {state['count']} examples, seed {ctx.seed}",
            data=log.data(),
        )

    def replay(self, inputs: Mapping[str, Any], b: Backend) -> Measure:
        return as_measure(self.quantity(b, inputs))


Identity = tuple[str, Any]
"""A label and an expression (or object array of expressions) that must vanish identically."""


@dataclass(frozen=True)
class SymbolicCheck(Check):
    """Expressions in free symbols that SymPy must reduce to zero."""

    name: str
    build: Callable[[RunContext], Iterable[Identity]]
    quantity_name: str = "exact difference"
    threshold: float | None = None

    def backend_names(self) -> tuple[str, ...]:
        return ("sympy",)

    def method_on(self, b: Backend) -> Method:
        return "symbolic"

    def run(self, ctx: RunContext) -> Evidence:
        count = 0
        labels: list[str] = []
        for label, expr in self.build(ctx):
            count += 1
            labels.append(label)
            items = list(np.asarray(expr, dtype=object).reshape(-1))
            bad = next((e for e in items if not expr_is_zero(e)), None)
            if bad is not None:
                inputs, value = _witness(bad)
                inputs["identity"] = label
                cx = Counterexample(inputs, f"{label}: {self.quantity_name}", value, "exact", self.name)
                return self._evidence(
                    ctx,
                    cases=count,
                    passed=False,
                    counterexample=cx,
                    notes=f"not identically zero: {label}",
                )
        return self._evidence(ctx, cases=count, passed=True, notes="; ".join(labels))

    def replay(self, inputs: Mapping[str, Any], b: Backend) -> Measure:
        import sympy

        label = inputs.get("identity")
        ctx = RunContext(
            claim="replay", check=self.name, backend=get_backend("sympy"), profile=_replay_profile(), seed=0
        )
        for lab, expr in self.build(ctx):
            if lab != label:
                continue
            point = {sympy.Symbol(k): sympy.Rational(v) for k, v in inputs.items() if k != "identity"}
            vals = [sympy.sympify(e).subs(point) for e in np.asarray(expr, dtype=object).reshape(-1)]
            nz = [v for v in vals if v != 0]
            if not nz:
                return Measure(0.0, "0")
            v = nz[0]
            return Measure(math.inf, str(v) if b.exact else str(sympy.N(v, b.digits or 50)))
        raise KeyError(f"identity {label!r} not found in check {self.name}")


def _replay_profile() -> Profile:
    return get_profile("quick")


def _witness(expr: Any) -> tuple[dict[str, Any], str]:
    """A rational point where ``expr`` is nonzero, and its exact value there."""
    found = nonzero_point(expr)
    if found is None:
        return {}, str(expr)
    point, value = found
    return {str(s): str(v) for s, v in point.items()}, str(value)


@dataclass
class Outcome:
    """What a bespoke check found: a verdict for its cases, and possibly a failing case."""

    passed: bool
    cases: int
    worst_ratio: float | None = None
    failure: tuple[Case, Measure] | None = None
    notes: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FunctionCheck(Check):
    """A bespoke procedure; a failing case it returns is confirmed through ``replay_fn``
    (exactly when the procedure is exact, else at high precision)."""

    name: str
    fn: Callable[[RunContext], Outcome]
    backends: tuple[str, ...]
    method: Method
    quantity_name: str
    threshold: float | None = THRESHOLD
    replay_fn: Callable[[Mapping[str, Any], Backend], Measure] | None = None
    confirm: Confirm = "value"
    exact: bool = False  # the procedure is exact (integer counts, symbolic): failures need no confirmation

    def backend_names(self) -> tuple[str, ...]:
        return self.backends

    def method_on(self, b: Backend) -> Method:
        return self.method

    def run(self, ctx: RunContext) -> Evidence:
        out = self.fn(ctx)
        if out.failure is None:
            return self._evidence(
                ctx, cases=out.cases, worst_ratio=out.worst_ratio, passed=out.passed, notes=out.notes, data=out.data
            )
        return self._finish(
            ctx, cases=out.cases, worst=out.worst_ratio or math.inf, failure=out.failure, notes=out.notes, data=out.data
        )

    def replay(self, inputs: Mapping[str, Any], b: Backend) -> Measure:
        if self.replay_fn is None:
            raise NotImplementedError(f"check {self.name} cannot replay counterexamples")
        return self.replay_fn(inputs, b)


def select_backends(check: Check, selected: Sequence[str] | None) -> list[str]:
    """The check's backends, restricted to the user's selection when one was given."""
    names = list(check.backend_names())
    if selected is None:
        return names
    chosen = set(selected)
    # "mpmath" and "flint" select every precision of that arithmetic (mpmath-50, flint-100, ...)
    return [n for n in names if n in chosen or n.rsplit("-", 1)[0] in chosen & {"mpmath", "flint"}]
