"""The svd family's kit: its paper, the Claim constructors that fill it in, its effort per profile
(one table of named fields), the input families (random vectors, reflection vectors of
increasing length recorded as one padded matrix, SVD factors) and the measures that Theorems 2,
4 and 3 share with their proofs' claims."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.claims._common import norm_scale
from orthoverify.claims._inputs import orthogonal_input, structured_orthogonal_cases
from orthoverify.engine.checks import Case, Quantity, RunContext
from orthoverify.engine.model import Claim, Paper
from orthoverify.engine.ratios import Measure, residual, worst
from orthoverify.engine.ratios import flag as _flag
from orthoverify.engine.templates import Agreement, Cases, per_profile, printed_and_corrected, repeated
from orthoverify.param import svd as sv
from orthoverify.param.svd_flops import NK, NM, NMM

PAPER = "svd"
PAPER_INFO = Paper(
    key=PAPER,
    authors="Zhang, Lei, Dhillon",
    title="Stabilizing Gradients for Deep Neural Networks via Efficient SVD Parameterization",
    venue="ICML 2018",
    short="svdRNN",
)
claim = functools.partial(Claim, paper=PAPER)
"""A claim of this paper."""
twins = functools.partial(printed_and_corrected, paper=PAPER)
"""A printed claim of this paper and its ``.corrected`` twin."""


@dataclass(frozen=True, kw_only=True)
class Effort:
    """Per-profile effort of the svd family's bespoke checks, beside what engine.profiles sets;
    the defaults are the default profile's."""

    parameter_count_largest_n: int = 24  # parameter_count: the largest n of the grid
    claim1_exact_n3_t3: bool = True  # claim1: the exact gradients include n = t = 3
    claim1_printed_exact_pairs: list[tuple[int, int]] | None = None  # claim1: printed gradient exact sizes (None: all)
    claim1_float_n_above_3: bool = True  # claim1: the float gradients also for n = 4..8
    claim1_fd_cases_per_size: int = 2  # claim1: central-difference cases per size
    theorem5_random_exact_instances: int = 10  # theorem5: random exact n = 1 instances
    theorem5_search_starts: int = 30  # theorem5: Newton starts per searched instance
    theorem5_random_search_instances: int = 6  # theorem5: random n = 2 search instances
    # flops: the largest n of each size grid (variables -> n)
    flops_grid_largest_n: dict[tuple[str, ...], int] = field(default_factory=lambda: {NK: 10, NMM: 7, NM: 10})


effort = per_profile(  # thorough: what it adds to default
    quick=Effort(
        parameter_count_largest_n=12,
        claim1_exact_n3_t3=False,
        claim1_printed_exact_pairs=[(1, 2), (2, 1), (2, 2)],
        claim1_float_n_above_3=False,
        claim1_fd_cases_per_size=1,
        theorem5_random_exact_instances=4,
        theorem5_search_starts=10,
        theorem5_random_search_instances=2,
        flops_grid_largest_n={NK: 6, NMM: 5, NM: 7},
    ),
    default=Effort(),
    thorough=Effort(
        theorem5_random_exact_instances=30,
        theorem5_search_starts=100,
        theorem5_random_search_instances=16,
        flops_grid_largest_n={NK: 16, NMM: 10, NM: 14},
    ),
)


def random_vector(ctx: RunContext, rng: np.random.Generator, k: int) -> Any:
    """A nonzero length-k vector: small rationals when exact, else Gaussian."""
    if ctx.backend.exact:
        while True:
            v = samples.rational_matrix(rng, k, 1, bound=4, max_den=3).reshape(k)
            if any(x != 0 for x in v):
                return v
    return rng.standard_normal(k)


def vectors_case(ctx: RunContext, rng: np.random.Generator, n: int, k: int, zeros: float = 0.0) -> np.ndarray:
    """Random vectors of lengths k..n (each zero with probability ``zeros``) as one padded matrix."""
    vecs = []
    for j in range(k, n + 1):
        if zeros and rng.random() < zeros:
            vecs.append(np.zeros(j, dtype=object if ctx.backend.exact else float))
        else:
            vecs.append(random_vector(ctx, rng, j))
    return sv.stack_padded(vecs, n)


def q_svd_parameters(b: Backend, case: Case) -> Measure:
    """Parameters from the SVD (Theorems 2 and 4), multiplied back out."""
    w = b.asarray(case["W"], name="W")
    m, n = w.shape
    p = sv.svd_parameters(w, backend=b)
    expect = (1, n - m + 1) if m <= n else (m - n + 1, 1)
    return worst(
        residual(b, p.matrix(backend=b) - w, max(m, n), norm_scale(b, w)),
        _flag((p.k1, p.k2) == expect, f"(k1, k2) = {(p.k1, p.k2)} != {expect}"),
    )


def _from_factors(b: Backend, case: Case) -> Array:
    """M(p) with p the parameters of rational U, V and sigma (Theorems 2 and 4)."""
    u, v, s = (b.asarray(case[k], name=k) for k in ("U", "V", "sigma"))
    return sv.factor_parameters(u, s, v, backend=b).matrix(backend=b)


def _factor_product(b: Backend, case: Case) -> Array:
    """W = U diag(sigma) V' (Sigma padded to m x n)."""
    u, v, s = (b.asarray(case[k], name=k) for k in ("U", "V", "sigma"))
    return u @ sv._sigma_block(b, s, u.shape[0], v.shape[0]) @ b.transpose(v)


