"""mpmath backend: binary floating point at any chosen precision (default 50 digits).

Each backend instance owns its own ``mpmath.MPContext``, so precisions never leak between
checks through mpmath's global ``mp.dps``.
"""

from __future__ import annotations

from typing import Any

import mpmath

from orthoverify.backends.base import Array, Scalar, nested_map
from orthoverify.backends.object_backend import ObjectBackend
from orthoverify.errors import BackendError

DEFAULT_DIGITS = 50


class MpmathBackend(ObjectBackend):
    """High-precision arithmetic: object arrays of ``mpf`` from a private context."""

    family = "mpmath"
    method = "high-precision"

    def __init__(self, digits: int = DEFAULT_DIGITS) -> None:
        if digits < 16:
            raise BackendError("mpmath backend needs at least 16 digits (use float64 below that)")
        self.ctx = mpmath.MPContext()
        self.ctx.dps = digits
        self.digits = digits
        self.name = "mpmath" if digits == DEFAULT_DIGITS else f"mpmath-{digits}"
        self.eps = float(mpmath.mpf(2) ** (-self.ctx.prec))

    @property
    def label(self) -> str:
        return f"mpmath-{self.digits}"

    @property
    def zero(self) -> Scalar:
        return self.ctx.zero

    @property
    def one(self) -> Scalar:
        return self.ctx.one

    def _from_number(self, v: Any) -> Scalar:
        if hasattr(v, "_mpf_"):  # an mpf of any mpmath context: carry every digit (never via float)
            return self.ctx.make_mpf(v._mpf_)
        if isinstance(v, mpmath.mpf):
            return self.ctx.mpf(v)
        if isinstance(v, (int, float, str)):
            return self.ctx.mpf(v)
        if hasattr(v, "p") and hasattr(v, "q"):  # a SymPy Rational
            return self.ctx.mpf(int(v.p)) / int(v.q)
        return self.ctx.mpf(float(v))

    def _is_native(self, v: Any) -> bool:
        return isinstance(v, self.ctx.mpf)

    def _pivot_key(self, v: Scalar) -> float:
        return float(abs(v))

    def to_strings(self, x: Array) -> Any:
        digits = int(self.ctx.prec * 0.30103) + 3
        return nested_map(lambda v: self.ctx.nstr(v, digits, strip_zeros=True), x)

    def sqrt(self, x: Any) -> Any:
        return self._map(self.ctx.sqrt, x)

    def abs(self, x: Any) -> Any:
        return self._map(abs, x)

    def sign(self, x: Any) -> Any:
        return self._map(lambda v: self.ctx.mpf(self.ctx.sign(v)), x)

    def exp(self, x: Any) -> Any:
        return self._map(self.ctx.exp, x)

    def log(self, x: Any) -> Any:
        return self._map(self.ctx.log, x)

    def cos(self, x: Any) -> Any:
        return self._map(self.ctx.cos, x)

    def sin(self, x: Any) -> Any:
        return self._map(self.ctx.sin, x)

    def atan2(self, y: Any, x: Any) -> Any:
        return self._map2(self.ctx.atan2, y, x)

    def pi(self) -> Scalar:
        return +self.ctx.pi

    def svd(self, a: Array) -> tuple[Array, Array, Array]:
        m, n = a.shape
        if m < n:  # mpmath's full SVD wants rows >= columns: use the transpose
            v, s, u = self.svd(self.transpose(a))
            return u, s, v
        u, s, vt = self.ctx.svd_r(self.ctx.matrix(a.tolist()), full_matrices=True)
        uu = self.asarray([[u[i, j] for j in range(m)] for i in range(m)])
        ss = self.asarray([s[i] for i in range(min(m, n))]) if n else self.zeros(0)
        vv = self.asarray([[vt[j, i] for j in range(n)] for i in range(n)])
        return uu, ss, vv

    def is_zero(self, x: Any) -> bool:
        if hasattr(x, "reshape"):
            return all(v == 0 for v in x.reshape(-1))
        return bool(x == 0)

    def all_finite(self, x: Array) -> bool:
        return all(self.ctx.isfinite(v) for v in x.reshape(-1))

    def positive(self, x: Scalar) -> bool:
        return bool(x > 0)
