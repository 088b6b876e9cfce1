"""Claims of Sec. 1 of the uRNN paper (Arjovsky, Shah & Bengio; key ``unitary``): the chain rule of
eq. 3 and the bound of eq. 4-5, ``||dC/dh_t|| <= ||dC/dh_T||`` for norm-preserving W and ReLU, and
whether that bound carries over to the modReLU of Sec. 3.2.

Evidence: RNNs with orthogonal W (real) and unitary W (Haar, structured, and the uRNN product
W = D3 R2 F^-1 D2 Pi R1 F D1, on the real twin) unrolled up to T = 100 steps with inputs and biases
of both signs; every dC/dh_t by torch autograd and by the backward recursion written against the
backend protocol (float32, float64, 50 and 100 digits, exact), by the products of eq. 3 (as printed
and corrected), by SymPy's exact derivative and by 50-digit central differences; Hypothesis
searches that steer toward the largest ratio max_t ||dC/dh_t|| / ||dC/dh_T||. The maths is
imported from :mod:`orthoverify.param.unitary_gradients` and :mod:`orthoverify.param.unitary`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import mpmath
import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import FLOAT_BACKENDS, Array, Backend, Scalar
from orthoverify.engine.checks import (
    Case,
    FunctionCheck,
    Outcome,
    PropertyCheck,
    RunContext,
    SearchCheck,
    SymbolicCheck,
)
from orthoverify.engine.model import Claim
from orthoverify.engine.ratios import THRESHOLD, Measure, scaled
from orthoverify.engine.reference import central_gradient, fd_eps
from orthoverify.errors import DomainError
from orthoverify.param import unitary as un
from orthoverify.param import unitary_gradients as ug

PAPER = "unitary"
FLOAT_HP = (*FLOAT_BACKENDS, "mpmath")
TORCH = ("torch-float32", "torch-float64")
EXACT = ("sympy",)
SEARCH = ("torch-float64",)

BOUND_RATIO = "(max_t<T ||dC/dh_t|| / ||dC/dh_T|| - 1)_+ / (T N eps)"
AGREE_RATIO = "max_t ||autograd - backward|| / (T N eps ||g|| prod_k ||W_k|| ||J_k+1||)"
CHAIN_RATIO = "min over readings of max_t ||product g - dC/dh_t|| / (T N eps ||g|| prod_k ||W_k|| ||J_k+1||)"


# =============================================================================== running a case
def _truthy(v: Any) -> bool:
    return v is True or str(v).lower() in ("true", "1")


def _run(b: Backend, case: Case, *, track: bool = False) -> ug.Unrolled:
    """The forward pass of a recorded case in b's arithmetic (W polished there when orthogonal)."""
    act = str(case.get("act", "relu"))
    return ug.unroll(
        case["W"],
        case["V"],
        case["xs"],
        case["h0"],
        c=case["c"],
        activation=act,  # type: ignore[arg-type]
        bias=case.get("bias") if act == "modrelu" else None,
        backend=b,
        orthogonal=_truthy(case.get("orthogonal", True)),
        track=track,
    )


def _gradients(b: Backend, case: Case) -> tuple[ug.Unrolled, Array, list[Array], str]:
    """(run, g, every dC/dh_t, how): torch autograd on torch, the backward recursion elsewhere."""
    run = _run(b, case, track=b.family == "torch")
    g = b.check_array(case["g"], name="g", ndim=1)
    if b.family == "torch":
        return run, g, ug.autograd_gradients(run, g), "autograd"
    return run, g, ug.backward(run, g), "backward"


def _show(b: Backend, x: Scalar, digits: int = 20) -> str:
    """A scalar for a counterexample's display: every digit that matters at b's precision."""
    if b.exact:
        return str(x)
    if b.family == "mpmath":
        return str(mpmath.nstr(x, digits))
    return f"{b.to_float(x):.17g}"


def _vec(b: Backend, x: Array) -> str:
    return "(" + ", ".join(_show(b, v, 12) for v in x.reshape(-1)) + ")"


# =============================================================================== eq. 4-5: the bound
def bound_measure(b: Backend, run: ug.Unrolled, grads: list[Array]) -> Measure:
    """max_t<T ||dC/dh_t|| / ||dC/dh_T|| = r against 1: ratio ``(r - 1)_+ / (T N eps)``, error r - 1
    (exact: r^2 <= 1 decided exactly)."""
    t_len, n = run.T, run.N
    if b.exact:
        sq = [b.sum(d * d) for d in grads]
        top = sq[-1]
        if b.is_zero(top):
            raise DomainError("dC/dh_T = g is zero: the ratio of eq. 5 is undefined")
        best = 0
        for t in range(1, t_len):
            if b.positive(sq[t] - sq[best]):
                best = t
        r2 = sympy.expand(sq[best] / top)
        desc = f"max_t<T ||dC/dh_t||^2 / ||dC/dh_T||^2 = {r2} at t = {best} (T = {t_len}, N = {n})"
        if b.positive(sq[best] - top):
            return Measure(math.inf, desc, error=math.inf)
        return Measure(0.0, desc, error=0.0)
    norms = ug.gradient_norms(b, grads)
    top = norms[-1]
    if b.is_zero(top):
        raise DomainError("dC/dh_T = g is zero: the ratio of eq. 5 is undefined")
    excess = [nr / top - 1 for nr in norms[:-1]]
    worst_t = max(range(t_len), key=lambda t: b.to_float(excess[t]))
    e = excess[worst_t]
    err = b.to_float(e)
    desc = (
        f"max_t<T ||dC/dh_t|| / ||dC/dh_T|| = {_show(b, e + 1)} (r - 1 = {_show(b, e, 6)}) at t = {worst_t} "
        f"(T = {t_len}, N = {n})"
    )
    ratio = max(err, 0.0) / (t_len * n * b.eps) if math.isfinite(err) else math.inf
    return Measure(ratio, desc, error=err)


