"""The complex recursion in native complex arithmetic and eq. 3's real one (real_rnn) are independent
formulations, compared unrolled in every arithmetic and, with an undefined phi, symbol for symbol."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify.backends import Array, Backend
from orthoverify.claims._common import ALL, exact_backend, symbol_array
from orthoverify.claims.unitary import _shared as kit
from orthoverify.engine.checks import Case, RunContext, SymbolicCheck
from orthoverify.engine.templates import Agreement, drawn
from orthoverify.param import unitary as un
from orthoverify.param.unitary import CArray


def complex_rnn(b: Backend, case: Case) -> Array:
    """The complex recursion in native complex arithmetic, h_T as (Re h_T, Im h_T)."""
    w, v, h0, xs = kit.rnn_inputs(b, case)
    w, v, h, act = kit.native(b, w), kit.native(b, v), kit.native(b, h0), un.separable_activation(b, str(case["act"]))
    for t in range(xs.shape[0]):
        z = kit.from_native(b, w @ h + v @ kit.native(b, CArray(xs[t], xs[t] * 0)))
        h = kit.native(b, CArray(act(z.re), act(z.im)))
    return un.embed_vector(kit.from_native(b, h), backend=b)


def draw(ctx: RunContext, rng: np.random.Generator, n: int) -> Iterator[Case]:
    """T = 20 steps (5 at 50 digits, 3 exact), the activations in turn."""
    steps = 3 if ctx.backend.exact else (5 if ctx.backend.method == "high-precision" else 20)
    for i, case in enumerate(kit.rnn_cases(ctx, rng, n, steps)):
        yield {**case, "act": ("relu", "leaky_relu", "identity")[i % 3]}


def sym_rnn_equivalence(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """n = 2, T = 2 with free symbols and an undefined phi on real and imaginary parts."""
    phi = sympy.Function("phi", real=True)
    b, n = exact_backend(), 2
    a, bb, p, q = symbol_array("a", n, n), symbol_array("b", n, n), symbol_array("p", n), symbol_array("q", n)
    x0, y0, u = symbol_array("x", n), symbol_array("y", n), symbol_array("u", 2)  # V = p + i q; inputs u_t
    wc, vc, h = a + sympy.I * bb, p + sympy.I * q, x0 + sympy.I * y0
    hh, what, vhat = np.concatenate([x0, y0]), un.embed_matrix(CArray(a, bb), backend=b), np.concatenate([p, q])

    def f(e: Any) -> Any:
        return phi(sympy.expand(e))

    for t in range(2):
        z = np.vectorize(sympy.expand, otypes=[object])(wc @ h + vc * u[t])
        h = np.array([f(sympy.re(e)) + sympy.I * f(sympy.im(e)) for e in z], dtype=object)
        hh = np.array([f(e) for e in what @ hh + vhat * u[t]], dtype=object)
    re, im = np.array([sympy.re(e) for e in h], dtype=object), np.array([sympy.im(e) for e in h], dtype=object)
    yield "n=2, T=2, phi undefined: h_hat_2 - (Re h_2, Im h_2)", hh - np.concatenate([re, im])


UNROLLED = Agreement(
    kit.twin_rnn, complex_rnn, "||h_hat_T - (Re h_T, Im h_T)|| / (2 n T eps ||h_T||)", dim=kit.steps_dim
)

CLAIMS = kit.claim(
    id="unitary.rnn_equivalence",
    place=kit.ORNN(section="3", equation="3"),
    expected="verified",
    origin="catalogue",
    summary="a complex RNN with a separable activation is a real RNN",
    kind="identity",
    statement=(
        "a complex RNN h_t = phi(W h_{t-1} + V x_t) whose activation acts on real and imaginary parts separately "
        "equals the real RNN h_hat_t = phi(W_hat h_hat_{t-1} + V_hat x_t) with W_hat = [[A, -B], [B, A]], "
        "V_hat = [Re V; Im V], h_hat = (Re h, Im h)"
    ),
    checks=(UNROLLED.check("all_arithmetics", drawn(draw), ALL), SymbolicCheck("symbolic", sym_rnn_equivalence)),
    notes=(
        "The complex recursion runs in native complex arithmetic; the real one is orthoverify's real_rnn. "
        "Activations: ReLU, leaky ReLU (slope 1/10), identity; the symbolic check uses an undefined phi."
    ),
)
