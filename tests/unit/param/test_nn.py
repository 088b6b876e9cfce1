"""orthoverify.nn: the parametrisations as torch.nn.utils.parametrize modules.

Every comparison is a LAPACK-style test ratio against 30: orthogonality ``||W'W - I||_F / (N eps)``
and agreement ``||W - ref||_F / (N eps scale)`` with eps the unit roundoff of the dtype under
test; references are computed in float64 by the orthoverify.param functions on the same X, so
float32 results are compared with a float64 answer. For the scaled Cayley map the scale is
alpha = 1 + ||A||_2 (a bound on the condition number of I + A); elsewhere it is 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
import torch
from torch import Tensor, nn
from torch.nn.utils import parametrize

from orthoverify.errors import DomainError, InputError, NotOrthogonalError, ShapeError, ZeroVectorError
from orthoverify.nn import HouseholderOrthogonal, ScaledCayleyOrthogonal, SVDParametrization, URNNUnitary
from orthoverify.param import cayley, householder, svd, unitary
from orthoverify.samples import haar_orthogonal
from orthoverify.tolerance import THRESHOLD

N = 6
DTYPES = [torch.float32, torch.float64]


# --------------------------------------------------------------------------- helpers
def eps(dtype: torch.dtype) -> float:
    return torch.finfo(dtype).eps


def orth_ratio(w: Tensor) -> float:
    n = w.shape[0]
    eye = torch.eye(n, dtype=w.dtype, device=w.device)
    return float(torch.linalg.matrix_norm(w.T @ w - eye)) / (n * eps(w.dtype))


def agree_ratio(w: Tensor, ref: Tensor, dtype: torch.dtype, scale: float = 1.0) -> float:
    diff = w.detach().to(torch.float64).cpu() - ref.detach().to(torch.float64).cpu()
    return float(torch.linalg.matrix_norm(diff)) / (w.shape[0] * eps(dtype) * scale)


def haar(seed: int, n: int, det: int | None = None) -> Tensor:
    q = haar_orthogonal(np.random.default_rng(seed), n)
    if det is not None and np.sign(np.linalg.det(q)) != det:
        q[:, 0] = -q[:, 0]
    return torch.tensor(q)


def xrand(seed: int, shape: tuple[int, int], scale: float = 1.0) -> Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64) * scale


def cayley_alpha(x: Tensor) -> float:
    a = x.triu(1) - x.triu(1).T
    return 1.0 + float(torch.linalg.matrix_norm(a, ord=2))


def registered(module: nn.Module, size: int, dtype: torch.dtype, seed: int = 0) -> nn.Linear:
    torch.manual_seed(seed)
    layer = nn.Linear(size, size, bias=False, dtype=dtype)
    parametrize.register_parametrization(layer, "weight", module)
    return layer


# --------------------------------------------------------------------------- references
def ref_householder(x: Tensor, m: int) -> Tensor:
    """M_{n-m+1}(u_{n-m+1}, ..., u_n) by the definition (m_map), u_1 = sign of X[n-1, n-1]."""
    n = x.shape[0]
    x = x.to(torch.float64)
    vectors = [x[j:, j] for j in range(min(m, n - 1) - 1, -1, -1)]
    if m == n:
        vectors.insert(0, torch.tensor([-1.0 if x[n - 1, n - 1] < 0 else 1.0], dtype=torch.float64))
    return householder.m_map(vectors, require_orthogonal=True)


def ref_cayley(x: Tensor, d: tuple[int, ...]) -> Tensor:
    x = x.to(torch.float64)
    return cayley.scaled_cayley(x.triu(1) - x.triu(1).T, list(d))


def ref_svd(x: Tensor, m1: int, m2: int, sigma_star: float, r: float) -> Tensor:
    x = x.to(torch.float64)
    us = [x[j:, j] for j in range(m1 - 1, -1, -1)]
    vs = [x[j:, m1 + j] for j in range(m2 - 1, -1, -1)]
    sigma = svd.sigma_map(x[:, -1], sigma_star, r)
    return svd.m_k1k2(us, vs, sigma)


def ref_urnn(x: Tensor, perm: list[int]) -> Tensor:
    x = x.to(torch.float64)
    p = unitary.urnn_parameters(x[0], x[1], x[2], (x[3], x[4]), (x[5], x[6]), perm)
    return unitary.embed_matrix(unitary.urnn_matrix(p))


PERM = [2, 0, 5, 1, 4, 3]

# name -> (module factory, reference on (X), weight size, Cayley-style scale?)
CASES: dict[str, tuple[Callable[[], nn.Module], Callable[[Tensor], Tensor], int]] = {
    "householder-m=n": (lambda: HouseholderOrthogonal(N), lambda x: ref_householder(x, N), N),
    "householder-m=3": (lambda: HouseholderOrthogonal(N, 3), lambda x: ref_householder(x, 3), N),
    "cayley-rho=2": (lambda: ScaledCayleyOrthogonal(N, rho=2), lambda x: ref_cayley(x, (-1, -1, 1, 1, 1, 1)), N),
    "svd-m1=4,m2=3": (
        lambda: SVDParametrization(N, 4, 3, sigma_star=1.0, r=0.5),
        lambda x: ref_svd(x, 4, 3, 1.0, 0.5),
        N,
    ),
    "svd-m=n": (lambda: SVDParametrization(N), lambda x: ref_svd(x, N, N, 1.0, 1.0), N),
    "urnn": (lambda: URNNUnitary(N, PERM), lambda x: ref_urnn(x, PERM), 2 * N),
}
ORTHOGONAL_OUTPUT = ["householder-m=n", "householder-m=3", "cayley-rho=2", "urnn"]


def x_for(name: str, module: nn.Module, seed: int = 1) -> Tensor:
    shape = module.x_shape  # type: ignore[attr-defined]
    x = xrand(seed, shape, 0.5 if name.startswith("cayley") else 1.0)
    return x


def scale_for(name: str, x: Tensor) -> float:
    return cayley_alpha(x) if name.startswith("cayley") else 1.0


# --------------------------------------------------------------------------- registration
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", [*ORTHOGONAL_OUTPUT, "svd-m1=4,m2=3"])
def test_register_on_fresh_linear_gives_orthogonal_weight(name: str, dtype: torch.dtype) -> None:
    factory, _, size = CASES[name]
    module = factory()
    layer = registered(module, size, dtype)
    w = layer.weight
    assert w.dtype == dtype and tuple(w.shape) == (size, size)
    assert tuple(layer.parametrizations.weight.original.shape) == module.x_shape  # type: ignore[attr-defined]
    assert orth_ratio(w.detach()) <= THRESHOLD


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_full_keeps_a_fresh_linear_weight(dtype: torch.dtype) -> None:
    """With m1 = m2 = n every W with singular values in (0, 2) is reachable: registration keeps it."""
    torch.manual_seed(0)
    layer = nn.Linear(N, N, bias=False, dtype=dtype)
    before = layer.weight.detach().clone()
    parametrize.register_parametrization(layer, "weight", SVDParametrization(N))
    assert agree_ratio(layer.weight, before, dtype) <= THRESHOLD


# --------------------------------------------------------------------------- forward
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CASES))
def test_forward_agrees_with_param_functions(name: str, dtype: torch.dtype) -> None:
    factory, ref, size = CASES[name]
    module = factory()
    for seed in (1, 2):
        x = x_for(name, module, seed)
        w = module(x.to(dtype))
        assert w.dtype == dtype and tuple(w.shape) == (size, size)
        assert agree_ratio(w, ref(x), dtype, scale_for(name, x)) <= THRESHOLD
        if name in ORTHOGONAL_OUTPUT:
            assert orth_ratio(w) <= THRESHOLD


def test_householder_m_n_equals_compact_wy_and_reaches_both_determinants() -> None:
    x = xrand(3, (N, N))
    for sign in (1.0, -1.0):
        x[N - 1, N - 1] = 0.25 * sign  # read through its sign only
        w = HouseholderOrthogonal(N)(x)
        ref = householder.compact_wy(x[:, : N - 1].tril(), torch.tensor([sign], dtype=torch.float64))
        assert agree_ratio(w, ref, torch.float64) <= THRESHOLD
        assert math.copysign(1.0, float(torch.linalg.det(w))) == (-1.0) ** (N - 1) * sign


def test_ignored_entries_do_not_matter() -> None:
    x = xrand(4, (N, N))
    y = x + xrand(5, (N, N)).triu(1)  # above eq. 9's pattern
    assert torch.equal(HouseholderOrthogonal(N)(x), HouseholderOrthogonal(N)(y))
    z = x + xrand(6, (N, N)).tril()  # the diagonal and below for Cayley
    c = ScaledCayleyOrthogonal(N)
    assert torch.equal(c(x), c(z))


def test_svd_singular_values_are_the_sigma_map() -> None:
    module = SVDParametrization(N, 3, 5, sigma_star=2.0, r=0.75)
    x = xrand(7, module.x_shape)
    w = module(x)
    sigma = svd.sigma_map(x[:, -1], 2.0, 0.75)
    got = torch.linalg.svdvals(w)
    want = sigma.sort(descending=True).values.reshape(1, -1)
    assert agree_ratio(got.reshape(1, -1), want, torch.float64) <= THRESHOLD


# --------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("name", list(CASES))
def test_gradients_match_central_differences(name: str) -> None:
    factory, _, size = CASES[name]
    module = factory()
    x0 = x_for(name, module, 8)
    g = xrand(9, (size, size))
    x = x0.clone().requires_grad_()
    loss = (module(x) * g).sum()
    loss.backward()
    assert x.grad is not None
    grad = x.grad
    assert bool(torch.isfinite(grad).all()) and float(grad.abs().max()) > 0
    if name.startswith("cayley"):
        entries = [(0, 1), (2, 5)]
    elif name == "urnn":
        entries = [(0, 1), (4, 3), (6, 5)]
    else:
        entries = [(2, 1), (5, 0), (N - 1, x0.shape[1] - 1)]
    h = 1e-6
    for i, j in entries:
        xp, xm = x0.clone(), x0.clone()
        xp[i, j] += h
        xm[i, j] -= h
        with torch.no_grad():
            fd = float(((module(xp) - module(xm)) * g).sum()) / (2 * h)
        assert abs(float(grad[i, j]) - fd) <= 1e-6 * max(1.0, abs(fd)), (i, j, float(grad[i, j]), fd)


def test_ignored_entries_get_zero_gradient() -> None:
    x = xrand(10, (N, N)).requires_grad_()
    HouseholderOrthogonal(N)(x).sum().backward()
    assert x.grad is not None
    assert float(x.grad.triu(1).abs().max()) == 0.0
    assert float(x.grad[N - 1, N - 1]) == 0.0  # u_1 is a sign
    x.grad = None
    ScaledCayleyOrthogonal(N)(x).sum().backward()
    assert float(x.grad.tril().abs().max()) == 0.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CASES))
def test_gradients_flow_through_the_registered_layer(name: str, dtype: torch.dtype) -> None:
    factory, _, size = CASES[name]
    layer = registered(factory(), size, dtype)
    inp = torch.randn(4, size, dtype=dtype)
    layer(inp).pow(2).sum().backward()
    grad = layer.parametrizations.weight.original.grad
    assert grad is not None and grad.dtype == dtype
    assert bool(torch.isfinite(grad).all()) and float(grad.abs().max()) > 0


# --------------------------------------------------------------------------- right_inverse
def round_trip(module: nn.Module, w: Tensor, dtype: torch.dtype) -> float:
    """``||forward(right_inverse(W)) - W||_F / (n eps scale)``; for the scaled Cayley map the scale
    is alpha = 1 + ||A||_2 of the A found (forward's own error is eps alpha, see the module doc)."""
    x = module.right_inverse(w.to(dtype))  # type: ignore[operator]
    assert x.dtype == dtype and tuple(x.shape) == module.x_shape  # type: ignore[attr-defined]
    scale = cayley_alpha(x.to(torch.float64)) if isinstance(module, ScaledCayleyOrthogonal) else 1.0
    return agree_ratio(module(x), w, dtype, scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("det", [1, -1])
def test_householder_right_inverse_round_trips(dtype: torch.dtype, det: int) -> None:
    module = HouseholderOrthogonal(N)
    for seed in (11, 12, 13):
        assert round_trip(module, haar(seed, N, det), dtype) <= THRESHOLD


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("d", "det"), [((1,) * N, 1), ((-1, 1, 1, 1, 1, 1), -1), ((1, -1, 1, 1, -1, 1), 1)])
def test_cayley_right_inverse_round_trips(dtype: torch.dtype, d: tuple[int, ...], det: int) -> None:
    module = ScaledCayleyOrthogonal(N, d=d)
    for seed in (21, 22, 23):
        w = haar(seed, N, det)
        assert round_trip(module, w, dtype) <= THRESHOLD


def test_cayley_right_inverse_uses_the_certified_a_when_d_matches() -> None:
    w = haar(24, N)
    inv = cayley.scaled_cayley_inverse(w)
    module = ScaledCayleyOrthogonal(N, d=inv.d)
    x = module.right_inverse(w)
    assert torch.allclose(x, inv.a.triu(1), rtol=0, atol=0)
    assert float(x.abs().max()) <= 1.0 + 1e-12


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_right_inverse_round_trips(dtype: torch.dtype) -> None:
    module = SVDParametrization(N, sigma_star=1.0, r=0.6)
    for seed in (31, 32):
        assert round_trip(module, haar(seed, N), dtype) <= THRESHOLD
    rng = np.random.default_rng(33)
    sv = torch.tensor(rng.uniform(0.5, 1.5, N))
    w = haar(34, N) @ torch.diag(sv) @ haar(35, N).T  # not orthogonal, but reachable
    assert round_trip(module, w, dtype) <= THRESHOLD


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "module",
    [HouseholderOrthogonal(N), ScaledCayleyOrthogonal(N, rho=1), SVDParametrization(N)],
    ids=["householder", "cayley", "svd"],
)
def test_assignment_sets_the_weight(module: nn.Module, dtype: torch.dtype) -> None:
    layer = registered(module, N, dtype)
    w = haar(41, N, det=-1).to(dtype)
    layer.weight = w
    assert agree_ratio(layer.weight, w, dtype) <= THRESHOLD


