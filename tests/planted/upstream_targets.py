"""Planted maps that inherit a float32-only defect from a torch operation (issue 27: blame in float32).

:func:`cayley_solve` and :func:`cayley_lu_solve` are the textbook Cayley map (I + A)^-1 (I - A)
of A = X - X', correct as written. Each first plants, in the target's own process, an upstream
defect in torch: ``aten::_linalg_solve_ex`` (behind ``torch.linalg.solve``) returns its solution
exactly but, in float32, the LU factors it saves for differentiation rounded through bfloat16
(error ~2^-9), so every derivative through ``linalg.solve`` in float32 (backward, forward mode,
second order) is off by 10^4 times float32's eps while the forward and float64 are exact.
``cayley_solve`` calls ``torch.linalg.solve``: wrong as executed in float32, and blame measures
``torch.linalg.solve`` as the cause (``lu_factor`` + ``lu_solve`` in its place makes the float32
checks pass). ``cayley_lu_solve`` is the measured workaround, the same map on ``lu_factor`` +
``lu_solve``: every check passes in the same patched process. The patch is made on the first call
only (never on import), so importing this module leaves torch alone.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

from tests.planted.conformance_targets import _batched, _cayley_lu, cayley_textbook

_PATCH: list[Any] = []
"""The library holding the planted kernel (kept alive: dropping it would undo the patch)."""


def _lossy_solve_ex(a: torch.Tensor, b: torch.Tensor, *, left: bool = True, check_errors: bool = False) -> Any:
    """``_linalg_solve_ex`` with an exact solution, and in float32 LU factors rounded through bfloat16."""
    lu, piv, info = torch.linalg.lu_factor_ex(a)
    x = torch.linalg.lu_solve(lu, piv, b, left=left)
    if a.dtype == torch.float32:
        lu = lu.to(torch.bfloat16).to(torch.float32)
    return x, lu, piv, info


def _plant() -> None:
    """Make torch's ``linalg.solve`` lossy in float32 derivatives, in this process (once)."""
    if _PATCH:
        return
    lib = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel": that is the point
        lib.impl("_linalg_solve_ex", _lossy_solve_ex, "CPU")
    _PATCH.append(lib)


def cayley_solve(x: torch.Tensor) -> torch.Tensor:
    """Correct as written, wrong as executed in float32: the textbook Cayley map through
    ``torch.linalg.solve``, whose float32 derivatives the planted upstream defect rounds."""
    _plant()
    return cayley_textbook(x)


@_batched
def _cayley_lu_batched(x: torch.Tensor) -> torch.Tensor:
    return _cayley_lu(x)


def cayley_lu_solve(x: torch.Tensor) -> torch.Tensor:
    """Correct, beside the same planted defect: the Cayley map on ``lu_factor`` + ``lu_solve`` (the
    workaround blame measures for :func:`cayley_solve`), which never reaches ``linalg.solve``."""
    _plant()
    return _cayley_lu_batched(x)
