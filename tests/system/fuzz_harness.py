"""A fuzz harness for orthoverify's public functions (issue 17, "Public functions").

Every target is a public callable with one valid call (small sizes, fixed seed). A *mutation*
turns that call into a hostile but plausible one: one argument replaced by a string, object,
meta, half-precision, empty, 0-d, wrong-rank, non-finite or ``requires_grad``-in-a-list value,
or every float argument scaled to an extreme but finite magnitude (1e-310, 1e-200, 1e160,
1e300). :func:`run_case` calls it and classifies the outcome:

``ok``       a result whose every float is finite (and, where the target has a cheap
             independent check, correct by a test ratio), or a named orthoverify error;
``raw``      any other exception (a numpy/torch/Python traceback);
``nan``      a NaN or Inf in the result of a call whose inputs were all finite
             (``nonfinite-out`` when the inputs held NaN or Inf: passed through unnamed);
``wrong``    a finite result that fails the target's check (e.g. a W that is not orthogonal).

Run ``python -m tests.system.fuzz_harness`` for the full sweep (every target x every mutation) and
its counts; ``tests/system/test_fuzz_public_api.py`` runs it under Hypothesis and as a table.
"""

from __future__ import annotations

import itertools
import math
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

import numpy as np
import torch

from orthoverify.errors import OrthoverifyError

N = 4
EXTREMES = (1e-310, 1e-200, 1e160, 1e300)
CHECK_THRESHOLD = 1e3
"""Test ratio above which a finite result counts as wrong (deliberately loose: a correct
result gives ratios of order 1, the failures this hunts for give 1e10 and more)."""


# =============================================================================== targets
Check = Callable[[Any, tuple[Any, ...], dict[str, Any]], float]


@dataclass(frozen=True)
class Target:
    """A public callable, how to call it validly, and what counts as a correct result."""

    name: str
    fn: Callable[..., Any]
    make: Callable[[np.random.Generator], tuple[tuple[Any, ...], dict[str, Any]]]
    check: Check | None = None
    #: exceptions that are documented behaviour besides OrthoverifyError (testing: AssertionError)
    allowed: tuple[type[BaseException], ...] = ()
    #: argument positions (or keyword names) that are arrays and may be mutated
    arrays: tuple[int | str, ...] | None = None
    #: argument positions (or keyword names) that are sizes (int) and may be mutated
    ints: tuple[int | str, ...] = ()
    #: argument positions (or keyword names) that are names (str) and may be mutated
    strs: tuple[int | str, ...] = ()
    #: False when scaling the inputs has no meaning (integer inputs, angles)
    scalable: bool = True
    #: "passthrough": a converter (asarray) that returns NaN/Inf input as given, by design;
    #: "inf": +inf is a documented value of the result (e.g. an unbounded gap)
    nonfinite: str = ""


def _scaled_norm(x: np.ndarray) -> float:
    a = np.abs(np.asarray(x, dtype=np.complex128 if np.iscomplexobj(x) else np.float64)).reshape(-1)
    s = float(a.max()) if a.size else 0.0
    return 0.0 if s == 0.0 else s * float(np.sqrt(np.sum((a / s) ** 2)))


def _np(x: Any) -> np.ndarray:
    """A float64/complex128 numpy copy of a result (CArray, tensor, array)."""
    if hasattr(x, "re") and hasattr(x, "im"):
        return _np(x.re) + 1j * _np(x.im)
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu()
        return x.numpy().astype(np.complex128 if x.is_complex() else np.float64)
    arr = np.asarray(x)
    return arr.astype(np.complex128 if np.iscomplexobj(arr) else np.float64)


def _eps_of(x: Any) -> float:
    for part in (getattr(x, "re", None), x):
        if isinstance(part, torch.Tensor):
            return float(torch.finfo(part.dtype).eps) / 2 if part.is_floating_point() else 2.0**-53
        if isinstance(part, np.ndarray) and part.dtype.kind == "f":
            return float(np.finfo(part.dtype).eps) / 2
    return 2.0**-53


def _error_scale(out: Any, size: float) -> float:
    """``n (eps size + n denorm_min)``: what rounding may explain in a result of norm ``size``,
    with the absolute floor of gradual underflow (a result among the subnormals, e.g. from
    inputs at 1e-312, cannot be more accurate than its spacing there)."""
    eps = _eps_of(out)
    denorm = 2.0**-149 if eps > 2.0**-30 else 2.0**-1074
    return N * (eps * size + N * denorm)


def orthogonal_ratio(q: Any) -> float:
    """``||Q*Q - I||_F / (n eps)`` of a square result (real or complex)."""
    qq = _np(q)
    n = qq.shape[0]
    if qq.ndim != 2 or qq.shape[1] != n:
        return math.inf
    return _scaled_norm(qq.conj().T @ qq - np.eye(n)) / (max(n, 1) * _eps_of(q))


def _ortho(pick: Callable[[Any], Any] = lambda r: r) -> Check:
    return lambda res, args, kw: orthogonal_ratio(pick(res))


