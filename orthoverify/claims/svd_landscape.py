"""Claims of Sec. 6 of the svdRNN paper (Zhang, Lei & Dhillon; key ``svd``): the linear RNN's
population risk and gradient (Claim 1), "every critical point is a global minimum" when
sigma_min(W) >= eps > 0 (Theorem 5), and "linear svdRNNs have no spurious local minimum"
(Corollary 1).

Evidence: the closed-form risk against its definition (an expectation over finite
distributions, exactly in rationals and in every float arithmetic); the printed and the true
gradient against torch autograd, 50-digit central differences and SymPy's exact derivative;
critical points enumerated exactly for n = 1 (real roots of R'(w)) and searched for n = 2
(float64 Newton from many starts, refined at 50 digits, classified by the Hessian); and the
pull-back of a spurious local minimum of R to the svdRNN parameters of eq. 3 and eq. 8. The
maths is imported from :mod:`orthoverify.param.linear_rnn` and :mod:`orthoverify.param.svd`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import FLOAT_BACKENDS, Array, Backend, get_backend
from orthoverify.claims._common import exact_backend as _sympy
from orthoverify.engine.checks import Case, FunctionCheck, Outcome, PropertyCheck, RunContext, SymbolicCheck
from orthoverify.engine.model import Claim
from orthoverify.engine.ratios import THRESHOLD, Measure, agreement, residual, scaled
from orthoverify.engine.reference import central_gradient, exact_gradient, fd_eps
from orthoverify.param import linear_rnn as lr
from orthoverify.param import svd

PAPER = "svd"
FLOAT = FLOAT_BACKENDS
FLOAT_HP = (*FLOAT_BACKENDS, "mpmath")
TORCH = ("torch-float32", "torch-float64")
EXACT = ("sympy",)
SIGMA_KINDS = ("random", "identity", "rank_deficient", "diagonal_with_zero", "rank_one")

Formula = Callable[[lr.Problem, Array], Array]


def _printed(pb: lr.Problem, w: Array) -> Array:
    return pb.printed_gradient(w)


def _true(pb: lr.Problem, w: Array) -> Array:
    return pb.gradient(w)


def _fnorm(b: Backend, x: Any) -> float:
    return float(np.linalg.norm(b.to_numpy(x)))


# =============================================================================== inputs
def _sigma_float(rng: np.random.Generator, m: int, kind: str) -> np.ndarray:
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


def _sigma_exact(rng: np.random.Generator, m: int, kind: str) -> np.ndarray:
    """The exact (rational) counterpart of :func:`_sigma_float`: F F' with rational F."""
    if kind == "identity":
        return np.array(sympy.eye(m).tolist(), dtype=object)
    if kind == "diagonal_with_zero":
        d = [sympy.Rational(int(rng.integers(1, 9)), int(rng.integers(1, 4))) for _ in range(m)]
        d[int(rng.integers(m))] = sympy.Integer(0)
        return np.array(sympy.diag(*d).tolist(), dtype=object)
    rank = {"random": m, "rank_deficient": max(m - 1, 1), "rank_one": 1}[kind]
    f = sympy.Matrix(m, rank, lambda i, j: sympy.Rational(int(rng.integers(-3, 4)), int(rng.integers(1, 3))))
    return np.array((f * f.T).tolist(), dtype=object)


def _rat(rng: np.random.Generator, shape: tuple[int, ...], bound: int = 3, den: int = 3) -> np.ndarray:
    flat = [
        sympy.Rational(int(rng.integers(-bound, bound + 1)), int(rng.integers(1, den + 1)))
        for _ in range(math.prod(shape))
    ]
    return np.array(flat, dtype=object).reshape(shape)


def _grad_case(rng: np.random.Generator, n: int, d: int, t: int, kind: str, exact: bool) -> Case:
    if exact:
        return {
            "W": _rat(rng, (n, n), 2, 2),
            "Y": _rat(rng, (d, n)),
            "A": _rat(rng, (d, n * t)),
            "Sigma": _sigma_exact(rng, n * t, kind),
            "t": t,
        }
    return {
        "W": rng.standard_normal((n, n)) * 0.8 / math.sqrt(n),
        "Y": rng.standard_normal((d, n)),
        "A": rng.standard_normal((d, n * t)),
        "Sigma": _sigma_float(rng, n * t, kind),
        "t": t,
    }


def _grad_cases(
    ctx: RunContext, pairs: Sequence[tuple[int, int]], *, square: bool, exact: bool, per: int
) -> Iterator[Case]:
    """``per`` cases for each (n, t): d = n (and, unless ``square``, d = n + 1 every other case),
    Sigma cycling through SIGMA_KINDS; one generator for the whole sequence."""
    rng = ctx.rng()
    k = 0
    for n, t in pairs:
        for _ in range(per):
            d = n if square or k % 2 == 0 else n + 1
            yield _grad_case(rng, n, d, t, SIGMA_KINDS[k % len(SIGMA_KINDS)], exact)
            k += 1


def _pairs(ns: Sequence[int], ts: Sequence[int]) -> list[tuple[int, int]]:
    return [(n, t) for n in ns for t in ts]


def _instance_problem(b: Backend, case: Case) -> lr.Problem:
    """The validated (Y, A, Sigma, t) of a recorded instance, in b's arithmetic."""
    return lr.problem(b.asarray(case["Y"]), b.asarray(case["A"]), b.asarray(case["Sigma"]), int(case["t"]), backend=b)


def _moved(pb: lr.Problem, b: Backend, r: Backend) -> lr.Problem:
    """pb's data (as b holds it) in r's arithmetic, without re-checking PSD."""
    y, a, sigma = (r.asarray(b.to_strings(x)) for x in (pb.y, pb.a, pb.sigma))
    return lr.problem(y, a, sigma, pb.t, backend=r, psd=False)


def _problem(b: Backend, case: Case) -> tuple[lr.Problem, Array]:
    pb = lr.problem(
        b.asarray(case["Y"], name="Y"),
        b.asarray(case["A"], name="A"),
        b.asarray(case["Sigma"], name="Sigma"),
        int(case["t"]),
        backend=b,
        psd=False,  # the gradient formulas hold for any symmetric Sigma (and a rounded PSD one may not be)
    )
    return pb, b.asarray(case["W"], name="W")


