"""The Jacobian of the uRNN composition as a map into U(n), and its numerical rank.

``W = D3 R2 F^-1 D2 Pi R1 F D1`` (Arjovsky et al. Sec. 2) maps 7n real parameters (phases
w1, w2, w3 in R^n, reflection vectors v1, v2 in C^n; Pi fixed) into U(n), a real manifold of
dimension n^2. A direction dp moves W by dW, and ``W* dW`` is skew-Hermitian: its n^2 real
:func:`tangent_coordinates` (chosen so that their 2-norm is ``||dW||_F``) make the Jacobian an
``n^2 x 7n`` real matrix. Three independent formulations compute it:

* :func:`jacobian_autograd`: torch float64 autograd through :func:`~orthoverify.param.unitary.urnn_matrix`;
* :func:`jacobian_analytic`: the factors' derivatives written out (each is rank one or two),
  on any backend of the protocol, so it runs at any mpmath precision;
* :func:`jacobian_central`: fourth-order central differences (at 50 digits: a check of the
  analytic form that knows no derivative).

Why the rank is at most ``7n - 7`` (n >= 2; :func:`symmetry_directions`): R(v) does not change
under ``v -> c v`` for complex ``c != 0`` (two real directions for each of v1 and v2); a common
phase commutes with F, R1 and Pi, so it moves from D1 into D2 (and from D2 through F^-1 and R2
into D3) without changing W (two more). These six are independent at every point and give
the obvious ``7n - 6``. A seventh: with ``X = F^-1 D2 Pi``, ``R2 X R1 = X G``, and conjugating
both reflections by ``e^(tK)`` (``K = G - G*`` commutes with G) turns v1 and ``X* v2`` together
inside the plane they span while G stays put: on that plane two reflections (CP^1 x CP^1, four
real dimensions) make an element of SU(2) (three), leaving one direction free. It is
independent of the six at generic points, so the rank is ``<= 7n - 7`` on an open dense set,
hence everywhere (the rank is lower semicontinuous). ``7n - 7 < n^2`` exactly when n >= 6.

:func:`decide_rank` reads a rank off singular values only where a clear gap separates values
at the rounding floor from the rest, and otherwise declines (``rank=None``).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from orthoverify.backends import Array, Backend, get_backend
from orthoverify.errors import BackendError, DomainError, NonFiniteError, ShapeError
from orthoverify.param._validate import real_values
from orthoverify.param._validate import size as checked_size
from orthoverify.param.unitary import (
    CArray,
    URNNParameters,
    as_carray,
    ceye,
    cnorm,
    ct,
    urnn_factors,
    urnn_matrix,
    urnn_parameters,
)
from orthoverify.tolerance import THRESHOLD

__all__ = [
    "FACTOR_ORDER",
    "RankDecision",
    "as_parameters",
    "decide_rank",
    "flat_parameters",
    "jacobian_analytic",
    "jacobian_autograd",
    "jacobian_central",
    "jacobian_rank",
    "rank_bound",
    "singular_values",
    "skew_from_coordinates",
    "symmetry_directions",
    "tangent_coordinates",
    "urnn_from_flat",
    "urnn_preimage",
]

FACTOR_ORDER: tuple[str, ...] = ("D3", "R2", "Finv", "D2", "Pi", "R1", "F", "D1")
"""The factors of W from left to right."""


def rank_bound(n: int) -> int:
    """``min(n^2, 7n - 7)`` for n >= 2, 1 for n = 1: the dimension of U(n), or the 7n
    parameters less the seven :func:`symmetry_directions`, whichever is smaller."""
    n = checked_size(n, "n")
    if n < 1:
        raise ShapeError(f"n must be >= 1, got {n}")
    return 1 if n == 1 else min(n * n, 7 * n - 7)


# =========================================================================== parameters
def flat_parameters(p: URNNParameters) -> Array:
    """The 7n real parameters as one vector ``[w1, w2, w3, Re v1, Im v1, Re v2, Im v2]``."""
    b = p.backend
    return b.concat([p.w1, p.w2, p.w3, p.v1.re, p.v1.im, p.v2.re, p.v2.im])


def urnn_from_flat(flat: Any, perm: Any, *, backend: Backend | str | None = None) -> URNNParameters:
    """Validated :class:`URNNParameters` from the layout of :func:`flat_parameters`; a vector
    whose length is not 7n raises ShapeError, a zero v1 or v2 ZeroVectorError."""
    b = backend if isinstance(backend, Backend) else get_backend(backend or "numpy-float64")
    x = b.check_array(flat, name="parameters", ndim=1)
    m = int(x.shape[0])
    if m == 0 or m % 7:
        raise ShapeError(f"the uRNN has 7n real parameters; got a vector of length {m}")
    n = m // 7
    part = [x[i * n : (i + 1) * n] for i in range(7)]
    return urnn_parameters(part[0], part[1], part[2], (part[3], part[4]), (part[5], part[6]), perm, backend=b)


def symmetry_directions(p: URNNParameters) -> Array:
    """Seven directions of parameter space along which W does not move (7n x 7 columns):
    v1 -> (1 + t) v1, v1 -> e^(it) v1, the same for v2, (w1 + t, w2 - t), (w2 + t, w3 - t),
    and the joint turn of the two reflections ``(dv1, dv2) = (K v1, X K X* v2)`` with
    ``X = F^-1 D2 Pi``, ``G = X* R2 X R1`` and ``K = G - G*`` (zero when G is Hermitian, e.g.
    for n = 1): ``R(e^(tK) u) = e^(tK) R(u) e^(-tK)`` and e^(tK) commutes with G, so
    ``R2 X R1 = X G`` stays put."""
    b, n = p.backend, p.n
    z = b.zeros(n)
    one = b.asarray([1] * n)
    f = urnn_factors(p)
    x = f["Finv"] @ f["D2"] @ f["Pi"]
    g = ct(b, x) @ f["R2"] @ x @ f["R1"]
    k = g - ct(b, g)
    dv1 = (k @ p.v1.reshape(n, 1)).reshape(n)
    dv2 = (x @ k @ ct(b, x) @ p.v2.reshape(n, 1)).reshape(n)

    def col(*blocks: Array) -> Array:
        return b.concat(list(blocks))

    return b.stack_columns(
        [
            col(z, z, z, p.v1.re, p.v1.im, z, z),
            col(z, z, z, -p.v1.im, p.v1.re, z, z),
            col(z, z, z, z, z, p.v2.re, p.v2.im),
            col(z, z, z, z, z, -p.v2.im, p.v2.re),
            col(one, -one, z, z, z, z, z),
            col(z, one, -one, z, z, z, z),
            col(z, z, z, dv1.re, dv1.im, dv2.re, dv2.im),
        ],
        7 * n,
    )


# =========================================================================== tangent coordinates
def _upper(n: int) -> tuple[list[int], list[int]]:
    rows, cols = np.triu_indices(n, 1)
    return [int(i) for i in rows], [int(j) for j in cols]


def tangent_coordinates(b: Backend, a: CArray, *, threshold: float | None = THRESHOLD) -> Array:
    """The n^2 real coordinates of a skew-Hermitian ``A`` (a tangent vector ``W* dW`` of U(n)):
    ``Im A_kk`` (k = 1..n), then ``sqrt(2) Re A_jk`` and ``sqrt(2) Im A_jk`` for j < k, so that
    their 2-norm is ``||A||_F``. With a ``threshold``, an A whose Hermitian part exceeds it (a
    test ratio ``||A + A*||_F / (n eps ||A||_F)``) raises DomainError: it is not tangent."""
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ShapeError(f"A must be a square matrix, got shape {a.shape}")
    n = a.shape[0]
    if threshold is not None:
        herm = a + ct(b, a)
        if b.exact:
            ok = b.is_zero(herm.re) and b.is_zero(herm.im)
            ratio = 0.0 if ok else math.inf
        else:
            scale = b.to_float(cnorm(b, a))
            err = b.to_float(cnorm(b, herm))
            ratio = err / (max(n, 1) * b.eps * scale) if scale > 0 else (0.0 if err == 0 else math.inf)
        if not ratio <= threshold:
            raise DomainError(f"A is not skew-Hermitian: ||A + A*||_F / (n eps ||A||_F) = {ratio:.3g} > {threshold}")
    rows, cols = _upper(n)
    r2 = b.sqrt(b.scalar(2))
    parts = [b.diagonal(a.im)]
    if rows:
        parts += [a.re[rows, cols] * r2, a.im[rows, cols] * r2]
    return b.concat(parts)


def skew_from_coordinates(b: Backend, c: Any) -> CArray:
    """The skew-Hermitian matrix with tangent coordinates ``c`` (inverse of :func:`tangent_coordinates`)."""
    x = b.check_array(c, name="coordinates", ndim=1)
    m = int(x.shape[0])
    n = math.isqrt(m)
    if n * n != m or n == 0:
        raise ShapeError(f"tangent coordinates of U(n) come in n^2 numbers; got {m}")
    rows, cols = _upper(n)
    k = len(rows)
    r2 = b.sqrt(b.scalar(2))
    re_rows: list[list[Any]] = [[b.scalar(0)] * n for _ in range(n)]
    im_rows: list[list[Any]] = [[b.scalar(0)] * n for _ in range(n)]
    for i in range(n):
        im_rows[i][i] = x[i]
    for t, (i, j) in enumerate(zip(rows, cols, strict=True)):
        re, im = x[n + t] / r2, x[n + k + t] / r2
        re_rows[i][j], im_rows[i][j] = re, im
        re_rows[j][i], im_rows[j][i] = -re, im
    return CArray(b.stack([b.stack(r) for r in re_rows]), b.stack([b.stack(r) for r in im_rows]))


# =========================================================================== Jacobians
@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Run torch on one thread: these matrices are small, and a second thread only adds
    contention (ten times slower on a busy 2-core machine). The setting is restored after."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _times_i(x: CArray) -> CArray:
    return CArray(-x.im, x.re)


def _outer(x: CArray, y: CArray) -> CArray:
    """``x y^T`` (no conjugation) of two complex vectors, by broadcasting (no BLAS call)."""
    n, m = x.shape[0], y.shape[0]
    return x.reshape(n, 1) * y.reshape(1, m)


def _suffixes(b: Backend, factors: dict[str, CArray], n: int) -> list[CArray]:
    """``S_j``: the product of the factors to the right of factor j (``S`` of D1 is I);
    ``S_{j-1} = M_j S_j`` is the product from factor j on."""
    out: list[CArray] = [ceye(b, n)]
    for name in reversed(FACTOR_ORDER[1:]):
        out.append(factors[name] @ out[-1])
    return out[::-1]  # out[j] = S_j for j = 0..7


def jacobian_analytic(p: URNNParameters) -> Array:
    """The ``n^2 x 7n`` Jacobian in tangent coordinates from the factors' derivatives, on
    p's backend (any precision). With ``S_j`` the product right of factor j,
    ``W* dW = S_j* (M_j* dM_j) S_j`` (the factors left of j are unitary):

    * phase w_k of D: ``D* dD = i E_kk``, so ``A = i conj(s_k)^T s_k`` with s_k row k of S_j;
    * reflection direction delta of ``R = I - 2 v v* / s`` (s = v* v):
      ``dR = x v* + v y*`` with ``y = -(2/s) delta``, ``x = y + (4 Re(v* delta) / s^2) v``,
      so ``A = (P* x)(v* S_j) + (P* v)(y* S_j)`` with ``P = R S_j``.
    """
    b, n = p.backend, p.n
    f = urnn_factors(p)
    suffix = _suffixes(b, f, n)
    at = {name: j for j, name in enumerate(FACTOR_ORDER)}
    cols: dict[str, list[Array]] = {}
    for name in ("D1", "D2", "D3"):
        s = suffix[at[name]]
        cols[name] = [tangent_coordinates(b, _times_i(_outer(s[k].conj(), s[k])), threshold=None) for k in range(n)]
    for name, v in (("R1", p.v1), ("R2", p.v2)):
        s = suffix[at[name]]
        pm = suffix[at[name] - 1]  # P = R S_j
        pv = ct(b, pm) @ v.reshape(n, 1)  # P* v
        pv = pv.reshape(n)
        vs = (ct(b, v.reshape(n, 1)) @ s).reshape(n)  # v* S_j
        ss = b.sum(v.re * v.re + v.im * v.im)
        re_cols: list[Array] = []
        im_cols: list[Array] = []
        for k in range(n):
            pk = pm[k].conj()  # P* e_k
            sk = s[k]  # e_k^T S_j
            for imag, bucket in ((False, re_cols), (True, im_cols)):
                # delta = e_k (imag False) or i e_k: P* delta, delta* S_j and Re(v* delta)
                pd = _times_i(pk) if imag else pk
                ds = _times_i(sk) * -1 if imag else sk
                re_vd = v.im[k] if imag else v.re[k]
                px = pd * (-2 / ss) + pv * (re_vd * 4 / (ss * ss))
                a = _outer(px, vs) + _outer(pv, ds * (-2 / ss))
                bucket.append(tangent_coordinates(b, a, threshold=None))
        cols[name] = re_cols + im_cols
    ordered = [*cols["D1"], *cols["D2"], *cols["D3"], *cols["R1"], *cols["R2"]]
    return b.stack_columns(ordered, n * n)


def jacobian_autograd(p: URNNParameters, *, device: str | None = None, threshold: float = THRESHOLD) -> Any:
    """The same Jacobian by torch float64 autograd through the dense ``urnn_matrix``, with
    ``W* dW`` checked to be skew-Hermitian (its Hermitian part a test ratio against ``||J||``
    at most ``threshold``; DomainError otherwise); returns a torch tensor, on ``device``
    (default: p's device when p is in torch, else the CPU)."""
    import torch

    if device is None:
        device = str(p.backend.device) if p.backend.family == "torch" else "cpu"  # type: ignore[attr-defined]
    tb = get_backend("torch-float64", device)
    x0 = tb.asarray(p.backend.to_numpy(flat_parameters(p)))
    q0 = urnn_from_flat(x0, p.perm, backend=tb)
    w0 = urnn_matrix(q0)
    w0h = CArray(w0.re.detach(), w0.im.detach())
    n = p.n

    def fn(x: Any) -> Any:
        a = ct(tb, w0h) @ urnn_matrix(urnn_from_flat(x, p.perm, backend=tb))
        return torch.cat([a.re.reshape(-1), a.im.reshape(-1)])

    with _one_thread():
        jac = torch.autograd.functional.jacobian(fn, x0, vectorize=True, strategy="forward-mode")
    # column j of jac is (Re, Im) of A_j = W* dW_j: all columns at once, A as n x n x 7n
    re = jac[: n * n].reshape(n, n, 7 * n)
    im = jac[n * n :].reshape(n, n, 7 * n)
    herm = torch.cat([(re + re.transpose(0, 1)).reshape(-1), (im - im.transpose(0, 1)).reshape(-1)])
    scale = float(torch.linalg.norm(jac))
    ratio = float(torch.linalg.norm(herm)) / (n * tb.eps * scale) if scale > 0 else 0.0
    if not ratio <= threshold:
        raise DomainError(f"W* dW is not skew-Hermitian: ||Herm part||_F / (n eps ||J||_F) = {ratio:.3g} > {threshold}")
    rows, cols = _upper(n)
    diag = list(range(n))
    r2 = math.sqrt(2)
    return torch.cat([im[diag, diag], re[rows, cols] * r2, im[rows, cols] * r2], dim=0)


def jacobian_central(p: URNNParameters) -> Array:
    """The same Jacobian by fourth-order central differences of the dense ``urnn_matrix`` on
    p's backend (a third formulation, knowing no derivative): step ``10^(-digits/5)`` times
    max(1, |x_j|), so the error is about ``10^(-0.8 digits)`` (:func:`~orthoverify.engine.reference.fd_eps`)."""
    b, n = p.backend, p.n
    if b.exact:
        raise BackendError("central differences need a rounding arithmetic; use mpmath or a float backend")
    x = flat_parameters(p)
    w0h = ct(b, urnn_matrix(p))
    digits = b.digits if b.digits is not None else 15
    h0 = b.scalar(f"1e-{max(1, round(digits / 5))}")
    basis = b.eye(7 * n)
    cols = []
    for j in range(7 * n):
        mag = b.abs(x[j])
        h = h0 * (mag if b.positive(mag - 1) else 1)

        def at(t: Any, j: int = j) -> CArray:
            return urnn_matrix(urnn_from_flat(x + basis[j] * t, p.perm, backend=b))

        dw = (at(2 * h) * -1 + at(h) * 8 - at(-h) * 8 + at(-2 * h)) / (12 * h)
        cols.append(tangent_coordinates(b, w0h @ dw, threshold=None))
    return b.stack_columns(cols, n * n)


def urnn_preimage(
    target: Any, perm: Sequence[int], x0: Any, *, max_steps: int = 60, tol: float = THRESHOLD
) -> tuple[np.ndarray, float]:
    """Gauss-Newton for ``W(p) = U`` in float64 from the start ``x0`` (7n parameters): each step
    solves ``J dp = log(W* U)`` in tangent coordinates (least squares, minimum norm). Returns
    the parameters and the test ratio ``||W(p) - U||_F / (n eps)``; a ratio at most ``tol``
    means U is reached to rounding. A search, not a proof: failing to converge proves nothing."""
    nb = get_backend("numpy-float64")
    _, u = as_carray(target, backend=nb, name="U", ndim=2)
    n = u.shape[0]
    if u.shape != (n, n):
        raise ShapeError(f"U must be square, got shape {u.shape}")
    uc = u.to_complex(nb)
    x = np.asarray(nb.check_array(x0, name="x0", ndim=1), dtype=np.float64)
    if x.shape[0] != 7 * n:
        raise ShapeError(f"x0 must hold 7n = {7 * n} parameters, got {x.shape[0]}")
    ratio = math.inf
    for _ in range(max_steps):
        p = urnn_from_flat(x, perm, backend=nb)
        w = urnn_matrix(p).to_complex(nb)
        ratio = float(np.linalg.norm(w - uc)) / (n * nb.eps)
        if ratio <= tol:
            break
        ev, vec = np.linalg.eig(w.conj().T @ uc)  # W* U is unitary: log through its eigenvalues
        log = vec @ np.diag(1j * np.angle(ev)) @ np.linalg.inv(vec)
        log = (log - log.conj().T) / 2
        r = nb.to_numpy(tangent_coordinates(nb, CArray(log.real, log.imag), threshold=None))
        x = x + np.linalg.lstsq(nb.to_numpy(jacobian_analytic(p)), r, rcond=None)[0]
    return x, ratio


# =========================================================================== numerical rank
def singular_values(b: Backend, jac: Array) -> list[Any]:
    """The singular values of a real matrix in b's arithmetic, largest first (native scalars:
    mpmath values keep every digit)."""
    if jac.ndim != 2:
        raise ShapeError(f"expected a matrix, got shape {tuple(jac.shape)}")
    if not b.all_finite(jac):
        raise NonFiniteError("the Jacobian contains NaN or Inf")
    m, k = int(jac.shape[0]), int(jac.shape[1])
    if min(m, k) == 0:
        return []
    if b.family in ("torch", "numpy"):  # float64 LAPACK (gesdd) on one thread, for either
        import torch

        t = jac.detach() if b.family == "torch" else torch.from_numpy(np.asarray(jac))
        with _one_thread():
            return [float(v) for v in torch.linalg.svdvals(t)]
    if b.family == "mpmath":
        ctx = b.ctx  # type: ignore[attr-defined]
        a = jac if m >= k else b.transpose(jac)  # mpmath's SVD wants rows >= columns
        s = ctx.svd_r(ctx.matrix(a.tolist()), compute_uv=False)
        return sorted((s[i] for i in range(min(m, k))), reverse=True)
    raise BackendError(f"no SVD for backend {b.name}: use numpy, torch or mpmath")


@dataclass(frozen=True)
class RankDecision:
    """A numerical rank and the evidence for it. Relative singular values ``s_i / s_1`` at or
    below ``drop`` (``threshold * max(rows, cols) * eps``: what rounding can produce) are zero;
    those above ``keep = sqrt(drop)`` are retained; one in between means no clear gap, and then
    ``rank`` is None (the decision is refused)."""

    rank: int | None
    rows: int
    cols: int
    relative: tuple[float, ...]
    drop: float
    keep: float
    gap: float
    eps: float

    @property
    def clear(self) -> bool:
        return self.rank is not None

    @property
    def largest_dropped(self) -> float:
        """The largest relative singular value declared zero (0.0 when none is)."""
        r = self.rank if self.rank is not None else 0
        return self.relative[r] if r < len(self.relative) else 0.0

    @property
    def smallest_retained(self) -> float:
        """The smallest relative singular value retained (0.0 for rank 0)."""
        r = self.rank if self.rank is not None else 0
        return self.relative[r - 1] if r > 0 else 0.0

    @property
    def margin(self) -> float:
        """How far the smallest retained value stands above the rounding floor: its relative
        size over ``drop`` (the gap that matters at full rank, where nothing is dropped)."""
        return self.smallest_retained / self.drop

    def summary(self) -> dict[str, Any]:
        """The decision as plain numbers (for evidence data)."""
        return {
            "rank": self.rank,
            "shape": [self.rows, self.cols],
            "gap": self.gap,
            "margin": self.margin,
            "smallest_retained": self.smallest_retained,
            "largest_dropped": self.largest_dropped,
            "drop_floor": self.drop,
            "keep_floor": self.keep,
        }


def decide_rank(
    svals: Sequence[Any],
    *,
    rows: int,
    cols: int,
    eps: float,
    threshold: float = THRESHOLD,
    scale: float | None = None,
) -> RankDecision:
    """The numerical rank from singular values (any order) of a rows x cols matrix computed with
    unit roundoff eps. Values are measured against ``scale`` (default the largest one): pass the
    size the matrix would have without cancellation, e.g. ``||J|| ||K||`` for a product J K,
    or a matrix of pure rounding noise gets full rank. ``gap`` is the smallest retained over the
    largest dropped value (inf when none is dropped or none retained)."""
    svals = real_values(svals, "svals")
    rows, cols = checked_size(rows, "rows"), checked_size(cols, "cols")
    if len(svals) != min(rows, cols):
        raise ShapeError(f"a {rows} x {cols} matrix has {min(rows, cols)} singular values, got {len(svals)}")
    if not (eps > 0 and math.isfinite(eps)):
        raise DomainError(f"eps must be a positive unit roundoff, got {eps}")
    vals = sorted((abs(v) for v in svals), reverse=True)
    if any(not math.isfinite(float(v)) for v in vals):
        raise NonFiniteError("singular values contain NaN or Inf")
    drop = threshold * max(rows, cols, 1) * eps
    keep = math.sqrt(drop)
    if scale is not None and not (scale >= 0 and math.isfinite(scale)):
        raise DomainError(f"scale must be finite and >= 0, got {scale}")
    ref = vals[0] if (scale is None and vals) else (scale or 0.0)
    if not vals or float(ref) == 0.0:
        return RankDecision(0, rows, cols, tuple(0.0 for _ in vals), drop, keep, math.inf, eps)
    rel = tuple(float(v / ref) for v in vals)
    kept = sum(1 for r in rel if r > keep)
    dropped = sum(1 for r in rel if r <= drop)
    rank: int | None = kept if kept + dropped == len(rel) else None
    lo = rel[kept] if kept < len(rel) else 0.0
    gap = rel[kept - 1] / lo if (kept > 0 and lo > 0) else math.inf
    return RankDecision(rank, rows, cols, rel, drop, keep, gap, eps)


def jacobian_rank(b: Backend, jac: Array, *, threshold: float = THRESHOLD, scale: float | None = None) -> RankDecision:
    """:func:`decide_rank` of a Jacobian computed on backend b (eps from b)."""
    if b.exact:
        raise BackendError("a numerical rank needs a rounding arithmetic; exact backends have no SVD")
    s = singular_values(b, jac)
    rows, cols = int(jac.shape[0]), int(jac.shape[1])
    return decide_rank(s, rows=rows, cols=cols, eps=b.eps, threshold=threshold, scale=scale)


def as_parameters(p: URNNParameters | dict[str, Any], backend: Backend | str | None = None) -> URNNParameters:
    """URNNParameters from either themselves or a dict as :func:`urnn_random` draws it."""
    if isinstance(p, URNNParameters):
        return p
    b = backend if isinstance(backend, Backend) else get_backend(backend or "numpy-float64")
    v1 = as_carray(p["v1"], backend=b, name="v1")[1]
    v2 = as_carray(p["v2"], backend=b, name="v2")[1]
    return urnn_parameters(p["w1"], p["w2"], p["w3"], v1, v2, p["perm"], backend=b)
