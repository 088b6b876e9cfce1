"""python-flint backend: Arb ball arithmetic at any chosen precision (default 50 digits).

Every scalar is an Arb ball (a midpoint and a radius) that provably contains the exact value
of what was computed from the inputs, so the same arrays serve two roles:

* ordinary ``high-precision`` evidence, like mpmath, read at the midpoints (predicates such as
  :meth:`FlintBackend.is_zero` and :meth:`FlintBackend.positive` decide at the midpoint, as
  mpmath decides at its value), but with fast paths: matrix products (``@``) and solves go
  through ``flint.arb_mat`` (convert once, operate, convert back);
* ``rigorous`` evidence: :func:`prove_below` reads the enclosure of a quantity and reports a
  bound only when the whole ball is on one side of the threshold.

python-flint keeps its working precision in one global, ``flint.ctx.prec``. It is never left
changed: the scalars are a subclass of ``flint.arb`` (one class per precision) whose arithmetic
sets the precision and restores it around every operation (:func:`precision`), which plays the
role of the private ``MPContext`` of the mpmath backend.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction
from typing import Any, Literal

import numpy as np
from mpmath.libmp import dps_to_prec

from orthoverify.backends.base import Array, Scalar, nested_map
from orthoverify.backends.mpmath_backend import MpmathBackend
from orthoverify.backends.object_backend import ObjectBackend
from orthoverify.errors import BackendError, SingularError

DEFAULT_DIGITS = 50
INSTALL_HINT = "python-flint is not installed: pip install 'orthoverify[flint]' (or pip install python-flint)"


def flint_available() -> bool:
    """True when python-flint imports."""
    try:
        import flint  # noqa: F401
    except ImportError:
        return False
    return True


def require_flint() -> Any:
    """The ``flint`` module, or a :class:`BackendError` that names the missing extra."""
    try:
        import flint
    except ImportError:
        raise BackendError(INSTALL_HINT) from None
    return flint


@contextlib.contextmanager
def precision(prec: int) -> Iterator[None]:
    """Run a block at ``prec`` bits of python-flint precision and restore the previous value."""
    ctx = require_flint().ctx
    old = ctx.prec
    ctx.prec = prec
    try:
        yield
    finally:
        ctx.prec = old


# ===================================================================== scalars and arrays
_BINARY = (
    "__add__",
    "__radd__",
    "__sub__",
    "__rsub__",
    "__mul__",
    "__rmul__",
    "__truediv__",
    "__rtruediv__",
    "__pow__",
    "__rpow__",
)
_UNARY = ("__neg__", "__pos__", "__abs__")


@functools.cache
def ball_class(prec: int) -> type:
    """The ``flint.arb`` subclass whose arithmetic runs at ``prec`` bits (one class per precision)."""
    flint = require_flint()
    ctx = flint.ctx

    def binary(base: Any) -> Any:
        def op(self: Any, other: Any, *rest: Any) -> Any:
            old = ctx.prec
            ctx.prec = prec
            try:
                r = base(self, other, *rest)
            finally:
                ctx.prec = old
            return r if r is NotImplemented else cls(r)

        return op

    def unary(base: Any) -> Any:
        def op(self: Any) -> Any:
            old = ctx.prec
            ctx.prec = prec
            try:
                r = base(self)
            finally:
                ctx.prec = old
            return cls(r)

        return op

    ns: dict[str, Any] = {"__slots__": (), "prec": prec, "_orthoverify_ball": True, "__module__": __name__}
    ns.update({name: binary(getattr(flint.arb, name)) for name in _BINARY})
    ns.update({name: unary(getattr(flint.arb, name)) for name in _UNARY})
    cls = type(f"Ball{prec}", (flint.arb,), ns)
    return cls


def is_ball(x: Any) -> bool:
    """True for a scalar of some flint backend (an ``arb`` that carries its precision)."""
    return getattr(type(x), "_orthoverify_ball", False) is True


class BallArray(np.ndarray):
    """An object array of balls whose ``@`` goes through ``flint.arb_mat`` (one conversion each
    way) instead of NumPy's elementwise object loop; everything else is plain NumPy."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if ufunc is np.matmul and method == "__call__" and not kwargs and len(inputs) == 2:
            fast = _fast_matmul(inputs[0], inputs[1])
            if fast is not None:
                return fast
        args = [np.asarray(x) if isinstance(x, BallArray) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(o) if isinstance(o, BallArray) else o for o in kwargs["out"])
        out = getattr(ufunc, method)(*args, **kwargs)
        if isinstance(out, np.ndarray) and out.dtype == object:
            return out.view(BallArray)
        return out


