"""Inputs of the svd claims of Sec. 6 (svd.claim1, svd.theorem5, svd.corollary1): the covariance
families, rational arrays, finite distributions for the risk, gradient cases by profile, the
linear-RNN instance of a recorded case, and the instances whose critical points Theorem 5's
search and Corollary 1's pull-back examine. The maths is :mod:`orthoverify.param.linear_rnn`."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import Backend
from orthoverify.claims._common import exact_backend as _sympy
from orthoverify.claims._common import rational_array
from orthoverify.claims.svd._shared import effort
from orthoverify.engine.checks import Case, RunContext
from orthoverify.param import linear_rnn as lr

SIGMA_KINDS = ("random", "identity", "rank_deficient", "diagonal_with_zero", "rank_one")


def float_norm(b: Backend, x: Any) -> float:
    return float(np.linalg.norm(b.to_numpy(x)))


def sigma_float(rng: np.random.Generator, m: int, kind: str) -> np.ndarray:
    """A symmetric PSD m x m matrix: random full rank, I, rank m - 1, diagonal with a zero, rank 1."""
    if kind == "identity":
        return np.eye(m)
    if kind == "diagonal_with_zero":
        d = rng.uniform(0.2, 2.0, size=m)
        d[rng.integers(m)] = 0.0
        return np.diag(d)
    rank = {"random": m, "rank_deficient": max(m - 1, 1), "rank_one": 1}[kind]
    f = rng.standard_normal((m, rank))
    return f @ f.T / rank


def sigma_exact(rng: np.random.Generator, m: int, kind: str) -> np.ndarray:
    """The exact (rational) counterpart of :func:`sigma_float`: F F' with rational F."""
    if kind == "identity":
        return np.array(sympy.eye(m).tolist(), dtype=object)
    if kind == "diagonal_with_zero":
        d = [sympy.Rational(int(rng.integers(1, 9)), int(rng.integers(1, 4))) for _ in range(m)]
        d[int(rng.integers(m))] = sympy.Integer(0)
        return np.array(sympy.diag(*d).tolist(), dtype=object)
    rank = {"random": m, "rank_deficient": max(m - 1, 1), "rank_one": 1}[kind]
    f = sympy.Matrix(m, rank, lambda i, j: sympy.Rational(int(rng.integers(-3, 4)), int(rng.integers(1, 3))))
    return np.array((f * f.T).tolist(), dtype=object)


def instance_problem(b: Backend, case: Case) -> lr.Problem:
    """The validated (Y, A, Sigma, t) of a recorded instance, in b's arithmetic."""
    return lr.problem(b.asarray(case["Y"]), b.asarray(case["A"]), b.asarray(case["Sigma"]), int(case["t"]), backend=b)


def critical_near(b: Backend, pb: lr.Problem, w0: Any) -> tuple[Any, Any, float, list[Any], bool]:
    """Newton from W0 to the critical point W_c of R it stands for: (W_c, ||grad R(W_c)||, how far
    it moved relative to ||W0||, the Hessian's eigenvalues at W_c, whether W_c is one: within 1e-8
    of W0 with ||grad R|| at rounding level; else nothing is to be measured there)."""
    w, gn = lr.refine_critical_point(w0, pb.y, pb.a, pb.sigma, pb.t, backend=b)
    moved = float_norm(b, w - w0) / (1.0 + float_norm(b, w0))
    eig = lr.hessian_eigenvalues(pb.hessian(w), b)
    return w, gn, moved, eig, float(gn) <= 1e3 * pb.n * pb.n * b.eps * lr.gradient_scale(pb, w) and moved <= 1e-8


def nstr(v: Any, digits: int) -> str:
    import mpmath

    return str(mpmath.nstr(v, digits, strip_zeros=True)) if not isinstance(v, str) else v


HAND_BUILT_1D: Case = {"Y": [["1"]], "A": [["1/10", "1"]], "Sigma": [["1", "0"], ["0", "1"]], "t": 2}
"""R(w) = (w - 1/10)^2 + (w^2 - 1)^2: two wells, the one at w < 0 higher."""


def exact_1d(case: Case) -> list[lr.CriticalPoint]:
    s = _sympy()
    pb = instance_problem(s, case)
    return lr.exact_critical_points_1d(pb)


def spurious_1d(points: Sequence[lr.CriticalPoint]) -> list[tuple[lr.CriticalPoint, Any]]:
    """(point, R - R_min) for every strict local minimum above the global minimum, both away from
    singular W (|w| > 0)."""
    if not points:
        return []
    best = min(points, key=lambda cp: cp.risk)
    if not best.sigma_min > 0:
        return []
    return [
        (cp, cp.risk - best.risk) for cp in points if cp.kind == "min" and cp.risk - best.risk > 0 and cp.sigma_min > 0
    ]


def instance_float(rng: np.random.Generator, n: int, t: int, kind: str) -> dict[str, Any]:
    return {
        "Y": rng.standard_normal((n, n)),
        "A": rng.standard_normal((n, n * t)),
        "Sigma": sigma_float(rng, n * t, kind),
        "t": t,
    }


