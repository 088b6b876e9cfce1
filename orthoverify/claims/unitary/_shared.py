"""Vocabulary of the unitary family's claim files: the paper and a claim's declaration, native
complex arithmetic (the independent reference every real-pair formulation is compared with), inputs
read from a case, and the input families used by more than one claim (Haar and structured
unitaries, modReLU inputs), declared as data the engine's templates expand."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.model import Claim, Paper, Place
from orthoverify.engine.ratios import Measure, agreement, flag
from orthoverify.engine.templates import Cases, drawn, float_sizes, printed_and_corrected
from orthoverify.param import unitary as un
from orthoverify.param.unitary import CArray

PAPER = "unitary"
PAPER_INFO = Paper(
    key=PAPER,
    authors="Arjovsky, Shah, Bengio",
    title="Unitary Evolution Recurrent Neural Networks",
    venue="ICML 2016",
    short="uRNN",
    scope="with Sec. 3 and 4.3 of the Householder paper",
)

ORNN = functools.partial(Place, source="Mhammedi et al.")
"""A place in Mhammedi et al. (ICML 2017), the Householder paper's Sec. 2, 3, 4.3 and App. A."""
URNN = functools.partial(Place, source="Arjovsky et al.")
"""A place in Arjovsky et al. (ICML 2016), the uRNN paper."""
WISDOM = Place(source="Wisdom et al.", note="NeurIPS 2016")
"""Full-Capacity Unitary Recurrent Neural Networks, where the coverage claim comes from."""


def claim(**front: Any) -> list[Claim]:
    """A claim of this family's paper, as its module's ``CLAIMS``."""
    return [Claim(paper=PAPER, **front)]


twins = functools.partial(printed_and_corrected, paper=PAPER)
"""A printed claim of this family's paper and its ``.corrected`` twin."""


def native(b: Backend, x: CArray) -> Any:
    """``x`` in the backend's own complex arithmetic (the independent reference)."""
    if b.family == "numpy":
        dt = np.complex64 if b.eps > 1e-10 else np.complex128
        return (np.asarray(x.re) + 1j * np.asarray(x.im)).astype(dt)
    if b.family == "torch":
        import torch

        return torch.complex(x.re, x.im)
    if b.family == "mpmath":
        ctx = b.ctx  # type: ignore[attr-defined]
        return np.vectorize(lambda r, i: ctx.mpc(r, i), otypes=[object])(x.re, x.im)
    return np.vectorize(lambda r, i: r + sympy.I * i, otypes=[object])(x.re, x.im)


def from_native(b: Backend, z: Any) -> CArray:
    """A native complex array back as real pairs."""
    if b.family in ("numpy", "torch"):
        return CArray(b.asarray(z.real), b.asarray(z.imag))
    if b.family == "mpmath":
        return CArray(
            np.vectorize(lambda v: v.real, otypes=[object])(z), np.vectorize(lambda v: v.imag, otypes=[object])(z)
        )
    ez = np.vectorize(sympy.expand, otypes=[object])(z)
    return CArray(np.vectorize(sympy.re, otypes=[object])(ez), np.vectorize(sympy.im, otypes=[object])(ez))


def native_product(b: Backend, a: CArray, x: CArray) -> CArray:
    """``a @ x`` in the backend's own complex arithmetic (the independent reference), as real pairs."""
    return from_native(b, native(b, a) @ native(b, x))


def complex_input(b: Backend, case: Case, key: str) -> CArray:
    return un.as_carray((case[f"{key}_re"], case[f"{key}_im"]), backend=b, name=key)[1]


def unitary_input(b: Backend, case: Case, key: str = "W") -> CArray:
    """A unitary input: float samples are lifted to the working precision (Newton-Schulz polish,
    a no-op in float); exact samples are exactly unitary already."""
    w = complex_input(b, case, key)
    return w if b.exact else un.polish_unitary(w, backend=b)


def rnn_inputs(b: Backend, case: Case) -> tuple[CArray, CArray, CArray, Array]:
    """W (unitary), V, h0 and the inputs xs of a case of :func:`rnn_cases`, on b."""
    w, v, h0 = unitary_input(b, case), complex_input(b, case, "V"), complex_input(b, case, "h0")
    return w, v, h0, b.asarray(case["xs"], name="xs")


def twin_rnn(b: Backend, case: Case, act: str | None = None, bias: Array | None = None) -> Array:
    """h_hat_T of eq. 3's real RNN on the real twins W_hat = [[A, -B], [B, A]], V_hat = [Re V; Im V],
    with activation ``act`` (the case's ``act`` by default)."""
    w, v, h0, xs = rnn_inputs(b, case)
    what, vhat = un.embed_matrix(w, backend=b), b.concat([v.re, v.im], axis=0)
    act = act or str(case["act"])
    return un.real_rnn(what, vhat, xs, un.embed_vector(h0, backend=b), act, bias=bias, backend=b)[-1]


def parts(b: Backend, x: CArray) -> Array:
    """A complex array's real and imaginary parts as one real vector: how a formulation of a
    complex object is handed to an :class:`~orthoverify.engine.templates.Agreement`."""
    return b.concat([x.re.reshape(-1), x.im.reshape(-1)])


