"""The linear RNN of the svdRNN paper's Sec. 6 (Zhang, Lei & Dhillon; paper key ``svd``).

Model: W in R^{n x n}, the stacked powers ``WW = (W | W^2 | ... | W^t)`` (n x nt), Y (d x n),
A (d x nt), ``Sigma = E[vec(X) vec(X)']`` (nt x nt, symmetric PSD), ``C = E||eta||^2``; the
output is ``o = Y WW vec(X)`` and the target ``y = A vec(X) + eta`` with E[eta | X] = 0.
``vec`` stacks columns, so ``WW vec(X) = sum_i W^i x_(i-1)`` with x_(i-1) the i-th column of X.

* :func:`stacked_powers`, :func:`population_risk` (Claim 1's closed form
  ``tr((Y WW - A) Sigma (Y WW - A)') + C``), :func:`expected_loss` and :func:`data_moments`
  (the definition E f over a finite distribution, and its Sigma and C);
* :func:`risk_gradient` (the true gradient
  ``2 sum_i sum_{j<i} (W^j)' G_i (W^(i-1-j))'`` with ``G = Y'(Y WW - A) Sigma = (G_1|...|G_t)``),
  :func:`claim1_gradient_printed` (the formula as printed, ``(Y WW - A) Sigma (I|2W|...|tW^(t-1))'``),
  :func:`risk_hessian` (exact directional derivatives of the gradient, no differencing);
* :func:`refine_critical_point`, :func:`find_critical_points` (many float64 starts of damped
  Newton on the true gradient, then Newton at 50 digits) and :func:`global_minimum` (for n = 1
  every real critical point exactly, from SymPy's real roots of R'(w); for n >= 2 the best
  critical point found, which is not a certificate).

Everything numeric is written once against the backend protocol (NumPy, torch, mpmath, SymPy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from orthoverify.backends import MAX_DIGITS, Array, Backend, Scalar, get_backend
from orthoverify.backends.base import tensor_data
from orthoverify.errors import DomainError, NonFiniteError, ShapeError, SingularError
from orthoverify.param._validate import (
    MAX_SIZE,
    BackendLike,
    finite_result,
    integer,
    matrix,
    real_values,
    resolve,
    size,
)
from orthoverify.tolerance import THRESHOLD

__all__ = [
    "CriticalPoint",
    "GlobalMinimum",
    "Problem",
    "claim1_gradient_printed",
    "classify",
    "data_moments",
    "exact_critical_points_1d",
    "expected_loss",
    "find_critical_points",
    "global_minimum",
    "gradient_scale",
    "hessian_eigenvalues",
    "population_risk",
    "problem",
    "psd_defect",
    "refine_critical_point",
    "risk_gradient",
    "risk_hessian",
    "sigma_min",
    "stacked_powers",
    "symmetry_ratio",
]

Kind = Literal["min", "saddle", "max", "degenerate"]


# =============================================================================== validation
def symmetry_ratio(s: Array, b: Backend) -> float:
    """``||S - S'||_F / (m eps ||S||_F)``: how far from symmetric, as a test ratio (exact
    arithmetic: 0 when S' = S exactly, else infinity)."""
    m = s.shape[0]
    diff = s - b.transpose(s)
    if b.exact:
        return 0.0 if b.is_zero(diff) else math.inf
    num = b.to_float(b.norm(diff))
    if num == 0.0:
        return 0.0
    return num / (max(m, 1) * (b.eps * b.to_float(b.norm(s)) + b.tiny))


def psd_defect(s: Array, b: Backend) -> float:
    """How far a symmetric S is from PSD, as a test ratio: ``max(0, -lambda_min) / (m eps ||S||_F)``
    in floating point (eigenvalues in float64, or at b's precision for mpmath); exactly 0 or
    infinity in exact arithmetic (a pivoted LDL' factorisation decides)."""
    m = s.shape[0]
    if m == 0:
        return 0.0
    if b.family == "mpmath":
        ctx = b.ctx  # type: ignore[attr-defined]
        vals = ctx.eigsy(ctx.matrix(((s + b.transpose(s)) / 2).tolist()), eigvals_only=True)
        low = min(vals[i] for i in range(m))
        nrm = b.norm(s)
        den = m * (b.eps * b.to_float(nrm))
        if den > 0:
            return max(0.0, -float(low)) / den
        return max(0.0, -float(low / nrm)) / (m * b.eps) if b.positive(nrm) else 0.0  # ||S|| below float range
    if b.exact:
        return 0.0 if _exact_psd(s) else math.inf
    x = b.to_numpy(s)
    low = float(np.linalg.eigvalsh((x + x.T) / 2)[0])
    scale = float(np.linalg.norm(x))
    # the eigenvalues of the float64 copy carry float64 rounding too: measure in the coarser arithmetic
    eps = max(b.eps, 2.0**-53)
    return max(0.0, -low) / (m * eps * scale) if scale > 0 else 0.0


