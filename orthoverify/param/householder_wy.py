"""Fast torch paths: Householder products applied to a batch through blocked compact WY.

``W = H(U_{*,1}) ... H(U_{*,m})`` (the convention of
:func:`~orthoverify.param.householder.reflector_product`: first column leftmost, applied last)
is applied to ``X`` (n x B) block by block. The m reflections are grouped into p blocks of
``block`` consecutive columns; block i is one compact WY factor ``W_i = I - Y_i T_i^-1 Y_i'``
with ``T_i = striu(Y_i'Y_i) + diag(||Y_j||^2) / 2`` (Prop. 1 of Mhammedi et al., written for
columns of any length: ``H(y) = I - y (||y||^2 / 2)^-1 y'``), so each block costs a few
matrix-matrix products instead of a Python loop over its reflections: the idea of FastH
(Mathiasen et al., 2020) and of the CWY parametrisation (Likhosherstov et al., 2021).

Work per call is a small constant number of torch operations per block (7 in forward and 8
in backward, views included) plus a constant: the T_i of all blocks are inverted in one
batched triangular solve, the gradient through T is formed for all blocks in one batched
product, and nothing loops over single reflections. :func:`choose_block` picks the block per
device and size: few large blocks where kernel launches dominate (CUDA), blocks near the
batch width where arithmetic does (CPU; block k costs about ``2 n m k`` flops for the T terms
beside ``7 n m B`` for the products with X on eq. 9's pattern). Y is kept in a buffer
whose rows are a few entries longer than pk (:data:`_LD_PAD`): with rows a power of
two apart the products with Y's column blocks ran about 1.7x slower on the CPU.

No value is read back to the host on the hot path. Shapes, dtypes, devices and flags are
checked on the host. Every column is divided by its largest magnitude (Y = U / max|U_j|, a
reflection ignores its vector's scale), so no Gram entry overflows or underflows whatever
the columns' scale, with no branch on the data. ``validate=True`` (the default) then reads one
boolean back per forward, after which NaN or Inf in U or X, or a zero column, raise the
generic code's errors (NonFiniteError, ZeroVectorError); backward reads nothing back.
``validate=False`` reads nothing back at all (for training loops, CUDA graphs): a NaN or Inf
in U or X, or a zero column of U, then makes C and the gradients NaN (propagated, never a
finite wrong value), as in torch's own operators.

Memory is O(nm + nB): forward saves Y (n x pk, rows padded), the column maxima, the per-block
``T_i^-1`` (p x k x k), each block's k x B coefficients ``F_i = T_i^-1 Y_i' Z`` (p k x B in
all) and the output C; nothing per reflection. Backward walks the blocks in reverse and
rebuilds each block's input from its output (``Z_in = Z_out + Y_i F_i``) in the same matrix
product that carries dL/dC back. By default the gradient returned for U is the full n x m
gradient of a dense U, upper triangle included, the same as autograd through
``reflector_product(U) @ X`` and as
:class:`~orthoverify.param.householder_torch.Algorithm1Function`.

``lower=True`` takes U on eq. 9's pattern (column j zero above row j, as the parametrisation
builds it): entries above the diagonal are ignored and get zero gradient, i.e. the result and
gradient are those of autograd through ``reflector_product(U.tril()) @ X``. Block i
(columns ik .. ik + k - 1) then only touches rows ik.., so every product with Y_i and every
update of X is restricted to those rows (row slices of row-major tensors: views, no copies),
about half the flops at m = n.

Unlike the generic code, which follows eq. 9 (at most n - 1 vectors, u_1 apart), m = n dense
columns are accepted: the WY form holds for any number of nonzero vectors.
"""

from __future__ import annotations

from typing import Any, NamedTuple, cast

import torch
from torch import Tensor

from orthoverify.errors import DomainError, DTypeError, InputError, ShapeError
from orthoverify.param._validate import matrix, size, vector, vector_or_columns
from orthoverify.param.householder import _check_u
from orthoverify.param.householder_torch import _check_tensor, _torch_backend

