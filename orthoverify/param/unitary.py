"""Unitary matrices, their real block form, and the unitary RNN (uRNN) of Arjovsky, Shah & Bengio.

Sources: Sec. 3 and 4.3 of Mhammedi et al. (ICML 2017; the real twin of a complex RNN, eq. 3;
the real-space modReLU after eq. 4; complex Householder reflections and Corollary 1) and
Sec. 2-3 of Arjovsky et al. (ICML 2016; the building blocks D, R, Pi, F, F^-1 and
W = D3 R2 F^-1 D2 Pi R1 F D1; modReLU; the initialisation of Sec. 3.4).

Complex numbers are carried as pairs of real arrays of one backend (:class:`CArray`): every
backend of the protocol (NumPy, torch with autograd, mpmath, SymPy, the counting arithmetic)
then runs complex arithmetic unchanged, and the pair is exactly the real embedding
``(Re h, Im h)`` of Sec. 3. Conventions: the DFT is the unitary one,
``F_jk = exp(-2 pi i j k / n) / sqrt(n)`` (indices from 0), ``F^-1 = F*``; the permutation
``perm`` acts as ``(Pi x)_i = x_perm[i]``; reflection vectors of Corollary 1 are passed in
increasing length, ``us = [u_2, ..., u_n]``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from orthoverify.backends import Array, Backend, Scalar, get_backend, infer_backend
from orthoverify.backends.base import host_array
from orthoverify.errors import (
    DomainError,
    DTypeError,
    NonFiniteError,
    NotUnitaryError,
    ShapeError,
    ZeroVectorError,
)
from orthoverify.param._validate import (
    BackendLike,
    finite_result,
    has_range,
    pow2_exponent,
    scale_pow2,
    times_pow2,
    unscale_pow2,
)
from orthoverify.param._validate import integer as checked_integer
from orthoverify.param._validate import size as checked_size
from orthoverify.tolerance import THRESHOLD

__all__ = [
    "CArray",
    "URNNParameters",
    "apply_reflection",
    "as_carray",
    "ceye",
    "cnorm",
    "complex_reflection",
    "complex_rnn",
    "ct",
    "czeros",
    "dft_matrix",
    "embed_matrix",
    "embed_vector",
    "fft",
    "fft_native",
    "init_h0",
    "init_h0_bound",
    "m1_hat",
    "modrelu",
    "modrelu_real",
    "modrelu_real_indices",
    "modrelu_relu_form",
    "permutation_matrix",
    "phase_diag",
    "phases",
    "polish_unitary",
    "real_rnn",
    "require_unitary",
    "separable_activation",
    "split_matrix",
    "split_vector",
    "unitarity_ratio",
    "unitary_parameters",
    "urnn_apply",
    "urnn_factors",
    "urnn_matrix",
    "urnn_parameter_count",
    "urnn_parameters",
    "urnn_random",
]


# =========================================================================== complex arrays
class CArray:
    """A complex array as its real and imaginary parts: two arrays of one backend, same shape.

    Arithmetic: ``+``, ``-``, unary ``-``, ``@`` (complex matrix product), ``*`` (elementwise
    complex product with a CArray, or scaling by a real scalar or array), ``/`` by a real,
    indexing and :meth:`reshape` act on both parts.
    """

    __slots__ = ("im", "re")

    def __init__(self, re: Array, im: Array) -> None:
        self.re = re
        self.im = im

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.re.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __add__(self, o: CArray) -> CArray:
        return CArray(self.re + o.re, self.im + o.im)

    def __sub__(self, o: CArray) -> CArray:
        return CArray(self.re - o.re, self.im - o.im)

    def __neg__(self) -> CArray:
        return CArray(-self.re, -self.im)

    def __matmul__(self, o: CArray) -> CArray:
        return CArray(self.re @ o.re - self.im @ o.im, self.re @ o.im + self.im @ o.re)

    def __mul__(self, o: Any) -> CArray:
        if isinstance(o, CArray):
            return CArray(self.re * o.re - self.im * o.im, self.re * o.im + self.im * o.re)
        return CArray(self.re * o, self.im * o)

    def __rmul__(self, o: Any) -> CArray:
        return self.__mul__(o)

    def __truediv__(self, o: Any) -> CArray:
        return CArray(self.re / o, self.im / o)

    def conj(self) -> CArray:
        """The elementwise complex conjugate."""
        return CArray(self.re, -self.im)

    def __getitem__(self, idx: Any) -> CArray:
        return CArray(self.re[idx], self.im[idx])

    def reshape(self, *shape: int) -> CArray:
        return CArray(self.re.reshape(*shape), self.im.reshape(*shape))

    def to_complex(self, b: Backend) -> np.ndarray:
        """A complex128 NumPy copy (rounded for high-precision and exact backends)."""
        return b.to_numpy(self.re) + 1j * b.to_numpy(self.im)

    def __repr__(self) -> str:
        return f"CArray(re={self.re!r}, im={self.im!r})"


def _complex_dtype_backend(x: Any) -> Backend | None:
    """The real backend matching a complex NumPy array or torch tensor (None if not complex)."""
    if hasattr(x, "detach") and hasattr(x, "is_complex"):
        if not x.is_complex():
            return None
        import torch

        real = {torch.complex64: "float32", torch.complex128: "float64"}.get(x.dtype)
        if real is None:
            raise DTypeError(f"unsupported complex dtype {x.dtype}; use complex64 or complex128")
        return get_backend(f"torch-{real}", str(x.device))  # cuda:1 stays cuda:1
    if isinstance(x, np.ndarray) and x.dtype.kind == "c":
        return get_backend("numpy-float32" if x.dtype == np.complex64 else "numpy-float64")
    return None


def as_carray(
    x: Any, *, backend: BackendLike = None, name: str = "z", ndim: int | None = None
) -> tuple[Backend, CArray]:
    """A validated :class:`CArray` and its backend from any complex input.

    Accepts a CArray; a tuple ``(re, im)`` of two real array-likes of the same shape; a complex
    NumPy array or torch tensor (split into parts; complex64 maps to float32); a nested list of
    Python complex numbers; or a real array (imaginary part zero). Mismatched shapes raise
    ShapeError, NaN or Inf NonFiniteError.
    """
    if isinstance(x, CArray):
        re, im = x.re, x.im
    elif isinstance(x, tuple):
        if len(x) != 2:
            raise ShapeError(f"{name}: a tuple must be (real part, imaginary part), got {len(x)} items")
        re, im = x
    else:
        cb = _complex_dtype_backend(x)
        if cb is None and not hasattr(x, "detach"):
            arr = host_array(x, name, "numpy")
            if arr.dtype.kind == "c":
                x, cb = arr, get_backend("numpy-float64")
        if cb is not None:
            if backend is None:
                backend = cb
            re, im = x.real, x.imag
        else:
            re, im = x, None
    if isinstance(backend, Backend):
        b = backend
    elif isinstance(backend, str):
        b = get_backend(backend)
    else:
        b = infer_backend(re)
    rr = b.asarray(re, name=f"Re {name}")
    ii = b.zeros(tuple(rr.shape)) if im is None else b.asarray(im, name=f"Im {name}")
    if tuple(rr.shape) != tuple(ii.shape):
        raise ShapeError(
            f"{name}: real part has shape {tuple(rr.shape)} but imaginary part has shape {tuple(ii.shape)}"
        )
    if ndim is not None and rr.ndim != ndim:
        raise ShapeError(f"{name} must be {ndim}-dimensional, got shape {tuple(rr.shape)}")
    if not (b.all_finite(rr) and b.all_finite(ii)):
        raise NonFiniteError(f"{name} contains NaN or Inf")
    return b, CArray(rr, ii)


def czeros(b: Backend, shape: int | tuple[int, ...]) -> CArray:
    """A complex array of zeros."""
    return CArray(b.zeros(shape), b.zeros(shape))


def ceye(b: Backend, n: int) -> CArray:
    """The n x n identity."""
    return CArray(b.eye(n), b.zeros((n, n)))


def ct(b: Backend, x: CArray) -> CArray:
    """The conjugate transpose ``X*`` of a 2-D complex array."""
    return CArray(b.transpose(x.re), -b.transpose(x.im))


def cnorm(b: Backend, x: CArray) -> Scalar:
    """The Frobenius (2-) norm, scaled against overflow and underflow."""
    return b.norm(b.concat([x.re.reshape(-1), x.im.reshape(-1)]))


def _abs2(x: CArray) -> Array:
    """Elementwise squared modulus ``|x|^2`` (exact for exact arithmetic)."""
    return x.re * x.re + x.im * x.im


def unitarity_ratio(w: CArray, b: Backend) -> float:
    """``||W*W - I||_F / (n eps)``: the test ratio of unitarity (0 or inf when exact)."""
    n = w.shape[0]
    r = ct(b, w) @ w - ceye(b, n)
    if b.exact:
        return 0.0 if b.is_zero(r.re) and b.is_zero(r.im) else math.inf
    return b.to_float(cnorm(b, r)) / (max(n, 1) * b.eps)


def require_unitary(
    w: Any, *, backend: BackendLike = None, name: str = "W", threshold: float = THRESHOLD
) -> tuple[Backend, CArray]:
    """A square complex matrix that is unitary to within ``threshold`` (a test ratio of
    ``||W*W - I||_F / (n eps)``); else :class:`NotUnitaryError` carrying the ratio."""
    b, ww = as_carray(w, backend=backend, name=name, ndim=2)
    if ww.shape[0] != ww.shape[1]:
        raise ShapeError(f"{name} must be square, got shape {ww.shape}")
    r = unitarity_ratio(ww, b)
    if not r <= threshold:
        raise NotUnitaryError(
            f"{name} is not unitary: ||{name}*{name} - I||_F / (n eps) = {r:.3g} > {threshold}",
            ratio=r,
            threshold=threshold,
        )
    return b, ww


def polish_unitary(w: Any, *, backend: BackendLike = None, max_steps: int = 12) -> CArray:
    """The nearest unitary matrix to a nearly unitary W, to the backend's precision: Newton-Schulz
    steps ``X <- X (3I - X*X) / 2`` converge quadratically to the unitary polar factor (e.g. a
    float64 Haar sample lifted to 50 digits). W must be within 0.5 of unitary in norm."""
    b, x = as_carray(w, backend=backend, name="W", ndim=2)
    n = x.shape[0]
    if x.shape[1] != n:
        raise ShapeError(f"W must be square, got shape {x.shape}")
    eye = ceye(b, n)
    for _ in range(max_steps):
        e = ct(b, x) @ x - eye
        err = 0.0 if b.exact else b.to_float(cnorm(b, e))
        if not err <= 0.5:  # NaN too: W*W overflowed, W is nowhere near unitary
            raise NotUnitaryError(
                f"W is too far from unitary to polish: ||W*W - I||_F = {err:.3g}", ratio=err, threshold=0.5
            )
        if err <= n * b.eps:
            break
        x = x @ (eye * 3 - ct(b, x) @ x) / 2
    return x


# =========================================================================== Sec. 3: block form
def embed_matrix(w: Any, *, backend: BackendLike = None) -> Array:
    """``W_hat = [[A, -B], [B, A]]`` for ``W = A + iB`` (Sec. 3 of Mhammedi et al.; Sec. 3.1 of
    Arjovsky et al.): the real 2n x 2n matrix acting on ``(Re h, Im h)`` as W acts on h."""
    b, ww = as_carray(w, backend=backend, name="W", ndim=2)
    top = b.concat([ww.re, -ww.im], axis=1)
    bottom = b.concat([ww.im, ww.re], axis=1)
    return b.concat([top, bottom], axis=0)


def embed_vector(h: Any, *, backend: BackendLike = None) -> Array:
    """``h_hat = (Re h, Im h)``: a length-n complex vector (or n x B columns) as 2n reals."""
    b, hh, vec = _as_columns(backend, h, "h")  # type: ignore[arg-type]
    out = b.concat([hh.re, hh.im], axis=0)
    return out.reshape(out.shape[0]) if vec else out


def split_vector(x: Any, *, backend: BackendLike = None) -> CArray:
    """Inverse of :func:`embed_vector`: 2n reals (or 2n x B) as a complex n-vector."""
    b = infer_backend(x) if backend is None else (backend if isinstance(backend, Backend) else get_backend(backend))
    xx = b.check_array(x, name="x")
    if xx.ndim not in (1, 2) or xx.shape[0] % 2:
        raise ShapeError(f"x must have an even number 2n of rows, got shape {tuple(xx.shape)}")
    n = xx.shape[0] // 2
    return CArray(xx[:n], xx[n:])


def split_matrix(what: Any, *, backend: BackendLike = None, threshold: float = THRESHOLD) -> CArray:
    """Inverse of :func:`embed_matrix`: ``A + iB`` from ``[[A, -B], [B, A]]``. A 2n x 2n matrix
    that is not of this block form (test ratio above ``threshold``) raises DomainError."""
    b = infer_backend(what) if backend is None else (backend if isinstance(backend, Backend) else get_backend(backend))
    m = b.check_array(what, name="W_hat", ndim=2)
    if m.shape[0] != m.shape[1] or m.shape[0] % 2:
        raise ShapeError(f"W_hat must be 2n x 2n, got shape {tuple(m.shape)}")
    n = m.shape[0] // 2
    a, bb = m[:n, :n], m[n:, :n]
    gap = b.concat([(m[n:, n:] - a).reshape(-1), (m[:n, n:] + bb).reshape(-1)])
    if b.exact:
        ok = b.is_zero(gap)
        ratio = 0.0 if ok else math.inf
    else:
        scale = max(b.to_float(b.norm(m)), 1.0)
        ratio = b.to_float(b.norm(gap)) / (max(n, 1) * b.eps * scale)
        ok = ratio <= threshold
    if not ok:
        raise DomainError(f"W_hat is not of the form [[A, -B], [B, A]]: block mismatch ratio {ratio:.3g} > {threshold}")
    return CArray(a, bb)


# =========================================================================== reflections, phases
def _unit_scaled(b: Backend, u: CArray) -> CArray:
    """``u`` divided by its largest part: the reflection is scale-invariant, and scaling first
    keeps ``u*u`` from overflowing or underflowing (exact arithmetic keeps u as it is)."""
    if b.exact:
        return u
    s = b.max_abs(b.concat([u.re, u.im]))
    return u / s


def _check_vector(b: Backend, u: CArray, name: str) -> None:
    if u.ndim != 1:
        raise ShapeError(f"{name} must be 1-dimensional, got shape {u.shape}")
    if b.is_zero(u.re) and b.is_zero(u.im):
        raise ZeroVectorError(f"{name} is the zero vector: the reflection I - 2uu*/||u||^2 is undefined")


def complex_reflection(u: Any, n: int | None = None, *, backend: BackendLike = None) -> CArray:
    """``H_hat_k(u) = diag(I_{n-k}, I_k - 2 u u* / ||u||^2)`` (eq. 6 with ' replaced by *, Sec. 4.3),
    k = len(u) >= 1; with k = n it is the uRNN's reflection R of Arjovsky et al. Sec. 2."""
    n = None if n is None else checked_size(n, "n")
    b, uu = as_carray(u, backend=backend, name="u")
    _check_vector(b, uu, "u")
    k = uu.shape[0]
    size = k if n is None else n
    if size < k:
        raise ShapeError(f"u has length {k} > n = {size}")
    v = _unit_scaled(b, uu)
    col = v.reshape(k, 1)
    outer = col @ ct(b, col)
    block = ceye(b, k) - outer * (2 / b.sum(_abs2(v)))
    if size == k:
        return block
    return CArray(b.block_diag(b.eye(size - k), block.re), b.block_diag(b.zeros((size - k, size - k)), block.im))


def apply_reflection(u: Any, x: Any, *, backend: BackendLike = None) -> CArray:
    """``H_hat_k(u) x = x - 2 u (u* x) / ||u||^2`` on the last k rows of x (n or n x B): O(n B)."""
    b, uu = as_carray(u, backend=backend, name="u")
    _check_vector(b, uu, "u")
    b, xx, vec = _as_columns(b, x, "x")
    k = uu.shape[0]
    x2 = xx.reshape(xx.shape[0], 1) if vec else xx
    nrows = x2.shape[0]
    if nrows < k:
        raise ShapeError(f"u has length {k} > n = {nrows}")
    v = _unit_scaled(b, uu).reshape(k, 1)
    tail = x2[nrows - k :]
    coef = (ct(b, v) @ tail) * (2 / b.sum(_abs2(v)))  # 1 x B
    new_tail = tail - v @ coef
    out = (
        new_tail
        if nrows == k
        else CArray(b.concat([x2.re[: nrows - k], new_tail.re]), b.concat([x2.im[: nrows - k], new_tail.im]))
    )
    return out.reshape(nrows) if vec else out


def phases(theta: Any, *, backend: BackendLike = None) -> CArray:
    """``exp(i theta)`` elementwise, for a real vector theta."""
    b = infer_backend(theta) if backend is None else (backend if isinstance(backend, Backend) else get_backend(backend))
    t = b.check_array(theta, name="theta", ndim=1)
    return CArray(b.cos(t), b.sin(t))


def phase_diag(theta: Any, *, backend: BackendLike = None) -> CArray:
    """``H_hat_1(theta) = diag(exp(i theta_1), ..., exp(i theta_n))`` (Sec. 4.3); also the uRNN's D."""
    b = infer_backend(theta) if backend is None else (backend if isinstance(backend, Backend) else get_backend(backend))
    p = phases(theta, backend=b)
    return CArray(b.diag(p.re), b.diag(p.im))


# =========================================================================== Corollary 1
def _reflection_list(b: Backend, us: Sequence[Any], n: int) -> list[CArray]:
    if len(us) != n - 1:
        raise ShapeError(f"need n - 1 = {n - 1} reflection vectors u_2, ..., u_n, got {len(us)}")
    out = []
    for i, u in enumerate(us):
        _, uu = as_carray(u, backend=b, name=f"u_{i + 2}", ndim=1)
        if uu.shape[0] != i + 2:
            raise ShapeError(f"u_{i + 2} must have length {i + 2}, got {uu.shape[0]} (pass [u_2, ..., u_n])")
        out.append(uu)
    return out


def m1_hat(theta: Any, us: Sequence[Any], *, backend: BackendLike = None) -> CArray:
    """``M_hat_1(theta, u_2, ..., u_n) = H_hat_n(u_n) ... H_hat_2(u_2) H_hat_1(theta)`` (Cor. 1)."""
    b = infer_backend(theta) if backend is None else (backend if isinstance(backend, Backend) else get_backend(backend))
    t = b.check_array(theta, name="theta", ndim=1)
    n = t.shape[0]
    vecs = _reflection_list(b, us, n)
    m = phase_diag(t, backend=b)
    for u in vecs:  # H_hat_2 first: it is the rightmost reflection
        m = apply_reflection(u, m, backend=b)
    return m


def unitary_parameters(
    w: Any, *, backend: BackendLike = None, threshold: float = THRESHOLD
) -> tuple[Array, list[CArray]]:
    """Parameters ``(theta, [u_2, ..., u_n])`` with ``M_hat_1(theta, u) = W`` for unitary W: the
    complex Householder QR behind Corollary 1 (its proof sketch, eq. 17, with the phase of x_1
    as corrected: ``x_1 = e^(i phi) |x_1|``). Column j is reflected onto ``-e^(i phi) ||x|| e_j``
    with ``u = x + e^(i phi) ||x|| e_1`` (never zero, no cancellation); what is left is diagonal
    with unit-modulus entries, the phases theta. Non-unitary W raises NotUnitaryError."""
    b, a = require_unitary(w, backend=backend, threshold=threshold)
    n = a.shape[0]
    us: list[CArray] = []
    for j in range(n - 1):  # k = n - j: H_hat_k acts on rows j..n-1
        x = a[j:, j]
        alpha = cnorm(b, x)
        mod1 = b.sqrt(x.re[0] * x.re[0] + x.im[0] * x.im[0])
        if b.is_zero(mod1):
            ph_re, ph_im = b.scalar(1), b.scalar(0)
        else:
            ph_re, ph_im = x.re[0] / mod1, x.im[0] / mod1
        e1 = b.concat([b.stack([b.scalar(1)]), b.zeros(n - j - 1)])
        u = x + CArray(e1 * (ph_re * alpha), e1 * (ph_im * alpha))
        us.append(u)
        tail = apply_reflection(u, a[j:], backend=b)
        a = tail if j == 0 else CArray(b.concat([a.re[:j], tail.re]), b.concat([a.im[:j], tail.im]))
    d = CArray(b.diagonal(a.re), b.diagonal(a.im))
    theta = b.atan2(d.im, d.re)
    return theta, us[::-1]


# =========================================================================== DFT and FFT
def dft_matrix(n: int, *, backend: BackendLike = None, inverse: bool = False, normalized: bool = True) -> CArray:
    """``F_jk = exp(-2 pi i j k / n) / sqrt(n)`` (``+`` for the inverse). ``normalized=False``
    drops the 1/sqrt(n): the convention of numpy.fft.fft, which is *not* unitary (F*F = n I)."""
    n = checked_size(n, "n")
    b = backend if isinstance(backend, Backend) else get_backend(backend or "numpy-float64")
    if n < 1:
        raise ShapeError(f"n must be >= 1, got {n}")
    sign = 1 if inverse else -1
    jk = np.outer(np.arange(n), np.arange(n)) % n  # exp is 2 pi-periodic: reduce first (accuracy)
    ang = b.asarray(jk.astype(np.int64)) * (2 * b.pi()) / n if not b.exact else _exact_angles(b, jk, n)
    f = CArray(b.cos(ang), b.sin(ang) * sign)
    return f / b.sqrt(b.scalar(n)) if normalized else f


def _exact_angles(b: Backend, jk: np.ndarray, n: int) -> Array:
    import sympy

    return b.asarray(np.vectorize(lambda v: 2 * sympy.pi * sympy.Rational(int(v), n), otypes=[object])(jk))


def _twiddles(b: Backend, m: int, n: int, sign: int) -> CArray:
    """``exp(sign 2 pi i k / n)`` for k = 0..m-1, as an m x 1 column."""
    k = np.arange(m)
    ang = _exact_angles(b, k.reshape(m, 1), n) if b.exact else b.asarray(k.reshape(m, 1)) * (2 * b.pi()) / n
    return CArray(b.cos(ang), b.sin(ang) * sign)


def _fft_pow2(b: Backend, x: CArray, sign: int) -> CArray:
    """Unnormalised radix-2 decimation-in-time DFT of the columns of x (rows a power of 2)."""
    n = x.shape[0]
    if n == 1:
        return x
    even = _fft_pow2(b, x[0::2], sign)
    odd = _fft_pow2(b, x[1::2], sign)
    tw = _twiddles(b, n // 2, n, sign)
    t = tw * odd  # Count fft butterfly
    top = even + t  # Count fft butterfly
    bottom = even - t  # Count fft butterfly
    return CArray(b.concat([top.re, bottom.re]), b.concat([top.im, bottom.im]))


def _chirp(b: Backend, n: int, m: int, sign: int) -> CArray:
    """``exp(sign pi i j^2 / n)`` for j = 0..m-1 (m x 1), with j^2 reduced mod 2n first."""
    j2 = (np.arange(m, dtype=np.int64) ** 2) % (2 * n)
    if b.exact:
        import sympy

        ang = b.asarray(np.array([sympy.pi * sympy.Rational(int(v), n) for v in j2], dtype=object).reshape(m, 1))
    else:
        ang = b.asarray(j2.reshape(m, 1)) * b.pi() / n
    return CArray(b.cos(ang), b.sin(ang) * sign)


def _fft_bluestein(b: Backend, x: CArray, sign: int) -> CArray:
    """Unnormalised DFT of any length through Bluestein's chirp-z convolution (power-of-2 FFTs
    of size M >= 2n - 1): O(n log n) for every n."""
    n, cols = x.shape
    m = 1
    while m < 2 * n - 1:
        m *= 2
    w = _chirp(b, n, n, sign)  # exp(sign pi i j^2 / n)
    a = x * w  # Count bluestein chirp
    a = CArray(b.concat([a.re, b.zeros((m - n, cols))]), b.concat([a.im, b.zeros((m - n, cols))]))
    wc = w.conj()
    rev = list(range(n - 1, 0, -1))
    c = CArray(
        b.concat([wc.re, b.zeros((m - 2 * n + 1, 1)), wc.re[rev]]),
        b.concat([wc.im, b.zeros((m - 2 * n + 1, 1)), wc.im[rev]]),
    )
    fa = _fft_pow2(b, a, -1)
    fc = _fft_pow2(b, c, -1)
    conv = _fft_pow2(b, fa * fc, 1) / m  # Count bluestein convolution
    return w * conv[:n]  # Count bluestein chirp


def _as_columns(b: Backend | None, x: Any, name: str) -> tuple[Backend, CArray, bool]:
    """x as n x B columns (a vector as n x 1), whether it was a vector; ShapeError otherwise."""
    b, xx = as_carray(x, backend=b, name=name)
    if xx.ndim == 1:
        return b, xx.reshape(xx.shape[0], 1), True
    if xx.ndim != 2:
        raise ShapeError(f"{name} must be a vector or a matrix of columns, got shape {xx.shape}")
    return b, xx, False


def fft(x: Any, *, backend: BackendLike = None, inverse: bool = False, normalized: bool = True) -> CArray:
    """``F x`` (or ``F^-1 x``) of a complex vector or of the columns of a matrix, in O(n log n):
    radix-2 for powers of two, Bluestein otherwise; written against the backend protocol, so
    it runs exactly (SymPy), at high precision (mpmath) and under torch autograd."""
    b0 = backend if isinstance(backend, Backend) else (get_backend(backend) if backend else None)
    b, xx, vec = _as_columns(b0, x, "x")
    n = xx.shape[0]
    if n == 0:
        raise ShapeError("x is empty")
    sign = 1 if inverse else -1
    out = _fft_pow2(b, xx, sign) if n & (n - 1) == 0 else _fft_bluestein(b, xx, sign)
    if normalized:
        out = out / b.sqrt(b.scalar(n))
    return out.reshape(n) if vec else out


def fft_native(x: Any, *, backend: BackendLike = None, inverse: bool = False, normalized: bool = True) -> CArray:
    """The same transform through numpy.fft or torch.fft (float backends only): the fast path
    cross-checked against :func:`fft` and the dense :func:`dft_matrix`."""
    b0 = backend if isinstance(backend, Backend) else (get_backend(backend) if backend else None)
    b, xx, vec = _as_columns(b0, x, "x")
    if xx.shape[0] == 0:
        raise ShapeError("x is empty")
    norm: Literal["ortho", "backward"] = "ortho" if normalized else "backward"
    if b.family == "numpy":
        z = xx.re + 1j * xx.im
        out = np.fft.ifft(z, axis=0, norm=norm) if inverse else np.fft.fft(z, axis=0, norm=norm)
        if not normalized and inverse:
            out = out * xx.shape[0]  # numpy's backward inverse divides by n; the DFT with + sign does not
        res = CArray(b.asarray(out.real), b.asarray(out.imag))
    elif b.family == "torch":
        import torch

        z = torch.complex(xx.re, xx.im)
        out_t = torch.fft.ifft(z, dim=0, norm=norm) if inverse else torch.fft.fft(z, dim=0, norm=norm)
        if not normalized and inverse:
            out_t = out_t * xx.shape[0]
        res = CArray(out_t.real, out_t.imag)
    else:
        raise DomainError(f"no native FFT on backend {b.name}: use fft()")
    return res.reshape(xx.shape[0]) if vec else res


# =========================================================================== uRNN (Arjovsky et al.)
def _permutation(perm: Any, n: int) -> list[int]:
    try:
        p = [int(v) for v in perm]
        if any(float(v) != int(v) for v in perm):
            raise ValueError
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(inf)
        raise DomainError(f"perm is not a permutation: {perm!r} must be integers") from None
    if len(p) != n or sorted(p) != list(range(n)):
        raise DomainError(f"perm is not a permutation of 0..{n - 1}: {p}")
    return p


def permutation_matrix(perm: Any, *, backend: BackendLike = None) -> Array:
    """``Pi`` with ``(Pi x)_i = x_perm[i]``; anything but a permutation of 0..n-1 raises DomainError."""
    b = backend if isinstance(backend, Backend) else get_backend(backend or "numpy-float64")
    try:
        seq = list(perm)
    except TypeError:
        raise DomainError(f"perm is not a permutation: {perm!r} is not a sequence of integers") from None
    p = _permutation(seq, len(seq))
    return b.eye(len(p))[p]


@dataclass(frozen=True)
class URNNParameters:
    """The 7n real parameters of ``W = D3 R2 F^-1 D2 Pi R1 F D1`` and the fixed permutation:
    phases w1, w2, w3 (real n-vectors) and reflection vectors v1, v2 (complex n-vectors)."""

    w1: Array
    w2: Array
    w3: Array
    v1: CArray
    v2: CArray
    perm: tuple[int, ...]
    backend: Backend

    @property
    def n(self) -> int:
        return int(self.w1.shape[0])


def urnn_parameters(
    w1: Any, w2: Any, w3: Any, v1: Any, v2: Any, perm: Any, *, backend: BackendLike = None
) -> URNNParameters:
    """Validated uRNN parameters (shapes agree, v1 and v2 nonzero, perm a permutation)."""
    b = infer_backend(w1) if backend is None else (backend if isinstance(backend, Backend) else get_backend(backend))
    ws = [b.check_array(w, name=nm, ndim=1) for w, nm in ((w1, "w1"), (w2, "w2"), (w3, "w3"))]
    n = ws[0].shape[0]
    if n < 1:
        raise ShapeError("the uRNN needs n >= 1")
    for w, nm in zip(ws, ("w1", "w2", "w3"), strict=True):
        if w.shape[0] != n:
            raise ShapeError(f"{nm} has length {w.shape[0]}, expected n = {n}")
    vs = []
    for v, nm in ((v1, "v1"), (v2, "v2")):
        _, vv = as_carray(v, backend=b, name=nm, ndim=1)
        if vv.shape[0] != n:
            raise ShapeError(f"{nm} has length {vv.shape[0]}, expected n = {n}")
        _check_vector(b, vv, nm)
        vs.append(vv)
    return URNNParameters(ws[0], ws[1], ws[2], vs[0], vs[1], tuple(_permutation(perm, n)), b)


def urnn_random(rng: np.random.Generator, n: int) -> dict[str, Any]:
    """Parameters drawn as Sec. 3.4 initialises them: w ~ U[-pi, pi], Re and Im of v ~ U[-1, 1],
    a random permutation (float64 NumPy arrays; pass them to :func:`urnn_parameters`)."""
    n = checked_size(n, "n", minimum=1)
    return {
        "w1": rng.uniform(-np.pi, np.pi, n),
        "w2": rng.uniform(-np.pi, np.pi, n),
        "w3": rng.uniform(-np.pi, np.pi, n),
        "v1": (rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)),
        "v2": (rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)),
        "perm": [int(v) for v in rng.permutation(n)],
    }


