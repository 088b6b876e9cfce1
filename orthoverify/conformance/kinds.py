"""What a target may claim to compute: each kind's signature, conventions, domain and reference.

A target of kind K is a callable taking torch tensors as the kind's signature says. Parameters
are drawn as float64 NumPy arrays (``Params``), turned into tensors of the dtype under test by
:meth:`Kind.args`; the reference evaluates the same parameters with orthoverify's own
implementation on any backend (float64, or 50 digits for finite differences).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from orthoverify import samples
from orthoverify.backends import Backend
from orthoverify.param import cayley as cy
from orthoverify.param import householder as hh
from orthoverify.param import svd as sv
from orthoverify.param import unitary as un

Params = Mapping[str, np.ndarray]


@dataclass(frozen=True)
class Kind:
    """A conformance kind: how to call a target, what it must return, and the reference."""

    name: str
    signature: str
    conventions: str
    draw: Callable[[np.random.Generator, int, float], dict[str, np.ndarray]]
    """Parameters of size n at magnitude scale (a random point of the declared domain)."""
    args: Callable[[Params, torch.dtype, str], tuple[Any, ...]]
    out_shape: Callable[[Params], tuple[int, ...]]
    reference: Callable[[Params, Backend], Any] | None
    """The output computed by orthoverify on a backend (None: the kind fixes no formula)."""
    differentiable: tuple[str, ...]
    """Parameters the gradient check differentiates with respect to."""
    inverse: Callable[[np.ndarray], dict[str, np.ndarray] | None] | None = None
    """Parameters that give a target matrix (the reference inverse map), for coverage."""
    sizes: tuple[int, ...] = (2, 3, 4, 6)
    orthogonal_output: bool = True
    """Every parameter value of the domain must give an orthogonal output."""
    condition: Callable[[Params], float] | None = None
    """The condition number that scales forward and orthogonality ratios (LAPACK's solve ratio
    ||x - x*|| / (n eps kappa ||x||)): the accuracy any backward-stable algorithm can promise."""
    allowance: str = "1 (a backward-stable evaluation is accurate to a modest multiple of n eps)"
    """What ``condition`` is, as the evidence states it: the error a correct evaluation may have."""
    scaled: tuple[str, ...] = ()
    """Parameters the magnitude of a draw applies to (the search scales and shrinks these only)."""
    ordinary: tuple[float, float] = (1e-8, 1e8)
    """The ordinary domain: magnitudes max|x_ij| of the scaled parameters that a trained model
    reaches (zero included). A failure only outside it (subnormal or near-overflow parameters) is
    "fragile", a lower finding than "refuted"; the shrinker moves a counterexample towards
    magnitude 1, never further out."""
    tril: tuple[str, ...] = ()
    """Parameters read on eq. 9's lower-trapezoidal pattern (entries above the diagonal are not
    parameters: gradients and tangents there are not compared)."""
    skew: tuple[str, ...] = ()
    """Skew-symmetric parameters: a_ij and a_ji = -a_ij move together (finite differences along
    a_ij - a_ji, skew tangents), and only the skew part of a gradient is defined."""
    complex_output: bool = False
    """The target returns a complex n x n matrix; checks compare its real 2n x 2n block form
    [[Re W, -Im W], [Im W, Re W]] (orthogonal exactly when W is unitary)."""
    coverage_targets: Callable[[np.random.Generator, int], list[tuple[str, np.ndarray]]] | None = None
    """Matrices of the set the kind claims to cover (None: O(n), both determinants)."""
    coverage_statement: str = "every orthogonal matrix is reached"

    def out_dtype(self, dtype: torch.dtype) -> torch.dtype:
        if self.complex_output:
            return torch.complex64 if dtype == torch.float32 else torch.complex128
        return dtype

    def view_shape(self, p: Params) -> tuple[int, ...]:
        """Shape of the output as the checks compare it (the real block form of a complex output)."""
        shape = self.out_shape(p)
        return tuple(2 * s for s in shape) if self.complex_output else shape

    def view(self, out: torch.Tensor) -> torch.Tensor:
        """The output as the checks compare it: real, the block form of a complex W."""
        if not self.complex_output:
            return out
        re, im = out.real, out.imag
        return torch.cat([torch.cat([re, -im], dim=-1), torch.cat([im, re], dim=-1)], dim=-2)


def _t(x: np.ndarray, dtype: torch.dtype, device: str) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x, dtype=np.float64), dtype=dtype, device=device)


# ------------------------------------------------------------------------------ orthogonal-map
def _draw_free(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
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


ORTHOGONAL_MAP = Kind(
    name="orthogonal-map",
    signature="f(X: Tensor[n, n]) -> Tensor[n, n]",
    conventions=(
        "X is an unconstrained real parameter (any finite values, as training can reach); the output must be "
        "orthogonal for every X. No formula is fixed, so there is no forward reference: the checks are "
        "orthogonality over the whole domain, gradients against finite differences of the target itself, "
        "coverage of O(n) by optimisation (which of det +1 and det -1 is reached), batches, dtypes, determinism."
    ),
    draw=_draw_free,
    args=lambda p, dt, dev: (_t(p["X"], dt, dev),),
    out_shape=lambda p: p["X"].shape,
    reference=None,
    differentiable=("X",),
    condition=free_map_condition,
    allowance="1 + 2||X||_F (bounds cond(I + A) of a Cayley map and the growth ||A|| of an exponential)",
    scaled=("X",),
)


# ------------------------------------------------------------------------------ householder-product
def householder_reference(p: Params, b: Backend) -> Any:
    """prod_j (I - 2 u_j u_j' / u_j'u_j) over the columns of U, the first column leftmost."""
    u = b.asarray(p["U"])
    n, m = u.shape
    w = b.eye(n)
    for j in range(m):
        w = w @ hh.reflection(u[:, j], n, backend=b)
    return w


def _draw_householder(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
    m = int(rng.integers(1, n + 1))
    u = np.tril(rng.standard_normal((n, m))) * scale
    for j in range(m):
        if u[j, j] == 0.0:
            u[j, j] = scale
    return {"U": u}


def householder_inverse(q: np.ndarray) -> dict[str, np.ndarray]:
    """U (lower trapezoidal, m = n or n - 1) with prod_j H(u_j) = Q, from Theorem 1's vectors."""
    vectors = hh.inverse(q, backend="numpy-float64")
    n = q.shape[0]
    cols = [np.concatenate([np.zeros(n - len(v)), np.asarray(v, dtype=float)]) for v in reversed(vectors[1:])]
    if float(vectors[0][0]) < 0:  # H_1(-1) = diag(1, ..., 1, -1): the reflection along e_n
        cols.append(np.eye(n)[:, -1])
    return {"U": np.stack(cols, axis=1)}


