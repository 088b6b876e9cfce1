"""orthogonal-map: a map from an unconstrained real X to an orthogonal matrix, formula unknown."""

from __future__ import annotations

import math

import numpy as np

from orthoverify.conformance.kinds.base import Kind, Params, Points, square, tensors, tiny_huge


def draw(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
    return {"X": rng.standard_normal((n, n)) * scale}


def free_map_condition(p: Params) -> float:
    """1 + 2 ||X||_F: an upper bound of cond_2(I + A) = sqrt(1 + ||A||_2^2) for the skew part A a
    Cayley map takes from X (X - X', or tril(X, -1) - tril(X, -1)', either has ||A||_2 <= 2 ||X||_F),
    and of the error growth ||A|| of a scaling-and-squaring exponential. A map of unknown formula is
    held to this: an error that grows faster with ||X|| than conditioning explains is refuted."""
    x = np.asarray(p["X"], dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        v = 1.0 + 2.0 * float(np.linalg.norm(x))
    return v if math.isfinite(v) else math.inf


def specials(dtype: str) -> Points:
    """Zero, +-I and +-1 diagonals, zero columns and rows, an eigenvalue -1 of a Cayley map's Q,
    rank one and orthogonal X (repeated singular values), subnormal and near-overflow X; n = 1 to 4."""
    tiny, huge = tiny_huge(dtype)
    r = np.random.default_rng(20240601)
    out: list[tuple[str, np.ndarray]] = []
    for n in (1, 2, 3, 4):
        g = r.standard_normal((n, n))
        out += [
            (f"zero X, n = {n}", np.zeros((n, n))),
            (f"X = I, n = {n}", np.eye(n)),
            (f"X = -I, n = {n}", -np.eye(n)),
        ]
        out.append((f"diagonal +-1, n = {n}", np.diag([(-1.0) ** i for i in range(n)])))
        if n >= 2:
            zc, zl, zr = g.copy(), g.copy(), g.copy()
            zc[:, 0], zl[:, -1], zr[1, :] = 0.0, 0.0, 0.0
            rot, up = np.zeros((n, n)), np.zeros((n, n))
            rot[0, 1], rot[1, 0] = np.pi / 2, -np.pi / 2
            up[1, 0] = np.pi
            out += [
                (f"zero first column, n = {n}", zc),
                (f"zero last column, n = {n}", zl),
                (f"zero second row, n = {n}", zr),
                (f"X - X' with eigenvalues +-i pi (Q has eigenvalue -1), n = {n}", rot),
                (f"one entry pi below the diagonal, n = {n}", up),
                (f"rank one (repeated singular value 0), n = {n}", np.outer(g[:, 0], g[0])),
                (f"orthogonal X (repeated singular value 1), n = {n}", np.linalg.qr(g)[0]),
            ]
        out += [(f"subnormal X, n = {n}", g * tiny), (f"near-overflow X, n = {n}", g * huge)]
    return [(name, {"X": x}) for name, x in out]


ORTHOGONAL_MAP = Kind(
    name="orthogonal-map",
    signature="f(X: Tensor[n, n]) -> Tensor[n, n]",
    conventions=(
        "X is an unconstrained real parameter (any finite values, as training can reach); the output must be "
        "orthogonal for every X. No formula is fixed, so there is no forward reference: the checks are "
        "orthogonality over the whole domain, gradients against finite differences of the target itself, "
        "coverage of O(n) by optimisation (which of det +1 and det -1 is reached), batches, dtypes, determinism."
    ),
    draw=draw,
    args=tensors("X"),
    out_shape=square("X"),
    reference=None,
    differentiable=("X",),
    condition=free_map_condition,
    allowance="1 + 2||X||_F (bounds cond(I + A) of a Cayley map and the growth ||A|| of an exponential)",
    scaled=("X",),
    coverage_by_optimisation=True,
    specials=specials,
)
