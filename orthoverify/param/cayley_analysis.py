"""Analysis maths of the scoRNN paper's claims that is not itself a check (Helfrich, Willmott &
Ye, ICML 2018; paper key ``cayley``): the claims in ``orthoverify.claims.cayley`` judge what
these functions compute.

* :func:`admissible_signs`, :func:`every_scaling`: Theorem 3.1 enumerated, every D = diag(+-1)
  that can serve an orthogonal W (det D = det W) with its max|a_ij| and log|det(I + W D)|.
* :func:`skew_dimension`: the dimension of the skew-symmetric n x n matrices, by exact rank
  (Sec. 3.1's parameter count).
* :data:`SCORNN_CONFIGURATIONS`, :func:`scornn_parameters`, :func:`sizes_giving`: the
  experiments' scoRNN models (Sec. 5, Tables 1-3), their parameter totals, and the hidden sizes
  that would give a printed total.
* :func:`drift_experiment`: App. B's experiment, the additive scaled-Cayley update against the
  multiplicative Cayley update of W on one fixed loss.
* :func:`init_eigenvalues`, :func:`init_corrected_eigenvalues`, :func:`reflected_matches`,
  :func:`matching_distance`: Sec. 4.2's initialisation, its eigenvalues exactly, those of W D as
  printed (some rho reflected) and as corrected, and how far computed eigenvalues are from them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.errors import SingularError
from orthoverify.param import cayley as cy
from orthoverify.param._validate import orthogonality_ratio

__all__ = [
    "SCORNN_CONFIGURATIONS",
    "admissible_signs",
    "det_sign",
    "drift_experiment",
    "every_scaling",
    "log_abs_det",
    "scornn_parameters",
    "sizes_giving",
    "skew_dimension",
]


# =============================================================================== Theorem 3.1
def admissible_signs(n: int, det_sign: int) -> Iterator[tuple[int, ...]]:
    """Every D in {+-1}^n with det D = det_sign (the other half make I + W D singular, since an
    orthogonal W D of determinant -1 has the eigenvalue -1)."""
    for signs in itertools.product((1, -1), repeat=n):
        if math.prod(signs) == det_sign:
            yield signs


def det_sign(b: Backend, w: Array) -> int:
    """The sign of det W (+1 or -1 for an orthogonal W), from its float64 determinant."""
    return 1 if np.linalg.det(b.to_numpy(w)) > 0 else -1


def every_scaling(b: Backend, w: Array) -> list[tuple[tuple[int, ...], float, Any]]:
    """(D, max|a_ij|, log|det(I + W D)|) for every D of the right parity, each by its own solve."""
    n = w.shape[0]
    out = []
    eye = b.eye(n)
    for signs in admissible_signs(n, det_sign(b, w)):
        wd = w * b.asarray([list(signs)])
        try:
            a = b.solve(eye + wd, eye - wd)
        except (SingularError, np.linalg.LinAlgError):
            out.append((signs, math.inf, -math.inf))
            continue
        out.append((signs, b.to_float(b.max_abs(a)), log_abs_det(b, eye + wd)))
    return out


def log_abs_det(b: Backend, x: Array) -> Any:
    """log|det x| in b's precision (an mpf at high precision, so near-ties are resolved there)."""
    if b.family == "mpmath":
        ctx = b.ctx  # type: ignore[attr-defined]
        det = ctx.det(ctx.matrix(x.tolist()))
        return ctx.log(abs(det)) if det != 0 else ctx.ninf
    sign, logdet = np.linalg.slogdet(b.to_numpy(x))
    return float(logdet) if sign != 0 else -math.inf


# =============================================================================== parameter counts
def skew_dimension(n: int) -> int:
    """dim{A : A' = -A} = n^2 - rank of the n^2 linear conditions a_ij + a_ji = 0 (exact)."""
    rows = []
    for i in range(n):
        for j in range(n):
            r = [0] * (n * n)
            r[i * n + j] += 1
            r[j * n + i] += 1
            rows.append(r)
    return n * n - int(sympy.Matrix(rows).rank())


SCORNN_CONFIGURATIONS: tuple[dict[str, Any], ...] = (
    {"row": "copying T=1000/2000 (Sec. 5.1)", "n": 190, "m": 10, "p": 9, "printed_k": 22},
    {"row": "adding (Sec. 5.2)", "n": 170, "m": 2, "p": 1, "printed_k": 14},
    {"row": "MNIST (Tables 1, 3)", "n": 170, "m": 1, "p": 10, "printed_k": 16},
    {"row": "MNIST (Tables 1, 3)", "n": 360, "m": 1, "p": 10, "printed_k": 69},
    {"row": "MNIST (Tables 1, 3)", "n": 512, "m": 1, "p": 10, "printed_k": 137},
    {"row": "TIMIT (Table 2)", "n": 224, "m": 129, "p": 129, "printed_k": 83},
    {"row": "TIMIT (Table 2)", "n": 322, "m": 129, "p": 129, "printed_k": 135},
    {"row": "TIMIT (Table 2)", "n": 425, "m": 129, "p": 129, "printed_k": 200},
)
"""scoRNN configurations the experiments state: task, hidden size n, inputs m, outputs p, and the
printed total in thousands."""


