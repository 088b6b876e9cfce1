"""How a target fails: what a call of it gave back, a :class:`CallFailure` with a message (the
target raised, hung, died, or returned the wrong type, shape or dtype, or non-finite values) or a
checked output (:func:`checked`), never an exception that reaches orthoverify's caller; a target
that cannot be loaded (:class:`TargetLoadError`), and a call through a stand-in that failed
(:class:`TargetFault`). The call itself is made where the target runs
(:mod:`~orthoverify.isolation.runner`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from orthoverify.errors import OrthoverifyError

DEFAULT_TIMEOUT = 30.0
"""Seconds one call of a target may take before it counts as hung."""


class TargetLoadError(OrthoverifyError):
    """The target cannot be imported, found, or constructed (exit status 3)."""


class TargetFault(RuntimeError):
    """A call of the target through :class:`~orthoverify.isolation.runner.RemoteFn` failed (raised,
    died, hung, returned no tensor)."""


@dataclass(frozen=True)
class CallFailure:
    """Why a call of the target produced no usable output."""

    kind: str  # "raised", "timeout", "died", "shape", "dtype", "non-finite", "type", "not-run"
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


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