def q_bound(b: Backend, case: Case) -> Measure:
    """The bound of eq. 5 on one case (torch: autograd; elsewhere the backward recursion)."""
    run, _, grads, _ = _gradients(b, case)
    return bound_measure(b, run, grads)


def replay_bound(inputs: Mapping[str, Any], b: Backend) -> Measure:
    """:func:`q_bound` in the argument order of a FunctionCheck's replay."""
    return q_bound(b, inputs)


def q_bound_search(b: Backend, case: Case) -> Measure:
    """:func:`q_bound`, with a drawn case outside the claim's domain (modReLU at z = 0 with b > 0,
    where it has no derivative) scored 0 rather than crashing the search."""
    try:
        return q_bound(b, case)
    except DomainError as exc:
        return Measure(0.0, f"outside the domain: {exc}", error=0.0)


def q_autograd(b: Backend, case: Case) -> Measure:
    """Torch autograd against the backward recursion on the same forward pass, every t."""
    if b.family != "torch":
        return Measure(0.0, f"autograd runs only on torch, not {b.name}: nothing to compare", error=0.0)
    run = _run(b, case, track=True)
    g = b.check_array(case["g"], name="g", ndim=1)
    auto = ug.autograd_gradients(run, g)
    rec = ug.backward(run, g)
    return _gap(b, run, g, [a - r for a, r in zip(auto, rec, strict=True)])


def _gap(b: Backend, run: ug.Unrolled, g: Array, diffs: list[Array]) -> Measure:
    """max_t ||diff_t|| / scale_t over T N eps, scale_t = ||g|| prod ||W_k|| ||J_k+1|| (what the
    backward pass may reach); where scale_t = 0 the difference must vanish."""
    scales = ug.gradient_scales(run, g)
    err = 0.0
    for d, s in zip(diffs, scales, strict=True):
        nd = b.to_float(b.norm(d))
        if s > 0:
            err = max(err, nd / s)
        elif nd != 0:
            err = math.inf
    return scaled(err, run.T * run.N, b.eps)


# =============================================================================== cases
RELU_KINDS = (
    "real",
    "complex",
    "urnn",
    "real-per-step",
    "permutation",
    "near-identity",
    "structured-unitary",
    "minus-identity",
)
MODRELU_KINDS = ("complex", "urnn", "real", "complex-per-step", "identity", "structured-unitary")
FLOAT_STEPS = (1, 2, 10, 100)
HP_STEPS = (1, 3, 10, 20)


def _polar(m: np.ndarray) -> np.ndarray:
    """The orthogonal (unitary) polar factor U V* of a square matrix."""
    u, _, vh = np.linalg.svd(m)
    return np.asarray(u @ vh)


def _twin(w: np.ndarray) -> np.ndarray:
    """The real twin [[A, -B], [B, A]] of a complex (or real) n x n matrix, float64."""
    return np.asarray(un.embed_matrix(np.asarray(w, dtype=complex), backend="numpy-float64"))


def _urnn_w(rng: np.random.Generator, n: int) -> np.ndarray:
    """W = D3 R2 F^-1 D2 Pi R1 F D1 with parameters drawn as Sec. 3.4 initialises them."""
    p = un.urnn_parameters(**un.urnn_random(rng, n), backend="numpy-float64")
    return un.urnn_matrix(p).to_complex(p.backend)


def _weight(rng: np.random.Generator, kind: str, n: int, t_len: int, twin: bool) -> np.ndarray:
    """W for a kind of case: N x N (N = n real, 2n on a twin) or T x N x N for per-step W_k."""
    lift = _twin if twin else (lambda w: np.asarray(w, dtype=float))
    if kind == "real":
        return lift(samples.haar_orthogonal(rng, n))
    if kind == "complex":
        return _twin(samples.haar_unitary(rng, n))
    if kind == "urnn":
        return _twin(_urnn_w(rng, n))
    if kind == "real-per-step":
        return np.stack([lift(samples.haar_orthogonal(rng, n)) for _ in range(t_len)])
    if kind == "complex-per-step":
        return np.stack([_twin(samples.haar_unitary(rng, n)) for _ in range(t_len)])
    if kind == "permutation":
        return lift(samples.random_permutation(rng, n))
    if kind == "near-identity":
        return lift(samples.near_identity(rng, n, 1e-3))
    if kind == "minus-identity":
        return lift(-np.eye(n))
    if kind == "identity":
        return lift(np.eye(n))
    if kind == "structured-unitary":
        options = samples.structured_unitaries(rng, n)
        return _twin(options[int(rng.integers(len(options)))][1])
    raise ValueError(f"unknown kind {kind}")


def _nonzero(rng: np.random.Generator, n: int) -> np.ndarray:
    g = rng.standard_normal(n)
    return g if np.any(g) else np.eye(n)[0]


