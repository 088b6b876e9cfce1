"""Building a target's function from modules: one module per (n, dtype, device) (:func:`_per_dtype`),
built in float64 (:func:`float64_default`), and a parametrised module as a target of kind
``orthogonal-map`` (:func:`module_target`), for the built-in adapters and for users' layers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch.nn.utils import parametrize

from orthoverify.isolation.calls import TargetLoadError
from orthoverify.isolation.declare import declare


def _per_dtype(make: Callable[[int, torch.dtype, str], Any]) -> Callable[[torch.Tensor], torch.Tensor]:
    """A map X -> module(X) with one module per (n, dtype, device), built by ``make`` after
    ``torch.manual_seed(0)`` (a library's parametrisation holds state such as a base point).
    The module is built outside any torch.func transform: its first call may come under ``jvp``
    (the first call a process started again gets), and building torch's orthogonal
    parametrisation there raises (it sets ``.data``)."""
    cache: dict[tuple[int, torch.dtype, str], Any] = {}

    def f(x: torch.Tensor) -> torch.Tensor:
        key = (x.shape[-1], x.dtype, str(x.device))
        if key not in cache:
            torch.manual_seed(0)
            with torch._C._DisableFuncTorch():
                cache[key] = make(*key)
        out: torch.Tensor = cache[key](x)
        return out

    return f


@contextmanager
def float64_default() -> Iterator[None]:
    """Build a library's module in float64 (an orthogonal base), to be cast afterwards: every dtype
    then parametrises the same map."""
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(default)


PROBE_N = 3
"""The size a module target is built at when it is loaded, to say at once whether it can be judged."""


def _weight_map(m: torch.nn.Module, what: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """X -> the weight the module's parametrisation computes from X in place of its original (the
    chain of parametrisations registered on ``weight``); raises ValueError saying why there is none."""
    if not isinstance(m, torch.nn.Module):
        raise ValueError(f"{what} is a {type(m).__name__}, not a torch.nn.Module")
    if not parametrize.is_parametrized(m, "weight"):
        raise ValueError(
            f"{what} has no parametrised weight (torch.nn.utils.parametrize): with a plain weight parameter no map "
            "takes parameters to an orthogonal weight; declare(module=...) on the map that computes it instead"
        )
    plist: Any = m.parametrizations
    plist = plist.weight
    chain, shape, w = list(plist), tuple(plist.original.shape), m.weight
    if len(shape) != 2 or shape[0] != shape[1] or not isinstance(w, torch.Tensor) or tuple(w.shape) != shape:
        raise ValueError(
            f"{what}: its parametrised original is {list(shape)} and its weight {list(getattr(w, 'shape', ()))}; a "
            "module target "
            "is judged as orthogonal-map, X (n x n) -> Q (n x n)"
        )

    def f(x: torch.Tensor) -> torch.Tensor:
        for p in chain:
            x = p(x)
        return x

    return f


def module_target(factory: Callable[[int], torch.nn.Module], name: str = "the module") -> Callable[..., torch.Tensor]:
    """A module factory (``n -> module``, or a module class whose constructor takes n) as a target of
    kind ``orthogonal-map``: X -> the module's weight with X in place of its parametrised original,
    one module per (n, dtype, device) built in float64 after ``torch.manual_seed(0)`` (as the
    built-in torch and geotorch adapters), declared with ``module=factory`` so the lifecycle checks
    run on it. Built once at n = PROBE_N here; a module that cannot be judged so raises
    :class:`~orthoverify.isolation.calls.TargetLoadError` saying why."""

    def make(n: int, dtype: torch.dtype, device: str) -> Callable[[torch.Tensor], torch.Tensor]:
        with float64_default():
            m = factory(n)
        return _weight_map(m.to(dtype=dtype, device=device) if isinstance(m, torch.nn.Module) else m, name)

    try:
        with torch.random.fork_rng(devices=[]):  # the caller's random state is left as it was
            torch.manual_seed(0)
            make(PROBE_N, torch.float64, "cpu")
    except ValueError as exc:
        raise TargetLoadError(str(exc)) from exc
    except Exception as exc:
        raise TargetLoadError(f"cannot build {name} at n = {PROBE_N}: {type(exc).__name__}: {exc}") from exc
    fn = _per_dtype(make)
    fn.__doc__ = f"{name}: its weight as a function of its parametrised original"
    return declare(module=factory)(fn)