def _exact_psd(s: Array) -> bool:
    """PSD test in exact arithmetic by symmetric pivoting (largest diagonal first): a PSD matrix
    with a zero diagonal entry has that whole row zero."""
    import sympy

    mat = sympy.Matrix(s.tolist())
    if mat.free_symbols:
        return True  # symbolic entries: nothing to decide
    while mat.rows:
        diag = [mat[i, i] for i in range(mat.rows)]
        k = max(range(mat.rows), key=lambda i: diag[i])
        piv = diag[k]
        if piv < 0:
            return False
        if piv == 0:
            return all(v == 0 for v in mat)
        col = mat[:, k]
        mat = mat - col * col.T / piv
        mat.row_del(k)
        mat.col_del(k)
    return True


def _order(t: Any) -> int:
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
        raise DomainError(f"t (the number of time steps) must be an integer >= 1, got {t!r}")
    if t < 1:
        raise DomainError(f"t (the number of time steps) must be >= 1, got {t}")
    return size(t, "t (the number of time steps)", minimum=1)


def _scalar_input(b: Backend, c: Any, name: str) -> Scalar:
    arr = b.asarray(c, name=name)
    if arr.ndim != 0 and tuple(arr.shape) != (1,):
        raise ShapeError(f"{name} must be a scalar, got shape {tuple(arr.shape)}")
    arr = arr.reshape(())
    if not b.all_finite(arr.reshape(1)):
        raise NonFiniteError(f"{name} is NaN or Inf")
    val = arr[()] if isinstance(arr, np.ndarray) and arr.dtype == object else arr
    if b.positive(-val):
        raise DomainError(f"{name} = E||eta||^2 must be >= 0, got {b.to_float(val)}")
    return val


@dataclass(frozen=True)
class Problem:
    """Validated data of one linear-RNN regression: Y (d x n), A (d x nt), Sigma (nt x nt), t, C."""

    b: Backend
    y: Array
    a: Array
    sigma: Array
    t: int
    c: Scalar
    n: int
    d: int

    def risk(self, w: Any) -> Scalar:
        """R[W] (as :func:`population_risk`), validating only W."""
        return _risk(self, _w(self, w))

    def gradient(self, w: Any) -> Array:
        """The true gradient (as :func:`risk_gradient`), validating only W."""
        return _grad(self, _w(self, w))

    def hessian(self, w: Any) -> Array:
        """The Hessian (as :func:`risk_hessian`), validating only W."""
        return _hess(self, _w(self, w))

    def printed_gradient(self, w: Any) -> Array:
        """Claim 1's printed gradient (as :func:`claim1_gradient_printed`), validating only W."""
        return _printed(self, _w(self, w))


def problem(
    y: Any,
    a: Any,
    sigma: Any,
    t: Any,
    c: Any = 0,
    *,
    backend: BackendLike = None,
    n: int | None = None,
    psd: bool = True,
    threshold: float = THRESHOLD,
) -> Problem:
    """Validate (Y, A, Sigma, t, C) once: shapes, finiteness, t >= 1, Sigma symmetric (test
    ratio <= threshold) and, when ``psd``, positive semidefinite (a second-moment matrix)."""
    b = resolve(backend, y)
    tt = _order(t)
    yy = matrix(b, y, "Y")
    d, ny = int(yy.shape[0]), int(yy.shape[1])
    if n is not None and ny != n:
        raise ShapeError(f"Y must be d x {n} (n columns, W being {n} x {n}), got shape {tuple(yy.shape)}")
    nn = ny
    if nn == 0 or d == 0:
        raise ShapeError(f"Y must be at least 1 x 1, got shape {tuple(yy.shape)}")
    aa = matrix(b, a, "A")
    if tuple(aa.shape) != (d, nn * tt):
        raise ShapeError(f"A must be d x nt = {d} x {nn * tt}, got shape {tuple(aa.shape)}")
    ss = matrix(b, sigma, "Sigma", square=True)
    if ss.shape[0] != nn * tt:
        raise ShapeError(f"Sigma must be nt x nt = {nn * tt} x {nn * tt}, got shape {tuple(ss.shape)}")
    r = symmetry_ratio(ss, b)
    if not r <= threshold:
        raise DomainError(
            f"Sigma = E[vec(X) vec(X)'] must be symmetric: ||Sigma - Sigma'||_F / (nt eps ||Sigma||_F) = {r:.3g} "
            f"> {threshold}"
        )
    if psd:
        q = psd_defect(ss, b)
        if not q <= threshold:
            raise DomainError(
                f"Sigma = E[vec(X) vec(X)'] must be positive semidefinite: its most negative eigenvalue is "
                f"{q:.3g} (n eps ||Sigma||_F) below zero"
            )
    cc = _scalar_input(b, c, "C")
    return Problem(b, yy, aa, ss, tt, cc, nn, d)


