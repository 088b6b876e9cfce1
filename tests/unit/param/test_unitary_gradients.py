"""Gradients through unrolled orthogonal/unitary RNNs (param.unitary_gradients) and the claims of
Sec. 1 of the uRNN paper (claims.unitary: gradient_bound*, chain_rule*): autograd against the
backward recursion in float64 and at 50 digits, SymPy's exact derivative, modReLU's Jacobian, the
printed chain rule on the exact example, bad input, and the quick-profile verdicts with
replayable counterexamples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sympy
import torch

from orthoverify import samples
from orthoverify.backends import get_backend
from orthoverify.claims.unitary import chain_rule as cl
from orthoverify.claims.unitary import gradient_bound_modrelu
from orthoverify.engine import replay_from_file
from orthoverify.errors import (
    BackendError,
    DomainError,
    NonFiniteError,
    NotOrthogonalError,
    OrthoverifyError,
    ShapeError,
)
from orthoverify.param import unitary as un
from orthoverify.param import unitary_gradients as ug
from tests.claims.claims_common import expected_verdicts, quick_run

MODULES = (
    "orthoverify.claims.unitary.gradient_bound",
    "orthoverify.claims.unitary.gradient_bound_modrelu",
    "orthoverify.claims.unitary.chain_rule",
)
F64 = get_backend("numpy-float64")
T64 = get_backend("torch-float64")
MP = get_backend("mpmath")
SY = get_backend("sympy")


def _case(act: str, seed: int = 0, n: int = 3, t_len: int = 20) -> dict[str, object]:
    return cl.float_case(np.random.default_rng(seed), "complex", n, t_len, act=act, bias_mode="mixed")


def _np(b: object, xs: list[object]) -> np.ndarray:
    return np.stack([b.to_numpy(x) for x in xs])  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("act", ["relu", "modrelu"])
def test_autograd_agrees_with_backward_in_float64(act: str) -> None:
    case = _case(act)
    run = cl.run_case(T64, case, track=True)
    auto = _np(T64, ug.autograd_gradients(run, case["g"]))
    rec = _np(T64, ug.backward(run, case["g"]))
    assert auto.shape == (run.T + 1, run.N)
    assert np.abs(auto).max() > 0
    np.testing.assert_allclose(auto, rec, rtol=0, atol=1e-12 * np.abs(rec).max())
    # the same recursion on NumPy gives the same numbers
    rec_np = _np(F64, ug.backward(cl.run_case(F64, case), case["g"]))
    np.testing.assert_allclose(rec_np, rec, rtol=0, atol=1e-12 * np.abs(rec).max())


@pytest.mark.parametrize("act", ["relu", "modrelu"])
def test_backward_at_50_digits_agrees_with_autograd(act: str) -> None:
    case = _case(act, seed=1, n=2, t_len=8)
    run64 = cl.run_case(T64, case, track=True)
    auto = _np(T64, ug.autograd_gradients(run64, case["g"]))
    run_mp = cl.run_case(MP, case)
    rec = _np(MP, ug.backward(run_mp, case["g"]))
    np.testing.assert_allclose(rec, auto, rtol=0, atol=1e-11 * np.abs(auto).max())
    # the 50-digit run polished W to 50-digit orthogonality
    w = run_mp.ws[0]
    resid = MP.to_float(MP.norm(MP.transpose(w) @ w - MP.eye(run_mp.N)))
    assert resid < 1e-45


def test_backward_equals_sympy_derivative_exactly() -> None:
    rng = np.random.default_rng(5)
    for kind, n in (("real", 2), ("general", 2), ("real-per-step", 3), ("complex", 1)):
        case = cl.exact_case(rng, kind, n, 2)
        run = cl.run_case(SY, case)
        exact = ug.exact_gradients(run, case["g"])
        rec = ug.backward(run, case["g"])
        corrected = ug.chain_rule_gradients(run, case["g"], "corrected")
        for a, b, c in zip(exact, rec, corrected, strict=True):
            assert SY.is_zero(a - b) and SY.is_zero(a - c), kind


def test_forward_matches_real_rnn_and_complex_rnn() -> None:
    rng = np.random.default_rng(2)
    n, t_len = 3, 5
    w = samples.haar_unitary(rng, n)
    v = rng.standard_normal((n, 2)) + 1j * rng.standard_normal((n, 2))
    xs = rng.standard_normal((t_len, 2))
    h0 = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    vhat = np.vstack([v.real, v.imag])
    run = ug.unroll(un.embed_matrix(w), vhat, xs, np.concatenate([h0.real, h0.imag]), backend=F64)
    ref = un.complex_rnn(w, v, xs, h0, "relu")
    for h, r in zip(run.hs[1:], ref, strict=True):
        np.testing.assert_allclose(h, np.concatenate([r.re, r.im]), atol=1e-13)
    bias = rng.uniform(-1, 1, n)
    run_m = ug.unroll(
        un.embed_matrix(w), vhat, xs, np.concatenate([h0.real, h0.imag]), activation="modrelu", bias=bias, backend=F64
    )
    ref_m = un.complex_rnn(w, v, xs, h0, "modrelu", bias=bias)
    for h, r in zip(run_m.hs[1:], ref_m, strict=True):
        np.testing.assert_allclose(h, np.concatenate([r.re, r.im]), atol=1e-13)


def test_modrelu_twin_matches_modrelu() -> None:
    rng = np.random.default_rng(3)
    z = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    z[2] = 0
    bias = np.array([0.5, -0.3, -1.0, -5.0, 0.0, 2.0])
    twin = ug.modrelu_twin(F64, np.concatenate([z.real, z.imag]), bias)
    ref = un.modrelu(z, bias)
    np.testing.assert_allclose(twin, np.concatenate([ref.re, ref.im]), atol=1e-15)
    assert not np.any(twin[[3, 9]])  # |z_3| + b_3 < 0: killed


# ----------------------------------------------------------------------------- modReLU Jacobian
def test_modrelu_jacobian_eigenvalues_are_one_and_one_plus_b_over_modulus() -> None:
    rng = np.random.default_rng(4)
    for _ in range(20):
        x, y = rng.standard_normal(2)
        r = float(np.hypot(x, y))
        b = float(rng.uniform(-0.9 * r, 2.0))
        jac = ug.activation_jacobian(F64, np.array([x, y]), "modrelu", np.array([b]))
        np.testing.assert_allclose(jac, jac.T, atol=1e-15)
        np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(jac)), np.sort([1.0, 1.0 + b / r]), atol=1e-12)
        np.testing.assert_allclose(jac @ np.array([x, y]), [x, y], atol=1e-12)  # radial: eigenvalue 1
    # exactly: z = 3 + 4i, b = 1: eigenvalues 1 and 6/5; b = -5 (kink): slope 1/2 along z, 0 across
    jac = sympy.Matrix(ug.activation_jacobian(SY, SY.asarray([3, 4]), "modrelu", SY.asarray([1])))
    assert jac.eigenvals() == {1: 1, sympy.Rational(6, 5): 1}
    kink = sympy.Matrix(ug.activation_jacobian(SY, SY.asarray([3, 4]), "modrelu", SY.asarray([-5])))
    assert kink == sympy.Matrix([[9, 12], [12, 16]]) / 50
    # z = 0: the identity near 0 for b = 0, zero for b < 0
    assert sympy.Matrix(ug.activation_jacobian(SY, SY.asarray([0, 0]), "modrelu", SY.asarray([0]))) == sympy.eye(2)
    assert sympy.Matrix(ug.activation_jacobian(SY, SY.asarray([0, 0]), "modrelu", SY.asarray([-1]))).is_zero_matrix


def test_modrelu_autograd_is_finite_at_zero_and_at_the_kink() -> None:
    z = torch.tensor([0.0, 3.0, 0.0, 4.0], dtype=torch.float64, requires_grad=True)
    out = ug.modrelu_twin(T64, z, torch.tensor([0.0, -5.0], dtype=torch.float64))
    jac = torch.stack([torch.autograd.grad(out[i], z, retain_graph=True)[0] for i in range(4)])
    ref = ug.activation_jacobian(F64, np.array([0.0, 3.0, 0.0, 4.0]), "modrelu", np.array([0.0, -5.0]))
    np.testing.assert_allclose(jac.numpy(), ref, atol=1e-15)


def test_stationary_modrelu_gradient_doubles_every_step() -> None:
    case = gradient_bound_modrelu.MODRELU_GROWTH
    run = cl.run_case(SY, case)
    norms = [sympy.nsimplify(v) for v in ug.gradient_norms(SY, ug.backward(run, case["g"]))]
    assert norms == [sympy.Integer(2) ** (run.T - t) for t in range(run.T + 1)]


# ----------------------------------------------------------------------------- eq. 3
def test_printed_product_differs_from_the_gradient_on_the_exact_example() -> None:
    case = cl.HAND_BUILT_CHAIN
    run = cl.run_case(SY, case)
    assert list(run.zs[0]) == [sympy.Rational(3, 5), sympy.Rational(-6, 5)]  # D_1 = diag(1, 0)
    truth = ug.exact_gradients(run, case["g"])[0]
    assert list(truth) == [sympy.Rational(3, 5), sympy.Rational(-4, 5)]
    row = ug.chain_rule_gradient(run, case["g"], 0, "printed_row")
    col = ug.chain_rule_gradient(run, case["g"], 0, "printed_column")
    fixed = ug.chain_rule_gradient(run, case["g"], 0, "corrected")
    assert list(row) == [sympy.Rational(3, 5), sympy.Rational(4, 5)]
    assert list(col) == [sympy.Rational(3, 5), 0]
    assert SY.is_zero(fixed - truth)
    # the literal left-to-right product and the accumulated one agree
    assert SY.is_zero(ug.chain_rule_product(run, 0, "printed") - ug.chain_rule_products(run, "printed")[0])
    m = cl.q_chain_printed(SY, case)
    assert m.ratio == float("inf") and "printed_column" in (m.value or "")


def test_printed_column_reading_agrees_when_every_unit_is_active() -> None:
    """With D = I and one shared W the printed product is W'^(T-t): the column reading then holds,
    so the refutation rests on inactive units (and the row reading fails even then)."""
    rng = np.random.default_rng(6)
    case = cl.exact_case(rng, "permutation", 3, 3)
    run = cl.run_case(SY, case)
    truth = ug.backward(run, case["g"])
    col = ug.chain_rule_gradients(run, case["g"], "printed_column")
    assert all(SY.is_zero(a - b) for a, b in zip(col, truth, strict=True))


# ----------------------------------------------------------------------------- bad input
def test_bad_input_raises_orthoverify_errors() -> None:
    case = _case("relu", n=2, t_len=3)
    args = (case["W"], case["V"], case["xs"], case["h0"])
    with pytest.raises(NotOrthogonalError):
        ug.unroll(np.asarray(case["W"]) * 1.01, *args[1:], backend=F64)
    with pytest.raises(NotOrthogonalError):
        ug.unroll([[1, 1], [0, 1]], [[0], [0]], [[0]], [0, 0], backend=SY)
    with pytest.raises(ShapeError):
        ug.unroll(*args[:3], np.zeros(3), backend=F64)
    with pytest.raises(ShapeError):
        ug.unroll(np.stack([np.eye(4)] * 2), *args[1:], backend=F64)  # 2 matrices W_k for T = 3
    with pytest.raises(NonFiniteError):
        ug.unroll(*args[:3], np.full(4, np.nan), backend=F64)
    with pytest.raises(DomainError):
        ug.unroll(*args, activation="tanh", backend=F64)  # type: ignore[arg-type]
    with pytest.raises(DomainError):
        ug.unroll(*args, bias=[1.0], backend=F64)  # ReLU's bias belongs in c
    with pytest.raises(ShapeError):
        ug.unroll(np.eye(3), np.zeros((3, 1)), [[0.0]], np.ones(3), activation="modrelu", bias=[0.0], backend=F64)
    with pytest.raises(DomainError):  # modReLU at z = 0 with b > 0 has no value
        ug.unroll(np.eye(2), [[0.0], [0.0]], [[0.0]], [0.0, 0.0], activation="modrelu", bias=[1.0], backend=F64)
    run = ug.unroll(*args, backend=T64)
    with pytest.raises(BackendError):
        ug.autograd_gradients(run, case["g"])
    with pytest.raises(BackendError):
        ug.unroll(*args, backend=F64, track=True)
    with pytest.raises(ShapeError):
        ug.backward(ug.unroll(*args, backend=F64), np.ones(3))
    with pytest.raises(DomainError):
        ug.exact_gradients(ug.unroll(*args, backend=F64), case["g"])
    with pytest.raises(DomainError):
        ug.chain_rule_gradient(ug.unroll(*args, backend=F64), case["g"], 0, "sideways")  # type: ignore[arg-type]
    for exc in (NotOrthogonalError, ShapeError, DomainError, BackendError):
        assert issubclass(exc, OrthoverifyError)


# ----------------------------------------------------------------------------- the claims
EXPECTED = {
    cid: v
    for cid, v in expected_verdicts("unitary").items()
    if cid.startswith(("unitary.gradient_bound", "unitary.chain_rule"))
}


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return quick_run("unitary", tmp_path_factory)  # the family's quick run, shared with tests/claims


def _claims(quick: Path) -> list[dict[str, Any]]:
    """The gradient claims' entries of the family's quick run."""
    return [c for c in json.loads(quick.read_text())["claims"] if c["id"] in EXPECTED]


def test_counterexamples_replay(quick: Path) -> None:
    by_id = {c["id"]: c for c in _claims(quick)}
    modrelu = by_id["unitary.gradient_bound_modrelu"]["counterexample"]
    # the strongest is recorded (the exact hand-built case); the search's 50-digit one stays in its evidence
    assert modrelu["check"] == "witness" and modrelu["precision_digits"] == "exact"
    kept = [e["counterexample"] for e in by_id["unitary.gradient_bound_modrelu"]["evidence"] if e["refutes"]]
    assert any(cx["check"] == "search" and cx["precision_digits"] == 50 for cx in kept)
    assert by_id["unitary.chain_rule"]["counterexample"]["precision_digits"] == "exact"
    for cid in ("unitary.gradient_bound_modrelu", "unitary.chain_rule"):
        rep = replay_from_file(quick, cid, modules=MODULES)
        assert rep.reproduced, cid
    rep = replay_from_file(quick, "unitary.gradient_bound_modrelu", modules=MODULES)
    rounded = dict(rep.rounded)  # an exact counterexample is also evaluated in float64 and at 50 digits
    assert "float64" in rounded and not rounded["float64"].startswith("not evaluated")


def test_trajectory_data_holds_every_gradient_norm(quick: Path) -> None:
    for c in _claims(quick):
        for e in c["evidence"]:
            if e["check"] == "trajectory":
                d = e["data"]
                assert len(d["t"]) == len(d["grad_norm_autograd"]) == len(d["grad_norm_backward"]) == 101
                np.testing.assert_allclose(d["grad_norm_autograd"], d["grad_norm_backward"], rtol=1e-9, atol=1e-12)
                assert d["grad_norm_autograd"][-1] == pytest.approx(d["bound"])
