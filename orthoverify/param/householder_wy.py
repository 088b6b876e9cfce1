"""Fast torch paths: Householder products applied to a batch through blocked compact WY.

``W = H(U_{*,1}) ... H(U_{*,m})`` (the convention of
:func:`~orthoverify.param.householder.reflector_product`: first column leftmost, applied last)
is applied to ``X`` (n x B) block by block. The m reflections are grouped into p blocks of
at most ``block`` consecutive columns; block i is one compact WY factor
``W_i = I - Y_i T_i^-1 Y_i'`` with ``T_i = striu(Y_i'Y_i) + I/2`` (Prop. 1 of Mhammedi et al.
on unit columns), so each block costs a few matrix-matrix products instead of a Python loop
over its reflections: the idea of FastH (Mathiasen et al., 2020) and of the CWY
parametrisation (Likhosherstov et al., 2021).

Memory is O(nm + nB): forward saves the unit columns Y, the per-block ``T_i^-1`` (at most
m x block values) and the output C, nothing per reflection and nothing that grows with m B.
Backward walks the blocks in reverse and rebuilds each block's input from its output by
applying the block's transpose (``W_i' = W_i^-1``: orthogonal, so the rebuilt inputs stay as
accurate as the forward ones) in the same matrix product that carries dL/dC back. Cost: about
16 nmB + 4 nm block flops for forward plus backward, against 6 n^2 B for a dense precomputed W
(the benchmark cases in :mod:`orthoverify.bench.cases_householder` measure both).

Columns are normalised first (``Y_j = U_j / ||U_j||``, scaled by max|U_j| before squaring so
nothing overflows): a reflection ignores the scale of its vector. By default the gradient
returned for U is the full n x m gradient of a dense U, upper triangle included, the same as
autograd through ``reflector_product(U) @ X`` and as
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

from typing import Any, cast

import torch
from torch import Tensor

from orthoverify.errors import DomainError, DTypeError, InputError, ShapeError
from orthoverify.param._validate import matrix, vector, vector_or_columns
from orthoverify.param.householder import _check_u
from orthoverify.param.householder_torch import _check_tensor, _torch_backend

__all__ = ["DEFAULT_BLOCK", "HouseholderWYFunction", "householder_wy_apply", "svd_wy_apply"]

DEFAULT_BLOCK = 64
"""Reflections per WY block: large enough for matrix-matrix speed, small enough that the
O(n k^2) per-block overhead (the Gram matrix, the T term of the gradient) stays modest."""


# --------------------------------------------------------------------------- validation
def _same_kind(a: Tensor, b: Tensor, an: str, bn: str) -> None:
    """Same dtype and device, or a clear error naming both."""
    if a.dtype != b.dtype:
        da, db = (str(t.dtype).replace("torch.", "") for t in (a, b))
        raise DTypeError(f"{an} is {da} but {bn} is {db}: pass both in the same dtype")
    if a.device != b.device:
        raise InputError(f"{an} is on {a.device} but {bn} is on {b.device}: move both to the same device")


def _check_block(block: object) -> int:
    if not isinstance(block, int) or isinstance(block, bool) or block < 1:
        raise InputError(f"block must be a positive integer, got {block!r}")
    return block


def _check_flag(flag: object, name: str) -> bool:
    if not isinstance(flag, bool):
        raise InputError(f"{name} must be True or False, got {flag!r}")
    return flag


def _validated(u: object, x: object) -> tuple[Tensor, Tensor]:
    """U and X as tensors of one float dtype and device, U n x m with 1 <= n and m <= n
    (cheap: no data is read; :func:`_prepare` and :func:`_columns` read it)."""
    uu, xx = _check_tensor(u, "U"), _check_tensor(x, "X")
    _same_kind(uu, xx, "U", "X")
    if uu.ndim != 2:
        matrix(_torch_backend(uu), uu, "U")  # raises the ShapeError
    n, m = uu.shape
    if n == 0:
        raise ShapeError("U has no rows: n must be at least 1")
    if m > n:
        raise DomainError(f"U has m = {m} columns for n = {n}: at most n reflections are taken")
    return uu, xx


def _columns(x: Tensor, n: int) -> tuple[Tensor, bool]:
    """X as n x B (finite) and whether it was 1-D (ShapeError, NonFiniteError as the generic code)."""
    return cast(tuple[Tensor, bool], vector_or_columns(_torch_backend(x), x, "X", n))


# --------------------------------------------------------------------------- the kernels
def _plan(m: int, block: int) -> tuple[int, int]:
    """(p, k): p = ceil(m / block) blocks of k = ceil(m / p) columns (the last padded with
    zero columns, which act as the identity), so no block is much smaller than the others."""
    p = -(-m // block)
    return p, -(-m // p)


def _scaled_columns(u: Tensor, zero_identity: bool) -> tuple[Tensor, Tensor]:
    """(U with unit columns, 1/||U_j||) for columns whose squares leave the dtype's range:
    each column is first scaled by max|U_j|. Raises the generic code's errors for NaN/Inf and,
    unless ``zero_identity``, for zero columns; with ``zero_identity`` a zero column stays
    zero and gets 1/||U_j|| = 0."""
    b = _torch_backend(u)
    matrix(b, u, "U")  # NonFiniteError
    amax = u.abs().amax(0)
    nonzero = amax > 0
    if not zero_identity and not bool(nonzero.all()):
        _check_u(b, u, allow_square=True)  # ZeroVectorError, worded as the generic code words it
    s = torch.where(nonzero, amax, torch.ones_like(amax))
    v = u / s
    r = torch.linalg.vector_norm(v, dim=0)
    r = torch.where(nonzero, r, torch.ones_like(r))
    return v / r, torch.where(nonzero, 1 / (s * r), torch.zeros_like(r))


def _rows(i: int, k: int, lower: bool) -> int:
    """First row block i touches: ik on eq. 9's pattern (its columns are zero above it), else 0."""
    return i * k if lower else 0