def urnn_parameter_count(n: int) -> int:
    """Real parameters of W: 3n phases and two complex n-vectors (Pi is fixed, F has none)."""
    n = checked_size(n, "n")
    return 3 * n + 2 * (2 * n)


def urnn_factors(p: URNNParameters) -> dict[str, CArray]:
    """The eight factors of ``W = D3 R2 F^-1 D2 Pi R1 F D1`` as dense complex matrices."""
    b, n = p.backend, p.n
    pim = permutation_matrix(p.perm, backend=b)
    return {
        "D1": phase_diag(p.w1, backend=b),
        "F": dft_matrix(n, backend=b),
        "R1": complex_reflection(p.v1, backend=b),
        "Pi": CArray(pim, b.zeros((n, n))),
        "D2": phase_diag(p.w2, backend=b),
        "Finv": dft_matrix(n, backend=b, inverse=True),
        "R2": complex_reflection(p.v2, backend=b),
        "D3": phase_diag(p.w3, backend=b),
    }


def urnn_matrix(p: URNNParameters) -> CArray:
    """The dense ``W = D3 R2 F^-1 D2 Pi R1 F D1`` (O(n^3): the reference for :func:`urnn_apply`)."""
    f = urnn_factors(p)
    return f["D3"] @ f["R2"] @ f["Finv"] @ f["D2"] @ f["Pi"] @ f["R1"] @ f["F"] @ f["D1"]


