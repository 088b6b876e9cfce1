"""Algorithm 1 of Mhammedi et al. (2017) as a torch ``autograd.Function``.

Autograd through the dense product ``H_n(u_n) ... H_{n-m+1}(u_{n-m+1}) h`` (or through the
sequential loop) keeps every intermediate alive until the backward pass. Algorithm 1 needs
much less: with the ``"store"`` strategy the backward pass reads only the matrix H of the local
forward propagation (n x (m+1) x B) and h~ (m x B), the assumption behind Table 2's BP count;
with ``"recompute"`` it keeps only U, the norms N and ``C = W h`` (O(nB) beyond U) and
regenerates ``H_{*,k+1} = H(U_{*,k}) H_{*,k}`` one reflection at a time, the "generate the
matrices H locally at each BP step" variant of Sec. 4.2 with its ``(11n - 3m + 5)m`` flops.

The loops themselves are not written here: forward and backward call the generic
:func:`~orthoverify.param.householder.algorithm1_forward` and
:func:`~orthoverify.param.householder.algorithm1_backward` with the torch backend of the
inputs' dtype and device, so cpu and cuda run the same code.

The gradient returned for U is the full n x m gradient of Algorithm 1's line 14 for a dense
U, upper triangle included. Algorithm 1 is reverse-mode differentiation of the sequential
product, so this equals autograd through :func:`~orthoverify.param.householder.reflector_product`
for any U, not only one with eq. 9's zero pattern. The paper (Sec. 5) sets the upper
triangle of dL/dU to zero after each gradient computation to keep eq. 9's shape;
:class:`HouseholderLinear` does the same by masking U.
"""

from __future__ import annotations

from typing import Any, Literal, cast

import torch
from torch import Tensor, nn

from orthoverify.backends import Backend, get_backend
from orthoverify.backends.base import reject_dtype
from orthoverify.backends.torch_backend import float_tensor
from orthoverify.errors import DomainError, DTypeError, InputError, ShapeError
from orthoverify.param._validate import columns_pow2, columns_unscale, vector_or_columns
from orthoverify.param.householder import (
    Algorithm1Forward,
    _check_u,
    algorithm1_backward,
    algorithm1_forward,
)

__all__ = ["STRATEGIES", "Algorithm1Function", "HouseholderLinear", "Strategy", "householder_apply"]

Strategy = Literal["store", "recompute"]
STRATEGIES: tuple[str, ...] = ("store", "recompute")
"""``"store"``: save H and h~ (O(nmB)); ``"recompute"``: save C and regenerate H (O(nB))."""

_FLOAT_DTYPES = {torch.float32: "float32", torch.float64: "float64"}


# --------------------------------------------------------------------------- validation
def _check_strategy(strategy: object) -> Strategy:
    if strategy not in STRATEGIES:
        raise InputError(f"strategy must be one of {', '.join(map(repr, STRATEGIES))}, got {strategy!r}")
    return cast(Strategy, strategy)


_check_tensor = float_tensor


def _torch_backend(x: Tensor) -> Backend:
    """The torch backend of ``x``'s dtype and device (``cuda:1`` stays ``cuda:1``)."""
    return get_backend(f"torch-{_FLOAT_DTYPES[x.dtype]}", str(x.device))


def _check_inputs(u: object, h: object) -> tuple[Tensor, Tensor]:
    """Types, dtypes and devices of U and h (cheap: no data is read)."""
    uu, hh = _check_tensor(u, "U"), _check_tensor(h, "h")
    if uu.dtype != hh.dtype:
        raise DTypeError(
            f"U is {str(uu.dtype).replace('torch.', '')} but h is {str(hh.dtype).replace('torch.', '')}: "
            "pass both in the same dtype"
        )
    if uu.device != hh.device:
        raise InputError(f"U is on {uu.device} but h is on {hh.device}: move both to the same device")
    return uu, hh


