"""The scoRNN analysis maths that the cayley claims judge (orthoverify.param.cayley_analysis):
Theorem 3.1's enumeration of D, the skew dimension, the experiments' parameter totals and App.
B's drift experiment, each on cases whose answer is known independently."""

from __future__ import annotations

import math

import numpy as np
import pytest

from orthoverify.backends import get_backend
from orthoverify.param import cayley as cy
from orthoverify.param import cayley_analysis as ca
from orthoverify.tolerance import THRESHOLD

F64 = get_backend("numpy-float64")
MP = get_backend("mpmath")


@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("det", [1, -1])
def test_admissible_signs_are_half_of_all_d_with_the_right_determinant(n: int, det: int) -> None:
    signs = list(ca.admissible_signs(n, det))
    assert len(signs) == 2 ** (n - 1) == len(set(signs))
    assert all(math.prod(s) == det and set(s) <= {1, -1} for s in signs)


def test_every_scaling_quarter_turn_attains_the_bound_exactly() -> None:
    """W = [[0, -1], [1, 0]]: both admissible D give max|a_ij| = 1 (Theorem 3.1's bound is tight)."""
    w = F64.asarray([[0.0, -1.0], [1.0, 0.0]])
    rows = ca.every_scaling(F64, w)
    assert [r[0] for r in rows] == [(1, 1), (-1, -1)]
    assert all(abs(r[1] - 1.0) <= 4 * F64.eps for r in rows)


def test_every_scaling_minus_identity_marks_the_singular_d() -> None:
    """W = -I (n = 2): D = I makes I + W D = 0 (recorded as inf, -inf); D = -I gives A = 0."""
    rows = dict((r[0], r[1:]) for r in ca.every_scaling(F64, F64.asarray(-np.eye(2))))
    assert rows[(1, 1)] == (math.inf, -math.inf)
    assert rows[(-1, -1)][0] == 0.0 and abs(rows[(-1, -1)][1] - math.log(4.0)) <= 4 * F64.eps


def test_log_abs_det_at_50_digits_and_in_float() -> None:
    x = np.array([[2.0, 1.0], [0.0, -3.0]])
    assert abs(ca.log_abs_det(F64, F64.asarray(x)) - math.log(6.0)) <= 4 * F64.eps
    mp = ca.log_abs_det(MP, MP.asarray(x))
    assert abs(mp - MP.ctx.log(6)) <= MP.ctx.mpf(10) ** -45  # type: ignore[attr-defined]
    assert ca.log_abs_det(F64, F64.asarray(np.zeros((2, 2)))) == -math.inf


@pytest.mark.parametrize("n", range(0, 7))
def test_skew_dimension_is_the_strict_upper_triangle(n: int) -> None:
    assert ca.skew_dimension(n) == n * (n - 1) // 2 == cy.parameter_count(n)


def test_scornn_parameters_of_a_stated_configuration() -> None:
    """MNIST, n = 170: 14365 (A) + 170 (U) + 170 (bias) + 1700 (V) + 10 (output bias) = 16415."""
    (row,) = [r for r in ca.SCORNN_CONFIGURATIONS if r["n"] == 170 and r["m"] == 1]
    assert ca.scornn_parameters(row, 170 * 169 // 2) == 16415
    assert len(ca.SCORNN_CONFIGURATIONS) == 8


def test_drift_experiment_records_both_updates_at_the_marked_steps() -> None:
    rec = ca.drift_experiment(F64, 4, 20, seed=1)
    assert rec["step"] == [1, 2, 5, 10, 20]
    assert all(len(v) == 5 for v in rec.values())
    assert max(rec["additive"]) <= THRESHOLD and max(rec["multiplicative"]) <= THRESHOLD  # 20 steps: no drift yet
    assert rec["loss_add"][-1] < rec["loss_add"][0]  # the additive update trains
