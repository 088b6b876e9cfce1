"""Gradients through an unrolled RNN with orthogonal or unitary W (Arjovsky, Shah & Bengio, Sec. 1).

Eq. 1-2: ``z_{k+1} = W_k h_k + V x_{k+1} + c`` and ``h_{k+1} = sigma(z_{k+1})``, k = 0..T-1, with a
cost C whose gradient at the last state is ``dC/dh_T = g`` (every cost has some g there, and dC/dh_t
for t < T depends on C only through it, so ``C = g'h_T`` loses nothing). Gradients are columns:
``dC/dh_t = (dh_T/dh_t)' g``.

A complex RNN runs on its real twin (Sec. 3.1): ``W_hat = [[A, -B], [B, A]]`` (see
:func:`orthoverify.param.unitary.embed_matrix`) acting on ``(Re h, Im h)`` in R^2n, so complex unit
i is the coordinate pair (i, i + n). Activations:

* ``"relu"``: ``(x + |x|) / 2`` elementwise (on a twin: on real and imaginary parts separately).
  Its slope at 0 is taken as 1/2, the value autograd gives for this formula; any slope in [0, 1]
  keeps every bound below.
* ``"modrelu"``: Sec. 3.2 on each complex unit, ``ReLU(|z| + b) z / |z|`` with bias b per unit.
  Where |z| + b > 0 its real 2 x 2 Jacobian is ``I + (b / |z|)(I - u u')``, u = z / |z|: eigenvalue 1
  along z (radial) and ``1 + b / |z|`` across it (tangential). At ``|z| + b = 0`` the radial slope is
  1/2 (as for ReLU); at z = 0 the map is the identity near 0 when b = 0, zero when b < 0, and
  undefined when b > 0 (DomainError).

Three ways to the gradients, all on one forward pass (:func:`unroll`): :func:`backward`, the
recursion ``dC/dh_k = W_k' J(z_{k+1})' dC/dh_{k+1}`` written against the backend protocol (so it
runs in float, at 50 or 100 digits, and exactly); :func:`autograd_gradients` (torch); and
:func:`exact_gradients`, SymPy's derivative of C for piecewise-linear activations. The products of
eq. 3, as printed and corrected, are :func:`chain_rule_product` and :func:`chain_rule_gradient`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from orthoverify.backends import Array, Backend, Scalar
from orthoverify.errors import BackendError, DomainError, NotOrthogonalError, ShapeError
from orthoverify.param._validate import BackendLike, resolve
from orthoverify.param.unitary import CArray, polish_unitary
from orthoverify.tolerance import THRESHOLD

__all__ = [
    "Activation",
    "Form",
    "Reading",
    "Unrolled",
    "activation_jacobian",
    "activation_norm",
    "activation_vjp",
    "autograd_gradients",
    "backward",
    "chain_rule_gradient",
    "chain_rule_gradients",
    "chain_rule_product",
    "chain_rule_products",
    "exact_gradients",
    "forward_from",
    "gradient_norms",
    "gradient_scales",
    "modrelu_twin",
    "unroll",
]

Activation = Literal["relu", "modrelu"]
Form = Literal["printed", "corrected"]
Reading = Literal["printed_row", "printed_column", "corrected"]


_F32_EPS = 2.0**-24


# =========================================================================== the forward pass
@dataclass(frozen=True)
class Unrolled:
    """One forward pass: ``ws[k] = W_k``, ``zs[k] = z_{k+1}`` (k = 0..T-1), ``hs[t] = h_t`` (t = 0..T).

    With ``tracked`` (torch only) every h_t is in one autograd graph and the z's are detached."""

    backend: Backend
    ws: tuple[Array, ...]
    v: Array
    xs: Array
    c: Array
    zs: tuple[Array, ...]
    hs: tuple[Array, ...]
    activation: Activation
    bias: Array | None
    tracked: bool = False

    @property
    def T(self) -> int:
        """The number of steps (the paper's T)."""
        return len(self.zs)

    @property
    def N(self) -> int:
        """The state dimension (2n on the twin of a complex RNN)."""
        return int(self.hs[0].shape[0])


def _signs(b: Backend, x: Array) -> np.ndarray:
    """Elementwise signs -1, 0, 1 decided in b's arithmetic (exactly on exact backends)."""
    return np.rint(b.to_numpy(b.sign(x))).astype(int).reshape(-1)


