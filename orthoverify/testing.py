"""Assert helpers in the style of :mod:`numpy.testing`, for users' own test suites.

Every helper reduces a comparison to one LAPACK-style test ratio (see README.md, "How evidence
becomes a verdict", and :mod:`orthoverify.engine.ratios`): an error divided by what rounding in
the input's own precision could explain, ``dim * eps * scale``. A correct, stable computation gives ratios of
order 1; the assert passes when the ratio is at most ``threshold`` (30, as in LAPACK's tests)
and then returns the ratio, so a test can log it. A failure raises :class:`AssertionError`
whose message states the ratio, the threshold, the formula, the shape and dtype, and the worst
entry.

Inputs may be NumPy arrays, torch tensors (cpu or cuda; they are copied to the cpu), or
nested lists. ``eps`` is the unit roundoff of the input's dtype: 2^-11 (float16, complex32),
2^-8 (bfloat16), 2^-24 (float32, complex64), 2^-53 (float64, complex128; also integer and
boolean input, which is exact). The ratio itself is computed in float64 (complex128) from the
given values, so it measures the input, not the arithmetic of the check. NaN or Inf in any
input fails with a message saying so; an input of the wrong shape fails naming the shapes.
Unsupported dtypes (object arrays, long double) raise :class:`orthoverify.errors.DTypeError`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from orthoverify.backends.base import host_array
from orthoverify.errors import DTypeError, InputError
from orthoverify.tolerance import THRESHOLD

__all__ = [
    "assert_allclose_ratio",
    "assert_gradients_match",
    "assert_orthogonal",
    "assert_skew_symmetric",
    "assert_unitary",
]

_U64 = 2.0**-53
_TORCH_EPS = {
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
    "float32": 2.0**-24,
    "float64": _U64,
    "complex32": 2.0**-11,
    "complex64": 2.0**-24,
    "complex128": _U64,
}
_GRAD_SEED = 0
"""Seed of the fixed random cotangent G in :func:`assert_gradients_match`."""
_STEP = 2.0**-17
"""Relative step of the central differences (about u64^(1/3): balances truncation and rounding)."""


# ============================================================================ input handling
@dataclass(frozen=True)
class _In:
    """An input as a float64 / complex128 NumPy copy, with its unit roundoff and a description."""

    values: np.ndarray
    eps: float
    dtype: str

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.values.shape)

    @property
    def complex(self) -> bool:
        return self.values.dtype.kind == "c"

    def describe(self) -> str:
        return f"shape {self.shape}, dtype {self.dtype}"


def _is_torch(x: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _is_carray(x: Any) -> bool:
    mod = sys.modules.get("orthoverify.param.unitary")
    return mod is not None and isinstance(x, mod.CArray)


def _convert(x: Any, name: str) -> _In:
    """``x`` as a float64 (or complex128) NumPy copy with the unit roundoff of its own dtype."""
    if _is_torch(x):
        import torch

        t = x.detach()
        if t.device.type == "meta":
            raise InputError(f"{name} is a meta tensor: it has a shape but no values to compare")
        dname = str(t.dtype).removeprefix("torch.")
        eps = _TORCH_EPS.get(dname)
        if eps is None:
            if t.dtype.is_floating_point or t.is_complex():
                raise DTypeError(f"{name}: unsupported dtype {t.dtype}; use a float or complex dtype")
            eps = _U64  # integers and booleans are exact values
        if t.dtype in (torch.float16, torch.bfloat16):
            t = t.float()
        elif t.dtype == torch.complex32:
            t = t.to(torch.complex64)
        desc = f"torch.{dname}" + ("" if t.device.type == "cpu" else f" on {t.device}")
        arr = t.cpu().resolve_conj().resolve_neg().numpy()
    else:
        arr = host_array(x, name, "numpy")
        kind = arr.dtype.kind
        if kind in "fc":
            if arr.dtype.itemsize > (8 if kind == "f" else 16):
                raise DTypeError(f"{name}: unsupported dtype {arr.dtype}; convert to float64 (or complex128) first")
            eps = float(np.finfo(arr.dtype).eps) / 2
        elif kind in "biu":
            eps = _U64
        else:
            raise DTypeError(f"{name}: unsupported dtype {arr.dtype}; use a float or complex dtype")
        desc = str(arr.dtype)
    values = np.array(arr, dtype=np.complex128 if arr.dtype.kind == "c" else np.float64)
    return _In(values, eps, desc)


def _convert_complex(w: Any, name: str) -> _In:
    """A complex input: a complex (or real) array, a ``CArray``, or an ``(re, im)`` pair."""
    if _is_carray(w) or isinstance(w, tuple):
        if isinstance(w, tuple):
            if len(w) != 2:
                raise AssertionError(f"{name}: a tuple must be a (real part, imaginary part) pair, got {len(w)} items")
            re, im = w
        else:
            re, im = w.re, w.im
        r, i = _convert(re, f"Re {name}"), _convert(im, f"Im {name}")
        if r.complex or i.complex:
            raise AssertionError(f"{name}: the parts of an (re, im) pair must be real, got {r.dtype} and {i.dtype}")
        if r.shape != i.shape:
            raise AssertionError(
                f"{name}: real part has shape {r.shape} but imaginary part has shape {i.shape}; they must match"
            )
        desc = f"(re, im) pair of {r.dtype}" if r.dtype == i.dtype else f"(re, im) pair of {r.dtype} and {i.dtype}"
        values = np.empty(r.shape, dtype=np.complex128)
        values.real, values.imag = r.values, i.values  # not re + 1j * im: 1j * inf is nan + inf j
        return _In(values, max(r.eps, i.eps), desc)
    return _convert(w, name)


def _fmt_eps(eps: float) -> str:
    k = -math.log2(eps)
    return f"2^-{int(k)} = {eps:.3g}" if k == int(k) else f"{eps:.3g}"


def _fmt_index(idx: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


def _fmt_value(v: Any) -> str:
    return f"{complex(v):.6g}" if isinstance(v, complex | np.complexfloating) else f"{float(v):.6g}"


def _failure(headline: str, err_msg: str, lines: list[str]) -> AssertionError:
    parts = [headline]
    if err_msg:
        parts.append(" " + err_msg)
    parts.extend(" " + line for line in lines)
    return AssertionError("\n".join(parts))


def _require_finite(inp: _In, name: str, threshold: float, err_msg: str) -> None:
    bad = ~np.isfinite(inp.values)
    if not bad.any():
        return
    nans = int(np.isnan(inp.values).sum())
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    raise _failure(
        f"NaN/Inf found in {name}: test ratio inf > threshold {threshold:g}",
        err_msg,
        [
            f"{nans} NaN and {int(bad.sum()) - nans} Inf entries; the first at {name}{_fmt_index(first)}",
            inp.describe(),
        ],
    )


def _worst(
    ratios: np.ndarray, resid: np.ndarray, batch: tuple[int, ...]
) -> tuple[float, tuple[int, ...], tuple[int, int]]:
    """The worst ratio over a batch (NaN counts as infinite), the index of its matrix, and the
    largest entry of that matrix's residual."""
    flat = np.where(np.isnan(ratios), np.inf, ratios).reshape(-1)
    b = int(np.argmax(flat))
    bidx = tuple(int(k) for k in np.unravel_index(b, batch)) if batch else ()
    mat = resid[bidx] if batch else resid
    i, j = (int(k) for k in np.unravel_index(int(np.argmax(np.abs(mat))), mat.shape))
    return float(flat[b]), bidx, (i, j)


