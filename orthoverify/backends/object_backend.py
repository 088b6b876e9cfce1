"""Shared base of the backends whose arrays are NumPy object arrays of Python scalars.

mpmath (high precision) and SymPy (exact) scalars both support ``+ - * /``, so NumPy's
object-dtype ``@``, slicing and broadcasting work on them unchanged; this base supplies the
rest of the protocol (construction, solves by elimination, reductions) once.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from orthoverify.backends.base import Array, Backend, Scalar, host_array, nested_map, reject_dtype
from orthoverify.backends.numbers import parse_exact
from orthoverify.errors import ParseError, SingularError


class ObjectBackend(Backend):
    """Arrays are ``numpy.ndarray`` of dtype object holding this backend's scalars."""

    @property
    @abstractmethod
    def zero(self) -> Scalar:
        """The scalar 0 of this arithmetic."""

    @property
    @abstractmethod
    def one(self) -> Scalar:
        """The scalar 1 of this arithmetic."""

    @abstractmethod
    def _from_number(self, v: Any) -> Scalar:
        """Convert one Python/NumPy number or string to a scalar of this arithmetic."""

    @abstractmethod
    def _is_native(self, v: Any) -> bool:
        """True when ``v`` already is a scalar of this arithmetic."""

    @abstractmethod
    def _pivot_key(self, v: Scalar) -> float:
        """A magnitude used to choose elimination pivots (0 means an exact zero)."""

    # ----------------------------------------------------------------- construction
    def scalar(self, v: Any) -> Scalar:
        if self._is_native(v):
            return v
        if isinstance(v, str) and "/" in v:
            frac = parse_exact(v)  # strict p/q, never evaluated
            return self._from_number(frac.numerator) / self._from_number(frac.denominator)
        return self._from_number(v)

    def asarray(self, x: Any, *, name: str = "array") -> Array:
        arr = x if isinstance(x, np.ndarray) else host_array(x, name, self.label, dtype=object)
        if arr.dtype.kind in "bc" or arr.dtype == np.float16:
            raise reject_dtype(str(arr.dtype), name, self.label)
        if arr.dtype.kind in "iuf":
            arr = arr.astype(np.float64) if arr.dtype.kind == "f" else arr
        out = np.empty(arr.shape, dtype=object)
        flat_in = arr.reshape(-1)
        flat_out = out.reshape(-1)
        for i, v in enumerate(flat_in):
            if v is None or isinstance(v, (bool, np.bool_, complex, np.complexfloating)):
                raise reject_dtype(type(v).__name__, name, self.label)
            try:
                flat_out[i] = self.scalar(v.item() if isinstance(v, np.generic) else v)
            except ParseError as exc:
                raise ParseError(f"{name}: {exc}") from None
            except (TypeError, ValueError) as exc:
                raise reject_dtype(type(v).__name__, name, self.label) from exc
        return out

    def zeros(self, shape: int | tuple[int, ...]) -> Array:
        return np.full(shape, self.zero, dtype=object)

    def eye(self, n: int) -> Array:
        out = self.zeros((n, n))
        for i in range(n):
            out[i, i] = self.one
        return out

    # ----------------------------------------------------------------- elementwise
    def _map(self, fn: Any, x: Any) -> Any:
        if isinstance(x, np.ndarray):
            out = np.empty(x.shape, dtype=object)
            flat = out.reshape(-1)
            for i, v in enumerate(x.reshape(-1)):
                flat[i] = fn(v)
            return out
        return fn(x)

    def _map2(self, fn: Any, x: Any, y: Any) -> Any:
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            xs, ys = np.broadcast_arrays(np.asarray(x, dtype=object), np.asarray(y, dtype=object))
            out = np.empty(xs.shape, dtype=object)
            flat = out.reshape(-1)
            for i, (a, c) in enumerate(zip(xs.reshape(-1), ys.reshape(-1), strict=True)):
                flat[i] = fn(a, c)
            return out
        return fn(x, y)

    def to_numpy(self, x: Array) -> np.ndarray:
        return np.asarray(nested_map(float, x), dtype=np.float64)

    # ----------------------------------------------------------------- reductions
    def sum(self, x: Array) -> Scalar:
        total = self.zero
        for v in np.asarray(x, dtype=object).reshape(-1):
            total = total + v
        return total

    def max_abs(self, x: Array) -> Scalar:
        best = self.zero
        for v in np.asarray(x, dtype=object).reshape(-1):
            a = self.abs(v)
            if a > best:
                best = a
        return best

    # ----------------------------------------------------------------- structure
    def transpose(self, x: Array) -> Array:
        return x.T.copy()

    def _mask(self, x: Array, keep: np.ndarray) -> Array:
        out = x.copy()
        out[~keep] = self.zero
        return out

    def triu(self, x: Array, k: int = 0) -> Array:
        i, j = np.indices(x.shape)
        return self._mask(x, j - i >= k)

    def tril(self, x: Array, k: int = 0) -> Array:
        i, j = np.indices(x.shape)
        return self._mask(x, j - i <= k)

    def diagonal(self, x: Array) -> Array:
        return np.diagonal(x).copy()

    def diag(self, v: Array) -> Array:
        n = v.shape[0]
        out = self.zeros((n, n))
        for i in range(n):
            out[i, i] = v[i]
        return out

    def concat(self, xs: Sequence[Array], axis: int = 0) -> Array:
        return np.concatenate([np.asarray(x, dtype=object) for x in xs], axis=axis)

    def stack(self, xs: Sequence[Array], axis: int = 0) -> Array:
        return np.stack([np.asarray(x, dtype=object) for x in xs], axis=axis)

    # ----------------------------------------------------------------- linear algebra
    def solve(self, a: Array, b: Array) -> Array:
        """Gaussian elimination with partial pivoting (largest magnitude, exact zeros skipped)."""
        n = a.shape[0]
        vec = b.ndim == 1
        aug = self.concat([a.copy(), (b.reshape(n, 1) if vec else b).copy()], axis=1)
        for col in range(n):
            keys = [self._pivot_key(aug[r, col]) for r in range(col, n)]
            piv = col + int(np.argmax(keys))
            if keys[piv - col] == 0:
                raise SingularError(f"matrix of size {n} is singular (column {col} has no pivot)")
            if piv != col:
                aug[[col, piv]] = aug[[piv, col]]
            for r in range(col + 1, n):
                f = aug[r, col] / aug[col, col]
                if not self.is_zero(f):
                    aug[r, col:] = aug[r, col:] - f * aug[col, col:]
        sol = self.solve_triangular(aug[:, :n], aug[:, n:], upper=True)
        return sol.reshape(n) if vec else sol
