"""What the cayley family's claim files share: symbolic skew matrices, skew matrices of their free
entries, random scalings D, orthogonal inputs conjugated by a signed permutation, and the family's
effort per profile."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy

from orthoverify.backends import Array, Backend
from orthoverify.claims._inputs import orthogonal_input
from orthoverify.engine.checks import Case
from orthoverify.engine.templates import per_profile

NO_CHECK = math.inf  # skewness is exact by construction where this is passed


def skew_symbols(prefix: str, n: int) -> np.ndarray:
    """A skew-symmetric n x n object array of real symbols ``prefix{i}{j}`` above the diagonal."""
    a = np.full((n, n), sympy.Integer(0), dtype=object)
    for i in range(n):
        for j in range(i + 1, n):
            s = sympy.Symbol(f"{prefix}{i}{j}", real=True)
            a[i, j], a[j, i] = s, -s
    return a


def skew_of(b: Backend, p: Array) -> Array:
    """triu(P, 1) - triu(P, 1)': the skew matrix whose free entries are P's strict upper triangle
    (how a loss or a map is written in A's n(n-1)/2 trainable weights)."""
    up = b.triu(p, 1)
    return up - b.transpose(up)


def random_signs(rng: np.random.Generator, n: int) -> list[int]:
    """The diagonal of a random scaling D = diag(+-1)."""
    return [int(s) for s in rng.choice([-1, 1], size=n)]


def conjugated(b: Backend, case: Case) -> Array:
    """The case's orthogonal W, conjugated as P W P' when the case carries a signed permutation P."""
    w = orthogonal_input(b, case)
    if "P" in case:
        p = b.asarray(case["P"], name="P")
        return p @ w @ b.transpose(p)
    return w


@dataclass(frozen=True, kw_only=True)
class Effort:
    """What the checks that enumerate or run experiments beyond the profile's sizes do."""

    enumeration_max_n: int  # theorem3_1: every D at 50 digits up to this n (float64: 4 more)
    large_sizes: tuple[int, ...]  # theorem3_1: the inverse map in float also at these n
    drift_n: int  # orthogonality_drift: the size of the 10^4-step experiment
    reflection_max_n: int  # init: every D, exact characteristic polynomials, for n = 2..


effort = per_profile(
    quick=Effort(enumeration_max_n=5, large_sizes=(128, 512), drift_n=32, reflection_max_n=4),
    default=Effort(enumeration_max_n=8, large_sizes=(128, 256, 512), drift_n=64, reflection_max_n=5),
    thorough=Effort(enumeration_max_n=10, large_sizes=(128, 256, 512), drift_n=128, reflection_max_n=5),
)
