"""The scaled Cayley transform of scoRNN (Helfrich, Willmott & Ye) as torch modules.

* :class:`ScaledCayleyFunction`: ``W = (I + A)^-1 (I - A) D`` from the strict upper triangle
  of a square tensor, with Theorem 3.2 as its backward pass. Autograd through
  ``torch.linalg.solve`` would differentiate the solve, the construction of A and (I - A) D
  separately; Theorem 3.2 needs only the LU factors of I + A (kept from the forward solve) and
  W: ``V = (I + A)^-T G (D + W')`` and ``dL/dp = triu(V' - V, 1)``, one adjoint LU solve and
  one matrix product, no dense Jacobian.
* :class:`ScaledCayleyRecurrent`: the n(n-1)/2 free entries of A as parameters, D a buffer,
  Sec. 4.2's initialisation, ``.weight`` through the Function and ``forward(h)`` by Sec. 4's
  three layers (D h, then (I - A) times that, then a solve with I + A).
* :class:`ModReLU` (Sec. 4.1, real form ``sign(z) ReLU(|z| + b)``) and :class:`ScoRNNCell`
  (``h_t = modReLU(U x_t + W h_{t-1})``).

Conventions: :class:`ScaledCayleyRecurrent` works on *columns* (h of shape (n,) or (n, B),
``W h``), as the paper writes it; :class:`ScoRNNCell` and :class:`ModReLU` are *batch-first*
like ``torch.nn.RNNCell`` (rows of shape (B, n), features last), so a row h of the cell maps
to ``h W'``.

Everything here works on cpu and cuda in float32 and float64; D never receives a gradient.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import torch
from torch import Tensor, nn

from orthoverify.backends.base import reject_dtype
from orthoverify.backends.torch_backend import float_tensor
from orthoverify.errors import DomainError, DTypeError, InputError, NonFiniteError, ShapeError, SingularError
from orthoverify.param import cayley
from orthoverify.param._validate import size
from orthoverify.param.cayley import ScaledCayleyInverse
from orthoverify.tolerance import THRESHOLD

__all__ = [
    "ModReLU",
    "ScaledCayleyFunction",
    "ScaledCayleyRecurrent",
    "ScoRNNCell",
    "scaled_cayley_weight",
    "skew_from_upper",
]

_FLOAT_DTYPES = {torch.float32: "float32", torch.float64: "float64"}
Seed = torch.Generator | np.random.Generator | int | None


# --------------------------------------------------------------------------- validation
def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


_check_tensor = float_tensor


def _check_finite(x: Tensor, name: str) -> None:
    if not bool(torch.isfinite(x).all()):
        raise NonFiniteError(f"{name} contains NaN or Inf")


def _check_p(p: object) -> Tensor:
    """p: an n x n float tensor, n >= 1 (finiteness is checked on W, which NaN or Inf reach)."""
    pp = _check_tensor(p, "p")
    if pp.ndim != 2 or pp.shape[0] != pp.shape[1]:
        raise ShapeError(f"p must be a square n x n matrix (its strict upper triangle holds A), got {tuple(pp.shape)}")
    if pp.shape[0] == 0:
        raise ShapeError("p must be at least 1 x 1")
    return pp


def _check_d(d: object, n: int, like: Tensor) -> Tensor:
    """D as a length-n tensor of +-1 in ``like``'s dtype and device (from a tensor or a sequence)."""
    if isinstance(d, Tensor):
        if d.is_complex() or d.dtype in (torch.bool, torch.float16, torch.bfloat16):
            raise reject_dtype(_dtype_name(d.dtype), "D", "torch")
        if d.device != like.device:
            raise InputError(f"p is on {like.device} but D is on {d.device}: move both to the same device")
        dd = d.detach()
    elif isinstance(d, (Sequence, np.ndarray)) and not isinstance(d, str):
        arr = np.asarray(d)
        if arr.dtype.kind not in "biuf":
            raise DTypeError(f"D must hold real numbers +1 or -1, got dtype {arr.dtype}")
        if arr.dtype.kind == "b":
            raise DTypeError("D has unsupported dtype bool: pass +1 and -1, not True and False")
        dd = torch.as_tensor(arr.astype(np.float64), device=like.device)
    else:
        raise DTypeError(f"D must be a torch.Tensor or a sequence of +-1, got {type(d).__name__}")
    if dd.ndim != 1 or dd.shape[0] != n:
        raise ShapeError(f"D must be a 1-D tensor of {n} signs, got shape {tuple(dd.shape)}")
    bad = (dd != 1) & (dd != -1)
    if bool(bad.any()):
        i = int(torch.nonzero(bad)[0, 0])
        raise DomainError(f"D must have entries +1 or -1 only; entry {i} is {float(dd[i])}")
    return dd.to(dtype=like.dtype)


