"""The SVD parametrisation of Zhang, Lei & Dhillon (svdRNN, ICLR 2018 submission), as printed.

Notation of the paper: ``H^n_k(u)`` (eq. 1) is the n x n reflection acting on the last k
coordinates, and ``u = 0`` gives ``I_n`` (unlike eq. 6 of the Householder paper, where H(0)
is undefined); ``M_k(u_k, ..., u_n) = H_n(u_n) ... H_k(u_k)`` (eq. 2);
``M_{k1,k2}(u, v, sigma) = H_n(u_n)...H_k1(u_k1) diag(sigma) H_k2(v_k2)...H_n(v_n)`` (eq. 3);
the non-square ``M^{m,n}_{k1,k2}`` (eq. 17); the sigma map of eq. 8; Hprod and Hgrad
(Algorithms 2, 3) and the local forward/backward propagation of svdRNN (Algorithm 1, App. B).

The inverse maps follow the paper's proofs: Householder QR with a non-negative diagonal
(Prop. 1), reflection vectors of an orthogonal matrix (Theorem 1), of any matrix through its
SVD (Theorems 2 and 4, using Lemma 1 to drop reflections), and the assignment of Theorem 3's
proof (as corrected, and as printed); :func:`exact_jacobian` gives the Jacobian of M exactly
(the dimension count after Theorem 2). Everything is written once against the backend protocol.
Reflection vectors are passed as lists in increasing length: ``us = [u_k1, ..., u_n]``; a list is
recorded as one input matrix by :func:`stack_padded`. With eq. 8, :func:`svdrnn_parameters` gives
the svdRNN parameters of a weight matrix and :func:`perturbation_margin` probes a loss for a local
minimum there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import sympy

from orthoverify.backends import Array, Backend, Scalar, get_backend
from orthoverify.errors import DomainError, NonFiniteError, ShapeError, ZeroVectorError
from orthoverify.param._validate import (
    BackendLike,
    integer,
    matrix,
    require_orthogonal,
    resolve,
    rows,
    vector,
    vector_or_columns,
)
from orthoverify.param._validate import (
    size as checked_size,
)
from orthoverify.param.householder import _householder_block
from orthoverify.tolerance import THRESHOLD

__all__ = [
    "HgradResult",
    "HouseholderQR",
    "SvdLocalResult",
    "SvdParameters",
    "hgrad",
    "householder_qr",
    "hprod",
    "lstm_parameter_count",
    "m_k",
    "m_k1k2",
    "m_rect",
    "ornn_parameter_count",
    "orthogonal_parameters",
    "pad",
    "reflector",
    "rnn_parameter_count",
    "sigma_map",
    "sigma_map_grad",
    "sigma_map_inverse",
    "svd_parameters",
    "svdrnn_local",
    "svdrnn_parameter_count",
    "svdrnn_parameter_shapes",
    "theorem3_parameters",
    "theorem3_printed",
]


# --------------------------------------------------------------------------- eq. 1 to 3, 17
def reflector(u: Any, n: int | None = None, *, backend: BackendLike = None) -> Array:
    """``H^n_k(u)`` of eq. 1, k = len(u) >= 1: ``diag(I_{n-k}, I_k - 2uu'/u'u)``, and I_n for u = 0."""
    n = None if n is None else checked_size(n, "n")
    b = resolve(backend, u)
    uu = vector(b, u, "u")
    k = uu.shape[0]
    size = k if n is None else n
    if k < 1:
        raise ShapeError("u must have length >= 1 (eq. 1)")
    if size < k:
        raise ShapeError(f"u has length {k} > n = {size}")
    if b.is_zero(uu):
        return b.eye(size)
    block = _householder_block(b, uu)
    return block if size == k else b.block_diag(b.eye(size - k), block)


def _vectors(b: Backend, vectors: Sequence[Any], name: str, n: int | None) -> tuple[list[Array], int, int]:
    """Validated ``[x_k, ..., x_n]`` with lengths k, k+1, ..., n: (vectors, k, n)."""
    vs = [vector(b, v, f"{name}[{i}]") for i, v in enumerate(vectors)]
    if not vs:
        if n is None:
            raise ShapeError(f"{name} is empty: give n")
        return [], n + 1, n
    last = vs[-1].shape[0]
    if n is not None and last != n:
        raise ShapeError(f"the last vector of {name} must have length n = {n}, got {last}")
    k = last - len(vs) + 1
    if k < 1:
        raise ShapeError(f"{name} has {len(vs)} vectors but the last has length {last}: at most {last} fit")
    for i, v in enumerate(vs):
        if v.shape[0] != k + i:
            raise ShapeError(
                f"{name}[{i}] has length {v.shape[0]}, expected {k + i} "
                f"({name} = [x_{k}, ..., x_{last}], x_j of length j)"
            )
    return vs, k, last


def m_k(vectors: Sequence[Any], n: int | None = None, *, backend: BackendLike = None) -> Array:
    """``M_k(u_k, ..., u_n) = H_n(u_n) ... H_k(u_k)`` (eq. 2) from ``[u_k, ..., u_n]``; I_n when empty."""
    n = None if n is None else checked_size(n, "n")
    b = resolve(backend, vectors[0] if len(vectors) else 0.0)
    vs, _, size = _vectors(b, vectors, "vectors", n)
    out = b.eye(size)
    for v in vs:
        out = reflector(v, size, backend=b) @ out
    return out


def _sigma_block(b: Backend, sigma: Array, m: int, n: int) -> Array:
    """The m x n matrix (diag(sigma) | 0) or (diag(sigma); 0) of eq. 17."""
    d = b.diag(sigma)
    p = min(m, n)
    if m < n:
        return b.concat([d, b.zeros((p, n - m))], axis=1)
    if m > n:
        return b.concat([d, b.zeros((m - n, p))], axis=0)
    return d


def m_rect(us: Sequence[Any], vs: Sequence[Any], sigma: Any, *, m: int, n: int, backend: BackendLike = None) -> Array:
    """``M^{m,n}_{k1,k2}`` of eq. 17: ``H^m_m(u_m)...H^m_k1(u_k1) Sigma H^n_k2(v_k2)...H^n_n(v_n)``
    with Sigma = (diag(sigma) | 0) (m < n) or (diag(sigma); 0) (m > n), sigma of length min(m, n)."""
    m, n = checked_size(m, "m"), checked_size(n, "n")
    b = resolve(backend, sigma)
    s = vector(b, sigma, "sigma")
    if s.shape[0] != min(m, n):
        raise ShapeError(f"sigma has length {s.shape[0]}, expected min(m, n) = {min(m, n)}")
    left = m_k(us, m, backend=b)
    right = b.transpose(m_k(vs, n, backend=b))  # (H_n...H_k2)' = H_k2...H_n: each H is symmetric
    return left @ _sigma_block(b, s, m, n) @ right


def m_k1k2(us: Sequence[Any], vs: Sequence[Any], sigma: Any, *, backend: BackendLike = None) -> Array:
    """``M_{k1,k2}(u_k1, ..., u_n, v_k2, ..., v_n, sigma)`` of eq. 3 (square, n = len(sigma))."""
    b = resolve(backend, sigma)
    n = vector(b, sigma, "sigma").shape[0]
    return m_rect(us, vs, sigma, m=n, n=n, backend=b)


# --------------------------------------------------------------------------- dimension (Sec. 3)
def unflatten_parameters(flat: Sequence[Any], m: int, n: int, k1: int, k2: int) -> tuple[list[Any], list[Any], Any]:
    """(us, vs, sigma) of M^{m,n}_{k1,k2} from one flat list: u_k1..u_m, then v_k2..v_n, then sigma."""
    pos = 0
    us, vs = [], []
    for j in range(k1, m + 1):
        us.append(np.array(flat[pos : pos + j], dtype=object))
        pos += j
    for j in range(k2, n + 1):
        vs.append(np.array(flat[pos : pos + j], dtype=object))
        pos += j
    return us, vs, np.array(flat[pos:], dtype=object)


def exact_jacobian(m: int, n: int, k1: int, k2: int, flat: Sequence[Any]) -> sympy.Matrix:
    """The exact Jacobian of vec(M^{m,n}_{k1,k2}) at a rational point: column i is
    d/de M(p + e e_i) at e = 0 (SymPy, exact)."""
    b = get_backend("sympy")
    e = sympy.Symbol("_e")
    cols = []
    for i in range(len(flat)):
        moved = list(flat)
        moved[i] = moved[i] + e
        us, vs, s = unflatten_parameters(moved, m, n, k1, k2)
        w = m_rect(us, vs, s, m=m, n=n, backend=b)
        cols.append([sympy.diff(x, e).subs(e, 0) for x in w.reshape(-1)])
    return sympy.Matrix(cols).T


# --------------------------------------------------------------------------- eq. 8
def _radius(b: Backend, r: Any) -> Scalar:
    rr = b.scalar(r)
    if not b.positive(rr):
        raise DomainError(f"r = {r!r} must be > 0: eq. 8 maps onto (sigma* - r, sigma* + r)")
    return rr


def _tanh_half(b: Backend, s: Array) -> Array:
    """``2 (f(s) - 1/2) = tanh(s/2)`` for the sigmoid f, from exp(-|s|) so nothing overflows."""
    e = b.exp(-b.abs(s))
    return b.sign(s) * (1 - e) / (1 + e)


def sigma_map(s_hat: Any, sigma_star: Any = 1, r: Any = 1, *, backend: BackendLike = None) -> Array:
    """Eq. 8: ``sigma_i = 2r (f(s_i) - 1/2) + sigma*`` with f the sigmoid; r > 0."""
    b = resolve(backend, s_hat)
    s = vector(b, s_hat, "s_hat")
    rr = _radius(b, r)
    return rr * _tanh_half(b, s) + b.scalar(sigma_star)


def sigma_map_grad(s_hat: Any, sigma_star: Any = 1, r: Any = 1, *, backend: BackendLike = None) -> Array:
    """``d sigma_i / d s_i = 2r f(s_i)(1 - f(s_i)) = (r/2)(1 - tanh(s_i/2)^2)`` (diagonal of dSigma/ds)."""
    b = resolve(backend, s_hat)
    s = vector(b, s_hat, "s_hat")
    rr = _radius(b, r)
    t = _tanh_half(b, s)
    return rr * (1 - t * t) / 2


def sigma_map_inverse(sigma: Any, sigma_star: Any = 1, r: Any = 1, *, backend: BackendLike = None) -> Array:
    """The s with sigma_map(s) = sigma: ``s = log((1 + y)/(1 - y))``, y = (sigma - sigma*)/r;
    sigma must lie in the open interval (sigma* - r, sigma* + r)."""
    b = resolve(backend, sigma)
    sg = vector(b, sigma, "sigma")
    rr = _radius(b, r)
    y = (sg - b.scalar(sigma_star)) / rr
    for i, v in enumerate(y.reshape(-1)):
        if not (b.positive(1 - v) and b.positive(1 + v)):
            raise DomainError(f"sigma[{i}] lies outside the open interval (sigma* - r, sigma* + r) of eq. 8")
    return b.log((1 + y) / (1 - y))


# --------------------------------------------------------------------------- Prop. 1, Thm 1
@dataclass
class HouseholderQR:
    """``B = H_n(u_n) ... H_1(u_1) R`` (Prop. 1): vectors [u_1, ..., u_n] (u_i of length i, zero
    allowed) and R upper triangular with non-negative diagonal."""

    vectors: list[Array]
    r: Array


def _reflect_rows(b: Backend, u: Array, x: Array) -> Array:
    """``(I - 2uu'/u'u) x`` for a nonzero vector u and a matrix x with len(u) rows."""
    v = u / b.max_abs(u) if not b.exact else u
    return x - b.outer(v, (v @ x)) * (2 / (v @ v))


def _first_column_vector(b: Backend, x: Array) -> Array:
    """``x - ||x|| e_1`` (the proof of Prop. 1), evaluated without cancellation when x_1 > 0:
    its first entry is then ``-||x_{2:}||^2 / (x_1 + ||x||)``, the same number. In floating
    point x is first divided by max|x_i| so that the squares neither overflow nor underflow."""
    s = b.max_abs(x)
    if b.is_zero(s):
        return x
    xs = x if b.exact else x / s
    alpha = b.norm(xs)
    rest = xs[1:]
    if b.positive(xs[0]):
        rr = b.norm(rest)
        first = -(rr * rr) / (xs[0] + alpha)
    else:
        first = xs[0] - alpha
    u = b.concat([b.stack([first]), rest])
    return u if b.exact else u * s


def householder_qr(a: Any, *, backend: BackendLike = None) -> HouseholderQR:
    """Householder QR as in the proof of Prop. 1: ``u_i = B_1 - ||B_1|| e_1`` of the trailing
    i x i block (zero when that column already is a non-negative multiple of e_1)."""
    b = resolve(backend, a)
    bb = matrix(b, a, "B", square=True)
    n = bb.shape[0]
    vectors: list[Array] = [b.zeros(i) for i in range(1, n + 1)]
    rows: list[Array] = []
    cur = bb
    for j in range(n):
        i = n - j  # the reflection H_i acts on rows j..n-1
        x = cur[:, 0]
        u = _first_column_vector(b, x)
        if not b.is_zero(u):
            cur = _reflect_rows(b, u, cur)
            vectors[i - 1] = u
        # R_jj is ||x|| >= 0 exactly (the reflection maps x to ||x|| e_1); rounding may not
        head = b.concat([b.stack([b.norm(x)]).reshape(1, 1), cur[0:1, 1:]], axis=1)
        rows.append(b.concat([b.zeros((1, j)), head], axis=1))
        cur = cur[1:, 1:]
    r = b.triu(b.concat(rows, axis=0)) if n else bb
    return HouseholderQR(vectors, r)


def orthogonal_parameters(q: Any, *, backend: BackendLike = None, threshold: float = THRESHOLD) -> list[Array]:
    """Vectors [u_1, ..., u_n] with ``M_1(u_1, ..., u_n) = Q`` for orthogonal Q (Theorem 1's
    construction: Prop. 1's QR, whose R is then I)."""
    b = resolve(backend, q)
    qq = require_orthogonal(b, q, "Q", threshold)
    return householder_qr(qq, backend=b).vectors


# --------------------------------------------------------------------------- Thm 2, Lemma 1, Thm 4
@dataclass
class SvdParameters:
    """Inputs of ``M^{m,n}_{k1,k2}``: us = [u_k1..u_m], vs = [v_k2..v_n] and sigma (length min(m, n))."""

    us: list[Array]
    vs: list[Array]
    sigma: Array
    m: int
    n: int
    k1: int
    k2: int

    def matrix(self, backend: BackendLike = None) -> Array:
        """The matrix these parameters give."""
        return m_rect(self.us, self.vs, self.sigma, m=self.m, n=self.n, backend=backend)


def factor_parameters(
    u: Any, sigma: Any, v: Any, *, backend: BackendLike = None, threshold: float = THRESHOLD
) -> SvdParameters:
    """Parameters of ``W = U Sigma V'`` from its factors (U m x m and V n x n orthogonal, sigma
    of length min(m, n)): all reflections of U and V by Theorem 1, then by Lemma 1 only the
    last min(m, n) of the larger side are kept (Theorem 4: k1 = 1, k2 = n - m + 1 for m <= n,
    k1 = m - n + 1, k2 = 1 for m > n)."""
    b = resolve(backend, sigma)
    us = orthogonal_parameters(u, backend=b, threshold=threshold)
    vs = orthogonal_parameters(v, backend=b, threshold=threshold)
    m, n = len(us), len(vs)
    s = vector(b, sigma, "sigma")
    if s.shape[0] != min(m, n):
        raise ShapeError(f"sigma has length {s.shape[0]}, expected min(m, n) = {min(m, n)}")
    if m <= n:
        return SvdParameters(us, vs[n - m :], s, m, n, 1, n - m + 1)
    return SvdParameters(us[m - n :], vs, s, m, n, m - n + 1, 1)


def svd_parameters(w: Any, *, backend: BackendLike = None) -> SvdParameters:
    """Parameters with ``M^{m,n}_{k1,k2}(...) = W`` for any finite W (Theorems 2 and 4), through
    the backend's SVD (float or high precision; exact arithmetic has none)."""
    b = resolve(backend, w)
    ww = matrix(b, w, "W")
    if ww.shape[0] == 0 or ww.shape[1] == 0:
        raise ShapeError(f"W must be non-empty, got shape {tuple(ww.shape)}")
    u, s, v = b.svd(ww)
    return factor_parameters(u, s, v, backend=b)


# --------------------------------------------------------------------------- Thm 3
def pad(x: Any, length: int, *, backend: BackendLike = None) -> Array:
    """``(0, ..., 0, x)`` of the given length: ``H^n_length(pad(x)) = H^n_len(x)(x)``."""
    length = checked_size(length, "length")
    b = resolve(backend, x)
    xx = vector(b, x, "x")
    if length < xx.shape[0]:
        raise ShapeError(f"cannot pad a vector of length {xx.shape[0]} to length {length}")
    return b.concat([b.zeros(length - xx.shape[0]), xx])


def stack_padded(vectors: Sequence[Any], n: int) -> np.ndarray:
    """Vectors of lengths k, k+1, ..., n as the columns of an n x m object matrix, zeros on top
    (how a list of reflection vectors is recorded as one input); n x 0 for no vectors."""
    cols = []
    for v in vectors:
        v = np.asarray(v, dtype=object)
        cols.append(np.concatenate([np.zeros(n - v.shape[0], dtype=object), v]))
    if not cols:
        return np.zeros((n, 0))
    return np.stack(cols, axis=1)


def unstack_padded(mat: Array, k: int) -> list[Array]:
    """Inverse of :func:`stack_padded`: column i holds the vector of length k + i in its last k + i entries."""
    n = mat.shape[0]
    return [mat[n - (k + i) :, i] for i in range(mat.shape[1])]


def _theorem3_domain(n: int, k1: int, k2: int) -> None:
    for name, k in (("k1", k1), ("k2", k2)):
        if not 1 <= k <= n:
            raise DomainError(f"{name} = {k} is out of range: 1 <= {name} <= n = {n}")
    if k1 + k2 > n + 2:
        raise DomainError(f"Theorem 3 needs k1 + k2 <= n + 2, got {k1} + {k2} > {n + 2}")


Reading = Literal["corrected", "printed"]


def _theorem3(b: Backend, a: Array, k1: int, k2: int, reading: Reading) -> tuple[list[Array], list[Array]]:
    n = a.shape[0]
    _theorem3_domain(n, k1, k2)
    swap = k2 < k1 - 1  # the proof's "else" branch: decompose A' and fill the u's instead
    kf, kg = (k2, k1) if swap else (k1, k2)  # kf: the side taking the decomposition as is
    src = orthogonal_parameters(b.transpose(a) if swap else a, backend=b)
    full = src[kf - 1 :]  # (19)/(21): u_k = a_k for k >= k1 (or v_k = b_k for k >= k2)
    other: dict[int, Array] = {j: b.zeros(j) for j in range(kg, n + 1)}
    for k in range(kf - 1, 0, -1):  # (19)/(21): x_{k2+k1-k-1} = a_k, padded with leading zeros
        j = kg + kf - k - 1
        other[j] = pad(src[k - 1], j, backend=b)
    first_zero = kg + kf - 2 if reading == "printed" else kg + kf - 1  # printed: t = k2 + k1 - 2, ..., n
    for t in range(first_zero, n + 1):
        if t in other:
            other[t] = b.zeros(t)
    rest = [other[j] for j in range(kg, n + 1)]
    return (rest, full) if swap else (full, rest)


def theorem3_parameters(a: Any, k1: int, k2: int, *, backend: BackendLike = None) -> tuple[list[Array], list[Array]]:
    """(us, vs) with ``M_{k1,k2}(us, vs, 1) = A`` for orthogonal A and k1 + k2 <= n + 2: the
    assignment (19)-(22) of App. A.4 with the vectors padded by leading zeros and the zero
    range starting at t = k1 + k2 - 1 (as printed it starts at k1 + k2 - 2, see theorem3_printed)."""
    k1, k2 = integer(k1, "k1"), integer(k2, "k2")
    b = resolve(backend, a)
    aa = require_orthogonal(b, a, "A", THRESHOLD)
    return _theorem3(b, aa, k1, k2, "corrected")


def theorem3_printed(a: Any, k1: int, k2: int, *, backend: BackendLike = None) -> tuple[list[Array], list[Array]]:
    """The assignment (19)-(22) executed in printed order: ``x_{k2+k1-k-1} = a_k`` (padded), then
    ``x_t = 0 for t = k2+k1-2, ..., n``, which overwrites the slot just given a_1 (b_1)."""
    k1, k2 = integer(k1, "k1"), integer(k2, "k2")
    b = resolve(backend, a)
    aa = require_orthogonal(b, a, "A", THRESHOLD)
    return _theorem3(b, aa, k1, k2, "printed")


# --------------------------------------------------------------------------- Alg. 2, 3
def _reflection_input(b: Backend, u: Any, n: int, name: str) -> tuple[Array, int]:
    uu = vector(b, u, name)
    k = uu.shape[0]
    if not 1 <= k <= n:
        raise ShapeError(f"{name} has length {k}: it must be between 1 and n = {n}")
    return uu, k


def _printed_norm(b: Backend, u: Array, norm: Scalar | None, name: str) -> Scalar:
    """``u'u`` for Algorithms 2 and 3, which divide by it: u = 0 is outside what they compute."""
    nrm = (u @ u) if norm is None else norm  # Count norm
    if not b.all_finite(b.stack([nrm])):
        raise NonFiniteError(f"||{name}||^2 overflows in {b.name}: Algorithms 2 and 3 square it unscaled")
    if not b.exact and not b.is_zero(nrm) and b.to_float(nrm) < b.tiny:
        raise DomainError(
            f"||{name}||^2 is subnormal in {b.name}: 2/||{name}||^2 overflows (Algorithms 2, 3 square unscaled)"
        )
    if b.is_zero(nrm) and not b.is_zero(u):
        raise DomainError(f"||{name}||^2 underflows to 0 in {b.name}: Algorithms 2 and 3 square it unscaled")
    if b.is_zero(nrm):
        raise ZeroVectorError(
            f"{name} = 0: Algorithms 2 and 3 divide by ||{name}||^2 = 0 (eq. 1 defines H(0) = I; "
            "use guard=True for that convention)"
        )
    return nrm


def hprod(h: Any, u: Any, *, norm: Any = None, guard: bool = False, backend: BackendLike = None) -> Array:
    """Algorithm 2 (eq. 9): ``H_k(u_k) h = h - (2 u'h / u'u) u`` with u = (0; u_k), on a length-n
    vector or the columns of an n x B matrix. ``norm`` is a precomputed u'u (Sec. 4.2's 4k flops);
    ``guard=True`` returns h for u = 0 (eq. 1's convention), which the printed algorithm does not."""
    b = resolve(backend, h)
    hh, vec = vector_or_columns(b, h, "h", rows(b, h, "h"))
    n = hh.shape[0]
    uk, k = _reflection_input(b, u, n, "u")  # noqa: RUF059 (the flop counter reads k from this frame)
    if guard and b.is_zero(uk):
        return hh.reshape(n) if vec else hh
    nrm = _printed_norm(b, uk, norm, "u")
    uf = pad(uk, n, backend=b)
    alpha = (2 / nrm) * (uf @ hh)  # Count hprod alpha
    out = hh - b.outer(uf, alpha)  # Count hprod update
    return out.reshape(n) if vec else out


@dataclass
class HgradResult:
    """Algorithm 3's outputs: ``dL/dh`` and ``dL/du_k`` (the last k entries of the printed
    n-vector ``u_bar``, which is also kept: its first n - k entries are not derivatives of
    anything, since those entries of (0; u_k) are not parameters)."""

    dl_dh: Array
    dl_du: Array
    u_bar: Array


def hgrad(
    h: Any,
    u: Any,
    g: Any,
    *,
    norm: Any = None,
    alpha: Any = None,
    backend: BackendLike = None,
) -> HgradResult:
    """Algorithm 3 (eqs. 13-15): for C = H_k(u_k) h and g = dL/dC,
    ``alpha = 2u'h/u'u``, ``beta = 2u'g/u'u``, ``dL/dh = g - beta u``,
    ``dL/du = -alpha g - beta h + alpha beta u``; with columns, summed over the batch.
    ``norm`` (u'u) and ``alpha`` (from the forward pass) may be passed to reuse them (Sec. 4.2)."""
    b = resolve(backend, h)
    n = rows(b, h, "h")
    hh, vec = vector_or_columns(b, h, "h", n)
    gg, _ = vector_or_columns(b, g, "g", n)
    if tuple(gg.shape) != tuple(hh.shape):
        raise ShapeError(f"g has shape {tuple(gg.shape)} but h has {tuple(hh.shape)}")
    uk, k = _reflection_input(b, u, n, "u")
    nrm = _printed_norm(b, uk, norm, "u")
    uf = pad(uk, n, backend=b)
    two_over = 2 / nrm  # Count hgrad 2/uu
    a_ = two_over * (uf @ hh) if alpha is None else b.asarray(alpha).reshape(-1)  # Count hgrad alpha
    beta = two_over * (uf @ gg)  # Count hgrad beta
    dl_dh = gg - b.outer(uf, beta)  # Count hgrad h_bar
    ab = a_ @ beta  # Count hgrad u_bar
    u_bar = -(gg @ a_) - hh @ beta + uf * ab  # Count hgrad u_bar
    return HgradResult(dl_dh.reshape(n) if vec else dl_dh, u_bar[n - k :], u_bar)


# --------------------------------------------------------------------------- Alg. 1
@dataclass
class SvdLocalResult:
    """Algorithm 1's outputs. ``dl_du[i]`` and ``dl_dv[i]`` are aligned with the inputs
    ``us = [u_{n-m1+1}, ..., u_n]`` and ``vs = [v_{n-m2+1}, ..., v_n]`` (the printed G^(u) has
    them as columns in the reverse order, u_n first). ``dl_ds`` is dL/d s_hat (eq. 8) when the
    sigma map was given, else None."""

    c: Array
    dl_du: list[Array]
    dl_dv: list[Array]
    dl_dsigma: Array
    dl_dh: Array
    dl_ds: Array | None = None


Variant = Literal["printed", "corrected"]


def svdrnn_local(
    h: Any,
    dl_dc: Any,
    us: Sequence[Any],
    sigma: Any,
    vs: Sequence[Any],
    *,
    variant: Variant = "printed",
    s_map: tuple[Any, Any, Any] | None = None,
    reuse_norms: bool = False,
    backend: BackendLike = None,
) -> SvdLocalResult:
    """Algorithm 1 of App. B: C = U Sigma V' h and the gradients, by Hprod and Hgrad.

    As printed, the U loop of the backward pass calls ``Hgrad(h^(u)_k, u_k, g)`` with the
    *output* of the reflection H(u_k); Algorithm 3 needs its input ``h^(u)_{k-1}`` (the V loop
    does pass the input, ``h^(v)_{k+1}``). ``variant="corrected"`` passes ``h^(u)_{k-1}``.
    ``s_map = (s_hat, sigma_star, r)`` takes Sigma from eq. 8 (``sigma`` is then ignored and
    may be None) and adds the printed last step ``g^(sigma) = dSigma/ds o diag(Sigma_bar)``.
    ``reuse_norms`` computes each ||u_k||^2 once and passes it to Hprod and Hgrad (Sec. 4.2).
    """
    if variant not in ("printed", "corrected"):
        raise DomainError(f"variant must be 'printed' or 'corrected', got {variant!r}")
    b = resolve(backend, h)
    n = rows(b, h, "h")
    hh, vec = vector_or_columns(b, h, "h", n)
    gg, _ = vector_or_columns(b, dl_dc, "dL/dC", n)
    if tuple(gg.shape) != tuple(hh.shape):
        raise ShapeError(f"dL/dC has shape {tuple(gg.shape)} but h has {tuple(hh.shape)}")
    uu, ku, _ = _vectors(b, us, "us", n)
    vv, kv, _ = _vectors(b, vs, "vs", n)
    m1, m2 = len(uu), len(vv)
    if s_map is not None:
        s_hat = vector(b, s_map[0], "s_hat")
        sig = sigma_map(s_hat, s_map[1], s_map[2], backend=b)
    else:
        sig = vector(b, sigma, "sigma")
    if sig.shape[0] != n:
        raise ShapeError(f"sigma has length {sig.shape[0]}, expected n = {n}")
    u_of = {ku + i: x for i, x in enumerate(uu)}  # u_k for k = n-m1+1..n
    v_of = {kv + i: x for i, x in enumerate(vv)}
    nu = {k: (x @ x if reuse_norms else None) for k, x in u_of.items()}  # Count norms once
    nv = {k: (x @ x if reuse_norms else None) for k, x in v_of.items()}  # Count norms once
    col = sig.reshape(n, 1)
    # forward: V'h, then Sigma V'h, then U Sigma V'h
    hv: dict[int, Array] = {n + 1: hh}
    for k in range(n, n - m2, -1):
        hv[k] = hprod(hv[k + 1], v_of[k], norm=nv[k], backend=b)  # Count fp v
    x = hv[n - m2 + 1]
    hu: dict[int, Array] = {n - m1: col * x}  # Count fp sigma
    for k in range(n - m1 + 1, n + 1):
        hu[k] = hprod(hu[k - 1], u_of[k], norm=nu[k], backend=b)  # Count fp u
    c = hu[n]
    # backward
    g = gg
    du: dict[int, Array] = {}
    for k in range(n, n - m1, -1):
        into = hu[k] if variant == "printed" else hu[k - 1]
        res = hgrad(into, u_of[k], g, norm=nu[k], backend=b)  # Count bp u
        g, du[k] = res.dl_dh, res.dl_du
    gx = g * x  # Count bp sigma
    dl_dsigma = gx[:, 0] if gx.shape[1] == 1 else gx @ b.asarray([1] * gx.shape[1])  # Count bp sigma
    g = col * g  # Count bp sigma
    dl_ds = None
    if s_map is not None:
        dl_ds = sigma_map_grad(s_hat, s_map[1], s_map[2], backend=b) * dl_dsigma  # Count bp sigma map
    dv: dict[int, Array] = {}
    for k in range(n - m2 + 1, n + 1):
        res = hgrad(hv[k + 1], v_of[k], g, norm=nv[k], backend=b)  # Count bp v
        g, dv[k] = res.dl_dh, res.dl_du
    shape = (lambda a: a.reshape(n)) if vec else (lambda a: a)
    return SvdLocalResult(
        shape(c),
        [du[k] for k in sorted(du)],
        [dv[k] for k in sorted(dv)],
        dl_dsigma,
        shape(g),
        dl_ds,
    )


# --------------------------------------------------------------------------- Sec. 4, App. C
def _counts(*xs: int) -> None:
    for x in xs:
        if not isinstance(x, int) or isinstance(x, bool) or x < 0:
            raise DomainError(f"sizes must be non-negative integers, got {x!r}")


def rnn_parameter_count(n: int, n_i: int, n_o: int) -> int:
    """Sec. 4: ``(n_o + n_i + n + 1) n`` (W, M, b and Y; no output bias, no initial state)."""
    _counts(n, n_i, n_o)
    return (n_o + n_i + n + 1) * n


def svdrnn_parameter_count(n: int, n_i: int, n_o: int, m1: int, m2: int) -> int:
    """Sec. 4: ``(n_o + n_i + m1 + m2 + 2) n - (m1^2 + m2^2 - m1 - m2)/2``: M, b, Y, sigma and
    reflection vectors of lengths n - m + 1, ..., n on each side."""
    _counts(n, n_i, n_o, m1, m2)
    if m1 > n or m2 > n:
        raise DomainError(f"m1 = {m1}, m2 = {m2}: at most n = {n} reflections per side")
    return (n_o + n_i + m1 + m2 + 2) * n - (m1 * m1 + m2 * m2 - m1 - m2) // 2


def svdrnn_parameter_shapes(n: int, n_i: int, n_o: int, m1: int, m2: int) -> dict[str, tuple[int, ...]]:
    """Every parameter array of an svdRNN cell with its shape (an inventory, independent of the
    closed form): M, b, Y, sigma (or s_hat), u_{n-m1+1..n}, v_{n-m2+1..n}."""
    _counts(n, n_i, n_o, m1, m2)
    if m1 > n or m2 > n:
        raise DomainError(f"m1 = {m1}, m2 = {m2}: at most n = {n} reflections per side")
    shapes: dict[str, tuple[int, ...]] = {"M": (n, n_i), "b": (n,), "Y": (n_o, n), "sigma": (n,)}
    shapes.update({f"u{j}": (j,) for j in range(n - m1 + 1, n + 1)})
    shapes.update({f"v{j}": (j,) for j in range(n - m2 + 1, n + 1)})
    return shapes


def ornn_parameter_count(n: int, n_i: int, n_o: int, m: int) -> int:
    """oRNN counted the same way: M, b, Y and m reflection vectors of lengths n - m + 1, ..., n."""
    _counts(n, n_i, n_o, m)
    if m > n:
        raise DomainError(f"m = {m}: at most n = {n} reflections")
    return (n_o + n_i + 1) * n + m * n - m * (m - 1) // 2


def lstm_parameter_count(n: int, n_i: int, n_o: int) -> int:
    """LSTM counted the same way: four gates of (n x n, n x n_i, n) and Y."""
    _counts(n, n_i, n_o)
    return 4 * (n * n + n * n_i + n) + n_o * n


# --------------------------------------------------------------------------- eq. 3 with eq. 8
SvdrnnParams = tuple[list[Array], list[Array], Array]


def svdrnn_parameters(b: Backend, w: Array, sigma_star: Any, r: Any, *, smooth: bool) -> SvdrnnParams | None:
    """svdRNN parameters (us, vs, s_hat) of W for M_{1,1} with eq. 8: W = U Sigma V' by b's SVD, the
    reflection vectors by :func:`factor_parameters`, s_hat = eq. 8's inverse (DomainError when a
    singular value is outside (sigma* - r, sigma* + r)). With ``smooth``, U and V are first replaced
    by U D, V D (D = diag(1, .., 1, -1), which keeps W) so that det U = det V = (-1)^n: then u_1 and
    v_1 are nonzero (u_1 = 0 exactly when det U = (-1)^(n-1), for generic U), so every reflection is
    a smooth function of its vector near these parameters; None when det W < 0 makes that impossible."""
    u, s, v = b.svd(w)
    n = w.shape[0]
    if smooth:
        du = 1 if np.linalg.det(b.to_numpy(u)) > 0 else -1
        dv = 1 if np.linalg.det(b.to_numpy(v)) > 0 else -1
        if du != dv:
            return None
        if du != (-1) ** n:
            u, v = u.copy(), v.copy()
            u[:, n - 1] = -u[:, n - 1]
            v[:, n - 1] = -v[:, n - 1]
    params = factor_parameters(u, s, v, backend=b)
    return params.us, params.vs, sigma_map_inverse(params.sigma, sigma_star, r, backend=b)


def svdrnn_weight(b: Backend, p: SvdrnnParams, sigma_star: Any, r: Any) -> Array:
    """W = M_{1,1}(us, vs, sigma_map(s_hat)) (eq. 3 with eq. 8)."""
    us, vs, s_hat = p
    return m_k1k2(us, vs, sigma_map(s_hat, sigma_star, r, backend=b), backend=b)


def perturbation_margin(
    b: Backend, p: SvdrnnParams, loss: Callable[[SvdrnnParams], Scalar], rng: np.random.Generator, count: int
) -> tuple[float, int]:
    """min over random perturbations p + rho z (every entry of every u, v and s_hat; ||z|| = 1,
    rho in {1e-3, 1e-6, 1e-12}, ``count`` each) of (L(p + rho z) - L(p)) / rho^2, L = ``loss``
    in b's arithmetic, and the number of perturbations: nonnegative (up to rounding) at a local
    minimum of L."""
    base = loss(p)
    sizes = [x.shape[0] for x in (*p[0], *p[1], p[2])]
    worst = math.inf
    done = 0
    for rho in ("1e-3", "1e-6", "1e-12"):
        step = b.scalar(rho)
        for _ in range(count):
            z = rng.standard_normal(sum(sizes))
            z = z / np.linalg.norm(z)
            parts, k = [], 0
            for x, m in zip((*p[0], *p[1], p[2]), sizes, strict=True):
                parts.append(x + step * b.asarray(z[k : k + m]))
                k += m
            nu = len(p[0])
            q: SvdrnnParams = (parts[:nu], parts[nu : 2 * nu], parts[-1])
            diff = loss(q) - base
            worst = min(worst, float(diff / (step * step)))
            done += 1
    return worst, done
