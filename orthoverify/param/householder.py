"""The Householder parametrisation of Mhammedi et al. (ICML 2017), as printed.

Notation of the paper: ``H_k(u)`` (eq. 6) is the n x n reflection acting on the last k
coordinates; ``H_1(u) = diag(I, u)`` (eq. 7); ``M_k(u_k, ..., u_n) = H_n(u_n) ... H_k(u_k)``;
``W = M_{n-m+1}`` (eq. 8); ``U = (u_n | ... | u_{n-m+1})`` with column j zero above row j
(eq. 9); ``T = striu(U'U) + diag(U'U)/2`` and the compact WY form ``I - U T^-1 U'`` (Prop. 1);
the gradients of Theorem 2 (eqs. 14, 15); Algorithm 1 (local FP/BP) and its MATLAB listing
(App. D); Algorithm 2 (QR through the H_k, App. A).

Every function is written once against the backend protocol, so the same code runs in
float32/float64 (NumPy, torch), at high precision (mpmath) and exactly (SymPy). Three
independent formulations of the same product exist on purpose: the definition
(:func:`m_map`, dense products of eq. 6 blocks), the compact WY form (:func:`compact_wy`)
and the sequential Algorithm 1 (:func:`algorithm1`); the claims check that they agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from orthoverify.backends import Array, Backend, Scalar
from orthoverify.errors import DomainError, ShapeError, SingularError, ZeroVectorError
from orthoverify.param._validate import (
    BackendLike,
    columns_pow2,
    columns_unscale,
    matrix,
    orthogonality_ratio,
    require_orthogonal,
    resolve,
    scale_pow2,
    unscale_pow2,
    vector,
    vector_or_columns,
)
from orthoverify.param._validate import (
    size as checked_size,
)
from orthoverify.tolerance import THRESHOLD

__all__ = [
    "Algorithm1Result",
    "Algorithm2Result",
    "algorithm1",
    "algorithm1_backward",
    "algorithm1_forward",
    "algorithm1_matlab",
    "algorithm2",
    "compact_wy",
    "h1",
    "inverse",
    "m_map",
    "orthogonality_ratio",
    "reflection",
    "reflector_apply",
    "reflector_product",
    "theorem2_gradients",
    "u_to_vectors",
    "vectors_to_u",
    "wy_t",
]


# --------------------------------------------------------------------------- eq. 6 and 7
def _unit_scaled(b: Backend, u: Array) -> Array:
    """``u`` divided by its largest entry: the reflection is scale-invariant, and scaling
    first keeps ``u'u`` from overflowing or underflowing in floating point."""
    if b.exact:
        return u
    return u / b.max_abs(u)


def _householder_block(b: Backend, u: Array) -> Array:
    """``I_k - 2 u u' / ||u||^2`` for a nonzero k-vector u."""
    v = _unit_scaled(b, u)
    return b.eye(v.shape[0]) - b.outer(v, v) * (2 / (v @ v))


def _check_reflection_vector(b: Backend, u: Any, n: int | None, name: str) -> tuple[Array, int]:
    uu = vector(b, u, name)
    k = uu.shape[0]
    size = k if n is None else n
    if k < 2:
        raise DomainError(f"{name} has length {k}: eq. 6 needs k >= 2 (use h1 for k = 1)")
    if size < k:
        raise ShapeError(f"{name} has length {k} > n = {size}")
    if b.is_zero(uu):
        raise ZeroVectorError(f"{name} is the zero vector: H_{k}(0) is undefined (eq. 6 divides by ||u||^2)")
    return uu, size


def reflection(u: Any, n: int | None = None, *, backend: BackendLike = None) -> Array:
    """``H_k(u)`` of eq. 6: the n x n reflection acting on the last k = len(u) >= 2 coordinates."""
    n = None if n is None else checked_size(n, "n")
    b = resolve(backend, u)
    uu, size = _check_reflection_vector(b, u, n, "u")
    k = uu.shape[0]
    block = _householder_block(b, uu)
    return block if size == k else b.block_diag(b.eye(size - k), block)


