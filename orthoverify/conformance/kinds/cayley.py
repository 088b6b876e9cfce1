"""scaled-cayley: W = (I + A)^-1 (I - A) D, scoRNN's scaled Cayley transform."""

from __future__ import annotations

from typing import Any

import numpy as np

from orthoverify.backends import Backend
from orthoverify.conformance.kinds.base import Kind, Params, Points, square, tensors, tiny_huge
from orthoverify.param import cayley as cy


def draw(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
    a = np.triu(rng.standard_normal((n, n)), 1) * scale
    d = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return {"A": a - a.T, "d": d}


def reference(p: Params, b: Backend) -> Any:
    return cy.scaled_cayley(b.asarray(p["A"]), [int(x) for x in p["d"]], backend=b)


def condition(p: Params) -> float:
    """cond_2(I + A): the scaled Cayley transform is a solve with I + A, accurate to kappa eps."""
    n = p["A"].shape[0]
    return max(1.0, float(np.linalg.cond(np.eye(n) + p["A"])))


def inverse(q: np.ndarray) -> dict[str, np.ndarray]:
    res = cy.scaled_cayley_inverse(q, backend="numpy-float64")
    return {"A": np.asarray(res.a, dtype=float), "d": np.asarray(res.d, dtype=float)}


def specials(dtype: str) -> Points:
    """A = 0 with d = +-1, A with entries 1e3 (W near an eigenvalue -1), subnormal A; n = 2 to 4."""
    tiny, _huge = tiny_huge(dtype)
    r = np.random.default_rng(20240603)
    out: Points = []
    for n in (2, 3, 4):
        z = np.zeros((n, n))
        a = np.triu(r.standard_normal((n, n)), 1)
        out += [
            (f"A = 0, d = +1, n = {n}", {"A": z, "d": np.ones(n)}),
            (f"A = 0, d = -1, n = {n}", {"A": z, "d": -np.ones(n)}),
            (f"A with entries 1e3 (W near eigenvalue -1), n = {n}", {"A": (a - a.T) * 1e3, "d": np.ones(n)}),
            (f"subnormal A, n = {n}", {"A": (a - a.T) * tiny, "d": np.ones(n)}),
        ]
    return out


SCALED_CAYLEY = Kind(
    name="scaled-cayley",
    signature="f(A: Tensor[n, n], d: Tensor[n]) -> Tensor[n, n]",
    conventions=(
        "W = (I + A)^-1 (I - A) D with A skew-symmetric and D = diag(d), d_i in {+1, -1} (scoRNN, eq. 1): D "
        "multiplies on the right. A is given as the full skew matrix; d in the same dtype as A. Ratios are "
        "scaled by cond(I + A), the accuracy a backward-stable solve promises."
    ),
    draw=draw,
    args=tensors("A", "d"),
    out_shape=square("A"),
    reference=reference,
    differentiable=("A",),
    inverse=inverse,
    condition=condition,
    skew=("A",),
    allowance="cond_2(I + A) (the solve with I + A)",
    scaled=("A",),
    specials=specials,
)
