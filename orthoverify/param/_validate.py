"""Input checks shared by the parametrisations: clear orthoverify errors, early."""

from __future__ import annotations

import math
import operator
from typing import Any

from orthoverify.backends import Array, Backend, get_backend, infer_backend
from orthoverify.errors import DomainError, DTypeError, NonFiniteError, NotOrthogonalError, ShapeError

BackendLike = Backend | str | None


def resolve(backend: BackendLike, first: Any) -> Backend:
    """The backend to compute in: given, named, or inferred from the first input array."""
    if isinstance(backend, Backend):
        return backend
    if isinstance(backend, str):
        return get_backend(backend)
    return infer_backend(first)


def vector(b: Backend, x: Any, name: str) -> Array:
    """A finite 1-D array."""
    return b.check_array(x, name=name, ndim=1)


def matrix(b: Backend, x: Any, name: str, *, square: bool = False) -> Array:
    """A finite 2-D array (square when asked)."""
    arr = b.check_array(x, name=name, ndim=2)
    if square and arr.shape[0] != arr.shape[1]:
        raise ShapeError(f"{name} must be square, got shape {tuple(arr.shape)}")
    return arr


def vector_or_columns(b: Backend, x: Any, name: str, n: int) -> tuple[Array, bool]:
    """A length-n vector or an n x B matrix of columns; returns it as 2-D and whether it was 1-D."""
    arr = b.check_array(x, name=name)
    if arr.ndim == 1:
        arr2 = arr.reshape(n, 1) if arr.shape[0] == n else None
        if arr2 is None:
            raise ShapeError(f"{name} must have length {n}, got {arr.shape[0]}")
        return arr2, True
    if arr.ndim == 2 and arr.shape[0] == n:
        return arr, False
    raise ShapeError(f"{name} must have shape ({n},) or ({n}, B), got {tuple(arr.shape)}")


def rows(b: Backend, x: Any, name: str) -> int:
    """The length of a vector, or the number of rows of a matrix of columns (ShapeError otherwise)."""
    arr = b.check_array(x, name=name)
    if arr.ndim not in (1, 2):
        raise ShapeError(f"{name} must be a vector or a matrix of columns, got shape {tuple(arr.shape)}")
    return int(arr.shape[0])


def orthogonality_ratio(w: Array, b: Backend) -> float:
    """``||W'W - I||_F / (n eps)``: the LAPACK-style test ratio of orthogonality (0 if exact)."""
    n = w.shape[0]
    resid = b.transpose(w) @ w - b.eye(n)
    if b.exact:
        return 0.0 if b.is_zero(resid) else float("inf")
    return b.to_float(b.norm(resid)) / (max(n, 1) * b.eps)


def require_orthogonal(b: Backend, x: Any, name: str, threshold: float) -> Array:
    """A finite square matrix that is orthogonal to within ``threshold`` (a test ratio of
    ||X'X - I||_F / (n eps)); else :class:`NotOrthogonalError` carrying the ratio."""
    xx = matrix(b, x, name, square=True)
    r = orthogonality_ratio(xx, b)
    if not r <= threshold:
        raise NotOrthogonalError(
            f"{name} is not orthogonal: ||{name}'{name} - I||_F / (n eps) = {r:.3g} > {threshold}",
            ratio=r,
            threshold=threshold,
        )
    return xx


MAX_SIZE = 1 << 16
"""The largest dimension (n, m, t, a length) a public function accepts: a 2^16 x 2^16 float64
matrix is already 32 GiB, and a bound keeps a mistyped size from running for hours."""