def _gram(y: Tensor, p: int, k: int, lower: bool) -> Tensor:
    """``Y_i'Y_i`` per block (p x k x k); on eq. 9's pattern only rows ik.. of block i enter."""
    n = y.shape[0]
    if not lower:
        yb = y.view(n, p, k).transpose(0, 1)  # p x n x k views of the blocks
        return yb.mT @ yb
    gram = y.new_empty(p, k, k)
    for i in range(p):
        yi = y[i * k :, i * k : (i + 1) * k]
        torch.mm(yi.T, yi, out=gram[i])
    return gram


def _prepare(u: Tensor, block: int, zero_identity: bool, lower: bool) -> tuple[Tensor, Tensor, Tensor]:
    """``Y`` (n x pk: U with unit or zero columns, then zero columns padding the last block;
    block i is columns ik .. ik + k - 1; with ``lower`` the entries above the diagonal are
    zeroed), ``1/||U_j||`` (pk, 0 on the padding) and ``S_i = T_i^-1`` (p x k x k, upper
    triangular).

    U is copied once into Y and its Gram matrices give the column norms; the copy is then
    scaled in place. Only when some ``||U_j||^2`` is near the ends of the dtype's range (or not
    finite, or zero) are the columns rescaled first (:func:`_scaled_columns`)."""
    n, m = u.shape
    p, k = _plan(m, block)
    if p * k == m:  # no padding: one pass makes the row-major copy
        y = torch.tril(u).contiguous() if lower else u.clone(memory_format=torch.contiguous_format)
    else:
        y = u.new_empty(n, p * k)
        y[:, :m] = u
        y[:, m:] = 0
        if lower:
            y.tril_()
    gram = _gram(y, p, k, lower)
    r2 = gram.diagonal(dim1=-2, dim2=-1).reshape(p * k)[:m]
    fi = torch.finfo(u.dtype)
    lo = fi.tiny / fi.eps**2  # above it, underflowed squares change ||U_j||^2 by < n eps^2
    if bool(((r2 >= lo) & (r2 <= 1 / lo)).all()):  # one synchronisation; false for NaN and Inf
        inv = torch.cat([torch.rsqrt(r2), r2.new_zeros(p * k - m)])
        y *= inv
        gram *= inv.view(p, k, 1) * inv.view(p, 1, k)
    else:
        unit, inv = _scaled_columns(y[:, :m].clone() if lower else u, zero_identity)
        y[:, :m] = unit
        gram = _gram(y, p, k, lower)
        inv = torch.cat([inv, inv.new_zeros(p * k - m)])
    return y, inv, _t_inverse(gram)


