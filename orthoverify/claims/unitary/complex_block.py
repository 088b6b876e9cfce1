"""W_hat against W itself: W h in native complex arithmetic, eq. 5's printed blocks in free symbols,
and block by block in matrix symbols (every n at once)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import sympy

from orthoverify.backends import Backend
from orthoverify.claims._common import ALL, symbol_array
from orthoverify.claims.unitary import _shared as kit
from orthoverify.engine.checks import Case, Identity, PropertyCheck
from orthoverify.engine.ratios import Measure, agreement, flag, orthogonality, worst
from orthoverify.engine.templates import exact_witness, listed
from orthoverify.engine.templates_more import symbolic_identities
from orthoverify.param import unitary as un
from orthoverify.param.unitary import CArray


def q_complex_block(b: Backend, case: Case) -> Measure:
    """W_hat orthogonal, and W_hat (Re h, Im h) against Wh in native complex arithmetic."""
    w, h = kit.unitary_input(b, case), kit.complex_input(b, case, "h")
    wh, ref = un.embed_matrix(w, backend=b), un.embed_vector(kit.native_product(b, w, h), backend=b)
    return worst(orthogonality(b, wh), agreement(b, wh @ un.embed_vector(h, backend=b), ref, 2 * w.shape[0]))


def sym_complex_block(b: Backend, n: int) -> Iterator[Identity]:
    a, bb, x, y = symbol_array("a", n, n), symbol_array("b", n, n), symbol_array("x", n), symbol_array("y", n)
    w = CArray(a, bb)
    wh, embedded = un.embed_matrix(w, backend=b), un.embed_matrix(w @ un.ct(b, w) - un.ceye(b, n), backend=b)
    yield "W_hat W_hat' - I - embed(W W* - I)", wh @ wh.T - b.eye(2 * n) - embedded
    eq5 = np.block([[a @ a.T + bb @ bb.T, a @ bb.T - bb @ a.T], [bb @ a.T - a @ bb.T, a @ a.T + bb @ bb.T]])
    yield "W_hat W_hat' - eq. 5 as printed", wh @ wh.T - eq5
    ref = kit.parts(b, kit.native_product(b, w, CArray(x, y)))
    yield "W_hat h_hat - (Re Wh, Im Wh)", wh @ np.concatenate([x, y]) - ref


def block_violation(b: Backend, case: Case) -> Measure:
    """Block ``ij`` of W_hat W_hat' against eq. 5's [[P, Q'], [Q, P]] in n x n matrix symbols A, B
    (non-commuting, n symbolic): W W* = P + iQ = I gives W_hat W_hat' = I."""
    i, j = (int(c) for c in str(case["block"]))
    n = sympy.Symbol("n", integer=True, positive=True)
    a, bb = sympy.MatrixSymbol("A", n, n), sympy.MatrixSymbol("B", n, n)
    w, p, q = sympy.BlockMatrix([[a, -bb], [bb, a]]), a * a.T + bb * bb.T, bb * a.T - a * bb.T
    prod = sympy.block_collapse(w * w.T)
    d = (prod.blocks[i, j] - {(0, 0): p, (0, 1): q.T, (1, 0): q, (1, 1): p}[(i, j)]).expand().doit()
    return flag(d == sympy.ZeroMatrix(n, n), f"block {i}{j}: {d}")


CLAIMS = kit.claim(
    id="unitary.complex_block",
    place=kit.ORNN(section="3", equation="5", also=(kit.URNN(section="3.1"),)),
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
            kit.unitaries(kit.vector("h")),
            ALL,
            "max(||W_hat'W_hat - I||, ||W_hat h_hat - (Re, Im)(Wh)|| / ||Wh||) / (2n eps)",
        ),
        symbolic_identities("symbolic", sym_complex_block),
        exact_witness(
            "exact", block_violation, "eq. 5 block identity", listed(*({"block": b} for b in ("00", "01", "10", "11")))
        ),
    ),
    notes=(
        "Wh is computed in each backend's native complex arithmetic (numpy/torch complex, mpmath mpc, SymPy I), "
        "independently of orthoverify's real pairs. The converse also holds (the embedding is an injective "
        "*-homomorphism), and det W_hat = |det W|^2 = 1, so W_hat lies in SO(2n)."
    ),
)
