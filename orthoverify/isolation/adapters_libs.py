"""Targets as people ship them: declarations of the built-in adapters (their modules for the
lifecycle checks) and adapters for more libraries (geotorch's ``orthogonal`` constraint, pyro's
Householder flow), each optional: a missing package is a :class:`TargetLoadError` naming the
``pip install`` that brings it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from orthoverify import nn as onn
from orthoverify.isolation.adapters import ADAPTERS, Adapter, _stacked, geotorch_map
from orthoverify.isolation.calls import TargetLoadError
from orthoverify.isolation.declare import ADAPTER_DECLARATIONS, make_declaration


def _linear(n: int) -> torch.nn.Linear:
    return torch.nn.Linear(n, n, bias=False)


def _torch_module(orthogonal_map: str) -> Callable[[int], torch.nn.Module]:
    def make(n: int) -> torch.nn.Module:
        from torch.nn.utils.parametrizations import orthogonal

        return orthogonal(_linear(n), orthogonal_map=orthogonal_map)

    return make


def _registered(
    make_param: Callable[[int], torch.nn.Module], size: Callable[[torch.nn.Module], int]
) -> Callable[[int], torch.nn.Module]:
    """nn.Linear with ``make_param(n)`` registered on its weight (torch.nn.utils.parametrize)."""

    def make(n: int) -> torch.nn.Module:
        from torch.nn.utils import parametrize

        p = make_param(n)
        layer = _linear(size(p))
        parametrize.register_parametrization(layer, "weight", p)
        return layer

    return make


def _own_modules() -> dict[str, Callable[[int], torch.nn.Module]]:
    def size(p: torch.nn.Module) -> int:
        return p.weight_size if isinstance(p, onn._Parametrization) else 0

    return {
        "orthoverify-householder": _registered(lambda n: onn.HouseholderOrthogonal(n), size),
        "orthoverify-scaled-cayley": _registered(lambda n: onn.ScaledCayleyOrthogonal(n), size),
        "orthoverify-svd": _registered(lambda n: onn.SVDParametrization(n), size),
        "orthoverify-urnn": _registered(lambda n: onn.URNNUnitary(n), size),
    }


def _geotorch_module(triv: str) -> Callable[[int], torch.nn.Module]:
    def make(n: int) -> torch.nn.Module:
        import geotorch

        layer = _linear(n)
        geotorch.orthogonal(layer, "weight", triv=triv)
        return layer

    return make


def _geotorch_orthogonal(triv: str) -> Callable[[], Callable[..., Any]]:
    """The map of ``geotorch.orthogonal(layer, "weight", triv=...)``: X -> the layer's weight."""
    return geotorch_map(_geotorch_module(triv), lambda layer: layer.parametrizations.weight[0])


def _pyro_flow(u: torch.Tensor) -> Any:
    try:
        from pyro.distributions.transforms.householder import ConditionedHouseholder
    except ImportError as exc:
        raise TargetLoadError(
            "pyro is not installed: pip install 'orthoverify[pyro]' (or pip install pyro-ppl)"
        ) from exc
    return ConditionedHouseholder(u.mT)  # pyro's u_unnormed holds u_j as row j


def _pyro_householder() -> Callable[..., Any]:
    """pyro's Householder flow with u_j = column j of U, applied to the rows of I: row vectors x
    map to x H(u_1) ... H(u_m), so the rows of I give Q = H(u_1) ... H(u_m)."""
    _pyro_flow(torch.zeros(1, 1))  # fail at load time, with the install line, when pyro is missing

    def f(u: torch.Tensor) -> torch.Tensor:
        eye = torch.eye(u.shape[0], dtype=u.dtype, device=u.device)
        out: torch.Tensor = _pyro_flow(u)(eye)
        return out

    return _stacked(f)


def _pyro_inverse(u: torch.Tensor) -> torch.Tensor:
    """The flow's other entry point: its inverse applied to the rows of I is Q^-1 = Q'."""
    if u.dim() > 2:
        return torch.stack([_pyro_inverse(x) for x in u])
    eye = torch.eye(u.shape[0], dtype=u.dtype, device=u.device)
    out: torch.Tensor = _pyro_flow(u).inv(eye).mT
    return out


class _PyroModule(torch.nn.Module):
    """pyro's ``Householder(n, count_transforms=n)`` TransformModule; its matrix is the flow on I."""

    def __init__(self, n: int) -> None:
        super().__init__()
        from pyro.distributions.transforms import Householder

        self.flow = Householder(n, count_transforms=n)
        self.n = n

    @property
    def weight(self) -> torch.Tensor:
        p = next(self.flow.parameters())
        out: torch.Tensor = self.flow(torch.eye(self.n, dtype=p.dtype, device=p.device))
        return out


NEW_ADAPTERS = (
    Adapter(
        "geotorch-orthogonal-expm",
        "orthogonal-map",
        _geotorch_orthogonal("expm"),
        "geotorch.orthogonal(layer, 'weight', triv='expm') on nn.Linear(n, n): the constraint's map from the "
        "unconstrained X to the weight (the Stiefel manifold, square here: it reaches the component of O(n) of its "
        "base); lifecycle checks on the layer",
        requires="geotorch",
    ),
    Adapter(
        "geotorch-orthogonal-cayley",
        "orthogonal-map",
        _geotorch_orthogonal("cayley"),
        "geotorch.orthogonal(layer, 'weight', triv='cayley') on nn.Linear(n, n); lifecycle checks on the layer",
        requires="geotorch",
    ),
    Adapter(
        "pyro-householder-flow",
        "householder-product",
        _pyro_householder,
        "pyro.distributions.transforms.Householder (ConditionedHouseholder with u_j = column j of U) applied to "
        "the rows of I; its inverse (flow.inv on I, transposed) is the declared second entry point; lifecycle "
        "checks on Householder(n, count_transforms=n)",
        requires="pyro",
    ),
)

for _a in NEW_ADAPTERS:
    ADAPTERS[_a.name] = _a

for _name in ("householder", "cayley", "matrix_exp"):
    ADAPTER_DECLARATIONS[f"torch-orthogonal-{_name}"] = make_declaration(module=_torch_module(_name))
for _triv in ("expm", "cayley"):
    ADAPTER_DECLARATIONS[f"geotorch-orthogonal-{_triv}"] = make_declaration(module=_geotorch_module(_triv))
ADAPTER_DECLARATIONS["pyro-householder-flow"] = make_declaration(
    also=_pyro_inverse, also_name="flow.inv(I)' (the inverse entry point)", module=_PyroModule
)


def _own() -> None:
    mods = _own_modules()
    for name, make in mods.items():
        ADAPTER_DECLARATIONS[name] = make_declaration(
            module=make, sigma=(0.0, 2.0) if name == "orthoverify-svd" else None
        )


_own()