def float_case(
    rng: np.random.Generator, kind: str, n: int, t_len: int, *, act: str = "relu", bias_mode: str = "mixed"
) -> dict[str, Any]:
    """A float64 case: W of the kind, inputs and biases of both signs. ReLU: ``permutation`` has
    c > 0, h0 >= 0 and no input, so every unit stays active (D = I: eq. 5 holds with equality);
    ``minus-identity`` has c < -20 after the first steps' inputs, killing units. modReLU biases
    (``bias_mode``): mixed U(-1, 1), positive U(0.05, 1), nonpositive U(-1, 0) with exact zeros,
    zero (modReLU is then the identity: equality again)."""
    twin = act == "modrelu" or kind in ("complex", "urnn", "structured-unitary", "complex-per-step")
    w = _weight(rng, kind, n, t_len, twin)
    big_n = w.shape[-1]
    m = 1 + int(rng.integers(3))
    v = rng.standard_normal((big_n, m))
    xs = rng.standard_normal((t_len, m))
    h0 = rng.standard_normal(big_n)
    c = rng.standard_normal(big_n)
    if act == "relu" and kind == "permutation":
        v, h0, c = np.zeros_like(v), np.abs(h0), np.abs(c) + 0.1
    if act == "relu" and kind == "minus-identity":
        c = c - 20.0
    case: dict[str, Any] = {"kind": kind, "act": act, "W": w, "V": v, "xs": xs, "h0": h0, "c": c}
    case["g"] = _nonzero(rng, big_n)
    if act == "modrelu":
        nb = big_n // 2
        if bias_mode == "mixed":
            bias = rng.uniform(-1, 1, nb)
        elif bias_mode == "positive":
            bias = rng.uniform(0.05, 1, nb)
        elif bias_mode == "nonpositive":
            bias = rng.uniform(-1, 0, nb)
            bias[rng.random(nb) < 0.3] = 0.0
        elif bias_mode == "zero":
            bias = np.zeros(nb)
        else:
            raise ValueError(bias_mode)
        case["bias"] = bias
        case["bias_mode"] = bias_mode
    return case