def _signs_from(n: int, d: object, rho: int | None) -> Tensor:
    """D (float64, cpu) from explicit signs, from rho (rho leading -1 entries), or all +1."""
    if d is not None and rho is not None:
        raise InputError("give D or rho, not both")
    if rho is not None:
        return torch.tensor(cayley.signs_with_rho(n, rho), dtype=torch.float64)
    if d is None:
        return torch.ones(n, dtype=torch.float64)
    like = torch.empty(0, dtype=torch.float64)
    if isinstance(d, Tensor):
        d = d.detach().cpu()
    return _check_d(d, n, like)


def _module_dtype(dtype: torch.dtype | None, what: str) -> torch.dtype:
    dt = dtype if dtype is not None else torch.get_default_dtype()
    if dt not in _FLOAT_DTYPES:
        raise reject_dtype(_dtype_name(dt), what, "torch")
    return dt


# --------------------------------------------------------------------------- the transform
def skew_from_upper(p: Tensor) -> Tensor:
    """``A = triu(p, 1) - triu(p, 1)'``: the skew-symmetric matrix whose free entries are p's
    strict upper triangle (p's diagonal and lower triangle are ignored; differentiable)."""
    pp = _check_tensor(p, "p")
    if pp.ndim != 2 or pp.shape[0] != pp.shape[1]:
        raise ShapeError(f"p must be a square n x n matrix, got {tuple(pp.shape)}")
    up = pp.triu(1)
    return up - up.transpose(0, 1)


def _eye_like(n: int, like: Tensor) -> Tensor:
    return torch.eye(n, dtype=like.dtype, device=like.device)


