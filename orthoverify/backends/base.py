"""The backend protocol: the small set of array operations orthoverify's algorithms use.

Every parametrisation in :mod:`orthoverify.param` is written once against this protocol and
runs unchanged on NumPy (float32, float64), PyTorch (float32, float64; cpu or cuda), mpmath
(any precision) and SymPy (exact). Arithmetic operators (``+ - * / @``, unary minus,
slicing) are used directly on the native arrays, which all support them; everything else
(construction, square roots, norms, solves, exact zero tests) goes through a backend method.

Rules for generic code: use integer literals only (``x / 2``, never ``0.5 * x``), so exact
backends stay exact; build arrays functionally (lists of columns, then :meth:`stack_columns`)
so that torch autograd never sees an in-place write.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from decimal import Decimal
from typing import Any, Literal

import numpy as np

from orthoverify.errors import BackendError, DTypeError, InputError, NonFiniteError, ShapeError

Array = Any
"""A native array of some backend (numpy.ndarray, torch.Tensor, or an object ndarray)."""

Scalar = Any
"""A native scalar of some backend (numpy float, 0-d tensor, mpf, SymPy expression)."""

Method = Literal["symbolic", "high-precision", "rigorous", "float", "exhaustive", "search", "measured"]


class Backend(ABC):
    """One arithmetic: a dtype and a place to compute (see the module docstring)."""

    #: Stable name used on the command line and in results, e.g. ``"numpy-float64"``.
    name: str
    #: Library family: ``numpy``, ``torch``, ``mpmath``, ``sympy`` or ``flops``.
    family: str
    #: Evidence method a check on this backend produces.
    method: Method
    #: Unit roundoff of the arithmetic; 0.0 for exact arithmetic.
    eps: float
    #: Smallest positive normal number (below it gradual underflow loses relative accuracy);
    #: 0.0 where the exponent range is effectively unbounded (mpmath) or arithmetic is exact.
    tiny: float = 0.0
    #: Decimal digits of the arithmetic, or None when exact.
    digits: int | None

    @property
    def exact(self) -> bool:
        """True when arithmetic is exact (no rounding)."""
        return self.eps == 0.0

    @property
    def label(self) -> str:
        """Name recorded in results (includes the device where one applies)."""
        return self.name

    def __repr__(self) -> str:
        return f"<backend {self.label}>"

    # ----------------------------------------------------------------- construction
    @abstractmethod
    def asarray(self, x: Any, *, name: str = "array") -> Array:
        """Convert numbers, nested lists, NumPy arrays or decimal strings to a native array."""

    @abstractmethod
    def zeros(self, shape: int | tuple[int, ...]) -> Array:
        """An array of zeros."""

    @abstractmethod
    def eye(self, n: int) -> Array:
        """The n x n identity."""

    @abstractmethod
    def scalar(self, v: Any) -> Scalar:
        """A native scalar from a Python number or decimal string."""

    # ----------------------------------------------------------------- conversion
    @abstractmethod
    def to_numpy(self, x: Array) -> np.ndarray:
        """A float64 NumPy copy (rounded for high-precision and exact backends)."""

    @abstractmethod
    def to_strings(self, x: Array) -> Any:
        """Nested lists of decimal strings that reproduce ``x`` exactly when parsed back."""

    def to_float(self, x: Scalar) -> float:
        """A Python float of a scalar."""
        return float(self.to_numpy(x).reshape(()))

    # ----------------------------------------------------------------- elementwise maths
    @abstractmethod
    def sqrt(self, x: Any) -> Any:
        """Square root (scalar or elementwise)."""

    @abstractmethod
    def abs(self, x: Any) -> Any:
        """Absolute value (scalar or elementwise)."""

    @abstractmethod
    def sign(self, x: Any) -> Any:
        """Sign: -1, 0 or 1 in this arithmetic (scalar or elementwise)."""

    def exp(self, x: Any) -> Any:
        """Exponential (scalar or elementwise)."""
        raise BackendError(f"backend {self.name} has no exponential")

    def log(self, x: Any) -> Any:
        """Natural logarithm of positive values (scalar or elementwise)."""
        raise BackendError(f"backend {self.name} has no logarithm")

    def cos(self, x: Any) -> Any:
        """Cosine (scalar or elementwise): phases e^(i theta) = cos theta + i sin theta."""
        raise BackendError(f"backend {self.name} has no cosine")

    def sin(self, x: Any) -> Any:
        """Sine (scalar or elementwise)."""
        raise BackendError(f"backend {self.name} has no sine")

    def atan2(self, y: Any, x: Any) -> Any:
        """The angle of the point (x, y) in (-pi, pi] (scalar or elementwise; 0 at the origin)."""
        raise BackendError(f"backend {self.name} has no atan2")

    def pi(self) -> Scalar:
        """The constant pi in this arithmetic (exact for exact arithmetic)."""
        raise BackendError(f"backend {self.name} has no pi")

    # ----------------------------------------------------------------- reductions
    @abstractmethod
    def max_abs(self, x: Array) -> Scalar:
        """Largest absolute entry (0 for an empty array)."""

    @abstractmethod
    def sum(self, x: Array) -> Scalar:
        """Sum of all entries."""

    def norm(self, x: Array) -> Scalar:
        """Frobenius norm, computed with scaling so that it neither overflows nor underflows."""
        s = self.max_abs(x)
        if self.is_zero(s):
            return s
        y = x / s
        return s * self.sqrt(self.sum(y * y))

    # ----------------------------------------------------------------- structure
    @abstractmethod
    def transpose(self, x: Array) -> Array:
        """Transpose of a 2-D array."""

    @abstractmethod
    def triu(self, x: Array, k: int = 0) -> Array:
        """Upper triangle (entries with j - i >= k)."""

    @abstractmethod
    def tril(self, x: Array, k: int = 0) -> Array:
        """Lower triangle (entries with j - i <= k)."""

    @abstractmethod
    def diagonal(self, x: Array) -> Array:
        """Main diagonal of a 2-D array, as a vector."""

    @abstractmethod
    def diag(self, v: Array) -> Array:
        """Square matrix with ``v`` on its diagonal."""

    @abstractmethod
    def concat(self, xs: Sequence[Array], axis: int = 0) -> Array:
        """Concatenate along an existing axis."""

    @abstractmethod
    def stack(self, xs: Sequence[Array], axis: int = 0) -> Array:
        """Stack along a new axis."""

    def stack_columns(self, cols: Sequence[Array], n: int) -> Array:
        """Matrix whose columns are the given length-n vectors (n x 0 when there are none)."""
        if len(cols) == 0:
            return self.zeros((n, 0))
        return self.stack([c.reshape(n) for c in cols], axis=1)

    def outer(self, a: Array, b: Array) -> Array:
        """Outer product a b' of two vectors."""
        return a.reshape(-1, 1) @ b.reshape(1, -1)

    def block_diag(self, a: Array, b: Array) -> Array:
        """The block-diagonal matrix diag(a, b)."""
        p, q = a.shape[0], b.shape[0]
        top = self.concat([a, self.zeros((p, q))], axis=1)
        bottom = self.concat([self.zeros((q, p)), b], axis=1)
        return self.concat([top, bottom], axis=0)

    # ----------------------------------------------------------------- linear algebra
    @abstractmethod
    def solve(self, a: Array, b: Array) -> Array:
        """Solve a x = b for square a."""

    def svd(self, a: Array) -> tuple[Array, Array, Array]:
        """Full SVD ``a = U diag(s) V'`` (U, V square orthogonal, s descending and >= 0), as
        (U, s, V). Exact arithmetic has none: singular values are irrational in general."""
        raise BackendError(f"backend {self.name} cannot compute an SVD")

    def solve_triangular(self, t: Array, b: Array, *, upper: bool) -> Array:
        """Solve t x = b for triangular t by substitution (generic; fast backends override)."""
        m = t.shape[0]
        vec = b.ndim == 1
        rhs = b.reshape(m, 1) if vec else b
        rows: list[Any] = [None] * m
        order = range(m - 1, -1, -1) if upper else range(m)
        for i in order:
            acc = rhs[i : i + 1, :]
            others = range(i + 1, m) if upper else range(i)
            for j in others:
                acc = acc - t[i, j] * rows[j]
            rows[i] = acc / t[i, i]
        out = self.concat(rows, axis=0) if m else rhs
        return out.reshape(m) if vec else out

    # ----------------------------------------------------------------- predicates
    @abstractmethod
    def is_zero(self, x: Any) -> bool:
        """True when every entry is exactly zero (decided symbolically for exact backends)."""

    def equal(self, a: Any, b: Any) -> bool:
        """Exact equality test of the arithmetic (the test a printed algorithm performs)."""
        return self.is_zero(a - b)

    @abstractmethod
    def all_finite(self, x: Array) -> bool:
        """True when no entry is NaN or Inf."""

    @abstractmethod
    def positive(self, x: Scalar) -> bool:
        """True when a scalar is strictly positive."""

    # ----------------------------------------------------------------- validation
    def check_array(self, x: Any, *, name: str, ndim: int | None = None) -> Array:
        """Convert ``x`` to a native array and reject bad dtypes, shapes and non-finite values."""
        arr = self.asarray(x, name=name)
        if ndim is not None and arr.ndim != ndim:
            raise ShapeError(f"{name} must be {ndim}-dimensional, got shape {tuple(arr.shape)}")
        if not self.all_finite(arr):
            raise NonFiniteError(f"{name} contains NaN or Inf")
        return arr


