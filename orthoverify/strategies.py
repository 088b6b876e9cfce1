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
from orthoverify.errors import DomainError

__all__ = [
    "householder_vectors",
    "orthogonal_matrices",
    "orthogonal_matrices_det",
    "reflection_vector",
    "signed_permutation_matrices",
    "skew_symmetric",
    "skew_wide",
    "unitary_matrices",
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


def signed_permutation_matrices(n: int) -> st.SearchStrategy[np.ndarray]:
    """n x n signed permutation matrices (the orthogonal matrices of entries 0 and +-1): a sign per
    row, then a permutation, shrinking towards I."""
    signs = st.lists(st.sampled_from([1.0, -1.0]), min_size=n, max_size=n)
    return st.builds(_signed_permutation, signs, st.permutations(list(range(n))))


def _signed_permutation(signs: list[float], perm: list[int]) -> np.ndarray:
    sp = np.zeros((len(perm), len(perm)))
    for i, j in enumerate(perm):
        sp[i, j] = signs[i]
    return sp


@st.composite
def skew_wide(draw: Any, n: int, *, max_exponent: int = 8) -> np.ndarray:
    """A skew-symmetric n x n matrix with one overall scale 10^e (|e| <= max_exponent) and
    entries of three significant digits spread over 10^3 below it (some exactly zero)."""
    rng = np.random.default_rng(draw(_SEEDS))
    scale = 10.0 ** draw(st.integers(-max_exponent, max_exponent))
    g = np.round(rng.uniform(-1, 1, size=(n, n)) * 1000) / 1000 * 10.0 ** rng.uniform(-3, 0, size=(n, n))
    g = np.where(rng.uniform(size=(n, n)) < 0.15, 0.0, g) * scale
    return np.triu(g, 1) - np.triu(g, 1).T


def orthogonal_matrices_det(n: int, det: int, *, near_identity: bool = True) -> st.SearchStrategy[np.ndarray]:
    """Orthogonal matrices of :func:`orthogonal_matrices` with determinant ``det`` (+1 or -1):
    where the drawn matrix has the other sign, one drawn column is negated (exact, so the
    matrix stays as orthogonal as it was)."""
    if det not in (1, -1) or isinstance(det, bool):
        raise DomainError(f"det must be +1 or -1, got {det!r}")
    if n < 0 or (n == 0 and det == -1):
        raise DomainError(f"no {n} x {n} orthogonal matrix has determinant {det}")
    return _orthogonal_det(n, det, near_identity)


@st.composite
def _orthogonal_det(draw: Any, n: int, det: int, near_identity: bool) -> np.ndarray:
    q = draw(orthogonal_matrices(n, near_identity=near_identity))
    if n == 0:
        return q
    col = draw(st.integers(0, n - 1))
    sign, _ = np.linalg.slogdet(q)
    if sign != det:
        q = q.copy()
        q[:, col] = -q[:, col]
    return q


@st.composite
def unitary_matrices(draw: Any, n: int, *, near_identity: bool = True) -> np.ndarray:
    """Complex128 n x n unitary matrices biased towards the hard cases: Haar-random, diagonal
    phases (a drawn number of distinct values, so phases repeat; optionally exactly 1, i, -1,
    -i), a real orthogonal matrix, one within 10^-e of the identity (0 <= e <= 16), or the
    identity; optionally times a phased permutation."""
    rng = np.random.default_rng(draw(_SEEDS))
    kinds = ["haar", "phases", "real-orthogonal", "near-identity", "identity"]
    if not near_identity:
        kinds.remove("near-identity")
    base = draw(st.sampled_from(kinds))
    if base == "haar":
        w = samples.haar_unitary(rng, n)
    elif base == "phases":
        w = np.diag(_draw_phases(draw, rng, n))
    elif base == "real-orthogonal":
        w = samples.haar_orthogonal(rng, n).astype(complex)
    elif base == "near-identity":
        delta = 10.0 ** (-draw(st.floats(0.0, 16.0)))
        g = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
        h = (g - g.conj().T) * (delta / 2)  # skew-Hermitian: its Cayley transform is unitary
        eye = np.eye(n)
        w = np.linalg.solve(eye + h, eye - h)
    else:
        w = np.eye(n, dtype=complex)
    if n and draw(st.booleans()):
        w = (samples.random_permutation(rng, n) * _draw_phases(draw, rng, n)[:, None]) @ w
    return np.asarray(w, dtype=np.complex128)


def _draw_phases(draw: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """n unit complex numbers taking a drawn number k <= n of distinct values (repeats when
    k < n), either exactly 1, i, -1, -i or uniform on the circle."""
    if n == 0:
        return np.zeros(0, dtype=complex)
    k = draw(st.integers(1, n))
    if draw(st.booleans()):
        pool = np.array([1, 1j, -1, -1j])[rng.integers(0, 4, size=k)]
    else:
        pool = np.exp(1j * rng.uniform(-np.pi, np.pi, size=k))
    return pool[rng.integers(0, k, size=n)]