def _w(pb: Problem, w: Any) -> Array:
    ww = matrix(pb.b, w, "W", square=True)
    if ww.shape[0] != pb.n:
        raise ShapeError(f"W must be {pb.n} x {pb.n} (Y has {pb.n} columns), got shape {tuple(ww.shape)}")
    return ww


# =============================================================================== the closed forms
def _powers(b: Backend, w: Array, t: int) -> list[Array]:
    """[I, W, W^2, ..., W^t]."""
    out = [b.eye(w.shape[0])]
    for _ in range(t):
        out.append(out[-1] @ w)
    return out


def _blocks(x: Array, n: int, t: int) -> list[Array]:
    return [x[:, i * n : (i + 1) * n] for i in range(t)]


def _residual(pb: Problem, p: list[Array]) -> Array:
    """E = Y WW - A."""
    return pb.y @ pb.b.concat(p[1:], axis=1) - pb.a


def _risk(pb: Problem, w: Array) -> Scalar:
    p = _powers(pb.b, w, pb.t)
    e = _residual(pb, p)
    return pb.b.sum((e @ pb.sigma) * e) + pb.c


def _grad_from(pb: Problem, p: list[Array], g: list[Array]) -> Array:
    b, t = pb.b, pb.t
    tr = [b.transpose(x) for x in p]
    total = None
    for i in range(1, t + 1):
        for j in range(i):
            term = tr[j] @ g[i - 1] @ tr[i - 1 - j]
            total = term if total is None else total + term
    assert total is not None
    return 2 * total


def _g_blocks(pb: Problem, p: list[Array]) -> list[Array]:
    b = pb.b
    e = _residual(pb, p)
    return _blocks(b.transpose(pb.y) @ e @ pb.sigma, pb.n, pb.t)


def _grad(pb: Problem, w: Array) -> Array:
    p = _powers(pb.b, w, pb.t)
    return _grad_from(pb, p, _g_blocks(pb, p))


def _dpowers(b: Backend, p: list[Array], dw: Array, t: int) -> list[Array]:
    """Directional derivatives [0, dW, d(W^2), ..., d(W^t)] along dW."""
    out = [b.zeros(dw.shape)]
    for k in range(1, t + 1):
        acc = None
        for j in range(k):
            term = p[j] @ dw @ p[k - 1 - j]
            acc = term if acc is None else acc + term
        out.append(acc)
    return out


def _hess(pb: Problem, w: Array) -> Array:
    b, n, t = pb.b, pb.n, pb.t
    p = _powers(b, w, t)
    g = _g_blocks(pb, p)
    tr = [b.transpose(x) for x in p]
    yty = b.transpose(pb.y) @ pb.y
    cols = []
    basis = np.eye(n * n)
    for k in range(n * n):
        dw = b.asarray(basis[k].reshape(n, n))
        dp = _dpowers(b, p, dw, t)
        dtr = [b.transpose(x) for x in dp]
        dg = _blocks(yty @ b.concat(dp[1:], axis=1) @ pb.sigma, n, t)
        total = None
        for i in range(1, t + 1):
            for j in range(i):
                term = (
                    dtr[j] @ g[i - 1] @ tr[i - 1 - j]
                    + tr[j] @ dg[i - 1] @ tr[i - 1 - j]
                    + tr[j] @ g[i - 1] @ dtr[i - 1 - j]
                )
                total = term if total is None else total + term
        assert total is not None
        cols.append((2 * total).reshape(n * n))
    return b.stack_columns(cols, n * n)


def stacked_powers(w: Any, t: Any, *, backend: BackendLike = None) -> Array:
    """``WW = (W | W^2 | ... | W^t)`` (n x nt): the transition weights of Sec. 6 stacked."""
    b = resolve(backend, w)
    tt = _order(t)
    ww = matrix(b, w, "W", square=True)
    if ww.shape[0] == 0:
        raise ShapeError("W must be at least 1 x 1")
    return finite_result(b, b.concat(_powers(b, ww, tt)[1:], axis=1), "W's powers")


def population_risk(w: Any, y: Any, a: Any, sigma: Any, t: Any, c: Any = 0, *, backend: BackendLike = None) -> Scalar:
    """Claim 1's closed form ``R[W] = tr((Y WW - A) Sigma (Y WW - A)') + C``
    (= ||(Y WW - A) Sigma^(1/2)||_F^2 + C); Sigma must be symmetric PSD."""
    b = resolve(backend, w)
    pb = problem(y, a, sigma, t, c, backend=b)
    return finite_result(pb.b, _risk(pb, _w(pb, w)), "the risk R[W]")


