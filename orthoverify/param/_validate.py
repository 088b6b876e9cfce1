"""Input checks shared by the parametrisations: clear orthoverify errors, early."""

from __future__ import annotations

from typing import Any

from orthoverify.backends import Array, Backend, get_backend, infer_backend
from orthoverify.errors import NotOrthogonalError, ShapeError

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