HOUSEHOLDER_PRODUCT = Kind(
    name="householder-product",
    signature="f(U: Tensor[n, m]) -> Tensor[n, n], 1 <= m <= n",
    conventions=(
        "Q = H(u_1) H(u_2) ... H(u_m) with H(u) = I - 2 u u'/(u'u) and u_j column j of U, the first column "
        "leftmost (Q acts on column vectors: Q h applies H(u_m) first). U is lower trapezoidal as in eq. 9 of "
        "the Householder paper (entries above the diagonal are zero); every column is nonzero."
    ),
    draw=_draw_householder,
    args=lambda p, dt, dev: (_t(p["U"], dt, dev),),
    out_shape=lambda p: (p["U"].shape[0], p["U"].shape[0]),
    reference=householder_reference,
    differentiable=("U",),
    inverse=householder_inverse,
    tril=("U",),
    allowance="1 (a product of reflections is backward stable at every scale of U)",
    scaled=("U",),
)


# ------------------------------------------------------------------------------ scaled-cayley
def _draw_cayley(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
    a = np.triu(rng.standard_normal((n, n)), 1) * scale
    d = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return {"A": a - a.T, "d": d}


def cayley_reference(p: Params, b: Backend) -> Any:
    return cy.scaled_cayley(b.asarray(p["A"]), [int(x) for x in p["d"]], backend=b)


def cayley_condition(p: Params) -> float:
    """cond_2(I + A): the scaled Cayley transform is a solve with I + A, accurate to kappa eps."""
    n = p["A"].shape[0]
    return max(1.0, float(np.linalg.cond(np.eye(n) + p["A"])))


def cayley_inverse(q: np.ndarray) -> dict[str, np.ndarray]:
    res = cy.scaled_cayley_inverse(q, backend="numpy-float64")
    return {"A": np.asarray(res.a, dtype=float), "d": np.asarray(res.d, dtype=float)}


SCALED_CAYLEY = Kind(
    name="scaled-cayley",
    signature="f(A: Tensor[n, n], d: Tensor[n]) -> Tensor[n, n]",
    conventions=(
        "W = (I + A)^-1 (I - A) D with A skew-symmetric and D = diag(d), d_i in {+1, -1} (scoRNN, eq. 1): D "
        "multiplies on the right. A is given as the full skew matrix; d in the same dtype as A. Ratios are "
        "scaled by cond(I + A), the accuracy a backward-stable solve promises."
    ),
    draw=_draw_cayley,
    args=lambda p, dt, dev: (_t(p["A"], dt, dev), _t(p["d"], dt, dev)),
    out_shape=lambda p: p["A"].shape,
    reference=cayley_reference,
    differentiable=("A",),
    inverse=cayley_inverse,
    condition=cayley_condition,
    skew=("A",),
    allowance="cond_2(I + A) (the solve with I + A)",
    scaled=("A",),
)


# ------------------------------------------------------------------------------ complex-to-real
def _draw_complex(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
    w = (
        samples.haar_unitary(rng, n)
        if rng.random() < 0.5
        else rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    )
    return {"re": np.real(w) * scale, "im": np.imag(w) * scale}


def complex_reference(p: Params, b: Backend) -> Any:
    return un.embed_matrix((b.asarray(p["re"]), b.asarray(p["im"])), backend=b)


def _complex_args(p: Params, dt: torch.dtype, dev: str) -> tuple[Any, ...]:
    cdt = torch.complex64 if dt == torch.float32 else torch.complex128
    return (torch.complex(_t(p["re"], dt, dev), _t(p["im"], dt, dev)).to(cdt),)


COMPLEX_TO_REAL = Kind(
    name="complex-to-real",
    signature="f(W: complex Tensor[n, n]) -> real Tensor[2n, 2n]",
    conventions=(
        "[[Re W, -Im W], [Im W, Re W]]: the real matrix acting on (Re h, Im h) stacked as one column as W acts "
        "on h (eq. 5 of the Householder paper, Sec. 3.1 of the uRNN paper). complex64 in, float32 out; "
        "complex128 in, float64 out. Unitary W must give an orthogonal output."
    ),
    draw=_draw_complex,
    args=_complex_args,
    out_shape=lambda p: (2 * p["re"].shape[0], 2 * p["re"].shape[0]),
    reference=complex_reference,
    differentiable=("re", "im"),
    orthogonal_output=False,
    allowance="1 (copies and negations are exact)",
    scaled=("re", "im"),
)


# ------------------------------------------------------------------------------ svd-parametrisation
SIGMA_RANGE = (0.05, 1.95)
"""Where the checks draw singular values: inside svdRNN's default interval (sigma* - r, sigma* + r) = (0, 2)."""


def _reflections_np(b: Backend, u: Any) -> Any:
    """prod_j H(u_j) over the columns of u, the first column leftmost, with H(0) = I (svdRNN's eq. 1)."""
    n, m = u.shape
    w = b.eye(n)
    for j in range(m):
        w = w @ sv.reflector(u[:, j], n, backend=b)
    return w


def svd_reference(p: Params, b: Backend) -> Any:
    """Q(U) diag(sigma) Q(V)' with Q(U) = H(u_1) ... H(u_m1) over the columns of U."""
    qu = _reflections_np(b, b.asarray(p["U"]))
    qv = _reflections_np(b, b.asarray(p["V"]))
    sigma = b.asarray(p["sigma"])
    return (qu * sigma) @ qv.T


def _draw_svd(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
    return {
        "U": _draw_householder(rng, n, scale)["U"],
        "V": _draw_householder(rng, n, scale)["U"],
        "sigma": rng.uniform(*SIGMA_RANGE, size=n),
    }


def pack_columns(vectors: list[Any], n: int) -> np.ndarray:
    """Eq. 9's lower-trapezoidal block from ``[u_k, ..., u_n]`` (increasing length): column j
    holds u_{n-j} in its last n - j rows."""
    m = len(vectors)
    out = np.zeros((n, m))
    for j in range(m):
        out[j:, j] = np.asarray(vectors[m - 1 - j], dtype=float).reshape(-1)
    return out


def svd_inverse(w: np.ndarray) -> dict[str, np.ndarray]:
    """U, V (m1 = m2 = n) and sigma with Q(U) diag(sigma) Q(V)' = W: Theorem 2 of the svdRNN paper
    through :func:`~orthoverify.param.svd.svd_parameters`."""
    res = sv.svd_parameters(w, backend="numpy-float64")
    n = w.shape[0]
    return {"U": pack_columns(res.us, n), "V": pack_columns(res.vs, n), "sigma": np.asarray(res.sigma, dtype=float)}


def svd_targets(rng: np.random.Generator, n: int) -> list[tuple[str, np.ndarray]]:
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
    draw=_draw_svd,
    args=lambda p, dt, dev: (_t(p["U"], dt, dev), _t(p["V"], dt, dev), _t(p["sigma"], dt, dev)),
    out_shape=lambda p: (p["U"].shape[0], p["U"].shape[0]),
    reference=svd_reference,
    differentiable=("U", "V", "sigma"),
    inverse=svd_inverse,
    orthogonal_output=False,
    tril=("U", "V"),
    scaled=("U", "V"),
    allowance="1 (products of reflections and a diagonal are backward stable)",
    coverage_targets=svd_targets,
    coverage_statement="every n x n matrix with singular values in the drawn range is reached (Theorem 2)",
)


# ------------------------------------------------------------------------------ unitary-composition
def urnn_of(p: Params, b: Backend) -> un.URNNParameters:
    """The uRNN parameters of a (7, n) X and a permutation given as numbers."""
    x = b.asarray(p["X"])
    perm = [round(float(v)) for v in np.asarray(p["perm"], dtype=object).reshape(-1)]
    return un.urnn_parameters(x[0], x[1], x[2], (x[3], x[4]), (x[5], x[6]), perm, backend=b)


def urnn_reference(p: Params, b: Backend) -> Any:
    """The real block form of W = D3 R2 F^-1 D2 Pi R1 F D1 (dense factor product)."""
    return un.embed_matrix(un.urnn_matrix(urnn_of(p, b)), backend=b)


def _draw_urnn(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
    x = rng.uniform(-1.0, 1.0, size=(7, n))
    x[:3] *= np.pi
    return {"X": x * scale, "perm": rng.permutation(n).astype(float)}


def _urnn_args(p: Params, dt: torch.dtype, dev: str) -> tuple[Any, ...]:
    perm = torch.as_tensor(np.rint(np.asarray(p["perm"], dtype=np.float64)).astype(np.int64), device=dev)
    return (_t(p["X"], dt, dev), perm)


UNITARY_COMPOSITION = Kind(
    name="unitary-composition",
    signature="f(X: Tensor[7, n], perm: LongTensor[n]) -> complex Tensor[n, n]",
    conventions=(
        "W = D3 R2 F^-1 D2 Pi R1 F D1 (uRNN, Arjovsky et al. Sec. 2). Rows 0, 1, 2 of X are the phases w1, w2, w3 "
        "of D_k = diag(exp(i w_k)); rows 3, 4 are Re and Im of v1 and rows 5, 6 of v2, with R_k = I - 2 v_k v_k* / "
        "||v_k||^2. F is the unitary DFT, F_jk = exp(-2 pi i jk / n) / sqrt(n); (Pi x)_i = x[perm[i]]. Output "
        "complex64 for float32 X, complex128 for float64; the checks compare its real block form "
        "[[Re W, -Im W], [Im W, Re W]], orthogonal exactly when W is unitary. Gradients with respect to X."
    ),
    draw=_draw_urnn,
    args=_urnn_args,
    out_shape=lambda p: (p["X"].shape[1], p["X"].shape[1]),
    reference=urnn_reference,
    differentiable=("X",),
    complex_output=True,
    allowance="1 (diagonal phases, unitary DFTs and reflections are backward stable)",
    scaled=("X",),
)


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        ORTHOGONAL_MAP,
        HOUSEHOLDER_PRODUCT,
        SCALED_CAYLEY,
        SVD_PARAMETRISATION,
        UNITARY_COMPOSITION,
        COMPLEX_TO_REAL,
    )
}
"""Every kind, by name."""


# ------------------------------------------------------------------------------ special points
def _tiny_huge(dtype: str) -> tuple[float, float]:
    """A subnormal magnitude and one near overflow whose squares do not overflow, per dtype."""
    return (1e-310, 1e150) if dtype == "float64" else (1e-40, 1e18)


def _free_specials(dtype: str) -> list[tuple[str, dict[str, np.ndarray]]]:
    tiny, huge = _tiny_huge(dtype)
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
            zc = g.copy()
            zc[:, 0] = 0.0
            out.append((f"zero first column, n = {n}", zc))
            zl = g.copy()
            zl[:, -1] = 0.0
            out.append((f"zero last column, n = {n}", zl))
            zr = g.copy()
            zr[1, :] = 0.0
            out.append((f"zero second row, n = {n}", zr))
            rot = np.zeros((n, n))
            rot[0, 1], rot[1, 0] = np.pi / 2, -np.pi / 2
            out.append((f"X - X' with eigenvalues +-i pi (Q has eigenvalue -1), n = {n}", rot))
            up = np.zeros((n, n))
            up[1, 0] = np.pi
            out.append((f"one entry pi below the diagonal, n = {n}", up))
            out.append((f"rank one (repeated singular value 0), n = {n}", np.outer(g[:, 0], g[0])))
            q, _ = np.linalg.qr(g)
            out.append((f"orthogonal X (repeated singular value 1), n = {n}", q))
        out.append((f"subnormal X, n = {n}", g * tiny))
        out.append((f"near-overflow X, n = {n}", g * huge))
    return [(name, {"X": x}) for name, x in out]


def _householder_specials(dtype: str) -> list[tuple[str, dict[str, np.ndarray]]]:
    tiny, huge = _tiny_huge(dtype)
    r = np.random.default_rng(20240602)
    out: list[tuple[str, np.ndarray]] = []
    for n in (2, 3, 4):  # eq. 6's reflections need k >= 2
        g = np.tril(r.standard_normal((n, n)))
        g[np.diag_indices(n)] = np.where(np.diag(g) == 0, 1.0, np.diag(g))
        out += [(f"U = I, n = {n}", np.eye(n)), (f"U = -I, n = {n}", -np.eye(n))]
        out.append((f"unit pivots +-1, n = {n}", np.tril(g, -1) + np.diag([(-1.0) ** i for i in range(n)])))
        out.append((f"one column e_n (m = 1), n = {n}", np.eye(n)[:, -1:]))
        if n >= 2:
            out.append((f"two equal reflections (H(u) H(u) = I), n = {n}", np.stack([g[:, -1], g[:, -1]], axis=1)))
        out.append((f"subnormal columns, n = {n}", g * tiny))
        out.append((f"near-overflow columns, n = {n}", g * huge))
    return [(name, {"U": u}) for name, u in out]


def _cayley_specials(dtype: str) -> list[tuple[str, dict[str, np.ndarray]]]:
    tiny, _huge = _tiny_huge(dtype)
    r = np.random.default_rng(20240603)
    out: list[tuple[str, dict[str, np.ndarray]]] = []
    for n in (2, 3, 4):
        z = np.zeros((n, n))
        out.append((f"A = 0, d = +1, n = {n}", {"A": z, "d": np.ones(n)}))
        out.append((f"A = 0, d = -1, n = {n}", {"A": z, "d": -np.ones(n)}))
        if n >= 2:
            a = np.triu(r.standard_normal((n, n)), 1)
            out.append((f"A with entries 1e3 (W near eigenvalue -1), n = {n}", {"A": (a - a.T) * 1e3, "d": np.ones(n)}))
            out.append((f"subnormal A, n = {n}", {"A": (a - a.T) * tiny, "d": np.ones(n)}))
    return out


def special_points(kind: Kind, dtype: str) -> list[tuple[str, dict[str, np.ndarray]]]:
    """Deterministic parameter points the search tries before drawing at random: zero and identity
    parameters, exact +-1 diagonals, zero columns, an eigenvalue -1 of Q, repeated singular values,
    n = 1 and 2, subnormal and near-overflow magnitudes (where the kind's domain has them)."""
    make = {
        "orthogonal-map": _free_specials,
        "householder-product": _householder_specials,
        "scaled-cayley": _cayley_specials,
    }.get(kind.name)
    return make(dtype) if make is not None else []