def as_ball_array(x: Any) -> Array:
    """View an object ndarray as a :class:`BallArray` (no copy)."""
    return np.asarray(x, dtype=object).view(BallArray)


def _common_prec(*arrays: np.ndarray) -> int | None:
    """The precision of arrays made only of balls (the largest one), or None."""
    prec = 0
    for a in arrays:
        for v in a.reshape(-1):
            if not is_ball(v):
                return None
            prec = max(prec, type(v).prec)
    return prec or None


def to_arb_mat(x: np.ndarray) -> Any:
    """A 2-D object array of balls (or anything ``arb`` accepts) as a ``flint.arb_mat``."""
    flint = require_flint()
    m, n = x.shape
    return flint.arb_mat(m, n, list(np.asarray(x, dtype=object).reshape(-1)))


def from_arb_mat(m: Any, prec: int) -> Array:
    """A ``flint.arb_mat`` as a :class:`BallArray` of balls at ``prec`` bits (exact copies)."""
    cls = ball_class(prec)
    rows, cols = m.nrows(), m.ncols()
    out = np.empty((rows, cols), dtype=object)
    flat = out.reshape(-1)
    for k, v in enumerate(m.entries()):
        flat[k] = cls(v)
    return out.view(BallArray)


def _fast_matmul(a: Any, b: Any) -> Any:
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.dtype != object or b.dtype != object:
        return None
    if a.ndim not in (1, 2) or b.ndim not in (1, 2) or a.size == 0 or b.size == 0:
        return None
    prec = _common_prec(a, b)
    if prec is None:
        return None
    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    if a2.shape[1] != b2.shape[0]:
        return None  # let NumPy raise its shape error
    with precision(prec):
        prod = to_arb_mat(a2) * to_arb_mat(b2)
    out = from_arb_mat(prod, prec)
    if a.ndim == 1 and b.ndim == 1:
        return out[0, 0]
    if a.ndim == 1:
        return out.reshape(-1)
    if b.ndim == 1:
        return out.reshape(-1)
    return out


