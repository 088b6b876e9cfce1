"""Targets: built-in adapters for implementations people use, and users' own callables.

An adapter turns a library's API into a kind's signature (named, as a string: the kinds and their
references are the verifier's) and states the conventions it bridges. :func:`load` accepts an
adapter name or ``module:attribute`` naming a callable or a ``torch.nn.Module`` class
(constructed with no arguments; its ``forward`` is the target) and gives what it found
(:class:`Loaded`); the verifier wraps that with its kind
(:func:`orthoverify.conformance.target.load_target`).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.nn.utils import parametrize

from orthoverify.isolation.build import _per_dtype, float64_default, module_target
from orthoverify.isolation.calls import TargetLoadError
from orthoverify.isolation.declare import Params
from orthoverify.nn import HouseholderOrthogonal, ScaledCayleyOrthogonal, SVDParametrization, URNNUnitary
from orthoverify.param.householder_wy import householder_wy_apply, svd_wy_apply
from orthoverify.param.svd import sigma_map_inverse


@dataclass(frozen=True)
class Adapter:
    """A built-in target: its kind, how to build the callable, what it bridges."""

    name: str
    kind: str
    build: Callable[[], Callable[..., Any]]
    description: str
    domain: Callable[[Params], str | None] | None = None
    requires: str | None = None


def _torch_orthogonal(orthogonal_map: str) -> Callable[[], Callable[..., Any]]:
    def make(n: int, dtype: torch.dtype, device: str) -> Any:
        from torch.nn.utils.parametrizations import orthogonal

        layer = torch.nn.Linear(n, n, bias=False).to(dtype=dtype, device=device)
        orthogonal(layer, orthogonal_map=orthogonal_map)
        params: Any = layer.parametrizations
        return params.weight[0]

    return lambda: _per_dtype(make)


def _householder_product() -> Callable[..., Any]:
    def f(u: torch.Tensor) -> torch.Tensor:
        n, m = u.shape[-2], u.shape[-1]
        idx = torch.arange(m, device=u.device)
        pivots = u[..., idx, idx]
        v = torch.tril(u) / pivots.unsqueeze(-2)  # LAPACK's convention: unit pivot, zeros above it
        tau = 2.0 / (v * v).sum(dim=-2)
        full = torch.zeros(*u.shape[:-1], n, dtype=u.dtype, device=u.device)
        full[..., :m] = v
        taus = torch.zeros(*u.shape[:-2], n, dtype=u.dtype, device=u.device)
        taus[..., :m] = tau
        return torch.linalg.householder_product(full, taus)

    return f


def _pivot_domain(p: Params) -> str | None:
    u = p["U"]
    m = u.shape[1]
    if any(u[j, j] == 0.0 for j in range(m)):
        return "a zero pivot u_jj: LAPACK's form I - tau v v' with v_j = 1 cannot express H(u)"
    return None


GEOTORCH_MISSING = "geotorch is not installed: pip install 'orthoverify[geotorch]' (or pip install geotorch)"


def geotorch_map(
    module: Callable[[int], torch.nn.Module], pick: Callable[[Any], Any] = lambda built: built
) -> Callable[[], Callable[..., Any]]:
    """The loader of a map geotorch builds: ``module(n)`` made in float64, moved to the call's
    dtype and device, and ``pick`` of it (the module itself by default) is the map; where geotorch
    is not installed, a TargetLoadError that says how to install it."""

    def build() -> Callable[..., Any]:
        try:
            import geotorch  # noqa: F401
        except ImportError as exc:
            raise TargetLoadError(GEOTORCH_MISSING) from exc

        def make(n: int, dtype: torch.dtype, device: str) -> Any:
            with float64_default():
                return pick(module(n).to(dtype=dtype, device=device))

        return _per_dtype(make)

    return build


def _geotorch(which: str) -> Callable[[], Callable[..., Any]]:
    """geotorch.SO(triv=which) on n x n."""

    def so(n: int) -> torch.nn.Module:
        from geotorch.so import SO

        return SO(size=(n, n), triv=which)

    return geotorch_map(so)


class _OwnHouseholder:
    """orthoverify.nn.HouseholderOrthogonal(n) for every n, with its right_inverse."""

    def __init__(self) -> None:
        self.cache: dict[int, Any] = {}

    def module(self, n: int) -> Any:
        if n not in self.cache:
            self.cache[n] = HouseholderOrthogonal(n, strict=True)
        return self.cache[n]

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() > 2:  # the module takes one matrix: a batch is stacked
            return torch.stack([self(xi) for xi in x])
        out: torch.Tensor = self.module(x.shape[-1])(x)
        return out

    def right_inverse(self, w: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.module(w.shape[-1]).right_inverse(w)
        return out


def _stacked(f: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """f on single parameter sets, and on stacked ones (a leading axis) one set at a time."""

    def g(*args: torch.Tensor) -> torch.Tensor:
        if args[0].dim() > 2:
            return torch.stack([g(*one) for one in zip(*args, strict=True)])
        return f(*args)

    return g


def _own_cayley() -> Callable[..., Any]:
    """orthoverify.nn.ScaledCayleyOrthogonal(n, d) under the scaled-cayley signature f(A, d)."""
    def f(a: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        module = ScaledCayleyOrthogonal(a.shape[-1], d=[int(v) for v in d.tolist()])
        out: torch.Tensor = module(a)  # reads the strict upper triangle: the same A
        return out

    return _stacked(f)


def _own_svd() -> Callable[..., Any]:
    """orthoverify.nn.SVDParametrization(n, m1, m2) (sigma* = 1, r = 1) under f(U, V, sigma):
    X = [U, V, s] with s = sigma_map_inverse(sigma), which eq. 8 maps back to sigma."""
    def f(u: torch.Tensor, v: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
        module = SVDParametrization(u.shape[0], u.shape[1], v.shape[1])
        s = sigma_map_inverse(sigma)
        out: torch.Tensor = module(torch.cat([u, v, s.reshape(-1, 1)], dim=1))
        return out

    return _stacked(f)


WY_BLOCK = 4
"""Block size of the WY adapters: small, so that the validation sizes span several blocks."""


def _own_householder_wy() -> Callable[..., Any]:
    """householder_wy_apply(U, I, lower=True): the blocked compact-WY fast path applied to I."""
    def f(u: torch.Tensor) -> torch.Tensor:
        eye = torch.eye(u.shape[0], dtype=u.dtype, device=u.device)
        return householder_wy_apply(u, eye, block=WY_BLOCK, lower=True)

    return _stacked(f)


def _own_svd_wy() -> Callable[..., Any]:
    """svd_wy_apply(U, sigma, V, I, lower=True): svdRNN's U Sigma V' by the WY fast path."""
    def f(u: torch.Tensor, v: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
        eye = torch.eye(u.shape[0], dtype=u.dtype, device=u.device)
        return svd_wy_apply(u, sigma, v, eye, block=WY_BLOCK, lower=True)

    return _stacked(f)


def _own_urnn() -> Callable[..., Any]:
    """orthoverify.nn.URNNUnitary(n, perm) under f(X, perm): its real block output [[Re W, -Im W],
    [Im W, Re W]] turned back into the complex W."""
    def f(x: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        block = URNNUnitary(n, permutation=[int(v) for v in perm.tolist()])(x)
        return torch.complex(block[:n, :n], block[n:, :n])

    return _stacked(f)


ADAPTERS: dict[str, Adapter] = {
    a.name: a
    for a in (
        Adapter(
            "torch-orthogonal-householder",
            "orthogonal-map",
            _torch_orthogonal("householder"),
            "torch.nn.utils.parametrizations.orthogonal(orthogonal_map='householder'): the parametrization's map "
            "from the unconstrained original X to the weight",
        ),
        Adapter(
            "torch-orthogonal-cayley",
            "orthogonal-map",
            _torch_orthogonal("cayley"),
            "torch.nn.utils.parametrizations.orthogonal(orthogonal_map='cayley') (use_trivialization=True)",
        ),
        Adapter(
            "torch-orthogonal-matrix_exp",
            "orthogonal-map",
            _torch_orthogonal("matrix_exp"),
            "torch.nn.utils.parametrizations.orthogonal(orthogonal_map='matrix_exp') (use_trivialization=True)",
        ),
        Adapter(
            "torch-householder-product",
            "householder-product",
            _householder_product,
            "torch.linalg.householder_product on LAPACK's form: v_j = u_j / u_jj (unit pivot), tau_j = 2 / v_j'v_j, "
            "padded to n reflections with tau = 0",
            domain=_pivot_domain,
        ),
        Adapter(
            "orthoverify-householder",
            "orthogonal-map",
            _OwnHouseholder,
            "orthoverify.nn.HouseholderOrthogonal(n): W = H_n(u_n) ... H_1(u_1) from tril(X), u_1 = sign of "
            "X[n-1, n-1]; coverage through its right_inverse (Theorem 1)",
        ),
        Adapter(
            "orthoverify-scaled-cayley",
            "scaled-cayley",
            _own_cayley,
            "orthoverify.nn.ScaledCayleyOrthogonal(n, d) called on A (it reads the strict upper triangle)",
        ),
        Adapter(
            "orthoverify-svd",
            "svd-parametrisation",
            _own_svd,
            "orthoverify.nn.SVDParametrization(n, m1, m2) with sigma* = 1, r = 1, called on X = [U, V, s] with "
            "s = 2 artanh(sigma - 1) (eq. 8 inverted)",
        ),
        Adapter(
            "orthoverify-householder-wy",
            "householder-product",
            _own_householder_wy,
            f"orthoverify.param.householder_wy.householder_wy_apply(U, I, block={WY_BLOCK}, lower=True): the "
            "blocked compact-WY fast path and its custom backward",
        ),
        Adapter(
            "orthoverify-svd-wy",
            "svd-parametrisation",
            _own_svd_wy,
            f"orthoverify.param.householder_wy.svd_wy_apply(U, sigma, V, I, block={WY_BLOCK}, lower=True): "
            "svdRNN's U Sigma V' by the WY fast path",
        ),
        Adapter(
            "orthoverify-urnn",
            "unitary-composition",
            _own_urnn,
            "orthoverify.nn.URNNUnitary(n, perm) called on X; its real block form turned back into complex W",
        ),
        Adapter(
            "geotorch-so-cayley",
            "orthogonal-map",
            _geotorch("cayley"),
            "geotorch.SO(triv='cayley'): the map from the unconstrained X to SO(n)",
            requires="geotorch",
        ),
        Adapter(
            "geotorch-so-expm",
            "orthogonal-map",
            _geotorch("expm"),
            "geotorch.SO(triv='expm'): the map from the unconstrained X to SO(n)",
            requires="geotorch",
        ),
    )
}


@dataclass(frozen=True)
class Loaded:
    """A target loaded in this process, as its loader found it (its declaration not yet applied)."""

    spec: str
    fn: Callable[..., Any]
    description: str = ""
    domain: Callable[[Params], str | None] | None = None
    """The adapter's own domain: why a parameter point lies outside it (None: inside)."""
    inverse: Callable[[torch.Tensor], torch.Tensor] | None = None
    """Its own inverse map (a ``right_inverse`` attribute), for coverage."""