__all__ = [
    "CPU_BLOCK",
    "CUDA_BLOCK",
    "HouseholderWYFunction",
    "choose_block",
    "householder_wy_apply",
    "svd_wy_apply",
]

CPU_BLOCK = 24
"""Reflections per block on the CPU, where arithmetic dominates: block k adds about 2 n m k
flops (the Gram and Y M terms) to the 7 n m B of the products with X (B = 32 in training),
and each block costs about 15 operations of a microsecond or two; 24 was the fastest of the
blocks 16 to 64 in the forward plus backward at n = m = 512 and 1024, B = 32, float64
(README, "Fast Householder products"; ``orthoverify bench householder.blocks``)."""

CUDA_BLOCK = 1024
"""Reflections per block on CUDA, where each operation's launch dominates (a forward plus
backward at n = 1024 is microseconds of arithmetic): one block up to m = 1024, so the call is
a constant number of operations; from the issue's H200 figures (block 256-512 best of those
tried, the old code spending 37 operations per block)."""


def choose_block(m: int, device: torch.device | str) -> int:
    """The block size used when none is given: :data:`CUDA_BLOCK` on CUDA, :data:`CPU_BLOCK`
    elsewhere, at most m (at least 1). ShapeError for a bad m, InputError for a bad device."""
    mm = size(m, "m")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise InputError(f"device must be a torch.device or a device name such as 'cpu', got {device!r}") from None
    return max(1, min(mm, CUDA_BLOCK if dev.type == "cuda" else CPU_BLOCK))


# --------------------------------------------------------------------------- validation
def _same_kind(a: Tensor, b: Tensor, an: str, bn: str) -> None:
    """Same dtype and device, or a clear error naming both."""
    if a.dtype != b.dtype:
        da, db = (str(t.dtype).replace("torch.", "") for t in (a, b))
        raise DTypeError(f"{an} is {da} but {bn} is {db}: pass both in the same dtype")
    if a.device != b.device:
        raise InputError(f"{an} is on {a.device} but {bn} is on {b.device}: move both to the same device")


def _check_block(block: object, m: int, device: torch.device) -> int:
    if block is None:
        return choose_block(m, device)
    if not isinstance(block, int) or isinstance(block, bool) or block < 1:
        raise InputError(f"block must be a positive integer or None, got {block!r}")
    return block


def _check_flag(flag: object, name: str) -> bool:
    if not isinstance(flag, bool):
        raise InputError(f"{name} must be True or False, got {flag!r}")
    return flag


def _validated(u: object, x: object) -> tuple[Tensor, Tensor]:
    """U and X as tensors of one float dtype and device, U n x m with 1 <= n and m <= n, X of
    shape (n,) or (n, B): host checks only, no data is read."""
    uu, xx = _check_tensor(u, "U"), _check_tensor(x, "X")
    _same_kind(uu, xx, "U", "X")
    if uu.ndim != 2:
        matrix(_torch_backend(uu), uu, "U")  # raises the ShapeError
    n, m = uu.shape
    if n == 0:
        raise ShapeError("U has no rows: n must be at least 1")
    if m > n:
        raise DomainError(f"U has m = {m} columns for n = {n}: at most n reflections are taken")
    if xx.ndim == 1 and xx.shape[0] != n:
        raise ShapeError(f"X must have length {n}, got {xx.shape[0]}")
    if not (xx.ndim == 1 or (xx.ndim == 2 and xx.shape[0] == n)):
        raise ShapeError(f"X must have shape ({n},) or ({n}, B), got {tuple(xx.shape)}")
    return uu, xx