def search_instances(ctx: RunContext) -> list[tuple[str, dict[str, Any], int]]:
    """(label, instance, starts): a t = 1 control (R is then a convex quadratic: only global
    minima) and random n = 2 instances with t = 2, 3 (n = 1 is enumerated exactly instead)."""
    rng = ctx.rng("instances")
    starts = effort(ctx).theorem5_search_starts
    count = effort(ctx).theorem5_random_search_instances
    out: list[tuple[str, dict[str, Any], int]] = [("control n=2, t=1", instance_float(rng, 2, 1, "random"), 4)]
    kinds = ("identity", "random", "diagonal_with_zero")
    for i in range(count):
        t = 2 + (i // 2) % 2
        kind = kinds[i % len(kinds)] if i % 2 == 0 else "random"
        out.append((f"random n=2, t={t}, Sigma {kind}", instance_float(rng, 2, t, kind), starts))
    return out


def _weights(rng: np.random.Generator, n: int, d: int, t: int, exact: bool) -> tuple[np.ndarray, ...]:
    """W (n x n), Y (d x n) and A (d x nt): small rationals when exact, else Gaussian, W scaled by 0.8 / sqrt(n)."""
    if exact:
        return rational_array(rng, (n, n), 2, 2), rational_array(rng, (d, n)), rational_array(rng, (d, n * t))
    return (
        rng.standard_normal((n, n)) * 0.8 / math.sqrt(n),
        rng.standard_normal((d, n)),
        rng.standard_normal((d, n * t)),
    )


def gradient_case(rng: np.random.Generator, n: int, d: int, t: int, kind: str, exact: bool) -> Case:
    w, y, a = _weights(rng, n, d, t, exact)
    sigma = sigma_exact(rng, n * t, kind) if exact else sigma_float(rng, n * t, kind)
    return {"W": w, "Y": y, "A": a, "Sigma": sigma, "t": t}


def gradient_cases(
    ctx: RunContext, pairs: Sequence[tuple[int, int]], *, square: bool, exact: bool, per: int
) -> Iterator[Case]:
    """``per`` cases for each (n, t): d = n (and, unless ``square``, d = n + 1 every other case),
    Sigma cycling through SIGMA_KINDS; one generator for the whole sequence."""
    rng = ctx.rng()
    k = 0
    for n, t in pairs:
        for _ in range(per):
            d = n if square or k % 2 == 0 else n + 1
            yield gradient_case(rng, n, d, t, SIGMA_KINDS[k % len(SIGMA_KINDS)], exact)
            k += 1


def risk_case(rng: np.random.Generator, n: int, d: int, t: int, k_points: int, exact: bool) -> Case:
    """A finite distribution: k_points inputs X_k (n x t) with probabilities p_k, and given X_k
    the noise +eta_k or -eta_k with probability 1/2 each (so E[eta | X] = 0)."""
    if exact:
        raw = [int(rng.integers(1, 6)) for _ in range(k_points)]
        p = np.array([sympy.Rational(r, sum(raw)) for r in raw], dtype=object)
        x = rational_array(rng, (k_points, n, t))
        e = rational_array(rng, (k_points, d))
    else:
        p = rng.dirichlet(np.ones(k_points))
        x = rng.standard_normal((k_points, n, t))
        e = rng.standard_normal((k_points, d)) * 0.5
    w, y, a = _weights(rng, n, d, t, exact)
    eta = np.stack([e, -e], axis=1)  # (k_points, 2, d)
    return {"W": w, "Y": y, "A": a, "X": x, "p": p, "eta": eta}


def exact_pairs(ctx: RunContext) -> list[tuple[int, int]]:
    """(n, t) with n, t in 1..3; the quick profile leaves out the slowest, n = t = 3."""
    pairs = [(n, t) for n in ctx.profile.exact_sizes if n <= 3 for t in (1, 2, 3)]
    return pairs if effort(ctx).claim1_exact_n3_t3 else [p for p in pairs if p != (3, 3)]


def cases_grad_exact(ctx: RunContext) -> Iterator[Case]:
    """First the smallest instance: n = d = t = 1, W = Y = Sigma = 1, A = 0, so R(w) = w^2."""
    one = np.array([[sympy.Integer(1)]], dtype=object)
    yield {"W": one, "Y": one, "A": np.array([[sympy.Integer(0)]], dtype=object), "Sigma": one, "t": 1}
    # on the quick profile n = t = 1 already refutes; a few more sizes show it is no accident
    pairs = effort(ctx).claim1_printed_exact_pairs or exact_pairs(ctx)
    yield from gradient_cases(ctx, pairs, square=True, exact=True, per=1)


def cases_grad_exact_general(ctx: RunContext) -> Iterator[Case]:
    yield from gradient_cases(ctx, exact_pairs(ctx), square=False, exact=True, per=1)


def float_cases(ctx: RunContext, *, square: bool) -> Iterator[Case]:
    ns = (1, 2, 3, *(n for n in ctx.profile.sizes if 3 < n <= 8 and effort(ctx).claim1_float_n_above_3))
    yield from gradient_cases(
        ctx, [(n, t) for n in ns for t in (1, 2, 3)], square=square, exact=False, per=ctx.profile.cases
    )


def fd_cases(ctx: RunContext, *, square: bool) -> Iterator[Case]:
    per = effort(ctx).claim1_fd_cases_per_size
    yield from gradient_cases(ctx, [(n, t) for n in (1, 2, 3) for t in (1, 2, 3)], square=square, exact=False, per=per)
