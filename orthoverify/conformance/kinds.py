"""What a target may claim to compute: each kind's signature, conventions, domain and reference.

A target of kind K is a callable taking torch tensors as the kind's signature says. Parameters
are drawn as float64 NumPy arrays (``Params``), turned into tensors of the dtype under test by
:meth:`Kind.args`; the reference evaluates the same parameters with orthoverify's own
implementation on any backend (float64, or 50 digits for finite differences).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from orthoverify import samples
from orthoverify.backends import Backend
from orthoverify.param import cayley as cy
from orthoverify.param import householder as hh
from orthoverify.param import unitary as un

Params = Mapping[str, np.ndarray]


@dataclass(frozen=True)
class Kind:
    """A conformance kind: how to call a target, what it must return, and the reference."""

    name: str
    signature: str
    conventions: str
    draw: Callable[[np.random.Generator, int, float], dict[str, np.ndarray]]
    """Parameters of size n at magnitude scale (a random point of the declared domain)."""
    args: Callable[[Params, torch.dtype, str], tuple[Any, ...]]
    out_shape: Callable[[Params], tuple[int, ...]]
    reference: Callable[[Params, Backend], Any] | None
    """The output computed by orthoverify on a backend (None: the kind fixes no formula)."""
    differentiable: tuple[str, ...]
    """Parameters the gradient check differentiates with respect to."""
    inverse: Callable[[np.ndarray], dict[str, np.ndarray] | None] | None = None
    """Parameters that give a target matrix (the reference inverse map), for coverage."""
    sizes: tuple[int, ...] = (2, 3, 4, 6)
    orthogonal_output: bool = True
    """Every parameter value of the domain must give an orthogonal output."""
    condition: Callable[[Params], float] | None = None
    """The condition number that scales forward and orthogonality ratios (LAPACK's solve ratio
    ||x - x*|| / (n eps kappa ||x||)): the accuracy any backward-stable algorithm can promise."""

    def out_dtype(self, dtype: torch.dtype) -> torch.dtype:
        return dtype


def _t(x: np.ndarray, dtype: torch.dtype, device: str) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x, dtype=np.float64), dtype=dtype, device=device)


# ------------------------------------------------------------------------------ orthogonal-map
def _draw_free(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
    return {"X": rng.standard_normal((n, n)) * scale}


ORTHOGONAL_MAP = Kind(
    name="orthogonal-map",
    signature="f(X: Tensor[n, n]) -> Tensor[n, n]",
    conventions=(
        "X is an unconstrained real parameter (any finite values, as training can reach); the output must be "
        "orthogonal for every X. No formula is fixed, so there is no forward reference: the checks are "
        "orthogonality over the whole domain, gradients against finite differences of the target itself, "
        "coverage of O(n) by optimisation (which of det +1 and det -1 is reached), batches, dtypes, determinism."
    ),
    draw=_draw_free,
    args=lambda p, dt, dev: (_t(p["X"], dt, dev),),
    out_shape=lambda p: p["X"].shape,
    reference=None,
    differentiable=("X",),
)


# ------------------------------------------------------------------------------ householder-product
def householder_reference(p: Params, b: Backend) -> Any:
    """prod_j (I - 2 u_j u_j' / u_j'u_j) over the columns of U, the first column leftmost."""
    u = b.asarray(p["U"])
    n, m = u.shape
    w = b.eye(n)
    for j in range(m):
        w = w @ hh.reflection(u[:, j], n, backend=b)
    return w


def _draw_householder(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
    m = int(rng.integers(1, n + 1))
    u = np.tril(rng.standard_normal((n, m))) * scale
    for j in range(m):
        if u[j, j] == 0.0:
            u[j, j] = scale
    return {"U": u}


def householder_inverse(q: np.ndarray) -> dict[str, np.ndarray]:
    """U (lower trapezoidal, m = n or n - 1) with prod_j H(u_j) = Q, from Theorem 1's vectors."""
    vectors = hh.inverse(q, backend="numpy-float64")
    n = q.shape[0]
    cols = [np.concatenate([np.zeros(n - len(v)), np.asarray(v, dtype=float)]) for v in reversed(vectors[1:])]
    if float(vectors[0][0]) < 0:  # H_1(-1) = diag(1, ..., 1, -1): the reflection along e_n
        cols.append(np.eye(n)[:, -1])
    return {"U": np.stack(cols, axis=1)}