def _validated(u: object, h: object) -> tuple[Backend, Tensor, Tensor, bool, list[Any]]:
    """Backend, U (n x m, finite, nonzero columns, 1 <= n, m <= n - 1), h as n x B, whether h
    was 1-D, and the exact power-of-two factors of U's columns (``columns_pow2``: a column far
    from unit size is rescaled, which leaves its reflection unchanged and keeps U'U finite)."""
    uu, hh = _check_inputs(u, h)
    b = _torch_backend(uu)
    if uu.ndim == 2 and uu.shape[0] == 0:
        raise ShapeError("U has no rows: n must be at least 1")
    uu = _check_u(b, uu)  # ShapeError, NonFiniteError, DomainError (m >= n), ZeroVectorError
    h2, vec = vector_or_columns(b, hh, "h", uu.shape[0])  # ShapeError, NonFiniteError
    uu, fu = columns_pow2(b, uu)
    return b, uu, h2, vec, fu


def _norms_tensor(norms: list[Any], like: Tensor) -> Tensor:
    """Algorithm 1's N (a list of 1 x 1 tensors) as one length-m tensor, for saving."""
    if not norms:
        return like.new_zeros(0)
    return torch.cat([nk.reshape(1) for nk in norms])


# --------------------------------------------------------------------------- autograd
class Algorithm1Function(torch.autograd.Function):
    """``C = W h`` with Algorithm 1's local forward and backward propagations.

    ``apply(U, h, strategy)``: U is n x m (m <= n - 1), h is (n,) or (n, B); returns C of h's
    shape. Backward gives the full dense dL/dU (n x m, summed over the batch) and dL/dh.
    Double backward is not supported: backward raises NotImplementedError under create_graph=True
    rather than return a gradient that silently lacks second-order terms.
    """

    @staticmethod
    def forward(ctx: Any, U: Tensor, h: Tensor, strategy: str = "store") -> Tensor:
        """Lines 4-10 and 16 of Algorithm 1; saves what ``strategy`` needs for lines 11-15."""
        strat = _check_strategy(strategy)
        b, uu, h2, vec, fu = _validated(U, h)
        ctx.fu = fu
        n, m = uu.shape
        fwd = algorithm1_forward(uu, h2, b)
        c = fwd.big_h[0] if m else h2.clone()  # with m = 0, W = I: never return the input itself
        norms = _norms_tensor(fwd.norms, uu)
        if strat == "store":
            big_h = torch.stack(fwd.big_h, dim=1)  # H: n x (m+1) x B
            h_tilde = torch.cat(fwd.h_tilde, dim=0) if m else h2.new_zeros((0, h2.shape[1]))  # m x B
            ctx.save_for_backward(uu, norms, big_h, h_tilde)
        else:
            ctx.save_for_backward(uu, norms, c)
        ctx.strategy = strat
        ctx.vec = vec
        return c.reshape(n) if vec else c

    @staticmethod
    def backward(ctx: Any, grad_c: Tensor) -> tuple[Tensor | None, Tensor | None, None]:
        """Lines 11-15, 17 and 18 of Algorithm 1 on the saved (or regenerated) H."""
        if torch.is_grad_enabled():  # create_graph=True: a graph of this backward was asked for
            raise NotImplementedError(
                "Algorithm1Function does not support double backward (create_graph=True): its backward "
                "pass is Algorithm 1's BP loop, which is not recorded for differentiation; for higher "
                "derivatives differentiate reflector_product(U) @ h or compact_wy(U) @ h with autograd"
            )
        saved = ctx.saved_tensors
        uu, norms = saved[0], saved[1]
        n, m = uu.shape
        b = _torch_backend(uu)
        g = grad_c.reshape(n, 1) if ctx.vec else grad_c
        nk = list(norms.unbind(0))
        if ctx.strategy == "store":
            big_h, h_tilde = saved[2], saved[3]
            fwd = Algorithm1Forward(list(big_h.unbind(1)), [h_tilde[k : k + 1] for k in range(m)], nk)
            dl_dh, dl_du = algorithm1_backward(uu, g, b, fwd)
        else:
            dl_dh, dl_du = algorithm1_backward(uu, g, b, None, c=saved[2], norms=nk)
        dl_du = columns_unscale(b, dl_du, ctx.fu)  # the gradient at U, not at the rescaled U
        need_u, need_h = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        return (dl_du if need_u else None, (dl_dh.reshape(n) if ctx.vec else dl_dh) if need_h else None, None)