def h1(u: Any, n: int, *, backend: BackendLike = None, require_orthogonal: bool = False) -> Array:
    """``H_1(u) = diag(I_{n-1}, u)`` of eq. 7; orthogonal exactly when u is +1 or -1."""
    n = checked_size(n, "n")
    b = resolve(backend, u)
    uu = b.check_array(u, name="u_1")
    if uu.ndim > 1 or (uu.ndim == 1 and uu.shape[0] != 1):
        raise ShapeError(f"u_1 must be a scalar or a length-1 vector, got shape {tuple(uu.shape)}")
    if n < 1:
        raise ShapeError(f"n must be >= 1, got {n}")
    val = uu.reshape(1)
    if require_orthogonal and not (b.equal(val[0], 1) or b.equal(val[0], -1)):
        raise DomainError(f"u_1 = {b.to_float(val[0])!r} but W is orthogonal only when u_1 is +1 or -1 (Sec. 4, eq. 7)")
    return b.block_diag(b.eye(n - 1), b.diag(val))


# --------------------------------------------------------------------------- eq. 8 and 9
def _check_vectors(b: Backend, vectors: Sequence[Any]) -> tuple[list[Array], int]:
    if len(vectors) == 0:
        raise ShapeError("at least one reflection vector is needed")
    vs = [b.check_array(v, name=f"vector {i}") for i, v in enumerate(vectors)]
    vs = [v.reshape(1) if v.ndim == 0 else v for v in vs]
    for i, v in enumerate(vs):
        if v.ndim != 1:
            raise ShapeError(f"vector {i} must be 1-dimensional, got shape {tuple(v.shape)}")
    n = vs[-1].shape[0]
    k0 = vs[0].shape[0]
    lengths = [v.shape[0] for v in vs]
    if lengths != list(range(k0, n + 1)):
        raise ShapeError(f"vectors must be (u_k, ..., u_n) with len(u_i) = i, got lengths {lengths}")
    return vs, n


def m_map(vectors: Sequence[Any], *, backend: BackendLike = None, require_orthogonal: bool = False) -> Array:
    """``M_k(u_k, ..., u_n) = H_n(u_n) ... H_k(u_k)``, the definition: a dense product of
    eq. 6 blocks (eq. 7 for a length-1 u_1). ``vectors`` is ``(u_k, ..., u_n)``."""
    b = resolve(backend, vectors[0] if len(vectors) else None)
    vs, n = _check_vectors(b, vectors)
    w = b.eye(n)
    for v in vs:  # left-multiply: H_n ... H_k, with H_k applied first
        k = v.shape[0]
        if k == 1:
            factor = h1(v, n, backend=b, require_orthogonal=require_orthogonal)
        else:
            factor = reflection(v, n, backend=b)
        w = factor @ w
    return w


def vectors_to_u(vectors: Sequence[Any], *, backend: BackendLike = None) -> tuple[Array, Array | None]:
    """``U = (u_n | ... | u_{n-m+1})`` of eq. 9 from ``(u_{n-m+1}, ..., u_n)``; a length-1
    u_1 (the m = n case) is returned separately as the second value."""
    b = resolve(backend, vectors[0] if len(vectors) else None)
    vs, n = _check_vectors(b, vectors)
    u1 = None
    if vs[0].shape[0] == 1:
        u1, vs = vs[0], vs[1:]
    cols = [b.concat([b.zeros(n - v.shape[0]), v]) for v in reversed(vs)]
    return b.stack_columns(cols, n), u1


def u_to_vectors(u: Any, u1: Any = None, *, backend: BackendLike = None) -> list[Array]:
    """Inverse of :func:`vectors_to_u`: ``(u_1?, u_{n-m+1}, ..., u_n)`` from U (and u_1)."""
    b = resolve(backend, u)
    uu = matrix(b, u, "U")
    m = uu.shape[1]
    out = [uu[j:, j] for j in range(m)]
    out.reverse()
    if u1 is not None:
        out.insert(0, b.check_array(u1, name="u_1").reshape(1))
    return out


def _check_u(b: Backend, u: Any, *, allow_square: bool = False) -> Array:
    uu = matrix(b, u, "U")
    n, m = uu.shape
    if m > n or (m == n and not allow_square and n > 0):
        raise DomainError(
            f"U has m = {m} columns for n = {n}: Prop. 1 and Thm 2 need m <= n - 1 "
            "(for m = n pass U = (u_n | ... | u_2) and u_1 separately)"
        )
    for j in range(m):
        if b.is_zero(uu[:, j]):
            raise ZeroVectorError(f"column {j} of U (u_{n - j}) is zero: its reflection is undefined")
    return uu


