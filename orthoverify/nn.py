"""orthoverify's parametrisations as ``torch.nn.utils.parametrize`` modules.

Each module maps ONE unconstrained tensor X to a weight matrix (``forward``, differentiable by
autograd) by calling the same :mod:`orthoverify.param` functions the claims check, so the weight
a layer trains with is the one orthoverify verifies::

    layer = nn.Linear(n, n, bias=False)
    parametrize.register_parametrization(layer, "weight", HouseholderOrthogonal(n))
    layer.weight = w                      # w orthogonal: right_inverse finds its exact preimage

* :class:`HouseholderOrthogonal`: ``W = H_n(u_n) ... H_{n-m+1}(u_{n-m+1})`` (Mhammedi et al., eq. 8-9);
* :class:`ScaledCayleyOrthogonal`: ``W = (I + A)^-1 (I - A) D`` (scoRNN, Theorem 3.1);
* :class:`SVDParametrization`: ``W = U Sigma V'`` (svdRNN, eq. 3 and 8);
* :class:`URNNUnitary`: the real 2n x 2n block form of ``W = D3 R2 F^-1 D2 Pi R1 F D1`` (uRNN).

Every W acts on column vectors (``y = W x``; ``nn.Linear`` computes ``x W'`` for rows x).

``right_inverse(W)`` (what ``register_parametrization`` and ``layer.weight = W`` call), the same
three cases for every module:

1. W is reachable and the module can invert it: an X with ``forward(X) == W`` (to rounding).
2. W is orthogonal (a real target for these modules) but not reachable, or the module has no
   inverse for it: :class:`~orthoverify.errors.DomainError` saying why.
3. W is not orthogonal and not reachable, e.g. the random init of a fresh ``nn.Linear`` that
   ``register_parametrization`` passes in: no X gives it, so X is drawn from the module's
   documented initialisation (torch's global generator: ``torch.manual_seed`` reproduces it).
   With ``strict=True`` this case raises instead (NotOrthogonalError, or DomainError for SVD).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor, nn

from orthoverify.backends import infer_backend
from orthoverify.backends.torch_backend import float_tensor
from orthoverify.errors import (
    ConvergenceError,
    DomainError,
    DTypeError,
    InputError,
    NonFiniteError,
    NotOrthogonalError,
    ShapeError,
    SingularError,
)
from orthoverify.param import cayley, householder, svd, unitary
from orthoverify.param._validate import integer, orthogonality_ratio, real, size
from orthoverify.param.cayley_torch import scaled_cayley_weight
from orthoverify.param.householder_torch import householder_apply
from orthoverify.tolerance import THRESHOLD

__all__ = [
    "THRESHOLD",
    "HouseholderOrthogonal",
    "SVDParametrization",
    "ScaledCayleyOrthogonal",
    "URNNUnitary",
]


# --------------------------------------------------------------------------- validation
def _size(value: object, name: str) -> int:
    """A positive integer size: ShapeError naming the argument."""
    return size(value, name, minimum=1)


def _count(value: object, name: str, n: int) -> int:
    """A number of reflections in [1, n] (None means n): DomainError when outside."""
    if value is None:
        return n
    v = integer(value, name)
    if not 1 <= v <= n:
        raise DomainError(f"{name} = {v} reflections for n = {n}: need 1 <= {name} <= n")
    return v


def _tensor(x: object, shape: tuple[int, int], name: str) -> Tensor:
    """A float32/float64 tensor of exactly ``shape``."""
    x = float_tensor(x, name)
    if tuple(x.shape) != shape:
        raise ShapeError(f"{name} must have shape {shape}, got {tuple(x.shape)}")
    return x


def _weight(w: object, size: int) -> Tensor:
    """A finite size x size float tensor, detached (right_inverse never records a graph)."""
    ww = _tensor(w, (size, size), "W").detach()
    if not bool(torch.isfinite(ww).all()):
        raise NonFiniteError("W contains NaN or Inf")
    return ww


def _orthogonality(w: Tensor) -> float:
    """The project's orthogonality test ratio ``||W'W - I||_F / (n eps)`` of W in its own dtype."""
    wd = w.detach()
    return orthogonality_ratio(wd, infer_backend(wd))


def _not_orthogonal(ratio: float, what: str) -> NotOrthogonalError:
    return NotOrthogonalError(
        f"W is not orthogonal (||W'W - I||_F / (n eps) = {ratio:.3g} > {THRESHOLD}): no X gives it, "
        f"since every output of {what} is orthogonal (strict=True; with strict=False X is re-initialised)",
        ratio=ratio,
        threshold=THRESHOLD,
    )


def _pack_columns(vectors: Sequence[Tensor], n: int, like: Tensor) -> Tensor:
    """Eq. 9's lower-trapezoidal block from ``(u_k, ..., u_n)`` (increasing length): column j
    holds u_{n-j} in rows j..n-1, zeros above."""
    m = len(vectors)
    out = like.new_zeros(n, m)
    for j in range(m):
        v = vectors[m - 1 - j].reshape(-1)
        out[j:, j] = v.to(dtype=like.dtype, device=like.device)
    return out


def _unpack_columns(block: Tensor) -> list[Tensor]:
    """``(u_k, ..., u_n)`` (increasing length) from an eq. 9 block: u_{n-j} = block[j:, j]."""
    m = block.shape[1]
    return [block[j:, j] for j in range(m - 1, -1, -1)]


def _reflections(u: Tensor) -> Tensor:
    """``prod_j (I - 2 U_j U_j' / U_j'U_j)`` over U's columns, first column leftmost, with a zero
    column giving I (eq. 1 of the svdRNN paper: H(0) = I). O(n^2 m) rank-one updates; each
    column is scaled by its largest entry first (the reflection is scale invariant)."""
    n, m = u.shape
    w = torch.eye(n, dtype=u.dtype, device=u.device)
    one = u.new_ones(())
    for j in range(m):
        v = u[:, j]
        big = v.abs().amax()
        v = v / torch.where(big > 0, big, one)
        vv = v @ v
        coef = 2 / torch.where(vv > 0, vv, one)  # a zero column leaves w unchanged, without 0/0
        w = w - torch.outer(w @ v, v * coef)
    return w


class _Parametrization(nn.Module):
    """What the four modules share: the X shape, the weight size, strictness of right_inverse."""

    n: int
    strict: bool

    @property
    def x_shape(self) -> tuple[int, int]:
        """The shape of the unconstrained tensor X."""
        raise NotImplementedError

    @property
    def weight_size(self) -> int:
        """The weight is ``weight_size x weight_size``."""
        return self.n

    def initial_x(self, *, dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> Tensor:
        """A fresh X from the module's default initialisation (torch's global generator)."""
        raise NotImplementedError

    def _fresh(self, w: Tensor, ratio: float, what: str) -> Tensor:
        """Case 3 of right_inverse: a non-orthogonal, unreachable W re-initialises X."""
        if self.strict:
            raise _not_orthogonal(ratio, what)
        return self.initial_x(dtype=w.dtype, device=w.device)


# --------------------------------------------------------------------------- Householder
class HouseholderOrthogonal(_Parametrization):
    """``W = H_n(u_n) H_{n-1}(u_{n-1}) ... H_{n-m+1}(u_{n-m+1})`` (Mhammedi et al., eq. 8), n x n.

    X: shape (n, m), m = n by default. Only X's lower trapezoid is read: column j holds
    ``u_{n-j}`` in rows j..n-1 (eq. 9's U = (u_n | ... | u_{n-m+1}), entries above row j ignored,
    their gradient zero). H_k(u) = diag(I_{n-k}, I_k - 2 u u' / u'u) (eq. 6), so W is the
    product of the columns' reflections with column 0 leftmost, as
    :func:`~orthoverify.param.householder.reflector_product` and ``m_map`` define it; it is
    computed by :func:`~orthoverify.param.householder_torch.householder_apply` (Algorithm 1 as
    an autograd Function). A zero column is outside eq. 6's domain (ZeroVectorError).

    m = n: the last column is the length-1 ``u_1`` of eq. 7, ``H_1(u_1) = diag(I, u_1)``,
    orthogonal only for u_1 = +-1 (Sec. 4); X[n-1, n-1] is read through its sign (u_1 = -1 if it
    is negative, else +1; gradient zero), so W = M_1(u_1, ..., u_n) reaches every orthogonal
    matrix (Theorem 1). m < n reaches only products of m reflections (det (-1)^m).

    right_inverse: m = n and W orthogonal: Theorem 1's preimage
    (:func:`~orthoverify.param.householder.inverse`, the stable Algorithm 2), det +1 or -1.
    m < n and W orthogonal: DomainError (no inverse is implemented). Otherwise see the module doc.
    """

    def __init__(self, n: int, m: int | None = None, *, strict: bool = False) -> None:
        super().__init__()
        self.n = _size(n, "n")
        self.m = _count(m, "m", self.n)
        self.strict = bool(strict)

    @property
    def x_shape(self) -> tuple[int, int]:
        return (self.n, self.m)

    def forward(self, X: Tensor) -> Tensor:
        """The n x n orthogonal W in X's dtype and device (differentiable in X's lower trapezoid)."""
        x = _tensor(X, self.x_shape, "X")
        n = self.n
        k = min(self.m, n - 1)  # reflections of length >= 2
        u = x[:, :k].tril()
        w = householder_apply(u, torch.eye(n, dtype=x.dtype, device=x.device))
        if self.m == n:  # right factor H_1(u_1) = diag(I, u_1): scales W's last column by u_1
            u1 = torch.where(x[n - 1, n - 1] < 0, -1.0, 1.0).to(x.dtype).detach()
            w = torch.cat([w[:, : n - 1], w[:, n - 1 :] * u1], dim=1)
        return w

    def right_inverse(self, W: Tensor) -> Tensor:
        """X with forward(X) = W; see the class doc for what is supported."""
        w = _weight(W, self.n)
        ratio = _orthogonality(w)
        if not ratio <= THRESHOLD:
            return self._fresh(w, ratio, "HouseholderOrthogonal")
        if self.m < self.n:
            raise DomainError(
                f"right_inverse needs m = n: with m = {self.m} < n = {self.n} reflections W reaches only "
                "products of m reflections (rank(W - I) <= m, det W = (-1)^m), and no inverse onto that set is "
                "implemented; use m = n (Theorem 1) to assign any orthogonal W"
            )
        vectors = householder.inverse(w)  # (u_1, ..., u_n), u_1 = +-1
        return _pack_columns(vectors, self.n, w)

    def initial_x(self, *, dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> Tensor:
        """Standard normal entries on eq. 9's pattern (nonzero columns with probability 1)."""
        return torch.randn(self.n, self.m, dtype=dtype, device=device).tril()

    def extra_repr(self) -> str:
        return f"n={self.n}, m={self.m}"


