"""NumPy backends: float32 and float64 arithmetic on numpy.ndarray."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from orthoverify.backends.base import (
    Array,
    Backend,
    Scalar,
    exact_decimal,
    host_array,
    nested_map,
    reject_dtype,
)
from orthoverify.errors import DomainError, DTypeError


def _numeric_numpy(x: Any, name: str, backend: str) -> np.ndarray:
    """Parse numbers, nested lists of numbers or decimal strings, or arrays into a NumPy array
    (every failure a named :class:`~orthoverify.errors.InputError`, see ``host_array``)."""
    arr = host_array(x, name, backend)
    if arr.dtype.kind in "US":
        try:
            arr = np.vectorize(float, otypes=[np.float64])(arr) if arr.size else arr.astype(np.float64)
        except ValueError as exc:
            raise DTypeError(f"{name} holds a string that is not a decimal number: {exc}") from None
    elif arr.dtype == object:
        try:
            arr = np.vectorize(float, otypes=[np.float64])(arr) if arr.size else arr.astype(np.float64)
        except (TypeError, ValueError, RuntimeError) as exc:
            raise reject_dtype("object", name, backend) from exc
    if arr.dtype.kind == "b" or arr.dtype.kind == "c" or arr.dtype == np.float16:
        raise reject_dtype(str(arr.dtype), name, backend)
    if arr.dtype.kind not in "iuf":
        raise reject_dtype(str(arr.dtype), name, backend)
    return arr


def narrowed(arr: np.ndarray, dtype: Any, name: str, backend: str) -> np.ndarray:
    """``arr`` cast to ``dtype``; a finite value beyond a narrower dtype's range (float64 1e160 to
    float32) raises :class:`DomainError` naming the range instead of becoming Inf."""
    with np.errstate(over="ignore"):  # reported below, by name
        out = arr.astype(dtype, copy=False)
    if out.dtype.itemsize < arr.dtype.itemsize and arr.dtype.kind in "fiu" and out.size:
        bad = np.isinf(out) & np.isfinite(arr)
        if bool(bad.any()):
            big = float(np.finfo(out.dtype).max)
            raise DomainError(f"{name} has entries beyond {backend}'s range [-{big:.3g}, {big:.3g}]")
    return out


class NumpyBackend(Backend):
    """IEEE float32 or float64 arithmetic through NumPy."""

    family = "numpy"
    method = "float"

    def __init__(self, dtype: str = "float64") -> None:
        if dtype not in ("float32", "float64"):
            raise ValueError(f"unsupported numpy dtype {dtype}")
        self.dtype = np.dtype(dtype)
        self.name = f"numpy-{dtype}"
        self.eps = float(np.finfo(self.dtype).eps) / 2
        self.tiny = float(np.finfo(self.dtype).tiny)
        self.digits = int(np.finfo(self.dtype).precision)

    def asarray(self, x: Any, *, name: str = "array") -> Array:
        return narrowed(_numeric_numpy(x, name, self.name), self.dtype, name, self.name)

    def zeros(self, shape: int | tuple[int, ...]) -> Array:
        return np.zeros(shape, dtype=self.dtype)

    def eye(self, n: int) -> Array:
        return np.eye(n, dtype=self.dtype)

    def scalar(self, v: Any) -> Scalar:
        return self.dtype.type(float(v))

    def to_numpy(self, x: Array) -> np.ndarray:
        return np.asarray(x, dtype=np.float64)

    def to_strings(self, x: Array) -> Any:
        return nested_map(lambda v: exact_decimal(float(v)), np.asarray(x, dtype=np.float64))

    def sqrt(self, x: Any) -> Any:
        return np.sqrt(x)

    def abs(self, x: Any) -> Any:
        return np.abs(x)

    def sign(self, x: Scalar) -> Scalar:
        return np.sign(x)

    def exp(self, x: Any) -> Any:
        return np.exp(x)

    def log(self, x: Any) -> Any:
        return np.log(x)

    def cos(self, x: Any) -> Any:
        return np.cos(x)

    def sin(self, x: Any) -> Any:
        return np.sin(x)

    def atan2(self, y: Any, x: Any) -> Any:
        return np.arctan2(y, x)

    def pi(self) -> Scalar:
        return self.dtype.type(np.pi)

    def svd(self, a: Array) -> tuple[Array, Array, Array]:
        u, s, vt = np.linalg.svd(a, full_matrices=True)
        return u, s, vt.T

    def max_abs(self, x: Array) -> Scalar:
        a = np.asarray(x)
        return np.max(np.abs(a)) if a.size else self.dtype.type(0)

    def sum(self, x: Array) -> Scalar:
        return np.sum(x)

    def transpose(self, x: Array) -> Array:
        return x.T

    def triu(self, x: Array, k: int = 0) -> Array:
        return np.triu(x, k)

    def tril(self, x: Array, k: int = 0) -> Array:
        return np.tril(x, k)

    def diagonal(self, x: Array) -> Array:
        return np.diagonal(x).copy()

    def diag(self, v: Array) -> Array:
        return np.diag(v)

    def concat(self, xs: Sequence[Array], axis: int = 0) -> Array:
        return np.concatenate(list(xs), axis=axis)

    def stack(self, xs: Sequence[Array], axis: int = 0) -> Array:
        return np.stack(list(xs), axis=axis)

    def solve(self, a: Array, b: Array) -> Array:
        return np.linalg.solve(a, b)

    def solve_triangular(self, t: Array, b: Array, *, upper: bool) -> Array:
        # LU with partial pivoting never pivots on a triangular matrix: this is substitution.
        if t.shape[0] == 0:
            return b
        return np.linalg.solve(t, b)

    def is_zero(self, x: Any) -> bool:
        return bool(np.all(np.asarray(x) == 0))

    def all_finite(self, x: Array) -> bool:
        return bool(np.all(np.isfinite(x)))

    def positive(self, x: Scalar) -> bool:
        return bool(x > 0)
