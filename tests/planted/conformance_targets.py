"""Implementations for the conformance tests: correct ones, and ones broken on purpose, each
in one way that one conformance check is meant to catch."""

from __future__ import annotations

import math

import torch

from orthoverify.conformance.declare import declare


def _reflect(u: torch.Tensor) -> torch.Tensor:
    """H(u) = I - 2uu'/u'u, with u scaled by its largest entry first (as LAPACK's dlarfg does), so
    subnormal and huge columns neither underflow nor overflow in u'u."""
    n = u.shape[0]
    big = u.abs().max()
    u = u / torch.where(big > 0, big, torch.ones_like(big))
    return torch.eye(n, dtype=u.dtype, device=u.device) - 2 * torch.outer(u, u) / (u @ u)


def householder(u: torch.Tensor) -> torch.Tensor:
    """Correct: prod_j H(u_j), first column leftmost (batched over leading axes)."""
    if u.dim() > 2:
        return torch.stack([householder(x) for x in u])
    q = torch.eye(u.shape[0], dtype=u.dtype, device=u.device)
    for j in range(u.shape[1]):
        q = q @ _reflect(torch.tril(u)[:, j])
    return q


def householder_wrong_sign(u: torch.Tensor) -> torch.Tensor:
    """Broken: H(u) = 2uu'/u'u - I (the negated reflection): still orthogonal, the wrong matrix."""
    if u.dim() > 2:
        return torch.stack([householder_wrong_sign(x) for x in u])
    q = torch.eye(u.shape[0], dtype=u.dtype, device=u.device)
    for j in range(u.shape[1]):
        q = q @ (-_reflect(torch.tril(u)[:, j]))
    return q


def householder_transposed(u: torch.Tensor) -> torch.Tensor:
    """Broken: the factors in the other order (Q' instead of Q): a convention mismatch."""
    return householder(u).transpose(-1, -2)


class _CayleyMissingTerm(torch.autograd.Function):
    """W = (I + A)^-1 (I - A) D with a backward that drops the (I + A)^-T G W' D... term."""

    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, a: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        eye = torch.eye(a.shape[-1], dtype=a.dtype, device=a.device)
        w = torch.linalg.solve(eye + a, eye - a) * d.unsqueeze(-2)
        ctx.save_for_backward(a, d, w)
        return w

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, g: torch.Tensor) -> tuple[torch.Tensor, None]:
        a, d, _w = ctx.saved_tensors  # type: ignore[attr-defined]
        eye = torch.eye(a.shape[-1], dtype=a.dtype, device=a.device)
        v = torch.linalg.solve((eye + a).transpose(-1, -2), g) @ torch.diag(d)  # missing the "+ W'" term
        return v.transpose(-1, -2) - v, None