FFTPath = Literal["generic", "native", "dense"]


def urnn_apply(p: URNNParameters, h: Any, *, fft_path: FFTPath = "generic") -> CArray:
    """``W h`` for a complex vector (or n x B columns) factor by factor: diagonals and the
    reflections in O(n), the permutation by indexing, F and F^-1 by the FFT (``generic``:
    :func:`fft`; ``native``: numpy/torch.fft; ``dense``: the DFT matrix, O(n^2))."""
    b, n = p.backend, p.n
    b, x, vec = _as_columns(b, h, "h")
    if x.shape[0] != n:
        raise ShapeError(f"h has {x.shape[0]} rows, expected n = {n}")

    def dft(y: CArray, inverse: bool) -> CArray:
        if fft_path == "generic":
            return fft(y, backend=b, inverse=inverse)
        if fft_path == "native":
            return fft_native(y, backend=b, inverse=inverse)
        if fft_path == "dense":
            return dft_matrix(n, backend=b, inverse=inverse) @ y
        raise DomainError(f"unknown fft_path {fft_path!r}: use generic, native or dense")

    d1, d2, d3 = (phases(w, backend=b).reshape(n, 1) for w in (p.w1, p.w2, p.w3))
    y = d1 * x  # Count urnn D1
    y = dft(y, False)
    y = apply_reflection(p.v1, y, backend=b)
    y = y[list(p.perm)]
    y = d2 * y  # Count urnn D2
    y = dft(y, True)
    y = apply_reflection(p.v2, y, backend=b)
    y = d3 * y  # Count urnn D3
    return y.reshape(n) if vec else y


