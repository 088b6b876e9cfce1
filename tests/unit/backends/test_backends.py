"""The backend protocol: the same operations give the same answers in every arithmetic,
bad dtypes are refused with orthoverify errors, and decimal strings round-trip exactly."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
import torch

from orthoverify.backends import ALL_BACKENDS, get_backend, infer_backend
from orthoverify.backends.sympy_backend import expr_is_zero
from orthoverify.errors import BackendError, DTypeError, NonFiniteError, ShapeError

A = [[4.0, 1.0, 0.5], [2.0, 3.0, -1.0], [0.0, 1.0, 2.0]]
RHS = [1.0, 2.0, 3.0]


@pytest.mark.parametrize("name", ALL_BACKENDS)
def test_solve_and_triangular_solve_agree_with_float64(name: str) -> None:
    b = get_backend(name)
    a, rhs = b.asarray(A), b.asarray(RHS)
    ref = np.linalg.solve(np.array(A), np.array(RHS))
    tol = 1e-5 if b.eps > 1e-10 else 1e-12
    assert np.allclose(b.to_numpy(b.solve(a, rhs)), ref, rtol=tol)
    up = b.triu(a)
    ref_up = np.linalg.solve(np.triu(np.array(A)), np.array(RHS))
    assert np.allclose(b.to_numpy(b.solve_triangular(up, rhs, upper=True)), ref_up, rtol=tol)
    low = b.tril(a)
    ref_low = np.linalg.solve(np.tril(np.array(A)), np.array(RHS))
    assert np.allclose(b.to_numpy(b.solve_triangular(low, rhs, upper=False)), ref_low, rtol=tol)


@pytest.mark.parametrize("name", ALL_BACKENDS)
def test_structure_helpers(name: str) -> None:
    b = get_backend(name)
    a = b.asarray(A)
    assert b.to_numpy(b.block_diag(b.eye(1), a)).shape == (4, 4)
    assert np.allclose(b.to_numpy(b.diag(b.diagonal(a))), np.diag(np.diag(A)))
    assert np.allclose(b.to_numpy(b.outer(b.asarray([1.0, 2.0]), b.asarray([3.0, 4.0]))), [[3, 4], [6, 8]])
    assert b.to_numpy(b.stack_columns([], 3)).shape == (3, 0)


@pytest.mark.parametrize("name", ["numpy-float32", "numpy-float64", "torch-float32", "torch-float64", "mpmath"])
def test_norm_does_not_overflow_or_underflow(name: str) -> None:
    b = get_backend(name)
    big = 1e30 if b.eps > 1e-10 else 1e200
    for scale in (big, 1 / big):
        v = b.asarray([3.0 * scale, 4.0 * scale])
        assert b.to_float(b.norm(v)) == pytest.approx(5.0 * scale, rel=1e-6)


@pytest.mark.parametrize("name", ALL_BACKENDS)
def test_strings_round_trip_exactly(name: str) -> None:
    b = get_backend(name)
    x = b.asarray([0.1, -1e-9, 3.0])
    again = b.asarray(b.to_strings(x))
    assert b.is_zero(again - x)
    hp = get_backend("mpmath")
    exact_in_hp = hp.asarray(b.to_strings(x))
    if b.family in ("numpy", "torch"):  # the decimal expansion of a binary float is exact
        assert hp.is_zero(exact_in_hp - hp.asarray(b.to_numpy(x)))


@pytest.mark.parametrize("name", ALL_BACKENDS)
@pytest.mark.parametrize(
    "bad",
    [np.array([1 + 2j, 3j]), np.array([True, False]), np.array([1.0, 2.0], dtype=np.float16), np.array(["a", "b"])],
)
def test_bad_dtypes_are_refused(name: str, bad: np.ndarray) -> None:
    b = get_backend(name)
    with pytest.raises((DTypeError, ValueError)) as info:
        b.asarray(bad, name="x")
    assert "x" in str(info.value) or isinstance(info.value, ValueError)


@pytest.mark.parametrize("name", ALL_BACKENDS)
def test_check_array_rejects_nan_and_wrong_rank(name: str) -> None:
    b = get_backend(name)
    if b.family != "sympy":
        with pytest.raises(NonFiniteError, match="x contains NaN or Inf"):
            b.check_array([1.0, float("nan")], name="x")
    with pytest.raises(ShapeError, match="2-dimensional"):
        b.check_array([1.0, 2.0], name="x", ndim=2)


def test_torch_dtypes_refused() -> None:
    b = get_backend("torch-float64")
    for dt in (torch.complex64, torch.float16, torch.bool):
        with pytest.raises(DTypeError, match=str(dt).replace("torch.", "")):
            b.asarray(torch.zeros(2, dtype=dt), name="x")


def test_unknown_backend_and_missing_cuda() -> None:
    with pytest.raises(BackendError, match="unknown backend"):
        get_backend("numpy-float16")
    if not torch.cuda.is_available():
        with pytest.raises(BackendError, match="CUDA"):
            get_backend("torch-float64", "cuda")


def test_infer_backend() -> None:
    assert infer_backend(np.zeros(2, dtype=np.float32)).name == "numpy-float32"
    assert infer_backend(np.zeros(2)).name == "numpy-float64"
    assert infer_backend(torch.zeros(2, dtype=torch.float32)).label == "torch-float32-cpu"
    assert infer_backend(get_backend("mpmath").asarray([1.0])).family == "mpmath"
    assert infer_backend(get_backend("mpmath-80").asarray([1.0])).digits == 80
    assert infer_backend(get_backend("sympy").asarray([1])).name == "sympy"


def test_mpmath_precision_is_private() -> None:
    import mpmath

    before = mpmath.mp.dps
    b = get_backend("mpmath-120")
    third = b.asarray(["1/3"])[0]
    assert len(str(third)) > 100
    assert mpmath.mp.dps == before


def test_sympy_zero_decisions() -> None:
    x, y = sympy.symbols("x y", real=True)
    assert expr_is_zero((x + y) ** 2 - x**2 - 2 * x * y - y**2)
    assert expr_is_zero(x / (x + 1) - 1 + 1 / (x + 1))
    assert not expr_is_zero(x / (x + 1) - 1)
    assert expr_is_zero(sympy.sqrt(8) - 2 * sympy.sqrt(2))
    assert not expr_is_zero(sympy.sqrt(2) - sympy.Rational(99, 70))
    assert expr_is_zero(sympy.sqrt(3 + 2 * sympy.sqrt(2)) - 1 - sympy.sqrt(2))


def test_sympy_backend_is_exact() -> None:
    b = get_backend("sympy")
    x = b.asarray([0.1])  # the exact binary value of 0.1, not 1/10
    assert x[0] == sympy.Rational(3602879701896397, 36028797018963968)
    assert b.asarray(["0.1"])[0] == sympy.Rational(1, 10)
    assert b.asarray(["3/7"])[0] == sympy.Rational(3, 7)


def test_mpmath_values_keep_their_digits_across_precisions() -> None:
    """An mpf made at another precision is carried exactly, never rounded through float64."""
    a, b = get_backend("mpmath"), get_backend("mpmath-100")
    assert get_backend("mpmath", "cpu") is a
    x = b.asarray(["0.12345678901234567890123456789012345678901234567890123"])
    assert abs(a.asarray(x)[0] - a.scalar("0.1234567890123456789012345678901234567890123456789")) < 1e-48
    y = a.asarray(["0.1234567890123456789012345678901234567890"])
    assert abs(b.asarray(y)[0] - b.scalar("0.1234567890123456789012345678901234567890")) < 1e-45