HOUSEHOLDER_PRODUCT = Kind(
    name="householder-product",
    signature="f(U: Tensor[n, m]) -> Tensor[n, n], 1 <= m <= n",
    conventions=(
        "Q = H(u_1) H(u_2) ... H(u_m) with H(u) = I - 2 u u'/(u'u) and u_j column j of U, the first column "
        "leftmost (Q acts on column vectors: Q h applies H(u_m) first). U is lower trapezoidal as in eq. 9 of "
        "the Householder paper (entries above the diagonal are zero); every column is nonzero."
    ),
    draw=_draw_householder,
    args=lambda p, dt, dev: (_t(p["U"], dt, dev),),
    out_shape=lambda p: (p["U"].shape[0], p["U"].shape[0]),
    reference=householder_reference,
    differentiable=("U",),
    inverse=householder_inverse,
)


# ------------------------------------------------------------------------------ scaled-cayley
def _draw_cayley(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
    a = np.triu(rng.standard_normal((n, n)), 1) * scale
    d = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return {"A": a - a.T, "d": d}


def cayley_reference(p: Params, b: Backend) -> Any:
    return cy.scaled_cayley(b.asarray(p["A"]), [int(x) for x in p["d"]], backend=b)


def cayley_condition(p: Params) -> float:
    """cond_2(I + A): the scaled Cayley transform is a solve with I + A, accurate to kappa eps."""
    n = p["A"].shape[0]
    return max(1.0, float(np.linalg.cond(np.eye(n) + p["A"])))


def cayley_inverse(q: np.ndarray) -> dict[str, np.ndarray]:
    res = cy.scaled_cayley_inverse(q, backend="numpy-float64")
    return {"A": np.asarray(res.a, dtype=float), "d": np.asarray(res.d, dtype=float)}


SCALED_CAYLEY = Kind(
    name="scaled-cayley",
    signature="f(A: Tensor[n, n], d: Tensor[n]) -> Tensor[n, n]",
    conventions=(
        "W = (I + A)^-1 (I - A) D with A skew-symmetric and D = diag(d), d_i in {+1, -1} (scoRNN, eq. 1): D "
        "multiplies on the right. A is given as the full skew matrix; d in the same dtype as A. Ratios are "
        "scaled by cond(I + A), the accuracy a backward-stable solve promises."
    ),
    draw=_draw_cayley,
    args=lambda p, dt, dev: (_t(p["A"], dt, dev), _t(p["d"], dt, dev)),
    out_shape=lambda p: p["A"].shape,
    reference=cayley_reference,
    differentiable=("A",),
    inverse=cayley_inverse,
    condition=cayley_condition,
)


# ------------------------------------------------------------------------------ complex-to-real
def _draw_complex(rng: np.random.Generator, n: int, scale: float) -> dict[str, np.ndarray]:
    w = (
        samples.haar_unitary(rng, n)
        if rng.random() < 0.5
        else rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    )
    return {"re": np.real(w) * scale, "im": np.imag(w) * scale}


def complex_reference(p: Params, b: Backend) -> Any:
    return un.embed_matrix((b.asarray(p["re"]), b.asarray(p["im"])), backend=b)


def _complex_args(p: Params, dt: torch.dtype, dev: str) -> tuple[Any, ...]:
    cdt = torch.complex64 if dt == torch.float32 else torch.complex128
    return (torch.complex(_t(p["re"], dt, dev), _t(p["im"], dt, dev)).to(cdt),)


COMPLEX_TO_REAL = Kind(
    name="complex-to-real",
    signature="f(W: complex Tensor[n, n]) -> real Tensor[2n, 2n]",
    conventions=(
        "[[Re W, -Im W], [Im W, Re W]]: the real matrix acting on (Re h, Im h) stacked as one column as W acts "
        "on h (eq. 5 of the Householder paper, Sec. 3.1 of the uRNN paper). complex64 in, float32 out; "
        "complex128 in, float64 out. Unitary W must give an orthogonal output."
    ),
    draw=_draw_complex,
    args=_complex_args,
    out_shape=lambda p: (2 * p["re"].shape[0], 2 * p["re"].shape[0]),
    reference=complex_reference,
    differentiable=("re", "im"),
    orthogonal_output=False,
)


KINDS: dict[str, Kind] = {k.name: k for k in (ORTHOGONAL_MAP, HOUSEHOLDER_PRODUCT, SCALED_CAYLEY, COMPLEX_TO_REAL)}
"""Kinds implemented in this release (svd-parametrisation and unitary-composition are not yet)."""
