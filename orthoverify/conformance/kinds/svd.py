"""svd-parametrisation: W = Q(U) diag(sigma) Q(V)', svdRNN's parametrisation (Theorem 2)."""

from __future__ import annotations

from typing import Any

import numpy as np

from orthoverify import samples
from orthoverify.backends import Backend
from orthoverify.conformance.kinds.base import Kind, Params, lower_trapezoidal, square, tensors
from orthoverify.param import svd as sv

SIGMA_RANGE = (0.05, 1.95)
"""Where the checks draw singular values: inside svdRNN's default interval (sigma* - r, sigma* + r) = (0, 2)."""


def _reflections(b: Backend, u: Any) -> Any:
    """prod_j H(u_j) over the columns of u, the first column leftmost, with H(0) = I (svdRNN's eq. 1)."""
    n, m = u.shape
    w = b.eye(n)
    for j in range(m):
        w = w @ sv.reflector(u[:, j], n, backend=b)
    return w


def reference(p: Params, b: Backend) -> Any:
    """Q(U) diag(sigma) Q(V)' with Q(U) = H(u_1) ... H(u_m1) over the columns of U."""
    qu = _reflections(b, b.asarray(p["U"]))
    qv = _reflections(b, b.asarray(p["V"]))
    return (qu * b.asarray(p["sigma"])) @ qv.T


def draw(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
    u, v = lower_trapezoidal(rng, n, scale), lower_trapezoidal(rng, n, scale)
    return {"U": u, "V": v, "sigma": rng.uniform(*SIGMA_RANGE, size=n)}


def pack_columns(vectors: list[Any], n: int) -> np.ndarray:
    """Eq. 9's lower-trapezoidal block from ``[u_k, ..., u_n]`` (increasing length): column j
    holds u_{n-j} in its last n - j rows."""
    m = len(vectors)
    out = np.zeros((n, m))
    for j in range(m):
        out[j:, j] = np.asarray(vectors[m - 1 - j], dtype=float).reshape(-1)
    return out


def inverse(w: np.ndarray) -> dict[str, np.ndarray]:
    """U, V (m1 = m2 = n) and sigma with Q(U) diag(sigma) Q(V)' = W: Theorem 2 of the svdRNN paper
    through :func:`~orthoverify.param.svd.svd_parameters`."""
    res = sv.svd_parameters(w, backend="numpy-float64")
    n = w.shape[0]
    return {"U": pack_columns(res.us, n), "V": pack_columns(res.vs, n), "sigma": np.asarray(res.sigma, dtype=float)}


def coverage_targets(rng: np.random.Generator, n: int) -> list[tuple[str, np.ndarray]]:
    """Matrices with singular values inside SIGMA_RANGE: random, repeated, orthogonal, diagonal."""
    lo, hi = 0.1, 1.9
    q1, q2 = samples.haar_orthogonal(rng, n), samples.haar_orthogonal(rng, n)
    s = rng.uniform(lo, hi, size=n)
    rep = np.full(n, rng.uniform(lo, hi))
    rep[0] = lo
    return [
        ("random singular values", (q1 * s) @ q2.T),
        ("repeated singular values", (q2 * rep) @ q1.T),
        ("orthogonal (every sigma = 1)", q1 @ q2.T),
        ("diagonal, decreasing", np.diag(np.sort(s)[::-1])),
    ]


SVD_PARAMETRISATION = Kind(
    name="svd-parametrisation",
    signature="f(U: Tensor[n, m1], V: Tensor[n, m2], sigma: Tensor[n]) -> Tensor[n, n], 1 <= m1, m2 <= n",
    conventions=(
        "W = Q(U) diag(sigma) Q(V)' (svdRNN, eq. 3: M_{k1,k2} = H_n(u_n)...H_k1(u_k1) Sigma H_k2(v_k2)...H_n(v_n)) "
        "with Q(U) = H(u_1) ... H(u_m1) over the columns of U, the first column leftmost, H(u) = I - 2uu'/u'u and "
        "H(0) = I (eq. 1). U and V are lower trapezoidal as in eq. 9 (column j = the paper's u_{n-j}, zero above "
        "row j). sigma is taken as given (eq. 8's map from unconstrained s is the target's business); the checks "
        "draw sigma in (0.05, 1.95). Coverage: with m1 = m2 = n every n x n matrix is reached (Theorem 2)."
    ),
    draw=draw,
    args=tensors("U", "V", "sigma"),
    out_shape=square("U"),
    reference=reference,
    differentiable=("U", "V", "sigma"),
    inverse=inverse,
    orthogonal_output=False,
    tril=("U", "V"),
    scaled=("U", "V"),
    allowance="1 (products of reflections and a diagonal are backward stable)",
    coverage_targets=coverage_targets,
    coverage_statement="every n x n matrix with singular values in the drawn range is reached (Theorem 2)",
)
