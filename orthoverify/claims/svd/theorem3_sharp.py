"""svd.theorem3_sharp: the boundary of Thm 3 of svdRNN (Zhang, Lei & Dhillon, ICML 2018), a claim
added by orthoverify.

Statement: just past the boundary, k1 + k2 = n + 3, the image of M_{k1,k2}(., ., 1) misses O(n):
every such product of n - 1 reflections has eigenvalue 1, so -I is not reached.

Compared: det(M_{k1,k2}(u, v, 1) - I) with 0, while det(-I - I) = (-2)^n.

Evidence: exact determinants at random rational points for n = 3 up to the largest exact size
+ 2, and symbolically (free symbols) for n = 3.
"""

from __future__ import annotations

import math

import sympy

from orthoverify.claims._common import EXACT
from orthoverify.claims._common import exact_backend as _sympy
from orthoverify.claims._common import symbol_array as _symbols
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._shared import random_vector
from orthoverify.engine.checks import FunctionCheck, Outcome, RunContext
from orthoverify.engine.model import Claim
from orthoverify.engine.ratios import Measure
from orthoverify.param import svd as sv


def fn_theorem3_sharp(ctx: RunContext) -> Outcome:
    """Past the boundary (k1 + k2 = n + 3: n - 1 reflections) every M_{k1,k2}(u, v, 1) has
    eigenvalue 1 (det(M - I) = 0 exactly, at rational points and symbolically for n = 3), while
    det(-I - I) = (-2)^n != 0: -I is outside the image, so the condition cannot be relaxed."""
    b = _sympy()
    rng = ctx.rng()
    cases = 0
    top = max(ctx.profile.exact_sizes) + 2
    for n in range(3, top + 1):
        for k1 in range(1, n + 1):
            k2 = n + 3 - k1
            if not 1 <= k2 <= n:
                continue
            for _ in range(ctx.profile.cases):
                us = [random_vector(ctx, rng, j) for j in range(k1, n + 1)]
                vs = [random_vector(ctx, rng, j) for j in range(k2, n + 1)]
                mm = sv.m_k1k2(us, vs, b.asarray([1] * n), backend=b)
                d = sympy.Matrix(mm - b.eye(n)).det()
                cases += 1
                if d != 0:
                    inputs = {
                        "n": str(n),
                        "U": b.to_strings(b.asarray(sv.stack_padded(us, n))),
                        "V": b.to_strings(b.asarray(sv.stack_padded(vs, n))),
                    }
                    return Outcome(False, cases, failure=(inputs, Measure(math.inf, f"det(M - I) = {d}")))
    u = _symbols("u", 3)
    v = _symbols("v", 3)
    mm = sv.m_k1k2([u], [v], b.asarray([1, 1, 1]), backend=b)
    sym = sympy.cancel(sympy.Matrix(mm - b.eye(3)).det())
    cases += 1
    if sym != 0:
        return Outcome(False, cases, failure=({"n": "3", "symbolic": "1"}, Measure(math.inf, str(sym))))
    return Outcome(True, cases, notes=f"det(M - I) = 0 for k1 + k2 = n + 3, n = 3..{top}; symbolic for n = 3")


THEOREM3_SHARP = Claim(
    id="svd.theorem3_sharp",
    paper=PAPER,
    where="Thm 3 (boundary; added by orthoverify)",
    kind="bound",
    statement=(
        "just past the boundary, k1 + k2 = n + 3, the image of M_{k1,k2}(., ., 1) misses O(n): "
        "every such product of n - 1 reflections has eigenvalue 1, so -I is not reached"
    ),
    checks=(
        FunctionCheck("exact_eigenvalue_one", fn_theorem3_sharp, EXACT, "symbolic", "det(M_{k1,k2} - I)", exact=True),
    ),
    notes="Cartan-Dieudonne: n - 1 reflections fix a common vector (the intersection of n - 1 hyperplanes).",
)


CLAIMS: list[Claim] = [THEOREM3_SHARP]
