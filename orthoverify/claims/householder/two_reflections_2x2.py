"""Nonexistence shown symbolically (a Groebner basis {1}, even over C); with a standard H_1, det M_1 = (-1)^n."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import sympy

from orthoverify.claims._common import EXACT, exact_backend, symbol_array
from orthoverify.claims.householder import claim
from orthoverify.engine.checks import Outcome, RunContext, SymbolicCheck
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.templates import bespoke
from orthoverify.param import householder as hh
from orthoverify.tolerance import THRESHOLD


def sym_two_reflections(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """The notes' identities, for symbolic u, v, and for M_1 with a standard H_1 at the profile's n."""
    b = exact_backend()
    d = b.asarray([[1, 0], [0, -1]])
    p = hh.reflection(symbol_array("u", 2), 2, backend=b) @ hh.reflection(symbol_array("v", 2), 2, backend=b)
    yield "det(H(u) H(v)) - 1", sympy.Matrix(p.tolist()).det() - 1
    yield "||H(u) H(v) - diag(1,-1)||_F^2 - 4", b.sum((p - d) * (p - d)) - 4
    for n in ctx.profile.symbolic_sizes:
        vecs = [symbol_array(f"w{k}_", k) for k in range(2, n + 1)]
        m = hh.m_map(vecs, backend=b) if vecs else b.eye(n)
        standard_h1 = b.block_diag(b.eye(n - 1), b.asarray([[-1]]))  # I_1 - 2uu'/u'u = -1 for every u != 0
        det = sympy.Matrix((m @ standard_h1).tolist()).det()
        yield f"n={n}: det(H_n...H_2 * standard H_1) - (-1)^n", det - (-1) ** n


def fn_groebner(ctx: RunContext) -> Outcome:
    a, bb, c, d, t = sympy.symbols("a b c d t")
    nu, nv = a**2 + bb**2, c**2 + d**2
    hu = sympy.Matrix([[nu - 2 * a * a, -2 * a * bb], [-2 * a * bb, nu - 2 * bb * bb]])
    hv = sympy.Matrix([[nv - 2 * c * c, -2 * c * d], [-2 * c * d, nv - 2 * d * d]])
    eqs = [*list(hu * hv - sympy.diag(1, -1) * nu * nv), t * nu * nv - 1]
    basis = list(sympy.groebner(eqs, a, bb, c, d, t, order="grevlex").exprs)
    return Outcome(basis == [1], 1, notes=f"Groebner basis of (H(u)H(v) - D) |u|^2 |v|^2 = 0, t|u|^2|v|^2 = 1: {basis}")


def fn_float_distance(ctx: RunContext) -> Outcome:
    b, rng, count, best = ctx.backend, ctx.rng(), 50 * ctx.profile.cases, math.inf
    d = b.asarray([[1.0, 0.0], [0.0, -1.0]])
    for _ in range(count):
        u, v = b.asarray(rng.standard_normal(2)), b.asarray(rng.standard_normal(2))
        p = hh.reflection(u, 2, backend=b) @ hh.reflection(v, 2, backend=b)
        best = min(best, b.to_float(b.norm(p - d)))
    notes = f"min ||H(u)H(v) - diag(1,-1)||_F over {count} random pairs: {best:.17g}"
    return Outcome(best > THRESHOLD * 2 * b.eps, count, notes=notes, data={"min_distance": best})


CLAIMS: list[Claim] = [
    claim(
        id="householder.two_reflections_2x2",
        place=Place(theorem="1", note="the remark after it"),
        expected="verified",
        origin="catalogue",
        summary="diag(1, -1) is no product of two standard 2x2 Householder matrices",
        statement=(
            "diag(1, -1) cannot be expressed as the product of exactly two standard 2x2 Householder matrices "
            "(so Theorem 1 would fail with a standard reflection in place of H_1)"
        ),
        kind="existence",
        checks=(
            SymbolicCheck("symbolic", sym_two_reflections),
            bespoke("nonexistence", fn_groebner, EXACT, "symbolic", "Groebner basis"),
            bespoke("float", fn_float_distance, ("numpy-float64",), "float", "min ||H(u)H(v) - diag(1,-1)||_F"),
        ),
        notes=(
            "A product of two reflections has determinant +1 and diag(1,-1) has -1; in fact "
            "||H(u)H(v) - diag(1,-1)||_F = 2 for every pair. With a standard reflection as H_1, det M_1 = (-1)^n "
            "is constant, so half of O(n) is missed for every n (checked symbolically for the profile's n)."
        ),
    )
]