# =========================================================================== modReLU
ModReluRule = Literal["arjovsky", "mhammedi"]


def _bias(b: Backend, bias: Any, n: int) -> Array:
    bb = b.check_array(bias, name="bias", ndim=1)
    if bb.shape[0] != n:
        raise ShapeError(f"bias has length {bb.shape[0]}, expected n = {n}")
    return bb


def _modulus(b: Backend, z: CArray) -> Array:
    return b.sqrt(_abs2(z))


def _undefined_at_zero(b: Backend, m: Array, bias: Array) -> None:
    """modReLU divides by |z|: at z = 0 with a positive bias it has no value (nor a limit)."""
    for i in range(m.shape[0]):
        if b.is_zero(m[i]) and b.positive(bias[i]):
            raise DomainError(
                f"modReLU is undefined at z_{i} = 0 with bias b_{i} > 0: (|z| + b) z / |z| divides by |z| = 0"
            )


def _pow2_scaled(b: Backend, zz: CArray, bb: Array) -> tuple[CArray, Array, int]:
    """z and the bias times the exact power of two 2^k that brings z's largest part near 1 when
    |z|^2 would overflow or underflow (``pow2_exponent``); modReLU is positively homogeneous in
    (z, b) jointly, so the result is scaled back exactly. In range (k = 0) nothing changes."""
    if not has_range(b):
        return zz, bb, 0
    k = pow2_exponent(b, b.max_abs(b.concat([zz.re.reshape(-1), zz.im.reshape(-1)]))) or 0
    if k == 0:
        return zz, bb, 0
    return CArray(times_pow2(b, zz.re, k), times_pow2(b, zz.im, k)), times_pow2(b, bb, k), k


