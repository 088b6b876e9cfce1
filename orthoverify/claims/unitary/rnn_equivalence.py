"""unitary.rnn_equivalence: a complex RNN with a separable activation is the real RNN of its
real twin.

Mhammedi et al. (ICML 2017) Sec. 3, eq. 3. Compared: the complex recursion
h_t = phi(W h_{t-1} + V x_t) run in native complex arithmetic against orthoverify's real_rnn with
W_hat = [[A, -B], [B, A]] and V_hat = [Re V; Im V] (ReLU, leaky ReLU, identity; float, 50 digits,
exact), and two steps with free symbols and an undefined phi.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL, exact_backend, symbol_array
from orthoverify.claims.unitary import PAPER
from orthoverify.claims.unitary._shared import (
    complex_input,
    from_native,
    native,
    steps_dim,
    unitary_cases,
    unitary_input,
)
from orthoverify.engine.checks import Case, RunContext, SymbolicCheck
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.templates import Agreement
from orthoverify.param import unitary as un
from orthoverify.param.unitary import CArray


def _native_act(b: Backend, z: Any, act: str) -> Any:
    """Apply a separable activation to the real and imaginary parts of native complex z."""
    c = from_native(b, z)
    f = un.separable_activation(b, act)
    return native(b, CArray(f(c.re), f(c.im)))


def complex_rnn(b: Backend, case: Case) -> Array:
    """The complex recursion in native complex arithmetic, h_T as (Re h_T, Im h_T)."""
    w, v = native(b, unitary_input(b, case)), native(b, complex_input(b, case, "V"))
    h = native(b, complex_input(b, case, "h0"))
    xs = b.asarray(case["xs"], name="xs")
    for t in range(xs.shape[0]):
        h = _native_act(b, w @ h + v @ native(b, CArray(xs[t], xs[t] * 0)), str(case["act"]))
    return un.embed_vector(from_native(b, h), backend=b)


def real_rnn(b: Backend, case: Case) -> Array:
    """Eq. 3's real RNN with W_hat = [[A, -B], [B, A]], V_hat = [Re V; Im V]: h_hat_T."""
    w, v = unitary_input(b, case), complex_input(b, case, "V")
    what, vhat = un.embed_matrix(w, backend=b), b.concat([v.re, v.im], axis=0)
    h0 = un.embed_vector(complex_input(b, case, "h0"), backend=b)
    return un.real_rnn(what, vhat, b.asarray(case["xs"], name="xs"), h0, str(case["act"]), backend=b)[-1]


UNROLLED = Agreement(real_rnn, complex_rnn, "||h_hat_T - (Re h_T, Im h_T)|| / (2 n T eps ||h_T||)", dim=steps_dim)


def cases_rnn_equivalence(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    acts = ("relu", "leaky_relu", "identity")
    for n in ctx.profile.sizes_on(ctx.backend):
        nx = 2
        for i, case in enumerate(unitary_cases(ctx, rng, n, structured=False)):
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
    b = exact_backend()
    n = 2
    a, bb = symbol_array("a", n, n), symbol_array("b", n, n)
    p, q = symbol_array("p", n), symbol_array("q", n)  # V = p + i q, one input unit
    x0, y0 = symbol_array("x", n), symbol_array("y", n)
    u = symbol_array("u", 2)  # inputs x_1, x_2

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
    place=Place(source="Mhammedi et al.", section="3", equation="3"),
    expected="verified",
    origin="catalogue",
    summary="a complex RNN with a separable activation is a real RNN",
    kind="identity",
    statement=(
        "a complex RNN h_t = phi(W h_{t-1} + V x_t) whose activation acts on real and imaginary parts separately "
        "equals the real RNN h_hat_t = phi(W_hat h_hat_{t-1} + V_hat x_t) with W_hat = [[A, -B], [B, A]], "
        "V_hat = [Re V; Im V], h_hat = (Re h, Im h)"
    ),
    checks=(
        UNROLLED.check("all_arithmetics", cases_rnn_equivalence, ALL),
        SymbolicCheck("symbolic", sym_rnn_equivalence),
    ),
    notes=(
        "The complex recursion runs in native complex arithmetic; the real one is orthoverify's real_rnn. "
        "Activations: ReLU, leaky ReLU (slope 1/10), identity; the symbolic check uses an undefined phi."
    ),
)

CLAIMS: list[Claim] = [RNN_EQUIVALENCE]
