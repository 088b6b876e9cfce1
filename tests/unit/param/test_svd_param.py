"""The SVD parametrisation (svdRNN; Zhang, Lei, Dhillon, ICML 2018): reflectors and their
products (eqs. 1-3, 17), Householder QR (Prop. 1), the inverse maps of Theorems 1-4, the sigma
map (eq. 8), Hprod and Hgrad (Algorithms 2, 3), the local FP/BP (Algorithm 1) and the parameter
counts (Sec. 4).

Float results are compared as test ratios ``||x - ref|| / (n eps scale) <= 30`` (README.md,
"How evidence becomes a verdict"), exact ones with the backend's exact zero test."""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from typing import Any

import numpy as np
import pytest
import sympy
import torch
from hypothesis import given
from hypothesis import strategies as st

from orthoverify import samples, strategies
from orthoverify.backends import Backend, get_backend
from orthoverify.errors import (
    BackendError,
    DomainError,
    NonFiniteError,
    NotOrthogonalError,
    ShapeError,
    ZeroVectorError,
)
from orthoverify.param import svd as sv
from orthoverify.param import svd_table3
from orthoverify.tolerance import THRESHOLD

F64 = get_backend("numpy-float64")
SP = get_backend("sympy")
MP = get_backend("mpmath")
FLOAT_NAMES = ("numpy-float32", "numpy-float64", "torch-float32", "torch-float64")

SEEDS = st.integers(0, 2**32 - 1)


def bratio(b: Backend, x: Any, ref: Any, n: int, scale: float | None = None) -> float:
    """``||x - ref||_F / (n eps scale)`` in b's arithmetic (scale defaults to ||ref||_F); for an
    exact backend 0 when x == ref exactly and inf otherwise."""
    xx, rr = b.asarray(x), b.asarray(ref)
    if b.exact:
        return 0.0 if b.is_zero(xx - rr) else math.inf
    d = b.to_float(b.norm(xx - rr))
    s = b.to_float(b.norm(rr)) if scale is None else scale
    return d / (max(n, 1) * b.eps * max(s, 1e-300))


def ratio(x: Any, ref: Any, n: int, scale: float | None = None) -> float:
    """bratio in float64."""
    return bratio(F64, np.asarray(x, dtype=np.float64), np.asarray(ref, dtype=np.float64), n, scale)


def orth_ratio(b: Backend, q: Any) -> float:
    n = q.shape[0]
    return bratio(b, b.transpose(q) @ q, b.eye(n), n, scale=1.0)


def explicit_product(vectors: list[Any], n: int, b: Backend = F64) -> Any:
    """``H_n(u_n) ... H_k(u_k)`` written out as the product of the eq. 1 matrices, left to right."""
    mats = [sv.reflector(v, n, backend=b) for v in reversed(vectors)]
    return functools.reduce(lambda x, y: x @ y, mats) if mats else b.eye(n)


def gaussian_vectors(rng: np.random.Generator, k: int, n: int) -> list[np.ndarray]:
    """``[u_k, ..., u_n]`` with u_j of length j."""
    return [rng.standard_normal(j) for j in range(k, n + 1)]


def sigma_block(sigma: np.ndarray, m: int, n: int) -> np.ndarray:
    out = np.zeros((m, n))
    p = min(m, n)
    out[:p, :p] = np.diag(sigma)
    return out


# ---------------------------------------------------------------------------------- eq. 1
@given(st.integers(1, 6), st.integers(0, 3), st.data())
def test_reflector_is_a_symmetric_orthogonal_reflection(k: int, extra: int, data: st.DataObject) -> None:
    u = data.draw(strategies.reflection_vector(k))
    n = k + extra
    h = sv.reflector(u, n)
    assert h.shape == (n, n)
    assert np.array_equal(h, h.T)
    assert orth_ratio(F64, h) <= THRESHOLD
    assert np.array_equal(h[: n - k], np.eye(n)[: n - k])  # acts on the last k coordinates only
    ev = np.linalg.eigvalsh(h)
    assert ratio(ev, [-1.0] + [1.0] * (n - 1), n, scale=1.0) <= THRESHOLD
    up = np.concatenate([np.zeros(n - k), u / np.abs(u).max()])
    assert ratio(h @ up, -up, n) <= THRESHOLD  # H u = -u


@pytest.mark.parametrize("name", [*FLOAT_NAMES, "mpmath", "sympy"])
def test_reflector_on_every_backend(name: str) -> None:
    b = get_backend(name)
    u = b.asarray([1, -2, 2])
    h = sv.reflector(u, 5, backend=b)
    assert orth_ratio(b, h) <= THRESHOLD
    assert bratio(b, h, b.transpose(h), 5, scale=1.0) <= THRESHOLD
    up = b.asarray([0, 0, 1, -2, 2])
    assert bratio(b, h @ up, -up, 5) <= THRESHOLD
    # u'u = 9: H = I - 2uu'/9 has entries in ninths (exact in sympy, rounded elsewhere)
    uu = np.array([1, -2, 2], dtype=object)
    ref = np.eye(5, dtype=int).astype(object)
    ref[2:, 2:] = ref[2:, 2:] - np.outer(uu, uu) * sympy.Rational(2, 9)
    assert bratio(b, h, ref, 5, scale=1.0) <= THRESHOLD


@pytest.mark.parametrize(("k", "n"), [(1, 1), (1, 4), (2, 2), (3, 5), (4, 4)])
def test_zero_vector_gives_identity(k: int, n: int) -> None:
    for name in ("numpy-float32", "numpy-float64", "torch-float64", "mpmath", "sympy"):
        b = get_backend(name)
        h = sv.reflector(b.zeros(k), n, backend=b)
        assert b.is_zero(h - b.eye(n)), name
    assert np.array_equal(sv.reflector(np.zeros(k)), np.eye(k))


@pytest.mark.parametrize("c", [1.0, -1.0, 3.0, -0.1, 1e-300, -1e300])
def test_k1_reflector_flips_the_last_coordinate(c: float) -> None:
    for n in (1, 2, 5):
        assert np.array_equal(sv.reflector(np.array([c]), n), np.diag([1.0] * (n - 1) + [-1.0]))
    assert SP.is_zero(sv.reflector(SP.asarray([sympy.Rational(2, 7)]), 3, backend=SP) - SP.asarray(np.diag([1, 1, -1])))


def test_reflector_exact_on_rationals() -> None:
    rng = np.random.default_rng(11)
    for k, n in ((1, 2), (2, 3), (3, 3), (4, 5)):
        u = samples.rational_matrix(rng, k, 1).reshape(k)
        if all(v == 0 for v in u):
            u[0] = sympy.Integer(1)
        h = sv.reflector(u, n, backend=SP)
        assert all(isinstance(v, sympy.Rational) for v in h.reshape(-1))
        assert SP.is_zero(h - SP.transpose(h))
        assert SP.is_zero(SP.transpose(h) @ h - SP.eye(n))
        up = SP.concat([SP.zeros(n - k), u])
        assert SP.is_zero(h @ up + up)  # H u = -u
        if k >= 2:  # and H w = w for w orthogonal to (0; u)
            w = SP.zeros(n)
            w[n - k], w[n - k + 1] = u[1], -u[0]
            assert SP.is_zero(h @ w - w)


def test_reflector_bad_input() -> None:
    with pytest.raises(ShapeError, match="length 4 > n = 3"):
        sv.reflector(np.ones(4), 3)
    with pytest.raises(ShapeError, match="1-dimensional"):
        sv.reflector(np.ones((2, 2)))
    with pytest.raises(ShapeError, match="length >= 1"):
        sv.reflector(np.zeros(0), 2)
    with pytest.raises(NonFiniteError, match="u contains NaN or Inf"):
        sv.reflector(np.array([1.0, np.nan]))
    with pytest.raises(NonFiniteError):
        sv.reflector(np.array([np.inf]), 2)


# ---------------------------------------------------------------------------------- eqs. 2, 3, 17
@pytest.mark.parametrize(("k", "n"), [(1, 1), (1, 4), (2, 5), (5, 5), (3, 6)])
def test_m_k_is_the_product_in_order(k: int, n: int) -> None:
    rng = np.random.default_rng(10 * k + n)
    vs = gaussian_vectors(rng, k, n)
    m = sv.m_k(vs, n)
    assert ratio(m, explicit_product(vs, n), n) <= THRESHOLD
    assert ratio(sv.m_k(vs), m, n) <= THRESHOLD  # n inferred from the last vector
    assert orth_ratio(F64, m) <= THRESHOLD
    if len(vs) >= 2:  # the order matters: H_k ... H_n is a different matrix
        rev = functools.reduce(np.matmul, [sv.reflector(v, n) for v in vs])
        assert ratio(rev, m, n) > 1e6