def _unscaled(b: Backend, out: CArray, k: int) -> CArray:
    return out if k == 0 else CArray(unscale_pow2(b, out.re, k), unscale_pow2(b, out.im, k))


def modrelu_relu_form(z: Any, bias: Any, *, backend: BackendLike = None) -> CArray:
    """``sigma(z) = ReLU(|z| + b) z / |z|`` elementwise (Arjovsky et al. Sec. 3.2, last line);
    0 where z = 0 and b <= 0, DomainError where z = 0 and b > 0."""
    b, zz = as_carray(z, backend=backend, name="z", ndim=1)
    n = zz.shape[0]
    zz, bb, f = _pow2_scaled(b, zz, _bias(b, bias, n))
    m = _modulus(b, zz)
    _undefined_at_zero(b, m, bb)
    s = m + bb
    relu = (s + b.abs(s)) / 2
    safe = m + b.asarray([1 if b.is_zero(m[i]) else 0 for i in range(n)])  # z = 0 -> relu = 0 there
    return _unscaled(b, zz * (relu / safe), f)


def modrelu(z: Any, bias: Any, *, backend: BackendLike = None, rule: ModReluRule = "arjovsky") -> CArray:
    """modReLU by its case definition, entry by entry: ``(|z| + b) z / |z|`` if ``|z| + b >= 0``
    (Arjovsky et al.; ``> 0`` in eq. 4 of Mhammedi et al., rule ``"mhammedi"``), else 0."""
    b, zz = as_carray(z, backend=backend, name="z", ndim=1)
    n = zz.shape[0]
    zz, bb, f = _pow2_scaled(b, zz, _bias(b, bias, n))
    m = _modulus(b, zz)
    _undefined_at_zero(b, m, bb)
    re, im = [], []
    for i in range(n):
        s = m[i] + bb[i]
        active = b.positive(s) or (rule == "arjovsky" and b.is_zero(s))
        if active and not b.is_zero(m[i]):
            re.append(s * zz.re[i] / m[i])
            im.append(s * zz.im[i] / m[i])
        else:
            re.append(zz.re[i] * 0)
            im.append(zz.im[i] * 0)
    return _unscaled(b, CArray(b.stack(re), b.stack(im)), f)