def reflector_product(u: Any, *, backend: BackendLike = None) -> Array:
    """``prod_j (I - 2 U_j U_j' / ||U_j||^2)`` over the columns of U, first column leftmost:
    the Householder product of U's full columns (any U, not only eq. 9's shape)."""
    b = resolve(backend, u)
    uu = _check_u(b, u)
    n, m = uu.shape
    w = b.eye(n)
    for j in range(m):
        w = w @ _householder_block(b, uu[:, j])
    return w


def reflector_apply(u: Any, h: Any, *, backend: BackendLike = None) -> Array:
    """``prod_j (I - 2 U_j U_j' / ||U_j||^2) h``, applying the reflections to h one at a time
    (last column first) without forming the product: O(nm) instead of O(n^2 m)."""
    b = resolve(backend, u)
    uu, _ = columns_pow2(b, _check_u(b, u))  # each reflection is invariant to its column's scale
    n, m = uu.shape
    v, vec = vector_or_columns(b, h, "h", n)
    v, fh = scale_pow2(b, v)  # linear in h
    for j in range(m - 1, -1, -1):
        col = uu[:, j : j + 1]
        v = v - col @ ((2 / (b.transpose(col) @ col)) * (b.transpose(col) @ v))
    v = unscale_pow2(b, v, fh)
    return v.reshape(n) if vec else v


# --------------------------------------------------------------------------- Prop. 1
def wy_t(u: Array, b: Backend) -> Array:
    """``T = striu(U'U) + diag(U'U)/2`` of eq. 12."""
    g = b.transpose(u) @ u
    return b.triu(g, 1) + b.diag(b.diagonal(g)) / 2


def _columns_scaled(b: Backend, u: Array) -> Array:
    """U with each column divided by its largest entry (floating point only).

    ``U T^-1 U'`` is unchanged by column scaling (U -> US gives T -> STS), and without it
    U'U overflows or underflows for columns far from unit size.
    """
    if b.exact or u.shape[1] == 0:
        return u
    scales = b.stack([b.max_abs(u[:, j]) for j in range(u.shape[1])])
    return u / scales.reshape(1, -1)


def compact_wy(u: Any, u1: Any = None, *, backend: BackendLike = None) -> Array:
    """``I - U T^-1 U'`` (eq. 13); with ``u1`` given, the m = n variant ``(I - U T^-1 U') H_1(u_1)``."""
    b = resolve(backend, u)
    uu = _columns_scaled(b, _check_u(b, u))
    n, m = uu.shape
    w = b.eye(n) - uu @ b.solve_triangular(wy_t(uu, b), b.transpose(uu), upper=True)
    if u1 is not None:
        if m != n - 1:
            raise ShapeError(f"the m = n variant needs U with n - 1 = {n - 1} columns, got {m}")
        w = w @ h1(u1, n, backend=b)
    return w


# --------------------------------------------------------------------------- Thm 2
def theorem2_gradients(u: Any, h: Any, dl_dc: Any, *, backend: BackendLike = None) -> tuple[Array, Array]:
    """``(dL/dU, dL/dh)`` of eqs. 14 and 15 for ``C = (I - U T^-1 U') h``; h and dL/dC may be
    n x B (a batch), in which case dL/dU is summed over the batch."""
    b = resolve(backend, u)
    uu, hh, cbar, vec, scales = _alg1_inputs(b, u, h, dl_dc)
    n, m = uu.shape
    t = wy_t(uu, b)
    ut = b.transpose(uu)
    h_t = b.solve_triangular(t, ut @ hh, upper=True)  # T^-1 U' h
    c_t = b.solve_triangular(b.transpose(t), ut @ cbar, upper=False)  # T'^-1 U' dL/dC
    ones = b.asarray([[1] * m] * m) if m else b.zeros((0, 0))
    bmat = b.triu(ones, 1) + b.eye(m) / 2  # B = striu(J) + I/2
    hc = h_t @ b.transpose(c_t)
    ch = c_t @ b.transpose(h_t)
    dl_du = uu @ (hc * b.transpose(bmat) + ch * bmat) - cbar @ b.transpose(h_t) - hh @ b.transpose(c_t)
    dl_dh = cbar - uu @ c_t
    dl_du, dl_dh = _alg1_unscale(b, scales, dl_du, dl_dh)
    return dl_du, (dl_dh.reshape(n) if vec else dl_dh)


