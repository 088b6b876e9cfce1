"""Claims of the SVD-parametrisation paper (svdRNN; Zhang, Lei & Dhillon, ICLR 2018 submission;
key ``svd``).

Evidence: the maps of :mod:`orthoverify.param.svd` in float32/float64 (NumPy, torch), 50-digit
mpmath and exact SymPy arithmetic; the theorems constructively (the preimage is built by the
proofs' own constructions and multiplied out) and at the edge of their size conditions; the
proofs' index bookkeeping executed as printed; Algorithms 1-3 as printed against torch autograd,
50-digit central differences and SymPy's exact derivatives; the parameter counts and Table 3
recomputed exactly. The flop counts (``svd.flops``) and the linear-RNN landscape
(``svd.claim1``, ``svd.theorem5``, ``svd.corollary1``) live in their own modules and are
registered here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import FLOAT_BACKENDS, Array, Backend, get_backend
from orthoverify.claims._common import exact_backend as _sympy
from orthoverify.claims._common import symbol_array as _symbols
from orthoverify.claims._inputs import orthogonal_input, structured_orthogonal_cases
from orthoverify.claims._svd_flops import FLOPS_CLAIMS
from orthoverify.claims.svd_landscape import LANDSCAPE_CLAIMS
from orthoverify.engine.checks import (
    Case,
    FunctionCheck,
    Outcome,
    PropertyCheck,
    RunContext,
    SearchCheck,
    SymbolicCheck,
)
from orthoverify.engine.model import Claim, Paper
from orthoverify.engine.ratios import Measure, agreement, residual, scaled, worst
from orthoverify.engine.ratios import flag as _flag
from orthoverify.engine.reference import central_gradient, exact_gradient, fd_eps
from orthoverify.errors import ShapeError, ZeroVectorError
from orthoverify.param import householder as hh
from orthoverify.param import svd as sv

PAPER = "svd"
PAPER_INFO = Paper(
    key=PAPER,
    authors="Zhang, Lei, Dhillon",
    title="Stabilizing Gradients for Deep Neural Networks via Efficient SVD Parameterization",
    venue="ICML 2018",
    short="svdRNN",
)
FLOAT = FLOAT_BACKENDS
FLOAT_HP = (*FLOAT_BACKENDS, "mpmath")
ALL = (*FLOAT_HP, "sympy")
TORCH = ("torch-float32", "torch-float64")
EXACT = ("sympy",)


def _sizes(ctx: RunContext) -> tuple[int, ...]:
    if ctx.backend.exact:
        return ctx.profile.exact_sizes
    return ctx.profile.hp_sizes if ctx.backend.method == "high-precision" else ctx.profile.sizes


def _fnorm(b: Backend, x: Array) -> float:
    return 1.0 if b.exact else b.to_float(b.norm(x))


def _random_vector(ctx: RunContext, rng: np.random.Generator, k: int) -> Any:
    """A nonzero length-k vector: small rationals when exact, else Gaussian."""
    if ctx.backend.exact:
        while True:
            v = samples.rational_matrix(rng, k, 1, bound=4, max_den=3).reshape(k)
            if any(x != 0 for x in v):
                return v
    return rng.standard_normal(k)


def _padded(vectors: list[Any], n: int) -> np.ndarray:
    """Vectors of lengths k, k+1, ..., n as the columns of an n x m matrix, zeros on top."""
    cols = []
    for v in vectors:
        v = np.asarray(v, dtype=object)
        cols.append(np.concatenate([np.zeros(n - v.shape[0], dtype=object), v]))
    if not cols:
        return np.zeros((n, 0))
    return np.stack(cols, axis=1)


def _unpadded(b: Backend, mat: Array, k: int) -> list[Array]:
    """Inverse of :func:`_padded`: column i holds x_{k+i} in its last k + i entries."""
    n = mat.shape[0]
    return [mat[n - (k + i) :, i] for i in range(mat.shape[1])]


def _vectors_case(ctx: RunContext, rng: np.random.Generator, n: int, k: int, zeros: float = 0.0) -> np.ndarray:
    vecs = []
    for j in range(k, n + 1):
        if zeros and rng.random() < zeros:
            vecs.append(np.zeros(j, dtype=object if ctx.backend.exact else float))
        else:
            vecs.append(_random_vector(ctx, rng, j))
    return _padded(vecs, n)


# =============================================================================== eq. 1
def q_reflector(b: Backend, case: Case) -> Measure:
    """H = H^n_k(u) is symmetric, an involution, and has trace n - 2 (u != 0) or is I (u = 0).
    A symmetric involution has eigenvalues +-1; the trace then says exactly one is -1."""
    n = int(case["n"])
    u = b.asarray(case["u"], name="u")
    h = sv.reflector(u, n, backend=b)
    eye = b.eye(n)
    if b.is_zero(u):
        return residual(b, h - eye, n)
    tr = b.sum(b.diagonal(h)) - (n - 2)
    return worst(
        residual(b, h - b.transpose(h), n),
        residual(b, h @ h - eye, n),
        residual(b, b.stack([tr]), n),
    )


def cases_reflector(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in _sizes(ctx):
        for k in sorted({1, 2, n} & set(range(1, n + 1))):
            yield {"n": n, "u": np.zeros(k)}
            for _ in range(ctx.profile.cases):
                yield {"n": n, "u": _random_vector(ctx, rng, k)}
            if not ctx.backend.exact:
                for e in (-30, 30) if ctx.backend.eps < 1e-10 else (-15, 15):
                    yield {"n": n, "u": rng.standard_normal(k) * 10.0**e}


def sym_reflector(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    b = _sympy()
    for n in ctx.profile.symbolic_sizes:
        u = _symbols("u", n)
        h = sv.reflector(u, n, backend=b)
        eye = b.eye(n)
        yield f"n={n}: H' - H", b.transpose(h) - h
        yield f"n={n}: H H - I", h @ h - eye
        yield f"n={n}: trace(H) - (n - 2)", b.sum(b.diagonal(h)) - (n - 2)
        yield f"n={n}: H u + u", h @ u + u


REFLECTOR = Claim(
    id="svd.reflector",
    paper=PAPER,
    where="eq. 1",
    kind="identity",
    statement=(
        "H^n_k(u) = diag(I_{n-k}, I_k - 2uu'/||u||^2) (I_n for u = 0) is symmetric and orthogonal (H^2 = I); "
        "for u != 0 it has n - 1 eigenvalues 1 and one eigenvalue -1"
    ),
    checks=(
        PropertyCheck(
            "structure", q_reflector, cases_reflector, ALL, "max(||H - H'||, ||H^2 - I||, |tr H - (n-2)|) / (n eps)"
        ),
        SymbolicCheck("symbolic", sym_reflector),
    ),
    notes="A symmetric involution has eigenvalues +-1; trace n - 2 makes exactly one of them -1.",
)


# =============================================================================== Prop. 1
def _qr_measure(b: Backend, bb: Array) -> Measure:
    """B = M_1(u) R with R upper triangular and non-negative diagonal, positive when B is
    nonsingular (decided exactly by det B on exact backends, else by the construction itself)."""
    n = bb.shape[0]
    res = sv.householder_qr(bb, backend=b)
    diag = b.diagonal(res.r)
    nonneg = all(not b.positive(-d) for d in diag.reshape(-1))
    rec = residual(b, sv.m_k(res.vectors, n, backend=b) @ res.r - bb, n, _fnorm(b, bb))
    if b.exact:
        singular = sympy.Matrix(bb).det() == 0
        positive = all(b.positive(d) for d in diag.reshape(-1))
        return worst(rec, _flag(nonneg and positive != singular, "diag(R) >= 0, > 0 exactly when B is nonsingular"))
    return worst(rec, _flag(nonneg, "a negative diagonal entry of R"))


def q_prop1_printed(b: Backend, case: Case) -> Measure:
    """Prop. 1 as printed: a positive diagonal. For singular B no R can have one: every
    B = Q R with Q orthogonal has det R = +-det B = 0."""
    bb = b.asarray(case["B"], name="B")
    if b.exact and sympy.Matrix(bb).det() == 0:
        return Measure(
            math.inf,
            "det B = 0: every R with B = QR (Q orthogonal) has det R = 0, a zero diagonal entry",
            error=math.inf,
        )
    res = sv.householder_qr(bb, backend=b)
    pos = all(b.positive(d) for d in b.diagonal(res.r).reshape(-1))
    return worst(_qr_measure(b, bb), _flag(pos, "a zero diagonal entry of R"))


def q_prop1_corrected(b: Backend, case: Case) -> Measure:
    return _qr_measure(b, b.asarray(case["B"], name="B"))


def _exact_qr_inputs(ctx: RunContext, rng: np.random.Generator, n: int, singular: bool) -> np.ndarray:
    """Q R with rational Q and R, so every column norm met by the construction is rational."""
    q = samples.rational_orthogonal(rng, n, det=1 if rng.random() < 0.5 else -1)
    r = samples.rational_upper(rng, n)
    if singular:  # the last pivot: earlier zeros make later column norms irrational (slow radicals)
        r[n - 1, n - 1] = sympy.Integer(0)
    return np.array((sympy.Matrix(q) * sympy.Matrix(r)).tolist(), dtype=object)


def cases_prop1(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    exact = ctx.backend.exact
    yield {"B": np.zeros((1, 1))}
    yield {"B": np.array([[1.0, 1.0], [1.0, 1.0]])}
    for n in _sizes(ctx):
        yield {"B": np.zeros((n, n))}
        yield {"B": -np.eye(n)}
        for _ in range(ctx.profile.cases):
            if exact:
                yield {"B": _exact_qr_inputs(ctx, rng, n, singular=False)}
                yield {"B": _exact_qr_inputs(ctx, rng, n, singular=True)}
            else:
                g = rng.standard_normal((n, n))
                yield {"B": g}
                if n > 1:
                    g2 = g.copy()
                    g2[:, -1] = g2[:, 0]
                    yield {"B": g2}


def cases_prop1_nonsingular(ctx: RunContext) -> Iterator[Case]:
    for case in cases_prop1(ctx):
        b = np.asarray(case["B"], dtype=float)
        if abs(np.linalg.det(b)) > 1e-6 * max(1.0, np.linalg.norm(b)) ** b.shape[0]:
            yield case


PROPOSITION1 = Claim(
    id="svd.proposition1",
    paper=PAPER,
    where="Prop. 1, App. A.1",
    kind="existence",
    statement=(
        "for every B in R^{n x n} there are an upper triangular R with positive diagonal and u_i in R^i "
        "(u_i = 0 allowed) with B = H_n(u_n)...H_1(u_1) R"
    ),
    checks=(
        PropertyCheck(
            "exact_all_inputs",
            q_prop1_printed,
            cases_prop1,
            EXACT,
            "B = M_1(u) R with diag(R) > 0",
            method="exhaustive",
        ),
        PropertyCheck(
            "float_nonsingular",
            q_prop1_corrected,
            cases_prop1_nonsingular,
            FLOAT_HP,
            "||M_1(u) R - B|| / (n eps ||B||)",
        ),
    ),
    notes=(
        "False for singular B (B = 0 with n = 1 already): det R = +-det B = 0 forces a zero on R's diagonal. "
        "The proof's base case (u_1 = 0 if B_11 > 0, else nonzero) and its step (||B_1|| > 0) both assume it away. "
        "Theorem 1 applies it only to orthogonal B, where it holds."
    ),
)

PROPOSITION1_CORRECTED = Claim(
    id="svd.proposition1.corrected",
    paper=PAPER,
    where="Prop. 1, App. A.1",
    kind="existence",
    statement=(
        "for every B: B = H_n(u_n)...H_1(u_1) R with R upper triangular with non-negative diagonal, "
        "positive exactly when B is nonsingular (the proof's construction u = B_1 - ||B_1|| e_1)"
    ),
    corrects="svd.proposition1",
    checks=(PropertyCheck("construction", q_prop1_corrected, cases_prop1, ALL, "||M_1(u) R - B|| / (n eps ||B||)"),),
)


# =============================================================================== Thm 1
def q_theorem1(b: Backend, case: Case) -> Measure:
    """Rebuild M_1 from the vectors of Theorem 1's construction and compare with Q."""
    q = orthogonal_input(b, case)
    n = q.shape[0]
    vecs = sv.orthogonal_parameters(q, backend=b)
    return residual(b, sv.m_k(vecs, n, backend=b) - q, n)


