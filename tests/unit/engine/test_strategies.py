"""Tests of the Hypothesis strategies users import from orthoverify.strategies."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orthoverify.errors import DomainError
from orthoverify.strategies import (
    orthogonal_matrices,
    orthogonal_matrices_det,
    skew_symmetric,
    unitary_matrices,
)
from orthoverify.testing import assert_orthogonal, assert_skew_symmetric, assert_unitary

FAST = settings(max_examples=20, deadline=None)
SIZES = st.integers(min_value=1, max_value=6)


@FAST
@given(st.data())
def test_unitary_matrices_are_unitary(data: st.DataObject) -> None:
    n = data.draw(SIZES)
    w = data.draw(unitary_matrices(n))
    assert w.shape == (n, n) and w.dtype == np.complex128
    assert_unitary(w)


@FAST
@given(unitary_matrices(4, near_identity=False))
def test_unitary_matrices_without_near_identity(w: np.ndarray) -> None:
    assert_unitary(w)


@FAST
@given(st.data(), st.sampled_from([1, -1]))
def test_orthogonal_matrices_det(data: st.DataObject, det: int) -> None:
    n = data.draw(SIZES)
    q = data.draw(orthogonal_matrices_det(n, det))
    assert q.shape == (n, n)
    assert abs(np.linalg.det(q) - det) < 1e-10
    assert_orthogonal(q)


@FAST
@given(orthogonal_matrices(5))
def test_orthogonal_matrices_pass_assert_orthogonal(q: np.ndarray) -> None:
    assert_orthogonal(q)


@FAST
@given(skew_symmetric(5, bound=0.5))
def test_skew_symmetric_is_bounded_and_skew(a: np.ndarray) -> None:
    assert np.all(np.abs(a) <= 0.5)
    assert assert_skew_symmetric(a) == 0.0


def test_orthogonal_matrices_det_rejects_bad_arguments() -> None:
    with pytest.raises(DomainError, match="det must be"):
        orthogonal_matrices_det(3, 0)
    with pytest.raises(DomainError, match="determinant -1"):
        orthogonal_matrices_det(0, -1)


def test_unitary_matrices_cover_structured_cases() -> None:
    """Hypothesis can reach the structured kinds (a phase matrix with a repeated phase)."""
    from hypothesis import find

    def repeated_diagonal_phase(w: np.ndarray) -> bool:
        off = w - np.diag(np.diag(w))
        d = np.diag(w)
        return bool(not off.any() and np.any(np.abs(d[0] - d[1:]) == 0) and not np.allclose(d, 1))

    w = find(unitary_matrices(3), repeated_diagonal_phase, settings=settings(max_examples=500, deadline=None))
    assert_unitary(w)