# --------------------------------------------------------------------------- Alg. 1
@dataclass
class Algorithm1Result:
    """Outputs of Algorithm 1: ``C = W h``, ``dL/dh`` and ``dL/dU`` (summed over a batch)."""

    c: Array
    dl_dh: Array
    dl_du: Array


@dataclass
class Algorithm1Forward:
    """What the local forward propagation leaves for the backward one."""

    big_h: list[Array]  # H_{*,1} ... H_{*,m+1}, each n x B
    h_tilde: list[Array]  # h~_1 ... h~_m, each 1 x B
    norms: list[Scalar]  # N_k = ||U_{*,k}||^2


def algorithm1_forward(u: Array, h: Array, b: Backend) -> Algorithm1Forward:
    """Lines 4-10 of Algorithm 1 on validated 2-D inputs (h is n x B)."""
    m = u.shape[1]
    norms = [b.transpose(u[:, k : k + 1]) @ u[:, k : k + 1] for k in range(m)]  # Alg1 line 4
    big_h: list[Array] = [None] * (m + 1)
    big_h[m] = h  # line 5
    h_tilde: list[Array] = [None] * m
    for k in range(m - 1, -1, -1):  # line 7
        uk = u[:, k : k + 1]
        h_tilde[k] = (2 / norms[k]) * (b.transpose(uk) @ big_h[k + 1])  # Alg1 line 8
        big_h[k] = big_h[k + 1] - uk @ h_tilde[k]  # Alg1 line 9
    return Algorithm1Forward(big_h, h_tilde, norms)


def algorithm1_backward(
    u: Array,
    dl_dc: Array,
    b: Backend,
    fwd: Algorithm1Forward | None = None,
    *,
    c: Array | None = None,
    norms: list[Scalar] | None = None,
) -> tuple[Array, Array]:
    """Lines 11-15 of Algorithm 1: ``(dL/dh, dL/dU)``.

    With ``fwd`` the stored H and h~ of the forward pass are used (Table 2's BP count).
    With ``c = C`` instead, ``H_{*,k+1} = H(U_k) H_{*,k}`` and h~_k are regenerated from C, one
    reflection per step (the paper's "generated locally" variant: O(n B) memory, not O(n m B)).
    """
    n, m = u.shape
    if fwd is None and (c is None or norms is None):
        raise ValueError("algorithm1_backward needs the forward record or C and the norms N")
    nk = fwd.norms if fwd is not None else norms
    assert nk is not None
    g = dl_dc  # line 6
    cols: list[Array] = []
    h_k = c
    for k in range(m):  # line 11
        uk = u[:, k : k + 1]
        if fwd is not None:
            h_next, ht_k = fwd.big_h[k + 1], fwd.h_tilde[k]
        else:  # regenerate: reflecting H_{*,k} gives H_{*,k+1}, and h~_k = -(2/N_k) U_k' H_{*,k}
            ht_k = -((2 / nk[k]) * (b.transpose(uk) @ h_k))  # Alg1 regenerate h~
            h_next = h_k + uk @ ht_k  # Alg1 regenerate H
            h_k = h_next
        c_tilde = (2 / nk[k]) * (b.transpose(uk) @ g)  # Alg1 line 12
        g = g - uk @ c_tilde  # Alg1 line 13
        cols.append(g @ b.transpose(-ht_k) - h_next @ b.transpose(c_tilde))  # Alg1 line 14
    grad_u = b.stack_columns(cols, n) if m else b.zeros((n, 0))
    return g, grad_u  # lines 17, 18


_Scales = tuple[list[int], int, int]


def _alg1_inputs(b: Backend, u: Any, h: Any, dl_dc: Any) -> tuple[Array, Array, Array, bool, _Scales]:
    """Validated U, h, dL/dC (n x B) and whether h was a vector, each scaled by exact powers of
    two where it lies outside the range its products need (U per column; see ``pow2_exponent``),
    with the factors for :func:`_alg1_unscale`. In range (always, for mpmath and exact) nothing
    is scaled and the results are those of the printed formulas bit for bit."""
    uu = _check_u(b, u)
    n = uu.shape[0]
    hh, vec = vector_or_columns(b, h, "h", n)
    cbar, _ = vector_or_columns(b, dl_dc, "dL/dC", n)
    if cbar.shape != hh.shape:
        raise ShapeError(f"dL/dC has shape {tuple(cbar.shape)} but h has {tuple(hh.shape)}")
    uu, fu = columns_pow2(b, uu)
    hh, fh = scale_pow2(b, hh)
    cbar, fg = scale_pow2(b, cbar)
    return uu, hh, cbar, vec, (fu, fh, fg)