# =============================================================================== Claim 1: the risk
def _risk_case(rng: np.random.Generator, n: int, d: int, t: int, k_points: int, exact: bool) -> Case:
    """A finite distribution: k_points inputs X_k (n x t) with probabilities p_k, and given X_k
    the noise +eta_k or -eta_k with probability 1/2 each (so E[eta | X] = 0)."""
    if exact:
        raw = [int(rng.integers(1, 6)) for _ in range(k_points)]
        p = np.array([sympy.Rational(r, sum(raw)) for r in raw], dtype=object)
        x = _rat(rng, (k_points, n, t))
        e = _rat(rng, (k_points, d))
        w, y, a = _rat(rng, (n, n), 2, 2), _rat(rng, (d, n)), _rat(rng, (d, n * t))
    else:
        p = rng.dirichlet(np.ones(k_points))
        x = rng.standard_normal((k_points, n, t))
        e = rng.standard_normal((k_points, d)) * 0.5
        w, y, a = (
            rng.standard_normal((n, n)) * 0.8 / math.sqrt(n),
            rng.standard_normal((d, n)),
            rng.standard_normal((d, n * t)),
        )
    eta = np.stack([e, -e], axis=1)  # (k_points, 2, d)
    return {"W": w, "Y": y, "A": a, "X": x, "p": p, "eta": eta}


def q_risk(b: Backend, case: Case) -> Measure:
    """Claim 1's closed form tr((Y WW - A) Sigma (Y WW - A)') + C, with Sigma and C the moments of
    the distribution, against E f computed by its definition (the sum over the distribution)."""
    w, y, a = (b.asarray(case[k], name=k) for k in ("W", "Y", "A"))
    x, p, eta = b.asarray(case["X"], name="X"), b.asarray(case["p"], name="p"), b.asarray(case["eta"], name="eta")
    if not b.exact:  # probabilities rounded to b's precision: normalised there, so they sum to 1 in b
        p = p / b.sum(p)
    points = [x[k] for k in range(x.shape[0])]
    noises = [eta[k] for k in range(eta.shape[0])]
    sigma, c = lr.data_moments(points, p, noises, backend=b)
    t = int(x.shape[2])
    closed = lr.population_risk(w, y, a, sigma, t, c, backend=b)
    ref = lr.expected_loss(w, y, a, points, p, noises, backend=b)
    if b.exact:
        return agreement(b, np.array([closed], dtype=object), np.array([ref], dtype=object), 1)
    n, d = w.shape[0], y.shape[0]
    s1 = _fnorm(b, y) * _fnorm(b, lr.stacked_powers(w, t, backend=b)) + _fnorm(b, a)
    xs, ps, es = b.to_numpy(x), b.to_numpy(p), b.to_numpy(eta)
    scale = sum(
        ps[k] * float(np.mean([(s1 * np.linalg.norm(xs[k]) + np.linalg.norm(row)) ** 2 for row in es[k]]))
        for k in range(xs.shape[0])
    )
    err = abs(b.to_float(closed) - b.to_float(ref)) if b.family != "mpmath" else float(abs(closed - ref))
    return scaled(err / scale, n * t + d + x.shape[0], b.eps)