# ===================================================================== the backend
class FlintBackend(ObjectBackend):
    """Arb balls at ``digits`` decimal digits: object arrays (:class:`BallArray`) of balls."""

    family = "flint"
    method = "high-precision"

    def __init__(self, digits: int = DEFAULT_DIGITS) -> None:
        if digits < 16:
            raise BackendError("flint backend needs at least 16 digits (use float64 below that)")
        self.flint = require_flint()
        self.digits = digits
        self.prec = self.prec_of(digits)
        self.ball = ball_class(self.prec)
        self.name = "flint" if digits == DEFAULT_DIGITS else f"flint-{digits}"
        self.eps = math.ldexp(1.0, -self.prec)
        self.mpmath = MpmathBackend(digits)
        """mpmath at this precision, for what Arb lacks (the SVD)."""

    @staticmethod
    def prec_of(digits: int) -> int:
        """Bits for ``digits`` decimal digits: the same binary precision as mpmath's."""
        return int(dps_to_prec(digits))

    @property
    def label(self) -> str:
        return f"flint-{self.digits}"

    def precision(self) -> contextlib.AbstractContextManager[None]:
        """A context running python-flint at this backend's precision (restored on exit)."""
        return precision(self.prec)

    @property
    def zero(self) -> Scalar:
        return self.ball(0)

    @property
    def one(self) -> Scalar:
        return self.ball(1)

    def _from_number(self, v: Any) -> Scalar:
        flint = self.flint
        if isinstance(v, flint.arb):
            return self.ball(v)  # an exact copy, whatever the ball's precision
        if hasattr(v, "_mpf_"):  # an mpmath mpf: carry every bit (never via float)
            sign, man, exp, _ = v._mpf_
            if not man and exp:  # mpmath encodes inf and nan with a zero mantissa
                return self.ball(float(v))
            return self.ball(flint.arb((-man if sign else man, exp)))
        if isinstance(v, (int, np.integer)):
            return self.ball(flint.arb(flint.fmpz(int(v))))
        if isinstance(v, (float, np.floating)):
            return self.ball(float(v))  # binary floats are exact in arb
        if isinstance(v, str):
            try:
                v = Fraction(v.strip())  # decimals parse exactly, then round once to this precision
            except ValueError:
                with self.precision():  # Arb's own syntax, e.g. "[0.1 +/- 1e-20]"
                    return self.ball(flint.arb(v.strip()))
        with self.precision():
            if isinstance(v, Fraction):
                return self.ball(flint.arb(flint.fmpq(v.numerator, v.denominator)))
            if hasattr(v, "p") and hasattr(v, "q"):  # a SymPy Rational
                return self.ball(flint.arb(flint.fmpq(int(v.p), int(v.q))))
            return self.ball(float(v))

    def _is_native(self, v: Any) -> bool:
        return isinstance(v, self.ball)

    def _pivot_key(self, v: Scalar) -> float:
        return abs(float(v.mid()))

    # ----------------------------------------------------------------- construction
    def asarray(self, x: Any, *, name: str = "array") -> Array:
        if isinstance(x, np.ndarray) and x.dtype == object and x.size and all(self._is_native(v) for v in x.flat):
            return x.view(BallArray)
        return super().asarray(x, name=name).view(BallArray)

    def zeros(self, shape: int | tuple[int, ...]) -> Array:
        return super().zeros(shape).view(BallArray)

    def concat(self, xs: Any, axis: int = 0) -> Array:
        return super().concat(xs, axis=axis).view(BallArray)

    def stack(self, xs: Any, axis: int = 0) -> Array:
        return super().stack(xs, axis=axis).view(BallArray)

    # ----------------------------------------------------------------- conversion
    def to_numpy(self, x: Array) -> np.ndarray:
        return np.asarray(nested_map(lambda v: float(v.mid()), x), dtype=np.float64)

    def to_strings(self, x: Array) -> Any:
        """Midpoints as exact decimals (every dyadic number has one): they parse back exactly."""
        return nested_map(lambda v: exact_decimal(v.mid()), x)

    # ----------------------------------------------------------------- elementwise
    def _apply(self, fn: Any, x: Any) -> Any:
        with self.precision():
            out = self._map(lambda v: self.ball(fn(self.scalar(v))), x)
        return out.view(BallArray) if isinstance(out, np.ndarray) else out

    def sqrt(self, x: Any) -> Any:
        """Square root; a ball that reaches below zero is clipped to its nonnegative part first
        (the quantities generic code takes roots of are nonnegative in exact arithmetic)."""
        return self._apply(lambda v: v.sqrt() if (v < 0) else v.nonnegative_part().sqrt(), x)

    def abs(self, x: Any) -> Any:
        return self._apply(abs, x)

    def sign(self, x: Any) -> Any:
        def sgn(v: Any) -> Any:
            m = v.mid()
            return self.ball(0 if m == 0 else (1 if m > 0 else -1))

        return self._apply(sgn, x)

    def exp(self, x: Any) -> Any:
        return self._apply(lambda v: v.exp(), x)

    def log(self, x: Any) -> Any:
        return self._apply(lambda v: v.log(), x)

    def cos(self, x: Any) -> Any:
        return self._apply(lambda v: v.cos(), x)

    def sin(self, x: Any) -> Any:
        return self._apply(lambda v: v.sin(), x)

    def atan2(self, y: Any, x: Any) -> Any:
        def at(a: Any, c: Any) -> Any:
            with self.precision():
                a, c = self.scalar(a), self.scalar(c)
                if a.mid() == 0 and c.mid() == 0:
                    return self.zero
                return self.ball(self.flint.arb.atan2(a, c))

        out = self._map2(at, y, x)
        return out.view(BallArray) if isinstance(out, np.ndarray) else out

    def pi(self) -> Scalar:
        with self.precision():
            return self.ball(self.flint.arb.pi())

    # ----------------------------------------------------------------- reductions
    def max_abs(self, x: Array) -> Scalar:
        """The entry of largest midpoint magnitude, as a ball (0 for an empty array)."""
        best, key = self.zero, -1.0
        for v in np.asarray(x, dtype=object).reshape(-1):
            k = abs(float(v.mid()))
            if k > key:
                best, key = v, k
        return abs(best)

    def norm(self, x: Array) -> Scalar:
        """Frobenius norm, as an enclosure: no scaling is needed (Arb's exponents are unbounded),
        and dividing by a ball that reaches zero, as the generic scaling would, is avoided."""
        return self.ball(frobenius_enclosure(x))

    # ----------------------------------------------------------------- linear algebra
    def matmul(self, a: Array, b: Array) -> Array:
        """``a @ b`` through ``flint.arb_mat`` (the fast path ``@`` takes on these arrays)."""
        out = _fast_matmul(self.asarray(a), self.asarray(b))
        if out is None:
            raise BackendError("flint matmul needs 1-D or 2-D arrays of matching inner dimension")
        return out

    def solve(self, a: Array, b: Array) -> Array:
        """Solve ``a x = b`` through ``flint.arb_mat.solve`` (an enclosure of the exact solution);
        when Arb cannot prove the matrix nonsingular, Gaussian elimination on the midpoints'
        pivots decides, and a solution that is not finite means a singular matrix."""
        aa, bb = self.asarray(a, name="a"), self.asarray(b, name="b")
        n = aa.shape[0]
        if aa.ndim != 2 or aa.shape[1] != n or n == 0:
            return super().solve(aa, bb)
        vec = bb.ndim == 1
        rhs = bb.reshape(n, 1) if vec else bb
        try:
            with self.precision():
                ma, mb = to_arb_mat(aa), to_arb_mat(rhs)
                try:  # ball LU first (fast); Arb's preconditioned solve when LU cannot certify its pivots
                    sol = ma.solve(mb, algorithm="lu")
                except ZeroDivisionError:
                    sol = ma.solve(mb)
            out = from_arb_mat(sol, self.prec)
        except ZeroDivisionError:
            out = super().solve(aa, rhs).view(BallArray)
            if not self.all_finite(out):
                raise SingularError(
                    f"matrix of size {n} is singular or too ill-conditioned for {self.digits}-digit ball arithmetic"
                ) from None
        return out.reshape(n) if vec else out

    def svd(self, a: Array) -> tuple[Array, Array, Array]:
        """The SVD of the midpoints, computed by mpmath at this precision (Arb has no SVD)."""
        hp = self.mpmath
        u, s, v = hp.svd(hp.asarray(np.asarray(a, dtype=object)))
        return self.asarray(u), self.asarray(s), self.asarray(v)

    # ----------------------------------------------------------------- predicates
    def is_zero(self, x: Any) -> bool:
        """True when every midpoint is exactly zero (the test mpmath makes at its value)."""
        if hasattr(x, "reshape"):
            return all(v.mid() == 0 for v in np.asarray(x, dtype=object).reshape(-1))
        return bool(self.scalar(x).mid() == 0)

    def all_finite(self, x: Array) -> bool:
        return all(v.is_finite() for v in np.asarray(x, dtype=object).reshape(-1))

    def positive(self, x: Scalar) -> bool:
        return bool(self.scalar(x).mid() > 0)