def risk_gradient(w: Any, y: Any, a: Any, sigma: Any, t: Any, *, backend: BackendLike = None) -> Array:
    """The true gradient of R: ``2 sum_{i=1..t} sum_{j=0..i-1} (W^j)' G_i (W^(i-1-j))'`` with
    ``G = Y'(Y WW - A) Sigma = (G_1 | ... | G_t)`` (valid for any symmetric Sigma)."""
    b = resolve(backend, w)
    pb = problem(y, a, sigma, t, backend=b, psd=False)
    return finite_result(pb.b, _grad(pb, _w(pb, w)), "the gradient of R")


def claim1_gradient_printed(w: Any, y: Any, a: Any, sigma: Any, t: Any, *, backend: BackendLike = None) -> Array:
    """Claim 1's gradient as printed: ``(Y WW - A) Sigma (I | 2W | 3W^2 | ... | tW^(t-1))'``
    (d x n; it has the shape of W only when d = n, which the paper assumes)."""
    b = resolve(backend, w)
    pb = problem(y, a, sigma, t, backend=b, psd=False)
    return finite_result(pb.b, _printed(pb, _w(pb, w)), "Claim 1's gradient")


def _printed(pb: Problem, w: Array) -> Array:
    b = pb.b
    if pb.d != pb.n:
        raise ShapeError(f"the printed gradient is d x n and needs d = n (Y square), got d = {pb.d}, n = {pb.n}")
    p = _powers(b, w, pb.t)
    es = _blocks(_residual(pb, p) @ pb.sigma, pb.n, pb.t)
    total = es[0]
    for i in range(2, pb.t + 1):
        total = total + i * (es[i - 1] @ b.transpose(p[i - 1]))
    return total


def risk_hessian(w: Any, y: Any, a: Any, sigma: Any, t: Any, *, backend: BackendLike = None) -> Array:
    """The Hessian of R (n^2 x n^2; entry [p n + q, r n + s] = d^2 R / dW_pq dW_rs, i.e. W
    flattened row by row), in closed form: column (r, s) is the exact directional derivative of
    :func:`risk_gradient` along E_rs (the product rule applied to its factors, no differencing)."""
    b = resolve(backend, w)
    pb = problem(y, a, sigma, t, backend=b, psd=False)
    return finite_result(pb.b, _hess(pb, _w(pb, w)), "the Hessian of R")


def gradient_scale(pb: Problem, w: Array) -> float:
    """The size of the terms the gradient sums, ``2 ||Y|| (||Y|| ||WW|| + ||A||) ||Sigma|| sum_i i ||W||^(i-1)``
    (Frobenius norms, as floats): what its rounding error is proportional to."""
    b = pb.b

    def f(x: Array) -> float:
        return float(np.linalg.norm(b.to_numpy(x)))

    nw = f(w)
    ww = f(b.concat(_powers(b, w, pb.t)[1:], axis=1))
    powers = sum(i * nw ** (i - 1) for i in range(1, pb.t + 1))
    return 2 * f(pb.y) * (f(pb.y) * ww + f(pb.a)) * f(pb.sigma) * powers


# =============================================================================== finite distributions
def _finite_distribution(
    b: Backend, points: Sequence[Any], weights: Any, noises: Sequence[Any], d: int | None
) -> tuple[list[Array], list[Scalar], list[Array]]:
    if len(points) == 0:
        raise ShapeError("a finite distribution needs at least one point X")
    xs = [matrix(b, x, f"X[{k}]") for k, x in enumerate(points)]
    shape = tuple(xs[0].shape)
    for k, x in enumerate(xs):
        if tuple(x.shape) != shape:
            raise ShapeError(f"every X must have the shape of X[0] {shape}, X[{k}] has {tuple(x.shape)}")
    p = b.check_array(weights, name="weights", ndim=1)
    if p.shape[0] != len(xs):
        raise ShapeError(f"weights must have one entry per point ({len(xs)}), got {p.shape[0]}")
    ps = [p[k] for k in range(len(xs))]
    if any(b.positive(-v) for v in ps):
        raise DomainError("weights must be nonnegative (they are probabilities)")
    total = b.sum(p)
    if b.exact:
        ok = b.is_zero(total - 1)
    else:
        ok = abs(b.to_float(total) - 1.0) <= THRESHOLD * len(ps) * b.eps
    if not ok:
        raise DomainError(f"weights must sum to 1, they sum to {b.to_float(total)}")
    if len(noises) != len(xs):
        raise ShapeError(f"noises must give one array of noise values per point ({len(xs)}), got {len(noises)}")
    etas = [matrix(b, e, f"noises[{k}]") for k, e in enumerate(noises)]
    for k, e in enumerate(etas):
        if e.shape[0] == 0 or (d is not None and e.shape[1] != d):
            want = f"m x {d}" if d is not None else "m x d"
            raise ShapeError(f"noises[{k}] must be {want} with m >= 1 (rows equally likely), got {tuple(e.shape)}")
    return xs, ps, etas


def _vec(b: Backend, x: Array) -> Array:
    """vec(X): the columns of X stacked."""
    return b.transpose(x).reshape(-1)


