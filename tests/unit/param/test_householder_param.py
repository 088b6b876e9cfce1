"""The Householder parametrisation: three formulations agree, the inverse map round-trips,
and every kind of bad input gets a clear orthoverify error."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from orthoverify import samples, strategies
from orthoverify.backends import get_backend
from orthoverify.errors import (
    DomainError,
    DTypeError,
    NonFiniteError,
    NotOrthogonalError,
    ShapeError,
    SingularError,
    ZeroVectorError,
)
from orthoverify.param import householder as hh
from orthoverify.tolerance import THRESHOLD

RNG = np.random.default_rng(0)


def ratio(x: np.ndarray, ref: np.ndarray, n: int, eps: float = 2.0**-53) -> float:
    return float(np.linalg.norm(x - ref) / (max(n, 1) * eps * max(np.linalg.norm(ref), 1e-300)))


@pytest.mark.parametrize(("n", "m"), [(1, 0), (2, 1), (3, 2), (5, 1), (8, 7), (16, 9)])
def test_definition_wy_and_algorithm1_agree(n: int, m: int) -> None:
    u = samples.reflection_vectors(RNG, n, m)
    h, c = RNG.standard_normal(n), RNG.standard_normal(n)
    w_def = hh.m_map(hh.u_to_vectors(u)) if m else np.eye(n)
    w_wy = hh.compact_wy(u)
    assert ratio(w_wy, w_def, n) < THRESHOLD
    res = hh.algorithm1(u, h, c)
    assert ratio(res.c, w_def @ h, n) < THRESHOLD
    assert ratio(res.dl_dh, w_def.T @ c, n) < THRESHOLD
    gu, _gh = hh.theorem2_gradients(u, h, c)
    assert ratio(res.dl_du, gu, n) < THRESHOLD if m else res.dl_du.shape == (n, 0)
    assert ratio(hh.reflector_apply(u, h), w_def @ h, n) < THRESHOLD


def test_m_equals_n_variant() -> None:
    n = 5
    u = samples.reflection_vectors(RNG, n, n - 1)
    for u1 in (1.0, -1.0, 0.3):
        w_def = hh.m_map(hh.u_to_vectors(u, np.array([u1])))
        assert ratio(hh.compact_wy(u, np.array([u1])), w_def, n) < THRESHOLD
    with pytest.raises(DomainError, match=r"u_1 = 0\.3 but W is orthogonal only when u_1 is"):
        hh.m_map(hh.u_to_vectors(u, np.array([0.3])), require_orthogonal=True)


@given(strategies.orthogonal_matrices(6))
def test_inverse_round_trip(q: np.ndarray) -> None:
    vecs = hh.inverse(q)
    assert [v.shape[0] for v in vecs] == list(range(1, 7))
    assert abs(vecs[0][0]) == 1.0
    assert np.linalg.norm(hh.m_map(vecs) - q) / (6 * 2.0**-53) < THRESHOLD


@pytest.mark.parametrize("name", ["numpy-float32", "torch-float64", "mpmath", "sympy"])
def test_same_code_on_every_backend(name: str) -> None:
    b = get_backend(name)
    u = b.asarray([[1, 0], [2, 3], [-1, 1]])
    w = hh.compact_wy(u, backend=b)
    assert hh.orthogonality_ratio(w, b) < THRESHOLD
    q = hh.m_map(hh.u_to_vectors(u, backend=b), backend=b)
    assert b.to_float(b.norm(q - w)) < 1e-5


def test_algorithm2_on_identity_takes_the_exact_branch() -> None:
    b = get_backend("sympy")
    res = hh.algorithm2(b.eye(4), backend=b)
    assert res.aligned == [True, True, True]
    assert b.is_zero(res.r - b.eye(4))


def test_torch_gradients_flow_through_definition() -> None:
    u = torch.tensor(samples.reflection_vectors(RNG, 4, 2), requires_grad=True)
    w = hh.reflector_product(u)
    w.sum().backward()
    assert u.grad is not None and torch.isfinite(u.grad).all()


# ------------------------------------------------------------------------------ bad input
def test_non_square() -> None:
    with pytest.raises(ShapeError, match="A must be square, got shape \\(2, 3\\)"):
        hh.algorithm2(np.ones((2, 3)))
    with pytest.raises(ShapeError, match="Q must be square"):
        hh.inverse(np.ones((3, 2)))


def test_mis_shaped() -> None:
    with pytest.raises(ShapeError, match="U must be 2-dimensional"):
        hh.compact_wy(np.ones(3))
    with pytest.raises(ShapeError, match="h must have length 3"):
        hh.algorithm1(np.tril(np.ones((3, 2))), np.ones(4), np.ones(3))
    with pytest.raises(ShapeError, match="dL/dC has shape"):
        hh.algorithm1(np.tril(np.ones((3, 2))), np.ones(3), np.ones((3, 2)))
    with pytest.raises(ShapeError, match="len\\(u_i\\) = i"):
        hh.m_map([np.ones(2), np.ones(4)])
    with pytest.raises(ShapeError, match="has length 4 > n = 3"):
        hh.reflection(np.ones(4), 3)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_inf(bad: float) -> None:
    u = np.tril(np.ones((3, 2)))
    u[2, 1] = bad
    with pytest.raises(NonFiniteError, match="U contains NaN or Inf"):
        hh.compact_wy(u)
    with pytest.raises(NonFiniteError, match="u contains NaN or Inf"):
        hh.reflection(np.array([1.0, bad]))
    with pytest.raises(NonFiniteError, match="h contains NaN or Inf"):
        hh.algorithm1(np.tril(np.ones((3, 2))), np.array([1.0, bad, 0.0]), np.ones(3))


def test_zero_reflection_vector() -> None:
    with pytest.raises(ZeroVectorError, match="H_3\\(0\\) is undefined"):
        hh.reflection(np.zeros(3))
    u = np.tril(np.ones((4, 2)))
    u[:, 1] = 0.0
    with pytest.raises(ZeroVectorError, match="column 1 of U \\(u_3\\) is zero"):
        hh.compact_wy(u)
    with pytest.raises(ZeroVectorError):
        hh.m_map([np.zeros(2), np.ones(3)])


def test_m_greater_than_n() -> None:
    with pytest.raises(DomainError, match="U has m = 4 columns for n = 3"):
        hh.compact_wy(np.ones((3, 4)))
    with pytest.raises(DomainError, match="m <= n - 1"):
        hh.algorithm1(np.tril(np.ones((3, 3))), np.ones(3), np.ones(3))


def test_u1_not_plus_minus_one() -> None:
    with pytest.raises(DomainError, match="only when u_1 is \\+1 or -1"):
        hh.h1(np.array([0.5]), 3, require_orthogonal=True)
    assert hh.h1(np.array([-1.0]), 3, require_orthogonal=True)[2, 2] == -1.0


def test_k_of_one_needs_h1() -> None:
    with pytest.raises(DomainError, match="use h1 for k = 1"):
        hh.reflection(np.array([1.0]), 3)


@pytest.mark.parametrize(
    "bad", [np.array([1 + 1j, 2.0]), np.array([True, False]), np.array([1.0, 2.0], dtype=np.float16)]
)
def test_unsupported_dtypes(bad: np.ndarray) -> None:
    with pytest.raises(DTypeError, match="unsupported dtype"):
        hh.reflection(bad)


def test_not_orthogonal_reports_ratio() -> None:
    q = np.eye(3)
    q[0, 1] = 1e-6
    with pytest.raises(NotOrthogonalError) as info:
        hh.inverse(q)
    assert info.value.ratio > THRESHOLD and info.value.threshold == THRESHOLD
    assert "||Q'Q - I||_F / (n eps)" in str(info.value)


def test_singular_input_to_algorithm2() -> None:
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(SingularError, match="rank deficient"):
        hh.algorithm2(a, backend="sympy")
    with pytest.raises(SingularError, match="rank deficient"):
        hh.algorithm2(np.zeros((3, 3)))


@given(st.integers(1, 6), st.integers(-300, 300))
def test_reflection_is_scale_invariant(k: int, e: int) -> None:
    u = np.linspace(1.0, 2.0, k + 1)
    assert (
        np.array_equal(hh.reflection(u), hh.reflection(u * 2.0**e))
        or ratio(hh.reflection(u * 10.0 ** (e / 3)), hh.reflection(u), k + 1) < THRESHOLD
    )
