"""Claims about unitary matrices and the uRNN (key ``unitary``): Arjovsky, Shah & Bengio (ICML
2016) with Sec. 3 and 4.3 of Mhammedi et al. (ICML 2017).

Evidence: the maps of :mod:`orthoverify.param.unitary`, which carry complex numbers as real
pairs, against *native* complex arithmetic (NumPy complex, torch complex, mpmath ``mpc``, SymPy
with ``I``) as the independent formulation; SymPy proofs with free symbols; constructive
inversion (complex QR, then rebuild) on Haar and structured unitaries in float and at 50
digits; exhaustive enumeration of the printed index formulas; exact flop counts. The Jacobian
rank (``unitary.coverage``) and the gradient bounds (``unitary.gradient_bound``,
``unitary.chain_rule``) live in their own modules and are registered here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import FLOAT_BACKENDS, Backend
from orthoverify.claims._common import RIGOROUS, RIGOROUS_SIZES, frobenius, replay_frobenius, rigorous_scan
from orthoverify.claims._common import exact_backend as _sympy
from orthoverify.claims._common import symbol_array as _symbols
from orthoverify.claims._unitary_coverage import COVERAGE_CLAIMS
from orthoverify.claims._unitary_gradient import GRADIENT_CLAIMS
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
from orthoverify.engine.ratios import Measure, agreement, residual, worst
from orthoverify.engine.ratios import flag as _flag
from orthoverify.param import unitary as un
from orthoverify.param import unitary_flops as uf
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
FLOAT = FLOAT_BACKENDS
FLOAT_HP = (*FLOAT_BACKENDS, "mpmath")
ALL = (*FLOAT_HP, "sympy")


def _sizes(ctx: RunContext) -> tuple[int, ...]:
    if ctx.backend.exact:
        return ctx.profile.exact_sizes
    return ctx.profile.hp_sizes if ctx.backend.method == "high-precision" else ctx.profile.sizes


# =============================================================================== native complex
def _native(b: Backend, x: CArray) -> Any:
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


def _from_native(b: Backend, z: Any) -> CArray:
    """A native complex array back as real pairs."""
    if b.family in ("numpy", "torch"):
        return CArray(b.asarray(z.real), b.asarray(z.imag))
    if b.family == "mpmath":
        return CArray(
            np.vectorize(lambda v: v.real, otypes=[object])(z), np.vectorize(lambda v: v.imag, otypes=[object])(z)
        )
    ez = np.vectorize(sympy.expand, otypes=[object])(z)
    return CArray(np.vectorize(sympy.re, otypes=[object])(ez), np.vectorize(sympy.im, otypes=[object])(ez))


def _c(b: Backend, case: Case, key: str) -> CArray:
    return un.as_carray((case[f"{key}_re"], case[f"{key}_im"]), backend=b, name=key)[1]


def _unitary(b: Backend, case: Case, key: str = "W") -> CArray:
    """A unitary input: float samples are lifted to the working precision (Newton-Schulz polish,
    a no-op in float); exact samples are exactly unitary already."""
    w = _c(b, case, key)
    return w if b.exact else un.polish_unitary(w, backend=b)


def _cnum(b: Backend, x: CArray) -> float:
    return 1.0 if b.exact else max(b.to_float(un.cnorm(b, x)), 1e-300)


def _cagree(b: Backend, x: CArray, ref: CArray, dim: int) -> Measure:
    """``||x - ref|| / (dim eps ||ref||)`` over both parts."""
    return agreement(
        b, b.concat([x.re.reshape(-1), x.im.reshape(-1)]), b.concat([ref.re.reshape(-1), ref.im.reshape(-1)]), dim
    )


def _split(z: np.ndarray, key: str) -> dict[str, Any]:
    return {f"{key}_re": np.real(z), f"{key}_im": np.imag(z)}


def _unitary_cases(
    ctx: RunContext, rng: np.random.Generator, n: int, structured: bool = True
) -> Iterator[dict[str, Any]]:
    """Haar unitaries (rational Cayley ones when exact) and, for floats, structured ones."""
    if ctx.backend.exact:
        for _ in range(max(1, ctx.profile.cases // 2)):
            re, im = samples.rational_unitary(rng, n)
            yield {"W_re": re, "W_im": im, "kind": "rational-cayley"}
        return
    for _ in range(ctx.profile.cases):
        yield {**_split(samples.haar_unitary(rng, n), "W"), "kind": "haar"}
    if structured:
        for name, w in samples.structured_unitaries(rng, n):
            yield {**_split(w, "W"), "kind": name}


# =============================================================================== complex_block
def q_complex_block(b: Backend, case: Case) -> Measure:
    """W_hat = [[A, -B], [B, A]] is orthogonal and W_hat (Re h, Im h) = (Re Wh, Im Wh), with Wh
    computed in the backend's native complex arithmetic."""
    w = _unitary(b, case)
    h = _c(b, case, "h")
    n = w.shape[0]
    wh = un.embed_matrix(w, backend=b)
    ref = _from_native(b, _native(b, w) @ _native(b, h))
    lhs = wh @ un.embed_vector(h, backend=b)
    return worst(
        residual(b, b.transpose(wh) @ wh - b.eye(2 * n), 2 * n),
        agreement(b, lhs, un.embed_vector(ref, backend=b), 2 * n),
    )


