"""The uRNN Jacobian into U(n) and its numerical rank (orthoverify.param.unitary_rank), and the
unitary.coverage claims run on the quick profile."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from orthoverify.backends import get_backend
from orthoverify.claims.unitary import _rank
from orthoverify.claims.unitary import coverage_threshold as cov
from orthoverify.engine.checks import RunContext
from orthoverify.engine.profiles import get_profile
from orthoverify.errors import (
    BackendError,
    DomainError,
    NonFiniteError,
    OrthoverifyError,
    ShapeError,
    ZeroVectorError,
)
from orthoverify.param import unitary_rank as ur
from orthoverify.param.unitary import CArray, urnn_factors, urnn_matrix, urnn_random
from orthoverify.tolerance import THRESHOLD
from tests.claims.claims_common import quick_run

F64 = get_backend("numpy-float64")
T64 = get_backend("torch-float64")


def _point(seed: int, n: int, backend: str = "numpy-float64") -> ur.URNNParameters:
    return ur.as_parameters(urnn_random(np.random.default_rng(seed), n), backend)


def _skew(rng: np.random.Generator, n: int) -> np.ndarray:
    z = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    return (z - z.conj().T) / 2


# =============================================================================== tangent coordinates
def test_tangent_coordinates_are_n_squared_and_isometric() -> None:
    rng = np.random.default_rng(0)
    for n in (1, 2, 4):
        a = _skew(rng, n)
        c = F64.to_numpy(ur.tangent_coordinates(F64, CArray(a.real, a.imag)))
        assert c.shape == (n * n,)
        assert np.linalg.norm(c) == pytest.approx(np.linalg.norm(a), rel=1e-14)
        back = ur.skew_from_coordinates(F64, c).to_complex(F64)
        np.testing.assert_allclose(back, a, atol=1e-15)


def test_tangent_coordinates_reject_a_non_skew_matrix() -> None:
    a = _skew(np.random.default_rng(1), 3) + np.eye(3)
    with pytest.raises(DomainError, match="not skew-Hermitian"):
        ur.tangent_coordinates(F64, CArray(a.real, a.imag))


# =============================================================================== Jacobians
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_autograd_jacobian_matches_the_analytic_one(n: int) -> None:
    p = _point(n, n)
    j_ad = T64.to_numpy(ur.jacobian_autograd(p))
    j_an = F64.to_numpy(ur.jacobian_analytic(p))
    assert j_ad.shape == j_an.shape == (n * n, 7 * n)
    ratio = np.linalg.norm(j_ad - j_an) / (n * F64.eps * np.linalg.norm(j_an))
    assert ratio <= THRESHOLD


def test_analytic_jacobian_matches_central_differences_at_50_digits() -> None:
    hp = get_backend("mpmath")
    p = ur.as_parameters(urnn_random(np.random.default_rng(3), 2), hp)
    ja = ur.jacobian_analytic(p)
    err = hp.to_float(hp.norm(ur.jacobian_central(p) - ja)) / hp.to_float(hp.norm(ja))
    assert err < 1e-35  # central differences at 50 digits are good to about 10^-40


def test_columns_are_the_derivatives_of_w() -> None:
    """One column by hand: moving w1[0] by t multiplies column 0 of W by e^(it)."""
    p = _point(4, 3)
    w = urnn_matrix(p).to_complex(F64)
    dw = np.zeros((3, 3), complex)
    dw[:, 0] = 1j * w[:, 0]
    a = w.conj().T @ dw
    want = F64.to_numpy(ur.tangent_coordinates(F64, CArray(a.real, a.imag)))
    np.testing.assert_allclose(F64.to_numpy(ur.jacobian_analytic(p))[:, 0], want, atol=1e-14)


# =============================================================================== rank
def test_symmetry_directions_lie_in_the_kernel() -> None:
    for n in (1, 3, 8):
        p = _point(10 + n, n)
        j = F64.to_numpy(ur.jacobian_analytic(p))
        k = F64.to_numpy(ur.symmetry_directions(p))
        assert k.shape == (7 * n, 7)
        assert np.linalg.norm(j @ k) <= THRESHOLD * n * F64.eps * np.linalg.norm(j) * np.linalg.norm(k)
        assert np.linalg.matrix_rank(k) == (6 if n == 1 else 7)  # at n = 1 the reflections are constant


def test_rank_is_min_of_n_squared_and_7n_minus_7() -> None:
    for n in range(1, 10):
        dec = ur.jacobian_rank(F64, ur.jacobian_analytic(_point(20 + n, n)))
        assert dec.clear and dec.rank == ur.rank_bound(n)
        if n >= 6:  # one below the 7n - 6 of the obvious symmetries: measure zero from n = 6
            assert dec.rank == 7 * n - 7 < n * n
            assert dec.gap > 1e12
        else:
            assert dec.rank == n * n and dec.margin > 1e6


def test_rank_is_confirmed_at_high_precision() -> None:
    p = urnn_random(np.random.default_rng(7), 6)
    d64 = ur.jacobian_rank(F64, ur.jacobian_analytic(ur.as_parameters(p)))
    hp = get_backend("mpmath-30")
    dhp = ur.jacobian_rank(hp, ur.jacobian_analytic(ur.as_parameters(p, hp)))
    assert d64.rank == dhp.rank == 35
    assert dhp.largest_dropped < 1e-26 < 1e-10 < dhp.smallest_retained
    assert abs(dhp.smallest_retained - d64.smallest_retained) < 1e-12


def test_decide_rank_reads_a_clear_gap_and_refuses_a_gray_zone() -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((20, 4)) @ rng.standard_normal((4, 9))  # a rank-4 map R^9 -> R^20
    dec = ur.jacobian_rank(F64, a)
    assert dec.rank == 4 and dec.gap > 1e10
    gray = ur.decide_rank([1.0, 0.5, 1e-9], rows=3, cols=3, eps=F64.eps)
    assert gray.rank is None and not gray.clear
    assert ur.decide_rank([0.0, 0.0], rows=2, cols=5, eps=F64.eps).rank == 0


def test_degenerate_maps_are_detected() -> None:
    n = 5
    p = _point(30, n)
    j = F64.to_numpy(ur.jacobian_analytic(p))
    k = F64.to_numpy(ur.symmetry_directions(p))
    # W along the symmetry directions does not move: J K is rounding noise against ||J|| ||K||
    assert ur.jacobian_rank(F64, j @ k, scale=float(np.linalg.norm(j, 2) * np.linalg.norm(k, 2))).rank == 0
    assert ur.jacobian_rank(F64, j[:, :n]).rank == n  # the phases of D1 alone: n directions
    # v2 = X v1 with X = F^-1 D2 Pi: R2 X R1 = X, the reflections cancel and the rank drops
    for name in ("numpy-float64", "mpmath"):
        b = get_backend(name)
        d = urnn_random(np.random.default_rng(30), n)
        p0 = ur.as_parameters(d, b)
        f = urnn_factors(p0)
        v2 = (f["Finv"] @ f["D2"] @ f["Pi"] @ p0.v1.reshape(n, 1)).reshape(n)
        q = ur.urnn_parameters(p0.w1, p0.w2, p0.w3, p0.v1, v2, p0.perm, backend=b)
        dec = ur.jacobian_rank(b, ur.jacobian_analytic(q))
        assert dec.clear and dec.rank == 21 < n * n
        case = {"n": str(n), "x": b.to_strings(ur.flat_parameters(q)), "perm": ",".join(map(str, q.perm))}
        replay = cov.CLAIMS[0].check("jacobian_rank").replay(case, get_backend("mpmath"))
        if name == "mpmath":  # degenerate to 50 digits: the threshold claim's replay flags it
            assert math.isinf(replay.ratio) and "rank 21" in replay.display
        else:  # degenerate only to float64 rounding: at 50 digits the rank is full again
            assert replay.ratio == 0 and "rank 25" in replay.display


def test_haar_targets_are_reached_for_small_n() -> None:
    rng = np.random.default_rng(4)
    z = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))
    q, r = np.linalg.qr(z)
    u = q * (np.diag(r) / abs(np.diag(r)))
    start = urnn_random(rng, 2)
    x0 = np.concatenate([start["w1"], start["w2"], start["w3"], *start["v1"], *start["v2"]])
    x, ratio = ur.urnn_preimage(u, start["perm"], x0)
    assert ratio <= THRESHOLD
    w = urnn_matrix(ur.urnn_from_flat(x, start["perm"])).to_complex(F64)
    assert np.linalg.norm(w - u) < 1e-13


# =============================================================================== bad input
def test_bad_input_raises_orthoverify_errors() -> None:
    good = F64.to_numpy(ur.flat_parameters(_point(0, 2)))
    with pytest.raises(ShapeError, match="7n"):
        ur.urnn_from_flat(good[:13], [0, 1])
    with pytest.raises(NonFiniteError):
        ur.urnn_from_flat(np.where(np.arange(14) == 3, np.nan, good), [0, 1])
    with pytest.raises(ZeroVectorError):
        ur.urnn_from_flat(np.where((np.arange(14) >= 6) & (np.arange(14) < 10), 0.0, good), [0, 1])
    with pytest.raises(DomainError, match="permutation"):
        ur.urnn_from_flat(good, [0, 0])
    with pytest.raises(ShapeError):
        ur.rank_bound(0)
    with pytest.raises(ShapeError):
        ur.skew_from_coordinates(F64, np.zeros(5))
    with pytest.raises(ShapeError):
        ur.decide_rank([1.0], rows=2, cols=2, eps=F64.eps)
    with pytest.raises(DomainError):
        ur.decide_rank([1.0, 0.5], rows=2, cols=2, eps=0.0)
    with pytest.raises(NonFiniteError):
        ur.decide_rank([1.0, math.nan], rows=2, cols=2, eps=F64.eps)
    with pytest.raises(BackendError):
        ur.jacobian_rank(get_backend("sympy"), np.eye(2, dtype=object))
    with pytest.raises(ShapeError):
        ur.urnn_preimage(np.eye(2), [0, 1], good[:7])
    with pytest.raises(OrthoverifyError):
        ur.urnn_preimage(np.ones((2, 3)), [0, 1], good)


# =============================================================================== claims
@pytest.mark.slow
def test_claims_on_the_quick_profile(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Read from the family's quick run (shared with tests/claims)."""
    data = json.loads(quick_run("unitary", tmp_path_factory).read_text())
    claims = [c for c in data["claims"] if c["id"].startswith("unitary.coverage")]
    assert {c["id"]: c["verdict"] for c in claims} == {
        "unitary.coverage": "verified",
        "unitary.coverage_threshold": "verified",
    }
    for c in claims:
        assert all(e["error"] is None and e["passed"] for e in c["evidence"])
    rank_ev = next(e for c in claims for e in c["evidence"] if e["check"] == "jacobian_rank")
    table = rank_ev["data"]["table"]
    assert {r["n"] for r in table} >= set(range(1, 9))
    assert all(r["rank"] == r["bound"] for r in table)
    assert "not exact" in rank_ev["notes"] and "from n = 6" in rank_ev["notes"]


def test_a_false_rank_claim_gets_a_replayable_counterexample() -> None:
    """A planted claim, 'rank n^2 for every n', is refuted at n = 6 and the counterexample replays."""

    def full_rank(n: int, rank: int) -> bool:
        return rank == n * n

    check, _ = _rank.rank_checks(
        full_rank, "rank below n^2", float_backend="numpy-float64", hp_sizes=lambda _: (), quantities=("rank", "rank")
    )
    ctx = RunContext("unitary.planted", "planted", F64, get_profile("quick"), seed=0)
    ev = check.run(ctx)
    assert not ev.passed and ev.counterexample is not None
    cx = ev.counterexample
    assert cx.inputs["n"] == "6" and cx.precision_digits == 50
    replay = check.replay(cx.inputs, get_backend("mpmath"))
    assert math.isinf(replay.ratio) and "rank 35" in replay.display