# ===================================================================== rigorous bounds
def exact_decimal(x: Any) -> str:
    """The exact decimal expansion of an exact (dyadic) arb, e.g. a ball's midpoint."""
    return _decimal(_fraction(x))


def _fraction(x: Any) -> Fraction:
    man, exp = x.man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man * 2**exp) if exp >= 0 else Fraction(man, 2**-exp)


def _decimal(f: Fraction) -> str:
    if f.denominator == 1:
        return str(f.numerator)
    k = f.denominator.bit_length() - 1  # a power of two: f = p / 2^k = p 5^k / 10^k
    digits = abs(f.numerator) * 5**k
    s = str(digits).rjust(k + 1, "0")
    out = (s[:-k] + "." + s[-k:]).rstrip("0").rstrip(".")
    return ("-" if f.numerator < 0 else "") + out


def _rounded(f: Fraction, digits: int, rounding: str) -> str:
    """``f`` to ``digits`` significant decimal digits, rounded in the given direction."""
    if f == 0:
        return "0"
    with localcontext() as c:
        c.prec = digits
        c.rounding = rounding
        value = Decimal(f.numerator) / Decimal(f.denominator)
    return f"{value:.{digits - 1}e}"


def upper_bound(x: Any, digits: int = 3) -> str:
    """A decimal number >= every point of the ball ``x`` (rounded up)."""
    return _rounded(_fraction(x.upper()), digits, ROUND_CEILING)