def integer(value: Any, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer argument (bool, float and str refused: :class:`DTypeError`) in
    [minimum, maximum] (else :class:`DomainError` naming the range)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise DTypeError(f"{name} must be an integer, got {value!r}")
    v = operator.index(value)
    if (minimum is not None and v < minimum) or (maximum is not None and v > maximum):
        lo = "-inf" if minimum is None else str(minimum)
        hi = "inf" if maximum is None else str(maximum)
        raise DomainError(f"{name} must lie in [{lo}, {hi}], got {v}")
    return v


def size(value: Any, name: str, *, minimum: int = 0) -> int:
    """A dimension: an integer (else :class:`ShapeError`) of at least ``minimum`` (else
    :class:`ShapeError`) and at most :data:`MAX_SIZE` (else :class:`DomainError`)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise ShapeError(f"{name} must be an integer size, got {value!r}")
    v = operator.index(value)
    if v < minimum:
        raise ShapeError(f"{name} must be >= {minimum}, got {v}")
    if v > MAX_SIZE:
        raise DomainError(f"{name} = {v} lies outside [{minimum}, {MAX_SIZE}], the sizes orthoverify accepts")
    return v


# --------------------------------------------------------------------------- scaling
def pow2_factors(b: Backend, s: Any) -> tuple[Any, Any] | None:
    """Two exact powers of two whose product is ``2^-e`` for ``s = f 2^e`` (f in [1/2, 1)), or
    None when ``s`` lies in the safe window ``[sqrt(tiny/eps), sqrt(eps/tiny)]`` of b's floats
    (where squares and products of such numbers neither overflow nor lose digits to underflow),
    when s is 0, or when b has no exponent range to leave (exact, mpmath).

    Scaling by these factors is exact, so a result computed from scaled inputs and scaled back
    equals the unscaled one bit for bit wherever the latter does not overflow or underflow;
    two factors because 2^-e alone can overflow for subnormal s (as the WY path does)."""
    if b.exact or b.tiny == 0.0:
        return None
    v = abs(b.to_float(s))
    lo = math.sqrt(b.tiny / b.eps)
    if v == 0.0 or lo <= v <= 1 / lo or not math.isfinite(v):
        return None
    e = math.frexp(v)[1]
    half = -e // 2
    return b.scalar(math.ldexp(1.0, half)), b.scalar(math.ldexp(1.0, -e - half))


def scale_pow2(b: Backend, x: Array) -> tuple[Array, tuple[Any, Any] | None]:
    """``x`` times :func:`pow2_factors` of its largest entry (x itself when in range), and the factors."""
    f = pow2_factors(b, b.max_abs(x))
    return (x if f is None else x * f[0] * f[1]), f


def unscale_pow2(b: Backend, x: Array, *factors: tuple[Any, Any] | None, inverse: bool = False) -> Array:
    """Undo :func:`scale_pow2` (divide by the factors; multiply with ``inverse``), exactly, and
    raise :class:`DomainError` naming the range when the true result does not fit in b's floats."""
    changed = False
    for f in factors:
        if f is not None:
            x = (x * f[0] * f[1]) if inverse else (x / f[0] / f[1])
            changed = True
    return _fits(b, x) if changed else x


def _fits(b: Backend, x: Array) -> Array:
    if not b.all_finite(x):
        raise DomainError(
            f"the result overflows {b.name}: its entries exceed the largest finite value "
            f"(about {1 / b.tiny / 4:.3g}); bring the inputs closer to unit size"
        )
    return x


def columns_pow2(b: Backend, u: Array) -> tuple[Array, list[tuple[Any, Any] | None]]:
    """Each column of ``u`` scaled by :func:`pow2_factors` of its largest entry, and the factors
    (all None, and u returned as is, when every column is in range)."""
    fs = [pow2_factors(b, b.max_abs(u[:, j])) for j in range(u.shape[1])]
    if all(f is None for f in fs):
        return u, fs
    cols = [u[:, j] if f is None else u[:, j] * f[0] * f[1] for j, f in enumerate(fs)]
    return b.stack_columns(cols, u.shape[0]), fs


def columns_unscale(b: Backend, g: Array, fs: list[tuple[Any, Any] | None]) -> Array:
    """``g`` (n x m) with column j multiplied by column j's factors: the gradient of a function
    that is invariant to each column's scale, taken at the scaled U, becomes the gradient at U."""
    if all(f is None for f in fs):
        return g
    cols = [g[:, j] if f is None else g[:, j] * f[0] * f[1] for j, f in enumerate(fs)]
    return _fits(b, b.stack_columns(cols, g.shape[0]))


def finite_result(b: Backend, x: Any, what: str) -> Any:
    """``x`` when it is finite; else (finite inputs whose result, or an intermediate value of
    it, overflows b's floats) :class:`DomainError` naming the range, never a silent NaN/Inf."""
    if b.exact or b.tiny == 0.0 or b.all_finite(b.asarray(x) if not hasattr(x, "shape") else x):
        return x
    raise DomainError(
        f"{what} overflows {b.name} for these inputs (a value beyond about {1 / b.tiny / 4:.3g} arose); "
        "bring the inputs closer to unit size or use a high-precision backend (mpmath)"
    )


def real_values(values: Any, name: str) -> list[Any]:
    """A sequence (list, tuple, 1-D array or tensor) of finite real numbers, kept as given (an
    mpmath value keeps its digits): :class:`DTypeError`, :class:`ShapeError` or
    :class:`NonFiniteError` naming ``name`` otherwise."""
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise DTypeError(f"{name} must be a sequence of real numbers, got {type(values).__name__}")
    if getattr(values, "ndim", 1) != 1:
        raise ShapeError(f"{name} must be one-dimensional, got shape {tuple(values.shape)}")
    out = list(values)
    for i, v in enumerate(out):
        real(v, f"{name}[{i}]")
    return out


def real(value: Any, name: str) -> float:
    """A finite real number (a Python, NumPy, mpmath or SymPy number, a one-element tensor) as a
    float: :class:`DTypeError` or :class:`NonFiniteError` naming ``name`` otherwise."""
    if isinstance(value, (bool, complex, str, bytes)) or getattr(value, "is_complex", lambda: False)() is True:
        raise DTypeError(f"{name} must be a real number, got {value!r}")
    try:
        f = float(value)
    except (TypeError, ValueError, RuntimeError, OverflowError):
        raise DTypeError(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(f):
        raise NonFiniteError(f"{name} must be finite, got {f}")
    return f
