"""The verifier's side of a call of the target: a :class:`Runner` (how operations, declared in
:data:`~orthoverify.isolation.wire.OPERATIONS`, reach the target), the judging of each raw
answer here (its outputs, the arguments as the call left them, what it did besides), and the
target's code as the verifier's process sees it: its function and its domain predicates reached
through a runner (:class:`RemoteFn`, :class:`RemotePredicate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from orthoverify._limits import LOAD_FLOOR_SECONDS
from orthoverify.isolation.calls import DEFAULT_TIMEOUT, CallFailure, TargetFault
from orthoverify.isolation.wire import check_request, make_codec, op_domain, op_forward

STARTUP_TIMEOUT = 300.0
"""Seconds a fresh target process may take to start: import torch and warm up torch.func (no code
of the target's runs in it; never charged to the per-call timeout)."""


def load_allowance(timeout: float) -> float:
    """Seconds loading a target (importing its module, building it) may take when one call of it
    may take ``timeout``: the longer of ``timeout`` and :data:`~orthoverify._limits.LOAD_FLOOR_SECONDS`."""
    return max(timeout, LOAD_FLOOR_SECONDS)


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


encode, decode, _raw = make_codec()
"""The verifier's codec (the target's process builds its own, see :mod:`~orthoverify.isolation.program`)."""


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
    """Runs operations on a target and says what they gave: :meth:`request` checks the request,
    sends copies, judges the raw answer here; a subclass says how an operation reaches the target
    (:meth:`_exchange`). The first call of each operation in a process gets the warm-up allowance
    (:data:`WARM_UP_TIMEOUT`), see :meth:`allowance`."""

    observed: Observed
    isolated: bool = False
    check: str = ""
    """The check being run (where a side effect is seen; "": the operation's name says it)."""
    warm: set[str]
    """Operations answered in the target's current process (emptied when it is started again)."""
    spent: set[str]
    """Operations whose first call exceeded the warm-up allowance (no second one)."""
    answered: bool = False
    """Whether the target has answered any call (a target that never answers gets no allowance)."""

    def __init__(self) -> None:
        self.observed, self.warm, self.spent = Observed(), set(), set()
        self.primers: dict[str, tuple[str, list[torch.Tensor], dict[str, Any], str]] = {}
        """The first call of each operation the target answered (what warms it in a new process)."""

    def allowance(self, key: str, timeout: float) -> tuple[float, bool]:
        """(seconds this call may take, whether that is the warm-up allowance)."""
        if self.answered and key not in self.warm and key not in self.spent and timeout < WARM_UP_TIMEOUT:
            return WARM_UP_TIMEOUT, True
        return timeout, False

    def request(
        self, op: str, tensors: Sequence[torch.Tensor], kw: dict[str, Any], timeout: float, device: str
    ) -> Reply | CallFailure:
        """The operation ``op`` on copies of ``tensors`` (on ``device`` where the target runs), its
        answer judged here; ValueError for a request :data:`~orthoverify.isolation.wire.OPERATIONS`
        does not declare (the verifier's mistake, never charged to the target)."""
        check_request(op, kw)
        sent = [x.detach().clone().cpu() for x in tensors]
        key = warm_key(op, kw)
        fail = self._ready(key)
        if fail is not None:
            return fail
        limit, warming = self.allowance(key, timeout)
        got = self._exchange(op, sent, kw, device, limit, self.check or op)
        if isinstance(got, CallFailure):
            if got.kind == "timeout" and warming:
                self.spent.add(key)
                return CallFailure("timeout", f"{got.message}; it was the first call, given the warm-up allowance")
            return got
        self.warm.add(key)
        self.answered = True
        reply, res = _reply(*got, sent)
        self.observed.add(res, self.check or op)
        if isinstance(reply, CallFailure):
            return self._memory_note(reply)
        self.primers.setdefault(key, (op, sent, dict(kw), device))
        return reply

    def _ready(self, key: str) -> CallFailure | None:
        """Why no call can be made now (None: it can), the operation ``key`` warmed where needed."""
        return None

    def _exchange(
        self, op: str, sent: list[torch.Tensor], kw: dict[str, Any], device: str, limit: float, where: str
    ) -> tuple[dict[str, Any], list[torch.Tensor | None], list[str | None]] | CallFailure:
        """One operation made where the target runs, its raw answer decoded (or why there is none)."""
        raise NotImplementedError

    def _memory_note(self, fail: CallFailure) -> CallFailure:
        return fail

    def begin_check(self, name: str) -> None:
        """A new check starts: its own budget of restarts."""

    def close(self) -> None:
        """Stop the target's process, if any."""


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
    if "error" in res:
        return CallFailure("raised", str(res["error"])), res
    if "type" in res:
        return CallFailure("type", str(res["type"])), res
    return Reply(list(items[:n]), side, res.get("json"), list(devices[:n])), res


# ------------------------------------------------------------------------------ the target's code, seen from here
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
    target's process (:data:`~orthoverify.isolation.wire.op_domain`), where the predicate runs; a
    failure is a target fault."""

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