def _float_sizes(ctx: RunContext) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(n values, T values): float backends take the profile's sizes up to 16 and T up to 100;
    50 digits its high-precision sizes up to 6 and T up to 20."""
    if ctx.backend.method == "high-precision":
        return tuple(n for n in ctx.profile.hp_sizes if n <= 6), HP_STEPS
    return tuple(n for n in ctx.profile.sizes if n <= 16), FLOAT_STEPS


def _cycled(
    ctx: RunContext, kinds: tuple[str, ...], *, act: str, modes: tuple[str, ...] = ("mixed",), small: bool = False
) -> Iterator[Case]:
    """2 x profile.cases cases per size n, kinds, T and bias modes cycling (shifted per n, so a kind
    meets every size in turn), so every kind, T and mode turns up; ``small`` keeps n <= 3, T <= 10."""
    rng = ctx.rng()
    ns, steps = _float_sizes(ctx)
    if small:
        ns, steps = tuple(n for n in ns if n <= 3) or (2,), tuple(t for t in steps if t <= 10)
    i = 0
    for j, n in enumerate(ns):
        for _ in range(2 * ctx.profile.cases):
            kind = kinds[(i + j) % len(kinds)]
            t_len = steps[(i + i // len(kinds)) % len(steps)]
            mode = modes[(i + i // (len(kinds) * len(steps))) % len(modes)]
            yield float_case(rng, kind, n, t_len, act=act, bias_mode=mode)
            i += 1


def cases_bound_relu(ctx: RunContext) -> Iterator[Case]:
    yield from _cycled(ctx, RELU_KINDS, act="relu")


def cases_modrelu_any(ctx: RunContext) -> Iterator[Case]:
    yield from _cycled(ctx, MODRELU_KINDS, act="modrelu", modes=("mixed", "positive"), small=True)


def cases_modrelu_nonpositive(ctx: RunContext) -> Iterator[Case]:
    yield from _cycled(ctx, MODRELU_KINDS, act="modrelu", modes=("nonpositive", "zero"))


def _rat(rng: np.random.Generator, shape: tuple[int, ...], bound: int = 3, den: int = 3) -> np.ndarray:
    flat = [
        sympy.Rational(int(rng.integers(-bound, bound + 1)), int(rng.integers(1, den + 1)))
        for _ in range(int(np.prod(shape)))
    ]
    return np.array(flat, dtype=object).reshape(shape)


def _exact_weight(rng: np.random.Generator, kind: str, n: int, t_len: int) -> tuple[np.ndarray, bool]:
    """(W, orthogonal): exactly orthogonal rational W (Cayley), the twin of an exactly unitary one,
    per-step W_k, a permutation, or a general rational matrix (for the chain rule only)."""
    if kind == "real":
        return samples.rational_orthogonal(rng, n, det=1 if rng.random() < 0.5 else -1), True
    if kind == "complex":
        re, im = samples.rational_unitary(rng, n, bound=1)
        return np.asarray(un.embed_matrix((re, im), backend="sympy"), dtype=object), True
    if kind == "real-per-step":
        return np.stack([samples.rational_orthogonal(rng, n) for _ in range(t_len)]), True
    if kind == "permutation":
        p = samples.random_permutation(rng, n).astype(int)
        return np.array([[sympy.Integer(v) for v in row] for row in p], dtype=object), True
    if kind == "general":
        return _rat(rng, (n, n), 2, 2), False
    raise ValueError(kind)


def exact_case(rng: np.random.Generator, kind: str, n: int, t_len: int) -> dict[str, Any]:
    """A ReLU case in rationals (SymPy): inputs and biases of both signs."""
    w, orth = _exact_weight(rng, kind, n, t_len)
    big_n = w.shape[-1]
    m = 1 + int(rng.integers(2))
    case: dict[str, Any] = {
        "kind": kind,
        "act": "relu",
        "orthogonal": orth,
        "W": w,
        "V": _rat(rng, (big_n, m)),
        "xs": _rat(rng, (t_len, m)),
        "h0": _rat(rng, (big_n,)),
        "c": _rat(rng, (big_n,)),
    }
    if kind == "permutation":  # all units active: equality in eq. 5
        case["V"] = np.array([[sympy.Integer(0)] * m for _ in range(big_n)], dtype=object)
        case["h0"] = np.array([abs(v) for v in case["h0"]], dtype=object)
        case["c"] = np.array([abs(v) + 1 for v in case["c"]], dtype=object)
    g = _rat(rng, (big_n,))
    if all(v == 0 for v in g):
        g[0] = sympy.Integer(1)
    case["g"] = g
    return case


def cases_bound_exact(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in ctx.profile.exact_sizes:
        for t_len in (1, 2, 4):
            for kind in ("real", "complex", "real-per-step", "permutation"):
                if kind == "complex" and n > 2:
                    continue
                yield exact_case(rng, kind, n, t_len)


# hand-built modReLU cases (n = 1, twin N = 2) whose moduli stay rational: exact in SymPy
def _modrelu_hand(
    name: str, w: list[list[str]], h0: list[str], c: list[str], bias: str, t_len: int, g: list[str]
) -> dict[str, Any]:
    return {
        "kind": name,
        "act": "modrelu",
        "W": w,
        "V": [["0"], ["0"]],
        "xs": [["0"]] * t_len,
        "h0": h0,
        "c": c,
        "bias": [bias],
        "g": g,
    }


_ID2 = [["1", "0"], ["0", "1"]]
_ROT = [["3/5", "-4/5"], ["4/5", "3/5"]]  # the twin of W = 3/5 + 4i/5, |W| = 1

MODRELU_GROWTH = _modrelu_hand("stationary, b = 1", _ID2, ["2", "0"], ["-1", "0"], "1", 10, ["0", "1"])
"""W = 1, h0 = 2, c = -1, b = 1: z_k = 1 and h_k = 2 for every k, the tangential slope is
1 + b/|z| = 2 at every step, so ||dC/dh_0|| = 2^10 ||dC/dh_T|| for g = (0, 1) (i.e. g = i)."""

HAND_MODRELU_PRINTED = (
    _modrelu_hand("one step, b = 1", _ID2, ["1", "0"], ["0", "0"], "1", 1, ["0", "1"]),
    MODRELU_GROWTH,
    _modrelu_hand("rotation, b = 1", _ROT, ["3", "4"], ["0", "0"], "1", 3, ["1", "2"]),
)
HAND_MODRELU_CORRECTED = (
    _modrelu_hand("rotation, b = 0 (identity)", _ROT, ["3", "4"], ["0", "0"], "0", 3, ["1", "2"]),
    _modrelu_hand("rotation, b = -1", _ROT, ["3", "4"], ["0", "0"], "-1", 3, ["1", "2"]),
    _modrelu_hand("rotation, b = -5 (kink |z| + b = 0)", _ROT, ["3", "4"], ["0", "0"], "-5", 2, ["1", "2"]),
    _modrelu_hand("rotation, b = -7 (dead)", _ROT, ["3", "4"], ["0", "0"], "-7", 2, ["1", "2"]),
    _modrelu_hand("z = 0, b = 0", _ID2, ["0", "0"], ["0", "0"], "0", 2, ["1", "2"]),
    _modrelu_hand("z = 0, b = -1", _ID2, ["0", "0"], ["0", "0"], "-1", 2, ["1", "2"]),
)


def _hand(cases: tuple[dict[str, Any], ...]) -> Callable[[RunContext], Iterator[Case]]:
    def gen(ctx: RunContext) -> Iterator[Case]:
        yield from cases

    return gen


# =============================================================================== searches
def _search_strategy(act: str, bias_lo: float, bias_hi: float) -> Callable[[RunContext], Any]:
    """Hypothesis draws a whole case: a kind (real orthogonal, complex unitary or the uRNN product),
    n in 1..4, T in 1..100, W as the polar factor of a drawn matrix (or from drawn uRNN
    parameters), inputs and biases of both signs; the quantity steers it (``hypothesis.target``)."""

    def make(ctx: RunContext) -> Any:
        from hypothesis import strategies as st
        from hypothesis.extra import numpy as hnp

        def fl(lo: float, hi: float) -> Any:
            return st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)

        def arr(shape: tuple[int, ...], lo: float, hi: float) -> Any:
            return hnp.arrays(np.float64, shape, elements=fl(lo, hi))

        @st.composite
        def draw_case(draw: Any) -> dict[str, Any]:
            kind = draw(st.sampled_from(("real", "complex", "urnn")))
            n = draw(st.integers(1, 4))
            t_len = draw(st.integers(1, 100))
            m = draw(st.integers(1, 2))
            if kind == "real":
                w = _polar(draw(arr((n, n), -1, 1)))
                w = _twin(w) if act == "modrelu" else w
            elif kind == "complex":
                w = _twin(_polar(draw(arr((n, n), -1, 1)) + 1j * draw(arr((n, n), -1, 1))))
            else:
                vs = []
                for _ in range(2):
                    v = draw(arr((n,), -1, 1)) + 1j * draw(arr((n,), -1, 1))
                    vs.append(v if np.any(v) else np.eye(n)[0].astype(complex))
                p = un.urnn_parameters(
                    draw(arr((n,), -np.pi, np.pi)),
                    draw(arr((n,), -np.pi, np.pi)),
                    draw(arr((n,), -np.pi, np.pi)),
                    (vs[0].real, vs[0].imag),
                    (vs[1].real, vs[1].imag),
                    draw(st.permutations(list(range(n)))),
                    backend="numpy-float64",
                )
                w = _twin(un.urnn_matrix(p).to_complex(p.backend))
            big_n = w.shape[0]
            g = draw(arr((big_n,), -1, 1))
            case: dict[str, Any] = {
                "kind": kind,
                "act": act,
                "W": w,
                "V": draw(arr((big_n, m), -2, 2)),
                "xs": draw(arr((t_len, m), -2, 2)),
                "h0": draw(arr((big_n,), -2, 2)),
                "c": draw(arr((big_n,), -3, 3)),
                "g": g if np.any(g) else np.eye(big_n)[0],
            }
            if act == "modrelu":
                case["bias"] = draw(arr((big_n // 2,), bias_lo, bias_hi))
            return case

        return draw_case()

    return make


# =============================================================================== representative runs
def representative_case(act: str, bias_mode: str, n: int, t_len: int = 100, seed: int = 2016) -> dict[str, Any]:
    """A uRNN of Sec. 2-3 (W = D3 R2 F^-1 D2 Pi R1 F D1 on the twin, V and x Gaussian, c of both
    signs), fixed seed, T = 100: the run whose ||dC/dh_t|| the report plots against t."""
    rng = np.random.default_rng(seed)
    case = float_case(rng, "urnn", n, t_len, act=act, bias_mode=bias_mode)
    if act == "modrelu" and bias_mode == "positive":
        case["bias"] = np.full(n, 0.1)
    return case


def _trajectory(act: str, bias_mode: str, n: int) -> Callable[[RunContext], Outcome]:
    def fn(ctx: RunContext) -> Outcome:
        b = ctx.backend
        case = representative_case(act, bias_mode, n)
        run, g, auto, _ = _gradients(b, case)
        rec = ug.backward(run, g)
        m = bound_measure(b, run, auto)
        m_rec = bound_measure(b, run, rec)
        agree = q_autograd(b, case)
        data = {
            "description": (
                f"uRNN W (Sec. 2, seed 2016), n = {n} complex units (N = {run.N}), T = {run.T}, {act}"
                + (f", biases {bias_mode}" if act == "modrelu" else "")
            ),
            "t": list(range(run.T + 1)),
            "grad_norm_autograd": [b.to_float(x) for x in ug.gradient_norms(b, auto)],
            "grad_norm_backward": [b.to_float(x) for x in ug.gradient_norms(b, rec)],
            "bound": b.to_float(b.norm(g)),
        }
        worst = max(m.ratio, m_rec.ratio)
        notes = f"{m.display}; backward recursion: {m_rec.display}; autograd vs backward ratio {agree.ratio:.3g}"
        ok = worst <= THRESHOLD and agree.ratio <= THRESHOLD
        failure = (case, m) if m.ratio > THRESHOLD else None
        return Outcome(ok, 1, worst_ratio=worst, failure=failure, notes=notes, data=data)

    return fn


def _trajectory_check(act: str, bias_mode: str, n: int) -> FunctionCheck:
    """The check that records ||dC/dh_t|| against t for one uRNN run (a report's plot)."""
    return FunctionCheck(
        "trajectory_urnn",
        _trajectory(act, bias_mode, n),
        ("torch-float64",),
        "float",
        BOUND_RATIO,
        replay_fn=replay_bound,
    )


# =============================================================================== symbolic lemmas
def sym_isometry(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """The step of eq. 4: for orthogonal W, ||W' D v|| = ||D v|| (so ||W' D|| = ||D W'|| = ||D||).
    W is a symbolic rotation (N = 2, rational parametrisation) and the Cayley transform of a
    symbolic skew matrix (N = 3); D = diag(d_i) and v have free entries."""
    t = sympy.Symbol("t", real=True)
    c, s = (1 - t**2) / (1 + t**2), 2 * t / (1 + t**2)
    a = sympy.symbols("a0:3", real=True)
    skew = sympy.Matrix([[0, a[0], a[1]], [-a[0], 0, a[2]], [-a[1], -a[2], 0]])
    mats = {
        2: sympy.Matrix([[c, -s], [s, c]]),
        3: (sympy.eye(3) - skew) * (sympy.eye(3) + skew).inv(),
    }
    for n, w in mats.items():
        d = sympy.diag(*sympy.symbols(f"d0:{n}", real=True))
        v = sympy.Matrix(sympy.symbols(f"v0:{n}", real=True))
        y = w.T * d * v
        yield f"N={n}: ||W'Dv||^2 - ||Dv||^2", (y.T * y)[0] - ((d * v).T * (d * v))[0]


def sym_modrelu_jacobian(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """modReLU on its active branch, f(z) = (|z| + b) z / |z| in real coordinates z = (x, y): SymPy's
    Jacobian J is symmetric, J z = z (eigenvalue 1, radial) and J z_perp = (1 + b/|z|) z_perp
    (tangential, z_perp = (-y, x))."""
    x, y = sympy.symbols("x y", positive=True)
    bias = sympy.Symbol("b", real=True)
    r = sympy.sqrt(x**2 + y**2)
    f = sympy.Matrix([(r + bias) / r * x, (r + bias) / r * y])
    jac = f.jacobian([x, y])
    z, zp = sympy.Matrix([x, y]), sympy.Matrix([-y, x])
    yield "J - J'", np.array(list(jac - jac.T), dtype=object)
    yield "J z - z", np.array(list(jac * z - z), dtype=object)
    yield "J z_perp - (1 + b/|z|) z_perp", np.array(list(jac * zp - (1 + bias / r) * zp), dtype=object)


# =============================================================================== eq. 3: chain rule
def _truth(b: Backend, case: Case) -> tuple[ug.Unrolled, Array, list[Array]]:
    """The true dC/dh_t: SymPy's derivative (exact), autograd (torch), the backward recursion
    (elsewhere: NumPy, and 50/100 digits when a float failure is confirmed)."""
    if b.exact:
        run = _run(b, case)
        g = b.check_array(case["g"], name="g", ndim=1)
        return run, g, ug.exact_gradients(run, g)
    run, g, grads, _ = _gradients(b, case)
    return run, g, grads


def chain_measure(b: Backend, case: Case, readings: tuple[ug.Reading, ...]) -> Measure:
    """The products of eq. 3 (each reading) against the true gradient for every t < T; the claim
    holds in a reading when every t agrees, and the measure is the best reading's."""
    run, g, truth = _truth(b, case)
    results = []
    for reading in readings:
        got = ug.chain_rule_gradients(run, g, reading)
        diffs = [p - q for p, q in zip(got[:-1], truth[:-1], strict=True)]
        if b.exact:
            bad = next((t for t, d in enumerate(diffs) if not b.is_zero(d)), None)
            desc = (
                f"{reading}: holds for every t"
                if bad is None
                else f"{reading}: at t = {bad} gives {_vec(b, got[bad])}, true dC/dh_t = {_vec(b, truth[bad])}"
            )
            results.append(Measure(0.0 if bad is None else math.inf, desc, error=0.0 if bad is None else math.inf))
        else:
            m = _gap(b, run, g, [*diffs, b.zeros(run.N)])
            results.append(Measure(m.ratio, f"{reading}: relative gap {m.error:.6g}", error=m.error))
    best = min(results, key=lambda m: m.ratio)
    head = f"T = {run.T}, N = {run.N}, {run.activation}: "
    return Measure(best.ratio, head + "; ".join(m.display for m in results), error=best.error)


def q_chain_printed(b: Backend, case: Case) -> Measure:
    return chain_measure(b, case, ("printed_row", "printed_column"))


def q_chain_corrected(b: Backend, case: Case) -> Measure:
    return chain_measure(b, case, ("corrected",))


def q_chain_fd(b: Backend, case: Case) -> Measure:
    """The corrected product against central differences of C(h_t) = g' h_T(h_t) at b's precision
    (50 digits: an independent reference that knows no formula)."""
    run = _run(b, case)
    g = b.check_array(case["g"], name="g", ndim=1)
    got = ug.chain_rule_gradients(run, g, "corrected")
    diffs = []
    for t in range(run.T):

        def cost(h: Array, t: int = t) -> Scalar:
            return b.sum(g * ug.forward_from(run, t, h))

        diffs.append(got[t] - central_gradient(cost, run.hs[t], b))
    diffs.append(b.zeros(run.N))
    m = _gap(b, run, g, diffs)
    return scaled(m.error if m.error is not None else math.inf, run.T * run.N, max(b.eps, fd_eps(b)))


HAND_BUILT_CHAIN: dict[str, Any] = {
    "kind": "hand-built rotation",
    "act": "relu",
    "W": [["3/5", "-4/5"], ["4/5", "3/5"]],
    "V": [["0"], ["0"]],
    "xs": [["0"]],
    "h0": ["1", "0"],
    "c": ["0", "-2"],
    "g": ["1", "0"],
}
"""T = 1, t = 0: z_1 = W h_0 + c = (3/5, -6/5), so D_1 = diag(1, 0). True dC/dh_0 = W' D_1 g =
(3/5, -4/5); the printed product read with rows gives (g' D_1 W')' = W D_1 g = (3/5, 4/5), read with
columns D_1 W' g = (3/5, 0)."""


def cases_chain_exact(ctx: RunContext, *, printed: bool = False) -> Iterator[Case]:
    """The hand-built case, then random rational cases: N = 2 with T = 1, 2 and N = 3 with T = 1
    (the default profile adds N = 3, T = 2 for the corrected product). SymPy differentiates the
    whole composition, whose nested |.| grow quickly with N and T: these sizes keep it to seconds."""
    yield HAND_BUILT_CHAIN
    rng = ctx.rng()
    pairs = [(2, 1), (2, 2), (3, 1)]
    if not printed and ctx.profile.name != "quick":
        pairs.append((3, 2))
    for n, t_len in pairs:
        for kind in ("real", "real-per-step", "general") + (("complex",) if n == 2 else ()):
            yield exact_case(rng, kind, 1 if kind == "complex" else n, t_len)


def cases_chain_exact_printed(ctx: RunContext) -> Iterator[Case]:
    yield from cases_chain_exact(ctx, printed=True)


CHAIN_KINDS: tuple[tuple[str, str], ...] = (
    ("real", "relu"),
    ("complex", "relu"),
    ("urnn", "modrelu"),
    ("real-per-step", "relu"),
    ("complex-per-step", "modrelu"),
    ("general", "relu"),
)


def _chain_float_cases(ctx: RunContext, *, hp: bool) -> Iterator[Case]:
    """ReLU and modReLU (both bias signs), real, complex, uRNN, per-step and general W; small n, T."""
    rng = ctx.rng()
    ns = (1, 2, 3) if hp else (1, 2, 3, 4)
    steps = (1, 2, 3) if hp else (1, 2, 5, 10)
    kinds = CHAIN_KINDS
    i = 0
    for j, n in enumerate(ns):
        for _ in range(ctx.profile.cases):
            kind, act = kinds[(i + j) % len(kinds)]
            t_len = steps[(i + i // len(kinds)) % len(steps)]
            if kind == "general":
                case = float_case(rng, "real", n, t_len)
                case["W"] = rng.standard_normal((n, n)) / math.sqrt(n)
                case["orthogonal"] = False
            else:
                case = float_case(rng, kind, n, t_len, act=act, bias_mode="mixed")
            yield case
            i += 1


def cases_chain_float(ctx: RunContext) -> Iterator[Case]:
    yield from _chain_float_cases(ctx, hp=False)


def cases_chain_hp(ctx: RunContext) -> Iterator[Case]:
    yield from _chain_float_cases(ctx, hp=True)


# =============================================================================== claims
_RATIO_NOTE = (
    "Test ratio (r - 1)_+ / (T N eps), r = max_{t<T} ||dC/dh_t|| / ||dC/dh_T||, N the state size (2n on a "
    "twin), eps the unit roundoff: in exact arithmetic r <= 1; the computed backward pass applies T factors "
    "W_k' D_{k+1}, each with relative rounding error at most about N eps (a length-N dot product per entry) and "
    "each W_k orthogonal to about N eps (it is polished to the working precision first, so that a float64 W "
    "carried to 50 digits is orthogonal there too), so rounding alone can raise r above 1 by at most a small "
    "multiple of T N eps; a ratio above 30 cannot be rounding. The cases where eq. 5 holds with equality (every "
    "unit active, D = I; modReLU with b = 0) show the rounding actually seen."
)

GRADIENT_BOUND = Claim(
    id="unitary.gradient_bound",
    paper=PAPER,
    where="004 Sec. 1, eq. 3-5",
    kind="bound",
    statement=(
        "If the W_k are norm preserving (orthogonal or unitary) and sigma is the ReLU, then "
        "||dC/dh_t|| <= ||dC/dh_T|| prod_{k=t}^{T-1} ||D_{k+1}|| <= ||dC/dh_T|| for all t < T, independently of "
        "T - t (eq. 4-5; a unitary W acts on (Re h, Im h) as its real twin [[A, -B], [B, A]], ReLU on real and "
        "imaginary parts separately)"
    ),
    checks=(
        PropertyCheck("random_and_structured", q_bound, cases_bound_relu, FLOAT_HP, BOUND_RATIO),
        PropertyCheck("exact", q_bound, cases_bound_exact, EXACT, "max_t<T ||dC/dh_t||^2 <= ||dC/dh_T||^2 (exact)"),
        SearchCheck("search", q_bound_search, _search_strategy("relu", 0.0, 0.0), SEARCH, BOUND_RATIO),
        PropertyCheck("autograd_vs_backward", q_autograd, cases_bound_relu, TORCH, AGREE_RATIO),
        _trajectory_check("relu", "mixed", 8),
        SymbolicCheck("isometry_step", sym_isometry, "||W'Dv||^2 - ||Dv||^2 (exact)"),
    ),
    notes=(
        "Proof: dC/dh_k = W_k' D_{k+1} dC/dh_{k+1} (the chain rule in column form; see unitary.chain_rule), "
        "so ||dC/dh_k|| = ||D_{k+1} dC/dh_{k+1}|| <= max_i |sigma'(z_{k+1,i})| ||dC/dh_{k+1}|| for orthogonal "
        "W_k, and ReLU's slopes lie in [0, 1] (1/2 at a kink, as autograd computes (x + |x|)/2); induction on "
        "T - t. The bound does not need ||D|| = 1 (all units killed gives 0 <= ||dC/dh_T||). " + _RATIO_NOTE
    ),
)

MODRELU_PRINTED = Claim(
    id="unitary.gradient_bound_modrelu",
    paper=PAPER,
    where="004 Sec. 1, eq. 5 with Sec. 3.2",
    kind="bound",
    statement=(
        "the bound of eq. 5, ||dC/dh_t|| <= ||dC/dh_T|| for all t < T, carries over to the modReLU the uRNN uses "
        "(Sec. 3.2: sigma(z) = ReLU(|z| + b) z / |z| per complex unit, with a learned bias b of either sign)"
    ),
    checks=(
        SearchCheck("search", q_bound_search, _search_strategy("modrelu", -2.0, 2.0), SEARCH, BOUND_RATIO),
        PropertyCheck("hand_built", q_bound, _hand(HAND_MODRELU_PRINTED), ("sympy", "mpmath"), BOUND_RATIO),
        PropertyCheck("random_cases", q_bound, cases_modrelu_any, ("numpy-float64", "torch-float64"), BOUND_RATIO),
        PropertyCheck("autograd_vs_backward", q_autograd, cases_modrelu_any, TORCH, AGREE_RATIO),
        _trajectory_check("modrelu", "positive", 4),
        SymbolicCheck("jacobian_eigenvalues", sym_modrelu_jacobian, "exact difference"),
    ),
    notes=(
        "Where |z| + b > 0, modReLU's real 2 x 2 Jacobian is J = I + (b/|z|)(I - uu'), u = z/|z|: symmetric, "
        "eigenvalue 1 along z and 1 + b/|z| across it. With b > 0 the tangential slope exceeds 1, and the step "
        "dC/dh_k = W_k' J_{k+1} dC/dh_{k+1} stretches the tangential part of the gradient by it: W = 1, h_0 = 2, "
        "c = -1, b = 1 keeps z_k = 1 and multiplies ||dC/dh|| by 2 per step (2^T over T steps, exactly), an "
        "exploding gradient eq. 5 says cannot happen. Eq. 4 holds with D_{k+1} = J_{k+1}, but ||J_{k+1}|| = "
        "1 + b/|z| > 1 makes it the useless bound of Sec. 1 ('lambda > 1'). The paper's initialisation b = 0 "
        "(Sec. 3.4) is safe, a learned b > 0 is not. " + _RATIO_NOTE
    ),
)

MODRELU_CORRECTED = Claim(
    id="unitary.gradient_bound_modrelu.corrected",
    paper=PAPER,
    where="004 Sec. 1, eq. 5 with Sec. 3.2",
    kind="bound",
    corrects="unitary.gradient_bound_modrelu",
    statement=(
        "with norm-preserving W_k and modReLU with every bias b_i <= 0, ||dC/dh_t|| <= ||dC/dh_T|| for all t < T"
    ),
    checks=(
        SearchCheck("search", q_bound_search, _search_strategy("modrelu", -2.0, 0.0), SEARCH, BOUND_RATIO),
        PropertyCheck("hand_built", q_bound, _hand(HAND_MODRELU_CORRECTED), ("sympy", "mpmath"), BOUND_RATIO),
        PropertyCheck("random_and_structured", q_bound, cases_modrelu_nonpositive, FLOAT_HP, BOUND_RATIO),
        PropertyCheck("autograd_vs_backward", q_autograd, cases_modrelu_nonpositive, TORCH, AGREE_RATIO),
        _trajectory_check("modrelu", "nonpositive", 8),
        SymbolicCheck("jacobian_eigenvalues", sym_modrelu_jacobian, "exact difference"),
    ),
    notes=(
        "Proof: with b <= 0 and |z| + b > 0, 1 + b/|z| lies in [0, 1), so J = I + (b/|z|)(I - uu') has norm 1; "
        "where |z| + b < 0 (or z = 0 with b < 0) J = 0; at z = 0 with b = 0 modReLU is the identity near 0 "
        "(J = I); at the kink |z| + b = 0 the slope along z is 1/2 (autograd of the ReLU form). So ||J|| <= 1 "
        "everywhere, and ||dC/dh_k|| = ||J_{k+1} dC/dh_{k+1}|| <= ||dC/dh_{k+1}|| for orthogonal W_k. " + _RATIO_NOTE
    ),
)

CHAIN_RULE = Claim(
    id="unitary.chain_rule",
    paper=PAPER,
    where="004 Sec. 1, eq. 3",
    kind="gradient",
    statement=(
        "dC/dh_t = dC/dh_T prod_{k=t}^{T-1} dh_{k+1}/dh_k = dC/dh_T prod_{k=t}^{T-1} D_{k+1} W_k^T with "
        "D_{k+1} = diag(sigma'(z_{k+1})), the product taken in the order written (k = t..T-1, left to right)"
    ),
    checks=(
        PropertyCheck(
            "exact", q_chain_printed, cases_chain_exact_printed, EXACT, "printed product - true gradient (exact)"
        ),
        PropertyCheck("float_vs_autograd", q_chain_printed, cases_chain_float, TORCH, CHAIN_RATIO),
    ),
    notes=(
        "dh_{k+1}/dh_k = D_{k+1} W_k (Jacobian, rows = outputs), so the true gradient is, as a row, "
        "g' D_T W_{T-1} ... D_{t+1} W_t and, as a column, W_t' D_{t+1} W_{t+1}' D_{t+2} ... W_{T-1}' D_T g. The "
        "printed product D_{t+1} W_t' D_{t+2} W_{t+1}' ... D_T W_{T-1}' matches neither: read with rows it has "
        "the factors in the reverse order and W_k transposed; read with columns each D_{k+1} stands left of "
        "W_k' instead of right of it (it agrees only where those commute: n = 1, or every unit active with "
        "one shared W). Exact counterexample: T = 1, W = [[3/5, -4/5], [4/5, 3/5]], h_0 = (1, 0), c = (0, -2), "
        "so D_1 = diag(1, 0), g = (1, 0): true dC/dh_0 = W' D_1 g = (3/5, -4/5), row reading (3/5, 4/5), column "
        "reading (3/5, 0). The norm bound (4) is untouched: ||D W'|| = ||W' D|| = ||D|| for orthogonal W, so "
        "this refutation does not affect unitary.gradient_bound. Both readings are checked; a reading holds "
        "when it matches at every t < T."
    ),
)

CHAIN_RULE_CORRECTED = Claim(
    id="unitary.chain_rule.corrected",
    paper=PAPER,
    where="004 Sec. 1, eq. 3",
    kind="gradient",
    corrects="unitary.chain_rule",
    statement=(
        "with dC/dh as a column, dC/dh_t = W_t' D_{t+1}' W_{t+1}' D_{t+2}' ... W_{T-1}' D_T' dC/dh_T, "
        "D_{k+1} the Jacobian of sigma at z_{k+1} (diag(sigma'(z_{k+1})) for a pointwise sigma, where D' = D; "
        "2 x 2 symmetric blocks for modReLU)"
    ),
    checks=(
        PropertyCheck(
            "exact", q_chain_corrected, cases_chain_exact, EXACT, "product - SymPy's exact derivative (exact)"
        ),
        PropertyCheck("float_vs_autograd", q_chain_corrected, cases_chain_float, TORCH, CHAIN_RATIO),
        PropertyCheck(
            "central_differences",
            q_chain_fd,
            cases_chain_hp,
            ("mpmath",),
            "max_t ||product g - central differences|| / (T N max(eps, fd_eps) ||g|| prod ||W|| ||J||)",
        ),
    ),
    notes=(
        "h_T depends on h_t through h_T = sigma(W_{T-1} sigma(... sigma(W_t h_t + ...))), so dh_T/dh_t = "
        "D_T W_{T-1} D_{T-1} ... D_{t+1} W_t and dC/dh_t = (dh_T/dh_t)' dC/dh_T. Checked against SymPy's exact "
        "derivative (ReLU, rational orthogonal, unitary-twin, per-step and general W), torch autograd (float32, "
        "float64; ReLU and modReLU with biases of both signs) and 50-digit central differences; the product is "
        "multiplied out as matrices, independently of the backward recursion used by the bound claims."
    ),
)

GRADIENT_CLAIMS: list[Claim] = [
    GRADIENT_BOUND,
    MODRELU_PRINTED,
    MODRELU_CORRECTED,
    CHAIN_RULE,
    CHAIN_RULE_CORRECTED,
]
CLAIMS = GRADIENT_CLAIMS