def _norm_kept(pick: Callable[[Any], Any], src: Callable[[tuple[Any, ...], dict[str, Any]], Any]) -> Check:
    """``| ||out|| - ||in|| | / (n eps ||in||)``: what an orthogonal map applied to ``in`` keeps."""

    def check(res: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> float:
        out, inp = pick(res), src(args, kw)
        a, b = _scaled_norm(_np(out)), _scaled_norm(_np(inp))
        if b == 0.0:
            return 0.0 if a == 0.0 else math.inf
        return abs(a - b) / _error_scale(out, b)

    return check


def reflect_reference(u: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``prod_j (I - 2 u_j u_j* / u_j*u_j) h`` (first column leftmost) in float64/complex128,
    each column first divided by its largest entry: an independent reference for the applies."""
    u = u.reshape(u.shape[0], -1)
    out = h.astype(np.complex128 if np.iscomplexobj(h) or np.iscomplexobj(u) else np.float64)
    n = out.shape[0]
    for j in range(u.shape[1] - 1, -1, -1):
        v = np.zeros(n, dtype=np.complex128 if np.iscomplexobj(u) else np.float64)
        col = u[:, j]
        e = math.frexp(float(np.abs(col).max()))[1]
        v[n - col.shape[0] :] = col * 2.0 ** (-e // 2) * 2.0 ** (-e - (-e // 2))  # exact powers of two
        vv = np.vdot(v, v).real
        out = out - np.multiply.outer(v, (2 / vv) * (v.conj() @ out))
    return out


def _applies(pick: Callable[[Any], Any], get_u: Callable[[tuple[Any, ...]], Any],
             get_h: Callable[[tuple[Any, ...]], Any]) -> Check:
    """``||out - ref|| / (n eps ||h||)`` against :func:`reflect_reference`."""

    def check(res: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> float:
        out, h = _np(pick(res)), _np(get_h(args))
        ref = reflect_reference(_np(get_u(args)), h)
        nh = _scaled_norm(h)
        if nh == 0.0:
            return 0.0 if _scaled_norm(out) == 0.0 else math.inf
        return _scaled_norm(out - ref) / _error_scale(pick(res), nh)

    return check


# ------------------------------------------------------------------------- valid inputs
def _randn(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape)


def _lower(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    u = rng.standard_normal((n, m))
    return np.tril(u)


def _skew(rng: np.random.Generator, n: int) -> np.ndarray:
    a = rng.standard_normal((n, n))
    return (a - a.T) / 2


def _graded_skew(rng: np.random.Generator, n: int) -> np.ndarray:
    """A skew matrix whose entries span 10^-5 .. 10^155: eigenvalues of order 1 beside ||A|| ~ 1e155
    (I + A ill-conditioned; the case where the solve's W was far from orthogonal)."""
    a = np.triu(rng.standard_normal((n, n)) * 10.0 ** rng.uniform(-5, 155, (n, n)), 1)
    return a - a.T


def _orth(rng: np.random.Generator, n: int, det: int = 0) -> np.ndarray:
    """A Haar orthogonal matrix (of determinant ``det`` when given)."""
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    q = q * np.sign(np.diag(r))
    if det and round(np.linalg.det(q)) != det:
        q[:, 0] = -q[:, 0]
    return q


def _cayley_orth(rng: np.random.Generator, n: int) -> np.ndarray:
    """An orthogonal matrix without the eigenvalue -1 (the Cayley transform of a skew matrix)."""
    a, eye = _skew(rng, n), np.eye(n)
    return np.linalg.solve(eye + a, eye - a)


def _unitary(rng: np.random.Generator, n: int) -> np.ndarray:
    z = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    q, r = np.linalg.qr(z)
    d = np.diag(r)
    return q * (d / np.abs(d))


def _t(x: np.ndarray) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float64)


def _targets() -> list[Target]:
    from orthoverify import nn as onn
    from orthoverify import samples, testing
    from orthoverify.backends import get_backend
    from orthoverify.param import (
        cayley,
        cayley_torch,
        householder,
        householder_torch,
        householder_wy,
        linear_rnn,
        svd,
        unitary,
        unitary_gradients,
        unitary_rank,
    )

    T: list[Target] = []

    def add(name: str, fn: Callable[..., Any], make: Any, check: Check | None = None, **kw: Any) -> None:
        T.append(Target(name, fn, make, check, **kw))

    n = N
    first = lambda r: r  # noqa: E731
    u0 = lambda a: a[0]  # noqa: E731
    h1_ = lambda a: a[1]  # noqa: E731

    # --------------------------------------------------------------- householder
    hh = householder
    add("householder.reflection", hh.reflection, lambda g: ((_randn(g, n),), {}), _ortho())
    add("householder.h1", hh.h1, lambda g: ((np.array([-1.0]), n), {}), _ortho(), ints=(1,), scalable=False)
    add("householder.m_map", hh.m_map, lambda g: (([_randn(g, 2), _randn(g, 3), _randn(g, 4)],), {}), _ortho(),
        arrays=("0.0", "0.1", "0.2"))
    add("householder.vectors_to_u", hh.vectors_to_u, lambda g: (([_randn(g, 2), _randn(g, 3), _randn(g, 4)],), {}),
        arrays=("0.0", "0.2"))
    add("householder.u_to_vectors", hh.u_to_vectors, lambda g: ((_lower(g, n, 3),), {}))
    add("householder.reflector_product", hh.reflector_product, lambda g: ((_lower(g, n, 3),), {}), _ortho())
    add("householder.reflector_apply", hh.reflector_apply, lambda g: ((_lower(g, n, 3), _randn(g, n)), {}),
        _applies(first, u0, h1_))
    add("householder.compact_wy", hh.compact_wy, lambda g: ((_lower(g, n, 3),), {}), _ortho())
    add("householder.theorem2_gradients", hh.theorem2_gradients,
        lambda g: ((_lower(g, n, 3), _randn(g, n), _randn(g, n)), {}))
    add("householder.algorithm1", hh.algorithm1, lambda g: ((_lower(g, n, 3), _randn(g, n, 2), _randn(g, n, 2)), {}),
        _applies(lambda r: r.c, u0, h1_))
    add("householder.algorithm1_matlab", hh.algorithm1_matlab,
        lambda g: ((_lower(g, n, 3), _randn(g, n), _randn(g, n)), {}), _applies(lambda r: r.c, u0, h1_))
    add("householder.algorithm2", hh.algorithm2, lambda g: ((_randn(g, n, n),), {"variant": "stable"}),
        _ortho(lambda r: r.q))
    add("householder.inverse", hh.inverse, lambda g: ((_orth(g, n),), {}), scalable=False)

    # --------------------------------------------------------------- cayley
    cy = cayley
    add("cayley.cayley", cy.cayley, lambda g: ((_skew(g, n),), {}), _ortho())
    add("cayley.inverse_cayley", cy.inverse_cayley, lambda g: ((_cayley_orth(g, n),), {}), scalable=False)
    add("cayley.scaled_cayley", cy.scaled_cayley, lambda g: ((_skew(g, n), [1, -1, 1, 1]), {}), _ortho(), arrays=(0,))
    d5 = [1, -1, 1, 1, -1]  # n = 5: nearly every graded A of this size defeated the plain solve
    add("cayley.scaled_cayley.graded", cy.scaled_cayley, lambda g: ((_graded_skew(g, 5), d5), {}),
        _ortho(), arrays=(0,))
    add("cayley.scaled_cayley.graded.torch", cy.scaled_cayley,
        lambda g: ((_t(_graded_skew(g, 5)), d5), {}), _ortho(), arrays=(0,))
    add("cayley.cayley.graded", cy.cayley, lambda g: ((_graded_skew(g, 5),), {}), _ortho())
    add("cayley.three_layers", cy.three_layers, lambda g: ((_skew(g, n), [1, -1, 1, 1], _randn(g, n)), {}),
        _norm_kept(first, lambda a, k: a[2]), arrays=(0, 2))
    add("cayley.cayley_gradient", cy.cayley_gradient, lambda g: ((_skew(g, n), [1, 1, -1, 1], _randn(g, n, n)), {}),
        arrays=(0, 2))
    add("cayley.stiefel_cayley_step", cy.stiefel_cayley_step, lambda g: ((_orth(g, n), _randn(g, n, n), 0.1), {}),
        arrays=(1,))
    add("cayley.modrelu_real", cy.modrelu_real, lambda g: ((_randn(g, n), -0.1 * np.ones(n)), {}))
    add("cayley.modrelu_printed", cy.modrelu_printed, lambda g: ((1.5, -0.5), {}))
    add("cayley.init_s", cy.init_s, lambda g: ((g.uniform(0, 1.5, 2),), {}), scalable=False)
    add("cayley.init_blocks", cy.init_blocks, lambda g: ((g.uniform(0, 1, 2), n), {}), ints=(1,))
    add("cayley.sign_choice", cy.sign_choice, lambda g: ((_orth(g, n),), {}), scalable=False)
    add("cayley.scaled_cayley_inverse", cy.scaled_cayley_inverse, lambda g: ((_orth(g, n),), {}), scalable=False)
    add("cayley.signs_with_rho", cy.signs_with_rho, lambda g: ((n, 1), {}), arrays=(), ints=(0, 1))
    add("cayley.parameter_count", cy.parameter_count, lambda g: ((n,), {}), arrays=(), ints=(0,))

    # --------------------------------------------------------------- cayley_torch
    ct = cayley_torch
    add("cayley_torch.skew_from_upper", ct.skew_from_upper, lambda g: ((_t(_randn(g, n, n)),), {}))
    add("cayley_torch.scaled_cayley_weight", ct.scaled_cayley_weight,
        lambda g: ((_t(_randn(g, n, n)), [1, -1, 1, 1]), {}), _ortho(), arrays=(0,))
    add("cayley_torch.ScaledCayleyRecurrent", ct.ScaledCayleyRecurrent, lambda g: ((n,), {}), arrays=(),
        ints=(0,))
    f64 = torch.float64
    add("cayley_torch.ScaledCayleyRecurrent.forward", lambda h: ct.ScaledCayleyRecurrent(n, generator=0, dtype=f64)(h),
        lambda g: ((_t(_randn(g, n, 2)),), {}), _norm_kept(first, lambda a, k: a[0]))
    add("cayley_torch.ScaledCayleyRecurrent.from_orthogonal", ct.ScaledCayleyRecurrent.from_orthogonal,
        lambda g: ((_t(_orth(g, n)),), {}), scalable=False)
    add("cayley_torch.ModReLU.forward", lambda z: ct.ModReLU(n, dtype=f64)(z), lambda g: ((_t(_randn(g, 2, n)),), {}))
    add("cayley_torch.ScoRNNCell.forward", lambda x, h: ct.ScoRNNCell(3, n, generator=0, dtype=f64)(x, h),
        lambda g: ((_t(_randn(g, 2, 3)), _t(_randn(g, 2, n))), {}))

    # --------------------------------------------------------------- householder_torch / wy
    add("householder_torch.householder_apply", householder_torch.householder_apply,
        lambda g: ((_t(_lower(g, n, 3)), _t(_randn(g, n, 2))), {}), _applies(first, u0, h1_))
    hl = householder_torch.HouseholderLinear
    add("householder_torch.HouseholderLinear.forward", lambda x: hl(n, 3, dtype=f64)(x),
        lambda g: ((_t(_randn(g, 2, n)),), {}))
    add("householder_wy.householder_wy_apply", householder_wy.householder_wy_apply,
        lambda g: ((_t(_lower(g, n, 3)), _t(_randn(g, n, 2))), {}), _applies(first, u0, h1_))
    add("householder_wy.svd_wy_apply", householder_wy.svd_wy_apply,
        lambda g: ((_t(_lower(g, n, 3)), _t(g.uniform(0.5, 2, n)), _t(_lower(g, n, 3)), _t(_randn(g, n, 2))), {}))

    # --------------------------------------------------------------- svd
    add("svd.reflector", svd.reflector, lambda g: ((_randn(g, 3), n), {}), _ortho(), arrays=(0,), ints=(1,))
    add("svd.m_k", svd.m_k, lambda g: (([_randn(g, 3), _randn(g, 4)],), {}), _ortho(), arrays=("0.0", "0.1"))
    add("svd.m_rect", svd.m_rect,
        lambda g: (([_randn(g, 3)], [_randn(g, 4)], g.uniform(0.5, 2, 3)), {"m": 3, "n": 4}),
        arrays=("0.0", "1.0", 2), ints=("m", "n"))
    add("svd.m_k1k2", svd.m_k1k2, lambda g: (([_randn(g, 3), _randn(g, 4)], [_randn(g, 4)], g.uniform(0.5, 2, n)), {}),
        arrays=("0.0", "1.0", 2))
    add("svd.sigma_map", svd.sigma_map, lambda g: ((_randn(g, n),), {}))
    add("svd.sigma_map_grad", svd.sigma_map_grad, lambda g: ((_randn(g, n),), {}))
    add("svd.sigma_map_inverse", svd.sigma_map_inverse, lambda g: ((g.uniform(0.2, 1.8, n),), {}), scalable=False)
    add("svd.householder_qr", svd.householder_qr, lambda g: ((_randn(g, n, n),), {}))
    add("svd.orthogonal_parameters", svd.orthogonal_parameters, lambda g: ((_orth(g, n),), {}), scalable=False)
    add("svd.factor_parameters", svd.factor_parameters,
        lambda g: ((_orth(g, n), g.uniform(0.5, 2, n), _orth(g, n)), {}), arrays=(1,))
    add("svd.svd_parameters", svd.svd_parameters, lambda g: ((_randn(g, n, 3),), {}))
    add("svd.pad", svd.pad, lambda g: ((_randn(g, 2), n), {}), ints=(1,))
    add("svd.theorem3_parameters", svd.theorem3_parameters, lambda g: ((_orth(g, n), 2, 2), {}), ints=(1, 2),
        scalable=False)
    add("svd.hprod", svd.hprod, lambda g: ((_randn(g, n), _randn(g, 3)), {}), _applies(first, lambda a: a[1], u0))
    add("svd.hgrad", svd.hgrad, lambda g: ((_randn(g, n), _randn(g, 3), _randn(g, n)), {}))
    add("svd.svdrnn_local", svd.svdrnn_local,
        lambda g: ((_randn(g, n), _randn(g, n), [_randn(g, 3), _randn(g, 4)], g.uniform(0.5, 2, n),
                    [_randn(g, 3), _randn(g, 4)]), {}), arrays=(0, 1, "2.0", 3, "4.1"))

    # --------------------------------------------------------------- unitary
    un = unitary
    cz = lambda g, *s: _randn(g, *s) + 1j * _randn(g, *s)  # noqa: E731
    add("unitary.as_carray", un.as_carray, lambda g: ((cz(g, n),), {}), lambda r, a, k: 0.0)
    add("unitary.require_unitary", un.require_unitary, lambda g: ((_unitary(g, n),), {}), scalable=False)
    add("unitary.polish_unitary", un.polish_unitary,
        lambda g: ((_unitary(g, n) * (1 + 1e-9),), {}), _ortho(), scalable=True)
    add("unitary.embed_matrix", un.embed_matrix, lambda g: ((cz(g, n, n),), {}))
    add("unitary.embed_vector", un.embed_vector, lambda g: ((cz(g, n),), {}))
    add("unitary.split_vector", un.split_vector, lambda g: ((_randn(g, 2 * n),), {}))
    add("unitary.split_matrix", un.split_matrix, lambda g: ((un.embed_matrix(cz(g, n, n)),), {}))
    add("unitary.complex_reflection", un.complex_reflection, lambda g: ((cz(g, 3), n), {}), _ortho(), arrays=(0,),
        ints=(1,))
    add("unitary.apply_reflection", un.apply_reflection, lambda g: ((cz(g, 3), cz(g, n)), {}),
        _applies(first, u0, h1_))
    add("unitary.phases", un.phases, lambda g: ((g.uniform(-3, 3, n),), {}), scalable=False)
    add("unitary.phase_diag", un.phase_diag, lambda g: ((g.uniform(-3, 3, n),), {}), _ortho(), scalable=False)
    add("unitary.m1_hat", un.m1_hat, lambda g: ((g.uniform(-3, 3, n), [cz(g, 2), cz(g, 3), cz(g, 4)]), {}), _ortho(),
        arrays=(0, "1.0", "1.2"))
    add("unitary.unitary_parameters", un.unitary_parameters, lambda g: ((_unitary(g, n),), {}), scalable=False)
    add("unitary.dft_matrix", un.dft_matrix, lambda g: ((n,), {}), _ortho(), arrays=(), ints=(0,))
    add("unitary.fft", un.fft, lambda g: ((cz(g, n),), {}), _norm_kept(first, lambda a, k: a[0]))
    add("unitary.fft_native", un.fft_native, lambda g: ((cz(g, 6),), {}), _norm_kept(first, lambda a, k: a[0]))
    add("unitary.permutation_matrix", un.permutation_matrix, lambda g: (([2, 0, 3, 1],), {}), _ortho(), scalable=False)
    add("unitary.urnn_parameters", un.urnn_parameters,
        lambda g: ((*(g.uniform(-3, 3, n) for _ in range(3)), cz(g, n), cz(g, n), [2, 0, 3, 1]), {}),
        arrays=(0, 1, 2, 3, 4), scalable=False)
    add("unitary.urnn_parameters.scaled_v", un.urnn_parameters,
        lambda g: ((*(g.uniform(-3, 3, n) for _ in range(3)), cz(g, n), cz(g, n), [2, 0, 3, 1]), {}),
        arrays=(3, 4))
    add("unitary.urnn_apply", lambda h, **kw: un.urnn_apply(un.urnn_parameters(**un.urnn_random(
        np.random.default_rng(1), n)), h, **kw), lambda g: ((cz(g, n),), {}), _norm_kept(first, lambda a, k: a[0]))
    add("unitary.urnn_matrix", lambda v1, v2: un.urnn_matrix(un.urnn_parameters(
        *(np.random.default_rng(2).uniform(-3, 3, n) for _ in range(3)), v1, v2, [2, 0, 3, 1])),
        lambda g: ((cz(g, n), cz(g, n)), {}), _ortho())
    add("unitary.modrelu_relu_form", un.modrelu_relu_form, lambda g: ((cz(g, n), -0.1 * np.ones(n)), {}))
    add("unitary.modrelu", un.modrelu, lambda g: ((cz(g, n), -0.1 * np.ones(n)), {}))
    add("unitary.modrelu_real", un.modrelu_real, lambda g: ((_randn(g, 2 * n), -0.1 * np.ones(n)), {}))
    add("unitary.complex_rnn", un.complex_rnn,
        lambda g: ((_unitary(g, n), _randn(g, n, 2), _randn(g, 3, 2), cz(g, n), "modrelu"),
                   {"bias": -0.1 * np.ones(n)}), arrays=(0, 1, 2, 3, "bias"))
    add("unitary.complex_rnn.relu", un.complex_rnn,
        lambda g: ((_unitary(g, n), _randn(g, n, 2), _randn(g, 3, 2), cz(g, n), "relu"), {}), arrays=(0, 1, 2, 3))
    add("unitary.real_rnn", un.real_rnn,
        lambda g: ((un.embed_matrix(_unitary(g, n)), _randn(g, 2 * n, 2), _randn(g, 3, 2), _randn(g, 2 * n),
                    "modrelu"), {"bias": -0.1 * np.ones(n)}), arrays=(0, 1, 2, 3, "bias"))
    add("unitary.init_h0", un.init_h0, lambda g: ((np.random.default_rng(0), n), {}), arrays=(), ints=(1,))
    add("unitary.urnn_random", un.urnn_random, lambda g: ((np.random.default_rng(0), n), {}), arrays=(), ints=(1,))
    add("unitary.urnn_parameter_count", un.urnn_parameter_count, lambda g: ((n,), {}), arrays=(), ints=(0,))

    from orthoverify.param import unitary_spectral

    add("unitary_spectral.unitary_eig", unitary_spectral.unitary_eig, lambda g: ((_unitary(g, n),), {}),
        lambda r, a, k: orthogonal_ratio(r[0]), scalable=False)

    # --------------------------------------------------------------- unitary_gradients / rank
    add("unitary_gradients.unroll", unitary_gradients.unroll,
        lambda g: ((_orth(g, n), _randn(g, n, 2), _randn(g, 3, 2), _randn(g, n)), {}))
    add("unitary_gradients.backward", lambda g_, **kw: unitary_gradients.backward(unitary_gradients.unroll(
        _orth(np.random.default_rng(3), n), np.ones((n, 2)), np.ones((3, 2)), np.ones(n)), g_),
        lambda g: ((_randn(g, n),), {}))
    add("unitary_rank.urnn_from_flat", unitary_rank.urnn_from_flat,
        lambda g: ((_randn(g, 7 * n), [2, 0, 3, 1]), {}), arrays=(0,))
    add("unitary_rank.decide_rank", unitary_rank.decide_rank,
        lambda g: ((list(g.uniform(0.5, 2, n)),), {"rows": n, "cols": n, "eps": 2.0**-53}), arrays=(0,),
        ints=("rows", "cols"), nonfinite="inf")

    # --------------------------------------------------------------- linear_rnn
    lr = linear_rnn

    def lin(g: np.random.Generator, with_w: bool = True) -> tuple[tuple[Any, ...], dict[str, Any]]:
        d, t = 2, 2
        y = _randn(g, d, 2)
        a = _randn(g, d, 2 * t)
        x = _randn(g, 2 * t, 2 * t)
        sigma = x @ x.T
        w = _randn(g, 2, 2) / 2
        return ((w, y, a, sigma, t) if with_w else (y, a, sigma, t)), {}

    add("linear_rnn.problem", lr.problem, lambda g: lin(g, False), arrays=(0, 1, 2), ints=(3,))
    add("linear_rnn.stacked_powers", lr.stacked_powers, lambda g: ((_randn(g, 2, 2), 3), {}), arrays=(0,), ints=(1,))
    for fname in ("population_risk", "risk_gradient", "claim1_gradient_printed", "risk_hessian"):
        add(f"linear_rnn.{fname}", getattr(lr, fname), lin, arrays=(0, 1, 2, 3), ints=(4,))
    add("linear_rnn.sigma_min", lr.sigma_min, lambda g: ((_randn(g, 3, 3),), {}))
    add("linear_rnn.classify", lr.classify, lambda g: ((list(_randn(g, 4)),), {}), arrays=(0,))
    add("linear_rnn.data_moments", lr.data_moments,
        lambda g: (([_randn(g, 2, 2), _randn(g, 2, 2)], [0.5, 0.5], [_randn(g, 2, 2), _randn(g, 2, 2)]), {}),
        arrays=("0.0", 1, "2.1"))
    add("linear_rnn.expected_loss", lr.expected_loss,
        lambda g: ((_randn(g, 2, 2), _randn(g, 2, 2), _randn(g, 2, 4), [_randn(g, 2, 2)], [1.0], [_randn(g, 3, 2)]),
                   {}), arrays=(0, 1, 2, "3.0", "5.0"))

    add("linear_rnn.refine_critical_point", lr.refine_critical_point, lin, arrays=(0, 1, 2, 3), ints=(4,))
    add("linear_rnn.find_critical_points", lr.find_critical_points,
        lambda g: (lin(g, False)[0], {"starts": 2, "digits": 20}), arrays=(0, 1, 2), ints=(3, "starts", "digits"))
    add("linear_rnn.global_minimum", lr.global_minimum,
        lambda g: ((_randn(g, 1, 1), _randn(g, 1, 2), np.eye(2), 2), {"starts": 2, "digits": 20}),
        arrays=(0, 1, 2), ints=(3,), scalable=False)  # exact (SymPy) at n = 1: 1e300 inputs take seconds, not wrong

    # --------------------------------------------------------------- sizes only
    from orthoverify.param import householder_flops, svd_flops, unitary_flops

    for fname, k in (("rnn_parameter_count", 3), ("svdrnn_parameter_count", 5), ("ornn_parameter_count", 4),
                     ("lstm_parameter_count", 3), ("svdrnn_parameter_shapes", 5)):
        add(f"svd.{fname}", getattr(svd, fname), lambda g, _k=k: ((4, 3, 2, 2, 2)[:_k], {}), arrays=(),
            ints=tuple(range(k)))
    add("svd.theorem3_printed", svd.theorem3_printed, lambda g: ((_orth(g, n), 2, 2), {}), ints=(1, 2), scalable=False)
    add("cayley.init_angles", cy.init_angles, lambda g: ((np.random.default_rng(0), n), {}), arrays=(), ints=(1,))
    add("unitary.init_h0_bound", un.init_h0_bound, lambda g: ((n,), {}), arrays=(), ints=(0,))
    add("unitary.modrelu_real_indices", un.modrelu_real_indices, lambda g: ((n,), {}), arrays=(), ints=(0,))
    add("unitary_rank.rank_bound", unitary_rank.rank_bound, lambda g: ((n,), {}), arrays=(), ints=(0,))
    add("householder_flops.count_algorithm1", householder_flops.count_algorithm1, lambda g: ((n, 3), {}), arrays=(),
        ints=(0, 1))
    add("svd_flops.count_hprod", svd_flops.count_hprod, lambda g: ((n, 3), {}), arrays=(), ints=(0, 1))
    add("unitary_flops.count_urnn_apply", unitary_flops.count_urnn_apply, lambda g: ((n,), {}), arrays=(), ints=(0,))
    add("unitary_flops.bluestein_length", unitary_flops.bluestein_length, lambda g: ((n + 1,), {}), arrays=(),
        ints=(0,))

    # --------------------------------------------------------------- nn
    def module(cls: Any, *a: Any, **k: Any) -> None:
        name = f"nn.{cls.__name__}"

        def fwd(x: Any) -> Any:
            return cls(*a, **k)(x)

        def rinv(w: Any) -> Any:
            return cls(*a, **k).right_inverse(w)

        xs = cls(*a, **k).x_shape
        add(f"{name}.forward", fwd, lambda g: ((_t(_randn(g, *xs)),), {}),
            None if cls is onn.SVDParametrization else _ortho())
        if cls is onn.URNNUnitary:
            weight = lambda g: _t(un.embed_matrix(_unitary(g, n)))  # noqa: E731 - the 2n x 2n real form
        else:
            weight = lambda g: _t(_orth(g, n, det=1))  # noqa: E731 - reachable with the default D = I
        add(f"{name}.right_inverse", rinv, lambda g: ((weight(g),), {}), scalable=False)
        add(f"{name}.strict.right_inverse", lambda w: cls(*a, strict=True, **k).right_inverse(w),
            lambda g: ((weight(g),), {}))
        add(f"{name}()", cls, lambda g: ((n,), {}), arrays=(), ints=(0,))

    for cls in (onn.HouseholderOrthogonal, onn.ScaledCayleyOrthogonal, onn.SVDParametrization, onn.URNNUnitary):
        module(cls, n)
    add("nn.SVDParametrization.svd", lambda m1, m2, s, r: onn.SVDParametrization(n, m1, m2, s, r),
        lambda g: ((2, 2, 1.0, 0.5), {}), arrays=(2, 3), ints=(0, 1), scalable=False)
    add("nn.ScaledCayleyOrthogonal.d", lambda d: onn.ScaledCayleyOrthogonal(n, d), lambda g: (([1, -1, 1, 1],), {}),
        scalable=False)

    # --------------------------------------------------------------- testing
    AE = (AssertionError,)
    add("testing.assert_orthogonal", testing.assert_orthogonal, lambda g: ((_orth(g, n),), {}), allowed=AE)
    add("testing.assert_unitary", testing.assert_unitary, lambda g: ((_unitary(g, n),), {}), allowed=AE)
    add("testing.assert_allclose_ratio", testing.assert_allclose_ratio,
        lambda g: ((np.ones(n), np.ones(n) + 1e-17), {}), allowed=AE)
    add("testing.assert_skew_symmetric", testing.assert_skew_symmetric, lambda g: ((_skew(g, n),), {}), allowed=AE)
    add("testing.assert_gradients_match", testing.assert_gradients_match,
        lambda g: ((lambda x: (x * x).sum(), _t(_randn(g, n))), {}), allowed=AE, arrays=(1,))

    # --------------------------------------------------------------- samples
    for fname in ("haar_orthogonal", "random_skew", "random_permutation", "random_signs", "upper_positive",
                  "rational_skew", "rational_orthogonal", "rational_upper", "haar_unitary", "structured_unitaries",
                  "rational_unitary", "random_signed_permutation"):
        add(f"samples.{fname}", getattr(samples, fname), lambda g: ((np.random.default_rng(0), n), {}), arrays=(),
            ints=(1,))
    add("samples.near_identity", samples.near_identity, lambda g: ((np.random.default_rng(0), n, 0.1), {}),
        arrays=(), ints=(1,))
    add("samples.reflection_vectors", samples.reflection_vectors, lambda g: ((np.random.default_rng(0), n, 3), {}),
        arrays=(), ints=(1, 2))
    add("samples.rational_matrix", samples.rational_matrix, lambda g: ((np.random.default_rng(0), n, 3), {}),
        arrays=(), ints=(1, 2))
    add("samples.rational_vectors", samples.rational_vectors, lambda g: ((np.random.default_rng(0), n, 3), {}),
        arrays=(), ints=(1, 2))
    add("samples.cayley", samples.cayley, lambda g: ((_skew(g, n),), {}), _ortho())
    add("samples.reflection_sizes", samples.reflection_sizes, lambda g: ((n,), {}), arrays=(), ints=(0,))
    add("samples.haar_orthogonal_det", samples.haar_orthogonal_det,
        lambda g: ((np.random.default_rng(0), n, -1), {}), arrays=(), ints=(1, 2))
    add("samples.quarter_turns", samples.quarter_turns, lambda g: ((n,), {}), arrays=(), ints=(0,))
    add("samples.dct_orthogonal", samples.dct_orthogonal, lambda g: ((n,), {}), arrays=(), ints=(0,))
    add("samples.signed_permutations", lambda k: list(itertools.islice(samples.signed_permutations(k), 10)),
        lambda g: ((2,), {}), arrays=(), ints=(0,))

    # --------------------------------------------------------------- backends
    add("backends.get_backend", get_backend, lambda g: (("numpy-float64",), {}), arrays=(), scalable=False,
        strs=(0,))
    add("backends.get_backend.device", get_backend, lambda g: (("torch-float64",), {"device": "cpu"}), arrays=(),
        scalable=False, strs=(0, "device"))
    for fname in ("reflection", "scaled_cayley", "modrelu"):
        mod = {"reflection": hh, "scaled_cayley": cy, "modrelu": un}[fname]
        base = next(t for t in T if t.name.endswith(f".{fname}"))
        add(f"{base.name}.backend", getattr(mod, fname),
            lambda g, _b=base: (_b.make(g)[0], {"backend": "numpy-float64"}), arrays=(), scalable=False,
            strs=("backend",))
    for bname in ("numpy-float64", "numpy-float32", "torch-float64", "torch-float32"):
        add(f"backends.{bname}.asarray", get_backend(bname).asarray, lambda g: ((_randn(g, n, 2),), {}),
            nonfinite="passthrough")
        add(f"backends.{bname}.check_array", lambda x, _b=bname: get_backend(_b).check_array(x, name="x"),
            lambda g: ((_randn(g, n, 2),), {}))
    return T


# =============================================================================== mutations
def _as_array(x: Any) -> np.ndarray | None:
    if isinstance(x, torch.Tensor):
        return None
    if isinstance(x, np.ndarray) and x.dtype.kind in "fc":
        return x
    if isinstance(x, list) and x and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x):
        return np.asarray(x, dtype=np.float64)
    return None


def _get(args: tuple[Any, ...], kw: dict[str, Any], key: int | str) -> Any:
    if isinstance(key, int):
        return args[key]
    if "." in key:
        i, j = (int(p) for p in key.split("."))
        return args[i][j]
    return kw[key]


def _set(args: tuple[Any, ...], kw: dict[str, Any], key: int | str, v: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    a, k = list(args), dict(kw)
    if isinstance(key, int):
        a[key] = v
    elif "." in key:
        i, j = (int(p) for p in key.split("."))
        inner = list(a[i])
        inner[j] = v
        a[i] = inner
    else:
        k[key] = v
    return tuple(a), k


def array_keys(t: Target, args: tuple[Any, ...], kw: dict[str, Any]) -> list[int | str]:
    if t.arrays is not None:
        return list(t.arrays)
    keys: list[int | str] = [i for i, v in enumerate(args) if isinstance(v, (np.ndarray, torch.Tensor))]
    keys += [k for k, v in kw.items() if isinstance(v, (np.ndarray, torch.Tensor))]
    return keys


def _like(v: Any) -> tuple[tuple[int, ...], bool, bool]:
    """(shape, is torch, is complex) of a valid argument."""
    if isinstance(v, torch.Tensor):
        return tuple(v.shape), True, v.is_complex()
    arr = np.asarray(v)
    return tuple(arr.shape), False, np.iscomplexobj(arr)


KEEP_TYPE = frozenset(("empty", "empty_last", "scalar", "rank_up", "rank_down", "longer", "nan", "inf", "int"))
"""Mutations that keep a torch argument a torch tensor (the rest change its type on purpose)."""


def _hostile(v: Any, kind: str) -> Any:
    out = _hostile_value(v, kind)
    if isinstance(v, torch.Tensor) and kind in KEEP_TYPE:
        return torch.as_tensor(np.asarray(out))
    return out


def _hostile_value(v: Any, kind: str) -> Any:
    shape = _like(v)[0]
    base = np.asarray(_np(v).real, dtype=np.float64) if shape else np.float64(1.5)
    if kind == "str":
        return np.full(shape or (2,), "x")
    if kind == "numstr":
        return np.vectorize(repr)(base) if base.size else base.astype(str)
    if kind == "object":
        out = np.empty(shape or (2,), dtype=object)
        out[...] = None
        return out
    if kind == "object_numbers":
        return base.astype(object)
    if kind == "meta":
        return torch.empty(shape, dtype=torch.float64, device="meta")
    if kind in ("bfloat16", "float16", "float32_tensor", "float64_tensor", "complex_tensor"):
        dt = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32_tensor": torch.float32,
              "float64_tensor": torch.float64, "complex_tensor": torch.complex128}[kind]
        return torch.tensor(base).to(dt)
    if kind == "requires_grad":
        return torch.tensor(base).requires_grad_(True)
    if kind == "grad_list":
        flat = [torch.tensor(float(x), dtype=torch.float64, requires_grad=True) for x in base.reshape(-1)]
        if base.ndim <= 1:
            return flat
        return [flat[i * shape[-1] : (i + 1) * shape[-1]] for i in range(len(flat) // shape[-1])]
    if kind == "empty":
        return np.zeros((0,) * max(len(shape), 1))
    if kind == "empty_last":
        return np.zeros((*shape[:-1], 0)) if shape else np.zeros(0)
    if kind == "scalar":
        return np.float64(1.5)
    if kind == "py_scalar":
        return 1.5
    if kind == "rank_up":
        return base[None]
    if kind == "rank_down":
        return base.reshape(-1)[:1].reshape(()) if base.ndim <= 1 else base[0]
    if kind == "longer":
        return np.concatenate([base, base[:1]], axis=0) if base.ndim else np.ones(2)
    if kind == "nan":
        out = base.astype(np.float64).copy().reshape(-1) if base.ndim else np.array([np.nan])
        out[0] = np.nan
        return out.reshape(base.shape) if base.ndim else out[0]
    if kind == "inf":
        out = base.astype(np.float64).copy().reshape(-1) if base.ndim else np.array([np.inf])
        out[0] = np.inf
        return out.reshape(base.shape) if base.ndim else out[0]
    if kind == "complex":
        return base + 1j
    if kind == "bool":
        return np.ones(shape or (2,), dtype=bool)
    if kind == "int":
        return np.ones(shape, dtype=np.int64)
    if kind == "none":
        return None
    if kind == "dict":
        return {"a": 1}
    if kind == "ragged":
        return [[1.0, 2.0], [3.0]]
    if kind == "float128":
        return base.astype(np.longdouble)
    raise KeyError(kind)


HOSTILE = ("str", "numstr", "object", "object_numbers", "meta", "bfloat16", "float16", "float32_tensor",
           "float64_tensor", "complex_tensor", "requires_grad", "grad_list", "empty", "empty_last", "scalar",
           "py_scalar", "rank_up", "rank_down", "longer", "nan", "inf", "complex", "bool", "int", "none", "dict",
           "ragged", "float128")
BAD_INTS: tuple[Any, ...] = (-1, 0, 1, 2.5, "3", None, True, np.int64(3), 10**30)
BAD_STRS: tuple[Any, ...] = ("", "bogus", ",", "mpmath-0", "mpmath-x", "mpmath-10", "flint-1000000000", "mpmath-1e9",
                            "torch-float16", "numpy-float64 ", "cuda:9", "meta", None, 3, b"numpy-float64", ["cpu"])


def _scale(v: Any, s: float) -> Any:
    with np.errstate(over="ignore"):
        return _scaled(v, s)


def _scaled(v: Any, s: float) -> Any:
    if isinstance(v, torch.Tensor) and v.is_floating_point():
        return v.detach() * s
    if isinstance(v, torch.Tensor) and v.is_complex():
        return v.detach() * s
    if isinstance(v, np.ndarray) and v.dtype.kind in "fc":
        return v * s
    if isinstance(v, float):
        return v * s
    if isinstance(v, list) and v and all(isinstance(x, (np.ndarray, torch.Tensor)) for x in v):
        return [_scaled(x, s) for x in v]
    return v


@dataclass(frozen=True)
class Case:
    target: str
    mutation: str  # "valid", "<key>:<kind>", "<key>:int=<v>", "scale=<s>", "<key>:scale=<s>"

    def __str__(self) -> str:
        return f"{self.target} [{self.mutation}]"


def cases_of(t: Target, rng_seed: int = 0) -> Iterator[Case]:
    args, kw = t.make(np.random.default_rng(rng_seed))
    yield Case(t.name, "valid")
    keys = array_keys(t, args, kw)
    for key in keys:
        for kind in HOSTILE:
            yield Case(t.name, f"{key}:{kind}")
    for key in t.ints:
        for i in range(len(BAD_INTS)):
            yield Case(t.name, f"{key}:int#{i}")
    for key in t.strs:
        for i in range(len(BAD_STRS)):
            yield Case(t.name, f"{key}:str#{i}")
    if t.scalable:
        for s in EXTREMES:
            yield Case(t.name, f"scale={s!r}")
            if len(keys) > 1:
                for key in keys:
                    yield Case(t.name, f"{key}:scale={s!r}")


def _parse_key(s: str) -> int | str:
    return int(s) if s.isdigit() else s


def build(t: Target, mutation: str, rng_seed: int = 0) -> tuple[tuple[Any, ...], dict[str, Any]]:
    args, kw = t.make(np.random.default_rng(rng_seed))
    if mutation == "valid":
        return args, kw
    if mutation.startswith("scale="):
        s = float(mutation.split("=", 1)[1])
        for key in array_keys(t, args, kw):
            args, kw = _set(args, kw, key, _scale(_get(args, kw, key), s))
        return args, kw
    key_s, what = mutation.split(":", 1)
    key = _parse_key(key_s)
    if what.startswith("scale="):
        return _set(args, kw, key, _scale(_get(args, kw, key), float(what.split("=", 1)[1])))
    if what.startswith("int#"):
        return _set(args, kw, key, BAD_INTS[int(what[4:])])
    if what.startswith("str#"):
        return _set(args, kw, key, BAD_STRS[int(what[4:])])
    return _set(args, kw, key, _hostile(_get(args, kw, key), what))


# =============================================================================== outcomes
def _floats(x: Any, depth: int = 0) -> Iterator[Any]:
    """Every float array or number inside a result (tuples, lists, dicts, dataclasses, modules)."""
    if depth > 6 or x is None:
        return
    if isinstance(x, torch.Tensor):
        if x.device.type != "meta" and (x.is_floating_point() or x.is_complex()):
            yield x.detach()
        return
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "fc":
            yield x
        elif x.dtype == object and x.size:
            for v in x.reshape(-1):
                yield from _floats(v, depth + 1)
        return
    if isinstance(x, (float, complex, np.floating, np.complexfloating)):
        yield x
        return
    if isinstance(x, torch.nn.Module):
        for p in list(x.parameters()) + list(x.buffers()):
            yield from _floats(p, depth + 1)
        return
    if hasattr(x, "re") and hasattr(x, "im"):
        yield from _floats(x.re, depth + 1)
        yield from _floats(x.im, depth + 1)
        return
    if isinstance(x, dict):
        for v in x.values():
            yield from _floats(v, depth + 1)
        return
    if isinstance(x, (list, tuple)):
        for v in x:
            yield from _floats(v, depth + 1)
        return
    if is_dataclass(x) and not isinstance(x, type):
        for f in fields(x):
            yield from _floats(getattr(x, f.name), depth + 1)
        return
    if type(x).__module__.startswith("mpmath"):  # no float range: only NaN and Inf are non-finite
        import mpmath

        if not mpmath.isfinite(x):
            yield math.nan


def all_finite(x: Any, *, inf_ok: bool = False) -> bool:
    """True when no float inside x is NaN (or infinite, unless ``inf_ok`` allows +inf)."""
    for v in _floats(x):
        if isinstance(v, torch.Tensor):
            bad = torch.isnan(v) if inf_ok and not v.is_complex() else ~torch.isfinite(v)
            if bool(bad.any()):
                return False
        else:
            a = np.asarray(v)
            if not bool(np.all(~np.isnan(a) if inf_ok and a.dtype.kind == "f" else np.isfinite(a))):
                return False
    return True


def _inputs_finite(args: tuple[Any, ...], kw: dict[str, Any]) -> bool:
    try:
        return all_finite(list(args) + list(kw.values()))
    except Exception:
        return True


@dataclass(frozen=True)
class Outcome:
    case: Case
    status: str  # ok, raw, nan, nonfinite-out, wrong
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def run_case(t: Target, mutation: str, rng_seed: int = 0) -> Outcome:
    case = Case(t.name, mutation)
    try:
        args, kw = build(t, mutation, rng_seed)
    except Exception as exc:
        return Outcome(case, "harness", f"{type(exc).__name__}: {exc}")
    finite_in = _inputs_finite(args, kw)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                res = t.fn(*args, **kw)
    except OrthoverifyError as exc:
        return Outcome(case, "ok", f"{type(exc).__name__}: {exc}"[:200])
    except t.allowed as exc:  # documented (testing: AssertionError)
        return Outcome(case, "ok", f"{type(exc).__name__}"[:200])
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        return Outcome(case, "raw", f"{type(exc).__module__}.{type(exc).__name__}: {exc}"[:300])
    if not all_finite(res, inf_ok=t.nonfinite == "inf") and not (t.nonfinite == "passthrough" and not finite_in):
        return Outcome(case, "nan" if finite_in else "nonfinite-out", "result holds NaN or Inf")
    whole = mutation == "valid" or mutation.startswith("scale=")  # every input valid, or all scaled alike
    if t.check is not None and whole:
        try:
            r = t.check(res, args, kw)
        except Exception as exc:
            return Outcome(case, "harness", f"check failed to run: {type(exc).__name__}: {exc}")
        if not r <= CHECK_THRESHOLD:
            return Outcome(case, "wrong", f"test ratio {r:.3g} > {CHECK_THRESHOLD:g}")
    return Outcome(case, "ok")


_TARGETS: list[Target] | None = None


def targets() -> list[Target]:
    global _TARGETS
    if _TARGETS is None:
        _TARGETS = _targets()
    return _TARGETS


def target(name: str) -> Target:
    return next(t for t in targets() if t.name == name)


def sweep(names: list[str] | None = None) -> list[Outcome]:
    out = []
    for t in targets():
        if names and not any(t.name.startswith(n) for n in names):
            continue
        for c in cases_of(t):
            out.append(run_case(t, c.mutation))
    return out


def main(argv: list[str]) -> int:
    import time

    torch.manual_seed(0)
    t0 = time.perf_counter()
    outs = sweep(argv or None)
    dt = time.perf_counter() - t0
    bad = [o for o in outs if not o.ok]
    for o in bad:
        print(f"{o.status:14s} {o.case}: {o.detail}")
    counts = Counter(o.status for o in outs)
    fns = len({o.case.target for o in outs})
    print(f"{len(outs)} calls to {fns} targets in {dt:.1f}s: {dict(sorted(counts.items()))}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