IndexConvention = Literal["printed", "corrected"]


def modrelu_real_indices(n: int, convention: IndexConvention = "printed") -> list[tuple[int, int, int]]:
    """``(i, k_i, k~_i)`` for i = 1..2n, 1-based. ``printed``: ``k_i = (i + n) mod 2n`` and
    ``k~_i = i mod n`` as in Mhammedi et al. Sec. 3 (with mod's residues 0..m-1 these can be 0,
    outside 1..2n and 1..n); ``corrected``: ``k_i = ((i + n - 1) mod 2n) + 1``,
    ``k~_i = ((i - 1) mod n) + 1``."""
    n = checked_size(n, "n")
    if n < 1:
        raise ShapeError(f"n must be >= 1, got {n}")
    if convention == "printed":
        return [(i, (i + n) % (2 * n), i % n) for i in range(1, 2 * n + 1)]
    return [(i, ((i + n - 1) % (2 * n)) + 1, ((i - 1) % n) + 1) for i in range(1, 2 * n + 1)]


def modrelu_real(a: Any, bias: Any, *, backend: BackendLike = None, convention: IndexConvention = "corrected") -> Array:
    """The real-space modReLU after eq. 4 of Mhammedi et al. on ``a in R^2n``:
    ``[phi(a)]_i = (sqrt(a_i^2 + a_k_i^2) + b_k~_i) / sqrt(a_i^2 + a_k_i^2) a_i`` if that
    modulus plus bias is > 0, else 0. With ``convention="printed"`` an index outside its range
    (k_i = 0 or k~_i = 0) raises DomainError naming it."""
    b = infer_backend(a) if backend is None else (backend if isinstance(backend, Backend) else get_backend(backend))
    aa = b.check_array(a, name="a", ndim=1)
    if aa.shape[0] % 2:
        raise ShapeError(f"a must have even length 2n, got {aa.shape[0]}")
    n = aa.shape[0] // 2
    bb = _bias(b, bias, n)
    aa, kp = scale_pow2(b, aa)  # positively homogeneous in (a, b) jointly: scale both, then back
    bb = times_pow2(b, bb, kp)
    out = []
    for i, k, kt in modrelu_real_indices(n, convention):
        if not 1 <= k <= 2 * n:
            raise DomainError(f"printed index k_{i} = ({i} + {n}) mod {2 * n} = {k} is outside 1..{2 * n}")
        if not 1 <= kt <= n:
            raise DomainError(f"printed index k~_{i} = {i} mod {n} = {kt} is outside 1..{n}")
        ai, ak, bias_i = aa[i - 1], aa[k - 1], bb[kt - 1]
        m = b.sqrt(ai * ai + ak * ak)
        s = m + bias_i
        if b.is_zero(m):
            if b.positive(bias_i):
                raise DomainError(f"the real-space modReLU divides by sqrt(a_{i}^2 + a_{k}^2) = 0 with b_{kt} > 0")
            out.append(ai * 0)
        elif b.positive(s):
            out.append(s / m * ai)
        else:
            out.append(ai * 0)
    return unscale_pow2(b, b.stack(out), kp)


