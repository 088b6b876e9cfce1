"""The Cayley transform (scoRNN paper, Sec. 3.1): W = (I + A)^-1 (I - A) for skew-symmetric A.

For skew A the factors commute, so this also equals (I - A)(I + A)^-1; both are orthogonal
with no eigenvalue -1. Computed in the working precision of any backend, it gives orthogonal
test matrices that are orthogonal to *that* precision (a float64 matrix is not orthogonal to
50 digits).
"""

from __future__ import annotations

from typing import Any

from orthoverify.errors import ShapeError
from orthoverify.param._validate import BackendLike, matrix, resolve

__all__ = ["cayley"]


def cayley(a: Any, *, backend: BackendLike = None) -> Any:
    """``(I + A)^-1 (I - A)``; A must be square (skew-symmetric for an orthogonal result)."""
    b = resolve(backend, a)
    aa = matrix(b, a, "A", square=True)
    if aa.shape[0] == 0:
        raise ShapeError("A must be at least 1 x 1")
    eye = b.eye(aa.shape[0])
    return b.solve(eye + aa, eye - aa)