def _fro(x: np.ndarray, axis: tuple[int, ...] | None = None) -> np.ndarray:
    """Frobenius norms over ``axis`` (all axes when None), scaled against overflow."""
    a = np.abs(x)
    m = a.max(axis=axis, keepdims=True, initial=0.0)
    safe = np.where((m > 0) & np.isfinite(m), m, 1.0)
    out = np.sqrt(((a / safe) ** 2).sum(axis=axis, keepdims=True)) * safe
    out = np.where(np.isfinite(m), out, m)
    return out.squeeze(axis=axis) if axis is not None else out.reshape(())


def _check_threshold(threshold: float) -> None:
    if not (isinstance(threshold, int | float) and threshold > 0):
        raise InputError(f"threshold must be a positive number, got {threshold!r}")


# ============================================================================ orthogonal / unitary
def _gram_check(inp: _In, name: str, what: str, threshold: float, err_msg: str, *, conj: bool) -> float:
    """The worst ``||Q^T Q - I||_F / (max(n, m) eps)`` over a batch of n x m matrices."""
    if inp.values.ndim < 2:
        raise _failure(
            f"{name} is not a matrix: test ratio inf > threshold {threshold:g}",
            err_msg,
            [f"expected shape (n, m) or a batch (..., n, m), got shape {inp.shape}", inp.describe()],
        )
    _require_finite(inp, name, threshold, err_msg)
    n, m = inp.shape[-2:]
    batch = inp.shape[:-2]
    q = inp.values
    qh = np.swapaxes(q.conj() if conj else q, -1, -2)
    T = "^*" if conj else "^T"
    Q = name.upper()
    if n >= m:
        resid = qh @ q - np.eye(m)
        form = f"{Q}{T} {Q} - I"
    else:  # wide: orthonormal rows
        resid = q @ qh - np.eye(n)
        form = f"{Q} {Q}{T} - I"
    dim = max(n, m, 1)
    if resid.size == 0:
        return 0.0
    ratio, bidx, (i, j) = _worst(_fro(resid, axis=(-2, -1)) / (dim * inp.eps), resid, batch)
    if ratio <= threshold:
        return ratio
    worst_mat = resid[bidx] if batch else resid
    lines = [
        f"ratio = ||{form}||_F / (n eps), n = max(rows, cols) = {dim}, eps = {_fmt_eps(inp.eps)}",
        inp.describe(),
    ]
    if batch:
        lines.append(f"worst matrix of the batch: {name}{_fmt_index(bidx)}")
    lines.append(f"worst entry: ({form}){_fmt_index((i, j))} = {_fmt_value(worst_mat[i, j])}")
    raise _failure(f"{name} is not {what}: test ratio {ratio:.3g} > threshold {threshold:g}", err_msg, lines)


