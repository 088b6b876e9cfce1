"""Hostile targets (issue 26): each computes a wrong map, or does something a judge must report,
and tries to forge its verdict from inside its own process. ``tests/system/test_hostile_targets.py``
runs each through ``orthoverify validate`` with the outcome it must get.

These modules are loaded only in the target's process (``validate`` by name), where the attacks
act on that process's copy of orthoverify, torch and numpy."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tests.planted.conformance_targets import householder, householder_wrong_sign

_ARMED = [False]


def _forge_every_operation() -> None:
    """Rebind, in this process, everything the verifier's operations could be found by: the
    lookup of an operation by name (made to run every operation on the correct map), orthoverify's
    modules' attributes, and ``torch.Tensor``'s reading methods (made to halve what they read, so
    2Q reads as Q)."""
    iso: Any = sys.modules.get("orthoverify.isolation.isolate")
    resolve = getattr(iso, "resolve", None)
    if resolve is not None:  # operations looked up by name on each request: run them on the correct map

        def forged(name: str) -> Any:
            op = resolve(name)

            def run(t: Any, *args: Any, **kw: Any) -> Any:
                honest = dataclasses.replace(t, fn=householder) if dataclasses.is_dataclass(t) else t
                return op(honest, *args, **kw)

            return run

        iso.resolve = forged
        return
    numpy, detach, to = torch.Tensor.numpy, torch.Tensor.detach, torch.Tensor.to

    def half_numpy(self: torch.Tensor, *a: Any, **k: Any) -> Any:
        return numpy(self, *a, **k) / 2

    torch.Tensor.numpy = half_numpy  # type: ignore[method-assign]
    torch.Tensor.detach = lambda self: detach(self) / 2  # type: ignore[method-assign]
    torch.Tensor.to = lambda self, *a, **k: to(self, *a, **k) / 2  # type: ignore[method-assign]
    for name, module in list(sys.modules.items()):  # every operation orthoverify's modules name
        if name.startswith(("orthoverify.conformance", "orthoverify.isolation")) and module is not None:
            for attr in list(vars(module)):
                if attr.startswith(("op_", "make_")) or attr in ("encode", "execute", "_same", "OPS"):
                    setattr(module, attr, lambda *a, **k: None)


def rebinds_operations(u: torch.Tensor) -> torch.Tensor:
    """Broken: 2Q (twice the Householder product), and on its first call it rebinds the verifier's
    operations in its process so that what is read back looks like Q."""
    if not _ARMED[0]:
        _ARMED[0] = True
        _forge_every_operation()
    return 2 * householder(u)


class _Liar(torch.Tensor):
    """A tensor whose own reading methods lie: ``detach()`` and ``to()`` give itself back and
    ``numpy()`` gives the identity."""

    def detach(self) -> Any:  # type: ignore[override]
        return self

    def to(self, *a: Any, **k: Any) -> Any:  # type: ignore[override]
        return self

    def numpy(self, *a: Any, **k: Any) -> Any:  # type: ignore[override]
        return np.eye(self.shape[-1])


def lying_subclass(u: torch.Tensor) -> torch.Tensor:
    """Broken: 2Q, returned as a torch.Tensor subclass whose numpy() says the identity."""
    return (2 * householder(u)).as_subclass(_Liar)


_FIRST = [True]


def nan_on_first_call(u: torch.Tensor) -> torch.Tensor:
    """Broken: NaN on its process's first call, the correct Q on every later one."""
    out = householder(u)
    if _FIRST[0]:
        _FIRST[0] = False
        return out * float("nan")
    return out


def mutates_and_hides(u: torch.Tensor) -> torch.Tensor:
    """Broken: zeroes its argument in place, and rebinds the comparison that would see it."""
    iso: Any = sys.modules.get("orthoverify.isolation.runner")
    if iso is not None:
        iso._same = lambda a, b: True
        iso._changed = lambda sent, after: []
    out = householder(u.detach())
    with torch.no_grad():
        u.zero_()
    return out


WIRE_MARK = "wire-attacked"
"""A file in the working directory that says the wire attack was made (once per run, not per process)."""


def _wire_fds() -> list[int]:
    """This process's sockets: the connection to the verifier among them."""
    fds = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                fds.append(int(name))
        except OSError:
            pass
    return fds


def _on_the_wire(data: bytes) -> None:
    """Write ``data`` straight onto the connection to the verifier, ahead of the program's answer
    (once per run)."""
    mark = Path(WIRE_MARK)
    if mark.exists():
        return
    mark.touch()
    for fd in _wire_fds():
        with contextlib.suppress(OSError):
            os.write(fd, data)


def sends_a_partial_answer(u: torch.Tensor) -> torch.Tensor:
    """Broken: the negated reflection; on its first call it announces a 10 MB answer on the
    connection to the verifier, and sends only the program's answer after it."""
    _on_the_wire(struct.pack("!i", 10_000_000))
    return householder_wrong_sign(u)


def announces_an_endless_answer(u: torch.Tensor) -> torch.Tensor:
    """Broken: the negated reflection; on its first call it announces a 1 TB answer on the
    connection to the verifier (and sends 8 MiB of it)."""
    _on_the_wire(struct.pack("!i", -1) + struct.pack("!Q", 1 << 40) + bytes(8 << 20))
    return householder_wrong_sign(u)
