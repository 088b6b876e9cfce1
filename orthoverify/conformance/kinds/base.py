"""What every kind declares, and the helpers the kinds share.

A target of kind K is a callable taking torch tensors as the kind's signature says. Parameters
are drawn as float64 NumPy arrays (``Params``), turned into tensors of the dtype under test by
:meth:`Kind.args`; the reference evaluates the same parameters with orthoverify's own
implementation on any backend (float64, or 50 digits for finite differences). Each kind is one
module of this package, with its draw, reference, condition, inverse, special points and
coverage targets together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from orthoverify import samples
from orthoverify.backends import Backend
from orthoverify.isolation.declare import Params
from orthoverify.isolation.program import make_view

Points = list[tuple[str, dict[str, np.ndarray]]]
"""Named parameter points: (the point's name, its parameters)."""


def no_points(dtype: str) -> Points:
    return []


def orthogonal_targets(rng: np.random.Generator, n: int) -> list[tuple[str, np.ndarray]]:
    """O(n)'s coverage targets: a Haar matrix, the same with the other determinant, -I, a cyclic shift."""
    q = samples.haar_orthogonal(rng, n)
    q2 = q.copy()
    q2[:, 0] *= -1
    return [
        ("haar", q),
        ("haar, other determinant", q2),
        ("-I", -np.eye(n)),
        ("cyclic shift", np.roll(np.eye(n), 1, axis=0)),
    ]


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
    allowance: str = "1 (a backward-stable evaluation is accurate to a modest multiple of n eps)"
    """What ``condition`` is, as the evidence states it: the error a correct evaluation may have."""
    scaled: tuple[str, ...] = ()
    """Parameters the magnitude of a draw applies to (the search scales and shrinks these only)."""
    ordinary: tuple[float, float] = (1e-8, 1e8)
    """The ordinary domain: magnitudes max|x_ij| of the scaled parameters that a trained model
    reaches (zero included). A failure only outside it (subnormal or near-overflow parameters) is
    "fragile", a lower finding than "refuted"; the shrinker moves a counterexample towards
    magnitude 1, never further out."""
    tril: tuple[str, ...] = ()
    """Parameters read on eq. 9's lower-trapezoidal pattern (entries above the diagonal are not
    parameters: gradients and tangents there are not compared)."""
    skew: tuple[str, ...] = ()
    """Skew-symmetric parameters: a_ij and a_ji = -a_ij move together (finite differences along
    a_ij - a_ji, skew tangents), and only the skew part of a gradient is defined."""
    linear: bool = False
    """The map is linear in its parameters: its second derivative is zero, so the second-order
    checks (float64 and float32) are not planned."""
    complex_input: bool = False
    """The target takes one complex argument built from the parameters ``re`` and ``im``: its
    gradient and tangent are re + i im."""
    complex_output: bool = False
    """The target returns a complex n x n matrix; checks compare its real 2n x 2n block form
    [[Re W, -Im W], [Im W, Re W]] (orthogonal exactly when W is unitary)."""
    coverage_targets: Callable[[np.random.Generator, int], list[tuple[str, np.ndarray]]] = orthogonal_targets
    """Matrices of size n of the set the kind claims to cover (default: O(n), both determinants)."""
    coverage_statement: str = "every orthogonal matrix is reached"
    coverage_by_optimisation: bool = False
    """Without an inverse map, coverage is measured by optimisation (L-BFGS towards Haar targets)."""
    specials: Callable[[str], Points] = no_points
    """Deterministic parameter points (per dtype) the search tries before drawing at random: zero
    and identity parameters, exact +-1 diagonals, zero columns, an eigenvalue -1 of Q, repeated
    singular values, n = 1 and 2, subnormal and near-overflow magnitudes (where the domain has them)."""

    def out_dtype(self, dtype: torch.dtype) -> torch.dtype:
        if self.complex_output:
            return torch.complex64 if dtype == torch.float32 else torch.complex128
        return dtype

    def view_shape(self, p: Params) -> tuple[int, ...]:
        """Shape of the output as the checks compare it (the real block form of a complex output)."""
        shape = self.out_shape(p)
        return tuple(2 * s for s in shape) if self.complex_output else shape

    def view(self, out: torch.Tensor) -> torch.Tensor:
        """The output as the checks compare it: real, the block form of a complex W (the same
        view the target's process takes of it, :func:`~orthoverify.isolation.program.make_view`)."""
        return _BLOCK_FORM(out) if self.complex_output else out


_BLOCK_FORM = make_view(True)


def tensor(x: np.ndarray, dtype: torch.dtype, device: str) -> torch.Tensor:
    """A parameter as the target receives it: a tensor of ``dtype`` on ``device``."""
    return torch.as_tensor(np.asarray(x, dtype=np.float64), dtype=dtype, device=device)


def tensors(*names: str) -> Callable[[Params, torch.dtype, str], tuple[Any, ...]]:
    """A kind's ``args``: the parameters ``names`` as tensors, in that order."""
    return lambda p, dt, dev: tuple(tensor(p[k], dt, dev) for k in names)


def square(name: str, times: int = 1) -> Callable[[Params], tuple[int, int]]:
    """A kind's ``out_shape``: ``times`` n square, n the number of rows of the parameter ``name``."""
    return lambda p: (times * p[name].shape[0], times * p[name].shape[0])


def tiny_huge(dtype: str) -> tuple[float, float]:
    """A subnormal magnitude and one near overflow whose squares do not overflow, per dtype."""
    return (1e-310, 1e150) if dtype == "float64" else (1e-40, 1e18)


def lower_trapezoidal(rng: np.random.Generator, n: int, scale: float) -> np.ndarray:
    """n x m columns (m random in 1..n) on eq. 9's lower-trapezoidal pattern, nonzero pivots."""
    m = int(rng.integers(1, n + 1))
    u = np.tril(rng.standard_normal((n, m))) * scale
    for j in range(m):
        if u[j, j] == 0.0:
            u[j, j] = scale
    return u