def _t_inverse(gram: Tensor) -> Tensor:
    """``S = T^-1`` with ``T = striu(Y'Y) + I/2`` per block (Y'Y has a unit diagonal; a zero
    column's 1/2 makes its reflection the identity)."""
    p, k = gram.shape[0], gram.shape[1]
    t = torch.triu(gram, 1)
    t.diagonal(dim1=-2, dim2=-1).fill_(0.5)
    eye = torch.eye(k, dtype=gram.dtype, device=gram.device).expand(p, k, k)
    return torch.linalg.solve_triangular(t, eye, upper=True)


def _order(p: int, transpose: bool) -> range:
    """Blocks in the order they are applied: W X applies the last block first, W' X the first."""
    return range(p) if transpose else range(p - 1, -1, -1)


def _wy_forward(y: Tensor, s: Tensor, x: Tensor, transpose: bool, lower: bool) -> Tensor:
    """``W X`` (or ``W' X``): per block ``Z <- Z - Y_i R_i Y_i' Z`` with R_i = S_i (or S_i'),
    on rows ik.. only with ``lower`` (row slices of a row-major Z: views, no copies)."""
    p, k = s.shape[0], s.shape[1]
    z = x.clone(memory_format=torch.contiguous_format)
    for i in _order(p, transpose):
        r0 = _rows(i, k, lower)
        yi, zi = y[r0:, i * k : (i + 1) * k], z[r0:]
        r = s[i].mT if transpose else s[i]
        zi.addmm_(yi, r @ (yi.T @ zi), alpha=-1)
    return z


def _wy_backward(
    y: Tensor, s: Tensor, c: Tensor, g: Tensor, transpose: bool, need_y: bool, lower: bool
) -> tuple[tuple[Tensor, Tensor] | None, Tensor]:
    """((dL/dY, diag(Y'dL/dY)) or None, dL/dX) for ``C = W X`` (or ``W' X``) and ``g = dL/dC``.

    Block by block, last applied first: with ``Z_out`` the block's output and G = dL/dZ_out,
    ``R' Y' [Z_out | G] = [-F | E]`` (F = R Y' Z_in, the forward's coefficients, recovered from
    the output since ``W_i' = W_i^-1``), then ``[Z_in | dL/dZ_in] = [Z_out | G] - Y [-F | E]``
    and ``dL/dY = Y M - Z_out E' - G F'`` with ``M = Q + Q' - F E'``, Q = striu(dL/dT),
    ``dL/dT = E F'`` (``F E'`` for the transposed product). With ``P = E (-F)'`` this is
    ``M = triu(P') - striu(P)`` (``tril(P') - stril(P)`` transposed). With ``lower`` every
    product is restricted to the rows ik.. block i touches; dL/dY stays zero above them.
    The column dots ``Y_j' dL/dY_j`` are taken at the end, in one pass.
    """
    p, k = s.shape[0], s.shape[1]
    bsz = g.shape[1]
    order = list(reversed(_order(p, transpose)))
    if not need_y:  # only dL/dX: carry G alone, the inputs are not needed
        gg = g.clone(memory_format=torch.contiguous_format)
        for i in order:
            r0 = _rows(i, k, lower)
            yi, gi = y[r0:, i * k : (i + 1) * k], gg[r0:]
            rt = s[i] if transpose else s[i].mT
            gi.addmm_(yi, rt @ (yi.T @ gi), alpha=-1)
        return None, gg
    zg = torch.cat([c, g], dim=1)  # [Z_out | G], n x 2B
    dy = torch.zeros_like(y) if lower else torch.empty_like(y)
    tri, flip = (torch.tril, -1) if transpose else (torch.triu, 1)
    for i in order:
        r0 = _rows(i, k, lower)
        cols = slice(i * k, (i + 1) * k)
        yi, st, d = y[r0:, cols], zg[r0:], dy[r0:, cols]
        rt = s[i] if transpose else s[i].mT
        fe = rt @ (yi.T @ st)  # [-F | E]
        mf, e = fe[:, :bsz], fe[:, bsz:]
        pm = e @ mf.T
        torch.mm(yi, tri(pm.mT) - tri(pm, flip), out=d)
        d.addmm_(st, torch.cat([e, mf.neg()], dim=1).T, alpha=-1)  # - Z_out E' - G F'
        st.addmm_(yi, fe, alpha=-1)
    return (dy, torch.linalg.vecdot(y, dy, dim=0)), zg[:, bsz:]


