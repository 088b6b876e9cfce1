"""A target as the verifier sees it: the callable under test and what it declares
(:class:`Target`), its function and domain predicates reached through a runner
(:class:`RemoteFn`, :class:`RemotePredicate`), and how it fails (:class:`TargetFault`,
:class:`TargetLoadError`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from orthoverify.conformance.calls import DEFAULT_TIMEOUT, CallFailure
from orthoverify.conformance.kinds import Kind, Params
from orthoverify.conformance.runner import Runner
from orthoverify.conformance.wire import op_domain, op_forward
from orthoverify.errors import OrthoverifyError


class TargetLoadError(OrthoverifyError):
    """The target cannot be imported, found, or constructed (exit status 3)."""


@dataclass
class Target:
    """A callable under test and what it declares."""

    spec: str
    fn: Callable[..., Any]
    kind: Kind
    description: str = ""
    domain: Callable[[Params], str | None] | None = None
    """Why a parameter point lies outside the target's declared domain (None: inside)."""
    inverse: Callable[[torch.Tensor], torch.Tensor] | None = None
    """The target's own inverse map (a parametrisation's ``right_inverse``), for coverage."""
    runner: Runner | None = None
    """Where the target runs when it lives in a process of its own (``fn`` is then a :class:`RemoteFn`)."""


class TargetFault(RuntimeError):
    """A call of the target through :class:`RemoteFn` failed (raised, died, hung, returned no tensor)."""


class RemoteFn:
    """The target's function as the verifier's process sees it: each call is a forward operation
    in the target's process (no autograd across it)."""

    def __init__(self, runner: Runner, timeout: float = DEFAULT_TIMEOUT, op: str | None = None) -> None:
        self.runner, self.timeout, self.op = runner, timeout, op or op_forward

    def __call__(self, *args: torch.Tensor) -> torch.Tensor:
        dev = str(args[0].device) if args else "cpu"
        res = self.runner.request(self.op, [a.to("cpu") for a in args], {}, self.timeout, dev)
        if isinstance(res, CallFailure):
            raise TargetFault(str(res))
        out = res.out[0] if res.out else None
        if not isinstance(out, torch.Tensor):
            raise TargetFault("the target returned no tensor")
        return out


class RemotePredicate:
    """A domain predicate the target declares, as the verifier sees it: each point is sent to the
    target's process (:func:`op_domain`), where the predicate runs; a failure is a target fault."""

    def __init__(self, runner: Runner, timeout: float, index: int, name: str) -> None:
        self.runner, self.timeout, self.index, self.__name__ = runner, timeout, index, name

    def __call__(self, params: Any) -> str | None:
        keys = [str(k) for k in params]
        xs = [torch.as_tensor(np.asarray(params[k])) for k in keys]
        res = self.runner.request(op_domain, xs, {"keys": keys, "index": self.index}, self.timeout, "cpu")
        if isinstance(res, CallFailure):
            raise TargetFault(f"the declared domain predicate {self.__name__}: {res}")
        if res.data is not None and not isinstance(res.data, str):
            raise TargetFault(f"the declared domain predicate {self.__name__} sent no reason string")
        return res.data
