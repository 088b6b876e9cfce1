"""What several cayley claims share: norms as scales, symbolic skew matrices, random sign
vectors, conjugated orthogonal inputs, and the scoRNN configurations the experiments state."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import Array, Backend
from orthoverify.claims._inputs import orthogonal_input
from orthoverify.engine.checks import Case

NO_CHECK = math.inf  # skewness is exact by construction where this is passed


def fnorm(b: Backend, x: Array) -> float:
    """||x||_F as a float scale (1 in exact arithmetic, where nothing is scaled)."""
    return 1.0 if b.exact else b.to_float(b.norm(x))


def skew_symbols(prefix: str, n: int) -> np.ndarray:
    """A symbolic skew-symmetric n x n matrix with entries prefix{i}{j} above the diagonal."""
    a = np.full((n, n), sympy.Integer(0), dtype=object)
    for i in range(n):
        for j in range(i + 1, n):
            s = sympy.Symbol(f"{prefix}{i}{j}", real=True)
            a[i, j], a[j, i] = s, -s
    return a


def signs_case(rng: np.random.Generator, n: int) -> list[int]:
    return [int(s) for s in rng.choice([-1, 1], size=n)]


def conjugated(b: Backend, case: Case) -> Array:
    """The case's orthogonal input, conjugated by the signed permutation ``case["P"]`` if it has one."""
    w = orthogonal_input(b, case)
    if "P" in case:
        p = b.asarray(case["P"], name="P")
        return p @ w @ b.transpose(p)
    return w


def table_rows() -> list[dict[str, Any]]:
    """scoRNN configurations the experiments state: (task, n, inputs, outputs, printed total)."""
    return [
        {"row": "copying T=1000/2000 (Sec. 5.1)", "n": 190, "m": 10, "p": 9, "printed_k": 22},
        {"row": "adding (Sec. 5.2)", "n": 170, "m": 2, "p": 1, "printed_k": 14},
        {"row": "MNIST (Tables 1, 3)", "n": 170, "m": 1, "p": 10, "printed_k": 16},
        {"row": "MNIST (Tables 1, 3)", "n": 360, "m": 1, "p": 10, "printed_k": 69},
        {"row": "MNIST (Tables 1, 3)", "n": 512, "m": 1, "p": 10, "printed_k": 137},
        {"row": "TIMIT (Table 2)", "n": 224, "m": 129, "p": 129, "printed_k": 83},
        {"row": "TIMIT (Table 2)", "n": 322, "m": 129, "p": 129, "printed_k": 135},
        {"row": "TIMIT (Table 2)", "n": 425, "m": 129, "p": 129, "printed_k": 200},
    ]


def table_total(row: Mapping[str, Any], a_count: int) -> int:
    """A's weights + U (n x m) + modReLU bias (n) + V (p x n) + output bias (p)."""
    n, m, p = int(row["n"]), int(row["m"]), int(row["p"])
    return a_count + n * m + n + p * n + p