# =========================================================================== RNNs (eq. 3)
Activation = Callable[[Array], Array] | str


def separable_activation(b: Backend, act: Activation) -> Callable[[Array], Array]:
    """An activation applied entry by entry (to real and imaginary parts separately): a callable,
    or ``relu``, ``leaky_relu`` (slope 1/10) or ``identity`` in the backend's arithmetic."""
    if callable(act):
        return act
    if act == "relu":
        return lambda x: (x + b.abs(x)) / 2
    if act == "leaky_relu":  # slope 1/10 below zero (exact in rational arithmetic)
        return lambda x: (x + b.abs(x)) / 2 + (x - b.abs(x)) / 20
    if act == "identity":
        return lambda x: x
    raise DomainError(f"unknown activation {act!r}: use relu, leaky_relu, identity, modrelu or a callable")


def complex_rnn(
    w: Any, v: Any, xs: Any, h0: Any, activation: Activation, *, bias: Any = None, backend: BackendLike = None
) -> list[CArray]:
    """``h_t = phi(W h_{t-1} + V x_t)``, t = 1..T, in complex arithmetic; x_t (real) are the rows of
    xs. A named separable activation acts on real and imaginary parts separately; ``"modrelu"``
    (with ``bias``) acts on the modulus (:func:`modrelu`)."""
    b, ww = as_carray(w, backend=backend, name="W", ndim=2)
    _, vv = as_carray(v, backend=b, name="V", ndim=2)
    _, h = as_carray(h0, backend=b, name="h0", ndim=1)
    x = b.check_array(xs, name="xs", ndim=2)
    n = ww.shape[0]
    if ww.shape != (n, n) or vv.shape[0] != n or h.shape[0] != n or x.shape[1] != vv.shape[1]:
        raise ShapeError(f"shapes disagree: W {ww.shape}, V {vv.shape}, h0 {h.shape}, xs {tuple(x.shape)}")
    out = []
    for t in range(x.shape[0]):
        z = ww @ h + vv @ CArray(x[t], b.zeros(x.shape[1]))
        z = CArray(finite_result(b, z.re, f"W h_{t} + V x_{t + 1}"), finite_result(b, z.im, f"W h_{t} + V x_{t + 1}"))
        if activation == "modrelu":
            h = modrelu(z, bias, backend=b)
        else:
            f = separable_activation(b, activation)
            h = CArray(f(z.re), f(z.im))
        out.append(h)
    return out