def assert_orthogonal(q: Any, *, threshold: float = THRESHOLD, err_msg: str = "") -> float:
    """Assert that ``q`` is orthogonal to working precision; return the test ratio.

    ``q`` is real, n x m or a batch ``(..., n, m)``. The ratio is
    ``||Q^T Q - I_m||_F / (max(n, m) eps)`` (orthonormal columns; for a wide matrix, n < m,
    ``||Q Q^T - I_n||_F`` instead: orthonormal rows), the worst over the batch. For a square
    matrix this is ``orthoverify.param._validate.orthogonality_ratio``: ``n eps`` with n the size.
    """
    _check_threshold(threshold)
    inp = _convert(q, "q")
    if inp.complex:
        raise _failure(
            f"q is complex: test ratio inf > threshold {threshold:g}",
            err_msg,
            ["assert_orthogonal checks real matrices; use assert_unitary for complex ones", inp.describe()],
        )
    return _gram_check(inp, "q", "orthogonal", threshold, err_msg, conj=False)


def assert_unitary(w: Any, *, threshold: float = THRESHOLD, err_msg: str = "") -> float:
    """Assert that ``w`` is unitary to working precision; return the test ratio.

    ``w`` is a complex (or real) NumPy array or torch tensor, an ``orthoverify`` ``CArray``, or a
    ``(re, im)`` pair of real arrays (a 2-tuple is always read as such a pair); n x m or a batch.
    The ratio is ``||W^* W - I_m||_F / (max(n, m) eps)`` (``W W^* - I_n`` when n < m), as
    ``orthoverify.param.unitary.unitarity_ratio`` for a square matrix; eps is that of the parts'
    real dtype (complex64: 2^-24; complex128: 2^-53).
    """
    _check_threshold(threshold)
    inp = _convert_complex(w, "w")
    return _gram_check(inp, "w", "unitary", threshold, err_msg, conj=True)


