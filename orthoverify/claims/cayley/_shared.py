"""Vocabulary of the cayley family's claim files: symbolic skew matrices, random scalings D,
orthogonal inputs conjugated by a signed permutation, and the cases of a one-case check."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import sympy

from orthoverify.backends import Array, Backend
from orthoverify.claims._inputs import orthogonal_input
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.templates import Cases

NO_CHECK = math.inf  # skewness is exact by construction where this is passed


def skew_symbols(prefix: str, n: int) -> np.ndarray:
    """A skew-symmetric n x n object array of real symbols ``prefix{i}{j}`` above the diagonal."""
    a = np.full((n, n), sympy.Integer(0), dtype=object)
    for i in range(n):
        for j in range(i + 1, n):
            s = sympy.Symbol(f"{prefix}{i}{j}", real=True)
            a[i, j], a[j, i] = s, -s
    return a


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


def single(case: Case) -> Cases:
    """The cases of a check of one printed case (a worked example, a stated point)."""

    def cases(ctx: RunContext) -> Iterator[Case]:
        yield dict(case)

    return cases
