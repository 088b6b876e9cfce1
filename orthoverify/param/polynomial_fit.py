"""Exact polynomials recovered from integer values: rational interpolation on the points that
determine the polynomial, checked on all the others. Used to read a measured operation count
(:mod:`orthoverify.param.svd_flops`) as a polynomial of the sizes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import product

import sympy

from orthoverify.errors import DomainError

Monomial = tuple[int, ...]


def _monomials(nvars: int, degree: int) -> list[Monomial]:
    """Exponent tuples of total degree <= degree, by degree."""
    mons = [e for e in product(range(degree + 1), repeat=nvars) if sum(e) <= degree]
    return sorted(mons, key=lambda e: (sum(e), tuple(-x for x in e)))


def _power(x: Sequence[int], mon: Monomial) -> int:
    return math.prod(v**e for v, e in zip(x, mon, strict=True))


@dataclass(frozen=True)
class Fit:
    """A polynomial recovered exactly from integer counts: ``coeffs`` by monomial, the number of
    points it was determined by and verified on, and the first point it does not reproduce."""

    variables: tuple[str, ...]
    coeffs: dict[Monomial, Fraction]
    fitted_on: int
    verified_on: int
    mismatch: tuple[tuple[int, ...], int, Fraction] | None = None

    @property
    def exact(self) -> bool:
        """True when the polynomial reproduces every count it was given."""
        return self.mismatch is None

    def expr(self) -> sympy.Expr:
        """The polynomial as a SymPy expression in the named variables."""
        syms = [sympy.Symbol(v) for v in self.variables]
        return sympy.expand(
            sum(
                (
                    sympy.Rational(c.numerator, c.denominator)
                    * sympy.Mul(*(s**e for s, e in zip(syms, mon, strict=True)))
                    for mon, c in self.coeffs.items()
                    if c
                ),
                sympy.Integer(0),
            )
        )


def fit_polynomial(
    variables: Sequence[str], points: Sequence[Sequence[int]], values: Sequence[int], degree: int
) -> Fit:
    """The polynomial of total degree <= ``degree`` through (points, values), by exact
    (fraction-free integer) elimination on the first points that determine it, then checked
    on all the others."""
    if len(points) != len(values):
        raise DomainError(f"{len(points)} points but {len(values)} values")
    mons = _monomials(len(variables), degree)
    size = len(mons)
    basis: dict[int, list[int]] = {}  # pivot column -> integer row [coefficients..., rhs]
    for x, y in zip(points, values, strict=True):
        if len(basis) == size:
            break
        row = [_power(x, mon) for mon in mons] + [int(y)]
        for p in sorted(basis):
            if row[p]:
                b = basis[p]
                row = [a * b[p] - row[p] * c for a, c in zip(row, b, strict=True)]
        piv = next((j for j in range(size) if row[j]), None)
        if piv is None:
            continue  # dependent point: checked below with the others
        g = math.gcd(*row)
        basis[piv] = [a // g for a in row]
    if len(basis) < size:
        raise DomainError(
            f"{len(points)} points do not determine a polynomial of degree {degree} in {', '.join(variables)}"
        )
    sol: dict[int, Fraction] = {}
    for p in sorted(basis, reverse=True):  # upper triangular: back substitution
        b = basis[p]
        rest = sum((b[j] * sol[j] for j in range(p + 1, size)), Fraction(0))
        sol[p] = (b[size] - rest) / b[p]
    coeffs = {mons[j]: sol[j] for j in range(size)}
    den = math.lcm(*(c.denominator for c in coeffs.values()))
    ints = [(mon, int(c * den)) for mon, c in coeffs.items() if c]
    for x, y in zip(points, values, strict=True):
        if sum(c * _power(x, mon) for mon, c in ints) != y * den:
            pred = sum((c * _power(x, mon) for mon, c in coeffs.items()), Fraction(0))
            return Fit(tuple(variables), coeffs, size, len(points) - size, (tuple(x), int(y), pred))
    return Fit(tuple(variables), coeffs, size, len(points) - size)
