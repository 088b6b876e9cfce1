"""The vocabulary every claim family shares: backend sets, the exact backend, arrays of SymPy
symbols, rational sample arrays, and (re-exported from :mod:`orthoverify.engine.rigorous`) the rigorous Arb-enclosure
template. A name used by two families lives here, once."""

from __future__ import annotations

import numpy as np
import sympy

from orthoverify.backends import FLOAT_BACKENDS, Array, Backend, get_backend
from orthoverify.engine.rigorous import RIGOROUS as RIGOROUS  # the rigorous template, re-exported for the families
from orthoverify.engine.rigorous import RIGOROUS_SIZES as RIGOROUS_SIZES
from orthoverify.engine.rigorous import frobenius as frobenius
from orthoverify.engine.rigorous import rigorous_check as rigorous_check
from orthoverify.engine.rigorous import rigorous_scan as rigorous_scan
from orthoverify.engine.templates import EXACT as EXACT  # the templates' backend sets, re-exported
from orthoverify.engine.templates import TORCH as TORCH

FLOAT = FLOAT_BACKENDS
"""NumPy and torch in float32 and float64."""
FLOAT_HP = (*FLOAT_BACKENDS, "mpmath")
"""The float backends and 50-digit mpmath."""


def exact_backend() -> Backend:
    """SymPy's exact arithmetic."""
    return get_backend("sympy")


def symbol_array(prefix: str, n: int, m: int | None = None) -> np.ndarray:
    """Real symbols ``prefix0..`` (length n) or ``prefix{i}_{j}`` (n x m), as an object array."""
    if m is None:
        return np.array(sympy.symbols(f"{prefix}0:{n}", real=True), dtype=object).reshape(n)
    return np.array(sympy.symbols(f"{prefix}0:{n}_0:{m}", real=True), dtype=object).reshape(n, m)


ALL = (*FLOAT_HP, *EXACT)
"""The float backends, 50-digit mpmath and exact SymPy."""


def norm_scale(b: Backend, x: Array) -> float:
    """||x|| as the scale of a test ratio; 1 on an exact backend, where a residual is compared with 0."""
    return 1.0 if b.exact else b.to_float(b.norm(x))


def rational_array(rng: np.random.Generator, shape: tuple[int, ...], bound: int = 3, den: int = 3) -> np.ndarray:
    """An object array of rationals p/q (|p| <= bound, 1 <= q <= den), drawn entry by entry in
    row-major order, numerator first."""
    flat = [
        sympy.Rational(int(rng.integers(-bound, bound + 1)), int(rng.integers(1, den + 1)))
        for _ in range(int(np.prod(shape)))
    ]
    return np.array(flat, dtype=object).reshape(shape)