@pytest.mark.parametrize(
    ("module", "w"),
    [
        (HouseholderOrthogonal(N, 3), haar(51, N)),
        (ScaledCayleyOrthogonal(N), haar(52, N, det=-1)),
        (SVDParametrization(N, 4, 4), haar(53, N)),
        (SVDParametrization(N, sigma_star=3.0, r=1.0), haar(54, N)),
        (URNNUnitary(N), ref_urnn(xrand(55, (7, N)), list(range(N)))),
        (URNNUnitary(N), haar(56, 2 * N)),
    ],
    ids=["householder-m<n", "cayley-det", "svd-m<n", "svd-range", "urnn-reachable", "urnn-haar"],
)
def test_unsupported_right_inverse_raises_domain_error(module: nn.Module, w: Tensor) -> None:
    with pytest.raises(DomainError):
        module.right_inverse(w)  # type: ignore[operator]
    layer = registered(module, w.shape[0], torch.float64)
    before = layer.weight.detach().clone()
    with pytest.raises(DomainError):
        layer.weight = w
    assert torch.equal(layer.weight, before)


def test_cayley_eigenvalue_minus_one_is_unreachable_with_d_identity() -> None:
    w = torch.diag(torch.tensor([-1.0, -1.0, 1.0, 1.0, 1.0, 1.0], dtype=torch.float64))  # det +1
    with pytest.raises(DomainError, match="eigenvalue -1"):
        ScaledCayleyOrthogonal(N).right_inverse(w)


