"""Opening a target: started in a process of its own (:mod:`~orthoverify.conformance.isolate`),
its memory capped, and seen from the verifier through that process."""

from __future__ import annotations

import multiprocessing

from orthoverify import _limits
from orthoverify.conformance.adapters import ADAPTERS, load_target, resolve_kind
from orthoverify.conformance.calls import DEFAULT_TIMEOUT
from orthoverify.conformance.declare import apply as apply_declaration
from orthoverify.conformance.isolate import ProcessRunner, remote_declaration
from orthoverify.conformance.kinds import KINDS
from orthoverify.conformance.target import RemoteFn, Target
from orthoverify.conformance.wire import op_inverse


def open_target(
    spec: str,
    kind: str | None,
    device: str = "cpu",
    timeout: float = DEFAULT_TIMEOUT,
    memory_limit: int | str | None = "default",
) -> Target:
    """The target ``spec`` started in a process of its own (see :mod:`~orthoverify.conformance.isolate`)
    and seen from here: its calls go to that process (close it with ``t.runner.close()``), whose
    memory is capped (see :func:`memory_cap`). In a daemonic process, which may not start children
    (a Dask worker), it is loaded here instead."""
    kind_name = resolve_kind(spec, kind)
    if multiprocessing.current_process().daemon:  # a daemonic process (a Dask worker) may start none:
        return load_target(spec, kind_name)  # the target runs in this (worker) process, in a thread
    runner = ProcessRunner(spec, kind_name, device, memory_cap(memory_limit, device))
    hello = runner.start()
    domain = ADAPTERS[spec].domain if spec in ADAPTERS else None
    inverse = RemoteFn(runner, timeout, op_inverse) if hello.get("inverse") else None
    fn = RemoteFn(runner, timeout)
    if hello.get("declaration") is not None:  # plain data from the target's process, checked here; never imported
        fn.__orthoverify__ = remote_declaration(spec, hello["declaration"], runner, timeout)  # type: ignore[attr-defined]
    t = Target(spec, fn, KINDS[kind_name], str(hello.get("description") or ""), domain, inverse)
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


