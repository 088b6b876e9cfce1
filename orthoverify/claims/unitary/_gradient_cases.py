"""Input families of the Sec. 1 gradient claims of Arjovsky et al.: unrolled RNNs with
orthogonal, unitary (on the real twin) and uRNN-product W in float64 and in rationals, cycled over
kinds, sizes, lengths and bias signs; the Hypothesis strategy that draws a whole case; the
representative uRNN run whose gradient norms a report plots."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.claims._common import rational_array
from orthoverify.engine.checks import Case, RunContext
from orthoverify.param import unitary as un

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


def schedule(
    ns: tuple[int, ...],
    per_size: int,
    kinds: tuple[Any, ...],
    steps: tuple[int, ...],
    modes: tuple[str, ...] = ("mixed",),
) -> Iterator[tuple[int, Any, int, str]]:
    """(n, kind, T, mode) ``per_size`` times per size n, kinds, T and modes cycling (shifted per n,
    so a kind meets every size in turn), so that every kind, T and mode turns up."""
    i = 0
    for j, n in enumerate(ns):
        for _ in range(per_size):
            mode = modes[(i + i // (len(kinds) * len(steps))) % len(modes)]
            yield n, kinds[(i + j) % len(kinds)], steps[(i + i // len(kinds)) % len(steps)], mode
            i += 1


def cycled(
    ctx: RunContext, kinds: tuple[str, ...], *, act: str, modes: tuple[str, ...] = ("mixed",), small: bool = False
) -> Iterator[Case]:
    """Float cases on :func:`schedule`, 2 x profile.cases per size: float backends take the
    profile's sizes up to 16 and T up to 100, 50 digits its high-precision sizes up to 6 and T up
    to 20; ``small`` keeps n <= 3, T <= 10."""
    rng = ctx.rng()
    hp = ctx.backend.method == "high-precision"
    ns = tuple(n for n in ctx.profile.hp_sizes if n <= 6) if hp else tuple(n for n in ctx.profile.sizes if n <= 16)
    steps: tuple[int, ...] = HP_STEPS if hp else FLOAT_STEPS
    if small:
        ns, steps = tuple(n for n in ns if n <= 3) or (2,), tuple(t for t in steps if t <= 10)
    for n, kind, t_len, mode in schedule(ns, 2 * ctx.profile.cases, kinds, steps, modes):
        yield float_case(rng, kind, n, t_len, act=act, bias_mode=mode)


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
        return rational_array(rng, (n, n), 2, 2), False
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
        "V": rational_array(rng, (big_n, m)),
        "xs": rational_array(rng, (t_len, m)),
        "h0": rational_array(rng, (big_n,)),
        "c": rational_array(rng, (big_n,)),
    }
    if kind == "permutation":  # all units active: equality in eq. 5
        case["V"] = np.array([[sympy.Integer(0)] * m for _ in range(big_n)], dtype=object)
        case["h0"] = np.array([abs(v) for v in case["h0"]], dtype=object)
        case["c"] = np.array([abs(v) + 1 for v in case["c"]], dtype=object)
    g = rational_array(rng, (big_n,))
    if all(v == 0 for v in g):
        g[0] = sympy.Integer(1)
    case["g"] = g
    return case


def exact_bound_cases(ctx: RunContext) -> Iterator[Case]:
    """ReLU cases in rationals for T = 1, 2, 4: orthogonal, unitary-twin (n <= 2), per-step and
    permutation W."""
    rng = ctx.rng()
    for n in ctx.profile.exact_sizes:
        for t_len in (1, 2, 4):
            for kind in ("real", "complex", "real-per-step", "permutation"):
                if kind == "complex" and n > 2:
                    continue
                yield exact_case(rng, kind, n, t_len)


def search_strategy(act: str, bias_lo: float, bias_hi: float) -> Callable[[RunContext], Any]:
    """Hypothesis draws a whole case: a kind (real orthogonal, complex unitary or the uRNN product),
    n in 1..4, T in 1..100, W as the polar factor of a drawn matrix (or from drawn uRNN
    parameters), inputs and biases of both signs; the quantity steers it (``hypothesis.target``)."""

    def make(ctx: RunContext) -> Any:
        from hypothesis import strategies as st
        from hypothesis.extra import numpy as hnp

        def arr(shape: tuple[int, ...], lo: float, hi: float) -> Any:
            elements = st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)
            return hnp.arrays(np.float64, shape, elements=elements)

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
                v1, v2 = (draw(arr((n,), -1, 1)) + 1j * draw(arr((n,), -1, 1)) for _ in range(2))
                v1, v2 = (v if np.any(v) else np.eye(n)[0].astype(complex) for v in (v1, v2))
                w1, w2, w3 = (draw(arr((n,), -np.pi, np.pi)) for _ in range(3))
                perm = draw(st.permutations(list(range(n))))
                p = un.urnn_parameters(
                    w1, w2, w3, (v1.real, v1.imag), (v2.real, v2.imag), perm, backend="numpy-float64"
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


def representative_case(act: str, bias_mode: str, n: int, t_len: int = 100, seed: int = 2016) -> dict[str, Any]:
    """A uRNN of Sec. 2-3 (W = D3 R2 F^-1 D2 Pi R1 F D1 on the twin, V and x Gaussian, c of both
    signs), fixed seed, T = 100: the run whose ||dC/dh_t|| the report plots against t."""
    rng = np.random.default_rng(seed)
    case = float_case(rng, "urnn", n, t_len, act=act, bias_mode=bias_mode)
    if act == "modrelu" and bias_mode == "positive":
        case["bias"] = np.full(n, 0.1)
    return case
