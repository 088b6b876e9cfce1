"""Algorithm 1 as a torch autograd.Function, cross-checked against autograd on the dense product.

Every comparison is a LAPACK-style test ratio ``||x - ref||_F / (n * eps * scale) <= 30``
with eps the unit roundoff of the dtype under test and scale ``||ref||_F``. References are
computed by autograd through ``reflector_product(U) @ h`` in float64 from the same (exactly
representable) inputs.

One exception, on purpose: dL/dU is a sum of terms (two per column and batch entry, line 14
of Algorithm 1, then the batch sum), all orthogonal to their column of U since a reflection
ignores the scale of its vector, and for small n they can cancel. Rounding is relative to
the sizes of the terms, not of their sum, so the dL/dU ratio's scale is the norm of those
terms (:func:`grad_u_scale`, never below ``||ref||_F`` and within a small factor of it when
nothing cancels). With ``||ref||_F`` as the scale, n = 2, m = 1 reaches ratios in the hundreds
on some draws, for every float method, dense autograd included (``test_batch_gradient_cancellation``).
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from orthoverify.errors import DomainError, DTypeError, InputError, NonFiniteError, ShapeError, ZeroVectorError
from orthoverify.param.householder import algorithm1, reflector_product
from orthoverify.param.householder_torch import (
    STRATEGIES,
    Algorithm1Function,
    HouseholderLinear,
    householder_apply,
)
from orthoverify.tolerance import THRESHOLD

DTYPES = [torch.float32, torch.float64]
# (n, m): m = 1, m = n - 1, m = 0 (W = I), small and moderate sizes (the largest, m = n - 1 at
# n = 40: the dense reference of 39 reflections costs a quarter of n = 64's, the same assertion)
SIZES = [(2, 1), (3, 2), (5, 1), (5, 4), (8, 3), (16, 15), (33, 10), (40, 39)]

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def ratio(x: torch.Tensor, ref: torch.Tensor, n: int, dtype: torch.dtype, scale: float | None = None) -> float:
    """``||x - ref||_F / (n eps scale)``, scale ``||ref||_F`` unless given, eps the unit roundoff of ``dtype``."""
    eps = torch.finfo(dtype).eps / 2
    diff = float((x.detach().double().cpu() - ref.detach().double().cpu()).norm())
    if scale is None:
        scale = float(ref.detach().double().norm())
    return diff / (max(n, 1) * eps * (scale or 1.0))


def grad_u_scale(u: torch.Tensor, h: torch.Tensor, g: torch.Tensor) -> float:
    """Size of what is added up into dL/dU: column k is ``sum_b -h~_kb g_kb - C~_kb H_{*,k+1,b}``
    (Algorithm 1, line 14, summed over the batch); the scale is the Frobenius norm over k of
    ``sum_b |h~_kb| ||g_b|| + |C~_kb| ||h_b||`` (reflections keep norms). It is >= ||dL/dU||_F and
    within a small factor of it unless the terms cancel. Computed densely in float64."""
    u64, h64, g64 = (x.detach().double().cpu() for x in (u, h, g))
    h64, g64 = h64.reshape(h64.shape[0], -1), g64.reshape(g64.shape[0], -1)
    n, m = u64.shape
    eye = torch.eye(n, dtype=torch.float64)
    norms = (u64 * u64).sum(0)
    refl = [eye - 2 * torch.outer(u64[:, k], u64[:, k]) / norms[k] for k in range(m)]
    prefix = [eye]  # R_1 ... R_{k-1}
    for k in range(m):
        prefix.append(prefix[-1] @ refl[k])
    suffix = [eye] * m  # R_{k+1} ... R_m
    for k in range(m - 2, -1, -1):
        suffix[k] = refl[k + 1] @ suffix[k + 1]
    total = 0.0
    for k in range(m):
        h_tilde = 2 * (u64[:, k] @ (suffix[k] @ h64)) / norms[k]
        c_tilde = 2 * (u64[:, k] @ (prefix[k].T @ g64)) / norms[k]
        col = (h_tilde.abs() * g64.norm(dim=0) + c_tilde.abs() * h64.norm(dim=0)).sum()
        total += float(col) ** 2
    return total**0.5


def make(n: int, m: int, batch: int | None, dtype: torch.dtype, seed: int = 0, device: str = "cpu") -> Any:
    """U with eq. 9's zero pattern plus dense noise above it (the gradient is for a dense U), h, dL/dC."""
    gen = torch.Generator().manual_seed(seed * 1000 + n * 31 + m)
    shape = (n,) if batch is None else (n, batch)
    u = torch.randn(n, m, generator=gen, dtype=torch.float64).to(dtype)
    h = torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)
    g = torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)
    return u.to(device), h.to(device), g.to(device)


