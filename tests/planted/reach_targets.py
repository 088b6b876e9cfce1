"""Planted targets for the checks of modes, declarations and the module's life in training: a
correct one for each check, and ones broken in exactly one way that one check names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.nn.utils import parametrize

from orthoverify.conformance.declare import declare
from orthoverify.conformance.lifecycle import module_target
from tests.planted.conformance_targets import householder, reflections


# ------------------------------------------------------------------------------ second order
class _FlatSecondOrder(torch.autograd.Function):
    """prod_j H(u_j) with first-order rules computed at a detached copy of U: value, vjp and jvp
    are right, but they are constants to the next level of differentiation (second derivative 0)."""

    @staticmethod
    def forward(u: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return householder(u)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[torch.Tensor, ...], output: torch.Tensor) -> None:
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        (u,) = ctx.saved_tensors
        return torch.func.vjp(householder, u.detach())[1](g.detach())[0]

    @staticmethod
    def jvp(ctx: Any, du: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        (u,) = ctx.saved_tensors
        return torch.func.jvp(householder, (u.detach(),), (du.detach(),))[1]


def householder_flat_second_order(u: torch.Tensor) -> torch.Tensor:
    """Broken second-order rule (first order correct)."""
    if u.dim() > 2:
        return torch.stack([householder_flat_second_order(x) for x in u])
    out: torch.Tensor = _FlatSecondOrder.apply(u)  # type: ignore[no-untyped-call]
    return out


# ------------------------------------------------------------------------------ vmap
@declare(modes=["vmap"])
def householder_vmap(u: torch.Tensor) -> torch.Tensor:
    """Correct, and declares that torch.func.vmap runs it."""
    return householder(u)


class _RolledVmap(torch.autograd.Function):
    """prod_j H(u_j) (reverse-mode derivatives of every order right; no forward-mode rule) with a
    batching rule that hands member i the output of member i - 1."""

    generate_vmap_rule = False

    @staticmethod
    def forward(u: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return householder(u)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[torch.Tensor, ...], output: torch.Tensor) -> None:
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        (u,) = ctx.saved_tensors
        return torch.func.vjp(householder, u)[1](g)[0]

    @staticmethod
    def vmap(info: Any, in_dims: tuple[int | None], u: torch.Tensor) -> tuple[torch.Tensor, int]:  # type: ignore[override]
        ub = u.movedim(in_dims[0], 0) if in_dims[0] is not None else u.expand(info.batch_size, *u.shape)
        return householder(ub).roll(1, dims=0), 0


@declare(modes=["vmap"])
def householder_vmap_mixes_batch(u: torch.Tensor) -> torch.Tensor:
    """Broken batching rule (single calls correct)."""
    out: torch.Tensor = _RolledVmap.apply(u)  # type: ignore[no-untyped-call]
    return out


# ------------------------------------------------------------------------------ half precision
@declare(dtypes=["float16", "bfloat16"])
def householder_half(u: torch.Tensor) -> torch.Tensor:
    """Correct, and declares float16 and bfloat16."""
    return householder(u)


@declare(dtypes=["float16"])
def householder_half_documented_only(u: torch.Tensor) -> torch.Tensor:
    """Broken: declares float16 but refuses it (half precision documented, unsupported)."""
    if u.dtype == torch.float16:
        raise TypeError("float16 is not supported")
    return householder(u)


# ------------------------------------------------------------------------------ entry points
def _transposed(u: torch.Tensor) -> torch.Tensor:
    return householder(u).transpose(-1, -2)


def _applied(u: torch.Tensor) -> torch.Tensor:
    """The same matrix by a second route: the reflections applied one by one to the columns of I."""
    if u.dim() > 2:
        return torch.stack([_applied(x) for x in u])
    y = torch.eye(u.shape[0], dtype=u.dtype, device=u.device)
    for j in reversed(range(u.shape[1])):
        col = torch.tril(u)[:, j]
        y = y - 2 * torch.outer(col, col @ y) / (col @ col)
    return y


@declare(also=_applied, also_name="forward(I)")
def flow_matrix(u: torch.Tensor) -> torch.Tensor:
    """Correct: matrix() and forward(I) agree."""
    return householder(u)


@declare(also=_transposed, also_name="forward(I)")
def flow_matrix_transposed_forward(u: torch.Tensor) -> torch.Tensor:
    """Broken: forward(x) applies W' while matrix() returns W."""
    return householder(u)


