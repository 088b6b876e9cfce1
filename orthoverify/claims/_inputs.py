"""Input families shared by several claim families (orthogonal test matrices built in each
arithmetic's own precision), so that no family imports another."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from orthoverify import samples
from orthoverify.backends import Array, Backend
from orthoverify.engine.checks import Case, RunContext
from orthoverify.param.cayley import cayley


def orthogonal_input(b: Backend, case: Case) -> Array:
    """The orthogonal matrix of a case, built in b's own precision: ``case["Q"]`` as given, or
    ``C S`` (``C S C'`` when ``conj``) with C the Cayley transform of the skew matrix
    ``case["A"]`` and S the signed permutation ``case["S"]``. A float64 matrix is orthogonal
    only to 1e-16, which is far outside the domain of an exact theorem at 50 digits."""
    if "Q" in case:
        return b.asarray(case["Q"], name="Q")
    c = cayley(b.asarray(case["A"], name="A"), backend=b)
    s = b.asarray(case["S"], name="S")
    conj = int(case.get("conj", 0))
    return c @ s @ b.transpose(c) if conj else c @ s



def structured_orthogonal_cases(ctx: RunContext, n: int) -> Iterator[Case]:
    """Orthogonal inputs by (A, S) so that each arithmetic builds them to its own precision:
    I, -I, signs, permutations, det -1, near-identity (down to 1e-30 at high precision),
    eigenvalues near -1, a rotation by pi, and generic Cayley matrices."""
    rng = ctx.rng(n)
    zero = np.zeros((n, n))
    eye = np.eye(n)
    flip = np.diag([1.0] * (n - 1) + [-1.0])
    hp = ctx.backend.method == "high-precision"
    yield {"family": "identity", "A": zero, "S": eye}
    yield {"family": "minus-identity", "A": zero, "S": -eye}
    yield {"family": "signs", "A": zero, "S": samples.random_signs(rng, n)}
    yield {"family": "last-sign-flipped", "A": zero, "S": flip}
    yield {
        "family": "signed-permutation",
        "A": zero,
        "S": samples.random_signs(rng, n) @ samples.random_permutation(rng, n),
    }
    for delta in (1e-3, 1e-6, 1e-9, 1e-12, *((1e-20, 1e-30) if hp else ())):
        yield {"family": f"near-identity-{delta:g}", "A": samples.random_skew(rng, n, delta), "S": eye}
        yield {"family": f"near-identity-{delta:g}-det-1", "A": samples.random_skew(rng, n, delta), "S": flip}
    yield {"family": "near-minus-identity", "A": samples.random_skew(rng, n, 1e-6), "S": -eye}
    if n >= 2:
        rot = np.diag([-1.0, -1.0] + [1.0] * (n - 2))
        yield {"family": "rotation-by-pi", "A": samples.random_skew(rng, n), "S": rot, "conj": 1}
    for _ in range(ctx.profile.cases):
        yield {
            "family": "generic",
            "A": samples.random_skew(rng, n),
            "S": samples.random_signs(rng, n) @ samples.random_permutation(rng, n),
        }