def _mask(b: Backend, flags: np.ndarray) -> Array:
    """A 0/1 array of b (integers, so exact backends stay exact)."""
    return b.asarray([int(f) for f in np.asarray(flags).reshape(-1)], name="mask")


def _units(b: Backend, z: Array, bias: Array) -> tuple[Array, Array, Array, Array, np.ndarray, np.ndarray]:
    """modReLU bookkeeping per unit: (x, y, safe |z|^2, safe |z|, zero units, bias signs);
    'safe' puts 1 where z = 0, so nothing divides by zero and autograd sees no sqrt at 0."""
    n = z.shape[0] // 2
    x, y = z[:n], z[n:]
    r2 = x * x + y * y
    zero = _signs(b, r2) == 0
    bs = _signs(b, bias)
    bad = np.flatnonzero(zero & (bs > 0))
    if bad.size:
        i = int(bad[0])
        raise DomainError(f"modReLU is undefined at z_{i} = 0 with bias b_{i} > 0: (|z| + b) z / |z| divides by 0")
    safe2 = r2 + _mask(b, zero)
    return x, y, safe2, b.sqrt(safe2), zero, bs


def modrelu_twin(b: Backend, z: Array, bias: Array) -> Array:
    """modReLU (Sec. 3.2) on a twin state ``(Re z, Im z)``: ``ReLU(|z_i| + b_i) z_i / |z_i|`` per unit,
    0 at z_i = 0 (DomainError there when b_i > 0). Written so that torch autograd gives the
    derivatives of the module docstring, also at z_i = 0 and at |z_i| + b_i = 0."""
    x, y, _, r, zero, bs = _units(b, z, bias)
    s = r + bias
    relu = (s + b.abs(s)) / 2
    scale = _mask(b, ~zero) * relu / r + _mask(b, zero & (bs == 0))
    return b.concat([x * scale, y * scale])


def _activate(b: Backend, z: Array, activation: Activation, bias: Array | None) -> Array:
    if activation == "relu":
        return (z + b.abs(z)) / 2
    assert bias is not None
    return modrelu_twin(b, z, bias)


def _modrelu_coefficients(b: Backend, z: Array, bias: Array) -> tuple[Array, Array, Array, Array, Array]:
    """(x, y, safe |z|^2, tangential, radial): J = tan I + (rad - tan) u u' on each unit."""
    x, y, safe2, r, zero, bs = _units(b, z, bias)
    s = r + bias
    ss = _signs(b, s)
    active = ~zero & (ss > 0)
    kink = ~zero & (ss == 0)
    ident = zero & (bs == 0)
    tan = _mask(b, active) * (s / r) + _mask(b, ident)
    rad = _mask(b, active) + _mask(b, kink) / 2 + _mask(b, ident)
    return x, y, safe2, tan, rad


def activation_vjp(b: Backend, z: Array, v: Array, activation: Activation, bias: Array | None = None) -> Array:
    """``J(z)' v``, J the Jacobian of the activation at z (for ReLU ``diag(sigma'(z)) v``)."""
    if activation == "relu":
        return (1 + b.sign(z)) / 2 * v
    if bias is None:
        raise DomainError("modReLU needs a bias per complex unit")
    x, y, safe2, tan, rad = _modrelu_coefficients(b, z, bias)
    n = x.shape[0]
    vx, vy = v[:n], v[n:]
    k = (rad - tan) * (x * vx + y * vy) / safe2
    return b.concat([tan * vx + k * x, tan * vy + k * y])


def activation_jacobian(b: Backend, z: Array, activation: Activation, bias: Array | None = None) -> Array:
    """The N x N Jacobian ``J(z)`` of the activation: ``D = diag(sigma'(z))`` for ReLU, 2 x 2 blocks
    on the unit pairs (i, i + n) for modReLU (built column by column from :func:`activation_vjp`)."""
    if activation == "relu":
        return b.diag((1 + b.sign(z)) / 2)
    n2 = z.shape[0]
    eye = b.eye(n2)
    jt = b.stack_columns([activation_vjp(b, z, eye[:, i], activation, bias) for i in range(n2)], n2)
    return b.transpose(jt)