def real_rnn(
    what: Any, vhat: Any, xs: Any, h0hat: Any, activation: Activation, *, bias: Any = None, backend: BackendLike = None
) -> list[Array]:
    """Eq. 3 of Mhammedi et al.: ``h_hat_t = phi(W_hat h_hat_{t-1} + V_hat x_t)`` in R^2n; with
    ``"modrelu"`` phi is the real-space form :func:`modrelu_real` (corrected indices)."""
    b = infer_backend(what) if backend is None else (backend if isinstance(backend, Backend) else get_backend(backend))
    wh = b.check_array(what, name="W_hat", ndim=2)
    vh = b.check_array(vhat, name="V_hat", ndim=2)
    h = b.check_array(h0hat, name="h0_hat", ndim=1)
    x = b.check_array(xs, name="xs", ndim=2)
    n2 = wh.shape[0]
    if wh.shape != (n2, n2) or vh.shape[0] != n2 or h.shape[0] != n2 or x.shape[1] != vh.shape[1]:
        raise ShapeError(
            f"shapes disagree: W_hat {tuple(wh.shape)}, V_hat {tuple(vh.shape)}, h0_hat {tuple(h.shape)}, "
            f"xs {tuple(x.shape)}"
        )
    out = []
    for t in range(x.shape[0]):
        a = finite_result(b, wh @ h + vh @ x[t], f"W_hat h_{t} + V_hat x_{t + 1}")
        if activation == "modrelu":
            h = modrelu_real(a, bias, backend=b)
        else:
            h = separable_activation(b, activation)(a)
        out.append(h)
    return out


# =========================================================================== Sec. 3.4
def init_h0_bound(n: int) -> float:
    """``sqrt(3 / (2 n))``: the half-width of Sec. 3.4's uniform initialisation of h0."""
    n = checked_size(n, "n")
    if n < 1:
        raise ShapeError(f"n must be >= 1, got {n}")
    return math.sqrt(3.0 / (2 * n))


def init_h0(rng: np.random.Generator, n: int, size: int | None = None) -> np.ndarray:
    """h0 drawn as Sec. 3.4 says: real and imaginary parts i.i.d. U[-sqrt(3/2n), sqrt(3/2n)]
    (complex128; ``size`` draws as rows)."""
    n = checked_size(n, "n", minimum=1)
    # size counts draws, not a dimension: bounded by the memory of the draws (2^25 complex entries)
    size = None if size is None else checked_integer(size, "size", minimum=0, maximum=2**25 // n)
    a = init_h0_bound(n)
    shape = (n,) if size is None else (size, n)
    return rng.uniform(-a, a, shape) + 1j * rng.uniform(-a, a, shape)