def scornn_parameters(row: Mapping[str, Any], a_count: int) -> int:
    """A's weights + U (n x m) + modReLU bias (n) + V (p x n) + output bias (p)."""
    n, m, p = int(row["n"]), int(row["m"]), int(row["p"])
    return a_count + n * m + n + p * n + p


def sizes_giving(row: Mapping[str, Any], thousands: int) -> tuple[int, int] | None:
    """The range of hidden sizes n (2..1999) whose total, with A's n(n-1)/2 weights and the row's
    inputs and outputs, rounds to ``thousands`` thousand (None when no n does)."""
    fit = [k for k in range(2, 2000) if round(scornn_parameters({**row, "n": k}, k * (k - 1) // 2) / 1000) == thousands]
    return (fit[0], fit[-1]) if fit else None


# =============================================================================== App. B
def drift_experiment(b: Backend, n: int, steps: int, seed: int, lr: float = 1e-2) -> dict[str, Any]:
    """Both updates on the same fixed loss L(W) = ||W X - Y||_F^2 / (2n): the additive
    scaled-Cayley update of A, and the multiplicative Cayley update of W (Wisdom et al.),
    with ||W'W - I||_F / (n eps) recorded at steps 1, 2, 5, 10, 20, ..., 10^4."""
    rng = np.random.default_rng(seed)
    x = b.asarray(rng.standard_normal((n, n)))
    y = b.asarray(rng.standard_normal((n, n)))
    a = b.asarray(samples.random_skew(rng, n, 0.1))
    d = tuple([1] * (n // 2) + [-1] * (n - n // 2))
    w_mult = cy.scaled_cayley(a, d, backend=b)
    lr_s = b.scalar(lr)
    marks = {k for k in (m * 10**e for e in range(5) for m in (1, 2, 5)) if k <= steps} | {steps}
    rec: dict[str, list[float]] = {"step": [], "additive": [], "multiplicative": [], "loss_add": [], "loss_mult": []}
    for k in range(1, steps + 1):
        w = cy.scaled_cayley(a, d, backend=b, threshold=math.inf)
        g = (w @ x - y) @ b.transpose(x) / n
        a = a - lr_s * cy.cayley_gradient(a, d, g, backend=b, threshold=math.inf)
        gm = (w_mult @ x - y) @ b.transpose(x) / n
        w_mult = cy.stiefel_cayley_step(w_mult, gm, lr, backend=b)
        if k in marks:
            w_now = cy.scaled_cayley(a, d, backend=b, threshold=math.inf)
            rec["step"].append(k)
            rec["additive"].append(orthogonality_ratio(w_now, b))
            rec["multiplicative"].append(orthogonality_ratio(w_mult, b))
            rec["loss_add"].append(b.to_float(b.sum((w_now @ x - y) ** 2)) / (2 * n))
            rec["loss_mult"].append(b.to_float(b.sum((w_mult @ x - y) ** 2)) / (2 * n))
    return rec


# ----------------------------------------------------------------------------- Sec. 4.2's initialisation
def init_eigenvalues(s_values: Sequence[Any], n: int) -> list[Any]:
    """Eigenvalues of the Cayley transform of the Sec. 4.2 A (exact): c_j +- i sin t_j with
    c_j = (1 - s_j^2)/(1 + s_j^2), and 1 for odd n."""
    out = []
    for s in s_values:
        c, sn = (1 - s * s) / (1 + s * s), 2 * s / (1 + s * s)
        out += [c + sympy.I * sn, c - sympy.I * sn]
    return out + [sympy.Integer(1)] * (n % 2)


def init_corrected_eigenvalues(eigs: Sequence[Any], d: Sequence[int]) -> list[Any]:
    """The eigenvalues of W D as corrected: a block with both signs flipped has its pair reflected
    across the imaginary axis, a block with one sign flipped has eigenvalues +1 and -1, a flipped
    trailing 1 becomes -1."""
    n = len(d)
    roots: list[Any] = []
    for k in range(n // 2):
        pair = eigs[2 * k : 2 * k + 2]
        flips = (d[2 * k] < 0) + (d[2 * k + 1] < 0)
        roots += pair if flips == 0 else [-sympy.conjugate(e) for e in pair] if flips == 2 else [1, -1]
    if n % 2:
        roots.append(-1 if d[-1] < 0 else 1)
    return roots


def monic(roots: Sequence[Any], lam: Any) -> Any:
    """The monic polynomial in ``lam`` with these roots, expanded."""
    return sympy.expand(sympy.prod([lam - r for r in roots]))


def reflected_matches(charpoly: Any, eigs: Sequence[Any], rho: int, lam: Any) -> bool:
    """Is ``charpoly`` the polynomial of ``eigs`` with some ``rho`` of them reflected across the
    imaginary axis (mu -> -conj(mu)), as Sec. 4.2 prints?"""
    for chosen in itertools.combinations(range(len(eigs)), rho):
        roots = [-sympy.conjugate(e) if i in chosen else e for i, e in enumerate(eigs)]
        if sympy.expand(charpoly - monic(roots, lam)) == 0:
            return True
    return False


def matching_distance(computed: np.ndarray, predicted: np.ndarray) -> float:
    """The largest distance in a greedy nearest matching of two eigenvalue multisets."""
    left = list(computed)
    worst_d = 0.0
    for p in predicted:
        k = int(np.argmin([abs(p - q) for q in left]))
        worst_d = max(worst_d, abs(p - left.pop(k)))
    return worst_d