def _check_values(u: Tensor, x2: Tensor, amax: Tensor, zero_identity: bool, lower: bool) -> None:
    """The one read-back of ``validate=True``: U's column maxima finite (and nonzero unless
    ``zero_identity``) and X finite; else the generic code's error naming the problem."""
    ok = torch.isfinite(amax).all() & torch.isfinite(x2).all()
    if not zero_identity:
        ok &= (amax > 0).all()
    if bool(ok):
        return
    b = _torch_backend(u)
    uu = torch.tril(u) if lower else u
    matrix(b, uu, "U")  # NonFiniteError
    if not zero_identity:
        _check_u(b, uu, allow_square=True)  # ZeroVectorError, worded as the generic code words it
    vector_or_columns(b, x2, "X", x2.shape[0])  # NonFiniteError naming X
    raise AssertionError("unreachable: a failed check names its input")  # pragma: no cover


# --------------------------------------------------------------------------- the kernels
class _Blocks(NamedTuple):
    """The m reflections, prepared once per forward and kept for backward.

    ``y`` is n x pk: U's columns divided by their largest magnitudes ``amax`` (with ``lower``
    the lower triangle only), zero columns padding m to pk, rows :data:`_LD_PAD` entries
    apart beyond pk (see :func:`_padded`). ``ys[i]`` is block i's columns on
    the rows it touches (ik.. with ``lower``, else all), ``yts[i]`` its transpose (views of y);
    ``r`` (p x k x k) holds ``T_i^-1``."""

    y: Tensor
    ys: list[Tensor]
    yts: list[Tensor]
    r: Tensor
    amax: Tensor
    k: int
    m: int
    lower: bool


_LD_PAD = 8
"""Extra entries between the rows of Y (an n x pk buffer). With rows a power of two
apart (pk = 512 doubles: 4 KiB) the products with Y's transposed column blocks ran about 1.7x
slower on the CPU (cache-set conflicts of the strided reads); 8 entries (one 64-byte line)
apart they run at the speed of a contiguous copy."""


def _padded(ref: Tensor, n: int, cols: int) -> Tensor:
    """An uninitialised n x cols tensor like ``ref`` whose rows are ``cols + _LD_PAD`` apart."""
    return ref.new_empty_strided((n, cols), (cols + _LD_PAD, 1))