def expected_loss(
    w: Any,
    y: Any,
    a: Any,
    points: Sequence[Any],
    weights: Any,
    noises: Sequence[Any],
    *,
    backend: BackendLike = None,
) -> Scalar:
    """The population risk by its definition ``E f = E ||Y WW vec(X) - (A vec(X) + eta)||^2``
    over a finite distribution: X = points[k] (n x t) with probability weights[k], and given X_k
    the noise eta is each row of noises[k] with equal probability (exact with rationals)."""
    b = resolve(backend, w)
    ww = matrix(b, w, "W", square=True)
    n = ww.shape[0]
    yy = matrix(b, y, "Y")
    if yy.shape[1] != n:
        raise ShapeError(f"Y must have n = {n} columns, got shape {tuple(yy.shape)}")
    xs, ps, etas = _finite_distribution(b, points, weights, noises, yy.shape[0])
    if xs[0].shape[0] != n:
        raise ShapeError(f"each X must be n x t = {n} x t, got {tuple(xs[0].shape)}")
    t = _order(int(xs[0].shape[1]))
    aa = matrix(b, a, "A")
    if tuple(aa.shape) != (yy.shape[0], n * t):
        raise ShapeError(f"A must be d x nt = {yy.shape[0]} x {n * t}, got shape {tuple(aa.shape)}")
    lin = yy @ stacked_powers(ww, t, backend=b) - aa
    total = None
    for x, pk, eta in zip(xs, ps, etas, strict=True):
        r = (lin @ _vec(b, x)).reshape(1, -1) - eta
        term = pk * b.sum(r * r) / eta.shape[0]
        total = term if total is None else total + term
    return finite_result(b, total, "the expected loss")


def data_moments(
    points: Sequence[Any], weights: Any, noises: Sequence[Any], *, backend: BackendLike = None
) -> tuple[Array, Scalar]:
    """``(Sigma, C) = (E[vec(X) vec(X)'], E||eta||^2)`` of a finite distribution (as in
    :func:`expected_loss`)."""
    b = resolve(backend, points[0] if len(points) else None)
    xs, ps, etas = _finite_distribution(b, points, weights, noises, None)
    sigma = None
    c = None
    for x, pk, eta in zip(xs, ps, etas, strict=True):
        v = _vec(b, x)
        s_k = pk * b.outer(v, v)
        c_k = pk * b.sum(eta * eta) / eta.shape[0]
        sigma = s_k if sigma is None else sigma + s_k
        c = c_k if c is None else c + c_k
    return finite_result(b, sigma, "Sigma = E[vec(X) vec(X)']"), finite_result(b, c, "C = E||eta||^2")


# =============================================================================== critical points
def hessian_eigenvalues(h: Array, b: Backend) -> list[Any]:
    """Eigenvalues (ascending) of a symmetric matrix: at b's precision for mpmath (as mpf),
    in float64 otherwise; SymPy matrices are evaluated at 50 digits."""
    vals, _ = _eigh(b, h, vectors=False)
    return vals


def _eigh(b: Backend, h: Array, *, vectors: bool = True) -> tuple[list[Any], Any]:
    m = h.shape[0]
    if b.family == "mpmath":
        ctx = b.ctx  # type: ignore[attr-defined]
        sym = ctx.matrix(((h + b.transpose(h)) / 2).tolist())
        if not vectors:
            e = ctx.eigsy(sym, eigvals_only=True)
            return sorted(e[i] for i in range(m)), None
        e, q = ctx.eigsy(sym)
        order = sorted(range(m), key=lambda i: e[i])
        qq = np.empty((m, m), dtype=object)
        for c, i in enumerate(order):
            for r in range(m):
                qq[r, c] = q[r, i]
        return [e[i] for i in order], qq
    if b.exact:
        hp = get_backend("mpmath")
        return _eigh(hp, hp.asarray(h), vectors=vectors)
    x = b.to_numpy(h)
    x = (x + x.T) / 2
    if not vectors:
        return [float(v) for v in np.linalg.eigvalsh(x)], None
    e, q = np.linalg.eigh(x)
    return [float(v) for v in e], b.asarray(q)


def sigma_min(w: Any, *, backend: BackendLike = None) -> Any:
    """The smallest singular value of W: at b's precision for mpmath (an mpf), else a float
    (SymPy matrices at 50 digits)."""
    b = resolve(backend, w)
    ww = matrix(b, w, "W", square=True)
    if ww.shape[0] == 0:
        raise ShapeError("W must be at least 1 x 1")
    if b.family == "mpmath":
        ctx = b.ctx  # type: ignore[attr-defined]
        s = ctx.svd_r(ctx.matrix(ww.tolist()), compute_uv=False)
        return min(s[i] for i in range(ww.shape[0]))
    if b.exact:
        hp = get_backend("mpmath")
        return sigma_min(hp.asarray(ww), backend=hp)
    return float(np.linalg.svd(b.to_numpy(ww), compute_uv=False)[-1])