def test_strict_refuses_a_non_orthogonal_weight() -> None:
    w = torch.randn(N, N, dtype=torch.float64)
    with pytest.raises(NotOrthogonalError):
        HouseholderOrthogonal(N, strict=True).right_inverse(w)
    with pytest.raises(NotOrthogonalError):
        URNNUnitary(3, strict=True).right_inverse(torch.randn(6, 6, dtype=torch.float64))
    with pytest.raises(DomainError):
        SVDParametrization(N, strict=True).right_inverse(5 * haar(61, N))
    x = HouseholderOrthogonal(N).right_inverse(w)  # not strict: a fresh X
    assert tuple(x.shape) == (N, N)


def test_right_inverse_rejects_bad_weights() -> None:
    with pytest.raises(ShapeError):
        HouseholderOrthogonal(N).right_inverse(torch.eye(N + 1, dtype=torch.float64))
    with pytest.raises(InputError):
        ScaledCayleyOrthogonal(N).right_inverse(torch.full((N, N), math.nan, dtype=torch.float64))


# --------------------------------------------------------------------------- bad arguments
@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: HouseholderOrthogonal(0), ShapeError, "n"),
        (lambda: HouseholderOrthogonal(2.5), ShapeError, "n"),  # type: ignore[arg-type]
        (lambda: HouseholderOrthogonal(4, 5), DomainError, "m"),
        (lambda: HouseholderOrthogonal(4, 0), DomainError, "m"),
        (lambda: ScaledCayleyOrthogonal(-1), ShapeError, "n"),
        (lambda: ScaledCayleyOrthogonal(3, d=[1, 1]), ShapeError, "d"),
        (lambda: ScaledCayleyOrthogonal(3, d=[1, 0, -1]), DomainError, "d"),
        (lambda: ScaledCayleyOrthogonal(3, d=[1, 2, -1]), DomainError, "d"),
        (lambda: ScaledCayleyOrthogonal(3, rho=4), DomainError, "rho"),
        (lambda: ScaledCayleyOrthogonal(3, d=[1, 1, 1], rho=1), InputError, "rho"),
        (lambda: SVDParametrization(0), ShapeError, "n"),
        (lambda: SVDParametrization(3, m1=4), DomainError, "m1"),
        (lambda: SVDParametrization(3, m2=0), DomainError, "m2"),
        (lambda: SVDParametrization(3, r=0.0), DomainError, "r"),
        (lambda: SVDParametrization(3, r=-1.0), DomainError, "r"),
        (lambda: URNNUnitary(0), ShapeError, "n"),
        (lambda: URNNUnitary(3, [0, 1]), ShapeError, "permutation"),
        (lambda: URNNUnitary(3, [0, 1, 1]), DomainError, "permutation"),
        (lambda: URNNUnitary(3, [0, 1, 3]), DomainError, "permutation"),
        (lambda: URNNUnitary(3, [0, 1.5, 2]), DomainError, "permutation"),
    ],
)
def test_bad_construction_arguments_raise(make: Callable[[], nn.Module], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        make()


def test_bad_x_raises() -> None:
    with pytest.raises(ShapeError, match="X"):
        HouseholderOrthogonal(N, 3)(torch.zeros(N, 4, dtype=torch.float64))
    with pytest.raises(ShapeError, match="X"):
        URNNUnitary(N)(torch.zeros(N, 7, dtype=torch.float64))
    with pytest.raises(ZeroVectorError):
        HouseholderOrthogonal(N, 3)(torch.zeros(N, 3, dtype=torch.float64))


# --------------------------------------------------------------------------- training
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CASES))
def test_sgd_keeps_the_structure(name: str, dtype: torch.dtype) -> None:
    factory, _, size = CASES[name]
    module = factory()
    layer = registered(module, size, dtype, seed=3)
    g = torch.Generator().manual_seed(4)
    inp = torch.randn(16, size, generator=g, dtype=torch.float64).to(dtype)
    target = torch.randn(16, size, generator=g, dtype=torch.float64).to(dtype)
    opt = torch.optim.SGD(layer.parameters(), lr=0.05)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = (layer(inp) - target).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < losses[0]
    w = layer.weight.detach()
    if name in ORTHOGONAL_OUTPUT:
        assert orth_ratio(w) <= THRESHOLD
    else:  # svd: W = U Sigma V' with Sigma from the sigma map: singular values stay in range
        assert isinstance(module, SVDParametrization)
        x = layer.parametrizations.weight.original.detach().to(torch.float64)
        sigma = svd.sigma_map(x[:, -1], module.sigma_star, module.r).sort(descending=True).values
        sv = torch.linalg.svdvals(w.to(torch.float64))
        assert agree_ratio(sv.reshape(1, -1), sigma.reshape(1, -1), dtype) <= THRESHOLD


# --------------------------------------------------------------------------- cuda
@pytest.mark.cuda
@pytest.mark.parametrize("name", list(CASES))
def test_cuda_matches_cpu(name: str) -> None:
    factory, _, size = CASES[name]
    module = factory().to("cuda")
    x = x_for(name, module, 71)
    for dtype in DTYPES:
        w = module(x.to(device="cuda", dtype=dtype))
        assert w.device.type == "cuda"
        assert agree_ratio(w, module.cpu()(x), dtype, scale_for(name, x)) <= THRESHOLD
        module.to("cuda")
    layer = registered(factory(), size, torch.float32).to("cuda")
    layer(torch.randn(3, size, device="cuda")).sum().backward()
    assert bool(torch.isfinite(layer.parametrizations.weight.original.grad).all())