def test_lemma_1_leading_columns_do_not_depend_on_k() -> None:
    rng = np.random.default_rng(1)
    n = 6
    vs = gaussian_vectors(rng, 1, n)
    mats = {k: sv.m_k(vs[k - 1 :], n) for k in range(1, n + 1)}
    for k1, k2 in itertools.combinations(range(1, n + 1), 2):
        i = min(n - k1, n - k2)
        assert np.array_equal(mats[k1][:, :i], mats[k2][:, :i]), (k1, k2)


@pytest.mark.parametrize(
    ("m", "n", "k1", "k2"), [(4, 4, 1, 1), (4, 4, 2, 3), (3, 5, 1, 3), (3, 5, 2, 1), (5, 2, 4, 1), (5, 2, 1, 2)]
)
def test_m_rect_is_the_product_in_order(m: int, n: int, k1: int, k2: int) -> None:
    rng = np.random.default_rng(m * 100 + n * 10 + k1)
    us, vs = gaussian_vectors(rng, k1, m), gaussian_vectors(rng, k2, n)
    sigma = rng.uniform(0.5, 2.0, size=min(m, n))
    left = explicit_product(us, m)
    right = functools.reduce(np.matmul, [sv.reflector(v, n) for v in vs])  # H_k2(v_k2) ... H_n(v_n)
    ref = left @ sigma_block(sigma, m, n) @ right
    w = sv.m_rect(us, vs, sigma, m=m, n=n)
    assert w.shape == (m, n)
    assert ratio(w, ref, max(m, n)) <= THRESHOLD
    assert ratio(np.linalg.svd(w, compute_uv=False), np.sort(sigma)[::-1], max(m, n)) <= THRESHOLD
    if m == n:
        assert ratio(sv.m_k1k2(us, vs, sigma), ref, n) <= THRESHOLD


@pytest.mark.parametrize("name", ["torch-float32", "mpmath", "sympy"])
def test_m_rect_on_other_backends(name: str) -> None:
    b = get_backend(name)
    us = [b.asarray([1]), b.asarray([2, -1]), b.asarray([0, 1, 3])]
    vs = [b.asarray([1, 1, 0, 2])]
    sigma = b.asarray([3, 1, 2])
    ref = explicit_product(us, 3, b) @ b.asarray(sigma_block(np.array([3.0, 1.0, 2.0]), 3, 4))
    ref = ref @ sv.reflector(vs[0], 4, backend=b)
    assert bratio(b, sv.m_rect(us, vs, sigma, m=3, n=4, backend=b), ref, 4) <= THRESHOLD


def test_empty_vector_lists() -> None:
    assert np.array_equal(sv.m_k([], 3), np.eye(3))
    sigma = np.array([2.0, 3.0])
    assert np.array_equal(sv.m_rect([], [], sigma, m=2, n=4), sigma_block(sigma, 2, 4))
    assert np.array_equal(sv.m_rect([], [], sigma, m=4, n=2), sigma_block(sigma, 4, 2))
    assert np.array_equal(sv.m_k1k2([], [], sigma), np.diag(sigma))
    rng = np.random.default_rng(2)
    us = gaussian_vectors(rng, 2, 3)
    assert ratio(sv.m_rect(us, [], np.ones(3), m=3, n=3), explicit_product(us, 3), 3) <= THRESHOLD
    with pytest.raises(ShapeError, match="empty: give n"):
        sv.m_k([])


def test_pad() -> None:
    x = np.array([3.0, -1.0])
    assert np.array_equal(sv.pad(x, 4), [0.0, 0.0, 3.0, -1.0])
    assert np.array_equal(sv.reflector(sv.pad(x, 4), 5), sv.reflector(x, 5))  # H^n_len(pad(x)) = H^n_len(x)(x)
    assert SP.is_zero(sv.pad(SP.asarray([1]), 3, backend=SP) - SP.asarray([0, 0, 1]))
    with pytest.raises(ShapeError, match="cannot pad a vector of length 2 to length 1"):
        sv.pad(x, 1)


def test_vector_list_shape_errors() -> None:
    with pytest.raises(ShapeError, match=r"vectors\[0\] has length 1, expected 2"):
        sv.m_k([np.ones(1), np.ones(3)])
    with pytest.raises(ShapeError, match=r"vectors\[1\] has length 2, expected 3"):
        sv.m_k([np.ones(2), np.ones(2), np.ones(4)])
    with pytest.raises(ShapeError, match="last vector of vectors must have length n = 4, got 3"):
        sv.m_k([np.ones(2), np.ones(3)], 4)
    with pytest.raises(ShapeError, match="at most 3 fit"):
        sv.m_k([np.ones(1), np.ones(1), np.ones(2), np.ones(3)])
    with pytest.raises(ShapeError, match="1-dimensional"):
        sv.m_k([np.ones((2, 1))])
    with pytest.raises(ShapeError, match=r"sigma has length 3, expected min\(m, n\) = 2"):
        sv.m_rect([np.ones(2)], [np.ones(3)], np.ones(3), m=2, n=3)
    with pytest.raises(ShapeError, match="last vector of vectors must have length n = 3"):
        sv.m_k1k2([np.ones(2)], [np.ones(3)], np.ones(3))
    with pytest.raises(ShapeError, match="last vector of vectors must have length n = 2"):
        sv.m_k1k2([np.ones(2)], [np.ones(3)], np.ones(2))


# ---------------------------------------------------------------------------------- Prop. 1
def check_qr(b: Backend, bb: Any, n: int) -> sv.HouseholderQR:
    res = sv.householder_qr(bb, backend=b)
    assert [v.shape[0] for v in res.vectors] == list(range(1, n + 1))
    r = res.r
    assert b.is_zero(r - b.triu(r))
    assert all(not b.positive(-d) for d in b.diagonal(r))  # non-negative diagonal
    assert bratio(b, sv.m_k(res.vectors, n, backend=b) @ r, bb, n) <= THRESHOLD
    return res


@given(SEEDS, st.integers(1, 8), st.integers(-30, 30))
def test_householder_qr_random(seed: int, n: int, e: int) -> None:
    rng = np.random.default_rng(seed)
    bb = rng.standard_normal((n, n)) * 10.0**e
    res = check_qr(F64, bb, n)
    assert np.all(np.diag(res.r) > 0)  # nonsingular (almost surely)


@pytest.mark.parametrize("name", [*FLOAT_NAMES, "mpmath"])
def test_householder_qr_backends(name: str) -> None:
    b = get_backend(name)
    rng = np.random.default_rng(3)
    for n in (1, 2, 5):
        bb = b.asarray(rng.standard_normal((n, n)))
        check_qr(b, bb, n)
    mm = b.asarray(rng.standard_normal((4, 1)) @ rng.standard_normal((1, 4)))  # rank one
    check_qr(b, mm, 4)


def test_householder_qr_singular() -> None:
    for n in (1, 3, 5):
        res = check_qr(F64, np.zeros((n, n)), n)
        assert np.array_equal(res.r, np.zeros((n, n)))
        assert all(not np.any(v) for v in res.vectors)  # nothing to reflect: M_1 = I
    rng = np.random.default_rng(4)
    for n, j in ((1, 0), (3, 0), (4, 2), (5, 4)):
        bb = rng.standard_normal((n, n))
        bb[:, j] = 0.0
        res = check_qr(F64, bb, n)
        d = np.diag(res.r)
        assert d[j] == 0.0 and np.all(np.delete(d, j) > 0), (n, j, d)
    check_qr(F64, -np.eye(4), 4)
    check_qr(F64, np.triu(np.ones((4, 4)), 1), 4)  # nilpotent: aligned columns, zero diagonal


def test_householder_qr_exact_recovers_q_and_r() -> None:
    """B = Q R with rational orthogonal Q and rational upper R (positive diagonal): the QR with
    positive diagonal is unique, every norm on the way is rational, and Prop. 1 returns Q, R."""
    rng = np.random.default_rng(5)
    for n, det in ((1, -1), (2, 1), (3, -1), (4, 1)):
        q = samples.rational_orthogonal(rng, n, det=det)
        r = samples.rational_upper(rng, n)
        res = check_qr(SP, q @ r, n)
        assert SP.is_zero(res.r - r)
        assert SP.is_zero(sv.m_k(res.vectors, n, backend=SP) - q)
        assert all(isinstance(x, sympy.Rational) for v in res.vectors for x in v)


