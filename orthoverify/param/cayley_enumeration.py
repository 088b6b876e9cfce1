"""Every scaling D of Theorem 3.1 (Kahan's scaled Cayley representation), enumerated: for an
orthogonal W, each admissible D (det D = det W) with the max|a_ij| of its A = (I + W D)^-1 (I - W D)
and log|det(I + W D)|. Analysis maths behind the claim cayley.theorem3_1 (2^(n-1) solves)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from orthoverify.backends import Array, Backend
from orthoverify.errors import SingularError

__all__ = ["admissible_signs", "every_scaling", "log_abs_det"]


def admissible_signs(n: int, det_sign: int) -> Iterator[tuple[int, ...]]:
    """Every D in {+-1}^n with det D = det_sign (the other half make I + W D singular, since an
    orthogonal W D of determinant -1 has the eigenvalue -1)."""
    for signs in itertools.product((1, -1), repeat=n):
        if math.prod(signs) == det_sign:
            yield signs


def _det_sign(b: Backend, w: Array) -> int:
    return 1 if np.linalg.det(b.to_numpy(w)) > 0 else -1


def every_scaling(b: Backend, w: Array) -> list[tuple[tuple[int, ...], float, float]]:
    """(D, max|a_ij|, log|det(I + W D)|) for every D of the right parity, each by its own solve."""
    n = w.shape[0]
    out = []
    eye = b.eye(n)
    for signs in admissible_signs(n, _det_sign(b, w)):
        wd = w * b.asarray([list(signs)])
        try:
            a = b.solve(eye + wd, eye - wd)
        except (SingularError, np.linalg.LinAlgError):
            out.append((signs, math.inf, -math.inf))
            continue
        out.append((signs, b.to_float(b.max_abs(a)), log_abs_det(b, eye + wd)))
    return out


def log_abs_det(b: Backend, x: Array) -> Any:
    """log|det x| in b's precision (an mpf at high precision, so near-ties are resolved there)."""
    if b.family == "mpmath":
        ctx = b.ctx  # type: ignore[attr-defined]
        det = ctx.det(ctx.matrix(x.tolist()))
        return ctx.log(abs(det)) if det != 0 else ctx.ninf
    sign, logdet = np.linalg.slogdet(b.to_numpy(x))
    return float(logdet) if sign != 0 else -math.inf
