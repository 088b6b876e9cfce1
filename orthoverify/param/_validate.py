"""Input checks shared by the parametrisations: clear orthoverify errors, early."""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

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
    if arr.ndim == 0:
        raise ShapeError(f"{name} must be a vector or a matrix of columns, got a 0-d scalar")
    n = int(arr.shape[0])
    if arr.ndim > 2:
        raise ShapeError(f"{name} must have shape ({n},) or ({n}, B), got {tuple(arr.shape)}")
    return n


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
    what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise ShapeError(f"{name} must be {what}, got {value!r}")
    v = operator.index(value)
    if v < minimum:
        raise ShapeError(f"{name} must be {what}, got {v}")
    if v > MAX_SIZE:
        raise DomainError(f"{name} = {v} lies outside [{minimum}, {MAX_SIZE}], the sizes orthoverify accepts")
    return v


# --------------------------------------------------------------------------- scaling
def pow2_exponent(b: Backend, s: Any) -> int | None:
    """The k with ``|s| 2^k`` in [1/2, 1), or None when ``s`` lies in the safe window
    ``[sqrt(tiny/eps), sqrt(eps/tiny)]`` of b's floats (where squares and products of such numbers
    neither overflow nor lose digits to underflow), is 0 or not finite, or when b has no exponent
    range to leave (exact, mpmath).

    Scaling by 2^k is exact, so a result computed from scaled inputs and scaled back equals the
    unscaled one bit for bit wherever the latter does not overflow or underflow; in the window
    nothing is scaled at all (the printed formulas run unchanged)."""
    if not has_range(b):
        return None
    v = abs(b.to_float(s))
    lo = math.sqrt(b.tiny / b.eps)
    if v == 0.0 or lo <= v <= 1 / lo or not math.isfinite(v):
        return None
    return -math.frexp(v)[1]


def has_range(b: Backend) -> bool:
    """Whether b's numbers can overflow or underflow (IEEE floats; not exact, mpmath or symbolic
    arithmetic, whose max_abs may not even be decidable)."""
    return not b.exact and b.tiny > 0.0


def times_pow2(b: Backend, x: Array, k: int) -> Array:
    """``x 2^k``, exactly (unless the result leaves b's range), in steps whose factors b can hold
    (2^k itself overflows for the exponents subnormal inputs need)."""
    if k == 0:
        return x
    step = max(1, int(-math.log2(b.tiny)) // 2)
    with np.errstate(over="ignore", under="ignore"):  # an overflow is reported by the caller, by name
        while k:
            part = max(-step, min(step, k))
            x = x * b.scalar(math.ldexp(1.0, part))
            k -= part
    return x


def scale_pow2(b: Backend, x: Array) -> tuple[Array, int]:
    """``x 2^k`` with k from :func:`pow2_exponent` of x's largest entry (0, x itself, in range)."""
    k = pow2_exponent(b, b.max_abs(x)) if has_range(b) else None
    return (x, 0) if k is None else (times_pow2(b, x, k), k)


def unscale_pow2(b: Backend, x: Array, k: int) -> Array:
    """``x 2^-k``: undo a net scaling by 2^k; :class:`DomainError` naming the range when the true
    result does not fit in b's floats (never a silent Inf)."""
    return x if k == 0 else _fits(b, times_pow2(b, x, -k))


def _fits(b: Backend, x: Array) -> Array:
    if not b.all_finite(x):
        raise DomainError(
            f"the result overflows {b.name}: its entries exceed the largest finite value "
            f"(about {1 / b.tiny / 4:.3g}); bring the inputs closer to unit size"
        )
    return x


def columns_pow2(b: Backend, u: Array) -> tuple[Array, list[int]]:
    """Each column of ``u`` scaled by 2^k_j (:func:`pow2_exponent` of its largest entry), and the
    k_j (all 0, and u returned as is, when every column is in range)."""
    ks = [(pow2_exponent(b, b.max_abs(u[:, j])) or 0) if has_range(b) else 0 for j in range(u.shape[1])]
    if not any(ks):
        return u, ks
    cols = [times_pow2(b, u[:, j], k) for j, k in enumerate(ks)]
    return b.stack_columns(cols, u.shape[0]), ks


def columns_unscale(b: Backend, g: Array, ks: list[int], k: int = 0) -> Array:
    """``g`` (n x m) with column j times 2^(k_j - k): the gradient of a function invariant to each
    column's scale, taken at the scaled U (and at inputs scaled by 2^k elsewhere), becomes the
    gradient at the given inputs; one net factor per column, so no intermediate over/underflows."""
    if not any(ks) and k == 0:
        return g
    cols = [times_pow2(b, g[:, j], kj - k) for j, kj in enumerate(ks)]
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
