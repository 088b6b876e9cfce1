"""The allowance of a computation judged by a test ratio: what a backward-stable evaluation of
condition number kappa promises in a dtype of unit roundoff eps, at size n.

A correct evaluation may be off by about n eps kappa (relative), so a ratio divides the error by
that; where ``THRESHOLD * n * eps * kappa >= 1`` the allowance itself exceeds the quantity's size
and no correct digit is promised: such a case is not judged (:func:`unpromised`), never a failure.
"""

from __future__ import annotations

import math

from orthoverify.engine.ratios import THRESHOLD, Measure


def beyond(kappa: float, eps: float, n: int) -> bool:
    """True where the allowance promises no correct digit (30 n eps kappa >= 1): nothing to judge."""
    return not (THRESHOLD * n * eps * kappa < 1.0)


def unpromised(kappa: float, eps: float, n: int) -> Measure | None:
    """The case's measure when the allowance promises no digit there (status ``"beyond"``, not
    judged); None where it is judged."""
    if beyond(kappa, eps, n):
        return Measure(math.nan, f"kappa = {kappa:.3g}: no digit promised", status="beyond")
    return None


def kappa_text(kappa: float) -> str:
    """The allowance's kappa as a ratio's statement writes it after ``n eps`` ("" for kappa = 1)."""
    return f" kappa, kappa = {kappa:.3g}" if kappa != 1.0 else ""


__all__ = ["beyond", "kappa_text", "unpromised"]
