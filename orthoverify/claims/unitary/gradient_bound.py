"""Eq. 5 is checked where it is tight (all units active: equality) and where it could break: real,
unitary (on the real twin) and uRNN-product W, per-step W_k, near-identity and -I, T up to 100,
inputs and biases of both signs, in every arithmetic; a search steers towards the largest ratio;
the backward recursion is checked against autograd; the isometry step with free symbols."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import sympy

from orthoverify.claims._common import EXACT, FLOAT_HP
from orthoverify.claims.unitary import _gradient as gb
from orthoverify.claims.unitary import _shared as kit
from orthoverify.claims.unitary._gradient_cases import cycled, exact_bound_cases
from orthoverify.engine.checks import PropertyCheck, RunContext, SymbolicCheck

RELU_KINDS = tuple(
    ["real", "complex", "urnn", "real-per-step", "permutation", "near-identity", "structured-unitary", "minus-identity"]
)
CASES = functools.partial(cycled, kinds=RELU_KINDS, act="relu")


def sym_isometry(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """The step of eq. 4: for orthogonal W, ||W' D v|| = ||D v|| (so ||W' D|| = ||D W'|| = ||D||).
    W is a symbolic rotation (N = 2, rational parametrisation) and the Cayley transform of a
    symbolic skew matrix (N = 3); D = diag(d_i) and v have free entries."""
    t = sympy.Symbol("t", real=True)
    c, s = (1 - t**2) / (1 + t**2), 2 * t / (1 + t**2)
    a = sympy.symbols("a0:3", real=True)
    skew = sympy.Matrix([[0, a[0], a[1]], [-a[0], 0, a[2]], [-a[1], -a[2], 0]])
    for n, w in ((2, sympy.Matrix([[c, -s], [s, c]])), (3, (sympy.eye(3) - skew) * (sympy.eye(3) + skew).inv())):
        d = sympy.diag(*sympy.symbols(f"d0:{n}", real=True))
        v = sympy.Matrix(sympy.symbols(f"v0:{n}", real=True))
        y = w.T * d * v
        yield f"N={n}: ||W'Dv||^2 - ||Dv||^2", (y.T * y)[0] - ((d * v).T * (d * v))[0]


CLAIMS = kit.claim(
    id="unitary.gradient_bound",
    place=kit.URNN(section="1", equation="3-5"),
    expected="verified",
    origin="catalogue",
    summary="with norm-preserving W and ReLU the gradient does not grow backwards",
    kind="bound",
    statement=(
        "If the W_k are norm preserving (orthogonal or unitary) and sigma is the ReLU, then "
        "||dC/dh_t|| <= ||dC/dh_T|| prod_{k=t}^{T-1} ||D_{k+1}|| <= ||dC/dh_T|| for all t < T, independently of "
        "T - t (eq. 4-5; a unitary W acts on (Re h, Im h) as its real twin [[A, -B], [B, A]], ReLU on real and "
        "imaginary parts separately)"
    ),
    checks=(
        gb.bound_check("float", CASES, FLOAT_HP),
        PropertyCheck("exact", gb.q_bound, exact_bound_cases, EXACT, "max_t<T ||dC/dh_t||^2 <= ||dC/dh_T||^2 (exact)"),
        gb.bound_search("relu", 0.0, 0.0),
        gb.autograd_check(CASES),
        gb.trajectory_check("relu", "mixed", 8),
        SymbolicCheck("symbolic", sym_isometry, "||W'Dv||^2 - ||Dv||^2 (exact)"),
    ),
    notes=(
        "Proof: dC/dh_k = W_k' D_{k+1} dC/dh_{k+1} (the chain rule in column form; see unitary.chain_rule), "
        "so ||dC/dh_k|| = ||D_{k+1} dC/dh_{k+1}|| <= max_i |sigma'(z_{k+1,i})| ||dC/dh_{k+1}|| for orthogonal "
        "W_k, and ReLU's slopes lie in [0, 1] (1/2 at a kink, as autograd computes (x + |x|)/2); induction on "
        "T - t. The bound does not need ||D|| = 1 (all units killed gives 0 <= ||dC/dh_T||). " + gb.RATIO_NOTE
    ),
)
