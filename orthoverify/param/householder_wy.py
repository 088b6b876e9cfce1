"""Fast torch paths: Householder products applied to a batch through blocked compact WY.

``W = H(U_{*,1}) ... H(U_{*,m})`` (the convention of
:func:`~orthoverify.param.householder.reflector_product`: first column leftmost, applied last)
is applied to ``X`` (n x B) block by block. The m reflections are grouped into p blocks of
at most ``block`` consecutive columns; block i is one compact WY factor
``W_i = I - Y_i T_i^-1 Y_i'`` with ``T_i = striu(Y_i'Y_i) + diag(||Y_j||^2) / 2`` (Prop. 1 of
Mhammedi et al., written for columns of any length: ``H(y) = I - y (||y||^2 / 2)^-1 y'``), so
each block costs a few matrix-matrix products instead of a Python loop over its
reflections: the idea of FastH (Mathiasen et al., 2020) and of the CWY parametrisation
(Likhosherstov et al., 2021).

Memory is O(nm + nB): forward saves the columns Y (U itself where U needs no change), the
per-block ``T_i^-1`` (at most m x block values), each block's k x B coefficients
``F_i = T_i^-1 Y_i' Z`` (m x B in all, at most n x B since m <= n) and the output C;
nothing per reflection. Backward walks the blocks in reverse and rebuilds each block's
input from its output (``Z_in = Z_out + Y_i F_i``) in the same matrix product that carries
dL/dC back. Cost: about 14 nmB + 4 nm block flops for forward plus backward (half that with
``lower`` at m = n), against 6 n^2 B for a dense precomputed W; the benchmark cases in
:mod:`orthoverify.bench.cases_householder` measure both.

Columns are used as given (a reflection ignores the scale of its vector); only when a
squared column norm leaves [2^-32, 2^32] are they first scaled by exact powers of two, so
nothing overflows or underflows. By default the gradient returned for U is the full n x m
gradient of a dense U, upper triangle included, the same as autograd through
``reflector_product(U) @ X`` and as
:class:`~orthoverify.param.householder_torch.Algorithm1Function`.

``lower=True`` takes U on eq. 9's pattern (column j zero above row j, as the parametrisation
builds it): entries above the diagonal are ignored and get zero gradient, i.e. the result and
gradient are those of autograd through ``reflector_product(U.tril()) @ X``. Block i
(columns ik .. ik + k - 1) then only touches rows ik.., so every product with Y_i and every
update of X is restricted to those rows (row slices of row-major tensors: views, no copies),
about half the flops at m = n. Where U is already stored on that pattern (as the
parametrisation keeps it) its blocks are used in place, else copied with the pattern applied.

Unlike the generic code, which follows eq. 9 (at most n - 1 vectors, u_1 apart), m = n dense
columns are accepted: the WY form holds for any number of nonzero vectors.
"""

from __future__ import annotations

from typing import Any, NamedTuple, cast

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
_R2_LO, _R2_HI = 2.0**-32, 2.0**32
"""Column norms^2 inside this window take the fast path, Y = U as given: nothing then leaves
the dtype's range (float32 included) and T_jj = ||U_j||^2 / 2 is exact enough. Outside it (or
for NaN, Inf, zero columns) the columns are first scaled by exact powers of two."""


class _Blocks(NamedTuple):
    """The m reflections, prepared once per forward and saved for backward.

    ``ys[i]`` holds block i's columns ik .. ik + k_i - 1 (k_i = k except a shorter last
    block): all n rows, or with ``lower`` rows ik.. only, on eq. 9's pattern (top k_i x k_i
    square lower triangular); a view of U where U already is that, else a copy. ``ns[i] = -T_i^-1``
    (p x k x k, upper triangular; a short last block is padded with -I). ``scale`` is None when
    Y is U itself, else the (2, m) exact power-of-two factors with ``Y_j = U_j a_j b_j``
    (0 for a zero column under ``zero_identity``), so ``dL/dU_j = dL/dY_j a_j b_j``."""

    ys: list[Tensor]
    ns: Tensor
    k: int
    lower: bool
    scale: Tensor | None