def lower_bound(x: Any, digits: int = 3) -> str:
    """A decimal number <= every point of the ball ``x`` (rounded down)."""
    return _rounded(_fraction(x.lower()), digits, ROUND_FLOOR)


def frobenius_enclosure(x: Any) -> Any:
    """A ball containing the Frobenius norm of an array of balls (every entry's ball counted)."""
    vals = list(np.asarray(x, dtype=object).reshape(-1))
    prec = max((type(v).prec for v in vals if is_ball(v)), default=dps_to_prec(DEFAULT_DIGITS))
    flint = require_flint()
    with precision(int(prec)):
        total = flint.arb(0)
        for v in vals:
            a = abs(flint.arb(v))
            total += a * a
        return total.nonnegative_part().sqrt()


Status = Literal["proved", "violated", "undecided"]


@dataclass(frozen=True)
class Proof:
    """What an enclosure proves about ``quantity <= threshold``: ``proved`` (the whole ball is
    below the threshold), ``violated`` (the whole ball is above it) or ``undecided`` (it
    straddles the threshold: more precision is needed, and nothing is claimed)."""

    status: Status
    lower: str
    upper: str
    threshold: str

    @property
    def text(self) -> str:
        """The proved statement, with the enclosure's ends rounded outward."""
        if self.status == "proved":
            return f"proved <= {self.upper} < {self.threshold}"
        if self.status == "violated":
            return f"proved >= {self.lower} > {self.threshold}"
        return f"undecided: enclosure [{self.lower}, {self.upper}] contains {self.threshold}"


def prove_below(x: Any, threshold: str | Fraction) -> Proof:
    """Decide ``x <= threshold`` from the ball ``x`` alone; ``threshold`` is exact (a decimal
    string such as ``"1e-40"`` or a Fraction), so no rounding enters the comparison."""
    t = Fraction(threshold)
    lo, hi = _fraction(x.lower()), _fraction(x.upper())
    if not x.is_finite():
        status: Status = "undecided"
    elif hi < t:
        status = "proved"
    elif lo > t:
        status = "violated"
    else:
        status = "undecided"
    shown = threshold if isinstance(threshold, str) else str(threshold)
    return Proof(status, lower_bound(x) if x.is_finite() else "-inf", upper_bound(x) if x.is_finite() else "inf", shown)