def _grad_u(y: Tensor, dy: Tensor, dots: Tensor, inv_norm: Tensor, m: int, lower: bool) -> Tensor:
    """dL/dU from dL/dY for ``Y_j = U_j / ||U_j||``: ``(I - Y_j Y_j') dL/dY_j / ||U_j||``
    (in place on dL/dY; ``dots`` holds ``Y_j' dL/dY_j``), lower triangular with ``lower``."""
    dy *= inv_norm
    dy.addcmul_(y, dots * inv_norm, value=-1)
    if lower:
        dy.tril_()
    return dy[:, :m]


# --------------------------------------------------------------------------- autograd
class HouseholderWYFunction(torch.autograd.Function):
    """``C = W X`` (``W' X`` with ``transpose``) by blocked compact WY, forward and backward.

    ``apply(U, X, block, transpose, zero_identity, lower)``: U is n x m (m <= n), X is (n,) or
    (n, B); returns C of X's shape. ``zero_identity=True`` takes a zero column as the identity
    (the svdRNN convention, eq. 1 of Zhang et al.) with zero gradient; otherwise a zero column
    is a :class:`~orthoverify.errors.ZeroVectorError`. ``lower=True`` reads U on eq. 9's
    pattern (entries above the diagonal ignored, taken as zero). Backward gives dL/dU (summed
    over the batch; the full dense gradient, or its lower triangle with ``lower``) and dL/dX;
    double backward raises NotImplementedError.
    """

    @staticmethod
    def forward(
        ctx: Any,
        U: Tensor,
        X: Tensor,
        block: int = DEFAULT_BLOCK,
        transpose: bool = False,
        zero_identity: bool = False,
        lower: bool = False,
    ) -> Tensor:
        """Validate, normalise, apply the blocks; save Y, 1/||U_j||, T^-1 per block, and C."""
        bs, tr = _check_block(block), _check_flag(transpose, "transpose")
        zi, lo = _check_flag(zero_identity, "zero_identity"), _check_flag(lower, "lower")
        c, vec, saved = _run(*_validated(U, X), bs, tr, zi, lo, save=True)
        ctx.save_for_backward(*saved)
        n, m = U.shape
        ctx.transpose, ctx.lower, ctx.vec, ctx.shape_u = tr, lo, vec, (n, m)
        return c.reshape(n) if vec else c

    @staticmethod
    def backward(ctx: Any, grad_c: Tensor) -> tuple[Tensor | None, Tensor | None, None, None, None, None]:
        """Reverse pass over the blocks, rebuilding each block's input from its output."""
        if torch.is_grad_enabled():
            raise NotImplementedError(
                "HouseholderWYFunction does not support double backward (create_graph=True); for higher "
                "derivatives differentiate reflector_product(U) @ X or compact_wy(U) @ X with autograd"
            )
        y, inv_norm, s, c = ctx.saved_tensors
        n, m = ctx.shape_u
        need_u, need_x = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        g = grad_c.reshape(n, 1) if ctx.vec else grad_c
        if m == 0:  # W = I
            du0 = grad_c.new_zeros(n, 0) if need_u else None
            return du0, (grad_c.clone() if need_x else None), None, None, None, None
        dy, dx = _wy_backward(y, s, c, g, ctx.transpose, need_u, ctx.lower)
        du = _grad_u(y, *dy, inv_norm, m, ctx.lower) if dy is not None else None
        return du, ((dx.reshape(n) if ctx.vec else dx) if need_x else None), None, None, None, None