def activation_norm(b: Backend, z: Array, activation: Activation, bias: Array | None = None) -> float:
    """``||J(z)||_2`` in float64: max |sigma'| for ReLU, max over units of max(|tan|, |rad|) for modReLU."""
    if activation == "relu":
        return float(np.max(np.abs(b.to_numpy((1 + b.sign(z)) / 2)), initial=0.0))
    assert bias is not None
    _, _, _, tan, rad = _modrelu_coefficients(b, z, bias)
    return float(np.max(np.abs(np.concatenate([b.to_numpy(tan), b.to_numpy(rad)])), initial=0.0))


def _orthogonal(b: Backend, w: Array, name: str) -> Array:
    """W itself when exact and exactly orthogonal; otherwise, when ||W'W - I||_F is within the
    float32 test ratio, its orthogonal polar factor at b's precision (a float64 W carried to 50
    digits is orthogonal only to 1e-16 there); else NotOrthogonalError."""
    n = w.shape[0]
    resid = b.transpose(w) @ w - b.eye(n)
    if b.exact:
        if not b.is_zero(resid):
            raise NotOrthogonalError(
                f"{name} is not exactly orthogonal: W'W - I != 0", ratio=float("inf"), threshold=0.0
            )
        return w
    err = b.to_float(b.norm(resid))
    scale = max(n, 1) * max(b.eps, _F32_EPS)
    if not err <= THRESHOLD * scale:
        raise NotOrthogonalError(
            f"{name} is not orthogonal: ||{name}'{name} - I||_F / (n eps_float32) = {err / scale:.3g} > "
            f"{THRESHOLD:g}",
            ratio=err / scale,
            threshold=THRESHOLD,
        )
    return polish_unitary(CArray(w, b.zeros(tuple(w.shape))), backend=b).re


def _weights(b: Backend, w: Any, t_len: int, orthogonal: bool) -> tuple[Array, ...]:
    ww = b.check_array(w, name="W")
    if ww.ndim == 2:
        mats = [ww]
    elif ww.ndim == 3:
        if ww.shape[0] != t_len:
            raise ShapeError(f"W holds {ww.shape[0]} matrices W_k but xs has T = {t_len} rows")
        mats = [ww[k] for k in range(t_len)]
    else:
        raise ShapeError(f"W must be N x N (shared) or T x N x N (one W_k per step), got shape {tuple(ww.shape)}")
    if mats[0].shape[0] != mats[0].shape[1]:
        raise ShapeError(f"W must be square, got {tuple(mats[0].shape)}")
    if orthogonal:
        mats = [_orthogonal(b, m, "W" if len(mats) == 1 else f"W_{k}") for k, m in enumerate(mats)]
    return tuple(mats) * (t_len if len(mats) == 1 else 1)


def unroll(
    w: Any,
    v: Any,
    xs: Any,
    h0: Any,
    *,
    c: Any = None,
    activation: Activation = "relu",
    bias: Any = None,
    backend: BackendLike = None,
    orthogonal: bool = True,
    track: bool = False,
) -> Unrolled:
    """Eq. 1-2 for T = len(xs) steps: W (N x N, or T x N x N for W_k per step), V (N x m), xs (T x m),
    h0 and c (length N). With ``orthogonal`` every W_k must be orthogonal (see
    :data:`orthoverify.tolerance.THRESHOLD`) and is polished to the working precision. ``track`` (torch)
    records the graph for :func:`autograd_gradients`."""
    b = resolve(backend, w)
    x = b.check_array(xs, name="xs", ndim=2)
    t_len = int(x.shape[0])
    if t_len < 1:
        raise ShapeError("xs must have at least one row (T >= 1)")
    ws = _weights(b, w, t_len, orthogonal)
    n = int(ws[0].shape[0])
    vv = b.check_array(v, name="V", ndim=2)
    h = b.check_array(h0, name="h0", ndim=1)
    cc = b.zeros(n) if c is None else b.check_array(c, name="c", ndim=1)
    if vv.shape[0] != n or vv.shape[1] != x.shape[1] or h.shape[0] != n or cc.shape[0] != n:
        raise ShapeError(
            f"shapes disagree: W {tuple(ws[0].shape)}, V {tuple(vv.shape)}, xs {tuple(x.shape)}, "
            f"h0 {tuple(h.shape)}, c {tuple(cc.shape)}"
        )
    bb = _bias(b, activation, bias, n)
    if track:
        if b.family != "torch":
            raise BackendError(f"track=True needs a torch backend, not {b.name}")
        h = h.detach().clone().requires_grad_(True)
    hs, zs = [h], []
    for k in range(t_len):
        z = ws[k] @ h + vv @ x[k] + cc
        h = _activate(b, z, activation, bb)
        zs.append(z.detach() if track else z)
        hs.append(h)
    return Unrolled(b, ws, vv, x, cc, tuple(zs), tuple(hs), activation, bb, track)


