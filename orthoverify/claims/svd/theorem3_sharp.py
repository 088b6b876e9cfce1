"""svd.theorem3_sharp. A witness search whose violation, det(M - I) computed exactly, is both the
test and the replay: zero means eigenvalue 1, and -I (det(-I - I) = (-2)^n) is then out of
reach. Random rational u, v for n = 3 up to the largest exact size + 2, and free symbols for
n = 3 (so the determinant vanishes identically, not just at the points drawn)."""

from __future__ import annotations

import sympy

from orthoverify.backends import Backend
from orthoverify.claims._common import EXACT, symbol_array
from orthoverify.claims.svd._shared import claim, random_vector
from orthoverify.engine.checks import Case
from orthoverify.engine.model import Place
from orthoverify.engine.ratios import Measure
from orthoverify.engine.templates import chained, judged, repeated, witness
from orthoverify.param import svd as sv

candidates = chained(
    repeated(
        lambda ctx: [(n, k1) for n in range(3, max(ctx.profile.exact_sizes) + 3) for k1 in range(3, n + 1)],
        lambda ctx, rng, nk: {
            "n": nk[0],
            "k1": nk[1],
            "k2": nk[0] + 3 - nk[1],
            "U": sv.stack_padded([random_vector(ctx, rng, j) for j in range(nk[1], nk[0] + 1)], nk[0]),
            "V": sv.stack_padded([random_vector(ctx, rng, j) for j in range(nk[0] + 3 - nk[1], nk[0] + 1)], nk[0]),
        },
    ),
    lambda ctx: [{"n": 3, "symbolic": "1"}],
)
"""Past the boundary, k1 + k2 = n + 3 (n - 1 reflections), then free symbols for n = 3."""


def violation(b: Backend, case: Case) -> Measure:
    """det(M_{k1,k2}(u, v, 1) - I), exactly: M has eigenvalue 1 when it is 0."""
    n = int(case["n"])
    if "symbolic" in case:
        us, vs = [symbol_array("u", 3)], [symbol_array("v", 3)]
    else:
        us = sv.unstack_padded(b.asarray(case["U"], name="U"), int(case["k1"]))
        vs = sv.unstack_padded(b.asarray(case["V"], name="V"), int(case["k2"]))
    d = sympy.cancel(sympy.Matrix(sv.m_k1k2(us, vs, b.asarray([1] * n), backend=b) - b.eye(n)).det())
    return judged(d == 0, "det(M - I) = 0", f"det(M - I) = {d}")


CLAIMS = [
    claim(
        id="svd.theorem3_sharp",
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
]