# ------------------------------------------------------------------------------ modules
class Reflections(torch.nn.Module):
    """Correct: W = base H(x_1) ... H(x_n) over the columns of tril(X) (orthogonal for every X, and
    unchanged when X is scaled), base a fixed random orthogonal buffer (persistent)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.register_buffer("base", torch.linalg.qr(torch.randn(n, n)).Q)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        base: torch.Tensor = self.base
        return base @ householder(x)


class ReflectionsBaseNotSaved(Reflections):
    """Broken: the base is a non-persistent buffer, so state_dict loses it (a reloaded module
    computes another weight from the same X)."""

    def __init__(self, n: int) -> None:
        torch.nn.Module.__init__(self)
        self.register_buffer("base", torch.linalg.qr(torch.randn(n, n)).Q, persistent=False)


class ReflectionsPlainAttribute(Reflections):
    """Broken: the signs D are a plain tensor attribute (not a buffer), built in the default dtype,
    so .double() leaves them float32 and W @ diag(d) fails."""

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self.d = torch.ones(n)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x) @ torch.diag(self.d)


class ReflectionsIntegerSigns(Reflections):
    """Broken like torch's householder map: W = base Q(X) diag(int(d)) with d a trained
    parameter initialised to +-1; weight decay pulls |d_i| below 1 and int() makes it 0."""

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self.d = torch.nn.Parameter(torch.where(torch.rand(n) < 0.5, -1.0, 1.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        signs = self.d.int().to(x.dtype) + 0 * self.d  # no gradient to d, but weight decay reaches it
        return super().forward(x) * signs


def _module(cls: type[Reflections]) -> Callable[[int], torch.nn.Module]:
    def make(n: int) -> torch.nn.Module:
        layer = torch.nn.Linear(n, n, bias=False)
        parametrize.register_parametrization(layer, "weight", cls(n), unsafe=True)
        return layer

    return make


def _map(cls: type[Reflections]) -> Callable[[torch.Tensor], torch.Tensor]:
    """X -> cls(n)(X): one module per (n, dtype), built with that dtype as the default (seed 0)."""
    cache: dict[tuple[int, torch.dtype], torch.nn.Module] = {}

    def f(x: torch.Tensor) -> torch.Tensor:
        key = (x.shape[-1], x.dtype)
        if key not in cache:
            default = torch.get_default_dtype()
            torch.set_default_dtype(x.dtype)
            try:
                torch.manual_seed(0)
                cache[key] = cls(x.shape[-1])
            finally:
                torch.set_default_dtype(default)
        if x.dim() > 2:
            return torch.stack([f(xi) for xi in x])
        out: torch.Tensor = cache[key](x)
        return out

    return f


reflections_module = declare(module=_module(Reflections))(_map(Reflections))
reflections_module_base_not_saved = declare(module=_module(ReflectionsBaseNotSaved))(_map(ReflectionsBaseNotSaved))
reflections_module_plain_attribute = declare(module=_module(ReflectionsPlainAttribute))(_map(ReflectionsPlainAttribute))
reflections_module_integer_signs = declare(module=_module(ReflectionsIntegerSigns))(_map(ReflectionsIntegerSigns))


# ------------------------------------------------------------------------------ a module as the target
class NonzeroReflections(torch.nn.Module):
    """The planted correct map tests.planted.conformance_targets.reflections (prod_j H(u_j) over the nonzero
    columns of tril(X)) as a parametrisation."""

    def __init__(self, n: int) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return reflections(x)


class NonzeroReflectionsIntegerSigns(NonzeroReflections):
    """Broken like torch's householder map (see ReflectionsIntegerSigns): W = Q(X) diag(int(d))."""

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self.d = torch.nn.Parameter(torch.where(torch.rand(n) < 0.5, -1.0, 1.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return reflections(x) * (self.d.int().to(x.dtype) + 0 * self.d)


class ReflectionsLayer(torch.nn.Linear):
    """Correct: a layer of size n whose class is the target (its constructor takes n): the weight
    is NonzeroReflections of its parametrised original."""

    def __init__(self, n: int, param: type[NonzeroReflections] = NonzeroReflections) -> None:
        super().__init__(n, n, bias=False)
        parametrize.register_parametrization(self, "weight", param(n), unsafe=True)


class ReflectionsLayerIntegerSigns(ReflectionsLayer):
    """Broken: degenerates under weight decay (the signs' int() becomes 0)."""

    def __init__(self, n: int) -> None:
        super().__init__(n, NonzeroReflectionsIntegerSigns)


class PlainOrthogonalInit(torch.nn.Linear):
    """Not a module target: an orthogonal initialisation of a plain weight parameter."""

    def __init__(self, n: int) -> None:
        super().__init__(n, n, bias=False)
        torch.nn.init.orthogonal_(self.weight)


def _torch_cayley_layer(n: int) -> torch.nn.Module:
    return torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(n, n, bias=False), orthogonal_map="cayley")


torch_cayley_layer = module_target(_torch_cayley_layer, "orthogonal(nn.Linear(n, n), orthogonal_map='cayley')")
"""A factory as the target: torch's Cayley parametrisation, as the built-in adapter torch-orthogonal-cayley
wraps it (here built in float64, so its base point differs)."""

with torch.random.fork_rng(devices=[]):  # importing this module leaves the global random state alone
    reflections_layer_instance = ReflectionsLayer(3)
    """Not a target: one layer of one size (its class is)."""


# ------------------------------------------------------------------------------ batches
@declare(batches=True)
def householder_batches_declared_refused(u: torch.Tensor) -> torch.Tensor:
    """Broken: declares batches, refuses a stacked U."""
    if u.dim() > 2:
        raise ValueError("one U at a time")
    return householder(u)


@declare(batches=False)
def householder_one_at_a_time(u: torch.Tensor) -> torch.Tensor:
    """Correct: declares that it takes one U at a time."""
    return householder_batches_declared_refused(u)