def _plan(m: int, block: int) -> tuple[int, int]:
    """(p, k): p = ceil(m / block) blocks of k = ceil(m / p) columns, the last one shorter
    where k does not divide m, so no block is much smaller than the others."""
    p = -(-m // block)
    return p, -(-m // p)


def _rows(i: int, k: int, lower: bool) -> int:
    """First row block i touches: ik on eq. 9's pattern (its columns are zero above it), else 0."""
    return i * k if lower else 0


def _column_scale(u: Tensor, lower: bool, zero_identity: bool) -> Tensor:
    """(2, m) powers of two ``a_j b_j = 2^-e_j`` with ``max_i |U_ij| = f 2^e_j``, f in [1/2, 1)
    (two factors: one could leave the range for subnormal columns), 0 for a zero column.
    Raises the generic code's NonFiniteError and, unless ``zero_identity``, ZeroVectorError;
    with ``lower`` only the lower triangle is read."""
    b = _torch_backend(u)
    uu = torch.tril(u) if lower else u
    matrix(b, uu, "U")  # NonFiniteError
    amax = uu.abs().amax(0)
    nonzero = amax > 0
    if not zero_identity and not bool(nonzero.all()):
        _check_u(b, uu, allow_square=True)  # ZeroVectorError, worded as the generic code words it
    e = torch.frexp(amax).exponent
    half = torch.div(-e, 2, rounding_mode="floor")
    one = torch.ones_like(amax)
    a = torch.where(nonzero, torch.ldexp(one, half), torch.zeros_like(amax))
    return torch.stack([a, torch.ldexp(one, -e - half)])


def _top_squares(t: Tensor, k: int) -> list[Tensor]:
    """Views of the top k_i x k_i square of every block of t's columns (t: n x m, n >= m):
    one strided p x k x k view for the full blocks, one slice for a shorter last block."""
    m = t.shape[1]
    full, (s0, s1) = m // k, t.stride()
    out = [t.as_strided((full, k, k), (k * (s0 + s1), s0, s1), t.storage_offset())] if full else []
    return out + ([t[full * k : m, full * k :]] if full * k < m else [])


def _lower_as_stored(u: Tensor, k: int) -> bool:
    """Whether the top square of every block of U is already lower triangular (U stored on
    eq. 9's pattern, as the parametrisation keeps it): its blocks can then be used in place.
    Reads only those squares (m k values); NaN above a diagonal reads as False."""
    return not bool(torch.stack([torch.triu(sq, 1).any() for sq in _top_squares(u, k)]).any())


def _split(u: Tensor, p: int, k: int, lower: bool, scale: Tensor | None) -> list[Tensor]:
    """Block i's Y_i (see :class:`_Blocks`): a view of U when it needs no scaling and, with
    ``lower``, is stored on eq. 9's pattern already; else a contiguous copy (scaled, top
    square made lower triangular)."""
    m = u.shape[1]
    copy = lower and (scale is not None or not _lower_as_stored(u, k))
    ys = []
    for i in range(p):
        c0, c1 = i * k, min(m, (i + 1) * k)
        yi = u[_rows(i, k, lower) :, c0:c1]
        if scale is not None:
            yi = yi * scale[0, c0:c1] * scale[1, c0:c1]
        elif copy:
            yi = yi.clone(memory_format=torch.contiguous_format)
        if copy:
            yi[: c1 - c0].tril_()
        ys.append(yi)
    return ys


def _gram(ys: list[Tensor], k: int) -> Tensor:
    """``Y_i'Y_i`` per block (p x k x k); a short last block is padded with zeros. Built
    without ``out=``, so forward-mode AD can differentiate it."""
    grams = [yi.T @ yi for yi in ys]
    kk = ys[-1].shape[1]
    if kk < k:
        grams[-1] = torch.nn.functional.pad(grams[-1], (0, k - kk, 0, k - kk))
    return torch.stack(grams)


def _prepare(u: Tensor, block: int, zero_identity: bool, lower: bool) -> _Blocks:
    """Blocks and ``-T_i^-1`` with ``T_i = striu(Y_i'Y_i) + diag(||Y_j||^2) / 2`` (Prop. 1 of
    Mhammedi et al. with unnormalised columns: ``H(y) = I - y (||y||^2 / 2)^-1 y'``).

    U is read once (copied only with ``lower`` when it is not stored on eq. 9's pattern); the
    Gram matrices' diagonals are the column norms. Only when one of them leaves
    [2^-32, 2^32] (or is NaN, Inf or zero) are the columns rescaled by powers of two
    (:func:`_column_scale`) and the Gram matrices recomputed. A zero diagonal (a zero column
    under ``zero_identity``, or padding) gets T_jj = 1: its column is zero, so its reflection is the identity."""
    m = u.shape[1]
    p, k = _plan(m, block)
    ys, scale = _split(u, p, k, lower, None), None
    gram = _gram(ys, k)
    r2 = gram.diagonal(dim1=-2, dim2=-1).reshape(p * k)[:m]
    if not bool(((r2 >= _R2_LO) & (r2 <= _R2_HI)).all()):  # one synchronisation; false for NaN, Inf
        scale = _column_scale(u.detach(), lower, zero_identity)  # piecewise constant: no tangent
        ys = _split(u, p, k, lower, scale)
        gram = _gram(ys, k)
    d = gram.diagonal(dim1=-2, dim2=-1)
    d.copy_(torch.where(d > 0, d * 0.5, torch.ones_like(d)))  # gram's upper triangle is now T
    neg_eye = -torch.eye(k, dtype=u.dtype, device=u.device).expand(p, k, k)
    return _Blocks(ys, torch.linalg.solve_triangular(gram, neg_eye, upper=True), k, lower, scale)


def _order(p: int, transpose: bool) -> range:
    """Blocks in the order they are applied: W X applies the last block first, W' X the first."""
    return range(p) if transpose else range(p - 1, -1, -1)


def _coefficients(bl: _Blocks, i: int, transpose: bool) -> Tensor:
    """``-R_i`` of block i (``R_i = T_i^-1``, or its transpose for ``W'``), k_i x k_i."""
    kk = bl.ys[i].shape[1]
    r = bl.ns[i, :kk, :kk]
    return r.mT if transpose else r


def _wy_forward(bl: _Blocks, x: Tensor, transpose: bool, q: Tensor | None) -> Tensor:
    """``W X`` (or ``W' X``): per block ``Z <- Z + Y_i (-F_i)`` with ``F_i = R_i Y_i' Z``, on
    rows ik.. only with ``lower`` (row slices of a row-major Z: views, no copies). With ``q``
    (p x k x B) each ``-F_i`` is written to ``q[i]`` for backward."""
    z = x.clone(memory_format=torch.contiguous_format)
    for i in _order(len(bl.ys), transpose):
        yi = bl.ys[i]
        zi = z[_rows(i, bl.k, bl.lower) :]
        a = yi.T @ zi
        r = _coefficients(bl, i, transpose)
        nf = r @ a if q is None else torch.mm(r, a, out=q[i, : yi.shape[1]])
        zi.addmm_(yi, nf)
    return z


def _wy_backward(bl: _Blocks, q: Tensor | None, c: Tensor, g: Tensor, transpose: bool) -> tuple[Tensor | None, Tensor]:
    """(dL/dU or None, dL/dX) for ``C = W X`` (or ``W' X``) and ``g = dL/dC``; dL/dU needs ``q``.

    Block by block, last applied first, with ``Z_out`` the block's output, ``G = dL/dZ_out``
    and ``-F = -R Y' Z_in`` saved by forward (``q[i]``): ``E = R' Y' G``, then
    ``dL/dZ_in = G - Y E``, the input is rebuilt as ``Z_in = Z_out + Y F`` (no per-block state
    is kept), and ``dL/dY = Y M - Z_out E' - G F'`` with ``M = striu(Phi - Phi')`` (``stril``
    for ``W'``), ``Phi = E F'``: the chain rule through ``T = striu(Y'Y) + diag(Y'Y) / 2``
    (dL/dT = E F', or F E' for W') plus the ``- Y F E'`` of writing Z_in as Z_out + Y F.
    A k x 3B buffer ``V = [F | -E | -F]`` per block makes both updates one product each with
    ``S = [Z_out | G]``: ``S += Y V[:, :2B]`` and ``dL/dY = Y M + S V[:, B:]'``. With ``lower``
    every product is restricted to the rows ik.. block i touches; dL/dU stays zero above them.
    """
    p, k, bsz = len(bl.ys), bl.k, g.shape[1]
    order = reversed(_order(p, transpose))
    if q is None:  # only dL/dX: carry G alone, the inputs are not needed
        gg = g.clone(memory_format=torch.contiguous_format)
        for i in order:
            yi, gi = bl.ys[i], gg[_rows(i, k, bl.lower) :]
            gi.addmm_(yi, _coefficients(bl, i, not transpose) @ (yi.T @ gi))
        return None, gg
    n, m = c.shape[0], sum(y.shape[1] for y in bl.ys)
    st = torch.cat([c, g], dim=1)  # S = [Z_out | G], n x 2B
    v = q.new_empty(p, k, 3 * bsz)
    torch.neg(q, out=v[:, :, :bsz])
    v[:, :, 2 * bsz :] = q
    du = c.new_zeros(n, m) if bl.lower else c.new_empty(n, m)
    tri, diag = (torch.tril, -1) if transpose else (torch.triu, 1)
    for i in order:
        yi, r0, kk = bl.ys[i], _rows(i, k, bl.lower), bl.ys[i].shape[1]
        si, vi = st[r0:], v[i, :kk]
        ne = vi[:, bsz : 2 * bsz]
        torch.mm(_coefficients(bl, i, not transpose), yi.T @ si[:, bsz:], out=ne)  # -E
        phi = ne @ vi[:, 2 * bsz :].T  # E F'
        d = torch.mm(yi, tri(phi - phi.mT, diag), out=du[r0:, i * k : i * k + kk])
        d.addmm_(si, vi[:, bsz:].T)  # - Z_out E' - G F'
        si.addmm_(yi, vi[:, : 2 * bsz])  # [Z_in | dL/dZ_in] = [Z_out + Y F | G - Y E]
    if bl.lower:
        for sq in _top_squares(du, k):
            sq.tril_()
    if bl.scale is not None:
        du *= bl.scale[0]
        du *= bl.scale[1]
    return du, st[:, bsz:]


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
        """Validate, prepare, apply the blocks; save the blocks, -T_i^-1, C and, when dL/dU is
        wanted, the coefficients -F_i (about m x B in all)."""
        bs, tr = _check_block(block), _check_flag(transpose, "transpose")
        zi, lo = _check_flag(zero_identity, "zero_identity"), _check_flag(lower, "lower")
        uu, xx = _validated(U, X)
        c, vec, bl, q = _run(uu.detach(), xx.detach(), bs, tr, zi, lo, save=bool(ctx.needs_input_grad[0]))
        n, m = U.shape
        ctx.transpose, ctx.vec, ctx.shape_u = tr, vec, (n, m)
        if bl is None:  # m = 0
            ctx.save_for_backward()
        else:
            ctx.k, ctx.lower = bl.k, bl.lower
            ctx.save_for_backward(c, q, bl.ns, bl.scale, *bl.ys)
        return c.reshape(n) if vec else c

    @staticmethod
    def backward(ctx: Any, grad_c: Tensor) -> tuple[Tensor | None, Tensor | None, None, None, None, None]:
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
            return du0, (grad_c.clone() if need_x else None), None, None, None, None
        c, q, ns, scale, *ys = ctx.saved_tensors
        g = grad_c.reshape(n, 1) if ctx.vec else grad_c
        du, dx = _wy_backward(_Blocks(ys, ns, ctx.k, ctx.lower, scale), q if need_u else None, c, g, ctx.transpose)
        return du, ((dx.reshape(n) if ctx.vec else dx) if need_x else None), None, None, None, None


def _run(
    u: Tensor, x: Tensor, block: int, transpose: bool, zero_identity: bool, lower: bool, *, save: bool
) -> tuple[Tensor, bool, _Blocks | None, Tensor | None]:
    """(C as n x B, whether X was 1-D, the prepared blocks (None for m = 0) and, with
    ``save``, the p x k x B coefficients -F_i for backward). Plain torch operations on U and
    X as given: forward-mode AD (``torch.func.jvp``, dual tensors) differentiates them."""
    n, m = u.shape
    x2, vec = _columns(x, n)
    if m == 0:
        return x2.clone(), vec, None, None
    bl = _prepare(u, block, zero_identity, lower)
    q = x2.new_empty(len(bl.ys), bl.k, x2.shape[1]) if save else None
    return _wy_forward(bl, x2, transpose, q), vec, bl, q


def _apply(u: object, x: object, block: int, transpose: bool, zero_identity: bool, lower: bool) -> Tensor:
    """The Function when a gradient is being recorded, else the forward alone (nothing saved),
    on U and X as given, so that forward-mode AD carries tangents through it."""
    uu, xx = _validated(u, x)
    if torch.is_grad_enabled() and (uu.requires_grad or xx.requires_grad):
        return cast(Tensor, HouseholderWYFunction.apply(uu, xx, block, transpose, zero_identity, lower))
    bs, tr = _check_block(block), _check_flag(transpose, "transpose")
    c, vec, _, _ = _run(uu, xx, bs, tr, zero_identity, _check_flag(lower, "lower"), save=False)
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
