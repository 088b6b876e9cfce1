"""The scaled Cayley transform of the scoRNN paper (Helfrich, Willmott & Ye; paper key ``cayley``).

* :func:`cayley`, :func:`inverse_cayley`: W = (I + A)^-1 (I - A) and A = (I + W)^-1 (I - W)
  (Sec. 3.1). For skew A the factors commute, so W also equals (I - A)(I + A)^-1.
* :func:`scaled_cayley`: W = (I + A)^-1 (I - A) D with D = diag(+-1) (Theorem 3.1).
* :func:`scaled_cayley_inverse`: for *any* orthogonal W, a D and a skew A with every
  |a_ij| <= 1 and W = (I + A)^-1 (I - A) D, with a certificate. The paper gives no algorithm;
  this one is derived and proved in ``proofs/cayley.md`` (Kahan's question, answered for real
  matrices by O'Dorney: a D maximising |det(I + W D)| has all |a_ij| <= 1):

  1. sign-chosen elimination: Gaussian elimination on I + W D that picks each sign d_p as it
     reaches pivot p, so the pivot is 1 + |q_pp| >= 1. The Schur complement of an orthogonal
     matrix's ``1 + q_pp`` pivot is again of the form I + Q' D' with Q' orthogonal, so every
     pivot lies in [1, 2] and |det(I + W D)| >= 1: I + W D is invertible, in O(n^3).
  2. pair flips: while some |a_jk| > 1, flip d_j and d_k. That multiplies |det(I + W D)| by
     a_jk^2 > 1 and updates A by a rank-2 principal pivot (O(n^2)). Since |det(I + W D)|
     <= 2^n and step 1 leaves it >= 1, at most n ln 2 / (2 ln t) flips have |a_jk| >= t for
     any t > 1 (polynomial for any bound 1 + delta; for the exact bound 1 the loop terminates,
     since no D repeats, but no polynomial bound on its flips is proved: see proofs/cayley.md).

* :func:`cayley_gradient`: Theorem 3.2, dL/dA = V' - V with V = (I + A)^-T dL/dW (D + W').
* :func:`three_layers` (Sec. 4), :func:`modrelu_real` and :func:`modrelu_printed` (Sec. 4.1,
  eq. 3), :func:`init_blocks` (Sec. 4.2), :func:`stiefel_cayley_step` (the multiplicative
  update of Wisdom et al. that App. B compares against).

Everything is written once against the backend protocol, so the same code runs in float32,
float64, torch, 50-digit mpmath and exact SymPy arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from orthoverify.backends import Array, Backend, get_backend
from orthoverify.errors import ConvergenceError, DomainError, ShapeError, SingularError
from orthoverify.param._validate import (
    BackendLike,
    integer,
    matrix,
    orthogonality_ratio,
    require_orthogonal,
    resolve,
    vector_or_columns,
)
from orthoverify.param._validate import (
    size as checked_size,
)
from orthoverify.tolerance import THRESHOLD

__all__ = [
    "Certificate",
    "ScaledCayleyInverse",
    "cayley",
    "cayley_gradient",
    "init_angles",
    "init_blocks",
    "init_s",
    "inverse_cayley",
    "modrelu_printed",
    "modrelu_real",
    "pair_flip",
    "parameter_count",
    "scaled_cayley",
    "scaled_cayley_inverse",
    "sign_choice",
    "signs_with_rho",
    "skew_ratio",
    "stiefel_cayley_step",
    "three_layers",
]



# =============================================================================== validation
def skew_ratio(a: Array, b: Backend) -> float:
    """``||A + A'||_F / (n eps ||A||_F)``: how far from skew-symmetric, as a test ratio
    (exact arithmetic: 0 when A' = -A exactly, else infinity)."""
    n = a.shape[0]
    s = a + b.transpose(a)
    if b.exact:
        return 0.0 if b.is_zero(s) else math.inf
    num = b.to_float(b.norm(s))
    if num == 0.0:
        return 0.0
    den = max(n, 1) * (b.eps * b.to_float(b.norm(a)) + b.tiny)
    return num / den


def _skew(b: Backend, a: Any, name: str, threshold: float) -> Array:
    aa = matrix(b, a, name, square=True)
    if aa.shape[0] == 0:
        raise ShapeError(f"{name} must be at least 1 x 1")
    r = skew_ratio(aa, b)
    if not r <= threshold:
        raise DomainError(
            f"{name} is not skew-symmetric: ||{name} + {name}'||_F / (n eps ||{name}||_F) = {r:.3g} > {threshold}"
        )
    return aa


def _signs(b: Backend, d: Any, n: int) -> tuple[int, ...]:
    """D as a tuple of +-1 ints, from a length-n sequence of signs or an n x n diagonal matrix."""
    arr = np.asarray(b.to_numpy(b.asarray(d, name="D")) if not isinstance(d, (list, tuple)) else d, dtype=object)
    if arr.ndim == 2:
        if arr.shape != (n, n):
            raise ShapeError(f"D must be {n} x {n} (or a length-{n} vector of signs), got shape {arr.shape}")
        off = arr.copy()
        np.fill_diagonal(off, 0)
        if any(float(v) != 0.0 for v in off.reshape(-1)):
            raise DomainError("D must be diagonal")
        arr = np.diagonal(arr)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ShapeError(f"D must have {n} diagonal entries, got shape {arr.shape}")
    out = []
    for i, v in enumerate(arr):
        fv = float(v)
        if fv not in (1.0, -1.0):
            raise DomainError(f"D must have entries +1 or -1 only; entry {i} is {v}")
        out.append(int(fv))
    return tuple(out)


def _solve(b: Backend, lhs: Array, rhs: Array, what: str) -> Array:
    """``lhs^-1 rhs``, turning a singular or non-finite solve into :class:`SingularError`."""
    try:
        out = b.solve(lhs, rhs)
    except SingularError:
        raise SingularError(f"{what} is singular") from None
    except (np.linalg.LinAlgError, RuntimeError) as exc:
        raise SingularError(f"{what} is singular ({exc})") from None
    if not b.exact and not b.all_finite(out):
        raise SingularError(f"{what} is numerically singular: its solve gave NaN or Inf")
    return out


def _require_orthogonal(b: Backend, w: Any, name: str, threshold: float) -> Array:
    ww = require_orthogonal(b, w, name, threshold)
    if ww.shape[0] == 0:
        raise ShapeError(f"{name} must be at least 1 x 1")
    return ww


def _row(b: Backend, d: Sequence[int]) -> Array:
    return b.asarray([list(d)]).reshape(1, len(d))


# =============================================================================== the transforms
def cayley(a: Any, *, backend: BackendLike = None) -> Array:
    """``(I + A)^-1 (I - A)`` for square A (orthogonal with no eigenvalue -1 when A is skew).

    Raises :class:`SingularError` when I + A is singular (possible only for non-skew A). For
    skew A in float arithmetic the result is orthogonal to a test ratio of 30, as
    :func:`scaled_cayley` guarantees (or DomainError naming the range)."""
    b = resolve(backend, a)
    aa = matrix(b, a, "A", square=True)
    if aa.shape[0] == 0:
        raise ShapeError("A must be at least 1 x 1")
    if b.family in ("numpy", "torch") and skew_ratio(aa, b) <= THRESHOLD:  # W must come out orthogonal
        return _orthogonal_cayley(b, aa, None, THRESHOLD)
    eye = b.eye(aa.shape[0])
    return _solve(b, eye + aa, eye - aa, "I + A")


def inverse_cayley(w: Any, *, backend: BackendLike = None, threshold: float = THRESHOLD) -> Array:
    """``(I + W)^-1 (I - W)`` for orthogonal W (skew-symmetric); :class:`SingularError` when W
    has the eigenvalue -1, which no Cayley transform reaches (use :func:`scaled_cayley_inverse`)."""
    b = resolve(backend, w)
    ww = _require_orthogonal(b, w, "W", threshold)
    eye = b.eye(ww.shape[0])
    try:
        return _solve(b, eye + ww, eye - ww, "I + W")
    except SingularError:
        raise SingularError(
            "I + W is singular: W has the eigenvalue -1, outside the Cayley transform's image "
            "(scaled_cayley_inverse chooses a D that removes it)"
        ) from None


def scaled_cayley(a: Any, d: Any, *, backend: BackendLike = None, threshold: float = THRESHOLD) -> Array:
    """``W = (I + A)^-1 (I - A) D`` (Theorem 3.1); A skew-symmetric, D a diagonal of +-1.

    W is orthogonal to within ``threshold`` (the test ratio ||W'W - I||_F / (n eps)): the solve
    with I + A is used when its W passes; it does not when A's entries span a wide range
    (||A|| huge beside eigenvalues of order 1: I + A is then ill-conditioned, up to
    ratios of 1e270 seen), and W is computed instead from the eigendecomposition of the
    Hermitian iA (backward stable: each eigenvalue's Cayley factor has modulus 1 exactly).
    DomainError when neither gives an orthogonal W (high precision too narrow for A)."""
    b = resolve(backend, a)
    aa = _skew(b, a, "A", threshold)
    return _orthogonal_cayley(b, aa, _signs(b, d, aa.shape[0]), threshold)


def _orthogonal_cayley(b: Backend, aa: Array, signs: tuple[int, ...] | None, threshold: float) -> Array:
    """``(I + A)^-1 (I - A) D`` for skew A (D = I when ``signs`` is None), orthogonal to within
    ``threshold``: the solve when its W passes (always in exact arithmetic, and unchecked with an
    infinite threshold), else the spectral form, else DomainError naming the range."""
    n = aa.shape[0]
    eye = b.eye(n)
    rhs = (eye - aa) if signs is None else (eye - aa) * _row(b, signs)
    spectral = b.family in ("numpy", "torch")
    try:
        w = _solve(b, eye + aa, rhs, "I + A")
    except SingularError:
        if not spectral:  # I + A is invertible for skew A: only overflow in the solve gets here
            raise
        w = None
    if w is not None and (b.exact or math.isinf(threshold) or orthogonality_ratio(w, b) <= threshold):
        return w
    r = math.inf
    for paired in (False, True) if spectral else ():  # the solve's W is not orthogonal, or it overflowed
        try:
            w = _cayley_spectral(b, aa, paired)
        except (np.linalg.LinAlgError, RuntimeError):  # the eigensolver did not converge
            continue
        if signs is not None:
            w = w * _row(b, signs)
        r = orthogonality_ratio(w, b)
        if r <= threshold:
            return w
    if not spectral:
        r = orthogonality_ratio(w, b)
    raise DomainError(
        f"W = (I + A)^-1 (I - A) D cannot be computed orthogonal in {b.name} (test ratio {r:.3g} > {threshold}): "
        f"max |a_ij| = {b.to_float(b.max_abs(aa)):.3g}, and cond(I + A) must stay below about "
        f"1/(n eps) = {1 / (n * b.eps):.3g} for it; use more digits"
    )


def _cayley_spectral(b: Backend, a: Array, paired: bool) -> Array:
    """``(I + A)^-1 (I - A)`` for real skew A as ``Re(V diag(e^(2i atan lam)) V*)`` with
    ``iA = V diag(lam) V*`` (Hermitian eigendecomposition): A = -i iA has eigenvalues -i lam,
    and (1 + i lam) / (1 - i lam) = e^(2i atan lam) has modulus 1 even for |lam| near overflow.
    Rounding (about eps ||A||) breaks the +-lam pairing of the small eigenvalues; with ``paired``
    each is averaged with its partner's negative (a perturbation of that size), which keeps W real
    where the unpaired form does not (and vice versa: the caller tries both)."""
    if b.family == "torch":
        import torch

        lam, v = torch.linalg.eigh(a.to(torch.complex128 if a.dtype == torch.float64 else torch.complex64) * 1j)
        if paired:
            lam = (lam - lam.flip(0)) / 2  # the spectrum of real skew A is symmetric: restore it
        phase = torch.polar(torch.ones_like(lam), 2 * torch.atan(lam))
        return ((v * phase) @ v.conj().transpose(0, 1)).real.to(a.dtype)
    lam, v = np.linalg.eigh(np.asarray(a) * 1j)
    if paired:
        lam = (lam - lam[::-1]) / 2  # the spectrum of real skew A is symmetric (+-lam pairs, 0): restore it
    phase = np.exp(2j * np.arctan(lam))
    return np.real((v * phase) @ v.conj().T).astype(a.dtype)


def three_layers(a: Any, d: Any, h: Any, *, backend: BackendLike = None, threshold: float = THRESHOLD) -> Array:
    """Sec. 4's three layers: h -> D h -> (I - A) D h -> (I + A)^-1 (I - A) D h (= W h)."""
    b = resolve(backend, a)
    aa = _skew(b, a, "A", threshold)
    n = aa.shape[0]
    signs = _signs(b, d, n)
    hh, was_vec = vector_or_columns(b, h, "h", n)
    h1 = hh * b.asarray(list(signs)).reshape(n, 1)
    h2 = h1 - aa @ h1
    h3 = _solve(b, b.eye(n) + aa, h2, "I + A")
    return h3.reshape(n) if was_vec else h3


def cayley_gradient(a: Any, d: Any, g: Any, *, backend: BackendLike = None, threshold: float = THRESHOLD) -> Array:
    """Theorem 3.2: ``dL/dA = V' - V`` with ``V = (I + A)^-T G (D + W')``, G = dL/dW.

    dL/dA_ij is the derivative along A_ij and A_ji = -A_ij together (the paper's
    dA/dA_ij = E_ij - E_ji), so the result is skew-symmetric."""
    b = resolve(backend, a)
    aa = _skew(b, a, "A", threshold)
    n = aa.shape[0]
    gg = matrix(b, g, "dL/dW", square=True)
    if gg.shape[0] != n:
        raise ShapeError(f"dL/dW must be {n} x {n}, got {tuple(gg.shape)}")
    signs = _signs(b, d, n)
    eye = b.eye(n)
    w = _solve(b, eye + aa, (eye - aa) * _row(b, signs), "I + A")
    v = _solve(b, b.transpose(eye + aa), gg @ (b.diag(b.asarray(list(signs))) + b.transpose(w)), "(I + A)'")
    return b.transpose(v) - v


def stiefel_cayley_step(w: Any, g: Any, lr: Any, *, backend: BackendLike = None) -> Array:
    """One multiplicative Cayley step on the Stiefel manifold (Wisdom et al. 2016, Wen & Yin
    2013): ``W+ = (I + lr/2 B)^-1 (I - lr/2 B) W`` with ``B = G W' - W G'``; W is not
    re-orthogonalised, so rounding errors accumulate (App. B's comparison)."""
    b = resolve(backend, w)
    ww = matrix(b, w, "W", square=True)
    gg = matrix(b, g, "dL/dW", square=True)
    if gg.shape != ww.shape:
        raise ShapeError(f"dL/dW must have W's shape {tuple(ww.shape)}, got {tuple(gg.shape)}")
    n = ww.shape[0]
    half = (gg @ b.transpose(ww) - ww @ b.transpose(gg)) * b.scalar(lr) / 2
    eye = b.eye(n)
    return _solve(b, eye + half, (eye - half) @ ww, "I + lr/2 B")


def parameter_count(n: int) -> int:
    """Free entries of a skew-symmetric n x n matrix: n(n-1)/2 (zero diagonal, A_ji = -A_ij)."""
    n = checked_size(n, "n")
    if n < 0:
        raise DomainError(f"n must be >= 0, got {n}")
    return n * (n - 1) // 2


# =============================================================================== Sec. 4.1, 4.2
def _elementwise_sign(b: Backend, z: Array) -> Array:
    if b.family in ("numpy", "torch"):
        return b.sign(z)
    return np.vectorize(b.sign, otypes=[object])(z) if isinstance(z, np.ndarray) else b.sign(z)


def modrelu_real(z: Any, bias: Any, *, backend: BackendLike = None) -> Array:
    """Real modReLU in the paper's simplified form: ``sign(z) ReLU(|z| + b)`` (elementwise;
    bias broadcasts against z). ReLU(x) = (x + |x|) / 2 keeps exact arithmetic exact."""
    b = resolve(backend, z)
    zz = b.check_array(z, name="z")
    bb = b.check_array(bias, name="bias")
    try:
        np.broadcast_shapes(tuple(zz.shape), tuple(bb.shape))
    except ValueError:
        raise ShapeError(
            f"bias of shape {tuple(bb.shape)} does not broadcast against z of shape {tuple(zz.shape)}"
        ) from None
    t = b.abs(zz) + bb
    return _elementwise_sign(b, zz) * (t + b.abs(t)) / 2


def modrelu_printed(z: Any, bias: Any, *, backend: BackendLike = None) -> Any:
    """Eq. 3 as printed, for one scalar z: ``(z/|z|)(|z| + b)`` if ``|z| + b >= 0``, else 0.

    z/|z| is 0/0 at z = 0, so the printed formula is undefined there when b >= 0:
    :class:`DomainError`."""
    b = resolve(backend if backend is not None else "numpy-float64", z)
    zz = b.scalar(z) if not hasattr(z, "shape") else z
    bb = b.scalar(bias) if not hasattr(bias, "shape") else bias
    t = b.abs(zz) + bb
    if b.positive(-t):
        return zz * 0
    if b.is_zero(zz):
        raise DomainError("eq. 3 is undefined at z = 0 when |z| + b >= 0: z/|z| is 0/0")
    return zz / b.abs(zz) * t


def init_s(t: Any) -> np.ndarray:
    """Sec. 4.2's block entries ``s_j = sqrt((1 - cos t_j) / (1 + cos t_j))`` (float64)."""
    tt = get_backend("numpy-float64").check_array(t, name="t")
    c = np.cos(tt)
    if np.any(c <= -1.0):
        raise DomainError("cos t_j = -1 makes s_j infinite (t_j = pi): no finite Cayley parameter")
    return np.sqrt((1.0 - c) / (1.0 + c))


def init_angles(rng: np.random.Generator, n: int) -> np.ndarray:
    """floor(n/2) angles uniform on [0, pi/2] (Sec. 4.2; the extracted text's range '[0,2]'
    has lost its pi: the published version and 'the right unit half-circle' give [0, pi/2])."""
    return rng.uniform(0.0, math.pi / 2, size=checked_size(n, "n") // 2)


def init_blocks(s: Any, n: int, *, backend: BackendLike = None) -> Array:
    """Sec. 4.2's A: zero except 2x2 blocks [[0, s_j], [-s_j, 0]] on the diagonal (a trailing
    zero row and column when n is odd)."""
    n = checked_size(n, "n")
    b = resolve(backend, s)
    ss = list(b.check_array(s, name="s").reshape(-1))
    if len(ss) != n // 2:
        raise ShapeError(f"need floor(n/2) = {n // 2} block entries for n = {n}, got {len(ss)}")
    cols = []
    zero = b.zeros(n)
    for j in range(n):
        blk, pos = divmod(j, 2)
        if blk >= len(ss):
            cols.append(zero)
            continue
        sj = b.scalar(ss[blk])
        e = b.eye(n)
        # column 2k holds -s at row 2k+1; column 2k+1 holds s at row 2k
        cols.append(e[:, 2 * blk + 1] * (-sj) if pos == 0 else e[:, 2 * blk] * sj)
    return b.stack_columns(cols, n)


def signs_with_rho(n: int, rho: int, positions: Sequence[int] | None = None) -> tuple[int, ...]:
    """A D with rho entries -1: at ``positions`` if given, else the first rho entries."""
    n = checked_size(n, "n")
    rho = integer(rho, "rho")
    if not 0 <= rho <= n:
        raise DomainError(f"rho must lie in [0, n] = [0, {n}], got {rho}")
    pos = list(range(rho)) if positions is None else list(positions)
    if len(set(pos)) != rho or any(not 0 <= p < n for p in pos):
        raise DomainError(f"positions must be {rho} distinct indices in [0, {n})")
    return tuple(-1 if i in pos else 1 for i in range(n))


# =============================================================================== the inverse map
@dataclass(frozen=True)
class Certificate:
    """What :func:`scaled_cayley_inverse` proved about its answer, in the working arithmetic.

    ``max_abs`` is max |a_ij| of the returned A (recomputed from W and D by a fresh solve);
    ``excess_ratio`` is ``max(0, max_abs - bound) / (n eps)`` (0 or infinity when exact).
    I + W D is shown invertible by ``neumann`` = ||I - (I + W D)(I + A)/2||_inf < 1 (then
    (I + W D)(I + A)/2 is invertible by the Neumann series, so I + W D is). The residual is
    computed in the working arithmetic, not bounded by interval arithmetic: in floating point
    it is evidence with a wide margin (about 1e-13 against 1), exact only in exact arithmetic.
    Independently, sign-chosen elimination found |det(I + W D0)| = exp(initial_log_det) >= 1
    with every pivot at least ``min_pivot`` >= 1, and each flip multiplied |det| by a_jk^2 > 1
    (``log_det`` is their running sum; from a given D, initial_log_det is that D's, in float64).
    """

    n: int
    bound: float
    max_abs: float
    excess_ratio: float
    neumann: float
    invertible: bool
    reconstruction_ratio: float
    orthogonality_ratio: float
    skew_ratio: float
    flips: int
    refreshes: int
    min_pivot: float
    initial_log_det: float
    log_det: float
    started_from: str
    digits: int | None

    @property
    def holds(self) -> bool:
        """True when every |a_ij| <= bound (to rounding: excess ratio <= 30) and I + W D was
        shown invertible."""
        return self.invertible and self.excess_ratio <= THRESHOLD

    def describe(self) -> str:
        """One line for reports."""
        how = f"||I - (I+WD)(I+A)/2||_inf = {self.neumann:.2e} < 1 (Neumann series)"
        return (
            f"max|a_ij| = {self.max_abs:.6g} (bound {self.bound:g}, excess ratio {self.excess_ratio:.3g}); "
            f"I + WD invertible: {how}; log|det(I+WD)| = {self.log_det:.4g}; "
            f"{self.flips} pair flips from {self.started_from}"
        )


@dataclass(frozen=True)
class ScaledCayleyInverse:
    """A skew A with |a_ij| <= bound and signs D such that W = (I + A)^-1 (I - A) D."""

    a: Array
    d: tuple[int, ...]
    certificate: Certificate


def sign_choice(w: Any, *, backend: BackendLike = None) -> tuple[tuple[int, ...], float, float]:
    """Phase 1: signs D with |det(I + W D)| >= 1, by elimination on I + W D with symmetric
    pivoting (largest |q_pp| first) and d_p = sign(q_pp), so each pivot is 1 + |q_pp|.

    Returns (D, log|det(I + W D)|, smallest pivot). Needs orthogonal W: its Schur complements
    Q22 - q21 q12' d_p / (1 + q_pp d_p) stay orthogonal, so |q_pp| <= 1 and pivots lie in [1, 2].
    """
    b = resolve(backend, w)
    q = _working_copy(matrix(b, w, "W", square=True))  # updated in place: no gradients flow here
    n = q.shape[0]
    if n == 0:
        raise ShapeError("W must be at least 1 x 1")
    perm = list(range(n))
    d = [1] * n
    log_det = 0.0
    min_pivot = math.inf
    for k in range(n):
        p = k + int(np.argmax(np.abs(b.to_numpy(b.diagonal(q[k:, k:])))))
        if p != k:  # symmetric interchange keeps the trailing block of the form I + Q' D'
            q[[k, p], :] = q[[p, k], :]
            q[:, [k, p]] = q[:, [p, k]]
            perm[k], perm[p] = perm[p], perm[k]
        qkk = q[k, k]
        s = -1 if b.positive(-qkk) else 1
        d[perm[k]] = s
        pivot = 1 + qkk * s
        pv = b.to_float(pivot)
        min_pivot = min(min_pivot, pv)
        log_det += math.log(pv)
        if k + 1 < n:
            trailing = q[k + 1 :, k + 1 :]  # a view: updated in place
            trailing -= b.outer(q[k + 1 :, k] * (s / pivot), q[k, k + 1 :])
    return tuple(d), log_det, min_pivot


def _working_copy(x: Array) -> Array:
    """A private copy that may be written in place (detached from any autograd graph)."""
    if hasattr(x, "detach"):
        return x.detach().clone()
    return x.copy()


def pair_flip(a: Array, j: int, k: int, *, backend: BackendLike = None) -> Array:
    """A after flipping d_j and d_k: ``A + (c_k r_j' - c_j r_k') / a_jk`` with c = columns of
    I - A and r = rows of I + A (a rank-2 principal pivot; needs a_jk != 0)."""
    b = resolve(backend, a)
    n = a.shape[0]
    eye = b.eye(n)
    ajk = a[j, k]
    if b.is_zero(ajk):
        raise SingularError(f"a_{j}{k} = 0: flipping d_{j} and d_{k} makes I + W D singular")
    cj, ck = eye[:, j] - a[:, j], eye[:, k] - a[:, k]
    rj, rk = eye[j, :] + a[j, :], eye[k, :] + a[k, :]
    out = a + (b.outer(ck, rj) - b.outer(cj, rk)) / ajk
    return (out - b.transpose(out)) / 2


def _largest(b: Backend, a: Array) -> tuple[int, int, Any]:
    """Position (j < k) and value of the largest |a_jk|."""
    n = a.shape[0]
    if n < 2:
        return 0, 0, b.scalar(0)
    if b.family in ("numpy", "torch"):
        mags = np.triu(np.abs(b.to_numpy(a)), 1)
        flat = int(np.argmax(mags))
        jj, kk = divmod(flat, n)
        return jj, kk, b.abs(a[jj, kk])
    best: tuple[int, int, Any] = (0, 1, b.abs(a[0, 1]))
    for r in range(n):
        for c in range(r + 1, n):
            v = b.abs(a[r, c])
            if b.positive(v - best[2]):
                best = (r, c, v)
    return best


def _fresh(b: Backend, w: Array, d: Sequence[int]) -> tuple[Array, float]:
    """A = skew part of (I + W D)^-1 (I - W D), and the raw solve's skew ratio."""
    n = w.shape[0]
    eye = b.eye(n)
    wd = w * _row(b, d)
    raw = _solve(b, eye + wd, eye - wd, "I + W D")
    return (raw - b.transpose(raw)) / 2, skew_ratio(raw, b)


def scaled_cayley_inverse(
    w: Any,
    *,
    backend: BackendLike = None,
    d: Any = None,
    bound: float = 1.0,
    threshold: float = THRESHOLD,
    max_flips: int | None = None,
) -> ScaledCayleyInverse:
    """For orthogonal W: signs D and skew A with every |a_ij| <= bound and
    W = (I + A)^-1 (I - A) D (Theorem 3.1), with a :class:`Certificate`.

    ``d`` starts the pair flips from a given D (e.g. one found in float64, refined at high
    precision); else phase 1 (:func:`sign_choice`) supplies it. ``bound`` must be >= 1 (1 is
    the theorem's and cannot be lowered in general: a rotation by pi/2 needs it). In floating
    point a flip is made only when |a_jk| exceeds the bound by more than 4 n eps (rounding).

    Termination: in exact arithmetic every flip strictly increases |det(I + W D)| <= 2^n, so no
    D repeats. In floating point the loop stops with :class:`ConvergenceError` if a D repeats
    (a cycle rounding made) or ``log_det`` exceeds n ln 2 (impossible exactly); ``max_flips``
    (default: no limit) caps the flips. :class:`NotOrthogonalError` for non-orthogonal W.
    """
    b = resolve(backend, w)
    ww = _require_orthogonal(b, w, "W", threshold)
    n = ww.shape[0]
    if not bound >= 1.0:
        raise DomainError(f"bound must be >= 1 (Theorem 3.1's 1 is attained by a rotation by pi/2), got {bound}")
    cap = math.inf if max_flips is None else max_flips
    slack = 0.0 if b.exact else 4 * n * b.eps
    limit = b.scalar(bound) + b.scalar(slack) if not b.exact else b.scalar(bound)

    started = "the given D"
    initial_log_det = math.nan
    min_pivot = math.nan
    signs: tuple[int, ...] | None = None
    a: Array | None = None
    if d is not None:
        signs = _signs(b, d, n)
        try:
            a, _ = _fresh(b, ww, signs)
            sign, logdet = np.linalg.slogdet(b.to_numpy(b.eye(n) + ww * _row(b, signs)))
            initial_log_det = float(logdet) if sign != 0 else -math.inf
        except SingularError:
            signs, a = None, None
    if signs is None or a is None:
        signs, initial_log_det, min_pivot = sign_choice(ww, backend=b)
        started = "sign-chosen elimination"
        a, _ = _fresh(b, ww, signs)

    log_det = initial_log_det
    flips = 0
    refreshes = 0
    since_refresh = 0
    current = list(signs)
    seen = {tuple(current)}
    while True:
        j, k, v = _largest(b, a)
        if not b.positive(v - limit):
            a_new, _ = _fresh(b, ww, current)  # confirm on a fresh solve (rank-2 updates drift)
            refreshes += 1
            a = a_new
            j, k, v = _largest(b, a)
            if not b.positive(v - limit):
                break
        if flips >= cap:
            raise ConvergenceError(
                f"scaled_cayley_inverse needed more than {cap} pair flips (n = {n}); max|a_ij| is still "
                f"{b.to_float(v):.6g}. Pass a larger max_flips (or None) to allow more."
            )
        log_det += 2 * math.log(b.to_float(v))
        a = pair_flip(a, j, k, backend=b)
        current[j], current[k] = -current[j], -current[k]
        flips += 1
        if tuple(current) in seen or log_det > n * math.log(2) + 1e-6 * max(1.0, n):
            raise ConvergenceError(
                f"pair flips cycled after {flips} flips (n = {n}, largest |a_jk| {b.to_float(v):.17g}): rounding "
                "broke the strict increase of |det(I + W D)|; retry at higher precision (backend='mpmath')"
            )
        seen.add(tuple(current))
        since_refresh += 1
        if since_refresh >= max(n, 8):
            a, _ = _fresh(b, ww, current)
            refreshes += 1
            since_refresh = 0

    final = tuple(current)
    a, raw_skew = _fresh(b, ww, final)
    cert = certify(ww, a, final, backend=b, bound=bound)
    cert = Certificate(
        **{
            **cert.__dict__,
            "flips": flips,
            "refreshes": refreshes,
            "min_pivot": min_pivot,
            "initial_log_det": initial_log_det,
            "log_det": log_det,
            "started_from": started,
            "skew_ratio": raw_skew,
        }
    )
    return ScaledCayleyInverse(a, final, cert)


def certify(w: Any, a: Any, d: Any, *, backend: BackendLike = None, bound: float = 1.0) -> Certificate:
    """Check a claimed (A, D) for W independently of how it was found: max |a_ij| against
    ``bound``, invertibility of I + W D (Neumann), W against (I + A)^-1 (I - A) D."""
    b = resolve(backend, w)
    ww = matrix(b, w, "W", square=True)
    aa = matrix(b, a, "A", square=True)
    n = ww.shape[0]
    signs = _signs(b, d, n)
    eye = b.eye(n)
    wd = ww * _row(b, signs)
    r = eye - (eye + wd) @ ((eye + aa) / 2)
    neumann = float(np.max(np.sum(np.abs(b.to_numpy(r)), axis=1))) if n else 0.0
    if b.exact:
        neumann = 0.0 if b.is_zero(r) else max(neumann, math.inf if neumann == 0.0 else neumann)
    mx = b.max_abs(aa)
    excess = mx - b.scalar(bound)
    if b.exact:
        excess_ratio = math.inf if b.positive(excess) else 0.0
    else:
        excess_ratio = max(0.0, b.to_float(excess)) / (max(n, 1) * b.eps)
    try:
        rebuilt = _solve(b, eye + aa, (eye - aa) * _row(b, signs), "I + A")
        diff = rebuilt - ww
        if b.exact:
            recon = 0.0 if b.is_zero(diff) else math.inf
        else:
            recon = b.to_float(b.norm(diff)) / (max(n, 1) * b.eps)
    except SingularError:
        recon = math.inf
    return Certificate(
        n=n,
        bound=bound,
        max_abs=b.to_float(mx),
        excess_ratio=excess_ratio,
        neumann=neumann,
        invertible=neumann < 1.0,
        reconstruction_ratio=recon,
        orthogonality_ratio=orthogonality_ratio(ww, b),
        skew_ratio=skew_ratio(aa, b),
        flips=0,
        refreshes=0,
        min_pivot=math.nan,
        initial_log_det=math.nan,
        log_det=math.nan,
        started_from="given (A, D)",
        digits=b.digits,
    )
