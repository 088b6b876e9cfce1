"""Calling someone else's code safely: exceptions, hangs, wrong shapes, wrong dtypes and
non-finite output all become a :class:`CallFailure` with a message, never an exception that
reaches orthoverify's caller."""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

DEFAULT_TIMEOUT = 30.0
"""Seconds one call of a target may take before it counts as hung."""


@dataclass(frozen=True)
class CallFailure:
    """Why a call of the target produced no usable output."""

    kind: str  # "raised", "timeout", "died", "shape", "dtype", "non-finite", "type", "not-run"
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


def call(
    fn: Callable[..., Any],
    *args: Any,
    timeout: float = DEFAULT_TIMEOUT,
    shape: tuple[int, ...] | None = None,
    dtype: torch.dtype | None = None,
    finite: bool = True,
) -> torch.Tensor | CallFailure:
    """``fn(*args)`` in a worker thread with a timeout; the output checked for type, shape, dtype
    and finiteness. A hung call is abandoned (its thread is a daemon), not killed."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["out"] = fn(*args)
        except BaseException as exc:  # the target's own error, whatever it is
            box["exc"] = exc
            box["tb"] = traceback.format_exc(limit=4)

    t = threading.Thread(target=work, daemon=True, name="orthoverify-target-call")
    t.start()
    t.join(timeout)
    if t.is_alive():
        return CallFailure("timeout", f"no answer within {timeout:g} s")
    if "exc" in box:
        exc = box["exc"]
        return CallFailure("raised", f"{type(exc).__name__}: {exc}".strip()[:500])
    return checked(box.get("out"), shape=shape, dtype=dtype, finite=finite)


def checked(
    out: Any, *, shape: tuple[int, ...] | None = None, dtype: torch.dtype | None = None, finite: bool = True
) -> torch.Tensor | CallFailure:
    """``out`` when it is a tensor of the declared shape and dtype (finite where asked), else why not."""
    if not isinstance(out, torch.Tensor):
        return CallFailure("type", f"returned {type(out).__name__}, not a torch.Tensor")
    if shape is not None and tuple(out.shape) != tuple(shape):
        return CallFailure("shape", f"returned shape {tuple(out.shape)}, expected {tuple(shape)}")
    if dtype is not None and out.dtype != dtype:
        return CallFailure("dtype", f"returned dtype {out.dtype}, expected {dtype}")
    if finite and not bool(torch.isfinite(out.detach()).all()):
        bad = int((~torch.isfinite(out.detach())).sum())
        return CallFailure("non-finite", f"{bad} of {out.numel()} output entries are NaN or Inf")
    return out