def load(spec: str, kind: str) -> Loaded:
    """The target named by ``spec`` of the kind named ``kind`` (both as
    :func:`~orthoverify.conformance.target.resolve_kind` resolved them): a built-in adapter, or
    ``module:attribute`` (imported here: the verifier itself loads it only in the target's own
    process, see :mod:`~orthoverify.isolation.isolate`)."""
    if spec in ADAPTERS:
        a = ADAPTERS[spec]
        fn = a.build()
        return Loaded(spec, fn, a.description, a.domain, getattr(fn, "right_inverse", None))
    module_name, _, attr = spec.partition(":")
    if os.getcwd() not in sys.path:  # as `python -m` does: modules of the working directory are importable
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise TargetLoadError(f"cannot import {module_name}: {type(exc).__name__}: {exc}") from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TargetLoadError(f"{module_name} has no attribute {attr}")
        obj = getattr(obj, part)
    if isinstance(obj, type) and issubclass(obj, torch.nn.Module):
        try:
            obj = obj()
        except Exception as exc:
            why = f"cannot construct {spec}() with no arguments: {type(exc).__name__}: {exc}"
            if kind != "orthogonal-map":
                raise TargetLoadError(f"{why} (a layer class of size n is judged with --kind orthogonal-map)") from exc
            try:  # a layer class of size n: its weight against its parametrised original, and its lifecycle
                obj = module_target(obj, f"{spec}(n)")
            except TargetLoadError as again:
                raise TargetLoadError(f"{why}; as a layer of size n: {again}") from again
    if isinstance(obj, torch.nn.Module) and parametrize.is_parametrized(obj, "weight"):
        raise TargetLoadError(
            f"{spec} is a layer with a parametrised weight, of one size: name its class (constructed with n) or "
            "a module_target(factory) (orthoverify.conformance.lifecycle) to judge its weight and its lifecycle"
        )
    if not callable(obj):
        raise TargetLoadError(f"{spec} is not callable")
    doc = getattr(obj, "__doc__", "") or ""
    return Loaded(spec, obj, doc, None, getattr(obj, "right_inverse", None))