def cases_risk(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    exact = ctx.backend.exact
    ns = (1, 2, 3) if not exact else tuple(n for n in ctx.profile.exact_sizes if n <= 2)
    for n in ns:
        for t in (1, 2, 3):
            for k in range(ctx.profile.cases):
                yield _risk_case(rng, n, n + k % 2, t, 3 + k % 3, exact)


# =============================================================================== Claim 1: gradients
def _reference(b: Backend, pb: lr.Problem, w: Array) -> tuple[Array, str]:
    """An independent gradient of R in b's arithmetic: autograd (torch), the exact derivative
    (SymPy), central differences at b's precision (mpmath) or at 50 digits (NumPy)."""
    if b.family == "torch":
        import torch

        ww = w.detach().clone().requires_grad_(True)
        (g,) = torch.autograd.grad(pb.risk(ww), (ww,))
        return g, "autograd"
    if b.exact:
        # expanded: the same polynomial, which SymPy then differentiates far faster than the product tree
        return exact_gradient(lambda v: sympy.expand(pb.risk(v)), w), "exact"
    r = b if b.family == "mpmath" else get_backend("mpmath")
    pr = _moved(pb, b, r)
    wr = r.asarray(b.to_strings(w))
    return central_gradient(pr.risk, wr, r), "central differences"


def _compare(formula: Formula) -> Callable[[Backend, Case], Measure]:
    """A gradient formula against :func:`_reference` in b's arithmetic: a test ratio
    ||formula - reference|| / (nt eps gradient_scale) (exact: the exact difference)."""

    def q(b: Backend, case: Case) -> Measure:
        pb, w = _problem(b, case)
        closed = formula(pb, w)
        ref, how = _reference(b, pb, w)
        if b.exact:
            return agreement(b, closed, ref, pb.n)
        dim = pb.n * pb.t
        if how == "central differences":
            r = get_backend("mpmath") if b.family != "mpmath" else b
            diff = r.asarray(b.to_strings(closed)) - ref
            pr = _moved(pb, b, r)
            scale = lr.gradient_scale(pr, r.asarray(b.to_strings(w)))
            return scaled(r.to_float(r.norm(diff)) / scale, dim, max(b.eps, fd_eps(r)))
        return residual(b, closed - ref, dim, lr.gradient_scale(pb, w))

    return q


def _first_exact_case() -> Case:
    """The smallest instance: n = d = t = 1, W = Y = Sigma = 1, A = 0, so R(w) = w^2."""
    one = np.array([[sympy.Integer(1)]], dtype=object)
    return {"W": one, "Y": one, "A": np.array([[sympy.Integer(0)]], dtype=object), "Sigma": one, "t": 1}


def _exact_pairs(ctx: RunContext) -> list[tuple[int, int]]:
    """(n, t) with n, t in 1..3; the quick profile leaves out the slowest, n = t = 3."""
    pairs = [(n, t) for n in ctx.profile.exact_sizes if n <= 3 for t in (1, 2, 3)]
    return [p for p in pairs if p != (3, 3)] if ctx.profile.name == "quick" else pairs


def cases_grad_exact(ctx: RunContext) -> Iterator[Case]:
    yield _first_exact_case()
    # on the quick profile n = t = 1 already refutes; a few more sizes show it is no accident
    pairs = [(1, 2), (2, 1), (2, 2)] if ctx.profile.name == "quick" else _exact_pairs(ctx)
    yield from _grad_cases(ctx, pairs, square=True, exact=True, per=1)


def cases_grad_exact_general(ctx: RunContext) -> Iterator[Case]:
    yield from _grad_cases(ctx, _exact_pairs(ctx), square=False, exact=True, per=1)


def _float_cases(ctx: RunContext, *, square: bool) -> Iterator[Case]:
    ns = (1, 2, 3, *(n for n in ctx.profile.sizes if 3 < n <= 8 and ctx.profile.name != "quick"))
    yield from _grad_cases(ctx, _pairs(ns, (1, 2, 3)), square=square, exact=False, per=ctx.profile.cases)


def cases_grad_float_square(ctx: RunContext) -> Iterator[Case]:
    yield from _float_cases(ctx, square=True)


def cases_grad_float(ctx: RunContext) -> Iterator[Case]:
    yield from _float_cases(ctx, square=False)


def _fd_cases(ctx: RunContext, *, square: bool) -> Iterator[Case]:
    per = 1 if ctx.profile.name == "quick" else 2
    yield from _grad_cases(ctx, _pairs((1, 2, 3), (1, 2, 3)), square=square, exact=False, per=per)


def cases_grad_fd_square(ctx: RunContext) -> Iterator[Case]:
    yield from _fd_cases(ctx, square=True)


def cases_grad_fd(ctx: RunContext) -> Iterator[Case]:
    yield from _fd_cases(ctx, square=False)


def sym_gradient(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """The true gradient minus SymPy's derivative of the closed-form risk, with free symbols:
    n = 1 and t = 1, 2, 3 with every input a symbol (Sigma symmetric); n = 2, t = 2 with W
    symbolic and rational Y, A, Sigma."""
    b = _sympy()
    for t in (1, 2, 3):
        w = np.array([[sympy.Symbol("w", real=True)]], dtype=object)
        y = np.array([[sympy.Symbol("y", real=True)]], dtype=object)
        a = np.array([sympy.symbols(f"a0:{t}", real=True)], dtype=object)
        s = np.empty((t, t), dtype=object)
        for i in range(t):
            for j in range(i, t):
                s[i, j] = s[j, i] = sympy.Symbol(f"s{i}{j}", real=True)
        pb = lr.problem(y, a, s, t, backend=b, psd=False)
        yield f"n=1, t={t}", pb.gradient(w)[0, 0] - sympy.diff(pb.risk(w), w[0, 0])
    rng = ctx.rng()
    case = _grad_case(rng, 2, 2, 2, "random", exact=True)
    w2 = np.array(sympy.symbols("w0:2_0:2", real=True), dtype=object).reshape(2, 2)
    pb2 = lr.problem(case["Y"], case["A"], case["Sigma"], 2, backend=b)
    risk = sympy.expand(pb2.risk(w2))
    grad = pb2.gradient(w2)
    yield "n=2, t=2", np.array([[grad[i, j] - sympy.diff(risk, w2[i, j]) for j in range(2)] for i in range(2)])


def _risk_checks() -> tuple[PropertyCheck, PropertyCheck]:
    return (
        PropertyCheck("risk_vs_expectation_exact", q_risk, cases_risk, EXACT, "closed form - E f (exact)"),
        PropertyCheck(
            "risk_vs_expectation_float",
            q_risk,
            cases_risk,
            FLOAT_HP,
            "|closed form - E f| / ((nt + d + K) eps E[(||Y WW|| ||x|| + ||A|| ||x|| + ||eta||)^2])",
        ),
    )


_GRAD_RATIO = "||formula - reference|| / (nt eps 2||Y|| (||Y|| ||WW|| + ||A||) ||Sigma|| sum_i i ||W||^(i-1))"

CLAIM1 = Claim(
    id="svd.claim1",
    paper=PAPER,
    where="Claim 1, Sec. 6.1; proof in App. A.6",
    statement=(
        "For the linear RNN o = Y WW vec(X), WW = (W | W^2 | ... | W^t), y = A vec(X) + eta with E[eta | X] = 0: "
        "R[W] = E f(W; X, y) = ||(Y WW - A) Sigma^(1/2)||_F^2 + C, Sigma = E[vec(X) vec(X)'], C = E||eta||^2; "
        "meanwhile grad_W R[W] = (Y WW - A) Sigma (Id | 2W | 3W^2 | ... | tW^(t-1))'"
    ),
    kind="gradient",
    checks=(
        *_risk_checks(),
        PropertyCheck(
            "printed_gradient_vs_exact_derivative",
            _compare(_printed),
            cases_grad_exact,
            EXACT,
            "printed gradient - SymPy's exact derivative",
        ),
        PropertyCheck(
            "printed_gradient_vs_autograd",
            _compare(_printed),
            cases_grad_float_square,
            ("torch-float64",),
            _GRAD_RATIO,
        ),
        PropertyCheck(
            "printed_gradient_vs_central_differences_50_digits",
            _compare(_printed),
            cases_grad_fd_square,
            ("numpy-float64", "mpmath"),
            _GRAD_RATIO,
        ),
    ),
    notes=(
        "The risk formula is true: the cross term 2 E<(Y WW - A) vec(X), eta> vanishes because E[eta | X] = 0; it "
        "is checked against the expectation computed by definition over finite distributions. The printed "
        "gradient is not: at n = d = t = 1 with W = Y = Sigma = 1 and A = 0, R(w) = w^2 has derivative 2 while "
        "the formula gives 1. It drops the factor 2 of the quadratic form and the factor Y' (it needs d = n "
        "even to have W's shape), and replaces the derivative of W^i, sum_j W^j dW W^(i-1-j), by i W^(i-1) dW, "
        "which App. A.6's Remark concedes only for commuting W and dW. See svd.claim1.corrected."
    ),
)


CLAIM1_CORRECTED = Claim(
    id="svd.claim1.corrected",
    paper=PAPER,
    where="Claim 1, Sec. 6.1; proof in App. A.6",
    statement=(
        "R[W] = ||(Y WW - A) Sigma^(1/2)||_F^2 + C, and grad_W R[W] = 2 sum_{i=1..t} sum_{j=0..i-1} "
        "(W^j)' G_i (W^(i-1-j))' with G = Y'(Y WW - A) Sigma = (G_1 | ... | G_t), G_i in R^(n x n)"
    ),
    kind="gradient",
    corrects="svd.claim1",
    checks=(
        *_risk_checks(),
        SymbolicCheck("symbolic_gradient", sym_gradient),
        PropertyCheck(
            "gradient_vs_exact_derivative",
            _compare(_true),
            cases_grad_exact_general,
            EXACT,
            "true gradient - SymPy's exact derivative",
        ),
        PropertyCheck("gradient_vs_autograd", _compare(_true), cases_grad_float, TORCH, _GRAD_RATIO),
        PropertyCheck(
            "gradient_vs_central_differences_50_digits",
            _compare(_true),
            cases_grad_fd,
            ("numpy-float32", "numpy-float64", "mpmath"),
            _GRAD_RATIO,
        ),
    ),
    notes=(
        "dR = 2 <Y'(Y WW - A) Sigma, d WW> and d(W^i) = sum_{j<i} W^j dW W^(i-1-j), so the gradient is "
        "2 sum_i sum_j (W^j)' G_i (W^(i-1-j))'. It holds for any symmetric Sigma and any d (Y d x n). Inputs: "
        "n = 1, 2, 3 (and more in float on bigger profiles), t = 1, 2, 3, d = n and d = n + 1, Sigma random, I, "
        "rank-deficient, diagonal with a zero, rank one. Central differences are fourth order at 50 digits, "
        "on the float inputs as rounded."
    ),
)


# =============================================================================== Theorem 5
HAND_BUILT_1D: Case = {"Y": [["1"]], "A": [["1/10", "1"]], "Sigma": [["1", "0"], ["0", "1"]], "t": 2}
"""R(w) = (w - 1/10)^2 + (w^2 - 1)^2: two wells, the one at w < 0 higher."""


def _exact_1d(case: Case) -> list[lr.CriticalPoint]:
    s = _sympy()
    pb = _instance_problem(s, case)
    return lr.exact_critical_points_1d(pb)


def _spurious_1d(points: Sequence[lr.CriticalPoint]) -> list[tuple[lr.CriticalPoint, Any]]:
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


def _rational_1d(rng: np.random.Generator, t: int) -> Case:
    a = [[str(sympy.Rational(int(rng.integers(-9, 10)), int(rng.integers(1, 6)))) for _ in range(t)]]
    sig = _sigma_exact(rng, t, "random")
    return {
        "Y": [[str(sympy.Rational(int(rng.integers(1, 4)), int(rng.integers(1, 3))))]],
        "A": a,
        "Sigma": [[str(v) for v in row] for row in sig],
        "t": t,
    }


def fn_theorem5_exact_1d(ctx: RunContext) -> Outcome:
    """n = 1: every real critical point of R, exactly (the real roots of the polynomial R'(w)),
    classified exactly (a simple root of R' is a strict minimum or maximum by the sign of R'');
    a strict local minimum with |w| > 0 and R above the global minimum breaks Theorem 5. The
    hand-built instance first, then random rational instances with t = 2, 3."""
    rng = ctx.rng()
    extra = {"quick": 4, "default": 10}.get(ctx.profile.name, 30)
    instances = [("hand-built", HAND_BUILT_1D)] + [(f"random {i}", _rational_1d(rng, 2 + i % 2)) for i in range(extra)]
    failure: tuple[Case, Measure] | None = None
    rows: list[dict[str, Any]] = []
    for label, case in instances:
        points = _exact_1d(case)
        bad = _spurious_1d(points)
        rows.append(
            {
                "instance": label,
                "t": case["t"],
                "A": case["A"],
                "critical_points": [cp.summary() for cp in points],
                "spurious_local_minima": len(bad),
            }
        )
        if bad and failure is None:
            cp, _ = max(bad, key=lambda x: x[0].sigma_min)
            inputs = dict(case) | {"w": _nstr(cp.w[0, 0], 40), "w_exact": str(cp.exact)}
            failure = (inputs, replay_theorem5_exact(inputs, _sympy()))
    spurious = sum(r["spurious_local_minima"] for r in rows)
    notes = (
        f"{len(instances)} instances with n = 1, every real critical point found exactly; {spurious} spurious strict "
        f"local minima in {sum(1 for r in rows if r['spurious_local_minima'])} instances"
    )
    data: dict[str, Any] = {"instances": rows}
    if failure is not None:  # the result file keeps one counterexample per claim: this one stays replayable
        data["counterexample_inputs"] = dict(failure[0])
    return Outcome(failure is None, len(instances), failure=failure, notes=notes, data=data)


def _nstr(v: Any, digits: int) -> str:
    import mpmath

    return str(mpmath.nstr(v, digits, strip_zeros=True)) if not isinstance(v, str) else v


def replay_theorem5_exact(inputs: Mapping[str, Any], b: Backend) -> Measure:
    """n = 1, exactly: the real root of R' nearest the recorded w, its class (simple root, sign
    of R''), |w| and R(w) - min over all real critical points of R."""
    points = _exact_1d(inputs)
    target = float(sympy.Rational(str(inputs["w"])))
    if not points:
        return Measure(0.0, "R is constant: every point is a global minimum", error=0.0)
    cp = min(points, key=lambda p: abs(float(p.w[0, 0]) - target))
    glob = min(points, key=lambda p: p.risk)
    gap = cp.risk - glob.risk
    desc = (
        f"R(w*) - R_min = {_nstr(gap, 30)} at the exact critical point w* = {cp.exact} = {_nstr(cp.w[0, 0], 25)} "
        f"(R'' = {_nstr(cp.hessian_eigenvalues[0], 15)}, sigma_min = |w*| = {_nstr(cp.sigma_min, 15)}, "
        f"class {cp.kind}); the global minimum w' = {_nstr(glob.w[0, 0], 25)}, sigma_min = |w'| = "
        f"{_nstr(glob.sigma_min, 15)}; {len(points)} real critical points in all"
    )
    broken = cp.kind == "min" and gap > 0 and cp.sigma_min > 0 and glob.sigma_min > 0
    return Measure(math.inf, desc, error=math.inf) if broken else Measure(0.0, "holds: " + desc, error=0.0)


def _instance_float(rng: np.random.Generator, n: int, t: int, kind: str) -> dict[str, Any]:
    return {
        "Y": rng.standard_normal((n, n)),
        "A": rng.standard_normal((n, n * t)),
        "Sigma": _sigma_float(rng, n * t, kind),
        "t": t,
    }


def search_instances(ctx: RunContext) -> list[tuple[str, dict[str, Any], int]]:
    """(label, instance, starts): the hand-built n = 1 instance, a t = 1 control (R is then a
    convex quadratic: only global minima), and random n = 2 instances with t = 2, 3."""
    rng = ctx.rng("instances")
    name = ctx.profile.name
    starts = {"quick": 10, "default": 30}.get(name, 100)
    count = {"quick": 2, "default": 6}.get(name, 16)
    out: list[tuple[str, dict[str, Any], int]] = [("hand-built n=1, t=2", dict(HAND_BUILT_1D), 8)]
    out.append(("control n=2, t=1", _instance_float(rng, 2, 1, "random"), 4))
    kinds = ("identity", "random", "diagonal_with_zero")
    for i in range(count):
        t = 2 + (i // 2) % 2
        kind = kinds[i % len(kinds)] if i % 2 == 0 else "random"
        out.append((f"random n=2, t={t}, Sigma {kind}", _instance_float(rng, 2, t, kind), starts))
    return out


def fn_theorem5_search(ctx: RunContext) -> Outcome:
    """Critical points by search (float64 damped Newton from many starts, half minimising and
    half solving grad R = 0, then Newton at 50 digits, Hessian eigenvalues at 50 digits). A strict
    local minimum (every Hessian eigenvalue > 0) with sigma_min(W) > 0 and R above another critical
    point's R breaks Theorem 5; the n = 1 instance is cross-checked against the exact roots."""
    hp = get_backend("mpmath")
    rng = ctx.rng("starts")
    rows: list[dict[str, Any]] = []
    candidates: list[tuple[float, Case, Measure]] = []
    disagreement = ""
    for label, inst, starts in search_instances(ctx):
        found = lr.find_critical_points(inst["Y"], inst["A"], inst["Sigma"], inst["t"], starts=starts, seed=rng)
        best = found[0] if found else None
        spurious = [cp for cp in found if best is not None and cp.kind == "min" and cp.risk - best.risk > 1e-30]
        rows.append(
            {
                "instance": label,
                "starts": starts,
                "converged_starts": sum(cp.hits for cp in found),
                "distinct_critical_points": len(found),
                "kinds": {k: sum(1 for cp in found if cp.kind == k) for k in ("min", "saddle", "max", "degenerate")},
                "spurious_local_minima": len(spurious),
                "spurious_sigma_min": [_nstr(cp.sigma_min, 10) for cp in spurious],
                "spurious_gap": [_nstr(cp.risk - best.risk, 10) for cp in spurious if best is not None],
                "R_best": _nstr(best.risk, 20) if best is not None else None,
            }
        )
        if label.startswith("hand-built"):
            exact = _exact_1d(inst)
            same = len(exact) == len(found) and all(
                any(bool(abs(e.w[0, 0] - f.w[0, 0]) < 1e-40) and e.kind == f.kind for f in found) for e in exact
            )
            if not same:
                disagreement = (
                    f"the search found {len(found)} critical points for {label}, the exact roots {len(exact)}"
                )
        for cp in spurious:
            assert best is not None
            case = {k: inst[k] for k in ("Y", "A", "Sigma", "t")} | {"W": cp.w_strings(), "W_better": best.w_strings()}
            m = replay_theorem5(case, hp)
            if not m.ratio > THRESHOLD:  # not confirmed at 50 digits: no candidate
                continue
            # prefer n = 2 instances, then the largest eps = min(sigma_min(W*), sigma_min(W'))
            score = (cp.w.shape[0] > 1) * 1e6 + min(float(cp.sigma_min), float(best.sigma_min))
            candidates.append((score, case, m))
    failure = None
    if candidates:
        _, chosen, m = max(candidates, key=lambda c: c[0])
        failure = (chosen, m)
    total = sum(r["spurious_local_minima"] for r in rows)
    notes = (
        f"{len(rows)} instances, {sum(r['starts'] for r in rows)} starts, "
        f"{sum(r['distinct_critical_points'] for r in rows)} distinct critical points, {total} spurious local minima"
    )
    if disagreement:
        notes += f"; DISAGREEMENT with the exact enumeration: {disagreement}"
        return Outcome(False, len(rows), notes=notes, data={"instances": rows})
    return Outcome(failure is None, len(rows), failure=failure, notes=notes, data={"instances": rows})


def replay_theorem5(inputs: Mapping[str, Any], b: Backend) -> Measure:
    """From the recorded inputs, in b's arithmetic: Newton from the recorded W* to the critical
    point W_c it converges to (it must stay within 1e-8 of W*), then R(W_c) - R(W_better) as a
    ratio to (n^2 eps (1 + R)); it counts only when ||grad R(W_c)|| is at rounding level, every
    Hessian eigenvalue is positive (a strict local minimum) and sigma_min > 0 at W_c and at W_better
    (so both satisfy the hypothesis with eps = the smaller one)."""
    pb = _instance_problem(b, inputs)
    w0 = b.asarray(inputs["W"])
    n = pb.n
    w, gn = lr.refine_critical_point(w0, pb.y, pb.a, pb.sigma, pb.t, backend=b)
    moved = _fnorm(b, w - w0) / (1.0 + _fnorm(b, w0))
    gs = lr.gradient_scale(pb, w)
    eig = lr.hessian_eigenvalues(pb.hessian(w), b)
    smin = lr.sigma_min(w, backend=b)
    w_better = b.asarray(inputs["W_better"])
    smin_better = lr.sigma_min(w_better, backend=b)
    r_star = pb.risk(w)
    gap = r_star - pb.risk(w_better)
    top = max(abs(float(v)) for v in eig)
    problems = []
    if not float(gn) <= 1e3 * n * n * b.eps * gs:
        problems.append(f"||grad R|| = {float(gn):.3g} is not at rounding level")
    if not moved <= 1e-8:
        problems.append(f"Newton moved {moved:.3g} away from the recorded W")
    if not float(min(eig)) > 30 * n * n * b.eps * top:
        problems.append(f"the Hessian's smallest eigenvalue {float(min(eig)):.3g} is not positive")
    if not min(float(smin), float(smin_better)) > 30 * n * b.eps * (1.0 + _fnorm(b, w)):
        problems.append(
            f"sigma_min(W*) = {float(smin):.3g} or sigma_min(W') = {float(smin_better):.3g} is not positive"
        )
    digits = min(b.digits or 17, 30)
    desc = (
        f"R(W*) - R(W') = {_nstr(gap, digits) if b.family == 'mpmath' else f'{float(gap):.17g}'} at a critical point "
        f"W* with ||grad R(W*)|| = {float(gn):.3g}, Hessian eigenvalues {[f'{float(v):.6g}' for v in eig]}, "
        f"R(W*) = {float(r_star):.17g}; sigma_min(W*) = {float(smin):.10g}, sigma_min(W') = "
        f"{float(smin_better):.10g}, so both lie in sigma_min(W) >= eps = {min(float(smin), float(smin_better)):.6g}"
    )
    if problems:
        return Measure(0.0, "not a counterexample: " + "; ".join(problems) + f" ({desc})", error=0.0)
    rel = float(gap) / (1.0 + abs(float(r_star)))
    m = scaled(rel, n * n, b.eps)
    return Measure(m.ratio, desc, error=m.error)


THEOREM5 = Claim(
    id="svd.theorem5",
    paper=PAPER,
    where="Thm 5, Sec. 6.2 (and its proof)",
    statement=(
        "With linear recurrent neural networks, if the transition matrix W satisfies sigma_min(W) >= eps > 0, all "
        "critical points of the population risk are global minima"
    ),
    kind="bound",
    checks=(
        FunctionCheck(
            "critical_point_search_50_digits",
            fn_theorem5_search,
            ("mpmath",),
            "search",
            "(R(W*) - R(W')) / (n^2 eps (1 + R(W*))) at a strict local minimum W* with sigma_min(W*) > 0",
            replay_fn=replay_theorem5,
        ),
        FunctionCheck(
            "exact_critical_points_n1",
            fn_theorem5_exact_1d,
            EXACT,
            "symbolic",
            "R(W*) - R_min at a strict local minimum W* with sigma_min(W*) > 0 (exact)",
            threshold=None,
            replay_fn=replay_theorem5_exact,
            exact=True,
        ),
    ),
    notes=(
        "False for t >= 2. Hand-built: n = d = 1, t = 2, Y = 1, Sigma = I, A = (1/10, 1), so R(w) = (w - 1/10)^2 "
        "+ (w^2 - 1)^2; R' has three real roots: a global minimum near w = 0.7526 (R = 0.6139), a maximum near "
        "-0.1021 and a strict local minimum near w = -0.6505 (R = 0.8960, R'' = 3.08 > 0, sigma_min = 0.65). The "
        "search finds such minima for n = 2 too (t = 2, 3; Sigma = I, random, diagonal with a zero). For t = 1, R "
        "is a convex quadratic and the theorem holds (the control instance). The printed proof uses Claim 1's "
        "wrong gradient, bounds ||(E_1|...|E_t)(Id|2W'|...)'|| below by the sum of the blocks' norms (a "
        "sum of products of blocks is not bounded below by their separate norms), and concludes Y WW = A from a "
        "zero gradient, which fails whenever A is not of the form Y WW (then R* > C and no W reaches it)."
    ),
)

# =============================================================================== Corollary 1
HAND_BUILT_COROLLARY: Case = {
    "Y": [["1"]],
    "A": [["-1/10", "3/2"]],
    "Sigma": [["1", "0"], ["0", "1"]],
    "t": 2,
    "sigma_star": "1",
    "r": "0.1",
}
"""R(w) = (w + 1/10)^2 + (w^2 - 3/2)^2: wells near w = 0.974 (spurious) and w = -1.024 (global), both
with |w| in (sigma* - r, sigma* + r) = (0.9, 1.1)."""

Params = tuple[list[Array], list[Array], Array]


def svdrnn_parameters(b: Backend, w: Array, sigma_star: Any, r: Any, *, smooth: bool) -> Params | None:
    """svdRNN parameters (us, vs, s_hat) of W for M_{1,1} with eq. 8: W = U Sigma V' by b's SVD, the
    reflection vectors by param.svd.factor_parameters, s_hat = eq. 8's inverse (DomainError when a
    singular value is outside (sigma* - r, sigma* + r)). With ``smooth``, U and V are first replaced
    by U D, V D (D = diag(1, .., 1, -1), which keeps W) so that det U = det V = (-1)^n: then u_1 and
    v_1 are nonzero (u_1 = 0 exactly when det U = (-1)^(n-1), for generic U), so every reflection is
    a smooth function of its vector near these parameters; None when det W < 0 makes that impossible."""
    u, s, v = b.svd(w)
    n = w.shape[0]
    if smooth:
        du = 1 if np.linalg.det(b.to_numpy(u)) > 0 else -1
        dv = 1 if np.linalg.det(b.to_numpy(v)) > 0 else -1
        if du != dv:
            return None
        if du != (-1) ** n:
            u, v = u.copy(), v.copy()
            u[:, n - 1] = -u[:, n - 1]
            v[:, n - 1] = -v[:, n - 1]
    params = svd.factor_parameters(u, s, v, backend=b)
    return params.us, params.vs, svd.sigma_map_inverse(params.sigma, sigma_star, r, backend=b)


def svdrnn_weight(b: Backend, p: Params, sigma_star: Any, r: Any) -> Array:
    """W = M_{1,1}(us, vs, sigma_map(s_hat)) (eq. 3 with eq. 8)."""
    us, vs, s_hat = p
    return svd.m_k1k2(us, vs, svd.sigma_map(s_hat, sigma_star, r, backend=b), backend=b)


def _param_inputs(b: Backend, p: Params, prefix: str = "") -> dict[str, Any]:
    us, vs, s_hat = p
    out: dict[str, Any] = {f"{prefix}u{len(x)}": b.to_strings(x) for x in us}
    out |= {f"{prefix}v{len(x)}": b.to_strings(x) for x in vs}
    out[f"{prefix}s_hat"] = b.to_strings(s_hat)
    return out


def _params_from(b: Backend, inputs: Mapping[str, Any], n: int, prefix: str = "") -> Params:
    us = [b.asarray(inputs[f"{prefix}u{k}"]) for k in range(1, n + 1)]
    vs = [b.asarray(inputs[f"{prefix}v{k}"]) for k in range(1, n + 1)]
    return us, vs, b.asarray(inputs[f"{prefix}s_hat"])


def _smallest_vector(b: Backend, p: Params) -> float:
    return min(float(b.to_float(b.max_abs(x))) for x in (*p[0], *p[1]))


def _perturbation_margin(
    b: Backend, p: Params, pb: lr.Problem, sigma_star: Any, r: Any, rng: np.random.Generator, count: int
) -> tuple[float, int]:
    """min over random perturbations p + rho z (every entry of every u, v and s_hat; ||z|| = 1,
    rho in {1e-3, 1e-6, 1e-12}) of (L(p + rho z) - L(p)) / rho^2, L = R o M: nonnegative (up to
    rounding) at a local minimum of L."""
    base = pb.risk(svdrnn_weight(b, p, sigma_star, r))
    sizes = [x.shape[0] for x in (*p[0], *p[1], p[2])]
    worst = math.inf
    done = 0
    for rho in ("1e-3", "1e-6", "1e-12"):
        step = b.scalar(rho)
        for _ in range(count):
            z = rng.standard_normal(sum(sizes))
            z = z / np.linalg.norm(z)
            parts, k = [], 0
            for x, m in zip((*p[0], *p[1], p[2]), sizes, strict=True):
                parts.append(x + step * b.asarray(z[k : k + m]))
                k += m
            nu = len(p[0])
            q: Params = (parts[:nu], parts[nu : 2 * nu], parts[-1])
            diff = pb.risk(svdrnn_weight(b, q, sigma_star, r)) - base
            worst = min(worst, float(diff / (step * step)))
            done += 1
    return worst, done


def corollary_case(
    b: Backend, inst: Mapping[str, Any], w_star: Array, w_better: Array, sigma_star: Any, r: Any
) -> Case | None:
    """The counterexample's inputs: the instance, the band, svdRNN parameters p* of the spurious
    minimum W* (smooth there) and p' of the better point W'; None when W* admits no smooth
    parameters (det W* < 0) or a singular value is outside the band."""
    from orthoverify.errors import DomainError

    try:
        p_star = svdrnn_parameters(b, w_star, sigma_star, r, smooth=True)
        p_better = svdrnn_parameters(b, w_better, sigma_star, r, smooth=False)
    except DomainError:
        return None
    if p_star is None or p_better is None:
        return None
    case: dict[str, Any] = {k: inst[k] for k in ("Y", "A", "Sigma", "t")} | {"sigma_star": sigma_star, "r": r}
    return case | _param_inputs(b, p_star) | _param_inputs(b, p_better, "better_")


def replay_corollary(inputs: Mapping[str, Any], b: Backend) -> Measure:
    """From the recorded inputs, in b's arithmetic: W = M(p*) (eq. 3, eq. 8); Newton from W to the
    critical point W_c it converges to (within 1e-8); W_c must be a strict local minimum of R
    (gradient at rounding level, every Hessian eigenvalue > 0) and p* must be a point where M is
    smooth (every reflection vector nonzero): then L = R o M has a local minimum at parameters of
    W_c next to p*. The breaking quantity: R(W_c) - L(p') > 0, p' another svdRNN parameter point
    with the same band (sigma*, r), as a ratio to (n^2 eps (1 + R))."""
    pb = _instance_problem(b, inputs)
    sigma_star, r = inputs["sigma_star"], inputs["r"]
    n = pb.n
    p_star = _params_from(b, inputs, n)
    p_better = _params_from(b, inputs, n, "better_")
    w0 = svdrnn_weight(b, p_star, sigma_star, r)
    w, gn = lr.refine_critical_point(w0, pb.y, pb.a, pb.sigma, pb.t, backend=b)
    moved = _fnorm(b, w - w0) / (1.0 + _fnorm(b, w0))
    eig = lr.hessian_eigenvalues(pb.hessian(w), b)
    top = max(abs(float(v)) for v in eig)
    r_c = pb.risk(w)
    l_better = pb.risk(svdrnn_weight(b, p_better, sigma_star, r))
    gap = r_c - l_better
    smallest = _smallest_vector(b, p_star)
    sig = svd.sigma_map(p_star[2], sigma_star, r, backend=b)
    problems = []
    if not float(gn) <= 1e3 * n * n * b.eps * lr.gradient_scale(pb, w):
        problems.append(f"||grad R|| = {float(gn):.3g} is not at rounding level")
    if not moved <= 1e-8:
        problems.append(f"Newton moved {moved:.3g} away from M(p*)")
    if not float(min(eig)) > 30 * n * n * b.eps * top:
        problems.append(f"the Hessian's smallest eigenvalue {float(min(eig)):.3g} is not positive")
    if not smallest > 1e-6:
        problems.append(f"a reflection vector of p* is (nearly) zero ({smallest:.3g}): M is not continuous there")
    desc = (
        f"R(W_c) - L(p') = {_nstr(gap, 30) if b.family == 'mpmath' else f'{float(gap):.17g}'} with L(p*) = "
        f"R(M(p*)) = {float(pb.risk(w0)):.17g} at a strict local minimum W_c = M(p*) (moved {moved:.2g}) of R: "
        f"||grad R|| = {float(gn):.3g}, Hessian eigenvalues {[f'{float(v):.6g}' for v in eig]}, sigma(p*) = "
        f"{[f'{float(v):.10g}' for v in sig]} in (sigma* - r, sigma* + r) = ({sigma_star} - {r}, {sigma_star} + {r}), "
        f"smallest reflection vector entry max {smallest:.3g}"
    )
    if problems:
        return Measure(0.0, "not a counterexample: " + "; ".join(problems) + f" ({desc})", error=0.0)
    return _with_desc(scaled(float(gap) / (1.0 + abs(float(r_c))), n * n, b.eps), desc)


def _with_desc(m: Measure, desc: str) -> Measure:
    return Measure(m.ratio, desc, error=m.error)


def _corollary_outcome(
    ctx: RunContext, inst: Mapping[str, Any], w_star: Array, w_better: Array, sigma_star: Any, r: Any, label: str
) -> tuple[Case, Measure, dict[str, Any]] | None:
    hp = ctx.backend
    case = corollary_case(hp, inst, w_star, w_better, sigma_star, r)
    if case is None:
        return None
    pb = _instance_problem(hp, inst)
    n = pb.n
    p_star = _params_from(hp, case, n)
    rebuilt = _fnorm(hp, svdrnn_weight(hp, p_star, sigma_star, r) - w_star) / _fnorm(hp, w_star)
    margin, samples = _perturbation_margin(
        hp, p_star, pb, sigma_star, r, ctx.rng("perturb", label), {"quick": 20}.get(ctx.profile.name, 60)
    )
    data = {
        "instance": label,
        "sigma_star": str(sigma_star),
        "r": str(r),
        "W*": [[_nstr(v, 20) for v in row] for row in w_star],
        "W'": [[_nstr(v, 20) for v in row] for row in w_better],
        "singular_values_W*": [_nstr(v, 12) for v in hp.svd(w_star)[1]],
        "singular_values_W'": [_nstr(v, 12) for v in hp.svd(w_better)[1]],
        "||M(p*) - W*|| / ||W*||": f"{rebuilt:.3g}",
        "perturbations": samples,
        "min (L(p* + rho z) - L(p*)) / rho^2": f"{margin:.6g}",
    }
    m = replay_corollary(case, hp)
    if not rebuilt <= 1e-40 or not margin >= -1e-20 or not m.ratio > THRESHOLD:
        return None
    return case, m, data


def fn_corollary_1d(ctx: RunContext) -> Outcome:
    """The hand-built n = 1 instance (exact critical points), band sigma* = 1, r = 1/10: the spurious
    minimum W* and the global minimum W' both have |w| in (0.9, 1.1); p* = parameters of W* with every
    reflection nonzero (U = V = -1), checked M(p*) = W* at 50 digits and by perturbations of p*."""
    inst = HAND_BUILT_COROLLARY
    points = _exact_1d(inst)
    bad = _spurious_1d(points)
    if not bad:
        return Outcome(True, 1, notes="no spurious local minimum of R in this instance")
    best = min(points, key=lambda cp: cp.risk)
    hp = ctx.backend
    cp = bad[0][0]
    out = _corollary_outcome(
        ctx,
        inst,
        hp.asarray(cp.w_strings()),
        hp.asarray(best.w_strings()),
        inst["sigma_star"],
        inst["r"],
        "hand-built n=1",
    )
    if out is None:
        return Outcome(False, 1, notes="the spurious minimum of R did not give a spurious minimum of the svdRNN loss")
    case, m, data = out
    return Outcome(False, 1, failure=(case, m), notes=f"{data}", data=data)


def _band(hp: Backend, *ws: Array) -> tuple[str, str]:
    """(sigma*, r) as 4-digit decimals with (sigma* - r, sigma* + r) holding (0.95 lo, 1.05 hi), lo and
    hi the extreme singular values of the given matrices (so sigma* - r > 0)."""
    svals = [float(v) for w in ws for v in hp.svd(w)[1]]
    lo, hi = 0.95 * min(svals), 1.05 * max(svals)
    star = float(f"{(lo + hi) / 2:.4g}")
    r = float(f"{max(star - lo, hi - star) * 1.001:.4g}")
    return f"{star!r}", f"{r!r}"


def fn_corollary_search(ctx: RunContext) -> Outcome:
    """n = 2: spurious local minima of R from the critical-point search (as for Theorem 5); for each
    one with det W* > 0 (so that parameters exist at which M is smooth), a band (sigma*, r) holding
    the singular values of W* and of the best critical point W', and the pull-back; the failing case
    reported is the one with the narrowest band (smallest r / sigma*)."""
    hp = ctx.backend
    rng = ctx.rng("starts")
    rows: list[dict[str, Any]] = []
    pulled: list[tuple[float, tuple[Case, Measure, dict[str, Any]]]] = []
    for label, inst, starts in search_instances(ctx):
        if inst["t"] < 2 or len(inst["Y"]) < 2:
            continue
        found = lr.find_critical_points(inst["Y"], inst["A"], inst["Sigma"], inst["t"], starts=starts, seed=rng)
        if not found:
            continue
        best = found[0]
        spurious = [cp for cp in found if cp.kind == "min" and cp.risk - best.risk > 1e-30]
        for cp in sorted(spurious, key=lambda c: -float(c.sigma_min)):
            w_star, w_best = hp.asarray(cp.w_strings()), hp.asarray(best.w_strings())
            det = float(np.linalg.det(hp.to_numpy(w_star)))
            rows.append({"instance": label, "sigma_min": _nstr(cp.sigma_min, 10), "det": f"{det:.6g}"})
            if det <= 0:
                continue
            star, r = _band(hp, w_star, w_best)
            out = _corollary_outcome(ctx, inst, w_star, w_best, star, r, label)
            if out is not None:
                pulled.append((float(r) / float(star), out))
    if not pulled:
        return Outcome(
            True, len(rows), notes=f"{len(rows)} spurious minima of R, none pulled back", data={"spurious": rows}
        )
    _, (case, m, data) = min(pulled, key=lambda x: x[0])  # the narrowest band r / sigma*
    note = f"{len(rows)} spurious minima of R, {len(pulled)} pulled back; the narrowest band: {data}"
    return Outcome(False, len(rows), failure=(case, m), notes=note, data=data | {"spurious": rows})


COROLLARY1 = Claim(
    id="svd.corollary1",
    paper=PAPER,
    where="Cor. 1, Sec. 6.2 (with eq. 3 and eq. 8)",
    statement="With the update rule in (8), linear svdRNNs have no spurious local minimum",
    kind="existence",
    checks=(
        FunctionCheck(
            "pullback_hand_built_n1",
            fn_corollary_1d,
            ("mpmath",),
            "high-precision",
            "(R(W*) - L(p')) / (n^2 eps (1 + R)) at a local minimum p* of L = R o M_{1,1} o (eq. 8)",
            replay_fn=replay_corollary,
        ),
        FunctionCheck(
            "pullback_search_n2",
            fn_corollary_search,
            ("mpmath",),
            "search",
            "(R(W*) - L(p')) / (n^2 eps (1 + R)) at a local minimum p* of L = R o M_{1,1} o (eq. 8)",
            replay_fn=replay_corollary,
        ),
    ),
    notes=(
        "The loss in the svdRNN parameters p = (u_1..u_n, v_1..v_n, s_hat) is L(p) = R(M_{1,1}(u, v, sigma(s_hat))). "
        "If W* is a strict local minimum of R and M is continuous at p* with M(p*) = W*, then p* is a local "
        "minimum of L (p near p* maps near W*); it is spurious when some p' in the same parametrisation has "
        "L(p') < L(p*). M is continuous at p* when no reflection vector is zero (eq. 1's H(0) = I is a jump: "
        "H^n_1(u) is I for u = 0 and diag(1, .., 1, -1) otherwise); with U D, V D (D = diag(1, .., 1, -1)) one "
        "can make u_1, v_1 nonzero exactly when det W* > 0. Hand-built: n = 1, t = 2, Y = 1, Sigma = I, "
        "A = (-1/10, 3/2), sigma* = 1, r = 1/10: W* = 0.97399 (R = 1.45743), W' = -1.02412 (R = 1.05756), "
        "p* = (u_1 = v_1 = -2, s_hat = eq. 8's inverse of 0.97399); for n = 1 with W* < 0 the pull-back fails "
        "(one of u_1, v_1 must be zero), which is why the hand-built spurious minimum sits at W* > 0."
    ),
)

CLAIMS: list[Claim] = [CLAIM1, CLAIM1_CORRECTED, THEOREM5, COROLLARY1]
LANDSCAPE_CLAIMS = CLAIMS