def _bias(b: Backend, activation: Any, bias: Any, n: int) -> Array | None:
    if activation == "relu":
        if bias is not None:
            raise DomainError("ReLU takes no bias here: put it in c (z = W h + V x + c)")
        return None
    if activation != "modrelu":
        raise DomainError(f"unknown activation {activation!r}: use 'relu' or 'modrelu'")
    if n % 2:
        raise ShapeError(f"modReLU acts on complex units: the twin state needs even N = 2n, got N = {n}")
    if bias is None:
        raise DomainError("modReLU needs a bias per complex unit")
    bb = b.check_array(bias, name="bias", ndim=1)
    if bb.shape[0] != n // 2:
        raise ShapeError(f"bias has length {bb.shape[0]}, expected n = N / 2 = {n // 2}")
    return bb


def forward_from(run: Unrolled, t: int, h: Array) -> Array:
    """``h_T`` when the pass restarts from ``h_t = h`` (same W_k, inputs and biases)."""
    b = run.backend
    for k in range(t, run.T):
        h = _activate(b, run.ws[k] @ h + run.v @ run.xs[k] + run.c, run.activation, run.bias)
    return h


# =========================================================================== gradients
def _cost_gradient(run: Unrolled, g: Any) -> Array:
    gg = run.backend.check_array(g, name="g", ndim=1)
    if gg.shape[0] != run.N:
        raise ShapeError(f"g = dC/dh_T has length {gg.shape[0]}, expected N = {run.N}")
    return gg


def backward(run: Unrolled, g: Any) -> list[Array]:
    """``dC/dh_t`` for t = 0..T by ``dC/dh_k = W_k' J(z_{k+1})' dC/dh_{k+1}`` from ``dC/dh_T = g``."""
    b = run.backend
    out = [_cost_gradient(run, g)]
    for k in range(run.T - 1, -1, -1):
        out.append(b.transpose(run.ws[k]) @ activation_vjp(b, run.zs[k], out[-1], run.activation, run.bias))
    return out[::-1]


def autograd_gradients(run: Unrolled, g: Any) -> list[Array]:
    """``dC/dh_t`` for t = 0..T by torch autograd of ``C = g'h_T`` (a run made with ``track=True``)."""
    if not run.tracked:
        raise BackendError("autograd needs a torch run made with unroll(..., track=True)")
    import torch

    gg = _cost_gradient(run, g).detach()
    cost = torch.sum(gg * run.hs[-1])
    grads = torch.autograd.grad(cost, list(run.hs), allow_unused=True)
    return [torch.zeros_like(h) if d is None else d.detach() for d, h in zip(grads, run.hs, strict=True)]


def exact_gradients(run: Unrolled, g: Any) -> list[Array]:
    """``dC/dh_t`` for t = 0..T as SymPy's derivative of ``C = g' h_T(h_t)`` (each entry the
    derivative of C along a real symbol added to that entry of h_t; SymPy differentiates |x| as
    sign(x), so the slope at a kink is 1/2 as elsewhere here). Exact runs with ReLU only: modReLU's
    branches are decided numerically."""
    import sympy

    b = run.backend
    if not b.exact or run.activation != "relu":
        raise DomainError("exact_gradients needs an exact (SymPy) run with the ReLU activation")
    gg = _cost_gradient(run, g)
    e = sympy.Symbol("_e", real=True)
    out: list[Array] = []
    for t in range(run.T):
        col = []
        for i in range(run.N):
            h = run.hs[t].copy()
            h[i] = h[i] + e
            cost = b.sum(gg * forward_from(run, t, h))
            col.append(sympy.diff(cost, e).subs(e, 0))
        out.append(np.array(col, dtype=object))
    out.append(gg)
    return out


def gradient_norms(b: Backend, grads: Sequence[Array]) -> list[Scalar]:
    """``||dC/dh_t||_2`` for each t, in b's arithmetic."""
    return [b.norm(d) for d in grads]


