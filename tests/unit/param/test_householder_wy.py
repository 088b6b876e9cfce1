"""The blocked compact-WY torch path, cross-checked against the generic formulations.

References are independent formulations in float64: autograd through the dense product
(:func:`reflector_product`, for m = n composed from two calls since the generic code takes at
most n - 1 columns), Algorithm 1 (:func:`householder_apply`) and, for svdRNN, autograd through
``svd.m_k1k2`` / ``svd.reflector``. Every comparison is a LAPACK-style test ratio
(:func:`orthoverify.testing.assert_allclose_ratio`, ``dim = n``) against the project's THRESHOLD.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.autograd.forward_ad as fwad

from orthoverify.bench.timing import op_counts
from orthoverify.engine.ratios import THRESHOLD
from orthoverify.errors import DomainError, DTypeError, InputError, NonFiniteError, ShapeError, ZeroVectorError
from orthoverify.param import svd
from orthoverify.param.householder import reflector_product
from orthoverify.param.householder_torch import Algorithm1Function, householder_apply
from orthoverify.param.householder_wy import (
    _LD_PAD,
    CPU_BLOCK,
    CUDA_BLOCK,
    HouseholderWYFunction,
    choose_block,
    householder_wy_apply,
    svd_wy_apply,
)
from orthoverify.testing import assert_allclose_ratio

DTYPES = [torch.float32, torch.float64]
# (n, m, B, block): m = 1, m = n, m not a multiple of block, block > m, block = 1, a vector X;
# several blocks at sizes whose dense autograd reference stays cheap (the fast tier)
SIZES = [
    (6, 1, 3, 64),
    (8, 8, 4, 3),
    (9, 5, None, 2),
    (17, 10, 5, 4),
    (24, 24, 7, 64),
    (33, 20, 1, 1),
    (27, 26, 6, 8),
    (32, 32, 12, 8),
]


def make(n: int, m: int, batch: int | None, dtype: torch.dtype, seed: int = 0, device: str = "cpu") -> Any:
    """Dense U (no zero pattern: the gradient is for a dense U), X and dL/dC."""
    gen = torch.Generator().manual_seed(seed * 1000 + n * 31 + m)
    shape = (n,) if batch is None else (n, batch)
    u, x, g = (torch.randn(*s, generator=gen, dtype=torch.float64).to(dtype) for s in ((n, m), shape, shape))
    return u.to(device), x.to(device), g.to(device)


def dense_w(u: torch.Tensor) -> torch.Tensor:
    """``H(U_1) ... H(U_m)`` by the generic reflector_product (m <= n - 1 per call)."""
    n, m = u.shape
    if m < n:
        return reflector_product(u)
    return reflector_product(u[:, : n - 1]) @ reflector_product(u[:, n - 1 :])


def grads(
    fn: Callable[..., torch.Tensor], inputs: tuple[torch.Tensor, ...], g: torch.Tensor, dtype: torch.dtype | None = None
) -> tuple[torch.Tensor, ...]:
    """(output, gradients of <output, g> for every input), in ``dtype`` (default: the inputs'),
    on the inputs' device."""
    leaves = [x.detach().to(dtype or x.dtype).requires_grad_(True) for x in inputs]
    out = fn(*leaves)
    gs = torch.autograd.grad((out * g.to(out)).sum(), leaves)
    return (out.detach(), *gs)


def wy(
    block: int, transpose: bool = False, lower: bool = False, validate: bool = True
) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    return lambda u, x: householder_wy_apply(u, x, block=block, transpose=transpose, lower=lower, validate=validate)


def check(got: tuple[torch.Tensor, ...], ref: tuple[torch.Tensor, ...], n: int, names: str) -> None:
    for name, a, r in zip(names.split(), got, ref, strict=True):
        assert a.shape == r.shape, name
        assert_allclose_ratio(a, r, dim=n, threshold=THRESHOLD, err_msg=name)


# --------------------------------------------------------------------------- cross-checks
@pytest.mark.parametrize("transpose", [False, True], ids=["W", "W'"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize(("n", "m", "batch", "block"), SIZES)
def test_matches_dense_autograd(
    n: int, m: int, batch: int | None, block: int, dtype: torch.dtype, transpose: bool
) -> None:
    u, x, g = make(n, m, batch, dtype)
    got = grads(wy(block, transpose), (u, x), g)
    assert all(t.dtype == dtype for t in got)

    def dense(uu: torch.Tensor, xx: torch.Tensor) -> torch.Tensor:
        w = dense_w(uu)
        return (w.T if transpose else w) @ xx

    check(got, grads(dense, (u, x), g, torch.float64), n, "C dL/dU dL/dX")


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize(("n", "m", "batch"), [(7, 3, 2), (20, 19, 5), (48, 30, 1)])
def test_matches_algorithm1(n: int, m: int, batch: int, dtype: torch.dtype) -> None:
    """Forward and both gradients agree with the sequential Algorithm 1 in the same dtype."""
    u, x, g = make(n, m, batch, dtype, seed=1)
    ref = grads(lambda a, b: householder_apply(a, b, strategy="store"), (u, x), g)
    check(grads(wy(8), (u, x), g), ref, n, "C dL/dU dL/dX")


def test_block_size_does_not_change_the_result() -> None:
    u, x, g = make(30, 29, 4, torch.float64, seed=2)
    ref = grads(wy(1), (u, x), g)
    for block in (2, 7, 29, 100):
        check(grads(wy(block), (u, x), g), ref, 30, "C dL/dU dL/dX")


@pytest.mark.parametrize("transpose", [False, True], ids=["W", "W'"])
@pytest.mark.parametrize(("n", "m", "batch", "block"), [(4, 2, 3, 1), (4, 4, 2, 2), (5, 3, None, 64)])
def test_gradcheck_float64(n: int, m: int, batch: int | None, block: int, transpose: bool) -> None:
    u, x, _ = make(n, m, batch, torch.float64, seed=3)
    u.requires_grad_(True)
    x.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda a, b: HouseholderWYFunction.apply(a, b, block, transpose, False), (u, x))


def test_gradient_is_full_dense_not_masked() -> None:
    """U with eq. 9's pattern still gets a gradient above it (mask U to keep the pattern)."""
    u, x, g = make(7, 4, 3, torch.float64)
    u = u.tril()
    _, du, _ = grads(wy(2), (u, x), g)
    assert float(du.triu(1).abs().max()) > 0
    _, du_ref, _ = grads(lambda a, b: reflector_product(a) @ b, (u, x), g)
    assert_allclose_ratio(du, du_ref, dim=7, threshold=THRESHOLD)
    mask = torch.ones(7, 4, dtype=torch.float64).tril()
    _, du_masked, _ = grads(lambda a, b: householder_wy_apply(a * mask, b, block=2), (u, x), g)
    assert torch.equal(du_masked.triu(1), torch.zeros(7, 4, dtype=torch.float64))


# --------------------------------------------------------------------------- lower=True (eq. 9's pattern)
LOWER_SIZES = [*SIZES, (40, 40, 5, 16)]


def lower_dense(transpose: bool) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """Autograd through the dense product of tril(U): the reference of ``lower=True``."""

    def fn(uu: torch.Tensor, xx: torch.Tensor) -> torch.Tensor:
        w = dense_w(uu.tril())
        return (w.T if transpose else w) @ xx

    return fn


@pytest.mark.parametrize("transpose", [False, True], ids=["W", "W'"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize(("n", "m", "batch", "block"), LOWER_SIZES)
def test_lower_matches_dense_autograd_of_tril(
    n: int, m: int, batch: int | None, block: int, dtype: torch.dtype, transpose: bool
) -> None:
    """U dense on input (its upper part is ignored): C, dL/dU (lower triangular) and dL/dX
    equal autograd through the dense product of tril(U)."""
    u, x, g = make(n, m, batch, dtype, seed=11)
    got = grads(wy(block, transpose, lower=True), (u, x), g)
    assert all(t.dtype == dtype for t in got)
    assert torch.equal(got[1].triu(1), torch.zeros_like(got[1]))
    check(got, grads(lower_dense(transpose), (u, x), g, torch.float64), n, "C dL/dU dL/dX")


def test_lower_equals_dense_path_on_tril_input() -> None:
    """On a tril U, lower=True gives the dense path's C and dL/dX and its dL/dU's lower triangle."""
    u, x, g = make(30, 30, 4, torch.float64, seed=12)
    u = u.tril()
    c, du, dx = grads(wy(8), (u, x), g)
    cl, dul, dxl = grads(wy(8, lower=True), (u, x), g)
    for a, r in ((cl, c), (dxl, dx), (dul, du.tril())):
        assert_allclose_ratio(a, r, dim=30, threshold=THRESHOLD)
    assert float(du.triu(1).abs().max()) > 0 and not bool(dul.triu(1).any())


@pytest.mark.parametrize("transpose", [False, True], ids=["W", "W'"])
@pytest.mark.parametrize(("n", "m", "batch", "block"), [(4, 2, 3, 1), (5, 5, 2, 2), (6, 4, None, 3)])
def test_lower_gradcheck_float64(n: int, m: int, batch: int | None, block: int, transpose: bool) -> None:
    u, x, _ = make(n, m, batch, torch.float64, seed=13)
    u = u.tril().requires_grad_(True)  # gradcheck perturbs the upper part too: its gradient is 0
    x.requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda a, b: HouseholderWYFunction.apply(a, b, block, transpose, False, True), (u, x)
    )


def test_lower_zero_column_and_flag_errors() -> None:
    u = torch.randn(5, 3, dtype=torch.float64)
    u[2:, 2] = 0  # nonzero only above the diagonal: a zero column of tril(U)
    with pytest.raises(ZeroVectorError):
        householder_wy_apply(u, torch.ones(5, dtype=torch.float64), lower=True)
    with pytest.raises(InputError, match="lower must be True or False"):
        householder_wy_apply(u, torch.ones(5, dtype=torch.float64), lower=1)  # type: ignore[arg-type]


def test_lower_only_x_requires_grad_and_no_grad() -> None:
    u, x, g = make(13, 13, 3, torch.float64, seed=14)
    _, _, dx_ref = grads(lower_dense(False), (u, x), g)
    xx = x.clone().requires_grad_(True)
    (householder_wy_apply(u, xx, block=4, lower=True) * g).sum().backward()
    assert xx.grad is not None
    assert_allclose_ratio(xx.grad, dx_ref, dim=13, threshold=THRESHOLD)
    with torch.no_grad():
        c = householder_wy_apply(u, x, block=4, lower=True)
    assert_allclose_ratio(c, dense_w(u.tril()) @ x, dim=13, threshold=THRESHOLD)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_svd_lower_matches_dense_of_tril(dtype: torch.dtype) -> None:
    gen = torch.Generator().manual_seed(15)
    n = 12
    uu, uv, x, g = (torch.randn(n, c, generator=gen, dtype=torch.float64) for c in (n, 7, 3, 3))
    sigma = torch.rand(n, generator=gen, dtype=torch.float64) + 0.5
    args = tuple(a.to(dtype) for a in (uu, sigma, uv, x))
    got = grads(lambda a, s, b, h: svd_wy_apply(a, s, b, h, block=4, lower=True), args, g)

    def ref(a: torch.Tensor, s: torch.Tensor, b: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return svd_dense(a.tril(), s, b.tril(), h)

    check(got, grads(ref, args, g, torch.float64), n, "C dL/dUu dL/dsigma dL/dUv dL/dX")
    assert not bool(got[1].triu(1).any()) and not bool(got[3].triu(1).any())


@pytest.mark.parametrize("lower", [False, True], ids=["dense", "lower"])
def test_noncontiguous_u_is_read_not_modified(lower: bool) -> None:
    """A transposed-layout U (m = block multiple: no padding, Y is U's one copy) is left untouched."""
    u, x, g = make(16, 16, 3, torch.float64, seed=16)
    ut = u.T.contiguous().T
    before = ut.clone()
    got = grads(wy(8, lower=lower), (ut, x), g)
    assert torch.equal(ut, before)
    check(got, grads(wy(8, lower=lower), (u, x), g), 16, "C dL/dU dL/dX")


@pytest.mark.parametrize("lower", [False, True], ids=["dense", "lower"])
def test_column_scale_is_irrelevant_and_extremes_are_safe(lower: bool) -> None:
    """A reflection ignores its vector's scale; columns near overflow or underflow (whose
    squares leave the float64 range) give the same C and the correspondingly scaled dL/dU."""
    u, x, g = make(10, 6, 3, torch.float64, seed=4)
    c_ref, du_ref, dx_ref = grads(wy(4, lower=lower), (u, x), g)
    scales = torch.tensor([2.0**1000, 2.0**-1000, 1.0, 2.0**-530, 2.0**520, 3.0], dtype=torch.float64)
    c, du, dx = grads(wy(4, lower=lower), (u * scales, x), g)
    assert_allclose_ratio(c, c_ref, dim=10, threshold=THRESHOLD)
    assert_allclose_ratio(dx, dx_ref, dim=10, threshold=THRESHOLD)
    assert_allclose_ratio(du * scales, du_ref, dim=10, threshold=THRESHOLD)


@pytest.mark.parametrize("lower", [False, True], ids=["dense", "lower"])
def test_subnormal_column_reflects_like_its_normal_multiple(lower: bool) -> None:
    """A column of subnormal numbers (its max |u_ij| = 2^-1060 needs a 2^1060 scale, more
    than one float64 factor holds) reflects exactly as its exact normal multiple."""
    u, x, g = make(8, 4, 2, torch.float64, seed=9)
    tiny = u.clone()
    tiny[:, 1] = u[:, 1] * 2.0**-1060
    assert bool((tiny[:, 1].abs() < torch.finfo(torch.float64).tiny).all())
    exact = tiny.clone()
    exact[:, 1] = tiny[:, 1] * 2.0**530 * 2.0**530  # exact: powers of two, no underflow left
    c, _du, dx = grads(wy(3, lower=lower), (tiny, x), g)
    c_ref, _, dx_ref = grads(wy(3, lower=lower), (exact, x), g)
    assert_allclose_ratio(c, c_ref, dim=8, threshold=THRESHOLD)
    assert_allclose_ratio(dx, dx_ref, dim=8, threshold=THRESHOLD)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 7.0])
def test_lower_ignores_any_value_above_the_diagonal(bad: float) -> None:
    """With ``lower`` the entries above the diagonal are not read, NaN and Inf included."""
    u, x, g = make(12, 12, 3, torch.float64, seed=11)
    dirty = u.tril() + torch.full_like(u, bad).triu(1)
    got = grads(wy(5, lower=True), (dirty, x), g)
    ref = grads(wy(5, lower=True), (u.tril(), x), g)
    check(got, ref, 12, "C dL/dU dL/dX")
    assert not bool(got[1].triu(1).any())


@pytest.mark.parametrize(
    ("lower", "transpose"), [(False, False), (True, False), (True, True)], ids=["W", "lower", "W'"]
)
def test_forward_mode_matches_the_dense_product(lower: bool, transpose: bool) -> None:
    """``torch.func.jvp`` and dual tensors carry tangents of U and X through the fast path
    (it runs plain torch operations when no gradient is recorded) and agree with forward mode
    through the dense product. Before this, the tangent was silently dropped (zero)."""
    n, m, b = 13, 9, 3
    u, x, _ = make(n, m, b, torch.float64, seed=21)
    du, dx, _ = make(n, m, b, torch.float64, seed=22)
    if lower:
        u, du = u.tril(), du.tril()

    def dense(uu: torch.Tensor, xx: torch.Tensor) -> torch.Tensor:
        w = dense_w(uu)
        return (w.T if transpose else w) @ xx

    def fast(uu: torch.Tensor, xx: torch.Tensor) -> torch.Tensor:
        return householder_wy_apply(uu, xx, block=4, transpose=transpose, lower=lower)

    c, t = torch.func.jvp(fast, (u, x), (du, dx))
    c_ref, t_ref = torch.func.jvp(dense, (u, x), (du, dx))
    assert_allclose_ratio(c, c_ref, dim=n, threshold=THRESHOLD)
    assert float(t_ref.norm()) > 0
    assert_allclose_ratio(t, t_ref, dim=n, threshold=THRESHOLD)
    with fwad.dual_level():
        out = fast(fwad.make_dual(u, du), fwad.make_dual(x, dx))
        assert_allclose_ratio(fwad.unpack_dual(out).tangent, t_ref, dim=n, threshold=THRESHOLD)


def test_forward_mode_svd_and_rescaled_columns() -> None:
    """The same for svd_wy_apply, with a zero column (the identity) and a column whose
    square underflows (power-of-two rescaling: a constant, no tangent of its own)."""
    n = 10
    gen = torch.Generator().manual_seed(23)
    uu, uv, duu, duv = (torch.randn(n, n, generator=gen, dtype=torch.float64).tril() for _ in range(4))
    uu[:, 2] = 0
    uv[:, 1] *= 2.0**-600
    sigma, dsig = (
        torch.rand(n, generator=gen, dtype=torch.float64) + 0.5,
        torch.randn(n, generator=gen, dtype=torch.float64),
    )
    x, dx = torch.randn(n, 2, generator=gen, dtype=torch.float64), torch.randn(n, 2, generator=gen, dtype=torch.float64)

    def fast(a: torch.Tensor, s: torch.Tensor, v: torch.Tensor, xx: torch.Tensor) -> torch.Tensor:
        return svd_wy_apply(a, s, v, xx, block=3, lower=True)

    def dense(a: torch.Tensor, s: torch.Tensor, v: torch.Tensor, xx: torch.Tensor) -> torch.Tensor:
        qa = torch.eye(n, dtype=torch.float64)
        qv = torch.eye(n, dtype=torch.float64)
        for j in range(n):
            qa = qa @ svd.reflector(a[:, j], n)
            qv = qv @ svd.reflector(v[:, j] * 2.0**600 if j == 1 else v[:, j], n)
        return (qa * s) @ qv.T @ xx

    duv[:, 1] *= 2.0**-600  # the same direction, on the tiny column's scale
    prim, tang = (uu, sigma, uv, x), (duu, dsig, duv, dx)
    c, t = torch.func.jvp(fast, prim, tang)
    c_ref, t_ref = torch.func.jvp(dense, prim, tang)
    assert_allclose_ratio(c, c_ref, dim=n, threshold=THRESHOLD)
    assert_allclose_ratio(t, t_ref, dim=n, threshold=THRESHOLD)


def test_transpose_inverts() -> None:
    u, x, _ = make(20, 20, 3, torch.float64, seed=5)
    back = householder_wy_apply(u, householder_wy_apply(u, x, block=6), block=6, transpose=True)
    assert_allclose_ratio(back, x, dim=20, threshold=THRESHOLD)


# --------------------------------------------------------------------------- svdRNN
def svd_vectors(n: int, m: int, gen: torch.Generator) -> list[torch.Tensor]:
    """``[x_{n-m+1}, ..., x_n]`` (x_j of length j), svd.py's list convention."""
    return [torch.randn(j, generator=gen, dtype=torch.float64) for j in range(n - m + 1, n + 1)]


def to_columns(vs: list[torch.Tensor], n: int) -> torch.Tensor:
    """``(x_n | ... | x_k)`` with x_j padded by n - j leading zeros (eq. 9's pattern)."""
    return torch.stack([svd.pad(v, n) for v in reversed(vs)], dim=1)


def svd_dense(uu: torch.Tensor, sigma: torch.Tensor, uv: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``U diag(sigma) V' x`` with U, V the products of svd.reflector over the columns (eq. 1)."""
    n = uu.shape[0]
    left, right = torch.eye(n, dtype=uu.dtype), torch.eye(n, dtype=uu.dtype)
    for j in range(uu.shape[1]):
        left = left @ svd.reflector(uu[:, j])
    for j in range(uv.shape[1]):
        right = right @ svd.reflector(uv[:, j])
    return left @ (sigma[:, None] * (right.T @ x))


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize(("n", "m1", "m2", "batch", "block"), [(6, 6, 6, 3, 4), (12, 5, 12, 1, 4), (20, 9, 3, 4, 64)])
def test_svd_matches_generic(n: int, m1: int, m2: int, batch: int, block: int, dtype: torch.dtype) -> None:
    gen = torch.Generator().manual_seed(n + m1 + m2)
    us, vs = svd_vectors(n, m1, gen), svd_vectors(n, m2, gen)
    sigma = torch.rand(n, generator=gen, dtype=torch.float64) + 0.5
    x = torch.randn(n, batch, generator=gen, dtype=torch.float64)
    g = torch.randn(n, batch, generator=gen, dtype=torch.float64)
    uu, uv = to_columns(us, n), to_columns(vs, n)
    # the conventions of svd.py: M_{k1,k2}(u, v, sigma) of eq. 3 from the vector lists
    c_printed = svd.m_k1k2(us, vs, sigma) @ x
    args = tuple(a.to(dtype) for a in (uu, sigma, uv, x))
    got = grads(lambda a, s, b, h: svd_wy_apply(a, s, b, h, block=block), args, g)
    assert_allclose_ratio(got[0], c_printed, dim=n, threshold=THRESHOLD)
    # and gradients (dense columns: the upper part gets a gradient too) against autograd
    noisy = tuple(a + (0.1 * torch.randn(a.shape, generator=gen, dtype=torch.float64)).triu(1) for a in (uu, uv))
    args = (noisy[0].to(dtype), sigma.to(dtype), noisy[1].to(dtype), x.to(dtype))
    got = grads(lambda a, s, b, h: svd_wy_apply(a, s, b, h, block=block), args, g)
    check(got, grads(svd_dense, args, g, torch.float64), n, "C dL/dUu dL/dsigma dL/dUv dL/dX")


def test_svd_zero_vector_is_the_identity() -> None:
    """Eq. 1: H(0) = I. A zero column drops out, and its gradient is zero (as through svd.reflector)."""
    gen = torch.Generator().manual_seed(7)
    n = 8
    uu, uv = (
        torch.randn(n, 5, generator=gen, dtype=torch.float64),
        torch.randn(n, 4, generator=gen, dtype=torch.float64),
    )
    uu[:, 2] = 0
    uv[:, 0] = 0
    sigma, x, g = (torch.randn(*s, generator=gen, dtype=torch.float64) for s in ((n,), (n, 3), (n, 3)))
    got = grads(lambda a, s, b, h: svd_wy_apply(a, s, b, h, block=2), (uu, sigma, uv, x), g)
    check(got, grads(svd_dense, (uu, sigma, uv, x), g), n, "C dL/dUu dL/dsigma dL/dUv dL/dX")
    assert torch.equal(got[1][:, 2], torch.zeros(n, dtype=torch.float64))
    drop = grads(lambda a, s, b, h: svd_wy_apply(a, s, b, h), (uu[:, [0, 1, 3, 4]], sigma, uv[:, 1:], x), g)
    assert_allclose_ratio(got[0], drop[0], dim=n, threshold=THRESHOLD)


def test_svd_vector_x_and_bad_inputs() -> None:
    uu, uv, sigma = torch.randn(5, 2), torch.randn(5, 3), torch.rand(5)
    y = svd_wy_apply(uu, sigma, uv, torch.ones(5))
    assert y.shape == (5,)
    assert_allclose_ratio(y, svd_wy_apply(uu, sigma, uv, torch.ones(5, 1))[:, 0], dim=5, threshold=THRESHOLD)
    with pytest.raises(ShapeError, match=r"sigma must have shape \(5,\)"):
        svd_wy_apply(uu, torch.rand(4), uv, torch.ones(5))
    with pytest.raises(ShapeError, match="Uu has 5 rows but Uv has 6"):
        svd_wy_apply(uu, sigma, torch.randn(6, 2), torch.ones(5))
    with pytest.raises(NonFiniteError, match="sigma contains NaN or Inf"):
        svd_wy_apply(uu, torch.full((5,), float("nan")), uv, torch.ones(5))
    with pytest.raises(DTypeError, match="Uu is float32 but sigma is float64"):
        svd_wy_apply(uu, sigma.double(), uv, torch.ones(5))
    with pytest.raises(NonFiniteError, match="U contains NaN or Inf"):
        svd_wy_apply(uu, sigma, torch.full((5, 1), float("inf")), torch.ones(5))


# --------------------------------------------------------------------------- memory
def saved_bytes(
    fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], n: int, m: int, batch: int, tril: bool = False
) -> int:
    """Bytes of the unique storages saved for backward, beyond the inputs U and X (U stored
    on eq. 9's pattern with ``tril``)."""
    u, x, _ = make(n, m, batch, torch.float64)
    u = (u.tril() if tril else u).requires_grad_(True)
    x.requires_grad_(True)
    storages: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        st = t.untyped_storage()
        storages[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        c = fn(u, x)
    del c
    inputs = {u.untyped_storage().data_ptr(), x.untyped_storage().data_ptr()}
    return sum(b for p, b in storages.items() if p not in inputs)


@pytest.mark.parametrize(
    ("lower", "tril"), [(False, False), (True, False), (True, True)], ids=["dense", "lower-copy", "lower-stored"]
)
def test_saved_memory_is_o_nm_plus_nb(lower: bool, tril: bool) -> None:
    """Forward keeps Y (U's columns divided by their largest magnitudes: n x m, whatever U's
    layout), the m column maxima, T^-1 per block (block x block), the coefficients F (block x
    B per block: m x B <= n x B) and C (n x B). So O(nm + nB), and growing m at large B costs
    far less than Algorithm 1's "store" strategy (n x (m+1) x B). Y's rows are _LD_PAD
    entries apart beyond m (here m is a multiple of the block)."""
    n, block, item = 64, 16, 8
    fast = {(m, b): saved_bytes(wy(block, lower=lower), n, m, b, tril) for m in (16, 64) for b in (1, 64)}
    for (m, b), got in fast.items():
        y = n * m + (n - 1) * _LD_PAD
        assert got == item * (y + m + m * block + m * b + n * b)  # Y, maxima, T^-1, F, C
        assert got <= item * 2 * (n * m + n * b)
    store = {m: saved_bytes(lambda u, x: Algorithm1Function.apply(u, x, "store"), n, m, 64) for m in (16, 63)}
    assert store[63] - store[16] > 10 * (fast[64, 64] - fast[16, 64])


def test_only_x_requiring_grad_saves_no_coefficients() -> None:
    """Without dL/dU to compute, forward saves no F (only C, T^-1, the column maxima and Y)."""
    n, m, b, block = 32, 32, 8, 16
    u, x, _ = make(n, m, b, torch.float64)
    x.requires_grad_(True)
    sizes: list[int] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        if t.untyped_storage().data_ptr() != u.untyped_storage().data_ptr():
            sizes.append(t.numel())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        householder_wy_apply(u, x, block=block)
    assert sorted(sizes) == sorted([n * b, (m // block) * block * block, m, n * m])


# --------------------------------------------------------------------------- autograd hygiene
def test_no_grad_and_plain_inputs_run_forward_only() -> None:
    u, x, _ = make(9, 4, 2, torch.float64)
    ref = householder_wy_apply(u.requires_grad_(True), x).detach()
    with torch.no_grad():
        c = householder_wy_apply(u, x)
    # the Function's path and the forward alone: compared by test ratio, not bitwise
    assert c.grad_fn is None
    assert_allclose_ratio(c, ref, dim=9, threshold=THRESHOLD)
    c2 = householder_wy_apply(u.detach(), x)
    assert c2.grad_fn is None
    assert_allclose_ratio(c2, ref, dim=9, threshold=THRESHOLD)


def test_only_one_input_requires_grad() -> None:
    u, x, g = make(11, 6, 3, torch.float64)
    _, du_ref, dx_ref = grads(wy(4), (u, x), g)
    uu = u.clone().requires_grad_(True)
    (householder_wy_apply(uu, x, block=4) * g).sum().backward()
    assert uu.grad is not None
    assert_allclose_ratio(uu.grad, du_ref, dim=11, threshold=THRESHOLD)
    xx = x.clone().requires_grad_(True)
    (householder_wy_apply(u, xx, block=4) * g).sum().backward()
    assert xx.grad is not None
    assert_allclose_ratio(xx.grad, dx_ref, dim=11, threshold=THRESHOLD)


@pytest.mark.parametrize("batch", [None, 3])
def test_m0_is_identity(batch: int | None) -> None:
    u, x, g = make(4, 0, batch, torch.float64)
    c, du, dx = grads(wy(64), (u, x), g)
    assert torch.equal(c, x) and torch.equal(dx, g) and du.shape == (4, 0)


def test_recurrent_use_accumulates_over_steps() -> None:
    n, m = 8, 8
    u, h0, _ = make(n, m, 3, torch.float64)
    uu, uref = u.clone().requires_grad_(True), u.clone().requires_grad_(True)
    h, href = h0, h0
    for _ in range(4):
        h = torch.tanh(householder_wy_apply(uu, h, block=3))
        href = torch.tanh(dense_w(uref) @ href)
    h.square().sum().backward()
    href.square().sum().backward()
    assert uu.grad is not None and uref.grad is not None
    assert_allclose_ratio(uu.grad, uref.grad, dim=n, threshold=THRESHOLD)


def test_backward_twice_with_retain_graph() -> None:
    """A second backward through the same graph (retain_graph=True) gives the same gradient
    (the per-block views forward kept are used once, then made again)."""
    u, x, g = make(20, 20, 3, torch.float64, seed=35)
    u.requires_grad_(True)
    c = householder_wy_apply(u, x, block=6, lower=True)
    (c * g).sum().backward(retain_graph=True)
    assert u.grad is not None
    first = u.grad.clone()
    (c * g).sum().backward()
    assert_allclose_ratio(u.grad, 2 * first, dim=20, threshold=THRESHOLD)


def test_double_backward_refused_inplace_detected_noncontiguous_grad() -> None:
    u, x, g = make(6, 4, 3, torch.float64)
    u.requires_grad_(True)
    c = householder_wy_apply(u, x)
    with pytest.raises(NotImplementedError, match="does not support double backward"):
        torch.autograd.grad((c * g).sum(), u, create_graph=True)
    c = householder_wy_apply(u, x)
    c.mul_(2)  # C is what backward rebuilds the block inputs from
    with pytest.raises(RuntimeError, match="inplace"):
        c.sum().backward()
    c = householder_wy_apply(u, x.t().contiguous().t())
    c.sum().backward()  # grad_c is an expanded tensor of ones
    _, du_ref, _ = grads(lambda a, b: reflector_product(a) @ b, (u, x), torch.ones_like(x))
    assert u.grad is not None
    assert_allclose_ratio(u.grad, du_ref, dim=6, threshold=THRESHOLD)


def test_choose_block_per_device_and_its_errors() -> None:
    assert choose_block(512, "cpu") == CPU_BLOCK and choose_block(512, torch.device("cuda")) == min(512, CUDA_BLOCK)
    assert choose_block(3, "cuda:0") == 3 and choose_block(0, "cpu") == 1 and choose_block(5000, "cuda") == CUDA_BLOCK
    with pytest.raises(ShapeError):
        choose_block(-1, "cpu")
    with pytest.raises(InputError, match="device must be"):
        choose_block(4, "gpu0")


@pytest.mark.parametrize("lower", [False, True], ids=["dense", "lower"])
@pytest.mark.parametrize(("n", "m"), [(24, 24), (24, 17)])
def test_gradients_match_generic_for_several_blocks(n: int, m: int, lower: bool) -> None:
    """The default block (None) and blocks of 1, 5 and m give C, dL/dU and dL/dX of autograd
    through the generic dense product, for m = n and m < n, U dense or on eq. 9's pattern."""
    u, x, g = make(n, m, 3, torch.float64, seed=36)
    ref = grads(lower_dense(False) if lower else (lambda a, b: dense_w(a) @ b), (u, x), g)
    for block in (None, 1, 5, m):
        fn = lambda a, b, block=block: householder_wy_apply(a, b, block=block, lower=lower)  # noqa: E731
        check(grads(fn, (u, x), g), ref, n, "C dL/dU dL/dX")


# --------------------------------------------------------------------------- no read-back on the hot path
READ_BACKS = ("aten._local_scalar_dense.default", "aten.is_nonzero.default", "aten.item.default", "aten.equal.default")
"""The operations that copy a value to the host (``bool(t)``, ``float(t)``, ``t.item()``,
``torch.equal``): on CUDA each one waits for every queued kernel."""


def read_backs(fn: Callable[[], Any]) -> int:
    counts = op_counts(fn)
    return sum(counts[name] for name in READ_BACKS)


def test_read_back_counter_catches_a_planted_read_back() -> None:
    """The measure below can fail: ``bool``, ``float`` and ``.item()`` of a tensor are seen."""
    t = torch.ones(3, dtype=torch.float64)
    assert read_backs(lambda: bool(t.all())) == 1
    assert read_backs(lambda: float(t.sum()) + t.sum().item()) == 2
    assert read_backs(lambda: t * 2) == 0


def forward_backward(
    fn: Callable[..., torch.Tensor], inputs: tuple[torch.Tensor, ...], g: torch.Tensor
) -> tuple[int, int]:
    """(read-backs in forward, read-backs in backward) of ``<fn(*inputs), g>``."""
    leaves = [t.detach().clone().requires_grad_(True) for t in inputs]
    out: list[torch.Tensor] = []
    fwd = read_backs(lambda: out.append((fn(*leaves) * g).sum()))
    bwd = read_backs(lambda: out[0].backward())
    assert all(t.grad is not None for t in leaves)
    return fwd, bwd


@pytest.mark.parametrize(("lower", "transpose"), [(False, False), (True, False), (True, True), (False, True)])
def test_no_read_back_without_validate_one_with(lower: bool, transpose: bool) -> None:
    """``validate=False``: forward and backward copy nothing to the host (no host-device
    synchronisation on CUDA); ``validate=True``: exactly one read-back, in forward. Block 4 at
    m = 10: three blocks, a short last one."""
    u, x, g = make(12, 10, 3, torch.float64, seed=31)

    def run(validate: bool) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        return lambda a, b: householder_wy_apply(a, b, block=4, transpose=transpose, lower=lower, validate=validate)

    assert forward_backward(run(False), (u, x), g) == (0, 0)
    assert forward_backward(run(True), (u, x), g) == (1, 0)
    check(grads(run(False), (u, x), g), grads(run(True), (u, x), g), 12, "C dL/dU dL/dX")


def test_svd_no_read_back_without_validate() -> None:
    gen = torch.Generator().manual_seed(32)
    uu, uv, x, g = (torch.randn(9, c, generator=gen, dtype=torch.float64) for c in (9, 5, 2, 2))
    sigma = torch.rand(9, generator=gen, dtype=torch.float64) + 0.5
    fn = lambda a, s, b, h: svd_wy_apply(a, s, b, h, block=4, lower=True, validate=False)  # noqa: E731
    assert forward_backward(fn, (uu, sigma, uv, x), g) == (0, 0)


@pytest.mark.parametrize("lower", [False, True], ids=["dense", "lower"])
def test_without_validate_bad_values_give_nan_not_a_finite_answer(lower: bool) -> None:
    """``validate=False`` reads nothing, so it cannot raise: NaN or Inf in U or X, or a zero
    column, make C and the gradients non-finite (propagated, never a finite wrong value)."""
    u, x, g = make(10, 7, 3, torch.float64, seed=33)
    bad_u = []
    for value in (float("nan"), float("inf")):
        b = u.clone()
        b[6, 2] = value
        bad_u.append((b, x))
    zero = u.clone()
    zero[:, 4] = 0
    bad_x = x.clone()
    bad_x[3, 1] = float("-inf")
    for uu, xx in [*bad_u, (zero, x), (u, bad_x)]:
        c, du, dx = grads(wy(3, lower=lower, validate=False), (uu, xx), g)
        assert not bool(torch.isfinite(c).all())
        assert not bool(torch.isfinite(du).all()) or not bool(torch.isfinite(dx).all())


@pytest.mark.parametrize("lower", [False, True], ids=["dense", "lower"])
def test_operations_per_call_are_a_small_constant_per_block(lower: bool) -> None:
    """Forward plus backward dispatches a constant number of torch operations (views
    included) plus a few per block, independent of n: the figure ``orthoverify bench``
    reports. One block (CUDA's choice up to m = 1024) stays under 60, a tenth of the 598 the
    per-column-loop version dispatched at n = m = 1024 with 16 blocks."""

    def ops(n: int, block: int) -> int:
        u, x, g = make(n, n, 4, torch.float64, seed=34)
        ul, xl = u.requires_grad_(True), x.requires_grad_(True)

        def step() -> None:
            (householder_wy_apply(ul, xl, block=block, lower=lower, validate=False) * g).sum().backward()

        step()
        return sum(op_counts(step).values())

    one, two, four, eight = ops(32, 32), ops(32, 16), ops(32, 8), ops(32, 4)
    assert one <= 59
    assert ops(64, 64) == one and ops(64, 16) == four  # n does not change the count
    assert eight - four == 2 * (four - two)  # the same cost for every further block
    assert 0 < four - two <= 2 * 20 and 0 < two - one <= 20 + 3  # + the splits into blocks


# --------------------------------------------------------------------------- bad inputs
def test_zero_vector_error_is_the_generic_one() -> None:
    u = torch.randn(5, 3)
    u[:, 1] = 0
    with pytest.raises(ZeroVectorError) as generic:
        reflector_product(u)
    for uu in (u, u.clone().requires_grad_(True)):
        with pytest.raises(ZeroVectorError) as fast:
            householder_wy_apply(uu, torch.ones(5))
        assert str(fast.value) == str(generic.value)


def test_shape_and_domain_errors() -> None:
    x = torch.ones(4)
    with pytest.raises(ShapeError, match="U must be 2-dimensional"):
        householder_wy_apply(torch.ones(4), x)
    with pytest.raises(ShapeError, match="X must have length 4, got 5"):
        householder_wy_apply(torch.randn(4, 2), torch.ones(5))
    with pytest.raises(ShapeError, match=r"X must have shape \(4,\) or \(4, B\)"):
        householder_wy_apply(torch.randn(4, 2), torch.ones(3, 2))
    with pytest.raises(ShapeError, match="no rows"):
        householder_wy_apply(torch.ones(0, 0), torch.ones(0))
    with pytest.raises(DomainError, match="m = 5 columns for n = 4"):
        householder_wy_apply(torch.randn(4, 5), x)


def test_dtype_value_and_argument_errors() -> None:
    u = torch.randn(4, 2)
    with pytest.raises(DTypeError, match="U has unsupported dtype int64"):
        householder_wy_apply(torch.ones(4, 2, dtype=torch.int64), torch.ones(4))
    with pytest.raises(DTypeError, match="half precision"):
        householder_wy_apply(u.half(), torch.ones(4).half())
    with pytest.raises(DTypeError, match="U is float32 but X is float64"):
        householder_wy_apply(u, torch.ones(4, dtype=torch.float64))
    with pytest.raises(DTypeError, match=r"X must be a torch\.Tensor, got list"):
        householder_wy_apply(u, [1.0, 2.0, 3.0, 4.0])  # type: ignore[arg-type]
    bad = u.clone()
    bad[1, 1] = float("nan")
    with pytest.raises(NonFiniteError, match="U contains NaN or Inf"):
        householder_wy_apply(bad, torch.ones(4))
    with pytest.raises(NonFiniteError, match="X contains NaN or Inf"):
        householder_wy_apply(u.requires_grad_(True), torch.full((4, 2), float("inf")))
    for block in (0, 2.5, True):
        with pytest.raises(InputError, match="block must be a positive integer"):
            householder_wy_apply(u, torch.ones(4), block=block)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="transpose must be True or False"):
        householder_wy_apply(u, torch.ones(4), transpose=1)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- cuda
@pytest.mark.cuda
@pytest.mark.parametrize("transpose", [False, True], ids=["W", "W'"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_cuda_matches_dense_and_stays_on_device(dtype: torch.dtype, transpose: bool) -> None:
    n, m = 70, 70
    u, x, g = make(n, m, 9, dtype, device="cuda")
    got = grads(wy(16, transpose), (u, x), g)
    assert all(t.is_cuda for t in got)

    def dense(uu: torch.Tensor, xx: torch.Tensor) -> torch.Tensor:
        w = dense_w(uu)
        return (w.T if transpose else w) @ xx

    check(got, grads(dense, (u.cpu(), x.cpu()), g.cpu(), torch.float64), n, "C dL/dU dL/dX")


@pytest.mark.cuda
def test_cuda_svd_and_device_mismatch() -> None:
    gen = torch.Generator().manual_seed(0)
    uu, uv, x = (torch.randn(12, 12, generator=gen, dtype=torch.float64) for _ in range(3))
    sigma = torch.rand(12, generator=gen, dtype=torch.float64)
    ref = svd_wy_apply(uu, sigma, uv, x)
    got = svd_wy_apply(uu.cuda(), sigma.cuda(), uv.cuda(), x.cuda())
    assert got.is_cuda
    assert_allclose_ratio(got, ref, dim=12, threshold=THRESHOLD)
    with pytest.raises(InputError, match="same device"):
        householder_wy_apply(uu.cuda(), x)


@pytest.mark.cuda
@pytest.mark.parametrize("lower", [False, True], ids=["dense", "lower"])
def test_cuda_forward_backward_never_synchronises(lower: bool) -> None:
    """``torch.cuda.set_sync_debug_mode("error")`` raises on any host-device synchronisation:
    a forward plus backward with ``validate=False`` makes none."""
    u, x, g = make(70, 70, 9, torch.float32, device="cuda")
    ul, xl = u.requires_grad_(True), x.requires_grad_(True)
    householder_wy_apply(ul, xl, lower=lower, validate=False)  # warm-up: lazy init may synchronise
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        (householder_wy_apply(ul, xl, lower=lower, validate=False) * g).sum().backward()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert ul.grad is not None and bool(torch.isfinite(ul.grad).all())