def classify(eigenvalues: Sequence[Any], *, rel_tol: float = 1e-20) -> Kind:
    """min / max / saddle from the Hessian's eigenvalues; ``degenerate`` when one of them is
    zero to within ``rel_tol`` times the largest (the second-order test cannot decide)."""
    vals = [float(v) for v in real_values(eigenvalues, "eigenvalues")]
    top = max((abs(v) for v in vals), default=0.0)
    tol = rel_tol * top
    if top == 0.0 or any(abs(v) <= tol for v in vals):
        return "degenerate"
    if all(v > 0 for v in vals):
        return "min"
    if all(v < 0 for v in vals):
        return "max"
    return "saddle"


def _newton_step(b: Backend, h: Array, g: Array, n: int, *, mode: str, floor: float) -> Array:
    """A Newton step on the gradient through the eigendecomposition of the Hessian: eigenvalues
    below ``floor`` (relative) are dropped (pseudo-inverse, so degenerate manifolds of critical
    points still converge); ``mode="min"`` uses |lambda| (saddle-free Newton, a descent direction)."""
    vals, q = _eigh(b, h)
    top = max(abs(float(v)) for v in vals) if vals else 0.0
    if top == 0.0:
        raise SingularError("the Hessian is zero")
    gv = g.reshape(n * n)
    coef = b.transpose(q) @ gv
    out = []
    for i, lam in enumerate(vals):
        lam_f = float(lam)
        if abs(lam_f) <= floor * top:
            out.append(coef[i] * 0)
            continue
        div = abs(lam) if mode == "min" else lam
        out.append(coef[i] / div)
    step = q @ b.stack(out)
    return -step.reshape(n, n)


def refine_critical_point(
    w: Any, y: Any, a: Any, sigma: Any, t: Any, *, backend: BackendLike = None, max_steps: int = 12
) -> tuple[Array, Scalar]:
    """Newton's method on the true gradient at b's precision (pseudo-inverse of the Hessian):
    from a point near a critical point, converges quadratically to it. Returns (W, ||grad R(W)||_F);
    stops when the gradient norm no longer decreases."""
    b = resolve(backend, w)
    pb = problem(y, a, sigma, t, backend=b, psd=False)
    ww = _w(pb, w)
    return _refine(pb, ww, max_steps)


def _refine(pb: Problem, w: Array, max_steps: int) -> tuple[Array, Scalar]:
    b, n = pb.b, pb.n
    g = finite_result(b, _grad(pb, w), "the gradient of R")
    gn = b.norm(g)
    floor = max(b.eps, 1e-300) ** 0.5
    for _ in range(max_steps):
        if b.is_zero(gn):
            break
        try:
            step = _newton_step(b, finite_result(b, _hess(pb, w), "the Hessian of R"), g, n, mode="any", floor=floor)
        except SingularError:
            break
        w2 = w + step
        g2 = _grad(pb, w2)
        gn2 = b.norm(g2)
        if not b.positive(gn - gn2):
            break
        w, g, gn = w2, g2, gn2
    return w, gn


@dataclass(frozen=True)
class CriticalPoint:
    """A critical point of R, refined at high precision: W (object array of mpf), R(W), the
    gradient norm there, the Hessian's eigenvalues, sigma_min(W), the second-order class, and
    how many starts converged to it. ``exact`` holds W's entry as an exact algebraic number
    (SymPy CRootOf) when it was found exactly (n = 1)."""

    w: np.ndarray
    risk: Any
    gradient_norm: Any
    hessian_eigenvalues: tuple[Any, ...]
    sigma_min: Any
    kind: Kind
    hits: int = 1
    exact: Any = None

    def w_strings(self, digits: int | None = None) -> list[list[str]]:
        """W as nested lists of decimal strings (all the digits held, or ``digits``)."""
        return [[_nstr(v, digits) for v in row] for row in self.w]

    def summary(self) -> dict[str, Any]:
        """JSON-ready numbers (20 significant digits)."""
        return {
            "W": self.w_strings(20),
            "risk": _nstr(self.risk, 20),
            "gradient_norm": _nstr(self.gradient_norm, 3),
            "hessian_eigenvalues": [_nstr(v, 8) for v in self.hessian_eigenvalues],
            "sigma_min": _nstr(self.sigma_min, 12),
            "kind": self.kind,
            "hits": self.hits,
        }


def _nstr(v: Any, digits: int | None) -> str:
    import mpmath

    if isinstance(v, mpmath.mpf) or type(v).__module__.startswith("mpmath"):
        ctx = getattr(v, "context", mpmath.mp)
        return str(ctx.nstr(v, digits or int(ctx.dps) + 3, strip_zeros=True))
    return f"{float(v):.{digits or 17}g}"