def dense_reference(u: torch.Tensor, h: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """C, dL/dU, dL/dh by autograd through the dense product, in float64, for L = <C, g>."""
    u64 = u.detach().double().cpu().requires_grad_(True)
    h64 = h.detach().double().cpu().requires_grad_(True)
    c = reflector_product(u64) @ h64
    du, dh = torch.autograd.grad((c * g.double().cpu()).sum(), (u64, h64))
    return c.detach(), du, dh


def run_alg1(u: torch.Tensor, h: torch.Tensor, g: torch.Tensor, strategy: str) -> tuple[torch.Tensor, ...]:
    uu = u.clone().requires_grad_(True)
    hh = h.clone().requires_grad_(True)
    c = householder_apply(uu, hh, strategy=strategy)  # type: ignore[arg-type]
    (c * g).sum().backward()
    assert uu.grad is not None and hh.grad is not None
    return c.detach(), uu.grad, hh.grad


# --------------------------------------------------------------------------- cross-checks
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("batch", [None, 1, 7])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize(("n", "m"), SIZES)
def test_matches_dense_autograd(n: int, m: int, dtype: torch.dtype, batch: int | None, strategy: str) -> None:
    u, h, g = make(n, m, batch, dtype)
    c, du, dh = run_alg1(u, h, g, strategy)
    c_ref, du_ref, dh_ref = dense_reference(u, h, g)
    assert c.dtype == dtype and du.dtype == dtype and dh.dtype == dtype
    assert c.shape == h.shape and dh.shape == h.shape and du.shape == (n, m)
    du_scale = grad_u_scale(u, h, g)
    for name, x, ref, scale in (("C", c, c_ref, None), ("dL/dU", du, du_ref, du_scale), ("dL/dh", dh, dh_ref, None)):
        r = ratio(x, ref, n, dtype, scale)
        assert r <= THRESHOLD, f"{name}: test ratio {r:.3g} > {THRESHOLD}"


def test_batch_gradient_cancellation() -> None:
    """n = 2, m = 1, B = 7, a draw where the terms of dL/dU nearly cancel: against a 60-digit
    Theorem 2 reference, Algorithm 1 (both strategies) *and* float64 dense autograd miss
    ``30 n eps ||dL/dU||`` by far; relative to the size of the terms all are at rounding level."""
    from orthoverify.backends import get_backend
    from orthoverify.param.householder import theorem2_gradients

    mp = get_backend("mpmath-60")
    u, h, g = make(2, 1, 7, torch.float64, seed=14)
    exact = theorem2_gradients(mp.asarray(u.numpy()), mp.asarray(h.numpy()), mp.asarray(g.numpy()), backend=mp)[0]
    du_hp = torch.from_numpy(mp.to_numpy(exact))
    scale = grad_u_scale(u, h, g)
    assert scale > 50 * float(du_hp.norm())  # heavy cancellation
    candidates = [run_alg1(u, h, g, s)[1] for s in STRATEGIES] + [dense_reference(u, h, g)[1]]
    assert max(ratio(x, du_hp, 2, torch.float64) for x in candidates) > THRESHOLD
    for x in candidates:
        assert ratio(x, du_hp, 2, torch.float64, scale) <= THRESHOLD


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_gradient_is_full_dense_not_masked(dtype: torch.dtype) -> None:
    """dL/dU is the gradient of a dense U: its upper triangle is generally nonzero (the paper
    zeroes it after each step; the Function does not)."""
    u, h, g = make(6, 4, 3, dtype)
    u = u.tril()  # eq. 9's pattern
    _, du, _ = run_alg1(u, h, g, "store")
    assert float(du.triu(1).abs().max()) > 0
    _, du_ref, _ = dense_reference(u, h, g)
    assert ratio(du, du_ref, 6, dtype) <= THRESHOLD


@pytest.mark.parametrize("batch", [None, 4])
def test_m0_is_identity(batch: int | None) -> None:
    for n in (1, 3):
        u, h, g = make(n, 0, batch, torch.float64)
        c, du, dh = run_alg1(u, h, g, "store")
        assert torch.equal(c, h) and torch.equal(dh, g) and du.shape == (n, 0)
        c2, du2, dh2 = run_alg1(u, h, g, "recompute")
        assert torch.equal(c2, h) and torch.equal(dh2, g) and du2.shape == (n, 0)


def test_n1_has_no_reflection() -> None:
    with pytest.raises(DomainError, match="m = 1 columns for n = 1"):
        householder_apply(torch.ones(1, 1), torch.ones(1))


@pytest.mark.parametrize("batch", [None, 5])
def test_store_runs_the_generic_algorithm1(batch: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Function runs the generic algorithm1_forward/backward (one call each), not a second
    implementation, and agrees with ``algorithm1`` by test ratio. Not bitwise: the two calls batch
    their products differently, and a BLAS may round those kernels differently (one ulp under some
    CPUs' MKL kernels), which says nothing about which code ran."""
    import orthoverify.param.householder_torch as ht

    calls: list[str] = []

    def spy(name: str, fn: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return fn(*args, **kwargs)

        return wrapped

    monkeypatch.setattr(ht, "algorithm1_forward", spy("forward", ht.algorithm1_forward))
    monkeypatch.setattr(ht, "algorithm1_backward", spy("backward", ht.algorithm1_backward))
    u, h, g = make(9, 5, batch, torch.float64)
    c, du, dh = run_alg1(u, h, g, "store")
    assert calls == ["forward", "backward"]
    ref = algorithm1(u, h, g)
    assert ratio(c, ref.c, 9, torch.float64) <= THRESHOLD
    assert ratio(du, ref.dl_du, 9, torch.float64, scale=grad_u_scale(u, h, g)) <= THRESHOLD
    assert ratio(dh, ref.dl_dh, 9, torch.float64) <= THRESHOLD


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("batch", [None, 3])
@pytest.mark.parametrize(("n", "m"), [(2, 1), (5, 3), (6, 5)])
def test_gradcheck_float64(n: int, m: int, batch: int | None, strategy: str) -> None:
    u, h, _ = make(n, m, batch, torch.float64, seed=3)
    u.requires_grad_(True)
    h.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda a, b: Algorithm1Function.apply(a, b, strategy), (u, h))


def test_only_h_or_only_u_requires_grad() -> None:
    u, h, g = make(7, 3, 2, torch.float64)
    _, du_ref, dh_ref = dense_reference(u, h, g)
    uu = u.clone().requires_grad_(True)
    (householder_apply(uu, h) * g).sum().backward()
    assert uu.grad is not None and ratio(uu.grad, du_ref, 7, torch.float64) <= THRESHOLD
    hh = h.clone().requires_grad_(True)
    (householder_apply(u, hh, strategy="recompute") * g).sum().backward()
    assert hh.grad is not None and ratio(hh.grad, dh_ref, 7, torch.float64) <= THRESHOLD


def test_recurrent_use_accumulates_over_steps() -> None:
    """Applying W at several time steps sums dL/dU^{(t)} over t, as autograd does."""
    n, m, steps = 6, 4, 5
    u, h0, _ = make(n, m, 3, torch.float64)
    for strategy in STRATEGIES:
        uu = u.clone().requires_grad_(True)
        uref = u.clone().requires_grad_(True)
        h, href = h0, h0
        for _ in range(steps):
            h = torch.tanh(householder_apply(uu, h, strategy=strategy))  # type: ignore[arg-type]
            href = torch.tanh(reflector_product(uref) @ href)
        h.square().sum().backward()
        href.square().sum().backward()
        assert uu.grad is not None and uref.grad is not None
        assert ratio(uu.grad, uref.grad, n, torch.float64) <= THRESHOLD


# --------------------------------------------------------------------------- memory
def saved_numels(strategy: str, n: int, m: int, batch: int) -> tuple[list[tuple[int, ...]], torch.Tensor]:
    """Shapes of the tensors Algorithm1Function saves for backward (via saved_tensors_hooks)."""
    u, h, _ = make(n, m, batch, torch.float64)
    u.requires_grad_(True)
    shapes: list[tuple[int, ...]] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        shapes.append(tuple(t.shape))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        c = Algorithm1Function.apply(u, h, strategy)
    return shapes, c


@pytest.mark.parametrize(("n", "m", "batch"), [(16, 8, 4), (32, 31, 16), (40, 1, 3)])
def test_saved_tensor_sizes(n: int, m: int, batch: int) -> None:
    def numel(s: tuple[int, ...]) -> int:
        return int(torch.Size(s).numel())

    rec, c_rec = saved_numels("recompute", n, m, batch)
    sto, c_sto = saved_numels("store", n, m, batch)
    # recompute: U, N and C only: O(nB) beyond U
    assert sorted(rec) == sorted([(n, m), (m,), (n, batch)])
    assert sum(map(numel, rec)) - n * m == n * batch + m
    # store: U, N, H (n x (m+1) x B) and h~ (m x B): O(nmB)
    assert sorted(sto) == sorted([(n, m), (m,), (n, m + 1, batch), (m, batch)])
    assert sum(map(numel, sto)) - n * m == n * (m + 1) * batch + m * batch + m
    # what autograd actually holds agrees with what the hooks saw
    for c, shapes in ((c_rec, rec), (c_sto, sto)):
        node: Any = c.grad_fn
        assert [tuple(t.shape) for t in node.saved_tensors] == shapes


def test_recompute_memory_independent_of_m() -> None:
    n, batch = 24, 8
    beyond_u = []
    for m in (1, 12, 23):
        shapes, _ = saved_numels("recompute", n, m, batch)
        beyond_u.append(sum(int(torch.Size(s).numel()) for s in shapes) - n * m - m)
    assert beyond_u == [n * batch] * 3


# --------------------------------------------------------------------------- autograd hygiene
def test_no_grad_runs_forward_only() -> None:
    u, h, _ = make(6, 3, 2, torch.float64)
    u.requires_grad_(True)
    ref = householder_apply(u, h).detach()
    with torch.no_grad():
        for strategy in STRATEGIES:
            c = householder_apply(u, h, strategy=strategy)  # type: ignore[arg-type]
            assert c.grad_fn is None and not c.requires_grad
            assert ratio(c, ref, 6, torch.float64) <= THRESHOLD  # the Function's path vs the forward alone
            c2 = Algorithm1Function.apply(u, h, strategy)
            assert c2.grad_fn is None and ratio(c2, ref, 6, torch.float64) <= THRESHOLD


def test_no_input_grad_means_plain_tensor() -> None:
    u, h, _ = make(6, 3, None, torch.float64)
    c = householder_apply(u, h)
    assert c.grad_fn is None and c.shape == (6,)


def test_double_backward_is_refused() -> None:
    u, h, g = make(5, 2, 3, torch.float64)
    u.requires_grad_(True)
    for strategy in STRATEGIES:
        c = householder_apply(u, h, strategy=strategy)  # type: ignore[arg-type]
        with pytest.raises(NotImplementedError, match="does not support double backward"):
            torch.autograd.grad((c * g).sum(), u, create_graph=True)
        (du,) = torch.autograd.grad((c * g).sum(), u)  # first order still fine
        assert not du.requires_grad


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_inputs_not_modified_and_inplace_on_output_detected(strategy: str) -> None:
    u, h, g = make(6, 4, 3, torch.float64)
    u0, h0 = u.clone(), h.clone()
    uu, hh = u.requires_grad_(True), h.requires_grad_(True)
    c = householder_apply(uu, hh, strategy=strategy)  # type: ignore[arg-type]
    (c * g).sum().backward()
    assert torch.equal(u.detach(), u0) and torch.equal(h.detach(), h0)
    # an in-place change of what backward reads must be caught, not silently used
    c = householder_apply(uu, hh, strategy=strategy)  # type: ignore[arg-type]
    with torch.no_grad():
        uu.mul_(2)
    with pytest.raises(RuntimeError, match="inplace"):
        c.sum().backward()


def test_inplace_on_output_with_recompute_is_detected() -> None:
    u, h, _ = make(6, 4, 3, torch.float64)
    u.requires_grad_(True)
    c = householder_apply(u, h, strategy="recompute")
    c.mul_(2)  # C is what the recompute strategy regenerates H from
    with pytest.raises(RuntimeError, match="inplace"):
        c.sum().backward()


def test_grad_c_noncontiguous() -> None:
    """Upstream gradients may be expanded or transposed views."""
    u, h, _ = make(7, 3, 4, torch.float64)
    for strategy in STRATEGIES:
        uu = u.clone().requires_grad_(True)
        c = householder_apply(uu, h.t().contiguous().t(), strategy=strategy)  # type: ignore[arg-type]
        c.sum().backward()  # grad_c is an expanded tensor of ones
        _, du_ref, _ = dense_reference(u, h, torch.ones_like(h))
        assert uu.grad is not None and ratio(uu.grad, du_ref, 7, torch.float64) <= THRESHOLD


# --------------------------------------------------------------------------- module
def test_householder_linear_forward_and_pattern() -> None:
    torch.manual_seed(0)
    layer = HouseholderLinear(8, 5, dtype=torch.float64)
    assert torch.equal(layer.U.detach().triu(1), torch.zeros(8, 5, dtype=torch.float64))
    x = torch.randn(2, 3, 8, dtype=torch.float64)
    y = layer(x)
    w = reflector_product(layer.masked_u().detach())
    assert y.shape == x.shape
    assert ratio(y, x @ w.T, 8, torch.float64) <= THRESHOLD
    assert ratio(layer.weight().detach(), w, 8, torch.float64) <= THRESHOLD
    wtw = w.T @ w
    assert ratio(wtw, torch.eye(8, dtype=torch.float64), 8, torch.float64) <= THRESHOLD
    assert set(layer.state_dict()) == {"U"}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_householder_linear_gradient_masked_and_pattern_kept(strategy: str) -> None:
    torch.manual_seed(1)
    layer = HouseholderLinear(6, 4, strategy=strategy, dtype=torch.float64)  # type: ignore[arg-type]
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    x = torch.randn(5, 6, dtype=torch.float64)
    for _ in range(3):
        opt.zero_grad()
        layer(x).pow(3).sum().backward()
        assert layer.U.grad is not None
        assert torch.equal(layer.U.grad.triu(1), torch.zeros(6, 4, dtype=torch.float64))
        opt.step()
    assert torch.equal(layer.U.detach().triu(1), torch.zeros(6, 4, dtype=torch.float64))
    # the masked gradient equals the dense gradient with its upper triangle zeroed (the paper's rule)
    uref = layer.U.detach().clone().requires_grad_(True)
    (x @ reflector_product(uref).T).pow(3).sum().backward()
    layer.zero_grad()
    layer(x).pow(3).sum().backward()
    assert uref.grad is not None and layer.U.grad is not None
    assert ratio(layer.U.grad, uref.grad.tril(), 6, torch.float64) <= THRESHOLD


def test_householder_linear_float32_default_and_vector() -> None:
    layer = HouseholderLinear(4, 3)
    assert layer.U.dtype == torch.float32
    y = layer(torch.ones(4))
    assert y.shape == (4,)
    assert "n=4, m=3" in repr(layer)


def test_householder_linear_bad_arguments() -> None:
    with pytest.raises(DomainError, match="m = 4 reflections for n = 4"):
        HouseholderLinear(4, 4)
    with pytest.raises(ShapeError, match="n must be at least 1"):
        HouseholderLinear(0, 0)
    with pytest.raises(DTypeError, match="float16"):
        HouseholderLinear(3, 1, dtype=torch.float16)
    with pytest.raises(InputError, match="strategy"):
        HouseholderLinear(3, 1, strategy="bogus")  # type: ignore[arg-type]
    layer = HouseholderLinear(4, 2)
    with pytest.raises(ShapeError, match=r"\(\.\.\., 4\)"):
        layer(torch.ones(2, 5))
    with pytest.raises(DTypeError, match="float64"):
        layer(torch.ones(2, 4, dtype=torch.float64))


# --------------------------------------------------------------------------- bad inputs
def test_shape_errors() -> None:
    h = torch.ones(4)
    with pytest.raises(ShapeError, match="U must be 2-dimensional"):
        householder_apply(torch.ones(4), h)
    with pytest.raises(ShapeError, match="U must be 2-dimensional"):
        householder_apply(torch.ones(4, 2, 1), h)
    with pytest.raises(ShapeError, match=r"h must have length 4, got 5"):
        householder_apply(torch.randn(4, 2), torch.ones(5))
    with pytest.raises(ShapeError, match=r"h must have shape \(4,\) or \(4, B\)"):
        householder_apply(torch.randn(4, 2), torch.ones(3, 2))
    with pytest.raises(ShapeError, match=r"h must have shape"):
        householder_apply(torch.randn(4, 2), torch.ones(4, 2, 2))
    with pytest.raises(ShapeError, match="no rows"):
        householder_apply(torch.ones(0, 0), torch.ones(0))


def test_domain_error_m_at_least_n() -> None:
    with pytest.raises(DomainError, match="m = 3 columns for n = 3"):
        householder_apply(torch.randn(3, 3), torch.ones(3))
    with pytest.raises(DomainError, match="m = 4 columns for n = 3"):
        Algorithm1Function.apply(torch.randn(3, 4), torch.ones(3), "store")


def test_zero_vector_error() -> None:
    u = torch.randn(5, 3)
    u[:, 1] = 0
    with pytest.raises(ZeroVectorError, match=r"column 1 of U \(u_4\) is zero"):
        householder_apply(u.requires_grad_(True), torch.ones(5))


def test_dtype_errors() -> None:
    u = torch.randn(4, 2)
    with pytest.raises(DTypeError, match="U has unsupported dtype int64"):
        householder_apply(torch.ones(4, 2, dtype=torch.int64), torch.ones(4))
    with pytest.raises(DTypeError, match="h has unsupported dtype int32"):
        householder_apply(u, torch.ones(4, dtype=torch.int32))
    with pytest.raises(DTypeError, match="half precision"):
        householder_apply(u.half(), torch.ones(4).half())
    with pytest.raises(DTypeError, match="real parametrisation"):
        householder_apply(u.to(torch.complex64), torch.ones(4, dtype=torch.complex64))
    with pytest.raises(DTypeError, match="U is float32 but h is float64"):
        householder_apply(u, torch.ones(4, dtype=torch.float64))
    with pytest.raises(DTypeError, match=r"h must be a torch\.Tensor, got list"):
        householder_apply(u, [1.0, 2.0, 3.0, 4.0])  # type: ignore[arg-type]
    with pytest.raises(DTypeError, match=r"U must be a torch\.Tensor"):
        Algorithm1Function.apply(u.numpy(), torch.ones(4), "store")


def test_non_finite_errors() -> None:
    u = torch.randn(4, 2)
    bad = u.clone()
    bad[2, 1] = float("nan")
    with pytest.raises(NonFiniteError, match="U contains NaN or Inf"):
        householder_apply(bad, torch.ones(4))
    h = torch.ones(4, 3)
    h[0, 2] = float("inf")
    with pytest.raises(NonFiniteError, match="h contains NaN or Inf"):
        householder_apply(u.requires_grad_(True), h, strategy="recompute")


def test_bad_strategy() -> None:
    with pytest.raises(InputError, match="strategy must be one of 'store', 'recompute'"):
        householder_apply(torch.randn(4, 2), torch.ones(4), strategy="both")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="strategy"):
        Algorithm1Function.apply(torch.randn(4, 2), torch.ones(4), "both")


# --------------------------------------------------------------------------- cuda
@pytest.mark.cuda
@cuda
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_cuda_matches_dense_and_stays_on_device(dtype: torch.dtype, strategy: str) -> None:
    n, m = 32, 20
    u, h, g = make(n, m, 8, dtype, device="cuda")
    c, du, dh = run_alg1(u, h, g, strategy)
    assert c.is_cuda and du.is_cuda and dh.is_cuda
    c_ref, du_ref, dh_ref = dense_reference(u, h, g)
    for x, ref in ((c, c_ref), (du, du_ref), (dh, dh_ref)):
        assert ratio(x, ref, n, dtype) <= THRESHOLD


@pytest.mark.cuda
@cuda
def test_cuda_saved_tensors_and_module() -> None:
    shapes: list[torch.device] = []
    u, h, _ = make(10, 4, 3, torch.float64, device="cuda")
    u.requires_grad_(True)

    def pack(t: torch.Tensor) -> torch.Tensor:
        shapes.append(t.device)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        householder_apply(u, h, strategy="recompute")
    assert shapes and all(d.type == "cuda" for d in shapes)
    layer = HouseholderLinear(10, 4, device="cuda", dtype=torch.float64)
    y = layer(torch.randn(5, 10, device="cuda", dtype=torch.float64))
    y.sum().backward()
    assert y.is_cuda and layer.U.grad is not None and layer.U.grad.is_cuda


@pytest.mark.cuda
@cuda
def test_cuda_device_mismatch() -> None:
    with pytest.raises(InputError, match="same device"):
        householder_apply(torch.randn(4, 2, device="cuda"), torch.ones(4))
