"""Hypothesis strategies for orthogonal-parametrisation inputs, for users' tests and ours.

Matrices are drawn through a seed plus a few structural knobs (size, scale exponents,
closeness to the identity), so Hypothesis shrinks towards small sizes and simple structure
rather than through thousands of float entries.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from orthoverify import samples

__all__ = [
    "householder_vectors",
    "orthogonal_matrices",
    "reflection_vector",
    "skew_symmetric",
    "skew_wide",
    "well_conditioned",
]

_SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


@st.composite
def reflection_vector(draw: Any, k: int, *, max_exponent: int = 100) -> np.ndarray:
    """A nonzero length-k vector whose entries are 0 or of magnitude 10^-max_exponent ..
    10^max_exponent (three significant digits), so that every entry is representable in any
    arithmetic whose range covers 10^+-max_exponent."""
    mant = draw(st.lists(st.integers(-999, 999), min_size=k, max_size=k))
    exps = draw(st.lists(st.integers(-max_exponent, max_exponent), min_size=k, max_size=k))
    v = np.array([m / 1000 * 10.0**e for m, e in zip(mant, exps, strict=True)])
    if not np.any(v):
        v[draw(st.integers(0, k - 1))] = 10.0 ** draw(st.integers(-max_exponent, max_exponent))
    return v


@st.composite
def householder_vectors(draw: Any, n: int, m: int, *, max_exponent: int = 100, within_column: int = 8) -> np.ndarray:
    """``U`` of eq. 9 (n x m): each column has its own scale 10^e (|e| <= max_exponent) and
    entries spread over 10^within_column, from a seed."""
    rng = np.random.default_rng(draw(_SEEDS))
    u = np.tril(rng.standard_normal((n, m)))
    if within_column:
        u = u * 10.0 ** rng.uniform(-within_column, 0, size=(n, m))
    scales = draw(st.lists(st.integers(-max_exponent, max_exponent), min_size=m, max_size=m))
    u = u * 10.0 ** np.array(scales, dtype=float)
    for j in range(m):
        if not np.any(u[j:, j]):
            u[j, j] = 10.0 ** scales[j]
    return u


@st.composite
def orthogonal_matrices(draw: Any, n: int, *, near_identity: bool = True) -> np.ndarray:
    """Orthogonal matrices biased towards the hard cases: a signed permutation times a rotation
    that is Haar-random or within 10^-e of the identity (0 <= e <= 16)."""
    rng = np.random.default_rng(draw(_SEEDS))
    base = draw(st.sampled_from(["haar", "near-identity", "exact"])) if near_identity else "haar"
    if base == "haar":
        q = samples.haar_orthogonal(rng, n)
    elif base == "near-identity":
        q = samples.near_identity(rng, n, 10.0 ** (-draw(st.floats(0.0, 16.0))))
    else:
        q = np.eye(n)
    if draw(st.booleans()):
        q = samples.random_signs(rng, n) @ samples.random_permutation(rng, n) @ q
    return q


@st.composite
def skew_symmetric(draw: Any, n: int, *, bound: float = 1.0) -> np.ndarray:
    """A skew-symmetric n x n matrix with every |a_ij| <= bound."""
    rng = np.random.default_rng(draw(_SEEDS))
    g = rng.uniform(-bound, bound, size=(n, n))
    return np.triu(g, 1) - np.triu(g, 1).T


@st.composite
def well_conditioned(draw: Any, n: int, *, max_condition: float = 1e3) -> np.ndarray:
    """An n x n matrix Q1 diag(s) Q2 with singular values in [1, max_condition]."""
    rng = np.random.default_rng(draw(_SEEDS))
    s = 10.0 ** rng.uniform(0.0, np.log10(max_condition), size=n)
    return samples.haar_orthogonal(rng, n) @ np.diag(s) @ samples.haar_orthogonal(rng, n)


@st.composite
def skew_wide(draw: Any, n: int, *, max_exponent: int = 8) -> np.ndarray:
    """A skew-symmetric n x n matrix with one overall scale 10^e (|e| <= max_exponent) and
    entries of three significant digits spread over 10^3 below it (some exactly zero)."""
    rng = np.random.default_rng(draw(_SEEDS))
    scale = 10.0 ** draw(st.integers(-max_exponent, max_exponent))
    g = np.round(rng.uniform(-1, 1, size=(n, n)) * 1000) / 1000 * 10.0 ** rng.uniform(-3, 0, size=(n, n))
    g = np.where(rng.uniform(size=(n, n)) < 0.15, 0.0, g) * scale
    return np.triu(g, 1) - np.triu(g, 1).T