@pytest.mark.parametrize(
    ("n", "zeros"), [(1, (0,)), (2, (0,)), (2, (1,)), (3, (1,)), (3, (2,)), (4, (2,)), (4, (2, 3))]
)
def test_householder_qr_diagonal_positive_iff_nonsingular(n: int, zeros: tuple[int, ...]) -> None:
    """Exact B = Q R with zeros put on R's diagonal (in the last two places only, where every
    norm stays rational and sympy stays fast): R of Prop. 1 has a zero on its diagonal."""
    rng = np.random.default_rng(6 + n)
    q = samples.rational_orthogonal(rng, n)
    r = samples.rational_upper(rng, n)
    res = check_qr(SP, q @ r, n)
    assert all(SP.positive(d) for d in SP.diagonal(res.r))
    for j in zeros:
        r[j, j] = sympy.Integer(0)
    bb = q @ r
    assert sympy.Matrix(bb.tolist()).det() == 0
    res = check_qr(SP, bb, n)
    assert not all(SP.positive(d) for d in SP.diagonal(res.r))


@pytest.mark.parametrize(
    ("name", "scale"), [("numpy-float64", 1e-170), ("numpy-float64", 1e200), ("numpy-float32", 1e25)]
)
def test_householder_qr_far_from_one(name: str, scale: float) -> None:
    """Prop. 1 is scale-invariant (B = M R gives sB = M (sR)); the code scales its norms and
    reflections, so a matrix of entries far from 1 (but far inside the range) should work."""
    b = get_backend(name)
    bb = b.asarray(np.array([[1.0, 0.0], [1.0, 1.0]]) * scale)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check_qr(b, bb, 2)


def test_householder_qr_bad_input() -> None:
    with pytest.raises(ShapeError, match="B must be square"):
        sv.householder_qr(np.ones((2, 3)))
    with pytest.raises(NonFiniteError):
        sv.householder_qr(np.array([[np.nan]]))


