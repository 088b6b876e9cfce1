"""H_k(u) against the defining properties of a reflection rather than a second formula; float
magnitudes over 10^+-100 because H is formed from u / max|u| (a naive u'u overflows)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy
from hypothesis import strategies as st

from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT, FLOAT_HP, exact_backend, symbol_array
from orthoverify.claims.householder import claim
from orthoverify.claims.householder._shared import exponent_range
from orthoverify.engine.checks import Case, Outcome, PropertyCheck, RunContext, SearchCheck, SymbolicCheck
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure, residual, worst
from orthoverify.engine.templates import bespoke, by_size
from orthoverify.param import householder as hh
from orthoverify.strategies import reflection_vector

_Q = "max of ||H'H - I||, ||H - H'||, ||Hv + v||, ||HP - P|| over n eps"


def q_reflection(b: Backend, case: Case) -> Measure:
    """Symmetry, orthogonality, H v = -v, identity on v-perp, and the identity leading block."""
    n = int(case["n"])
    u = b.asarray(case["u"], name="u")
    k = u.shape[0]
    h = hh.reflection(u, n, backend=b)
    eye = b.eye(n)
    v = b.concat([b.zeros(n - k), u]) if n > k else u
    vs = v / b.max_abs(v) if not b.exact else v
    proj = eye - b.outer(vs, vs) / (vs @ vs)
    return worst(
        residual(b, b.transpose(h) @ h - eye, n),
        residual(b, h - b.transpose(h), n),
        residual(b, h @ vs + vs, n, b.to_float(b.norm(vs)) if not b.exact else 1.0),
        residual(b, h @ proj - proj, n),
        residual(b, h[: n - k, :] - eye[: n - k, :], n),
        residual(b, h[:, : n - k] - eye[:, : n - k], n),
    )


def cases_float(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    e = exponent_range(ctx.backend)
    for n in ctx.profile.sizes_on(ctx.backend):
        for k in sorted({k for k in (2, n // 2 + 1, n) if 2 <= k <= n}):
            for _ in range(ctx.profile.cases):
                u = rng.standard_normal(k) * 10.0 ** rng.uniform(-e, e) * 10.0 ** rng.uniform(-3, 0, size=k)
                yield {"n": n, "u": u}


def cases_exact(ctx: RunContext) -> Iterator[Case]:
    rng = ctx.rng()
    for n in ctx.profile.exact_sizes:
        for k in range(2, n + 1):
            u = [sympy.Rational(int(rng.integers(-9, 10)), int(rng.integers(1, 7))) for _ in range(k)]
            if not any(u):
                u[0] = sympy.Integer(1)
            yield {"n": n, "u": np.array(u, dtype=object)}


def strategy(ctx: RunContext) -> Any:
    e = exponent_range(ctx.backend)
    return by_size(2, 8, lambda k: {"n": st.integers(k, k + 3), "u": reflection_vector(k, max_exponent=e)})(ctx)


def sym_reflection(ctx: RunContext) -> Iterator[tuple[str, Any]]:
    """H_k(u) with symbolic u: symmetric, orthogonal, H (0,u) = -(0,u), H x = x for x _|_ (0,u),
    identity on the first n - k coordinates, det = -1."""
    for n in ctx.profile.symbolic_sizes:
        for k in range(2, n + 1):
            b = exact_backend()
            u = symbol_array("u", k)
            h = hh.reflection(u, n, backend=b)
            eye = b.eye(n)
            v = b.concat([b.zeros(n - k), u]) if n > k else u
            yield f"n={n},k={k}: H - H'", h - b.transpose(h)
            yield f"n={n},k={k}: H'H - I", b.transpose(h) @ h - eye
            yield f"n={n},k={k}: H v + v", h @ v + v
            for j in range(n):  # a spanning set of v-perp: e_i (i < n-k) and u_j e_first - u_first e_j
                if j < n - k:
                    x = eye[:, j]
                elif j > n - k:
                    x = u[0] * eye[:, j] - u[j - (n - k)] * eye[:, n - k]
                else:
                    continue
                yield f"n={n},k={k}: H x - x for x = w_{j} _|_ v", h @ x - x
            yield f"n={n},k={k}: det H + 1", sympy.Matrix(h.tolist()).det() + 1


def fn_h1_iff(ctx: RunContext) -> Outcome:
    """H_1(u)'H_1(u) - I = diag(0, ..., 0, u^2 - 1) identically, whose zeros are exactly u = +-1."""
    b = exact_backend()
    u = sympy.Symbol("u", real=True)
    notes = []
    for n in (1, 2, 3):
        m = hh.h1(np.array([u], dtype=object), n, backend=b)
        resid = sympy.Matrix((b.transpose(m) @ m - b.eye(n)).tolist())
        expected = sympy.diag(*([0] * (n - 1) + [u**2 - 1]))
        if sympy.simplify(resid - expected) != sympy.zeros(n, n):
            return Outcome(False, n, notes=f"n={n}: H_1(u)'H_1(u) - I is {resid}, not diag(0, u^2 - 1)")
        roots = sympy.solveset(u**2 - 1, u, domain=sympy.S.Reals)
        if roots != sympy.FiniteSet(-1, 1):
            return Outcome(False, n, notes=f"orthogonality set is {roots}")
        notes.append(f"n={n}: H_1(u)'H_1(u) - I = diag(0, u^2 - 1), zero iff u in {{-1, 1}}")
    return Outcome(True, 3, notes="; ".join(notes))


CLAIMS: list[Claim] = [
    claim(
        id="householder.reflection",
        place=Place(equation="6, 7"),
        expected="verified",
        origin="catalogue",
        summary="H_k(u) is a symmetric orthogonal reflection; H_1(u) is orthogonal for u = ±1",
        statement=(
            "H_k(u) (k >= 2, u != 0) is a symmetric orthogonal reflection acting on the last k coordinates; "
            "H_1(u) = diag(I, u) is orthogonal iff u is +1 or -1"
        ),
        kind="identity",
        checks=(
            SymbolicCheck("symbolic", sym_reflection),
            bespoke("converse", fn_h1_iff, EXACT, "symbolic", "H_1'H_1 - I"),
            PropertyCheck("exact", q_reflection, cases_exact, EXACT, "exact residuals"),
            PropertyCheck("float_edge", q_reflection, cases_float, FLOAT_HP, _Q),
            SearchCheck("search", q_reflection, strategy, ("numpy-float64", "numpy-float32"), _Q),
        ),
        notes=(
            "Reflections are formed from u / max|u| so that u'u neither overflows nor underflows "
            "(a naive u'u overflows for |u| > 1e154 in float64 and 1e19 in float32)."
        ),
    )
]
