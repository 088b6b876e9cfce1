"""A target as the verifier holds it: the callable under test with its kind and what it declares
(:class:`Target`), loaded in this process (:func:`load_target`) or started in a process of its
own and seen through it (:func:`open_target`). Loading, the target's process and its containment
are :mod:`orthoverify.isolation`'s; the kind (its reference, its allowance) is added here."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch

from orthoverify import _limits
from orthoverify.conformance.kinds import KINDS, Kind, Params
from orthoverify.errors import OrthoverifyError
from orthoverify.isolation import adapters_libs  # noqa: F401  (registers the library adapters and declarations)
from orthoverify.isolation.adapters import ADAPTERS, load
from orthoverify.isolation.calls import DEFAULT_TIMEOUT, TargetLoadError
from orthoverify.isolation.declare import declaration_of
from orthoverify.isolation.isolate import ProcessRunner, remote_declaration
from orthoverify.isolation.runner import RemoteFn, Runner
from orthoverify.isolation.wire import op_inverse


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


def apply_declaration(target: Target) -> Target:
    """``target`` with its declared domain and right_inverse filled in where the loader found none."""
    d = declaration_of(target)
    if d is None:
        return target
    domain = target.domain
    if d.domain:
        own, declared = target.domain, d.domain_check()
        assert declared is not None

        def domain(p: Params) -> str | None:
            return (own(p) if own is not None else None) or declared(p)

    inverse = target.inverse if target.inverse is not None else d.right_inverse
    return replace(target, domain=domain, inverse=inverse)


def resolve_kind(spec: str, kind: str | None = None) -> str:
    """The kind of the target ``spec`` (checked without importing anything of the target's)."""
    if kind is not None and kind not in KINDS:
        raise OrthoverifyError(f"unknown kind {kind!r}; choose from {', '.join(KINDS)}")
    if spec in ADAPTERS:
        a = ADAPTERS[spec]
        if kind is not None and kind != a.kind:
            raise OrthoverifyError(f"adapter {spec} is of kind {a.kind}, not {kind}")
        return a.kind
    if ":" not in spec:
        raise TargetLoadError(
            f"target {spec!r} is neither a built-in adapter ({', '.join(ADAPTERS)}) nor module:attribute"
        )
    if kind is None:
        raise OrthoverifyError(f"target {spec} needs --kind (one of {', '.join(KINDS)})")
    return kind


def load_target(spec: str, kind: str | None = None) -> Target:
    """The target named by ``spec`` loaded in this process (:func:`orthoverify.isolation.adapters.load`),
    with its kind and its declaration applied. ``validate`` itself loads a target by name only in
    the target's own process (:func:`open_target`)."""
    kind = resolve_kind(spec, kind)
    got = load(spec, kind)
    return apply_declaration(Target(spec, got.fn, KINDS[kind], got.description, got.domain, got.inverse))


def open_target(
    spec: str,
    kind: str | None,
    device: str = "cpu",
    timeout: float = DEFAULT_TIMEOUT,
    memory_limit: int | str | None = "default",
) -> Target:
    """The target ``spec`` started in a process of its own (see :mod:`~orthoverify.isolation.isolate`)
    and seen from here: its calls go to that process (close it with ``t.runner.close()``), whose
    memory is capped (see :func:`memory_cap`); loading the target there may take ``timeout``
    seconds, as one call may. In a daemonic process, which may not start children
    (a Dask worker), it is loaded here instead."""
    kind_name = resolve_kind(spec, kind)
    if multiprocessing.current_process().daemon:  # a daemonic process (a Dask worker) may start none:
        return load_target(spec, kind_name)  # the target runs in this (worker) process, in a thread
    k = KINDS[kind_name]
    runner = ProcessRunner(spec, kind_name, device, memory_cap(memory_limit, device), k.complex_output, timeout)
    hello = runner.start()
    domain = ADAPTERS[spec].domain if spec in ADAPTERS else None
    inverse = RemoteFn(runner, timeout, op_inverse) if hello.get("inverse") else None
    fn = RemoteFn(runner, timeout)
    if hello.get("declaration") is not None:  # plain data from the target's process, checked here; never imported
        fn.__orthoverify__ = remote_declaration(spec, hello["declaration"], runner, timeout)  # type: ignore[attr-defined]
    t = Target(spec, fn, k, str(hello.get("description") or ""), domain, inverse)
    t.runner = runner
    return apply_declaration(t)


def memory_cap(memory_limit: int | str | None, device: str) -> int | None:
    """The cap on a target process's memory in bytes (None: none) from ``memory_limit``: a number
    of bytes, a size such as ``"4G"``, None or ``"none"`` for no cap, or ``"default"``:
    :data:`~orthoverify._limits.DEFAULT_MEMORY_LIMIT` on the CPU, none with CUDA (whose driver
    maps large host regions of its own). Raises InputError for anything else."""
    if memory_limit == "default":
        return None if device.startswith("cuda") else _limits.DEFAULT_MEMORY_LIMIT
    return _limits.memory_bytes(memory_limit, "memory_limit")