class ScaledCayleyFunction(torch.autograd.Function):
    """``W = (I + A)^-1 (I - A) D`` with A = triu(p, 1) - triu(p, 1)' and Theorem 3.2's backward.

    ``apply(p, d)``: p is n x n (float32 or float64; only its strict upper triangle is read), d a
    length-n tensor (or sequence) of +-1. The solve is ``torch.linalg.lu_factor_ex`` followed by
    ``torch.linalg.lu_solve``, which is how ``torch.linalg.solve`` solves (the same W; bitwise
    on cpu with torch 2.13); the factors are kept for backward. Backward returns ``triu(V' - V, 1)`` with
    ``V = (I + A)^-T G (D + W')``, G = dL/dW: the gradient over the n(n-1)/2 free entries
    (Theorem 3.2 differentiates along A_ij and A_ji = -A_ij together), zero elsewhere; D gets
    None. Saved for backward: the LU factors and pivots of I + A, W and D (O(n^2)).
    Double backward and nested forward mode are refused (NotImplementedError) rather than silently
    incomplete.
    """

    @staticmethod
    def forward(p: Tensor, d: Any) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Solve (I + A) W = (I - A) D once; raises orthoverify errors on bad inputs. Returns W and,
        for backward and forward mode, the LU factors, pivots and signs (not differentiable)."""
        pp = _check_p(p)
        n = pp.shape[0]
        dd = _check_d(d, n, pp)
        a = skew_from_upper(pp.detach())
        eye = _eye_like(n, pp)
        lu, piv, info = torch.linalg.lu_factor_ex(eye + a)
        w = torch.linalg.lu_solve(lu, piv, (eye - a) * dd)
        if bool(info.ne(0).any()) or not bool(torch.isfinite(w).all()):  # one check, on W
            _check_finite(a, "p (strict upper triangle)")
            # else overflow: in exact arithmetic I + A has singular values >= 1 for skew A
            raise SingularError(
                f"W = (I + A)^-1 (I - A) D overflowed: the solve with I + A gave NaN or Inf (max|a_ij| = "
                f"{float(a.abs().max()):.3g} is too large for {_dtype_name(pp.dtype)})"
            )
        return w, lu, piv, dd

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: tuple[Tensor, ...]) -> None:
        w, lu, piv, dd = output
        ctx.mark_non_differentiable(lu, piv, dd)
        ctx.save_for_backward(lu, piv, w, dd)
        ctx.save_for_forward(lu, piv, w, dd)

    @staticmethod
    def backward(ctx: Any, grad_w: Tensor, *_: Any) -> tuple[Tensor | None, None]:
        """Theorem 3.2: ``triu(V' - V, 1)`` with V from one adjoint solve on the saved LU factors."""
        if torch.is_grad_enabled():  # create_graph=True asked for a graph of this backward
            raise NotImplementedError(
                "ScaledCayleyFunction does not support double backward (create_graph=True): its backward "
                "is Theorem 3.2's closed form on saved LU factors, not recorded for differentiation; for "
                "higher derivatives differentiate torch.linalg.solve(I + A, (I - A) D) with autograd"
            )
        if not ctx.needs_input_grad[0]:
            return None, None
        lu, piv, w, dd = ctx.saved_tensors
        rhs = torch.addmm(grad_w * dd, grad_w, w.transpose(0, 1))  # G (D + W') = G D + G W'
        v = torch.linalg.lu_solve(lu, piv, rhs, adjoint=True)  # (I + A)^-T G (D + W')
        return (v.transpose(0, 1) - v).triu(1), None

    @staticmethod
    def jvp(ctx: Any, dp: Tensor | None, _dd: Any) -> tuple[Tensor | None, None, None, None]:
        """Forward mode: ``dW = -(I + A)^-1 dA (W + D)`` (differentiate (I + A) W = (I - A) D) with
        dA = triu(dp, 1) - triu(dp, 1)', on the saved LU factors."""
        if _nested_forward_mode():
            raise NotImplementedError(
                "ScaledCayleyFunction does not support nested forward mode (torch.func.jvp of a jvp): torch.func "
                "does not differentiate a custom Function's jvp rule, so a second derivative would silently be "
                "zero; for higher derivatives differentiate torch.linalg.lu_solve(I + A, (I - A) D) directly"
            )
        lu, piv, w, dd = ctx.saved_tensors
        if dp is None:
            return None, None, None, None
        da = skew_from_upper(dp)
        dw = -torch.linalg.lu_solve(lu, piv, torch.addmm(da * dd, da, w))  # dA W + dA D
        return dw, None, None, None


def _nested_forward_mode() -> bool:
    """True inside two or more torch.func forward-mode transforms (jvp of a jvp), where torch 2.13
    runs a custom Function's jvp rule without differentiating it (measured: the second derivative
    of x -> x^3 through such a Function comes back 0, not 6x)."""
    stack_of = getattr(torch._C._functorch, "get_interpreter_stack", None)
    stack = stack_of() if stack_of is not None else None
    return sum("Jvp" in str(i.key()) for i in stack or ()) >= 2


def scaled_cayley_weight(p: Tensor, d: Any) -> Tensor:
    """``W = (I + A)^-1 (I - A) D`` through :class:`ScaledCayleyFunction` (A from p's strict
    upper triangle, d the signs of D)."""
    return cast(Tensor, ScaledCayleyFunction.apply(p, d)[0])


# --------------------------------------------------------------------------- modules
def _upper_from_vector(v: Tensor, n: int, rows: Tensor, cols: Tensor) -> Tensor:
    """The n x n matrix with v on its strict upper triangle (row-major order), zero elsewhere."""
    p = v.new_zeros(n, n)
    return p.index_put((rows, cols), v)


class ScaledCayleyRecurrent(nn.Module):
    """The recurrent matrix ``W = (I + A)^-1 (I - A) D`` of scoRNN, parametrised by A's free entries.

    Parameter ``a_upper``: a vector of length n(n-1)/2 holding A's strict upper triangle in
    row-major order (``torch.triu_indices(n, n, 1)``), so the module has exactly n(n-1)/2
    trainable numbers. Buffer ``d``: the signs of D (from ``d``, from ``rho`` = number of -1
    entries placed first, or all +1); it is never trained (scoRNN treats rho as a
    hyperparameter). ``init="paper"`` uses Sec. 4.2 (2 x 2 blocks [[0, s_j], [-s_j, 0]],
    s_j = sqrt((1 - cos t_j)/(1 + cos t_j)), t_j uniform on [0, pi/2], so with D = I the
    eigenvalues of W are e^{+-i t_j} and |a_ij| <= 1); ``init="zeros"`` gives A = 0 (W = D).
    ``generator`` makes the init reproducible: a torch.Generator, a NumPy Generator or an int
    seed (NumPy); None draws from torch's global generator. The angles used are kept in
    ``angles`` (float64, None for ``"zeros"``).

    ``forward(h)`` acts on columns: h of shape (n,) or (n, B) gives W h of the same shape.
    """

    d: Tensor
    rows: Tensor
    cols: Tensor

    def __init__(
        self,
        n: int,
        *,
        d: Any = None,
        rho: int | None = None,
        init: str = "paper",
        generator: Seed = None,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        n = size(n, "n", minimum=1)
        if init not in ("paper", "zeros"):
            raise InputError(f"init must be 'paper' or 'zeros', got {init!r}")
        dt = _module_dtype(dtype, "ScaledCayleyRecurrent")
        self.n = n
        self.init = init
        self.angles: Tensor | None = None
        self.inverse: ScaledCayleyInverse | None = None
        rows, cols = torch.triu_indices(n, n, 1, device=device)
        self.register_buffer("rows", rows, persistent=False)
        self.register_buffer("cols", cols, persistent=False)
        self.register_buffer("d", _signs_from(n, d, rho).to(device=device, dtype=dt))
        self.a_upper = nn.Parameter(torch.zeros(cayley.parameter_count(n), device=device, dtype=dt))
        self.reset_parameters(generator)

    @property
    def num_parameters(self) -> int:
        """n(n-1)/2: the free entries of a skew-symmetric n x n matrix."""
        return cayley.parameter_count(self.n)

    @property
    def rho(self) -> int:
        """The number of -1 entries of D."""
        return int((self.d < 0).sum())

    def reset_parameters(self, generator: Seed = None) -> None:
        """Sec. 4.2's block-diagonal A (or A = 0 for ``init="zeros"``)."""
        if self.init == "zeros":
            with torch.no_grad():
                self.a_upper.zero_()
            self.angles = None
            return
        k = self.n // 2
        if isinstance(generator, torch.Generator):
            t = torch.rand(k, generator=generator, dtype=torch.float64) * (math.pi / 2)
            angles = t.numpy()
        elif isinstance(generator, (np.random.Generator, int)):
            rng = generator if isinstance(generator, np.random.Generator) else np.random.default_rng(generator)
            angles = cayley.init_angles(rng, self.n)
        elif generator is None:
            angles = (torch.rand(k, dtype=torch.float64) * (math.pi / 2)).numpy()
        else:
            raise InputError(
                f"generator must be a torch.Generator, a numpy Generator, an int seed or None, "
                f"got {type(generator).__name__}"
            )
        a = np.asarray(cayley.init_blocks(cayley.init_s(angles), self.n, backend="numpy-float64"), dtype=np.float64)
        self.angles = torch.as_tensor(angles, dtype=torch.float64)
        self._set_a(torch.as_tensor(a))

    def _set_a(self, a: Tensor) -> None:
        """Copy the strict upper triangle of a skew A into the parameter."""
        with torch.no_grad():
            self.a_upper.copy_(a.to(self.a_upper.device)[self.rows, self.cols].to(self.a_upper.dtype))

    @classmethod
    def from_orthogonal(
        cls,
        w: Any,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
        threshold: float = THRESHOLD,
    ) -> ScaledCayleyRecurrent:
        """The module whose ``.weight`` is the orthogonal ``w`` (a tensor or a NumPy array), via
        :func:`~orthoverify.param.cayley.scaled_cayley_inverse` in w's own arithmetic (so
        every |a_ij| <= 1, certified). The inverse's result is kept in ``inverse``. dtype and
        device default to w's (cpu for a NumPy array; float64 unless it is float32). Raises
        :class:`~orthoverify.errors.NotOrthogonalError` if w is not orthogonal."""
        if isinstance(w, Tensor):
            _check_tensor(w, "W")
            dt = dtype if dtype is not None else w.dtype
            dev = device if device is not None else w.device
            src: Any = w.detach()
        else:
            single = isinstance(w, np.ndarray) and w.dtype == np.float32
            dt = dtype if dtype is not None else (torch.float32 if single else torch.float64)
            dev = device if device is not None else "cpu"
            src = w
        if isinstance(src, Tensor) and src.ndim == 2 and src.shape[0] != src.shape[1]:
            raise ShapeError(f"W must be square, got shape {tuple(src.shape)}")
        inv = cayley.scaled_cayley_inverse(src, threshold=threshold)
        n = int(inv.a.shape[0])
        module = cls(n, d=list(inv.d), init="zeros", device=dev, dtype=dt)
        a = inv.a if isinstance(inv.a, Tensor) else torch.as_tensor(np.asarray(inv.a, dtype=np.float64))
        module._set_a(a.detach().to(torch.float64).cpu())
        module.inverse = inv
        return module

    def upper(self) -> Tensor:
        """The n x n matrix p with A's free entries on its strict upper triangle (differentiable)."""
        return _upper_from_vector(self.a_upper, self.n, self.rows, self.cols)

    def skew(self) -> Tensor:
        """A = triu(p, 1) - triu(p, 1)' (differentiable)."""
        up = self.upper()
        return up - up.transpose(0, 1)

    @property
    def weight(self) -> Tensor:
        """W = (I + A)^-1 (I - A) D through :class:`ScaledCayleyFunction` (Theorem 3.2's backward)."""
        return scaled_cayley_weight(self.upper(), self.d)

    def forward(self, h: Tensor) -> Tensor:
        """``W h`` by Sec. 4's three layers: D h, then (I - A) D h, then a solve with I + A.

        h: (n,) or (n, B) (columns), same dtype and device as the module. Gradients flow by
        plain autograd through the solve."""
        hh = _check_tensor(h, "h")
        if hh.dtype != self.a_upper.dtype:
            raise DTypeError(
                f"h is {_dtype_name(hh.dtype)} but the module is {_dtype_name(self.a_upper.dtype)}: "
                "pass h in the module's dtype"
            )
        if hh.device != self.a_upper.device:
            raise InputError(f"h is on {hh.device} but the module is on {self.a_upper.device}")
        vec = hh.ndim == 1
        if vec and hh.shape[0] != self.n:
            raise ShapeError(f"h must have length {self.n}, got {hh.shape[0]}")
        if not vec and (hh.ndim != 2 or hh.shape[0] != self.n):
            raise ShapeError(f"h must have shape ({self.n},) or ({self.n}, B) (columns), got {tuple(hh.shape)}")
        cols = hh.reshape(self.n, 1) if vec else hh
        a = self.skew()
        h1 = cols * self.d.reshape(self.n, 1)  # layer 1: D h
        h2 = h1 - a @ h1  # layer 2: (I - A) D h
        h3 = torch.linalg.solve(_eye_like(self.n, a) + a, h2)  # layer 3: (I + A)^-1 (I - A) D h
        if not bool(torch.isfinite(h3).all()):  # one check on the output; diagnose only on failure
            _check_finite(hh.detach(), "h")
            _check_finite(self.a_upper.detach(), "the parameter a_upper")
            raise SingularError(
                f"W h overflowed: the solve with I + A gave NaN or Inf (max|a_ij| = "
                f"{float(self.a_upper.detach().abs().max()):.3g}, max|h| = {float(hh.detach().abs().max()):.3g})"
            )
        return h3.reshape(self.n) if vec else h3

    def extra_repr(self) -> str:
        return f"n={self.n}, rho={self.rho}, init={self.init!r}"


class ModReLU(nn.Module):
    """Real modReLU (Sec. 4.1): ``sign(z) ReLU(|z| + b)`` elementwise, b a trainable bias of size n.

    z has shape (..., n) (features last, batch-first like torch.nn). ``bias`` is the initial b
    (a length-n tensor or sequence; zeros by default). With b < 0 it zeroes |z| < -b and shrinks
    the rest toward 0 by |b|, keeping the sign; with b >= 0 it pushes |z| out by b.
    """

    def __init__(
        self,
        n: int,
        bias: Any = None,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        n = size(n, "n", minimum=1)
        dt = _module_dtype(dtype, "ModReLU")
        self.n = n
        if bias is None:
            b0 = torch.zeros(n, dtype=dt, device=device)
        else:
            if isinstance(bias, Tensor):
                _check_tensor(bias, "bias")
                b0 = bias.detach().to(dtype=dt, device=device).clone()
            else:
                b0 = torch.as_tensor(np.asarray(bias, dtype=np.float64), dtype=dt, device=device)
            if b0.shape != (n,):
                raise ShapeError(f"bias must have shape ({n},), got {tuple(b0.shape)}")
            _check_finite(b0, "bias")
        self.bias = nn.Parameter(b0)

    def forward(self, z: Tensor) -> Tensor:
        """``sign(z) * relu(|z| + b)`` with b broadcast along the last dimension of z."""
        zz = _check_tensor(z, "z")
        if zz.ndim == 0 or zz.shape[-1] != self.n:
            raise ShapeError(f"z must have shape (..., {self.n}), got {tuple(zz.shape)}")
        out = torch.sign(zz) * torch.relu(zz.abs() + self.bias)
        if not bool(torch.isfinite(out).all()):
            _check_finite(zz.detach(), "z")
            _check_finite(self.bias.detach(), "the ModReLU bias")
            raise NonFiniteError("modReLU overflowed: |z| + b is Inf")
        return out

    def extra_repr(self) -> str:
        return f"n={self.n}"


class ScoRNNCell(nn.Module):
    """One scoRNN step (Sec. 4.1): ``h_t = modReLU(U x_t + W h_{t-1})``.

    Batch-first rows: x of shape (B, input_size) and h of shape (B, n) give h_t of shape (B, n);
    for a row vector that is ``modReLU(x U' + h W')`` (``U`` is ``nn.Linear(input_size, n,
    bias=False)``, ``U.weight`` n x input_size). Unbatched x (input_size,) with h (n,) works too.
    The recurrent bias is the ModReLU bias (the paper's form); W is applied by Sec. 4's three
    layers of :class:`ScaledCayleyRecurrent` (on the transposed rows). h = None starts from 0.
    Keyword arguments d, rho, init, generator go to :class:`ScaledCayleyRecurrent`.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        d: Any = None,
        rho: int | None = None,
        init: str = "paper",
        generator: Seed = None,
        bias: Any = None,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        input_size = size(input_size, "input_size", minimum=1)
        dt = _module_dtype(dtype, "ScoRNNCell")
        self.input_size, self.hidden_size = input_size, hidden_size
        self.U = nn.Linear(input_size, hidden_size, bias=False, device=device, dtype=dt)
        self.recurrent = ScaledCayleyRecurrent(
            hidden_size, d=d, rho=rho, init=init, generator=generator, device=device, dtype=dt
        )
        self.modrelu = ModReLU(hidden_size, bias, device=device, dtype=dt)

    def forward(self, x: Tensor, h: Tensor | None = None) -> Tensor:
        """h_t (B, n) from x_t (B, input_size) and h_{t-1} (B, n); 1-D x and h for one sequence."""
        xx = _check_tensor(x, "x")
        dt = self.U.weight.dtype
        if xx.dtype != dt:
            raise DTypeError(f"x is {_dtype_name(xx.dtype)} but the cell is {_dtype_name(dt)}")
        if xx.ndim not in (1, 2) or xx.shape[-1] != self.input_size:
            raise ShapeError(f"x must have shape (B, {self.input_size}) or ({self.input_size},), got {tuple(x.shape)}")
        batch_shape = xx.shape[:-1]
        if h is None:
            hh = xx.new_zeros((*batch_shape, self.hidden_size))
        else:
            hh = _check_tensor(h, "h")
            if hh.dtype != dt:
                raise DTypeError(f"h is {_dtype_name(hh.dtype)} but the cell is {_dtype_name(dt)}")
            if hh.shape != (*batch_shape, self.hidden_size):
                raise ShapeError(
                    f"h must have shape {(*batch_shape, self.hidden_size)} to match x {tuple(xx.shape)}, "
                    f"got {tuple(hh.shape)}"
                )
        rows = hh.reshape(-1, self.hidden_size)
        wh = self.recurrent(rows.transpose(0, 1)).transpose(0, 1)  # (W h')' = h W'
        ux = self.U(xx).reshape(-1, self.hidden_size)
        if not bool(torch.isfinite(ux).all()):
            _check_finite(xx.detach(), "x")
            _check_finite(self.U.weight.detach(), "the input weight U")
            raise NonFiniteError("U x overflowed: it contains Inf")
        z = ux + wh
        return self.modrelu(z).reshape(*batch_shape, self.hidden_size)

    def extra_repr(self) -> str:
        return f"input_size={self.input_size}, hidden_size={self.hidden_size}"
