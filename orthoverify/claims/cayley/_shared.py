"""Vocabulary of the cayley family's claim files: symbolic skew matrices, random scalings D,
orthogonal inputs conjugated by a signed permutation, and symbolic identities as an Agreement."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import Array, Backend
from orthoverify.claims._inputs import orthogonal_input
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.templates import Agreement, Cases

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


Sides = Callable[[int], Sequence[tuple[str, Any, Any]]]
"""The identities of a claim for size n in free symbols: (label, left side, right side) each."""


def symbolic_identities(sides: Sides) -> tuple[Agreement, Cases]:
    """An Agreement of each identity's two sides, and its cases (one per identity and symbolic
    size, labelled); the sides are built once per n and shared by both formulations."""
    cached = functools.lru_cache(maxsize=4)(sides)

    def left(b: Backend, case: Case) -> Any:
        return cached(int(case["n"]))[int(case["k"])][1]

    def right(b: Backend, case: Case) -> Any:
        return cached(int(case["n"]))[int(case["k"])][2]

    def cases(ctx: RunContext) -> Iterator[Case]:
        for n in ctx.profile.symbolic_sizes:
            for k, (label, _, _) in enumerate(cached(n)):
                yield {"label": label, "n": n, "k": k}

    return Agreement(left, right, "exact difference"), cases


def single(case: Case) -> Cases:
    """The cases of a check of one printed case (a worked example, a stated point)."""

    def cases(ctx: RunContext) -> Iterator[Case]:
        yield dict(case)

    return cases
