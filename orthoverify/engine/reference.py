"""Independent references for gradient claims: finite differences and exact derivatives.

Both work on any backend through the protocol, and neither knows any paper's formula: they
only evaluate a scalar function. Central differences of fourth order with step
``h = 10^(-digits/5)`` have truncation error O(h^4) and rounding error O(10^-digits / h),
both about ``10^(-4 digits / 5)``; :func:`fd_eps` states the accuracy checks may assume.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orthoverify.backends import Array, Backend, Scalar


def fd_eps(b: Backend) -> float:
    """Relative accuracy assumed of :func:`central_gradient` on ``b``: 10^(-0.7 digits).

    The stencil's error is about 10^(-0.8 digits) of the derivative's scale; the margin covers
    higher derivatives of size up to 10^(0.1 digits).
    """
    digits = b.digits if b.digits is not None else 50
    return 10.0 ** (-0.7 * digits)


def _step(b: Backend) -> Scalar:
    digits = b.digits if b.digits is not None else 50
    return b.scalar(f"1e-{max(1, round(digits / 5))}")


def central_gradient(f: Callable[[Array], Scalar], x: Array, b: Backend, scale: Array | None = None) -> Array:
    """Gradient of a scalar function of an array by fourth-order central differences.

    The step for entry ij is ``10^(-digits/5) * scale_ij``: ``scale`` should give the size over
    which f varies in that entry (e.g. the norm of the column of a scale-invariant map); by
    default max(1, |x_ij|).
    """
    h0 = _step(b)
    flat_shape = x.shape
    out = b.zeros(flat_shape)
    it = (
        [(i,) for i in range(flat_shape[0])]
        if len(flat_shape) == 1
        else [(i, j) for i in range(flat_shape[0]) for j in range(flat_shape[1])]
    )
    for idx in it:
        xi = x[idx]
        if scale is not None:
            h = h0 * scale[idx]
        else:
            mag = b.abs(xi)
            h = h0 * (mag if b.positive(mag - 1) else 1)

        def at(t: Any, idx: tuple[int, ...] = idx, xi: Any = xi) -> Scalar:
            y = x.copy() if hasattr(x, "copy") else x.clone()
            y[idx] = xi + t
            return f(y)

        out[idx] = (-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h)
    return out


def exact_gradient(f: Callable[[Array], Scalar], x: Array) -> Array:
    """Exact gradient of a rational scalar function at an exact point (SymPy object arrays):
    each partial derivative is d/de f(x + e E_ij) at e = 0, with e a symbol."""
    import numpy as np
    import sympy

    eps = sympy.Symbol("_e")
    out = np.empty(x.shape, dtype=object)
    for idx in np.ndindex(*x.shape):
        y = x.copy()
        y[idx] = x[idx] + eps
        val = sympy.sympify(f(y))
        num, den = sympy.fraction(sympy.together(val))
        d = sympy.diff(num, eps) * den - num * sympy.diff(den, eps)
        out[idx] = sympy.cancel((d / den**2).subs(eps, 0))  # never nsimplify: it may invent radicals
    return out