def q_image_orthogonal(b: Backend, case: Case) -> Measure:
    """M_1(u) is orthogonal for any vectors, zero ones included."""
    u = b.asarray(case["U"], name="U")
    n = u.shape[0]
    m = sv.m_k(_unpadded(b, u, 1), n, backend=b)
    return residual(b, b.transpose(m) @ m - b.eye(n), n)


def cases_theorem1(ctx: RunContext) -> Iterator[Case]:
    for n in _sizes(ctx):
        yield from structured_orthogonal_cases(ctx, n)


def cases_image(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in _sizes(ctx):
        for zeros in (0.0, 0.5):
            for _ in range(ctx.profile.cases):
                yield {"U": _vectors_case(ctx, rng, n, 1, zeros)}


def _orthogonal_strategy(ctx: RunContext) -> Any:
    from hypothesis import strategies as st

    from orthoverify.strategies import orthogonal_matrices

    top = max(ctx.profile.sizes)
    return st.integers(1, min(top, 12)).flatmap(lambda n: orthogonal_matrices(n).map(lambda q: {"Q": q}))


THEOREM1 = Claim(
    id="svd.theorem1",
    paper=PAPER,
    where="Thm 1, App. A.2",
    kind="coverage",
    statement="the image of M_1 (this paper's H convention, u = 0 gives I) is exactly O(n)",
    checks=(
        PropertyCheck("construction", q_theorem1, cases_theorem1, ALL, "||M_1(u(Q)) - Q|| / (n eps)"),
        PropertyCheck("image_orthogonal", q_image_orthogonal, cases_image, ALL, "||M'M - I|| / (n eps)"),
        SearchCheck("search", q_theorem1, _orthogonal_strategy, ("numpy-float64",), "||M_1(u(Q)) - Q|| / (n eps)"),
    ),
    notes="Inputs: I, -I, signs, signed permutations, det -1, near I, near -I, rotations by pi, generic.",
)


# =============================================================================== Thm 2, 4
def q_svd_parameters(b: Backend, case: Case) -> Measure:
    """Parameters from the SVD (Theorems 2 and 4), multiplied back out."""
    w = b.asarray(case["W"], name="W")
    m, n = w.shape
    p = sv.svd_parameters(w, backend=b)
    expect = (1, n - m + 1) if m <= n else (m - n + 1, 1)
    return worst(
        residual(b, p.matrix(backend=b) - w, max(m, n), _fnorm(b, w)),
        _flag((p.k1, p.k2) == expect, f"(k1, k2) = {(p.k1, p.k2)} != {expect}"),
    )


def q_factor_exact(b: Backend, case: Case) -> Measure:
    """W = U diag(sigma) V' from rational factors: the parameters of U, V and sigma give W."""
    u = b.asarray(case["U"], name="U")
    v = b.asarray(case["V"], name="V")
    s = b.asarray(case["sigma"], name="sigma")
    m, n = u.shape[0], v.shape[0]
    p = sv.factor_parameters(u, s, v, backend=b)
    w = u @ sv._sigma_block(b, s, m, n) @ b.transpose(v)
    return residual(b, p.matrix(backend=b) - w, max(m, n), _fnorm(b, w))


def _w_cases(ctx: RunContext, shapes: list[tuple[int, int]]) -> Iterator[Case]:
    rng = ctx.rng()
    for m, n in shapes:
        yield {"W": np.zeros((m, n))}
        yield {"W": np.outer(rng.standard_normal(m), rng.standard_normal(n))}
        for _ in range(ctx.profile.cases):
            yield {"W": rng.standard_normal((m, n))}
            s = 10.0 ** rng.uniform(-6, 6)
            yield {"W": s * rng.standard_normal((m, n))}


def cases_theorem2(ctx: RunContext) -> Iterator[Case]:
    yield from _w_cases(ctx, [(n, n) for n in _sizes(ctx)])


def cases_theorem4(ctx: RunContext) -> Iterator[Case]:
    sizes = _sizes(ctx)
    shapes = [(m, n) for n in sizes for m in sizes if m != n and max(m, n) <= 16]
    yield from _w_cases(ctx, shapes)


def _factor_cases(ctx: RunContext, shapes: list[tuple[int, int]]) -> Iterator[Case]:
    rng = ctx.rng()
    for m, n in shapes:
        for _ in range(ctx.profile.cases):
            p = min(m, n)
            sig = samples.rational_matrix(rng, p, 1, bound=5, max_den=3).reshape(p)
            if p > 1:
                sig[0] = sympy.Integer(0)  # singular W, and a negative or zero sigma is allowed
            yield {
                "U": samples.rational_orthogonal(rng, m, det=int(rng.choice([-1, 1]))),
                "V": samples.rational_orthogonal(rng, n, det=int(rng.choice([-1, 1]))),
                "sigma": sig,
            }


def cases_theorem2_exact(ctx: RunContext) -> Iterator[Case]:
    yield from _factor_cases(ctx, [(n, n) for n in ctx.profile.exact_sizes])


def cases_theorem4_exact(ctx: RunContext) -> Iterator[Case]:
    sizes = ctx.profile.exact_sizes
    yield from _factor_cases(ctx, [(m, n) for m in sizes for n in sizes if m != n])


def _matrix_strategy(ctx: RunContext) -> Any:
    from hypothesis import strategies as st
    from hypothesis.extra.numpy import arrays

    elems = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    shape = st.tuples(st.integers(1, 6), st.integers(1, 6))
    return shape.flatmap(lambda s: arrays(np.float64, s, elements=elems).map(lambda w: {"W": w}))


THEOREM2 = Claim(
    id="svd.theorem2",
    paper=PAPER,
    where="Thm 2, App. A.3",
    kind="coverage",
    statement="the image of M_{1,1} is all of R^{n x n}: every W = M_{1,1}(u_1..u_n, v_1..v_n, sigma)",
    checks=(
        PropertyCheck("from_svd", q_svd_parameters, cases_theorem2, FLOAT_HP, "||M_{1,1}(p(W)) - W|| / (n eps ||W||)"),
        PropertyCheck("exact_factors", q_factor_exact, cases_theorem2_exact, EXACT, "M_{1,1}(p) - U diag(s) V'"),
    ),
    notes="Zero, rank-one, singular and badly scaled W included; sigma may be zero or negative.",
)

THEOREM4 = Claim(
    id="svd.theorem4",
    paper=PAPER,
    where="Thm 4, App. A.5",
    kind="coverage",
    statement=(
        "m <= n: the image of M^{m,n}_{1,n-m+1} is all m x n matrices; m > n: the image of M^{m,n}_{m-n+1,1} is"
    ),
    checks=(
        PropertyCheck("from_svd", q_svd_parameters, cases_theorem4, FLOAT_HP, "||M(p(W)) - W|| / (max(m,n) eps ||W||)"),
        PropertyCheck("exact_factors", q_factor_exact, cases_theorem4_exact, EXACT, "M(p) - U Sigma V'"),
        SearchCheck("search", q_svd_parameters, _matrix_strategy, ("numpy-float64",), "||M(p(W)) - W|| / (eps ||W||)"),
    ),
)


# =============================================================================== dimension
def _flat_params(us: list[Any], vs: list[Any], sigma: Any) -> list[Any]:
    out: list[Any] = []
    for x in [*us, *vs]:
        out.extend(list(np.asarray(x, dtype=object).reshape(-1)))
    out.extend(list(np.asarray(sigma, dtype=object).reshape(-1)))
    return out


def _unflatten(flat: list[Any], m: int, n: int, k1: int, k2: int) -> tuple[list[Any], list[Any], Any]:
    pos = 0
    us, vs = [], []
    for j in range(k1, m + 1):
        us.append(np.array(flat[pos : pos + j], dtype=object))
        pos += j
    for j in range(k2, n + 1):
        vs.append(np.array(flat[pos : pos + j], dtype=object))
        pos += j
    return us, vs, np.array(flat[pos:], dtype=object)


def exact_jacobian(m: int, n: int, k1: int, k2: int, flat: list[Any]) -> sympy.Matrix:
    """The exact Jacobian of vec(M^{m,n}_{k1,k2}) at a rational point: column i is
    d/de M(p + e e_i) at e = 0 (SymPy, exact)."""
    b = _sympy()
    e = sympy.Symbol("_e")
    cols = []
    for i in range(len(flat)):
        moved = list(flat)
        moved[i] = moved[i] + e
        us, vs, s = _unflatten(moved, m, n, k1, k2)
        w = sv.m_rect(us, vs, s, m=m, n=n, backend=b)
        cols.append([sympy.diff(x, e).subs(e, 0) for x in w.reshape(-1)])
    return sympy.Matrix(cols).T


def _rational_point(rng: np.random.Generator, m: int, n: int, k1: int, k2: int) -> list[Any]:
    flat: list[Any] = []
    for j in [*range(k1, m + 1), *range(k2, n + 1)]:
        flat.extend(sympy.Rational(int(rng.integers(-4, 5)) or 1, int(rng.integers(1, 4))) for _ in range(j))
    # distinct singular values: a repeated one lets U and V rotate together, and the rank drops
    flat.extend(i + 1 + sympy.Rational(int(rng.integers(1, 9)), 10) for i in range(min(m, n)))
    return flat


def _radial(m: int, n: int, k1: int, k2: int, flat: list[Any]) -> list[sympy.Matrix]:
    """The scaling directions (u_j along itself): M does not depend on ||u_j||."""
    out = []
    pos = 0
    for j in [*range(k1, m + 1), *range(k2, n + 1)]:
        d = [sympy.Integer(0)] * len(flat)
        d[pos : pos + j] = flat[pos : pos + j]
        out.append(sympy.Matrix(d))
        pos += j
    return out


def fn_dimension(ctx: RunContext) -> Outcome:
    """Exact Jacobian rank of M_{1,1} at rational points is n^2, with a kernel spanned by the
    2n radial directions: the input space, modulo norms, has n^2 dimensions."""
    rng = ctx.rng()
    cases = 0
    data: dict[str, Any] = {}
    for n in [s for s in ctx.profile.symbolic_sizes if s <= 3]:
        for _ in range(max(1, ctx.profile.cases // 2)):
            flat = _rational_point(rng, n, n, 1, 1)
            jac = exact_jacobian(n, n, 1, 1, flat)
            rank = jac.rank()
            radial_ok = all((jac * d).is_zero_matrix for d in _radial(n, n, 1, 1, flat))
            cases += 1
            data[f"n={n}"] = {"parameters": len(flat), "rank": rank, "radial directions in kernel": radial_ok}
            if rank != n * n or not radial_ok or len(flat) - rank != 2 * n:
                inputs = {"n": str(n), "point": [str(x) for x in flat]}
                return Outcome(
                    False,
                    cases,
                    failure=(inputs, Measure(math.inf, f"rank {rank} (kernel {len(flat) - rank}) for n = {n}")),
                    data=data,
                )
    return Outcome(True, cases, notes="rank n^2, kernel = the 2n scaling directions", data=data)


def replay_dimension(inputs: Mapping[str, Any], b: Backend) -> Measure:
    n = int(inputs["n"])
    flat = [sympy.Rational(x) for x in inputs["point"]]
    rank = exact_jacobian(n, n, 1, 1, flat).rank()
    return Measure(0.0 if rank == n * n else math.inf, f"rank {rank}")


def q_dimension_float(b: Backend, case: Case) -> Measure:
    """torch autograd Jacobian of M_{1,1}: the n^2-th singular value is far from 0 (rank n^2)
    and J maps each scaling direction to 0 (ratio against ||J|| eps)."""
    import torch

    n = int(case["n"])
    flat0 = b.asarray(case["p"], name="p")

    def fm(p: Any) -> Any:
        us, vs, s = _split_torch(p, n)
        return sv.m_k1k2(us, vs, s, backend=b).reshape(-1)

    jac = torch.autograd.functional.jacobian(fm, flat0)
    svals = torch.linalg.svdvals(jac)
    ratio = float(svals[0] / svals[n * n - 1]) if float(svals[n * n - 1]) > 0 else math.inf
    radial = []
    pos = 0
    for j in [*range(1, n + 1), *range(1, n + 1)]:
        d = torch.zeros_like(flat0)
        d[pos : pos + j] = flat0[pos : pos + j]
        radial.append(residual(b, jac @ d, n, float(svals[0]) * float(torch.linalg.norm(d))))
        pos += j
    # conditioning of the rank decision: sigma_1 / sigma_{n^2} must stay far below 1/eps
    cond = scaled(ratio * b.eps, 1, b.eps * 1e6)
    return worst(cond, *radial)


def _split_torch(p: Any, n: int) -> tuple[list[Any], list[Any], Any]:
    pos = 0
    us, vs = [], []
    for j in range(1, n + 1):
        us.append(p[pos : pos + j])
        pos += j
    for j in range(1, n + 1):
        vs.append(p[pos : pos + j])
        pos += j
    return us, vs, p[pos:]


def cases_dimension_float(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in [s for s in ctx.profile.sizes if s <= 8]:
        for _ in range(ctx.profile.cases):
            p = rng.standard_normal(n * (n + 1) + n)
            p[-n:] = np.sort(rng.uniform(0.5, 2.0, n))[::-1] + np.arange(n)[::-1]  # distinct singular values
            yield {"n": n, "p": p}


DIMENSION = Claim(
    id="svd.dimension",
    paper=PAPER,
    where="Sec. 3, after Thm 2",
    kind="count",
    statement=(
        "M_{1,1} maps n^2 + 2n inputs onto R^{n x n}; since H(u) is invariant to ||u||, "
        "the input space has exactly n^2 dimensions"
    ),
    checks=(
        FunctionCheck(
            "exact_jacobian_rank",
            fn_dimension,
            EXACT,
            "symbolic",
            "rank of d vec(M_{1,1}) / dp",
            replay_fn=replay_dimension,
            exact=True,
        ),
        PropertyCheck(
            "float_jacobian_rank",
            q_dimension_float,
            cases_dimension_float,
            ("torch-float64",),
            "sigma_1/sigma_{n^2} of the Jacobian (units of 1e6) and ||J d_radial|| / (n eps ||J||)",
        ),
    ),
    notes="Rank n^2 = dim R^{n x n} at generic points, kernel = the 2n scaling directions (u_1, v_1 included).",
)


# =============================================================================== Thm 3
def q_theorem3(b: Backend, case: Case) -> Measure:
    """Every orthogonal A is M_{k1,k2}(u, v, 1) with the (corrected) assignment of App. A.4."""
    a = orthogonal_input(b, case)
    n = a.shape[0]
    k1, k2 = int(case["k1"]), int(case["k2"])
    us, vs = sv.theorem3_parameters(a, k1, k2, backend=b)
    ones = b.asarray([1] * n)
    return residual(b, sv.m_k1k2(us, vs, ones, backend=b) - a, n)


def q_theorem3_printed(b: Backend, case: Case) -> Measure:
    """App. A.4's assignment executed as printed (the zero range starts at k1 + k2 - 2)."""
    a = orthogonal_input(b, case)
    n = a.shape[0]
    k1, k2 = int(case["k1"]), int(case["k2"])
    us, vs = sv.theorem3_printed(a, k1, k2, backend=b)
    ones = b.asarray([1] * n)
    return residual(b, sv.m_k1k2(us, vs, ones, backend=b) - a, n)


def cases_theorem3(ctx: RunContext) -> Iterator[Case]:
    top = 8 if ctx.backend.method == "float" else max(_sizes(ctx))
    for n in [s for s in _sizes(ctx) if s <= top]:
        pairs = [(k1, k2) for k1 in range(1, n + 1) for k2 in range(1, n + 1) if k1 + k2 <= n + 2]
        for i, base in enumerate(structured_orthogonal_cases(ctx, n)):
            if (ctx.backend.exact and i > 6) or (ctx.backend.method == "high-precision" and i > 12):
                break  # every pair (k1, k2) is still covered, on fewer input families
            for k1, k2 in pairs:
                yield {**base, "k1": k1, "k2": k2}


def fn_theorem3_sharp(ctx: RunContext) -> Outcome:
    """Past the boundary (k1 + k2 = n + 3: n - 1 reflections) every M_{k1,k2}(u, v, 1) has
    eigenvalue 1 (det(M - I) = 0 exactly, at rational points and symbolically for n = 3), while
    det(-I - I) = (-2)^n != 0: -I is outside the image, so the condition cannot be relaxed."""
    b = _sympy()
    rng = ctx.rng()
    cases = 0
    top = max(ctx.profile.exact_sizes) + 2
    for n in range(3, top + 1):
        for k1 in range(1, n + 1):
            k2 = n + 3 - k1
            if not 1 <= k2 <= n:
                continue
            for _ in range(ctx.profile.cases):
                us = [_random_vector(ctx, rng, j) for j in range(k1, n + 1)]
                vs = [_random_vector(ctx, rng, j) for j in range(k2, n + 1)]
                mm = sv.m_k1k2(us, vs, b.asarray([1] * n), backend=b)
                d = sympy.Matrix(mm - b.eye(n)).det()
                cases += 1
                if d != 0:
                    inputs = {
                        "n": str(n),
                        "U": b.to_strings(b.asarray(_padded(us, n))),
                        "V": b.to_strings(b.asarray(_padded(vs, n))),
                    }
                    return Outcome(False, cases, failure=(inputs, Measure(math.inf, f"det(M - I) = {d}")))
    u = _symbols("u", 3)
    v = _symbols("v", 3)
    mm = sv.m_k1k2([u], [v], b.asarray([1, 1, 1]), backend=b)
    sym = sympy.cancel(sympy.Matrix(mm - b.eye(3)).det())
    cases += 1
    if sym != 0:
        return Outcome(False, cases, failure=({"n": "3", "symbolic": "1"}, Measure(math.inf, str(sym))))
    return Outcome(True, cases, notes=f"det(M - I) = 0 for k1 + k2 = n + 3, n = 3..{top}; symbolic for n = 3")


THEOREM3 = Claim(
    id="svd.theorem3",
    paper=PAPER,
    where="Thm 3, App. A.4",
    kind="coverage",
    statement="the image of M_{k1,k2} with sigma = 1 includes O(n) if k1 + k2 <= n + 2",
    checks=(
        PropertyCheck(
            "construction_every_k",
            q_theorem3,
            cases_theorem3,
            ALL,
            "||M_{k1,k2}(u(A), v(A), 1) - A|| / (n eps)",
            method="exhaustive",
        ),
    ),
    notes=(
        "Every (k1, k2) with k1 + k2 <= n + 2 on every input family; the preimage is App. A.4's "
        "assignment with the index slips of svd.theorem3_proof repaired. The condition is sharp: "
        "svd.theorem3_sharp."
    ),
)

THEOREM3_SHARP = Claim(
    id="svd.theorem3_sharp",
    paper=PAPER,
    where="Thm 3 (boundary; added by orthoverify)",
    kind="bound",
    statement=(
        "just past the boundary, k1 + k2 = n + 3, the image of M_{k1,k2}(., ., 1) misses O(n): "
        "every such product of n - 1 reflections has eigenvalue 1, so -I is not reached"
    ),
    checks=(
        FunctionCheck("exact_eigenvalue_one", fn_theorem3_sharp, EXACT, "symbolic", "det(M_{k1,k2} - I)", exact=True),
    ),
    notes="Cartan-Dieudonne: n - 1 reflections fix a common vector (the intersection of n - 1 hyperplanes).",
)


THEOREM3_PROOF = Claim(
    id="svd.theorem3_proof",
    paper=PAPER,
    where="App. A.4, eqs. 19-22",
    kind="identity",
    statement=(
        "the proof's assignment (k2 >= k1 - 1): u_k = a_k (k >= k1), v_{k2+k1-k-1} = a_k (k = k1-1..1), "
        "v_t = 0 (t = k2+k1-2..n), and symmetrically (21), gives M_{k1,k2}(u, v, 1) = A"
    ),
    checks=(
        PropertyCheck(
            "as_printed",
            q_theorem3_printed,
            cases_theorem3,
            ALL,
            "||M_{k1,k2}(printed u, v, 1) - A|| / (n eps)",
            method="exhaustive",
        ),
    ),
    notes=(
        "Two slips: v_{k2+k1-k-1} (length k2+k1-k-1) receives a_k (length k), which only makes sense "
        "padded with leading zeros; and the zero range starts at t = k2+k1-2, the slot just given a_1, "
        "so executed in order it erases H_1(a_1) and the product is A H_1(a_1) != A whenever a_1 != 0 "
        "(e.g. n = 2, k1 = 2, k2 = 1, A = diag(1, -1)). With padding and the range starting at "
        "k2+k1-1 the construction works (svd.theorem3_proof.corrected)."
    ),
)

THEOREM3_PROOF_CORRECTED = Claim(
    id="svd.theorem3_proof.corrected",
    paper=PAPER,
    where="App. A.4, eqs. 19-22",
    kind="identity",
    statement=(
        "with v_{k2+k1-k-1} = (0, ..., 0, a_k) and v_t = 0 for t = k2+k1-1..n (and symmetrically), "
        "M_{k1,k2}(u, v, 1) = A for every orthogonal A and k1 + k2 <= n + 2"
    ),
    corrects="svd.theorem3_proof",
    checks=(
        PropertyCheck(
            "repaired",
            q_theorem3,
            cases_theorem3,
            ALL,
            "||M_{k1,k2}(u(A), v(A), 1) - A|| / (n eps)",
            method="exhaustive",
        ),
    ),
)


# =============================================================================== Lemma 1
def q_lemma1(b: Backend, case: Case) -> Measure:
    """Columns i <= min(n-k1, n-k2) of V(k1) and V(k2) agree, for every pair k1, k2."""
    vmat = b.asarray(case["V"], name="V")
    n = vmat.shape[0]
    vecs = _unpadded(b, vmat, 1)
    vk = {k: sv.m_k(vecs[k - 1 :], n, backend=b) for k in range(1, n + 1)}
    out = [Measure(0.0, error=0.0)]
    for k1 in range(1, n + 1):
        for k2 in range(k1 + 1, n + 1):
            i = min(n - k1, n - k2)
            if i > 0:
                out.append(residual(b, vk[k1][:, :i] - vk[k2][:, :i], n))
    return worst(*out)


def cases_lemma1(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in _sizes(ctx):
        if n > 16:
            continue
        for zeros in (0.0, 0.3):
            for _ in range(ctx.profile.cases):
                yield {"V": _vectors_case(ctx, rng, n, 1, zeros)}


def fn_lemma1_sharp(ctx: RunContext) -> Outcome:
    """Exact: the columns agree up to i = n - max(k1, k2) + 1, one more than stated (Theorem 4's
    proof needs that one), and generically not beyond."""
    b = _sympy()
    rng = ctx.rng()
    cases = 0
    data: dict[str, Any] = {}
    for n in [s for s in ctx.profile.exact_sizes if s >= 2]:
        vecs = [_random_vector(ctx, rng, j) for j in range(1, n + 1)]
        vk = {k: sv.m_k(vecs[k - 1 :], n, backend=b) for k in range(1, n + 1)}
        for k1 in range(1, n + 1):
            for k2 in range(k1 + 1, n + 1):
                cases += 1
                sharp = n - k2 + 1
                same = b.is_zero(vk[k1][:, :sharp] - vk[k2][:, :sharp])
                beyond = sharp < n and not b.is_zero(vk[k1][:, sharp] - vk[k2][:, sharp])
                data[f"n={n},k1={k1},k2={k2}"] = {"stated": n - k2, "agree up to": sharp, "differs next": beyond}
                if not same:
                    inputs = {"V": b.to_strings(b.asarray(_padded(vecs, n))), "k1": str(k1), "k2": str(k2)}
                    return Outcome(False, cases, failure=(inputs, Measure(math.inf, f"column {sharp} differs")))
    return Outcome(True, cases, notes="columns agree for i <= n - max(k1, k2) + 1", data=data)


LEMMA1 = Claim(
    id="svd.lemma1",
    paper=PAPER,
    where="Lemma 1, Sec. 5",
    kind="identity",
    statement=(
        "with V(k) = H_n(v_n)...H_k(v_k): V(k1)_{*,i} = V(k2)_{*,i} for all k1, k2 in [n] and i <= min(n-k1, n-k2)"
    ),
    checks=(
        PropertyCheck("every_pair", q_lemma1, cases_lemma1, ALL, "||V(k1)_{:, :i} - V(k2)_{:, :i}|| / (n eps)"),
        FunctionCheck("exact_sharp_range", fn_lemma1_sharp, EXACT, "exhaustive", "column agreement", exact=True),
    ),
    notes=(
        "True, and not sharp: H_j fixes e_i for i <= n - j, so the columns agree up to n - max(k1, k2) + 1. "
        "Theorem 4's proof needs exactly that extra column (svd.theorem4_proof)."
    ),
)


# =============================================================================== Thm 4 proof
def q_theorem4_proof_printed(b: Backend, case: Case) -> Measure:
    """App. A.5 as printed: W = H^m_n(u_n)...H^m_1(u_1) Sigma H^n_1(v_1)...H^n_n(v_n), m < n,
    and the step to H^n_{n-m+1}(v_{n-m+1})... justified by Lemma 1 (columns i <= m - 1 only)."""
    m, n = int(case["m"]), int(case["n"])
    try:
        sv.reflector(b.asarray([1] * n), m, backend=b)
    except ShapeError:
        return Measure(math.inf, f"H^m_n(u_n) with u_n of length n = {n} > m = {m} is undefined", error=math.inf)
    lemma_cols = min(n - 1, m - 1)
    return _flag(lemma_cols >= m, f"Lemma 1 (k1 = 1, k2 = n-m+1) gives columns i <= {lemma_cols}, the proof needs {m}")


def cases_theorem4_proof(ctx: RunContext) -> Iterator[Case]:
    for n in range(2, 5):
        for m in range(1, n):
            yield {"m": m, "n": n}


def q_theorem4_proof_corrected(b: Backend, case: Case) -> Measure:
    """With H^m_m(u_m)...H^m_1(u_1) and the sharp Lemma 1 (columns i <= m): the full-V parameters
    and the last m of them give the same matrix."""
    u = b.asarray(case["U"], name="U")
    v = b.asarray(case["V"], name="V")
    s = b.asarray(case["sigma"], name="sigma")
    m, n = u.shape[0], v.shape[0]
    us = sv.orthogonal_parameters(u, backend=b)
    vs = sv.orthogonal_parameters(v, backend=b)
    full = sv.m_rect(us, vs, s, m=m, n=n, backend=b)
    cut = sv.m_rect(us, vs[n - m :], s, m=m, n=n, backend=b)
    return worst(
        residual(b, full - cut, n, _fnorm(b, full)),
        agreement(b, full, u @ sv._sigma_block(b, s, m, n) @ b.transpose(v), n),
    )


def cases_theorem4_proof_corrected(ctx: RunContext) -> Iterator[Case]:
    yield from _factor_cases(ctx, [(m, n) for n in range(2, 5) for m in range(1, n)])


THEOREM4_PROOF = Claim(
    id="svd.theorem4_proof",
    paper=PAPER,
    where="App. A.5",
    kind="identity",
    statement=(
        "for m < n: W = H^m_n(u_n)...H^m_1(u_1) Sigma H^n_1(v_1)...H^n_n(v_n) "
        "= H^m_n(u_n)...H^m_1(u_1) Sigma H^n_{n-m+1}(v_{n-m+1})...H^n_n(v_n) by Lemma 1"
    ),
    checks=(
        PropertyCheck(
            "as_printed",
            q_theorem4_proof_printed,
            cases_theorem4_proof,
            EXACT,
            "printed indices",
            method="exhaustive",
        ),
    ),
    notes=(
        "The left product must run H^m_m(u_m)...H^m_1(u_1) (u_n has length n > m), and for m > n the printed "
        "H^m_n(u_n)...H^m_{m-n+1} is an empty range when m - n + 1 > n; and Lemma 1 as stated yields columns "
        "i <= m - 1 of V, while Sigma V' uses m. The theorem stands (svd.theorem4); the proof needs the sharp "
        "lemma (svd.lemma1's exact_sharp_range)."
    ),
)

THEOREM4_PROOF_CORRECTED = Claim(
    id="svd.theorem4_proof.corrected",
    paper=PAPER,
    where="App. A.5",
    kind="identity",
    statement=(
        "for m < n: U Sigma V' = H^m_m(u_m)...H^m_1(u_1) Sigma H^n_{n-m+1}(v_{n-m+1})...H^n_n(v_n) with the "
        "vectors of U and V from Theorem 1 (the first m columns of V(1) and V(n-m+1) agree)"
    ),
    corrects="svd.theorem4_proof",
    checks=(
        PropertyCheck(
            "exact",
            q_theorem4_proof_corrected,
            cases_theorem4_proof_corrected,
            EXACT,
            "M(all v) - M(last m v), M - U Sigma V'",
        ),
    ),
)


# =============================================================================== eq. 8
def q_sigma_range(b: Backend, case: Case) -> Measure:
    """sigma = 2r(f(s) - 1/2) + sigma* computed in b lies in [sigma* - r, sigma* + r]; the excess,
    computed exactly from the values b produced, over eps (|sigma*| + r)."""
    s = b.asarray(case["s"], name="s")
    star = b.asarray([case["star"]])[0]
    r = b.asarray([case["r"]])[0]
    sig = sv.sigma_map(s, star, r, backend=b)
    exact = get_backend("mpmath-60")
    vals = [exact.asarray([x])[0] for x in b.to_strings(sig)]
    st_, rr = exact.asarray(b.to_strings(b.stack([star, r])))
    excess = max(max(v - (st_ + rr), (st_ - rr) - v, 0) for v in vals)
    scale = abs(float(st_)) + float(rr)
    if b.exact:
        return _flag(excess == 0, "sigma outside the interval")
    return scaled(float(excess) / scale, 1, b.eps)


def cases_sigma(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    s = np.array([0.0, 1e-8, -1e-8, 1.0, -1.0, 20.0, -20.0, 40.0, -40.0, 800.0, -800.0])
    for star in (1.0, 0.0, -3.0, 1e6):
        for r in (1e-3, 0.5, 1.0, 1e6):
            yield {"s": s, "star": star, "r": r}
            for _ in range(ctx.profile.cases):
                yield {"s": rng.standard_normal(8) * 10.0 ** rng.uniform(-3, 3), "star": star, "r": r}


def _sigma_strategy(ctx: RunContext) -> Any:
    from hypothesis import strategies as st

    fl = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
    return st.tuples(st.lists(fl, min_size=1, max_size=6), st.floats(-1e6, 1e6), st.floats(1e-6, 1e6)).map(
        lambda t: {"s": np.array(t[0]), "star": t[1], "r": t[2]}
    )


def sym_sigma(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    s, r, star = sympy.symbols("s r sigma_star", real=True)
    printed = 2 * r * (1 / (1 + sympy.exp(-s)) - sympy.Rational(1, 2)) + star
    yield (
        "eq. 8 - (r tanh(s/2) + sigma*)",
        sympy.simplify((printed - (r * sympy.tanh(s / 2) + star)).rewrite(sympy.exp)),
    )


SIGMA_RANGE = Claim(
    id="svd.sigma_range",
    paper=PAPER,
    where="eq. 8",
    kind="bound",
    statement="sigma_i = 2r(f(s_i) - 0.5) + sigma* (f the sigmoid) lies in [sigma* - r, sigma* + r]",
    checks=(
        PropertyCheck(
            "range", q_sigma_range, cases_sigma, (*FLOAT_HP,), "excess over the interval / (eps (|sigma*| + r))"
        ),
        SearchCheck("search", q_sigma_range, _sigma_strategy, ("numpy-float32", "numpy-float64"), "excess / eps"),
        SymbolicCheck("tanh_form", sym_sigma),
    ),
    notes=(
        "2(f(s) - 1/2) = tanh(s/2) in (-1, 1): the open interval mathematically; in floating point the "
        "sigmoid saturates and the endpoints are reached, never passed. r <= 0 is rejected (DomainError)."
    ),
)


# =============================================================================== Sec. 4 count
def fn_parameter_count(ctx: RunContext) -> Outcome:
    """The closed forms against an inventory of every parameter array, over a grid of sizes, and
    the closed form's algebra in SymPy (the extreme case m1 = m2 = n included)."""
    cases = 0
    top = 12 if ctx.profile.name == "quick" else 24
    for n in range(1, top + 1):
        for m1 in range(0, n + 1):
            for m2 in range(0, n + 1, max(1, n // 4)):
                for n_i, n_o in ((1, 1), (3, 7)):
                    cases += 1
                    inv = sum(math.prod(s) for s in sv.svdrnn_parameter_shapes(n, n_i, n_o, m1, m2).values())
                    closed = sv.svdrnn_parameter_count(n, n_i, n_o, m1, m2)
                    if inv != closed:
                        inputs = {"n": str(n), "n_i": str(n_i), "n_o": str(n_o), "m1": str(m1), "m2": str(m2)}
                        return Outcome(False, cases, failure=(inputs, Measure(math.inf, f"{closed} != {inv}")))
        rnn_inv = n * n + n * 3 + n + 7 * n
        cases += 1
        if sv.rnn_parameter_count(n, 3, 7) != rnn_inv:
            return Outcome(False, cases, failure=({"n": str(n)}, Measure(math.inf, "RNN count")))
    n, ni, no, m1, m2, j = sympy.symbols("n n_i n_o m1 m2 j", integer=True, positive=True)
    side = sympy.summation(j, (j, n - m1 + 1, n)) + sympy.summation(j, (j, n - m2 + 1, n))
    inventory = n * ni + n + no * n + n + side
    formula = (no + ni + m1 + m2 + 2) * n - (m1**2 + m2**2 - m1 - m2) / 2
    extreme = formula.subs({m1: n, m2: n}) - (no + ni + n + 3) * n
    cases += 2
    if sympy.simplify(inventory - formula) != 0 or sympy.simplify(extreme) != 0:
        return Outcome(False, cases, failure=({"symbolic": "1"}, Measure(math.inf, "symbolic identity fails")))
    return Outcome(True, cases, notes="inventory = closed form on the grid; symbolic identity and m1 = m2 = n case")


def replay_count(inputs: Mapping[str, Any], b: Backend) -> Measure:
    if "m1" not in inputs:
        return Measure(math.inf, "replay by rerunning the check")
    args = [int(inputs[k]) for k in ("n", "n_i", "n_o", "m1", "m2")]
    inv = sum(math.prod(s) for s in sv.svdrnn_parameter_shapes(*args).values())
    closed = sv.svdrnn_parameter_count(*args)
    return Measure(0.0 if inv == closed else math.inf, f"{closed} vs {inv}")


PARAMETER_COUNT = Claim(
    id="svd.parameter_count",
    paper=PAPER,
    where="Sec. 4",
    kind="count",
    statement=(
        "RNN: (n_o + n_i + n + 1) n parameters; svdRNN: (n_o + n_i + m1 + m2 + 2) n - (m1^2 + m2^2 - m1 - m2)/2, "
        "which for m1 = m2 = n is (n_o + n_i + n + 3) n"
    ),
    checks=(
        FunctionCheck(
            "inventory_and_algebra",
            fn_parameter_count,
            EXACT,
            "exhaustive",
            "closed form vs inventory",
            replay_fn=replay_count,
            exact=True,
        ),
    ),
    notes=(
        "The general svdRNN formula is garbled in the source text; it is read as the count of M, b, Y, sigma and "
        "the reflection vectors, which reproduces the printed extreme case (n_o + n_i + n + 3) n."
    ),
)


# =============================================================================== Table 3
# name, length, classes, depth, RNN, LSTM, oRNN, svdRNN (App. C, Table 3)
TABLE3: tuple[tuple[str, int, int, int, int, int, int, int], ...] = (
    ("50words", 270, 50, 27, 3058, 7218, 2426, 2850),
    ("Adiac", 176, 37, 16, 2694, 6950, 2062, 2486),
    ("ArrowHead", 251, 3, 251, 1219, 4515, 587, 1011),
    ("Beef", 470, 5, 47, 1606, 5766, 974, 1398),
    ("BeetleFly", 512, 2, 32, 1699, 6435, 1067, 1491),
    ("CBF", 128, 3, 16, 1476, 5444, 844, 1268),
    ("Coffee", 286, 2, 22, 1570, 6018, 938, 1362),
    ("Cricket X", 300, 12, 20, 1997, 6637, 1365, 1789),
    ("DistalPhalanxOutlineCorrect", 80, 2, 10, 1410, 5378, 778, 1202),
    ("DistalPhalanxTW", 80, 6, 10, 1641, 5609, 1009, 1433),
    ("ECG200", 96, 2, 12, 1410, 5378, 778, 1202),
    ("ECG5000", 140, 5, 14, 1606, 5766, 974, 1398),
    ("ECGFiveDays", 136, 2, 17, 1443, 5411, 811, 1235),
    ("FaceAll", 131, 14, 131, 1615, 4911, 983, 1407),
    ("FaceFour", 350, 4, 25, 1701, 6245, 1069, 1493),
    ("FacesUCR", 131, 14, 131, 1615, 4911, 983, 1407),
    ("Gun Point", 150, 2, 15, 1507, 5667, 875, 1299),
    ("InsectWingbeatSound", 256, 11, 16, 1996, 6732, 1364, 1788),
    ("ItalyPowerDemand", 24, 2, 6, 1315, 4899, 683, 1107),
    ("Lighting2", 637, 2, 49, 1570, 6018, 938, 1362),
    ("MiddlePhalanxOutlineCorrect", 80, 2, 10, 1410, 5378, 778, 1202),
)
N_H = 32
M_ORNN = 16
M_SVD = 8  # m = 16 reflections in all, m1 = m2 = 8 (Sec. 7.1)


def table3_counts(
    n_i: int, n_o: int, *, m_svd: int = M_SVD, m_ornn: int = M_ORNN, out_bias: bool = False, init_state: bool = False
) -> tuple[int, int, int, int]:
    """(RNN, LSTM, oRNN, svdRNN) counts with n_h = 32 under a counting convention: the paper's
    (Sec. 4) by default; ``out_bias`` adds Y's bias, ``init_state`` a learned h0 (and c0 for LSTM)."""
    extra = n_o * out_bias
    h0 = N_H * init_state
    return (
        sv.rnn_parameter_count(N_H, n_i, n_o) + extra + h0,
        sv.lstm_parameter_count(N_H, n_i, n_o) + extra + 2 * h0,
        sv.ornn_parameter_count(N_H, n_i, n_o, m_ornn) + extra + h0,
        sv.svdrnn_parameter_count(N_H, n_i, n_o, m_svd, m_svd) + extra + h0,
    )


def explain_row(n_i: int, classes: int, printed: tuple[int, int, int, int]) -> list[dict[str, Any]]:
    """Every convention (output bias, learned initial state, reflections per svdRNN side, output
    width n_o = classes + d, d = 0..4) that reproduces all four printed counts of a row."""
    found = []
    for out_bias in (False, True):
        for init_state in (False, True):
            for m_svd in (8, 16):
                for d in range(5):
                    got = table3_counts(n_i, classes + d, m_svd=m_svd, out_bias=out_bias, init_state=init_state)
                    if got == printed:
                        found.append(
                            {
                                "output bias": out_bias,
                                "learned h0 (c0)": init_state,
                                "m1 = m2": m_svd,
                                "n_o": classes + d,
                            }
                        )
    return found


def fn_table3(ctx: RunContext, *, stated: bool = True) -> Outcome:
    """Recompute every row from the stated configuration (stated=True) or check that one global
    convention plus a per-row output width reproduces every row (stated=False)."""
    rows: dict[str, Any] = {}
    failure = None
    global_conv: set[tuple[bool, bool, int]] | None = None
    for name, length, classes, depth, *printed in TABLE3:
        n_i = length // depth
        mine = table3_counts(n_i, classes)
        fits = explain_row(n_i, classes, tuple(printed))  # type: ignore[arg-type]
        convs = {(f["output bias"], f["learned h0 (c0)"], f["m1 = m2"]) for f in fits}
        global_conv = convs if global_conv is None else global_conv & convs
        rows[name] = {
            "n_i = length/depth": n_i,
            "printed (RNN, LSTM, oRNN, svdRNN)": printed,
            "stated configuration gives": list(mine),
            "configurations reproducing the row": fits,
            "length divisible by depth": length % depth == 0,
        }
        if stated and failure is None and tuple(mine) != tuple(printed):
            inputs = {"row": name}
            failure = (inputs, Measure(math.inf, f"{name}: stated configuration gives {list(mine)}, printed {printed}"))
    data = {"rows": rows, "conventions reproducing every row": sorted(global_conv or [])}
    if stated:
        return Outcome(failure is None, len(TABLE3), failure=failure, data=data)
    if not global_conv:
        return Outcome(
            False,
            len(TABLE3),
            failure=({"row": "all"}, Measure(math.inf, "no single convention fits every row")),
            data=data,
        )
    return Outcome(True, len(TABLE3), notes=f"conventions fitting every row: {sorted(global_conv)}", data=data)


def replay_table3(inputs: Mapping[str, Any], b: Backend) -> Measure:
    for name, length, classes, depth, *printed in TABLE3:
        if name == inputs.get("row"):
            mine = table3_counts(length // depth, classes)
            return Measure(0.0 if list(mine) == printed else math.inf, f"{list(mine)} vs {printed}")
    return Measure(math.inf, f"no row {inputs.get('row')!r}")


TABLE3_CLAIM = Claim(
    id="svd.table3",
    paper=PAPER,
    where="App. C, Table 3",
    kind="count",
    statement=(
        "the parameter counts of Table 3 follow from the stated configuration: n_h = 32, m = 16 reflections "
        "(svdRNN m1 = m2 = 8), n_i = length/depth, n_o = #classes, counted as in Sec. 4"
    ),
    checks=(
        FunctionCheck(
            "recount_every_row",
            lambda ctx: fn_table3(ctx, stated=True),
            EXACT,
            "exhaustive",
            "recomputed vs printed counts",
            replay_fn=replay_table3,
            exact=True,
        ),
    ),
    notes=(
        "No row follows from the stated configuration. svdRNN - oRNN is 424 in every row, which is what "
        "m1 = m2 = 16 (32 reflections) gives, not m1 = m2 = 8 (96). Every row needs a learned initial "
        "state (h0, and c0 for the LSTM) and an output bias; rows then fit with n_o = #classes + d, "
        "d in {0, 1, 3} (e.g. ECG200 and ECGFiveDays have the same n_i and #classes but differ by 33 = n_h + 1). "
        "See the evidence data for each row."
    ),
)

TABLE3_CORRECTED = Claim(
    id="svd.table3.corrected",
    paper=PAPER,
    where="App. C, Table 3",
    kind="count",
    statement=(
        "every row's four counts follow from one convention (n_h = 32, learned h0 (c0), output bias, "
        "svdRNN m1 = m2 = 16, oRNN m = 16) and one output width n_o >= #classes per row"
    ),
    corrects="svd.table3",
    checks=(
        FunctionCheck(
            "one_convention",
            lambda ctx: fn_table3(ctx, stated=False),
            EXACT,
            "exhaustive",
            "conventions fitting every row",
            exact=True,
        ),
    ),
)


# =============================================================================== Alg. 2
def _hprod_inputs(b: Backend, case: Case) -> tuple[Array, Array, int]:
    h = b.asarray(case["h"], name="h")
    u = b.asarray(case["u"], name="u")
    return h, u, h.shape[0]


def q_hprod_printed(b: Backend, case: Case) -> Measure:
    """Algorithm 2 against the definition H_k(u) h; for u = 0 the algorithm divides by 0."""
    h, u, n = _hprod_inputs(b, case)
    try:
        out = sv.hprod(h, u, backend=b)
    except ZeroVectorError:
        return Measure(math.inf, "Algorithm 2 divides by ||u_k||^2 = 0, while eq. 1 gives H(0) h = h", error=math.inf)
    return agreement(b, out, sv.reflector(u, n, backend=b) @ h, n)


def q_hprod_guarded(b: Backend, case: Case) -> Measure:
    h, u, n = _hprod_inputs(b, case)
    return agreement(b, sv.hprod(h, u, guard=True, backend=b), sv.reflector(u, n, backend=b) @ h, n)


def cases_hprod(ctx: RunContext, zero: bool) -> Iterator[Case]:
    rng = ctx.rng()
    if zero:
        yield {"h": np.array([1.0, 2.0]), "u": np.zeros(2)}
    for n in _sizes(ctx):
        for k in sorted({1, 2, n} & set(range(1, n + 1))):
            for _ in range(ctx.profile.cases):
                h = _random_vector(ctx, rng, n)
                yield {"h": h, "u": _random_vector(ctx, rng, k)}
                if zero:
                    yield {"h": h, "u": np.zeros(k)}
                if not ctx.backend.exact:  # Alg. 2 squares ||u|| unscaled: stay inside sqrt of the range
                    for e in (-20, 20) if ctx.backend.eps < 1e-10 else (-8, 8):
                        yield {"h": h, "u": rng.standard_normal(k) * 10.0**e}


def _hprod_strategy(ctx: RunContext) -> Any:
    from hypothesis import strategies as st

    from orthoverify.strategies import reflection_vector

    def build(n: int) -> Any:
        hs = st.lists(st.floats(-1e6, 1e6), min_size=n, max_size=n).map(np.array)
        return st.integers(1, n).flatmap(
            lambda k: st.tuples(hs, st.one_of(st.just(np.zeros(k)), reflection_vector(k, max_exponent=30)))
        )

    return st.integers(1, 8).flatmap(build).map(lambda t: {"h": t[0], "u": t[1]})


HPROD = Claim(
    id="svd.hprod",
    paper=PAPER,
    where="eq. 9, Alg. 2",
    kind="identity",
    statement="Hprod(h, u_k): alpha = 2 u_k'h / u_k'u_k, h~ = h - alpha u_k computes H_k(u_k) h",
    checks=(
        PropertyCheck(
            "exact_including_zero",
            q_hprod_printed,
            lambda ctx: cases_hprod(ctx, zero=True),
            EXACT,
            "Hprod(h, u) - H_k(u) h",
        ),
        PropertyCheck(
            "float_nonzero_u",
            q_hprod_printed,
            lambda ctx: cases_hprod(ctx, zero=False),
            FLOAT_HP,
            "||Hprod - H_k(u) h|| / (n eps ||H h||)",
        ),
    ),
    notes=(
        "Right for u_k != 0. For u_k = 0, which eq. 1 defines as I and which Prop. 1 and Theorem 3's "
        "construction (v_t = 0) use, Algorithm 2 divides by zero (NaN in floating point). It also squares "
        "||u_k|| unscaled, so in floating point ||u_k|| must lie within the square root of the exponent range "
        "(orthoverify raises DomainError or NonFiniteError outside it rather than return NaN)."
    ),
)

HPROD_CORRECTED = Claim(
    id="svd.hprod.corrected",
    paper=PAPER,
    where="eq. 9, Alg. 2",
    kind="identity",
    statement="Hprod with the guard 'return h when u_k = 0' computes H_k(u_k) h for every u_k",
    corrects="svd.hprod",
    checks=(
        PropertyCheck(
            "guarded", q_hprod_guarded, lambda ctx: cases_hprod(ctx, zero=True), ALL, "||Hprod - H_k(u) h|| / (n eps)"
        ),
        SearchCheck("search", q_hprod_guarded, _hprod_strategy, ("numpy-float64",), "||Hprod - H_k(u) h|| / (n eps)"),
    ),
)


# =============================================================================== Alg. 3
def _grad_case(b: Backend, case: Case) -> tuple[Array, Array, Array, int]:
    return (
        b.asarray(case["h"], name="h"),
        b.asarray(case["u"], name="u"),
        b.asarray(case["g"], name="g"),
        b.asarray(case["h"], name="h").shape[0],
    )


def _hgrad_scale(b: Backend, h: Array, g: Array, u: Array) -> float:
    """Size of the terms of dL/du: ||g|| ||h|| / ||u||."""
    return _fnorm(b, g) * _fnorm(b, h) / _fnorm(b, u) if not b.exact else 1.0


def q_hgrad_autograd(b: Backend, case: Case) -> Measure:
    """Algorithm 3 against torch autograd through the dense definition g' H_k(u) h."""
    import torch

    h, u, g, n = _grad_case(b, case)
    res = sv.hgrad(h, u, g, backend=b)
    uu = u.clone().requires_grad_(True)
    hq = h.clone().requires_grad_(True)
    loss = b.sum(g * (sv.reflector(uu, n, backend=b) @ hq))
    du, dh = torch.autograd.grad(loss, (uu, hq))
    return worst(
        residual(b, res.dl_du - du, n, _hgrad_scale(b, h, g, u)),
        residual(b, res.dl_dh - dh, n, _fnorm(b, g)),
    )


def q_hgrad_fd(b: Backend, case: Case) -> Measure:
    """Algorithm 3 on b against 50-digit central differences of g' H_k(u) h on b's inputs."""
    h, u, g, n = _grad_case(b, case)
    res = sv.hgrad(h, u, g, backend=b)
    r = b if b.method == "high-precision" else get_backend("mpmath")
    hr, ur, gr = (r.asarray(b.to_strings(x)) for x in (h, u, g))
    ref_u = central_gradient(lambda x: r.sum(gr * (sv.reflector(x, n, backend=r) @ hr)), ur, r)
    ref_h = central_gradient(lambda x: r.sum(gr * (sv.reflector(ur, n, backend=r) @ x)), hr, r)
    eps = max(b.eps, fd_eps(r))
    e_u = r.to_float(r.norm(r.asarray(b.to_strings(res.dl_du)) - ref_u)) / _hgrad_scale(r, hr, gr, ur)
    e_h = r.to_float(r.norm(r.asarray(b.to_strings(res.dl_dh)) - ref_h)) / _fnorm(r, gr)
    return worst(scaled(e_u, n, eps), scaled(e_h, n, eps))


def q_hgrad_exact(b: Backend, case: Case) -> Measure:
    """Algorithm 3 against SymPy's exact derivative of g' H_k(u) h."""
    h, u, g, n = _grad_case(b, case)
    res = sv.hgrad(h, u, g, backend=b)
    ref_u = exact_gradient(lambda x: b.sum(g * (sv.reflector(x, n, backend=b) @ h)), u)
    ref_h = exact_gradient(lambda x: b.sum(g * (sv.reflector(u, n, backend=b) @ x)), h)
    return worst(residual(b, res.dl_du - ref_u, n), residual(b, res.dl_dh - ref_h, n))


def cases_hgrad(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    sizes = _sizes(ctx) if ctx.backend.method != "high-precision" else ctx.profile.exact_sizes
    for n in sizes:
        if n > 16:
            continue
        for k in sorted({1, 2, n} & set(range(1, n + 1))):
            for _ in range(ctx.profile.cases):
                yield {
                    "h": _random_vector(ctx, rng, n),
                    "u": _random_vector(ctx, rng, k),
                    "g": _random_vector(ctx, rng, n),
                }


HGRAD = Claim(
    id="svd.hgrad",
    paper=PAPER,
    where="eqs. 13-15, Alg. 3",
    kind="gradient",
    statement=(
        "Hgrad(h, u_k, g) with g = dL/dC, C = H_k(u_k) h: dL/dh = g - beta u_k and "
        "dL/du_k = -alpha g - beta h + alpha beta u_k (alpha = 2u'h/u'u, beta = 2u'g/u'u), "
        "including the last term from the norm of u_k"
    ),
    checks=(
        PropertyCheck("autograd", q_hgrad_autograd, cases_hgrad, TORCH, "||Hgrad - autograd|| / (n eps scale)"),
        PropertyCheck(
            "central_differences_50_digits",
            q_hgrad_fd,
            cases_hgrad,
            (*FLOAT_BACKENDS, "mpmath"),
            "||Hgrad - FD_50|| / (n eps scale)",
        ),
        PropertyCheck("exact_derivative", q_hgrad_exact, cases_hgrad, EXACT, "Hgrad - d/du exact"),
    ),
    notes="For u_k != 0 (at u_k = 0 the map u -> H(u) is not even continuous, so there is no derivative).",
)


# =============================================================================== Alg. 1
def _alg1_inputs(b: Backend, case: Case) -> tuple[Array, Array, list[Array], Array, list[Array], int, int, int]:
    h = b.asarray(case["h"], name="h")
    g = b.asarray(case["g"], name="g")
    n = h.shape[0]
    m1, m2 = int(case["m1"]), int(case["m2"])
    us = _unpadded(b, b.asarray(case["U"], name="U"), n - m1 + 1)
    vs = _unpadded(b, b.asarray(case["V"], name="V"), n - m2 + 1)
    s = b.asarray(case["s"], name="s")
    return h, g, us, s, vs, n, m1, m2


def _full(b: Backend, vecs: list[Array], n: int, m: int) -> list[Array]:
    """The reflection vectors of M_{k} padded with the identity reflections u_j = 0, j <= n - m."""
    return [b.zeros(j) for j in range(1, n - m + 1)] + list(vecs)


def _alg1_loss(b: Backend, g: Array, n: int, m1: int, m2: int, smap: tuple[Any, Any] | None) -> Any:
    def loss(h: Array, us: list[Array], s: Array, vs: list[Array]) -> Any:
        sig = sv.sigma_map(s, smap[0], smap[1], backend=b) if smap else s
        w = sv.m_k1k2(_full(b, us, n, m1), _full(b, vs, n, m2), sig, backend=b)
        return b.sum(g * (w @ h))

    return loss


def _swap(xs: list[Any], i: int, x: Any) -> list[Any]:
    """``xs`` with entry i replaced by x."""
    return [*xs[:i], x, *xs[i + 1 :]]


def _reference_grads(
    grad: Callable[[Callable[[Array], Any], Array], Array],
    loss: Any,
    h: Array,
    us: list[Array],
    s: Array,
    vs: list[Array],
) -> tuple[Array, list[Array], Array, list[Array]]:
    """dL/dh, dL/du_i, dL/ds, dL/dv_i of ``loss(h, us, s, vs)`` by a reference ``grad(f, x)``."""

    def at_u(i: int) -> Array:
        return grad(lambda x: loss(h, _swap(us, i, x), s, vs), us[i])

    def at_v(i: int) -> Array:
        return grad(lambda x: loss(h, us, s, _swap(vs, i, x)), vs[i])

    return (
        grad(lambda x: loss(x, us, s, vs), h),
        [at_u(i) for i in range(len(us))],
        grad(lambda x: loss(h, us, x, vs), s),
        [at_v(i) for i in range(len(vs))],
    )


def _alg1_measure(b: Backend, case: Case, variant: sv.Variant, ref: str) -> Measure:
    """Algorithm 1 against a reference gradient: torch autograd, 50-digit central differences
    (fd) or SymPy's exact derivative. A failure seen with autograd is confirmed at high
    precision, where there is no autograd: there the reference is central differences."""
    if ref == "autograd" and b.family != "torch":
        ref = "fd"
    h, g, us, s, vs, n, m1, m2 = _alg1_inputs(b, case)
    smap = (1, case["r"]) if "r" in case and not b.exact else None
    res = sv.svdrnn_local(
        h, g, us, None if smap else s, vs, variant=variant, s_map=(s, smap[0], smap[1]) if smap else None, backend=b
    )
    got_s = res.dl_ds if smap else res.dl_dsigma
    loss = _alg1_loss(b, g, n, m1, m2, smap)
    if ref == "autograd":
        import torch

        leaves = [x.clone().requires_grad_(True) for x in (h, *us, s, *vs)]
        lh, lus, ls, lvs = leaves[0], leaves[1 : 1 + m1], leaves[1 + m1], leaves[2 + m1 :]
        grads = torch.autograd.grad(loss(lh, lus, ls, lvs), leaves)
        rh, rs = grads[0], grads[1 + m1]
        rus: list[Any] = list(grads[1 : 1 + m1])
        rvs: list[Any] = list(grads[2 + m1 :])
        rb = b
    elif ref == "exact":
        rh, rus, rs, rvs = _reference_grads(exact_gradient, loss, h, us, s, vs)
        rb = b
    else:  # 50-digit central differences on b's inputs
        rb = get_backend("mpmath") if b.method != "high-precision" else b
        conv = lambda x: rb.asarray(b.to_strings(x))  # noqa: E731
        lr = _alg1_loss(rb, conv(g), n, m1, m2, smap)
        fd = lambda f, x: central_gradient(f, x, rb)  # noqa: E731
        rh, rus, rs, rvs = _reference_grads(fd, lr, conv(h), [conv(x) for x in us], conv(s), [conv(x) for x in vs])
    eps = b.eps if ref != "fd" else max(b.eps, fd_eps(rb))

    def cmp(x: Array, y: Array) -> Measure:
        if b.exact:
            return residual(b, x - y, n)
        xr = rb.asarray(b.to_strings(x)) if rb is not b else x
        yy = y if rb is b else rb.asarray(rb.to_strings(y)) if ref != "fd" else y
        scale = 1.0 + _fnorm(rb, yy)
        return scaled(rb.to_float(rb.norm(xr - yy)) / scale, n * max(1, m1 + m2), eps)

    parts = [cmp(res.c, _forward(b, us, s, vs, h, n, m1, m2, smap)), cmp(res.dl_dh, rh), cmp(got_s, rs)]
    parts += [cmp(a, r) for a, r in zip(res.dl_du, rus, strict=True)]
    parts += [cmp(a, r) for a, r in zip(res.dl_dv, rvs, strict=True)]
    return worst(*parts)


def _forward(
    b: Backend, us: list[Array], s: Array, vs: list[Array], h: Array, n: int, m1: int, m2: int, smap: Any
) -> Array:
    sig = sv.sigma_map(s, smap[0], smap[1], backend=b) if smap else s
    return sv.m_k1k2(_full(b, us, n, m1), _full(b, vs, n, m2), sig, backend=b) @ h


def cases_alg1(ctx: RunContext, small: bool = False) -> Iterator[Case]:
    """Random inputs for Algorithm 1 with m1, m2 from 0 to n; ``small``: the sizes that 50-digit
    central differences (four products per parameter) can afford."""
    rng = ctx.rng()
    exact = ctx.backend.exact
    small = small or exact or ctx.backend.method == "high-precision"
    sizes = ctx.profile.exact_sizes if small else ctx.profile.sizes
    for n in sizes:
        if n > 16 or n < 2:
            continue
        pairs = {(1, 0), (0, 1), (n, n), (max(1, n // 2), n - 1)}
        for m1, m2 in sorted(pairs):
            for _ in range(max(1, ctx.profile.cases // 2)):
                case: dict[str, Any] = {
                    "h": _random_vector(ctx, rng, n),
                    "g": _random_vector(ctx, rng, n),
                    "U": _vectors_case(ctx, rng, n, n - m1 + 1),
                    "V": _vectors_case(ctx, rng, n, n - m2 + 1),
                    "m1": m1,
                    "m2": m2,
                    "s": _random_vector(ctx, rng, n),
                }
                if not exact:
                    case["r"] = 0.5
                yield case


def _alg1_checks(variant: sv.Variant) -> tuple[PropertyCheck, ...]:
    q = "max over C, dL/dh, dL/dsigma (or dL/ds), dL/du, dL/dv of ||Alg1 - reference|| / (n (m1+m2) eps (1 + ||ref||))"
    return (
        PropertyCheck("autograd", lambda b, c: _alg1_measure(b, c, variant, "autograd"), cases_alg1, TORCH, q),
        PropertyCheck(
            "central_differences_50_digits",
            lambda b, c: _alg1_measure(b, c, variant, "fd"),
            lambda ctx: cases_alg1(ctx, small=True),
            ("numpy-float64", "mpmath"),
            q,
        ),
        PropertyCheck("exact_derivative", lambda b, c: _alg1_measure(b, c, variant, "exact"), cases_alg1, EXACT, q),
    )


ALGORITHM1 = Claim(
    id="svd.algorithm1",
    paper=PAPER,
    where="App. B, Alg. 1",
    kind="gradient",
    statement=(
        "the local FP/BP of svdRNN (Alg. 1, with Hprod and Hgrad) returns C = U Sigma V' h, dL/dU, dL/dV, "
        "dL/dsigma (through eq. 8) and dL/dh"
    ),
    checks=_alg1_checks("printed"),
    notes=(
        "As printed, the U loop calls Hgrad(h^(u)_k, u_k, g): the output of H(u_k), where Algorithm 3 needs "
        "its input h^(u)_{k-1} (the V loop passes h^(v)_{k+1}, the input, correctly). C, dL/dh, dL/dsigma and "
        "dL/dV are right; dL/dU is wrong whenever m1 >= 1."
    ),
)

ALGORITHM1_CORRECTED = Claim(
    id="svd.algorithm1.corrected",
    paper=PAPER,
    where="App. B, Alg. 1",
    kind="gradient",
    statement="Algorithm 1 with Hgrad(h^(u)_{k-1}, u_k, g) in the U loop returns the exact gradients",
    corrects="svd.algorithm1",
    checks=_alg1_checks("corrected"),
)


# =============================================================================== Sec. 4.1
def q_omission(b: Backend, case: Case) -> Measure:
    """The Householder paper's Algorithm 1 (as printed) for one reflection against the gradient
    with the last term of eq. 15 omitted: they differ by alpha beta u, so the term is there."""
    h, u, g, n = _grad_case(b, case)
    res = hh.algorithm1(u.reshape(n, 1), h, g, backend=b)
    two = 2 / (u @ u)
    alpha, beta = two * (u @ h), two * (u @ g)
    omitted = -alpha * g - beta * h
    diff = res.dl_du.reshape(n) - omitted
    return Measure(
        0.0 if b.is_zero(diff) else math.inf,
        "0" if b.is_zero(diff) else "alpha beta u != 0",
        error=0.0 if b.is_zero(diff) else math.inf,
    )


def q_omission_full(b: Backend, case: Case) -> Measure:
    """The Householder paper's Algorithm 1 equals the full eq. 15 (exact derivative)."""
    h, u, g, n = _grad_case(b, case)
    res = hh.algorithm1(u.reshape(n, 1), h, g, backend=b)
    ref = exact_gradient(lambda x: b.sum(g * (sv.reflector(x, n, backend=b) @ h)), u)
    return residual(b, res.dl_du.reshape(n) - ref, n)


def cases_omission(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in ctx.profile.exact_sizes:
        if n < 2:
            continue
        for _ in range(ctx.profile.cases):
            yield {"h": _random_vector(ctx, rng, n), "u": _random_vector(ctx, rng, n), "g": _random_vector(ctx, rng, n)}


OMISSION = Claim(
    id="svd.orthogonal_rnn_omission",
    paper=PAPER,
    where="Sec. 4.1",
    kind="gradient",
    statement=(
        "the oRNN method of Mhammedi et al. omitted the last term of (15), 4 (u'h)(u'g)/(u'u)^2 u, "
        "by assuming ||u_k|| fixed"
    ),
    checks=(
        PropertyCheck(
            "householder_algorithm1_keeps_it",
            q_omission,
            cases_omission,
            EXACT,
            "Householder Alg. 1 dL/du - (eq. 15 without its last term)",
        ),
        PropertyCheck(
            "householder_algorithm1_is_full_gradient",
            q_omission_full,
            cases_omission,
            EXACT,
            "Householder Alg. 1 dL/du - exact derivative",
        ),
    ),
    notes=(
        "Algorithm 1 of the Householder paper (lines 12-14, run as printed) computes "
        "U_bar_k = g_new (-h~_k)' - H_{k+1} c~_k' with g_new = g - beta u: expanding, -alpha g - beta h + "
        "alpha beta u, the full eq. 15. The term is not omitted (householder.algorithm1 also matches autograd)."
    ),
)


CLAIMS: list[Claim] = [
    REFLECTOR,
    PROPOSITION1,
    PROPOSITION1_CORRECTED,
    THEOREM1,
    THEOREM2,
    DIMENSION,
    THEOREM3,
    THEOREM3_SHARP,
    THEOREM3_PROOF,
    THEOREM3_PROOF_CORRECTED,
    LEMMA1,
    THEOREM4,
    THEOREM4_PROOF,
    THEOREM4_PROOF_CORRECTED,
    SIGMA_RANGE,
    PARAMETER_COUNT,
    TABLE3_CLAIM,
    TABLE3_CORRECTED,
    HPROD,
    HPROD_CORRECTED,
    HGRAD,
    ALGORITHM1,
    ALGORITHM1_CORRECTED,
    *FLOPS_CLAIMS,
    OMISSION,
    *LANDSCAPE_CLAIMS,
]