def _plan(m: int, block: int) -> tuple[int, int]:
    """(p, k): p = ceil(m / block) blocks of k = ceil(m / p) columns (zero columns pad m to
    pk), so no block is much smaller than the others."""
    p = -(-m // block)
    return p, -(-m // p)


def _rows(i: int, k: int, lower: bool) -> int:
    """First row block i touches: ik on eq. 9's pattern (its columns are zero above it), else 0."""
    return i * k if lower else 0


def _views(y: Tensor, p: int, k: int, lower: bool) -> tuple[list[Tensor], list[Tensor]]:
    """Block i's columns on its rows, and their transposes (views of y)."""
    cols = y.split(k, 1) if p > 1 else (y,)
    ys = [c[_rows(i, k, lower) :] if lower and i else c for i, c in enumerate(cols)]
    return ys, [c.T for c in ys]


def _prepare(u: Tensor, x2: Tensor, block: int, zero_identity: bool, lower: bool, validate: bool) -> _Blocks:
    """Y = U / max|U_j| column by column (lower triangle only with ``lower``; a zero column
    stays zero under ``zero_identity``, else becomes NaN), and ``T_i^-1`` with
    ``T_i = striu(Y_i'Y_i) + diag(Y_i'Y_i) / 2``. The Gram diagonals lie in [1, n] for nonzero
    columns; a zero one (a zero column, padding) gets T_jj = 1/4: its column is zero, so its
    reflection is the identity. With ``validate`` the one read-back (:func:`_check_values`)."""
    n, m = u.shape
    p, k = _plan(m, block)
    y = _padded(u, n, p * k)
    if p * k > m:
        y[:, m:].zero_()
    yu = y[:, :m] if p * k > m else y
    yu.copy_(u)
    if lower:
        yu.tril_()  # in place: writes only the zeros (torch.tril(U) takes several times longer)
    # max |Y_ij| per column without an n x m |Y| temporary (NaN propagates through all three);
    # on the CPU ~10x faster than vector_norm(ord=inf) or aminmax, ~1.5x faster than abs().amax()
    amax = torch.maximum(yu.amax(0), yu.amin(0).neg_())
    if validate:
        _check_values(u, x2, amax, zero_identity, lower)
    if zero_identity:
        amax = amax.masked_fill(amax == 0, 1.0)
    yu.div_(amax)
    ys, yts = _views(y, p, k, lower)
    gram = torch.stack([torch.mm(t, s) for t, s in zip(yts, ys, strict=True)])
    diag = gram.diagonal(dim1=-2, dim2=-1).mul_(0.5)  # gram's upper triangle is now T
    if zero_identity or p * k > m:  # zero columns can occur (else a zero column is already NaN)
        diag.clamp_min_(0.25)
    eye = torch.eye(k, dtype=u.dtype, device=u.device)
    return _Blocks(y, ys, yts, torch.linalg.solve_triangular(gram, eye, upper=True), amax, k, m, lower)


def _order(p: int, transpose: bool) -> range:
    """Blocks in the order they are applied: W X applies the last block first, W' X the first."""
    return range(p) if transpose else range(p - 1, -1, -1)


def _wy_forward(bl: _Blocks, x: Tensor, transpose: bool, q: list[Tensor] | None) -> Tensor:
    """``W X`` (or ``W' X``): per block ``Z <- Z - Y_i F_i`` with ``F_i = R_i Y_i' Z``
    (``R_i = T_i^-1``, or its transpose for W'), on rows ik.. only with ``lower`` (row slices
    of a row-major Z: views, no copies). With ``q`` (a list) the F_i are appended to it in
    block order."""
    z = x.clone(memory_format=torch.contiguous_format)
    rs = (bl.r.mT if transpose else bl.r).unbind(0)
    p = len(bl.ys)
    fs: list[Tensor] = [z] * p
    ys, yts = bl.ys, bl.yts
    for i in _order(p, transpose):
        r0 = _rows(i, bl.k, bl.lower)
        zi = z[r0:] if r0 else z
        fs[i] = torch.mm(rs[i], torch.mm(yts[i], zi))
        zi.addmm_(ys[i], fs[i], alpha=-1)
    if q is not None:
        q.extend(fs)
    return z


def _wy_backward(bl: _Blocks, q: Tensor | None, c: Tensor, g: Tensor, transpose: bool) -> tuple[Tensor | None, Tensor]:
    """(dL/dU or None, dL/dX) for ``C = W X`` (or ``W' X``) and ``g = dL/dC``; dL/dU needs ``q``.

    Block by block, last applied first, with ``Z_out`` the block's output, ``G = dL/dZ_out``
    and ``F = R Y' Z_in`` saved by forward (``q[i]``): ``E = R' Y' G``, then
    ``dL/dZ_in = G - Y E``, the input is rebuilt as ``Z_in = Z_out + Y F`` (no per-block state
    is kept), and ``dL/dY = Y M - Z_out E' - G F'`` with ``M = striu(Phi - Phi')`` (``stril``
    for ``W'``), ``Phi = E F'``: the chain rule through ``T = striu(Y'Y) + diag(Y'Y) / 2``
    (dL/dT = E F', or F E' for W') plus the ``- Y F E'`` of writing Z_in as Z_out + Y F.
    A k x 3B buffer ``V = [-F | E | F]`` per block makes each update one product with
    ``S = [Z_out | G]``: ``S -= Y V[:, :2B]`` and ``Z_out E' + G F' = S V[:, B:]'``; the
    ``Y M`` terms of all blocks follow once every E is known. dL/dY is written straight into
    the n x m gradient (the padding columns of a short last block are left out) and divided
    by the column maxima in place (dL/dU = dL/dY / max|U_j|). With ``lower`` every product is
    restricted to the rows ik.. block i touches; dL/dU stays zero above them.
    """
    p, k, bsz, m = len(bl.ys), bl.k, g.shape[1], bl.m
    order = list(reversed(_order(p, transpose)))
    rts = (bl.r if transpose else bl.r.mT).unbind(0)
    rows = [_rows(i, k, bl.lower) for i in range(p)]
    ys, yts = bl.ys, bl.yts
    if q is None:  # only dL/dX: carry G alone, the inputs are not needed
        gg = g.clone(memory_format=torch.contiguous_format)
        for i in order:
            gi = gg[rows[i] :] if rows[i] else gg
            gi.addmm_(ys[i], torch.mm(rts[i], torch.mm(yts[i], gi)), alpha=-1)
        return None, gg
    st = torch.cat([c, g], dim=1)  # S = [Z_out | G], n x 2B
    gv = st[:, bsz:]
    v = torch.cat([-q, q, q], dim=2)  # [-F | E (written below) | F]
    ve = v[:, :, bsz : 2 * bsz]
    heads, es = v[:, :, : 2 * bsz].unbind(0), ve.unbind(0)
    tails = list(v[:, :, bsz:].mT.unbind(0))
    du = c.new_empty(c.shape[0], m)  # every entry is written (above the diagonal by tril_ with lower)
    cols = du.split(k, 1) if p > 1 else (du,)
    dys = [d[rows[i] :] if rows[i] else d for i, d in enumerate(cols)]
    short = m - (p - 1) * k  # columns of the last block that are U's (the rest pad m to pk)
    if short < k:
        tails[-1] = tails[-1][:, :short]
    for i in order:
        si, gi = (st[rows[i] :], gv[rows[i] :]) if rows[i] else (st, gv)
        torch.mm(rts[i], torch.mm(yts[i], gi), out=es[i])  # E
        torch.mm(si, tails[i], out=dys[i])  # Z_out E' + G F'
        si.addmm_(ys[i], heads[i], alpha=-1)  # [Z_in | dL/dZ_in] = [Z_out + Y F | G - Y E]
    phi = torch.bmm(ve, q.mT)  # E F', every block at once
    ms = list((torch.tril(phi - phi.mT, -1) if transpose else torch.triu(phi - phi.mT, 1)).unbind(0))
    if short < k:
        ms[-1] = ms[-1][:, :short]
    for i in range(p):
        dys[i].addmm_(ys[i], ms[i], beta=-1)  # Y M - Z_out E' - G F'
    if bl.lower:
        du.tril_()
    return du.div_(bl.amax), gv


# --------------------------------------------------------------------------- autograd
class HouseholderWYFunction(torch.autograd.Function):
    """``C = W X`` (``W' X`` with ``transpose``) by blocked compact WY, forward and backward.

    ``apply(U, X, block, transpose, zero_identity, lower, validate)``: U is n x m (m <= n), X
    is (n,) or (n, B); returns C of X's shape. ``block=None`` takes :func:`choose_block`.
    ``zero_identity=True`` takes a zero column as the identity (the svdRNN convention, eq. 1 of
    Zhang et al.) with zero gradient; otherwise a zero column is a
    :class:`~orthoverify.errors.ZeroVectorError` (NaN with ``validate=False``). ``lower=True``
    reads U on eq. 9's pattern (entries above the diagonal ignored, taken as zero).
    ``validate`` (default True): one read-back in forward, see the module docstring. Backward
    gives dL/dU (summed over the batch; the full dense gradient, or its lower triangle with
    ``lower``) and dL/dX, reading nothing back; double backward raises NotImplementedError.
    """

    @staticmethod
    def forward(
        ctx: Any,
        U: Tensor,
        X: Tensor,
        block: int | None = None,
        transpose: bool = False,
        zero_identity: bool = False,
        lower: bool = False,
        validate: bool = True,
    ) -> Tensor:
        """Check, prepare, apply the blocks; save Y, the column maxima, T_i^-1, C and, when
        dL/dU is wanted, the coefficients F_i (p k x B in all)."""
        uu, xx = _validated(U, X)
        tr = _check_flag(transpose, "transpose")
        zi, lo = _check_flag(zero_identity, "zero_identity"), _check_flag(lower, "lower")
        bs = _check_block(block, uu.shape[1], uu.device)
        c, vec, bl, q = _run(uu, xx, bs, tr, zi, lo, _check_flag(validate, "validate"), save=ctx.needs_input_grad[0])
        n, m = uu.shape
        ctx.transpose, ctx.vec, ctx.shape_u = tr, vec, (n, m)
        if bl is None:  # m = 0
            ctx.save_for_backward()
        else:
            ctx.k, ctx.lower = bl.k, bl.lower
            ctx.views = (bl.ys, bl.yts)  # views of the saved Y: kept rather than made again in backward
            ctx.save_for_backward(c, q, bl.r, bl.amax, bl.y)
        return c.reshape(n) if vec else c

    @staticmethod
    def backward(ctx: Any, grad_c: Tensor) -> tuple[Tensor | None, Tensor | None, None, None, None, None, None]:
        """Reverse pass over the blocks, rebuilding each block's input from its output."""
        if torch.is_grad_enabled():
            raise NotImplementedError(
                "HouseholderWYFunction does not support double backward (create_graph=True); for higher "
                "derivatives differentiate reflector_product(U) @ X or compact_wy(U) @ X with autograd"
            )
        n, m = ctx.shape_u
        need_u, need_x = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        if m == 0:  # W = I
            du0 = grad_c.new_zeros(n, 0) if need_u else None
            return du0, (grad_c.clone() if need_x else None), None, None, None, None, None
        c, q, r, amax, y = ctx.saved_tensors
        # the views forward made, once (a second backward, retain_graph=True, makes them again);
        # dropped here so that an output kept alive does not keep Y alive after backward
        ys, yts = ctx.views or _views(y, y.shape[1] // ctx.k, ctx.k, ctx.lower)
        ctx.views = None
        bl = _Blocks(y, ys, yts, r, amax, ctx.k, m, ctx.lower)
        g = grad_c.reshape(n, 1) if ctx.vec else grad_c
        du, dx = _wy_backward(bl, q if need_u else None, c, g, ctx.transpose)
        return du, ((dx.reshape(n) if ctx.vec else dx) if need_x else None), None, None, None, None, None


def _run(
    u: Tensor,
    x: Tensor,
    block: int,
    transpose: bool,
    zero_identity: bool,
    lower: bool,
    validate: bool,
    *,
    save: bool,
) -> tuple[Tensor, bool, _Blocks | None, Tensor | None]:
    """(C as n x B, whether X was 1-D, the prepared blocks (None for m = 0) and, with
    ``save``, the p x k x B coefficients F_i for backward). Plain torch operations on U and
    X as given: forward-mode AD (``torch.func.jvp``, dual tensors) differentiates them."""
    n, m = u.shape
    vec = x.ndim == 1
    x2 = x.reshape(n, 1) if vec else x
    if m == 0:
        if validate:
            vector_or_columns(_torch_backend(x2), x2, "X", n)  # NonFiniteError
        return x2.clone(), vec, None, None
    bl = _prepare(u, x2, block, zero_identity, lower, validate)
    fs: list[Tensor] | None = [] if save else None
    c = _wy_forward(bl, x2, transpose, fs)
    return c, vec, bl, (torch.stack(fs) if fs is not None else None)


def _apply(
    u: object, x: object, block: int | None, transpose: bool, zero_identity: bool, lower: bool, validate: bool
) -> Tensor:
    """The Function when a gradient is being recorded, else the forward alone (nothing saved),
    on U and X as given, so that forward-mode AD carries tangents through it."""
    uu, xx = _validated(u, x)
    if torch.is_grad_enabled() and (uu.requires_grad or xx.requires_grad):
        return cast(Tensor, HouseholderWYFunction.apply(uu, xx, block, transpose, zero_identity, lower, validate))
    bs = _check_block(block, uu.shape[1], uu.device)
    tr, lo = _check_flag(transpose, "transpose"), _check_flag(lower, "lower")
    c, vec, _, _ = _run(uu, xx, bs, tr, zero_identity, lo, _check_flag(validate, "validate"), save=False)
    return c.reshape(uu.shape[0]) if vec else c


def householder_wy_apply(
    U: Tensor,
    X: Tensor,
    *,
    block: int | None = None,
    transpose: bool = False,
    lower: bool = False,
    validate: bool = True,
) -> Tensor:
    """``W X = H(U_{*,1}) ... H(U_{*,m}) X`` (``W' X`` with ``transpose=True``) by blocked compact WY.

    U is n x m (1 <= n, 0 <= m <= n, nonzero finite columns), X is (n,) or (n, B), both float32
    or float64 on one device. Equals ``reflector_product(U) @ X`` and
    ``householder_apply(U, X)``; differentiable in U and X with O(nm + nB) saved memory.
    ``block`` reflections per WY block, None for :func:`choose_block`'s choice on U's device.

    ``lower=True``: U is on eq. 9's pattern (column j zero above row j): its entries above the
    diagonal are ignored (taken as zero) and get zero gradient, so the result and dL/dU are
    those of ``tril(U)`` (autograd through ``reflector_product(U.tril()) @ X``). Block i of the
    reflections then only touches rows ik.., and every product is restricted to them: about
    half the work at m = n. The default (False) takes U dense and returns the full gradient.

    ``validate=True`` reads one boolean back per forward and raises NonFiniteError or
    ZeroVectorError for bad values; ``validate=False`` never waits for the device (the hot
    path of a training loop): bad values then give NaN, never a finite wrong result.
    """
    return _apply(U, X, block, transpose, False, lower, validate)


def svd_wy_apply(
    Uu: Tensor,
    sigma: Tensor,
    Uv: Tensor,
    X: Tensor,
    *,
    block: int | None = None,
    lower: bool = False,
    validate: bool = True,
) -> Tensor:
    """svdRNN's ``U Sigma V' X`` with ``U = H(Uu_{*,1}) ... H(Uu_{*,m1})`` and
    ``V = H(Uv_{*,1}) ... H(Uv_{*,m2})``, Sigma = diag(sigma).

    With eq. 9's column pattern, ``Uu = (u_n | ... | u_k1)`` and ``Uv = (v_n | ... | v_k2)``
    (u_k padded with n - k leading zeros) this is ``M_{k1,k2}(u, v, sigma) X`` of eq. 3
    (:func:`orthoverify.param.svd.m_k1k2`): ``H_n(u_n) ... H_k1(u_k1) Sigma H_k2(v_k2) ... H_n(v_n)``.
    As in eq. 1, a zero column is the identity (its gradient is zero). Differentiable in Uu,
    sigma, Uv and X; V' X and U (.) run on :func:`householder_wy_apply`'s blocked WY path.
    ``lower=True`` takes Uu and Uv on eq. 9's pattern, as :func:`householder_wy_apply` does
    (entries above the diagonal ignored, zero gradient there; about half the work).
    ``validate`` as for :func:`householder_wy_apply` (sigma's finiteness included).
    """
    uu, uv, sg = _check_tensor(Uu, "Uu"), _check_tensor(Uv, "Uv"), _check_tensor(sigma, "sigma")
    _same_kind(uu, uv, "Uu", "Uv")
    _same_kind(uu, sg, "Uu", "sigma")
    if uu.ndim == 2 and uv.ndim == 2 and uu.shape[0] != uv.shape[0]:
        raise ShapeError(f"Uu has {uu.shape[0]} rows but Uv has {uv.shape[0]}: both must have n rows")
    if uu.ndim == 2 and (sg.ndim != 1 or sg.shape[0] != uu.shape[0]):
        raise ShapeError(f"sigma must have shape ({uu.shape[0]},), got {tuple(sg.shape)}")
    if _check_flag(validate, "validate"):
        vector(_torch_backend(sg), sg, "sigma")  # NonFiniteError
    vx = _apply(uv, X, block, True, True, lower, validate)  # V' X
    sx = sg[:, None] * vx if vx.ndim == 2 else sg * vx
    return _apply(uu, sx, block, False, True, lower, validate)
