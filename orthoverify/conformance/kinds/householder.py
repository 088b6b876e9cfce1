"""householder-product: Q = H(u_1) ... H(u_m) over the columns of a lower-trapezoidal U."""

from __future__ import annotations

from typing import Any

import numpy as np

from orthoverify.backends import Backend
from orthoverify.conformance.kinds.base import Kind, Params, Points, lower_trapezoidal, square, tensors, tiny_huge
from orthoverify.param import householder as hh


def reference(p: Params, b: Backend) -> Any:
    """prod_j (I - 2 u_j u_j' / u_j'u_j) over the columns of U, the first column leftmost."""
    u = b.asarray(p["U"])
    n, m = u.shape
    w = b.eye(n)
    for j in range(m):
        w = w @ hh.reflection(u[:, j], n, backend=b)
    return w


def inverse(q: np.ndarray) -> dict[str, np.ndarray]:
    """U (lower trapezoidal, m = n or n - 1) with prod_j H(u_j) = Q, from Theorem 1's vectors."""
    vectors = hh.inverse(q, backend="numpy-float64")
    n = q.shape[0]
    cols = [np.concatenate([np.zeros(n - len(v)), np.asarray(v, dtype=float)]) for v in reversed(vectors[1:])]
    if float(vectors[0][0]) < 0:  # H_1(-1) = diag(1, ..., 1, -1): the reflection along e_n
        cols.append(np.eye(n)[:, -1])
    return {"U": np.stack(cols, axis=1)}


def specials(dtype: str) -> Points:
    """+-I, unit pivots, one column e_n, two equal reflections (H(u) H(u) = I), subnormal and
    near-overflow columns; n = 2 to 4 (eq. 6's reflections need k >= 2)."""
    tiny, huge = tiny_huge(dtype)
    r = np.random.default_rng(20240602)
    out: list[tuple[str, np.ndarray]] = []
    for n in (2, 3, 4):
        g = np.tril(r.standard_normal((n, n)))
        g[np.diag_indices(n)] = np.where(np.diag(g) == 0, 1.0, np.diag(g))
        out += [
            (f"U = I, n = {n}", np.eye(n)),
            (f"U = -I, n = {n}", -np.eye(n)),
            (f"unit pivots +-1, n = {n}", np.tril(g, -1) + np.diag([(-1.0) ** i for i in range(n)])),
            (f"one column e_n (m = 1), n = {n}", np.eye(n)[:, -1:]),
            (f"two equal reflections (H(u) H(u) = I), n = {n}", np.stack([g[:, -1], g[:, -1]], axis=1)),
            (f"subnormal columns, n = {n}", g * tiny),
            (f"near-overflow columns, n = {n}", g * huge),
        ]
    return [(name, {"U": u}) for name, u in out]


HOUSEHOLDER_PRODUCT = Kind(
    name="householder-product",
    signature="f(U: Tensor[n, m]) -> Tensor[n, n], 1 <= m <= n",
    conventions=(
        "Q = H(u_1) H(u_2) ... H(u_m) with H(u) = I - 2 u u'/(u'u) and u_j column j of U, the first column "
        "leftmost (Q acts on column vectors: Q h applies H(u_m) first). U is lower trapezoidal as in eq. 9 of "
        "the Householder paper (entries above the diagonal are zero); every column is nonzero."
    ),
    draw=lambda rng, n, scale: {"U": lower_trapezoidal(rng, n, scale)},
    args=tensors("U"),
    out_shape=square("U"),
    reference=reference,
    differentiable=("U",),
    inverse=inverse,
    tril=("U",),
    allowance="1 (a product of reflections is backward stable at every scale of U)",
    scaled=("U",),
    specials=specials,
)