FACTORS = Agreement(_from_factors, _factor_product, "M(p(U, sigma, V)) - U Sigma V'")
"""Theorems 2 and 4 exactly: the parameters of U, V and sigma give W = U Sigma V'."""


def w_cases(shapes: Callable[[RunContext], list[tuple[int, int]]]) -> Cases:
    """Per shape: W = 0, a rank-one W, then random W and random W scaled by 10^(-6..6)."""
    return repeated(
        shapes,
        lambda ctx, rng, s: [{"W": rng.standard_normal(s)}, {"W": 10.0 ** rng.uniform(-6, 6) * rng.standard_normal(s)}],
        first=lambda ctx, rng, s: [
            {"W": np.zeros(s)},
            {"W": np.outer(rng.standard_normal(s[0]), rng.standard_normal(s[1]))},
        ],
    )


def _factors(ctx: RunContext, rng: np.random.Generator, shape: tuple[int, int]) -> Case:
    """Rational orthogonal U, V of random determinants and a rational sigma, its first entry 0
    (singular W; a negative or zero sigma is allowed)."""
    m, n = shape
    sig = samples.rational_matrix(rng, min(m, n), 1, bound=5, max_den=3).reshape(min(m, n))
    if min(m, n) > 1:
        sig[0] = sympy.Integer(0)
    u = samples.rational_orthogonal(rng, m, det=int(rng.choice([-1, 1])))
    return {"U": u, "V": samples.rational_orthogonal(rng, n, det=int(rng.choice([-1, 1]))), "sigma": sig}


def factor_cases(shapes: Callable[[RunContext], list[tuple[int, int]]]) -> Cases:
    return repeated(shapes, _factors)


def extremes(ctx: RunContext, rng: np.random.Generator, k: int, decades: tuple[int, int]) -> list[np.ndarray]:
    """Two random length-k vectors scaled to 10^-d and 10^d, d = ``decades`` (double, single
    precision): the ends of an exponent range a formula must survive; none in exact arithmetic."""
    d = decades[0] if ctx.backend.eps < 1e-10 else decades[1]
    return [] if ctx.backend.exact else [rng.standard_normal(k) * 10.0**e for e in (-d, d)]


def lengths(n: int) -> list[int]:
    """The reflection lengths k tried at size n: 1, 2 and n."""
    return sorted({1, 2, n} & set(range(1, n + 1)))


def gradient_sizes(ctx: RunContext, small: bool = False) -> tuple[int, ...]:
    """A gradient check's sizes: the profile's float sizes in float arithmetic, its exact sizes in
    exact and 50-digit arithmetic and where ``small`` (50-digit central differences: four products
    per parameter)."""
    few = small or ctx.backend.exact or ctx.backend.method == "high-precision"
    return ctx.profile.exact_sizes if few else ctx.profile.sizes


def theorem3_measure(assign: Callable[..., tuple[list[Array], list[Array]]]) -> Quantity:
    """||M_{k1,k2}(u, v, 1) - A|| / (n eps) with (u, v) = ``assign(A, k1, k2)``: App. A.4's
    assignment as printed (param.svd.theorem3_printed) or repaired (theorem3_parameters)."""

    def measure(b: Backend, case: Case) -> Measure:
        a = orthogonal_input(b, case)
        n = a.shape[0]
        us, vs = assign(a, int(case["k1"]), int(case["k2"]), backend=b)
        return residual(b, sv.m_k1k2(us, vs, b.asarray([1] * n), backend=b) - a, n)

    return measure


q_theorem3 = theorem3_measure(sv.theorem3_parameters)
"""Every orthogonal A is M_{k1,k2}(u, v, 1) with the (corrected) assignment of App. A.4."""
THEOREM3_RATIO = "||M_{k1,k2}(u(A), v(A), 1) - A|| / (n eps)"


def cases_theorem3(ctx: RunContext) -> Iterator[Case]:
    top = 8 if ctx.backend.method == "float" else max(ctx.profile.sizes_on(ctx.backend))
    for n in [s for s in ctx.profile.sizes_on(ctx.backend) if s <= top]:
        pairs = [(k1, k2) for k1 in range(1, n + 1) for k2 in range(1, n + 1) if k1 + k2 <= n + 2]
        for i, base in enumerate(structured_orthogonal_cases(ctx, n)):
            if (ctx.backend.exact and i > 6) or (ctx.backend.method == "high-precision" and i > 12):
                break  # every pair (k1, k2) is still covered, on fewer input families
            for k1, k2 in pairs:
                yield {**base, "k1": k1, "k2": k2}


def reflected(b: Backend, x: Mapping[str, Any]) -> Any:
    """g' H_k(u) h with eq. 1's dense reflector: the loss whose gradients Hgrad (and the Householder
    paper's Algorithm 1, one reflection) compute, by its definition."""
    return b.sum(x["g"] * (sv.reflector(x["u"], x["h"].shape[0], backend=b) @ x["h"]))


def grad_inputs(b: Backend, case: Case) -> dict[str, Array]:
    """The case's h, u and g on b, in that order."""
    return {k: b.asarray(case[k], name=k) for k in ("h", "u", "g")}
