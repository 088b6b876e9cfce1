"""SymPy backend: exact arithmetic over rationals, algebraic numbers and symbols.

Zero tests are decisions, not guesses: a rational function is zero iff the numerator of its
``together`` form expands to 0; an algebraic number is zero iff its minimal polynomial is ``x``; anything else is
simplified and, when SymPy cannot show it is zero, evaluated at 60 digits to exhibit a
nonzero witness (see :func:`expr_is_zero`).
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from orthoverify.backends.base import Array, Scalar, nested_map
from orthoverify.backends.numbers import parse_exact
from orthoverify.backends.object_backend import ObjectBackend

_X = sympy.Symbol("_x")


def expr_is_zero(e: Any) -> bool:
    """Decide whether a SymPy expression is identically zero."""
    e = sympy.sympify(e)
    if e.is_Rational:
        return bool(e == 0)
    if e.free_symbols:
        # A rational function p/q is zero iff its numerator expands to the zero polynomial.
        num, _den = sympy.fraction(sympy.together(e))
        num = sympy.expand(num)
        if num == 0:
            return True
        if e.is_rational_function():
            return False
        if sympy.simplify(e) == 0:
            return True
        return nonzero_point(e) is None
    if e.is_algebraic is not False:
        try:
            return bool(sympy.minimal_polynomial(e, _X) == _X)
        except (NotImplementedError, ValueError, sympy.PolificationFailed):
            pass
    if sympy.simplify(e) == 0:
        return True
    return abs(sympy.N(e, 60)) == 0


def nonzero_point(e: Any, *, tries: int = 50) -> tuple[dict[Any, Any], Any] | None:
    """A small rational point where ``e`` is visibly nonzero, and e's exact value there; None
    when no such point turns up (seeded, so the same expression gives the same point)."""
    e = sympy.sympify(e)
    rng = random.Random(7)
    syms = sorted(e.free_symbols, key=str)
    for _ in range(tries):
        point = {s: sympy.Rational(rng.randint(-9, 9), rng.randint(1, 5)) for s in syms}
        try:
            val = sympy.cancel(e.subs(point))
        except ZeroDivisionError:
            continue
        if val.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo) or val == 0:
            continue
        if val.is_Rational or abs(sympy.N(val, 60)) > sympy.Float("1e-40", 60):
            return point, val
    return None


def _atan2(y: Any, x: Any) -> Any:
    """SymPy's atan2, with 0 at the origin (where SymPy gives nan) like every other backend."""
    if expr_is_zero(y) and expr_is_zero(x):
        return sympy.Integer(0)
    return sympy.atan2(y, x)


class SympyBackend(ObjectBackend):
    """Exact arithmetic on object arrays of SymPy expressions."""

    family = "sympy"
    method = "symbolic"
    name = "sympy"
    eps = 0.0
    digits = None

    @property
    def zero(self) -> Scalar:
        return sympy.Integer(0)

    @property
    def one(self) -> Scalar:
        return sympy.Integer(1)

    def _from_number(self, v: Any) -> Scalar:
        if isinstance(v, bool):
            raise TypeError("bool is not a number")
        if isinstance(v, int):
            return sympy.Integer(v)
        if isinstance(v, float):
            return sympy.Rational(v)  # exact binary value
        if isinstance(v, str):  # parsed strictly, never evaluated: strings may come from result files
            q = parse_exact(v)
            return sympy.Rational(q.numerator, q.denominator)
        if isinstance(v, Fraction):
            return sympy.Rational(v.numerator, v.denominator)
        if hasattr(v, "man_exp"):  # an mpmath mpf: its exact binary value
            man, exp = v.man_exp
            return sympy.Integer(int(man)) * sympy.Integer(2) ** int(exp)
        if isinstance(v, (np.integer, np.floating)):
            return self._from_number(v.item())
        try:  # strict: objects that know their SymPy form (``_sympy_``); strings are never parsed here
            return sympy.sympify(v, strict=True)
        except sympy.SympifyError:
            raise TypeError(f"{type(v).__name__} is not a number (pass SymPy expressions as SymPy objects)") from None

    def _is_native(self, v: Any) -> bool:
        return isinstance(v, sympy.Basic)

    def _pivot_key(self, v: Scalar) -> float:
        if expr_is_zero(v):
            return 0.0
        try:
            return float(abs(sympy.N(v, 30)))
        except TypeError:  # symbolic: any nonzero entry is an acceptable pivot
            return 1.0

    def to_strings(self, x: Array) -> Any:
        return nested_map(lambda v: str(sympy.nsimplify(v) if v.is_Float else v), x)

    def sqrt(self, x: Any) -> Any:
        return self._map(sympy.sqrt, x)

    def exp(self, x: Any) -> Any:
        return self._map(sympy.exp, x)

    def log(self, x: Any) -> Any:
        return self._map(sympy.log, x)

    def cos(self, x: Any) -> Any:
        return self._map(sympy.cos, x)

    def sin(self, x: Any) -> Any:
        return self._map(sympy.sin, x)

    def atan2(self, y: Any, x: Any) -> Any:
        return self._map2(_atan2, y, x)

    def pi(self) -> Scalar:
        return sympy.pi

    def abs(self, x: Any) -> Any:
        return self._map(sympy.Abs, x)

    def sign(self, x: Any) -> Any:
        def one(v: Any) -> Any:
            if expr_is_zero(v):
                return sympy.Integer(0)
            return sympy.Integer(1) if self.positive(v) else sympy.Integer(-1)

        return self._map(one, x)

    def norm(self, x: Array) -> Scalar:
        return sympy.sqrt(self.sum(x * x))

    def max_abs(self, x: Array) -> Scalar:
        best = self.zero
        for v in x.reshape(-1):
            a = sympy.Abs(v)
            if sympy.N(a - best, 40) > 0:
                best = a
        return best

    def is_zero(self, x: Any) -> bool:
        if hasattr(x, "reshape") and not isinstance(x, sympy.Basic):
            return all(expr_is_zero(v) for v in x.reshape(-1))
        return expr_is_zero(x)

    def all_finite(self, x: Array) -> bool:
        bad = (sympy.nan, sympy.zoo, sympy.oo, -sympy.oo)
        return not any(v in bad or v.has(*bad) for v in x.reshape(-1))

    def positive(self, x: Scalar) -> bool:
        pos = sympy.sympify(x).is_positive
        if pos is not None:
            return bool(pos)
        if expr_is_zero(x):
            return False
        return bool(sympy.N(x, 60) > 0)
