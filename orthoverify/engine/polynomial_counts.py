"""Stated counts against counted ones where a statement is a polynomial of the sizes, often only
its leading terms ("+ O(n)"), not a number at each size (where it is, use templates.count).

Each count is measured at every point of an exhaustive grid of sizes, recovered exactly as a
polynomial by rational interpolation (:mod:`orthoverify.param.polynomial_fit`), verified on the
remaining points, and its terms of total degree >= a row's order compared with the stated ones.
A failing row yields a witness, a size point x along whose ray s*x the count differs from the
statement in a stated term; the replay recounts along that ray (at x itself for exact rows)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from orthoverify.backends import Backend
from orthoverify.engine.checks import FunctionCheck, Outcome, RunContext
from orthoverify.engine.ratios import Measure
from orthoverify.engine.templates import judged
from orthoverify.errors import ReplayError
from orthoverify.param.polynomial_fit import Fit, fit_polynomial

Counter = Callable[[str, tuple[int, ...]], Sequence[int]]
"""A row's counter (by name) at a size point: the compared count first, then those reported beside it."""
Grid = Callable[[RunContext, tuple[str, ...]], list[tuple[int, ...]]]
"""The size points on which a row's variables are counted."""


@dataclass(frozen=True)
class Row:
    """One count as printed (or stated): ``formula`` (SymPy syntax; None: measured and reported
    only) in ``variables``, counted by ``counter``; the terms of total degree >= ``order`` must
    agree (0: all of them); the counts are fitted by a polynomial of total degree ``degree``."""

    key: str
    where: str
    what: str
    formula: str | None
    variables: tuple[str, ...]
    order: int
    counter: str
    degree: int

    @property
    def reading(self) -> str:
        if self.formula is None:
            return "reported, not compared"
        return {0: "exact", 1: "up to an additive constant", 2: "quadratic terms (remainder O(n))"}[self.order]

    def stated(self) -> sympy.Expr:
        assert self.formula is not None
        return sympy.expand(sympy.sympify(self.formula, locals={v: sympy.Symbol(v) for v in self.variables}))


def _high_part(expr: sympy.Expr, variables: Sequence[str], order: int) -> sympy.Expr:
    """The terms of ``expr`` (a polynomial) of total degree >= ``order``."""
    syms = [sympy.Symbol(v) for v in variables]
    poly = sympy.Poly(expr, *syms)
    return sympy.expand(
        sum(
            (
                c * sympy.Mul(*(s**e for s, e in zip(syms, mon, strict=True)))
                for mon, c in poly.terms()
                if sum(mon) >= order and c
            ),
            sympy.Integer(0),
        )
    )


def _witnesses(high: sympy.Expr, syms: Sequence[sympy.Symbol], x: Sequence[int]) -> bool:
    """True when some homogeneous part of ``high`` is nonzero at x (so it shows on the ray s*x)."""
    s = sympy.Symbol("s")
    along = sympy.Poly(sympy.expand(high.subs({v: s * xi for v, xi in zip(syms, x, strict=True)})), s)
    return any(c != 0 for c in along.all_coeffs())


@dataclass(frozen=True)
class RowResult:
    """One row compared: the polynomials measured (the compared count first, then the reported
    ones), the terms in which measured and stated differ where it matters, whether it holds, and
    a witness."""

    row: Row
    fits: tuple[Fit, ...]
    holds: bool | None
    difference: sympy.Expr | None
    witness: tuple[int, ...] | None

    def to_data(self, reported: Sequence[str]) -> dict[str, Any]:
        verdict = {True: "yes", False: "no", None: "n/a" if self.row.formula is None else "undecided"}[self.holds]
        fit = self.fits[0]
        out: dict[str, Any] = {
            "row": self.row.key,
            "where": self.row.where,
            "what": self.row.what,
            "printed": self.row.formula,
            "reading": self.row.reading,
            "measured": str(fit.expr()) if fit.exact else f"not a polynomial of degree <= {self.row.degree}",
        }
        out |= {k: str(f.expr()) if f.exact else "not polynomial" for k, f in zip(reported, self.fits[1:], strict=True)}
        out |= {"fitted_on": fit.fitted_on, "verified_on": fit.verified_on, "holds": verdict}
        if self.difference is not None:
            out["measured_minus_printed"] = str(self.difference)
        if self.witness is not None:
            out["witness"] = dict(zip(self.row.variables, self.witness, strict=True))
        return out