def _float_search(
    pb: Problem, rng: np.random.Generator, starts: int, scale: float, max_iter: int
) -> tuple[list[np.ndarray], int]:
    """Float64 damped Newton from ``starts`` random W: even starts minimise R (saddle-free
    Newton with an Armijo line search on R), odd ones solve grad R = 0 (Newton with a line
    search on ||grad R||^2, so saddles and maxima are found too). Returns the converged W."""
    b, n = pb.b, pb.n
    found: list[np.ndarray] = []
    converged = 0
    for k in range(starts):
        mode = "min" if k % 2 == 0 else "any"
        w = b.asarray(rng.standard_normal((n, n)) * scale * (0.5, 1.0, 2.0)[(k // 2) % 3])
        ok = False
        for _ in range(max_iter):
            g = _grad(pb, w)
            gs = gradient_scale(pb, w)
            gn = float(np.linalg.norm(g))
            if not math.isfinite(gn) or float(np.linalg.norm(w)) > 1e4 * (1.0 + scale):
                break
            if gn <= 1e-11 * max(gs, 1e-300):
                ok = True
                break
            try:
                step = _newton_step(b, _hess(pb, w), g, n, mode=mode, floor=1e-12)
            except SingularError:
                break
            if mode == "min":
                r0 = float(_risk(pb, w))
                slope = float(np.sum(g * step))
                alpha = 1.0
                while alpha > 1e-10 and not float(_risk(pb, w + alpha * step)) <= r0 + 1e-4 * alpha * slope:
                    alpha /= 2
            else:
                m0 = gn * gn
                alpha = 1.0
                while alpha > 1e-10 and not float(np.sum(_grad(pb, w + alpha * step) ** 2)) <= (1 - 1e-4 * alpha) * m0:
                    alpha /= 2
            if alpha <= 1e-10:
                # stalled: a last full Newton step settles a point already within rounding of critical
                if gn <= 1e-7 * max(gs, 1e-300):
                    ok = True
                break
            w = w + alpha * step
        if ok:
            converged += 1
            found.append(np.array(w, dtype=np.float64))
    return found, converged


def find_critical_points(
    y: Any,
    a: Any,
    sigma: Any,
    t: Any,
    *,
    starts: int = 32,
    seed: int | np.random.Generator = 0,
    digits: int = 50,
    c: Any = 0,
    scale: float = 1.0,
    max_iter: int = 200,
) -> list[CriticalPoint]:
    """Critical points of R found by ``starts`` float64 runs of damped Newton on the true
    gradient (half minimising, half solving grad R = 0; starting W with N(0, s^2) entries,
    s = scale times 0.5, 1 or 2), deduplicated, then refined by Newton at ``digits`` digits and
    classified by the Hessian's eigenvalues there. Sorted by risk; starts that do not converge
    are dropped. Finds critical points, never proves there are no others."""
    starts = integer(starts, "starts", minimum=1, maximum=MAX_SIZE)
    digits = integer(digits, "digits", minimum=16, maximum=MAX_DIGITS)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    f64 = get_backend("numpy-float64")
    hp = get_backend("mpmath" if digits == 50 else f"mpmath-{digits}")
    ph = problem(_hp_input(hp, y), _hp_input(hp, a), _hp_input(hp, sigma), t, _hp_input(hp, c), backend=hp)
    pf = problem(hp.to_numpy(ph.y), hp.to_numpy(ph.a), hp.to_numpy(ph.sigma), ph.t, float(ph.c), backend=f64)
    raw, _ = _float_search(pf, rng, starts, scale, max_iter)
    return _refine_all(ph, raw, digits)


def _hp_input(hp: Backend, x: Any) -> Any:
    """Inputs for the high-precision problem: strings and SymPy/mpmath values keep their digits."""
    if hasattr(x, "detach"):
        x = tensor_data(x, "input", hp.name)
    if isinstance(x, (int, float, str)):
        return x
    return hp.asarray(x)  # mpmath values of any precision keep their digits (MpmathBackend)


def _refine_all(ph: Problem, raw: Sequence[np.ndarray], digits: int) -> list[CriticalPoint]:
    hp = ph.b
    groups: list[tuple[np.ndarray, int]] = []
    for w in raw:
        for i, (rep, hits) in enumerate(groups):
            if np.linalg.norm(w - rep) <= 1e-6 * (1.0 + np.linalg.norm(rep)):
                groups[i] = (rep, hits + 1)
                break
        else:
            groups.append((w, 1))
    refined: list[CriticalPoint] = []
    tol = 10.0 ** (-(digits - 8))
    for rep, hits in groups:
        w, gn = _refine(ph, hp.asarray(rep), 12)
        gs = gradient_scale(ph, w)
        if not float(gn) <= tol * max(gs, 1.0):
            continue
        wf = hp.to_numpy(w)
        dup = next(
            (
                i
                for i, cp in enumerate(refined)
                if np.linalg.norm(hp.to_numpy(cp.w) - wf) <= 1e-12 * (1.0 + np.linalg.norm(wf))
            ),
            None,
        )
        if dup is not None:
            old = refined[dup]
            refined[dup] = CriticalPoint(
                old.w, old.risk, old.gradient_norm, old.hessian_eigenvalues, old.sigma_min, old.kind, old.hits + hits
            )
            continue
        eig = tuple(hessian_eigenvalues(_hess(ph, w), hp))
        refined.append(
            CriticalPoint(
                w=w,
                risk=_risk(ph, w),
                gradient_norm=gn,
                hessian_eigenvalues=eig,
                sigma_min=sigma_min(w, backend=hp),
                kind=classify(eig, rel_tol=10.0 ** (-digits / 2)),
                hits=hits,
            )
        )
    refined.sort(key=lambda cp: cp.risk)
    return refined


@dataclass(frozen=True)
class GlobalMinimum:
    """The global minimum of R for comparison: ``certified`` when every real critical point was
    found exactly (n = 1, SymPy's real roots of R'(w)), else the best critical point found."""

    risk: Any
    w: np.ndarray
    certified: bool
    how: str
    critical_points: list[CriticalPoint] = field(default_factory=list)


def global_minimum(
    y: Any,
    a: Any,
    sigma: Any,
    t: Any,
    *,
    c: Any = 0,
    starts: int = 32,
    seed: int | np.random.Generator = 0,
    digits: int = 50,
) -> GlobalMinimum:
    """The global minimum of R. n = 1: R is a polynomial in w bounded below, so its minimum is
    attained at a real root of R'(w); every root is isolated exactly (inputs taken exactly: floats
    by their binary values) and R evaluated at ``digits`` digits: certified. n >= 2: the lowest
    critical point :func:`find_critical_points` finds (not a certificate)."""
    s = get_backend("sympy")
    ps = problem(_hp_input(s, y), _hp_input(s, a), _hp_input(s, sigma), t, _hp_input(s, c), backend=s)
    if ps.n == 1:
        points = exact_critical_points_1d(ps, digits)
        if not points:  # R constant: every w is a global minimiser
            hp = get_backend("mpmath" if digits == 50 else f"mpmath-{digits}")
            zero = hp.zeros((1, 1))
            r = hp.scalar(0) + hp.asarray(np.array([[ps.c]], dtype=object))[0, 0]
            return GlobalMinimum(r, zero, True, "R is constant: every W is a global minimum", [])
        best = min(points, key=lambda cp: cp.risk)
        return GlobalMinimum(
            best.risk, best.w, True, f"all {len(points)} real roots of R'(w), exactly (SymPy real_roots)", points
        )
    found = find_critical_points(y, a, sigma, t, starts=starts, seed=seed, digits=digits, c=c)
    if not found:
        raise DomainError("no critical point found: give more starts")
    best = found[0]
    return GlobalMinimum(
        best.risk,
        best.w,
        False,
        f"lowest of {len(found)} critical points found from {starts} starts (not a certificate)",
        found,
    )


def exact_critical_points_1d(pb: Problem, digits: int = 50) -> list[CriticalPoint]:
    """Every real critical point of R for n = 1 (exact inputs on the SymPy backend): the real
    roots of the polynomial R'(w), isolated exactly; R, R'' and |w| evaluated at ``digits``
    digits from the exact roots. Empty when R is constant."""
    import sympy

    if pb.n != 1 or not pb.b.exact:
        raise DomainError("exact_critical_points_1d needs n = 1 and exact (SymPy) inputs")
    x = sympy.Symbol("w", real=True)
    r_poly = sympy.Poly(sympy.expand(_risk(pb, np.array([[x]], dtype=object))), x)
    d1 = r_poly.diff(x)
    d2 = d1.diff(x)
    if d1.is_zero:
        return []
    hp = get_backend("mpmath" if digits == 50 else f"mpmath-{digits}")
    out = []
    _, factors = d1.sqf_list()
    for factor, multiplicity in factors:
        for root in sympy.real_roots(factor):
            wv = hp.scalar(str(sympy.N(root, digits + 10)))
            r_val = hp.scalar(str(sympy.N(r_poly.as_expr().subs(x, root), digits + 10)))
            curv = sympy.N(d2.as_expr().subs(x, root), digits + 10)
            # a root of R' of multiplicity >= 2 is exactly a root of R'' too: degenerate
            kind: Kind = "degenerate" if multiplicity > 1 else ("min" if curv > 0 else "max")
            out.append(
                CriticalPoint(
                    w=np.array([[wv]], dtype=object),
                    risk=r_val,
                    gradient_norm=hp.scalar(0),
                    hessian_eigenvalues=(hp.scalar(str(curv)),),
                    sigma_min=abs(wv),
                    kind=kind,
                    exact=root,
                )
            )
    out.sort(key=lambda cp: cp.w[0, 0])
    return out