# ---------------------------------------------------------------------------------- Thm 1
def orthogonal_cases(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    haar_neg = samples.haar_orthogonal(rng, n)
    if np.linalg.det(haar_neg) > 0:
        haar_neg[:, 0] *= -1
    return {
        "identity": np.eye(n),
        "minus-identity": -np.eye(n),
        "det-minus-one": np.diag([1.0] * (n - 1) + [-1.0]),
        "haar": samples.haar_orthogonal(rng, n),
        "haar-det-minus-one": haar_neg,
        "near-identity": samples.near_identity(rng, n, 1e-9),
        "cyclic-shift": np.roll(np.eye(n), 1, axis=0),
    }


@pytest.mark.parametrize("n", [1, 2, 3, 6, 10])
def test_orthogonal_parameters_reconstruct(n: int) -> None:
    rng = np.random.default_rng(n)
    for name, q in orthogonal_cases(rng, n).items():
        vecs = sv.orthogonal_parameters(q)
        assert [v.shape[0] for v in vecs] == list(range(1, n + 1)), name
        assert ratio(sv.m_k(vecs, n), q, n) <= THRESHOLD, name
    assert all(not np.any(v) for v in sv.orthogonal_parameters(np.eye(n)))


def test_orthogonal_parameters_signed_permutations() -> None:
    for p in samples.signed_permutations(3):
        assert ratio(sv.m_k(sv.orthogonal_parameters(p), 3), p, 3) <= THRESHOLD, p


@given(strategies.orthogonal_matrices(5))
def test_orthogonal_parameters_property(q: np.ndarray) -> None:
    assert ratio(sv.m_k(sv.orthogonal_parameters(q), 5), q, 5) <= THRESHOLD


def test_orthogonal_parameters_exact_and_other_backends() -> None:
    rng = np.random.default_rng(7)
    for det in (1, -1):
        q = samples.rational_orthogonal(rng, 4, det=det)
        assert SP.is_zero(sv.m_k(sv.orthogonal_parameters(q, backend=SP), 4, backend=SP) - q)
    for name in ("numpy-float32", "torch-float32", "torch-float64", "mpmath"):
        b = get_backend(name)
        # mpmath: a float64 Haar matrix is not orthogonal to 50 digits, a rational one is exactly
        q = samples.rational_orthogonal(rng, 4, det=-1) if name == "mpmath" else samples.haar_orthogonal(rng, 4)
        qb = b.asarray(q)
        vecs = sv.orthogonal_parameters(qb, backend=b)
        assert bratio(b, sv.m_k(vecs, 4, backend=b), qb, 4) <= THRESHOLD, name


def test_orthogonal_parameters_rejects_non_orthogonal() -> None:
    q = samples.haar_orthogonal(np.random.default_rng(8), 4) + 1e-6
    with pytest.raises(NotOrthogonalError, match="Q is not orthogonal") as info:
        sv.orthogonal_parameters(q)
    assert info.value.ratio > info.value.threshold == THRESHOLD
    with pytest.raises(NotOrthogonalError):
        sv.orthogonal_parameters(2 * np.eye(3))
    with pytest.raises(ShapeError, match="must be square"):
        sv.orthogonal_parameters(np.ones((2, 3)))


# ---------------------------------------------------------------------------------- Thms 2, 4
def expected_ks(m: int, n: int) -> tuple[int, int]:
    return (1, n - m + 1) if m <= n else (m - n + 1, 1)


def check_svd_parameters(b: Backend, w: Any, m: int, n: int) -> sv.SvdParameters:
    p = sv.svd_parameters(w, backend=b)
    k1, k2 = expected_ks(m, n)
    assert (p.m, p.n, p.k1, p.k2) == (m, n, k1, k2)
    assert [u.shape[0] for u in p.us] == list(range(k1, m + 1))
    assert [v.shape[0] for v in p.vs] == list(range(k2, n + 1))
    assert len(p.us) == len(p.vs) == min(m, n)  # 2 min(m, n) reflectors (Theorem 4)
    assert p.sigma.shape[0] == min(m, n)
    assert bratio(b, p.matrix(b), w, max(m, n)) <= THRESHOLD
    return p


SHAPES = [(1, 1), (4, 4), (2, 5), (5, 2), (1, 4), (4, 1), (6, 6)]


@pytest.mark.parametrize("name", FLOAT_NAMES)
@pytest.mark.parametrize(("m", "n"), SHAPES)
def test_svd_parameters_reconstruct_floats(name: str, m: int, n: int) -> None:
    b = get_backend(name)
    rng = np.random.default_rng(m * 10 + n)
    check_svd_parameters(b, b.asarray(rng.standard_normal((m, n))), m, n)


@pytest.mark.parametrize(("m", "n"), [(1, 1), (3, 3), (2, 4), (4, 2)])
def test_svd_parameters_reconstruct_mpmath(m: int, n: int) -> None:
    rng = np.random.default_rng(m * 10 + n)
    check_svd_parameters(MP, MP.asarray(rng.standard_normal((m, n))), m, n)


@given(SEEDS, st.integers(1, 6), st.integers(1, 6))
def test_svd_parameters_property(seed: int, m: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    check_svd_parameters(F64, rng.standard_normal((m, n)) * 10.0 ** rng.uniform(-3, 3, size=(m, n)), m, n)


def test_svd_parameters_singular() -> None:
    rng = np.random.default_rng(9)
    for m, n in ((3, 3), (2, 4), (4, 2)):
        p = check_svd_parameters(F64, np.zeros((m, n)), m, n)
        assert np.array_equal(p.matrix(), np.zeros((m, n)))
        check_svd_parameters(F64, np.outer(rng.standard_normal(m), rng.standard_normal(n)), m, n)
    w = rng.standard_normal((4, 4))
    w[:, 1] = w[:, 0]
    check_svd_parameters(F64, w, 4, 4)


@pytest.mark.parametrize(("m", "n"), [(3, 3), (2, 4), (4, 2), (1, 3), (3, 1)])
def test_factor_parameters_exact(m: int, n: int) -> None:
    rng = np.random.default_rng(20 + m * 10 + n)
    u = samples.rational_orthogonal(rng, m, det=-1)
    v = samples.rational_orthogonal(rng, n)
    sigma = samples.rational_matrix(rng, min(m, n), 1).reshape(-1)
    sig = SP.zeros((m, n))
    for i in range(min(m, n)):
        sig[i, i] = sigma[i]
    w = u @ sig @ SP.transpose(v)
    p = sv.factor_parameters(u, sigma, v, backend=SP)
    assert (p.k1, p.k2) == expected_ks(m, n)
    assert SP.is_zero(p.matrix(SP) - w)
    full_u, full_v = sv.orthogonal_parameters(u, backend=SP), sv.orthogonal_parameters(v, backend=SP)
    kept_u, kept_v = full_u[p.k1 - 1 :], full_v[p.k2 - 1 :]  # Lemma 1: the longest ones are kept
    assert all(SP.is_zero(x - y) for x, y in zip(p.us, kept_u, strict=True))
    assert all(SP.is_zero(x - y) for x, y in zip(p.vs, kept_v, strict=True))


def test_svd_parameter_errors() -> None:
    with pytest.raises(BackendError, match="sympy cannot compute an SVD"):
        sv.svd_parameters(samples.rational_matrix(np.random.default_rng(0), 2, 2), backend=SP)
    with pytest.raises(ShapeError, match="non-empty"):
        sv.svd_parameters(np.zeros((0, 3)))
    with pytest.raises(ShapeError, match="2-dimensional"):
        sv.svd_parameters(np.ones(3))
    with pytest.raises(NonFiniteError):
        sv.svd_parameters(np.array([[1.0, np.inf]]))
    with pytest.raises(ShapeError, match=r"sigma has length 3, expected min\(m, n\) = 2"):
        sv.factor_parameters(np.eye(2), np.ones(3), np.eye(3))
    with pytest.raises(NotOrthogonalError):
        sv.factor_parameters(2 * np.eye(2), np.ones(2), np.eye(2))


# ---------------------------------------------------------------------------------- Thm 3
def valid_pairs(n: int) -> list[tuple[int, int]]:
    return [(k1, k2) for k1 in range(1, n + 1) for k2 in range(1, n + 1) if k1 + k2 <= n + 2]


def theorem3_matrix(us: list[Any], vs: list[Any], n: int, b: Backend = F64) -> Any:
    return sv.m_k1k2(us, vs, b.asarray([1] * n), backend=b)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_theorem3_corrected_covers_every_orthogonal_matrix(n: int) -> None:
    rng = np.random.default_rng(30 + n)
    cases = orthogonal_cases(rng, n)
    for (k1, k2), name in itertools.product(valid_pairs(n), cases):
        a = cases[name]
        us, vs = sv.theorem3_parameters(a, k1, k2)
        assert [u.shape[0] for u in us] == list(range(k1, n + 1))
        assert [v.shape[0] for v in vs] == list(range(k2, n + 1))
        assert ratio(theorem3_matrix(us, vs, n), a, n) <= THRESHOLD, (k1, k2, name)


def test_theorem3_exact() -> None:
    rng = np.random.default_rng(40)
    n = 3
    for det in (1, -1):
        a = samples.rational_orthogonal(rng, n, det=det)
        for k1, k2 in valid_pairs(n):
            us, vs = sv.theorem3_parameters(a, k1, k2, backend=SP)
            assert SP.is_zero(theorem3_matrix(us, vs, n, SP) - SP.asarray(a)), (det, k1, k2)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_theorem3_printed_differs_exactly_where_it_overwrites_a_nonzero_vector(n: int) -> None:
    """As printed, (19)/(21) put a_1 (b_1) into slot t = k1 + k2 - 2 of the other side and then
    zero the slots t = k1 + k2 - 2, ..., n: the two readings differ in that slot only, and the
    printed one misses A exactly when the overwritten vector is nonzero."""
    rng = np.random.default_rng(50 + n)
    seen = set()
    for name, a in orthogonal_cases(rng, n).items():
        for k1, k2 in valid_pairs(n):
            cu, cv = sv.theorem3_parameters(a, k1, k2)
            pu, pv = sv.theorem3_printed(a, k1, k2)
            swap = k2 < k1 - 1
            t = k1 + k2 - 2
            side_c, side_p, k_other = (cu, pu, k1) if swap else (cv, pv, k2)
            same_c, same_p = (cv, pv) if swap else (cu, pu)
            assert all(np.array_equal(x, y) for x, y in zip(same_c, same_p, strict=True))
            differing = [
                k_other + i for i, (x, y) in enumerate(zip(side_c, side_p, strict=True)) if not np.array_equal(x, y)
            ]
            a1 = sv.orthogonal_parameters(a.T if swap else a)[0]
            overwrites_nonzero = t >= k_other and bool(np.any(a1))
            assert differing == ([t] if overwrites_nonzero else []), (name, k1, k2)
            if overwrites_nonzero:
                assert not np.any(side_p[t - k_other]) and np.any(side_c[t - k_other])
            printed_ok = ratio(theorem3_matrix(pu, pv, n), a, n) <= THRESHOLD
            assert printed_ok == (not overwrites_nonzero), (name, k1, k2)
            seen.add(overwrites_nonzero)
    assert seen == ({False, True} if n >= 2 else {False})


def test_theorem3_domain() -> None:
    a = samples.haar_orthogonal(np.random.default_rng(60), 5)
    for k1 in range(2, 6):
        k2 = 5 + 3 - k1
        if k2 <= 5:
            for fn in (sv.theorem3_parameters, sv.theorem3_printed):
                with pytest.raises(DomainError, match=r"k1 \+ k2 <= n \+ 2"):
                    fn(a, k1, k2)
    for k1, k2, name in ((0, 1, "k1"), (6, 1, "k1"), (1, 0, "k2"), (1, 6, "k2")):
        with pytest.raises(DomainError, match=f"{name} = -?\\d+ is out of range"):
            sv.theorem3_parameters(a, k1, k2)
    with pytest.raises(NotOrthogonalError):
        sv.theorem3_parameters(2 * a, 1, 1)


# ---------------------------------------------------------------------------------- eq. 8
def sigma_reference(s: torch.Tensor, sigma_star: float, r: float) -> torch.Tensor:
    return 2 * r * (torch.sigmoid(s) - 0.5) + sigma_star


@given(
    st.lists(st.floats(-1e300, 1e300), min_size=1, max_size=6),
    st.floats(-3, 3),
    st.floats(1e-3, 10),
)
def test_sigma_map_range(s: list[float], sigma_star: float, r: float) -> None:
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise"):
        warnings.simplefilter("error")
        out = sv.sigma_map(np.array(s), sigma_star, r)
        grad = sv.sigma_map_grad(np.array(s), sigma_star, r)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(grad))
    lo, hi = sigma_star - r, sigma_star + r
    slack = 2 * F64.eps * (abs(sigma_star) + r)  # saturated values are sigma* +- r rounded once
    assert np.all((out >= lo - slack) & (out <= hi + slack))
    assert np.all((grad >= 0) & (grad <= r / 2))
    inner = np.abs(np.array(s)) <= 20  # well inside: strictly inside the open interval
    assert np.all((out[inner] > lo) & (out[inner] < hi))


def test_sigma_map_saturates_without_overflow() -> None:
    s = np.array([800.0, -800.0, 1e308, -1e308, 0.0])
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise"):
        warnings.simplefilter("error")
        out = sv.sigma_map(s, 1.0, 0.5)
        grad = sv.sigma_map_grad(s, 1.0, 0.5)
    assert np.array_equal(out, [1.5, 0.5, 1.5, 0.5, 1.0])
    assert np.array_equal(grad, [0.0, 0.0, 0.0, 0.0, 0.25])
    t = sv.sigma_map(torch.tensor([800.0, -800.0], dtype=torch.float64), 1.0, 0.5)
    assert torch.equal(t, torch.tensor([1.5, 0.5], dtype=torch.float64))
    with pytest.raises(DomainError, match="outside the open interval"):
        sv.sigma_map_inverse(out[:1], 1.0, 0.5)  # saturated: on the boundary


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_sigma_map_and_derivative_against_autograd(name: str) -> None:
    b = get_backend(name)
    rng = np.random.default_rng(70)
    s_np = np.concatenate([rng.standard_normal(8) * 3, [0.0, 30.0, -30.0]])
    for sigma_star, r in ((1.0, 1.0), (1.0, 0.1), (-2.0, 3.5)):
        s = torch.tensor(s_np, dtype=torch.float64, requires_grad=True)
        ref = sigma_reference(s, sigma_star, r)
        ref.sum().backward()
        assert s.grad is not None
        n = len(s_np)
        out = sv.sigma_map(b.asarray(s_np), sigma_star, r, backend=b)
        assert bratio(b, out, ref.detach().numpy(), n, scale=abs(sigma_star) + r) <= THRESHOLD
        grad = sv.sigma_map_grad(b.asarray(s_np), sigma_star, r, backend=b)
        assert bratio(b, grad, s.grad.numpy(), n, scale=r) <= THRESHOLD


def test_sigma_map_round_trip() -> None:
    rng = np.random.default_rng(71)
    for sigma_star, r in ((1.0, 1.0), (0.5, 0.25), (-1.0, 4.0)):
        sigma = sigma_star + r * rng.uniform(-0.999, 0.999, size=20)
        s = sv.sigma_map_inverse(sigma, sigma_star, r)
        assert ratio(sv.sigma_map(s, sigma_star, r), sigma, 20, scale=abs(sigma_star) + r) <= THRESHOLD
        s0 = rng.uniform(-8, 8, size=20)
        back = sv.sigma_map_inverse(sv.sigma_map(s0, sigma_star, r), sigma_star, r)
        # s is ill-conditioned in sigma: an eps-relative change of sigma moves s by (|sigma*| + r) eps / (dsigma/ds)
        cond = (abs(sigma_star) + r) / sv.sigma_map_grad(s0, sigma_star, r)
        assert np.max(np.abs(back - s0) / cond) / F64.eps <= THRESHOLD
    s_mp = MP.asarray(["0.3", "-2", "7"])
    back = sv.sigma_map_inverse(sv.sigma_map(s_mp, 1, "0.5", backend=MP), 1, "0.5", backend=MP)
    cond = float(np.max(1.5 / sv.sigma_map_grad(np.array([0.3, -2.0, 7.0]), 1.0, 0.5)))
    assert bratio(MP, back, s_mp, 3, scale=cond) <= THRESHOLD


def test_sigma_map_exact() -> None:
    s = SP.asarray([0, sympy.log(3), -sympy.log(3)])
    out = sv.sigma_map(s, 1, 2, backend=SP)
    assert SP.is_zero(out - SP.asarray([1, 2, 0]))  # tanh(log(3)/2) = 1/2
    assert SP.is_zero(
        sv.sigma_map_grad(s, 1, 2, backend=SP) - SP.asarray([1, sympy.Rational(3, 4), sympy.Rational(3, 4)])
    )
    assert SP.is_zero(
        sv.sigma_map_inverse(SP.asarray([2, 0]), 1, 2, backend=SP) - SP.asarray([sympy.log(3), -sympy.log(3)])
    )


def test_sigma_map_domain_errors() -> None:
    for r in (0.0, -1.0):
        for fn in (sv.sigma_map, sv.sigma_map_grad, sv.sigma_map_inverse):
            with pytest.raises(DomainError, match="must be > 0"):
                fn(np.array([0.5]), 1.0, r)
    for bad in (2.0, 0.0, 3.0, -5.0):
        with pytest.raises(DomainError, match=r"sigma\[1\] lies outside"):
            sv.sigma_map_inverse(np.array([1.0, bad]), 1.0, 1.0)
    with pytest.raises(NonFiniteError):
        sv.sigma_map(np.array([np.nan]))


# ---------------------------------------------------------------------------------- Alg. 2, 3
def t_reflect(u: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``H_k(u) x = x - 2 (0; u)(0; u)' x / u'u`` written out in torch (x a vector or columns)."""
    n, k = x.shape[0], u.shape[0]
    uf = torch.cat([u.new_zeros(n - k), u])
    coef = uf @ x
    return x - 2 * (torch.outer(uf, coef) if x.ndim == 2 else uf * coef) / (u @ u)


@pytest.mark.parametrize("name", [*FLOAT_NAMES, "mpmath", "sympy"])
def test_hprod_matches_the_reflector(name: str) -> None:
    b = get_backend(name)
    rng = np.random.default_rng(80)
    n = 5
    for k in (1, 3, 5):
        u = b.asarray(rng.integers(-4, 5, size=k) + (np.arange(k) == 0))
        if b.is_zero(u):
            u = b.asarray([1] * k)
        h = b.asarray(rng.integers(-3, 4, size=(n, 3)))
        ref = sv.reflector(u, n, backend=b) @ h
        out = sv.hprod(h, u, backend=b)
        assert tuple(out.shape) == (n, 3)
        assert bratio(b, out, ref, n) <= THRESHOLD
        vec = sv.hprod(h[:, 1], u, backend=b)
        assert tuple(vec.shape) == (n,)
        assert bratio(b, vec, ref[:, 1], n) <= THRESHOLD


@given(SEEDS, st.integers(1, 7), st.integers(0, 3))
def test_hprod_and_hgrad_against_autograd(seed: int, n: int, batch: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, n + 1))
    shape = (n,) if batch == 0 else (n, batch)
    u = torch.tensor(rng.standard_normal(k), requires_grad=True)
    h = torch.tensor(rng.standard_normal(shape), requires_grad=True)
    g = rng.standard_normal(shape)
    c = t_reflect(u, h)
    (c * torch.tensor(g)).sum().backward()
    assert u.grad is not None and h.grad is not None
    u_np, h_np = u.detach().numpy(), h.detach().numpy()
    assert ratio(sv.hprod(h_np, u_np), c.detach().numpy(), n) <= THRESHOLD
    res = sv.hgrad(h_np, u_np, g)
    assert res.dl_dh.shape == shape and res.dl_du.shape == (k,) and res.u_bar.shape == (n,)
    assert np.array_equal(res.dl_du, res.u_bar[n - k :])
    assert ratio(res.dl_dh, h.grad.numpy(), n) <= THRESHOLD
    # dL/du = -alpha g - beta h + alpha beta u: its rounding is relative to the size of its terms
    du_ref = u.grad.numpy()
    assert ratio(res.dl_du, du_ref, n, grad_scale(du_ref, h_np, g, np.ones(1), u_np)) <= THRESHOLD
    # autograd through the module's own Hprod on torch gives the same reference
    u2, h2 = u.detach().clone().requires_grad_(), h.detach().clone().requires_grad_()
    (sv.hprod(h2, u2) * torch.tensor(g)).sum().backward()
    assert u2.grad is not None and h2.grad is not None
    assert ratio(h2.grad.numpy(), h.grad.numpy(), n) <= THRESHOLD
    assert ratio(u2.grad.numpy(), du_ref, n, grad_scale(du_ref, h_np, g, np.ones(1), u_np)) <= THRESHOLD
    # and Hgrad on torch tensors agrees with Hgrad on NumPy arrays
    tres = sv.hgrad(h.detach(), u.detach(), torch.tensor(g))
    assert ratio(tres.dl_dh.numpy(), h.grad.numpy(), n) <= THRESHOLD
    assert ratio(tres.dl_du.numpy(), du_ref, n, grad_scale(du_ref, h_np, g, np.ones(1), u_np)) <= THRESHOLD


def test_hgrad_batch_is_the_sum_over_columns() -> None:
    rng = np.random.default_rng(81)
    n, k = 6, 4
    u, h, g = rng.standard_normal(k), rng.standard_normal((n, 5)), rng.standard_normal((n, 5))
    res = sv.hgrad(h, u, g)
    cols = [sv.hgrad(h[:, j], u, g[:, j]) for j in range(5)]
    assert ratio(res.dl_du, sum(c.dl_du for c in cols), n) <= THRESHOLD
    assert ratio(res.dl_dh, np.stack([c.dl_dh for c in cols], axis=1), n) <= THRESHOLD


def test_hprod_hgrad_zero_vector() -> None:
    h, g = np.arange(4.0), np.ones(4)
    with pytest.raises(ZeroVectorError, match="u = 0"):
        sv.hprod(h, np.zeros(2))
    with pytest.raises(ZeroVectorError, match="u = 0"):
        sv.hgrad(h, np.zeros(3), g)
    assert np.array_equal(sv.hprod(h, np.zeros(2), guard=True), h)
    hb = np.arange(12.0).reshape(4, 3)
    assert np.array_equal(sv.hprod(hb, np.zeros(4), guard=True), hb)
    assert np.array_equal(sv.hprod(h, np.array([0.0, 2.0]), guard=True), sv.hprod(h, np.array([0.0, 2.0])))
    assert SP.is_zero(sv.hprod(SP.asarray([1, 2]), SP.zeros(1), guard=True, backend=SP) - SP.asarray([1, 2]))


def test_norm_and_alpha_reuse() -> None:
    rng = np.random.default_rng(82)
    n, k = 6, 4
    u, h, g = rng.standard_normal(k), rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    nrm = u @ u
    assert np.array_equal(sv.hprod(h, u, norm=nrm), sv.hprod(h, u))
    assert np.array_equal(sv.hprod(h[:, 0], u, norm=nrm), sv.hprod(h[:, 0], u))
    plain = sv.hgrad(h, u, g)
    alpha = 2 / nrm * (u @ h[n - k :])  # the forward pass's alpha, one per column
    for kwargs in ({"norm": nrm}, {"alpha": alpha}, {"norm": nrm, "alpha": alpha}):
        res = sv.hgrad(h, u, g, **kwargs)
        assert ratio(res.dl_dh, plain.dl_dh, n) <= THRESHOLD, kwargs
        assert ratio(res.dl_du, plain.dl_du, n) <= THRESHOLD, kwargs
    vec = sv.hgrad(h[:, 0], u, g[:, 0], norm=nrm, alpha=alpha[0])
    ref = sv.hgrad(h[:, 0], u, g[:, 0])
    assert ratio(vec.dl_du, ref.dl_du, n) <= THRESHOLD and ratio(vec.dl_dh, ref.dl_dh, n) <= THRESHOLD


def test_hprod_hgrad_shape_errors() -> None:
    with pytest.raises(ShapeError, match="u has length 4: it must be between 1 and n = 3"):
        sv.hprod(np.ones(3), np.ones(4))
    with pytest.raises(ShapeError, match="between 1 and n"):
        sv.hgrad(np.ones(3), np.zeros(0), np.ones(3))
    with pytest.raises(ShapeError, match="g has shape"):
        sv.hgrad(np.ones((3, 2)), np.ones(2), np.ones((3, 3)))
    with pytest.raises(ShapeError, match="g must have length 3"):
        sv.hgrad(np.ones(3), np.ones(2), np.ones(4))
    with pytest.raises(ShapeError, match=r"h must have shape \(2,\) or \(2, B\)"):
        sv.hprod(np.ones((2, 2, 2)), np.ones(2))


# ---------------------------------------------------------------------------------- Alg. 1
def local_reference(
    us: list[np.ndarray],
    vs: list[np.ndarray],
    sigma: np.ndarray | None,
    h: np.ndarray,
    g: np.ndarray,
    s_map: tuple[np.ndarray, float, float] | None = None,
) -> dict[str, Any]:
    """C = U Sigma V' h and every gradient of L = <g, C> by torch autograd on the definition."""
    tu = [torch.tensor(u, requires_grad=True) for u in us]
    tv = [torch.tensor(v, requires_grad=True) for v in vs]
    th = torch.tensor(h, requires_grad=True)
    if s_map is None:
        assert sigma is not None
        ts = torch.tensor(sigma, requires_grad=True)
        sig = ts
    else:
        ts = torch.tensor(s_map[0], requires_grad=True)
        sig = sigma_reference(ts, s_map[1], s_map[2])
    x = th
    for v in reversed(tv):  # H(v_k2) ... H(v_n) h: v_n first
        x = t_reflect(v, x)
    x = sig.reshape(-1, *([1] * (x.ndim - 1))) * x
    for u in tu:  # H(u_n) ... H(u_k1): u_k1 first
        x = t_reflect(u, x)
    (x * torch.tensor(g)).sum().backward()
    return {
        "c": x.detach().numpy(),
        "du": [t.grad.numpy() for t in tu],  # type: ignore[union-attr]
        "dv": [t.grad.numpy() for t in tv],  # type: ignore[union-attr]
        "dsig": ts.grad.numpy(),  # type: ignore[union-attr]
        "dh": th.grad.numpy(),  # type: ignore[union-attr]
    }


def local_case(seed: int, n: int, m1: int, m2: int, batch: int) -> tuple[Any, ...]:
    rng = np.random.default_rng(seed)
    us = gaussian_vectors(rng, n - m1 + 1, n)
    vs = gaussian_vectors(rng, n - m2 + 1, n)
    sigma = rng.uniform(0.5, 1.5, size=n)
    shape = (n,) if batch == 0 else (n, batch)
    return us, vs, sigma, rng.standard_normal(shape), rng.standard_normal(shape)


def run_local(case: tuple[Any, ...], variant: Any, **kwargs: Any) -> sv.SvdLocalResult:
    us, vs, sigma, h, g = case
    return sv.svdrnn_local(h, g, us, sigma, vs, variant=variant, **kwargs)


def grad_scale(ref: Any, h: np.ndarray, g: np.ndarray, sigma: np.ndarray, u: np.ndarray | None = None) -> float:
    """What a gradient's rounding error is relative to: the size of the terms it sums,
    |g| |h| max|sigma| (over |u| for dL/du, which scales as 1/|u|), or the gradient itself."""
    terms = float(np.linalg.norm(g) * np.linalg.norm(h) * max(np.max(np.abs(sigma)), 1.0))
    if u is not None:
        terms /= float(np.linalg.norm(u))
    return max(float(np.linalg.norm(ref)), terms)


def assert_matches(
    res: sv.SvdLocalResult,
    ref: dict[str, Any],
    case: tuple[Any, ...],
    *,
    du: bool = True,
    b: Backend = F64,
) -> None:
    us, vs, sigma, h, g = case
    n = h.shape[0]
    assert bratio(b, res.c, ref["c"], n) <= THRESHOLD
    assert bratio(b, res.dl_dh, ref["dh"], n) <= THRESHOLD
    assert bratio(b, res.dl_dsigma, ref["dsig"], n, grad_scale(ref["dsig"], h, g, sigma)) <= THRESHOLD
    assert len(res.dl_dv) == len(ref["dv"])
    for x, y, v in zip(res.dl_dv, ref["dv"], vs, strict=True):
        assert bratio(b, x, y, n, grad_scale(y, h, g, sigma, v)) <= THRESHOLD
    if du:
        assert len(res.dl_du) == len(ref["du"])
        for x, y, u in zip(res.dl_du, ref["du"], us, strict=True):
            assert bratio(b, x, y, n, grad_scale(y, h, g, sigma, u)) <= THRESHOLD


@pytest.mark.parametrize(
    ("n", "m1", "m2", "batch"), [(1, 1, 1, 0), (4, 4, 4, 0), (6, 4, 3, 3), (6, 2, 6, 1), (5, 5, 0, 2), (7, 3, 5, 4)]
)
def test_svdrnn_local_corrected_against_autograd(n: int, m1: int, m2: int, batch: int) -> None:
    case = local_case(n * 100 + m1 * 10 + m2, n, m1, m2, batch)
    us, vs, sigma, h, g = case
    res = sv.svdrnn_local(h, g, us, sigma, vs, variant="corrected")
    assert res.c.shape == h.shape and res.dl_dh.shape == h.shape and res.dl_dsigma.shape == (n,)
    assert [x.shape[0] for x in res.dl_du] == [u.shape[0] for u in us]
    assert [x.shape[0] for x in res.dl_dv] == [v.shape[0] for v in vs]
    assert res.dl_ds is None
    assert_matches(res, local_reference(us, vs, sigma, h, g), case)
    w = sv.m_rect(us, vs, sigma, m=n, n=n)
    assert ratio(res.c, w @ h, n) <= THRESHOLD  # C = M h, M of eq. 3


@given(SEEDS, st.integers(1, 6), st.integers(0, 3), st.data())
def test_svdrnn_local_corrected_property(seed: int, n: int, batch: int, data: st.DataObject) -> None:
    m1, m2 = data.draw(st.integers(0, n)), data.draw(st.integers(0, n))
    case = local_case(seed, n, m1, m2, batch)
    res = run_local(case, "corrected")
    assert_matches(res, local_reference(*case), case)


def test_svdrnn_local_printed_differs_only_in_du() -> None:
    case = local_case(90, 6, 4, 3, 2)
    us, vs, sigma, h, g = case
    ref = local_reference(*case)
    printed = sv.svdrnn_local(h, g, us, sigma, vs)  # the default is the printed algorithm
    assert_matches(printed, ref, case, du=False)
    # the printed U loop feeds Hgrad the reflection's output instead of its input: dL/du is
    # wrong far beyond rounding (the ratio of a correct result is <= 30)
    worst = max(ratio(x, y, 6) for x, y in zip(printed.dl_du, ref["du"], strict=True))
    assert worst > 1e8
    case0 = local_case(91, 5, 0, 5, 3)  # m1 = 0: no U loop, the two variants are one algorithm
    p = run_local(case0, "printed")
    c = run_local(case0, "corrected")
    assert p.dl_du == [] and c.dl_du == []
    for name in ("c", "dl_dsigma", "dl_dh"):
        assert np.array_equal(getattr(p, name), getattr(c, name)), name
    assert all(np.array_equal(x, y) for x, y in zip(p.dl_dv, c.dl_dv, strict=True))
    assert_matches(p, local_reference(*case0), case0)


def test_svdrnn_local_sigma_map() -> None:
    n = 5
    us, vs, _, h, g = local_case(92, n, 3, 4, 2)
    s_hat = np.random.default_rng(92).standard_normal(n) * 2
    s_map = (s_hat, 1.0, 0.2)
    res = sv.svdrnn_local(h, g, us, None, vs, variant="corrected", s_map=s_map)
    ref = local_reference(us, vs, None, h, g, s_map=s_map)
    sigma = sv.sigma_map(s_hat, 1.0, 0.2)
    assert res.dl_ds is not None
    assert ratio(res.dl_ds, ref["dsig"], n, grad_scale(ref["dsig"], h, g, sigma)) <= THRESHOLD
    assert ratio(res.c, ref["c"], n) <= THRESHOLD
    plain = sv.svdrnn_local(h, g, us, sigma, vs, variant="corrected")
    assert np.array_equal(res.c, plain.c) and np.array_equal(res.dl_dsigma, plain.dl_dsigma)
    assert np.array_equal(res.dl_ds, sv.sigma_map_grad(s_hat, 1.0, 0.2) * plain.dl_dsigma)


@pytest.mark.parametrize("variant", ["printed", "corrected"])
def test_svdrnn_local_reuse_norms_is_identical(variant: Any) -> None:
    us, vs, sigma, h, g = local_case(93, 6, 5, 3, 4)
    a = sv.svdrnn_local(h, g, us, sigma, vs, variant=variant)
    b = sv.svdrnn_local(h, g, us, sigma, vs, variant=variant, reuse_norms=True)
    for name in ("c", "dl_dsigma", "dl_dh"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for xs, ys in ((a.dl_du, b.dl_du), (a.dl_dv, b.dl_dv)):
        assert len(xs) == len(ys) and all(np.array_equal(x, y) for x, y in zip(xs, ys, strict=True))


def test_svdrnn_local_batch_is_columnwise() -> None:
    us, vs, sigma, h, g = local_case(94, 5, 3, 2, 4)
    res = sv.svdrnn_local(h, g, us, sigma, vs, variant="corrected")
    cols = [sv.svdrnn_local(h[:, j], g[:, j], us, sigma, vs, variant="corrected") for j in range(4)]
    assert ratio(res.c, np.stack([c.c for c in cols], axis=1), 5) <= THRESHOLD
    assert ratio(res.dl_dh, np.stack([c.dl_dh for c in cols], axis=1), 5) <= THRESHOLD
    sig_sum = sum(c.dl_dsigma for c in cols)
    assert ratio(res.dl_dsigma, sig_sum, 5, grad_scale(sig_sum, h, g, sigma)) <= THRESHOLD
    for k, u in enumerate(us):
        du_sum = sum(c.dl_du[k] for c in cols)
        assert ratio(res.dl_du[k], du_sum, 5, grad_scale(du_sum, h, g, sigma, u)) <= THRESHOLD


def sym_loss(us: list[Any], vs: list[Any], sigma: Any, h: Any, g: Any) -> Any:
    """<g, U Sigma V' h> with sympy matrices, each reflection I - 2 (0; u)(0; u)' / u'u."""
    n = len(sigma)

    def refl(u: Any) -> Any:
        up = sympy.Matrix([0] * (n - len(u)) + list(u))
        return sympy.eye(n) - 2 * up * up.T / (up.T * up)[0]

    x = sympy.Matrix(h.tolist())
    for v in reversed(vs):
        x = refl(v) * x
    x = sympy.diag(*sigma) * x
    for u in us:
        x = refl(u) * x
    return sum(x.multiply_elementwise(sympy.Matrix(g.tolist())))


def test_svdrnn_local_exact_against_sympy_derivatives() -> None:
    """On rationals Algorithm 1 (corrected) is exact: every gradient entry equals the derivative
    of <g, C> taken by sympy, one parameter at a time."""
    rng = np.random.default_rng(97)
    n = 3
    us = [samples.rational_matrix(rng, j, 1).reshape(j) + sympy.Integer(1) for j in (2, 3)]
    vs = [samples.rational_matrix(rng, j, 1).reshape(j) - sympy.Integer(1) for j in (1, 2, 3)]
    sigma = samples.rational_matrix(rng, n, 1).reshape(n)
    h, g = samples.rational_matrix(rng, n, 2), samples.rational_matrix(rng, n, 2)
    res = sv.svdrnn_local(h, g, us, sigma, vs, variant="corrected", backend=SP)
    t = sympy.Symbol("t")

    def derivative(group: str, i: int, j: Any) -> Any:
        args = {"us": [u.copy() for u in us], "vs": [v.copy() for v in vs], "sigma": sigma.copy(), "h": h.copy()}
        target = args[group][i] if group in ("us", "vs") else args[group]
        target[j] = target[j] + t
        return sympy.diff(sym_loss(args["us"], args["vs"], args["sigma"], args["h"], g), t).subs(t, 0)

    for i, u in enumerate(us):
        for j in range(len(u)):
            assert SP.is_zero(res.dl_du[i][j] - derivative("us", i, j)), ("u", i, j)
    for i, v in enumerate(vs):
        for j in range(len(v)):
            assert SP.is_zero(res.dl_dv[i][j] - derivative("vs", i, j)), ("v", i, j)
    for j in range(n):
        assert SP.is_zero(res.dl_dsigma[j] - derivative("sigma", 0, j)), ("sigma", j)
    for j in itertools.product(range(n), range(2)):
        assert SP.is_zero(res.dl_dh[j] - derivative("h", 0, j)), ("h", j)
    assert SP.is_zero(res.c - sv.m_k1k2(us, vs, sigma, backend=SP) @ h)
    printed = sv.svdrnn_local(h, g, us, sigma, vs, variant="printed", backend=SP)
    assert not all(SP.is_zero(x - y) for x, y in zip(printed.dl_du, res.dl_du, strict=True))


@pytest.mark.parametrize("name", ["numpy-float32", "torch-float32", "torch-float64", "mpmath"])
def test_svdrnn_local_other_backends(name: str) -> None:
    b = get_backend(name)
    case = local_case(95, 5, 4, 3, 2)
    us, vs, sigma, h, g = case
    ref = local_reference(*case)
    res = sv.svdrnn_local(
        b.asarray(h),
        b.asarray(g),
        [b.asarray(u) for u in us],
        b.asarray(sigma),
        [b.asarray(v) for v in vs],
        variant="corrected",
        backend=b,
    )
    # the autograd reference is float64: an mpmath result is checked to float64's precision
    assert_matches(res, ref, case, b=b if name != "mpmath" else F64)


def test_svdrnn_local_errors() -> None:
    us, vs, sigma, h, g = local_case(96, 4, 2, 2, 0)
    with pytest.raises(DomainError, match="variant must be"):
        sv.svdrnn_local(h, g, us, sigma, vs, variant="fixed")  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match="sigma has length 3, expected n = 4"):
        sv.svdrnn_local(h, g, us, sigma[:3], vs)
    with pytest.raises(ShapeError, match="dL/dC has shape"):
        sv.svdrnn_local(h.reshape(4, 1), np.ones((4, 2)), us, sigma, vs)
    with pytest.raises(ShapeError, match="last vector of us must have length n = 4"):
        sv.svdrnn_local(h, g, [np.ones(2)], sigma, vs)
    with pytest.raises(ZeroVectorError):
        sv.svdrnn_local(h, g, [np.zeros(4)], sigma, vs)


# ---------------------------------------------------------------------------------- Sec. 4
@given(st.integers(0, 40), st.integers(0, 20), st.integers(0, 20), st.data())
def test_svdrnn_parameter_count_is_the_inventory(n: int, n_i: int, n_o: int, data: st.DataObject) -> None:
    m1, m2 = data.draw(st.integers(0, n)), data.draw(st.integers(0, n))
    shapes = sv.svdrnn_parameter_shapes(n, n_i, n_o, m1, m2)
    assert sv.svdrnn_parameter_count(n, n_i, n_o, m1, m2) == sum(math.prod(s) for s in shapes.values())
    assert len(shapes) == 4 + m1 + m2
    assert sv.svdrnn_parameter_count(n, n_i, n_o, n, n) == (n_o + n_i + n + 3) * n
    # oRNN with m reflections: the svdRNN inventory without sigma and the v's
    assert sv.ornn_parameter_count(n, n_i, n_o, m1) == sv.svdrnn_parameter_count(n, n_i, n_o, m1, 0) - n


def test_parameter_counts_basic_values() -> None:
    assert sv.rnn_parameter_count(2, 3, 4) == 20  # W 4 + M 6 + b 2 + Y 8
    assert sv.rnn_parameter_count(0, 5, 5) == 0
    assert sv.lstm_parameter_count(2, 3, 4) == 56  # 4 (4 + 6 + 2) + 8
    assert sv.lstm_parameter_count(1, 1, 1) == 13
    assert sv.ornn_parameter_count(3, 1, 1, 2) == 14  # M 3 + b 3 + Y 3 + u3 3 + u2 2
    assert sv.ornn_parameter_count(3, 1, 1, 0) == 9
    assert sv.svdrnn_parameter_count(3, 1, 1, 2, 1) == 3 + 3 + 3 + 3 + (3 + 2) + 3
    assert sv.svdrnn_parameter_count(2, 1, 1, 2, 2) == (1 + 1 + 2 + 3) * 2
    assert sv.svdrnn_parameter_shapes(2, 3, 4, 1, 2) == {
        "M": (2, 3),
        "b": (2,),
        "Y": (4, 2),
        "sigma": (2,),
        "u2": (2,),
        "v1": (1,),
        "v2": (2,),
    }


def test_parameter_count_errors() -> None:
    with pytest.raises(DomainError, match="non-negative integers"):
        sv.rnn_parameter_count(-1, 2, 3)
    with pytest.raises(DomainError, match="non-negative integers"):
        sv.lstm_parameter_count(2, -1, 3)
    with pytest.raises(DomainError, match="non-negative integers"):
        sv.svdrnn_parameter_count(3, 1, 1, -1, 0)
    with pytest.raises(DomainError, match="non-negative integers"):
        sv.ornn_parameter_count(3, 1, 1, 1.5)  # type: ignore[arg-type]
    with pytest.raises(DomainError, match="non-negative integers"):
        sv.rnn_parameter_count(True, 1, 1)
    with pytest.raises(DomainError, match="at most n = 3 reflections per side"):
        sv.svdrnn_parameter_count(3, 1, 1, 4, 0)
    with pytest.raises(DomainError, match="at most n = 3 reflections per side"):
        sv.svdrnn_parameter_shapes(3, 1, 1, 0, 4)
    with pytest.raises(DomainError, match="at most n = 3 reflections"):
        sv.ornn_parameter_count(3, 1, 1, 4)


def test_table3_reconstruction_names_the_configuration() -> None:
    """Every row is explained by m1 = m2 = 16, an output bias and a learned initial state, and the
    stated m1 = m2 = 8 explains none."""
    for name, length, classes, depth, *printed in svd_table3.TABLE3:
        fits = svd_table3.explain_row(length // depth, classes, tuple(printed))  # type: ignore[arg-type]
        assert fits, name
        assert all(f["m1 = m2"] == 16 and f["output bias"] and f["learned h0 (c0)"] for f in fits), name
        assert svd_table3.table3_counts(length // depth, classes) != tuple(printed), name


# =============================================================================== recording, eq. 3 with eq. 8
def test_stack_padded_round_trip() -> None:
    vecs = [np.array([1, 2]), np.array([3, 4, 5]), np.array([6, 7, 8, 9])]
    mat = sv.stack_padded(vecs, 4)
    assert mat.shape == (4, 3) and list(mat[:, 0]) == [0, 0, 1, 2] and list(mat[:, 2]) == [6, 7, 8, 9]
    back = sv.unstack_padded(mat, 2)
    assert [list(x) for x in back] == [list(v) for v in vecs]
    assert sv.stack_padded([], 3).shape == (3, 0) and sv.unstack_padded(sv.stack_padded([], 3), 1) == []


def _weight(rng: np.random.Generator, n: int, svals: list[float], det_sign: int) -> np.ndarray:
    u, _ = np.linalg.qr(rng.standard_normal((n, n)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    if np.sign(np.linalg.det(u) * np.linalg.det(v)) != det_sign:
        u[:, 0] = -u[:, 0]
    return u @ np.diag(svals) @ v.T


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_svdrnn_parameters_give_back_w(n: int) -> None:
    rng = np.random.default_rng(n)
    w = _weight(rng, n, list(np.linspace(0.92, 1.08, n)), 1)
    for smooth in (False, True):
        p = sv.svdrnn_parameters(F64, w, 1.0, 0.1, smooth=smooth)
        assert p is not None
        assert ratio(sv.svdrnn_weight(F64, p, 1.0, 0.1), w, n) <= THRESHOLD
    # smooth: every reflection vector nonzero, so M is continuous at these parameters
    assert p is not None and min(float(np.max(np.abs(x))) for x in (*p[0], *p[1])) > 1e-8


def test_svdrnn_parameters_refuse_what_they_cannot_give() -> None:
    rng = np.random.default_rng(7)
    w = _weight(rng, 3, [0.95, 1.0, 1.05], -1)
    assert sv.svdrnn_parameters(F64, w, 1.0, 0.1, smooth=True) is None  # det W < 0: no smooth parameters
    assert sv.svdrnn_parameters(F64, w, 1.0, 0.1, smooth=False) is not None
    with pytest.raises(DomainError):  # a singular value outside (sigma* - r, sigma* + r)
        sv.svdrnn_parameters(F64, _weight(rng, 3, [0.5, 1.0, 1.05], 1), 1.0, 0.1, smooth=False)


def test_perturbation_margin_tells_a_minimum_from_a_maximum() -> None:
    b = MP
    p0 = ([b.asarray([0.5])], [b.asarray([-2.0])], b.asarray([0.3]))

    def dist2(q: Any) -> Any:
        return sum(
            (b.sum((x - y) * (x - y)) for x, y in zip((*q[0], *q[1], q[2]), (*p0[0], *p0[1], p0[2]), strict=True)),
            b.scalar("0"),
        )

    rng = np.random.default_rng(0)
    low, count = sv.perturbation_margin(b, p0, dist2, rng, 5)
    # L = ||p - p0||^2 gives ||z||^2 in every direction: 1 up to z's normalisation in float64
    assert count == 15 and abs(low - 1.0) < THRESHOLD * F64.eps
    high, _ = sv.perturbation_margin(b, p0, lambda q: -dist2(q), rng, 5)
    assert abs(high + 1.0) < THRESHOLD * F64.eps


def test_exact_jacobian_rank_and_kernel() -> None:
    """n = 2: 8 parameters, rank n^2 = 4 at a generic rational point, and each u_j, v_j along
    itself is in the kernel (M does not depend on the vectors' norms)."""
    r = sympy.Rational
    us, vs, sigma = [[r(1, 2)], [1, r(-3, 2)]], [[-2], [r(2, 3), 1]], [r(11, 10), r(23, 10)]
    flat = [*us[0], *us[1], *vs[0], *vs[1], *sigma]
    back = sv.unflatten_parameters(flat, 2, 2, 1, 1)
    assert [list(x) for x in back[0]] == us and [list(x) for x in back[1]] == vs and list(back[2]) == sigma
    jac = sv.exact_jacobian(2, 2, 1, 1, flat)
    assert jac.shape == (4, 8) and jac.rank() == 4
    for lo, hi in ((0, 1), (1, 3), (3, 4), (4, 6)):
        d = sympy.Matrix([x if lo <= i < hi else 0 for i, x in enumerate(flat)])
        assert (jac * d).is_zero_matrix