@dataclass(frozen=True)
class PolynomialCounts:
    """A table of stated counts on one counter; ``reported`` names the counts reported beside
    the compared one, ``grid`` gives each row's size points, ``data`` is recorded with the rows."""

    rows: tuple[Row, ...]
    count: Counter
    grid: Grid
    reported: tuple[str, ...] = ()
    data: Mapping[str, str] | None = None

    def evaluate(self, row: Row, points: Sequence[tuple[int, ...]]) -> RowResult:
        """Count the row at every point, recover the polynomials exactly and compare with the stated one."""
        series = zip(*(self.count(row.counter, x) for x in points), strict=True)
        fits = tuple(fit_polynomial(row.variables, points, list(ys), row.degree) for ys in series)
        if row.formula is None or not fits[0].exact:
            return RowResult(row, fits, None, None, None)
        diff = sympy.expand(fits[0].expr() - row.stated())
        high = _high_part(diff, row.variables, row.order)
        if high == 0:
            return RowResult(row, fits, True, diff, None)
        syms = [sympy.Symbol(v) for v in row.variables]
        if row.order == 0:  # exact rows: a point where the count itself differs
            witness = next(x for x in points if high.subs(dict(zip(syms, x, strict=True))) != 0)
        else:  # a point whose ray s*x shows a differing stated term
            witness = next(x for x in points if _witnesses(high, syms, x))
        return RowResult(row, fits, False, high, witness)

    def replay(self, inputs: Mapping[str, Any], b: Backend | None = None) -> Measure:
        """Recount a recorded row at its recorded sizes: at the point itself for exact rows, else
        along the ray s*x (s = 1..degree+2) to read off the terms the row states (no ``b`` needed)."""
        by_key = {r.key: r for r in self.rows}
        key = str(inputs.get("row", ""))
        if key not in by_key:
            raise ReplayError(f"unknown count row {key!r}; known: {', '.join(by_key)}")
        row = by_key[key]
        try:
            x = tuple(int(str(inputs[v])) for v in row.variables)
        except (KeyError, ValueError) as exc:
            raise ReplayError(f"row {key} needs integer sizes {', '.join(row.variables)}: {exc}") from None
        syms = [sympy.Symbol(v) for v in row.variables]
        at = ", ".join(f"{v} = {xi}" for v, xi in zip(row.variables, x, strict=True))
        if row.order == 0:
            counted = self.count(row.counter, x)[0]
            stated = row.stated().subs(dict(zip(syms, x, strict=True)))
            held = f"{row.what} at {at}: counted {counted} = stated {row.formula}"
            return judged(
                counted == stated, held, f"{row.what} at {at}: stated {row.formula} = {stated}, counted {counted}"
            )
        s = sympy.Symbol("s")
        ss = list(range(1, row.degree + 3))
        counts = [self.count(row.counter, tuple(si * xi for xi in x))[0] for si in ss]
        fit = fit_polynomial(("s",), [(si,) for si in ss], counts, row.degree)
        where = f"({', '.join(row.variables)}) = s*({', '.join(map(str, x))})"
        if not fit.exact:
            text = f"{row.what}: counts along {where} are not a polynomial of degree {row.degree}"
            return Measure(0.0, text, error=0.0)
        counted_s = fit.expr()
        stated_s = sympy.expand(row.stated().subs({v: s * xi for v, xi in zip(syms, x, strict=True)}))
        high = _high_part(sympy.expand(counted_s - stated_s), ("s",), row.order)
        text = (
            f"{row.what}: along {where}, counted {counted_s}, printed {stated_s} + lower terms; "
            f"they differ by {high} in the terms of degree >= {row.order} in s"
        )
        return judged(high == 0, text)

    def run(self, ctx: RunContext) -> Outcome:
        """Every row on its grid; a failure is the first failing row at its witness."""
        grids = {vs: self.grid(ctx, vs) for vs in {r.variables for r in self.rows}}
        results = [self.evaluate(r, grids[r.variables]) for r in self.rows]
        data = {
            "rows": [r.to_data(self.reported) for r in results],
            "grid": {",".join(vs): f"{len(g)} points, {vs[0]} <= {max(x[0] for x in g)}" for vs, g in grids.items()},
            **(self.data or {}),
        }
        cases = sum(len(grids[r.variables]) for r in self.rows)
        compared = [r for r in results if r.row.formula is not None]
        lines = [f"{r.row.key}: {r.to_data(self.reported)['holds']}" for r in compared]
        failing = [r for r in compared if r.holds is False]
        if failing:
            first = failing[0]
            assert first.witness is not None
            case = {"row": first.row.key, **dict(zip(first.row.variables, first.witness, strict=True))}
            return Outcome(False, cases, failure=(case, self.replay(case)), notes="; ".join(lines), data=data)
        if any(r.holds is None for r in compared):
            return Outcome(False, cases, notes="undecided rows: counts not polynomial; " + "; ".join(lines), data=data)
        return Outcome(True, cases, notes="; ".join(lines), data=data)

    def check(self, name: str, backends: tuple[str, ...], quantity_name: str) -> FunctionCheck:
        """The table as one exhaustive, exact check whose failures replay by recounting."""
        return FunctionCheck(
            name, self.run, backends, "exhaustive", quantity_name, threshold=None, replay_fn=self.replay, exact=True
        )