def gradient_scales(run: Unrolled, g: Any) -> list[float]:
    """``||g|| prod_{k >= t} ||W_k||_2 ||J(z_{k+1})||_2`` for t = 0..T (float64): the size the
    backward pass may reach, against which its rounding error is measured (<= ||g|| for orthogonal
    W and ReLU)."""
    b = run.backend
    scales = [float(np.linalg.norm(b.to_numpy(_cost_gradient(run, g))))]
    wn: dict[int, float] = {}
    for k in range(run.T - 1, -1, -1):
        key = id(run.ws[k])
        if key not in wn:
            wn[key] = float(np.linalg.norm(b.to_numpy(run.ws[k]), 2))
        scales.append(scales[-1] * wn[key] * activation_norm(b, run.zs[k], run.activation, run.bias))
    return scales[::-1]


# =========================================================================== eq. 3
def chain_rule_product(run: Unrolled, t: int, form: Form) -> Array:
    """The matrix product of eq. 3 from step t, k = t..T-1 multiplied left to right:
    ``printed``: ``D_{t+1} W_t' D_{t+2} W_{t+1}' ... D_T W_{T-1}'`` (eq. 3 as printed, D_{k+1} the
    activation Jacobian at z_{k+1}); ``corrected``: ``W_t' D_{t+1}' W_{t+1}' D_{t+2}' ... W_{T-1}' D_T'``,
    the transpose of dh_T/dh_t, which maps dC/dh_T to dC/dh_t."""
    b = run.backend
    if not 0 <= t <= run.T:
        raise DomainError(f"t must be in 0..T = 0..{run.T}, got {t}")
    if form not in ("printed", "corrected"):
        raise DomainError(f"unknown form {form!r}: use 'printed' or 'corrected'")
    p = b.eye(run.N)
    for k in range(t, run.T):
        d = activation_jacobian(b, run.zs[k], run.activation, run.bias)
        wt = b.transpose(run.ws[k])
        p = p @ d @ wt if form == "printed" else p @ wt @ b.transpose(d)
    return p


def chain_rule_products(run: Unrolled, form: Form) -> list[Array]:
    """:func:`chain_rule_product` for every t = 0..T at once, as ``P_t = F_t P_{t+1}`` with
    ``F_t = D_{t+1} W_t'`` (printed) or ``W_t' D_{t+1}'`` (corrected): the same products, O(T) of them."""
    b = run.backend
    if form not in ("printed", "corrected"):
        raise DomainError(f"unknown form {form!r}: use 'printed' or 'corrected'")
    out = [b.eye(run.N)]
    for k in range(run.T - 1, -1, -1):
        d = activation_jacobian(b, run.zs[k], run.activation, run.bias)
        wt = b.transpose(run.ws[k])
        out.append((d @ wt if form == "printed" else wt @ b.transpose(d)) @ out[-1])
    return out[::-1]


def chain_rule_gradients(run: Unrolled, g: Any, reading: Reading) -> list[Array]:
    """:func:`chain_rule_gradient` for every t = 0..T."""
    gg = _cost_gradient(run, g)
    b = run.backend
    if reading not in ("printed_row", "printed_column", "corrected"):
        raise DomainError(f"unknown reading {reading!r}: use printed_row, printed_column or corrected")
    prods = chain_rule_products(run, "corrected" if reading == "corrected" else "printed")
    if reading == "printed_row":
        return [b.transpose(p) @ gg for p in prods]
    return [p @ gg for p in prods]


def chain_rule_gradient(run: Unrolled, g: Any, t: int, reading: Reading) -> Array:
    """dC/dh_t by a product of eq. 3: ``printed_row`` reads the printed product with dC/dh as a row,
    ``(g' P)' = P' g``; ``printed_column`` with dC/dh as a column, ``P g``; ``corrected`` is ``Q g``
    with Q the corrected product."""
    gg = _cost_gradient(run, g)
    b = run.backend
    if reading == "printed_row":
        return b.transpose(chain_rule_product(run, t, "printed")) @ gg
    if reading == "printed_column":
        return chain_rule_product(run, t, "printed") @ gg
    if reading == "corrected":
        return chain_rule_product(run, t, "corrected") @ gg
    raise DomainError(f"unknown reading {reading!r}: use printed_row, printed_column or corrected")
