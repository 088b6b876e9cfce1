"""svd.theorem3_sharp: the boundary of Thm 3 of svdRNN (Zhang, Lei & Dhillon, ICML 2018), a claim
added by orthoverify.

Statement: just past the boundary, k1 + k2 = n + 3, the image of M_{k1,k2}(., ., 1) misses O(n):
every such product of n - 1 reflections has eigenvalue 1, so -I is not reached.

Compared: det(M_{k1,k2}(u, v, 1) - I) with 0, while det(-I - I) = (-2)^n.

Evidence (a witness search whose violation, det(M - I), is the test and the replay): exact
determinants at random rational points for n = 3 up to the largest exact size + 2, and
symbolically (free symbols) for n = 3.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import sympy

from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT
from orthoverify.claims._common import symbol_array as _symbols
from orthoverify.claims.svd import PAPER
from orthoverify.claims.svd._shared import random_vector
from orthoverify.engine.checks import Case, RunContext
from orthoverify.engine.model import Claim, Place
from orthoverify.engine.ratios import Measure
from orthoverify.engine.templates import witness
from orthoverify.param import svd as sv


def candidates(ctx: RunContext) -> Iterator[Case]:
    """Past the boundary (k1 + k2 = n + 3: n - 1 reflections): random rational u, v for n = 3 up
    to the largest exact size + 2, then free symbols for n = 3."""
    rng = ctx.rng()
    for n in range(3, max(ctx.profile.exact_sizes) + 3):
        for k1 in range(1, n + 1):
            k2 = n + 3 - k1
            if not 1 <= k2 <= n:
                continue
            for _ in range(ctx.profile.cases):
                us = [random_vector(ctx, rng, j) for j in range(k1, n + 1)]
                vs = [random_vector(ctx, rng, j) for j in range(k2, n + 1)]
                yield {"n": n, "k1": k1, "k2": k2, "U": sv.stack_padded(us, n), "V": sv.stack_padded(vs, n)}
    yield {"n": 3, "symbolic": "1"}


def violation(b: Backend, case: Case) -> Measure:
    """det(M_{k1,k2}(u, v, 1) - I), exactly: M has eigenvalue 1 when it is 0, while
    det(-I - I) = (-2)^n != 0, so -I is outside the image."""
    n = int(case["n"])
    if "symbolic" in case:
        us, vs = [_symbols("u", 3)], [_symbols("v", 3)]
    else:
        us = sv.unstack_padded(b.asarray(case["U"], name="U"), int(case["k1"]))
        vs = sv.unstack_padded(b.asarray(case["V"], name="V"), int(case["k2"]))
    d = sympy.cancel(sympy.Matrix(sv.m_k1k2(us, vs, b.asarray([1] * n), backend=b) - b.eye(n)).det())
    return (
        Measure(0.0, "det(M - I) = 0", error=0.0) if d == 0 else Measure(math.inf, f"det(M - I) = {d}", error=math.inf)
    )


THEOREM3_SHARP = Claim(
    id="svd.theorem3_sharp",
    paper=PAPER,
    place=Place(theorem="3", note="boundary; added by orthoverify"),
    expected="verified",
    origin="added",
    summary="Theorem 3's condition k1 + k2 <= n + 2 is sharp",
    kind="bound",
    statement=(
        "just past the boundary, k1 + k2 = n + 3, the image of M_{k1,k2}(., ., 1) misses O(n): "
        "every such product of n - 1 reflections has eigenvalue 1, so -I is not reached"
    ),
    checks=(
        witness(
            "witness",
            violation,
            candidates=candidates,
            backends=EXACT,
            quantity_name="det(M_{k1,k2} - I)",
            method="symbolic",
        ),
    ),
    notes="Cartan-Dieudonne: n - 1 reflections fix a common vector (the intersection of n - 1 hyperplanes).",
)


CLAIMS: list[Claim] = [THEOREM3_SHARP]