def rows_of(key: str) -> Callable[[Case], int]:
    """The ratio's dimension n of a complex input ``key`` (its rows), for ``Agreement(dim=...)``:
    the complex size, not the 2n reals of :func:`parts`."""
    return lambda case: len(case[f"{key}_re"])


def steps_dim(case: Case) -> int:
    """The dimension 2 n T of an RNN case's ratio: T unrolled steps (rows of ``xs``) of a 2n-real
    state (n the rows of ``W``)."""
    return 2 * len(case["W_re"]) * len(case["xs"])


def cagree(b: Backend, x: CArray, ref: CArray, dim: int) -> Measure:
    """``||x - ref|| / (dim eps ||ref||)`` over both parts."""
    return agreement(b, parts(b, x), parts(b, ref), dim)


def unitarity(b: Backend, m: CArray, what: str = "M*M = I") -> Measure:
    """||M*M - I|| / (n eps) in floating point; exactly M*M = I in exact arithmetic (``what``
    names it when it fails)."""
    r = un.unitarity_ratio(m, b)
    return flag(r == 0, what) if b.exact else Measure(r)


def split_complex(z: np.ndarray, key: str) -> dict[str, Any]:
    return {f"{key}_re": np.real(z), f"{key}_im": np.imag(z)}


def gaussian(rng: np.random.Generator, key: str, shape: int | tuple[int, ...]) -> dict[str, Any]:
    """A complex Gaussian input ``key`` (real part drawn first)."""
    return {f"{key}_re": rng.standard_normal(shape), f"{key}_im": rng.standard_normal(shape)}


def rational(rng: np.random.Generator, key: str, n: int, max_den: int = 2) -> dict[str, Any]:
    """A complex rational n-vector ``key`` (entries p/q, |p| <= 3, q <= max_den)."""
    v = samples.rational_matrix(rng, n, 2, bound=3, max_den=max_den)
    return {f"{key}_re": v[:, 0], f"{key}_im": v[:, 1]}


def vector(key: str) -> Callable[[RunContext, np.random.Generator, int], dict[str, Any]]:
    """A complex n-vector ``key`` drawn after each case: rational when exact, else Gaussian."""
    return lambda ctx, rng, n: rational(rng, key, n) if ctx.backend.exact else gaussian(rng, key, n)