def cayley(a: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """Correct scaled Cayley transform, autograd through the solve (LU factors: torch 2.13's
    torch.linalg.solve gets nested forward mode wrong, which the second_ff check refutes)."""
    eye = torch.eye(a.shape[-1], dtype=a.dtype, device=a.device)
    lu, piv = torch.linalg.lu_factor(eye + a)
    return torch.linalg.lu_solve(lu, piv, eye - a) * d.unsqueeze(-2)


def cayley_missing_gradient_term(a: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """Broken backward (forward correct)."""
    out: torch.Tensor = _CayleyMissingTerm.apply(a, d)  # type: ignore[no-untyped-call]
    return out


def cayley_float32_drift(a: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """Broken float32 path: A is rounded to bfloat16 first (still orthogonal, 2^-8 accurate)."""
    if a.dtype == torch.float32:
        a = a.to(torch.bfloat16).to(torch.float32)
    return cayley(a, d)


def circulant(x: torch.Tensor, *, broken: bool = False) -> torch.Tensor:
    """An orthogonal circulant matrix F^-1 diag(e^{i theta}) F with theta odd-symmetric (from X's
    first row), through torch.fft; ``broken`` uses an unnormalised inverse FFT."""
    if x.dim() > 2:
        return torch.stack([circulant(v, broken=broken) for v in x])
    n = x.shape[-1]
    t = x[0]
    theta = (t - torch.roll(torch.flip(t, (0,)), 1)) / 2
    lam = torch.polar(torch.ones_like(theta), theta)
    cdt = torch.complex64 if x.dtype == torch.float32 else torch.complex128
    fe = torch.fft.fft(torch.eye(n, dtype=cdt, device=x.device), dim=0)
    y = torch.fft.ifft(lam.unsqueeze(-1) * fe, dim=0, norm="forward" if broken else "backward")
    return y.real


def circulant_unnormalised_fft(x: torch.Tensor) -> torch.Tensor:
    return circulant(x, broken=True)


def embed(w: torch.Tensor) -> torch.Tensor:
    """Correct complex-to-real block form."""
    return torch.cat([torch.cat([w.real, -w.imag], -1), torch.cat([w.imag, w.real], -1)], -2)


def embed_wrong_block(w: torch.Tensor) -> torch.Tensor:
    """Broken: [[Re, Im], [-Im, Re]] (the embedding of conj(W))."""
    return torch.cat([torch.cat([w.real, w.imag], -1), torch.cat([-w.imag, w.real], -1)], -2)


def raises(x: torch.Tensor) -> torch.Tensor:
    raise RuntimeError("this target always fails")


def hangs(x: torch.Tensor) -> torch.Tensor:
    import time

    time.sleep(3600)
    return x


def wrong_shape(x: torch.Tensor) -> torch.Tensor:
    return torch.eye(x.shape[-1] + 1, dtype=x.dtype)


def returns_nan(x: torch.Tensor) -> torch.Tensor:
    return torch.full_like(x, float("nan"))


def _reflections(u: torch.Tensor) -> torch.Tensor:
    """prod_j H(u_j) over the columns of tril(u), first leftmost, H(0) = I."""
    q = torch.eye(u.shape[0], dtype=u.dtype, device=u.device)
    for j in range(u.shape[1]):
        col = torch.tril(u)[:, j]
        if bool((col != 0).any()):
            q = q @ _reflect(col)
    return q


def svd(u: torch.Tensor, v: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    """Correct svdRNN weight Q(U) diag(sigma) Q(V)' (batched over a leading axis)."""
    if u.dim() > 2:
        return torch.stack([svd(*a) for a in zip(u, v, sigma, strict=True)])
    return (_reflections(u) * sigma) @ _reflections(v).transpose(0, 1)


def svd_v_not_transposed(u: torch.Tensor, v: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    """Broken: Q(U) diag(sigma) Q(V), V's product not transposed (a convention mismatch)."""
    if u.dim() > 2:
        return torch.stack([svd_v_not_transposed(*a) for a in zip(u, v, sigma, strict=True)])
    return (_reflections(u) * sigma) @ _reflections(v)


def urnn(x: torch.Tensor, perm: torch.Tensor, *, unnormalised: bool = False) -> torch.Tensor:
    """Correct uRNN W = D3 R2 F^-1 D2 Pi R1 F D1 in plain torch (torch.fft with norm="ortho");
    ``unnormalised``: neither F nor F^-1 is scaled (fft's "backward", ifft's "forward"), so W is n
    times the unitary matrix."""
    if x.dim() > 2:
        return torch.stack([urnn(xi, pi, unnormalised=unnormalised) for xi, pi in zip(x, perm, strict=True)])
    n = x.shape[1]
    cdt = torch.complex64 if x.dtype == torch.float32 else torch.complex128

    def diag(w: torch.Tensor) -> torch.Tensor:
        return torch.polar(torch.ones_like(w), w).unsqueeze(-1)

    def reflect(re: torch.Tensor, im: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        v = torch.complex(re, im).unsqueeze(-1)
        return h - 2 * v @ (v.conj().transpose(0, 1) @ h) / (v.abs() ** 2).sum()

    h = torch.eye(n, dtype=cdt, device=x.device)
    h = diag(x[0]) * h
    h = torch.fft.fft(h, dim=0, norm="backward" if unnormalised else "ortho")
    h = reflect(x[3], x[4], h)
    h = h[perm]
    h = diag(x[1]) * h
    h = torch.fft.ifft(h, dim=0, norm="forward" if unnormalised else "ortho")
    h = reflect(x[5], x[6], h)
    return diag(x[2]) * h


def urnn_unnormalised_fft(x: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """Broken: F = torch.fft.fft without normalisation and F^-1 = ifft with norm="forward" (no 1/n
    anywhere): W is then n times a unitary matrix."""
    return urnn(x, perm, unnormalised=True)


def urnn_no_batches(x: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """Correct, but takes one parameter set at a time (a stacked X raises)."""
    if x.dim() != 2:
        raise ValueError("one X at a time")
    return urnn(x, perm)


class _CayleyWrongJvp(torch.autograd.Function):
    """Correct forward and backward, a forward-mode rule with the wrong sign."""

    @staticmethod
    def forward(a: torch.Tensor, d: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return cayley(a, d)

    @staticmethod
    def setup_context(
        ctx: torch.autograd.function.FunctionCtx, inputs: tuple[torch.Tensor, ...], output: torch.Tensor
    ) -> None:
        a, d = inputs
        ctx.save_for_backward(a, d, output)
        ctx.save_for_forward(a, d, output)

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, g: torch.Tensor) -> tuple[torch.Tensor, None]:  # type: ignore[override]
        a, d, w = ctx.saved_tensors  # type: ignore[attr-defined]
        eye = torch.eye(a.shape[-1], dtype=a.dtype, device=a.device)
        v = torch.linalg.solve((eye + a).transpose(-1, -2), g * d.unsqueeze(-2) + g @ w.transpose(-1, -2))
        return -v, None

    @staticmethod
    def jvp(ctx: torch.autograd.function.FunctionCtx, da: torch.Tensor, _dd: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        a, d, w = ctx.saved_tensors  # type: ignore[attr-defined]
        eye = torch.eye(a.shape[-1], dtype=a.dtype, device=a.device)
        return torch.linalg.solve(eye + a, da @ w + da * d.unsqueeze(-2))  # sign dropped: should be -(...)


def cayley_wrong_jvp(a: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    out: torch.Tensor = _CayleyWrongJvp.apply(a, d)  # type: ignore[no-untyped-call]
    return out


_CALLS = [0]


def householder_noisy(u: torch.Tensor) -> torch.Tensor:
    """Broken: every other call is perturbed by 1e-6 (as a device that computes differently would be)."""
    _CALLS[0] += 1
    return householder(u) * (1.0 + 1e-6 * (_CALLS[0] % 2))


# ------------------------------------------------------------------------------ orthogonal maps of known form
def _batched(f):  # type: ignore[no-untyped-def]
    """f on one matrix, and on a stack of them one at a time."""

    def g(x: torch.Tensor) -> torch.Tensor:
        if x.dim() > 2:
            return torch.stack([g(v) for v in x])
        out: torch.Tensor = f(x)
        return out

    g.__doc__ = f.__doc__
    return g


def _skew(x: torch.Tensor) -> torch.Tensor:
    return x - x.transpose(-1, -2)


def _expm_taylor(a: torch.Tensor, degree: int, scale: bool) -> torch.Tensor:
    """exp(A) by Taylor of ``degree`` on A / 2^s (s from ||A||_1 when ``scale``), squared s times."""
    s = 0
    if scale:
        norm = float(a.abs().sum(0).max())
        s = max(0, math.ceil(math.log2(norm / 0.25))) if norm > 0.25 else 0
    b = a / 2.0**s
    eye = torch.eye(a.shape[-1], dtype=a.dtype, device=a.device)
    term, total = eye, eye
    for k in range(1, degree + 1):
        term = term @ b / k
        total = total + term
    for _ in range(s):
        total = total @ total
    return total


@_batched
def cayley_textbook(x: torch.Tensor) -> torch.Tensor:
    """Correct: the textbook Cayley map (I + A)^-1 (I - A) of A = X - X' (one LU solve)."""
    a = _skew(x)
    eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
    return torch.linalg.solve(eye + a, eye - a)


@_batched
def cayley_lu(x: torch.Tensor) -> torch.Tensor:
    """Correct: the same textbook Cayley map as :func:`cayley_textbook`, its solve written with
    torch.linalg.lu_factor + torch.linalg.lu_solve (the workaround blame measures): passes second_ff."""
    return _cayley_lu(x)


@_batched
def expm_scaled(x: torch.Tensor) -> torch.Tensor:
    """Correct: exp(X - X') by scaling and squaring (Taylor of degree 18 on a norm <= 1/4)."""
    return _expm_taylor(_skew(x), 18, scale=True)


@_batched
def expm_truncated(x: torch.Tensor) -> torch.Tensor:
    """Broken: exp(X - X') by a Taylor polynomial of degree 6, no scaling (not orthogonal at ||A|| ~ 0.1)."""
    return _expm_taylor(_skew(x), 6, scale=False)


@_batched
def cayley_not_skew(x: torch.Tensor) -> torch.Tensor:
    """Broken: (I + X)^-1 (I - X) of X itself, not of a skew matrix (orthogonal only for skew X)."""
    eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
    return torch.linalg.solve(eye + x, eye - x)


@_batched
def reflections_unnormalised(x: torch.Tensor) -> torch.Tensor:
    """Broken: prod_j (I - 2 u_j u_j' / ||u_j||) over the columns of tril(X): divides by the norm, not
    its square (orthogonal only where every ||u_j|| = 1)."""
    q = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
    low = torch.tril(x)
    for j in range(x.shape[-1]):
        u = low[:, j]
        if bool((u != 0).any()):
            q = q @ (torch.eye(x.shape[-1], dtype=x.dtype) - 2 * torch.outer(u, u) / torch.linalg.vector_norm(u))
    return q


@_batched
def reflections(x: torch.Tensor) -> torch.Tensor:
    """Correct: prod_j H(u_j) over the nonzero columns of tril(X) (a product of reflections)."""
    return _reflections(x)


@_batched
def reflections_nan_at_zero_column(x: torch.Tensor) -> torch.Tensor:
    """Broken: prod_j H(u_j) over every column of tril(X), a zero column included: 0/0 gives NaN there."""
    q = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
    for j in range(x.shape[-1]):
        q = q @ _reflect(torch.tril(x)[:, j])
    return q


# ------------------------------------------------------------------------------ targets that misbehave
def exits(x: torch.Tensor) -> torch.Tensor:
    """Ends its process on every call (os._exit)."""
    import os

    os._exit(7)


def segfaults(x: torch.Tensor) -> torch.Tensor:
    """Reads address 0 through ctypes: a segmentation fault."""
    import ctypes

    ctypes.string_at(0)
    return x


def forges_norm(x: torch.Tensor) -> torch.Tensor:
    """Returns 2Q (not orthogonal) after patching numpy.linalg.norm to say 0 (of any matrix)."""
    import numpy as np

    np.linalg.norm = lambda *a, **k: 0.0
    return 2 * cayley_textbook(x)


def floods(x: torch.Tensor) -> torch.Tensor:
    """A correct map that prints 100 kB to stdout on every call."""
    print("x" * 100_000)
    return cayley_textbook(x)


def changes_directory(x: torch.Tensor) -> torch.Tensor:
    """A correct map that changes the working directory."""
    import os
    import tempfile

    os.chdir(tempfile.gettempdir())
    return cayley_textbook(x)


def overwrites_input(u: torch.Tensor) -> torch.Tensor:
    """The correct Householder product, after which it overwrites its argument with zeros."""
    out = householder(u)
    u.zero_()
    return out


_TURNS = [0]


def nondeterministic(x: torch.Tensor) -> torch.Tensor:
    """A correct map whose calls take turns between two accurate evaluations (a solve, and an
    explicit inverse times I - A): always orthogonal to rounding, deterministic up to rounding
    (verified), not bitwise repeatable (refuted with --bitwise-determinism: any three calls in a
    row include both)."""
    if x.dim() > 2:
        return torch.stack([nondeterministic(v) for v in x])
    a = _skew(x)
    eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
    _TURNS[0] += 1
    if _TURNS[0] % 2:
        return torch.linalg.solve(eye + a, eye - a)
    return torch.linalg.inv(eye + a) @ (eye - a)


def hangs_when_large(x: torch.Tensor) -> torch.Tensor:
    """A correct map that hangs when an entry exceeds 1e3 (calls at ordinary sizes answer)."""
    import time

    if float(x.abs().max()) > 1e3:
        time.sleep(3600)
    return cayley_textbook(x)


def fails_in_float64(x: torch.Tensor) -> torch.Tensor:
    """A correct map in float32 that raises in float64."""
    if x.dtype == torch.float64:
        raise TypeError("float64 is not supported")
    return cayley_textbook(x)


def cayley_batch_mixed(x: torch.Tensor) -> torch.Tensor:
    """Broken batching: a stack of parameters gives the outputs in reverse order (batch members mixed)."""
    if x.dim() > 2:
        return torch.stack([cayley_textbook(v) for v in x]).flip(0)
    return cayley_textbook(x)


class _HouseholderOutBackward(torch.autograd.Function):
    """The Householder product with a backward that writes into a buffer with ``out=`` (as
    torch-householder's does): right to first order, and it raises under double backward."""

    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, u: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(u)
        return householder(u)

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, g: torch.Tensor) -> torch.Tensor:
        (u,) = ctx.saved_tensors  # type: ignore[attr-defined]
        saved = torch.empty_like(u)  # with create_graph, u requires grad and out= raises (as bmm(out=) does):
        torch.mul(u, 1.0, out=saved)  # "functions with out=... arguments don't support automatic differentiation"
        with torch.enable_grad():
            leaf = saved.detach().requires_grad_()
            (gu,) = torch.autograd.grad(householder(leaf), leaf, g)
        return gu


def householder_out_backward(u: torch.Tensor) -> torch.Tensor:
    """Correct to first order; forward mode and reverse-over-reverse raise (unsupported, not wrong)."""
    out: torch.Tensor = _HouseholderOutBackward.apply(u)  # type: ignore[no-untyped-call]
    return out


@_batched
def cayley_jitter(x: torch.Tensor) -> torch.Tensor:
    """Correct: the Cayley map of A = X - X' by one of two evaluation orders picked at random per call,
    (I + A)^-1 (I - A) or ((I - A)^-1 (I + A))' (equal in exact arithmetic: a few ulps apart, as a
    threaded reduction or GPU atomics give). LU factors, not torch.linalg.solve (pytorch/pytorch#196695)."""
    import random

    a = _skew(x)
    eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
    if random.random() < 0.5:
        lu, piv = torch.linalg.lu_factor(eye + a)
        return torch.linalg.lu_solve(lu, piv, eye - a)
    lu, piv = torch.linalg.lu_factor(eye - a)
    return torch.linalg.lu_solve(lu, piv, eye + a).transpose(-1, -2)


def _cayley_lu(x: torch.Tensor) -> torch.Tensor:
    eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
    a = _skew(x)
    lu, piv = torch.linalg.lu_factor(eye + a)
    return torch.linalg.lu_solve(lu, piv, eye - a)


_SEEN: dict[bytes, int] = {}


def cayley_drifts_on_repeat(x: torch.Tensor) -> torch.Tensor:
    """Broken: the k-th call with the same parameters (k = 0, 1, ...) returns the Cayley map of
    X (1 + 1e-9 k), as a stale state that drifts each time it is reused would: orthogonal, but
    repeated calls differ far beyond rounding. The first call at any parameters is correct (LU-based)."""
    if x.dim() > 2:
        return torch.stack([_cayley_lu(v) for v in x])
    try:
        key = str(x.dtype).encode() + x.detach().cpu().numpy().tobytes()
    except (RuntimeError, TypeError):  # a tensor of a transform (no storage): no state
        return _cayley_lu(x)
    k = _SEEN.get(key, 0)
    _SEEN[key] = k + 1
    return _cayley_lu(x * (1.0 + 1e-9 * k))


def householder_unscaled(u: torch.Tensor) -> torch.Tensor:
    """Fragile: prod_j (I - 2 u_j u_j' / u_j'u_j) with u'u formed unscaled (as nflows' and pyro's
    Householder flows do): right at every ordinary magnitude, NaN where u'u underflows (a column of
    subnormal entries) or overflows. LAPACK's dlarfg rescales first (_reflect above)."""
    if u.dim() > 2:
        return torch.stack([householder_unscaled(x) for x in u])
    n = u.shape[0]
    q = torch.eye(n, dtype=u.dtype, device=u.device)
    for j in range(u.shape[1]):
        v = torch.tril(u)[:, j]
        q = q @ (torch.eye(n, dtype=u.dtype, device=u.device) - 2 * torch.outer(v, v) / (v @ v))
    return q


_WARMED: list[int] = [0]


def _plain_jvp(x: torch.Tensor) -> bool:
    """Whether ``x`` is the input of a plain ``torch.func.jvp`` (one forward-mode level, nothing else)."""
    from torch._functorch.pyfunctorch import retrieve_all_functorch_interpreters

    return [str(i.key()) for i in retrieve_all_functorch_interpreters()] == ["TransformType.Jvp"]


def cayley_slow_first_jvp(x: torch.Tensor) -> torch.Tensor:
    """A correct map whose first jvp in a process takes 4 s (a one-time set-up, as torch's first
    jvp through linalg.solve), later ones no time: not refuted at a 2 s timeout."""
    import time

    if _plain_jvp(x) and not _WARMED[0]:
        _WARMED[0] = 1
        time.sleep(4.0)
    return cayley_textbook(x)


def cayley_slow_jvp(x: torch.Tensor) -> torch.Tensor:
    """A correct map whose every jvp takes 4 s: jvp refuted (a timeout) at a 2 s timeout."""
    import time

    if _plain_jvp(x):
        time.sleep(4.0)
    return cayley_textbook(x)


def _altered_backward(x: torch.Tensor, how: str) -> torch.Tensor:
    """x, with a reverse-mode hook that alters its upstream gradient by ``how`` (forward mode, at
    every order, sees no change: the hook is registered only where x requires grad)."""

    def hook(g: torch.Tensor) -> torch.Tensor:
        if how == "bfloat16" and g.dtype == torch.float32:
            return g.to(torch.bfloat16).to(torch.float32)
        if how == "bfloat16_when_differentiated_again" and g.dtype == torch.float32 and torch.is_grad_enabled():
            return g.to(torch.bfloat16).to(torch.float32)  # a backward recorded for a second derivative only
        if how == "bfloat16_loss_scale" and g.dtype == torch.bfloat16:
            return g * 8  # the loss scale multiplied in, never divided out (the float16 path divides it)
        if how == "batch_mean" and g.dim() > 2 and g.shape[0] >= 2:
            return g.mean(0, keepdim=True).expand_as(g).clone()
        return g

    if x.requires_grad:
        x = x.clone()
        x.register_hook(hook)
    return x


def cayley_grad_through_bfloat16(a: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """Broken float32 backward only: the upstream gradient of A is rounded through bfloat16 in float32
    (error ~2^-9, 10^4 times float32's eps); the forward, forward mode and float64 are exact."""
    return cayley(_altered_backward(a, "bfloat16"), d)


def cayley_grad_batch_mean(a: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """Broken batched backward only: right for one matrix, but for a batch of two or more the
    upstream gradient is replaced by its mean over the batch; the forward is exact."""
    return _altered_backward(cayley(a, d), "batch_mean")


@declare(group="SO(n)")
@_batched
def cayley_so(x: torch.Tensor) -> torch.Tensor:
    """Correct, declared SO(n): the Cayley map of A = X - X' (det +1 everywhere), on lu_factor + lu_solve."""
    return _cayley_lu(x)


@declare(group="SO(n)")
@_batched
def cayley_so_reflected(x: torch.Tensor) -> torch.Tensor:
    """Broken, declared SO(n): the Cayley map with its first column negated: orthogonal, det -1."""
    q = _cayley_lu(x)
    return torch.cat([-q[:, :1], q[:, 1:]], dim=1)


@declare(group="O(n)")
@_batched
def cayley_claims_o_n(x: torch.Tensor) -> torch.Tensor:
    """Broken declaration: the Cayley map (det +1 only, a connected image) declared to reach all of O(n)."""
    return _cayley_lu(x)


def cayley_jvp_through_bfloat16(a: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """Broken float32 forward mode only: under a torch.func transform in float32, A is rounded
    through bfloat16 (so is its tangent: error ~2^-9); plain calls, the backward and float64 are exact."""
    if a.dtype == torch.float32 and torch._C._functorch.is_functorch_wrapped_tensor(a):
        a = a.to(torch.bfloat16).to(torch.float32)
    return cayley(a, d)


def cayley_second_order_through_bfloat16(a: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """Broken float32 second order only: where the backward is recorded to be differentiated again
    (create_graph=True, as a gradient penalty or a Hessian-vector product does) the upstream
    gradient of A is rounded through bfloat16 in float32 (error ~2^-9); plain backward, forward
    mode and float64 at every order are exact."""
    return cayley(_altered_backward(a, "bfloat16_when_differentiated_again"), d)


@declare(dtypes=["float16", "bfloat16"])
def householder_half_precision(u: torch.Tensor) -> torch.Tensor:
    """Correct, and declares float16 and bfloat16: the product of reflections computed in the dtype given."""
    return householder(u)


@declare(dtypes=["float16", "bfloat16"])
def householder_bfloat16_loss_scale(u: torch.Tensor) -> torch.Tensor:
    """Broken bfloat16 backward only (declares float16 and bfloat16): the bfloat16 path multiplies the
    upstream gradient by a loss scale of 8 and never divides it out; float16's path, the forward in
    every dtype and forward mode are right."""
    return householder(_altered_backward(u, "bfloat16_loss_scale"))