# --------------------------------------------------------------------------- scaled Cayley
def _signs(n: int, d: object, rho: object) -> tuple[int, ...]:
    """D's signs from ``d`` (n entries +-1), from ``rho`` (-1 first, as signs_with_rho), or all +1."""
    if d is not None and rho is not None:
        raise InputError("give d or rho, not both")
    if rho is not None:
        if isinstance(rho, bool):
            raise DomainError(f"rho must be an integer in [0, n] = [0, {n}], got {rho!r}")
        try:
            r = operator.index(rho)  # type: ignore[arg-type]
        except TypeError:
            raise DomainError(f"rho must be an integer in [0, n] = [0, {n}], got {rho!r}") from None
        return cayley.signs_with_rho(n, r)
    if d is None:
        return (1,) * n
    if isinstance(d, (str, bytes)) or not isinstance(d, (Sequence, np.ndarray, Tensor)):
        raise DTypeError(f"d must be a sequence of +1 and -1, got {type(d).__name__}")
    arr = np.asarray(d.detach().cpu() if isinstance(d, Tensor) else d)
    if arr.dtype.kind not in "iuf":
        raise DTypeError(f"d must hold the numbers +1 and -1, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ShapeError(f"d must have n = {n} entries, got shape {arr.shape}")
    for i, v in enumerate(arr.tolist()):
        if v not in (1, -1):
            raise DomainError(f"d must have entries +1 or -1 only; d[{i}] is {v}")
    return tuple(int(v) for v in arr.tolist())


class ScaledCayleyOrthogonal(_Parametrization):
    """``W = (I + A)^-1 (I - A) D`` (scoRNN, Theorem 3.1), n x n, D fixed at construction.

    X: shape (n, n); only its strict upper triangle is read: ``A = triu(X, 1) - triu(X, 1)'``
    (:func:`~orthoverify.param.cayley_torch.skew_from_upper`; diagonal and lower triangle
    ignored, gradient zero there). W comes from
    :func:`~orthoverify.param.cayley_torch.scaled_cayley_weight` (Theorem 3.2 as backward).
    D = diag(d): ``d`` n signs +-1, or ``rho`` = the number of -1 entries, placed FIRST (as
    :func:`~orthoverify.param.cayley.signs_with_rho` and ScaledCayleyRecurrent do), default all
    +1; D is a buffer, never trained. Reaches the orthogonal W with det W = det D such that
    W D has no eigenvalue -1 (an open dense subset of that component).

    right_inverse, W orthogonal: :func:`~orthoverify.param.cayley.scaled_cayley_inverse` (A with
    |a_ij| <= 1, certified); if the D it picks differs from the module's, the plain inverse
    ``A = (I + W D)^-1 (I - W D)`` with the module's D (in float64). DomainError when det W !=
    det D or I + W D is singular in W's precision: W is not reachable with this D.
    """

    d: Tensor

    def __init__(
        self, n: int, d: Sequence[int] | Tensor | None = None, rho: int | None = None, *, strict: bool = False
    ) -> None:
        super().__init__()
        self.n = _size(n, "n")
        self.signs = _signs(self.n, d, rho)
        self.strict = bool(strict)
        self.register_buffer("d", torch.tensor(self.signs, dtype=torch.float64))

    @property
    def x_shape(self) -> tuple[int, int]:
        return (self.n, self.n)

    @property
    def rho(self) -> int:
        """The number of -1 entries of D."""
        return sum(1 for s in self.signs if s < 0)

    def forward(self, X: Tensor) -> Tensor:
        """The n x n orthogonal W in X's dtype and device (differentiable in X's strict upper triangle)."""
        x = _tensor(X, self.x_shape, "X")
        return scaled_cayley_weight(x, self.d.to(device=x.device))

    def right_inverse(self, W: Tensor) -> Tensor:
        """X (A's strict upper triangle) with forward(X) = W; see the class doc."""
        w = _weight(W, self.n)
        ratio = _orthogonality(w)
        if not ratio <= THRESHOLD:
            return self._fresh(w, ratio, "ScaledCayleyOrthogonal")
        try:
            inv = cayley.scaled_cayley_inverse(w)
            if tuple(inv.d) == self.signs:
                return inv.a.triu(1).to(dtype=w.dtype)
        except ConvergenceError:
            pass  # rounding cycled the pair flips: the plain inverse below still decides
        return self._plain_inverse(w)

    def _plain_inverse(self, w: Tensor) -> Tensor:
        """``triu((I + W D)^-1 (I - W D), 1)`` for the module's D, or DomainError."""
        n = self.n
        w64 = w.to(torch.float64)
        d64 = self.d.to(device=w.device)
        det_w = float(torch.linalg.det(w64))
        det_d = math.prod(self.signs)
        if det_w * det_d < 0:
            raise DomainError(
                f"W is not reachable with this D: det W = {det_w:+.3g} but det D = {det_d:+d}, and every "
                "(I + A)^-1 (I - A) D has det D; choose d (or rho) with det D = det W"
            )
        eye = torch.eye(n, dtype=torch.float64, device=w.device)
        wd = w64 * d64
        smin = float(torch.linalg.svdvals(eye + wd).min())
        eps = torch.finfo(w.dtype).eps
        if not smin > n * eps:
            raise DomainError(
                f"W is not reachable with this D: W D has an eigenvalue -1 (smallest singular value of I + W D "
                f"is {smin:.3g}, at the rounding level of {str(w.dtype).replace('torch.', '')}), where the "
                "Cayley transform is undefined; another D (scaled_cayley_inverse picks one) reaches W"
            )
        try:
            a = torch.linalg.solve(eye + wd, eye - wd)
        except RuntimeError as exc:  # pragma: no cover - excluded by the singular-value test above
            raise SingularError(f"I + W D is singular ({exc})") from None
        return ((a - a.transpose(0, 1)) / 2).triu(1).to(dtype=w.dtype)

    def initial_x(self, *, dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> Tensor:
        """Sec. 4.2's A: 2 x 2 blocks [[0, s_j], [-s_j, 0]], s_j = sqrt((1 - cos t)/(1 + cos t)),
        t_j uniform on [0, pi/2] (so |a_ij| <= 1)."""
        t = (torch.rand(self.n // 2, dtype=torch.float64) * (math.pi / 2)).numpy()
        a = np.asarray(cayley.init_blocks(cayley.init_s(t), self.n, backend="numpy-float64"), dtype=np.float64)
        return torch.as_tensor(np.triu(a, 1), dtype=dtype, device=device)

    def extra_repr(self) -> str:
        return f"n={self.n}, rho={self.rho}"


# --------------------------------------------------------------------------- SVD (svdRNN)
class SVDParametrization(_Parametrization):
    """``W = U diag(sigma) V'`` (svdRNN, eq. 3: ``M_{k1,k2} = H_n(u_n)...H_k1(u_k1) Sigma
    H_k2(v_k2)...H_n(v_n)``), n x n, with k1 = n - m1 + 1 and k2 = n - m2 + 1.

    X: shape (n, m1 + m2 + 1) (m1 = m2 = n by default). Columns [0, m1): U's block, column j
    = u_{n-j} in rows j..n-1 (eq. 9's pattern; entries above ignored), so
    ``U = H_n(u_n) ... H_k1(u_k1)`` (column 0 leftmost); columns [m1, m1 + m2): V's block
    likewise, ``V = H_n(v_n) ... H_k2(v_k2)``; last column: s, and
    ``sigma = sigma_map(s) = sigma_star + r tanh(s/2)`` (eq. 8), in (sigma_star - r, sigma_star + r).
    Reflections follow svd.py's eq. 1: ``H(0) = I`` and a length-1 u_1 gives diag(I, -1) when
    nonzero (sign flip) and I when zero. Computed by O(n^2 m) rank-one updates and checked
    against :func:`~orthoverify.param.svd.m_k1k2`. W is orthogonal only when every sigma_i is 1.

    right_inverse: m1 = m2 = n and every singular value of W inside the open interval
    (sigma_star - r, sigma_star + r): :func:`~orthoverify.param.svd.svd_parameters` and
    :func:`~orthoverify.param.svd.sigma_map_inverse` (Theorem 2), orthogonal or not. Orthogonal
    W otherwise (m1 or m2 < n, or 1 outside the interval): DomainError. A non-orthogonal W that
    is not reachable re-initialises X (module doc, case 3), or raises DomainError when strict.
    """

    def __init__(
        self,
        n: int,
        m1: int | None = None,
        m2: int | None = None,
        sigma_star: float = 1.0,
        r: float = 1.0,
        *,
        strict: bool = False,
    ) -> None:
        super().__init__()
        self.n = _size(n, "n")
        self.m1 = _count(m1, "m1", self.n)
        self.m2 = _count(m2, "m2", self.n)
        self.sigma_star = real(sigma_star, "sigma_star")
        self.r = real(r, "r")
        if not self.r > 0:
            raise DomainError(f"r = {self.r} must be > 0: eq. 8 maps onto (sigma_star - r, sigma_star + r)")
        self.strict = bool(strict)

    @property
    def x_shape(self) -> tuple[int, int]:
        return (self.n, self.m1 + self.m2 + 1)

    def split(self, X: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """``(U block, V block, s)`` of X, the blocks with eq. 9's zero pattern applied."""
        x = _tensor(X, self.x_shape, "X")
        return x[:, : self.m1].tril(), x[:, self.m1 : self.m1 + self.m2].tril(), x[:, -1]

    def forward(self, X: Tensor) -> Tensor:
        """The n x n W in X's dtype and device (differentiable)."""
        ub, vb, s = self.split(X)
        for part, what in ((ub, "X's U block"), (vb, "X's V block"), (s, "X's last column (s)")):
            if not bool(torch.isfinite(part).all()):  # as HouseholderOrthogonal: no NaN passed through
                raise NonFiniteError(f"{what} contains NaN or Inf")
        sigma = svd.sigma_map(s, self.sigma_star, self.r)
        return (_reflections(ub) * sigma) @ _reflections(vb).transpose(0, 1)

    def right_inverse(self, W: Tensor) -> Tensor:
        """X with forward(X) = W; see the class doc for what is supported."""
        w = _weight(W, self.n)
        lo, hi = self.sigma_star - self.r, self.sigma_star + self.r
        sv = torch.linalg.svdvals(w)
        inside = bool(((sv > lo) & (sv < hi)).all())
        if inside and self.m1 == self.m2 == self.n:
            p = svd.svd_parameters(w)
            s = svd.sigma_map_inverse(p.sigma, self.sigma_star, self.r)
            ub = _pack_columns(p.us, self.n, w)
            vb = _pack_columns(p.vs, self.n, w)
            return torch.cat([ub, vb, s.reshape(self.n, 1).to(w.dtype)], dim=1)
        why = (
            f"m1 = {self.m1}, m2 = {self.m2}: only m1 = m2 = n = {self.n} has an inverse (Theorem 2); fewer "
            "reflections reach only part of the matrices and no inverse onto that part is implemented"
            if inside
            else f"its singular values lie in [{float(sv.min()):.6g}, {float(sv.max()):.6g}], outside the open "
            f"interval ({lo:g}, {hi:g}) that eq. 8's sigma map reaches"
        )
        if self.strict or _orthogonality(w) <= THRESHOLD:
            raise DomainError(f"W is not reachable by SVDParametrization: {why}")
        return self.initial_x(dtype=w.dtype, device=w.device)

    def initial_x(self, *, dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> Tensor:
        """Standard normal reflection blocks (eq. 9's pattern) and s = 0 (every sigma_i = sigma_star)."""
        x = torch.randn(self.n, self.m1 + self.m2 + 1, dtype=dtype, device=device)
        ub, vb = x[:, : self.m1].tril(), x[:, self.m1 : self.m1 + self.m2].tril()
        return torch.cat([ub, vb, x.new_zeros(self.n, 1)], dim=1)

    def extra_repr(self) -> str:
        return f"n={self.n}, m1={self.m1}, m2={self.m2}, sigma_star={self.sigma_star:g}, r={self.r:g}"


# --------------------------------------------------------------------------- uRNN
def _permutation(perm: object, n: int) -> tuple[int, ...]:
    """A permutation of 0..n-1 as a tuple (``(Pi x)_i = x_perm[i]``); identity when None."""
    if perm is None:
        return tuple(range(n))
    if isinstance(perm, (str, bytes)) or not isinstance(perm, (Sequence, np.ndarray, Tensor)):
        raise DomainError(f"permutation must be a sequence of n = {n} integers, got {type(perm).__name__}")
    vals = perm.detach().cpu().tolist() if isinstance(perm, Tensor) else list(np.asarray(perm).tolist())
    if len(vals) != n:
        raise ShapeError(f"permutation must have n = {n} entries, got {len(vals)}")
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) or float(v) != int(v) for v in vals):
        raise DomainError(f"permutation must hold integers, got {vals!r}")
    p = [int(v) for v in vals]
    if sorted(p) != list(range(n)):
        raise DomainError(f"permutation is not a permutation of 0..{n - 1}: {p}")
    return tuple(p)


class URNNUnitary(_Parametrization):
    """The uRNN matrix ``W = D3 R2 F^-1 D2 Pi R1 F D1`` (Arjovsky et al., Sec. 2) in its real
    2n x 2n block form ``[[Re W, -Im W], [Im W, Re W]]`` (eq. 5 of Mhammedi et al.), so it can
    parametrise a real ``nn.Linear(2n, 2n)`` acting on ``(Re h, Im h)``.

    X: shape (7, n), every entry used: rows 0, 1, 2 = w1, w2, w3, the phases of
    D_k = diag(exp(i w_k)); rows 3, 4 = Re v1, Im v1 and rows 5, 6 = Re v2, Im v2, the vectors
    of the reflections R_k = I - 2 v_k v_k* / ||v_k||^2 (a zero v_k raises ZeroVectorError).
    F is the unitary DFT, F_jk = exp(-2 pi i jk/n)/sqrt(n); Pi is fixed at construction,
    ``(Pi x)_i = x[permutation[i]]`` (default identity). Built by
    :func:`~orthoverify.param.unitary.urnn_parameters`, ``urnn_apply`` (torch.fft) and
    ``embed_matrix``; the output is orthogonal (W is unitary).

    right_inverse: no inverse map exists in orthoverify; for n >= 6 the image has measure zero
    in U(n) (rank <= 7n - 7 < n^2, proofs/unitary.md), so an orthogonal W raises DomainError.
    A non-orthogonal W re-initialises (module doc, case 3).
    """

    def __init__(self, n: int, permutation: Sequence[int] | Tensor | None = None, *, strict: bool = False) -> None:
        super().__init__()
        self.n = _size(n, "n")
        self.permutation = _permutation(permutation, self.n)
        self.strict = bool(strict)

    @property
    def x_shape(self) -> tuple[int, int]:
        return (7, self.n)

    @property
    def weight_size(self) -> int:
        return 2 * self.n

    def parameters_of(self, X: Tensor) -> unitary.URNNParameters:
        """X unpacked into :class:`~orthoverify.param.unitary.URNNParameters` (validated)."""
        x = _tensor(X, self.x_shape, "X")
        return unitary.urnn_parameters(x[0], x[1], x[2], (x[3], x[4]), (x[5], x[6]), list(self.permutation))

    def forward(self, X: Tensor) -> Tensor:
        """The real 2n x 2n block form of W, in X's dtype and device (differentiable)."""
        p = self.parameters_of(X)
        w = unitary.urnn_apply(p, unitary.ceye(p.backend, self.n), fft_path="native")
        return unitary.embed_matrix(w, backend=p.backend)

    def right_inverse(self, W: Tensor) -> Tensor:
        """Supported only as re-initialisation for a non-orthogonal W; see the class doc."""
        w = _weight(W, 2 * self.n)
        ratio = _orthogonality(w)
        if not ratio <= THRESHOLD:
            return self._fresh(w, ratio, "URNNUnitary")
        raise DomainError(
            "URNNUnitary has no right_inverse: W = D3 R2 F^-1 D2 Pi R1 F D1 has 7n real parameters and, for "
            f"n >= 6, Jacobian rank <= 7n - 7 < n^2 = dim U(n), so its image has measure zero and a given unitary "
            f"is almost never reachable (n = {self.n}); no inverse map is implemented for any n. Set X directly "
            "(parametrizations.weight.original) instead"
        )

    def initial_x(self, *, dtype: torch.dtype = torch.float64, device: torch.device | str | None = None) -> Tensor:
        """Sec. 3.4's initialisation: phases uniform on [-pi, pi], Re and Im of v uniform on [-1, 1]."""
        x = torch.rand(7, self.n, dtype=dtype, device=device) * 2 - 1
        x[:3] *= math.pi
        return x

    def extra_repr(self) -> str:
        ident = self.permutation == tuple(range(self.n))
        return f"n={self.n}, permutation={'identity' if ident else list(self.permutation)}"