def unitary_cases(
    ctx: RunContext, rng: np.random.Generator, n: int, structured: bool = True
) -> Iterator[dict[str, Any]]:
    """Haar unitaries (rational Cayley ones when exact) and, for floats, structured ones."""
    if ctx.backend.exact:
        for _ in range(max(1, ctx.profile.cases // 2)):
            re, im = samples.rational_unitary(rng, n)
            yield {"W_re": re, "W_im": im, "kind": "rational-cayley"}
        return
    for _ in range(ctx.profile.cases):
        yield {**split_complex(samples.haar_unitary(rng, n), "W"), "kind": "haar"}
    if structured:
        for name, w in samples.structured_unitaries(rng, n):
            yield {**split_complex(w, "W"), "kind": name}


def rnn_cases(ctx: RunContext, rng: np.random.Generator, n: int, steps: int) -> Iterator[dict[str, Any]]:
    """An RNN for each Haar unitary W (rational Cayley when exact): V with two input units, h0 and
    ``steps`` inputs, Gaussian (rational when exact)."""
    for case in unitary_cases(ctx, rng, n, structured=False):
        if ctx.backend.exact:
            v = samples.rational_matrix(rng, n, 4, bound=3, max_den=2)
            extra = {"V_re": v[:, :2], "V_im": v[:, 2:], **rational(rng, "h0", n)}
            extra["xs"] = samples.rational_matrix(rng, steps, 2, bound=3, max_den=2)
        else:
            extra = {**gaussian(rng, "V", (n, 2)), **gaussian(rng, "h0", n), "xs": rng.standard_normal((steps, 2))}
        yield {**case, **extra}


def scaled_vector(ctx: RunContext, rng: np.random.Generator, key: str, k: int, e: float) -> dict[str, Any]:
    """A complex k-vector ``key``: exact, rational (p/q, |p| <= 3, q <= 2) and nonzero; else
    Gaussian parts of one random scale 10^u, u uniform in [-e, e]."""
    if ctx.backend.exact:
        u = samples.rational_matrix(rng, k, 2, bound=3, max_den=2)
        u[0, 0] = u[0, 0] + 1 if all(v == 0 for v in u.reshape(-1)) else u[0, 0]
        return {f"{key}_re": u[:, 0], f"{key}_im": u[:, 1]}
    s = 10.0 ** rng.uniform(-e, e)
    return {f"{key}_re": rng.standard_normal(k) * s, f"{key}_im": rng.standard_normal(k) * s}


def reflection_parameters(ctx: RunContext, rng: np.random.Generator, n: int) -> Iterator[Case]:
    """Parameters of M_hat_1: random theta and u_k of scales 10^+-30 (10^+-100 in float64); exact:
    theta = 0 (cos and sin of rational angles are transcendental), rational u_k, n <= 3."""
    if ctx.backend.exact and n > 3:
        return
    e = 30 if ctx.backend.eps > 1e-10 else 100  # float32's range ends near 1e38
    for _ in range(ctx.profile.cases):
        theta = np.zeros(n, dtype=object) if ctx.backend.exact else rng.uniform(-50, 50, n)
        case: dict[str, Any] = {"n": n, "theta": theta}
        for k in range(2, n + 1):
            case |= scaled_vector(ctx, rng, f"u{k}", k, e)
        yield case


def modrelu_inputs(ctx: RunContext, rng: np.random.Generator, n: int) -> Iterator[dict[str, Any]]:
    """z and biases of both signs, many units near the boundary |z| + b = 0 and exactly on it."""
    if ctx.backend.exact:
        # Pythagorean moduli so that |z| is rational and boundary cases are exact
        trip = [(3, 4, 5), (5, 12, 13), (8, 15, 17)]
        for _ in range(ctx.profile.cases):
            re, im, bias = [], [], []
            for _i in range(n):
                x, y, r = trip[int(rng.integers(0, 3))]
                s = sympy.Rational(int(rng.integers(1, 4)), int(rng.integers(1, 4)))
                re.append(s * x * int(rng.choice([-1, 1])))
                im.append(s * y * int(rng.choice([-1, 1])))
                bias.append([-s * r, s * r, -s * r / 2, 0][int(rng.integers(0, 4))])
            yield {key: np.array(v, dtype=object) for key, v in (("z_re", re), ("z_im", im), ("bias", bias))}
        return
    for _ in range(ctx.profile.cases):
        zr, zi = rng.standard_normal(n), rng.standard_normal(n)
        mod = np.hypot(zr, zi)
        fbias = rng.standard_normal(n)
        edge = rng.random(n) < 0.3
        fbias[edge] = -mod[edge] * (1 + rng.choice([-1e-12, 0.0, 1e-12], size=int(edge.sum())))
        yield {"z_re": zr, "z_im": zi, "bias": fbias}


def unitaries(
    extra: Callable[[RunContext, np.random.Generator, int], dict[str, Any]] | None = None,
    *,
    structured: bool = True,
    sizes: Callable[[RunContext], Any] = float_sizes,
) -> Cases:
    """:func:`unitary_cases` for each size, each case with what ``extra`` draws after it."""

    def draw(ctx: RunContext, rng: np.random.Generator, n: int) -> Iterator[Case]:
        for case in unitary_cases(ctx, rng, n, structured):
            yield {**case, **extra(ctx, rng, n)} if extra else case

    return drawn(draw, sizes)


cases_modrelu = drawn(modrelu_inputs)
"""modReLU inputs for each of the profile's sizes."""


def modrelu_strategy(ctx: RunContext) -> Any:
    """Hypothesis draws 1-4 units of modulus 1e-6..1e6 and biases within 2 10^-k of -|z| (k = 0..15):
    |z| + b near 0 from both sides."""
    from hypothesis import strategies as st

    mag = st.floats(1e-6, 1e6)
    ang = st.floats(-math.pi, math.pi)
    rel = st.floats(-2.0, 2.0)

    @st.composite
    def case(draw: Any) -> dict[str, Any]:
        k = draw(st.integers(1, 4))
        r = [draw(mag) for _ in range(k)]
        a = [draw(ang) for _ in range(k)]
        bias = [-ri * (1 + draw(rel) * 10.0 ** -draw(st.integers(0, 15))) for ri in r]
        return {
            "z_re": np.array([ri * math.cos(ai) for ri, ai in zip(r, a, strict=True)]),
            "z_im": np.array([ri * math.sin(ai) for ri, ai in zip(r, a, strict=True)]),
            "bias": np.array(bias),
        }

    return case()


def givens_strategy(ctx: RunContext) -> Any:
    """Products of random complex Givens rotations and phases: Hypothesis picks the angles (and
    can make them 0, pi/2, pi: the structured cases)."""
    from hypothesis import strategies as st

    angle = st.one_of(st.floats(-math.pi, math.pi), st.sampled_from([0.0, math.pi / 2, math.pi, -math.pi / 2]))

    @st.composite
    def case(draw: Any) -> dict[str, Any]:
        n = draw(st.integers(1, 6))
        w = np.diag(np.exp(1j * np.array([draw(angle) for _ in range(n)])))
        for _ in range(draw(st.integers(0, 2 * n))):
            if n < 2:
                break
            i, j = sorted(draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True)))
            c, s, ph = draw(angle), draw(angle), draw(angle)
            g = np.eye(n, dtype=complex)
            g[i, i], g[i, j] = math.cos(c), -math.sin(c) * np.exp(-1j * ph)
            g[j, i], g[j, j] = math.sin(c) * np.exp(1j * ph), math.cos(c)
            w = g @ w * np.exp(1j * s / n)
        return split_complex(w, "W")

    return case()
