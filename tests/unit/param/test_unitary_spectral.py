"""orthoverify.param.unitary_spectral: the eigendecomposition W = V D V* of a unitary W with V
unitary by construction (Lemma 1 of Arjovsky et al.), for distinct, repeated and clustered
eigenvalues, in float64, float32 and at 50 digits, and its errors on bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from orthoverify import samples
from orthoverify.backends import get_backend
from orthoverify.errors import BackendError, NonFiniteError, NotUnitaryError, ShapeError
from orthoverify.param import unitary as un
from orthoverify.param.unitary_spectral import best_angle, unitary_eig
from orthoverify.tolerance import THRESHOLD


def _ratios(name: str, w: np.ndarray) -> tuple[float, float, float]:
    """(unitarity of V, ||V D V* - W|| / (n eps ||W||), max | |d_j|^2 - 1 | / (n eps))."""
    b = get_backend(name)
    ww = un.polish_unitary((w.real, w.imag), backend=b)
    n = w.shape[0]
    v, d = unitary_eig(ww, backend=b)
    rebuilt = v @ un.CArray(b.diag(d.re), b.diag(d.im)) @ un.ct(b, v)
    back = b.to_float(un.cnorm(b, rebuilt - ww)) / (n * b.eps * b.to_float(un.cnorm(b, ww)))
    mods = max(abs(b.to_float(x)) for x in (d.re * d.re + d.im * d.im - b.asarray([1] * n)).reshape(-1))
    return un.unitarity_ratio(v, b), back, mods / (n * b.eps)


def _with_spectrum(rng: np.random.Generator, eig: list[complex]) -> np.ndarray:
    q = samples.haar_unitary(rng, len(eig))
    return np.asarray(q @ np.diag(eig) @ q.conj().T)


def test_best_angle_is_far_from_every_eigenvalue_midpoint() -> None:
    assert best_angle(np.eye(1, dtype=complex)) == 0.0
    # eigenvalues 1 and i: the midpoint pi/4 is best avoided by alpha = 3 pi/4 (|sin| = 1)
    alpha = best_angle(np.diag([1.0, 1j]))
    assert abs(math.sin(math.pi / 4 - alpha)) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("name", ["numpy-float64", "numpy-float32", "torch-float64", "mpmath"])
def test_haar_unitary_decomposes_with_unitary_v(name: str) -> None:
    w = samples.haar_unitary(np.random.default_rng(0), 5)
    for r in _ratios(name, w):
        assert r <= THRESHOLD


@pytest.mark.parametrize("name", ["numpy-float64", "mpmath"])
def test_repeated_and_clustered_eigenvalues_keep_v_unitary(name: str) -> None:
    """A general eigensolver returns nearly dependent eigenvectors here; the Hermitian one does not."""
    rng = np.random.default_rng(1)
    for eig in ([1, 1, -1, 1j], [1, 1, 1], [1, np.exp(1e-9j), np.exp(2e-9j), -1]):
        for r in _ratios(name, _with_spectrum(rng, list(eig))):
            assert r <= THRESHOLD


def test_bad_input_raises_named_errors() -> None:
    b = get_backend("numpy-float64")
    with pytest.raises(NotUnitaryError, match="not unitary"):
        unitary_eig((2 * np.eye(3), np.zeros((3, 3))), backend=b)
    with pytest.raises(ShapeError):
        unitary_eig((np.ones((2, 3)), np.zeros((2, 3))), backend=b)
    with pytest.raises(NonFiniteError):
        unitary_eig((np.array([[np.nan]]), np.zeros((1, 1))), backend=b)
    with pytest.raises(BackendError, match="float or mpmath"):
        unitary_eig((np.eye(2, dtype=int), np.zeros((2, 2), dtype=int)), backend="sympy")