def cases_complex_block(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in _sizes(ctx):
        for case in _unitary_cases(ctx, rng, n):
            if ctx.backend.exact:
                h = samples.rational_matrix(rng, n, 2, bound=3, max_den=2)
                yield {**case, "h_re": h[:, 0], "h_im": h[:, 1]}
            else:
                yield {**case, "h_re": rng.standard_normal(n), "h_im": rng.standard_normal(n)}


def sym_complex_block(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """With free real symbols: the embedding is a *-homomorphism, so W_hat W_hat' - I is the
    embedding of W W* - I (zero for unitary W), eq. 5's blocks are W_hat W_hat', and W_hat h_hat is
    the embedding of W h computed with SymPy's complex I."""
    b = _sympy()
    for n in ctx.profile.symbolic_sizes:
        a, bb = _symbols("a", n, n), _symbols("b", n, n)
        x, y = _symbols("x", n), _symbols("y", n)
        w = CArray(a, bb)
        wh = un.embed_matrix(w, backend=b)
        www = w @ un.ct(b, w)
        yield (
            f"n={n}: W_hat W_hat' - I - embed(W W* - I)",
            wh @ wh.T - b.eye(2 * n) - un.embed_matrix(www - un.ceye(b, n), backend=b),
        )
        at, bt = a.T, bb.T
        eq5 = np.block([[a @ at + bb @ bt, a @ bt - bb @ at], [bb @ at - a @ bt, a @ at + bb @ bt]])
        yield f"n={n}: W_hat W_hat' - eq. 5 as printed", wh @ wh.T - eq5
        wc = a + sympy.I * bb
        hc = x + sympy.I * y
        whc = np.vectorize(sympy.expand, otypes=[object])(wc @ hc)
        re = np.vectorize(sympy.re, otypes=[object])(whc)
        im = np.vectorize(sympy.im, otypes=[object])(whc)
        yield f"n={n}: W_hat h_hat - (Re Wh, Im Wh)", wh @ np.concatenate([x, y]) - np.concatenate([re, im])


def fn_block_algebra(ctx: RunContext) -> Outcome:
    """Eq. 5 for every n at once: with A, B n x n matrix symbols (non-commuting, n symbolic), the
    block product W_hat W_hat' is [[P, Q'], [Q, P]] with P = AA' + BB' and Q = BA' - AB' (eq. 5);
    W W* = (AA' + BB') + i(BA' - AB') = I says P = I and Q = 0, so W_hat W_hat' = I."""
    n = sympy.Symbol("n", integer=True, positive=True)
    a, bb = sympy.MatrixSymbol("A", n, n), sympy.MatrixSymbol("B", n, n)
    w = sympy.BlockMatrix([[a, -bb], [bb, a]])
    prod = sympy.block_collapse(w * w.T)
    p, q = a * a.T + bb * bb.T, bb * a.T - a * bb.T
    expected = {(0, 0): p, (0, 1): q.T, (1, 0): q, (1, 1): p}
    bad = [
        f"block {i}{j}: {d}"
        for (i, j), e in expected.items()
        if (d := (prod.blocks[i, j] - e).expand().doit()) != sympy.ZeroMatrix(n, n)
    ]
    if bad:
        return Outcome(False, 4, failure=({"identity": "block product"}, Measure(math.inf, "; ".join(bad))))
    return Outcome(
        passed=True,
        cases=4,
        notes="W_hat W_hat' = [[P, Q'], [Q, P]], P = AA' + BB', Q = BA' - AB', for symbolic n (SymPy block algebra)",
    )


COMPLEX_BLOCK = Claim(
    id="unitary.complex_block",
    paper=PAPER,
    where="001 Sec. 3, eq. 5; 004 Sec. 3.1",
    kind="identity",
    statement=(
        "W = A + iB unitary implies W_hat = [[A, -B], [B, A]] orthogonal (W_hat W_hat' is eq. 5); the block matrix "
        "acting on (Re h, Im h) gives (Re Wh, Im Wh)"
    ),
    checks=(
        PropertyCheck(
            "haar_and_structured",
            q_complex_block,
            cases_complex_block,
            ALL,
            "max(||W_hat'W_hat - I||, ||W_hat h_hat - (Re, Im)(Wh)|| / ||Wh||) / (2n eps)",
        ),
        SymbolicCheck("homomorphism", sym_complex_block),
        FunctionCheck(
            "block_algebra",
            fn_block_algebra,
            ("sympy",),
            "symbolic",
            "eq. 5 block identity",
            replay_fn=lambda inputs, b: Measure(0.0 if fn_block_algebra(None).passed else math.inf),  # type: ignore[arg-type]
            exact=True,
        ),
    ),
    notes=(
        "Wh is computed in each backend's native complex arithmetic (numpy/torch complex, mpmath mpc, SymPy I), "
        "independently of orthoverify's real pairs. The converse also holds (the embedding is an injective "
        "*-homomorphism), and det W_hat = |det W|^2 = 1, so W_hat lies in SO(2n)."
    ),
)


# =============================================================================== rnn_equivalence
def _native_act(b: Backend, z: Any, act: str) -> Any:
    """Apply a separable activation to the real and imaginary parts of native complex z."""
    c = _from_native(b, z)
    f = un.separable_activation(b, act)
    return _native(b, CArray(f(c.re), f(c.im)))


def q_rnn_equivalence(b: Backend, case: Case) -> Measure:
    """The complex RNN in native complex arithmetic against eq. 3's real RNN with W_hat, V_hat."""
    w = _unitary(b, case)
    v = _c(b, case, "V")
    h0 = _c(b, case, "h0")
    xs = b.asarray(case["xs"], name="xs")
    act = str(case["act"])
    n = w.shape[0]
    wn, vn, h = _native(b, w), _native(b, v), _native(b, h0)
    for t in range(xs.shape[0]):
        xt = _native(b, CArray(xs[t], xs[t] * 0))
        h = _native_act(b, wn @ h + vn @ xt, act)
    what = un.embed_matrix(w, backend=b)
    vhat = b.concat([v.re, v.im], axis=0)
    hs = un.real_rnn(what, vhat, xs, un.embed_vector(h0, backend=b), act, backend=b)
    steps = int(xs.shape[0])
    return agreement(b, hs[-1], un.embed_vector(_from_native(b, h), backend=b), 2 * n * steps)


def cases_rnn_equivalence(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    acts = ("relu", "leaky_relu", "identity")
    for n in _sizes(ctx):
        nx = 2
        for i, case in enumerate(_unitary_cases(ctx, rng, n, structured=False)):
            steps = 3 if ctx.backend.exact else (5 if ctx.backend.method == "high-precision" else 20)
            if ctx.backend.exact:
                v = samples.rational_matrix(rng, n, 2 * nx, bound=3, max_den=2)
                h0 = samples.rational_matrix(rng, n, 2, bound=3, max_den=2)
                xs = samples.rational_matrix(rng, steps, nx, bound=3, max_den=2)
                extra = {"V_re": v[:, :nx], "V_im": v[:, nx:], "h0_re": h0[:, 0], "h0_im": h0[:, 1], "xs": xs}
            else:
                extra = {
                    "V_re": rng.standard_normal((n, nx)),
                    "V_im": rng.standard_normal((n, nx)),
                    "h0_re": rng.standard_normal(n),
                    "h0_im": rng.standard_normal(n),
                    "xs": rng.standard_normal((steps, nx)),
                }
            yield {**case, **extra, "act": acts[i % len(acts)]}


def sym_rnn_equivalence(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """Two steps with free symbols and an undefined activation phi applied to real and imaginary
    parts: the complex recursion (SymPy's I) and eq. 3's real recursion agree symbol for symbol."""
    phi = sympy.Function("phi", real=True)
    b = _sympy()
    n = 2
    a, bb = _symbols("a", n, n), _symbols("b", n, n)
    p, q = _symbols("p", n), _symbols("q", n)  # V = p + i q, one input unit
    x0, y0 = _symbols("x", n), _symbols("y", n)
    u = _symbols("u", 2)  # inputs x_1, x_2

    def f(e: Any) -> Any:
        return phi(sympy.expand(e))

    wc, vc = a + sympy.I * bb, p + sympy.I * q
    h = x0 + sympy.I * y0
    hh = np.concatenate([x0, y0])
    what = un.embed_matrix(CArray(a, bb), backend=b)
    vhat = np.concatenate([p, q])
    for t in range(2):
        z = np.vectorize(sympy.expand, otypes=[object])(wc @ h + vc * u[t])
        h = np.array([f(sympy.re(e)) + sympy.I * f(sympy.im(e)) for e in z], dtype=object)
        hh = np.array([f(e) for e in what @ hh + vhat * u[t]], dtype=object)
    re = np.array([sympy.re(e) for e in h], dtype=object)
    im = np.array([sympy.im(e) for e in h], dtype=object)
    yield "n=2, T=2, phi undefined: h_hat_2 - (Re h_2, Im h_2)", hh - np.concatenate([re, im])


RNN_EQUIVALENCE = Claim(
    id="unitary.rnn_equivalence",
    paper=PAPER,
    where="001 Sec. 3, eq. 3",
    kind="identity",
    statement=(
        "a complex RNN h_t = phi(W h_{t-1} + V x_t) whose activation acts on real and imaginary parts separately "
        "equals the real RNN h_hat_t = phi(W_hat h_hat_{t-1} + V_hat x_t) with W_hat = [[A, -B], [B, A]], "
        "V_hat = [Re V; Im V], h_hat = (Re h, Im h)"
    ),
    checks=(
        PropertyCheck(
            "unrolled",
            q_rnn_equivalence,
            cases_rnn_equivalence,
            ALL,
            "||h_hat_T - (Re h_T, Im h_T)|| / (2 n T eps ||h_T||)",
        ),
        SymbolicCheck("symbolic", sym_rnn_equivalence),
    ),
    notes=(
        "The complex recursion runs in native complex arithmetic; the real one is orthoverify's real_rnn. "
        "Activations: ReLU, leaky ReLU (slope 1/10), identity; the symbolic check uses an undefined phi."
    ),
)


# =============================================================================== modReLU forms
def q_modrelu(b: Backend, case: Case) -> Measure:
    """The case definition (both boundary rules: >= of 004, > of 001 eq. 4) against
    ReLU(|z| + b) z / |z|."""
    z = _c(b, case, "z")
    bias = b.asarray(case["bias"], name="bias")
    n = z.shape[0]
    relu_form = un.modrelu_relu_form(z, bias, backend=b)
    return worst(
        _cagree(b, un.modrelu(z, bias, backend=b, rule="arjovsky"), relu_form, n),
        _cagree(b, un.modrelu(z, bias, backend=b, rule="mhammedi"), relu_form, n),
    )


def _modrelu_inputs(ctx: RunContext, rng: np.random.Generator, n: int) -> Iterator[dict[str, Any]]:
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
            yield {
                "z_re": np.array(re, dtype=object),
                "z_im": np.array(im, dtype=object),
                "bias": np.array(bias, dtype=object),
            }
        return
    for _ in range(ctx.profile.cases):
        zr, zi = rng.standard_normal(n), rng.standard_normal(n)
        mod = np.hypot(zr, zi)
        fbias = rng.standard_normal(n)
        edge = rng.random(n) < 0.3
        fbias[edge] = -mod[edge] * (1 + rng.choice([-1e-12, 0.0, 1e-12], size=int(edge.sum())))
        yield {"z_re": zr, "z_im": zi, "bias": fbias}


def cases_modrelu(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in _sizes(ctx):
        yield from _modrelu_inputs(ctx, rng, n)


def _modrelu_strategy(ctx: RunContext) -> Any:
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


MODRELU = Claim(
    id="unitary.modrelu",
    paper=PAPER,
    where="004 Sec. 3.2 (and 001 eq. 4)",
    kind="identity",
    statement=(
        "modReLU(z) = (|z| + b) z/|z| if |z| + b >= 0, else 0, equals ReLU(|z| + b) z/|z| "
        "(001 eq. 4 writes > 0 for the first case)"
    ),
    checks=(
        PropertyCheck("both_forms", q_modrelu, cases_modrelu, ALL, "||case form - ReLU form|| / (n eps ||ReLU form||)"),
        SearchCheck(
            "boundary_search",
            q_modrelu,
            _modrelu_strategy,
            ("numpy-float64", "torch-float32"),
            "||case form - ReLU form|| / (n eps ||ReLU form||)",
        ),
    ),
    notes=(
        "Both forms divide by |z|: at z = 0 they are undefined when b > 0 (no limit: the value's direction is z's), "
        "and orthoverify raises DomainError there; for b <= 0 both give 0. On |z| + b = 0 the two boundary rules "
        "agree (the value is 0 either way). The search steers |z| + b towards 0 from both sides."
    ),
)


# =============================================================================== modrelu_real
def fn_modrelu_indices(ctx: RunContext, *, convention: str) -> Outcome:
    """Every index of the real-space modReLU, for every i = 1..2n and n = 1..N: in range, and
    (for the corrected form) pairing i with the other part of the same complex unit."""
    top = 16 if ctx.profile.name == "quick" else 64
    cases = 0
    for n in range(1, top + 1):
        idx = un.modrelu_real_indices(n, convention)  # type: ignore[arg-type]
        kmap = {i: k for i, k, _ in idx}
        for i, k, kt in idx:
            cases += 1
            bad = None
            if not 1 <= k <= 2 * n:
                bad = f"k_{i} = ({i} + {n}) mod {2 * n} = {k} is outside 1..{2 * n}"
            elif not 1 <= kt <= n:
                bad = f"k~_{i} = {i} mod {n} = {kt} is outside 1..{n}"
            elif convention == "corrected":
                unit = (i - 1) % n + 1
                if not (kmap[k] == i and k != i and kt == unit and (k - 1) % n + 1 == unit):
                    bad = f"k_{i} = {k} does not pair the real and imaginary parts of unit {unit}"
            if bad is not None:
                return Outcome(
                    passed=False,
                    cases=cases,
                    failure=({"n": n, "i": i, "convention": convention}, Measure(math.inf, bad)),
                    notes=f"first failure at n = {n}, i = {i}: {bad}",
                )
    return Outcome(passed=True, cases=cases, worst_ratio=0.0, notes=f"all indices of i = 1..2n, n = 1..{top}")


def replay_modrelu_indices(inputs: Mapping[str, Any], b: Backend) -> Measure:
    n, i = int(inputs["n"]), int(inputs["i"])
    conv = str(inputs.get("convention", "printed"))
    _, k, kt = un.modrelu_real_indices(n, conv)[i - 1]  # type: ignore[arg-type]
    ok = 1 <= k <= 2 * n and 1 <= kt <= n
    return Measure(0.0, "in range") if ok else Measure(math.inf, f"k_{i} = {k}, k~_{i} = {kt} (n = {n})")


def q_modrelu_real(b: Backend, case: Case) -> Measure:
    """The real-space form (corrected indices) on (Re z, Im z) against the complex case form."""
    z = _c(b, case, "z")
    bias = b.asarray(case["bias"], name="bias")
    n = z.shape[0]
    real = un.modrelu_real(un.embed_vector(z, backend=b), bias, backend=b, convention="corrected")
    ref = un.embed_vector(un.modrelu(z, bias, backend=b, rule="mhammedi"), backend=b)
    return agreement(b, real, ref, 2 * n)


def q_modrelu_rnn(b: Backend, case: Case) -> Measure:
    """A modReLU uRNN step by step: the complex RNN against eq. 3's real RNN with the real-space form."""
    w = _unitary(b, case)
    v = _c(b, case, "V")
    h0 = _c(b, case, "h0")
    xs = b.asarray(case["xs"], name="xs")
    bias = b.asarray(case["bias"], name="bias")
    n = w.shape[0]
    hc = un.complex_rnn(w, v, xs, h0, "modrelu", bias=bias, backend=b)
    hr = un.real_rnn(
        un.embed_matrix(w, backend=b),
        b.concat([v.re, v.im], axis=0),
        xs,
        un.embed_vector(h0, backend=b),
        "modrelu",
        bias=bias,
        backend=b,
    )
    return agreement(b, hr[-1], un.embed_vector(hc[-1], backend=b), 2 * n * int(xs.shape[0]))


def cases_modrelu_rnn(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in _sizes(ctx):
        if ctx.backend.exact:
            continue
        steps = 4 if ctx.backend.method == "high-precision" else 10
        for case in _unitary_cases(ctx, rng, n, structured=False):
            yield {
                **case,
                "V_re": rng.standard_normal((n, 2)),
                "V_im": rng.standard_normal((n, 2)),
                "h0_re": rng.standard_normal(n),
                "h0_im": rng.standard_normal(n),
                "xs": rng.standard_normal((steps, 2)),
                "bias": rng.standard_normal(n) * 0.5,
            }


MODRELU_REAL = Claim(
    id="unitary.modrelu_real",
    paper=PAPER,
    where="001 Sec. 3, after eq. 4",
    kind="identity",
    statement=(
        "the real-space form of modReLU: [phi(a)]_i = (sqrt(a_i^2 + a_k_i^2) + b_k~_i) / sqrt(a_i^2 + a_k_i^2) a_i if "
        "that is > 0, else 0, with k_i = ((i + n) mod 2n) and k~_i = (i mod n) for all i in {1, ..., 2n}"
    ),
    checks=(
        FunctionCheck(
            "indices_as_printed",
            lambda ctx: fn_modrelu_indices(ctx, convention="printed"),
            ("sympy",),
            "exhaustive",
            "index k_i, k~_i in range",
            replay_fn=replay_modrelu_indices,
            exact=True,
        ),
    ),
    notes=(
        "With i in 1..2n and mod giving residues 0..m-1, k_n = 2n mod 2n = 0 and k~_n = k~_2n = 0 for every n: "
        "outside 1..2n and 1..n. The formulas are right for 0-based indices (i in 0..2n-1), or if 'mod' returns "
        "residues 1..m; the corrected claim states the 1-based form."
    ),
)

MODRELU_REAL_CORRECTED = Claim(
    id="unitary.modrelu_real.corrected",
    paper=PAPER,
    where="001 Sec. 3, after eq. 4",
    kind="identity",
    corrects="unitary.modrelu_real",
    statement=(
        "with k_i = ((i + n - 1) mod 2n) + 1 and k~_i = ((i - 1) mod n) + 1 (i in 1..2n; equivalently the printed "
        "formulas with 0-based i), phi(Re z, Im z) = (Re modReLU(z), Im modReLU(z)), and the real RNN of eq. 3 "
        "with phi equals the modReLU uRNN"
    ),
    checks=(
        FunctionCheck(
            "indices",
            lambda ctx: fn_modrelu_indices(ctx, convention="corrected"),
            ("sympy",),
            "exhaustive",
            "index k_i, k~_i in range and pairing",
            replay_fn=replay_modrelu_indices,
            exact=True,
        ),
        PropertyCheck(
            "against_complex",
            q_modrelu_real,
            cases_modrelu,
            ALL,
            "||phi(a) - (Re, Im) modReLU(z)|| / (2n eps ||modReLU(z)||)",
        ),
        PropertyCheck(
            "rnn",
            q_modrelu_rnn,
            cases_modrelu_rnn,
            FLOAT_HP,
            "||h_hat_T - (Re h_T, Im h_T)|| / (2 n T eps ||h_T||)",
        ),
    ),
)


# =============================================================================== Corollary 1
def q_corollary1(b: Backend, case: Case) -> Measure:
    """Invert (complex QR), rebuild M_hat_1(theta, u) and compare with W."""
    w = _unitary(b, case)
    n = w.shape[0]
    theta, us = un.unitary_parameters(w, backend=b)
    m = un.m1_hat(theta, us, backend=b)
    return _cagree(b, m, w, n)


def cases_corollary1(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in _sizes(ctx):
        if ctx.backend.exact:
            continue
        yield from _unitary_cases(ctx, rng, n)


def q_image_unitary(b: Backend, case: Case) -> Measure:
    n = int(case["n"])
    theta = b.asarray(case["theta"], name="theta")
    us = [un.as_carray((case[f"u{k}_re"], case[f"u{k}_im"]), backend=b)[1] for k in range(2, n + 1)]
    m = un.m1_hat(theta, us, backend=b)
    return Measure(un.unitarity_ratio(m, b)) if not b.exact else _flag(un.unitarity_ratio(m, b) == 0, "M*M = I")


def cases_image_unitary(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in _sizes(ctx):
        if ctx.backend.exact and n > 3:
            continue
        for _ in range(ctx.profile.cases):
            case: dict[str, Any] = {"n": n}
            if ctx.backend.exact:
                case["theta"] = np.zeros(n, dtype=object)  # cos/sin of rational angles are transcendental
                for k in range(2, n + 1):
                    u = samples.rational_matrix(rng, k, 2, bound=3, max_den=2)
                    u[0, 0] = u[0, 0] + 1 if all(v == 0 for v in u.reshape(-1)) else u[0, 0]
                    case[f"u{k}_re"], case[f"u{k}_im"] = u[:, 0], u[:, 1]
            else:
                e = 30 if ctx.backend.eps > 1e-10 else 100  # float32's range ends near 1e38
                case["theta"] = rng.uniform(-50, 50, n)
                for k in range(2, n + 1):
                    s = 10.0 ** rng.uniform(-e, e)
                    case[f"u{k}_re"], case[f"u{k}_im"] = rng.standard_normal(k) * s, rng.standard_normal(k) * s
            yield case


def sym_image_unitary(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """H_hat_k(u) H_hat_k(u)* = I for free complex u (k = 2, 3), and diag(e^(i theta)) is unitary."""
    b = _sympy()
    for k in ctx.profile.symbolic_sizes:
        u = CArray(_symbols("p", k), _symbols("q", k))
        h = un.complex_reflection(u, backend=b)
        r = h @ un.ct(b, h) - un.ceye(b, k)
        yield f"k={k}: Re(H H* - I)", r.re
        yield f"k={k}: Im(H H* - I)", r.im
        d = un.phase_diag(_symbols("t", k), backend=b)
        rd = d @ un.ct(b, d) - un.ceye(b, k)
        yield f"k={k}: D D* - I", np.concatenate([rd.re.reshape(-1), rd.im.reshape(-1)])


def _unitary_strategy(ctx: RunContext) -> Any:
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
        return _split(w, "W")

    return case()


COROLLARY1 = Claim(
    id="unitary.corollary1",
    paper=PAPER,
    where="001 Cor. 1, Sec. 4.3",
    kind="coverage",
    statement=(
        "M_hat_1(theta, u_2, ..., u_n) = H_hat_n(u_n) ... H_hat_2(u_2) H_hat_1(theta), with complex Householder "
        "reflections H_hat_k and H_hat_1(theta) = diag(e^(i theta)), spans the full set U(n), and any point of its "
        "image is unitary"
    ),
    checks=(
        PropertyCheck(
            "invert_and_rebuild",
            q_corollary1,
            cases_corollary1,
            FLOAT_HP,
            "||M_hat_1(inverse(W)) - W|| / (n eps ||W||)",
        ),
        SearchCheck(
            "invert_search",
            q_corollary1,
            _unitary_strategy,
            ("numpy-float64", "torch-float32"),
            "||M_hat_1(inverse(W)) - W|| / (n eps ||W||)",
        ),
        PropertyCheck("image_unitary", q_image_unitary, cases_image_unitary, ALL, "||M*M - I|| / (n eps)"),
        SymbolicCheck("image_unitary_symbolic", sym_image_unitary),
    ),
    notes=(
        "Coverage is shown constructively: unitary_parameters (the complex Householder QR of the proof sketch, "
        "with its phase as corrected in unitary.corollary1_proof) finds parameters, and M_hat_1 rebuilt from them "
        "equals W, for Haar unitaries and structured ones (phases with repeats, permutations, +-I, real "
        "orthogonal, near identity, columns starting with 0), at 50 digits too (float samples are polished to 50 "
        "digits first). As for Theorem 1 of the same paper, H_hat_k(0) is undefined: the map is defined for "
        "nonzero u_k, and the construction never produces a zero vector (|u_1| = |x_1| + ||x|| > 0)."
    ),
)


def fn_corollary1_proof_printed(ctx: RunContext) -> Outcome:
    """Sketch of the proof of Cor. 1: a theta with x_1 = e^(i theta) ||x|| exists only when
    |x_1| = ||x||, i.e. x is a multiple of e_1. x = (1, 1) has none."""
    x = [sympy.Integer(1), sympy.Integer(1)]
    gap = sympy.Abs(x[0]) - sympy.sqrt(sum(v * v for v in x))
    return Outcome(
        passed=False,
        cases=1,
        failure=({"x_re": ["1", "1"], "x_im": ["0", "0"]}, Measure(math.inf, f"|x_1| - ||x|| = {gap}")),
        notes="no real theta has e^(i theta) ||x|| = x_1 unless |x_1| = ||x||",
    )


def replay_corollary1_proof(inputs: Mapping[str, Any], b: Backend) -> Measure:
    re = [sympy.Rational(v) for v in inputs["x_re"]]
    im = [sympy.Rational(v) for v in inputs["x_im"]]
    gap = sympy.sqrt(re[0] ** 2 + im[0] ** 2) - sympy.sqrt(sum(r * r + i * i for r, i in zip(re, im, strict=True)))
    return Measure(0.0, "0") if gap == 0 else Measure(math.inf, f"|x_1| - ||x|| = {sympy.nsimplify(gap)}")


def q_eq17(b: Backend, case: Case) -> Measure:
    """Eq. 17 with the phase corrected: theta with x_1 = e^(i theta)|x_1| (any theta if x_1 = 0),
    u = x + e^(i theta)||x|| e_1, H = -e^(-i theta)(I - 2uu*/||u||^2) gives H x = ||x|| e_1."""
    x = _c(b, case, "x")
    k = x.shape[0]
    alpha = un.cnorm(b, x)
    m1 = b.sqrt(x.re[0] * x.re[0] + x.im[0] * x.im[0])
    if b.is_zero(m1):
        c, s = b.scalar(1), b.scalar(0)
    else:
        c, s = x.re[0] / m1, x.im[0] / m1
    e1 = b.concat([b.stack([b.scalar(1)]), b.zeros(k - 1)])
    u = x + CArray(e1 * (c * alpha), e1 * (s * alpha))
    rx = un.apply_reflection(u, x, backend=b)
    hx = rx * CArray(-c, s)  # -e^(-i theta) = -(c - i s)
    target = CArray(e1 * alpha, b.zeros(k))
    return _cagree(b, hx, target, k)


def cases_eq17(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in _sizes(ctx):
        if n < 2:
            continue
        for _ in range(ctx.profile.cases):
            if ctx.backend.exact:
                # components on Pythagorean moduli keep ||x|| and |x_1| rational
                yield {
                    "x_re": np.array([3] + [0] * (n - 1), dtype=object),
                    "x_im": np.array([4] + [0] * (n - 1), dtype=object),
                }
                v = samples.rational_matrix(rng, n, 2, bound=3, max_den=1)
                yield {"x_re": v[:, 0], "x_im": v[:, 1]}
            else:
                yield {"x_re": rng.standard_normal(n), "x_im": rng.standard_normal(n)}
                z = rng.standard_normal(n) + 1j * rng.standard_normal(n)
                z[0] = 0.0
                yield _split(z, "x")


COROLLARY1_PROOF = Claim(
    id="unitary.corollary1_proof",
    paper=PAPER,
    where="001 App. A, sketch of the proof of Cor. 1, eq. 17",
    kind="identity",
    statement=(
        "for any nonzero x in C^n, u = x + e^(i theta)||x|| e_1 and H = -e^(-i theta)(I - 2uu*/||u||^2), "
        "where theta is such that x_1 = e^(i theta)||x||, give H x = ||x|| e_1"
    ),
    checks=(
        FunctionCheck(
            "theta_exists",
            fn_corollary1_proof_printed,
            ("sympy",),
            "symbolic",
            "|x_1| - ||x||",
            replay_fn=replay_corollary1_proof,
            exact=True,
        ),
    ),
    notes=(
        "As printed, theta exists only when |x_1| = ||x|| (x a multiple of e_1). The intended condition is "
        "x_1 = e^(i theta)|x_1|: see the corrected claim. The text marks the line with '(?)' (extraction)."
    ),
)

COROLLARY1_PROOF_CORRECTED = Claim(
    id="unitary.corollary1_proof.corrected",
    paper=PAPER,
    where="001 App. A, eq. 17",
    kind="identity",
    corrects="unitary.corollary1_proof",
    statement=(
        "with theta such that x_1 = e^(i theta)|x_1| (any theta when x_1 = 0), u = x + e^(i theta)||x|| e_1 and "
        "H = -e^(-i theta)(I - 2uu*/||u||^2) give H x = ||x|| e_1"
    ),
    checks=(PropertyCheck("eq17", q_eq17, cases_eq17, ALL, "||H x - ||x|| e_1|| / (k eps ||x||)"),),
)


# =============================================================================== Lemma 1
def _best_angle(z: np.ndarray) -> float:
    """The alpha that best separates W's eigenvalues in cos(phi_j - alpha), the spectrum of the
    Hermitian part of e^(-i alpha) W: two eigenvalues e^(i phi_j), e^(i phi_k) map to values that
    differ by |lambda_j - lambda_k| |sin((phi_j + phi_k)/2 - alpha)|, so alpha is taken (on a grid)
    as far as possible from every midpoint (mod pi); the eigenvector error of a Hermitian solver
    is then at most eps / min|sin| times the unit roundoff's share, whatever the gaps of W."""
    phi = np.angle(np.linalg.eigvals(z))
    mids = ((phi[:, None] + phi[None, :]) / 2)[np.triu_indices(len(phi), 1)]
    if mids.size == 0:
        return 0.0
    grid = np.linspace(0, np.pi, 721)[:-1]
    score = np.abs(np.sin(mids[None, :] - grid[:, None])).min(axis=1)
    return float(grid[int(np.argmax(score))])


def _joint_eig(b: Backend, w: CArray) -> tuple[CArray, CArray]:
    """An eigendecomposition W = V D V* of a unitary W with V unitary by construction: the
    Hermitian part of e^(-i alpha) W has W's eigenvectors (W is normal), and a Hermitian
    eigensolver returns them orthonormal, also for repeated eigenvalues; alpha from
    :func:`_best_angle`."""
    n = w.shape[0]
    z = w.to_complex(b)
    alpha = _best_angle(z)
    if b.family == "mpmath":
        ctx = b.ctx  # type: ignore[attr-defined]
        m = ctx.matrix(_native(b, w).tolist()) * ctx.expj(-ctx.mpf(alpha))
        _e, q = ctx.eighe((m + m.H) / 2)
        v = _from_native(b, np.array([[q[i, j] for j in range(n)] for i in range(n)], dtype=object))
    else:
        m = z * np.exp(-1j * alpha)
        _e, q = np.linalg.eigh((m + m.conj().T) / 2)
        v = CArray(b.asarray(q.real), b.asarray(q.imag))
    d = un.ct(b, v) @ w @ v
    return v, CArray(b.diagonal(d.re), b.diagonal(d.im))


def q_lemma1_spectral(b: Backend, case: Case) -> Measure:
    """Unitary W = V D V* with V unitary and |D_jj| = 1; conversely V D V* is unitary for any
    unitary V and unit-modulus D."""
    w = _unitary(b, case)
    n = w.shape[0]
    v, d = _joint_eig(b, w)
    dm = un.CArray(b.diag(d.re), b.diag(d.im))
    rebuilt = v @ dm @ un.ct(b, v)
    mods = d.re * d.re + d.im * d.im - b.asarray([1] * n)
    # converse: V and D' = D with the phases of a second sample
    w2 = _unitary(b, case, "W2")
    ph = un.phases(b.asarray(case["phi"], name="phi"), backend=b)
    back = w2 @ un.CArray(b.diag(ph.re), b.diag(ph.im)) @ un.ct(b, w2)
    return worst(
        Measure(un.unitarity_ratio(v, b)),
        _cagree(b, rebuilt, w, n),
        residual(b, mods, n),
        Measure(un.unitarity_ratio(back, b)),
    )


def cases_lemma1_spectral(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in _sizes(ctx):
        if ctx.backend.exact:
            continue
        for case in _unitary_cases(ctx, rng, n):
            yield {**case, **_split(samples.haar_unitary(rng, n), "W2"), "phi": rng.uniform(-np.pi, np.pi, n)}


def _paired_columns(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A unitary V whose columns come in conjugate pairs (and real columns for a leftover
    eigenvalue +-1), with conjugate-paired unit eigenvalues D: the real orthogonal W of Lemma 1."""
    q = samples.haar_orthogonal(rng, n)
    cols, eig = [], []
    for j in range(0, n - 1, 2):
        a, c = q[:, j], q[:, j + 1]
        v = (a - 1j * c) / np.sqrt(2)
        phi = rng.uniform(0.1, np.pi - 0.1)
        cols += [v, v.conj()]
        eig += [np.exp(1j * phi), np.exp(-1j * phi)]
    if n % 2:
        cols.append(q[:, n - 1].astype(complex))
        eig.append(complex(rng.choice([-1.0, 1.0])))
    return np.stack(cols, axis=1), np.array(eig)


def q_lemma1_real_if(b: Backend, case: Case) -> Measure:
    """V with conjugate-paired columns and conjugate-paired eigenvalues gives a real orthogonal W."""
    v = _unitary(b, case, "V")
    d = _c(b, case, "D")
    n = v.shape[0]
    if not b.exact:
        d = d / b.sqrt(d.re * d.re + d.im * d.im)  # unit modulus at the working precision
    w = v @ un.CArray(b.diag(d.re), b.diag(d.im)) @ un.ct(b, v)
    return worst(residual(b, w.im, n), residual(b, b.transpose(w.re) @ w.re - b.eye(n), n))


def cases_lemma1_real(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in _sizes(ctx):
        if ctx.backend.exact:
            continue
        for _ in range(ctx.profile.cases):
            v, d = _paired_columns(n, rng)
            yield {**_split(v, "V"), **_split(d, "D")}


def q_lemma1_real_only_if(b: Backend, case: Case) -> Measure:
    """For a real orthogonal W and every eigenpair (lambda, v) of a decomposition, (conj lambda,
    conj v) is an eigenpair of W: ||W conj(v) - conj(lambda) conj(v)||."""
    w = _c(b, case, "W")  # a real orthogonal matrix (imaginary part 0)
    if not b.exact:
        w = un.polish_unitary(w, backend=b)
    n = w.shape[0]
    v, d = _joint_eig(b, w)
    vb = v.conj()
    lam = un.CArray(b.diag(d.re), b.diag(-d.im))
    return _cagree(b, w @ vb, vb @ lam, n)


def cases_lemma1_real_orth(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in _sizes(ctx):
        if ctx.backend.exact:
            continue
        for _ in range(ctx.profile.cases):
            q = samples.haar_orthogonal(rng, n)
            yield {"W_re": q, "W_im": np.zeros((n, n))}


def fn_lemma1_printed(ctx: RunContext) -> Outcome:
    """The 'only if' of the real part, read about the decomposition's columns: W = I_2 is real
    orthogonal and W = V D V* with V = diag(1, i), D = I; the eigenvector v_2 = i e_2 has no
    column conj(v_2) = -i e_2 in V."""
    inputs = {"V_re": [["1", "0"], ["0", "0"]], "V_im": [["0", "0"], ["0", "1"]], "D": ["1", "1"]}
    m = replay_lemma1_printed(inputs, _sympy())
    return Outcome(
        passed=False,
        cases=1,
        failure=(inputs, m),
        notes="W = V D V* = I_2 is real orthogonal, yet V's columns are not closed under conjugation",
    )


def replay_lemma1_printed(inputs: Mapping[str, Any], b: Backend) -> Measure:
    vv = sympy.Matrix(inputs["V_re"]).applyfunc(sympy.Rational) + sympy.I * sympy.Matrix(inputs["V_im"]).applyfunc(
        sympy.Rational
    )
    d = sympy.diag(*[sympy.Rational(x) for x in inputs["D"]])
    n = vv.shape[0]
    w = (vv * d * vv.H).applyfunc(sympy.expand)
    if (vv.H * vv).applyfunc(sympy.expand) != sympy.eye(n) or any(sympy.im(x) != 0 for x in w):
        return Measure(0.0, "not a real orthogonal W = V D V* (no counterexample)")
    cols = [vv[:, j] for j in range(n)]
    for j in range(n):
        conj = cols[j].conjugate()
        if not any(conj == cols[k] and sympy.conjugate(d[j, j]) == d[k, k] for k in range(n)):
            return Measure(math.inf, f"column {j + 1} = {list(cols[j])} has no conjugate column {list(conj)}")
    return Measure(0.0, "columns come in conjugate pairs")


_LEMMA1_SPECTRAL = PropertyCheck(
    "spectral",
    q_lemma1_spectral,
    cases_lemma1_spectral,
    FLOAT_HP,
    "max(||V*V - I||, ||V D V* - W||, max| |D_jj|^2 - 1 |, ||(V' D' V'^*)* (.) - I||) / (n eps)",
)
_LEMMA1_REAL_IF = PropertyCheck(
    "real_if_paired",
    q_lemma1_real_if,
    cases_lemma1_real,
    FLOAT_HP,
    "max(||Im W||, ||W'W - I||) / (n eps)",
)

LEMMA1 = Claim(
    id="unitary.lemma1",
    paper=PAPER,
    where="004 Lemma 1",
    kind="identity",
    statement=(
        "W is unitary iff W = V D V* with V unitary and |D_jj| = 1; W is real orthogonal iff for every eigenvalue "
        "D_jj = lambda_j with eigenvector v_j there is also an eigenvalue lambda_k = conj(lambda_j) with "
        "eigenvector v_k = conj(v_j)"
    ),
    checks=(
        _LEMMA1_SPECTRAL,
        _LEMMA1_REAL_IF,
        FunctionCheck(
            "real_only_if_columns",
            fn_lemma1_printed,
            ("sympy",),
            "symbolic",
            "a column of V without its conjugate",
            replay_fn=replay_lemma1_printed,
            exact=True,
        ),
    ),
    notes=(
        "Read, as printed, about the decomposition W = V D V* (eigenvalue D_jj, eigenvector v_j the j-th column of "
        "V): the 'if' direction holds, the 'only if' fails, because eigenvectors are fixed only up to phase (and "
        "within repeated eigenspaces): I_2 = V I V* with V = diag(1, i). Read about the eigenpairs of W (any "
        "eigenvector), the lemma holds: see unitary.lemma1.corrected."
    ),
)

LEMMA1_CORRECTED = Claim(
    id="unitary.lemma1.corrected",
    paper=PAPER,
    where="004 Lemma 1",
    kind="identity",
    corrects="unitary.lemma1",
    statement=(
        "W is unitary iff W = V D V* with V unitary and |D_jj| = 1; a unitary W is real (orthogonal) iff for every "
        "eigenpair (lambda, v) of W, (conj(lambda), conj(v)) is an eigenpair of W, equivalently iff it has such a "
        "decomposition whose columns and eigenvalues come in conjugate pairs"
    ),
    checks=(
        _LEMMA1_SPECTRAL,
        _LEMMA1_REAL_IF,
        PropertyCheck(
            "real_only_if_eigenpairs",
            q_lemma1_real_only_if,
            cases_lemma1_real_orth,
            FLOAT_HP,
            "||W conj(V) - conj(V) conj(D)|| / (n eps)",
        ),
    ),
    notes=(
        "Only if: W v = lambda v with W real gives W conj(v) = conj(lambda) conj(v). If: W and conj(W) agree on the "
        "basis conj(v_j), so W = conj(W). Decompositions are computed by a Hermitian eigensolver on "
        "(W + W*)/2 + c (W - W*)/2i (V unitary by construction, also for repeated eigenvalues)."
    ),
)


# =============================================================================== building blocks
def q_blocks(b: Backend, case: Case) -> Measure:
    """D, R, Pi, F, F^-1 unitary; F^-1 F = I; R(c v) = R(v) for complex c != 0."""
    n = int(case["n"])
    w = b.asarray(case["w"], name="w")
    v = _c(b, case, "v")
    cfac = _c(b, case, "c")
    d = un.phase_diag(w, backend=b)
    r = un.complex_reflection(v, backend=b)
    pi = un.CArray(un.permutation_matrix(case["perm"], backend=b), b.zeros((n, n)))
    f = un.dft_matrix(n, backend=b)
    fi = un.dft_matrix(n, backend=b, inverse=True)
    r2 = un.complex_reflection(v * cfac[0], backend=b)
    ratios = [Measure(un.unitarity_ratio(m, b)) for m in (d, r, pi, f, fi)]
    if b.exact:
        ratios = [_flag(m.ratio == 0, "unitary") for m in ratios]
    return worst(*ratios, _cagree(b, fi @ f, un.ceye(b, n), n), _cagree(b, r2, r, n))


def cases_blocks(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    sizes = _sizes(ctx) if not ctx.backend.exact else tuple(n for n in (1, 2, 3, 4, 6, 8) if n <= 8)
    for n in sizes:
        for _ in range(ctx.profile.cases):
            case: dict[str, Any] = {"n": n, "perm": [str(int(p)) for p in rng.permutation(n)]}
            if ctx.backend.exact:
                case["w"] = np.zeros(n, dtype=object)
                v = samples.rational_matrix(rng, n, 2, bound=3, max_den=2)
                v[0, 0] = 1 if all(x == 0 for x in v.reshape(-1)) else v[0, 0]
                case["v_re"], case["v_im"] = v[:, 0], v[:, 1]
                case["c_re"], case["c_im"] = (
                    np.array([sympy.Rational(-3, 2)], dtype=object),
                    np.array([2], dtype=object),
                )
            else:
                case["w"] = rng.uniform(-np.pi, np.pi, n)
                e = 8 if ctx.backend.eps > 1e-10 else 30  # |c v| must stay inside float32's range
                s = 10.0 ** rng.uniform(-e, e)
                case["v_re"], case["v_im"] = rng.standard_normal(n) * s, rng.standard_normal(n) * s
                cs = 10.0 ** rng.uniform(-e, e)
                case["c_re"], case["c_im"] = (
                    np.array([rng.standard_normal() * cs]),
                    np.array([rng.standard_normal() * cs]),
                )
            yield case


def sym_blocks(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """R(v) R(v)* = I, R* = R and R(c v) = R(v) for free complex v and c (k = 2, 3)."""
    b = _sympy()
    for k in ctx.profile.symbolic_sizes:
        v = CArray(_symbols("p", k), _symbols("q", k))
        c = CArray(
            np.array([sympy.Symbol("c_re", real=True)], dtype=object),
            np.array([sympy.Symbol("c_im", real=True)], dtype=object),
        )
        r = un.complex_reflection(v, backend=b)
        rh = un.ct(b, r)
        rc = un.complex_reflection(v * c[0], backend=b)
        yield (
            f"k={k}: R R* - I",
            np.concatenate([(r @ rh - un.ceye(b, k)).re.reshape(-1), (r @ rh - un.ceye(b, k)).im.reshape(-1)]),
        )
        yield f"k={k}: R* - R", np.concatenate([(rh - r).re.reshape(-1), (rh - r).im.reshape(-1)])
        yield f"k={k}: R(c v) - R(v)", np.concatenate([(rc - r).re.reshape(-1), (rc - r).im.reshape(-1)])


def fn_permutations(ctx: RunContext) -> Outcome:
    """Every permutation matrix of size n <= 5 (6 in default and thorough): Pi' Pi = I, and
    Pi' is the matrix of the inverse permutation."""
    top = 5 if ctx.profile.name == "quick" else 6
    count = 0
    for n in range(1, top + 1):
        eye = np.eye(n, dtype=np.int64)
        for perm in itertools.permutations(range(n)):
            count += 1
            p = eye[list(perm)]
            inv = [perm.index(i) for i in range(n)]
            if not (np.array_equal(p.T @ p, eye) and np.array_equal(p.T, eye[inv])):
                return Outcome(
                    False, count, failure=({"perm": [str(v) for v in perm]}, Measure(math.inf, "Pi'Pi != I"))
                )
    return Outcome(True, count, worst_ratio=0.0, notes=f"all permutations of n = 1..{top} ({count}), exact integers")


def fn_unnormalised_dft(ctx: RunContext) -> Outcome:
    """Context for the claim: the DFT is unitary only with the 1/sqrt(n) normalisation;
    numpy.fft's default ('backward') transform has F*F = n I. Measured, for the record."""
    b = ctx.backend
    rows = []
    ok = True
    for n in (2, 8, 64):
        f = un.dft_matrix(n, backend=b, normalized=False)
        x = np.random.default_rng(0).standard_normal(n)
        fx = np.fft.fft(x)
        ours = (f @ un.as_carray(x, backend=b)[1].reshape(n, 1)).to_complex(b).reshape(n)
        gram = un.ct(b, f) @ f - un.ceye(b, n) * n
        rows.append({"n": n, "||F_unnormalised||_2": math.sqrt(n), "numpy_fft_diff": float(np.abs(ours - fx).max())})
        ok = ok and un.unitarity_ratio(f, b) > 1e3 and b.to_float(un.cnorm(b, gram)) < 1e-9 * n * n
        ok = ok and float(np.abs(ours - fx).max()) < 1e-9 * n
    return Outcome(
        passed=ok,
        cases=len(rows),
        worst_ratio=0.0,
        notes="numpy.fft.fft (norm='backward') equals the unnormalised DFT, whose F*F = n I: unitary only after "
        "dividing by sqrt(n) (norm='ortho'), the convention used for F here",
        data={"unnormalised": rows},
    )


BUILDING_BLOCKS = Claim(
    id="unitary.building_blocks",
    paper=PAPER,
    where="004 Sec. 2",
    kind="identity",
    statement=(
        "D = diag(e^(i w_j)), R = I - 2vv*/||v||^2, a permutation Pi, the Fourier transform F and F^-1 are unitary; "
        "R does not depend on the scale of v"
    ),
    checks=(
        PropertyCheck(
            "blocks",
            q_blocks,
            cases_blocks,
            ALL,
            "max(||X*X - I|| for X in D, R, Pi, F, F^-1; ||F^-1 F - I||; ||R(cv) - R(v)||) / (n eps)",
        ),
        SymbolicCheck("reflection_symbolic", sym_blocks),
        FunctionCheck("permutations", fn_permutations, ("sympy",), "exhaustive", "Pi'Pi - I", exact=True),
        FunctionCheck("dft_normalisation", fn_unnormalised_dft, ("numpy-float64",), "float", "F*F - n I"),
    ),
    notes=(
        "F is the unitary DFT, F_jk = e^(-2 pi i jk/n)/sqrt(n); the default normalisation of numpy.fft and "
        "torch.fft (no 1/sqrt(n)) is not unitary (||F|| = sqrt(n)); the dft_normalisation check records this. "
        "The scale invariance holds for every complex c != 0 (so any centred uniform initialisation of v "
        "gives the same R, Sec. 3.4). Exact DFT checks use n with radical roots of unity (1, 2, 3, 4, 6, 8)."
    ),
)


# =============================================================================== composition
def q_composition(b: Backend, case: Case) -> Measure:
    """W = D3 R2 F^-1 D2 Pi R1 F D1 is unitary; W h factor by factor through the FFT (generic and,
    in float, native) equals the dense product."""
    p = _urnn_params(b, case)
    n = p.n
    w = un.urnn_matrix(p)
    h = _c(b, case, "h")
    dense = w @ h.reshape(n, 1)
    out = [Measure(un.unitarity_ratio(w, b)), _cagree(b, un.urnn_apply(p, h.reshape(n, 1)), dense, n)]
    if b.family in ("numpy", "torch"):
        out.append(_cagree(b, un.urnn_apply(p, h.reshape(n, 1), fft_path="native"), dense, n))
    return worst(*out)


def _urnn_params(b: Backend, case: Case) -> un.URNNParameters:
    """The uRNN parameters of a case made by :func:`_urnn_case`, on backend ``b``."""
    return un.urnn_parameters(
        case["w1"],
        case["w2"],
        case["w3"],
        (case["v1_re"], case["v1_im"]),
        (case["v2_re"], case["v2_im"]),
        [int(v) for v in case["perm"]],
        backend=b,
    )


def _urnn_case(r: dict[str, Any]) -> Case:
    """A case of the uRNN parameters drawn by :func:`~orthoverify.param.unitary.urnn_random`."""
    return {
        "w1": r["w1"],
        "w2": r["w2"],
        "w3": r["w3"],
        "v1_re": r["v1"][0],
        "v1_im": r["v1"][1],
        "v2_re": r["v2"][0],
        "v2_im": r["v2"][1],
        "perm": [str(v) for v in r["perm"]],
    }


def cases_composition(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    sizes = _sizes(ctx)
    for n in (*sizes, 12) if ctx.backend.method == "float" else sizes:
        if ctx.backend.exact:
            continue
        for _ in range(ctx.profile.cases):
            yield {
                **_urnn_case(un.urnn_random(rng, n)),
                "h_re": rng.standard_normal(n),
                "h_im": rng.standard_normal(n),
            }


def fn_parameter_count(ctx: RunContext) -> Outcome:
    """The real scalars urnn_parameters consumes (w1, w2, w3: n each; v1, v2: 2n each) are 7n."""
    rng = np.random.default_rng(ctx.seed)
    for n in range(1, 65):
        r = un.urnn_random(rng, n)
        p = un.urnn_parameters(r["w1"], r["w2"], r["w3"], r["v1"], r["v2"], r["perm"], backend="numpy-float64")
        count = sum(int(a.size) for a in (p.w1, p.w2, p.w3, p.v1.re, p.v1.im, p.v2.re, p.v2.im))
        if count != 7 * n or un.urnn_parameter_count(n) != 7 * n:
            return Outcome(False, n, failure=({"n": str(n)}, Measure(math.inf, f"{count} != 7n = {7 * n}")))
    return Outcome(True, 64, worst_ratio=0.0, notes="7n real parameters for n = 1..64 (Pi is fixed, F has none)")


def fn_nlogn(ctx: RunContext) -> Outcome:
    """Flops of W h (generic FFT) on the counting arithmetic, fitted exactly by a n log2 n + b n + c
    for powers of two, verified on every other counted n; the dense product's count for scale."""
    top = 256 if ctx.profile.name == "quick" else 1024
    ns = [n for n in uf.POW2_SIZES if n <= top]
    totals = [uf.urnn_apply_counts(n, part="per_vector")["total"] for n in ns]
    coeffs = uf.fit_nlogn(ns, totals)
    misses = uf.check_fit(ns, totals, coeffs)
    others = [n for n in uf.NONPOW2_SIZES if n <= (33 if ctx.profile.name == "quick" else 100)]
    ototals = [uf.urnn_apply_counts(n, part="per_vector")["total"] for n in others]
    c_other = uf.nlogn_constant(others, ototals)
    passed = not misses and coeffs[0] > 0
    return Outcome(
        passed=passed,
        cases=len(ns) + len(others),
        worst_ratio=0.0,
        notes=(
            f"per column h: {uf.formula(coeffs)} flops exactly for n = {ns[0]}..{ns[-1]} (powers of two); other n "
            f"(Bluestein) at most {c_other:.1f} n log2 n on n = {others}; dense W h: 8n^2 - 2n"
        ),
        data={
            "fit": [str(c) for c in coeffs],
            "pow2": dict(zip(ns, totals, strict=True)),
            "other": dict(zip(others, ototals, strict=True)),
        },
    )


def enclose_composition(b: Backend, case: Case) -> Any:
    """||W*W - I||_F for W = D3 R2 F^-1 D2 Pi R1 F D1, from the case's exact (binary) parameters:
    the real and imaginary parts of W*W - I, together."""
    p = _urnn_params(b, case)
    w = un.urnn_matrix(p)
    r = un.ct(b, w) @ w - un.ceye(b, p.n)
    return frobenius(b, b.concat([r.re, r.im], axis=0))


def cases_composition_rigorous(ctx: RunContext) -> Iterator[Case]:
    """Random float64 parameters (exact binary numbers, so exact in Arb) for n = 4, 8, 16."""
    rng = ctx.rng()
    for n in RIGOROUS_SIZES:
        yield _urnn_case(un.urnn_random(rng, n))


def fn_composition_rigorous(ctx: RunContext) -> Outcome:
    return rigorous_scan(
        ctx, cases_composition_rigorous(ctx), enclose_composition, bound="1e-40", quantity="||W*W - I||_F"
    )


COMPOSITION = Claim(
    id="unitary.composition",
    paper=PAPER,
    where="004 Sec. 2",
    kind="complexity",
    statement="W = D3 R2 F^-1 D2 Pi R1 F D1 is unitary, has 7n real parameters, and W h costs O(n log n)",
    checks=(
        PropertyCheck(
            "unitary_and_fft",
            q_composition,
            cases_composition,
            FLOAT_HP,
            "max(||W*W - I||, ||W h (FFT) - W h (dense)|| / ||W h||) / (n eps)",
        ),
        FunctionCheck("parameters", fn_parameter_count, ("sympy",), "exhaustive", "real parameters - 7n", exact=True),
        FunctionCheck("flops", fn_nlogn, ("flops",), "measured", "flops of W h", exact=True),
        FunctionCheck(
            "rigorous_unitary",
            fn_composition_rigorous,
            RIGOROUS,
            "rigorous",
            "||W*W - I||_F",
            threshold=1e-40,
            replay_fn=replay_frobenius(enclose_composition),
        ),
    ),
    notes=(
        "Flops are counted by running the generic code (radix-2 FFT; Bluestein for other n) on the counting "
        "arithmetic; cos/sin (phases, twiddles) are free since they do not depend on h. Wall-clock growth for "
        "n = 64..8192 is measured by `orthoverify bench unitary.fft`."
    ),
)


# =============================================================================== init_h0
def sym_init_h0(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """E||h0||^2 = 2n E[x^2] with x ~ U[-a, a], a = sqrt(3/(2n)), for symbolic n."""
    n = sympy.Symbol("n", positive=True, integer=True)
    x = sympy.Symbol("x", real=True)
    a = sympy.sqrt(sympy.Rational(3, 2) / n)
    ex2 = sympy.integrate(x**2 / (2 * a), (x, -a, a))
    yield "2n E[x^2] - 1 (symbolic n)", sympy.simplify(2 * n * ex2 - 1)


def fn_init_h0_mc(ctx: RunContext) -> Outcome:
    """Monte Carlo of init_h0 (the sampler as Sec. 3.4 describes it): the z-score of the mean of
    ||h0||^2 against 1, with the exact standard error sqrt(2n * 4a^4/45 / N)."""
    rng = ctx.rng()
    draws = 20000 if ctx.profile.name == "quick" else 100000
    worst_z = 0.0
    rows = []
    for n in (1, 2, 8, 64):
        h = un.init_h0(rng, n, size=draws)
        s = (np.abs(h) ** 2).sum(axis=1)
        a2 = 3.0 / (2 * n)
        se = math.sqrt(2 * n * 4 * a2 * a2 / 45 / draws)
        z = abs(float(s.mean()) - 1.0) / se
        worst_z = max(worst_z, z)
        rows.append(
            {
                "n": n,
                "mean": float(s.mean()),
                "z": z,
                "max_abs_part": float(max(np.abs(h.real).max(), np.abs(h.imag).max())),
            }
        )
        if max(np.abs(h.real).max(), np.abs(h.imag).max()) > math.sqrt(a2):
            worst_z = math.inf
    return Outcome(
        passed=worst_z <= 5.0,
        cases=4,
        worst_ratio=worst_z,
        notes=f"{draws} draws per n; |mean - 1| / standard error <= 5 (a false alarm has probability < 1e-6)",
        data={"rows": rows},
    )


INIT_H0 = Claim(
    id="unitary.init_h0",
    paper=PAPER,
    where="004 Sec. 3.4",
    kind="identity",
    statement="h0 uniform in [-sqrt(3/(2n)), sqrt(3/(2n))] (real and imaginary parts) gives E||h0||^2 = 1",
    checks=(
        SymbolicCheck("expectation", sym_init_h0),
        FunctionCheck(
            "monte_carlo", fn_init_h0_mc, ("numpy-float64",), "float", "|mean ||h0||^2 - 1| / std. error", threshold=5.0
        ),
    ),
    notes=(
        "E[x^2] = a^2/3 for x ~ U[-a, a]; 2n such parts with a^2 = 3/(2n) give 1. The Monte Carlo threshold is a "
        "z-score."
    ),
)


def q_silent(b: Backend, case: Case) -> Measure:
    z = _c(b, case, "z")
    n = z.shape[0]
    return _cagree(b, un.modrelu(z, b.zeros(n), backend=b), z, n)


def cases_silent(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in _sizes(ctx):
        for case in _modrelu_inputs(ctx, rng, n):
            yield {"z_re": case["z_re"], "z_im": case["z_im"]}


INIT_SILENT = Claim(
    id="unitary.init_silent",
    paper=PAPER,
    where="004 Sec. 3.4",
    kind="identity",
    statement="with biases initialised to 0 the modReLU is silent: modReLU(z) = z for every z != 0 (|z| + 0 >= 0)",
    checks=(PropertyCheck("identity", q_silent, cases_silent, ALL, "||modReLU_0(z) - z|| / (n eps ||z||)"),),
    notes="Added: the reason Sec. 3.4 gives for zero biases ('the input of the ReLU is always positive').",
)


CLAIMS: list[Claim] = [
    COMPLEX_BLOCK,
    RNN_EQUIVALENCE,
    MODRELU_REAL,
    MODRELU_REAL_CORRECTED,
    COROLLARY1,
    COROLLARY1_PROOF,
    COROLLARY1_PROOF_CORRECTED,
    LEMMA1,
    LEMMA1_CORRECTED,
    BUILDING_BLOCKS,
    COMPOSITION,
    *COVERAGE_CLAIMS,
    *GRADIENT_CLAIMS,
    MODRELU,
    INIT_H0,
    INIT_SILENT,
]
