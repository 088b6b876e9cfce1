"""unitary.complex_block: a unitary W = A + iB acts on (Re h, Im h) as the orthogonal real
matrix W_hat = [[A, -B], [B, A]].

Mhammedi et al. (ICML 2017) Sec. 3, eq. 5, and Arjovsky et al. (ICML 2016) Sec. 3.1. Compared:
W_hat (Re h, Im h) against W h in each backend's native complex arithmetic, and W_hat' W_hat
against I (Haar and structured unitaries, float, 50 digits, exact rationals); with free SymPy
symbols, the embedding as a *-homomorphism and eq. 5's printed blocks; with matrix symbols, eq. 5
for every n at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy

from orthoverify import samples
from orthoverify.backends import Backend
from orthoverify.claims._common import ALL, exact_backend, symbol_array
from orthoverify.claims.unitary import PAPER
from orthoverify.claims.unitary._shared import (
    complex_input,
    from_native,
    native,
    unitary_cases,
    unitary_input,
)
from orthoverify.engine.checks import Case, PropertyCheck, RunContext, SymbolicCheck
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, agreement, flag, residual, worst
from orthoverify.engine.templates import witness
from orthoverify.param import unitary as un
from orthoverify.param.unitary import CArray


def q_complex_block(b: Backend, case: Case) -> Measure:
    """W_hat = [[A, -B], [B, A]] is orthogonal and W_hat (Re h, Im h) = (Re Wh, Im Wh), with Wh
    computed in the backend's native complex arithmetic."""
    w = unitary_input(b, case)
    h = complex_input(b, case, "h")
    n = w.shape[0]
    wh = un.embed_matrix(w, backend=b)
    ref = from_native(b, native(b, w) @ native(b, h))
    lhs = wh @ un.embed_vector(h, backend=b)
    return worst(
        residual(b, b.transpose(wh) @ wh - b.eye(2 * n), 2 * n),
        agreement(b, lhs, un.embed_vector(ref, backend=b), 2 * n),
    )


def cases_complex_block(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in ctx.profile.sizes_on(ctx.backend):
        for case in unitary_cases(ctx, rng, n):
            if ctx.backend.exact:
                h = samples.rational_matrix(rng, n, 2, bound=3, max_den=2)
                yield {**case, "h_re": h[:, 0], "h_im": h[:, 1]}
            else:
                yield {**case, "h_re": rng.standard_normal(n), "h_im": rng.standard_normal(n)}


def sym_complex_block(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """With free real symbols: the embedding is a *-homomorphism, so W_hat W_hat' - I is the
    embedding of W W* - I (zero for unitary W), eq. 5's blocks are W_hat W_hat', and W_hat h_hat is
    the embedding of W h computed with SymPy's complex I."""
    b = exact_backend()
    for n in ctx.profile.symbolic_sizes:
        a, bb = symbol_array("a", n, n), symbol_array("b", n, n)
        x, y = symbol_array("x", n), symbol_array("y", n)
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


def block_violation(b: Backend, case: Case) -> Measure:
    """Eq. 5 for every n at once, one block per case: with A, B n x n matrix symbols
    (non-commuting, n symbolic), block ``ij`` of W_hat W_hat' must be that of [[P, Q'], [Q, P]] with
    P = AA' + BB' and Q = BA' - AB' (eq. 5); W W* = (AA' + BB') + i(BA' - AB') = I says P = I and
    Q = 0, so W_hat W_hat' = I."""
    i, j = (int(c) for c in str(case["block"]))
    n = sympy.Symbol("n", integer=True, positive=True)
    a, bb = sympy.MatrixSymbol("A", n, n), sympy.MatrixSymbol("B", n, n)
    w = sympy.BlockMatrix([[a, -bb], [bb, a]])
    prod = sympy.block_collapse(w * w.T)
    p, q = a * a.T + bb * bb.T, bb * a.T - a * bb.T
    expected = {(0, 0): p, (0, 1): q.T, (1, 0): q, (1, 1): p}[(i, j)]
    d = (prod.blocks[i, j] - expected).expand().doit()
    return flag(d == sympy.ZeroMatrix(n, n), f"block {i}{j}: {d}")


def every_block(ctx: RunContext) -> Iterator[Case]:
    yield from ({"block": f"{i}{j}"} for i in (0, 1) for j in (0, 1))


COMPLEX_BLOCK = Claim(
    id="unitary.complex_block",
    paper=PAPER,
    place=Place(
        source="Mhammedi et al.", section="3", equation="5", also=(Place(source="Arjovsky et al.", section="3.1"),)
    ),
    expected="verified",
    origin="catalogue",
    summary="a unitary W gives an orthogonal real block matrix acting as W",
    kind="identity",
    statement=(
        "W = A + iB unitary implies W_hat = [[A, -B], [B, A]] orthogonal (W_hat W_hat' is eq. 5); the block matrix "
        "acting on (Re h, Im h) gives (Re Wh, Im Wh)"
    ),
    checks=(
        PropertyCheck(
            "all_arithmetics",
            q_complex_block,
            cases_complex_block,
            ALL,
            "max(||W_hat'W_hat - I||, ||W_hat h_hat - (Re, Im)(Wh)|| / ||Wh||) / (2n eps)",
        ),
        SymbolicCheck("symbolic", sym_complex_block),
        witness(
            "exact",
            block_violation,
            backends=("sympy",),
            quantity_name="eq. 5 block identity",
            candidates=every_block,
            method=None,
        ),
    ),
    notes=(
        "Wh is computed in each backend's native complex arithmetic (numpy/torch complex, mpmath mpc, SymPy I), "
        "independently of orthoverify's real pairs. The converse also holds (the embedding is an injective "
        "*-homomorphism), and det W_hat = |det W|^2 = 1, so W_hat lies in SO(2n)."
    ),
)

CLAIMS: list[Claim] = [COMPLEX_BLOCK]