def _run(
    u: Tensor, x: Tensor, block: int, transpose: bool, zero_identity: bool, lower: bool, *, save: bool
) -> tuple[Tensor, bool, tuple[Tensor | None, ...]]:
    """(C as n x B, whether X was 1-D, what backward needs: Y, 1/||U_j||, S, C)."""
    n, m = u.shape
    u = u.detach()
    if m == 0:
        x2, vec = _columns(x.detach(), n)
        return x2.clone(), vec, (None, None, None, None)
    y, inv_norm, s = _prepare(u, block, zero_identity, lower)
    x2, vec = _columns(x.detach(), n)
    c = _wy_forward(y, s, x2, transpose, lower)
    return c, vec, ((y, inv_norm, s, c) if save else ())


def _apply(u: object, x: object, block: int, transpose: bool, zero_identity: bool, lower: bool) -> Tensor:
    """The Function when a gradient is being recorded, else the forward alone (nothing saved)."""
    uu, xx = _validated(u, x)
    if torch.is_grad_enabled() and (uu.requires_grad or xx.requires_grad):
        return cast(Tensor, HouseholderWYFunction.apply(uu, xx, block, transpose, zero_identity, lower))
    bs, tr = _check_block(block), _check_flag(transpose, "transpose")
    c, vec, _ = _run(uu, xx, bs, tr, zero_identity, _check_flag(lower, "lower"), save=False)
    return c.reshape(uu.shape[0]) if vec else c


def householder_wy_apply(
    U: Tensor, X: Tensor, *, block: int = DEFAULT_BLOCK, transpose: bool = False, lower: bool = False
) -> Tensor:
    """``W X = H(U_{*,1}) ... H(U_{*,m}) X`` (``W' X`` with ``transpose=True``) by blocked compact WY.

    U is n x m (1 <= n, 0 <= m <= n, nonzero finite columns), X is (n,) or (n, B), both float32
    or float64 on one device. Equals ``reflector_product(U) @ X`` and
    ``householder_apply(U, X)``; differentiable in U and X with O(nm + nB) saved memory.

    ``lower=True``: U is on eq. 9's pattern (column j zero above row j): its entries above the
    diagonal are ignored (taken as zero) and get zero gradient, so the result and dL/dU are
    those of ``tril(U)`` (autograd through ``reflector_product(U.tril()) @ X``). Block i of the
    reflections then only touches rows ik.., and every product is restricted to them: about
    half the work at m = n. The default (False) takes U dense and returns the full gradient.
    """
    return _apply(U, X, block, transpose, False, lower)


def svd_wy_apply(
    Uu: Tensor, sigma: Tensor, Uv: Tensor, X: Tensor, *, block: int = DEFAULT_BLOCK, lower: bool = False
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
    """
    uu, uv, sg = _check_tensor(Uu, "Uu"), _check_tensor(Uv, "Uv"), _check_tensor(sigma, "sigma")
    _same_kind(uu, uv, "Uu", "Uv")
    _same_kind(uu, sg, "Uu", "sigma")
    if uu.ndim == 2 and uv.ndim == 2 and uu.shape[0] != uv.shape[0]:
        raise ShapeError(f"Uu has {uu.shape[0]} rows but Uv has {uv.shape[0]}: both must have n rows")
    if uu.ndim == 2 and (sg.ndim != 1 or sg.shape[0] != uu.shape[0]):
        raise ShapeError(f"sigma must have shape ({uu.shape[0]},), got {tuple(sg.shape)}")
    vector(_torch_backend(sg), sg, "sigma")  # NonFiniteError
    vx = _apply(uv, X, block, True, True, lower)  # V' X
    sx = sg[:, None] * vx if vx.ndim == 2 else sg * vx
    return _apply(uu, sx, block, False, True, lower)
