"""Small helpers every claim module uses: the exact backend and arrays of SymPy symbols."""

from __future__ import annotations

import numpy as np
import sympy

from orthoverify.backends import Backend, get_backend


def exact_backend() -> Backend:
    """SymPy's exact arithmetic."""
    return get_backend("sympy")


def symbol_array(prefix: str, n: int, m: int | None = None) -> np.ndarray:
    """Real symbols ``prefix0..`` (length n) or ``prefix{i}_{j}`` (n x m), as an object array."""
    if m is None:
        return np.array(sympy.symbols(f"{prefix}0:{n}", real=True), dtype=object).reshape(n)
    return np.array(sympy.symbols(f"{prefix}0:{n}_0:{m}", real=True), dtype=object).reshape(n, m)