def _alg1_unscale(b: Backend, scales: _Scales, dl_du: Array, dl_dh: Array, c: Array | None = None) -> tuple[Any, ...]:
    """Undo :func:`_alg1_inputs`' scaling: C is linear in h, dL/dh in dL/dC, and dL/dU bilinear
    in both and, as the gradient of a function invariant to each column's scale, multiplied by
    that column's factor."""
    ku, kh, kg = scales
    dl_du = columns_unscale(b, dl_du, ku, kh + kg)
    dl_dh = unscale_pow2(b, dl_dh, kg)
    return (dl_du, dl_dh) if c is None else (dl_du, dl_dh, unscale_pow2(b, c, kh))


def algorithm1(u: Any, h: Any, dl_dc: Any, *, backend: BackendLike = None) -> Algorithm1Result:
    """Algorithm 1 as printed: one step of local FP and BP, returning C, dL/dh and dL/dU."""
    b = resolve(backend, u)
    uu, hh, cbar, vec, scales = _alg1_inputs(b, u, h, dl_dc)
    n = uu.shape[0]
    fwd = algorithm1_forward(uu, hh, b)
    dl_dh, dl_du = algorithm1_backward(uu, cbar, b, fwd)
    dl_du, dl_dh, c = _alg1_unscale(b, scales, dl_du, dl_dh, fwd.big_h[0])  # line 16: C = H_{*,1}
    if vec:
        return Algorithm1Result(c.reshape(n), dl_dh.reshape(n), dl_du)
    return Algorithm1Result(c, dl_dh, dl_du)


def algorithm1_matlab(u: Any, h: Any, bpg: Any, *, backend: BackendLike = None) -> Algorithm1Result:
    """The MATLAB listing of App. D (Figure 7), transliterated line by line (1-based indices
    become 0-based; MATLAB's left-to-right evaluation order is kept)."""
    b = resolve(backend, u)
    uu, hh, cbar, vec, scales = _alg1_inputs(b, u, h, bpg)
    if not vec:
        raise ShapeError("the MATLAB listing takes a single vector h, not a batch")
    n, m = uu.shape
    big_g = [b.zeros(n) for _ in range(m)]  # G = zeros(n, m)
    big_h = [b.zeros(n) for _ in range(m + 1)]  # H = zeros(n, m+1)
    nvec: list[Any] = [None] * m  # N = zeros(m) (used as a vector)
    h_tilde: list[Any] = [None] * m  # h_tilde = zeros(m)
    big_h[m] = hh.reshape(n)  # H(:, m+1) = h
    g = cbar.reshape(n)  # g = BPg
    for k in range(m):  # for k = 0:m-1, column m-k (1-based) is index m-1-k
        j = m - 1 - k
        nvec[j] = uu[:, j] @ uu[:, j]  # N(m-k) = U(:, m-k)' * U(:, m-k)
        h_tilde[j] = ((2 / nvec[j]) * uu[:, j]) @ big_h[j + 1]  # 2 / N(m-k) * U(:, m-k)' * H(:, m-k+1)
        big_h[j] = big_h[j + 1] - h_tilde[j] * uu[:, j]  # H(:, m-k) = H(:, m-k+1) - h_tilde(m-k) * U(:, m-k)
    c = big_h[0]  # C = H(:, 1)
    for k in range(m):  # for k = 1:m
        c_tilde_k = ((2 * uu[:, k]) @ g) / nvec[k]  # c_tilde_k = 2*U(:, k)' * g / N(k)
        g = g - c_tilde_k * uu[:, k]  # g = g - c_tilde_k * U(:, k)
        big_g[k] = (-h_tilde[k]) * g - c_tilde_k * big_h[k + 1]  # G(:, k) = -h_tilde(k) * g - c_tilde_k * H(:, k+1)
    grad_u = b.stack_columns(big_g, n) if m else b.zeros((n, 0))
    grad_u, g, c = _alg1_unscale(b, scales, grad_u, g, c)
    return Algorithm1Result(c, g, grad_u)


