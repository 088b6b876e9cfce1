"""Tests of orthoverify.testing: each assert passes on good input (returning its ratio) and fails
with a message that states the ratio, the threshold, the shape and the dtype."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from orthoverify import samples
from orthoverify.errors import DTypeError
from orthoverify.param.unitary import as_carray
from orthoverify.testing import (
    assert_allclose_ratio,
    assert_gradients_match,
    assert_orthogonal,
    assert_skew_symmetric,
    assert_unitary,
)
from orthoverify.tolerance import THRESHOLD

SAYS_THRESHOLD = f"threshold {THRESHOLD:g}"  # how a failure message names the threshold

RNG_SEED = 1234


def _rng() -> np.random.Generator:
    return np.random.default_rng(RNG_SEED)


def _as(kind: str, x: np.ndarray) -> Any:
    """x converted to a numpy/torch array of the dtype named by kind."""
    lib, dtype = kind.split("-")
    if lib == "numpy":
        return x.astype(dtype)
    return torch.tensor(x, dtype=getattr(torch, dtype))


KINDS = ["numpy-float32", "numpy-float64", "torch-float32", "torch-float64"]


# ============================================================================ assert_orthogonal
@pytest.mark.parametrize("kind", KINDS)
def test_haar_orthogonal_passes_and_returns_ratio(kind: str) -> None:
    q = samples.haar_orthogonal(_rng(), 6)
    r = assert_orthogonal(_as(kind, q))
    assert isinstance(r, float)
    assert 0.0 <= r <= THRESHOLD


@pytest.mark.parametrize("kind", ["numpy-float64", "torch-float64"])
def test_perturbed_entry_fails_in_float64(kind: str) -> None:
    q = samples.haar_orthogonal(_rng(), 6)
    q[1, 2] += 1e-6
    with pytest.raises(AssertionError) as info:
        assert_orthogonal(_as(kind, q), err_msg="layer 3")
    msg = str(info.value)
    assert "test ratio" in msg and SAYS_THRESHOLD in msg
    assert "shape (6, 6)" in msg and "float64" in msg
    assert "worst entry" in msg and "layer 3" in msg
    assert "||Q^T Q - I||_F / (n eps)" in msg


@pytest.mark.parametrize("kind", ["numpy-float32", "torch-float32"])
def test_perturbation_below_float32_precision_passes(kind: str) -> None:
    q = samples.haar_orthogonal(_rng(), 6)
    q[1, 2] += 1e-6  # about 17 units of float32 roundoff: within 30 n eps
    assert assert_orthogonal(_as(kind, q)) <= THRESHOLD


def test_ratio_matches_orthogonality_ratio() -> None:
    from orthoverify.backends import get_backend
    from orthoverify.param._validate import orthogonality_ratio

    q = samples.haar_orthogonal(_rng(), 5)
    q[0, 0] += 1e-13
    expected = orthogonality_ratio(q, get_backend("numpy-float64"))
    assert assert_orthogonal(q, threshold=1e9) == pytest.approx(expected, rel=1e-6)


def test_threshold_is_respected() -> None:
    q = samples.haar_orthogonal(_rng(), 6)
    q[1, 2] += 1e-13
    r = assert_orthogonal(q, threshold=1e6)
    assert r > THRESHOLD
    with pytest.raises(AssertionError, match=SAYS_THRESHOLD):
        assert_orthogonal(q)


def test_tall_and_wide() -> None:
    q = samples.haar_orthogonal(_rng(), 7)
    assert assert_orthogonal(q[:, :3]) <= THRESHOLD  # orthonormal columns
    assert assert_orthogonal(q[:3, :]) <= THRESHOLD  # orthonormal rows
    with pytest.raises(AssertionError, match="Q Q\\^T - I"):
        assert_orthogonal(2 * q[:3, :])


def test_batch_reports_worst_matrix() -> None:
    rng = _rng()
    b = np.stack([samples.haar_orthogonal(rng, 4) for _ in range(6)]).reshape(2, 3, 4, 4)
    assert assert_orthogonal(b) <= THRESHOLD
    assert assert_orthogonal(torch.tensor(b, dtype=torch.float32)) <= THRESHOLD
    b[1, 2, 0, 3] += 1e-7
    with pytest.raises(AssertionError) as info:
        assert_orthogonal(b)
    msg = str(info.value)
    assert "q[1, 2]" in msg and "shape (2, 3, 4, 4)" in msg


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_fails(kind: str, bad: float) -> None:
    q = samples.haar_orthogonal(_rng(), 4)
    q[2, 1] = bad
    with pytest.raises(AssertionError, match="NaN/Inf found in q") as info:
        assert_orthogonal(_as(kind, q))
    assert "q[2, 1]" in str(info.value)


def test_wrong_shape_fails() -> None:
    with pytest.raises(AssertionError, match=r"got shape \(5,\)"):
        assert_orthogonal(np.ones(5))


def test_complex_input_points_to_assert_unitary() -> None:
    with pytest.raises(AssertionError, match="assert_unitary"):
        assert_orthogonal(np.eye(3, dtype=complex))


def test_lists_and_float16() -> None:
    assert assert_orthogonal([[0.0, 1.0], [1.0, 0.0]]) == 0.0
    q = samples.haar_orthogonal(_rng(), 4)
    assert assert_orthogonal(q.astype(np.float16)) <= THRESHOLD
    assert assert_orthogonal(torch.tensor(q, dtype=torch.bfloat16)) <= THRESHOLD
    with pytest.raises(DTypeError):
        assert_orthogonal(np.array([[object()]]))


# ============================================================================ assert_unitary
def test_unitary_complex_numpy_and_torch() -> None:
    w = samples.haar_unitary(_rng(), 5)
    for x in (w, w.astype(np.complex64), torch.tensor(w), torch.tensor(w).to(torch.complex64), torch.tensor(w).conj()):
        r = assert_unitary(x)
        assert isinstance(r, float) and r <= THRESHOLD


def test_unitary_re_im_pair_and_carray() -> None:
    w = samples.haar_unitary(_rng(), 5)
    r = assert_unitary(w)
    assert assert_unitary((w.real, w.imag)) == pytest.approx(r)
    assert assert_unitary(as_carray(w)[1]) == pytest.approx(r)
    assert assert_unitary((torch.tensor(w.real), torch.tensor(w.imag))) == pytest.approx(r)
    assert assert_unitary((w.real.astype(np.float32), w.imag.astype(np.float32))) <= THRESHOLD


def test_unitary_failures() -> None:
    w = samples.haar_unitary(_rng(), 5)
    w[3, 1] += 1e-7j
    with pytest.raises(AssertionError) as info:
        assert_unitary(w)
    msg = str(info.value)
    assert "w is not unitary" in msg and SAYS_THRESHOLD in msg and "complex128" in msg and "W^* W - I" in msg
    with pytest.raises(AssertionError, match=r"real part has shape \(5, 5\) but imaginary part has shape \(5, 4\)"):
        assert_unitary((w.real, w.imag[:, :4]))
    bad = w.copy()
    bad[0, 0] = complex(np.nan, 0)
    with pytest.raises(AssertionError, match="NaN/Inf"):
        assert_unitary(bad)
    with pytest.raises(AssertionError, match="NaN/Inf"):
        assert_unitary((w.real, np.full((5, 5), np.inf)))


def test_real_orthogonal_is_unitary_and_batches() -> None:
    rng = _rng()
    assert assert_unitary(samples.haar_orthogonal(rng, 4)) <= THRESHOLD
    batch = np.stack([samples.haar_unitary(rng, 3) for _ in range(4)])
    assert assert_unitary(batch) <= THRESHOLD
    batch[2] *= 1 + 1e-9
    with pytest.raises(AssertionError, match=r"w\[2\]"):
        assert_unitary(batch)


# ============================================================================ assert_allclose_ratio
@pytest.mark.parametrize("kind", KINDS)
def test_allclose_passes_at_working_precision(kind: str) -> None:
    rng = _rng()
    a = rng.standard_normal((5, 5))
    b = rng.standard_normal((5, 5))
    ref = a @ b  # float64
    got = _as(kind, a) @ _as(kind, b)
    r = assert_allclose_ratio(got, ref)
    assert isinstance(r, float) and r <= THRESHOLD


def test_allclose_uses_lower_precision_eps() -> None:
    x = _rng().standard_normal(8)
    assert assert_allclose_ratio(x.astype(np.float32), x) <= THRESHOLD
    assert assert_allclose_ratio(x, torch.tensor(x, dtype=torch.float32)) <= THRESHOLD
    with pytest.raises(AssertionError, match="2\\^-53"):
        assert_allclose_ratio(x.astype(np.float32).astype(np.float64), x)


def test_allclose_failure_message() -> None:
    x = _rng().standard_normal((4, 6))
    y = x.copy()
    y[2, 3] += 1e-6
    with pytest.raises(AssertionError) as info:
        assert_allclose_ratio(y, x, err_msg="forward pass")
    msg = str(info.value)
    assert "test ratio" in msg and SAYS_THRESHOLD in msg and "dim = 6" in msg
    assert "actual[2, 3]" in msg and "shape (4, 6)" in msg and "forward pass" in msg


def test_allclose_dim_absolute_shapes_nonfinite() -> None:
    x = np.ones(4)
    y = x * (1 + 100 * 2.0**-53)
    with pytest.raises(AssertionError):
        assert_allclose_ratio(y, x, dim=1)
    assert assert_allclose_ratio(y, x, dim=100) <= THRESHOLD
    assert assert_allclose_ratio(np.zeros(3), np.zeros(3)) == 0.0
    with pytest.raises(AssertionError, match="absolute"):
        assert_allclose_ratio(np.full(3, 1e-10), np.zeros(3))
    with pytest.raises(AssertionError, match=r"actual has shape \(3, 4\), desired has shape \(4, 3\)"):
        assert_allclose_ratio(np.ones((3, 4)), np.ones((4, 3)))
    with pytest.raises(AssertionError, match="NaN/Inf found in desired"):
        assert_allclose_ratio(np.ones(2), np.array([1.0, np.nan]))


def test_allclose_complex() -> None:
    w = samples.haar_unitary(_rng(), 4)
    assert assert_allclose_ratio(w.conj().T @ w, np.eye(4)) <= THRESHOLD
    assert assert_allclose_ratio(torch.tensor(w), w) == 0.0
    with pytest.raises(AssertionError):
        assert_allclose_ratio(w + 1e-9j, w)


# ============================================================================ assert_skew_symmetric
@pytest.mark.parametrize("kind", KINDS)
def test_skew_symmetric(kind: str) -> None:
    a = samples.random_skew(_rng(), 5)
    assert assert_skew_symmetric(_as(kind, a)) == 0.0
    a[1, 3] += 1e-6
    if kind.endswith("float64"):
        with pytest.raises(AssertionError) as info:
            assert_skew_symmetric(_as(kind, a))
        msg = str(info.value)
        assert "not skew-symmetric" in msg and SAYS_THRESHOLD in msg and "a[1, 3]" in msg


def test_skew_symmetric_batch_shape_nan() -> None:
    rng = _rng()
    batch = np.stack([samples.random_skew(rng, 3) for _ in range(4)])
    assert assert_skew_symmetric(batch) == 0.0
    batch[3, 0, 0] = 1e-3
    with pytest.raises(AssertionError, match=r"a\[3\]"):
        assert_skew_symmetric(batch)
    with pytest.raises(AssertionError, match=r"shape \(3, 4\)"):
        assert_skew_symmetric(np.zeros((3, 4)))
    with pytest.raises(AssertionError, match="NaN/Inf"):
        assert_skew_symmetric(np.array([[0.0, np.nan], [-1.0, 0.0]]))


# ============================================================================ assert_gradients_match
def _expm_skew(a: torch.Tensor) -> torch.Tensor:
    return torch.linalg.matrix_exp(a - a.T)


def _expm_skew_missing_term(a: torch.Tensor) -> torch.Tensor:
    """The same forward as _expm_skew, but autograd misses the -A^T term."""
    return torch.linalg.matrix_exp(a - a.detach().T)


def _cayley(a: torch.Tensor) -> torch.Tensor:
    s = a - a.T
    eye = torch.eye(a.shape[0], dtype=a.dtype, device=a.device)
    return torch.linalg.solve(eye + s, eye - s)


def _householder_product(v: torch.Tensor) -> torch.Tensor:
    n = v.shape[0]
    eye = torch.eye(n, dtype=v.dtype, device=v.device)
    h = eye
    for j in range(v.shape[1]):
        u = v[:, j : j + 1]
        h = h @ (eye - 2 * (u @ u.T) / (u.T @ u))
    return h


def _cayley_backward(a: torch.Tensor, g: torch.Tensor, *, drop_term: bool = False) -> torch.Tensor:
    """Hand-written gradient of sum(G * cayley(A)): with S = A - A^T, W = (I + S)^-1 (I - S),
    M = -(I + S)^-T G (W + I)^T, the gradient is M - M^T (drop_term leaves out -M^T)."""
    s = a - a.T
    eye = torch.eye(a.shape[0], dtype=a.dtype)
    w = torch.linalg.solve(eye + s, eye - s)
    m = -torch.linalg.solve((eye + s).T, g @ (w + eye).T)
    return m if drop_term else m - m.T


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(
    ("f", "shape"),
    [(_expm_skew, (5, 5)), (_cayley, (5, 5)), (_householder_product, (5, 3))],
    ids=["expm", "cayley", "householder"],
)
def test_correct_gradients_pass(
    dtype: torch.dtype, f: Callable[[torch.Tensor], torch.Tensor], shape: tuple[int, int]
) -> None:
    x = torch.tensor(_rng().standard_normal(shape), dtype=dtype)
    r = assert_gradients_match(f, x)
    assert isinstance(r, float) and r <= THRESHOLD


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_missing_term_fails(dtype: torch.dtype) -> None:
    x = torch.tensor(_rng().standard_normal((5, 5)), dtype=dtype)
    with pytest.raises(AssertionError) as info:
        assert_gradients_match(_expm_skew_missing_term, x, err_msg="expm layer")
    msg = str(info.value)
    assert "Gradients do not match" in msg and SAYS_THRESHOLD in msg and "expm layer" in msg
    assert "shape (5, 5)" in msg and str(dtype).removeprefix("torch.") in msg and "worst entry" in msg


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_user_backward(dtype: torch.dtype) -> None:
    x = torch.tensor(_rng().standard_normal((4, 4)), dtype=dtype)
    assert assert_gradients_match(_cayley, x, grad=_cayley_backward) <= THRESHOLD
    with pytest.raises(AssertionError, match="the given grad"):
        assert_gradients_match(_cayley, x, grad=lambda a, g: _cayley_backward(a, g, drop_term=True))


def test_gradient_input_problems() -> None:
    x = torch.tensor(_rng().standard_normal((3, 3)))
    with pytest.raises(AssertionError, match="NaN/Inf found in x"):
        assert_gradients_match(_expm_skew, torch.full((2, 2), float("nan")))
    with pytest.raises(AssertionError, match="NaN/Inf found in f"):
        assert_gradients_match(lambda a: a / 0.0, x)
    with pytest.raises(AssertionError, match=r"shape \(3,\) but x has shape \(3, 3\)"):
        assert_gradients_match(_expm_skew, x, grad=lambda a, g: torch.zeros(3, dtype=a.dtype))
    with pytest.raises(AssertionError, match="does not depend on x through autograd"):
        assert_gradients_match(lambda a: torch.sin(a.detach()), x)
    with pytest.raises(DTypeError, match="float64"):
        assert_gradients_match(lambda a: torch.sin(a).float(), x)


def test_gradient_of_complex_output_and_numpy_input() -> None:
    x = _rng().standard_normal(4)
    assert assert_gradients_match(lambda a: torch.exp(1j * a), x) <= THRESHOLD


@pytest.mark.cuda
def test_cuda_inputs() -> None:
    q = samples.haar_orthogonal(_rng(), 6)
    for dtype in (torch.float32, torch.float64):
        t = torch.tensor(q, dtype=dtype, device="cuda")
        assert assert_orthogonal(t) <= THRESHOLD
        assert assert_allclose_ratio(t, q) <= THRESHOLD
        x = torch.tensor(q, dtype=dtype, device="cuda")
        assert assert_gradients_match(_cayley, x) <= THRESHOLD
        with pytest.raises(AssertionError, match="on cuda"):
            assert_gradients_match(_expm_skew_missing_term, x)
    w = torch.tensor(samples.haar_unitary(_rng(), 4), device="cuda")
    assert assert_unitary(w) <= THRESHOLD
    bad = torch.tensor(q, device="cuda")
    bad[0, 0] = float("nan")
    with pytest.raises(AssertionError, match="NaN/Inf"):
        assert_orthogonal(bad)
