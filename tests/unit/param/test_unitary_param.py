"""orthoverify.param.unitary: complex pairs, the block form, complex reflections and Corollary 1's
inverse, the FFT against the dense DFT, the uRNN product, modReLU, and clear errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from orthoverify import samples
from orthoverify.backends import get_backend
from orthoverify.errors import (
    DomainError,
    NonFiniteError,
    NotOrthogonalError,
    NotUnitaryError,
    ShapeError,
    ZeroVectorError,
)
from orthoverify.param import unitary as un
from orthoverify.tolerance import THRESHOLD

B64 = get_backend("numpy-float64")


def _err(b, x: un.CArray, y: un.CArray) -> float:  # type: ignore[no-untyped-def]
    return b.to_float(un.cnorm(b, x - y)) / max(b.to_float(un.cnorm(b, y)), 1e-300)


def test_as_carray_accepts_every_form_and_rejects_bad_input() -> None:
    z = np.array([1 + 2j, -3j])
    b, c = un.as_carray(z)
    assert b.name == "numpy-float64" and np.allclose(c.to_complex(b), z)
    b, c = un.as_carray(z.astype(np.complex64))
    assert b.name == "numpy-float32"
    b, c = un.as_carray(torch.tensor([1 + 1j], dtype=torch.complex128))
    assert b.name == "torch-float64"
    b, c = un.as_carray([[1j, 2]])
    assert c.shape == (1, 2)
    b, c = un.as_carray((np.ones(2), np.zeros(2)))
    assert b.is_zero(c.im)
    with pytest.raises(ShapeError, match="real part has shape"):
        un.as_carray((np.ones(3), np.ones(2)))
    with pytest.raises(NonFiniteError):
        un.as_carray((np.array([np.nan]), np.zeros(1)))
    with pytest.raises(ShapeError, match="tuple must be"):
        un.as_carray((np.ones(2),))


def test_block_embedding_round_trips_and_rejects_other_matrices() -> None:
    rng = np.random.default_rng(0)
    w = samples.haar_unitary(rng, 4)
    what = un.embed_matrix((w.real, w.imag))
    back = un.split_matrix(what)
    assert np.allclose(back.to_complex(B64), w)
    assert np.allclose(what.T @ what, np.eye(8), atol=1e-14)
    h = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    y = what @ un.embed_vector((h.real, h.imag))
    assert np.allclose(un.split_vector(y).to_complex(B64), w @ h)
    with pytest.raises(DomainError, match="not of the form"):
        un.split_matrix(rng.standard_normal((4, 4)))
    with pytest.raises(ShapeError):
        un.split_vector(np.ones(3))


def test_complex_reflection_is_a_unitary_involution_and_scale_free() -> None:
    rng = np.random.default_rng(1)
    u = (rng.standard_normal(3), rng.standard_normal(3))
    h = un.complex_reflection(u, 5)
    assert un.unitarity_ratio(h, B64) < 10
    assert _err(B64, h @ h, un.ceye(B64, 5)) < 1e-14
    uc = (u[0] + 1j * u[1]) * (1 - 2j)  # a complex multiple of u gives the same reflection
    big = un.complex_reflection((uc.real * 1e200, uc.imag * 1e200), 5)
    tiny = un.complex_reflection((u[0] * 1e-200, u[1] * 1e-200), 5)
    assert _err(B64, tiny, h) < 1e-14 and _err(B64, big, h) < 1e-14
    x = (rng.standard_normal((5, 2)), rng.standard_normal((5, 2)))
    direct = h @ un.as_carray(x)[1]
    assert _err(B64, un.apply_reflection(u, x), direct) < 1e-14
    with pytest.raises(ZeroVectorError):
        un.complex_reflection((np.zeros(2), np.zeros(2)))
    with pytest.raises(ShapeError):
        un.complex_reflection((np.ones(4), np.ones(4)), 3)


@pytest.mark.parametrize("backend", ["numpy-float64", "numpy-float32", "torch-float64", "mpmath"])
def test_unitary_parameters_rebuild_haar_and_structured(backend: str) -> None:
    b = get_backend(backend)
    rng = np.random.default_rng(2)
    mats = [samples.haar_unitary(rng, 5)] + [w for _, w in samples.structured_unitaries(rng, 4)]
    for w in mats:
        ww = un.polish_unitary((w.real, w.imag), backend=b)
        theta, us = un.unitary_parameters(ww, backend=b)
        assert [u.shape[0] for u in us] == list(range(2, w.shape[0] + 1))
        m = un.m1_hat(theta, us, backend=b)
        assert _err(b, m, ww) < THRESHOLD * w.shape[0] * b.eps


def test_unitary_parameters_reject_non_unitary_input_with_its_ratio() -> None:
    with pytest.raises(NotUnitaryError) as info:
        un.unitary_parameters(np.ones((2, 2)))
    assert info.value.ratio > THRESHOLD and isinstance(info.value, NotOrthogonalError)
    with pytest.raises(ShapeError):
        un.unitary_parameters(np.ones((2, 3)))


def test_m1_hat_checks_its_arguments() -> None:
    with pytest.raises(ShapeError, match="n - 1"):
        un.m1_hat(np.zeros(3), [(np.ones(2), np.zeros(2))])
    with pytest.raises(ShapeError, match="u_2 must have length 2"):
        un.m1_hat(np.zeros(2), [(np.ones(3), np.zeros(3))])


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 12, 16])
@pytest.mark.parametrize("inverse", [False, True])
def test_fft_matches_the_dense_dft_and_numpy(n: int, inverse: bool) -> None:
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((n, 3)), rng.standard_normal((n, 3)))
    dense = un.dft_matrix(n, inverse=inverse) @ un.as_carray(x)[1]
    assert _err(B64, un.fft(x, inverse=inverse), dense) < 10 * n * B64.eps
    assert _err(B64, un.fft_native(x, inverse=inverse), dense) < 10 * n * B64.eps
    raw = un.fft(x, inverse=inverse, normalized=False).to_complex(B64)
    z = x[0] + 1j * x[1]
    ref = np.fft.ifft(z, axis=0) * n if inverse else np.fft.fft(z, axis=0)
    assert np.allclose(raw, ref, atol=1e-12)


def test_fft_is_exact_in_sympy_for_powers_of_two() -> None:
    b = get_backend("sympy")
    x = (np.array([1, 2, 0, -1], dtype=object), np.array([0, 1, 0, 3], dtype=object))
    diff = un.fft(x, backend=b) - un.dft_matrix(4, backend=b) @ un.as_carray(x, backend=b)[1]
    assert b.is_zero(diff.re) and b.is_zero(diff.im)
    assert un.unitarity_ratio(un.dft_matrix(8, backend=b), b) == 0.0


def test_unnormalised_dft_is_not_unitary() -> None:
    f = un.dft_matrix(16, normalized=False)
    assert un.unitarity_ratio(f, B64) > 1e10
    assert np.allclose((un.ct(B64, f) @ f).to_complex(B64), 16 * np.eye(16))


@pytest.mark.parametrize("path", ["generic", "native", "dense"])
@pytest.mark.parametrize("n", [1, 4, 7, 16])
def test_urnn_apply_matches_the_dense_product(path: str, n: int) -> None:
    rng = np.random.default_rng(10 + n)
    p = un.urnn_parameters(**un.urnn_random(rng, n), backend=B64)
    w = un.urnn_matrix(p)
    assert un.unitarity_ratio(w, B64) < THRESHOLD
    h = (rng.standard_normal((n, 2)), rng.standard_normal((n, 2)))
    y = un.urnn_apply(p, h, fft_path=path)  # type: ignore[arg-type]
    assert _err(B64, y, w @ un.as_carray(h)[1]) < THRESHOLD * n * B64.eps
    assert un.urnn_parameter_count(n) == 7 * n


def test_urnn_gradients_flow_through_the_fft() -> None:
    """Autograd through the generic FFT path agrees with autograd through the dense product."""
    rng = np.random.default_rng(4)
    b = get_backend("torch-float64")
    n = 8
    r = un.urnn_random(rng, n)
    grads = []
    for path in ("generic", "dense"):
        w1 = torch.tensor(r["w1"], requires_grad=True)
        p = un.urnn_parameters(w1, r["w2"], r["w3"], r["v1"], r["v2"], r["perm"], backend=b)
        y = un.urnn_apply(p, (torch.ones(n, dtype=torch.float64), torch.zeros(n, dtype=torch.float64)), fft_path=path)
        (y.re.sum() + 2 * y.im.sum()).backward()
        grads.append(w1.grad.clone())  # type: ignore[union-attr]
    assert torch.allclose(grads[0], grads[1], atol=1e-12)


def test_urnn_parameters_reject_bad_input() -> None:
    rng = np.random.default_rng(5)
    r = un.urnn_random(rng, 3)
    with pytest.raises(DomainError, match="not a permutation"):
        un.urnn_parameters(**{**r, "perm": [0, 0, 1]})
    with pytest.raises(DomainError, match="integers"):
        un.permutation_matrix([0.5, 1, 0])
    with pytest.raises(ZeroVectorError):
        un.urnn_parameters(**{**r, "v1": (np.zeros(3), np.zeros(3))})
    with pytest.raises(ShapeError):
        un.urnn_parameters(**{**r, "w2": np.zeros(2)})
    p = un.urnn_parameters(**r)
    with pytest.raises(ShapeError):
        un.urnn_apply(p, (np.ones(4), np.ones(4)))
    with pytest.raises(DomainError, match="fft_path"):
        un.urnn_apply(p, (np.ones(3), np.ones(3)), fft_path="fast")  # type: ignore[arg-type]


def test_modrelu_forms_agree_and_zero_is_handled() -> None:
    rng = np.random.default_rng(6)
    z = (rng.standard_normal(8), rng.standard_normal(8))
    bias = rng.standard_normal(8)
    a = un.modrelu(z, bias)
    assert _err(B64, a, un.modrelu_relu_form(z, bias)) < 1e-15
    real = un.modrelu_real(un.embed_vector(z), bias)
    assert np.allclose(real, un.embed_vector(a))
    zero = (np.zeros(2), np.zeros(2))
    assert B64.is_zero(un.modrelu(zero, np.array([0.0, -1.0])).re)
    with pytest.raises(DomainError, match="undefined at z_0 = 0"):
        un.modrelu(zero, np.array([1.0, -1.0]))
    with pytest.raises(DomainError, match="printed index k_1"):
        un.modrelu_real(np.ones(2), np.zeros(1), convention="printed")
    with pytest.raises(ShapeError):
        un.modrelu(z, np.zeros(3))


def test_real_rnn_is_the_twin_of_the_complex_rnn() -> None:
    rng = np.random.default_rng(7)
    n = 3
    w = samples.haar_unitary(rng, n)
    v = rng.standard_normal((n, 2)) + 1j * rng.standard_normal((n, 2))
    h0 = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    xs = rng.standard_normal((6, 2))
    for act in ("relu", "leaky_relu", "identity", "modrelu"):
        bias = rng.standard_normal(n) * 0.3
        hc = un.complex_rnn((w.real, w.imag), (v.real, v.imag), xs, (h0.real, h0.imag), act, bias=bias)
        hr = un.real_rnn(
            un.embed_matrix((w.real, w.imag)),
            np.concatenate([v.real, v.imag]),
            xs,
            un.embed_vector((h0.real, h0.imag)),
            act,
            bias=bias,
        )
        assert np.allclose(hr[-1], un.embed_vector(hc[-1]), atol=1e-13), act
    with pytest.raises(DomainError, match="unknown activation"):
        un.real_rnn(np.eye(2), np.ones((2, 1)), xs[:, :1], np.ones(2), "softmax")


def test_init_h0_respects_its_bound() -> None:
    rng = np.random.default_rng(8)
    h = un.init_h0(rng, 10, size=1000)
    a = un.init_h0_bound(10)
    assert h.shape == (1000, 10) and max(np.abs(h.real).max(), np.abs(h.imag).max()) <= a
    assert a == pytest.approx(math.sqrt(0.15))
    with pytest.raises(ShapeError):
        un.init_h0_bound(0)


def test_polish_unitary_lifts_float_samples_to_high_precision() -> None:
    b = get_backend("mpmath")
    w = samples.haar_unitary(np.random.default_rng(9), 4)
    assert un.unitarity_ratio(un.as_carray((w.real, w.imag), backend=b)[1], b) > 1e20
    assert un.unitarity_ratio(un.polish_unitary((w.real, w.imag), backend=b), b) < THRESHOLD
    with pytest.raises(NotUnitaryError, match="too far"):
        un.polish_unitary(np.ones((2, 2)))


@pytest.mark.parametrize("name", ["numpy-float32", "numpy-float64", "torch-float64", "mpmath", "sympy"])
def test_backend_trigonometry(name: str) -> None:
    b = get_backend(name)
    x = b.asarray([0, 1])
    c, s = b.to_numpy(b.cos(x)), b.to_numpy(b.sin(x))
    assert np.allclose(c, np.cos([0, 1]), atol=1e-6) and np.allclose(s, np.sin([0, 1]), atol=1e-6)
    assert abs(b.to_float(b.pi()) - math.pi) < 1e-6
    ang = b.to_numpy(b.atan2(b.asarray([0, 1, -1]), b.asarray([0, 0, -1])))
    assert np.allclose(ang, [0, math.pi / 2, -3 * math.pi / 4], atol=1e-6)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("path", ["generic", "native"])
def test_cuda_urnn_apply_matches_the_cpu_dense_product(dtype: str, path: str) -> None:
    """The same code on the GPU: W h stays on the device and agrees with the dense product."""
    b = get_backend(f"torch-{dtype}", "cuda")
    rng = np.random.default_rng(11)
    n = 64
    r = un.urnn_random(rng, n)
    h = (rng.standard_normal((n, 4)), rng.standard_normal((n, 4)))
    y = un.urnn_apply(un.urnn_parameters(**r, backend=b), h, fft_path=path)  # type: ignore[arg-type]
    assert y.re.is_cuda and y.im.is_cuda
    dense = un.urnn_matrix(un.urnn_parameters(**r, backend=B64)) @ un.as_carray(h)[1]
    got = y.to_complex(b)
    ref = dense.to_complex(B64)
    assert np.linalg.norm(got - ref) / (n * b.eps * np.linalg.norm(ref)) <= THRESHOLD