# ============================================================================ agreement
def assert_allclose_ratio(
    actual: Any,
    desired: Any,
    *,
    threshold: float = THRESHOLD,
    dim: int | None = None,
    err_msg: str = "",
) -> float:
    """Assert that two formulations of one quantity agree to working precision; return the ratio.

    The ratio is ``||actual - desired||_F / (dim * eps * ||desired||_F)`` over the whole array
    (``||actual - desired||_F / (dim * eps)``, absolute, when ``desired`` is exactly zero). eps is
    that of the LOWER precision of the two dtypes (a float32 result against a float64 reference
    is judged at 2^-24). ``dim`` defaults to the last dimension of the arrays (1 for scalars).
    The shapes must be equal (no broadcasting). Complex arrays and ``CArray`` are accepted.
    """
    _check_threshold(threshold)
    a = _convert_complex(actual, "actual") if _is_carray(actual) else _convert(actual, "actual")
    d = _convert_complex(desired, "desired") if _is_carray(desired) else _convert(desired, "desired")
    eps = max(a.eps, d.eps)
    if a.shape != d.shape:
        raise _failure(
            f"shapes differ: actual has shape {a.shape}, desired has shape {d.shape}: "
            f"test ratio inf > threshold {threshold:g}",
            err_msg,
            [f"actual: {a.describe()}", f"desired: {d.describe()}"],
        )
    if dim is None:
        dim = a.shape[-1] if a.shape else 1
    if not isinstance(dim, int | np.integer) or isinstance(dim, bool) or dim < 1:
        raise InputError(f"dim must be a positive integer, got {dim!r}")
    _require_finite(a, "actual", threshold, err_msg)
    _require_finite(d, "desired", threshold, err_msg)
    if a.values.size == 0:
        return 0.0
    diff = a.values - d.values
    num = float(_fro(diff))
    scale = float(_fro(d.values))
    relative = scale > 0
    ratio = (num / scale if relative else num) / (int(dim) * eps)  # dim eps scale could underflow
    if math.isnan(ratio):
        ratio = math.inf
    if ratio <= threshold:
        return ratio
    idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.abs(diff))), diff.shape))
    where = _fmt_index(idx) if idx else ""
    form = (
        "||actual - desired||_F / (dim eps ||desired||_F)"
        if relative
        else "||actual - desired||_F / (dim eps) (absolute: desired is zero)"
    )
    raise _failure(
        f"Not equal to working precision: test ratio {ratio:.3g} > threshold {threshold:g}",
        err_msg,
        [
            f"ratio = {form}, dim = {dim}, eps = {_fmt_eps(eps)} (the lower precision of the two)",
            f"||actual - desired||_F = {num:.6g}, ||desired||_F = {scale:.6g}",
            f"actual: {a.describe()}; desired: {d.describe()}",
            f"worst entry: actual{where} = {_fmt_value(a.values[idx])}, desired{where} = "
            f"{_fmt_value(d.values[idx])}, difference {_fmt_value(diff[idx])}",
        ],
    )


def assert_skew_symmetric(a: Any, *, threshold: float = THRESHOLD, err_msg: str = "") -> float:
    """Assert ``A^T = -A`` to working precision; return the test ratio.

    ``a`` is n x n or a batch ``(..., n, n)``; the ratio is ``||A + A^T||_F / (n eps ||A||_F)``
    per matrix (``||A + A^T||_F / (n eps)`` for a zero matrix), the worst over the batch. The
    transpose is plain, not conjugate, also for complex input.
    """
    _check_threshold(threshold)
    inp = _convert(a, "a")
    if inp.values.ndim < 2 or inp.shape[-1] != inp.shape[-2]:
        raise _failure(
            f"a is not a square matrix: test ratio inf > threshold {threshold:g}",
            err_msg,
            [f"expected shape (n, n) or a batch (..., n, n), got shape {inp.shape}", inp.describe()],
        )
    _require_finite(inp, "a", threshold, err_msg)
    n = inp.shape[-1]
    batch = inp.shape[:-2]
    if inp.values.size == 0:
        return 0.0
    sym = inp.values + np.swapaxes(inp.values, -1, -2)
    scale = _fro(inp.values, axis=(-2, -1))
    scale = np.where(scale > 0, scale, 1.0)
    ratio, bidx, (i, j) = _worst(_fro(sym, axis=(-2, -1)) / (n * inp.eps * scale), sym, batch)
    if ratio <= threshold:
        return ratio
    worst = sym[bidx] if batch else sym
    mat = inp.values[bidx] if batch else inp.values
    lines = [f"ratio = ||A + A^T||_F / (n eps ||A||_F), n = {n}, eps = {_fmt_eps(inp.eps)}", inp.describe()]
    if batch:
        lines.append(f"worst matrix of the batch: a{_fmt_index(bidx)}")
    lines.append(
        f"worst entry: a[{i}, {j}] = {_fmt_value(mat[i, j])}, a[{j}, {i}] = {_fmt_value(mat[j, i])} "
        f"(sum {_fmt_value(worst[i, j])})"
    )
    raise _failure(f"a is not skew-symmetric: test ratio {ratio:.3g} > threshold {threshold:g}", err_msg, lines)