def householder_apply(U: Tensor, h: Tensor, *, strategy: Strategy = "store") -> Tensor:
    """``C = W h = H(U_{*,1}) ... H(U_{*,m}) h`` through :class:`Algorithm1Function`.

    When no gradient is being recorded only the forward propagation runs and nothing is saved.
    """
    strat = _check_strategy(strategy)
    uu, hh = _check_inputs(U, h)
    if torch.is_grad_enabled() and (uu.requires_grad or hh.requires_grad):
        return cast(Tensor, Algorithm1Function.apply(uu, hh, strat))
    b, u2, h2, vec, _ = _validated(uu, hh)
    c = algorithm1_forward(u2, h2, b).big_h[0]
    if u2.shape[1] == 0:
        c = h2.clone()
    return c.reshape(u2.shape[0]) if vec else c


# --------------------------------------------------------------------------- module
class HouseholderLinear(nn.Module):
    """``x -> W x`` for each row x of a (..., n) input, W the product of m Householder reflections.

    The parameter ``U`` (n x m, m <= n - 1) holds ``(u_n | ... | u_{n-m+1})``; forward uses
    ``U * mask`` with eq. 9's zero pattern (column j zero above row j), so the entries above the
    pattern never reach W and their gradient is zero, as the paper enforces after each step.
    """

    mask: Tensor

    def __init__(
        self,
        n: int,
        m: int,
        *,
        strategy: Strategy = "store",
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        if n < 1:
            raise ShapeError(f"n must be at least 1, got {n}")
        if not 0 <= m <= n - 1:
            raise DomainError(f"m = {m} reflections for n = {n}: Algorithm 1 needs 0 <= m <= n - 1")
        dtype = dtype if dtype is not None else torch.get_default_dtype()
        if dtype not in _FLOAT_DTYPES:
            raise reject_dtype(str(dtype).replace("torch.", ""), "HouseholderLinear", "torch")
        self.n, self.m = n, m
        self.strategy: Strategy = _check_strategy(strategy)
        self.U = nn.Parameter(torch.empty(n, m, device=device, dtype=dtype))
        self.register_buffer("mask", torch.ones(n, m, device=device, dtype=dtype).tril(), persistent=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Standard normal entries on eq. 9's pattern (nonzero columns with probability 1)."""
        with torch.no_grad():
            self.U.normal_()
            self.U.mul_(self.mask)

    def masked_u(self) -> Tensor:
        """U with eq. 9's zero pattern enforced."""
        return self.U * self.mask

    def forward(self, x: Tensor) -> Tensor:
        """``W x`` for every row of x (shape (..., n)), like ``nn.Linear`` with weight W."""
        x = _check_tensor(x, "input")
        if x.ndim == 0 or x.shape[-1] != self.n:
            raise ShapeError(f"input must have shape (..., {self.n}), got {tuple(x.shape)}")
        cols = x.reshape(-1, self.n).transpose(0, 1)  # n x B
        c = householder_apply(self.masked_u(), cols, strategy=self.strategy)
        return c.transpose(0, 1).reshape(x.shape)

    def weight(self) -> Tensor:
        """The dense n x n matrix W (for inspection; forward never forms it)."""
        eye = torch.eye(self.n, dtype=self.U.dtype, device=self.U.device)
        return householder_apply(self.masked_u(), eye, strategy=self.strategy)

    def extra_repr(self) -> str:
        return f"n={self.n}, m={self.m}, strategy={self.strategy!r}"