# --------------------------------------------------------------------------- Alg. 2
@dataclass
class Algorithm2Result:
    """Output of Algorithm 2: ``A = Q R`` with ``Q = H_n(u_n) ... H_1(u_1)``.

    ``vectors`` is ``(u_1, ..., u_n)`` (u_1 of length 1), ready for :func:`m_map`;
    ``aligned[k-1]`` records whether iteration k took the ``R_kk = ||R_{k..n,k}||`` branch.
    """

    vectors: list[Array]
    q: Array
    r: Array
    aligned: list[bool]


Variant = Literal["printed", "stable"]


def _e(b: Backend, length: int, index: int) -> Array:
    e = [0] * length
    e[index] = 1
    return b.asarray(e)


def _alg2_vector(b: Backend, x: Array, variant: Variant) -> tuple[Array, bool]:
    """The reflection vector of one iteration of Algorithm 2 and whether the branch was taken."""
    length = x.shape[0]
    if variant == "printed":
        nx = b.norm(x)
        if b.is_zero(nx):
            raise SingularError("A is rank deficient (a column is in the span of the previous ones)")
        if b.equal(x[0], nx):  # "if R_kk = ||R_{k..n,k}||"
            return _e(b, length, length - 1), True
        u = x - nx * _e(b, length, 0)
        return u / b.norm(u), False
    # stable: the branch fires only on an exactly zero sub-column, and the first entry of
    # x - ||x|| e_1 is formed without cancellation when x_1 > 0: x_1 - ||x|| = -s^2 / (x_1 + ||x||).
    tail = x[1:]
    s = b.norm(tail)
    if b.is_zero(s):
        if b.positive(x[0]):
            return _e(b, length, length - 1), True
        if b.is_zero(x[0]):
            raise SingularError("A is rank deficient (a column is in the span of the previous ones)")
        return _e(b, length, 0), False  # x = (x_1 < 0, 0...): reflecting e_1 maps it to |x_1| e_1
    nx = b.norm(x)
    if b.positive(x[0]):
        first = -(s * (s / (x[0] + nx)))
    else:
        first = x[0] - nx
    u = b.concat([b.stack([first]), tail])
    return u / b.norm(u), False


def algorithm2(a: Any, *, backend: BackendLike = None, variant: Variant = "printed") -> Algorithm2Result:
    """Algorithm 2 (App. A): QR through the maps H_k, R with positive diagonal.

    ``variant="printed"`` runs the algorithm exactly as printed (exact branch test, ``u = x -
    ||x|| e_1``). ``variant="stable"`` computes the same reflections in exact arithmetic but
    avoids the cancellation of the printed formula in floating point (see the
    ``householder.algorithm2_float`` claim for why this matters).
    """
    b = resolve(backend, a)
    aa = matrix(b, a, "A", square=True)
    n = aa.shape[0]
    if n == 0:
        raise ShapeError("A must be at least 1 x 1")
    r = aa
    q = b.eye(n)
    vectors: list[Array] = []
    aligned: list[bool] = []
    for k in range(n - 1):
        u, took = _alg2_vector(b, r[k:, k], variant)
        hk = reflection(u, n, backend=b)
        r = hk @ r
        q = q @ hk
        vectors.append(u)
        aligned.append(took)
    rnn = r[n - 1, n - 1]
    if b.is_zero(rnn):
        raise SingularError("A is rank deficient (R_nn = 0)")
    u1 = b.stack([b.sign(rnn)])
    h_1 = h1(u1, n, backend=b)
    r = h_1 @ r
    q = q @ h_1
    vectors.append(u1)
    vectors.reverse()
    return Algorithm2Result(vectors, q, r, aligned)


def inverse(q: Any, *, backend: BackendLike = None, threshold: float = THRESHOLD) -> list[Array]:
    """Reflection vectors ``(u_1, ..., u_n)`` with ``M_1(u_1, ..., u_n) = Q`` for orthogonal Q
    (Theorem 1's construction, through the stable Algorithm 2)."""
    b = resolve(backend, q)
    qq = require_orthogonal(b, q, "Q", threshold)
    return algorithm2(qq, backend=b, variant="stable").vectors