def reject_dtype(dtype_name: str, name: str, backend: str) -> DTypeError:
    """The error for an unsupported input dtype, with what to do instead."""
    if "complex" in dtype_name:
        hint = "this is a real parametrisation; pass real and imaginary parts separately"
    elif dtype_name in ("float16", "bfloat16", "half"):
        hint = "half precision is not supported; use float32 or float64"
    else:
        hint = "use a float32 or float64 array"
    return DTypeError(f"{name} has unsupported dtype {dtype_name} for backend {backend}: {hint}")


def host_array(x: Any, name: str, backend: str, *, dtype: Any = None) -> np.ndarray:
    """``x`` as a NumPy array, every way in which that fails named: the one door through which
    user input (numbers, nested lists, NumPy arrays, torch tensors) reaches the backends.

    Torch tensors are detached and copied to the cpu; a meta tensor (no data), a half-precision
    or complex tensor, a list of tensors that require grad, a ragged nested list and anything
    NumPy cannot turn into an array raise :class:`InputError` (a :class:`DTypeError` or
    :class:`ShapeError` where that is what is wrong) naming ``name``."""
    if hasattr(x, "detach") and hasattr(x, "dtype") and hasattr(x, "device"):  # a torch tensor
        x = tensor_data(x, name, backend)
    try:
        return np.asarray(x) if dtype is None else np.asarray(x, dtype=dtype)
    except RuntimeError as exc:  # numpy's __array__ of a tensor that requires grad, or on another device
        raise InputError(
            f"{name} is a list holding torch tensors NumPy cannot read ({str(exc).splitlines()[0]}); "
            "pass one tensor (torch.stack) or plain numbers"
        ) from None
    except (ValueError, TypeError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "inhomogeneous" in msg or "sequence" in msg:
            raise ShapeError(f"{name} is a ragged nested sequence, not an array: {msg}") from None
        raise DTypeError(f"{name} cannot be read as an array of numbers for backend {backend}: {msg}") from None


def tensor_data(x: Any, name: str, backend: str) -> np.ndarray:
    """A torch tensor's values as a NumPy array (detached, on the cpu), refusing what has no
    float64 reading: meta tensors, half precision, complex and bool tensors."""
    if x.device.type == "meta":
        raise InputError(f"{name} is a meta tensor: it has a shape but no values to compute with")
    dtype_name = str(x.dtype).replace("torch.", "")
    if x.is_complex() or dtype_name in ("bool", "float16", "bfloat16") or "float8" in dtype_name:
        raise reject_dtype(dtype_name, name, backend)
    return np.asarray(x.detach().cpu().numpy())


def exact_decimal(v: float) -> str:
    """The exact decimal expansion of a binary float (parses back to the same value)."""
    if math.isnan(v) or math.isinf(v):
        return str(v)
    if v == 0.0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    return str(Decimal(v))  # exact: every binary float has a finite decimal expansion


def nested_map(fn: Any, x: Any) -> Any:
    """Apply ``fn`` to every leaf of a NumPy array, returning nested lists."""
    arr = np.asarray(x, dtype=object)
    if arr.ndim == 0:
        return fn(arr.item())
    return [nested_map(fn, row) for row in arr]
