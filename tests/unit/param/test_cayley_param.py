"""The scaled Cayley parametrisation: transforms, the certified inverse map on adversarial
inputs, its building blocks, and clear errors for bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import sympy

from orthoverify import samples
from orthoverify.backends import get_backend
from orthoverify.errors import (
    ConvergenceError,
    DomainError,
    NonFiniteError,
    NotOrthogonalError,
    ShapeError,
    SingularError,
)
from orthoverify.param import cayley as cy
from orthoverify.tolerance import THRESHOLD

F64 = get_backend("numpy-float64")
EPS = np.finfo(np.float64).eps / 2


def _adversarial(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    z = samples.haar_orthogonal(rng, n)
    rot_pi = np.diag([-1.0, -1.0] + [1.0] * (n - 2)) if n >= 2 else -np.eye(1)
    haar_neg = samples.haar_orthogonal_det(rng, n, -1)
    return {
        "minus-identity": -np.eye(n),
        "identity": np.eye(n),
        "det-minus-one": np.diag([1.0] * (n - 1) + [-1.0]),
        "haar-det-minus-one": haar_neg,
        "cyclic-shift": np.roll(np.eye(n), 1, axis=0),
        "rotation-by-pi": z @ rot_pi @ z.T,
        "near-minus-identity": -samples.near_identity(rng, n, 1e-9),
        "quarter-turns": z @ samples.quarter_turns(n, odd_one=True) @ z.T,
        "haar": samples.haar_orthogonal(rng, n),
    }


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 16, 64])
def test_inverse_map_certifies_adversarial_inputs(n: int) -> None:
    rng = np.random.default_rng(n)
    for name, w in _adversarial(rng, n).items():
        res = cy.scaled_cayley_inverse(w)
        cert = res.certificate
        assert cert.holds, (name, cert.describe())
        assert cert.max_abs <= 1 + 4 * n * EPS, name
        assert np.array_equal(res.a, -res.a.T), name  # exactly skew
        rebuilt = cy.scaled_cayley(res.a, res.d)
        assert np.linalg.norm(rebuilt - w) / (n * EPS) <= THRESHOLD * max(1.0, math.sqrt(n)), name
        assert math.prod(res.d) == round(np.linalg.det(w)), name  # det D = det W


def test_inverse_map_exact_and_high_precision() -> None:
    rng = np.random.default_rng(3)
    sp = get_backend("sympy")
    for det in (1, -1):
        q = samples.rational_orthogonal(rng, 4, det=det)
        res = cy.scaled_cayley_inverse(q, backend=sp)
        assert res.certificate.excess_ratio == 0 and res.certificate.neumann == 0
        assert all(abs(v) <= 1 for v in res.a.reshape(-1))
        assert sp.is_zero(cy.scaled_cayley(res.a, res.d, backend=sp) - q)
    mp = get_backend("mpmath")
    w = cy.cayley(mp.asarray(samples.random_skew(rng, 6, 5.0)), backend=mp) * mp.asarray([[-1, 1, 1, -1, 1, 1]])
    res = cy.scaled_cayley_inverse(w, backend=mp)
    assert res.certificate.holds and res.certificate.neumann < 1e-45


def test_quarter_turn_attains_the_bound() -> None:
    """For a rotation by pi/2 every admissible D gives |a_12| = 1: the bound 1 is sharp."""
    w = np.array([[0.0, -1.0], [1.0, 0.0]])
    for d in ((1, 1), (-1, -1)):
        a = np.linalg.solve(np.eye(2) + w * np.array(d), np.eye(2) - w * np.array(d))
        assert abs(abs(a[0, 1]) - 1) < 1e-15
    assert cy.scaled_cayley_inverse(w).certificate.max_abs == pytest.approx(1.0, abs=1e-15)


def test_sign_choice_gives_det_at_least_one() -> None:
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 30):
        for w in _adversarial(rng, n).values():
            d, log_det, min_pivot = cy.sign_choice(w)
            sign, ref = np.linalg.slogdet(np.eye(n) + w * np.array(d))
            assert sign != 0 and ref == pytest.approx(log_det, abs=1e-9)
            assert log_det >= -1e-12 and min_pivot >= 1.0


def test_schur_complement_of_orthogonal_pivot_is_orthogonal() -> None:
    rng = np.random.default_rng(1)
    q = samples.haar_orthogonal(rng, 7)
    for s in (1, -1):
        sub = q[1:, 1:] - np.outer(q[1:, 0] * s, q[0, 1:]) / (1 + q[0, 0] * s)
        assert np.linalg.norm(sub.T @ sub - np.eye(6)) < 1e-14


def test_pair_flip_matches_a_fresh_solve_and_multiplies_det() -> None:
    rng = np.random.default_rng(2)
    w = samples.haar_orthogonal(rng, 6)
    d, _, _ = cy.sign_choice(w)
    x = np.eye(6) + w * np.array(d)
    a = np.linalg.solve(x, np.eye(6) - w * np.array(d))
    for j, k in itertools.combinations(range(6), 2):
        d2 = list(d)
        d2[j], d2[k] = -d2[j], -d2[k]
        x2 = np.eye(6) + w * np.array(d2)
        fresh = np.linalg.solve(x2, np.eye(6) - w * np.array(d2))
        assert np.abs(cy.pair_flip(a, j, k) - fresh).max() < 1e-12
        assert abs(np.linalg.det(x2)) == pytest.approx(abs(np.linalg.det(x)) * a[j, k] ** 2, rel=1e-10)
    single = list(d)
    single[0] = -single[0]
    assert abs(np.linalg.det(np.eye(6) + w * np.array(single))) < 1e-12  # one flip: always singular


def test_flips_restart_from_a_given_d() -> None:
    """From a poor D (a good one with its smallest-|a_jk| pair flipped, so that pair's new entry
    is 1/|a_jk| > 1) the flips restore the bound; with no flips allowed the map says so."""
    rng = np.random.default_rng(4)
    w = samples.haar_orthogonal(rng, 12)
    good = cy.scaled_cayley_inverse(w)
    a = good.a
    j, k = min(itertools.combinations(range(12), 2), key=lambda jk: abs(a[jk]))
    poor = list(good.d)
    poor[j], poor[k] = -poor[j], -poor[k]
    res = cy.scaled_cayley_inverse(w, d=poor)
    assert res.certificate.holds and res.certificate.started_from == "the given D"
    assert res.certificate.flips >= 1
    with pytest.raises(ConvergenceError, match="pair flips"):
        cy.scaled_cayley_inverse(w, d=poor, max_flips=0)


def test_theorem_3_2_gradient_against_finite_differences() -> None:
    rng = np.random.default_rng(5)
    n = 4
    a = samples.random_skew(rng, n)
    d = (1, -1, 1, -1)
    g = rng.standard_normal((n, n))
    grad = cy.cayley_gradient(a, d, g)
    assert np.array_equal(grad, -grad.T)
    h = 1e-6
    for i, j in itertools.combinations(range(n), 2):
        e = np.zeros((n, n))
        e[i, j], e[j, i] = 1.0, -1.0
        fd = (np.sum(g * cy.scaled_cayley(a + h * e, d)) - np.sum(g * cy.scaled_cayley(a - h * e, d))) / (2 * h)
        assert grad[i, j] == pytest.approx(fd, rel=1e-6, abs=1e-8)


def test_three_layers_and_modrelu() -> None:
    rng = np.random.default_rng(6)
    a = samples.random_skew(rng, 5)
    d = (1, 1, -1, 1, -1)
    h = rng.standard_normal((5, 3))
    assert np.allclose(cy.three_layers(a, d, h), cy.scaled_cayley(a, d) @ h, atol=1e-14)
    assert cy.three_layers(a, d, h[:, 0]).shape == (5,)
    z = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    b = np.array([-1.0, -1.0, 1.0, 0.0, -3.0])
    assert np.array_equal(cy.modrelu_real(z, b), np.array([-1.0, 0.0, 0.0, 0.5, 0.0]))
    assert cy.modrelu_printed(-2.0, -1.0) == -1.0
    with pytest.raises(DomainError, match="0/0"):
        cy.modrelu_printed(0.0, 1.0)


def test_init_blocks_eigenvalues() -> None:
    rng = np.random.default_rng(7)
    t = cy.init_angles(rng, 9)
    assert np.all((t >= 0) & (t <= math.pi / 2))
    s = cy.init_s(t)
    a = cy.init_blocks(s, 9)
    assert a.shape == (9, 9) and np.all(np.abs(a) <= 1)
    ev = np.linalg.eigvals(cy.cayley(a))
    assert np.allclose(np.sort(np.angle(ev)), np.sort(np.concatenate([t, -t, [0.0]])), atol=1e-12)
    assert cy.signs_with_rho(5, 2) == (-1, -1, 1, 1, 1)


def test_symbolic_transforms_are_exact() -> None:
    sp = get_backend("sympy")
    a = np.array([[0, sympy.Rational(1, 2)], [sympy.Rational(-1, 2), 0]], dtype=object)
    w = cy.cayley(a, backend=sp)
    assert sp.is_zero(sp.transpose(w) @ w - sp.eye(2))
    assert sp.is_zero(cy.inverse_cayley(w, backend=sp) - a)
    assert cy.parameter_count(5) == 10


def test_bad_input_errors() -> None:
    rng = np.random.default_rng(8)
    q = samples.haar_orthogonal(rng, 4)
    with pytest.raises(NotOrthogonalError, match="not orthogonal") as info:
        cy.scaled_cayley_inverse(q + 1e-6)
    assert info.value.ratio > info.value.threshold == THRESHOLD
    with pytest.raises(DomainError, match="not skew-symmetric"):
        cy.scaled_cayley(np.ones((3, 3)), (1, 1, 1))
    with pytest.raises(DomainError, match="entry 1 is 0"):
        cy.scaled_cayley(np.zeros((3, 3)), (1, 0, 1))
    with pytest.raises(DomainError, match=r"\+1 or -1"):
        cy.scaled_cayley(np.zeros((2, 2)), np.diag([1.0, 2.0]))
    with pytest.raises(ShapeError):
        cy.scaled_cayley(np.zeros((3, 3)), (1, 1))
    with pytest.raises(SingularError, match="I \\+ A"):
        cy.cayley(-np.eye(3))
    with pytest.raises(SingularError, match="eigenvalue -1"):
        cy.inverse_cayley(-np.eye(2))
    with pytest.raises(NonFiniteError):
        cy.scaled_cayley_inverse(np.array([[np.nan]]))
    with pytest.raises(ShapeError):
        cy.scaled_cayley_inverse(np.zeros((2, 3)))
    with pytest.raises(DomainError, match="bound"):
        cy.scaled_cayley_inverse(q, bound=0.5)
    with pytest.raises(SingularError):
        cy.pair_flip(np.zeros((3, 3)), 0, 1)
