"""The linear RNN of the svdRNN paper's Sec. 6 (param.linear_rnn) and the claims about it
(claims.svd: claim1, theorem5, corollary1): closed forms against autograd, exact and high-precision derivatives; bad
input; and the quick profile's verdicts, with every counterexample replayed from the JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import sympy
import torch

from orthoverify.backends import get_backend
from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.engine import get_registry, replay_from_file, run_checks
from orthoverify.engine.model import Counterexample
from orthoverify.engine.reference import central_gradient, exact_gradient
from orthoverify.engine.replay import replay_counterexample
from orthoverify.errors import DomainError, NonFiniteError, ShapeError
from orthoverify.param import linear_rnn as lr
from orthoverify.tolerance import THRESHOLD
from tests.claims.claims_common import quick_run

MODULES = ("orthoverify.claims.svd",)
IDS = ["svd.claim1", "svd.claim1.corrected", "svd.theorem5", "svd.corollary1"]
EXPECTED = {cid: get_registry(CLAIM_MODULES)[cid].expected for cid in IDS}  # declared by each claim (its one home)


def _instance(rng: np.random.Generator, n: int, d: int, t: int, rank: int | None = None) -> dict[str, np.ndarray]:
    f = rng.standard_normal((n * t, rank or n * t))
    return {
        "w": rng.standard_normal((n, n)) * 0.7,
        "y": rng.standard_normal((d, n)),
        "a": rng.standard_normal((d, n * t)),
        "sigma": f @ f.T,
    }


def _rat(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    vals = [sympy.Rational(int(rng.integers(-4, 5)), int(rng.integers(1, 4))) for _ in range(int(np.prod(shape)))]
    return np.array(vals, dtype=object).reshape(shape)


# =============================================================================== closed forms
def test_stacked_powers() -> None:
    w = np.array([[1.0, 2.0], [0.0, -1.0]])
    ww = lr.stacked_powers(w, 3)
    np.testing.assert_allclose(ww, np.hstack([w, w @ w, w @ w @ w]))
    assert lr.stacked_powers(w, 1).shape == (2, 2)


@pytest.mark.parametrize(("n", "d", "t", "rank"), [(1, 1, 1, None), (2, 3, 2, None), (3, 2, 3, 4), (2, 2, 3, 1)])
def test_risk_is_the_frobenius_form(n: int, d: int, t: int, rank: int | None) -> None:
    """tr(E Sigma E') + C = ||E Sigma^(1/2)||_F^2 + C with Sigma^(1/2) from an eigendecomposition."""
    x = _instance(np.random.default_rng(n + 10 * t), n, d, t, rank)
    lam, q = np.linalg.eigh(x["sigma"])
    root = q @ np.diag(np.sqrt(np.clip(lam, 0, None))) @ q.T
    e = x["y"] @ lr.stacked_powers(x["w"], t) - x["a"]
    r = lr.population_risk(x["w"], x["y"], x["a"], x["sigma"], t, 0.25)
    assert r == pytest.approx(np.linalg.norm(e @ root) ** 2 + 0.25, rel=1e-12)


def _finite(rng: np.random.Generator, n: int, d: int, t: int, k: int, *, centred: bool = True) -> dict:
    raw = [int(rng.integers(1, 5)) for _ in range(k)]
    p = [sympy.Rational(v, sum(raw)) for v in raw]
    xs = [_rat(rng, (n, t)) for _ in range(k)]
    es = [_rat(rng, (d,)) for _ in range(k)]
    if centred:  # +eta and -eta: E[eta | X] = 0
        noises = [np.stack([e, -e]) for e in es]
    else:  # noise that follows X: E[eta | X] = eta_k != 0
        noises = [np.stack([e, e]) for e in es]
    return {"points": xs, "weights": p, "noises": noises}


@pytest.mark.parametrize(("n", "d", "t"), [(1, 1, 1), (1, 2, 3), (2, 2, 2), (2, 3, 1)])
def test_risk_formula_equals_the_expectation_exactly(n: int, d: int, t: int) -> None:
    rng = np.random.default_rng(7 * n + t)
    s = get_backend("sympy")
    w, y, a = _rat(rng, (n, n)), _rat(rng, (d, n)), _rat(rng, (d, n * t))
    dist = _finite(rng, n, d, t, 4)
    sigma, c = lr.data_moments(dist["points"], dist["weights"], dist["noises"], backend=s)
    closed = lr.population_risk(w, y, a, sigma, t, c, backend=s)
    assert sympy.simplify(closed - lr.expected_loss(w, y, a, **dist, backend=s)) == 0


def test_risk_formula_needs_centred_noise() -> None:
    """With E[eta | X] != 0 the cross term survives: the comparison can fail."""
    rng = np.random.default_rng(3)
    s = get_backend("sympy")
    w, y, a = _rat(rng, (2, 2)), _rat(rng, (2, 2)), _rat(rng, (2, 4))
    dist = _finite(rng, 2, 2, 2, 3, centred=False)
    sigma, c = lr.data_moments(dist["points"], dist["weights"], dist["noises"], backend=s)
    closed = lr.population_risk(w, y, a, sigma, 2, c, backend=s)
    assert closed != lr.expected_loss(w, y, a, **dist, backend=s)


@pytest.mark.parametrize(("n", "d", "t"), [(1, 1, 1), (1, 1, 3), (2, 2, 2), (2, 3, 3), (3, 2, 2), (4, 4, 3)])
def test_gradient_and_hessian_match_autograd(n: int, d: int, t: int) -> None:
    x = _instance(np.random.default_rng(100 * n + t), n, d, t)
    tx = {k: torch.tensor(v) for k, v in x.items()}
    w = tx["w"].clone().requires_grad_(True)
    r = lr.population_risk(w, tx["y"], tx["a"], tx["sigma"], t)
    (g,) = torch.autograd.grad(r, (w,), create_graph=True)
    h = torch.stack(
        [torch.autograd.grad(g.reshape(-1)[k], (w,), retain_graph=True)[0].reshape(-1) for k in range(n * n)]
    )
    grad = lr.risk_gradient(x["w"], x["y"], x["a"], x["sigma"], t)
    hess = lr.risk_hessian(x["w"], x["y"], x["a"], x["sigma"], t)
    np.testing.assert_allclose(grad, g.detach().numpy(), rtol=1e-10, atol=1e-10 * np.abs(grad).max())
    np.testing.assert_allclose(hess, h.numpy(), rtol=1e-10, atol=1e-10 * np.abs(hess).max())
    np.testing.assert_allclose(hess, hess.T, atol=1e-12 * np.abs(hess).max())
    # the torch path of the closed forms agrees with the NumPy one
    tg = lr.risk_gradient(tx["w"], tx["y"], tx["a"], tx["sigma"], t)
    np.testing.assert_allclose(tg.numpy(), grad, rtol=1e-12, atol=1e-12 * np.abs(grad).max())


@pytest.mark.parametrize(("n", "d", "t"), [(1, 1, 2), (2, 2, 2), (2, 1, 3)])
def test_gradient_and_hessian_are_exact_derivatives(n: int, d: int, t: int) -> None:
    rng = np.random.default_rng(n + d + t)
    s = get_backend("sympy")
    w, y, a = _rat(rng, (n, n)), _rat(rng, (d, n)), _rat(rng, (d, n * t))
    f = _rat(rng, (n * t, n * t))
    sigma = f @ f.T
    pb = lr.problem(y, a, sigma, t, backend=s)
    grad = lr.risk_gradient(w, y, a, sigma, t, backend=s)
    assert s.is_zero(grad - exact_gradient(lambda v: sympy.expand(pb.risk(v)), w))
    # the Hessian's column (r, s) is the exact derivative of the gradient along E_rs
    hess = lr.risk_hessian(w, y, a, sigma, t, backend=s)
    for k in range(n * n):
        col = exact_gradient(lambda v, k=k: sympy.expand(pb.gradient(v).reshape(-1)[k]), w).reshape(-1)
        assert s.is_zero(hess[k, :] - col)


def test_gradient_matches_central_differences_at_50_digits() -> None:
    hp = get_backend("mpmath")
    x = _instance(np.random.default_rng(5), 2, 3, 3)
    pb = lr.problem(hp.asarray(x["y"]), hp.asarray(x["a"]), hp.asarray(x["sigma"]), 3, backend=hp)
    w = hp.asarray(x["w"])
    diff = pb.gradient(w) - central_gradient(pb.risk, w, hp)
    assert float(hp.norm(diff)) <= 1e-30 * float(hp.norm(pb.gradient(w)))


def test_printed_gradient_is_wrong_already_for_n_t_1() -> None:
    """R(w) = (y w - a)^2 s: the true derivative is 2 y (y w - a) s, the printed one (y w - a) s."""
    s = get_backend("sympy")
    w, y, a, sig = (np.array([[sympy.Rational(v)]], dtype=object) for v in ("1", "2", "1/2", "3"))
    true = lr.risk_gradient(w, y, a, sig, 1, backend=s)[0, 0]
    printed = lr.claim1_gradient_printed(w, y, a, sig, 1, backend=s)[0, 0]
    assert true == 2 * 2 * (2 - sympy.Rational(1, 2)) * 3 == 18
    assert printed == (2 - sympy.Rational(1, 2)) * 3
    with pytest.raises(ShapeError, match="d = n"):
        lr.claim1_gradient_printed(np.eye(2), np.ones((3, 2)), np.ones((3, 4)), np.eye(4), 2)


def test_every_backend_gives_the_same_risk() -> None:
    x = _instance(np.random.default_rng(11), 2, 2, 2)
    ref = lr.population_risk(x["w"], x["y"], x["a"], x["sigma"], 2)
    for name in ("numpy-float32", "torch-float32", "torch-float64", "mpmath", "sympy"):
        b = get_backend(name)
        r = lr.population_risk(*(b.asarray(x[k]) for k in ("w", "y", "a", "sigma")), 2, backend=b)
        tol = 1e-5 if "32" in name else 1e-13
        assert b.to_float(r) == pytest.approx(float(ref), rel=tol)


# =============================================================================== bad input
def test_bad_input_raises_orthoverify_errors() -> None:
    x = _instance(np.random.default_rng(2), 2, 2, 2)
    w, y, a, sigma = x["w"], x["y"], x["a"], x["sigma"]
    bad = sigma.copy()
    bad[0, 1] += 1e-3
    with pytest.raises(DomainError, match="symmetric"):
        lr.population_risk(w, y, a, bad, 2)
    with pytest.raises(DomainError, match="symmetric"):
        lr.risk_gradient(w, y, a, bad, 2)
    not_psd = sigma - 2 * np.linalg.eigvalsh(sigma)[-1] * np.eye(4)
    with pytest.raises(DomainError, match="semidefinite"):
        lr.population_risk(w, y, a, not_psd, 2)
    lr.risk_gradient(w, y, a, not_psd, 2)  # a derivative of the closed form: any symmetric Sigma
    with pytest.raises(ShapeError):
        lr.population_risk(w, y, a[:, :3], sigma, 2)
    with pytest.raises(ShapeError):
        lr.population_risk(w, y, a, sigma[:3, :3], 2)
    with pytest.raises(ShapeError):
        lr.population_risk(w, y[:, :1], a, sigma, 2)
    with pytest.raises(ShapeError):
        lr.population_risk(np.ones((2, 3)), y, a, sigma, 2)
    with pytest.raises(ShapeError):
        lr.risk_hessian(np.eye(3), y, a, sigma, 2)
    with pytest.raises(ShapeError):
        lr.population_risk(w, y, a, sigma, 2, np.ones(2))
    nan = w.copy()
    nan[0, 0] = np.nan
    with pytest.raises(NonFiniteError):
        lr.population_risk(nan, y, a, sigma, 2)
    with pytest.raises(NonFiniteError):
        lr.population_risk(w, y, a, sigma, 2, np.inf)
    with pytest.raises(DomainError, match="t"):
        lr.stacked_powers(w, 0)
    with pytest.raises(DomainError, match="t"):
        lr.population_risk(w, y, a[:, :0], sigma[:0, :0], 0)
    with pytest.raises(DomainError, match="t"):
        lr.risk_gradient(w, y, a, sigma, 2.0)
    with pytest.raises(DomainError, match=">= 0"):
        lr.population_risk(w, y, a, sigma, 2, -1.0)


def test_bad_distributions_are_rejected() -> None:
    xs = [np.ones((1, 2)), np.zeros((1, 2))]
    noise = [np.array([[1.0], [-1.0]])] * 2
    w, y, a = np.eye(1), np.eye(1), np.ones((1, 2))
    with pytest.raises(DomainError, match="sum to 1"):
        lr.expected_loss(w, y, a, xs, [0.5, 0.6], noise)
    with pytest.raises(DomainError, match="nonnegative"):
        lr.expected_loss(w, y, a, xs, [1.5, -0.5], noise)
    with pytest.raises(ShapeError):
        lr.expected_loss(w, y, a, [np.ones((1, 2)), np.ones((1, 3))], [0.5, 0.5], noise)
    with pytest.raises(ShapeError):
        lr.expected_loss(w, y, a, xs, [0.5, 0.5], [np.ones((2, 2))] * 2)
    with pytest.raises(ShapeError):
        lr.data_moments([], [], [])


# =============================================================================== critical points
HAND = {"y": [["1"]], "a": [["1/10", "1"]], "sigma": np.eye(2), "t": 2}


def test_n1_critical_points_exact_and_searched_agree() -> None:
    g = lr.global_minimum(HAND["y"], HAND["a"], HAND["sigma"], 2)
    assert g.certified and len(g.critical_points) == 3
    kinds = [cp.kind for cp in g.critical_points]  # sorted by w
    assert kinds == ["min", "max", "min"]
    spurious = g.critical_points[0]
    assert float(spurious.w[0, 0]) == pytest.approx(-0.650487994155197, abs=1e-14)
    assert float(spurious.risk - g.risk) == pytest.approx(0.282116026906843, abs=1e-14)
    found = lr.find_critical_points(HAND["y"], HAND["a"], HAND["sigma"], 2, starts=12, seed=0)
    assert len(found) == 3
    for cp in found:
        assert float(cp.gradient_norm) < 1e-40
        assert any(abs(cp.w[0, 0] - e.w[0, 0]) < 1e-40 and cp.kind == e.kind for e in g.critical_points)


def test_search_is_deterministic_and_classifies() -> None:
    rng = np.random.default_rng(4)
    y, a = rng.standard_normal((2, 2)), rng.standard_normal((2, 4))
    one = lr.find_critical_points(y, a, np.eye(4), 2, starts=16, seed=9)
    two = lr.find_critical_points(y, a, np.eye(4), 2, starts=16, seed=9)
    assert [cp.w_strings() for cp in one] == [cp.w_strings() for cp in two]
    assert one[0].kind == "min"
    for cp in one:
        assert float(cp.gradient_norm) < 1e-40
        assert cp.kind == lr.classify(cp.hessian_eigenvalues)
        assert float(cp.sigma_min) == pytest.approx(np.linalg.svd(get_backend("mpmath").to_numpy(cp.w))[1][-1])
    control = lr.find_critical_points(y, rng.standard_normal((2, 2)), np.eye(2), 1, starts=6, seed=1)
    assert [cp.kind for cp in control] == ["min"]  # t = 1: a convex quadratic


def test_classify() -> None:
    assert lr.classify([1.0, 2.0]) == "min"
    assert lr.classify([-1.0, -2.0]) == "max"
    assert lr.classify([-1.0, 2.0]) == "saddle"
    assert lr.classify([0.0, 2.0]) == "degenerate"


# =============================================================================== the claims
@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return quick_run("svd", tmp_path_factory)  # the family's quick run, shared with tests/claims


def _claims(path: Path) -> dict[str, dict]:
    return {c["id"]: c for c in json.loads(path.read_text())["claims"] if c["id"] in IDS}


def test_claim1_corrected_rests_on_every_method(quick: Path) -> None:
    """Each verdict is test_verdict[<id>] (tests/claims/test_verdicts.py); here the evidence behind one."""
    claims = _claims(quick)
    corrected = claims["svd.claim1.corrected"]
    assert {e["method"] for e in corrected["evidence"]} == {"symbolic", "float", "high-precision"}
    assert {e["backend"] for e in corrected["evidence"]} >= {
        "numpy-float32",
        "numpy-float64",
        "torch-float32-cpu",
        "torch-float64-cpu",
        "mpmath-50",
        "sympy",
    }


def test_every_counterexample_replays(quick: Path) -> None:
    claims = _claims(quick)
    for cid, verdict in EXPECTED.items():
        if verdict != "refuted":
            continue
        rep = replay_from_file(quick, cid, modules=MODULES)
        assert rep.reproduced, cid
        if rep.float64 is not None:
            assert rep.float64.ratio > THRESHOLD, cid
    # the exact n = 1 counterexample of Theorem 5 is kept in its evidence
    (ev,) = [e for e in claims["svd.theorem5"]["evidence"] if e["check"] == "witness"]
    inputs = ev["counterexample"]["inputs"]
    cx = Counterexample(inputs, "R(w*) - R_min", "", "exact", "witness")
    assert replay_counterexample("svd.theorem5", cx, modules=MODULES).reproduced


def test_claim1_counterexample_is_n_t_1(quick: Path) -> None:
    cx = _claims(quick)["svd.claim1"]["counterexample"]
    assert cx["precision_digits"] == "exact" and cx["value"] == "-1"
    assert cx["inputs"] == {"W": [["1"]], "Y": [["1"]], "A": [["0"]], "Sigma": [["1"]], "t": "1"}


def test_theorem5_counterexample_is_a_strict_local_minimum(quick: Path) -> None:
    claim = _claims(quick)["svd.theorem5"]
    assert claim["counterexample"]["check"] == "witness"  # the strongest (exact) is recorded
    (search,) = [e for e in claim["evidence"] if e["check"] == "search"]
    cx = search["counterexample"]  # the search's own, kept in its evidence
    assert cx["check"] == "search" and len(cx["inputs"]["W"]) == 2
    hp = get_backend("mpmath")
    inp = cx["inputs"]
    pb = lr.problem(hp.asarray(inp["Y"]), hp.asarray(inp["A"]), hp.asarray(inp["Sigma"]), int(inp["t"]), backend=hp)
    w = hp.asarray(inp["W"])
    assert float(hp.norm(pb.gradient(w))) < 1e-40
    assert min(float(v) for v in lr.hessian_eigenvalues(pb.hessian(w), hp)) > 0
    assert float(lr.sigma_min(w, backend=hp)) > 0.1
    assert float(pb.risk(w) - pb.risk(hp.asarray(inp["W_better"]))) > 0.1
    # every critical point found is a candidate, measured (the search against the exact roots at n = 1:
    # tests/claims/test_claims_svd.py)
    assert search["cases"] > 1


def test_corollary_pulls_back_in_both_checks(quick: Path) -> None:
    claim = _claims(quick)["svd.corollary1"]
    cx = claim["counterexample"]
    assert cx["inputs"]["sigma_star"] == "1" and cx["inputs"]["r"] == "0.1"
    for e in claim["evidence"]:
        assert not e["passed"] and "confirmed" in e["notes"], e["check"]
    # the perturbations of p* corroborate the local minimum (the measure's stats, deciding nothing)
    (hand,) = [e for e in claim["evidence"] if e["check"] == "witness"]
    assert all(v >= 0 for _, v in hand["data"]["stats"]["min (L(p* + rho z) - L(p*)) / rho^2"])


def test_same_seed_same_results(quick: Path) -> None:
    again = run_checks(["svd.theorem5"], profile="quick", seed=0, workers=1, modules=MODULES)
    before = _claims(quick)["svd.theorem5"]
    (c,) = again.claims
    assert c.verdict == before["verdict"]
    cx = c.counterexample
    assert (cx.to_json() if cx else None) == before["counterexample"]
