"""The verifier's side of a call of the target: the wire codec, the operations by name, a
:class:`Runner` (how operations reach the target) and the judging of each raw answer here (its
outputs, the arguments as the call left them, what it did besides).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from orthoverify.conformance.calls import CallFailure
from orthoverify.conformance.wire import make_codec

STARTUP_TIMEOUT = 300.0
"""Seconds a fresh target process may take to import torch, warm up torch.func and load the target
(never charged to the per-call timeout)."""


FLOOD_BYTES = 1 << 20
"""Bytes a target may write to stdout/stderr over a whole run before that is a finding."""


KEEP_BYTES = 2000
"""Bytes of the target's stdout/stderr kept to show (the first ones)."""


RESTARTS_PER_CHECK = 3
"""Deaths and timeouts one check may cause before its remaining calls are not made (not run)."""


WARM_UP_TIMEOUT = STARTUP_TIMEOUT
"""Seconds the first call of each operation (and second-order mode) in a target's process may take:
its one-time cost (compilation, torch.func set-up of the operations it reaches) is not charged to
the per-call timeout. Granted only to a target that has already answered a call (one that answers
nothing is judged at the plain timeout), and once per operation: a first call that exceeds it is a
timeout, and that operation's later first calls (in restarted processes) get the plain timeout."""


# ------------------------------------------------------------------------------ wire format
encode, decode3, _raw = make_codec()
"""The verifier's codec (the target's process builds its own, see :mod:`~orthoverify.conformance.program`)."""


def decode(data: bytes) -> tuple[dict[str, Any], list[torch.Tensor | None]]:
    """The inverse of :func:`encode`; raises ValueError on anything malformed."""
    header, tensors, _devices = decode3(data)
    return header, tensors


# ------------------------------------------------------------------------------ operations
# Operations are named on the wire; the target's process answers them from the fixed table of
# program.make_ops, bound before the target is imported.
op_forward = "forward"
op_loss_grad = "loss_grad"
op_jvp = "jvp"
op_second = "second"
op_vmap = "vmap"
op_reach = "reach"
op_inverse = "inverse"
op_also = "also"
op_domain = "domain"
op_weight_decay = "weight_decay"
op_state_dict = "state_dict"
op_dtype_cast = "dtype_cast"
op_to_device = "to_device"


# ------------------------------------------------------------------------------ one call, judged here
def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return bool(torch.equal(a, b))


def _changed(sent: Sequence[torch.Tensor], after: Sequence[torch.Tensor | None]) -> list[str]:
    """The verifier's own comparison of the arguments it sent with those the call left behind."""
    changed = [i for i, a in enumerate(sent) if i >= len(after) or after[i] is None or not _same(a, after[i])]  # type: ignore[arg-type]
    return [f"mutates its input: argument {', '.join(map(str, changed))} changed by the call"] if changed else []


# ------------------------------------------------------------------------------ the verifier's side
@dataclass
class Reply:
    """What one operation gave: its output tensors (None for an output that was None)."""

    out: list[torch.Tensor | None]
    side: list[str] = field(default_factory=list)
    data: Any = None
    """JSON data an operation returned instead of tensors (a domain predicate's reason)."""
    devices: list[str | None] = field(default_factory=list)
    """The device each output was on where it was computed (it travels to the verifier's cpu)."""


@dataclass
class Observed:
    """What the target did besides computing, over a run: side effects (first occurrence of each),
    bytes written to stdout/stderr and the first of them, deaths and timeouts."""

    side: dict[str, str] = field(default_factory=dict)
    written: int = 0
    head: str = ""
    deaths: list[str] = field(default_factory=list)

    def add(self, reply: dict[str, Any], where: str) -> None:
        for s in reply.get("side", []):
            self.side.setdefault(str(s).split(":")[0], f"{s} ({where})")
        n = int(reply.get("written") or 0)
        self.written += n
        if n and len(self.head) < KEEP_BYTES:
            self.head += str(reply.get("head", ""))[: KEEP_BYTES - len(self.head)]


def warm_key(op: str, kw: dict[str, Any]) -> str:
    """What a first call warms: the operation, and for ``second`` its mode (each its own path)."""
    mode = kw.get("mode")
    return f"{op}:{mode}" if op == "second" and isinstance(mode, str) else op


class Runner:
    """Runs operations on a target and says what they gave. The first call of each operation in
    a process gets the warm-up allowance (:data:`WARM_UP_TIMEOUT`), see :meth:`allowance`."""

    observed: Observed
    isolated: bool = False
    warm: set[str]
    """Operations answered in the target's current process (emptied when it is started again)."""
    spent: set[str]
    """Operations whose first call exceeded the warm-up allowance (no second one)."""
    answered: bool = False
    """Whether the target has answered any call (a target that never answers gets no allowance)."""

    def allowance(self, key: str, timeout: float) -> tuple[float, bool]:
        """(seconds this call may take, whether that is the warm-up allowance)."""
        if self.answered and key not in self.warm and key not in self.spent and timeout < WARM_UP_TIMEOUT:
            return WARM_UP_TIMEOUT, True
        return timeout, False

    def settled(self, key: str, timed_out: bool, warming: bool) -> None:
        """Record how a call ended: answered (its operation is warm), or a timeout of a first call."""
        if timed_out:
            if warming:
                self.spent.add(key)
        else:
            self.warm.add(key)
            self.answered = True

    def request(
        self, op: str, tensors: Sequence[torch.Tensor], kw: dict[str, Any], timeout: float, device: str
    ) -> Reply | CallFailure:
        raise NotImplementedError

    def begin_check(self, name: str) -> None:
        """A new check starts: its own budget of restarts."""

    def close(self) -> None:
        """Stop the target's process, if any."""


def _failure_of(res: dict[str, Any]) -> CallFailure | None:
    if "error" in res:
        return CallFailure("raised", str(res["error"]))
    if "type" in res:
        return CallFailure("type", str(res["type"]))
    return None


def _reply(
    res: dict[str, Any], items: list[torch.Tensor | None], devices: list[str | None], sent: Sequence[torch.Tensor]
) -> tuple[Reply | CallFailure, dict[str, Any]]:
    """An operation's answer judged here: its outputs, then the arguments after the call, which
    the verifier compares with the ones it sent (a changed one is a side effect)."""
    n = res.get("n_out")
    n = n if isinstance(n, int) and 0 <= n <= len(items) else 0
    side = [str(x) for x in res.get("side", []) if isinstance(x, str)] if isinstance(res.get("side"), list) else []
    side += _changed(sent, items[n:])
    res = {**res, "side": side}
    fail = _failure_of(res)
    if fail is not None:
        return fail, res
    return Reply(list(items[:n]), side, res.get("json"), list(devices[:n])), res