# ============================================================================ gradients
def _richardson_gradient(f: Callable[[Any], Any], x0: Any, g64: Any, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The float64 reference gradient of ``L(x) = sum(f(x) * G)`` and its per-entry error
    estimate ``tau`` (see :func:`assert_gradients_match`)."""
    import torch

    base = x0.detach().to(torch.float64).clone().contiguous()
    g_dev = g64.to(base.device)

    def loss(z: Any) -> tuple[float, float]:
        with torch.no_grad():
            y = f(z)
        if not isinstance(y, torch.Tensor):
            raise DTypeError(f"f must return a torch tensor, got {type(y).__name__}")
        yr = torch.view_as_real(y) if y.is_complex() else y
        if yr.dtype != torch.float64:
            raise DTypeError(
                f"f returned {y.dtype} for a float64 input; the reference gradient is computed in "
                "float64, so f must compute in float64 when given a float64 tensor"
            )
        if tuple(yr.shape) != tuple(g_dev.shape):
            raise AssertionError(f"f(x) changed shape under perturbation: {tuple(yr.shape)} != {tuple(g_dev.shape)}")
        prod = yr * g_dev
        return float(prod.sum()), float(prod.abs().sum())

    _, s_abs = loss(base.clone())
    xs = base.detach().cpu().reshape(-1).numpy().copy()
    rms = float(np.sqrt(np.mean(xs**2))) if xs.size else 0.0
    ref = np.zeros(xs.size)
    tau = np.zeros(xs.size)
    delta = dim * _U64 * s_abs  # rounding error of one float64 evaluation of L (estimate)
    for i, xi in enumerate(xs.tolist()):
        h = _STEP * max(abs(xi), rms)
        if h == 0.0:
            h = _STEP
        quotients = []
        for s in (h, h / 2):
            xp, xm = xi + s, xi - s
            zp, zm = base.clone(), base.clone()
            zp.view(-1)[i] = xp
            zm.view(-1)[i] = xm
            quotients.append((loss(zp)[0] - loss(zm)[0]) / (xp - xm))
        d_h, d_h2 = quotients
        ref[i] = (4 * d_h2 - d_h) / 3
        tau[i] = 3 * delta / h + abs(d_h - d_h2) / 3
    shape = tuple(x0.shape)
    return ref.reshape(shape), tau.reshape(shape)


def assert_gradients_match(
    f: Callable[[Any], Any],
    x: Any,
    *,
    grad: Callable[[Any, Any], Any] | None = None,
    threshold: float = THRESHOLD,
    err_msg: str = "",
) -> float:
    """Assert that a gradient of ``f`` at ``x`` is right, against float64 finite differences.

    ``f`` maps a real torch tensor to a tensor. With ``G`` a fixed N(0, 1) tensor of the shape of
    ``f(x)`` (seeded; rounded to f(x)'s dtype, and the same rounded values used throughout), the
    gradient under test ``g`` is that of the scalar ``L(x) = sum(f(x) * G)``: by torch autograd
    in x's dtype and device, or ``grad(x, G)`` when ``grad`` is given (e.g. a hand-written
    backward: it receives ``x`` detached and ``G`` in f(x)'s dtype and device, and returns the
    gradient, shape of x). For complex ``f(x)``, ``L = sum(view_as_real(f(x)) * G)`` and G has
    shape ``(*f(x).shape, 2)``. The reference ``g_ref`` evaluates ``f`` on x converted to float64
    (so ``f`` must accept float64), entry by entry:

    - ``D_i(s) = (L(x + s e_i) - L(x - s e_i)) / (2 s)``, central differences;
    - ``g_ref_i = (4 D_i(h_i / 2) - D_i(h_i)) / 3`` (Richardson extrapolation, error O(h^4)),
      with ``h_i = 2^-17 max(|x_i|, rms(x))`` (2^-17 when x is zero);
    - ``tau_i = 3 n u S / h_i + |D_i(h_i) - D_i(h_i / 2)| / 3``: the rounding error of the
      extrapolated quotient when each float64 evaluation of L errs by ``n u S`` (u = 2^-53,
      ``S = sum |f(x) * G|``), plus the standard estimate of the truncation error of
      ``D_i(h_i / 2)``, which for smooth f bounds that of the extrapolated value.

    The ratio is ``||g - g_ref||_F / (n eps ||g_ref||_F + ||tau||_F)``, with n the last dimension
    of x (1 for a scalar) and eps the unit roundoff of the lowest precision among x, f(x) and g:
    the rounding the gradient under test may carry plus the reference's own error. It costs
    ``4 x.numel() + 2`` evaluations of f.
    """
    import torch

    _check_threshold(threshold)
    if not isinstance(x, torch.Tensor):
        arr = host_array(x, "x", "torch")
        if arr.dtype.kind not in "fiu" or arr.dtype.itemsize > 8:
            raise DTypeError(f"x must hold real numbers (float32 or float64), got dtype {arr.dtype}")
        x = torch.as_tensor(arr)
    elif x.device.type == "meta":
        raise InputError("x is a meta tensor: it has a shape but no values to differentiate at")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"x must be a real floating-point tensor, got dtype {x.dtype}")
    x0 = x.detach()
    xin = _convert(x0, "x")
    _require_finite(xin, "x", threshold, err_msg)
    dim = int(x0.shape[-1]) if x0.ndim else 1
    dim = max(dim, 1)

    xa = x0.clone().requires_grad_(True)
    y = f(xa)
    if not isinstance(y, torch.Tensor):
        raise DTypeError(f"f must return a torch tensor, got {type(y).__name__}")
    yr = torch.view_as_real(y) if y.is_complex() else y
    yin = _convert(yr, "f(x)")
    _require_finite(yin, "f(x)", threshold, err_msg)
    gen = torch.Generator().manual_seed(_GRAD_SEED)
    g_work = torch.randn(tuple(yr.shape), generator=gen, dtype=torch.float64, device="cpu")  # same draws anywhere
    g_work = g_work.to(dtype=yr.dtype, device=yr.device)
    g64 = g_work.detach().to("cpu", torch.float64)

    note = ""
    if grad is None:
        source = "torch autograd"
        gx = None
        if yr.requires_grad:
            (gx,) = torch.autograd.grad((yr * g_work).sum(), xa, allow_unused=True)
        if gx is None:
            gx = torch.zeros_like(x0)
            note = "f(x) does not depend on x through autograd: its gradient is taken as 0"
    else:
        source = "the given grad(x, G)"
        gx = grad(x0.clone(), g_work)
    gin = _convert(gx, "g")
    if gin.shape != xin.shape:
        raise _failure(
            f"the gradient has shape {gin.shape} but x has shape {xin.shape}: test ratio inf > threshold {threshold:g}",
            err_msg,
            [f"gradient from {source}"],
        )
    _require_finite(gin, "g", threshold, err_msg)
    eps = max(xin.eps, yin.eps, gin.eps)

    ref, tau = _richardson_gradient(f, x0, g64, dim)
    diff = gin.values - ref
    num = float(_fro(diff))
    ref_norm = float(_fro(ref))
    tau_norm = float(_fro(tau))
    den = dim * eps * ref_norm + tau_norm
    if num == 0.0:
        ratio = 0.0
    elif den == 0.0 or not math.isfinite(num):
        ratio = math.inf
    else:
        ratio = num / den
    if ratio <= threshold:
        return ratio
    lines = [
        f"ratio = ||g - g_ref||_F / (n eps ||g_ref||_F + ||tau||_F), n = {dim}, eps = {_fmt_eps(eps)}",
        f"g: gradient of L = sum(f(x) * G) by {source}; G ~ N(0, 1), seed {_GRAD_SEED}",
        "g_ref: float64 central differences with Richardson extrapolation (steps h, h/2); "
        "tau: its rounding + truncation estimate",
        f"||g - g_ref||_F = {num:.6g}, ||g_ref||_F = {ref_norm:.6g}, ||tau||_F = {tau_norm:.3g}",
        f"x: {xin.describe()}; f(x): {yin.describe()}; g: {gin.describe()}",
    ]
    if diff.size:
        idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.abs(diff))), diff.shape))
        where = _fmt_index(idx) if idx else ""
        lines.append(
            f"worst entry: g{where} = {_fmt_value(gin.values[idx])}, g_ref{where} = {_fmt_value(ref[idx])} "
            f"(tau {tau[idx]:.3g})"
        )
    if note:
        lines.append(note)
    raise _failure(f"Gradients do not match: test ratio {ratio:.3g} > threshold {threshold:g}", err_msg, lines)
